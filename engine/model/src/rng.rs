//! Seeded random streams. The engine never touches OS entropy or a clock.
//!
//! Each independent source of randomness (a class's arrivals, a class's token
//! lengths, ...) gets its own stream derived from the scenario seed, so that
//! changing one input leaves the other draws unchanged (common random numbers:
//! sensitivity runs compare like with like).

use rand::SeedableRng;

/// The engine's generator: PCG with a 128-bit multiplier, fast and portable.
pub type SimRng = rand_pcg::Pcg64Mcg;

/// SplitMix64's output function: a bijective 64-bit mix.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The stream numbered `stream_id` for `seed`.
pub fn stream(seed: u64, stream_id: u64) -> SimRng {
    SimRng::seed_from_u64(mix64(seed ^ mix64(stream_id)))
}

//! The campaign's own generator: SplitMix64, seeded per input from the
//! campaign seed and the input's index, so that any input can be made
//! again alone (a crashed worker's input, `--index`), on any machine.

/// A small, fast, seeded generator (SplitMix64; statistical quality is
/// ample for choosing mutations).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator of input `index` of the campaign seeded `seed`.
    pub fn for_input(seed: u64, index: u64) -> Rng {
        let mut rng = Rng(seed ^ 0x5EED_0F5E_ED00_0000);
        let mixed = rng.u64() ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Rng(mixed)
    }

    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.u64() % n as u64) as usize
    }

    /// A whole number in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.u64() % (high - low + 1)
    }

    /// A number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number in [low, high).
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }

    /// A number spread evenly in the logarithm over [low, high), low > 0.
    pub fn log_uniform(&mut self, low: f64, high: f64) -> f64 {
        libm::exp(libm::log(low) + (libm::log(high) - libm::log(low)) * self.unit())
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One of `items` (which must not be empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index drawn in proportion to `weights`.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let mut left = self.u64() % total.max(1);
        for (i, &w) in weights.iter().enumerate() {
            if left < u64::from(w) {
                return i;
            }
            left -= u64::from(w);
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_index_give_the_same_draws() {
        let draws = |seed, index| {
            let mut rng = Rng::for_input(seed, index);
            (0..4).map(|_| rng.u64()).collect::<Vec<_>>()
        };
        assert_eq!(draws(7, 3), draws(7, 3));
        assert_ne!(draws(7, 3), draws(7, 4));
        assert_ne!(draws(7, 3), draws(8, 3));
    }
}

//! Rounding and uniform draws for the samplers, without the library calls
//! that x86-64's baseline instruction set makes of `round` and `ceil`.

use rand::Rng;

// A uniform draw in [0, 1) with 53 random bits: the samplers' own.
pub use crate::samplers::closed_open01 as unit;

/// A uniform index in `0..len` (len > 0).
pub(super) fn uniform_index<R: Rng + ?Sized>(rng: &mut R, len: usize) -> usize {
    ((unit(rng) * len as f64) as usize).min(len - 1)
}

/// `x.round()` (half away from zero) without the library call that
/// x86-64's baseline instruction set makes of it: the same value for every
/// f64, except that it does not keep the sign of a negative zero.
pub fn round(x: f64) -> f64 {
    /// From 2^52 on every f64 is a whole number.
    const WHOLE: f64 = 4_503_599_627_370_496.0;
    // Whole already, infinite or NaN.
    if x.is_nan() || x.abs() >= WHOLE {
        return x;
    }
    // Truncation toward zero is exact, and so is the fraction it leaves.
    let t = x as i64 as f64;
    let fraction = x - t;
    // Without branches: the draws are random, so a branch here mispredicts
    // half the time.
    t + ((fraction >= 0.5) as i64 - (fraction <= -0.5) as i64) as f64
}

/// `x.ceil() as u64` (saturating; NaN and negatives give 0) without the
/// library call that `ceil` is on baseline x86-64.
pub fn ceil_u64(x: f64) -> u64 {
    let whole = x as u64;
    whole.saturating_add(((whole as f64) < x) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn round_is_the_library_round() {
        let mut rng = stream(9, 9);
        let mut cases = vec![
            0.5,
            1.5,
            2.5,
            -0.5,
            -1.5,
            0.49999999999999994,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            1e300,
            -1e300,
            f64::INFINITY,
            f64::MIN_POSITIVE,
            0.0,
        ];
        for _ in 0..100_000 {
            let u = unit(&mut rng);
            let scale = libm::exp2((unit(&mut rng) * 70.0).floor() - 10.0);
            cases.push((u - 0.5) * scale);
            cases.push(((u * 1000.0) as i64) as f64 + 0.5);
        }
        for x in cases {
            assert_eq!(round(x), x.round(), "round({x:e})");
        }
        assert!(round(f64::NAN).is_nan());
    }

    #[test]
    fn ceil_u64_is_the_library_ceil_cast() {
        let mut rng = stream(9, 10);
        let mut cases = vec![
            0.0,
            -0.0,
            -0.5,
            -7.0,
            1.0,
            1.0 + f64::EPSILON,
            0.999_999_999_999_999_9,
            f64::MIN_POSITIVE,
            4_503_599_627_370_495.5,
            1.8e19,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for _ in 0..100_000 {
            let u = unit(&mut rng);
            let scale = libm::exp2((unit(&mut rng) * 80.0).floor() - 10.0);
            cases.push((u - 0.1) * scale);
            cases.push(((u * 1000.0) as i64) as f64);
        }
        for x in cases {
            assert_eq!(ceil_u64(x), x.ceil() as u64, "ceil_u64({x:e})");
        }
    }
}

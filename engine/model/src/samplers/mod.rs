//! The engine's own samplers for the continuous and geometric distributions,
//! with every transcendental function taken from the `libm` crate.
//!
//! Why not `rand_distr`: its samplers do their maths through num-traits'
//! `Float`, which calls `libm` only while num-traits' `std` feature is off.
//! Cargo unifies features across a build, and some builds turn `std` on
//! (the app through plotters, the test builds through proptest): those then
//! call the platform's `exp` and `ln` (glibc natively), which may differ in
//! the last bit from `libm` and from wasm32's maths. One bit is enough for a
//! rounded token count or an arrival order to change, and the engine promises
//! bit-identical results natively and in wasm32. The samplers here call
//! `libm::log`, `libm::exp`, `libm::log1p` and `libm::sqrt` by name (and
//! `libm::erfc` for the normal Ziggurat's tables), so every build on every
//! target computes the same bits from the same random stream.
//!
//! Each sampler is a pure function of the random stream: no cached second
//! value, no state beyond its parameters. Uniforms are drawn from 53 random
//! bits (the top bits of one `next_u64`), see [`open_closed01`] and
//! [`closed_open01`].
//!
//! Algorithms:
//! - [`StandardNormal`], [`Normal`], [`LogNormal`]: the Ziggurat method of
//!   G. Marsaglia and W. W. Tsang, "The Ziggurat Method for Generating Random
//!   Variables", Journal of Statistical Software 5(8), 2000, with 256 layers,
//!   the layer index and the abscissa taken from disjoint bits as suggested by
//!   J. A. Doornik, "An Improved Ziggurat Method to Generate Normal Random
//!   Samples", 2005, and Marsaglia's tail method (G. Marsaglia, "Generating a
//!   Variable from the Tail of the Normal Distribution", Technometrics 6(1),
//!   1964). The tables are computed once, with `libm`, on first use.
//! - [`Exp1`], [`Exp`]: the same authors' exponential Ziggurat (same paper),
//!   256 layers, one `next_u64` per try with disjoint bits for the layer and
//!   the abscissa as for the normal, the tail beyond `R` as `R - ln U` (the
//!   exponential is memoryless). Tables computed with `libm` and stored as
//!   literals, checked bit for bit by a test.
//! - [`Gamma`]: G. Marsaglia and W. W. Tsang, "A Simple Method for Generating
//!   Gamma Variables", ACM Transactions on Mathematical Software 26(3), 2000,
//!   with their boost `Gamma(a) = Gamma(a + 1) · U^(1/a)` for shapes below 1,
//!   `U^(1/a)` computed as `exp(ln U · (1/a))`.
//! - [`Geometric`]: inversion, `floor(ln U / ln(1 - p))` (L. Devroye,
//!   "Non-Uniform Random Variate Generation", Springer, 1986, chapter X, the
//!   geometric distribution).
//!
//! rand's `Uniform` on floats needs no transcendental function (a multiply
//! and an add), so it is already bit-identical everywhere and has no
//! counterpart here.
//!
//! `ziggurat.rs` holds the two Ziggurats' tables, their tails and the loop
//! [`Exp1`] and [`StandardNormal`] share; `tests.rs` the statistical tests
//! of every sampler.

use std::fmt;

use rand::Rng;

#[cfg(test)]
mod tests;
mod ziggurat;

use ziggurat::{Ziggurat, exp_tail, normal_density, normal_tail};

/// 2^-53, the spacing of the uniforms drawn from 53 bits.
const TWO_POW_MINUS_53: f64 = f64::EPSILON / 2.0;

/// A uniform on `(0, 1\]`: one of the 2^53 values `k / 2^53`, `k` in
/// `1..=2^53`, all equally likely. Never 0, so its logarithm is finite
/// (at least `-53 ln 2 ≈ -36.7`).
#[inline]
pub fn open_closed01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 * TWO_POW_MINUS_53
}

/// A uniform on `\[0, 1)`: one of the 2^53 values `k / 2^53`, `k` in
/// `0..2^53`, all equally likely.
#[inline]
pub fn closed_open01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * TWO_POW_MINUS_53
}

/// A parameter a sampler's `new` refused, with the reason.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerError {
    /// The sampler, e.g. `"Gamma"`.
    pub sampler: &'static str,
    /// The parameter, e.g. `"shape"`.
    pub param: &'static str,
    /// The value given.
    pub value: f64,
    /// What the value must be, e.g. `"finite and positive"`.
    pub requirement: &'static str,
}

impl fmt::Display for SamplerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} must be {}, got {}",
            self.sampler, self.param, self.requirement, self.value
        )
    }
}

impl std::error::Error for SamplerError {}

const FINITE_POSITIVE: &str = "finite and positive";

fn finite_positive(
    sampler: &'static str,
    param: &'static str,
    value: f64,
) -> Result<f64, SamplerError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(SamplerError {
            sampler,
            param,
            value,
            requirement: FINITE_POSITIVE,
        })
    }
}

fn finite_non_negative(
    sampler: &'static str,
    param: &'static str,
    value: f64,
) -> Result<f64, SamplerError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(SamplerError {
            sampler,
            param,
            value,
            requirement: "finite and at least 0",
        })
    }
}

fn finite(sampler: &'static str, param: &'static str, value: f64) -> Result<f64, SamplerError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(SamplerError {
            sampler,
            param,
            value,
            requirement: "finite",
        })
    }
}

/// The standard exponential distribution (rate 1, mean 1), by the
/// exponential Ziggurat (see the module's documentation). Each try takes one
/// `next_u64`: bits 0 to 7 pick the layer and bits 11 to 63 the abscissa;
/// about 98% of draws end there, with no maths function. A draw past the
/// base layer's edge `R ≈ 7.697` (probability `e^-R ≈ 4.5e-4`) is
/// `R - ln U` with `U` on `(0, 1\]`, so the draws lie in
/// `\[0, R + 53 ln 2\]`, `53 ln 2 ≈ 36.7` (the cut tail has probability
/// below 1e-19).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exp1;

impl Exp1 {
    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        Ziggurat::exponential().sample(rng, |x| libm::exp(-x), exp_tail, |x, _| x)
    }
}

/// The exponential distribution with rate `lambda` (mean `1 / lambda`):
/// [`Exp1`] times the mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exp {
    lambda: f64,
    mean: f64,
}

impl Exp {
    /// The exponential with rate `lambda`; `lambda` and its inverse must be
    /// finite and positive.
    pub fn new(lambda: f64) -> Result<Self, SamplerError> {
        let lambda = finite_positive("Exp", "lambda", lambda)?;
        let mean = finite_positive("Exp", "1 / lambda", 1.0 / lambda)?;
        Ok(Exp { lambda, mean })
    }

    /// The exponential with the given mean (kept exactly: no round trip
    /// through the rate); `mean` and its inverse must be finite and positive.
    pub fn from_mean(mean: f64) -> Result<Self, SamplerError> {
        let mean = finite_positive("Exp", "mean", mean)?;
        let lambda = finite_positive("Exp", "1 / mean", 1.0 / mean)?;
        Ok(Exp { lambda, mean })
    }

    /// The mean, `1 / lambda`.
    #[cfg(test)]
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        Exp1.sample(rng) * self.mean
    }
}

/// The standard normal distribution (mean 0, standard deviation 1), by the
/// Ziggurat method (see the module's documentation). Each try takes one
/// `next_u64`: bits 0 to 7 pick the layer, bit 8 the sign and bits 11 to 63
/// the abscissa; about 99% of draws end there, without any maths function.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StandardNormal;

impl StandardNormal {
    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        // Every try gives an |x| >= 0 (the tail's too): copy bit 8 of the
        // try's bits into its sign bit.
        Ziggurat::get().sample(rng, normal_density, normal_tail, |x, bits| {
            f64::from_bits(x.to_bits() | ((bits & 0x100) << 55))
        })
    }
}

/// The normal distribution with mean `mean` and standard deviation `sd`:
/// `mean + sd · Z` with `Z` from [`StandardNormal`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normal {
    mean: f64,
    sd: f64,
}

impl Normal {
    /// `mean` must be finite; `sd` finite and at least 0 (0 gives `mean`
    /// always, as rand_distr's does; the draw still consumes the stream).
    /// Only tests build one directly; the lognormal holds one.
    #[cfg(test)]
    pub fn new(mean: f64, sd: f64) -> Result<Self, SamplerError> {
        Ok(Normal {
            mean: finite("Normal", "mean", mean)?,
            sd: finite_non_negative("Normal", "sd", sd)?,
        })
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.mean + self.sd * StandardNormal.sample(rng)
    }
}

/// The lognormal distribution: `exp(mu + sigma · Z)` with `Z` from
/// [`StandardNormal`] and the exponential from `libm::exp`. Median
/// `exp(mu)`, mean `exp(mu + sigma²/2)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogNormal {
    /// The distribution of the logarithm: mean `mu`, deviation `sigma`.
    log: Normal,
}

impl LogNormal {
    /// `mu` must be finite; `sigma` finite and at least 0 (0 gives `exp(mu)`
    /// always, as rand_distr's does: a lognormal given by a tiny standard
    /// deviation has `sigma` 0 after rounding).
    pub fn new(mu: f64, sigma: f64) -> Result<Self, SamplerError> {
        Ok(LogNormal {
            log: Normal {
                mean: finite("LogNormal", "mu", mu)?,
                sd: finite_non_negative("LogNormal", "sigma", sigma)?,
            },
        })
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        libm::exp(self.log.sample(rng))
    }
}

/// The gamma distribution with shape `k` and scale `theta` (mean
/// `k · theta`, variance `k · theta²`), by Marsaglia and Tsang's method (see
/// the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gamma {
    shape: f64,
    scale: f64,
    /// `a - 1/3`, where `a` is the shape, or the shape plus 1 below 1.
    d: f64,
    /// `1 / sqrt(9 d)`.
    c: f64,
    /// `1 / shape` for the boost below shape 1 (unused from 1 on).
    inv_shape: f64,
}

impl Gamma {
    /// `shape` and `scale` must be finite and positive.
    pub fn new(shape: f64, scale: f64) -> Result<Self, SamplerError> {
        let shape = finite_positive("Gamma", "shape", shape)?;
        let scale = finite_positive("Gamma", "scale", scale)?;
        let a = if shape < 1.0 { shape + 1.0 } else { shape };
        let d = a - 1.0 / 3.0;
        Ok(Gamma {
            shape,
            scale,
            d,
            c: 1.0 / libm::sqrt(9.0 * d),
            inv_shape: 1.0 / shape,
        })
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let g = self.marsaglia_tsang(rng);
        if self.shape < 1.0 {
            // U^(1/a) as exp(ln U · (1/a)): a libm::log and a libm::exp cost
            // about 60% of a libm::pow. The relative error grows with
            // |ln U / a| (up to 22 units in the last place at a = 0.3, 150 at
            // a = 0.05, over a million draws; pow's is under one): immaterial
            // for a random draw, and the same bits everywhere.
            g * libm::exp(libm::log(open_closed01(rng)) * self.inv_shape) * self.scale
        } else {
            g * self.scale
        }
    }

    /// A Gamma(d + 1/3, 1) draw: `d v` with `v = (1 + c X)³`, `X` standard
    /// normal, accepted by the squeeze `U < 1 - 0.0331 X⁴` or else by
    /// `ln U < X²/2 + d (1 - v + ln v)`.
    fn marsaglia_tsang<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let Gamma { d, c, .. } = *self;
        loop {
            let x = StandardNormal.sample(rng);
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = open_closed01(rng);
            let x2 = x * x;
            if u < 1.0 - 0.0331 * x2 * x2 || libm::log(u) < 0.5 * x2 + d * (1.0 - v + libm::log(v))
            {
                return d * v;
            }
        }
    }
}

/// The geometric distribution: the number of failures before the first
/// success of Bernoulli trials with success probability `p` (support 0, 1,
/// 2, ...; mean `(1 - p) / p`), like rand_distr's. Sampled by inversion,
/// `floor(ln U / ln(1 - p))` with `U` on `(0, 1\]` and `ln(1 - p)` as
/// `libm::log1p(-p)` (accurate for tiny `p`). `p = 1` gives 0 always
/// (`ln(1 - p) = -inf`); a quotient beyond `u64::MAX` (tiny `p`) saturates
/// to `u64::MAX` through the `as` cast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometric {
    p: f64,
    /// `ln(1 - p)`, negative (`-inf` at `p = 1`).
    ln_q: f64,
}

impl Geometric {
    /// `p` must be in `(0, 1\]`.
    pub fn new(p: f64) -> Result<Self, SamplerError> {
        if !(p > 0.0 && p <= 1.0) {
            return Err(SamplerError {
                sampler: "Geometric",
                param: "p",
                value: p,
                requirement: "in (0, 1]",
            });
        }
        Ok(Geometric {
            p,
            ln_q: libm::log1p(-p),
        })
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        // Both logarithms are <= 0, so the quotient is >= 0 (or -0) and the
        // truncating cast is the floor.
        (libm::log(open_closed01(rng)) / self.ln_q) as u64
    }
}

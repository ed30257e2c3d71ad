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
//! `libm::log`, `libm::exp`, `libm::log1p`, `libm::pow` and `libm::sqrt` by
//! name (and `libm::erfc` for the Ziggurat's tables), so every build on
//! every target computes the same bits from the same random stream.
//!
//! Each sampler is a pure function of the random stream: no cached second
//! value, no state beyond its parameters. Uniforms are drawn from 53 random
//! bits (the top bits of one `next_u64`), see [`open_closed01`] and
//! [`closed_open01`].
//!
//! Algorithms:
//! - [`Exp1`], [`Exp`]: inversion, `-ln U` with `U` in `(0, 1\]`.
//! - [`StandardNormal`], [`Normal`], [`LogNormal`]: the Ziggurat method of
//!   G. Marsaglia and W. W. Tsang, "The Ziggurat Method for Generating Random
//!   Variables", Journal of Statistical Software 5(8), 2000, with 256 layers,
//!   the layer index and the abscissa taken from disjoint bits as suggested by
//!   J. A. Doornik, "An Improved Ziggurat Method to Generate Normal Random
//!   Samples", 2005, and Marsaglia's tail method (G. Marsaglia, "Generating a
//!   Variable from the Tail of the Normal Distribution", Technometrics 6(1),
//!   1964). The tables are computed once, with `libm`, on first use.
//! - [`Gamma`]: G. Marsaglia and W. W. Tsang, "A Simple Method for Generating
//!   Gamma Variables", ACM Transactions on Mathematical Software 26(3), 2000,
//!   with their boost `Gamma(a) = Gamma(a + 1) · U^(1/a)` for shapes below 1.
//! - [`Geometric`]: inversion, `floor(ln U / ln(1 - p))` (L. Devroye,
//!   "Non-Uniform Random Variate Generation", Springer, 1986, chapter X, the
//!   geometric distribution).
//!
//! rand's `Uniform` on floats needs no transcendental function (a multiply
//! and an add), so it is already bit-identical everywhere and has no
//! counterpart here.

// The simulator still draws through rand_distr; remove this line once
// dist.rs and workload.rs use these samplers.
#![allow(dead_code)]

use std::f64::consts::{FRAC_PI_2, SQRT_2};
use std::fmt;
use std::sync::OnceLock;

use rand::Rng;

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

/// The standard exponential distribution (rate 1, mean 1), sampled by
/// inversion: `-ln U` with `U` uniform on `(0, 1\]` from 53 bits, so the
/// draws lie in `\[0, 53 ln 2\]` (the tail beyond, of probability 2^-53, is
/// cut). One `next_u64` and one `libm::log` per draw, no branch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exp1;

impl Exp1 {
    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        // `0.0 - ln U` rather than `-ln U`: U = 1 gives +0, not -0.
        0.0 - libm::log(open_closed01(rng))
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

    /// The rate.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The mean, `1 / lambda`.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        Exp1.sample(rng) * self.mean
    }
}

/// Number of Ziggurat layers (a power of two: the layer index is 8 bits).
const ZIG_LAYERS: usize = 256;

/// Right edge of the base layer for 256 layers: the `R` for which the top
/// layer closes at 0 (the value rand_distr's tables use too; the test
/// `ziggurat_layers_have_equal_areas` checks it).
const ZIG_R: f64 = 3.654_152_885_361_009;

/// The Ziggurat for the unnormalised density `f(x) = exp(-x²/2)`, `x >= 0`:
/// layer `i >= 1` is the rectangle `\[0, x_i\] × \[f(x_i), f(x_(i+1))\]`, the
/// base layer 0 is the rectangle `\[0, R\] × \[0, f(R)\]` plus the tail beyond
/// `R`, drawn as a rectangle of width `x_0 = V / f(R)`. Every layer has the
/// same area `V`. `x` decreases from `x_0` to `x_256 = 0`.
#[derive(Debug)]
struct Ziggurat {
    x: [f64; ZIG_LAYERS + 1],
    f: [f64; ZIG_LAYERS + 1],
}

static ZIGGURAT: OnceLock<Ziggurat> = OnceLock::new();

fn normal_density(x: f64) -> f64 {
    libm::exp(-0.5 * x * x)
}

impl Ziggurat {
    /// The tables, computed once with `libm` (so the same bits everywhere).
    fn get() -> &'static Ziggurat {
        ZIGGURAT.get_or_init(Ziggurat::build)
    }

    fn area() -> f64 {
        // R f(R) plus the tail's area, sqrt(pi/2) erfc(R / sqrt 2).
        ZIG_R * normal_density(ZIG_R) + libm::sqrt(FRAC_PI_2) * libm::erfc(ZIG_R / SQRT_2)
    }

    fn build() -> Ziggurat {
        let v = Self::area();
        let mut x = [0.0; ZIG_LAYERS + 1];
        x[0] = v / normal_density(ZIG_R);
        x[1] = ZIG_R;
        for i in 1..ZIG_LAYERS - 1 {
            // f(x_(i+1)) = f(x_i) + V / x_i: layer i has area V.
            x[i + 1] = libm::sqrt(-2.0 * libm::log(normal_density(x[i]) + v / x[i]));
        }
        // The top layer closes at 0 (R is chosen for that; the recurrence
        // would give 1 + 3e-15 inside the logarithm).
        x[ZIG_LAYERS] = 0.0;
        let mut f = [0.0; ZIG_LAYERS + 1];
        for (fi, xi) in f.iter_mut().zip(&x) {
            *fi = normal_density(*xi);
        }
        Ziggurat { x, f }
    }
}

/// The tail of the normal beyond `ZIG_R`, by Marsaglia's 1964 method:
/// `a = -ln(U1) / R`, `b = -ln(U2)`, accept `R + a` when `2b >= a²`.
#[cold]
fn normal_tail<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let a = 0.0 - libm::log(open_closed01(rng)) / ZIG_R;
        let b = 0.0 - libm::log(open_closed01(rng));
        if b + b >= a * a {
            return ZIG_R + a;
        }
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
        let z = Ziggurat::get();
        loop {
            let bits = rng.next_u64();
            let i = (bits & 0xff) as usize;
            let x = ((bits >> 11) as f64 * TWO_POW_MINUS_53) * z.x[i];
            // x >= 0: copy bit 8 into the sign bit.
            let signed = f64::from_bits(x.to_bits() | ((bits & 0x100) << 55));
            if x < z.x[i + 1] {
                // Under the layer above: certainly under the curve.
                return signed;
            }
            if i == 0 {
                let t = normal_tail(rng);
                return if bits & 0x100 == 0 { t } else { -t };
            }
            // The wedge: a uniform height within the layer against f(x).
            let y = z.f[i] + (z.f[i + 1] - z.f[i]) * closed_open01(rng);
            if y < normal_density(x) {
                return signed;
            }
        }
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
    pub fn new(mean: f64, sd: f64) -> Result<Self, SamplerError> {
        Ok(Normal {
            mean: finite("Normal", "mean", mean)?,
            sd: finite_non_negative("Normal", "sd", sd)?,
        })
    }

    /// The mean.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The standard deviation.
    pub fn sd(&self) -> f64 {
        self.sd
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
    mu: f64,
    sigma: f64,
}

impl LogNormal {
    /// `mu` must be finite; `sigma` finite and at least 0 (0 gives `exp(mu)`
    /// always, as rand_distr's does: a lognormal given by a tiny standard
    /// deviation has `sigma` 0 after rounding).
    pub fn new(mu: f64, sigma: f64) -> Result<Self, SamplerError> {
        Ok(LogNormal {
            mu: finite("LogNormal", "mu", mu)?,
            sigma: finite_non_negative("LogNormal", "sigma", sigma)?,
        })
    }

    /// The mean of the logarithm.
    pub fn mu(&self) -> f64 {
        self.mu
    }

    /// The standard deviation of the logarithm.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        libm::exp(self.mu + self.sigma * StandardNormal.sample(rng))
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

    /// The shape.
    pub fn shape(&self) -> f64 {
        self.shape
    }

    /// The scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let g = self.marsaglia_tsang(rng);
        if self.shape < 1.0 {
            g * libm::pow(open_closed01(rng), self.inv_shape) * self.scale
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

    /// The success probability.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// One draw.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        // Both logarithms are <= 0, so the quotient is >= 0 (or -0) and the
        // truncating cast is the floor.
        (libm::log(open_closed01(rng)) / self.ln_q) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::Distribution;
    use rand_pcg::Pcg64Mcg;

    fn rng(seed: u64) -> Pcg64Mcg {
        Pcg64Mcg::seed_from_u64(seed)
    }

    /// Sample mean and (unbiased) sample variance, accumulated in the
    /// two-pass way for accuracy.
    fn mean_var(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
        (mean, ss / (n - 1.0))
    }

    /// Checks the sample mean and variance of `xs` against the true mean,
    /// variance and fourth central moment `mu4`.
    ///
    /// Tolerances: the sample mean of n draws has standard error
    /// `sqrt(var / n)`, the sample variance `sqrt((mu4 - var²) / n)`
    /// (asymptotically normal in both cases). Each must lie within 5 standard
    /// errors, which a correct sampler misses with probability about 6e-7
    /// per check (normal approximation), while a wrong constant or formula
    /// shifts a moment by many standard errors at n = 200 000.
    fn check_moments(what: &str, xs: &[f64], mean: f64, var: f64, mu4: f64) {
        let n = xs.len() as f64;
        let (m, s2) = mean_var(xs);
        let se_mean = libm::sqrt(var / n);
        let se_var = libm::sqrt((mu4 - var * var) / n);
        assert!(
            (m - mean).abs() <= 5.0 * se_mean,
            "{what}: mean {m}, expected {mean} ± 5 × {se_mean}"
        );
        assert!(
            (s2 - var).abs() <= 5.0 * se_var,
            "{what}: variance {s2}, expected {var} ± 5 × {se_var}"
        );
    }

    /// The fourth central moment from the first four raw moments.
    fn central4(m1: f64, m2: f64, m3: f64, m4: f64) -> f64 {
        m4 - 4.0 * m1 * m3 + 6.0 * m1 * m1 * m2 - 3.0 * m1 * m1 * m1 * m1
    }

    const N: usize = 200_000;

    fn draws(seed: u64, mut f: impl FnMut(&mut Pcg64Mcg) -> f64) -> Vec<f64> {
        let mut r = rng(seed);
        (0..N).map(|_| f(&mut r)).collect()
    }

    #[test]
    fn exponential_moments() {
        // Exponential with rate l: mean 1/l, variance 1/l², mu4 9/l⁴.
        let xs = draws(1, |r| Exp1.sample(r));
        check_moments("Exp1", &xs, 1.0, 1.0, 9.0);
        for (seed, lambda) in [(2, 0.5), (3, 40.0), (4, 1e-3)] {
            let d = Exp::new(lambda).unwrap();
            let xs = draws(seed, |r| d.sample(r));
            let m = 1.0 / lambda;
            check_moments(
                &format!("Exp({lambda})"),
                &xs,
                m,
                m * m,
                9.0 * m * m * m * m,
            );
        }
        let d = Exp::from_mean(7.0).unwrap();
        assert_eq!(d.mean(), 7.0);
        let xs = draws(5, |r| d.sample(r));
        check_moments("Exp(mean 7)", &xs, 7.0, 49.0, 9.0 * 49.0 * 49.0);
    }

    #[test]
    fn normal_moments() {
        // Normal: mu4 = 3 sd⁴.
        let xs = draws(11, |r| StandardNormal.sample(r));
        check_moments("StandardNormal", &xs, 0.0, 1.0, 3.0);
        for (seed, mean, sd) in [(12, 3.0, 0.5), (13, -1e3, 20.0), (14, 0.0, 1e-9)] {
            let d = Normal::new(mean, sd).unwrap();
            let xs = draws(seed, |r| d.sample(r));
            let var = sd * sd;
            check_moments(
                &format!("Normal({mean}, {sd})"),
                &xs,
                mean,
                var,
                3.0 * var * var,
            );
        }
        // Symmetry: the sign bit is independent of the magnitude.
        let xs = draws(15, |r| StandardNormal.sample(r));
        let positive = xs.iter().filter(|&&x| x > 0.0).count() as f64;
        let n = xs.len() as f64;
        assert!((positive - n / 2.0).abs() <= 5.0 * libm::sqrt(n / 4.0));
    }

    #[test]
    fn lognormal_moments() {
        for (seed, mu, sigma) in [
            (21, 0.0, 0.2),
            (22, 1.0, 1.5),
            (23, -2.0, 0.2),
            (24, 6.0, 1.5),
        ] {
            let d = LogNormal::new(mu, sigma).unwrap();
            let xs = draws(seed, |r| d.sample(r));
            // Raw moments E[X^k] = exp(k mu + k² sigma² / 2).
            let raw = |k: f64| libm::exp(k * mu + k * k * sigma * sigma / 2.0);
            let m1 = raw(1.0);
            let var = raw(2.0) - m1 * m1;
            let mu4 = central4(m1, raw(2.0), raw(3.0), raw(4.0));
            // For sigma 1.5 the variance's tolerance is wide (the kurtosis is
            // about 10 000): the logarithm's moments below are the sharp test.
            check_moments(&format!("LogNormal({mu}, {sigma})"), &xs, m1, var, mu4);
            let logs: Vec<f64> = xs.iter().map(|&x| libm::log(x)).collect();
            let s2 = sigma * sigma;
            check_moments(
                &format!("ln LogNormal({mu}, {sigma})"),
                &logs,
                mu,
                s2,
                3.0 * s2 * s2,
            );
        }
    }

    #[test]
    fn gamma_moments() {
        for (seed, shape, scale) in [
            (31, 0.3, 1.0),
            (32, 1.0, 2.0),
            (33, 2.5, 0.5),
            (34, 40.0, 3.0),
            (35, 0.3, 1e4),
        ] {
            let d = Gamma::new(shape, scale).unwrap();
            let xs = draws(seed, |r| d.sample(r));
            // Mean k θ, variance k θ², mu4 = var² (3 + 6 / k).
            let var = shape * scale * scale;
            let mu4 = var * var * (3.0 + 6.0 / shape);
            check_moments(
                &format!("Gamma({shape}, {scale})"),
                &xs,
                shape * scale,
                var,
                mu4,
            );
        }
    }

    #[test]
    fn geometric_moments() {
        // p = 1: the first trial succeeds, always 0 failures.
        let one = Geometric::new(1.0).unwrap();
        let mut r = rng(40);
        assert!((0..10_000).all(|_| one.sample(&mut r) == 0));
        for (seed, p) in [(41, 0.5), (42, 0.01), (43, 1e-6), (44, 0.9)] {
            let d = Geometric::new(p).unwrap();
            let xs = draws(seed, |r| d.sample(r) as f64);
            // Mean q/p, variance q/p², kurtosis 9 + p²/q (q = 1 - p).
            let q = 1.0 - p;
            let var = q / (p * p);
            let mu4 = var * var * (9.0 + p * p / q);
            check_moments(&format!("Geometric({p})"), &xs, q / p, var, mu4);
        }
        // A tiny p saturates instead of overflowing.
        let tiny = Geometric::new(1e-300).unwrap();
        let mut r = rng(45);
        let big: Vec<u64> = (0..1000).map(|_| tiny.sample(&mut r)).collect();
        assert!(big.iter().all(|&k| k > 1 << 60));
        assert!(big.contains(&u64::MAX));
    }

    /// The two-sample Kolmogorov–Smirnov statistic, sup |F_a - F_b|, with
    /// ties handled (both empirical CDFs step past a shared value together,
    /// as needed for the geometric's integers).
    fn ks_two_sample(mut a: Vec<f64>, mut b: Vec<f64>) -> f64 {
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        let (n, m) = (a.len() as f64, b.len() as f64);
        let (mut i, mut j, mut d) = (0, 0, 0.0_f64);
        while i < a.len() && j < b.len() {
            let v = a[i].min(b[j]);
            while i < a.len() && a[i] <= v {
                i += 1;
            }
            while j < b.len() && b[j] <= v {
                j += 1;
            }
            d = d.max((i as f64 / n - j as f64 / m).abs());
        }
        d
    }

    /// The Kolmogorov–Smirnov critical value at level alpha (asymptotic):
    /// `c(alpha) sqrt((n + m) / (n m))` with `c(alpha) = sqrt(-ln(alpha / 2) / 2)`;
    /// 1.949 for alpha = 0.001. Conservative for discrete distributions.
    fn ks_critical(alpha: f64, n: usize, m: usize) -> f64 {
        let (n, m) = (n as f64, m as f64);
        libm::sqrt(-libm::log(alpha / 2.0) / 2.0) * libm::sqrt((n + m) / (n * m))
    }

    /// Draws `N` values from ours and `N` from rand_distr's (independent
    /// seeds) and asserts the KS statistic is below the alpha = 0.001
    /// critical value (about 0.0062 for 200 000 each).
    fn ks_against(
        what: &str,
        seed: u64,
        ours: impl FnMut(&mut Pcg64Mcg) -> f64,
        theirs: impl FnMut(&mut Pcg64Mcg) -> f64,
    ) {
        let a = draws(seed, ours);
        let b = draws(seed + 1_000_000, theirs);
        let d = ks_two_sample(a, b);
        let critical = ks_critical(0.001, N, N);
        assert!(
            d < critical,
            "{what}: KS statistic {d} >= critical {critical}"
        );
    }

    #[test]
    fn same_distributions_as_rand_distr() {
        ks_against(
            "Exp1",
            51,
            |r| Exp1.sample(r),
            |r| rand_distr::Exp1.sample(r),
        );
        let (ours, theirs) = (Exp::new(2.5).unwrap(), rand_distr::Exp::new(2.5).unwrap());
        ks_against("Exp(2.5)", 52, |r| ours.sample(r), |r| theirs.sample(r));
        ks_against(
            "StandardNormal",
            53,
            |r| StandardNormal.sample(r),
            |r| rand_distr::StandardNormal.sample(r),
        );
        let ours = Normal::new(-4.0, 3.0).unwrap();
        let theirs = rand_distr::Normal::new(-4.0, 3.0).unwrap();
        ks_against(
            "Normal(-4, 3)",
            54,
            |r| ours.sample(r),
            |r| theirs.sample(r),
        );
        for (seed, mu, sigma) in [(55, 0.0, 0.2), (56, 5.0, 1.5)] {
            let ours = LogNormal::new(mu, sigma).unwrap();
            let theirs = rand_distr::LogNormal::new(mu, sigma).unwrap();
            let what = format!("LogNormal({mu}, {sigma})");
            ks_against(&what, seed, |r| ours.sample(r), |r| theirs.sample(r));
        }
        for (seed, shape, scale) in [
            (57, 0.3, 1.0),
            (58, 1.0, 2.0),
            (59, 2.5, 1.0),
            (60, 40.0, 0.1),
        ] {
            let ours = Gamma::new(shape, scale).unwrap();
            let theirs = rand_distr::Gamma::new(shape, scale).unwrap();
            let what = format!("Gamma({shape}, {scale})");
            ks_against(&what, seed, |r| ours.sample(r), |r| theirs.sample(r));
        }
        for (seed, p) in [(61, 0.5), (62, 0.01), (63, 1e-6), (64, 0.9)] {
            let ours = Geometric::new(p).unwrap();
            let theirs = rand_distr::Geometric::new(p).unwrap();
            let what = format!("Geometric({p})");
            ks_against(
                &what,
                seed,
                |r| ours.sample(r) as f64,
                |r| theirs.sample(r) as f64,
            );
        }
    }

    /// The one-sample KS statistic of `xs` against the continuous CDF `cdf`.
    fn ks_one_sample(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
        xs.sort_by(f64::total_cmp);
        let n = xs.len() as f64;
        let mut d = 0.0_f64;
        for (i, &x) in xs.iter().enumerate() {
            let f = cdf(x);
            d = d
                .max((f - i as f64 / n).abs())
                .max(((i + 1) as f64 / n - f).abs());
        }
        d
    }

    #[test]
    fn exact_cdfs_of_exponential_and_normal() {
        // A finer check than the two-sample test: 2 million draws against the
        // exact CDF, critical value 1.949 / sqrt(n) ≈ 0.0014 at alpha = 0.001.
        let n = 2_000_000;
        let critical = libm::sqrt(-libm::log(0.001 / 2.0) / 2.0) / libm::sqrt(n as f64);
        let mut r = rng(71);
        let xs: Vec<f64> = (0..n).map(|_| Exp1.sample(&mut r)).collect();
        let d = ks_one_sample(xs, |x| -libm::expm1(-x));
        assert!(d < critical, "Exp1: KS {d} >= {critical}");
        let mut r = rng(72);
        let xs: Vec<f64> = (0..n).map(|_| StandardNormal.sample(&mut r)).collect();
        let d = ks_one_sample(xs, |x| 0.5 * libm::erfc(-x / SQRT_2));
        assert!(d < critical, "StandardNormal: KS {d} >= {critical}");
    }

    #[test]
    fn normal_tail_is_reached_and_correct() {
        // P(|Z| > R) = erfc(R / sqrt 2) ≈ 2.6e-4: the tail branch runs about
        // 520 times in 2 million draws; the count must be within 5 standard
        // errors of the binomial expectation.
        let n = 2_000_000;
        let p = libm::erfc(ZIG_R / SQRT_2);
        let mut r = rng(73);
        let beyond = (0..n)
            .filter(|_| StandardNormal.sample(&mut r).abs() > ZIG_R)
            .count() as f64;
        let expected = n as f64 * p;
        let se = libm::sqrt(n as f64 * p * (1.0 - p));
        assert!(
            (beyond - expected).abs() <= 5.0 * se,
            "{beyond} beyond R, expected {expected}"
        );
    }

    #[test]
    fn normal_tail_has_the_right_shape() {
        // The tail branch alone, against the normal's CDF conditional on
        // exceeding R, 1 - erfc(x / sqrt 2) / erfc(R / sqrt 2): 200 000 draws,
        // critical value 1.949 / sqrt(n) ≈ 0.0044 at alpha = 0.001. (The
        // whole-normal tests cannot see the tail's shape: it holds 2.6e-4 of
        // the mass.)
        let mut r = rng(74);
        let xs: Vec<f64> = (0..N).map(|_| normal_tail(&mut r)).collect();
        assert!(xs.iter().all(|&x| x >= ZIG_R));
        let q = libm::erfc(ZIG_R / SQRT_2);
        let d = ks_one_sample(xs, |x| 1.0 - libm::erfc(x / SQRT_2) / q);
        let critical = libm::sqrt(-libm::log(0.001 / 2.0) / 2.0) / libm::sqrt(N as f64);
        assert!(d < critical, "normal tail: KS {d} >= {critical}");
    }

    #[test]
    fn normal_mass_between_layer_edges() {
        // Where the Ziggurat's wedge test matters: |Z| between consecutive
        // layer edges x_(i+1) and x_i (and beyond R), 256 bins in all. A wrong
        // wedge test (accepting the whole rectangle, say) leaves the moments
        // and the CDF within their tolerances, since the wedges hold under 1%
        // of the mass, but puts up to tens of percent too much mass in the
        // bins near R. Pearson's chi-square over the bins, 2 million draws
        // (the smallest expected count is about 400), against its critical
        // value for 255 degrees of freedom at alpha = 0.001 from the
        // Wilson–Hilferty approximation (about 331).
        let n = 2_000_000;
        let z = Ziggurat::get();
        let mut r = rng(75);
        // Bin i (1..=255) is [x_(i+1), x_i); bin 0 is [R, inf).
        let mut counts = [0_u64; ZIG_LAYERS];
        for _ in 0..n {
            let a = StandardNormal.sample(&mut r).abs();
            let bin = z.x[1..].partition_point(|&e| e > a);
            counts[bin] += 1;
        }
        let upper = |x: f64| libm::erfc(x / SQRT_2); // P(|Z| >= x)
        let mut chi2 = 0.0;
        for (bin, &count) in counts.iter().enumerate() {
            let p = if bin == 0 {
                upper(ZIG_R)
            } else {
                upper(z.x[bin + 1]) - upper(z.x[bin])
            };
            let expected = n as f64 * p;
            chi2 += (count as f64 - expected) * (count as f64 - expected) / expected;
        }
        let k = (ZIG_LAYERS - 1) as f64;
        let h = 2.0 / (9.0 * k);
        let w = 1.0 - h + 3.090_232 * libm::sqrt(h); // z of 0.999
        let critical = k * w * w * w;
        assert!(chi2 < critical, "chi-square {chi2} >= {critical}");
    }

    #[test]
    fn ziggurat_layers_have_equal_areas() {
        let z = Ziggurat::get();
        let v = Ziggurat::area();
        assert_eq!(z.x[0] * z.f[1], v);
        for i in 1..ZIG_LAYERS {
            let area = z.x[i] * (z.f[i + 1] - z.f[i]);
            assert!(
                (area - v).abs() <= 1e-12 * v,
                "layer {i}: area {area}, V {v}"
            );
        }
        assert!(z.x.windows(2).all(|w| w[0] > w[1]));
    }

    /// The first draws from seed 2024, recorded when the samplers were
    /// written. They pin the algorithms and the way they consume the stream:
    /// a change to either (a constant, an order of draws, a maths function)
    /// changes simulation results for a given seed, and must be noticed here
    /// and deliberate. The same literals hold on every target, which is the
    /// point of this module.
    #[test]
    fn fixed_seed_gives_fixed_draws() {
        let first = |f: &mut dyn FnMut(&mut Pcg64Mcg) -> f64| {
            let mut r = rng(2024);
            (0..4).map(|_| f(&mut r)).collect::<Vec<f64>>()
        };
        assert_eq!(
            first(&mut |r| Exp1.sample(r)),
            [
                1.2976636731583575,
                4.019885799698422,
                0.14641846042478157,
                0.6783637356877072
            ]
        );
        let d = Exp::new(0.25).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                5.19065469263343,
                16.079543198793687,
                0.5856738416991263,
                2.713454942750829
            ]
        );
        assert_eq!(
            first(&mut |r| StandardNormal.sample(r)),
            [
                0.4852754929977827,
                -0.04222960753055013,
                1.2738259971033374,
                1.1404228873513282
            ]
        );
        let d = Normal::new(10.0, 2.0).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                10.970550985995565,
                9.9155407849389,
                12.547651994206674,
                12.280845774702657
            ]
        );
        let d = LogNormal::new(6.0, 0.8).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                594.7971329592222,
                390.0271351361789,
                1117.7363440494505,
                1004.5935490472306
            ]
        );
        let d = Gamma::new(0.3, 2.0).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                1.874085561072371,
                1.1696598704874035,
                0.021413415355287624,
                2.6955663998813395
            ]
        );
        let d = Gamma::new(2.5, 2.0).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r)),
            [
                5.924691464843061,
                9.269146729746046,
                4.838070696038945,
                1.807358212290595
            ]
        );
        let d = Geometric::new(0.01).unwrap();
        assert_eq!(
            first(&mut |r| d.sample(r) as f64),
            [129.0, 399.0, 14.0, 67.0]
        );
    }

    #[test]
    fn new_rejects_bad_parameters() {
        let bad = [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        for x in bad {
            assert!(Exp::new(x).is_err(), "Exp::new({x})");
            assert!(Exp::from_mean(x).is_err(), "Exp::from_mean({x})");
            assert!(Gamma::new(x, 1.0).is_err(), "Gamma::new({x}, 1)");
            assert!(Gamma::new(1.0, x).is_err(), "Gamma::new(1, {x})");
            assert!(Geometric::new(x).is_err(), "Geometric::new({x})");
        }
        // A rate or mean whose inverse overflows.
        assert!(Exp::new(1e-310).is_err());
        assert!(Exp::from_mean(1e-310).is_err());
        // Standard deviations: 0 is a point mass, allowed (as rand_distr).
        for x in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(Normal::new(0.0, x).is_err(), "Normal::new(0, {x})");
            assert!(LogNormal::new(0.0, x).is_err(), "LogNormal::new(0, {x})");
        }
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(Normal::new(x, 1.0).is_err(), "Normal::new({x}, 1)");
            assert!(LogNormal::new(x, 1.0).is_err(), "LogNormal::new({x}, 1)");
        }
        assert!(Geometric::new(1.5).is_err());
        assert!(Geometric::new(1.0).is_ok());
        let point = LogNormal::new(2.0, 0.0).unwrap();
        assert_eq!(point.sample(&mut rng(1)), libm::exp(2.0));
        // The reason is spelled out.
        let e = Gamma::new(-2.0, 1.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Gamma shape must be finite and positive, got -2"
        );
        let e = Geometric::new(f64::NAN).unwrap_err();
        assert_eq!(e.to_string(), "Geometric p must be in (0, 1], got NaN");
    }
}

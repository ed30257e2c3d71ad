//! Validated distributions: [`Dist`] is the sampler built from a
//! [`DistParams`] (`DistParams::build` checks the parameters once). Samples
//! of counts are rounded to the nearest integer and clamped to
//! `\[max(min, 1), max\]`.

use std::sync::OnceLock;

use rand::Rng;
use rand::distr::Distribution;
use rand::distr::Uniform;
use rand::distr::weighted::WeightedIndex;
use serde::Serialize;

use crate::error::{Checker, ScenarioError, show};
use crate::params::{DistParams, Shape};
use crate::rng::stream;
use crate::samplers::{Exp, Gamma, Geometric, LogNormal, SamplerError};

/// The standard normal quantile at 0.9, used to turn (median, p90) into a
/// lognormal sigma.
const Z90: f64 = 1.281_551_565_544_600_4;

/// Largest count a distribution may produce (tokens or batch size).
pub const MAX_COUNT: u32 = 100_000_000;

/// Fails `field` unless `value` is at most [`MAX_COUNT`] (a parameter past
/// the largest count would be clamped to it without a word).
fn at_most_max_count(check: &mut Checker, field: &str, value: f64) -> bool {
    if value > MAX_COUNT as f64 {
        check.fail(
            field,
            format!(
                "must be at most {MAX_COUNT} (the largest count Sojourn simulates), got {}",
                show(value)
            ),
        );
        return false;
    }
    true
}

/// The sampler `built` gave, or a field error on `field` saying why the
/// parameters that passed the range checks still cannot be sampled (so that
/// what runs is exactly what was validated, never a silent stand-in).
fn sampler_or_fail<E: std::fmt::Display>(
    check: &mut Checker,
    ok: &mut bool,
    field: &str,
    built: Result<Sampler, E>,
) -> Sampler {
    match built {
        Ok(sampler) => sampler,
        Err(error) => {
            if *ok {
                check.fail(
                    field,
                    format!("these parameters cannot be sampled ({error}), make the distribution less extreme"),
                );
            }
            *ok = false;
            Sampler::Constant(1.0)
        }
    }
}

impl DistParams {
    /// Checks the parameters and builds the sampler. Problems are reported to
    /// `check` under the current path; `None` if there were any.
    /// Checks the parameters and builds the sampler on its own (e.g. for a
    /// preview); field paths in errors are relative to the distribution
    /// ("p90", "values\[2\]").
    pub fn to_dist(&self) -> Result<Dist, ScenarioError> {
        let mut check = Checker::new();
        let dist = self.build(&mut check);
        check.finish()?;
        dist.ok_or_else(|| ScenarioError::single("", "invalid distribution"))
    }

    pub(crate) fn build(&self, check: &mut Checker) -> Option<Dist> {
        let before = check.has_errors();
        let mut ok = true;
        let sampler = match &self.shape {
            Shape::Constant { value } => {
                ok &= check.positive("value", *value) && at_most_max_count(check, "value", *value);
                Sampler::Constant(*value)
            }
            Shape::Uniform { low, high } => {
                ok &= check.non_negative("low", *low);
                ok &= check.positive("high", *high);
                if ok && high < low {
                    check.fail(
                        "high",
                        format!("must be at least low ({}), got {}", show(*low), show(*high)),
                    );
                    ok = false;
                }
                ok &= at_most_max_count(check, "high", *high);
                let built = Uniform::new_inclusive(*low, *high)
                    .map(|dist| Sampler::Uniform { dist, low: *low });
                sampler_or_fail(check, &mut ok, "high", built)
            }
            Shape::Exponential { mean } => {
                ok &= check.positive("mean", *mean) && at_most_max_count(check, "mean", *mean);
                let built = Exp::from_mean(*mean).map(Sampler::Exponential);
                sampler_or_fail(check, &mut ok, "mean", built)
            }
            Shape::Geometric { mean } => {
                if !(mean.is_finite() && *mean >= 1.0) {
                    check.fail("mean", format!("must be at least 1, got {}", show(*mean)));
                    ok = false;
                }
                ok &= at_most_max_count(check, "mean", *mean);
                let built =
                    Geometric::new(1.0 / mean).map(|dist| Sampler::Geometric { dist, mean: *mean });
                sampler_or_fail(check, &mut ok, "mean", built)
            }
            Shape::LogNormal { median, p90 } => {
                ok &= check.positive("median", *median);
                ok &= check.positive("p90", *p90);
                if ok && p90 <= median {
                    check.fail(
                        "p90",
                        format!(
                            "must be greater than the median ({}), got {}",
                            show(*median),
                            show(*p90)
                        ),
                    );
                    ok = false;
                }
                ok &= at_most_max_count(check, "median", *median);
                let mu = libm::log(*median);
                let sigma = (libm::log(*p90) - mu) / Z90;
                let built = lognormal(mu, sigma);
                sampler_or_fail(check, &mut ok, "p90", built)
            }
            Shape::LogNormalMoments { mean, std_dev } => {
                ok &= check.positive("mean", *mean);
                ok &= check.positive("std_dev", *std_dev);
                ok &= at_most_max_count(check, "mean", *mean);
                let cv = std_dev / mean;
                let sigma2 = libm::log1p(cv * cv);
                let built = lognormal(libm::log(*mean) - sigma2 / 2.0, libm::sqrt(sigma2));
                sampler_or_fail(check, &mut ok, "std_dev", built)
            }
            Shape::Gamma { mean, std_dev } => {
                ok &= check.positive("mean", *mean);
                ok &= check.positive("std_dev", *std_dev);
                ok &= at_most_max_count(check, "mean", *mean);
                let shape = (mean / std_dev) * (mean / std_dev);
                let scale = std_dev * std_dev / mean;
                // An infinite or zero shape or scale (e.g. from a std_dev of
                // 1e-200) cannot be sampled: say so in the scenario's terms.
                let built = if shape.is_finite() && shape > 0.0 && scale.is_finite() && scale > 0.0
                {
                    Gamma::new(shape, scale)
                        .map(Sampler::Gamma)
                        .map_err(|e| e.to_string())
                } else {
                    Err(format!(
                        "shape (mean / std_dev)^2 = {} and scale std_dev^2 / mean = {} must both be finite and positive",
                        show(shape),
                        show(scale)
                    ))
                };
                sampler_or_fail(check, &mut ok, "std_dev", built)
            }
            Shape::Empirical { values } => {
                if values.is_empty() {
                    check.fail("values", "must hold at least one value");
                    ok = false;
                }
                for (i, v) in values.iter().enumerate() {
                    let field = format!("values[{i}]");
                    ok &= check.positive(&field, *v) && at_most_max_count(check, &field, *v);
                }
                Sampler::Empirical(values.clone())
            }
            Shape::Histogram { edges, weights } => {
                if weights.is_empty() || edges.len() != weights.len() + 1 {
                    check.fail(
                        "edges",
                        format!(
                            "must have one more entry than weights ({} weights need {} edges), got {}",
                            weights.len(),
                            weights.len() + 1,
                            edges.len()
                        ),
                    );
                    ok = false;
                }
                for (i, e) in edges.iter().enumerate() {
                    let field = format!("edges[{i}]");
                    ok &= check.non_negative(&field, *e) && at_most_max_count(check, &field, *e);
                }
                if edges.windows(2).any(|w| w[1] <= w[0]) {
                    check.fail("edges", "must be strictly increasing");
                    ok = false;
                }
                for (i, w) in weights.iter().enumerate() {
                    ok &= check.non_negative(&format!("weights[{i}]"), *w);
                }
                let total: f64 = weights.iter().sum();
                if ok && !total.is_finite() {
                    check.fail(
                        "weights",
                        format!("must add up to a finite number, got a sum of {}: scale them down (only their ratios matter)", show(total)),
                    );
                    ok = false;
                } else if ok && total <= 0.0 {
                    check.fail("weights", "must not all be zero");
                    ok = false;
                }
                let built =
                    WeightedIndex::new(weights.iter().copied()).map(|index| Sampler::Histogram {
                        index,
                        edges: edges.clone(),
                    });
                sampler_or_fail(check, &mut ok, "weights", built)
            }
        };
        let min = self.min.unwrap_or(1.0);
        let max = self.max.unwrap_or(MAX_COUNT as f64);
        if self.max.is_some() && max > MAX_COUNT as f64 {
            check.fail(
                "max",
                format!(
                    "must be at most {MAX_COUNT} (the largest count Sojourn simulates), got {}",
                    show(max)
                ),
            );
        }
        if self.min.is_some() && check.positive("min", min) && min > MAX_COUNT as f64 {
            check.fail(
                "min",
                format!("must be at most {MAX_COUNT}, got {}", show(min)),
            );
        }
        // Samples are whole counts in [ceil(max(min, 1)), floor(max)].
        let (lowest, highest) = (min.max(1.0).ceil(), max.min(MAX_COUNT as f64).floor());
        if self.max.is_some() && check.positive("max", max) && highest < lowest {
            check.fail(
                "max",
                format!(
                    "must allow a whole count of at least {} (the minimum), got {}",
                    show(lowest),
                    show(max)
                ),
            );
        }
        if check.has_errors() != before || !ok {
            return None;
        }
        Some(Dist {
            sampler,
            min: lowest,
            max: highest,
            moments: OnceLock::new(),
            table: OnceLock::new(),
        })
    }
}

fn lognormal(mu: f64, sigma: f64) -> Result<Sampler, SamplerError> {
    LogNormal::new(mu, sigma).map(|dist| Sampler::LogNormal { dist, mu, sigma })
}

#[derive(Clone, Debug)]
enum Sampler {
    Constant(f64),
    Uniform {
        dist: Uniform<f64>,
        low: f64,
    },
    Exponential(Exp),
    Geometric {
        dist: Geometric,
        mean: f64,
    },
    LogNormal {
        dist: LogNormal,
        mu: f64,
        sigma: f64,
    },
    Gamma(Gamma),
    Empirical(Vec<f64>),
    Histogram {
        index: WeightedIndex<f64>,
        edges: Vec<f64>,
    },
}

/// A validated distribution of positive integer counts.
#[derive(Clone, Debug)]
pub struct Dist {
    sampler: Sampler,
    /// Smallest whole count a sample may take (at least 1).
    min: f64,
    /// Largest whole count a sample may take (at most `MAX_COUNT`).
    max: f64,
    /// Mean and E\[X^2\], computed on first use (a sample of 50,000 draws for
    /// most shapes) and kept, also by clones: every run, load estimate and
    /// planner step asks for them.
    moments: OnceLock<(f64, f64)>,
    /// The exact distribution of the rounded, clamped count as an alias
    /// table, built on first use where that is possible ([`AliasTable::of`]).
    table: OnceLock<Option<AliasTable>>,
}

/// Moments and quantiles of a count distribution, for previews and the
/// analytic estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DistSummary {
    pub mean: f64,
    /// E\[X^2\].
    pub second_moment: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    /// Histogram of the summary sample: `(bin_low, bin_high, fraction)`.
    pub histogram: Vec<(f64, f64, f64)>,
}

impl Dist {
    /// One raw draw before rounding and clamping.
    fn raw<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match &self.sampler {
            Sampler::Constant(v) => *v,
            Sampler::Uniform { dist, .. } => dist.sample(rng),
            Sampler::Exponential(d) => d.sample(rng),
            // The geometric sampler counts failures before the first success; add the success.
            Sampler::Geometric { dist, .. } => dist.sample(rng) as f64 + 1.0,
            Sampler::LogNormal { dist, .. } => dist.sample(rng),
            Sampler::Gamma(d) => d.sample(rng),
            Sampler::Empirical(values) => values[uniform_index(rng, values.len())],
            Sampler::Histogram { index, edges } => {
                let bin = index.sample(rng);
                let u = unit(rng);
                edges[bin] + u * (edges[bin + 1] - edges[bin])
            }
        }
    }

    /// Draws a count: rounded to the nearest integer, clamped to `\[min, max\]`
    /// and never below 1.
    ///
    /// A draw from a built alias table and a constant inline where they
    /// are made (a few instructions in the workload's loops); the rest (the
    /// first draw, which builds the table, and distributions without one)
    /// is out of line.
    #[inline(always)]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        match (self.table.get(), &self.sampler) {
            (Some(Some(table)), _) => table.sample(rng),
            // Constants (a batch size of one, above all) take no draw and
            // build no table; decided here, they cost no call.
            (_, Sampler::Constant(v)) => round(*v).clamp(self.min, self.max) as u32,
            _ => self.sample_otherwise(rng),
        }
    }

    /// Fills `out` with draws, the same values in the same order as
    /// `out.len()` calls of [`Dist::sample`] give; from an alias table, the
    /// table lookups of the whole block overlap in the memory system.
    pub fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [u32]) {
        match self.table.get() {
            Some(Some(table)) => table.fill(rng, out),
            _ => out.iter_mut().for_each(|x| *x = self.sample(rng)),
        }
    }

    #[inline(never)]
    fn sample_otherwise<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        match self.table() {
            Some(table) => table.sample(rng),
            None => self.sample_directly(rng),
        }
    }

    fn sample_directly<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        let x = round(self.raw(rng));
        // NaN cannot arise from validated parameters; clamp keeps it in range anyway.
        x.clamp(self.min, self.max) as u32
    }

    /// Mean and E\[X^2\] of the rounded, clamped count, exactly where that is
    /// cheap (constant, geometric without clamps, empirical, a lognormal with
    /// an alias table), otherwise from a
    /// fixed-seed sample of 50,000 draws (relative error of the mean ~0.5%
    /// for a coefficient of variation of 1, ~1% for the long-tailed lognormals
    /// planners use; it feeds estimates, never the simulation).
    pub fn moments(&self) -> (f64, f64) {
        *self.moments.get_or_init(|| self.compute_moments())
    }

    fn table(&self) -> Option<&AliasTable> {
        self.table.get_or_init(|| AliasTable::of(self)).as_ref()
    }

    fn compute_moments(&self) -> (f64, f64) {
        if let Some(table) = self.table() {
            return table.moments;
        }
        let unclamped = self.min <= 1.0 && self.max >= MAX_COUNT as f64;
        match &self.sampler {
            Sampler::Constant(_) => {
                let x = self.sample(&mut stream(0, 0)) as f64;
                (x, x * x)
            }
            Sampler::Geometric { mean, .. } if unclamped => {
                let q = 1.0 / mean;
                (*mean, (2.0 - q) / (q * q))
            }
            Sampler::Empirical(values) => {
                let n = values.len() as f64;
                let counts = values.iter().map(|v| v.round().clamp(self.min, self.max));
                let (s1, s2) = counts.fold((0.0, 0.0), |(a, b), x| (a + x, b + x * x));
                (s1 / n, s2 / n)
            }
            _ => {
                let mut rng = stream(0x5eed, 0);
                let n = 50_000;
                let (mut s1, mut s2) = (0.0, 0.0);
                for _ in 0..n {
                    let x = self.sample(&mut rng) as f64;
                    s1 += x;
                    s2 += x * x;
                }
                (s1 / n as f64, s2 / n as f64)
            }
        }
    }

    /// The smallest count this distribution can draw.
    pub fn smallest(&self) -> u32 {
        let low = match &self.sampler {
            Sampler::Constant(v) => *v,
            Sampler::Uniform { low, .. } => *low,
            Sampler::Histogram { edges, .. } => edges.first().copied().unwrap_or(1.0),
            Sampler::Empirical(values) => values.iter().copied().fold(f64::INFINITY, f64::min),
            // Unbounded below: rounding and the clamp decide.
            _ => 0.0,
        };
        low.round().clamp(self.min, self.max) as u32
    }

    /// Summary from a fixed-seed sample of `n` draws: mean, E\[X^2\], quantiles
    /// and a 20-bin histogram. The same `n` always gives the same summary.
    pub fn summary(&self, n: usize) -> DistSummary {
        let mut rng = stream(0x5eed_5eed, 1);
        let mut xs: Vec<f64> = (0..n.max(1))
            .map(|_| self.sample(&mut rng) as f64)
            .collect();
        xs.sort_by(f64::total_cmp);
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let second_moment = xs.iter().map(|x| x * x).sum::<f64>() / xs.len() as f64;
        let q = |p: f64| crate::stats::quantile_sorted(&xs, p);
        let (lo, hi) = (xs[0], xs[xs.len() - 1]);
        let bins = 20;
        let width = ((hi - lo) / bins as f64).max(1.0);
        let mut counts = vec![0usize; bins];
        for x in &xs {
            let b = (((x - lo) / width) as usize).min(bins - 1);
            counts[b] += 1;
        }
        let histogram = counts
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    lo + i as f64 * width,
                    lo + (i + 1) as f64 * width,
                    *c as f64 / xs.len() as f64,
                )
            })
            .collect();
        DistSummary {
            mean,
            second_moment,
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            histogram,
        }
    }
}

/// Walker's alias table (built by Vose's method) for a count distribution
/// on `lo..=lo + n - 1`: one 64-bit draw picks a column uniformly (the high
/// half of a 64 x 64-bit product) and a coin (the next 32 bits) keeps the
/// column's own count or takes its alias. Column thresholds are stored to
/// 2^-32, so each count's probability is exact to about 2^-32 / n.
///
/// Used for lognormal counts with at most [`AliasTable::MAX_COUNTS`]
/// possible values (clamped, as token lengths usually are): a draw then
/// costs a multiply and a table lookup instead of a normal deviate and an
/// `exp`, and the mean and E\[X^2\] are exact sums.
#[derive(Clone, Debug)]
struct AliasTable {
    lo: u32,
    /// Per column: threshold (high 32 bits) and alias column (low 32 bits).
    columns: Vec<u64>,
    moments: (f64, f64),
}

impl AliasTable {
    const MAX_COUNTS: f64 = 65_536.0;

    /// The table of `dist`'s rounded, clamped counts, where it has one.
    fn of(dist: &Dist) -> Option<AliasTable> {
        let Sampler::LogNormal { mu, sigma, .. } = dist.sampler else {
            return None;
        };
        if dist.max - dist.min + 1.0 > Self::MAX_COUNTS || sigma.is_nan() || sigma <= 0.0 {
            return None;
        }
        let (lo, hi) = (dist.min as u32, dist.max as u32);
        // At each boundary c + 1/2 between counts: P(X <= x) and P(X > x)
        // for the lognormal, the smaller one from `erfc` (accurate in its
        // tail), the other by difference.
        let boundaries: Vec<(f64, f64)> = (lo..hi)
            .map(|c| {
                let z = (libm::log(c as f64 + 0.5) - mu) / sigma;
                let tail = 0.5 * libm::erfc(z.abs() / std::f64::consts::SQRT_2);
                if z <= 0.0 {
                    (tail, 1.0 - tail)
                } else {
                    (1.0 - tail, tail)
                }
            })
            .collect();
        // Count c is drawn for X in [c - 1/2, c + 1/2), the ends also for the tails.
        let n = boundaries.len();
        let probs: Vec<f64> = (0..=n)
            .map(
                |i| match (i.checked_sub(1).map(|j| boundaries[j]), boundaries.get(i)) {
                    (None, None) => 1.0,
                    (None, Some(&(up_below, _))) => up_below,
                    (Some((_, down_above)), None) => down_above,
                    // Differences of the smaller side lose no precision.
                    (Some((down_below, down_above)), Some(&(up_below, up_above))) => {
                        if up_below <= 0.5 {
                            up_below - down_below
                        } else {
                            down_above - up_above
                        }
                    }
                },
            )
            .collect();
        let total: f64 = probs.iter().sum();
        if !(total.is_finite() && total > 0.0) {
            return None;
        }
        let moments = probs
            .iter()
            .zip(lo..=hi)
            .fold((0.0, 0.0), |(m1, m2), (p, c)| {
                let c = c as f64;
                (m1 + p * c / total, m2 + p * c * c / total)
            });
        Some(AliasTable {
            lo,
            columns: vose(&probs, total),
            moments,
        })
    }

    #[inline(always)]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        self.resolve(self.pick(rng))
    }

    /// A column (high 32 bits) and a coin (low 32 bits) from one draw: the
    /// column from the high half of a 64x64-bit product, the coin from the
    /// next 32 bits.
    #[inline(always)]
    fn pick<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let wide = rng.next_u64() as u128 * self.columns.len() as u128;
        ((wide >> 64) as u64) << 32 | (wide as u64 >> 32)
    }

    /// The count a pick gives: its column, or the column's alias.
    #[inline(always)]
    fn resolve(&self, pick: u64) -> u32 {
        let (column, coin) = ((pick >> 32) as usize, pick as u32);
        let entry = self.columns[column];
        let chosen = if coin < (entry >> 32) as u32 {
            column as u32
        } else {
            entry as u32
        };
        self.lo + chosen
    }

    /// `out.len()` draws, as many calls of [`AliasTable::sample`] give: all
    /// the picks first (the random-number chain), then all the lookups,
    /// which are independent of each other, so their cache misses overlap.
    fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [u32]) {
        for chunk in out.chunks_mut(Self::FILL) {
            let mut picks = [0u64; Self::FILL];
            for p in &mut picks[..chunk.len()] {
                *p = self.pick(rng);
            }
            for (x, &p) in chunk.iter_mut().zip(&picks) {
                *x = self.resolve(p);
            }
        }
    }

    /// Picks made ahead of their lookups in [`AliasTable::fill`].
    const FILL: usize = 64;
}

/// Alias columns for weights `probs` summing to `total` (Vose's method).
fn vose(probs: &[f64], total: f64) -> Vec<u64> {
    let n = probs.len();
    let mut scaled: Vec<f64> = probs.iter().map(|p| p * n as f64 / total).collect();
    let mut columns: Vec<u64> = (0..n as u64).map(|i| (u32::MAX as u64) << 32 | i).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < 1.0);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        let threshold = (scaled[s] * 4_294_967_296.0).min(u32::MAX as f64) as u64;
        columns[s] = threshold << 32 | l as u64;
        scaled[l] -= 1.0 - scaled[s];
        if scaled[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // What is left is full up to rounding: it keeps its own count.
    columns
}

/// A uniform index in `0..len` (len > 0).
fn uniform_index<R: Rng + ?Sized>(rng: &mut R, len: usize) -> usize {
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

/// A uniform draw in [0, 1) with 53 random bits.
pub(crate) fn unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The probability each count gets from alias columns.
    fn implied(columns: &[u64]) -> Vec<f64> {
        let n = columns.len() as f64;
        let mut p = vec![0.0; columns.len()];
        for (i, &c) in columns.iter().enumerate() {
            let keep = (c >> 32) as f64 / 4_294_967_296.0;
            p[i] += keep / n;
            p[(c as u32) as usize] += (1.0 - keep) / n;
        }
        p
    }

    #[test]
    fn alias_columns_reproduce_their_weights() {
        for weights in [
            vec![0.1, 0.2, 0.3, 0.4],
            vec![5.0],
            vec![1.0, 0.0, 1.0, 0.0, 3.0],
            (1..=1000).map(|i| 1.0 / i as f64).collect(),
        ] {
            let total: f64 = weights.iter().sum();
            let p = implied(&vose(&weights, total));
            for (got, w) in p.iter().zip(&weights) {
                // Thresholds are kept to 2^-32 of a column.
                assert!((got - w / total).abs() < 1e-9, "{got} vs {}", w / total);
            }
        }
    }

    #[test]
    fn a_filled_block_holds_the_draws_one_at_a_time_would_give() {
        let shapes = [
            // Alias table (built by the first draw), then a table-less
            // lognormal, a gamma and a constant.
            DistParams::new(Shape::LogNormal {
                median: 600.0,
                p90: 2500.0,
            })
            .clamped(None, Some(16_000.0)),
            DistParams::new(Shape::LogNormal {
                median: 600.0,
                p90: 2500.0,
            }),
            DistParams::new(Shape::Gamma {
                mean: 300.0,
                std_dev: 200.0,
            }),
            DistParams::new(Shape::Constant { value: 7.0 }),
        ];
        for params in shapes {
            let d = params.to_dist().expect("valid");
            let (mut a, mut b) = (stream(5, 1), stream(5, 1));
            // Odd lengths: whole and partial chunks of picks.
            let mut block = vec![0u32; 150];
            for _ in 0..3 {
                d.fill(&mut a, &mut block);
                let one_at_a_time: Vec<u32> = (0..150).map(|_| d.sample(&mut b)).collect();
                assert_eq!(block, one_at_a_time, "{params:?}");
            }
        }
    }

    #[test]
    fn table_draws_match_direct_lognormal_draws() {
        // The bench's prompt lengths: lognormal, median 600, p90 2500, at most 16,000.
        let d = DistParams::new(Shape::LogNormal {
            median: 600.0,
            p90: 2500.0,
        })
        .clamped(None, Some(16_000.0))
        .to_dist()
        .expect("valid");
        assert!(d.table().is_some(), "clamped lognormals use a table");
        let n = 400_000;
        let mut table_rng = stream(3, 1);
        let mut direct_rng = stream(3, 2);
        let table: Vec<f64> = (0..n).map(|_| d.sample(&mut table_rng) as f64).collect();
        let direct: Vec<f64> = (0..n)
            .map(|_| round(d.raw(&mut direct_rng)).clamp(d.min, d.max))
            .collect();
        // Two samples of 400k: a proportion differs by sd sqrt(2 p (1 - p) / n)
        // (at most 0.0011); allow 5 sd.
        for q in [1.0, 50.0, 300.0, 600.0, 2500.0, 9000.0, 15_999.0] {
            let share = |xs: &[f64]| xs.iter().filter(|&&x| x <= q).count() as f64 / n as f64;
            let (a, b) = (share(&table), share(&direct));
            let sd = (2.0 * b * (1.0 - b) / n as f64).sqrt().max(1e-5);
            assert!((a - b).abs() < 5.0 * sd, "P(N <= {q}): {a} vs {b}");
        }
        // Exact moments against the direct sample's: the mean's sd is
        // std / sqrt(n); allow 5 sd.
        let mean = direct.iter().sum::<f64>() / n as f64;
        let var = direct.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        let (m1, m2) = d.moments();
        assert!(
            (m1 - mean).abs() < 5.0 * (var / n as f64).sqrt(),
            "{m1} vs {mean}"
        );
        assert!(m2 > m1 * m1, "E[X^2] {m2} above the squared mean");
        // Every draw is a whole count within the clamps.
        assert!(table.iter().all(|&x| (1.0..=16_000.0).contains(&x)));
        assert!(
            table.contains(&16_000.0),
            "the upper tail lands on the clamp"
        );
    }

    #[test]
    fn narrow_tables_keep_to_their_clamps() {
        let lognormal = |min, max| {
            DistParams::new(Shape::LogNormal {
                median: 600.0,
                p90: 2500.0,
            })
            .clamped(min, Some(max))
            .to_dist()
            .expect("valid")
        };
        let mut rng = stream(5, 5);
        // One possible count: every draw is it, and so are the moments.
        let single = lognormal(Some(700.0), 700.0);
        assert!((0..1000).all(|_| single.sample(&mut rng) == 700));
        assert_eq!(single.moments(), (700.0, 490_000.0));
        // In the upper tail, [5000, 5003]: the upper clamp takes
        // P(X >= 5002.5) (about 2.9%), the lower one nearly all the rest, and
        // no draw leaves the range.
        let tail = lognormal(Some(5000.0), 5003.0);
        let n = 40_000;
        let draws: Vec<u32> = (0..n).map(|_| tail.sample(&mut rng)).collect();
        assert!(draws.iter().all(|d| (5000..=5003).contains(d)));
        let sigma = (libm::log(2500.0) - libm::log(600.0)) / Z90;
        let z = (libm::log(5002.5) - libm::log(600.0)) / sigma;
        let p = 0.5 * libm::erfc(z / std::f64::consts::SQRT_2);
        let share = draws.iter().filter(|&&d| d == 5003).count() as f64 / n as f64;
        // Binomial share: sd sqrt(p (1 - p) / n), about 0.0008; allow 5 sd.
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        assert!((share - p).abs() < 5.0 * sd, "P(N = 5003) {share} vs {p}");
        assert!(draws.iter().filter(|&&d| d == 5000).count() as f64 > 0.96 * n as f64);
    }

    #[test]
    fn unclamped_lognormals_and_other_shapes_draw_directly() {
        let build = |shape| DistParams::new(shape).to_dist().expect("valid");
        let unclamped = build(Shape::LogNormal {
            median: 600.0,
            p90: 2500.0,
        });
        assert!(unclamped.table().is_none());
        assert!(build(Shape::Exponential { mean: 50.0 }).table().is_none());
    }

    #[test]
    fn scaled_distributions_scale_every_draw_and_their_clamps() {
        let mut check = Checker::new();
        let base = DistParams::new(Shape::LogNormal {
            median: 1000.0,
            p90: 4000.0,
        })
        .clamped(Some(10.0), Some(20_000.0));
        let scaled = base.scaled(1.5);
        assert_eq!(
            scaled,
            DistParams::new(Shape::LogNormal {
                median: 1500.0,
                p90: 6000.0,
            })
            .clamped(Some(15.0), Some(30_000.0))
        );
        // The sample mean scales with the factor (the clamps scale too);
        // 50,000 draws give means within about a percent.
        let (a, b) = (
            base.build(&mut check).unwrap().moments().0,
            scaled.build(&mut check).unwrap().moments().0,
        );
        assert!((b / a - 1.5).abs() < 0.01, "{a} -> {b}");
        assert_eq!(
            DistParams::constant(1.0)
                .scaled(1.4)
                .build(&mut check)
                .unwrap()
                .moments()
                .0,
            1.0,
            "rounding dominates small counts"
        );
    }

    #[test]
    fn smallest_is_the_least_possible_draw() {
        let mut check = Checker::new();
        let mut smallest = |p: DistParams| p.build(&mut check).unwrap().smallest();
        assert_eq!(smallest(DistParams::constant(7.0)), 7);
        assert_eq!(
            smallest(DistParams::new(Shape::Uniform {
                low: 100.0,
                high: 200.0
            })),
            100
        );
        assert_eq!(
            smallest(DistParams::new(Shape::Empirical {
                values: vec![30.0, 12.0, 50.0]
            })),
            12
        );
        assert_eq!(
            smallest(DistParams::new(Shape::LogNormal {
                median: 500.0,
                p90: 900.0
            })),
            1
        );
        assert_eq!(
            smallest(
                DistParams::new(Shape::LogNormal {
                    median: 500.0,
                    p90: 900.0
                })
                .clamped(Some(64.0), None)
            ),
            64
        );
    }

    /// The reason validation gives for `field` of `params`, which must fail.
    fn refused(params: DistParams, field: &str) -> String {
        match params.to_dist() {
            Ok(_) => panic!("{params:?} was accepted"),
            Err(e) => e
                .for_field(field)
                .unwrap_or_else(|| panic!("no message for {field}: {e}"))
                .to_string(),
        }
    }

    #[test]
    fn parameters_the_sampler_cannot_build_are_field_errors_not_the_constant_1() {
        // r05 of the review: gamma with mean 1000 and std_dev 1e-200 drew 1
        // token every time (an infinite shape, silently replaced).
        let reason = refused(
            DistParams::new(Shape::Gamma {
                mean: 1000.0,
                std_dev: 1e-200,
            }),
            "std_dev",
        );
        assert!(reason.contains("finite"), "{reason}");
        // A lognormal whose sigma overflows.
        let reason = refused(
            DistParams::new(Shape::LogNormalMoments {
                mean: 1.0,
                std_dev: 1e300,
            }),
            "std_dev",
        );
        assert!(!reason.is_empty());
        // What passes builds a sampler whose draws follow the parameters.
        let dist = DistParams::new(Shape::Gamma {
            mean: 1000.0,
            std_dev: 1.0,
        })
        .to_dist()
        .unwrap();
        let mut rng = crate::rng::stream(1, 0);
        let draws: Vec<u32> = (0..100).map(|_| dist.sample(&mut rng)).collect();
        assert!(draws.iter().all(|d| (990..=1010).contains(d)), "{draws:?}");
    }

    #[test]
    fn weights_that_overflow_say_so() {
        // r08: weights [1e308, 1e308] were "must not all be zero".
        let reason = refused(
            DistParams::new(Shape::Histogram {
                edges: vec![1.0, 1000.0, 2000.0],
                weights: vec![1e308, 1e308],
            }),
            "weights",
        );
        assert!(reason.contains("finite"), "{reason}");
        let reason = refused(
            DistParams::new(Shape::Histogram {
                edges: vec![1.0, 2.0],
                weights: vec![0.0],
            }),
            "weights",
        );
        assert!(reason.contains("zero"), "{reason}");
    }

    #[test]
    fn counts_above_the_largest_are_refused_not_clamped() {
        // r09: a constant 2e8-token prompt ran as 1e8 without a word.
        for (params, field) in [
            (DistParams::constant(2e8), "value"),
            (
                DistParams::new(Shape::Uniform {
                    low: 1.0,
                    high: 2e8,
                }),
                "high",
            ),
            (DistParams::new(Shape::Exponential { mean: 2e8 }), "mean"),
            (
                DistParams::new(Shape::LogNormal {
                    median: 2e8,
                    p90: 3e8,
                }),
                "median",
            ),
            (
                DistParams::new(Shape::Empirical {
                    values: vec![5.0, 2e8],
                }),
                "values[1]",
            ),
            (DistParams::constant(5.0).clamped(None, Some(2e8)), "max"),
        ] {
            let reason = refused(params, field);
            assert!(reason.contains("at most 100000000"), "{field}: {reason}");
        }
        assert!(DistParams::constant(1e8).to_dist().is_ok());
    }

    #[test]
    fn clamps_that_leave_no_whole_count_are_errors_not_panics() {
        let below_one = DistParams::constant(5.0)
            .clamped(None, Some(0.5))
            .to_dist()
            .unwrap_err();
        assert!(
            below_one.for_field("max").unwrap().contains("at least 1"),
            "{below_one}"
        );
        let inverted = DistParams::constant(5.0)
            .clamped(Some(10.2), Some(10.8))
            .to_dist()
            .unwrap_err();
        assert!(
            inverted.for_field("max").unwrap().contains("at least 11"),
            "{inverted}"
        );
        let huge = DistParams::constant(5.0)
            .clamped(Some(1e200), None)
            .to_dist()
            .unwrap_err();
        assert!(
            huge.for_field("min").unwrap().contains("at most 100000000"),
            "{huge}"
        );
        let fine = DistParams::constant(5.0)
            .clamped(Some(10.2), Some(11.0))
            .to_dist()
            .unwrap();
        assert_eq!(fine.sample(&mut stream(1, 1)), 11);
    }

    #[test]
    fn moments_are_cached_and_shared_by_clones() {
        let mut check = Checker::new();
        let d = DistParams::new(Shape::Gamma {
            mean: 100.0,
            std_dev: 50.0,
        })
        .build(&mut check)
        .unwrap();
        let first = d.moments();
        let copy = d.clone();
        assert_eq!(copy.moments(), first);
        assert!(
            copy.moments.get().is_some(),
            "the clone kept the computed moments"
        );
    }
}

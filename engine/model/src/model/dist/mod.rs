//! Validated distributions: [`Dist`] is the sampler built from a
//! [`DistParams`](crate::params::DistParams) (`DistParams::build`, in `build.rs`,
//! checks the parameters once). Samples of counts are rounded to the
//! nearest integer and clamped to `\[max(min, 1), max\]`.
//!
//! - `build.rs`: the checks of every shape's parameters, and the sampler
//!   built from them;
//! - `alias.rs`: the alias table that clamped lognormals draw from;
//! - `joint.rs`: joint prompt and output lengths (correlated log-normals, a
//!   table of pairs);
//! - `numeric.rs`: rounding and uniform draws without library calls.

use std::sync::{Arc, OnceLock};

use rand::Rng;
use rand::distr::Distribution;
use rand::distr::Uniform;
use rand::distr::weighted::WeightedIndex;
use serde::Serialize;

use crate::rng::stream;
use crate::samplers::{Exp, Gamma, Geometric, LogNormal};

mod alias;
mod build;
mod joint;
#[cfg(test)]
mod joint_tests;
mod numeric;

use alias::AliasTable;
pub use joint::{CorrelatedLogNormals, JointLengths, PairTable, preview_lengths};
use numeric::uniform_index;
pub use numeric::unit;
pub use numeric::{ceil_u64, round};

/// Largest count a distribution may produce (tokens or batch size).
pub const MAX_COUNT: u32 = 100_000_000;

/// The raw draw, before rounding and clamping: one variant per
/// [`Shape`](crate::params::Shape), with the parameters that the moments, the alias
/// table and [`Dist::smallest`] read beside the sampler.
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
    /// table, built on first use where that is possible ([`AliasTable::of`]),
    /// shared by clones and by equal distributions on the same thread.
    table: OnceLock<Option<Arc<AliasTable>>>,
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
        // NaN cannot arise from validated parameters (were it to, `clamp`
        // would pass it through and the cast would make it 0).
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
        self.table
            .get_or_init(|| AliasTable::shared(self))
            .as_deref()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Checker;
    use crate::params::{DistParams, Shape};

    #[test]
    fn a_filled_block_holds_the_draws_one_at_a_time_would_give() {
        let shapes = [
            // Alias table (built by the first draw), then a table-less
            // lognormal, a gamma and a constant.
            DistParams::log_normal(600.0, 2500.0).clamped(None, Some(16_000.0)),
            DistParams::log_normal(600.0, 2500.0),
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
    fn scaled_distributions_scale_every_draw_and_their_clamps() {
        let mut check = Checker::new();
        let base = DistParams::log_normal(1000.0, 4000.0).clamped(Some(10.0), Some(20_000.0));
        let scaled = base.scaled(1.5);
        assert_eq!(
            scaled,
            DistParams::log_normal(1500.0, 6000.0).clamped(Some(15.0), Some(30_000.0))
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
        assert_eq!(smallest(DistParams::log_normal(500.0, 900.0)), 1);
        assert_eq!(
            smallest(DistParams::log_normal(500.0, 900.0).clamped(Some(64.0), None)),
            64
        );
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

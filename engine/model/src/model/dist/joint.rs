//! Joint prompt and output lengths: [`JointLengths`], the validated sampler
//! of a class's [`LengthsParams`], which draws both lengths of a request
//! together instead of each from its own distribution.
//!
//! - Correlated log-normals (a Gaussian copula): two standard normals
//!   `Z₁` and `Z₂ = ρ·Z₁ + √(1 − ρ²)·Z′` with `Z′` independent, so that
//!   `corr(Z₁, Z₂) = ρ`; each length is its class distribution's
//!   `exp(μ + σ·Z)`, rounded and clamped exactly as the distribution alone
//!   would be, so each length keeps its distribution (and its moments) and
//!   only their dependence changes.
//! - A table of pairs: one pair per draw, uniformly or in proportion to the
//!   weights (cumulative weights, a binary search).

use rand::Rng;
use rand::distr::Distribution;
use rand::distr::weighted::WeightedIndex;

use super::build::{at_most_max_count, weights_can_be_drawn};
use super::numeric::uniform_index;
use super::{Dist, Sampler, round};
use crate::error::{Checker, ScenarioError, show};
use crate::params::{ClassParams, LengthsParams};
use crate::rng::stream;
use crate::samplers::StandardNormal;

/// A validated joint model of (prompt, output) lengths.
#[derive(Clone, Debug)]
pub enum JointLengths {
    Correlated(CorrelatedLogNormals),
    Pairs(PairTable),
}

/// Two log-normal lengths whose underlying normals have correlation `rho`.
#[derive(Clone, Debug)]
pub struct CorrelatedLogNormals {
    input: LogNormalCount,
    output: LogNormalCount,
    rho: f64,
    /// √(1 − ρ²), the weight of the second normal's own part.
    rho_complement: f64,
}

/// A log-normal count: `exp(mu + sigma·z)` rounded and clamped to
/// `\[min, max\]`, the parameters of the class's own [`Dist`].
#[derive(Clone, Copy, Debug)]
struct LogNormalCount {
    mu: f64,
    sigma: f64,
    min: f64,
    max: f64,
}

/// A table of (prompt, output) pairs with their exact means.
#[derive(Clone, Debug)]
pub struct PairTable {
    pairs: Vec<(u32, u32)>,
    /// Cumulative weights; `None` when every pair is as likely.
    index: Option<WeightedIndex<f64>>,
    means: (f64, f64),
}

impl JointLengths {
    /// One request's (prompt, output) lengths \[tokens\].
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> (u32, u32) {
        match self {
            JointLengths::Correlated(c) => c.sample(rng),
            JointLengths::Pairs(t) => t.sample(rng),
        }
    }
}

impl CorrelatedLogNormals {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> (u32, u32) {
        let z1 = StandardNormal.sample(rng);
        let z2 = self.rho * z1 + self.rho_complement * StandardNormal.sample(rng);
        (self.input.count(z1), self.output.count(z2))
    }
}

impl LogNormalCount {
    /// The count at standard normal `z`: what the lognormal [`Dist`] draws
    /// from the same `z` (its direct draw; its alias table gives the same
    /// distribution).
    fn count(&self, z: f64) -> u32 {
        round(libm::exp(self.mu + self.sigma * z)).clamp(self.min, self.max) as u32
    }

    /// The parameters of `dist` if it is a lognormal.
    fn of(dist: &Dist) -> Option<LogNormalCount> {
        match dist.sampler {
            Sampler::LogNormal { mu, sigma, .. } => Some(LogNormalCount {
                mu,
                sigma,
                min: dist.min,
                max: dist.max,
            }),
            _ => None,
        }
    }
}

impl PairTable {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> (u32, u32) {
        let k = match &self.index {
            Some(index) => index.sample(rng),
            None => uniform_index(rng, self.pairs.len()),
        };
        self.pairs[k]
    }

    /// Mean prompt and output lengths \[tokens\], exact (weighted).
    pub fn means(&self) -> (f64, f64) {
        self.means
    }

    /// The shortest prompt and the shortest output of the table (not
    /// necessarily one pair's).
    pub fn smallest(&self) -> (u32, u32) {
        let input = self.pairs.iter().map(|p| p.0).min().unwrap_or(1);
        let output = self.pairs.iter().map(|p| p.1).min().unwrap_or(1);
        (input, output)
    }
}

impl LengthsParams {
    /// Checks the joint model against the class's distributions `input` and
    /// `output` (a correlation needs both log-normal) and builds it.
    /// Problems go to `check` under the current path (the class's
    /// `lengths`); `None` if there were any.
    pub fn build(&self, input: &Dist, output: &Dist, check: &mut Checker) -> Option<JointLengths> {
        match self {
            LengthsParams::Correlated { rho } => {
                build_correlated(*rho, input, output, check).map(JointLengths::Correlated)
            }
            LengthsParams::Pairs { pairs, weights } => {
                build_table(pairs, weights.as_deref(), check).map(JointLengths::Pairs)
            }
        }
    }
}

fn build_correlated(
    rho: f64,
    input: &Dist,
    output: &Dist,
    check: &mut Checker,
) -> Option<CorrelatedLogNormals> {
    let mut ok = true;
    if !(rho.is_finite() && rho > -1.0 && rho < 1.0) {
        check.fail(
            "rho",
            format!(
                "must be between -1 and 1 (both excluded), got {}",
                show(rho)
            ),
        );
        ok = false;
    }
    let marginals = (LogNormalCount::of(input), LogNormalCount::of(output));
    for (name, marginal) in [
        ("input_tokens", marginals.0),
        ("output_tokens", marginals.1),
    ] {
        if marginal.is_none() {
            check.fail(
                "kind",
                format!("correlated lengths need log-normal {name} (log_normal or log_normal_moments); choose one, or a table of pairs"),
            );
            ok = false;
        }
    }
    match (ok, marginals) {
        (true, (Some(input), Some(output))) => Some(CorrelatedLogNormals {
            input,
            output,
            rho,
            rho_complement: libm::sqrt(1.0 - rho * rho),
        }),
        _ => None,
    }
}

fn build_table(
    pairs: &[[f64; 2]],
    weights: Option<&[f64]>,
    check: &mut Checker,
) -> Option<PairTable> {
    let before = check.has_errors();
    if pairs.is_empty() {
        check.fail("pairs", "must hold at least one (input, output) pair");
    }
    for (k, pair) in pairs.iter().enumerate() {
        for (j, value) in pair.iter().enumerate() {
            let field = format!("pairs[{k}][{j}]");
            if check.positive(&field, *value) {
                at_most_max_count(check, &field, *value);
            }
        }
    }
    if let Some(weights) = weights {
        check_weights(weights, pairs.len(), check);
    }
    if check.has_errors() != before {
        return None;
    }
    let counts: Vec<(u32, u32)> = pairs.iter().map(|[i, o]| (count(*i), count(*o))).collect();
    let (index, means) = match weights {
        Some(w) => match WeightedIndex::new(w.iter().copied()) {
            Ok(index) => (Some(index), weighted_means(&counts, w)),
            // The checks above leave nothing it refuses; were they to,
            // say so rather than draw uniformly.
            Err(error) => {
                check.fail("weights", format!("cannot be sampled ({error})"));
                return None;
            }
        },
        None => (None, weighted_means(&counts, &vec![1.0; counts.len()])),
    };
    Some(PairTable {
        pairs: counts,
        index,
        means,
    })
}

/// One weight per pair, each zero or more, not all zero, with a finite sum.
fn check_weights(weights: &[f64], pairs: usize, check: &mut Checker) {
    if weights.len() != pairs {
        check.fail(
            "weights",
            format!(
                "must hold one weight per pair ({pairs}), got {}",
                weights.len()
            ),
        );
        return;
    }
    weights_can_be_drawn(check, weights);
}

/// A validated length as a whole count (at least 1, like every count).
fn count(value: f64) -> u32 {
    round(value).max(1.0) as u32
}

fn weighted_means(pairs: &[(u32, u32)], weights: &[f64]) -> (f64, f64) {
    let total: f64 = weights.iter().sum();
    let (input, output) = pairs
        .iter()
        .zip(weights)
        .fold((0.0, 0.0), |(a, b), (&(i, o), w)| {
            (a + w * i as f64, b + w * o as f64)
        });
    (input / total, output / total)
}

/// `n` (prompt, output) draws of `class`'s lengths with a fixed seed, for
/// previews: from its joint model when it has one, otherwise each length
/// from its own distribution. Errors name fields relative to the class
/// (`input_tokens.p90`, `lengths.rho`).
pub fn preview_lengths(class: &ClassParams, n: usize) -> Result<Vec<(u32, u32)>, ScenarioError> {
    let mut check = Checker::new();
    let input = check.at("input_tokens", |c| class.input_tokens.build(c));
    let output = check.at("output_tokens", |c| class.output_tokens.build(c));
    let (Some(input), Some(output)) = (input, output) else {
        check.finish()?;
        return Err(ScenarioError::single("", "invalid distribution"));
    };
    let joint = match &class.lengths {
        Some(lengths) => check.at("lengths", |c| lengths.build(&input, &output, c)),
        None => None,
    };
    check.finish()?;
    let mut rngs = [
        stream(0x5eed_9a12, 0),
        stream(0x5eed_9a12, 1),
        stream(0x5eed_9a12, 2),
    ];
    let [inputs, outputs, pairs] = &mut rngs;
    Ok((0..n)
        .map(|_| match &joint {
            Some(joint) => joint.sample(pairs),
            None => (input.sample(inputs), output.sample(outputs)),
        })
        .collect())
}

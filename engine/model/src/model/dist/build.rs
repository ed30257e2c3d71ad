//! Validation of a [`DistParams`] into a [`Dist`]: every shape's parameters
//! checked once, with field errors in the scenario's terms, and the sampler
//! built from exactly what was checked.

use std::sync::OnceLock;

use rand::distr::Uniform;
use rand::distr::weighted::WeightedIndex;

use super::{Dist, MAX_COUNT, Sampler};
use crate::error::{Checker, ScenarioError, show};
use crate::params::{DistParams, Shape};
use crate::samplers::{Exp, Gamma, Geometric, LogNormal, SamplerError};

/// The standard normal quantile at 0.9, used to turn (median, p90) into a
/// lognormal sigma.
pub(super) const Z90: f64 = 1.281_551_565_544_600_4;

/// Fails `field` unless `value` is at most [`MAX_COUNT`] (a parameter past
/// the largest count would be clamped to it without a word).
pub(super) fn at_most_max_count(check: &mut Checker, field: &str, value: f64) -> bool {
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

/// Checks `weights` (of a histogram's bins, of a table's pairs): each zero
/// or more, not all zero, with a finite sum.
pub(super) fn weights_can_be_drawn(check: &mut Checker, weights: &[f64]) -> bool {
    let mut ok = true;
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
    ok
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
    /// Checks the parameters and builds the sampler on its own (e.g. for a
    /// preview); field paths in errors are relative to the distribution
    /// ("p90", "values\[2\]").
    pub fn to_dist(&self) -> Result<Dist, ScenarioError> {
        let mut check = Checker::new();
        let dist = self.build(&mut check);
        check.finish()?;
        dist.ok_or_else(|| ScenarioError::single("", "invalid distribution"))
    }

    /// Checks the parameters and builds the sampler. Problems are reported to
    /// `check` under the current path; `None` if there were any.
    pub fn build(&self, check: &mut Checker) -> Option<Dist> {
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
                ok &= weights_can_be_drawn(check, weights);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

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
            (DistParams::log_normal(2e8, 3e8), "median"),
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
        let five = DistParams::constant(5.0);
        for (min, max, field, expected) in [
            (None, Some(0.5), "max", "at least 1"),
            (Some(10.2), Some(10.8), "max", "at least 11"),
            (Some(1e200), None, "min", "at most 100000000"),
        ] {
            let reason = refused(five.clone().clamped(min, max), field);
            assert!(reason.contains(expected), "{field}: {reason}");
        }
        let fine = five.clamped(Some(10.2), Some(11.0)).to_dist().unwrap();
        assert_eq!(fine.sample(&mut stream(1, 1)), 11);
    }
}

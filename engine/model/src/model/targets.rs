//! The plan's targets as the planner reads them: validated, each naming its
//! class by index (or every class), what it measures and its bound, with the
//! default target applied when the plan lists none. Built once by
//! `Scenario::try_from`, so no consumer matches `TargetParams`' variants or
//! re-applies `TargetParams::effective`.

use crate::params::ScenarioParams;
use crate::params::plan::{TargetMetric, TargetParams};

/// One validated target.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The class it applies to (an index into the scenario's classes), or
    /// `None` for every class, each checked on its own.
    pub class: Option<usize>,
    pub metric: TargetMetric,
    /// The quantile a percentile target bounds (0.99 for p99); `None` for a
    /// miss-probability target.
    pub percentile: Option<f64>,
    /// The bound: the largest miss probability for a miss target, in
    /// seconds for the others.
    pub bound: f64,
}

impl Target {
    /// The targets of `params`' plan, in order (the default when none is
    /// listed). `params` passed validation: every class named exists.
    pub fn all(params: &ScenarioParams) -> Vec<Target> {
        TargetParams::effective(&params.plan.targets)
            .iter()
            .map(|target| Target {
                class: target
                    .class()
                    .and_then(|name| params.classes.iter().position(|c| c.name == name)),
                metric: target.metric(),
                percentile: target.percentile_bound().map(|(p, _)| p),
                bound: match target {
                    TargetParams::MissProbability { epsilon, .. } => *epsilon,
                    _ => target.percentile_bound().map_or(0.0, |(_, b)| b),
                },
            })
            .collect()
    }

    /// The classes it checks: its own, or every one of `classes`.
    pub fn classes(&self, classes: usize) -> std::ops::Range<usize> {
        match self.class {
            Some(k) => k..k + 1,
            None => 0..classes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::plan::DEFAULT_EPSILON;

    #[test]
    fn no_listed_target_is_the_default_miss_target_over_every_class() {
        let params = ScenarioParams::overnight_batch();
        let mut plain = params.clone();
        plain.plan.targets.clear();
        assert_eq!(
            Target::all(&plain),
            [Target {
                class: None,
                metric: TargetMetric::MissProbability,
                percentile: None,
                bound: DEFAULT_EPSILON,
            }]
        );
        assert_eq!(Target::all(&plain)[0].classes(3), 0..3);
    }

    #[test]
    fn a_listed_target_names_its_class_by_index_with_its_percentile_and_bound() {
        let mut params = ScenarioParams::overnight_batch();
        let second = params.classes[1].name.clone();
        params.plan.targets = vec![
            TargetParams::TtftPercentile {
                class: Some(second),
                percentile: 0.9,
                bound_s: 2.5,
            },
            TargetParams::MissProbability {
                class: None,
                epsilon: 0.02,
            },
        ];
        let targets = Target::all(&params);
        assert_eq!(
            targets[0],
            Target {
                class: Some(1),
                metric: TargetMetric::Ttft,
                percentile: Some(0.9),
                bound: 2.5,
            }
        );
        assert_eq!(targets[0].classes(5), 1..2);
        assert_eq!(targets[1].bound, 0.02);
        assert_eq!(targets[1].percentile, None);
    }
}

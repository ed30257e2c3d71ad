//! The two-stage queue estimate in the planner: where a capacity search
//! starts, and the comparison shown beside the simulated result.

use crate::evaluate::{CheckMetric, RunAggregates, mean_ci};
use crate::model::analytic::{QueueModel, load_estimate};
use crate::report::Quantiles;
use crate::result::{AnalyticComparison, ComparisonRow};
use crate::runner::Runner;
use crate::search::{self, Probe};

/// The smallest fleet the two-stage estimate says meets the targets (miss
/// probabilities, sojourn percentiles and the busy fraction), a starting
/// point for the simulated search of `case`; `None` when it finds none.
/// Computed once per case (with its twin: the estimate ignores the
/// discipline).
pub(super) fn analytic_guess(runner: &mut Runner, case: usize) -> Option<u32> {
    let case = runner.state.estimates_of(case);
    if let Some(guess) = runner.state.analytic_guesses.get(&case) {
        return *guess;
    }
    let guess = compute_guess(runner, case);
    runner.state.analytic_guesses.insert(case, guess);
    guess
}

fn compute_guess(runner: &mut Runner, case: usize) -> Option<u32> {
    let plan = &runner.base.params().plan;
    let (max, max_busy) = (plan.max_replicas, plan.max_busy_fraction);
    let checks = &runner.checks;
    let c = &mut runner.state.cases[case];
    let model = c.queue.get_or_insert_with(|| QueueModel::new(&c.scenario));
    let mut probe = |n: u32| -> Result<Probe, ()> {
        let solution = model.solve(n);
        let mut ratio = solution.accelerator_rho / max_busy;
        if !solution.stable {
            ratio = f64::INFINITY;
        }
        for check in checks {
            let r = match (check.metric, check.class) {
                (CheckMetric::MissProbability, Some(k)) => {
                    let deadline = c.scenario.classes()[k].deadline_s;
                    model.sojourn_tail(&solution, k, deadline) / check.threshold
                }
                (CheckMetric::Sojourn, Some(k)) => {
                    model.sojourn_tail(&solution, k, check.threshold) / (1.0 - check.percentile)
                }
                _ => 0.0,
            };
            ratio = ratio.max(r);
        }
        Ok(Probe {
            meets: ratio <= 1.0,
            ratio,
        })
    };
    // Start from the stability bound: below it the estimate is unstable.
    let rate = c.scenario.mean_request_rate_per_s();
    let work_s = load_estimate(&c.scenario).work_per_request_s;
    let stable_from = (rate * work_s).ceil().max(1.0) as u32;
    search::smallest_meeting(stable_from.min(max), max, None, &mut probe).map_or(None, |o| o.found)
}

/// The two-stage estimate of `case` on `replicas` beside the mean of the
/// replications run there: P(miss) and sojourn figures of each class.
pub(super) fn comparison(runner: &mut Runner, case: usize, replicas: u32) -> AnalyticComparison {
    let shared = runner.state.estimates_of(case);
    let c = &mut runner.state.cases[shared];
    let estimate = match c.estimates.get(&replicas) {
        Some(estimate) => estimate.clone(),
        None => {
            let model = c.queue.get_or_insert_with(|| QueueModel::new(&c.scenario));
            let estimate = model.estimate(replicas);
            c.estimates.insert(replicas, estimate.clone());
            estimate
        }
    };
    let runs = runner.runs(case, replicas, runner.replications());
    let mut rows = Vec::new();
    for (k, class) in estimate.classes.iter().enumerate() {
        let simulated = |f: &dyn Fn(&RunAggregates) -> f64| -> f64 {
            mean_ci(&runs.iter().map(|r| f(r)).collect::<Vec<_>>()).0
        };
        let sojourn = |of: fn(&Quantiles) -> f64| simulated(&|r| of(&r.classes[k].sojourn));
        for (metric, analytic, simulated) in [
            ("P(miss)", class.p_miss, simulated(&|r| r.classes[k].p_miss)),
            (
                "mean sojourn [s]",
                class.mean_sojourn_s,
                sojourn(|q| q.mean),
            ),
            ("p50 sojourn [s]", class.sojourn_p50_s, sojourn(|q| q.p50)),
            ("p90 sojourn [s]", class.sojourn_p90_s, sojourn(|q| q.p90)),
            ("p99 sojourn [s]", class.sojourn_p99_s, sojourn(|q| q.p99)),
        ] {
            rows.push(ComparisonRow::new(&class.name, metric, analytic, simulated));
        }
    }
    AnalyticComparison {
        replicas,
        estimate,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::PlanOptions;
    use crate::model::analytic::QueueModel;
    use crate::model::scenario::Scenario;
    use crate::params::ScenarioParams;
    use crate::runner::{PlanState, Runner};

    /// The four disciplines' searches of the default scenario share one
    /// two-stage estimate, sampled once, and one starting guess; each
    /// discipline's own estimate would be the same.
    #[test]
    #[ignore = "slow: the two-stage estimate of every discipline; scripts/test runs it"]
    fn the_disciplines_share_one_estimate() {
        let scenario = Scenario::try_from(ScenarioParams::overnight_batch()).unwrap();
        let options = PlanOptions::default();
        let mut state = PlanState::default();
        let mut runner = Runner::new(&scenario, &options, &mut state);
        // The first pass asks for every discipline's first runs.
        assert!(crate::run_plan(&mut runner).is_err());
        let cases = &state.cases;
        let disciplines: BTreeSet<String> = cases
            .iter()
            .map(|c| format!("{:?}", c.scenario.params().engine.discipline))
            .collect();
        assert_eq!(disciplines.len(), 4, "{disciplines:?}");
        assert_eq!(cases.iter().filter(|c| c.queue.is_some()).count(), 1);
        assert_eq!(state.analytic_guesses.len(), 1);
        let shared = cases[0].queue.as_ref().unwrap().estimate(2);
        for case in &cases[1..] {
            assert_eq!(case.twin, Some(0));
            assert_eq!(QueueModel::new(&case.scenario).estimate(2), shared);
        }
    }
}

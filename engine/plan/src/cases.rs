//! Expected, low and high demand, read as a finance partner reads them:
//! each case re-planned (its own cheapest configuration and fleet, from its
//! own exploration of the whole space), beside what the plan's fleet does
//! under it, and the fleet that covers high demand with what covering it
//! costs.

use crate::cost::FleetCost;
use crate::evaluate::{RunAggregates, mean_ci, pooled_exact_upper, upper95_bounds};
use crate::explore::Exploration;
use crate::params::plan::{Multipliers, PlanParams};
use crate::result::{ClassIntervals, Interval};
use crate::result::{Cover, Recommendation, ScenarioResult, SearchResult};
use crate::runner::{Halt, Runner};

/// A case: the plan section's name for it, what it is, its multipliers.
#[derive(Clone, Copy, Debug)]
pub(super) struct Named {
    pub name: &'static str,
    pub label: &'static str,
    pub multipliers: Multipliers,
}

impl Named {
    pub fn expected() -> Named {
        Named {
            name: "base",
            label: "expected demand",
            multipliers: Multipliers::BASE,
        }
    }

    pub fn low(plan: &PlanParams) -> Named {
        Named {
            name: "best",
            label: "low demand",
            multipliers: plan.best,
        }
    }

    pub fn high(plan: &PlanParams) -> Named {
        Named {
            name: "worst",
            label: "high demand",
            multipliers: plan.worst,
        }
    }
}

/// `case` (of the chosen configuration) on the plan's fleet of `steady`
/// replicas, beside `search`, the case's own plan.
pub(super) fn at_plan_fleet(
    runner: &mut Runner,
    named: Named,
    case: usize,
    search: SearchResult,
    steady: u32,
) -> Result<ScenarioResult, Halt> {
    runner.phase = format!("{} on the planned fleet", named.label);
    let evaluation = runner.decide(case, steady)?;
    let replications = evaluation.replications;
    Ok(ScenarioResult {
        name: named.name.to_string(),
        label: named.label.to_string(),
        multipliers: named.multipliers,
        search,
        at_plan_fleet: evaluation,
        classes_at_plan_fleet: runner.class_intervals(case, steady, replications),
        cost_at_plan_fleet: runner.cost_summary(case, steady, replications),
    })
}

/// A demand case re-planned by `exploration`, and the plan's fleet (the
/// chosen configuration on `steady` replicas) under it.
pub(super) fn replanned(
    runner: &mut Runner,
    named: Named,
    exploration: &Exploration,
    chosen: usize,
    steady: u32,
) -> Result<ScenarioResult, Halt> {
    let own = exploration.headline.clone();
    let case = runner.case(chosen, named.multipliers, named.label)?;
    at_plan_fleet(runner, named, case, own, steady)
}

/// The fleet the high-demand case's own plan needs, at base prices, and
/// what it costs beyond the plan (none when high demand has no plan).
pub(super) fn cover(
    runner: &mut Runner,
    high: &Exploration,
    plan: &Recommendation,
) -> Result<Option<Cover>, Halt> {
    let (Some(config), Some(search)) = (high.best_config(), high.best_search()) else {
        return Ok(None);
    };
    let Some(n) = search.found else {
        return Ok(None);
    };
    let reserve = runner.reserve_replicas();
    let case = runner.case(config, Multipliers::BASE, "expected demand")?;
    let fleet = FleetCost::new(&runner.basis(case), n, reserve, 1.0);
    let planned = &plan.budget.fleet;
    Ok(Some(Cover {
        case: "high demand".to_string(),
        configuration: runner.configs[config].label.clone(),
        steady_replicas: n,
        total_replicas: n + reserve,
        total_gpus: fleet.gpus,
        usd_per_month: fleet.usd_per_month,
        extra_usd_per_month: fleet
            .usd_per_month
            .zip(planned.usd_per_month)
            .map(|(a, b)| a - b),
        extra_gpus: fleet.gpus as i64 - planned.gpus as i64,
    }))
}

impl Runner<'_> {
    /// Each class's P(miss) and percentiles over replications 0..count of
    /// `case` on `replicas` (which must have run). A percentile of a class
    /// without requests counts as no delay. P(miss)'s interval is the one a
    /// miss target is decided on: its upper end at least the exact bound of
    /// the misses pooled over the replications (no miss is not P(miss) 0).
    pub fn class_intervals(&self, case: usize, replicas: u32, count: u32) -> Vec<ClassIntervals> {
        let runs = self.runs(case, replicas, count);
        let interval = |f: &dyn Fn(&RunAggregates) -> f64| {
            let (mean, ci95) = mean_ci(&runs.iter().map(|r| f(r)).collect::<Vec<_>>());
            Interval { mean, ci95 }
        };
        let p_miss = |k: usize| {
            let Interval { mean, ci95 } = interval(&|r| r.classes[k].p_miss);
            let exact = pooled_exact_upper(&runs, k);
            Interval {
                mean,
                ci95: (!mean.is_nan()).then(|| upper95_bounds(mean, ci95, Some(exact))),
            }
        };
        self.base
            .params()
            .classes
            .iter()
            .enumerate()
            .map(|(k, class)| ClassIntervals {
                class: class.name.clone(),
                p_miss: p_miss(k),
                sojourn_p50_s: interval(&|r| no_data_is_zero(r.classes[k].sojourn.p50)),
                sojourn_p99_s: interval(&|r| no_data_is_zero(r.classes[k].sojourn.p99)),
                ttft_p99_s: interval(&|r| no_data_is_zero(r.classes[k].ttft.p99)),
            })
            .collect()
    }
}

/// A percentile of a class without requests is NaN in a report: no delay.
fn no_data_is_zero(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x }
}

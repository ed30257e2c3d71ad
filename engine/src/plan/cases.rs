//! Expected, low and high demand, read as a finance partner reads them:
//! each case re-planned (its own cheapest configuration and fleet, from its
//! own exploration of the whole space), beside what the plan's fleet does
//! under it, and the fleet that covers high demand with what covering it
//! costs.

use crate::params::plan::{Multipliers, PlanParams};
use crate::plan::cost::FleetCost;
use crate::plan::explore::Exploration;
use crate::plan::result::{Cover, Recommendation, ScenarioResult, SearchResult};
use crate::plan::runner::{Halt, Runner};

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

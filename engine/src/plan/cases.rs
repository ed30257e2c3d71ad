//! The base, best and worst cases: the fleet each needs (its own capacity
//! search) and how the planned fleet fares in it.

use crate::params::plan::Multipliers;
use crate::plan::result::{ScenarioResult, SearchResult};
use crate::plan::runner::{Halt, Runner};
use crate::plan::search::capacity_search;

/// The base case on the planned fleet of `steady` replicas; its search is
/// the chosen candidate's.
pub(super) fn base(
    runner: &mut Runner,
    base_case: usize,
    search: SearchResult,
    steady: u32,
) -> Result<ScenarioResult, Halt> {
    let base = Multipliers::BASE;
    at_plan_fleet(runner, ("base", base), base_case, search, steady)
}

/// The best and worst cases of `candidate`: each one's capacity search, then
/// the planned fleet of `steady` replicas under it.
pub(super) fn best_and_worst(
    runner: &mut Runner,
    candidate: usize,
    steady: u32,
) -> Result<Vec<ScenarioResult>, Halt> {
    let plan = &runner.base.params().plan;
    let mut out = Vec::new();
    for (name, m) in [("best", plan.best), ("worst", plan.worst)] {
        let case = runner.case(candidate, m, name)?;
        let search = capacity_search(runner, case)?;
        runner.phase = format!("{name} case on the planned fleet");
        out.push(at_plan_fleet(runner, (name, m), case, search, steady)?);
    }
    Ok(out)
}

/// `case` on the planned fleet, beside its own search, under the name and
/// multipliers it was asked for by.
fn at_plan_fleet(
    runner: &mut Runner,
    (name, multipliers): (&str, Multipliers),
    case: usize,
    search: SearchResult,
    steady: u32,
) -> Result<ScenarioResult, Halt> {
    let replications = runner.replications();
    Ok(ScenarioResult {
        name: name.to_string(),
        multipliers,
        search,
        at_plan_fleet: runner.evaluate(case, steady, replications)?,
        classes_at_plan_fleet: runner.class_intervals(case, steady, replications),
        cost_at_plan_fleet: runner.cost_summary(case, steady, replications),
    })
}

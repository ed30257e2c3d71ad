//! The configured fleet judged like every other fleet: the scenario as it
//! stands (its own hardware with every setting as configured, on its own
//! `cluster.replicas`) decided by sequential replications under the
//! decision rule, so that the verdict a reader sees first has bounds and
//! follows the same rule as the plan's. Its runs share the cache with the
//! capacity search, which has often decided that fleet already.

use crate::params::ScenarioParams;
use crate::params::plan::{Multipliers, PlanParams};
use crate::result::ConfiguredFleet;
use crate::runner::{Halt, Runner};

/// The configured fleet decided, or why the plan does not judge it: the
/// scenario's own hardware (with its parallelism and step-time model) is
/// not among the plan's candidates, or `plan.search` leaves out its own
/// settings, so no configuration of the space is the scenario as it
/// stands; or a target no fleet can meet rules it out
/// without a run, as it rules out every fleet.
pub(super) fn configured_fleet(
    runner: &mut Runner,
) -> Result<Result<ConfiguredFleet, String>, Halt> {
    let Some(config) = own_configuration(runner) else {
        let own_hardware = own_candidate(runner).is_some();
        return Ok(Err(if own_hardware {
            "the plan's search leaves out its own engine or cluster settings"
        } else {
            "its hardware is not among the plan's candidates"
        }
        .to_string()));
    };
    let case = runner.case(config, Multipliers::BASE, "configured fleet")?;
    if runner.unreachable(case).is_some() {
        return Ok(Err(
            "a target no fleet of it can meet rules it out without a run".to_string(),
        ));
    }
    runner.phase = "the configured fleet".to_string();
    let replicas = runner.base.params().cluster.replicas;
    let evaluation = runner.decide(case, replicas)?;
    let cost = runner.cost_summary(case, replicas, evaluation.replications);
    Ok(Ok(ConfiguredFleet {
        configuration: runner.configs[config].label.clone(),
        replicas,
        evaluation,
        cost,
    }))
}

/// The configuration that is the scenario itself: its own settings on a
/// candidate whose parameters are the scenario's own.
fn own_configuration(runner: &Runner) -> Option<usize> {
    let candidate = own_candidate(runner)?;
    runner
        .configs
        .iter()
        .position(|c| c.baseline && c.candidate == candidate)
}

/// The candidate whose parameters are the scenario's own.
fn own_candidate(runner: &Runner) -> Option<usize> {
    let own = ScenarioParams {
        plan: PlanParams::default(),
        ..runner.base.params().clone()
    };
    runner.candidates.iter().position(|c| c.params == own)
}

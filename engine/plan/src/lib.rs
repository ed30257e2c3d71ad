//! The capacity planner: from a scenario and its plan section to a decision
//! (which configuration: hardware, parallelism, service discipline and
//! engine settings; how many replicas; at what cost, with what risk).
//!
//! [`plan`] (or [`plan_with_progress`], or a [`PlanSession`] driven job by
//! job) runs, in order:
//! 1. the **exploration** (`explore.rs`): branch and bound over the
//!    configuration space (`space.rs`), each configuration's smallest fleet
//!    found by a capacity search (`search.rs`: one seed to bracket,
//!    sequential replications to decide);
//! 2. beside each other once a configuration is chosen: the **baseline**
//!    (the chosen hardware with the scenario's own settings, searched in
//!    full), the low- and high-demand cases **re-planned** on the chosen
//!    configuration, and its **service curve** (`curve.rs`);
//! 3. the **plan** (`recommend.rs`), and what made the difference against
//!    the baseline, with the cost versus P(miss) frontier (`explain.rs`);
//! 4. the **cases** on the planned fleet (`cases.rs`) and the fleet that
//!    covers high demand;
//! 5. **sensitivity** (`sensitivity.rs`) on the fixed fleet, re-planned for
//!    the inputs that matter most;
//! 6. the **analytic two-stage estimate** (`analytic.rs`) beside the
//!    simulated result;
//!
//! and, beside them from the start, the **configured fleet** (the scenario
//! as it stands) decided like every fleet (`configured.rs`).
//!
//! This module holds the entry points, the native driver and the order of
//! the phases. A pass over the phases (`runner.rs`) runs no simulation: it
//! records the runs it lacks, and the one pass loop (`session.rs`, which a
//! [`PlanSession`] runs on) hands them out as a batch, to run on rayon's
//! threads natively (`drive`) or on a pool of Web Workers in the page, and
//! repeats the pass. Every run's seed follows from its replication alone
//! (common random numbers across configurations and cases), and a pass's
//! decisions from the cached results alone, so the plan is the same for any
//! number of workers. `evaluate.rs` judges runs against the targets,
//! `cost.rs` prices them and `result.rs` holds what a plan returns. No IO,
//! no clock: like the engine, the planner gives the same result natively
//! and in wasm32.

// A layer's module docs name their private neighbours: the engine's
// developers read them (the product's API docs are `sojourn-engine`'s).
#![allow(rustdoc::private_intra_doc_links)]

// The layers below, under the paths their modules have always used (Cargo
// lets this crate name nothing above it).
use sojourn_model::{error, format, model, params, rng, serde_float, stats};
use sojourn_sim::{report, sim};

pub mod cost;
pub mod evaluate;
pub mod exceedance;
mod run_summary;

mod analytic;
mod binding;
mod budget;
mod cases;
mod configured;
mod curve;
mod diagnose;
mod diagnosis;
#[cfg(test)]
mod evaluate_tests;
mod explain;
mod explore;
mod jobs;
mod levers;
mod recommend;
mod result;
mod runner;
mod search;
mod sensitivity;
mod session;
pub mod space;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::budget::{MAX_PLAN_REQUESTS, check_budget};
pub use crate::curve::CurveTarget;
pub use crate::diagnosis::{Cause, ClassShare, Diagnosis};
use crate::error::ScenarioError;
pub use crate::evaluate::Verdict;
pub use crate::exceedance::ShareOver;
pub use crate::jobs::{JobOutput, PlanJob, RunKey, resolve_threads, run_batch};
pub use crate::levers::{Lever, LeverKind};
use crate::model::scenario::Scenario;
use crate::params::plan::Multipliers;
use crate::runner::{Gather, Halt, Runner};
use crate::serde_float::NonFinite;
use crate::session::{Passed, Passes};
pub use crate::session::{PlanPoll, PlanSession};
use crate::sim::{RunError, RunOptions};

pub use crate::result::{
    AnalyticComparison, BindingTarget, ClassIntervals, ComparisonRow, ConfigurationResult,
    ConfiguredFleet, CostSummary, Cover, CurvePoint, ExploredPoint, Interval, PlanResult,
    Recommendation, ScenarioResult, SearchDimension, SearchEffort, SearchResult, SearchStatus,
    Sensitivity, SensitivityRow, ServiceCurve,
};

/// How the planner runs (what the scenario's plan section does not say).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlanOptions {
    /// Limits for each simulation.
    pub max_requests_per_run: u64,
    pub max_work_per_run: u64,
    /// Memory budget of each simulation (see [`RunOptions::max_bytes`]).
    pub max_bytes_per_run: u64,
    /// The most requests the plan's runs may expect to simulate in all
    /// ([`MAX_PLAN_REQUESTS`] by default), checked before the first.
    pub max_plan_requests: f64,
    /// Run the best and worst cases.
    pub scenarios: bool,
    pub service_curve: bool,
    pub sensitivity: bool,
    /// Report progress after this many arrivals of a run.
    pub progress_every_requests: u32,
    /// Threads that run simulations natively: 0 for every core (one without
    /// the engine's `parallel` feature, and in wasm32, where the page runs
    /// a pool of Web Workers instead). The result does not depend on it.
    pub threads: u32,
}

impl PlanOptions {
    /// These options without the demand cases, the service curve and
    /// sensitivity: the search alone (`sojourn plan --search-only`, and a
    /// session's provisional result).
    pub fn search_only(&self) -> PlanOptions {
        PlanOptions {
            scenarios: false,
            service_curve: false,
            sensitivity: false,
            ..self.clone()
        }
    }
}

impl Default for PlanOptions {
    fn default() -> Self {
        let run = RunOptions::default();
        PlanOptions {
            max_requests_per_run: run.max_requests,
            max_work_per_run: run.max_work,
            max_bytes_per_run: run.max_bytes,
            max_plan_requests: MAX_PLAN_REQUESTS,
            scenarios: true,
            service_curve: true,
            sensitivity: true,
            progress_every_requests: 20_000,
            threads: 0,
        }
    }
}

/// Where a plan has got, for a progress bar.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanProgress {
    /// What is being done, e.g. "capacity search: H100 x1".
    pub phase: String,
    pub simulations_done: u64,
    /// An estimate: searches decide as they go how many runs they need.
    pub simulations_estimated: u64,
    /// Overall fraction done, in \[0, 1\].
    #[serde_as(as = "NonFinite")]
    pub fraction: f64,
    /// Fraction of the current simulation done, in \[0, 1\].
    #[serde_as(as = "NonFinite")]
    pub run_fraction: f64,
}

/// Why a plan stopped without a result. Unattainable targets are not errors:
/// they are reported in the result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum PlanError {
    /// A case derived from the scenario (a candidate or a multiplier) is not
    /// a valid scenario.
    InvalidCase { case: String, error: ScenarioError },
    /// A simulation stopped (too many requests or events).
    Run { case: String, error: RunError },
    /// The progress callback asked to stop.
    Cancelled { simulations: u64 },
    /// The simulation threads could not start.
    Threads(String),
    /// A pass waited without asking for a run (a planner defect, reported
    /// rather than looping).
    Stalled,
    /// The plan's runs together would simulate more requests than its
    /// budget ([`PlanOptions::max_plan_requests`]); `advice` names where
    /// most of them go and the fields that set it.
    TooMuchWork {
        expected_requests: f64,
        cap: f64,
        advice: String,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::InvalidCase { case, error } => {
                write!(f, "the case \"{case}\" is not a valid scenario: {error}")
            }
            PlanError::Run { case, error } => write!(f, "simulating \"{case}\": {error}"),
            PlanError::Cancelled { simulations } => {
                write!(f, "cancelled after {simulations} simulations")
            }
            PlanError::Threads(e) => write!(f, "could not start the simulation threads: {e}"),
            PlanError::Stalled => write!(
                f,
                "the planner stopped making progress (a defect: please report the scenario)"
            ),
            PlanError::TooMuchWork {
                expected_requests,
                cap,
                advice,
            } => write!(
                f,
                "the plan would simulate about {:.0} million requests in all, more than its budget of {:.0} million; {advice}",
                expected_requests / 1e6,
                cap / 1e6
            ),
        }
    }
}

impl std::error::Error for PlanError {}

/// Plans a validated scenario: see the module docs.
///
/// ```no_run
/// use sojourn_model::{model::Scenario, params::ScenarioParams};
/// use sojourn_plan::{PlanOptions, plan};
/// let scenario = Scenario::try_from(ScenarioParams::overnight_batch()).expect("valid");
/// let result = plan(&scenario, &PlanOptions::default()).expect("plans");
/// if let Some(r) = &result.recommendation {
///     println!("{} replicas of {}", r.steady_replicas, r.candidate);
/// }
/// ```
pub fn plan(scenario: &Scenario, options: &PlanOptions) -> Result<PlanResult, PlanError> {
    plan_with_progress(scenario, options, &mut |_| true)
}

/// [`plan`], calling `on_progress` as simulations finish (every
/// `progress_every_requests` arrivals of every simulation when it runs on
/// one thread); returning `false` from it stops the plan with
/// [`PlanError::Cancelled`]. (In a Web Worker, drive a [`PlanSession`]
/// instead.)
pub fn plan_with_progress(
    scenario: &Scenario,
    options: &PlanOptions,
    on_progress: &mut dyn FnMut(&PlanProgress) -> bool,
) -> Result<PlanResult, PlanError> {
    let mut passes = Passes::new(scenario.clone(), options.clone(), run_plan);
    drive(&mut passes, on_progress)
}

/// Drives `passes` (the pass loop a [`PlanSession`] runs on) to its end
/// natively: each batch of runs a pass asks for runs on `options.threads`
/// threads (rayon), and the pass is polled again.
fn drive<T>(
    passes: &mut Passes<T>,
    on_progress: &mut dyn FnMut(&PlanProgress) -> bool,
) -> Result<T, PlanError> {
    let threads = resolve_threads(passes.options.threads);
    loop {
        let jobs = match passes.poll()? {
            Passed::Done(value) => return Ok(value),
            Passed::Jobs { jobs, .. } => jobs,
        };
        let progress = passes.progress();
        let total = jobs.len().max(1) as f64;
        let done_before = progress.simulations_done;
        let outputs = run_batch(&jobs, threads, &mut |done, run_fraction| {
            let fraction_of_batch = (done as f64 + run_fraction) / total;
            let estimated = progress.simulations_estimated as f64;
            let p = PlanProgress {
                simulations_done: done_before + done as u64,
                fraction: ((done_before as f64 + fraction_of_batch * total) / estimated)
                    .clamp(0.0, 1.0),
                run_fraction,
                ..progress.clone()
            };
            on_progress(&p)
        })
        .map_err(|e| match e {
            PlanError::Cancelled { .. } => PlanError::Cancelled {
                simulations: passes.state.simulations,
            },
            e => e,
        })?;
        for output in outputs {
            passes.submit(output);
        }
    }
}

/// Only the explorations of the base, best and worst cases over the whole
/// configuration space (their cheapest configurations' searches), and the
/// number of simulations they ran (what `sojourn plan --bench` times).
pub fn capacity_searches(
    scenario: &Scenario,
    options: &PlanOptions,
    on_progress: &mut dyn FnMut(&PlanProgress) -> bool,
) -> Result<(Vec<SearchResult>, u64), PlanError> {
    let searches = |runner: &mut Runner| {
        let plan = runner.base.params().plan.clone();
        let all: Vec<usize> = (0..runner.configs.len()).collect();
        let mut waiting = runner::Gather::default();
        let mut out = Vec::new();
        for (name, m) in [
            ("expected demand", Multipliers::BASE),
            ("low demand", plan.best),
            ("high demand", plan.worst),
        ] {
            if let Some(e) = waiting.take(explore::explore(runner, &all, m, name))? {
                out.push(e.headline);
            }
        }
        waiting.finish(out)
    };
    let mut passes = Passes::new(scenario.clone(), options.clone(), searches);
    let searches = drive(&mut passes, on_progress)?;
    Ok((searches, passes.state.simulations))
}

/// One pass over the whole plan, phase by phase (see the module docs).
fn run_plan(runner: &mut Runner) -> Result<PlanResult, Halt> {
    let plan = runner.base.params().plan.clone();
    runner.estimated =
        budget::estimate_simulations(runner.base, runner.options, runner.configs.len());
    let all: Vec<usize> = (0..runner.configs.len()).collect();

    // 1. The exploration of the whole space.
    let mut branches = Gather::default();
    runner.stage = "exploration";
    let base = branches.take(explore::explore(runner, &all, Multipliers::BASE, EXPECTED))?;
    let Some(base) = base else {
        return Err(Halt::Pending);
    };
    runner.searched = true;
    let mut result = explain::skeleton(runner, &base);
    // The configured fleet, judged like every fleet (often already decided
    // by the search of the scenario's own settings).
    runner.stage = "configured fleet";
    let configured = if runner.decision_only {
        None
    } else {
        branches.take(configured::configured_fleet(runner))?
    };
    let Some(chosen) = base.best_config() else {
        result.unattainable = Some(explain::unattainable_reason(runner, &base)?);
        let mut result = branches.finish(result)?;
        set_configured(&mut result, configured);
        return Ok(finish(runner, result));
    };
    // The baseline: the chosen hardware with the scenario's own settings,
    // searched in full (the whole space's search may have pruned it), for
    // what made the difference. None while its search still runs.
    let own: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&c| {
            runner.configs[c].baseline
                && runner.configs[c].candidate == runner.configs[chosen].candidate
        })
        .collect();
    // Empty when `plan.search` pins a dimension away from the scenario's
    // own value: then there is no baseline to compare with.
    runner.stage = "baseline (own settings)";
    let baseline = if own.contains(&chosen) || own.is_empty() || runner.decision_only {
        None
    } else {
        branches.take(explore::explore(runner, &own, Multipliers::BASE, EXPECTED))?
    };
    let best_of = |e: &explore::Exploration| e.best.map(|i| (e.configs[i], e.searches[i].clone()));
    let baseline_best = match &baseline {
        Some(b) => Some(best_of(b)),
        None if own.contains(&chosen) => Some(best_of(&base)),
        None => None,
    };
    if own.is_empty() && !runner.decision_only {
        explain::explain_without_baseline(runner, &mut result, chosen);
    }
    // Low and high demand re-planned on the chosen configuration (the
    // hardware and settings the plan buys): the fleet each needs.
    let demand_cases = if runner.options.scenarios {
        runner.stage = "low demand re-planned";
        let low = branches.take(explore::explore(runner, &[chosen], plan.best, LOW))?;
        runner.stage = "high demand re-planned";
        let high = branches.take(explore::explore(runner, &[chosen], plan.worst, HIGH))?;
        low.zip(high)
    } else {
        None
    };
    let base_case = runner.case(chosen, Multipliers::BASE, EXPECTED)?;
    let min_replicas = base
        .best_search()
        .and_then(|s| s.found)
        .unwrap_or(plan.max_replicas);

    // Which target sets the fleet: from the search's runs and a few of
    // its own, none depending on the curve, so asked for beside it. Not in
    // a pass for the decision alone: the decision needs none of it, and
    // its runs would hold the decision back.
    runner.stage = "binding target";
    let binding = match base.best_search() {
        Some(search) if !runner.decision_only => {
            branches.take(binding::binding_target(runner, base_case, search))?
        }
        _ => None,
    };

    // 2. Service curve at the minimum fleet.
    runner.stage = "service curve";
    let curve = if runner.options.service_curve && !plan.service_curve.load_multipliers.is_empty() {
        match branches.take(curve::service_curve(runner, chosen, min_replicas))? {
            Some(c) => Some(c),
            None => return Err(Halt::Pending),
        }
    } else {
        None
    };

    // 3. The plan.
    runner.stage = "planned fleet";
    let Some(recommendation) = branches.take(recommend::recommend(
        runner,
        recommend::Chosen {
            candidate: chosen,
            base_case,
            min_replicas,
            curve: curve.as_ref(),
        },
    ))?
    else {
        return Err(Halt::Pending);
    };
    let steady = recommendation.steady_replicas;
    result.service_curve = curve;
    if let Some(baseline_best) = baseline_best {
        if let Some(b) = &baseline {
            explain::merge_baseline(runner, &mut result, b);
        }
        explain::explain(runner, &mut result, chosen, baseline_best);
    }

    // 4. The cases on the planned fleet, and 5. sensitivity, independent.
    let base_search = base.headline.clone();
    runner.stage = "cases on the planned fleet";
    let expected = branches.take(cases::at_plan_fleet(
        runner,
        cases::Named::expected(),
        base_case,
        base_search,
        steady,
    ))?;
    let mut scenarios = vec![expected];
    if let Some((low, high)) = &demand_cases {
        for (named, exploration) in [
            (cases::Named::low(&plan), low),
            (cases::Named::high(&plan), high),
        ] {
            scenarios.push(branches.take(cases::replanned(
                runner,
                named,
                exploration,
                chosen,
                steady,
            ))?);
        }
    }
    runner.stage = "sensitivity";
    let sensitivity = if runner.options.sensitivity && !plan.sensitivity.inputs.is_empty() {
        branches.take(sensitivity::sensitivity(
            runner,
            chosen,
            steady,
            min_replicas,
        ))?
    } else {
        None
    };
    let mut result = branches.finish(result)?;
    result.scenarios = scenarios.into_iter().flatten().collect();
    if let Some((_, high)) = &demand_cases {
        result.worst_case_cover = cases::cover(runner, high, &recommendation)?;
    }
    result.sensitivity = sensitivity;
    result.binding = binding.flatten();
    set_configured(&mut result, configured);

    // 6. The analytic estimate beside the simulation.
    result.analytic = Some(analytic::comparison(runner, base_case, steady));
    result.recommendation = Some(recommendation);
    Ok(finish(runner, result))
}

/// The names of the three cases.
const EXPECTED: &str = "expected demand";
const LOW: &str = "low demand";
const HIGH: &str = "high demand";

/// The configured fleet's judgement, or why there is none, into `result`.
fn set_configured(result: &mut PlanResult, configured: Option<Result<ConfiguredFleet, String>>) {
    match configured {
        Some(Ok(fleet)) => result.configured = Some(fleet),
        Some(Err(reason)) => result.configured_not_judged = Some(reason),
        None => {}
    }
}

/// `result` with the simulations the plan ran.
fn finish(runner: &Runner, mut result: PlanResult) -> PlanResult {
    result.simulations = runner.state.simulations;
    result.simulated_requests = runner.state.simulated_requests;
    result
}

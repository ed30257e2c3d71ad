//! The capacity planner: from a scenario and its plan section to a decision
//! (how many replicas of which hardware, at what cost, with what risk).
//!
//! [`plan`] (or [`plan_with_progress`], for a progress bar and Cancel) runs,
//! in order:
//! 1. a **capacity search** per candidate hardware option (`search.rs`): the
//!    smallest fleet meeting every SLA target, found by galloping from the
//!    analytic estimate and bisecting with one seed, then confirmed at the
//!    boundary with R seeds; the cheapest candidate is chosen;
//! 2. the chosen fleet's **service curve** (`curve.rs`: goodput and P(miss)
//!    against offered load), its knee and an operating point below it;
//! 3. the **plan** (`recommend.rs`): steady and reserve replicas, admission
//!    limit, scaling thresholds, headroom and budget;
//! 4. **best and worst cases** (`cases.rs`): their own capacity searches and
//!    how the planned fleet fares in them;
//! 5. one-at-a-time **sensitivity** (`sensitivity.rs`) of cost per success
//!    and P(miss);
//! 6. the **analytic two-stage estimate** (`analytic.rs`) beside the
//!    simulated result.
//!
//! This module holds the entry points and the order of the phases; each
//! phase is a function of the `Runner` they share (`runner.rs`),
//! which caches every simulation by (case, replicas, seed). Replication r
//! of every case uses seed + r, so cases compare like with like (common
//! random numbers). `evaluate.rs` judges runs against the targets,
//! `cost.rs` prices them and `result.rs` holds what a plan returns. No IO,
//! no clock: like the engine, the planner gives the same result natively
//! and in wasm32.

pub mod cost;
pub mod evaluate;

mod analytic;
mod cases;
mod curve;
mod recommend;
mod result;
mod runner;
mod search;
mod sensitivity;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
use crate::model::scenario::Scenario;
use crate::params::plan::{Multipliers, SensitivityInput};
use crate::plan::runner::{Halt, PlanState, Runner};
use crate::serde_float::NonFinite;
use crate::sim::{RunError, RunOptions};

pub use crate::plan::result::{
    AnalyticComparison, CandidateResult, ClassIntervals, ComparisonRow, CostSummary, CurvePoint,
    Interval, PlanResult, Recommendation, ScenarioResult, SearchResult, Sensitivity,
    SensitivityRow, ServiceCurve,
};

/// How the planner runs (what the scenario's plan section does not say).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlanOptions {
    /// Limits for each simulation.
    pub max_requests_per_run: u64,
    pub max_events_per_run: u64,
    /// Memory budget of each simulation (see [`RunOptions::max_bytes`]).
    pub max_bytes_per_run: u64,
    /// Run the best and worst cases.
    pub scenarios: bool,
    pub service_curve: bool,
    pub sensitivity: bool,
    /// Report progress after this many arrivals of a run.
    pub progress_every_requests: u32,
}

impl Default for PlanOptions {
    fn default() -> Self {
        let run = RunOptions::default();
        PlanOptions {
            max_requests_per_run: run.max_requests,
            max_events_per_run: run.max_events,
            max_bytes_per_run: run.max_bytes,
            scenarios: true,
            service_curve: true,
            sensitivity: true,
            progress_every_requests: 20_000,
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
        }
    }
}

impl std::error::Error for PlanError {}

/// Plans a validated scenario: see the module docs.
///
/// ```no_run
/// use sojourn_engine::{Scenario, ScenarioParams};
/// use sojourn_engine::{PlanOptions, plan};
/// let scenario = Scenario::try_from(ScenarioParams::overnight_batch()).expect("valid");
/// let result = plan(&scenario, &PlanOptions::default()).expect("plans");
/// if let Some(r) = &result.recommendation {
///     println!("{} replicas of {}", r.steady_replicas, r.candidate);
/// }
/// ```
pub fn plan(scenario: &Scenario, options: &PlanOptions) -> Result<PlanResult, PlanError> {
    plan_with_progress(scenario, options, &mut |_| true)
}

/// [`plan`], calling `on_progress` every `progress_every_requests` arrivals
/// of every simulation; returning `false` from it stops the plan with
/// [`PlanError::Cancelled`]. (In a Web Worker, post each progress message
/// from the callback; or drive a [`PlanSession`] step by step instead.)
pub fn plan_with_progress(
    scenario: &Scenario,
    options: &PlanOptions,
    on_progress: &mut dyn FnMut(&PlanProgress) -> bool,
) -> Result<PlanResult, PlanError> {
    check_budget(scenario, options)?;
    let mut state = PlanState::default();
    let mut runner = Runner::new(scenario, options, on_progress, &mut state, None);
    run_plan(&mut runner).map_err(|halt| runner.failure(halt))
}

/// Checks, before the first simulation, that every simulation the plan may
/// run fits the per-run budgets: the base, best and worst cases, each
/// service-curve load and each sensitivity end, on the largest workload each
/// gives (the fleet and the hardware do not change how many requests
/// arrive). A plan never discards finished work because a later point is
/// too large.
pub fn check_budget(scenario: &Scenario, options: &PlanOptions) -> Result<(), PlanError> {
    let plan = &scenario.params().plan;
    let mut cases = vec![("base".to_string(), Multipliers::BASE)];
    if options.scenarios {
        cases.push(("best".to_string(), plan.best));
        cases.push(("worst".to_string(), plan.worst));
    }
    if options.service_curve {
        for &load in &plan.service_curve.load_multipliers {
            let m = Multipliers {
                arrival_rate: load,
                ..Multipliers::BASE
            };
            cases.push((format!("base at {load}x load"), m));
        }
    }
    if options.sensitivity {
        for &input in &plan.sensitivity.inputs {
            let factor = 1.0 + plan.sensitivity.delta;
            cases.push((
                format!("{} x{factor}", input.label()),
                Multipliers::BASE.with(input, factor),
            ));
        }
    }
    let run_options = RunOptions {
        max_requests: options.max_requests_per_run,
        max_bytes: options.max_bytes_per_run,
        ..RunOptions::default()
    };
    for (case, m) in cases {
        // Only the multipliers that change the number of requests matter.
        if m.arrival_rate <= 1.0 && m.batch_size <= 1.0 && case != "base" {
            continue;
        }
        let scenario = Scenario::try_from(m.apply(scenario.params())).map_err(|error| {
            PlanError::InvalidCase {
                case: case.clone(),
                error,
            }
        })?;
        crate::sim::check_run_budget(&scenario, &run_options)
            .map_err(|error| PlanError::Run { case, error })?;
    }
    Ok(())
}

/// Only the capacity searches of the base, best and worst cases on the
/// first candidate, and the number of simulations they ran (what
/// `sojourn plan --bench` times).
pub fn capacity_searches(
    scenario: &Scenario,
    options: &PlanOptions,
    on_progress: &mut dyn FnMut(&PlanProgress) -> bool,
) -> Result<(Vec<SearchResult>, u64), PlanError> {
    check_budget(scenario, options)?;
    let mut state = PlanState::default();
    let mut runner = Runner::new(scenario, options, on_progress, &mut state, None);
    runner.estimated = SEARCH_RUNS_GUESS * runner.replications() as u64;
    let plan = &scenario.params().plan;
    let mut out = Vec::new();
    for (name, m) in [
        ("base", Multipliers::BASE),
        ("best", plan.best),
        ("worst", plan.worst),
    ] {
        let search = runner
            .case(0, m, name)
            .and_then(|case| search::capacity_search(&mut runner, case))
            .map_err(|halt| runner.failure(halt))?;
        out.push(search);
    }
    Ok((out, runner.state.simulations))
}

/// A plan run one simulation at a time, for a caller that must keep
/// control between simulations (a Web Worker's event loop: a progress bar,
/// and Cancel by no longer calling [`PlanSession::step`]).
///
/// Each step repeats the plan's logic from the start on the results
/// gathered so far (cheap: only simulations cost) and runs the one
/// simulation it needs next. The result equals [`plan`]'s.
///
/// ```no_run
/// use sojourn_engine::{Scenario, ScenarioParams};
/// use sojourn_engine::{PlanOptions, PlanSession, PlanStep};
/// let scenario = Scenario::try_from(ScenarioParams::overnight_batch()).expect("valid");
/// let mut session = PlanSession::new(scenario, PlanOptions::default());
/// let result = loop {
///     match session.step().expect("plans") {
///         PlanStep::Running(progress) => println!("{:.0}%", 100.0 * progress.fraction),
///         PlanStep::Done(result) => break result,
///     }
/// };
/// println!("{} simulations", result.simulations);
/// ```
pub struct PlanSession {
    scenario: Scenario,
    options: PlanOptions,
    state: PlanState,
    result: Option<Box<PlanResult>>,
}

/// What one [`PlanSession::step`] did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PlanStep {
    /// One more simulation ran; more are needed.
    Running(PlanProgress),
    /// The plan is complete.
    Done(Box<PlanResult>),
}

impl PlanSession {
    pub fn new(scenario: Scenario, options: PlanOptions) -> PlanSession {
        PlanSession {
            scenario,
            options,
            state: PlanState::default(),
            result: None,
        }
    }

    /// Runs at most one simulation. After `Done`, returns the result again.
    pub fn step(&mut self) -> Result<PlanStep, PlanError> {
        if let Some(result) = &self.result {
            return Ok(PlanStep::Done(result.clone()));
        }
        if self.state.simulations == 0 {
            check_budget(&self.scenario, &self.options)?;
        }
        let mut ignore = |_: &PlanProgress| true;
        let mut runner = Runner::new(
            &self.scenario,
            &self.options,
            &mut ignore,
            &mut self.state,
            Some(1),
        );
        match run_plan(&mut runner) {
            Ok(result) => {
                let result = Box::new(result);
                self.result = Some(result.clone());
                Ok(PlanStep::Done(result))
            }
            Err(Halt::Paused) => Ok(PlanStep::Running(runner.progress(0.0))),
            Err(Halt::Failed(e)) => Err(e),
        }
    }

    /// Simulations run so far.
    pub fn simulations(&self) -> u64 {
        self.state.simulations
    }
}

/// A rough number of runs per capacity search, for the progress estimate.
const SEARCH_RUNS_GUESS: u64 = 14;

/// One pass over the whole plan, phase by phase (see the module docs).
fn run_plan(runner: &mut Runner) -> Result<PlanResult, Halt> {
    let plan = runner.base.params().plan.clone();
    runner.estimated = estimate_simulations(runner);

    // 1. Capacity search per candidate; the cheapest that meets wins.
    let mut candidates = Vec::new();
    for i in 0..runner.candidates.len() {
        let label = format!("base on {}", runner.candidates[i].name);
        let case = runner.case(i, Multipliers::BASE, &label)?;
        let search = search::capacity_search(runner, case)?;
        let candidate = &runner.candidates[i];
        candidates.push(CandidateResult {
            name: candidate.name.clone(),
            hardware: candidate.params.hardware.name.clone(),
            gpus_per_replica: candidate.params.replica.gpus_per_replica,
            usd_per_gpu_hour: candidate.usd_per_gpu_hour,
            pricing_model: candidate.pricing_model,
            search,
        });
    }
    let chosen = recommend::cheapest(&candidates, &plan.reserve);
    let mut result = PlanResult {
        scenario_name: runner.base.params().name.clone(),
        model: runner.base.params().model.name.clone(),
        success_criterion: cost::success_criterion(runner.base.params()),
        targets: runner
            .checks
            .iter()
            .map(|c| c.description.clone())
            .collect(),
        replications: plan.replications,
        decision: plan.decision,
        candidates,
        chosen_candidate: chosen,
        recommendation: None,
        scenarios: Vec::new(),
        service_curve: None,
        sensitivity: None,
        analytic: None,
        simulations: 0,
        simulated_requests: 0,
        warnings: Vec::new(),
    };
    let Some(chosen) = chosen else {
        result.warnings.push(format!(
            "No candidate meets every target with up to {} replicas; there is no plan. {}",
            plan.max_replicas,
            result
                .candidates
                .iter()
                .map(|c| format!("{}: {}", c.name, c.search.message))
                .collect::<Vec<_>>()
                .join(" ")
        ));
        return Ok(finish(runner, result));
    };
    let base_case = runner.case(chosen, Multipliers::BASE, "base")?;
    let min_replicas = result.candidates[chosen]
        .search
        .found
        .unwrap_or(plan.max_replicas);

    // 2. Service curve at the minimum fleet.
    let curve = if runner.options.service_curve && !plan.service_curve.load_multipliers.is_empty() {
        Some(curve::service_curve(runner, chosen, min_replicas)?)
    } else {
        None
    };

    // 3. The plan.
    let recommendation = recommend::recommend(
        runner,
        recommend::Chosen {
            candidate: chosen,
            base_case,
            min_replicas,
            curve: curve.as_ref(),
        },
    )?;
    let steady = recommendation.steady_replicas;
    result.service_curve = curve;

    // 4. Base, best and worst.
    let base_search = result.candidates[chosen].search.clone();
    result
        .scenarios
        .push(cases::base(runner, base_case, base_search, steady)?);
    if runner.options.scenarios {
        result
            .scenarios
            .extend(cases::best_and_worst(runner, chosen, steady)?);
    }

    // 5. Sensitivity at the planned fleet.
    if runner.options.sensitivity && !plan.sensitivity.inputs.is_empty() {
        result.sensitivity = Some(sensitivity::sensitivity(runner, chosen, steady)?);
    }

    // 6. The analytic estimate beside the simulation.
    result.analytic = Some(analytic::comparison(runner, base_case, steady));
    result.recommendation = Some(recommendation);
    Ok(finish(runner, result))
}

/// How many simulations a whole plan is expected to run, for progress
/// (searches decide as they go how many they need).
fn estimate_simulations(runner: &Runner) -> u64 {
    let plan = &runner.base.params().plan;
    let options = runner.options;
    let r = runner.replications() as u64;
    let curve_points =
        (plan.service_curve.load_multipliers.len() as u64 + 1) * runner.curve_replications() as u64;
    let sensitivity_runs = plan
        .sensitivity
        .inputs
        .iter()
        .filter(|i| **i != SensitivityInput::Price)
        .count() as u64
        * 2
        * plan.sensitivity.replications as u64;
    runner.candidates.len() as u64 * SEARCH_RUNS_GUESS * r / 3
        + if options.scenarios {
            2 * SEARCH_RUNS_GUESS * r / 3 + 2 * r
        } else {
            0
        }
        + if options.service_curve {
            curve_points
        } else {
            0
        }
        + if options.sensitivity {
            sensitivity_runs
        } else {
            0
        }
}

/// `result` with the simulations the plan ran.
fn finish(runner: &Runner, mut result: PlanResult) -> PlanResult {
    result.simulations = runner.state.simulations;
    result.simulated_requests = runner.state.simulated_requests;
    result
}

//! The capacity planner: from a scenario and its plan section to a decision
//! (how many replicas of which hardware, at what cost, with what risk).
//!
//! [`plan`] (or [`plan_with_progress`], for a progress bar and Cancel) runs,
//! in order:
//! 1. a **capacity search** per candidate hardware option: the smallest fleet
//!    meeting every SLA target, found by galloping from the analytic estimate
//!    and bisecting with one seed, then confirmed at the boundary with R
//!    seeds; the cheapest candidate is chosen;
//! 2. the chosen fleet's **service curve** (goodput and P(miss) against
//!    offered load), its knee and an operating point below it;
//! 3. the **plan**: steady and reserve replicas, admission limit, scaling
//!    thresholds, headroom and budget;
//! 4. **best and worst cases**: their own capacity searches and how the
//!    planned fleet fares in them;
//! 5. one-at-a-time **sensitivity** of cost per success and P(miss);
//! 6. the **analytic two-stage estimate** beside the simulated result.
//!
//! Every simulation of the planner is cached by (case, replicas, seed), and
//! replication r of every case uses seed + r, so cases compare like with
//! like (common random numbers). No IO, no clock: like the engine, the
//! planner gives the same result natively and in wasm32.

pub mod cost;
pub mod evaluate;

mod result;
mod search;

use crate::serde_float::NonFinite;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
use crate::model::analytic::{QueueEstimate, QueueModel};
use crate::model::scenario::Scenario;
use crate::params::plan::{
    Multipliers, PricingModel, ResolvedCandidate, SensitivityInput, resolve_candidates,
};
use crate::plan::cost::{CostBasis, FleetCost, UnitCosts, WorkTotals, attribute};
use crate::plan::evaluate::{
    CheckMetric, CheckSpec, Evaluation, RunSummary, duration, evaluate, mean_ci, percent,
};
use crate::report::Report;
use crate::sim::{RunError, RunOptions, Simulation};

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
    let mut planner = Planner::new(scenario, options, on_progress, &mut state, None);
    planner.plan().map_err(|halt| planner.failure(halt))
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
    let mut planner = Planner::new(scenario, options, on_progress, &mut state, None);
    planner.estimated = SEARCH_RUNS_GUESS * planner.replications() as u64;
    let plan = &scenario.params().plan;
    let mut out = Vec::new();
    for (name, m) in [
        ("base", Multipliers::BASE),
        ("best", plan.best),
        ("worst", plan.worst),
    ] {
        let search = planner
            .case(0, m, name)
            .and_then(|case| planner.search(case))
            .map_err(|halt| planner.failure(halt))?;
        out.push(search);
    }
    Ok((out, planner.state.simulations))
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
        let mut planner = Planner::new(
            &self.scenario,
            &self.options,
            &mut ignore,
            &mut self.state,
            Some(1),
        );
        match planner.plan() {
            Ok(result) => {
                let result = Box::new(result);
                self.result = Some(result.clone());
                Ok(PlanStep::Done(result))
            }
            Err(Halt::Paused) => Ok(PlanStep::Running(planner.progress(0.0))),
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

/// A scenario the planner simulates: a candidate with multipliers applied.
struct Case {
    label: String,
    candidate: usize,
    multipliers: Multipliers,
    scenario: Scenario,
    /// The two-stage estimate, built on first use.
    queue: Option<QueueModel>,
}

/// What a plan has computed: kept across the steps of a [`PlanSession`].
#[derive(Default)]
struct PlanState {
    cases: Vec<Case>,
    runs: BTreeMap<(usize, u32, u32), RunSummary>,
    /// The two-stage estimate's starting point per case.
    analytic_guesses: BTreeMap<usize, Option<u32>>,
    simulations: u64,
    simulated_requests: u64,
}

/// Why a pass over the plan stopped early.
enum Halt {
    Failed(PlanError),
    /// The pass used up its simulations (a [`PlanSession`] step).
    Paused,
}

impl From<PlanError> for Halt {
    fn from(e: PlanError) -> Halt {
        Halt::Failed(e)
    }
}

/// One pass over the plan's logic. Its decisions depend only on the runs'
/// results, which the state caches, so a pass that pauses for want of
/// simulations can be repeated later and takes the same path.
struct Planner<'a> {
    base: &'a Scenario,
    options: &'a PlanOptions,
    on_progress: &'a mut dyn FnMut(&PlanProgress) -> bool,
    state: &'a mut PlanState,
    /// New simulations this pass may still run (`None`: any number).
    run_budget: Option<u32>,
    candidates: Vec<ResolvedCandidate>,
    checks: Vec<CheckSpec>,
    keep_records: bool,
    estimated: u64,
    phase: String,
    warnings: Vec<String>,
}

impl<'a> Planner<'a> {
    fn new(
        base: &'a Scenario,
        options: &'a PlanOptions,
        on_progress: &'a mut dyn FnMut(&PlanProgress) -> bool,
        state: &'a mut PlanState,
        run_budget: Option<u32>,
    ) -> Planner<'a> {
        let checks = CheckSpec::all(base);
        Planner {
            base,
            options,
            on_progress,
            state,
            run_budget,
            candidates: resolve_candidates(base.params()),
            keep_records: checks.iter().any(CheckSpec::needs_records),
            checks,
            estimated: 1,
            phase: String::new(),
            warnings: Vec::new(),
        }
    }

    fn replications(&self) -> u32 {
        self.base.params().plan.replications
    }

    fn curve_replications(&self) -> u32 {
        let plan = &self.base.params().plan;
        plan.service_curve.replications.unwrap_or(plan.replications)
    }

    /// The case for `candidate` with `multipliers` (built once; price does
    /// not change the simulated system, so cases differing only in price
    /// share their runs).
    fn case(
        &mut self,
        candidate: usize,
        multipliers: Multipliers,
        label: &str,
    ) -> Result<usize, Halt> {
        if let Some(i) =
            self.state.cases.iter().position(|c| {
                c.candidate == candidate && c.multipliers.same_system_as(&multipliers)
            })
        {
            return Ok(i);
        }
        let params = multipliers.apply(&self.candidates[candidate].params);
        let scenario = Scenario::try_from(params).map_err(|error| PlanError::InvalidCase {
            case: label.to_string(),
            error,
        })?;
        self.state.cases.push(Case {
            label: label.to_string(),
            candidate,
            multipliers,
            scenario,
            queue: None,
        });
        Ok(self.state.cases.len() - 1)
    }

    /// Where the plan stands, `run_fraction` into its current simulation.
    fn progress(&self, run_fraction: f64) -> PlanProgress {
        let done = self.state.simulations as f64 + run_fraction;
        let estimated = self.estimated.max(self.state.simulations + 1);
        PlanProgress {
            phase: self.phase.clone(),
            simulations_done: self.state.simulations,
            simulations_estimated: estimated,
            fraction: (done / estimated as f64).clamp(0.0, 1.0),
            run_fraction,
        }
    }

    /// The error a public entry point reports for `halt` (a pass without a
    /// simulation budget never pauses; if it did, it stopped early).
    fn failure(&self, halt: Halt) -> PlanError {
        match halt {
            Halt::Failed(e) => e,
            Halt::Paused => PlanError::Cancelled {
                simulations: self.state.simulations,
            },
        }
    }

    fn report_progress(&mut self, run_fraction: f64) -> Result<(), Halt> {
        let progress = self.progress(run_fraction);
        if (self.on_progress)(&progress) {
            Ok(())
        } else {
            Err(Halt::Failed(PlanError::Cancelled {
                simulations: self.state.simulations,
            }))
        }
    }

    /// Runs (or recalls) replication `replication` of `case` on `replicas`.
    fn run(&mut self, case: usize, replicas: u32, replication: u32) -> Result<&RunSummary, Halt> {
        let key = (case, replicas, replication);
        if !self.state.runs.contains_key(&key) {
            let summary = self.simulate(case, replicas, replication)?;
            self.state.runs.insert(key, summary);
        }
        Ok(&self.state.runs[&key])
    }

    fn simulate(
        &mut self,
        case: usize,
        replicas: u32,
        replication: u32,
    ) -> Result<RunSummary, Halt> {
        match &mut self.run_budget {
            Some(0) => return Err(Halt::Paused),
            Some(left) => *left -= 1,
            None => {}
        }
        let label = self.state.cases[case].label.clone();
        let seed = self.base.params().run.seed.wrapping_add(replication as u64);
        let scenario = self.state.cases[case]
            .scenario
            .with_replicas_and_seed(replicas, seed)
            .map_err(|error| PlanError::InvalidCase {
                case: label.clone(),
                error,
            })?;
        let run_options = RunOptions {
            max_requests: self.options.max_requests_per_run,
            max_events: self.options.max_events_per_run,
            max_bytes: self.options.max_bytes_per_run,
            keep_records: self.keep_records,
            ..RunOptions::default()
        };
        let run_error = |error| PlanError::Run {
            case: format!("{label}, {replicas} replicas, seed {seed}"),
            error,
        };
        let mut simulation = Simulation::new(&scenario, &run_options).map_err(run_error)?;
        self.report_progress(0.0)?;
        loop {
            let progress = simulation
                .advance(self.options.progress_every_requests.max(1))
                .map_err(run_error)?;
            if progress.done {
                break;
            }
            self.report_progress(progress.fraction)?;
        }
        let report = Report::build(simulation.finish().map_err(run_error)?);
        self.state.simulations += 1;
        self.state.simulated_requests += report.engine.requests;
        Ok(RunSummary::of(&report, &self.checks))
    }

    /// Evaluates `case` on `replicas` with replications 0..count.
    fn evaluate(&mut self, case: usize, replicas: u32, count: u32) -> Result<Evaluation, Halt> {
        for r in 0..count {
            self.run(case, replicas, r)?;
        }
        let runs: Vec<&RunSummary> = (0..count)
            .map(|r| &self.state.runs[&(case, replicas, r)])
            .collect();
        Ok(evaluate(
            &self.checks,
            &runs,
            self.base.params().plan.decision,
        ))
    }

    /// The smallest fleet the two-stage estimate says meets the targets
    /// (miss probabilities, sojourn percentiles and the busy fraction), a
    /// starting point for the simulated search; `None` when it finds none.
    fn analytic_guess(&mut self, case: usize) -> Option<u32> {
        if let Some(guess) = self.state.analytic_guesses.get(&case) {
            return *guess;
        }
        let guess = self.compute_analytic_guess(case);
        self.state.analytic_guesses.insert(case, guess);
        guess
    }

    fn compute_analytic_guess(&mut self, case: usize) -> Option<u32> {
        let max = self.base.params().plan.max_replicas;
        let c = &mut self.state.cases[case];
        let model = c.queue.get_or_insert_with(|| QueueModel::new(&c.scenario));
        let checks = &self.checks;
        let max_busy = self.base.params().plan.max_busy_fraction;
        let mut probe = |n: u32| -> Result<search::Probe, ()> {
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
            Ok(search::Probe {
                meets: ratio <= 1.0,
                ratio,
            })
        };
        // Start from the stability bound: below it the estimate is unstable.
        let rate = c.scenario.mean_request_rate_per_s();
        let work_s = crate::model::analytic::load_estimate(&c.scenario).work_per_request_s;
        let stable_from = (rate * work_s).ceil().max(1.0) as u32;
        search::smallest_meeting(stable_from.min(max), max, None, &mut probe)
            .map_or(None, |o| o.found)
    }

    /// The capacity search for one case.
    fn search(&mut self, case: usize) -> Result<SearchResult, Halt> {
        let label = self.state.cases[case].label.clone();
        self.phase = format!("capacity search: {label}");
        let max = self.base.params().plan.max_replicas;
        let replications = self.replications();
        let analytic_guess = self.analytic_guess(case);
        let mut evaluations: Vec<Evaluation> = Vec::new();
        // Bracket with one seed, starting at the analytic guess (or, when the
        // estimate finds no fleet, at the largest allowed).
        let start = analytic_guess.unwrap_or(max);
        let single = {
            let mut probe = |n: u32| -> Result<search::Probe, Halt> {
                let e = self.evaluate(case, n, 1)?;
                let p = search::Probe {
                    meets: e.meets,
                    ratio: e.worst_ratio,
                };
                evaluations.push(e);
                Ok(p)
            };
            search::smallest_meeting(start, max, None, &mut probe)?
        };
        // Confirm the boundary with R seeds (reusing the first), moving on
        // with R seeds if the replications disagree with the first seed; the
        // one-seed curve's slope predicts how far.
        let confirmed = if replications == 1 {
            single.found
        } else {
            let mut probe = |n: u32| -> Result<search::Probe, Halt> {
                let e = self.evaluate(case, n, replications)?;
                let p = search::Probe {
                    meets: e.meets,
                    ratio: e.worst_ratio,
                };
                evaluations.push(e);
                Ok(p)
            };
            search::smallest_meeting(single.found.unwrap_or(max), max, single.slope, &mut probe)?
                .found
        };
        let at = confirmed.unwrap_or(max);
        let at_answer = self.evaluate(case, at, replications)?;
        let message = match confirmed {
            Some(n) => format!(
                "{n} replicas of {} meet every target ({} replications)",
                self.candidates[self.state.cases[case].candidate].name, replications
            ),
            None => unattainable_message(max, &at_answer),
        };
        let reserve = self.base.params().plan.reserve.failure_reserve_replicas
            + self.base.params().plan.reserve.warm_idle_replicas;
        let cost = Some(self.cost_summary(case, at, replications, reserve));
        let simulations = distinct_runs(&evaluations);
        Ok(SearchResult {
            case: label,
            candidate: self.candidates[self.state.cases[case].candidate]
                .name
                .clone(),
            found: confirmed,
            message,
            analytic_guess,
            max_replicas: max,
            evaluations,
            at_answer,
            cost,
            simulations,
        })
    }

    /// Each class's P(miss) and percentiles over replications 0..count of
    /// `case` on `replicas` (which must have run).
    fn class_intervals(&self, case: usize, replicas: u32, count: u32) -> Vec<ClassIntervals> {
        let runs: Vec<&RunSummary> = (0..count)
            .filter_map(|r| self.state.runs.get(&(case, replicas, r)))
            .collect();
        let interval = |f: &dyn Fn(&RunSummary) -> f64| {
            let (mean, ci95) = mean_ci(&runs.iter().map(|r| f(r)).collect::<Vec<_>>());
            Interval { mean, ci95 }
        };
        self.base
            .params()
            .classes
            .iter()
            .enumerate()
            .map(|(k, class)| ClassIntervals {
                class: class.name.clone(),
                p_miss: interval(&|r| r.classes[k].p_miss),
                sojourn_p50_s: interval(&|r| no_data_is_zero(r.classes[k].sojourn.p50)),
                sojourn_p99_s: interval(&|r| no_data_is_zero(r.classes[k].sojourn.p99)),
                ttft_p99_s: interval(&|r| no_data_is_zero(r.classes[k].ttft.p99)),
            })
            .collect()
    }

    /// The cost basis of a case.
    fn basis(&self, case: usize) -> CostBasis {
        let c = &self.state.cases[case];
        let candidate = &self.candidates[c.candidate];
        let pricing = &self.base.params().plan.pricing;
        let price_factor = c.multipliers.price;
        CostBasis {
            model: self.base.params().model.name.clone(),
            hardware: candidate.params.hardware.name.clone(),
            gpus_per_replica: candidate.params.replica.gpus_per_replica,
            usd_per_gpu_hour: candidate.usd_per_gpu_hour.map(|p| p * price_factor),
            pricing_model: candidate.pricing_model,
            fixed_usd_per_month: pricing.fixed_usd_per_month * price_factor,
            price_date: pricing.price_date.clone(),
            provider_region: pricing.provider_region.clone(),
            success_criterion: cost::success_criterion(self.base.params()),
        }
    }

    /// Cost of `case` on `replicas` steady plus `reserve` replicas, from its
    /// replications (which must have run).
    fn cost_summary(
        &self,
        case: usize,
        replicas: u32,
        replications: u32,
        reserve: u32,
    ) -> CostSummary {
        let basis = self.basis(case);
        let runs: Vec<&RunSummary> = (0..replications)
            .filter_map(|r| self.state.runs.get(&(case, replicas, r)))
            .collect();
        let window_h = runs.first().map_or(0.0, |r| r.window_s / 3600.0);
        let fleet = FleetCost::new(&basis, replicas, reserve, window_h);
        let per_run: Vec<UnitCosts> = runs
            .iter()
            .map(|r| attribute(&basis, &fleet, &work_totals(r)))
            .collect();
        let average = |f: &dyn Fn(&UnitCosts) -> Option<f64>| -> Option<f64> {
            let values: Option<Vec<f64>> = per_run.iter().map(f).collect();
            values
                .filter(|v| !v.is_empty())
                .map(|v| v.iter().sum::<f64>() / v.len() as f64)
        };
        let units = UnitCosts {
            usd_per_request: average(&|u| u.usd_per_request),
            usd_per_success: average(&|u| u.usd_per_success),
            usd_per_million_prompt_tokens: average(&|u| u.usd_per_million_prompt_tokens),
            usd_per_million_output_tokens: average(&|u| u.usd_per_million_output_tokens),
            usd_failed_work: average(&|u| u.usd_failed_work),
            usd_recomputation: average(&|u| u.usd_recomputation),
            usd_idle: average(&|u| u.usd_idle),
            gpu_hours_per_success: average(&|u| u.gpu_hours_per_success),
        };
        let per_success: Option<Vec<f64>> = per_run.iter().map(|u| u.usd_per_success).collect();
        let usd_per_success_ci95 = per_success.and_then(|v| mean_ci(&v).1);
        CostSummary {
            basis,
            fleet,
            units,
            usd_per_success_ci95,
            replications: runs.len() as u32,
        }
    }

    fn plan(&mut self) -> Result<PlanResult, Halt> {
        let plan = self.base.params().plan.clone();
        let r = self.replications() as u64;
        let curve_points = (plan.service_curve.load_multipliers.len() as u64 + 1)
            * self.curve_replications() as u64;
        let sensitivity_runs = plan
            .sensitivity
            .inputs
            .iter()
            .filter(|i| **i != SensitivityInput::Price)
            .count() as u64
            * 2
            * plan.sensitivity.replications as u64;
        self.estimated = self.candidates.len() as u64 * SEARCH_RUNS_GUESS * r / 3
            + if self.options.scenarios {
                2 * SEARCH_RUNS_GUESS * r / 3 + 2 * r
            } else {
                0
            }
            + if self.options.service_curve {
                curve_points
            } else {
                0
            }
            + if self.options.sensitivity {
                sensitivity_runs
            } else {
                0
            };

        // 1. Capacity search per candidate; the cheapest that meets wins.
        let mut candidates = Vec::new();
        for i in 0..self.candidates.len() {
            let label = format!("base on {}", self.candidates[i].name);
            let case = self.case(i, Multipliers::BASE, &label)?;
            let search = self.search(case)?;
            let candidate = &self.candidates[i];
            candidates.push(CandidateResult {
                name: candidate.name.clone(),
                hardware: candidate.params.hardware.name.clone(),
                gpus_per_replica: candidate.params.replica.gpus_per_replica,
                usd_per_gpu_hour: candidate.usd_per_gpu_hour,
                pricing_model: candidate.pricing_model,
                search,
            });
        }
        let chosen = cheapest(&candidates, &plan.reserve);
        let mut result = PlanResult {
            scenario_name: self.base.params().name.clone(),
            model: self.base.params().model.name.clone(),
            success_criterion: cost::success_criterion(self.base.params()),
            targets: self.checks.iter().map(|c| c.description.clone()).collect(),
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
            self.warnings.push(format!(
                "No candidate meets every target with up to {} replicas; there is no plan. {}",
                plan.max_replicas,
                result
                    .candidates
                    .iter()
                    .map(|c| format!("{}: {}", c.name, c.search.message))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
            return Ok(self.finish(result));
        };
        let base_case = self.case(chosen, Multipliers::BASE, "base")?;
        let min_replicas = result.candidates[chosen]
            .search
            .found
            .unwrap_or(plan.max_replicas);

        // 2. Service curve at the minimum fleet.
        let curve = if self.options.service_curve && !plan.service_curve.load_multipliers.is_empty()
        {
            Some(self.service_curve(chosen, min_replicas)?)
        } else {
            None
        };

        // 3. The plan.
        let recommendation = self.recommend(base_case, chosen, min_replicas, curve.as_ref())?;
        let steady = recommendation.steady_replicas;
        let reserve = plan.reserve.failure_reserve_replicas + plan.reserve.warm_idle_replicas;
        result.service_curve = curve;

        // 4. Base, best and worst.
        let base_search = result.candidates[chosen].search.clone();
        let base_at_plan = self.evaluate(base_case, steady, plan.replications)?;
        result.scenarios.push(ScenarioResult {
            name: "base".to_string(),
            multipliers: Multipliers::BASE,
            search: base_search,
            at_plan_fleet: base_at_plan,
            classes_at_plan_fleet: self.class_intervals(base_case, steady, plan.replications),
            cost_at_plan_fleet: self.cost_summary(base_case, steady, plan.replications, reserve),
        });
        if self.options.scenarios {
            for (name, m) in [("best", plan.best), ("worst", plan.worst)] {
                let case = self.case(chosen, m, name)?;
                let search = self.search(case)?;
                self.phase = format!("{name} case on the planned fleet");
                let at_plan_fleet = self.evaluate(case, steady, plan.replications)?;
                result.scenarios.push(ScenarioResult {
                    name: name.to_string(),
                    multipliers: m,
                    search,
                    at_plan_fleet,
                    classes_at_plan_fleet: self.class_intervals(case, steady, plan.replications),
                    cost_at_plan_fleet: self.cost_summary(case, steady, plan.replications, reserve),
                });
            }
        }

        // 5. Sensitivity at the planned fleet.
        if self.options.sensitivity && !plan.sensitivity.inputs.is_empty() {
            result.sensitivity = Some(self.sensitivity(chosen, steady)?);
        }

        // 6. The analytic estimate beside the simulation.
        result.analytic = Some(self.analytic_comparison(base_case, steady));
        result.recommendation = Some(recommendation);
        Ok(self.finish(result))
    }

    fn finish(&mut self, mut result: PlanResult) -> PlanResult {
        result.simulations = self.state.simulations;
        result.simulated_requests = self.state.simulated_requests;
        result.warnings.append(&mut self.warnings);
        result
    }

    /// Goodput and P(miss) against offered load for `replicas` of a candidate.
    fn service_curve(&mut self, candidate: usize, replicas: u32) -> Result<ServiceCurve, Halt> {
        self.phase = "service curve".to_string();
        let loads = self
            .base
            .params()
            .plan
            .service_curve
            .load_multipliers
            .clone();
        let reps = self.curve_replications();
        let mut points = Vec::with_capacity(loads.len());
        for load in loads {
            let case = self.case(
                candidate,
                Multipliers {
                    arrival_rate: load,
                    ..Multipliers::BASE
                },
                &format!("base at {load}x load"),
            )?;
            let evaluation = self.evaluate(case, replicas, reps)?;
            let runs: Vec<&RunSummary> = (0..reps)
                .map(|r| &self.state.runs[&(case, replicas, r)])
                .collect();
            points.push(curve_point(load, replicas, &runs, &evaluation));
        }
        let headroom = self.base.params().plan.service_curve.headroom_fraction;
        let knee_load = knee(&points);
        let sla_limit_load = sla_limit(&points);
        let last = points.last().map_or(1.0, |p| p.load);
        let operating_load = match (knee_load, sla_limit_load) {
            (Some(k), Some(s)) => (k * (1.0 - headroom)).min(s),
            (Some(k), None) => k * (1.0 - headroom),
            (None, Some(s)) => s,
            (None, None) => last,
        };
        Ok(ServiceCurve {
            candidate: self.candidates[candidate].name.clone(),
            replicas,
            points,
            knee_load,
            sla_limit_load,
            operating_load,
            headroom_fraction: headroom,
            replications: reps,
        })
    }

    fn recommend(
        &mut self,
        base_case: usize,
        candidate: usize,
        min_replicas: u32,
        curve: Option<&ServiceCurve>,
    ) -> Result<Recommendation, Halt> {
        let plan = self.base.params().plan.clone();
        let mut notes = Vec::new();
        let operating = curve.map(|c| c.operating_load);
        // Run at the operating point: the per-replica load there is what the
        // recommended fleet sees, so the fleet size follows from it.
        let steady = match operating {
            Some(op) if op < 1.0 => {
                let wanted = ((min_replicas as f64 / op) - 1e-9).ceil() as u32;
                let n = wanted.clamp(min_replicas, plan.max_replicas.max(min_replicas));
                notes.push(format!(
                    "{min_replicas} replicas meet every target, but above the operating point ({:.0}% of their base load); {n} run the base load at it{}.",
                    100.0 * op,
                    if n < wanted {
                        format!(" as nearly as max_replicas allows ({wanted} would)")
                    } else {
                        String::new()
                    }
                ));
                n
            }
            _ => min_replicas,
        };
        let reserve = plan.reserve.failure_reserve_replicas + plan.reserve.warm_idle_replicas;
        self.phase = "planned fleet".to_string();
        let evaluation = self.evaluate(base_case, steady, plan.replications)?;
        if !evaluation.meets {
            notes.push(format!(
                "The recommended {steady} replicas do not meet every target in all replications (worst check at {:.2}x its threshold).",
                evaluation.worst_ratio
            ));
        }
        // Scaling thresholds, from the runs at the operating point (the
        // per-replica load the recommended fleet is sized for).
        let curve_reps = self.curve_replications();
        let at_operating_point = match (curve, operating) {
            (Some(_), Some(op)) => {
                let case = self.case(
                    candidate,
                    Multipliers {
                        arrival_rate: op,
                        ..Multipliers::BASE
                    },
                    &format!("base at {op:.2}x load (operating point)"),
                )?;
                for r in 0..curve_reps {
                    self.run(case, min_replicas, r)?;
                }
                let runs: Vec<&RunSummary> = (0..curve_reps)
                    .map(|r| &self.state.runs[&(case, min_replicas, r)])
                    .collect();
                let mean = |f: &dyn Fn(&RunSummary) -> f64| {
                    runs.iter().map(|r| f(r)).sum::<f64>() / runs.len().max(1) as f64
                };
                Some(OperatingState {
                    goodput_per_replica_per_s: mean(&|r| {
                        r.overall.met as f64 / r.window_s / min_replicas as f64
                    }),
                    p99_waiting_per_replica: mean(&|r| r.p99_waiting_per_replica),
                    p99_kv_utilization: mean(&|r| r.p99_kv_utilization),
                })
            }
            _ => None,
        };
        let runs: Vec<&RunSummary> = (0..plan.replications)
            .filter_map(|r| self.state.runs.get(&(base_case, steady, r)))
            .collect();
        let observed_peak = runs
            .iter()
            .map(|r| r.peak_waiting_per_replica)
            .fold(0.0, f64::max);
        // A replica clears at most (its goodput x a deadline) requests within
        // that deadline: deeper queues hold requests that will miss it. With
        // the longest deadline that bounds admission; with the tightest it is
        // where the tightest class starts to miss, a signal to scale up.
        let deadlines = self.base.classes().iter().map(|c| c.deadline_s);
        let longest_deadline = deadlines.clone().fold(0.0, f64::max);
        let tightest_deadline = deadlines.fold(f64::INFINITY, f64::min);
        let admission = curve.map(|c| {
            let goodput_per_replica = c
                .knee_load
                .and_then(|k| c.points.iter().find(|p| p.load >= k))
                .or_else(|| {
                    c.points
                        .iter()
                        .max_by(|a, b| a.goodput_per_s.total_cmp(&b.goodput_per_s))
                })
                .map_or(0.0, |p| p.goodput_per_s / c.replicas as f64);
            ((goodput_per_replica * longest_deadline).ceil()).max(observed_peak.ceil()) as u64
        });
        let scale_up_queue = at_operating_point.map(|o| {
            let deadline_bound = (o.goodput_per_replica_per_s * tightest_deadline).ceil().max(1.0);
            if o.p99_waiting_per_replica > deadline_bound {
                notes.push(format!(
                    "At the operating point the waiting queue routinely reaches {:.0} per replica (p99), more than the {deadline_bound:.0} a replica clears within the tightest deadline: queue depth alone cannot tell a burst from overload. Scale on a queue that stays deep for longer than a burst, or on the age of the oldest request of the tightest class.",
                    o.p99_waiting_per_replica
                ));
            }
            deadline_bound.max(o.p99_waiting_per_replica.ceil())
        });
        if plan.pricing.usd_per_gpu_hour.is_none()
            && self.candidates[candidate].usd_per_gpu_hour.is_none()
        {
            notes.push("No price was given: costs are in GPU-hours only.".to_string());
        }
        if self.candidates[candidate].pricing_model == PricingModel::Spot {
            notes.push(
                "Spot capacity can be reclaimed at short notice: size the failure reserve for interruptions, not only failures."
                    .to_string(),
            );
        }
        let knee = curve.and_then(|c| c.knee_load);
        // The base load on the steady fleet, as a multiple of the base load
        // on the minimum fleet (assuming per-replica load is what matters).
        let base_load = min_replicas as f64 / steady as f64;
        let headroom_to_knee = knee.map(|k| 1.0 - base_load / k);
        let headroom_to_sla_limit = curve
            .and_then(|c| c.sla_limit_load)
            .map(|s| 1.0 - base_load / s);
        let budget = self.cost_summary(base_case, steady, plan.replications, reserve);
        Ok(Recommendation {
            candidate: self.candidates[candidate].name.clone(),
            min_replicas,
            steady_replicas: steady,
            failure_reserve_replicas: plan.reserve.failure_reserve_replicas,
            warm_idle_replicas: plan.reserve.warm_idle_replicas,
            total_replicas: steady + reserve,
            total_gpus: (steady + reserve)
                * self.candidates[candidate].params.replica.gpus_per_replica,
            admission_limit_per_replica: admission,
            observed_peak_queue_per_replica: observed_peak,
            scale_up_queue_per_replica: scale_up_queue,
            normal_queue_per_replica_p99: at_operating_point.map(|o| o.p99_waiting_per_replica),
            scale_up_kv_utilization: at_operating_point.map(|o| o.p99_kv_utilization),
            knee_load: knee,
            sla_limit_load: curve.and_then(|c| c.sla_limit_load),
            operating_load: operating,
            headroom_to_knee,
            headroom_to_sla_limit,
            classes: self.class_intervals(base_case, steady, plan.replications),
            evaluation,
            budget,
            notes,
        })
    }

    fn sensitivity(&mut self, candidate: usize, replicas: u32) -> Result<Sensitivity, Halt> {
        let settings = self.base.params().plan.sensitivity.clone();
        let reps = settings.replications;
        let delta = settings.delta;
        self.phase = "sensitivity".to_string();
        let base_case = self.case(candidate, Multipliers::BASE, "base")?;
        let base = self.point(base_case, Multipliers::BASE, replicas, reps)?;
        // P(miss) swings count relative to the base P(miss), or, when the
        // base has no misses, to the tightest miss target (1% without one).
        let tightest_epsilon = self
            .checks
            .iter()
            .filter(|c| c.metric == CheckMetric::MissProbability)
            .map(|c| c.threshold)
            .fold(0.01, f64::min);
        let p_miss_scale = if base.p_miss > 0.0 {
            base.p_miss
        } else {
            tightest_epsilon
        };
        let mut rows = Vec::new();
        for input in settings.inputs {
            self.phase = format!("sensitivity: {}", input.label());
            let mut ends = Vec::new();
            for factor in [1.0 - delta, 1.0 + delta] {
                let m = Multipliers::BASE.with(input, factor);
                let case = self.case(candidate, m, &format!("{} x{factor}", input.label()))?;
                ends.push(self.point(case, m, replicas, reps)?);
            }
            let (low, high) = (ends[0], ends[1]);
            let relative = |a: Option<f64>, b: Option<f64>, base: Option<f64>| match (a, b, base) {
                (Some(a), Some(b), Some(base)) if base > 0.0 => Some((b - a).abs() / base),
                _ => None,
            };
            let cost_swing = relative(
                low.usd_per_success,
                high.usd_per_success,
                base.usd_per_success,
            )
            .or_else(|| {
                relative(
                    low.gpu_hours_per_success,
                    high.gpu_hours_per_success,
                    base.gpu_hours_per_success,
                )
            });
            rows.push(SensitivityRow {
                input,
                label: input.label().to_string(),
                low_multiplier: 1.0 - delta,
                high_multiplier: 1.0 + delta,
                p_miss_low: low.p_miss,
                p_miss_high: high.p_miss,
                usd_per_success_low: low.usd_per_success,
                usd_per_success_high: high.usd_per_success,
                gpu_hours_per_success_low: low.gpu_hours_per_success,
                gpu_hours_per_success_high: high.gpu_hours_per_success,
                meets_low: low.meets,
                meets_high: high.meets,
                worst_ratio_low: low.worst_ratio,
                worst_ratio_high: high.worst_ratio,
                cost_swing: cost_swing.unwrap_or(0.0),
                p_miss_swing: (high.p_miss - low.p_miss).abs(),
                impact: cost_swing
                    .unwrap_or(0.0)
                    .max((high.p_miss - low.p_miss).abs() / p_miss_scale)
                    .max(ratio_swing(low.worst_ratio, high.worst_ratio)),
            });
        }
        rows.sort_by(|a, b| {
            b.impact
                .total_cmp(&a.impact)
                .then(b.cost_swing.total_cmp(&a.cost_swing))
                .then(a.input.cmp(&b.input))
        });
        Ok(Sensitivity {
            basis: self.basis(base_case),
            candidate: self.candidates[candidate].name.clone(),
            replicas,
            delta,
            replications: reps,
            base_p_miss: base.p_miss,
            base_usd_per_success: base.usd_per_success,
            base_gpu_hours_per_success: base.gpu_hours_per_success,
            rows,
        })
    }

    /// P(miss) and cost per success of `case` (priced with `multipliers`).
    fn point(
        &mut self,
        case: usize,
        multipliers: Multipliers,
        replicas: u32,
        reps: u32,
    ) -> Result<SensitivityPoint, Halt> {
        let evaluation = self.evaluate(case, replicas, reps)?;
        // Price changes cost, not the system: price the shared runs.
        let priced = self.state.cases[case].multipliers;
        self.state.cases[case].multipliers = multipliers;
        let reserve = self.base.params().plan.reserve.failure_reserve_replicas
            + self.base.params().plan.reserve.warm_idle_replicas;
        let cost = self.cost_summary(case, replicas, reps, reserve);
        self.state.cases[case].multipliers = priced;
        let p_miss = (0..reps)
            .map(|r| self.state.runs[&(case, replicas, r)].overall.p_miss)
            .sum::<f64>()
            / reps as f64;
        Ok(SensitivityPoint {
            p_miss,
            usd_per_success: cost.units.usd_per_success,
            gpu_hours_per_success: cost.units.gpu_hours_per_success,
            meets: evaluation.meets,
            worst_ratio: evaluation.worst_ratio,
        })
    }

    fn analytic_comparison(&mut self, case: usize, replicas: u32) -> AnalyticComparison {
        let c = &mut self.state.cases[case];
        let model = c.queue.get_or_insert_with(|| QueueModel::new(&c.scenario));
        let estimate: QueueEstimate = model.estimate(replicas);
        let runs: Vec<&RunSummary> = (0..self.base.params().plan.replications)
            .filter_map(|r| self.state.runs.get(&(case, replicas, r)))
            .collect();
        let mut rows = Vec::new();
        for (k, class) in estimate.classes.iter().enumerate() {
            let simulated = |f: &dyn Fn(&RunSummary) -> f64| -> f64 {
                mean_ci(&runs.iter().map(|r| f(r)).collect::<Vec<_>>()).0
            };
            for (metric, analytic, sim) in [
                ("P(miss)", class.p_miss, simulated(&|r| r.classes[k].p_miss)),
                (
                    "mean sojourn [s]",
                    class.mean_sojourn_s,
                    simulated(&|r| r.classes[k].sojourn.mean),
                ),
                (
                    "p50 sojourn [s]",
                    class.sojourn_p50_s,
                    simulated(&|r| r.classes[k].sojourn.p50),
                ),
                (
                    "p90 sojourn [s]",
                    class.sojourn_p90_s,
                    simulated(&|r| r.classes[k].sojourn.p90),
                ),
                (
                    "p99 sojourn [s]",
                    class.sojourn_p99_s,
                    simulated(&|r| r.classes[k].sojourn.p99),
                ),
            ] {
                rows.push(ComparisonRow::new(&class.name, metric, analytic, sim));
            }
        }
        AnalyticComparison {
            replicas,
            estimate,
            rows,
        }
    }
}

/// The fleet's state at the operating point (mean over the curve's seeds).
#[derive(Clone, Copy, Debug)]
struct OperatingState {
    goodput_per_replica_per_s: f64,
    p99_waiting_per_replica: f64,
    p99_kv_utilization: f64,
}

#[derive(Clone, Copy, Debug)]
struct SensitivityPoint {
    p_miss: f64,
    usd_per_success: Option<f64>,
    gpu_hours_per_success: Option<f64>,
    /// Every check (targets and sustainability) over the same seeds.
    meets: bool,
    worst_ratio: f64,
}

/// A percentile of a class without requests is NaN in a report: no delay.
fn no_data_is_zero(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x }
}

/// How far the worst check moves between the two ends of a sensitivity row,
/// in units of its threshold (infinite ratios count as 10: far off).
fn ratio_swing(low: f64, high: f64) -> f64 {
    (high.min(10.0) - low.min(10.0)).abs()
}

/// The simulations behind a list of evaluations (replication r of size n
/// counted once, however often it was used).
fn distinct_runs(evaluations: &[Evaluation]) -> u64 {
    let runs: std::collections::BTreeSet<(u32, u32)> = evaluations
        .iter()
        .flat_map(|e| (0..e.replications).map(move |r| (e.replicas, r)))
        .collect();
    runs.len() as u64
}

fn work_totals(run: &RunSummary) -> WorkTotals {
    let o = &run.overall;
    WorkTotals {
        arrived: o.arrived,
        met: o.met,
        prompt_tokens: o.prefill_tokens,
        output_tokens: o.output_tokens,
        busy_s: o.busy_s,
        busy_s_missed: o.busy_s_missed,
        busy_s_recomputed: o.busy_s_recomputed,
        prefill_s_per_token: run.prefill_s_per_token,
        decode_s_per_token: run.decode_s_per_token,
    }
}

/// "no configuration up to 512 replicas meets api: p99 sojourn <= 30 s; the
/// best reaches 41 s".
fn unattainable_message(max: u32, at_max: &Evaluation) -> String {
    let failing: Vec<String> = at_max
        .checks
        .iter()
        .filter(|c| !c.met)
        .map(|c| {
            if let Some(reason) = &c.not_evaluated {
                return format!("{} (not evaluated: {reason})", c.description);
            }
            let reached = match c.metric {
                CheckMetric::MissProbability | CheckMetric::BusyFraction => percent(c.mean),
                _ => duration(c.mean),
            };
            format!("{}; the best reaches {reached}", c.description)
        })
        .collect();
    format!(
        "no configuration up to {max} replicas meets {} (at {max} replicas, {} replications)",
        failing.join(", and "),
        at_max.replications
    )
}

/// The index of the cheapest candidate that meets every target: by total
/// cost with reserve when every such candidate has a price, else by GPUs.
fn cheapest(
    candidates: &[CandidateResult],
    reserve: &crate::params::plan::ReserveParams,
) -> Option<usize> {
    let k = reserve.failure_reserve_replicas + reserve.warm_idle_replicas;
    let feasible: Vec<usize> = (0..candidates.len())
        .filter(|&i| candidates[i].search.found.is_some())
        .collect();
    let all_priced = feasible
        .iter()
        .all(|&i| candidates[i].usd_per_gpu_hour.is_some());
    let key = |i: usize| -> f64 {
        let c = &candidates[i];
        let n = c.search.found.unwrap_or(0) + k;
        let gpus = (n * c.gpus_per_replica) as f64;
        if all_priced {
            gpus * c.usd_per_gpu_hour.unwrap_or(0.0)
        } else {
            gpus
        }
    };
    feasible
        .into_iter()
        .min_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)))
}

/// One point of a service curve: means over the runs (one per seed).
fn curve_point(
    load: f64,
    replicas: u32,
    runs: &[&RunSummary],
    evaluation: &Evaluation,
) -> CurvePoint {
    let mean = |f: &dyn Fn(&RunSummary) -> f64| {
        runs.iter().map(|r| f(r)).sum::<f64>() / runs.len().max(1) as f64
    };
    let offered_per_s = mean(&|r| r.overall.arrived as f64 / r.window_s);
    CurvePoint {
        load,
        offered_per_s,
        offered_per_replica_per_s: offered_per_s / replicas as f64,
        goodput_per_s: mean(&|r| r.overall.met as f64 / r.window_s),
        p_miss: mean(&|r| r.overall.p_miss),
        meets: evaluation.meets,
        worst_ratio: evaluation.worst_ratio,
        busy_fraction: mean(&|r| r.busy_fraction),
        p99_waiting_per_replica: mean(&|r| r.p99_waiting_per_replica),
        p99_kv_utilization: mean(&|r| r.p99_kv_utilization),
    }
}

/// The saturation knee: the load at the start of the first segment of the
/// curve whose marginal goodput is below half the marginal offered load.
fn knee(points: &[CurvePoint]) -> Option<f64> {
    points.windows(2).find_map(|w| {
        let offered = w[1].offered_per_s - w[0].offered_per_s;
        let goodput = w[1].goodput_per_s - w[0].goodput_per_s;
        (offered > 0.0 && goodput < 0.5 * offered).then_some(w[0].load)
    })
}

/// The highest load at which every target holds: between the last meeting
/// point and the first failing one after it, where the worst check's ratio
/// to its threshold crosses 1 (linear interpolation). `None` when every
/// point meets (the limit is beyond the curve); the first load when none does.
fn sla_limit(points: &[CurvePoint]) -> Option<f64> {
    let first_fail = points.iter().position(|p| !p.meets)?;
    if first_fail == 0 {
        return Some(points[0].load);
    }
    let (a, b) = (&points[first_fail - 1], &points[first_fail]);
    if !(a.worst_ratio.is_finite() && b.worst_ratio.is_finite()) || b.worst_ratio <= a.worst_ratio {
        return Some(a.load);
    }
    let t = ((1.0 - a.worst_ratio) / (b.worst_ratio - a.worst_ratio)).clamp(0.0, 1.0);
    Some(a.load + t * (b.load - a.load))
}

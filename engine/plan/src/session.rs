//! The planner's one pass loop ([`Passes`]), and [`PlanSession`], a plan
//! driven from outside on it, one batch of independent simulations at a
//! time (the page's pool of Web Workers; natively, `drive` in `mod.rs`
//! runs each batch on rayon's threads).

use std::collections::{BTreeMap, BTreeSet};

use crate::cost::same_but_prices;
use crate::jobs::{JobOutput, PlanJob};
use crate::model::scenario::Scenario;
use crate::runner::{Halt, PlanState, Runner};
use crate::{PlanError, PlanOptions, PlanProgress, PlanResult, check_budget, run_plan};

/// The pass loop every plan runs on: a pass over the plan's logic on the
/// runs so far (cheap: only simulations cost) is repeated until it
/// completes or needs runs nobody has made, which [`Passes::poll`] hands
/// out as jobs. Whatever runs them (rayon's threads natively, the page's
/// Web Workers) [`Passes::submit`]s their outputs and polls again.
pub(super) struct Passes<T> {
    pub scenario: Scenario,
    pub options: PlanOptions,
    pub state: PlanState,
    /// One pass: the whole plan, or the capacity searches alone.
    pass: fn(&mut Runner) -> Result<T, Halt>,
    /// The last pass's phase and estimate.
    phase: String,
    estimated: u64,
}

/// What one [`Passes::poll`] found.
pub(super) enum Passed<T> {
    /// The pass completed.
    Done(T),
    /// These simulations are needed next; `searched`: the pass got past
    /// the whole space's search.
    Jobs { jobs: Vec<PlanJob>, searched: bool },
}

impl<T> Passes<T> {
    pub fn new(
        scenario: Scenario,
        options: PlanOptions,
        pass: fn(&mut Runner) -> Result<T, Halt>,
    ) -> Passes<T> {
        Passes {
            scenario,
            options,
            state: PlanState::default(),
            pass,
            phase: String::new(),
            estimated: 1,
        }
    }

    /// The pass's value, or every simulation it needs next (those already
    /// submitted are never asked for again). The plan's budget is checked
    /// before its first simulation.
    pub fn poll(&mut self) -> Result<Passed<T>, PlanError> {
        if self.state.simulations == 0 {
            check_budget(&self.scenario, &self.options)?;
        }
        loop {
            self.state.pending.clear();
            let mut runner = Runner::new(&self.scenario, &self.options, &mut self.state);
            let passed = match (self.pass)(&mut runner) {
                Ok(value) => Passed::Done(value),
                Err(Halt::Failed(e)) => return Err(e),
                // Runs an earlier plan made come back at once, as a batch
                // of simulations would: the pass is repeated with them.
                Err(Halt::Pending) if runner.state.take_earlier_runs() => continue,
                Err(Halt::Pending) => Passed::Jobs {
                    jobs: runner.pending_jobs()?,
                    searched: runner.searched,
                },
            };
            self.phase = runner.phase.clone();
            self.estimated = runner.estimated;
            return Ok(passed);
        }
    }

    /// Stores a job's output (one this plan asked for; others are
    /// ignored), returning whether it was a new simulation.
    pub fn submit(&mut self, output: JobOutput) -> bool {
        let (key, summary) = output.into_parts();
        let before = self.state.simulations;
        if key.case < self.state.cases.len() {
            self.state.insert(key, summary);
        }
        self.state.simulations > before
    }

    /// Where the plan stands: the runs done, and the last pass's phase
    /// and estimate.
    pub fn progress(&self) -> PlanProgress {
        let done = self.state.simulations;
        let estimated = self
            .estimated
            .max(done + self.state.pending.len() as u64)
            .max(1);
        PlanProgress {
            phase: self.phase.clone(),
            simulations_done: done,
            simulations_estimated: estimated,
            fraction: (done as f64 / estimated as f64).clamp(0.0, 1.0),
            run_fraction: 0.0,
        }
    }
}

/// A plan driven from outside, for a caller that must keep control between
/// simulations and may run them on several workers (the page: a pool of Web
/// Workers, a progress bar, and Cancel by no longer driving it).
///
/// [`PlanSession::poll`] replays the plan's logic on the results so far
/// (cheap: only simulations cost) and returns either the result or the jobs
/// it needs next. The jobs are independent: run them anywhere, in any order,
/// [`PlanSession::submit`] each output, and poll again. The result equals
/// [`plan`](super::plan())'s, whatever ran the jobs: both run the same pass
/// loop.
///
/// ```no_run
/// use sojourn_model::{model::Scenario, params::ScenarioParams};
/// use sojourn_plan::{PlanOptions, PlanPoll, PlanSession};
/// let scenario = Scenario::try_from(ScenarioParams::overnight_batch()).expect("valid");
/// let mut session = PlanSession::new(scenario, PlanOptions::default());
/// let result = loop {
///     match session.poll().expect("plans") {
///         PlanPoll::Jobs(jobs) => {
///             for job in jobs {
///                 let output = job.run(&mut |_| true).expect("runs");
///                 session.submit(output);
///             }
///         }
///         PlanPoll::Done(result) => break result,
///     }
/// };
/// println!("{} simulations", result.simulations);
/// ```
pub struct PlanSession {
    /// The whole plan's pass loop.
    passes: Passes<PlanResult>,
    result: Option<Box<PlanResult>>,
    /// The search's result, once its runs are in (see
    /// [`PlanSession::provisional`]).
    provisional: Option<Box<PlanResult>>,
    /// The full pass has got past the search: its runs are in.
    searched: bool,
    /// The simulations there were when a provisional pass last found none,
    /// so that it is tried again only with more.
    provisional_tried: Option<u64>,
    /// Simulations run for this session's jobs (not taken from the session
    /// it reuses).
    simulated: u64,
    /// In a session reusing an earlier one's runs: the runs it asked for
    /// that the earlier session never made, by case label, with the fleet
    /// sizes.
    new_runs: BTreeMap<String, BTreeSet<u32>>,
    /// Whether it takes runs from an earlier session's.
    reusing: bool,
}

/// What one [`PlanSession::poll`] found.
#[derive(Clone, Debug)]
pub enum PlanPoll {
    /// These simulations are needed next.
    Jobs(Vec<PlanJob>),
    /// The plan is complete.
    Done(Box<PlanResult>),
}

impl PlanSession {
    pub fn new(scenario: Scenario, options: PlanOptions) -> PlanSession {
        PlanSession {
            passes: Passes::new(scenario, options, run_plan),
            result: None,
            provisional: None,
            searched: false,
            provisional_tried: None,
            simulated: 0,
            new_runs: BTreeMap::new(),
            reusing: false,
        }
    }

    /// A session for `scenario` that takes its simulations from
    /// `previous`'s where they are the same runs: when the two scenarios
    /// differ in prices alone ([`same_but_prices`]), with the same
    /// options, each run `previous` made is reused when this plan asks for
    /// it, so a price edit re-plans without simulating unless the new
    /// prices lead the search to fleets `previous` never tried. Otherwise
    /// it is a new session. Either way the result equals a new session's,
    /// the count of simulations included (a reused run counts as one).
    pub fn reusing(scenario: Scenario, options: PlanOptions, previous: PlanSession) -> PlanSession {
        let reuse = options == previous.passes.options
            && same_but_prices(scenario.params(), previous.passes.scenario.params());
        let mut session = PlanSession::new(scenario, options);
        if reuse {
            session.passes.state = PlanState::reusing(previous.passes.state);
            session.reusing = true;
        }
        session
    }

    /// The result, or every simulation the plan needs next (those already
    /// submitted are never asked for again).
    pub fn poll(&mut self) -> Result<PlanPoll, PlanError> {
        if let Some(result) = &self.result {
            return Ok(PlanPoll::Done(result.clone()));
        }
        match self.passes.poll()? {
            Passed::Done(result) => {
                let result = Box::new(result);
                self.result = Some(result.clone());
                Ok(PlanPoll::Done(result))
            }
            Passed::Jobs { jobs, searched } => {
                self.searched |= searched;
                if self.reusing {
                    for job in &jobs {
                        // "expected demand (H100 SXM x4, FCFS), 3
                        // replicas, seed 2": the case and configuration.
                        let label = job.label().rsplitn(3, ", ").last().unwrap_or_default();
                        let sizes = self.new_runs.entry(label.to_string()).or_default();
                        sizes.insert(job.key().replicas);
                    }
                }
                Ok(PlanPoll::Jobs(jobs))
            }
        }
    }

    /// The plan as far as the search alone decides it, before the demand
    /// cases, the service curve and sensitivity have run: the decision of
    /// `sojourn plan --search-only` (the configuration, its search, the
    /// fewest replicas meeting every target with their verdict and costs),
    /// without its configured fleet's verdict and the "why" (the search of
    /// the scenario's own settings it compares with runs beside the rest
    /// of the plan). Available once the search's runs are in, so a page
    /// can show the decision while the rest of the plan runs (on the
    /// default scenario after 10 of 79 simulations). The complete plan can
    /// still buy more replicas than this one (when the service curve puts
    /// the operating point below the base load). `None` until then, and
    /// once the plan is complete (its result supersedes it). Worked out on
    /// the first call once the search's runs are in, not by the poll that
    /// hands out the next jobs: a caller can start them first (on the
    /// default scenario it takes tens of milliseconds).
    pub fn provisional(&mut self) -> Option<&PlanResult> {
        if self.result.is_some() {
            return None;
        }
        if self.searched {
            self.try_provisional();
        }
        self.provisional.as_deref()
    }

    /// A pass of the search alone over the runs so far (once the full pass
    /// has got past the search), keeping its result if it needs no other
    /// run. It leaves no trace: the cases it
    /// registered are forgotten and the pending runs are the full pass's,
    /// so the plan is the same with or without it.
    fn try_provisional(&mut self) {
        let passes = &mut self.passes;
        let search_only = passes.options.search_only();
        let tried = self.provisional_tried == Some(passes.state.simulations);
        if self.provisional.is_some() || tried || search_only == passes.options {
            return;
        }
        self.provisional_tried = Some(passes.state.simulations);
        let pending = std::mem::take(&mut passes.state.pending);
        let cases = passes.state.cases.len();
        let mut runner = Runner::new(&passes.scenario, &search_only, &mut passes.state);
        runner.decision_only = true;
        if let Ok(result) = run_plan(&mut runner) {
            self.provisional = Some(Box::new(result));
        }
        passes.state.forget_cases_from(cases);
        passes.state.pending = pending;
    }

    /// Stores a job's output (one this session asked for; others are
    /// ignored).
    pub fn submit(&mut self, output: JobOutput) {
        if self.passes.submit(output) {
            self.simulated += 1;
        }
    }

    /// Where the plan stands.
    pub fn progress(&self) -> PlanProgress {
        self.passes.progress()
    }

    /// Simulations run so far (the plan's count: runs taken from the
    /// session it reuses included).
    pub fn simulations(&self) -> u64 {
        self.passes.state.simulations
    }

    /// Simulations actually run for this session: submitted outputs of the
    /// jobs it asked for, not the runs it took from the session it reuses.
    /// After a price-only edit, 0 when the plan was re-costed from the
    /// earlier runs alone.
    pub fn simulated(&self) -> u64 {
        self.simulated
    }

    /// Why a session reusing an earlier plan's runs needs new ones: which
    /// configurations and fleet sizes it asked for that the earlier plan
    /// never simulated ("expected demand (H100 SXM x4, FCFS) at 4 and
    /// 5 replicas"), each because the new prices move the plan's search
    /// (which fleets can beat the cheapest found, which configuration is
    /// chosen and so which fleets the cases, service curve and sensitivity
    /// run on). `None` when it asked for none.
    pub fn new_runs(&self) -> Option<String> {
        if self.new_runs.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .new_runs
            .iter()
            .map(|(label, sizes)| {
                let sizes: Vec<String> = sizes.iter().map(u32::to_string).collect();
                let sizes = match sizes.split_last() {
                    Some((last, [])) => last.clone(),
                    Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                    None => String::new(),
                };
                let noun = if self.new_runs[label].len() == 1 && sizes == "1" {
                    "replica"
                } else {
                    "replicas"
                };
                format!("{label} at {sizes} {noun}")
            })
            .collect();
        Some(parts.join("; "))
    }
}

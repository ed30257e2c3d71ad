//! [`PlanSession`]: a plan driven from outside, one batch of independent
//! simulations at a time (the page's pool of Web Workers).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::cost::same_but_prices;
use crate::jobs::{JobOutput, PlanJob};
use crate::model::scenario::Scenario;
use crate::runner::{Halt, PlanState, Runner};
use crate::{PlanError, PlanOptions, PlanProgress, PlanResult, check_budget, run_plan};

/// A plan driven from outside, for a caller that must keep control between
/// simulations and may run them on several workers (the page: a pool of Web
/// Workers, a progress bar, and Cancel by no longer driving it).
///
/// [`PlanSession::poll`] replays the plan's logic on the results so far
/// (cheap: only simulations cost) and returns either the result or the jobs
/// it needs next. The jobs are independent: run them anywhere, in any order,
/// [`PlanSession::submit`] each output, and poll again. The result equals
/// [`plan`](super::plan())'s, whatever ran the jobs.
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
    scenario: Scenario,
    options: PlanOptions,
    state: PlanState,
    result: Option<Box<PlanResult>>,
    /// Jobs handed out by the last poll and not yet submitted, for
    /// [`PlanSession::step`].
    queue: Vec<PlanJob>,
    /// The last pass's phase and estimate.
    phase: String,
    estimated: u64,
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
            queue: Vec::new(),
            phase: String::new(),
            estimated: 1,
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
        let reuse = options == previous.options
            && same_but_prices(scenario.params(), previous.scenario.params());
        let mut session = PlanSession::new(scenario, options);
        if reuse {
            session.state = PlanState::reusing(previous.state);
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
        if self.state.simulations == 0 {
            check_budget(&self.scenario, &self.options)?;
        }
        let (outcome, searched) = loop {
            self.state.pending.clear();
            let mut runner = Runner::new(&self.scenario, &self.options, &mut self.state);
            let outcome = match run_plan(&mut runner) {
                Ok(result) => Ok(result),
                Err(Halt::Failed(e)) => return Err(e),
                // Runs an earlier plan made come back at once, as a batch
                // of simulations would: the pass is repeated with them.
                Err(Halt::Pending) if runner.state.take_earlier_runs() => continue,
                Err(Halt::Pending) => Err(runner.pending_jobs()?),
            };
            self.phase = runner.phase.clone();
            self.estimated = runner.estimated;
            break (outcome, runner.searched);
        };
        match outcome {
            Ok(result) => {
                let result = Box::new(result);
                self.result = Some(result.clone());
                Ok(PlanPoll::Done(result))
            }
            Err(jobs) => {
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
        let search_only = self.options.search_only();
        let tried = self.provisional_tried == Some(self.state.simulations);
        if self.provisional.is_some() || tried || search_only == self.options {
            return;
        }
        self.provisional_tried = Some(self.state.simulations);
        let pending = std::mem::take(&mut self.state.pending);
        let cases = self.state.cases.len();
        let mut runner = Runner::new(&self.scenario, &search_only, &mut self.state);
        runner.decision_only = true;
        if let Ok(result) = run_plan(&mut runner) {
            self.provisional = Some(Box::new(result));
        }
        self.state.forget_cases_from(cases);
        self.state.pending = pending;
    }

    /// Stores a job's output (one this session asked for; others are
    /// ignored).
    pub fn submit(&mut self, output: JobOutput) {
        let (key, summary) = output.into_parts();
        if key.case < self.state.cases.len() {
            let before = self.state.simulations;
            self.state.insert(key, summary);
            self.simulated += self.state.simulations - before;
        }
    }

    /// Runs at most one simulation itself (for a caller with one worker).
    /// After `Done`, returns the result again.
    pub fn step(&mut self) -> Result<PlanStep, PlanError> {
        if self.queue.is_empty() {
            match self.poll()? {
                PlanPoll::Done(result) => return Ok(PlanStep::Done(result)),
                PlanPoll::Jobs(mut jobs) => {
                    jobs.reverse();
                    self.queue = jobs;
                }
            }
        }
        if let Some(job) = self.queue.pop() {
            let output = job.run(&mut |_| true)?;
            self.submit(output);
        }
        Ok(PlanStep::Running(self.progress()))
    }

    /// Where the plan stands.
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

    /// Simulations run so far (the plan's count: runs taken from the
    /// session it reuses included).
    pub fn simulations(&self) -> u64 {
        self.state.simulations
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

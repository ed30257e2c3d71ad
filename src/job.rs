//! The messages between the page and its simulation workers, and the
//! page's side of a plan: plain serde types, JSON on the wire, tested
//! natively. What they carry is the engine's own: the scenario,
//! [`RunSummary`], and the planner's [`PlanJob`] and [`JobOutput`].
//!
//! The page posts a [`JobRequest`] to an idle worker: `simulate` (the
//! single run on the configured fleet, with its best and worst cases) or
//! `plan_job` (one simulation of the plan). The worker answers with
//! [`WorkerMessage`]s tagged with the page's job id: `ready` once after it
//! starts; for a single run `progress`, `simulated` for each case and
//! `finished`; for a plan job `job_progress` and `job_done`; for a fit
//! (`fit`, sent by the calibration panel to its own worker) `fitted`;
//! `failed` if something stops it. [`PlanDispatch`] holds the plan itself on the page's
//! thread and hands its jobs out; [`JobController`] (`job/controller.rs`)
//! is the page's jobs as a plain state machine. See `docs/app.md`.

use std::collections::BTreeMap;

mod controller;
pub use controller::{Command, JobController, PlanStatus, Results, RunStatus, Shown, Touched};

use serde::{Deserialize, Serialize};
use sojourn_engine::NonFinite;
use sojourn_engine::calibration::FitResult;
use sojourn_engine::{
    JobOutput, PlanError, PlanJob, PlanOptions, PlanPoll, PlanProgress, PlanResult, PlanSession,
    RunKey, RunOptions, RunSummary, Scenario, ScenarioParams, format_count, report_cost,
};

/// The base, best and worst cases (the engine's, with the rule that prices
/// them): the `case` of a `simulated` message.
pub use sojourn_engine::Case;

/// What the page asks a worker to do. A worker gets a request only when it
/// is idle; the page stops a request by terminating its worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum JobRequest {
    /// Simulate the scenario on its configured fleet.
    Simulate {
        /// Increases with every job; answers about older jobs are ignored.
        id: u64,
        params: Box<ScenarioParams>,
        /// Also run the best and worst cases on the configured fleet.
        cases: bool,
    },
    /// Run one simulation of the plan of job `id`.
    PlanJob { id: u64, job: Box<PlanJob> },
    /// Fit the per-operation step-time model of `params` to the
    /// measurements in `text` (as `sojourn calibrate` reads them: the
    /// worker reads them again, so errors name their rows).
    Fit {
        id: u64,
        params: Box<ScenarioParams>,
        text: String,
    },
}

impl JobRequest {
    pub fn id(&self) -> u64 {
        match self {
            JobRequest::Simulate { id, .. }
            | JobRequest::PlanJob { id, .. }
            | JobRequest::Fit { id, .. } => *id,
        }
    }

    /// The stage a failure of this request belongs to.
    pub fn stage(&self) -> Stage {
        match self {
            JobRequest::Simulate { .. } => Stage::Simulate,
            JobRequest::PlanJob { .. } => Stage::Plan,
            JobRequest::Fit { .. } => Stage::Fit,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<JobRequest, String> {
        serde_json::from_str(text).map_err(|error| error.to_string())
    }
}

/// Which part of a job a message is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Simulate,
    Cases,
    Plan,
    /// A fit of the step-time model (the calibration panel's worker).
    Fit,
}

/// A message from a worker.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerMessage {
    /// The worker has loaded and listens for requests.
    Ready,
    /// How far the single run has got.
    Progress {
        id: u64,
        stage: Stage,
        /// Of the current stage, in \[0, 1\].
        #[serde_as(as = "NonFinite")]
        fraction: f64,
        /// What is being done, for the status line.
        label: String,
    },
    Simulated {
        id: u64,
        case: Case,
        /// The engine's summary of the run (its report without the
        /// per-request records, with the configured fleet's cost).
        result: Box<RunSummary>,
    },
    /// How far a plan job has got.
    JobProgress {
        id: u64,
        key: RunKey,
        /// Of the job, in \[0, 1\].
        #[serde_as(as = "NonFinite")]
        fraction: f64,
    },
    /// A plan job's output.
    JobDone { id: u64, output: Box<JobOutput> },
    /// A fit's result.
    Fitted { id: u64, result: Box<FitResult> },
    Failed {
        id: u64,
        stage: Stage,
        message: String,
    },
    /// The single run and its cases are done: the worker is free.
    Finished { id: u64 },
}

impl WorkerMessage {
    /// The job this message is about (`None` for `ready`).
    pub fn job_id(&self) -> Option<u64> {
        match self {
            WorkerMessage::Ready => None,
            WorkerMessage::Progress { id, .. }
            | WorkerMessage::Simulated { id, .. }
            | WorkerMessage::JobProgress { id, .. }
            | WorkerMessage::JobDone { id, .. }
            | WorkerMessage::Fitted { id, .. }
            | WorkerMessage::Failed { id, .. }
            | WorkerMessage::Finished { id } => Some(*id),
        }
    }

    /// Whether the worker has finished its request with this message (and
    /// is free for another).
    pub fn ends_request(&self) -> bool {
        matches!(
            self,
            WorkerMessage::JobDone { .. }
                | WorkerMessage::Fitted { .. }
                | WorkerMessage::Failed { .. }
                | WorkerMessage::Finished { .. }
        )
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<WorkerMessage, String> {
        serde_json::from_str(text).map_err(|error| error.to_string())
    }
}

/// The options the page plans with: the engine's defaults (the scenario's
/// plan section says the rest), so the CLI and the page agree.
pub fn plan_options() -> PlanOptions {
    PlanOptions::default()
}

/// The options the page simulates with: the engine's defaults, records
/// kept. The run holds every record anyway until its report is built;
/// keeping them lets `RunSummary::new` take the run's digest from them (a
/// report without records has the digest of no records), and the worker's
/// JSON never carries them.
pub fn run_options() -> RunOptions {
    RunOptions {
        keep_records: true,
        ..RunOptions::default()
    }
}

/// Arrivals simulated between two progress messages.
pub const ARRIVALS_PER_CHUNK: u32 = 10_000;

/// The page's side of a plan: the engine's [`PlanSession`], which decides
/// what to simulate (on the page's thread: a poll replays the plan's
/// decisions on the results so far, which is cheap), and the jobs of its
/// current batch, handed to workers one at a time. A batch's jobs are
/// independent, so they go to whichever worker is idle and come back in any
/// order; the session is polled again once every one is back. The result
/// is the engine's `plan`, whatever the number of workers.
pub struct PlanDispatch {
    session: PlanSession,
    /// The current batch's jobs not yet handed out, the next one last.
    waiting: Vec<PlanJob>,
    /// The jobs handed out and not yet back, with the fraction of each done.
    running: BTreeMap<RunKey, f64>,
}

/// What an idle worker should do for the plan.
#[derive(Debug)]
pub enum PlanNext {
    /// Run this job.
    Run(Box<PlanJob>),
    /// Nothing yet: the batch's other jobs are still running.
    Wait,
    /// The plan is complete.
    Done(Box<PlanResult>),
}

impl PlanDispatch {
    pub fn new(scenario: Scenario) -> PlanDispatch {
        PlanDispatch::reusing(scenario, None)
    }

    /// The plan of `scenario`, taking the runs of `previous` (an earlier
    /// plan's session) where they are the same simulations: after a
    /// price-only edit, all of them (see [`PlanSession::reusing`]).
    pub fn reusing(scenario: Scenario, previous: Option<PlanSession>) -> PlanDispatch {
        let session = match previous {
            Some(previous) => PlanSession::reusing(scenario, plan_options(), previous),
            None => PlanSession::new(scenario, plan_options()),
        };
        PlanDispatch {
            session,
            waiting: Vec::new(),
            running: BTreeMap::new(),
        }
    }

    /// Simulations run for this plan's own jobs, and which runs it needed
    /// that the plan it reuses never made (see [`PlanSession::simulated`]
    /// and [`PlanSession::new_runs`]).
    pub fn simulated(&self) -> (u64, Option<String>) {
        (self.session.simulated(), self.session.new_runs())
    }

    /// The session, with every run it holds, for a later plan to reuse.
    pub fn into_session(self) -> PlanSession {
        self.session
    }

    /// The next job for an idle worker, polling the session for the next
    /// batch once the current one is complete.
    pub fn next_job(&mut self) -> Result<PlanNext, PlanError> {
        if self.waiting.is_empty() && self.running.is_empty() {
            match self.session.poll()? {
                PlanPoll::Done(result) => return Ok(PlanNext::Done(result)),
                PlanPoll::Jobs(mut jobs) => {
                    jobs.reverse();
                    self.waiting = jobs;
                }
            }
        }
        Ok(match self.waiting.pop() {
            Some(job) => {
                self.running.insert(job.key(), 0.0);
                PlanNext::Run(Box::new(job))
            }
            None => PlanNext::Wait,
        })
    }

    /// The search's decision while the rest of the plan runs (see
    /// [`PlanSession::provisional`]).
    pub fn provisional(&mut self) -> Option<&PlanResult> {
        self.session.provisional()
    }

    /// Notes how far the running job `key` has got (a job not running is
    /// ignored).
    pub fn job_progress(&mut self, key: RunKey, fraction: f64) {
        if let Some(done) = self.running.get_mut(&key) {
            *done = fraction.clamp(0.0, 1.0);
        }
    }

    /// Takes a job's output; an output this plan is not waiting for (an
    /// older plan's, or one already back) is ignored.
    pub fn submit(&mut self, output: JobOutput) {
        if self.running.remove(&output.key()).is_some() {
            self.session.submit(output);
        }
    }

    /// Where the plan stands: simulations done out of the estimate, the
    /// running ones counted by the fraction of each done.
    pub fn progress(&self) -> PlanProgress {
        let progress = self.session.progress();
        let running: f64 = self.running.values().sum();
        let done = progress.simulations_done as f64 + running;
        PlanProgress {
            fraction: (done / progress.simulations_estimated as f64).clamp(0.0, 1.0),
            ..progress
        }
    }
}

/// Re-costs `summary`, a run of `case` of an earlier scenario, at the
/// prices of `params`, which differs from it in prices alone: the case's
/// cost as a fresh run of it would give, without simulating.
pub fn recost(summary: &mut RunSummary, case: Case, params: &ScenarioParams) {
    summary.cost = report_cost(&summary.report, &case.params(params));
}

/// The status line of a plan: "Planning: service curve (12 of about 80
/// simulations)".
pub fn plan_label(progress: &PlanProgress) -> String {
    format!(
        "Planning: {} ({} of about {} simulations)",
        progress.phase, progress.simulations_done, progress.simulations_estimated
    )
}

/// A benchmark fit's progress in words: "12 of at most 80 replays of the
/// points" (a fit that converges stops before the most).
pub fn fit_progress_label(done: u32, most: u32) -> String {
    format!(
        "{} of at most {} replays of the points",
        format_count(done.into()),
        format_count(most.into())
    )
}

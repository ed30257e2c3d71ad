//! The messages between the page and the simulation worker: plain serde
//! types, JSON on the wire, tested natively. What they carry is the
//! engine's own: the scenario, [`RunSummary`] and [`PlanResult`].
//!
//! The page posts a [`JobRequest`]; the worker answers with
//! [`WorkerMessage`]s tagged with the job's id: `ready` once after it starts,
//! then `progress` while it works, `simulated` for the base case and for the
//! best and worst cases on the configured fleet, `planned` with the
//! capacity plan, and `failed` if something stops it. See `docs/app.md`.

use serde::{Deserialize, Serialize};
use sojourn_engine::NonFinite;
use sojourn_engine::{PlanOptions, PlanResult, RunOptions, RunSummary, ScenarioParams};

/// The base, best and worst cases (the engine's, with the rule that prices
/// them): the `case` of a `simulated` message.
pub use sojourn_engine::Case;

/// What the page asks the worker to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRequest {
    /// Increases with every job; answers about older jobs are ignored.
    pub id: u64,
    pub params: ScenarioParams,
    /// Also run the best and worst cases on the configured fleet.
    pub cases: bool,
    /// Also run the capacity planner.
    pub plan: bool,
}

/// Which part of a job a message is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Simulate,
    Cases,
    Plan,
}

/// A message from the worker.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerMessage {
    /// The worker has loaded and listens for jobs.
    Ready,
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
    Planned {
        id: u64,
        plan: Box<PlanResult>,
    },
    Failed {
        id: u64,
        stage: Stage,
        message: String,
    },
    /// Every stage of the job is done.
    Finished {
        id: u64,
    },
}

impl WorkerMessage {
    /// The job this message is about (`None` for `ready`).
    pub fn job_id(&self) -> Option<u64> {
        match self {
            WorkerMessage::Ready => None,
            WorkerMessage::Progress { id, .. }
            | WorkerMessage::Simulated { id, .. }
            | WorkerMessage::Planned { id, .. }
            | WorkerMessage::Failed { id, .. }
            | WorkerMessage::Finished { id } => Some(*id),
        }
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

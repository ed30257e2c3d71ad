//! The messages between the page and the simulation worker, and what the
//! worker sends back: plain serde types, JSON on the wire, tested natively.
//!
//! The page posts a [`JobRequest`]; the worker answers with
//! [`WorkerMessage`]s tagged with the job's id: `ready` once after it starts,
//! then `progress` while it works, `simulated` for the base case and for the
//! best and worst cases on the configured fleet, `planned` with the
//! capacity plan, and `failed` if something stops it. See `docs/app.md`.

use serde::{Deserialize, Serialize};
use sojourn_engine::NonFinite;
use sojourn_engine::{
    ClassStats, Multipliers, PlanOptions, PlanResult, Quantiles, Report, Scenario, ScenarioParams,
    SeriesPoint,
};
use sojourn_engine::{ReportCost, report_cost};
use sojourn_engine::{nonfinite, nonfinite_pair};

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

/// The base scenario or one of its named overrides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Case {
    Base,
    Best,
    Worst,
}

impl Case {
    pub const ALL: [Case; 3] = [Case::Base, Case::Best, Case::Worst];

    pub fn label(self) -> &'static str {
        match self {
            Case::Base => "base",
            Case::Best => "best",
            Case::Worst => "worst",
        }
    }

    /// The multipliers of this case from the scenario's plan section.
    pub fn multipliers(self, params: &ScenarioParams) -> Multipliers {
        match self {
            Case::Base => Multipliers::BASE,
            Case::Best => params.plan.best,
            Case::Worst => params.plan.worst,
        }
    }

    /// The parameters simulated for this case (the plan section kept, so the
    /// cost of the case uses the same prices and reserve; prices are scaled by
    /// the case's price multiplier).
    pub fn params(self, params: &ScenarioParams) -> ScenarioParams {
        let multipliers = self.multipliers(params);
        let mut out = multipliers.apply(params);
        out.plan = params.plan.clone();
        if let Some(price) = &mut out.plan.pricing.usd_per_gpu_hour {
            *price *= multipliers.price;
        }
        out.plan.pricing.fixed_usd_per_month *= multipliers.price;
        out
    }
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
        result: Box<RunResult>,
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

/// Arrivals simulated between two progress messages.
pub const ARRIVALS_PER_CHUNK: u32 = 10_000;

/// What the page shows of one simulation: the report without its records,
/// with every non-finite number kept (JSON has none, see [`nonfinite`]).
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub scenario_name: String,
    pub seed: u64,
    pub replicas: u32,
    #[serde_as(as = "NonFinite")]
    pub horizon_s: f64,
    #[serde_as(as = "NonFinite")]
    pub warmup_s: f64,
    #[serde_as(as = "NonFinite")]
    pub end_s: f64,
    /// The report's digest of every per-request time, as 16 hex digits.
    pub digest: String,
    pub overall: ClassResult,
    pub classes: Vec<ClassResult>,
    pub series: Vec<SeriesPoint>,
    /// Fraction of the fleet's time spent executing steps.
    #[serde(with = "nonfinite")]
    pub utilization: f64,
    #[serde(with = "nonfinite")]
    pub rho: f64,
    #[serde(with = "nonfinite")]
    pub arrival_rate_per_s: f64,
    #[serde(with = "nonfinite")]
    pub saturation_rate_per_s: f64,
    #[serde(with = "nonfinite")]
    pub prefill_tokens_per_s: f64,
    #[serde(with = "nonfinite")]
    pub decode_tokens_per_s: f64,
    pub warnings: Vec<String>,
    /// Engine steps and events simulated.
    pub steps: u64,
    pub events: u64,
    /// The configured fleet's cost (steady replicas plus the plan's reserve).
    pub cost: ReportCost,
}

/// One class's statistics (or all classes'), as in [`ClassStats`].
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassResult {
    pub name: String,
    /// NaN for the overall row when the classes' deadlines differ.
    #[serde(with = "nonfinite")]
    pub deadline_s: f64,
    pub arrived: u64,
    pub met: u64,
    pub late: u64,
    pub rejected: u64,
    pub timed_out: u64,
    pub unfinished: u64,
    #[serde(with = "nonfinite")]
    pub p_miss: f64,
    #[serde(with = "nonfinite_pair")]
    pub p_miss_ci95: [f64; 2],
    #[serde(with = "nonfinite")]
    pub goodput_per_h: f64,
    pub sojourn: QuantileResult,
    pub queue_wait: QuantileResult,
    pub ttft: QuantileResult,
    pub tpot: QuantileResult,
    /// (sojourn \[s\], fraction of arrivals done within it).
    #[serde_as(as = "Vec<[NonFinite; 2]>")]
    pub cdf: Vec<[f64; 2]>,
    pub prefill_tokens: u64,
    pub decode_tokens: u64,
    pub preemptions: u64,
}

impl ClassResult {
    fn of(stats: &ClassStats) -> ClassResult {
        ClassResult {
            name: stats.name.clone(),
            deadline_s: stats.deadline_s,
            arrived: stats.arrived,
            met: stats.met,
            late: stats.late,
            rejected: stats.rejected,
            timed_out: stats.timed_out,
            unfinished: stats.unfinished,
            p_miss: stats.p_miss,
            p_miss_ci95: stats.p_miss_ci95,
            goodput_per_h: stats.goodput_per_h,
            sojourn: QuantileResult::of(&stats.sojourn),
            queue_wait: QuantileResult::of(&stats.queue_wait),
            ttft: QuantileResult::of(&stats.ttft),
            tpot: QuantileResult::of(&stats.tpot),
            cdf: stats
                .cdf
                .iter()
                .copied()
                .filter(|[t, f]| t.is_finite() && f.is_finite())
                .collect(),
            prefill_tokens: stats.prefill_tokens,
            decode_tokens: stats.decode_tokens,
            preemptions: stats.preemptions,
        }
    }
}

/// Percentiles of a time \[s\]; infinite where requests never got there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuantileResult {
    pub count: u64,
    #[serde(with = "nonfinite")]
    pub mean: f64,
    #[serde(with = "nonfinite")]
    pub p50: f64,
    #[serde(with = "nonfinite")]
    pub p90: f64,
    #[serde(with = "nonfinite")]
    pub p99: f64,
    #[serde(with = "nonfinite")]
    pub p999: f64,
    #[serde(with = "nonfinite")]
    pub max: f64,
}

impl QuantileResult {
    fn of(q: &Quantiles) -> QuantileResult {
        QuantileResult {
            count: q.count,
            mean: q.mean,
            p50: q.p50,
            p90: q.p90,
            p99: q.p99,
            p999: q.p999,
            max: q.max,
        }
    }
}

/// The configured fleet's cost over the measured window, attributed to the
/// run's requests by the engine's cost model.
impl RunResult {
    /// The page's view of `report`, a run of `scenario`.
    pub fn of(report: &Report, scenario: &Scenario) -> RunResult {
        RunResult {
            scenario_name: report.scenario_name.clone(),
            seed: report.seed,
            replicas: report.replicas,
            horizon_s: report.horizon_s,
            warmup_s: report.warmup_s,
            end_s: report.end_s,
            digest: format!("{:016x}", report.digest()),
            overall: ClassResult::of(&report.overall),
            classes: report.classes.iter().map(ClassResult::of).collect(),
            series: report.series.clone(),
            utilization: report.utilization,
            rho: report.load.rho,
            arrival_rate_per_s: report.load.arrival_rate_per_s,
            saturation_rate_per_s: report.load.saturation_rate_per_s,
            prefill_tokens_per_s: report.prefill_tokens_per_s,
            decode_tokens_per_s: report.decode_tokens_per_s,
            warnings: report.warnings.clone(),
            steps: report.engine.steps,
            events: report.engine.events,
            cost: report_cost(report, scenario.params()),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

//! The report's public types and their JSON shape: [`Report`], its rows
//! ([`ClassStats`]), their percentiles ([`Quantiles`]), [`EngineStats`] and
//! [`BatchStats`].
//! The JSON is a public format (the app and saved files read it): field
//! names and order are part of it.

use serde::{Deserialize, Serialize};

use crate::model::analytic::LoadEstimate;
use crate::serde_float::{NonFinite, nonfinite};
use crate::sim::{RequestRecord, SeriesPoint};

/// Percentiles of a time \[s\]. Percentiles count every request of the
/// population; one that falls among requests that never reached the event
/// is infinite (`"inf"` in JSON, see [`NonFinite`](crate::serde_float::NonFinite)). `mean` and
/// `max` are over the finite values (NaN, `null`, when there are none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// Requests with a finite value.
    pub count: u64,
    #[serde(with = "nonfinite")]
    pub mean: f64,
    #[serde(with = "nonfinite")]
    pub p50: f64,
    #[serde(with = "nonfinite")]
    pub p90: f64,
    #[serde(with = "nonfinite")]
    pub p95: f64,
    #[serde(with = "nonfinite")]
    pub p99: f64,
    #[serde(with = "nonfinite")]
    pub p999: f64,
    #[serde(with = "nonfinite")]
    pub max: f64,
}

/// Statistics of one class, or of all classes together.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassStats {
    pub name: String,
    /// The class deadline \[s\] (NaN for the overall row when classes differ).
    #[serde(with = "nonfinite")]
    pub deadline_s: f64,
    pub arrived: u64,
    pub met: u64,
    pub late: u64,
    pub rejected: u64,
    pub timed_out: u64,
    pub unfinished: u64,
    /// P(S > deadline), misses over arrivals (NaN with no arrivals).
    #[serde(with = "nonfinite")]
    pub p_miss: f64,
    /// 95% Wilson interval of `p_miss` within this run (sampling error of
    /// one seed, treating requests as independent; replications give a
    /// more honest interval).
    #[serde_as(as = "[NonFinite; 2]")]
    pub p_miss_ci95: [f64; 2],
    /// Requests meeting the SLA per hour of the measured window.
    #[serde_as(as = "NonFinite")]
    pub goodput_per_h: f64,
    /// Sojourn time (queue + service) of all arrivals; non-completed are infinite.
    pub sojourn: Quantiles,
    /// Arrival to first scheduled step.
    pub queue_wait: Quantiles,
    /// Arrival to first output token.
    pub ttft: Quantiles,
    /// Time per output token after the first, of completed requests.
    pub tpot: Quantiles,
    /// Points (sojourn \[s\], fraction of arrivals completed within it) of the
    /// sojourn CDF, log-spaced in time, for charts.
    #[serde_as(as = "Vec<[NonFinite; 2]>")]
    pub cdf: Vec<[f64; 2]>,
    /// Prompt tokens computed (cache hits excluded, recomputation included).
    pub prefill_tokens: u64,
    pub decode_tokens: u64,
    pub preemptions: u64,
    /// Replica-seconds attributed to the class's requests.
    #[serde_as(as = "NonFinite")]
    pub busy_s: f64,
    /// Replica-seconds attributed to requests that missed.
    #[serde_as(as = "NonFinite")]
    pub busy_s_missed: f64,
    /// Replica-seconds spent on tokens later discarded by preemption.
    #[serde_as(as = "NonFinite")]
    pub busy_s_recomputed: f64,
}

/// A figure absent from a report written before it existed.
fn nan() -> f64 {
    f64::NAN
}

/// Counters of the engine's own work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineStats {
    pub requests: u64,
    /// Engine steps simulated (skipped ones included).
    pub steps: u64,
    /// Events processed: one per executed step or skipped run of steps.
    pub events: u64,
    /// Work done, in the units of the run's budget
    /// ([`RunOptions::max_work`](crate::sim::RunOptions::max_work)): events, two
    /// a request sent, a quarter a replica visit.
    pub work: u64,
}

/// The mean, median and 99th percentile of a per-step figure (the smallest
/// x with F(x) >= p), over steps or over step time; NaN without steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepSpread {
    #[serde(with = "nonfinite")]
    pub mean: f64,
    #[serde(with = "nonfinite")]
    pub p50: f64,
    #[serde(with = "nonfinite")]
    pub p99: f64,
}

/// A per-step figure two ways: each step weighted by its duration (what a
/// typical moment of work looks like) or every step alike.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepFigure {
    pub by_time: StepSpread,
    pub by_step: StepSpread,
}

/// KV cache use over a stretch of the run (a whole number of series
/// intervals), as fractions of capacity.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KvUse {
    #[serde_as(as = "NonFinite")]
    pub start_s: f64,
    #[serde_as(as = "NonFinite")]
    pub end_s: f64,
    /// The mean of the fleet's KV use at the series samples in the stretch.
    #[serde_as(as = "NonFinite")]
    pub mean: f64,
    /// The largest fraction of its KV blocks one replica held in a step
    /// starting in the stretch.
    #[serde_as(as = "NonFinite")]
    pub peak: f64,
}

/// What the engine steps were like, over every step of the run (warm-up
/// and drain included), all replicas together (docs/engine.md, Batch
/// statistics).
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchStats {
    pub steps: u64,
    /// Steps per second of step time: how fast one busy replica steps
    /// (1 / the mean step duration).
    #[serde_as(as = "NonFinite")]
    pub steps_per_s: f64,
    /// Sequences in a step (decodes and prefill chunks): the running batch.
    pub batch_size: StepFigure,
    /// Tokens computed in a step.
    pub tokens_per_step: StepFigure,
    /// Replica-seconds of step time on prompt tokens computed for the first
    /// time: each step's duration is split in proportion to its tokens.
    #[serde_as(as = "NonFinite")]
    pub prefill_s: f64,
    /// ... on decode tokens.
    #[serde_as(as = "NonFinite")]
    pub decode_s: f64,
    /// ... on prompt tokens a preempted request computes again (those it
    /// had computed before its preemption).
    #[serde_as(as = "NonFinite")]
    pub recompute_s: f64,
    /// KV cache use over time, in at most 24 stretches.
    pub kv_use: Vec<KvUse>,
}

/// Everything a run produces.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub scenario_name: String,
    pub seed: u64,
    #[serde_as(as = "NonFinite")]
    pub horizon_s: f64,
    #[serde_as(as = "NonFinite")]
    pub warmup_s: f64,
    /// When the simulation stopped (horizon + drain) \[s\].
    #[serde_as(as = "NonFinite")]
    pub end_s: f64,
    pub replicas: u32,
    pub overall: ClassStats,
    pub classes: Vec<ClassStats>,
    pub series: Vec<SeriesPoint>,
    /// Replica-seconds spent executing steps, over the whole run.
    #[serde_as(as = "NonFinite")]
    pub busy_s: f64,
    /// Fraction of replica-time spent executing steps, over the horizon or
    /// until the last step if the fleet worked on past the horizon.
    #[serde_as(as = "NonFinite")]
    pub utilization: f64,
    /// Over the horizon.
    #[serde_as(as = "NonFinite")]
    pub prefill_tokens_per_s: f64,
    #[serde_as(as = "NonFinite")]
    pub decode_tokens_per_s: f64,
    /// The busy period, from the first arrival to the last completion
    /// (warm-up included) \[s\]; NaN when nothing completed.
    #[serde(default = "nan", with = "nonfinite")]
    pub busy_period_s: f64,
    /// Output tokens of the completed requests per second of the busy
    /// period: the figure offline throughput tables give.
    #[serde(default = "nan", with = "nonfinite")]
    pub output_tokens_per_s: f64,
    /// Prompt and output tokens of the completed requests per second of
    /// the busy period.
    #[serde(default = "nan", with = "nonfinite")]
    pub total_tokens_per_s: f64,
    pub load: LoadEstimate,
    pub warnings: Vec<String>,
    pub engine: EngineStats,
    /// What the engine steps were like (absent from reports written before
    /// it existed: no steps).
    #[serde(default)]
    pub batches: BatchStats,
    /// Every request, in arrival order (empty when the run was asked not to
    /// keep them). Not serialised: export it separately.
    #[serde(skip)]
    pub records: Vec<RequestRecord>,
}

//! Layer 1, the scenario as a user writes it: permissive serde types (what
//! URLs, forms and files hold), their defaults and the named presets.
//!
//! Nothing here is validated and nothing here depends on a later layer:
//! [`Scenario::try_from`](crate::model::Scenario::try_from) (in `model`) checks a [`ScenarioParams`]
//! once and derives what the simulator needs.

use serde::{Deserialize, Serialize};

pub mod csv_text;
pub mod dist;
mod hardware;
pub mod lengths;
mod load;
mod model;
mod parse;
pub mod plan;
pub mod presets;
pub mod search;
pub mod step_time;
pub mod trace;

pub use dist::{DistParams, Shape};
pub use hardware::{HardwareParams, Interconnect, InterconnectParams};
pub use lengths::{CsvError, LengthsParams, lengths_from_csv};
pub use load::LoadParams;
pub use model::{Dtype, MlaParams, ModelParams, MoeParams, SlidingWindowParams};
pub use parse::scenario_params_from_json;
pub use plan::{PlanParams, PricingParams};
pub use step_time::{CudaGraphs, OperationsParams, StepTimeParams};

/// The scenario format version written by this build. Older versions keep
/// decoding: fields added later have defaults.
pub const FORMAT_VERSION: u32 = 1;

/// Seconds in a day.
pub const DAY_S: f64 = 86_400.0;
/// Longest horizon \[s\] (one year), and the latest time a replayed request
/// may arrive: every time a run reaches stays where a double still resolves
/// a step's milliseconds (its unit in the last place is 4 ns at a year).
pub const MAX_HORIZON_S: f64 = 365.0 * DAY_S;

/// Everything a run needs, as written by a user. Units are in the field names.
///
/// A file must give the classes, the model and the hardware: there is no
/// neutral value for them, so omitting one is an error naming it. Every
/// other section may be left out and then takes neutral values (one
/// replica, vLLM's engine defaults, no price, no targets), never the example
/// of [`ScenarioParams::overnight_batch`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioParams {
    /// Format version (see [`FORMAT_VERSION`]); a file without one is read
    /// as this build's.
    #[serde(default = "format_version")]
    pub version: u32,
    #[serde(default)]
    pub name: String,
    /// Request classes (tenants, products).
    pub classes: Vec<ClassParams>,
    pub model: ModelParams,
    pub hardware: HardwareParams,
    #[serde(default)]
    pub replica: ReplicaParams,
    #[serde(default)]
    pub engine: EngineParams,
    #[serde(default)]
    pub cluster: ClusterParams,
    #[serde(default)]
    pub step_time: StepTimeParams,
    /// Calibration multiplier on every step time (1 = as modelled; 1.2 =
    /// steps 20% slower than the model, e.g. fitted to a measured benchmark).
    #[serde(default = "one")]
    pub step_time_scale: f64,
    #[serde(default)]
    pub run: RunParams,
    /// What the capacity planner needs: prices, reserve, SLA targets,
    /// candidate hardware, best and worst cases (see `sojourn_plan::plan`).
    #[serde(default)]
    pub plan: PlanParams,
    /// Where an exported file came from (the page writes its scenario's
    /// name, link, date and version there): read and ignored, so that an
    /// exported file imports as it is, and never part of the scenario.
    #[serde(default, skip_serializing, rename = "provenance")]
    pub export_provenance: serde::de::IgnoredAny,
}

fn format_version() -> u32 {
    FORMAT_VERSION
}

fn one() -> f64 {
    1.0
}

fn day() -> f64 {
    DAY_S
}

fn constant_one() -> DistParams {
    DistParams::constant(1.0)
}

/// One request class: its arrivals, its token lengths and its SLA.
///
/// The name, the rate and both lengths must be given; the rest defaults to
/// plain Poisson arrivals (batches of one), no time-of-day profile, no
/// prefix cache, priority 0, the default 24 h deadline and no timeout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassParams {
    pub name: String,
    /// Batches arrive as a Poisson process at this rate \[batches/hour\].
    pub batches_per_hour: f64,
    /// Requests per batch, X (constant 1 gives plain Poisson arrivals).
    #[serde(default = "constant_one")]
    pub batch_size: DistParams,
    /// Optional multipliers on the batch rate for each hour of the day
    /// (24 values, hour 0 = midnight): a non-homogeneous Poisson process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_of_day: Option<Vec<f64>>,
    /// Prompt length I \[tokens\].
    pub input_tokens: DistParams,
    /// Output length O \[tokens\].
    pub output_tokens: DistParams,
    /// How I and O go together: absent, independently (each from its own
    /// distribution above); otherwise correlated or drawn as pairs from a
    /// table (see [`LengthsParams`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lengths: Option<LengthsParams>,
    /// Fraction of each prompt found in the prefix cache; those tokens skip
    /// prefill (the last prompt token is always computed).
    #[serde(default)]
    pub prefix_cache_hit: f64,
    /// Scheduling priority: lower is more urgent (vLLM's convention).
    #[serde(default)]
    pub priority: i32,
    /// SLA deadline on the sojourn time (queue + service) \[s\].
    #[serde(default = "day")]
    pub deadline_s: f64,
    /// The client abandons a request not finished after this long \[s\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    /// How many requests the class sends and when: an open stream over the
    /// horizon (the default), a fixed count, all at once, or closed-loop
    /// clients (see [`LoadParams`]).
    #[serde(default, skip_serializing_if = "LoadParams::is_open")]
    pub load: LoadParams,
}

/// How a serving replica is laid out on accelerators.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplicaParams {
    /// GPUs per replica (tensor-parallel degree).
    pub gpus_per_replica: u32,
    /// Fraction of each GPU's memory the engine may use (vLLM's
    /// `gpu_memory_utilization`).
    pub gpu_memory_utilization: f64,
    /// Memory per GPU the engine keeps outside the KV cache \[GiB\]: the
    /// activation peak of its profiling pass and memory PyTorch does not
    /// allocate (NCCL and all-reduce buffers). `None`: what vLLM's
    /// profiling takes, estimated from the model and the engine's settings
    /// (`MemoryBudget::profiled_reserve_gib`, docs/engine.md "Memory").
    #[serde(default)]
    pub runtime_reserve_gib: Option<f64>,
}

/// Order in which the waiting queue is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Discipline {
    /// First come, first served; preempted requests go back to the front.
    Fcfs,
    /// Lowest priority value first, then earliest arrival.
    Priority,
    /// Fewest prompt tokens still to compute first.
    ShortestInputFirst,
    /// Earliest absolute deadline first.
    EarliestDeadlineFirst,
}

/// What a step takes first: the running decodes, or the waiting prompts
/// (docs/engine.md, "Schedules").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// vLLM V1: every running decode, then (chunked) prefill up to the token
    /// budget, in one step.
    #[default]
    DecodeFirst,
    /// vLLM V0's default scheduler (chunked prefill off): when the head of
    /// the waiting queue can be admitted, a step of whole prompts only, the
    /// decodes waiting; otherwise a step of decodes only.
    PrefillFirst,
}

impl Schedule {
    fn is_decode_first(&self) -> bool {
        *self == Schedule::DecodeFirst
    }
}

/// The serving engine's knobs (vLLM V1 names).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineParams {
    /// Most sequences in one step's batch.
    pub max_num_seqs: u32,
    /// Token budget per step.
    pub max_num_batched_tokens: u32,
    /// Most prompt tokens one request may prefill in a step (chunked prefill);
    /// 0 means no per-request limit beyond the budget.
    pub long_prefill_threshold: u32,
    /// KV cache block size \[tokens\].
    pub block_size: u32,
    pub discipline: Discipline,
    /// Bound m on each replica's waiting queue; arrivals beyond it are
    /// rejected. `None` is unbounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_waiting: Option<u32>,
    /// Longest sequence (prompt + output) served; longer requests are
    /// rejected on arrival. `None` means whatever fits in the KV cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<u32>,
    /// Decodes first (the default, and every file written before the
    /// choice existed) or prefills first. Left out of the JSON when
    /// decode-first, so saved scenarios and links read as before.
    #[serde(skip_serializing_if = "Schedule::is_decode_first")]
    pub schedule: Schedule,
    /// vLLM V1's automatic prefix caching (on by default there), for what
    /// it does to a preempted request: its blocks go back to the free queue
    /// still holding its KV, and when it is scheduled again the full blocks
    /// no allocation has taken since are a cache hit, so it recomputes only
    /// what was evicted (docs/engine.md). Off: every preemption recomputes
    /// the whole context, as vLLM V0 does by default. Prompt prefixes shared
    /// between requests are each class's `prefix_cache_hit`. Left out of the
    /// JSON when off, so files written before it read as before.
    #[serde(skip_serializing_if = "is_false")]
    pub prefix_caching: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How arrivals are spread over replicas.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Router {
    RoundRobin,
    /// Fewest requests waiting or running.
    JoinShortestQueue,
    /// Fewest KV blocks in use (ties: fewest requests).
    LeastKvLoad,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClusterParams {
    pub replicas: u32,
    pub router: Router,
}

/// Simulated time, warm-up and seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunParams {
    /// Arrivals are generated on [0, horizon) \[s\].
    pub horizon_s: f64,
    /// Requests arriving before this are simulated but left out of statistics \[s\].
    pub warmup_s: f64,
    /// After the horizon the fleet keeps working on what it holds for this
    /// long \[s\]; `None` means the longest deadline, after which every request's
    /// SLA outcome is settled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_s: Option<f64>,
    pub seed: u64,
    /// Width of a time-series interval \[s\].
    pub series_interval_s: f64,
}

impl ScenarioParams {
    /// The case of the source documents: overnight batch jobs with a 24 h
    /// SLA beside a steady API stream, Llama 3.1 8B on two H100s, with an
    /// example price (labelled as such), and the per-operation step-time
    /// model calibrated in `docs/calibration.md`. The page opens on it; a
    /// scenario file that omits a section gets neutral values instead (see
    /// the field attributes above), never these: a file without `step_time`
    /// keeps the single roofline, the model every earlier file was written
    /// for.
    pub fn overnight_batch() -> Self {
        ScenarioParams {
            version: FORMAT_VERSION,
            name: "Overnight batch jobs, 24 h SLA".to_string(),
            classes: vec![
                ClassParams {
                    name: "nightly-batch".to_string(),
                    batches_per_hour: 3.0,
                    batch_size: DistParams::log_normal(400.0, 2000.0).clamped(None, Some(20_000.0)),
                    time_of_day: Some(vec![
                        2.0, 2.0, 2.0, 2.0, 1.5, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                        0.5, 0.5, 0.5, 1.0, 1.0, 1.5, 1.5, 2.0, 2.0,
                    ]),
                    input_tokens: DistParams::log_normal(1500.0, 6000.0)
                        .clamped(None, Some(32_000.0)),
                    output_tokens: DistParams::log_normal(250.0, 1000.0)
                        .clamped(None, Some(8_000.0)),
                    prefix_cache_hit: 0.2,
                    priority: 1,
                    ..ClassParams::default()
                },
                ClassParams {
                    name: "api".to_string(),
                    batches_per_hour: 1800.0,
                    batch_size: DistParams::constant(1.0),
                    time_of_day: None,
                    input_tokens: DistParams::log_normal(800.0, 3000.0)
                        .clamped(None, Some(16_000.0)),
                    output_tokens: DistParams::log_normal(200.0, 600.0)
                        .clamped(None, Some(4_000.0)),
                    prefix_cache_hit: 0.5,
                    priority: 0,
                    deadline_s: 60.0,
                    ..ClassParams::default()
                },
            ],
            model: presets::llama_3_1_8b(),
            hardware: presets::h100_sxm(),
            replica: ReplicaParams::default(),
            // vLLM V1's default: preempted requests keep their cached blocks.
            engine: EngineParams {
                prefix_caching: true,
                ..EngineParams::default()
            },
            cluster: ClusterParams {
                replicas: 2,
                ..ClusterParams::default()
            },
            step_time: StepTimeParams::Operations(OperationsParams::default()),
            step_time_scale: 1.0,
            run: RunParams::default(),
            // An example price, labelled as such, so that the first page
            // shows cost per successful request; users replace it with theirs.
            plan: PlanParams {
                pricing: PricingParams {
                    usd_per_gpu_hour: Some(3.0),
                    price_date: "2026-11-01".to_string(),
                    provider_region: "example on-demand H100 price; replace with your quote"
                        .to_string(),
                    ..PricingParams::default()
                },
                ..PlanParams::default()
            },
            export_provenance: serde::de::IgnoredAny,
        }
    }
}

impl Default for ClassParams {
    fn default() -> Self {
        ClassParams {
            name: "class".to_string(),
            batches_per_hour: 60.0,
            batch_size: DistParams::constant(1.0),
            time_of_day: None,
            input_tokens: DistParams::constant(1000.0),
            output_tokens: DistParams::constant(200.0),
            lengths: None,
            prefix_cache_hit: 0.0,
            priority: 0,
            deadline_s: DAY_S,
            timeout_s: None,
            load: LoadParams::Open,
        }
    }
}

impl Default for ReplicaParams {
    fn default() -> Self {
        ReplicaParams {
            gpus_per_replica: 1,
            gpu_memory_utilization: 0.9,
            runtime_reserve_gib: None,
        }
    }
}

impl Default for EngineParams {
    fn default() -> Self {
        EngineParams {
            max_num_seqs: 256,
            max_num_batched_tokens: 8192,
            long_prefill_threshold: 512,
            block_size: 16,
            discipline: Discipline::Fcfs,
            max_waiting: None,
            max_model_len: None,
            schedule: Schedule::DecodeFirst,
            prefix_caching: false,
        }
    }
}

impl Default for ClusterParams {
    fn default() -> Self {
        ClusterParams {
            replicas: 1,
            router: Router::JoinShortestQueue,
        }
    }
}

impl Default for RunParams {
    fn default() -> Self {
        RunParams {
            horizon_s: DAY_S,
            warmup_s: 0.0,
            drain_s: None,
            seed: 1,
            series_interval_s: 300.0,
        }
    }
}

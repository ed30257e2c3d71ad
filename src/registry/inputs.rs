//! Every input the page edits with a fixed place in the scenario, declared
//! once: its path in the scenario's JSON, its label, unit and explanation,
//! and how its box reads a number. The panels draw their boxes from these,
//! and `words` names the fields from them in messages. (Inputs whose words
//! come from a table, a distribution's numbers or a step-time model's, are
//! declared in the tables of `registry.rs`.)

use super::Kind;
use crate::help;

/// An input the page edits, declared once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    /// Its path in the scenario's JSON, `[]` standing for any item of a
    /// list (`classes[].deadline_s`).
    pub path: &'static str,
    /// The label of its box, as it also reads in messages.
    pub label: &'static str,
    /// The unit shown after the box ("" for none).
    pub unit: &'static str,
    /// The explanation shown on hover and keyboard focus.
    pub help: &'static str,
    /// How its box reads a number, where not as the value's type says.
    pub kind: Option<Kind>,
}

/// An input whose box reads numbers as the value's type says.
const fn input(
    path: &'static str,
    label: &'static str,
    unit: &'static str,
    help: &'static str,
) -> Input {
    Input {
        path,
        label,
        unit,
        help,
        kind: None,
    }
}

impl Input {
    /// The same input, its box reading numbers as `kind`.
    const fn reads_as(self, kind: Kind) -> Input {
        Input {
            kind: Some(kind),
            ..self
        }
    }
}

// The scenario's name, above the panels.

pub const NAME: Input = input(
    "name",
    "Scenario name",
    "",
    "A name for this scenario; it is part of the link and of file names.",
);

// The model panel.

pub const MODEL_PRESET: Input = input("model.preset", "Preset", "", help::MODEL);
pub const MODEL_NAME: Input = input("model.name", "Name", "", help::MODEL);
pub const MODEL_PARAMS_B: Input = input("model.params_b", "Parameters", "B", help::PARAMS_B);
pub const MODEL_ACTIVE_PARAMS_B: Input = input(
    "model.active_params_b",
    "Active parameters (MoE)",
    "B",
    help::ACTIVE_PARAMS_B,
);
pub const MODEL_LAYERS: Input = input("model.layers", "Layers", "", help::LAYERS);
pub const MODEL_Q_HEADS: Input = input("model.q_heads", "Query heads", "", help::Q_HEADS);
pub const MODEL_KV_HEADS: Input = input("model.kv_heads", "KV heads", "", help::KV_HEADS);
pub const MODEL_HEAD_DIM: Input = input("model.head_dim", "Head dimension", "", help::HEAD_DIM);
pub const MODEL_KV_LATENT_DIM: Input = input(
    "model.kv_latent_dim",
    "Latent KV dimension (MLA)",
    "",
    help::KV_LATENT,
);
pub const MODEL_WEIGHT_DTYPE: Input =
    input("model.weight_dtype", "Weight precision", "", help::DTYPE);
pub const MODEL_KV_DTYPE: Input = input("model.kv_dtype", "KV cache precision", "", help::DTYPE);

// The hardware panel.

pub const HARDWARE_PRESET: Input =
    input("hardware.preset", "Accelerator preset", "", help::HARDWARE);
pub const HARDWARE_NAME: Input = input("hardware.name", "Name", "", help::HARDWARE);
pub const HARDWARE_MEMORY_GIB: Input =
    input("hardware.memory_gib", "Memory", "GiB", help::MEMORY_GIB);
pub const HARDWARE_BANDWIDTH_GB_S: Input = input(
    "hardware.bandwidth_gb_s",
    "Memory bandwidth",
    "GB/s",
    help::BANDWIDTH,
);
pub const HARDWARE_PEAK_TFLOPS: Input = input(
    "hardware.peak_tflops",
    "Peak compute",
    "TFLOP/s",
    help::PEAK_TFLOPS,
);
pub const REPLICA_GPUS_PER_REPLICA: Input = input(
    "replica.gpus_per_replica",
    "GPUs per replica",
    "",
    help::GPUS_PER_REPLICA,
);
pub const REPLICA_GPU_MEMORY_UTILIZATION: Input = input(
    "replica.gpu_memory_utilization",
    "Memory the engine may use",
    "%",
    help::GPU_MEMORY_UTILIZATION,
)
.reads_as(Kind::Percent);
pub const REPLICA_RUNTIME_RESERVE_GIB: Input = input(
    "replica.runtime_reserve_gib",
    "Runtime reserve per GPU",
    "GiB",
    help::RUNTIME_RESERVE,
);

// The serving panel.

pub const CLUSTER_REPLICAS: Input = input("cluster.replicas", "Replicas", "", help::REPLICAS);
pub const CLUSTER_ROUTER: Input = input("cluster.router", "Router", "", help::ROUTER);
pub const ENGINE_MAX_NUM_SEQS: Input = input(
    "engine.max_num_seqs",
    "Max sequences per step",
    "",
    help::MAX_NUM_SEQS,
);
pub const ENGINE_MAX_NUM_BATCHED_TOKENS: Input = input(
    "engine.max_num_batched_tokens",
    "Token budget per step",
    "tokens",
    help::MAX_BATCHED_TOKENS,
);
pub const ENGINE_LONG_PREFILL_THRESHOLD: Input = input(
    "engine.long_prefill_threshold",
    "Prefill chunk per request",
    "tokens",
    help::CHUNK_THRESHOLD,
);
pub const ENGINE_DISCIPLINE: Input = input(
    "engine.discipline",
    "Queue discipline",
    "",
    help::DISCIPLINE,
);
pub const ENGINE_MAX_WAITING: Input = input(
    "engine.max_waiting",
    "Queue bound per replica",
    "requests",
    help::QUEUE_BOUND,
);
pub const ENGINE_BLOCK_SIZE: Input = input(
    "engine.block_size",
    "KV block size",
    "tokens",
    help::BLOCK_SIZE,
);
pub const ENGINE_MAX_MODEL_LEN: Input = input(
    "engine.max_model_len",
    "Longest sequence",
    "tokens",
    help::MAX_MODEL_LEN,
);
pub const ENGINE_SCHEDULE: Input = input("engine.schedule", "Schedule", "", help::SCHEDULE);
pub const ENGINE_PREFIX_CACHING: Input = input(
    "engine.prefix_caching",
    "Prefix caching",
    "",
    help::PREFIX_CACHING,
);
pub const STEP_TIME_SCALE: Input = input(
    "step_time_scale",
    "Step-time calibration",
    "x",
    help::STEP_TIME_SCALE,
);
pub const STEP_TIME_KIND: Input = input("step_time.kind", "Step-time model", "", help::STEP_TIME);
pub const STEP_TIME_CUDA_GRAPHS: Input = input(
    "step_time.cuda_graphs",
    "CUDA graphs",
    "",
    help::OPS_CUDA_GRAPHS,
);

// The simulation panel.

pub const RUN_HORIZON_S: Input =
    input("run.horizon_s", "Horizon", "", help::HORIZON).reads_as(Kind::Duration);
pub const RUN_SEED: Input = input("run.seed", "Seed", "", help::SEED);
pub const RUN_WARMUP_S: Input =
    input("run.warmup_s", "Warm-up", "", help::WARMUP).reads_as(Kind::Duration);
pub const RUN_DRAIN_S: Input =
    input("run.drain_s", "Drain after the horizon", "", help::DRAIN).reads_as(Kind::Duration);
pub const RUN_SERIES_INTERVAL_S: Input = input(
    "run.series_interval_s",
    "Time-series interval",
    "",
    help::SERIES_INTERVAL,
)
.reads_as(Kind::Duration);

// A class (the workload panel).

pub const CLASS_LOAD_KIND: Input = input("classes[].load.kind", "Load", "", help::LOAD);
pub const CLASS_LOAD_REQUESTS: Input = input(
    "classes[].load.requests",
    "Requests",
    "requests",
    help::LOAD_REQUESTS,
);
pub const CLASS_LOAD_CLIENTS: Input =
    input("classes[].load.clients", "Clients", "", help::LOAD_CLIENTS);
pub const CLASS_LOAD_REQUESTS_IN_ALL: Input = input(
    "classes[].load.requests",
    "Requests in all",
    "",
    help::LOAD_TOTAL,
);
pub const CLASS_LOAD_THINK_MS: Input =
    input("classes[].load.think_ms", "Think time", "", help::THINK);
pub const CLASS_NAME: Input = input("classes[].name", "Class name", "", help::CLASS_NAME);
pub const CLASS_DEADLINE_S: Input =
    input("classes[].deadline_s", "Deadline (SLA)", "", help::DEADLINE).reads_as(Kind::Duration);
pub const CLASS_PREFIX_CACHE_HIT: Input = input(
    "classes[].prefix_cache_hit",
    "Prefix cache hit",
    "%",
    help::PREFIX_CACHE,
)
.reads_as(Kind::Percent);
pub const CLASS_PRIORITY: Input = input("classes[].priority", "Priority", "", help::PRIORITY);
pub const CLASS_TIMEOUT_S: Input =
    input("classes[].timeout_s", "Client timeout", "", help::TIMEOUT).reads_as(Kind::Duration);
pub const CLASS_BATCHES_PER_HOUR: Input = input(
    "classes[].batches_per_hour",
    "Batch arrivals",
    "batches/h",
    help::BATCHES_PER_HOUR,
);
pub const CLASS_LENGTHS_KIND: Input = input("classes[].lengths.kind", "Lengths", "", help::LENGTHS);
pub const CLASS_LENGTHS_RHO: Input = input(
    "classes[].lengths.rho",
    "Correlation (rho)",
    "",
    help::LENGTHS_RHO,
);
pub const CLASS_TIME_OF_DAY_ON: Input = input(
    "classes[].time_of_day.on",
    "Vary the rate by hour of day",
    "",
    help::TIME_OF_DAY,
);

// Prices and reserve.

pub const PRICING_USD_PER_GPU_HOUR: Input = input(
    "plan.pricing.usd_per_gpu_hour",
    "Price per GPU-hour",
    "USD",
    help::PRICE,
);
pub const PRICING_PRICING_MODEL: Input = input(
    "plan.pricing.pricing_model",
    "Pricing model",
    "",
    help::PRICING_MODEL,
);
pub const PRICING_PRICE_DATE: Input = input(
    "plan.pricing.price_date",
    "Price date",
    "",
    help::PRICE_DATE,
);
pub const PRICING_PROVIDER_REGION: Input = input(
    "plan.pricing.provider_region",
    "Provider and region",
    "",
    help::PROVIDER_REGION,
);
pub const PRICING_FIXED_USD_PER_MONTH: Input = input(
    "plan.pricing.fixed_usd_per_month",
    "Fixed costs",
    "USD/month",
    help::FIXED_COSTS,
);
pub const RESERVE_FAILURE_RESERVE_REPLICAS: Input = input(
    "plan.reserve.failure_reserve_replicas",
    "Failure reserve (N+k)",
    "replicas",
    help::FAILURE_RESERVE,
);
pub const RESERVE_WARM_IDLE_REPLICAS: Input = input(
    "plan.reserve.warm_idle_replicas",
    "Warm idle replicas",
    "replicas",
    help::WARM_IDLE,
);

// SLA targets.

pub const TARGET_EPSILON: Input = input(
    "plan.targets[].epsilon",
    "Largest P(miss)",
    "%",
    help::P_MISS,
)
.reads_as(Kind::Percent);
pub const TARGET_PERCENTILE: Input = input(
    "plan.targets[].percentile",
    "Percentile",
    "%",
    "Which percentile is bounded: 99 for p99.",
)
.reads_as(Kind::Percent);
pub const TARGET_BOUND_S: Input = input(
    "plan.targets[].bound_s",
    "At most",
    "",
    "The bound on that percentile.",
)
.reads_as(Kind::Duration);
pub const TARGET_METRIC: Input = input("plan.targets[].metric", "Metric", "", help::TARGETS);
pub const TARGET_CLASS: Input = input(
    "plan.targets[].class",
    "Applies to",
    "",
    "Every class separately, or one class.",
);

// Hardware options.

pub const CANDIDATES_ON: Input = input(
    "plan.candidates.on",
    "Compare hardware options",
    "",
    help::CANDIDATES,
);
pub const CANDIDATE_NAME: Input = input(
    "plan.candidates[].name",
    "Name",
    "",
    "A name for this option; empty names it after the hardware.",
);
pub const CANDIDATE_HARDWARE_PRESET: Input = input(
    "plan.candidates[].hardware_preset",
    "Accelerator",
    "",
    help::HARDWARE,
);
pub const CANDIDATE_GPUS_PER_REPLICA: Input = input(
    "plan.candidates[].gpus_per_replica",
    "GPUs per replica",
    "",
    help::GPUS_PER_REPLICA,
);
pub const CANDIDATE_USD_PER_GPU_HOUR: Input = input(
    "plan.candidates[].usd_per_gpu_hour",
    "Price per GPU-hour",
    "USD",
    help::PRICE,
);
pub const CANDIDATE_PRICING_MODEL: Input = input(
    "plan.candidates[].pricing_model",
    "Pricing model",
    "",
    help::PRICING_MODEL,
);

// What the plan compares.

pub const SEARCH_MAX_NUM_SEQS: Input = input(
    "plan.search.max_num_seqs",
    "Sequence limits compared",
    "",
    help::SEARCH_MAX_NUM_SEQS,
);
pub const SEARCH_MAX_NUM_BATCHED_TOKENS: Input = input(
    "plan.search.max_num_batched_tokens",
    "Token budgets compared",
    "tokens",
    help::SEARCH_TOKEN_BUDGETS,
);
pub const SEARCH_MAX_WAITING: Input = input(
    "plan.search.max_waiting",
    "Queue bounds compared",
    "requests",
    help::SEARCH_QUEUE_BOUNDS,
);

// The planner's settings.

pub const PLAN_REPLICATIONS: Input = input(
    "plan.replications",
    "Replications",
    "seeds",
    help::REPLICATIONS,
);
pub const PLAN_MIN_REPLICATIONS: Input = input(
    "plan.min_replications",
    "Replications to start with",
    "seeds",
    help::MIN_REPLICATIONS,
);
pub const PLAN_MAX_REPLICAS: Input = input(
    "plan.max_replicas",
    "Largest fleet searched",
    "replicas",
    help::MAX_REPLICAS,
);
pub const PLAN_MAX_BUSY_FRACTION: Input = input(
    "plan.max_busy_fraction",
    "Highest load",
    "%",
    help::MAX_BUSY,
)
.reads_as(Kind::Percent);
pub const PLAN_DECISION: Input = input("plan.decision", "Decide targets by", "", help::DECISION);
pub const SENSITIVITY_DELTA: Input = input(
    "plan.sensitivity.delta",
    "Sensitivity step",
    "%",
    help::SENSITIVITY,
)
.reads_as(Kind::Percent);
pub const SENSITIVITY_REPLICATIONS: Input = input(
    "plan.sensitivity.replications",
    "Sensitivity replications",
    "seeds",
    help::REPLICATIONS,
);
pub const SERVICE_CURVE_LOAD_MULTIPLIERS: Input = input(
    "plan.service_curve.load_multipliers",
    "Service-curve loads",
    "x base",
    help::LOAD_MULTIPLIERS,
);
pub const SERVICE_CURVE_HEADROOM_FRACTION: Input = input(
    "plan.service_curve.headroom_fraction",
    "Headroom below the knee",
    "%",
    help::HEADROOM,
)
.reads_as(Kind::Percent);
pub const SERVICE_CURVE_REPLICATIONS: Input = input(
    "plan.service_curve.replications",
    "Service-curve replications",
    "seeds",
    help::CURVE_REPLICATIONS,
);

/// Every input above, for the words and the tests.
pub const INPUTS: &[&Input] = &[
    &NAME,
    &MODEL_PRESET,
    &MODEL_NAME,
    &MODEL_PARAMS_B,
    &MODEL_ACTIVE_PARAMS_B,
    &MODEL_LAYERS,
    &MODEL_Q_HEADS,
    &MODEL_KV_HEADS,
    &MODEL_HEAD_DIM,
    &MODEL_KV_LATENT_DIM,
    &MODEL_WEIGHT_DTYPE,
    &MODEL_KV_DTYPE,
    &HARDWARE_PRESET,
    &HARDWARE_NAME,
    &HARDWARE_MEMORY_GIB,
    &HARDWARE_BANDWIDTH_GB_S,
    &HARDWARE_PEAK_TFLOPS,
    &REPLICA_GPUS_PER_REPLICA,
    &REPLICA_GPU_MEMORY_UTILIZATION,
    &REPLICA_RUNTIME_RESERVE_GIB,
    &CLUSTER_REPLICAS,
    &CLUSTER_ROUTER,
    &ENGINE_MAX_NUM_SEQS,
    &ENGINE_MAX_NUM_BATCHED_TOKENS,
    &ENGINE_LONG_PREFILL_THRESHOLD,
    &ENGINE_DISCIPLINE,
    &ENGINE_MAX_WAITING,
    &ENGINE_BLOCK_SIZE,
    &ENGINE_MAX_MODEL_LEN,
    &ENGINE_SCHEDULE,
    &ENGINE_PREFIX_CACHING,
    &STEP_TIME_SCALE,
    &STEP_TIME_KIND,
    &STEP_TIME_CUDA_GRAPHS,
    &RUN_HORIZON_S,
    &RUN_SEED,
    &RUN_WARMUP_S,
    &RUN_DRAIN_S,
    &RUN_SERIES_INTERVAL_S,
    &CLASS_LOAD_KIND,
    &CLASS_LOAD_REQUESTS,
    &CLASS_LOAD_CLIENTS,
    &CLASS_LOAD_REQUESTS_IN_ALL,
    &CLASS_LOAD_THINK_MS,
    &CLASS_NAME,
    &CLASS_DEADLINE_S,
    &CLASS_PREFIX_CACHE_HIT,
    &CLASS_PRIORITY,
    &CLASS_TIMEOUT_S,
    &CLASS_BATCHES_PER_HOUR,
    &CLASS_LENGTHS_KIND,
    &CLASS_LENGTHS_RHO,
    &CLASS_TIME_OF_DAY_ON,
    &PRICING_USD_PER_GPU_HOUR,
    &PRICING_PRICING_MODEL,
    &PRICING_PRICE_DATE,
    &PRICING_PROVIDER_REGION,
    &PRICING_FIXED_USD_PER_MONTH,
    &RESERVE_FAILURE_RESERVE_REPLICAS,
    &RESERVE_WARM_IDLE_REPLICAS,
    &TARGET_EPSILON,
    &TARGET_PERCENTILE,
    &TARGET_BOUND_S,
    &TARGET_METRIC,
    &TARGET_CLASS,
    &CANDIDATES_ON,
    &CANDIDATE_NAME,
    &CANDIDATE_HARDWARE_PRESET,
    &CANDIDATE_GPUS_PER_REPLICA,
    &CANDIDATE_USD_PER_GPU_HOUR,
    &CANDIDATE_PRICING_MODEL,
    &SEARCH_MAX_NUM_SEQS,
    &SEARCH_MAX_NUM_BATCHED_TOKENS,
    &SEARCH_MAX_WAITING,
    &PLAN_REPLICATIONS,
    &PLAN_MIN_REPLICATIONS,
    &PLAN_MAX_REPLICAS,
    &PLAN_MAX_BUSY_FRACTION,
    &PLAN_DECISION,
    &SENSITIVITY_DELTA,
    &SENSITIVITY_REPLICATIONS,
    &SERVICE_CURVE_LOAD_MULTIPLIERS,
    &SERVICE_CURVE_HEADROOM_FRACTION,
    &SERVICE_CURVE_REPLICATIONS,
];

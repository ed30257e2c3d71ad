//! The scenario: what the user describes, and its validated form.
//!
//! [`ScenarioParams`] is permissive (serde, what URLs, forms and files hold).
//! [`Scenario::try_from`] checks everything once and derives the memory budget
//! and the step-time model; code downstream never re-checks.

use serde::{Deserialize, Serialize};

use crate::dist::{Dist, DistParams, Shape};
use crate::error::{Checker, ScenarioError, show};
use crate::memory::MemoryBudget;
use crate::plan::params::{PlanParams, PricingParams, check_plan};
use crate::presets;
use crate::step_time::{StepTimeModel, StepTimeParams};

/// The scenario format version written by this build. Older versions keep
/// decoding: fields added later have defaults.
pub const FORMAT_VERSION: u32 = 1;

/// Seconds in a day.
pub const DAY_S: f64 = 86_400.0;

/// Everything a run needs, as written by a user. Units are in the field names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScenarioParams {
    /// Format version (see [`FORMAT_VERSION`]).
    pub version: u32,
    pub name: String,
    /// Request classes (tenants, products).
    pub classes: Vec<ClassParams>,
    pub model: ModelParams,
    pub hardware: HardwareParams,
    pub replica: ReplicaParams,
    pub engine: EngineParams,
    pub cluster: ClusterParams,
    pub step_time: StepTimeParams,
    /// Calibration multiplier on every step time (1 = as modelled; 1.2 =
    /// steps 20% slower than the model, e.g. fitted to a measured benchmark).
    pub step_time_scale: f64,
    pub run: RunParams,
    /// What the capacity planner needs: prices, reserve, SLA targets,
    /// candidate hardware, best and worst cases (see [`crate::plan`](mod@crate::plan)).
    pub plan: PlanParams,
}

/// One request class: its arrivals, its token lengths and its SLA.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClassParams {
    pub name: String,
    /// Batches arrive as a Poisson process at this rate \[batches/hour\].
    pub batches_per_hour: f64,
    /// Requests per batch, X (constant 1 gives plain Poisson arrivals).
    pub batch_size: DistParams,
    /// Optional multipliers on the batch rate for each hour of the day
    /// (24 values, hour 0 = midnight): a non-homogeneous Poisson process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_of_day: Option<Vec<f64>>,
    /// Prompt length I \[tokens\].
    pub input_tokens: DistParams,
    /// Output length O \[tokens\].
    pub output_tokens: DistParams,
    /// Fraction of each prompt found in the prefix cache; those tokens skip
    /// prefill (the last prompt token is always computed).
    pub prefix_cache_hit: f64,
    /// Scheduling priority: lower is more urgent (vLLM's convention).
    pub priority: i32,
    /// SLA deadline on the sojourn time (queue + service) \[s\].
    pub deadline_s: f64,
    /// The client abandons a request not finished after this long \[s\].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
}

/// Numeric precision of weights or KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    Fp32,
    Bf16,
    Fp16,
    Fp8,
    Int8,
    Int4,
    Fp4,
}

impl Dtype {
    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Fp32 => 4.0,
            Dtype::Bf16 | Dtype::Fp16 => 2.0,
            Dtype::Fp8 | Dtype::Int8 => 1.0,
            Dtype::Int4 | Dtype::Fp4 => 0.5,
        }
    }
}

/// The model's architecture, from which memory and FLOPs are derived.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelParams {
    pub name: String,
    /// Total parameters \[billions\].
    pub params_b: f64,
    /// Parameters active per token for a mixture of experts \[billions\];
    /// `None` for a dense model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_params_b: Option<f64>,
    pub layers: u32,
    /// Query (attention) heads.
    pub q_heads: u32,
    /// Key/value heads (fewer than query heads under grouped-query attention).
    pub kv_heads: u32,
    pub head_dim: u32,
    /// Multi-head latent attention (DeepSeek): elements cached per token per
    /// layer (kv_lora_rank + rope dim), replacing 2 x kv_heads x head_dim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_latent_dim: Option<u32>,
    pub weight_dtype: Dtype,
    pub kv_dtype: Dtype,
}

/// One accelerator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HardwareParams {
    pub name: String,
    /// Device memory \[GiB\].
    pub memory_gib: f64,
    /// Memory bandwidth \[GB/s, 10^9 bytes per second\].
    pub bandwidth_gb_s: f64,
    /// Peak dense matrix throughput at the compute precision \[TFLOP/s\].
    pub peak_tflops: f64,
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
    /// Memory per GPU kept for activations, CUDA graphs and runtime workspace \[GiB\].
    pub runtime_reserve_gib: f64,
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

impl Default for ScenarioParams {
    /// The seeds' case: overnight batch jobs with a 24 h SLA beside a steady
    /// API stream, Llama 3.1 8B on H100s.
    fn default() -> Self {
        ScenarioParams {
            version: FORMAT_VERSION,
            name: "Overnight batch jobs, 24 h SLA".to_string(),
            classes: vec![
                ClassParams {
                    name: "nightly-batch".to_string(),
                    batches_per_hour: 3.0,
                    batch_size: DistParams::new(Shape::LogNormal {
                        median: 400.0,
                        p90: 2000.0,
                    })
                    .clamped(None, Some(20_000.0)),
                    time_of_day: Some(vec![
                        2.0, 2.0, 2.0, 2.0, 1.5, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
                        0.5, 0.5, 0.5, 1.0, 1.0, 1.5, 1.5, 2.0, 2.0,
                    ]),
                    input_tokens: DistParams::new(Shape::LogNormal {
                        median: 1500.0,
                        p90: 6000.0,
                    })
                    .clamped(None, Some(32_000.0)),
                    output_tokens: DistParams::new(Shape::LogNormal {
                        median: 250.0,
                        p90: 1000.0,
                    })
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
                    input_tokens: DistParams::new(Shape::LogNormal {
                        median: 800.0,
                        p90: 3000.0,
                    })
                    .clamped(None, Some(16_000.0)),
                    output_tokens: DistParams::new(Shape::LogNormal {
                        median: 200.0,
                        p90: 600.0,
                    })
                    .clamped(None, Some(4_000.0)),
                    prefix_cache_hit: 0.5,
                    priority: 0,
                    deadline_s: 60.0,
                    ..ClassParams::default()
                },
            ],
            model: presets::model("llama-3.1-8b").expect("preset exists"),
            hardware: presets::hardware("h100-sxm").expect("preset exists"),
            replica: ReplicaParams::default(),
            engine: EngineParams::default(),
            cluster: ClusterParams::default(),
            step_time: StepTimeParams::default(),
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
            prefix_cache_hit: 0.0,
            priority: 0,
            deadline_s: DAY_S,
            timeout_s: None,
        }
    }
}

impl Default for ModelParams {
    fn default() -> Self {
        presets::model("llama-3.1-8b").expect("preset exists")
    }
}

impl Default for HardwareParams {
    fn default() -> Self {
        presets::hardware("h100-sxm").expect("preset exists")
    }
}

impl Default for ReplicaParams {
    fn default() -> Self {
        ReplicaParams {
            gpus_per_replica: 1,
            gpu_memory_utilization: 0.9,
            runtime_reserve_gib: 2.0,
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
        }
    }
}

impl Default for ClusterParams {
    fn default() -> Self {
        ClusterParams {
            replicas: 2,
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

/// Most request classes in one scenario.
pub const MAX_CLASSES: usize = 64;
/// Most replicas in one cluster.
pub const MAX_REPLICAS: u32 = 4096;
/// Longest horizon \[s\] (one year).
pub const MAX_HORIZON_S: f64 = 365.0 * DAY_S;
/// Most time-series intervals in one run.
pub const MAX_SERIES_POINTS: usize = 100_000;
/// At most this many replica samples (series points x replicas) in a run:
/// each sample visits every replica.
pub const MAX_REPLICA_SAMPLES: u64 = 20_000_000;
/// Memory a run holds per request \[bytes\]: its record, its state while it
/// waits or runs (every request may be waiting at once), and the report's
/// per-request samples (sojourn, time to first token, time per output token).
pub const BYTES_PER_REQUEST: f64 = (std::mem::size_of::<crate::sim::RequestRecord>()
    + std::mem::size_of::<crate::sim::state::Active>()
    + 3 * std::mem::size_of::<f64>()) as f64;

/// A validated class, ready to sample.
#[derive(Clone, Debug)]
pub struct Class {
    /// Batch arrival rate before time-of-day multipliers \[batches/s\].
    pub batch_rate_per_s: f64,
    pub batch_size: Dist,
    /// Multiplier for each hour of the day (all 1 without a profile).
    pub time_of_day: [f64; 24],
    pub input_tokens: Dist,
    pub output_tokens: Dist,
    pub prefix_cache_hit: f64,
    pub priority: i32,
    pub deadline_s: f64,
    pub timeout_s: Option<f64>,
}

impl Class {
    /// Mean batch rate over a whole day, multipliers included \[batches/s\].
    pub fn mean_batch_rate_per_s(&self) -> f64 {
        self.batch_rate_per_s * self.time_of_day.iter().sum::<f64>() / 24.0
    }
}

/// A checked scenario with its derived quantities.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The parameters it was built from, unchanged.
    pub params: ScenarioParams,
    pub classes: Vec<Class>,
    /// Per-replica memory: weights, KV cache, blocks.
    pub memory: MemoryBudget,
    pub step_time: StepTimeModel,
    /// How long the fleet keeps working after the horizon \[s\].
    pub drain_s: f64,
}

impl TryFrom<ScenarioParams> for Scenario {
    type Error = ScenarioError;

    fn try_from(params: ScenarioParams) -> Result<Self, ScenarioError> {
        let mut check = Checker::new();
        if params.version == 0 || params.version > FORMAT_VERSION {
            check.fail(
                "version",
                format!(
                    "format version {} is not known to this build (it reads 1 to {FORMAT_VERSION})",
                    params.version
                ),
            );
        }
        let classes = check_classes(&params, &mut check);
        check_engine(&params, &mut check);
        let memory = MemoryBudget::derive(&params, &mut check);
        check.positive("step_time_scale", params.step_time_scale);
        let step_time = check.at("step_time", |c| StepTimeModel::build(&params, c));
        let drain_s = check_run(&params, &mut check);
        let built = match (&classes, &step_time, check.has_errors()) {
            (Some(classes), Some(step_time), false) => Some((classes.as_slice(), step_time)),
            _ => None,
        };
        check_plan(&params, built, &mut check);
        check.finish()?;
        match (classes, memory, step_time) {
            (Some(classes), Some(memory), Some(step_time)) => Ok(Scenario {
                params,
                classes,
                memory,
                step_time,
                drain_s,
            }),
            // Every `None` above comes with an error, so this is unreachable;
            // report it as an error rather than panic.
            _ => Err(ScenarioError::single(
                "",
                "internal error: incomplete validation",
            )),
        }
    }
}

impl Scenario {
    /// The default scenario, validated.
    pub fn default_scenario() -> Scenario {
        Scenario::try_from(ScenarioParams::default()).expect("the default scenario is valid")
    }

    /// Mean arrival rate of requests over all classes \[requests/s\].
    pub fn mean_request_rate_per_s(&self) -> f64 {
        self.classes
            .iter()
            .map(|c| c.mean_batch_rate_per_s() * c.batch_size.moments().0)
            .sum()
    }

    /// Expected number of requests over the horizon.
    pub fn expected_requests(&self) -> f64 {
        self.mean_request_rate_per_s() * self.params.run.horizon_s
    }

    /// Memory a run of this scenario needs at most, roughly \[bytes\]: every
    /// request expected (plus five standard deviations) at
    /// [`BYTES_PER_REQUEST`], and the series. Checked against the run's
    /// budget before it starts ([`crate::RunOptions::max_bytes`]).
    pub fn run_bytes_estimate(&self) -> f64 {
        let requests = self.expected_requests() + 5.0 * self.requests_sd();
        let points = crate::sim::max_series_points(self.params.cluster.replicas as usize);
        requests * BYTES_PER_REQUEST
            + (points * std::mem::size_of::<crate::report::SeriesPoint>()) as f64
    }

    /// Standard deviation of the number of requests over the horizon: each
    /// class's count is compound Poisson, with variance (batches expected)
    /// x E\[X^2\] for batch size X.
    pub fn requests_sd(&self) -> f64 {
        let horizon = self.params.run.horizon_s;
        self.classes
            .iter()
            .map(|c| c.mean_batch_rate_per_s() * horizon * c.batch_size.moments().1)
            .sum::<f64>()
            .sqrt()
    }

    /// This scenario with another fleet size and seed. Nothing derived
    /// depends on either, so no re-validation is needed beyond the range of
    /// `replicas`; cached distribution moments are kept.
    pub fn with_replicas_and_seed(
        &self,
        replicas: u32,
        seed: u64,
    ) -> Result<Scenario, ScenarioError> {
        if replicas == 0 || replicas > MAX_REPLICAS {
            return Err(ScenarioError::single(
                "cluster.replicas",
                format!("must be between 1 and {MAX_REPLICAS}, got {replicas}"),
            ));
        }
        let mut out = self.clone();
        out.params.cluster.replicas = replicas;
        out.params.run.seed = seed;
        Ok(out)
    }
}

fn check_classes(params: &ScenarioParams, check: &mut Checker) -> Option<Vec<Class>> {
    if params.classes.is_empty() {
        check.fail("classes", "must hold at least one request class");
        return None;
    }
    if params.classes.len() > MAX_CLASSES {
        check.fail(
            "classes",
            format!(
                "at most {MAX_CLASSES} classes, got {}",
                params.classes.len()
            ),
        );
        return None;
    }
    let mut classes = Vec::with_capacity(params.classes.len());
    let mut ok = true;
    for (i, class) in params.classes.iter().enumerate() {
        let built = check.at("classes", |c| {
            c.at(format!("[{i}]"), |c| check_class(class, c))
        });
        match built {
            Some(class) => classes.push(class),
            None => ok = false,
        }
    }
    for (i, a) in params.classes.iter().enumerate() {
        if params.classes[..i].iter().any(|b| b.name == a.name) {
            check.fail(
                &format!("classes[{i}].name"),
                format!("\"{}\" is used by another class", a.name),
            );
            ok = false;
        }
    }
    ok.then_some(classes)
}

fn check_class(class: &ClassParams, check: &mut Checker) -> Option<Class> {
    let before = check.has_errors();
    if class.name.trim().is_empty() {
        check.fail("name", "must not be empty");
    }
    check.non_negative("batches_per_hour", class.batches_per_hour);
    let batch_size = check.at("batch_size", |c| class.batch_size.build(c));
    let input_tokens = check.at("input_tokens", |c| class.input_tokens.build(c));
    let output_tokens = check.at("output_tokens", |c| class.output_tokens.build(c));
    check.within("prefix_cache_hit", class.prefix_cache_hit, 0.0, 1.0);
    check.positive("deadline_s", class.deadline_s);
    if let Some(t) = class.timeout_s {
        check.positive("timeout_s", t);
    }
    let mut time_of_day = [1.0; 24];
    if let Some(profile) = &class.time_of_day {
        if profile.len() != 24 {
            check.fail(
                "time_of_day",
                format!("must have 24 hourly multipliers, got {}", profile.len()),
            );
        } else {
            for (h, m) in profile.iter().enumerate() {
                check.non_negative(&format!("time_of_day[{h}]"), *m);
                time_of_day[h] = *m;
            }
            if profile.iter().all(|m| *m == 0.0) {
                check.fail("time_of_day", "must not be zero in every hour");
            }
        }
    }
    if check.has_errors() != before {
        return None;
    }
    Some(Class {
        batch_rate_per_s: class.batches_per_hour / 3600.0,
        batch_size: batch_size?,
        time_of_day,
        input_tokens: input_tokens?,
        output_tokens: output_tokens?,
        prefix_cache_hit: class.prefix_cache_hit,
        priority: class.priority,
        deadline_s: class.deadline_s,
        timeout_s: class.timeout_s,
    })
}

fn check_engine(params: &ScenarioParams, check: &mut Checker) {
    let e = &params.engine;
    check.at("engine", |c| {
        c.at_least("max_num_seqs", e.max_num_seqs as u64, 1);
        c.at_least("max_num_batched_tokens", e.max_num_batched_tokens as u64, 1);
        if e.max_num_batched_tokens < e.max_num_seqs {
            c.fail(
                "max_num_batched_tokens",
                format!(
                    "must be at least max_num_seqs ({}) so that every running sequence can decode each step, got {}",
                    e.max_num_seqs, e.max_num_batched_tokens
                ),
            );
        }
        if !(1..=1024).contains(&e.block_size) {
            c.fail("block_size", format!("must be between 1 and 1024 tokens, got {}", e.block_size));
        }
        if let Some(m) = e.max_model_len {
            c.at_least("max_model_len", m as u64, 2);
        }
    });
    check.at("cluster", |c| {
        let n = params.cluster.replicas;
        if n == 0 || n > MAX_REPLICAS {
            c.fail(
                "replicas",
                format!("must be between 1 and {MAX_REPLICAS}, got {n}"),
            );
        }
    });
}

fn check_run(params: &ScenarioParams, check: &mut Checker) -> f64 {
    let r = &params.run;
    check.at("run", |c| {
        if c.positive("horizon_s", r.horizon_s) && r.horizon_s > MAX_HORIZON_S {
            c.fail(
                "horizon_s",
                format!("must be at most one year ({MAX_HORIZON_S} s), got {}", show(r.horizon_s)),
            );
        }
        if c.non_negative("warmup_s", r.warmup_s) && r.warmup_s >= r.horizon_s {
            c.fail(
                "warmup_s",
                format!("must be shorter than the horizon ({} s), got {}", show(r.horizon_s), show(r.warmup_s)),
            );
        }
        if let Some(d) = r.drain_s {
            c.non_negative("drain_s", d);
        }
        if c.positive("series_interval_s", r.series_interval_s) {
            // Points over the horizon alone; the drain's are capped as it
            // runs (the series stops at the cap, see docs/engine.md).
            let points = r.horizon_s / r.series_interval_s;
            let replicas = params.cluster.replicas.max(1) as f64;
            let most = (MAX_SERIES_POINTS as f64).min(MAX_REPLICA_SAMPLES as f64 / replicas);
            if points > most {
                c.fail(
                    "series_interval_s",
                    format!(
                        "gives {} samples over the horizon, more than the {} allowed{}; use at least {} s",
                        show(points.ceil()),
                        show(most.floor()),
                        if most < MAX_SERIES_POINTS as f64 {
                            format!(" with {} replicas (each sample visits every replica)", show(replicas))
                        } else {
                            String::new()
                        },
                        show((r.horizon_s / most).ceil())
                    ),
                );
            }
        }
    });
    let longest_deadline = params
        .classes
        .iter()
        .map(|c| c.deadline_s)
        .filter(|d| d.is_finite())
        .fold(0.0, f64::max);
    r.drain_s.unwrap_or(longest_deadline).min(MAX_HORIZON_S)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(params: ScenarioParams) -> ScenarioError {
        Scenario::try_from(params).expect_err("scenario should be invalid")
    }

    #[test]
    fn default_scenario_is_valid_and_round_trips_through_json() {
        let params = ScenarioParams::default();
        let json = serde_json::to_string(&params).expect("serialises");
        let back: ScenarioParams = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, params);
        Scenario::try_from(back).expect("default is valid");
    }

    #[test]
    fn request_count_mean_and_sd_are_compound_poisson() {
        use crate::dist::{DistParams, Shape};
        // 3600 batches/h for 100 s: 100 batches expected. Single requests:
        // sd = sqrt(100) = 10. Geometric batches of mean 4 (E[X^2] = 28):
        // mean 400, sd = sqrt(100 x 28).
        let mut p = ScenarioParams {
            classes: vec![ClassParams {
                batches_per_hour: 3600.0,
                ..ClassParams::default()
            }],
            ..ScenarioParams::default()
        };
        p.run.horizon_s = 100.0;
        let single = Scenario::try_from(p.clone()).expect("valid");
        assert!((single.expected_requests() - 100.0).abs() < 1e-9);
        assert!((single.requests_sd() - 10.0).abs() < 1e-9);
        p.classes[0].batch_size = DistParams::new(Shape::Geometric { mean: 4.0 });
        let batched = Scenario::try_from(p).expect("valid");
        assert!((batched.expected_requests() - 400.0).abs() < 1e-9);
        assert!((batched.requests_sd() - 2800f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn empty_class_list_is_rejected_by_name() {
        let mut p = ScenarioParams::default();
        p.classes.clear();
        let e = errors_of(p);
        assert_eq!(
            e.for_field("classes"),
            Some("must hold at least one request class")
        );
    }

    #[test]
    fn nan_and_negative_rates_name_their_field() {
        let mut p = ScenarioParams::default();
        p.classes[0].batches_per_hour = f64::NAN;
        p.classes[1].batches_per_hour = -3.0;
        let e = errors_of(p);
        assert!(
            e.for_field("classes[0].batches_per_hour")
                .unwrap()
                .contains("NaN")
        );
        assert!(
            e.for_field("classes[1].batches_per_hour")
                .unwrap()
                .contains("-3")
        );
    }

    #[test]
    fn zero_deadline_and_bad_distribution_parameters_are_reported_together() {
        let mut p = ScenarioParams::default();
        p.classes[0].deadline_s = 0.0;
        p.classes[0].input_tokens = DistParams::new(Shape::LogNormal {
            median: 1000.0,
            p90: 800.0,
        });
        p.classes[0].batch_size = DistParams::new(Shape::Geometric { mean: 0.5 });
        let e = errors_of(p);
        assert!(e.for_field("classes[0].deadline_s").is_some());
        assert!(
            e.for_field("classes[0].input_tokens.p90")
                .unwrap()
                .contains("greater than the median (1000)")
        );
        assert!(
            e.for_field("classes[0].batch_size.mean")
                .unwrap()
                .contains("at least 1")
        );
        assert_eq!(e.errors.len(), 3, "{e}");
    }

    #[test]
    fn time_of_day_needs_24_hours() {
        let mut p = ScenarioParams::default();
        p.classes[0].time_of_day = Some(vec![1.0; 23]);
        let e = errors_of(p);
        assert!(
            e.for_field("classes[0].time_of_day")
                .unwrap()
                .contains("24")
        );
    }

    #[test]
    fn token_budget_below_max_num_seqs_is_rejected() {
        let mut p = ScenarioParams::default();
        p.engine.max_num_batched_tokens = 128;
        let e = errors_of(p);
        assert!(
            e.for_field("engine.max_num_batched_tokens")
                .unwrap()
                .contains("max_num_seqs (256)")
        );
    }

    #[test]
    fn unknown_fields_and_future_versions_are_errors_not_silence() {
        let err = serde_json::from_str::<ScenarioParams>(r#"{"nmae": "typo"}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `nmae`"), "{err}");
        let p = ScenarioParams {
            version: 99,
            ..ScenarioParams::default()
        };
        assert!(errors_of(p).for_field("version").unwrap().contains("99"));
    }

    #[test]
    fn old_files_without_newer_fields_take_defaults() {
        let p: ScenarioParams =
            serde_json::from_str(r#"{"version": 1, "name": "minimal"}"#).unwrap();
        assert_eq!(p.engine, EngineParams::default());
        Scenario::try_from(p).expect("a minimal file is valid");
    }
}

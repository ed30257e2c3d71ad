//! Scenarios made from scratch: every load mode, joint lengths, every
//! step-time kind, engine settings, timeouts, queue bounds, routers,
//! disciplines and plan sections (`plan.rs`). Most are small (a few hundred requests
//! over minutes, so that a campaign runs thousands a minute); one in
//! [`LARGE_ONE_IN`] is a day or more of traffic, to meet the budgets.

use sojourn_engine::presets;
use sojourn_engine::{
    ClassParams, ClusterParams, CudaGraphs, Discipline, DistParams, Dtype, EngineParams,
    HardwareParams, Interconnect, InterconnectParams, LengthsParams, LoadParams, MlaParams,
    ModelParams, MoeParams, OperationsParams, PlanParams, ReplicaParams, Router, RunParams,
    ScenarioParams, Schedule, Shape, SlidingWindowParams, StepTimeParams, TracedRequest,
};

use super::plan::plan;
use crate::rng::Rng;

/// One generated scenario in this many is large (hours to days of traffic).
pub const LARGE_ONE_IN: usize = 50;

pub(super) const DISCIPLINES: [Discipline; 4] = [
    Discipline::Fcfs,
    Discipline::Priority,
    Discipline::ShortestInputFirst,
    Discipline::EarliestDeadlineFirst,
];
pub(super) const ROUTERS: [Router; 3] = [
    Router::RoundRobin,
    Router::JoinShortestQueue,
    Router::LeastKvLoad,
];
const DTYPES: [Dtype; 7] = [
    Dtype::Fp32,
    Dtype::Bf16,
    Dtype::Fp16,
    Dtype::Fp8,
    Dtype::Int8,
    Dtype::Int4,
    Dtype::Fp4,
];

/// A scenario, and a few words on what it is.
pub fn scenario(rng: &mut Rng) -> (ScenarioParams, String) {
    let large = rng.below(LARGE_ONE_IN) == 0;
    sized(rng, large)
}

/// A small scenario (for a file to be imported into).
pub fn small(rng: &mut Rng) -> ScenarioParams {
    sized(rng, false).0
}

fn sized(rng: &mut Rng, large: bool) -> (ScenarioParams, String) {
    let mut words = Vec::new();
    let mut model = model(rng, &mut words);
    let mut hardware = hardware(rng, &mut words);
    let mut replica = replica(rng);
    // Mostly a model that fits: enough GPUs per replica for its weights.
    if rng.chance(0.9) && !fit_gpus(&model, &hardware, &mut replica) {
        model = presets::llama_3_1_8b();
        hardware = presets::h100_sxm();
        replica.gpus_per_replica = 1;
        replica.runtime_reserve_gib = None;
        words.push("(8B on H100: the first did not fit)".into());
    }
    let horizon_s = if large {
        rng.log_uniform(3600.0, 7.0 * 86_400.0)
    } else {
        rng.log_uniform(5.0, 900.0)
    };
    // Requests the whole scenario should see, spread over its classes.
    let requests = if large {
        rng.log_uniform(2e4, 3e7)
    } else {
        rng.log_uniform(1.0, 2000.0)
    };
    let planned = rng.chance(0.5);
    let n_classes = *rng.pick(&[1, 1, 1, 2, 2, 3, 4, 8]);
    let mut classes: Vec<ClassParams> = (0..n_classes)
        .map(|i| class(rng, i, horizon_s, requests / n_classes as f64, &mut words))
        .collect();
    if planned && rng.chance(0.8) {
        // The planner plans open classes only.
        for c in &mut classes {
            if !c.load.is_open() {
                c.load = LoadParams::Open;
            }
        }
    }
    let replicas = if large {
        *rng.pick(&[1, 2, 8, 64, 512])
    } else {
        *rng.pick(&[1, 1, 2, 3, 4, 8])
    };
    let mut run = run(rng, horizon_s);
    if rng.chance(0.9) {
        // What validation asks of counted and offline loads.
        if classes.iter().any(|c| c.load.is_counted()) {
            run.drain_s = None;
        }
        if classes
            .iter()
            .any(|c| matches!(c.load, LoadParams::Offline { .. }))
        {
            run.warmup_s = 0.0;
        }
    }
    let params = ScenarioParams {
        name: format!("fuzz {}", words.join(", ")),
        classes,
        model,
        hardware,
        replica,
        engine: engine(rng),
        cluster: ClusterParams {
            replicas,
            router: *rng.pick(&ROUTERS),
        },
        step_time: step_time(rng, &mut words),
        step_time_scale: if rng.chance(0.8) {
            1.0
        } else {
            rng.log_uniform(0.1, 10.0)
        },
        run,
        plan: if planned {
            plan(rng, n_classes, &mut words)
        } else {
            PlanParams::default()
        },
        ..ScenarioParams::overnight_batch()
    };
    let size = if large { "large" } else { "small" };
    (params, format!("generated {size}: {}", words.join(", ")))
}

/// Sets the fewest GPUs per replica (of 1, 2, 4, 8) that hold the
/// weights with room for a KV cache; false if none does.
fn fit_gpus(model: &ModelParams, hardware: &HardwareParams, replica: &mut ReplicaParams) -> bool {
    let weights_gib = model.params_b * 1e9 * model.weight_dtype.bytes() / f64::from(1u32 << 30);
    let usable_gib = hardware.memory_gib * replica.gpu_memory_utilization
        - replica.runtime_reserve_gib.unwrap_or(4.0);
    for gpus in [1u32, 2, 4, 8] {
        if f64::from(gpus) * usable_gib > weights_gib * 1.2 {
            replica.gpus_per_replica = gpus;
            return true;
        }
    }
    false
}

fn model(rng: &mut Rng, words: &mut Vec<String>) -> ModelParams {
    let presets = presets::models();
    if rng.chance(0.6) && !presets.is_empty() {
        let preset = &presets[rng.below(presets.len())];
        words.push(format!("model {}", preset.id));
        return preset.params.clone();
    }
    words.push("custom model".into());
    let layers = rng.range(1, 96) as u32;
    let head_dim = *rng.pick(&[64, 128, 256]);
    let q_heads = *rng.pick(&[8, 32, 64, 128]);
    let kv_heads = *rng.pick(&[1, 2, 8, q_heads]);
    let hidden = q_heads * head_dim;
    let mut m = ModelParams {
        name: "custom".into(),
        params_b: rng.log_uniform(0.1, 700.0),
        active_params_b: None,
        layers,
        q_heads,
        kv_heads,
        head_dim,
        kv_latent_dim: None,
        weight_dtype: *rng.pick(&DTYPES),
        kv_dtype: *rng.pick(&DTYPES),
        hidden_size: rng.chance(0.7).then_some(hidden),
        intermediate_size: rng.chance(0.7).then_some(hidden * 3),
        vocab_size: rng
            .chance(0.7)
            .then_some(*rng.pick(&[32_000, 128_256, 262_144])),
        moe: None,
        mla: None,
        sliding_window: None,
    };
    if rng.chance(0.25) {
        m.active_params_b = Some(m.params_b * rng.uniform(0.02, 1.0));
        m.moe = Some(MoeParams {
            experts: *rng.pick(&[8, 64, 128, 256]),
            experts_per_token: *rng.pick(&[1, 2, 4, 8]),
            expert_intermediate_size: *rng.pick(&[512, 2048, 14336]),
            shared_experts: *rng.pick(&[0, 0, 1, 2]),
            dense_layers: rng.range(0, u64::from(layers)) as u32,
            other_weight_dtype: rng.chance(0.3).then(|| *rng.pick(&DTYPES)),
            expert_scale_bits: rng.chance(0.3).then_some(0.25),
        });
    }
    if rng.chance(0.15) {
        m.kv_latent_dim = Some(576);
        m.mla = Some(MlaParams {
            q_lora_rank: rng.chance(0.5).then_some(1536),
            kv_lora_rank: 512,
            qk_nope_head_dim: 128,
            qk_rope_head_dim: 64,
            v_head_dim: 128,
        });
    }
    if rng.chance(0.15) {
        m.sliding_window = Some(SlidingWindowParams {
            window_tokens: *rng.pick(&[128, 4096, 32_768]),
            layers: rng.range(0, u64::from(layers)) as u32,
        });
    }
    m
}

fn hardware(rng: &mut Rng, words: &mut Vec<String>) -> HardwareParams {
    let presets = presets::hardware_presets();
    if rng.chance(0.6) && !presets.is_empty() {
        let preset = &presets[rng.below(presets.len())];
        words.push(format!("on {}", preset.id));
        return preset.params.clone();
    }
    words.push("custom accelerator".into());
    let peak = rng.log_uniform(10.0, 5000.0);
    HardwareParams {
        name: "custom".into(),
        memory_gib: rng.log_uniform(8.0, 300.0),
        bandwidth_gb_s: rng.log_uniform(100.0, 10_000.0),
        peak_tflops: peak,
        peak_fp8_tflops: rng.chance(0.5).then_some(peak * 2.0),
        peak_fp4_tflops: rng.chance(0.2).then_some(peak * 4.0),
        interconnect: rng.chance(0.6).then(|| InterconnectParams {
            kind: *rng.pick(&[Interconnect::Nvlink, Interconnect::Xgmi, Interconnect::Pcie]),
            gb_s: rng.log_uniform(16.0, 900.0),
        }),
    }
}

/// A length or batch-size distribution of every family, mostly around
/// `typical`.
pub fn dist(rng: &mut Rng, typical: f64) -> DistParams {
    let t = typical;
    let shape = match rng.below(9) {
        0 => Shape::Constant {
            value: t.round().max(1.0),
        },
        1 => Shape::Uniform {
            low: (t * 0.5).round().max(1.0),
            high: (t * 1.5).round().max(1.0),
        },
        2 => Shape::Exponential { mean: t },
        3 => Shape::Geometric { mean: t.max(1.0) },
        4 => Shape::LogNormal {
            median: t,
            p90: t * rng.uniform(1.0, 6.0),
        },
        5 => Shape::LogNormalMoments {
            mean: t,
            std_dev: t * rng.uniform(0.0, 3.0),
        },
        6 => Shape::Gamma {
            mean: t,
            std_dev: t * rng.uniform(0.01, 2.0),
        },
        7 => Shape::Empirical {
            values: (0..rng.range(1, 12))
                .map(|_| (t * rng.uniform(0.1, 3.0)).round().max(1.0))
                .collect(),
        },
        _ => {
            let bins = rng.range(1, 6) as usize;
            let mut edges = vec![1.0];
            for _ in 0..bins {
                let last = edges[edges.len() - 1];
                edges.push(last + t * rng.uniform(0.1, 1.0));
            }
            Shape::Histogram {
                edges,
                weights: (0..bins).map(|_| rng.uniform(0.0, 1.0)).collect(),
            }
        }
    };
    let min = rng.chance(0.2).then(|| (t * 0.1).round().max(1.0));
    let max = rng
        .chance(0.5)
        .then(|| (t * rng.uniform(1.5, 40.0)).round().max(1.0));
    DistParams::new(shape).clamped(min, max)
}

fn class(
    rng: &mut Rng,
    i: usize,
    horizon_s: f64,
    requests: f64,
    words: &mut Vec<String>,
) -> ClassParams {
    let batch_size = if rng.chance(0.75) {
        DistParams::constant(1.0)
    } else {
        let typical = rng.log_uniform(1.0, 200.0);
        dist(rng, typical)
    };
    let mean_batch = 1.0
        + if batch_size == DistParams::constant(1.0) {
            0.0
        } else {
            10.0
        };
    let batches_per_hour = requests / mean_batch / horizon_s * 3600.0;
    let input = rng.log_uniform(4.0, 20_000.0);
    let output = rng.log_uniform(1.0, 4000.0);
    let mut c = ClassParams {
        name: format!("c{i}"),
        batches_per_hour,
        batch_size,
        time_of_day: rng
            .chance(0.15)
            .then(|| (0..24).map(|_| rng.uniform(0.0, 3.0)).collect()),
        input_tokens: dist(rng, input),
        output_tokens: dist(rng, output),
        lengths: None,
        prefix_cache_hit: if rng.chance(0.6) {
            0.0
        } else {
            rng.uniform(0.0, 0.99)
        },
        priority: rng.range(0, 3) as i32 - 1,
        deadline_s: rng.log_uniform(0.05, 86_400.0 * 2.0),
        timeout_s: rng.chance(0.2).then(|| rng.log_uniform(0.001, 3600.0)),
        load: LoadParams::Open,
    };
    match rng.below(4) {
        0 => {
            words.push("correlated lengths".into());
            c.input_tokens = DistParams::log_normal(input, input * 4.0);
            c.output_tokens = DistParams::log_normal(output, output * 3.0);
            c.lengths = Some(LengthsParams::Correlated {
                rho: rng.uniform(-0.99, 0.99),
            });
        }
        1 => {
            words.push("length pairs".into());
            let n = rng.range(1, 40) as usize;
            let pairs: Vec<[f64; 2]> = (0..n)
                .map(|_| {
                    [
                        (input * rng.uniform(0.1, 3.0)).round().max(1.0),
                        (output * rng.uniform(0.1, 3.0)).round().max(1.0),
                    ]
                })
                .collect();
            c.lengths = Some(LengthsParams::Pairs {
                weights: rng
                    .chance(0.4)
                    .then(|| (0..n).map(|_| rng.uniform(0.0, 2.0)).collect()),
                pairs,
            });
        }
        _ => {}
    }
    let count = requests.round().clamp(1.0, u32::MAX as f64) as u32;
    c.load = match rng.weighted(&[40, 12, 12, 24, 12]) {
        0 => LoadParams::Open,
        1 => {
            words.push("fixed count".into());
            LoadParams::FixedCount { requests: count }
        }
        2 => {
            words.push("offline".into());
            LoadParams::Offline { requests: count }
        }
        3 => {
            let clients = rng.range(1, 64) as u32;
            let think = rng.chance(0.5);
            let total = rng.chance(0.5);
            words.push(format!(
                "closed loop{}{}",
                if think { " with think time" } else { "" },
                if total { " and a total" } else { "" }
            ));
            LoadParams::ClosedLoop {
                clients,
                think_ms: think.then(|| {
                    let typical = rng.log_uniform(1.0, 60_000.0);
                    dist(rng, typical)
                }),
                requests: total.then_some(count),
            }
        }
        _ => {
            words.push("trace".into());
            let n = (requests.round() as usize).clamp(1, 2000);
            let mut t = 0.0;
            let requests = (0..n)
                .map(|_| {
                    if rng.chance(0.8) {
                        t += rng.log_uniform(1e-3, 2.0 * horizon_s / n as f64);
                    }
                    TracedRequest {
                        arrival_s: t,
                        input_tokens: (input * rng.uniform(0.1, 3.0)).round().max(1.0) as u32,
                        output_tokens: (output * rng.uniform(0.1, 3.0)).round().max(1.0) as u32,
                        prefix_hit: rng.chance(0.2).then(|| rng.uniform(0.0, 0.99)),
                    }
                })
                .collect();
            c.batch_size = DistParams::constant(1.0);
            c.time_of_day = None;
            LoadParams::Trace { requests }
        }
    };
    if !matches!(c.load, LoadParams::Open | LoadParams::FixedCount { .. }) {
        c.time_of_day = c.time_of_day.filter(|_| rng.chance(0.05));
    }
    if !matches!(c.load, LoadParams::Open | LoadParams::FixedCount { .. }) && rng.chance(0.9) {
        c.batch_size = DistParams::constant(1.0);
    }
    c
}

fn replica(rng: &mut Rng) -> ReplicaParams {
    ReplicaParams {
        gpus_per_replica: *rng.pick(&[1, 1, 1, 2, 4, 8]),
        gpu_memory_utilization: rng.uniform(0.5, 0.97),
        runtime_reserve_gib: rng.chance(0.2).then(|| rng.uniform(0.0, 20.0)),
    }
}

fn engine(rng: &mut Rng) -> EngineParams {
    let mut e = EngineParams {
        max_num_seqs: *rng.pick(&[1, 4, 64, 256, 256, 1024]),
        max_num_batched_tokens: *rng.pick(&[256, 2048, 8192, 8192, 65_536]),
        long_prefill_threshold: *rng.pick(&[0, 128, 512, 4096]),
        block_size: *rng.pick(&[1, 16, 16, 32, 128]),
        discipline: *rng.pick(&DISCIPLINES),
        max_waiting: rng.chance(0.2).then(|| rng.range(0, 200) as u32),
        max_model_len: rng.chance(0.15).then(|| rng.range(64, 131_072) as u32),
        schedule: if rng.chance(0.8) {
            Schedule::DecodeFirst
        } else {
            Schedule::PrefillFirst
        },
        prefix_caching: rng.chance(0.5),
    };
    // Mostly what validation asks: a budget for every running sequence,
    // and under prefill-first a budget for the longest prompt.
    if rng.chance(0.9) {
        e.max_num_batched_tokens = e.max_num_batched_tokens.max(e.max_num_seqs);
        if e.schedule == Schedule::PrefillFirst {
            e.max_model_len = e.max_model_len.map(|l| l.min(e.max_num_batched_tokens));
        }
    }
    e
}

/// A step-time model of each kind, with plausible values.
pub fn step_time(rng: &mut Rng, words: &mut Vec<String>) -> StepTimeParams {
    let (name, model) = match rng.below(5) {
        0 => (
            "alpha_beta",
            StepTimeParams::AlphaBeta {
                alpha_s_per_token: rng.log_uniform(1e-7, 1e-3),
                beta_s_per_step: rng.log_uniform(1e-4, 0.1),
                overhead_s: rng.log_uniform(1e-5, 0.01),
            },
        ),
        1 => (
            "roofline",
            StepTimeParams::Roofline {
                mfu: rng.uniform(0.05, 1.0),
                mbu: rng.uniform(0.05, 1.0),
                overhead_s: rng.log_uniform(1e-5, 0.01),
            },
        ),
        2 => {
            let mut ops = OperationsParams::default();
            if rng.chance(0.5) {
                ops.gemm_efficiency = Some(rng.uniform(0.05, 1.0));
                ops.kv_bandwidth_efficiency = Some(rng.uniform(0.05, 1.0));
                ops.overhead_s = Some(rng.log_uniform(1e-5, 0.01));
                ops.allreduce_latency_s = Some(rng.log_uniform(1e-6, 1e-3));
            }
            ops.cuda_graphs = match rng.below(5) {
                0 => CudaGraphs::DecodeOnly,
                1 => CudaGraphs::Off,
                2 => CudaGraphs::DecodeBatchSizes(
                    (0..rng.range(1, 8))
                        .map(|_| rng.range(1, 512) as u32)
                        .collect(),
                ),
                _ => CudaGraphs::Piecewise,
            };
            ("operations", StepTimeParams::Operations(ops))
        }
        3 => {
            let (tokens, kv) = (grid(rng, 8192.0), grid(rng, 200_000.0));
            let step_s = table(rng, tokens.len(), kv.len());
            (
                "table",
                StepTimeParams::Table {
                    batch_tokens: tokens,
                    kv_tokens: kv,
                    step_s,
                },
            )
        }
        _ => {
            let (sizes, context) = (grid(rng, 512.0), grid(rng, 32_000.0));
            let step_s = table(rng, sizes.len(), context.len());
            (
                "batch_table",
                StepTimeParams::BatchTable {
                    batch_sizes: sizes,
                    context_tokens: context,
                    step_s,
                },
            )
        }
    };
    words.push(format!("{name} step times"));
    model
}

/// An increasing axis of a measured table, from 1 (sometimes 0) to about
/// `top`.
fn grid(rng: &mut Rng, top: f64) -> Vec<f64> {
    let n = rng.range(1, 5) as usize;
    let mut axis: Vec<f64> = (0..n)
        .map(|k| (top * (k + 1) as f64 / n as f64).round())
        .collect();
    axis[0] = if rng.chance(0.5) { 0.0 } else { 1.0 };
    axis.dedup();
    axis
}

/// Step times increasing along both axes, in seconds (one table in
/// twenty with a random cell).
fn table(rng: &mut Rng, rows: usize, columns: usize) -> Vec<Vec<f64>> {
    let base = rng.log_uniform(1e-3, 0.05);
    let growth = |rng: &mut Rng, n: usize| {
        let mut total = 0.0;
        (0..n)
            .map(|k| {
                if k > 0 {
                    total += rng.uniform(0.0, 2.0);
                }
                total
            })
            .collect::<Vec<f64>>()
    };
    let (by_row, by_column) = (growth(rng, rows), growth(rng, columns));
    let mut table: Vec<Vec<f64>> = by_row
        .iter()
        .map(|a| by_column.iter().map(|b| base * (1.0 + a + b)).collect())
        .collect();
    if rng.chance(0.05) {
        let (i, j) = (rng.below(rows), rng.below(columns));
        table[i][j] = rng.log_uniform(1e-4, 1.0);
    }
    table
}

fn run(rng: &mut Rng, horizon_s: f64) -> RunParams {
    RunParams {
        horizon_s,
        warmup_s: if rng.chance(0.7) {
            0.0
        } else {
            horizon_s * rng.uniform(0.0, 0.5)
        },
        drain_s: rng
            .chance(0.5)
            .then(|| rng.log_uniform(1.0, horizon_s * 2.0)),
        seed: rng.range(0, 1000),
        series_interval_s: (horizon_s / rng.log_uniform(1.0, 2000.0)).max(0.01),
    }
}

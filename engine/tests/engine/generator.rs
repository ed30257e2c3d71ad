//! The oracle's generator: random scenarios over every feature both
//! engines share (load modes, traces, joint lengths, disciplines, routers,
//! schedules, step-time kinds, memory pressure), for `oracle.rs` to run
//! through the fast engine and the reference stepper. A new engine feature
//! extends both engines and this generator.

use proptest::prelude::*;
use sojourn_engine::{
    ClassParams, ClusterParams, CudaGraphs, Discipline, DistParams, EngineParams, HardwareParams,
    LengthsParams, LoadParams, OperationsParams, ReplicaParams, Router, RunParams, ScenarioParams,
    Schedule, Shape, StepTimeParams, TracedRequest,
};

use crate::support::{hardware_for_blocks, tiny_model};

fn dist(max: f64) -> impl Strategy<Value = DistParams> {
    (0..6u8, 1.0..max, 1.0..max).prop_map(move |(kind, a, b)| {
        let (lo, hi) = (a.min(b), a.max(b));
        let shape = match kind {
            0 => Shape::Constant { value: a.round() },
            1 => Shape::Uniform { low: lo, high: hi },
            2 => Shape::Exponential { mean: a },
            3 => Shape::Geometric { mean: a },
            4 => Shape::Gamma {
                mean: a,
                std_dev: b,
            },
            _ => Shape::LogNormal {
                median: lo,
                p90: hi + 1.0,
            },
        };
        DistParams::new(shape).clamped(None, Some(max))
    })
}

/// A load mode: mostly open streams; fixed counts, offline classes and
/// closed loops (with and without think times, totals and timeouts from
/// the class) each in about one case in ten. A closed loop's think times
/// are long enough, or its total small enough, that the reference stepper
/// keeps up.
fn load() -> impl Strategy<Value = LoadParams> {
    let think = prop_oneof![
        (100.0..5000.0f64).prop_map(|ms| DistParams::constant(ms.round())),
        (5000.0..60_000.0f64).prop_map(|mean| DistParams::new(Shape::Exponential { mean })),
    ];
    prop_oneof![
        12 => Just(LoadParams::Open),
        2 => (1..300u32).prop_map(|requests| LoadParams::FixedCount { requests }),
        2 => (1..200u32).prop_map(|requests| LoadParams::Offline { requests }),
        2 => (1..30u32, 1..300u32).prop_map(|(clients, requests)| LoadParams::ClosedLoop {
            clients,
            think_ms: None,
            requests: Some(requests),
        }),
        2 => (1..8u32, think, prop::option::of(1..300u32)).prop_map(
            |(clients, think, requests)| LoadParams::ClosedLoop {
                clients,
                think_ms: Some(think),
                requests,
            }
        ),
        2 => trace(),
    ]
}

/// A replayed trace: requests at times in the first 20 minutes (some
/// sharing a time, out of order as a file may list them), lengths that fit
/// the generated scenarios' caps, some with their own prefix-cache hit.
fn trace() -> impl Strategy<Value = LoadParams> {
    let request = (
        0..1200u32,
        1..1500u32,
        1..250u32,
        prop::option::of(0.0..0.9f64),
    )
        .prop_map(
            |(second, input_tokens, output_tokens, prefix_hit)| TracedRequest {
                arrival_s: f64::from(second),
                input_tokens,
                output_tokens,
                prefix_hit,
            },
        );
    prop::collection::vec(request, 1..200).prop_map(|requests| LoadParams::Trace { requests })
}

/// Prompt and output distributions and how they go together: mostly
/// independent, sometimes correlated log-normals or a table of pairs.
fn lengths() -> impl Strategy<Value = (DistParams, DistParams, Option<LengthsParams>)> {
    let log_normal = |max: f64| {
        (1.0..max / 2.0, 1.1..4.0f64)
            .prop_map(move |(m, r)| DistParams::log_normal(m, m * r).clamped(None, Some(max)))
    };
    let table = prop::collection::vec((1.0..1500.0f64, 1.0..250.0f64), 1..20).prop_map(|pairs| {
        LengthsParams::Pairs {
            weights: (pairs.len() % 2 == 0).then(|| (1..=pairs.len()).map(|k| k as f64).collect()),
            pairs: pairs.into_iter().map(|(i, o)| [i, o]).collect(),
        }
    });
    prop_oneof![
        8 => (dist(1500.0), dist(250.0)).prop_map(|(i, o)| (i, o, None)),
        1 => (log_normal(1500.0), log_normal(250.0), -0.95..0.95f64)
            .prop_map(|(i, o, rho)| (i, o, Some(LengthsParams::Correlated { rho }))),
        1 => (dist(1500.0), dist(250.0), table).prop_map(|(i, o, t)| (i, o, Some(t))),
    ]
}

fn class(index: usize) -> impl Strategy<Value = ClassParams> {
    (
        20.0..400.0f64,
        prop_oneof![
            Just(DistParams::constant(1.0)),
            (1.0..4.0f64).prop_map(|m| DistParams::new(Shape::Geometric { mean: m }))
        ],
        lengths(),
        prop_oneof![Just(0.0), 0.0..0.9f64],
        -1..3i32,
        prop_oneof![Just(86_400.0), 5.0..600.0f64],
        prop_oneof![3 => Just(None), 1 => (10.0..400.0f64).prop_map(Some)],
        load(),
    )
        .prop_map(
            move |(
                rate,
                batch_size,
                (input, output, lengths),
                hit,
                priority,
                deadline,
                timeout,
                load,
            )| {
                ClassParams {
                    name: format!("class-{index}"),
                    batches_per_hour: rate,
                    // Offline and closed-loop classes send one at a time.
                    batch_size: match load {
                        LoadParams::Open | LoadParams::FixedCount { .. } => batch_size,
                        _ => DistParams::constant(1.0),
                    },
                    time_of_day: None,
                    input_tokens: input,
                    output_tokens: output,
                    lengths,
                    prefix_cache_hit: hit,
                    priority,
                    deadline_s: deadline,
                    timeout_s: timeout,
                    load,
                }
            },
        )
}

fn step_time() -> impl Strategy<Value = StepTimeParams> {
    let alpha_beta = (1e-6..2e-4f64, 1e-3..4e-2f64, 0.0..4e-3f64).prop_map(|(a, b, o)| {
        StepTimeParams::AlphaBeta {
            alpha_s_per_token: a,
            beta_s_per_step: b,
            overhead_s: o,
        }
    });
    let roofline = (0.2..1.0f64, 0.2..1.0f64, 0.0..3e-3f64).prop_map(|(mfu, mbu, o)| {
        StepTimeParams::Roofline {
            mfu,
            mbu,
            overhead_s: o,
        }
    });
    let table = (1e-3..2e-2f64, 0.0..1e-2f64, 0.0..5e-2f64, 0.0..1e-2f64).prop_map(
        |(base, dk, db, dk2)| StepTimeParams::Table {
            batch_tokens: vec![1.0, 64.0, 2048.0],
            kv_tokens: vec![100.0, 3000.0, 40_000.0],
            step_s: vec![
                vec![base, base + dk, base + dk + dk2],
                vec![
                    base + db / 4.0,
                    base + dk + db / 4.0,
                    base + dk + dk2 + db / 4.0,
                ],
                vec![base + db, base + dk + db, base + 2.0 * dk + dk2 + db],
            ],
        },
    );
    // The per-operation model with random efficiencies and costs (its decode
    // pieces are what the fast engine sums), its steps padded to CUDA
    // graphs as vLLM V1 or V0 would, or not at all.
    let operations = (
        (0.2..1.0f64, 0.2..1.0f64, 0.2..1.0f64, 0.1..1.0f64),
        (0.0..1e-4f64, 0.0..3e-3f64),
        prop::sample::select(vec![
            CudaGraphs::Piecewise,
            CudaGraphs::DecodeOnly,
            CudaGraphs::Off,
        ]),
    )
        .prop_map(
            |((gemm, weights, attention, kv), (per_sequence, overhead), cuda_graphs)| {
                StepTimeParams::Operations(OperationsParams {
                    gemm_efficiency: Some(gemm),
                    weight_bandwidth_efficiency: Some(weights),
                    attention_efficiency: Some(attention),
                    kv_bandwidth_efficiency: Some(kv),
                    per_sequence_s: Some(per_sequence),
                    overhead_s: Some(overhead),
                    cuda_graphs,
                    ..OperationsParams::default()
                })
            },
        );
    prop_oneof![alpha_beta, roofline, operations, table]
}

pub fn scenario() -> impl Strategy<Value = ScenarioParams> {
    (
        1..=3usize,
        step_time(),
        (
            1..24u32,
            prop_oneof![Just(0u32), 1..600u32],
            // Powers of two take the fast engine's mask-and-shift path,
            // the others its division path: both against the reference.
            prop::sample::select(vec![1u32, 3, 4, 10, 16, 24, 32]),
        ),
        (20..600u32, 16..3000u32),
        (
            prop::sample::select(vec![
                Discipline::Fcfs,
                Discipline::Priority,
                Discipline::ShortestInputFirst,
                Discipline::EarliestDeadlineFirst,
            ]),
            prop_oneof![3 => Just(None), 1 => (1..40u32).prop_map(Some)],
            // Prefill-first in one case in three: whole prompts in steps of
            // their own, decodes run alone between them.
            prop_oneof![2 => Just(Schedule::DecodeFirst), 1 => Just(Schedule::PrefillFirst)],
            // Prefix caching (preempted requests keep their cached blocks)
            // in half the cases.
            any::<bool>(),
        ),
        (
            1..=3u32,
            prop::sample::select(vec![
                Router::RoundRobin,
                Router::JoinShortestQueue,
                Router::LeastKvLoad,
            ]),
        ),
        (300.0..1500.0f64, any::<u64>()),
    )
        .prop_flat_map(
            |(
                n,
                step,
                (seqs, threshold, block),
                (blocks, budget),
                queue,
                (replicas, router),
                (horizon, seed),
            )| {
                (
                    prop::collection::vec(class(0), n),
                    Just((
                        step, seqs, threshold, block, blocks, budget, queue, replicas, router,
                        horizon, seed,
                    )),
                )
            },
        )
        .prop_map(
            |(
                mut classes,
                (
                    step,
                    seqs,
                    threshold,
                    block,
                    blocks,
                    budget,
                    (discipline, waiting, schedule, prefix_caching),
                    replicas,
                    router,
                    horizon,
                    seed,
                ),
            )| {
                for (i, c) in classes.iter_mut().enumerate() {
                    c.name = format!("class-{i}");
                }
                // A run with a fixed count lasts until every request is done.
                let counted = classes.iter().any(|c| c.load.is_counted());
                let hardware = match &step {
                    // Slow enough memory and compute that the tiny model's steps
                    // take milliseconds and queues form.
                    StepTimeParams::Roofline { .. } | StepTimeParams::Operations(_) => {
                        HardwareParams {
                            bandwidth_gb_s: 0.002,
                            peak_tflops: 2e-5,
                            ..hardware_for_blocks(blocks, block)
                        }
                    }
                    _ => hardware_for_blocks(blocks, block),
                };
                ScenarioParams {
                    name: "generated".into(),
                    classes,
                    model: tiny_model(),
                    hardware,
                    replica: ReplicaParams {
                        gpus_per_replica: 1,
                        gpu_memory_utilization: 1.0,
                        runtime_reserve_gib: Some(0.0),
                    },
                    engine: EngineParams {
                        max_num_seqs: seqs,
                        max_num_batched_tokens: budget.max(seqs),
                        long_prefill_threshold: threshold,
                        block_size: block,
                        discipline,
                        max_waiting: waiting,
                        max_model_len: None,
                        schedule,
                        prefix_caching,
                    },
                    cluster: ClusterParams { replicas, router },
                    step_time: step,
                    run: RunParams {
                        horizon_s: horizon,
                        warmup_s: 0.0,
                        drain_s: (!counted).then_some(horizon),
                        seed,
                        series_interval_s: 60.0,
                    },
                    ..ScenarioParams::overnight_batch()
                }
            },
        )
}

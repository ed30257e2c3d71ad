//! Scenario builders shared by the tests.

use sojourn_engine::Dtype;
use sojourn_engine::{
    ClassParams, DistParams, EngineParams, HardwareParams, ModelParams, PlanOptions, PlanResult,
    Report, RunOptions, Scenario, ScenarioParams, Shape, StepTimeParams, plan, simulate,
};

/// Whether to rewrite generated files (docs/calibration.md's tables)
/// instead of comparing with them: `SOJOURN_BLESS=1`, the one switch for
/// every golden file and generated table in the workspace.
pub fn blessing() -> bool {
    std::env::var_os("SOJOURN_BLESS").is_some_and(|value| value == "1")
}

/// A model so small that memory is never the limit unless asked: 2 bytes of
/// weights per parameter, 256 bytes of KV per token.
pub fn tiny_model() -> ModelParams {
    ModelParams {
        name: "tiny".into(),
        params_b: 0.0001,
        active_params_b: None,
        layers: 1,
        q_heads: 1,
        kv_heads: 1,
        head_dim: 64,
        kv_latent_dim: None,
        weight_dtype: Dtype::Bf16,
        kv_dtype: Dtype::Bf16,
        hidden_size: None,
        intermediate_size: None,
        vocab_size: None,
        moe: None,
        mla: None,
        sliding_window: None,
    }
}

/// Hardware whose memory gives about `blocks` KV blocks of `block_size`
/// tokens for [`tiny_model`] (256 bytes per token).
pub fn hardware_for_blocks(blocks: u32, block_size: u32) -> HardwareParams {
    let bytes = 0.0001e9 * 2.0 + blocks as f64 * block_size as f64 * 256.0 + 1.0;
    HardwareParams {
        name: "test accelerator".into(),
        memory_gib: bytes / 1_073_741_824.0,
        bandwidth_gb_s: 1000.0,
        peak_tflops: 100.0,
        peak_fp8_tflops: None,
        peak_fp4_tflops: None,
        interconnect: None,
    }
}

/// A queue in the classical sense: every step lasts `step_s` whatever it
/// holds, prompts are one token, and service time is (output tokens) x
/// `step_s`. With `servers` = max_num_seqs and ample KV, the engine is an
/// M^X/G/c queue.
pub fn classical_queue(
    batches_per_s: f64,
    batch_size: DistParams,
    output_tokens: DistParams,
    servers: u32,
    step_s: f64,
    horizon_s: f64,
    seed: u64,
) -> ScenarioParams {
    ScenarioParams {
        name: "classical queue".into(),
        classes: vec![ClassParams {
            name: "jobs".into(),
            batches_per_hour: batches_per_s * 3600.0,
            batch_size,
            input_tokens: DistParams::constant(1.0),
            output_tokens,
            deadline_s: 1e9,
            ..ClassParams::default()
        }],
        model: tiny_model(),
        hardware: hardware_for_blocks(1_000_000, 16),
        replica: sojourn_engine::ReplicaParams {
            gpus_per_replica: 1,
            gpu_memory_utilization: 1.0,
            runtime_reserve_gib: Some(0.0),
        },
        engine: EngineParams {
            max_num_seqs: servers,
            max_num_batched_tokens: servers.max(16),
            ..EngineParams::default()
        },
        cluster: sojourn_engine::ClusterParams {
            replicas: 1,
            router: sojourn_engine::Router::RoundRobin,
        },
        step_time: StepTimeParams::AlphaBeta {
            alpha_s_per_token: 0.0,
            beta_s_per_step: 0.0,
            overhead_s: step_s,
        },
        run: sojourn_engine::RunParams {
            horizon_s,
            warmup_s: 200.0,
            drain_s: Some(horizon_s),
            seed,
            series_interval_s: 10.0,
        },
        ..ScenarioParams::overnight_batch()
    }
}

/// The M/M/c special case of [`classical_queue`]: single arrivals and
/// geometric service of mean `mean_steps` steps (exponential in the limit
/// of short steps).
pub fn mmc(
    arrivals_per_s: f64,
    mean_steps: f64,
    servers: u32,
    step_s: f64,
    horizon_s: f64,
    seed: u64,
) -> ScenarioParams {
    classical_queue(
        arrivals_per_s,
        DistParams::constant(1.0),
        geometric(mean_steps),
        servers,
        step_s,
        horizon_s,
        seed,
    )
}

pub fn geometric(mean: f64) -> DistParams {
    DistParams::new(Shape::Geometric { mean })
}

pub fn run(params: ScenarioParams) -> Report {
    let scenario = Scenario::try_from(params).expect("test scenario is valid");
    simulate(&scenario, &RunOptions::default()).expect("test run finishes")
}

/// Mean and standard error of a statistic over independent replications.
pub fn mean_and_se(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// A plan over a one-class queue: 30 jobs/s on replicas that serve one job
/// at a time (1 ms steps, `output_tokens` steps per job), 500 s measured
/// after 100 s of warm-up, a join-shortest-queue router, the target P(S >
/// `deadline_s`) <= 5% for every class, up to 16 replicas, judged on the
/// mean of 3 seeds (the tests on it check hand computations and brute force;
/// the decision rule has tests of its own), FCFS only.
pub fn planned_queue(output_tokens: DistParams, deadline_s: f64, seed: u64) -> ScenarioParams {
    let mut p = classical_queue(
        30.0,
        DistParams::constant(1.0),
        output_tokens,
        1,
        0.001,
        600.0,
        seed,
    );
    p.cluster.router = sojourn_engine::Router::JoinShortestQueue;
    p.classes[0].deadline_s = deadline_s;
    p.run.warmup_s = 100.0;
    p.run.drain_s = None;
    p.plan.targets = vec![sojourn_engine::TargetParams::MissProbability {
        class: None,
        epsilon: 0.05,
    }];
    p.plan.replications = 3;
    p.plan.min_replications = 3;
    p.plan.decision = sojourn_engine::DecisionRule::Mean;
    p.plan.max_replicas = 16;
    p.plan.search.disciplines = Some(vec![sojourn_engine::Discipline::Fcfs]);
    p
}

/// A plan's options with the capacity search alone (no cases, curve or
/// sensitivity), on one thread.
pub fn search_only() -> PlanOptions {
    PlanOptions {
        threads: 1,
        ..PlanOptions::default()
    }
    .search_only()
}

/// The search-only plan of `params` (valid).
pub fn planned(params: &ScenarioParams) -> PlanResult {
    let scenario = Scenario::try_from(params.clone()).expect("valid");
    plan(&scenario, &search_only()).expect("plans")
}

/// The default scenario's flood in six flat hours on one candidate: batches
/// of hundreds to thousands of 24 h requests arriving beside an API stream
/// with a 60 s deadline.
pub fn flood() -> ScenarioParams {
    let mut p = ScenarioParams::overnight_batch();
    p.run.horizon_s = 6.0 * 3600.0;
    for class in &mut p.classes {
        class.time_of_day = None;
    }
    if let Some(candidates) = p.plan.candidates.as_mut() {
        candidates.truncate(1);
    }
    p
}

/// 30 jobs/s of exactly 0.2 s each (200 one-millisecond steps) on replicas
/// that serve one job at a time: a = 6 Erlangs, so at least 7 replicas, and
/// more for P(S > 0.3 s) <= 5% (a wait above 0.1 s misses).
pub fn servers_scenario(seed: u64) -> ScenarioParams {
    let mut p = planned_queue(DistParams::constant(200.0), 0.3, seed);
    p.cluster.replicas = 8;
    p
}

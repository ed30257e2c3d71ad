//! The load estimate's saturation throughput against simulated overload,
//! and the saturation warnings (issue 19, item 5).
//!
//! "Simulated saturation" is the completion rate over the second half of a
//! 20-minute run offered 1.5 times the estimated capacity: the queue never
//! empties, so every replica works at its capacity.

use sojourn_engine::{
    ClassParams, DistParams, Dtype, EngineKind, LoadEstimate, OperationsParams, Report, RunOptions,
    Scenario, ScenarioParams, Status, StepTimeParams, load_estimate, presets, simulate,
};

/// One class of fixed lengths on one replica of `hardware`.
fn scenario(model: &str, hardware: &str, tp: u32, input: f64, output: f64) -> ScenarioParams {
    let mut p = ScenarioParams::overnight_batch();
    p.model = presets::model(model).expect("model");
    p.hardware = presets::hardware(hardware).expect("hardware");
    p.replica.gpus_per_replica = tp;
    p.cluster.replicas = 1;
    p.step_time = StepTimeParams::Operations(OperationsParams::default());
    p.classes = vec![ClassParams {
        name: "load".into(),
        batches_per_hour: 1.0,
        input_tokens: DistParams::constant(input),
        output_tokens: DistParams::constant(output),
        ..ClassParams::default()
    }];
    p.plan = Default::default();
    p
}

/// `p` offered `load` times its estimated saturation rate for 20 minutes.
fn offered(mut p: ScenarioParams, load: f64) -> (f64, Report) {
    let estimate = load_estimate(&Scenario::try_from(p.clone()).expect("valid"));
    p.classes[0].batches_per_hour = 3600.0 * load * estimate.saturation_rate_per_s;
    p.run.horizon_s = 1200.0;
    p.run.drain_s = Some(0.0);
    let s = Scenario::try_from(p).expect("valid");
    let options = RunOptions {
        engine: EngineKind::Fast,
        keep_records: true,
        ..RunOptions::default()
    };
    (
        estimate.saturation_rate_per_s,
        simulate(&s, &options).expect("runs"),
    )
}

/// The requests completed over the second half of the run.
fn second_half(r: &Report) -> impl Iterator<Item = &sojourn_engine::RequestRecord> {
    r.records
        .iter()
        .filter(|x| x.status == Status::Completed && (600.0..=1200.0).contains(&x.end_s))
}

/// Completions per second over the second half of the run.
fn completion_rate(r: &Report) -> f64 {
    second_half(r).count() as f64 / 600.0
}

/// Tokens recomputed per request completed over the second half of the run.
fn recomputed_per_completion(r: &Report) -> f64 {
    let (n, tokens) = second_half(r).fold((0.0, 0.0), |(n, t), x| {
        (n + 1.0, t + x.recomputed_tokens as f64)
    });
    tokens / n
}

/// Where the KV cache holds every running request without preemption, the
/// estimate (mixed decode + chunked-prefill steps at the concurrency the
/// engine allows) is within 3% of the simulated saturation, for short and
/// long prompts and outputs. (The completion rate over 600 s counts 2,900
/// to 37,000 requests; its sampling error at constant lengths is far below
/// 1%, so 3% is the model's error, not noise.)
#[test]
fn the_saturation_estimate_is_within_3_percent_where_the_kv_cache_does_not_bind() {
    for (model, hardware, input, output) in [
        ("llama-3.1-8b", "h100-sxm", 200.0, 200.0),
        ("llama-3.1-8b", "h100-sxm", 200.0, 2000.0),
        ("llama-3.1-8b", "a100-80gb", 50.0, 500.0),
        ("llama-3.1-8b", "h200-sxm", 1000.0, 300.0),
    ] {
        let (estimate, r) = offered(scenario(model, hardware, 1, input, output), 1.5);
        assert_eq!(r.overall.preemptions, 0, "{model} {input}/{output}");
        let simulated = completion_rate(&r);
        let error = estimate / simulated - 1.0;
        assert!(
            error.abs() <= 0.03,
            "{model} on {hardware}, {input}/{output}: estimate {estimate}, simulated {simulated}"
        );
    }
}

/// Where the KV cache binds, an overloaded engine preempts and recomputes
/// (20% to 55% of its step time here): the plain estimate, counting
/// none, is 15% to 67% above the simulated saturation, and the same
/// saturated step with the recomputation the run measured per completed
/// request (`LoadEstimate::recomputing`) is within 3% of it, for long
/// prompts with short outputs, short prompts with long outputs, both long,
/// and 70B on two H100s. This checks the step model, not a prediction: the
/// recomputation comes from the run (no closed form for it yet; the shapes
/// where even this misses 3% are listed in `docs/engine.md`).
#[test]
fn where_the_kv_cache_binds_the_saturated_step_with_the_measured_recomputation_is_within_3_percent()
{
    for (model, weights, tp, input, output) in [
        ("llama-3.1-8b", Dtype::Bf16, 1, 8000.0, 300.0),
        ("llama-3.1-8b", Dtype::Bf16, 1, 3000.0, 500.0),
        ("llama-3.1-8b", Dtype::Bf16, 1, 2000.0, 200.0),
        ("llama-3.1-8b", Dtype::Bf16, 1, 200.0, 4000.0),
        ("llama-3.1-8b", Dtype::Bf16, 1, 2000.0, 2000.0),
        ("llama-3.1-70b", Dtype::Fp8, 2, 2000.0, 500.0),
        ("llama-3.1-70b", Dtype::Fp8, 2, 500.0, 1500.0),
    ] {
        let mut p = scenario(model, "h100-sxm", tp, input, output);
        p.model.weight_dtype = weights;
        let (estimate, r) = offered(p.clone(), 1.5);
        let simulated = completion_rate(&r);
        let shape = format!("{model} TP{tp} {input}/{output}");
        assert!(
            estimate > 1.1 * simulated,
            "{shape}: plain {estimate}, simulated {simulated}"
        );
        let recomputed = recomputed_per_completion(&r);
        let s = Scenario::try_from(p).expect("valid");
        let with = LoadEstimate::recomputing(&s, recomputed).saturation_rate_per_s;
        assert!(
            (with / simulated - 1.0).abs() <= 0.03,
            "{shape}: recomputing {recomputed} tokens {with}, simulated {simulated}"
        );
    }
}

/// Where the KV cache binds, an overloaded engine preempts and recomputes
/// (here most of its time): the estimate, which counts no recomputation,
/// is above what the simulation sustains, and the report says the queue
/// kept growing although rho was below 1.
#[test]
fn where_the_kv_cache_binds_growing_queues_are_flagged_below_rho_one() {
    let mut p = scenario("llama-3.1-70b", "h100-sxm", 2, 1000.0, 1000.0);
    p.model.weight_dtype = Dtype::Fp8;
    let (estimate, r) = offered(p, 0.9);
    assert!(r.load.rho < 1.0, "rho {}", r.load.rho);
    assert!(
        r.overall.busy_s_recomputed > 0.2 * r.busy_s,
        "recomputed {}",
        r.overall.busy_s_recomputed
    );
    assert!(completion_rate(&r) < 0.9 * estimate);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("Queues were still growing")),
        "{:?}",
        r.warnings
    );
}

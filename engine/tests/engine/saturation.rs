//! The load estimate's saturation throughput against simulated overload,
//! and the saturation warnings (issue 19, item 5).
//!
//! "Simulated saturation" is the completion rate over the second half of a
//! run offered 1.5 times the formula's capacity (`load_estimate`, at or above
//! the simulated one): the queue never empties, so every replica works at
//! its capacity. The report's estimate is `report_load_estimate`: the
//! formula where the KV cache holds every running request, measured on a
//! saturated replica where it binds.

use sojourn_engine::{
    ClassParams, DistParams, Dtype, EngineKind, OperationsParams, Report, RunOptions, Scenario,
    ScenarioParams, Status, StepTimeParams, load_estimate, presets, report_load_estimate, simulate,
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

/// Where the KV cache holds every running request without preemption, the
/// estimate (mixed decode + chunked-prefill steps at the concurrency the
/// engine allows) is within 3% of the simulated saturation, for short and
/// long prompts and outputs. (The completion rate over 600 s counts 2,900
/// to 37,000 requests; its sampling error at constant lengths is far below
/// 1%, so 3% is the model's error, not noise.)
#[test]
#[ignore = "slow: saturation measured on long runs; scripts/test runs it"]
fn the_saturation_estimate_is_within_3_percent_where_the_kv_cache_does_not_bind() {
    for (model, hardware, input, output) in [
        ("llama-3.1-8b", "h100-sxm", 200.0, 200.0),
        ("llama-3.1-8b", "h100-sxm", 200.0, 2000.0),
        ("llama-3.1-8b", "a100-80gb", 50.0, 500.0),
        ("llama-3.1-8b", "h200-sxm", 1000.0, 300.0),
    ] {
        let (estimate, r) = offered(scenario(model, hardware, 1, input, output), 1.5);
        assert_eq!(r.overall.preemptions, 0, "{model} {input}/{output}");
        assert!(!r.load.measured, "{model} {input}/{output}");
        let simulated = completion_rate(&r);
        let error = estimate / simulated - 1.0;
        assert!(
            error.abs() <= 0.03,
            "{model} on {hardware}, {input}/{output}: estimate {estimate}, simulated {simulated}"
        );
    }
}

/// The shapes of `docs/engine.md` where the KV cache binds: twelve of
/// constant lengths (long prompts with short outputs, short prompts with long
/// outputs, both long; 8B on an H100 and an A100, 70B FP8 on two H100s) and
/// three of lognormal lengths (the last binds only through its long
/// outputs: the mean lengths alone say it fits).
fn kv_bound_shapes() -> Vec<(String, ScenarioParams)> {
    let mut shapes = Vec::new();
    for (model, hardware, tp, input, output) in [
        ("llama-3.1-8b", "h100-sxm", 1, 4000.0, 1000.0),
        ("llama-3.1-70b", "h100-sxm", 2, 1000.0, 1000.0),
        ("llama-3.1-8b", "h100-sxm", 1, 200.0, 4000.0),
        ("llama-3.1-8b", "h100-sxm", 1, 8000.0, 300.0),
        ("llama-3.1-8b", "a100-80gb", 1, 500.0, 3000.0),
        ("llama-3.1-8b", "h100-sxm", 1, 300.0, 6000.0),
        ("llama-3.1-8b", "h100-sxm", 1, 2000.0, 2000.0),
        ("llama-3.1-8b", "h100-sxm", 1, 3000.0, 500.0),
        ("llama-3.1-8b", "h100-sxm", 1, 6000.0, 1000.0),
        ("llama-3.1-8b", "h100-sxm", 1, 2000.0, 200.0),
        ("llama-3.1-70b", "h100-sxm", 2, 2000.0, 500.0),
        ("llama-3.1-70b", "h100-sxm", 2, 500.0, 1500.0),
    ] {
        let mut p = scenario(model, hardware, tp, input, output);
        if tp == 2 {
            p.model.weight_dtype = Dtype::Fp8;
        }
        shapes.push((format!("{model} TP{tp} on {hardware}, {input}/{output}"), p));
    }
    let lognormal =
        |median: f64, p90: f64| DistParams::log_normal(median, p90).clamped(None, Some(4.0 * p90));
    for (model, tp, input, output) in [
        ("llama-3.1-8b", 1, (2000.0, 6000.0), (300.0, 1000.0)),
        ("llama-3.1-70b", 2, (500.0, 1500.0), (1000.0, 3000.0)),
        ("llama-3.1-8b", 1, (300.0, 1000.0), (2000.0, 5000.0)),
    ] {
        let mut p = scenario(model, "h100-sxm", tp, 1.0, 1.0);
        if tp == 2 {
            p.model.weight_dtype = Dtype::Fp8;
        }
        p.classes[0].input_tokens = lognormal(input.0, input.1);
        p.classes[0].output_tokens = lognormal(output.0, output.1);
        shapes.push((
            format!("{model} TP{tp}, lognormal {input:?}/{output:?} (median, p90)"),
            p,
        ));
    }
    shapes
}

/// The completion rate over the second half of a run of `p` offered 1.5
/// times the formula's saturation rate for `horizon_s`, with `seed`.
fn saturated_rate(p: &ScenarioParams, formula_rate: f64, horizon_s: f64, seed: u64) -> f64 {
    let mut p = p.clone();
    p.classes[0].batches_per_hour = 3600.0 * 1.5 * formula_rate;
    p.run.horizon_s = horizon_s;
    p.run.drain_s = Some(0.0);
    p.run.seed = seed;
    let r = simulate(
        &Scenario::try_from(p).expect("valid"),
        &RunOptions::default(),
    )
    .expect("runs");
    let done = r.records.iter().filter(|x| {
        x.status == Status::Completed && x.end_s >= horizon_s / 2.0 && x.end_s <= horizon_s
    });
    done.count() as f64 / (horizon_s / 2.0)
}

/// Where the KV cache binds, the overloaded engine thrashes (it admits on
/// the first chunk, preempts the most recently admitted and recomputes):
/// the formula, counting no recomputation, is 15% to 130% above the
/// simulated saturation without prefix caching (every preemption
/// recomputes the whole context) and 7% to 84% above it with it (a
/// preempted request recomputes only what was evicted), and the report's
/// estimate, measured on one saturated replica (`sim::saturation`), is
/// within 3% of it either way. The overload
/// runs are independent of the estimate's: other seeds, offered 1.5 times
/// the formula's rate (the estimate's run is offered twice it), and three
/// times as long (the estimate's run expects 10,000 completions at the
/// formula's rate, these 32,000). Constant lengths can lock into a periodic schedule
/// whose rate depends on how the run began (8000/300 settles at 1.74 or
/// 1.40 requests/s without prefix caching), so the simulated saturation is
/// the median of three runs, the rate a run typically settles at.
#[test]
#[ignore = "slow: saturation measured on long runs of every case; scripts/test runs it"]
fn where_the_kv_cache_binds_the_measured_saturation_estimate_is_within_3_percent() {
    let shapes = kv_bound_shapes().into_iter();
    for ((shape, mut p), prefix_caching) in shapes.flat_map(|s| [(s.clone(), false), (s, true)]) {
        p.engine.prefix_caching = prefix_caching;
        let shape = format!("{shape}, prefix caching {prefix_caching}");
        let s = Scenario::try_from(p.clone()).expect("valid");
        let formula = load_estimate(&s).saturation_rate_per_s;
        let estimate = report_load_estimate(&s);
        assert!(estimate.measured, "{shape}: not measured");
        let horizon_s = 32_000.0 / formula;
        let mut rates: Vec<f64> = (1..=3)
            .map(|seed| saturated_rate(&p, formula, horizon_s, seed))
            .collect();
        rates.sort_by(f64::total_cmp);
        let simulated = rates[1];
        let optimism = if prefix_caching { 1.05 } else { 1.1 };
        assert!(
            formula > optimism * simulated,
            "{shape}: formula {formula}, simulated {simulated}"
        );
        let error = estimate.saturation_rate_per_s / simulated - 1.0;
        eprintln!(
            "{shape}: formula {formula:.3}, estimate {:.3}, simulated {rates:.3?}, error {:+.1}%",
            estimate.saturation_rate_per_s,
            100.0 * error
        );
        if shape == BISTABLE {
            assert!(
                error > 0.03,
                "{shape} now within 3%: drop it from BISTABLE and the docs"
            );
            continue;
        }
        assert!(
            error.abs() <= 0.03,
            "{shape}: estimate {}, simulated {rates:?}",
            estimate.saturation_rate_per_s
        );
    }
}

/// The one shape where the estimate misses: 8,000/300 with prefix caching
/// on one H100 (a KV cache of 454,000 tokens since the reserve follows
/// vLLM's profile; within 3% at the flat 2 GiB's 450,900) locks into two
/// periodic schedules, the estimate's run (offered twice the formula's
/// rate) at 2.28 requests/s, the overload runs (1.5 times) at 1.59-1.66: a
/// saturated rate that depends on how hard the engine is pushed, which the
/// estimate overstates by 38% (docs/engine.md, "Saturation").
const BISTABLE: &str = "llama-3.1-8b TP1 on h100-sxm, 8000/300, prefix caching true";

/// Where the KV cache binds, the report's rho counts the recomputation:
/// offered 0.9 times the formula's capacity, which counts none, the engine
/// recomputes for a fifth of its time and cannot keep up, and the report
/// says so (rho above 1: "Overloaded").
#[test]
fn where_the_kv_cache_binds_the_report_warns_of_overload_the_formula_would_miss() {
    let mut p = scenario("llama-3.1-70b", "h100-sxm", 2, 1000.0, 1000.0);
    p.model.weight_dtype = Dtype::Fp8;
    let (formula, r) = offered(p, 0.9);
    assert!(r.load.measured);
    assert!(r.load.rho > 1.0, "rho {}", r.load.rho);
    assert!(
        r.overall.busy_s_recomputed > 0.2 * r.busy_s,
        "recomputed {}",
        r.overall.busy_s_recomputed
    );
    assert!(completion_rate(&r) < 0.9 * formula);
    assert!(
        r.warnings.iter().any(|w| w.starts_with("Overloaded")),
        "{:?}",
        r.warnings
    );
}

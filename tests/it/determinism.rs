//! The engine gives bit-identical results natively and under wasm32.
//!
//! `tests/golden/determinism.json` pins the digest of every per-request time
//! for a small scenario with a fixed seed; `tests/golden/wide.json` does the
//! same for a "wide" scenario that reaches every sampler through its own
//! code path (gamma, unclamped lognormals, exponential and geometric batch
//! sizes, a time-of-day profile), timeouts, rejections and preemption, under
//! each service discipline and both routers; `tests/golden/loads.json` the
//! newer load models (closed-loop clients, offline and fixed-count classes,
//! a replayed trace, correlated and tabled joint lengths) under both engine
//! schedules. The
//! native run and the wasm32
//! run (in headless Chromium) both compare against them, so together they
//! prove the two targets agree. After an intended change to the engine's
//! numbers, re-bless natively with
//! `SOJOURN_BLESS=1 cargo test -p sojourn-app --test it`.

use serde_json::{Value, json};
use sojourn_engine::{
    ClassParams, ClusterParams, Discipline, DistParams, EngineParams, LengthsParams, LoadParams,
    ReplicaParams, Router, RunOptions, RunParams, Scenario, ScenarioParams, Schedule, Shape,
    TracedRequest, simulate,
};

/// The golden files, embedded at compile time so the wasm32 build reads them too.
const GOLDEN: &str = include_str!("../golden/determinism.json");
const GOLDEN_WIDE: &str = include_str!("../golden/wide.json");
const GOLDEN_LOADS: &str = include_str!("../golden/loads.json");

/// One hour of the default scenario with seed 7: small enough to run in a
/// second in the browser, large enough to exercise queueing.
fn small_scenario() -> Scenario {
    let params = ScenarioParams {
        run: RunParams {
            horizon_s: 3600.0,
            seed: 7,
            ..RunParams::default()
        },
        ..ScenarioParams::overnight_batch()
    };
    Scenario::try_from(params).expect("the small scenario is valid")
}

/// Two hours of two classes on a replica short of KV cache, with the
/// given discipline and router: every sampler family the engine has, drawn
/// directly (no clamps, so no alias table), a time-of-day profile (the
/// arrivals come from inverting the integrated rate), client timeouts, a
/// bounded queue and preemption.
fn wide_scenario(discipline: Discipline, router: Router) -> Scenario {
    let defaults = ScenarioParams::overnight_batch();
    let mut profile = vec![1.0; 24];
    profile[1] = 0.3;
    let chat = ClassParams {
        name: "chat".into(),
        batches_per_hour: 2400.0,
        batch_size: DistParams::new(Shape::Geometric { mean: 2.0 }),
        time_of_day: Some(profile),
        input_tokens: DistParams::new(Shape::Gamma {
            mean: 2500.0,
            std_dev: 2000.0,
        }),
        output_tokens: DistParams::log_normal(300.0, 1500.0),
        priority: 0,
        deadline_s: 120.0,
        timeout_s: Some(90.0),
        ..ClassParams::default()
    };
    let batch = ClassParams {
        name: "batch".into(),
        batches_per_hour: 120.0,
        batch_size: DistParams::new(Shape::Exponential { mean: 6.0 }),
        time_of_day: None,
        input_tokens: DistParams::new(Shape::LogNormalMoments {
            mean: 1500.0,
            std_dev: 2500.0,
        }),
        output_tokens: DistParams::new(Shape::Gamma {
            mean: 400.0,
            std_dev: 300.0,
        }),
        priority: 1,
        deadline_s: 1800.0,
        timeout_s: None,
        ..ClassParams::default()
    };
    let params = ScenarioParams {
        classes: vec![chat, batch],
        replica: ReplicaParams {
            // About 2.9 GiB of KV cache per replica: the running batch
            // outgrows it and requests are preempted.
            gpu_memory_utilization: 0.26,
            runtime_reserve_gib: Some(1.0),
            ..defaults.replica.clone()
        },
        engine: EngineParams {
            discipline,
            max_waiting: Some(400),
            max_model_len: Some(16_000),
            block_size: 16,
            ..defaults.engine.clone()
        },
        cluster: ClusterParams {
            replicas: 2,
            router,
        },
        run: RunParams {
            horizon_s: 7200.0,
            seed: 11,
            ..RunParams::default()
        },
        ..defaults
    };
    Scenario::try_from(params).expect("the wide scenario is valid")
}

/// Half an hour of the newer load models under `schedule`: closed-loop
/// clients with think times and correlated prompt and output lengths, an
/// offline class drawing from a table of (prompt, output) pairs, and a
/// fixed count of Poisson arrivals, and a replayed trace (some of its
/// requests with their own prefix-cache hit), on the per-operation
/// step-time model.
fn loads_scenario(schedule: Schedule) -> Scenario {
    let defaults = ScenarioParams::overnight_batch();
    let chat = ClassParams {
        name: "chat".into(),
        input_tokens: DistParams::log_normal(600.0, 3000.0),
        output_tokens: DistParams::log_normal(150.0, 700.0),
        lengths: Some(LengthsParams::Correlated { rho: 0.6 }),
        load: LoadParams::ClosedLoop {
            clients: 24,
            think_ms: Some(DistParams::new(Shape::Exponential { mean: 800.0 })),
            requests: None,
        },
        ..ClassParams::default()
    };
    let documents = ClassParams {
        name: "documents".into(),
        lengths: Some(LengthsParams::Pairs {
            pairs: vec![[4000.0, 200.0], [900.0, 60.0], [12_000.0, 500.0]],
            weights: Some(vec![2.0, 5.0, 1.0]),
        }),
        load: LoadParams::Offline { requests: 150 },
        ..ClassParams::default()
    };
    let api = ClassParams {
        name: "api".into(),
        batches_per_hour: 3600.0,
        input_tokens: DistParams::new(Shape::Gamma {
            mean: 800.0,
            std_dev: 500.0,
        }),
        load: LoadParams::FixedCount { requests: 800 },
        ..ClassParams::default()
    };
    let replayed = ClassParams {
        name: "replayed".into(),
        load: LoadParams::Trace {
            requests: (0..300u32)
                .map(|i| TracedRequest {
                    arrival_s: f64::from(i / 2) * 9.5,
                    input_tokens: 100 + (i * 37) % 3000,
                    output_tokens: 20 + (i * 13) % 400,
                    prefix_hit: (i % 4 == 0).then_some(0.4),
                })
                .collect(),
        },
        ..ClassParams::default()
    };
    let params = ScenarioParams {
        classes: vec![chat, documents, api, replayed],
        engine: EngineParams {
            schedule,
            max_model_len: Some(16_000),
            max_num_batched_tokens: 16_000,
            ..defaults.engine.clone()
        },
        run: RunParams {
            horizon_s: 1800.0,
            seed: 5,
            ..RunParams::default()
        },
        ..defaults
    };
    Scenario::try_from(params).expect("the load-model scenario is valid")
}

/// What the golden file holds for a run: the digest as 16 hex digits and the
/// number of arrivals (a readable hint when the digest changes).
fn summary(scenario: &Scenario) -> Value {
    let report = simulate(scenario, &RunOptions::default()).expect("the run succeeds");
    json!({
        "digest": format!("{:016x}", report.digest()),
        "arrived": report.overall.arrived,
    })
}

fn observed() -> Value {
    summary(&small_scenario())
}

/// One entry per discipline and router, with the counts that show the wide
/// scenario really reaches timeouts, rejections and preemption.
fn observed_wide() -> Value {
    let mut runs = serde_json::Map::new();
    for (name, discipline, router) in [
        ("fcfs", Discipline::Fcfs, Router::JoinShortestQueue),
        ("priority", Discipline::Priority, Router::JoinShortestQueue),
        (
            "shortest_input_first",
            Discipline::ShortestInputFirst,
            Router::RoundRobin,
        ),
        (
            "earliest_deadline_first",
            Discipline::EarliestDeadlineFirst,
            Router::RoundRobin,
        ),
    ] {
        let scenario = wide_scenario(discipline, router);
        let report = simulate(&scenario, &RunOptions::default()).expect("the run succeeds");
        let o = &report.overall;
        runs.insert(
            name.to_string(),
            json!({
                "digest": format!("{:016x}", report.digest()),
                "arrived": o.arrived,
                "timed_out": o.timed_out,
                "rejected": o.rejected,
                "preemptions": o.preemptions,
            }),
        );
    }
    Value::Object(runs)
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn fixed_seed_reproduces_golden_digest() {
    check_golden("determinism.json", GOLDEN, &observed());
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn wide_scenario_reproduces_golden_digests() {
    let observed = observed_wide();
    // The scenario is only worth its name if it reaches what it is for.
    for (name, run) in observed.as_object().expect("an object") {
        for count in ["timed_out", "rejected", "preemptions"] {
            assert!(
                run[count].as_u64() > Some(0),
                "{name}: no {count} in the wide scenario"
            );
        }
    }
    check_golden("wide.json", GOLDEN_WIDE, &observed);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn load_models_reproduce_golden_digests() {
    let mut runs = serde_json::Map::new();
    for (name, schedule) in [
        ("decode_first", Schedule::DecodeFirst),
        ("prefill_first", Schedule::PrefillFirst),
    ] {
        runs.insert(name.to_string(), summary(&loads_scenario(schedule)));
    }
    check_golden("loads.json", GOLDEN_LOADS, &Value::Object(runs));
}

/// Compares `observed` with the golden `file` (embedded as `golden`), or,
/// natively with `SOJOURN_BLESS=1`, rewrites the file.
fn check_golden(file: &str, golden: &str, observed: &Value) {
    #[cfg(not(target_arch = "wasm32"))]
    if crate::blessing() {
        bless(file, observed);
        return;
    }
    let golden: Value = serde_json::from_str(golden).expect("the golden file is JSON");
    assert_eq!(
        observed, &golden,
        "the engine's output pinned in tests/golden/{file} changed; if that is \
         intended, re-bless natively with SOJOURN_BLESS=1"
    );
}

#[cfg(not(target_arch = "wasm32"))]
fn bless(file: &str, observed: &Value) {
    let path = format!("{}/tests/golden/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = serde_json::to_string_pretty(observed).expect("a JSON value serialises");
    std::fs::write(path, text + "\n").expect("the golden file is writable");
}

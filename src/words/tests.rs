use sojourn_engine::{LoadParams, Scenario, ScenarioParams, TracedRequest};

use super::*;

fn default() -> ScenarioParams {
    ScenarioParams::overnight_batch()
}

/// The words for `path` in the default scenario.
fn words(path: &str) -> String {
    field_words(path, Some(&default()))
}

/// The page's messages for `params` as the engine checks it.
fn messages(params: ScenarioParams) -> Vec<String> {
    let error = Scenario::try_from(params.clone()).expect_err("invalid");
    scenario_messages(&error, Some(&params))
}

#[test]
fn a_class_is_named_by_its_name_and_its_fields_by_their_labels() {
    let p = default();
    let name = &p.classes[1].name;
    assert_eq!(
        words("classes[1].deadline_s"),
        format!("Class \"{name}\", deadline (SLA)")
    );
    assert_eq!(
        words("classes[0].batches_per_hour"),
        format!("Class \"{}\", batch arrivals", p.classes[0].name)
    );
    // Without the scenario (a file that did not read), by number.
    assert_eq!(
        field_words("classes[2].prefix_cache_hit", None),
        "Class 3, prefix cache hit"
    );
    assert_eq!(field_words("classes", None), "Request classes");
}

#[test]
fn a_distribution_field_reads_as_its_editor_labels_it() {
    let mut p = default();
    p.classes[0].input_tokens = DistParams {
        shape: sojourn_engine::Shape::LogNormal {
            median: 400.0,
            p90: 2000.0,
        },
        min: None,
        max: None,
    };
    let name = p.classes[0].name.clone();
    assert_eq!(
        field_words("classes[0].input_tokens.p90", Some(&p)),
        format!("Class \"{name}\", input (prompt) tokens, p90")
    );
    assert_eq!(
        field_words("classes[0].input_tokens.median", Some(&p)),
        format!("Class \"{name}\", input (prompt) tokens, median")
    );
    assert_eq!(
        field_words("classes[0].input_tokens.max", Some(&p)),
        format!("Class \"{name}\", input (prompt) tokens, cap (max)")
    );
    assert_eq!(
        class_field_words("output_tokens.values[4]", None),
        "Output tokens, values, entry 5"
    );
}

#[test]
fn a_trace_request_and_the_load_boxes_are_counted_from_one() {
    let mut p = default();
    p.classes[0].name = "chat".to_string();
    let request = |input_tokens| TracedRequest {
        arrival_s: 0.0,
        input_tokens,
        output_tokens: 10,
        prefix_hit: None,
    };
    p.classes[0].load = LoadParams::Trace {
        requests: vec![request(100), request(0)],
    };
    assert_eq!(
        field_words("classes[0].load.requests[1].input_tokens", Some(&p)),
        "Class \"chat\", trace request 2, input tokens"
    );
    let shown = messages(p);
    assert!(
        shown
            .iter()
            .any(|m| m.starts_with("Class \"chat\", trace request 2, input tokens: ")),
        "{shown:?}"
    );
    let mut closed = default();
    closed.classes[0].load = LoadParams::ClosedLoop {
        clients: 4,
        requests: Some(0),
        think_ms: None,
    };
    assert!(field_words("classes[0].load.requests", Some(&closed)).ends_with(", requests in all"));
    assert!(words("classes[0].load.requests").ends_with(", requests"));
    assert!(words("classes[0].time_of_day[7]").ends_with(", time of day, 07h"));
    assert!(words("classes[0].lengths.pairs[2][1]").ends_with(", pairs, row 3, output"));
}

#[test]
fn the_model_hardware_and_cluster_fields_read_as_their_panels() {
    assert_eq!(words("model.kv_heads"), "Model, KV heads");
    assert_eq!(words("model.params_b"), "Model, parameters");
    assert_eq!(words("hardware.memory_gib"), "Hardware, memory");
    assert_eq!(
        words("replica.gpus_per_replica"),
        "Hardware, GPUs per replica"
    );
    assert_eq!(words("cluster.replicas"), "Cluster, replicas");
    assert_eq!(
        words("engine.max_num_batched_tokens"),
        "Serving engine, token budget per step"
    );
    assert_eq!(
        words("step_time.kv_bandwidth_efficiency"),
        "Step-time model, KV reads: share of bandwidth"
    );
    let mut roofline = default();
    roofline.step_time = sojourn_engine::StepTimeParams::default();
    assert_eq!(
        field_words("step_time.mfu", Some(&roofline)),
        "Step-time model, compute utilisation (MFU)"
    );
    assert_eq!(words("step_time_scale"), "Step-time calibration");
}

#[test]
fn the_run_and_the_plan_read_as_their_panels() {
    assert_eq!(words("run.warmup_s"), "Simulation, warm-up");
    assert_eq!(words("plan.targets[2].bound_s"), "SLA target 3, at most");
    assert_eq!(
        words("plan.targets[0].epsilon"),
        "SLA target 1, largest P(miss)"
    );
    assert_eq!(
        words("plan.candidates[1].usd_per_gpu_hour"),
        "Hardware option 2, price per GPU-hour"
    );
    assert_eq!(
        words("plan.pricing.fixed_usd_per_month"),
        "Prices, fixed costs"
    );
    assert_eq!(words("plan.worst.arrival_rate"), "Worst case, arrival rate");
    assert_eq!(
        words("plan.service_curve.load_multipliers[1]"),
        "Service curve, service-curve loads, entry 2"
    );
    assert_eq!(
        words("plan.max_replicas"),
        "Capacity plan, largest fleet searched"
    );
}

// What the engine reports is named in words, for a value of every
// section: the path it reports is the one the words know.
#[test]
fn the_engines_own_messages_name_no_path() {
    let mut p = default();
    p.classes[1].deadline_s = -5.0;
    p.model.layers = 0;
    p.hardware.memory_gib = -1.0;
    p.engine.max_num_seqs = 0;
    p.cluster.replicas = 0;
    p.run.horizon_s = -1.0;
    p.plan.targets = vec![sojourn_engine::TargetParams::TpotPercentile {
        class: None,
        percentile: 0.9,
        bound_s: -1.0,
    }];
    let shown = messages(p);
    for expected in [
        "Class \"api\", deadline (SLA): ",
        "Model, layers: ",
        "Hardware, memory: ",
        "Serving engine, max sequences per step: ",
        "Cluster, replicas: ",
        "Simulation, horizon: ",
        "SLA target 1, at most: ",
    ] {
        assert!(
            shown.iter().any(|m| m.starts_with(expected)),
            "{expected} in {shown:?}"
        );
    }
    for message in &shown {
        assert!(
            !message.contains('[') && !message.contains('_'),
            "{message}"
        );
    }
}

#[test]
fn an_unknown_path_still_reads_with_every_part_kept() {
    assert_eq!(
        field_words("frobnicate.max_x[3]", None),
        "Frobnicate, max x, entry 4"
    );
    assert_eq!(
        words("model.moe.experts"),
        "Model, mixture of experts, experts"
    );
    assert_eq!(
        words("plan.search.replicas"),
        "What the plan compares, replicas"
    );
    assert_eq!(
        words("plan.search.max_num_seqs[1]"),
        "What the plan compares, sequence limits compared, entry 2"
    );
    assert_eq!(
        message("", "expected value at line 1", None),
        "expected value at line 1"
    );
}

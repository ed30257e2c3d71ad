//! Tests of `scenario.rs`: validation, field errors, the derived model.

use super::*;
use crate::params::*;

fn errors_of(params: ScenarioParams) -> ScenarioError {
    Scenario::try_from(params).expect_err("scenario should be invalid")
}

/// The reason `e` gives for `field`, which must have one.
fn reason<'e>(e: &'e ScenarioError, field: &str) -> &'e str {
    e.for_field(field)
        .unwrap_or_else(|| panic!("no error for {field}: {e}"))
}

#[test]
fn default_scenario_is_valid_and_round_trips_through_json() {
    let params = ScenarioParams::overnight_batch();
    let json = serde_json::to_string(&params).expect("serialises");
    let back: ScenarioParams = serde_json::from_str(&json).expect("parses");
    assert_eq!(back, params);
    Scenario::try_from(back).expect("default is valid");
}

#[test]
fn request_count_mean_and_sd_are_compound_poisson() {
    use crate::params::dist::{DistParams, Shape};
    // 3600 batches/h for 100 s: 100 batches expected. Single requests:
    // sd = sqrt(100) = 10. Geometric batches of mean 4 (E[X^2] = 28):
    // mean 400, sd = sqrt(100 x 28).
    let mut p = ScenarioParams {
        classes: vec![ClassParams {
            batches_per_hour: 3600.0,
            ..ClassParams::default()
        }],
        ..ScenarioParams::overnight_batch()
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
    let mut p = ScenarioParams::overnight_batch();
    p.classes.clear();
    let e = errors_of(p);
    assert_eq!(
        e.for_field("classes"),
        Some("must hold at least one request class")
    );
}

#[test]
fn nan_and_negative_rates_name_their_field() {
    let mut p = ScenarioParams::overnight_batch();
    p.classes[0].batches_per_hour = f64::NAN;
    p.classes[1].batches_per_hour = -3.0;
    let e = errors_of(p);
    assert!(reason(&e, "classes[0].batches_per_hour").contains("NaN"));
    assert!(reason(&e, "classes[1].batches_per_hour").contains("-3"));
}

#[test]
fn zero_deadline_and_bad_distribution_parameters_are_reported_together() {
    let mut p = ScenarioParams::overnight_batch();
    p.classes[0].deadline_s = 0.0;
    p.classes[0].input_tokens = DistParams::log_normal(1000.0, 800.0);
    p.classes[0].batch_size = DistParams::new(Shape::Geometric { mean: 0.5 });
    let e = errors_of(p);
    assert!(e.for_field("classes[0].deadline_s").is_some());
    assert!(reason(&e, "classes[0].input_tokens.p90").contains("greater than the median (1000)"));
    assert!(reason(&e, "classes[0].batch_size.mean").contains("at least 1"));
    assert_eq!(e.errors.len(), 3, "{e}");
}

#[test]
fn time_of_day_needs_24_hours() {
    let mut p = ScenarioParams::overnight_batch();
    p.classes[0].time_of_day = Some(vec![1.0; 23]);
    let e = errors_of(p);
    assert!(reason(&e, "classes[0].time_of_day").contains("24"));
}

#[test]
fn token_budget_below_max_num_seqs_is_rejected() {
    let mut p = ScenarioParams::overnight_batch();
    p.engine.max_num_batched_tokens = 128;
    let e = errors_of(p);
    assert!(reason(&e, "engine.max_num_batched_tokens").contains("max_num_seqs (256)"));
}

#[test]
fn prefill_first_needs_a_budget_that_holds_max_model_len() {
    let mut p = ScenarioParams::overnight_batch();
    p.engine.max_model_len = Some(16_000);
    Scenario::try_from(p.clone()).expect("decode-first chunks long prompts");
    p.engine.schedule = Schedule::PrefillFirst;
    let e = errors_of(p.clone());
    let why = reason(&e, "engine.max_num_batched_tokens");
    assert!(
        why.contains("max_model_len (16000)") && why.contains("got 8192"),
        "{why}"
    );
    p.engine.max_num_batched_tokens = 16_000;
    Scenario::try_from(p).expect("a budget of max_model_len holds every sequence");
}

#[test]
fn under_prefill_first_without_max_model_len_the_budget_bounds_a_sequence() {
    let mut p = ScenarioParams::overnight_batch();
    let decode_first = Scenario::try_from(p.clone()).expect("valid");
    assert!(decode_first.memory().max_seq_tokens > 8192);
    p.engine.schedule = Schedule::PrefillFirst;
    let prefill_first = Scenario::try_from(p.clone()).expect("valid");
    assert_eq!(prefill_first.memory().max_seq_tokens, 8192);
    p.engine.max_model_len = Some(4000);
    let capped = Scenario::try_from(p).expect("valid");
    assert_eq!(capped.memory().max_seq_tokens, 4000);
}

#[test]
fn a_misspelt_schedule_names_its_field() {
    let mut json = serde_json::to_value(ScenarioParams::overnight_batch()).expect("value");
    json["engine"]["schedule"] = "prefill_firts".into();
    let text = serde_json::to_vec(&json).expect("bytes");
    let e = crate::params::scenario_params_from_json(&text).unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("engine.schedule") && e.contains("prefill_first"),
        "{e}"
    );
    json["engine"]["schedule"] = "prefill_first".into();
    let text = serde_json::to_vec(&json).expect("bytes");
    let p = crate::params::scenario_params_from_json(&text).expect("parses");
    assert_eq!(p.engine.schedule, Schedule::PrefillFirst);
    // Decode-first, the default, is left out of the JSON.
    let default = serde_json::to_value(ScenarioParams::overnight_batch()).expect("value");
    assert!(default["engine"].get("schedule").is_none());
}

#[test]
fn unknown_fields_and_future_versions_are_errors_not_silence() {
    let err = serde_json::from_str::<ScenarioParams>(r#"{"nmae": "typo"}"#).unwrap_err();
    assert!(err.to_string().contains("unknown field `nmae`"), "{err}");
    let p = ScenarioParams {
        version: 99,
        ..ScenarioParams::overnight_batch()
    };
    assert!(reason(&errors_of(p), "version").contains("99"));
}

#[test]
fn a_file_names_classes_model_and_hardware_and_the_rest_is_neutral() {
    // Without the three sections there is no neutral value: an error
    // naming the first one missing, never the example's classes.
    let e =
        crate::params::scenario_params_from_json(br#"{"version": 1, "name": "x"}"#).unwrap_err();
    assert_eq!(e.field, "classes", "{e}");
    assert!(e.reason.contains("missing"), "{e}");
    // With them, everything else is neutral: one replica, the engine's
    // defaults, no price, no targets, the 24 h deadline.
    let example = ScenarioParams::overnight_batch();
    let json = format!(
        r#"{{"classes": [{{"name": "a", "batches_per_hour": 60,
             "input_tokens": {{"kind": "constant", "value": 100}},
             "output_tokens": {{"kind": "constant", "value": 10}}}}],
           "model": {}, "hardware": {}}}"#,
        serde_json::to_string(&example.model).unwrap(),
        serde_json::to_string(&example.hardware).unwrap(),
    );
    let p = crate::params::scenario_params_from_json(json.as_bytes()).unwrap();
    assert_eq!(p.engine, EngineParams::default());
    assert_eq!(p.cluster.replicas, 1);
    assert_eq!(p.plan.pricing.usd_per_gpu_hour, None);
    assert!(p.plan.targets.is_empty());
    assert_eq!(p.classes[0].deadline_s, crate::params::DAY_S);
    assert_eq!(
        p.classes[0].batch_size,
        crate::params::DistParams::constant(1.0)
    );
    assert_eq!(p.version, FORMAT_VERSION);
    Scenario::try_from(p).expect("a minimal file is valid");
}

//! Scenario and plan files across versions: an old file without a plan
//! section still reads, every shipped example is valid, and a plan result
//! round-trips through JSON with its infinities.

use sojourn_engine::{
    PlanOptions, PlanResult, Scenario, ScenarioParams, SensitivityInput, TargetParams, plan,
};

use crate::support::servers_scenario;

fn valid(p: ScenarioParams) -> Scenario {
    Scenario::try_from(p).expect("test scenario is valid")
}

#[test]
fn old_scenario_files_without_a_plan_section_still_read() {
    // A file written before the planner existed: no plan, no step_time_scale.
    let example = serde_json::to_value(ScenarioParams::overnight_batch()).expect("serialises");
    let old = format!(
        r#"{{
        "version": 1,
        "name": "old file",
        "classes": [{{"name": "api", "batches_per_hour": 600, "deadline_s": 60,
                     "input_tokens": {{"kind": "constant", "value": 500}},
                     "output_tokens": {{"kind": "constant", "value": 100}}}}],
        "model": {},
        "hardware": {},
        "cluster": {{"replicas": 3, "router": "round_robin"}},
        "run": {{"horizon_s": 600, "warmup_s": 0, "seed": 4, "series_interval_s": 60}}
    }}"#,
        example["model"], example["hardware"]
    );
    let params: ScenarioParams = serde_json::from_str(&old).expect("an old file parses");
    // Neutral plan values: no price, no targets (not the example's price).
    assert_eq!(params.plan, sojourn_engine::PlanParams::default());
    assert_eq!(params.step_time_scale, 1.0);
    Scenario::try_from(params.clone()).expect("and is valid");
    let json = serde_json::to_string(&params).unwrap();
    let back: ScenarioParams = serde_json::from_str(&json).unwrap();
    assert_eq!(
        back, params,
        "it round-trips with the new sections filled in"
    );
}

#[test]
fn example_scenarios_are_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).expect("scenarios/ exists") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let params: ScenarioParams =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            Scenario::try_from(params).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            files += 1;
        }
    }
    assert!(files >= 3, "found {files} example scenarios");
}

#[test]
#[ignore = "slow: a full plan; scripts/test runs it"]
fn plan_results_round_trip_through_json_with_infinities() {
    // An unattainable percentile target gives infinite values (requests
    // that never finish count as infinitely late): they travel as "inf".
    let mut p = servers_scenario(17);
    p.classes[0].batches_per_hour = 60.0 * 3600.0;
    p.plan.max_replicas = 2;
    p.plan.targets = vec![TargetParams::SojournPercentile {
        class: None,
        percentile: 0.99,
        bound_s: 0.5,
    }];
    let result = plan(&valid(p), &PlanOptions::default()).unwrap();
    let at = result.configurations[0].search.at_answer.as_ref().unwrap();
    assert!(at.checks[0].mean.is_infinite(), "{:?}", at.checks[0]);
    let json = serde_json::to_string(&result).unwrap();
    assert!(json.contains("\"mean\":\"inf\""), "{json}");
    let back: PlanResult = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, result);

    // And a full plan, with curve, scenarios and sensitivity.
    let mut p = servers_scenario(19);
    p.plan.max_replicas = 12;
    p.plan.replications = 2;
    p.plan.min_replications = 2;
    p.plan.sensitivity.inputs = vec![SensitivityInput::ArrivalRate];
    p.plan.service_curve.load_multipliers = vec![0.5, 1.0, 2.0];
    let result = plan(&valid(p), &PlanOptions::default()).unwrap();
    assert!(result.service_curve.is_some() && result.sensitivity.is_some());
    assert_eq!(result.scenarios.len(), 3);
    let back: PlanResult = serde_json::from_str(&serde_json::to_string(&result).unwrap()).unwrap();
    assert_eq!(back, result);
}

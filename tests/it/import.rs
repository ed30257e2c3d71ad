//! Reading the files a user opens: a scenario's JSON and a request
//! trace's CSV (`form/import.rs`).

use sojourn_app::form::{import_scenario, import_trace};

#[test]
fn an_imported_file_with_a_wrong_type_names_the_field() {
    let error = import_scenario(r#"{"engine": {"max_num_seqs": "256"}}"#).unwrap_err();
    assert!(
        error.contains("Serving engine, max sequences per step: invalid type"),
        "{error}"
    );
    let error = import_scenario(
        r#"{"classes": [{"name": "api", "input_tokens": {"kind": "constant", "value": 9, "median": 5}}]}"#,
    )
    .unwrap_err();
    assert!(
        error.contains("Class 1, input (prompt) tokens, median: unknown field"),
        "{error}"
    );
}

/// A file that reads but is not a valid scenario is loaded, with each of
/// the engine's problems in the form's words; one that does not read says
/// why and loads nothing.
#[test]
fn an_invalid_scenario_is_imported_with_its_problems_and_malformed_json_is_refused() {
    let mut params = sojourn_engine::ScenarioParams::overnight_batch();
    params.engine.max_num_seqs = 0;
    let text = serde_json::to_string(&params).expect("serialises");
    let (imported, problems) = import_scenario(&text).expect("reads");
    assert_eq!(imported, params);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("Serving engine, max sequences per step: "),
        "{problems:?}"
    );
    let error = import_scenario("{\"classes\": [").expect_err("malformed");
    assert!(
        error.starts_with("it is not a Sojourn scenario: "),
        "{error}"
    );
}

/// A trace replaces the classes with ones that replay it exactly (and are
/// fitted to it), keeps the deadline of a class it names again, and a bad
/// row is refused by row and column, leaving nothing half-imported.
#[test]
fn an_imported_trace_is_replayed_exactly_and_a_bad_one_names_its_row() {
    let base = sojourn_engine::ScenarioParams::overnight_batch();
    let api_deadline = base
        .classes
        .iter()
        .find(|c| c.name == "api")
        .map(|c| c.deadline_s);
    let text = "arrival_s,input_tokens,output_tokens,class\n0,100,20,api\n60,300,40,api\n60,2000,500,bulk\n";
    let (params, summary) = import_trace(&base, text).expect("reads");
    let names: Vec<&str> = params.classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["api", "bulk"]);
    assert_eq!(Some(params.classes[0].deadline_s), api_deadline);
    assert_eq!(
        params.classes[1].deadline_s, 86_400.0,
        "a new class: the 24 h default"
    );
    assert!(
        summary.starts_with("3 requests replayed exactly in 2 class(es)"),
        "{summary}"
    );
    assert_eq!(params.model, base.model, "only the classes change");
    // The run sends exactly the trace's requests: times, classes, lengths.
    let scenario = sojourn_engine::Scenario::try_from(params).expect("valid");
    let report = sojourn_engine::simulate(&scenario, &Default::default()).expect("runs");
    let sent: Vec<(f64, u16, u32, u32)> = report
        .records
        .iter()
        .map(|r| (r.arrival_s, r.class, r.input_tokens, r.output_tokens))
        .collect();
    assert_eq!(
        sent,
        [(0.0, 0, 100, 20), (60.0, 0, 300, 40), (60.0, 1, 2000, 500)]
    );

    let e = import_trace(
        &base,
        "arrival_s,input_tokens,output_tokens\n0,1,2\n5,-3,2\n",
    )
    .expect_err("a negative length");
    assert!(e.contains("trace row 3, column input_tokens"), "{e}");
}

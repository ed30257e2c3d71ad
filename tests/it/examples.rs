//! The shipped scenarios the page offers under "Open an example", and the
//! page's guide against `docs/guide.md`.

use sojourn_app::panels::guide::CHECKLIST;
use sojourn_app::panels::toolbar::{EXAMPLES, import_scenario};

fn repository() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_example_decodes_and_validates() {
    for example in EXAMPLES {
        let (params, problems) =
            import_scenario(example.json).unwrap_or_else(|e| panic!("{}: {e}", example.file));
        assert!(problems.is_empty(), "{}: {problems:?}", example.file);
        assert!(!params.name.is_empty(), "{} has no name", example.file);
    }
}

/// A file added to `scenarios/` must be added to the menu too.
#[test]
fn the_menu_offers_every_shipped_scenario() {
    let mut shipped: Vec<String> = std::fs::read_dir(repository().join("scenarios"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    shipped.sort();
    let mut offered: Vec<String> = EXAMPLES.iter().map(|e| e.file.to_string()).collect();
    offered.sort();
    assert_eq!(offered, shipped);
}

/// The page's checklist asks the questions `docs/guide.md` answers.
#[test]
fn the_page_checklist_is_the_guides() {
    let guide = std::fs::read_to_string(repository().join("docs/guide.md")).unwrap();
    for (question, _) in CHECKLIST {
        assert!(
            guide.contains(&format!("| {question} |")),
            "docs/guide.md does not answer {question:?}"
        );
    }
}

/// A trace replaces the classes with ones that replay it exactly (and are
/// fitted to it), keeps the deadline of a class it names again, and a bad
/// row is refused by row and column, leaving nothing half-imported.
#[test]
fn an_imported_trace_is_replayed_exactly_and_a_bad_one_names_its_row() {
    use sojourn_app::panels::toolbar::import_trace;
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

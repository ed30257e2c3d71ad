//! The page's inputs declared once (`registry`): every input a box edits
//! has a label and an explanation, and the messages about a field name it
//! with its box's label (issue 41: the labels were written in the panels
//! and again in `words.rs`, and nothing checked that they agreed).

use sojourn_app::registry::{
    INPUTS, OPERATIONS, Which, inputs, shape_fields, shape_lists, step_time_numbers,
};
use sojourn_app::words::field_words;
use sojourn_engine::{
    DistParams, LoadParams, OperationsParams, ScenarioParams, Shape, StepTimeParams,
};

/// Boxes with no field of the engine's behind them: a checkbox that adds
/// or removes a whole section (no message can name it).
fn is_switch(path: &str) -> bool {
    path.ends_with(".on")
}

/// `pattern` with every `[]` as the first item: `classes[0].name`.
fn first_item(pattern: &str) -> String {
    pattern.replace("[]", "[0]")
}

/// The default scenario with the class's load a closed loop (where
/// `load.requests` is "requests in all") when `closed_loop`.
fn scenario(closed_loop: bool) -> ScenarioParams {
    let mut params = ScenarioParams::overnight_batch();
    if closed_loop {
        params.classes[0].load = LoadParams::ClosedLoop {
            clients: 4,
            requests: None,
            think_ms: None,
        };
    }
    params
}

/// Whether `words` (a message's name of a field) ends with `label`, the
/// box's label (after a comma a label reads in lower case).
fn names(words: &str, label: &str) -> bool {
    words.to_lowercase().ends_with(&label.to_lowercase())
}

#[test]
fn every_input_the_page_edits_has_a_label_and_an_explanation() {
    for input in INPUTS {
        assert!(
            !input.label.trim().is_empty(),
            "{} has no label",
            input.path
        );
        assert!(
            !input.help.trim().is_empty(),
            "{} ({}) has no explanation",
            input.path,
            input.label
        );
        assert!(!input.path.is_empty(), "{} has no path", input.label);
    }
    // Every input declared is listed, so the words and this test see it.
    let declared = include_str!("../../src/registry/inputs.rs")
        .matches(": Input =")
        .count();
    assert_eq!(declared, INPUTS.len(), "an input is missing from INPUTS");
    // Two inputs share a path only where a mode decides what it means.
    let mut paths: Vec<&str> = INPUTS.iter().map(|input| input.path).collect();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(
        paths.len(),
        INPUTS.len() - 1,
        "only load.requests is shared"
    );
}

#[test]
fn a_message_names_each_input_as_its_box_does() {
    for input in INPUTS.iter().filter(|input| !is_switch(input.path)) {
        let closed_loop = std::ptr::eq(*input, &inputs::CLASS_LOAD_REQUESTS_IN_ALL);
        let path = first_item(input.path);
        let words = field_words(&path, Some(&scenario(closed_loop)));
        assert!(
            names(&words, input.label),
            "{path} reads {words:?} in messages, its box {:?}",
            input.label
        );
    }
}

#[test]
fn the_boxes_drawn_from_tables_have_labels_explanations_and_words() {
    // A distribution's numbers and lists, for each shape and each of a
    // class's distributions.
    let shapes = [
        DistParams::constant(5.0),
        DistParams::log_normal(100.0, 400.0),
        DistParams::new(Shape::Exponential { mean: 20.0 }),
    ];
    for which in [Which::BatchSize, Which::Input, Which::Output] {
        assert!(!which.help().is_empty() && !which.title().is_empty());
        for words in [which.family_words(), which.cap_words()] {
            assert!(!words.label.is_empty() && !words.help.is_empty());
        }
        for dist in &shapes {
            let mut params = ScenarioParams::overnight_batch();
            *which.get_mut(&mut params.classes[0]) = dist.clone();
            for &(field, label) in shape_fields(&dist.shape) {
                let path = format!("classes[0].{}.{field}", which.field());
                let words = field_words(&path, Some(&params));
                assert!(
                    names(&words, label),
                    "{path} reads {words:?}, its box {label:?}"
                );
            }
        }
    }
    let histogram = Shape::Histogram {
        edges: vec![1.0, 2.0, 4.0],
        weights: vec![1.0, 1.0],
    };
    for &(_, label, help, _) in shape_lists(&histogram) {
        assert!(!label.is_empty() && !help.is_empty());
    }
    // Each step-time model's numbers.
    let models = [
        ("roofline", StepTimeParams::default()),
        (
            "operations",
            StepTimeParams::Operations(OperationsParams::default()),
        ),
    ];
    for (kind, model) in models {
        let numbers = if kind == "operations" {
            OPERATIONS
        } else {
            step_time_numbers(kind)
        };
        let params = ScenarioParams {
            step_time: model,
            ..ScenarioParams::overnight_batch()
        };
        for &(field, label, _, _, help) in numbers {
            assert!(!help.is_empty(), "step_time.{field} has no explanation");
            let words = field_words(&format!("step_time.{field}"), Some(&params));
            assert!(names(&words, label), "step_time.{field} reads {words:?}");
        }
    }
}

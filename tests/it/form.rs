//! Reading what users type, and the edits behind the form's buttons.

use sojourn_app::form::{
    convert_shape, dist_preview, duration_text, new_class, parse_count, parse_duration_s,
    parse_list, parse_number, shape_kind, typical_seq_tokens,
};
use sojourn_engine::{DistParams, ScenarioParams, Shape};

#[test]
fn numbers_accept_separators_and_exponents_but_not_words() {
    assert_eq!(parse_number("1,800"), Some(1800.0));
    assert_eq!(parse_number(" 1e-4 "), Some(1e-4));
    assert_eq!(parse_number(""), None);
    assert_eq!(parse_number("ten"), None);
    assert_eq!(parse_number("inf"), None, "infinity is not a usable input");
    // A comma groups thousands only: a decimal comma is refused, never
    // read as a larger number (the review's "3,5" became 35).
    assert_eq!(parse_number("1,234,567.5"), Some(1_234_567.5));
    assert_eq!(parse_number("-12,345"), Some(-12_345.0));
    for typed in ["3,5", "12,34", "1,8000", ",800", "1.5,0", "1,800,"] {
        assert_eq!(parse_number(typed), None, "{typed}");
    }
    assert_eq!(parse_count("12"), Some(12));
    assert_eq!(parse_count("1.5"), None);
    assert_eq!(parse_count("-1"), None);
}

#[test]
fn durations_read_units_and_show_the_largest_whole_unit() {
    let check = |text, seconds| assert_eq!(parse_duration_s(text), Some(seconds), "{text}");
    check("90", 90.0);
    check("90 s", 90.0);
    check("250ms", 0.25);
    check("15 min", 900.0);
    check("24h", 86_400.0);
    check("1.5 d", 129_600.0);
    assert_eq!(parse_duration_s("soon"), None);
    assert_eq!(parse_duration_s("5 fortnights"), None);
    assert_eq!(duration_text(86_400.0), "24 h");
    assert_eq!(duration_text(60.0), "1 min");
    assert_eq!(duration_text(90.0), "90 s");
    assert_eq!(duration_text(0.25), "0.25 s");
    for seconds in [86_400.0, 60.0, 90.0, 0.25, 5400.0] {
        assert_eq!(parse_duration_s(&duration_text(seconds)), Some(seconds));
    }
}

#[test]
fn lists_read_commas_and_spaces() {
    assert_eq!(parse_list("0.5, 1,1.5  2"), Some(vec![0.5, 1.0, 1.5, 2.0]));
    assert_eq!(parse_list("1, x"), None);
}

#[test]
fn switching_a_distribution_family_keeps_its_typical_value() {
    let lognormal = Shape::LogNormal {
        median: 1500.0,
        p90: 6000.0,
    };
    assert_eq!(
        convert_shape(&lognormal, "constant"),
        Shape::Constant { value: 1500.0 }
    );
    let gamma = convert_shape(&lognormal, "gamma");
    assert_eq!(shape_kind(&gamma), "gamma");
    // Every family a menu offers converts to a distribution the engine accepts.
    for (kind, _) in sojourn_app::form::SHAPE_KINDS {
        let shape = convert_shape(&lognormal, kind);
        assert!(dist_preview(&DistParams::new(shape)).is_ok(), "{kind}");
    }
}

#[test]
fn the_preview_uses_the_engines_sampler_and_messages() {
    let summary = dist_preview(&DistParams::log_normal(1000.0, 3000.0))
        .expect("a valid distribution previews");
    assert!(
        (summary.p50 - 1000.0).abs() < 100.0,
        "median {}",
        summary.p50
    );
    assert_eq!(summary.histogram.len(), 20);
    let error = dist_preview(&DistParams::log_normal(1000.0, 800.0))
        .expect_err("p90 below the median is invalid");
    assert!(error.contains("greater than the median (1000)"), "{error}");
}

#[test]
fn new_classes_get_unused_names() {
    let params = ScenarioParams::overnight_batch();
    let class = new_class(&params);
    assert!(params.classes.iter().all(|c| c.name != class.name));
}

#[test]
fn the_memory_bar_judges_a_typical_request() {
    let tokens = typical_seq_tokens(&ScenarioParams::overnight_batch());
    // The API stream dominates the request rate: about 800 + 200 tokens.
    assert!((900.0..2000.0).contains(&tokens), "{tokens}");
}

//! Charts are SVG strings: check what they draw by reading them.

use std::collections::BTreeMap;

use sojourn_app::charts::hex;
use sojourn_app::charts::{
    Theme, TornadoMetric, cdf_chart, chart_width, series_chart, service_curve_chart, tornado_chart,
    tornado_rows,
};
use sojourn_app::job::Case;
use sojourn_app::results::cdf_input;
use sojourn_engine::{
    PlanOptions, RunOptions, RunParams, RunSummary, Scenario, ScenarioParams, SensitivityInput,
    plan, simulate,
};

fn run(params: ScenarioParams) -> RunSummary {
    let scenario = Scenario::try_from(params).expect("valid");
    let report = simulate(&scenario, &RunOptions::default()).expect("runs");
    RunSummary::new(report, &scenario)
}

fn hour() -> ScenarioParams {
    ScenarioParams {
        run: RunParams {
            horizon_s: 3600.0,
            ..RunParams::default()
        },
        ..ScenarioParams::overnight_batch()
    }
}

#[test]
fn the_cdf_draws_each_deadline_and_marks_p50_and_p99() {
    let result = run(hour());
    let input = cdf_input(&result, &BTreeMap::new(), false);
    assert_eq!(input.deadlines.len(), 2, "24 h and 60 s");
    for theme in [Theme::LIGHT, Theme::DARK] {
        let chart = cdf_chart(&input, &theme, 760);
        let svg = &chart.svg;
        assert!(svg.starts_with("<svg"), "{svg:.80}");
        assert!(svg.contains("role=\"img\""), "named for screen readers");
        assert!(svg.contains("<title>Sojourn-time CDF"), "{svg:.300}");
        assert!(
            svg.contains("deadline nightly-batch 24.0 h"),
            "the 24 h deadline is labelled"
        );
        assert!(
            svg.contains("deadline api 60.0 s"),
            "the 60 s deadline is labelled"
        );
        // The deadline lines are drawn in the deadline colour.
        let deadline = hex(theme.deadline);
        assert!(
            svg.to_ascii_lowercase()
                .contains(&format!("stroke=\"{deadline}\"")),
            "no line in {deadline}"
        );
        assert!(
            svg.contains("\np50 ") && svg.contains("\np99 "),
            "p50 and p99 marked"
        );
        assert!(svg.contains("Sojourn time"), "the axis says what it is");
        assert!(
            svg.to_ascii_lowercase()
                .contains(&format!("fill=\"{}\"", hex(theme.background))),
            "the background follows the theme"
        );
    }
}

#[test]
fn per_class_and_case_curves_join_the_legend() {
    let base = run(hour());
    let mut worst_params = hour();
    worst_params.classes[1].batches_per_hour *= 1.3;
    let mut cases = BTreeMap::new();
    cases.insert(Case::Worst, run(worst_params));
    let input = cdf_input(&base, &cases, true);
    let svg = cdf_chart(&input, &Theme::LIGHT, 760).svg;
    for label in ["base (all classes)", "worst case", "nightly-batch", "api"] {
        assert!(
            svg.contains(&format!(">{label}<")) || svg.contains(label),
            "{label}"
        );
    }
}

#[test]
fn an_empty_run_says_so_instead_of_drawing_nothing() {
    let chart = cdf_chart(&Default::default(), &Theme::LIGHT, 600);
    assert!(chart.svg.contains("No request completed"));
}

#[test]
fn the_series_chart_has_four_panels() {
    let result = run(hour());
    let svg = series_chart(&result.report.series, &Theme::DARK, 760).svg;
    for panel in [
        "Waiting requests",
        "Running sequences",
        "KV cache used",
        "Replicas",
    ] {
        assert!(svg.contains(panel), "{panel}");
    }
}

#[test]
fn plan_charts_show_the_operating_point_and_the_tornado() {
    let mut params = hour();
    params.plan.replications = 1;
    params.plan.max_replicas = 16;
    params.plan.sensitivity.inputs = vec![
        SensitivityInput::ArrivalRate,
        SensitivityInput::OutputTokens,
    ];
    params.plan.sensitivity.replications = 1;
    params.plan.service_curve.load_multipliers = vec![0.5, 1.0, 2.0];
    let scenario = Scenario::try_from(params).expect("valid");
    let result = plan(&scenario, &PlanOptions::default()).expect("plans");
    let curve = result.service_curve.as_ref().expect("a curve");
    let svg = service_curve_chart(curve, &Theme::LIGHT, 760).svg;
    assert!(
        svg.contains("operating point"),
        "the operating point is marked"
    );
    assert!(svg.contains("goodput (met deadline)"));
    let sensitivity = result.sensitivity.as_ref().expect("sensitivity");
    let rows = tornado_rows(sensitivity, TornadoMetric::MissProbability);
    assert_eq!(rows.len(), 2);
    let svg = tornado_chart(
        &rows,
        TornadoMetric::MissProbability,
        sensitivity.delta,
        false,
        &Theme::LIGHT,
        760,
    )
    .svg;
    assert!(svg.contains("arrival rate") && svg.contains("output tokens"));
    assert!(svg.contains("change in P(miss)"));
}

#[test]
fn charts_are_drawn_about_as_wide_as_they_are_shown() {
    assert_eq!(chart_width(1100.0), 504);
    assert_eq!(chart_width(390.0), 330);
    assert_eq!(chart_width(3000.0), 960);
}

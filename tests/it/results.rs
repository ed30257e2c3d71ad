//! What the results area shows, from a real run.

use std::collections::BTreeMap;

use sojourn_app::results::{LoadLevel, cdf_input, cdf_points_table, cost_segments, run_figures};
use sojourn_engine::{
    RunOptions, RunParams, RunSummary, Scenario, ScenarioParams, class_table, simulate,
};

fn run(price: Option<f64>) -> RunSummary {
    let mut params = ScenarioParams {
        run: RunParams {
            horizon_s: 3600.0,
            ..RunParams::default()
        },
        ..ScenarioParams::overnight_batch()
    };
    params.plan.pricing.usd_per_gpu_hour = price;
    let scenario = Scenario::try_from(params).expect("valid");
    let report = simulate(&scenario, &RunOptions::default()).expect("runs");
    RunSummary::new(report, &scenario)
}

#[test]
fn the_cost_breakdown_adds_up_to_the_total() {
    let result = run(Some(3.0));
    let segments = cost_segments(&result).expect("a price gives a breakdown");
    let total: f64 = segments.iter().map(|s| s.usd).sum();
    let expected = result.cost.fleet.usd_total.expect("a total");
    assert!(
        (total - expected).abs() < 1e-9 * expected,
        "{total} vs {expected}"
    );
    let shares: f64 = segments.iter().map(|s| s.share).sum();
    assert!((shares - 1.0).abs() < 1e-9);
    let idle = segments
        .iter()
        .find(|s| s.key == "idle")
        .expect("idle capacity");
    assert!(
        idle.describe().starts_with("idle steady capacity $") && idle.describe().ends_with(" %)"),
        "{}",
        idle.describe()
    );
    assert!(
        cost_segments(&run(None)).is_none(),
        "no price, no USD breakdown"
    );
}

#[test]
fn headline_figures_name_the_cost_basis_and_warn_near_saturation() {
    let figures = run_figures(&run(Some(3.0)));
    let labels: Vec<&str> = figures.iter().map(|f| f.label).collect();
    assert_eq!(
        labels,
        [
            "P(miss)",
            "Goodput",
            "Cost per successful request",
            "Utilization",
            "Load (rho)"
        ]
    );
    assert!(figures[2].value.starts_with('$'));
    assert!(
        figures[2].detail.contains("$3.00/GPU-h on-demand"),
        "{}",
        figures[2].detail
    );
    let unpriced = run_figures(&run(None));
    assert!(
        unpriced[2].value.ends_with("GPU-h"),
        "{}",
        unpriced[2].value
    );
    assert_eq!(LoadLevel::of(0.5), LoadLevel::Comfortable);
    assert_eq!(LoadLevel::of(0.9), LoadLevel::NearSaturation);
    assert_eq!(LoadLevel::of(1.4), LoadLevel::Overloaded);
    assert!(
        LoadLevel::of(1.4)
            .message()
            .is_some_and(|m| m.contains("overloaded"))
    );
}

#[test]
fn tables_hold_every_class_and_every_cdf_point() {
    let result = run(None);
    let table = class_table(&result);
    assert_eq!(
        table.rows.len(),
        result.report.classes.len() + 1,
        "each class and all classes"
    );
    assert_eq!(
        table.rows.last().map(|r| r[0].text.as_str()),
        Some("all classes")
    );
    let csv = table.to_csv();
    assert!(csv.starts_with("class,deadline [s],arrived,"), "{csv:.80}");
    let input = cdf_input(&result, &BTreeMap::new(), true);
    let points: usize = input.curves.iter().map(|c| c.points.len()).sum();
    assert_eq!(cdf_points_table(&input).rows.len(), points);
}

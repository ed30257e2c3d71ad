//! What the results area shows, from a real run.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use sojourn_app::results::{
    cdf_input, cdf_points_table, configured_line, cost_segments, cover_sentence, decision_summary,
    pareto_input, plan_cases_table, plan_figures, plan_line, plan_statement, replanned_table,
    run_figures, search_effort_line, sensitivity_reading,
};
use sojourn_engine::{
    COMPARED_CONFIGURATIONS, Case, Cover, Discipline, PlanOptions, PlanResult, RunOptions,
    RunParams, RunSummary, Scenario, ScenarioParams, SensitivityInput, TargetParams, Verdict,
    alternatives_cost_table, class_table, discipline_label, frontier_cost_table, plan, simulate,
};

mod plan;

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
    let segments =
        cost_segments(&result.cost.fleet, &result.cost.units).expect("a price gives a breakdown");
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
    let unpriced = run(None);
    assert!(
        cost_segments(&unpriced.cost.fleet, &unpriced.cost.units).is_none(),
        "no price, no USD breakdown"
    );
}

/// Issue 41: a figure's explanation is found by its topic, not its label;
/// when the P(miss) figure's label became "P(miss), all classes", a lookup
/// by label lost its explanation without a sound.
#[test]
fn every_headline_figure_of_a_run_explains_itself_whatever_its_label() {
    let result = run(Some(3.0));
    for figure in run_figures(&result) {
        assert!(
            figure.topic.help().is_some_and(|help| !help.is_empty()),
            "{} has no explanation",
            figure.label
        );
    }
}

#[test]
fn headline_figures_name_the_fleet_and_its_cost_basis_and_measure_load_as_simulated() {
    let result = run(Some(3.0));
    let figures = run_figures(&result);
    let labels: Vec<&str> = figures.iter().map(|f| f.label).collect();
    assert_eq!(
        labels,
        [
            "P(miss), all classes",
            "Goodput",
            "Cost per successful request",
            "Utilization",
            "Concurrency"
        ]
    );
    assert!(figures[2].value.starts_with('$'));
    assert!(
        figures[2]
            .detail
            .starts_with("configured fleet: 2 steady + 1 reserve replicas; $3.00/GPU-h on-demand"),
        "{}",
        figures[2].detail
    );
    assert!(
        figures[3].detail.starts_with("busy time"),
        "utilization is busy time, not load: {}",
        figures[3].detail
    );
    // Issue 40: beside it, the offered load the sustainable target reads,
    // named as such, with the run's own value.
    let rho = result
        .targets
        .checks
        .iter()
        .find(|c| c.metric == sojourn_engine::CheckMetric::OfferedLoad)
        .expect("the sustainable check")
        .mean;
    assert!(
        figures[3].detail.contains(&format!(
            "not the offered work against capacity ({}), which the sustainable target reads",
            sojourn_engine::format_percent(rho)
        )),
        "{}",
        figures[3].detail
    );
    assert!(
        figures[0]
            .detail
            .starts_with("one simulation, every class together")
    );
    // Concurrency is the series' mean running requests per replica.
    let report = &result.report;
    let running: Vec<f64> = report
        .series
        .iter()
        .filter(|p| p.t_s >= report.warmup_s)
        .map(|p| p.running as f64 / f64::from(p.replicas))
        .collect();
    let mean = running.iter().sum::<f64>() / running.len() as f64;
    assert_eq!(figures[4].value, sojourn_engine::format_number(mean, 3));
    let unpriced = run_figures(&run(None));
    assert!(
        unpriced[2].value.ends_with("GPU-h"),
        "{}",
        unpriced[2].value
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

#[test]
fn the_stale_mark_names_the_panels_changed_since() {
    use sojourn_app::state::changed_panels;
    let earlier = ScenarioParams::overnight_batch();
    assert!(changed_panels(&earlier, &earlier).is_empty());
    let mut now = earlier.clone();
    now.run.horizon_s = 3.0 * 3600.0;
    now.model.layers += 1;
    now.plan.pricing.usd_per_gpu_hour = Some(9.0);
    now.plan.max_replicas += 1;
    assert_eq!(
        changed_panels(&earlier, &now),
        [
            "Model",
            "Simulation",
            "Prices and reserve",
            "SLA targets and candidates"
        ]
    );
}

#[test]
fn field_paths_in_an_engine_message_read_as_the_form_labels_them() {
    use sojourn_app::words::paths_in_words;
    let params = ScenarioParams::overnight_batch();
    let text = paths_in_words(
        "class \"api\" sends about 2808000 of them: lower classes[1].batches_per_hour or shorten run.horizon_s.",
        Some(&params),
    );
    assert_eq!(
        text,
        "class \"api\" sends about 2808000 of them: lower \u{201c}Class \"api\", batch arrivals\u{201d} or shorten \u{201c}Simulation, horizon\u{201d}."
    );
    // A word that only ends like a root is left alone.
    assert_eq!(paths_in_words("a dry run. done", None), "a dry run. done");
}

#[test]
fn a_downloaded_chart_has_its_caption_and_scenario_drawn_above_it() {
    use sojourn_app::charts::{Theme, message_chart, titled_svg};
    let chart = message_chart("CDF", "waiting", &Theme::LIGHT, 400, 200);
    let (svg, height) = titled_svg(
        &chart,
        "Sojourn-time CDF & more",
        "Scenario: x",
        &Theme::LIGHT,
    );
    assert!(height > 200, "{height}");
    assert!(svg.starts_with(&format!("<svg width=\"400\" height=\"{height}\"")));
    assert!(svg.contains(">Sojourn-time CDF &amp; more</text>"), "{svg}");
    assert!(svg.contains(">Scenario: x</text>"));
    assert!(
        svg.contains(&format!("<svg x=\"0\" y=\"{}\"", height - 200)),
        "{svg}"
    );
}

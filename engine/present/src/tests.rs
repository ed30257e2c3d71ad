//! The tables from a real run and a real plan: every row is there, the
//! numbers are the report's, and the CSV and text agree with the cells.

use super::cases::Case;
use super::plan_tables::{
    analytic_table, cases_table, checks_table, class_intervals_table, configurations_table,
    curve_table, explored_table, recommendation_details, sensitivity_table,
};
use super::run_tables::{
    budget_table, cdf_table, class_table, cost_table, records_csv, series_table,
};
use super::summary::RunSummary;
use super::table::{CellValue, DataTable};
use crate::model::scenario::Scenario;
use crate::params::ScenarioParams;
use crate::params::plan::SensitivityInput;
use crate::plan::{PlanOptions, PlanResult, plan};
use crate::report::simulate;
use crate::sim::RunOptions;

fn short_params() -> ScenarioParams {
    let mut params = ScenarioParams::overnight_batch();
    params.run.horizon_s = 1800.0;
    params.plan.pricing.usd_per_gpu_hour = Some(3.0);
    params
}

fn run(params: ScenarioParams) -> RunSummary {
    let scenario = Scenario::try_from(params).expect("valid");
    let report = simulate(&scenario, &RunOptions::default()).expect("runs");
    RunSummary::new(report, &scenario)
}

fn small_plan() -> PlanResult {
    let mut params = short_params();
    params.plan.replications = 2;
    params.plan.max_replicas = 8;
    params.plan.sensitivity.inputs = vec![SensitivityInput::Price];
    params.plan.sensitivity.replications = 1;
    params.plan.service_curve.load_multipliers = vec![0.5, 1.0];
    let scenario = Scenario::try_from(params).expect("valid");
    plan(&scenario, &PlanOptions::default()).expect("plans")
}

fn number(table: &DataTable, row: usize, column: &str) -> f64 {
    let index = table
        .columns
        .iter()
        .position(|c| c.name == column)
        .expect("the column exists");
    match table.rows[row][index].value {
        CellValue::Number(x) => x,
        ref other => panic!("{column}: not a number: {other:?}"),
    }
}

#[test]
fn the_class_table_holds_every_class_and_all_of_them() {
    let summary = run(short_params());
    let report = &summary.report;
    let table = class_table(&summary);
    assert_eq!(table.rows.len(), report.classes.len() + 1);
    let last = table.rows.len() - 1;
    assert_eq!(table.rows[last][0].text, "all classes");
    assert_eq!(
        number(&table, last, "arrived"),
        report.overall.arrived as f64
    );
    assert_eq!(number(&table, 0, "P(miss)"), report.classes[0].p_miss);
    let csv = table.to_csv();
    assert!(csv.starts_with("class,deadline [s],arrived,"), "{csv:.80}");
    assert_eq!(csv.lines().count(), table.rows.len() + 1);
    let text = table
        .select(&["class", "arrived"])
        .expect("both exist")
        .to_text();
    assert!(text[0].starts_with("class"), "{}", text[0]);
    assert!(
        text[last + 1].starts_with("all classes"),
        "{}",
        text[last + 1]
    );
    let series = series_table(&summary);
    assert_eq!(series.rows.len(), report.series.len());
    let curves = summary
        .class_rows()
        .map(|(name, class)| (name, class.cdf.as_slice()));
    let points: usize = summary.class_rows().map(|(_, c)| c.cdf.len()).sum();
    assert_eq!(cdf_table(curves).rows.len(), points);
}

#[test]
fn the_cost_table_adds_up_to_its_total() {
    let summary = run(short_params());
    let table = cost_table(&summary);
    let item = |name: &str| {
        let row = table
            .rows
            .iter()
            .position(|r| r[0].text == name)
            .expect("the item exists");
        number(&table, row, "USD")
    };
    let parts = item("steady replicas") + item("reserve replicas") + item("fixed costs (prorated)");
    let total = item("total");
    assert!((parts - total).abs() <= 1e-9 * total, "{parts} vs {total}");
    assert_eq!(Some(item("per month")), summary.cost.fleet.usd_per_month);
    assert!(table.title.contains("30.0 min"), "{}", table.title);
}

#[test]
fn records_are_one_line_each_with_their_outcome() {
    let mut params = short_params();
    // No drain: the requests still queued at the horizon are unfinished.
    params.run.drain_s = Some(0.0);
    let summary = run(params);
    let records = &summary.report.records;
    let csv = records_csv(&summary.report);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().map(|h| h.split(',').count()),
        Some(13),
        "thirteen columns"
    );
    let statuses: Vec<&str> = lines.filter_map(|l| l.rsplit(',').next()).collect();
    assert_eq!(statuses.len(), records.len());
    for (status, record) in statuses.iter().zip(records) {
        // The status as the report's JSON names it.
        let name = serde_json::to_string(&record.status).expect("serialises");
        assert_eq!(format!("\"{status}\""), name);
    }
    assert!(statuses.contains(&"completed") && statuses.contains(&"unfinished"));
}

#[test]
fn a_summary_survives_json_without_its_records() {
    let summary = run(short_params());
    assert!(!summary.report.records.is_empty());
    let json = |s: &RunSummary| serde_json::to_string(s).expect("serialises");
    let back: RunSummary = serde_json::from_str(&json(&summary)).expect("reads back");
    assert!(back.report.records.is_empty(), "records never travel");
    // Bit for bit (NaN never equals itself, so compare the JSON).
    assert_eq!(json(&back), json(&summary));
    assert_eq!(
        back.report.overall.p_miss.to_bits(),
        summary.report.overall.p_miss.to_bits()
    );
    assert!(
        back.report.overall.deadline_s.is_nan(),
        "NaN survives as null"
    );
}

#[test]
#[ignore = "slow: a full plan; scripts/test runs it"]
fn the_plan_tables_show_every_configuration_case_and_check() {
    let result = small_plan();
    let configurations = configurations_table(&result);
    assert_eq!(configurations.rows.len(), result.configurations.len());
    let rec = result.recommendation.as_ref().expect("a plan");
    let chosen = result.chosen.expect("a chosen configuration");
    assert_eq!(
        number(&configurations, chosen, "smallest fleet"),
        f64::from(rec.min_replicas)
    );
    assert_eq!(configurations.rows[chosen][2].text, "chosen");
    let explored = explored_table(&result);
    assert_eq!(explored.rows.len(), result.explored.len());
    assert!(
        result.explored.iter().any(|p| p.on_frontier),
        "a frontier has at least its cheapest point"
    );
    let base = run(short_params());
    let cases = cases_table(&[(Case::Base, &base)], Some(&result));
    assert_eq!(cases.rows.len(), 3);
    assert_eq!(
        number(&cases, 0, "P(miss), configured fleet"),
        base.report.overall.p_miss
    );
    assert_eq!(
        cases.rows[1][1].value,
        CellValue::Empty,
        "best not simulated"
    );
    assert_ne!(cases.rows[1][5].value, CellValue::Empty, "best re-planned");
    assert_eq!(cases.rows[1][0].text, "low demand");
    let checks = checks_table(&rec.evaluation);
    assert_eq!(checks.rows.len(), rec.evaluation.checks.len());
    let classes = class_intervals_table(&rec.classes);
    assert_eq!(classes.rows.len(), 4 * rec.classes.len());
    let budget = budget_table(&rec.budget);
    let has_interval = budget.rows.iter().any(|r| r[0].text.contains("95% low"));
    assert_eq!(has_interval, rec.budget.usd_per_success_ci95.is_some());
    let curve = curve_table(&result).expect("a curve");
    assert_eq!(curve.rows.len(), 2);
    assert_eq!(sensitivity_table(&result).map(|t| t.rows.len()), Some(1));
    assert!(analytic_table(&result).is_some());
    let labels: Vec<&str> = recommendation_details(rec).iter().map(|d| d.0).collect();
    assert_eq!(labels.first(), Some(&"Fleet"));
    assert_eq!(labels.last(), Some(&"Cost basis"));
}

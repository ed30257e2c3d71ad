//! What the results area shows that is the page's own, computed from the
//! worker's answers: the verdict's sentences (`results/verdict.rs`), the
//! headline figures, the inputs of the CDF and the frontier charts
//! (`results/frontier.rs`), the
//! cost-breakdown bar and the plan's sentences. The tables (and every
//! number's format) are the engine's presentation layer, shared with the
//! CLI. No DOM; tested natively.

mod frontier;
mod run_figures;
mod verdict;

pub use frontier::pareto_input;
pub use run_figures::run_figures;
pub use verdict::{PROVISIONAL, PlanLine, configured_line, plan_line, sensitivity_reading};

use std::collections::BTreeMap;

use sojourn_engine::{
    Case, ConfigurationResult, DataTable, FleetCost, MISSING, PlanResult, RunSummary, UnitCosts,
    UnknownColumn, cases_budget_table, cases_table, cdf_table, decision_label, discipline_label,
    sensitivity_table,
};

use crate::charts::{CdfCurve, CdfInput, CurveKind};
use crate::format::{format_count, format_number, format_percent_whole, format_usd};
use crate::help;

/// What a headline figure is, whatever its label says: the key its
/// explanation is found by, so a renamed label keeps its help.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topic {
    /// The share of requests that missed their deadline.
    MissProbability,
    Goodput,
    /// Cost per successful request, simulated or planned.
    CostPerSuccess,
    Utilization,
    Concurrency,
    /// The plan's fleet when no fleet meets the targets.
    PlannedFleet,
    PlannedConfiguration,
    PlannedReplicas,
}

impl Topic {
    /// The explanation shown beside a figure of this topic, if it has one.
    pub fn help(self) -> Option<&'static str> {
        match self {
            Topic::MissProbability => Some(help::P_MISS),
            Topic::Goodput => Some(help::GOODPUT),
            Topic::CostPerSuccess => Some(help::COST_PER_SUCCESS),
            Topic::Utilization => Some(help::UTILIZATION),
            Topic::Concurrency => Some(help::CONCURRENCY),
            Topic::PlannedReplicas => Some(help::FAILURE_RESERVE),
            Topic::PlannedConfiguration => Some(help::CONFIGURATION),
            Topic::PlannedFleet => None,
        }
    }
}

/// One headline figure: what, its value, and a line of detail.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub topic: Topic,
    pub label: &'static str,
    pub value: String,
    pub detail: String,
    /// A warning to show with the figure.
    pub warning: Option<String>,
}

/// Cost per success as a figure shows it: USD, GPU-hours without a price,
/// or [`MISSING`] when no request succeeded.
pub(crate) fn per_success(units: &UnitCosts) -> String {
    match (units.usd_per_success, units.gpu_hours_per_success) {
        (Some(usd), _) => format_usd(usd),
        (None, Some(gpu_hours)) => format!("{} GPU-h", format_number(gpu_hours, 3)),
        (None, None) => MISSING.to_string(),
    }
}

/// The plan's headline figures (the cheapest fleet meeting every target):
/// its configuration, replicas and cost per success.
pub fn plan_figures(plan: &PlanResult) -> Vec<Figure> {
    let (Some(rec), Some(chosen)) = (&plan.recommendation, chosen_configuration(plan)) else {
        return vec![Figure {
            topic: Topic::PlannedFleet,
            label: "Planned fleet",
            value: "none meets the targets".to_string(),
            detail: "why: under the verdict, at the top of the results".to_string(),
            warning: None,
        }];
    };
    // The interval is the cost per success's, so it comes first; the
    // monthly figure is the whole fleet's.
    let ci = rec
        .budget
        .usd_per_success_ci95
        .map(|[low, high]| format!("95% CI {}–{}; ", format_usd(low), format_usd(high)))
        .unwrap_or_default();
    vec![
        Figure {
            topic: Topic::PlannedConfiguration,
            label: "Planned configuration",
            value: chosen.name.clone(),
            detail: format!(
                "{} scheduling; the cheapest of {} configurations",
                discipline_label(chosen.discipline),
                plan.configurations.len()
            ),
            warning: None,
        },
        Figure {
            topic: Topic::PlannedReplicas,
            label: "Planned replicas",
            value: format!("{} + {}", rec.steady_replicas, reserve_replicas(plan)),
            detail: format!(
                "steady + reserve; {} would just meet the targets",
                rec.min_replicas
            ),
            warning: None,
        },
        Figure {
            topic: Topic::CostPerSuccess,
            label: "Planned cost per success",
            value: per_success(&rec.budget.units),
            detail: format!("{ci}{} for the fleet", monthly(plan)),
            warning: None,
        },
    ]
}

/// The configuration the plan chose.
pub(crate) fn chosen_configuration(plan: &PlanResult) -> Option<&ConfigurationResult> {
    plan.chosen.and_then(|i| plan.configurations.get(i))
}

/// Failure reserve plus warm idle replicas of the plan.
pub(crate) fn reserve_replicas(plan: &PlanResult) -> u32 {
    plan.recommendation
        .as_ref()
        .map_or(0, |r| r.failure_reserve_replicas + r.warm_idle_replicas)
}

/// The plan's fleet cost: "$7,070 per month", or "3 GPUs" without a price.
fn monthly(plan: &PlanResult) -> String {
    plan.recommendation
        .as_ref()
        .map_or_else(String::new, |rec| {
            rec.budget.fleet.usd_per_month.map_or_else(
                || format!("{} GPUs", rec.total_gpus),
                |m| format!("{} per month", format_usd(m)),
            )
        })
}

/// The plan in one line, and a line of detail under it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanStatement {
    /// "2 + 1 replicas of H100 SXM x1, priority", or that none meets the
    /// targets.
    pub fleet: String,
    /// Hardware, GPUs per replica, the discipline in words and the cost;
    /// or where the reason is.
    pub detail: String,
}

/// The plan's fleet and configuration (hardware and discipline) in words.
pub fn plan_statement(plan: &PlanResult) -> PlanStatement {
    let (Some(rec), Some(chosen)) = (&plan.recommendation, chosen_configuration(plan)) else {
        return PlanStatement {
            fleet: "No fleet meets the targets".to_string(),
            detail: format!(
                "None of the {} searched meets every target; why is under the verdict, at the top of the results.",
                counted(plan.configurations.len() as u64, "configuration")
            ),
        };
    };
    let per_replica = match chosen.gpus_per_replica {
        1 => "1 GPU per replica".to_string(),
        n => format!("{n} GPUs per replica"),
    };
    let cost = match rec.budget.fleet.usd_per_month {
        Some(_) => format!(
            "{} GPUs, {} with the reserve",
            rec.total_gpus,
            monthly(plan)
        ),
        None => format!("{} with the reserve", monthly(plan)),
    };
    PlanStatement {
        fleet: format!(
            "{} + {} replicas of {}",
            rec.steady_replicas,
            reserve_replicas(plan),
            chosen.name
        ),
        detail: format!(
            "{}, {per_replica}, {} scheduling; {cost}",
            chosen.hardware,
            discipline_label(chosen.discipline)
        ),
    }
}

/// How the plan decided, in a line: "Decided by the upper end of the 95%
/// interval, 2 to 5 replications per fleet".
pub fn decision_summary(plan: &PlanResult) -> String {
    let replications = if plan.min_replications == plan.replications {
        counted(plan.replications.into(), "replication")
    } else {
        format!(
            "{} to {} replications",
            plan.min_replications, plan.replications
        )
    };
    format!(
        "Decided by the {}, {replications} per fleet",
        decision_label(plan.decision)
    )
}

/// `count` and its noun, "1 configuration" or "12 configurations".
pub(crate) fn counted(count: u64, noun: &str) -> String {
    let plural = if count == 1 { "" } else { "s" };
    format!("{} {noun}{plural}", format_count(count))
}

/// What the search did against a plain one: "12 configurations, 11 pruned,
/// 9 simulations instead of 660 for a plain search".
pub fn search_effort_line(plan: &PlanResult) -> String {
    let e = &plan.search_effort;
    format!(
        "{}, {} pruned, {} instead of {} for a plain search",
        counted(e.configurations.into(), "configuration"),
        format_count(e.pruned.into()),
        counted(e.simulations, "simulation"),
        format_count(e.plain_simulations)
    )
}

/// The fleet covering high demand and what it costs beyond the plan:
/// "Covering high demand takes 3 + 1 replicas of H100 SXM x1, priority:
/// $9,260 per month at the expected prices, $2,190 more than the plan."
/// (The cases table prices each case's own plan at the case's prices; the
/// cover is priced as the plan is, so the difference is the fleet's alone.)
pub fn cover_sentence(plan: &PlanResult) -> Option<String> {
    let c = plan.worst_case_cover.as_ref()?;
    let cost = match (c.usd_per_month, c.extra_usd_per_month) {
        (Some(total), Some(extra)) if extra >= 0.5 => format!(
            "{} per month at the expected prices, {} more than the plan",
            format_usd(total),
            format_usd(extra)
        ),
        (Some(total), _) => format!(
            "{} per month at the expected prices, within the plan's budget",
            format_usd(total)
        ),
        (None, _) if c.extra_gpus > 0 => format!(
            "{}, {} more than the plan",
            counted(c.total_gpus.into(), "GPU"),
            format_count(c.extra_gpus.unsigned_abs())
        ),
        (None, _) => format!(
            "{}, no more than the plan",
            counted(c.total_gpus.into(), "GPU")
        ),
    };
    Some(format!(
        "Covering {} takes {} + {} replicas of {}: {cost}.",
        c.case,
        c.steady_replicas,
        c.total_replicas.saturating_sub(c.steady_replicas),
        c.configuration
    ))
}

/// The cases as the plan section shows them: once planned, the fleet and
/// budget each case needs, re-planned (`cases_budget_table`); until then,
/// the configured fleet's runs, labelled as such. The whole table
/// (`cases_table`) is under "Numbers behind the charts".
pub fn plan_cases_table(runs: &[(Case, &RunSummary)], plan: Option<&PlanResult>) -> DataTable {
    if let Some(plan) = plan.filter(|p| !p.scenarios.is_empty()) {
        let mut table = cases_budget_table(plan);
        table.id = "cases";
        return table;
    }
    let whole = cases_table(runs, plan);
    let mut shown = match whole.select(&[
        "case",
        "P(miss), configured fleet",
        "sojourn p99, configured fleet",
        "cost per success, configured fleet",
    ]) {
        Ok(shown) => shown,
        // A renamed column: the whole table, saying so, rather than a gap.
        Err(e) => return with_problem(whole, &e),
    };
    shown.id = "cases";
    shown.title =
        "Expected, low and high demand on the configured fleet (all classes, one simulation each)"
            .to_string();
    shown
}

/// `table` whole, its title saying which column a selection of it lacked.
fn with_problem(mut table: DataTable, problem: &UnknownColumn) -> DataTable {
    table.title = format!("{} ({problem})", table.title);
    table
}

/// The sensitivity's re-planned fleets: for the inputs with the largest
/// impact, the chosen configuration's smallest fleet meeting every target
/// with the input lowered and raised, and its monthly cost.
pub fn replanned_table(plan: &PlanResult) -> Option<DataTable> {
    let s = plan.sensitivity.as_ref()?;
    let whole = sensitivity_table(plan)?;
    let mut table = match whole.select(&[
        "input",
        "re-planned replicas low",
        "re-planned replicas high",
        "re-planned USD per month low",
        "re-planned USD per month high",
    ]) {
        Ok(table) => table,
        Err(e) => return Some(with_problem(whole, &e)),
    };
    // The engine's rows are the sensitivity's, in order: keep those re-planned.
    let rows = std::mem::take(&mut table.rows);
    table.rows = rows
        .into_iter()
        .zip(&s.rows)
        .filter(|(_, r)| r.replanned_replicas_low.is_some() || r.replanned_replicas_high.is_some())
        .map(|(row, _)| row)
        .collect();
    if table.rows.is_empty() {
        return None;
    }
    let base = chosen_configuration(plan)
        .and_then(|c| c.search.found)
        .map(|r| format!(": {} at the base values", counted(r.into(), "replica")))
        .unwrap_or_default();
    table.id = "sensitivity-replanned";
    table.title = format!("Re-planned fleet of {} at each end{base}", s.candidate);
    Some(table)
}

/// The finite points of a CDF (the chart's log axis has no room for the
/// others).
fn finite(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    points
        .iter()
        .copied()
        .filter(|[t, f]| t.is_finite() && f.is_finite())
        .collect()
}

/// Inputs of the CDF chart: the base curve, best and worst when present,
/// per-class curves when asked, every distinct deadline, p50 and p99.
pub fn cdf_input(
    base: &RunSummary,
    cases: &BTreeMap<Case, RunSummary>,
    per_class: bool,
) -> CdfInput {
    let report = &base.report;
    let mut curves = vec![CdfCurve {
        label: format!("{} (all classes)", Case::Base.label()),
        kind: CurveKind::Base,
        points: finite(&report.overall.cdf),
    }];
    for (case, kind) in [
        (Case::Best, CurveKind::Best),
        (Case::Worst, CurveKind::Worst),
    ] {
        if let Some(run) = cases.get(&case) {
            curves.push(CdfCurve {
                label: format!("{} case", case.label()),
                kind,
                points: finite(&run.report.overall.cdf),
            });
        }
    }
    if per_class {
        for (index, class) in report.classes.iter().enumerate() {
            curves.push(CdfCurve {
                label: class.name.clone(),
                kind: CurveKind::Class(index),
                points: finite(&class.cdf),
            });
        }
    }
    let mut deadlines: Vec<(String, f64)> = Vec::new();
    for class in &report.classes {
        match deadlines.iter_mut().find(|(_, d)| *d == class.deadline_s) {
            Some((label, _)) => label.push_str(&format!(", {}", class.name)),
            None => deadlines.push((format!("deadline {}", class.name), class.deadline_s)),
        }
    }
    deadlines.retain(|(_, d)| d.is_finite() && *d > 0.0);
    let markers = [
        ("p50", report.overall.sojourn.p50, 0.5),
        ("p99", report.overall.sojourn.p99, 0.99),
    ]
    .into_iter()
    .filter(|(_, t, _)| t.is_finite())
    .map(|(label, t, f)| (label.to_string(), t, f))
    .collect();
    CdfInput {
        curves,
        deadlines,
        markers,
    }
}

/// The CDF points behind the chart, curve by curve.
pub fn cdf_points_table(input: &CdfInput) -> DataTable {
    cdf_table(
        input
            .curves
            .iter()
            .map(|c| (c.label.as_str(), c.points.as_slice())),
    )
}

/// One part of the fleet's cost, for the cost-breakdown bar.
#[derive(Clone, Debug, PartialEq)]
pub struct CostSegment {
    /// CSS class suffix.
    pub key: &'static str,
    pub label: &'static str,
    pub usd: f64,
    /// Share of the total, in \[0, 1\].
    pub share: f64,
}

impl CostSegment {
    /// "idle steady capacity $177.66 (47 %)".
    pub fn describe(&self) -> String {
        format!(
            "{} {} ({})",
            self.label,
            format_usd(self.usd),
            format_percent_whole(self.share)
        )
    }
}

/// Where a fleet's money goes (the configured fleet's over its run, or the
/// plan's over its replications): work on requests that met their
/// deadline, work on requests that missed, idle steady capacity, the
/// reserve and fixed costs. `None` without a price.
pub fn cost_segments(fleet: &FleetCost, units: &UnitCosts) -> Option<Vec<CostSegment>> {
    let total = fleet.usd_total.filter(|t| *t > 0.0)?;
    let steady = fleet.usd_steady?;
    let failed = units.usd_failed_work.unwrap_or(0.0);
    let idle = units.usd_idle.unwrap_or(0.0);
    let parts = [
        (
            "met",
            "work on requests that met their deadline",
            (steady - idle - failed).max(0.0),
        ),
        ("failed", "work on requests that missed", failed),
        ("idle", "idle steady capacity", idle),
        (
            "reserve",
            "reserve replicas",
            fleet.usd_reserve.unwrap_or(0.0),
        ),
        ("fixed", "fixed costs", fleet.usd_fixed.unwrap_or(0.0)),
    ];
    Some(
        parts
            .into_iter()
            .map(|(key, label, usd)| CostSegment {
                key,
                label,
                usd,
                share: (usd / total).clamp(0.0, 1.0),
            })
            .collect(),
    )
}

//! What the results area shows that is the page's own, computed from the
//! worker's answers: the headline figures, the inputs of the CDF and
//! Pareto charts, the cost-breakdown bar and the plan's sentences. The
//! tables (and every number's format) are the engine's presentation layer,
//! shared with the CLI. No DOM; tested natively.

use std::collections::BTreeMap;

use sojourn_engine::{
    Case, ConfigurationResult, DataTable, MISSING, PlanResult, RunSummary, ScenarioParams,
    SearchStatus, TargetParams, UnitCosts, cases_table, cdf_table, decision_label,
    discipline_label, sensitivity_table,
};

use crate::charts::{CdfCurve, CdfInput, CurveKind, ParetoInput, ParetoPoint};
use crate::format::{
    format_count, format_number, format_percent, format_percent_interval, format_percent_whole,
    format_usd,
};

/// How loaded the fleet is, from rho.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadLevel {
    Comfortable,
    /// rho of 0.85 or more: queues grow quickly with any burst.
    NearSaturation,
    /// rho of 1 or more: the backlog grows without bound.
    Overloaded,
}

impl LoadLevel {
    pub fn of(rho: f64) -> LoadLevel {
        if !rho.is_finite() || rho >= 1.0 {
            LoadLevel::Overloaded
        } else if rho >= 0.85 {
            LoadLevel::NearSaturation
        } else {
            LoadLevel::Comfortable
        }
    }

    pub fn message(self) -> Option<&'static str> {
        match self {
            LoadLevel::Comfortable => None,
            LoadLevel::NearSaturation => Some("near saturation: bursts will queue for long"),
            LoadLevel::Overloaded => Some("overloaded: the backlog grows without bound"),
        }
    }
}

/// One headline figure: what, its value, and a line of detail.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub label: &'static str,
    pub value: String,
    pub detail: String,
    /// A warning to show with the figure.
    pub warning: Option<String>,
}

/// Cost per success as a figure shows it: USD, GPU-hours without a price,
/// or [`MISSING`] when no request succeeded.
fn per_success(units: &UnitCosts) -> String {
    match (units.usd_per_success, units.gpu_hours_per_success) {
        (Some(usd), _) => format_usd(usd),
        (None, Some(gpu_hours)) => format!("{} GPU-h", format_number(gpu_hours, 3)),
        (None, None) => MISSING.to_string(),
    }
}

/// The headline figures of the simulated configuration.
pub fn run_figures(run: &RunSummary) -> Vec<Figure> {
    let report = &run.report;
    let overall = &report.overall;
    let units = &run.cost.units;
    let cost_detail = match (units.usd_per_success, units.gpu_hours_per_success) {
        (Some(_), _) => format!(
            "{} steady + {} reserve replicas; {}",
            run.cost.fleet.steady_replicas,
            run.cost.fleet.reserve_replicas,
            price_label(run)
        ),
        (None, Some(_)) => "no price given: enter one under Prices to see USD".to_string(),
        (None, None) => "no request met its deadline".to_string(),
    };
    let load = &report.load;
    let level = LoadLevel::of(load.rho);
    vec![
        Figure {
            label: "P(miss)",
            value: format_percent(overall.p_miss),
            detail: format!("95% CI {}", format_percent_interval(overall.p_miss_ci95)),
            warning: None,
        },
        Figure {
            label: "Goodput",
            value: format!("{} req/h", format_number(overall.goodput_per_h, 4)),
            detail: format!(
                "{} of {} requests met their deadline",
                format_count(overall.met),
                format_count(overall.arrived)
            ),
            warning: None,
        },
        Figure {
            label: "Cost per successful request",
            value: per_success(units),
            detail: cost_detail,
            warning: None,
        },
        Figure {
            label: "Utilization",
            value: format_percent_whole(report.utilization),
            detail: format!("of {} replicas' time executing steps", report.replicas),
            warning: None,
        },
        Figure {
            label: "Load (rho)",
            value: format_number(load.rho, 3),
            detail: format!(
                "{} req/s offered; {} req/s at saturation",
                format_number(load.arrival_rate_per_s, 3),
                format_number(load.saturation_rate_per_s, 3)
            ),
            warning: level.message().map(str::to_string),
        },
    ]
}

fn price_label(run: &RunSummary) -> String {
    let basis = &run.cost.basis;
    let price = basis
        .usd_per_gpu_hour
        .map(|p| format!("{}/GPU-h {}", format_usd(p), basis.pricing_model.label()))
        .unwrap_or_default();
    let mut parts = vec![price];
    if !basis.provider_region.trim().is_empty() {
        parts.push(basis.provider_region.clone());
    }
    if !basis.price_date.trim().is_empty() {
        parts.push(format!("priced {}", basis.price_date));
    }
    parts.join(", ")
}

/// The plan's headline figures (the cheapest fleet meeting every target):
/// its configuration, replicas and cost per success.
pub fn plan_figures(plan: &PlanResult) -> Vec<Figure> {
    let (Some(rec), Some(chosen)) = (&plan.recommendation, chosen_configuration(plan)) else {
        return vec![Figure {
            label: "Planned fleet",
            value: "none meets the targets".to_string(),
            detail: closest_miss(plan),
            warning: Some("unattainable within the search range".to_string()),
        }];
    };
    let ci = rec
        .budget
        .usd_per_success_ci95
        .map(|[low, high]| format!(" (95% CI {}–{})", format_usd(low), format_usd(high)))
        .unwrap_or_default();
    vec![
        Figure {
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
            label: "Planned replicas",
            value: format!("{} + {}", rec.steady_replicas, reserve_replicas(plan)),
            detail: format!(
                "steady + reserve; {} would just meet the targets",
                rec.min_replicas
            ),
            warning: None,
        },
        Figure {
            label: "Planned cost per success",
            value: per_success(&rec.budget.units),
            detail: format!("{}{ci}", monthly(plan)),
            warning: None,
        },
    ]
}

/// The configuration the plan chose.
fn chosen_configuration(plan: &PlanResult) -> Option<&ConfigurationResult> {
    plan.chosen.and_then(|i| plan.configurations.get(i))
}

/// Failure reserve plus warm idle replicas of the plan.
fn reserve_replicas(plan: &PlanResult) -> u32 {
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

/// Why no configuration meets the targets: the search that came closest
/// (the smallest worst check at its largest fleet) in its own words.
fn closest_miss(plan: &PlanResult) -> String {
    plan.configurations
        .iter()
        .filter(|c| c.search.status == SearchStatus::Unattainable)
        .filter_map(|c| c.search.at_answer.as_ref().map(|e| (e.worst_ratio, c)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.search.message.clone())
        .or_else(|| plan.warnings.first().cloned())
        .unwrap_or_else(|| "no configuration meets the targets".to_string())
}

/// The plan in one line, and a line of detail under it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanStatement {
    /// "2 + 1 replicas of H100 SXM x1, priority", or that none meets the
    /// targets.
    pub fleet: String,
    /// Hardware, GPUs per replica, the discipline in words and the cost;
    /// or the closest a configuration came.
    pub detail: String,
}

/// The plan's fleet and configuration (hardware and discipline) in words.
pub fn plan_statement(plan: &PlanResult) -> PlanStatement {
    let (Some(rec), Some(chosen)) = (&plan.recommendation, chosen_configuration(plan)) else {
        return PlanStatement {
            fleet: "No configuration meets the targets".to_string(),
            detail: closest_miss(plan),
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
fn counted(count: u64, noun: &str) -> String {
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
/// $9,260 per month, $2,190 more than the plan."
pub fn cover_sentence(plan: &PlanResult) -> Option<String> {
    let c = plan.worst_case_cover.as_ref()?;
    let cost = match (c.usd_per_month, c.extra_usd_per_month) {
        (Some(total), Some(extra)) if extra >= 0.5 => format!(
            "{} per month, {} more than the plan",
            format_usd(total),
            format_usd(extra)
        ),
        (Some(total), _) => format!("{} per month, within the plan's budget", format_usd(total)),
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

/// Each distinct miss-probability bound of the targets, with whom it binds
/// ("api", "every class"), tightest first.
pub fn miss_targets(params: &ScenarioParams) -> Vec<(String, f64)> {
    let mut targets: Vec<(String, f64)> = Vec::new();
    for target in TargetParams::effective(&params.plan.targets) {
        let TargetParams::MissProbability { class, epsilon } = target else {
            continue;
        };
        let whom = class.unwrap_or_else(|| "every class".to_string());
        match targets.iter_mut().find(|(_, e)| *e == epsilon) {
            Some((label, _)) => label.push_str(&format!(", {whom}")),
            None => targets.push((whom, epsilon)),
        }
    }
    targets.sort_by(|a, b| a.1.total_cmp(&b.1));
    targets
}

/// The Pareto chart's inputs: every fleet the search decided, costed in
/// USD per month when every one has a price (else in GPUs), the chosen
/// fleet (the chosen configuration at the fleet its search found) and the
/// miss-probability targets of `params`, the scenario planned.
pub fn pareto_input(plan: &PlanResult, params: &ScenarioParams) -> ParetoInput {
    let priced = plan.explored.iter().all(|p| p.usd_per_month.is_some());
    let points = plan
        .explored
        .iter()
        .map(|p| {
            let configuration = plan.configurations.get(p.configuration);
            let name = configuration.map_or(MISSING, |c| c.name.as_str());
            let replicas = configuration
                .map_or(0, |c| p.total_gpus / c.gpus_per_replica.max(1))
                .saturating_sub(p.replicas);
            ParetoPoint {
                label: format!("{name}: {} + {replicas} replicas", p.replicas),
                cost: match p.usd_per_month {
                    Some(usd) if priced => usd,
                    _ => f64::from(p.total_gpus),
                },
                p_miss_upper: p.p_miss_upper,
                verdict: p.verdict,
                on_frontier: p.on_frontier,
            }
        })
        .collect();
    let found = chosen_configuration(plan).and_then(|c| c.search.found);
    let chosen = plan
        .explored
        .iter()
        .position(|p| Some(p.configuration) == plan.chosen && Some(p.replicas) == found);
    ParetoInput {
        points,
        chosen,
        priced,
        targets: miss_targets(params),
    }
}

/// The cases as the plan section shows them: once planned, each case's own
/// plan and how the plan's fleet fares under it (columns a wide table would
/// push out of sight); until then, the configured fleet's runs. The whole
/// table (`cases_table`) is under "Numbers behind the charts".
pub fn plan_cases_table(runs: &[(Case, &RunSummary)], plan: Option<&PlanResult>) -> DataTable {
    let table = cases_table(runs, plan);
    let planned = plan.is_some_and(|p| !p.scenarios.is_empty());
    let mut shown = if planned {
        let mut shown = table.select(&[
            "case",
            "own plan: configuration",
            "own plan: steady replicas",
            "own plan: USD per month",
            "own plan: cost per success",
            "plan's fleet: targets",
            "plan's fleet: worst check",
            "plan's fleet: cost per success",
        ]);
        shown.title = format!("{}, each re-planned", table.title);
        shown
    } else {
        table.select(&[
            "case",
            "P(miss), configured fleet",
            "sojourn p99, configured fleet",
            "cost per success, configured fleet",
        ])
    };
    shown.id = "cases";
    shown
}

/// The sensitivity's re-planned fleets: for the inputs with the largest
/// impact, the chosen configuration's smallest fleet meeting every target
/// with the input lowered and raised, and its monthly cost.
pub fn replanned_table(plan: &PlanResult) -> Option<DataTable> {
    let s = plan.sensitivity.as_ref()?;
    let mut table = sensitivity_table(plan)?.select(&[
        "input",
        "re-planned replicas low",
        "re-planned replicas high",
        "re-planned USD per month low",
        "re-planned USD per month high",
    ]);
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

/// Where the configured fleet's money goes: work on requests that met their
/// deadline, work on requests that missed, idle steady capacity, the
/// reserve and fixed costs. `None` without a price.
pub fn cost_segments(run: &RunSummary) -> Option<Vec<CostSegment>> {
    let fleet = &run.cost.fleet;
    let units = &run.cost.units;
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

//! What the results area shows that is the page's own, computed from the
//! worker's answers: the headline figures, the inputs of the CDF chart and
//! the cost-breakdown bar. The tables (and every number's format) are the
//! engine's presentation layer, shared with the CLI. No DOM; tested
//! natively.

use std::collections::BTreeMap;

use sojourn_engine::{Case, DataTable, MISSING, PlanResult, RunSummary, UnitCosts, cdf_table};

use crate::charts::{CdfCurve, CdfInput, CurveKind};
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

/// The plan's headline figures (the cheapest fleet meeting every target).
pub fn plan_figures(plan: &PlanResult) -> Vec<Figure> {
    let Some(rec) = &plan.recommendation else {
        let message = plan
            .warnings
            .first()
            .cloned()
            .unwrap_or_else(|| "no configuration meets the targets".to_string());
        return vec![Figure {
            label: "Planned fleet",
            value: "none meets the targets".to_string(),
            detail: message,
            warning: Some("unattainable within the search range".to_string()),
        }];
    };
    let ci = rec
        .budget
        .usd_per_success_ci95
        .map(|[low, high]| format!(" (95% CI {}–{})", format_usd(low), format_usd(high)))
        .unwrap_or_default();
    let monthly = rec
        .budget
        .fleet
        .usd_per_month
        .map(|m| format!("{} per month", format_usd(m)))
        .unwrap_or_else(|| format!("{} GPUs", rec.total_gpus));
    vec![
        Figure {
            label: "Planned replicas",
            value: format!(
                "{} + {}",
                rec.steady_replicas,
                rec.failure_reserve_replicas + rec.warm_idle_replicas
            ),
            detail: format!(
                "steady + reserve of {}; {} would just meet the targets",
                rec.candidate, rec.min_replicas
            ),
            warning: None,
        },
        Figure {
            label: "Planned cost per success",
            value: per_success(&rec.budget.units),
            detail: format!("{monthly}{ci}"),
            warning: None,
        },
    ]
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
        label: "base (all classes)".to_string(),
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

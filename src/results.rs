//! What the results area shows, computed from the worker's answers: the
//! headline figures, the inputs of every chart and the tables behind them.
//! No DOM; tested natively.

use std::collections::BTreeMap;

use sojourn_engine::PlanResult;

use crate::charts::{CdfCurve, CdfInput, CurveKind};
use crate::format::{
    format_count, format_duration_s, format_number, format_percent, format_percent_interval,
    format_percent_whole, format_usd,
};
use crate::job::{Case, ClassResult, RunResult};
use crate::table::{Cell, Table};

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

/// The headline figures of the simulated configuration.
pub fn run_figures(run: &RunResult) -> Vec<Figure> {
    let overall = &run.overall;
    let units = &run.cost.units;
    let cost = match (units.usd_per_success, units.gpu_hours_per_success) {
        (Some(usd), _) => Figure {
            label: "Cost per successful request",
            value: format_usd(usd),
            detail: format!(
                "{} steady + {} reserve replicas; {}",
                run.cost.fleet.steady_replicas,
                run.cost.fleet.reserve_replicas,
                price_label(run)
            ),
            warning: None,
        },
        (None, Some(gpu_hours)) => Figure {
            label: "Cost per successful request",
            value: format!("{} GPU-h", format_number(gpu_hours, 3)),
            detail: "no price given: enter one under Prices to see USD".to_string(),
            warning: None,
        },
        (None, None) => Figure {
            label: "Cost per successful request",
            value: "–".to_string(),
            detail: "no request met its deadline".to_string(),
            warning: None,
        },
    };
    let level = LoadLevel::of(run.rho);
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
        cost,
        Figure {
            label: "Utilization",
            value: format_percent_whole(run.utilization),
            detail: format!("of {} replicas' time executing steps", run.replicas),
            warning: None,
        },
        Figure {
            label: "Load (rho)",
            value: format_number(run.rho, 3),
            detail: format!(
                "{} req/s offered; {} req/s at saturation",
                format_number(run.arrival_rate_per_s, 3),
                format_number(run.saturation_rate_per_s, 3)
            ),
            warning: level.message().map(str::to_string),
        },
    ]
}

fn price_label(run: &RunResult) -> String {
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
            .candidates
            .first()
            .map(|c| c.search.message.clone())
            .unwrap_or_else(|| "no candidate meets the targets".to_string());
        return vec![Figure {
            label: "Planned fleet",
            value: "none meets the targets".to_string(),
            detail: message,
            warning: Some("unattainable within the search range".to_string()),
        }];
    };
    let units = &rec.budget.units;
    let per_success = match (units.usd_per_success, units.gpu_hours_per_success) {
        (Some(usd), _) => format_usd(usd),
        (None, Some(gpu_hours)) => format!("{} GPU-h", format_number(gpu_hours, 3)),
        _ => "–".to_string(),
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
            value: per_success,
            detail: format!("{monthly}{ci}"),
            warning: None,
        },
    ]
}

/// Inputs of the CDF chart: the base curve, best and worst when present,
/// per-class curves when asked, every distinct deadline, p50 and p99.
pub fn cdf_input(
    base: &RunResult,
    cases: &BTreeMap<&'static str, RunResult>,
    per_class: bool,
) -> CdfInput {
    let mut curves = vec![CdfCurve {
        label: "base (all classes)".to_string(),
        kind: CurveKind::Base,
        points: base.overall.cdf.clone(),
    }];
    for (case, kind) in [
        (Case::Best, CurveKind::Best),
        (Case::Worst, CurveKind::Worst),
    ] {
        if let Some(run) = cases.get(case.label()) {
            curves.push(CdfCurve {
                label: format!("{} case", case.label()),
                kind,
                points: run.overall.cdf.clone(),
            });
        }
    }
    if per_class {
        for (index, class) in base.classes.iter().enumerate() {
            curves.push(CdfCurve {
                label: class.name.clone(),
                kind: CurveKind::Class(index),
                points: class.cdf.clone(),
            });
        }
    }
    let mut deadlines: Vec<(String, f64)> = Vec::new();
    for class in &base.classes {
        match deadlines.iter_mut().find(|(_, d)| *d == class.deadline_s) {
            Some((label, _)) => label.push_str(&format!(", {}", class.name)),
            None => deadlines.push((format!("deadline {}", class.name), class.deadline_s)),
        }
    }
    deadlines.retain(|(_, d)| d.is_finite() && *d > 0.0);
    let markers = [
        ("p50", base.overall.sojourn.p50, 0.5),
        ("p99", base.overall.sojourn.p99, 0.99),
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

fn seconds_cell(seconds: f64) -> Cell {
    Cell::number(seconds, format_duration_s(seconds))
}

fn count_cell(count: u64) -> Cell {
    Cell::number(count as f64, format_count(count))
}

fn percent_cell(probability: f64) -> Cell {
    Cell::number(probability, format_percent(probability))
}

fn class_row(class: &ClassResult) -> Vec<Cell> {
    vec![
        Cell::text(&class.name),
        if class.deadline_s.is_finite() {
            seconds_cell(class.deadline_s)
        } else {
            Cell::empty()
        },
        count_cell(class.arrived),
        count_cell(class.met),
        count_cell(class.late),
        count_cell(class.rejected),
        count_cell(class.timed_out),
        count_cell(class.unfinished),
        percent_cell(class.p_miss),
        percent_cell(class.p_miss_ci95[0]),
        percent_cell(class.p_miss_ci95[1]),
        Cell::number(class.goodput_per_h, format_number(class.goodput_per_h, 4)),
        seconds_cell(class.sojourn.p50),
        seconds_cell(class.sojourn.p90),
        seconds_cell(class.sojourn.p99),
        seconds_cell(class.queue_wait.p99),
        seconds_cell(class.ttft.p99),
        seconds_cell(class.tpot.p50),
        count_cell(class.preemptions),
    ]
}

/// The per-class summary of the base run (the main results table).
pub fn class_table(run: &RunResult) -> Table {
    let mut table = Table::new(
        "per-class",
        "Per class (base case, configured fleet)",
        &[
            "class",
            "deadline [s]",
            "arrived",
            "met",
            "late",
            "rejected",
            "timed out",
            "unfinished",
            "P(miss)",
            "P(miss) 95% low",
            "P(miss) 95% high",
            "goodput [req/h]",
            "sojourn p50 [s]",
            "sojourn p90 [s]",
            "sojourn p99 [s]",
            "queue wait p99 [s]",
            "TTFT p99 [s]",
            "TPOT p50 [s]",
            "preemptions",
        ],
    );
    for class in &run.classes {
        table.rows.push(class_row(class));
    }
    let mut all = class_row(&run.overall);
    all[0] = Cell::text("all classes");
    table.rows.push(all);
    table
}

/// The CDF points behind the chart.
pub fn cdf_table(input: &CdfInput) -> Table {
    let mut table = Table::new(
        "sojourn-cdf",
        "Sojourn-time CDF points",
        &["curve", "sojourn [s]", "fraction done"],
    );
    for curve in &input.curves {
        for [t, f] in &curve.points {
            table.rows.push(vec![
                Cell::text(&curve.label),
                seconds_cell(*t),
                Cell::number(*f, format!("{:.2} %", f * 100.0)),
            ]);
        }
    }
    table
}

/// The time series behind the fleet chart.
pub fn series_table(run: &RunResult) -> Table {
    let mut table = Table::new(
        "time-series",
        "Fleet over time",
        &[
            "time [h]",
            "waiting",
            "running",
            "KV cache used",
            "replicas",
            "arrivals",
            "completions",
        ],
    );
    for p in &run.series {
        table.rows.push(vec![
            Cell::number(p.t_s / 3600.0, format_number(p.t_s / 3600.0, 4)),
            count_cell(p.waiting),
            count_cell(p.running),
            Cell::number(p.kv_utilization, format_percent_whole(p.kv_utilization)),
            count_cell(p.replicas as u64),
            count_cell(p.arrivals),
            count_cell(p.completions),
        ]);
    }
    table
}

/// The cost of the configured fleet, item by item.
pub fn cost_table(run: &RunResult) -> Table {
    let fleet = &run.cost.fleet;
    let units = &run.cost.units;
    let mut table = Table::new(
        "cost-breakdown",
        format!(
            "Cost of the configured fleet over {} (basis: {})",
            format_duration_s(fleet.window_h * 3600.0),
            run.cost.basis.label()
        ),
        &["item", "USD", "GPU-hours"],
    );
    let usd = |v: Option<f64>| Cell::maybe(v, format_usd);
    let hours = |v: f64| Cell::number(v, format_number(v, 4));
    table.rows = vec![
        vec![
            Cell::text("steady replicas"),
            usd(fleet.usd_steady),
            hours(fleet.gpu_hours_steady),
        ],
        vec![
            Cell::text("reserve replicas"),
            usd(fleet.usd_reserve),
            hours(fleet.gpu_hours_reserve),
        ],
        vec![
            Cell::text("fixed costs (prorated)"),
            usd(fleet.usd_fixed),
            Cell::empty(),
        ],
        vec![
            Cell::text("total"),
            usd(fleet.usd_total),
            hours(fleet.gpu_hours_steady + fleet.gpu_hours_reserve),
        ],
        vec![
            Cell::text("of which: failed work"),
            usd(units.usd_failed_work),
            Cell::empty(),
        ],
        vec![
            Cell::text("of which: recomputation after preemption"),
            usd(units.usd_recomputation),
            Cell::empty(),
        ],
        vec![
            Cell::text("of which: idle steady capacity"),
            usd(units.usd_idle),
            Cell::empty(),
        ],
        vec![
            Cell::text("per request"),
            usd(units.usd_per_request),
            Cell::empty(),
        ],
        vec![
            Cell::text("per successful request"),
            usd(units.usd_per_success),
            Cell::maybe(units.gpu_hours_per_success, |v| format_number(v, 3)),
        ],
        vec![
            Cell::text("per million prompt tokens"),
            usd(units.usd_per_million_prompt_tokens),
            Cell::empty(),
        ],
        vec![
            Cell::text("per million output tokens"),
            usd(units.usd_per_million_output_tokens),
            Cell::empty(),
        ],
    ];
    table
}

/// Best, base and worst: on the configured fleet (simulated here) and, once
/// planned, the fleet each needs.
pub fn cases_table(
    base: &RunResult,
    cases: &BTreeMap<&'static str, RunResult>,
    plan: Option<&PlanResult>,
) -> Table {
    let mut table = Table::new(
        "scenarios",
        "Best, base and worst cases",
        &[
            "case",
            "P(miss), configured fleet",
            "sojourn p99 [s], configured fleet",
            "cost per success [USD], configured fleet",
            "smallest fleet meeting targets",
            "meets targets on the planned fleet",
            "cost per success [USD], planned fleet",
        ],
    );
    for case in Case::ALL {
        let run = match case {
            Case::Base => Some(base),
            _ => cases.get(case.label()),
        };
        let planned = plan.and_then(|p| p.scenarios.iter().find(|s| s.name == case.label()));
        let mut row = vec![Cell::text(case.label())];
        match run {
            Some(run) => {
                row.push(percent_cell(run.overall.p_miss));
                row.push(seconds_cell(run.overall.sojourn.p99));
                row.push(Cell::maybe(run.cost.units.usd_per_success, format_usd));
            }
            None => row.extend([Cell::empty(), Cell::empty(), Cell::empty()]),
        }
        match planned {
            Some(s) => {
                row.push(Cell::maybe(s.search.found.map(f64::from), |v| {
                    format!("{v:.0}")
                }));
                row.push(Cell::text(if s.at_plan_fleet.meets { "yes" } else { "no" }));
                row.push(Cell::maybe(
                    s.cost_at_plan_fleet.units.usd_per_success,
                    format_usd,
                ));
            }
            None => row.extend([Cell::empty(), Cell::empty(), Cell::empty()]),
        }
        table.rows.push(row);
    }
    table
}

/// Each candidate's capacity search.
pub fn candidates_table(plan: &PlanResult) -> Table {
    let mut table = Table::new(
        "candidates",
        "Capacity search per candidate",
        &[
            "candidate",
            "smallest fleet [replicas]",
            "GPUs per replica",
            "USD per GPU-hour",
            "USD per month",
            "cost per success [USD]",
            "simulations",
            "outcome",
        ],
    );
    for c in &plan.candidates {
        let cost = c.search.cost.as_ref();
        table.rows.push(vec![
            Cell::text(&c.name),
            Cell::maybe(c.search.found.map(f64::from), |v| format!("{v:.0}")),
            count_cell(c.gpus_per_replica as u64),
            Cell::maybe(c.usd_per_gpu_hour, format_usd),
            Cell::maybe(cost.and_then(|c| c.fleet.usd_per_month), format_usd),
            Cell::maybe(cost.and_then(|c| c.units.usd_per_success), format_usd),
            count_cell(c.search.simulations),
            Cell::text(&c.search.message),
        ]);
    }
    table
}

/// The service curve's points.
pub fn curve_table(plan: &PlanResult) -> Option<Table> {
    let curve = plan.service_curve.as_ref()?;
    let mut table = Table::new(
        "service-curve",
        format!(
            "Service curve on {} replicas of {}",
            curve.replicas, curve.candidate
        ),
        &[
            "load [x base]",
            "offered [req/s]",
            "goodput [req/s]",
            "P(miss)",
            "busy fraction",
            "meets targets",
        ],
    );
    for p in &curve.points {
        table.rows.push(vec![
            Cell::number(p.load, format!("{}x", format_number(p.load, 3))),
            Cell::number(p.offered_per_s, format_number(p.offered_per_s, 4)),
            Cell::number(p.goodput_per_s, format_number(p.goodput_per_s, 4)),
            percent_cell(p.p_miss),
            Cell::number(p.busy_fraction, format_percent_whole(p.busy_fraction)),
            Cell::text(if p.meets { "yes" } else { "no" }),
        ]);
    }
    Some(table)
}

/// The sensitivity rows.
pub fn sensitivity_table(plan: &PlanResult) -> Option<Table> {
    let s = plan.sensitivity.as_ref()?;
    let mut table = Table::new(
        "sensitivity",
        format!(
            "Sensitivity on {} replicas of {} (each input x{} and x{})",
            s.replicas,
            s.candidate,
            format_number(1.0 - s.delta, 3),
            format_number(1.0 + s.delta, 3)
        ),
        &[
            "input",
            "P(miss) low",
            "P(miss) high",
            "cost per success low [USD]",
            "cost per success high [USD]",
            "GPU-h per success low",
            "GPU-h per success high",
            "impact",
        ],
    );
    for row in &s.rows {
        table.rows.push(vec![
            Cell::text(&row.label),
            percent_cell(row.p_miss_low),
            percent_cell(row.p_miss_high),
            Cell::maybe(row.usd_per_success_low, format_usd),
            Cell::maybe(row.usd_per_success_high, format_usd),
            Cell::maybe(row.gpu_hours_per_success_low, |v| format_number(v, 3)),
            Cell::maybe(row.gpu_hours_per_success_high, |v| format_number(v, 3)),
            Cell::number(row.impact, format_number(row.impact, 3)),
        ]);
    }
    Some(table)
}

/// The analytic two-stage estimate beside the simulation.
pub fn analytic_table(plan: &PlanResult) -> Option<Table> {
    let a = plan.analytic.as_ref()?;
    let mut table = Table::new(
        "analytic",
        format!(
            "Two-stage queue estimate vs simulation on {} replicas",
            a.replicas
        ),
        &["class", "metric", "analytic", "simulated", "difference"],
    );
    let show = |metric: &str, v: f64| {
        if metric.contains("P(miss)") {
            Cell::number(v, format_percent(v))
        } else {
            seconds_cell(v)
        }
    };
    for row in &a.rows {
        table.rows.push(vec![
            Cell::text(&row.class),
            Cell::text(&row.metric),
            show(&row.metric, row.analytic),
            show(&row.metric, row.simulated),
            if row.difference.is_finite() {
                if row.metric.contains("P(miss)") {
                    Cell::number(row.difference, format!("{:+.3} pp", row.difference * 100.0))
                } else {
                    Cell::number(row.difference, format!("{:+.1} s", row.difference))
                }
            } else {
                Cell::empty()
            },
        ]);
    }
    Some(table)
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

/// Where the configured fleet's money goes: work on requests that met their
/// deadline, work on requests that missed, idle steady capacity, the
/// reserve and fixed costs. `None` without a price.
pub fn cost_segments(run: &RunResult) -> Option<Vec<CostSegment>> {
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

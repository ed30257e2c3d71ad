//! The tables of one run: per class, the sojourn-time CDF, the fleet over
//! time and the cost (of the configured fleet, or of a planned budget), plus
//! the per-request records as CSV (the CLI's `--records`).

use std::fmt::Write as _;

use super::summary::RunSummary;
use super::table::{Cell, DataTable};
use crate::format::{
    format_count, format_duration_s, format_number, format_percent, format_percent_whole,
    format_usd,
};
use crate::plan::CostSummary;
use crate::plan::cost::{FleetCost, UnitCosts};
use crate::report::{ClassStats, Report};
use crate::sim::Status;

pub(super) fn seconds_cell(seconds: f64) -> Cell {
    Cell::number(seconds, format_duration_s(seconds))
}

pub(super) fn count_cell(count: u64) -> Cell {
    Cell::number(count as f64, format_count(count))
}

pub(super) fn percent_cell(probability: f64) -> Cell {
    Cell::number(probability, format_percent(probability))
}

pub(super) fn usd_cell(usd: Option<f64>) -> Cell {
    Cell::maybe(usd, format_usd)
}

/// GPU-hours (per success, or in total), three significant digits.
pub(super) fn gpu_hours_cell(gpu_hours: Option<f64>) -> Cell {
    Cell::maybe(gpu_hours, |v| format_number(v, 3))
}

fn class_row(name: &str, class: &ClassStats) -> Vec<Cell> {
    vec![
        Cell::text(name),
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

/// Each class of the run and all of them together (the page's main results
/// table, and the CLI's `run` summary).
pub fn class_table(run: &RunSummary) -> DataTable {
    let mut table = DataTable::new(
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
    table.rows = run
        .class_rows()
        .map(|(name, class)| class_row(name, class))
        .collect();
    table
}

/// The points of named CDF curves: (sojourn \[s\], fraction done).
pub fn cdf_table<'a>(curves: impl IntoIterator<Item = (&'a str, &'a [[f64; 2]])>) -> DataTable {
    let mut table = DataTable::new(
        "sojourn-cdf",
        "Sojourn-time CDF points",
        &["curve", "sojourn [s]", "fraction done"],
    );
    for (label, points) in curves {
        for [t, f] in points {
            table.rows.push(vec![
                Cell::text(label),
                seconds_cell(*t),
                Cell::number(*f, format!("{:.2} %", f * 100.0)),
            ]);
        }
    }
    table
}

/// The fleet over time (the time series behind the fleet chart).
pub fn series_table(run: &RunSummary) -> DataTable {
    let mut table = DataTable::new(
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
    for p in &run.report.series {
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
pub fn cost_table(run: &RunSummary) -> DataTable {
    let cost = &run.cost;
    cost_items(
        DataTable::new(
            "cost-breakdown",
            format!(
                "Cost of the configured fleet over {} (basis: {})",
                format_duration_s(cost.fleet.window_h * 3600.0),
                cost.basis.label()
            ),
            COST_COLUMNS,
        ),
        &cost.fleet,
        &cost.units,
        None,
    )
}

/// A planned fleet's cost (steady plus reserve), item by item, with the 95%
/// interval of the cost per success over the replications (its basis is
/// among the plan's details, [`recommendation_details`](super::plan_tables::recommendation_details)).
pub fn budget_table(budget: &CostSummary) -> DataTable {
    cost_items(
        DataTable::new(
            "budget",
            format!(
                "Budget (steady + reserve) over {}",
                format_duration_s(budget.fleet.window_h * 3600.0)
            ),
            COST_COLUMNS,
        ),
        &budget.fleet,
        &budget.units,
        budget.usd_per_success_ci95,
    )
}

const COST_COLUMNS: &[&str] = &["item", "USD", "GPU-hours"];

fn cost_items(
    mut table: DataTable,
    fleet: &FleetCost,
    units: &UnitCosts,
    per_success_ci95: Option<[f64; 2]>,
) -> DataTable {
    let hours = |v: f64| gpu_hours_cell(Some(v));
    let usd_only =
        |item: &str, usd: Option<f64>| vec![Cell::text(item), usd_cell(usd), Cell::empty()];
    table.rows = vec![
        vec![
            Cell::text("steady replicas"),
            usd_cell(fleet.usd_steady),
            hours(fleet.gpu_hours_steady),
        ],
        vec![
            Cell::text("reserve replicas"),
            usd_cell(fleet.usd_reserve),
            hours(fleet.gpu_hours_reserve),
        ],
        usd_only("fixed costs (prorated)", fleet.usd_fixed),
        vec![
            Cell::text("total"),
            usd_cell(fleet.usd_total),
            hours(fleet.gpu_hours_steady + fleet.gpu_hours_reserve),
        ],
        usd_only("per hour", fleet.usd_per_hour),
        usd_only("per month", fleet.usd_per_month),
        usd_only("of which: failed work", units.usd_failed_work),
        usd_only(
            "of which: recomputation after preemption",
            units.usd_recomputation,
        ),
        usd_only("of which: idle steady capacity", units.usd_idle),
        usd_only("per request", units.usd_per_request),
        vec![
            Cell::text("per successful request"),
            usd_cell(units.usd_per_success),
            gpu_hours_cell(units.gpu_hours_per_success),
        ],
    ];
    if let Some([low, high]) = per_success_ci95 {
        table.rows.extend([
            usd_only("per successful request, 95% low", Some(low)),
            usd_only("per successful request, 95% high", Some(high)),
        ]);
    }
    table.rows.extend([
        usd_only(
            "per million prompt tokens",
            units.usd_per_million_prompt_tokens,
        ),
        usd_only(
            "per million output tokens",
            units.usd_per_million_output_tokens,
        ),
    ]);
    table
}

/// How a record's outcome reads in the records CSV.
fn status_label(status: Status) -> &'static str {
    match status {
        Status::Completed => "completed",
        Status::RejectedQueueFull => "rejected_queue_full",
        Status::RejectedTooLong => "rejected_too_long",
        Status::TimedOut => "timed_out",
        Status::Unfinished => "unfinished",
        Status::Pending => "pending",
    }
}

/// Every request of the report, one line each, times in absolute simulated
/// seconds (NaN where the event never happened). Written directly rather
/// than as a [`DataTable`]: a day holds millions of records.
pub fn records_csv(report: &Report) -> String {
    let mut out = String::from(
        "id,class,replica,arrival_s,admitted_s,first_token_s,end_s,sojourn_s,input_tokens,cached_tokens,output_tokens,preemptions,status\n",
    );
    for (i, x) in report.records.iter().enumerate() {
        let _ = writeln!(
            out,
            "{i},{},{},{},{},{},{},{},{},{},{},{},{}",
            x.class,
            x.replica,
            x.arrival_s,
            x.admitted_s,
            x.first_token_s,
            x.end_s,
            x.sojourn_s(),
            x.input_tokens,
            x.cached_tokens,
            x.output_tokens,
            x.preemptions,
            status_label(x.status)
        );
    }
    out
}

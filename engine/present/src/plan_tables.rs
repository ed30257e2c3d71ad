//! The tables of a plan: the cases (simulated on the configured fleet and
//! planned), each candidate's capacity search, the service curve,
//! sensitivity, the analytic estimate, the checks and class outcomes of the
//! planned fleet; and the plan's details in words.

use super::cases::Case;
use super::run_tables::{count_cell, gpu_hours_cell, percent_cell, seconds_cell, usd_cell};
use super::summary::RunSummary;
use super::table::{Cell, DataTable};
use crate::format::{
    MISSING, counted, format_count, format_multiple, format_number, format_percent_points,
    format_percent_whole, format_signed_s, yes_no,
};
use crate::plan::evaluate::{CheckMetric, Evaluation};
use crate::plan::space::discipline_short;
use crate::plan::{ClassIntervals, Interval, PlanResult, Recommendation, SearchStatus};

/// A replica count that may be absent ("none" found).
fn replicas_cell(replicas: Option<u32>) -> Cell {
    Cell::maybe(replicas.map(f64::from), |v| format!("{v:.0}"))
}

/// The worst check's value over its threshold, marked when a check fails.
fn ratio_cell(ratio: f64, meets: bool) -> Cell {
    let fails = if meets { "" } else { " (fails)" };
    Cell::number(ratio, format!("{}{fails}", format_multiple(ratio)))
}

/// Expected, low and high demand: simulated on the configured fleet
/// (`runs`, as far as they have arrived) and, once planned, each case's own
/// plan (re-planned over the whole space) and how the plan's fleet fares in
/// it.
pub fn cases_table(runs: &[(Case, &RunSummary)], plan: Option<&PlanResult>) -> DataTable {
    let mut table = DataTable::new(
        "scenarios",
        "Expected, low and high demand (P(miss) of the configured fleet: all classes, one simulation; the plan's fleet's worst check: its largest 95% bound over the plan's replications / its target)",
        &[
            "case",
            "P(miss), configured fleet",
            "sojourn p99, configured fleet [s]",
            "cost per success, configured fleet [USD]",
            "own plan: configuration",
            "own plan: steady replicas",
            "own plan: USD per month",
            "own plan: cost per success [USD]",
            "plan's fleet: targets",
            "plan's fleet: worst check",
            "plan's fleet: cost per success [USD]",
        ],
    );
    for case in Case::ALL {
        let run = runs.iter().find(|(c, _)| *c == case).map(|(_, r)| r);
        let planned = plan.and_then(|p| p.scenarios.iter().find(|s| s.name == case.name()));
        let mut row = vec![Cell::text(case.label())];
        match run {
            Some(run) => row.extend([
                percent_cell(run.report.overall.p_miss),
                seconds_cell(run.report.overall.sojourn.p99),
                usd_cell(run.cost.units.usd_per_success),
            ]),
            None => row.extend([Cell::empty(), Cell::empty(), Cell::empty()]),
        }
        match planned {
            Some(s) => {
                let own = s.search.cost.as_ref().filter(|_| s.search.found.is_some());
                let units = &s.cost_at_plan_fleet.units;
                row.extend([
                    Cell::text(if s.search.found.is_some() {
                        s.search.configuration.as_str()
                    } else {
                        "none meets the targets"
                    }),
                    replicas_cell(s.search.found),
                    usd_cell(own.and_then(|c| c.fleet.usd_per_month)),
                    usd_cell(own.and_then(|c| c.units.usd_per_success)),
                    Cell::text(s.at_plan_fleet.verdict.label()),
                    ratio_cell(s.at_plan_fleet.worst_ratio, s.at_plan_fleet.meets),
                    usd_cell(units.usd_per_success),
                ])
            }
            None => row.extend((0..7).map(|_| Cell::empty())),
        }
        table.rows.push(row);
    }
    table
}

/// Every configuration's capacity search under expected demand.
pub fn configurations_table(plan: &PlanResult) -> DataTable {
    let mut table = DataTable::new(
        "configurations",
        "Capacity search per configuration",
        &[
            "configuration",
            "discipline",
            "outcome",
            "smallest fleet [replicas]",
            "GPUs with reserve",
            "USD per month",
            "cost per success [USD]",
            "simulations",
            "details",
        ],
    );
    for (i, c) in plan.configurations.iter().enumerate() {
        let cost = c.search.cost.as_ref().filter(|_| c.search.found.is_some());
        let outcome = if plan.chosen == Some(i) {
            "chosen"
        } else if plan.runner_ups.contains(&i) {
            "runner-up"
        } else {
            match c.search.status {
                SearchStatus::Found => "meets",
                SearchStatus::Unattainable => "unattainable",
                SearchStatus::Pruned => "pruned",
            }
        };
        table.rows.push(vec![
            Cell::text(&c.name),
            Cell::text(discipline_short(c.discipline)),
            Cell::text(outcome),
            replicas_cell(c.search.found),
            cost.map_or_else(Cell::empty, |c| count_cell(c.fleet.gpus as u64)),
            usd_cell(cost.and_then(|c| c.fleet.usd_per_month)),
            usd_cell(cost.and_then(|c| c.units.usd_per_success)),
            count_cell(c.search.simulations),
            Cell::text(&c.search.message),
        ]);
    }
    table
}

/// Every decided fleet of the search: its cost, how far it is from its
/// targets (the worst check's judged value over its threshold, and which
/// check) and its P(miss), the frontier of cost against that margin marked.
pub fn explored_table(plan: &PlanResult) -> DataTable {
    let mut table = DataTable::new(
        "explored",
        "Cost against the worst target's margin of every fleet the search decided",
        &[
            "configuration",
            "replicas",
            "GPUs with reserve",
            "USD per month",
            "worst check",
            "worst target",
            "worst class P(miss)",
            "upper bound",
            "replications",
            "targets",
            "on the frontier",
        ],
    );
    for p in &plan.explored {
        let name = plan
            .configurations
            .get(p.configuration)
            .map_or(MISSING, |c| c.name.as_str());
        table.rows.push(vec![
            Cell::text(name),
            count_cell(p.replicas as u64),
            count_cell(p.total_gpus as u64),
            usd_cell(p.usd_per_month),
            ratio_cell(p.worst_ratio, p.worst_ratio <= 1.0),
            Cell::text(p.worst_check.as_deref().unwrap_or(MISSING)),
            percent_cell(p.p_miss),
            percent_cell(p.p_miss_upper),
            count_cell(p.replications as u64),
            Cell::text(p.verdict.label()),
            Cell::text(yes_no(p.on_frontier)),
        ]);
    }
    table
}

/// The service curve's points.
pub fn curve_table(plan: &PlanResult) -> Option<DataTable> {
    let curve = plan.service_curve.as_ref()?;
    let mut table = DataTable::new(
        "service-curve",
        format!(
            "Service curve on {} of {} (mean over each point's seeds)",
            counted(curve.replicas.into(), "replica"),
            curve.candidate
        ),
        &[
            "load [x base]",
            "offered [req/s]",
            "goodput [req/s]",
            "P(miss)",
            "busy fraction",
            "meets targets",
            "seeds",
        ],
    );
    for p in &curve.points {
        table.rows.push(vec![
            Cell::number(p.load, format_multiple(p.load)),
            Cell::number(p.offered_per_s, format_number(p.offered_per_s, 4)),
            Cell::number(p.goodput_per_s, format_number(p.goodput_per_s, 4)),
            percent_cell(p.p_miss),
            Cell::number(p.busy_fraction, format_percent_whole(p.busy_fraction)),
            Cell::text(yes_no(p.meets)),
            Cell::number(p.replications as f64, p.replications.to_string()),
        ]);
    }
    Some(table)
}

/// The sensitivity rows, largest impact first.
pub fn sensitivity_table(plan: &PlanResult) -> Option<DataTable> {
    let s = plan.sensitivity.as_ref()?;
    let mut table = DataTable::new(
        "sensitivity",
        format!(
            "Sensitivity on the fixed fleet of {} of {} (each input x{} and x{}, {}), re-planned for the inputs that matter most; P(miss) is all classes', worst check the largest bound over {} / its target{}",
            counted(s.replicas.into(), "replica"),
            s.candidate,
            format_number(1.0 - s.delta, 3),
            format_number(1.0 + s.delta, 3),
            counted(s.replications.into(), "seed"),
            if s.replications == 1 {
                "this one seed"
            } else {
                "these seeds"
            },
            if s.replications == 1 {
                " (with one seed, the value itself: lower than the plan's fleet's bound over its replications)"
            } else {
                ""
            }
        ),
        &[
            "input",
            "P(miss) low",
            "P(miss) high",
            "cost per success low [USD]",
            "cost per success high [USD]",
            "cost swing",
            "GPU-h per success low",
            "GPU-h per success high",
            "worst check low",
            "worst check high",
            "impact",
            "re-planned replicas low",
            "re-planned replicas high",
            "re-planned USD per month low",
            "re-planned USD per month high",
        ],
    );
    for row in &s.rows {
        table.rows.push(vec![
            Cell::text(&row.label),
            percent_cell(row.p_miss_low),
            percent_cell(row.p_miss_high),
            usd_cell(row.usd_per_success_low),
            usd_cell(row.usd_per_success_high),
            percent_cell(row.cost_swing),
            gpu_hours_cell(row.gpu_hours_per_success_low),
            gpu_hours_cell(row.gpu_hours_per_success_high),
            ratio_cell(row.worst_ratio_low, row.meets_low),
            ratio_cell(row.worst_ratio_high, row.meets_high),
            Cell::number(row.impact, format_number(row.impact, 3)),
            replicas_cell(row.replanned_replicas_low),
            replicas_cell(row.replanned_replicas_high),
            usd_cell(row.replanned_usd_per_month_low),
            usd_cell(row.replanned_usd_per_month_high),
        ]);
    }
    Some(table)
}

/// The analytic two-stage estimate beside the simulation.
pub fn analytic_table(plan: &PlanResult) -> Option<DataTable> {
    let a = plan.analytic.as_ref()?;
    let mut table = DataTable::new(
        "analytic",
        format!(
            "Two-stage queue estimate vs simulation on {}",
            counted(a.replicas.into(), "replica")
        ),
        &["class", "metric", "analytic", "simulated", "difference"],
    );
    for row in &a.rows {
        let probability = row.metric.contains("P(miss)");
        let show = |v: f64| value_cell(v, probability);
        let difference = match (row.difference.is_finite(), probability) {
            (false, _) => Cell::empty(),
            (true, true) => Cell::number(row.difference, format_percent_points(row.difference)),
            (true, false) => Cell::number(row.difference, format_signed_s(row.difference)),
        };
        table.rows.push(vec![
            Cell::text(&row.class),
            Cell::text(&row.metric),
            show(row.analytic),
            show(row.simulated),
            difference,
        ]);
    }
    Some(table)
}

/// A probability as a percentage, or a time as a duration.
fn value_cell(value: f64, probability: bool) -> Cell {
    if probability {
        percent_cell(value)
    } else {
        seconds_cell(value)
    }
}

/// The columns of a mean with its 95% interval.
const INTERVAL_COLUMNS: [&str; 3] = ["mean", "95% low", "95% high"];

fn interval_cells(mean: f64, ci95: Option<[f64; 2]>, probability: bool) -> [Cell; 3] {
    let cell = |v: f64| value_cell(v, probability);
    match ci95 {
        Some([low, high]) => [cell(mean), cell(low), cell(high)],
        None => [cell(mean), Cell::empty(), Cell::empty()],
    }
}

/// Every check of one fleet with its verdict, its mean over the
/// replications and the bounds the verdict was decided on (the 95% interval
/// widened to the exact bound of the misses pooled over the replications:
/// no miss in n requests still bounds P(miss) by about 3.7 / n, and that is
/// what decided, not the interval's 0).
pub fn checks_table(evaluation: &Evaluation) -> DataTable {
    let mut table = DataTable::new(
        "checks",
        format!(
            "Checks on {} ({})",
            counted(evaluation.replicas as u64, "replica"),
            counted(evaluation.replications as u64, "replication")
        ),
        &[
            "check",
            "outcome",
            "mean",
            "decided on: low",
            "decided on: high",
        ],
    );
    for check in &evaluation.checks {
        let probability = matches!(
            check.metric,
            CheckMetric::MissProbability | CheckMetric::OfferedLoad
        );
        let mut row = vec![Cell::text(&check.description)];
        match &check.not_evaluated {
            Some(reason) => {
                row.push(Cell::text(format!("not evaluated: {reason}")));
                row.extend([Cell::empty(), Cell::empty(), Cell::empty()]);
            }
            None => {
                row.push(Cell::text(check.verdict.label()));
                row.extend(interval_cells(check.mean, Some(check.bounds), probability));
            }
        }
        table.rows.push(row);
    }
    table
}

/// Each class's P(miss) and percentiles over the replications, one row per
/// class and measure.
pub fn class_intervals_table(classes: &[ClassIntervals]) -> DataTable {
    let mut table = DataTable::new(
        "class-intervals",
        "Classes: mean and 95% interval over the replications (P(miss)'s high end at least the exact bound of the misses pooled over them)",
        &[
            "class",
            "measure",
            INTERVAL_COLUMNS[0],
            INTERVAL_COLUMNS[1],
            INTERVAL_COLUMNS[2],
        ],
    );
    for class in classes {
        let measures: [(&str, &Interval, bool); 4] = [
            ("P(miss)", &class.p_miss, true),
            ("sojourn p50", &class.sojourn_p50_s, false),
            ("sojourn p99", &class.sojourn_p99_s, false),
            ("TTFT p99", &class.ttft_p99_s, false),
        ];
        for (measure, interval, probability) in measures {
            let mut row = vec![Cell::text(&class.class), Cell::text(measure)];
            row.extend(interval_cells(interval.mean, interval.ci95, probability));
            table.rows.push(row);
        }
    }
    table
}

/// A load multiple, or where the curve never reaches it.
fn load_or_beyond(load: Option<f64>) -> String {
    load.map_or_else(|| "beyond the curve".to_string(), format_multiple)
}

/// The plan in words, (label, text) pairs: the fleet, admission limit,
/// scaling thresholds, operating point, headroom and cost basis.
pub fn recommendation_details(rec: &Recommendation) -> Vec<(&'static str, String)> {
    let or_missing = |text: Option<String>| text.unwrap_or_else(|| MISSING.to_string());
    let mut details = vec![
        (
            "Fleet",
            format!(
                "{} steady (the fewest meeting every target: {}) + {} failure reserve + {} warm idle = {} ({}) of {}",
                rec.steady_replicas,
                rec.min_replicas,
                rec.failure_reserve_replicas,
                rec.warm_idle_replicas,
                counted(rec.total_replicas.into(), "replica"),
                counted(rec.total_gpus.into(), "GPU"),
                rec.candidate,
            ),
        ),
        (
            "Admission limit",
            or_missing(rec.admission_limit_per_replica.map(|limit| {
                format!(
                    "{} waiting requests per replica (deepest seen: {})",
                    format_count(limit),
                    deepest_seen(rec.observed_peak_queue_per_replica, rec.steady_replicas)
                )
            })),
        ),
        (
            "Scale up when",
            format!(
                "waiting per replica stays above {}{}{}",
                or_missing(rec.scale_up_queue_per_replica.map(|q| format_number(q, 3))),
                rec.normal_queue_per_replica_p99
                    .map(|p| format!(" (busy but normal, p99: {})", format_number(p, 4)))
                    .unwrap_or_default(),
                kv_signal(rec.scale_up_kv_utilization),
            ),
        ),
    ];
    if let Some(operating) = rec.operating_load {
        details.push((
            "Operating point",
            format!(
                "{} the base load on {}; knee {}, SLA limit {}",
                format_multiple(operating),
                counted(rec.min_replicas.into(), "replica"),
                load_or_beyond(rec.knee_load),
                load_or_beyond(rec.sla_limit_load),
            ),
        ));
    }
    details.extend([
        (
            "Headroom",
            format!(
                "{}; {}",
                rec.headroom_to_knee.map_or_else(
                    || "no knee within the service curve".to_string(),
                    |h| format!("{} below the knee", format_percent_whole(h))
                ),
                rec.headroom_to_sla_limit.map_or_else(
                    || "every point of the curve meets the targets".to_string(),
                    |h| format!("{} below the SLA limit", format_percent_whole(h))
                ),
            ),
        ),
        ("Cost basis", rec.budget.basis.label()),
    ]);
    details
}

/// The deepest queue seen on the planned fleet, per replica (the fleet's
/// waiting requests over its replicas, so a fraction on a quiet fleet:
/// "0.5"), with the fleet's count beside it when it has several replicas
/// ("0.5 a replica, 2 on 4 replicas").
fn deepest_seen(per_replica: f64, replicas: u32) -> String {
    if replicas > 1 {
        format!(
            "{} a replica, {} on {}",
            format_number(per_replica, 4),
            format_count((per_replica * f64::from(replicas)).round() as u64),
            counted(replicas.into(), "replica")
        )
    } else {
        format_number(per_replica, 4)
    }
}

/// The KV cache's part of when to scale up: above its p99 use at the
/// operating point, unless that is full (then no use is "above" it: a
/// cache that fills in normal bursts is no signal of overload).
fn kv_signal(p99_kv_utilization: Option<f64>) -> String {
    match p99_kv_utilization {
        Some(kv) if kv >= KV_FULL => format!(
            "; the KV cache is no signal here: it fills in normal bursts (p99 use {})",
            format_percent_whole(kv)
        ),
        kv => format!(
            " or KV cache use above {}",
            kv.map_or_else(|| MISSING.to_string(), format_percent_whole)
        ),
    }
}

/// A p99 KV cache use that shows as 100 %.
const KV_FULL: f64 = 0.995;

#[cfg(test)]
mod tests {
    use super::*;

    // "deepest seen: 0.5" read as half a request: it is the fleet's queue
    // over its replicas.
    #[test]
    fn the_deepest_queue_reads_per_replica_and_on_the_fleet() {
        assert_eq!(deepest_seen(0.5, 4), "0.5 a replica, 2 on 4 replicas");
        assert_eq!(deepest_seen(10_949.0, 1), "10,949");
    }

    // The default plan said "scale up when ... KV cache use above 100 %": a
    // threshold no cache can pass.
    #[test]
    fn a_cache_full_in_normal_bursts_is_no_scaling_signal() {
        assert_eq!(kv_signal(Some(0.83)), " or KV cache use above 83 %");
        let full = kv_signal(Some(1.0));
        assert!(!full.contains("above"), "{full}");
        assert!(
            full.contains("no signal") && full.contains("100 %"),
            "{full}"
        );
        assert_eq!(kv_signal(None), format!(" or KV cache use above {MISSING}"));
    }
}

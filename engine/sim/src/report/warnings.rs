//! Warnings: what a reader should know before trusting a report's figures.

use super::ClassStats;
use super::census::Census;
use crate::model::analytic::LoadEstimate;
use crate::sim::SeriesPoint;

/// What a reader should know before trusting the figures: saturation,
/// unfinished, rejected and preempted requests, silent classes (`census`
/// counts the `records` records).
///
/// Saturation is read from the offered load against the estimated capacity
/// and from queues still growing when the horizon ends, never from the busy
/// fraction: under continuous batching a replica is almost never idle, so
/// being busy says nothing about how close it is to its capacity.
pub fn warnings(
    overall: &ClassStats,
    classes: &[ClassStats],
    load: &LoadEstimate,
    series: &[SeriesPoint],
    horizon_s: f64,
    census: &Census,
    records: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let pct = |k: u64, n: u64| 100.0 * k as f64 / n.max(1) as f64;
    if load.rho < 1.0
        && let Some((from, to)) = growing_queue(series, horizon_s)
    {
        out.push(format!(
            "Queues were still growing when the horizon ended ({from} to {to} waiting over its last quarter, never empty): \
             the fleet is at or past its capacity although the load estimate says rho = {:.2} (preemptions and recomputation, \
             or bursts, use capacity the estimate does not count).",
            load.rho
        ));
    }
    if load.rho >= 1.0 {
        out.push(format!(
            "Overloaded: the offered load is {:.0}% of the estimated capacity (rho = {:.2}); queues grow until requests miss, time out or are cut off at the end.",
            100.0 * load.rho,
            load.rho
        ));
    } else if load.rho >= 0.85 {
        out.push(format!(
            "Near saturation (rho = {:.2}): small errors in the step-time model or the workload become large errors in waiting time.",
            load.rho
        ));
    }
    if overall.unfinished > 0 {
        out.push(format!(
            "{} requests ({:.1}%) were still queued or running when the run ended; they count as misses.",
            overall.unfinished,
            pct(overall.unfinished, overall.arrived)
        ));
    }
    let too_long = census.too_long;
    if too_long > 0 {
        out.push(format!(
            "{too_long} requests were longer (prompt + output) than the KV cache or max_model_len allows and were rejected."
        ));
    }
    let preempted = census.preempted;
    if preempted > 0 && pct(preempted, records as u64) >= 1.0 {
        out.push(format!(
            "{:.1}% of requests were preempted at least once: the KV cache, not max_num_seqs, limits concurrency.",
            pct(preempted, records as u64)
        ));
    }
    for c in classes.iter().filter(|c| c.arrived == 0) {
        out.push(format!(
            "Class \"{}\" had no arrivals in the measured window.",
            c.name
        ));
    }
    out
}

/// The waiting queue at the start and at the end of the horizon's last
/// quarter, when it never emptied in between and ended longer than it began.
fn growing_queue(series: &[SeriesPoint], horizon_s: f64) -> Option<(u64, u64)> {
    let last: Vec<&SeriesPoint> = series
        .iter()
        .filter(|p| p.t_s >= 0.75 * horizon_s && p.t_s <= horizon_s)
        .collect();
    let (first, end) = (last.first()?, last.last()?);
    let never_empty = last.iter().all(|p| p.waiting > 0);
    (last.len() >= 2 && never_empty && end.waiting > first.waiting)
        .then_some((first.waiting, end.waiting))
}

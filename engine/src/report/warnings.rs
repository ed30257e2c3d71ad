//! Warnings: what a reader should know before trusting a report's figures.

use super::ClassStats;
use super::census::Census;
use crate::model::analytic::LoadEstimate;

/// What a reader should know before trusting the figures: saturation,
/// unfinished, rejected and preempted requests, silent classes (`census`
/// counts the `records` records).
pub(crate) fn warnings(
    overall: &ClassStats,
    classes: &[ClassStats],
    load: &LoadEstimate,
    utilization: f64,
    census: &Census,
    records: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let pct = |k: u64, n: u64| 100.0 * k as f64 / n.max(1) as f64;
    if load.rho < 0.85 && utilization >= 0.9 {
        // The estimate assumes full batches; KV pressure, preemption and
        // small batches make a real fleet busier than rho says.
        out.push(format!(
            "Near saturation: the fleet was busy {:.0}% of the time although the load estimate says rho = {:.2}; \
             preemptions, partial batches or bursts use more capacity than the estimate assumes.",
            100.0 * utilization,
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

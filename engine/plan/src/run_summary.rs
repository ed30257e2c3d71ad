//! What the planner keeps of one simulation run (a worker sends it back
//! for a [`super::PlanJob`]): each class's totals, the fleet's load and
//! queues, and what the checks read of the records.

use serde::{Deserialize, Serialize};

use crate::evaluate::CheckSpec;
use crate::exceedance::Exceedance;
use crate::report::{ClassStats, Quantiles, Report};
use crate::serde_float::NonFinite;

/// Totals of one class (or all classes) in one run.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassTotals {
    pub arrived: u64,
    pub met: u64,
    pub completed: u64,
    #[serde_as(as = "NonFinite")]
    pub p_miss: f64,
    pub sojourn: Quantiles,
    pub ttft: Quantiles,
    pub tpot: Quantiles,
    pub prefill_tokens: u64,
    /// Output tokens of completed requests (the first one included).
    pub output_tokens: u64,
    #[serde_as(as = "NonFinite")]
    pub busy_s: f64,
    #[serde_as(as = "NonFinite")]
    pub busy_s_missed: f64,
    #[serde_as(as = "NonFinite")]
    pub busy_s_recomputed: f64,
    /// Preemptions of the class's requests.
    #[serde(default)]
    pub preemptions: u64,
}

/// What the engine's steps were like over a run, all replicas together
/// (from the report's [`BatchStats`](crate::report::BatchStats)): how the
/// binding target is diagnosed.
#[serde_with::serde_as]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTotals {
    /// Replica-seconds of step time on prompt tokens computed for the first
    /// time, on decode tokens, and on prompts recomputed after preemption.
    #[serde_as(as = "NonFinite")]
    pub prefill_s: f64,
    #[serde_as(as = "NonFinite")]
    pub decode_s: f64,
    #[serde_as(as = "NonFinite")]
    pub recompute_s: f64,
    /// The 99th percentile of tokens per step, weighted by step time (0
    /// without steps).
    #[serde_as(as = "NonFinite")]
    pub tokens_p99: f64,
    /// The largest fraction of its KV blocks one replica held.
    #[serde_as(as = "NonFinite")]
    pub kv_peak: f64,
}

impl ClassTotals {
    pub fn of(stats: &ClassStats) -> ClassTotals {
        let completed = stats.met + stats.late;
        ClassTotals {
            arrived: stats.arrived,
            met: stats.met,
            completed,
            // A class with no arrivals has no misses.
            p_miss: if stats.p_miss.is_nan() {
                0.0
            } else {
                stats.p_miss
            },
            sojourn: stats.sojourn.clone(),
            ttft: stats.ttft.clone(),
            tpot: stats.tpot.clone(),
            prefill_tokens: stats.prefill_tokens,
            output_tokens: stats.decode_tokens + completed,
            busy_s: stats.busy_s,
            busy_s_missed: stats.busy_s_missed,
            busy_s_recomputed: stats.busy_s_recomputed,
            preemptions: stats.preemptions,
        }
    }
}

/// What the planner keeps of one run: aggregates, not records (what a
/// worker sends back for a [`super::PlanJob`]).
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunAggregates {
    pub replicas: u32,
    /// Measured window: horizon - warm-up \[s\].
    #[serde_as(as = "NonFinite")]
    pub window_s: f64,
    pub classes: Vec<ClassTotals>,
    pub overall: ClassTotals,
    /// Requests simulated (warm-up included).
    pub requests: u64,
    /// Accelerator work of the measured requests / (replicas x window): the
    /// fraction of time a replica is busy (with anyone in service).
    #[serde_as(as = "NonFinite")]
    pub busy_fraction: f64,
    /// The offered load against the fleet's capacity: the load estimate's
    /// rho, plus the recomputation the run measured / (replicas x window)
    /// where the estimate does not count it (see [`CheckMetric::OfferedLoad`](crate::evaluate::CheckMetric::OfferedLoad)).
    #[serde_as(as = "NonFinite")]
    pub offered_load: f64,
    /// Largest sampled waiting queue per replica.
    #[serde_as(as = "NonFinite")]
    pub peak_waiting_per_replica: f64,
    /// 99th percentile of the sampled waiting queue per replica.
    #[serde_as(as = "NonFinite")]
    pub p99_waiting_per_replica: f64,
    /// 99th percentile of the sampled KV utilization.
    #[serde_as(as = "NonFinite")]
    pub p99_kv_utilization: f64,
    /// Replica-seconds per prompt token and per output token at saturation
    /// (the load estimate's), for splitting cost between them.
    #[serde_as(as = "NonFinite")]
    pub prefill_s_per_token: f64,
    #[serde_as(as = "NonFinite")]
    pub decode_s_per_token: f64,
    /// Percentiles a report does not compute, from the records:
    /// (check index, value).
    #[serde_as(as = "Vec<(_, NonFinite)>")]
    pub extra_percentiles: Vec<(usize, f64)>,
    /// Requests over each class check's bound, by time batch, where the
    /// run kept its records (see [`Exceedance`]).
    #[serde(default)]
    pub exceedances: Vec<Exceedance>,
    /// The engine's steps over the run.
    #[serde(default)]
    pub steps: StepTotals,
}

/// The load estimate's rho, plus the recomputation the run measured over
/// the fleet's time (`fleet_s`) where the estimate does not count it: a
/// measured estimate (where the KV cache binds) already charges a saturated
/// replica's recomputation, and adding the run's would count it twice.
fn offered_load(report: &Report, fleet_s: f64) -> f64 {
    if report.load.measured {
        report.load.rho
    } else {
        report.load.rho + report.overall.busy_s_recomputed / fleet_s
    }
}

impl RunAggregates {
    pub fn of(report: &Report, checks: &[CheckSpec]) -> RunAggregates {
        let window_s = report.horizon_s - report.warmup_s;
        let n = report.replicas.max(1) as f64;
        let mut waiting: Vec<f64> = report.series.iter().map(|p| p.waiting as f64 / n).collect();
        waiting.sort_by(f64::total_cmp);
        let mut kv: Vec<f64> = report.series.iter().map(|p| p.kv_utilization).collect();
        kv.sort_by(f64::total_cmp);
        let p99 = |sorted: &[f64]| {
            if sorted.is_empty() {
                0.0
            } else {
                crate::stats::quantile_sorted(sorted, 0.99)
            }
        };
        let extra_percentiles = checks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.needs_records())
            .map(|(i, c)| (i, c.percentile_from_records(report)))
            .collect();
        let exceedances = if report.records.is_empty() {
            Vec::new()
        } else {
            checks
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.exceedance(i, report))
                .collect()
        };
        RunAggregates {
            replicas: report.replicas,
            window_s,
            classes: report.classes.iter().map(ClassTotals::of).collect(),
            overall: ClassTotals::of(&report.overall),
            requests: report.engine.requests,
            busy_fraction: report.overall.busy_s / (n * window_s),
            offered_load: offered_load(report, n * window_s),
            peak_waiting_per_replica: waiting.last().copied().unwrap_or(0.0),
            p99_waiting_per_replica: p99(&waiting),
            p99_kv_utilization: p99(&kv),
            prefill_s_per_token: report.load.prefill_s_per_token,
            decode_s_per_token: report.load.decode_s_per_token,
            extra_percentiles,
            exceedances,
            steps: StepTotals::of(report),
        }
    }
}

impl StepTotals {
    fn of(report: &Report) -> StepTotals {
        let b = &report.batches;
        let or_zero = |x: f64| if x.is_finite() { x } else { 0.0 };
        StepTotals {
            prefill_s: or_zero(b.prefill_s),
            decode_s: or_zero(b.decode_s),
            recompute_s: or_zero(b.recompute_s),
            tokens_p99: or_zero(b.tokens_per_step.by_time.p99),
            kv_peak: b.kv_use.iter().map(|k| or_zero(k.peak)).fold(0.0, f64::max),
        }
    }
}

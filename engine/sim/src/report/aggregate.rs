//! Aggregation: the class rows and the overall row of a report, from the
//! records that arrive after the warm-up (counts, token and busy-time sums,
//! rates, percentiles and CDF points).

use super::ClassStats;
use super::Quantiles;
use super::cdf::CDF_POINTS;
use super::rows::{RowStats, each_and_whole};
use crate::sim::{RequestRecord, Status};
use crate::stats::wilson_interval;

/// Whether a finished record met its class deadline.
fn met_deadline(r: &RequestRecord, deadline_s: f64) -> bool {
    r.status == Status::Completed && r.sojourn_s() <= deadline_s
}

pub struct Accumulator {
    sojourn: Vec<f64>,
    wait: Vec<f64>,
    ttft: Vec<f64>,
    tpot: Vec<f64>,
    stats: ClassStats,
}

impl Accumulator {
    /// For up to `capacity` requests.
    pub fn new(name: &str, deadline_s: f64, capacity: usize) -> Accumulator {
        Accumulator {
            sojourn: Vec::with_capacity(capacity),
            wait: Vec::with_capacity(capacity),
            ttft: Vec::with_capacity(capacity),
            tpot: Vec::with_capacity(capacity),
            stats: ClassStats {
                name: name.to_string(),
                deadline_s,
                arrived: 0,
                met: 0,
                late: 0,
                rejected: 0,
                timed_out: 0,
                unfinished: 0,
                p_miss: f64::NAN,
                p_miss_ci95: [f64::NAN; 2],
                goodput_per_h: 0.0,
                sojourn: Quantiles::default(),
                queue_wait: Quantiles::default(),
                ttft: Quantiles::default(),
                tpot: Quantiles::default(),
                cdf: Vec::new(),
                prefill_tokens: 0,
                decode_tokens: 0,
                preemptions: 0,
                busy_s: 0.0,
                busy_s_missed: 0.0,
                busy_s_recomputed: 0.0,
            },
        }
    }

    /// Counts record `r` (of a class with deadline `deadline_s`) and adds
    /// its times to the samples.
    pub fn add(&mut self, r: &RequestRecord, deadline_s: f64) {
        let s = &mut self.stats;
        s.arrived += 1;
        let met = met_deadline(r, deadline_s);
        match r.status {
            Status::Completed if met => s.met += 1,
            Status::Completed => s.late += 1,
            Status::RejectedQueueFull | Status::RejectedTooLong => s.rejected += 1,
            Status::TimedOut => s.timed_out += 1,
            Status::Unfinished | Status::Pending => s.unfinished += 1,
        }
        if r.status == Status::Completed {
            self.sojourn.push(r.sojourn_s());
            if r.output_tokens > 1 {
                self.tpot
                    .push((r.end_s - r.first_token_s) / (r.output_tokens - 1) as f64);
            }
            s.decode_tokens += r.output_tokens as u64 - 1;
        }
        if !r.admitted_s.is_nan() {
            self.wait.push(r.admitted_s - r.arrival_s);
            s.prefill_tokens += (r.input_tokens - r.cached_tokens) as u64 + r.recomputed_tokens;
        }
        if !r.first_token_s.is_nan() {
            self.ttft.push(r.first_token_s - r.arrival_s);
        }
        s.preemptions += r.preemptions as u64;
        s.busy_s += r.busy_s;
        if !met {
            s.busy_s_missed += r.busy_s;
        }
        let computed = (r.input_tokens - r.cached_tokens) as u64
            + r.output_tokens as u64
            + r.recomputed_tokens;
        if r.recomputed_tokens > 0 && computed > 0 {
            s.busy_s_recomputed += r.busy_s * r.recomputed_tokens as f64 / computed as f64;
        }
    }

    /// The overall row's counts and sums: the classes' added (what `add`
    /// would give for every record, up to the order of the floating-point
    /// sums).
    fn totals(parts: &[Accumulator], deadline_s: f64) -> ClassStats {
        let mut s = Accumulator::new("all", deadline_s, 0).stats;
        for part in parts.iter() {
            let p = &part.stats;
            macro_rules! add {
                ($($field:ident),*) => { $(s.$field += p.$field;)* };
            }
            add!(arrived, met, late, rejected, timed_out, unfinished);
            add!(prefill_tokens, decode_tokens, preemptions);
            add!(busy_s, busy_s_missed, busy_s_recomputed);
        }
        s
    }
}

/// The class rows and the overall row (deadline `deadline_s`), complete:
/// counts and sums, rates over `window_s`, and percentiles and CDF points
/// of each class and of all classes together, which share their passes
/// over the samples (see [`each_and_whole`]).
pub fn finish_rows(
    parts: &[Accumulator],
    deadline_s: f64,
    window_s: f64,
) -> (Vec<ClassStats>, ClassStats) {
    let mut overall = Accumulator::totals(parts, deadline_s);
    let mut classes: Vec<ClassStats> = parts.iter().map(|a| a.stats.clone()).collect();
    let sample = |of: fn(&Accumulator) -> &Vec<f64>| -> Vec<&[f64]> {
        parts.iter().map(|a| &of(a)[..]).collect()
    };
    // Requests without a value (never completed, admitted, ...) count as
    // infinite: percentiles are over every arrival, except for tpot.
    let arrived: Vec<u64> = classes.iter().map(|c| c.arrived).collect();
    let tpot = sample(|a| &a.tpot);
    let tpot_counts: Vec<u64> = tpot.iter().map(|p| p.len() as u64).collect();
    let total = overall.arrived;
    let mut rows: Vec<&mut ClassStats> = classes.iter_mut().chain([&mut overall]).collect();
    for s in rows.iter_mut() {
        add_rates(s, window_s);
    }
    let sojourn = each_and_whole(&sample(|a| &a.sojourn), &arrived, total, CDF_POINTS);
    put_rows(&mut rows, sojourn, |s, r| {
        (s.sojourn, s.cdf) = (r.quantiles, r.cdf)
    });
    let wait = each_and_whole(&sample(|a| &a.wait), &arrived, total, 0);
    put_rows(&mut rows, wait, |s, r| s.queue_wait = r.quantiles);
    let ttft = each_and_whole(&sample(|a| &a.ttft), &arrived, total, 0);
    put_rows(&mut rows, ttft, |s, r| s.ttft = r.quantiles);
    let tpot = each_and_whole(&tpot, &tpot_counts, tpot_counts.iter().sum(), 0);
    put_rows(&mut rows, tpot, |s, r| s.tpot = r.quantiles);
    (classes, overall)
}

/// Puts the statistics of each class and of all (`each`, then `all`)
/// into the class rows and the overall row (`rows`, in the same order).
fn put_rows(
    rows: &mut [&mut ClassStats],
    (each, all): (Vec<RowStats>, RowStats),
    put: fn(&mut ClassStats, RowStats),
) {
    for (s, row) in rows.iter_mut().zip(each.into_iter().chain([all])) {
        put(s, row);
    }
}

/// Sets the miss probability, its interval and the goodput of `s` (its
/// counts complete) over a window of `window_s`.
fn add_rates(s: &mut ClassStats, window_s: f64) {
    let n = s.arrived;
    let misses = n - s.met;
    s.p_miss = if n > 0 {
        misses as f64 / n as f64
    } else {
        f64::NAN
    };
    let (lo, hi) = wilson_interval(misses, n, 1.96);
    s.p_miss_ci95 = [lo, hi];
    // (No successes is no goodput, even over a window too short to divide by.)
    s.goodput_per_h = if s.met == 0 {
        0.0
    } else {
        s.met as f64 * 3600.0 / window_s
    };
}

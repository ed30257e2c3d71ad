//! The share of a class's requests beyond a check's bound, counted where
//! the records are, and its exact interval pooled over the replications:
//! the data a "not met" rests on when replications are few.
//!
//! A percentile target "the q-th percentile of X is at most T" holds
//! exactly when at most a share 1 - q of the requests has X > T (the
//! report's percentile is the ceil(q n)-th smallest value), and a miss
//! target "P(miss) <= epsilon" is the same statement with X the sojourn and
//! T the deadline. So both are judged, on the "not met" side, by the share
//! of requests over the bound against the share allowed. Every request of
//! every replication counts: with 2 replications of 10,000 requests each,
//! 20,000 requests speak, where the t interval over the 2 replications' own
//! values has 1 degree of freedom (t = 12.7) and reaches down to zero for
//! any spread at all, calling a 100x miss "uncertain".
//!
//! Requests in one run are not independent: a queue that builds up makes
//! many requests in a row late together, so an exact binomial interval on
//! the raw counts would be too narrow. The counts are therefore kept by
//! tenth of the measured window (batch means, the standard remedy in
//! simulation output analysis), the variance of the pooled share measured
//! across those batches of every replication, and the binomial interval
//! taken at the effective sample size n / D, where D (the design effect,
//! at least 1) is that variance over the binomial one. A borderline fleet
//! (a share near the allowed one) keeps a wide interval and stays
//! uncertain; a gross miss (a third of the requests over a bound that
//! allows 1%) is not met on any sample size a plan runs.

use serde::{Deserialize, Serialize};

use crate::report::Report;
use crate::sim::RequestRecord;
use crate::stats::clopper_pearson;

/// Time batches a run's measured window is split into (by arrival).
pub const BATCHES: usize = 10;

/// One run's requests over a check's bound: `[over, counted]` per tenth of
/// the measured window by arrival time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exceedance {
    /// The check's index.
    pub check: usize,
    pub batches: Vec<[u64; 2]>,
}

impl Exceedance {
    /// Counts the measured records of class `class` for which `value` is
    /// `Some` (the check's population), those with a value over `bound`
    /// among them.
    pub fn count(
        check: usize,
        report: &Report,
        class: usize,
        bound: f64,
        value: impl Fn(&RequestRecord) -> Option<f64>,
    ) -> Exceedance {
        let window = report.horizon_s - report.warmup_s;
        let mut batches = vec![[0u64; 2]; BATCHES];
        let measured = report
            .records
            .iter()
            .filter(|r| r.class as usize == class && r.arrival_s >= report.warmup_s);
        for r in measured {
            let Some(x) = value(r) else { continue };
            let at = if window > 0.0 {
                (r.arrival_s - report.warmup_s) / window * BATCHES as f64
            } else {
                0.0
            };
            // A closed loop's or a trace's arrival may fall at the horizon.
            let b = (at as usize).min(BATCHES - 1);
            batches[b][1] += 1;
            // An infinite value (never reached) is over every bound; NaN
            // does not occur for a counted record.
            if x.is_nan() || x > bound {
                batches[b][0] += 1;
            }
        }
        Exceedance { check, batches }
    }
}

/// The share of requests over a check's bound, pooled over replications.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareOver {
    /// Requests over the bound, and requests counted, over every replication.
    pub over: u64,
    pub counted: u64,
    /// The share the target allows over its bound: 1 - q for a q-th
    /// percentile, epsilon for a miss probability.
    #[serde_as(as = "crate::serde_float::NonFinite")]
    pub allowed: f64,
    /// The variance of the pooled share across time batches over the
    /// binomial variance (at least 1): how much the requests' bursts widen
    /// the interval. The interval is the exact one at `counted / D`.
    #[serde_as(as = "crate::serde_float::NonFinite")]
    pub design_effect: f64,
    /// Exact (Clopper-Pearson) 95% interval of the share, at the effective
    /// sample size.
    #[serde_as(as = "[crate::serde_float::NonFinite; 2]")]
    pub ci95: [f64; 2],
}

impl ShareOver {
    /// The pooled share from every run's batches (`None` when nothing was
    /// counted).
    pub fn pooled<'a>(
        batches: impl IntoIterator<Item = &'a [u64; 2]>,
        allowed: f64,
    ) -> Option<ShareOver> {
        let batches: Vec<[u64; 2]> = batches.into_iter().filter(|b| b[1] > 0).copied().collect();
        let over: u64 = batches.iter().map(|b| b[0]).sum();
        let counted: u64 = batches.iter().map(|b| b[1]).sum();
        if counted == 0 {
            return None;
        }
        let n = counted as f64;
        let p = over as f64 / n;
        let design_effect = design_effect(&batches, p, n);
        // The effective sample, its count over the bound rounded down for
        // the lower end and up for the upper (each end the cautious way).
        let n_eff = (n / design_effect).floor().max(1.0);
        // (Within a hair of a whole count is that count: at D = 1 the
        // counts are the observed ones exactly.)
        let k = p * n_eff;
        let lower_k = (k + 1e-9).floor() as u64;
        let upper_k = (k - 1e-9).ceil().max(0.0) as u64;
        let n_eff = n_eff as u64;
        let ci95 = [
            clopper_pearson(lower_k, n_eff, 0.05).0,
            clopper_pearson(upper_k, n_eff, 0.05).1,
        ];
        Some(ShareOver {
            over,
            counted,
            allowed,
            design_effect,
            ci95,
        })
    }

    /// The data show more requests over the bound than the target allows:
    /// the interval lies wholly beyond the allowed share.
    pub fn beyond(&self) -> bool {
        self.ci95[0] > self.allowed
    }

    /// The share over the bound observed.
    pub fn share(&self) -> f64 {
        self.over as f64 / self.counted as f64
    }
}

/// The ratio estimator's variance across batches (with the m / (m - 1)
/// correction) over the binomial variance p (1 - p) / n, at least 1; 1
/// when it cannot be measured (fewer than two batches, or a share of 0 or
/// 1, where the binomial interval is already one-sided and exact).
fn design_effect(batches: &[[u64; 2]], p: f64, n: f64) -> f64 {
    let m = batches.len() as f64;
    if batches.len() < 2 || p <= 0.0 || p >= 1.0 {
        return 1.0;
    }
    let squares: f64 = batches
        .iter()
        .map(|b| {
            let d = b[0] as f64 - p * b[1] as f64;
            d * d
        })
        .sum();
    let variance = squares * m / (m - 1.0) / (n * n);
    let binomial = p * (1.0 - p) / n;
    (variance / binomial).max(1.0)
}

//! What the planner keeps of one simulation run, and how runs are judged
//! against the SLA targets.

use crate::serde_float::NonFinite;
use serde::{Deserialize, Serialize};

use crate::exceedance::{Exceedance, ShareOver};
use crate::format::{duration, percent, percentile_label};
use crate::model::scenario::Scenario;
use crate::params::plan::{DecisionRule, TargetMetric};
use crate::report::{Quantiles, Report};
pub use crate::run_summary::{ClassTotals, RunAggregates};
use crate::serde_float::nonfinite;
use crate::sim::{RequestRecord, Status};
use crate::stats::{clopper_pearson, mean_and_half_width};

/// The standard percentiles a report computes; others need the records.
const REPORT_PERCENTILES: [f64; 5] = [0.5, 0.9, 0.95, 0.99, 0.999];

/// What a check measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckMetric {
    MissProbability,
    Sojourn,
    Ttft,
    Tpot,
    /// The implicit sustainability check: the offered load against the
    /// fleet's capacity must stay at or below `max_busy_fraction`. The
    /// offered load is the expected work of the classes that follow a rate
    /// at a saturated replica's cost per request (the report's load
    /// estimate's rho, `sim::saturation`: the scenario's own mean, so
    /// day-to-day swings in demand do not widen its interval). Where the KV
    /// cache binds, that cost is measured on a saturated replica and counts
    /// the recomputation after preemption it does; elsewhere the formula
    /// counts none, and the recomputation each run measured over the
    /// fleet's time is added (never both: see `offered_load`).
    /// Offline, closed-loop and traced classes send a fixed set of requests
    /// (or wait for their answers) and build no backlog from day to day;
    /// their misses are what their other targets judge.
    ///
    /// Not the busy fraction: under continuous batching a replica is busy
    /// whenever anyone is in service, however small its batch, so being
    /// busy says nothing about how much more it could carry (issue 19,
    /// item 5).
    #[serde(alias = "busy_fraction")]
    OfferedLoad,
}

/// One target applied to one class (a target without a class becomes one
/// check per class), or the sustainability check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckSpec {
    pub metric: CheckMetric,
    /// Class index (None for the fleet-wide offered-load check).
    pub class: Option<usize>,
    pub class_name: Option<String>,
    pub percentile: f64,
    /// The value must be at most this.
    pub threshold: f64,
    pub description: String,
}

impl CheckSpec {
    /// Every check a scenario's plan asks for, in target order, then the
    /// offered-load check.
    pub fn all(scenario: &Scenario) -> Vec<CheckSpec> {
        let names: Vec<&str> = scenario
            .params()
            .classes
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let plan = &scenario.params().plan;
        let mut out = Vec::new();
        for target in scenario.targets() {
            for k in target.classes(names.len()) {
                let name = names[k].to_string();
                let deadline_s = scenario.classes()[k].deadline_s;
                // A miss target has no percentile; every other one has.
                let spec = match target.percentile {
                    None => CheckSpec {
                        metric: CheckMetric::MissProbability,
                        class: Some(k),
                        percentile: 0.0,
                        threshold: target.bound,
                        description: format!(
                            "{name}: P(sojourn > {}) <= {}",
                            duration(deadline_s),
                            percent(target.bound)
                        ),
                        class_name: Some(name),
                    },
                    Some(p) => {
                        let (metric, label) = match target.metric {
                            TargetMetric::Ttft => (CheckMetric::Ttft, "TTFT"),
                            TargetMetric::Tpot => (CheckMetric::Tpot, "TPOT"),
                            _ => (CheckMetric::Sojourn, "sojourn"),
                        };
                        CheckSpec {
                            metric,
                            class: Some(k),
                            percentile: p,
                            threshold: target.bound,
                            description: format!(
                                "{name}: {} {label} <= {}",
                                percentile_label(p),
                                duration(target.bound)
                            ),
                            class_name: Some(name),
                        }
                    }
                };
                out.push(spec);
            }
        }
        out.push(CheckSpec {
            metric: CheckMetric::OfferedLoad,
            class: None,
            class_name: None,
            percentile: 0.0,
            threshold: plan.max_busy_fraction,
            description: format!(
                "sustainable: the offered work takes <= {} of the fleet's capacity",
                percent(plan.max_busy_fraction)
            ),
        });
        out
    }

    fn quantiles_metric(&self) -> bool {
        matches!(
            self.metric,
            CheckMetric::Sojourn | CheckMetric::Ttft | CheckMetric::Tpot
        )
    }

    /// A target on requests (a percentile or P(miss)), whose share of
    /// requests over the bound the records give.
    pub fn counts_requests(&self) -> bool {
        self.class.is_some() && self.allowed_share().is_some()
    }

    pub fn needs_records(&self) -> bool {
        self.quantiles_metric() && !REPORT_PERCENTILES.contains(&self.percentile)
    }

    /// This check's value in one run: NaN when it is undefined there (no
    /// request of the class arrived in the measured window, or none reached
    /// what the percentile measures), which is never a pass.
    pub fn value(&self, index: usize, run: &RunAggregates) -> f64 {
        let Some(k) = self.class else {
            return run.offered_load;
        };
        let class = &run.classes[k];
        if class.arrived == 0 {
            return f64::NAN;
        }
        let quantiles = match self.metric {
            CheckMetric::MissProbability => return class.p_miss,
            CheckMetric::OfferedLoad => return run.offered_load,
            CheckMetric::Sojourn => &class.sojourn,
            CheckMetric::Ttft => &class.ttft,
            CheckMetric::Tpot => &class.tpot,
        };
        let value = if self.needs_records() {
            run.extra_percentiles
                .iter()
                .find(|(i, _)| *i == index)
                .map_or(f64::INFINITY, |(_, v)| *v)
        } else if self.percentile == 0.5 {
            quantiles.p50
        } else if self.percentile == 0.9 {
            quantiles.p90
        } else if self.percentile == 0.95 {
            quantiles.p95
        } else if self.percentile == 0.99 {
            quantiles.p99
        } else {
            quantiles.p999
        };
        // NaN when no request counts towards the percentile at all (a
        // request that never reached the event counts, as infinitely late).
        value
    }

    /// Why this check has no value in `run` (see [`CheckSpec::value`]).
    fn undefined_reason(&self, run: &RunAggregates) -> String {
        let (Some(k), Some(name)) = (self.class, &self.class_name) else {
            return "no value".to_string();
        };
        if run.classes[k].arrived == 0 {
            return format!("no requests of {name} arrived in the measured window");
        }
        match self.metric {
            CheckMetric::Tpot => format!(
                "no request of {name} completed with more than one output token, so its time per output token is undefined"
            ),
            _ => format!("no request of {name} was measured for this percentile"),
        }
    }

    /// A percentile the report does not compute, from the records, with the
    /// report's definitions (see [`CheckSpec::record_value`]).
    pub(super) fn percentile_from_records(&self, report: &Report) -> f64 {
        let Some(k) = self.class else {
            return f64::NAN;
        };
        let mut finite = Vec::new();
        let mut missing = 0u64;
        let measured = report
            .records
            .iter()
            .filter(|r| r.class as usize == k && r.arrival_s >= report.warmup_s);
        for x in measured.filter_map(|r| self.record_value(r)) {
            if x.is_finite() {
                finite.push(x)
            } else {
                missing += 1
            }
        }
        finite.sort_by(f64::total_cmp);
        Quantiles::at(&finite, missing, self.percentile)
    }

    /// What this check reads of one measured record of its class, with the
    /// report's definitions: every arrival counts, and one that never
    /// reached the event counts as infinitely late (TPOT: completed
    /// requests with more than one output token only; P(miss): the
    /// sojourn, infinite unless completed, against the deadline). `None`
    /// for a record outside the check's population.
    fn record_value(&self, r: &RequestRecord) -> Option<f64> {
        match self.metric {
            CheckMetric::Sojourn | CheckMetric::MissProbability => {
                Some(completed_or_inf(r, r.end_s - r.arrival_s))
            }
            CheckMetric::Ttft => Some(if r.first_token_s.is_nan() {
                f64::INFINITY
            } else {
                r.first_token_s - r.arrival_s
            }),
            CheckMetric::Tpot => (r.status == Status::Completed && r.output_tokens > 1)
                .then(|| (r.end_s - r.first_token_s) / (r.output_tokens - 1) as f64),
            CheckMetric::OfferedLoad => None,
        }
    }

    /// The share this check allows over its bound: 1 - q for a q-th
    /// percentile, epsilon for a miss probability (`None` for the
    /// offered load, which is not a share of requests).
    fn allowed_share(&self) -> Option<f64> {
        match self.metric {
            CheckMetric::MissProbability => Some(self.threshold),
            CheckMetric::OfferedLoad => None,
            _ => Some(1.0 - self.percentile),
        }
    }

    /// This check's requests over its bound in `report` (whose records it
    /// reads): over the deadline for P(miss), over the threshold for a
    /// percentile.
    pub(super) fn exceedance(&self, index: usize, report: &Report) -> Option<Exceedance> {
        let k = self.class?;
        self.allowed_share()?;
        let bound = match self.metric {
            CheckMetric::MissProbability => report.classes.get(k)?.deadline_s,
            _ => self.threshold,
        };
        Some(Exceedance::count(index, report, k, bound, |r| {
            self.record_value(r)
        }))
    }

    /// The share of requests over this check's bound pooled over `runs`
    /// (`None` unless every run counted it).
    fn share_over(&self, index: usize, runs: &[&RunAggregates]) -> Option<ShareOver> {
        let allowed = self.allowed_share()?;
        let mut batches = Vec::new();
        for run in runs {
            let e = run.exceedances.iter().find(|e| e.check == index)?;
            batches.extend(e.batches.iter());
        }
        ShareOver::pooled(batches, allowed)
    }
}

fn completed_or_inf(r: &RequestRecord, x: f64) -> f64 {
    if r.status == Status::Completed {
        x
    } else {
        f64::INFINITY
    }
}

/// What replications say about a target (or a fleet: the worst of its
/// checks). See `judge` (in `plan/evaluate.rs`) for the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The upper 95% bound is within the threshold (under the `mean` rule:
    /// the mean is).
    Met,
    /// Neither met nor not met: the interval straddles the threshold, and
    /// the share of requests over the bound is not clearly beyond the
    /// allowed one. More replications may decide.
    Uncertain,
    /// The interval lies wholly beyond the threshold: its lower 95% bound
    /// is, or the lower 95% bound of the share of requests over the bound
    /// (pooled over the replications) is beyond the share allowed (under
    /// the `mean` rule: the mean is beyond); or the value is undefined.
    NotMet,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Uncertain => "uncertain",
            Verdict::NotMet => "not met",
        }
    }
}

/// One check over R replications.
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetCheck {
    pub description: String,
    pub metric: CheckMetric,
    pub class: Option<String>,
    /// The value must be at most this (a probability, a fraction or seconds).
    #[serde_as(as = "NonFinite")]
    pub threshold: f64,
    /// Mean over replications (infinite when a replication never reached it).
    #[serde(with = "nonfinite")]
    pub mean: f64,
    /// 95% Student-t interval over replications; absent with one replication
    /// or an infinite value.
    #[serde_as(as = "Option<[NonFinite; 2]>")]
    pub ci95: Option<[f64; 2]>,
    /// For a miss probability: the exact (Clopper-Pearson) 95% upper bound
    /// from the misses and requests pooled over the replications, which is
    /// not zero when no request missed.
    #[serde_as(as = "Option<NonFinite>")]
    pub exact_upper: Option<f64>,
    /// The bounds the decision uses: the largest of the interval's upper
    /// end, the exact bound and the mean; the interval's lower end (the mean
    /// with one replication, or under the `mean` rule: both the mean).
    #[serde_as(as = "[NonFinite; 2]")]
    pub bounds: [f64; 2],
    pub verdict: Verdict,
    /// For a percentile or miss target (where the run kept its records):
    /// the share of requests over the bound, pooled over the replications,
    /// with its exact interval; a "not met" may rest on it.
    pub share_over: Option<ShareOver>,
    /// `verdict` is [`Verdict::Met`].
    pub met: bool,
    /// Why the check could not be evaluated (its value is undefined in some
    /// replication: e.g. no request of the class arrived, or a percentile
    /// over no completed request). Such a check is never met, and `mean` is
    /// NaN.
    pub not_evaluated: Option<String>,
}

/// One fleet size evaluated against every check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    pub replicas: u32,
    pub replications: u32,
    /// Not met when a check is not met, else uncertain when one is, else met.
    pub verdict: Verdict,
    /// Every check met.
    pub meets: bool,
    /// The largest judged value / threshold over the checks (at most 1
    /// exactly when every check is met).
    #[serde(with = "nonfinite")]
    pub worst_ratio: f64,
    pub checks: Vec<TargetCheck>,
}

impl Evaluation {
    /// Whether a one-seed probe points a search to this fleet as meeting:
    /// no check is clearly not met (every point estimate within its
    /// threshold, no share of requests surely over its allowed one). One
    /// run cannot rule out chance, so a probe that is only uncertain (its
    /// mean within the threshold, the exact bound of its few requests'
    /// misses beyond) is taken as a guide to where the answer lies, not
    /// as a failure: the search's replications decide (`search.rs`). Were
    /// it a failure, a class too small for one run's exact bound to fall
    /// under its epsilon (a nightly batch of a few hundred requests against
    /// 1%) would fail every fleet up to `max_replicas` on one seed.
    pub fn probe_meets(&self) -> bool {
        self.verdict != Verdict::NotMet
    }

    /// The worst ratio a probe steers by: at most 1 when it meets
    /// ([`Evaluation::probe_meets`]), as the search's interpolation assumes.
    pub fn probe_ratio(&self) -> f64 {
        if self.probe_meets() {
            self.worst_ratio.min(1.0)
        } else {
            self.worst_ratio
        }
    }
}

/// Mean and 95% Student-t interval of per-replication values (infinite
/// values give an infinite mean and no interval). Every quantity the planner
/// averages is non-negative, so the interval is cut at zero.
pub fn mean_ci(values: &[f64]) -> (f64, Option<[f64; 2]>) {
    if values.iter().any(|v| !v.is_finite()) {
        return (f64::INFINITY, None);
    }
    let (mean, half) = mean_and_half_width(values, true);
    let ci = half
        .is_finite()
        .then_some([(mean - half).max(0.0), mean + half]);
    (mean, ci)
}

/// The exact (Clopper-Pearson) 95% upper bound of class `k`'s P(miss), from
/// its misses and requests pooled over `runs`.
pub fn pooled_exact_upper(runs: &[&RunAggregates], k: usize) -> f64 {
    let (misses, arrived) = runs.iter().fold((0, 0), |(m, n), r| {
        let c = &r.classes[k];
        (m + c.arrived - c.met, n + c.arrived)
    });
    clopper_pearson(misses, arrived, 0.05).1
}

/// The bounds the `upper95` rule decides on: the Student-t interval (the
/// mean for both ends with one replication), its upper end raised to the
/// exact bound when there is one.
pub fn upper95_bounds(mean: f64, ci95: Option<[f64; 2]>, exact_upper: Option<f64>) -> [f64; 2] {
    let [lo, hi] = ci95.unwrap_or([mean, mean]);
    [lo.min(mean), hi.max(mean).max(exact_upper.unwrap_or(0.0))]
}

/// The decision rule, for one check, in one place: every verdict of the
/// planner (the search, the recommendation, the cases, sensitivity, the
/// frontier, the configured fleet and the single run) comes from here
/// through [`evaluate`].
///
/// - **not met** when the value is undefined, when the lower end of the
///   interval (`bounds[0]`) is beyond the threshold, or, under `upper95`,
///   when the share of requests over the bound is beyond the share the
///   target allows with 95% confidence (`share`, pooled over every
///   replication's requests: [`ShareOver::beyond`]);
/// - **met** when the upper end (`bounds[1]`) is within the threshold;
/// - **uncertain** otherwise.
///
/// The share test is what lets the data decide a gross miss with few
/// replications: the t interval over 2 replications (t = 12.7) reaches
/// down to zero for any spread, but 20,000 requests of which a third are
/// over a bound that allows 1% are not met whatever the spread between
/// the two runs. It only ever turns "uncertain" into "not met" (a check
/// cannot be both: an upper bound within the threshold and a share surely
/// over the allowed one would be a contradiction the rule resolves to not
/// met, the cautious way).
pub fn judge(
    bounds: [f64; 2],
    threshold: f64,
    share: Option<&ShareOver>,
    decision: DecisionRule,
    evaluated: bool,
) -> Verdict {
    let share_beyond = decision == DecisionRule::Upper95 && share.is_some_and(ShareOver::beyond);
    if !evaluated || bounds[0] > threshold || share_beyond {
        Verdict::NotMet
    } else if bounds[1] <= threshold {
        Verdict::Met
    } else {
        Verdict::Uncertain
    }
}

/// Judges runs (one per replication) against every check by [`judge`].
///
/// The bounds (`upper95`, the default): the interval is Student's t over
/// the replications; for a miss probability its upper end is at least the
/// exact Clopper-Pearson bound of the misses pooled over the replications,
/// so no misses among n requests still bounds P(miss) by about 3.7 / n,
/// not 0. With one replication there is no t interval: the mean stands
/// for both ends (with the exact bound above it), so a single run can show
/// a check met or not met but never rule out chance; the planner decides
/// only on `min_replications` or more. Beside it, for a percentile or miss
/// target, the share of requests over the bound pooled over the
/// replications ([`ShareOver`]) can show it not met. Under `mean` the mean
/// alone decides and nothing is uncertain.
pub fn evaluate(
    checks: &[CheckSpec],
    runs: &[&RunAggregates],
    decision: DecisionRule,
) -> Evaluation {
    let mut out = Vec::with_capacity(checks.len());
    let mut worst_ratio = 0.0f64;
    for (i, spec) in checks.iter().enumerate() {
        let values: Vec<f64> = runs.iter().map(|r| spec.value(i, r)).collect();
        // An undefined value in any replication: not evaluated, never met.
        let not_evaluated = runs
            .iter()
            .zip(&values)
            .find(|(_, v)| v.is_nan())
            .map(|(run, _)| spec.undefined_reason(run));
        let (mean, ci95) = if not_evaluated.is_some() {
            (f64::NAN, None)
        } else {
            mean_ci(&values)
        };
        let exact_upper = match (spec.metric, spec.class) {
            (CheckMetric::MissProbability, Some(k)) if not_evaluated.is_none() => {
                Some(pooled_exact_upper(runs, k))
            }
            _ => None,
        };
        let bounds = match decision {
            DecisionRule::Mean => [mean, mean],
            DecisionRule::Upper95 => upper95_bounds(mean, ci95, exact_upper),
        };
        let share_over = if not_evaluated.is_some() {
            None
        } else {
            spec.share_over(i, runs)
        };
        let verdict = judge(
            bounds,
            spec.threshold,
            share_over.as_ref(),
            decision,
            not_evaluated.is_none(),
        );
        // Judged on the upper bound, so that ratio <= 1 exactly when met (an
        // unevaluated check is infinitely far from met).
        let ratio = if not_evaluated.is_some() {
            f64::INFINITY
        } else {
            bounds[1] / spec.threshold
        };
        worst_ratio = worst_ratio.max(ratio);
        out.push(TargetCheck {
            description: spec.description.clone(),
            metric: spec.metric,
            class: spec.class_name.clone(),
            threshold: spec.threshold,
            mean,
            ci95,
            exact_upper,
            bounds,
            verdict,
            share_over,
            met: verdict == Verdict::Met,
            not_evaluated,
        });
    }
    let verdict = out.iter().map(|c| c.verdict).max().unwrap_or(Verdict::Met);
    Evaluation {
        replicas: runs.first().map_or(0, |r| r.replicas),
        replications: runs.len() as u32,
        verdict,
        meets: verdict == Verdict::Met,
        worst_ratio,
        checks: out,
    }
}

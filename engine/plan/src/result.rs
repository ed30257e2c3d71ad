//! What a plan produces. Every type serialises to JSON and reads back
//! exactly (the web app sends it from a Web Worker): NaN travels as `null`,
//! the infinities as `"inf"` and `"-inf"` (see `serde_float`), and an absent
//! (`None`) field is left out and read back as absent.

use crate::serde_float::NonFinite;
use serde::{Deserialize, Serialize};

use crate::cost::{CostBasis, FleetCost, UnitCosts};
use crate::curve::CurveTarget;
use crate::diagnosis::Diagnosis;
use crate::evaluate::{Evaluation, Verdict};
use crate::model::analytic::QueueEstimate;
use crate::params::plan::{DecisionRule, Multipliers, PricingModel, SensitivityInput};
use crate::params::{Discipline, Router};
use crate::serde_float::nonfinite;

/// Everything a plan produces.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanResult {
    pub scenario_name: String,
    pub model: String,
    /// What counts as a successful request (for cost per success).
    pub success_criterion: String,
    /// Every check the fleet must pass, one line each.
    pub targets: Vec<String>,
    /// Most replications per decided evaluation.
    pub replications: u32,
    /// Replications every decided evaluation starts with.
    pub min_replications: u32,
    pub decision: DecisionRule,
    /// The decision rule in words, stated beside every plan.
    pub decision_rule: String,
    /// The dimensions searched, with their values.
    pub search_space: Vec<SearchDimension>,
    /// Every configuration's capacity search under the base case, pruned
    /// ones included, in the order of the space (candidate by candidate).
    pub configurations: Vec<ConfigurationResult>,
    /// Index into `configurations` of the cheapest that meets every target.
    pub chosen: Option<usize>,
    /// The next cheapest configurations that meet every target (found
    /// before pruning ruled out the rest), cheapest first.
    pub runner_ups: Vec<usize>,
    /// The chosen hardware with every engine and cluster setting as
    /// configured (what a replicas-only search of it finds), for comparison;
    /// absent when no fleet of it meets the targets.
    pub baseline: Option<usize>,
    /// What made the difference between the chosen configuration and the
    /// baseline, in words.
    pub explanation: String,
    /// Every fleet the base search decided, with its cost and P(miss); the
    /// cost versus P(miss) Pareto frontier is marked.
    pub explored: Vec<ExploredPoint>,
    /// The plan; absent when no configuration meets the targets.
    pub recommendation: Option<Recommendation>,
    /// Which target sets the plan's fleet, and the fleet without it (absent
    /// without a plan, or when one replica meets every target).
    pub binding: Option<BindingTarget>,
    /// Why no configuration meets the targets, said once (absent with a
    /// plan).
    pub unattainable: Option<String>,
    /// The configured fleet judged by the decision rule like every fleet
    /// (the page's first reading of it is one simulation); absent when the
    /// plan does not judge it (see `configured_not_judged`), and in plans
    /// made before the planner judged it.
    #[serde(default)]
    pub configured: Option<ConfiguredFleet>,
    /// Why the plan does not judge the configured fleet: "its hardware is
    /// not among the plan's candidates", or "a target no fleet of it can
    /// meet rules it out without a run".
    #[serde(default)]
    pub configured_not_judged: Option<String>,
    /// Expected, low-demand and high-demand cases, each re-planned (only
    /// the expected one when the plan's options leave the others out; none
    /// without a plan).
    pub scenarios: Vec<ScenarioResult>,
    /// The fleet that covers the high-demand case, and what covering it
    /// costs beyond the plan.
    pub worst_case_cover: Option<Cover>,
    pub service_curve: Option<ServiceCurve>,
    pub sensitivity: Option<Sensitivity>,
    pub analytic: Option<AnalyticComparison>,
    /// Simulations run (cached repeats not counted).
    pub simulations: u64,
    pub simulated_requests: u64,
    /// How much the search's pruning and sequential stopping saved.
    pub search_effort: SearchEffort,
    pub warnings: Vec<String>,
}

/// The scenario as it stands (its own hardware and settings on its own
/// `cluster.replicas`), decided by sequential replications.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfiguredFleet {
    /// "H100 SXM5 80GB x1, FCFS" (as the configurations table names it).
    pub configuration: String,
    pub replicas: u32,
    /// Every check over the replications the decision needed.
    pub evaluation: Evaluation,
    /// Its cost with the reserve, over the same replications.
    pub cost: CostSummary,
}

/// The target that sets the fleet's size: what the fleet one replica
/// smaller fails, and the smallest fleet meeting every other check.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BindingTarget {
    /// The checks not met on `failing_replicas` (their descriptions).
    pub targets: Vec<String>,
    /// The smallest fleet meeting every target.
    pub replicas: u32,
    /// One replica fewer, which fails `targets` (decided).
    pub failing_replicas: u32,
    /// The smallest fleet meeting every check but `targets`.
    pub without: Option<u32>,
    /// Simulations this needed beyond the capacity search's (counted in
    /// the plan's).
    pub extra_simulations: u64,
    /// "chat: p90 TPOT <= 30 ms sets the fleet: 8 replicas (not met on 7);
    /// without it, 4 replicas."
    pub sentence: String,
    /// Why it binds, and the levers tried against it (see `diagnosis.rs`).
    pub diagnosis: Option<Diagnosis>,
}

/// One dimension of the search space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchDimension {
    pub name: String,
    pub values: Vec<String>,
}

/// One configuration (a candidate and its engine and cluster settings) and
/// its capacity search.
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigurationResult {
    /// "H100 SXM x1, priority".
    pub name: String,
    pub candidate: String,
    pub hardware: String,
    pub gpus_per_replica: u32,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_gpu_hour: Option<f64>,
    pub pricing_model: PricingModel,
    pub discipline: Discipline,
    pub max_num_seqs: u32,
    pub max_num_batched_tokens: u32,
    pub max_waiting: Option<u32>,
    pub router: Router,
    /// Every setting as the scenario configures it.
    pub baseline: bool,
    pub search: SearchResult,
}

/// How a capacity search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchStatus {
    /// A fleet meets every target.
    Found,
    /// No fleet up to `max_replicas` does.
    Unattainable,
    /// Stopped because it could not beat a configuration already found.
    Pruned,
}

fn not_a_number() -> f64 {
    f64::NAN
}

/// One decided fleet of the base search, for the chart of cost against
/// the worst target's margin.
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExploredPoint {
    /// Index into [`PlanResult::configurations`].
    pub configuration: usize,
    pub replicas: u32,
    /// With the reserve.
    pub total_gpus: u32,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_month: Option<f64>,
    /// The largest class P(miss), mean over the replications.
    #[serde_as(as = "NonFinite")]
    pub p_miss: f64,
    /// The largest class P(miss) upper bound (as the decision rule reads it).
    #[serde_as(as = "NonFinite")]
    pub p_miss_upper: f64,
    /// How far the fleet is from its targets: the largest judged value
    /// over its threshold among every check (latency percentiles, P(miss),
    /// sustainability), at most 1 exactly when every target is met
    /// ([`Evaluation::worst_ratio`]). NaN in plans made before it was kept.
    #[serde(default = "not_a_number", with = "nonfinite")]
    pub worst_ratio: f64,
    /// The check that gives `worst_ratio` ("chat: p99 TTFT <= 2 s").
    #[serde(default)]
    pub worst_check: Option<String>,
    pub replications: u32,
    pub verdict: Verdict,
    /// No other explored point is both as cheap (or cheaper) and nearer its
    /// targets (a lower `worst_ratio`): the frontier of cost against the
    /// worst target's margin, on which the chosen fleet always lies (every
    /// cheaper fleet fails a target, so its ratio is above 1).
    pub on_frontier: bool,
    /// The fleet's full cost over its replications, for the points on the
    /// frontier (absent for the others).
    #[serde(default)]
    pub cost: Option<CostSummary>,
}

/// What the search did against a plain one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchEffort {
    pub configurations: u32,
    /// Configurations whose search pruning stopped or never started.
    pub pruned: u32,
    /// Simulations of the base case's search.
    pub simulations: u64,
    /// What a plain search would run: a bisection over 1..max_replicas for
    /// every configuration, every probe with `replications` seeds.
    pub plain_simulations: u64,
    /// `plain_simulations` - `simulations` (at least 0).
    pub saved: u64,
}

/// The fleet that covers the high-demand case.
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cover {
    pub case: String,
    pub configuration: String,
    pub steady_replicas: u32,
    pub total_replicas: u32,
    pub total_gpus: u32,
    /// At base prices, with the reserve.
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_month: Option<f64>,
    /// Beyond the plan's budget (at base prices).
    #[serde_as(as = "Option<NonFinite>")]
    pub extra_usd_per_month: Option<f64>,
    pub extra_gpus: i64,
}

/// One capacity search: the smallest fleet meeting every check.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Which case ("expected", "high demand").
    pub case: String,
    pub candidate: String,
    /// The configuration searched ("H100 SXM x1, priority").
    pub configuration: String,
    pub status: SearchStatus,
    /// The smallest fleet meeting every check; absent when none within
    /// `max_replicas` does.
    pub found: Option<u32>,
    /// The outcome in words, e.g. "no fleet up to 512 replicas meets api:
    /// p99 sojourn <= 30 s; the best reaches 41 s (at 512 replicas, 5
    /// replications)".
    pub message: String,
    /// Where the two-stage estimate put the answer (the search's start;
    /// absent when the estimate finds no fleet).
    pub analytic_guess: Option<u32>,
    /// Smaller fleets fail the analytic bound and were not simulated.
    pub floor: u32,
    /// The largest fleet considered (below the plan's `max_replicas` when
    /// pruning capped it).
    pub max_replicas: u32,
    /// Every evaluation, in the order the search made them (one seed while
    /// bracketing, sequential replications while deciding).
    pub evaluations: Vec<Evaluation>,
    /// The decided evaluation at the answer (at `max_replicas` when none;
    /// the last one-seed evaluation, or none, when pruned).
    pub at_answer: Option<Evaluation>,
    /// Cost of the fleet of `at_answer`, with the reserve.
    pub cost: Option<CostSummary>,
    /// Simulations behind `evaluations` (each counted once; some may have
    /// been run first by another part of the plan).
    pub simulations: u64,
}

/// A fleet's cost and its attribution, averaged over replications.
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostSummary {
    pub basis: CostBasis,
    pub fleet: FleetCost,
    pub units: UnitCosts,
    /// 95% interval of the cost per success over replications.
    #[serde_as(as = "Option<[NonFinite; 2]>")]
    pub usd_per_success_ci95: Option<[f64; 2]>,
    pub replications: u32,
}

/// The plan itself.
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    pub candidate: String,
    /// The smallest fleet meeting every target.
    pub min_replicas: u32,
    /// The recommended steady fleet: at least `min_replicas`, and enough to
    /// run the base load at the service curve's operating point (below the
    /// knee and the SLA limit), as far as `max_replicas` allows.
    pub steady_replicas: u32,
    pub failure_reserve_replicas: u32,
    pub warm_idle_replicas: u32,
    pub total_replicas: u32,
    pub total_gpus: u32,
    /// Bound on each replica's waiting queue (engine.max_waiting): what a
    /// replica clears within the longest deadline at its goodput at the knee
    /// (at the curve's best goodput without a knee), and at least
    /// `observed_peak_queue_per_replica`. Absent without a service curve.
    pub admission_limit_per_replica: Option<u64>,
    /// The deepest waiting queue per replica seen on the steady fleet (over
    /// its replications).
    #[serde_as(as = "NonFinite")]
    pub observed_peak_queue_per_replica: f64,
    /// Scale up when the waiting queue per replica stays above this: what
    /// one replica clears, at its goodput at the operating point, within the
    /// tightest deadline (deeper, and that class starts to miss; at least
    /// 1), or the busy-but-normal depth when bursts routinely exceed that
    /// (see notes).
    #[serde_as(as = "Option<NonFinite>")]
    pub scale_up_queue_per_replica: Option<f64>,
    /// What a busy but normal queue looks like: the 99th percentile of the
    /// sampled waiting queue per replica at the operating point.
    #[serde_as(as = "Option<NonFinite>")]
    pub normal_queue_per_replica_p99: Option<f64>,
    /// Scale up when KV-cache utilization stays above this: its 99th
    /// percentile (of series samples) at the operating point.
    #[serde_as(as = "Option<NonFinite>")]
    pub scale_up_kv_utilization: Option<f64>,
    /// The saturation knee, the highest load meeting every target and the
    /// operating point, as multiples of the base load on `min_replicas`.
    #[serde_as(as = "Option<NonFinite>")]
    pub knee_load: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub sla_limit_load: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub operating_load: Option<f64>,
    /// How far below the knee the base load runs on the steady fleet
    /// (0.3 = 30% below), assuming per-replica load is what matters.
    #[serde_as(as = "Option<NonFinite>")]
    pub headroom_to_knee: Option<f64>,
    /// How far below the highest load meeting every target it runs.
    #[serde_as(as = "Option<NonFinite>")]
    pub headroom_to_sla_limit: Option<f64>,
    /// The steady fleet against every check (R replications).
    pub evaluation: Evaluation,
    /// P(miss), sojourn and TTFT percentiles of each class on the steady
    /// fleet, with their intervals over the replications.
    pub classes: Vec<ClassIntervals>,
    /// Steady plus reserve, with the attribution of its cost.
    pub budget: CostSummary,
    pub notes: Vec<String>,
}

/// One of the expected, low-demand and high-demand cases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// "base", "best" or "worst" (the plan section's names).
    pub name: String,
    /// What the case is: "expected demand", "low demand", "high demand".
    pub label: String,
    pub multipliers: Multipliers,
    /// The case re-planned: the search of the cheapest configuration that
    /// meets every target under it (its own fleet and cost; the last
    /// configuration tried when none does).
    pub search: SearchResult,
    /// The recommended steady fleet under this case.
    pub at_plan_fleet: Evaluation,
    pub classes_at_plan_fleet: Vec<ClassIntervals>,
    pub cost_at_plan_fleet: CostSummary,
}

/// Goodput and P(miss) against offered load for one fleet (each point the
/// mean over `service_curve.replications` seeds, by default the plan's
/// replications).
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServiceCurve {
    pub candidate: String,
    pub replicas: u32,
    /// The target the curve follows (each point's `target_mean` and `target_upper`).
    pub target: Option<CurveTarget>,
    pub points: Vec<CurvePoint>,
    /// The load (a multiple of the base load) where the first segment whose
    /// marginal goodput is below half its marginal load starts; absent when
    /// the curve never bends.
    #[serde_as(as = "Option<NonFinite>")]
    pub knee_load: Option<f64>,
    /// The highest load meeting every target, interpolated between the last
    /// point meeting them and the next; absent when every point does, the
    /// first load when none does.
    #[serde_as(as = "Option<NonFinite>")]
    pub sla_limit_load: Option<f64>,
    /// min(knee x (1 - headroom), SLA limit), of those the curve has; its
    /// last load when it has neither.
    #[serde_as(as = "NonFinite")]
    pub operating_load: f64,
    #[serde_as(as = "NonFinite")]
    pub headroom_fraction: f64,
    /// The most seeds of any point (see [`CurvePoint::replications`]).
    pub replications: u32,
}

#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Multiple of the base arrival rate.
    #[serde_as(as = "NonFinite")]
    pub load: f64,
    #[serde_as(as = "NonFinite")]
    pub offered_per_s: f64,
    #[serde_as(as = "NonFinite")]
    pub offered_per_replica_per_s: f64,
    /// Requests meeting their deadline per second.
    #[serde_as(as = "NonFinite")]
    pub goodput_per_s: f64,
    #[serde_as(as = "NonFinite")]
    pub p_miss: f64,
    pub meets: bool,
    #[serde(with = "nonfinite")]
    pub worst_ratio: f64,
    /// Seeds this point was decided on.
    #[serde(default)]
    pub replications: u32,
    #[serde_as(as = "NonFinite")]
    pub busy_fraction: f64,
    #[serde_as(as = "NonFinite")]
    pub p99_waiting_per_replica: f64,
    #[serde_as(as = "NonFinite")]
    pub p99_kv_utilization: f64,
    /// The curve's target here: its mean over the seeds (absent when it
    /// could not be evaluated) and its judged value (the upper 95% bound
    /// under `upper95`; infinite when it could not be evaluated); both
    /// absent without a target.
    #[serde_as(as = "Option<NonFinite>")]
    pub target_mean: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub target_upper: Option<f64>,
}

/// One-at-a-time sensitivity (the data behind a tornado chart).
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sensitivity {
    /// How to read it: each input moved on the plan's fixed fleet, and for
    /// the inputs with the largest impact, the fleet re-planned.
    pub reading: String,
    /// Prices, dates and the success criterion behind the cost columns.
    pub basis: CostBasis,
    /// The configuration (fixed fleet) it was measured on.
    pub candidate: String,
    pub replicas: u32,
    #[serde_as(as = "NonFinite")]
    pub delta: f64,
    pub replications: u32,
    #[serde_as(as = "NonFinite")]
    pub base_p_miss: f64,
    #[serde_as(as = "Option<NonFinite>")]
    pub base_usd_per_success: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub base_gpu_hours_per_success: Option<f64>,
    /// Sorted by impact, largest first (see [`SensitivityRow::impact`]),
    /// then by cost swing.
    pub rows: Vec<SensitivityRow>,
}

#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SensitivityRow {
    pub input: SensitivityInput,
    pub label: String,
    #[serde_as(as = "NonFinite")]
    pub low_multiplier: f64,
    #[serde_as(as = "NonFinite")]
    pub high_multiplier: f64,
    #[serde_as(as = "NonFinite")]
    pub p_miss_low: f64,
    #[serde_as(as = "NonFinite")]
    pub p_miss_high: f64,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_success_low: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_success_high: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub gpu_hours_per_success_low: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub gpu_hours_per_success_high: Option<f64>,
    /// Whether every check (targets and sustainability) holds at each end.
    pub meets_low: bool,
    pub meets_high: bool,
    /// The worst check's value / threshold at each end.
    #[serde(with = "nonfinite")]
    pub worst_ratio_low: f64,
    #[serde(with = "nonfinite")]
    pub worst_ratio_high: f64,
    /// |high - low| / base of USD per success, or of GPU-hours per success
    /// without a price (0 when neither can be computed).
    #[serde_as(as = "NonFinite")]
    pub cost_swing: f64,
    /// |high - low| of P(miss).
    #[serde_as(as = "NonFinite")]
    pub p_miss_swing: f64,
    /// The sort key: the largest of `cost_swing`, `p_miss_swing` relative
    /// to the base P(miss) (when the base has no misses, to the tightest miss
    /// target or 1%, whichever is smaller), and the swing of the worst
    /// check's ratio (ratios above 10 count as 10).
    #[serde_as(as = "NonFinite")]
    pub impact: f64,
    /// The fleet re-planned at each end (the chosen configuration's own
    /// capacity search), for the inputs with the largest impact: steady
    /// replicas and USD per month with the reserve (GPUs without a price).
    pub replanned_replicas_low: Option<u32>,
    pub replanned_replicas_high: Option<u32>,
    #[serde_as(as = "Option<NonFinite>")]
    pub replanned_usd_per_month_low: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub replanned_usd_per_month_high: Option<f64>,
}

/// The two-stage estimate beside the simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalyticComparison {
    pub replicas: u32,
    pub estimate: QueueEstimate,
    pub rows: Vec<ComparisonRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    pub class: String,
    pub metric: String,
    #[serde(with = "nonfinite")]
    pub analytic: f64,
    /// Mean over the replications.
    #[serde(with = "nonfinite")]
    pub simulated: f64,
    /// analytic - simulated (infinite when either is not finite).
    #[serde(with = "nonfinite")]
    pub difference: f64,
}

impl ComparisonRow {
    pub fn new(class: &str, metric: &str, analytic: f64, simulated: f64) -> ComparisonRow {
        let difference = if analytic.is_finite() && simulated.is_finite() {
            analytic - simulated
        } else {
            f64::INFINITY
        };
        ComparisonRow {
            class: class.to_string(),
            metric: metric.to_string(),
            analytic,
            simulated,
            difference,
        }
    }
}

/// A mean over replications and its 95% Student-t interval, cut at zero
/// (absent with one replication, or when a replication's value is not
/// finite: then the mean is infinite).
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    #[serde(with = "nonfinite")]
    pub mean: f64,
    #[serde_as(as = "Option<[NonFinite; 2]>")]
    pub ci95: Option<[f64; 2]>,
}

/// One class's outcome over replications (a percentile of a class without
/// requests counts as 0: no delay).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassIntervals {
    pub class: String,
    pub p_miss: Interval,
    pub sojourn_p50_s: Interval,
    pub sojourn_p99_s: Interval,
    pub ttft_p99_s: Interval,
}

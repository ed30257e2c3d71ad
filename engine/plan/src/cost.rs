//! The cost model: what a fleet costs over the measured window, and how that
//! cost is attributed to requests, successes, tokens, failed work and idle
//! time.
//!
//! # Formula
//! With R steady replicas, K reserve replicas, g GPUs per replica, price p
//! \[USD per GPU-hour\], a measured window of H hours and fixed costs F [USD
//! per month of 730 hours]:
//! - steady = R g p H; reserve = K g p H; fixed = F H / 730; total = sum;
//! - busy = (accelerator work of the measured requests \[replica-s\] / 3600) g p;
//!   idle = steady - busy (the reserve is idle by design and counted apart);
//! - per request = total / arrivals; per success = total / requests that met
//!   their deadline;
//! - the total is split between prompt and output tokens by their share of
//!   the work (prompt tokens x replica-s per prompt token at saturation,
//!   output tokens x replica-s per output token), then divided by each count;
//! - failed work = busy cost of requests that missed (late, rejected, timed
//!   out, unfinished); recomputation = busy cost of tokens computed again
//!   after a preemption (it overlaps failed work for requests that missed).

use crate::serde_float::NonFinite;
use serde::{Deserialize, Serialize};

use crate::evaluate::{ClassTotals, RunAggregates, mean_ci};
use crate::format::duration;
use crate::params::ScenarioParams;
use crate::params::plan::{PricingModel, PricingParams};
use crate::report::Report;
use crate::result::CostSummary;
use crate::runner::Runner;

/// Hours in a month for prorating monthly costs (the cloud convention).
pub const HOURS_PER_MONTH: f64 = 730.0;

/// What every cost figure depends on: it travels with the figure.
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostBasis {
    pub model: String,
    pub hardware: String,
    pub gpus_per_replica: u32,
    /// \[USD per GPU-hour\] after the case's price multiplier; absent when no
    /// price was given.
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_gpu_hour: Option<f64>,
    pub pricing_model: PricingModel,
    #[serde_as(as = "NonFinite")]
    pub fixed_usd_per_month: f64,
    pub price_date: String,
    pub provider_region: String,
    /// What counts as a successful request.
    pub success_criterion: String,
}

impl CostBasis {
    /// One line naming everything the cost depends on.
    pub fn label(&self) -> String {
        let price = match self.usd_per_gpu_hour {
            Some(p) => format!("${p:.2}/GPU-h"),
            None => "no price given".to_string(),
        };
        let or_unknown = |s: &str| {
            if s.trim().is_empty() {
                "unknown".to_string()
            } else {
                s.to_string()
            }
        };
        format!(
            "{} on {} x{} at {price} ({}, {}, priced {}); success = {}",
            self.model,
            self.hardware,
            self.gpus_per_replica,
            self.pricing_model.label(),
            or_unknown(&self.provider_region),
            or_unknown(&self.price_date),
            self.success_criterion
        )
    }
}

/// A fleet's cost over the measured window.
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetCost {
    pub steady_replicas: u32,
    pub reserve_replicas: u32,
    pub gpus: u32,
    #[serde_as(as = "NonFinite")]
    pub window_h: f64,
    #[serde_as(as = "NonFinite")]
    pub gpu_hours_steady: f64,
    #[serde_as(as = "NonFinite")]
    pub gpu_hours_reserve: f64,
    /// USD figures are absent without a price.
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_steady: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_reserve: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_fixed: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_total: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_hour: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_month: Option<f64>,
}

impl FleetCost {
    pub fn new(basis: &CostBasis, steady: u32, reserve: u32, window_h: f64) -> FleetCost {
        let g = basis.gpus_per_replica as f64;
        let gpu_hours_steady = steady as f64 * g * window_h;
        let gpu_hours_reserve = reserve as f64 * g * window_h;
        let price = basis.usd_per_gpu_hour;
        let fixed_per_hour = basis.fixed_usd_per_month / HOURS_PER_MONTH;
        let per_hour = price.map(|p| (steady + reserve) as f64 * g * p + fixed_per_hour);
        FleetCost {
            steady_replicas: steady,
            reserve_replicas: reserve,
            gpus: (steady + reserve) * basis.gpus_per_replica,
            window_h,
            gpu_hours_steady,
            gpu_hours_reserve,
            usd_steady: price.map(|p| gpu_hours_steady * p),
            usd_reserve: price.map(|p| gpu_hours_reserve * p),
            usd_fixed: price.map(|_| fixed_per_hour * window_h),
            usd_total: per_hour.map(|h| h * window_h),
            usd_per_hour: per_hour,
            usd_per_month: per_hour.map(|h| h * HOURS_PER_MONTH),
        }
    }
}

/// The work one run measured, for attribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkTotals {
    pub arrived: u64,
    pub met: u64,
    /// Prompt tokens computed (cache hits excluded, recomputation included).
    pub prompt_tokens: u64,
    /// Output tokens of completed requests.
    pub output_tokens: u64,
    /// Accelerator work of the measured requests \[replica-s\].
    pub busy_s: f64,
    pub busy_s_missed: f64,
    pub busy_s_recomputed: f64,
    /// Replica-seconds per prompt token and per output token at saturation.
    pub prefill_s_per_token: f64,
    pub decode_s_per_token: f64,
}

impl WorkTotals {
    /// The work `totals` measured, with the replica-seconds per token that
    /// split its cost between prompt and output tokens.
    pub fn of(
        totals: &ClassTotals,
        prefill_s_per_token: f64,
        decode_s_per_token: f64,
    ) -> WorkTotals {
        WorkTotals {
            arrived: totals.arrived,
            met: totals.met,
            prompt_tokens: totals.prefill_tokens,
            output_tokens: totals.output_tokens,
            busy_s: totals.busy_s,
            busy_s_missed: totals.busy_s_missed,
            busy_s_recomputed: totals.busy_s_recomputed,
            prefill_s_per_token,
            decode_s_per_token,
        }
    }
}

/// The fleet's cost attributed to what it did (USD; absent without a price,
/// or when there is nothing to divide by).
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnitCosts {
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_request: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_success: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_million_prompt_tokens: Option<f64>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_million_output_tokens: Option<f64>,
    /// Busy cost of requests that missed.
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_failed_work: Option<f64>,
    /// Busy cost of tokens recomputed after preemption.
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_recomputation: Option<f64>,
    /// Steady fleet time not spent on requests (the reserve is apart).
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_idle: Option<f64>,
    /// GPU-hours per successful request (needs no price).
    #[serde_as(as = "Option<NonFinite>")]
    pub gpu_hours_per_success: Option<f64>,
}

/// Attributes `fleet`'s cost to the work of one run.
pub fn attribute(basis: &CostBasis, fleet: &FleetCost, work: &WorkTotals) -> UnitCosts {
    let divide = |x: Option<f64>, by: f64| x.filter(|_| by > 0.0).map(|x| x / by);
    let total = fleet.usd_total;
    let busy_usd = |replica_s: f64| {
        basis
            .usd_per_gpu_hour
            .map(|p| replica_s / 3600.0 * basis.gpus_per_replica as f64 * p)
    };
    let prompt_work = work.prompt_tokens as f64 * work.prefill_s_per_token;
    let output_work = work.output_tokens as f64 * work.decode_s_per_token;
    let prompt_share = if prompt_work + output_work > 0.0 {
        prompt_work / (prompt_work + output_work)
    } else {
        0.5
    };
    let gpu_hours = fleet.gpu_hours_steady + fleet.gpu_hours_reserve;
    UnitCosts {
        usd_per_request: divide(total, work.arrived as f64),
        usd_per_success: divide(total, work.met as f64),
        usd_per_million_prompt_tokens: divide(
            total.map(|t| t * prompt_share * 1e6),
            work.prompt_tokens as f64,
        ),
        usd_per_million_output_tokens: divide(
            total.map(|t| t * (1.0 - prompt_share) * 1e6),
            work.output_tokens as f64,
        ),
        usd_failed_work: busy_usd(work.busy_s_missed),
        usd_recomputation: busy_usd(work.busy_s_recomputed),
        usd_idle: fleet
            .usd_steady
            .zip(busy_usd(work.busy_s))
            .map(|(steady, busy)| (steady - busy).max(0.0)),
        gpu_hours_per_success: (work.met > 0).then(|| gpu_hours / work.met as f64),
    }
}

/// The cost of `replicas` steady plus `reserve` replicas over the measured
/// window of `runs` (replications of one case on that fleet), attributed
/// run by run and averaged; a figure is absent when any run lacks it.
pub fn summarize(
    basis: CostBasis,
    runs: &[&RunAggregates],
    replicas: u32,
    reserve: u32,
) -> CostSummary {
    let window_h = runs.first().map_or(0.0, |r| r.window_s / 3600.0);
    let fleet = FleetCost::new(&basis, replicas, reserve, window_h);
    let per_run: Vec<UnitCosts> = runs
        .iter()
        .map(|r| {
            let work = WorkTotals::of(&r.overall, r.prefill_s_per_token, r.decode_s_per_token);
            attribute(&basis, &fleet, &work)
        })
        .collect();
    let average = |f: &dyn Fn(&UnitCosts) -> Option<f64>| -> Option<f64> {
        let values: Option<Vec<f64>> = per_run.iter().map(f).collect();
        values
            .filter(|v| !v.is_empty())
            .map(|v| v.iter().sum::<f64>() / v.len() as f64)
    };
    let units = UnitCosts {
        usd_per_request: average(&|u| u.usd_per_request),
        usd_per_success: average(&|u| u.usd_per_success),
        usd_per_million_prompt_tokens: average(&|u| u.usd_per_million_prompt_tokens),
        usd_per_million_output_tokens: average(&|u| u.usd_per_million_output_tokens),
        usd_failed_work: average(&|u| u.usd_failed_work),
        usd_recomputation: average(&|u| u.usd_recomputation),
        usd_idle: average(&|u| u.usd_idle),
        gpu_hours_per_success: average(&|u| u.gpu_hours_per_success),
    };
    let per_success: Option<Vec<f64>> = per_run.iter().map(|u| u.usd_per_success).collect();
    let usd_per_success_ci95 = per_success.and_then(|v| mean_ci(&v).1);
    CostSummary {
        basis,
        fleet,
        units,
        usd_per_success_ci95,
        replications: runs.len() as u32,
    }
}

/// What counts as a successful request, in words: it travels with every cost
/// figure. "a request succeeds when it completes within its class deadline
/// (batch: 24 h; api: 60 s)".
pub fn success_criterion(params: &ScenarioParams) -> String {
    let deadlines: Vec<String> = params
        .classes
        .iter()
        .map(|c| format!("{}: {}", c.name, duration(c.deadline_s)))
        .collect();
    format!(
        "a request succeeds when it completes within its class deadline ({})",
        deadlines.join("; ")
    )
}

/// The cost basis of a scenario's configured hardware and prices.
pub fn cost_basis(params: &ScenarioParams) -> CostBasis {
    let pricing = &params.plan.pricing;
    CostBasis {
        model: params.model.name.clone(),
        hardware: params.hardware.name.clone(),
        gpus_per_replica: params.replica.gpus_per_replica,
        usd_per_gpu_hour: pricing.usd_per_gpu_hour,
        pricing_model: pricing.pricing_model,
        fixed_usd_per_month: pricing.fixed_usd_per_month,
        price_date: pricing.price_date.clone(),
        provider_region: pricing.provider_region.clone(),
        success_criterion: success_criterion(params),
    }
}

/// `params` with every price neutral: no price per GPU-hour (the
/// configured hardware's or a candidate's), no fixed cost, no price labels,
/// on-demand pricing and unscaled case prices. Prices change what a run
/// costs, never what it simulates.
fn unpriced(params: &ScenarioParams) -> ScenarioParams {
    let mut out = params.clone();
    out.plan.pricing = PricingParams::default();
    out.plan.best.price = 1.0;
    out.plan.worst.price = 1.0;
    for candidate in out.plan.candidates.iter_mut().flatten() {
        candidate.usd_per_gpu_hour = None;
        candidate.pricing_model = None;
    }
    out
}

/// Whether `a` and `b` differ in their prices alone (the price per
/// GPU-hour, fixed costs, the pricing model, the price date and region, a
/// candidate's price, the cases' price multipliers): then they simulate the
/// same runs, and a change from one to the other needs new costs
/// ([`report_cost`], [`PlanSession::reusing`](crate::PlanSession::reusing)),
/// never a new simulation.
pub fn same_but_prices(a: &ScenarioParams, b: &ScenarioParams) -> bool {
    unpriced(a) == unpriced(b)
}

/// The cost of one run of the configured fleet, with its basis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportCost {
    pub basis: CostBasis,
    pub fleet: FleetCost,
    pub units: UnitCosts,
}

/// Costs `report`, a run of `params`' fleet: steady replicas as simulated
/// plus the scenario's reserve, over the measured window. It reads the
/// report's totals only (never its records), so a report from a JSON
/// summary re-costs at new prices exactly as a fresh run of the same
/// scenario and seed would cost (see [`same_but_prices`]).
pub fn report_cost(report: &Report, params: &ScenarioParams) -> ReportCost {
    let basis = cost_basis(params);
    let reserve = &params.plan.reserve;
    let window_h = (report.horizon_s - report.warmup_s) / 3600.0;
    let fleet = FleetCost::new(
        &basis,
        report.replicas,
        reserve.failure_reserve_replicas + reserve.warm_idle_replicas,
        window_h,
    );
    let work = WorkTotals::of(
        &ClassTotals::of(&report.overall),
        report.load.prefill_s_per_token,
        report.load.decode_s_per_token,
    );
    let units = attribute(&basis, &fleet, &work);
    ReportCost {
        basis,
        fleet,
        units,
    }
}

/// What a pass prices with: a case's cost basis and its fleets' costs.
impl Runner<'_> {
    /// The cost basis of `case`, its prices multiplied by `price_factor`.
    pub fn basis_at_price(&self, case: usize, price_factor: f64) -> CostBasis {
        let candidate = self.candidate_of(case);
        // The candidate's own GPU price, scaled like every case's prices.
        let pricing = PricingParams {
            usd_per_gpu_hour: candidate.usd_per_gpu_hour,
            ..self.base.params().plan.pricing.clone()
        }
        .scaled(price_factor);
        CostBasis {
            model: self.base.params().model.name.clone(),
            hardware: candidate.params.hardware.name.clone(),
            gpus_per_replica: candidate.params.replica.gpus_per_replica,
            usd_per_gpu_hour: pricing.usd_per_gpu_hour,
            pricing_model: candidate.pricing_model,
            fixed_usd_per_month: pricing.fixed_usd_per_month,
            price_date: pricing.price_date.clone(),
            provider_region: pricing.provider_region.clone(),
            success_criterion: success_criterion(self.base.params()),
        }
    }

    /// The cost basis of `case` at its own price.
    pub fn basis(&self, case: usize) -> CostBasis {
        self.basis_at_price(case, self.state.cases[case].multipliers.price)
    }

    /// Cost of `case` on `replicas` steady replicas plus the reserve, at
    /// its own price, from replications 0..count (which must have run).
    pub fn cost_summary(&self, case: usize, replicas: u32, count: u32) -> CostSummary {
        summarize(
            self.basis(case),
            &self.runs(case, replicas, count),
            replicas,
            self.reserve_replicas(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basis(price: Option<f64>) -> CostBasis {
        CostBasis {
            model: "m".into(),
            hardware: "h".into(),
            gpus_per_replica: 2,
            usd_per_gpu_hour: price,
            pricing_model: PricingModel::OnDemand,
            fixed_usd_per_month: 730.0,
            price_date: "2025-01-01".into(),
            provider_region: "test".into(),
            success_criterion: "met".into(),
        }
    }

    #[test]
    fn fleet_cost_by_hand() {
        // 3 steady + 1 reserve replicas of 2 GPUs at $2/GPU-h for 24 h:
        // steady 3 x 2 x 2 x 24 = 288, reserve 1 x 2 x 2 x 24 = 96,
        // fixed $730/month = $1/h -> 24; total 408, $17/h.
        let f = FleetCost::new(&basis(Some(2.0)), 3, 1, 24.0);
        assert_eq!(f.gpus, 8);
        assert_eq!(f.gpu_hours_steady, 144.0);
        assert_eq!(f.usd_steady, Some(288.0));
        assert_eq!(f.usd_reserve, Some(96.0));
        assert_eq!(f.usd_fixed, Some(24.0));
        assert_eq!(f.usd_total, Some(408.0));
        assert_eq!(f.usd_per_hour, Some(17.0));
        assert_eq!(f.usd_per_month, Some(17.0 * 730.0));
    }

    #[test]
    fn attribution_by_hand() {
        let b = basis(Some(2.0));
        let f = FleetCost::new(&b, 3, 1, 24.0);
        let work = WorkTotals {
            arrived: 1000,
            met: 800,
            prompt_tokens: 1_000_000,
            output_tokens: 100_000,
            // 36 replica-hours of work: busy cost 36 x 2 GPUs x $2 = $144.
            busy_s: 36.0 * 3600.0,
            busy_s_missed: 3600.0,
            busy_s_recomputed: 1800.0,
            // Prompt work 1e6 x 1e-4 = 100 s, output 1e5 x 3e-3 = 300 s:
            // a quarter of the cost goes to prompt tokens.
            prefill_s_per_token: 1e-4,
            decode_s_per_token: 3e-3,
        };
        let u = attribute(&b, &f, &work);
        assert_eq!(u.usd_per_request, Some(0.408));
        assert_eq!(u.usd_per_success, Some(0.51));
        assert_eq!(u.usd_per_million_prompt_tokens, Some(102.0));
        assert_eq!(u.usd_per_million_output_tokens, Some(3060.0));
        assert_eq!(u.usd_failed_work, Some(4.0));
        assert_eq!(u.usd_recomputation, Some(2.0));
        assert_eq!(u.usd_idle, Some(288.0 - 144.0));
        assert_eq!(u.gpu_hours_per_success, Some(192.0 / 800.0));
    }

    #[test]
    fn without_a_price_only_gpu_hours_are_given() {
        let b = basis(None);
        let f = FleetCost::new(&b, 3, 0, 24.0);
        assert_eq!(f.usd_total, None);
        let u = attribute(
            &b,
            &f,
            &WorkTotals {
                arrived: 10,
                met: 0,
                prompt_tokens: 0,
                output_tokens: 0,
                busy_s: 0.0,
                busy_s_missed: 0.0,
                busy_s_recomputed: 0.0,
                prefill_s_per_token: 0.0,
                decode_s_per_token: 0.0,
            },
        );
        assert_eq!(
            u,
            UnitCosts::default(),
            "no price and no successes: nothing to give"
        );
        assert!(b.label().contains("no price given"));
    }
}

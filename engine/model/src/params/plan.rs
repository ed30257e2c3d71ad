//! The plan section of a scenario: prices, reserve, SLA targets, candidate
//! hardware, best and worst cases, sensitivity and replication settings.
//!
//! Like the rest of [`ScenarioParams`] it is permissive serde input;
//! `check_plan` validates it once, inside [`Scenario::try_from`](crate::model::Scenario::try_from), so
//! the planner never re-checks. Every field has a default: files written
//! before the planner existed keep decoding.

use serde::{Deserialize, Serialize};

pub use crate::params::search::{DISCIPLINES, SearchParams, Setting, TPOT_TOKEN_BUDGET};
use crate::params::{HardwareParams, ScenarioParams, StepTimeParams, presets};

/// The miss probability every class must stay under when no target is listed.
pub const DEFAULT_EPSILON: f64 = 0.01;

/// Everything the planner needs beyond the scenario itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlanParams {
    /// What the configured hardware costs, and the labels every cost carries.
    pub pricing: PricingParams,
    /// Capacity held back from steady demand.
    pub reserve: ReserveParams,
    /// SLA targets: the fleet must meet all of them. Empty: every class must
    /// meet its deadline with P(miss) <= [`DEFAULT_EPSILON`] (checked by the
    /// planner, not at validation, so that any scenario can still be run).
    pub targets: Vec<TargetParams>,
    /// Hardware and parallelism options to compare. Absent: the configured
    /// hardware alone, at `pricing`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Vec<CandidateParams>>,
    /// The engine and cluster settings the planner may change beyond
    /// replicas and candidates.
    pub search: SearchParams,
    /// The optimistic case, as multipliers on the base.
    pub best: Multipliers,
    /// The pessimistic case, as multipliers on the base.
    pub worst: Multipliers,
    pub sensitivity: SensitivityParams,
    pub service_curve: ServiceCurveParams,
    /// Most independent seeds R per evaluated fleet (replication r uses the
    /// scenario seed + r): an evaluation starts with `min_replications` and
    /// adds seeds only while a target is uncertain (its 95% interval
    /// straddles the threshold), up to this many.
    pub replications: u32,
    /// Seeds every decided evaluation starts with (at least 2, so that an
    /// interval between replications exists).
    pub min_replications: u32,
    /// Largest fleet the capacity search considers \[replicas\].
    pub max_replicas: u32,
    /// Most of the fleet's capacity the offered work may take: the measured
    /// window's arrivals' work at a saturated replica's speed (plus the
    /// recomputation measured, where that speed does not count it) /
    /// (replicas x measured window). At 1 a day's
    /// work just fits in a day; above it queues grow from one day to the
    /// next, whatever a one-day run shows. (The name is kept for saved
    /// scenarios; it is not the busy fraction, see
    /// `plan::evaluate::CheckMetric::OfferedLoad`.)
    pub max_busy_fraction: f64,
    /// How replications decide whether a target is met.
    pub decision: DecisionRule,
}

/// How the pricing was agreed; the fleet is static, so the model labels the
/// price rather than changing the arithmetic (enter the effective rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PricingModel {
    OnDemand,
    /// Reserved or committed-use: paid whether used or not.
    Reserved,
    /// Interruptible capacity: cheaper, and can be reclaimed at short notice.
    Spot,
}

impl PricingModel {
    pub fn label(self) -> &'static str {
        match self {
            PricingModel::OnDemand => "on-demand",
            PricingModel::Reserved => "reserved",
            PricingModel::Spot => "spot",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PricingParams {
    /// Price of one accelerator for one hour \[USD\]. Absent: costs are not
    /// computed (GPU-hours still are).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd_per_gpu_hour: Option<f64>,
    pub pricing_model: PricingModel,
    /// Fixed costs (storage, network, operations) \[USD per month of 730 h\],
    /// prorated over the horizon.
    pub fixed_usd_per_month: f64,
    /// When the price was read, e.g. "2025-09-01".
    pub price_date: String,
    /// Where the price applies, e.g. "AWS us-east-1, p5 on-demand".
    pub provider_region: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReserveParams {
    /// N + k: replicas kept to absorb k failures \[replicas\].
    pub failure_reserve_replicas: u32,
    /// Warm idle replicas for bursts and rollouts \[replicas\].
    pub warm_idle_replicas: u32,
}

/// One SLA target. `class` names the request class it applies to; absent, it
/// applies to every class separately.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "metric", rename_all = "snake_case", deny_unknown_fields)]
pub enum TargetParams {
    /// P(S > class deadline) <= epsilon.
    MissProbability {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<String>,
        epsilon: f64,
    },
    /// The `percentile` quantile of the sojourn time <= `bound_s`.
    SojournPercentile {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<String>,
        percentile: f64,
        bound_s: f64,
    },
    /// The `percentile` quantile of the time to first token <= `bound_s`.
    TtftPercentile {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<String>,
        percentile: f64,
        bound_s: f64,
    },
    /// The `percentile` quantile of the time per output token <= `bound_s`.
    TpotPercentile {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<String>,
        percentile: f64,
        bound_s: f64,
    },
}

/// What a target measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetMetric {
    MissProbability,
    Sojourn,
    Ttft,
    Tpot,
}

impl TargetParams {
    /// P(miss) <= `epsilon` for the class named `class`.
    pub fn miss_probability(class: &str, epsilon: f64) -> TargetParams {
        TargetParams::MissProbability {
            class: Some(class.to_string()),
            epsilon,
        }
    }

    /// The targets a plan uses: those listed, or the default.
    pub fn effective(listed: &[TargetParams]) -> Vec<TargetParams> {
        if listed.is_empty() {
            vec![TargetParams::MissProbability {
                class: None,
                epsilon: DEFAULT_EPSILON,
            }]
        } else {
            listed.to_vec()
        }
    }

    pub fn class(&self) -> Option<&str> {
        match self {
            TargetParams::MissProbability { class, .. }
            | TargetParams::SojournPercentile { class, .. }
            | TargetParams::TtftPercentile { class, .. }
            | TargetParams::TpotPercentile { class, .. } => class.as_deref(),
        }
    }

    pub fn metric(&self) -> TargetMetric {
        match self {
            TargetParams::MissProbability { .. } => TargetMetric::MissProbability,
            TargetParams::SojournPercentile { .. } => TargetMetric::Sojourn,
            TargetParams::TtftPercentile { .. } => TargetMetric::Ttft,
            TargetParams::TpotPercentile { .. } => TargetMetric::Tpot,
        }
    }

    /// (percentile, bound \[s\]) of a percentile target.
    pub fn percentile_bound(&self) -> Option<(f64, f64)> {
        self.clone().percentile_bound_mut().map(|(p, b)| (*p, *b))
    }

    /// The percentile and bound \[s\] of a percentile target, to edit.
    pub fn percentile_bound_mut(&mut self) -> Option<(&mut f64, &mut f64)> {
        match self {
            TargetParams::MissProbability { .. } => None,
            TargetParams::SojournPercentile {
                percentile,
                bound_s,
                ..
            }
            | TargetParams::TtftPercentile {
                percentile,
                bound_s,
                ..
            }
            | TargetParams::TpotPercentile {
                percentile,
                bound_s,
                ..
            } => Some((percentile, bound_s)),
        }
    }
}

/// One hardware and parallelism option for the fleet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CandidateParams {
    pub name: String,
    /// An accelerator preset id (e.g. "h100-sxm"). Give this or `hardware`;
    /// neither means the configured hardware.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardware_preset: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardware: Option<HardwareParams>,
    /// GPUs per replica (tensor-parallel degree).
    pub gpus_per_replica: u32,
    /// \[USD per accelerator-hour\]; absent: `pricing.usd_per_gpu_hour`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd_per_gpu_hour: Option<f64>,
    /// Absent: `pricing.pricing_model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pricing_model: Option<PricingModel>,
    /// A step-time model measured for this option; absent: the scenario's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_time: Option<StepTimeParams>,
}

/// Multipliers that turn the base scenario into another case. 1 everywhere is
/// the base.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Multipliers {
    /// On every class's batch rate.
    pub arrival_rate: f64,
    /// On batch sizes of batch classes (those whose batch size is not the
    /// constant 1 of a plain Poisson stream).
    pub batch_size: f64,
    pub input_tokens: f64,
    pub output_tokens: f64,
    /// On every class's prefix-cache hit rate (capped at 1).
    pub prefix_cache_hit: f64,
    /// On every accelerator price and the fixed costs.
    pub price: f64,
    /// On every step time (calibration error of the step-time model).
    pub step_time: f64,
}

impl Default for Multipliers {
    fn default() -> Self {
        Multipliers::BASE
    }
}

impl Multipliers {
    /// No change.
    pub const BASE: Multipliers = Multipliers {
        arrival_rate: 1.0,
        batch_size: 1.0,
        input_tokens: 1.0,
        output_tokens: 1.0,
        prefix_cache_hit: 1.0,
        price: 1.0,
        step_time: 1.0,
    };

    /// The value for one input.
    pub fn get(&self, input: SensitivityInput) -> f64 {
        match input {
            SensitivityInput::ArrivalRate => self.arrival_rate,
            SensitivityInput::BatchSize => self.batch_size,
            SensitivityInput::InputTokens => self.input_tokens,
            SensitivityInput::OutputTokens => self.output_tokens,
            SensitivityInput::PrefixCacheHit => self.prefix_cache_hit,
            SensitivityInput::Price => self.price,
            SensitivityInput::StepTime => self.step_time,
        }
    }

    /// These multipliers with one input set to `value`.
    pub fn with(mut self, input: SensitivityInput, value: f64) -> Multipliers {
        *match input {
            SensitivityInput::ArrivalRate => &mut self.arrival_rate,
            SensitivityInput::BatchSize => &mut self.batch_size,
            SensitivityInput::InputTokens => &mut self.input_tokens,
            SensitivityInput::OutputTokens => &mut self.output_tokens,
            SensitivityInput::PrefixCacheHit => &mut self.prefix_cache_hit,
            SensitivityInput::Price => &mut self.price,
            SensitivityInput::StepTime => &mut self.step_time,
        } = value;
        self
    }

    /// Whether these multipliers change the simulated system (price alone does not).
    pub fn same_system_as(&self, other: &Multipliers) -> bool {
        Multipliers {
            price: 1.0,
            ..*self
        } == Multipliers {
            price: 1.0,
            ..*other
        }
    }

    /// The scenario parameters of this case: `params` with every multiplier
    /// but price applied. The plan section is dropped (a case is simulated,
    /// not planned).
    pub fn apply(&self, params: &ScenarioParams) -> ScenarioParams {
        let mut out = ScenarioParams {
            plan: PlanParams::default(),
            ..params.clone()
        };
        for class in &mut out.classes {
            class.batches_per_hour *= self.arrival_rate;
            let poisson = class.batch_size == crate::params::DistParams::constant(1.0);
            if self.batch_size != 1.0 && !poisson {
                class.batch_size = class.batch_size.scaled(self.batch_size);
            }
            if self.input_tokens != 1.0 {
                class.input_tokens = class.input_tokens.scaled(self.input_tokens);
            }
            if self.output_tokens != 1.0 {
                class.output_tokens = class.output_tokens.scaled(self.output_tokens);
            }
            if let Some(lengths) = &mut class.lengths {
                *lengths = lengths.scaled(self.input_tokens, self.output_tokens);
            }
            class.prefix_cache_hit = (class.prefix_cache_hit * self.prefix_cache_hit).min(1.0);
        }
        out.step_time_scale *= self.step_time;
        out
    }
}

/// An input the sensitivity analysis varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SensitivityInput {
    ArrivalRate,
    BatchSize,
    InputTokens,
    OutputTokens,
    PrefixCacheHit,
    Price,
    StepTime,
}

impl SensitivityInput {
    pub const ALL: [SensitivityInput; 7] = [
        SensitivityInput::ArrivalRate,
        SensitivityInput::BatchSize,
        SensitivityInput::InputTokens,
        SensitivityInput::OutputTokens,
        SensitivityInput::PrefixCacheHit,
        SensitivityInput::Price,
        SensitivityInput::StepTime,
    ];

    /// A label for tables and charts.
    pub fn label(self) -> &'static str {
        match self {
            SensitivityInput::ArrivalRate => "arrival rate",
            SensitivityInput::BatchSize => "batch size",
            SensitivityInput::InputTokens => "input tokens",
            SensitivityInput::OutputTokens => "output tokens",
            SensitivityInput::PrefixCacheHit => "prefix cache hit rate",
            SensitivityInput::Price => "price",
            SensitivityInput::StepTime => "step time",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SensitivityParams {
    /// Each input is multiplied by 1 - delta and 1 + delta in turn.
    pub delta: f64,
    /// The inputs to vary; empty skips the analysis.
    pub inputs: Vec<SensitivityInput>,
    /// Seeds per point (the same seeds at every point: common random
    /// numbers, so each end is paired with the base and the other end; one
    /// by default, as the swings are compared, not judged against targets).
    pub replications: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServiceCurveParams {
    /// Offered load as multiples of the base arrival rate; empty skips the curve.
    pub load_multipliers: Vec<f64>,
    /// Keep the recommended operating point this fraction below the knee.
    pub headroom_fraction: f64,
    /// Seeds per point; absent: each point is decided as the capacity search
    /// decides a fleet (`min_replications` seeds, doubled while a target is
    /// uncertain, up to `replications`), so that the curve agrees with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replications: Option<u32>,
}

/// How replications decide whether a target is met.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionRule {
    /// The mean over replications meets the target (kept for scenarios
    /// written with it; it decides on a point estimate).
    Mean,
    /// The upper end of the 95% confidence interval meets it, and its lower
    /// end decides a failure; between the two the target is uncertain (the
    /// default).
    Upper95,
}

impl Default for PlanParams {
    fn default() -> Self {
        PlanParams {
            pricing: PricingParams::default(),
            reserve: ReserveParams::default(),
            targets: Vec::new(),
            candidates: None,
            best: Multipliers {
                arrival_rate: 0.8,
                batch_size: 0.8,
                input_tokens: 0.9,
                output_tokens: 0.9,
                prefix_cache_hit: 1.2,
                price: 0.9,
                step_time: 0.95,
            },
            worst: Multipliers {
                arrival_rate: 1.3,
                batch_size: 1.5,
                input_tokens: 1.2,
                output_tokens: 1.2,
                prefix_cache_hit: 0.7,
                price: 1.2,
                step_time: 1.1,
            },
            sensitivity: SensitivityParams::default(),
            service_curve: ServiceCurveParams::default(),
            search: SearchParams::default(),
            replications: 5,
            min_replications: 2,
            max_replicas: 512,
            max_busy_fraction: 1.0,
            decision: DecisionRule::Upper95,
        }
    }
}

impl PricingParams {
    /// These prices as a case with price multiplier `factor` pays them: the
    /// GPU-hour price and the fixed monthly cost multiplied by it, the
    /// pricing model, date and provider unchanged. The one rule by which
    /// the planner and the page price best and worst cases.
    pub fn scaled(&self, factor: f64) -> PricingParams {
        PricingParams {
            usd_per_gpu_hour: self.usd_per_gpu_hour.map(|p| p * factor),
            fixed_usd_per_month: self.fixed_usd_per_month * factor,
            ..self.clone()
        }
    }
}

impl Default for PricingParams {
    fn default() -> Self {
        PricingParams {
            usd_per_gpu_hour: None,
            pricing_model: PricingModel::OnDemand,
            fixed_usd_per_month: 0.0,
            price_date: String::new(),
            provider_region: String::new(),
        }
    }
}

impl Default for ReserveParams {
    fn default() -> Self {
        ReserveParams {
            failure_reserve_replicas: 1,
            warm_idle_replicas: 0,
        }
    }
}

impl Default for CandidateParams {
    fn default() -> Self {
        CandidateParams {
            name: String::new(),
            hardware_preset: None,
            hardware: None,
            gpus_per_replica: 1,
            usd_per_gpu_hour: None,
            pricing_model: None,
            step_time: None,
        }
    }
}

impl Default for SensitivityParams {
    fn default() -> Self {
        SensitivityParams {
            delta: 0.2,
            inputs: SensitivityInput::ALL.to_vec(),
            replications: 1,
        }
    }
}

impl Default for ServiceCurveParams {
    fn default() -> Self {
        ServiceCurveParams {
            load_multipliers: vec![0.5, 1.0, 1.5, 2.0, 3.0],
            headroom_fraction: 0.2,
            replications: None,
        }
    }
}

/// A candidate resolved into what the planner simulates and prices.
#[derive(Clone, Debug)]
pub struct ResolvedCandidate {
    pub name: String,
    /// The base scenario's parameters with this candidate's hardware,
    /// parallelism and step-time model (and no plan section).
    pub params: ScenarioParams,
    pub usd_per_gpu_hour: Option<f64>,
    pub pricing_model: PricingModel,
}

/// The candidates of a plan: the listed ones, or the configured hardware.
/// Presets are known and the parameters valid once the scenario is.
pub fn resolve_candidates(params: &ScenarioParams) -> Vec<ResolvedCandidate> {
    let plan = &params.plan;
    let base = ScenarioParams {
        plan: PlanParams::default(),
        ..params.clone()
    };
    let Some(candidates) = &plan.candidates else {
        return vec![ResolvedCandidate {
            name: format!(
                "{} x{}",
                params.hardware.name, params.replica.gpus_per_replica
            ),
            params: base,
            usd_per_gpu_hour: plan.pricing.usd_per_gpu_hour,
            pricing_model: plan.pricing.pricing_model,
        }];
    };
    candidates
        .iter()
        .map(|c| {
            let mut p = base.clone();
            if let Some(h) = &c.hardware {
                p.hardware = h.clone();
            } else if let Some(h) = c.hardware_preset.as_deref().and_then(presets::hardware) {
                // The configured hardware when it is this preset (perhaps as
                // an earlier catalog gave it): the configured fleet is one.
                p.hardware = if presets::is_hardware_preset(&h, &params.hardware) {
                    params.hardware.clone()
                } else {
                    h
                };
            }
            p.replica.gpus_per_replica = c.gpus_per_replica;
            if let Some(step_time) = &c.step_time {
                p.step_time = step_time.clone();
            }
            let name = if c.name.trim().is_empty() {
                format!("{} x{}", p.hardware.name, c.gpus_per_replica)
            } else {
                c.name.clone()
            };
            ResolvedCandidate {
                name,
                params: p,
                usd_per_gpu_hour: c.usd_per_gpu_hour.or(plan.pricing.usd_per_gpu_hour),
                pricing_model: c.pricing_model.unwrap_or(plan.pricing.pricing_model),
            }
        })
        .collect()
}

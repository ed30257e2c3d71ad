//! Sojourn's engine: scenario model, workload sampling, step-time models,
//! the cluster simulator (a fast event-skipping engine and a reference
//! stepper that is its oracle) and the capacity planner.
//!
//! No IO, no clock, no web dependency: the same code runs natively and in
//! wasm32 and gives bit-identical numbers for the same scenario and seed.
//!
//! ```
//! use sojourn_engine::{RunOptions, Scenario, ScenarioParams, simulate};
//! let mut params = ScenarioParams::default();
//! params.run.horizon_s = 600.0;
//! let scenario = Scenario::try_from(params).expect("valid scenario");
//! let report = simulate(&scenario, &RunOptions::default()).expect("runs");
//! assert!(report.overall.arrived > 0);
//! ```

// The layers, each depending only on those before it (checked by
// `scripts/check-layers`): the foundations (error, rng, samplers, stats, serde_float),
// then params -> model -> sim -> report -> plan. `bench` sits on top.
pub mod bench;
pub mod error;
pub mod model;
pub mod params;
pub mod plan;
pub mod report;
pub mod rng;
pub mod samplers;
pub mod serde_float;
pub mod sim;
pub mod stats;

pub use error::{FieldError, ScenarioError};
pub use model::analytic::{LoadEstimate, load_estimate};
pub use model::{Dist, DistSummary, Fit, MemoryBudget, Scenario, StepShape, StepTimeModel};
pub use params::plan::{
    CandidateParams, DecisionRule, Multipliers, PlanParams, PricingModel, PricingParams,
    ReserveParams, SensitivityInput, SensitivityParams, ServiceCurveParams, TargetParams,
};
pub use params::{
    ClassParams, ClusterParams, Discipline, DistParams, Dtype, EngineParams, FORMAT_VERSION,
    HardwareParams, ModelParams, ReplicaParams, Router, RunParams, ScenarioParams, Shape,
    StepTimeParams, presets, scenario_params_from_json,
};
pub use plan::{
    PlanError, PlanOptions, PlanProgress, PlanResult, PlanSession, PlanStep, plan,
    plan_with_progress,
};
pub use report::{ClassStats, Quantiles, Report, simulate};
pub use sim::{
    EngineKind, Progress, RequestRecord, RunError, RunOptions, RunOutput, SeriesPoint, Simulation,
    Status,
};

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

pub mod analytic;
pub mod bench;
pub mod dist;
pub mod error;
pub mod memory;
pub mod parse;
pub mod plan;
pub mod presets;
pub mod report;
pub mod rng;
pub(crate) mod samplers;
pub mod scenario;
pub mod serde_float;
pub mod sim;
pub mod stats;
pub mod step_time;
pub mod workload;

pub use analytic::{LoadEstimate, load_estimate};
pub use dist::{Dist, DistParams, DistSummary, Shape};
pub use error::{FieldError, ScenarioError};
pub use memory::{Fit, MemoryBudget};
pub use parse::scenario_params_from_json;
pub use plan::params::{
    CandidateParams, DecisionRule, Multipliers, PlanParams, PricingModel, PricingParams,
    ReserveParams, SensitivityInput, SensitivityParams, ServiceCurveParams, TargetParams,
};
pub use plan::{
    PlanError, PlanOptions, PlanProgress, PlanResult, PlanSession, PlanStep, plan,
    plan_with_progress,
};
pub use report::{ClassStats, Quantiles, Report, SeriesPoint};
pub use scenario::{
    ClassParams, ClusterParams, Discipline, Dtype, EngineParams, FORMAT_VERSION, HardwareParams,
    ModelParams, ReplicaParams, Router, RunParams, Scenario, ScenarioParams,
};
pub use sim::{
    EngineKind, Progress, RequestRecord, RunError, RunOptions, Simulation, Status, simulate,
};
pub use step_time::{StepShape, StepTimeModel, StepTimeParams};

//! Layer 2, the validated model: a [`Scenario`] built once from a
//! [`ScenarioParams`](crate::params::ScenarioParams), with its distributions ready to sample, the
//! replica's memory budget, the step-time model, the plan section's checks,
//! and closed-form estimates over it (`analytic`).
//!
//! Depends only on `params` and the foundations (`error`, `rng`, `stats`,
//! `serde_float`); the simulator, the report and the planner build on it.

pub mod analytic;
pub mod class;
pub mod dist;
pub mod load;
pub mod memory;
pub mod plan_checks;
pub mod scenario;
pub mod sections;
pub mod service;
pub mod step_time;
pub mod targets;

pub use class::Class;
pub use dist::{Dist, DistSummary};
pub use load::Load;
pub use memory::{Fit, MemoryBudget, WeightBytes};
pub use scenario::Scenario;
pub use step_time::{StepShape, StepTimeModel};
pub use targets::Target;

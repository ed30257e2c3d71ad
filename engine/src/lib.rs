//! Sojourn's engine: scenario model, workload sampling, step-time models,
//! the cluster simulator (a fast event-skipping engine and a reference
//! stepper that is its oracle) and the capacity planner.
//!
//! No IO, no clock, no web dependency: the same code runs natively and in
//! wasm32 and gives bit-identical numbers for the same scenario and seed.
//!
//! ```
//! use sojourn_engine::{RunOptions, Scenario, ScenarioParams, simulate};
//! let mut params = ScenarioParams::overnight_batch();
//! params.run.horizon_s = 600.0;
//! let scenario = Scenario::try_from(params).expect("valid scenario");
//! let report = simulate(&scenario, &RunOptions::default()).expect("runs");
//! assert!(report.overall.arrived > 0);
//! ```

// The layers are crates, each using only those before it (Cargo enforces
// the order): `sojourn-model` (the foundations, params, model), then
// `sojourn-sim` (sim, report), `sojourn-plan`, `sojourn-present`,
// `sojourn-calibration`. This crate is their public face and the `sojourn`
// CLI: the `pub use` lists below are the whole public API, and
// `unnameable_types` fails the build if a public item's type is reachable
// but missing from them. `bench` sits on top.
#![deny(unnameable_types)]

mod bench;

pub use sojourn_calibration as calibration;
use sojourn_model::{error, format, model, params, serde_float};
use sojourn_plan as plan;
use sojourn_present as present;
use sojourn_sim::{report, sim};

// Input: the permissive serde types, presets and the JSON entry point.
pub use params::plan::{
    CandidateParams, DEFAULT_EPSILON, DISCIPLINES, DecisionRule, Multipliers, PlanParams,
    PricingModel, PricingParams, ReserveParams, ResolvedCandidate, SearchParams, SensitivityInput,
    SensitivityParams, ServiceCurveParams, Setting, TPOT_TOKEN_BUDGET, TargetMetric, TargetParams,
    resolve_candidates,
};
pub use params::trace::{
    MAX_TRACE_ROWS, TraceRequest, TracedRequest, fit_classes as fit_trace_classes, parse_trace_csv,
    replay_classes as replay_trace_classes,
};
pub use params::{
    ClassParams, ClusterParams, CudaGraphs, Discipline, DistParams, Dtype, EngineParams,
    FORMAT_VERSION, HardwareParams, Interconnect, InterconnectParams, LoadParams, MlaParams,
    ModelParams, MoeParams, OperationsParams, ReplicaParams, Router, RunParams, ScenarioParams,
    Schedule, Shape, SlidingWindowParams, StepTimeParams, presets, scenario_params_from_json,
};
pub use params::{CsvError, LengthsParams, lengths_from_csv};

// Errors, each naming its field.
pub use error::{FieldError, ScenarioError};

// Limits on one scenario and one plan (each refused with a field message).
pub use model::dist::MAX_COUNT;
pub use model::load::MAX_CLIENTS;
pub use model::plan_checks::{
    MAX_CANDIDATES, MAX_CONFIGURATIONS, MAX_CURVE_POINTS, MAX_REPLICATIONS, MAX_TARGETS,
};
pub use model::sections::{MAX_CLASSES, MAX_REPLICA_SAMPLES, MAX_REPLICAS, MAX_SERIES_POINTS};
pub use params::MAX_HORIZON_S;

// The validated model and its closed forms.
pub use model::analytic::{
    ClassEstimate, LoadEstimate, QueueEstimate, QueueModel, StageEstimate, load_estimate,
};
pub use model::dist::{CorrelatedLogNormals, JointLengths, PairTable, preview_lengths};
pub use model::step_time::{DecodePiece, Efficiencies, Family, Operations, Roofline, Table};
pub use model::{
    Class, Dist, DistSummary, Fit, Load, MemoryBudget, Scenario, StepShape, StepTimeModel,
    WeightBytes,
};

// The simulator and its report.
pub use report::{
    BatchStats, ClassStats, EngineStats, KvUse, Quantiles, Report, StepFigure, StepSpread, simulate,
};
pub use sim::saturation::load_estimate as report_load_estimate;
pub use sim::{
    BYTES_PER_REPLICA, BYTES_PER_REQUEST, DEFAULT_MAX_WORK, EngineKind, Progress, RequestRecord,
    RunError, RunOptions, RunOutput, SeriesPoint, Simulation, Status, StepCounters,
    VISITS_PER_WORK, WORK_PER_REQUEST, run_bytes_estimate,
};

// The planner.
pub use plan::ShareOver;
pub use plan::cost::{CostBasis, FleetCost, ReportCost, UnitCosts, report_cost, same_but_prices};
pub use plan::evaluate::{CheckMetric, Evaluation, TargetCheck};
pub use plan::space::{discipline_label, discipline_short, router_label};
pub use plan::{
    AnalyticComparison, BindingTarget, Cause, ClassIntervals, ClassShare, ComparisonRow,
    ConfigurationResult, ConfiguredFleet, CostSummary, Cover, CurvePoint, CurveTarget, Diagnosis,
    ExploredPoint, Interval, JobOutput, Lever, LeverKind, MAX_PLAN_REQUESTS, PlanError, PlanJob,
    PlanOptions, PlanPoll, PlanProgress, PlanResult, PlanSession, Recommendation, RunKey,
    ScenarioResult, SearchDimension, SearchEffort, SearchResult, SearchStatus, Sensitivity,
    SensitivityRow, ServiceCurve, Verdict, capacity_searches, check_budget, plan,
    plan_with_progress, resolve_threads, run_batch,
};

// How results read, for the page and the CLI: number formats, the run
// summary the web worker sends, tables with CSV and text, the cases.
pub use format::{
    MISSING, counted, format_count, format_duration_s, format_gib, format_multiple, format_number,
    format_or_missing, format_percent, format_percent_interval, format_percent_whole, format_usd,
};
pub use present::batch_tables::{
    StepTimePart, batch_lines, batch_table, kv_use_table, kv_use_words, step_time_parts,
    step_time_table,
};
pub use present::cases::{Case, decision_label};
pub use present::levers::levers_table;
pub use present::plan_tables::{
    analytic_table, cases_table, checks_table, class_intervals_table, configurations_table,
    curve_table, explored_table, recommendation_details, sensitivity_table,
};
pub use present::run_tables::{
    budget_table, cdf_table, class_table, cost_table, records_csv, series_table,
};
pub use present::summary::RunSummary;
pub use present::table::{Cell, CellValue, Column, DataTable, UnknownColumn};
pub use present::text::{plan_text, run_text};
pub use present::verdict::{
    COMPARED_CONFIGURATIONS, alternatives_cost_table, cases_budget_table, decision_rule_short,
    frontier_cost_table, plan_budget_table, plan_unit_costs_table, verdict_counts, verdict_table,
};

// Benchmarks shared by the CLI's `bench` command and the performance log.
pub use bench::{large as bench_large, plan as bench_plan, small as bench_small};

// Serde helpers for non-finite floats (JSON has no NaN or infinity).
pub use serde_float::{NonFinite, nonfinite, nonfinite_pair};

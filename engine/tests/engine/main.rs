//! Engine integration tests: one binary, one module per feature.

// Expected values here may use the platform's maths: only the engine's own
// numbers must be bit-identical across platforms.
#![allow(clippy::disallowed_methods)]
// A test crate: its helpers (outside `#[test]` functions, where clippy's
// allow-*-in-tests do not reach) state what they expect with unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod analytic;
mod batches;
mod budgets;
mod calibration;
mod closed_forms;
mod configured;
mod cuts;
mod files;
mod generator;
mod invariants;
mod levers;
mod oracle;
mod planner;
mod provisional;
mod recost;
mod reproducers;
mod robustness;
mod rounds;
mod saturation;
mod search_space;
mod shipped_scenarios;
mod support;
mod verdict;

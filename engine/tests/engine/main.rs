//! Engine integration tests: one binary, one module per feature.

// Expected values here may use the platform's maths: only the engine's own
// numbers must be bit-identical across platforms.
#![allow(clippy::disallowed_methods)]

mod budgets;
mod closed_forms;
mod invariants;
mod oracle;
mod planner;
mod robustness;
mod support;

//! Sojourn's second layer: the cluster simulator (`sim`: the fast
//! event-skipping engine and the reference stepper that is its oracle) and
//! the report a run's output is summarised into (`report`).
//!
//! It uses only `sojourn-model` below it (Cargo enforces the order). `pub`
//! here means "for the layers above": the product's public API is the list
//! in `sojourn-engine`'s `lib.rs`.

// A layer's module docs name their private neighbours: the engine's
// developers read them (the product's API docs are `sojourn-engine`'s).
#![allow(rustdoc::private_intra_doc_links)]

// The layer below, under the paths its modules have always used.
use sojourn_model::{format, model, params, rng, samplers, serde_float, stats};

pub mod report;
pub mod sim;

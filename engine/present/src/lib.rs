//! How results read, on the page and in the CLI alike: number formats
//! (in the foundation module `crate::format`, which the planner's messages
//! use too), the summary of a run the web worker sends ([`summary`]),
//! tables with their CSV and plain text ([`table`], [`run_tables`],
//! [`batch_tables`], [`plan_tables`], the levers against the binding
//! target [`levers`]), and the cases and decision rule in words ([`cases`]).
//!
//! A layer on top of `plan` (it names reports, costs and plans) and below
//! `bench`. Like the rest of the engine it does no IO: it builds strings,
//! and the page or the CLI puts them where they go.

// A layer's module docs name their private neighbours: the engine's
// developers read them (the product's API docs are `sojourn-engine`'s).
#![allow(rustdoc::private_intra_doc_links)]

// The layers below, under the paths their modules have always used (Cargo
// lets this crate name nothing above it).
use sojourn_model::{format, model, params};
use sojourn_plan as plan;
use sojourn_sim::{report, sim};

pub mod batch_tables;
pub mod cases;
pub mod levers;
pub mod plan_tables;
pub mod run_tables;
pub mod summary;
pub mod table;
pub mod text;
pub mod verdict;

#[cfg(test)]
mod tests;

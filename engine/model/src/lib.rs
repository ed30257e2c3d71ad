//! Sojourn's first layer: the foundations (errors naming their field,
//! number formats, the seeded generator, the samplers, statistics, serde
//! helpers for non-finite floats), the permissive input parameters with
//! their presets, and the validated scenario model built from them
//! (distributions, load, step-time models, memory, closed forms).
//!
//! Every crate above this one may use it; it uses none of them (Cargo
//! enforces the order). `pub` here means "for the layers above": the
//! product's public API is the list in `sojourn-engine`'s `lib.rs`.

// A layer's module docs name their private neighbours: the engine's
// developers read them (the product's API docs are `sojourn-engine`'s).
#![allow(rustdoc::private_intra_doc_links)]

pub mod error;
pub mod format;
pub mod model;
pub mod params;
pub mod rng;
pub mod samplers;
pub mod serde_float;
pub mod stats;

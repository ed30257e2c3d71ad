//! Sojourn's web app: a thin Leptos shell around [`sojourn_engine`].
//!
//! Components live in [`app`] (the page) and [`panels`] (one module per
//! panel). What they compute lives in plain modules that build and test
//! natively: [`link`] (share links), [`job`] (the worker protocol),
//! [`results`] (the page's figures; the tables, their CSV and every
//! number's format are the engine's, shared with the CLI), [`charts`] (SVG
//! charts), [`form`] (reading inputs) and [`format`](mod@format) (numbers).
//! Simulations run in a Web Worker ([`worker`], driven by
//! [`worker_client`]), never on the page's thread.

#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod app;
pub mod browser;
pub mod charts;
pub mod form;
pub mod format;
pub mod help;
pub mod job;
pub mod link;
pub mod panels;
pub mod provenance;
pub mod registry;
pub mod results;
pub mod state;
pub mod tables;
pub mod words;
pub mod worker;
pub mod worker_client;

pub use app::App;

//! The page's panels, one module each.

pub mod fields;
pub mod workload;
pub mod model;
pub mod serving;
pub mod plan;
pub mod toolbar;
pub mod results;

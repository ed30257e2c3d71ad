//! The page's panels, one module each.

pub mod fields;
pub mod model;
pub mod plan;
pub mod results;
pub mod serving;
pub mod toolbar;
pub mod workload;

//! The layer check of Sojourn's two crates (`scripts/check-layers` runs
//! it): which top-level module uses which ([`paths`]), judged against each
//! crate's layers ([`layers`]). Cargo enforces the boundaries between
//! crates; this checks the ones inside a crate.

pub mod layers;
pub mod paths;

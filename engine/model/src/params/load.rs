//! A class's load mode as written: how many requests it sends and when
//! (validated by `model::load`; docs/engine.md, Workload).

use serde::{Deserialize, Serialize};

use crate::params::DistParams;
use crate::params::trace::TracedRequest;

/// A class's load mode. Every mode but `open` sends a number of requests
/// that the horizon does not set (docs/engine.md, Workload).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LoadParams {
    /// Batches arrive at `batches_per_hour` over [0, horizon).
    #[default]
    Open,
    /// Exactly `requests` requests, in batches arriving at
    /// `batches_per_hour` (the last batch cut short), however long that
    /// takes.
    FixedCount { requests: u32 },
    /// Exactly `requests` requests, all at time 0 (offline benchmarks).
    Offline { requests: u32 },
    /// `clients` clients, each sending its next request when its previous
    /// one returns (completes, is rejected or times out) plus a think time:
    /// over the horizon, or until `requests` have been sent in all.
    ClosedLoop {
        clients: u32,
        /// Think time between a return and the next send \[ms\]; none
        /// when absent (a distribution's draws are at least 1 ms).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        think_ms: Option<DistParams>,
        /// Requests sent in all; absent, the clients send until the horizon.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requests: Option<u32>,
    },
    /// A trace's requests, replayed exactly: each sent at its arrival time
    /// with its lengths (`params::trace`).
    Trace { requests: Vec<TracedRequest> },
}

impl LoadParams {
    /// The default: an open stream over the horizon.
    pub fn is_open(&self) -> bool {
        *self == LoadParams::Open
    }

    /// Whether the class sends a fixed number of requests (the horizon does
    /// not bound its sends).
    pub fn is_counted(&self) -> bool {
        !matches!(
            self,
            LoadParams::Open | LoadParams::ClosedLoop { requests: None, .. }
        )
    }
}

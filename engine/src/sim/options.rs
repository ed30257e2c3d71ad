//! What a run is told and how it may be refused: [`RunOptions`] (the
//! engine and the caps), [`RunError`], and the memory estimate checked
//! against the caps before a run starts.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::scenario::{MAX_REPLICA_SAMPLES, MAX_SERIES_POINTS, Scenario};
use crate::serde_float::NonFinite;
use crate::sim::state::Active;
use crate::sim::{RequestRecord, SeriesPoint};

/// Limits that keep a runaway scenario bounded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// Which replica engine to use.
    pub engine: EngineKind,
    /// Stop with an error beyond this many requests.
    pub max_requests: u64,
    /// Stop with an error beyond this many engine events (a skipped run of
    /// decode steps or one general step each).
    pub max_events: u64,
    /// Keep every per-request record in the report (the planner drops them
    /// to save memory when it only needs aggregates).
    pub keep_records: bool,
    /// Refuse a run whose memory estimate ([`run_bytes_estimate`])
    /// is above this many bytes, before it starts.
    pub max_bytes: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            engine: EngineKind::Fast,
            max_requests: DEFAULT_MAX_REQUESTS,
            max_events: DEFAULT_MAX_EVENTS,
            keep_records: true,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Default cap on simulated requests per run.
pub const DEFAULT_MAX_REQUESTS: u64 = 20_000_000;
/// Default cap on engine events per run.
pub const DEFAULT_MAX_EVENTS: u64 = 200_000_000;
/// Default memory budget of a run: 1 GiB, which a browser's Web Worker
/// (wasm32, 4 GiB of address space at most) holds with room to spare.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// Event skipping: exact, fast.
    Fast,
    /// One step at a time: the oracle.
    Reference,
}

/// Why a run stopped without a report.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum RunError {
    /// The scenario expects more requests than the cap allows.
    TooManyRequests { expected: f64, cap: u64 },
    /// The run hit the event cap.
    TooManyEvents { cap: u64, simulated_s: f64 },
    /// The run's memory estimate is over the budget.
    TooMuchMemory {
        #[serde_as(as = "NonFinite")]
        estimated_bytes: f64,
        #[serde_as(as = "NonFinite")]
        expected_requests: f64,
        cap_bytes: u64,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::TooManyRequests { expected, cap } => write!(
                f,
                "the scenario would simulate about {expected:.0} requests, more than the cap of {cap}; \
                 shorten the horizon or lower the arrival rates (or a load mode's requests or clients)"
            ),
            RunError::TooManyEvents { cap, simulated_s } => write!(
                f,
                "stopped after {cap} engine events at {:.1} h of simulated time; \
                 the scenario is too large to simulate here (shorten the horizon, lower the rates or add replicas)",
                simulated_s / 3600.0
            ),
            RunError::TooMuchMemory {
                estimated_bytes,
                expected_requests,
                cap_bytes,
            } => write!(
                f,
                "the scenario would need about {:.0} MB of memory for its {expected_requests:.0} expected requests, \
                 more than the budget of {:.0} MB per run; shorten the horizon (run.horizon_s) or lower the arrival rates (or a load mode's requests or clients)",
                estimated_bytes / 1e6,
                *cap_bytes as f64 / 1e6
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// Memory a run holds per request \[bytes\]: its record, its state while it
/// waits or runs (every request may be waiting at once), and the report's
/// per-request samples (sojourn, time to first token, time per output token).
pub const BYTES_PER_REQUEST: f64 = (std::mem::size_of::<RequestRecord>()
    + std::mem::size_of::<Active>()
    + 3 * std::mem::size_of::<f64>()) as f64;

/// Memory a run of `scenario` needs at most, roughly \[bytes\]: every
/// request expected (plus five standard deviations) at
/// [`BYTES_PER_REQUEST`], and the series. Checked against the run's budget
/// before it starts ([`RunOptions::max_bytes`]).
pub fn run_bytes_estimate(scenario: &Scenario) -> f64 {
    let requests = scenario.expected_requests() + 5.0 * scenario.requests_sd();
    let points = max_series_points(scenario.params().cluster.replicas as usize);
    requests * BYTES_PER_REQUEST + (points * std::mem::size_of::<SeriesPoint>()) as f64
}

/// Refuses, before it starts, a run whose expected requests or memory
/// estimate are over `options`' caps.
pub fn check_run_budget(scenario: &Scenario, options: &RunOptions) -> Result<(), RunError> {
    let expected = scenario.expected_requests();
    if expected > options.max_requests as f64 {
        return Err(RunError::TooManyRequests {
            expected,
            cap: options.max_requests,
        });
    }
    let estimated_bytes = run_bytes_estimate(scenario);
    if estimated_bytes > options.max_bytes as f64 {
        return Err(RunError::TooMuchMemory {
            estimated_bytes,
            expected_requests: expected,
            cap_bytes: options.max_bytes,
        });
    }
    Ok(())
}

/// The most series points a run of `replicas` replicas takes.
pub(crate) fn max_series_points(replicas: usize) -> usize {
    (MAX_SERIES_POINTS as u64).min(MAX_REPLICA_SAMPLES / replicas.max(1) as u64) as usize
}

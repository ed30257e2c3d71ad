//! What a run is told and how it may be refused: [`RunOptions`] (the
//! engine and the caps), [`RunError`], and the memory estimate checked
//! against the caps before a run starts.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::format::format_count;
use crate::model::Load;
use crate::model::scenario::Scenario;
use crate::model::sections::{MAX_REPLICA_SAMPLES, MAX_SERIES_POINTS};
use crate::params::Router;
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
    /// Stop with an error beyond this much work, in units of about one
    /// engine event (a skipped run of decode steps or one general step):
    /// see [`DEFAULT_MAX_WORK`].
    pub max_work: u64,
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
            max_work: DEFAULT_MAX_WORK,
            keep_records: true,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Default cap on simulated requests per run.
pub const DEFAULT_MAX_REQUESTS: u64 = 20_000_000;
/// Default budget of work per run, in units of about one engine event: a
/// run stops with [`RunError::TooMuchWork`] past it. A unit took 0.2 to
/// 0.42 us natively on the development machine (2 cores, load 3 to 4; the
/// slowest inputs of issue 39's fuzz campaign, docs/reliability.md: 20
/// million units took 7 to 8 s), so 15 million keep a native run to about
/// 6 s there. A day of 1.2 million requests on 8 replicas routed by
/// shortest queue (`sojourn bench`) takes 8.4 million (0.115 us each).
pub const DEFAULT_MAX_WORK: u64 = 15_000_000;
/// Work units per request sent: drawing it, routing it, its record and its
/// share of the report (`sojourn bench`'s day spends about as much time on
/// its 1.2 million requests as on its 3.7 million events).
pub const WORK_PER_REQUEST: u64 = 2;
/// Replica visits per work unit: join-shortest-queue and least-KV routing,
/// series samples and the drain bring every replica up to a time and look
/// at it (10 to 80 ns a visit natively here: 4,096 replicas and 60,000
/// requests of load-aware routing took 3.4 s and 7.4 s on a loaded 2-core
/// machine; 512 replicas' 152 million visits about 11 s).
pub const VISITS_PER_WORK: u64 = 4;
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
    /// The scenario expects more requests than the cap allows (or sent
    /// them: `expected` is then the count so far). `advice` names the
    /// class that sends the most and the fields that set its count.
    TooManyRequests {
        #[serde_as(as = "NonFinite")]
        expected: f64,
        cap: u64,
        advice: String,
    },
    /// The run did more work than its budget ([`RunOptions::max_work`])
    /// and was stopped. `advice` names what to change, as for too many
    /// requests.
    TooMuchWork {
        cap: u64,
        simulated_s: f64,
        advice: String,
    },
    /// Routing by load (join-shortest-queue, least KV) looks at every
    /// replica for every request: the looks expected would take more than
    /// the work budget ([`RunOptions::max_work`], [`VISITS_PER_WORK`]
    /// looks a unit).
    TooMuchRouting {
        #[serde_as(as = "NonFinite")]
        expected_requests: f64,
        replicas: u32,
        #[serde_as(as = "NonFinite")]
        looks: f64,
        cap: f64,
        advice: String,
    },
    /// The run's memory estimate is over the budget.
    TooMuchMemory {
        #[serde_as(as = "NonFinite")]
        estimated_bytes: f64,
        #[serde_as(as = "NonFinite")]
        expected_requests: f64,
        cap_bytes: u64,
        advice: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::TooManyRequests {
                expected,
                cap,
                advice,
            } => write!(
                f,
                "the scenario would simulate about {expected:.0} requests, more than the cap of {cap}; {advice}"
            ),
            RunError::TooMuchWork {
                cap,
                simulated_s,
                advice,
            } => write!(
                f,
                "stopped at {:.1} h of simulated time, past the budget of {} units of work a run \
                 (engine events, requests and replica visits; a few seconds' computing): \
                 the scenario is too large to simulate here; {advice}",
                simulated_s / 3600.0,
                format_count(*cap)
            ),
            RunError::TooMuchRouting {
                expected_requests,
                replicas,
                looks,
                cap,
                advice,
            } => write!(
                f,
                "routing each of its about {expected_requests:.0} requests by load looks at all {replicas} replicas: \
                 about {} looks, more than the work budget's {} a run; \
                 route round-robin (cluster.router) or use fewer replicas (cluster.replicas); {advice}",
                format_count(*looks as u64),
                format_count(*cap as u64)
            ),
            RunError::TooMuchMemory {
                estimated_bytes,
                expected_requests,
                cap_bytes,
                advice,
            } => write!(
                f,
                "the scenario would need about {:.0} MB of memory for its {expected_requests:.0} expected requests, \
                 more than the budget of {:.0} MB per run; {advice}",
                estimated_bytes / 1e6,
                *cap_bytes as f64 / 1e6
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// Memory a run holds per request at the most \[bytes\]: its record, and its
/// state while it waits or runs, three times over: every request may be
/// waiting at once, and a waiting queue that grows holds its old storage
/// and the doubled new one while it moves them (in wasm32 the allocator
/// cannot always grow a block in place). The report's per-request samples
/// come after the states are freed and take less. Measured against the use
/// by `engine/tests/memory` (a counting allocator): an offline class
/// holding every request in one queue comes closest.
pub const BYTES_PER_REQUEST: f64 =
    (std::mem::size_of::<RequestRecord>() + 3 * std::mem::size_of::<Active>()) as f64;

/// Memory a replica holds whatever its load \[bytes\]: its decode-due ring
/// (4,096 slots), its block pool, queues and counters. Measured by
/// `engine/tests/memory`: 4,096 replicas held about 35 KB each beside their
/// requests; this leaves a third more.
pub const BYTES_PER_REPLICA: f64 = 48.0 * 1024.0;

/// Memory a run of `scenario` needs at most, roughly \[bytes\]: every
/// request expected (plus five standard deviations) at
/// [`BYTES_PER_REQUEST`], every replica at [`BYTES_PER_REPLICA`], and the
/// series. Checked against the run's budget
/// before it starts ([`RunOptions::max_bytes`]).
pub fn run_bytes_estimate(scenario: &Scenario) -> f64 {
    let requests = scenario.expected_requests() + 5.0 * scenario.requests_sd();
    let replicas = scenario.params().cluster.replicas;
    let points = max_series_points(replicas as usize);
    requests * BYTES_PER_REQUEST
        + f64::from(replicas) * BYTES_PER_REPLICA
        + (points * std::mem::size_of::<SeriesPoint>()) as f64
}

/// Refuses, before it starts, a run whose expected requests or memory
/// estimate are over `options`' caps.
pub fn check_run_budget(scenario: &Scenario, options: &RunOptions) -> Result<(), RunError> {
    let expected = scenario.expected_requests();
    if expected.is_nan() || expected > options.max_requests as f64 {
        return Err(RunError::TooManyRequests {
            expected,
            cap: options.max_requests,
            advice: fewer_requests(scenario),
        });
    }
    let replicas = scenario.params().cluster.replicas;
    let looks = match scenario.params().cluster.router {
        Router::RoundRobin => 0.0,
        Router::JoinShortestQueue | Router::LeastKvLoad => expected * replicas as f64,
    };
    let max_looks = options.max_work as f64 * VISITS_PER_WORK as f64;
    if looks.is_nan() || looks > max_looks {
        return Err(RunError::TooMuchRouting {
            expected_requests: expected,
            replicas,
            looks,
            cap: max_looks,
            advice: fewer_requests(scenario),
        });
    }
    let estimated_bytes = run_bytes_estimate(scenario);
    if estimated_bytes.is_nan() || estimated_bytes > options.max_bytes as f64 {
        return Err(RunError::TooMuchMemory {
            estimated_bytes,
            expected_requests: expected,
            cap_bytes: options.max_bytes,
            advice: fewer_requests(scenario),
        });
    }
    Ok(())
}

/// What to change for fewer requests: the class expected to send the most,
/// and the fields that set its count.
pub fn fewer_requests(scenario: &Scenario) -> String {
    let most = (0..scenario.classes().len())
        .map(|i| (i, scenario.class_requests(i)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let Some((i, requests)) = most else {
        return "shorten the horizon (run.horizon_s)".to_string();
    };
    let class = &scenario.classes()[i];
    let name = &scenario.params().classes[i].name;
    let fields = match &class.load {
        Load::Open => format!("lower classes[{i}].batches_per_hour or shorten run.horizon_s"),
        Load::FixedCount { .. } | Load::Offline { .. } => {
            format!("lower classes[{i}].load.requests")
        }
        Load::ClosedLoop {
            requests: Some(_), ..
        } => format!("lower classes[{i}].load.requests"),
        Load::ClosedLoop { requests: None, .. } => format!(
            "each of its clients sends again as soon as its request returns{} (plus a think time of classes[{i}].load.think_ms): \
             lower classes[{i}].load.clients, lengthen the think time, set a total (classes[{i}].load.requests) or shorten run.horizon_s",
            match (scenario.refusals_possible(), class.timeout_s) {
                (true, _) => " or is refused",
                (false, Some(_)) => " or times out",
                (false, None) => "",
            }
        ),
        Load::Trace { .. } => format!("replay fewer requests (classes[{i}].load.requests)"),
    };
    format!("class \"{name}\" sends about {requests:.0} of them: {fields}")
}

/// The most series points a run of `replicas` replicas takes.
pub fn max_series_points(replicas: usize) -> usize {
    (MAX_SERIES_POINTS as u64).min(MAX_REPLICA_SAMPLES / replicas.max(1) as u64) as usize
}

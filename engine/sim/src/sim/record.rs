//! What the simulator records: each request's [`RequestRecord`] and how it
//! left ([`Status`]), the fleet's [`SeriesPoint`]s, and the [`RunOutput`]
//! a finished run hands to the report.

use serde::{Deserialize, Serialize};

use crate::model::scenario::Scenario;
use crate::serde_float::{NonFinite, nonfinite};
use crate::sim::batch::StepCounters;
use crate::sim::workload::RequestSpec;

/// How a request left the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Still in the system (or not yet arrived); never in a finished report.
    Pending,
    Completed,
    /// Refused on arrival: the replica's waiting queue was full.
    RejectedQueueFull,
    /// Refused on arrival: prompt + output cannot fit in the KV cache or
    /// exceed `max_model_len`.
    RejectedTooLong,
    /// The client's timeout passed first.
    TimedOut,
    /// Still queued or running when the simulation ended.
    Unfinished,
}

/// Everything recorded about one request. Times are absolute simulated
/// seconds; NaN where the event never happened.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestRecord {
    pub class: u16,
    /// Replica it was routed to (`u16::MAX` if rejected before routing).
    pub replica: u16,
    pub input_tokens: u32,
    pub cached_tokens: u32,
    pub output_tokens: u32,
    pub preemptions: u32,
    #[serde_as(as = "NonFinite")]
    pub arrival_s: f64,
    /// First scheduled (start of its first step).
    #[serde_as(as = "NonFinite")]
    pub admitted_s: f64,
    /// End of the step that produced its first output token.
    #[serde_as(as = "NonFinite")]
    pub first_token_s: f64,
    /// Completion, rejection or abandonment.
    #[serde_as(as = "NonFinite")]
    pub end_s: f64,
    /// Replica-seconds attributed to it: each step's duration split in
    /// proportion to the tokens each request computed in it.
    #[serde_as(as = "NonFinite")]
    pub busy_s: f64,
    /// Tokens computed and then discarded by preemptions.
    pub recomputed_tokens: u64,
    pub status: Status,
}

impl RequestRecord {
    /// The record of a request as it arrives, before it is routed.
    #[inline]
    pub fn arriving(spec: &RequestSpec) -> RequestRecord {
        RequestRecord {
            class: spec.class,
            replica: u16::MAX,
            input_tokens: spec.input_tokens,
            cached_tokens: spec.cached_tokens,
            output_tokens: spec.output_tokens,
            preemptions: 0,
            arrival_s: spec.arrival_s,
            admitted_s: f64::NAN,
            first_token_s: f64::NAN,
            end_s: f64::NAN,
            busy_s: 0.0,
            recomputed_tokens: 0,
            status: Status::Pending,
        }
    }

    pub fn sojourn_s(&self) -> f64 {
        self.end_s - self.arrival_s
    }
}

/// A figure absent from a series written before it existed.
fn nan() -> f64 {
    f64::NAN
}

/// The fleet's state at one instant, and the flows over the interval that
/// ends there.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    #[serde_as(as = "NonFinite")]
    pub t_s: f64,
    pub waiting: u64,
    pub running: u64,
    /// Fraction of all KV blocks in use.
    #[serde_as(as = "NonFinite")]
    pub kv_utilization: f64,
    /// The largest fraction of its KV blocks one replica held in a step
    /// starting in the interval ending at `t_s` (NaN in a series written
    /// before it existed).
    #[serde(default = "nan", with = "nonfinite")]
    pub kv_peak_utilization: f64,
    pub replicas: u32,
    /// Arrivals in the interval ending at `t_s`.
    pub arrivals: u64,
    /// Completions in the interval ending at `t_s`.
    pub completions: u64,
}

/// What a finished run hands to the report: every request's record, the
/// time series and the engine's counters (`crate::Report::build` turns it
/// into statistics; the simulator never names the report).
#[derive(Debug)]
pub struct RunOutput<'s> {
    pub scenario: &'s Scenario,
    pub records: Vec<RequestRecord>,
    pub series: Vec<SeriesPoint>,
    /// Busy time of each replica up to the end of the run \[s\].
    pub busy_s: Vec<f64>,
    /// When the last replica stopped working, at most the end of the run \[s\].
    pub active_until_s: f64,
    pub events: u64,
    /// The work it did, in the units of its budget ([`RunOptions::max_work`](super::RunOptions::max_work)).
    pub work: u64,
    pub steps: u64,
    /// The steps' shapes and durations, for the batch statistics.
    pub batches: StepCounters,
    /// End of the run: the horizon plus the drain \[s\].
    pub end_s: f64,
    /// Keep every record in the report (see [`RunOptions::keep_records`](crate::sim::RunOptions::keep_records)).
    pub keep_records: bool,
}

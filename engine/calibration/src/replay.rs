//! A replay: a scenario run once (seed 1, records kept) and read as a
//! benchmark tool reads its run: throughputs, mean TTFT, TPOT and
//! inter-token latency, and the engine events it took.

use std::fmt;

use crate::model::scenario::Scenario;
use crate::params::ScenarioParams;
use crate::report::Report;
use crate::sim::{RunError, RunOptions, Simulation};

/// The figures of one replay.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Replay {
    pub output_tokens_per_s: f64,
    pub total_tokens_per_s: f64,
    pub requests_per_s: f64,
    /// Mean gap between output tokens, over all tokens (vLLM's ITL).
    pub mean_itl_ms: f64,
    /// Mean over requests of their time per output token after the first.
    pub mean_tpot_ms: f64,
    pub mean_ttft_ms: f64,
    /// The work the run did, in the units of its budget
    /// ([`RunOptions::max_work`]: engine events, requests, replica visits).
    pub work: u64,
}

/// Runs `params` (seed 1) and reads the published figures from the run.
pub fn replay(params: ScenarioParams) -> Result<Replay, String> {
    replay_within(params, RunOptions::default().max_work).map_err(|e| e.to_string())
}

/// Why a replay has no figures.
#[derive(Debug)]
pub(crate) enum ReplayError {
    /// The scenario is invalid.
    Invalid(String),
    /// The run stopped (over a cap).
    Run(RunError),
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Invalid(reason) => f.write_str(reason),
            ReplayError::Run(error) => error.fmt(f),
        }
    }
}

/// [`replay`] within `max_work` units of work (`RunOptions::max_work`).
pub(crate) fn replay_within(params: ScenarioParams, max_work: u64) -> Result<Replay, ReplayError> {
    let scenario = Scenario::try_from(params).map_err(|e| ReplayError::Invalid(e.to_string()))?;
    let options = RunOptions {
        keep_records: true,
        max_work,
        ..RunOptions::default()
    };
    let run = Simulation::new(&scenario, &options)
        .and_then(Simulation::finish)
        .map_err(ReplayError::Run)?;
    let report = Report::build(run);
    let records = &report.records;
    let (mut gaps_s, mut gaps) = (0.0, 0.0);
    for r in records
        .iter()
        .filter(|r| r.output_tokens > 1 && r.end_s.is_finite())
    {
        gaps_s += r.end_s - r.first_token_s;
        gaps += (r.output_tokens - 1) as f64;
    }
    let completed = report.overall.met + report.overall.late;
    Ok(Replay {
        output_tokens_per_s: report.output_tokens_per_s,
        total_tokens_per_s: report.total_tokens_per_s,
        requests_per_s: completed as f64 / report.busy_period_s,
        mean_itl_ms: 1e3 * gaps_s / gaps,
        mean_tpot_ms: 1e3 * report.overall.tpot.mean,
        mean_ttft_ms: 1e3 * report.overall.ttft.mean,
        work: report.engine.work,
    })
}

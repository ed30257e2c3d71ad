//! A user's own measurements, read from CSV or JSON text: measured step
//! times and benchmark points to fit the per-operation model to
//! ([`super::fit`]), or a measured step-time grid to use as it is.
//!
//! CSV: one header row naming the columns (any order), then one row per
//! measurement; blank rows and rows starting with `#` are skipped; fields are
//! plain numbers or words (no quoting). The header tells what the file holds:
//!
//! - step times: `prefill_tokens, decode_seqs, kv_tokens, step_s`, and
//!   optionally `prefill_context` (tokens already cached before the step's
//!   prefill chunk, 0 if left out). `kv_tokens` counts every KV token the
//!   step reads: the prefill's (context + chunk) and each decode's (its
//!   tokens so far, the new one included).
//! - benchmark points: `mode` (`offline` or `concurrency`), `requests`,
//!   `clients`, `input_tokens`, `output_tokens` and any of
//!   `output_tokens_per_s`, `mean_itl_ms`, `mean_ttft_ms` (what vLLM's
//!   `bench serve`, GuideLLM or genai-perf print); an empty field is a
//!   figure not measured.
//! - a table by tokens: `batch_tokens, kv_tokens, step_s`; by batch size:
//!   `batch_size, context_tokens, step_s`; one row per grid cell, every
//!   combination of the two axes measured once.
//!
//! Every error names where it is: the CSV's row (the header is row 1, as a
//! spreadsheet numbers them) and column, or the JSON item's path.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Replay, vllm_bench};
use crate::model::StepShape;
use crate::params::plan::PlanParams;
use crate::params::{
    ClassParams, DistParams, LoadParams, RunParams, ScenarioParams, StepTimeParams,
};

/// The most measurements one fit takes (their record travels in the
/// scenario and its share link).
pub const MAX_MEASUREMENTS: usize = 2_000;

/// One measured engine step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredStep {
    /// Prompt tokens computed in the step (one chunk).
    pub prefill_tokens: u64,
    /// Tokens already in the KV cache before that chunk.
    #[serde(default)]
    pub prefill_context: u64,
    /// Sequences decoding one token each.
    pub decode_seqs: u64,
    /// KV tokens the step reads in all (prefill context + chunk + each
    /// decode's context including its new token).
    pub kv_tokens: u64,
    /// The measured duration \[s\].
    pub step_s: f64,
    /// Where it was read, if from a file (errors name it).
    #[serde(skip)]
    pub place: Option<Place>,
}

/// How a benchmark loaded the server.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchmarkMode {
    /// Every request sent at once (`requests` of them).
    Offline,
    /// `clients` concurrent clients, each sending its next request when the
    /// last returns (`requests` in all; four per client if left out).
    Concurrency,
}

/// One benchmark run and the figures it printed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkPoint {
    pub mode: BenchmarkMode,
    #[serde(default)]
    pub requests: Option<u32>,
    #[serde(default)]
    pub clients: Option<u32>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub output_tokens_per_s: Option<f64>,
    /// Mean gap between output tokens \[ms\].
    #[serde(default)]
    pub mean_itl_ms: Option<f64>,
    /// Mean time to first token \[ms\].
    #[serde(default)]
    pub mean_ttft_ms: Option<f64>,
    /// Where it was read, if from a file (errors name it).
    #[serde(skip)]
    pub place: Option<Place>,
}

/// Where a measurement is in its file, for errors to name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A CSV row: the line it starts on, from 1, as a spreadsheet numbers
    /// rows (the header is row 1; blank and comment lines count).
    Row(usize),
    /// An item of a JSON list, from 0: `benchmarks[2]`.
    Item { list: &'static str, index: usize },
    /// A run of vLLM's benchmark client, from 0: its JSON result (`vLLM
    /// result 1`) or its printed summary (`vLLM summary 1`).
    Vllm { index: usize, summary: bool },
}

impl Place {
    /// `place`, or for a measurement not read from a file (built in code)
    /// item `index` of `list`, as its JSON would name it.
    pub fn or_item(place: &Option<Place>, list: &'static str, index: usize) -> Place {
        place.clone().unwrap_or(Place::Item { list, index })
    }

    /// One of its columns: "row 4, column step_s" or "step_times\[2\].step_s".
    pub fn column(&self, column: &str) -> String {
        match self {
            Place::Row(row) => format!("row {row}, column {column}"),
            Place::Item { list, index } => format!("{list}[{index}].{column}"),
            Place::Vllm { summary, .. } => {
                format!("{self}, {}", super::vllm_bench::key_of(*summary, column))
            }
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Row(row) => write!(f, "row {row}"),
            Place::Item { list, index } => write!(f, "{list}[{index}]"),
            Place::Vllm { index, summary } => {
                let what = if *summary { "summary" } else { "result" };
                write!(f, "vLLM {what} {}", index + 1)
            }
        }
    }
}

/// What a file of measurements holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measurements {
    /// Step times to fit the per-operation model to.
    StepTimes(Vec<MeasuredStep>),
    /// Benchmark points to fit the per-operation model to (each replayed).
    Benchmarks(Vec<BenchmarkPoint>),
    /// A measured grid, to use as the step-time model as it is.
    Table(StepTimeParams),
}

/// A figure a benchmark prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    OutputTokensPerS,
    MeanItlMs,
    MeanTtftMs,
}

impl Figure {
    /// Its name, with its unit.
    pub fn label(self) -> &'static str {
        match self {
            Figure::OutputTokensPerS => "output tokens/s",
            Figure::MeanItlMs => "mean ITL [ms]",
            Figure::MeanTtftMs => "mean TTFT [ms]",
        }
    }

    /// Its column in a file of benchmark points.
    pub fn column(self) -> &'static str {
        match self {
            Figure::OutputTokensPerS => "output_tokens_per_s",
            Figure::MeanItlMs => "mean_itl_ms",
            Figure::MeanTtftMs => "mean_ttft_ms",
        }
    }

    /// Its value in a replay.
    pub fn of(self, run: &Replay) -> f64 {
        match self {
            Figure::OutputTokensPerS => run.output_tokens_per_s,
            Figure::MeanItlMs => run.mean_itl_ms,
            Figure::MeanTtftMs => run.mean_ttft_ms,
        }
    }
}

/// Where a measurement is wrong, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasurementError {
    /// "row 4, column step_s" (CSV) or "step_times\[2\].step_s" (JSON).
    pub place: String,
    pub reason: String,
}

impl fmt::Display for MeasurementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.place.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(f, "{}: {}", self.place, self.reason)
        }
    }
}

impl std::error::Error for MeasurementError {}

pub(super) fn error(place: impl Into<String>, reason: impl Into<String>) -> MeasurementError {
    MeasurementError {
        place: place.into(),
        reason: reason.into(),
    }
}

impl MeasuredStep {
    /// The step's shape: one prefill chunk of `prefill_tokens` after
    /// `prefill_context` cached tokens (if any), and the decodes reading the
    /// rest of the KV tokens.
    pub fn shape(&self) -> StepShape {
        let mut shape = StepShape::default();
        if self.prefill_tokens > 0 {
            shape.add_prefill(self.prefill_context, self.prefill_tokens);
        }
        shape.decode_seqs = self.decode_seqs;
        shape.decode_kv_tokens = self.kv_tokens.saturating_sub(shape.prefill_kv_tokens);
        shape
    }

    /// The step in words, for tables.
    pub fn label(&self) -> String {
        let prefill = match (self.prefill_tokens, self.prefill_context) {
            (0, _) => "no prefill".to_string(),
            (p, 0) => format!("prefill {p}"),
            (p, c) => format!("prefill {p} after {c}"),
        };
        format!(
            "{prefill}, {} decodes, {} KV tokens",
            self.decode_seqs, self.kv_tokens
        )
    }

    /// Checks the step's numbers agree.
    pub(super) fn check(&self, at: &Place) -> Result<(), MeasurementError> {
        let place = |column: &str| at.column(column);
        if !(self.step_s.is_finite() && self.step_s > 0.0) {
            return Err(error(
                place("step_s"),
                "must be a positive number of seconds",
            ));
        }
        let prefill_kv = self.prefill_context.saturating_add(self.prefill_tokens);
        let decode_kv = self.kv_tokens.checked_sub(prefill_kv);
        match decode_kv {
            None => Err(error(
                place("kv_tokens"),
                format!(
                    "{} is fewer than the prefill reads (prefill_context + prefill_tokens = {prefill_kv})",
                    self.kv_tokens
                ),
            )),
            Some(rest) if rest < self.decode_seqs => Err(error(
                place("kv_tokens"),
                format!(
                    "leaves {rest} KV tokens for {} decodes; each decode reads at least one",
                    self.decode_seqs
                ),
            )),
            Some(rest) if self.decode_seqs == 0 && rest > 0 => Err(error(
                place("kv_tokens"),
                format!(
                    "{} is more than the prefill reads ({prefill_kv}) in a step without decodes (give prefill_context?)",
                    self.kv_tokens
                ),
            )),
            Some(_) if self.prefill_tokens == 0 && self.decode_seqs == 0 => Err(error(
                place("decode_seqs"),
                "a step computes something: give prefill_tokens or decode_seqs",
            )),
            Some(_) => Ok(()),
        }
    }
}

impl BenchmarkPoint {
    /// The point in words, for tables.
    pub fn label(&self) -> String {
        let load = match self.mode {
            BenchmarkMode::Offline => {
                format!("offline, {} requests", self.requests.unwrap_or(0))
            }
            BenchmarkMode::Concurrency => format!("{} clients", self.clients.unwrap_or(0)),
        };
        format!(
            "{load}, {} in / {} out",
            self.input_tokens, self.output_tokens
        )
    }

    /// The measured figures, in the order of [`Figure`].
    pub fn figures(&self) -> Vec<(Figure, f64)> {
        [
            (Figure::OutputTokensPerS, self.output_tokens_per_s),
            (Figure::MeanItlMs, self.mean_itl_ms),
            (Figure::MeanTtftMs, self.mean_ttft_ms),
        ]
        .into_iter()
        .filter_map(|(figure, value)| Some((figure, value?)))
        .collect()
    }

    /// The requests a replay of this point simulates: an offline point's
    /// `requests`; a concurrency point's, at least four per client.
    pub fn replay_requests(&self) -> u32 {
        let requests = self.requests.unwrap_or(0);
        match self.mode {
            BenchmarkMode::Offline => requests,
            BenchmarkMode::Concurrency => requests.max(self.clients.unwrap_or(1).saturating_mul(4)),
        }
    }

    /// The column that sets [`BenchmarkPoint::replay_requests`]: `requests`,
    /// or `clients` where four per client are more.
    pub fn requests_column(&self) -> &'static str {
        match self.mode {
            BenchmarkMode::Concurrency if self.replay_requests() > self.requests.unwrap_or(0) => {
                "clients"
            }
            _ => "requests",
        }
    }

    /// The scenario that replays this point: `base`'s model, hardware,
    /// engine and step time on one replica, one class of fixed lengths
    /// under the point's load, the example's run settings (no warm-up, a
    /// drain long enough) with `base`'s seed, and no plan section.
    pub fn scenario(&self, base: &ScenarioParams) -> ScenarioParams {
        let requests = self.replay_requests();
        let load = match self.mode {
            BenchmarkMode::Offline => LoadParams::Offline { requests },
            BenchmarkMode::Concurrency => LoadParams::ClosedLoop {
                clients: self.clients.unwrap_or(1),
                think_ms: None,
                requests: Some(requests),
            },
        };
        let mut p = base.clone();
        p.cluster.replicas = 1;
        p.run = RunParams {
            seed: base.run.seed,
            ..ScenarioParams::overnight_batch().run
        };
        p.plan = PlanParams::default();
        p.classes = vec![ClassParams {
            name: "benchmark".into(),
            input_tokens: DistParams::constant(self.input_tokens as f64),
            output_tokens: DistParams::constant(self.output_tokens as f64),
            load,
            ..ClassParams::default()
        }];
        p
    }

    pub(super) fn check(&self, at: &Place) -> Result<(), MeasurementError> {
        let place = |column: &str| at.column(column);
        match self.mode {
            BenchmarkMode::Offline if self.requests.unwrap_or(0) == 0 => {
                return Err(error(
                    place("requests"),
                    "an offline point needs its number of requests",
                ));
            }
            BenchmarkMode::Concurrency if self.clients.unwrap_or(0) == 0 => {
                return Err(error(
                    place("clients"),
                    "a concurrency point needs its number of clients",
                ));
            }
            _ => {}
        }
        for (column, value) in [
            ("input_tokens", self.input_tokens),
            ("output_tokens", self.output_tokens),
        ] {
            if value == 0 {
                return Err(error(place(column), "must be at least 1 token"));
            }
        }
        if self.mean_itl_ms.is_some() && self.output_tokens < 2 {
            return Err(error(
                place("mean_itl_ms"),
                "needs outputs of at least 2 tokens (there is no gap between tokens otherwise)",
            ));
        }
        for (column, value) in [
            ("output_tokens_per_s", self.output_tokens_per_s),
            ("mean_itl_ms", self.mean_itl_ms),
            ("mean_ttft_ms", self.mean_ttft_ms),
        ] {
            if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                return Err(error(place(column), "must be a positive number"));
            }
        }
        if self.figures().is_empty() {
            return Err(error(
                place("output_tokens_per_s"),
                "give at least one measured figure (output_tokens_per_s, mean_itl_ms or mean_ttft_ms)",
            ));
        }
        Ok(())
    }
}

/// Reads measurements from `text`: vLLM's benchmark output (its printed
/// summary, or its JSON result: `calibration/vllm_bench.rs`) as benchmark points;
/// JSON if it starts with `{` (`{"step_times": [...]}` or
/// `{"benchmarks": [...]}`, each item with the CSV's column names as
/// fields); CSV otherwise.
pub fn parse_measurements(text: &str) -> Result<Measurements, MeasurementError> {
    let start = text.trim_start();
    let measurements = if vllm_bench::is_summary(text) {
        Measurements::Benchmarks(vllm_bench::from_summary(text)?)
    } else if let Some(points) = (start.starts_with('{') || start.starts_with('['))
        .then(|| vllm_bench::from_result_json(text))
        .transpose()?
        .flatten()
    {
        Measurements::Benchmarks(points)
    } else if start.starts_with('{') {
        from_json(text)?
    } else {
        super::csv::from_csv(text)?
    };
    let count = match &measurements {
        Measurements::StepTimes(rows) => rows.len(),
        Measurements::Benchmarks(rows) => rows.len(),
        Measurements::Table(_) => 0,
    };
    if count > MAX_MEASUREMENTS {
        return Err(error(
            "",
            format!("{count} measurements; a fit takes at most {MAX_MEASUREMENTS}"),
        ));
    }
    Ok(measurements)
}

fn from_json(text: &str) -> Result<Measurements, MeasurementError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let mut measurements: Measurements = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|e| error(e.path().to_string(), e.inner().to_string()))?;
    let at = |list: &'static str, index: usize| Place::Item { list, index };
    match &mut measurements {
        Measurements::StepTimes(rows) => {
            empty_check(rows.len(), "step_times")?;
            for (i, row) in rows.iter_mut().enumerate() {
                row.check(&at("step_times", i))?;
                row.place = Some(at("step_times", i));
            }
        }
        Measurements::Benchmarks(rows) => {
            empty_check(rows.len(), "benchmarks")?;
            for (i, row) in rows.iter_mut().enumerate() {
                row.check(&at("benchmarks", i))?;
                row.place = Some(at("benchmarks", i));
            }
        }
        Measurements::Table(_) => {}
    }
    Ok(measurements)
}

pub(super) fn empty_check(count: usize, place: &str) -> Result<(), MeasurementError> {
    if count == 0 {
        return Err(error(place, "holds no measurement"));
    }
    Ok(())
}

#[cfg(test)]
#[path = "measurements_tests.rs"]
mod tests;

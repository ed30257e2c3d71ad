//! vLLM's benchmark client output (`vllm bench serve`, formerly
//! `benchmarks/benchmark_serving.py`) read as benchmark points: its JSON
//! result file (`--save-result`; one object, several one after another, or
//! a list of them) or its printed summary (one or more blocks headed
//! "Serving Benchmark Result").
//!
//! Each run becomes one [`BenchmarkPoint`]:
//!
//! - its load: under `max_concurrency` ("Maximum request concurrency"), that
//!   many closed-loop clients; without it and with every request sent at
//!   once (`request_rate` "inf", or not given), an offline batch. A finite
//!   request rate is Poisson arrivals, which a point does not replay: it is
//!   refused, naming the key;
//! - its requests: `completed` ("Successful requests");
//! - its lengths: the means, `total_input_tokens` and `total_output_tokens`
//!   ("Total input tokens", "Total generated tokens") over `completed`,
//!   rounded (a dataset of varied lengths is replayed at its means);
//! - its figures, each where given: `output_throughput` ("Output token
//!   throughput (tok/s)"), `mean_itl_ms` ("Mean ITL (ms)": the mean of every
//!   gap between tokens, as a replay reads it) and `mean_ttft_ms` ("Mean
//!   TTFT (ms)"). `mean_tpot_ms` is a mean over requests of a different
//!   quantity, and is not read.
//!
//! Errors name the run (counted from 1) and the key or line.

use serde_json::{Map, Value};

use super::measurements::{BenchmarkMode, BenchmarkPoint, MeasurementError, Place, error};

/// The words that head each block of the printed summary.
const SUMMARY_HEADER: &str = "Serving Benchmark Result";

/// One key the mapping reads: its name in the JSON result, its label in the
/// printed summary, and the point's column it sets (empty if none).
struct Key {
    json: &'static str,
    labels: &'static [&'static str],
    column: &'static str,
}

const KEYS: &[Key] = &[
    Key {
        json: "completed",
        labels: &["Successful requests"],
        column: "requests",
    },
    Key {
        json: "max_concurrency",
        labels: &["Maximum request concurrency"],
        column: "clients",
    },
    Key {
        json: "request_rate",
        labels: &["Request rate configured (RPS)", "Traffic request rate"],
        column: "",
    },
    Key {
        json: "total_input_tokens",
        labels: &["Total input tokens"],
        column: "input_tokens",
    },
    Key {
        json: "total_output_tokens",
        labels: &["Total generated tokens"],
        column: "output_tokens",
    },
    Key {
        json: "output_throughput",
        labels: &["Output token throughput (tok/s)"],
        column: "output_tokens_per_s",
    },
    Key {
        json: "mean_itl_ms",
        labels: &["Mean ITL (ms)"],
        column: "mean_itl_ms",
    },
    Key {
        json: "mean_ttft_ms",
        labels: &["Mean TTFT (ms)"],
        column: "mean_ttft_ms",
    },
];

/// Keys only vLLM's result file has at its top level (a file of
/// `sojourn calibrate`'s own formats has `benchmarks`, `step_times` or a
/// table there).
const RESULT_KEYS: &[&str] = &[
    "completed",
    "request_throughput",
    "output_throughput",
    "total_output_tokens",
    "num_prompts",
    "max_concurrency",
];

/// The key of `place` (one of this module's) for the point's `column`:
/// `vLLM result 1, key "completed"` or `vLLM summary 1, line "Successful
/// requests"`.
pub(super) fn key_of(summary: bool, column: &str) -> String {
    let key = KEYS.iter().find(|k| k.column == column);
    match (summary, key) {
        (false, Some(key)) => format!("key \"{}\"", key.json),
        (true, Some(key)) => format!("line \"{}\"", key.labels[0]),
        (_, None) => format!("its {column}"),
    }
}

/// Whether `text` is vLLM's printed summary.
pub(super) fn is_summary(text: &str) -> bool {
    text.contains(SUMMARY_HEADER)
}

/// The points of vLLM's JSON result(s) in `text`, or `None` if `text` is
/// not that (JSON of another shape, left to the other readers).
pub(super) fn from_result_json(
    text: &str,
) -> Result<Option<Vec<BenchmarkPoint>>, MeasurementError> {
    let mut results = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        match value {
            Ok(Value::Array(items)) => results.extend(items),
            Ok(value) => results.push(value),
            Err(_) => return Ok(None),
        }
    }
    let is_result = |v: &Value| {
        v.as_object()
            .is_some_and(|o| RESULT_KEYS.iter().any(|k| o.contains_key(*k)))
    };
    if results.is_empty() || !results.iter().any(is_result) {
        return Ok(None);
    }
    results
        .iter()
        .enumerate()
        .map(|(index, value)| {
            let place = Place::Vllm {
                index,
                summary: false,
            };
            match value.as_object() {
                Some(fields) if is_result(value) => point(fields, place),
                _ => Err(error(
                    place.to_string(),
                    "is not a vLLM benchmark result (an object with \"completed\", \
                     \"total_input_tokens\", \"total_output_tokens\" and its figures)",
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The points of vLLM's printed summary: one per block.
pub(super) fn from_summary(text: &str) -> Result<Vec<BenchmarkPoint>, MeasurementError> {
    let mut blocks: Vec<Map<String, Value>> = Vec::new();
    // Lines read outside a block (older versions print the concurrency and
    // the rate before it) go to the next block.
    let mut before = Map::new();
    let mut inside = false;
    for line in text.lines() {
        if line.contains(SUMMARY_HEADER) {
            blocks.push(std::mem::take(&mut before));
            inside = true;
            continue;
        }
        let trimmed = line.trim().trim_start_matches('#').trim();
        if inside && trimmed.len() >= 10 && trimmed.chars().all(|c| c == '=') {
            inside = false;
            continue;
        }
        let Some((key, value)) = summary_line(line) else {
            continue;
        };
        let block = match blocks.last_mut() {
            Some(block) if inside => block,
            _ => &mut before,
        };
        block.insert(key.into(), value);
    }
    blocks
        .iter()
        .enumerate()
        .map(|(index, fields)| {
            point(
                fields,
                Place::Vllm {
                    index,
                    summary: true,
                },
            )
        })
        .collect()
}

/// A summary line the mapping reads, as its JSON key and value: a number,
/// "inf", or the text as it is (which the mapping then refuses).
fn summary_line(line: &str) -> Option<(&'static str, Value)> {
    KEYS.iter().find_map(|key| {
        key.labels.iter().find_map(|label| {
            let at = line.find(&format!("{label}:"))?;
            let rest = line[at + label.len() + 1..].trim();
            let value = match rest.parse::<f64>() {
                Ok(v) if v.is_finite() => serde_json::Number::from_f64(v).map(Value::Number)?,
                _ => Value::String(rest.to_string()),
            };
            Some((key.json, value))
        })
    })
}

/// One run's point, checked as a point read from a file is.
fn point(fields: &Map<String, Value>, place: Place) -> Result<BenchmarkPoint, MeasurementError> {
    let get = |json: &'static str| number(fields, json, &place);
    let required =
        |json: &'static str, what: &str| get(json)?.ok_or_else(|| missing(&place, json, what));
    let completed = required(
        "completed",
        "the requests that succeeded, over which the totals give the mean lengths",
    )?;
    if !(completed >= 1.0 && completed <= f64::from(u32::MAX) && completed.fract() == 0.0) {
        return Err(error(
            place.column("requests"),
            format!("{completed} is not a number of requests (a whole number, at least 1)"),
        ));
    }
    let mean = |json: &'static str, what: &str| -> Result<u64, MeasurementError> {
        let total = required(json, what)?;
        if total.is_nan() || total < 0.0 {
            return Err(error(key(&place, json), "must be a number of tokens"));
        }
        Ok((total / completed).round() as u64)
    };
    let input_tokens = mean("total_input_tokens", "the prompt tokens of all requests")?;
    let output_tokens = mean(
        "total_output_tokens",
        "the generated tokens of all requests",
    )?;
    let rate = match fields.get("request_rate") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("inf") => None,
        Some(_) => get("request_rate")?.filter(|r| r.is_finite()),
    };
    let (mode, clients) = match (get("max_concurrency")?, rate) {
        (_, Some(rate)) => {
            return Err(error(
                key(&place, "request_rate"),
                format!(
                    "{rate} requests/s: requests sent at a rate are not replayed, only runs with \
                     every request sent at once (--request-rate inf) under --max-concurrency \
                     clients, or without it (offline)"
                ),
            ));
        }
        (Some(clients), None) => {
            if !(clients >= 1.0 && clients <= f64::from(u32::MAX) && clients.fract() == 0.0) {
                return Err(error(
                    place.column("clients"),
                    format!("{clients} is not a number of clients (a whole number, at least 1)"),
                ));
            }
            (BenchmarkMode::Concurrency, Some(clients as u32))
        }
        (None, None) => (BenchmarkMode::Offline, None),
    };
    let point = BenchmarkPoint {
        mode,
        requests: Some(completed as u32),
        clients,
        input_tokens,
        output_tokens,
        output_tokens_per_s: get("output_throughput")?,
        mean_itl_ms: get("mean_itl_ms")?,
        mean_ttft_ms: get("mean_ttft_ms")?,
        place: Some(place.clone()),
    };
    point.check(&place)?;
    Ok(point)
}

/// `json` in `fields` as a number, `None` if absent or null.
fn number(
    fields: &Map<String, Value>,
    json: &'static str,
    place: &Place,
) -> Result<Option<f64>, MeasurementError> {
    match fields.get(json) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(other) => Err(error(key(place, json), format!("{other} is not a number"))),
    }
}

/// Where `json` is: its key, or its summary line.
fn key(place: &Place, json: &str) -> String {
    let Place::Vllm { summary, .. } = place else {
        return place.column(json);
    };
    let Some(k) = KEYS.iter().find(|k| k.json == json) else {
        return format!("{place}, key \"{json}\"");
    };
    if *summary {
        format!("{place}, line \"{}\"", k.labels[0])
    } else {
        format!("{place}, key \"{json}\"")
    }
}

fn missing(place: &Place, json: &str, what: &str) -> MeasurementError {
    let Place::Vllm { summary, .. } = place else {
        return error(place.to_string(), format!("no {json}"));
    };
    let name = if *summary {
        let label = KEYS
            .iter()
            .find(|k| k.json == json)
            .map_or(json, |k| k.labels[0]);
        format!("no line \"{label}:\"")
    } else {
        format!("no key \"{json}\"")
    };
    error(place.to_string(), format!("{name} ({what})"))
}

#[cfg(test)]
#[path = "vllm_bench_tests.rs"]
mod tests;

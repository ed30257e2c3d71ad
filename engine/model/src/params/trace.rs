//! A request trace (CSV: arrival time, prompt and output tokens, optional
//! class and prefix-cache hit) read into requests, and the classes fitted to
//! it: each class's batch rate and time-of-day profile, batch sizes and
//! length distributions, so a scenario reproduces the trace's workload.
//!
//! Fitting keeps the trace's own values: lengths and batch sizes become
//! empirical distributions of exactly the observed values (each drawn with
//! its observed frequency), the rate is batches over the trace's span, and
//! a trace of at least a day gives a profile by hour of day (batches in each
//! hour over the mean). A batch is the requests that share an arrival time.
//!
//! Replaying keeps the requests themselves: [`replay_classes`] gives each
//! class a `{"kind": "trace"}` load holding its requests, which the engine
//! sends at their arrival times with their lengths, beside the fitted
//! distributions (which the analytic estimates read, and which an open
//! stream uses if the class is switched to one).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::FieldError;
use crate::params::csv_text::{Numbers, Separator, records};
use crate::params::dist::{DistParams, Shape};
use crate::params::{ClassParams, DAY_S, LoadParams, MAX_HORIZON_S};

/// One request of a trace.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct TraceRequest {
    /// Seconds from the trace's start.
    pub arrival_s: f64,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// The class it belongs to ("trace" when the column is absent or empty).
    #[serde(default)]
    pub class: Option<String>,
    /// Fraction of its prompt found in the prefix cache.
    #[serde(default)]
    pub prefix_hit: Option<f64>,
}

/// One request of a replayed trace (a class's `{"kind": "trace"}` load).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracedRequest {
    /// Seconds from the run's start.
    pub arrival_s: f64,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Fraction of its prompt found in the prefix cache; absent, the
    /// class's `prefix_cache_hit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_hit: Option<f64>,
}

impl From<&TraceRequest> for TracedRequest {
    fn from(r: &TraceRequest) -> TracedRequest {
        TracedRequest {
            arrival_s: r.arrival_s,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            prefix_hit: r.prefix_hit,
        }
    }
}

/// Largest trace read (rows), to bound the work a file can ask for.
pub const MAX_TRACE_ROWS: usize = 2_000_000;

/// The requests of a CSV trace with a header naming its columns
/// (`arrival_s`, `input_tokens`, `output_tokens`, optionally `class` and
/// `prefix_hit`), or the first bad row with its column and reason. Read as
/// the other CSV readers read (`csv_text`): commas, semicolons or tabs as
/// the header uses, decimal commas where unambiguous, `#` comment lines,
/// rows numbered by their line.
pub fn parse_trace_csv(text: &str) -> Result<Vec<TraceRequest>, FieldError> {
    let error = |field: String, reason: String| FieldError { field, reason };
    let separator = Separator::sniff(text);
    let numbers = Numbers::new(separator);
    let mut rows = records(text, separator);
    let headers = rows
        .next()
        .transpose()
        .map_err(|(row, e)| {
            error(
                format!("trace row {row}"),
                format!("cannot read the header: {e}"),
            )
        })?
        .map(|(_, header)| header)
        .unwrap_or_default();
    for column in ["arrival_s", "input_tokens", "output_tokens"] {
        if !headers.iter().any(|h| h == column) {
            return Err(error(
                "trace".into(),
                format!("no column \"{column}\" in the header"),
            ));
        }
    }
    let numeric = |column: &str| {
        matches!(
            column,
            "arrival_s" | "input_tokens" | "output_tokens" | "prefix_hit"
        )
    };
    let mut out = Vec::new();
    for record in rows {
        let (row, fields) = record.map_err(|(row, e)| error(format!("trace row {row}"), e))?;
        let row_name = format!("trace row {row}");
        if out.len() == MAX_TRACE_ROWS {
            return Err(error(
                row_name,
                format!("a trace holds at most {MAX_TRACE_ROWS} requests"),
            ));
        }
        if fields.len() != headers.len() {
            return Err(error(
                row_name,
                separator.width_mismatch(&fields, headers.len()),
            ));
        }
        let record = fields
            .iter()
            .zip(&headers)
            .map(|(field, column)| {
                if numeric(column) {
                    numbers
                        .plain(field, row)
                        .map_err(|e| error(format!("{row_name}, column {column}"), e))
                } else {
                    Ok(field.into())
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let record = csv::StringRecord::from(record.iter().map(|f| f.as_ref()).collect::<Vec<_>>());
        let request: TraceRequest = record.deserialize(Some(&headers)).map_err(|e| {
            let csv::ErrorKind::Deserialize { err, .. } = e.kind() else {
                return error(row_name.clone(), e.to_string());
            };
            let column = err
                .field()
                .and_then(|f| headers.get(f as usize))
                .unwrap_or("?");
            error(
                format!("{row_name}, column {column}"),
                deserialize_reason(err),
            )
        })?;
        check_request(&request)
            .map_err(|(column, reason)| error(format!("{row_name}, column {column}"), reason))?;
        out.push(request);
    }
    if out.is_empty() {
        return Err(error("trace".into(), "the trace has no requests".into()));
    }
    Ok(out)
}

/// The reason of a row's deserialisation error, without the csv crate's
/// position prefix (the field already says where).
fn deserialize_reason(e: &csv::DeserializeError) -> String {
    match e.kind() {
        csv::DeserializeErrorKind::ParseInt(_) => "must be a whole number of tokens".into(),
        csv::DeserializeErrorKind::ParseFloat(_) => "must be a number".into(),
        other => other.to_string(),
    }
}

/// A value of `r` no scenario could hold, as (column, reason).
fn check_request(r: &TraceRequest) -> Result<(), (&'static str, String)> {
    check_traced(&TracedRequest::from(r))
}

/// A value of a replayed request no scenario could hold, as (field,
/// reason).
pub fn check_traced(r: &TracedRequest) -> Result<(), (&'static str, String)> {
    if !(r.arrival_s.is_finite() && r.arrival_s >= 0.0) {
        return Err((
            "arrival_s",
            format!("must be a time of 0 s or more, got {}", r.arrival_s),
        ));
    }
    if r.arrival_s > MAX_HORIZON_S {
        return Err((
            "arrival_s",
            format!(
                "must be at most one year ({MAX_HORIZON_S} s) after the trace's start, got {}",
                r.arrival_s
            ),
        ));
    }
    if r.input_tokens == 0 {
        return Err(("input_tokens", "must be at least 1".into()));
    }
    if r.output_tokens == 0 {
        return Err(("output_tokens", "must be at least 1".into()));
    }
    match r.prefix_hit {
        Some(h) if !(0.0..1.0).contains(&h) => {
            Err(("prefix_hit", format!("must be in [0, 1), got {h}")))
        }
        _ => Ok(()),
    }
}

/// The classes a trace's requests form (by `class`, in order of first
/// appearance), each fitted to its requests. The trace's span is at least
/// its last arrival (a trace of one arrival time counts one second).
pub fn fit_classes(requests: &[TraceRequest]) -> Vec<ClassParams> {
    let span_s = requests
        .iter()
        .map(|r| r.arrival_s)
        .fold(0.0, f64::max)
        .max(1.0);
    by_class(requests)
        .into_iter()
        .map(|(name, requests)| fit_class(name, &requests, span_s))
        .collect()
}

/// The classes a trace's requests form, each replaying its own requests
/// exactly (a `{"kind": "trace"}` load) beside the distributions fitted
/// to them. A replay sets its own send times, so the classes have neither
/// batches nor an hourly profile.
pub fn replay_classes(requests: &[TraceRequest]) -> Vec<ClassParams> {
    let mut classes = fit_classes(requests);
    for (class, (_, requests)) in classes.iter_mut().zip(by_class(requests)) {
        class.batch_size = DistParams::constant(1.0);
        class.time_of_day = None;
        class.load = LoadParams::Trace {
            requests: requests.into_iter().map(TracedRequest::from).collect(),
        };
    }
    classes
}

/// A trace's requests by class name ("trace" when absent), the classes in
/// order of first appearance.
fn by_class(requests: &[TraceRequest]) -> Vec<(&str, Vec<&TraceRequest>)> {
    let mut order: Vec<&str> = Vec::new();
    let mut groups: BTreeMap<&str, Vec<&TraceRequest>> = BTreeMap::new();
    for r in requests {
        let name = r
            .class
            .as_deref()
            .filter(|c| !c.is_empty())
            .unwrap_or("trace");
        if !groups.contains_key(name) {
            order.push(name);
        }
        groups.entry(name).or_default().push(r);
    }
    order
        .into_iter()
        .map(|name| (name, groups.remove(name).unwrap_or_default()))
        .collect()
}

/// One class fitted to its requests over a trace of `span_s` seconds.
fn fit_class(name: &str, requests: &[&TraceRequest], span_s: f64) -> ClassParams {
    // Batches: requests sharing an arrival time.
    let mut batches: BTreeMap<u64, u32> = BTreeMap::new();
    for r in requests {
        *batches.entry(r.arrival_s.to_bits()).or_default() += 1;
    }
    let sizes: Vec<f64> = batches.values().map(|&n| n as f64).collect();
    let hits: Vec<f64> = requests.iter().filter_map(|r| r.prefix_hit).collect();
    ClassParams {
        name: name.to_string(),
        batches_per_hour: batches.len() as f64 * 3600.0 / span_s,
        batch_size: empirical(sizes),
        time_of_day: (span_s >= DAY_S).then(|| profile(batches.keys().map(|&t| f64::from_bits(t)))),
        input_tokens: empirical(requests.iter().map(|r| r.input_tokens as f64).collect()),
        output_tokens: empirical(requests.iter().map(|r| r.output_tokens as f64).collect()),
        prefix_cache_hit: if hits.is_empty() {
            0.0
        } else {
            hits.iter().sum::<f64>() / hits.len() as f64
        },
        ..ClassParams::default()
    }
}

/// The observed values as a distribution: a constant when they are all
/// equal, else each value with its observed frequency.
fn empirical(values: Vec<f64>) -> DistParams {
    match values.first() {
        Some(&v) if values.iter().all(|&x| x == v) => DistParams::constant(v),
        _ => DistParams::new(Shape::Empirical { values }),
    }
}

/// Batches per hour of the day over the mean hour (24 multipliers).
fn profile(arrivals_s: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut counts = [0.0_f64; 24];
    for t in arrivals_s {
        counts[((t % DAY_S) / 3600.0) as usize % 24] += 1.0;
    }
    let mean = counts.iter().sum::<f64>() / 24.0;
    counts.iter().map(|c| c / mean).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_reads_with_optional_columns_and_bad_rows_name_row_and_column() {
        let ok = "arrival_s,input_tokens,output_tokens,class\n0,100,20,chat\n1.5, 200 ,30,\n";
        let r = parse_trace_csv(ok).expect("reads");
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].class.as_deref(), Some("chat"));
        assert_eq!(
            (r[1].arrival_s, r[1].input_tokens, r[1].class.as_deref()),
            (1.5, 200, None)
        );

        let cases = [
            (
                "arrival_s,input_tokens\n0,1\n",
                "trace",
                "no column \"output_tokens\"",
            ),
            (
                "arrival_s,input_tokens,output_tokens\n0,1,2\n3,x,2\n",
                "trace row 3, column input_tokens",
                "whole number",
            ),
            (
                "arrival_s,input_tokens,output_tokens\n-1,1,2\n",
                "trace row 2, column arrival_s",
                "0 s or more",
            ),
            (
                "arrival_s,input_tokens,output_tokens\n0,1,0\n",
                "trace row 2, column output_tokens",
                "at least 1",
            ),
            (
                "arrival_s,input_tokens,output_tokens,prefix_hit\n0,1,2,1.5\n",
                "trace row 2, column prefix_hit",
                "[0, 1)",
            ),
            (
                "arrival_s,input_tokens,output_tokens\n",
                "trace",
                "no requests",
            ),
        ];
        for (text, field, reason) in cases {
            let e = parse_trace_csv(text).expect_err(text);
            assert_eq!(e.field, field, "{text}");
            assert!(e.reason.contains(reason), "{text}: {}", e.reason);
        }
    }

    // A trace reads as the other CSV files do: the header's separator,
    // decimal commas where unambiguous, and rows numbered by their line (a
    // blank or comment line counts: the reader numbered data rows from 2,
    // so an error after one named the row above it).
    #[test]
    fn a_trace_takes_the_headers_separator_and_names_rows_by_line() {
        let semicolons = "arrival_s;input_tokens;output_tokens;class\n0,5;100;20;chat\n# later\n12;200;30;api,v2\n";
        let r = parse_trace_csv(semicolons).expect("reads");
        assert_eq!(
            r.iter()
                .map(|r| (r.arrival_s, r.input_tokens, r.class.as_deref()))
                .collect::<Vec<_>>(),
            [(0.5, 100, Some("chat")), (12.0, 200, Some("api,v2"))]
        );
        let cases = [
            (
                "arrival_s,input_tokens,output_tokens\n0,1,2\n\n3,x,2\n",
                "trace row 4, column input_tokens",
                "whole number",
            ),
            (
                "arrival_s\tinput_tokens\toutput_tokens\n1,000\t1\t2\n",
                "trace row 2, column arrival_s",
                "thousands separator",
            ),
            (
                "arrival_s;input_tokens;output_tokens\n0,5;1;2\n1.5;1;2\n",
                "trace row 3, column arrival_s",
                "row 2 wrote a number with a decimal comma",
            ),
            (
                "arrival_s;input_tokens;output_tokens\n0;1;2\n1,1,2\n",
                "trace row 3",
                "1 field, but the header names 3 columns (the first row separates its fields with semicolons, this one with commas",
            ),
        ];
        for (text, field, reason) in cases {
            let e = parse_trace_csv(text).expect_err(text);
            assert_eq!(e.field, field, "{text}");
            assert!(e.reason.contains(reason), "{text}: {}", e.reason);
        }
    }

    /// Two classes: the fitted rates, batches, lengths and profile are the
    /// trace's own, counted by hand.
    #[test]
    fn fitted_classes_reproduce_the_traces_counts() {
        let mut text = String::from("arrival_s,input_tokens,output_tokens,class,prefix_hit\n");
        // "api": one request every hour for two days, lengths 100 or 300.
        for h in 0..48 {
            let input = if h % 2 == 0 { 100 } else { 300 };
            text += &format!("{},{input},50,api,0.5\n", h as f64 * 3600.0 + 10.0);
        }
        // "batch": three batches of 4 requests at 02:00 on each day and at 03:00 on day one.
        for t in [2.0 * 3600.0, 26.0 * 3600.0, 3.0 * 3600.0] {
            for _ in 0..4 {
                text += &format!("{t},1000,200,batch,\n");
            }
        }
        let classes = fit_classes(&parse_trace_csv(&text).expect("reads"));
        let names: Vec<&str> = classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["api", "batch"]);
        let span_h = (47.0 * 3600.0 + 10.0) / 3600.0;
        let (api, batch) = (&classes[0], &classes[1]);
        assert!((api.batches_per_hour - 48.0 / span_h).abs() < 1e-12);
        assert_eq!(api.batch_size, DistParams::constant(1.0));
        assert_eq!(api.output_tokens, DistParams::constant(50.0));
        let Shape::Empirical { values } = &api.input_tokens.shape else {
            panic!("empirical lengths expected")
        };
        assert_eq!(
            (values.len(), values.iter().filter(|&&v| v == 300.0).count()),
            (48, 24)
        );
        assert_eq!(api.prefix_cache_hit, 0.5);
        assert_eq!(api.time_of_day.as_deref(), Some(&[1.0; 24][..]));
        assert!((batch.batches_per_hour - 3.0 / span_h).abs() < 1e-12);
        assert_eq!(batch.batch_size, DistParams::constant(4.0));
        // Batches at 02:00 twice and 03:00 once: mean 3/24 per hour.
        let profile = batch
            .time_of_day
            .as_ref()
            .expect("a day or more gives a profile");
        assert_eq!((profile[2], profile[3], profile[0]), (16.0, 8.0, 0.0));
        assert_eq!(batch.prefix_cache_hit, 0.0);
    }
}

//! Measurements from CSV text (the format is in [`super::measurements`]):
//! the header tells the kind, each row becomes a measurement, a table's
//! rows become its grid; every error names its row and column.
//!
//! The text is read as every CSV of the engine is (`params::csv_text`):
//! the separator the header uses (comma, semicolon or tab), decimal commas
//! where unambiguous, quoted fields, CRLF line ends, `#` comment lines;
//! rows are numbered by the line they start on, as a spreadsheet numbers
//! them, comments and blank lines included.

use super::measurements::{
    BenchmarkMode, BenchmarkPoint, MeasuredStep, MeasurementError, Measurements, Place,
    empty_check, error,
};
use crate::params::StepTimeParams;
use crate::params::csv_text::{Numbers, Separator, records};

/// The columns of each kind of CSV: (kind, required, optional).
const CSV_KINDS: [(&str, &[&str], &[&str]); 4] = [
    (
        "step times",
        &["prefill_tokens", "decode_seqs", "kv_tokens", "step_s"],
        &["prefill_context"],
    ),
    (
        "benchmark points",
        &["mode", "input_tokens", "output_tokens"],
        &[
            "requests",
            "clients",
            "output_tokens_per_s",
            "mean_itl_ms",
            "mean_ttft_ms",
        ],
    ),
    ("table", &["batch_tokens", "kv_tokens", "step_s"], &[]),
    (
        "batch table",
        &["batch_size", "context_tokens", "step_s"],
        &[],
    ),
];

/// One data row of a CSV: its row number, the header's columns and its
/// fields in the same order.
struct Row<'a> {
    number: usize,
    columns: &'a [String],
    fields: csv::StringRecord,
    numbers: &'a Numbers,
}

impl Row<'_> {
    fn place(&self, column: &str) -> String {
        Place::Row(self.number).column(column)
    }

    /// The field of `column`, if present and not empty.
    fn text(&self, column: &str) -> Option<&str> {
        let index = self.columns.iter().position(|c| c == column)?;
        self.fields.get(index).filter(|t| !t.is_empty())
    }

    fn number(&self, column: &str) -> Result<Option<f64>, MeasurementError> {
        let Some(text) = self.text(column) else {
            return Ok(None);
        };
        let value = self
            .numbers
            .read(text, self.number)
            .map_err(|reason| error(self.place(column), reason))?;
        if !value.is_finite() {
            return Err(error(self.place(column), "must be a finite number"));
        }
        Ok(Some(value))
    }

    fn real(&self, column: &str) -> Result<f64, MeasurementError> {
        self.number(column)?
            .ok_or_else(|| error(self.place(column), "is empty"))
    }

    fn optional_count(&self, column: &str) -> Result<Option<u64>, MeasurementError> {
        match self.number(column)? {
            Some(v) if v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64 => Ok(Some(v as u64)),
            Some(v) => Err(error(
                self.place(column),
                format!("{v} is not a whole number of at most {}", u32::MAX),
            )),
            None => Ok(None),
        }
    }

    fn count(&self, column: &str) -> Result<u64, MeasurementError> {
        self.optional_count(column)?
            .ok_or_else(|| error(self.place(column), "is empty"))
    }
}

pub(super) fn from_csv(text: &str) -> Result<Measurements, MeasurementError> {
    let separator = Separator::sniff(text);
    let numbers = Numbers::new(separator);
    let mut records = records(text, separator)
        .map(|record| record.map_err(|(row, reason)| error(format!("row {row}"), reason)));
    let Some((header_row, header)) = records.next().transpose()? else {
        return Err(error("", "no header row: the first row names the columns"));
    };
    let columns: Vec<String> = header.iter().map(str::to_string).collect();
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    let kind = csv_kind(header_row, &names)?;
    let mut rows = Vec::new();
    for record in records {
        let (number, fields) = record?;
        if fields.len() != columns.len() {
            return Err(error(
                format!("row {number}"),
                separator.width_mismatch(&fields, columns.len()),
            ));
        }
        rows.push(Row {
            number,
            columns: &columns,
            fields,
            numbers: &numbers,
        });
    }
    empty_check(rows.len(), "the CSV")?;
    match kind {
        "step times" => rows
            .iter()
            .map(step_row)
            .collect::<Result<_, _>>()
            .map(Measurements::StepTimes),
        "benchmark points" => rows
            .iter()
            .map(benchmark_row)
            .collect::<Result<_, _>>()
            .map(Measurements::Benchmarks),
        "table" => {
            grid(&rows, "batch_tokens", "kv_tokens").map(|(batch_tokens, kv_tokens, step_s)| {
                Measurements::Table(StepTimeParams::Table {
                    batch_tokens,
                    kv_tokens,
                    step_s,
                })
            })
        }
        _ => grid(&rows, "batch_size", "context_tokens").map(
            |(batch_sizes, context_tokens, step_s)| {
                Measurements::Table(StepTimeParams::BatchTable {
                    batch_sizes,
                    context_tokens,
                    step_s,
                })
            },
        ),
    }
}

/// Which kind of CSV `columns` make, or why none.
fn csv_kind(row: usize, columns: &[&str]) -> Result<&'static str, MeasurementError> {
    let known = |column: &str| {
        CSV_KINDS
            .iter()
            .any(|(_, required, optional)| required.contains(&column) || optional.contains(&column))
    };
    if let Some(unknown) = columns.iter().find(|c| !known(c)) {
        return Err(error(
            format!("row {row}, column {unknown}"),
            "unknown column (see docs/calibration.md, \"Fitting from measurements\")",
        ));
    }
    let kind = CSV_KINDS.iter().find(|(_, required, optional)| {
        required.iter().all(|c| columns.contains(c))
            && columns
                .iter()
                .all(|c| required.contains(c) || optional.contains(c))
    });
    match kind {
        Some((name, ..)) => Ok(name),
        None => Err(error(
            format!("row {row}"),
            "the header names no known set of columns: step times (prefill_tokens, decode_seqs, kv_tokens, step_s), benchmark points (mode, input_tokens, output_tokens and figures), or a table (batch_tokens, kv_tokens, step_s or batch_size, context_tokens, step_s)",
        )),
    }
}

fn step_row(row: &Row) -> Result<MeasuredStep, MeasurementError> {
    let step = MeasuredStep {
        prefill_tokens: row.count("prefill_tokens")?,
        prefill_context: row.optional_count("prefill_context")?.unwrap_or(0),
        decode_seqs: row.count("decode_seqs")?,
        kv_tokens: row.count("kv_tokens")?,
        step_s: row.real("step_s")?,
        place: Some(Place::Row(row.number)),
    };
    step.check(&Place::Row(row.number))?;
    Ok(step)
}

fn benchmark_row(row: &Row) -> Result<BenchmarkPoint, MeasurementError> {
    let mode = match row.text("mode") {
        Some("offline") => BenchmarkMode::Offline,
        Some("concurrency") => BenchmarkMode::Concurrency,
        other => {
            return Err(error(
                row.place("mode"),
                format!(
                    "expected offline or concurrency, got \"{}\"",
                    other.unwrap_or_default()
                ),
            ));
        }
    };
    let small = |v: Option<u64>| v.map(|v| v as u32);
    let point = BenchmarkPoint {
        mode,
        requests: small(row.optional_count("requests")?),
        clients: small(row.optional_count("clients")?),
        input_tokens: row.count("input_tokens")?,
        output_tokens: row.count("output_tokens")?,
        output_tokens_per_s: row.number("output_tokens_per_s")?,
        mean_itl_ms: row.number("mean_itl_ms")?,
        mean_ttft_ms: row.number("mean_ttft_ms")?,
        place: Some(Place::Row(row.number)),
    };
    point.check(&Place::Row(row.number))?;
    Ok(point)
}

/// The grid of a table CSV: its two axes (sorted) and `step_s` by row and
/// column; every combination must be measured exactly once.
type Grid = (Vec<f64>, Vec<f64>, Vec<Vec<f64>>);

fn grid(rows: &[Row], row_axis: &str, column_axis: &str) -> Result<Grid, MeasurementError> {
    let mut cells: Vec<(f64, f64, f64, usize)> = Vec::with_capacity(rows.len());
    for row in rows {
        let (x, y, t) = (
            row.real(row_axis)?,
            row.real(column_axis)?,
            row.real("step_s")?,
        );
        for (column, value) in [(row_axis, x), (column_axis, y)] {
            if value < 0.0 {
                return Err(error(row.place(column), "must be zero or more"));
            }
        }
        if t <= 0.0 {
            return Err(error(
                row.place("step_s"),
                "must be a positive number of seconds",
            ));
        }
        if let Some(earlier) = cells.iter().find(|c| c.0 == x && c.1 == y) {
            return Err(error(
                row.place(column_axis),
                format!(
                    "{row_axis} {x}, {column_axis} {y} was already measured on row {}",
                    earlier.3
                ),
            ));
        }
        cells.push((x, y, t, row.number));
    }
    let axis = |pick: fn(&(f64, f64, f64, usize)) -> f64| {
        let mut values: Vec<f64> = cells.iter().map(pick).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        values
    };
    let (xs, ys) = (axis(|c| c.0), axis(|c| c.1));
    let mut step_s = vec![vec![f64::NAN; ys.len()]; xs.len()];
    for &(x, y, t, _) in &cells {
        let i = xs.partition_point(|v| *v < x);
        let j = ys.partition_point(|v| *v < y);
        step_s[i][j] = t;
    }
    for (i, row) in step_s.iter().enumerate() {
        if let Some(j) = row.iter().position(|t| t.is_nan()) {
            return Err(error(
                "",
                format!(
                    "no row measures {row_axis} {}, {column_axis} {}: every combination of the two must be measured",
                    xs[i], ys[j]
                ),
            ));
        }
    }
    Ok((xs, ys, step_s))
}

//! How a class's prompt and output lengths go together, as a scenario
//! writes it. Absent (the default), they are drawn independently from
//! `input_tokens` and `output_tokens`; [`LengthsParams`] couples them, and
//! [`lengths_from_csv`] reads a table of pairs from CSV text (a trace's
//! lengths, pasted or imported). The validated sampler is
//! `crate::model::dist::JointLengths`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::csv_text::{Numbers, Separator, records};

/// A joint model of (prompt, output) lengths that replaces drawing the two
/// independently.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LengthsParams {
    /// The class's two log-normal distributions (`log_normal` or
    /// `log_normal_moments`, with their clamps) with correlation `rho`
    /// between the normals underneath (their logarithms before rounding),
    /// -1 < rho < 1: each length keeps its own distribution.
    Correlated { rho: f64 },
    /// A table of (prompt, output) pairs \[tokens\], each drawn with equal
    /// probability or in proportion to `weights` (one per pair): for
    /// example the lengths of a trace.
    Pairs {
        pairs: Vec<[f64; 2]>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        weights: Option<Vec<f64>>,
    },
}

impl LengthsParams {
    /// The model of `input_factor` x prompt and `output_factor` x output:
    /// a table's columns scaled (a correlation is unchanged: the class's
    /// distributions scale themselves).
    pub fn scaled(&self, input_factor: f64, output_factor: f64) -> LengthsParams {
        match self {
            LengthsParams::Correlated { rho } => LengthsParams::Correlated { rho: *rho },
            LengthsParams::Pairs { pairs, weights } => LengthsParams::Pairs {
                pairs: pairs
                    .iter()
                    .map(|[i, o]| [i * input_factor, o * output_factor])
                    .collect(),
                weights: weights.clone(),
            },
        }
    }

    /// A table as CSV text that [`lengths_from_csv`] reads back: a header,
    /// then `input,output` or `input,output,weight` per line. `None` for a
    /// correlation.
    pub fn to_csv(&self) -> Option<String> {
        let LengthsParams::Pairs { pairs, weights } = self else {
            return None;
        };
        let mut out = String::from(match weights {
            Some(_) => "input,output,weight\n",
            None => "input,output\n",
        });
        for (k, [input, output]) in pairs.iter().enumerate() {
            out.push_str(&format!("{input},{output}"));
            if let Some(w) = weights.as_ref().and_then(|w| w.get(k)) {
                out.push_str(&format!(",{w}"));
            }
            out.push('\n');
        }
        Some(out)
    }
}

/// A problem in CSV text, at a row (its line, from 1) and column (from 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError {
    pub row: usize,
    pub column: usize,
    pub reason: String,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "row {}, column {} ({}): {}",
            self.row,
            self.column,
            column_name(self.column),
            self.reason
        )
    }
}

impl std::error::Error for CsvError {}

fn column_name(column: usize) -> &'static str {
    match column {
        1 => "input",
        2 => "output",
        3 => "weight",
        _ => "extra",
    }
}

/// Reads a table of (prompt, output) pairs from CSV text: one pair per
/// line, `input,output` or `input,output,weight` (every row alike),
/// separated by commas, semicolons or tabs (a spreadsheet's paste; the
/// first line decides, and a file separated by semicolons or tabs may write
/// decimal commas: see `csv_text`); blank lines and lines starting with
/// `#` are skipped, and a first line that does not start with a number is
/// a header. Lengths must be positive and weights zero or more. No rows at
/// all is not an error here: validation says the table is empty.
pub fn lengths_from_csv(text: &str) -> Result<LengthsParams, CsvError> {
    let separator = Separator::sniff(text);
    let numbers = Numbers::new(separator);
    let mut pairs = Vec::new();
    let mut weights = Vec::new();
    let mut width = None;
    let mut first = true;
    for record in records(text, separator) {
        let (row, cells) = record.map_err(|(row, reason)| CsvError {
            row,
            column: 1,
            reason,
        })?;
        let cell_text = |column: usize| cells.get(column - 1).unwrap_or_default();
        let is_header = first && cell_text(1).replace(',', ".").parse::<f64>().is_err();
        first = false;
        if is_header {
            continue;
        }
        let expected = *width.get_or_insert(cells.len());
        check_width(row, cells.len(), expected).map_err(|e| CsvError {
            reason: e.reason + &separator.hint(&cells),
            ..e
        })?;
        let read =
            |column: usize, weight: bool| cell(&numbers, row, column, cell_text(column), weight);
        pairs.push([read(1, false)?, read(2, false)?]);
        if cells.len() == 3 {
            weights.push(read(3, true)?);
        }
    }
    Ok(LengthsParams::Pairs {
        pairs,
        weights: (width == Some(3)).then_some(weights),
    })
}

/// A row must have two or three cells, as many as the first row. The
/// column named is the first one missing or the first one too many.
fn check_width(row: usize, cells: usize, expected: usize) -> Result<(), CsvError> {
    let reason = if cells < 2 {
        format!("a row holds input,output or input,output,weight; this one has {cells} cell")
    } else if cells > 3 {
        format!("a row holds input,output or input,output,weight; this one has {cells} cells")
    } else if cells != expected {
        format!(
            "the first row has {expected} cells, this one {cells}: give every row a weight or none"
        )
    } else {
        return Ok(());
    };
    let column = if cells > expected.min(3) {
        expected.min(3) + 1
    } else {
        cells + 1
    };
    Err(CsvError {
        row,
        column,
        reason,
    })
}

/// One number: a length (finite and positive) or a weight (finite, zero
/// or more).
fn cell(
    numbers: &Numbers,
    row: usize,
    column: usize,
    text: &str,
    weight: bool,
) -> Result<f64, CsvError> {
    let fail = |reason: String| CsvError {
        row,
        column,
        reason,
    };
    let value = numbers.read(text, row).map_err(fail)?;
    let fits = value.is_finite() && (value > 0.0 || (weight && value == 0.0));
    if !fits {
        let wanted = if weight {
            "zero or more"
        } else {
            "a positive number of tokens"
        };
        return Err(fail(format!("must be {wanted}, got {text}")));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> (Vec<[f64; 2]>, Option<Vec<f64>>) {
        match lengths_from_csv(text) {
            Ok(LengthsParams::Pairs { pairs, weights }) => (pairs, weights),
            other => panic!("{other:?}"),
        }
    }

    fn error(text: &str) -> (usize, usize, String) {
        let e = lengths_from_csv(text).expect_err("should fail");
        (e.row, e.column, e.to_string())
    }

    #[test]
    fn csv_reads_pairs_with_or_without_weights_headers_and_blank_lines() {
        let (p, w) = pairs("input,output\n100,20\n\n# a comment\n 2000 , 500 \n");
        assert_eq!(p, [[100.0, 20.0], [2000.0, 500.0]]);
        assert_eq!(w, None);
        let (p, w) = pairs("100\t20\t3\r\n2000\t500\t1\n");
        assert_eq!(p, [[100.0, 20.0], [2000.0, 500.0]]);
        assert_eq!(w, Some(vec![3.0, 1.0]));
        assert_eq!(pairs("input;output\n100;20\n2000;500\n").0, p);
        assert_eq!(pairs("input,output\n").0, Vec::<[f64; 2]>::new());
    }

    #[test]
    fn csv_errors_name_their_row_and_column() {
        let (row, column, text) = error("input,output\n100,20\n300,abc\n");
        assert_eq!((row, column), (3, 2), "{text}");
        assert_eq!(text, "row 3, column 2 (output): \"abc\" is not a number");
        let (row, column, text) = error("100,20\n0,5\n");
        assert_eq!((row, column), (2, 1), "{text}");
        assert!(text.contains("positive"), "{text}");
        let (row, column, text) = error("100,20,1\n200,30,-2\n");
        assert_eq!((row, column), (2, 3), "{text}");
        assert!(text.contains("zero or more"), "{text}");
        let (row, column, text) = error("100,20,1\n200,30\n");
        assert_eq!((row, column), (2, 3), "{text}");
        assert!(text.contains("weight or none"), "{text}");
        let (row, column, text) = error("100\n");
        assert_eq!((row, column), (1, 2), "{text}");
        let (row, column, _) = error("1,2,3,4\n");
        assert_eq!((row, column), (1, 4));
    }

    // The first line decides the separator: lengths_from_csv split every
    // line on any of the three, so "100;20,5" (an output of 20.5 tokens
    // with a decimal comma) read as the pair (100, 20) of weight 5. A file
    // separated by semicolons or tabs may write decimal commas, and what
    // could also be a thousands separator is refused.
    #[test]
    fn one_separator_per_file_and_decimal_commas_where_unambiguous() {
        assert_eq!(
            pairs("input;output\n100;20,5\n"),
            (vec![[100.0, 20.5]], None)
        );
        let (p, w) = pairs("input;output;weight\n100;20;0,5\n2000;500;1,25\n");
        assert_eq!(p, [[100.0, 20.0], [2000.0, 500.0]]);
        assert_eq!(w, Some(vec![0.5, 1.25]));
        let (p, w) = pairs("100\t20\t0,5\n");
        assert_eq!((p, w), (vec![[100.0, 20.0]], Some(vec![0.5])));
        let (row, column, text) = error("input;output\n1,500;20\n");
        assert_eq!((row, column), (2, 1), "{text}");
        assert!(text.contains("or a thousands separator (1500)"), "{text}");
        let (row, column, text) = error("100\t20\n2000;500\n");
        assert_eq!((row, column), (2, 2), "{text}");
        assert!(
            text.ends_with("the first row separates its fields with tabs, this one with semicolons: use one separator throughout)"),
            "{text}"
        );
        let (row, column, text) = error("100,20,0.5\n200,30,\"1,5\"\n");
        assert_eq!((row, column), (2, 3), "{text}");
        assert!(text.contains("separates this file's fields"), "{text}");
    }

    #[test]
    fn a_table_round_trips_through_csv_and_scales_by_column() {
        let table = LengthsParams::Pairs {
            pairs: vec![[100.0, 20.0], [2500.5, 7.0]],
            weights: Some(vec![1.0, 0.25]),
        };
        let csv = table.to_csv().expect("a table");
        assert_eq!(lengths_from_csv(&csv), Ok(table.clone()));
        assert_eq!(
            table.scaled(2.0, 0.5),
            LengthsParams::Pairs {
                pairs: vec![[200.0, 10.0], [5001.0, 3.5]],
                weights: Some(vec![1.0, 0.25]),
            }
        );
        assert_eq!(LengthsParams::Correlated { rho: 0.5 }.to_csv(), None);
    }
}

//! The measured model: step times on a grid, bilinearly interpolated and
//! extrapolated linearly from the edge cells; a decode-only step is affine
//! in the KV tokens within a cell.
//!
//! The grid comes in two shapes. `table`: rows by tokens in the step,
//! columns by KV tokens read. `batch_table`, the shape decode profilers
//! sweep: rows by batch size, columns by context (KV tokens each sequence
//! reads). Validation keeps the user's grid as written (so each cell's
//! message names the cell they wrote) and notes its shape; a step of T
//! tokens reading K KV tokens is read at row T and column K / T in the
//! second shape, so a decode of b sequences with c tokens of context each
//! lands on (b, c). Resampling it onto a (tokens, KV tokens) grid instead
//! would invent cells (the product b x c differs on every row).

use super::DecodePiece;
use crate::error::{Checker, show};

/// What the columns measure.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Columns {
    /// KV tokens the step reads in all.
    KvTokens,
    /// KV tokens each of the step's tokens reads (a decode's context).
    ContextPerToken,
}

/// Measured step times \[s\] on a grid: `step_s[i][j]` at `rows[i]` tokens
/// in the step and column `columns[j]` (KV tokens, or context per token).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    kind: Columns,
    rows: Vec<f64>,
    columns: Vec<f64>,
    step_s: Vec<Vec<f64>>,
}

/// The field names of one grid shape, for its messages.
struct Names {
    rows: &'static str,
    columns: &'static str,
    /// What a row measures, in words.
    row_words: &'static str,
    /// What a column measures, in words.
    column_words: &'static str,
}

const TOKENS_KV: Names = Names {
    rows: "batch_tokens",
    columns: "kv_tokens",
    row_words: "tokens",
    column_words: "context",
};

const BATCH_CONTEXT: Names = Names {
    rows: "batch_sizes",
    columns: "context_tokens",
    row_words: "sequences",
    column_words: "context",
};

impl Table {
    /// The (tokens in the step, KV tokens read) grid, checked.
    pub(super) fn by_tokens(
        check: &mut Checker,
        batch_tokens: &[f64],
        kv_tokens: &[f64],
        step_s: &[Vec<f64>],
    ) -> Table {
        Table::build(
            check,
            Columns::KvTokens,
            &TOKENS_KV,
            batch_tokens,
            kv_tokens,
            step_s,
        )
    }

    /// The (batch size, context per sequence) grid, checked.
    pub(super) fn by_batch(
        check: &mut Checker,
        batch_sizes: &[f64],
        context_tokens: &[f64],
        step_s: &[Vec<f64>],
    ) -> Table {
        Table::build(
            check,
            Columns::ContextPerToken,
            &BATCH_CONTEXT,
            batch_sizes,
            context_tokens,
            step_s,
        )
    }

    /// Checks the grid (axes strictly increasing, one value per cell, never
    /// faster with more tokens or more context) and keeps it; problems go to
    /// `check`.
    fn build(
        check: &mut Checker,
        kind: Columns,
        names: &Names,
        rows: &[f64],
        columns: &[f64],
        step_s: &[Vec<f64>],
    ) -> Table {
        check_axis(check, names.rows, rows);
        check_axis(check, names.columns, columns);
        if step_s.len() != rows.len() {
            check.fail(
                "step_s",
                format!(
                    "must have one row per {} entry ({}), got {}",
                    names.rows,
                    rows.len(),
                    step_s.len()
                ),
            );
        }
        for (i, row) in step_s.iter().enumerate() {
            if row.windows(2).any(|w| w[1] < w[0]) {
                check.fail(
                    &format!("step_s[{i}]"),
                    format!(
                        "must not decrease as {} grow (more {} never makes a step faster)",
                        names.columns, names.column_words
                    ),
                );
            }
            if i > 0 && row.iter().zip(&step_s[i - 1]).any(|(v, prev)| v < prev) {
                check.fail(
                    &format!("step_s[{i}]"),
                    format!(
                        "must not be below the row before it (more {} never make a step faster)",
                        names.row_words
                    ),
                );
            }
            if row.len() != columns.len() {
                check.fail(
                    &format!("step_s[{i}]"),
                    format!(
                        "must have one value per {} entry ({}), got {}",
                        names.columns,
                        columns.len(),
                        row.len()
                    ),
                );
            }
            for (j, v) in row.iter().enumerate() {
                check.positive(&format!("step_s[{i}][{j}]"), *v);
            }
        }
        Table {
            kind,
            rows: rows.to_vec(),
            columns: columns.to_vec(),
            step_s: step_s.to_vec(),
        }
    }

    /// The same grid with every step time `factor` times as long.
    pub(super) fn scaled(self, factor: f64) -> Table {
        Table {
            step_s: self
                .step_s
                .iter()
                .map(|row| row.iter().map(|v| v * factor).collect())
                .collect(),
            ..self
        }
    }

    /// KV tokens per unit of the column axis in a step of `b` tokens: 1 for
    /// KV-token columns, `b` (at least 1) for context columns.
    fn kv_per_column(&self, b: f64) -> f64 {
        match self.kind {
            Columns::KvTokens => 1.0,
            Columns::ContextPerToken => b.max(1.0),
        }
    }

    /// Interpolated step time at `b` tokens and `k` KV tokens: clamped below
    /// the first grid value of each axis, extrapolated linearly beyond the last.
    ///
    /// Beyond the last row the columns' lines are extrapolated each with its
    /// own slope, and a column whose time grows more slowly with tokens can
    /// fall below the one before it there: read across such a row, the time
    /// would fall with more context, and extrapolated further across, turn
    /// negative (a 2 x 2 grid did, review n06). So the time never falls
    /// across the columns ([`column_pair`]): inside the grid, where a valid
    /// grid never falls, this changes nothing; outside it, the time is at
    /// least the first column's, itself at least the first cell's (every
    /// row slope is zero or more), so always positive.
    pub(super) fn at(&self, b: f64, k: f64) -> f64 {
        let x = (k / self.kv_per_column(b)).max(self.columns[0]);
        if self.columns.len() < 2 {
            return self.line_at(b, 0);
        }
        let j = cell(&self.columns, x);
        let (lo, hi) = self.column_pair(b, j);
        let (x0, x1) = (self.columns[j], self.columns[j + 1]);
        lo + (hi - lo) * (x - x0) / (x1 - x0)
    }

    pub(super) fn decode_piece(&self, b: f64, k: f64) -> DecodePiece {
        let per = self.kv_per_column(b);
        let first = self.columns[0] * per;
        if k < first || self.columns.len() < 2 {
            return DecodePiece {
                base_s: self.line_at(b, 0),
                slope_s_per_token: 0.0,
                valid_below: (k < first).then(|| first.ceil() as u64),
            };
        }
        let j = cell(&self.columns, k / per);
        let (lo, hi) = self.column_pair(b, j);
        let (k0, k1) = (self.columns[j] * per, self.columns[j + 1] * per);
        let slope = (hi - lo) / (k1 - k0);
        DecodePiece {
            base_s: lo - slope * k0,
            slope_s_per_token: slope,
            valid_below: (j + 2 < self.columns.len()).then(|| k1.ceil() as u64),
        }
    }

    /// Step times at `b` tokens on columns `j` and `j + 1`, the second
    /// never below the first (see [`Table::at`]).
    fn column_pair(&self, b: f64, j: usize) -> (f64, f64) {
        let lo = self.line_at(b, j);
        (lo, self.line_at(b, j + 1).max(lo))
    }

    /// Step time at `b` tokens on grid column `col`, interpolated along
    /// the rows (clamped below the first).
    fn line_at(&self, b: f64, col: usize) -> f64 {
        let b = b.max(self.rows[0]);
        if self.rows.len() < 2 {
            return self.step_s[0][col];
        }
        let i = cell(&self.rows, b);
        let (v0, v1) = (self.step_s[i][col], self.step_s[i + 1][col]);
        let (b0, b1) = (self.rows[i], self.rows[i + 1]);
        v0 + (v1 - v0) * (b - b0) / (b1 - b0)
    }
}

/// Index of the grid cell used for `x`: the last `i` with `axis\[i\] <= x`,
/// clamped so that `i + 1` is a valid index (the last cell extrapolates).
fn cell(axis: &[f64], x: f64) -> usize {
    let upper = axis.partition_point(|v| *v <= x);
    upper.saturating_sub(1).min(axis.len() - 2)
}

fn check_axis(check: &mut Checker, field: &str, axis: &[f64]) {
    if axis.is_empty() {
        check.fail(field, "must hold at least one grid value");
    }
    for (i, v) in axis.iter().enumerate() {
        check.non_negative(&format!("{field}[{i}]"), *v);
    }
    if let Some(w) = axis.windows(2).find(|w| w[1] <= w[0]) {
        check.fail(
            field,
            format!(
                "must be strictly increasing, but {} is followed by {}",
                show(w[0]),
                show(w[1])
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::model::scenario::Scenario;
    use crate::model::step_time::tests::{check_pieces, decode_shape, model_of};
    use crate::params::{ScenarioParams, StepTimeParams};

    #[test]
    fn table_interpolates_and_extrapolates_and_pieces_match() {
        let m = model_of(StepTimeParams::Table {
            batch_tokens: vec![1.0, 256.0, 8192.0],
            kv_tokens: vec![0.0, 100_000.0, 1_000_000.0],
            step_s: vec![
                vec![0.007, 0.009, 0.03],
                vec![0.01, 0.014, 0.05],
                vec![0.2, 0.22, 0.3],
            ],
        });
        // On a grid point.
        assert!((m.step_s(&decode_shape(256, 100_000)) - 0.014).abs() < 1e-15);
        // Midway along the KV axis at batch 1.
        assert!((m.step_s(&decode_shape(1, 50_000)) - 0.008).abs() < 1e-15);
        // Beyond the grid: linear extrapolation of the last cell.
        let far = m.step_s(&decode_shape(1, 1_900_000));
        assert!(
            (far - (0.03 + 0.021 * 0.9 / 0.9)).abs() < 1e-12,
            "far = {far}"
        );
        for n in [1, 100, 256, 4000] {
            check_pieces(&m, n, 0, 3_000_000);
        }
    }

    /// Review n06: a valid 2 x 2 grid whose second column grows more
    /// slowly with tokens than its first. Beyond the last row the second
    /// column's line falls below the first's, and read across to many KV
    /// tokens the time turned negative (-19 s at 2,000 tokens and 2 M KV
    /// tokens). It never falls with more context now, and the decode pieces
    /// the fast engine sums agree with it there.
    #[test]
    fn extrapolation_never_falls_with_more_context() {
        let m = model_of(StepTimeParams::Table {
            batch_tokens: vec![1.0, 2.0],
            kv_tokens: vec![0.0, 1000.0],
            step_s: vec![vec![0.01, 0.02], vec![0.011, 0.0205]],
        });
        // Inside the grid nothing moves: 2 tokens and 500 KV tokens are
        // midway along the second row.
        let mid = m.step_s(&decode_shape(2, 500));
        assert!((mid - (0.011 + 0.0205) / 2.0).abs() < 1e-15, "{mid}");
        for tokens in [2, 10, 2000, 100_000] {
            let mut last = 0.0;
            for kv in [0, 1000, 10_000, 2_000_000, 1_000_000_000] {
                let t = m.step_s(&decode_shape(tokens, kv));
                assert!(
                    t > 0.0 && t >= last,
                    "{tokens} tokens, {kv} KV: {t} after {last}"
                );
                last = t;
            }
        }
        // At 2,000 tokens the first column's line reads 0.01 + 0.001 x 1,999:
        // the second's (0.02 + 0.0005 x 1,999) is below it, so the time
        // stays at the first's however much context.
        let t = m.step_s(&decode_shape(2000, 2_000_000));
        assert!((t - (0.01 + 0.001 * 1999.0)).abs() < 1e-12, "{t}");
        for n in [2, 100, 2000] {
            check_pieces(&m, n, 0, 3_000_000);
        }
    }

    /// A decode sweep by batch size and context: 1 and 8 sequences, 1,000
    /// and 3,000 tokens of context each.
    fn batch_table() -> StepTimeParams {
        StepTimeParams::BatchTable {
            batch_sizes: vec![1.0, 8.0],
            context_tokens: vec![1000.0, 3000.0],
            step_s: vec![vec![0.010, 0.012], vec![0.020, 0.030]],
        }
    }

    #[test]
    fn a_batch_and_context_table_reads_decodes_at_their_batch_and_context() {
        let m = model_of(batch_table());
        // On a grid point: 8 sequences of 3,000 tokens read 24,000 KV tokens.
        assert!((m.step_s(&decode_shape(8, 24_000)) - 0.030).abs() < 1e-15);
        // 8 sequences of 2,000 tokens: midway along the context axis,
        // (0.020 + 0.030) / 2.
        assert!((m.step_s(&decode_shape(8, 16_000)) - 0.025).abs() < 1e-15);
        // 4 sequences of 1,000 tokens: 3/7 of the way from batch 1 to 8,
        // 0.010 + (0.020 - 0.010) x 3 / 7.
        let t = m.step_s(&decode_shape(4, 4_000));
        assert!((t - (0.010 + 0.010 * 3.0 / 7.0)).abs() < 1e-15, "{t}");
        // 4 sequences of 2,000 tokens: the four corners, each weighted
        // (3/7 or 4/7) x 1/2: 0.011 + (0.025 - 0.011) x 3 / 7.
        let t = m.step_s(&decode_shape(4, 8_000));
        assert!((t - (0.011 + 0.014 * 3.0 / 7.0)).abs() < 1e-15, "{t}");
        // Beyond the context axis: 1 sequence of 5,000 tokens extrapolates
        // the last cell, 0.012 + 0.002 x (5,000 - 3,000) / 2,000.
        let t = m.step_s(&decode_shape(1, 5_000));
        assert!((t - 0.014).abs() < 1e-15, "{t}");
        for n in [1, 4, 8, 100] {
            check_pieces(&m, n, 0, 2_000_000);
        }
    }

    #[test]
    fn a_batch_table_names_its_own_fields() {
        let params = ScenarioParams {
            step_time: StepTimeParams::BatchTable {
                batch_sizes: vec![8.0, 1.0],
                context_tokens: vec![1000.0, 3000.0],
                step_s: vec![vec![0.01, 0.009], vec![0.02, 0.03]],
            },
            ..ScenarioParams::overnight_batch()
        };
        let e = Scenario::try_from(params).unwrap_err();
        assert!(e.for_field("step_time.batch_sizes").is_some(), "{e}");
        let row = e.for_field("step_time.step_s[0]").unwrap_or_default();
        assert!(row.contains("context_tokens grow"), "{e}");
    }

    #[test]
    fn table_errors_name_the_cell() {
        let params = ScenarioParams {
            step_time: StepTimeParams::Table {
                batch_tokens: vec![1.0, 1.0],
                kv_tokens: vec![0.0],
                step_s: vec![vec![0.01], vec![-1.0]],
            },
            ..ScenarioParams::overnight_batch()
        };
        let e = Scenario::try_from(params).unwrap_err();
        assert!(
            e.for_field("step_time.batch_tokens")
                .unwrap()
                .contains("increasing")
        );
        assert!(e.for_field("step_time.step_s[1][0]").is_some(), "{e}");
    }
}

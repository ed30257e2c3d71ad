//! The measured model: step times on a grid of (tokens in the step, KV
//! tokens read), bilinearly interpolated and extrapolated linearly from the
//! edge cells; a decode-only step is affine in the KV tokens within a cell.

use super::DecodePiece;
use crate::error::{Checker, show};

/// Measured step times \[s\] on a grid: `step_s[i][j]` at `batch_tokens[i]`
/// tokens in the step and `kv_tokens[j]` KV tokens read.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    batch_tokens: Vec<f64>,
    kv_tokens: Vec<f64>,
    step_s: Vec<Vec<f64>>,
}

impl Table {
    /// Checks the grid (axes strictly increasing, one value per cell, never
    /// faster with more tokens or more context) and keeps it; problems go to
    /// `check`.
    pub(super) fn build(
        check: &mut Checker,
        batch_tokens: &[f64],
        kv_tokens: &[f64],
        step_s: &[Vec<f64>],
    ) -> Table {
        check_axis(check, "batch_tokens", batch_tokens);
        check_axis(check, "kv_tokens", kv_tokens);
        if step_s.len() != batch_tokens.len() {
            check.fail(
                "step_s",
                format!(
                    "must have one row per batch_tokens entry ({}), got {}",
                    batch_tokens.len(),
                    step_s.len()
                ),
            );
        }
        for (i, row) in step_s.iter().enumerate() {
            if row.windows(2).any(|w| w[1] < w[0]) {
                check.fail(
                    &format!("step_s[{i}]"),
                    "must not decrease as kv_tokens grow (more context never makes a step faster)",
                );
            }
            if i > 0 && row.iter().zip(&step_s[i - 1]).any(|(v, prev)| v < prev) {
                check.fail(
                    &format!("step_s[{i}]"),
                    "must not be below the row before it (more tokens never make a step faster)",
                );
            }
            if row.len() != kv_tokens.len() {
                check.fail(
                    &format!("step_s[{i}]"),
                    format!(
                        "must have one value per kv_tokens entry ({}), got {}",
                        kv_tokens.len(),
                        row.len()
                    ),
                );
            }
            for (j, v) in row.iter().enumerate() {
                check.positive(&format!("step_s[{i}][{j}]"), *v);
            }
        }
        Table {
            batch_tokens: batch_tokens.to_vec(),
            kv_tokens: kv_tokens.to_vec(),
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

    /// Interpolated step time at `b` tokens and `k` KV tokens: clamped below
    /// the first grid value of each axis, extrapolated linearly beyond the last.
    pub(super) fn at(&self, b: f64, k: f64) -> f64 {
        let k = k.max(self.kv_tokens[0]);
        if self.kv_tokens.len() < 2 {
            return self.line_at(b, 0);
        }
        let j = cell(&self.kv_tokens, k);
        let (lo, hi) = (self.line_at(b, j), self.line_at(b, j + 1));
        let (k0, k1) = (self.kv_tokens[j], self.kv_tokens[j + 1]);
        lo + (hi - lo) * (k - k0) / (k1 - k0)
    }

    pub(super) fn decode_piece(&self, b: f64, k: f64) -> DecodePiece {
        let first = self.kv_tokens[0];
        if k < first || self.kv_tokens.len() < 2 {
            return DecodePiece {
                base_s: self.line_at(b, 0),
                slope_s_per_token: 0.0,
                valid_below: (k < first).then(|| first.ceil() as u64),
            };
        }
        let j = cell(&self.kv_tokens, k);
        let (lo, hi) = (self.line_at(b, j), self.line_at(b, j + 1));
        let (k0, k1) = (self.kv_tokens[j], self.kv_tokens[j + 1]);
        let slope = (hi - lo) / (k1 - k0);
        DecodePiece {
            base_s: lo - slope * k0,
            slope_s_per_token: slope,
            valid_below: (j + 2 < self.kv_tokens.len()).then(|| k1.ceil() as u64),
        }
    }

    /// Step time at `b` tokens on KV grid column `col`, interpolated along
    /// the batch axis (clamped below its first value).
    fn line_at(&self, b: f64, col: usize) -> f64 {
        let b = b.max(self.batch_tokens[0]);
        if self.batch_tokens.len() < 2 {
            return self.step_s[0][col];
        }
        let i = cell(&self.batch_tokens, b);
        let (v0, v1) = (self.step_s[i][col], self.step_s[i + 1][col]);
        let (b0, b1) = (self.batch_tokens[i], self.batch_tokens[i + 1]);
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

//! Step-time models: how long one engine step takes, given what it contains.
//!
//! Every model is a function of a [`StepShape`]. For the fast engine each
//! model also describes a decode-only step as a *piece*: an affine function of
//! the total decode context, valid over a known range (see
//! [`StepTimeModel::decode_piece`]). Within a piece, k steps sum in closed form.
//!
//! # Formulas
//! - **alpha/beta** (the seeds' model): `t = overhead + alpha x P + beta x \[D > 0\]`,
//!   P the prefill tokens in the step and D the decoding sequences.
//! - **roofline**: `t = overhead + max(FLOPs / (peak x MFU), bytes / (bandwidth x MBU))`
//!   with `FLOPs = 2 x active_params x (P + D) + 4 x layers x q_heads x head_dim x
//!   (attention pairs)` and `bytes = weight bytes read + KV bytes per token x
//!   (KV tokens read)`. Attention pairs are, for a prefill chunk of c tokens after
//!   p computed ones, `c p + c (c + 1) / 2`, and for a decode with L tokens of
//!   context, `L + 1`. Weight bytes read: all of a dense model; for a MoE the
//!   expected touched fraction `max(a, 1 - (1 - a)^(P + D))` of the weights, a =
//!   active / total parameters. Peak and bandwidth are per replica (per GPU x TP).
//! - **table**: measured step times on a grid of (tokens in the step, KV tokens
//!   read), bilinearly interpolated, extrapolated linearly from the edge cells.

use crate::error::{Checker, show};
use crate::model::memory::MemoryBudget;
use crate::params::{ScenarioParams, StepTimeParams};

/// What one step contains, as the step-time models see it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepShape {
    /// Prompt tokens computed in this step (all chunks).
    pub prefill_tokens: u64,
    /// Attention (query, key) pairs of the prefill chunks.
    pub prefill_attention_pairs: f64,
    /// KV tokens the prefill chunks read and write (prior context + chunk).
    pub prefill_kv_tokens: u64,
    /// Sequences decoding one token each.
    pub decode_seqs: u64,
    /// KV tokens the decodes read: sum over decodes of (context + 1).
    pub decode_kv_tokens: u64,
}

impl StepShape {
    /// Adds a prefill chunk of `chunk` tokens after `computed` tokens.
    /// (Saturating: estimates may pass absurd means without overflowing.)
    pub fn add_prefill(&mut self, computed: u64, chunk: u64) {
        let c = chunk as f64;
        self.prefill_tokens = self.prefill_tokens.saturating_add(chunk);
        self.prefill_attention_pairs += c * computed as f64 + c * (c + 1.0) / 2.0;
        self.prefill_kv_tokens = self
            .prefill_kv_tokens
            .saturating_add(computed.saturating_add(chunk));
    }

    /// Adds `times` prefill chunks of `chunk` tokens, each after `computed`
    /// tokens (as `times` calls of [`Self::add_prefill`], in closed form).
    pub fn add_prefill_repeated(&mut self, computed: u64, chunk: u64, times: u64) {
        let (c, n) = (chunk as f64, times as f64);
        self.prefill_tokens = self
            .prefill_tokens
            .saturating_add(chunk.saturating_mul(times));
        self.prefill_attention_pairs += n * (c * computed as f64 + c * (c + 1.0) / 2.0);
        self.prefill_kv_tokens = self
            .prefill_kv_tokens
            .saturating_add(computed.saturating_add(chunk).saturating_mul(times));
    }

    /// Adds a decode of a sequence with `computed` tokens in its KV cache.
    pub fn add_decode(&mut self, computed: u64) {
        self.decode_seqs += 1;
        self.decode_kv_tokens = self
            .decode_kv_tokens
            .saturating_add(computed.saturating_add(1));
    }

    pub fn tokens(&self) -> u64 {
        self.prefill_tokens.saturating_add(self.decode_seqs)
    }
}

/// A validated step-time model with its derived constants.
#[derive(Clone, Debug, PartialEq)]
pub enum StepTimeModel {
    AlphaBeta {
        alpha: f64,
        beta: f64,
        overhead: f64,
    },
    Roofline(Roofline),
    Table(Table),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Roofline {
    pub overhead_s: f64,
    /// 2 x active parameters \[FLOP per token\].
    pub flops_per_token: f64,
    /// 4 x layers x q_heads x head_dim \[FLOP per attention pair\].
    pub flops_per_pair: f64,
    pub weight_bytes: f64,
    /// Active / total parameters (1 for a dense model).
    pub active_fraction: f64,
    pub kv_bytes_per_token: f64,
    /// Peak x MFU for the replica \[FLOP/s\].
    pub flops_per_s: f64,
    /// Bandwidth x MBU for the replica \[bytes/s\].
    pub bytes_per_s: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    batch_tokens: Vec<f64>,
    kv_tokens: Vec<f64>,
    step_s: Vec<Vec<f64>>,
}

/// A decode-only step time as an affine function of the total decode KV
/// tokens K: `t(K) = base_s + slope_s_per_token x K`, valid for K below
/// `valid_below` (unbounded when `None`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecodePiece {
    pub base_s: f64,
    pub slope_s_per_token: f64,
    pub valid_below: Option<u64>,
}

impl DecodePiece {
    pub fn at(&self, kv_tokens: u64) -> f64 {
        self.base_s + self.slope_s_per_token * kv_tokens as f64
    }
}

impl StepTimeModel {
    pub(crate) fn build(params: &ScenarioParams, check: &mut Checker) -> Option<StepTimeModel> {
        let before = check.has_errors();
        let model = match &params.step_time {
            StepTimeParams::AlphaBeta {
                alpha_s_per_token,
                beta_s_per_step,
                overhead_s,
            } => {
                check.non_negative("alpha_s_per_token", *alpha_s_per_token);
                check.non_negative("beta_s_per_step", *beta_s_per_step);
                check.non_negative("overhead_s", *overhead_s);
                if *overhead_s + *beta_s_per_step <= 0.0 {
                    check.fail(
                        "beta_s_per_step",
                        "a decode step must take time: beta or overhead must be positive",
                    );
                }
                if *overhead_s + *alpha_s_per_token <= 0.0 {
                    check.fail(
                        "alpha_s_per_token",
                        "a prefill step must take time: alpha or overhead must be positive",
                    );
                }
                StepTimeModel::AlphaBeta {
                    alpha: *alpha_s_per_token,
                    beta: *beta_s_per_step,
                    overhead: *overhead_s,
                }
            }
            StepTimeParams::Roofline {
                mfu,
                mbu,
                overhead_s,
            } => {
                check.within("mfu", *mfu, 1e-6, 1.0);
                check.within("mbu", *mbu, 1e-6, 1.0);
                check.non_negative("overhead_s", *overhead_s);
                let m = &params.model;
                let memory = MemoryBudget::compute(params);
                let tp = memory.gpus_per_replica as f64;
                let active = m.active_params_b.unwrap_or(m.params_b);
                StepTimeModel::Roofline(Roofline {
                    overhead_s: *overhead_s,
                    flops_per_token: 2.0 * active * 1e9,
                    flops_per_pair: 4.0 * m.layers as f64 * m.q_heads as f64 * m.head_dim as f64,
                    weight_bytes: memory.weight_bytes,
                    active_fraction: if m.params_b > 0.0 {
                        (active / m.params_b).min(1.0)
                    } else {
                        1.0
                    },
                    kv_bytes_per_token: memory.kv_bytes_per_token,
                    flops_per_s: tp * params.hardware.peak_tflops * 1e12 * mfu,
                    bytes_per_s: tp * params.hardware.bandwidth_gb_s * 1e9 * mbu,
                })
            }
            StepTimeParams::Table {
                batch_tokens,
                kv_tokens,
                step_s,
            } => {
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
                StepTimeModel::Table(Table {
                    batch_tokens: batch_tokens.clone(),
                    kv_tokens: kv_tokens.clone(),
                    step_s: step_s.clone(),
                })
            }
        };
        (check.has_errors() == before).then_some(model.scaled(params.step_time_scale))
    }

    /// The same model with every step `factor` times as long (a calibration
    /// multiplier, [`ScenarioParams::step_time_scale`]). Every constant is
    /// scaled, not the result, so `step_s` and `decode_piece` stay consistent.
    /// A factor that is not a positive number (rejected by validation) leaves
    /// the model unchanged.
    fn scaled(self, factor: f64) -> StepTimeModel {
        if !(factor.is_finite() && factor > 0.0) || factor == 1.0 {
            return self;
        }
        match self {
            StepTimeModel::AlphaBeta {
                alpha,
                beta,
                overhead,
            } => StepTimeModel::AlphaBeta {
                alpha: alpha * factor,
                beta: beta * factor,
                overhead: overhead * factor,
            },
            StepTimeModel::Roofline(r) => StepTimeModel::Roofline(Roofline {
                overhead_s: r.overhead_s * factor,
                flops_per_s: r.flops_per_s / factor,
                bytes_per_s: r.bytes_per_s / factor,
                ..r
            }),
            StepTimeModel::Table(t) => StepTimeModel::Table(Table {
                step_s: t
                    .step_s
                    .iter()
                    .map(|row| row.iter().map(|v| v * factor).collect())
                    .collect(),
                ..t
            }),
        }
    }

    /// Duration of a step \[s\].
    pub fn step_s(&self, shape: &StepShape) -> f64 {
        match self {
            StepTimeModel::AlphaBeta {
                alpha,
                beta,
                overhead,
            } => {
                let decode = if shape.decode_seqs > 0 { *beta } else { 0.0 };
                overhead + alpha * shape.prefill_tokens as f64 + decode
            }
            StepTimeModel::Roofline(r) => {
                let tokens = shape.tokens();
                let flops = r.flops_per_token * tokens as f64
                    + r.flops_per_pair
                        * (shape.prefill_attention_pairs + shape.decode_kv_tokens as f64);
                let bytes = r.weight_bytes_read(tokens)
                    + r.kv_bytes_per_token
                        * (shape.prefill_kv_tokens + shape.decode_kv_tokens) as f64;
                r.overhead_s + (flops / r.flops_per_s).max(bytes / r.bytes_per_s)
            }
            StepTimeModel::Table(t) => t.at(
                shape.tokens() as f64,
                (shape.prefill_kv_tokens + shape.decode_kv_tokens) as f64,
            ),
        }
    }

    /// The affine piece that gives decode-only step times for `decode_seqs`
    /// sequences around `kv_tokens` total decode KV tokens (as in
    /// [`StepShape::decode_kv_tokens`]). For every K in
    /// `[kv_tokens, valid_below)`, `piece.at(K)` equals `step_s` of a
    /// decode-only step with that many KV tokens, up to rounding.
    pub fn decode_piece(&self, decode_seqs: u64, kv_tokens: u64) -> DecodePiece {
        match self {
            StepTimeModel::AlphaBeta { beta, overhead, .. } => DecodePiece {
                base_s: overhead + beta,
                slope_s_per_token: 0.0,
                valid_below: None,
            },
            StepTimeModel::Roofline(r) => r.decode_lines(decode_seqs).piece(kv_tokens),
            StepTimeModel::Table(t) => t.decode_piece(decode_seqs as f64, kv_tokens as f64),
        }
    }
}

/// [`StepTimeModel::decode_piece`] with the work that depends on the
/// sequence count only done once: the fast engine asks for a piece at every
/// run it plans, and for the roofline that is six divisions per request.
#[derive(Clone, Debug)]
pub struct DecodePieces {
    model: StepTimeModel,
    /// The roofline's decode lines by sequence count (empty for the other models).
    lines: Vec<DecodeLines>,
}

impl DecodePieces {
    /// Tabulates up to `max_seqs` sequences (at most [`Self::MAX_TABLE`];
    /// larger counts are computed when asked).
    pub fn new(model: &StepTimeModel, max_seqs: u64) -> DecodePieces {
        let lines = match model {
            StepTimeModel::Roofline(r) => (0..=max_seqs.min(Self::MAX_TABLE))
                .map(|n| r.decode_lines(n))
                .collect(),
            _ => Vec::new(),
        };
        DecodePieces {
            model: model.clone(),
            lines,
        }
    }

    /// Sequence counts tabulated at most.
    pub const MAX_TABLE: u64 = 4096;

    /// Equals `model.decode_piece(decode_seqs, kv_tokens)`, bit for bit.
    #[inline]
    pub fn piece(&self, decode_seqs: u64, kv_tokens: u64) -> DecodePiece {
        match self.lines.get(decode_seqs as usize) {
            Some(lines) => lines.piece(kv_tokens),
            None => self.model.decode_piece(decode_seqs, kv_tokens),
        }
    }
}

/// The two lines of a roofline decode-only step with a fixed number of
/// sequences, as functions of the decode KV tokens K: compute `a_c + b_c K`
/// and memory `a_m + b_m K`. They depend on the sequence count only.
#[derive(Clone, Copy, Debug, PartialEq)]
struct DecodeLines {
    overhead_s: f64,
    a_c: f64,
    b_c: f64,
    a_m: f64,
    b_m: f64,
    /// Where the lines cross (the same quotient whichever line is above).
    crossing: f64,
}

impl DecodeLines {
    /// The piece that holds at `kv_tokens`: the line that is above there,
    /// valid until the other overtakes it.
    fn piece(&self, kv_tokens: u64) -> DecodePiece {
        let k = kv_tokens as f64;
        let (a_c, b_c, a_m, b_m) = (self.a_c, self.b_c, self.a_m, self.b_m);
        let compute_wins = a_c + b_c * k > a_m + b_m * k;
        let (a, b, a_o, b_o) = if compute_wins {
            (a_c, b_c, a_m, b_m)
        } else {
            (a_m, b_m, a_c, b_c)
        };
        // The other line overtakes where a + b K = a_o + b_o K, if it grows faster.
        let valid_below = if b_o > b {
            // The first integer K at which the other line is strictly larger,
            // from floor(crossing) (by truncation: it is positive here, and
            // from 2^53 on every f64 is whole) or K itself.
            let crossing = self.crossing;
            let mut first = if crossing > k {
                if crossing < 9.0e15 {
                    crossing as u64 as f64
                } else {
                    crossing
                }
            } else {
                k
            };
            while a_o + b_o * first <= a + b * first {
                first += 1.0;
            }
            Some(first.min(u64::MAX as f64 / 2.0) as u64)
        } else {
            None
        };
        DecodePiece {
            base_s: self.overhead_s + a,
            slope_s_per_token: b,
            valid_below,
        }
    }
}

impl Roofline {
    /// The decode lines for `decode_seqs` sequences.
    fn decode_lines(&self, decode_seqs: u64) -> DecodeLines {
        let n = decode_seqs as f64;
        let (a_c, b_c) = (
            self.flops_per_token * n / self.flops_per_s,
            self.flops_per_pair / self.flops_per_s,
        );
        let (a_m, b_m) = (
            self.weight_bytes_read(decode_seqs) / self.bytes_per_s,
            self.kv_bytes_per_token / self.bytes_per_s,
        );
        // (a_c - a_m) / (b_m - b_c) equals (a_m - a_c) / (b_c - b_m) exactly.
        let crossing = if b_c > b_m {
            (a_m - a_c) / (b_c - b_m)
        } else {
            (a_c - a_m) / (b_m - b_c)
        };
        DecodeLines {
            overhead_s: self.overhead_s,
            a_c,
            b_c,
            a_m,
            b_m,
            crossing,
        }
    }

    /// Weight bytes read by a step with `tokens` tokens.
    fn weight_bytes_read(&self, tokens: u64) -> f64 {
        if self.active_fraction >= 1.0 {
            self.weight_bytes
        } else {
            let untouched = libm::pow(1.0 - self.active_fraction, tokens as f64);
            self.weight_bytes * self.active_fraction.max(1.0 - untouched)
        }
    }
}

impl Table {
    /// Interpolated step time at `b` tokens and `k` KV tokens: clamped below
    /// the first grid value of each axis, extrapolated linearly beyond the last.
    fn at(&self, b: f64, k: f64) -> f64 {
        let k = k.max(self.kv_tokens[0]);
        if self.kv_tokens.len() < 2 {
            return self.line_at(b, 0);
        }
        let j = cell(&self.kv_tokens, k);
        let (lo, hi) = (self.line_at(b, j), self.line_at(b, j + 1));
        let (k0, k1) = (self.kv_tokens[j], self.kv_tokens[j + 1]);
        lo + (hi - lo) * (k - k0) / (k1 - k0)
    }

    fn decode_piece(&self, b: f64, k: f64) -> DecodePiece {
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
    use super::*;
    use crate::model::scenario::Scenario;
    use crate::params::{ScenarioParams, StepTimeParams};

    fn model_of(step_time: StepTimeParams) -> StepTimeModel {
        let params = ScenarioParams {
            step_time,
            ..ScenarioParams::overnight_batch()
        };
        Scenario::try_from(params)
            .expect("valid")
            .step_time()
            .clone()
    }

    fn decode_shape(n: u64, kv: u64) -> StepShape {
        StepShape {
            decode_seqs: n,
            decode_kv_tokens: kv,
            ..StepShape::default()
        }
    }

    #[test]
    fn tabulated_pieces_are_the_models_pieces() {
        let models = [
            model_of(StepTimeParams::default()),
            model_of(StepTimeParams::AlphaBeta {
                alpha_s_per_token: 1e-4,
                beta_s_per_step: 0.02,
                overhead_s: 0.001,
            }),
        ];
        for model in &models {
            let pieces = DecodePieces::new(model, 300);
            for n in [0, 1, 7, 64, 255, 300, 301, 5000] {
                for k in [0, 1, 999, 123_456, 10_000_000] {
                    assert_eq!(pieces.piece(n, k), model.decode_piece(n, k), "n={n} k={k}");
                }
            }
        }
    }

    /// The piece must reproduce `step_s` everywhere it claims to be valid, and
    /// stop exactly where the formula changes.
    fn check_pieces(model: &StepTimeModel, n: u64, mut k: u64, until: u64) {
        while k < until {
            let piece = model.decode_piece(n, k);
            let end = piece.valid_below.unwrap_or(until).min(until);
            assert!(end > k, "piece at K={k} must cover K itself");
            for kk in [k, (k + end) / 2, end - 1] {
                let exact = model.step_s(&decode_shape(n, kk));
                let approx = piece.at(kk);
                assert!(
                    (exact - approx).abs() <= 1e-12 * exact.abs().max(1e-9),
                    "n={n} K={kk}: step_s {exact} but piece gives {approx}"
                );
            }
            k = end;
        }
    }

    #[test]
    fn alpha_beta_charges_prefill_tokens_and_one_beta_per_decoding_step() {
        let m = model_of(StepTimeParams::AlphaBeta {
            alpha_s_per_token: 1e-4,
            beta_s_per_step: 0.02,
            overhead_s: 0.001,
        });
        let mut shape = decode_shape(10, 5000);
        assert!((m.step_s(&shape) - 0.021).abs() < 1e-15);
        shape.add_prefill(0, 512);
        assert!((m.step_s(&shape) - (0.021 + 0.0512)).abs() < 1e-15);
        check_pieces(&m, 10, 0, 1_000_000);
    }

    #[test]
    fn roofline_decode_is_memory_bound_at_small_batch_and_pieces_match() {
        let m = model_of(StepTimeParams::default());
        let StepTimeModel::Roofline(r) = &m else {
            panic!("roofline expected")
        };
        // One decode of Llama-3.1-8B on one H100: weights (16.06 GB) over
        // 3.35 TB/s x 0.75 is about 6.4 ms, plus the 2 ms overhead.
        let t = m.step_s(&decode_shape(1, 1000));
        let expected =
            r.overhead_s + (r.weight_bytes + 1000.0 * r.kv_bytes_per_token) / r.bytes_per_s;
        assert!((t - expected).abs() < 1e-12);
        assert!((t - 0.0084).abs() < 0.0005, "t = {t}");
        for n in [1, 8, 64, 256, 1024] {
            check_pieces(&m, n, n, 50_000_000);
        }
    }

    #[test]
    fn roofline_prefill_is_compute_bound_and_quadratic_in_context() {
        let m = model_of(StepTimeParams::default());
        let mut short = StepShape::default();
        short.add_prefill(0, 8192);
        let mut long = StepShape::default();
        long.add_prefill(100_000, 8192);
        // Attention over 100k tokens of context makes the same chunk much slower.
        assert!(m.step_s(&long) > 2.0 * m.step_s(&short));
    }

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
    fn step_time_scale_multiplies_every_model_and_keeps_pieces_consistent() {
        let models = [
            StepTimeParams::AlphaBeta {
                alpha_s_per_token: 1e-4,
                beta_s_per_step: 0.02,
                overhead_s: 0.001,
            },
            StepTimeParams::default(),
            StepTimeParams::Table {
                batch_tokens: vec![1.0, 8192.0],
                kv_tokens: vec![0.0, 1_000_000.0],
                step_s: vec![vec![0.007, 0.03], vec![0.2, 0.3]],
            },
        ];
        for step_time in models {
            let plain = model_of(step_time.clone());
            let scaled = Scenario::try_from(ScenarioParams {
                step_time,
                step_time_scale: 1.25,
                ..ScenarioParams::overnight_batch()
            })
            .expect("valid")
            .step_time()
            .clone();
            let mut shape = decode_shape(64, 200_000);
            shape.add_prefill(1000, 512);
            for s in [shape, decode_shape(1, 100), decode_shape(256, 2_000_000)] {
                let (a, b) = (plain.step_s(&s), scaled.step_s(&s));
                assert!((b - 1.25 * a).abs() <= 1e-12 * a, "{b} is not 1.25 x {a}");
            }
            check_pieces(&scaled, 64, 64, 20_000_000);
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

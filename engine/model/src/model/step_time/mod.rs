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
//! - **operations** (`operations.rs`): a sum of per-operation costs, each
//!   with its own roofline and efficiency (linear layers, LM head, prefill
//!   and decode attention, per-sequence kernel cost, KV writes, all-reduces,
//!   overhead); the formula is in that module.
//! - **table**: measured step times on a grid of (tokens in the step, KV tokens
//!   read), or of (batch size, context per sequence), bilinearly
//!   interpolated, extrapolated linearly from the edge cells.
//!
//! The roofline's constants and decode lines are in `roofline.rs`, the
//! measured table in `table.rs`.

use crate::error::Checker;
use crate::params::{CudaGraphs, ScenarioParams, StepTimeParams};

mod operations;
mod roofline;
mod table;

pub use operations::{Efficiencies, Family, Operations};
pub use roofline::{DecodePieces, Roofline};
pub use table::Table;

/// What one step contains, as the step-time models see it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepShape {
    /// Prompt tokens computed in this step (all chunks).
    pub prefill_tokens: u64,
    /// Attention (query, key) pairs of the prefill chunks.
    pub prefill_attention_pairs: f64,
    /// KV tokens the prefill chunks read and write (prior context + chunk).
    pub prefill_kv_tokens: u64,
    /// Prefill chunks (each samples a token if it ends its prompt; the
    /// per-operation model charges the LM head for every one).
    pub prefill_seqs: u64,
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
        self.prefill_seqs += 1;
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
        self.prefill_seqs = self.prefill_seqs.saturating_add(times);
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
    Operations(Operations),
    Table(Table),
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
    pub fn build(params: &ScenarioParams, check: &mut Checker) -> Option<StepTimeModel> {
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
                StepTimeModel::Roofline(Roofline::of(params, *mfu, *mbu, *overhead_s))
            }
            StepTimeParams::Operations(ops) => {
                let family = Family::of(&params.hardware.name);
                let efficiencies = Efficiencies::resolve(ops, family, check);
                if let CudaGraphs::DecodeBatchSizes(sizes) = &ops.cuda_graphs
                    && (sizes.is_empty() || sizes.contains(&0))
                {
                    check.fail(
                        "cuda_graphs.decode_batch_sizes",
                        "must list batch sizes of at least 1 each (for no padding, choose \"off\")",
                    );
                }
                StepTimeModel::Operations(Operations::of(
                    params,
                    family,
                    efficiencies,
                    &ops.cuda_graphs,
                ))
            }
            StepTimeParams::Table {
                batch_tokens,
                kv_tokens,
                step_s,
            } => StepTimeModel::Table(Table::by_tokens(check, batch_tokens, kv_tokens, step_s)),
            StepTimeParams::BatchTable {
                batch_sizes,
                context_tokens,
                step_s,
            } => StepTimeModel::Table(Table::by_batch(check, batch_sizes, context_tokens, step_s)),
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
            StepTimeModel::Roofline(r) => StepTimeModel::Roofline(r.scaled(factor)),
            StepTimeModel::Operations(o) => StepTimeModel::Operations(o.scaled(factor)),
            StepTimeModel::Table(t) => StepTimeModel::Table(t.scaled(factor)),
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
            StepTimeModel::Operations(o) => o.step_s(shape),
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
            StepTimeModel::Operations(o) => o.decode_piece(decode_seqs),
            StepTimeModel::Table(t) => t.decode_piece(decode_seqs as f64, kv_tokens as f64),
        }
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::model::scenario::Scenario;

    /// The default scenario's step-time model under `step_time`.
    pub fn model_of(step_time: StepTimeParams) -> StepTimeModel {
        let params = ScenarioParams {
            step_time,
            ..ScenarioParams::overnight_batch()
        };
        Scenario::try_from(params)
            .expect("valid")
            .step_time()
            .clone()
    }

    pub(super) fn decode_shape(n: u64, kv: u64) -> StepShape {
        StepShape {
            decode_seqs: n,
            decode_kv_tokens: kv,
            ..StepShape::default()
        }
    }

    /// The piece must reproduce `step_s` everywhere it claims to be valid, and
    /// stop exactly where the formula changes.
    pub(super) fn check_pieces(model: &StepTimeModel, n: u64, mut k: u64, until: u64) {
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
}

//! The roofline model: a step lasts as long as the larger of its compute
//! and its memory traffic takes, plus a fixed overhead. For decode-only
//! steps that is the larger of two lines in the decode KV tokens, which
//! [`DecodePieces`] tabulates by sequence count.

use super::{DecodePiece, StepTimeModel};
use crate::model::memory::MemoryBudget;
use crate::params::ScenarioParams;

/// The roofline's constants for one replica, derived once from the model
/// and the hardware.
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

impl Roofline {
    /// The constants of `params`' model on its hardware at the given
    /// utilisations (checked by the caller).
    pub(super) fn of(params: &ScenarioParams, mfu: f64, mbu: f64, overhead_s: f64) -> Roofline {
        let m = &params.model;
        let memory = MemoryBudget::compute(params);
        let tp = memory.gpus_per_replica as f64;
        let active = m.active_params_b.unwrap_or(m.params_b);
        Roofline {
            overhead_s,
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
        }
    }

    /// The same constants with every step `factor` times as long.
    pub(super) fn scaled(self, factor: f64) -> Roofline {
        Roofline {
            overhead_s: self.overhead_s * factor,
            flops_per_s: self.flops_per_s / factor,
            bytes_per_s: self.bytes_per_s / factor,
            ..self
        }
    }

    /// The decode lines for `decode_seqs` sequences.
    pub(super) fn decode_lines(&self, decode_seqs: u64) -> DecodeLines {
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
    pub(super) fn weight_bytes_read(&self, tokens: u64) -> f64 {
        if self.active_fraction >= 1.0 {
            self.weight_bytes
        } else {
            let untouched = libm::pow(1.0 - self.active_fraction, tokens as f64);
            self.weight_bytes * self.active_fraction.max(1.0 - untouched)
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
    /// The per-operation model's pieces by sequence count (each holds for
    /// every K; empty for the other models).
    pieces: Vec<DecodePiece>,
}

impl DecodePieces {
    /// Tabulates up to `max_seqs` sequences (at most [`Self::MAX_TABLE`];
    /// larger counts are computed when asked).
    pub fn new(model: &StepTimeModel, max_seqs: u64) -> DecodePieces {
        let counts = 0..=max_seqs.min(Self::MAX_TABLE);
        let (lines, pieces) = match model {
            StepTimeModel::Roofline(r) => (counts.map(|n| r.decode_lines(n)).collect(), Vec::new()),
            StepTimeModel::Operations(o) => {
                (Vec::new(), counts.map(|n| o.decode_piece(n)).collect())
            }
            _ => (Vec::new(), Vec::new()),
        };
        DecodePieces {
            model: model.clone(),
            lines,
            pieces,
        }
    }

    /// Sequence counts tabulated at most.
    pub const MAX_TABLE: u64 = 4096;

    /// Equals `model.decode_piece(decode_seqs, kv_tokens)`, bit for bit.
    #[inline]
    pub fn piece(&self, decode_seqs: u64, kv_tokens: u64) -> DecodePiece {
        if let Some(lines) = self.lines.get(decode_seqs as usize) {
            return lines.piece(kv_tokens);
        }
        match self.pieces.get(decode_seqs as usize) {
            Some(piece) => *piece,
            None => self.model.decode_piece(decode_seqs, kv_tokens),
        }
    }
}

/// The two lines of a roofline decode-only step with a fixed number of
/// sequences, as functions of the decode KV tokens K: compute `a_c + b_c K`
/// and memory `a_m + b_m K`. They depend on the sequence count only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct DecodeLines {
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
    pub(super) fn piece(&self, kv_tokens: u64) -> DecodePiece {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::step_time::StepShape;
    use crate::model::step_time::tests::{check_pieces, decode_shape, model_of};
    use crate::params::StepTimeParams;

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
}

//! The per-operation model: a step lasts as long as its operations take one
//! after another, each bound by its own roofline, plus a fixed overhead.
//!
//! The single roofline takes one `max(compute, memory)` over the whole step,
//! so the KV reads of a large decode batch hide under the weights' memory
//! term and a lone prefill is charged the model's average efficiency. Real
//! kernels run in sequence: the linear layers (bound by the weights' bytes
//! or by their FLOPs), then attention (its own kernels, much less efficient
//! at reading KV than a GEMM is at reading weights), then the tensor-parallel
//! all-reduces. Here each term has its own efficiency, and the terms add:
//!
//! ```text
//! t = overhead
//!   + max(linear FLOPs / (peak(weights) x gemm), weight bytes read / (bandwidth x weights))
//!   + LM head FLOPs / (peak(weights) x gemm)
//!   + max(prefill attention FLOPs / (peak(bf16) x attention), prefill KV bytes / (bandwidth x kv))
//!   + max(decode attention FLOPs / (peak(bf16) x attention), decode KV bytes / (bandwidth x kv))
//!   + per_sequence x decoding sequences
//!   + KV bytes written / (bandwidth x weights)
//!   + all-reduces (tensor parallel only)
//! ```
//!
//! - linear FLOPs: `2 x (active parameters - embeddings) x tokens`; the LM
//!   head `2 x vocab x hidden` per sampled token (one per decoding sequence
//!   and per prefill chunk), since vLLM computes logits only there. Without
//!   a vocabulary size the LM head counts with the linear layers, per token.
//! - peak(weights): the FP8 (FP4) peak for FP8 (FP4) weights where the
//!   accelerator has one (W8A8: FP8 weights run on FP8 tensor cores), the
//!   BF16 peak otherwise (an INT4 or FP4 model on hardware without FP4
//!   arithmetic is dequantised to BF16). Attention runs at BF16.
//! - attention FLOPs: `4 x layers x q_heads x head_dim` per (query, key)
//!   pair, as in the roofline.
//! - weight bytes read: all weights of a dense model. A mixture of experts
//!   with its experts described (`moe`: E routed experts, top-k, their
//!   width) reads every weight outside the routed experts (attention,
//!   embeddings, shared experts, dense layers) and, in each MoE layer, the
//!   experts its tokens touch: `tokens` tokens each picking k of E touch
//!   `E (1 - (1 - k/E)^tokens)` distinct experts on average, so
//!   `shared + routed x (1 - (1 - k/E)^tokens)`, routed = `moe layers x E x
//!   3 x hidden x width` parameters (a gated MLP: gate, up, down). Without
//!   those fields, the expected touched fraction `max(a, 1 - (1 - a)^tokens)`
//!   of all weights, a = active / total parameters. The linear layers'
//!   FLOPs stay `2 x active` per token: each token runs only its k experts.
//! - all-reduces: two per layer of the step's activations (`tokens x hidden
//!   x 2 bytes`), each `latency + 2 (tp - 1) / tp x bytes / (link x
//!   interconnect)`, a ring over the intra-node link.
//!
//! Every efficiency is a parameter of the scenario; those left out take the
//! default of the accelerator's family ([`Family`]), fitted in
//! `docs/calibration.md` to published measurements.
//!
//! For a decode-only step with `n` sequences and `K` decode KV tokens every
//! term but the decode attention depends on `n` alone, and that one is `K`
//! times the larger of two slopes: the step time is exactly affine in `K`,
//! one piece without end.

use super::DecodePiece;
use crate::error::Checker;
use crate::model::memory::MemoryBudget;
use crate::params::{Dtype, OperationsParams, ScenarioParams};

/// Accelerator families, each with its default efficiencies. Told from the
/// accelerator's name (`H100`, `H200`, `GH200`: Hopper; `B100`, `B200`,
/// `GB200`: Blackwell; `A100`, `A10`, `A30`: Ampere; `L4`, `L40`: Ada;
/// `MI300`, `MI325`: CDNA 3); any other name takes [`Family::Other`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Hopper,
    Blackwell,
    Ampere,
    Ada,
    Cdna3,
    Other,
}

impl Family {
    /// The family of the accelerator called `name`.
    pub fn of(name: &str) -> Family {
        let name = name.to_ascii_uppercase();
        let has = |marks: &[&str]| marks.iter().any(|m| name.contains(m));
        if has(&["H100", "H200", "H800", "H20"]) {
            Family::Hopper
        } else if has(&["B100", "B200", "B300"]) {
            Family::Blackwell
        } else if has(&["A100", "A800", "A10", "A30", "A40"]) {
            Family::Ampere
        } else if has(&["L40", "L4", "RTX 6000 ADA"]) {
            Family::Ada
        } else if has(&["MI300", "MI325"]) {
            Family::Cdna3
        } else {
            Family::Other
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Family::Hopper => "Hopper",
            Family::Blackwell => "Blackwell",
            Family::Ampere => "Ampere",
            Family::Ada => "Ada",
            Family::Cdna3 => "CDNA 3",
            Family::Other => "other",
        }
    }

    /// The family's default efficiencies, fitted by hand to the published
    /// points of `docs/calibration.md` (dense models: TensorRT-LLM offline
    /// throughput on Hopper, Ampere, Ada and Blackwell at TP1 to TP8, batch-1
    /// prefill times, NIM concurrency sweeps). Every Hopper point runs FP8
    /// weights and every Blackwell point FP4, so their GEMM efficiencies are
    /// fractions of those peaks (lower than Ampere's of its FP16 peak).
    /// CDNA 3 has no usable point: its values are a guess, lower than
    /// NVIDIA's, and say so in the docs.
    pub fn defaults(self) -> Efficiencies {
        let base = Efficiencies {
            gemm: 0.65,
            weights: 0.85,
            attention: 0.45,
            kv: 0.85,
            per_sequence_s: 10e-6,
            overhead_s: 0.003,
            interconnect: 0.7,
            allreduce_latency_s: 15e-6,
        };
        match self {
            Family::Ampere | Family::Ada | Family::Other => base,
            Family::Hopper => Efficiencies {
                gemm: 0.55,
                weights: 0.8,
                ..base
            },
            Family::Blackwell => Efficiencies {
                gemm: 0.42,
                weights: 0.65,
                kv: 0.65,
                ..base
            },
            Family::Cdna3 => Efficiencies {
                gemm: 0.45,
                weights: 0.65,
                attention: 0.3,
                kv: 0.6,
                ..base
            },
        }
    }
}

/// The per-operation model's efficiencies and fixed costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Efficiencies {
    /// Fraction of the peak FLOP/s the linear layers reach.
    pub gemm: f64,
    /// Fraction of the bandwidth reached streaming weights (and writing KV).
    pub weights: f64,
    /// Fraction of the BF16 peak attention reaches.
    pub attention: f64,
    /// Fraction of the bandwidth attention reaches reading KV.
    pub kv: f64,
    /// Attention kernel cost per decoding sequence \[s\].
    pub per_sequence_s: f64,
    /// Per step: scheduling, sampling, launches \[s\].
    pub overhead_s: f64,
    /// Fraction of the link bandwidth an all-reduce reaches.
    pub interconnect: f64,
    /// Fixed cost of one all-reduce \[s\].
    pub allreduce_latency_s: f64,
}

impl Efficiencies {
    /// `params`' values over `family`'s defaults, checked.
    pub(super) fn resolve(
        params: &OperationsParams,
        family: Family,
        check: &mut Checker,
    ) -> Efficiencies {
        let d = family.defaults();
        let mut fraction = |field: &str, value: Option<f64>, default: f64| match value {
            Some(v) if check.within(field, v, 1e-6, 1.0) => v,
            _ => default,
        };
        let gemm = fraction("gemm_efficiency", params.gemm_efficiency, d.gemm);
        let weights = fraction(
            "weight_bandwidth_efficiency",
            params.weight_bandwidth_efficiency,
            d.weights,
        );
        let attention = fraction(
            "attention_efficiency",
            params.attention_efficiency,
            d.attention,
        );
        let kv = fraction(
            "kv_bandwidth_efficiency",
            params.kv_bandwidth_efficiency,
            d.kv,
        );
        let interconnect = fraction(
            "interconnect_efficiency",
            params.interconnect_efficiency,
            d.interconnect,
        );
        let mut seconds = |field: &str, value: Option<f64>, default: f64| match value {
            Some(v) if check.non_negative(field, v) => v,
            _ => default,
        };
        Efficiencies {
            gemm,
            weights,
            attention,
            kv,
            interconnect,
            per_sequence_s: seconds("per_sequence_s", params.per_sequence_s, d.per_sequence_s),
            overhead_s: seconds("overhead_s", params.overhead_s, d.overhead_s),
            allreduce_latency_s: seconds(
                "allreduce_latency_s",
                params.allreduce_latency_s,
                d.allreduce_latency_s,
            ),
        }
    }
}

/// The per-operation model's constants for one replica, derived once.
#[derive(Clone, Debug, PartialEq)]
pub struct Operations {
    pub family: Family,
    pub efficiencies: Efficiencies,
    pub overhead_s: f64,
    /// Seconds per token of the linear layers' compute.
    linear_s_per_token: f64,
    /// Seconds per sampled token of the LM head (0 when it counts per token).
    head_s_per_sample: f64,
    /// Seconds to stream all the weights once.
    weights_s: f64,
    /// Which weights a step reads.
    reads: WeightReads,
    /// Seconds per attention (query, key) pair of compute.
    attention_s_per_pair: f64,
    /// Seconds per KV token read by attention.
    kv_read_s_per_token: f64,
    /// Seconds per KV token written.
    kv_write_s_per_token: f64,
    per_sequence_s: f64,
    /// All-reduce seconds per token of the step (0 without tensor parallelism).
    allreduce_s_per_token: f64,
    /// All-reduce seconds per step (latencies).
    allreduce_s: f64,
}

/// Which share of the weights a step of some tokens reads.
#[derive(Clone, Copy, Debug, PartialEq)]
enum WeightReads {
    /// A dense model: all of them.
    All,
    /// A mixture of experts known by its active share `a` only: the
    /// expected touched fraction `max(a, 1 - (1 - a)^tokens)`.
    Active(f64),
    /// A mixture of experts with its experts described: the share outside
    /// the routed experts, always read, and the routed experts' share, of
    /// which each token touches `per_token` (k / E).
    Experts { routed: f64, per_token: f64 },
}

impl WeightReads {
    fn of(m: &crate::params::ModelParams) -> WeightReads {
        if m.params_b <= 0.0 {
            return WeightReads::All;
        }
        let active = (m.active_params_b.unwrap_or(m.params_b) / m.params_b).min(1.0);
        match (&m.moe, m.hidden_size) {
            (Some(moe), Some(hidden)) if moe.experts > 0 => {
                let layers = m.layers.saturating_sub(moe.dense_layers) as f64;
                let per_expert = 3.0 * hidden as f64 * moe.expert_intermediate_size as f64;
                let routed = layers * moe.experts as f64 * per_expert / (m.params_b * 1e9);
                WeightReads::Experts {
                    routed: routed.min(1.0),
                    per_token: (moe.experts_per_token as f64 / moe.experts as f64).min(1.0),
                }
            }
            _ if active < 1.0 => WeightReads::Active(active),
            _ => WeightReads::All,
        }
    }

    /// The share of the weights a step of `tokens` tokens reads.
    fn fraction(self, tokens: u64) -> f64 {
        let touched = |p: f64| 1.0 - libm::pow(1.0 - p, tokens as f64);
        match self {
            WeightReads::All => 1.0,
            WeightReads::Active(a) => a.max(touched(a)),
            WeightReads::Experts { routed, per_token } => {
                1.0 - routed + routed * touched(per_token)
            }
        }
    }
}

impl Operations {
    /// The constants of `params`' model on its hardware with efficiencies `e`.
    pub(super) fn of(params: &ScenarioParams, family: Family, e: Efficiencies) -> Operations {
        let m = &params.model;
        let h = &params.hardware;
        let memory = MemoryBudget::compute(params);
        let tp = memory.gpus_per_replica as f64;
        let active = m.active_params_b.unwrap_or(m.params_b) * 1e9;
        let hidden = m.hidden_size.map_or(m.q_heads * m.head_dim, |h| h) as f64;
        let embeddings = m.vocab_size.map_or(0.0, |v| v as f64 * hidden);
        let peak = |tflops: f64| tp * tflops * 1e12;
        let weight_peak = match m.weight_dtype {
            Dtype::Fp8 => h.peak_fp8_tflops,
            Dtype::Fp4 => h.peak_fp4_tflops,
            _ => None,
        }
        .map_or(peak(h.peak_tflops), peak);
        let bandwidth = tp * h.bandwidth_gb_s * 1e9;
        // Untied embeddings: the input table is a lookup, the LM head a GEMM
        // over the sampled tokens only.
        let linear_params = (active - 2.0 * embeddings).max(0.0);
        let (allreduce_s_per_token, allreduce_s) = match &h.interconnect {
            Some(link) if tp > 1.0 => {
                let per_layer = 2.0 * m.layers as f64;
                let ring = 2.0 * (tp - 1.0) / tp;
                let link_bytes_per_s = link.gb_s * 1e9 * e.interconnect;
                (
                    per_layer * ring * hidden * 2.0 / link_bytes_per_s,
                    per_layer * e.allreduce_latency_s,
                )
            }
            _ => (0.0, 0.0),
        };
        Operations {
            family,
            efficiencies: e,
            overhead_s: e.overhead_s,
            linear_s_per_token: 2.0 * linear_params / (weight_peak * e.gemm),
            head_s_per_sample: 2.0 * embeddings / (weight_peak * e.gemm),
            weights_s: memory.weight_bytes / (bandwidth * e.weights),
            reads: WeightReads::of(m),
            attention_s_per_pair: 4.0 * m.layers as f64 * m.q_heads as f64 * m.head_dim as f64
                / (peak(h.peak_tflops) * e.attention),
            kv_read_s_per_token: memory.kv_bytes_per_token / (bandwidth * e.kv),
            kv_write_s_per_token: memory.kv_bytes_per_token / (bandwidth * e.weights),
            per_sequence_s: e.per_sequence_s,
            allreduce_s_per_token,
            allreduce_s,
        }
    }

    /// The same constants with every step `factor` times as long.
    pub(super) fn scaled(self, factor: f64) -> Operations {
        Operations {
            overhead_s: self.overhead_s * factor,
            linear_s_per_token: self.linear_s_per_token * factor,
            head_s_per_sample: self.head_s_per_sample * factor,
            weights_s: self.weights_s * factor,
            attention_s_per_pair: self.attention_s_per_pair * factor,
            kv_read_s_per_token: self.kv_read_s_per_token * factor,
            kv_write_s_per_token: self.kv_write_s_per_token * factor,
            per_sequence_s: self.per_sequence_s * factor,
            allreduce_s_per_token: self.allreduce_s_per_token * factor,
            allreduce_s: self.allreduce_s * factor,
            ..self
        }
    }

    /// Seconds the weights take to stream for a step of `tokens` tokens.
    fn weights_read_s(&self, tokens: u64) -> f64 {
        self.weights_s * self.reads.fraction(tokens)
    }

    /// Everything of a step but its attention: the overhead, the linear
    /// layers and LM head, KV writes and all-reduces, for `tokens` tokens of
    /// which `samples` are sampled.
    fn fixed_s(&self, tokens: u64, samples: u64) -> f64 {
        if tokens == 0 {
            return self.overhead_s;
        }
        let t = tokens as f64;
        let linear = (self.linear_s_per_token * t).max(self.weights_read_s(tokens));
        self.overhead_s
            + linear
            + self.head_s_per_sample * samples as f64
            + self.kv_write_s_per_token * t
            + self.allreduce_s
            + self.allreduce_s_per_token * t
    }

    /// Seconds of attention over `pairs` (query, key) pairs reading
    /// `kv_tokens` KV tokens.
    fn attention_s(&self, pairs: f64, kv_tokens: u64) -> f64 {
        (self.attention_s_per_pair * pairs).max(self.kv_read_s_per_token * kv_tokens as f64)
    }

    /// Duration of a step with `prefill_tokens` prompt tokens in
    /// `prefill_seqs` chunks (`prefill_pairs` attention pairs reading
    /// `prefill_kv_tokens`) and `decode_seqs` decodes reading
    /// `decode_kv_tokens`.
    pub(super) fn step_s(&self, shape: &super::StepShape) -> f64 {
        let tokens = shape.tokens();
        let samples = shape.decode_seqs + shape.prefill_seqs;
        self.fixed_s(tokens, samples)
            + self.attention_s(shape.prefill_attention_pairs, shape.prefill_kv_tokens)
            + self.attention_s(shape.decode_kv_tokens as f64, shape.decode_kv_tokens)
            + self.per_sequence_s * shape.decode_seqs as f64
    }

    /// The decode-only piece for `decode_seqs` sequences: affine in the KV
    /// tokens, valid everywhere. A decode's pairs equal its KV tokens, so
    /// attention is `K` times the larger slope.
    pub(super) fn decode_piece(&self, decode_seqs: u64) -> DecodePiece {
        DecodePiece {
            base_s: self.fixed_s(decode_seqs, decode_seqs)
                + self.per_sequence_s * decode_seqs as f64,
            slope_s_per_token: self.attention_s_per_pair.max(self.kv_read_s_per_token),
            valid_below: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scenario::Scenario;
    use crate::model::step_time::tests::{check_pieces, decode_shape};
    use crate::model::step_time::{StepShape, StepTimeModel};
    use crate::params::{ModelParams, StepTimeParams, presets};

    /// Llama-3.1-8B (preset) on one H100 SXM (preset) under the operations
    /// model with its Hopper defaults unless `edit` changes them.
    fn h100_8b(edit: impl FnOnce(&mut ScenarioParams)) -> StepTimeModel {
        let mut p = ScenarioParams::overnight_batch();
        p.model = presets::llama_3_1_8b();
        p.hardware = presets::hardware("h100-sxm").expect("preset");
        p.step_time = StepTimeParams::Operations(OperationsParams::default());
        edit(&mut p);
        Scenario::try_from(p).expect("valid").step_time().clone()
    }

    fn ops(model: &StepTimeModel) -> &Operations {
        match model {
            StepTimeModel::Operations(o) => o,
            other => panic!("operations model expected, got {other:?}"),
        }
    }

    #[test]
    fn families_follow_the_accelerators_name() {
        assert_eq!(Family::of("H100 SXM5 80GB"), Family::Hopper);
        assert_eq!(Family::of("NVIDIA H200 141GB"), Family::Hopper);
        assert_eq!(Family::of("B200"), Family::Blackwell);
        assert_eq!(Family::of("A100 80GB SXM4"), Family::Ampere);
        assert_eq!(Family::of("L40S"), Family::Ada);
        assert_eq!(Family::of("AMD Instinct MI300X"), Family::Cdna3);
        assert_eq!(Family::of("my accelerator"), Family::Other);
    }

    /// Hand computation for Llama-3.1-8B (8.03e9 parameters, 32 layers, 32
    /// query heads of 128, vocabulary 128,256 x hidden 4,096 = 525.3e6
    /// per embedding table, 131,072 KV bytes per token) on one H100 SXM
    /// (989.4 TFLOP/s BF16, 3,350 GB/s), BF16 weights (16.06 GB), Hopper
    /// defaults (gemm 0.55, weights 0.8, attention 0.45, kv 0.85, 10 us per
    /// sequence, 3 ms overhead).
    #[test]
    fn three_shapes_match_the_hand_computation() {
        let model = h100_8b(|_| {});
        let o = ops(&model);
        let e = o.efficiencies;
        assert_eq!(o.family, Family::Hopper);
        let flops = 989.4e12;
        let bw = 3350e9;
        let emb = 128_256.0 * 4096.0;
        let linear_params = 8.03e9 - 2.0 * emb;
        let weights_s = 8.03e9 * 2.0 / (bw * e.weights);
        let pair_s = 4.0 * 32.0 * 32.0 * 128.0 / (flops * e.attention);
        let kv_s = 131_072.0 / (bw * e.kv);
        let write_s = 131_072.0 / (bw * e.weights);
        let head_s = 2.0 * emb / (flops * e.gemm);

        // 1. One decode with 1,000 tokens of context: memory-bound linear
        //    layers, KV read of 1,001 tokens.
        let t = model.step_s(&decode_shape(1, 1001));
        let by_hand = e.overhead_s
            + weights_s.max(2.0 * linear_params / (flops * e.gemm))
            + head_s
            + write_s
            + (1001.0 * pair_s).max(1001.0 * kv_s)
            + e.per_sequence_s;
        assert!((t - by_hand).abs() < 1e-12, "{t} vs {by_hand}");
        // About 9.05 ms: 6.0 ms of weights, 3 ms overhead, 0.05 ms of KV.
        assert!((t - 0.00905).abs() < 0.0002, "t = {t}");

        // 2. A lone 2,048-token prefill: compute-bound linear layers plus
        //    attention over 2,048 x 2,049 / 2 pairs.
        let mut prefill = StepShape::default();
        prefill.add_prefill(0, 2048);
        let pairs = 2048.0 * 2049.0 / 2.0;
        let by_hand = e.overhead_s
            + (2048.0 * 2.0 * linear_params / (flops * e.gemm)).max(weights_s)
            + head_s
            + 2048.0 * write_s
            + (pairs * pair_s).max(2048.0 * kv_s);
        let t = model.step_s(&prefill);
        assert!((t - by_hand).abs() < 1e-12, "{t} vs {by_hand}");

        // 3. 256 decodes with 2,000 tokens of context each: the KV reads
        //    (512,256 tokens, 67 GB at 85% of 3.35 TB/s: 24 ms) now outweigh
        //    the linear layers (6.6 ms), as measured large-batch decodes show.
        let shape = decode_shape(256, 256 * 2001);
        let t = model.step_s(&shape);
        let kv_tokens = 256.0 * 2001.0;
        let by_hand = e.overhead_s
            + weights_s.max(256.0 * 2.0 * linear_params / (flops * e.gemm))
            + 256.0 * head_s
            + 256.0 * write_s
            + (kv_tokens * pair_s).max(kv_tokens * kv_s)
            + 256.0 * e.per_sequence_s;
        assert!((t - by_hand).abs() < 1e-12, "{t} vs {by_hand}");
        assert!(t > 0.03 && t < 0.04, "t = {t}");
    }

    #[test]
    fn fp8_weights_run_on_fp8_peak_and_tensor_parallelism_adds_all_reduces() {
        let bf16 = h100_8b(|_| {});
        let fp8 = h100_8b(|p| p.model.weight_dtype = Dtype::Fp8);
        let mut prefill = StepShape::default();
        prefill.add_prefill(0, 8192);
        // Compute-bound linear layers run at the FP8 peak (1,978.9 against
        // 989.4 TFLOP/s BF16 on the H100 SXM preset).
        let (a, b) = (ops(&bf16), ops(&fp8));
        let ratio = a.linear_s_per_token / b.linear_s_per_token;
        assert!((ratio - 1978.9 / 989.4).abs() < 1e-12, "ratio {ratio}");
        assert!(fp8.step_s(&prefill) < 0.7 * bf16.step_s(&prefill));

        let tp2 = h100_8b(|p| p.replica.gpus_per_replica = 2);
        let o = ops(&tp2);
        let link = presets::hardware("h100-sxm")
            .and_then(|h| h.interconnect)
            .expect("H100 SXM has NVLink");
        // 2 all-reduces x 32 layers, ring factor 2 (2 - 1) / 2 = 1, 4,096 x 2 bytes per token.
        let per_token = 64.0 * 4096.0 * 2.0 / (link.gb_s * 1e9 * o.efficiencies.interconnect);
        assert!((o.allreduce_s_per_token - per_token).abs() < 1e-15);
        assert!((o.allreduce_s - 64.0 * o.efficiencies.allreduce_latency_s).abs() < 1e-15);
        assert_eq!(ops(&bf16).allreduce_s, 0.0);
    }

    #[test]
    fn edited_efficiencies_replace_the_defaults_and_bad_ones_are_refused() {
        let model = h100_8b(|p| {
            p.step_time = StepTimeParams::Operations(OperationsParams {
                kv_bandwidth_efficiency: Some(0.2),
                ..OperationsParams::default()
            })
        });
        assert_eq!(ops(&model).efficiencies.kv, 0.2);
        assert_eq!(
            ops(&model).efficiencies.gemm,
            Family::Hopper.defaults().gemm
        );
        let mut p = ScenarioParams::overnight_batch();
        p.step_time = StepTimeParams::Operations(OperationsParams {
            gemm_efficiency: Some(1.5),
            ..OperationsParams::default()
        });
        let err = Scenario::try_from(p)
            .expect_err("gemm 1.5 refused")
            .to_string();
        assert!(err.contains("step_time.gemm_efficiency"), "{err}");
    }

    /// gpt-oss-120b (preset: 116.8e9 parameters, 36 layers of 128 experts
    /// 2,880 wide over a 2,880-wide residual, top-4) on one H100: its routed
    /// experts hold 36 x 128 x 3 x 2,880^2 = 114.66e9 parameters (98.2%),
    /// so a step of T tokens reads the other 1.8% and 1 - (1 - 4/128)^T of
    /// the experts; a model known only by its active share keeps
    /// max(a, 1 - (1 - a)^T).
    #[test]
    fn a_mixture_of_experts_reads_the_experts_its_tokens_touch() {
        let gpt_oss = presets::model("gpt-oss-120b").expect("preset");
        let model = h100_8b(|p| p.model = gpt_oss.clone());
        let o = ops(&model);
        let routed = 36.0 * 128.0 * 3.0 * 2880.0 * 2880.0 / 116.8e9;
        for t in [1u64, 4, 64, 1024] {
            let by_hand = 1.0 - routed + routed * (1.0 - (1.0 - 4.0 / 128.0_f64).powi(t as i32));
            let read = o.weights_read_s(t) / o.weights_s;
            assert!((read - by_hand).abs() < 1e-12, "T={t}: {read} vs {by_hand}");
        }
        // One token: 1.8% + 3.1% of the experts' 98.2%, about 4.9%.
        assert!((o.weights_read_s(1) / o.weights_s - 0.0489).abs() < 0.0005);

        let active_only = h100_8b(|p| {
            p.model = ModelParams {
                moe: None,
                ..gpt_oss
            }
        });
        let a: f64 = 5.1 / 116.8;
        let o = ops(&active_only);
        for t in [1u64, 64] {
            let by_hand = a.max(1.0 - (1.0 - a).powi(t as i32));
            assert!((o.weights_read_s(t) / o.weights_s - by_hand).abs() < 1e-12);
        }
        assert_eq!(
            ops(&h100_8b(|_| {})).weights_read_s(1),
            ops(&h100_8b(|_| {})).weights_s
        );
    }

    #[test]
    fn decode_pieces_are_exact_and_scaling_scales_every_term() {
        let model = h100_8b(|p| p.replica.gpus_per_replica = 2);
        for n in [1, 8, 64, 256] {
            check_pieces(&model, n, n, 50_000_000);
        }
        let scaled = h100_8b(|p| {
            p.replica.gpus_per_replica = 2;
            p.step_time_scale = 1.5;
        });
        let mut shape = decode_shape(64, 64 * 3000);
        shape.add_prefill(500, 512);
        let (a, b) = (model.step_s(&shape), scaled.step_s(&shape));
        assert!((b - 1.5 * a).abs() < 1e-12 * a, "{b} vs 1.5 x {a}");
    }
}

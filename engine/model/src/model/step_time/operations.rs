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
//! - CUDA graphs ([`CudaGraphs`]): a step the engine runs as a captured
//!   graph runs padded up to the next captured size, so its linear layers
//!   and all-reduces count `padded(tokens)` tokens; its weight reads, LM
//!   head, attention and KV writes count the real ones (the padding's KV
//!   slots are skipped and only real tokens are sampled). vLLM V1 pads
//!   every step of at most its largest captured size (at most 512 tokens),
//!   V0 only decode-only steps (at most 256), TensorRT-LLM's PyTorch
//!   backend decode-only steps to its listed batch sizes.
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
use crate::model::memory::{MemoryBudget, WeightBytes};
use crate::params::{CudaGraphs, Dtype, EngineParams, OperationsParams, ScenarioParams};

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
    /// prefill times, NIM concurrency sweeps, vLLM on MI300X). The Hopper
    /// values were fitted to FP8 points and every Blackwell point runs FP4,
    /// so their GEMM efficiencies are fractions of those peaks (lower than
    /// Ampere's of its FP16 peak); the BF16 Hopper points added since are
    /// missed in both directions, which no efficiency fixes (the docs say
    /// why). CDNA 3 is fitted to vLLM on MI300X with FP8 weights: Llama 3.1
    /// 8B at TP1 and 70B / 405B at TP8 (Azure's offline runs of 1,000
    /// prompts, AMD's batch latencies and offline runs); its GEMM efficiency
    /// agrees with the FP8 GEMM microbenchmark the Azure page reports (1,159
    /// of 2,615 TFLOP/s), and no point checks BF16, TP2-TP4 or the MI325X.
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
                weights: 0.5,
                attention: 0.3,
                kv: 0.5,
                per_sequence_s: 20e-6,
                interconnect: 0.3,
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
    /// The steps that run padded, and to what.
    graphs: GraphSizes,
}

/// Steps of up to this many tokens find their padded size in a table.
const LOOKUP_TOKENS: u64 = 16_384;

/// The steps an engine runs as captured CUDA graphs, and the sizes they pad to.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct GraphSizes {
    /// The captured sizes, ascending (empty: none).
    sizes: Vec<u64>,
    /// The size each step of 0 to [`LOOKUP_TOKENS`] tokens (at most the
    /// largest captured size) runs at: a lookup, where a search would cost
    /// a step a few percent of its time.
    padded: Vec<u64>,
    /// Only decode-only steps run as graphs (vLLM V0, TensorRT-LLM).
    decode_only: bool,
}

impl GraphSizes {
    /// The sizes `graphs` captures under `engine`'s limits.
    fn of(graphs: &CudaGraphs, engine: &EngineParams) -> GraphSizes {
        let seqs = u64::from(engine.max_num_seqs);
        let budget = u64::from(engine.max_num_batched_tokens);
        // vLLM's sizes up to `largest`: 1, 2, 4, multiples of 8 below 256,
        // multiples of 16 from 256.
        let vllm = |largest: u64| {
            let small = [1, 2, 4].into_iter().filter(|&s| s <= largest);
            let eights = (8..256).step_by(8).take_while(|&s| s <= largest);
            let sixteens = (256..=largest).step_by(16);
            small.chain(eights).chain(sixteens).collect::<Vec<u64>>()
        };
        let (sizes, decode_only) = match graphs {
            CudaGraphs::Off => (Vec::new(), false),
            CudaGraphs::Piecewise => (vllm((2 * seqs).min(512).min(budget)), false),
            // V0 captures the size `max_num_seqs` pads to, at most 256.
            CudaGraphs::DecodeOnly => {
                let v0 = vllm(256);
                let top = v0.iter().copied().find(|&s| s >= seqs).unwrap_or(256);
                (v0.into_iter().filter(|&s| s <= top).collect(), true)
            }
            CudaGraphs::DecodeBatchSizes(listed) => {
                let most = seqs.min(budget);
                let mut sizes: Vec<u64> = listed.iter().map(|&s| u64::from(s)).collect();
                sizes.sort_unstable();
                sizes.dedup();
                let beyond = sizes.iter().any(|&s| s > most);
                sizes.retain(|&s| s >= 1 && s <= most);
                if beyond && sizes.last() != Some(&most) {
                    sizes.push(most);
                }
                (sizes, true)
            }
        };
        let padded = match sizes.last() {
            None => Vec::new(),
            Some(&largest) => (0..=largest.min(LOOKUP_TOKENS))
                .map(|t| Self::search(&sizes, t))
                .collect(),
        };
        GraphSizes {
            sizes,
            padded,
            decode_only,
        }
    }

    /// The size a step of `tokens` tokens (decode-only or not) runs at: the
    /// next captured size, or its own beyond the largest.
    #[inline]
    pub(super) fn padded(&self, tokens: u64, decode_only_step: bool) -> u64 {
        if self.decode_only && !decode_only_step {
            return tokens;
        }
        match usize::try_from(tokens)
            .ok()
            .and_then(|t| self.padded.get(t))
        {
            Some(&padded) => padded,
            None => Self::search(&self.sizes, tokens),
        }
    }

    /// The smallest of `sizes` of at least `tokens` (`tokens` itself
    /// beyond the largest, and 0 for an empty step).
    fn search(sizes: &[u64], tokens: u64) -> u64 {
        if tokens == 0 {
            return 0;
        }
        let next = sizes.partition_point(|&s| s < tokens);
        sizes.get(next).copied().unwrap_or(tokens)
    }
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
        let bytes = WeightBytes::of(m);
        match (&m.moe, bytes.routed_params) {
            (Some(moe), Some(_)) => WeightReads::Experts {
                routed: (bytes.routed / bytes.total).min(1.0),
                per_token: (moe.experts_per_token as f64 / moe.experts as f64).min(1.0),
            },
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
    pub(super) fn of(
        params: &ScenarioParams,
        family: Family,
        e: Efficiencies,
        graphs: &CudaGraphs,
    ) -> Operations {
        let m = &params.model;
        let h = &params.hardware;
        let memory = MemoryBudget::compute(params);
        let tp = memory.gpus_per_replica as f64;
        let active = m.active_params_b.unwrap_or(m.params_b) * 1e9;
        // Without a hidden size, the attention's width stands for it (in
        // f64: the product of two u32 sizes can pass u32::MAX).
        let hidden = m
            .hidden_size
            .map_or(m.q_heads as f64 * m.head_dim as f64, |h| h as f64);
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
            graphs: GraphSizes::of(graphs, &params.engine),
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
    /// which `samples` are sampled, the step decode-only or not.
    #[inline]
    fn fixed_s(&self, tokens: u64, samples: u64, decode_only: bool) -> f64 {
        if tokens == 0 {
            return self.overhead_s;
        }
        let t = tokens as f64;
        let computed = self.graphs.padded(tokens, decode_only) as f64;
        let linear = (self.linear_s_per_token * computed).max(self.weights_read_s(tokens));
        self.overhead_s
            + linear
            + self.head_s_per_sample * samples as f64
            + self.kv_write_s_per_token * t
            + self.allreduce_s
            + self.allreduce_s_per_token * computed
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
        self.fixed_s(tokens, samples, shape.prefill_tokens == 0)
            + self.attention_s(shape.prefill_attention_pairs, shape.prefill_kv_tokens)
            + self.attention_s(shape.decode_kv_tokens as f64, shape.decode_kv_tokens)
            + self.per_sequence_s * shape.decode_seqs as f64
    }

    /// The decode-only piece for `decode_seqs` sequences: affine in the KV
    /// tokens, valid everywhere. A decode's pairs equal its KV tokens, so
    /// attention is `K` times the larger slope.
    pub(super) fn decode_piece(&self, decode_seqs: u64) -> DecodePiece {
        DecodePiece {
            base_s: self.fixed_s(decode_seqs, decode_seqs, true)
                + self.per_sequence_s * decode_seqs as f64,
            slope_s_per_token: self.attention_s_per_pair.max(self.kv_read_s_per_token),
            valid_below: None,
        }
    }
}

#[cfg(test)]
#[path = "operations_tests.rs"]
mod tests;

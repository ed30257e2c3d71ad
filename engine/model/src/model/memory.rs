//! The replica's memory budget: weights, runtime reserve and KV cache, derived
//! from the model's architecture and the accelerator (nothing per model is
//! hard-coded).
//!
//! # Formula
//! - weights \[B\] = parameters x bytes per weight (every expert of a MoE is
//!   resident). A checkpoint that quantizes only its routed experts keeps
//!   the rest in `moe.other_weight_dtype`, and block scales add
//!   `moe.expert_scale_bits` to each expert weight ([`WeightBytes`]);
//! - KV bytes per token (per replica) = 2 (K and V) x layers x max(kv_heads, TP)
//!   x head_dim x bytes per KV element. With TP larger than the KV heads, each GPU
//!   still holds one head, so heads are replicated. Under multi-head latent
//!   attention the latent vector (kv_latent_dim elements per layer) is cached on
//!   every GPU of the replica: TP x layers x kv_latent_dim x bytes. Layers with a
//!   sliding window are counted in full, as if they kept every token (an
//!   overestimate for long sequences: gpt-oss keeps 128 tokens on half its layers);
//! - usable \[B\] = TP x device memory x gpu_memory_utilization;
//! - KV pool \[B\] = usable - weights - TP x runtime reserve;
//! - blocks = floor(KV pool / (block_size x KV bytes per token)).
//!
//! The runtime reserve, unless the scenario sets it, is what vLLM's
//! profiling pass keeps per GPU ([`MemoryBudget::profiled_reserve_gib`]):
//! memory outside PyTorch (NCCL and all-reduce buffers once TP > 1) plus
//! the pass's activation peak, which the sampler's float32 logits of
//! min(max_num_seqs, max_num_batched_tokens) dummy requests over the
//! vocabulary dominate.

use serde::Serialize;

use crate::error::Checker;
use crate::params::{ModelParams, ScenarioParams, Schedule};

/// Bytes in a GiB.
pub const GIB: f64 = 1_073_741_824.0;

/// The largest architecture size validation accepts (layers, heads, head
/// and latent dimensions, widths, vocabulary, experts): 2^20. The largest
/// in the catalog are a vocabulary of 201,088 and an MLP 53,248 wide, so
/// this leaves room for any real model and refuses a typo (an extra few
/// digits) by name, before its products give nonsense step times.
pub const MAX_ARCHITECTURE_SIZE: u32 = 1 << 20;

/// vLLM's profiling pass per GPU, fitted to the 59 server logs of vLLM
/// 0.19 on an H100 in llm-d-planner's accuracy sweep (docs/engine.md,
/// "Memory"): memory PyTorch does not allocate, one GPU \[GiB\] ...
const NON_TORCH_GIB: f64 = 0.25;
/// ... and with tensor parallelism (NCCL, custom all-reduce; 2.06-2.21 GiB
/// at TP 2 and 4) \[GiB\].
const NON_TORCH_TP_GIB: f64 = 2.1;
/// The activation peak's part that does not grow with the vocabulary \[GiB\].
const ACTIVATION_BASE_GIB: f64 = 0.18;
/// Bytes of the activation peak per logit of the profiling pass's sampler
/// (float32 logits and what sampling makes of them): 1.52, 1.89 and 2.21
/// GiB at 1,024 dummy requests and vocabularies of 100,352, 128,256 and
/// 152,064.
const PEAK_BYTES_PER_LOGIT: f64 = 14.0;
/// The reserve without a vocabulary to estimate it from: the flat figure
/// this engine took before, so such a scenario keeps its numbers \[GiB\].
pub const FLAT_RESERVE_GIB: f64 = 2.0;

/// The weights' bytes, all of them and the routed experts' share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightBytes {
    pub total: f64,
    /// Parameters of the routed experts (every MoE layer's experts, each a
    /// gated MLP of three `hidden x expert_intermediate_size` matrices),
    /// `None` unless the model describes its experts.
    pub routed_params: Option<f64>,
    /// Bytes of the routed experts.
    pub routed: f64,
}

impl WeightBytes {
    /// `m`'s weights: parameters x the weight dtype's bytes, except that with
    /// `moe.other_weight_dtype` only the routed experts are in the weight
    /// dtype (plus `moe.expert_scale_bits` of block scale each) and the rest
    /// in that dtype. gpt-oss-120b: 114.66 B expert parameters at 4.25 bits
    /// and 2.14 B in BF16 make 65.2 GB (60.7 GiB).
    pub fn of(m: &ModelParams) -> WeightBytes {
        let params = m.params_b * 1e9;
        let bytes = m.weight_dtype.bytes();
        let routed_params = match (&m.moe, m.hidden_size) {
            (Some(moe), Some(hidden)) if moe.experts > 0 => {
                let layers = m.layers.saturating_sub(moe.dense_layers) as f64;
                let per_expert = 3.0 * hidden as f64 * moe.expert_intermediate_size as f64;
                Some((layers * moe.experts as f64 * per_expert).min(params))
            }
            _ => None,
        };
        let layout = m.moe.as_ref().and_then(|moe| {
            let other = moe.other_weight_dtype.unwrap_or(m.weight_dtype).bytes();
            let scale = moe.expert_scale_bits.unwrap_or(0.0) / 8.0;
            (moe.other_weight_dtype.is_some() || scale > 0.0).then_some((other, scale))
        });
        match (routed_params, layout) {
            (Some(routed), Some((other, scale))) => {
                let experts = routed * (bytes + scale);
                WeightBytes {
                    total: experts + (params - routed) * other,
                    routed_params,
                    routed: experts,
                }
            }
            _ => WeightBytes {
                total: params * bytes,
                routed_params,
                routed: routed_params.unwrap_or(0.0) * bytes,
            },
        }
    }
}

/// Where a replica's memory goes. All sizes are per replica \[bytes\].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryBudget {
    pub gpus_per_replica: u32,
    /// Physical memory of all GPUs of the replica.
    pub device_bytes: f64,
    /// The part the engine may use (gpu_memory_utilization).
    pub usable_bytes: f64,
    pub weight_bytes: f64,
    pub reserve_bytes: f64,
    /// What is left for the KV cache (negative when the model does not fit).
    pub kv_pool_bytes: f64,
    pub kv_bytes_per_token: f64,
    pub block_size: u32,
    /// KV cache blocks (0 when the model does not fit).
    pub total_blocks: u32,
    /// Longest sequence (prompt + output - 1 tokens of KV) a request may need.
    pub max_seq_tokens: u64,
}

/// How comfortably a model fits, for the memory bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fit {
    /// The KV cache holds at least `max_num_seqs` sequences of the configured
    /// reference length.
    Fits,
    /// The model fits, but the KV cache holds fewer sequences than the engine
    /// could batch: KV, not `max_num_seqs`, will limit concurrency.
    Tight,
    DoesNotFit,
}

impl MemoryBudget {
    /// The budget without judging it (the memory bar shows it even when the
    /// model does not fit).
    pub fn compute(params: &ScenarioParams) -> MemoryBudget {
        let m = &params.model;
        let r = &params.replica;
        let tp = r.gpus_per_replica.max(1);
        let weight_bytes = WeightBytes::of(m).total;
        let kv_bytes_per_token = match m.kv_latent_dim {
            Some(latent) => tp as f64 * m.layers as f64 * latent as f64 * m.kv_dtype.bytes(),
            None => {
                2.0 * m.layers as f64
                    * m.kv_heads.max(tp) as f64
                    * m.head_dim as f64
                    * m.kv_dtype.bytes()
            }
        };
        let device_bytes = tp as f64 * params.hardware.memory_gib * GIB;
        let usable_bytes = device_bytes * r.gpu_memory_utilization;
        let reserve_bytes = tp as f64 * Self::reserve_gib(params) * GIB;
        let kv_pool_bytes = usable_bytes - weight_bytes - reserve_bytes;
        let block_size = params.engine.block_size.max(1);
        let block_bytes = block_size as f64 * kv_bytes_per_token;
        let blocks = if kv_pool_bytes > 0.0 && block_bytes > 0.0 {
            (kv_pool_bytes / block_bytes).floor()
        } else {
            0.0
        };
        let total_blocks = blocks.min(u32::MAX as f64 / 2.0) as u32;
        let cache_tokens = total_blocks as u64 * block_size as u64;
        // Without chunked prefill a sequence must fit one step: vLLM V0
        // refuses a max_model_len above the token budget (validation does
        // too), and without one the budget is the limit (docs/engine.md,
        // "Schedules").
        let longest_served = match (params.engine.max_model_len, params.engine.schedule) {
            (Some(len), _) => len as u64,
            (None, Schedule::PrefillFirst) => params.engine.max_num_batched_tokens as u64,
            (None, Schedule::DecodeFirst) => u64::MAX,
        };
        let max_seq_tokens = cache_tokens.min(longest_served);
        MemoryBudget {
            gpus_per_replica: tp,
            device_bytes,
            usable_bytes,
            weight_bytes,
            reserve_bytes,
            kv_pool_bytes,
            kv_bytes_per_token,
            block_size,
            total_blocks,
            max_seq_tokens,
        }
    }

    /// The runtime reserve per GPU \[GiB\]: the scenario's, else
    /// [`MemoryBudget::profiled_reserve_gib`].
    fn reserve_gib(params: &ScenarioParams) -> f64 {
        params
            .replica
            .runtime_reserve_gib
            .unwrap_or_else(|| Self::profiled_reserve_gib(params))
    }

    /// What vLLM's profiling pass keeps per GPU outside the KV cache
    /// \[GiB\]: memory outside PyTorch (more once tensor parallelism adds
    /// NCCL's buffers) and the activation peak, whose growing part is the
    /// sampler's logits of one dummy request per sequence slot (at most one
    /// per token of the step's budget) over the vocabulary. The fit is vLLM
    /// 0.19's; vLLM 0.11 logged 2-2.5 times the activation peak, and
    /// from 0.21 vLLM also counts its CUDA graphs here. A model without a
    /// vocabulary takes the flat 2 GiB.
    pub fn profiled_reserve_gib(params: &ScenarioParams) -> f64 {
        let Some(vocab) = params.model.vocab_size else {
            return FLAT_RESERVE_GIB;
        };
        let non_torch = if params.replica.gpus_per_replica > 1 {
            NON_TORCH_TP_GIB
        } else {
            NON_TORCH_GIB
        };
        let engine = &params.engine;
        let rows = engine.max_num_seqs.min(engine.max_num_batched_tokens) as f64;
        non_torch + ACTIVATION_BASE_GIB + PEAK_BYTES_PER_LOGIT * rows * vocab as f64 / GIB
    }

    /// Tokens the KV cache holds.
    pub fn kv_capacity_tokens(&self) -> u64 {
        self.total_blocks as u64 * self.block_size as u64
    }

    /// Fits / tight / does not fit, given the sequence length that a typical
    /// request reaches (prompt + output).
    pub fn fit(&self, max_num_seqs: u32, typical_seq_tokens: f64) -> Fit {
        if self.total_blocks == 0 {
            Fit::DoesNotFit
        } else if (self.kv_capacity_tokens() as f64) < max_num_seqs as f64 * typical_seq_tokens {
            Fit::Tight
        } else {
            Fit::Fits
        }
    }

    /// Checks the architecture and hardware fields and that the model fits;
    /// `None` (with errors) otherwise.
    pub fn derive(params: &ScenarioParams, check: &mut Checker) -> Option<MemoryBudget> {
        let before = check.has_errors();
        let m = &params.model;
        check.at("model", |c| {
            if c.positive("params_b", m.params_b)
                && let Some(active) = m.active_params_b
                && c.positive("active_params_b", active)
                && active > m.params_b
            {
                c.fail(
                    "active_params_b",
                    format!("must not exceed params_b ({}), got {active}", m.params_b),
                );
            }
            for (field, size) in [
                ("layers", m.layers),
                ("q_heads", m.q_heads),
                ("kv_heads", m.kv_heads),
                ("head_dim", m.head_dim),
            ] {
                architecture_size(c, field, size);
            }
            if m.kv_heads > m.q_heads || (m.kv_heads > 0 && !m.q_heads.is_multiple_of(m.kv_heads)) {
                c.fail(
                    "kv_heads",
                    format!(
                        "must divide q_heads ({}) for grouped-query attention, got {}",
                        m.q_heads, m.kv_heads
                    ),
                );
            }
            if let Some(latent) = m.kv_latent_dim {
                architecture_size(c, "kv_latent_dim", latent);
            }
            check_shapes(m, c);
        });
        let h = &params.hardware;
        check.at("hardware", |c| {
            c.positive("memory_gib", h.memory_gib);
            c.rate("bandwidth_gb_s", h.bandwidth_gb_s);
            c.rate("peak_tflops", h.peak_tflops);
            if let Some(fp8) = h.peak_fp8_tflops {
                c.rate("peak_fp8_tflops", fp8);
            }
            if let Some(fp4) = h.peak_fp4_tflops {
                c.rate("peak_fp4_tflops", fp4);
            }
            if let Some(link) = &h.interconnect {
                c.at("interconnect", |c| c.rate("gb_s", link.gb_s));
            }
        });
        let r = &params.replica;
        check.at("replica", |c| {
            let tp = r.gpus_per_replica;
            if !(1..=64).contains(&tp) {
                c.fail("gpus_per_replica", format!("must be between 1 and 64, got {tp}"));
            } else if m.kv_latent_dim.is_none()
                && m.kv_heads > 0
                && !m.kv_heads.is_multiple_of(tp)
                && !tp.is_multiple_of(m.kv_heads)
            {
                c.fail(
                    "gpus_per_replica",
                    format!(
                        "tensor parallelism must divide the KV heads ({}) or be a multiple of them, got {tp}",
                        m.kv_heads
                    ),
                );
            }
            if !(r.gpu_memory_utilization > 0.0 && r.gpu_memory_utilization <= 1.0) {
                c.fail(
                    "gpu_memory_utilization",
                    format!("must be in (0, 1], got {}", crate::error::show(r.gpu_memory_utilization)),
                );
            }
            if let Some(reserve) = r.runtime_reserve_gib {
                c.non_negative("runtime_reserve_gib", reserve);
            }
        });
        if check.has_errors() != before {
            return None;
        }
        let budget = MemoryBudget::compute(params);
        if budget.total_blocks == 0 {
            let need = budget.weight_bytes + budget.reserve_bytes;
            check.fail(
                "model.params_b",
                format!(
                    "the model does not fit: weights need {:.1} GiB ({} B parameters x {} bytes) and the runtime reserve {:.1} GiB, \
                     but a {}-GPU replica of {} has {:.1} GiB usable ({:.0} GiB x {} x {}); short by {:.1} GiB. \
                     Use more GPUs per replica, a smaller weight type, or a larger accelerator",
                    budget.weight_bytes / GIB,
                    m.params_b,
                    m.weight_dtype.bytes(),
                    budget.reserve_bytes / GIB,
                    budget.gpus_per_replica,
                    h.name,
                    budget.usable_bytes / GIB,
                    h.memory_gib,
                    budget.gpus_per_replica,
                    r.gpu_memory_utilization,
                    (need + budget.block_size as f64 * budget.kv_bytes_per_token - budget.usable_bytes).max(0.0) / GIB,
                ),
            );
            return None;
        }
        Some(budget)
    }
}

/// Checks an architecture size is between 1 and [`MAX_ARCHITECTURE_SIZE`].
fn architecture_size(c: &mut Checker, field: &str, size: u32) -> bool {
    if size > MAX_ARCHITECTURE_SIZE {
        c.fail(
            field,
            format!(
                "must be at most {MAX_ARCHITECTURE_SIZE} (2^20, several times any real model's), got {size}"
            ),
        );
        return false;
    }
    c.at_least(field, size as u64, 1)
}

/// Checks the optional shapes a model gives beyond what the memory budget
/// reads (hidden size, widths, experts, latent attention, windows): each
/// positive, and consistent with the layers and the latent cache.
fn check_shapes(m: &ModelParams, c: &mut Checker) {
    let widths = [
        ("hidden_size", m.hidden_size),
        ("intermediate_size", m.intermediate_size),
        ("vocab_size", m.vocab_size),
    ];
    for (field, width) in widths {
        if let Some(width) = width {
            architecture_size(c, field, width);
        }
    }
    let within_layers = |c: &mut Checker, field: &str, count: u32| {
        if count > m.layers {
            c.fail(
                field,
                format!("must not exceed layers ({}), got {count}", m.layers),
            );
        }
    };
    if let Some(e) = &m.moe {
        c.at("moe", |c| {
            architecture_size(c, "expert_intermediate_size", e.expert_intermediate_size);
            if architecture_size(c, "experts", e.experts)
                && !(1..=e.experts).contains(&e.experts_per_token)
            {
                c.fail(
                    "experts_per_token",
                    format!(
                        "must be between 1 and experts ({}), got {}",
                        e.experts, e.experts_per_token
                    ),
                );
            }
            within_layers(c, "dense_layers", e.dense_layers);
            if (e.other_weight_dtype.is_some() || e.expert_scale_bits.is_some())
                && m.hidden_size.is_none()
            {
                c.fail(
                    "other_weight_dtype",
                    "needs model.hidden_size: the experts' parameters, which alone take the weight dtype, are counted from it",
                );
            }
            if let Some(bits) = e.expert_scale_bits
                && !(0.0..=16.0).contains(&bits)
            {
                c.fail(
                    "expert_scale_bits",
                    format!("must be between 0 and 16 bits per weight, got {bits}"),
                );
            }
        });
    }
    if let Some(w) = &m.sliding_window {
        c.at("sliding_window", |c| {
            c.at_least("window_tokens", w.window_tokens as u64, 1);
            within_layers(c, "layers", w.layers);
        });
    }
    if let Some(a) = &m.mla {
        let latent = a.kv_lora_rank as u64 + a.qk_rope_head_dim as u64;
        if m.kv_latent_dim.map(u64::from) != Some(latent) {
            c.fail(
                "kv_latent_dim",
                format!(
                    "must be mla.kv_lora_rank + mla.qk_rope_head_dim ({latent}): the latent attention caches those, got {}",
                    m.kv_latent_dim.map_or("none".to_string(), |d| d.to_string())
                ),
            );
        }
    }
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;

//! The replica's memory budget: weights, runtime reserve and KV cache, derived
//! from the model's architecture and the accelerator (nothing per model is
//! hard-coded).
//!
//! # Formula
//! - weights \[B\] = parameters x bytes per weight (every expert of a MoE is resident);
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
pub(crate) const FLAT_RESERVE_GIB: f64 = 2.0;

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
        let weight_bytes = m.params_b * 1e9 * m.weight_dtype.bytes();
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
    pub(crate) fn derive(params: &ScenarioParams, check: &mut Checker) -> Option<MemoryBudget> {
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
            c.at_least("layers", m.layers as u64, 1);
            c.at_least("q_heads", m.q_heads as u64, 1);
            c.at_least("kv_heads", m.kv_heads as u64, 1);
            c.at_least("head_dim", m.head_dim as u64, 1);
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
                c.at_least("kv_latent_dim", latent as u64, 1);
            }
            check_shapes(m, c);
        });
        let h = &params.hardware;
        check.at("hardware", |c| {
            c.positive("memory_gib", h.memory_gib);
            c.positive("bandwidth_gb_s", h.bandwidth_gb_s);
            c.positive("peak_tflops", h.peak_tflops);
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
            c.at_least(field, width as u64, 1);
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
            c.at_least(
                "expert_intermediate_size",
                e.expert_intermediate_size as u64,
                1,
            );
            if c.at_least("experts", e.experts as u64, 1)
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
mod tests {
    use super::*;
    use crate::model::scenario::Scenario;
    use crate::params::Dtype;
    use crate::params::presets;

    fn params(model: &str, hardware: &str, tp: u32) -> ScenarioParams {
        let mut p = ScenarioParams {
            model: presets::model(model).unwrap(),
            hardware: presets::hardware(hardware).unwrap(),
            ..ScenarioParams::overnight_batch()
        };
        p.replica.gpus_per_replica = tp;
        p
    }

    /// Each preset's KV bytes per token at TP 1, computed by hand from its
    /// published config (BF16 KV cache, 2 bytes an element):
    /// 2 (K and V) x layers x KV heads x head_dim x 2 B, or under latent
    /// attention layers x (kv_lora_rank + rope dim) x 2 B.
    const KV_BYTES_BY_HAND: [(&str, f64); 12] = [
        ("llama-3.1-8b", 131_072.0),    // 2 x 32 x 8 x 128 x 2
        ("llama-3.1-70b", 327_680.0),   // 2 x 80 x 8 x 128 x 2
        ("llama-3.1-405b", 516_096.0),  // 2 x 126 x 8 x 128 x 2 (FP8 weights, BF16 KV)
        ("mistral-7b", 131_072.0),      // 2 x 32 x 8 x 128 x 2
        ("mixtral-8x7b", 131_072.0),    // 2 x 32 x 8 x 128 x 2 (experts hold no KV)
        ("qwen2.5-7b", 57_344.0),       // 2 x 28 x 4 x 128 x 2
        ("qwen2.5-72b", 327_680.0),     // 2 x 80 x 8 x 128 x 2
        ("deepseek-v3", 70_272.0),      // 61 x (512 + 64) x 2
        ("gpt-oss-120b", 73_728.0),     // 2 x 36 x 8 x 64 x 2 (windowed layers in full)
        ("qwen3-235b-a22b", 192_512.0), // 2 x 94 x 4 x 128 x 2
        ("qwen3-30b-a3b", 98_304.0),    // 2 x 48 x 4 x 128 x 2
        ("llama-2-7b", 524_288.0),      // 2 x 32 x 32 x 128 x 2 (multi-head attention)
    ];

    #[test]
    fn kv_bytes_per_token_of_every_preset_match_the_hand_computation() {
        let ids: Vec<&str> = presets::models().iter().map(|m| m.id).collect();
        let hand_ids: Vec<&str> = KV_BYTES_BY_HAND.iter().map(|(id, _)| *id).collect();
        assert_eq!(
            ids, hand_ids,
            "every preset, and only presets, computed by hand"
        );
        for (id, bytes) in KV_BYTES_BY_HAND {
            let computed = MemoryBudget::compute(&params(id, "h100-sxm", 1)).kv_bytes_per_token;
            assert_eq!(computed, bytes, "{id}");
        }
    }

    #[test]
    fn kv_heads_are_replicated_and_latents_copied_under_tensor_parallelism() {
        // Qwen2.5-7B at TP 8: its 4 KV heads are replicated to 8, one a GPU.
        assert_eq!(
            MemoryBudget::compute(&params("qwen2.5-7b", "h100-sxm", 8)).kv_bytes_per_token,
            2.0 * 57_344.0
        );
        // DeepSeek-V3 MLA: 61 x (512 + 64) x 2 = 70,272 bytes per GPU, on each.
        assert_eq!(
            MemoryBudget::compute(&params("deepseek-v3", "h200-sxm", 8)).kv_bytes_per_token,
            8.0 * 70_272.0
        );
    }

    #[test]
    fn fp8_kv_halves_the_footprint() {
        let mut p = params("llama-3.1-8b", "h100-sxm", 1);
        p.model.kv_dtype = Dtype::Fp8;
        assert_eq!(MemoryBudget::compute(&p).kv_bytes_per_token, 65_536.0);
    }

    #[test]
    fn blocks_are_what_remains_after_weights_and_reserve() {
        let mut p = params("llama-3.1-8b", "h100-sxm", 1);
        p.replica.runtime_reserve_gib = Some(2.0);
        let b = MemoryBudget::compute(&p);
        let pool = 79.19 * GIB * 0.9 - 8.03e9 * 2.0 - 2.0 * GIB;
        assert!((b.kv_pool_bytes - pool).abs() < 1.0);
        assert_eq!(b.total_blocks, (pool / (16.0 * 131_072.0)).floor() as u32);
    }

    /// vLLM 0.19 on one H100 (llm-d-planner's accuracy sweep, commit
    /// d3121e05, accuracy/results/v0.19.0/logs; util 0.95, 1,024 sequences,
    /// 8,192 tokens a step): per GPU, its logged activation peak plus
    /// non-PyTorch memory, and for Llama-3.1-8B in BF16 the KV cache it
    /// logged in tokens. The reserve comes within 0.2 GiB of each (NCCL
    /// takes 2.06-2.21 GiB at TP 2-4, the fit 2.1), the cache within 0.5%
    /// (the log's weights are 14.99 GiB, ours 14.96).
    #[test]
    fn the_profiled_reserve_is_what_vllm_logged() {
        let logged = [
            // (model, TP, activation peak + non-torch GiB, KV tokens)
            ("llama-3.1-8b", 1, 1.89 + 0.25, Some(476_016.0)),
            ("llama-3.1-8b", 2, 1.89 + 2.07, Some(1_044_688.0)),
            ("llama-3.1-8b", 4, 1.89 + 2.13, Some(2_209_792.0)),
            ("qwen2.5-7b", 1, 2.21 + 0.24, None),
            ("llama-3.1-70b", 2, 1.96 + 2.10, None),
            ("llama-3.1-70b", 4, 1.97 + 2.21, None),
        ];
        for (model, tp, reserve, tokens) in logged {
            let mut p = params(model, "h100-sxm", tp);
            p.replica.gpu_memory_utilization = 0.95;
            p.engine.max_num_seqs = 1024;
            p.engine.max_num_batched_tokens = 8192;
            let profiled = MemoryBudget::profiled_reserve_gib(&p);
            assert!(
                (profiled - reserve).abs() < 0.2,
                "{model} TP{tp}: {profiled} GiB"
            );
            if let Some(tokens) = tokens {
                let ours = MemoryBudget::compute(&p).kv_capacity_tokens() as f64;
                assert!(
                    (ours / tokens - 1.0).abs() < 0.005,
                    "{model} TP{tp}: {ours}"
                );
            }
        }
        // The sampler's rows are the sequence slots: a quarter of them, a
        // quarter of the vocabulary's part.
        let mut p = params("llama-3.1-8b", "h100-sxm", 1);
        p.engine.max_num_seqs = 256;
        let expected = 0.25 + 0.18 + 14.0 * 256.0 * 128_256.0 / GIB;
        assert!((MemoryBudget::profiled_reserve_gib(&p) - expected).abs() < 1e-12);
        // A stated reserve wins; without a vocabulary the flat 2 GiB stays.
        p.replica.runtime_reserve_gib = Some(3.5);
        assert_eq!(MemoryBudget::reserve_gib(&p), 3.5);
        p.model.vocab_size = None;
        assert_eq!(MemoryBudget::profiled_reserve_gib(&p), 2.0);
    }

    #[test]
    fn a_model_that_does_not_fit_says_by_how_much() {
        let p = params("llama-3.1-70b", "h100-sxm", 1);
        let e = Scenario::try_from(p).unwrap_err();
        let msg = e
            .for_field("model.params_b")
            .expect("error on the parameter count");
        assert!(msg.contains("does not fit"), "{msg}");
        assert!(msg.contains("short by"), "{msg}");
        assert!(
            msg.contains("131.4 GiB"),
            "weights of 70.55B bf16 should be 131.4 GiB: {msg}"
        );
    }

    #[test]
    fn zero_memory_is_a_field_error() {
        let mut p = params("llama-3.1-8b", "h100-sxm", 1);
        p.hardware.memory_gib = 0.0;
        let e = Scenario::try_from(p).unwrap_err();
        assert!(e.for_field("hardware.memory_gib").is_some(), "{e}");
    }

    #[test]
    fn tensor_parallelism_must_match_kv_heads() {
        let p = params("llama-3.1-8b", "h100-sxm", 3);
        let e = Scenario::try_from(p).unwrap_err();
        assert!(
            e.for_field("replica.gpus_per_replica")
                .unwrap()
                .contains("KV heads (8)")
        );
    }

    /// A scenario saved before the catalog gave architecture shapes, FP8
    /// peaks and links (none of those keys in its JSON) still decodes, keeps
    /// its memory budget to the byte, and is still recognised as its preset.
    #[test]
    fn a_scenario_saved_before_the_catalog_keeps_its_numbers_and_preset() {
        // Saved then, its runtime reserve was a number (2 GiB by default).
        let mut current = params("gpt-oss-120b", "h100-sxm", 1);
        current.replica.runtime_reserve_gib = Some(2.0);
        let mut json = serde_json::to_value(&current).unwrap();
        // gpt-oss gives no dense MLP width nor latent attention: 4 model keys.
        let model = json["model"].as_object_mut().unwrap();
        let keys = [
            "hidden_size",
            "intermediate_size",
            "vocab_size",
            "moe",
            "mla",
            "sliding_window",
        ];
        assert_eq!(keys.iter().filter_map(|key| model.remove(*key)).count(), 4);
        let hardware = json["hardware"].as_object_mut().unwrap();
        for key in ["peak_fp8_tflops", "interconnect"] {
            hardware.remove(key).unwrap();
        }
        let old: ScenarioParams = serde_json::from_value(json).unwrap();
        assert_eq!(old.model.moe, None);
        assert_eq!(MemoryBudget::compute(&old), MemoryBudget::compute(&current));
        let preset_model = presets::model("gpt-oss-120b").unwrap();
        let preset_hardware = presets::hardware("h100-sxm").unwrap();
        assert!(presets::is_model_preset(&preset_model, &old.model));
        assert!(presets::is_hardware_preset(&preset_hardware, &old.hardware));
        let mut edited = old.model.clone();
        edited.layers += 1;
        assert!(!presets::is_model_preset(&preset_model, &edited));
    }

    #[test]
    fn inconsistent_shapes_are_field_errors() {
        let mut p = params("deepseek-v3", "h200-sxm", 8);
        p.model.kv_latent_dim = Some(512);
        let moe = p.model.moe.as_mut().unwrap();
        moe.experts_per_token = 257;
        moe.dense_layers = 62;
        p.model.sliding_window = Some(crate::params::SlidingWindowParams {
            window_tokens: 0,
            layers: 61,
        });
        p.model.vocab_size = Some(0);
        let e = Scenario::try_from(p).unwrap_err();
        let reason = |field: &str| e.for_field(field).unwrap_or_else(|| panic!("{field}: {e}"));
        assert!(reason("model.kv_latent_dim").contains("(576)"));
        assert!(reason("model.moe.experts_per_token").contains("between 1 and experts (256)"));
        assert!(reason("model.moe.dense_layers").contains("layers (61)"));
        assert!(reason("model.sliding_window.window_tokens").contains("at least 1"));
        assert!(reason("model.vocab_size").contains("at least 1"));
        assert!(
            e.for_field("model.sliding_window.layers").is_none(),
            "61 of 61 is allowed: {e}"
        );
    }
}

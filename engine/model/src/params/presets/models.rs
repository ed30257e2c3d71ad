//! The models: the shapes of each published config. Parameter counts marked
//! "computed" follow from those shapes (gated MLPs, untied embedding and LM
//! head; norms and biases left out), as the test below recomputes them.

use super::{ModelPreset, READ, SHARED_FACTS, read};
use crate::params::{Dtype, MlaParams, ModelParams, MoeParams, SlidingWindowParams};

/// The shapes every preset gives: (hidden size, dense MLP width, vocabulary).
type Widths = (u32, Option<u32>, u32);

fn dense(
    name: &str,
    params_b: f64,
    layers: u32,
    (q_heads, kv_heads, head_dim): (u32, u32, u32),
    (hidden_size, intermediate_size, vocab_size): Widths,
    weight_dtype: Dtype,
) -> ModelParams {
    ModelParams {
        name: name.to_string(),
        params_b,
        active_params_b: None,
        layers,
        q_heads,
        kv_heads,
        head_dim,
        kv_latent_dim: None,
        weight_dtype,
        kv_dtype: Dtype::Bf16,
        hidden_size: Some(hidden_size),
        intermediate_size,
        vocab_size: Some(vocab_size),
        moe: None,
        mla: None,
        sliding_window: None,
    }
}

/// `model` as a mixture of experts with `active_b` billion parameters per
/// token.
fn moe(model: ModelParams, active_b: f64, experts: MoeParams) -> ModelParams {
    ModelParams {
        active_params_b: Some(active_b),
        moe: Some(experts),
        ..model
    }
}

/// `experts` routed experts of width `width`, `top_k` per token, no shared
/// or dense layers.
fn routed(experts: u32, top_k: u32, width: u32) -> MoeParams {
    MoeParams {
        experts,
        experts_per_token: top_k,
        expert_intermediate_size: width,
        shared_experts: 0,
        dense_layers: 0,
        other_weight_dtype: None,
        expert_scale_bits: None,
    }
}

/// Llama 3.1 8B, the default model (preset `llama-3.1-8b`).
pub fn llama_3_1_8b() -> ModelParams {
    dense(
        "Llama-3.1-8B",
        8.03,
        32,
        (32, 8, 128),
        (4096, Some(14336), 128256),
        Dtype::Bf16,
    )
}

fn deepseek_v3() -> ModelParams {
    ModelParams {
        kv_latent_dim: Some(512 + 64),
        mla: Some(MlaParams {
            q_lora_rank: Some(1536),
            kv_lora_rank: 512,
            qk_nope_head_dim: 128,
            qk_rope_head_dim: 64,
            v_head_dim: 128,
        }),
        ..moe(
            dense(
                "DeepSeek-V3",
                671.0,
                61,
                (128, 128, 128),
                (7168, Some(18432), 129280),
                Dtype::Fp8,
            ),
            37.0,
            MoeParams {
                shared_experts: 1,
                dense_layers: 3,
                ..routed(256, 8, 2048)
            },
        )
    }
}

fn gpt_oss_120b() -> ModelParams {
    ModelParams {
        sliding_window: Some(SlidingWindowParams {
            window_tokens: 128,
            layers: 18,
        }),
        ..moe(
            dense(
                "gpt-oss-120b",
                116.8,
                36,
                (64, 8, 64),
                (2880, None, 201088),
                Dtype::Fp4,
            ),
            5.1,
            MoeParams {
                other_weight_dtype: Some(Dtype::Bf16),
                expert_scale_bits: Some(0.25),
                ..routed(128, 4, 2880)
            },
        )
    }
}

/// Every model preset.
pub fn models() -> Vec<ModelPreset> {
    vec![
        ModelPreset {
            id: "llama-3.1-8b",
            params: llama_3_1_8b(),
            sources: vec![read(
                "32 layers, 32 heads, 8 KV heads, head_dim 128, hidden 4096, MLP 14336, vocabulary 128256; 8.03 B parameters computed",
                "HF config.json as dumped in citsjtu2020/LLM-Prof sglang/Model_Config.md @ 8434c8d; meta-llama/llama-models models/sku_list.py @ 8c88b8c",
                SHARED_FACTS,
            )],
        },
        ModelPreset {
            id: "llama-3.1-70b",
            params: dense(
                "Llama-3.1-70B",
                70.55,
                80,
                (64, 8, 128),
                (8192, Some(28672), 128256),
                Dtype::Bf16,
            ),
            sources: vec![read(
                "80 layers, 64 heads, 8 KV heads, hidden 8192, MLP 28672 (ffn_dim_multiplier 1.3, multiple_of 4096), vocabulary 128256; 70.55 B computed",
                "meta-llama/llama-models models/sku_list.py @ 8c88b8c; microsoft/vidur Llama370BModelConfig",
                SHARED_FACTS,
            )],
        },
        ModelPreset {
            id: "llama-3.1-405b",
            params: dense(
                "Llama-3.1-405B",
                405.9,
                126,
                (128, 8, 128),
                (16384, Some(53248), 128256),
                Dtype::Fp8,
            ),
            sources: vec![read(
                "126 layers, 128 heads, 8 KV heads, hidden 16384, MLP 53248 (ffn_dim_multiplier 1.2, multiple_of 4096), vocabulary 128256; 405.9 B computed; served with FP8 weights",
                "meta-llama/llama-models models/sku_list.py @ 8c88b8c",
                SHARED_FACTS,
            )],
        },
        ModelPreset {
            id: "mistral-7b",
            params: dense(
                "Mistral-7B (v0.2)",
                7.24,
                32,
                (32, 8, 128),
                (4096, Some(14336), 32000),
                Dtype::Bf16,
            ),
            sources: vec![read(
                "v0.2 shapes: 32 layers, 32 heads, 8 KV heads, head_dim 128, hidden 4096, MLP 14336, vocabulary 32000, no sliding window (v0.1 had a 4,096-token window); 7.24 B computed",
                "edadaltocg/mistral-src-finetune finetune/config.py (\"Mistral-7B-v0.2-Instruct\")",
                SHARED_FACTS,
            )],
        },
        ModelPreset {
            id: "mixtral-8x7b",
            params: moe(
                dense(
                    "Mixtral-8x7B",
                    46.7,
                    32,
                    (32, 8, 128),
                    (4096, None, 32000),
                    Dtype::Bf16,
                ),
                12.9,
                routed(8, 2, 14336),
            ),
            sources: vec![read(
                "32 layers, 32 heads, 8 KV heads, hidden 4096, 8 experts of width 14336, top-2, vocabulary 32000; 46.7 B total and 12.9 B active computed",
                "huggingface/candle candle-transformers/src/models/mixtral.rs Config::v0_1_8x7b (after the HF config.json)",
                SHARED_FACTS,
            )],
        },
        ModelPreset {
            id: "qwen2.5-7b",
            params: dense(
                "Qwen2.5-7B",
                7.62,
                28,
                (28, 4, 128),
                (3584, Some(18944), 152064),
                Dtype::Bf16,
            ),
            sources: vec![read(
                "28 layers, 28 heads, 4 KV heads, hidden 3584, MLP 18944, vocabulary 152064; 7.62 B computed (QKV biases included)",
                "HF config.json as dumped in citsjtu2020/LLM-Prof sglang/Model_Config.md @ 8434c8d",
                SHARED_FACTS,
            )],
        },
        ModelPreset {
            id: "qwen2.5-72b",
            params: dense(
                "Qwen2.5-72B",
                72.7,
                80,
                (64, 8, 128),
                (8192, Some(29568), 152064),
                Dtype::Bf16,
            ),
            sources: vec![read(
                "80 layers, 64 heads, 8 KV heads, hidden 8192, MLP 29568, vocabulary 152064; 72.7 B computed",
                "third-party copies of the HF config.json (eight or more public code copies; repository paths not resolved)",
                SHARED_FACTS,
            )],
        },
        ModelPreset {
            id: "deepseek-v3",
            params: deepseek_v3(),
            sources: vec![read(
                "61 layers (first 3 dense, MLP 18432), hidden 7168, 128 heads, MLA (q_lora_rank 1536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v_head 128), 256 routed experts of width 2048 + 1 shared, top-8, vocabulary 129280, FP8 weights; 671 B total, 37 B activated",
                "deepseek-ai/DeepSeek-V3 inference/configs/config_671B.json and README.md @ 9b4e978",
                SHARED_FACTS,
            )],
        },
        ModelPreset {
            id: "gpt-oss-120b",
            params: gpt_oss_120b(),
            sources: vec![
                read(
                    "36 layers, 64 heads, 8 KV heads, head_dim 64, hidden 2880, 128 experts of width 2880, top-4, vocabulary 201088, 128-token sliding window, MXFP4 expert weights; 117 B total (116.8 computed), 5.1 B active",
                    "openai/gpt-oss gpt_oss/torch/model.py ModelConfig and README.md @ 7b58334",
                    SHARED_FACTS,
                ),
                read(
                    "only the MoE experts' linear weights in MXFP4: 32 FP4 values in 16 bytes plus a one-byte scale per block, 4.25 bits a weight; every other tensor in BF16 (65.2 GB in all)",
                    "openai/gpt-oss README.md \"Precision format\" and gpt_oss/torch/weights.py @ 7b58334",
                    "2026-11-27",
                ),
                read(
                    "the window on every other layer (even layers: 18 of 36)",
                    "vllm-project/vllm vllm/model_executor/models/gpt_oss.py (\"Only apply sliding window to every other layer\")",
                    READ,
                ),
            ],
        },
        ModelPreset {
            id: "qwen3-235b-a22b",
            params: moe(
                dense(
                    "Qwen3-235B-A22B",
                    235.1,
                    94,
                    (64, 4, 128),
                    (4096, None, 151936),
                    Dtype::Bf16,
                ),
                22.0,
                routed(128, 8, 1536),
            ),
            sources: vec![read(
                "94 layers, all MoE, 64 heads, 4 KV heads, head_dim 128, hidden 4096, 128 experts of width 1536, top-8, vocabulary 151936; 235.1 B computed, 22 B activated (the name)",
                "THUDM/slime scripts/models/qwen3-235B-A22B.sh (Megatron arguments transcribed from the HF config)",
                READ,
            )],
        },
        ModelPreset {
            id: "qwen3-30b-a3b",
            params: moe(
                dense(
                    "Qwen3-30B-A3B",
                    30.5,
                    48,
                    (32, 4, 128),
                    (2048, None, 151936),
                    Dtype::Bf16,
                ),
                3.3,
                routed(128, 8, 768),
            ),
            sources: vec![read(
                "48 layers, all MoE (mlp_only_layers empty), 32 heads, 4 KV heads, head_dim 128, hidden 2048, 128 experts of width 768, top-8, vocabulary 151936; 30.5 B total and 3.35 B active computed",
                "third-party copies of the HF config.json (NVIDIA Megatron-Bridge-style test fixtures and vLLM test configs found by the exact string \"moe_intermediate_size\": 768); one copy gives 8 KV heads, the others 4",
                READ,
            )],
        },
        ModelPreset {
            id: "llama-2-7b",
            params: dense(
                "Llama-2-7B",
                6.7,
                32,
                (32, 32, 128),
                (4096, Some(11008), 32000),
                Dtype::Bf16,
            ),
            sources: vec![read(
                "32 layers, 32 heads, 32 KV heads (multi-head attention), hidden 4096, MLP 11008, vocabulary 32000",
                "microsoft/vidur vidur/config/model_config.py Llama2_7BModelConfig",
                SHARED_FACTS,
            )],
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weight matrices from the architecture fields \[parameters\]: total
    /// and per token (routed experts at top-k), embedding and LM head
    /// (`2 x vocab x hidden`) counted in both.
    ///
    /// # Formula
    /// - attention per layer, grouped-query: `hidden x heads x head_dim`
    ///   (queries) + `2 x hidden x kv_heads x head_dim` (keys, values) +
    ///   `heads x head_dim x hidden` (output); latent (MLA): queries through
    ///   `q_lora_rank`, `hidden x (kv_lora_rank + rope)` down,
    ///   `kv_lora_rank x heads x (nope + v)` up, `heads x v x hidden` out;
    /// - gated MLP of width w: `3 x hidden x w`; a MoE layer has
    ///   `experts + shared` of them plus a `hidden x experts` router.
    fn weights(m: &ModelParams) -> (f64, f64) {
        let f = |x: u32| x as f64;
        let hidden = f(m.hidden_size.unwrap());
        let heads = f(m.q_heads);
        let attention = match &m.mla {
            None => {
                2.0 * hidden * heads * f(m.head_dim) + 2.0 * hidden * f(m.kv_heads * m.head_dim)
            }
            Some(a) => {
                let qk = heads * f(a.qk_nope_head_dim + a.qk_rope_head_dim);
                let queries = match a.q_lora_rank {
                    Some(rank) => hidden * f(rank) + f(rank) * qk,
                    None => hidden * qk,
                };
                queries
                    + hidden * f(a.kv_lora_rank + a.qk_rope_head_dim)
                    + f(a.kv_lora_rank) * heads * f(a.qk_nope_head_dim + a.v_head_dim)
                    + heads * f(a.v_head_dim) * hidden
            }
        };
        let mlp = |width: u32| 3.0 * hidden * f(width);
        let dense_layers = m.moe.as_ref().map_or(m.layers, |e| e.dense_layers);
        let dense = f(dense_layers) * m.intermediate_size.map_or(0.0, mlp);
        let embeddings = 2.0 * f(m.vocab_size.unwrap()) * hidden;
        let shared = f(m.layers) * attention + dense + embeddings;
        match &m.moe {
            None => (shared, shared),
            Some(e) => {
                let moe_layers = f(m.layers - e.dense_layers);
                let experts = |n: u32| {
                    moe_layers * (f(n + e.shared_experts) * mlp(e.expert_intermediate_size))
                        + moe_layers * hidden * f(e.experts)
                };
                (
                    shared + experts(e.experts),
                    shared + experts(e.experts_per_token),
                )
            }
        }
    }

    /// The shapes agree with the published parameter counts: a wrong hidden
    /// size, MLP width, vocabulary or expert count moves the total by more
    /// than the norms and biases the count leaves out (under 1%, Qwen2.5's
    /// QKV biases included). Publishers count active parameters with or
    /// without the embedding (gpt-oss without, Qwen and Mixtral with), so
    /// the stated active count must lie between the two.
    #[test]
    fn every_model_shape_gives_its_published_parameter_count() {
        for preset in models() {
            let m = &preset.params;
            let (total, active) = weights(m);
            let stated = m.params_b * 1e9;
            assert!(
                (total / stated - 1.0).abs() < 0.02,
                "{}: shapes give {:.2} B, stated {}",
                preset.id,
                total / 1e9,
                m.params_b
            );
            if let Some(active_b) = m.active_params_b {
                let embeddings = 2.0 * m.vocab_size.unwrap() as f64 * m.hidden_size.unwrap() as f64;
                let stated = active_b * 1e9;
                assert!(
                    (active - embeddings) * 0.98 <= stated && stated <= active * 1.02,
                    "{}: shapes give {:.2} B active, stated {active_b}",
                    preset.id,
                    active / 1e9
                );
            }
        }
    }
}

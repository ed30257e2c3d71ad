//! The model as a user writes it: its architecture (layers, heads,
//! precisions, and the optional shapes a per-operation step time needs:
//! experts, latent attention, sliding windows), from which memory and FLOPs
//! are derived.

use serde::{Deserialize, Serialize};

/// Numeric precision of weights or KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    Fp32,
    Bf16,
    Fp16,
    Fp8,
    Int8,
    Int4,
    Fp4,
}

impl Dtype {
    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Fp32 => 4.0,
            Dtype::Bf16 | Dtype::Fp16 => 2.0,
            Dtype::Fp8 | Dtype::Int8 => 1.0,
            Dtype::Int4 | Dtype::Fp4 => 0.5,
        }
    }
}

/// The model's architecture, from which memory and FLOPs are derived. Every
/// field but the optional ones must be given (there is no neutral model).
///
/// The optional shapes after `kv_dtype` (hidden size, MLP widths, vocabulary,
/// experts, latent attention, sliding windows) are what a per-operation step
/// time needs; presets give them from each model's published config, and a
/// scenario without them keeps every number it had.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelParams {
    pub name: String,
    /// Total parameters \[billions\].
    pub params_b: f64,
    /// Parameters active per token for a mixture of experts \[billions\];
    /// `None` for a dense model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_params_b: Option<f64>,
    pub layers: u32,
    /// Query (attention) heads.
    pub q_heads: u32,
    /// Key/value heads (fewer than query heads under grouped-query attention).
    pub kv_heads: u32,
    pub head_dim: u32,
    /// Multi-head latent attention (DeepSeek): elements cached per token per
    /// layer (kv_lora_rank + rope dim), replacing 2 x kv_heads x head_dim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_latent_dim: Option<u32>,
    pub weight_dtype: Dtype,
    pub kv_dtype: Dtype,
    /// Width of the residual stream (`hidden_size` in Hugging Face configs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_size: Option<u32>,
    /// Inner width of a dense layer's gated MLP (`intermediate_size`); `None`
    /// when every layer is a mixture of experts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intermediate_size: Option<u32>,
    /// Tokens in the vocabulary (rows of the embedding and of the LM head).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab_size: Option<u32>,
    /// The experts of a mixture-of-experts model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe: Option<MoeParams>,
    /// The projections of multi-head latent attention (DeepSeek).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mla: Option<MlaParams>,
    /// Layers that attend only to the last few tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding_window: Option<SlidingWindowParams>,
}

/// A mixture of experts: each MoE layer routes every token to
/// `experts_per_token` of its `experts`, plus any shared experts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoeParams {
    /// Routed experts per MoE layer.
    pub experts: u32,
    /// Routed experts each token goes through (top-k).
    pub experts_per_token: u32,
    /// Inner width of one expert's gated MLP (`moe_intermediate_size`).
    pub expert_intermediate_size: u32,
    /// Experts every token goes through, of the same width.
    #[serde(default)]
    pub shared_experts: u32,
    /// The first layers are dense (their MLP is `intermediate_size` wide).
    #[serde(default)]
    pub dense_layers: u32,
    /// Precision of every weight outside the routed experts (attention,
    /// router, shared experts, embeddings, LM head) when a checkpoint
    /// quantizes its experts only, as gpt-oss keeps all but its MXFP4
    /// experts in BF16; `None`: every weight is in the model's
    /// `weight_dtype`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_weight_dtype: Option<Dtype>,
    /// Bits of block scale stored per routed-expert weight, beyond the
    /// weight dtype's own: MXFP4 keeps one 8-bit scale per 32 weights
    /// (0.25, so 4.25 bits a weight). `None`: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expert_scale_bits: Option<f64>,
}

/// Multi-head latent attention: queries and keys/values go through low-rank
/// projections, and the cache holds the compressed key/value latent
/// (`kv_lora_rank`) and the shared rotary key (`qk_rope_head_dim`) per layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MlaParams {
    /// Rank of the query projection; `None` projects queries directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q_lora_rank: Option<u32>,
    pub kv_lora_rank: u32,
    /// Per-head query/key dimension without rotary position.
    pub qk_nope_head_dim: u32,
    /// Per-head query/key dimension with rotary position.
    pub qk_rope_head_dim: u32,
    /// Per-head value dimension.
    pub v_head_dim: u32,
}

/// Sliding-window attention on some layers: each of those attends to (and
/// needs the keys and values of) only its last `window_tokens` tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlidingWindowParams {
    /// Tokens a windowed layer attends to.
    pub window_tokens: u32,
    /// How many of the layers are windowed (the rest attend to everything).
    pub layers: u32,
}

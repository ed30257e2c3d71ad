//! The models the published points ran: the catalog's, and five that only
//! calibration uses (Llama 2 7B / 70B, Qwen3 8B / 14B, QwQ-32B).

use crate::params::{Dtype, ModelParams, presets};

/// The model a point names: a catalog id, Llama 3.3 70B (the catalog's
/// Llama 3.1 70B: Meta released 3.3 as the same architecture, newly
/// trained; an assumption, see `docs/calibration-sources.md`), Llama 2
/// 7B / 70B, Qwen3 8B / 14B, or QwQ-32B.
pub(super) fn model(name: &str) -> Option<ModelParams> {
    match name {
        "Llama-3.3-70B-Instruct" => presets::model("llama-3.1-70b"),
        "Llama-2-7B" => Some(llama_2(6.74, 32, (32, 32), (4096, 11008))),
        "Llama-2-70B" => Some(llama_2(68.98, 80, (64, 8), (8192, 28672))),
        "Qwen3-8B" => Some(qwen_3(8.19, 36, 32, (4096, 12288))),
        "Qwen3-14B" => Some(qwen_3(14.77, 40, 40, (5120, 17408))),
        "QwQ-32B" => Some(qwq_32b()),
        id => presets::model(id),
    }
}

/// A dense Qwen3 model in BF16: 8 KV heads, head dimension 128, vocabulary
/// 151,936, untied embeddings. Shapes from the models' published
/// `config.json` (Qwen/Qwen3-8B, Qwen/Qwen3-14B; read as copies in the code
/// index, `docs/calibration-sources.md`); parameters computed from them
/// (per layer 2 h x q + 2 h x 1,024 for the attention, q = heads x 128,
/// plus 3 h x mlp; plus 2 x 151,936 x h).
fn qwen_3(params_b: f64, layers: u32, q_heads: u32, (hidden, mlp): (u32, u32)) -> ModelParams {
    ModelParams {
        name: format!("Qwen3-{}B", params_b.floor()),
        params_b,
        active_params_b: None,
        layers,
        q_heads,
        kv_heads: 8,
        head_dim: 128,
        kv_latent_dim: None,
        weight_dtype: Dtype::Bf16,
        kv_dtype: Dtype::Bf16,
        hidden_size: Some(hidden),
        intermediate_size: Some(mlp),
        vocab_size: Some(151_936),
        moe: None,
        mla: None,
        sliding_window: None,
    }
}

/// QwQ-32B in BF16, Qwen2.5-32B's architecture: 64 layers, hidden 5,120,
/// 40 heads, 8 KV heads, head dimension 128, MLP 27,648, vocabulary
/// 152,064, untied embeddings. Shapes from copies of its `config.json` and
/// module tree in the code index (`docs/calibration-sources.md`);
/// parameters computed from them as for Qwen3, plus the query, key and
/// value biases (5,120 + 2 x 1,024 per layer): 32.76 B. Qwen3's form
/// (8 KV heads, head dimension 128, untied) with its own vocabulary.
fn qwq_32b() -> ModelParams {
    ModelParams {
        name: "QwQ-32B".into(),
        vocab_size: Some(152_064),
        ..qwen_3(32.76, 64, 40, (5120, 27648))
    }
}

/// A Llama 2 model: head dimension 128, vocabulary 32,000, untied
/// embeddings. Shapes from Vidur's `Llama2_7BModelConfig` and
/// `Llama2_70BModelConfig` (microsoft/vidur, vidur/config/model_config.py);
/// parameters computed from them (per layer 4 h^2 attention, or h^2 x 2 +
/// h x h/8 x 2 with 8 KV heads, plus 3 h x mlp; plus 2 x 32,000 x h).
fn llama_2(
    params_b: f64,
    layers: u32,
    (q_heads, kv_heads): (u32, u32),
    (hidden, mlp): (u32, u32),
) -> ModelParams {
    ModelParams {
        name: format!("Llama-2-{}B", params_b.round()),
        params_b,
        active_params_b: None,
        layers,
        q_heads,
        kv_heads,
        head_dim: 128,
        kv_latent_dim: None,
        weight_dtype: Dtype::Fp16,
        kv_dtype: Dtype::Fp16,
        hidden_size: Some(hidden),
        intermediate_size: Some(mlp),
        vocab_size: Some(32_000),
        moe: None,
        mla: None,
        sliding_window: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stated totals follow from the shapes (the formulas in `llama_2`
    /// and `qwen_3`).
    #[test]
    fn llama_2_parameter_counts_follow_from_their_shapes() {
        for (name, layers, hidden, kv, mlp) in [
            ("Llama-2-7B", 32.0, 4096.0, 4096.0, 11008.0),
            ("Llama-2-70B", 80.0, 8192.0, 1024.0, 28672.0),
        ] {
            let m = model(name).expect("known");
            let per_layer = 2.0 * hidden * hidden + 2.0 * hidden * kv + 3.0 * hidden * mlp;
            let total = layers * per_layer + 2.0 * 32_000.0 * hidden;
            assert!((total / 1e9 - m.params_b).abs() < 0.01, "{name}: {total}");
        }
        for (name, layers, hidden, q, mlp) in [
            ("Qwen3-8B", 36.0, 4096.0, 4096.0, 12288.0),
            ("Qwen3-14B", 40.0, 5120.0, 5120.0, 17408.0),
        ] {
            let m = model(name).expect("known");
            let per_layer = 2.0 * hidden * q + 2.0 * hidden * 1024.0 + 3.0 * hidden * mlp;
            let total = layers * per_layer + 2.0 * 151_936.0 * hidden;
            assert!((total / 1e9 - m.params_b).abs() < 0.01, "{name}: {total}");
            assert_eq!(m.name, name);
        }
        let qwq = model("QwQ-32B").expect("known");
        let (hidden, q, mlp) = (5120.0, 5120.0, 27648.0);
        let per_layer = 2.0 * hidden * q + 2.0 * hidden * 1024.0 + 3.0 * hidden * mlp + q + 2048.0;
        let total = 64.0 * per_layer + 2.0 * 152_064.0 * hidden;
        assert!(
            (total / 1e9 - qwq.params_b).abs() < 0.01,
            "QwQ-32B: {total}"
        );
        assert_eq!(
            (qwq.name.as_str(), qwq.vocab_size),
            ("QwQ-32B", Some(152_064))
        );
        assert_eq!(
            model("Llama-3.3-70B-Instruct"),
            presets::model("llama-3.1-70b")
        );
        assert!(model("gpt-oss-120b").is_some());
        assert!(model("unknown").is_none());
    }
}

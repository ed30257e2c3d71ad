//! Named models and accelerators, copied from the team's shared facts
//! (`../shared/facts.md`, outside this repository) with each figure's source
//! in `source` (see `docs/calibration.md`). A preset fills every field; the
//! user may edit any of them afterwards.
//!
//! `verified` is false where the figure was not read in a primary or cited
//! source (vendor headline numbers); the UI marks those.

use serde::Serialize;

use crate::params::{Dtype, HardwareParams, ModelParams};

/// A model preset with its provenance.
#[derive(Clone, Debug, Serialize)]
pub struct ModelPreset {
    pub id: &'static str,
    pub params: ModelParams,
    pub source: &'static str,
}

/// An accelerator preset with its provenance.
#[derive(Clone, Debug, Serialize)]
pub struct HardwarePreset {
    pub id: &'static str,
    pub params: HardwareParams,
    pub verified: bool,
    pub source: &'static str,
}

fn dense(
    name: &str,
    params_b: f64,
    layers: u32,
    q_heads: u32,
    kv_heads: u32,
    head_dim: u32,
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
    }
}

/// Llama 3.1 8B, the default model (preset `llama-3.1-8b`).
pub fn llama_3_1_8b() -> ModelParams {
    dense("Llama-3.1-8B", 8.03, 32, 32, 8, 128, Dtype::Bf16)
}

/// Every model preset.
pub fn models() -> Vec<ModelPreset> {
    let moe = |mut m: ModelParams, active: f64| {
        m.active_params_b = Some(active);
        m
    };
    vec![
        ModelPreset {
            id: "llama-3.1-8b",
            params: llama_3_1_8b(),
            source: "HF config.json (32 layers, 32 heads, 8 KV heads, head_dim 128); parameters computed",
        },
        ModelPreset {
            id: "llama-3.1-70b",
            params: dense("Llama-3.1-70B", 70.55, 80, 64, 8, 128, Dtype::Bf16),
            source: "meta-llama/llama-models sku_list.py (80 layers, 64 heads, 8 KV heads)",
        },
        ModelPreset {
            id: "llama-3.1-405b",
            params: dense("Llama-3.1-405B", 405.9, 126, 128, 8, 128, Dtype::Fp8),
            source: "meta-llama/llama-models sku_list.py (126 layers, 128 heads, 8 KV heads); FP8 weights",
        },
        ModelPreset {
            id: "mistral-7b",
            params: dense("Mistral-7B (v0.2)", 7.24, 32, 32, 8, 128, Dtype::Bf16),
            source: "mistral-src finetune config (v0.2 shapes); no sliding window",
        },
        ModelPreset {
            id: "mixtral-8x7b",
            params: moe(
                dense("Mixtral-8x7B", 46.7, 32, 32, 8, 128, Dtype::Bf16),
                12.9,
            ),
            source: "candle mixtral.rs Config::v0_1_8x7b (8 experts, top-2)",
        },
        ModelPreset {
            id: "qwen2.5-7b",
            params: dense("Qwen2.5-7B", 7.62, 28, 28, 4, 128, Dtype::Bf16),
            source: "HF config.json (28 layers, 28 heads, 4 KV heads)",
        },
        ModelPreset {
            id: "qwen2.5-72b",
            params: dense("Qwen2.5-72B", 72.7, 80, 64, 8, 128, Dtype::Bf16),
            source: "third-party copies of config.json (80 layers, 64 heads, 8 KV heads)",
        },
        ModelPreset {
            id: "deepseek-v3",
            params: ModelParams {
                kv_latent_dim: Some(512 + 64),
                ..moe(
                    dense("DeepSeek-V3", 671.0, 61, 128, 128, 128, Dtype::Fp8),
                    37.0,
                )
            },
            source: "deepseek-ai/DeepSeek-V3 config_671B.json (61 layers, MLA kv_lora_rank 512 + rope 64, 37B active)",
        },
        ModelPreset {
            id: "gpt-oss-120b",
            params: moe(dense("gpt-oss-120b", 116.8, 36, 64, 8, 64, Dtype::Fp4), 5.1),
            source: "openai/gpt-oss ModelConfig (36 layers, 64 heads, 8 KV heads, head_dim 64); every layer counted as full attention",
        },
        ModelPreset {
            id: "llama-2-7b",
            params: dense("Llama-2-7B", 6.7, 32, 32, 32, 128, Dtype::Bf16),
            source: "Vidur Llama2_7BModelConfig (multi-head attention)",
        },
    ]
}

fn gpu(name: &str, memory_gib: f64, bandwidth_gb_s: f64, peak_tflops: f64) -> HardwareParams {
    HardwareParams {
        name: name.to_string(),
        memory_gib,
        bandwidth_gb_s,
        peak_tflops,
    }
}

/// The H100 SXM, the default accelerator (preset `h100-sxm`).
pub fn h100_sxm() -> HardwareParams {
    gpu("H100 SXM5 80GB", 80.0, 3350.0, 989.4)
}

/// Every accelerator preset. Peak throughput is dense BF16/FP16.
pub fn hardware_presets() -> Vec<HardwarePreset> {
    vec![
        HardwarePreset {
            id: "h100-sxm",
            params: h100_sxm(),
            verified: true,
            source: "glennklockwood.com H100 table; Vidur device_sku_config",
        },
        HardwarePreset {
            id: "h100-pcie",
            params: gpu("H100 PCIe 80GB", 80.0, 2000.0, 756.0),
            verified: false,
            source: "bandwidth: NVIDIA product brief PB-11133-001; TFLOPS not verified",
        },
        HardwarePreset {
            id: "h200-sxm",
            params: gpu("H200 SXM 141GB", 141.0, 4800.0, 989.0),
            verified: true,
            source: "H100 vs H200 spec tables (same GH100 compute, 141 GB, 4.8 TB/s)",
        },
        HardwarePreset {
            id: "a100-40gb",
            params: gpu("A100 40GB", 40.0, 1555.0, 312.0),
            verified: true,
            source: "cloud-atlas nvidia_a100 (1,555 GB/s); 312 TFLOPS dense",
        },
        HardwarePreset {
            id: "a100-80gb",
            params: gpu("A100 80GB SXM4", 80.0, 2039.0, 312.0),
            verified: true,
            source: "cloud-atlas (SXM 2,039 GB/s); Vidur a100 312 TFLOPS",
        },
        HardwarePreset {
            id: "l40s",
            params: gpu("L40S 48GB", 48.0, 864.0, 362.0),
            verified: false,
            source: "vendor headline figures, not verified",
        },
        HardwarePreset {
            id: "l4",
            params: gpu("L4 24GB", 24.0, 300.0, 121.0),
            verified: false,
            source: "vendor headline figures, not verified",
        },
        HardwarePreset {
            id: "b200",
            params: gpu("B200 180GB", 180.0, 8000.0, 2250.0),
            verified: false,
            source: "approximate vendor figures, not verified",
        },
        HardwarePreset {
            id: "mi300x",
            params: gpu("MI300X 192GB", 192.0, 5300.0, 1307.0),
            verified: true,
            source: "Vultr inference cookbook hardware requirements (192 GB HBM3, 5.3 TB/s, 1,307 TFLOPS FP16)",
        },
        HardwarePreset {
            id: "mi325x",
            params: gpu("MI325X 256GB", 256.0, 6000.0, 1307.0),
            verified: true,
            source: "Vultr inference cookbook (256 GB HBM3E, 6.0 TB/s, 1,307 TFLOPS FP16)",
        },
        HardwarePreset {
            id: "tpu-v5e",
            params: gpu("TPU v5e (per chip)", 16.0, 819.0, 197.0),
            verified: true,
            source: "cloud.google.com/tpu/docs/v5e",
        },
    ]
}

/// The model preset called `id`.
pub fn model(id: &str) -> Option<ModelParams> {
    models().into_iter().find(|m| m.id == id).map(|m| m.params)
}

/// The accelerator preset called `id`.
pub fn hardware(id: &str) -> Option<HardwareParams> {
    hardware_presets()
        .into_iter()
        .find(|h| h.id == id)
        .map(|h| h.params)
}

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
    // Its weights as they were: every parameter at FP4's half byte (the
    // preset's now count its BF16 tensors and the experts' block scales).
    let was = MemoryBudget::compute(&old);
    assert_eq!(was.weight_bytes, 116.8e9 * 0.5);
    let moe = current.model.moe.as_mut().unwrap();
    (moe.other_weight_dtype, moe.expert_scale_bits) = (None, None);
    assert_eq!(was, MemoryBudget::compute(&current));
    let preset_model = presets::model("gpt-oss-120b").unwrap();
    let preset_hardware = presets::hardware("h100-sxm").unwrap();
    assert!(presets::is_model_preset(&preset_model, &old.model));
    assert!(presets::is_hardware_preset(&preset_hardware, &old.hardware));
    let mut edited = old.model.clone();
    edited.layers += 1;
    assert!(!presets::is_model_preset(&preset_model, &edited));
}

/// gpt-oss keeps only its experts in MXFP4 (4 bits and a one-byte scale
/// per 32 weights: 4.25 bits) and every other tensor in BF16: 36 x 128
/// x 3 x 2,880^2 = 114,661,785,600 expert parameters at 0.53125 bytes and
/// the other 2.138e9 at 2 make 65.19 GB. A
/// mixture of experts without that layout keeps parameters x bytes.
#[test]
fn a_checkpoint_that_quantizes_only_its_experts_weighs_what_it_stores() {
    let experts = 36.0 * 128.0 * 3.0 * 2880.0 * 2880.0;
    let by_hand = experts * 4.25 / 8.0 + (116.8e9 - experts) * 2.0;
    let gpt_oss = MemoryBudget::compute(&params("gpt-oss-120b", "h100-sxm", 1));
    assert!(
        (gpt_oss.weight_bytes - by_hand).abs() < 1.0,
        "{}",
        gpt_oss.weight_bytes
    );
    let layout = WeightBytes::of(&presets::model("gpt-oss-120b").unwrap());
    assert_eq!(layout.routed_params, Some(experts));
    assert!((layout.routed - experts * 4.25 / 8.0).abs() < 1.0);

    let mixtral = params("mixtral-8x7b", "h100-sxm", 2);
    let m = &mixtral.model;
    assert_eq!(
        MemoryBudget::compute(&mixtral).weight_bytes,
        m.params_b * 1e9 * m.weight_dtype.bytes()
    );
}

#[test]
fn a_quantized_expert_layout_needs_its_widths_and_a_sane_scale() {
    let reason = |p: ScenarioParams, field: &str| {
        let e = Scenario::try_from(p).unwrap_err();
        e.for_field(field)
            .unwrap_or_else(|| panic!("{field}: {e}"))
            .to_string()
    };
    let mut p = params("gpt-oss-120b", "h100-sxm", 1);
    p.model.moe.as_mut().unwrap().expert_scale_bits = Some(-1.0);
    assert!(reason(p, "model.moe.expert_scale_bits").contains("between 0 and 16"));
    let mut p = params("gpt-oss-120b", "h100-sxm", 1);
    p.model.hidden_size = None;
    assert!(reason(p, "model.moe.other_weight_dtype").contains("needs model.hidden_size"));
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

// Architecture sizes above 2^20 are typos no model has: refused by field
// (before, a head_dim of 2,000,000 read as a model whose one KV block does
// not fit, blamed on its weights, and other sizes passed).
#[test]
fn absurd_architecture_sizes_are_refused_by_name() {
    let mut p = params("qwen3-30b-a3b", "h100-sxm", 1);
    p.model.head_dim = 2_000_000;
    p.model.vocab_size = Some(1 << 21);
    p.model.moe.as_mut().unwrap().experts = 5_000_000;
    let e = Scenario::try_from(p).unwrap_err();
    for field in ["model.head_dim", "model.vocab_size", "model.moe.experts"] {
        let reason = e.for_field(field).unwrap_or_else(|| panic!("{field}: {e}"));
        assert!(reason.starts_with("must be at most 1048576"), "{reason}");
    }
    let mut largest = params("llama-3.1-8b", "h100-sxm", 1);
    largest.model.vocab_size = Some(1 << 20);
    Scenario::try_from(largest).expect("2^20 itself is allowed");
}

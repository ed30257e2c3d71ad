use super::*;
use crate::model::scenario::Scenario;
use crate::model::step_time::tests::{check_pieces, decode_shape};
use crate::model::step_time::{StepShape, StepTimeModel};
use crate::params::{CudaGraphs, EngineParams, ModelParams, StepTimeParams, presets};

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

// Without a hidden size the LM head's width is q_heads x head_dim, which
// for 2^20 heads of 4,096 (each size allowed) is 2^32: one past u32::MAX,
// a multiplication in u32 wrapped it to 0 (no LM head at all) in a release
// build and panicked in a debug one.
#[test]
fn an_attention_width_beyond_u32_is_not_wrapped() {
    let model = h100_8b(|p| {
        p.model.q_heads = 1 << 20;
        p.model.head_dim = 4096;
        p.model.hidden_size = None;
    });
    let o = ops(&model);
    let width = 4096.0 * (1u64 << 20) as f64;
    let head_s = 2.0 * 128_256.0 * width / (989.4e12 * o.efficiencies.gemm);
    assert!(
        (o.head_s_per_sample / head_s - 1.0).abs() < 1e-12,
        "{} vs {head_s}",
        o.head_s_per_sample
    );
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
    for sizes in [vec![], vec![0, 8]] {
        let mut p = ScenarioParams::overnight_batch();
        p.step_time = StepTimeParams::Operations(OperationsParams {
            cuda_graphs: CudaGraphs::DecodeBatchSizes(sizes),
            ..OperationsParams::default()
        });
        let err = Scenario::try_from(p).expect_err("refused");
        let reason = err.for_field("step_time.cuda_graphs.decode_batch_sizes");
        assert!(reason.is_some_and(|r| r.contains("at least 1")), "{err}");
    }
}

/// `x` to the `n`th power by repeated multiplication (not the code's
/// `libm::pow`, so the test checks the formula, not the same call).
fn power(x: f64, n: u64) -> f64 {
    (0..n).fold(1.0, |acc, _| acc * x)
}

/// gpt-oss-120b (preset: 116.8e9 parameters, 36 layers of 128 experts
/// 2,880 wide over a 2,880-wide residual, top-4) on one H100: its routed
/// experts hold 36 x 128 x 3 x 2,880^2 = 114.66e9 parameters (98.2%) at
/// 4.25 bits, the other 2.14e9 at BF16's 16, so the experts are 93.4% of
/// the bytes, and a step of T tokens reads the other 6.6% and
/// 1 - (1 - 4/128)^T of the experts; a model known only by its active
/// share keeps max(a, 1 - (1 - a)^T).
#[test]
fn a_mixture_of_experts_reads_the_experts_its_tokens_touch() {
    let gpt_oss = presets::model("gpt-oss-120b").expect("preset");
    let model = h100_8b(|p| p.model = gpt_oss.clone());
    let o = ops(&model);
    let experts = 36.0 * 128.0 * 3.0 * 2880.0 * 2880.0;
    let expert_bytes = experts * 4.25 / 8.0;
    let routed = expert_bytes / (expert_bytes + (116.8e9 - experts) * 2.0);
    for t in [1u64, 4, 64, 1024] {
        let by_hand = 1.0 - routed + routed * (1.0 - power(1.0 - 4.0 / 128.0, t));
        let read = o.weights_read_s(t) / o.weights_s;
        assert!((read - by_hand).abs() < 1e-12, "T={t}: {read} vs {by_hand}");
    }
    // One token: 6.6% + 3.1% of the experts' 93.4%, about 9.5%.
    assert!((o.weights_read_s(1) / o.weights_s - 0.0948).abs() < 0.0005);
    // The reads depend on the step's tokens only: decode pieces stay exact.
    for n in [1, 4, 64] {
        check_pieces(&model, n, n, 5_000_000);
    }

    let active_only = h100_8b(|p| {
        p.model = ModelParams {
            moe: None,
            ..gpt_oss
        }
    });
    let a: f64 = 5.1 / 116.8;
    let o = ops(&active_only);
    for t in [1u64, 64] {
        let by_hand = a.max(1.0 - power(1.0 - a, t));
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

/// vLLM's captured sizes (`vllm/config/vllm.py`, `_set_cudagraph_sizes`):
/// V1 captures 1, 2, 4, multiples of 8 to 248 and of 16 from 256, up to
/// the most of 2 x `max_num_seqs`, 512 and the token budget; V0 captures
/// up to the size `max_num_seqs` pads to, at most 256. TensorRT-LLM's
/// listed sizes stop at the largest pure-decode batch, captured instead.
#[test]
fn captured_sizes_follow_the_engines_rules() {
    let engine = |seqs: u32, budget: u32| EngineParams {
        max_num_seqs: seqs,
        max_num_batched_tokens: budget,
        ..EngineParams::default()
    };
    let largest = |graphs: CudaGraphs, seqs, budget| {
        let sizes = GraphSizes::of(&graphs, &engine(seqs, budget)).sizes;
        sizes.last().copied().unwrap_or(0)
    };
    assert_eq!(largest(CudaGraphs::Piecewise, 256, 8192), 512);
    assert_eq!(largest(CudaGraphs::Piecewise, 1024, 8192), 512);
    assert_eq!(largest(CudaGraphs::Piecewise, 100, 8192), 200);
    assert_eq!(largest(CudaGraphs::Piecewise, 130, 8192), 256);
    assert_eq!(largest(CudaGraphs::Piecewise, 150, 8192), 288);
    assert_eq!(largest(CudaGraphs::Piecewise, 256, 100), 96);
    assert_eq!(largest(CudaGraphs::Piecewise, 3, 8192), 4);
    assert_eq!(largest(CudaGraphs::Piecewise, 1, 8192), 2);
    assert_eq!(largest(CudaGraphs::DecodeOnly, 1024, 8192), 256);
    assert_eq!(largest(CudaGraphs::DecodeOnly, 100, 8192), 104);
    assert_eq!(largest(CudaGraphs::Off, 256, 8192), 0);
    let trt = || {
        CudaGraphs::DecodeBatchSizes(vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048])
    };
    assert_eq!(largest(trt(), 700, 8192), 700);
    assert_eq!(largest(trt(), 8192, 600), 600);
    assert_eq!(largest(trt(), 8192, 8192), 2048);

    let v1 = GraphSizes::of(&CudaGraphs::Piecewise, &engine(256, 8192));
    let pads: Vec<u64> = [0, 1, 2, 3, 5, 9, 248, 249, 256, 257, 500, 512, 513, 4000]
        .iter()
        .map(|&t| v1.padded(t, false))
        .collect();
    assert_eq!(
        pads,
        [0, 1, 2, 4, 8, 16, 248, 256, 256, 272, 512, 512, 513, 4000]
    );
    let v0 = GraphSizes::of(&CudaGraphs::DecodeOnly, &engine(1024, 8192));
    assert_eq!(v0.padded(250, true), 256);
    assert_eq!(
        v0.padded(250, false),
        250,
        "a step with a prefill runs eagerly"
    );
    assert_eq!(v0.padded(257, true), 257, "beyond 256 V0 runs eagerly");
    let trt = GraphSizes::of(&trt(), &engine(700, 8192));
    let pads: Vec<u64> = [3, 100, 385, 513, 700]
        .iter()
        .map(|&t| trt.padded(t, true))
        .collect();
    assert_eq!(pads, [4, 128, 512, 700, 700]);
    assert_eq!(
        trt.padded(100, false),
        100,
        "a step with a prefill runs eagerly"
    );
    // Beyond the lookup table the sizes are searched.
    let huge = CudaGraphs::DecodeBatchSizes(vec![8, 100_000, 1_000_000]);
    let huge = GraphSizes::of(&huge, &engine(4_000_000, 4_000_000));
    assert_eq!(huge.padded.len(), 16_385);
    let pads: Vec<u64> = [5, 9, 16_384, 16_385, 100_001, 2_000_000]
        .iter()
        .map(|&t| huge.padded(t, true))
        .collect();
    assert_eq!(pads, [8, 100_000, 100_000, 100_000, 1_000_000, 2_000_000]);
}

/// A padded step computes its linear layers and all-reduces on the padded
/// tokens and everything else on the real ones. Llama-3.1-8B on two H100s
/// (tensor parallel, so the all-reduces count), Hopper defaults: 250
/// decodes of 2,001 tokens each run as 256 (compute-bound there: 256 x
/// 2 x 6.98e9 FLOP at 55% of 2 x 989.4 TFLOP/s is 3.3 ms against 3.0 ms
/// of weights); 600 decodes (beyond 512) and the same 250 with the graphs
/// off run as they are.
#[test]
fn a_captured_step_computes_its_padding_and_nothing_else() {
    let tp2 = |graphs: CudaGraphs| {
        h100_8b(move |p| {
            p.replica.gpus_per_replica = 2;
            p.step_time = StepTimeParams::Operations(OperationsParams {
                cuda_graphs: graphs,
                ..OperationsParams::default()
            });
        })
    };
    let (padded, off) = (tp2(CudaGraphs::Piecewise), tp2(CudaGraphs::Off));
    let o = ops(&off);
    let e = o.efficiencies;
    let (flops, bw) = (2.0 * 989.4e12, 2.0 * 3350e9);
    let emb = 128_256.0 * 4096.0;
    let linear_s = 2.0 * (8.03e9 - 2.0 * emb) / (flops * e.gemm);
    let weights_s = 8.03e9 * 2.0 / (bw * e.weights);
    let by_hand = |n: f64, computed: f64| {
        let kv = n * 2001.0;
        e.overhead_s
            + (computed * linear_s).max(weights_s)
            + n * 2.0 * emb / (flops * e.gemm)
            + n * 131_072.0 / (bw * e.weights)
            + o.allreduce_s
            + computed * o.allreduce_s_per_token
            + (kv * o.attention_s_per_pair).max(kv * 131_072.0 / (bw * e.kv))
            + n * e.per_sequence_s
    };
    for (n, computed_padded) in [(250u64, 256.0), (600, 600.0), (1, 1.0)] {
        let shape = decode_shape(n, n * 2001);
        let (t, t_off) = (padded.step_s(&shape), off.step_s(&shape));
        let (want, want_off) = (
            by_hand(n as f64, computed_padded),
            by_hand(n as f64, n as f64),
        );
        assert!((t - want).abs() < 1e-12, "n={n}: {t} vs {want}");
        assert!(
            (t_off - want_off).abs() < 1e-12,
            "n={n}: {t_off} vs {want_off}"
        );
    }
    assert!(
        padded.step_s(&decode_shape(250, 250 * 2001)) > off.step_s(&decode_shape(250, 250 * 2001)),
        "250 sequences are compute-bound here, so the padding costs time"
    );
    // A mixed step of 200 prompt tokens and 100 decodes (300 tokens) pads
    // to 304 under V1's piecewise graphs; V0's run it eagerly.
    let mut mixed = decode_shape(100, 100 * 2001);
    mixed.add_prefill(0, 200);
    let v0 = tp2(CudaGraphs::DecodeOnly);
    let extra = padded.step_s(&mixed) - v0.step_s(&mixed);
    let by_hand = (304.0 * linear_s).max(weights_s) - (300.0 * linear_s).max(weights_s)
        + 4.0 * o.allreduce_s_per_token;
    assert!((extra - by_hand).abs() < 1e-12, "{extra} vs {by_hand}");
    assert_eq!(v0.step_s(&mixed), off.step_s(&mixed));
    // Decode pieces stay exact across every padded size.
    for model in [&padded, &v0] {
        for n in [3, 9, 250, 257, 300, 600] {
            check_pieces(model, n, n, 50_000_000);
        }
    }
}

//! The default calibration against published measurements: the tables in
//! `docs/calibration.md` are what the engine computes (so they cannot drift
//! from the code), and the per-operation model meets the fidelity target on
//! dense models.

use std::sync::OnceLock;

use sojourn_engine::calibration::{Comparison, Skipped, compare, points, render, summary};
use sojourn_engine::{
    LengthsParams, LoadParams, MemoryBudget, OperationsParams, RunOptions, Scenario, Schedule,
    StepTimeParams, simulate,
};

use crate::support::blessing;

/// The models the page compares: the single roofline (the old default) and
/// the per-operation model with its family defaults.
fn models() -> [(&'static str, StepTimeParams); 2] {
    [
        ("roofline", StepTimeParams::default()),
        (
            "operations",
            StepTimeParams::Operations(OperationsParams::default()),
        ),
    ]
}

fn docs_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/calibration.md")
}

/// The text between `<!-- calibration:NAME -->` and `<!-- /calibration:NAME -->`.
fn block<'a>(doc: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<!-- calibration:{name} -->\n");
    let start = doc.find(&open)? + open.len();
    let end = start + doc[start..].find(&format!("<!-- /calibration:{name} -->"))?;
    Some(&doc[start..end])
}

type Compared = (&'static str, Vec<Comparison>, Vec<Skipped>);

/// Each model's comparisons, made once for the tests below.
fn compared() -> &'static Vec<Compared> {
    static COMPARED: OnceLock<Vec<Compared>> = OnceLock::new();
    COMPARED.get_or_init(|| {
        models()
            .into_iter()
            .map(|(name, m)| {
                let (compared, skipped) = compare(&m);
                (name, compared, skipped)
            })
            .collect()
    })
}

fn reports() -> Vec<(&'static str, String)> {
    compared()
        .iter()
        .map(|(name, c, s)| (*name, render(c, s)))
        .collect()
}

#[test]
#[ignore = "slow: calibration replay of every published point; scripts/test runs it"]
fn the_docs_tables_are_what_the_engine_computes() {
    if blessing() {
        write_calibration_tables();
        return;
    }
    let doc = std::fs::read_to_string(docs_path()).expect("docs/calibration.md");
    for (name, computed) in &reports() {
        let written = block(&doc, name).unwrap_or_else(|| panic!("no {name} block"));
        assert!(
            written == computed,
            "docs/calibration.md's {name} table is stale: after a change to the engine or \
             the points, rewrite it with `SOJOURN_BLESS=1 cargo test -p sojourn-engine \
             --test engine the_docs_tables -- --include-ignored`"
        );
    }
}

/// Rewrites the tables in `docs/calibration.md`.
fn write_calibration_tables() {
    let path = docs_path();
    let mut doc = std::fs::read_to_string(&path).expect("docs/calibration.md");
    for (name, computed) in &reports() {
        let old = block(&doc, name)
            .unwrap_or_else(|| panic!("no {name} block"))
            .to_string();
        let open = format!("<!-- calibration:{name} -->\n");
        doc = doc.replacen(&format!("{open}{old}"), &format!("{open}{computed}"), 1);
    }
    std::fs::write(&path, doc).expect("written");
}

/// TensorRT-LLM's in-flight replays admit as its default policy,
/// `GUARANTEED_NO_EVICT`: at most as many sequences run as the KV cache
/// holds whole (prompt and output), so the 20,000/2,000 point preempts
/// nothing; a vLLM replay keeps vLLM's cap and admission.
#[test]
fn tensorrt_llm_replays_reserve_whole_sequences_and_never_preempt() {
    let ops = StepTimeParams::Operations(OperationsParams::default());
    let scenario_of = |id: &str| {
        let point = points().into_iter().find(|p| p.id == id).expect("point");
        point.scenario(&ops).expect("replayable")
    };
    let long = scenario_of("trtllm019-llama31-8b-h100-fp8-tp1-20000-2000");
    let memory = MemoryBudget::compute(&long);
    let whole = memory.total_blocks as u64 / 22_000_u64.div_ceil(memory.block_size as u64);
    assert!(whole > 1 && whole < 1000, "{whole} sequences fit");
    assert_eq!(long.engine.max_num_seqs as u64, whole);
    let report = simulate(
        &Scenario::try_from(long).expect("valid"),
        &RunOptions::default(),
    )
    .expect("runs");
    assert_eq!(report.overall.preemptions, 0);
    let vllm = scenario_of("nim180-llama33-70b-h100-fp8-tp2-5000-500-c50");
    assert_eq!(vllm.engine.max_num_seqs, 1024);
}

/// The target figures beyond 35%, and why (`docs/calibration.md`): the
/// TensorRT-LLM 0.6.1 Llama-2-70B row on four A100s, whose batch of 240 its
/// own page contradicts (the engine it builds takes at most 64); five
/// figures of vLLM 0.11 serving Qwen3-14B in BF16 on one H100, offline:
/// ShareGPT's throughput and mean ITL (replayed at the dataset's lengths,
/// +36% and -35%; at its mean lengths they were +90% and +24%), and the
/// 2,000-, 4,000- and, replayed with prefix caching, 32,000-token prompts
/// too fast, all three within 8% at a 16-bit GEMM efficiency of 0.35 that
/// one lab's H100 alone does not make a default (independent BF16 Hopper
/// runs side with the default; the same lab's ShareGPT run on an A100, +60%
/// at the mean lengths, is +18% at the dataset's); vLLM of August 2024 (V0,
/// before 0.6.0) running Llama 3 8B in BF16 on one H100 at 256/256, too
/// fast as if each step's overhead were 15-20 ms instead of the model's
/// 3 ms (host work vLLM 0.6.0 cut), or its GEMMs ran at 0.3; and vLLM 0.8.2
/// serving QwQ-32B in BF16 on two 80 GB H100s with prefix caching off,
/// the 32,000- and 5,000-token prompts' throughput (+35.5%, +36%): 50
/// requests of one length at once against a KV cache of about ten, where
/// the replay swings by half with 1% more or less cache (recomputation
/// after preemption; docs/calibration.md, "The KV cache's knife edge").
const BEYOND_35: [&str; 8] = [
    "trtllm061-llama2-70b-a100-fp16-tp4-bs240-128-2048",
    "gpustack-qwen3-14b-h100-bf16-sharegpt-offline",
    "gpustack-qwen3-14b-h100-bf16-2000-100-offline",
    "gpustack-qwen3-14b-h100-bf16-4000-200-offline",
    "gpustack-qwen3-14b-h100-bf16-32000-100-offline",
    "vllm-pr7117-llama3-8b-h100-bf16-256-256-offline",
    "r1bench-qwq32b-h100-bf16-tp2-32000-100",
    "r1bench-qwq32b-h100-bf16-tp2-5000-1000",
];

/// Issue 14's target, on the figures it names (throughput and mean
/// inter-token latency of dense models): median absolute error at most 15%,
/// and no figure beyond 35% but the named ones (a new miss, or one of those
/// coming within, fails here and asks for the docs to follow).
#[test]
#[ignore = "slow: calibration replay; scripts/test runs it"]
fn dense_models_meet_the_target_and_beat_the_roofline() {
    let target = |name: &str| -> Vec<Comparison> {
        let (_, c, _) = compared()
            .iter()
            .find(|(n, ..)| *n == name)
            .expect("compared");
        c.iter().filter(|c| c.in_target()).cloned().collect()
    };
    let operations = target("operations");
    let (ops_median, _) = summary(&operations);
    let (roof_median, _) = summary(&target("roofline"));
    assert!(ops_median <= 0.15, "median error {ops_median}");
    assert!(
        ops_median < roof_median / 2.0,
        "{ops_median} vs roofline {roof_median}"
    );
    let beyond: Vec<&str> = operations
        .iter()
        .filter(|c| c.error().abs() > 0.35)
        .map(|c| c.point.as_str())
        .collect();
    assert_eq!(beyond, BEYOND_35, "target figures beyond 35%");
}

/// A point that gives a batch's end-to-end latency (vLLM's
/// `benchmark_latency`) is compared on the batch's output tokens over that
/// latency, and the engine settings its source's command states reach the
/// replay (others keep the engine's defaults; vLLM V0 with chunked prefill
/// off runs prefills first; prefix caching is vLLM V1's default unless the
/// source turns it off, and a V1 run before 0.8 states it).
#[test]
#[ignore = "slow: calibration replay; scripts/test runs it"]
fn batch_latencies_compare_as_throughput_and_stated_settings_apply() {
    let (_, operations, _) = compared()
        .iter()
        .find(|(n, ..)| *n == "operations")
        .expect("compared");
    let batch = operations
        .iter()
        .find(|c| c.point == "rocm-vllm010-llama31-70b-mi300x-fp8-tp8-bs64-128-2048")
        .expect("compared");
    assert_eq!(batch.figure, "output tokens/s");
    assert!((batch.measured - 64.0 * 2048.0 / 33.287).abs() < 1e-9);
    let ops = StepTimeParams::Operations(OperationsParams::default());
    let scenario_of = |id: &str| {
        let point = points().into_iter().find(|p| p.id == id).expect("point");
        point.scenario(&ops).expect("replayable")
    };
    let stated = scenario_of("rocm-vllm010-llama31-70b-mi300x-fp8-tp8-n3200-128-2048");
    assert_eq!(stated.engine.max_num_seqs, 3200);
    assert_eq!(stated.engine.max_num_batched_tokens, 131_072);
    assert_eq!(stated.engine.schedule, Schedule::DecodeFirst);
    let v0 = scenario_of("azure-ndmi300x-llama31-8b-fp8-tp1-128-2048");
    assert_eq!(v0.engine.schedule, Schedule::PrefillFirst);
    let defaults = scenario_of("gpustack-qwen3-8b-h100-bf16-sharegpt-c4");
    assert_eq!(defaults.engine.max_num_seqs, 1024);
    assert_eq!(defaults.engine.max_num_batched_tokens, 8192);
    assert!(defaults.engine.prefix_caching, "vLLM 0.11: V1's default");
    let stated_off = scenario_of("r1bench-qwq32b-h200-bf16-tp2-10000-500");
    assert!(
        !stated_off.engine.prefix_caching,
        "--no-enable-prefix-caching"
    );
    let early_v1 = scenario_of("vllm-pr12093-llama31-8b-hopper-bf16-2048-128-offline");
    assert!(early_v1.engine.prefix_caching, "V1 before 0.8, its default");
    assert_eq!(early_v1.engine.max_num_batched_tokens, 16_384);
}

/// Mean and standard deviation of `xs`.
fn mean_and_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// A ShareGPT point replays ShareGPT's pairs (`engine/data/sharegpt_lengths.csv`)
/// scaled to the point's printed means, with the dataset's spread (each
/// length's standard deviation about its mean, 1.10 and 1.05 in the table),
/// where the mean lengths alone have none.
///
/// An offline point's 1,000 requests are the table's first pairs scaled to
/// exactly those means: what it ran has them within half a token (each
/// length is rounded). A closed-loop point's clients draw their 100
/// requests independently and uniformly from the table, so a drawn mean has
/// standard error sd/√n: with the table's standard deviations (about 242
/// and 213 tokens), 24 and 21 tokens at n = 100 (11% and 10% of the means).
/// The test allows four standard errors (a draw beyond that has odds of
/// about 1 in 16,000); the spread's bounds (0.7 to 1.5 times the mean) hold
/// the table's with room for a sample of 100.
#[test]
#[ignore = "slow: calibration replay; scripts/test runs it"]
fn sharegpt_replays_run_the_datasets_lengths_at_the_points_means() {
    let ops = StepTimeParams::Operations(OperationsParams::default());
    let options = RunOptions {
        keep_records: true,
        ..RunOptions::default()
    };
    let sharegpt: Vec<_> = points()
        .into_iter()
        .filter(|p| p.dataset.as_deref() == Some("sharegpt"))
        .collect();
    assert_eq!(sharegpt.len(), 10);
    for point in sharegpt {
        let params = point.scenario(&ops).expect("replayable");
        let offline = point.mode == "offline";
        let tolerance: [f64; 2] = match (&params.classes[0].load, &params.classes[0].lengths) {
            (LoadParams::Trace { .. }, None) if offline => [0.5, 0.5],
            (_, Some(LengthsParams::Pairs { pairs, .. })) if !offline => {
                let n = point.requests.expect("a count");
                [0, 1].map(|k| {
                    let column: Vec<f64> = pairs.iter().map(|p| p[k]).collect();
                    4.0 * mean_and_sd(&column).1 / n.sqrt()
                })
            }
            (load, _) => panic!("{}: replayed as {load:?}", point.id),
        };
        let scenario = Scenario::try_from(params).expect("valid");
        let report = simulate(&scenario, &options).expect("runs");
        assert_eq!(
            Some(report.records.len() as f64),
            point.requests,
            "{}",
            point.id
        );
        let ran = [
            report
                .records
                .iter()
                .map(|r| r.input_tokens as f64)
                .collect::<Vec<_>>(),
            report
                .records
                .iter()
                .map(|r| r.output_tokens as f64)
                .collect::<Vec<_>>(),
        ];
        let published = [point.input_tokens, point.output_tokens].map(|m| m.expect("mean"));
        for k in 0..2 {
            let (mean, sd) = mean_and_sd(&ran[k]);
            assert!(
                (mean - published[k]).abs() <= tolerance[k],
                "{} length {k}: mean {mean} against {} (within {})",
                point.id,
                published[k],
                tolerance[k]
            );
            assert!(
                (0.7..1.5).contains(&(sd / mean)),
                "{} length {k}: standard deviation {sd} about a mean of {mean}",
                point.id
            );
        }
    }
}

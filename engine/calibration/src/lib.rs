//! The default calibration, checked in the open: published measurements of
//! LLM serving (`engine/data/calibration_points.json`, sources in
//! `docs/calibration-sources.md`), each replayed in the engine with a
//! step-time model, and the error of every figure.
//!
//! A point becomes a scenario ([`Point::scenario`]): its model and
//! accelerator from the catalog, its precision and tensor-parallel degree,
//! one replica per tensor-parallel group, and its load: all requests at time
//! 0 (offline), or closed-loop clients (concurrency). Prompt and output
//! lengths are fixed at the published value or mean, or, for a point run on
//! a dataset whose lengths are known (`dataset`: ShareGPT), taken from that
//! dataset's pairs scaled to the published means (`datasets.rs`): an
//! offline run's requests are its first pairs, with exactly those means,
//! and clients draw from them. The engine
//! runs vLLM's schedule with the settings the source's engine used (its
//! defaults, or what the source's command sets), and a prefill is not
//! chunked below the step's token budget (the published batch-1 prefill
//! times are one kernel pass). [`replay`] runs it and reads the same
//! figures the source printed (a batch's end-to-end latency is read as its
//! output throughput).
//!
//! `docs/calibration.md` holds the table [`table`] prints for the default
//! model; a test recomputes it, so the page cannot drift from the code.

// A layer's module docs name their private neighbours: the engine's
// developers read them (the product's API docs are `sojourn-engine`'s).
#![allow(rustdoc::private_intra_doc_links)]

// The layers below, under the paths their modules have always used (Cargo
// lets this crate name nothing above it).
use sojourn_model::{error, format, model, params, stats};
use sojourn_present as present;
use sojourn_sim::{report, sim};

use serde::Deserialize;

use crate::model::memory::{FLAT_RESERVE_GIB, MemoryBudget};
use crate::params::{
    ClassParams, CudaGraphs, DistParams, Dtype, LoadParams, ScenarioParams, Schedule,
    StepTimeParams, presets,
};

mod csv;
mod datasets;
mod fit;
mod fit_budget;
mod fit_knobs;
mod fit_tables;
mod least_squares;
mod measurements;
mod models;
mod replay;
mod vllm_bench;

pub use crate::params::step_time::{FitRecord, FittedPoint};
pub use fit::{
    BENCHMARK_EVALUATIONS, FitResult, FittedParameter, check_benchmark_budget, fit, fit_benchmarks,
    fit_step_times, fit_with_progress,
};
pub use fit_budget::{MAX_FIT_REQUESTS, MAX_FIT_WORK, MAX_STEP_FIT_WORK, REPLAY_OVERHEAD_REQUESTS};
pub use fit_tables::{parameters_table, points_table};
pub use measurements::{
    BenchmarkMode, BenchmarkPoint, Figure, MAX_MEASUREMENTS, MeasuredStep, MeasurementError,
    Measurements, Place, parse_measurements,
};
pub use replay::{Replay, replay};
pub(crate) use replay::{ReplayError, replay_within};

/// The published points, as `engine/data/calibration_points.json` holds them.
const POINTS_JSON: &str = include_str!("../../data/calibration_points.json");

/// One published measurement (the fields a replay needs; the file has more).
#[derive(Clone, Debug, Deserialize)]
pub struct Point {
    pub id: String,
    pub model: String,
    pub weight_dtype: String,
    #[serde(default)]
    pub kv_dtype: Option<String>,
    pub hardware: String,
    pub engine: EngineName,
    pub gpus: Gpus,
    pub mode: String,
    #[serde(default)]
    pub requests: Option<f64>,
    #[serde(default)]
    pub clients: Option<u32>,
    #[serde(default)]
    pub input_tokens: Option<f64>,
    #[serde(default)]
    pub output_tokens: Option<f64>,
    /// The dataset whose prompts the benchmark drew, where the replay knows
    /// its lengths ("sharegpt"): `input_tokens` and `output_tokens` are then
    /// the means the dataset's pairs are scaled to.
    #[serde(default)]
    pub dataset: Option<String>,
    pub measured: Measured,
}

/// The serving engine the point ran, and the settings the source states
/// where it sets them (each left out takes the engine's default, see
/// `Point::configure`).
#[derive(Clone, Debug, Deserialize)]
pub struct EngineName {
    pub name: String,
    /// As the source states it (e.g. "0.11.0", "0.10.0 (rocm/vllm-dev
    /// image ...)", "not stated").
    #[serde(default)]
    pub version: String,
    /// `--max-num-seqs`, where the source's command sets it.
    #[serde(default)]
    pub max_num_seqs: Option<u32>,
    /// `--max-num-batched-tokens`, where the source's command sets it.
    #[serde(default)]
    pub max_num_batched_tokens: Option<u32>,
    /// `--enable-chunked-prefill false` on vLLM's V0 engine: whole prompts
    /// run as their own steps, the decodes waiting (`Schedule::PrefillFirst`).
    #[serde(default)]
    pub chunked_prefill: Option<bool>,
    /// Prefix caching as the source ran it, where it says: off by
    /// `--no-enable-prefix-caching`, or on for vLLM's V1 engine before 0.8
    /// (its default there too). Left out, vLLM V1 of 0.8 or later has it
    /// (`is_vllm_v1`) and everything else not.
    #[serde(default)]
    pub prefix_caching: Option<bool>,
}

impl EngineName {
    /// The CUDA graphs the engine pads its steps to: vLLM V1's piecewise
    /// graphs (a V1 engine named as such, or [`Self::is_vllm_v1`]), else
    /// vLLM V0's decode-only ones; TensorRT-LLM's PyTorch backend pads
    /// decode-only steps to the batch sizes of the perf overview's
    /// `llm_options.yml` (`cuda_graph_config`, `enable_padding: true`);
    /// its static-batch and MLPerf engines (TensorRT engines built for
    /// their batch) and NIM (its TensorRT-LLM engines; the source does not
    /// say) run each step at its own size.
    fn cuda_graphs(&self) -> CudaGraphs {
        let name = self.name.as_str();
        if name.starts_with("TensorRT-LLM") && name.contains("PyTorch backend") {
            let sizes = [
                1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 4096, 8192,
            ];
            CudaGraphs::DecodeBatchSizes(sizes.to_vec())
        } else if name.starts_with("TensorRT-LLM") || name.starts_with("NVIDIA NIM") {
            CudaGraphs::Off
        } else if name.contains("V1 engine") || self.is_vllm_v1() {
            CudaGraphs::Piecewise
        } else {
            CudaGraphs::DecodeOnly
        }
    }

    /// Whether the point ran vLLM's V1 engine (the default from 0.8 on,
    /// with prefix caching on by default, so a preempted request keeps its
    /// cached blocks): a vLLM of a stated version 0.8 or later, not run on
    /// its V0 engine. vLLM V0 (prefix caching off by default), an unstated
    /// version and other engines replay without it (TensorRT-LLM's
    /// replays never preempt).
    fn is_vllm_v1(&self) -> bool {
        let version: Vec<u32> = (self.version.split(|c: char| !c.is_ascii_digit()))
            .take(2)
            .map_while(|part| part.parse().ok())
            .collect();
        self.name.starts_with("vLLM")
            && !self.name.contains("V0 engine")
            && self.chunked_prefill != Some(false)
            && matches!(version[..], [major, minor] if (major, minor) >= (0, 8))
    }
}

/// How the GPUs were used.
#[derive(Clone, Debug, Deserialize)]
pub struct Gpus {
    pub count: u32,
    pub tp: u32,
    #[serde(default)]
    pub replicas: Option<u32>,
}

/// The published figures (each optional).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Measured {
    pub output_tokens_per_s: Option<f64>,
    pub output_tokens_per_s_per_gpu: Option<f64>,
    pub total_tokens_per_s: Option<f64>,
    pub requests_per_s: Option<f64>,
    pub mean_itl_ms: Option<f64>,
    pub mean_tpot_ms: Option<f64>,
    pub mean_ttft_ms: Option<f64>,
    /// End-to-end time of a batch sent at once (vLLM's `benchmark_latency`
    /// prints it) \[s\]: every request ends with the batch, so the batch's
    /// output tokens over it are its output throughput.
    pub latency_s: Option<f64>,
}

/// Every published point, in the file's order.
pub fn points() -> Vec<Point> {
    // The file is part of the build and checked by the tests.
    serde_json::from_str(POINTS_JSON).unwrap_or_default()
}

/// One figure of one point: what was published, what the engine gives.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub point: String,
    /// Whether the point's model is a mixture of experts.
    pub moe: bool,
    /// e.g. "output tokens/s".
    pub figure: &'static str,
    pub measured: f64,
    pub predicted: f64,
}

impl Comparison {
    /// Predicted over measured, minus one.
    pub fn error(&self) -> f64 {
        self.predicted / self.measured - 1.0
    }

    /// Whether the figure counts toward the fidelity target: throughput or
    /// mean inter-token latency of a dense model (issue 14's target; the
    /// mixture-of-experts points are shown, their expert kernels are not
    /// modelled apart yet).
    pub fn in_target(&self) -> bool {
        !self.moe
            && matches!(
                self.figure,
                "output tokens/s" | "output tokens/s per GPU" | "mean ITL [ms]"
            )
    }
}

/// Why a point is not replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    pub point: String,
    pub reason: String,
}

impl Point {
    /// The scenario that replays this point under `step_time`, or why none does.
    pub fn scenario(&self, step_time: &StepTimeParams) -> Result<ScenarioParams, String> {
        let mut model = models::model(&self.model)
            .ok_or_else(|| format!("model {} is not in the catalog", self.model))?;
        model.weight_dtype = dtype(&self.weight_dtype)?;
        model.kv_dtype = match &self.kv_dtype {
            Some(kv) => dtype(kv)?,
            None => Dtype::Bf16,
        };
        let hardware = presets::hardware(hardware_id(&self.hardware))
            .ok_or_else(|| format!("accelerator {} is not in the catalog", self.hardware))?;
        let mean_input = self.input_tokens.ok_or("no input length")?;
        let mean_output = self.output_tokens.ok_or("no output length")?;
        let (input, output) = (mean_input.round().max(1.0), mean_output.round().max(1.0));
        let requests = self.requests.map(|r| r.round() as u32);
        let load = match (self.mode.as_str(), requests, self.clients) {
            ("offline", Some(requests), _) => LoadParams::Offline { requests },
            ("concurrency", _, Some(clients)) => LoadParams::ClosedLoop {
                clients,
                think_ms: None,
                requests: Some(requests.unwrap_or(0).max(clients.saturating_mul(4))),
            },
            (mode, ..) => return Err(format!("load mode {mode} without its count")),
        };
        let mut p = ScenarioParams::overnight_batch();
        p.name = self.id.clone();
        p.model = model;
        p.hardware = hardware;
        p.replica.gpus_per_replica = self.gpus.tp.max(1);
        p.cluster.replicas = self.gpus.replicas.unwrap_or(1).max(1);
        p.step_time = step_time.clone();
        p.step_time_scale = 1.0;
        self.configure(&mut p, requests.unwrap_or(1), input + output);
        // On a dataset: an offline run's very requests, else pairs to draw.
        let (load, lengths) = match (&self.dataset, load) {
            (Some(name), LoadParams::Offline { requests }) => {
                let requests = datasets::offline_requests(name, requests, mean_input, mean_output)?;
                (LoadParams::Trace { requests }, None)
            }
            (Some(name), load) => (
                load,
                Some(datasets::lengths(name, mean_input, mean_output)?),
            ),
            (None, load) => (load, None),
        };
        p.classes = vec![ClassParams {
            name: "benchmark".into(),
            input_tokens: DistParams::constant(input),
            output_tokens: DistParams::constant(output),
            lengths,
            load,
            ..ClassParams::default()
        }];
        Ok(p)
    }

    /// The engine's settings as the source ran them (`docs/calibration.md`,
    /// "Replaying a point"): TensorRT-LLM's throughput benchmark batches up
    /// to 8,192 sequences with 95% of the free memory for KV and (an
    /// assumption: not stated) an FP8 KV cache with FP8 or FP4 weights; its
    /// static-batch tables run the whole batch at once (FP8 KV stated); vLLM
    /// and NIM take vLLM's defaults (1,024 sequences and 8,192 tokens per
    /// step on GPUs of 70 GiB or more other than the A100, else 256 and
    /// 2,048). Prefills are not chunked below the step's budget (TensorRT's
    /// batch-1 prefills are one pass).
    ///
    /// TensorRT-LLM's in-flight batching (not the static batches) runs its
    /// default capacity policy, `GUARANTEED_NO_EVICT`: a request starts only
    /// once the KV blocks of its whole sequence (`sequence_tokens`, prompt
    /// and output) are free, so nothing is ever preempted. With every
    /// request of one length that is a cap on the running batch
    /// ([`no_evict_batch`]); vLLM instead admits on the prompt and preempts.
    /// A sequence cap or token budget the source's command sets replaces the
    /// default, vLLM V0 with chunked prefill off runs prefills first, and
    /// prefix caching is as the source states it, else vLLM V1's default.
    fn configure(&self, p: &mut ScenarioParams, requests: u32, sequence_tokens: f64) {
        let name = self.engine.name.as_str();
        let trt = name.starts_with("TensorRT-LLM");
        let large = p.hardware.memory_gib >= 70.0 && !self.hardware.starts_with("a100");
        let static_batch = name.contains("static");
        let (seqs, budget) = match (trt, static_batch, large) {
            (true, true, _) => (requests.max(1), 8192),
            (true, false, _) => (8192, 8192),
            (false, _, true) => (1024, 8192),
            (false, _, false) => (256, 2048),
        };
        let stated = &self.engine;
        let budget = stated.max_num_batched_tokens.unwrap_or(budget);
        p.engine.max_num_seqs = stated.max_num_seqs.unwrap_or(seqs);
        p.engine.max_num_batched_tokens = budget;
        p.engine.long_prefill_threshold = budget;
        if stated.chunked_prefill == Some(false) {
            p.engine.schedule = Schedule::PrefillFirst;
        }
        p.engine.prefix_caching = stated.prefix_caching.unwrap_or(stated.is_vllm_v1());
        if let StepTimeParams::Operations(ops) = &mut p.step_time {
            ops.cuda_graphs = stated.cuda_graphs();
        }
        if trt {
            // TensorRT-LLM sizes its KV cache from the memory free after its
            // engine is built, not by vLLM's profiling pass (whose sampler
            // rows would be its 8,192 sequences): the flat reserve stays.
            p.replica.runtime_reserve_gib = Some(FLAT_RESERVE_GIB);
            p.replica.gpu_memory_utilization = 0.95;
            if self.kv_dtype.is_none() && matches!(p.model.weight_dtype, Dtype::Fp8 | Dtype::Fp4) {
                p.model.kv_dtype = Dtype::Fp8;
            }
            if !static_batch {
                p.engine.max_num_seqs = seqs.min(no_evict_batch(p, sequence_tokens));
            }
        }
    }

    /// The published output throughput: as printed, or the batch's output
    /// tokens over its printed end-to-end latency.
    fn output_tokens_per_s(&self) -> Option<f64> {
        let m = &self.measured;
        let batch = || Some(self.requests? * self.output_tokens? / m.latency_s?);
        m.output_tokens_per_s.or_else(batch)
    }

    /// The published figures beside the engine's for them.
    fn compare(&self, run: &Replay, moe: bool) -> Vec<Comparison> {
        let m = &self.measured;
        let per_gpu = run.output_tokens_per_s / self.gpus.count.max(1) as f64;
        [
            (
                "output tokens/s",
                self.output_tokens_per_s(),
                run.output_tokens_per_s,
            ),
            (
                "output tokens/s per GPU",
                m.output_tokens_per_s_per_gpu,
                per_gpu,
            ),
            (
                "total tokens/s",
                m.total_tokens_per_s,
                run.total_tokens_per_s,
            ),
            ("requests/s", m.requests_per_s, run.requests_per_s),
            ("mean ITL [ms]", m.mean_itl_ms, run.mean_itl_ms),
            ("mean TPOT [ms]", m.mean_tpot_ms, run.mean_tpot_ms),
            ("mean TTFT [ms]", m.mean_ttft_ms, run.mean_ttft_ms),
        ]
        .into_iter()
        .filter_map(|(figure, measured, predicted)| {
            let measured = measured.filter(|v| *v > 0.0)?;
            Some(Comparison {
                point: self.id.clone(),
                moe,
                figure,
                measured,
                predicted,
            })
        })
        .collect()
    }
}

/// The most sequences of `sequence_tokens` tokens each whose KV blocks
/// `p`'s cache holds at once (at least one): the running batch of an
/// engine that reserves a request's whole sequence before starting it.
fn no_evict_batch(p: &ScenarioParams, sequence_tokens: f64) -> u32 {
    let memory = MemoryBudget::compute(p);
    let blocks_per_sequence = libm::ceil(sequence_tokens / memory.block_size as f64).max(1.0);
    ((memory.total_blocks as f64 / blocks_per_sequence) as u32).max(1)
}

/// Every point replayed under `step_time`: the comparisons, and the points
/// skipped with their reason.
pub fn compare(step_time: &StepTimeParams) -> (Vec<Comparison>, Vec<Skipped>) {
    let mut compared = Vec::new();
    let mut skipped = Vec::new();
    for point in points() {
        let moe = models::model(&point.model).is_some_and(|m| m.moe.is_some());
        match point.scenario(step_time).and_then(replay) {
            Ok(run) => compared.extend(point.compare(&run, moe)),
            Err(reason) => skipped.push(Skipped {
                point: point.id.clone(),
                reason,
            }),
        }
    }
    (compared, skipped)
}

/// The median and the largest absolute error of `comparisons`.
pub fn summary(comparisons: &[Comparison]) -> (f64, f64) {
    let mut errors: Vec<f64> = comparisons.iter().map(|c| c.error().abs()).collect();
    errors.sort_by(f64::total_cmp);
    let median = crate::stats::quantile_sorted(&errors, 0.5);
    (median, errors.last().copied().unwrap_or(f64::NAN))
}

/// What `docs/calibration.md` shows for `step_time`: the table, the
/// target's median and largest error, and the points not replayed.
pub fn report(step_time: &StepTimeParams) -> String {
    let (compared, skipped) = compare(step_time);
    render(&compared, &skipped)
}

/// [`report()`] of comparisons already made.
pub fn render(compared: &[Comparison], skipped: &[Skipped]) -> String {
    let target: Vec<Comparison> = compared.iter().filter(|c| c.in_target()).cloned().collect();
    let (median, max) = summary(&target);
    let (all_median, all_max) = summary(compared);
    let mut out = table(compared);
    out += &format!(
        "\nTarget figures (throughput and mean ITL of dense models, {} figures): median absolute error {:.0}%, largest {:.0}%. All {} figures: median {:.0}%, largest {:.0}%.\n",
        target.len(),
        100.0 * median,
        100.0 * max,
        compared.len(),
        100.0 * all_median,
        100.0 * all_max
    );
    for s in skipped {
        out += &format!("\nNot replayed: {} ({}).\n", s.point, s.reason);
    }
    out
}

/// The comparisons as a Markdown table, for `docs/calibration.md`.
pub fn table(comparisons: &[Comparison]) -> String {
    let mut out = String::from(
        "| point | figure | published | Sojourn | error |\n|---|---|---:|---:|---:|\n",
    );
    for c in comparisons {
        out += &format!(
            "| {} | {} | {} | {} | {:+.0}% |\n",
            c.point,
            c.figure,
            significant(c.measured),
            significant(c.predicted),
            100.0 * c.error()
        );
    }
    out
}

/// `x` to four significant figures.
fn significant(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    let digits = (3 - libm::floor(libm::log10(x.abs().max(1e-9))) as i32).max(0) as usize;
    format!("{x:.digits$}")
}

fn dtype(name: &str) -> Result<Dtype, String> {
    Ok(match name {
        "bf16" => Dtype::Bf16,
        "fp16" => Dtype::Fp16,
        "fp8" => Dtype::Fp8,
        "fp4" => Dtype::Fp4,
        "int8" => Dtype::Int8,
        "int4" => Dtype::Int4,
        other => return Err(format!("precision {other} unknown")),
    })
}

/// The catalog's id for a point's accelerator.
fn hardware_id(name: &str) -> &str {
    match name {
        "h200" => "h200-sxm",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(name: &str, version: &str, chunked_prefill: Option<bool>) -> EngineName {
        EngineName {
            name: name.into(),
            version: version.into(),
            max_num_seqs: None,
            max_num_batched_tokens: None,
            chunked_prefill,
            prefix_caching: None,
        }
    }

    #[test]
    fn only_vllm_v1_replays_with_prefix_caching() {
        assert!(engine("vLLM", "0.11.0", None).is_vllm_v1());
        assert!(engine("vLLM (ROCm)", "0.10.0 (rocm/vllm-dev image)", None).is_vllm_v1());
        assert!(engine("vLLM", "0.8.0", None).is_vllm_v1());
        assert!(!engine("vLLM", "0.7.3", None).is_vllm_v1());
        assert!(!engine("vLLM (ROCm)", "0.4.3+rocm614", None).is_vllm_v1());
        assert!(!engine("vLLM", "not stated (main of late 2024)", None).is_vllm_v1());
        assert!(!engine("vLLM (V0 engine)", "0.10.0", None).is_vllm_v1());
        assert!(!engine("vLLM", "0.10.0", Some(false)).is_vllm_v1());
        assert!(!engine("TensorRT-LLM", "0.19", None).is_vllm_v1());
    }

    #[test]
    fn each_engine_pads_to_its_own_graphs() {
        let graphs = |name, version, chunked| engine(name, version, chunked).cuda_graphs();
        assert_eq!(graphs("vLLM", "0.11.0", None), CudaGraphs::Piecewise);
        let v1 = "vLLM (benchmark_throughput.py, V1 engine, LLM class)";
        assert_eq!(
            graphs(v1, "main of January 2025", None),
            CudaGraphs::Piecewise
        );
        assert_eq!(
            graphs("vLLM", "0.10.0", Some(false)),
            CudaGraphs::DecodeOnly
        );
        assert_eq!(
            graphs("vLLM (ROCm)", "0.4.3+rocm614", None),
            CudaGraphs::DecodeOnly
        );
        let v0 = "vLLM (ROCm, benchmark_throughput.py, V0 engine)";
        assert_eq!(graphs(v0, "0.10.0", None), CudaGraphs::DecodeOnly);
        let trt = "TensorRT-LLM (gptSessionBenchmark, static batching)";
        assert_eq!(graphs(trt, "0.6.1", None), CudaGraphs::Off);
        let pytorch = "TensorRT-LLM (trtllm-bench throughput, PyTorch backend)";
        let CudaGraphs::DecodeBatchSizes(sizes) = graphs(pytorch, "0.19", None) else {
            panic!("the PyTorch backend pads decode batches");
        };
        assert_eq!(sizes[9..], [384, 512, 1024, 2048, 4096, 8192]);
        let nim = "NVIDIA NIM (Llama-3.3-70b-Instruct container), measured with AIPerf";
        assert_eq!(graphs(nim, "1.8.0", None), CudaGraphs::Off);
    }
}

//! The step-time model as a scenario writes it; [`StepTimeModel`](crate::model::StepTimeModel)
//! (in `model`) is its validated form.

use serde::{Deserialize, Serialize};

/// The step-time model as written in a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum StepTimeParams {
    /// The seeds' model: alpha per prefill token, beta per decode step.
    AlphaBeta {
        /// \[s per prefill token\]
        alpha_s_per_token: f64,
        /// \[s per step that decodes\]
        beta_s_per_step: f64,
        /// \[s per step\]
        overhead_s: f64,
    },
    /// Compute or bandwidth bound, from the model and the hardware.
    Roofline {
        /// Model FLOPs utilisation, in (0, 1].
        mfu: f64,
        /// Memory bandwidth utilisation, in (0, 1].
        mbu: f64,
        /// Fixed cost per step (scheduling, kernel launches) \[s\].
        overhead_s: f64,
    },
    /// A sum of per-operation costs, each with its own roofline (linear
    /// layers, attention, KV writes, all-reduces, overhead); efficiencies left
    /// out take the accelerator family's defaults.
    Operations(OperationsParams),
    /// Measured step times: `step_s[i]\[j\]` at `batch_tokens\[i\]` tokens in the
    /// step and `kv_tokens\[j\]` KV tokens read.
    Table {
        batch_tokens: Vec<f64>,
        kv_tokens: Vec<f64>,
        step_s: Vec<Vec<f64>>,
    },
    /// Measured decode step times as profilers sweep them: `step_s[i]\[j\]`
    /// with `batch_sizes\[i\]` sequences in the step, each reading
    /// `context_tokens\[j\]` KV tokens (so the step reads batch x context).
    /// A step of T tokens reading K KV tokens reads as batch T, context K / T.
    BatchTable {
        batch_sizes: Vec<f64>,
        context_tokens: Vec<f64>,
        step_s: Vec<Vec<f64>>,
    },
}

impl Default for StepTimeParams {
    fn default() -> Self {
        StepTimeParams::Roofline {
            mfu: 0.45,
            mbu: 0.75,
            overhead_s: 0.002,
        }
    }
}

/// The per-operation model's efficiencies (`None`: the accelerator family's
/// default; see `docs/calibration.md`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OperationsParams {
    /// Fraction of the peak FLOP/s the linear layers reach, in (0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gemm_efficiency: Option<f64>,
    /// Fraction of the memory bandwidth reached streaming weights, in (0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight_bandwidth_efficiency: Option<f64>,
    /// Fraction of the BF16 peak attention reaches, in (0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attention_efficiency: Option<f64>,
    /// Fraction of the memory bandwidth attention reaches reading KV, in (0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_bandwidth_efficiency: Option<f64>,
    /// Attention kernel cost per decoding sequence per step \[s\].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_sequence_s: Option<f64>,
    /// Fixed cost per step (scheduling, sampling, launches) \[s\].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_s: Option<f64>,
    /// Fraction of the intra-node link's bandwidth an all-reduce reaches, in (0, 1].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interconnect_efficiency: Option<f64>,
    /// Fixed cost of one all-reduce \[s\].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allreduce_latency_s: Option<f64>,
    /// Which steps run as captured CUDA graphs, padded to the captured
    /// sizes (vLLM V1's piecewise graphs unless said otherwise; left out of
    /// the JSON then, so files written before it read as before).
    #[serde(skip_serializing_if = "CudaGraphs::is_piecewise")]
    pub cuda_graphs: CudaGraphs,
    /// What these values were fitted to, when a fit set them (`sojourn
    /// calibrate`, the page's "Fit to my measurements"): kept so whoever
    /// opens the scenario sees the evidence. The engine never reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitRecord>,
}

/// Which steps an engine runs as captured CUDA graphs. A graph is captured
/// for a fixed number of tokens, so a step that runs one runs padded up to
/// the next captured size: its linear layers and all-reduces compute the
/// padding too (its attention, KV writes and sampling do not).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CudaGraphs {
    /// vLLM V1 (its default, `cudagraph_mode` piecewise or full-and-
    /// piecewise): every step of at most the largest captured size. vLLM
    /// captures 1, 2, 4, multiples of 8 to 248 and of 16 from 256, up to
    /// the most of `2 x max_num_seqs`, 512 and the token budget
    /// (`vllm/config/vllm.py`, `VllmConfig._set_cudagraph_sizes`, and
    /// `pad_for_cudagraph`); longer steps run eagerly, unpadded.
    #[default]
    Piecewise,
    /// vLLM V0: decode-only steps of up to the size `max_num_seqs` pads to,
    /// at most 256, in sizes 1, 2, 4 and multiples of 8 (V0's
    /// `_BATCH_SIZES_TO_CAPTURE`); steps with a prefill run eagerly. (V0
    /// also ran a decode batch eagerly when one of its sequences was longer
    /// than `max_seq_len_to_capture`, 8,192 tokens by default: not modelled.)
    DecodeOnly,
    /// Decode-only steps padded to the next of these batch sizes, as
    /// TensorRT-LLM's PyTorch backend does with `cuda_graph_config:
    /// enable_padding`: sizes beyond the largest pure-decode batch (the
    /// fewer of `max_num_seqs` and the token budget) are dropped, and that
    /// batch is captured in their place.
    DecodeBatchSizes(Vec<u32>),
    /// No padding: an engine run eagerly (vLLM's `enforce_eager`), or one
    /// whose steps run at their own size (TensorRT-LLM's TensorRT engines).
    Off,
}

impl CudaGraphs {
    pub fn is_piecewise(&self) -> bool {
        *self == CudaGraphs::Piecewise
    }
}

/// The record of a fit: the data it was fitted to and each point's error.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitRecord {
    /// What was measured: "step times" or "benchmark points".
    pub data: String,
    /// The fields the fit set; the others kept the values they had.
    pub fitted: Vec<String>,
    /// Each measured figure, with the model's value before and after.
    pub points: Vec<FittedPoint>,
}

/// One measured figure and the model's value for it before and after a fit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FittedPoint {
    /// The measurement, in words ("prefill 2048, 0 decodes, 2048 KV tokens").
    pub point: String,
    /// The figure, with its unit ("step \[s\]", "output tokens/s").
    pub figure: String,
    pub measured: f64,
    /// The model's value with the values the fit started from.
    pub before: f64,
    /// The model's value with the fitted values.
    pub after: f64,
}

impl FittedPoint {
    /// Error before the fit: model over measured, minus one.
    pub fn error_before(&self) -> f64 {
        self.before / self.measured - 1.0
    }

    /// Error after the fit.
    pub fn error_after(&self) -> f64 {
        self.after / self.measured - 1.0
    }
}

//! The accelerator as a user writes it: memory, bandwidth, peak
//! throughput at each precision, and the link between the accelerators of
//! one node.

use serde::{Deserialize, Serialize};

/// One accelerator. Every field but the optional ones must be given (there
/// is no neutral accelerator).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareParams {
    pub name: String,
    /// Device memory \[GiB\].
    pub memory_gib: f64,
    /// Memory bandwidth \[GB/s, 10^9 bytes per second\].
    pub bandwidth_gb_s: f64,
    /// Peak dense matrix throughput at the compute precision \[TFLOP/s\]
    /// (dense BF16/FP16 in every preset).
    pub peak_tflops: f64,
    /// Peak dense FP8 matrix throughput \[TFLOP/s\]; `None` without FP8
    /// tensor cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_fp8_tflops: Option<f64>,
    /// Peak dense FP4 matrix throughput \[TFLOP/s\]; `None` without FP4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_fp4_tflops: Option<f64>,
    /// The link between the accelerators of one node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interconnect: Option<InterconnectParams>,
}

/// The intra-node link tensor parallelism communicates over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterconnectParams {
    pub kind: Interconnect,
    /// Bandwidth per accelerator in one direction \[GB/s\] (vendors usually
    /// quote both directions added: NVLink 4's "900 GB/s" is 450 here).
    pub gb_s: f64,
}

/// Kinds of intra-node link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interconnect {
    Nvlink,
    /// AMD Infinity Fabric between GPUs.
    Xgmi,
    /// No GPU-to-GPU link: traffic crosses PCIe (and the host).
    Pcie,
}

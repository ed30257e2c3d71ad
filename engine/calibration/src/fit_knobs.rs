//! The parameters of the per-operation model a fit ([`super::fit`]) may
//! change, each with its default, its place in `OperationsParams` and the
//! bounds the search keeps it within.

use crate::model::step_time::Efficiencies;
use crate::params::OperationsParams;

/// One parameter of the per-operation model, as the fit sees it.
pub(super) struct Knob {
    pub(super) field: &'static str,
    /// An efficiency in (0, 1] (else seconds).
    pub(super) fraction: bool,
    pub(super) default: fn(&Efficiencies) -> f64,
    pub(super) slot: fn(&mut OperationsParams) -> &mut Option<f64>,
}

impl Knob {
    /// Bounds of the log-parameter.
    pub(super) fn bounds(&self) -> (f64, f64) {
        if self.fraction {
            (libm::log(1e-3), 0.0)
        } else {
            (libm::log(1e-9), 0.0)
        }
    }
}

/// The parameters, in the order the fit keeps them when two explain the
/// same variation (the first kept).
pub(super) const KNOBS: [Knob; 8] = [
    Knob {
        field: "gemm_efficiency",
        fraction: true,
        default: |e| e.gemm,
        slot: |o| &mut o.gemm_efficiency,
    },
    Knob {
        field: "weight_bandwidth_efficiency",
        fraction: true,
        default: |e| e.weights,
        slot: |o| &mut o.weight_bandwidth_efficiency,
    },
    Knob {
        field: "attention_efficiency",
        fraction: true,
        default: |e| e.attention,
        slot: |o| &mut o.attention_efficiency,
    },
    Knob {
        field: "kv_bandwidth_efficiency",
        fraction: true,
        default: |e| e.kv,
        slot: |o| &mut o.kv_bandwidth_efficiency,
    },
    Knob {
        field: "per_sequence_s",
        fraction: false,
        default: |e| e.per_sequence_s,
        slot: |o| &mut o.per_sequence_s,
    },
    Knob {
        field: "overhead_s",
        fraction: false,
        default: |e| e.overhead_s,
        slot: |o| &mut o.overhead_s,
    },
    Knob {
        field: "interconnect_efficiency",
        fraction: true,
        default: |e| e.interconnect,
        slot: |o| &mut o.interconnect_efficiency,
    },
    Knob {
        field: "allreduce_latency_s",
        fraction: false,
        default: |e| e.allreduce_latency_s,
        slot: |o| &mut o.allreduce_latency_s,
    },
];

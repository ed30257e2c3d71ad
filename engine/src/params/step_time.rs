//! The step-time model as a scenario writes it; [`crate::StepTimeModel`]
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
    /// Measured step times: `step_s[i]\[j\]` at `batch_tokens\[i\]` tokens in the
    /// step and `kv_tokens\[j\]` KV tokens read.
    Table {
        batch_tokens: Vec<f64>,
        kv_tokens: Vec<f64>,
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

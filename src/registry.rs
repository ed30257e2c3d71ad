//! The page's inputs declared once, below the panels that draw them and
//! the words that name them in messages: every input with a fixed place
//! in the scenario (`registry/inputs.rs`: path, label, unit, help, how its
//! box reads), how a box reads its number ([`Kind`]), the distributions of
//! a class ([`Which`]), the numbers of each step-time model and of each
//! distribution shape, with their JSON names, labels, units and
//! explanations, and the JSON names of menu values. A panel draws a field
//! from here ([`Words`]); `words` reads the same label when a message
//! names the field, so the two cannot drift.

use sojourn_engine::{ClassParams, DistParams, Shape, StepTimeParams};

use crate::help;

pub mod inputs;

pub use inputs::{INPUTS, Input};

/// How a box is named, measured and explained: an [`Input`]'s words, or
/// words made from one of the tables below (a distribution's numbers, a
/// step-time model's) or from the value a box stands for (an hour, a
/// sensitivity input).
#[derive(Clone, Debug, PartialEq)]
pub struct Words {
    pub label: String,
    /// The unit shown after the box ("" for none).
    pub unit: &'static str,
    /// The explanation shown on hover and keyboard focus.
    pub help: &'static str,
    /// How the box reads a number, where not as the value's type says.
    pub kind: Option<Kind>,
}

impl Words {
    pub fn new(label: impl Into<String>, unit: &'static str, help: &'static str) -> Words {
        Words {
            label: label.into(),
            unit,
            help,
            kind: None,
        }
    }
}

impl From<&Input> for Words {
    fn from(input: &Input) -> Words {
        Words {
            label: input.label.to_string(),
            unit: input.unit,
            help: input.help,
            kind: input.kind,
        }
    }
}

/// The input declared at `path` (`[]` for any item: `classes[].name`).
/// Two inputs share a path where a mode decides what the value means
/// (a class's `load.requests`); this gives the first.
pub fn input(path: &str) -> Option<&'static Input> {
    INPUTS.iter().copied().find(|input| input.path == path)
}

/// `path` with every list index as `[]`: `classes[0].deadline_s` gives
/// `classes[].deadline_s`, the path an [`Input`] declares.
pub fn pattern(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index && c.is_ascii_digit() => {}
            _ => out.push(c),
        }
    }
    out
}

/// How a box reads and shows its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Real,
    /// A whole number of 0 or more.
    Count,
    /// Seconds, typed with a unit ("90 s", "24 h").
    Duration,
    /// A fraction shown as a percentage (0.2 shows "20").
    Percent,
}

/// Which distribution of a class an editor edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    BatchSize,
    Input,
    Output,
}

impl Which {
    pub fn field(self) -> &'static str {
        match self {
            Which::BatchSize => "batch_size",
            Which::Input => "input_tokens",
            Which::Output => "output_tokens",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Which::BatchSize => "Batch size",
            Which::Input => "Input (prompt) tokens",
            Which::Output => "Output tokens",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Which::BatchSize => "requests",
            Which::Input | Which::Output => "tokens",
        }
    }

    pub fn help(self) -> &'static str {
        match self {
            Which::BatchSize => help::BATCH_SIZE,
            Which::Input => help::INPUT_TOKENS,
            Which::Output => help::OUTPUT_TOKENS,
        }
    }

    pub fn get(self, class: &ClassParams) -> &DistParams {
        match self {
            Which::BatchSize => &class.batch_size,
            Which::Input => &class.input_tokens,
            Which::Output => &class.output_tokens,
        }
    }

    pub fn get_mut(self, class: &mut ClassParams) -> &mut DistParams {
        match self {
            Which::BatchSize => &mut class.batch_size,
            Which::Input => &mut class.input_tokens,
            Which::Output => &mut class.output_tokens,
        }
    }
}

/// The label of a distribution's menu of families.
const FAMILY_LABEL: &str = "Distribution";
/// The label of a distribution's cap.
const CAP_LABEL: &str = "Cap (max)";

impl Which {
    /// The menu of the distribution's family.
    pub fn family_words(self) -> Words {
        Words::new(FAMILY_LABEL, "", self.help())
    }

    /// The box of the distribution's cap.
    pub fn cap_words(self) -> Words {
        Words::new(
            CAP_LABEL,
            self.unit(),
            "Draws above this become this. Empty: no cap.",
        )
    }
}

/// The label of a field every distribution has (`kind`, `max`), by its
/// JSON name.
pub fn dist_label(field: &str) -> Option<&'static str> {
    match field {
        "kind" => Some(FAMILY_LABEL),
        "max" => Some(CAP_LABEL),
        _ => None,
    }
}

/// The editor's title of a class's distribution by its field name
/// (`input_tokens`: "Input (prompt) tokens"), for messages about it.
pub fn dist_title(field: &str) -> Option<&'static str> {
    [Which::BatchSize, Which::Input, Which::Output]
        .into_iter()
        .find(|which| which.field() == field)
        .map(Which::title)
}

/// The step-time model's menu key.
pub fn step_time_kind(step_time: &StepTimeParams) -> &'static str {
    match step_time {
        StepTimeParams::Roofline { .. } => "roofline",
        StepTimeParams::Operations(_) => "operations",
        StepTimeParams::AlphaBeta { .. } => "alpha_beta",
        StepTimeParams::Table { .. } | StepTimeParams::BatchTable { .. } => "table",
    }
}

/// The labels of the boxes of `model`'s numbers by field, for messages
/// about them.
pub fn step_time_labels(
    model: &StepTimeParams,
) -> impl Iterator<Item = (&'static str, &'static str)> {
    let numbers = match step_time_kind(model) {
        "operations" => OPERATIONS,
        kind => step_time_numbers(kind),
    };
    numbers.iter().map(|&(field, label, ..)| (field, label))
}

/// The numbers of each step-time model: (field, label, unit, how the box
/// reads, explanation).
pub fn step_time_numbers(
    kind: &str,
) -> &'static [(&'static str, &'static str, &'static str, Kind, &'static str)] {
    match kind {
        "roofline" => &[
            (
                "mfu",
                "Compute utilisation (MFU)",
                "%",
                Kind::Percent,
                help::MFU,
            ),
            (
                "mbu",
                "Bandwidth utilisation (MBU)",
                "%",
                Kind::Percent,
                help::MBU,
            ),
            (
                "overhead_s",
                "Overhead per step",
                "s",
                Kind::Real,
                help::OVERHEAD,
            ),
        ],
        "alpha_beta" => &[
            (
                "alpha_s_per_token",
                "Alpha",
                "s/token",
                Kind::Real,
                help::ALPHA,
            ),
            ("beta_s_per_step", "Beta", "s/step", Kind::Real, help::BETA),
            (
                "overhead_s",
                "Overhead per step",
                "s",
                Kind::Real,
                help::OVERHEAD,
            ),
        ],
        _ => &[],
    }
}

/// The per-operation model's numbers: (field, label, unit, how the box
/// reads, explanation). An empty box takes the accelerator family's default.
pub const OPERATIONS: &[(&str, &str, &str, Kind, &str)] = &[
    (
        "gemm_efficiency",
        "Linear layers: share of peak FLOP/s",
        "%",
        Kind::Percent,
        help::OPS_GEMM,
    ),
    (
        "weight_bandwidth_efficiency",
        "Weights: share of bandwidth",
        "%",
        Kind::Percent,
        help::OPS_WEIGHTS,
    ),
    (
        "attention_efficiency",
        "Attention: share of peak FLOP/s",
        "%",
        Kind::Percent,
        help::OPS_ATTENTION,
    ),
    (
        "kv_bandwidth_efficiency",
        "KV reads: share of bandwidth",
        "%",
        Kind::Percent,
        help::OPS_KV,
    ),
    (
        "per_sequence_s",
        "Attention cost per decoding sequence",
        "s",
        Kind::Real,
        help::OPS_PER_SEQUENCE,
    ),
    (
        "overhead_s",
        "Overhead per step",
        "s",
        Kind::Real,
        help::OVERHEAD,
    ),
    (
        "interconnect_efficiency",
        "All-reduce: share of link bandwidth",
        "%",
        Kind::Percent,
        help::OPS_INTERCONNECT,
    ),
    (
        "allreduce_latency_s",
        "All-reduce latency",
        "s",
        Kind::Real,
        help::OPS_ALLREDUCE_LATENCY,
    ),
];

/// A field of a distribution: (JSON name, label) for each number it has;
/// lists (empirical, histogram) are edited as text.
pub fn shape_fields(shape: &Shape) -> &'static [(&'static str, &'static str)] {
    match shape {
        Shape::Constant { .. } => &[("value", "Value")],
        Shape::Uniform { .. } => &[("low", "Low"), ("high", "High")],
        Shape::Exponential { .. } | Shape::Geometric { .. } => &[("mean", "Mean")],
        Shape::LogNormal { .. } => &[("median", "Median"), ("p90", "p90")],
        Shape::LogNormalMoments { .. } | Shape::Gamma { .. } => {
            &[("mean", "Mean"), ("std_dev", "Std dev")]
        }
        Shape::Empirical { .. } | Shape::Histogram { .. } => &[],
    }
}

/// A list of a distribution: (JSON name, label, explanation, whether its
/// values are in the distribution's unit) for each list it has.
pub fn shape_lists(shape: &Shape) -> &'static [(&'static str, &'static str, &'static str, bool)] {
    match shape {
        Shape::Empirical { .. } => &[(
            "values",
            "Values",
            "Each value is drawn with equal probability (e.g. lengths from a trace).",
            true,
        )],
        Shape::Histogram { .. } => &[
            (
                "edges",
                "Bin edges",
                "Bin i spans edges[i] to edges[i+1]; values are uniform within a bin.",
                true,
            ),
            (
                "weights",
                "Bin weights",
                "Relative probability of each bin (one fewer than the edges).",
                false,
            ),
        ],
        _ => &[],
    }
}

/// The JSON name of a unit enum value ("fcfs", "bf16").
pub fn enum_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The unit enum value named `text`.
pub fn enum_parse<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).ok()
}

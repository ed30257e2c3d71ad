//! What the input panels need besides the engine: reading what a user typed
//! (numbers, durations, lists), switching a distribution's family or how a
//! class's lengths go together, and the edits that add or remove things;
//! reading the files a user opens (`form/import.rs`: scenarios and traces;
//! `form/measurements.rs`: step-time measurements). No DOM; tested natively.

use sojourn_engine::presets;
use sojourn_engine::{ClassParams, DistParams, ModelParams, ScenarioParams, Shape, WeightBytes};

use crate::format::{format_gib, format_number};
use crate::registry::enum_text;

mod import;
mod lengths;
mod load;
mod measurements;
mod typed;
pub use import::{import_scenario, import_trace};
use lengths::typical_lengths;
pub use lengths::{LENGTHS_KINDS, lengths_kind, lengths_preview, pairs_csv, set_lengths_kind};
pub use load::{
    LOAD_KINDS, NO_THINK, TRACE_KIND, load_kind, load_kinds, load_requests, load_summary,
    set_load_kind, set_think_kind, think, think_kind, think_mut,
};
pub use measurements::{Next, Prepared, fit_record, prepare};
pub use typed::{
    AMBIGUOUS_COMMA, NOT_A_COUNT, NOT_A_DURATION, NOT_A_NUMBER, NOT_COUNTS, NOT_LIMITS,
    counts_text, duration_echo, duration_text, duration_words, list_text, parse_count,
    parse_counts, parse_duration_s, parse_list, parse_number,
};

/// The families a distribution box offers, in menu order.
pub const SHAPE_KINDS: [(&str, &str); 9] = [
    ("constant", "Constant"),
    ("log_normal", "Lognormal (median, p90)"),
    ("log_normal_moments", "Lognormal (mean, std dev)"),
    ("gamma", "Gamma (mean, std dev)"),
    ("exponential", "Exponential (mean)"),
    ("geometric", "Geometric (mean)"),
    ("uniform", "Uniform (low, high)"),
    ("empirical", "Empirical (listed values)"),
    ("histogram", "Histogram (edges, weights)"),
];

/// The menu key of a shape.
pub fn shape_kind(shape: &Shape) -> &'static str {
    match shape {
        Shape::Constant { .. } => "constant",
        Shape::Uniform { .. } => "uniform",
        Shape::Exponential { .. } => "exponential",
        Shape::Geometric { .. } => "geometric",
        Shape::LogNormal { .. } => "log_normal",
        Shape::LogNormalMoments { .. } => "log_normal_moments",
        Shape::Gamma { .. } => "gamma",
        Shape::Empirical { .. } => "empirical",
        Shape::Histogram { .. } => "histogram",
    }
}

/// A typical value of a shape (its median or mean), to carry over when the
/// family changes.
fn typical(shape: &Shape) -> f64 {
    let value = match shape {
        Shape::Constant { value } => *value,
        Shape::Uniform { low, high } => (low + high) / 2.0,
        Shape::Exponential { mean }
        | Shape::Geometric { mean }
        | Shape::LogNormalMoments { mean, .. }
        | Shape::Gamma { mean, .. } => *mean,
        Shape::LogNormal { median, .. } => *median,
        Shape::Empirical { values } => values.iter().sum::<f64>() / values.len().max(1) as f64,
        Shape::Histogram { edges, .. } => {
            (edges.first().copied().unwrap_or(1.0) + edges.last().copied().unwrap_or(1.0)) / 2.0
        }
    };
    if value.is_finite() && value > 0.0 {
        value
    } else {
        1.0
    }
}

/// `shape` turned into the family `kind`, keeping its typical value (the
/// spread becomes a moderate default the user then adjusts).
pub fn convert_shape(shape: &Shape, kind: &str) -> Shape {
    let m = typical(shape);
    let round = |x: f64| if x >= 10.0 { x.round() } else { x };
    match kind {
        "constant" => Shape::Constant { value: round(m) },
        "uniform" => Shape::Uniform {
            low: round(m / 2.0),
            high: round(m * 1.5),
        },
        "exponential" => Shape::Exponential { mean: round(m) },
        "geometric" => Shape::Geometric {
            mean: round(m.max(1.0)),
        },
        "log_normal_moments" => Shape::LogNormalMoments {
            mean: round(m),
            std_dev: round(m),
        },
        "gamma" => Shape::Gamma {
            mean: round(m),
            std_dev: round(m / 2.0),
        },
        "empirical" => Shape::Empirical {
            values: vec![round(m / 2.0), round(m), round(m * 2.0)],
        },
        "histogram" => Shape::Histogram {
            edges: vec![round(m / 2.0), round(m), round(m * 2.0), round(m * 4.0)],
            weights: vec![1.0, 2.0, 1.0],
        },
        _ => Shape::LogNormal {
            median: round(m),
            p90: round(m * 3.0),
        },
    }
}

/// The number called `field` in `shape`.
pub fn shape_get(shape: &Shape, field: &str) -> Option<f64> {
    Some(match (shape, field) {
        (Shape::Constant { value }, "value") => *value,
        (Shape::Uniform { low, .. }, "low") => *low,
        (Shape::Uniform { high, .. }, "high") => *high,
        (Shape::Exponential { mean }, "mean")
        | (Shape::Geometric { mean }, "mean")
        | (Shape::LogNormalMoments { mean, .. }, "mean")
        | (Shape::Gamma { mean, .. }, "mean") => *mean,
        (Shape::LogNormal { median, .. }, "median") => *median,
        (Shape::LogNormal { p90, .. }, "p90") => *p90,
        (Shape::LogNormalMoments { std_dev, .. }, "std_dev")
        | (Shape::Gamma { std_dev, .. }, "std_dev") => *std_dev,
        _ => return None,
    })
}

/// Sets the number called `field` in `shape` (no-op for other fields).
pub fn shape_set(shape: &mut Shape, field: &str, value: f64) {
    let slot = match (shape, field) {
        (Shape::Constant { value }, "value") => value,
        (Shape::Uniform { low, .. }, "low") => low,
        (Shape::Uniform { high, .. }, "high") => high,
        (Shape::Exponential { mean }, "mean")
        | (Shape::Geometric { mean }, "mean")
        | (Shape::LogNormalMoments { mean, .. }, "mean")
        | (Shape::Gamma { mean, .. }, "mean") => mean,
        (Shape::LogNormal { median, .. }, "median") => median,
        (Shape::LogNormal { p90, .. }, "p90") => p90,
        (Shape::LogNormalMoments { std_dev, .. }, "std_dev")
        | (Shape::Gamma { std_dev, .. }, "std_dev") => std_dev,
        _ => return,
    };
    *slot = value;
}

/// The list called `field` in `shape` (a copy: read through
/// [`shape_list_mut`], so reading and writing name the same lists).
pub fn shape_list(shape: &Shape, field: &str) -> Option<Vec<f64>> {
    shape_list_mut(&mut shape.clone(), field).cloned()
}

/// The list called `field` in `shape`, to edit.
pub fn shape_list_mut<'a>(shape: &'a mut Shape, field: &str) -> Option<&'a mut Vec<f64>> {
    match (shape, field) {
        (Shape::Empirical { values }, "values") => Some(values),
        (Shape::Histogram { edges, .. }, "edges") => Some(edges),
        (Shape::Histogram { weights, .. }, "weights") => Some(weights),
        _ => None,
    }
}

/// A preview of one distribution: its summary from the engine's own
/// sampler, or the reason it cannot be built (the engine's message).
pub fn dist_preview(dist: &DistParams) -> Result<sojourn_engine::DistSummary, String> {
    dist.to_dist()
        .map(|d| d.summary(PREVIEW_SAMPLES))
        .map_err(|error| match error.errors.first() {
            Some(e) => e.reason.clone(),
            None => "cannot preview this distribution".to_string(),
        })
}

/// Samples behind a distribution preview (deterministic: a fixed seed).
pub const PREVIEW_SAMPLES: usize = 4000;

/// Time-of-day profiles offered as starting points: (key, label, 24 values).
pub fn time_of_day_presets() -> Vec<(&'static str, &'static str, Vec<f64>)> {
    let business: Vec<f64> = (0..24)
        .map(|h| if (8..18).contains(&h) { 1.8 } else { 0.45 })
        .collect();
    let night: Vec<f64> = (0..24)
        .map(|h| if !(6..20).contains(&h) { 1.8 } else { 0.5 })
        .collect();
    vec![
        ("flat", "Flat (no profile)", vec![1.0; 24]),
        ("business", "Business hours (08–18 busy)", business),
        ("night", "Overnight batch (20–06 busy)", night),
    ]
}

/// The model preset the configured model is (see [`presets::is_model_preset`]).
pub fn model_preset_id(params: &ScenarioParams) -> Option<&'static str> {
    presets::models()
        .into_iter()
        .find(|preset| presets::is_model_preset(&preset.params, &params.model))
        .map(|preset| preset.id)
}

/// The accelerator preset the configured hardware is.
pub fn hardware_preset_id(params: &ScenarioParams) -> Option<&'static str> {
    presets::hardware_presets()
        .into_iter()
        .find(|preset| presets::is_hardware_preset(&preset.params, &params.hardware))
        .map(|preset| preset.id)
}

/// One line of "Assumptions and sources": some figures, where and when
/// they were read, and whether they were verified there.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceLine {
    pub text: String,
    pub verified: bool,
}

impl SourceLine {
    fn new(source: &presets::Source) -> Self {
        SourceLine {
            text: format!(
                "{}: {} (read {})",
                source.figures, source.source, source.retrieved
            ),
            verified: source.verified,
        }
    }
}

/// The sources of the configured model's preset; `None` for a custom model.
pub fn model_sources(params: &ScenarioParams) -> Option<Vec<SourceLine>> {
    let id = model_preset_id(params)?;
    let preset = presets::models().into_iter().find(|m| m.id == id)?;
    Some(preset.sources.iter().map(SourceLine::new).collect())
}

/// The sources of the configured accelerator's preset and the prices quoted
/// for it; `None` for a custom accelerator.
pub fn hardware_sources(params: &ScenarioParams) -> Option<Vec<SourceLine>> {
    let id = hardware_preset_id(params)?;
    let preset = presets::hardware_presets()
        .into_iter()
        .find(|h| h.id == id)?;
    let figures = preset.sources.iter().map(SourceLine::new);
    let prices = preset.prices.iter().map(|price| SourceLine {
        text: format!(
            "USD {} per GPU-hour, {} ({}, {}): {} (read {})",
            price.usd_per_gpu_hour,
            price.pricing_model.label(),
            price.provider_region,
            price.price_date,
            price.source.source,
            price.source.retrieved
        ),
        verified: price.source.verified,
    });
    Some(figures.chain(prices).collect())
}

/// A new class for "Add class": the engine's default class with a name no
/// other class has.
pub fn new_class(params: &ScenarioParams) -> ClassParams {
    let taken = |name: &str| params.classes.iter().any(|c| c.name == name);
    let name = (params.classes.len() + 1..)
        .map(|n| format!("class-{n}"))
        .find(|name| !taken(name))
        .unwrap_or_else(|| "class".to_string());
    ClassParams {
        name,
        ..ClassParams::default()
    }
}

/// A typical value of a distribution (its median or mean).
pub fn typical_value(dist: &DistParams) -> f64 {
    typical(&dist.shape)
}

/// What the weight precision covers when a checkpoint quantizes only its
/// routed experts (gpt-oss): the experts' parameters and bits, the rest's
/// precision, and the weights in all. `None` for a model whose weights
/// share one precision.
pub fn expert_layout_note(model: &ModelParams) -> Option<String> {
    let moe = model.moe.as_ref()?;
    if moe.other_weight_dtype.is_none() && moe.expert_scale_bits.is_none() {
        return None;
    }
    let bytes = WeightBytes::of(model);
    let experts = bytes.routed_params?;
    let scale = moe.expert_scale_bits.unwrap_or(0.0);
    let bits = model.weight_dtype.bytes() * 8.0 + scale;
    let rest = moe.other_weight_dtype.unwrap_or(model.weight_dtype);
    Some(format!(
        "The weight precision is the routed experts' only: {:.1} B parameters at {} bits a weight{}; the other {:.1} B are {}. Weights: {} in all.",
        experts / 1e9,
        format_number(bits, 3),
        if scale > 0.0 {
            " with their block scales"
        } else {
            ""
        },
        (model.params_b * 1e9 - experts).max(0.0) / 1e9,
        enum_text(&rest),
        format_gib(bytes.total),
    ))
}

/// The sequence length (prompt + output) of a typical request, weighted by
/// each class's request rate: what the memory bar's verdict uses.
pub fn typical_seq_tokens(params: &ScenarioParams) -> f64 {
    let (mut weight, mut total) = (0.0, 0.0);
    for class in &params.classes {
        let rate = class.batches_per_hour.max(0.0) * typical_value(&class.batch_size);
        let (input, output) = typical_lengths(class);
        let tokens = input + output;
        if rate.is_finite() && tokens.is_finite() {
            weight += rate;
            total += rate * tokens;
        }
    }
    if weight > 0.0 { total / weight } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::shape_lists;

    /// The page lists where each figure of the chosen presets comes from,
    /// says which were not verified, and lists nothing for custom values.
    #[test]
    fn presets_show_their_sources_and_custom_values_none() {
        let mut params = ScenarioParams::overnight_batch();
        let model = model_sources(&params).expect("the default model is a preset");
        assert!(model[0].text.contains("hidden 4096") && model[0].verified);
        let hardware = hardware_sources(&params).expect("the default accelerator is a preset");
        assert!(hardware.iter().any(|l| l.text.contains("glennklockwood")));
        assert!(
            hardware
                .iter()
                .any(|l| l.text.starts_with("USD 3.78 per GPU-hour, on-demand"))
        );
        params.hardware = presets::hardware("h100-pcie").expect("a preset");
        let unverified: Vec<_> = hardware_sources(&params)
            .expect("a preset")
            .into_iter()
            .filter(|l| !l.verified)
            .collect();
        assert_eq!(unverified.len(), 1);
        assert!(
            unverified[0]
                .text
                .starts_with("BF16 756 and FP8 1,513 dense")
        );
        params.hardware.memory_gib = 79.0;
        assert_eq!(hardware_sources(&params), None);
        params.model.layers = 31;
        assert_eq!(model_sources(&params), None);
    }

    // List boxes read and write a distribution's lists by name: every list
    // a family lists must be one of its own.
    #[test]
    fn every_listed_list_of_a_family_reads_and_writes_its_shape() {
        let start = Shape::LogNormal {
            median: 100.0,
            p90: 300.0,
        };
        let mut listed = 0;
        for (kind, _) in SHAPE_KINDS {
            let shape = convert_shape(&start, kind);
            for &(field, ..) in shape_lists(&shape) {
                let mut edited = shape.clone();
                assert!(shape_list(&edited, field).is_some(), "{kind} {field}");
                if let Some(list) = shape_list_mut(&mut edited, field) {
                    *list = vec![7.0, 8.0];
                }
                assert_eq!(shape_list(&edited, field), Some(vec![7.0, 8.0]));
                listed += 1;
            }
        }
        assert_eq!(listed, 3, "values, edges and weights");
    }
}

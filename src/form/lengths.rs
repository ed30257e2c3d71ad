//! How a class's prompt and output lengths go together, as the page edits
//! it: independent, correlated log-normals, or a table of pairs (the
//! engine's `LengthsParams`), with the preview the chart draws.

use sojourn_engine::{ClassParams, LengthsParams, Shape, preview_lengths};

use super::{PREVIEW_SAMPLES, convert_shape, typical_value};

/// How a class's prompt and output lengths go together, as the page offers
/// it: (value, label).
pub const LENGTHS_KINDS: [(&str, &str); 3] = [
    ("independent", "independent"),
    ("correlated", "correlated (log-normal, rho)"),
    ("pairs", "table of pairs"),
];

/// The correlation a class starts with when its lengths become correlated.
const STARTING_RHO: f64 = 0.5;

/// Rows of the table a class starts with (drawn from its lengths as they
/// were), for the user to replace with their own.
const STARTING_PAIRS: usize = 20;

/// Which of [`LENGTHS_KINDS`] a class's lengths are.
pub fn lengths_kind(class: &ClassParams) -> &'static str {
    match &class.lengths {
        None => "independent",
        Some(LengthsParams::Correlated { .. }) => "correlated",
        Some(LengthsParams::Pairs { .. }) => "pairs",
    }
}

/// Switches a class's lengths to `kind` (a value of [`LENGTHS_KINDS`]),
/// keeping what it can: a correlation makes both lengths log-normal (at
/// their typical values) where they are not, and a table starts from a few
/// draws of the lengths as they were.
pub fn set_lengths_kind(class: &mut ClassParams, kind: &str) {
    if kind == lengths_kind(class) {
        return;
    }
    class.lengths = match kind {
        "correlated" => {
            for dist in [&mut class.input_tokens, &mut class.output_tokens] {
                if !matches!(
                    dist.shape,
                    Shape::LogNormal { .. } | Shape::LogNormalMoments { .. }
                ) {
                    dist.shape = convert_shape(&dist.shape, "log_normal");
                }
            }
            Some(LengthsParams::Correlated { rho: STARTING_RHO })
        }
        "pairs" => Some(starting_table(class)),
        _ => None,
    };
}

/// A table of [`STARTING_PAIRS`] draws of `class`'s lengths drawn
/// independently (one typical pair if they cannot be drawn).
fn starting_table(class: &ClassParams) -> LengthsParams {
    let independent = ClassParams {
        lengths: None,
        ..class.clone()
    };
    let pairs = match preview_lengths(&independent, STARTING_PAIRS) {
        Ok(pairs) => pairs
            .into_iter()
            .map(|(i, o)| [i as f64, o as f64])
            .collect(),
        Err(_) => vec![[
            typical_value(&class.input_tokens).round().max(1.0),
            typical_value(&class.output_tokens).round().max(1.0),
        ]],
    };
    LengthsParams::Pairs {
        pairs,
        weights: None,
    }
}

/// A class's table of pairs as CSV text ("" for the other kinds).
pub fn pairs_csv(class: &ClassParams) -> String {
    class
        .lengths
        .as_ref()
        .and_then(LengthsParams::to_csv)
        .unwrap_or_default()
}

/// [`PREVIEW_SAMPLES`] (prompt, output) draws of a class's lengths with a
/// fixed seed, from its joint model if it has one, for the lengths chart;
/// or why there are none.
pub fn lengths_preview(class: &ClassParams) -> Result<Vec<(u32, u32)>, String> {
    preview_lengths(class, PREVIEW_SAMPLES).map_err(|error| match error.errors.first() {
        Some(e) => format!(
            "{}: {}",
            crate::words::class_field_words(&e.field, Some(class)),
            e.reason
        ),
        None => "cannot preview these lengths".to_string(),
    })
}

/// A typical prompt and output length of a class: a table's weighted mean,
/// otherwise each distribution's typical value.
pub(super) fn typical_lengths(class: &ClassParams) -> (f64, f64) {
    match &class.lengths {
        Some(LengthsParams::Pairs { pairs, weights }) if !pairs.is_empty() => {
            let weight = |k: usize| {
                weights
                    .as_ref()
                    .map_or(1.0, |w| w.get(k).copied().unwrap_or(0.0))
            };
            let total: f64 = (0..pairs.len()).map(weight).sum();
            let (input, output) = pairs
                .iter()
                .enumerate()
                .fold((0.0, 0.0), |(a, b), (k, [i, o])| {
                    (a + weight(k) * i, b + weight(k) * o)
                });
            (input / total, output / total)
        }
        _ => (
            typical_value(&class.input_tokens),
            typical_value(&class.output_tokens),
        ),
    }
}

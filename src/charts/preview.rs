//! Small previews drawn by hand (no axes): a distribution's histogram and a
//! time-of-day profile. They use `currentColor`, so CSS colours them for
//! light and dark pages alike.

use sojourn_engine::DistSummary;

use super::escape;

/// Bars of a distribution's 20-bin histogram, `width` x `height` px.
pub fn histogram_preview(summary: &DistSummary, label: &str, width: u32, height: u32) -> String {
    let top = summary
        .histogram
        .iter()
        .map(|(_, _, f)| *f)
        .fold(0.0f64, f64::max)
        .max(1e-12);
    bars(
        summary.histogram.iter().map(|(_, _, f)| f / top),
        label,
        width,
        height,
    )
}

/// Bars of a 24-hour profile (hour 0 first), scaled to its largest value.
pub fn profile_preview(values: &[f64], label: &str, width: u32, height: u32) -> String {
    let top = values.iter().copied().fold(0.0f64, f64::max).max(1e-12);
    bars(values.iter().map(|v| v / top), label, width, height)
}

fn bars(
    heights: impl ExactSizeIterator<Item = f64>,
    label: &str,
    width: u32,
    height: u32,
) -> String {
    let n = heights.len().max(1) as f64;
    let slot = width as f64 / n;
    let mut svg = format!(
        "<svg class=\"preview\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
         xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"{label}\"><title>{label}</title>",
        label = escape(label)
    );
    for (index, h) in heights.enumerate() {
        let h = if h.is_finite() {
            h.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let bar_height = (h * (height as f64 - 1.0)).max(if h > 0.0 { 1.0 } else { 0.0 });
        svg.push_str(&format!(
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"currentColor\"/>",
            index as f64 * slot + 0.5,
            height as f64 - bar_height,
            (slot - 1.0).max(0.5),
            bar_height
        ));
    }
    svg.push_str(&format!(
        "<line x1=\"0\" y1=\"{y}\" x2=\"{width}\" y2=\"{y}\" stroke=\"currentColor\" stroke-opacity=\"0.4\"/></svg>",
        y = height as f64 - 0.5
    ));
    svg
}

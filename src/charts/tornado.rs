//! The sensitivity tornado: for each input varied by -delta and +delta, the
//! change in cost per successful request (or in P(miss)), largest first.

use plotters::prelude::*;
use sojourn_engine::Sensitivity;

use super::{Area, Chart, DrawResult, Frame, Theme, Themed, draw_error, font_px, legend};

pub const TORNADO_TITLE: &str = "Sensitivity";

/// What the bars measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TornadoMetric {
    /// Change in cost per successful request \[% of the base\]; GPU-hours per
    /// success when no price was given.
    CostPerSuccess,
    /// Change in P(miss) \[percentage points\].
    MissProbability,
}

/// One bar pair: the change at the low and at the high multiplier.
#[derive(Clone, Debug, PartialEq)]
pub struct TornadoRow {
    pub label: String,
    pub low: f64,
    pub high: f64,
}

/// The bars for `metric`, in the engine's order (largest impact first).
pub fn tornado_rows(sensitivity: &Sensitivity, metric: TornadoMetric) -> Vec<TornadoRow> {
    let relative = |value: Option<f64>, base: Option<f64>| match (value, base) {
        (Some(v), Some(b)) if b > 0.0 => (v - b) / b * 100.0,
        _ => 0.0,
    };
    sensitivity
        .rows
        .iter()
        .map(|row| {
            let (low, high) = match metric {
                TornadoMetric::CostPerSuccess if sensitivity.base_usd_per_success.is_some() => (
                    relative(row.usd_per_success_low, sensitivity.base_usd_per_success),
                    relative(row.usd_per_success_high, sensitivity.base_usd_per_success),
                ),
                TornadoMetric::CostPerSuccess => (
                    relative(
                        row.gpu_hours_per_success_low,
                        sensitivity.base_gpu_hours_per_success,
                    ),
                    relative(
                        row.gpu_hours_per_success_high,
                        sensitivity.base_gpu_hours_per_success,
                    ),
                ),
                TornadoMetric::MissProbability => (
                    (row.p_miss_low - sensitivity.base_p_miss) * 100.0,
                    (row.p_miss_high - sensitivity.base_p_miss) * 100.0,
                ),
            };
            TornadoRow {
                label: row.label.clone(),
                low: if low.is_finite() { low } else { 0.0 },
                high: if high.is_finite() { high } else { 0.0 },
            }
        })
        .collect()
}

/// The tornado's height \[px\] for `rows` bars (one slot above them holds the legend).
pub fn tornado_height(rows: usize) -> u32 {
    (rows as u32 + 1) * 34 + 80
}

/// Draws the tornado for `rows` (from [`tornado_rows`]).
pub fn tornado_chart(
    rows: &[TornadoRow],
    metric: TornadoMetric,
    delta: f64,
    priced: bool,
    theme: &Theme,
    width: u32,
) -> Chart {
    let height = tornado_height(rows.len());
    let what = match metric {
        TornadoMetric::CostPerSuccess if priced => "change in cost per successful request",
        TornadoMetric::CostPerSuccess => "change in GPU-hours per successful request",
        TornadoMetric::MissProbability => "change in P(miss)",
    };
    let title = format!(
        "{TORNADO_TITLE}: {what} when each input is {} by {:.0} %",
        "lowered and raised",
        delta * 100.0
    );
    let frame = Frame {
        name: &title,
        title: &title,
        width,
        height,
        theme,
    };
    if rows.is_empty() {
        let frame = Frame {
            height: height.max(120),
            ..frame
        };
        return frame.empty("No sensitivity rows.");
    }
    let what_drawn = Drawn {
        rows,
        metric,
        delta,
        what,
    };
    frame.draw(|root| draw(&what_drawn, theme, width, root))
}

/// What the tornado plots: its rows, their metric, the change applied to
/// each input (a fraction) and the axis's words for the metric.
struct Drawn<'a> {
    rows: &'a [TornadoRow],
    metric: TornadoMetric,
    delta: f64,
    what: &'a str,
}

/// The axis's words for the metric: shorter on a narrow chart, where the
/// long form ran past its edge.
fn axis_words(what: &str, width: u32) -> String {
    if width < 500 {
        what.replace("successful request", "success")
    } else {
        what.to_string()
    }
}

fn draw(drawn: &Drawn, theme: &Theme, width: u32, root: &Area) -> DrawResult<()> {
    let &Drawn {
        rows,
        metric,
        delta,
        what,
    } = drawn;
    let font = font_px(width);
    let extent = rows
        .iter()
        .flat_map(|r| [r.low.abs(), r.high.abs()])
        .fold(0.0f64, f64::max)
        .max(if metric == TornadoMetric::MissProbability {
            0.01
        } else {
            1.0
        })
        * 1.15;
    let n = rows.len() as i32;
    // One empty slot on top for the legend.
    let slots = n + 1;
    let label_style = ("sans-serif", font).into_font().color(&theme.ink);
    let longest = rows.iter().map(|r| r.label.len()).max().unwrap_or(8) as f64;
    let mut chart = ChartBuilder::on(root)
        .margin_top(10)
        .margin_right(18)
        .margin_left(8)
        .x_label_area_size(font * 3.2)
        .y_label_area_size(longest * font * 0.58 + 12.0)
        .build_cartesian_2d(-extent..extent, (0..slots).into_segmented())
        .map_err(draw_error)?;
    let unit = match metric {
        TornadoMetric::CostPerSuccess => "%",
        TornadoMetric::MissProbability => "pp",
    };
    let labels: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(format!("{} ({unit})", axis_words(what, width)))
        .x_labels(if width < 500 { 5 } else { 9 })
        .x_label_formatter(&|x| {
            format!(
                "{}{}",
                if *x > 0.0 { "+" } else { "" },
                crate::format::format_number(*x, 2)
            )
        })
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels
                .get((n - 1 - *i) as usize)
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        })
        .y_labels(rows.len() + 2)
        .themed(theme, &label_style)
        .draw()
        .map_err(draw_error)?;
    let low_color = theme.base;
    let high_color = theme.deadline;
    chart
        .draw_series(rows.iter().enumerate().map(|(index, row)| {
            let slot = n - 1 - index as i32;
            Rectangle::new(
                [
                    (0.0, SegmentValue::Exact(slot)),
                    (row.low, SegmentValue::CenterOf(slot)),
                ],
                low_color.mix(0.85).filled(),
            )
        }))
        .map_err(draw_error)?
        .label(format!(
            "input x {}",
            crate::format::format_number(1.0 - delta, 3)
        ))
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], low_color.filled()));
    chart
        .draw_series(rows.iter().enumerate().map(|(index, row)| {
            let slot = n - 1 - index as i32;
            Rectangle::new(
                [
                    (0.0, SegmentValue::CenterOf(slot)),
                    (row.high, SegmentValue::Exact(slot + 1)),
                ],
                high_color.mix(0.85).filled(),
            )
        }))
        .map_err(draw_error)?
        .label(format!(
            "input x {}",
            crate::format::format_number(1.0 + delta, 3)
        ))
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], high_color.filled()));
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, SegmentValue::Exact(0)), (0.0, SegmentValue::Exact(n))],
            theme.ink.stroke_width(1),
        )))
        .map_err(draw_error)?;
    legend(
        &mut chart,
        SeriesLabelPosition::UpperLeft,
        theme,
        label_style,
    )
}

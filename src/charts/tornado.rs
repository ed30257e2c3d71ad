//! The sensitivity tornado: for each input varied by -delta and +delta, the
//! change in cost per successful request (or in P(miss)), the longest bars
//! first, with the legend under the axes where it hides no bar.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sojourn_engine::Sensitivity;

use super::legend::{LegendItem, Mark, draw_legend};
use super::{Area, Chart, DrawResult, Frame, Theme, Themed, draw_error, font_px, tick_label};

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

impl TornadoRow {
    /// How wide the row's two bars are drawn together, from the leftmost
    /// end to the rightmost (0 included: both bars start there).
    pub fn drawn_length(&self) -> f64 {
        self.low.max(self.high).max(0.0) - self.low.min(self.high).min(0.0)
    }
}

/// Orders rows by the length drawn, longest first (equal rows keep their
/// order). The engine orders its rows by an impact that mixes cost, P(miss)
/// and the targets' margins, so for one metric its order put bars of no
/// length above long ones.
pub fn sort_by_drawn_length(rows: &mut [TornadoRow]) {
    rows.sort_by(|a, b| b.drawn_length().total_cmp(&a.drawn_length()));
}

/// The bars for `metric`, longest first.
pub fn tornado_rows(sensitivity: &Sensitivity, metric: TornadoMetric) -> Vec<TornadoRow> {
    let relative = |value: Option<f64>, base: Option<f64>| match (value, base) {
        (Some(v), Some(b)) if b > 0.0 => (v - b) / b * 100.0,
        _ => 0.0,
    };
    let mut rows = sensitivity
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
        .collect::<Vec<_>>();
    sort_by_drawn_length(&mut rows);
    rows
}

/// Height \[px\] of one row, and of the strip under the axes holding the legend.
const ROW_PX: u32 = 34;

/// The tornado's height \[px\] for `rows` bars and the legend under them.
pub fn tornado_height(rows: usize) -> u32 {
    (rows as u32 + 1) * ROW_PX + 80
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
    let what_drawn = Drawn { rows, metric, what };
    frame.draw(|root| {
        let (plot, below) = root.split_vertically(height - ROW_PX);
        draw(&what_drawn, theme, width, &plot)?;
        draw_legend(&below, &legend_items(delta, theme), theme, width)
    })
}

/// The two bars' colours and the multipliers they stand for.
fn legend_items(delta: f64, theme: &Theme) -> [LegendItem; 2] {
    let multiplier = |m: f64| format!("input x {}", crate::format::format_number(m, 3));
    [
        LegendItem::new(theme.base, Mark::Bar, multiplier(1.0 - delta)),
        LegendItem::new(theme.deadline, Mark::Bar, multiplier(1.0 + delta)),
    ]
}

/// What the tornado plots: its rows, their metric and the axis's words for
/// the metric.
struct Drawn<'a> {
    rows: &'a [TornadoRow],
    metric: TornadoMetric,
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
    let &Drawn { rows, metric, what } = drawn;
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
    let last = (n - 1).max(1);
    // The top of a row's slot: the next slot's start, or the axis's top.
    let slot_top = |slot: i32| {
        if slot < last {
            SegmentValue::Exact(slot + 1)
        } else {
            SegmentValue::Last
        }
    };
    let label_style = ("sans-serif", font).into_font().color(&theme.ink);
    let longest = rows.iter().map(|r| r.label.len()).max().unwrap_or(8) as f64;
    let mut chart = ChartBuilder::on(root)
        .margin_top(10)
        .margin_right(18)
        .margin_left(8)
        .x_label_area_size(font * 3.2)
        .y_label_area_size(longest * font * 0.58 + 12.0)
        // Plotters' segmented 0..m has m + 1 segments, one a row (one row
        // takes two: plotters cannot map a range of one value).
        .build_cartesian_2d(-extent..extent, (0..last).into_segmented())
        .map_err(draw_error)?;
    let unit = match metric {
        TornadoMetric::CostPerSuccess => "%",
        TornadoMetric::MissProbability => "pp",
    };
    let labels: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    let x_ticks = if width < 500 { 5 } else { 9 };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(format!("{} ({unit})", axis_words(what, width)))
        .x_labels(x_ticks)
        .x_label_formatter(&|x| {
            let text = tick_label(*x, 2.0 * extent, x_ticks);
            if text.starts_with('-') || text == "0" {
                text
            } else {
                format!("+{text}")
            }
        })
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels
                .get((n - 1 - *i) as usize)
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        })
        .y_labels(rows.len() + 1)
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
        .map_err(draw_error)?;
    chart
        .draw_series(rows.iter().enumerate().map(|(index, row)| {
            let slot = n - 1 - index as i32;
            Rectangle::new(
                [
                    (0.0, SegmentValue::CenterOf(slot)),
                    (row.high, slot_top(slot)),
                ],
                high_color.mix(0.85).filled(),
            )
        }))
        .map_err(draw_error)?;
    // A row whose bars are too short to see says so, rather than look
    // missing: under half a percent of the axis is about a pixel.
    let note = ("sans-serif", font)
        .into_font()
        .color(&theme.muted)
        .pos(Pos::new(HPos::Left, VPos::Center));
    chart
        .draw_series(
            rows.iter()
                .enumerate()
                .filter(|(_, row)| row.drawn_length() < extent * 0.01)
                .map(|(index, _)| {
                    let slot = n - 1 - index as i32;
                    Text::new(
                        "no visible change",
                        (extent * 0.03, SegmentValue::CenterOf(slot)),
                        note.clone(),
                    )
                }),
        )
        .map_err(draw_error)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, SegmentValue::Exact(0)), (0.0, SegmentValue::Last)],
            theme.ink.stroke_width(1),
        )))
        .map_err(draw_error)?;
    Ok(())
}

//! The service curve from the capacity search: the binding target's value
//! against offered load on the smallest fleet meeting every target, with its
//! bound, today's load (1x), the SLA limit, the knee and the operating point
//! marked, goodput on the right axis, and under the legend what the
//! headroom means in words.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sojourn_engine::{CheckMetric, CurveTarget, ServiceCurve};

use super::legend::{LegendItem, Mark, draw_legend, draw_note, legend_height, note_height};
use super::{Area, Chart, DrawResult, Frame, Theme, Themed, draw_error, font_px, tick_label};
use crate::format::{counted, format_number};

pub const CURVE_TITLE: &str = "Service curve";

/// Y-axis labels the curve asks plotters for.
const Y_TICKS: usize = 8;

pub fn service_curve_chart(curve: &ServiceCurve, theme: &Theme, width: u32) -> Chart {
    let reading = curve_reading(curve);
    let name = format!(
        "{CURVE_TITLE}: {} against offered load on {} of {}",
        curve
            .target
            .as_ref()
            .map_or("goodput".to_string(), |t| format!(
                "{} and goodput",
                t.measure
            )),
        counted(curve.replicas.into(), "replica"),
        curve.candidate,
    );
    // Screen readers get the marks and the reading; file names the name.
    let title = format!(
        "{name}; {}. {reading}",
        marks(curve)
            .iter()
            .map(|m| m.text())
            .collect::<Vec<_>>()
            .join(", "),
    );
    let plot_height = plot_height(width);
    let legend = legend_items(curve, theme);
    let below = legend_height(&legend, width);
    let frame = Frame {
        name: CURVE_TITLE,
        title: &title,
        width,
        height: plot_height + (below + note_height(&reading, width)).max(reserved_below(width)),
        theme,
    };
    if curve.points.len() < 2 {
        return frame.empty("The service curve has fewer than two points.");
    }
    let chart = frame.draw(|root| {
        let (plot, rest) = root.split_vertically(plot_height);
        let (legend_area, note) = rest.split_vertically(below);
        draw(curve, theme, width, &plot)?;
        draw_legend(&legend_area, &legend, theme, width)?;
        draw_note(&note, &reading, theme, width)
    });
    Chart {
        title: name,
        ..chart
    }
}

/// The service curve's height \[px\] at `width` before it is known: the
/// plot and room for a legend and a reading of the usual length. The
/// placeholder holds this place and the curve takes at least as much, so
/// its sentence arriving with the plan moves nothing below the chart.
pub fn service_curve_height(width: u32) -> u32 {
    plot_height(width) + reserved_below(width)
}

fn plot_height(width: u32) -> u32 {
    super::chart_height(width, 0.52, 300)
}

/// Room \[px\] under the plot for the legend and the reading at their
/// longest usual length: a percentile target judged by its upper bound,
/// and the longest of the readings' sentences.
fn reserved_below(width: u32) -> u32 {
    let legend: Vec<LegendItem> = [
        "p90 TPOT of every class (mean)",
        "upper 95% bound (judged)",
        "bound 50 ms",
        "goodput, right axis",
        "offered, right axis",
    ]
    .into_iter()
    .map(|text| LegendItem::new(BLACK, Mark::Line(1), text))
    .collect();
    legend_height(&legend, width) + note_height(USUAL_LONGEST_READING, width)
}

/// A reading as long as [`curve_reading`]'s usually are at their longest.
const USUAL_LONGEST_READING: &str = "The p90 TPOT of every class stays within 50 ms at every \
    load tried on 12 replicas of H100 SXM5 80GB, up to 3x today's: traffic can grow at least \
    200%. The operating point, 1.13x, is the most load the plan puts on these replicas: 20% \
    below the knee at 1.41x, where extra load stops turning into goodput; it is below today's \
    load, so the plan adds replicas.";

/// What the curve says, in words: how far traffic can grow before the
/// binding target breaks on this fleet, and why the operating point is
/// where it is.
pub fn curve_reading(curve: &ServiceCurve) -> String {
    let fleet = format!(
        "{} of {}",
        counted(curve.replicas.into(), "replica"),
        curve.candidate
    );
    let growth = |load: f64| format!("{:.0}%", (load - 1.0) * 100.0);
    let headroom = match (&curve.target, curve.sla_limit_load) {
        (None, _) => String::new(),
        (Some(t), Some(limit)) if limit > 1.0 => format!(
            "Traffic can grow {} (to {}x today's load) before the {} exceeds {} on {fleet}. ",
            growth(limit),
            format_number(limit, 3),
            t.measure,
            t.bound
        ),
        (Some(t), Some(limit)) => format!(
            "The {} exceeds {} above {}x today's load on {fleet}: no room to grow. ",
            t.measure,
            t.bound,
            format_number(limit, 3)
        ),
        (Some(t), None) => {
            let last = curve.points.last().map_or(1.0, |p| p.load);
            format!(
                "The {} stays within {} at every load tried on {fleet}, up to {}x today's: traffic can grow at least {}. ",
                t.measure,
                t.bound,
                format_number(last, 3),
                growth(last)
            )
        }
    };
    format!(
        "{headroom}The operating point, {}x, is the most load the plan puts on these replicas: {}.",
        format_number(curve.operating_load, 3),
        operating_reason(curve)
    )
}

/// Why the operating point is where it is (see the engine's curve).
fn operating_reason(curve: &ServiceCurve) -> String {
    let op = curve.operating_load;
    let near = |x: f64| (x - op).abs() <= 1e-9 * op.abs().max(1.0);
    let reason = match (curve.sla_limit_load, curve.knee_load) {
        (Some(limit), _) if near(limit) => {
            "the SLA limit, where a target starts to fail".to_string()
        }
        (_, Some(knee)) => format!(
            "{:.0}% below the knee at {}x, where extra load stops turning into goodput",
            curve.headroom_fraction * 100.0,
            format_number(knee, 3)
        ),
        _ => "the highest load tried".to_string(),
    };
    if op < 1.0 {
        format!("{reason}; it is below today's load, so the plan adds replicas")
    } else {
        reason
    }
}

/// A vertical line at a load, with its words.
struct LoadMark {
    label: &'static str,
    load: f64,
    color: fn(&Theme) -> RGBColor,
}

impl LoadMark {
    fn text(&self) -> String {
        format!("{} {}x", self.label, format_number(self.load, 3))
    }
}

/// Today's load, the SLA limit, the knee and the operating point, of those
/// the curve has.
fn marks(curve: &ServiceCurve) -> Vec<LoadMark> {
    let all = [
        (
            "today",
            Some(1.0),
            (|t: &Theme| t.ink) as fn(&Theme) -> RGBColor,
        ),
        ("SLA limit", curve.sla_limit_load, |t| t.worst),
        ("knee", curve.knee_load, |t| t.muted),
        ("operating point", Some(curve.operating_load), |t| {
            t.deadline
        }),
    ];
    all.into_iter()
        .filter_map(|(label, load, color)| {
            let load = load.filter(|l| l.is_finite() && *l > 0.0)?;
            Some(LoadMark { label, load, color })
        })
        .collect()
}

fn legend_items(curve: &ServiceCurve, theme: &Theme) -> Vec<LegendItem> {
    let mut items = Vec::new();
    if let Some(target) = &curve.target {
        items.push(LegendItem::new(
            theme.base,
            Mark::Line(3),
            format!("{} (mean)", target.measure),
        ));
        if judged_above_mean(curve) {
            items.push(LegendItem::new(
                theme.base,
                Mark::Dashed,
                "upper 95% bound (judged)",
            ));
        }
        items.push(LegendItem::new(
            theme.worst,
            Mark::Dashed,
            format!("bound {}", target.bound),
        ));
    }
    items.push(LegendItem::new(
        theme.muted,
        Mark::Line(1),
        "goodput, right axis",
    ));
    items.push(LegendItem::new(
        theme.offered,
        Mark::Dashed,
        "offered, right axis",
    ));
    items
}

/// Whether the judged value differs from the mean anywhere (under the
/// `mean` decision rule they are the same line).
fn judged_above_mean(curve: &ServiceCurve) -> bool {
    curve
        .points
        .iter()
        .any(|p| p.target_mean.is_some() && p.target_upper != p.target_mean)
}

/// How the target's values are shown: the unit's words and the factor from
/// the engine's unit (seconds, probabilities, fractions).
fn display_unit(target: &CurveTarget) -> (&'static str, f64) {
    match target.metric {
        CheckMetric::MissProbability | CheckMetric::OfferedLoad => ("%", 100.0),
        _ if target.threshold < 1.0 => ("ms", 1e3),
        _ if target.threshold < 120.0 => ("s", 1.0),
        _ if target.threshold < 7200.0 => ("min", 1.0 / 60.0),
        _ => ("h", 1.0 / 3600.0),
    }
}

fn draw(curve: &ServiceCurve, theme: &Theme, width: u32, root: &Area) -> DrawResult<()> {
    let font = font_px(width);
    let max_load = curve.points.iter().map(|p| p.load).fold(1.0f64, f64::max) * 1.05;
    let max_rate = curve
        .points
        .iter()
        .map(|p| p.offered_per_s.max(p.goodput_per_s))
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 1.1;
    let (unit, factor) = curve.target.as_ref().map_or(("", 1.0), display_unit);
    let threshold = curve.target.as_ref().map_or(1.0, |t| t.threshold * factor);
    // Up to three times the bound, so that the bound stays readable when
    // overload sends the value far beyond it; higher values sit on the top.
    let top = curve
        .points
        .iter()
        .flat_map(|p| [p.target_mean, p.target_upper])
        .flatten()
        .filter(|v| v.is_finite())
        .map(|v| (v * factor).min(3.0 * threshold))
        .fold(threshold, f64::max)
        * 1.15;
    let label_style = ("sans-serif", font).into_font().color(&theme.ink);
    let mut chart = ChartBuilder::on(root)
        .margin_top(14)
        .margin_right(8)
        .margin_left(8)
        .margin_bottom(8)
        .x_label_area_size(font * 3.2)
        .y_label_area_size(font * 4.6)
        .right_y_label_area_size(font * 4.6)
        .build_cartesian_2d(0.0..max_load, 0.0..top)
        .map_err(draw_error)?
        .set_secondary_coord(0.0..max_load, 0.0..max_rate);
    let x_ticks = if width < 500 { 5 } else { 10 };
    let y_desc = match &curve.target {
        Some(t) => format!("{} ({unit})", t.measure),
        None => "no target".to_string(),
    };
    chart
        .configure_mesh()
        .x_desc("Offered load (multiple of today's arrival rate)")
        .y_desc(y_desc)
        .x_labels(x_ticks)
        .y_labels(Y_TICKS)
        .x_label_formatter(&|x| format!("{}x", tick_label(*x, max_load, x_ticks)))
        .y_label_formatter(&|y| tick_label(*y, top, Y_TICKS))
        .themed(theme, &label_style)
        .draw()
        .map_err(draw_error)?;
    chart
        .configure_secondary_axes()
        .y_desc("Requests per second")
        .y_labels(Y_TICKS)
        .y_label_formatter(&|y| tick_label(*y, max_rate, Y_TICKS))
        .label_style(label_style.clone())
        .axis_desc_style(label_style.clone())
        .axis_style(theme.muted)
        .draw()
        .map_err(draw_error)?;

    for (index, mark) in marks(curve).iter().enumerate() {
        let color = (mark.color)(theme);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(mark.load, 0.0), (mark.load, top)],
                6,
                4,
                color.stroke_width(2),
            ))
            .map_err(draw_error)?;
        // Labels on the right half go left of their line, so they stay inside.
        let right_half = mark.load > max_load * 0.55;
        let (anchor, x) = if right_half {
            (HPos::Right, mark.load - max_load * 0.01)
        } else {
            (HPos::Left, mark.load + max_load * 0.01)
        };
        let style = ("sans-serif", font)
            .into_font()
            .color(&color)
            .pos(Pos::new(anchor, VPos::Top));
        chart
            .draw_series(std::iter::once(Text::new(
                mark.text(),
                (x, top * (0.98 - 0.07 * index as f64)),
                style,
            )))
            .map_err(draw_error)?;
    }

    let rate_line = |value: fn(&sojourn_engine::CurvePoint) -> f64| -> Vec<(f64, f64)> {
        curve.points.iter().map(|p| (p.load, value(p))).collect()
    };
    chart
        .draw_secondary_series(DashedLineSeries::new(
            rate_line(|p| p.offered_per_s),
            4,
            4,
            theme.offered.stroke_width(2),
        ))
        .map_err(draw_error)?;
    chart
        .draw_secondary_series(LineSeries::new(
            rate_line(|p| p.goodput_per_s),
            theme.muted.stroke_width(1),
        ))
        .map_err(draw_error)?;
    if curve.target.is_none() {
        return Ok(());
    }
    // Values beyond the top (or infinite: never reached) sit on it.
    let target_line = |value: fn(&sojourn_engine::CurvePoint) -> Option<f64>| -> Vec<(f64, f64)> {
        curve
            .points
            .iter()
            .filter_map(|p| Some((p.load, (value(p)? * factor).min(top))))
            .collect()
    };
    chart
        .draw_series(DashedLineSeries::new(
            vec![(0.0, threshold), (max_load, threshold)],
            8,
            4,
            theme.worst.stroke_width(2),
        ))
        .map_err(draw_error)?;
    if judged_above_mean(curve) {
        chart
            .draw_series(DashedLineSeries::new(
                target_line(|p| p.target_upper),
                5,
                3,
                theme.base.stroke_width(1),
            ))
            .map_err(draw_error)?;
    }
    let mean = target_line(|p| p.target_mean);
    chart
        .draw_series(LineSeries::new(mean.clone(), theme.base.stroke_width(3)))
        .map_err(draw_error)?;
    chart
        .draw_series(mean.iter().map(|p| Circle::new(*p, 4, theme.base.filled())))
        .map_err(draw_error)?;
    Ok(())
}

//! The sojourn-time CDF: fraction of requests done within t, on a log time
//! axis, with each class deadline drawn as a dashed line and p50/p99 marked,
//! and the curves named in a legend under the plot (boxed inside it, on a
//! phone it hid the curves' lower half).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::legend::{LegendItem, Mark, draw_legend, legend_height, text_px};
use super::{
    Area, Chart, DrawResult, Frame, Theme, Themed, draw_error, font_px, time_tick_label, time_ticks,
};

/// Which curve a line is, for its colour and weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveKind {
    Base,
    Best,
    Worst,
    /// A request class (its index).
    Class(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub struct CdfCurve {
    pub label: String,
    pub kind: CurveKind,
    /// (sojourn \[s\], fraction done within it), ascending in time.
    pub points: Vec<[f64; 2]>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CdfInput {
    pub curves: Vec<CdfCurve>,
    /// (label, deadline \[s\]) for each distinct class deadline.
    pub deadlines: Vec<(String, f64)>,
    /// (label, time \[s\], fraction) points marked on the base curve.
    pub markers: Vec<(String, f64, f64)>,
}

/// The chart's title (also its accessible name).
pub const CDF_TITLE: &str = "Sojourn-time CDF";

/// Draws the CDF; `width` x `width / 2` CSS pixels.
pub fn cdf_chart(input: &CdfInput, theme: &Theme, width: u32) -> Chart {
    let title = title(input);
    let plot_height = super::chart_height(width, 0.52, 300);
    let legend: Vec<LegendItem> = ordered(input)
        .into_iter()
        .map(|curve| {
            let (color, line) = style(curve.kind, theme);
            LegendItem::new(color, Mark::Line(line), curve.label.clone())
        })
        .collect();
    let frame = Frame {
        name: CDF_TITLE,
        title: &title,
        width,
        height: plot_height + legend_height(&legend, width),
        theme,
    };
    if input.curves.iter().all(|c| c.points.is_empty()) {
        return frame.empty("No request completed: nothing to draw.");
    }
    frame.draw(|root| {
        let (plot, below) = root.split_vertically(plot_height);
        draw(input, theme, width, &plot)?;
        draw_legend(&below, &legend, theme, width)
    })
}

/// The curves in drawing order: the base last, so it sits on top.
fn ordered(input: &CdfInput) -> Vec<&CdfCurve> {
    let mut ordered: Vec<&CdfCurve> = input.curves.iter().collect();
    ordered.sort_by_key(|c| matches!(c.kind, CurveKind::Base));
    ordered
}

/// A curve's colour and line width.
fn style(kind: CurveKind, theme: &Theme) -> (RGBColor, u32) {
    match kind {
        CurveKind::Base => (theme.base, 3),
        CurveKind::Best => (theme.best, 2),
        CurveKind::Worst => (theme.worst, 2),
        CurveKind::Class(i) => (theme.class_color(i), 2),
    }
}

fn title(input: &CdfInput) -> String {
    let deadlines: Vec<String> = input
        .deadlines
        .iter()
        .map(|(label, d)| format!("{label} {}", crate::format::format_duration_s(*d)))
        .collect();
    format!("{CDF_TITLE}; deadlines: {}", deadlines.join(", "))
}

fn range(input: &CdfInput) -> (f64, f64) {
    let times = input
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p[0]))
        .filter(|t| t.is_finite() && *t > 0.0);
    let (low, high) = times.fold((f64::INFINITY, 0.0f64), |(lo, hi), t| {
        (lo.min(t), hi.max(t))
    });
    let high = input.deadlines.iter().map(|(_, d)| *d).fold(high, f64::max);
    let low = if low.is_finite() { low } else { 1.0 };
    let low = 10f64.powf(low.log10().floor()).max(1e-3);
    let high = 10f64.powf((high * 1.2).log10().ceil()).max(low * 100.0);
    (low, high)
}

fn draw(input: &CdfInput, theme: &Theme, width: u32, root: &Area) -> DrawResult<()> {
    let font = font_px(width);
    let (low, high) = range(input);
    let mut ticks = time_ticks(low, high);
    if width < 500 {
        // Every other tick, so the labels do not collide.
        ticks = ticks.into_iter().step_by(2).collect();
    }
    let mut chart = ChartBuilder::on(root)
        .margin_top(14)
        .margin_right(18)
        .margin_left(8)
        .margin_bottom(8)
        .x_label_area_size(font * 3.2)
        .y_label_area_size(font * 4.2)
        .build_cartesian_2d((low..high).log_scale().with_key_points(ticks), 0.0..1.02)
        .map_err(draw_error)?;
    let label_style = ("sans-serif", font).into_font().color(&theme.ink);
    chart
        .configure_mesh()
        .x_desc("Sojourn time (queue + service), log scale")
        .y_desc("Requests done within")
        .x_label_formatter(&|t| time_tick_label(*t))
        .y_label_formatter(&|f| format!("{:.0} %", f * 100.0))
        .y_labels(6)
        .themed(theme, &label_style)
        .draw()
        .map_err(draw_error)?;

    for (index, (label, deadline)) in input.deadlines.iter().enumerate() {
        let color = theme.deadline;
        chart
            .draw_series(DashedLineSeries::new(
                vec![(*deadline, 0.0), (*deadline, 1.02)],
                7,
                4,
                color.stroke_width(2),
            ))
            .map_err(draw_error)?;
        // Low down, right of its line where it fits: every curve is
        // higher there than at the deadline, so the label crosses none
        // (at the top it ran over the curves and the p99 mark). Else left
        // of it, where low down only the curves' start could be.
        let y = 0.05 + 0.08 * index as f64;
        let text = format!("{label} {}", crate::format::format_duration_s(*deadline));
        let line_px = f64::from(chart.backend_coord(&(*deadline, y)).0);
        let right_px = f64::from(chart.plotting_area().get_pixel_range().0.end);
        let (anchor, x) = if line_px + 6.0 + text_px(&text, font) <= right_px {
            (HPos::Left, *deadline * 1.08)
        } else {
            (HPos::Right, *deadline / 1.08)
        };
        // Over another deadline's line (a phone's narrow plot), a box of
        // the background keeps the words legible.
        let (x_px, y_px) = chart.backend_coord(&(x, y));
        let width = text_px(&text, font);
        let left = match anchor {
            HPos::Left => f64::from(x_px),
            _ => f64::from(x_px) - width,
        };
        let h = (font * 1.25).ceil() as i32;
        halo(root, theme, left, width, y_px - h / 2, h)?;
        let style = ("sans-serif", font)
            .into_font()
            .color(&color)
            .pos(Pos::new(anchor, VPos::Center));
        chart
            .draw_series(std::iter::once(Text::new(text, (x, y), style)))
            .map_err(draw_error)?;
    }

    for curve in ordered(input) {
        let (color, width) = style(curve.kind, theme);
        let points: Vec<(f64, f64)> = curve
            .points
            .iter()
            .filter(|p| p[0] > 0.0 && p[0].is_finite())
            .map(|p| (p[0].max(low), p[1]))
            .collect();
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(width)))
            .map_err(draw_error)?;
    }

    // Each mark's label sits below and right of it, where its own curve
    // (rising to the right) is not, and moves past a deadline's line it
    // would cross (to the left of the mark when the right runs out of the
    // plot), with a leader line back to its mark;
    // a box of the background behind it keeps other curves from running
    // through its words.
    let deadlines_px: Vec<f64> = input
        .deadlines
        .iter()
        .map(|(_, d)| f64::from(chart.backend_coord(&(*d, 0.0)).0))
        .collect();
    let plot_x = chart.plotting_area().get_pixel_range().0;
    let plot_x = (f64::from(plot_x.start), f64::from(plot_x.end));
    for (label, t, f) in &input.markers {
        if !(t.is_finite() && *t > 0.0) {
            continue;
        }
        chart
            .draw_series([Circle::new((*t, *f), 4, theme.ink.filled())])
            .map_err(draw_error)?;
        let text = format!("{label} {}", crate::format::format_duration_s(*t));
        let width = text_px(&text, font);
        let (mark_x, _) = chart.backend_coord(&(*t, *f));
        let (_, y) = chart.backend_coord(&(*t, (*f - 0.03).max(0.02)));
        let mark = f64::from(mark_x);
        let left = label_left(mark, width, &deadlines_px, plot_x);
        let (x, w, h) = (
            left.round() as i32,
            width.ceil() as i32,
            (font * 1.25).ceil() as i32,
        );
        if [mark + LABEL_GAP, mark - LABEL_GAP - width]
            .iter()
            .all(|beside| (left - beside).abs() > 1.0)
        {
            // Moved off its mark: a leader line says whose label it is.
            let end = if left > mark { x - 3 } else { x + w + 3 };
            root.draw(&PathElement::new(
                vec![(mark_x, y - 2), (end, y + h / 2)],
                theme.ink.mix(0.6).stroke_width(1),
            ))
            .map_err(draw_error)?;
        }
        halo(root, theme, left, width, y - 1, h + 1)?;
        let style = ("sans-serif", font)
            .into_font()
            .color(&theme.ink)
            .pos(Pos::new(HPos::Left, VPos::Top));
        root.draw(&Text::new(text, (x, y), style))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// A box of the background, a little wider than a label of `width` \[px\]
/// starting at `left`, from `top` down `height` \[px\], for the label to
/// sit on.
fn halo(
    root: &Area,
    theme: &Theme,
    left: f64,
    width: f64,
    top: i32,
    height: i32,
) -> DrawResult<()> {
    let (x0, x1) = (
        (left - 3.0).floor() as i32,
        (left + width + 3.0).ceil() as i32,
    );
    root.draw(&Rectangle::new(
        [(x0, top), (x1, top + height)],
        theme.background.mix(0.85).filled(),
    ))
    .map_err(draw_error)
}

/// Between a mark and its label \[px\].
const LABEL_GAP: f64 = 8.0;

/// Where a mark's label of `width` \[px\] starts: right of the mark at
/// `mark` \[px\], moved right past every deadline line (at `lines` \[px\])
/// it would cross; when that runs past the plot's right edge (`plot.1`),
/// left of the mark, moved left past the lines the same way; when that runs
/// past the left edge too, just left of the mark.
fn label_left(mark: f64, width: f64, lines: &[f64], plot: (f64, f64)) -> f64 {
    const CLEAR: f64 = 4.0;
    let crossed = |left: f64| {
        lines
            .iter()
            .copied()
            .filter(move |line| *line >= left - CLEAR && *line <= left + width + CLEAR)
    };
    // Each move passes the furthest line crossed, so these end.
    let mut right = mark + LABEL_GAP;
    while let Some(line) = crossed(right).reduce(f64::max) {
        right = line + CLEAR + 2.0;
    }
    if right + width <= plot.1 {
        return right;
    }
    let mut left = mark - LABEL_GAP - width;
    while let Some(line) = crossed(left).reduce(f64::min) {
        left = line - CLEAR - 2.0 - width;
    }
    if left >= plot.0 {
        left
    } else {
        mark - LABEL_GAP - width
    }
}

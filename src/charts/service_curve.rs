//! The service curve from the capacity search: goodput and P(miss) against
//! offered load on the planned fleet, with the knee, the SLA limit and the
//! recommended operating point; the legend is under the axes.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sojourn_engine::ServiceCurve;

use super::legend::{LegendItem, Mark, draw_legend, legend_height};
use super::{Area, Chart, DrawResult, Frame, Theme, Themed, draw_error, font_px};

pub const CURVE_TITLE: &str = "Service curve: goodput and P(miss) against offered load";

pub fn service_curve_chart(curve: &ServiceCurve, theme: &Theme, width: u32) -> Chart {
    let title = format!(
        "{CURVE_TITLE} on {} replicas of {}; operating point {}x the base load",
        curve.replicas,
        curve.candidate,
        crate::format::format_number(curve.operating_load, 3)
    );
    let plot_height = super::chart_height(width, 0.52, 300);
    let legend = [
        LegendItem::new(theme.muted, Mark::Dashed, "offered"),
        LegendItem::new(theme.base, Mark::Line(3), "goodput (met deadline)"),
        LegendItem::new(theme.worst, Mark::Line(2), "P(miss), right axis"),
    ];
    let frame = Frame {
        name: CURVE_TITLE,
        title: &title,
        width,
        height: plot_height + legend_height(&legend, width),
        theme,
    };
    if curve.points.len() < 2 {
        return frame.empty("The service curve has fewer than two points.");
    }
    frame.draw(|root| {
        let (plot, below) = root.split_vertically(plot_height);
        draw(curve, theme, width, &plot)?;
        draw_legend(&below, &legend, theme, width)
    })
}

fn draw(curve: &ServiceCurve, theme: &Theme, width: u32, root: &Area) -> DrawResult<()> {
    let font = font_px(width);
    let max_load = curve.points.iter().map(|p| p.load).fold(0.0f64, f64::max) * 1.05;
    let max_rate = curve
        .points
        .iter()
        .map(|p| p.offered_per_s.max(p.goodput_per_s))
        .fold(0.0f64, f64::max)
        * 1.1;
    let max_miss = curve
        .points
        .iter()
        .map(|p| p.p_miss)
        .filter(|p| p.is_finite())
        .fold(0.0f64, f64::max)
        .max(0.01)
        * 110.0;
    let label_style = ("sans-serif", font).into_font().color(&theme.ink);
    let mut chart = ChartBuilder::on(root)
        .margin_top(14)
        .margin_right(8)
        .margin_left(8)
        .margin_bottom(8)
        .x_label_area_size(font * 3.2)
        .y_label_area_size(font * 4.6)
        .right_y_label_area_size(font * 4.6)
        .build_cartesian_2d(0.0..max_load, 0.0..max_rate.max(1e-6))
        .map_err(draw_error)?
        .set_secondary_coord(0.0..max_load, 0.0..max_miss);
    chart
        .configure_mesh()
        .x_desc("Offered load (multiple of the base arrival rate)")
        .y_desc("Requests per second")
        .x_labels(if width < 500 { 5 } else { 10 })
        .x_label_formatter(&|x| format!("{}x", crate::format::format_number(*x, 2)))
        .y_label_formatter(&|y| crate::format::format_number(*y, 3))
        .themed(theme, &label_style)
        .draw()
        .map_err(draw_error)?;
    chart
        .configure_secondary_axes()
        .y_desc("P(miss)")
        .y_label_formatter(&|y| format!("{} %", crate::format::format_number(*y, 2)))
        .label_style(label_style.clone())
        .axis_desc_style(label_style.clone())
        .axis_style(theme.muted)
        .draw()
        .map_err(draw_error)?;

    let marks = [
        ("knee", curve.knee_load, theme.muted),
        ("SLA limit", curve.sla_limit_load, theme.worst),
        (
            "operating point",
            Some(curve.operating_load),
            theme.deadline,
        ),
    ];
    for (index, (label, load, color)) in marks.into_iter().enumerate() {
        let Some(load) = load.filter(|l| l.is_finite() && *l > 0.0) else {
            continue;
        };
        chart
            .draw_series(DashedLineSeries::new(
                vec![(load, 0.0), (load, max_rate)],
                6,
                4,
                color.stroke_width(2),
            ))
            .map_err(draw_error)?;
        // Labels on the right half go left of their line, so they stay inside.
        let right_half = load > max_load * 0.55;
        let (anchor, x) = if right_half {
            (HPos::Right, load - max_load * 0.01)
        } else {
            (HPos::Left, load + max_load * 0.01)
        };
        let style = ("sans-serif", font)
            .into_font()
            .color(&color)
            .pos(Pos::new(anchor, VPos::Top));
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{label} {}x", crate::format::format_number(load, 3)),
                (x, max_rate * (0.98 - 0.07 * index as f64)),
                style,
            )))
            .map_err(draw_error)?;
    }

    let offered: Vec<(f64, f64)> = curve
        .points
        .iter()
        .map(|p| (p.load, p.offered_per_s))
        .collect();
    chart
        .draw_series(DashedLineSeries::new(
            offered,
            4,
            4,
            theme.muted.stroke_width(1),
        ))
        .map_err(draw_error)?;
    let goodput: Vec<(f64, f64)> = curve
        .points
        .iter()
        .map(|p| (p.load, p.goodput_per_s))
        .collect();
    let base = theme.base;
    chart
        .draw_series(LineSeries::new(goodput.clone(), base.stroke_width(3)))
        .map_err(draw_error)?;
    chart
        .draw_series(goodput.iter().map(|p| Circle::new(*p, 4, base.filled())))
        .map_err(draw_error)?;
    let worst = theme.worst;
    let miss: Vec<(f64, f64)> = curve
        .points
        .iter()
        .filter(|p| p.p_miss.is_finite())
        .map(|p| (p.load, p.p_miss * 100.0))
        .collect();
    chart
        .draw_secondary_series(LineSeries::new(miss, worst.stroke_width(2)))
        .map_err(draw_error)?;
    Ok(())
}

//! The fleet over time: waiting queue, running batch, KV-cache utilization
//! and replicas, four panels sharing the time axis.

use plotters::prelude::*;
use sojourn_engine::SeriesPoint;

use super::{Area, Chart, DrawResult, Frame, Theme, Themed, draw_error, font_px};

pub const SERIES_TITLE: &str = "Fleet over time: waiting, running, KV cache, replicas";

/// Draws the four panels; `width` wide.
pub fn series_chart(series: &[SeriesPoint], theme: &Theme, width: u32) -> Chart {
    let frame = Frame {
        name: SERIES_TITLE,
        title: SERIES_TITLE,
        width,
        height: super::chart_height(width, 0.75, 520),
        theme,
    };
    if series.len() < 2 {
        return frame.empty("The run is shorter than two series intervals.");
    }
    frame.draw(|root| draw(series, theme, width, root))
}

/// One panel: its title, the value it plots, its colour, whether in percent.
type Panel<'a> = (&'a str, Box<dyn Fn(&SeriesPoint) -> f64>, RGBColor, bool);

fn draw(series: &[SeriesPoint], theme: &Theme, width: u32, root: &Area) -> DrawResult<()> {
    let font = font_px(width);
    let end_h = series.last().map_or(1.0, |p| p.t_s / 3600.0).max(1e-3);
    let panels: [Panel; 4] = [
        (
            "Waiting requests",
            Box::new(|p| p.waiting as f64),
            theme.worst,
            false,
        ),
        (
            "Running sequences",
            Box::new(|p| p.running as f64),
            theme.base,
            false,
        ),
        (
            "KV cache used",
            Box::new(|p| p.kv_utilization * 100.0),
            theme.class_color(0),
            true,
        ),
        (
            "Replicas",
            Box::new(|p| p.replicas as f64),
            theme.best,
            false,
        ),
    ];
    let areas = root.split_evenly((4, 1));
    let label_style = ("sans-serif", font).into_font().color(&theme.ink);
    for (index, (area, (name, value, color, percent))) in areas.iter().zip(panels).enumerate() {
        let last = index == 3;
        let top = series.iter().map(&value).fold(0.0f64, f64::max);
        let top = if percent { 100.0 } else { (top * 1.1).max(1.0) };
        let mut chart = ChartBuilder::on(area)
            .margin_top(10)
            .margin_right(18)
            .margin_left(8)
            .caption(name, label_style.clone())
            .x_label_area_size(if last { font * 3.2 } else { font * 0.6 })
            .y_label_area_size(font * 4.2)
            .build_cartesian_2d(0.0..end_h, 0.0..top)
            .map_err(draw_error)?;
        let y_format = |v: &f64| {
            if percent {
                format!("{v:.0} %")
            } else {
                crate::format::format_number(*v, 3)
            }
        };
        let x_format = |h: &f64| format!("{} h", crate::format::format_number(*h, 3));
        let blank = |_: &f64| String::new();
        let mut mesh = chart.configure_mesh();
        mesh.y_labels(3)
            .x_labels(if width < 500 { 5 } else { 10 })
            .themed(theme, &label_style)
            .y_label_formatter(&y_format);
        if last {
            mesh.x_desc("Simulated time").x_label_formatter(&x_format);
        } else {
            mesh.x_label_formatter(&blank);
        }
        mesh.draw().map_err(draw_error)?;
        chart
            .draw_series(
                AreaSeries::new(
                    series.iter().map(|p| (p.t_s / 3600.0, value(p))),
                    0.0,
                    color.mix(0.18),
                )
                .border_style(color.stroke_width(2)),
            )
            .map_err(draw_error)?;
    }
    Ok(())
}

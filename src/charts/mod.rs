//! Charts as SVG strings, drawn with plotters' SVG backend: crisp at any
//! pixel density, printable, exportable, and testable natively (a test can
//! read the SVG). Colours come from a [`Theme`], so text stays readable in
//! dark mode; the page redraws when the system colour scheme changes.

mod cdf;
mod export;
mod legend;
mod lengths;
mod pareto;
mod preview;
mod series;
mod service_curve;
mod tornado;

pub use cdf::{CdfCurve, CdfInput, CurveKind, cdf_chart};
pub use export::titled_svg;
pub use lengths::{LENGTHS_TITLE, LengthGrid, length_grid, lengths_chart, log_correlation};
pub use pareto::{PARETO_TITLE, ParetoInput, ParetoPoint, pareto_chart, pareto_height};
pub use preview::{histogram_preview, profile_preview};
pub use series::series_chart;
pub use service_curve::{curve_reading, service_curve_chart, service_curve_height};
pub use tornado::{
    TornadoMetric, TornadoRow, sort_by_drawn_length, tornado_chart, tornado_height, tornado_rows,
};

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::{DrawingArea, DrawingBackend, IntoDrawingArea, SVGBackend};
use plotters::style::{RGBColor, TextStyle};

/// A chart ready to show: its SVG, its size in CSS pixels, and a title that
/// names it for screen readers and file names.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub svg: String,
    pub width: u32,
    pub height: u32,
    pub title: String,
}

/// Chart colours for a light or dark page.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Theme {
    pub dark: bool,
    pub background: RGBColor,
    pub ink: RGBColor,
    pub muted: RGBColor,
    pub grid: RGBColor,
    pub grid_light: RGBColor,
    pub base: RGBColor,
    pub best: RGBColor,
    pub worst: RGBColor,
    pub deadline: RGBColor,
    /// The offered load on the service curve: apart from every other mark
    /// there, and at least 3:1 against the background (WCAG for graphics).
    pub offered: RGBColor,
    /// Per-class curves, in class order (repeats after the last).
    pub classes: [RGBColor; 6],
}

impl Theme {
    pub const LIGHT: Theme = Theme {
        dark: false,
        background: rgb(0xffffff),
        ink: rgb(0x1b1f24),
        muted: rgb(0x57606a),
        grid: rgb(0xd0d7de),
        grid_light: rgb(0xeef1f4),
        base: rgb(0x1f5fc8),
        best: rgb(0x1a7f37),
        worst: rgb(0xc0212b),
        deadline: rgb(0x9a5600),
        offered: rgb(0x0a7e8c),
        classes: [
            rgb(0x6f42c1),
            rgb(0x0a7e8c),
            rgb(0xbf3989),
            rgb(0x57606a),
            rgb(0x956a00),
            rgb(0x2f6f3e),
        ],
    };

    pub const DARK: Theme = Theme {
        dark: true,
        background: rgb(0x161b22),
        ink: rgb(0xe6edf3),
        muted: rgb(0x9da7b3),
        grid: rgb(0x3d444d),
        grid_light: rgb(0x262c36),
        base: rgb(0x6cb6ff),
        best: rgb(0x56d364),
        worst: rgb(0xff7b72),
        deadline: rgb(0xe3b341),
        offered: rgb(0x39c5cf),
        classes: [
            rgb(0xbc8cff),
            rgb(0x39c5cf),
            rgb(0xf778ba),
            rgb(0xb1bac4),
            rgb(0xe3b341),
            rgb(0x7ee787),
        ],
    };

    pub fn of(dark: bool) -> Theme {
        if dark { Theme::DARK } else { Theme::LIGHT }
    }

    pub fn class_color(&self, index: usize) -> RGBColor {
        self.classes[index % self.classes.len()]
    }
}

/// A colour written as in CSS: `rgb(0x1f5fc8)` is #1f5fc8.
const fn rgb(hex: u32) -> RGBColor {
    RGBColor((hex >> 16) as u8, (hex >> 8) as u8, hex as u8)
}

/// The CSS form of a colour ("#1f5fc8"), for hand-made SVG.
pub fn hex(color: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", color.0, color.1, color.2)
}

/// Logical chart width \[CSS px\] for a window `window_width` wide: charts are
/// drawn at about the size they are shown (the results column, see
/// `style/main.css`), so their text stays legible.
pub fn chart_width(window_width: f64) -> u32 {
    let column = if window_width >= 1000.0 {
        // Page padding, the inputs column (34rem) and the gap.
        window_width - 40.0 - 510.0 - 16.0
    } else {
        window_width - 30.0
    };
    // Less the figure's padding and border.
    (column - 30.0).clamp(300.0, 960.0) as u32
}

/// A chart's height \[px\]: `ratio` of its width, but at least `min`, so
/// narrow charts stay readable.
pub fn chart_height(width: u32, ratio: f64, min: u32) -> u32 {
    ((width as f64 * ratio).round() as u32).max(min)
}

/// Font size \[px\] for chart text at `width`.
fn font_px(width: u32) -> f64 {
    if width < 500 { 12.0 } else { 13.0 }
}

/// Adds accessibility to a plotters SVG: `role="img"` and a `<title>`.
fn finish(svg: String, title: &str, width: u32, height: u32) -> Chart {
    let escaped = escape(title);
    let svg = match svg.find('>') {
        Some(end) if svg.starts_with("<svg") => format!(
            "{} role=\"img\" aria-label=\"{escaped}\"><title>{escaped}</title>{}",
            &svg[..end],
            &svg[end + 1..]
        ),
        _ => svg,
    };
    Chart {
        svg,
        width,
        height,
        title: title.to_string(),
    }
}

/// A chart's box holding a sentence instead (a placeholder while results
/// come, or a finished state with nothing to draw), named by the sentence
/// for screen readers and by `title` for file names.
pub fn message_chart(title: &str, message: &str, theme: &Theme, width: u32, height: u32) -> Chart {
    let chart = finish(
        message_svg(message, theme, width, height),
        message,
        width,
        height,
    );
    Chart {
        title: title.to_string(),
        ..chart
    }
}

/// Font size \[px\] of a message in a chart's box.
const MESSAGE_FONT_PX: f64 = 14.0;

/// An SVG of `width` x `height` with `message` in its middle, wrapped to
/// its width (on a phone a long one ran off both sides).
fn message_svg(message: &str, theme: &Theme, width: u32, height: u32) -> String {
    let lines = legend::wrap(message, f64::from(width) - 24.0, MESSAGE_FONT_PX);
    // The block centred: the first line up half the block's extra lines.
    let lead = -0.6 * lines.len().saturating_sub(1) as f64;
    let spans: String = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let dy = if i == 0 { lead } else { 1.2 };
            format!("<tspan x=\"50%\" dy=\"{dy}em\">{}</tspan>", escape(line))
        })
        .collect();
    format!(
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" xmlns=\"http://www.w3.org/2000/svg\">\
         <rect width=\"100%\" height=\"100%\" fill=\"{bg}\"/>\
         <text x=\"50%\" y=\"50%\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"{MESSAGE_FONT_PX}\" fill=\"{ink}\">{spans}</text></svg>",
        bg = hex(theme.background),
        ink = hex(theme.muted),
    )
}

/// Escapes text for SVG/XML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Where a chart is drawn: plotters' SVG backend, writing into a string.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A chart to draw: its name (what a chart that cannot be drawn is
/// called), its full title, its size \[px\] and its colours.
struct Frame<'a> {
    name: &'a str,
    title: &'a str,
    width: u32,
    height: u32,
    theme: &'a Theme,
}

impl Frame<'_> {
    /// A chart that says why there is nothing to draw.
    fn empty(&self, message: &str) -> Chart {
        let svg = message_svg(message, self.theme, self.width, self.height);
        finish(svg, self.name, self.width, self.height)
    }

    /// The chart `draw` draws on the theme's background, or one that says
    /// why it could not be drawn.
    fn draw(&self, draw: impl FnOnce(&Area) -> DrawResult<()>) -> Chart {
        let mut svg = String::new();
        let drawn = {
            let root =
                SVGBackend::with_string(&mut svg, (self.width, self.height)).into_drawing_area();
            root.fill(&self.theme.background)
                .map_err(draw_error)
                .and_then(|()| draw(&root))
                .and_then(|()| root.present().map_err(draw_error))
        };
        match drawn {
            Ok(()) => finish(svg, self.title, self.width, self.height),
            Err(error) => self.empty(&format!("The chart could not be drawn: {error}")),
        }
    }
}

/// The theme's grid and axis colours, and `text` for every label of a mesh.
trait Themed<'b> {
    fn themed(&mut self, theme: &Theme, text: &TextStyle<'b>) -> &mut Self;
}

impl<'b, X: Ranged, Y: Ranged, DB: DrawingBackend> Themed<'b> for MeshStyle<'_, 'b, X, Y, DB> {
    fn themed(&mut self, theme: &Theme, text: &TextStyle<'b>) -> &mut Self {
        self.label_style(text.clone())
            .axis_desc_style(text.clone())
            .bold_line_style(theme.grid)
            .light_line_style(theme.grid_light)
            .axis_style(theme.muted)
    }
}

/// A tick label rounded to the digits its axis can show: `span` is the
/// axis's length and `ticks` about how many labels it has, so a label keeps
/// the digits of the step between ticks and drops floating-point noise (a
/// tick at 1.7e-18 reads "0", not "0.0000000000000000017").
pub fn tick_label(value: f64, span: f64, ticks: usize) -> String {
    let step = span.abs() / ticks.max(1) as f64;
    if !(value.is_finite() && step.is_finite() && step > 0.0) {
        return crate::format::format_number(value, 3);
    }
    // Plotters' step is at least span / ticks: one more digit than the
    // step's leading one shows steps like 0.25 whole.
    let decimals = (1 - step.log10().floor() as i32).max(0) as usize;
    let scale = 10f64.powi(decimals as i32);
    let rounded = (value * scale).round() / scale;
    if rounded == 0.0 {
        return "0".to_string();
    }
    if decimals == 0 {
        let sign = if rounded < 0.0 { "-" } else { "" };
        return format!(
            "{sign}{}",
            crate::format::format_count(rounded.abs() as u64)
        );
    }
    let text = format!("{rounded:.decimals$}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Ticks for a log time axis \[s\]: 1, 10, 100 ms, 1, 10 s, 1, 10 min, 1, 6,
/// 24 h, 7 d, within `\[low, high\]`.
fn time_ticks(low: f64, high: f64) -> Vec<f64> {
    [
        1e-3,
        1e-2,
        0.1,
        1.0,
        10.0,
        60.0,
        600.0,
        3600.0,
        6.0 * 3600.0,
        86_400.0,
        7.0 * 86_400.0,
        30.0 * 86_400.0,
    ]
    .into_iter()
    .filter(|t| *t >= low * 0.999 && *t <= high * 1.001)
    .collect()
}

/// A tick label for a time \[s\]: "100 ms", "10 s", "1 min", "6 h", "7 d".
fn time_tick_label(seconds: f64) -> String {
    let trim = |x: f64| crate::format::format_number(x, 3);
    if seconds < 1.0 {
        format!("{} ms", trim(seconds * 1e3))
    } else if seconds < 60.0 {
        format!("{} s", trim(seconds))
    } else if seconds < 3600.0 {
        format!("{} min", trim(seconds / 60.0))
    } else if seconds <= 86_400.0 {
        format!("{} h", trim(seconds / 3600.0))
    } else {
        format!("{} d", trim(seconds / 86_400.0))
    }
}

type DrawResult<T> = Result<T, String>;

fn draw_error<E: std::fmt::Debug>(error: E) -> String {
    format!("{error:?}")
}

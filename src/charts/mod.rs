//! Charts as SVG strings, drawn with plotters' SVG backend: crisp at any
//! pixel density, printable, exportable, and testable natively (a test can
//! read the SVG). Colours come from a [`Theme`], so text stays readable in
//! dark mode; the page redraws when the system colour scheme changes.

mod cdf;
mod preview;
mod series;
mod service_curve;
mod tornado;

pub use cdf::{CdfCurve, CdfInput, CurveKind, cdf_chart};
pub use preview::{histogram_preview, profile_preview};
pub use series::series_chart;
pub use service_curve::service_curve_chart;
pub use tornado::{TornadoMetric, TornadoRow, tornado_chart, tornado_height, tornado_rows};

use plotters::style::RGBColor;

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
    /// Per-class curves, in class order (repeats after the last).
    pub classes: [RGBColor; 6],
}

impl Theme {
    pub const LIGHT: Theme = Theme {
        dark: false,
        background: RGBColor(255, 255, 255),
        ink: RGBColor(0x1b, 0x1f, 0x24),
        muted: RGBColor(0x57, 0x60, 0x6a),
        grid: RGBColor(0xd0, 0xd7, 0xde),
        grid_light: RGBColor(0xee, 0xf1, 0xf4),
        base: RGBColor(0x1f, 0x5f, 0xc8),
        best: RGBColor(0x1a, 0x7f, 0x37),
        worst: RGBColor(0xc0, 0x21, 0x2b),
        deadline: RGBColor(0x9a, 0x56, 0x00),
        classes: [
            RGBColor(0x6f, 0x42, 0xc1),
            RGBColor(0x0a, 0x7e, 0x8c),
            RGBColor(0xbf, 0x39, 0x89),
            RGBColor(0x57, 0x60, 0x6a),
            RGBColor(0x95, 0x6a, 0x00),
            RGBColor(0x2f, 0x6f, 0x3e),
        ],
    };

    pub const DARK: Theme = Theme {
        dark: true,
        background: RGBColor(0x16, 0x1b, 0x22),
        ink: RGBColor(0xe6, 0xed, 0xf3),
        muted: RGBColor(0x9d, 0xa7, 0xb3),
        grid: RGBColor(0x3d, 0x44, 0x4d),
        grid_light: RGBColor(0x26, 0x2c, 0x36),
        base: RGBColor(0x6c, 0xb6, 0xff),
        best: RGBColor(0x56, 0xd3, 0x64),
        worst: RGBColor(0xff, 0x7b, 0x72),
        deadline: RGBColor(0xe3, 0xb3, 0x41),
        classes: [
            RGBColor(0xbc, 0x8c, 0xff),
            RGBColor(0x39, 0xc5, 0xcf),
            RGBColor(0xf7, 0x78, 0xba),
            RGBColor(0xb1, 0xba, 0xc4),
            RGBColor(0xe3, 0xb3, 0x41),
            RGBColor(0x7e, 0xe7, 0x87),
        ],
    };

    pub fn of(dark: bool) -> Theme {
        if dark { Theme::DARK } else { Theme::LIGHT }
    }

    pub fn class_color(&self, index: usize) -> RGBColor {
        self.classes[index % self.classes.len()]
    }
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

/// Escapes text for SVG/XML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A chart that says why there is nothing to draw.
fn empty(title: &str, message: &str, width: u32, height: u32, theme: &Theme) -> Chart {
    let svg = format!(
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" xmlns=\"http://www.w3.org/2000/svg\">\
         <rect width=\"100%\" height=\"100%\" fill=\"{bg}\"/>\
         <text x=\"50%\" y=\"50%\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"14\" fill=\"{ink}\">{message}</text></svg>",
        bg = hex(theme.background),
        ink = hex(theme.muted),
        message = escape(message),
    );
    finish(svg, title, width, height)
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

//! A chart as a file: its SVG under a heading (the figure's caption, then
//! the scenario's name), since a downloaded chart has no page around it to
//! say what it shows. The chart keeps its own `<title>` for screen readers.

use super::legend::wrap;
use super::{Chart, Theme, escape, hex};

const HEADING_PX: f64 = 15.0;
const SUBHEADING_PX: f64 = 12.0;
const MARGIN_PX: f64 = 10.0;

/// `chart`'s SVG under `heading` (bold, wrapped to the chart's width) and
/// `subheading` (muted), as a new SVG of the chart's width and the
/// headings' extra height; returns it with that height.
pub fn titled_svg(chart: &Chart, heading: &str, subheading: &str, theme: &Theme) -> (String, u32) {
    let width = f64::from(chart.width.max(1));
    let room = (width - 2.0 * MARGIN_PX).max(HEADING_PX * 10.0);
    let mut lines: Vec<(String, f64, bool)> = wrap(heading, room, HEADING_PX)
        .into_iter()
        .map(|line| (line, HEADING_PX, true))
        .collect();
    lines.extend(
        wrap(subheading, room, SUBHEADING_PX)
            .into_iter()
            .map(|line| (line, SUBHEADING_PX, false)),
    );
    let mut y = MARGIN_PX;
    let mut texts = String::new();
    for (line, font, bold) in &lines {
        y += font * 1.3;
        texts.push_str(&format!(
            "<text x=\"{MARGIN_PX}\" y=\"{y:.1}\" font-family=\"sans-serif\" font-size=\"{font}\"{weight} fill=\"{fill}\">{text}</text>",
            weight = if *bold { " font-weight=\"bold\"" } else { "" },
            fill = hex(if *bold { theme.ink } else { theme.muted }),
            text = escape(line),
        ));
    }
    let top = (y + MARGIN_PX * 0.6).ceil() as u32;
    let height = chart.height + top;
    // The chart as a nested <svg>, moved down past the headings.
    let inner = chart
        .svg
        .replacen("<svg", &format!("<svg x=\"0\" y=\"{top}\""), 1);
    let svg = format!(
        "<svg width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\" xmlns=\"http://www.w3.org/2000/svg\">\
         <title>{title}</title><rect width=\"100%\" height=\"100%\" fill=\"{bg}\"/>{texts}{inner}</svg>",
        w = chart.width,
        title = escape(heading),
        bg = hex(theme.background),
    );
    (svg, height)
}

//! A legend drawn in rows under a chart's axes rather than boxed inside
//! them, where on a narrow screen it hid the very points and lines it
//! names. Rows wrap to the chart's width.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Area, DrawResult, Theme, draw_error, font_px};

/// Height of one legend row \[px\].
const ROW_PX: u32 = 20;

/// How an entry is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mark {
    /// A solid line this many px wide.
    Line(u32),
    Dashed,
    Dot,
    /// A filled square, for bars.
    Bar,
}

/// One entry: its mark in its colour, and its words.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct LegendItem {
    pub color: RGBColor,
    pub mark: Mark,
    pub text: String,
}

impl LegendItem {
    pub fn new(color: RGBColor, mark: Mark, text: impl Into<String>) -> LegendItem {
        LegendItem {
            color,
            mark,
            text: text.into(),
        }
    }
}

/// How wide `text` is drawn at `font` px, about (plotters writes a font
/// size of 0.8 `font`; sans-serif bold averages 0.62 em a character).
pub(super) fn text_px(text: &str, font: f64) -> f64 {
    text.chars().count() as f64 * font * 0.52
}

/// The entries as rows that fit `width`, each entry with its x \[px\]; the
/// rows start under the plot, past the y axis's labels.
fn rows(items: &[LegendItem], width: u32) -> Vec<Vec<(f64, &LegendItem)>> {
    let font = font_px(width);
    let start = font * 4.6;
    let mut rows: Vec<Vec<(f64, &LegendItem)>> = vec![Vec::new()];
    let mut x = start;
    for item in items {
        let item_px = 24.0 + text_px(&item.text, font) + 18.0;
        if x + item_px > f64::from(width) && x > start {
            rows.push(Vec::new());
            x = start;
        }
        if let Some(row) = rows.last_mut() {
            row.push((x, item));
        }
        x += item_px;
    }
    rows
}

/// The legend's height \[px\] at `width`.
pub(super) fn legend_height(items: &[LegendItem], width: u32) -> u32 {
    rows(items, width).len() as u32 * ROW_PX + 6
}

/// Draws the legend in `area` (the strip under the plot), row by row.
pub(super) fn draw_legend(
    area: &Area,
    items: &[LegendItem],
    theme: &Theme,
    width: u32,
) -> DrawResult<()> {
    let style = ("sans-serif", font_px(width))
        .into_font()
        .color(&theme.ink)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (index, row) in rows(items, width).into_iter().enumerate() {
        let y = (index as u32 * ROW_PX + ROW_PX / 2) as i32;
        for (x, item) in row {
            let x = x as i32;
            let color = item.color;
            match item.mark {
                Mark::Line(px) => area.draw(&PathElement::new(
                    vec![(x, y), (x + 18, y)],
                    color.stroke_width(px),
                )),
                Mark::Dashed => area
                    .draw(&PathElement::new(
                        vec![(x, y), (x + 7, y)],
                        color.stroke_width(2),
                    ))
                    .and_then(|()| {
                        area.draw(&PathElement::new(
                            vec![(x + 11, y), (x + 18, y)],
                            color.stroke_width(2),
                        ))
                    }),
                Mark::Dot => area.draw(&Circle::new((x + 9, y), 4, color.filled())),
                Mark::Bar => area.draw(&Rectangle::new(
                    [(x + 2, y - 5), (x + 16, y + 5)],
                    color.filled(),
                )),
            }
            .map_err(draw_error)?;
            area.draw(&Text::new(item.text.as_str(), (x + 24, y), style.clone()))
                .map_err(draw_error)?;
        }
    }
    Ok(())
}

/// Height of one line of a note \[px\].
const NOTE_LINE_PX: u32 = 18;

/// `text` in lines that fit `width` at the chart's font, broken at spaces,
/// each line starting where the legend's rows start.
fn note_lines(text: &str, width: u32) -> Vec<String> {
    let font = font_px(width);
    wrap(text, f64::from(width) - font * 4.6 - 8.0, font)
}

/// `text` in lines at most `room` px wide at `font` px, broken at spaces
/// (a word longer than that has a line of its own).
pub(super) fn wrap(text: &str, room: f64, font: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if text_px(&format!("{line} {word}"), font) <= room => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The height \[px\] of a note under a chart's legend (nothing for no text).
pub(super) fn note_height(text: &str, width: u32) -> u32 {
    match note_lines(text, width).len() as u32 {
        0 => 0,
        n => n * NOTE_LINE_PX + 8,
    }
}

/// Draws `text` in `area` (under the legend), wrapped to the chart's width:
/// what a chart means in words, for a reader who does not read charts.
pub(super) fn draw_note(area: &Area, text: &str, theme: &Theme, width: u32) -> DrawResult<()> {
    let font = font_px(width);
    let style = ("sans-serif", font)
        .into_font()
        .color(&theme.ink)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (index, line) in note_lines(text, width).into_iter().enumerate() {
        let y = (index as u32 * NOTE_LINE_PX + NOTE_LINE_PX / 2) as i32;
        area.draw(&Text::new(line, ((font * 4.6) as i32, y), style.clone()))
            .map_err(draw_error)?;
    }
    Ok(())
}

//! The joint distribution of a class's prompt and output lengths: a 2-D
//! histogram of sampled (prompt, output) pairs on log axes, darker where
//! more pairs fall, so that a correlation (or its absence) shows at a
//! glance. Small: it sits in the class editor beside the distributions'
//! previews.

use plotters::prelude::*;

use super::{Chart, DrawResult, Frame, Theme, Themed, draw_error};

pub const LENGTHS_TITLE: &str = "Prompt against output length";

/// Cells across each axis.
const CELLS_X: usize = 24;
const CELLS_Y: usize = 16;

/// Counts of pairs on a grid of cells equally wide in log length.
#[derive(Clone, Debug, PartialEq)]
pub struct LengthGrid {
    /// Cell edges along the prompt axis \[tokens\] (`CELLS_X` + 1).
    pub input_edges: Vec<f64>,
    /// Cell edges along the output axis \[tokens\] (`CELLS_Y` + 1).
    pub output_edges: Vec<f64>,
    /// Pairs in each cell, `counts[x][y]`.
    pub counts: Vec<Vec<u32>>,
}

/// The grid of `pairs` (none: `None`). Each axis spans its smallest to its
/// largest length (a factor of 2 around a single value).
pub fn length_grid(pairs: &[(u32, u32)]) -> Option<LengthGrid> {
    let inputs: Vec<f64> = pairs.iter().map(|p| p.0.max(1) as f64).collect();
    let outputs: Vec<f64> = pairs.iter().map(|p| p.1.max(1) as f64).collect();
    let input_edges = log_edges(&inputs, CELLS_X)?;
    let output_edges = log_edges(&outputs, CELLS_Y)?;
    let mut counts = vec![vec![0u32; CELLS_Y]; CELLS_X];
    for (i, o) in inputs.iter().zip(&outputs) {
        counts[cell(&input_edges, *i)][cell(&output_edges, *o)] += 1;
    }
    Some(LengthGrid {
        input_edges,
        output_edges,
        counts,
    })
}

/// `cells` + 1 edges equally spaced in log from the least to the greatest
/// of `values`.
fn log_edges(values: &[f64], cells: usize) -> Option<Vec<f64>> {
    let low = values.iter().copied().reduce(f64::min)?;
    let high = values.iter().copied().fold(low, f64::max);
    let (low, high) = if high > low {
        (low, high)
    } else {
        (low / 2.0, high * 2.0)
    };
    let (log_low, step) = (low.ln(), (high.ln() - low.ln()) / cells as f64);
    Some(
        (0..=cells)
            .map(|k| match k {
                0 => low,
                k if k == cells => high,
                k => (log_low + step * k as f64).exp(),
            })
            .collect(),
    )
}

/// The cell of `edges` that holds `value` (the last holds its top edge).
fn cell(edges: &[f64], value: f64) -> usize {
    let above = edges.partition_point(|e| *e <= value);
    above.saturating_sub(1).min(edges.len() - 2)
}

/// Pearson's correlation of the logarithms of `pairs` (`None` when either
/// length never varies).
pub fn log_correlation(pairs: &[(u32, u32)]) -> Option<f64> {
    let n = pairs.len() as f64;
    let logs: Vec<(f64, f64)> = pairs
        .iter()
        .map(|&(i, o)| ((i.max(1) as f64).ln(), (o.max(1) as f64).ln()))
        .collect();
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in &logs {
        sxy += (x - mean_x) * (y - mean_y);
        sxx += (x - mean_x) * (x - mean_x);
        syy += (y - mean_y) * (y - mean_y);
    }
    let r = sxy / (sxx * syy).sqrt();
    r.is_finite().then_some(r)
}

/// The 2-D histogram of `pairs`, `width` x `height` px.
pub fn lengths_chart(pairs: &[(u32, u32)], theme: &Theme, width: u32, height: u32) -> Chart {
    let title = format!("{LENGTHS_TITLE}: {} sampled pairs", pairs.len());
    let frame = Frame {
        name: LENGTHS_TITLE,
        title: &title,
        width,
        height,
        theme,
    };
    let Some(grid) = length_grid(pairs) else {
        return frame.empty("No lengths to draw.");
    };
    frame.draw(|root| draw(&grid, theme, root))
}

fn draw(grid: &LengthGrid, theme: &Theme, root: &super::Area) -> DrawResult<()> {
    let font = 11.0;
    let text = ("sans-serif", font).into_font().color(&theme.ink);
    let (x0, x1) = (grid.input_edges[0], grid.input_edges[CELLS_X]);
    let (y0, y1) = (grid.output_edges[0], grid.output_edges[CELLS_Y]);
    let mut chart = ChartBuilder::on(root)
        .margin(6)
        .x_label_area_size(font * 3.0)
        .y_label_area_size(font * 4.2)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_desc("Prompt tokens")
        .y_desc("Output tokens")
        .x_labels(4)
        .y_labels(4)
        .x_label_formatter(&|x| crate::format::format_number(*x, 2))
        .y_label_formatter(&|y| crate::format::format_number(*y, 2))
        .disable_mesh()
        .themed(theme, &text)
        .draw()
        .map_err(draw_error)?;
    let most = grid
        .counts
        .iter()
        .flatten()
        .copied()
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let cells = grid.counts.iter().enumerate().flat_map(|(x, column)| {
        column
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(move |(y, n)| {
                let shade = 0.15 + 0.85 * (*n as f64 / most);
                Rectangle::new(
                    [
                        (grid.input_edges[x], grid.output_edges[y]),
                        (grid.input_edges[x + 1], grid.output_edges[y + 1]),
                    ],
                    theme.base.mix(shade).filled(),
                )
            })
    });
    chart.draw_series(cells).map_err(draw_error)?;
    Ok(())
}

//! Cost against the worst target's margin: every fleet the plan's search
//! decided, coloured by its verdict, the Pareto frontier (no other fleet is
//! both as cheap and nearer its targets) as a step line, the chosen fleet
//! ringed and named (always shown: it is on the frontier), and the line
//! where a target sits at its bound; the legend is under the axes.
//!
//! A fleet's margin is its worst check's judged value over the threshold
//! (the value the decision rule reads: the upper 95% bound), over every
//! target: a p99 TTFT, a p99 TPOT and a P(miss) all count, so a latency
//! target that binds shows (on P(miss) alone, every fleet missed nothing
//! and the chosen fleet fell off the frontier). On a log axis: a fleet at
//! 0.1x and an overloaded one at 100x both stay legible.

use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sojourn_engine::Verdict;

use super::legend::{LegendItem, Mark, draw_legend, legend_height, text_px};
use super::{Area, Chart, DrawResult, Frame, Theme, Themed, draw_error, font_px};
use crate::format::{format_count, format_number, format_usd};

pub const PARETO_TITLE: &str = "Cost against the worst target's margin";

/// The lowest ratio the axis shows: a ratio below it is drawn on it.
const RATIO_FLOOR: f64 = 1e-3;
/// The highest: a fleet further from its targets (or infinitely far, a
/// percentile never reached) is drawn on it.
const RATIO_CEILING: f64 = 1e4;

/// One decided fleet.
#[derive(Clone, Debug, PartialEq)]
pub struct ParetoPoint {
    /// The configuration and fleet, e.g. "H100 SXM x1, priority: 1 + 1 replicas".
    pub label: String,
    /// USD per month with the reserve, or GPUs with the reserve when unpriced.
    pub cost: f64,
    /// The worst check's judged value over its threshold (at most 1
    /// exactly when every target is met).
    pub ratio: f64,
    /// That check ("chat: p99 TTFT <= 2 s").
    pub worst_check: Option<String>,
    pub verdict: Verdict,
    pub on_frontier: bool,
}

/// What the chart draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParetoInput {
    pub points: Vec<ParetoPoint>,
    /// Index into `points` of the chosen fleet.
    pub chosen: Option<usize>,
    /// Costs are USD per month (else GPUs).
    pub priced: bool,
}

/// The height \[px\] the chart will take at `width` with the verdicts
/// every search has (fleets that met the targets and fleets that did not),
/// for the placeholder that holds its place while the plan runs: on a
/// phone the legend wraps onto more rows, and a placeholder of one row let
/// the page below it jump when the chart arrived. (An uncertain fleet adds
/// an item, which may add a row.)
pub fn pareto_height(width: u32, theme: &Theme) -> u32 {
    let input = ParetoInput {
        points: [Verdict::Met, Verdict::NotMet]
            .into_iter()
            .map(|verdict| ParetoPoint {
                label: String::new(),
                cost: 1.0,
                ratio: 0.5,
                worst_check: None,
                verdict,
                on_frontier: false,
            })
            .collect(),
        ..ParetoInput::default()
    };
    let legend = legend_items(&input, theme);
    super::chart_height(width, 0.52, 300) + legend_height(&legend, width)
}

/// Draws the chart: `width` wide, about half as high, plus its legend
/// under the axes.
pub fn pareto_chart(input: &ParetoInput, theme: &Theme, width: u32) -> Chart {
    let title = title(input);
    let plot_height = super::chart_height(width, 0.52, 300);
    let legend = legend_items(input, theme);
    let frame = Frame {
        name: PARETO_TITLE,
        title: &title,
        width,
        height: plot_height + legend_height(&legend, width),
        theme,
    };
    if drawable(input).next().is_none() {
        return frame.empty("No fleet was decided: nothing to draw.");
    }
    frame.draw(|root| {
        let (plot, below) = root.split_vertically(plot_height);
        draw(input, theme, width, &plot)?;
        draw_legend(&below, &legend, theme, width)
    })
}

fn title(input: &ParetoInput) -> String {
    let frontier = input.points.iter().filter(|p| p.on_frontier).count();
    let chosen = input
        .chosen
        .and_then(|i| input.points.get(i))
        .map(|p| {
            let check = p
                .worst_check
                .as_ref()
                .map(|c| format!(" (nearest its bound: {c}, at {})", ratio_label(p.ratio)))
                .unwrap_or_default();
            format!("; chosen: {}{check}", p.label)
        })
        .unwrap_or_default();
    format!(
        "{PARETO_TITLE}: {} fleets decided, {frontier} on the frontier{chosen}",
        input.points.len()
    )
}

/// The points that can be placed (a ratio that is not a number cannot;
/// an infinite one goes on the top edge).
fn drawable(input: &ParetoInput) -> impl Iterator<Item = &ParetoPoint> {
    input
        .points
        .iter()
        .filter(|p| p.cost.is_finite() && !p.ratio.is_nan())
}

/// Whole decades around the ratios and 1 (a target at its bound), within
/// the floor and the ceiling.
fn y_range(input: &ParetoInput) -> (f64, f64) {
    let values = drawable(input)
        .map(|p| p.ratio)
        .chain([1.0])
        .filter(|v| v.is_finite() && *v > 0.0);
    let (low, high) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let low = 10f64.powf((low * 0.7).log10().floor()).max(RATIO_FLOOR);
    let high = 10f64
        .powf((high * 1.5).log10().ceil())
        .clamp(low * 10.0, RATIO_CEILING);
    (low.min(high / 10.0), high)
}

/// Where a point goes on the axis from `low` to `high`.
fn placed(p: &ParetoPoint, (low, high): (f64, f64)) -> (f64, f64) {
    (p.cost, p.ratio.clamp(low, high))
}

/// Decades within the range, with 2 and 5 between them when it spans at
/// most two decades.
fn y_ticks(low: f64, high: f64) -> Vec<f64> {
    let decades = (high / low).log10().round() as i32;
    let steps: &[f64] = if decades <= 2 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    (0..=decades)
        .flat_map(|d| steps.iter().map(move |s| low * 10f64.powi(d) * s))
        .filter(|t| *t <= high * 1.001)
        .collect()
}

/// "0.1x", "1x", "20x".
fn ratio_label(ratio: f64) -> String {
    if ratio.is_infinite() {
        return "never reached".to_string();
    }
    format!("{}x", format_number(ratio, 2))
}

/// A cost tick: USD, or a whole number of GPUs (none between them).
fn cost_label(cost: f64, priced: bool) -> String {
    if priced {
        format_usd(cost)
    } else if (cost - cost.round()).abs() > 1e-9 {
        String::new()
    } else {
        format_count(cost.round() as u64)
    }
}

fn verdict_style(verdict: Verdict, theme: &Theme) -> (RGBColor, &'static str) {
    match verdict {
        Verdict::Met => (theme.best, "targets met"),
        Verdict::Uncertain => (theme.deadline, "uncertain"),
        Verdict::NotMet => (theme.worst, "targets not met"),
    }
}

/// The frontier as a staircase, cheapest first: from each point across to
/// the next one's cost, then down to its ratio; the last runs on to
/// `x_end` (more money buys at least that).
fn staircase(input: &ParetoInput, range: (f64, f64), x_end: f64) -> Vec<(f64, f64)> {
    let mut frontier: Vec<(f64, f64)> = drawable(input)
        .filter(|p| p.on_frontier)
        .map(|p| placed(p, range))
        .collect();
    frontier.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let mut steps = Vec::with_capacity(frontier.len() * 2);
    for (cost, p) in frontier {
        if let Some(&(_, previous)) = steps.last() {
            steps.push((cost, previous));
        }
        steps.push((cost, p));
    }
    if let Some(&(_, last)) = steps.last() {
        steps.push((x_end, last));
    }
    steps
}

fn draw(input: &ParetoInput, theme: &Theme, width: u32, root: &Area) -> DrawResult<()> {
    let font = font_px(width);
    let range = y_range(input);
    let (low, high) = range;
    let x_max = drawable(input).map(|p| p.cost).fold(0.0f64, f64::max);
    let x_end = match (x_max > 0.0, input.priced) {
        (false, _) => 1.0,
        (true, true) => x_max * 1.25,
        // Whole GPUs, so the ticks fall on them.
        (true, false) => (x_max * 1.25).ceil(),
    };
    let label_style = ("sans-serif", font).into_font().color(&theme.ink);
    let mut chart = ChartBuilder::on(root)
        .margin_top(14)
        .margin_right(18)
        .margin_left(8)
        .x_label_area_size(font * 3.2)
        .y_label_area_size(font * 4.6)
        .build_cartesian_2d(
            0.0..x_end,
            (low..high).log_scale().with_key_points(y_ticks(low, high)),
        )
        .map_err(draw_error)?;
    let priced = input.priced;
    chart
        .configure_mesh()
        .x_desc(if priced {
            "USD per month, with the reserve"
        } else {
            "GPUs, with the reserve"
        })
        .y_desc("worst target: value / bound")
        .x_labels(if width < 500 { 4 } else { 8 })
        .x_label_formatter(&|x| cost_label(*x, priced))
        .y_label_formatter(&|y| ratio_label(*y))
        .themed(theme, &label_style)
        .draw()
        .map_err(draw_error)?;
    draw_bound(&mut chart, theme, x_end)?;
    let steps = staircase(input, range, x_end);
    chart
        .draw_series(LineSeries::new(steps.clone(), theme.base.stroke_width(2)))
        .map_err(draw_error)?;
    let chosen = input
        .chosen
        .and_then(|i| input.points.get(i))
        .filter(|p| p.cost.is_finite() && !p.ratio.is_nan())
        .map(|p| (p, placed(p, range)));
    if let Some((point, at)) = chosen {
        // Under the dots, so it hides none, and clear of the lines and dots
        // where the plot leaves room.
        let dots: Vec<(f64, f64)> = drawable(input).map(|p| placed(p, range)).collect();
        let drawn = Drawn {
            lines: [vec![(0.0, 1.0), (x_end, 1.0)], steps],
            dots,
        };
        name_chosen(&mut chart, point, at, &drawn, theme, font)?;
    }
    for verdict in [Verdict::NotMet, Verdict::Uncertain, Verdict::Met] {
        let (color, _) = verdict_style(verdict, theme);
        chart
            .draw_series(
                drawable(input)
                    .filter(|p| p.verdict == verdict)
                    .map(|p| Circle::new(placed(p, range), 5, color.filled())),
            )
            .map_err(draw_error)?;
    }
    if let Some((_, at)) = chosen {
        chart
            .draw_series(std::iter::once(Circle::new(
                at,
                10,
                theme.ink.stroke_width(2),
            )))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// The frontier, the targets, then each verdict the chart shows.
fn legend_items(input: &ParetoInput, theme: &Theme) -> Vec<LegendItem> {
    let mut items = vec![LegendItem::new(
        theme.base,
        Mark::Line(2),
        "Pareto frontier",
    )];
    items.push(LegendItem::new(
        theme.muted,
        Mark::Dashed,
        "1x: a target at its bound (below: met)",
    ));
    for verdict in [Verdict::Met, Verdict::Uncertain, Verdict::NotMet] {
        if drawable(input).any(|p| p.verdict == verdict) {
            let (color, text) = verdict_style(verdict, theme);
            items.push(LegendItem::new(color, Mark::Dot, text));
        }
    }
    items
}

/// The chart's context: cost on a linear axis, the ratio on a log axis.
type ParetoChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, WithKeyPoints<LogCoord<f64>>>>;

/// Where a target sits at its bound (1x), as a dashed line.
fn draw_bound(chart: &mut ParetoChart, theme: &Theme, x_end: f64) -> DrawResult<()> {
    chart
        .draw_series(DashedLineSeries::new(
            vec![(0.0, 1.0), (x_end, 1.0)],
            7,
            4,
            theme.muted.stroke_width(2),
        ))
        .map_err(draw_error)?;
    Ok(())
}

/// What the chosen fleet's name must not cover, in the chart's values:
/// the lines (the target's bound at 1x and the frontier's staircase, each
/// a polyline) and every fleet's dot.
struct Drawn {
    lines: [Vec<(f64, f64)>; 2],
    dots: Vec<(f64, f64)>,
}

/// A box on the chart \[px\]: left, top, right, bottom.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PixelBox([f64; 4]);

impl PixelBox {
    /// The box around `(x0, y0)` to `(x1, y1)`, `pad` px wider every way.
    fn around((x0, y0): (f64, f64), (x1, y1): (f64, f64), pad: f64) -> PixelBox {
        PixelBox([
            x0.min(x1) - pad,
            y0.min(y1) - pad,
            x0.max(x1) + pad,
            y0.max(y1) + pad,
        ])
    }

    fn overlaps(&self, other: &PixelBox) -> bool {
        let ([l0, t0, r0, b0], [l1, t1, r1, b1]) = (self.0, other.0);
        l0 < r1 && l1 < r0 && t0 < b1 && t1 < b0
    }
}

/// Where the chosen fleet's label goes: its box's top-left corner \[px\],
/// relative to the point at `(x, y)`, for a label `width` by `height`
/// inside `plot`: the first place beside the point (above right, below
/// right, above left, below left, then further above or below) that covers
/// none of `obstacles`, or failing that the one that covers fewest.
fn label_place(
    (x, y): (f64, f64),
    (width, height): (f64, f64),
    plot: &PixelBox,
    obstacles: &[PixelBox],
) -> (f64, f64) {
    let [plot_left, plot_top, plot_right, plot_bottom] = plot.0;
    let gap = 14.0;
    let mut places = Vec::new();
    for lift in [0.0, 1.0, 2.0, 3.0] {
        let above = y - gap - height - lift * height;
        let below = y + gap + lift * height;
        for top in [above, below] {
            for left in [x + gap, x - gap - width] {
                places.push((left, top));
            }
        }
    }
    let scored = places.into_iter().filter_map(|(left, top)| {
        // Kept inside the plot sideways; a place past its top or bottom is
        // no place.
        let left = left.min(plot_right - width).max(plot_left);
        if top < plot_top || top + height > plot_bottom {
            return None;
        }
        let label = PixelBox([left, top, left + width, top + height]);
        let covered = obstacles.iter().filter(|o| label.overlaps(o)).count();
        Some((covered, (left, top)))
    });
    // The first of the fewest covered (`min_by_key` keeps the first).
    scored
        .min_by_key(|(covered, _)| *covered)
        .map_or((x + gap, y - gap - height), |(_, place)| place)
}

/// The chosen fleet's name beside it, in two lines (the configuration, then
/// the fleet) on the chart's background, clear of the lines and dots
/// (`label_place`).
fn name_chosen(
    chart: &mut ParetoChart,
    point: &ParetoPoint,
    at: (f64, f64),
    drawn: &Drawn,
    theme: &Theme,
    font: f64,
) -> DrawResult<()> {
    let (configuration, fleet) = point
        .label
        .rsplit_once(": ")
        .unwrap_or((point.label.as_str(), ""));
    let first = format!("chosen: {configuration}");
    let widest = text_px(&first, font).max(text_px(fleet, font));
    let pixel = |value: &(f64, f64)| {
        let (x, y) = chart.backend_coord(value);
        (f64::from(x), f64::from(y))
    };
    let mut obstacles = Vec::new();
    for line in &drawn.lines {
        let corners: Vec<(f64, f64)> = line.iter().map(pixel).collect();
        obstacles.extend(
            corners
                .windows(2)
                .map(|pair| PixelBox::around(pair[0], pair[1], 3.0)),
        );
    }
    obstacles.extend(drawn.dots.iter().map(|dot| {
        let centre = pixel(dot);
        PixelBox::around(centre, centre, 7.0)
    }));
    // The ring around the chosen fleet.
    let centre = pixel(&at);
    obstacles.push(PixelBox::around(centre, centre, 12.0));
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let plot = PixelBox([
        f64::from(xs.start),
        f64::from(ys.start),
        f64::from(xs.end),
        f64::from(ys.end),
    ]);
    let line = (font * 1.25).round();
    let (left, top) = label_place(centre, (widest + 6.0, 2.0 * line), &plot, &obstacles);
    // Offsets from the point, where the label's elements are drawn.
    let dx = (left - centre.0 + 3.0) as i32;
    let top = (top - centre.1) as i32;
    let line = line as i32;
    let style = ("sans-serif", font)
        .into_font()
        .style(FontStyle::Bold)
        .color(&theme.ink)
        .pos(Pos::new(HPos::Left, VPos::Center));
    chart
        .draw_series(std::iter::once(
            EmptyElement::at(at)
                + Rectangle::new(
                    [(dx - 3, top), (dx + widest as i32 + 3, top + 2 * line)],
                    theme.background.mix(0.85).filled(),
                )
                + Text::new(first, (dx, top + line / 2), style.clone())
                + Text::new(fleet.to_string(), (dx, top + line + line / 2), style),
        ))
        .map_err(draw_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 40: the chosen fleet's name sat on the 1x line. Where the place
    // above it would cover a line, the name goes below.
    #[test]
    fn the_chosen_name_moves_off_a_line_it_would_cover() {
        let plot = PixelBox([0.0, 0.0, 600.0, 300.0]);
        let bound = PixelBox::around((0.0, 120.0), (600.0, 120.0), 3.0);
        let (left, top) = label_place((300.0, 150.0), (120.0, 30.0), &plot, &[bound]);
        assert!(!PixelBox([left, top, left + 120.0, top + 30.0]).overlaps(&bound));
        assert_eq!((left, top), (314.0, 164.0), "below and to the right");
        // With nothing in the way it stays above and to the right, inside
        // the plot.
        assert_eq!(
            label_place((300.0, 150.0), (120.0, 30.0), &plot, &[]),
            (314.0, 106.0)
        );
        assert_eq!(
            label_place((590.0, 150.0), (120.0, 30.0), &plot, &[]),
            (480.0, 106.0)
        );
    }
}

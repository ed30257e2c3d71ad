//! Charts are SVG strings: check what they draw by reading them.

use std::collections::BTreeMap;

use sojourn_app::charts::hex;
use sojourn_app::charts::{
    CdfInput, LENGTHS_TITLE, ParetoInput, ParetoPoint, Theme, TornadoMetric, TornadoRow, cdf_chart,
    chart_height, chart_width, curve_reading, length_grid, lengths_chart, message_chart,
    pareto_chart, series_chart, service_curve_chart, sort_by_drawn_length, tick_label,
    tornado_chart, tornado_rows,
};
use sojourn_app::job::Case;
use sojourn_app::results::cdf_input;
use sojourn_engine::{
    CheckMetric, CurvePoint, CurveTarget, PlanOptions, RunOptions, RunParams, RunSummary, Scenario,
    ScenarioParams, SensitivityInput, ServiceCurve, Verdict, plan, simulate,
};

mod pareto;
mod plan;

fn run(params: ScenarioParams) -> RunSummary {
    let scenario = Scenario::try_from(params).expect("valid");
    let report = simulate(&scenario, &RunOptions::default()).expect("runs");
    RunSummary::new(report, &scenario)
}

fn hour() -> ScenarioParams {
    ScenarioParams {
        run: RunParams {
            horizon_s: 3600.0,
            ..RunParams::default()
        },
        ..ScenarioParams::overnight_batch()
    }
}

#[test]
fn the_cdf_draws_each_deadline_and_marks_p50_and_p99() {
    let result = run(hour());
    let input = cdf_input(&result, &BTreeMap::new(), false);
    assert_eq!(input.deadlines.len(), 2, "24 h and 60 s");
    for theme in [Theme::LIGHT, Theme::DARK] {
        let chart = cdf_chart(&input, &theme, 760);
        let svg = &chart.svg;
        assert!(svg.starts_with("<svg"), "{svg:.80}");
        assert!(svg.contains("role=\"img\""), "named for screen readers");
        assert!(svg.contains("<title>Sojourn-time CDF"), "{svg:.300}");
        assert!(
            svg.contains("deadline nightly-batch 24.0 h"),
            "the 24 h deadline is labelled"
        );
        assert!(
            svg.contains("deadline api 60.0 s"),
            "the 60 s deadline is labelled"
        );
        // The deadline lines are drawn in the deadline colour.
        let deadline = hex(theme.deadline);
        assert!(
            svg.to_ascii_lowercase()
                .contains(&format!("stroke=\"{deadline}\"")),
            "no line in {deadline}"
        );
        assert!(
            svg.contains("\np50 ") && svg.contains("\np99 "),
            "p50 and p99 marked"
        );
        assert!(svg.contains("Sojourn time"), "the axis says what it is");
        assert!(
            svg.to_ascii_lowercase()
                .contains(&format!("fill=\"{}\"", hex(theme.background))),
            "the background follows the theme"
        );
    }
}

/// The CDF's input for an hour of the default scenario with its high
/// demand case (the api class's rate x1.3), per class or not.
fn with_high_demand(per_class: bool) -> CdfInput {
    let base = run(hour());
    let mut worst_params = hour();
    worst_params.classes[1].batches_per_hour *= 1.3;
    let mut cases = BTreeMap::new();
    cases.insert(Case::Worst, run(worst_params));
    cdf_input(&base, &cases, per_class)
}

#[test]
fn per_class_and_case_curves_join_the_legend() {
    let input = with_high_demand(true);
    let svg = cdf_chart(&input, &Theme::LIGHT, 760).svg;
    for label in [
        "expected demand (all classes)",
        "high demand",
        "nightly-batch",
        "api",
    ] {
        assert!(
            svg.contains(&format!(">{label}<")) || svg.contains(label),
            "{label}"
        );
    }
}

/// The attribute `name` of the SVG text `label`, as plotters writes it
/// (`<text x=".." y="..." ...>`, the label, a line break, `</text>`).
fn text_attr<'a>(svg: &'a str, label: &str, name: &str) -> Option<&'a str> {
    let end = svg.find(&format!("{label}\n</text>"))?;
    let start = svg[..end].rfind("<text")?;
    let value = svg[start..end].split(&format!(" {name}=\"")).nth(1)?;
    value.split('"').next()
}

/// The y \[px\] of the SVG text `label`.
fn text_y(svg: &str, label: &str) -> Option<f64> {
    text_attr(svg, label, "y")?.parse().ok()
}

// On a phone the legend boxed inside the plot hid the curves' lower half:
// it sits under the plot, at every width. The deadlines' labels sit low in
// the plot, right of their line where they fit: there a CDF has no curve
// (at the top they ran over the p99).
#[test]
fn the_cdf_keeps_its_words_off_its_curves() {
    let input = with_high_demand(false);
    for width in [372, 760] {
        let chart = cdf_chart(&input, &Theme::LIGHT, width);
        let plot_bottom = f64::from(chart_height(width, 0.52, 300));
        assert!(f64::from(chart.height) > plot_bottom, "{width}");
        for label in ["expected demand (all classes)", "high demand case"] {
            let y = text_y(&chart.svg, label).expect(label);
            assert!(
                y > plot_bottom,
                "{label} at y {y}, the plot ends at {plot_bottom}"
            );
        }
        let deadline = text_y(&chart.svg, "deadline api 60.0 s").expect("labelled");
        assert!(
            deadline > plot_bottom / 2.0 && deadline < plot_bottom,
            "the deadline's label at y {deadline}"
        );
        assert_eq!(
            text_attr(&chart.svg, "deadline api 60.0 s", "text-anchor"),
            Some("start"),
            "right of its line"
        );
    }
}

// A placeholder's sentence ran off both sides of a phone's chart, and a
// quote in it (a class's name in a message) ended the SVG's attribute.
#[test]
fn a_chart_holding_a_sentence_wraps_it_and_escapes_it() {
    let message = "Service curve: the case \"high demand\" is not a valid scenario: \
                   Class \"chat\", trace request 2, input tokens: must be at least 1…";
    let phone = message_chart("Service curve", message, &Theme::LIGHT, 372, 300);
    assert!(phone.svg.matches("<tspan").count() >= 3, "{}", phone.svg);
    assert!(
        phone
            .svg
            .contains("aria-label=\"Service curve: the case &quot;high demand&quot;"),
        "{}",
        phone.svg
    );
    assert!(!phone.svg.contains("\"high demand\""), "{}", phone.svg);
    assert_eq!(phone.title, "Service curve");
    let wide = message_chart(
        "Service curve",
        "Waiting for the simulation…",
        &Theme::LIGHT,
        760,
        300,
    );
    assert_eq!(wide.svg.matches("<tspan").count(), 1, "{}", wide.svg);
}

#[test]
fn an_empty_run_says_so_instead_of_drawing_nothing() {
    let chart = cdf_chart(&Default::default(), &Theme::LIGHT, 600);
    assert!(chart.svg.contains("No request completed"));
}

#[test]
fn the_series_chart_has_four_panels() {
    let result = run(hour());
    let svg = series_chart(&result.report.series, &Theme::DARK, 760).svg;
    for panel in [
        "Waiting requests",
        "Running sequences",
        "KV cache used",
        "Replicas",
    ] {
        assert!(svg.contains(panel), "{panel}");
    }
}

#[test]
fn charts_are_drawn_about_as_wide_as_they_are_shown() {
    assert_eq!(chart_width(1100.0), 504);
    assert_eq!(chart_width(390.0), 330);
    assert_eq!(chart_width(3000.0), 960);
}

/// The attributes of every `<tag .../>` element of an SVG, in order.
fn elements(svg: &str, tag: &str) -> Vec<Vec<(String, String)>> {
    svg.split(&format!("<{tag} "))
        .skip(1)
        .map(|rest| {
            let body = &rest[..rest.find('>').expect("a closed tag")];
            body.split('"')
                .collect::<Vec<_>>()
                .chunks(2)
                .filter(|pair| pair.len() == 2)
                .map(|pair| {
                    let name = pair[0].trim().trim_end_matches('=').to_string();
                    (name, pair[1].to_string())
                })
                .collect()
        })
        .collect()
}

fn attribute<'a>(element: &'a [(String, String)], name: &str) -> &'a str {
    element
        .iter()
        .find(|(n, _)| n == name)
        .map_or("", |(_, v)| v.as_str())
}

fn centre(circle: &[(String, String)]) -> (f64, f64) {
    let number = |name| attribute(circle, name).parse::<f64>().expect("a number");
    (number("cx"), number("cy"))
}

#[test]
fn the_lengths_chart_bins_every_pair_into_its_cell() {
    // Two far-apart pairs, 300 and 100 times: two cells in opposite
    // corners of the grid hold them all.
    let mut pairs = vec![(30, 900); 300];
    pairs.extend(vec![(5000, 12); 100]);
    let grid = length_grid(&pairs).expect("pairs");
    let filled: Vec<(usize, usize, u32)> = grid
        .counts
        .iter()
        .enumerate()
        .flat_map(|(x, column)| column.iter().enumerate().map(move |(y, n)| (x, y, *n)))
        .filter(|c| c.2 > 0)
        .collect();
    assert_eq!(filled, [(0, 15, 300), (23, 0, 100)]);
    assert_eq!(grid.input_edges.first(), Some(&30.0));
    assert_eq!(grid.output_edges.last(), Some(&900.0));
    assert!(length_grid(&[]).is_none());
    for theme in [Theme::LIGHT, Theme::DARK] {
        let chart = lengths_chart(&pairs, &theme, 300, 190);
        assert!(chart.svg.contains(LENGTHS_TITLE), "titled");
        assert!(chart.svg.contains("Prompt tokens") && chart.svg.contains("Output tokens"));
        let cells = elements(&chart.svg, "rect")
            .into_iter()
            .filter(|r| attribute(r, "fill").eq_ignore_ascii_case(&hex(theme.base)))
            .count();
        assert_eq!(
            cells, 2,
            "one rectangle per filled cell, in the theme's colour"
        );
    }
}

#[test]
fn tick_labels_keep_the_digits_of_the_step_and_drop_float_noise() {
    // A tornado's P(miss) axis, about 0.023 pp wide with 9 labels.
    assert_eq!(tick_label(1.7e-18, 0.023, 9), "0");
    assert_eq!(tick_label(-1.7e-18, 0.023, 9), "0");
    assert_eq!(tick_label(0.0025, 0.023, 9), "0.0025");
    assert_eq!(tick_label(-0.005000000000000001, 0.023, 9), "-0.005");
    // Steps of 0.25 and of 20; thousands are grouped.
    assert_eq!(tick_label(1.25, 2.5, 10), "1.25");
    assert_eq!(tick_label(0.30000000000000004, 2.5, 10), "0.3");
    assert_eq!(tick_label(60.00000001, 200.0, 10), "60");
    assert_eq!(tick_label(12000.0, 40000.0, 5), "12,000");
}

/// The text of every `<text>` element of an SVG.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text ")
        .skip(1)
        .filter_map(|rest| {
            let body = &rest[rest.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim())
        })
        .collect()
}

/// The WCAG contrast ratio of two colours.
fn contrast(a: plotters::style::RGBColor, b: plotters::style::RGBColor) -> f64 {
    let luminance = |plotters::style::RGBColor(r, g, b)| {
        let linear = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.03928 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    };
    let (x, y) = (luminance(a), luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

// The default day's p50 sat just left of the api deadline, and its label
// ran across the deadline's dashed line ("p50 2|3.7 s"). A mark's label
// moves right past a line it would cross, and has a box of the background
// behind it.
#[test]
fn a_marks_label_keeps_off_the_deadline_lines() {
    let points: Vec<[f64; 2]> = (0..=60)
        .map(|i| [10f64.powf(f64::from(i) / 20.0), f64::from(i) / 60.0])
        .collect();
    let input = CdfInput {
        curves: vec![sojourn_app::charts::CdfCurve {
            label: "expected demand (all classes)".into(),
            kind: sojourn_app::charts::CurveKind::Base,
            points,
        }],
        deadlines: vec![("deadline api".into(), 60.0)],
        markers: vec![("p50".into(), 45.0, 0.5)],
    };
    let theme = Theme::LIGHT;
    let svg = cdf_chart(&input, &theme, 760).svg;
    let deadline = hex(theme.deadline).to_ascii_lowercase();
    let line_x: Vec<f64> = ["line", "polyline"]
        .into_iter()
        .flat_map(|tag| elements(&svg, tag))
        .filter(|e| attribute(e, "stroke").to_ascii_lowercase() == deadline)
        .flat_map(|e| {
            let xs: Vec<f64> = match attribute(&e, "points") {
                "" => vec![attribute(&e, "x1").parse().expect("x1")],
                points => points
                    .split_whitespace()
                    .map(|p| p.split(',').next().unwrap().parse().expect("x"))
                    .collect(),
            };
            xs
        })
        .collect();
    assert!(!line_x.is_empty(), "the deadline is drawn");
    let line = line_x[0];
    assert!(line_x.iter().all(|x| (x - line).abs() < 1.0), "{line_x:?}");
    let label = "p50 45.0 s";
    let x: f64 = text_attr(&svg, label, "x").expect(label).parse().unwrap();
    let font: f64 = text_attr(&svg, label, "font-size")
        .expect("font-size")
        .trim_end_matches("px")
        .parse()
        .unwrap();
    assert_eq!(text_attr(&svg, label, "text-anchor"), Some("start"));
    // The chart's own estimate of a label's width is 0.52 em a character;
    // allow 0.6 em.
    let width = label.chars().count() as f64 * font * 0.6;
    assert!(
        line < x || line > x + width,
        "the label spans {x:.0}-{:.0} px, across the deadline at {line:.0} px",
        x + width
    );
    // A box of the background behind each label: a rect about the label's
    // size (not the chart's own background) covering its start and most
    // of its estimated width.
    let background = hex(theme.background).to_ascii_lowercase();
    let boxed = |x: f64, width: f64| {
        elements(&svg, "rect").into_iter().any(|r| {
            let n = |name| attribute(&r, name).parse::<f64>().unwrap_or(f64::NAN);
            attribute(&r, "fill").to_ascii_lowercase() == background
                && n("x") <= x
                && n("x") + n("width") >= x + width * 0.8
                && n("width") < 2.0 * width
                && n("height") < 2.0 * font
        })
    };
    assert!(boxed(x, width), "a box behind {label}");
    let deadline_label = "deadline api 60.0 s";
    let deadline_x: f64 = text_attr(&svg, deadline_label, "x")
        .expect(deadline_label)
        .parse()
        .unwrap();
    let deadline_width = deadline_label.chars().count() as f64 * font * 0.6;
    assert!(
        boxed(deadline_x, deadline_width),
        "a box behind {deadline_label}"
    );
}

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
fn plan_charts_show_the_operating_point_and_the_tornado() {
    let mut params = hour();
    params.plan.replications = 2;
    params.plan.max_replicas = 16;
    params.plan.sensitivity.inputs = vec![
        SensitivityInput::ArrivalRate,
        SensitivityInput::OutputTokens,
    ];
    params.plan.sensitivity.replications = 1;
    params.plan.service_curve.load_multipliers = vec![0.5, 1.0, 2.0];
    let scenario = Scenario::try_from(params).expect("valid");
    let result = plan(&scenario, &PlanOptions::default()).expect("plans");
    let curve = result.service_curve.as_ref().expect("a curve");
    let svg = service_curve_chart(curve, &Theme::LIGHT, 760).svg;
    assert!(
        svg.contains("operating point"),
        "the operating point is marked"
    );
    assert!(svg.contains("today 1x") && svg.contains("goodput, right axis"));
    // The offered load drawn in its own colour, which stands out from the
    // background as the other marks do (WCAG: 3:1 for graphics).
    for theme in [Theme::LIGHT, Theme::DARK] {
        let svg = service_curve_chart(curve, &theme, 760).svg;
        let stroke = format!("stroke=\"{}\"", hex(theme.offered));
        assert!(
            svg.to_lowercase().contains(&stroke),
            "no {stroke} in the service curve"
        );
        assert_ne!(theme.offered, theme.grid);
        let ratio = contrast(theme.offered, theme.background);
        assert!(ratio >= 3.0, "offered line at {ratio:.2}:1");
    }
    // No target listed: the default P(miss) target of each class binds.
    let target = curve.target.as_ref().expect("a binding target");
    assert_eq!(target.metric, CheckMetric::MissProbability);
    assert!(svg.contains(&format!("{} (mean)", target.measure)));
    let sensitivity = result.sensitivity.as_ref().expect("sensitivity");
    let rows = tornado_rows(sensitivity, TornadoMetric::MissProbability);
    assert_eq!(rows.len(), 2);
    let svg = tornado_chart(
        &rows,
        TornadoMetric::MissProbability,
        sensitivity.delta,
        false,
        &Theme::LIGHT,
        760,
    )
    .svg;
    assert!(svg.contains("arrival rate") && svg.contains("output tokens"));
    assert!(svg.contains("change in P(miss)"));
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

/// Five fleets: two meet the targets, one is uncertain, two do not; three
/// are on the frontier, the second of them chosen.
fn explored() -> ParetoInput {
    let point = |label: &str, cost, ratio, verdict, on_frontier| ParetoPoint {
        label: label.to_string(),
        cost,
        ratio,
        worst_check: Some("api: p99 TTFT <= 2 s".to_string()),
        verdict,
        on_frontier,
    };
    ParetoInput {
        points: vec![
            point(
                "A100 80GB x1, FCFS: 1 + 1 replicas",
                2_000.0,
                30.0,
                Verdict::NotMet,
                true,
            ),
            point(
                "H100 SXM x1, priority: 1 + 1 replicas",
                4_880.0,
                0.6,
                Verdict::Met,
                true,
            ),
            point(
                "H100 SXM x1, EDF: 2 + 1 replicas",
                7_000.0,
                0.4,
                Verdict::Met,
                true,
            ),
            point(
                "H200 SXM x1, SIF: 1 + 1 replicas",
                7_500.0,
                1.2,
                Verdict::Uncertain,
                false,
            ),
            point(
                "H200 SXM x1, FCFS: 2 + 1 replicas",
                9_000.0,
                50.0,
                Verdict::NotMet,
                false,
            ),
        ],
        chosen: Some(1),
        priced: true,
    }
}

#[test]
fn the_pareto_chart_draws_every_fleet_the_frontier_and_the_choice() {
    let input = explored();
    for theme in [Theme::LIGHT, Theme::DARK] {
        let svg = pareto_chart(&input, &theme, 760).svg;
        assert!(
            svg.contains("<title>Cost against the worst target's margin: 5 fleets decided, 3 on the frontier; chosen: H100 SXM x1, priority: 1 + 1 replicas (nearest its bound: api: p99 TTFT &lt;= 2 s, at 0.6x)</title>"),
            "{svg:.400}"
        );
        let circles = elements(&svg, "circle");
        // The fleets' dots (the legend's samples are a size smaller).
        let dots = |color: String| -> Vec<(f64, f64)> {
            circles
                .iter()
                .filter(|c| attribute(c, "r") == "5")
                .filter(|c| attribute(c, "fill").eq_ignore_ascii_case(&color))
                .map(|c| centre(c))
                .collect()
        };
        let met = dots(hex(theme.best));
        assert_eq!(met.len(), 2, "met");
        assert_eq!(dots(hex(theme.deadline)).len(), 1, "uncertain");
        assert_eq!(dots(hex(theme.worst)).len(), 2, "not met");

        // The chosen fleet: one ring, unfilled, around the cheaper met dot.
        let rings: Vec<(f64, f64)> = circles
            .iter()
            .filter(|c| attribute(c, "fill") == "none")
            .map(|c| centre(c))
            .collect();
        let cheaper_met = met
            .iter()
            .copied()
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("a met dot");
        assert_eq!(rings, [cheaper_met], "one ring, on the cheaper met fleet");
        assert!(
            svg.contains("\nchosen: H100 SXM x1, priority\n") && svg.contains("\n1 + 1 replicas\n"),
            "the choice named, its configuration over its fleet"
        );

        // The frontier: a staircase through the three frontier fleets, on
        // to the right edge (the longest line in the frontier's colour).
        let frontier = elements(&svg, "polyline")
            .into_iter()
            .filter(|l| attribute(l, "stroke").eq_ignore_ascii_case(&hex(theme.base)))
            .map(|l| {
                attribute(&l, "points")
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').expect("x,y");
                        (x.parse::<f64>().unwrap(), y.parse::<f64>().unwrap())
                    })
                    .collect::<Vec<_>>()
            })
            .max_by_key(Vec::len)
            .expect("a frontier line");
        assert_eq!(
            frontier.len(),
            6,
            "3 corners, 2 steps between them, 1 run on: {frontier:?}"
        );
        for pair in frontier.windows(2) {
            let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
            assert!(
                x1 >= x0 && y1 >= y0,
                "cheaper first, the ratio falling: {frontier:?}"
            );
            assert!(x1 == x0 || y1 == y0, "steps, not slopes: {frontier:?}");
        }
        assert!(
            frontier.contains(&cheaper_met),
            "the choice is on the frontier"
        );

        assert!(
            svg.contains("1x: a target at its bound (below: met)"),
            "the legend names the bound's line"
        );
        assert!(svg.contains("USD per month, with the reserve"));
        assert!(svg.contains("worst target: value / bound"));
        assert!(svg.contains("Pareto frontier") && svg.contains("targets not met"));
    }
}

#[test]
fn an_unpriced_pareto_chart_counts_gpus_and_an_empty_one_says_why() {
    // At most 3 GPUs: plotters' ticks fall every half GPU.
    let mut input = ParetoInput {
        priced: false,
        ..explored()
    };
    for (point, gpus) in input.points.iter_mut().zip([2.0, 2.0, 3.0, 3.0, 3.0]) {
        point.cost = gpus;
    }
    let svg = pareto_chart(&input, &Theme::LIGHT, 760).svg;
    assert!(svg.contains("GPUs, with the reserve"));
    // Tick labels are whole GPUs, each once (a half GPU rounded to a
    // whole one made "1, 1, 2, 2").
    let ticks: Vec<&str> = svg
        .split("text-anchor=\"middle\"")
        .skip(1)
        .filter_map(|rest| rest.split('\n').nth(1))
        .filter(|t| t.chars().all(|c| c.is_ascii_digit() || c == ','))
        .collect();
    let mut unique = ticks.clone();
    unique.dedup();
    assert!(ticks.len() >= 3 && unique == ticks, "{ticks:?}");
    let empty = pareto_chart(&ParetoInput::default(), &Theme::LIGHT, 400).svg;
    assert!(empty.contains("No fleet was decided"), "{empty}");
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

/// A tornado row.
fn bar(label: &str, low: f64, high: f64) -> TornadoRow {
    TornadoRow {
        label: label.to_string(),
        low,
        high,
    }
}

#[test]
fn tornado_rows_are_ordered_by_the_length_drawn() {
    // Bars on both sides add up; on one side the longer counts. Equal
    // lengths keep their order.
    let mut rows = vec![
        bar("none", 0.0, 0.0),
        bar("one side", 2.0, 5.0),
        bar("both sides", -4.0, 3.0),
        bar("tie", 0.0, -5.0),
        bar("small", 0.5, -0.5),
    ];
    assert_eq!(rows[2].drawn_length(), 7.0);
    assert_eq!(rows[1].drawn_length(), 5.0);
    sort_by_drawn_length(&mut rows);
    let order: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(order, ["both sides", "one side", "tie", "small", "none"]);
}

/// The y extent (top, bottom) of every bar (a `<rect>` drawn a little
/// transparent) filled with `color`.
fn rects_of(svg: &str, color: &str) -> Vec<(f64, f64)> {
    elements(svg, "rect")
        .iter()
        .filter(|r| {
            attribute(r, "fill").eq_ignore_ascii_case(color) && attribute(r, "opacity") == "0.85"
        })
        .map(|r| {
            let number = |name| attribute(r, name).parse::<f64>().expect("a number");
            (number("y"), number("y") + number("height"))
        })
        .collect()
}

#[test]
fn the_tornado_legend_sits_under_every_bar_and_empty_rows_say_so() {
    let rows = [bar("arrival rate", -3.0, 4.0), bar("price", 0.0, 0.01)];
    let theme = Theme::LIGHT;
    let svg = tornado_chart(&rows, TornadoMetric::CostPerSuccess, 0.2, true, &theme, 760).svg;
    // Bars are drawn a little transparent, the legend's samples opaque.
    let bars = rects_of(&svg, &hex(theme.base));
    let bars: Vec<_> = bars
        .into_iter()
        .chain(rects_of(&svg, &hex(theme.deadline)))
        .collect();
    let bar_bottom = bars.iter().map(|b| b.1).fold(0.0, f64::max);
    let samples: Vec<_> = elements(&svg, "rect")
        .into_iter()
        .filter(|r| {
            attribute(r, "opacity") == "1"
                && attribute(r, "fill").eq_ignore_ascii_case(&hex(theme.base))
        })
        .collect();
    assert_eq!(samples.len(), 1, "one legend sample per colour");
    let sample_top: f64 = attribute(&samples[0], "y").parse().expect("a number");
    assert!(sample_top > bar_bottom, "{sample_top} > {bar_bottom}");
    assert!(
        svg.contains("no visible change"),
        "the price row has no bar"
    );
    assert!(svg.contains("input x 0.8") && svg.contains("input x 1.2"));
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

/// A curve on 4 replicas whose p90 TPOT crosses 50 ms between 1x and 1.5x.
fn tpot_curve(sla_limit_load: Option<f64>) -> ServiceCurve {
    let point = |load: f64, tpot_s: f64| CurvePoint {
        load,
        offered_per_s: 10.0 * load,
        offered_per_replica_per_s: 2.5 * load,
        goodput_per_s: 10.0 * load.min(1.6),
        p_miss: 0.0,
        meets: tpot_s <= 0.05,
        worst_ratio: tpot_s / 0.05,
        replications: 2,
        busy_fraction: 0.5 * load,
        p99_waiting_per_replica: 0.0,
        p99_kv_utilization: 0.0,
        target_mean: Some(tpot_s * 0.9),
        target_upper: Some(tpot_s),
    };
    ServiceCurve {
        candidate: "H100 TP1".to_string(),
        replicas: 4,
        target: Some(CurveTarget {
            description: "chat: p90 TPOT <= 50 ms".to_string(),
            metric: CheckMetric::Tpot,
            measure: "p90 TPOT of chat".to_string(),
            bound: "50 ms".to_string(),
            threshold: 0.05,
        }),
        points: vec![
            point(0.5, 0.03),
            point(1.0, 0.045),
            point(1.5, 0.06),
            point(2.0, 0.4),
        ],
        knee_load: Some(1.5),
        sla_limit_load,
        operating_load: sla_limit_load.unwrap_or(1.2),
        headroom_fraction: 0.2,
        replications: 2,
    }
}

#[test]
fn the_service_curve_follows_its_binding_target_and_marks_today() {
    let curve = tpot_curve(Some(1.25));
    let chart = service_curve_chart(&curve, &Theme::LIGHT, 760);
    // The name (for file names) is short; the label screen readers read
    // gives the marks and the reading.
    assert_eq!(
        chart.title,
        "Service curve: p90 TPOT of chat and goodput against offered load on 4 replicas of H100 TP1"
    );
    assert!(chart.svg.contains(
        "on 4 replicas of H100 TP1; today 1x, SLA limit 1.25x, knee 1.5x, operating point 1.25x. \
         Traffic can grow 25%"
    ));
    for text in [
        "p90 TPOT of chat (ms)",
        "p90 TPOT of chat (mean)",
        "bound 50 ms",
        "today 1x",
    ] {
        assert!(chart.svg.contains(text), "{text}");
    }
    // The reading is drawn under the legend, in words.
    assert!(chart.svg.contains("Traffic can grow 25%"));
    // The 2x point's 400 ms is far past the bound: the axis stops at three
    // times the bound (150 ms, with a margin) so that the bound stays readable.
    let texts = texts(&chart.svg);
    assert!(
        texts.contains(&"150") && !texts.contains(&"400"),
        "{texts:?}"
    );
}

#[test]
fn the_curve_says_what_its_headroom_means() {
    assert_eq!(
        curve_reading(&tpot_curve(Some(1.13))),
        "Traffic can grow 13% (to 1.13x today's load) before the p90 TPOT of chat exceeds 50 ms \
         on 4 replicas of H100 TP1. The operating point, 1.13x, is the most load the plan puts on \
         these replicas: the SLA limit, where a target starts to fail."
    );
    assert_eq!(
        curve_reading(&tpot_curve(None)),
        "The p90 TPOT of chat stays within 50 ms at every load tried on 4 replicas of H100 TP1, \
         up to 2x today's: traffic can grow at least 100%. The operating point, 1.2x, is the most \
         load the plan puts on these replicas: 20% below the knee at 1.5x, where extra load stops \
         turning into goodput."
    );
    let mut below = tpot_curve(Some(0.9));
    below.operating_load = 0.9;
    assert!(curve_reading(&below).contains(
        "exceeds 50 ms above 0.9x today's load on 4 replicas of H100 TP1: no room to grow"
    ));
    assert!(curve_reading(&below).ends_with("so the plan adds replicas."));
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

//! The plan's charts: the operating point, the tornado of sensitivity
//! and the service curve of the binding target.

use super::*;

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

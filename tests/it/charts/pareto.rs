//! The cost against worst-check frontier: every fleet decided, the
//! frontier, the chosen fleet and its label, priced or counted in GPUs.

use super::*;

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

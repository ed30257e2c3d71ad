//! What the results area shows from a plan: its configuration and search,
//! the frontier, the cases and sensitivity, the verdict on both fleets and
//! the cost tables (one plan of the default scenario, shared).

use super::*;

/// One plan of the default scenario over two hours, shared by the tests
/// below (a plan takes seconds): with its scenario.
fn planned() -> &'static (ScenarioParams, PlanResult) {
    static PLANNED: OnceLock<(ScenarioParams, PlanResult)> = OnceLock::new();
    PLANNED.get_or_init(|| {
        let mut params = ScenarioParams {
            run: RunParams {
                horizon_s: 2.0 * 3600.0,
                ..RunParams::default()
            },
            ..ScenarioParams::overnight_batch()
        };
        params.plan.max_replicas = 16;
        params.plan.sensitivity.inputs =
            vec![SensitivityInput::ArrivalRate, SensitivityInput::Price];
        params.plan.service_curve.load_multipliers = vec![0.5, 1.0, 2.0];
        let scenario = Scenario::try_from(params.clone()).expect("valid");
        let result = plan(&scenario, &PlanOptions::default()).expect("plans");
        (params, result)
    })
}

#[test]
fn the_plan_names_its_configuration_and_what_the_search_did() {
    let (_, result) = planned();
    let chosen = &result.configurations[result.chosen.expect("a plan")];
    let rec = result.recommendation.as_ref().expect("a plan");
    let statement = plan_statement(result);
    assert_eq!(
        statement.fleet,
        format!(
            "{} + {} replicas of {}",
            rec.steady_replicas,
            rec.failure_reserve_replicas + rec.warm_idle_replicas,
            chosen.name
        )
    );
    assert!(
        statement.detail.contains(&format!(
            "{} scheduling",
            discipline_label(chosen.discipline)
        )),
        "{}",
        statement.detail
    );
    assert!(
        statement.detail.ends_with(" per month with the reserve"),
        "{}",
        statement.detail
    );
    assert_eq!(
        decision_summary(result),
        format!(
            "Decided by the upper end of the 95% interval, {} to {} replications per fleet",
            result.min_replications, result.replications
        )
    );
    let mut once = result.clone();
    once.min_replications = once.replications;
    assert!(
        decision_summary(&once)
            .ends_with(&format!(", {} replications per fleet", once.replications)),
        "{}",
        decision_summary(&once)
    );
    let figures = plan_figures(result);
    for figure in &figures {
        assert!(
            figure.topic.help().is_some(),
            "{} has no explanation",
            figure.label
        );
    }
    assert_eq!(figures[0].label, "Planned configuration");
    assert_eq!(figures[0].value, chosen.name);
    // The interval is the cost per success's; the monthly cost is the
    // fleet's, after it (it read as the month's interval).
    let cost = &figures[2];
    assert_eq!(cost.label, "Planned cost per success");
    assert!(
        cost.detail.starts_with("95% CI $") && cost.detail.ends_with(" per month for the fleet"),
        "{}",
        cost.detail
    );
    let e = &result.search_effort;
    assert_eq!(
        search_effort_line(result),
        format!(
            "{} configurations, {} pruned, {} simulations instead of {} for a plain search",
            result.configurations.len(),
            e.pruned,
            e.simulations,
            e.plain_simulations
        )
    );
}

#[test]
fn the_pareto_input_holds_every_decided_fleet_and_marks_the_choice() {
    let (_, result) = planned();
    let input = pareto_input(result);
    assert_eq!(input.points.len(), result.explored.len());
    assert!(input.priced, "the default scenario has prices");
    let chosen = &input.points[input.chosen.expect("the chosen fleet was decided")];
    let configuration = &result.configurations[result.chosen.expect("a plan")];
    assert!(
        chosen.label.starts_with(&format!(
            "{}: {} + ",
            configuration.name,
            configuration.search.found.expect("found")
        )),
        "{}",
        chosen.label
    );
    assert_eq!(chosen.verdict, Verdict::Met);
    assert!(chosen.on_frontier, "nothing cheaper meets the targets");
    assert!(chosen.ratio <= 1.0, "every target met: {}", chosen.ratio);
    assert!(chosen.worst_check.is_some());
    // Every cheaper fleet fails a target: its ratio is above 1.
    for p in input.points.iter().filter(|p| p.cost < chosen.cost) {
        assert!(p.ratio > 1.0, "{p:?}");
    }
}

#[test]
fn covering_high_demand_reads_in_money_or_gpus() {
    let (_, result) = planned();
    let mut result = result.clone();
    result.worst_case_cover = Some(Cover {
        case: "high demand".to_string(),
        configuration: "H100 SXM x1, priority".to_string(),
        steady_replicas: 3,
        total_replicas: 4,
        total_gpus: 4,
        usd_per_month: Some(9_260.0),
        extra_usd_per_month: Some(4_380.0),
        extra_gpus: 2,
    });
    assert_eq!(
        cover_sentence(&result).as_deref(),
        Some(
            "Covering high demand takes 3 + 1 replicas of H100 SXM x1, priority: $9,260 per month at the expected prices, $4,380 more than the plan."
        )
    );
    if let Some(cover) = result.worst_case_cover.as_mut() {
        cover.extra_usd_per_month = Some(0.0);
    }
    assert!(cover_sentence(&result).is_some_and(|s| {
        s.ends_with("$9,260 per month at the expected prices, within the plan's budget.")
    }),);
    if let Some(cover) = result.worst_case_cover.as_mut() {
        cover.usd_per_month = None;
        cover.extra_usd_per_month = None;
    }
    assert!(
        cover_sentence(&result).is_some_and(|s| s.ends_with(": 4 GPUs, 2 more than the plan.")),
    );
    result.worst_case_cover = None;
    assert_eq!(cover_sentence(&result), None);
}

#[test]
fn the_sensitivity_shows_its_replanned_fleets() {
    let (_, result) = planned();
    let sensitivity = result.sensitivity.as_ref().expect("sensitivity");
    let replanned = sensitivity
        .rows
        .iter()
        .filter(|r| r.replanned_replicas_low.is_some() || r.replanned_replicas_high.is_some())
        .count();
    assert!(replanned > 0, "price at least is re-planned");
    // The reading says what the impact that picks them measures, beyond
    // the cost and P(miss) the tornado draws.
    let reading = sensitivity_reading(sensitivity);
    assert!(reading.starts_with(&sensitivity.reading), "{reading}");
    assert!(
        reading.contains(
            "An input's impact is its largest effect on cost per success, P(miss) or the target closest to its bound"
        ),
        "{reading}"
    );
    let table = replanned_table(result).expect("a table");
    assert_eq!(table.rows.len(), replanned);
    assert_eq!(
        table.headers(),
        [
            "input",
            "re-planned replicas low",
            "re-planned replicas high",
            "re-planned USD per month low",
            "re-planned USD per month high"
        ]
    );
    let price = table
        .rows
        .iter()
        .find(|r| r[0].text == "price")
        .expect("price is re-planned");
    assert!(price[3].text.starts_with('$') && price[4].text.starts_with('$'));
}

#[test]
fn an_unattainable_target_is_explained_in_the_verdict_only() {
    let mut params = ScenarioParams {
        run: RunParams {
            horizon_s: 1800.0,
            ..RunParams::default()
        },
        ..ScenarioParams::overnight_batch()
    };
    params.plan.candidates = None;
    params.plan.search.disciplines = Some(vec![Discipline::Fcfs]);
    params.plan.max_replicas = 2;
    // Half an hour of traffic cannot show a miss rate this small: even
    // with no misses, the exact bound stays above it.
    params.plan.targets = vec![TargetParams::miss_probability("api", 1e-9)];
    let scenario = Scenario::try_from(params.clone()).expect("valid");
    let result =
        plan(&scenario, &PlanOptions::default()).expect("an unattainable plan is a result");
    assert!(result.recommendation.is_none());
    // The verdict says why, in the search's words; the plan's statement
    // and figure point there rather than repeat it.
    let line = plan_line(&result);
    assert_eq!(line.fleet, "No fleet meets the targets");
    assert!(!line.met);
    assert!(
        line.detail
            .starts_with("With H100 SXM5 80GB x1, no fleet up to 2 replicas meets api: P("),
        "{}",
        line.detail
    );
    let statement = plan_statement(&result);
    assert_eq!(statement.fleet, "No fleet meets the targets");
    assert_eq!(
        statement.detail,
        "None of the 1 configuration searched meets every target; why is under the verdict, at the top of the results."
    );
    let figures = plan_figures(&result);
    assert_eq!(figures.len(), 1);
    assert!(!figures[0].detail.contains("no fleet up to"));
    assert_eq!(cover_sentence(&result), None);
    assert_eq!(replanned_table(&result), None);
    let input = pareto_input(&result);
    assert_eq!(input.chosen, None);
    assert!(input.points.iter().all(|p| p.verdict != Verdict::Met));
}

#[test]
fn the_plan_section_shows_each_case_replanned_once_there_is_a_plan() {
    let (_, result) = planned();
    let base = run(Some(3.0));
    let runs = [(Case::Base, &base)];
    let before = plan_cases_table(&runs, None);
    assert_eq!(
        before.headers(),
        [
            "case",
            "P(miss), configured fleet",
            "sojourn p99, configured fleet [s]",
            "cost per success, configured fleet [USD]"
        ]
    );
    assert_eq!(
        before.title,
        "Expected, low and high demand on the configured fleet (all classes, one simulation each)"
    );
    let after = plan_cases_table(&runs, Some(result));
    assert_eq!(after.id, "cases", "not the id of the whole table");
    assert_eq!(
        after.headers(),
        [
            "case",
            "own plan: configuration",
            "own plan: steady replicas",
            "own plan: reserve replicas",
            "own plan: GPUs",
            "own plan: USD per month",
            "own plan: USD per year",
            "own plan: cost per success [USD]",
            "plan's fleet: targets"
        ]
    );
    let cases: Vec<&str> = after.rows.iter().map(|r| r[0].text.as_str()).collect();
    assert_eq!(cases, ["expected demand", "low demand", "high demand"]);
    for (row, case) in after.rows.iter().zip(&result.scenarios) {
        assert!(
            result.configurations.iter().any(|c| c.name == row[1].text),
            "{} is re-planned to a configuration of the space, not {}",
            row[0].text,
            row[1].text
        );
        let found = case.search.found.expect("each case has a plan");
        assert_eq!(row[2].text, found.to_string());
        let month = case
            .search
            .cost
            .as_ref()
            .and_then(|c| c.fleet.usd_per_month)
            .expect("priced");
        assert_eq!(
            row[6].value,
            sojourn_engine::CellValue::Number(12.0 * month)
        );
        assert_eq!(row[8].text, case.at_plan_fleet.verdict.label());
    }
}

#[test]
fn once_planned_the_configured_fleet_is_judged_by_the_decision_rule() {
    let (params, result) = planned();
    let scenario = Scenario::try_from(params.clone()).expect("valid");
    let report = simulate(&scenario, &RunOptions::default()).expect("runs");
    let base = RunSummary::new(report, &scenario);
    let configured = result.configured.as_ref().expect("judged");
    let e = &configured.evaluation;
    assert!(e.replications >= 2, "{} replications", e.replications);
    let line = configured_line(&base, Some(result));
    assert!(
        line.ends_with(&format!(" over {} replications.", e.replications)),
        "{line}"
    );
    let table = sojourn_engine::verdict_table(&base, Some(result), true);
    assert!(
        table.title.starts_with(&format!(
            "Targets: the configured fleet (2 replicas, {} replications) and",
            e.replications
        )),
        "{}",
        table.title
    );
    // Each target's verdict and value from the plan's judgement, the value
    // with the bound the rule reads: the upper bound, or where the share of
    // requests over the bound decided "not met" (issue 40), that share.
    for (row, check) in table.rows.iter().zip(&e.checks) {
        assert_eq!(row[0].text, check.description);
        assert_eq!(row[1].text, check.verdict.label());
        let by_share = check.verdict == sojourn_engine::Verdict::NotMet
            && check.bounds[0] <= check.threshold
            && check.share_over.as_ref().is_some_and(|s| s.beyond());
        if by_share {
            assert!(
                row[2].text.contains(" (at least ") || row[2].text.contains(" over "),
                "{}",
                row[2].text
            );
        } else if check.bounds[1] > check.mean {
            assert!(row[2].text.contains(" (up to "), "{}", row[2].text);
        }
    }
    assert!(
        table
            .rows
            .iter()
            .any(|row| row[2].text.contains(" (up to ")),
        "{:?}",
        table.rows
    );
}

#[test]
fn the_verdict_names_both_fleets_and_what_they_cost() {
    let (params, result) = planned();
    let scenario = Scenario::try_from(params.clone()).expect("valid");
    let report = simulate(&scenario, &RunOptions::default()).expect("runs");
    let base = RunSummary::new(report, &scenario);
    let line = configured_line(&base, None);
    assert!(
        line.starts_with("The configured fleet, 2 replicas of H100 SXM5 80GB x1: "),
        "{line}"
    );
    assert!(line.contains(" of 3 targets met"), "{line}");
    assert!(line.ends_with("(one simulation)."), "{line}");
    // A plan of these inputs that did not judge it: the table says why,
    // in the plan's words.
    let mut unjudged = result.clone();
    unjudged.configured = None;
    unjudged.configured_not_judged =
        Some("the plan's search leaves out its own engine or cluster settings".into());
    let table = sojourn_engine::verdict_table(&base, Some(&unjudged), true);
    assert!(
        table.title.starts_with(
            "Targets: the configured fleet (2 replicas, one simulation: the plan's search leaves out its own engine or cluster settings)"
        ),
        "{}",
        table.title
    );
    // Every target, the configured fleet's verdict from its run (the plan
    // taken as one of earlier inputs), the plan's fleet's from the plan
    // (which meets every one).
    let table = sojourn_engine::verdict_table(&base, Some(result), false);
    assert!(
        table
            .title
            .starts_with("Targets: the configured fleet (2 replicas, one simulation) and"),
        "{}",
        table.title
    );
    assert_eq!(table.rows.len(), base.targets.checks.len());
    for (row, check) in table.rows.iter().zip(&base.targets.checks) {
        assert_eq!(row[0].text, check.description);
        assert_eq!(row[1].text, check.verdict.label());
        assert_eq!(row[3].text, "met");
        // P(miss) and busy time as percentages, with the bound the rule
        // reads when it differs from the value.
        assert!(
            row[2]
                .text
                .starts_with(&sojourn_engine::format_percent(check.mean)),
            "{}",
            row[2].text
        );
    }
    assert_eq!(
        table.headers(),
        [
            "target",
            "configured fleet: verdict",
            "configured fleet: value (bound)",
            "plan's fleet: verdict",
            "plan's fleet: value (bound)"
        ],
        "each fleet's verdict beside its value"
    );
    let plan = plan_line(result);
    let rec = result.recommendation.as_ref().expect("a plan");
    assert!(plan.met);
    assert!(
        plan.fleet.starts_with(&format!(
            "The plan: {} + 1 replicas of ",
            rec.steady_replicas
        )),
        "{}",
        plan.fleet
    );
    let month = rec.budget.fleet.usd_per_month.expect("priced");
    assert!(
        plan.detail.ends_with(&format!(
            "; {} per month, {} per year for this fleet (steady and reserve).",
            sojourn_engine::format_usd(month),
            sojourn_engine::format_usd(12.0 * month)
        )),
        "{}",
        plan.detail
    );
}

/// The chosen configuration beside the others that meet every target,
/// item by item, each at its smallest such fleet: the totals are the
/// searches' own, the others cheapest first, one column per configuration
/// up to five, and the title says how many more the results file holds.
#[test]
fn alternatives_cost_table_sets_the_choice_beside_the_others_that_meet() {
    let (_, result) = planned();
    let table = alternatives_cost_table(result).expect("a chosen configuration");
    let chosen = result.chosen.expect("a plan");
    let month = |i: usize| {
        result.configurations[i]
            .search
            .cost
            .as_ref()
            .and_then(|c| c.fleet.usd_per_month)
            .expect("priced")
    };
    let mut others: Vec<usize> = (0..result.configurations.len())
        .filter(|&i| i != chosen && result.configurations[i].search.found.is_some())
        .collect();
    assert!(
        !others.is_empty(),
        "the scenario's own settings meet on a larger fleet"
    );
    others.sort_by(|&a, &b| month(a).total_cmp(&month(b)));
    let shown: Vec<usize> = std::iter::once(chosen).chain(others).collect();
    assert_eq!(table.headers()[..3], ["item", "chosen", "alternative 1"]);
    assert_eq!(table.columns.len(), shown.len() + 1);
    assert_eq!(table.rows[0][0].text, "configuration");
    let row = |item: &str| item_row(&table, item);
    for (k, &i) in shown.iter().enumerate() {
        let c = &result.configurations[i];
        assert_eq!(table.rows[0][k + 1].text, c.name);
        let cost = c.search.cost.as_ref().expect("costed");
        assert_eq!(
            row("total [USD per month]")[k + 1].value,
            sojourn_engine::CellValue::Number(month(i))
        );
        assert_eq!(
            row("steady + reserve replicas")[k + 1].text,
            format!(
                "{} + {}",
                cost.fleet.steady_replicas, cost.fleet.reserve_replicas
            )
        );
    }
    assert!(
        !table.title.contains("more in the results file"),
        "{}",
        table.title
    );

    // Seven others: five columns, and the title counts the rest.
    let mut many = result.clone();
    let other = shown[1];
    many.configurations = std::iter::repeat_n(result.configurations[other].clone(), 7)
        .chain(std::iter::once(result.configurations[chosen].clone()))
        .collect();
    many.chosen = Some(7);
    let table = alternatives_cost_table(&many).expect("a chosen configuration");
    assert_eq!(table.columns.len(), COMPARED_CONFIGURATIONS + 1);
    assert!(
        table
            .title
            .ends_with("; 3 configurations more in the results file"),
        "{}",
        table.title
    );
    many.chosen = None;
    assert_eq!(alternatives_cost_table(&many), None);
}

/// The frontier's fleets carry their full cost (the other explored fleets
/// do not), and the frontier's table sets them side by side, cheapest
/// first, with the targets each meets and its worst class's P(miss).
#[test]
fn frontier_fleets_carry_their_full_cost_side_by_side() {
    let (_, result) = planned();
    assert!(result.explored.iter().any(|p| p.on_frontier));
    for p in &result.explored {
        assert_eq!(p.cost.is_some(), p.on_frontier, "{p:?}");
        if let Some(cost) = &p.cost {
            assert_eq!(cost.fleet.steady_replicas, p.replicas);
            assert_eq!(cost.fleet.usd_per_month, p.usd_per_month);
            assert_eq!(cost.replications, p.replications);
        }
    }
    let table = frontier_cost_table(result).expect("a frontier");
    let mut frontier: Vec<_> = result.explored.iter().filter(|p| p.on_frontier).collect();
    frontier.sort_by(|a, b| {
        a.usd_per_month
            .unwrap()
            .total_cmp(&b.usd_per_month.unwrap())
    });
    frontier.truncate(COMPARED_CONFIGURATIONS);
    assert_eq!(table.columns.len(), frontier.len() + 1);
    let row = |item: &str| item_row(&table, item);
    for (k, p) in frontier.iter().enumerate() {
        assert_eq!(
            row("configuration")[k + 1].text,
            result.configurations[p.configuration].name
        );
        assert_eq!(row("targets")[k + 1].text, p.verdict.label());
        assert_eq!(
            row("total [USD per month]")[k + 1].value,
            sojourn_engine::CellValue::Number(p.usd_per_month.unwrap())
        );
    }
    let mut none = result.clone();
    none.explored.clear();
    assert_eq!(frontier_cost_table(&none), None);
}

/// The row of a transposed table whose first cell is `item`.
fn item_row<'a>(table: &'a sojourn_engine::DataTable, item: &str) -> &'a [sojourn_engine::Cell] {
    table
        .rows
        .iter()
        .find(|r| r[0].text == item)
        .unwrap_or_else(|| panic!("no row {item}"))
}

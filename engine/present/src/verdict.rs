//! The verdict against the targets, the first thing a reader sees: every
//! target (each class's P(miss) and percentiles, and sustainability) with
//! the configured fleet's value (one simulation, then the plan's judgement
//! of it), the bound the decision rule reads and met / not met /
//! uncertain, beside the same for the plan's fleet; the decision
//! rule in two sentences; and the plan's costs and cases as a budget
//! (`plan_budget_table`, `plan_unit_costs_table`, `cases_budget_table`),
//! each saying which fleet it is for.

use super::run_tables::{count_cell, gpu_hours_cell, percent_cell, seconds_cell, usd_cell};
use super::summary::RunSummary;
use super::table::{Cell, DataTable};
use crate::format::{counted, duration, format_usd};
use crate::params::plan::DecisionRule;
use crate::plan::cost::HOURS_PER_MONTH;
use crate::plan::evaluate::{CheckMetric, Evaluation, TargetCheck, Verdict};
use crate::plan::{CostSummary, ExploredPoint, PlanResult, Recommendation};

/// Months in a year, for annual budgets.
const MONTHS_PER_YEAR: f64 = 12.0;

/// A check's value: a probability or fraction as a percentage, else a
/// duration; "no value" when it could not be evaluated.
fn value_cell(check: &TargetCheck, value: f64) -> Cell {
    if check.not_evaluated.is_some() {
        return Cell::text("no value");
    }
    match check.metric {
        CheckMetric::MissProbability | CheckMetric::OfferedLoad => percent_cell(value),
        _ => seconds_cell(value),
    }
}

/// The verdict of `check`, then its value with the bound the rule reads:
/// the upper bound ("3.23 % (up to 3.41 %)"), or, where the share of
/// requests over the bound decided "not met" (the interval over the
/// replications alone could not), that share: "3.7 min (31 % over 2 s)",
/// "5.2 % (at least 4.9 %)"; or two empty cells.
fn check_cells(check: Option<&TargetCheck>) -> [Cell; 2] {
    let Some(c) = check else {
        return [Cell::empty(), Cell::empty()];
    };
    let value = value_cell(c, c.mean);
    let bound = value_cell(c, c.bounds[1]);
    let by_share = c
        .share_over
        .as_ref()
        .filter(|s| c.verdict == Verdict::NotMet && c.bounds[0] <= c.threshold && s.beyond());
    let text = match by_share {
        _ if c.not_evaluated.is_some() => value.text.clone(),
        Some(s) if c.metric == CheckMetric::MissProbability => {
            format!("{} (at least {})", value.text, percent_cell(s.ci95[0]).text)
        }
        // The bound as the target wrote it ("2 s", not "2.0 s").
        Some(s) => format!(
            "{} ({} over {})",
            value.text,
            percent_cell(s.share()).text,
            duration(c.threshold)
        ),
        None if bound.text == value.text => value.text.clone(),
        None => format!("{} (up to {})", value.text, bound.text),
    };
    [
        Cell::text(c.verdict.label()),
        Cell {
            text,
            value: value.value,
        },
    ]
}

/// Every target of the scenario with the configured fleet's reading and,
/// once planned, the plan's steady fleet over its replications (the plan's
/// checks matched by their descriptions, so a plan of earlier inputs shows
/// only the targets it shares): both verdicts, then each value with the
/// upper bound the decision rule reads. The configured fleet is read from
/// the plan's judgement of it when the plan is of `run`'s inputs
/// (`plan_is_current`) and judged it, else from `run`, one simulation. The
/// verdicts come first, so that a narrow screen shows them before it
/// scrolls.
pub fn verdict_table(
    run: &RunSummary,
    plan: Option<&PlanResult>,
    plan_is_current: bool,
) -> DataTable {
    let rec = plan.and_then(|p| p.recommendation.as_ref());
    let current = plan.filter(|_| plan_is_current);
    let configured = current.and_then(|p| p.configured.as_ref());
    let planned = rec.map_or(String::new(), |r| {
        format!(
            " and the plan's fleet ({}, {})",
            counted(r.steady_replicas.into(), "replica"),
            counted(r.evaluation.replications.into(), "replication")
        )
    });
    let mut table = DataTable::new(
        "verdict",
        format!(
            "Targets: the configured fleet ({}){planned}",
            configured_reading(run, current)
        ),
        // Each fleet's verdict beside its value: the page shows each pair
        // under its fleet's name.
        &[
            "target",
            "configured fleet: verdict",
            "configured fleet: value (bound)",
            "plan's fleet: verdict",
            "plan's fleet: value (bound)",
        ],
    );
    for check in &run.targets.checks {
        let same = |c: &&TargetCheck| c.description == check.description;
        let planned = rec.and_then(|r| r.evaluation.checks.iter().find(same));
        let judged = configured.map_or(Some(check), |c| c.evaluation.checks.iter().find(same));
        let [configured_verdict, configured_value] = check_cells(judged);
        let [planned_verdict, planned_value] = check_cells(planned);
        table.rows.push(vec![
            Cell::text(&check.description),
            configured_verdict,
            configured_value,
            planned_verdict,
            planned_value,
        ]);
    }
    table
}

/// What the configured fleet's column reads: "2 replicas, 4 replications"
/// when `plan` (of the same inputs) judged it, else "2 replicas, one
/// simulation", saying why when the plan could not judge it.
fn configured_reading(run: &RunSummary, plan: Option<&PlanResult>) -> String {
    let replicas = counted(run.report.replicas.into(), "replica");
    match plan.map(|p| (p.configured.as_ref(), p.configured_not_judged.as_deref())) {
        Some((Some(c), _)) => format!(
            "{}, {}",
            counted(c.replicas.into(), "replica"),
            counted(c.evaluation.replications.into(), "replication")
        ),
        Some((None, Some(reason))) => format!("{replicas}, one simulation: {reason}"),
        Some((None, None)) | None => format!("{replicas}, one simulation"),
    }
}

/// "2 of 4 targets met, 1 not met, 1 uncertain".
pub fn verdict_counts(evaluation: &Evaluation) -> String {
    let count = |v: Verdict| evaluation.checks.iter().filter(|c| c.verdict == v).count();
    let total = evaluation.checks.len();
    let mut out = format!(
        "{} of {total} target{} met",
        count(Verdict::Met),
        if total == 1 { "" } else { "s" }
    );
    for v in [Verdict::NotMet, Verdict::Uncertain] {
        if count(v) > 0 {
            out.push_str(&format!(", {} {}", count(v), v.label()));
        }
    }
    out
}

/// The decision rule in two sentences, for beside the verdict.
pub fn decision_rule_short(rule: DecisionRule) -> &'static str {
    match rule {
        DecisionRule::Upper95 => {
            "A target is met when the upper end of its 95% interval is within it (for P(miss) at least the exact Clopper-Pearson bound, so no misses still bound it above zero); not met when the lower end is beyond it, or when the share of requests over the bound, pooled over every replication's requests, is beyond the share the target allows (1% for a p99) with 95% confidence; uncertain otherwise. Until the plan is done the configured fleet is one simulation, so a percentile's bound is its value; then the plan judges it, like its own fleet, over its replications."
        }
        DecisionRule::Mean => {
            "A target is met when the mean over the replications is within it: a point estimate, with no allowance for chance. Until the plan is done the configured fleet is one simulation; then the plan judges it, like its own fleet, over its replications."
        }
    }
}

/// A cost over the measured window, per month (`None` when the window
/// cost nothing to scale by).
fn per_month(usd: Option<f64>, window_h: f64) -> Option<f64> {
    usd.filter(|_| window_h > 0.0)
        .map(|u| u / window_h * HOURS_PER_MONTH)
}

/// The plan's fleet item by item, per month and per year: steady replicas,
/// reserve, fixed costs and the total.
pub fn plan_budget_table(rec: &Recommendation) -> DataTable {
    let fleet = &rec.budget.fleet;
    let basis = &rec.budget.basis;
    let mut table = DataTable::new(
        "plan-budget",
        format!(
            "Budget of the plan: {} + {} replicas of {}",
            rec.steady_replicas,
            rec.failure_reserve_replicas + rec.warm_idle_replicas,
            rec.candidate
        ),
        &["item", "replicas", "GPUs", "USD per month", "USD per year"],
    );
    let gpus = |replicas: u32| count_cell(u64::from(replicas * basis.gpus_per_replica));
    let row = |item: &str, replicas: Option<u32>, month: Option<f64>| {
        vec![
            Cell::text(item),
            replicas.map_or_else(Cell::empty, |r| count_cell(r.into())),
            replicas.map_or_else(Cell::empty, gpus),
            usd_cell(month),
            usd_cell(month.map(|m| m * MONTHS_PER_YEAR)),
        ]
    };
    table.rows = vec![
        row(
            "steady replicas",
            Some(fleet.steady_replicas),
            per_month(fleet.usd_steady, fleet.window_h),
        ),
        row(
            "reserve replicas",
            Some(fleet.reserve_replicas),
            per_month(fleet.usd_reserve, fleet.window_h),
        ),
        row(
            "fixed costs",
            None,
            basis.usd_per_gpu_hour.map(|_| basis.fixed_usd_per_month),
        ),
        row(
            "total",
            Some(fleet.steady_replicas + fleet.reserve_replicas),
            fleet.usd_per_month,
        ),
    ];
    table
}

/// What the plan's fleet costs per unit of work: per successful request
/// (with its 95% interval over the replications), per request and per
/// million prompt and output tokens.
pub fn plan_unit_costs_table(rec: &Recommendation) -> DataTable {
    let units = &rec.budget.units;
    let mut table = DataTable::new(
        "plan-unit-costs",
        format!(
            "Unit costs of the plan ({} + {} replicas)",
            rec.steady_replicas,
            rec.failure_reserve_replicas + rec.warm_idle_replicas
        ),
        &["item", "USD", "GPU-hours"],
    );
    let usd_only =
        |item: &str, usd: Option<f64>| vec![Cell::text(item), usd_cell(usd), Cell::empty()];
    table.rows.push(vec![
        Cell::text("per successful request"),
        usd_cell(units.usd_per_success),
        gpu_hours_cell(units.gpu_hours_per_success),
    ]);
    if let Some([low, high]) = rec.budget.usd_per_success_ci95 {
        table.rows.push(vec![
            Cell::text("per successful request, 95% interval"),
            Cell::text(format!("{} – {}", format_usd(low), format_usd(high))),
            Cell::empty(),
        ]);
    }
    table.rows.extend([
        usd_only("per request", units.usd_per_request),
        usd_only(
            "per million prompt tokens",
            units.usd_per_million_prompt_tokens,
        ),
        usd_only(
            "per million output tokens",
            units.usd_per_million_output_tokens,
        ),
    ]);
    table
}

/// The demand cases as fleets and budgets: each case re-planned (its own
/// cheapest configuration and fleet, priced at the case's prices), and
/// whether the plan's fleet meets the targets under it. A case no fleet
/// meets is not priced.
pub fn cases_budget_table(plan: &PlanResult) -> DataTable {
    let mut table = DataTable::new(
        "case-budgets",
        "Fleet and budget each demand case needs (re-planned; each priced at its case's prices)",
        &[
            "case",
            "own plan: configuration",
            "own plan: steady replicas",
            "own plan: reserve replicas",
            "own plan: GPUs",
            "own plan: USD per month",
            "own plan: USD per year",
            "own plan: cost per success [USD]",
            "plan's fleet: targets",
        ],
    );
    for s in &plan.scenarios {
        let cost = s.search.cost.as_ref().filter(|_| s.search.found.is_some());
        let mut row = vec![Cell::text(&s.label)];
        match (s.search.found, cost) {
            (Some(n), Some(c)) => {
                let month = c.fleet.usd_per_month;
                row.extend([
                    Cell::text(&s.search.configuration),
                    count_cell(n.into()),
                    count_cell(c.fleet.reserve_replicas.into()),
                    count_cell(c.fleet.gpus.into()),
                    usd_cell(month),
                    usd_cell(month.map(|m| m * MONTHS_PER_YEAR)),
                    usd_cell(c.units.usd_per_success),
                ]);
            }
            _ => {
                row.push(Cell::text("no fleet meets the targets"));
                row.extend((0..6).map(|_| Cell::empty()));
            }
        }
        row.push(Cell::text(s.at_plan_fleet.verdict.label()));
        table.rows.push(row);
    }
    table
}

/// Configurations [`alternatives_cost_table`] sets side by side: the chosen
/// one and the four cheapest others that meet every target (the rest are in
/// the plan's JSON).
pub const COMPARED_CONFIGURATIONS: usize = 5;

/// The chosen configuration beside the others whose search found a fleet
/// meeting every target (the runner-ups, and the scenario's own settings
/// when the "why" searched them), each at its smallest such fleet under
/// expected demand, item by item: what a finance partner compares before
/// taking the choice. One column per configuration (the chosen first, then
/// the others cheapest first, at most [`COMPARED_CONFIGURATIONS`]), named
/// in the first row; USD per month except the unit costs. `None` without a
/// chosen configuration.
pub fn alternatives_cost_table(plan: &PlanResult) -> Option<DataTable> {
    let chosen = plan.chosen?;
    let month_of = |i: usize| {
        let search = &plan.configurations[i].search;
        search
            .cost
            .as_ref()
            .filter(|_| search.found.is_some())
            .and_then(|c| c.fleet.usd_per_month)
            .unwrap_or(f64::INFINITY)
    };
    let mut others: Vec<usize> = (0..plan.configurations.len())
        .filter(|&i| i != chosen && plan.configurations[i].search.found.is_some())
        .collect();
    others.sort_by(|&a, &b| month_of(a).total_cmp(&month_of(b)).then(a.cmp(&b)));
    let more = others.len().saturating_sub(COMPARED_CONFIGURATIONS - 1);
    others.truncate(COMPARED_CONFIGURATIONS - 1);
    let shown: Vec<usize> = std::iter::once(chosen).chain(others).collect();
    let mut title = "Cost of the chosen configuration and the others that meet every target, each at its smallest such fleet (expected demand)".to_string();
    if more > 0 {
        title.push_str(&format!(
            "; {} more in the results file",
            counted(more as u64, "configuration")
        ));
    }
    const HEADERS: [&str; COMPARED_CONFIGURATIONS + 1] = [
        "item",
        "chosen",
        "alternative 1",
        "alternative 2",
        "alternative 3",
        "alternative 4",
    ];
    let mut table = DataTable::new("alternative-costs", title, &HEADERS[..=shown.len()]);
    let mut names = vec![Cell::text("configuration")];
    names.extend(
        shown
            .iter()
            .map(|&i| Cell::text(&plan.configurations[i].name)),
    );
    table.rows.push(names);
    let costs: Vec<_> = shown
        .iter()
        .map(|&i| {
            let search = &plan.configurations[i].search;
            search.cost.as_ref().filter(|_| search.found.is_some())
        })
        .collect();
    cost_rows(&mut table, &costs);
    Some(table)
}

/// The fleets on the cost versus P(miss) frontier, cheapest first, item by
/// item: which targets each meets, its worst class's P(miss) and the full
/// cost over its replications (at most [`COMPARED_CONFIGURATIONS`]; the
/// rest are in the plan's JSON). `None` when no point is on the frontier.
pub fn frontier_cost_table(plan: &PlanResult) -> Option<DataTable> {
    let mut points: Vec<_> = plan.explored.iter().filter(|p| p.on_frontier).collect();
    if points.is_empty() {
        return None;
    }
    points.sort_by(|a, b| {
        let usd = |p: &ExploredPoint| p.usd_per_month.unwrap_or(p.total_gpus as f64);
        usd(a).total_cmp(&usd(b))
    });
    let more = points.len().saturating_sub(COMPARED_CONFIGURATIONS);
    points.truncate(COMPARED_CONFIGURATIONS);
    let mut title =
        "Cost of the fleets on the cost against P(miss) frontier, cheapest first (expected demand)"
            .to_string();
    if more > 0 {
        title.push_str(&format!(
            "; {} more in the results file",
            counted(more as u64, "fleet")
        ));
    }
    const HEADERS: [&str; COMPARED_CONFIGURATIONS + 1] = [
        "item", "fleet 1", "fleet 2", "fleet 3", "fleet 4", "fleet 5",
    ];
    let mut table = DataTable::new("frontier-costs", title, &HEADERS[..=points.len()]);
    let mut push = |item: &str, cell: &dyn Fn(&ExploredPoint) -> Cell| {
        let mut cells = vec![Cell::text(item)];
        cells.extend(points.iter().map(|p| cell(p)));
        table.rows.push(cells);
    };
    push("configuration", &|p| {
        Cell::text(
            plan.configurations
                .get(p.configuration)
                .map_or(crate::format::MISSING, |c| c.name.as_str()),
        )
    });
    push("targets", &|p| Cell::text(p.verdict.label()));
    push("worst class P(miss)", &|p| percent_cell(p.p_miss));
    push("worst class P(miss), upper bound", &|p| {
        percent_cell(p.p_miss_upper)
    });
    push("replications", &|p| count_cell(p.replications.into()));
    let costs: Vec<_> = points.iter().map(|p| p.cost.as_ref()).collect();
    cost_rows(&mut table, &costs);
    Some(table)
}

/// A cost comparison's rows, one column per fleet (`None`: not priced):
/// replicas, GPUs, the budget per month and the unit costs.
fn cost_rows(table: &mut DataTable, costs: &[Option<&CostSummary>]) {
    let mut row = |item: &str, cell: &dyn Fn(&CostSummary) -> Cell| {
        let mut cells = vec![Cell::text(item)];
        cells.extend(costs.iter().map(|c| c.map_or_else(Cell::empty, cell)));
        table.rows.push(cells);
    };
    let month = |usd: Option<f64>, c: &CostSummary| usd_cell(per_month(usd, c.fleet.window_h));
    row("steady + reserve replicas", &|c| {
        Cell::text(format!(
            "{} + {}",
            c.fleet.steady_replicas, c.fleet.reserve_replicas
        ))
    });
    row("GPUs", &|c| count_cell(c.fleet.gpus.into()));
    row("steady replicas [USD per month]", &|c| {
        month(c.fleet.usd_steady, c)
    });
    row("reserve replicas [USD per month]", &|c| {
        month(c.fleet.usd_reserve, c)
    });
    row("fixed costs [USD per month]", &|c| {
        month(c.fleet.usd_fixed, c)
    });
    row("total [USD per month]", &|c| {
        usd_cell(c.fleet.usd_per_month)
    });
    row("per successful request [USD]", &|c| {
        usd_cell(c.units.usd_per_success)
    });
    row("per successful request, 95% interval [USD]", &|c| {
        c.usd_per_success_ci95
            .map_or_else(Cell::empty, |[low, high]| {
                Cell::text(format!("{} – {}", format_usd(low), format_usd(high)))
            })
    });
    row("per request [USD]", &|c| usd_cell(c.units.usd_per_request));
    row("per million prompt tokens [USD]", &|c| {
        usd_cell(c.units.usd_per_million_prompt_tokens)
    });
    row("per million output tokens [USD]", &|c| {
        usd_cell(c.units.usd_per_million_output_tokens)
    });
    row("of which failed work [USD per month]", &|c| {
        month(c.units.usd_failed_work, c)
    });
    row(
        "of which recomputation after preemption [USD per month]",
        &|c| month(c.units.usd_recomputation, c),
    );
    row("of which idle steady capacity [USD per month]", &|c| {
        month(c.units.usd_idle, c)
    });
    row("GPU-hours per successful request", &|c| {
        gpu_hours_cell(c.units.gpu_hours_per_success)
    });
}

//! `sojourn plan`: the capacity plan of a scenario as text (or JSON), and
//! `sojourn plan --bench`, which times the capacity searches of the
//! benchmark scenario.

use std::fmt::Write as _;
use std::time::Instant;

use sojourn_engine::{
    DataTable, PlanOptions, PlanProgress, PlanResult, Scenario, UnknownColumn,
    alternatives_cost_table, analytic_table, bench_plan, budget_table, capacity_searches,
    cases_table, checks_table, class_intervals_table, configurations_table, counted, curve_table,
    decision_label, format_multiple, format_number, format_or_missing, format_percent, format_usd,
    levers_table, plan_with_progress, recommendation_details, sensitivity_table, verdict_counts,
};

use crate::args::PlanArgs;
use crate::{load_scenario, pretty_json, write_table};

pub fn plan(args: &PlanArgs) -> Result<(), String> {
    let scenario = load_scenario(&args.path, args.seed)?;
    let options = PlanOptions {
        threads: args.threads,
        ..PlanOptions::default()
    };
    let options = if args.search_only {
        options.search_only()
    } else {
        options
    };
    let start = Instant::now();
    let mut show_progress = progress_printer();
    let result = plan_with_progress(&scenario, &options, &mut show_progress);
    eprint!("\r{:79}\r", "");
    let result = result.map_err(|e| e.to_string())?;
    if args.json {
        say!("{}", pretty_json(&result)?);
    } else {
        say_raw!("{}", plan_summary(&result).map_err(|e| e.to_string())?);
        say!(
            "{} simulations ({:.1} M requests) in {:.1} s",
            result.simulations,
            result.simulated_requests as f64 / 1e6,
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// A progress line on stderr, rewritten in place when stderr is a terminal.
fn progress_printer() -> impl FnMut(&PlanProgress) -> bool {
    use std::io::IsTerminal;
    let terminal = std::io::stderr().is_terminal();
    let mut last = String::new();
    move |p: &PlanProgress| {
        if terminal {
            let line = format!(
                "{:>3.0}% {} ({} of ~{} simulations)",
                100.0 * p.fraction,
                p.phase,
                p.simulations_done,
                p.simulations_estimated
            );
            if line != last {
                eprint!("\r{:79}\r{}", "", &line[..line.len().min(79)]);
                last = line;
            }
        }
        true
    }
}

pub fn bench(json: bool, threads: u32) -> Result<(), String> {
    let scenario = Scenario::try_from(bench_plan()).map_err(|e| e.to_string())?;
    let options = PlanOptions {
        threads,
        ..PlanOptions::default()
    };
    say!(
        "{}: about {:.0} requests per run, up to {} replicas, {} replications, {} threads",
        scenario.params().name,
        scenario.expected_requests(),
        scenario.params().plan.max_replicas,
        scenario.params().plan.replications,
        sojourn_engine::resolve_threads(threads)
    );
    let start = Instant::now();
    let (searches, simulations) =
        capacity_searches(&scenario, &options, &mut |_| true).map_err(|e| e.to_string())?;
    let wall = start.elapsed().as_secs_f64();
    if json {
        say!("{}", pretty_json(&searches)?);
    }
    for s in &searches {
        say!(
            "  {:<16} {:<60} ({} simulations, analytic guess {})",
            s.case,
            s.message,
            s.simulations,
            s.analytic_guess
                .map_or("none".to_string(), |g| g.to_string())
        );
    }
    say!(
        "explorations, expected + low + high demand: {wall:.2} s wall, {simulations} simulations ({:.2} s each)",
        wall / simulations.max(1) as f64
    );
    Ok(())
}

/// A table as a section: a blank line, its title, its text indented.
fn section(out: &mut String, table: &DataTable) {
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", table.title);
    write_table(out, table, "  ");
}

/// The plan as text, section by section, from the same tables as the page.
fn plan_summary(r: &PlanResult) -> Result<String, UnknownColumn> {
    let mut out = String::new();
    let _ = writeln!(out, "Plan for {} ({})", r.scenario_name, r.model);
    let _ = writeln!(out, "  success: {}", r.success_criterion);
    let _ = writeln!(
        out,
        "  targets ({} to {} replications, decided by the {}):",
        r.min_replications,
        r.replications,
        decision_label(r.decision)
    );
    for t in &r.targets {
        let _ = writeln!(out, "    - {t}");
    }
    let _ = writeln!(out, "  decision rule: {}", r.decision_rule);
    let _ = writeln!(out, "  searched:");
    for d in &r.search_space {
        let _ = writeln!(out, "    - {}: {}", d.name, d.values.join(", "));
    }
    write_configurations(&mut out, r)?;
    let e = &r.search_effort;
    let _ = writeln!(
        out,
        "  {} configurations, {} pruned; {} simulations, {} fewer than a plain search ({}: bisection over 1..max_replicas, every probe with {} replications)",
        e.configurations, e.pruned, e.simulations, e.saved, e.plain_simulations, r.replications
    );
    if !r.explanation.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "Why: {}", r.explanation);
    }
    // The choice beside the others that meet, when there are any.
    if let Some(table) = alternatives_cost_table(r).filter(|t| t.columns.len() > 2) {
        section(&mut out, &table);
    }
    write_configured(&mut out, r);
    if let Some(reason) = &r.unattainable {
        let _ = writeln!(out);
        let _ = writeln!(out, "No plan. {reason}");
    }
    if let Some(sentence) = r.binding_sentence() {
        let _ = writeln!(out);
        let _ = writeln!(out, "What sets the fleet: {sentence}");
    }
    if let Some(diagnosis) = r.diagnosis_sentence() {
        let _ = writeln!(out, "Why it binds: {diagnosis}");
    }
    if let Some(table) = levers_table(r) {
        section(&mut out, &table);
    }
    if let Some(p) = &r.recommendation {
        let _ = writeln!(out);
        let _ = writeln!(out, "The plan: {}", p.candidate);
        for (label, text) in recommendation_details(p) {
            let _ = writeln!(out, "  {label}: {text}");
        }
        for note in &p.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        section(&mut out, &budget_table(&p.budget));
        section(&mut out, &checks_table(&p.evaluation));
        section(&mut out, &class_intervals_table(&p.classes));
    }
    if !r.scenarios.is_empty() {
        let steady = r.recommendation.as_ref().map_or(0, |p| p.steady_replicas);
        let mut cases = cases_table(&[], Some(r)).select(&[
            "case",
            "own plan: configuration",
            "own plan: steady replicas",
            "own plan: USD per month",
            "plan's fleet: targets",
            "plan's fleet: worst check",
            "plan's fleet: cost per success",
        ])?;
        cases.title = format!(
            "{}, each re-planned (the plan's fleet is {})",
            cases.title,
            counted(steady as u64, "replica")
        );
        section(&mut out, &cases);
    }
    if let Some(c) = &r.worst_case_cover {
        let _ = writeln!(
            out,
            "  covering {}: {} + reserve = {} replicas of {} ({} GPUs), {} per month at the expected prices, {} more than the plan",
            c.case,
            c.steady_replicas,
            c.total_replicas,
            c.configuration,
            c.total_gpus,
            format_or_missing(c.usd_per_month, format_usd),
            format_or_missing(c.extra_usd_per_month, format_usd)
        );
    }
    if let Some(c) = &r.service_curve
        && let Some(table) = curve_table(r)
    {
        section(&mut out, &table);
        let _ = writeln!(
            out,
            "  knee: {}; SLA limit: {}; operating point: {}",
            c.knee_load
                .map_or("beyond the curve".to_string(), format_multiple),
            c.sla_limit_load
                .map_or("beyond the curve".to_string(), format_multiple),
            format_multiple(c.operating_load)
        );
    }
    if let Some(s) = &r.sensitivity
        && let Some(table) = sensitivity_table(r)
    {
        let table = table.select(&[
            "input",
            "cost per success low",
            "cost per success high",
            "cost swing",
            "P(miss) low",
            "P(miss) high",
            "worst check low",
            "worst check high",
            "impact",
            "re-planned USD per month low",
            "re-planned USD per month high",
        ])?;
        section(&mut out, &table);
        let _ = writeln!(out, "  {}", s.reading);
        let _ = writeln!(
            out,
            "  base: P(miss) {}, cost per success {}; worst check: the worst check's value / its threshold",
            format_percent(s.base_p_miss),
            format_or_missing(s.base_usd_per_success, format_usd)
        );
    }
    if let Some(a) = &r.analytic
        && let Some(table) = analytic_table(r)
    {
        section(&mut out, &table);
        let e = &a.estimate;
        let _ = writeln!(
            out,
            "  c = {} decode slots per replica; load (rho, offered work / capacity): prefill stage {}, decode stage {}, accelerator {}",
            e.decode_slots_per_replica,
            format_number(e.prefill.utilization, 3),
            format_number(e.decode.utilization, 3),
            format_number(e.accelerator_rho, 3)
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    Ok(out)
}

/// The configured fleet as the plan judged it, by the same rule as every
/// fleet (or why it could not).
fn write_configured(out: &mut String, r: &PlanResult) {
    let Some(c) = &r.configured else {
        if let Some(why) = &r.configured_not_judged {
            let _ = writeln!(out);
            let _ = writeln!(out, "The configured fleet: not judged ({why})");
        }
        return;
    };
    let _ = writeln!(out);
    let e = &c.evaluation;
    let _ = writeln!(
        out,
        "The configured fleet: {} replicas of {}: {} over {} replications; {} per month with the reserve",
        c.replicas,
        c.configuration,
        verdict_counts(e),
        e.replications,
        format_or_missing(c.cost.fleet.usd_per_month, format_usd)
    );
    section(out, &checks_table(e));
}

/// Each configuration's search, the chosen one marked, and why a search
/// found no fleet.
fn write_configurations(out: &mut String, r: &PlanResult) -> Result<(), UnknownColumn> {
    let table = configurations_table(r);
    let shown = table.select(&[
        "configuration",
        "outcome",
        "smallest fleet",
        "GPUs with reserve",
        "USD per month",
        "cost per success",
        "simulations",
    ])?;
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", table.title);
    for line in shown.to_text() {
        let _ = writeln!(out, "  {line}");
    }
    Ok(())
}

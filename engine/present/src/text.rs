//! The CLI's text of a run and of a plan: the same tables as the page
//! (`DataTable::to_text`), under the lines that say what ran and what the
//! plan decided. The CLI prints it; nothing here does IO.

use std::fmt::Write as _;

use crate::batch_tables::batch_lines;
use crate::cases::decision_label;
use crate::format::{
    counted, format_count, format_duration_s, format_multiple, format_number, format_or_missing,
    format_percent, format_percent_whole, format_usd,
};
use crate::levers::levers_table;
use crate::model::Scenario;
use crate::plan::PlanResult;
use crate::plan_tables::{
    analytic_table, cases_table, checks_table, class_intervals_table, configurations_table,
    curve_table, recommendation_details, sensitivity_table,
};
use crate::run_tables::{budget_table, class_table};
use crate::summary::RunSummary;
use crate::table::{DataTable, UnknownColumn};
use crate::verdict::{alternatives_cost_table, verdict_counts};

/// The columns of the per-class table the summary prints.
const CLASS_COLUMNS: [&str; 8] = [
    "class",
    "deadline",
    "arrived",
    "P(miss)",
    "P(miss) 95% low",
    "P(miss) 95% high",
    "sojourn p50",
    "sojourn p99",
];

/// What ran, in one line: replicas, model, GPUs, accelerator and KV cache.
fn fleet_line(run: &RunSummary, scenario: &Scenario) -> String {
    let memory = scenario.memory();
    format!(
        "{} x {} on {} x {}; KV cache {} tokens per replica ({:.1} KiB/token)",
        run.report.replicas,
        scenario.params().model.name,
        memory.gpus_per_replica,
        scenario.params().hardware.name,
        format_count(memory.kv_capacity_tokens()),
        memory.kv_bytes_per_token / 1024.0
    )
}

/// The run in a few lines: what ran, the load against the closed-form
/// estimate of capacity, how busy the replicas were (measured), each
/// class, the outcomes, throughput, the batches and the report's warnings.
pub fn run_text(run: &RunSummary, scenario: &Scenario) -> Result<String, UnknownColumn> {
    let r = &run.report;
    let mut out = String::new();
    let _ = writeln!(out, "{} (seed {})", r.scenario_name, r.seed);
    let _ = writeln!(out, "  {}", fleet_line(run, scenario));
    let _ = writeln!(
        out,
        "  load: {} requests/s offered; estimated capacity {} requests/s (offered load / estimated capacity {})",
        format_number(r.load.arrival_rate_per_s, 3),
        format_number(r.load.saturation_rate_per_s, 3),
        format_percent_whole(r.load.rho)
    );
    let _ = writeln!(
        out,
        "  replicas busy {} of the time: any request in service, however few",
        format_percent_whole(r.utilization)
    );
    let _ = writeln!(out);
    class_table(run)
        .select(&CLASS_COLUMNS)?
        .write_text(&mut out, "  ");
    let o = &r.overall;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "  met {}  late {}  rejected {}  timed out {}  unfinished {}  (goodput {} req/h)",
        format_count(o.met),
        format_count(o.late),
        format_count(o.rejected),
        format_count(o.timed_out),
        format_count(o.unfinished),
        format_number(o.goodput_per_h, 4)
    );
    let _ = writeln!(
        out,
        "  tokens/s: prefill {}, decode {}; preemptions {}",
        format_number(r.prefill_tokens_per_s, 4),
        format_number(r.decode_tokens_per_s, 4),
        format_count(o.preemptions)
    );
    let _ = writeln!(
        out,
        "  busy period {} (first arrival to last completion): output {} tokens/s, total {} tokens/s",
        format_duration_s(r.busy_period_s),
        format_number(r.output_tokens_per_s, 4),
        format_number(r.total_tokens_per_s, 4)
    );
    for line in batch_lines(&r.batches) {
        let _ = writeln!(out, "  {line}");
    }
    for w in &r.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
    Ok(out)
}

/// A table as a section: a blank line, its title, its text indented.
fn section(out: &mut String, table: &DataTable) {
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", table.title);
    table.write_text(out, "  ");
}

/// The plan as text, section by section, from the same tables as the page.
pub fn plan_text(r: &PlanResult) -> Result<String, UnknownColumn> {
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

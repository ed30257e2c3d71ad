//! `sojourn run`: simulate a scenario and print its summary (or the report
//! as JSON), optionally writing every request's record as CSV.

use std::fmt::Write as _;

use sojourn_engine::{
    RunOptions, RunSummary, UnknownColumn, batch_lines, class_table, format_count,
    format_duration_s, format_number, format_percent_whole, records_csv, simulate,
};

use crate::args::RunArgs;
use crate::{load_scenario, pretty_json, write_table};

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

pub fn run(args: &RunArgs) -> Result<(), String> {
    let scenario = load_scenario(&args.path, args.seed)?;
    let options = RunOptions {
        engine: args.engine,
        ..RunOptions::default()
    };
    let report = simulate(&scenario, &options).map_err(|e| e.to_string())?;
    if let Some(file) = &args.records {
        std::fs::write(file, records_csv(&report)).map_err(|e| format!("{file}: {e}"))?;
    }
    if args.json {
        say!("{}", pretty_json(&report)?);
    } else {
        let memory = scenario.memory();
        let fleet = format!(
            "{} x {} on {} x {}; KV cache {} tokens per replica ({:.1} KiB/token)",
            report.replicas,
            scenario.params().model.name,
            memory.gpus_per_replica,
            scenario.params().hardware.name,
            format_count(memory.kv_capacity_tokens()),
            memory.kv_bytes_per_token / 1024.0
        );
        say_raw!(
            "{}",
            summary(&RunSummary::new(report, &scenario), &fleet).map_err(|e| e.to_string())?
        );
    }
    Ok(())
}

/// The run in a few lines: what ran, the load against the closed-form
/// estimate of capacity, how busy the replicas were (measured), each
/// class, the outcomes, throughput, the batches and the report's warnings.
fn summary(run: &RunSummary, fleet: &str) -> Result<String, UnknownColumn> {
    let r = &run.report;
    let mut out = String::new();
    let _ = writeln!(out, "{} (seed {})", r.scenario_name, r.seed);
    let _ = writeln!(out, "  {fleet}");
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
    write_table(&mut out, &class_table(run).select(&CLASS_COLUMNS)?, "  ");
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

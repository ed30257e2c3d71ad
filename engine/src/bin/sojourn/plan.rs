//! `sojourn plan`: the capacity plan of a scenario as text (or JSON), and
//! `sojourn plan --bench`, which times the capacity searches of the
//! benchmark scenario.

use std::time::Instant;

use sojourn_engine::{
    PlanOptions, PlanProgress, Scenario, bench_plan, capacity_searches, plan_text,
    plan_with_progress,
};

use crate::args::PlanArgs;
use crate::{load_scenario, pretty_json};

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
        say_raw!("{}", plan_text(&result).map_err(|e| e.to_string())?);
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

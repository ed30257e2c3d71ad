//! `sojourn`: the engine from the command line.
//!
//! ```text
//! sojourn run SCENARIO.json \[--seed N\] \[--json\] \[--engine fast|reference\] \[--records FILE.csv\]
//! sojourn plan SCENARIO.json \[--json\] \[--seed N\] \[--search-only\]
//! sojourn plan --bench
//! sojourn bench \[--quick\]
//! sojourn example            # prints the example scenario as JSON
//! ```

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use sojourn_engine::CostBasis;
use sojourn_engine::Evaluation;
use sojourn_engine::Report;
use sojourn_engine::{
    CostSummary, PlanOptions, PlanProgress, PlanResult, bench_plan, capacity_searches,
    plan_with_progress,
};
use sojourn_engine::{EngineKind, RunOptions, Scenario, ScenarioParams, Status, simulate};

/// Large buffers on 2 MiB pages where Linux grants them on request
/// (transparent huge pages in `madvise` mode, the common default).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: huge_pages::HugePageHint = huge_pages::HugePageHint;

#[cfg(target_os = "linux")]
mod huge_pages {
    //! The system allocator, plus a hint to back large allocations with
    //! huge pages. A day's request records alone are about 90 MB: on 4 KiB
    //! pages their first touch takes some 22,000 page faults, about a tenth
    //! of `sojourn bench`'s wall time; on 2 MiB pages, fewer than fifty.
    //! The hint changes only how memory is paged, never its contents.

    use std::alloc::{GlobalAlloc, Layout, System};

    pub struct HugePageHint;

    const HUGE_PAGE: usize = 2 << 20;
    /// Allocations from this size on get the hint: the records, and the
    /// report's samples of a busy class (a few MB each).
    const LARGE: usize = HUGE_PAGE;

    /// Advises huge pages for the whole 2 MiB pages inside `[ptr, ptr + size)`.
    fn hint(ptr: *mut u8, size: usize) {
        if ptr.is_null() || size < LARGE {
            return;
        }
        let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
        let end = (ptr as usize + size) / HUGE_PAGE * HUGE_PAGE;
        if end > start {
            // SAFETY: the range lies inside the allocation just made, and
            // MADV_HUGEPAGE only changes how it is paged. A refusal (no THP
            // support) leaves ordinary pages, so the result is ignored.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }

    // SAFETY: every call is forwarded to `System` unchanged; the hint only
    // touches memory the call has just returned.
    unsafe impl GlobalAlloc for HugePageHint {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let ptr = unsafe { System.alloc(layout) };
            hint(ptr, layout.size());
            ptr
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let ptr = unsafe { System.alloc_zeroed(layout) };
            hint(ptr, layout.size());
            ptr
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let ptr = unsafe { System.realloc(ptr, layout, new_size) };
            hint(ptr, new_size);
            ptr
        }
    }
}

/// `println!` that ends the program quietly when stdout is closed (e.g.
/// `sojourn bench | head`) instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// `print!` with the same behaviour as [`say!`].
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if write!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

const USAGE: &str = "\
usage:
  sojourn run SCENARIO.json [--seed N] [--json] [--engine fast|reference] [--records FILE.csv]
  sojourn plan SCENARIO.json [--json] [--seed N] [--search-only]
  sojourn plan --bench
  sojourn bench [--quick]
  sojourn example

run      simulate a scenario and print a summary (or the report as JSON)
plan     capacity plan from the scenario's plan section: the smallest fleet
         meeting the SLA targets per candidate, the cheapest, its service
         curve, base/best/worst cases and sensitivity (or all of it as JSON);
         --bench times the capacity searches of a fixed 24 h scenario
bench    time the fast engine on a fixed day of 1M+ requests on 8 replicas,
         and the reference stepper on a smaller one for the speedup
example  print the example scenario (the overnight batch case of the source
         documents), a starting point for your own files";

fn main() -> ExitCode {
    match cli() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("sojourn: {message}");
            ExitCode::FAILURE
        }
    }
}

fn cli() -> Result<(), String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_env();
    let command = match parser.next().map_err(|e| e.to_string())? {
        Some(Value(v)) => v.string().map_err(|e| e.to_string())?,
        Some(Long("help")) | Some(Short('h')) | None => {
            say!("{USAGE}");
            return Ok(());
        }
        Some(other) => return Err(format!("{}\n{USAGE}", other.unexpected())),
    };
    match command.as_str() {
        "run" => run_command(&mut parser),
        "plan" => plan_command(&mut parser),
        "bench" => {
            let mut quick = false;
            while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
                match arg {
                    Long("quick") => quick = true,
                    other => return Err(other.unexpected().to_string()),
                }
            }
            bench_command(quick)
        }
        "example" => {
            let json = serde_json::to_string_pretty(&ScenarioParams::overnight_batch())
                .map_err(|e| e.to_string())?;
            say!("{json}");
            Ok(())
        }
        other => Err(format!("unknown command \"{other}\"\n{USAGE}")),
    }
}

fn run_command(parser: &mut lexopt::Parser) -> Result<(), String> {
    use lexopt::prelude::*;
    let (mut path, mut seed, mut json, mut engine, mut records) =
        (None, None, false, EngineKind::Fast, None);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("seed") => {
                let value = parser.value().map_err(|e| e.to_string())?;
                seed = Some(value.parse::<u64>().map_err(|e| format!("--seed: {e}"))?);
            }
            Long("json") => json = true,
            Long("engine") => {
                engine = match parser
                    .value()
                    .map_err(|e| e.to_string())?
                    .string()
                    .map_err(|e| e.to_string())?
                    .as_str()
                {
                    "fast" => EngineKind::Fast,
                    "reference" => EngineKind::Reference,
                    other => {
                        return Err(format!(
                            "--engine: expected fast or reference, got \"{other}\""
                        ));
                    }
                }
            }
            Long("records") => {
                records = Some(
                    parser
                        .value()
                        .map_err(|e| e.to_string())?
                        .string()
                        .map_err(|e| e.to_string())?,
                )
            }
            Value(v) if path.is_none() => path = Some(v.string().map_err(|e| e.to_string())?),
            other => return Err(other.unexpected().to_string()),
        }
    }
    let path = path.ok_or("run needs a scenario file (try `sojourn example > scenario.json`)")?;
    let mut params = read_scenario(&path)?;
    if let Some(seed) = seed {
        params.run.seed = seed;
    }
    let scenario = Scenario::try_from(params).map_err(|e| {
        format!(
            "{path}: invalid scenario:\n  {}",
            e.to_string().replace("; ", "\n  ")
        )
    })?;
    let options = RunOptions {
        engine,
        ..RunOptions::default()
    };
    let report = simulate(&scenario, &options).map_err(|e| e.to_string())?;
    if let Some(file) = records {
        std::fs::write(&file, records_csv(&report)).map_err(|e| format!("{file}: {e}"))?;
    }
    if json {
        say!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        say_raw!("{}", summary(&scenario, &report));
    }
    Ok(())
}

fn plan_command(parser: &mut lexopt::Parser) -> Result<(), String> {
    use lexopt::prelude::*;
    let (mut path, mut seed, mut json, mut bench, mut search_only) =
        (None, None, false, false, false);
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("seed") => {
                let value = parser.value().map_err(|e| e.to_string())?;
                seed = Some(value.parse::<u64>().map_err(|e| format!("--seed: {e}"))?);
            }
            Long("json") => json = true,
            Long("bench") => bench = true,
            Long("search-only") => search_only = true,
            Value(v) if path.is_none() => path = Some(v.string().map_err(|e| e.to_string())?),
            other => return Err(other.unexpected().to_string()),
        }
    }
    if bench {
        return plan_bench_command(json);
    }
    let path = path.ok_or("plan needs a scenario file (try scenarios/overnight-batch.json)")?;
    let mut params = read_scenario(&path)?;
    if let Some(seed) = seed {
        params.run.seed = seed;
    }
    let scenario = Scenario::try_from(params).map_err(|e| {
        format!(
            "{path}: invalid scenario:\n  {}",
            e.to_string().replace("; ", "\n  ")
        )
    })?;
    let options = PlanOptions {
        scenarios: !search_only,
        service_curve: !search_only,
        sensitivity: !search_only,
        ..PlanOptions::default()
    };
    let start = Instant::now();
    let mut show_progress = progress_printer();
    let result = plan_with_progress(&scenario, &options, &mut show_progress);
    eprint!("\r{:79}\r", "");
    let result = result.map_err(|e| e.to_string())?;
    if json {
        say!(
            "{}",
            serde_json::to_string_pretty(&result).map_err(|e| e.to_string())?
        );
    } else {
        say_raw!("{}", plan_summary(&result));
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

fn plan_bench_command(json: bool) -> Result<(), String> {
    let scenario = Scenario::try_from(bench_plan()).map_err(|e| e.to_string())?;
    let options = PlanOptions::default();
    say!(
        "{}: about {:.0} requests per run, up to {} replicas, {} replications",
        scenario.params().name,
        scenario.expected_requests(),
        scenario.params().plan.max_replicas,
        scenario.params().plan.replications
    );
    let start = Instant::now();
    let (searches, simulations) =
        capacity_searches(&scenario, &options, &mut |_| true).map_err(|e| e.to_string())?;
    let wall = start.elapsed().as_secs_f64();
    if json {
        say!(
            "{}",
            serde_json::to_string_pretty(&searches).map_err(|e| e.to_string())?
        );
    }
    for s in &searches {
        say!(
            "  {:<6} {:<60} ({} simulations, analytic guess {})",
            s.case,
            s.message,
            s.simulations,
            s.analytic_guess
                .map_or("none".to_string(), |g| g.to_string())
        );
    }
    say!(
        "capacity search, base + best + worst: {wall:.2} s wall, {simulations} simulations ({:.2} s each)",
        wall / simulations.max(1) as f64
    );
    Ok(())
}

fn usd(x: Option<f64>) -> String {
    match x {
        None => "-".to_string(),
        Some(v) if v.abs() >= 1000.0 => format!("${v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("${v:.2}"),
        Some(v) => format!("${v:.4}"),
    }
}

fn pct(x: f64) -> String {
    if !x.is_finite() {
        "-".to_string()
    } else {
        format!("{:.3}%", 100.0 * x)
    }
}

fn plan_summary(r: &PlanResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Plan for {} ({})", r.scenario_name, r.model);
    let _ = writeln!(out, "  success: {}", r.success_criterion);
    let _ = writeln!(
        out,
        "  targets ({} replications, decision by the {}):",
        r.replications,
        match r.decision {
            sojourn_engine::DecisionRule::Mean => "mean",
            sojourn_engine::DecisionRule::Upper95 => "upper 95% bound",
        }
    );
    for t in &r.targets {
        let _ = writeln!(out, "    - {t}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Capacity search per candidate");
    let _ = writeln!(
        out,
        "  {:<22} {:>9} {:>6} {:>12} {:>12} {:>6}",
        "candidate", "replicas", "GPUs", "$/month", "$/success", "sims"
    );
    for (i, c) in r.candidates.iter().enumerate() {
        let cost = c.search.cost.as_ref();
        let _ = writeln!(
            out,
            "  {:<22} {:>9} {:>6} {:>12} {:>12} {:>6}{}",
            c.name,
            c.search.found.map_or("none".to_string(), |n| n.to_string()),
            c.search
                .found
                .map_or("-".to_string(), |n| (n * c.gpus_per_replica).to_string()),
            usd(cost.and_then(|c| c.fleet.usd_per_month)),
            usd(cost.and_then(|c| c.units.usd_per_success)),
            c.search.simulations,
            if r.chosen_candidate == Some(i) {
                "  <- chosen"
            } else {
                ""
            }
        );
        if c.search.found.is_none() {
            let _ = writeln!(out, "    {}", c.search.message);
        }
    }
    if let Some(p) = &r.recommendation {
        let _ = writeln!(out);
        let _ = writeln!(out, "The plan: {}", p.candidate);
        let _ = writeln!(
            out,
            "  replicas: {} steady ({} meet every target) + {} failure reserve + {} warm idle = {} ({} GPUs)",
            p.steady_replicas,
            p.min_replicas,
            p.failure_reserve_replicas,
            p.warm_idle_replicas,
            p.total_replicas,
            p.total_gpus
        );
        if let Some(limit) = p.admission_limit_per_replica {
            let _ = writeln!(
                out,
                "  admission limit: {limit} waiting requests per replica (deepest seen: {:.0})",
                p.observed_peak_queue_per_replica
            );
        }
        if let (Some(q), Some(kv)) = (p.scale_up_queue_per_replica, p.scale_up_kv_utilization) {
            let _ = writeln!(
                out,
                "  scale up when waiting requests per replica stay above {q:.0} (busy but normal, p99: {:.1}) or KV-cache use above {:.0}%",
                p.normal_queue_per_replica_p99.unwrap_or(0.0),
                100.0 * kv
            );
        }
        if let Some(op) = p.operating_load {
            let beyond = "beyond the curve".to_string();
            let _ = writeln!(
                out,
                "  on {} replicas: knee {}, SLA limit {}, operating point {op:.2}x the base load",
                p.min_replicas,
                p.knee_load.map_or(beyond.clone(), |k| format!("{k:.2}x")),
                p.sla_limit_load.map_or(beyond, |k| format!("{k:.2}x")),
            );
            let headroom =
                |h: Option<f64>| h.map_or("-".to_string(), |h| format!("{:.0}%", 100.0 * h));
            let _ = writeln!(
                out,
                "  headroom on the steady fleet: {} below the knee, {} below the SLA limit",
                headroom(p.headroom_to_knee),
                headroom(p.headroom_to_sla_limit)
            );
        }
        write_cost(&mut out, "budget (steady + reserve)", &p.budget);
        write_checks(&mut out, "checks on the steady fleet", &p.evaluation);
        let _ = writeln!(
            out,
            "  classes on the steady fleet (mean [95% interval] over the replications):"
        );
        for c in &p.classes {
            let show = |i: &sojourn_engine::Interval, f: &dyn Fn(f64) -> String| match i.ci95 {
                Some([lo, hi]) => format!("{} [{} .. {}]", f(i.mean), f(lo), f(hi)),
                None => f(i.mean),
            };
            let _ = writeln!(
                out,
                "    {:<16} P(miss) {}; p50 {}; p99 {}; p99 TTFT {}",
                c.class,
                show(&c.p_miss, &pct),
                show(&c.sojourn_p50_s, &hours),
                show(&c.sojourn_p99_s, &hours),
                show(&c.ttft_p99_s, &hours)
            );
        }
        for note in &p.notes {
            let _ = writeln!(out, "  note: {note}");
        }
    }
    if !r.scenarios.is_empty() {
        let _ = writeln!(out);
        let steady = r.recommendation.as_ref().map_or(0, |p| p.steady_replicas);
        let _ = writeln!(out, "Scenarios (the plan's fleet is {steady} replicas)");
        let _ = write!(out, "  {:<34}", "");
        for s in &r.scenarios {
            let _ = write!(out, " {:>14}", s.name);
        }
        let _ = writeln!(out);
        let row = |out: &mut String,
                   label: &str,
                   cell: &dyn Fn(&sojourn_engine::ScenarioResult) -> String| {
            let _ = write!(out, "  {label:<34}");
            for s in &r.scenarios {
                let _ = write!(out, " {:>14}", cell(s));
            }
            let _ = writeln!(out);
        };
        row(&mut out, "smallest fleet meeting targets", &|s| {
            s.search.found.map_or("none".to_string(), |n| n.to_string())
        });
        row(&mut out, "on the plan's fleet: meets targets", &|s| {
            if s.at_plan_fleet.meets { "yes" } else { "no" }.to_string()
        });
        row(&mut out, "on the plan's fleet: worst check", &|s| {
            format!("{:.2}x", s.at_plan_fleet.worst_ratio)
        });
        row(&mut out, "on the plan's fleet: $/success", &|s| {
            usd(s.cost_at_plan_fleet.units.usd_per_success)
        });
        row(&mut out, "on the plan's fleet: GPU-h/success", &|s| {
            s.cost_at_plan_fleet
                .units
                .gpu_hours_per_success
                .map_or("-".to_string(), |g| format!("{g:.2e}"))
        });
    }
    if let Some(c) = &r.service_curve {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Service curve: {} replicas of {} (mean of {} seeds per point)",
            c.replicas, c.candidate, c.replications
        );
        let _ = writeln!(
            out,
            "  {:>6} {:>11} {:>11} {:>10} {:>7} {:>6}",
            "load", "offered/s", "goodput/s", "P(miss)", "busy", "meets"
        );
        for p in &c.points {
            let _ = writeln!(
                out,
                "  {:>5.2}x {:>11.3} {:>11.3} {:>10} {:>6.0}% {:>6}",
                p.load,
                p.offered_per_s,
                p.goodput_per_s,
                pct(p.p_miss),
                100.0 * p.busy_fraction,
                if p.meets { "yes" } else { "no" }
            );
        }
        let _ = writeln!(
            out,
            "  knee: {}; SLA limit: {}; operating point: {:.2}x",
            c.knee_load
                .map_or("beyond the curve".to_string(), |k| format!("{k:.2}x")),
            c.sla_limit_load
                .map_or("beyond the curve".to_string(), |k| format!("{k:.2}x")),
            c.operating_load
        );
    }
    if let Some(s) = &r.sensitivity {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Sensitivity on {} replicas: each input x{:.2} and x{:.2}, {} seeds (base P(miss) {}, {}/success)",
            s.replicas,
            1.0 - s.delta,
            1.0 + s.delta,
            s.replications,
            pct(s.base_p_miss),
            usd(s.base_usd_per_success)
        );
        let _ = writeln!(
            out,
            "  {:<22} {:>11} {:>11} {:>7} {:>9} {:>9} {:>7} {:>7} {:>7}",
            "input",
            "$/succ low",
            "$/succ high",
            "swing",
            "P(m) low",
            "P(m) high",
            "worst lo",
            "worst hi",
            "impact"
        );
        for row in &s.rows {
            let ratio = |r: f64, meets: bool| format!("{:.2}x{}", r, if meets { "" } else { "!" });
            let _ = writeln!(
                out,
                "  {:<22} {:>11} {:>11} {:>6.1}% {:>9} {:>9} {:>8} {:>8} {:>7.2}",
                row.label,
                usd(row.usd_per_success_low),
                usd(row.usd_per_success_high),
                100.0 * row.cost_swing,
                pct(row.p_miss_low),
                pct(row.p_miss_high),
                ratio(row.worst_ratio_low, row.meets_low),
                ratio(row.worst_ratio_high, row.meets_high),
                row.impact
            );
        }
        let _ = writeln!(
            out,
            "  (worst: the worst check's value / threshold; ! = a check fails)"
        );
    }
    if let Some(a) = &r.analytic {
        let _ = writeln!(out);
        let e = &a.estimate;
        let _ = writeln!(
            out,
            "Two-stage estimate vs simulation on {} replicas (c = {} decode slots per replica, prefill rho {:.2}, decode rho {:.2}, accelerator rho {:.2})",
            a.replicas,
            e.decode_slots_per_replica,
            e.prefill.utilization,
            e.decode.utilization,
            e.accelerator_rho
        );
        let _ = writeln!(
            out,
            "  {:<16} {:<18} {:>12} {:>12} {:>12}",
            "class", "metric", "analytic", "simulated", "difference"
        );
        for row in &a.rows {
            let f = |x: f64| {
                if !x.is_finite() {
                    "inf".to_string()
                } else if row.metric.starts_with("P(") {
                    pct(x)
                } else {
                    hours(x)
                }
            };
            let _ = writeln!(
                out,
                "  {:<16} {:<18} {:>12} {:>12} {:>12}",
                row.class,
                row.metric,
                f(row.analytic),
                f(row.simulated),
                if row.metric.starts_with("P(") {
                    pct(row.difference)
                } else if row.difference.is_finite() {
                    format!("{:+.1} s", row.difference)
                } else {
                    "-".to_string()
                }
            );
        }
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn write_cost(out: &mut String, title: &str, c: &CostSummary) {
    let f = &c.fleet;
    let u = &c.units;
    let _ = writeln!(
        out,
        "  {title}: {} per hour, {} per month, {} over the {:.0} h window (steady {}, reserve {}, fixed {})",
        usd(f.usd_per_hour),
        usd(f.usd_per_month),
        usd(f.usd_total),
        f.window_h,
        usd(f.usd_steady),
        usd(f.usd_reserve),
        usd(f.usd_fixed)
    );
    let ci = c.usd_per_success_ci95.map_or(String::new(), |[lo, hi]| {
        format!(" (95% CI {} to {})", usd(Some(lo)), usd(Some(hi)))
    });
    let _ = writeln!(
        out,
        "  per success {}{ci}; per request {}; per M prompt tokens {}; per M output tokens {}",
        usd(u.usd_per_success),
        usd(u.usd_per_request),
        usd(u.usd_per_million_prompt_tokens),
        usd(u.usd_per_million_output_tokens)
    );
    let _ = writeln!(
        out,
        "  failed work {}; recomputation after preemption {}; idle steady capacity {}; {} GPU-h per success",
        usd(u.usd_failed_work),
        usd(u.usd_recomputation),
        usd(u.usd_idle),
        u.gpu_hours_per_success
            .map_or("-".to_string(), |g| format!("{g:.2e}"))
    );
    let _ = writeln!(out, "  basis: {}", basis_line(&c.basis));
}

fn basis_line(b: &CostBasis) -> String {
    b.label()
}

fn write_checks(out: &mut String, title: &str, e: &Evaluation) {
    let _ = writeln!(
        out,
        "  {title} ({} replicas, {} replications):",
        e.replicas, e.replications
    );
    for c in &e.checks {
        let (value, ci) = match c.metric {
            sojourn_engine::CheckMetric::MissProbability
            | sojourn_engine::CheckMetric::BusyFraction => (
                pct(c.mean),
                c.ci95.map_or(String::new(), |[lo, hi]| {
                    format!(" [{} .. {}]", pct(lo), pct(hi))
                }),
            ),
            _ => (
                hours(c.mean),
                c.ci95.map_or(String::new(), |[lo, hi]| {
                    format!(" [{} .. {}]", hours(lo), hours(hi))
                }),
            ),
        };
        if let Some(reason) = &c.not_evaluated {
            let _ = writeln!(
                out,
                "    n/a  {:<58} not evaluated: {reason}",
                c.description
            );
            continue;
        }
        let _ = writeln!(
            out,
            "    {} {:<58} {value}{ci}",
            if c.met { "ok  " } else { "MISS" },
            c.description
        );
    }
}

fn read_scenario(path: &str) -> Result<ScenarioParams, String> {
    let text = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    sojourn_engine::scenario_params_from_json(&text)
        .map_err(|e| format!("{path}: not a scenario: {e}"))
}

fn hours(s: f64) -> String {
    if !s.is_finite() {
        "never".to_string()
    } else if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.2} h", s / 3600.0)
    }
}

fn summary(scenario: &Scenario, r: &Report) -> String {
    let mut out = String::new();
    let m = &scenario.memory();
    let _ = writeln!(out, "{} (seed {})", r.scenario_name, r.seed);
    let _ = writeln!(
        out,
        "  {} x {} on {} x {}; KV cache {:.0}k tokens per replica ({:.1} KiB/token)",
        r.replicas,
        scenario.params().model.name,
        m.gpus_per_replica,
        scenario.params().hardware.name,
        m.kv_capacity_tokens() as f64 / 1000.0,
        m.kv_bytes_per_token / 1024.0
    );
    let _ = writeln!(
        out,
        "  load: {:.2} requests/s offered, rho = {:.2}, utilization {:.0}%",
        r.load.arrival_rate_per_s,
        r.load.rho,
        100.0 * r.utilization
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "  {:<16} {:>9} {:>9} {:>17} {:>10} {:>10} {:>10}",
        "class", "arrived", "P(miss)", "95% CI", "p50", "p99", "deadline"
    );
    for c in r.classes.iter().chain(std::iter::once(&r.overall)) {
        let _ = writeln!(
            out,
            "  {:<16} {:>9} {:>8.3}% {:>7.3}-{:.3}% {:>10} {:>10} {:>10}",
            c.name,
            c.arrived,
            100.0 * c.p_miss,
            100.0 * c.p_miss_ci95[0],
            100.0 * c.p_miss_ci95[1],
            hours(c.sojourn.p50),
            hours(c.sojourn.p99),
            if c.deadline_s.is_nan() {
                "-".to_string()
            } else {
                hours(c.deadline_s)
            },
        );
    }
    let o = &r.overall;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "  met {}  late {}  rejected {}  timed out {}  unfinished {}  (goodput {:.0}/h)",
        o.met, o.late, o.rejected, o.timed_out, o.unfinished, o.goodput_per_h
    );
    let _ = writeln!(
        out,
        "  tokens/s: prefill {:.0}, decode {:.0}; preemptions {}",
        r.prefill_tokens_per_s, r.decode_tokens_per_s, o.preemptions
    );
    for w in &r.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
    out
}

fn records_csv(r: &Report) -> String {
    let mut out = String::from(
        "id,class,replica,arrival_s,admitted_s,first_token_s,end_s,sojourn_s,input_tokens,cached_tokens,output_tokens,preemptions,status\n",
    );
    for (i, x) in r.records.iter().enumerate() {
        let status = match x.status {
            Status::Completed => "completed",
            Status::RejectedQueueFull => "rejected_queue_full",
            Status::RejectedTooLong => "rejected_too_long",
            Status::TimedOut => "timed_out",
            Status::Unfinished => "unfinished",
            Status::Pending => "pending",
        };
        let _ = writeln!(
            out,
            "{i},{},{},{},{},{},{},{},{},{},{},{},{status}",
            x.class,
            x.replica,
            x.arrival_s,
            x.admitted_s,
            x.first_token_s,
            x.end_s,
            x.sojourn_s(),
            x.input_tokens,
            x.cached_tokens,
            x.output_tokens,
            x.preemptions
        );
    }
    out
}

/// Peak resident memory of this process \[bytes\], from /proc (Linux only).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn timed(scenario: &Scenario, engine: EngineKind) -> Result<(Report, f64), String> {
    let options = RunOptions {
        engine,
        ..RunOptions::default()
    };
    let start = Instant::now();
    let report = simulate(scenario, &options).map_err(|e| e.to_string())?;
    Ok((report, start.elapsed().as_secs_f64()))
}

fn bench_command(quick: bool) -> Result<(), String> {
    let invalid = |e: sojourn_engine::ScenarioError| e.to_string();
    let large = Scenario::try_from(sojourn_engine::bench_large()).map_err(invalid)?;
    let small = Scenario::try_from(sojourn_engine::bench_small()).map_err(invalid)?;
    let rounds = if quick { 1 } else { 3 };
    let mut best = f64::INFINITY;
    let mut report = None;
    for _ in 0..rounds {
        // Drop the previous round's report first: the peak is one run's.
        drop(report.take());
        let (r, wall) = timed(&large, EngineKind::Fast)?;
        best = best.min(wall);
        report = Some(r);
    }
    let r = report.ok_or("no run")?;
    let n = r.engine.requests as f64;
    say!(
        "{} ({} requests, best of {rounds})",
        r.scenario_name,
        r.engine.requests
    );
    say!(
        "  fast engine: {:.3} s wall, {:.0} requests/s",
        best,
        n / best
    );
    say!(
        "  {} engine steps ({:.1} M steps/s), {} events; P(miss) {:.4}%",
        r.engine.steps,
        r.engine.steps as f64 / best / 1e6,
        r.engine.events,
        100.0 * r.overall.p_miss
    );
    if let Some(bytes) = peak_rss_bytes() {
        say!(
            "  peak memory {:.0} MB ({:.0} bytes per request record)",
            bytes as f64 / 1e6,
            std::mem::size_of::<sojourn_engine::RequestRecord>()
        );
    }
    let (fast, fast_s) = timed(&small, EngineKind::Fast)?;
    let (reference, ref_s) = timed(&small, EngineKind::Reference)?;
    if fast.digest() != reference.digest() {
        let same = fast
            .records
            .iter()
            .zip(&reference.records)
            .filter(|(a, b)| a.status == b.status)
            .count();
        say!(
            "  note: fast and reference differ in the last bits ({same} of {} outcomes equal)",
            fast.records.len()
        );
    }
    say!(
        "{}: reference {:.2} s ({:.0} steps/s), fast {:.4} s: speedup {:.0}x",
        small.params().name,
        ref_s,
        reference.engine.steps as f64 / ref_s,
        fast_s,
        ref_s / fast_s
    );
    Ok(())
}

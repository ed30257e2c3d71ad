//! Running one input: its kind's parser, then (where it gives a scenario)
//! validation, the run with the shipped caps, the report's checks and the
//! plan's up-front checks, each step timed; panics caught with their
//! message and place. What counts as a finding is in `docs/reliability.md`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;
use sojourn_engine::{
    PlanError, PlanOptions, Report, RunError, RunOptions, Scenario, ScenarioError, ScenarioParams,
    Simulation, Status,
};

use crate::alloc;
use crate::cpu;
use crate::input::{Input, Kind};
use crate::outcome::{Finding, Limits, Outcome, PlanStat, Stage, What};

mod files;

/// The last panic's message and place, recorded by the hook
/// [`install_panic_hook`] sets.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Replaces the default hook (which prints) with one that records the
/// message and place for the finding.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(a panic without a message)".into());
        let place = info
            .location()
            .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
        let backtrace = std::backtrace::Backtrace::force_capture().to_string();
        if std::env::var_os("SOJOURN_FUZZ_BACKTRACE").is_some() {
            eprintln!("{backtrace}");
        }
        let caller = project_frame(&backtrace);
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(format!("{message}{place}{caller}"));
        }
    }));
}

/// The innermost frame of the project's own code (the engine's or the
/// app's) in a backtrace, as " in FUNCTION (FILE:LINE)": where a panic in
/// the standard library (a `clamp`, an index) was called from. Frames are
/// told by their file, since inlined ones carry short names.
fn project_frame(backtrace: &str) -> String {
    let mut symbol = "";
    for line in backtrace.lines() {
        let line = line.trim_start();
        if let Some(at) = line.strip_prefix("at ") {
            let ours = ["engine/", "src/"]
                .iter()
                .any(|dir| at.starts_with(&format!("./{dir}")))
                || at.contains("/engine/");
            if ours {
                let symbol: String = symbol.chars().take(80).collect();
                return format!(" in {symbol} ({at})");
            }
        } else if let Some((_, name)) = line.split_once(": ") {
            symbol = name;
        }
    }
    String::new()
}

/// The state of one input's pipeline.
struct Ctx<'a> {
    limits: &'a Limits,
    step: &'static str,
    step_started: Instant,
    /// The step that took longest, and its time \[s\].
    slowest_step: (&'static str, f64),
    /// The heap's peak when a step last ended, and the step it rose in.
    peak_seen: usize,
    peak_step: &'static str,
    stage: Stage,
    findings: Vec<Finding>,
    validate_seconds: f64,
    plan: Option<PlanStat>,
    plan_seconds: f64,
    plan_cpu_seconds: f64,
    fit_skipped: bool,
    sent_over_estimate: bool,
    refusal: String,
    requests: u64,
    events: u64,
    /// Whether a valid scenario is simulated (search lists change only
    /// what a plan compares: their runs would repeat the scenario's).
    simulate: bool,
}

/// The step the worker's input is in, for a hang or a crash (read by the
/// worker's watchdog, and by the allocator when the hard cap stops it).
pub static STEP: Mutex<&'static str> = Mutex::new("start");

impl Ctx<'_> {
    /// Starts `step` (ending the one before: its time, and whether the
    /// heap's peak rose in it).
    fn at(&mut self, step: &'static str) {
        let seconds = self.step_started.elapsed().as_secs_f64();
        if seconds > self.slowest_step.1 {
            self.slowest_step = (self.step, seconds);
        }
        let peak = alloc::peak();
        if peak > self.peak_seen {
            self.peak_seen = peak;
            self.peak_step = self.step;
        }
        self.step_started = Instant::now();
        self.step = step;
        if let Ok(mut current) = STEP.lock() {
            *current = step;
        }
    }

    /// Notes why the input was refused.
    fn refused(&mut self, stage: Stage, why: impl std::fmt::Display) {
        self.stage = stage;
        self.refusal = why.to_string().chars().take(300).collect();
    }

    fn find(&mut self, what: What, detail: impl Into<String>) {
        self.findings.push(Finding {
            what,
            step: self.step.to_string(),
            detail: detail.into(),
        });
    }
}

/// Runs `input`, catching panics, timing it and measuring its heap.
pub fn run(index: u64, input: &Input, limits: &Limits) -> Outcome {
    let mut ctx = Ctx {
        limits,
        step: "start",
        step_started: Instant::now(),
        slowest_step: ("start", 0.0),
        peak_seen: 0,
        peak_step: "start",
        stage: Stage::NotRead,
        findings: Vec::new(),
        validate_seconds: 0.0,
        plan: None,
        plan_seconds: 0.0,
        plan_cpu_seconds: 0.0,
        fit_skipped: false,
        sent_over_estimate: false,
        refusal: String::new(),
        requests: 0,
        events: 0,
        simulate: true,
    };
    if let Ok(mut last) = LAST_PANIC.lock() {
        *last = None;
    }
    let live_before = alloc::live();
    alloc::reset_peak();
    ctx.peak_seen = alloc::peak();
    let started = Instant::now();
    let cpu_started = cpu::process_cpu_s();
    ctx.step_started = started;
    let result = catch_unwind(AssertUnwindSafe(|| pipeline(input, &mut ctx)));
    let seconds = (started.elapsed().as_secs_f64() - ctx.plan_seconds).max(0.0);
    let cpu_seconds = (cpu::process_cpu_s() - cpu_started - ctx.plan_cpu_seconds).max(0.0);
    let peak_bytes = alloc::peak().saturating_sub(live_before) as u64;
    if result.is_err() {
        let message = LAST_PANIC
            .lock()
            .ok()
            .and_then(|mut last| last.take())
            .unwrap_or_else(|| "(no message recorded)".into());
        ctx.stage = Stage::Panicked;
        ctx.find(What::Panic, message);
    }
    // Found in the step that took longest, or the one the heap peaked in.
    if result.is_ok() {
        ctx.at("end");
    }
    if cpu_seconds > limits.time_s {
        let (step, step_seconds) = ctx.slowest_step;
        ctx.step = step;
        ctx.find(
            What::OverTime,
            format!(
                "{cpu_seconds:.2} s of CPU ({seconds:.2} s wall, {step_seconds:.2} s of it in {step})"
            ),
        );
    }
    if peak_bytes > limits.memory_bytes {
        ctx.step = ctx.peak_step;
        ctx.find(
            What::OverMemory,
            format!("{:.0} MB", peak_bytes as f64 / 1e6),
        );
    }
    Outcome {
        index,
        kind: input.kind,
        variant: input.variant.clone(),
        stage: ctx.stage,
        seconds,
        cpu_seconds,
        validate_seconds: ctx.validate_seconds,
        peak_bytes,
        input: (!ctx.findings.is_empty()).then(|| input.clone()),
        findings: ctx.findings,
        plan: ctx.plan,
        fit_skipped: ctx.fit_skipped,
        sent_over_estimate: ctx.sent_over_estimate,
        refusal: ctx.refusal,
        requests: ctx.requests,
        events: ctx.events,
    }
}

fn pipeline(input: &Input, ctx: &mut Ctx) {
    match input.kind {
        Kind::Scenario => scenario_text(input.text.as_bytes(), ctx),
        Kind::Trace => files::trace(input, ctx),
        Kind::Lengths => files::lengths(input, ctx),
        Kind::Calibration => files::calibration(input, ctx),
        Kind::Search => files::search(input, ctx),
        Kind::Link => files::link(input, ctx),
    }
}

/// The base scenario of a file's import (a generator's output: it reads).
fn base(input: &Input, ctx: &mut Ctx) -> Option<ScenarioParams> {
    ctx.at("scenario_params_from_json (base)");
    sojourn_engine::scenario_params_from_json(input.base.as_bytes()).ok()
}

fn scenario_text(json: &[u8], ctx: &mut Ctx) {
    ctx.at("scenario_params_from_json");
    match sojourn_engine::scenario_params_from_json(json) {
        Ok(params) => scenario(params, ctx),
        Err(error) => {
            ctx.refused(Stage::NotRead, format!("{}: {}", error.field, error.reason));
            // Malformed JSON has no field; well-formed JSON whose root is
            // an object always has one to name.
            let well_formed = serde_json::from_slice::<Value>(json).is_ok_and(|v| v.is_object());
            if error.field.is_empty() && well_formed {
                ctx.find(What::NoField, error.reason);
            }
        }
    }
}

/// Validates, runs, checks the report, and makes the plan's up-front
/// checks (and with `--plans`, a small plan).
fn scenario(params: ScenarioParams, ctx: &mut Ctx) {
    ctx.at("Scenario::try_from");
    let started = Instant::now();
    let validated = Scenario::try_from(params);
    let seconds = started.elapsed().as_secs_f64();
    ctx.validate_seconds = ctx.validate_seconds.max(seconds);
    if seconds > ctx.limits.validate_s {
        ctx.find(What::SlowValidation, format!("{seconds:.2} s"));
    }
    let scenario = match validated {
        Ok(scenario) => scenario,
        Err(error) => {
            ctx.refused(Stage::Invalid, &error);
            no_field(&error, ctx);
            return;
        }
    };
    ctx.stage = Stage::Checked;
    if ctx.simulate {
        let estimate = sojourn_engine::run_bytes_estimate(&scenario);
        let expected = scenario.expected_requests() + 5.0 * scenario.requests_sd();
        let live_before = alloc::live();
        let peak_before = alloc::peak();
        alloc::reset_peak();
        // `simulate`, in its three steps, so that a finding names the one
        // it happened in; the requests sent counted whether or not the run
        // passes a cap on the way.
        ctx.at("Simulation::new (the run's budget)");
        let mut sent = 0u64;
        let result = Simulation::new(&scenario, &RunOptions::default()).and_then(|mut s| {
            ctx.at("Simulation::finish (the run)");
            loop {
                match s.advance(4096) {
                    Ok(progress) => {
                        sent = progress.requests;
                        if progress.done {
                            break;
                        }
                    }
                    Err(e) => {
                        // A cap passed on the way says what was sent.
                        sent = match &e {
                            RunError::TooManyRequests { expected, .. } => *expected as u64,
                            RunError::TooMuchMemory {
                                expected_requests, ..
                            } => *expected_requests as u64,
                            _ => sent,
                        };
                        return Err(e);
                    }
                }
            }
            s.finish()
        });
        let result = result.map(|output| {
            ctx.at("Report::build");
            Report::build(output)
        });
        let used = alloc::peak().saturating_sub(live_before) as f64;
        alloc::raise_peak(peak_before);
        // What bounds the run: the estimate it was let in on, or, when it
        // sent more than expected, the accounting its guard stops it on
        // (each request sent at BYTES_PER_REQUEST, each replica at
        // BYTES_PER_REPLICA, as `run_bytes_estimate` counts them).
        ctx.sent_over_estimate = sent as f64 > 1.25 * expected + 1000.0;
        let accounted =
            estimate + (sent as f64 - expected).max(0.0) * sojourn_engine::BYTES_PER_REQUEST;
        if used > 1.25 * accounted + 64e6 {
            // Found in the step the heap peaked in.
            ctx.at("after the run");
            ctx.step = ctx.peak_step;
            ctx.find(
                What::OverEstimate,
                format!(
                    "the run's heap peaked at {:.0} MB for {sent} requests sent, its estimate was {:.0} MB ({:.0} MB counting the requests sent)",
                    used / 1e6,
                    estimate / 1e6,
                    accounted / 1e6,
                ),
            );
        }
        match result {
            Ok(report) => {
                ctx.stage = Stage::Ran;
                ctx.requests = report.engine.requests;
                ctx.events = report.engine.events;
                ctx.at("report checks");
                check_report(&report, ctx);
            }
            Err(e @ RunError::TooMuchWork { .. }) => ctx.refused(Stage::WorkCap, e),
            Err(e) => ctx.refused(Stage::Budget, e),
        }
    }
    plan(&scenario, ctx);
}

fn no_field(error: &ScenarioError, ctx: &mut Ctx) {
    for e in &error.errors {
        if e.field.is_empty() {
            ctx.find(What::NoField, e.reason.clone());
        }
    }
}

/// The report reads back from its JSON, and its figures and records keep
/// the rules the docs give them.
fn check_report(report: &Report, ctx: &mut Ctx) {
    let json = serde_json::to_string(report).unwrap_or_default();
    match serde_json::from_str::<Report>(&json) {
        Ok(back) => {
            if serde_json::to_string(&back).unwrap_or_default() != json {
                ctx.find(What::RoundTrip, "the report reads back different");
            }
        }
        Err(e) => ctx.find(
            What::RoundTrip,
            format!("the report's JSON does not read back: {e}"),
        ),
    }
    let mut broken = Vec::new();
    if !(report.utilization.is_finite() && (0.0..=1.0 + 1e-9).contains(&report.utilization)) {
        broken.push(format!("utilization {} outside [0, 1]", report.utilization));
    }
    if !report.end_s.is_finite() {
        broken.push(format!("end_s {}", report.end_s));
    }
    for row in std::iter::once(&report.overall).chain(&report.classes) {
        let outcomes = row.met + row.late + row.rejected + row.timed_out + row.unfinished;
        if outcomes != row.arrived {
            broken.push(format!(
                "{}: {} arrived but {outcomes} outcomes",
                row.name, row.arrived
            ));
        }
        if row.arrived > 0 && !(0.0..=1.0).contains(&row.p_miss) {
            broken.push(format!("{}: P(miss) {}", row.name, row.p_miss));
        }
    }
    // Times in order, to a relative rounding.
    let before = |a: f64, b: f64| a <= b + 1e-9 * b.abs().max(1.0);
    let mut late_arrival = 0usize;
    let mut out_of_order = 0usize;
    let mut example = String::new();
    for (i, r) in report.records.iter().enumerate() {
        if r.arrival_s.is_finite() && !before(r.arrival_s, report.end_s) {
            late_arrival += 1;
        }
        let ordered = !r.admitted_s.is_finite() || before(r.arrival_s, r.admitted_s);
        let completed_ordered = r.status != Status::Completed
            || (before(r.admitted_s, r.first_token_s) && before(r.first_token_s, r.end_s));
        if !(ordered && completed_ordered) {
            if out_of_order == 0 {
                example = format!(
                    "record {i}: arrival {} admitted {} first token {} end {} ({:?})",
                    r.arrival_s, r.admitted_s, r.first_token_s, r.end_s, r.status
                );
            }
            out_of_order += 1;
        }
    }
    if late_arrival > 0 {
        broken.push(format!(
            "{late_arrival} requests arrive after the run's end_s {}",
            report.end_s
        ));
    }
    if out_of_order > 0 {
        broken.push(format!(
            "{out_of_order} records with times out of order, e.g. {example}"
        ));
    }
    for b in broken {
        ctx.find(What::Invariant, b);
    }
}

/// A rough count of the requests a plan simulates: each case and point
/// (base, best, worst, curve points, sensitivity ends) searched over
/// fleets, with its seeds. The planner's own budget (`check_budget`,
/// 500 million requests) bounds a plan to minutes; this keeps the plans
/// a campaign runs to seconds.
fn plan_estimate(scenario: &Scenario) -> f64 {
    let plan = &scenario.params().plan;
    let settings = plan.search.settings(scenario.params()).len().max(1) as f64;
    let candidates = plan.candidates.as_ref().map_or(1, |c| c.len().max(1)) as f64;
    let cases = 3.0
        + plan.service_curve.load_multipliers.len() as f64
        + 2.0 * plan.sensitivity.inputs.len() as f64;
    let seeds = f64::from(plan.replications.max(2));
    // A search tries about a dozen fleets.
    scenario.expected_requests() * settings * candidates * cases * seeds * 12.0
}

fn plan(scenario: &Scenario, ctx: &mut Ctx) {
    ctx.at("plan::check_budget");
    let options = PlanOptions {
        threads: 1,
        progress_every_requests: 2_000,
        ..PlanOptions::default()
    };
    if let Err(e) = sojourn_engine::check_budget(scenario, &options) {
        ctx.plan = Some(PlanStat {
            refused: true,
            refusal: e.to_string().chars().take(300).collect(),
            ..PlanStat::default()
        });
        return;
    }
    if !ctx.limits.plans {
        return;
    }
    let estimated = plan_estimate(scenario);
    if estimated > ctx.limits.plan_max_requests {
        return;
    }
    ctx.at("plan");
    let started = Instant::now();
    let cpu_started = cpu::process_cpu_s();
    let limit = ctx.limits.plan_time_s;
    let result = sojourn_engine::plan_with_progress(scenario, &options, &mut |_| {
        started.elapsed().as_secs_f64() < limit
    });
    let seconds = started.elapsed().as_secs_f64();
    ctx.plan_seconds = seconds;
    ctx.plan_cpu_seconds = (cpu::process_cpu_s() - cpu_started).max(0.0);
    let simulated = match &result {
        Ok(r) => r.simulated_requests as f64,
        Err(_) => f64::NAN,
    };
    if let Err(PlanError::Cancelled { simulations }) = result {
        ctx.find(
            What::PlanOverTime,
            format!("stopped after {seconds:.1} s and {simulations} simulations (estimated {estimated:.0} requests)"),
        );
    }
    ctx.plan = Some(PlanStat {
        refused: false,
        ran: true,
        seconds,
        estimated_requests: estimated,
        simulated_requests: simulated,
        refusal: String::new(),
    });
}

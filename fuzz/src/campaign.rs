//! The campaign: a supervisor hands input indices to worker processes (this
//! binary with `--worker`), one input at a time each, and reads back each
//! input's outcome. A worker that hangs is stopped at the hang limit, and
//! one that dies (the hard memory cap, an abort, a signal) is replaced; the
//! input it was running is made again from the seed and kept as a finding,
//! so the campaign never stalls and never loses an input.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::alloc;
use crate::cpu;
use crate::exec;
use crate::findings::{Findings, Reproducer};
use crate::input::{Input, Kind};
use crate::make;
use crate::outcome::{Finding, Limits, Outcome, Stage, What};
use crate::summary::Summary;

/// What a campaign is asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    pub seed: u64,
    pub start: u64,
    pub inputs: u64,
    pub kind: Option<Kind>,
    pub out: PathBuf,
    pub threads: usize,
    pub limits: Limits,
    /// Fraction of inputs whose plan runs (when small; see `Limits`).
    pub plans: f64,
    /// A worker still on one input after this long is stopped \[s\].
    pub hang_s: f64,
    /// A worker whose heap passes this ends \[bytes\].
    pub kill_bytes: u64,
}

/// One worker process and the input it is on.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    generation: u64,
    /// The input it is on, since when, and the CPU its process had used
    /// by then.
    current: Option<(u64, Instant, f64)>,
    /// The step its input was in, when it said (before a hang or a crash).
    step: Option<String>,
}

enum Message {
    Line(usize, u64, String),
    End(usize, u64),
}

fn worker_args(options: &Options) -> Vec<String> {
    let l = &options.limits;
    let mut args = vec![
        "--worker".into(),
        "--seed".into(),
        options.seed.to_string(),
        "--time-limit".into(),
        l.time_s.to_string(),
        "--memory-limit-mb".into(),
        (l.memory_bytes / 1_000_000).to_string(),
        "--validate-limit".into(),
        l.validate_s.to_string(),
        "--plans".into(),
        options.plans.to_string(),
        "--plan-limit".into(),
        l.plan_time_s.to_string(),
        "--plan-max-requests".into(),
        l.plan_max_requests.to_string(),
        "--kill-mb".into(),
        (options.kill_bytes / 1_000_000).to_string(),
        "--hang-s".into(),
        options.hang_s.to_string(),
    ];
    if let Some(kind) = options.kind {
        args.push("--kind".into());
        args.push(kind.name().into());
    }
    args
}

fn spawn(
    slot: usize,
    generation: u64,
    options: &Options,
    tx: &Sender<Message>,
) -> Result<Worker, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let log = options.out.join(format!("worker-{slot}.stderr"));
    let stderr = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let mut child = Command::new(exe)
        .args(worker_args(options))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start a worker: {e}"))?;
    let stdout = child.stdout.take().ok_or("a worker without stdout")?;
    let tx = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(Message::Line(slot, generation, line)).is_err() {
                return;
            }
        }
        let _ = tx.send(Message::End(slot, generation));
    });
    Ok(Worker {
        stdin: child.stdin.take(),
        child,
        generation,
        current: None,
        step: None,
    })
}

/// Hands `index` to `worker`; false if it could not take it.
fn give(worker: &mut Worker, index: u64) -> bool {
    let Some(stdin) = worker.stdin.as_mut() else {
        return false;
    };
    if writeln!(stdin, "{index}")
        .and_then(|()| stdin.flush())
        .is_err()
    {
        return false;
    }
    let cpu = cpu::child_cpu_s(worker.child.id()).unwrap_or(0.0);
    worker.current = Some((index, Instant::now(), cpu));
    true
}

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Runs the campaign; the exit status: 0 without findings, 1 with.
pub fn run(options: &Options) -> Result<i32, String> {
    let findings_dir = options.out.join("findings");
    fs::create_dir_all(&findings_dir)
        .map_err(|e| format!("cannot create {}: {e}", findings_dir.display()))?;
    let started = Instant::now();
    let load_before = load_average();
    eprintln!(
        "sojourn-fuzz: seed {}, inputs {}..{}, {} workers, kind {}, findings in {}",
        options.seed,
        options.start,
        options.start + options.inputs,
        options.threads,
        options.kind.map_or("mix", Kind::name),
        findings_dir.display()
    );
    let (tx, rx): (Sender<Message>, Receiver<Message>) = mpsc::channel();
    let end = options.start + options.inputs;
    let mut next = options.start;
    let mut done = 0u64;
    let mut summary = Summary::default();
    let mut findings = Findings::default();
    let mut workers = Vec::new();
    for slot in 0..options.threads.max(1) {
        let mut w = spawn(slot, 0, options, &tx)?;
        if next < end && give(&mut w, next) {
            next += 1;
        }
        workers.push(w);
    }
    let mut last_progress = Instant::now();
    // A lost input (hang or crash): made again from the seed, kept.
    let lost = |summary: &mut Summary,
                findings: &mut Findings,
                index: u64,
                what: What,
                step: String,
                detail: String| {
        let input = make::input(options.seed, index, options.kind);
        summary.add_lost(input.kind, what);
        let outcome = Outcome {
            index,
            kind: input.kind,
            variant: input.variant.clone(),
            stage: Stage::Panicked,
            seconds: 0.0,
            cpu_seconds: 0.0,
            validate_seconds: 0.0,
            peak_bytes: 0,
            findings: vec![Finding { what, step, detail }],
            plan: None,
            fit_skipped: false,
            sent_over_estimate: false,
            refusal: String::new(),
            requests: 0,
            events: 0,
            input: None,
        };
        findings.add(&findings_dir, options.seed, &outcome, &input);
    };
    while done < options.inputs {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Message::Line(slot, generation, line)) => {
                let w = &mut workers[slot];
                if generation != w.generation || line.is_empty() {
                    continue;
                }
                if let Some(step) = line.strip_prefix("HANG ").or(line.strip_prefix("CRASH ")) {
                    w.step = Some(step.to_string());
                    continue;
                }
                let outcome: Outcome = serde_json::from_str(&line)
                    .map_err(|e| format!("a worker's answer does not read: {e}: {line:.200}"))?;
                summary.add(&outcome);
                if !outcome.findings.is_empty() {
                    let input = outcome
                        .input
                        .clone()
                        .unwrap_or_else(|| make::input(options.seed, outcome.index, options.kind));
                    findings.add(&findings_dir, options.seed, &outcome, &input);
                }
                done += 1;
                w.current = None;
                w.step = None;
                if next < end && give(w, next) {
                    next += 1;
                } else {
                    w.stdin = None;
                }
            }
            Ok(Message::End(slot, generation)) => {
                let w = &mut workers[slot];
                if generation != w.generation {
                    continue;
                }
                let status = w
                    .child
                    .wait()
                    .map_err(|e| format!("waiting for a worker: {e}"))?;
                if let Some((index, _, _)) = w.current.take() {
                    let detail = if status.code() == Some(alloc::OVER_HARD_CAP_EXIT) {
                        format!(
                            "the worker's heap passed the hard cap of {} MB",
                            options.kill_bytes / 1_000_000
                        )
                    } else {
                        format!("the worker died: {status}")
                    };
                    let step = w.step.take().unwrap_or_else(|| "worker".into());
                    lost(
                        &mut summary,
                        &mut findings,
                        index,
                        What::Crash,
                        step,
                        detail,
                    );
                    done += 1;
                    *w = spawn(slot, generation + 1, options, &tx)?;
                    if next < end && give(w, next) {
                        next += 1;
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Err("the workers' channel closed".into()),
        }
        for (slot, w) in workers.iter_mut().enumerate() {
            let Some((index, since, cpu_then)) = w.current else {
                continue;
            };
            // A hang is judged by the CPU the input took, as its time is
            // (`cpu.rs`): a loaded machine stretches the wall time of an
            // input of a few seconds past the limit. A worker blocked
            // without using CPU is stopped at four times the limit.
            let wall_s = since.elapsed().as_secs_f64();
            if wall_s <= options.hang_s {
                continue;
            }
            let cpu_s = cpu::child_cpu_s(w.child.id()).map_or(wall_s, |now| now - cpu_then);
            if cpu_s <= options.hang_s && wall_s <= 4.0 * options.hang_s {
                continue;
            }
            let _ = w.child.kill();
            let _ = w.child.wait();
            w.current = None;
            let detail = format!(
                "no end within {} s of CPU (stopped after {wall_s:.0} s, {cpu_s:.1} s of CPU)",
                options.hang_s
            );
            let step = w.step.take().unwrap_or_else(|| "worker".into());
            lost(&mut summary, &mut findings, index, What::Hang, step, detail);
            done += 1;
            let generation = w.generation + 1;
            *w = spawn(slot, generation, options, &tx)?;
            if next < end && give(w, next) {
                next += 1;
            }
        }
        if last_progress.elapsed() > Duration::from_secs(30) {
            last_progress = Instant::now();
            eprintln!(
                "{done} / {} inputs, {} findings, {:.0} s, load {}",
                options.inputs,
                findings.total(),
                started.elapsed().as_secs_f64(),
                load_average()
            );
        }
    }
    for w in &mut workers {
        w.stdin = None;
        let _ = w.child.wait();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let report = format!(
        "# sojourn-fuzz: seed {}, inputs {}..{} ({}), {} workers\n\n{}\n{} inputs in {:.0} s ({:.1} a second); load average {} before, {} after.\n\n## Findings: {} in {} groups\n\n{}",
        options.seed,
        options.start,
        end,
        options.kind.map_or("the default mix", Kind::name),
        options.threads,
        summary.table(),
        options.inputs,
        elapsed,
        options.inputs as f64 / elapsed.max(1e-9),
        load_before,
        load_average(),
        findings.total(),
        findings.groups(),
        findings.words()
    );
    println!("{report}");
    let _ = fs::write(options.out.join("summary.md"), &report);
    let _ = fs::write(options.out.join("findings.json"), findings.json());
    Ok(if findings.total() == 0 { 0 } else { 1 })
}

/// Whether input `index` runs its plan, for a fraction `plans` of inputs.
pub fn plans_this(index: u64, plans: f64) -> bool {
    let mut h = index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 29;
    (h % 10_000) as f64 / 10_000.0 < plans
}

/// When the worker's input started, while it runs.
static BUSY_SINCE: Mutex<Option<Instant>> = Mutex::new(None);

/// Says (a line `HANG <step>`) which step an input is in once it has run
/// for most of the hang limit, before the supervisor stops the worker.
fn watch(warn_after_s: f64) {
    let mut warned_for = None;
    loop {
        std::thread::sleep(Duration::from_millis(250));
        let since = BUSY_SINCE.lock().ok().and_then(|b| *b);
        let Some(since) = since else { continue };
        if since.elapsed().as_secs_f64() < warn_after_s || warned_for == Some(since) {
            continue;
        }
        warned_for = Some(since);
        let step = exec::STEP.lock().map_or("?", |s| *s);
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "HANG {step}").and_then(|()| stdout.flush());
    }
}

/// A worker: reads indices from stdin, writes one outcome (JSON) a line.
pub fn worker(
    seed: u64,
    kind: Option<Kind>,
    limits: &Limits,
    plans: f64,
    hang_s: f64,
) -> Result<i32, String> {
    exec::install_panic_hook();
    std::thread::spawn(move || watch(hang_s * 0.8));
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| format!("reading an index: {e}"))?;
        let Ok(index) = line.trim().parse::<u64>() else {
            continue;
        };
        let input = make::input(seed, index, kind);
        let limits = Limits {
            plans: plans_this(index, plans),
            ..limits.clone()
        };
        if let Ok(mut busy) = BUSY_SINCE.lock() {
            *busy = Some(Instant::now());
        }
        let outcome = exec::run(index, &input, &limits);
        if let Ok(mut busy) = BUSY_SINCE.lock() {
            *busy = None;
        }
        let line = serde_json::to_string(&outcome).map_err(|e| e.to_string())?;
        writeln!(stdout, "{line}")
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("writing an outcome: {e}"))?;
    }
    Ok(0)
}

/// Runs reproducer files again, in this process; the exit status: 0 if
/// none has a finding any more, 1 otherwise. An input still running after
/// `hang_s` is reported (`HANG <step>`) but not stopped.
pub fn replay(files: &[PathBuf], limits: &Limits, hang_s: f64) -> Result<i32, String> {
    exec::install_panic_hook();
    std::thread::spawn(move || watch(hang_s));
    let mut status = 0;
    for file in files {
        let text = fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let (input, index) = match serde_json::from_str::<Reproducer>(&text) {
            Ok(r) => (r.input, r.index),
            Err(_) => (
                serde_json::from_str::<Input>(&text).map_err(|e| {
                    format!("{}: neither a reproducer nor an input: {e}", file.display())
                })?,
                0,
            ),
        };
        if let Ok(mut busy) = BUSY_SINCE.lock() {
            *busy = Some(Instant::now());
        }
        let outcome = exec::run(index, &input, limits);
        if let Ok(mut busy) = BUSY_SINCE.lock() {
            *busy = None;
        }
        println!(
            "{}: {} ({}), {:?} in {:.3} s ({} requests, {} events), heap peak {:.1} MB, validation {:.3} s",
            file.display(),
            input.kind,
            input.variant,
            outcome.stage,
            outcome.seconds,
            outcome.requests,
            outcome.events,
            outcome.peak_bytes as f64 / 1e6,
            outcome.validate_seconds
        );
        if !outcome.refusal.is_empty() {
            println!("  refused: {}", outcome.refusal);
        }
        if let Some(plan) = &outcome.plan {
            println!("  plan: {plan:?}");
        }
        if outcome.findings.is_empty() {
            println!("  no finding");
        } else {
            status = 1;
        }
        for f in &outcome.findings {
            println!("  {} in {}: {}", f.what.label(), f.step, f.detail);
        }
    }
    Ok(status)
}

//! `sojourn bench`: the fast engine's speed on a fixed day of over a
//! million requests, its peak memory, and its speedup over the reference
//! stepper on a smaller scenario.

use std::time::Instant;

use sojourn_engine::{
    EngineKind, Report, RequestRecord, RunOptions, Scenario, ScenarioError, bench_large,
    bench_small, format_percent, simulate,
};

/// Peak resident memory of this process \[bytes\], from /proc (Linux only).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A run of `scenario` with `engine` and its wall time \[s\].
fn timed(scenario: &Scenario, engine: EngineKind) -> Result<(Report, f64), String> {
    let options = RunOptions {
        engine,
        ..RunOptions::default()
    };
    let start = Instant::now();
    let report = simulate(scenario, &options).map_err(|e| e.to_string())?;
    Ok((report, start.elapsed().as_secs_f64()))
}

pub fn bench(quick: bool) -> Result<(), String> {
    let invalid = |e: ScenarioError| e.to_string();
    let large = Scenario::try_from(bench_large()).map_err(invalid)?;
    let small = Scenario::try_from(bench_small()).map_err(invalid)?;
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
        "  {} engine steps ({:.1} M steps/s), {} events, {} units of work ({:.3} us each); P(miss) {}",
        r.engine.steps,
        r.engine.steps as f64 / best / 1e6,
        r.engine.events,
        r.engine.work,
        best / r.engine.work as f64 * 1e6,
        format_percent(r.overall.p_miss)
    );
    if let Some(bytes) = peak_rss_bytes() {
        say!(
            "  peak memory {:.0} MB ({:.0} bytes per request record)",
            bytes as f64 / 1e6,
            std::mem::size_of::<RequestRecord>()
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

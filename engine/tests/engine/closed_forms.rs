//! The engine configured as classical queues, against their closed forms.
//!
//! Every step lasts δ = 1 ms whatever it holds and prompts are one token, so
//! a request with O output tokens is served in O x δ, and `max_num_seqs` = c
//! servers work in parallel. With O geometric of mean 1000, service is
//! exponential with mean 1 s up to the 1 ms grid (relative error ~0.1%).
//!
//! Tolerances: each statistic is measured on R independent seeds (runs of
//! 20,000-40,000 simulated seconds, so each holds 10,000+ requests) and
//! compared by its mean over the runs with allowance 4.5 standard errors
//! (estimated from the R values; with R = 8 the t-quantile for a two-sided
//! 0.1% error is 5.4, for 0.5% 4.0) plus 1.5% of the value for the bias of the
//! time grid and the start from an empty system.

use sojourn_engine::{DistParams, Report, Status};

use crate::support::{classical_queue, geometric, mean_and_se, mmc, run};

const STEP_S: f64 = 0.001;
const REPLICATIONS: u64 = 8;

/// Runs `make(seed)` for R seeds and checks `stat` against `expected`.
fn check(what: &str, expected: f64, values: &[f64]) {
    let (mean, se) = mean_and_se(values);
    let allowed = 4.5 * se + 0.015 * expected.abs();
    eprintln!("CHECK {what}: {mean:.4} se {se:.4} theory {expected:.4} allowed {allowed:.4}");
    assert!(
        (mean - expected).abs() <= allowed,
        "{what}: simulated {mean:.4} ± {se:.4} (s.e.) but theory says {expected:.4} (allowed {allowed:.4})"
    );
}

fn replications(make: impl Fn(u64) -> Report) -> Vec<Report> {
    (1..=REPLICATIONS).map(|seed| make(seed * 7919)).collect()
}

/// Sojourn times of requests that arrived after the warm-up and before the
/// horizon (all complete: the drain is as long as the horizon).
fn sojourns(r: &Report) -> Vec<f64> {
    measured(r).map(|x| x.sojourn_s()).collect()
}

fn waits(r: &Report) -> Vec<f64> {
    measured(r).map(|x| x.admitted_s - x.arrival_s).collect()
}

fn measured(r: &Report) -> impl Iterator<Item = &sojourn_engine::RequestRecord> {
    r.records.iter().filter(move |x| {
        assert_eq!(
            x.status,
            Status::Completed,
            "every request completes in a stable queue"
        );
        x.arrival_s >= r.warmup_s
    })
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn tail(xs: &[f64], t: f64) -> f64 {
    xs.iter().filter(|x| **x > t).count() as f64 / xs.len() as f64
}

#[test]
fn mm1_sojourn_is_exponential_with_rate_mu_minus_lambda() {
    // λ = 0.5/s, μ = 1/s: T ~ Exp(0.5), mean 2 s, P(T > t) = e^{-t/2}.
    let runs = replications(|seed| run(mmc(0.5, 1000.0, 1, STEP_S, 20_000.0, seed)));
    let per_run: Vec<Vec<f64>> = runs.iter().map(sojourns).collect();
    check(
        "M/M/1 mean sojourn",
        2.0,
        &per_run.iter().map(|x| mean(x)).collect::<Vec<_>>(),
    );
    for t in [1.0f64, 2.0, 4.0, 8.0] {
        let expected = (-0.5 * t).exp();
        let observed: Vec<f64> = per_run.iter().map(|x| tail(x, t)).collect();
        check(&format!("M/M/1 P(T > {t})"), expected, &observed);
    }
    // The p90 from the report: -ln(0.1) / 0.5 = 4.605 s.
    let p90: Vec<f64> = runs.iter().map(|r| r.overall.sojourn.p90).collect();
    check("M/M/1 p90", 10f64.ln() / 0.5, &p90);
}

#[test]
#[ignore = "slow: statistical: closed form (Erlang C); scripts/test runs it"]
fn mmc_waiting_time_follows_erlang_c() {
    // c = 4, λ = 3/s, μ = 1/s, a = 3, ρ = 0.75.
    let (c, a) = (4u32, 3.0f64);
    let rho = a / c as f64;
    let fact = |k: u32| (1..=k).map(|i| i as f64).product::<f64>();
    let top = a.powi(c as i32) / fact(c) / (1.0 - rho);
    let erlang_c = top / ((0..c).map(|k| a.powi(k as i32) / fact(k)).sum::<f64>() + top);
    assert!((erlang_c - 0.5094).abs() < 1e-3, "C(4,3) = {erlang_c}");
    let runs = replications(|seed| run(mmc(3.0, 1000.0, c, STEP_S, 20_000.0, seed)));
    let per_run: Vec<Vec<f64>> = runs.iter().map(waits).collect();
    check(
        "M/M/4 E[W]",
        erlang_c / (c as f64 - a),
        &per_run.iter().map(|x| mean(x)).collect::<Vec<_>>(),
    );
    for t in [0.1, 0.5, 1.0, 2.0] {
        let expected = erlang_c * (-(c as f64 - a) * t).exp();
        let observed: Vec<f64> = per_run.iter().map(|x| tail(x, t)).collect();
        check(&format!("M/M/4 P(W > {t})"), expected, &observed);
    }
}

#[test]
fn md1_mean_wait_is_pollaczek_khinchine() {
    // Deterministic 1 s service (1000 steps of 1 ms), λ = 0.7/s:
    // E[W] = ρ / (2 μ (1 - ρ)) = 0.7 / 0.6.
    let runs = replications(|seed| {
        run(classical_queue(
            0.7,
            DistParams::constant(1.0),
            DistParams::constant(1000.0),
            1,
            STEP_S,
            30_000.0,
            seed,
        ))
    });
    let waits: Vec<f64> = runs.iter().map(|r| mean(&waits(r))).collect();
    check("M/D/1 E[W]", 0.7 / 0.6, &waits);
}

#[test]
fn mx_m1_batch_arrivals_match_the_batch_formula() {
    // Batches at λ = 0.2/s with geometric X (q = 0.4: E[X] = 2.5,
    // E[X²] = (2 - q)/q² = 10), μ = 1/s: ρ = 0.5,
    // L = (ρ + λ E[X²]/μ) / (2 (1 - ρ)) = 2.5 and W = L / (λ E[X]) = 5 s.
    let (lambda, q) = (0.2f64, 0.4f64);
    let (ex, ex2) = (1.0 / q, (2.0 - q) / (q * q));
    let rho = lambda * ex;
    let l = (rho + lambda * ex2) / (2.0 * (1.0 - rho));
    let w = l / (lambda * ex);
    assert!((w - 5.0).abs() < 1e-12);
    let runs = replications(|seed| {
        run(classical_queue(
            lambda,
            geometric(ex),
            geometric(1000.0),
            1,
            STEP_S,
            40_000.0,
            seed,
        ))
    });
    let sojourn: Vec<f64> = runs.iter().map(|r| mean(&sojourns(r))).collect();
    check("M^X/M/1 mean sojourn", w, &sojourn);
}

#[test]
fn littles_law_holds_on_the_time_series() {
    // L (time average of the sampled number in system, every 10 s) against
    // λ W (arrival rate times mean sojourn) over the measured window of an
    // M/M/2 queue at ρ = 0.8.
    let runs = replications(|seed| run(mmc(1.6, 1000.0, 2, STEP_S, 20_000.0, seed)));
    let mut ratio = Vec::new();
    for r in &runs {
        let window: Vec<_> = r
            .series
            .iter()
            .filter(|p| p.t_s > r.warmup_s && p.t_s <= r.horizon_s)
            .collect();
        let l = window
            .iter()
            .map(|p| (p.waiting + p.running) as f64)
            .sum::<f64>()
            / window.len() as f64;
        let s = sojourns(r);
        let lambda = s.len() as f64 / (r.horizon_s - r.warmup_s);
        ratio.push(l / (lambda * mean(&s)));
    }
    check("Little's law L / (λ W)", 1.0, &ratio);
}

/// `clients` closed-loop clients with a constant think time of `think_steps`
/// steps and `output` output tokens (service `output` steps), on one
/// replica of `servers` sequences, over `horizon_s`.
fn closed_loop(
    clients: u32,
    think_steps: u32,
    output: u32,
    servers: u32,
    horizon_s: f64,
) -> Report {
    let mut p = classical_queue(
        1.0,
        DistParams::constant(1.0),
        DistParams::constant(output as f64),
        servers,
        STEP_S,
        horizon_s,
        1,
    );
    p.classes[0].load = sojourn_engine::LoadParams::ClosedLoop {
        clients,
        think_ms: (think_steps > 0).then(|| DistParams::constant(think_steps as f64)),
        requests: None,
    };
    p.run.warmup_s = 0.0;
    run(p)
}

/// With as many servers as clients, nobody waits: each client's cycle is
/// its service s = O x δ plus its think time z, so throughput is exactly
/// C / (s + z), and every sojourn is s. (Think times of whole steps keep
/// every send on a step boundary: the replica is idle while all think.)
#[test]
fn closed_loop_throughput_is_clients_over_service_plus_think() {
    // C = 8, s = 50 ms, z = 150 ms: 40 requests/s; sends at 0, 0.2, ...,
    // below the 99.9 s horizon: 500 per client.
    let r = closed_loop(8, 150, 50, 8, 99.9);
    let (s, z) = (0.050, 0.150);
    assert_eq!(r.records.len(), 8 * 500);
    assert!(r.records.iter().all(|x| x.status == Status::Completed));
    for x in &r.records {
        assert!((x.sojourn_s() - s).abs() < 1e-9, "{x:?}");
    }
    let last_end = r.records.iter().map(|x| x.end_s).fold(0.0, f64::max);
    let throughput = r.records.len() as f64 / last_end;
    let theory = 8.0 / (s + z);
    // The last cycle ends after its service, not its think time.
    assert!(
        (throughput - theory).abs() < theory * z / last_end + 1e-9,
        "{throughput}"
    );
}

/// With one server the server is the bottleneck: it completes one request
/// per service time s, so throughput X = 1/s, and by the response-time law
/// R = C / X - Z each of C clients without think time waits for the other
/// C - 1: once the first round is through, every sojourn is C x s.
#[test]
fn a_saturated_closed_loop_obeys_the_response_time_law() {
    let (clients, s) = (4, 0.050);
    let r = closed_loop(clients, 0, 50, 1, 20.0);
    let mut ends: Vec<f64> = r.records.iter().map(|x| x.end_s).collect();
    ends.sort_by(f64::total_cmp);
    for w in ends.windows(2) {
        assert!(
            (w[1] - w[0] - s).abs() < 1e-9,
            "completions {w:?} not s apart"
        );
    }
    for x in r.records.iter().skip(clients as usize) {
        let response = x.sojourn_s();
        assert!((response - clients as f64 * s).abs() < 1e-9, "{x:?}");
    }
}

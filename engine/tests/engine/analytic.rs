//! The seeds' two-stage queue estimate against simulation: M/M/c and batch
//! arrivals on one server, within the sampling error of eight seeds plus
//! the approximation's stated error.

use sojourn_engine::{DistParams, QueueModel, RunOptions, Scenario, ScenarioParams, simulate};

use crate::support::{classical_queue, geometric, mean_and_se, mmc};

fn valid(p: ScenarioParams) -> Scenario {
    Scenario::try_from(p).expect("test scenario is valid")
}

/// Runs `params` on seeds 1..=8 and returns the analytic estimate and the
/// per-seed mean sojourn and P(miss) of class 0.
fn analytic_and_simulated(
    params: ScenarioParams,
) -> (sojourn_engine::ClassEstimate, Vec<f64>, Vec<f64>) {
    let scenario = valid(params.clone());
    let estimate = QueueModel::new(&scenario).estimate(params.cluster.replicas);
    assert!(estimate.stable);
    let (mut means, mut misses) = (Vec::new(), Vec::new());
    for seed in 1..=8u64 {
        let s = scenario
            .with_replicas_and_seed(params.cluster.replicas, seed * 7919)
            .unwrap();
        let r = simulate(&s, &RunOptions::default()).unwrap();
        means.push(r.classes[0].sojourn.mean);
        misses.push(r.classes[0].p_miss);
    }
    (estimate.classes[0].clone(), means, misses)
}

/// As in `closed_forms.rs`: the mean over 8 seeds within 4.5 standard errors
/// (t with 7 degrees of freedom: a false alarm below 0.5%) plus an allowance
/// for the approximation's own error, stated per regime.
fn check_close(what: &str, analytic: f64, values: &[f64], model_error: f64) {
    let (mean, se) = mean_and_se(values);
    let allowed = 4.5 * se + model_error * analytic.abs();
    eprintln!(
        "CHECK {what}: simulated {mean:.4} se {se:.4} analytic {analytic:.4} allowed {allowed:.4}"
    );
    assert!(
        (mean - analytic).abs() <= allowed,
        "{what}: simulated {mean:.4} +/- {se:.4} but the estimate says {analytic:.4} (allowed {allowed:.4})"
    );
}

#[test]
#[ignore = "slow: statistical: simulation against the closed form; scripts/test runs it"]
fn analytic_estimate_agrees_with_simulation_for_mmc() {
    // M/M/4 at rho = 0.75 (the engine as a classical queue): Erlang C is
    // exact here, so the estimate's error is the 1 ms prefill step it adds
    // and the 1 ms time grid: 2% allowed.
    let mut p = mmc(3.0, 1000.0, 4, 0.001, 20_000.0, 1);
    p.classes[0].deadline_s = 3.0;
    let (estimate, means, misses) = analytic_and_simulated(p);
    check_close("M/M/4 mean sojourn", estimate.mean_sojourn_s, &means, 0.02);
    check_close("M/M/4 P(S > 3 s)", estimate.p_miss, &misses, 0.02);
}

#[test]
fn analytic_estimate_agrees_with_simulation_for_batch_arrivals_on_one_server() {
    // Prefill only: one-token outputs, one sequence at a time, every prompt
    // in one step of 1 ms + 0.2 ms per token. Batches of geometric size
    // (mean 2) make it M^X/G/1, whose mean wait the estimate gives exactly;
    // 3% allowed for the lognormal moments taken from 10,000 samples.
    let mut p = classical_queue(
        0.35,
        geometric(2.0),
        DistParams::constant(1.0),
        1,
        0.001,
        30_000.0,
        1,
    );
    p.classes[0].input_tokens =
        DistParams::log_normal(3000.0, 8000.0).clamped(None, Some(30_000.0));
    p.engine.long_prefill_threshold = 0;
    p.engine.max_num_batched_tokens = 32_768;
    p.step_time = sojourn_engine::StepTimeParams::AlphaBeta {
        alpha_s_per_token: 0.0002,
        beta_s_per_step: 0.0,
        overhead_s: 0.001,
    };
    p.classes[0].deadline_s = 10.0;
    let (estimate, means, _) = analytic_and_simulated(p);
    check_close(
        "M^X/G/1 mean sojourn",
        estimate.mean_sojourn_s,
        &means,
        0.03,
    );
}

//! The saturation estimate where the KV cache binds, measured by the
//! engine's own scheduler (issue 19, item 5; `docs/engine.md`, Saturation).
//!
//! Where the KV cache holds every running request, the formula of
//! `model::analytic` is within 3% of simulated overload. Where it binds, an
//! overloaded engine thrashes: it admits a waiting request as soon as its
//! first chunk fits, pays for the running requests' growth by preempting the
//! most recently admitted, and recomputes what it preempted, which costs a
//! fifth to two thirds of its time. No closed form for that recomputation
//! was found (`docs/engine.md` records what was tried), so there the
//! estimate runs the scheduler itself: one replica offered twice the
//! formula's saturation rate (its queue never empties) for a bounded time,
//! with a fixed seed, and measures the work it completes after a warm-up.
//! It is a measurement, not a closed form: deterministic (one seed, no
//! clock) and bounded (the time in which the formula expects
//! [`WARM_UP_REQUESTS`] + [`WINDOW_REQUESTS`] completions, at most
//! [`MAX_WORK`] units of work).
//!
//! The completed work is weighed by the formula's cost per prompt and per
//! output token, so the mix of lengths that happened to complete in the
//! window does not add its own noise: the measured work per request is the
//! window's length over the formula's work it completed, times the
//! formula's work per request.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::model::analytic::{self, LoadEstimate};
use crate::model::scenario::Scenario;
use crate::params::{Discipline, DistParams, LoadParams, ScenarioParams};
use crate::sim::{EngineKind, RunOptions, Simulation, Status};

/// The fixed seed of the saturated run: the estimate is the same whatever
/// the scenario's seed, so every replication of a plan sees one rho.
const SEED: u64 = 0x5a7_0a7e;
/// Requests the formula expects the replica to complete before the measured
/// window: the thrash settles in that time (with 8,000 instead, at 1.6
/// times the cost, the estimate moved by up to 2.6% at constant lengths and
/// 3.8% at lognormal ones, both ways: the spread of runs, not a bias).
pub const WARM_UP_REQUESTS: f64 = 2000.0;
/// Requests the formula expects the replica to complete in the measured
/// window (the thrashing replica completes a tenth to three fifths fewer on
/// the shapes of `docs/engine.md`). With 2,000 the estimate missed the
/// simulated saturation by up to 5% at constant lengths and 12% at
/// lognormal ones; with 8,000, by at most 2.1%.
pub const WINDOW_REQUESTS: f64 = 8000.0;
/// The saturated run's offered rate against the formula's saturation rate,
/// which is at or above the simulated one: the queue grows from the start.
const OFFERED: f64 = 2.0;
/// Work (units of about one engine event) the saturated run may take
/// before the formula stands
/// alone (a runaway bound; the shapes measured take far fewer).
pub const MAX_WORK: u64 = 5_000_000;

/// The report's load estimate: the formula's (`model::analytic`) where the
/// KV cache holds every running request; where it binds, the same estimate
/// with the work per request measured on a saturated replica (see the
/// module docs). Should the saturated run fail its bounds, the formula's
/// stands (an upper bound on capacity there).
pub fn load_estimate(scenario: &Scenario) -> LoadEstimate {
    let formula = analytic::load_estimate(scenario);
    if !analytic::kv_binds(scenario) {
        return formula;
    }
    match saturated_work_s(scenario, &formula, MAX_WORK) {
        Some(work) => formula.measured(work),
        None => formula,
    }
}

/// Saturated runs measured on this thread, by what fixes them: the
/// saturated scenario (as JSON), the work cap and the formula's costs that
/// weigh the completed work (as bits). A plan builds a report
/// for every simulation, and the saturated run is the same for every fleet
/// size, seed and load level of a configuration (one replica, a fixed
/// seed, the classes' mix at the formula's rate): a fifth of a default
/// day's simulation each time, paid once per configuration instead. The
/// inputs fix the run, so sharing cannot change a figure.
type Measured = BTreeMap<(String, u64, [u64; 3]), Option<f64>>;

thread_local! {
    static MEASURED: RefCell<Measured> = const { RefCell::new(BTreeMap::new()) };
}

/// Distinct saturated runs kept per thread; more are run again.
const KEPT: usize = 64;

/// Replica-seconds per request on one saturated replica, from its run of
/// within `max_work` units of work (`None` past them); run once per
/// thread for equal inputs.
fn saturated_work_s(scenario: &Scenario, formula: &LoadEstimate, max_work: u64) -> Option<f64> {
    let warm_s = WARM_UP_REQUESTS * formula.work_per_request_s;
    let horizon_s = warm_s + WINDOW_REQUESTS * formula.work_per_request_s;
    let params = saturated_params(scenario, formula, horizon_s)?;
    let costs = [
        formula.work_per_request_s,
        formula.prefill_s_per_token,
        formula.decode_s_per_token,
    ]
    .map(f64::to_bits);
    let key = (serde_json::to_string(&params).ok()?, max_work, costs);
    if let Some(measured) = MEASURED.with_borrow(|kept| kept.get(&key).copied()) {
        return measured;
    }
    let measured = run_saturated(params, formula, max_work, warm_s);
    MEASURED.with_borrow_mut(|kept| {
        if kept.len() >= KEPT {
            kept.clear();
        }
        kept.insert(key, measured);
    });
    measured
}

/// [`saturated_work_s`]'s run: the completed work of its window, weighed by
/// the formula's cost per prompt and output token.
fn run_saturated(
    params: ScenarioParams,
    formula: &LoadEstimate,
    max_work: u64,
    warm_s: f64,
) -> Option<f64> {
    let horizon_s = params.run.horizon_s;
    let window_s = horizon_s - warm_s;
    let saturated = Scenario::try_from(params).ok()?;
    let options = RunOptions {
        engine: EngineKind::Fast,
        max_work,
        keep_records: true,
        ..RunOptions::default()
    };
    let output = Simulation::new(&saturated, &options).ok()?.finish().ok()?;
    let formula_work: f64 = output
        .records
        .iter()
        .filter(|r| r.status == Status::Completed && r.end_s >= warm_s && r.end_s <= horizon_s)
        .map(|r| {
            let prompt = r.input_tokens.saturating_sub(r.cached_tokens).max(1) as f64;
            prompt * formula.prefill_s_per_token
                + r.output_tokens as f64 * formula.decode_s_per_token
        })
        .sum();
    (formula_work > 0.0).then(|| window_s * formula.work_per_request_s / formula_work)
}

/// `scenario` on one replica, its rate-following classes as open streams of
/// single requests offered [`OFFERED`] times the formula's saturation rate
/// in their mix, over `horizon_s` with nothing after it: first come, first
/// served, no timeouts, the fixed seed. `None` without a class that offers
/// a rate.
fn saturated_params(
    scenario: &Scenario,
    formula: &LoadEstimate,
    horizon_s: f64,
) -> Option<ScenarioParams> {
    let total_rate = scenario.mean_request_rate_per_s();
    if !(total_rate > 0.0 && horizon_s.is_finite() && horizon_s > 0.0) {
        return None;
    }
    let per_replica = formula.saturation_rate_per_s / scenario.params().cluster.replicas as f64;
    let mut p = scenario.params().clone();
    p.classes = scenario
        .classes()
        .iter()
        .zip(&p.classes)
        .filter_map(|(class, params)| {
            let rate = class.mean_batch_rate_per_s() * class.batch_size.moments().0;
            (rate > 0.0).then(|| {
                let mut c = params.clone();
                c.batches_per_hour = 3600.0 * OFFERED * per_replica * rate / total_rate;
                c.batch_size = DistParams::constant(1.0);
                c.time_of_day = None;
                c.timeout_s = None;
                c.load = LoadParams::Open;
                c
            })
        })
        .collect();
    p.cluster.replicas = 1;
    p.engine.discipline = Discipline::Fcfs;
    p.run.horizon_s = horizon_s;
    p.run.warmup_s = 0.0;
    p.run.drain_s = Some(0.0);
    p.run.seed = SEED;
    p.run.series_interval_s = horizon_s;
    p.plan = Default::default();
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{ClassParams, ScenarioParams};

    /// One class of constant lengths on 8B on one H100.
    fn one_class(input: f64, output: f64, seed: u64) -> Scenario {
        let mut p = ScenarioParams::overnight_batch();
        p.classes = vec![ClassParams {
            name: "load".into(),
            batches_per_hour: 3600.0,
            input_tokens: DistParams::constant(input),
            output_tokens: DistParams::constant(output),
            ..ClassParams::default()
        }];
        p.run.seed = seed;
        p.plan = Default::default();
        Scenario::try_from(p).expect("valid")
    }

    /// Where the KV cache holds every running request, the report's
    /// estimate is the formula's, and no run is made.
    #[test]
    fn where_the_kv_cache_holds_everything_the_formula_stands() {
        let s = one_class(200.0, 2000.0, 1);
        assert_eq!(load_estimate(&s), analytic::load_estimate(&s));
    }

    /// Where it binds, the estimate is measured, below the formula's
    /// capacity, and the same whatever the scenario's seed and fleet (one
    /// seed, one replica): one rho for every replication of a plan.
    #[test]
    fn where_the_kv_cache_binds_the_estimate_is_measured_and_deterministic() {
        let s = one_class(2000.0, 2000.0, 1);
        let measured = load_estimate(&s);
        let formula = analytic::load_estimate(&s);
        assert!(measured.measured);
        assert!(measured.saturation_rate_per_s < 0.9 * formula.saturation_rate_per_s);
        // Without prefix caching every preempted request recomputes its
        // whole context: the replica saturates sooner still.
        let mut p = s.params().clone();
        p.engine.prefix_caching = false;
        let recomputing = load_estimate(&Scenario::try_from(p).expect("valid"));
        assert!(recomputing.saturation_rate_per_s < 0.9 * measured.saturation_rate_per_s);
        assert_eq!(load_estimate(&one_class(2000.0, 2000.0, 9)), measured);
        let mut p = s.params().clone();
        p.cluster.replicas = 3 * s.params().cluster.replicas;
        let three = load_estimate(&Scenario::try_from(p).expect("valid"));
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-9;
        assert!(close(three.work_per_request_s, measured.work_per_request_s));
        assert!(close(
            three.saturation_rate_per_s,
            3.0 * measured.saturation_rate_per_s
        ));
    }

    /// A saturated run is kept per thread by what fixes it: another shape
    /// on the same thread is measured anew, and a kept one gives what a
    /// fresh thread (nothing kept) measures.
    #[test]
    fn kept_runs_are_the_runs_of_their_own_inputs() {
        let fresh = |input: f64, output: f64| {
            std::thread::spawn(move || load_estimate(&one_class(input, output, 1)))
                .join()
                .expect("the thread runs")
        };
        let first = load_estimate(&one_class(2000.0, 2000.0, 1));
        let second = load_estimate(&one_class(4000.0, 1000.0, 1));
        assert!(first.measured && second.measured);
        assert_ne!(first.work_per_request_s, second.work_per_request_s);
        assert_eq!(second, fresh(4000.0, 1000.0));
        assert_eq!(
            load_estimate(&one_class(2000.0, 2000.0, 5)),
            fresh(2000.0, 2000.0)
        );
    }

    /// The saturated run is bounded by its work cap: past it, the
    /// formula's estimate stands rather than a runaway run.
    #[test]
    fn the_saturated_run_is_bounded() {
        let s = one_class(2000.0, 2000.0, 1);
        let formula = analytic::load_estimate(&s);
        let work = saturated_work_s(&s, &formula, MAX_WORK).expect("runs");
        assert!(work > formula.work_per_request_s);
        assert_eq!(saturated_work_s(&s, &formula, 1000), None);
    }
}

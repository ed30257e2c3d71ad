//! A price edit re-costs without simulating: a report re-costed at new
//! prices, and a plan re-made from an earlier plan's runs, equal a fresh run
//! and a fresh plan at those prices exactly (same seeds).

use sojourn_engine::{
    CandidateParams, PlanOptions, PlanPoll, PlanResult, PlanSession, PricingModel, RunOptions,
    RunSummary, Scenario, ScenarioParams, SensitivityInput, plan, report_cost, same_but_prices,
    simulate,
};

use crate::support::planned_queue;

/// 30 jobs/s of 0.2 s each on one-job replicas (as in `planner.rs`): a
/// plan of a few dozen short runs, with a price.
fn priced_scenario(seed: u64) -> ScenarioParams {
    let mut p = planned_queue(sojourn_engine::DistParams::constant(200.0), 0.3, seed);
    p.cluster.replicas = 8;
    p.plan.max_replicas = 12;
    p.plan.replications = 2;
    p.plan.min_replications = 2;
    p.plan.pricing.usd_per_gpu_hour = Some(2.0);
    p.plan.pricing.fixed_usd_per_month = 100.0;
    p.plan.reserve.failure_reserve_replicas = 1;
    p.plan.sensitivity.inputs = vec![SensitivityInput::Price, SensitivityInput::OutputTokens];
    p.plan.service_curve.load_multipliers = vec![0.5, 1.0];
    p
}

/// `p` at other prices: every price field changed.
fn repriced(p: &ScenarioParams) -> ScenarioParams {
    let mut q = p.clone();
    q.plan.pricing.usd_per_gpu_hour = Some(3.5);
    q.plan.pricing.fixed_usd_per_month = 250.0;
    q.plan.pricing.pricing_model = PricingModel::Reserved;
    q.plan.pricing.price_date = "2026-01-01".into();
    q.plan.pricing.provider_region = "elsewhere".into();
    q.plan.worst.price = 1.7;
    q.plan.best.price = 0.6;
    q
}

fn valid(p: ScenarioParams) -> Scenario {
    Scenario::try_from(p).expect("test scenario is valid")
}

/// Drives `session` to its result, running each job it asks for; returns
/// the result and how many simulations ran.
fn drive(session: &mut PlanSession) -> (PlanResult, u64) {
    let mut ran = 0;
    loop {
        match session.poll().unwrap() {
            PlanPoll::Jobs(jobs) => {
                for job in jobs {
                    session.submit(job.run(&mut |_| true).unwrap());
                    ran += 1;
                }
            }
            PlanPoll::Done(result) => return (*result, ran),
        }
    }
}

/// The plan of `new` made from the runs of a plan of `old`, how many
/// simulations it ran, and a fresh plan of `new`; checks the session's own
/// count of the simulations it ran against the jobs run, and that it names
/// the new runs exactly when it reused runs and still needed some.
fn remade(old: ScenarioParams, new: ScenarioParams) -> (PlanResult, u64, PlanResult) {
    let reusing = same_but_prices(&old, &new);
    let mut previous = PlanSession::new(valid(old), options());
    drive(&mut previous);
    let mut session = PlanSession::reusing(valid(new.clone()), options(), previous);
    let (result, ran) = drive(&mut session);
    assert_eq!(session.simulated(), ran, "the session counts what it ran");
    let named = session.new_runs();
    assert_eq!(named.is_some(), reusing && ran > 0, "{named:?}");
    (result, ran, plan(&valid(new), &options()).unwrap())
}

/// The scenario of `seed` with two hardware options, the same accelerator
/// at two prices.
fn two_prices(seed: u64, first: f64, second: f64) -> ScenarioParams {
    let mut p = priced_scenario(seed);
    p.plan.candidates = Some(vec![
        CandidateParams {
            name: "first".into(),
            usd_per_gpu_hour: Some(first),
            ..CandidateParams::default()
        },
        CandidateParams {
            name: "second".into(),
            usd_per_gpu_hour: Some(second),
            ..CandidateParams::default()
        },
    ]);
    p
}

fn options() -> PlanOptions {
    PlanOptions {
        threads: 1,
        ..PlanOptions::default()
    }
}

#[test]
fn only_price_fields_count_as_prices() {
    let p = priced_scenario(3);
    assert!(same_but_prices(&p, &repriced(&p)));
    let mut rate = p.clone();
    rate.classes[0].batches_per_hour *= 1.1;
    assert!(!same_but_prices(&p, &rate), "a rate changes the runs");
    let mut reserve = p.clone();
    reserve.plan.worst.arrival_rate = 2.0;
    assert!(
        !same_but_prices(&p, &reserve),
        "a case's load changes its runs"
    );
}

#[test]
fn a_report_recosted_at_new_prices_equals_a_fresh_run_at_them() {
    let old = priced_scenario(5);
    let new = repriced(&old);
    let run = |p: &ScenarioParams| {
        let scenario = valid(p.clone());
        let options = RunOptions {
            keep_records: true,
            ..RunOptions::default()
        };
        RunSummary::new(simulate(&scenario, &options).unwrap(), &scenario)
    };
    let (before, fresh) = (run(&old), run(&new));
    assert_eq!(before.report, fresh.report, "prices never change a run");
    assert_ne!(before.cost, fresh.cost, "the prices change the cost");
    // The report as the page holds it: through JSON, without its records.
    let travelled: RunSummary =
        serde_json::from_str(&serde_json::to_string(&before).unwrap()).unwrap();
    assert_eq!(report_cost(&travelled.report, &new), fresh.cost);
}

#[test]
#[ignore = "slow: three full plans; scripts/test runs it"]
fn a_plan_remade_at_new_prices_reuses_every_run_and_equals_a_fresh_plan() {
    let old = priced_scenario(7);
    let before = plan(&valid(old.clone()), &options()).unwrap();
    let (result, ran, fresh) = remade(old, repriced(&priced_scenario(7)));
    assert_ne!(
        before.recommendation.as_ref().map(|r| &r.budget),
        fresh.recommendation.as_ref().map(|r| &r.budget),
        "the new prices change the plan's cost"
    );
    assert_eq!(ran, 0, "no simulation runs again");
    assert_eq!(result, fresh);
    assert_eq!(result.simulations, before.simulations);
}

#[test]
#[ignore = "slow: three full plans; scripts/test runs it"]
fn prices_that_change_the_choice_still_give_the_fresh_plan() {
    // The same accelerator at two prices: swapping them swaps the choice,
    // and the search may try fleets the first plan did not.
    let with_prices = |first, second| two_prices(9, first, second);
    let (result, _, fresh) = remade(with_prices(3.0, 2.0), with_prices(2.0, 3.0));
    assert_eq!(fresh.recommendation.as_ref().unwrap().candidate, "first");
    assert_eq!(result, fresh);
}

#[test]
#[ignore = "slow: full plans; scripts/test runs it"]
fn a_plan_of_other_runs_simulates_afresh() {
    let old = priced_scenario(11);
    let mut new = old.clone();
    new.classes[0].batches_per_hour *= 0.9;
    let (result, ran, fresh) = remade(old, new);
    assert_eq!(ran, fresh.simulations, "every run is simulated again");
    assert_eq!(result, fresh);
}

#[test]
#[ignore = "slow: full plans; scripts/test runs it"]
fn a_session_counts_only_the_simulations_it_ran_and_names_the_new_ones() {
    // The same accelerator at two prices, the dearer one made cheaper: the
    // re-plan reuses the earlier runs and simulates only the fleets of the
    // newly cheaper configuration that the first plan never tried; the
    // session says which.
    let with_prices = |first, second| two_prices(13, first, second);
    let mut previous = PlanSession::new(valid(with_prices(3.0, 2.0)), options());
    let (_, first) = drive(&mut previous);
    assert_eq!(previous.simulated(), first);
    assert_eq!(previous.new_runs(), None, "a new session reuses nothing");
    let mut session = PlanSession::reusing(valid(with_prices(2.0, 3.0)), options(), previous);
    let (result, ran) = drive(&mut session);
    assert_eq!(session.simulated(), ran);
    assert!(
        ran < result.simulations,
        "most runs are reused: {ran} of {}",
        result.simulations
    );
    assert!(
        ran > 0,
        "the newly cheaper configuration's fleets are new runs"
    );
    let which = session.new_runs().expect("new runs are named");
    assert!(which.contains("first"), "{which}");
    assert!(which.contains("replica"), "{which}");
}

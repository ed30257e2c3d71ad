//! The simulations issue 40 (item 8) cut from large plans, each cut with
//! the decision it must leave unchanged:
//!
//! - a one-seed probe that is only uncertain (its point estimates within
//!   every threshold, one run's requests too few for the exact bound of a
//!   miss target to fall under its epsilon) steers the search as meeting,
//!   so the search no longer gallops to `max_replicas` on probes no fleet
//!   could pass, and still decides its answer on replications;
//! - the search's choice (a session's provisional result) waits for no
//!   run of the binding target, whose runs are asked for beside the curve.
//!
//! The scenarios are the planner tests' queue of one-job replicas with 1 ms
//! steps (`support::planned_queue`).

use sojourn_engine::{
    DecisionRule, DistParams, PlanOptions, PlanPoll, PlanSession, Scenario, ScenarioParams,
    SensitivityInput, TargetParams, Verdict,
};

use crate::support::{planned, planned_queue};

/// 30 jobs/s of 200 ms on one-job replicas (6 Erlangs), about 15,000
/// measured jobs a run, under the `upper95` rule with
/// P(S > 300 ms) <= 1e-4: a run without a miss bounds P(miss) by about
/// 3 / 15,000 = 2e-4 (exact, Clopper-Pearson), so no single run can show it
/// met; two pooled runs without a miss can (about 1e-4... 3 / 30,000).
fn rare_misses() -> ScenarioParams {
    let mut p = planned_queue(DistParams::constant(200.0), 0.3, 11);
    p.plan.targets = vec![TargetParams::MissProbability {
        class: None,
        epsilon: 1.5e-4,
    }];
    p.plan.decision = DecisionRule::Upper95;
    p.plan.min_replications = 2;
    p.plan.replications = 4;
    p.plan.max_replicas = 32;
    p
}

#[test]
fn an_uncertain_one_seed_probe_steers_the_search_near_its_answer_which_replications_decide() {
    let result = planned(&rare_misses());
    let chosen = result.chosen.expect("a fleet meets the target");
    let search = &result.configurations[chosen].search;
    let n = search.found.expect("a fleet");
    // One-seed probes show this target at best uncertain: the search took
    // them as a guide, not as failures, and bracketed near the answer
    // instead of galloping to 32 replicas.
    let probes: Vec<&sojourn_engine::Evaluation> = search
        .evaluations
        .iter()
        .filter(|e| e.replications == 1)
        .collect();
    assert!(
        probes.iter().any(|e| e.verdict == Verdict::Uncertain),
        "the scenario shows the case: {:?}",
        probes
            .iter()
            .map(|e| (e.replicas, e.verdict))
            .collect::<Vec<_>>()
    );
    // No run went to the most replicas allowed: driven as the page drives
    // it, every job the plan asked for is below 32 replicas (a pass capped
    // by the answer itself hides such runs from the search's list, not
    // from the jobs). Taken as failures, the uncertain probes gallop there.
    let largest = largest_fleet_run(&rare_misses());
    assert!(
        largest < 32,
        "runs up to {largest} replicas for an answer of {n}"
    );
    // The decision is the full search's: n decided met and n - 1 decided
    // not meeting, both on replications (what any search, however it
    // probed, decides this monotone target on).
    let decided = |m: u32| {
        search
            .evaluations
            .iter()
            .filter(|e| e.replicas == m && e.replications >= 2)
            .max_by_key(|e| e.replications)
            .unwrap_or_else(|| panic!("{m} replicas decided"))
    };
    assert!(decided(n).meets);
    assert!(!decided(n - 1).meets);
    assert!(n > 1 && n < 32, "{n}");
}

/// The largest fleet any job of the search-only plan of `params` ran.
fn largest_fleet_run(params: &ScenarioParams) -> u32 {
    let scenario = Scenario::try_from(params.clone()).expect("valid");
    let mut session = PlanSession::new(scenario, crate::support::search_only());
    let mut largest = 0;
    loop {
        match session.poll().expect("plans") {
            PlanPoll::Jobs(jobs) => {
                for job in jobs {
                    largest = largest.max(job.key().replicas);
                    session.submit(job.run(&mut |_| true).expect("runs"));
                }
            }
            PlanPoll::Done(_) => return largest,
        }
    }
}

/// The queue with a tight p99 sojourn target beside its miss target (the
/// binding target's fleet without it needs runs of its own), a service
/// curve and one sensitivity input, so the plan runs well beyond its search.
fn with_binding_target() -> Scenario {
    let mut p = planned_queue(DistParams::constant(200.0), 0.3, 11);
    p.plan.max_replicas = 24;
    p.plan.targets.push(TargetParams::SojournPercentile {
        class: None,
        percentile: 0.99,
        bound_s: 0.25,
    });
    p.plan.sensitivity.inputs = vec![SensitivityInput::OutputTokens];
    p.plan.service_curve.load_multipliers = vec![0.5, 1.0, 1.5];
    Scenario::try_from(p).expect("valid")
}

#[test]
#[ignore = "slow: a full plan, round by round; scripts/test runs it"]
fn the_search_s_choice_waits_for_no_run_of_the_binding_target_curve_or_cases() {
    let options = PlanOptions {
        threads: 1,
        ..PlanOptions::default()
    };
    let mut session = PlanSession::new(with_binding_target(), options);
    // The stages of the jobs run before the choice first shows (asked for
    // once a round's jobs are handed out, as the page does).
    let mut ran: Vec<String> = Vec::new();
    let mut before_choice: Option<Vec<String>> = None;
    let result = loop {
        match session.poll().expect("plans") {
            PlanPoll::Jobs(jobs) => {
                if before_choice.is_none() && session.provisional().is_some() {
                    before_choice = Some(ran.clone());
                }
                for job in jobs {
                    ran.push(job.stage().to_string());
                    session.submit(job.run(&mut |_| true).expect("runs"));
                }
            }
            PlanPoll::Done(result) => break result,
        }
    };
    let binding = result.binding.as_ref().expect("a target binds");
    assert!(
        binding.extra_simulations > 0,
        "the binding target runs fleets of its own"
    );
    let before = before_choice.expect("the choice shows before the plan is complete");
    let search = ["exploration", "configured fleet", "baseline (own settings)"];
    assert!(
        before.iter().all(|stage| search.contains(&stage.as_str())),
        "before the choice: {before:?}"
    );
    assert!(ran.iter().any(|stage| stage == "binding target"), "{ran:?}");
}

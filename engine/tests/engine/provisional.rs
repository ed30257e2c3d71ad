//! A plan session's provisional result: the search's decision, shown while
//! the demand cases, the service curve and sensitivity still run.

use sojourn_engine::{
    DistParams, PlanOptions, PlanPoll, PlanResult, PlanSession, Scenario, SensitivityInput, plan,
};

use crate::support::planned_queue;

/// The servers case of the planner's tests (7 or more one-at-a-time
/// replicas for 30 jobs/s of 0.2 s) with a curve and one sensitivity input,
/// so that the plan runs well beyond its search.
fn scenario() -> Scenario {
    let mut p = planned_queue(DistParams::constant(200.0), 0.3, 25);
    p.cluster.replicas = 8;
    p.plan.max_replicas = 12;
    p.plan.replications = 2;
    p.plan.min_replications = 2;
    p.plan.sensitivity.inputs = vec![SensitivityInput::OutputTokens];
    p.plan.service_curve.load_multipliers = vec![0.5, 1.0];
    Scenario::try_from(p).expect("valid")
}

fn options() -> PlanOptions {
    PlanOptions {
        threads: 1,
        ..PlanOptions::default()
    }
}

/// The session's provisional result at each poll, then the complete plan.
fn drive(session: &mut PlanSession) -> (Vec<Option<PlanResult>>, PlanResult) {
    let mut provisional = Vec::new();
    loop {
        match session.poll().expect("plans") {
            PlanPoll::Jobs(jobs) => {
                provisional.push(session.provisional().cloned());
                for job in jobs {
                    session.submit(job.run(&mut |_| true).expect("runs"));
                }
            }
            PlanPoll::Done(result) => return (provisional, *result),
        }
    }
}

#[test]
#[ignore = "slow: full plans; scripts/test runs it"]
fn the_search_s_decision_comes_early_and_is_the_search_only_plan_s() {
    let scenario = scenario();
    let mut session = PlanSession::new(scenario.clone(), options());
    let (provisional, complete) = drive(&mut session);
    let first = provisional
        .iter()
        .position(Option::is_some)
        .expect("a provisional result before the plan is complete");
    assert!(
        provisional[first..].iter().all(Option::is_some),
        "once there, it stays until the plan is complete"
    );
    let early = provisional[first].clone().expect("provisional");
    assert!(
        early.simulations < complete.simulations / 2,
        "{} of {}",
        early.simulations,
        complete.simulations
    );
    // Its decision is the search-only plan's (`sojourn plan --search-only`):
    // the configuration, its search, and the fleet with its verdict and
    // costs. It leaves out the configured fleet's verdict and the search of
    // the scenario's own settings, which run beside the rest of the plan.
    let searched = plan(&scenario, &options().search_only()).expect("plans");
    let chosen = early.chosen.expect("a configuration meets the targets");
    assert_eq!(early.chosen, searched.chosen);
    assert_eq!(
        early.configurations[chosen],
        searched.configurations[chosen]
    );
    assert_eq!(early.recommendation, searched.recommendation);
    assert!(early.configured.is_none() && searched.configured.is_some());
    // The complete plan agrees on the decision, and is what `plan` gives:
    // the provisional passes leave no trace in the session.
    assert_eq!(early.chosen, complete.chosen);
    assert_eq!(
        early.recommendation.map(|r| r.min_replicas),
        complete.recommendation.as_ref().map(|r| r.min_replicas)
    );
    assert_eq!(complete, plan(&scenario, &options()).expect("plans"));
    assert!(session.provisional().is_none(), "superseded once complete");
}

#[test]
fn a_search_only_session_has_nothing_provisional() {
    let mut session = PlanSession::new(scenario(), options().search_only());
    let (provisional, _) = drive(&mut session);
    assert!(provisional.iter().all(Option::is_none));
}

/// Worked out when first asked for, the provisional result is the same
/// whether it is asked for before the next jobs run (as the page does,
/// once it has handed them out) or after they are back.
#[test]
#[ignore = "slow: two full plans; scripts/test runs it"]
fn the_provisional_decision_does_not_depend_on_when_it_is_asked_for() {
    let mut asked_early = PlanSession::new(scenario(), options());
    let (early, _) = drive(&mut asked_early);
    let early = early.into_iter().flatten().next().expect("provisional");
    let mut asked_late = PlanSession::new(scenario(), options());
    let late = loop {
        match asked_late.poll().expect("plans") {
            PlanPoll::Jobs(jobs) => {
                for job in jobs {
                    asked_late.submit(job.run(&mut |_| true).expect("runs"));
                }
                if asked_late.simulations() <= early.simulations {
                    continue;
                }
                if let Some(late) = asked_late.provisional() {
                    break late.clone();
                }
            }
            PlanPoll::Done(_) => panic!("no provisional result before the plan was complete"),
        }
    };
    assert!(late.simulations > early.simulations, "asked later");
    let chosen = early.chosen.expect("a configuration meets the targets");
    assert_eq!(late.chosen, early.chosen);
    assert_eq!(late.configurations[chosen], early.configurations[chosen]);
    assert_eq!(late.recommendation, early.recommendation);
}

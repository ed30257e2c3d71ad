//! How a plan's simulations come in rounds: what a session asks for at
//! once runs side by side on the page's workers or the CLI's threads.

use sojourn_engine::{DistParams, PlanOptions, PlanPoll, PlanSession, Scenario, SensitivityInput};

use crate::support::{flood, planned_queue};

/// Every point of the service curve runs at least its first seeds (decided
/// or drawn), so the session asks for all of them in one round, not point
/// after point; the 1x point is the search's, already run.
#[test]
fn the_service_curve_asks_for_every_points_first_seeds_at_once() {
    let mut p = planned_queue(DistParams::constant(200.0), 0.3, 25);
    p.cluster.replicas = 8;
    p.plan.max_replicas = 12;
    p.plan.sensitivity.inputs = vec![SensitivityInput::OutputTokens];
    p.plan.service_curve.load_multipliers = vec![0.5, 1.0, 1.5, 2.0];
    let first = p.plan.min_replications as usize;
    let mut session = PlanSession::new(
        Scenario::try_from(p).expect("valid"),
        PlanOptions {
            threads: 1,
            ..PlanOptions::default()
        },
    );
    let curve_round = loop {
        match session.poll().expect("plans") {
            PlanPoll::Jobs(jobs) => {
                let labels: Vec<String> = jobs.iter().map(|j| j.label().to_string()).collect();
                if labels.iter().any(|l| l.starts_with("base at")) {
                    break labels;
                }
                for job in jobs {
                    session.submit(job.run(&mut |_| true).expect("runs"));
                }
            }
            PlanPoll::Done(_) => panic!("the plan ended without a service curve"),
        }
    };
    for load in ["0.5", "1.5", "2"] {
        let prefix = format!("base at {load}x load ");
        let seeds = curve_round
            .iter()
            .filter(|l| l.starts_with(&prefix))
            .count();
        assert_eq!(seeds, first, "{load}x in {curve_round:?}");
    }
    assert!(!curve_round.iter().any(|l| l.starts_with("base at 1x load")));
}

/// A configuration whose first seed failed waits for the likely answer (the
/// cheapest fleet a first seed met on) to be decided, except when only its
/// floor could beat that answer: then the floor is decided whatever comes,
/// so its replications run beside the likely answer's. On the flood the
/// likely answer is a non-FCFS discipline at its smallest fleet, and FCFS
/// (the scenario's own settings, first in a tie) at the same fleet is
/// decided in the same rounds, not after them.
#[test]
#[ignore = "slow: a full plan; scripts/test runs it"]
fn a_tied_floor_is_decided_beside_the_likely_answer() {
    let mut session = PlanSession::new(
        Scenario::try_from(flood()).expect("valid"),
        PlanOptions {
            threads: 1,
            scenarios: false,
            service_curve: false,
            sensitivity: false,
            ..PlanOptions::default()
        },
    );
    let mut rounds: Vec<Vec<String>> = Vec::new();
    let result = loop {
        match session.poll().expect("plans") {
            PlanPoll::Jobs(jobs) => {
                rounds.push(jobs.iter().map(|j| j.label().to_string()).collect());
                for job in jobs {
                    session.submit(job.run(&mut |_| true).expect("runs"));
                }
            }
            PlanPoll::Done(result) => break result,
        }
    };
    let chosen = &result.configurations[result.chosen.expect("a plan")];
    let baseline = &result.configurations[result.baseline.expect("a baseline")];
    let fleet = chosen.search.found.expect("found");
    assert_ne!(chosen.name, baseline.name, "a plan other than FCFS");
    // A later seed (a replication deciding the fleet) of `name` on `fleet`.
    // ("expected demand (H100 SXM5 80GB x1, FCFS), 1 replicas, seed 2")
    let replication = |label: &String, name: &str| {
        label.contains(&format!("{name}), {fleet} replicas, seed ")) && !label.ends_with(", seed 1")
    };
    let beside = rounds.iter().any(|round| {
        round.iter().any(|l| replication(l, &baseline.name))
            && round.iter().any(|l| replication(l, &chosen.name))
    });
    assert!(beside, "{rounds:#?}");
}

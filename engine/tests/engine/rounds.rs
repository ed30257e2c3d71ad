//! How a plan's simulations come in rounds: what a session asks for at
//! once runs side by side on the page's workers or the CLI's threads.

use sojourn_engine::{DistParams, PlanOptions, PlanPoll, PlanSession, Scenario, SensitivityInput};

use crate::support::planned_queue;

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

//! The configured fleet judged by the plan: the scenario as it stands (its
//! own hardware and settings, on its own `cluster.replicas`) decided by the
//! same rule and sequential replications as every fleet the search decides,
//! on the planner tests' queue of one-job replicas (30 jobs/s of 200 ms: 6
//! Erlangs).

use sojourn_engine::{
    CandidateParams, DecisionRule, DistParams, ScenarioParams, TargetParams, Verdict,
};

use crate::support::{planned, planned_queue};

/// The queue on `replicas`, judged by the upper end of the 95% interval
/// from 2 replications up to 8.
fn queue(replicas: u32) -> ScenarioParams {
    let mut p = planned_queue(DistParams::constant(200.0), 0.3, 11);
    p.cluster.replicas = replicas;
    p.plan.max_replicas = 24;
    p.plan.decision = DecisionRule::Upper95;
    p.plan.min_replications = 2;
    p.plan.replications = 8;
    p
}

#[test]
fn the_configured_fleet_is_decided_over_replications_with_its_bound() {
    // 6 replicas for 6 Erlangs: far too few, on every seed.
    let result = planned(&queue(6));
    let configured = result.configured.as_ref().expect("judged");
    assert_eq!(configured.replicas, 6);
    assert_eq!(configured.configuration, result.configurations[0].name);
    let e = &configured.evaluation;
    assert_eq!(e.replicas, 6);
    assert!(e.replications >= 2, "{} replications", e.replications);
    assert_eq!(e.verdict, Verdict::NotMet);
    let miss = &e.checks[0];
    assert!(
        miss.bounds[0] < miss.mean && miss.mean < miss.bounds[1],
        "{:?} around {}",
        miss.bounds,
        miss.mean
    );
    assert_eq!(configured.cost.replications, e.replications);
    assert_eq!(configured.cost.fleet.steady_replicas, 6);
}

#[test]
fn a_configured_fleet_the_search_decided_gets_the_searchs_decision() {
    let first = planned(&queue(6));
    let n = first.configurations[0].search.found.expect("a fleet");
    // The scenario configured with the fleet the search found: the
    // search's own decision at that size (the same runs, from the cache).
    let result = planned(&queue(n));
    let search = &result.configurations[0].search;
    assert_eq!(search.found, Some(n));
    let decided = search.at_answer.as_ref().expect("decided");
    let configured = result.configured.as_ref().expect("judged");
    assert_eq!(&configured.evaluation, decided);
    assert_eq!(configured.evaluation.verdict, Verdict::Met);
}

#[test]
fn a_configured_fleet_whose_hardware_is_not_a_candidate_is_not_judged() {
    let mut p = queue(6);
    p.plan.candidates = Some(vec![CandidateParams {
        name: "pair".into(),
        gpus_per_replica: 2,
        ..CandidateParams::default()
    }]);
    let result = planned(&p);
    assert!(result.recommendation.is_some());
    assert_eq!(result.configured, None);
    assert_eq!(
        result.configured_not_judged.as_deref(),
        Some("its hardware is not among the plan's candidates")
    );
    // The same candidate as configured (under its own name and price) is
    // the scenario as it stands.
    let mut p = queue(6);
    p.plan.candidates = Some(vec![CandidateParams {
        name: "as configured".into(),
        gpus_per_replica: 1,
        usd_per_gpu_hour: Some(5.0),
        ..CandidateParams::default()
    }]);
    let result = planned(&p);
    assert!(result.configured.is_some());
    assert_eq!(result.configured_not_judged, None);
}

#[test]
fn a_configured_fleet_ruled_out_without_a_run_is_not_simulated() {
    // Jobs of log-normal length (median 200 steps, a long tail) under p99
    // sojourn <= 500 ms: their own p99 service is longer, as the plan
    // finds before any run; it runs none for the configured fleet.
    let mut p = planned_queue(DistParams::log_normal(200.0, 400.0), 3.0, 5);
    p.cluster.replicas = 6;
    p.plan.max_replicas = 24;
    p.plan.targets.push(TargetParams::SojournPercentile {
        class: None,
        percentile: 0.99,
        bound_s: 0.5,
    });
    let result = planned(&p);
    assert!(result.unattainable.is_some());
    assert_eq!(result.simulations, 0);
    assert_eq!(result.configured, None);
    assert_eq!(
        result.configured_not_judged.as_deref(),
        Some("a target no fleet of it can meet rules it out without a run")
    );
}

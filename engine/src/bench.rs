//! The fixed scenarios behind `sojourn bench` and `sojourn plan --bench`.

use crate::params::dist::{DistParams, Shape};
use crate::params::plan::TargetParams;
use crate::params::{ClassParams, Router, ScenarioParams};

/// A day of mixed traffic on 8 replicas of Llama-3.1-8B on H100: an API
/// stream of about 10 requests/s with a daily cycle, and batch jobs arriving
/// as Poisson batches of a few hundred requests. About 1.2 million requests.
pub fn large() -> ScenarioParams {
    let mut p = ScenarioParams {
        name: "bench: 24 h, 8 replicas".to_string(),
        classes: vec![
            ClassParams {
                name: "api".to_string(),
                batches_per_hour: 36_000.0,
                time_of_day: Some(vec![
                    0.4, 0.3, 0.3, 0.3, 0.4, 0.6, 0.9, 1.2, 1.4, 1.5, 1.5, 1.5, 1.4, 1.4, 1.5, 1.5,
                    1.4, 1.3, 1.2, 1.1, 1.0, 0.8, 0.6, 0.5,
                ]),
                input_tokens: DistParams::log_normal(600.0, 2500.0).clamped(None, Some(16_000.0)),
                output_tokens: DistParams::log_normal(150.0, 600.0).clamped(None, Some(4_000.0)),
                prefix_cache_hit: 0.3,
                priority: 0,
                deadline_s: 120.0,
                ..ClassParams::default()
            },
            ClassParams {
                name: "batch".to_string(),
                batches_per_hour: 2.0,
                batch_size: DistParams::new(Shape::Geometric { mean: 5000.0 }),
                input_tokens: DistParams::log_normal(1200.0, 4000.0).clamped(None, Some(32_000.0)),
                output_tokens: DistParams::log_normal(200.0, 800.0).clamped(None, Some(8_000.0)),
                prefix_cache_hit: 0.1,
                priority: 1,
                ..ClassParams::default()
            },
        ],
        ..ScenarioParams::overnight_batch()
    };
    p.cluster.replicas = 8;
    p.cluster.router = Router::JoinShortestQueue;
    p.run.seed = 2024;
    p
}

/// The first three hours of [`large`]: small enough for the reference
/// stepper to finish in seconds, for the speedup figure.
pub fn small() -> ScenarioParams {
    let mut p = large();
    p.name = "bench: first 3 h".to_string();
    p.run.horizon_s = 3.0 * 3600.0;
    p
}

/// Parameters of the capacity-search benchmark (`sojourn plan --bench`): the
/// seeds' case (overnight batch jobs with a 24 h SLA beside an API stream),
/// about 100,000 requests in 24 h, searched over up to 64 replicas with 5
/// replications for the base, best and worst cases.
pub fn plan() -> ScenarioParams {
    let mut p = ScenarioParams {
        name: "plan bench: overnight batch + API, 24 h".to_string(),
        ..ScenarioParams::overnight_batch()
    };
    p.plan.max_replicas = 64;
    p.plan.replications = 5;
    p.plan.targets = vec![
        TargetParams::miss_probability("nightly-batch", 0.001),
        TargetParams::miss_probability("api", 0.01),
    ];
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scenario::Scenario;

    #[test]
    fn the_large_bench_holds_a_million_requests_a_day_on_eight_replicas() {
        let s = Scenario::try_from(large()).expect("bench scenario is valid");
        assert_eq!(s.params().cluster.replicas, 8);
        assert_eq!(s.params().run.horizon_s, 86_400.0);
        let expected = s.expected_requests();
        assert!(expected > 1_000_000.0, "expected {expected} requests");
        Scenario::try_from(small()).expect("small bench scenario is valid");
    }
}

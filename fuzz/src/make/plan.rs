//! The plan sections of made scenarios: targets of every metric, hardware
//! candidates, search lists, replications, multipliers, sensitivity and
//! service curves, mostly valid, some out of range.

use sojourn_engine::presets;
use sojourn_engine::{
    CandidateParams, DecisionRule, Multipliers, PlanParams, PricingModel, SearchParams,
    SensitivityInput, SensitivityParams, ServiceCurveParams, TargetParams,
};

use super::scenario::{DISCIPLINES, ROUTERS, step_time};
use crate::rng::Rng;

/// A plan section: targets of every metric, candidates, a search space,
/// cases, sensitivity and a service curve, all small.
pub(super) fn plan(rng: &mut Rng, n_classes: usize, words: &mut Vec<String>) -> PlanParams {
    words.push("plan section".into());
    let class = |rng: &mut Rng| {
        rng.chance(0.6)
            .then(|| format!("c{}", rng.below(n_classes)))
    };
    let targets = (0..*rng.pick(&[0, 1, 2, 3, 8]))
        .map(|_| {
            let percentile = *rng.pick(&[0.5, 0.9, 0.95, 0.99, 0.999]);
            let bound_s = if rng.chance(0.9) {
                rng.log_uniform(1.0, 3600.0)
            } else {
                rng.log_uniform(0.001, 1.0)
            };
            match rng.below(4) {
                0 => TargetParams::MissProbability {
                    class: class(rng),
                    epsilon: rng.log_uniform(1e-4, 0.5),
                },
                1 => TargetParams::SojournPercentile {
                    class: class(rng),
                    percentile,
                    bound_s,
                },
                2 => TargetParams::TtftPercentile {
                    class: class(rng),
                    percentile,
                    bound_s,
                },
                _ => TargetParams::TpotPercentile {
                    class: class(rng),
                    percentile,
                    bound_s: bound_s / 100.0,
                },
            }
        })
        .collect();
    let hardware_ids: Vec<&str> = presets::hardware_presets().iter().map(|h| h.id).collect();
    let candidates = rng.chance(0.4).then(|| {
        (0..rng.range(1, 4))
            .map(|k| CandidateParams {
                name: format!("option {k}"),
                hardware_preset: (rng.chance(0.7) && !hardware_ids.is_empty())
                    .then(|| rng.pick(&hardware_ids).to_string()),
                gpus_per_replica: *rng.pick(&[1, 2, 4, 8]),
                usd_per_gpu_hour: rng.chance(0.5).then(|| rng.uniform(0.5, 10.0)),
                pricing_model: rng.chance(0.3).then_some(PricingModel::Reserved),
                step_time: rng.chance(0.2).then(|| step_time(rng, &mut Vec::new())),
                ..CandidateParams::default()
            })
            .collect()
    });
    let search = if rng.chance(0.5) {
        SearchParams {
            disciplines: rng
                .chance(0.5)
                .then(|| DISCIPLINES[..rng.range(1, 4) as usize].to_vec()),
            max_num_seqs: rng.chance(0.5).then(|| vec![64, 256]),
            max_num_batched_tokens: rng.chance(0.3).then(|| vec![2048, 8192]),
            max_waiting: rng.chance(0.3).then(|| vec![None, Some(16)]),
            routers: rng
                .chance(0.3)
                .then(|| ROUTERS[..rng.range(1, 3) as usize].to_vec()),
        }
    } else {
        SearchParams::default()
    };
    let multipliers = |rng: &mut Rng, low: f64, high: f64| Multipliers {
        arrival_rate: rng.uniform(low, high),
        batch_size: rng.uniform(low, high),
        input_tokens: rng.uniform(low, high),
        output_tokens: rng.uniform(low, high),
        prefix_cache_hit: rng.uniform(low, high),
        price: rng.uniform(low, high),
        step_time: rng.uniform(low, high),
    };
    let defaults = PlanParams::default();
    PlanParams {
        targets,
        candidates,
        search,
        best: if rng.chance(0.3) {
            multipliers(rng, 0.5, 1.0)
        } else {
            defaults.best
        },
        worst: if rng.chance(0.3) {
            multipliers(rng, 1.0, 2.0)
        } else {
            defaults.worst
        },
        sensitivity: SensitivityParams {
            delta: rng.uniform(0.01, 0.5),
            inputs: SensitivityInput::ALL[..rng.below(8)].to_vec(),
            replications: *rng.pick(&[1, 1, 2]),
        },
        service_curve: ServiceCurveParams {
            load_multipliers: {
                let mut loads: Vec<f64> =
                    (0..rng.below(5)).map(|_| rng.uniform(0.2, 3.0)).collect();
                loads.sort_by(f64::total_cmp);
                loads
            },
            headroom_fraction: rng.uniform(0.0, 0.5),
            replications: rng.chance(0.3).then_some(2),
        },
        replications: *rng.pick(&[2, 3, 5, 10]),
        min_replications: 2,
        max_replicas: *rng.pick(&[4, 16, 64, 512]),
        max_busy_fraction: rng.uniform(0.5, 1.0),
        decision: if rng.chance(0.8) {
            DecisionRule::Upper95
        } else {
            DecisionRule::Mean
        },
        ..defaults
    }
}

//! The frontier chart's inputs from a plan: every fleet its search
//! decided, against how far it is from its targets, and the chosen fleet.

use sojourn_engine::{MISSING, PlanResult};

use super::chosen_configuration;
use crate::charts::{ParetoInput, ParetoPoint};

/// The frontier chart's inputs: every fleet the search decided, costed in
/// USD per month when every one has a price (else in GPUs), against how
/// far it is from its targets (its worst check's judged value over the
/// threshold, so a latency target that binds counts as much as P(miss)),
/// and the chosen fleet (the chosen configuration at the fleet its search
/// found), added from the recommendation when the search's points lack it:
/// the chosen fleet is always shown.
pub fn pareto_input(plan: &PlanResult) -> ParetoInput {
    let priced = plan.explored.iter().all(|p| p.usd_per_month.is_some());
    let name_of = |configuration: usize| {
        plan.configurations
            .get(configuration)
            .map_or(MISSING, |c| c.name.as_str())
    };
    let mut points: Vec<ParetoPoint> = plan
        .explored
        .iter()
        .map(|p| {
            let configuration = plan.configurations.get(p.configuration);
            let replicas = configuration
                .map_or(0, |c| p.total_gpus / c.gpus_per_replica.max(1))
                .saturating_sub(p.replicas);
            ParetoPoint {
                label: format!(
                    "{}: {} + {replicas} replicas",
                    name_of(p.configuration),
                    p.replicas
                ),
                cost: match p.usd_per_month {
                    Some(usd) if priced => usd,
                    _ => f64::from(p.total_gpus),
                },
                ratio: p.worst_ratio,
                worst_check: p.worst_check.clone(),
                verdict: p.verdict,
                on_frontier: p.on_frontier,
            }
        })
        .collect();
    let found = chosen_configuration(plan).and_then(|c| c.search.found);
    let chosen =
        plan.explored
            .iter()
            .position(|p| Some(p.configuration) == plan.chosen && Some(p.replicas) == found)
            .or_else(|| {
                let (configuration, r) = plan.chosen.zip(plan.recommendation.as_ref())?;
                let fleet = &r.budget.fleet;
                let worst = r.evaluation.checks.iter().max_by(|a, b| {
                    (a.bounds[1] / a.threshold).total_cmp(&(b.bounds[1] / b.threshold))
                });
                points.push(ParetoPoint {
                    label: format!(
                        "{}: {} + {} replicas",
                        name_of(configuration),
                        fleet.steady_replicas,
                        fleet.reserve_replicas
                    ),
                    cost: match fleet.usd_per_month {
                        Some(usd) if priced => usd,
                        _ => f64::from(fleet.gpus),
                    },
                    ratio: r.evaluation.worst_ratio,
                    worst_check: worst.map(|k| k.description.clone()),
                    verdict: r.evaluation.verdict,
                    on_frontier: true,
                });
                Some(points.len() - 1)
            });
    ParetoInput {
        points,
        chosen,
        priced,
    }
}

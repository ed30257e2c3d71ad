//! The recommendation: which candidate, how many steady replicas (enough to
//! run the base load at the service curve's operating point), the reserve,
//! the admission limit, scaling thresholds, headroom and budget, with notes
//! in words where a figure needs a caveat.

use crate::curve::{OperatingState, operating_state};
use crate::params::plan::PricingModel;
use crate::result::{Recommendation, ServiceCurve};
use crate::runner::{Halt, Runner};

/// Where the recommendation starts: the chosen candidate's base case, the
/// smallest fleet its search found, and its service curve when one was run.
pub(super) struct Chosen<'c> {
    pub candidate: usize,
    pub base_case: usize,
    pub min_replicas: u32,
    pub curve: Option<&'c ServiceCurve>,
}

/// The plan for the chosen candidate.
pub(super) fn recommend(runner: &mut Runner, chosen: Chosen) -> Result<Recommendation, Halt> {
    let Chosen {
        candidate,
        base_case,
        min_replicas,
        curve,
    } = chosen;
    let plan = runner.base.params().plan.clone();
    let mut notes = Vec::new();
    let operating = curve.map(|c| c.operating_load);
    // Run at the operating point: the per-replica load there is what the
    // recommended fleet sees, so the fleet size follows from it.
    let steady = match operating {
        Some(op) if op < 1.0 => {
            let wanted = ((min_replicas as f64 / op) - 1e-9).ceil() as u32;
            let n = wanted.clamp(min_replicas, plan.max_replicas.max(min_replicas));
            notes.push(format!(
                "{min_replicas} replicas meet every target, but above the operating point ({:.0}% of their base load); {n} run the base load at it{}.",
                100.0 * op,
                if n < wanted {
                    format!(" as nearly as max_replicas allows ({wanted} would)")
                } else {
                    String::new()
                }
            ));
            n
        }
        _ => min_replicas,
    };
    runner.phase = "planned fleet".to_string();
    let evaluation = runner.decide(base_case, steady)?;
    let replications = evaluation.replications;
    if !evaluation.meets {
        notes.push(format!(
            "The recommended {steady} replicas do not meet every target in all replications (worst check at {:.2}x its threshold).",
            evaluation.worst_ratio
        ));
    }
    // Scaling thresholds, from the runs at the operating point (the
    // per-replica load the recommended fleet is sized for).
    let at_operating_point = match (curve, operating) {
        (Some(_), Some(op)) => Some(operating_state(runner, candidate, min_replicas, op)?),
        _ => None,
    };
    let observed_peak = runner
        .runs(base_case, steady, replications)
        .iter()
        .map(|r| r.peak_waiting_per_replica)
        .fold(0.0, f64::max);
    // A replica clears at most (its goodput x a deadline) requests within
    // that deadline: deeper queues hold requests that will miss it. With
    // the longest deadline that bounds admission; with the tightest it is
    // where the tightest class starts to miss, a signal to scale up.
    let deadlines = runner.base.classes().iter().map(|c| c.deadline_s);
    let longest_deadline = deadlines.clone().fold(0.0, f64::max);
    let tightest_deadline = deadlines.fold(f64::INFINITY, f64::min);
    let admission = curve.map(|c| admission_limit(c, longest_deadline, observed_peak));
    let scale_up_queue =
        at_operating_point.map(|o| scale_up_queue(&o, tightest_deadline, &mut notes));
    let resolved = &runner.candidates[runner.configs[candidate].candidate];
    let configuration = runner.configs[candidate].label.clone();
    if plan.pricing.usd_per_gpu_hour.is_none() && resolved.usd_per_gpu_hour.is_none() {
        notes.push("No price was given: costs are in GPU-hours only.".to_string());
    }
    if resolved.pricing_model == PricingModel::Spot {
        notes.push(
            "Spot capacity can be reclaimed at short notice: size the failure reserve for interruptions, not only failures."
                .to_string(),
        );
    }
    let knee = curve.and_then(|c| c.knee_load);
    let sla_limit = curve.and_then(|c| c.sla_limit_load);
    // The base load on the steady fleet, as a multiple of the base load
    // on the minimum fleet (assuming per-replica load is what matters).
    let base_load = min_replicas as f64 / steady as f64;
    let reserve = runner.reserve_replicas();
    Ok(Recommendation {
        candidate: configuration,
        min_replicas,
        steady_replicas: steady,
        failure_reserve_replicas: plan.reserve.failure_reserve_replicas,
        warm_idle_replicas: plan.reserve.warm_idle_replicas,
        total_replicas: steady + reserve,
        total_gpus: (steady + reserve) * resolved.params.replica.gpus_per_replica,
        admission_limit_per_replica: admission,
        observed_peak_queue_per_replica: observed_peak,
        scale_up_queue_per_replica: scale_up_queue,
        normal_queue_per_replica_p99: at_operating_point.map(|o| o.p99_waiting_per_replica),
        scale_up_kv_utilization: at_operating_point.map(|o| o.p99_kv_utilization),
        knee_load: knee,
        sla_limit_load: sla_limit,
        operating_load: operating,
        headroom_to_knee: knee.map(|k| 1.0 - base_load / k),
        headroom_to_sla_limit: sla_limit.map(|s| 1.0 - base_load / s),
        classes: runner.class_intervals(base_case, steady, replications),
        evaluation,
        budget: runner.cost_summary(base_case, steady, replications),
        notes,
    })
}

/// The admission limit per replica: what a replica clears within the
/// longest deadline at its goodput at the knee (at the curve's best goodput
/// without a knee), and at least the deepest queue seen on the planned fleet.
fn admission_limit(curve: &ServiceCurve, longest_deadline: f64, observed_peak: f64) -> u64 {
    let goodput_per_replica = curve
        .knee_load
        .and_then(|k| curve.points.iter().find(|p| p.load >= k))
        .or_else(|| {
            curve
                .points
                .iter()
                .max_by(|a, b| a.goodput_per_s.total_cmp(&b.goodput_per_s))
        })
        .map_or(0.0, |p| p.goodput_per_s / curve.replicas as f64);
    ((goodput_per_replica * longest_deadline).ceil()).max(observed_peak.ceil()) as u64
}

/// The queue per replica to scale up at: what a replica clears within the
/// tightest deadline at its goodput at the operating point (at least one
/// request), or the busy-but-normal p99 queue there when that is deeper (with
/// a note: queue depth alone then cannot tell a burst from overload).
fn scale_up_queue(at: &OperatingState, tightest_deadline: f64, notes: &mut Vec<String>) -> f64 {
    let deadline_bound = (at.goodput_per_replica_per_s * tightest_deadline)
        .ceil()
        .max(1.0);
    if at.p99_waiting_per_replica > deadline_bound {
        notes.push(format!(
            "At the operating point the waiting queue routinely reaches {} per replica (p99), more than the {} a replica clears within the tightest deadline: queue depth alone cannot tell a burst from overload. Scale on a queue that stays deep for longer than a burst, or on the age of the oldest request of the tightest class.",
            crate::format::format_count(at.p99_waiting_per_replica.ceil() as u64),
            crate::format::format_count(deadline_bound as u64),
        ));
    }
    deadline_bound.max(at.p99_waiting_per_replica.ceil())
}

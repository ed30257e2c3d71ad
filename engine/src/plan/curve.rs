//! The service curve: goodput and P(miss) of one fleet against offered load,
//! its saturation knee, the highest load meeting every target, the operating
//! point below both, and the fleet's state at that point.

use crate::params::plan::Multipliers;
use crate::plan::evaluate::{Evaluation, RunSummary};
use crate::plan::result::{CurvePoint, ServiceCurve};
use crate::plan::runner::{Halt, Runner};

/// Goodput and P(miss) against offered load for `replicas` of a candidate,
/// at each of the plan's load multipliers.
pub(super) fn service_curve(
    runner: &mut Runner,
    candidate: usize,
    replicas: u32,
) -> Result<ServiceCurve, Halt> {
    runner.phase = "service curve".to_string();
    let settings = runner.base.params().plan.service_curve.clone();
    let reps = runner.curve_replications();
    let mut points = Vec::with_capacity(settings.load_multipliers.len());
    for load in settings.load_multipliers {
        let case = runner.case(
            candidate,
            Multipliers {
                arrival_rate: load,
                ..Multipliers::BASE
            },
            &format!("base at {load}x load"),
        )?;
        let evaluation = runner.evaluate(case, replicas, reps)?;
        let runs = runner.runs(case, replicas, reps);
        points.push(curve_point(load, replicas, &runs, &evaluation));
    }
    let headroom = settings.headroom_fraction;
    let knee_load = knee(&points);
    let sla_limit_load = sla_limit(&points);
    let last = points.last().map_or(1.0, |p| p.load);
    let operating_load = match (knee_load, sla_limit_load) {
        (Some(k), Some(s)) => (k * (1.0 - headroom)).min(s),
        (Some(k), None) => k * (1.0 - headroom),
        (None, Some(s)) => s,
        (None, None) => last,
    };
    Ok(ServiceCurve {
        candidate: runner.configs[candidate].label.clone(),
        replicas,
        points,
        knee_load,
        sla_limit_load,
        operating_load,
        headroom_fraction: headroom,
        replications: reps,
    })
}

/// The fleet's state at the operating point (mean over the curve's seeds).
#[derive(Clone, Copy, Debug)]
pub(super) struct OperatingState {
    pub goodput_per_replica_per_s: f64,
    pub p99_waiting_per_replica: f64,
    pub p99_kv_utilization: f64,
}

/// Runs `replicas` of a candidate at `load` times the base load (the
/// operating point) with the curve's seeds, and measures its state there.
pub(super) fn operating_state(
    runner: &mut Runner,
    candidate: usize,
    replicas: u32,
    load: f64,
) -> Result<OperatingState, Halt> {
    let case = runner.case(
        candidate,
        Multipliers {
            arrival_rate: load,
            ..Multipliers::BASE
        },
        &format!("base at {load:.2}x load (operating point)"),
    )?;
    let reps = runner.curve_replications();
    runner.evaluate(case, replicas, reps)?;
    let runs = runner.runs(case, replicas, reps);
    Ok(OperatingState {
        goodput_per_replica_per_s: mean(&runs, &|r| {
            r.overall.met as f64 / r.window_s / replicas as f64
        }),
        p99_waiting_per_replica: mean(&runs, &|r| r.p99_waiting_per_replica),
        p99_kv_utilization: mean(&runs, &|r| r.p99_kv_utilization),
    })
}

/// The mean of `f` over `runs` (0 without runs).
fn mean(runs: &[&RunSummary], f: &dyn Fn(&RunSummary) -> f64) -> f64 {
    runs.iter().map(|r| f(r)).sum::<f64>() / runs.len().max(1) as f64
}

/// One point of a service curve: means over the runs (one per seed).
fn curve_point(
    load: f64,
    replicas: u32,
    runs: &[&RunSummary],
    evaluation: &Evaluation,
) -> CurvePoint {
    let offered_per_s = mean(runs, &|r| r.overall.arrived as f64 / r.window_s);
    CurvePoint {
        load,
        offered_per_s,
        offered_per_replica_per_s: offered_per_s / replicas as f64,
        goodput_per_s: mean(runs, &|r| r.overall.met as f64 / r.window_s),
        p_miss: mean(runs, &|r| r.overall.p_miss),
        meets: evaluation.meets,
        worst_ratio: evaluation.worst_ratio,
        busy_fraction: mean(runs, &|r| r.busy_fraction),
        p99_waiting_per_replica: mean(runs, &|r| r.p99_waiting_per_replica),
        p99_kv_utilization: mean(runs, &|r| r.p99_kv_utilization),
    }
}

/// The saturation knee: the load at the start of the first segment of the
/// curve whose marginal goodput is below half the marginal offered load.
fn knee(points: &[CurvePoint]) -> Option<f64> {
    points.windows(2).find_map(|w| {
        let offered = w[1].offered_per_s - w[0].offered_per_s;
        let goodput = w[1].goodput_per_s - w[0].goodput_per_s;
        (offered > 0.0 && goodput < 0.5 * offered).then_some(w[0].load)
    })
}

/// The highest load at which every target holds: between the last meeting
/// point and the first failing one after it, where the worst check's ratio
/// to its threshold crosses 1 (linear interpolation). `None` when every
/// point meets (the limit is beyond the curve); the first load when none does.
fn sla_limit(points: &[CurvePoint]) -> Option<f64> {
    let first_fail = points.iter().position(|p| !p.meets)?;
    if first_fail == 0 {
        return Some(points[0].load);
    }
    let (a, b) = (&points[first_fail - 1], &points[first_fail]);
    if !(a.worst_ratio.is_finite() && b.worst_ratio.is_finite()) || b.worst_ratio <= a.worst_ratio {
        return Some(a.load);
    }
    let t = ((1.0 - a.worst_ratio) / (b.worst_ratio - a.worst_ratio)).clamp(0.0, 1.0);
    Some(a.load + t * (b.load - a.load))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A curve point at `load` with offered load and goodput \[1/s\], and the
    /// worst check's ratio (met at most 1).
    fn point(load: f64, offered_per_s: f64, goodput_per_s: f64, worst_ratio: f64) -> CurvePoint {
        CurvePoint {
            load,
            offered_per_s,
            offered_per_replica_per_s: offered_per_s,
            goodput_per_s,
            p_miss: 1.0 - goodput_per_s / offered_per_s,
            meets: worst_ratio <= 1.0,
            worst_ratio,
            busy_fraction: 0.0,
            p99_waiting_per_replica: 0.0,
            p99_kv_utilization: 0.0,
        }
    }

    #[test]
    fn knee_and_sla_limit_by_hand() {
        // From 1x to 2x the offered load grows by 10/s and goodput by 2/s,
        // less than half: the knee is at 1x. The worst ratio crosses 1 a
        // third of the way from 1x (0.8) to 2x (1.4): the SLA limit is 4/3.
        let points = [
            point(0.5, 5.0, 5.0, 0.5),
            point(1.0, 10.0, 10.0, 0.8),
            point(2.0, 20.0, 12.0, 1.4),
            point(3.0, 30.0, 12.0, 3.0),
        ];
        assert_eq!(knee(&points), Some(1.0));
        let limit = sla_limit(&points).expect("a point fails");
        assert!((limit - 4.0 / 3.0).abs() < 1e-12, "{limit}");
        // Every point meeting: the limit lies beyond the curve; none: the
        // first load. A straight curve has no knee.
        assert_eq!(sla_limit(&points[..2]), None);
        assert_eq!(sla_limit(&points[2..]), Some(2.0));
        assert_eq!(knee(&points[..2]), None);
    }
}

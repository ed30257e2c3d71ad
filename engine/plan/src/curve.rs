//! The service curve: goodput, P(miss) and the binding target's value of
//! one fleet against offered load, its saturation knee, the highest load
//! meeting every target, the operating point below both, and the fleet's
//! state at that point.

use serde::{Deserialize, Serialize};

use crate::evaluate::{CheckMetric, CheckSpec, Evaluation, RunAggregates, TargetCheck};
use crate::format::{duration, percent, percentile_label};
use crate::params::plan::{Multipliers, ServiceCurveParams};
use crate::result::{CurvePoint, ServiceCurve};
use crate::runner::{Halt, Runner};
use crate::serde_float::NonFinite;

/// The target a service curve follows: the check that fails first as load
/// grows (the SLA limit is where it crosses its bound), or, when none fails
/// on the curve, the one closest to failing at its highest load (see
/// `binding_check`). A reader asks of the curve how far load can grow
/// before this target breaks.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveTarget {
    /// The check as the plan lists it ("api: p90 TPOT <= 50 ms").
    pub description: String,
    pub metric: CheckMetric,
    /// What is measured, in words ("p90 TPOT of api", "the offered load").
    pub measure: String,
    /// The bound in words ("50 ms", "1%").
    pub bound: String,
    /// The value must be at most this (a probability, a fraction or seconds).
    #[serde_as(as = "NonFinite")]
    pub threshold: f64,
}

impl CurveTarget {
    fn of(spec: &CheckSpec) -> CurveTarget {
        let class = spec.class_name.as_deref().unwrap_or("every class");
        let p = percentile_label(spec.percentile);
        let (measure, bound) = match spec.metric {
            CheckMetric::MissProbability => {
                (format!("P(miss) of {class}"), percent(spec.threshold))
            }
            CheckMetric::Sojourn => (
                format!("{p} sojourn time of {class}"),
                duration(spec.threshold),
            ),
            CheckMetric::Ttft => (format!("{p} TTFT of {class}"), duration(spec.threshold)),
            CheckMetric::Tpot => (format!("{p} TPOT of {class}"), duration(spec.threshold)),
            CheckMetric::OfferedLoad => (
                "the offered load".to_string(),
                format!("{} of the fleet's capacity", percent(spec.threshold)),
            ),
        };
        CurveTarget {
            description: spec.description.clone(),
            metric: spec.metric,
            measure,
            bound,
            threshold: spec.threshold,
        }
    }
}

/// Goodput and P(miss) against offered load for `replicas` of a candidate,
/// at each of the plan's load multipliers.
///
/// Each point up to the first failing one after a meeting one (see
/// [`first_failure`]) is decided as the search decides a fleet (sequential
/// replications while a target is uncertain), unless the plan fixes the
/// curve's replications: so the base load on the fleet the search found
/// meets every target here too (the same runs, the same rule), and the SLA
/// limit rests on decided points. The points beyond are drawn, not
/// decided: `min_replications` seeds each.
pub(super) fn service_curve(
    runner: &mut Runner,
    candidate: usize,
    replicas: u32,
) -> Result<ServiceCurve, Halt> {
    runner.phase = "service curve".to_string();
    let settings = runner.base.params().plan.service_curve.clone();
    let cases = first_seeds(runner, candidate, replicas, &settings)?;
    let mut points = Vec::with_capacity(settings.load_multipliers.len());
    let mut evaluations = Vec::with_capacity(settings.load_multipliers.len());
    // Whether a point has met every target, and one after it has not.
    let (mut met_once, mut limit_found) = (false, false);
    for (&load, case) in settings.load_multipliers.iter().zip(cases) {
        let evaluation = match settings.replications {
            Some(reps) => runner.evaluate(case, replicas, reps)?,
            None if limit_found => runner.evaluate(case, replicas, runner.min_replications())?,
            None => runner.decide(case, replicas)?,
        };
        limit_found |= met_once && !evaluation.meets;
        met_once |= evaluation.meets;
        let runs = runner.runs(case, replicas, evaluation.replications);
        points.push(curve_point(load, replicas, &runs, &evaluation));
        evaluations.push(evaluation);
    }
    let binding = binding_check(&settings.load_multipliers, &evaluations);
    if let Some(index) = binding {
        for (point, evaluation) in points.iter_mut().zip(&evaluations) {
            let check = &evaluation.checks[index];
            point.target_mean = check.not_evaluated.is_none().then_some(check.mean);
            point.target_upper = Some(judged_value(check));
        }
    }
    let headroom = settings.headroom_fraction;
    let knee_load = knee(&points);
    let sla_limit_load = binding.and_then(|index| {
        let ratios: Vec<(f64, bool, f64)> = points
            .iter()
            .zip(&evaluations)
            .map(|(p, e)| (p.load, p.meets, judged_ratio(&e.checks[index])))
            .collect();
        sla_limit(&ratios)
    });
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
        target: binding.map(|index| CurveTarget::of(&runner.checks[index])),
        points,
        knee_load,
        sla_limit_load,
        operating_load,
        headroom_fraction: headroom,
        replications: evaluations
            .iter()
            .map(|e| e.replications)
            .max()
            .unwrap_or(0),
    })
}

/// The curve's cases, one per load, once every point's first seeds have run:
/// each point runs at least those, decided or drawn, so they are asked for
/// together and run side by side instead of one point after another (the
/// same runs, so the same curve, in fewer rounds of simulations).
fn first_seeds(
    runner: &mut Runner,
    candidate: usize,
    replicas: u32,
    settings: &ServiceCurveParams,
) -> Result<Vec<usize>, Halt> {
    let first = settings
        .replications
        .unwrap_or_else(|| runner.min_replications());
    let mut cases = Vec::with_capacity(settings.load_multipliers.len());
    let mut complete = true;
    for &load in &settings.load_multipliers {
        let case = runner.case(
            candidate,
            Multipliers {
                arrival_rate: load,
                ..Multipliers::BASE
            },
            &format!("base at {load}x load"),
        )?;
        complete &= runner.request(case, replicas, first);
        cases.push(case);
    }
    if !complete {
        return Err(Halt::Pending);
    }
    Ok(cases)
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
fn mean(runs: &[&RunAggregates], f: &dyn Fn(&RunAggregates) -> f64) -> f64 {
    runs.iter().map(|r| f(r)).sum::<f64>() / runs.len().max(1) as f64
}

/// One point of a service curve: means over the runs (one per seed).
fn curve_point(
    load: f64,
    replicas: u32,
    runs: &[&RunAggregates],
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
        replications: evaluation.replications,
        busy_fraction: mean(runs, &|r| r.busy_fraction),
        p99_waiting_per_replica: mean(runs, &|r| r.p99_waiting_per_replica),
        p99_kv_utilization: mean(runs, &|r| r.p99_kv_utilization),
        // Filled in once the curve knows its binding check.
        target_mean: None,
        target_upper: None,
    }
}

/// The check a curve follows (an index into the checks), at `loads`: the
/// one that fails first as load grows. Between the last point meeting every
/// target and the first failing one, each check failing there crosses its
/// bound where its judged ratio, linearly interpolated, reaches 1; the
/// first to cross binds (of equal crossings, the worst at the failing
/// point). When the first point already fails, or every point meets the
/// targets, the worst at that point, or at the highest load (the one
/// closest to failing). The worst is the one with the largest judged value
/// over its threshold (the first of equals, in target order).
fn binding_check(loads: &[f64], evaluations: &[Evaluation]) -> Option<usize> {
    let worst_at = |at: usize| {
        let checks = &evaluations[at].checks;
        (0..checks.len()).reduce(|worst, i| {
            if judged_ratio(&checks[i]) > judged_ratio(&checks[worst]) {
                i
            } else {
                worst
            }
        })
    };
    let meets: Vec<bool> = evaluations.iter().map(|e| e.meets).collect();
    let Some(fail) = first_failure(&meets) else {
        return worst_at(evaluations.len().checked_sub(1)?);
    };
    if fail == 0 {
        return worst_at(0);
    }
    let (a, b) = (&evaluations[fail - 1].checks, &evaluations[fail].checks);
    let crossing = |i: usize| {
        crossing(
            (loads[fail - 1], judged_ratio(&a[i])),
            (loads[fail], judged_ratio(&b[i])),
        )
    };
    (0..b.len())
        .filter(|&i| judged_ratio(&b[i]) > 1.0)
        .reduce(|first, i| {
            let (x, y) = (crossing(i), crossing(first));
            let worse = judged_ratio(&b[i]) > judged_ratio(&b[first]);
            if x < y || (x == y && worse) { i } else { first }
        })
}

/// The first point failing the targets after one meeting them (the first
/// point when none meets; `None` when none fails after the first meeting).
/// A failing point below a meeting one says nothing about how far load can
/// grow: at a low load a class may send nothing in the measured window, so
/// that its targets cannot be judged there.
fn first_failure(meets: &[bool]) -> Option<usize> {
    let Some(first_meeting) = meets.iter().position(|&m| m) else {
        return (!meets.is_empty()).then_some(0);
    };
    (first_meeting..meets.len()).find(|&i| !meets[i])
}

/// Where a judged ratio going from `a` to `b` (each (load, ratio), `a`
/// within its bound and `b` beyond it) reaches 1, by linear interpolation:
/// at `a`'s load when either ratio is infinite or the ratio does not grow
/// (the cautious answer).
fn crossing(a: (f64, f64), b: (f64, f64)) -> f64 {
    if !(a.1.is_finite() && b.1.is_finite()) || b.1 <= a.1 {
        return a.0;
    }
    let t = ((1.0 - a.1) / (b.1 - a.1)).clamp(0.0, 1.0);
    a.0 + t * (b.0 - a.0)
}

/// A check's judged value, the upper end of its bounds: infinite when it
/// could not be evaluated, as `evaluate` counts it.
fn judged_value(check: &TargetCheck) -> f64 {
    if check.not_evaluated.is_some() {
        f64::INFINITY
    } else {
        check.bounds[1]
    }
}

/// A check's judged value over its threshold (at most 1 when met).
pub(super) fn judged_ratio(check: &TargetCheck) -> f64 {
    judged_value(check) / check.threshold
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

/// The highest load at which every target holds, from each point's (load,
/// whether it meets every target, the binding check's judged ratio): between
/// the last meeting point and the first failing one after it, where the
/// binding check crosses its bound (see [`crossing`]; the binding check is
/// the first to cross, so this is where the curve's plotted target meets
/// its bound line). `None` when every point meets (the limit is beyond the
/// curve); the first load when none does.
fn sla_limit(points: &[(f64, bool, f64)]) -> Option<f64> {
    let meets: Vec<bool> = points.iter().map(|p| p.1).collect();
    let fail = first_failure(&meets)?;
    if fail == 0 {
        return Some(points[0].0);
    }
    let (a, b) = (points[fail - 1], points[fail]);
    Some(crossing((a.0, a.2), (b.0, b.2)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::Verdict;

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
            replications: 2,
            busy_fraction: 0.0,
            p99_waiting_per_replica: 0.0,
            p99_kv_utilization: 0.0,
            target_mean: None,
            target_upper: None,
        }
    }

    /// An evaluation whose checks have these judged values over a threshold
    /// of 1 (`None`: not evaluated).
    fn evaluation(values: &[Option<f64>]) -> Evaluation {
        let checks: Vec<TargetCheck> = values
            .iter()
            .map(|value| TargetCheck {
                description: String::new(),
                metric: CheckMetric::Tpot,
                class: None,
                threshold: 1.0,
                mean: value.unwrap_or(f64::NAN),
                ci95: None,
                exact_upper: None,
                bounds: [value.unwrap_or(f64::NAN); 2],
                verdict: Verdict::Met,
                share_over: None,
                met: true,
                not_evaluated: value.is_none().then(|| "no requests".to_string()),
            })
            .collect();
        let meets = checks.iter().all(|c| judged_ratio(c) <= 1.0);
        Evaluation {
            replicas: 1,
            replications: 1,
            verdict: if meets { Verdict::Met } else { Verdict::NotMet },
            meets,
            worst_ratio: checks.iter().map(judged_ratio).fold(0.0, f64::max),
            checks,
        }
    }

    #[test]
    fn the_curve_follows_the_target_that_fails_first() {
        let loads = [1.0, 2.0, 3.0];
        // The second check is the worst at the lowest load, but the first
        // fails first (both cross at 1.5x; the first is the worse at 2x):
        // the curve follows it.
        let curve = [
            evaluation(&[Some(0.5), Some(0.8)]),
            evaluation(&[Some(1.5), Some(1.2)]),
            evaluation(&[Some(3.0), Some(4.0)]),
        ];
        assert_eq!(binding_check(&loads, &curve), Some(0));
        // The first is the worst at 2x, but the second crosses its bound
        // first (at 1 + 0.05 / 0.15 = 1.33x, the first at 1.5x): the curve
        // follows the second, and the SLA limit is where it crosses.
        let close = [
            evaluation(&[Some(0.5), Some(0.95)]),
            evaluation(&[Some(1.5), Some(1.1)]),
        ];
        assert_eq!(binding_check(&loads, &close), Some(1));
        let limit = sla_limit(&[(1.0, true, 0.95), (2.0, false, 1.1)]);
        assert!((limit.unwrap() - 4.0 / 3.0).abs() < 1e-12, "{limit:?}");
        // Every point meeting the targets: the closest to failing at the
        // highest load. A check that cannot be evaluated is the worst.
        assert_eq!(binding_check(&loads, &curve[..1]), Some(1));
        let undefined = [
            evaluation(&[Some(0.5), Some(0.2)]),
            evaluation(&[Some(2.0), None]),
        ];
        assert_eq!(binding_check(&loads, &undefined), Some(1));
        assert_eq!(binding_check(&loads, &[]), None);
    }

    #[test]
    fn knee_and_sla_limit_by_hand() {
        // From 1x to 2x the offered load grows by 10/s and goodput by 2/s,
        // less than half: the knee is at 1x. The binding ratio crosses 1 a
        // third of the way from 1x (0.8) to 2x (1.4): the SLA limit is 4/3.
        let points = [
            point(0.5, 5.0, 5.0, 0.5),
            point(1.0, 10.0, 10.0, 0.8),
            point(2.0, 20.0, 12.0, 1.4),
            point(3.0, 30.0, 12.0, 3.0),
        ];
        assert_eq!(knee(&points), Some(1.0));
        let ratios: Vec<(f64, bool, f64)> = points
            .iter()
            .map(|p| (p.load, p.meets, p.worst_ratio))
            .collect();
        let limit = sla_limit(&ratios).expect("a point fails");
        assert!((limit - 4.0 / 3.0).abs() < 1e-12, "{limit}");
        // Every point meeting: the limit lies beyond the curve; none: the
        // first load; a ratio that does not grow (or is infinite): the last
        // meeting load. A straight curve has no knee.
        assert_eq!(sla_limit(&ratios[..2]), None);
        assert_eq!(sla_limit(&ratios[2..]), Some(2.0));
        assert_eq!(
            sla_limit(&[(1.0, true, 0.8), (2.0, false, f64::INFINITY)]),
            Some(1.0)
        );
        // A failing point below a meeting one (a class silent at low load)
        // does not set the limit.
        let silent_at_half = [
            (0.5, false, f64::INFINITY),
            (1.0, true, 0.5),
            (2.0, true, 0.9),
        ];
        assert_eq!(sla_limit(&silent_at_half), None);
        assert_eq!(first_failure(&[false, true, false, true]), Some(2));
        assert_eq!(first_failure(&[false, false]), Some(0));
        assert_eq!(first_failure(&[]), None);
        assert_eq!(knee(&points[..2]), None);
    }
}

//! Capacity searches: the smallest fleet meeting every target for one case.
//!
//! [`capacity_search`] brackets the answer with one seed, starting at the
//! two-stage estimate's guess, then confirms the boundary with R seeds.
//! Both stages use [`smallest_meeting`], a search over fleet sizes for a
//! monotone condition with few evaluations.
//!
//! Each evaluation says whether a fleet size meets every target and by how
//! much: the ratio of the worst check's value to its threshold (at most 1
//! when met). The ratio falls roughly as a power of the fleet size, so the
//! search interpolates log(ratio) against log(size) to predict where it
//! crosses 1, a safeguarded secant method on integers:
//! - with only one side known it extrapolates with the slope seen so far
//!   (or a hint, or -1: a load-bound check falls as 1 / size); from the
//!   third such step on it takes at least twice the previous step, so it
//!   gallops when predictions keep falling short;
//! - once the answer is bracketed it interpolates inside the bracket, and
//!   bisects whenever an interpolated step failed to halve the bracket.
//!
//! Every probe lies strictly inside the known bracket, so the search ends,
//! and a poor ratio costs at most about twice the evaluations of bisection.

use std::collections::BTreeSet;

use crate::analytic::analytic_guess;
use crate::diagnose;
use crate::evaluate::{CheckMetric, Evaluation, Verdict};
use crate::format::{duration, percent};
use crate::result::{SearchResult, SearchStatus};
use crate::runner::{Halt, Runner};

/// The fleet sizes one capacity search may consider.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Bounds {
    /// Smaller fleets are known to fail (the analytic bound).
    pub floor: u32,
    /// Larger fleets cannot beat the best configuration found so far (or
    /// `max_replicas`).
    pub ceiling: u32,
}

/// The capacity search for one case: the smallest fleet within `bounds`
/// meeting every check, decided with sequential replications, and the
/// evaluations that found it.
pub(super) fn capacity_search(
    runner: &mut Runner,
    case: usize,
    bounds: Bounds,
) -> Result<SearchResult, Halt> {
    let label = runner.state.cases[case].label.clone();
    let configuration = runner.config_of(case).label.clone();
    runner.phase = format!("capacity search: {label}, {configuration}");
    let max_replicas = runner.base.params().plan.max_replicas;
    let max = bounds.ceiling.min(max_replicas);
    let pruned = max < max_replicas;
    let analytic_guess = analytic_guess(runner, case);
    let candidate = runner.candidate_of(case).name.clone();
    let mut result = SearchResult {
        case: label,
        candidate,
        configuration,
        status: SearchStatus::Pruned,
        found: None,
        message: String::new(),
        analytic_guess,
        floor: bounds.floor,
        max_replicas: max,
        evaluations: Vec::new(),
        at_answer: None,
        cost: None,
        simulations: 0,
    };
    if let Some(u) = runner.unreachable(case) {
        result.status = SearchStatus::Unattainable;
        result.message = diagnose::search_message(&runner.checks[u.check], u.floor);
        return Ok(result);
    }
    if max < bounds.floor.max(1) {
        result.message = format!(
            "pruned without a run: it needs at least {}, which {} at least as much as a configuration already found",
            crate::format::counted(bounds.floor.into(), "replica"),
            if bounds.floor == 1 { "costs" } else { "cost" }
        );
        return Ok(result);
    }
    let floor = bounds.floor.max(1);
    let mut evaluations: Vec<Evaluation> = Vec::new();
    let mut probe_with = |runner: &mut Runner, n: u32, decided: bool| -> Result<Probe, Halt> {
        if n < floor {
            // Below the analytic bound: known to fail, without a run.
            return Ok(Probe {
                meets: false,
                ratio: f64::INFINITY,
            });
        }
        // Decided probes meet on the decision rule; a one-seed probe
        // steers by its point estimates (`Evaluation::probe_meets`).
        let (e, p) = if decided {
            let e = runner.decide(case, n)?;
            let p = Probe {
                meets: e.meets,
                ratio: e.worst_ratio,
            };
            (e, p)
        } else {
            let e = runner.evaluate(case, n, 1)?;
            let p = Probe {
                meets: e.probe_meets(),
                ratio: e.probe_ratio(),
            };
            (e, p)
        };
        evaluations.push(e);
        Ok(p)
    };
    // Bracket with one seed, starting at the floor: the cheapest fleet this
    // configuration could be, and the one a branch and bound must rule out
    // first (galloping up from there when it fails; the analytic guess is
    // reported beside, not trusted: it knows no service discipline).
    let start = floor.min(max);
    let single = smallest_meeting(start, max, None, &mut |n| probe_with(runner, n, false))?;
    // Decide the boundary with sequential replications (reusing the first
    // seed), moving on if they disagree with it; the one-seed curve's slope
    // predicts how far.
    let start = single.found.unwrap_or(max);
    let confirmed = smallest_meeting(start, max, single.slope, &mut |n| {
        probe_with(runner, n, true)
    })?
    .found;
    let at = confirmed.unwrap_or(max);
    let at_answer = runner.decide(case, at)?;
    let replications = at_answer.replications;
    let uncertain: Vec<u32> = evaluations
        .iter()
        .filter(|e| e.verdict == Verdict::Uncertain && e.replications > 1)
        .map(|e| e.replicas)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    result.message = match confirmed {
        Some(n) => format!(
            "{} of {} {} every target ({replications} replications){}",
            crate::format::counted(n.into(), "replica"),
            result.configuration,
            if n == 1 { "meets" } else { "meet" },
            uncertain_note(&uncertain, runner.replications())
        ),
        None if pruned => format!(
            "pruned: no fleet up to {max} replicas meets every target, and more would cost at least as much as a configuration already found"
        ),
        None => unattainable_message(max, &at_answer),
    };
    result.status = match confirmed {
        Some(_) => SearchStatus::Found,
        None if pruned => SearchStatus::Pruned,
        None => SearchStatus::Unattainable,
    };
    result.found = confirmed;
    result.cost = Some(runner.cost_summary(case, at, replications));
    result.simulations = distinct_runs(&evaluations);
    result.evaluations = evaluations;
    result.at_answer = Some(at_answer);
    Ok(result)
}

/// " (10 replicas stayed uncertain after 5 replications and count as not
/// meeting)", or nothing.
fn uncertain_note(sizes: &[u32], max: u32) -> String {
    if sizes.is_empty() {
        return String::new();
    }
    let list: Vec<String> = sizes.iter().map(u32::to_string).collect();
    format!(
        "; {} replicas stayed uncertain after {max} replications and count as not meeting",
        list.join(", ")
    )
}

/// The simulations behind a list of evaluations (replication r of size n
/// counted once, however often it was used).
fn distinct_runs(evaluations: &[Evaluation]) -> u64 {
    let runs: BTreeSet<(u32, u32)> = evaluations
        .iter()
        .flat_map(|e| (0..e.replications).map(move |r| (e.replicas, r)))
        .collect();
    runs.len() as u64
}

/// "no configuration up to 512 replicas meets api: p99 sojourn <= 30 s; the
/// best reaches 41 s (at 512 replicas, 5 replications)".
fn unattainable_message(max: u32, at_max: &Evaluation) -> String {
    let failing: Vec<String> = at_max
        .checks
        .iter()
        .filter(|c| !c.met)
        .map(|c| {
            if let Some(reason) = &c.not_evaluated {
                return format!("{} (not evaluated: {reason})", c.description);
            }
            let reached = match c.metric {
                CheckMetric::MissProbability | CheckMetric::OfferedLoad => percent(c.mean),
                _ => duration(c.mean),
            };
            format!("{}; the best reaches {reached}", c.description)
        })
        .collect();
    format!(
        "no fleet up to {max} replicas meets {} (at {max} replicas, {} replications)",
        failing.join(", and "),
        at_max.replications
    )
}

/// What one evaluation of a fleet size says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    pub meets: bool,
    /// Worst check's value / threshold (at most 1 when met).
    pub ratio: f64,
}

/// Where a search ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// The smallest size meeting every target, if any up to `max` does.
    pub found: Option<u32>,
    /// d log(ratio) / d log(size) across the final bracket, when known.
    pub slope: Option<f64>,
}

/// A ratio clamped for logarithms (zero and infinity are common: no misses,
/// a percentile among requests that never finished).
fn log_ratio(ratio: f64) -> f64 {
    libm::log(ratio.clamp(1e-3, 1e3))
}

fn slope_between(a: (u32, f64), b: (u32, f64)) -> Option<f64> {
    let dx = libm::log(b.0 as f64) - libm::log(a.0 as f64);
    let dy = log_ratio(b.1) - log_ratio(a.1);
    (dx != 0.0 && dy < 0.0 && dy.is_finite()).then_some(dy / dx)
}

/// The least step of a one-sided move: any for the first two, then twice
/// the previous one (galloping).
fn minimum_step(steps_taken: u32, last_step: u32) -> u32 {
    if steps_taken >= 2 {
        last_step.saturating_mul(2).max(1)
    } else {
        1
    }
}

/// The smallest n in \[1, max\] that meets, assuming meeting is monotone in
/// n (fails up to some size, meets from there on). Starts at `start`;
/// `slope_hint` is a guess of d log(ratio) / d log(n) (negative).
pub fn smallest_meeting<E>(
    start: u32,
    max: u32,
    slope_hint: Option<f64>,
    evaluate: &mut dyn FnMut(u32) -> Result<Probe, E>,
) -> Result<Outcome, E> {
    let max = max.max(1);
    let mut probe_n = start.clamp(1, max);
    // (size, ratio) of the largest failing and the smallest meeting size.
    let mut lo: Option<(u32, f64)> = None;
    let mut hi: Option<(u32, f64)> = None;
    let mut last: Option<(u32, f64)> = None;
    let mut slope = slope_hint.filter(|s| *s < 0.0 && s.is_finite());
    let mut last_step = 0u32;
    let mut one_sided_steps = 0u32;
    let mut bisect_next = false;
    loop {
        let probe = evaluate(probe_n)?;
        let point = (probe_n, probe.ratio);
        if let Some(previous) = last
            && let Some(s) = slope_between(previous, point)
        {
            slope = Some(s);
        }
        last = Some(point);
        let width_before = match (lo, hi) {
            (Some(l), Some(h)) => h.0 - l.0,
            _ => u32::MAX,
        };
        if probe.meets {
            hi = Some(point);
        } else {
            lo = Some(point);
        }
        let bracket_slope = match (lo, hi) {
            (Some(l), Some(h)) => slope_between(l, h),
            _ => None,
        };
        match (lo, hi) {
            (_, Some((1, _))) => {
                return Ok(Outcome {
                    found: Some(1),
                    slope: bracket_slope.or(slope),
                });
            }
            (Some((l, _)), None) if l >= max => {
                return Ok(Outcome { found: None, slope });
            }
            (Some((l, _)), Some((h, _))) if h == l + 1 => {
                return Ok(Outcome {
                    found: Some(h),
                    slope: bracket_slope.or(slope),
                });
            }
            _ => {}
        }
        let s = slope.unwrap_or(-1.0);
        // The size where log(ratio) reaches 0 on a line of slope s through `from`.
        let crossing = |from: (u32, f64), s: f64| -> f64 {
            libm::exp(libm::log(from.0 as f64) - log_ratio(from.1) / s)
        };
        probe_n = match (lo, hi) {
            (Some(l), Some(h)) => {
                let width = h.0 - l.0;
                if width * 2 > width_before {
                    bisect_next = true;
                }
                let next = if bisect_next {
                    bisect_next = false;
                    l.0 + width / 2
                } else {
                    match bracket_slope {
                        Some(bs) => crossing(h, bs).ceil() as u32,
                        None => l.0 + width / 2,
                    }
                };
                next.clamp(l.0 + 1, h.0 - 1)
            }
            (None, Some(h)) => {
                // Everything so far meets: go down.
                let predicted = crossing(h, s).floor().max(1.0) as u32;
                let step =
                    (h.0 - predicted.min(h.0 - 1)).max(minimum_step(one_sided_steps, last_step));
                one_sided_steps += 1;
                last_step = step;
                h.0.saturating_sub(step).max(1)
            }
            (Some(l), None) => {
                // Everything so far fails: go up, at most doubling (a
                // failing ratio says little about how far: a P(miss) of
                // 100% against 1% would predict 100 times the fleet, and a
                // fleet far too large costs the most to simulate).
                let predicted = crossing(l, s).ceil().min(max as f64) as u32;
                let step = (predicted.max(l.0 + 1) - l.0)
                    .max(minimum_step(one_sided_steps, last_step))
                    .min(l.0.max(1));
                one_sided_steps += 1;
                last_step = step;
                l.0.saturating_add(step).min(max)
            }
            (None, None) => unreachable!("every evaluation sets one side"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Searches against a condition "n >= threshold" whose ratio follows
    /// `ratio(n)`, and counts evaluations.
    fn search(
        threshold: u32,
        start: u32,
        max: u32,
        ratio: &dyn Fn(u32) -> f64,
    ) -> (Option<u32>, u32) {
        let mut calls = 0;
        let outcome = smallest_meeting::<()>(start, max, None, &mut |n| {
            calls += 1;
            Ok(Probe {
                meets: n >= threshold,
                ratio: ratio(n),
            })
        })
        .unwrap();
        (outcome.found, calls)
    }

    fn bound(max: u32) -> u32 {
        // Galloping then bisecting with safeguards: at most about 2 log2(max) + 3.
        2 * (32 - max.leading_zeros()) + 3
    }

    #[test]
    fn finds_the_threshold_with_an_informative_ratio() {
        for max in [1, 2, 7, 64, 512] {
            for threshold in 1..=max + 1 {
                for start in [1, max / 3, max / 2, max] {
                    for power in [0.5, 1.0, 3.0] {
                        // The ratio crosses 1 just below the threshold.
                        let ratio = |n: u32| libm::pow((threshold as f64 - 0.5) / n as f64, power);
                        let (found, calls) = search(threshold, start, max, &ratio);
                        let expected = (threshold <= max).then_some(threshold);
                        assert_eq!(
                            found, expected,
                            "threshold {threshold} start {start} max {max}"
                        );
                        assert!(
                            calls <= bound(max),
                            "threshold {threshold} start {start} max {max} power {power}: {calls} calls"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_misleading_ratio_costs_evaluations_not_correctness() {
        for max in [7, 64, 512] {
            for threshold in 1..=max + 1 {
                for start in [1, max / 2, max] {
                    // Flat and far from 1 on both sides: no information.
                    let flat = |n: u32| if n >= threshold { 0.999 } else { 1.001 };
                    let (found, calls) = search(threshold, start, max, &flat);
                    assert_eq!(found, (threshold <= max).then_some(threshold));
                    assert!(calls <= bound(max), "flat: {calls} calls for max {max}");
                    // Wildly wrong: predicts the crossing far from the threshold.
                    let wrong = |n: u32| if n >= threshold { 1e-3 } else { 1e3 };
                    let (found, calls) = search(threshold, start, max, &wrong);
                    assert_eq!(found, (threshold <= max).then_some(threshold));
                    assert!(calls <= bound(max), "wrong: {calls} calls for max {max}");
                }
            }
        }
    }

    #[test]
    fn an_accurate_ratio_needs_few_evaluations() {
        // ratio = (36.5 / n)^2: from 10 the prediction lands on 37 at once,
        // and 36 confirms the boundary.
        let ratio = |n: u32| libm::pow(36.5 / n as f64, 2.0);
        let (found, calls) = search(37, 10, 512, &ratio);
        assert_eq!(found, Some(37));
        assert!(calls <= 4, "{calls} calls");
    }
}

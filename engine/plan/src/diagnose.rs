//! Why no fleet can meet a target, found before any run: a request is never
//! faster than alone on an idle replica, so when the targeted percentile of
//! that fastest service is already beyond a bound, more replicas cannot
//! help (they shorten queues, not steps). A capacity search of such a
//! configuration ends without a simulation, and the plan states the reason
//! once.
//!
//! The fastest service of a request is [`service_alone`] for its lengths;
//! the percentile is over [`DRAWS`] seeded draws of the class's lengths,
//! read at its lower 95% confidence order statistic, so that "no fleet can
//! meet it" is not a sampling accident. (Validation already refuses a bound
//! below the class's single shortest request; this catches the percentile:
//! e.g. a p99 sojourn bound shorter than the p99 output length times one
//! replica's fastest step.)

use crate::evaluate::{CheckMetric, CheckSpec};
use crate::format::{duration, percent, percentile_label};
use crate::model::scenario::Scenario;
use crate::model::service::service_alone;
use crate::rng::stream;
use crate::stats::clopper_pearson;

/// Length draws per class.
const DRAWS: usize = 2000;

/// The random streams of the draws (apart from the simulation's).
const STREAM: u64 = 0xd1a9_0000;

/// One check no fleet of a configuration can meet.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Unreachable {
    /// Index into the runner's checks.
    pub check: usize,
    /// The check's value with every request alone on an idle replica (a
    /// lower 95% bound): seconds, or a miss probability.
    pub floor: f64,
}

/// Each request of a class alone on an idle replica: TTFT, time per output
/// token (requests of more than one output token) and sojourn \[s\].
struct Alone {
    ttft_s: Vec<f64>,
    tpot_s: Vec<f64>,
    sojourn_s: Vec<f64>,
}

fn alone(scenario: &Scenario, class: usize) -> Alone {
    let c = &scenario.classes()[class];
    let seed = scenario.params().run.seed;
    let id = STREAM + 3 * class as u64;
    let (mut inputs, mut outputs, mut joint) =
        (stream(seed, id), stream(seed, id + 1), stream(seed, id + 2));
    let mut out = Alone {
        ttft_s: Vec::with_capacity(DRAWS),
        tpot_s: Vec::with_capacity(DRAWS),
        sojourn_s: Vec::with_capacity(DRAWS),
    };
    for _ in 0..DRAWS {
        let (input, output) = c.sample_lengths(&mut inputs, &mut outputs, &mut joint);
        let (input, output) = (u64::from(input), u64::from(output));
        let cached = (c.prefix_cache_hit * input as f64).round() as u64;
        let s = service_alone(
            scenario.step_time(),
            &scenario.params().engine,
            input,
            cached,
            output,
        );
        out.ttft_s.push(s.ttft_s);
        out.sojourn_s.push(s.sojourn_s);
        if output > 1 {
            out.tpot_s.push(s.decode_s / (output - 1) as f64);
        }
    }
    for v in [&mut out.ttft_s, &mut out.tpot_s, &mut out.sojourn_s] {
        v.sort_by(f64::total_cmp);
    }
    out
}

/// The lower 95% confidence bound of the `p` quantile of `sorted`: the
/// order statistic 1.645 standard deviations of the binomial count below
/// `n p` (NaN without values).
fn quantile_lower_bound(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len() as f64;
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = n * p - 1.645 * libm::sqrt(n * p * (1.0 - p));
    let index = (libm::floor(rank).max(1.0) as usize - 1).min(sorted.len() - 1);
    sorted[index]
}

/// The first check of `checks` that no fleet of `scenario` (one case's
/// configuration) can meet, if any.
pub(super) fn unreachable(scenario: &Scenario, checks: &[CheckSpec]) -> Option<Unreachable> {
    let mut by_class: Vec<Option<Alone>> = (0..scenario.classes().len()).map(|_| None).collect();
    for (index, check) in checks.iter().enumerate() {
        let Some(k) = check.class else { continue };
        if check.metric == CheckMetric::OfferedLoad {
            continue;
        }
        let a = by_class[k].get_or_insert_with(|| alone(scenario, k));
        let floor = match check.metric {
            CheckMetric::Ttft => quantile_lower_bound(&a.ttft_s, check.percentile),
            CheckMetric::Tpot => quantile_lower_bound(&a.tpot_s, check.percentile),
            CheckMetric::Sojourn => quantile_lower_bound(&a.sojourn_s, check.percentile),
            CheckMetric::MissProbability => {
                let deadline = scenario.classes()[k].deadline_s;
                let late = a.sojourn_s.iter().filter(|&&s| s > deadline).count() as u64;
                clopper_pearson(late, a.sojourn_s.len() as u64, 0.05).0
            }
            CheckMetric::OfferedLoad => continue,
        };
        if floor > check.threshold {
            return Some(Unreachable {
                check: index,
                floor,
            });
        }
    }
    None
}

/// What the fastest service means for `check`, in words: "even alone on an
/// idle replica of H100 SXM x1, p99 sojourn is at least 52 s".
pub(super) fn fastest_phrase(check: &CheckSpec, floor: f64, candidate: &str) -> String {
    let what = match check.metric {
        CheckMetric::MissProbability => {
            return format!(
                "even alone on an idle replica of {candidate}, at least {} of its requests take longer than the deadline",
                percent(floor)
            );
        }
        CheckMetric::Ttft => "TTFT",
        CheckMetric::Tpot => "time per output token",
        _ => "sojourn",
    };
    format!(
        "even alone on an idle replica of {candidate}, its {} {what} is at least {}",
        percentile_label(check.percentile),
        duration(floor)
    )
}

/// The message of a capacity search that needs no run (short: the plan
/// says why in full once, [`fastest_phrase`]): "ruled out without a run:
/// the fastest p99 sojourn is 11.61 s, beyond api: p99 sojourn <= 5 s".
pub(super) fn search_message(check: &CheckSpec, floor: f64) -> String {
    let fastest = match check.metric {
        CheckMetric::MissProbability => format!("at least {} miss alone", percent(floor)),
        CheckMetric::Ttft => format!(
            "the fastest {} TTFT is {}",
            percentile_label(check.percentile),
            duration(floor)
        ),
        CheckMetric::Tpot => format!(
            "the fastest {} TPOT is {}",
            percentile_label(check.percentile),
            duration(floor)
        ),
        _ => format!(
            "the fastest {} sojourn is {}",
            percentile_label(check.percentile),
            duration(floor)
        ),
    };
    format!(
        "ruled out without a run: {fastest}, beyond {}",
        check.description
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lower_bound_sits_just_below_the_quantile() {
        let sorted: Vec<f64> = (1..=2000).map(f64::from).collect();
        // n p = 1980, 1.645 sd = 7.3: the 1972nd value.
        assert_eq!(quantile_lower_bound(&sorted, 0.99), 1972.0);
        // n p = 1000, 1.645 sd = 36.8: the 963rd value.
        assert_eq!(quantile_lower_bound(&sorted, 0.5), 963.0);
        assert!(quantile_lower_bound(&[], 0.5).is_nan());
        assert_eq!(quantile_lower_bound(&[3.0], 0.01), 3.0);
    }
}

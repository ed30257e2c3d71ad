//! Why the binding target binds, read from the runs the plan already has
//! (the chosen configuration on the fleet one replica smaller than its
//! answer, which fails the target), and what else would meet it
//! (`levers.rs`).
//!
//! The figures, each the mean over that fleet's decided replications:
//! - each class's share of step time: its requests' busy seconds (every
//!   step's duration split over its tokens) over all classes';
//! - prefill's share of step time: the steps' time on prompt tokens
//!   computed for the first time over all step time, and the other
//!   classes' part of it, split by their share of the prompt tokens
//!   computed; with the 99th percentile of tokens per step, weighted by
//!   step time (how large the steps a decode waits on get);
//! - KV pressure: the largest fraction of its KV blocks one replica held,
//!   the preemptions, and the share of step time spent recomputing
//!   preempted prompts.
//!
//! The cause, in this order: the KV cache when recomputation takes at
//! least [`KV_RECOMPUTE_SHARE`] of step time, or the KV cache is at least
//! [`KV_FULL`] full with preemptions; shared prefill when a TTFT or TPOT
//! target binds and prefill takes at least [`PREFILL_SHARE`] of step time;
//! otherwise the load (the class's requests queue for busy steps).

use serde::{Deserialize, Serialize};

use crate::evaluate::{CheckMetric, Evaluation, RunAggregates};
use crate::format::{counted, format_count, format_number};
use crate::levers::{self, Lever};
use crate::runner::{Halt, Runner};
use crate::serde_float::nonfinite;

/// Recomputation's share of step time from which the KV cache is the cause.
const KV_RECOMPUTE_SHARE: f64 = 0.05;
/// KV use from which a cache with preemptions is the cause.
const KV_FULL: f64 = 0.95;
/// Prefill's share of step time from which shared prefill is the cause.
const PREFILL_SHARE: f64 = 0.1;

/// Why the binding target binds, and the levers tried against it.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The binding check diagnosed (the first latency one among them) and
    /// its class.
    pub target: String,
    pub class: String,
    /// The fleet the figures are read on (one replica fewer than the
    /// plan's smallest fleet, which fails the target) and its replications.
    pub replicas: u32,
    pub replications: u32,
    /// Each class's share of step time, largest first.
    pub shares: Vec<ClassShare>,
    /// Share of step time on prompt tokens computed the first time.
    #[serde(with = "nonfinite")]
    pub prefill_share: f64,
    /// The other classes' part of `prefill_share` (by their prompt tokens).
    #[serde(with = "nonfinite")]
    pub others_prefill_share: f64,
    /// The 99th percentile of tokens per step, weighted by step time.
    #[serde(with = "nonfinite")]
    pub step_tokens_p99: f64,
    /// Share of step time recomputing preempted prompts.
    #[serde(with = "nonfinite")]
    pub recompute_share: f64,
    /// The largest fraction of its KV blocks one replica held.
    #[serde(with = "nonfinite")]
    pub kv_peak: f64,
    /// Preemptions per run.
    #[serde(with = "nonfinite")]
    pub preemptions: f64,
    pub cause: Cause,
    /// The levers tried (only when a TTFT or TPOT target binds), in the
    /// order tried.
    pub levers: Vec<Lever>,
    /// Index into `levers` of the one with the largest saving (absent when
    /// none is cheaper than the plan's fleet).
    pub best: Option<usize>,
    /// Simulations the levers ran (counted in the plan's).
    pub simulations: u64,
    /// The figures, the cause and the best lever in words.
    pub sentence: String,
}

/// One class's share of step time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassShare {
    pub class: String,
    #[serde(with = "nonfinite")]
    pub share: f64,
}

/// What makes the binding target bind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The class's requests wait on prompts prefilled in the same steps.
    SharedPrefill,
    /// The KV cache: preemptions and recomputation.
    KvPressure,
    /// Busy steps: the class's requests queue for them.
    Load,
}

/// The diagnosis of the binding checks `binding` (indices into the
/// runner's checks) of `case`, whose smallest fleet is `n` and which fails
/// them on `below` (n - 1 replicas, decided): `None` when none of them is
/// a class's. Levers are tried when a TTFT or TPOT check binds (not in a
/// pass for the decision alone).
pub(super) fn diagnose(
    runner: &mut Runner,
    case: usize,
    below: &Evaluation,
    binding: &[usize],
    n: u32,
) -> Result<Option<Diagnosis>, Halt> {
    let latency = |i: &usize| {
        matches!(
            runner.checks[*i].metric,
            CheckMetric::Ttft | CheckMetric::Tpot
        )
    };
    let Some(check) = binding.iter().copied().find(latency).or_else(|| {
        binding
            .iter()
            .copied()
            .find(|&i| runner.checks[i].class.is_some())
    }) else {
        return Ok(None);
    };
    let Some(k) = runner.checks[check].class else {
        return Ok(None);
    };
    let mut d = facts(runner, case, below, check, k);
    if latency(&check) && !runner.decision_only {
        let (found, simulations) = levers::try_levers(runner, case, check, n)?;
        d.levers = found;
        d.simulations = simulations;
        d.best = levers::best(&d.levers);
    }
    d.sentence = sentence(&d, runner.checks[check].metric, n);
    Ok(Some(d))
}

/// The figures of `check` (class `k`) on `below`'s runs of `case`.
fn facts(runner: &Runner, case: usize, below: &Evaluation, check: usize, k: usize) -> Diagnosis {
    let runs = runner.runs(case, below.replicas, below.replications);
    let mean = |f: &dyn Fn(&RunAggregates) -> f64| {
        let values: Vec<f64> = runs
            .iter()
            .map(|r| f(r))
            .filter(|v| v.is_finite())
            .collect();
        if values.is_empty() {
            0.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        }
    };
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let step_s = |r: &RunAggregates| r.steps.prefill_s + r.steps.decode_s + r.steps.recompute_s;
    let busy = |r: &RunAggregates| r.classes.iter().map(|c| c.busy_s).sum::<f64>();
    let names = &runner.base.params().classes;
    let mut shares: Vec<ClassShare> = names
        .iter()
        .enumerate()
        .map(|(j, class)| ClassShare {
            class: class.name.clone(),
            share: mean(&|r| ratio(r.classes[j].busy_s, busy(r))),
        })
        .collect();
    shares.sort_by(|a, b| b.share.total_cmp(&a.share));
    let prefill_share = mean(&|r| ratio(r.steps.prefill_s, step_s(r)));
    let others_prefill_share = mean(&|r| {
        let all: u64 = r.classes.iter().map(|c| c.prefill_tokens).sum();
        let own = r.classes[k].prefill_tokens;
        ratio(r.steps.prefill_s, step_s(r)) * ratio((all - own) as f64, all as f64)
    });
    let recompute_share = mean(&|r| ratio(r.steps.recompute_s, step_s(r)));
    let kv_peak = runs.iter().map(|r| r.steps.kv_peak).fold(0.0, f64::max);
    let preemptions = mean(&|r| r.classes.iter().map(|c| c.preemptions).sum::<u64>() as f64);
    let metric = runner.checks[check].metric;
    let cause =
        if recompute_share >= KV_RECOMPUTE_SHARE || (kv_peak >= KV_FULL && preemptions > 0.0) {
            Cause::KvPressure
        } else if matches!(metric, CheckMetric::Ttft | CheckMetric::Tpot)
            && prefill_share >= PREFILL_SHARE
        {
            Cause::SharedPrefill
        } else {
            Cause::Load
        };
    Diagnosis {
        target: runner.checks[check].description.clone(),
        class: names[k].name.clone(),
        replicas: below.replicas,
        replications: below.replications,
        shares,
        prefill_share,
        others_prefill_share,
        step_tokens_p99: runs.iter().map(|r| r.steps.tokens_p99).fold(0.0, f64::max),
        recompute_share,
        kv_peak,
        preemptions,
        cause,
        levers: Vec::new(),
        best: None,
        simulations: 0,
        sentence: String::new(),
    }
}

/// A share as a whole percentage ("38%"; "<1%" for a small non-zero one).
fn pct(share: f64) -> String {
    if share > 0.0 && share < 0.005 {
        "<1%".to_string()
    } else {
        format!("{:.0}%", share * 100.0)
    }
}

/// "On 2 replicas, where chat: p99 TPOT <= 20 ms is not met, batch takes
/// 91% of step time and chat 9%; ... Levers tried ...: ...".
fn sentence(d: &Diagnosis, metric: CheckMetric, n: u32) -> String {
    let shares: Vec<String> = d
        .shares
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if i == 0 {
                format!("{} takes {} of step time", s.class, pct(s.share))
            } else {
                format!("{} {}", s.class, pct(s.share))
            }
        })
        .collect();
    let shares = match shares.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => shares.concat(),
    };
    let others = if d.shares.len() > 1 {
        format!(
            " ({} of it the other classes' prompts)",
            pct(d.others_prefill_share)
        )
    } else {
        String::new()
    };
    let preempted = if d.preemptions > 0.0 {
        format!("{} preemptions a run", format_number(d.preemptions, 3))
    } else {
        "no preemption".to_string()
    };
    let what = match metric {
        CheckMetric::Tpot => "decodes",
        _ => "requests",
    };
    let cause = match d.cause {
        Cause::SharedPrefill => format!(
            "{}'s {what} share their steps with prefill, mostly of {} prompts",
            d.class,
            if d.others_prefill_share > d.prefill_share / 2.0 {
                "the other classes'"
            } else {
                "its own"
            }
        ),
        Cause::KvPressure => format!(
            "the KV cache is the limit: {}'s requests are preempted and prompts recomputed",
            d.class
        ),
        Cause::Load => format!("the steps are busy: {}'s requests queue for them", d.class),
    };
    let mut out = format!(
        "On {}, where {} is not met, {shares}; prefill takes {} of step time{others}, in steps of up to {} tokens (99th percentile by time); KV cache use peaks at {} with {preempted}. So {cause}.",
        counted(d.replicas.into(), "replica"),
        d.target,
        pct(d.prefill_share),
        format_count(d.step_tokens_p99.round() as u64),
        pct(d.kv_peak),
    );
    if d.levers.is_empty() {
        return out;
    }
    let tried: Vec<String> = d.levers.iter().map(|l| l.outcome.clone()).collect();
    out.push_str(&format!(
        " Levers tried on the chosen configuration ({}, each fleet decided by the plan's rule, fleets below its {} only): {}.",
        counted(d.simulations, "simulation"),
        counted(n.into(), "replica"),
        tried.join("; ")
    ));
    out.push_str(&match d.best {
        Some(i) => format!(" Best: {}.", d.levers[i].outcome),
        None => " None meets every target for less than the plan.".to_string(),
    });
    out
}

impl crate::PlanResult {
    /// Why the target that sets the fleet binds, and the levers tried
    /// against it, in words (absent without a binding target of a class).
    pub fn diagnosis_sentence(&self) -> Option<String> {
        let d = self.binding.as_ref()?.diagnosis.as_ref()?;
        Some(d.sentence.clone())
    }
}

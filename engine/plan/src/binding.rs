//! Which target sets the fleet: the checks the next smaller fleet of the
//! chosen configuration fails, and the smallest fleet meeting every other
//! check ("chat: p90 TPOT <= 30 ms sets the fleet: 8 replicas; without it,
//! 4").
//!
//! Both come from decided evaluations, mostly the capacity search's own:
//! the search decided the fleet one below its answer when it bracketed it.
//! "Without it" is a second monotone search over the same cached runs,
//! judged on the other checks only, from that fleet down (the other checks'
//! ratio predicts how far), and never below the analytic bound unless the
//! binding check is the sustainability one that bound stands for. Its runs
//! beyond the capacity search's are few (at most about 2 log2(n) + 3
//! decided probes) and counted in [`BindingTarget::extra_simulations`] and
//! in the plan's simulations. Why the target binds, and the levers tried
//! against it, are `diagnosis.rs`'s.

use std::collections::BTreeSet;

use crate::diagnosis;
use crate::evaluate::{CheckMetric, Evaluation, Verdict};
use crate::explore;
use crate::format::format_count;
use crate::result::{BindingTarget, PlanResult, SearchResult};
use crate::runner::{Halt, Runner};
use crate::search::{Probe, smallest_meeting};

/// The binding target of the chosen configuration's base `case`, whose
/// capacity search is `search`; `None` when one replica meets every target
/// (nothing binds) or the search found no fleet.
pub(super) fn binding_target(
    runner: &mut Runner,
    case: usize,
    search: &SearchResult,
) -> Result<Option<BindingTarget>, Halt> {
    let Some(n) = search.found.filter(|&n| n > 1) else {
        return Ok(None);
    };
    runner.phase = "which target sets the fleet".to_string();
    let below = runner.decide(case, n - 1)?;
    let binding: Vec<usize> = (0..below.checks.len())
        .filter(|&i| below.checks[i].verdict != Verdict::Met)
        .collect();
    if binding.is_empty() {
        // Meeting is not monotone here (n - 1 meets on more replications
        // than the search used): nothing to name.
        return Ok(None);
    }
    let sustainability_binds = binding
        .iter()
        .any(|&i| below.checks[i].metric == CheckMetric::OfferedLoad);
    let floor = if sustainability_binds {
        1
    } else {
        explore::floor(runner, case)
    };
    // n - 1 meets every other check, so their smallest fleet is at most
    // n - 1, whatever the analytic bound says.
    let floor = floor.clamp(1, n - 1);
    let mut evaluations: Vec<Evaluation> = Vec::new();
    let mut probe = |runner: &mut Runner, m: u32| -> Result<Probe, Halt> {
        if m < floor {
            return Ok(Probe {
                meets: false,
                ratio: f64::INFINITY,
            });
        }
        let e = decide_without(runner, case, m, &binding)?;
        let p = others(&e, &binding);
        evaluations.push(e);
        Ok(p)
    };
    let without = smallest_meeting(n - 1, n - 1, None, &mut |m| probe(runner, m))?.found;
    let searched: BTreeSet<(u32, u32)> = runs_of(&search.evaluations);
    let extra = runs_of(&evaluations)
        .into_iter()
        .chain(runs_of(std::slice::from_ref(&below)))
        .filter(|key| !searched.contains(key))
        .collect::<BTreeSet<_>>()
        .len() as u64;
    let targets: Vec<String> = binding
        .iter()
        .map(|&i| below.checks[i].description.clone())
        .collect();
    let sentence = sentence(&targets, n, without);
    let diagnosis = diagnosis::diagnose(runner, case, &below, &binding, n)?;
    Ok(Some(BindingTarget {
        targets,
        replicas: n,
        failing_replicas: n - 1,
        without,
        extra_simulations: extra,
        sentence,
        diagnosis,
    }))
}

/// "chat: p90 TPOT <= 30 ms sets the fleet: 8 replicas (not met on 7);
/// without it, 4 replicas."
fn sentence(targets: &[String], n: u32, without: Option<u32>) -> String {
    let (what, sets, it) = match targets {
        [one] => (one.clone(), "sets", "it"),
        [init @ .., last] => (format!("{} and {last}", init.join(", ")), "set", "them"),
        [] => (String::new(), "sets", "it"),
    };
    let replicas = |k: u32| {
        format!(
            "{} replica{}",
            format_count(k.into()),
            if k == 1 { "" } else { "s" }
        )
    };
    let rest = without
        .map(|m| format!("; without {it}, {}", replicas(m)))
        .unwrap_or_default();
    format!(
        "{what} {sets} the fleet: {} (not met on {}){rest}.",
        replicas(n),
        format_count((n - 1).into())
    )
}

/// Whether the checks other than `excluded` are met, and their worst ratio.
pub(super) fn others(e: &Evaluation, excluded: &[usize]) -> Probe {
    let kept = e
        .checks
        .iter()
        .enumerate()
        .filter(|(i, _)| !excluded.contains(i));
    let (verdict, ratio) = kept.fold((Verdict::Met, 0.0f64), |(v, r), (_, c)| {
        let ratio = if c.not_evaluated.is_some() {
            f64::INFINITY
        } else {
            c.bounds[1] / c.threshold
        };
        (v.max(c.verdict), r.max(ratio))
    });
    Probe {
        meets: verdict == Verdict::Met,
        ratio,
    }
}

/// [`Runner::decide`] judged on the checks other than `excluded`: more
/// replications only while one of those is uncertain.
pub(super) fn decide_without(
    runner: &mut Runner,
    case: usize,
    replicas: u32,
    excluded: &[usize],
) -> Result<Evaluation, Halt> {
    let max = runner.replications();
    let mut count = runner.min_replications();
    loop {
        let e = runner.evaluate(case, replicas, count)?;
        let uncertain = e
            .checks
            .iter()
            .enumerate()
            .any(|(i, c)| !excluded.contains(&i) && c.verdict == Verdict::Uncertain);
        let failing = !others(&e, excluded).meets && !uncertain;
        if !uncertain || failing || count >= max {
            return Ok(e);
        }
        count = (count * 2).min(max);
    }
}

/// The (replicas, replication) runs behind `evaluations`.
fn runs_of(evaluations: &[Evaluation]) -> BTreeSet<(u32, u32)> {
    evaluations
        .iter()
        .flat_map(|e| (0..e.replications).map(move |r| (e.replicas, r)))
        .collect()
}

impl PlanResult {
    /// Which target sets the plan's fleet, in a sentence: the binding
    /// target's, or, when one steady replica meets every target (none binds),
    /// that no target does. `None` without a plan, or where meeting is not
    /// monotone below the fleet (nothing to name).
    pub fn binding_sentence(&self) -> Option<String> {
        match (&self.binding, &self.recommendation) {
            (Some(binding), _) => Some(binding.sentence.clone()),
            (None, Some(r)) if r.min_replicas == 1 && r.steady_replicas == 1 => {
                Some(ONE_REPLICA.to_string())
            }
            _ => None,
        }
    }
}

/// What sets a fleet of one steady replica.
const ONE_REPLICA: &str = "no target; one replica meets them all, the smallest fleet there is.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_names_the_target_and_both_fleets() {
        let one = vec!["chat: p90 TPOT <= 30 ms".to_string()];
        assert_eq!(
            sentence(&one, 8, Some(4)),
            "chat: p90 TPOT <= 30 ms sets the fleet: 8 replicas (not met on 7); without it, 4 replicas."
        );
        let two = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            sentence(&two, 2, Some(1)),
            "a and b set the fleet: 2 replicas (not met on 1); without them, 1 replica."
        );
        assert_eq!(
            sentence(&one, 3, None),
            "chat: p90 TPOT <= 30 ms sets the fleet: 3 replicas (not met on 2)."
        );
    }
}

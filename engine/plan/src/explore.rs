//! Branch and bound over configurations: the cheapest configuration whose
//! smallest fleet meets every target, for one case.
//!
//! Each configuration's fleet is bounded below by the analytic bound (the
//! load estimate at saturation: fewer replicas cannot carry the offered
//! work within `max_busy_fraction`; 10% of slack allows for its error), so
//! each has a lower bound on its cost. Configurations are searched cheapest
//! bound first, [`WIDTH`] at a time (a fixed number, so that the path does
//! not depend on how many workers run the simulations). Once one is found,
//! its cost caps every other search: a configuration whose bound cannot
//! beat it is pruned without a run, and one whose search would need a
//! fleet as dear stops there. Ties go to the configuration earlier in the
//! order: the scenario's own settings come first, so an equally cheap
//! change is not proposed.

use crate::PlanError;
use crate::error::ScenarioError;
use crate::model::analytic::load_estimate;
use crate::params::plan::Multipliers;
use crate::result::{SearchResult, SearchStatus};
use crate::runner::{Halt, Runner};
use crate::search::{Bounds, capacity_search};

/// Configurations searched at once in one case.
pub(super) const WIDTH: usize = 4;

/// The analytic bound's slack: a fleet below 90% of the load estimate's
/// replicas is taken to fail without a run.
const FLOOR_SLACK: f64 = 0.9;

/// One case explored over a set of configurations.
pub(super) struct Exploration {
    /// The configurations explored (indices into the runner's).
    pub configs: Vec<usize>,
    /// Their searches, in the same order.
    pub searches: Vec<SearchResult>,
    /// Position in `configs` of the cheapest that meets every target.
    pub best: Option<usize>,
    /// Positions of the others that meet every target, cheapest first.
    pub runner_ups: Vec<usize>,
    /// The search that answers for the case: the best's, or without one the
    /// last configuration's (why nothing meets).
    pub headline: SearchResult,
}

impl Exploration {
    pub fn best_config(&self) -> Option<usize> {
        self.best.map(|i| self.configs[i])
    }

    pub fn best_search(&self) -> Option<&SearchResult> {
        self.best.map(|i| &self.searches[i])
    }

    pub fn pruned(&self) -> u32 {
        self.searches
            .iter()
            .filter(|s| s.status == SearchStatus::Pruned)
            .count() as u32
    }
}

/// The order key of a fleet: its hourly cost with the reserve when every
/// candidate has a price, else its GPUs.
pub(super) fn fleet_key(runner: &Runner, config: usize, steady: u32) -> f64 {
    let all_priced = runner
        .candidates
        .iter()
        .all(|c| c.usd_per_gpu_hour.is_some());
    let candidate = &runner.candidates[runner.configs[config].candidate];
    let gpus =
        ((steady + runner.reserve_replicas()) * candidate.params.replica.gpus_per_replica) as f64;
    match candidate.usd_per_gpu_hour {
        Some(p) if all_priced => gpus * p,
        _ => gpus,
    }
}

/// The best configuration so far: (key, static rank, position).
type Incumbent = Option<(f64, usize, usize)>;

/// The largest fleet of configuration `c` (static rank `rank`) that still
/// beats a best of (key, rank) `best`: `max_replicas` without one.
fn ceiling_under(runner: &Runner, c: usize, rank: usize, best: Option<(f64, usize)>) -> u32 {
    let max_replicas = runner.base.params().plan.max_replicas;
    let Some((key, best_rank)) = best else {
        return max_replicas;
    };
    // (The best itself keeps its own fleet: rank ==.)
    let beats = |n: u32| {
        let k = fleet_key(runner, c, n);
        k < key || (k == key && rank <= best_rank)
    };
    let mut n = 0;
    while n < max_replicas && beats(n + 1) {
        n += 1;
    }
    n
}

/// How a sweep orders and holds back the searches: the order, each
/// configuration's static rank, and the likely answer (key, rank) while
/// searches that could only beat it by their bound are deferred.
struct SweepRule<'a> {
    order: &'a [usize],
    ranks: &'a [usize],
    defer: &'a dyn Fn(usize) -> bool,
    likely: Option<(f64, usize)>,
}

/// One sweep over the configurations in `rule.order`, starting from
/// `incumbent`: each configuration's search (None when it waits for runs),
/// whether any waits, and the best found.
fn sweep(
    runner: &mut Runner,
    configs: &[usize],
    rule: &SweepRule,
    info: &[(usize, u32, f64)],
    mut incumbent: Incumbent,
) -> Result<(Vec<Option<SearchResult>>, bool, Incumbent), Halt> {
    let mut searches: Vec<Option<SearchResult>> = vec![None; configs.len()];
    let mut active = 0;
    let mut waiting = false;
    for &j in rule.order {
        let rank = rule.ranks[j];
        let (case, floor, _) = info[j];
        let c = configs[j];
        // The largest fleet that still beats the incumbent.
        let ceiling = ceiling_under(runner, c, rank, incumbent.map(|(k, r, _)| (k, r)));
        let before = runner.state.pending.clone();
        match capacity_search(runner, case, Bounds { floor, ceiling }) {
            Ok(search) => {
                if let Some(n) = search.found {
                    let key = fleet_key(runner, c, n);
                    if incumbent.is_none_or(|(k, r, _)| key < k || (key == k && rank < r)) {
                        incumbent = Some((key, rank, j));
                    }
                }
                searches[j] = Some(search);
            }
            Err(Halt::Pending) => {
                waiting = true;
                if active >= WIDTH {
                    // Not yet: its runs wait for a place among the first
                    // WIDTH.
                    runner.state.pending = before;
                } else if (rule.defer)(j) {
                    runner.state.pending = before;
                    // Its runs wait for the likely answer to be decided,
                    // except when only its floor could beat that answer
                    // (tied with it in cost, a configuration ranked first
                    // wins): should the answer hold, the floor must be
                    // decided whatever else happens, so its replications
                    // run beside the likely answer's instead of after them
                    // (on the default scenario FCFS at one replica beside
                    // priority at one: two rounds fewer). With more fleets
                    // under the answer the bet is not taken: refuted, it
                    // would leave their runs unused. Its result waits: the
                    // answer is not decided.
                    let capped = ceiling.min(ceiling_under(runner, c, rank, rule.likely));
                    if capped == floor.max(1) {
                        let capped_before = runner.state.pending.clone();
                        match capacity_search(
                            runner,
                            case,
                            Bounds {
                                floor,
                                ceiling: capped,
                            },
                        ) {
                            Err(Halt::Pending) => active += 1,
                            Ok(_) => runner.state.pending = capped_before,
                            Err(e) => return Err(e),
                        }
                    }
                } else {
                    active += 1;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok((searches, waiting, incumbent))
}

/// The analytic bound of `case`: fewer replicas fail the sustainability
/// check by the load estimate (with `FLOOR_SLACK`).
pub(super) fn floor(runner: &Runner, case: usize) -> u32 {
    let plan = &runner.base.params().plan;
    let estimate = load_estimate(&runner.state.cases[case].scenario);
    let replicas_needed =
        estimate.arrival_rate_per_s * estimate.work_per_request_s / plan.max_busy_fraction;
    if replicas_needed.is_finite() {
        (FLOOR_SLACK * replicas_needed)
            .ceil()
            .clamp(1.0, plan.max_replicas as f64) as u32
    } else {
        1
    }
}

/// Explores `configs` under `multipliers` (cases labelled `label`).
pub(super) fn explore(
    runner: &mut Runner,
    configs: &[usize],
    multipliers: Multipliers,
    label: &str,
) -> Result<Exploration, Halt> {
    // (case, floor, key of the floor) per configuration.
    let mut info = Vec::with_capacity(configs.len());
    for &c in configs {
        let case = runner.case(c, multipliers, label)?;
        let floor = floor(runner, case);
        info.push((case, floor, fleet_key(runner, c, floor)));
    }
    // Ties between equally cheap fleets go to the configuration with the
    // lower static rank: cheaper bound, then the scenario's own settings,
    // then the order of the space.
    let mut by_rank: Vec<usize> = (0..configs.len()).collect();
    by_rank.sort_by(|&a, &b| {
        info[a]
            .2
            .total_cmp(&info[b].2)
            .then(
                runner.configs[configs[b]]
                    .baseline
                    .cmp(&runner.configs[configs[a]].baseline),
            )
            .then(a.cmp(&b))
    });
    let mut rank = vec![0; configs.len()];
    for (r, &j) in by_rank.iter().enumerate() {
        rank[j] = r;
    }
    // Searched best bound first, the bound raised by what the one-seed runs
    // so far have shown to fail (branch and bound: the next searches are
    // those that could still be cheapest).
    let seen: Vec<(Option<u32>, Option<u32>)> = info
        .iter()
        .map(|&(case, _, _)| runner.first_seed_bounds(case))
        .collect();
    let bound: Vec<f64> = (0..configs.len())
        .map(|j| {
            let n = seen[j].1.map_or(info[j].1, |f| info[j].1.max(f + 1));
            fleet_key(runner, configs[j], n)
        })
        .collect();
    let mut order = by_rank.clone();
    order.sort_by(|&a, &b| bound[a].total_cmp(&bound[b]).then(rank[a].cmp(&rank[b])));
    // The cheapest fleet a first seed has met on, a likely answer: searches
    // that could only beat it by their bound wait for it to be decided
    // rather than run on speculation (they resume if it is refuted).
    let likely: Option<(f64, usize)> = (0..configs.len())
        .filter_map(|j| {
            seen[j]
                .0
                .map(|m| (fleet_key(runner, configs[j], m), rank[j]))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    // Sweep the configurations in order, each search capped by the best
    // found so far; repeat while a sweep finds a better one than it started
    // with (a configuration later in the order may finish first), so that
    // the final sweep caps every search by the best of all. Each sweep
    // replays cached runs only; the pending runs are the final sweep's.
    let pending_before = runner.state.pending.clone();
    let defer = |j: usize| {
        likely.is_some_and(|(key, r)| bound[j] > key || (bound[j] == key && rank[j] > r))
    };
    let mut deferring = true;
    let (searches, waiting) = loop {
        let mut start: Option<(f64, usize, usize)> = None;
        let (searches, waiting) = loop {
            runner.state.pending = pending_before.clone();
            let defer_now = |j: usize| deferring && defer(j);
            let rule = SweepRule {
                order: &order,
                ranks: &rank,
                defer: &defer_now,
                likely,
            };
            let (searches, waiting, best) = sweep(runner, configs, &rule, &info, start)?;
            if best == start {
                break (searches, waiting);
            }
            start = best;
        };
        // Waiting only on deferred searches, which need no more runs
        // under the likely answer (decided against it): let them run.
        if waiting && deferring && runner.state.pending.len() == pending_before.len() {
            deferring = false;
            continue;
        }
        break (searches, waiting);
    };
    if waiting {
        return Err(Halt::Pending);
    }
    let searches: Vec<SearchResult> = searches.into_iter().flatten().collect();
    let mut meeting: Vec<usize> = (0..configs.len())
        .filter(|&j| searches[j].found.is_some())
        .collect();
    meeting.sort_by(|&a, &b| {
        let key = |j: usize| fleet_key(runner, configs[j], searches[j].found.unwrap_or(0));
        key(a).total_cmp(&key(b)).then(rank[a].cmp(&rank[b]))
    });
    let best = meeting.first().copied();
    let Some(headline) = best
        .or(searches.len().checked_sub(1))
        .map(|i| searches[i].clone())
    else {
        return Err(Halt::Failed(PlanError::InvalidCase {
            case: label.to_string(),
            error: ScenarioError::single("plan", "the search space has no configuration"),
        }));
    };
    Ok(Exploration {
        configs: configs.to_vec(),
        searches,
        best,
        runner_ups: meeting.iter().skip(1).copied().collect(),
        headline,
    })
}

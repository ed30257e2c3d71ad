//! The levers tried when a TTFT or TPOT target sets the fleet, each on the
//! chosen configuration with one thing changed, and the smallest fleet
//! meeting every target with it:
//! - a smaller token budget per step (`max_num_batched_tokens`):
//!   [`TOKEN_BUDGETS`] below the configured one and not already searched
//!   (listed in the search, or among its default budgets),
//!   so that a step holds smaller prefill chunks;
//! - priority scheduling with the binding class first (priority 0, the
//!   others 1), with more than one class;
//! - a separate pool for the other classes (with more than one class, all
//!   of them open arrival streams): the binding class alone on its own
//!   fleet, judged on the checks of its class and sustainability, beside
//!   the others on theirs (a scenario with the absent classes' rate set to
//!   zero); the two fleets' costs summed, each pool with the plan's
//!   reserve.
//!
//! Each fleet is decided by the plan's rule (sequential replications, the
//! same confidence bounds) and searched only below the plan's smallest
//! fleet `n` (`n - 1` at most, from the analytic bound up): a lever that
//! needs `n` or more saves nothing, and the cap bounds its simulations.
//! Every run goes through the [`Runner`]'s cache as its own case, so a
//! page's workers and a native plan run the same ones.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::binding::{decide_without, others};
use crate::cost::FleetCost;
use crate::evaluate::Evaluation;
use crate::explore;
use crate::format::{counted, format_usd};
use crate::model::scenario::Scenario;
use crate::params::plan::Multipliers;
use crate::params::{Discipline, ScenarioParams};
use crate::runner::{Gather, Halt, Runner, SimulatedCase};
use crate::search::{Probe, smallest_meeting};
use crate::serde_float::NonFinite;

/// The token budgets tried, where below the configured one.
pub(super) const TOKEN_BUDGETS: [u32; 2] = [2048, 512];

/// What a lever changes in the chosen configuration.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Variant {
    /// `engine.max_num_batched_tokens`.
    TokenBudget(u32),
    /// Priority scheduling with this class first.
    Priority(usize),
    /// Only these classes arrive (the others' rate is zero).
    Pool(Vec<usize>),
}

impl Variant {
    fn apply(&self, params: &mut ScenarioParams) {
        match self {
            Variant::TokenBudget(b) => params.engine.max_num_batched_tokens = *b,
            Variant::Priority(k) => {
                params.engine.discipline = Discipline::Priority;
                for (j, class) in params.classes.iter_mut().enumerate() {
                    class.priority = i32::from(j != *k);
                }
            }
            Variant::Pool(kept) => {
                for (j, class) in params.classes.iter_mut().enumerate() {
                    if !kept.contains(&j) {
                        class.batches_per_hour = 0.0;
                    }
                }
            }
        }
    }
}

/// Which lever.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeverKind {
    TokenBudget,
    Priority,
    SeparatePool,
}

/// One lever tried, and what it would cost.
#[serde_with::serde_as]
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lever {
    pub kind: LeverKind,
    /// "a token budget of 512".
    pub label: String,
    /// The steady replicas meeting every target, one number per pool (two
    /// for a separate pool: the binding class's, then the others'); empty
    /// when no fleet below the plan's does, or the lever is not a valid
    /// configuration.
    pub replicas: Vec<u32>,
    /// GPUs with the reserve (each pool its own).
    pub gpus: Option<u32>,
    #[serde_as(as = "Option<NonFinite>")]
    pub usd_per_month: Option<f64>,
    /// The plan's smallest fleet with its reserve, less this one.
    #[serde_as(as = "Option<NonFinite>")]
    pub saving_usd_per_month: Option<f64>,
    pub saving_gpus: Option<i64>,
    /// Simulations this lever ran.
    pub simulations: u64,
    /// "a token budget of 512 meets every target with 2 replicas: $2,190
    /// less per month".
    pub outcome: String,
}

/// One fleet a lever needs: the variant and the checks it is not judged on.
struct Pool {
    variant: Variant,
    excluded: Vec<usize>,
}

/// The levers to try against `check` (of class `k`) on `case`'s
/// configuration, with their pools.
fn candidates(runner: &Runner, case: usize, k: usize) -> Vec<(LeverKind, String, Vec<Pool>)> {
    let params = &runner.config_of(case).params;
    // The budgets the plan's own search tried (listed, or the defaults,
    // which add one when a TPOT target is set).
    let base = runner.base.params();
    let searched = base
        .plan
        .search
        .max_num_batched_tokens
        .clone()
        .unwrap_or_else(|| base.plan.search.default_budgets(base));
    let own = params.engine.max_num_batched_tokens;
    let mut out = Vec::new();
    for b in TOKEN_BUDGETS {
        if b < own && !searched.contains(&b) {
            out.push((
                LeverKind::TokenBudget,
                format!("a token budget of {b}"),
                vec![Pool {
                    variant: Variant::TokenBudget(b),
                    excluded: Vec::new(),
                }],
            ));
        }
    }
    let classes = &params.classes;
    if classes.len() < 2 {
        return out;
    }
    let name = &classes[k].name;
    let first_already = params.engine.discipline == Discipline::Priority
        && classes
            .iter()
            .enumerate()
            .all(|(j, c)| j == k || c.priority > classes[k].priority);
    if !first_already {
        out.push((
            LeverKind::Priority,
            format!("priority for {name}"),
            vec![Pool {
                variant: Variant::Priority(k),
                excluded: Vec::new(),
            }],
        ));
    }
    if classes.iter().all(|c| c.load.is_open()) {
        let rest: Vec<usize> = (0..classes.len()).filter(|&j| j != k).collect();
        let of = |kept: &[usize]| -> Vec<usize> {
            (0..runner.checks.len())
                .filter(|&i| runner.checks[i].class.is_some_and(|c| !kept.contains(&c)))
                .collect()
        };
        let names: Vec<&str> = rest.iter().map(|&j| classes[j].name.as_str()).collect();
        out.push((
            LeverKind::SeparatePool,
            format!("a separate pool for {}", names.join(" and ")),
            vec![
                Pool {
                    variant: Variant::Pool(vec![k]),
                    excluded: of(&[k]),
                },
                Pool {
                    excluded: of(&rest),
                    variant: Variant::Pool(rest),
                },
            ],
        ));
    }
    out
}

impl Runner<'_> {
    /// The case of `case`'s configuration with `variant` (built once,
    /// labelled `label`), or `None` when that is not a valid scenario.
    fn variant_case(&mut self, case: usize, variant: Variant, label: &str) -> Option<usize> {
        let config = self.state.cases[case].config;
        let known = self
            .state
            .cases
            .iter()
            .position(|c| c.config == config && c.variant.as_ref() == Some(&variant));
        if known.is_some() {
            return known;
        }
        let mut params = Multipliers::BASE.apply(&self.configs[config].params);
        variant.apply(&mut params);
        let scenario = Scenario::try_from(params).ok()?;
        self.state.cases.push(SimulatedCase {
            label: label.to_string(),
            config,
            multipliers: Multipliers::BASE,
            variant: Some(variant),
            scenario,
            queue: None,
            estimates: Default::default(),
            twin: None,
        });
        Some(self.state.cases.len() - 1)
    }
}

/// The smallest fleet of `case` up to `cap` meeting every check but
/// `excluded`, decided as the plan decides (from the analytic bound up),
/// with the evaluations it made.
fn smallest_fleet(
    runner: &mut Runner,
    case: usize,
    excluded: &[usize],
    cap: u32,
    evaluations: &mut Vec<(usize, Evaluation)>,
) -> Result<Option<u32>, Halt> {
    let floor = explore::floor(runner, case).max(1);
    if floor > cap {
        return Ok(None);
    }
    let mut probe = |runner: &mut Runner, m: u32| -> Result<Probe, Halt> {
        if m < floor {
            return Ok(Probe {
                meets: false,
                ratio: f64::INFINITY,
            });
        }
        let e = decide_without(runner, case, m, excluded)?;
        let p = others(&e, excluded);
        evaluations.push((case, e));
        Ok(p)
    };
    Ok(smallest_meeting(floor, cap, None, &mut |m| probe(runner, m))?.found)
}

/// Every lever against `check` on `case`, whose smallest fleet is `n`, and
/// the simulations they ran.
pub(super) fn try_levers(
    runner: &mut Runner,
    case: usize,
    check: usize,
    n: u32,
) -> Result<(Vec<Lever>, u64), Halt> {
    let Some(k) = runner.checks[check].class else {
        return Ok((Vec::new(), 0));
    };
    runner.phase = "levers against the target that sets the fleet".to_string();
    let basis = runner.basis(case);
    let reserve = runner.reserve_replicas();
    let plan = FleetCost::new(&basis, n, reserve, 1.0);
    let mut waiting = Gather::default();
    let mut levers = Vec::new();
    let mut all_runs: BTreeSet<(usize, u32, u32)> = BTreeSet::new();
    for (kind, label, pools) in candidates(runner, case, k) {
        let mut evaluations = Vec::new();
        let mut replicas = Vec::new();
        let mut valid = true;
        let mut complete = true;
        for (i, pool) in pools.into_iter().enumerate() {
            let name = format!("lever: {label}{}", ["", " (the others' pool)"][i.min(1)]);
            let Some(c) = runner.variant_case(case, pool.variant, &name) else {
                valid = false;
                break;
            };
            let found = waiting.take(smallest_fleet(
                runner,
                c,
                &pool.excluded,
                n - 1,
                &mut evaluations,
            ))?;
            match found {
                Some(Some(m)) => replicas.push(m),
                Some(None) => complete = false,
                None => {}
            }
        }
        let runs: BTreeSet<(usize, u32, u32)> = evaluations
            .iter()
            .flat_map(|(c, e)| (0..e.replications).map(move |r| (*c, e.replicas, r)))
            .collect();
        all_runs.extend(runs.iter().copied());
        let pools = if kind == LeverKind::SeparatePool {
            2
        } else {
            1
        };
        let fleet = (valid && complete && replicas.len() == pools)
            .then(|| FleetCost::new(&basis, replicas.iter().sum(), reserve * pools as u32, 1.0));
        let mut lever = Lever {
            kind,
            label,
            replicas: if fleet.is_some() {
                replicas
            } else {
                Vec::new()
            },
            gpus: fleet.as_ref().map(|f| f.gpus),
            usd_per_month: fleet.as_ref().and_then(|f| f.usd_per_month),
            saving_usd_per_month: fleet
                .as_ref()
                .and_then(|f| plan.usd_per_month.zip(f.usd_per_month))
                .map(|(p, l)| p - l),
            saving_gpus: fleet.as_ref().map(|f| plan.gpus as i64 - f.gpus as i64),
            simulations: runs.len() as u64,
            outcome: String::new(),
        };
        lever.outcome = outcome(&lever, valid, n, &runner.base.params().classes[k].name);
        levers.push(lever);
    }
    waiting.finish((levers, all_runs.len() as u64))
}

/// The lever's result in words.
fn outcome(lever: &Lever, valid: bool, n: u32, class: &str) -> String {
    let label = &lever.label;
    if !valid {
        return format!("{label} is not a valid configuration");
    }
    if lever.replicas.is_empty() {
        return format!(
            "{label}: no fleet below {} meets every target",
            counted(n.into(), "replica")
        );
    }
    let fleet = match lever.replicas.as_slice() {
        [one] => counted((*one).into(), "replica"),
        pools => format!(
            "{} replicas ({class}'s pool, then the others', each with its reserve)",
            pools
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" + ")
        ),
    };
    let saving = match (lever.saving_usd_per_month, lever.saving_gpus) {
        (Some(s), _) if s > 0.0 => format!("{} less per month", format_usd(s)),
        (Some(s), _) if s < 0.0 => format!("{} more per month", format_usd(-s)),
        (Some(_), _) => "the same cost".to_string(),
        (None, Some(g)) if g > 0 => format!("{} fewer", counted(g as u64, "GPU")),
        (None, Some(g)) if g < 0 => format!("{} more", counted(g.unsigned_abs(), "GPU")),
        (None, _) => "as many GPUs".to_string(),
    };
    format!("{label} meets every target with {fleet}: {saving}")
}

/// The lever with the largest saving (in USD, or GPUs without a price),
/// the first among equals; `None` when none saves.
pub(super) fn best(levers: &[Lever]) -> Option<usize> {
    let saving = |l: &Lever| {
        l.saving_usd_per_month
            .or(l.saving_gpus.map(|g| g as f64))
            .unwrap_or(f64::NEG_INFINITY)
    };
    let mut best: Option<usize> = None;
    for (i, l) in levers.iter().enumerate() {
        if saving(l) > 0.0 && best.is_none_or(|b| saving(l) > saving(&levers[b])) {
            best = Some(i);
        }
    }
    best
}

//! What every phase of the planner shares: the configurations and cases it
//! simulates, the cache of runs keyed by (case, replicas, replication), and
//! the [`Runner`], one pass over the plan's logic on the runs so far.
//!
//! A pass never simulates. When it needs a run the cache lacks, it records
//! the run as pending and the branch that needed it stops with
//! [`Halt::Pending`]; independent branches (the searches of several
//! configurations, the cases) go on and record theirs. The pass loop
//! (`session.rs`) then hands out every pending simulation, to run on as
//! many threads or Web Workers as there are, and repeats the pass. A pass's
//! decisions depend only on the cached results, and each run's result only
//! on its key, so the plan is the same whatever the number of workers and
//! whatever order they finish in.
//!
//! Replication r of every case uses the scenario's seed + r, so every
//! configuration and case sees the same arrivals and token lengths (common
//! random numbers), and a phase that asks again for a run an earlier phase
//! made gets it from the cache.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnose::{self, Unreachable};
use crate::evaluate::{CheckSpec, Evaluation, RunAggregates, Verdict, evaluate};
use crate::jobs::{PlanJob, RunKey};
use crate::levers::Variant;
use crate::model::analytic::{QueueEstimate, QueueModel};
use crate::model::scenario::Scenario;
use crate::params::plan::{Multipliers, ResolvedCandidate};
use crate::sim::RunOptions;
use crate::space::{Configuration, configurations};
use crate::{PlanError, PlanOptions};

/// A scenario the planner simulates: a configuration with multipliers
/// applied.
pub(super) struct SimulatedCase {
    /// The label it was first asked for by, naming it in messages.
    pub label: String,
    pub config: usize,
    /// The multipliers it was built with (the price among them prices its
    /// runs; cases differing only in price share one [`SimulatedCase`]).
    pub multipliers: Multipliers,
    /// A lever tried on the configuration (`levers.rs`); `None` for the
    /// configuration as the space has it.
    pub variant: Option<Variant>,
    pub scenario: Scenario,
    /// The two-stage estimate, built on first use.
    pub queue: Option<QueueModel>,
    /// Its figures per fleet size, kept across passes: the provisional
    /// pass and the last both compare the plan's fleet with it, and each
    /// takes tens of milliseconds (the percentiles of every class).
    pub estimates: BTreeMap<u32, QueueEstimate>,
    /// An earlier case of the same system but for its service discipline:
    /// this one takes its two-stage estimate and its unreachable check
    /// ([`PlanState::estimates_of`]), neither of which depends on the
    /// discipline (on the default scenario the four disciplines' searches
    /// would otherwise each sample and solve the same estimate, on the
    /// page's thread before the first simulations can start).
    pub twin: Option<usize>,
}

/// What a plan has computed: kept across passes.
#[derive(Default)]
pub(super) struct PlanState {
    pub cases: Vec<SimulatedCase>,
    /// Every run so far, by (case, replicas, replication).
    runs: BTreeMap<RunKey, RunAggregates>,
    /// Runs the last pass needed and the cache lacks.
    pub pending: BTreeSet<RunKey>,
    /// The two-stage estimate's starting point per case.
    pub analytic_guesses: BTreeMap<usize, Option<u32>>,
    pub simulations: u64,
    pub simulated_requests: u64,
    /// The check no fleet of a case can meet, per case (found once).
    unreachable: BTreeMap<usize, Option<Unreachable>>,
    /// Runs of an earlier plan whose scenario differed from this one's in
    /// prices alone (see [`PlanState::reusing`]), taken as they are asked for.
    earlier: Vec<EarlierCase>,
    /// The stage of the plan that first asked for each run (see
    /// [`Runner::stage`]), which its job carries for a profile.
    asked_by: BTreeMap<RunKey, &'static str>,
}

/// An earlier plan's case (its configuration and multipliers) and its runs
/// by (replicas, replication).
struct EarlierCase {
    config: usize,
    multipliers: Multipliers,
    variant: Option<Variant>,
    runs: BTreeMap<(u32, u32), RunAggregates>,
}

impl PlanState {
    /// A state that answers runs from `previous`'s, a plan of a scenario
    /// differing from this one's in prices alone: the same configurations
    /// (prices never change the search space) and, for a case of the same
    /// simulated system, the same runs.
    pub fn reusing(previous: PlanState) -> PlanState {
        let mut earlier: Vec<EarlierCase> = previous
            .cases
            .iter()
            .map(|case| EarlierCase {
                config: case.config,
                multipliers: case.multipliers,
                variant: case.variant.clone(),
                runs: BTreeMap::new(),
            })
            .collect();
        for (key, summary) in previous.runs {
            earlier[key.case]
                .runs
                .insert((key.replicas, key.replication), summary);
        }
        PlanState {
            earlier,
            ..PlanState::default()
        }
    }

    /// Takes the pending runs an earlier plan made, as if each had just
    /// run; true when there were some and every one was among them (the
    /// pass can go on at once, as it would once a batch of simulations came
    /// back; a pass that waits for no run must still stop, as stalled).
    pub fn take_earlier_runs(&mut self) -> bool {
        let pending: Vec<RunKey> = self.pending.iter().copied().collect();
        if pending.is_empty() {
            return false;
        }
        for key in pending {
            let case = &self.cases[key.case];
            let found = self
                .earlier
                .iter_mut()
                .find(|e| {
                    e.config == case.config
                        && e.multipliers.same_system_as(&case.multipliers)
                        && e.variant == case.variant
                })
                .and_then(|e| e.runs.remove(&(key.replicas, key.replication)));
            if let Some(summary) = found {
                self.insert(key, summary);
            }
        }
        self.pending.is_empty()
    }

    /// Forgets the cases from index `len` on, and what was worked out for
    /// them: a pass that must leave no trace (a session's provisional
    /// pass) may have registered cases the plan itself would register
    /// later, under its own labels.
    pub fn forget_cases_from(&mut self, len: usize) {
        self.cases.truncate(len);
        self.analytic_guesses.retain(|&case, _| case < len);
        self.unreachable.retain(|&case, _| case < len);
    }

    /// The case whose discipline-free estimates `case` shares: itself or
    /// its twin.
    pub fn estimates_of(&self, case: usize) -> usize {
        self.cases[case].twin.unwrap_or(case)
    }

    /// Stores the result of a run the plan asked for.
    pub fn insert(&mut self, key: RunKey, summary: RunAggregates) {
        if self.runs.insert(key, summary).is_none() {
            self.simulations += 1;
            self.simulated_requests += self.runs[&key].requests;
        }
        self.pending.remove(&key);
    }
}

/// Why a pass over the plan stopped early.
pub(super) enum Halt {
    Failed(PlanError),
    /// A branch needs runs the cache lacks (recorded in
    /// [`PlanState::pending`]).
    Pending,
}

impl From<PlanError> for Halt {
    fn from(e: PlanError) -> Halt {
        Halt::Failed(e)
    }
}

/// How a pass runs independent branches: a failure stops the pass; a branch
/// that needs runs is remembered and the pass goes on with the others, so
/// that each records what it needs before the pass stops.
#[derive(Default)]
pub(super) struct Gather {
    waiting: bool,
}

impl Gather {
    /// A branch's value, or `None` when it needs runs.
    pub fn take<T>(&mut self, outcome: Result<T, Halt>) -> Result<Option<T>, Halt> {
        match outcome {
            Ok(value) => Ok(Some(value)),
            Err(Halt::Pending) => {
                self.waiting = true;
                Ok(None)
            }
            Err(failed) => Err(failed),
        }
    }

    /// `value` when no branch needs runs, else `Pending`.
    pub fn finish<T>(self, value: T) -> Result<T, Halt> {
        if self.waiting {
            Err(Halt::Pending)
        } else {
            Ok(value)
        }
    }
}

/// One pass over the plan's logic. Its decisions depend only on the runs'
/// results, which the state caches, so a pass that stops for want of runs
/// can be repeated once they are in and takes the same path.
pub(super) struct Runner<'a> {
    pub base: &'a Scenario,
    pub options: &'a PlanOptions,
    /// The hardware options, resolved from the plan section.
    pub candidates: Vec<ResolvedCandidate>,
    /// Every configuration of the search space.
    pub configs: Vec<Configuration>,
    /// Every check a fleet must pass.
    pub checks: Vec<CheckSpec>,
    pub state: &'a mut PlanState,
    keep_records: bool,
    /// Simulations the whole plan is expected to run, for progress.
    pub estimated: u64,
    /// What is being done, for progress.
    pub phase: String,
    /// A pass for the search's decision alone (a session's provisional
    /// result): without the configured fleet's verdict and the search of
    /// the scenario's own settings that the "why" compares with, which run
    /// beside the rest of the plan and would hold the decision back.
    pub decision_only: bool,
    /// Set by the pass once the whole space's search has decided (before,
    /// a pass for the decision alone cannot complete either).
    pub searched: bool,
    /// The stage of the plan the pass is in (`run_plan`'s phases:
    /// "exploration", "service curve", ...): a run is attributed to the
    /// stage that first asked for it, for `sojourn plan --profile`. It
    /// changes no decision.
    pub stage: &'static str,
}

impl<'a> Runner<'a> {
    pub fn new(
        base: &'a Scenario,
        options: &'a PlanOptions,
        state: &'a mut PlanState,
    ) -> Runner<'a> {
        let checks = CheckSpec::all(base);
        let (candidates, configs) = configurations(base.params());
        Runner {
            base,
            options,
            candidates,
            configs,
            // For each bound's share of requests, and percentiles.
            keep_records: checks.iter().any(CheckSpec::counts_requests),
            checks,
            state,
            estimated: 1,
            phase: String::new(),
            decision_only: false,
            searched: false,
            stage: "exploration",
        }
    }

    /// Most replications of any judgement of a fleet.
    pub fn replications(&self) -> u32 {
        self.base.params().plan.replications
    }

    /// Replications every decided judgement starts with.
    pub fn min_replications(&self) -> u32 {
        let plan = &self.base.params().plan;
        plan.min_replications.clamp(1, plan.replications)
    }

    /// Replications of each service-curve point.
    pub fn curve_replications(&self) -> u32 {
        let plan = &self.base.params().plan;
        plan.service_curve
            .replications
            .unwrap_or_else(|| self.min_replications())
    }

    /// Reserve replicas (failure reserve and warm idle) beside every fleet.
    pub fn reserve_replicas(&self) -> u32 {
        let reserve = &self.base.params().plan.reserve;
        reserve.failure_reserve_replicas + reserve.warm_idle_replicas
    }

    /// The case for `config` with `multipliers` (built once; price does not
    /// change the simulated system, so cases differing only in price share
    /// their runs).
    pub fn case(
        &mut self,
        config: usize,
        multipliers: Multipliers,
        label: &str,
    ) -> Result<usize, Halt> {
        if let Some(i) = self.state.cases.iter().position(|c| {
            c.config == config && c.variant.is_none() && c.multipliers.same_system_as(&multipliers)
        }) {
            return Ok(i);
        }
        let mut params = multipliers.apply(&self.configs[config].params);
        // Only cases of the same multipliers can be twins (a cheap test
        // first: a trace's lengths make a scenario's comparison costly).
        let discipline = params.engine.discipline;
        let twin = self.state.cases.iter().position(|c| {
            c.twin.is_none()
                && c.variant.is_none()
                && c.multipliers.same_system_as(&multipliers)
                && {
                    params.engine.discipline = c.scenario.params().engine.discipline;
                    *c.scenario.params() == params
                }
        });
        params.engine.discipline = discipline;
        let scenario = Scenario::try_from(params).map_err(|error| PlanError::InvalidCase {
            case: format!("{label} ({})", self.configs[config].label),
            error,
        })?;
        self.state.cases.push(SimulatedCase {
            label: label.to_string(),
            config,
            multipliers,
            variant: None,
            scenario,
            queue: None,
            estimates: BTreeMap::new(),
            twin,
        });
        Ok(self.state.cases.len() - 1)
    }

    /// The check that no fleet of `case` can meet, if any (see
    /// `diagnose.rs`; found on first use, kept across passes).
    pub fn unreachable(&mut self, case: usize) -> Option<Unreachable> {
        let case = self.state.estimates_of(case);
        if let Some(known) = self.state.unreachable.get(&case) {
            return known.clone();
        }
        let found = diagnose::unreachable(&self.state.cases[case].scenario, &self.checks);
        self.state.unreachable.insert(case, found.clone());
        found
    }

    /// The configuration `case` runs.
    pub fn config_of(&self, case: usize) -> &Configuration {
        &self.configs[self.state.cases[case].config]
    }

    /// The candidate `case` runs on.
    pub fn candidate_of(&self, case: usize) -> &ResolvedCandidate {
        &self.candidates[self.config_of(case).candidate]
    }

    /// The jobs of the runs the last pass needed (never none: a pass that
    /// waits without asking for a run would loop for ever).
    pub fn pending_jobs(&self) -> Result<Vec<PlanJob>, PlanError> {
        let jobs = self
            .state
            .pending
            .iter()
            .map(|&key| self.job(key))
            .collect::<Result<Vec<_>, _>>()?;
        if jobs.is_empty() {
            return Err(PlanError::Stalled);
        }
        Ok(jobs)
    }

    /// The job that runs `key` (which must name a case of this plan).
    pub fn job(&self, key: RunKey) -> Result<PlanJob, PlanError> {
        let case = &self.state.cases[key.case];
        let seed = self
            .base
            .params()
            .run
            .seed
            .wrapping_add(key.replication as u64);
        let scenario = case
            .scenario
            .with_replicas_and_seed(key.replicas, seed)
            .map_err(|error| PlanError::InvalidCase {
                case: case.label.clone(),
                error,
            })?;
        let run_options = RunOptions {
            max_requests: self.options.max_requests_per_run,
            max_work: self.options.max_work_per_run,
            max_bytes: self.options.max_bytes_per_run,
            keep_records: self.keep_records,
            ..RunOptions::default()
        };
        Ok(PlanJob::new(
            key,
            format!(
                "{} ({}), {} replicas, seed {seed}",
                case.label, self.configs[case.config].label, key.replicas
            ),
            self.state.asked_by.get(&key).copied().unwrap_or(self.stage),
            scenario,
            run_options,
            self.checks.clone(),
            self.options.progress_every_requests,
        ))
    }

    /// Replication `replication` of `case` on `replicas`, or `Pending`
    /// (and the run recorded as pending) when it has not run yet.
    pub fn run(
        &mut self,
        case: usize,
        replicas: u32,
        replication: u32,
    ) -> Result<&RunAggregates, Halt> {
        let key = RunKey {
            case,
            replicas,
            replication,
        };
        if self.state.runs.contains_key(&key) {
            Ok(&self.state.runs[&key])
        } else {
            self.state.pending.insert(key);
            // A pass for the decision alone asks for nothing of its own.
            if !self.decision_only {
                self.state.asked_by.entry(key).or_insert(self.stage);
            }
            Err(Halt::Pending)
        }
    }

    /// Whether replications 0..count of `case` on `replicas` have all run
    /// (the missing ones recorded as pending).
    pub fn request(&mut self, case: usize, replicas: u32, count: u32) -> bool {
        let mut missing = false;
        for r in 0..count {
            missing |= self.run(case, replicas, r).is_err();
        }
        !missing
    }

    /// Evaluates `case` on `replicas` with replications 0..count (all of
    /// them recorded as pending when any is missing).
    pub fn evaluate(&mut self, case: usize, replicas: u32, count: u32) -> Result<Evaluation, Halt> {
        if !self.request(case, replicas, count) {
            return Err(Halt::Pending);
        }
        Ok(evaluate(
            &self.checks,
            &self.runs(case, replicas, count),
            self.base.params().plan.decision,
        ))
    }

    /// Decides `case` on `replicas` by sequential stopping: starts with
    /// `min_replications` seeds and doubles them (up to `replications`)
    /// only while the evaluation is uncertain: some check's interval
    /// straddles its threshold and none is clearly not met.
    pub fn decide(&mut self, case: usize, replicas: u32) -> Result<Evaluation, Halt> {
        let max = self.replications();
        let mut count = self.min_replications();
        loop {
            let e = self.evaluate(case, replicas, count)?;
            if e.verdict != Verdict::Uncertain || count >= max {
                return Ok(e);
            }
            count = (count * 2).min(max);
        }
    }

    /// What the first seed of `case` has shown so far: the smallest fleet
    /// it met on, and the largest it failed on below that (what one-seed
    /// probes have learnt of its answer; None where none did).
    pub fn first_seed_bounds(&self, case: usize) -> (Option<u32>, Option<u32>) {
        let decision = self.base.params().plan.decision;
        let from = RunKey {
            case,
            replicas: 0,
            replication: 0,
        };
        let to = RunKey {
            case: case + 1,
            replicas: 0,
            replication: 0,
        };
        let probes: Vec<(u32, bool)> = self
            .state
            .runs
            .range(from..to)
            .filter(|(key, _)| key.replication == 0)
            .map(|(key, run)| {
                let probe = evaluate(&self.checks, &[run], decision);
                (key.replicas, probe.probe_meets())
            })
            .collect();
        let meeting = probes.iter().filter(|p| p.1).map(|p| p.0).min();
        let failing = probes
            .iter()
            .filter(|p| !p.1 && meeting.is_none_or(|m| p.0 < m))
            .map(|p| p.0)
            .max();
        (meeting, failing)
    }

    /// The runs so far among replications 0..count of `case` on `replicas`.
    pub fn runs(&self, case: usize, replicas: u32, count: u32) -> Vec<&RunAggregates> {
        (0..count)
            .filter_map(|replication| {
                self.state.runs.get(&RunKey {
                    case,
                    replicas,
                    replication,
                })
            })
            .collect()
    }
}

//! What every phase of the planner shares: the cases it simulates, the cache
//! of runs keyed by (case, replicas, replication), and the [`Runner`] that
//! runs a simulation when the cache lacks it, reports progress and stops for
//! Cancel or for want of simulations (a [`super::PlanSession`] step).
//!
//! Replication r of every case uses the scenario's seed + r, so cases
//! compare like with like (common random numbers), and a phase that asks
//! again for a run an earlier phase made gets it from the cache.

use std::collections::BTreeMap;

use crate::model::analytic::QueueModel;
use crate::model::scenario::Scenario;
use crate::params::plan::{Multipliers, PricingParams, ResolvedCandidate, resolve_candidates};
use crate::plan::cost::{self, CostBasis};
use crate::plan::evaluate::{CheckSpec, Evaluation, RunSummary, evaluate, mean_ci};
use crate::plan::result::{ClassIntervals, CostSummary, Interval};
use crate::plan::{PlanError, PlanOptions, PlanProgress};
use crate::report::Report;
use crate::sim::{RunOptions, Simulation};

/// A scenario the planner simulates: a candidate with multipliers applied.
pub(super) struct Case {
    /// The label it was first asked for by, naming it in messages.
    pub label: String,
    pub candidate: usize,
    /// The multipliers it was built with (the price among them prices its
    /// runs; cases differing only in price share one [`Case`]).
    pub multipliers: Multipliers,
    pub scenario: Scenario,
    /// The two-stage estimate, built on first use.
    pub queue: Option<QueueModel>,
}

/// What a plan has computed: kept across the steps of a
/// [`super::PlanSession`].
#[derive(Default)]
pub(super) struct PlanState {
    pub cases: Vec<Case>,
    /// Every run so far, by (case, replicas, replication).
    runs: BTreeMap<(usize, u32, u32), RunSummary>,
    /// The two-stage estimate's starting point per case.
    pub analytic_guesses: BTreeMap<usize, Option<u32>>,
    pub simulations: u64,
    pub simulated_requests: u64,
}

/// Why a pass over the plan stopped early.
pub(super) enum Halt {
    Failed(PlanError),
    /// The pass used up its simulations (a [`super::PlanSession`] step).
    Paused,
}

impl From<PlanError> for Halt {
    fn from(e: PlanError) -> Halt {
        Halt::Failed(e)
    }
}

/// One pass over the plan's logic. Its decisions depend only on the runs'
/// results, which the state caches, so a pass that pauses for want of
/// simulations can be repeated later and takes the same path.
pub(super) struct Runner<'a> {
    pub base: &'a Scenario,
    pub options: &'a PlanOptions,
    /// The hardware options, resolved from the plan section.
    pub candidates: Vec<ResolvedCandidate>,
    /// Every check a fleet must pass.
    pub checks: Vec<CheckSpec>,
    pub state: &'a mut PlanState,
    on_progress: &'a mut dyn FnMut(&PlanProgress) -> bool,
    /// New simulations this pass may still run (`None`: any number).
    run_budget: Option<u32>,
    keep_records: bool,
    /// Simulations the whole pass is expected to run, for progress.
    pub estimated: u64,
    /// What is being done, for progress.
    pub phase: String,
}

impl<'a> Runner<'a> {
    pub fn new(
        base: &'a Scenario,
        options: &'a PlanOptions,
        on_progress: &'a mut dyn FnMut(&PlanProgress) -> bool,
        state: &'a mut PlanState,
        run_budget: Option<u32>,
    ) -> Runner<'a> {
        let checks = CheckSpec::all(base);
        Runner {
            base,
            options,
            candidates: resolve_candidates(base.params()),
            keep_records: checks.iter().any(CheckSpec::needs_records),
            checks,
            state,
            on_progress,
            run_budget,
            estimated: 1,
            phase: String::new(),
        }
    }

    /// Replications of every judgement of a fleet.
    pub fn replications(&self) -> u32 {
        self.base.params().plan.replications
    }

    /// Replications of each service-curve point.
    pub fn curve_replications(&self) -> u32 {
        let plan = &self.base.params().plan;
        plan.service_curve.replications.unwrap_or(plan.replications)
    }

    /// Reserve replicas (failure reserve and warm idle) beside every fleet.
    pub fn reserve_replicas(&self) -> u32 {
        let reserve = &self.base.params().plan.reserve;
        reserve.failure_reserve_replicas + reserve.warm_idle_replicas
    }

    /// The case for `candidate` with `multipliers` (built once; price does
    /// not change the simulated system, so cases differing only in price
    /// share their runs).
    pub fn case(
        &mut self,
        candidate: usize,
        multipliers: Multipliers,
        label: &str,
    ) -> Result<usize, Halt> {
        if let Some(i) =
            self.state.cases.iter().position(|c| {
                c.candidate == candidate && c.multipliers.same_system_as(&multipliers)
            })
        {
            return Ok(i);
        }
        let params = multipliers.apply(&self.candidates[candidate].params);
        let scenario = Scenario::try_from(params).map_err(|error| PlanError::InvalidCase {
            case: label.to_string(),
            error,
        })?;
        self.state.cases.push(Case {
            label: label.to_string(),
            candidate,
            multipliers,
            scenario,
            queue: None,
        });
        Ok(self.state.cases.len() - 1)
    }

    /// The candidate `case` runs on.
    pub fn candidate_of(&self, case: usize) -> &ResolvedCandidate {
        &self.candidates[self.state.cases[case].candidate]
    }

    /// Where the plan stands, `run_fraction` into its current simulation.
    pub fn progress(&self, run_fraction: f64) -> PlanProgress {
        let done = self.state.simulations as f64 + run_fraction;
        let estimated = self.estimated.max(self.state.simulations + 1);
        PlanProgress {
            phase: self.phase.clone(),
            simulations_done: self.state.simulations,
            simulations_estimated: estimated,
            fraction: (done / estimated as f64).clamp(0.0, 1.0),
            run_fraction,
        }
    }

    /// The error a public entry point reports for `halt` (a pass without a
    /// simulation budget never pauses; if it did, it stopped early).
    pub fn failure(&self, halt: Halt) -> PlanError {
        match halt {
            Halt::Failed(e) => e,
            Halt::Paused => PlanError::Cancelled {
                simulations: self.state.simulations,
            },
        }
    }

    fn report_progress(&mut self, run_fraction: f64) -> Result<(), Halt> {
        let progress = self.progress(run_fraction);
        if (self.on_progress)(&progress) {
            Ok(())
        } else {
            Err(Halt::Failed(PlanError::Cancelled {
                simulations: self.state.simulations,
            }))
        }
    }

    /// Runs (or recalls) replication `replication` of `case` on `replicas`.
    pub fn run(
        &mut self,
        case: usize,
        replicas: u32,
        replication: u32,
    ) -> Result<&RunSummary, Halt> {
        let key = (case, replicas, replication);
        if !self.state.runs.contains_key(&key) {
            let summary = self.simulate(case, replicas, replication)?;
            self.state.runs.insert(key, summary);
        }
        Ok(&self.state.runs[&key])
    }

    fn simulate(
        &mut self,
        case: usize,
        replicas: u32,
        replication: u32,
    ) -> Result<RunSummary, Halt> {
        match &mut self.run_budget {
            Some(0) => return Err(Halt::Paused),
            Some(left) => *left -= 1,
            None => {}
        }
        let label = self.state.cases[case].label.clone();
        let seed = self.base.params().run.seed.wrapping_add(replication as u64);
        let scenario = self.state.cases[case]
            .scenario
            .with_replicas_and_seed(replicas, seed)
            .map_err(|error| PlanError::InvalidCase {
                case: label.clone(),
                error,
            })?;
        let run_options = RunOptions {
            max_requests: self.options.max_requests_per_run,
            max_events: self.options.max_events_per_run,
            max_bytes: self.options.max_bytes_per_run,
            keep_records: self.keep_records,
            ..RunOptions::default()
        };
        let run_error = |error| PlanError::Run {
            case: format!("{label}, {replicas} replicas, seed {seed}"),
            error,
        };
        let mut simulation = Simulation::new(&scenario, &run_options).map_err(run_error)?;
        self.report_progress(0.0)?;
        loop {
            let progress = simulation
                .advance(self.options.progress_every_requests.max(1))
                .map_err(run_error)?;
            if progress.done {
                break;
            }
            self.report_progress(progress.fraction)?;
        }
        let report = Report::build(simulation.finish().map_err(run_error)?);
        self.state.simulations += 1;
        self.state.simulated_requests += report.engine.requests;
        Ok(RunSummary::of(&report, &self.checks))
    }

    /// Evaluates `case` on `replicas` with replications 0..count, running
    /// those not yet run.
    pub fn evaluate(&mut self, case: usize, replicas: u32, count: u32) -> Result<Evaluation, Halt> {
        for r in 0..count {
            self.run(case, replicas, r)?;
        }
        Ok(evaluate(
            &self.checks,
            &self.runs(case, replicas, count),
            self.base.params().plan.decision,
        ))
    }

    /// The runs so far among replications 0..count of `case` on `replicas`.
    pub fn runs(&self, case: usize, replicas: u32, count: u32) -> Vec<&RunSummary> {
        (0..count)
            .filter_map(|r| self.state.runs.get(&(case, replicas, r)))
            .collect()
    }

    /// The cost basis of `case`, its prices multiplied by `price_factor`.
    pub fn basis_at_price(&self, case: usize, price_factor: f64) -> CostBasis {
        let candidate = self.candidate_of(case);
        // The candidate's own GPU price, scaled like every case's prices.
        let pricing = PricingParams {
            usd_per_gpu_hour: candidate.usd_per_gpu_hour,
            ..self.base.params().plan.pricing.clone()
        }
        .scaled(price_factor);
        CostBasis {
            model: self.base.params().model.name.clone(),
            hardware: candidate.params.hardware.name.clone(),
            gpus_per_replica: candidate.params.replica.gpus_per_replica,
            usd_per_gpu_hour: pricing.usd_per_gpu_hour,
            pricing_model: candidate.pricing_model,
            fixed_usd_per_month: pricing.fixed_usd_per_month,
            price_date: pricing.price_date.clone(),
            provider_region: pricing.provider_region.clone(),
            success_criterion: cost::success_criterion(self.base.params()),
        }
    }

    /// The cost basis of `case` at its own price.
    pub fn basis(&self, case: usize) -> CostBasis {
        self.basis_at_price(case, self.state.cases[case].multipliers.price)
    }

    /// Cost of `case` on `replicas` steady replicas plus the reserve, at
    /// its own price, from replications 0..count (which must have run).
    pub fn cost_summary(&self, case: usize, replicas: u32, count: u32) -> CostSummary {
        cost::summarize(
            self.basis(case),
            &self.runs(case, replicas, count),
            replicas,
            self.reserve_replicas(),
        )
    }

    /// Each class's P(miss) and percentiles over replications 0..count of
    /// `case` on `replicas` (which must have run). A percentile of a class
    /// without requests counts as no delay.
    pub fn class_intervals(&self, case: usize, replicas: u32, count: u32) -> Vec<ClassIntervals> {
        let runs = self.runs(case, replicas, count);
        let interval = |f: &dyn Fn(&RunSummary) -> f64| {
            let (mean, ci95) = mean_ci(&runs.iter().map(|r| f(r)).collect::<Vec<_>>());
            Interval { mean, ci95 }
        };
        self.base
            .params()
            .classes
            .iter()
            .enumerate()
            .map(|(k, class)| ClassIntervals {
                class: class.name.clone(),
                p_miss: interval(&|r| r.classes[k].p_miss),
                sojourn_p50_s: interval(&|r| no_data_is_zero(r.classes[k].sojourn.p50)),
                sojourn_p99_s: interval(&|r| no_data_is_zero(r.classes[k].sojourn.p99)),
                ttft_p99_s: interval(&|r| no_data_is_zero(r.classes[k].ttft.p99)),
            })
            .collect()
    }
}

/// A percentile of a class without requests is NaN in a report: no delay.
fn no_data_is_zero(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x }
}

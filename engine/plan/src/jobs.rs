//! The plan's simulations as independent jobs: what a pass asks for, what a
//! thread or a Web Worker runs, and what it sends back.
//!
//! A [`PlanJob`] is one simulation (a configuration under a case, on a
//! number of replicas, with one seed); [`PlanJob::run`] turns it into a
//! [`JobOutput`]. Both serialise to JSON, so the page can hand jobs to a
//! pool of Web Workers; natively [`run_batch`] runs a batch on rayon's
//! threads. A job's output depends only on the job, never on which worker
//! ran it or when.

use serde::{Deserialize, Serialize};

use crate::PlanError;
use crate::evaluate::{CheckSpec, RunAggregates};
use crate::model::scenario::Scenario;
use crate::params::ScenarioParams;
use crate::report::Report;
use crate::sim::{RunOptions, Simulation};

/// Which run: a case of the plan, a fleet size and a replication (seed + r).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RunKey {
    pub case: usize,
    pub replicas: u32,
    pub replication: u32,
}

/// One simulation the plan needs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlanJob {
    key: RunKey,
    /// "base (H100 SXM x1, priority), 3 replicas, seed 2", for messages.
    label: String,
    /// The stage of the plan that asked for it ("exploration", "service
    /// curve", ...), for a profile of where the plan's simulations go.
    #[serde(default)]
    stage: String,
    /// The scenario to simulate (its replicas and seed set).
    params: ScenarioParams,
    options: RunOptions,
    checks: Vec<CheckSpec>,
    progress_every_requests: u32,
    /// The validated scenario, when the job was made in this process.
    #[serde(skip)]
    scenario: Option<Scenario>,
}

/// What a job sends back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobOutput {
    key: RunKey,
    summary: RunAggregates,
}

impl JobOutput {
    pub fn key(&self) -> RunKey {
        self.key
    }

    /// The requests the run simulated.
    pub fn requests(&self) -> u64 {
        self.summary.requests
    }

    pub fn into_parts(self) -> (RunKey, RunAggregates) {
        (self.key, self.summary)
    }
}

impl PlanJob {
    pub fn new(
        key: RunKey,
        label: String,
        stage: &str,
        scenario: Scenario,
        options: RunOptions,
        checks: Vec<CheckSpec>,
        progress_every_requests: u32,
    ) -> PlanJob {
        PlanJob {
            key,
            label,
            stage: stage.to_string(),
            params: scenario.params().clone(),
            options,
            checks,
            progress_every_requests,
            scenario: Some(scenario),
        }
    }

    pub fn key(&self) -> RunKey {
        self.key
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// The stage of the plan that asked for this run (see
    /// `sojourn plan --profile`).
    pub fn stage(&self) -> &str {
        &self.stage
    }

    /// Runs the simulation, calling `on_progress` with the fraction done
    /// every `progress_every_requests` arrivals; returning `false` stops it
    /// with [`PlanError::Cancelled`].
    pub fn run(&self, on_progress: &mut dyn FnMut(f64) -> bool) -> Result<JobOutput, PlanError> {
        let invalid = |error| PlanError::InvalidCase {
            case: self.label.clone(),
            error,
        };
        let validated;
        let scenario = match &self.scenario {
            Some(s) => s,
            None => {
                validated = Scenario::try_from(self.params.clone()).map_err(invalid)?;
                &validated
            }
        };
        let run_error = |error| PlanError::Run {
            case: self.label.clone(),
            error,
        };
        let mut simulation = Simulation::new(scenario, &self.options).map_err(run_error)?;
        loop {
            let progress = simulation
                .advance(self.progress_every_requests.max(1))
                .map_err(run_error)?;
            if progress.done {
                break;
            }
            if !on_progress(progress.fraction) {
                return Err(PlanError::Cancelled { simulations: 0 });
            }
        }
        let report = Report::build(simulation.finish().map_err(run_error)?);
        Ok(JobOutput {
            key: self.key,
            summary: RunAggregates::of(&report, &self.checks),
        })
    }
}

/// Runs a batch of jobs on up to `threads` threads (natively, with the
/// `parallel` feature; one thread otherwise), outputs in the jobs' order.
/// `on_done` is called on the calling thread after each job with one thread,
/// after the whole batch with several; returning `false` stops the batch.
pub fn run_batch(
    jobs: &[PlanJob],
    threads: usize,
    on_progress: &mut dyn FnMut(usize, f64) -> bool,
) -> Result<Vec<JobOutput>, PlanError> {
    #[cfg(feature = "parallel")]
    if threads > 1 && jobs.len() > 1 {
        use rayon::prelude::*;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| PlanError::Threads(e.to_string()))?;
        let out: Result<Vec<JobOutput>, PlanError> =
            pool.install(|| jobs.par_iter().map(|j| j.run(&mut |_| true)).collect());
        if !on_progress(jobs.len(), 0.0) {
            return Err(PlanError::Cancelled { simulations: 0 });
        }
        return out;
    }
    let _ = threads;
    let mut out = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        out.push(job.run(&mut |f| on_progress(i, f))?);
        if !on_progress(i + 1, 0.0) {
            return Err(PlanError::Cancelled { simulations: 0 });
        }
    }
    Ok(out)
}

/// The number of threads `threads` asks for: itself, or with 0 every core
/// the machine offers (one without the `parallel` feature).
pub fn resolve_threads(threads: u32) -> usize {
    if cfg!(feature = "parallel") {
        if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads as usize
        }
    } else {
        1
    }
}

//! The page's jobs as a state machine (`JobController`), driven natively
//! by a pool of pretend workers that run each request with the engine:
//! the single run first, the plan beside it and shown after it, answers
//! about older jobs ignored, failures, cancels and re-costs.

use sojourn_app::job::{
    Case, Command, JobController, JobRequest, PlanStatus, RunStatus, Stage, WorkerMessage,
    plan_options,
};
use sojourn_engine::{PlanOptions, Scenario, ScenarioParams, plan};

use super::{case_summary, small_plan_params};

/// Workers that run each request in one piece, with the engine, when told.
struct Pool {
    busy: Vec<Option<JobRequest>>,
}

impl Pool {
    fn new(workers: usize) -> Pool {
        Pool {
            busy: vec![None; workers],
        }
    }

    fn idle(&self) -> Vec<usize> {
        (0..self.busy.len())
            .filter(|&w| self.busy[w].is_none())
            .collect()
    }

    fn carry_out(&mut self, commands: Vec<Command>) {
        for command in commands {
            match command {
                Command::Post { worker, request } => {
                    assert!(self.busy[worker].is_none(), "worker {worker} is busy");
                    self.busy[worker] = Some(request);
                }
                Command::StopAll => self.busy.iter_mut().for_each(|slot| *slot = None),
                Command::StopPlan => {
                    for slot in &mut self.busy {
                        if slot.as_ref().is_some_and(|r| r.stage() == Stage::Plan) {
                            *slot = None;
                        }
                    }
                }
            }
        }
    }

    /// The workers running a request of `stage`.
    fn running(&self, stage: Stage) -> Vec<usize> {
        (0..self.busy.len())
            .filter(|&w| self.busy[w].as_ref().is_some_and(|r| r.stage() == stage))
            .collect()
    }

    /// Worker `worker` runs its request and answers, freed (as the page's
    /// pool frees it) before its last message is heard.
    fn answer(&mut self, worker: usize, jobs: &mut JobController) {
        let Some(request) = self.busy[worker].clone() else {
            return;
        };
        let messages = match request {
            JobRequest::Simulate { id, params, .. } => {
                let mut messages: Vec<WorkerMessage> = Case::ALL
                    .into_iter()
                    .map(|case| WorkerMessage::Simulated {
                        id,
                        case,
                        result: Box::new(case_summary(&params, case)),
                    })
                    .collect();
                messages.push(WorkerMessage::Finished { id });
                messages
            }
            JobRequest::PlanJob { id, job } => vec![WorkerMessage::JobDone {
                id,
                output: Box::new(job.run(&mut |_| true).expect("runs")),
            }],
            JobRequest::Fit { .. } => panic!("the page's pool fits nothing"),
        };
        for message in messages {
            if message.ends_request() {
                self.busy[worker] = None;
            }
            let commands = jobs.on_message(message, self.idle());
            self.carry_out(commands);
        }
    }

    /// Answers every plan request until none is running.
    fn answer_plan(&mut self, jobs: &mut JobController) {
        while let Some(&worker) = self.running(Stage::Plan).first() {
            self.answer(worker, jobs);
        }
    }
}

/// Starts a job for `params` on `pool`, as `AppState::start` does.
fn start(jobs: &mut JobController, pool: &mut Pool, params: &ScenarioParams) {
    let recosting = jobs.can_recost(params);
    let scenario = Scenario::try_from(params.clone()).expect("valid");
    jobs.begin(params.clone(), scenario, recosting);
    // Reviving the pool stops whatever runs.
    pool.carry_out(vec![Command::StopAll]);
    let commands = jobs.launch(recosting, pool.idle());
    pool.carry_out(commands);
}

fn plan_json(params: &ScenarioParams) -> String {
    let scenario = Scenario::try_from(params.clone()).expect("valid");
    let options = PlanOptions {
        threads: 1,
        ..plan_options()
    };
    serde_json::to_string(&plan(&scenario, &options).expect("plans")).expect("serialises")
}

/// The single run starts first on the first idle worker and the plan on
/// the others; the plan, complete, waits for the single run to end, then
/// shows the engine's own plan, and the status says done.
#[test]
fn the_plan_is_shown_once_the_single_run_has_ended_and_is_the_engines() {
    let params = small_plan_params();
    let mut jobs = JobController::new();
    let mut pool = Pool::new(3);
    start(&mut jobs, &mut pool, &params);
    assert!(matches!(
        pool.busy[0],
        Some(JobRequest::Simulate { id: 1, .. })
    ));
    assert_eq!(pool.running(Stage::Plan), [1, 2]);
    assert_eq!(jobs.shown().plan, PlanStatus::Running);
    pool.answer_plan(&mut jobs);
    assert_eq!(
        jobs.shown().plan,
        PlanStatus::Running,
        "a complete plan waits for the single run"
    );
    assert!(jobs.shown().run.is_running());
    pool.answer(0, &mut jobs);
    pool.answer_plan(&mut jobs);
    let shown = jobs.shown();
    assert_eq!(shown.run, RunStatus::Done);
    let results = shown.results.as_ref().expect("results");
    assert_eq!(results.params, params);
    assert_eq!(results.cases.len(), 2, "the best and worst cases");
    let PlanStatus::Done {
        params: planned,
        plan,
    } = &shown.plan
    else {
        panic!("a plan: {:?}", shown.plan);
    };
    assert_eq!(**planned, params);
    assert_eq!(
        serde_json::to_string(plan).expect("serialises"),
        plan_json(&params)
    );
    assert_eq!(shown.provisional, None);
    assert!(shown.plan_simulated.0 > 0, "the plan's own simulations");
}

/// Cancel stops every worker; answers about the cancelled job are then
/// ignored, and an edit turns "cancelled" into "updating".
#[test]
fn after_a_cancel_the_old_jobs_answers_are_ignored() {
    let params = small_plan_params();
    let mut jobs = JobController::new();
    let mut pool = Pool::new(2);
    start(&mut jobs, &mut pool, &params);
    let commands = jobs.cancel();
    assert!(matches!(commands.as_slice(), [Command::StopAll]));
    assert_eq!(jobs.shown().run, RunStatus::Cancelled);
    assert_eq!(jobs.shown().plan, PlanStatus::NotRun);
    let touched = jobs.take_touched();
    assert!(touched.run && touched.plan);
    let late = WorkerMessage::Simulated {
        id: 1,
        case: Case::Base,
        result: Box::new(case_summary(&params, Case::Base)),
    };
    assert!(jobs.on_message(late, vec![0, 1]).is_empty());
    assert_eq!(jobs.shown().results, None);
    assert_eq!(jobs.take_touched(), Default::default(), "nothing redrawn");
    jobs.edited();
    assert_eq!(jobs.shown().run, RunStatus::Idle);
}

/// A failed single run stops the whole job; a failed plan stops the plan
/// only, and its message names fields in the form's words.
#[test]
fn a_failed_run_stops_the_job_and_a_failed_plan_only_the_plan() {
    let params = small_plan_params();
    let mut jobs = JobController::new();
    let mut pool = Pool::new(2);
    start(&mut jobs, &mut pool, &params);
    let failed = WorkerMessage::Failed {
        id: 1,
        stage: Stage::Plan,
        message: "lower classes[0].batches_per_hour".to_string(),
    };
    let commands = jobs.on_message(failed, vec![]);
    assert!(matches!(commands.as_slice(), [Command::StopPlan]));
    assert_eq!(
        jobs.shown().plan,
        PlanStatus::Failed(
            "lower \u{201c}Class \"nightly-batch\", batch arrivals\u{201d}".to_string()
        )
    );
    assert!(jobs.shown().run.is_running(), "the single run goes on");

    start(&mut jobs, &mut pool, &params);
    let failed = WorkerMessage::Failed {
        id: 2,
        stage: Stage::Simulate,
        message: "out of memory".to_string(),
    };
    let commands = jobs.on_message(failed, vec![]);
    assert!(matches!(commands.as_slice(), [Command::StopAll]));
    assert_eq!(
        jobs.shown().run,
        RunStatus::Failed("out of memory".to_string())
    );
    assert_eq!(
        jobs.shown().plan,
        PlanStatus::NotRun,
        "the plan stops with the job"
    );
}

/// Without a worker the job fails at once, saying so.
#[test]
fn a_job_without_a_worker_fails_saying_so() {
    let params = small_plan_params();
    let mut jobs = JobController::new();
    let scenario = Scenario::try_from(params.clone()).expect("valid");
    jobs.begin(params, scenario, false);
    let commands = jobs.launch(false, Vec::new());
    assert!(matches!(commands.as_slice(), [Command::StopAll]));
    assert_eq!(
        jobs.shown().run,
        RunStatus::Failed("no simulation worker could start".to_string())
    );
}

/// After a price-only edit the next job simulates nothing: the last
/// results are re-costed and the plan re-made from the last plan's runs.
#[test]
fn a_price_edit_recosts_the_last_results_without_simulating() {
    let params = small_plan_params();
    let mut jobs = JobController::new();
    let mut pool = Pool::new(2);
    assert!(!jobs.can_recost(&params), "nothing to re-cost yet");
    start(&mut jobs, &mut pool, &params);
    pool.answer(0, &mut jobs);
    pool.answer_plan(&mut jobs);
    assert_eq!(jobs.shown().run, RunStatus::Done);
    let mut dearer = params.clone();
    dearer.plan.pricing.usd_per_gpu_hour = Some(9.0);
    let mut bigger = params.clone();
    bigger.cluster.replicas += 1;
    assert!(!jobs.can_recost(&bigger), "a fleet edit simulates again");
    assert!(jobs.can_recost(&dearer));
    start(&mut jobs, &mut pool, &dearer);
    assert!(jobs.shown().recosted);
    assert!(
        pool.running(Stage::Simulate).is_empty(),
        "a re-cost simulates nothing"
    );
    pool.answer_plan(&mut jobs);
    let shown = jobs.shown();
    assert_eq!(shown.run, RunStatus::Done);
    let results = shown.results.as_ref().expect("results");
    assert_eq!(results.params, dearer);
    assert_eq!(
        results.base.cost,
        case_summary(&dearer, Case::Base).cost,
        "the base case costed at the new price"
    );
    assert!(matches!(&shown.plan, PlanStatus::Done { params, .. } if **params == dearer));
}

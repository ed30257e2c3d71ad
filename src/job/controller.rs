//! The page's jobs as a plain state machine, without Leptos or the
//! browser: [`JobController`] takes the page's events (start a job, cancel
//! it, a worker's message) and updates what the page shows of the job
//! ([`Shown`]: the run's status, the results, the plan), returning the
//! [`Command`]s for the pool of workers. `AppState` owns one and mirrors
//! what it shows into signals; tests drive it natively.
//!
//! A job is the single run (the configured fleet, then its best and worst
//! cases), which starts first on one idle worker, and the plan, whose
//! simulations go to the other idle workers, and to that one too once the
//! single run is done. The plan's decisions are made here ([`PlanDispatch`]);
//! its result is shown once the single run's are.

use std::collections::BTreeMap;

use sojourn_engine::{
    PlanResult, PlanSession, RunSummary, Scenario, ScenarioParams, same_but_prices,
};

use super::{Case, JobRequest, PlanDispatch, PlanNext, Stage, WorkerMessage, plan_label, recost};
use crate::words;

/// Where the current job is.
#[derive(Clone, Debug, PartialEq)]
pub enum RunStatus {
    Idle,
    Running {
        stage: Stage,
        fraction: f64,
        label: String,
    },
    Done,
    Cancelled,
    Failed(String),
}

impl RunStatus {
    pub fn is_running(&self) -> bool {
        matches!(self, RunStatus::Running { .. })
    }
}

/// The simulated results of one job.
#[derive(Clone, Debug, PartialEq)]
pub struct Results {
    /// The scenario they are for.
    pub params: ScenarioParams,
    pub base: RunSummary,
    /// The best and worst cases on the configured fleet, as they arrive.
    pub cases: BTreeMap<Case, RunSummary>,
}

/// The planner's result, or where it is.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanStatus {
    NotRun,
    Running,
    Done {
        params: Box<ScenarioParams>,
        plan: Box<PlanResult>,
    },
    Failed(String),
}

/// What the page shows of its jobs.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    pub run: RunStatus,
    pub results: Option<Results>,
    pub plan: PlanStatus,
    /// The current plan's search decided while its cases, service curve
    /// and sensitivity still run (the engine's `PlanSession::provisional`),
    /// shown until the plan is complete.
    pub provisional: Option<Box<PlanResult>>,
    /// The current job re-costed the last simulations at new prices rather
    /// than simulating.
    pub recosted: bool,
    /// Simulations the current job's plan has run itself (not taken from
    /// the last plan's runs), and which runs a re-cost needed that the last
    /// plan never made: the engine's count.
    pub plan_simulated: (u64, Option<String>),
}

/// Which parts of [`Shown`] the events since the last
/// [`JobController::take_touched`] wrote (the page redraws those).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    pub run: bool,
    pub results: bool,
    pub plan: bool,
    pub provisional: bool,
    pub recosted: bool,
    pub plan_simulated: bool,
}

/// What the pool of workers is to do, in order.
#[derive(Clone, Debug)]
pub enum Command {
    /// Send `request` to idle worker `worker`.
    Post { worker: usize, request: JobRequest },
    /// Stop every request in flight.
    StopAll,
    /// Stop the plan's requests in flight.
    StopPlan,
}

/// The page's jobs: the current one, its plan, and the last plan's runs.
pub struct JobController {
    /// Increases with every job and every cancel; answers about older jobs
    /// are ignored.
    current_job: u64,
    /// The scenario of the current job.
    job_params: Option<ScenarioParams>,
    /// Whether the current job's single run has ended.
    single_run_done: bool,
    /// The current job's plan until its result is shown (or it fails).
    planner: Option<PlanDispatch>,
    /// The last plan's session once it has ended, whose runs a plan after
    /// a price edit reuses.
    previous_plan: Option<PlanSession>,
    shown: Shown,
    touched: Touched,
}

impl Default for JobController {
    fn default() -> Self {
        JobController::new()
    }
}

impl JobController {
    pub fn new() -> JobController {
        JobController {
            current_job: 0,
            job_params: None,
            single_run_done: false,
            planner: None,
            previous_plan: None,
            shown: Shown {
                run: RunStatus::Idle,
                results: None,
                plan: PlanStatus::NotRun,
                provisional: None,
                recosted: false,
                plan_simulated: (0, None),
            },
            touched: Touched::default(),
        }
    }

    /// What the page shows.
    pub fn shown(&self) -> &Shown {
        &self.shown
    }

    /// Which parts of [`JobController::shown`] changed since the last call.
    pub fn take_touched(&mut self) -> Touched {
        std::mem::take(&mut self.touched)
    }

    /// The scenario of the current job.
    pub fn job_params(&self) -> Option<&ScenarioParams> {
        self.job_params.as_ref()
    }

    /// Whether the last job's single run is complete and `params`, a
    /// runnable scenario, differs from its scenario in prices alone: then
    /// its results are re-costed rather than simulated again.
    pub fn can_recost(&self, params: &ScenarioParams) -> bool {
        let Some(previous) = &self.job_params else {
            return false;
        };
        self.single_run_done && self.recost_fits(params, previous)
    }

    /// Whether the results shown are the last job's and `params` differs
    /// from its scenario in prices alone.
    fn recost_fits(&self, params: &ScenarioParams, previous: &ScenarioParams) -> bool {
        self.shown
            .results
            .as_ref()
            .is_some_and(|r| r.params == *previous)
            && same_but_prices(params, previous)
    }

    /// Whether a job has run to its end, so the next may re-cost it.
    pub fn single_run_done(&self) -> bool {
        self.single_run_done
    }

    /// The first half of a new job for `params` (valid: `scenario`),
    /// superseding the job in flight: its id, its plan (reusing the last
    /// plan's runs) and what the page shows while it starts. The pool is
    /// revived next, then [`JobController::launch`] hands out the work.
    pub fn begin(&mut self, params: ScenarioParams, scenario: Scenario, recosting: bool) {
        self.current_job += 1;
        self.job_params = Some(params);
        let previous = self.take_plan_session();
        self.planner = Some(PlanDispatch::reusing(scenario, previous));
        self.shown.recosted = recosting;
        self.touched.recosted = true;
        self.shown.plan_simulated = (0, None);
        self.touched.plan_simulated = true;
        self.shown.provisional = None;
        self.touched.provisional = true;
        if !matches!(self.shown.plan, PlanStatus::Done { .. }) {
            self.shown.plan = PlanStatus::Running;
        }
        self.touched.plan = true;
    }

    /// The second half of a new job, once the pool is revived (`idle`: its
    /// idle workers, in order): after a price-only edit the last results
    /// re-costed and the plan re-made from the last plan's runs; else the
    /// single run on the first idle worker and the plan on the others.
    pub fn launch(&mut self, recosting: bool, mut idle: Vec<usize>) -> Vec<Command> {
        let mut commands = Vec::new();
        if recosting {
            self.recost_results();
            self.dispatch_plan(idle, &mut commands);
            self.show_plan_progress();
            return commands;
        }
        self.single_run_done = false;
        self.set_run(RunStatus::Running {
            stage: Stage::Simulate,
            fraction: 0.0,
            label: "Starting the simulation".to_string(),
        });
        if idle.is_empty() {
            self.fail_run(
                "no simulation worker could start".to_string(),
                &mut commands,
            );
            return commands;
        }
        let first = idle.remove(0);
        let Some(params) = self.job_params.clone() else {
            return commands;
        };
        commands.push(Command::Post {
            worker: first,
            request: JobRequest::Simulate {
                id: self.current_job,
                params: Box::new(params),
                cases: true,
            },
        });
        self.dispatch_plan(idle, &mut commands);
        commands
    }

    /// Stops the job in flight, keeping its plan's runs for the next.
    pub fn cancel(&mut self) -> Vec<Command> {
        self.current_job += 1;
        self.previous_plan = self.take_plan_session();
        self.set_run(RunStatus::Cancelled);
        self.set_provisional(None);
        self.not_running_plan();
        vec![Command::StopAll]
    }

    /// An edit supersedes a cancelled or failed run: what it brings is on
    /// its way ("updating" from now, not "press Run").
    pub fn edited(&mut self) {
        if matches!(self.shown.run, RunStatus::Cancelled | RunStatus::Failed(_)) {
            self.set_run(RunStatus::Idle);
        }
    }

    /// A worker's message (`idle`: the workers idle now, in order).
    pub fn on_message(&mut self, message: WorkerMessage, idle: Vec<usize>) -> Vec<Command> {
        let mut commands = Vec::new();
        let current = self.current_job;
        if message.job_id().is_some_and(|id| id != current && id != 0) {
            return commands;
        }
        match message {
            WorkerMessage::Ready => {}
            WorkerMessage::Progress {
                stage,
                fraction,
                label,
                ..
            } => self.set_run(RunStatus::Running {
                stage,
                fraction,
                label,
            }),
            WorkerMessage::Simulated { case, result, .. } => {
                match case {
                    Case::Base => {
                        self.shown.results = Some(Results {
                            params: self.current_params(),
                            base: *result,
                            cases: BTreeMap::new(),
                        })
                    }
                    other => {
                        if let Some(results) = &mut self.shown.results {
                            results.cases.insert(other, *result);
                        }
                    }
                }
                self.touched.results = true;
            }
            WorkerMessage::JobProgress { key, fraction, .. } => {
                if let Some(planner) = &mut self.planner {
                    planner.job_progress(key, fraction);
                }
                self.show_plan_progress();
            }
            WorkerMessage::JobDone { output, .. } => {
                if let Some(planner) = &mut self.planner {
                    planner.submit(*output);
                }
                self.dispatch_plan(idle, &mut commands);
                self.show_plan_progress();
            }
            // The engine's advice names fields by their paths: in the
            // form's words.
            WorkerMessage::Failed {
                stage: Stage::Plan,
                message,
                ..
            } => {
                let message = self.in_words(&message);
                self.fail_plan(message, &mut commands);
            }
            WorkerMessage::Failed { message, .. } => {
                let message = self.in_words(&message);
                self.fail_run(message, &mut commands);
            }
            // Fits run in the calibration panel's own worker.
            WorkerMessage::Fitted { .. } => {}
            WorkerMessage::Finished { .. } => {
                self.single_run_done = true;
                self.dispatch_plan(idle, &mut commands);
                self.show_plan_progress();
            }
        }
        commands
    }

    fn set_run(&mut self, run: RunStatus) {
        self.shown.run = run;
        self.touched.run = true;
    }

    fn set_provisional(&mut self, provisional: Option<Box<PlanResult>>) {
        self.shown.provisional = provisional;
        self.touched.provisional = true;
    }

    /// A plan still running when its job stops is shown as not run.
    fn not_running_plan(&mut self) {
        if self.shown.plan == PlanStatus::Running {
            self.shown.plan = PlanStatus::NotRun;
        }
        self.touched.plan = true;
    }

    /// The last plan's session (running or ended), for the next plan to
    /// reuse its runs.
    fn take_plan_session(&mut self) -> Option<PlanSession> {
        let running = self.planner.take().map(PlanDispatch::into_session);
        let ended = self.previous_plan.take();
        running.or(ended)
    }

    fn current_params(&self) -> ScenarioParams {
        self.job_params
            .clone()
            .unwrap_or_else(ScenarioParams::overnight_batch)
    }

    /// The single run's results and cases re-costed at the prices of the
    /// job's scenario, which differs from theirs in prices alone.
    fn recost_results(&mut self) {
        let params = self.current_params();
        if let Some(results) = &mut self.shown.results {
            recost(&mut results.base, Case::Base, &params);
            for (case, summary) in &mut results.cases {
                recost(summary, *case, &params);
            }
            results.params = params;
        }
        self.touched.results = true;
    }

    /// Hands the plan's next simulations to the `idle` workers, and shows
    /// the plan once it is complete and the single run is done.
    fn dispatch_plan(&mut self, idle: Vec<usize>, commands: &mut Vec<Command>) {
        let id = self.current_job;
        for worker in idle {
            let next = self.planner.as_mut().map(PlanDispatch::next_job);
            match next {
                Some(Ok(PlanNext::Run(job))) => commands.push(Command::Post {
                    worker,
                    request: JobRequest::PlanJob { id, job },
                }),
                Some(Ok(PlanNext::Done(plan))) if self.single_run_done => {
                    self.count_plan_simulations();
                    self.previous_plan = self.take_plan_session();
                    self.set_provisional(None);
                    self.shown.plan = PlanStatus::Done {
                        params: Box::new(self.current_params()),
                        plan,
                    };
                    self.touched.plan = true;
                    return;
                }
                Some(Ok(PlanNext::Wait | PlanNext::Done(_))) | None => return,
                Some(Err(error)) => {
                    let message = words::plan_error_message(&error, self.job_params.as_ref());
                    self.fail_plan(message, commands);
                    return;
                }
            }
        }
    }

    /// Once the single run is done, the status line follows the plan, and
    /// says done when the plan has ended too.
    fn show_plan_progress(&mut self) {
        if !self.single_run_done {
            return;
        }
        if self.shown.provisional.is_none() {
            let provisional = self
                .planner
                .as_mut()
                .and_then(PlanDispatch::provisional)
                .map(|plan| Box::new(plan.clone()));
            if provisional.is_some() {
                self.set_provisional(provisional);
            }
        }
        self.count_plan_simulations();
        let progress = self.planner.as_ref().map(PlanDispatch::progress);
        self.set_run(match progress {
            Some(progress) => RunStatus::Running {
                stage: Stage::Plan,
                fraction: progress.fraction,
                label: plan_label(&progress),
            },
            None => RunStatus::Done,
        });
    }

    /// Copies the engine's count of the plan's own simulations to what the
    /// page shows, when it has changed.
    fn count_plan_simulations(&mut self) {
        let count = self.planner.as_ref().map(PlanDispatch::simulated);
        if let Some(count) = count
            && self.shown.plan_simulated != count
        {
            self.shown.plan_simulated = count;
            self.touched.plan_simulated = true;
        }
    }

    /// A worker's message with its field paths in the form's words, for
    /// the scenario of the current job.
    fn in_words(&self, message: &str) -> String {
        words::paths_in_words(message, self.job_params.as_ref())
    }

    /// The plan failed: its other simulations stop; the single run goes on.
    fn fail_plan(&mut self, message: String, commands: &mut Vec<Command>) {
        self.planner = None;
        self.set_provisional(None);
        commands.push(Command::StopPlan);
        self.shown.plan = PlanStatus::Failed(message);
        self.touched.plan = true;
        self.show_plan_progress();
    }

    /// The single run failed (or a worker did): the whole job stops, as
    /// the plan would fail the same way.
    fn fail_run(&mut self, message: String, commands: &mut Vec<Command>) {
        self.planner = None;
        self.set_provisional(None);
        commands.push(Command::StopAll);
        self.set_run(RunStatus::Failed(message));
        self.not_running_plan();
    }
}

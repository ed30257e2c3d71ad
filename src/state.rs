//! The page's state: the scenario (mirrored to the address bar and
//! localStorage), its validation, the job in flight and its results.
//!
//! The scenario in the URL is the source of truth: it is read once at load,
//! written back (with `history.replaceState`) after every edit, and every
//! result on the page derives from it through a job. A job is the single
//! run (the configured fleet, then its best and worst cases), which starts
//! first on one worker of the pool, and the plan, whose simulations go to
//! the other workers, and to that one too once the single run is done. The
//! plan's decisions are made here, on the page's thread ([`PlanDispatch`]);
//! its result is shown once the single run's are.

use std::collections::BTreeMap;
use std::time::Duration;

use leptos::prelude::*;
use sojourn_engine::{
    PlanResult, PlanSession, RunSummary, Scenario, ScenarioError, ScenarioParams,
};

use crate::browser;
use crate::job::{
    Case, JobRequest, PlanDispatch, PlanNext, Stage, WorkerMessage, plan_label, recost,
};
use crate::link;
use crate::words;
use crate::worker_client::{self, WorkerPool};

mod currency;
mod messages;

pub use currency::changed_panels;

/// How long the page waits after the last edit before it runs \[ms\].
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// A message above the inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    pub error: bool,
    pub text: String,
    /// Further lines (e.g. each validation problem of an imported file).
    pub details: Vec<String>,
    /// The scenario a reset or an example replaced, offered back by an
    /// Undo button.
    pub undo: Option<Box<ScenarioParams>>,
}

impl Notice {
    pub fn info(text: impl Into<String>) -> Notice {
        Notice {
            error: false,
            text: text.into(),
            details: Vec::new(),
            undo: None,
        }
    }

    pub fn error(text: impl Into<String>) -> Notice {
        Notice {
            error: true,
            text: text.into(),
            details: Vec::new(),
            undo: None,
        }
    }
}

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

/// Every signal of the page, cheap to copy into components.
#[derive(Clone, Copy)]
pub struct AppState {
    pub params: RwSignal<ScenarioParams>,
    /// The engine's verdict on `params` (`None`: valid).
    pub validation: Memo<Option<ScenarioError>>,
    /// Boxes whose text is not a number: (field path, message).
    pub unparsed: RwSignal<BTreeMap<String, String>>,
    pub notice: RwSignal<Option<Notice>>,
    pub run: RwSignal<RunStatus>,
    pub results: RwSignal<Option<Results>>,
    pub plan: RwSignal<PlanStatus>,
    /// The current plan's search decided while its cases, service curve
    /// and sensitivity still run (the engine's `PlanSession::provisional`),
    /// shown until the plan is complete.
    pub provisional: RwSignal<Option<Box<PlanResult>>>,
    /// Run (after a pause) whenever the scenario changes.
    pub auto_run: RwSignal<bool>,
    pub dark: RwSignal<bool>,
    pub window_width: RwSignal<f64>,
    /// The current job re-costed the last simulations at new prices rather
    /// than simulating.
    pub recosted: RwSignal<bool>,
    /// Simulations the current job's plan has run itself (not taken from
    /// the last plan's runs), and which runs a re-cost needed that the last
    /// plan never made: the engine's count, for the note and its
    /// `data-simulated` attribute.
    pub plan_simulated: RwSignal<(u64, Option<String>)>,
    current_job: StoredValue<u64>,
    /// The scenario of the current job.
    job_params: StoredValue<Option<ScenarioParams>>,
    /// Whether the current job's single run has ended.
    single_run_done: StoredValue<bool>,
    /// The current job's plan until its result is shown (or it fails).
    planner: StoredValue<Option<PlanDispatch>, LocalStorage>,
    /// The last plan's session once it has ended, whose runs a plan after
    /// a price edit reuses.
    previous_plan: StoredValue<Option<PlanSession>, LocalStorage>,
    pool: StoredValue<Option<WorkerPool>, LocalStorage>,
    debounce: StoredValue<Option<TimeoutHandle>, LocalStorage>,
}

/// The scenario to start with: the link's, else the last one used, else the
/// default; plus a notice when a link could not be read.
pub fn initial_params() -> (ScenarioParams, Option<Notice>) {
    if let Some(value) = link::find_in_query(&browser::query()) {
        return match link::decode(&value) {
            Ok(params) => (params, None),
            Err(error) => (
                ScenarioParams::overnight_batch(),
                Some(Notice::error(format!(
                    "This link could not be opened: {error}. The default scenario is shown instead."
                ))),
            ),
        };
    }
    match browser::load_stored(browser::STORAGE_KEY).map(|value| link::decode_from_storage(&value))
    {
        None => (ScenarioParams::overnight_batch(), None),
        Some(Ok(params)) => (params, None),
        Some(Err(error)) => (
            ScenarioParams::overnight_batch(),
            Some(Notice::error(format!(
                "The scenario kept in this browser could not be read: {error}. The default scenario is shown instead."
            ))),
        ),
    }
}

/// What the page says when a scenario cannot travel in a link (and whether
/// the browser kept it), or nothing when it can.
pub fn link_notice(link_ok: bool, stored: bool) -> Option<Notice> {
    if link_ok {
        return None;
    }
    Some(Notice::error(format!(
        "This scenario is too large for a link (its JSON is over {} MiB): use Export to share it as a file. {}",
        link::MAX_SCENARIO_BYTES / (1024 * 1024),
        if stored {
            "It is kept in this browser and reopens on reload."
        } else {
            "This browser could not keep it either: export it now, or it is lost on reload."
        }
    )))
}

impl AppState {
    pub fn new() -> AppState {
        let (params, notice) = initial_params();
        let params = RwSignal::new(params);
        let validation = Memo::new(move |_| Scenario::try_from(params.get()).err());
        let state = AppState {
            params,
            validation,
            unparsed: RwSignal::new(BTreeMap::new()),
            notice: RwSignal::new(notice),
            run: RwSignal::new(RunStatus::Idle),
            results: RwSignal::new(None),
            plan: RwSignal::new(PlanStatus::NotRun),
            provisional: RwSignal::new(None),
            auto_run: RwSignal::new(true),
            dark: RwSignal::new(browser::prefers_dark()),
            window_width: RwSignal::new(1200.0),
            recosted: RwSignal::new(false),
            plan_simulated: RwSignal::new((0, None)),
            current_job: StoredValue::new(0),
            job_params: StoredValue::new(None),
            single_run_done: StoredValue::new(false),
            planner: StoredValue::new_local(None),
            previous_plan: StoredValue::new_local(None),
            pool: StoredValue::new_local(None),
            debounce: StoredValue::new_local(None),
        };
        let dark = state.dark;
        browser::watch_color_scheme(move |is_dark| dark.set(is_dark));
        let width = state.window_width;
        browser::watch_width(move |w| width.set(w));
        let pool = worker_client::page_pool();
        pool.listen(move |message| state.on_message(message));
        state.pool.set_value(Some(pool));
        state.sync_url();
        // The first run starts now, while the page is built, not once it
        // has been laid out.
        state.start();
        state.run_on_change();
        state
    }

    /// Writes the scenario to the address bar and localStorage on every change.
    fn sync_url(self) {
        Effect::new(move |_| {
            let (value, stored) = self
                .params
                .with(|p| (link::encode(p), link::encode_for_storage(p)));
            // A scenario too large for a link leaves none in the address bar
            // (an older one there would reopen the wrong scenario); reload
            // then opens the stored one.
            let query = browser::query();
            browser::replace_query(&link::set_in_query(&query, value.as_deref().ok()));
            let kept = stored.is_ok_and(|stored| browser::store(browser::STORAGE_KEY, &stored));
            if let Some(notice) = link_notice(value.is_ok(), kept) {
                self.notice.set(Some(notice));
            }
        });
    }

    /// Runs the scenario, after a pause, after every edit (the first run
    /// is [`AppState::new`]'s).
    fn run_on_change(self) {
        Effect::new(move |previous: Option<()>| {
            self.params.track();
            self.unparsed.track();
            let auto = self.auto_run.get();
            self.debounce.update_value(|handle| {
                if let Some(handle) = handle.take() {
                    handle.clear();
                }
            });
            if previous.is_none() {
                return;
            }
            // A price edit re-costs at once, even when runs wait for Run:
            // it simulates nothing.
            if !auto && !self.can_recost() {
                return;
            }
            // An edit supersedes a cancelled or failed run: what it brings
            // is on its way ("updating" from now, not "press Run").
            if self
                .run
                .with_untracked(|r| matches!(r, RunStatus::Cancelled | RunStatus::Failed(_)))
            {
                self.run.set(RunStatus::Idle);
            }
            let handle = set_timeout_with_handle(move || self.start(), DEBOUNCE).ok();
            self.debounce.set_value(handle);
        });
    }

    /// Starts a job for the current scenario if it is valid, superseding
    /// the job in flight: after a price-only edit it re-costs the last
    /// results and re-plans from the last plan's runs, else it simulates.
    pub fn start(self) {
        if self.blocked_reason().is_some() {
            return;
        }
        let params = self.params.get_untracked();
        let Ok(scenario) = Scenario::try_from(params.clone()) else {
            return;
        };
        let recosting = self.can_recost();
        let id = self.current_job.get_value() + 1;
        self.current_job.set_value(id);
        self.job_params.set_value(Some(params.clone()));
        let previous = self.take_plan_session();
        self.planner
            .set_value(Some(PlanDispatch::reusing(scenario, previous)));
        self.recosted.set(recosting);
        self.plan_simulated.set((0, None));
        self.provisional.set(None);
        self.plan.update(|plan| {
            if !matches!(plan, PlanStatus::Done { .. }) {
                *plan = PlanStatus::Running;
            }
        });
        let Some(pool) = self.pool.get_value() else {
            return;
        };
        pool.revive();
        if recosting {
            self.recost_results(&params);
            self.dispatch_plan();
            self.show_plan_progress();
            return;
        }
        self.single_run_done.set_value(false);
        self.run.set(RunStatus::Running {
            stage: Stage::Simulate,
            fraction: 0.0,
            label: "Starting the simulation".to_string(),
        });
        // The single run first, on one worker; the plan on the others.
        let Some(&first) = pool.idle().first() else {
            self.fail_run("no simulation worker could start".to_string());
            return;
        };
        let single_run = JobRequest::Simulate {
            id,
            params: Box::new(params),
            cases: true,
        };
        pool.post(first, &single_run);
        self.dispatch_plan();
    }

    /// The last plan's session (running or ended), for the next plan to
    /// reuse its runs.
    fn take_plan_session(self) -> Option<PlanSession> {
        let running = self
            .planner
            .try_update_value(Option::take)
            .flatten()
            .map(PlanDispatch::into_session);
        let ended = self.previous_plan.try_update_value(Option::take).flatten();
        running.or(ended)
    }

    /// The single run's results and cases re-costed at the prices of
    /// `params`, which differs from theirs in prices alone.
    fn recost_results(self, params: &ScenarioParams) {
        self.results.update(|results| {
            if let Some(results) = results {
                recost(&mut results.base, Case::Base, params);
                for (case, summary) in &mut results.cases {
                    recost(summary, *case, params);
                }
                results.params = params.clone();
            }
        });
    }

    /// Stops the job in flight.
    pub fn cancel(self) {
        self.debounce.update_value(|handle| {
            if let Some(handle) = handle.take() {
                handle.clear();
            }
        });
        self.current_job.update_value(|id| *id += 1);
        let runs = self.take_plan_session();
        self.previous_plan.set_value(runs);
        if let Some(pool) = self.pool.get_value() {
            pool.stop_all();
        }
        self.run.set(RunStatus::Cancelled);
        self.provisional.set(None);
        self.plan.update(|plan| {
            if *plan == PlanStatus::Running {
                *plan = PlanStatus::NotRun;
            }
        });
    }

    /// Replaces the whole scenario (import, reset, preset).
    pub fn load(self, params: ScenarioParams) {
        self.unparsed.set(BTreeMap::new());
        self.params.set(params);
    }

    /// Replaces the whole scenario and says so with `text`, offering the
    /// one it replaced back (reset, examples): one click must not lose an
    /// afternoon's edits.
    pub fn load_undoable(self, params: ScenarioParams, text: impl Into<String>) {
        let previous = self.params.get_untracked();
        let undo = (previous != params).then(|| Box::new(previous));
        self.load(params);
        self.notice.set(Some(Notice {
            undo,
            ..Notice::info(text)
        }));
    }

    fn on_message(self, message: WorkerMessage) {
        let current = self.current_job.get_value();
        if message.job_id().is_some_and(|id| id != current && id != 0) {
            return;
        }
        match message {
            WorkerMessage::Ready => {}
            WorkerMessage::Progress {
                stage,
                fraction,
                label,
                ..
            } => self.run.set(RunStatus::Running {
                stage,
                fraction,
                label,
            }),
            WorkerMessage::Simulated { case, result, .. } => match case {
                Case::Base => self.results.set(Some(Results {
                    params: self.current_params(),
                    base: *result,
                    cases: BTreeMap::new(),
                })),
                other => self.results.update(|results| {
                    if let Some(results) = results {
                        results.cases.insert(other, *result);
                    }
                }),
            },
            WorkerMessage::JobProgress { key, fraction, .. } => {
                self.planner.update_value(|planner| {
                    if let Some(planner) = planner {
                        planner.job_progress(key, fraction);
                    }
                });
                self.show_plan_progress();
            }
            WorkerMessage::JobDone { output, .. } => {
                self.planner.update_value(|planner| {
                    if let Some(planner) = planner {
                        planner.submit(*output);
                    }
                });
                self.dispatch_plan();
                self.show_plan_progress();
            }
            // The engine's advice names fields by their paths: in the
            // form's words.
            WorkerMessage::Failed {
                stage: Stage::Plan,
                message,
                ..
            } => self.fail_plan(self.in_words(&message)),
            WorkerMessage::Failed { message, .. } => self.fail_run(self.in_words(&message)),
            // Fits run in the calibration panel's own worker.
            WorkerMessage::Fitted { .. } => {}
            WorkerMessage::Finished { .. } => {
                self.single_run_done.set_value(true);
                self.dispatch_plan();
                self.show_plan_progress();
            }
        }
    }

    fn current_params(self) -> ScenarioParams {
        self.job_params
            .get_value()
            .unwrap_or_else(ScenarioParams::overnight_batch)
    }

    /// Hands the plan's next simulations to the idle workers, and shows the
    /// plan once it is complete and the single run is done.
    fn dispatch_plan(self) {
        let Some(pool) = self.pool.get_value() else {
            return;
        };
        let id = self.current_job.get_value();
        for worker in pool.idle() {
            let next = self
                .planner
                .try_update_value(|planner| planner.as_mut().map(PlanDispatch::next_job))
                .flatten();
            match next {
                Some(Ok(PlanNext::Run(job))) => pool.post(worker, &JobRequest::PlanJob { id, job }),
                Some(Ok(PlanNext::Done(plan))) if self.single_run_done.get_value() => {
                    self.count_plan_simulations();
                    let ended = self.take_plan_session();
                    self.previous_plan.set_value(ended);
                    self.provisional.set(None);
                    self.plan.set(PlanStatus::Done {
                        params: Box::new(self.current_params()),
                        plan,
                    });
                    return;
                }
                Some(Ok(PlanNext::Wait | PlanNext::Done(_))) | None => return,
                Some(Err(error)) => {
                    let params = self.params.get_untracked();
                    self.fail_plan(words::plan_error_message(&error, Some(&params)));
                    return;
                }
            }
        }
    }

    /// Once the single run is done, the status line follows the plan, and
    /// says done when the plan has ended too.
    fn show_plan_progress(self) {
        if !self.single_run_done.get_value() {
            return;
        }
        if self.provisional.with_untracked(Option::is_none) {
            let provisional = self
                .planner
                .try_update_value(|planner| {
                    planner
                        .as_mut()
                        .and_then(PlanDispatch::provisional)
                        .map(|plan| Box::new(plan.clone()))
                })
                .flatten();
            if provisional.is_some() {
                self.provisional.set(provisional);
            }
        }
        self.count_plan_simulations();
        let progress = self
            .planner
            .with_value(|planner| planner.as_ref().map(PlanDispatch::progress));
        self.run.set(match progress {
            Some(progress) => RunStatus::Running {
                stage: Stage::Plan,
                fraction: progress.fraction,
                label: plan_label(&progress),
            },
            None => RunStatus::Done,
        });
    }

    /// A worker's message with its field paths in the form's words, for
    /// the scenario of the current job.
    fn in_words(self, message: &str) -> String {
        self.job_params
            .with_value(|params| words::paths_in_words(message, params.as_ref()))
    }

    /// The plan failed: its other simulations stop; the single run goes on.
    fn fail_plan(self, message: String) {
        self.planner.set_value(None);
        self.provisional.set(None);
        if let Some(pool) = self.pool.get_value() {
            pool.stop_plan();
        }
        self.plan.set(PlanStatus::Failed(message));
        self.show_plan_progress();
    }

    /// The single run failed (or a worker did): the whole job stops, as
    /// the plan would fail the same way.
    fn fail_run(self, message: String) {
        self.planner.set_value(None);
        self.provisional.set(None);
        if let Some(pool) = self.pool.get_value() {
            pool.stop_all();
        }
        self.run.set(RunStatus::Failed(message));
        self.plan.update(|plan| {
            if *plan == PlanStatus::Running {
                *plan = PlanStatus::NotRun;
            }
        });
    }
}

impl Default for AppState {
    fn default() -> Self {
        AppState::new()
    }
}

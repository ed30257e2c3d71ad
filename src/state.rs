//! The page's state: the scenario (mirrored to the address bar and
//! localStorage), its validation, the job in flight and its results.
//!
//! The scenario in the URL is the source of truth: it is read once at load,
//! written back (with `history.replaceState`) after every edit, and every
//! result on the page derives from it through a job. The jobs themselves
//! are a plain state machine, [`JobController`] (`job/controller.rs`,
//! tested natively); `AppState` feeds it the page's events and the
//! workers' messages, mirrors what it shows into signals and carries out
//! its commands on the pool of workers.

use std::collections::BTreeMap;
use std::time::Duration;

use leptos::prelude::*;
use sojourn_engine::{PlanResult, Scenario, ScenarioError, ScenarioParams};

use crate::browser;
use crate::job::{Command, JobController, WorkerMessage};
pub use crate::job::{PlanStatus, Results, RunStatus};
use crate::link;
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
    /// The jobs' state machine, whose `shown` the signals above mirror.
    jobs: StoredValue<JobController, LocalStorage>,
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
            jobs: StoredValue::new_local(JobController::new()),
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
            self.drive(|jobs| {
                jobs.edited();
                Vec::new()
            });
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
        self.drive(|jobs| {
            jobs.begin(params, scenario, recosting);
            Vec::new()
        });
        let Some(pool) = self.pool.get_value() else {
            return;
        };
        pool.revive();
        let idle = pool.idle();
        self.drive(|jobs| jobs.launch(recosting, idle));
    }

    /// Stops the job in flight.
    pub fn cancel(self) {
        self.debounce.update_value(|handle| {
            if let Some(handle) = handle.take() {
                handle.clear();
            }
        });
        self.drive(JobController::cancel);
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
        let idle = self
            .pool
            .with_value(|pool| pool.as_ref().map(WorkerPool::idle))
            .unwrap_or_default();
        self.drive(|jobs| jobs.on_message(message, idle));
    }

    /// Gives `event` to the jobs' state machine, mirrors what it changed
    /// into the signals, then carries out its commands on the pool (after
    /// the machine is released: stopping a worker can report at once).
    fn drive(self, event: impl FnOnce(&mut JobController) -> Vec<Command>) {
        let Some((commands, mirror)) = self.jobs.try_update_value(|jobs| {
            let commands = event(jobs);
            (commands, Mirror::of(jobs))
        }) else {
            return;
        };
        mirror.show(self);
        let Some(pool) = self.pool.get_value() else {
            return;
        };
        for command in commands {
            match command {
                Command::Post { worker, request } => pool.post(worker, &request),
                Command::StopAll => pool.stop_all(),
                Command::StopPlan => pool.stop_plan(),
            }
        }
    }
}

/// What the jobs' state machine changed of what the page shows.
struct Mirror {
    run: Option<RunStatus>,
    results: Option<Option<Results>>,
    plan: Option<PlanStatus>,
    provisional: Option<Option<Box<PlanResult>>>,
    recosted: Option<bool>,
    plan_simulated: Option<(u64, Option<String>)>,
}

impl Mirror {
    fn of(jobs: &mut JobController) -> Mirror {
        let touched = jobs.take_touched();
        let shown = jobs.shown();
        Mirror {
            run: touched.run.then(|| shown.run.clone()),
            results: touched.results.then(|| shown.results.clone()),
            plan: touched.plan.then(|| shown.plan.clone()),
            provisional: touched.provisional.then(|| shown.provisional.clone()),
            recosted: touched.recosted.then_some(shown.recosted),
            plan_simulated: touched.plan_simulated.then(|| shown.plan_simulated.clone()),
        }
    }

    fn show(self, state: AppState) {
        if let Some(recosted) = self.recosted {
            state.recosted.set(recosted);
        }
        if let Some(count) = self.plan_simulated {
            state.plan_simulated.set(count);
        }
        if let Some(provisional) = self.provisional {
            state.provisional.set(provisional);
        }
        if let Some(plan) = self.plan {
            state.plan.set(plan);
        }
        if let Some(results) = self.results {
            state.results.set(results);
        }
        if let Some(run) = self.run {
            state.run.set(run);
        }
    }
}

impl Default for AppState {
    fn default() -> Self {
        AppState::new()
    }
}

//! The Web Worker's side (`src/bin/worker.rs` calls [`start`]): receives a
//! [`JobRequest`] as JSON, runs it with the engine and posts
//! [`WorkerMessage`]s back. Simulations advance in chunks, with a progress
//! message and a turn of the event loop between chunks; the planner reports
//! progress through its callback. The page cancels by terminating the worker.

use std::cell::Cell;

use js_sys::Promise;
use sojourn_engine::{Report, RunSummary, Scenario, Simulation, plan_with_progress};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::job::{
    ARRIVALS_PER_CHUNK, Case, JobRequest, Stage, WorkerMessage, plan_options, run_options,
};

/// Least time between two progress messages \[ms\].
const PROGRESS_EVERY_MS: f64 = 100.0;

thread_local! {
    /// The newest job received; an older job still running gives up at its
    /// next chunk.
    static CURRENT_JOB: Cell<u64> = const { Cell::new(0) };
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(message: &WorkerMessage) {
    // A failed post means the page is gone: nothing left to tell.
    let _ = scope().post_message(&JsValue::from_str(&message.to_json()));
}

/// Installs the message handler and tells the page the worker is ready.
pub fn start() {
    console_error_panic_hook::set_once();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(|event: MessageEvent| {
        let Some(text) = event.data().as_string() else {
            return;
        };
        match serde_json::from_str::<JobRequest>(&text) {
            Ok(job) => {
                CURRENT_JOB.with(|current| current.set(job.id));
                spawn_local(run(job));
            }
            Err(error) => post(&WorkerMessage::Failed {
                id: 0,
                stage: Stage::Simulate,
                message: format!("the worker could not read the job: {error}"),
            }),
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post(&WorkerMessage::Ready);
}

/// Lets the event loop run (and deliver newer jobs).
async fn yield_now() {
    let promise = Promise::new(&mut |resolve, _reject| {
        let _ = scope().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
    });
    let _ = JsFuture::from(promise).await;
}

fn superseded(id: u64) -> bool {
    CURRENT_JOB.with(|current| current.get() != id)
}

/// Throttles progress messages to one per [`PROGRESS_EVERY_MS`].
struct Throttle(f64);

impl Throttle {
    fn due(&mut self) -> bool {
        let now = js_sys::Date::now();
        if now - self.0 >= PROGRESS_EVERY_MS {
            self.0 = now;
            true
        } else {
            false
        }
    }
}

async fn run(job: JobRequest) {
    let id = job.id;
    let cases: &[Case] = if job.cases { &Case::ALL } else { &[Case::Base] };
    for (index, case) in cases.iter().enumerate() {
        let stage = if *case == Case::Base {
            Stage::Simulate
        } else {
            Stage::Cases
        };
        let fail = |message: String| {
            post(&WorkerMessage::Failed { id, stage, message });
        };
        let scenario = match Scenario::try_from(case.params(&job.params)) {
            Ok(scenario) => scenario,
            Err(error) => {
                fail(format!(
                    "the {} case is not a valid scenario: {error}",
                    case.label()
                ));
                return;
            }
        };
        let options = run_options();
        let mut simulation = match Simulation::new(&scenario, &options) {
            Ok(simulation) => simulation,
            Err(error) => {
                fail(error.to_string());
                return;
            }
        };
        let mut throttle = Throttle(js_sys::Date::now());
        loop {
            let progress = match simulation.advance(ARRIVALS_PER_CHUNK) {
                Ok(progress) => progress,
                Err(error) => {
                    fail(error.to_string());
                    return;
                }
            };
            if progress.done {
                break;
            }
            if throttle.due() {
                let fraction = match stage {
                    Stage::Cases => ((index - 1) as f64 + progress.fraction) / 2.0,
                    _ => progress.fraction,
                };
                post(&WorkerMessage::Progress {
                    id,
                    stage,
                    fraction,
                    label: format!("Simulating the {} case", case.label()),
                });
            }
            yield_now().await;
            if superseded(id) {
                return;
            }
        }
        match simulation.finish().map(Report::build) {
            Ok(report) => post(&WorkerMessage::Simulated {
                id,
                case: *case,
                result: Box::new(RunSummary::new(report, &scenario)),
            }),
            Err(error) => {
                fail(error.to_string());
                return;
            }
        }
        yield_now().await;
        if superseded(id) {
            return;
        }
    }
    if job.plan {
        plan(id, &job);
    }
    post(&WorkerMessage::Finished { id });
}

/// Runs the planner; it holds the worker until it ends (the page terminates
/// the worker to cancel it).
fn plan(id: u64, job: &JobRequest) {
    let scenario = match Scenario::try_from(job.params.clone()) {
        Ok(scenario) => scenario,
        Err(error) => {
            post(&WorkerMessage::Failed {
                id,
                stage: Stage::Plan,
                message: error.to_string(),
            });
            return;
        }
    };
    let mut throttle = Throttle(js_sys::Date::now());
    let options = plan_options();
    let outcome = plan_with_progress(&scenario, &options, &mut |progress| {
        if throttle.due() {
            post(&WorkerMessage::Progress {
                id,
                stage: Stage::Plan,
                fraction: progress.fraction,
                label: format!(
                    "Planning: {} ({} of about {} simulations)",
                    progress.phase, progress.simulations_done, progress.simulations_estimated
                ),
            });
        }
        true
    });
    match outcome {
        Ok(plan) => post(&WorkerMessage::Planned {
            id,
            plan: Box::new(plan),
        }),
        Err(error) => post(&WorkerMessage::Failed {
            id,
            stage: Stage::Plan,
            message: error.to_string(),
        }),
    }
}

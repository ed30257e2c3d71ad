//! A Web Worker's side (`src/bin/worker.rs` calls [`start`]): receives a
//! [`JobRequest`] as JSON, runs it with the engine and posts
//! [`WorkerMessage`]s back. The page sends a worker a request only when it
//! is idle and stops one by terminating the worker, so a request runs to its
//! end in one piece, posting progress at most every 100 ms.

use sojourn_engine::calibration::{fit_with_progress, parse_measurements};
use sojourn_engine::{PlanJob, Report, RunSummary, Scenario, ScenarioParams, Simulation};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::job::{
    ARRIVALS_PER_CHUNK, Case, JobRequest, Stage, WorkerMessage, fit_progress_label, run_options,
};

/// Least time between two progress messages \[ms\].
const PROGRESS_EVERY_MS: f64 = 100.0;

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
        match JobRequest::from_json(&text) {
            Ok(JobRequest::Simulate { id, params, cases }) => simulate(id, &params, cases),
            Ok(JobRequest::PlanJob { id, job }) => run_plan_job(id, &job),
            Ok(JobRequest::Fit { id, params, text }) => run_fit(id, &params, &text),
            Err(error) => post(&WorkerMessage::Failed {
                id: 0,
                stage: Stage::Simulate,
                message: format!("the worker could not read the request: {error}"),
            }),
        }
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post(&WorkerMessage::Ready);
}

/// Throttles progress messages to one per [`PROGRESS_EVERY_MS`].
struct Throttle(f64);

impl Throttle {
    fn new() -> Throttle {
        Throttle(js_sys::Date::now())
    }

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

/// The single run: the base case and, with `cases`, the best and worst
/// cases on the configured fleet; then `finished`.
fn simulate(id: u64, params: &ScenarioParams, cases: bool) {
    let cases: &[Case] = if cases { &Case::ALL } else { &[Case::Base] };
    for (index, case) in cases.iter().enumerate() {
        let stage = if *case == Case::Base {
            Stage::Simulate
        } else {
            Stage::Cases
        };
        let outcome = simulate_case(params, *case, &mut |fraction| {
            // The best and worst cases share their stage's progress.
            let fraction = match stage {
                Stage::Cases => ((index - 1) as f64 + fraction) / 2.0,
                _ => fraction,
            };
            post(&WorkerMessage::Progress {
                id,
                stage,
                fraction,
                label: format!("Simulating the {} case", case.label()),
            });
        });
        match outcome {
            Ok(result) => post(&WorkerMessage::Simulated {
                id,
                case: *case,
                result: Box::new(result),
            }),
            Err(message) => {
                post(&WorkerMessage::Failed { id, stage, message });
                return;
            }
        }
    }
    post(&WorkerMessage::Finished { id });
}

/// Simulates one case, calling `on_progress` with the fraction done at
/// most every [`PROGRESS_EVERY_MS`].
fn simulate_case(
    params: &ScenarioParams,
    case: Case,
    on_progress: &mut dyn FnMut(f64),
) -> Result<RunSummary, String> {
    let case_params = case.params(params);
    let scenario = Scenario::try_from(case_params.clone()).map_err(|error| {
        format!(
            "the {} case is not a valid scenario: {}",
            case.label(),
            crate::words::scenario_message(&error, Some(&case_params))
        )
    })?;
    let mut simulation =
        Simulation::new(&scenario, &run_options()).map_err(|error| error.to_string())?;
    let mut throttle = Throttle::new();
    loop {
        let progress = simulation
            .advance(ARRIVALS_PER_CHUNK)
            .map_err(|error| error.to_string())?;
        if progress.done {
            break;
        }
        if throttle.due() {
            on_progress(progress.fraction);
        }
    }
    let report = simulation
        .finish()
        .map(Report::build)
        .map_err(|error| error.to_string())?;
    Ok(RunSummary::new(report, &scenario))
}

/// Runs one simulation of a plan and posts its output.
fn run_plan_job(id: u64, job: &PlanJob) {
    let key = job.key();
    let mut throttle = Throttle::new();
    let outcome = job.run(&mut |fraction| {
        if throttle.due() {
            post(&WorkerMessage::JobProgress { id, key, fraction });
        }
        true
    });
    post(&match outcome {
        Ok(output) => WorkerMessage::JobDone {
            id,
            output: Box::new(output),
        },
        Err(error) => WorkerMessage::Failed {
            id,
            stage: Stage::Plan,
            message: error.to_string(),
        },
    });
}

/// Fits the step-time model of `params` to the measurements in `text` and
/// posts the result, and meanwhile its progress: the replays of the
/// benchmark points made of the most it may make. It runs to its end in
/// one piece (the page stops it by terminating the worker); the engine
/// bounds its work (`fit`'s budget).
fn run_fit(id: u64, params: &ScenarioParams, text: &str) {
    let mut throttle = Throttle::new();
    let mut progress = |done: u32, most: u32| {
        if throttle.due() {
            post(&WorkerMessage::Progress {
                id,
                stage: Stage::Fit,
                fraction: f64::from(done) / f64::from(most.max(1)),
                label: fit_progress_label(done, most),
            });
        }
    };
    let outcome = parse_measurements(text)
        .map_err(|error| error.to_string())
        .and_then(|measurements| fit_with_progress(params, &measurements, &mut progress));
    post(&match outcome {
        Ok(result) => WorkerMessage::Fitted {
            id,
            result: Box::new(result),
        },
        Err(message) => WorkerMessage::Failed {
            id,
            stage: Stage::Fit,
            message,
        },
    });
}

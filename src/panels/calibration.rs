//! "Fit to my measurements", in the serving panel's step-time section: the
//! box takes what `sojourn calibrate` takes (read by `form/measurements.rs`).
//! Measured step times are fitted on the page's thread (a step-time fit
//! evaluates a formula, bounded to about a second); a measured grid of
//! either shape is checked to use as the step-time model. Benchmark points
//! (CSV or JSON, or vLLM's benchmark output, which the engine reads as
//! points) are fitted by replaying each in simulations: in the panel's own
//! Web Worker, started on the first such fit, so the page stays responsive
//! and Cancel stops it (terminating the worker). Points over a fit's work
//! budget (`check_benchmark_budget`, microseconds) are refused before the
//! worker starts, naming their rows or keys, as `sojourn calibrate` does.
//! "Apply" writes the result into the scenario, so the link carries it,
//! with the record of the fit.

use leptos::prelude::*;
use leptos::task::spawn_local;
use sojourn_engine::ScenarioParams;
use sojourn_engine::calibration::{BENCHMARK_EVALUATIONS, points_table};

use crate::browser;
use crate::form::{Next, Prepared, fit_record, prepare};
use crate::job::{JobRequest, WorkerMessage};
use crate::panels::results::TableView;
use crate::state::AppState;
use crate::worker_client::WorkerPool;

/// Column names the box accepts, shown under it.
const FORMATS: &str = "Step times: prefill_tokens, decode_seqs, kv_tokens, step_s \
    (optional prefill_context). Benchmark points: mode (offline or concurrency), \
    requests, clients, input_tokens, output_tokens and any of output_tokens_per_s, \
    mean_itl_ms, mean_ttft_ms; or the output of vLLM's `vllm bench serve` (its \
    printed result or its --save-result JSON), fitted in a background worker. \
    A table: batch_tokens, kv_tokens, step_s or batch_size, context_tokens, step_s. \
    One header row, one row per measurement, separated by commas, semicolons or \
    tabs as the header is (decimal commas with semicolons or tabs); or JSON as \
    `sojourn calibrate` reads it.";

/// The fit of benchmark points in the panel's worker: its pool of one,
/// started on the first such fit, and the id of the fit it runs.
#[derive(Clone, Copy)]
struct FitWorker {
    pool: StoredValue<Option<WorkerPool>, LocalStorage>,
    current: StoredValue<u64>,
    /// The points being fitted, while a fit runs.
    running: RwSignal<Option<usize>>,
    /// How far the running fit has got: its fraction of the most replays
    /// it may make, and that in words (none before the first replay).
    progress: RwSignal<Option<(f64, String)>>,
    outcome: RwSignal<Option<Result<Prepared, String>>>,
}

impl FitWorker {
    fn new(outcome: RwSignal<Option<Result<Prepared, String>>>) -> FitWorker {
        let worker = FitWorker {
            pool: StoredValue::new_local(None),
            current: StoredValue::new(0),
            running: RwSignal::new(None),
            progress: RwSignal::new(None),
            outcome,
        };
        on_cleanup(move || {
            if let Some(pool) = worker.pool.try_get_value().flatten() {
                pool.terminate();
            }
        });
        worker
    }

    /// Fits `points` benchmark points in `text` to `params` in the worker,
    /// stopping a fit it runs.
    fn start(self, params: ScenarioParams, text: String, points: usize) {
        let pool = self.pool.get_value().unwrap_or_else(|| {
            let pool = WorkerPool::start(1);
            pool.listen(move |message| self.on_message(message));
            self.pool.set_value(Some(pool.clone()));
            pool
        });
        // A fresh start: stops the fit running, restarts a failed worker.
        pool.revive();
        let id = self.current.get_value() + 1;
        self.current.set_value(id);
        self.running.set(Some(points));
        self.progress.set(None);
        pool.post(
            0,
            &JobRequest::Fit {
                id,
                params: Box::new(params),
                text,
            },
        );
    }

    /// Stops a fit running, if any, and forgets it (a new input replaces it).
    fn cancel_quietly(self) {
        if self.running.get_untracked().is_some() {
            if let Some(pool) = self.pool.get_value() {
                pool.stop_all();
            }
            self.current.update_value(|id| *id += 1);
            self.running.set(None);
        }
    }

    fn cancel(self) {
        if let Some(pool) = self.pool.get_value() {
            pool.stop_all();
        }
        self.current.update_value(|id| *id += 1);
        self.running.set(None);
        self.outcome.set(Some(Err(
            "Cancelled: the fit was stopped before it finished; nothing was applied.".into(),
        )));
    }

    fn on_message(self, message: WorkerMessage) {
        let current = self.current.get_value();
        match message {
            WorkerMessage::Progress {
                id,
                fraction,
                label,
                ..
            } if id == current && self.running.get_untracked().is_some() => {
                self.progress.set(Some((fraction, label)));
            }
            WorkerMessage::Fitted { id, result } if id == current => {
                self.running.set(None);
                self.outcome.set(Some(Ok(Prepared::Fit(result))));
            }
            // A worker that cannot start reports id 0.
            WorkerMessage::Failed { id, message, .. }
                if (id == current || id == 0) && self.running.get_untracked().is_some() =>
            {
                self.running.set(None);
                self.outcome.set(Some(Err(message)));
            }
            _ => {}
        }
    }
}

/// The fit area: the box, the file import, the Fit button, the result and
/// Apply; and the record of the fit the scenario already carries.
#[component]
pub fn FitMeasurements(state: AppState) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let outcome: RwSignal<Option<Result<Prepared, String>>> = RwSignal::new(None);
    let file_input = NodeRef::<leptos::html::Input>::new();
    let worker = FitWorker::new(outcome);
    let run = move || {
        let text = text.get_untracked();
        let params = state.params.get_untracked();
        match prepare(&params, &text) {
            Ok(Next::FitInWorker(points)) => {
                outcome.set(None);
                worker.start(params, text, points);
            }
            Ok(Next::Show(prepared)) => {
                worker.cancel_quietly();
                outcome.set(Some(Ok(prepared)));
            }
            Err(message) => {
                worker.cancel_quietly();
                outcome.set(Some(Err(message)));
            }
        }
    };
    let on_file = move |_| {
        let Some(input) = file_input.get() else {
            return;
        };
        spawn_local(async move {
            match browser::read_picked_file(&input).await {
                Some((_, content)) => {
                    input.set_value("");
                    text.set(content);
                    run();
                }
                None => outcome.set(Some(Err("The file could not be read.".into()))),
            }
        });
    };
    let applied = RwSignal::new(false);
    let apply = move |_| {
        if let Some(Ok(prepared)) = outcome.get_untracked() {
            state.params.update(|p| prepared.apply(p));
            outcome.set(None);
            applied.set(true);
        }
    };
    let record = Memo::new(move |_| state.params.with(fit_record));
    // A fit's summary, once shown, and the record of a fit just applied are
    // scrolled to (below the sticky toolbar: `scroll-padding-top`).
    let summary_line = NodeRef::<leptos::html::P>::new();
    let record_line = NodeRef::<leptos::html::P>::new();
    Effect::new(move || {
        if let Some(line) = summary_line.get() {
            line.scroll_into_view();
        }
    });
    Effect::new(move || {
        if let Some(line) = record_line.get()
            && applied.get_untracked()
        {
            applied.set(false);
            line.scroll_into_view();
        }
    });
    view! {
        <div class="fit-area">
            <h3>"Fit to my measurements"</h3>
            {move || {
                record
                    .get()
                    .map(|(line, points)| {
                        view! {
                            <p class="panel-note fit-record" node_ref=record_line>
                                {line}
                            </p>
                            <TableView table=points_table(&points) />
                        }
                    })
            }}
            <label for="fit-measurements">
                "Measured step times, benchmark points, vLLM benchmark output or a table"
            </label>
            <textarea
                id="fit-measurements"
                rows="6"
                style="width: 100%; font-family: monospace"
                placeholder="prefill_tokens,decode_seqs,kv_tokens,step_s"
                prop:value=move || text.get()
                on:input=move |e| text.set(event_target_value(&e))
            ></textarea>
            <p class="panel-note">{FORMATS}</p>
            <input
                id="fit-file"
                class="visually-hidden"
                type="file"
                accept=".csv,.json,text/csv,application/json"
                node_ref=file_input
                on:change=on_file
            />
            <label class="button secondary" for="fit-file">
                "Import measurements"
            </label>
            <button type="button" on:click=move |_| run()>
                "Fit"
            </button>
            {move || {
                worker
                    .running
                    .get()
                    .map(|points| {
                        view! {
                            <p class="fit-running" role="status">
                                {format!(
                                    "Fitting {points} benchmark point{} in a background worker: each is replayed in simulations, up to {BENCHMARK_EVALUATIONS} times (seconds to a minute).",
                                    if points == 1 { "" } else { "s" },
                                )}
                            </p>
                            <FitProgress progress=worker.progress />
                            <button
                                type="button"
                                class="secondary"
                                on:click=move |_| worker.cancel()
                            >
                                "Cancel fit"
                            </button>
                        }
                    })
            }}
            {move || match outcome.get() {
                None => ().into_any(),
                Some(Err(message)) => {
                    view! {
                        <p class="field-error" role="alert">
                            {message}
                        </p>
                    }
                        .into_any()
                }
                Some(Ok(prepared)) => {
                    view! {
                        <p class="fit-summary" node_ref=summary_line>
                            {prepared.summary()}
                        </p>
                        {prepared
                            .tables()
                            .into_iter()
                            .map(|table| view! { <TableView table open=true /> })
                            .collect_view()}
                        <button type="button" on:click=apply>
                            "Apply"
                        </button>
                    }
                        .into_any()
                }
            }}
        </div>
    }
}

/// A running fit's progress bar (indeterminate until the first replay is
/// done) and the replays made, in words.
#[component]
fn FitProgress(progress: RwSignal<Option<(f64, String)>>) -> impl IntoView {
    let fraction = move || progress.with(|p| p.as_ref().map(|(fraction, _)| *fraction));
    let words = move || {
        progress.with(|p| {
            p.as_ref().map_or_else(
                || "Starting the first replay".to_string(),
                |(_, label)| label.clone(),
            )
        })
    };
    view! {
        <div class="fit-progress">
            <progress
                max="1"
                value=fraction
                aria-label="Fit progress"
                aria-valuetext=words
            ></progress>
            <span class="fit-progress-words">{words}</span>
        </div>
    }
}

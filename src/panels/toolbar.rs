//! The bar above everything: Run and Cancel with the progress of the job
//! and what the results are for, the scenario's file and link actions, the
//! shipped examples, and (on narrow screens) jumps between results and
//! inputs. It stays at the top of the screen as the page scrolls.

use leptos::prelude::*;
use leptos::task::spawn_local;
use sojourn_engine::ScenarioParams;

use crate::browser;
use crate::form::{import_scenario, import_trace};
use crate::job::Stage;
use crate::link;
use crate::state::{AppState, Notice, RunStatus};

/// The scenario as a downloadable file name: "overnight-batch-jobs-24-h-sla.json".
pub fn file_stem(name: &str) -> String {
    let mut stem = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            stem.push(c.to_ascii_lowercase());
        } else if !stem.ends_with('-') {
            stem.push('-');
        }
    }
    let stem = stem.trim_matches('-');
    if stem.is_empty() {
        "scenario".to_string()
    } else {
        stem.to_string()
    }
}

/// A scenario shipped in `scenarios/`, built into the page.
#[derive(Clone, Copy, Debug)]
pub struct Example {
    /// Its file in `scenarios/`.
    pub file: &'static str,
    /// What the menu calls it.
    pub title: &'static str,
    pub json: &'static str,
}

/// An [`Example`] of `scenarios/FILE`, its text built into the page.
macro_rules! example {
    ($file:literal, $title:literal) => {
        Example {
            file: $file,
            title: $title,
            json: include_str!(concat!("../../scenarios/", $file)),
        }
    };
}

/// Every scenario in `scenarios/` (their write-ups are in
/// `scenarios/README.md`), the default first.
pub const EXAMPLES: [Example; 6] = [
    example!(
        "overnight-batch.json",
        "Overnight batch beside an API stream (the seeds' case)"
    ),
    example!(
        "interactive-chat.json",
        "Interactive chat: TTFT and TPOT targets, diurnal traffic"
    ),
    example!(
        "long-context-documents.json",
        "Long-context documents: 50k-token prompts, KV-bound"
    ),
    example!(
        "calibration-nim-llama33-70b.json",
        "Calibration: a published NIM benchmark replayed"
    ),
    example!(
        "batch-only-70b.json",
        "Batch only on Llama 3.1 70B, 24 h SLA"
    ),
    example!(
        "chat-unattainable.json",
        "Chat with a p99 target no fleet can meet"
    ),
];

/// The menu of examples: choosing one loads it (undoably) and the menu
/// goes back to its prompt.
#[component]
fn ExampleMenu(state: AppState) -> impl IntoView {
    let on_change = move |event| {
        let select = event_target::<web_sys::HtmlSelectElement>(&event);
        let chosen = select.value().parse::<usize>().ok();
        select.set_value("");
        let Some(example) = chosen.and_then(|i| EXAMPLES.get(i)) else {
            return;
        };
        match import_scenario(example.json) {
            Ok((params, _)) => state.load_undoable(
                params,
                format!(
                    "Opened the example “{}” (its write-up: scenarios/README.md).",
                    example.title
                ),
            ),
            Err(error) => state.notice.set(Some(Notice::error(format!(
                "The example {} could not be opened: {error}",
                example.file
            )))),
        }
    };
    view! {
        // Named by aria-label, not a wrapping label, whose text would hold
        // every option's title (a search for the "Seed" box found "the
        // seeds' case" too).
        <span class="example-menu">
            <select aria-label="Open an example" on:change=on_change>
                <option value="" selected>
                    "Open an example…"
                </option>
                {EXAMPLES
                    .iter()
                    .enumerate()
                    .map(|(i, example)| {
                        view! { <option value=i.to_string()>{example.title}</option> }
                    })
                    .collect_view()}
            </select>
        </span>
    }
}

#[component]
pub fn Toolbar(state: AppState) -> impl IntoView {
    let blocked = Memo::new(move |_| {
        state.params.track();
        state.validation.track();
        state.unparsed.track();
        state.blocked_reason()
    });
    let running = Memo::new(move |_| state.run.with(RunStatus::is_running));
    let status_text = move || match state.run.get() {
        RunStatus::Idle => "Ready.".to_string(),
        RunStatus::Running {
            label, fraction, ..
        } => format!("{label}… {:.0} %", fraction * 100.0),
        RunStatus::Done => "Done.".to_string(),
        RunStatus::Cancelled => "Cancelled.".to_string(),
        RunStatus::Failed(message) => format!("The run failed: {message}"),
    };
    let fraction = move || match state.run.get() {
        RunStatus::Running {
            stage, fraction, ..
        } => {
            // The single run, its best/worst cases and the plan share the
            // bar: 15%, 15%, 70%. The plan runs beside the single run and
            // shows once it is done, from where it has got by then.
            let overall = match stage {
                Stage::Simulate => 0.15 * fraction,
                Stage::Cases => 0.15 + 0.15 * fraction,
                Stage::Plan => 0.3 + 0.7 * fraction,
                // Fits run in the calibration panel's own worker.
                Stage::Fit => fraction,
            };
            overall.clamp(0.0, 1.0)
        }
        _ => 0.0,
    };
    let copy_link = move |_| {
        let value = match state.params.with_untracked(link::encode) {
            Ok(value) => value,
            Err(error) => {
                state.notice.set(Some(Notice::error(format!(
                    "No link can hold this scenario: {error}."
                ))));
                return;
            }
        };
        let address = format!(
            "{}{}",
            browser::page_address(),
            link::replace_in_query(&browser::query(), &value)
        );
        spawn_local(async move {
            let copied = browser::copy_to_clipboard(&address).await;
            state.notice.set(Some(if copied {
                Notice::info(
                    "Link copied. Anyone who opens it sees this scenario and the same numbers.",
                )
            } else {
                Notice {
                    details: vec![address],
                    ..Notice::info("Copy this link (the browser did not allow copying):")
                }
            }));
        });
    };
    let export_json = move |_| {
        let (name, json) = state
            .params
            .with_untracked(|p| (p.name.clone(), AppState::provenance_of(p).scenario_json(p)));
        if let Err(error) = browser::download_text(
            &format!("{}.json", file_stem(&name)),
            "application/json",
            &json,
        ) {
            state.notice.set(Some(Notice::error(format!(
                "The file could not be saved: {error}"
            ))));
        }
    };
    let file_input = NodeRef::<leptos::html::Input>::new();
    let on_file = move |_| {
        read_picked(state, file_input, move |name, text| {
            match import_scenario(&text) {
                Ok((params, problems)) if problems.is_empty() => {
                    state.load(params);
                    state
                        .notice
                        .set(Some(Notice::info(format!("Imported {name}."))));
                }
                Ok((params, problems)) => {
                    state.load(params);
                    let text = format!(
                        "Imported {name}, but the engine reports {} problem(s); fix them to run:",
                        problems.len(),
                    );
                    state.notice.set(Some(Notice {
                        details: problems,
                        ..Notice::error(text)
                    }));
                }
                Err(error) => state.notice.set(Some(Notice::error(format!(
                    "{name} was not imported: {error}"
                )))),
            }
        });
    };
    let trace_input = NodeRef::<leptos::html::Input>::new();
    let on_trace = move |_| {
        read_picked(state, trace_input, move |name, text| {
            match import_trace(&state.params.get_untracked(), &text) {
                Ok((params, summary)) => {
                    state.load_undoable(params, format!("Trace {name}: {summary}"))
                }
                Err(error) => state.notice.set(Some(Notice::error(format!(
                    "{name} was not imported: {error}"
                )))),
            }
        });
    };
    view! {
        // A named section: a landmark, so that every control is in one.
        <section class="toolbar" aria-label="Scenario actions">
            <div class="run-controls">
                <button
                    type="button"
                    class="primary"
                    disabled=move || blocked.with(Option::is_some)
                    aria-describedby="run-reason"
                    on:click=move |_| state.start()
                >
                    "Run"
                </button>
                <button
                    type="button"
                    class="secondary"
                    disabled=move || !running.get()
                    on:click=move |_| state.cancel()
                >
                    "Cancel"
                </button>
                <label class="auto-run">
                    <input
                        type="checkbox"
                        prop:checked=move || state.auto_run.get()
                        on:change=move |e| state.auto_run.set(event_target_checked(&e))
                    />
                    "Run on every change"
                </label>
            </div>
            <div class="status-area">
                <div
                    class="progress"
                    class:active=move || running.get()
                    role="progressbar"
                    aria-label="Progress of the run"
                    aria-valuemin="0"
                    aria-valuemax="100"
                    aria-valuenow=move || format!("{:.0}", fraction() * 100.0)
                >
                    <span
                        class="progress-fill"
                        style:transform=move || format!("scaleX({:.3})", fraction())
                    ></span>
                </div>
                // Cut to the column's width; the whole line on hover.
                <p class="status" role="status" aria-label="Run status" title=status_text>
                    {status_text}
                </p>
                <p id="run-reason" class="run-reason">
                    {move || blocked.get()}
                </p>
                <p
                    class="results-note"
                    role="status"
                    aria-label="What the results are for"
                    data-recosted=move || state.recosted.get().to_string()
                    data-simulated=move || state.plan_simulated.get().0.to_string()
                >
                    {move || state.results_note()}
                </p>
            </div>
            // On narrow screens the results come first and the inputs after
            // them: these jump between the two from anywhere.
            <nav class="jump" aria-label="Page sections">
                <a class="button secondary" href="#results">
                    "Results"
                </a>
                <a class="button secondary" href="#inputs">
                    "Inputs"
                </a>
            </nav>
            <div class="file-actions">
                <button type="button" class="secondary" on:click=copy_link>
                    "Copy link"
                </button>
                <button type="button" class="secondary" on:click=export_json>
                    "Export JSON"
                </button>
                <input
                    id="import-file"
                    class="visually-hidden"
                    type="file"
                    accept="application/json,.json"
                    node_ref=file_input
                    on:change=on_file
                />
                <label class="button secondary" for="import-file">
                    "Import JSON"
                </label>
                <input
                    id="import-trace"
                    class="visually-hidden"
                    type="file"
                    accept="text/csv,.csv"
                    node_ref=trace_input
                    on:change=on_trace
                />
                <label
                    class="button secondary"
                    for="import-trace"
                    title="A CSV of requests (arrival_s, input_tokens, output_tokens, optional class and prefix_hit): its classes replay it exactly, with distributions fitted beside"
                >
                    "Import trace"
                </label>
                <ExampleMenu state />
                <button
                    type="button"
                    class="secondary"
                    on:click=move |_| {
                        state
                            .load_undoable(
                                ScenarioParams::overnight_batch(),
                                "The default scenario is loaded.",
                            );
                    }
                >
                    "Reset to defaults"
                </button>
            </div>
        </section>
    }
}

/// Reads the file picked in `input` and hands its name and text to
/// `then`, clearing the picker so that the same file can be picked again;
/// a file that cannot be read says so.
fn read_picked(
    state: AppState,
    input: NodeRef<leptos::html::Input>,
    then: impl FnOnce(String, String) + 'static,
) {
    let Some(input) = input.get() else {
        return;
    };
    spawn_local(async move {
        let Some((name, text)) = browser::read_picked_file(&input).await else {
            state
                .notice
                .set(Some(Notice::error("The file could not be read.")));
            return;
        };
        input.set_value("");
        then(name, text);
    });
}

/// The notice line (link problems, imports, copied links), dismissible.
#[component]
pub fn NoticeBar(state: AppState) -> impl IntoView {
    move || {
        state.notice.get().map(|notice| {
            let role = if notice.error { "alert" } else { "status" };
            view! {
                <div class="notice" class:error=notice.error role=role>
                    <div>
                        <p>{notice.text.clone()}</p>
                        {(!notice.details.is_empty())
                            .then(|| {
                                view! {
                                    <ul>
                                        {notice
                                            .details
                                            .iter()
                                            .map(|d| {
                                                view! {
                                                    <li>
                                                        <code>{d.clone()}</code>
                                                    </li>
                                                }
                                            })
                                            .collect_view()}
                                    </ul>
                                }
                            })}
                    </div>
                    <div class="notice-actions">
                        {notice
                            .undo
                            .clone()
                            .map(|previous| {
                                view! {
                                    <button
                                        type="button"
                                        class="secondary"
                                        on:click=move |_| {
                                            state.load((*previous).clone());
                                            state
                                                .notice
                                                .set(Some(Notice::info("The previous scenario is back.")));
                                        }
                                    >
                                        "Undo"
                                    </button>
                                }
                            })}
                        <button
                            type="button"
                            class="secondary"
                            aria-label="Dismiss the message"
                            on:click=move |_| state.notice.set(None)
                        >
                            "Dismiss"
                        </button>
                    </div>
                </div>
            }
        })
    }
}

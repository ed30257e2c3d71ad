//! The workload panel: request classes with their arrivals, batch sizes,
//! time-of-day profile, token-length distributions (with a live preview),
//! how the two lengths go together (with a chart of their joint
//! distribution), cache hit rate, priority, deadline and timeout.

use leptos::prelude::*;
use sojourn_engine::{ClassParams, DistParams, LengthsParams, Shape, lengths_from_csv};

use crate::charts::{Theme, histogram_preview, lengths_chart, log_correlation, profile_preview};
use crate::form::{
    LENGTHS_KINDS, SHAPE_KINDS, convert_shape, dist_preview, lengths_kind, lengths_preview,
    load_kind, load_summary, new_class, pairs_csv, set_lengths_kind, shape_get, shape_kind,
    shape_list, shape_list_mut, shape_set, time_of_day_presets,
};
use crate::format::format_number;
use crate::help;
use crate::panels::at::{Item, at};
use crate::panels::fields::{Field, check, fields, list, menu, number, options, text};
use crate::panels::load::LoadEditor;
use crate::panels::{FieldMessage, LazyDetails, ListEditors, Panel, RemoveButton};
use crate::registry::{Which, Words, inputs, shape_fields, shape_lists};
use crate::state::AppState;

#[component]
pub fn WorkloadPanel(state: AppState) -> impl IntoView {
    view! {
        <Panel id="workload" title="Workload">
            <p class="panel-note">{help::BATCH_ARRIVALS}</p>
            <ListEditors
                state
                path="classes"
                len=|p| p.classes.len()
                editor=|state, index| view! { <ClassEditor state index /> }.into_any()
                add=|p| {
                    let class = new_class(p);
                    p.classes.push(class);
                }
                add_label="Add request class"
            />
        </Panel>
    }
}

/// The class at `index`.
pub(crate) fn class_item(index: usize) -> Item<ClassParams> {
    Item::new(
        format!("classes[{index}]"),
        move |p| p.classes.get(index),
        move |p| p.classes.get_mut(index),
    )
}

#[component]
fn ClassEditor(state: AppState, index: usize) -> impl IntoView {
    let name = Memo::new(move |_| {
        state.params.with(|p| {
            p.classes
                .get(index)
                .map(|c| c.name.clone())
                .unwrap_or_default()
        })
    });
    let summary = Memo::new(move |_| {
        state.params.with(|p| {
            p.classes
                .get(index)
                .map(|c| {
                    let sends = match load_summary(c) {
                        s if s.is_empty() => {
                            format!("{} batches/h", format_number(c.batches_per_hour, 4))
                        }
                        s => s,
                    };
                    format!(
                        "{sends}, deadline {}",
                        crate::format::format_duration_s(c.deadline_s)
                    )
                })
                .unwrap_or_default()
        })
    });
    let single = Memo::new(move |_| state.params.with(|p| p.classes.len() <= 1));
    // A table of pairs replaces the two distributions: they are hidden.
    let table = Memo::new(move |_| {
        state
            .params
            .with(|p| p.classes.get(index).map(lengths_kind) == Some("pairs"))
    });
    // Offline and closed-loop classes set their own send times: no rate,
    // batches or hourly profile.
    let follows_rate = Memo::new(move |_| {
        state.params.with(|p| {
            p.classes
                .get(index)
                .is_some_and(|c| matches!(load_kind(c), "open" | "fixed_count"))
        })
    });
    let class = class_item(index);
    let rows = vec![
        text(at!(class, name), &inputs::CLASS_NAME),
        number(at!(class, deadline_s), &inputs::CLASS_DEADLINE_S),
        number(
            at!(class, prefix_cache_hit),
            &inputs::CLASS_PREFIX_CACHE_HIT,
        ),
        number(at!(class, priority), &inputs::CLASS_PRIORITY),
        number(at!(class, timeout_s), &inputs::CLASS_TIMEOUT_S).placeholder("none"),
    ];
    view! {
        <details class="class-editor" open=true>
            <summary>
                <span class="class-name">{move || name.get()}</span>
                <span class="class-summary">{move || summary.get()}</span>
            </summary>
            <div class="grid">{fields(state, rows)}</div>
            <LoadEditor state index />
            <Show when=move || follows_rate.get()>
                <div class="grid">{move || fields(state, vec![rate_field(index)])}</div>
                <DistEditor state index which=Which::BatchSize />
                <TimeOfDay state index />
            </Show>
            <Show when=move || !table.get()>
                <DistEditor state index which=Which::Input />
                <DistEditor state index which=Which::Output />
            </Show>
            <LengthsEditor state index />
            <RemoveButton
                state
                text="Remove class"
                name=Signal::derive(move || format!("Remove class {}", name.get()))
                disabled=single
                remove=move |p| {
                    if p.classes.len() > 1 && index < p.classes.len() {
                        p.classes.remove(index);
                    }
                }
            />
        </details>
    }
}

/// The class's batch arrival rate (open streams and fixed counts).
fn rate_field(index: usize) -> Field {
    let class = class_item(index);
    number(
        at!(class, batches_per_hour),
        &inputs::CLASS_BATCHES_PER_HOUR,
    )
}

/// The distribution `which` of the class at `index`.
fn dist_item(index: usize, which: Which) -> Item<DistParams> {
    Item::new(
        format!("classes[{index}].{}", which.field()),
        move |p| p.classes.get(index).map(|c| which.get(c)),
        move |p| p.classes.get_mut(index).map(|c| which.get_mut(c)),
    )
}

/// The boxes of a distribution's shape: one per number, or one per list.
pub(crate) fn shape_rows(
    dist: &Item<DistParams>,
    shape: &Shape,
    unit: &'static str,
    help: &'static str,
) -> Vec<Field> {
    let numbers = shape_fields(shape).iter().map(|&(field, label)| {
        let at = dist.at(
            field,
            move |d| shape_get(&d.shape, field),
            move |d, v| shape_set(&mut d.shape, field, v),
        );
        number(at, Words::new(label, unit, help))
    });
    let lists = shape_lists(shape)
        .iter()
        .map(|&(field, label, help, in_unit)| {
            let at = dist.at(
                field,
                move |d| shape_list(&d.shape, field),
                move |d, values| {
                    if let Some(list) = shape_list_mut(&mut d.shape, field) {
                        *list = values;
                    }
                },
            );
            list(at, Words::new(label, if in_unit { unit } else { "" }, help))
        });
    numbers.chain(lists).collect()
}

/// A preview's chart (SVG) beside its figures, in a box of CSS class
/// `class`; or why there is none.
fn preview_figure(drawn: Option<Result<(String, String), String>>, class: &'static str) -> AnyView {
    match drawn {
        Some(Ok((svg, stats))) => view! {
            <div class=class>
                <div class="preview-chart" inner_html=svg></div>
                <p class="preview-stats">{stats}</p>
            </div>
        }
        .into_any(),
        Some(Err(reason)) => {
            view! { <p class="preview-stats muted">{format!("No preview: {reason}")}</p> }
                .into_any()
        }
        None => ().into_any(),
    }
}

#[component]
fn DistEditor(state: AppState, index: usize, which: Which) -> impl IntoView {
    let dist = Memo::new(move |_| {
        state
            .params
            .with(|p| p.classes.get(index).map(|c| which.get(c).clone()))
    });
    let kind = Memo::new(move |_| {
        dist.with(|d| {
            d.as_ref()
                .map(|d| shape_kind(&d.shape))
                .unwrap_or("constant")
        })
    });
    let preview = Memo::new(move |_| dist.with(|d| d.as_ref().map(dist_preview)));
    let numbers = move || {
        let probe = dist.with(|d| d.as_ref().map(|d| d.shape.clone()));
        let _ = kind.get();
        let Some(shape) = probe else {
            return ().into_any();
        };
        fields(
            state,
            shape_rows(&dist_item(index, which), &shape, which.unit(), which.help()),
        )
    };
    let label = which.title();
    let preview_view = move || {
        let drawn = preview.get().map(|summary| {
            summary.map(|summary| {
                let title = format!("Histogram of {}", label.to_lowercase());
                let stats = format!(
                    "median {} · p90 {} · p99 {} · mean {}",
                    format_number(summary.p50, 3),
                    format_number(summary.p90, 3),
                    format_number(summary.p99, 3),
                    format_number(summary.mean, 3),
                );
                (histogram_preview(&summary, &title, 160, 36), stats)
            })
        });
        preview_figure(drawn, "preview-box")
    };
    let item = dist_item(index, which);
    let family = item.whole(
        |d| Some(shape_kind(&d.shape).to_string()),
        |d, kind: String| d.shape = convert_shape(&d.shape, &kind),
    );
    let family = menu(family, which.family_words(), |_| options(&SHAPE_KINDS));
    let cap = number(at!(item, max), which.cap_words()).placeholder("none");
    view! {
        <fieldset class="dist">
            <legend>{label}</legend>
            <div class="grid">{family.view(state)} {numbers} {cap.view(state)}</div>
            {preview_view}
        </fieldset>
    }
}

/// How the class's two lengths go together: the choice, its fields (a
/// correlation, or a table pasted as CSV) and the chart of the joint
/// distribution (in every case, so that independence shows too).
#[component]
fn LengthsEditor(state: AppState, index: usize) -> impl IntoView {
    let class = Memo::new(move |_| state.params.with(|p| p.classes.get(index).cloned()));
    let kind = Memo::new(move |_| class.with(|c| c.as_ref().map_or("independent", lengths_kind)));
    let item = class_item(index);
    let choice = item.at(
        "lengths.kind",
        |c| Some(lengths_kind(c).to_string()),
        |c, kind: String| set_lengths_kind(c, &kind),
    );
    let choice = menu(choice, &inputs::CLASS_LENGTHS_KIND, |_| {
        options(&LENGTHS_KINDS)
    });
    let rho = move || {
        (kind.get() == "correlated").then(|| {
            let at = class_item(index).at(
                "lengths.rho",
                |c| match &c.lengths {
                    Some(LengthsParams::Correlated { rho }) => Some(*rho),
                    _ => None,
                },
                |c, value| {
                    if let Some(LengthsParams::Correlated { rho }) = &mut c.lengths {
                        *rho = value;
                    }
                },
            );
            number(at, &inputs::CLASS_LENGTHS_RHO).view(state)
        })
    };
    let note = move || match kind.get() {
        "correlated" => "Both lengths log-normal as set above, their logarithms correlated.",
        "pairs" => "Each request draws one row of the table; it replaces the two distributions.",
        _ => "Independent: each length drawn from its own distribution above.",
    };
    let theme = Memo::new(move |_| Theme::of(state.dark.get()));
    let preview = Memo::new(move |_| class.with(|c| c.as_ref().map(lengths_preview)));
    let chart = move || {
        let drawn = preview.get().map(|pairs| {
            pairs.map(|pairs| {
                let svg = lengths_chart(&pairs, &theme.get(), 300, 190).svg;
                let r = log_correlation(&pairs).map_or("none".to_string(), |r| format_number(r, 2));
                let stats = format!(
                    "{} sampled pairs · correlation of log lengths {r}",
                    pairs.len()
                );
                (svg, stats)
            })
        });
        preview_figure(drawn, "lengths-box")
    };
    view! {
        <fieldset class="dist">
            <legend>"Prompt and output together"</legend>
            <div class="grid">{choice.view(state)} {rho}</div>
            <p class="panel-note">{note}</p>
            <Show when=move || kind.get() == "pairs">
                <PairsBox state index />
            </Show>
            {chart}
        </fieldset>
    }
}

/// The table of pairs as CSV text: text that reads is written to the
/// scenario; text that does not keeps its message (row and column) under
/// the box, and blocks runs, until it is fixed.
#[component]
fn PairsBox(state: AppState, index: usize) -> impl IntoView {
    let path = format!("classes[{index}].lengths.pairs");
    let id = crate::panels::fields::field_id(&path);
    let current = move |p: &sojourn_engine::ScenarioParams| {
        p.classes.get(index).map(pairs_csv).unwrap_or_default()
    };
    let text = RwSignal::new(state.params.with_untracked(current));
    // Follow edits made elsewhere (an import, a reset) unless the box
    // already reads as them.
    Effect::new(move |_| {
        let lengths = state
            .params
            .with(|p| p.classes.get(index).map(|c| c.lengths.clone()));
        let reads = text.with_untracked(|t| lengths_from_csv(t).ok());
        if lengths.is_some_and(|l| l != reads) {
            text.set(state.params.with_untracked(current));
        }
    });
    let unparsed = path.clone();
    on_cleanup(move || {
        state.unparsed.update(|u| {
            u.remove(&unparsed);
        })
    });
    let error = Memo::new({
        let path = path.clone();
        move |_| state.field_error(&path)
    });
    let on_input = move |event: leptos::ev::Event| {
        let typed = event_target_value(&event);
        text.set(typed.clone());
        match lengths_from_csv(&typed) {
            Ok(table) => {
                state.unparsed.update(|u| {
                    u.remove(&path);
                });
                state.params.update(|p| {
                    if let Some(class) = p.classes.get_mut(index) {
                        class.lengths = Some(table);
                    }
                });
            }
            Err(error) => state.unparsed.update(|u| {
                u.insert(path.clone(), error.to_string());
            }),
        }
    };
    view! {
        <label for=id.clone()>"Pairs (CSV: input,output[,weight])"</label>
        <textarea
            id=id
            class="pairs-csv"
            spellcheck="false"
            title=help::LENGTHS_PAIRS
            prop:value=move || text.get()
            on:input=on_input
            aria-invalid=move || if error.with(Option::is_some) { "true" } else { "false" }
        ></textarea>
        <p class="field-error" aria-live="polite">
            {move || error.get()}
        </p>
    }
}

#[component]
fn TimeOfDay(state: AppState, index: usize) -> impl IntoView {
    let profile = Memo::new(move |_| {
        state
            .params
            .with(|p| p.classes.get(index).and_then(|c| c.time_of_day.clone()))
    });
    let enabled = Memo::new(move |_| profile.with(Option::is_some));
    let set_profile = move |values: Option<Vec<f64>>| {
        state.params.update(|p| {
            if let Some(c) = p.classes.get_mut(index) {
                c.time_of_day = values;
            }
        })
    };
    let hours = move || {
        let class = class_item(index);
        enabled.get().then(|| {
            let rows = (0..24)
                .map(|hour| {
                    let at = class.at(
                        &format!("time_of_day[{hour}]"),
                        move |c| c.time_of_day.as_ref()?.get(hour).copied(),
                        move |c, v| {
                            if let Some(slot) = c.time_of_day.as_mut().and_then(|t| t.get_mut(hour))
                            {
                                *slot = v;
                            }
                        },
                    );
                    number(at, Words::new(format!("{hour:02}h"), "", help::TIME_OF_DAY))
                })
                .collect();
            fields(state, rows)
        })
    };
    let preview = move || {
        profile.get().map(|values| {
            let svg = profile_preview(&values, "Time-of-day profile, hour 0 to 23", 240, 32);
            view! { <div class="preview-chart" inner_html=svg></div> }
        })
    };
    // "on" is no field of the engine's: the path names the checkbox only.
    let toggle = class_item(index).at(
        "time_of_day.on",
        |c| Some(c.time_of_day.is_some()),
        |c, on| c.time_of_day = on.then(|| vec![1.0; 24]),
    );
    let toggle = check(toggle, &inputs::CLASS_TIME_OF_DAY_ON);
    view! {
        <fieldset class="dist">
            <legend>"Time of day"</legend>
            {toggle.view(state)}
            <Show when=move || enabled.get()>
                <div class="profile-presets" role="group" aria-label="Profile presets">
                    {time_of_day_presets()
                        .into_iter()
                        .map(|(_, label, values)| {
                            view! {
                                <button
                                    type="button"
                                    class="chip"
                                    on:click=move |_| set_profile(Some(values.clone()))
                                >
                                    {label}
                                </button>
                            }
                        })
                        .collect_view()}
                </div>
                {preview}
            </Show>
            <Show when=move || enabled.get()>
                <LazyDetails summary="Edit the 24 hourly multipliers" class="advanced hours-editor">
                    <div class="hours">{hours}</div>
                </LazyDetails>
            </Show>
            <FieldMessage state path=format!("classes[{index}].time_of_day") />
        </fieldset>
    }
}

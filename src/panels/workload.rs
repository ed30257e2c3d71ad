//! The workload panel: request classes with their arrivals, batch sizes,
//! time-of-day profile, token-length distributions (with a live preview),
//! cache hit rate, priority, deadline and timeout.

use leptos::prelude::*;
use sojourn_engine::{ClassParams, DistParams, ScenarioParams, Shape};

use crate::charts::{histogram_preview, profile_preview};
use crate::form::{
    SHAPE_KINDS, convert_shape, dist_preview, new_class, shape_fields, shape_get, shape_kind,
    shape_set, time_of_day_presets,
};
use crate::format::format_number;
use crate::help;
use crate::panels::fields::{Kind, LazyDetails, ListField, NumberField, SelectField, TextField};
use crate::state::AppState;

type ClassGet = fn(&ClassParams) -> Option<f64>;
type ClassSet = fn(&mut ClassParams, f64);

fn class_get(
    index: usize,
    get: ClassGet,
) -> impl Fn(&ScenarioParams) -> Option<f64> + Send + Sync + 'static {
    move |p| p.classes.get(index).and_then(get)
}

fn class_set(
    index: usize,
    set: ClassSet,
) -> impl Fn(&mut ScenarioParams, Option<f64>) + Send + Sync + 'static {
    move |p, v| {
        if let (Some(class), Some(v)) = (p.classes.get_mut(index), v) {
            set(class, v);
        }
    }
}

#[component]
pub fn WorkloadPanel(state: AppState) -> impl IntoView {
    let count = Memo::new(move |_| state.params.with(|p| p.classes.len()));
    let classes_error = Memo::new(move |_| state.field_error("classes"));
    view! {
        <section class="panel" aria-labelledby="workload-heading">
            <h2 id="workload-heading">"Workload"</h2>
            <p class="panel-note">{help::BATCH_ARRIVALS}</p>
            {move || {
                (0..count.get()).map(|index| view! { <ClassEditor state index /> }).collect_view()
            }}
            <p class="field-error" aria-live="polite">
                {move || classes_error.get()}
            </p>
            <button
                type="button"
                class="secondary"
                on:click=move |_| {
                    state
                        .params
                        .update(|p| {
                            let class = new_class(p);
                            p.classes.push(class);
                        })
                }
            >
                "Add request class"
            </button>
        </section>
    }
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
                    format!(
                        "{} batches/h, deadline {}",
                        format_number(c.batches_per_hour, 4),
                        crate::format::format_duration_s(c.deadline_s)
                    )
                })
                .unwrap_or_default()
        })
    });
    let single = Memo::new(move |_| state.params.with(|p| p.classes.len() <= 1));
    let prefix = format!("classes[{index}]");
    view! {
        <details class="class-editor" open=true>
            <summary>
                <span class="class-name">{move || name.get()}</span>
                <span class="class-summary">{move || summary.get()}</span>
            </summary>
            <div class="grid">
                <TextField
                    state
                    path=format!("{prefix}.name")
                    label="Class name"
                    help=help::CLASS_NAME
                    get=move |p| p.classes.get(index).map(|c| c.name.clone()).unwrap_or_default()
                    set=move |p, v| {
                        if let Some(c) = p.classes.get_mut(index) {
                            c.name = v;
                        }
                    }
                />
                <NumberField
                    state
                    path=format!("{prefix}.batches_per_hour")
                    label="Batch arrivals"
                    unit="batches/h"
                    help=help::BATCHES_PER_HOUR
                    get=class_get(index, |c| Some(c.batches_per_hour))
                    set=class_set(index, |c, v| c.batches_per_hour = v)
                />
                <NumberField
                    state
                    path=format!("{prefix}.deadline_s")
                    label="Deadline (SLA)"
                    help=help::DEADLINE
                    kind=Kind::Duration
                    get=class_get(index, |c| Some(c.deadline_s))
                    set=class_set(index, |c, v| c.deadline_s = v)
                />
                <NumberField
                    state
                    path=format!("{prefix}.prefix_cache_hit")
                    label="Prefix cache hit"
                    unit="%"
                    help=help::PREFIX_CACHE
                    kind=Kind::Percent
                    get=class_get(index, |c| Some(c.prefix_cache_hit))
                    set=class_set(index, |c, v| c.prefix_cache_hit = v)
                />
                <NumberField
                    state
                    path=format!("{prefix}.priority")
                    label="Priority"
                    help=help::PRIORITY
                    get=class_get(index, |c| Some(c.priority as f64))
                    set=class_set(
                        index,
                        |c, v| c.priority = v.clamp(i32::MIN as f64, i32::MAX as f64) as i32,
                    )
                />
                <NumberField
                    state
                    path=format!("{prefix}.timeout_s")
                    label="Client timeout"
                    help=help::TIMEOUT
                    kind=Kind::Duration
                    optional=true
                    placeholder="none"
                    get=class_get(index, |c| c.timeout_s)
                    set=move |p, v| {
                        if let Some(c) = p.classes.get_mut(index) {
                            c.timeout_s = v;
                        }
                    }
                />
            </div>
            <DistEditor state index which=Which::BatchSize />
            <TimeOfDay state index />
            <DistEditor state index which=Which::Input />
            <DistEditor state index which=Which::Output />
            <button
                type="button"
                class="secondary danger"
                disabled=move || single.get()
                aria-label=move || format!("Remove class {}", name.get())
                on:click=move |_| {
                    state
                        .params
                        .update(|p| {
                            if p.classes.len() > 1 && index < p.classes.len() {
                                p.classes.remove(index);
                            }
                        })
                }
            >
                "Remove class"
            </button>
        </details>
    }
}

/// Which distribution of a class an editor edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    BatchSize,
    Input,
    Output,
}

impl Which {
    fn field(self) -> &'static str {
        match self {
            Which::BatchSize => "batch_size",
            Which::Input => "input_tokens",
            Which::Output => "output_tokens",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Which::BatchSize => "Batch size",
            Which::Input => "Input (prompt) tokens",
            Which::Output => "Output tokens",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Which::BatchSize => "requests",
            Which::Input | Which::Output => "tokens",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Which::BatchSize => help::BATCH_SIZE,
            Which::Input => help::INPUT_TOKENS,
            Which::Output => help::OUTPUT_TOKENS,
        }
    }

    fn get(self, class: &ClassParams) -> &DistParams {
        match self {
            Which::BatchSize => &class.batch_size,
            Which::Input => &class.input_tokens,
            Which::Output => &class.output_tokens,
        }
    }

    fn get_mut(self, class: &mut ClassParams) -> &mut DistParams {
        match self {
            Which::BatchSize => &mut class.batch_size,
            Which::Input => &mut class.input_tokens,
            Which::Output => &mut class.output_tokens,
        }
    }
}

fn dist_of(p: &ScenarioParams, index: usize, which: Which) -> Option<&DistParams> {
    p.classes.get(index).map(|c| which.get(c))
}

fn dist_mut(p: &mut ScenarioParams, index: usize, which: Which) -> Option<&mut DistParams> {
    p.classes.get_mut(index).map(|c| which.get_mut(c))
}

#[component]
fn DistEditor(state: AppState, index: usize, which: Which) -> impl IntoView {
    let path = format!("classes[{index}].{}", which.field());
    let dist = Memo::new(move |_| state.params.with(|p| dist_of(p, index, which).cloned()));
    let kind = Memo::new(move |_| {
        dist.with(|d| {
            d.as_ref()
                .map(|d| shape_kind(&d.shape))
                .unwrap_or("constant")
        })
    });
    let preview = Memo::new(move |_| dist.with(|d| d.as_ref().map(dist_preview)));
    let fields_path = path.clone();
    let numbers = move || {
        let shape_path = fields_path.clone();
        let probe = dist.with(|d| d.as_ref().map(|d| d.shape.clone()));
        let _ = kind.get();
        let Some(shape) = probe else {
            return ().into_any();
        };
        match &shape {
            Shape::Empirical { .. } => view! {
                <ListField
                    state
                    path=format!("{shape_path}.values")
                    label="Values"
                    unit=which.unit()
                    help="Each value is drawn with equal probability (e.g. lengths from a trace)."
                    get=move |p| match dist_of(p, index, which).map(|d| &d.shape) {
                        Some(Shape::Empirical { values }) => values.clone(),
                        _ => Vec::new(),
                    }
                    set=move |p, v| {
                        if let Some(Shape::Empirical { values }) = dist_mut(p, index, which)
                            .map(|d| &mut d.shape)
                        {
                            *values = v;
                        }
                    }
                />
            }
            .into_any(),
            Shape::Histogram { .. } => view! {
                <ListField
                    state
                    path=format!("{shape_path}.edges")
                    label="Bin edges"
                    unit=which.unit()
                    help="Bin i spans edges[i] to edges[i+1]; values are uniform within a bin."
                    get=move |p| match dist_of(p, index, which).map(|d| &d.shape) {
                        Some(Shape::Histogram { edges, .. }) => edges.clone(),
                        _ => Vec::new(),
                    }
                    set=move |p, v| {
                        if let Some(Shape::Histogram { edges, .. }) = dist_mut(p, index, which)
                            .map(|d| &mut d.shape)
                        {
                            *edges = v;
                        }
                    }
                />
                <ListField
                    state
                    path=format!("{shape_path}.weights")
                    label="Bin weights"
                    help="Relative probability of each bin (one fewer than the edges)."
                    get=move |p| match dist_of(p, index, which).map(|d| &d.shape) {
                        Some(Shape::Histogram { weights, .. }) => weights.clone(),
                        _ => Vec::new(),
                    }
                    set=move |p, v| {
                        if let Some(Shape::Histogram { weights, .. }) = dist_mut(p, index, which)
                            .map(|d| &mut d.shape)
                        {
                            *weights = v;
                        }
                    }
                />
            }
            .into_any(),
            _ => shape_fields(&shape)
                .iter()
                .map(|(field, label)| {
                    let field: &'static str = field;
                    view! {
                        <NumberField
                            state
                            path=format!("{shape_path}.{field}")
                            label=*label
                            unit=which.unit()
                            help=which.help()
                            get=move |p| {
                                dist_of(p, index, which).and_then(|d| shape_get(&d.shape, field))
                            }
                            set=move |p, v| {
                                if let (Some(d), Some(v)) = (dist_mut(p, index, which), v) {
                                    shape_set(&mut d.shape, field, v)
                                }
                            }
                        />
                    }
                })
                .collect_view()
                .into_any(),
        }
    };
    let label = which.title();
    let preview_view = move || match preview.get() {
        Some(Ok(summary)) => {
            let svg = histogram_preview(
                &summary,
                &format!("Histogram of {}", label.to_lowercase()),
                160,
                36,
            );
            view! {
                <div class="preview-box">
                    <div class="preview-chart" inner_html=svg></div>
                    <p class="preview-stats">
                        {format!(
                            "median {} · p90 {} · p99 {} · mean {}",
                            format_number(summary.p50, 3),
                            format_number(summary.p90, 3),
                            format_number(summary.p99, 3),
                            format_number(summary.mean, 3),
                        )}
                    </p>
                </div>
            }
            .into_any()
        }
        Some(Err(reason)) => {
            view! { <p class="preview-stats muted">{format!("No preview: {reason}")}</p> }
                .into_any()
        }
        None => ().into_any(),
    };
    let kind_path = path.clone();
    view! {
        <fieldset class="dist">
            <legend>{label}</legend>
            <div class="grid">
                <SelectField
                    state
                    path=kind_path
                    label="Distribution"
                    help=which.help()
                    options=|_| {
                        SHAPE_KINDS.iter().map(|(k, l)| (k.to_string(), l.to_string())).collect()
                    }
                    get=move |p| {
                        dist_of(p, index, which)
                            .map(|d| shape_kind(&d.shape).to_string())
                            .unwrap_or_default()
                    }
                    set=move |p, kind| {
                        if let Some(d) = dist_mut(p, index, which) {
                            d.shape = convert_shape(&d.shape, kind);
                        }
                    }
                />
                {numbers}
                <NumberField
                    state
                    path=format!("{path}.max")
                    label="Cap (max)"
                    unit=which.unit()
                    help="Draws above this become this. Empty: no cap."
                    optional=true
                    placeholder="none"
                    get=move |p| dist_of(p, index, which).and_then(|d| d.max)
                    set=move |p, v| {
                        if let Some(d) = dist_mut(p, index, which) {
                            d.max = v;
                        }
                    }
                />
            </div>
            {preview_view}
        </fieldset>
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
    let error = Memo::new(move |_| state.field_error(&format!("classes[{index}].time_of_day")));
    let set_profile = move |values: Option<Vec<f64>>| {
        state.params.update(|p| {
            if let Some(c) = p.classes.get_mut(index) {
                c.time_of_day = values;
            }
        })
    };
    let hours = move || {
        enabled.get().then(|| {
            (0..24)
                .map(|hour| {
                    view! {
                        <NumberField
                            state
                            path=format!("classes[{index}].time_of_day[{hour}]")
                            label=format!("{hour:02}h")
                            help=help::TIME_OF_DAY
                            get=move |p| {
                                p.classes
                                    .get(index)
                                    .and_then(|c| c.time_of_day.as_ref())
                                    .and_then(|t| t.get(hour).copied())
                            }
                            set=move |p, v| {
                                if let (Some(slot), Some(v)) = (
                                    p
                                        .classes
                                        .get_mut(index)
                                        .and_then(|c| c.time_of_day.as_mut())
                                        .and_then(|t| t.get_mut(hour)),
                                    v,
                                ) {
                                    *slot = v;
                                }
                            }
                        />
                    }
                })
                .collect_view()
        })
    };
    let preview = move || {
        profile.get().map(|values| {
            let svg = profile_preview(&values, "Time-of-day profile, hour 0 to 23", 240, 32);
            view! { <div class="preview-chart" inner_html=svg></div> }
        })
    };
    let toggle_id = format!("f-classes-{index}-time_of_day-on");
    view! {
        <fieldset class="dist">
            <legend>"Time of day"</legend>
            <div class="field check">
                <input
                    id=toggle_id.clone()
                    type="checkbox"
                    prop:checked=move || enabled.get()
                    on:change=move |event| {
                        set_profile(event_target_checked(&event).then(|| vec![1.0; 24]));
                    }
                    aria-describedby=format!("{toggle_id}-help")
                />
                <label for=toggle_id.clone()>"Vary the rate by hour of day"</label>
                <span class="tip" role="tooltip" id=format!("{toggle_id}-help")>
                    {help::TIME_OF_DAY}
                </span>
            </div>
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
            <p class="field-error" aria-live="polite">
                {move || error.get()}
            </p>
        </fieldset>
    }
}

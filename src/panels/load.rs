//! A class's load mode: an open stream over the horizon, a fixed count of
//! requests, an offline batch at time 0, or closed-loop clients with their
//! think time (the engine's `LoadParams`, docs/engine.md, Workload).

use leptos::prelude::*;
use sojourn_engine::{ClassParams, LoadParams, ScenarioParams};

use crate::form::{
    LOAD_KINDS, NO_THINK, SHAPE_KINDS, load_kind, load_kinds, set_load_kind, set_think_kind, think,
    think_kind, think_mut,
};
use crate::help;
use crate::panels::at::{At, Item};
use crate::panels::fields::{Field, fields, menu, number, options};
use crate::panels::workload::{class_item, shape_rows};
use crate::registry::inputs;
use crate::state::{AppState, Notice};

/// The load mode's menu and the boxes its mode has.
#[component]
pub fn LoadEditor(state: AppState, index: usize) -> impl IntoView {
    let kind = Memo::new(move |_| {
        state
            .params
            .with(|p| p.classes.get(index).map_or("open", load_kind))
    });
    let think_family = Memo::new(move |_| {
        state
            .params
            .with(|p| p.classes.get(index).map_or(NO_THINK.0, think_kind))
    });
    let mode = menu(mode_at(state, index), &inputs::CLASS_LOAD_KIND, move |p| {
        options(&p.classes.get(index).map_or(LOAD_KINDS.to_vec(), load_kinds))
    });
    let boxes = move || {
        let _ = think_family.get();
        fields(state, mode_fields(state, index, kind.get()))
    };
    view! {
        <fieldset class="dist">
            <legend>"How requests are sent"</legend>
            <div class="grid">{mode.view(state)} {boxes}</div>
            <p class="panel-note">{move || note(kind.get())}</p>
        </fieldset>
    }
}

/// The load mode's menu: switching to a mode that sets its own send
/// times removes the class's hourly profile and batch sizes, and says so
/// with an Undo.
fn mode_at(state: AppState, index: usize) -> At<String> {
    At::new(
        format!("classes[{index}].load.kind"),
        move |p| p.classes.get(index).map(|c| load_kind(c).to_string()),
        move |p: &mut ScenarioParams, kind: String| {
            let before = p.clone();
            let Some(class) = p.classes.get_mut(index) else {
                return;
            };
            let removed = set_load_kind(class, &kind);
            if !removed.is_empty() {
                let text = format!(
                    "Class {}'s load changed: {} removed.",
                    class.name,
                    removed.join(" and ")
                );
                state.notice.set(Some(Notice {
                    undo: Some(Box::new(before)),
                    ..Notice::info(text)
                }));
            }
        },
    )
}

/// The boxes of the mode `kind`: a count, or clients, a total and the
/// think time's family and numbers.
fn mode_fields(state: AppState, index: usize, kind: &str) -> Vec<Field> {
    let class = class_item(index);
    match kind {
        "fixed_count" | "offline" => vec![number(counted_at(&class), &inputs::CLASS_LOAD_REQUESTS)],
        "closed_loop" => {
            let mut rows = vec![
                number(clients_at(&class), &inputs::CLASS_LOAD_CLIENTS),
                number(total_at(&class), &inputs::CLASS_LOAD_REQUESTS_IN_ALL)
                    .placeholder("until the horizon"),
                menu(think_kind_at(&class), &inputs::CLASS_LOAD_THINK_MS, |_| {
                    let mut kinds = vec![NO_THINK];
                    kinds.extend(SHAPE_KINDS);
                    options(&kinds)
                }),
            ];
            let item = think_item(index);
            let shape = state.params.with_untracked(|p| {
                p.classes
                    .get(index)
                    .and_then(think)
                    .map(|d| d.shape.clone())
            });
            if let Some(shape) = shape {
                rows.extend(shape_rows(&item, &shape, "ms", help::THINK));
            }
            rows
        }
        _ => Vec::new(),
    }
}

fn counted_at(class: &Item<ClassParams>) -> At<u32> {
    class.at(
        "load.requests",
        |c| match c.load {
            LoadParams::FixedCount { requests } | LoadParams::Offline { requests } => {
                Some(requests)
            }
            _ => None,
        },
        |c, n| {
            if let LoadParams::FixedCount { requests } | LoadParams::Offline { requests } =
                &mut c.load
            {
                *requests = n;
            }
        },
    )
}

fn clients_at(class: &Item<ClassParams>) -> At<u32> {
    class.at(
        "load.clients",
        |c| match c.load {
            LoadParams::ClosedLoop { clients, .. } => Some(clients),
            _ => None,
        },
        |c, n| {
            if let LoadParams::ClosedLoop { clients, .. } = &mut c.load {
                *clients = n;
            }
        },
    )
}

fn total_at(class: &Item<ClassParams>) -> At<Option<u32>> {
    class.at(
        "load.requests",
        |c| match c.load {
            LoadParams::ClosedLoop { requests, .. } => Some(requests),
            _ => None,
        },
        |c, n| {
            if let LoadParams::ClosedLoop { requests, .. } = &mut c.load {
                *requests = n;
            }
        },
    )
}

fn think_kind_at(class: &Item<ClassParams>) -> At<String> {
    class.at(
        "load.think_ms",
        |c| Some(think_kind(c).to_string()),
        |c, kind: String| set_think_kind(c, &kind),
    )
}

/// The closed loop's think-time distribution of the class at `index`.
fn think_item(index: usize) -> Item<sojourn_engine::DistParams> {
    Item::new(
        format!("classes[{index}].load.think_ms"),
        move |p| p.classes.get(index).and_then(think),
        move |p| p.classes.get_mut(index).and_then(think_mut),
    )
}

/// What the mode means, under the boxes.
fn note(kind: &str) -> &'static str {
    match kind {
        "trace" => {
            "Replays the imported trace's requests exactly, each at its arrival time with its lengths; the distributions below are fitted to them (an open stream uses them). The planner plans open streams only."
        }
        "fixed_count" => {
            "Exactly this many requests, in batches at the class's rate, however long that takes; the report gives throughput over the busy period."
        }
        "offline" => {
            "Every request at time 0, as offline throughput benchmarks run; the report gives throughput over the busy period. The planner plans open streams only."
        }
        "closed_loop" => {
            "Each client sends its next request when its previous one returns, plus the think time (as concurrency sweeps run). The planner plans open streams only."
        }
        _ => {
            "Batches arrive at the class's rate over the horizon (Poisson), shaped by the hourly profile."
        }
    }
}

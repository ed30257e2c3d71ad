//! The page's panels, one module each, and the parts they share: the
//! panel's frame, a `<details>` built when first opened, and the editors of
//! lists in the scenario (classes, targets, hardware options).

pub mod at;
pub mod calibration;
pub mod fields;
pub mod guide;
pub mod load;
pub mod model;
pub mod plan;
pub mod results;
pub mod search;
pub mod serving;
pub mod toolbar;
pub mod workload;

use leptos::prelude::*;
use sojourn_engine::ScenarioParams;

use crate::state::AppState;

/// An input panel: a section named by its heading (`{id}-heading`).
#[component]
pub fn Panel(id: &'static str, title: &'static str, children: Children) -> impl IntoView {
    let heading = format!("{id}-heading");
    view! {
        <section class="panel" aria-labelledby=heading.clone()>
            <h2 id=heading.clone()>{title}</h2>
            {children()}
        </section>
    }
}

/// A `<details>` whose content is built the first time it opens: rarely
/// used knobs cost nothing while the page loads.
#[component]
pub fn LazyDetails(
    #[prop(into)] summary: String,
    #[prop(optional, into)] class: String,
    children: ChildrenFn,
) -> impl IntoView {
    let opened = RwSignal::new(false);
    let class = if class.is_empty() {
        "advanced".to_string()
    } else {
        class
    };
    view! {
        <details
            class=class
            on:toggle=move |event| {
                let open = event_target::<web_sys::HtmlDetailsElement>(&event).open();
                if open {
                    opened.set(true);
                }
            }
        >
            <summary>{summary}</summary>
            <Show when=move || opened.get()>{children()}</Show>
        </details>
    }
}

/// The editors of a list in the scenario (classes, targets), the list's
/// own message, and a button that adds an item.
#[component]
pub fn ListEditors(
    state: AppState,
    /// The list's path, for its message.
    path: &'static str,
    len: fn(&ScenarioParams) -> usize,
    /// The editor of item `index`.
    editor: fn(AppState, usize) -> AnyView,
    add: fn(&mut ScenarioParams),
    add_label: &'static str,
) -> impl IntoView {
    let count = Memo::new(move |_| state.params.with(len));
    view! {
        {move || (0..count.get()).map(|index| editor(state, index)).collect_view()}
        <FieldMessage state path />
        <button type="button" class="secondary" on:click=move |_| state.params.update(add)>
            {add_label}
        </button>
    }
}

/// A button that removes an item from a list in the scenario.
#[component]
pub fn RemoveButton(
    state: AppState,
    /// Its text ("Remove target").
    text: &'static str,
    /// Its name for screen readers ("Remove target 2").
    #[prop(into)]
    name: Signal<String>,
    /// Set while the item may not go (the last class).
    #[prop(optional, into)]
    disabled: Signal<bool>,
    remove: impl Fn(&mut ScenarioParams) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <button
            type="button"
            class="secondary danger"
            disabled=disabled
            aria-label=name
            on:click=move |_| state.params.update(remove)
        >
            {text}
        </button>
    }
}

/// The engine's message for a whole list or item (`path`), under its editors.
#[component]
pub fn FieldMessage(state: AppState, #[prop(into)] path: String) -> impl IntoView {
    let error = Memo::new(move |_| state.field_error(&path));
    view! {
        <p class="field-error" aria-live="polite">
            {move || error.get()}
        </p>
    }
}

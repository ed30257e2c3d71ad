//! The boxes a field draws: a text box, a drop-down and a checkbox, each
//! tied to the ids of its frame for screen readers.

use leptos::prelude::*;

use super::frame::Ids;
use crate::panels::at::{Reader, Writer};
use crate::state::AppState;

/// The attributes in which text boxes differ (`None`: left out).
pub(super) struct Look {
    pub inputmode: Option<&'static str>,
    pub spellcheck: Option<&'static str>,
    pub placeholder: Option<String>,
    /// The box has an echo line (a duration), which describes it too.
    pub echo: bool,
}

/// A text box showing `value`, with its state for screen readers.
pub(super) fn text_box(
    ids: &Ids,
    error: Memo<Option<String>>,
    look: Look,
    value: impl Fn() -> String + Send + Sync + 'static,
    on_input: impl Fn(leptos::ev::Event) + 'static,
) -> AnyView {
    let described_by = if look.echo {
        format!("{} {}", ids.described_by(), ids.echo)
    } else {
        ids.described_by()
    };
    view! {
        <input
            id=ids.control.clone()
            type="text"
            inputmode=look.inputmode
            autocomplete="off"
            spellcheck=look.spellcheck
            placeholder=look.placeholder
            prop:value=value
            on:input=on_input
            aria-invalid=move || if error.with(Option::is_some) { "true" } else { "false" }
            aria-describedby=described_by
        />
    }
    .into_any()
}

/// A drop-down whose options may change with the scenario.
pub(super) fn menu_box(
    state: AppState,
    ids: &Ids,
    options: Reader<Vec<(String, String)>>,
    get: Reader<String>,
    set: Writer<String>,
) -> AnyView {
    let options = Memo::new(move |_| state.params.with(|p| options(p)));
    let current = Memo::new(move |_| state.params.with(|p| get(p)));
    view! {
        <select
            id=ids.control.clone()
            on:change=move |event| {
                let value = event_target_value(&event);
                state.params.update(|p| set(p, value));
            }
            aria-describedby=ids.described_by()
        >
            {move || {
                let selected = current.get();
                options
                    .get()
                    .into_iter()
                    .map(|(value, text)| {
                        let is_selected = value == selected;
                        view! {
                            <option value=value selected=is_selected>
                                {text}
                            </option>
                        }
                    })
                    .collect_view()
            }}
        </select>
    }
    .into_any()
}

/// A checkbox, its label after it; it has no message of its own.
pub(super) fn check_box(
    state: AppState,
    ids: Ids,
    label: String,
    help: &'static str,
    get: Reader<bool>,
    set: Writer<bool>,
) -> AnyView {
    view! {
        <div class="field check">
            <input
                id=ids.control.clone()
                type="checkbox"
                prop:checked=move || state.params.with(|p| get(p))
                on:change=move |event| {
                    let checked = event_target_checked(&event);
                    state.params.update(|p| set(p, checked));
                }
                aria-describedby=ids.help.clone()
            />
            <label for=ids.control>{label}</label>
            <span class="tip" role="tooltip" id=ids.help>
                {help}
            </span>
        </div>
    }
    .into_any()
}

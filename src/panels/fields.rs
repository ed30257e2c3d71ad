//! Form fields: a label, a box, its unit, a short explanation shown on
//! hover and on keyboard focus, and the engine's message when the value is
//! invalid. Every field reads and writes one value of the scenario through
//! a getter and a setter, and names the engine's field path for its errors.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use leptos::prelude::*;
use sojourn_engine::ScenarioParams;

use crate::form::{
    NOT_A_COUNT, NOT_A_DURATION, NOT_A_NUMBER, duration_text, list_text, parse_count,
    parse_duration_s, parse_list, parse_number,
};
use crate::format::input_text;
use crate::state::AppState;

/// How a box reads and shows its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Real,
    /// A whole number of 0 or more.
    Count,
    /// Seconds, typed with a unit ("90 s", "24 h").
    Duration,
    /// A fraction shown as a percentage (0.2 shows "20").
    Percent,
}

impl Kind {
    fn parse(self, text: &str) -> Result<f64, &'static str> {
        match self {
            Kind::Real => parse_number(text).ok_or(NOT_A_NUMBER),
            Kind::Count => parse_count(text).map(|v| v as f64).ok_or(NOT_A_COUNT),
            Kind::Duration => parse_duration_s(text).ok_or(NOT_A_DURATION),
            Kind::Percent => parse_number(text).map(|v| v / 100.0).ok_or(NOT_A_NUMBER),
        }
    }

    fn show(self, value: f64) -> String {
        match self {
            Kind::Duration => duration_text(value),
            Kind::Percent => input_text((value * 100.0 * 1e9).round() / 1e9),
            Kind::Real | Kind::Count => input_text(value),
        }
    }

    fn input_mode(self) -> &'static str {
        match self {
            Kind::Count => "numeric",
            Kind::Duration => "text",
            Kind::Real | Kind::Percent => "decimal",
        }
    }
}

/// The DOM id for a field path: `classes\[0\].deadline_s` gives
/// `f-classes-0-deadline_s`.
pub fn field_id(path: &str) -> String {
    let mut id = String::from("f-");
    for c in path.chars() {
        id.push(if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '-'
        });
    }
    id.trim_end_matches('-').replace("--", "-")
}

/// The ids of a field's control and of the two texts that describe it.
struct Ids {
    control: String,
    help: String,
    error: String,
}

impl Ids {
    fn of(path: &str) -> Ids {
        let control = field_id(path);
        Ids {
            help: format!("{control}-help"),
            error: format!("{control}-error"),
            control,
        }
    }

    /// For the control's `aria-describedby`.
    fn described_by(&self) -> String {
        format!("{} {}", self.help, self.error)
    }
}

/// The frame every field shares: the label, the box with the control and
/// its unit (an empty unit is hidden), the explanation shown on hover and
/// focus, and the engine's message for the field's path.
fn framed(
    class: &'static str,
    ids: Ids,
    label: String,
    unit: String,
    help: &'static str,
    error: Memo<Option<String>>,
    control: AnyView,
) -> AnyView {
    view! {
        <div class=class class:invalid=move || error.with(Option::is_some)>
            <label for=ids.control>{label}</label>
            <div class="field-box">{control} <span class="unit">{unit}</span></div>
            <span class="tip" role="tooltip" id=ids.help>
                {help}
            </span>
            <p class="field-error" id=ids.error aria-live="polite">
                {move || error.get()}
            </p>
        </div>
    }
    .into_any()
}

/// The engine's (or the parser's) message for `path`, as it changes.
fn error_of(state: AppState, path: &str) -> Memo<Option<String>> {
    let path = path.to_string();
    Memo::new(move |_| state.field_error(&path))
}

/// Reads a value of type `T` out of the scenario.
type Reader<T> = Arc<dyn Fn(&ScenarioParams) -> T + Send + Sync>;
/// Writes a value of type `T` into the scenario.
type Writer<T> = Arc<dyn Fn(&mut ScenarioParams, T) + Send + Sync>;
/// Writes a menu choice into the scenario.
type SetText = Arc<dyn Fn(&mut ScenarioParams, &str) + Send + Sync>;
type Getter = Reader<Option<f64>>;
type Setter = Writer<Option<f64>>;

/// A number box. `get` gives `None` for an empty box; `set` receives
/// `None` only for `optional` boxes left empty.
#[component]
pub fn NumberField(
    state: AppState,
    /// The engine's path of the value, for its error messages.
    #[prop(into)]
    path: String,
    #[prop(into)] label: String,
    /// The unit shown after the box ("" for none).
    #[prop(optional, into)]
    unit: String,
    /// The explanation shown on hover and focus.
    help: &'static str,
    #[prop(default = Kind::Real)] kind: Kind,
    /// Whether an empty box is allowed (it sets `None`).
    #[prop(optional)]
    optional: bool,
    /// Placeholder text for an empty optional box.
    #[prop(optional, into)]
    placeholder: String,
    get: impl Fn(&ScenarioParams) -> Option<f64> + Send + Sync + 'static,
    set: impl Fn(&mut ScenarioParams, Option<f64>) + Send + Sync + 'static,
) -> impl IntoView {
    number_field(
        NumberSpec {
            state,
            path,
            label,
            unit,
            help,
            kind,
            optional,
            placeholder,
        },
        Arc::new(get),
        Arc::new(set),
    )
}

/// What a number box shows, apart from its getter and setter.
struct NumberSpec {
    state: AppState,
    path: String,
    label: String,
    unit: String,
    help: &'static str,
    kind: Kind,
    optional: bool,
    placeholder: String,
}

/// The body of [`NumberField`], not generic over its closures (one copy
/// in the binary instead of one per field).
fn number_field(spec: NumberSpec, get: Getter, set: Setter) -> AnyView {
    let NumberSpec {
        state,
        path,
        label,
        unit,
        help,
        kind,
        optional,
        placeholder,
    } = spec;
    let show = move |value: Option<f64>| value.map(|v| kind.show(v)).unwrap_or_default();
    let text = RwSignal::new(state.params.with_untracked(|p| show(get(p))));
    // Follow changes made elsewhere (a preset, an import, a reset), unless
    // the box already says the same number.
    let follow = get.clone();
    Effect::new(move |_| {
        let value = state.params.with(|p| follow(p));
        let typed = text.with_untracked(|t| {
            if t.trim().is_empty() {
                Ok(None)
            } else {
                kind.parse(t).map(Some)
            }
        });
        if typed != Ok(value) {
            text.set(show(value));
        }
    });
    let unparsed_path = path.clone();
    on_cleanup(move || {
        state.unparsed.update(|u| {
            u.remove(&unparsed_path);
        });
    });
    let input_path = path.clone();
    let on_input = move |event: leptos::ev::Event| {
        let typed = event_target_value(&event);
        text.set(typed.clone());
        let parsed = if typed.trim().is_empty() && optional {
            Ok(None)
        } else {
            kind.parse(&typed).map(Some)
        };
        match parsed {
            Ok(value) => {
                state.unparsed.update(|u| {
                    u.remove(&input_path);
                });
                if state.params.with_untracked(|p| get(p)) != value {
                    state.params.update(|p| set(p, value));
                }
            }
            Err(message) => state.unparsed.update(|u| {
                u.insert(input_path.clone(), message.to_string());
            }),
        }
    };
    let error = error_of(state, &path);
    let ids = Ids::of(&path);
    let control = view! {
        <input
            id=ids.control.clone()
            type="text"
            inputmode=kind.input_mode()
            autocomplete="off"
            spellcheck="false"
            placeholder=placeholder
            prop:value=move || text.get()
            on:input=on_input
            aria-invalid=move || if error.with(Option::is_some) { "true" } else { "false" }
            aria-describedby=ids.described_by()
        />
    }
    .into_any();
    framed("field", ids, label, unit, help, error, control)
}

/// A list of numbers typed as text ("0.5, 1, 2").
#[component]
pub fn ListField(
    state: AppState,
    #[prop(into)] path: String,
    #[prop(into)] label: String,
    #[prop(optional, into)] unit: String,
    help: &'static str,
    get: impl Fn(&ScenarioParams) -> Vec<f64> + Send + Sync + 'static,
    set: impl Fn(&mut ScenarioParams, Vec<f64>) + Send + Sync + 'static,
) -> impl IntoView {
    let head = FieldHead {
        state,
        path,
        label,
        help,
    };
    list_field(head, unit, Arc::new(get), Arc::new(set))
}

/// What every field shows around its control: the engine's field path (for
/// its error message), the label and the help text.
struct FieldHead {
    state: AppState,
    path: String,
    label: String,
    help: &'static str,
}

/// The body of [`ListField`], not generic over its closures.
fn list_field(
    head: FieldHead,
    unit: String,
    get: Reader<Vec<f64>>,
    set: Writer<Vec<f64>>,
) -> AnyView {
    let FieldHead {
        state,
        path,
        label,
        help,
    } = head;
    let text = RwSignal::new(state.params.with_untracked(|p| list_text(&get(p))));
    let follow = get.clone();
    Effect::new(move |_| {
        let value = state.params.with(|p| follow(p));
        if text.with_untracked(|t| parse_list(t)) != Some(value.clone()) {
            text.set(list_text(&value));
        }
    });
    let unparsed_path = path.clone();
    on_cleanup(move || {
        state.unparsed.update(|u| {
            u.remove(&unparsed_path);
        });
    });
    let input_path = path.clone();
    let on_input = move |event: leptos::ev::Event| {
        let typed = event_target_value(&event);
        text.set(typed.clone());
        match parse_list(&typed) {
            Some(values) => {
                state.unparsed.update(|u| {
                    u.remove(&input_path);
                });
                state.params.update(|p| set(p, values));
            }
            None => state.unparsed.update(|u| {
                u.insert(
                    input_path.clone(),
                    "enter numbers separated by commas".to_string(),
                );
            }),
        }
    };
    let error = error_of(state, &path);
    let ids = Ids::of(&path);
    let control = view! {
        <input
            id=ids.control.clone()
            type="text"
            autocomplete="off"
            spellcheck="false"
            prop:value=move || text.get()
            on:input=on_input
            aria-invalid=move || if error.with(Option::is_some) { "true" } else { "false" }
            aria-describedby=ids.described_by()
        />
    }
    .into_any();
    framed("field wide", ids, label, unit, help, error, control)
}

/// A free-text box (names, dates, labels).
#[component]
pub fn TextField(
    state: AppState,
    #[prop(into)] path: String,
    #[prop(into)] label: String,
    help: &'static str,
    #[prop(optional, into)] placeholder: String,
    get: impl Fn(&ScenarioParams) -> String + Send + Sync + 'static,
    set: impl Fn(&mut ScenarioParams, String) + Send + Sync + 'static,
) -> impl IntoView {
    let head = FieldHead {
        state,
        path,
        label,
        help,
    };
    text_field(head, placeholder, Arc::new(get), Arc::new(set))
}

/// The body of [`TextField`], not generic over its closures.
fn text_field(
    head: FieldHead,
    placeholder: String,
    get: Reader<String>,
    set: Writer<String>,
) -> AnyView {
    let FieldHead {
        state,
        path,
        label,
        help,
    } = head;
    let error = error_of(state, &path);
    let ids = Ids::of(&path);
    let control = view! {
        <input
            id=ids.control.clone()
            type="text"
            autocomplete="off"
            placeholder=placeholder
            prop:value=move || state.params.with(|p| get(p))
            on:input=move |event| {
                let value = event_target_value(&event);
                state.params.update(|p| set(p, value));
            }
            aria-invalid=move || if error.with(Option::is_some) { "true" } else { "false" }
            aria-describedby=ids.described_by()
        />
    }
    .into_any();
    framed("field", ids, label, String::new(), help, error, control)
}

/// A drop-down of (value, label) options.
#[component]
pub fn SelectField(
    state: AppState,
    #[prop(into)] path: String,
    #[prop(into)] label: String,
    help: &'static str,
    /// (value, label) pairs; may change with the scenario.
    options: impl Fn(&ScenarioParams) -> Vec<(String, String)> + Send + Sync + 'static,
    get: impl Fn(&ScenarioParams) -> String + Send + Sync + 'static,
    set: impl Fn(&mut ScenarioParams, &str) + Send + Sync + 'static,
) -> impl IntoView {
    let head = FieldHead {
        state,
        path,
        label,
        help,
    };
    select_field(head, Arc::new(options), Arc::new(get), Arc::new(set))
}

/// The body of [`SelectField`], not generic over its closures.
fn select_field(
    head: FieldHead,
    options: Reader<Vec<(String, String)>>,
    get: Reader<String>,
    set: SetText,
) -> AnyView {
    let FieldHead {
        state,
        path,
        label,
        help,
    } = head;
    let error = error_of(state, &path);
    let options = Memo::new(move |_| state.params.with(|p| options(p)));
    let current = Memo::new(move |_| state.params.with(|p| get(p)));
    let ids = Ids::of(&path);
    let control = view! {
        <select
            id=ids.control.clone()
            on:change=move |event| {
                let value = event_target_value(&event);
                state.params.update(|p| set(p, &value));
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
    .into_any();
    framed("field", ids, label, String::new(), help, error, control)
}

/// A checkbox.
#[component]
pub fn CheckField(
    state: AppState,
    #[prop(into)] path: String,
    #[prop(into)] label: String,
    help: &'static str,
    get: impl Fn(&ScenarioParams) -> bool + Send + Sync + 'static,
    set: impl Fn(&mut ScenarioParams, bool) + Send + Sync + 'static,
) -> impl IntoView {
    let head = FieldHead {
        state,
        path,
        label,
        help,
    };
    check_field(head, Arc::new(get), Arc::new(set))
}

/// The body of [`CheckField`], not generic over its closures.
fn check_field(head: FieldHead, get: Reader<bool>, set: Writer<bool>) -> AnyView {
    let FieldHead {
        state,
        path,
        label,
        help,
    } = head;
    let id = field_id(&path);
    let help_id = format!("{id}-help");
    view! {
        <div class="field check">
            <input
                id=id.clone()
                type="checkbox"
                prop:checked=move || state.params.with(|p| get(p))
                on:change=move |event| {
                    let checked = event_target_checked(&event);
                    state.params.update(|p| set(p, checked));
                }
                aria-describedby=help_id.clone()
            />
            <label for=id>{label}</label>
            <span class="tip" role="tooltip" id=help_id>
                {help}
            </span>
        </div>
    }
    .into_any()
}

/// A "?" button that shows an explanation on hover and focus, for terms
/// in the results.
#[component]
pub fn Info(#[prop(into)] topic: String, text: &'static str) -> impl IntoView {
    static NEXT_ID: AtomicUsize = AtomicUsize::new(0);
    let id = format!("info-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
    view! {
        <span class="info">
            <button
                type="button"
                class="info-button"
                aria-label=format!("What is {topic}?")
                aria-describedby=id.clone()
            >
                "?"
            </button>
            <span class="tip" role="tooltip" id=id>
                {text}
            </span>
        </span>
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

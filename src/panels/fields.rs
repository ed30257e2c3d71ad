//! Form fields: a label, a box, its unit, a short explanation shown on
//! hover and on keyboard focus, and the engine's message when the value is
//! invalid. A panel lists its fields as [`Field`]s, each made by [`number`],
//! [`list`], [`counts`], [`limits`], [`text`], [`menu`], [`choice`] or
//! [`check`] from the [`At`] of
//! the one value it edits (which names the engine's field path for the
//! field's id and message), and draws them with [`fields`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use leptos::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sojourn_engine::ScenarioParams;

use crate::form::{
    NOT_A_COUNT, NOT_A_DURATION, NOT_A_NUMBER, counts_text, duration_text, list_text, parse_count,
    parse_counts, parse_duration_s, parse_list, parse_number,
};
use crate::format::input_text;
use crate::panels::at::{At, Number, Reader, Writer};
use crate::registry::{Input, Kind, Words, enum_parse, enum_text};
use crate::state::AppState;

mod boxes;
mod frame;

use boxes::{Look, check_box, menu_box, text_box};
use frame::{Frame, Ids, echo_line, framed};

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

/// One field of the form: the place of its value, its label, its unit,
/// the explanation shown on hover and focus, and its control. A panel lists
/// its fields and [`fields`] draws them in order.
pub struct Field {
    path: String,
    label: String,
    /// The unit shown after the box ("" for none).
    unit: String,
    help: &'static str,
    /// What an empty box shows (number and text boxes).
    placeholder: String,
    control: Control,
}

/// How a field edits its value.
enum Control {
    /// A number box; `set` receives `None` only for `optional` boxes left empty.
    Number {
        kind: Kind,
        optional: bool,
        get: Reader<Option<f64>>,
        set: Writer<Option<f64>>,
    },
    /// Numbers typed as a list ("0.5, 1, 2").
    List {
        get: Reader<Vec<f64>>,
        set: Writer<Vec<f64>>,
    },
    /// Whole numbers typed as a list ("64, 256"), "none" for no limit
    /// where `none_allowed`; empty is `None`.
    Counts {
        none_allowed: bool,
        get: Reader<Option<Vec<Option<u32>>>>,
        set: Writer<Option<Vec<Option<u32>>>>,
    },
    /// Free text (names, dates, labels).
    Text {
        get: Reader<String>,
        set: Writer<String>,
    },
    /// A drop-down of (value, label) options, which may change with the scenario.
    Menu {
        options: Reader<Vec<(String, String)>>,
        get: Reader<String>,
        set: Writer<String>,
    },
    Check {
        get: Reader<bool>,
        set: Writer<bool>,
    },
}

/// A number box for the value at `at`, named by `words` (an input of the
/// registry, or [`Words`] made from one of its tables); the value's type
/// says how the box reads (see [`Number`]) unless the words say otherwise,
/// as [`Field::percent`] and [`Field::duration`] do.
pub fn number<T: Number>(at: At<T>, words: impl Into<Words>) -> Field {
    let At { path, get, set } = at;
    let control = Control::Number {
        kind: T::KIND,
        optional: T::OPTIONAL,
        get: Arc::new(move |p| get(p).and_then(T::shown)),
        set: Arc::new(move |p, typed| {
            if let Some(value) = T::stored(typed) {
                set(p, value);
            }
        }),
    };
    Field::new(path, words.into(), control)
}

/// A list of numbers typed as text ("0.5, 1, 2"), with their unit.
pub fn list(at: At<Vec<f64>>, words: impl Into<Words>) -> Field {
    let get = or_default(at.get);
    Field::new(at.path, words.into(), Control::List { get, set: at.set })
}

/// Whole numbers typed as a list ("64, 256"), or left empty (`None`, the
/// default the placeholder names).
pub fn counts(at: At<Option<Vec<u32>>>, words: impl Into<Words>) -> Field {
    let at = at.map(
        |values| values.map(|v| v.into_iter().map(Some).collect()),
        |values: Option<Vec<Option<u32>>>| Some(values.map(|v| v.into_iter().flatten().collect())),
    );
    count_list(at, false, words.into())
}

/// Like [`counts`], with "none" for an entry without a limit.
pub fn limits(at: At<Option<Vec<Option<u32>>>>, words: impl Into<Words>) -> Field {
    count_list(at, true, words.into())
}

fn count_list(at: At<Option<Vec<Option<u32>>>>, none_allowed: bool, words: Words) -> Field {
    let control = Control::Counts {
        none_allowed,
        get: or_default(at.get),
        set: at.set,
    };
    Field::new(at.path, words, control)
}

/// A free-text box.
pub fn text(at: At<String>, words: impl Into<Words>) -> Field {
    let get = or_default(at.get);
    Field::new(at.path, words.into(), Control::Text { get, set: at.set })
}

/// A checkbox.
pub fn check(at: At<bool>, words: impl Into<Words>) -> Field {
    let get = or_default(at.get);
    Field::new(at.path, words.into(), Control::Check { get, set: at.set })
}

/// A drop-down of `options`, (value, label) pairs.
pub fn menu(
    at: At<String>,
    words: impl Into<Words>,
    options: impl Fn(&ScenarioParams) -> Vec<(String, String)> + Send + Sync + 'static,
) -> Field {
    let control = Control::Menu {
        options: Arc::new(options),
        get: or_default(at.get),
        set: at.set,
    };
    Field::new(at.path, words.into(), control)
}

/// A drop-down of an enum's values, by their JSON names ("fcfs").
pub fn choice<T: Serialize + DeserializeOwned + 'static>(
    at: At<T>,
    words: impl Into<Words>,
    options: impl Fn(&ScenarioParams) -> Vec<(String, String)> + Send + Sync + 'static,
) -> Field {
    let at = at.map(|value| enum_text(&value), |name: String| enum_parse(&name));
    menu(at, words, options)
}

/// Menu options from (value, label) pairs.
pub fn options(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(value, label)| (value.to_string(), label.to_string()))
        .collect()
}

/// A reader that gives the default (an empty box) where the value is missing.
fn or_default<T: Default + 'static>(get: Reader<Option<T>>) -> Reader<T> {
    Arc::new(move |p| get(p).unwrap_or_default())
}

impl Field {
    fn new(path: String, words: Words, control: Control) -> Field {
        let Words {
            label,
            unit,
            help,
            kind,
        } = words;
        let field = Field {
            path,
            label,
            unit: unit.to_string(),
            help,
            placeholder: String::new(),
            control,
        };
        match kind {
            Some(kind) => field.reads_as(kind),
            None => field,
        }
    }

    pub fn placeholder(mut self, text: &str) -> Field {
        self.placeholder = text.to_string();
        self
    }

    /// A fraction, typed and shown as a percentage.
    pub fn percent(self) -> Field {
        self.reads_as(Kind::Percent)
    }

    /// A number of seconds typed with a unit.
    pub fn duration(self) -> Field {
        self.reads_as(Kind::Duration)
    }

    /// A number box that reads as `new` (see [`Kind`]).
    pub fn reads_as(mut self, new: Kind) -> Field {
        if let Control::Number { kind, .. } = &mut self.control {
            *kind = new;
        }
        self
    }

    /// The field in the page.
    pub fn view(self, state: AppState) -> AnyView {
        let Field {
            path,
            label,
            unit,
            help,
            placeholder,
            control,
        } = self;
        let ids = Ids::of(&path);
        let listed = matches!(control, Control::List { .. } | Control::Counts { .. });
        let error = error_of(state, &path, listed);
        let mut echo = None;
        let (class, control) = match control {
            Control::Number {
                kind,
                optional,
                get,
                set,
            } => {
                let typed = Typed {
                    show: move |value: &Option<f64>| {
                        value.map(|v| kind.show(v)).unwrap_or_default()
                    },
                    parse: move |text: &str| {
                        if text.trim().is_empty() && optional {
                            Ok(None)
                        } else {
                            kind.parse(text).map(Some)
                        }
                    },
                };
                let echoes = kind == Kind::Duration;
                let look = Look {
                    inputmode: Some(kind.input_mode()),
                    spellcheck: Some("false"),
                    placeholder: Some(placeholder),
                    echo: echoes,
                };
                let (text, on_input) = typed.wire(state, path, get, set);
                let input = text_box(&ids, error, look, move || text.get(), on_input);
                if echoes {
                    echo = Some(echo_line(&ids, text));
                }
                ("field", input)
            }
            Control::List { get, set } => {
                let typed = Typed {
                    show: |values: &Vec<f64>| list_text(values),
                    parse: |text: &str| parse_list(text).ok_or(NOT_A_LIST),
                };
                let look = Look {
                    inputmode: None,
                    spellcheck: Some("false"),
                    placeholder: None,
                    echo: false,
                };
                let (text, on_input) = typed.wire(state, path, get, set);
                (
                    "field wide",
                    text_box(&ids, error, look, move || text.get(), on_input),
                )
            }
            Control::Counts {
                none_allowed,
                get,
                set,
            } => {
                let typed = Typed {
                    show: counts_text,
                    parse: move |text: &str| parse_counts(text, none_allowed),
                };
                let look = Look {
                    inputmode: None,
                    spellcheck: Some("false"),
                    placeholder: Some(placeholder),
                    echo: false,
                };
                let (text, on_input) = typed.wire(state, path, get, set);
                (
                    "field wide",
                    text_box(&ids, error, look, move || text.get(), on_input),
                )
            }
            Control::Text { get, set } => {
                let look = Look {
                    inputmode: None,
                    spellcheck: None,
                    placeholder: Some(placeholder),
                    echo: false,
                };
                let value = move || state.params.with(|p| get(p));
                let on_input = move |event: leptos::ev::Event| {
                    let value = event_target_value(&event);
                    state.params.update(|p| set(p, value));
                };
                ("field", text_box(&ids, error, look, value, on_input))
            }
            Control::Menu { options, get, set } => {
                ("field", menu_box(state, &ids, options, get, set))
            }
            Control::Check { get, set } => return check_box(state, ids, label, help, get, set),
        };
        let frame = Frame {
            class,
            ids,
            label,
            unit,
            help,
            error,
            echo,
        };
        framed(frame, control)
    }
}

/// Draws `list` in order.
pub fn fields(state: AppState, list: Vec<Field>) -> AnyView {
    list.into_iter()
        .map(|field| field.view(state))
        .collect_view()
        .into_any()
}

/// What to say when a list box holds something other than numbers.
const NOT_A_LIST: &str = "enter numbers separated by commas";

/// The engine's (or the parser's) message for `path`, as it changes; for a
/// list box (`listed`) also the engine's message for one of its entries.
fn error_of(state: AppState, path: &str, listed: bool) -> Memo<Option<String>> {
    let path = path.to_string();
    Memo::new(move |_| {
        if listed {
            state.list_error(&path)
        } else {
            state.field_error(&path)
        }
    })
}

/// How a box whose text must parse shows and reads a value of type `T`.
struct Typed<S, P> {
    /// The text for a value.
    show: S,
    /// The value typed text means; the error says what to type instead.
    parse: P,
}

impl<T, S, P> Typed<S, P>
where
    T: PartialEq + Send + Sync + 'static,
    S: Fn(&T) -> String + Send + Sync + 'static,
    P: Fn(&str) -> Result<T, &'static str> + Clone + Send + Sync + 'static,
{
    /// The box's text and its input handler. Text that parses is written
    /// to the scenario (when it changes the value); text that does not is
    /// kept in `unparsed` under the field's path, which blocks runs and
    /// shows as the field's error. The text follows changes made elsewhere
    /// (a preset, an import, a reset) unless it already reads as the new value.
    fn wire(
        self,
        state: AppState,
        path: String,
        get: Reader<T>,
        set: Writer<T>,
    ) -> (RwSignal<String>, impl Fn(leptos::ev::Event) + 'static) {
        let Typed { show, parse } = self;
        let text = RwSignal::new(state.params.with_untracked(|p| show(&get(p))));
        let (follow, reads) = (get.clone(), parse.clone());
        Effect::new(move |_| {
            let value = state.params.with(|p| follow(p));
            if text.with_untracked(|t| reads(t)).as_ref().ok() != Some(&value) {
                text.set(show(&value));
            }
        });
        let unparsed_path = path.clone();
        on_cleanup(move || {
            state.unparsed.update(|u| {
                u.remove(&unparsed_path);
            });
        });
        let on_input = move |event: leptos::ev::Event| {
            let typed = event_target_value(&event);
            text.set(typed.clone());
            match parse(&typed) {
                Ok(value) => {
                    state.unparsed.update(|u| {
                        u.remove(&path);
                    });
                    if state.params.with_untracked(|p| get(p)) != value {
                        state.params.update(|p| set(p, value));
                    }
                }
                Err(message) => state.unparsed.update(|u| {
                    u.insert(path.clone(), message.to_string());
                }),
            }
        };
        (text, on_input)
    }
}

/// A free-text field of the registry's `input` as a component (the
/// scenario's name, above the panels).
#[component]
pub fn TextField(
    state: AppState,
    input: &'static Input,
    get: impl Fn(&ScenarioParams) -> String + Send + Sync + 'static,
    set: impl Fn(&mut ScenarioParams, String) + Send + Sync + 'static,
) -> impl IntoView {
    text(At::new(input.path, move |p| Some(get(p)), set), input).view(state)
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

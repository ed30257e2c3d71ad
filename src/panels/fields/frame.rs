//! The frame around every field's control: the ids that tie its label,
//! explanation, error and echo to the control, and the markup they share.

use leptos::prelude::*;

use super::field_id;
use crate::form::duration_echo;

/// The ids of a field's control and of the texts that describe it.
pub(super) struct Ids {
    pub control: String,
    pub help: String,
    pub error: String,
    /// What a duration box reads as (see [`duration_echo`]).
    pub echo: String,
}

impl Ids {
    pub fn of(path: &str) -> Ids {
        let control = field_id(path);
        Ids {
            help: format!("{control}-help"),
            error: format!("{control}-error"),
            echo: format!("{control}-echo"),
            control,
        }
    }

    /// For the control's `aria-describedby`.
    pub fn described_by(&self) -> String {
        format!("{} {}", self.help, self.error)
    }
}

/// What surrounds a field's control.
pub(super) struct Frame {
    pub class: &'static str,
    pub ids: Ids,
    pub label: String,
    /// Shown after the box ("" for none).
    pub unit: String,
    pub help: &'static str,
    pub error: Memo<Option<String>>,
    /// Under the box: what a duration box reads as.
    pub echo: Option<AnyView>,
}

/// The frame every field shares: the label, the box with the control and
/// its unit (an empty unit is hidden), the explanation shown on hover and
/// focus, the echo of a duration, and the engine's message for the field's
/// path.
pub(super) fn framed(frame: Frame, control: AnyView) -> AnyView {
    let Frame {
        class,
        ids,
        label,
        unit,
        help,
        error,
        echo,
    } = frame;
    view! {
        <div class=class class:invalid=move || error.with(Option::is_some)>
            <label for=ids.control>{label}</label>
            <div class="field-box">{control} <span class="unit">{unit}</span></div>
            {echo}
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

/// The line under a duration box saying what its text reads as ("90 min
/// = 1 h 30 min"), empty when the text says it plainly already.
pub(super) fn echo_line(ids: &Ids, text: RwSignal<String>) -> AnyView {
    view! {
        <p class="field-echo" id=ids.echo.clone() aria-live="polite">
            {move || text.with(|t| duration_echo(t))}
        </p>
    }
    .into_any()
}

//! What the page says about the inputs: why Run is disabled, and the
//! message under each field (text that does not read, or the engine's).

use leptos::prelude::*;

use super::AppState;
use crate::words;

impl AppState {
    /// Why Run is disabled, or `None` when the scenario can run.
    pub fn blocked_reason(&self) -> Option<String> {
        let unparsed = self.unparsed.with(|u| {
            u.iter()
                .next()
                .map(|(field, reason)| self.params.with(|p| words::message(field, reason, Some(p))))
        });
        if let Some(reason) = unparsed {
            return Some(format!("Fix the inputs first ({reason})."));
        }
        self.validation.with(|v| {
            v.as_ref().map(|error| {
                let first = error
                    .errors
                    .first()
                    .map(|e| self.params.with(|p| words::field_message(e, Some(p))))
                    .unwrap_or_default();
                match error.errors.len() {
                    1 => format!("Fix the scenario first ({first})."),
                    n => format!("Fix the scenario first: {n} problems, e.g. {first}."),
                }
            })
        })
    }

    /// The message for a list box at `path`: its own, or the engine's for
    /// one of its entries (`path[2]`).
    pub fn list_error(&self, path: &str) -> Option<String> {
        if let Some(message) = self.field_error(path) {
            return Some(message);
        }
        let entry = |field: &str| {
            field
                .strip_prefix(path)
                .and_then(|rest| rest.strip_prefix('['))
                .and_then(|rest| rest.strip_suffix(']'))
                .is_some_and(|index| index.parse::<usize>().is_ok())
        };
        self.validation.with(|v| {
            v.as_ref()?
                .errors
                .iter()
                .find(|e| entry(&e.field))
                .map(|e| e.reason.clone())
        })
    }

    /// The message for the field at `path`: text that is not a number, or the engine's.
    pub fn field_error(&self, path: &str) -> Option<String> {
        if let Some(message) = self.unparsed.with(|u| u.get(path).cloned()) {
            return Some(message);
        }
        self.validation.with(|v| {
            v.as_ref()
                .and_then(|e| e.for_field(path).map(str::to_string))
        })
    }
}

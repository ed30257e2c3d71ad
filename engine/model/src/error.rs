//! Validation errors: every problem names the field and the reason.
//!
//! Raw input ([`ScenarioParams`](crate::params::ScenarioParams)) is checked once, by
//! [`Scenario::try_from`](crate::model::Scenario::try_from); every problem found is collected (not only the
//! first), so a form can show each one beside its field.

use std::fmt;

use serde::Serialize;

/// One problem with one field, e.g. `classes\[0\].input_tokens.p90: must be greater
/// than the median (1000), got 800`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldError {
    /// Dotted path of the field, as it appears in the scenario JSON.
    pub field: String,
    /// What is wrong, in words a planner understands.
    pub reason: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

/// All the problems found in a scenario. Never empty.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioError {
    pub errors: Vec<FieldError>,
}

impl ScenarioError {
    pub fn single(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ScenarioError {
            errors: vec![FieldError {
                field: field.into(),
                reason: reason.into(),
            }],
        }
    }

    /// The first message for `field`, if any (for inline form validation).
    pub fn for_field(&self, field: &str) -> Option<&str> {
        self.errors
            .iter()
            .find(|e| e.field == field)
            .map(|e| e.reason.as_str())
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// Collects field errors while a scenario is checked. `at` scopes a path prefix.
#[derive(Default)]
pub struct Checker {
    prefix: Vec<String>,
    errors: Vec<FieldError>,
}

impl Checker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `f` with `segment` appended to the field path.
    pub fn at<T>(&mut self, segment: impl Into<String>, f: impl FnOnce(&mut Self) -> T) -> T {
        self.prefix.push(segment.into());
        let out = f(self);
        self.prefix.pop();
        out
    }

    pub fn path(&self, field: &str) -> String {
        let mut path = String::new();
        for segment in &self.prefix {
            if !path.is_empty() && !segment.starts_with('[') {
                path.push('.');
            }
            path.push_str(segment);
        }
        if !field.is_empty() {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(field);
        }
        path
    }

    pub fn fail(&mut self, field: &str, reason: impl Into<String>) {
        let field = self.path(field);
        self.errors.push(FieldError {
            field,
            reason: reason.into(),
        });
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Checks `value` is finite and strictly positive.
    pub fn positive(&mut self, field: &str, value: f64) -> bool {
        if value.is_finite() && value > 0.0 {
            true
        } else {
            self.fail(
                field,
                format!("must be a positive number, got {}", show(value)),
            );
            false
        }
    }

    /// Checks `value` is finite and not negative.
    pub fn non_negative(&mut self, field: &str, value: f64) -> bool {
        if value.is_finite() && value >= 0.0 {
            true
        } else {
            self.fail(field, format!("must be zero or more, got {}", show(value)));
            false
        }
    }

    /// Checks a hardware rate (TFLOP/s or GB/s) is within [`RATE_RANGE`]:
    /// positive, and within a factor of 10^9 of every accelerator there is
    /// either way, so that a step's time stays a finite, positive number.
    pub fn rate(&mut self, field: &str, value: f64) -> bool {
        let (low, high) = RATE_RANGE;
        if !(value.is_finite() && value > 0.0) {
            return self.positive(field, value);
        }
        if (low..=high).contains(&value) {
            return true;
        }
        self.fail(
            field,
            format!(
                "must be between {low:e} and {high:e} (so that a step's time stays finite), got {}",
                show(value)
            ),
        );
        false
    }

    /// Checks `low <= value <= high` (and finite).
    pub fn within(&mut self, field: &str, value: f64, low: f64, high: f64) -> bool {
        if value.is_finite() && value >= low && value <= high {
            true
        } else {
            self.fail(
                field,
                format!(
                    "must be between {} and {}, got {}",
                    show(low),
                    show(high),
                    show(value)
                ),
            );
            false
        }
    }

    /// Checks an integer is at least `low`.
    pub fn at_least(&mut self, field: &str, value: u64, low: u64) -> bool {
        if value >= low {
            true
        } else {
            self.fail(field, format!("must be at least {low}, got {value}"));
            false
        }
    }

    pub fn finish(self) -> Result<(), ScenarioError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ScenarioError {
                errors: self.errors,
            })
        }
    }
}

/// The range of a hardware rate (peak TFLOP/s, bandwidth GB/s) validation
/// accepts: real accelerators sit near 10^0 to 10^4 in both units; the
/// tests' slow toy accelerators go down to 10^-5.
pub const RATE_RANGE: (f64, f64) = (1e-9, 1e9);

/// Formats a number for an error message: NaN and infinities by name, integers
/// without a fraction.
pub fn show(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "infinity" } else { "-infinity" }.to_string()
    } else if value == value.trunc() && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

//! One fuzz input: what kind it is, its exact text, and the context its
//! pipeline needs (the scenario a file is imported into, the link a damaged
//! link was made from). A reproducer file holds an [`Input`] as it was run.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The kinds of input, each read by its own parser and then, where it
/// gives a scenario, validated and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Scenario JSON (a file, an import, the CLI's `run`).
    Scenario,
    /// A request trace CSV, imported as the page does.
    Trace,
    /// A table of (prompt, output) lengths as CSV, a class's `lengths`.
    Lengths,
    /// Measurements (CSV or JSON) to fit the step-time model to.
    Calibration,
    /// The search lists typed in the page's plan panel.
    Search,
    /// A share link (or a query string holding one).
    Link,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Scenario,
        Kind::Trace,
        Kind::Lengths,
        Kind::Calibration,
        Kind::Search,
        Kind::Link,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Scenario => "scenario",
            Kind::Trace => "trace",
            Kind::Lengths => "lengths",
            Kind::Calibration => "calibration",
            Kind::Search => "search",
            Kind::Link => "link",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == text)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One input, as generated and as replayed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Input {
    pub kind: Kind,
    /// Which path of the kind's pipeline it takes ("replay" or "fit" for a
    /// trace, "storage" for a link read from the browser's storage, ...).
    pub variant: String,
    /// How it was made: its seed input and the mutations, in words.
    pub origin: String,
    /// The text the parser reads, exactly.
    pub text: String,
    /// The scenario (JSON) a file is imported into, or the undamaged link a
    /// damaged one was made from; empty when the kind needs none.
    #[serde(default)]
    pub base: String,
}

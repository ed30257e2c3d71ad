//! What running one input gives, and what it is judged against: the
//! limits, the stage an input reached, its findings, the plan's figures and
//! the timings. `exec` fills them; `campaign` and `summary` read them.

use serde::{Deserialize, Serialize};

use crate::input::{Input, Kind};

/// What the harness checks against, and what it may run.
#[derive(Clone, Debug)]
pub struct Limits {
    /// An input taking longer is a finding \[s\].
    pub time_s: f64,
    /// An input whose heap peaks above this is a finding \[bytes\].
    pub memory_bytes: u64,
    /// One validation taking longer is a finding \[s\].
    pub validate_s: f64,
    /// Run whole plans (see [`Limits::plan_max_requests`]).
    pub plans: bool,
    /// A plan runs only when its estimated simulated requests are at most
    /// this many.
    pub plan_max_requests: f64,
    /// A plan still running after this long is stopped, and a finding \[s\].
    pub plan_time_s: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time_s: 10.0,
            memory_bytes: 1_000_000_000,
            validate_s: 1.0,
            plans: false,
            plan_max_requests: 2e6,
            plan_time_s: 30.0,
        }
    }
}

/// How far an input got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Its parser refused it, with a message (a JSON or CSV error, a
    /// refused link, a typed list that does not read).
    NotRead,
    /// Read, then refused by validation (field errors).
    Invalid,
    /// Read and valid, but nothing to simulate (search lists, a fit).
    Checked,
    /// Valid, refused by the run's budget before it started.
    Budget,
    /// Valid, stopped by the work budget (`RunOptions::max_work`).
    WorkCap,
    /// Valid, simulated to a report.
    Ran,
    /// A panic ended it (see its finding).
    Panicked,
}

/// The kinds of finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum What {
    /// A panic, caught.
    Panic,
    /// The input took longer than the time limit.
    OverTime,
    /// The input's heap peaked above the memory limit.
    OverMemory,
    /// The worker was stopped: no end within the hang limit.
    Hang,
    /// The worker died (the hard memory cap, an abort, a signal).
    Crash,
    /// A validation error (or a parse error on well-formed JSON) that
    /// names no field.
    NoField,
    /// One validation took longer than its limit.
    SlowValidation,
    /// The report does not read back from its own JSON, or reads back
    /// different.
    RoundTrip,
    /// A report figure or record breaks what the docs say of it.
    Invariant,
    /// A damaged format-2 link decoded to another scenario.
    DamagedLinkAccepted,
    /// The query-string helpers disagree about the link parameter.
    QueryString,
    /// A plan ran past its own time limit.
    PlanOverTime,
    /// A run's heap peaked well above the estimate its budget was checked
    /// on (more than 1.25 x the estimate + 64 MB).
    OverEstimate,
}

impl What {
    pub fn label(self) -> &'static str {
        match self {
            What::Panic => "panic",
            What::OverTime => "over time",
            What::OverMemory => "over memory",
            What::Hang => "hang",
            What::Crash => "crash",
            What::NoField => "no field",
            What::SlowValidation => "slow validation",
            What::RoundTrip => "report round trip",
            What::Invariant => "invariant",
            What::DamagedLinkAccepted => "damaged link accepted",
            What::QueryString => "query string",
            What::PlanOverTime => "plan over time",
            What::OverEstimate => "memory over estimate",
        }
    }
}

/// One finding: what, the step it happened in, and the details.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub what: What,
    /// The call in progress ("simulate", "Scenario::try_from", ...).
    pub step: String,
    /// The panic's message and place, the time, the broken rule.
    pub detail: String,
}

/// What a plan did, when one ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanStat {
    /// The up-front checks refused it (budget or an invalid case).
    pub refused: bool,
    /// It ran (to a result, an error or its time limit).
    pub ran: bool,
    pub seconds: f64,
    /// Requests it was estimated to simulate, and did simulate.
    pub estimated_requests: f64,
    pub simulated_requests: f64,
    /// Why the checks refused it, cut short.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub refusal: String,
}

/// Everything known about one input after it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub index: u64,
    pub kind: Kind,
    pub variant: String,
    pub stage: Stage,
    /// Wall time of the input, a plan's excepted \[s\].
    pub seconds: f64,
    /// CPU time of the input, a plan's excepted \[s\]: what its time is
    /// judged by (`cpu.rs`).
    #[serde(default)]
    pub cpu_seconds: f64,
    /// The longest single validation \[s\].
    pub validate_seconds: f64,
    /// The heap's peak above what was live before \[bytes\].
    pub peak_bytes: u64,
    pub findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanStat>,
    /// Requests and engine events of the run, when one ran to a report.
    #[serde(default)]
    pub requests: u64,
    #[serde(default)]
    pub events: u64,
    /// A fit was skipped as too large to run (benchmark points).
    #[serde(default)]
    pub fit_skipped: bool,
    /// The run sent more requests than its up-front estimate (closed loops
    /// whose requests are mostly refused as too long): bounded by the run's
    /// own accounting, not by the estimate.
    #[serde(default)]
    pub sent_over_estimate: bool,
    /// Why it was refused (the parser's or validation's first message,
    /// cut short), if it was.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub refusal: String,
    /// The input, sent along when there is a finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Input>,
}

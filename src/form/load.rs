//! A class's load mode as the page edits it (the engine's `LoadParams`):
//! an open stream, a fixed count, an offline batch, closed-loop clients
//! with their think time, or a replayed trace (which only an imported trace
//! gives: the menu offers it to a class that has one).

use sojourn_engine::{ClassParams, DistParams, LoadParams};

use super::{convert_shape, shape_kind};

/// The load modes the page offers: (value, label). Short enough that the
/// chosen one shows whole in its box (the note under it says more).
pub const LOAD_KINDS: [(&str, &str); 4] = [
    ("open", "open (Poisson batches)"),
    ("fixed_count", "N requests (Poisson)"),
    ("offline", "N requests at time 0"),
    ("closed_loop", "closed loop: C clients"),
];

/// The menu entry of a class that replays a trace.
pub const TRACE_KIND: (&str, &str) = ("trace", "replay the imported trace");

/// The think-time menu's first entry: clients send again at once.
pub const NO_THINK: (&str, &str) = ("none", "none (send again at once)");

/// The count a class starts with when it becomes counted.
const STARTING_REQUESTS: u32 = 1000;
/// The clients a class starts with when it becomes a closed loop.
const STARTING_CLIENTS: u32 = 8;
/// The think time a closed loop starts with when one is chosen \[ms\].
const STARTING_THINK_MS: f64 = 1000.0;

/// Which of [`LOAD_KINDS`] a class's load is.
pub fn load_kind(class: &ClassParams) -> &'static str {
    match class.load {
        LoadParams::Open => "open",
        LoadParams::FixedCount { .. } => "fixed_count",
        LoadParams::Offline { .. } => "offline",
        LoadParams::ClosedLoop { .. } => "closed_loop",
        LoadParams::Trace { .. } => TRACE_KIND.0,
    }
}

/// The load modes the menu offers `class`: [`LOAD_KINDS`], and
/// [`TRACE_KIND`] for a class that replays a trace.
pub fn load_kinds(class: &ClassParams) -> Vec<(&'static str, &'static str)> {
    let mut kinds = LOAD_KINDS.to_vec();
    if load_kind(class) == TRACE_KIND.0 {
        kinds.push(TRACE_KIND);
    }
    kinds
}

/// The requests a class sends in all, when it sends a fixed number.
pub fn load_requests(class: &ClassParams) -> Option<u32> {
    match class.load {
        LoadParams::FixedCount { requests } | LoadParams::Offline { requests } => Some(requests),
        LoadParams::ClosedLoop { requests, .. } => requests,
        LoadParams::Trace { ref requests } => u32::try_from(requests.len()).ok(),
        LoadParams::Open => None,
    }
}

/// Switches a class's load to `kind` (a value of [`LOAD_KINDS`]), keeping
/// its count where both modes have one. Offline and closed-loop classes
/// set their own send times, so switching to them removes an hourly
/// profile and batch sizes (the engine refuses both there); switching away
/// from a replayed trace removes its requests (the fitted distributions
/// stay). The return value names what was removed, for the page to say so
/// and offer it back. A trace comes only from an import: switching to it
/// does nothing.
pub fn set_load_kind(class: &mut ClassParams, kind: &str) -> Vec<&'static str> {
    if kind == load_kind(class) || kind == TRACE_KIND.0 {
        return Vec::new();
    }
    let count = load_requests(class);
    let mut removed = Vec::new();
    if load_kind(class) == TRACE_KIND.0 {
        removed.push("its traced requests");
    }
    class.load = match kind {
        "fixed_count" => LoadParams::FixedCount {
            requests: count.unwrap_or(STARTING_REQUESTS),
        },
        "offline" => LoadParams::Offline {
            requests: count.unwrap_or(STARTING_REQUESTS),
        },
        "closed_loop" => LoadParams::ClosedLoop {
            clients: STARTING_CLIENTS,
            think_ms: None,
            requests: count,
        },
        _ => LoadParams::Open,
    };
    if matches!(kind, "offline" | "closed_loop") {
        if class.time_of_day.take().is_some() {
            removed.push("its hourly profile");
        }
        if class.batch_size != DistParams::constant(1.0) {
            class.batch_size = DistParams::constant(1.0);
            removed.push("its batch sizes");
        }
    }
    removed
}

/// A closed loop's think-time distribution.
pub fn think(class: &ClassParams) -> Option<&DistParams> {
    match &class.load {
        LoadParams::ClosedLoop { think_ms, .. } => think_ms.as_ref(),
        _ => None,
    }
}

/// A closed loop's think-time distribution, to change it.
pub fn think_mut(class: &mut ClassParams) -> Option<&mut DistParams> {
    match &mut class.load {
        LoadParams::ClosedLoop { think_ms, .. } => think_ms.as_mut(),
        _ => None,
    }
}

/// The think time's menu value: [`NO_THINK`] or a shape's.
pub fn think_kind(class: &ClassParams) -> &'static str {
    think(class).map_or(NO_THINK.0, |d| shape_kind(&d.shape))
}

/// Sets the think time's family (keeping its typical value), or removes
/// it with [`NO_THINK`]. Only a closed loop has one.
pub fn set_think_kind(class: &mut ClassParams, kind: &str) {
    let LoadParams::ClosedLoop { think_ms, .. } = &mut class.load else {
        return;
    };
    *think_ms = if kind == NO_THINK.0 {
        None
    } else {
        let start = think_ms
            .take()
            .unwrap_or_else(|| DistParams::constant(STARTING_THINK_MS));
        Some(DistParams {
            shape: convert_shape(&start.shape, kind),
            ..start
        })
    };
}

/// A line for the class's summary: how it sends ("" for an open stream).
pub fn load_summary(class: &ClassParams) -> String {
    match &class.load {
        LoadParams::Open => String::new(),
        LoadParams::FixedCount { requests } => format!("{requests} requests"),
        LoadParams::Offline { requests } => format!("{requests} requests at time 0"),
        LoadParams::ClosedLoop {
            clients, requests, ..
        } => match requests {
            Some(n) => format!("{clients} clients, {n} requests"),
            None => format!("{clients} clients"),
        },
        LoadParams::Trace { requests } => format!("replays {} traced requests", requests.len()),
    }
}

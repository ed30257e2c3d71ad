//! A class's load mode, validated: how many requests it sends and when
//! ([`LoadParams`] as written; docs/engine.md, Workload).
//!
//! Open classes send over the horizon at their rate. A fixed count, an
//! offline class and a closed loop with a total send a number of requests
//! the horizon does not set: a run holding one ends when every request is
//! done, never at a drain (so `run.drain_s` contradicts it). A closed loop
//! must not send without end at one instant: when its requests can be
//! refused, its clients need a think time or a total.

use crate::error::{Checker, show};
use crate::model::dist::Dist;
use crate::params::trace::{MAX_TRACE_ROWS, TracedRequest, check_traced};
use crate::params::{ClassParams, DistParams, LoadParams, ScenarioParams};

/// Most closed-loop clients in one class.
pub const MAX_CLIENTS: u32 = 1_000_000;

/// A validated load mode (see [`LoadParams`]).
#[derive(Clone, Debug)]
pub enum Load {
    /// Batches at the class's rate over [0, horizon).
    Open,
    /// `requests` requests in batches at the class's rate, the horizon
    /// notwithstanding.
    FixedCount { requests: u32 },
    /// `requests` requests at time 0.
    Offline { requests: u32 },
    /// `clients` clients, each sending when its previous request returns
    /// plus a think time \[ms\] (none without a distribution); until the
    /// horizon, or `requests` sends in all.
    ClosedLoop {
        clients: u32,
        think_ms: Option<Dist>,
        requests: Option<u32>,
    },
    /// A trace's requests, in order of arrival (ties in the trace's order).
    Trace { requests: Vec<TracedRequest> },
}

impl Load {
    /// The number of requests the class sends when the horizon does not
    /// bound it; `None` for classes that send until the horizon.
    pub fn counted_requests(&self) -> Option<u32> {
        match self {
            Load::Open | Load::ClosedLoop { requests: None, .. } => None,
            Load::FixedCount { requests }
            | Load::Offline { requests }
            | Load::ClosedLoop {
                requests: Some(requests),
                ..
            } => Some(*requests),
            Load::Trace { requests } => Some(requests.len() as u32),
        }
    }

    /// Whether the class's sends follow its rate (open streams and fixed
    /// counts); offline and closed-loop classes offer no rate of their own.
    pub fn follows_rate(&self) -> bool {
        matches!(self, Load::Open | Load::FixedCount { .. })
    }
}

/// Checks `class.load` (inside the class's path) and the fields it
/// contradicts: a fixed count needs a positive rate; offline and
/// closed-loop classes take neither a time-of-day profile nor batches.
pub fn check_load(class: &ClassParams, check: &mut Checker) -> Option<Load> {
    let before = check.has_errors();
    let load = match &class.load {
        LoadParams::Open => Load::Open,
        LoadParams::FixedCount { requests } => {
            check.at("load", |c| c.at_least("requests", *requests as u64, 1));
            if !(class.batches_per_hour.is_finite() && class.batches_per_hour > 0.0) {
                check.fail(
                    "batches_per_hour",
                    format!(
                        "must be positive for a fixed count (its batches arrive at this rate), got {}",
                        show(class.batches_per_hour)
                    ),
                );
            }
            Load::FixedCount {
                requests: *requests,
            }
        }
        LoadParams::Offline { requests } => {
            check.at("load", |c| c.at_least("requests", *requests as u64, 1));
            refuse_arrival_shape(
                class,
                "an offline class sends every request at time 0",
                check,
            );
            Load::Offline {
                requests: *requests,
            }
        }
        LoadParams::ClosedLoop {
            clients,
            think_ms,
            requests,
        } => {
            let think_ms = check.at("load", |c| {
                if *clients == 0 || *clients > MAX_CLIENTS {
                    c.fail(
                        "clients",
                        format!("must be between 1 and {MAX_CLIENTS}, got {clients}"),
                    );
                }
                if let Some(n) = requests {
                    c.at_least("requests", *n as u64, 1);
                }
                think_ms.as_ref().map(|d| c.at("think_ms", |c| d.build(c)))
            });
            refuse_arrival_shape(
                class,
                "a closed-loop client sends its next request when the previous one returns",
                check,
            );
            Load::ClosedLoop {
                clients: *clients,
                think_ms: think_ms.flatten(),
                requests: *requests,
            }
        }
        LoadParams::Trace { requests } => {
            check.at("load", |c| check_trace(requests, c));
            refuse_arrival_shape(class, "a replayed trace sends at its own times", check);
            let mut requests = requests.clone();
            requests.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
            Load::Trace { requests }
        }
    };
    (check.has_errors() == before).then_some(load)
}

/// A replayed trace: at least one request, at most [`MAX_TRACE_ROWS`],
/// each one a request a scenario can hold (the first bad one named).
fn check_trace(requests: &[TracedRequest], check: &mut Checker) {
    if requests.is_empty() || requests.len() > MAX_TRACE_ROWS {
        check.fail(
            "requests",
            format!(
                "must hold between 1 and {MAX_TRACE_ROWS} requests, got {}",
                requests.len()
            ),
        );
    }
    if let Some((i, (field, reason))) = requests
        .iter()
        .enumerate()
        .find_map(|(i, r)| check_traced(r).err().map(|e| (i, e)))
    {
        check.fail(&format!("requests[{i}].{field}"), reason);
    }
}

/// Offline and closed-loop classes set their own send times: a profile or
/// batches would be silently ignored, so each is an error naming it.
fn refuse_arrival_shape(class: &ClassParams, why: &str, check: &mut Checker) {
    if class.time_of_day.is_some() {
        check.fail(
            "time_of_day",
            format!("{why}, so an hourly profile does not apply; remove it"),
        );
    }
    if class.batch_size != DistParams::constant(1.0) {
        check.fail(
            "batch_size",
            format!("{why}, so batches do not apply; leave batch_size at 1"),
        );
    }
}

/// The run-level contradictions: a run with counted requests ends when they
/// are all done, so a drain (`run.drain_s`) cannot apply; an offline class's
/// requests all arrive at 0, so a warm-up would leave every one uncounted.
pub fn check_counted_run(params: &ScenarioParams, check: &mut Checker) {
    let counted = params.classes.iter().position(|c| c.load.is_counted());
    if let (Some(i), Some(_)) = (counted, params.run.drain_s) {
        check.fail(
            "run.drain_s",
            format!(
                "classes[{i}].load sends a fixed number of requests, so the run lasts until every request is done; remove the drain"
            ),
        );
    }
    let offline = params
        .classes
        .iter()
        .position(|c| matches!(c.load, LoadParams::Offline { .. }));
    if let Some(i) = offline
        && params.run.warmup_s > 0.0
    {
        check.fail(
            "run.warmup_s",
            format!(
                "classes[{i}] is offline: its requests all arrive at time 0, before the warm-up, so none would be counted; set the warm-up to 0"
            ),
        );
    }
}

/// See [`Scenario::refusals_possible`](crate::model::Scenario::refusals_possible).
pub fn refusals_possible(params: &ScenarioParams) -> bool {
    let Some(bound) = params.engine.max_waiting else {
        return false;
    };
    let mut clients = 0u64;
    for class in &params.classes {
        match &class.load {
            LoadParams::ClosedLoop { clients: n, .. } if class.timeout_s.is_none() => {
                clients += *n as u64
            }
            _ => return true,
        }
    }
    clients > bound as u64
}

#[cfg(test)]
mod tests {
    use crate::model::scenario::Scenario;
    use crate::params::{ClassParams, DistParams, LoadParams, ScenarioParams, Shape};

    /// The reason the scenario with `load` on its first class (and `edit`
    /// applied) gives for `field`, which must have one.
    fn reason(load: LoadParams, edit: impl FnOnce(&mut ScenarioParams), field: &str) -> String {
        let mut p = ScenarioParams::overnight_batch();
        p.classes[0] = ClassParams {
            load,
            ..ClassParams::default()
        };
        edit(&mut p);
        let e = Scenario::try_from(p).expect_err("the scenario should be invalid");
        e.for_field(field)
            .unwrap_or_else(|| panic!("no error for {field}: {e}"))
            .to_string()
    }

    fn closed(clients: u32, requests: Option<u32>) -> LoadParams {
        LoadParams::ClosedLoop {
            clients,
            think_ms: None,
            requests,
        }
    }

    #[test]
    fn counts_and_clients_must_be_positive() {
        let offline = LoadParams::Offline { requests: 0 };
        assert!(reason(offline, |_| {}, "classes[0].load.requests").contains("at least 1"));
        assert!(reason(closed(0, None), |_| {}, "classes[0].load.clients").contains("between 1"));
        assert!(
            reason(closed(2, Some(0)), |_| {}, "classes[0].load.requests").contains("at least 1")
        );
        let think = LoadParams::ClosedLoop {
            clients: 2,
            think_ms: Some(DistParams::new(Shape::Exponential { mean: -1.0 })),
            requests: None,
        };
        reason(think, |_| {}, "classes[0].load.think_ms.mean");
    }

    #[test]
    fn a_trace_needs_requests_and_names_its_first_bad_one() {
        use crate::params::trace::TracedRequest;
        let row = |arrival_s, input_tokens| TracedRequest {
            arrival_s,
            input_tokens,
            output_tokens: 5,
            prefix_hit: None,
        };
        let empty = LoadParams::Trace { requests: vec![] };
        assert!(reason(empty, |_| {}, "classes[0].load.requests").contains("between 1"));
        let bad = LoadParams::Trace {
            requests: vec![row(0.0, 10), row(1.0, 0), row(-1.0, 3)],
        };
        let why = reason(bad, |_| {}, "classes[0].load.requests[1].input_tokens");
        assert!(why.contains("at least 1"), "{why}");
        let profiled = LoadParams::Trace {
            requests: vec![row(0.0, 10)],
        };
        let why = reason(
            profiled,
            |p| p.classes[0].time_of_day = Some(vec![1.0; 24]),
            "classes[0].time_of_day",
        );
        assert!(why.contains("replayed trace"), "{why}");
    }

    #[test]
    fn a_fixed_count_needs_a_rate_to_draw_its_gaps() {
        let count = LoadParams::FixedCount { requests: 10 };
        let why = reason(
            count,
            |p| p.classes[0].batches_per_hour = 0.0,
            "classes[0].batches_per_hour",
        );
        assert!(why.contains("positive for a fixed count"), "{why}");
    }

    #[test]
    fn offline_and_closed_loops_refuse_a_profile_and_batches() {
        for load in [LoadParams::Offline { requests: 5 }, closed(3, None)] {
            let why = reason(
                load.clone(),
                |p| p.classes[0].time_of_day = Some(vec![1.0; 24]),
                "classes[0].time_of_day",
            );
            assert!(why.contains("remove it"), "{why}");
            let why = reason(
                load,
                |p| p.classes[0].batch_size = DistParams::constant(4.0),
                "classes[0].batch_size",
            );
            assert!(why.contains("leave batch_size at 1"), "{why}");
        }
    }

    #[test]
    fn a_counted_run_refuses_a_drain_and_an_offline_one_a_warm_up() {
        let why = reason(
            closed(3, Some(100)),
            |p| p.run.drain_s = Some(60.0),
            "run.drain_s",
        );
        assert!(
            why.contains("classes[0].load sends a fixed number"),
            "{why}"
        );
        let why = reason(
            LoadParams::Offline { requests: 5 },
            |p| p.run.warmup_s = 10.0,
            "run.warmup_s",
        );
        assert!(why.contains("classes[0] is offline"), "{why}");
        // A closed loop over the horizon keeps its drain.
        let mut p = ScenarioParams::overnight_batch();
        p.classes[0].load = closed(3, None);
        p.classes[0].time_of_day = None;
        p.classes[0].batch_size = DistParams::constant(1.0);
        p.run.drain_s = Some(60.0);
        Scenario::try_from(p).expect("valid");
    }

    #[test]
    fn the_load_field_is_optional_and_written_only_when_not_open() {
        let p = ScenarioParams::overnight_batch();
        let json = serde_json::to_string(&p).unwrap();
        assert!(!json.contains("\"load\""), "{json}");
        let mut q = p.clone();
        q.classes[1].load = LoadParams::FixedCount { requests: 9 };
        let json = serde_json::to_string(&q).unwrap();
        assert!(
            json.contains(r#""load":{"kind":"fixed_count","requests":9}"#),
            "{json}"
        );
        let back: ScenarioParams = serde_json::from_str(&json).unwrap();
        assert_eq!(back, q);
        let e = crate::params::scenario_params_from_json(
            json.replace(r#""requests":9"#, r#""requests":9,"clients":2"#)
                .as_bytes(),
        )
        .unwrap_err();
        assert!(e.field.contains("classes[1].load"), "{e}");
    }
}

//! The checks of a scenario's own sections: the format version, classes,
//! engine, memory, step time and run; everything but the plan. They build
//! what the [`Scenario`](crate::model::Scenario) keeps. The plan section's checks run after
//! them and check each hardware candidate with them too, so validation
//! never calls itself (`Scenario::try_from` is not called from inside it).

use crate::error::{Checker, show};
use crate::model::class::Class;
use crate::model::load::{Load, check_counted_run, check_load, refusals_possible};
use crate::model::memory::MemoryBudget;
use crate::model::step_time::StepTimeModel;
use crate::params::{ClassParams, FORMAT_VERSION, MAX_HORIZON_S, ScenarioParams, Schedule};

/// Most request classes in one scenario.
pub const MAX_CLASSES: usize = 64;
/// Most replicas in one cluster.
pub const MAX_REPLICAS: u32 = 4096;
/// Most time-series intervals in one run.
pub const MAX_SERIES_POINTS: usize = 100_000;
/// At most this many replica samples (series points x replicas) in a run:
/// each sample visits every replica.
pub const MAX_REPLICA_SAMPLES: u64 = 20_000_000;

/// What a scenario's checked sections build.
pub struct Sections {
    pub classes: Vec<Class>,
    pub memory: MemoryBudget,
    pub step_time: StepTimeModel,
    /// How long the fleet keeps working after the horizon \[s\].
    pub drain_s: f64,
}

/// Checks every section of `params` but the plan, into `check`; what they
/// build, or `None` when a section could not be built (each such section
/// has an error in `check`).
pub fn check_sections(params: &ScenarioParams, check: &mut Checker) -> Option<Sections> {
    if params.version == 0 || params.version > FORMAT_VERSION {
        check.fail(
            "version",
            format!(
                "format version {} is not known to this build (it reads 1 to {FORMAT_VERSION})",
                params.version
            ),
        );
    }
    let classes = check_classes(params, check);
    check_engine(params, check);
    let memory = MemoryBudget::derive(params, check);
    check.positive("step_time_scale", params.step_time_scale);
    let step_time = check.at("step_time", |c| StepTimeModel::build(params, c));
    let drain_s = check_run(params, check);
    check_counted_run(params, check);
    if let Some(classes) = &classes {
        let longest = memory.as_ref().map(|m| m.max_seq_tokens);
        check_closed_loops(params, classes, longest, check);
    }
    Some(Sections {
        classes: classes?,
        memory: memory?,
        step_time: step_time?,
        drain_s,
    })
}

fn check_classes(params: &ScenarioParams, check: &mut Checker) -> Option<Vec<Class>> {
    if params.classes.is_empty() {
        check.fail("classes", "must hold at least one request class");
        return None;
    }
    if params.classes.len() > MAX_CLASSES {
        check.fail(
            "classes",
            format!(
                "at most {MAX_CLASSES} classes, got {}",
                params.classes.len()
            ),
        );
        return None;
    }
    let mut classes = Vec::with_capacity(params.classes.len());
    let mut ok = true;
    for (i, class) in params.classes.iter().enumerate() {
        let built = check.at("classes", |c| {
            c.at(format!("[{i}]"), |c| check_class(class, c))
        });
        match built {
            Some(class) => classes.push(class),
            None => ok = false,
        }
    }
    for (i, a) in params.classes.iter().enumerate() {
        if params.classes[..i].iter().any(|b| b.name == a.name) {
            check.fail(
                &format!("classes[{i}].name"),
                format!("\"{}\" is used by another class", a.name),
            );
            ok = false;
        }
    }
    ok.then_some(classes)
}

fn check_class(class: &ClassParams, check: &mut Checker) -> Option<Class> {
    let before = check.has_errors();
    if class.name.trim().is_empty() {
        check.fail("name", "must not be empty");
    }
    check.non_negative("batches_per_hour", class.batches_per_hour);
    let batch_size = check.at("batch_size", |c| class.batch_size.build(c));
    let input_tokens = check.at("input_tokens", |c| class.input_tokens.build(c));
    let output_tokens = check.at("output_tokens", |c| class.output_tokens.build(c));
    let lengths = match (&class.lengths, &input_tokens, &output_tokens) {
        (Some(lengths), Some(input), Some(output)) => {
            check.at("lengths", |c| lengths.build(input, output, c))
        }
        _ => None,
    };
    let load = check_load(class, check);
    check.within("prefix_cache_hit", class.prefix_cache_hit, 0.0, 1.0);
    check.positive("deadline_s", class.deadline_s);
    if let Some(t) = class.timeout_s {
        check.positive("timeout_s", t);
    }
    let mut time_of_day = [1.0; 24];
    if let Some(profile) = &class.time_of_day {
        if profile.len() != 24 {
            check.fail(
                "time_of_day",
                format!("must have 24 hourly multipliers, got {}", profile.len()),
            );
        } else {
            for (h, m) in profile.iter().enumerate() {
                check.non_negative(&format!("time_of_day[{h}]"), *m);
                time_of_day[h] = *m;
            }
            if profile.iter().all(|m| *m == 0.0) {
                check.fail("time_of_day", "must not be zero in every hour");
            }
        }
    }
    if check.has_errors() != before {
        return None;
    }
    Some(Class {
        batch_rate_per_s: class.batches_per_hour / 3600.0,
        batch_size: batch_size?,
        time_of_day,
        input_tokens: input_tokens?,
        output_tokens: output_tokens?,
        lengths,
        prefix_cache_hit: class.prefix_cache_hit,
        priority: class.priority,
        deadline_s: class.deadline_s,
        timeout_s: class.timeout_s,
        load: load?,
    })
}

pub fn check_engine(params: &ScenarioParams, check: &mut Checker) {
    let e = &params.engine;
    check.at("engine", |c| {
        c.at_least("max_num_seqs", e.max_num_seqs as u64, 1);
        c.at_least("max_num_batched_tokens", e.max_num_batched_tokens as u64, 1);
        if e.max_num_batched_tokens < e.max_num_seqs {
            c.fail(
                "max_num_batched_tokens",
                format!(
                    "must be at least max_num_seqs ({}) so that every running sequence can decode each step, got {}",
                    e.max_num_seqs, e.max_num_batched_tokens
                ),
            );
        }
        if !(1..=1024).contains(&e.block_size) {
            c.fail("block_size", format!("must be between 1 and 1024 tokens, got {}", e.block_size));
        }
        if let Some(m) = e.max_model_len {
            c.at_least("max_model_len", m as u64, 2);
            // vLLM V0 refuses this at start-up without chunked prefill: a
            // sequence of max_model_len tokens could never be scheduled.
            if e.schedule == Schedule::PrefillFirst && e.max_num_batched_tokens < m {
                c.fail(
                    "max_num_batched_tokens",
                    format!(
                        "must be at least max_model_len ({m}) under the prefill_first schedule, which runs every prompt (and every recomputation) whole in one step, got {}; raise it or lower max_model_len",
                        e.max_num_batched_tokens
                    ),
                );
            }
        }
    });
    check.at("cluster", |c| {
        let n = params.cluster.replicas;
        if n == 0 || n > MAX_REPLICAS {
            c.fail(
                "replicas",
                format!("must be between 1 and {MAX_REPLICAS}, got {n}"),
            );
        }
    });
}

fn check_run(params: &ScenarioParams, check: &mut Checker) -> f64 {
    let r = &params.run;
    check.at("run", |c| {
        if c.positive("horizon_s", r.horizon_s) && r.horizon_s > MAX_HORIZON_S {
            c.fail(
                "horizon_s",
                format!("must be at most one year ({MAX_HORIZON_S} s), got {}", show(r.horizon_s)),
            );
        }
        if c.non_negative("warmup_s", r.warmup_s) && r.warmup_s >= r.horizon_s {
            c.fail(
                "warmup_s",
                format!("must be shorter than the horizon ({} s), got {}", show(r.horizon_s), show(r.warmup_s)),
            );
        }
        if let Some(d) = r.drain_s {
            c.non_negative("drain_s", d);
        }
        if c.positive("series_interval_s", r.series_interval_s) {
            // Points over the horizon alone; the drain's are capped as it
            // runs (the series stops at the cap, see docs/engine.md).
            let points = r.horizon_s / r.series_interval_s;
            let replicas = params.cluster.replicas.max(1) as f64;
            let most = (MAX_SERIES_POINTS as f64).min(MAX_REPLICA_SAMPLES as f64 / replicas);
            if points > most {
                c.fail(
                    "series_interval_s",
                    format!(
                        "gives {} samples over the horizon, more than the {} allowed{}; use at least {} s",
                        show(points.ceil()),
                        show(most.floor()),
                        if most < MAX_SERIES_POINTS as f64 {
                            format!(" with {} replicas (each sample visits every replica)", show(replicas))
                        } else {
                            String::new()
                        },
                        show((r.horizon_s / most).ceil())
                    ),
                );
            }
        }
    });
    let longest_deadline = params
        .classes
        .iter()
        .map(|c| c.deadline_s)
        .filter(|d| d.is_finite())
        .fold(0.0, f64::max);
    r.drain_s.unwrap_or(longest_deadline).min(MAX_HORIZON_S)
}

/// A closed loop that sends until the horizon must not send without end at
/// one instant: when a request can be refused on arrival (its client then
/// sends again after its think time alone), a client with no think time
/// would. Two refusals: a full waiting queue (while it stays full, every
/// send is refused), and a request longer (prompt + output) than a replica
/// holds, `longest` tokens (the KV cache or `max_model_len`): when even the
/// class's shortest request is, every send is refused. (When only some
/// are, a client draws new lengths and sends again: the run's own budget
/// stops a loop that is refused nearly always, and says so.)
pub fn check_closed_loops(
    params: &ScenarioParams,
    classes: &[Class],
    longest: Option<u64>,
    check: &mut Checker,
) {
    let queue_refuses = refusals_possible(params);
    for (i, class) in classes.iter().enumerate() {
        let Load::ClosedLoop {
            think_ms,
            requests: None,
            ..
        } = &class.load
        else {
            continue;
        };
        if think_ms.as_ref().is_some_and(|d| d.moments().0 > 0.0) {
            continue;
        }
        if queue_refuses {
            let bound = params.engine.max_waiting.unwrap_or(0);
            let timeouts = params.classes.iter().any(|c| c.timeout_s.is_some());
            let (held, remedy) = if timeouts {
                (
                    ", and a timed-out request keeps its place until its replica's next step while its client sends again",
                    "raise engine.max_waiting or drop it",
                )
            } else {
                ("", "raise engine.max_waiting")
            };
            check.fail(
                &format!("classes[{i}].load.think_ms"),
                format!(
                    "a client whose request is refused (engine.max_waiting {bound}: a full waiting queue refuses it{held}) \
                     sends again after its think time alone, so with none it would send without end at one instant; \
                     give the clients a think time, a total (classes[{i}].load.requests), or {remedy}"
                ),
            );
            continue;
        }
        let (input, output) = class.smallest_lengths();
        let shortest = (u64::from(input) + u64::from(output)).saturating_sub(1);
        if let Some(longest) = longest.filter(|&l| shortest > l) {
            check.fail(
                &format!("classes[{i}].load.think_ms"),
                format!(
                    "every request of this class is longer than a replica holds (its shortest, {input} prompt + {output} output tokens, \
                     over {longest}: the KV cache, max_model_len, or under the prefill_first schedule \
                     engine.max_num_batched_tokens), so each is refused, and a client with no think time would send \
                     again without end at one instant; shorten the class's lengths, or give the clients a think time \
                     or a total (classes[{i}].load.requests)"
                ),
            );
        }
    }
}

//! Checks of the plan section, run once inside [`Scenario::try_from`](crate::model::Scenario::try_from)
//! after the scenario's own sections (the planner never re-checks), and the
//! limits they enforce. A hardware candidate is checked with the sections'
//! checks, never with `Scenario::try_from`: validation does not recurse.

use crate::error::{Checker, show};
use crate::model::class::Class;
use crate::model::memory::MemoryBudget;
use crate::model::sections::{MAX_REPLICAS, check_engine, check_sections};
use crate::model::service::fastest_service;
use crate::model::step_time::StepTimeModel;
use crate::params::plan::{
    Multipliers, PricingParams, SensitivityInput, TargetParams, resolve_candidates,
};
use crate::params::{ScenarioParams, presets};

/// Most replications per evaluated configuration.
pub const MAX_REPLICATIONS: u32 = 100;
/// Most points on a service curve.
pub const MAX_CURVE_POINTS: usize = 32;
/// At most this many targets in a plan (each is checked on every run).
pub const MAX_TARGETS: usize = 64;
/// At most this many hardware candidates (each gets a capacity search).
pub const MAX_CANDIDATES: usize = 32;
/// At most this many configurations (candidates x engine and cluster
/// settings) in one plan's search space.
pub const MAX_CONFIGURATIONS: usize = 256;

/// Checks the plan section. `built` holds the validated classes and
/// step-time model when the rest of the scenario is valid (the checks that
/// need them are skipped otherwise).
pub fn check_plan(
    params: &ScenarioParams,
    built: Option<(&[Class], &StepTimeModel)>,
    check: &mut Checker,
) {
    let plan = &params.plan;
    check.at("plan", |c| {
        check_pricing(&plan.pricing, c);
        check_targets(params, built, c);
        if built.is_some() {
            // A candidate is the base scenario on other hardware: checked only
            // when the base is valid, so its errors are not repeated per candidate.
            check_candidates(params, c);
        }
        c.at("best", |c| check_multipliers(&plan.best, c));
        c.at("worst", |c| check_multipliers(&plan.worst, c));
        c.at("sensitivity", |c| {
            let s = &plan.sensitivity;
            if !(s.delta.is_finite() && s.delta > 0.0 && s.delta < 1.0) {
                c.fail(
                    "delta",
                    format!(
                        "must be a fraction between 0 and 1 (0.2 varies each input by +/-20%), got {}",
                        show(s.delta)
                    ),
                );
            }
            check_count(c, "replications", s.replications, MAX_REPLICATIONS);
            // Each input once: a repeated one would only repeat its runs.
            for (i, input) in s.inputs.iter().enumerate() {
                if s.inputs[..i].contains(input) {
                    c.fail(
                        &format!("inputs[{i}]"),
                        format!("\"{}\" is listed twice; list each input once", input.label()),
                    );
                    break;
                }
            }
        });
        c.at("service_curve", |c| {
            let s = &plan.service_curve;
            if s.load_multipliers.len() > MAX_CURVE_POINTS {
                c.fail(
                    "load_multipliers",
                    format!(
                        "at most {MAX_CURVE_POINTS} points, got {}",
                        s.load_multipliers.len()
                    ),
                );
            }
            for (i, m) in s.load_multipliers.iter().enumerate() {
                c.positive(&format!("load_multipliers[{i}]"), *m);
            }
            if s.load_multipliers.windows(2).any(|w| w[1] <= w[0]) {
                c.fail("load_multipliers", "must be strictly increasing");
            }
            if let Some(r) = s.replications {
                check_count(c, "replications", r, MAX_REPLICATIONS);
            }
            if !(s.headroom_fraction.is_finite() && (0.0..1.0).contains(&s.headroom_fraction)) {
                c.fail(
                    "headroom_fraction",
                    format!(
                        "must be at least 0 and below 1, got {}",
                        show(s.headroom_fraction)
                    ),
                );
            }
        });
        check_count(c, "replications", plan.replications, MAX_REPLICATIONS);
        check_count(c, "min_replications", plan.min_replications, MAX_REPLICATIONS);
        if plan.min_replications > plan.replications {
            c.fail(
                "min_replications",
                format!(
                    "must be at most replications ({}), got {}",
                    plan.replications, plan.min_replications
                ),
            );
        }
        c.at("search", |c| check_search(params, built.is_some(), c));
        check_count(c, "max_replicas", plan.max_replicas, MAX_REPLICAS);
        if c.positive("max_busy_fraction", plan.max_busy_fraction) && plan.max_busy_fraction > 1.0
        {
            c.fail(
                "max_busy_fraction",
                format!(
                    "must be at most 1 (above it the backlog grows every day), got {}",
                    show(plan.max_busy_fraction)
                ),
            );
        }
    });
}

/// The search dimensions: each list non-empty, without repeats, with valid
/// values, and the whole space within [`MAX_CONFIGURATIONS`]; when the rest
/// of the scenario is valid (`valid`), every sequence limit and token
/// budget the space pairs must make a valid engine on every candidate.
fn check_search(params: &ScenarioParams, valid: bool, check: &mut Checker) {
    let search = &params.plan.search;
    fn list<T: PartialEq>(check: &mut Checker, field: &str, values: Option<&Vec<T>>) {
        let Some(values) = values else { return };
        if values.is_empty() {
            check.fail(
                field,
                "give at least one value, or leave it out to keep the default",
            );
        }
        // (A longer list makes too many configurations on its own; the
        // search for repeats below is quadratic.)
        if values.len() > MAX_CONFIGURATIONS {
            check.fail(
                field,
                format!(
                    "at most {MAX_CONFIGURATIONS} values (the plan compares at most {MAX_CONFIGURATIONS} configurations), got {}",
                    values.len()
                ),
            );
            return;
        }
        if let Some(i) = (1..values.len()).find(|&i| values[..i].contains(&values[i])) {
            check.fail(
                &format!("{field}[{i}]"),
                "is listed twice; list each value once",
            );
        }
    }
    list(check, "disciplines", search.disciplines.as_ref());
    list(check, "max_num_seqs", search.max_num_seqs.as_ref());
    list(
        check,
        "max_num_batched_tokens",
        search.max_num_batched_tokens.as_ref(),
    );
    list(check, "max_waiting", search.max_waiting.as_ref());
    list(check, "routers", search.routers.as_ref());
    for (field, values) in [
        ("max_num_seqs", &search.max_num_seqs),
        ("max_num_batched_tokens", &search.max_num_batched_tokens),
    ] {
        for (i, v) in values.iter().flatten().enumerate() {
            if *v == 0 {
                check.fail(&format!("{field}[{i}]"), "must be at least 1");
            }
        }
    }
    // Counted, not listed: three lists of 140 values make 2.7 M settings
    // (review n07: 2.4 s and 658 MB to list them before this check).
    let candidates = params.plan.candidates.as_ref().map_or(1, Vec::len);
    let settings = search.count(params);
    let configurations = candidates.saturating_mul(settings);
    if configurations > MAX_CONFIGURATIONS {
        check.fail(
            "",
            format!(
                "{candidates} candidates x {settings} engine settings make {configurations} configurations; at most {MAX_CONFIGURATIONS} (pin a dimension or list fewer values)"
            ),
        );
    } else if valid && !check.has_errors() {
        check_engine_pairs(params, check);
    }
}

/// Every (max_num_seqs, max_num_batched_tokens) pair of the space on every
/// candidate checked as the engine and memory checks of a scenario would
/// (a token budget below the sequences, a sampler's activation peak the
/// accelerator cannot hold), so that a plan never stops at a case that is
/// not a valid scenario. Each listed value is reported once, with the pair
/// and the candidate it failed on. At most [`MAX_CONFIGURATIONS`] cheap
/// checks: no step-time model or class is built.
fn check_engine_pairs(params: &ScenarioParams, check: &mut Checker) {
    let search = &params.plan.search;
    if search.max_num_seqs.is_none() && search.max_num_batched_tokens.is_none() {
        return;
    }
    let own = (
        params.engine.max_num_seqs,
        params.engine.max_num_batched_tokens,
    );
    let seqs = search.max_num_seqs.clone().unwrap_or_else(|| vec![own.0]);
    let budgets = search
        .max_num_batched_tokens
        .clone()
        .unwrap_or_else(|| vec![own.1]);
    let engine_errors = |p: &ScenarioParams| {
        let mut c = Checker::new();
        check_engine(p, &mut c);
        MemoryBudget::derive(p, &mut c);
        c.finish().err()
    };
    // A candidate invalid with the scenario's own engine says so under
    // `plan.candidates`; its pairs would only repeat that.
    let candidates: Vec<_> = resolve_candidates(params)
        .into_iter()
        .filter(|r| engine_errors(&r.params).is_none())
        .collect();
    let mut reported = (vec![false; seqs.len()], vec![false; budgets.len()]);
    for (i, &s) in seqs.iter().enumerate() {
        for (j, &b) in budgets.iter().enumerate() {
            if (s, b) == own || reported.0[i] || reported.1[j] {
                continue;
            }
            for r in &candidates {
                let mut p = r.params.clone();
                p.engine.max_num_seqs = s;
                p.engine.max_num_batched_tokens = b;
                let Some(e) = engine_errors(&p) else { continue };
                let (field, value) = if search.max_num_seqs.is_some() && s != own.0 {
                    reported.0[i] = true;
                    (
                        format!("max_num_seqs[{i}]"),
                        format!("{s} sequences with a token budget of {b}"),
                    )
                } else {
                    reported.1[j] = true;
                    (
                        format!("max_num_batched_tokens[{j}]"),
                        format!("a token budget of {b} with {s} sequences"),
                    )
                };
                let on = if params.plan.candidates.is_some() {
                    format!(" on {}", r.name)
                } else {
                    String::new()
                };
                let first = &e.errors[0];
                check.fail(
                    &field,
                    format!(
                        "{value}{on} is not a valid engine: {}: {}",
                        first.field, first.reason
                    ),
                );
                break;
            }
        }
    }
}

fn check_count(check: &mut Checker, field: &str, value: u32, max: u32) {
    if value == 0 || value > max {
        check.fail(field, format!("must be between 1 and {max}, got {value}"));
    }
}

fn check_price(check: &mut Checker, field: &str, price: Option<f64>) {
    if let Some(p) = price
        && !(p.is_finite() && p >= 0.0)
    {
        check.fail(
            field,
            format!(
                "a price must be zero or more USD per GPU-hour, got {}",
                show(p)
            ),
        );
    }
}

fn check_pricing(pricing: &PricingParams, check: &mut Checker) {
    check.at("pricing", |c| {
        check_price(c, "usd_per_gpu_hour", pricing.usd_per_gpu_hour);
        if !(pricing.fixed_usd_per_month.is_finite() && pricing.fixed_usd_per_month >= 0.0) {
            c.fail(
                "fixed_usd_per_month",
                format!(
                    "fixed costs must be zero or more USD per month, got {}",
                    show(pricing.fixed_usd_per_month)
                ),
            );
        }
    });
}

fn check_multipliers(m: &Multipliers, check: &mut Checker) {
    for input in SensitivityInput::ALL {
        let value = m.get(input);
        let field = serde_name(input);
        let ok = if input == SensitivityInput::PrefixCacheHit {
            value.is_finite() && value >= 0.0
        } else {
            value.is_finite() && value > 0.0
        };
        if !ok {
            check.fail(
                field,
                format!(
                    "a multiplier must be a positive number, got {}",
                    show(value)
                ),
            );
        }
    }
}

/// The JSON name of a multiplier.
fn serde_name(input: SensitivityInput) -> &'static str {
    match input {
        SensitivityInput::ArrivalRate => "arrival_rate",
        SensitivityInput::BatchSize => "batch_size",
        SensitivityInput::InputTokens => "input_tokens",
        SensitivityInput::OutputTokens => "output_tokens",
        SensitivityInput::PrefixCacheHit => "prefix_cache_hit",
        SensitivityInput::Price => "price",
        SensitivityInput::StepTime => "step_time",
    }
}

fn check_targets(
    params: &ScenarioParams,
    built: Option<(&[Class], &StepTimeModel)>,
    check: &mut Checker,
) {
    let targets = &params.plan.targets;
    if targets.len() > MAX_TARGETS {
        check.fail(
            "targets",
            format!("at most {MAX_TARGETS} targets, got {}", targets.len()),
        );
        return;
    }
    let names: Vec<&str> = params.classes.iter().map(|c| c.name.as_str()).collect();
    for (i, target) in targets.iter().enumerate() {
        // The same target twice would be judged twice and read as two.
        if let Some(first) = targets[..i].iter().position(|t| t == target) {
            check.fail(
                &format!("targets[{i}]"),
                format!("the same target as targets[{first}]: remove one"),
            );
            continue;
        }
        check.at(format!("targets[{i}]"), |c| {
            let class_index = match target.class() {
                Some(name) => match names.iter().position(|n| *n == name) {
                    Some(k) => Some(k),
                    None => {
                        c.fail(
                            "class",
                            format!(
                                "no class is called \"{name}\" (the classes are {})",
                                names
                                    .iter()
                                    .map(|n| format!("\"{n}\""))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        );
                        return;
                    }
                },
                None => None,
            };
            let ok = match target {
                TargetParams::MissProbability { epsilon, .. } => {
                    let ok = epsilon.is_finite() && *epsilon > 0.0 && *epsilon < 1.0;
                    if !ok {
                        c.fail(
                            "epsilon",
                            format!(
                                "a miss probability target must be strictly between 0 and 1 (0.01 allows 1% of requests to miss), got {}",
                                show(*epsilon)
                            ),
                        );
                    }
                    ok
                }
                _ => {
                    let (percentile, bound_s) = target.percentile_bound().unwrap_or_default();
                    let mut ok = true;
                    if !(percentile.is_finite() && percentile > 0.0 && percentile < 1.0) {
                        c.fail(
                            "percentile",
                            format!(
                                "must be a fraction strictly between 0 and 1 (0.99 for p99), got {}",
                                show(percentile)
                            ),
                        );
                        ok = false;
                    }
                    ok &= c.positive("bound_s", bound_s);
                    ok
                }
            };
            if let (true, Some((classes, step_time))) = (ok, built) {
                let applies: Vec<usize> = match class_index {
                    Some(k) => vec![k],
                    None => (0..classes.len()).collect(),
                };
                for k in applies {
                    check_reachable(target, &params.classes[k].name, &classes[k], step_time, params, c);
                }
            }
        });
    }
}

/// A bound shorter than the fastest any request of the class can be served
/// (alone, on an idle replica) cannot be met by any fleet: an input error.
fn check_reachable(
    target: &TargetParams,
    class_name: &str,
    class: &Class,
    step_time: &StepTimeModel,
    params: &ScenarioParams,
    check: &mut Checker,
) {
    let fastest = fastest_service(class, step_time, &params.engine);
    let (field, what, bound, fastest_s) = match target {
        TargetParams::MissProbability { .. } => {
            ("", "deadline", class.deadline_s, fastest.sojourn_s)
        }
        TargetParams::SojournPercentile { bound_s, .. } => {
            ("bound_s", "sojourn bound", *bound_s, fastest.sojourn_s)
        }
        TargetParams::TtftPercentile { bound_s, .. } => (
            "bound_s",
            "time-to-first-token bound",
            *bound_s,
            fastest.ttft_s,
        ),
        TargetParams::TpotPercentile { bound_s, .. } => (
            "bound_s",
            "time-per-output-token bound",
            *bound_s,
            fastest.tpot_s,
        ),
    };
    if bound < fastest_s {
        check.fail(
            field,
            format!(
                "class \"{class_name}\": the {what} ({}) is shorter than the fastest possible service ({}, the shortest request alone on an idle replica), so no fleet can meet it",
                seconds(bound),
                seconds(fastest_s)
            ),
        );
    }
}

fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{:.1} ms", s * 1000.0)
    } else {
        format!("{s:.2} s")
    }
}

fn check_candidates(params: &ScenarioParams, check: &mut Checker) {
    let Some(candidates) = &params.plan.candidates else {
        return;
    };
    if candidates.len() > MAX_CANDIDATES {
        check.fail(
            "candidates",
            format!(
                "at most {MAX_CANDIDATES} hardware options, got {}",
                candidates.len()
            ),
        );
        return;
    }
    if candidates.is_empty() {
        check.fail(
            "candidates",
            "must hold at least one hardware option (leave the field out to plan for the configured hardware)",
        );
        return;
    }
    let resolved = resolve_candidates(params);
    for (i, (c, r)) in candidates.iter().zip(&resolved).enumerate() {
        check.at(format!("candidates[{i}]"), |check| {
            check_price(check, "usd_per_gpu_hour", c.usd_per_gpu_hour);
            if c.hardware.is_some() && c.hardware_preset.is_some() {
                check.fail(
                    "hardware_preset",
                    "give either hardware_preset or hardware, not both",
                );
            }
            if let Some(id) = &c.hardware_preset
                && presets::hardware(id).is_none()
            {
                let known: Vec<&str> = presets::hardware_presets().iter().map(|h| h.id).collect();
                check.fail(
                    "hardware_preset",
                    format!("unknown accelerator \"{id}\" (known: {})", known.join(", ")),
                );
                return;
            }
            if resolved[..i].iter().any(|other| other.name == r.name) {
                check.fail(
                    "name",
                    format!("\"{}\" is used by another candidate", r.name),
                );
            }
            // The candidate's own hardware, parallelism and step time: the
            // scenario's sections checked again on them (its plan section
            // is empty); its errors are reported under the candidate.
            let mut sections = Checker::new();
            check_sections(&r.params, &mut sections);
            if let Err(e) = sections.finish() {
                for error in e.errors {
                    let field = candidate_field(&error.field);
                    check.fail(field, format!("{} ({})", error.reason, error.field));
                }
            }
        });
    }
}

/// Where a candidate's scenario error belongs within the candidate.
fn candidate_field(scenario_field: &str) -> &str {
    if let Some(rest) = scenario_field.strip_prefix("replica.") {
        if rest == "gpus_per_replica" {
            return "gpus_per_replica";
        }
        return "";
    }
    if scenario_field.starts_with("hardware.") || scenario_field.starts_with("step_time") {
        return scenario_field;
    }
    // The model does not fit: the candidate's memory is too small.
    "gpus_per_replica"
}

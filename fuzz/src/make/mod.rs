//! Making input `index` of a campaign seeded `seed`: its kind (from the
//! mix, or the one asked for), then the kind's generator. Everything is
//! drawn from [`Rng::for_input`], so an input can be made again alone.

mod files;
mod measurements;
pub mod mutate;
mod plan;
pub mod scenario;

use serde_json::Value;
use sojourn_engine::ScenarioParams;

use crate::corpus;
use crate::input::{Input, Kind};
use crate::rng::Rng;

/// The default mix of kinds, in inputs per hundred: scenario files most
/// (they reach everything), then links (cheap, and damaged in many ways),
/// then each of the files and boxes of the newer load modes.
pub const MIX: [(Kind, u32); 6] = [
    (Kind::Scenario, 60),
    (Kind::Trace, 7),
    (Kind::Lengths, 6),
    (Kind::Calibration, 6),
    (Kind::Search, 6),
    (Kind::Link, 15),
];

/// Input `index` of the campaign seeded `seed`, of kind `only` if given.
pub fn input(seed: u64, index: u64, only: Option<Kind>) -> Input {
    let mut rng = Rng::for_input(seed, index);
    let kind = only.unwrap_or_else(|| {
        let weights: Vec<u32> = MIX.iter().map(|(_, w)| *w).collect();
        MIX[rng.weighted(&weights)].0
    });
    match kind {
        Kind::Scenario => scenario_input(&mut rng),
        Kind::Trace => files::trace(&mut rng),
        Kind::Lengths => files::lengths(&mut rng),
        Kind::Calibration => measurements::calibration(&mut rng),
        Kind::Search => files::search(&mut rng),
        Kind::Link => files::link(&mut rng),
    }
}

/// `patch` merged into `base`: objects key by key, arrays item by item.
fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                match b.get_mut(k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(p)) => {
            b.truncate(p.len());
            for (i, v) in p.iter().enumerate() {
                match b.get_mut(i) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    Some(existing) => *existing = v.clone(),
                    None => b.push(v.clone()),
                }
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// The example scenario (`sojourn example`) as JSON.
pub fn example_value() -> Value {
    serde_json::to_value(ScenarioParams::overnight_batch()).unwrap_or(Value::Null)
}

/// Scenario inputs (per hundred) mutated from a seed file: the shipped
/// examples, then the reviewers' reproducers. Few: a reproducer of a hang
/// hangs again, mutated or not, until its defect is fixed, and each costs
/// the hang limit.
const SHIPPED_PERCENT: usize = 4;
const SEEDS_PERCENT: usize = 10;
/// ... from the example (`sojourn example`).
const EXAMPLE_PERCENT: usize = 4;

/// A seed scenario from the corpus (a shipped example or a reproducer),
/// as JSON (a partial one merged over the example), and its name. `None`
/// for a text that is not JSON (the duplicate-key reproducer is used as
/// text).
fn corpus_scenario(rng: &mut Rng, shipped: bool) -> (&'static str, &'static str, Option<Value>) {
    let seeds = if shipped {
        &corpus::SCENARIOS[..corpus::SHIPPED]
    } else {
        &corpus::SCENARIOS[corpus::SHIPPED..]
    };
    let (name, text) = *rng.pick(seeds);
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return (name, text, None);
    };
    let complete = ["classes", "model", "hardware"]
        .iter()
        .all(|k| value.get(k).is_some());
    if complete {
        return (name, text, Some(value));
    }
    let mut merged = example_value();
    merge(&mut merged, &value);
    (name, text, Some(merged))
}

/// A short horizon, so that a day-long seed runs in milliseconds.
fn shortened(rng: &mut Rng, value: &mut Value) -> Option<String> {
    let run = value
        .as_object_mut()?
        .entry("run")
        .or_insert(Value::Object(Default::default()));
    let horizon = rng.log_uniform(10.0, 1800.0).round();
    run.as_object_mut()?
        .insert("horizon_s".into(), Value::from(horizon));
    Some(format!("horizon {horizon} s"))
}

/// A scenario file: a seed (a corpus file, the example, or generated)
/// mutated in its structure and sometimes in its text.
fn scenario_input(rng: &mut Rng) -> Input {
    let mut origin = Vec::new();
    let seed_roll = rng.below(100);
    let mut value = if seed_roll < SEEDS_PERCENT {
        let (name, text, value) = corpus_scenario(rng, seed_roll < SHIPPED_PERCENT);
        origin.push(format!("corpus {name}"));
        match value {
            Some(v) => v,
            None => {
                // Not JSON (a duplicated key): its text, edited.
                let mut text = text.to_string();
                if rng.chance(0.7) {
                    origin.push(mutate::mutate_text(rng, &mut text));
                }
                return Input {
                    kind: Kind::Scenario,
                    variant: "file".into(),
                    origin: origin.join("; "),
                    text,
                    base: String::new(),
                };
            }
        }
    } else if seed_roll < SEEDS_PERCENT + EXAMPLE_PERCENT {
        origin.push("example".into());
        example_value()
    } else {
        let (params, words) = scenario::scenario(rng);
        origin.push(words);
        serde_json::to_value(params).unwrap_or(Value::Null)
    };
    if seed_roll < SEEDS_PERCENT + EXAMPLE_PERCENT && rng.chance(0.75) {
        origin.extend(shortened(rng, &mut value));
    }
    // A quarter as made; the rest mutated, one to four times.
    if rng.chance(0.75) {
        for _ in 0..rng.range(1, 4) {
            origin.push(mutate::mutate_value_somehow(rng, &mut value));
        }
    }
    let mut text = if rng.chance(0.08) {
        let (text, words) = mutate::with_duplicate_key(rng, &value);
        origin.push(words);
        text
    } else if rng.chance(0.1) {
        serde_json::to_string_pretty(&value).unwrap_or_default()
    } else {
        mutate::text(&value)
    };
    if rng.chance(0.1) {
        for _ in 0..rng.range(1, 2) {
            origin.push(mutate::mutate_text(rng, &mut text));
        }
    }
    Input {
        kind: Kind::Scenario,
        variant: "file".into(),
        origin: origin.join("; "),
        text,
        base: String::new(),
    }
}

/// A small valid scenario to import a file into: generated, the example
/// shortened, or the reviewers' calibration base; as JSON text.
fn base_scenario(rng: &mut Rng, plan: bool) -> (String, String) {
    let roll = rng.below(10);
    let mut params = if roll < 7 {
        scenario::small(rng)
    } else if roll < 9 {
        let mut p = ScenarioParams::overnight_batch();
        p.run.horizon_s = rng.log_uniform(10.0, 1800.0).round();
        p
    } else {
        let mut p = sojourn_engine::scenario_params_from_json(corpus::CALIBRATION_BASE.as_bytes())
            .unwrap_or_else(|_| ScenarioParams::overnight_batch());
        p.run.horizon_s = rng.log_uniform(10.0, 1800.0).round();
        p
    };
    if !plan {
        params.plan = Default::default();
    }
    let words = format!("base {}", params.name);
    (serde_json::to_string(&params).unwrap_or_default(), words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crashed worker's input is made again from its seed and index, and
    /// `--show` prints it: both need generation to be a function of them.
    #[test]
    fn the_same_seed_and_index_make_the_same_input_of_every_kind() {
        for kind in Kind::ALL {
            for index in 0..10 {
                assert_eq!(input(3, index, Some(kind)), input(3, index, Some(kind)));
            }
        }
        let mix: Vec<Input> = (0..200).map(|index| input(3, index, None)).collect();
        for kind in Kind::ALL {
            assert!(mix.iter().any(|i| i.kind == kind), "no {kind} in the mix");
        }
        assert_eq!(
            mix,
            (0..200)
                .map(|index| input(3, index, None))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_partial_reproducer_is_merged_over_the_example() {
        let mut base = serde_json::json!({"run": {"horizon_s": 1, "seed": 2}, "classes": [{"name": "a", "x": 1}, {"name": "b"}]});
        merge(
            &mut base,
            &serde_json::json!({"run": {"horizon_s": 5}, "classes": [{"name": "z"}]}),
        );
        assert_eq!(
            base,
            serde_json::json!({"run": {"horizon_s": 5, "seed": 2}, "classes": [{"name": "z", "x": 1}]})
        );
    }
}

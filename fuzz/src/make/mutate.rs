//! Mutations of JSON, aware of its structure (numbers replaced by the
//! values that break naive code, types swapped, keys deleted, added or
//! duplicated, arrays emptied or made huge, tagged objects regenerated or
//! given another tag) and of its text (truncation, byte edits).

use serde_json::{Map, Number, Value};

use crate::make::scenario;
use crate::rng::Rng;

/// The largest text a mutation makes on purpose \[bytes\] (the share
/// link's own limit is 4 MiB of JSON; files may be larger, but a campaign
/// of many inputs stays quick).
pub const MAX_TEXT_BYTES: usize = 6 * 1024 * 1024;

/// Numbers that break naive code: zeros of both signs, tiny and huge
/// values, the integer limits and just past them, fractions where whole
/// numbers are expected.
pub fn interesting_number(rng: &mut Rng) -> Value {
    let n = |f: f64| Number::from_f64(f).map_or(Value::Null, Value::Number);
    match rng.below(22) {
        0 => Value::from(0),
        1 => n(-0.0),
        2 => Value::from(-1),
        3 => Value::from(1),
        4 => n(1e-300),
        5 => n(-1e-300),
        6 => n(1e-9),
        7 => n(1e19),
        8 => n(1e300),
        9 => Value::from(u32::MAX),
        10 => Value::from(u64::MAX),
        11 => Value::from((1u64 << 53) + 1),
        12 => n(0.5),
        13 => n(1.5),
        14 => Value::from(u64::from(u32::MAX) + 1),
        15 => Value::from(i64::MIN),
        16 => n(f64::MAX),
        17 => n(5e-324),
        18 => n(-1e300),
        19 => Value::from(65_536),
        20 => Value::from(2),
        _ => n(rng.uniform(-10.0, 10.0)),
    }
}

/// A value of another type than JSON's usual for a field.
fn other_type(rng: &mut Rng, old: &Value) -> Value {
    match rng.below(8) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(0.5)),
        2 => Value::String(match old {
            Value::Number(n) => n.to_string(),
            _ => String::new(),
        }),
        3 => Value::String(["inf", "-inf", "nan", "NaN", "1e999", ""][rng.below(6)].into()),
        4 => Value::Array(Vec::new()),
        5 => Value::Object(Map::new()),
        6 => Value::Array(vec![old.clone()]),
        _ => interesting_number(rng),
    }
}

/// Tags of the scenario's tagged objects and enums, to swap one for another.
const TAGS: &[&str] = &[
    "constant",
    "uniform",
    "exponential",
    "geometric",
    "log_normal",
    "log_normal_moments",
    "gamma",
    "empirical",
    "histogram",
    "open",
    "fixed_count",
    "offline",
    "closed_loop",
    "trace",
    "alpha_beta",
    "roofline",
    "operations",
    "table",
    "batch_table",
    "correlated",
    "pairs",
    "miss_probability",
    "sojourn_percentile",
    "ttft_percentile",
    "tpot_percentile",
    "fcfs",
    "priority",
    "shortest_input_first",
    "earliest_deadline_first",
    "round_robin",
    "join_shortest_queue",
    "least_kv_load",
    "bf16",
    "fp8",
    "fp4",
    "int4",
    "piecewise",
    "decode_only",
    "off",
    "prefill_first",
    "nvlink",
    "pcie",
    "reserved",
    "mean",
];

/// Keys a scenario has somewhere, to add where they do not belong.
const KEYS: &[&str] = &[
    "max",
    "min",
    "maxx",
    "requests",
    "clients",
    "think_ms",
    "lengths",
    "timeout_s",
    "drain_s",
    "max_waiting",
    "max_model_len",
    "kind",
    "class",
    "weights",
    "prefix_hit",
    "replications",
    "version",
];

type Path = Vec<Step>;

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every node's path, the root first.
fn paths(value: &Value) -> Vec<Path> {
    let mut out = Vec::new();
    let mut stack = vec![(Vec::new(), value)];
    while let Some((path, node)) = stack.pop() {
        match node {
            Value::Object(map) => {
                for (k, v) in map {
                    let mut p = path.clone();
                    p.push(Step::Key(k.clone()));
                    stack.push((p, v));
                }
            }
            Value::Array(items) => {
                // Long arrays (traces) are sampled: a few of their items.
                let step = (items.len() / 16).max(1);
                for (i, v) in items.iter().enumerate().step_by(step) {
                    let mut p = path.clone();
                    p.push(Step::Index(i));
                    stack.push((p, v));
                }
            }
            _ => {}
        }
        out.push(path);
    }
    out
}

fn at<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut node = value;
    for step in path {
        node = match step {
            Step::Key(k) => node.get_mut(k.as_str())?,
            Step::Index(i) => node.get_mut(*i)?,
        };
    }
    Some(node)
}

fn describe(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() { "(root)".into() } else { out }
}

/// One structural mutation of `value` that changes something (a few
/// tries), in words.
pub fn mutate_value_somehow(rng: &mut Rng, value: &mut Value) -> String {
    for _ in 0..8 {
        let words = mutate_value(rng, value);
        if words != NOTHING {
            return words;
        }
    }
    NOTHING.into()
}

/// What a mutation that found nothing to change says.
const NOTHING: &str = "nothing";

/// One structural mutation of `value`, in words.
pub fn mutate_value(rng: &mut Rng, value: &mut Value) -> String {
    let all = paths(value);
    // Prefer leaves that are numbers: most mutations target values.
    let numbers: Vec<&Path> = all
        .iter()
        .filter(|p| {
            let mut v = &*value;
            for step in p.iter() {
                v = match step {
                    Step::Key(k) => &v[k.as_str()],
                    Step::Index(i) => &v[*i],
                };
            }
            v.is_number()
        })
        .collect();
    let choice = rng.weighted(&[40, 10, 8, 6, 6, 6, 6, 8, 6]);
    let path = if choice == 0 && !numbers.is_empty() {
        numbers[rng.below(numbers.len())].clone()
    } else {
        all[rng.below(all.len())].clone()
    };
    let place = describe(&path);
    let Some(node) = at(value, &path) else {
        return String::from(NOTHING);
    };
    match choice {
        0 => {
            let new = if rng.chance(0.8) {
                interesting_number(rng)
            } else {
                let scale = *rng.pick(&[1e-6, 1e-3, 0.01, 10.0, 1000.0, 1e6]);
                let old = node.as_f64().unwrap_or(1.0);
                Number::from_f64(old * scale).map_or(Value::Null, Value::Number)
            };
            let words = format!("{place} = {new}");
            *node = new;
            words
        }
        1 => {
            let new = other_type(rng, node);
            let words = format!("{place} = {new} (another type)");
            *node = new;
            words
        }
        2 => match node {
            Value::Object(map) if !map.is_empty() => {
                let keys: Vec<String> = map.keys().cloned().collect();
                let key = rng.pick(&keys).clone();
                map.remove(&key);
                format!("deleted {place}.{key}")
            }
            _ => String::from(NOTHING),
        },
        3 => match node {
            Value::Object(map) => {
                let key = rng.pick(KEYS).to_string();
                let new = interesting_number(rng);
                let words = format!("added {place}.{key} = {new}");
                map.insert(key, new);
                words
            }
            _ => String::from(NOTHING),
        },
        4 => match node {
            Value::Array(items) => {
                if items.is_empty() || rng.chance(0.3) {
                    items.clear();
                    format!("emptied {place}")
                } else {
                    let item = items[rng.below(items.len())].clone();
                    let size = serde_json::to_string(&item).map_or(1, |s| s.len().max(1));
                    let wanted = *rng.pick(&[2, 10, 100, 1000, 10_000, 100_000, 1_000_000]);
                    let copies = wanted.min(MAX_TEXT_BYTES / 2 / size).max(1);
                    items.extend(std::iter::repeat_n(item, copies));
                    format!("{place}: {copies} more copies of an item")
                }
            }
            _ => String::from(NOTHING),
        },
        5 => {
            let tag = rng.pick(TAGS).to_string();
            match node {
                Value::Object(map) if map.contains_key("kind") => {
                    map.insert("kind".into(), Value::String(tag.clone()));
                    format!("{place}.kind = {tag}")
                }
                Value::Object(map) if map.contains_key("metric") => {
                    map.insert("metric".into(), Value::String(tag.clone()));
                    format!("{place}.metric = {tag}")
                }
                Value::String(_) => {
                    *node = Value::String(tag.clone());
                    format!("{place} = {tag}")
                }
                _ => String::from(NOTHING),
            }
        }
        6 => {
            // A tagged object made again from scratch (a distribution or a
            // step-time model), so that deep values stay plausible.
            let Value::Object(map) = &*node else {
                return String::from(NOTHING);
            };
            let tag = map.get("kind").and_then(Value::as_str).unwrap_or("");
            let new = match tag {
                "alpha_beta" | "roofline" | "operations" | "table" | "batch_table" => {
                    serde_json::to_value(scenario::step_time(rng, &mut Vec::new()))
                }
                _ => {
                    let typical = rng.log_uniform(1.0, 10_000.0);
                    serde_json::to_value(scenario::dist(rng, typical))
                }
            };
            match new {
                Ok(new) => {
                    *node = new;
                    format!("{place} made again")
                }
                Err(_) => String::from(NOTHING),
            }
        }
        7 => {
            // Swap in another subtree of the same document.
            let other = all[rng.below(all.len())].clone();
            let mut copy = value.clone();
            let Some(source) = at(&mut copy, &other).map(|v| v.clone()) else {
                return String::from(NOTHING);
            };
            if let Some(node) = at(value, &path) {
                *node = source;
            }
            format!("{place} = a copy of {}", describe(&other))
        }
        _ => match node {
            Value::Number(_) => {
                let new = if rng.chance(0.5) {
                    Value::from(rng.range(0, 10))
                } else {
                    Value::from(rng.range(0, 100_000))
                };
                let words = format!("{place} = {new}");
                *node = new;
                words
            }
            _ => String::from(NOTHING),
        },
    }
}

/// The JSON text of `value` with one object's key written twice (the
/// second with a changed value), which no structural mutation can make.
pub fn with_duplicate_key(rng: &mut Rng, value: &Value) -> (String, String) {
    let mut copy = value.clone();
    let objects: Vec<Path> = paths(value)
        .into_iter()
        .filter(|p| {
            let mut v = value;
            for step in p {
                v = match step {
                    Step::Key(k) => &v[k.as_str()],
                    Step::Index(i) => &v[*i],
                };
            }
            v.as_object().is_some_and(|m| !m.is_empty())
        })
        .collect();
    if objects.is_empty() {
        return (text(value), "no object to duplicate a key in".into());
    }
    let path = objects[rng.below(objects.len())].clone();
    let place = describe(&path);
    let Some(Value::Object(map)) = at(&mut copy, &path) else {
        return (text(value), "no object".into());
    };
    let keys: Vec<String> = map.keys().cloned().collect();
    let key = rng.pick(&keys).clone();
    let mut twin = map[&key].clone();
    if rng.chance(0.5) {
        mutate_value(rng, &mut twin);
    }
    let marker = format!("__sojourn_fuzz_duplicate__{key}");
    map.insert(marker.clone(), twin);
    let out = text(&copy).replacen(&format!("\"{marker}\""), &format!("\"{key}\""), 1);
    (out, format!("duplicated key {place}.{key}"))
}

/// One edit of the text itself.
pub fn mutate_text(rng: &mut Rng, text: &mut String) -> String {
    if text.is_empty() {
        text.push('{');
        return "text: {".into();
    }
    let at = floor_char_boundary(text, rng.below(text.len()));
    match rng.below(6) {
        0 => {
            text.truncate(at);
            format!("truncated at byte {at}")
        }
        1 => {
            let c = text[at..].chars().next().unwrap_or(' ');
            let flipped = char::from_u32(u32::from(c) ^ (1 << rng.below(7))).unwrap_or('?');
            text.replace_range(at..at + c.len_utf8(), &flipped.to_string());
            format!("byte {at}: {c:?} -> {flipped:?}")
        }
        2 => {
            let junk = *rng.pick(&[
                "{", "}", "[", "]", ",", "\"", ":", "-", "0", "1e999", "null", "\\u0000",
                "\u{feff}", "é",
            ]);
            text.insert_str(at, junk);
            format!("inserted {junk:?} at byte {at}")
        }
        3 => {
            let end = floor_char_boundary(text, (at + rng.range(1, 64) as usize).min(text.len()));
            text.replace_range(at..end, "");
            format!("deleted bytes {at}..{end}")
        }
        4 => {
            let end = floor_char_boundary(text, (at + rng.range(1, 256) as usize).min(text.len()));
            let piece = text[at..end].to_string();
            text.insert_str(end, &piece);
            format!("repeated bytes {at}..{end}")
        }
        _ => {
            let digits = text
                .char_indices()
                .filter(|(_, c)| c.is_ascii_digit())
                .map(|(i, _)| i)
                .collect::<Vec<_>>();
            if digits.is_empty() {
                return "no digit".into();
            }
            let i = digits[rng.below(digits.len())];
            let new = *rng.pick(&["9999999999999999999999", "-", ".", "e308", "0000", "5"]);
            text.insert_str(i, new);
            format!("inserted {new:?} in a number at byte {i}")
        }
    }
}

/// The largest char boundary of `text` at or before `index`.
pub fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// Compact JSON (serialising a `Value` cannot fail).
pub fn text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

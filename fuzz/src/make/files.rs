//! The generators of the newer inputs: request traces, length tables, the
//! search boxes' typed lists and share links (measurements to fit are in
//! `measurements.rs`), each mostly well-formed, with cells, bytes and bits
//! damaged; and the damaged cells the generators share.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use sha2::{Digest, Sha256};
use sojourn_engine::ScenarioParams;

use super::{base_scenario, corpus_scenario, example_value, mutate, scenario, shortened};
use crate::corpus;
use crate::input::{Input, Kind};
use crate::rng::Rng;

/// Cells a spreadsheet or a hand edit might hold where a number belongs.
pub(super) const ODD_CELLS: &[&str] = &[
    "",
    "-1",
    "0",
    "-0",
    "1e19",
    "1e308",
    "1e-300",
    "inf",
    "-inf",
    "NaN",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "1.5",
    " 7 ",
    "\"12\"",
    "x",
    "1,000",
    "0x10",
    "+3",
    "9007199254740993",
    "5e-324",
];

/// A cell: `normal` mostly, an odd one with probability `odd`.
pub(super) fn cell(rng: &mut Rng, odd: f64, normal: impl FnOnce(&mut Rng) -> String) -> String {
    if rng.chance(odd) {
        rng.pick(ODD_CELLS).to_string()
    } else {
        normal(rng)
    }
}

/// A corpus text, edited zero to two times.
pub(super) fn corpus_text(
    rng: &mut Rng,
    seeds: &[corpus::Seed],
    origin: &mut Vec<String>,
) -> String {
    let (name, text) = *rng.pick(seeds);
    origin.push(format!("corpus {name}"));
    let mut text = text.to_string();
    for _ in 0..rng.below(3) {
        origin.push(mutate::mutate_text(rng, &mut text));
    }
    text
}

/// Text edits to a generated file, sometimes.
pub(super) fn maybe_edit(rng: &mut Rng, text: &mut String, origin: &mut Vec<String>) {
    if rng.chance(0.15) {
        origin.push(mutate::mutate_text(rng, text));
    }
}

pub(super) fn rows_count(rng: &mut Rng) -> usize {
    *rng.pick(&[1, 1, 2, 3, 5, 10, 30, 100, 500, 2000])
}

/// A request trace, imported as the page does (variant `replay`) or fitted
/// (`fit`).
pub fn trace(rng: &mut Rng) -> Input {
    let (base, words) = base_scenario(rng, false);
    let mut origin = vec![words];
    let variant = if rng.chance(0.7) { "replay" } else { "fit" };
    let text = if rng.chance(0.2) {
        corpus_text(rng, corpus::TRACES, &mut origin)
    } else {
        let mut columns = vec!["arrival_s", "input_tokens", "output_tokens"];
        if rng.chance(0.5) {
            columns.push("class");
        }
        if rng.chance(0.3) {
            columns.push("prefix_hit");
        }
        if rng.chance(0.05) {
            columns.push("extra");
        }
        if rng.chance(0.05) {
            columns.remove(rng.below(3));
        }
        if rng.chance(0.2) {
            let i = rng.below(columns.len());
            let j = rng.below(columns.len());
            columns.swap(i, j);
        }
        let n = rows_count(rng);
        let span = rng.log_uniform(1e-3, 3.0 * 86_400.0);
        let sorted = rng.chance(0.8);
        let odd = *rng.pick(&[0.0, 0.0, 0.01, 0.05]);
        let newline = if rng.chance(0.2) { "\r\n" } else { "\n" };
        origin.push(format!("generated trace of {n} rows over {span:.3} s"));
        let mut text = columns.join(",") + newline;
        let mut t = 0.0;
        for _ in 0..n {
            t = if sorted {
                t + span / n as f64 * rng.uniform(0.0, 2.0)
            } else {
                rng.uniform(0.0, span)
            };
            let row: Vec<String> = columns
                .iter()
                .map(|c| match *c {
                    "arrival_s" => cell(rng, odd, |_| format!("{t}")),
                    "input_tokens" => cell(rng, odd, |rng| {
                        format!("{}", rng.log_uniform(1.0, 30_000.0) as u32)
                    }),
                    "output_tokens" => cell(rng, odd, |rng| {
                        format!("{}", rng.log_uniform(1.0, 4000.0) as u32)
                    }),
                    "class" => rng
                        .pick(&["chat", "batch", "", "\"a,b\"", "é", "api"])
                        .to_string(),
                    "prefix_hit" => cell(rng, odd, |rng| {
                        if rng.chance(0.5) {
                            String::new()
                        } else {
                            format!("{}", rng.uniform(0.0, 0.99))
                        }
                    }),
                    _ => "?".into(),
                })
                .collect();
            text += &(row.join(",") + newline);
        }
        maybe_edit(rng, &mut text, &mut origin);
        text
    };
    Input {
        kind: Kind::Trace,
        variant: variant.into(),
        origin: origin.join("; "),
        text,
        base,
    }
}

/// A table of (prompt, output) lengths, a class's `lengths`.
pub fn lengths(rng: &mut Rng) -> Input {
    let (base, words) = base_scenario(rng, false);
    let mut origin = vec![words];
    let text = if rng.chance(0.2) {
        corpus_text(rng, corpus::LENGTHS, &mut origin)
    } else {
        let sep = *rng.pick(&[",", ";", "\t", ", "]);
        let weights = rng.chance(0.4);
        let n = if rng.chance(0.05) { 0 } else { rows_count(rng) };
        let odd = *rng.pick(&[0.0, 0.0, 0.01, 0.05]);
        origin.push(format!("generated table of {n} pairs"));
        let mut text = String::new();
        if rng.chance(0.3) {
            text += "# pasted from a spreadsheet\n";
        }
        if rng.chance(0.6) {
            text += &(if weights {
                ["input", "output", "weight"].join(sep)
            } else {
                ["input", "output"].join(sep)
            } + "\n");
        }
        for _ in 0..n {
            if rng.chance(0.05) {
                text += "\n";
            }
            let mut row = vec![
                cell(rng, odd, |rng| {
                    format!("{}", rng.log_uniform(1.0, 30_000.0).round())
                }),
                cell(rng, odd, |rng| {
                    format!("{}", rng.log_uniform(1.0, 4000.0).round())
                }),
            ];
            if weights || rng.chance(0.02) {
                row.push(cell(rng, odd, |rng| format!("{}", rng.uniform(0.0, 3.0))));
            }
            text += &(row.join(sep) + "\n");
        }
        maybe_edit(rng, &mut text, &mut origin);
        text
    };
    Input {
        kind: Kind::Lengths,
        variant: "table".into(),
        origin: origin.join("; "),
        text,
        base,
    }
}

/// Entries typed in a list box, separated as people type them.
fn typed_list(rng: &mut Rng, entries: &[&str]) -> String {
    let n = *rng.pick(&[0, 1, 2, 3, 5, 8, 40, 270]);
    let sep = *rng.pick(&[", ", ",", ";", " ", "\n", " ,  "]);
    (0..n)
        .map(|_| rng.pick(entries).to_string())
        .collect::<Vec<_>>()
        .join(sep)
}

/// The plan panel's search boxes, as typed (a JSON object of their texts,
/// and the checked disciplines and routers).
pub fn search(rng: &mut Rng) -> Input {
    let (base, words) = base_scenario(rng, true);
    let counts = [
        "1",
        "2",
        "8",
        "64",
        "256",
        "1024",
        "8192",
        "0",
        "4294967295",
        "4294967296",
        "-1",
        "1.5",
        "1e3",
        "1,024",
        "abc",
        "16",
        "32",
        "128",
        "512",
        "2048",
    ];
    let limits = [
        "none",
        "None",
        "0",
        "1",
        "16",
        "64",
        "4294967296",
        "-5",
        "x",
    ];
    let loads = [
        "0.5", "1", "1.5", "2", "3", "0", "-1", "1e300", "1e-300", "inf", "nan", "10", "0.25",
    ];
    let disciplines = [
        "fcfs",
        "priority",
        "shortest_input_first",
        "earliest_deadline_first",
        "lifo",
    ];
    let routers = [
        "round_robin",
        "join_shortest_queue",
        "least_kv_load",
        "random",
    ];
    let mut boxes = serde_json::Map::new();
    let pick_names = |rng: &mut Rng, names: &[&str]| -> Value {
        Value::Array(
            names
                .iter()
                .filter(|_| rng.chance(0.6))
                .map(|n| Value::String(n.to_string()))
                .collect(),
        )
    };
    if rng.chance(0.7) {
        boxes.insert(
            "max_num_seqs".into(),
            Value::String(typed_list(rng, &counts)),
        );
    }
    if rng.chance(0.6) {
        boxes.insert(
            "max_num_batched_tokens".into(),
            Value::String(typed_list(rng, &counts)),
        );
    }
    if rng.chance(0.6) {
        boxes.insert(
            "max_waiting".into(),
            Value::String(typed_list(rng, &limits)),
        );
    }
    if rng.chance(0.5) {
        boxes.insert(
            "load_multipliers".into(),
            Value::String(typed_list(rng, &loads)),
        );
    }
    if rng.chance(0.5) {
        let names = pick_names(rng, &disciplines);
        boxes.insert("disciplines".into(), names);
    }
    if rng.chance(0.4) {
        let names = pick_names(rng, &routers);
        boxes.insert("routers".into(), names);
    }
    Input {
        kind: Kind::Search,
        variant: "boxes".into(),
        origin: words,
        text: Value::Object(boxes).to_string(),
        base,
    }
}

/// A link value: format, dot, base64url payload.
fn link_of(format: &str, payload: &[u8]) -> String {
    format!("{format}.{}", URL_SAFE_NO_PAD.encode(payload))
}

/// A scenario to share: small generated, the example shortened, or a
/// corpus file (when it reads).
fn shared_scenario(rng: &mut Rng, origin: &mut Vec<String>) -> ScenarioParams {
    let roll = rng.below(10);
    if roll < 7 {
        let p = scenario::small(rng);
        origin.push(p.name.clone());
        return p;
    }
    let mut value = if roll < 9 {
        origin.push("example".into());
        example_value()
    } else {
        let shipped = rng.chance(0.5);
        let (name, _, value) = corpus_scenario(rng, shipped);
        origin.push(format!("corpus {name}"));
        value.unwrap_or_else(example_value)
    };
    origin.extend(shortened(rng, &mut value));
    serde_json::from_value(value).unwrap_or_else(|_| ScenarioParams::overnight_batch())
}

/// A damaged share link, an older format, a crafted payload, or a query
/// string around one.
pub fn link(rng: &mut Rng) -> Input {
    let mut origin = Vec::new();
    let input = |variant: &str, origin: Vec<String>, text: String, base: String| Input {
        kind: Kind::Link,
        variant: variant.into(),
        origin: origin.join("; "),
        text,
        base,
    };
    match rng.weighted(&[8, 3, 50, 12, 10, 5, 4, 8]) {
        0 => {
            let pieces = [
                "?", "&", "s=", "?s=", "s", "=", "OLD", "%3F", "a=b", "&&", "#", "+", "%26s%3D1",
                "2.x", "%20",
            ];
            let text: String = (0..rng.range(0, 8)).map(|_| *rng.pick(&pieces)).collect();
            origin.push("a query string".into());
            input("query", origin, text, String::new())
        }
        1 => {
            let mut text = corpus_text(rng, corpus::LINKS, &mut origin);
            text = text.trim().to_string();
            input("link", origin, text, String::new())
        }
        2 | 7 => {
            let params = shared_scenario(rng, &mut origin);
            let Ok(original) = sojourn_app::link::encode(&params) else {
                return input("link", origin, "2.".into(), String::new());
            };
            let mut text = original.clone();
            let (format, payload) = original.split_once('.').unwrap_or(("2", ""));
            match rng.weighted(&[40, 20, 15, 15, 10]) {
                0 => {
                    let mut bytes = URL_SAFE_NO_PAD.decode(payload).unwrap_or_default();
                    for _ in 0..*rng.pick(&[1, 1, 1, 2, 3]) {
                        if !bytes.is_empty() {
                            let i = rng.below(bytes.len());
                            let bit = rng.below(8);
                            bytes[i] ^= 1 << bit;
                            origin.push(format!("payload byte {i} bit {bit} flipped"));
                        }
                    }
                    text = link_of(format, &bytes);
                }
                1 => {
                    let alphabet =
                        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
                    let mut chars: Vec<u8> = text.into_bytes();
                    let i = 2 + rng.below(chars.len().saturating_sub(2).max(1));
                    if i < chars.len() {
                        chars[i] = *rng.pick(alphabet);
                    }
                    origin.push(format!("character {i} replaced"));
                    text = String::from_utf8(chars).unwrap_or_default();
                }
                2 => {
                    let at = rng.below(text.len());
                    text.truncate(at);
                    origin.push(format!("cut at {at}"));
                }
                3 => {
                    let at = mutate::floor_char_boundary(&text, rng.below(text.len()));
                    if rng.chance(0.5) {
                        const PIECES: [&str; 7] = ["A", "_", "-", "=", "%", " ", "."];
                        let piece = PIECES[rng.below(PIECES.len())];
                        text.insert_str(at, piece);
                        origin.push(format!("inserted at {at}"));
                    } else {
                        text.remove(at);
                        origin.push(format!("removed {at}"));
                    }
                }
                _ => {
                    let new = *rng.pick(&["1", "3", "02", "", " 2", "2.2", "-1", "99999999999"]);
                    text = format!("{new}.{payload}");
                    origin.push(format!("format {new:?}"));
                }
            }
            let variant = if rng.chance(0.1) {
                "storage"
            } else {
                "damaged"
            };
            if variant == "storage" {
                return input(variant, origin, text, String::new());
            }
            input(variant, origin, text, original)
        }
        3 | 4 => {
            // Well-formed links around edited JSON: format 1 (zlib) or 2
            // (digest and zlib), so the decoder's parser and the run see it.
            let params = shared_scenario(rng, &mut origin);
            let mut value = serde_json::to_value(&params).unwrap_or(Value::Null);
            for _ in 0..rng.range(0, 3) {
                origin.push(mutate::mutate_value_somehow(rng, &mut value));
            }
            let mut json = mutate::text(&value);
            if rng.chance(0.1) {
                origin.push(mutate::mutate_text(rng, &mut json));
            }
            let compressed = miniz_oxide::deflate::compress_to_vec_zlib(json.as_bytes(), 6);
            let text = if rng.chance(0.4) {
                origin.push("format 1".into());
                link_of("1", &compressed)
            } else {
                origin.push("format 2".into());
                let mut payload = Sha256::digest(json.as_bytes())[..12].to_vec();
                payload.extend(compressed);
                link_of("2", &payload)
            };
            let variant = if rng.chance(0.2) { "storage" } else { "link" };
            input(variant, origin, text, String::new())
        }
        5 => {
            let format = *rng.pick(&["1", "2", "3", "x", ""]);
            let len = *rng.pick(&[0, 1, 12, 13, 40, 1000]);
            let bytes: Vec<u8> = (0..len).map(|_| rng.u64() as u8).collect();
            origin.push(format!("{len} random bytes, format {format:?}"));
            input("link", origin, link_of(format, &bytes), String::new())
        }
        _ => {
            // A payload that inflates beyond the limit.
            let size = *rng.pick(&[4 * 1024 * 1024 + 1, 8 * 1024 * 1024, 20 * 1024 * 1024]);
            let mut json = vec![b' '; size];
            json[0] = b'{';
            if let Some(last) = json.last_mut() {
                *last = b'}';
            }
            let compressed = miniz_oxide::deflate::compress_to_vec_zlib(&json, 9);
            let format = *rng.pick(&["1", "2"]);
            let payload = if format == "2" {
                let mut p = Sha256::digest(&json)[..12].to_vec();
                p.extend(compressed);
                p
            } else {
                compressed
            };
            origin.push(format!("inflates to {size} bytes"));
            let variant = if rng.chance(0.5) { "storage" } else { "link" };
            input(variant, origin, link_of(format, &payload), String::new())
        }
    }
}

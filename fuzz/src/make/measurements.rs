//! The generator of measurements to fit: benchmark points and step-time
//! tables as `sojourn calibrate` and the page read them (CSV or JSON), from
//! the corpus or made, mostly well-formed, with cells damaged.

use serde_json::{Value, json};

use super::base_scenario;
use super::files::{cell, corpus_text, maybe_edit, rows_count};
use crate::corpus;
use crate::input::{Input, Kind};
use crate::rng::Rng;

/// Measurements to fit: step times, benchmark points or a measured table,
/// as CSV or JSON.
pub fn calibration(rng: &mut Rng) -> Input {
    let (base, words) = base_scenario(rng, false);
    let mut origin = vec![words];
    let odd = *rng.pick(&[0.0, 0.0, 0.01, 0.05]);
    let csv = rng.chance(0.7);
    let (variant, text) = match rng.weighted(&[10, 40, 25, 15, 10]) {
        0 => ("corpus", corpus_text(rng, corpus::CALIBRATION, &mut origin)),
        1 => {
            let n = if rng.chance(0.02) {
                2001
            } else {
                rows_count(rng).min(200)
            };
            origin.push(format!("{n} step times"));
            let rows: Vec<[String; 5]> = (0..n)
                .map(|_| {
                    let prefill = *rng.pick(&[0, 0, 1, 16, 512, 2048, 8192]);
                    let context = *rng.pick(&[0, 0, 0, 256, 4096]) * u64::from(prefill > 0);
                    let decodes = if prefill == 0 {
                        rng.range(1, 256)
                    } else {
                        rng.range(0, 64)
                    };
                    let kv = context + prefill + decodes * rng.range(1, 4000);
                    let step = rng.log_uniform(1e-3, 0.5);
                    [
                        cell(rng, odd, |_| prefill.to_string()),
                        cell(rng, odd, |_| context.to_string()),
                        cell(rng, odd, |_| decodes.to_string()),
                        cell(rng, odd, |_| kv.to_string()),
                        cell(rng, odd, |_| format!("{step}")),
                    ]
                })
                .collect();
            let columns = [
                "prefill_tokens",
                "prefill_context",
                "decode_seqs",
                "kv_tokens",
                "step_s",
            ];
            (
                "step_times",
                table_text(rng, csv, "step_times", &columns, &rows),
            )
        }
        2 => {
            let n = if rng.chance(0.05) {
                40
            } else {
                rng.range(1, 4) as usize
            };
            origin.push(format!("{n} benchmark points"));
            let rows: Vec<[String; 8]> = (0..n)
                .map(|_| {
                    let offline = rng.chance(0.5);
                    let figure = |rng: &mut Rng, value: f64| {
                        if rng.chance(0.5) {
                            cell(rng, odd, |_| format!("{value}"))
                        } else {
                            String::new()
                        }
                    };
                    [
                        if offline {
                            "offline".into()
                        } else {
                            rng.pick(&["concurrency", "concurrency", "open"])
                                .to_string()
                        },
                        if offline || rng.chance(0.3) {
                            cell(rng, odd, |rng| {
                                rng.pick(&[1, 8, 50, 100, 1000, 4_000_000]).to_string()
                            })
                        } else {
                            String::new()
                        },
                        if offline {
                            String::new()
                        } else {
                            cell(rng, odd, |rng| rng.pick(&[1, 2, 8, 16, 64]).to_string())
                        },
                        cell(rng, odd, |rng| rng.pick(&[16, 128, 1000, 8000]).to_string()),
                        cell(rng, odd, |rng| rng.pick(&[1, 2, 16, 200, 1000]).to_string()),
                        {
                            let v = rng.log_uniform(10.0, 1e5);
                            figure(rng, v)
                        },
                        {
                            let v = rng.log_uniform(1.0, 200.0);
                            figure(rng, v)
                        },
                        {
                            let v = rng.log_uniform(5.0, 20_000.0);
                            figure(rng, v)
                        },
                    ]
                })
                .collect();
            let columns = [
                "mode",
                "requests",
                "clients",
                "input_tokens",
                "output_tokens",
                "output_tokens_per_s",
                "mean_itl_ms",
                "mean_ttft_ms",
            ];
            (
                "benchmarks",
                table_text(rng, csv, "benchmarks", &columns, &rows),
            )
        }
        kind => {
            let batch = kind == 4;
            let (first, second) = if batch {
                (["batch_size", "context_tokens"], [1.0, 512.0, 32_000.0])
            } else {
                (["batch_tokens", "kv_tokens"], [8192.0, 200_000.0, 0.0])
            };
            let a: Vec<f64> = (0..rng.range(1, 4))
                .map(|k| {
                    if k == 0 {
                        1.0
                    } else {
                        (rng.uniform(0.0, 1.0) * f64::max(second[0], 8192.0))
                            .round()
                            .max(1.0)
                    }
                })
                .collect();
            let b: Vec<f64> = (0..rng.range(1, 4))
                .map(|k| {
                    if k == 0 {
                        0.0
                    } else {
                        (rng.uniform(0.0, 1.0) * second[1]).round()
                    }
                })
                .collect();
            origin.push(format!("a {} x {} table", a.len(), b.len()));
            let mut text = format!("{},{},step_s\n", first[0], first[1]);
            for x in &a {
                for y in &b {
                    if rng.chance(0.03) {
                        continue;
                    }
                    let step = 0.005 + x * 1e-5 + y * 1e-7 * rng.uniform(0.5, 1.5);
                    text += &format!(
                        "{},{},{}\n",
                        cell(rng, odd, |_| x.to_string()),
                        cell(rng, odd, |_| y.to_string()),
                        cell(rng, odd, |_| step.to_string())
                    );
                }
            }
            (if batch { "batch_table" } else { "table" }, text)
        }
    };
    let mut text = text;
    maybe_edit(rng, &mut text, &mut origin);
    Input {
        kind: Kind::Calibration,
        variant: variant.into(),
        origin: origin.join("; "),
        text,
        base,
    }
}

/// Rows as CSV (a header, one line each) or as JSON (`{"list": [{...}]}`,
/// numbers where a cell reads as one, empty cells left out).
fn table_text<const N: usize>(
    rng: &mut Rng,
    csv: bool,
    list: &str,
    columns: &[&str; N],
    rows: &[[String; N]],
) -> String {
    if csv {
        let mut text = columns.join(",") + "\n";
        if rng.chance(0.2) {
            text = format!("# measured by hand\n{text}");
        }
        for row in rows {
            text += &(row.join(",") + "\n");
        }
        return text;
    }
    let items: Vec<Value> = rows
        .iter()
        .map(|row| {
            let mut item = serde_json::Map::new();
            for (c, v) in columns.iter().zip(row) {
                if v.is_empty() {
                    continue;
                }
                let value = serde_json::from_str::<Value>(v.trim())
                    .ok()
                    .filter(|v| v.is_number())
                    .unwrap_or_else(|| Value::String(v.clone()));
                item.insert(c.to_string(), value);
            }
            Value::Object(item)
        })
        .collect();
    json!({ list: items }).to_string()
}

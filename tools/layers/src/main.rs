//! `sojourn-layers [ROOT] [--graph]`: checks that the engine's and the
//! app's modules form one-way layers (ARCHITECTURE.md, "Layers"); prints
//! every upward use, cycle and unlayered module with its file and line,
//! and exits 1 if there is any. `--graph` prints each crate's module graph
//! instead.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sojourn_layers::layers::{Layers, graph, problems};
use sojourn_layers::paths::{Directory, uses};

/// The engine's layers, lowest first.
const ENGINE: &[&[&str]] = &[
    // foundations
    &["error", "format", "rng", "samplers", "stats", "serde_float"],
    // the scenario as written: serde types, defaults, presets
    &["params"],
    // the validated Scenario, distributions, memory, step time
    &["model"],
    // the simulator; returns a run output, never names the report
    &["sim"],
    // built from a run output
    &["report"],
    // the capacity planner
    &["plan"],
    // how results read: formats, run summary, tables (page and CLI)
    &["present"],
    // the benchmark scenario and published measurements replayed
    &["bench", "calibration"],
];

/// The engine's modules whose children still use each other in a cycle,
/// and what would undo each (issue 41). Every other module's children
/// form one-way layers; `model`'s did once validation stopped recursing.
const ENGINE_CYCLES_INSIDE: &[(&str, &str)] = &[
    (
        "calibration",
        "the CSV reader, the point catalogue and the vLLM bench reader share row types",
    ),
    (
        "params",
        "plan's candidates resolve presets, and presets carry plan's PricingModel",
    ),
    (
        "plan",
        "the result types, the runner, the cost and the curve refer to each other",
    ),
    ("report", "the quantiles and the row renderer share helpers"),
    (
        "sim",
        "requests' ids and specs, and the free-block pool and the step rules, share types",
    ),
];

/// The app's modules whose children still use each other in a cycle.
const APP_CYCLES_INSIDE: &[(&str, &str)] = &[(
    "panels",
    "the load editor and the workload panel draw each other's rows",
)];

/// The app's layers, lowest first.
const APP: &[&[&str]] = &[
    // what the page needs from the browser; numbers, help and sources
    &["browser", "format", "help", "provenance", "tables"],
    // charts, and the results they draw
    &["charts"],
    &["results"],
    // the page's inputs declared once
    &["registry"],
    // the engine's field paths in the page's words; the scenario in the URL
    &["words", "link"],
    // the page's state: the form's values, jobs and the workers that run them
    &["form", "job", "worker", "worker_client", "state"],
    // the panels, and the page that holds them
    &["panels"],
    &["app"],
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show_graph = args.iter().any(|a| a == "--graph");
    let root = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let mut failed = false;
    let crates = [
        ("engine", "engine/src", ENGINE, ENGINE_CYCLES_INSIDE),
        ("app", "src", APP, APP_CYCLES_INSIDE),
    ];
    for (name, dir, layers, cycles_inside) in crates {
        let (modules, found) = match uses(&Directory(root.join(dir)), Path::new("lib.rs")) {
            Ok(found) => found,
            Err(e) => {
                eprintln!("check-layers: {name}: {e}");
                failed = true;
                continue;
            }
        };
        if show_graph {
            for (from, to) in graph(&found) {
                println!(
                    "{name}: {from} -> {}",
                    to.into_iter().collect::<Vec<_>>().join(", ")
                );
            }
            continue;
        }
        let wrong = problems(
            &Layers {
                layers,
                cycles_inside,
            },
            &modules,
            &found,
        );
        for line in &wrong {
            println!("check-layers: {name}: {line}");
        }
        if wrong.is_empty() {
            println!(
                "check-layers: {name}: {} modules, {} uses between them, no cycle, every use points down",
                modules.len(),
                found.iter().filter(|u| u.from != u.to).count()
            );
        }
        for (module, what) in cycles_inside {
            println!("check-layers: {name}: not yet layered inside: {module} ({what})");
        }
        failed |= !wrong.is_empty();
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

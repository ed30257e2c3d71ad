//! `sojourn-layers [ROOT] [--graph]`: checks that the modules inside each
//! of the engine's crates and the app form one-way layers (Cargo orders
//! the crates themselves; ARCHITECTURE.md, "Layers"); prints
//! every upward use, cycle and unlayered module with its file and line,
//! and exits 1 if there is any. `--graph` prints each crate's module graph
//! instead.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sojourn_layers::layers::{Layers, as_one_module, graph, problems};
use sojourn_layers::paths::{Directory, uses};

/// The model crate's layers, lowest first (Cargo orders the crates:
/// model < sim < plan < present < calibration < engine; these are the
/// layers inside each).
const MODEL: &[&[&str]] = &[
    // foundations
    &["error", "format", "rng", "samplers", "stats", "serde_float"],
    // the scenario as written: serde types, defaults, presets
    &["params"],
    // the validated Scenario, distributions, memory, step time
    &["model"],
];

/// The sim crate's: the simulator returns a run output and never names the
/// report built from it.
const SIM: &[&[&str]] = &[&["sim"], &["report"]];

/// The engine crate's own modules (the public face and the CLI).
const ENGINE: &[&[&str]] = &[&["bench"]];

/// The crates whose root is one module (the planner, the presentation, the
/// calibration): their top-level modules are that module's children.
const PLAN: &[&[&str]] = &[&["plan"]];
const PRESENT: &[&[&str]] = &[&["present"]];
const CALIBRATION: &[&[&str]] = &[&["calibration"]];

/// The modules whose children still use each other in a cycle, and what
/// would undo each (issue 41). Every other module's children form one-way
/// layers; `model`'s did once validation stopped recursing.
const MODEL_CYCLES_INSIDE: &[(&str, &str)] = &[(
    "params",
    "plan's candidates resolve presets, and presets carry plan's PricingModel",
)];
const SIM_CYCLES_INSIDE: &[(&str, &str)] = &[
    ("report", "the quantiles and the row renderer share helpers"),
    (
        "sim",
        "requests' ids and specs, and the free-block pool and the step rules, share types",
    ),
];
const PLAN_CYCLES_INSIDE: &[(&str, &str)] = &[(
    "plan",
    "the result types, the runner, the cost and the curve refer to each other",
)];
const CALIBRATION_CYCLES_INSIDE: &[(&str, &str)] = &[(
    "calibration",
    "the CSV reader, the point catalogue and the vLLM bench reader share row types",
)];

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
    // (crate, source directory, whether its root is one module, its
    // layers, the cycles inside it still excused)
    let crates = [
        (
            "model",
            "engine/model/src",
            false,
            MODEL,
            MODEL_CYCLES_INSIDE,
        ),
        ("sim", "engine/sim/src", false, SIM, SIM_CYCLES_INSIDE),
        ("plan", "engine/plan/src", true, PLAN, PLAN_CYCLES_INSIDE),
        ("present", "engine/present/src", true, PRESENT, &[]),
        (
            "calibration",
            "engine/calibration/src",
            true,
            CALIBRATION,
            CALIBRATION_CYCLES_INSIDE,
        ),
        ("engine", "engine/src", false, ENGINE, &[]),
        ("app", "src", false, APP, APP_CYCLES_INSIDE),
    ];
    for (name, dir, one_module, layers, cycles_inside) in crates {
        let (modules, found) = match uses(&Directory(root.join(dir)), Path::new("lib.rs")) {
            Ok(found) if one_module => as_one_module(name, found),
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

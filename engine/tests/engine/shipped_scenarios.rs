//! The scenarios shipped in `scenarios/` (opened by `sojourn run FILE`,
//! `sojourn plan FILE` and the page's "Open an example" menu): each reads
//! through the engine's JSON parser, validates, runs, and says what its
//! write-up in `scenarios/README.md` says it does.

use std::path::{Path, PathBuf};

use sojourn_engine::calibration::{points, replay};
use sojourn_engine::{
    CudaGraphs, OperationsParams, PlanParams, Report, RunOptions, Scenario, ScenarioParams,
    StepTimeParams, presets, resolve_candidates, scenario_params_from_json, simulate,
};

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// Every `.json` file in `scenarios/`, by file name, sorted.
fn shipped() -> Vec<(String, ScenarioParams)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios/")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            let params = scenario_params_from_json(&bytes)
                .unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
            (name, params)
        })
        .collect()
}

fn shipped_named(file: &str) -> ScenarioParams {
    shipped()
        .into_iter()
        .find(|(name, _)| name == file)
        .unwrap_or_else(|| panic!("scenarios/{file} is missing"))
        .1
}

fn run(params: ScenarioParams) -> Report {
    let scenario = Scenario::try_from(params).unwrap();
    simulate(&scenario, &RunOptions::default()).unwrap()
}

/// A scenario that lists candidates has its own configuration among them
/// (the same hardware figures, GPUs per replica and step-time model), so
/// the plan judges the configured fleet by the decision rule instead of
/// saying "not judged": a hardware block written by hand with fewer fields
/// than the catalog's preset is a different accelerator to the planner.
#[test]
fn a_shipped_plan_judges_its_configured_fleet() {
    for (name, params) in shipped() {
        if params.plan.candidates.is_none() {
            continue;
        }
        let own = ScenarioParams {
            plan: PlanParams::default(),
            ..params.clone()
        };
        assert!(
            resolve_candidates(&params).iter().any(|c| c.params == own),
            "{name}: the configured hardware ({}) is not among the plan's candidates",
            params.hardware.name
        );
    }
}

/// A scenario saved before the catalog's H100 took the memory the card
/// reports (80 GiB then, 79.19 now; a flat 2 GiB reserve then) is still
/// the H100 preset, and a candidate naming that preset takes its own
/// figures, so its plan still judges the configured fleet. An edited
/// figure is not the preset: that candidate is the catalog's.
#[test]
fn a_plan_saved_with_the_earlier_h100_figure_still_judges_its_configured_fleet() {
    let mut params = shipped_named("interactive-chat.json");
    params.hardware.memory_gib = 80.0;
    params.replica.runtime_reserve_gib = Some(2.0);
    let h100 = presets::hardware("h100-sxm").expect("preset");
    assert!(presets::is_hardware_preset(&h100, &params.hardware));
    let own = |p: &ScenarioParams| ScenarioParams {
        plan: PlanParams::default(),
        ..p.clone()
    };
    assert!(
        resolve_candidates(&params)
            .iter()
            .any(|c| c.params == own(&params))
    );
    params.hardware.memory_gib = 75.0;
    assert!(!presets::is_hardware_preset(&h100, &params.hardware));
    let candidates = resolve_candidates(&params);
    assert!(!candidates.iter().any(|c| c.params == own(&params)));
    assert!(candidates.iter().any(|c| c.params.hardware == h100));
}

#[test]
#[ignore = "slow: runs every shipped scenario; scripts/test runs it"]
fn shipped_scenarios_validate_and_run() {
    let shipped = shipped();
    assert!(
        shipped.len() >= 4,
        "only {} scenarios shipped",
        shipped.len()
    );
    for (name, params) in shipped {
        if let Err(error) = Scenario::try_from(params.clone()) {
            panic!("{name} does not validate: {error}");
        }
        // A whole day of the largest (the chat example, about 250,000
        // requests) takes a few seconds here; the test runs them in full.
        let report = run(params);
        let completed = report.overall.met + report.overall.late;
        assert!(
            completed > 0 && completed == report.overall.arrived,
            "{name}: {completed} of {} requests completed",
            report.overall.arrived
        );
    }
}

/// Every shipped scenario plans within the plan's budget, with room: the
/// budget refuses runaway plans (review n13), not the ones we ship.
#[test]
fn shipped_scenarios_plan_within_the_budget() {
    use sojourn_engine::{MAX_PLAN_REQUESTS, PlanError, PlanOptions, check_budget};
    for (name, params) in shipped() {
        let scenario = Scenario::try_from(params).unwrap();
        // The expected work, read from the refusal under a budget of 0.
        let nothing = PlanOptions {
            max_plan_requests: 0.0,
            ..PlanOptions::default()
        };
        let expected_requests = match check_budget(&scenario, &nothing) {
            Err(PlanError::TooMuchWork {
                expected_requests, ..
            }) => expected_requests,
            // (The calibration example is a closed loop: not plannable.)
            Err(PlanError::InvalidCase { case, .. }) if case == "base" => continue,
            other => panic!("{name}: {other:?}"),
        };
        println!("{name}: about {:.1} M requests", expected_requests / 1e6);
        assert!(
            expected_requests < MAX_PLAN_REQUESTS / 2.0,
            "{name}: {expected_requests}"
        );
        assert!(
            check_budget(&scenario, &PlanOptions::default()).is_ok(),
            "{name}"
        );
    }
}

#[test]
fn every_shipped_scenario_has_a_write_up() {
    let readme = std::fs::read_to_string(scenarios_dir().join("README.md")).unwrap();
    for (name, _) in shipped() {
        assert!(
            readme.contains(&format!("`{name}`")),
            "scenarios/README.md does not describe {name}"
        );
    }
}

/// The new scenarios take the per-operation model with the accelerator
/// family's defaults; the calibration example replays NIM's TensorRT-LLM
/// engines, which do not pad steps to CUDA graphs, as its table row does.
#[test]
fn new_scenarios_use_the_calibrated_step_time_model() {
    for (file, cuda_graphs) in [
        ("interactive-chat.json", CudaGraphs::Piecewise),
        ("long-context-documents.json", CudaGraphs::Piecewise),
        ("calibration-nim-llama33-70b.json", CudaGraphs::Off),
    ] {
        assert_eq!(
            shipped_named(file).step_time,
            StepTimeParams::Operations(OperationsParams {
                cuda_graphs,
                ..OperationsParams::default()
            }),
            "{file}"
        );
    }
}

/// The write-up says the documents' KV cache, not `max_num_seqs`, limits
/// concurrency: a replica holds about nine typical documents.
#[test]
fn the_long_context_example_is_kv_bound() {
    let params = shipped_named("long-context-documents.json");
    let max_num_seqs = params.engine.max_num_seqs;
    let scenario = Scenario::try_from(params).unwrap();
    let typical_document_tokens = 50_000.0 + 600.0;
    let documents = scenario.memory().kv_capacity_tokens() as f64 / typical_document_tokens;
    assert!(
        (8.0..12.0).contains(&documents),
        "a replica holds {documents:.1} typical documents"
    );
    assert!(documents < max_num_seqs as f64);
}

/// The calibration example is the published point replayed as
/// `docs/calibration.md`'s table replays it, so the figures its write-up
/// quotes are the table's. Its horizon (5 min instead of a day: the 200
/// requests take 2.5 min) and series interval change only the last bits of
/// the figures' sums.
#[test]
fn the_calibration_example_replays_its_published_point() {
    let point = points()
        .into_iter()
        .find(|p| p.id == "nim180-llama33-70b-h100-fp8-tp2-5000-500-c50")
        .unwrap();
    let table = point
        .scenario(&StepTimeParams::Operations(OperationsParams::default()))
        .unwrap();
    let shipped = shipped_named("calibration-nim-llama33-70b.json");
    assert_eq!(shipped.classes, table.classes);
    let (shipped, table) = (replay(shipped).unwrap(), replay(table).unwrap());
    for (figure, a, b) in [
        (
            "output tokens/s",
            shipped.output_tokens_per_s,
            table.output_tokens_per_s,
        ),
        ("mean ITL", shipped.mean_itl_ms, table.mean_itl_ms),
        ("mean TTFT", shipped.mean_ttft_ms, table.mean_ttft_ms),
    ] {
        assert!((a / b - 1.0).abs() < 1e-9, "{figure}: {a} against {b}");
    }
}

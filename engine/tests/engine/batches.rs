//! The batch statistics against hand-computed runs, under both engines and
//! both schedules, and in the CLI's JSON and summary.

use sojourn_engine::{
    ClassParams, ClusterParams, DistParams, EngineKind, EngineParams, LoadParams, ReplicaParams,
    Report, Router, RunOptions, RunParams, Scenario, ScenarioParams, Schedule, StepSpread,
    StepTimeParams, simulate,
};

use crate::support::{hardware_for_blocks, tiny_model};

/// Each step lasts 1/1024 s per prompt token, plus 1/64 s if it decodes:
/// binary fractions, so the sums below are exact.
const PER_TOKEN_S: f64 = 1.0 / 1024.0;
const DECODE_S: f64 = 1.0 / 64.0;

/// An offline class of `requests` requests, all at time zero, each a
/// `prompt`-token prompt and `output` output tokens, on one replica with
/// 1,000 blocks of 16 tokens, 8 sequences and 512 tokens a step.
fn offline(requests: u32, prompt: f64, output: f64) -> ScenarioParams {
    ScenarioParams {
        name: "offline".into(),
        classes: vec![ClassParams {
            name: "offline".into(),
            batch_size: DistParams::constant(1.0),
            input_tokens: DistParams::constant(prompt),
            output_tokens: DistParams::constant(output),
            load: LoadParams::Offline { requests },
            ..ClassParams::default()
        }],
        model: tiny_model(),
        hardware: hardware_for_blocks(1000, 16),
        replica: ReplicaParams {
            gpus_per_replica: 1,
            gpu_memory_utilization: 1.0,
            runtime_reserve_gib: Some(0.0),
        },
        engine: EngineParams {
            max_num_seqs: 8,
            max_num_batched_tokens: 512,
            block_size: 16,
            ..EngineParams::default()
        },
        cluster: ClusterParams {
            replicas: 1,
            router: Router::RoundRobin,
        },
        step_time: StepTimeParams::AlphaBeta {
            alpha_s_per_token: PER_TOKEN_S,
            beta_s_per_step: DECODE_S,
            overhead_s: 0.0,
        },
        run: RunParams {
            horizon_s: 60.0,
            series_interval_s: 60.0,
            drain_s: None,
            ..RunParams::default()
        },
        ..ScenarioParams::overnight_batch()
    }
}

/// Runs `params` with each engine under each schedule.
fn runs(params: &ScenarioParams) -> Vec<Report> {
    let mut reports = Vec::new();
    for schedule in [Schedule::DecodeFirst, Schedule::PrefillFirst] {
        let mut params = params.clone();
        params.engine.schedule = schedule;
        let scenario = Scenario::try_from(params).expect("valid");
        for engine in [EngineKind::Fast, EngineKind::Reference] {
            let options = RunOptions {
                engine,
                ..RunOptions::default()
            };
            reports.push(simulate(&scenario, &options).expect("runs"));
        }
    }
    reports
}

fn spread(mean: f64, p50: f64, p99: f64) -> StepSpread {
    StepSpread { mean, p50, p99 }
}

/// One request alone: a 100-token prompt in one step (100/1024 s), then
/// four decode steps (1/64 s each) for its other four tokens. The batch is
/// one sequence in every step; the tokens are 100, 1, 1, 1, 1.
#[test]
fn a_request_alone_runs_a_batch_of_one() {
    for report in runs(&offline(1, 100.0, 5.0)) {
        let b = &report.batches;
        let (prefill_s, decode_s) = (100.0 * PER_TOKEN_S, 4.0 * DECODE_S);
        let busy_s = prefill_s + decode_s;
        assert_eq!(b.steps, 5);
        assert_eq!(b.batch_size.by_step, spread(1.0, 1.0, 1.0));
        assert_eq!(b.batch_size.by_time, spread(1.0, 1.0, 1.0));
        // By step the median step decodes one token; by time most of the
        // time goes to the prompt.
        assert_eq!(b.tokens_per_step.by_step, spread(104.0 / 5.0, 1.0, 100.0));
        let mean_by_time = (100.0 * prefill_s + decode_s) / busy_s;
        assert_eq!(
            b.tokens_per_step.by_time,
            spread(mean_by_time, 100.0, 100.0)
        );
        assert_eq!(
            (b.prefill_s, b.decode_s, b.recompute_s),
            (prefill_s, decode_s, 0.0)
        );
        assert_eq!(b.steps_per_s, 5.0 / busy_s);
        // Seven blocks hold the 100-token prompt and the four tokens after
        // it; the one sample, at 60 s, finds the cache empty.
        let blocks = Scenario::try_from(offline(1, 100.0, 5.0))
            .expect("valid")
            .memory()
            .total_blocks as f64;
        assert_eq!(report.series.len(), 1);
        assert_eq!(report.series[0].kv_peak_utilization, 7.0 / blocks);
        let kv = &b.kv_use;
        assert_eq!(kv.len(), 1);
        assert_eq!((kv[0].start_s, kv[0].end_s, kv[0].mean), (0.0, 60.0, 0.0));
        assert_eq!(kv[0].peak, 7.0 / blocks);
    }
}

/// Four requests at time zero, 100-token prompts and 10 output tokens:
/// one step prefills all four (400 tokens, 400/1024 s), then nine steps
/// decode all four (1/64 s each): ten steps of four sequences.
#[test]
fn an_offline_batch_prefills_together_then_decodes_together() {
    for report in runs(&offline(4, 100.0, 10.0)) {
        let b = &report.batches;
        let (prefill_s, decode_s) = (400.0 * PER_TOKEN_S, 9.0 * DECODE_S);
        assert_eq!(b.steps, 10);
        assert_eq!(b.batch_size.by_step, spread(4.0, 4.0, 4.0));
        assert_eq!(b.batch_size.by_time, spread(4.0, 4.0, 4.0));
        assert_eq!(b.tokens_per_step.by_step, spread(436.0 / 10.0, 4.0, 400.0));
        assert_eq!(
            (b.prefill_s, b.decode_s, b.recompute_s),
            (prefill_s, decode_s, 0.0)
        );
        assert_eq!(b.steps_per_s, 10.0 / (prefill_s + decode_s));
    }
}

/// `sojourn run --json` carries the batch statistics, and the summary
/// prints them, and its load lines say what they measure.
#[test]
fn the_cli_reports_the_batch_statistics() {
    let file = std::env::temp_dir().join(format!("sojourn-batches-{}.json", std::process::id()));
    let params = offline(4, 100.0, 10.0);
    std::fs::write(&file, serde_json::to_string(&params).expect("serialises")).expect("writes");
    let run = |json: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sojourn"));
        command.arg("run").arg(&file);
        if json {
            command.arg("--json");
        }
        let output = command.output().expect("the CLI runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).expect("UTF-8")
    };
    let report: serde_json::Value = serde_json::from_str(&run(true)).expect("JSON");
    let batches = &report["batches"];
    assert_eq!(batches["steps"], 10);
    assert_eq!(batches["batch_size"]["by_time"]["p50"], 4.0);
    assert_eq!(batches["batch_size"]["by_step"]["p99"], 4.0);
    assert_eq!(batches["tokens_per_step"]["by_step"]["mean"], 43.6);
    assert_eq!(batches["tokens_per_step"]["by_time"]["p99"], 400.0);
    for part in ["prefill_s", "decode_s", "recompute_s", "steps_per_s"] {
        assert!(batches[part].is_number(), "{part}");
    }
    assert_eq!(batches["kv_use"][0]["end_s"], 60.0);
    assert!(batches["kv_use"][0]["peak"].as_f64().expect("a number") > 0.0);
    assert!(report["series"][0]["kv_peak_utilization"].is_number());
    let summary = run(false);
    assert!(
        summary.contains("running batch 4 (p50 4, p99 4) sequences"),
        "{summary}"
    );
    assert!(summary.contains("10 steps"), "{summary}");
    // The load against the estimate says what it is, and busy time is
    // measured, never called load (issue 20).
    assert!(
        summary.contains("(offered load / estimated capacity "),
        "{summary}"
    );
    assert!(
        summary.contains(" of the time: any request in service"),
        "{summary}"
    );
    assert!(!summary.contains("rho"), "{summary}");
    assert!(
        summary.contains("step time: prefill 74 %, decode 26 %, recomputation 0 %"),
        "{summary}"
    );
    let _ = std::fs::remove_file(&file);
}

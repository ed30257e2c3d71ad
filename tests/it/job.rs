//! The worker's messages survive their trip through JSON, non-finite
//! numbers included, so the page shows exactly what the worker computed;
//! and a plan run by the page's pool of workers is the engine's plan,
//! whatever the number of workers and the order their answers arrive in;
//! the page's jobs as a state machine (`job/controller.rs`).

use sojourn_app::job::{
    Case, JobRequest, PlanDispatch, PlanNext, Stage, WorkerMessage, plan_options, recost,
    run_options,
};
use sojourn_engine::{
    Discipline, DistParams, PlanOptions, PlanResult, RunOptions, RunParams, RunSummary, Scenario,
    ScenarioParams, SensitivityInput, plan, simulate,
};

mod controller;

fn small_params() -> ScenarioParams {
    let mut params = ScenarioParams {
        run: RunParams {
            horizon_s: 3600.0,
            seed: 7,
            ..RunParams::default()
        },
        ..ScenarioParams::overnight_batch()
    };
    params.plan.pricing.usd_per_gpu_hour = Some(2.5);
    params
}

fn round_trip(message: &WorkerMessage) -> WorkerMessage {
    WorkerMessage::from_json(&message.to_json()).expect("the message reads back")
}

#[test]
fn a_run_result_reads_back_bit_for_bit() {
    let scenario = Scenario::try_from(small_params()).expect("valid");
    // The worker's options: the summary's digest is the run's, not the
    // digest of no records (cbf29ce484222325), which the page once showed
    // for every run.
    let report = simulate(&scenario, &run_options()).expect("runs");
    assert!(!report.records.is_empty());
    let digest = format!("{:016x}", report.digest());
    let p_miss = report.overall.p_miss;
    let result = RunSummary::new(report, &scenario);
    assert_eq!(result.digest, digest);
    assert_ne!(result.digest, "cbf29ce484222325");
    assert!(
        result.report.overall.deadline_s.is_nan(),
        "the classes' deadlines differ"
    );
    let message = WorkerMessage::Simulated {
        id: 3,
        case: Case::Base,
        result: Box::new(result),
    };
    let back = round_trip(&message);
    assert_eq!(back.to_json(), message.to_json());
    let WorkerMessage::Simulated { result, .. } = back else {
        panic!("a simulated message");
    };
    assert!(
        result.report.overall.deadline_s.is_nan(),
        "NaN survives as null"
    );
    assert!(result.report.records.is_empty(), "records never travel");
    assert_eq!(result.report.overall.p_miss.to_bits(), p_miss.to_bits());
    assert!(
        result.cost.units.usd_per_success.is_some(),
        "a price gives USD"
    );
}

#[test]
fn infinite_percentiles_survive() {
    let mut params = small_params();
    // One replica cannot finish an hour of this traffic: p99 is infinite.
    params.cluster.replicas = 1;
    params.run.drain_s = Some(0.0);
    let scenario = Scenario::try_from(params).expect("valid");
    let report = simulate(&scenario, &RunOptions::default()).expect("runs");
    let result = RunSummary::new(report, &scenario);
    let message = WorkerMessage::Simulated {
        id: 1,
        case: Case::Worst,
        result: Box::new(result.clone()),
    };
    let WorkerMessage::Simulated { result: back, .. } = round_trip(&message) else {
        panic!("a simulated message");
    };
    assert_eq!(
        back.report.overall.sojourn.p99.to_bits(),
        result.report.overall.sojourn.p99.to_bits()
    );
}

/// A whole plan (explorations, service curve, cases, sensitivity) small
/// enough for a debug build: one hour of smaller overnight batches, two
/// disciplines, two sensitivity inputs, a three-point service curve.
fn small_plan_params() -> ScenarioParams {
    let mut params = ScenarioParams::overnight_batch();
    params.run.horizon_s = 3600.0;
    params.classes[0].batch_size = DistParams::log_normal(200.0, 1000.0);
    params.plan.search.disciplines =
        Some(vec![Discipline::Fcfs, Discipline::EarliestDeadlineFirst]);
    params.plan.max_replicas = 16;
    params.plan.sensitivity.inputs = vec![SensitivityInput::ArrivalRate, SensitivityInput::Price];
    params.plan.service_curve.load_multipliers = vec![0.5, 1.0, 2.0];
    params
}

/// A seeded choice of which running job finishes next (SplitMix64).
struct Shuffle(u64);

impl Shuffle {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// Plans `scenario` as the page does with `workers` workers: each idle
/// worker gets the next job as a JSON request and answers with a JSON
/// message; the running jobs finish in a seeded random order. Also returns
/// the largest number of jobs that ran at once.
fn plan_on_pool(scenario: &Scenario, workers: usize, seed: u64) -> (PlanResult, usize) {
    let mut dispatch = PlanDispatch::new(scenario.clone());
    let mut shuffle = Shuffle(seed);
    // What the workers will answer, in the order they started.
    let mut answers: Vec<String> = Vec::new();
    let mut most_at_once = 0;
    loop {
        while answers.len() < workers {
            let job = match dispatch.next_job().expect("plans") {
                PlanNext::Run(job) => job,
                PlanNext::Wait => break,
                PlanNext::Done(result) => {
                    assert!(answers.is_empty(), "done with jobs still running");
                    return (*result, most_at_once);
                }
            };
            let request = JobRequest::PlanJob { id: 1, job }.to_json();
            let Ok(JobRequest::PlanJob { id, job }) = JobRequest::from_json(&request) else {
                panic!("a plan job reads back");
            };
            let output = job.run(&mut |_| true).expect("runs");
            let answer = WorkerMessage::JobDone {
                id,
                output: Box::new(output),
            };
            answers.push(answer.to_json());
        }
        most_at_once = most_at_once.max(answers.len());
        let answer = answers.swap_remove(shuffle.below(answers.len()));
        let Ok(WorkerMessage::JobDone { output, .. }) = WorkerMessage::from_json(&answer) else {
            panic!("a job's output reads back");
        };
        dispatch.submit(*output);
    }
}

#[test]
fn a_plan_on_any_number_of_workers_is_the_engines_plan() {
    let scenario = Scenario::try_from(small_plan_params()).expect("valid");
    let options = PlanOptions {
        threads: 1,
        ..plan_options()
    };
    let expected = plan(&scenario, &options).expect("plans");
    assert!(
        expected.recommendation.is_some(),
        "the plan recommends a fleet"
    );
    // A plan with NaN in it is not equal to itself: compare the JSON, where
    // every other number is written exactly.
    let expected_json = serde_json::to_string(&expected).expect("serialises");
    for (workers, seed) in [(1, 1), (2, 2), (5, 3)] {
        let (result, most_at_once) = plan_on_pool(&scenario, workers, seed);
        assert_eq!(
            most_at_once, workers,
            "the batches keep {workers} workers busy at some point"
        );
        assert_eq!(result.simulations, expected.simulations);
        assert_eq!(
            serde_json::to_string(&result).expect("serialises"),
            expected_json,
            "{workers} workers"
        );
    }
}

#[test]
fn jobs_and_small_messages_read_back() {
    let job = JobRequest::Simulate {
        id: 42,
        params: Box::new(small_params()),
        cases: true,
    };
    let text = job.to_json();
    let back = JobRequest::from_json(&text).expect("reads back");
    assert_eq!(back.to_json(), text);
    assert_eq!((back.id(), back.stage()), (42, Stage::Simulate));
    for message in [
        WorkerMessage::Ready,
        WorkerMessage::Progress {
            id: 1,
            stage: Stage::Plan,
            fraction: 0.5,
            label: "Planning".to_string(),
        },
        WorkerMessage::Failed {
            id: 1,
            stage: Stage::Simulate,
            message: "too many requests".to_string(),
        },
        WorkerMessage::Finished { id: 1 },
    ] {
        assert_eq!(round_trip(&message), message);
    }
    assert_eq!(WorkerMessage::Ready.job_id(), None);
}

#[test]
fn the_pool_has_a_worker_per_core_within_bounds() {
    use sojourn_app::worker_client::{MAX_WORKERS, pool_size};
    assert_eq!(pool_size(Some(2.0)), 2);
    assert_eq!(pool_size(Some(64.0)), MAX_WORKERS);
    // A browser that reports nothing usable still gets one worker.
    for reported in [None, Some(0.0), Some(f64::NAN)] {
        assert_eq!(pool_size(reported), 1, "{reported:?}");
    }
}

/// The summary of `case` of `params` as the worker makes it.
fn case_summary(params: &ScenarioParams, case: Case) -> RunSummary {
    let scenario = Scenario::try_from(case.params(params)).expect("valid");
    RunSummary::new(
        simulate(&scenario, &run_options()).expect("runs"),
        &scenario,
    )
}

#[test]
fn a_price_edit_recosts_each_case_as_a_fresh_run_would() {
    let old = small_params();
    let mut new = old.clone();
    new.plan.pricing.usd_per_gpu_hour = Some(4.0);
    new.plan.worst.price = 1.5;
    for case in Case::ALL {
        // As the page holds it: through JSON, without records.
        let mut shown = match round_trip(&WorkerMessage::Simulated {
            id: 1,
            case,
            result: Box::new(case_summary(&old, case)),
        }) {
            WorkerMessage::Simulated { result, .. } => *result,
            other => panic!("not a run: {other:?}"),
        };
        let fresh = case_summary(&new, case);
        assert_ne!(
            shown.cost, fresh.cost,
            "{case:?}: the new prices change the cost"
        );
        recost(&mut shown, case, &new);
        assert_eq!(shown.cost, fresh.cost, "{case:?}");
    }
}

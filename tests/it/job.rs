//! The worker's messages survive their trip through JSON, non-finite
//! numbers included, so the page shows exactly what the worker computed.

use sojourn_app::job::{Case, JobRequest, Stage, WorkerMessage, run_options};
use sojourn_engine::{
    PlanOptions, RunOptions, RunParams, RunSummary, Scenario, ScenarioParams, SensitivityInput,
    plan, simulate,
};

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
    params.plan.replications = 2;
    params.plan.max_replicas = 16;
    params.plan.sensitivity.inputs = vec![SensitivityInput::ArrivalRate, SensitivityInput::Price];
    params.plan.sensitivity.replications = 1;
    params.plan.service_curve.load_multipliers = vec![0.5, 1.0, 2.0];
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

#[test]
fn a_plan_reads_back_unchanged() {
    let params = small_params();
    let scenario = Scenario::try_from(params).expect("valid");
    let result = plan(&scenario, &PlanOptions::default()).expect("plans");
    let message = WorkerMessage::Planned {
        id: 2,
        plan: Box::new(result),
    };
    let back = round_trip(&message);
    assert_eq!(back.to_json(), message.to_json());
}

#[test]
fn jobs_and_small_messages_read_back() {
    let job = JobRequest {
        id: 42,
        params: small_params(),
        cases: true,
        plan: false,
    };
    let text = serde_json::to_string(&job).expect("serialises");
    assert_eq!(serde_json::from_str::<JobRequest>(&text).ok(), Some(job));
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

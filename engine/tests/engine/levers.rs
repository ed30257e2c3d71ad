//! The diagnosis of the target that sets the fleet, and the levers tried
//! against it (issue 40, item 6), on a fixture where chat's p99 TPOT sets
//! the fleet because a batch class's long prompts are prefilled in the
//! steps chat decodes in (engine/tests/data/levers.json: Llama 3.1 8B on
//! H100, round robin, a token budget of 8192 and no per-request chunk
//! limit).

use sojourn_engine::{
    Cause, LeverKind, PlanOptions, PlanPoll, PlanResult, PlanSession, Scenario, ScenarioParams,
    TargetParams, plan, scenario_params_from_json,
};

fn fixture() -> ScenarioParams {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/levers.json");
    scenario_params_from_json(&std::fs::read(path).unwrap()).unwrap()
}

fn planned(params: ScenarioParams) -> PlanResult {
    let scenario = Scenario::try_from(params).unwrap();
    plan(&scenario, &PlanOptions::default().search_only()).unwrap()
}

#[test]
#[ignore = "slow: a full plan; scripts/test runs it"]
fn tpot_binds_because_the_batch_prompts_share_the_chat_decodes_steps() {
    let result = planned(fixture());
    let binding = result.binding.as_ref().expect("a target binds");
    assert_eq!(binding.targets, ["chat: p99 TPOT <= 22 ms"]);
    assert_eq!((binding.replicas, binding.without), (3, Some(1)));
    let d = binding.diagnosis.as_ref().expect("a diagnosis");
    assert_eq!((d.class.as_str(), d.replicas), ("chat", 2));
    assert_eq!(d.cause, Cause::SharedPrefill);
    // The batch class takes most of the step time, most of it prefill.
    assert_eq!(d.shares[0].class, "batch");
    assert!(d.shares[0].share > 0.8, "{:?}", d.shares);
    assert!(d.prefill_share > 0.3, "{}", d.prefill_share);
    assert!(d.others_prefill_share > 0.3 && d.others_prefill_share <= d.prefill_share);
    assert!(d.step_tokens_p99 >= 8000.0, "{}", d.step_tokens_p99);
    // The KV cache is far from full: no preemption.
    assert!(d.kv_peak < 0.5 && d.preemptions == 0.0 && d.recompute_share == 0.0);
    let sentence = result.diagnosis_sentence().unwrap();
    assert!(
        sentence.contains("batch takes 9")
            && sentence.contains("chat's decodes share their steps with prefill"),
        "{sentence}"
    );
}

#[test]
#[ignore = "slow: a full plan with its levers; scripts/test runs it"]
fn the_token_budget_lever_meets_every_target_for_less() {
    let result = planned(fixture());
    let d = result.binding.clone().unwrap().diagnosis.unwrap();
    let kinds: Vec<LeverKind> = d.levers.iter().map(|l| l.kind).collect();
    // A token budget of 2048 is in the plan's own search (its TPOT target
    // puts it there), so the levers try 512 only.
    assert!(
        result
            .configurations
            .iter()
            .any(|c| c.max_num_batched_tokens == 2048),
        "the default search holds a budget of 2048"
    );
    assert_eq!(
        kinds,
        [
            LeverKind::TokenBudget,
            LeverKind::Priority,
            LeverKind::SeparatePool
        ]
    );
    let best = &d.levers[d.best.expect("a lever saves")];
    assert_eq!(best.label, "a token budget of 512");
    assert!(best.replicas[0] < 3, "{best:?}");
    assert!(best.saving_usd_per_month.unwrap() > 0.0, "{best:?}");
    // The separate pool holds two fleets, each with its reserve.
    let pool = d
        .levers
        .iter()
        .find(|l| l.kind == LeverKind::SeparatePool)
        .unwrap();
    assert_eq!(pool.replicas.len(), 2, "{pool:?}");
    // Bounded and counted: each lever's runs, in the plan's simulations.
    let each: u64 = d.levers.iter().map(|l| l.simulations).sum();
    assert!(
        d.simulations > 0 && d.simulations == each,
        "{} vs {each}",
        d.simulations
    );
    assert!(d.simulations <= 30, "{}", d.simulations);
    assert!(result.simulations > d.simulations);
    let sentence = result.diagnosis_sentence().unwrap();
    assert!(
        sentence.contains("Best: a token budget of 512 meets every target with")
            && sentence.contains("less per month"),
        "{sentence}"
    );
}

#[test]
#[ignore = "slow: two full plans; scripts/test runs it"]
fn a_session_tries_the_same_levers_as_a_plan() {
    let scenario = Scenario::try_from(fixture()).unwrap();
    let options = PlanOptions::default().search_only();
    let whole = plan(&scenario, &options).unwrap();
    let mut session = PlanSession::new(scenario, options);
    let driven = loop {
        match session.poll().unwrap() {
            PlanPoll::Jobs(jobs) => {
                // Out of order, as workers finish.
                for job in jobs.into_iter().rev() {
                    session.submit(job.run(&mut |_| true).unwrap());
                }
            }
            PlanPoll::Done(result) => break result,
        }
    };
    assert_eq!(*driven, whole);
}

#[test]
#[ignore = "slow: a full plan; scripts/test runs it"]
fn no_lever_is_tried_when_no_latency_target_binds() {
    // Only chat's P(miss) against a 3 s deadline: it sets the fleet.
    let mut p = fixture();
    p.classes[0].deadline_s = 3.0;
    p.plan
        .targets
        .retain(|t| matches!(t, TargetParams::MissProbability { .. }));
    let result = planned(p);
    let binding = result.binding.as_ref().expect("a target binds");
    assert_eq!(binding.targets, ["chat: P(sojourn > 3 s) <= 1%"]);
    let d = binding.diagnosis.as_ref().expect("a diagnosis of chat");
    assert!(d.levers.is_empty() && d.simulations == 0 && d.best.is_none());
    assert!(!d.sentence.contains("Levers"), "{}", d.sentence);
}

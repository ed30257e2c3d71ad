//! The capacity planner: search, costs, sensitivity, confidence intervals,
//! bad input, progress and sessions (the analytic estimate is in
//! `analytic.rs`, files across versions in `files.rs`).
//!
//! Scenarios here are small (minutes of simulated time, thousands of
//! requests) so that whole plans run in a second or two; every statistical
//! check uses fixed seeds and a tolerance derived from its sample size.

use sojourn_engine::{
    CandidateParams, CheckMetric, ClassParams, DistParams, Multipliers, PlanError, PlanOptions,
    PlanPoll, PlanResult, PlanSession, RunOptions, Scenario, ScenarioParams, SearchResult,
    SensitivityInput, Shape, TargetParams, plan, plan_with_progress, simulate,
};

use crate::support::{search_only, servers_scenario};

fn valid(p: ScenarioParams) -> Scenario {
    Scenario::try_from(p).expect("test scenario is valid")
}

#[test]
#[ignore = "slow: oracle: a search against every fleet; scripts/test runs it"]
fn monotone_search_finds_the_brute_force_answer_with_fewer_simulations() {
    let params = servers_scenario(11);
    let scenario = valid(params.clone());
    let result = plan(&scenario, &search_only()).expect("plans");
    let search = &result.configurations[0].search;

    // Brute force: every fleet size with the same seeds (seed + r), judged as
    // the planner judges (mean over seeds of P(miss) <= 5%, busy <= 100%).
    let reps = params.plan.replications as u64;
    let mut meets = Vec::new();
    let mut brute_force_runs = 0;
    for n in 1..=params.plan.max_replicas {
        let (mut p_miss, mut busy) = (0.0, 0.0);
        for r in 0..reps {
            let s = scenario.with_replicas_and_seed(n, 11 + r).unwrap();
            let report = simulate(
                &s,
                &RunOptions {
                    keep_records: false,
                    ..RunOptions::default()
                },
            )
            .unwrap();
            brute_force_runs += 1;
            p_miss += report.classes[0].p_miss / reps as f64;
            busy += report.overall.busy_s / (n as f64 * 500.0) / reps as f64;
        }
        meets.push(p_miss <= 0.05 && busy <= 1.0);
    }
    let first = meets.iter().position(|m| *m).map(|i| i as u32 + 1);
    // The comparison needs a monotone condition; say so if the scenario is not.
    let first_index = first.expect("some fleet meets the target") as usize - 1;
    assert!(
        meets[first_index..].iter().all(|m| *m),
        "the test scenario should be monotone in the fleet size: {meets:?}"
    );
    assert!(
        (7..=12).contains(&first.unwrap()),
        "the answer {first:?} should need queueing, not only capacity"
    );
    assert_eq!(search.found, first, "{}", search.message);
    assert!(
        search.simulations < brute_force_runs / 2,
        "the search ran {} simulations, brute force {brute_force_runs}",
        search.simulations
    );
}

#[test]
fn an_unattainable_target_is_a_result_with_the_best_value_reached() {
    // Outputs of 2000 tokens at 1 ms per step take 2 s alone: a p99 sojourn
    // of 1.5 s is out of reach of any fleet (but above the fastest request,
    // so the input is valid). The planner sees it before any run (the p99
    // of the jobs alone), and reports the value that rules it out.
    let mut p = servers_scenario(3);
    p.classes[0].output_tokens = DistParams::new(Shape::Uniform {
        low: 100.0,
        high: 2000.0,
    });
    p.classes[0].batches_per_hour = 3600.0;
    p.plan.targets = vec![TargetParams::SojournPercentile {
        class: Some("jobs".into()),
        percentile: 0.99,
        bound_s: 1.5,
    }];
    p.plan.max_replicas = 8;
    let result =
        plan(&valid(p), &PlanOptions::default()).expect("an unattainable target is not an error");
    let search = &result.configurations[0].search;
    assert_eq!(search.found, None);
    assert!(result.recommendation.is_none());
    assert_eq!(result.simulations, 0, "ruled out before any run");
    assert!(
        search
            .message
            .starts_with("ruled out without a run: the fastest p99 sojourn is "),
        "{}",
        search.message
    );
    // The value that rules it out: about the 99th percentile of a uniform
    // 0.1-2 s service, 1.98 s (the lower 95% bound of 2,000 draws' p99).
    let fastest: f64 = search
        .message
        .split("is ")
        .nth(1)
        .and_then(|rest| rest.split(" s,").next())
        .and_then(|v| v.parse().ok())
        .expect("the fastest p99 in seconds");
    assert!((fastest - 1.98).abs() < 0.05, "fastest p99: {fastest}");
    assert!(
        result
            .unattainable
            .as_deref()
            .is_some_and(|r| r.starts_with("No fleet can meet jobs: p99 sojourn <= 1.5 s")),
        "{:?}",
        result.unattainable
    );
}

#[test]
fn bad_plan_input_names_the_field() {
    let mut p = ScenarioParams::overnight_batch();
    p.plan.targets = vec![
        TargetParams::miss_probability("api", 1.5),
        TargetParams::SojournPercentile {
            class: Some("nope".into()),
            percentile: 0.99,
            bound_s: 30.0,
        },
        TargetParams::TtftPercentile {
            class: Some("api".into()),
            percentile: 0.99,
            bound_s: 1e-6,
        },
        TargetParams::miss_probability("api", 1.5),
    ];
    p.plan.pricing.usd_per_gpu_hour = Some(-2.0);
    p.plan.worst.arrival_rate = 0.0;
    p.plan.sensitivity.delta = 1.5;
    let e = Scenario::try_from(p).unwrap_err();
    let reason = |field: &str| {
        e.for_field(field)
            .unwrap_or_else(|| panic!("no error for {field}: {e}"))
            .to_string()
    };
    assert!(reason("plan.targets[0].epsilon").contains("strictly between 0 and 1"));
    assert!(reason("plan.targets[1].class").contains("no class is called \"nope\""));
    assert!(reason("plan.targets[2].bound_s").contains("fastest possible service"));
    assert!(reason("plan.targets[3]").contains("the same target as targets[0]"));
    assert!(reason("plan.pricing.usd_per_gpu_hour").contains("-2"));
    assert!(reason("plan.worst.arrival_rate").contains("positive"));
    assert!(reason("plan.sensitivity.delta").contains("between 0 and 1"));

    // A deadline below the fastest possible service, an empty candidate list.
    let mut p = ScenarioParams::overnight_batch();
    p.classes[1].deadline_s = 0.001;
    p.plan.targets = vec![TargetParams::MissProbability {
        class: None,
        epsilon: 0.01,
    }];
    p.plan.candidates = Some(vec![]);
    let e = Scenario::try_from(p).unwrap_err();
    assert!(
        e.for_field("plan.targets[0]").is_some_and(|r| r.contains(
            "class \"api\": the deadline (1.0 ms) is shorter than the fastest possible service"
        )),
        "{e}"
    );
    assert!(
        e.for_field("plan.candidates")
            .is_some_and(|r| r.contains("at least one")),
        "{e}"
    );

    // Candidates: an unknown preset, and hardware the model does not fit.
    let mut p = ScenarioParams {
        model: sojourn_engine::presets::model("llama-3.1-70b").unwrap(),
        ..ScenarioParams::overnight_batch()
    };
    p.replica.gpus_per_replica = 4;
    p.plan.candidates = Some(vec![
        CandidateParams {
            hardware_preset: Some("h900".into()),
            ..CandidateParams::default()
        },
        CandidateParams {
            name: "one L4".into(),
            hardware_preset: Some("l4".into()),
            gpus_per_replica: 1,
            ..CandidateParams::default()
        },
    ]);
    let e = Scenario::try_from(p).unwrap_err();
    assert!(
        e.for_field("plan.candidates[0].hardware_preset")
            .is_some_and(|r| r.contains("unknown accelerator \"h900\"")),
        "{e}"
    );
    assert!(
        e.for_field("plan.candidates[1].gpus_per_replica")
            .is_some_and(|r| r.contains("does not fit")),
        "{e}"
    );
}

#[test]
fn without_listed_targets_an_impossible_deadline_still_runs_and_plans_as_unattainable() {
    // Regression: the default target (P(miss) <= 1% per class) is applied by
    // the planner, not at validation, so a scenario written only to be
    // simulated stays valid even when its deadline is shorter than service.
    let mut p = servers_scenario(23);
    p.plan.targets.clear();
    p.classes[0].deadline_s = 0.05;
    p.plan.max_replicas = 4;
    let scenario = valid(p);
    let result = plan(&scenario, &search_only()).expect("plans");
    assert_eq!(result.targets[0], "jobs: P(sojourn > 50 ms) <= 1%");
    assert_eq!(result.configurations[0].search.found, None);
    // Every job alone already takes longer than the deadline.
    assert!(
        result.configurations[0]
            .search
            .message
            .contains("miss alone, beyond jobs: P(sojourn > 50 ms) <= 1%"),
        "{}",
        result.configurations[0].search.message
    );
}

#[test]
fn plan_costs_follow_the_formula_and_carry_their_basis() {
    let mut p = servers_scenario(5);
    p.plan.pricing.usd_per_gpu_hour = Some(2.5);
    p.plan.pricing.fixed_usd_per_month = 730.0;
    p.plan.pricing.price_date = "2025-06-01".into();
    p.plan.pricing.provider_region = "test region".into();
    p.plan.reserve.failure_reserve_replicas = 2;
    p.plan.reserve.warm_idle_replicas = 1;
    let result = plan(&valid(p), &search_only()).unwrap();
    let rec = result.recommendation.as_ref().expect("a plan");
    let budget = &rec.budget;
    let n = rec.steady_replicas as f64;
    // 500 s measured window; GPUs x price x hours, plus $730/month = $1/h.
    let hours = 500.0 / 3600.0;
    let expected = (n + 3.0) * 2.5 * hours + hours;
    let total = budget.fleet.usd_total.unwrap();
    assert!((total - expected).abs() < 1e-9, "{total} vs {expected}");
    assert!((budget.fleet.usd_reserve.unwrap() - 3.0 * 2.5 * hours).abs() < 1e-12);
    assert_eq!(rec.total_replicas, rec.steady_replicas + 3);
    // Cost per success averages total / met over the replications.
    let per_success = budget.units.usd_per_success.unwrap();
    assert!(per_success > total / 15_000.0 && per_success < total / 10_000.0);
    let [lo, hi] = budget
        .usd_per_success_ci95
        .expect("three replications give an interval");
    assert!(lo <= per_success && per_success <= hi);
    // Every cost carries its date, region, model and success criterion.
    let basis = &budget.basis;
    assert_eq!(basis.price_date, "2025-06-01");
    assert_eq!(basis.provider_region, "test region");
    assert_eq!(basis.model, "tiny");
    assert!(
        basis.success_criterion.contains("jobs: 300 ms"),
        "{}",
        basis.success_criterion
    );
    assert!(basis.label().contains("$2.50/GPU-h"));
}

#[test]
fn the_cheapest_candidate_is_chosen() {
    let mut p = servers_scenario(7);
    p.plan.max_replicas = 12;
    p.plan.pricing.usd_per_gpu_hour = Some(1.0);
    // The same accelerator offered at two prices, and a dearer 2-GPU layout.
    p.plan.candidates = Some(vec![
        CandidateParams {
            name: "dear".into(),
            usd_per_gpu_hour: Some(3.0),
            ..CandidateParams::default()
        },
        CandidateParams {
            name: "cheap".into(),
            usd_per_gpu_hour: Some(2.0),
            ..CandidateParams::default()
        },
    ]);
    let result = plan(&valid(p), &search_only()).unwrap();
    assert_eq!(result.configurations.len(), 2);
    assert_eq!(result.chosen, Some(1));
    assert_eq!(result.recommendation.unwrap().candidate, "cheap");
}

#[test]
#[ignore = "slow: a full plan with sensitivity; scripts/test runs it"]
fn sensitivity_is_sorted_by_impact_and_price_moves_cost_only() {
    let mut p = servers_scenario(9);
    p.plan.max_replicas = 12;
    p.plan.pricing.usd_per_gpu_hour = Some(2.0);
    p.plan.reserve.failure_reserve_replicas = 0;
    p.plan.sensitivity.delta = 0.2;
    p.plan.sensitivity.replications = 2;
    p.plan.sensitivity.inputs = vec![
        SensitivityInput::Price,
        SensitivityInput::ArrivalRate,
        SensitivityInput::OutputTokens,
    ];
    let options = PlanOptions {
        scenarios: false,
        service_curve: false,
        ..PlanOptions::default()
    };
    let result = plan(&valid(p), &options).unwrap();
    let s = result.sensitivity.expect("sensitivity ran");
    assert_eq!(s.rows.len(), 3);
    assert!(
        s.rows.windows(2).all(|w| w[0].impact >= w[1].impact),
        "rows sorted by impact: {:?}",
        s.rows
            .iter()
            .map(|r| (r.label.clone(), r.impact))
            .collect::<Vec<_>>()
    );
    let row = |input| s.rows.iter().find(|r| r.input == input).unwrap();
    // Without fixed costs, cost per success is proportional to the price:
    // x0.8 and x1.2 swing it by exactly 40% of the base, and P(miss) not at all.
    let price = row(SensitivityInput::Price);
    assert!(
        (price.cost_swing - 0.4).abs() < 1e-9,
        "{}",
        price.cost_swing
    );
    assert_eq!(price.p_miss_low, price.p_miss_high);
    // 20% more jobs of 20% longer service on the same fleet: more misses.
    for input in [
        SensitivityInput::ArrivalRate,
        SensitivityInput::OutputTokens,
    ] {
        let r = row(input);
        assert!(r.p_miss_high > r.p_miss_low, "{}: {r:?}", r.label);
    }
    assert_eq!(s.basis.usd_per_gpu_hour, Some(2.0));
}

#[test]
fn confidence_intervals_shrink_with_more_replications() {
    // The p99 sojourn at a fixed fleet (the search ends at 1 replica: the
    // target is loose), over 3 and over 12 seeds. The half-width is
    // t(R - 1) s / sqrt(R): 4.30 s / 1.73 against 2.20 s / 3.46, about 4x
    // narrower for similar s; it would take the first 3 seeds' standard
    // deviation to be a quarter of the 12 seeds' for this to fail.
    let interval = |replications: u32| {
        let mut p = servers_scenario(13);
        p.classes[0].batches_per_hour = 4.0 * 3600.0;
        p.plan.targets = vec![TargetParams::SojournPercentile {
            class: None,
            percentile: 0.99,
            bound_s: 10.0,
        }];
        p.plan.replications = replications;
        p.plan.min_replications = replications;
        let result = plan(&valid(p), &search_only()).unwrap();
        let search = &result.configurations[0].search;
        assert_eq!(search.found, Some(1));
        let check = &search.at_answer.as_ref().unwrap().checks[0];
        assert_eq!(check.metric, CheckMetric::Sojourn);
        let [lo, hi] = check.ci95.expect("an interval");
        assert!(lo <= check.mean && check.mean <= hi);
        hi - lo
    };
    let (three, twelve) = (interval(3), interval(12));
    assert!(twelve < three, "12 seeds: {twelve}, 3 seeds: {three}");
}

#[test]
fn progress_is_reported_and_cancel_stops_the_plan() {
    let scenario = valid(servers_scenario(21));
    let mut calls = 0;
    let mut fractions = Vec::new();
    // One thread: progress after every simulation.
    let outcome = plan_with_progress(&scenario, &search_only(), &mut |p| {
        calls += 1;
        fractions.push(p.fraction);
        calls < 5
    });
    match outcome {
        Err(PlanError::Cancelled { simulations }) => assert!(simulations < 5),
        other => panic!("expected a cancellation, got {other:?}"),
    }
    assert_eq!(calls, 5);
    assert!(fractions.iter().all(|f| (0.0..=1.0).contains(f)));
}

#[test]
#[ignore = "slow: two full plans; scripts/test runs it"]
fn a_session_driven_one_simulation_at_a_time_gives_the_same_plan() {
    let mut p = servers_scenario(25);
    p.plan.max_replicas = 12;
    p.plan.replications = 2;
    p.plan.min_replications = 2;
    p.plan.sensitivity.inputs = vec![SensitivityInput::OutputTokens];
    p.plan.service_curve.load_multipliers = vec![0.5, 1.0];
    let scenario = valid(p);
    let whole = plan(&scenario, &PlanOptions::default()).unwrap();
    let mut session = PlanSession::new(scenario, PlanOptions::default());
    let mut polls = 0;
    let one_at_a_time = loop {
        polls += 1;
        match session.poll().unwrap() {
            // Only the first job of each poll runs: the next poll asks
            // again for the rest.
            PlanPoll::Jobs(jobs) => {
                session.submit(jobs[0].run(&mut |_| true).unwrap());
                let progress = session.progress();
                assert_eq!(progress.simulations_done, polls);
                assert!(progress.fraction < 1.0);
            }
            PlanPoll::Done(result) => break result,
        }
    };
    assert_eq!(*one_at_a_time, whole);
    assert_eq!(
        polls,
        whole.simulations + 1,
        "one simulation per poll, then the poll that finds the plan complete"
    );
    // Asking again returns the same result without simulating.
    assert!(matches!(session.poll().unwrap(), PlanPoll::Done(_)));
    assert_eq!(session.simulations(), whole.simulations);
}

#[test]
fn multipliers_change_the_scenario_as_documented() {
    let base = ScenarioParams::overnight_batch();
    let m = Multipliers {
        arrival_rate: 2.0,
        batch_size: 1.5,
        input_tokens: 1.1,
        step_time: 1.2,
        prefix_cache_hit: 10.0,
        ..Multipliers::BASE
    };
    let p = m.apply(&base);
    assert_eq!(
        p.classes[0].batches_per_hour,
        2.0 * base.classes[0].batches_per_hour
    );
    // Batch sizes of a batch class scale; a plain Poisson stream stays one.
    assert_ne!(p.classes[0].batch_size, base.classes[0].batch_size);
    assert_eq!(p.classes[1].batch_size, DistParams::constant(1.0));
    assert_eq!(p.classes[0].prefix_cache_hit, 1.0, "capped at 1");
    assert_eq!(p.step_time_scale, 1.2);
    let Shape::LogNormal { median, .. } = p.classes[0].input_tokens.shape else {
        panic!("same family")
    };
    assert!((median - 1650.0).abs() < 1e-9);
    assert_eq!(
        p.plan,
        sojourn_engine::PlanParams::default(),
        "a case is not planned"
    );
    Scenario::try_from(p).expect("a scaled scenario stays valid");
    let _ = ClassParams::default();
}

/// Plans a partial scenario, search only. A file must give the model, the
/// hardware and each class's lengths; these tests are about other fields, so
/// the example's model and hardware and constant 1000/200-token requests
/// fill in what the JSON leaves out.
fn plan_json(json: &str) -> PlanResult {
    let mut doc: serde_json::Value = serde_json::from_str(json).expect("JSON");
    let example = serde_json::to_value(ScenarioParams::overnight_batch()).expect("serialises");
    for section in ["model", "hardware"] {
        if doc.get(section).is_none() {
            doc[section] = example[section].clone();
        }
    }
    if let Some(classes) = doc["classes"].as_array_mut() {
        for class in classes {
            for (field, tokens) in [("input_tokens", 1000), ("output_tokens", 200)] {
                if class.get(field).is_none() {
                    class[field] = serde_json::json!({"kind": "constant", "value": tokens});
                }
            }
        }
    }
    let params =
        sojourn_engine::scenario_params_from_json(doc.to_string().as_bytes()).expect("reads");
    let scenario = Scenario::try_from(params).expect("valid");
    plan(&scenario, &search_only()).expect("plans")
}

/// The first candidate's search found no fleet, and its message says why.
fn no_fleet_because<'r>(result: &'r PlanResult, reason: &str) -> &'r SearchResult {
    assert!(result.recommendation.is_none());
    let search = &result.configurations[0].search;
    assert_eq!(search.found, None);
    assert!(search.message.contains(reason), "{}", search.message);
    search
}

/// r13 of the review: a class whose only busy hour lies outside the horizon
/// had "ok night-burst P(miss) 0.000%" and the fleet was sized without it.
#[test]
fn a_target_on_a_class_with_no_arrivals_is_not_evaluated_and_never_met() {
    let result = plan_json(
        r#"{"classes": [{"name": "chat", "batches_per_hour": 3600, "deadline_s": 120},
             {"name": "night-burst", "batches_per_hour": 36000, "deadline_s": 30,
              "time_of_day": [0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}],
            "run": {"horizon_s": 3600},
            "plan": {"targets": [{"metric": "miss_probability", "class": "night-burst", "epsilon": 0.01}],
                     "replications": 2}}"#,
    );
    let search = no_fleet_because(&result, "not evaluated: no requests of night-burst arrived");
    for evaluation in &search.evaluations {
        let check = &evaluation.checks[0];
        assert!(!check.met && check.not_evaluated.is_some() && check.mean.is_nan());
    }
}

/// r12: every request rejected (max_waiting 0) gave "1 replicas meet every
/// target" on a p90 TPOT of "0 ms". A percentile over no completed request
/// is undefined, and a plan never recommends a fleet on it.
#[test]
fn a_percentile_over_no_completed_request_is_never_met() {
    let result = plan_json(
        r#"{"classes": [{"name": "chat", "batches_per_hour": 3600, "deadline_s": 120}],
            "engine": {"max_waiting": 0},
            "run": {"horizon_s": 600},
            "plan": {"targets": [{"metric": "tpot_percentile", "class": "chat", "percentile": 0.9, "bound_s": 0.05}],
                     "replications": 2}}"#,
    );
    no_fleet_because(&result, "time per output token is undefined");
    // The same target on a fleet that serves requests is met as before.
    let result = plan_json(
        r#"{"classes": [{"name": "chat", "batches_per_hour": 3600, "deadline_s": 120}],
            "run": {"horizon_s": 600},
            "plan": {"targets": [{"metric": "tpot_percentile", "class": "chat", "percentile": 0.9, "bound_s": 0.05}],
                     "replications": 2}}"#,
    );
    assert!(result.recommendation.is_some());
}

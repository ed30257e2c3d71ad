//! The decision rule on hand-made runs: met, not met and uncertain, and the
//! exact bound of no misses.

use crate::evaluate::{
    CheckMetric, CheckSpec, ClassTotals, RunAggregates, TargetCheck, Verdict, evaluate,
};
use crate::exceedance::{BATCHES, Exceedance};
use crate::params::plan::DecisionRule;
use crate::report::Quantiles;
use crate::stats::clopper_pearson;

/// A run in which `misses` of `arrived` requests of the one class missed.
fn run(arrived: u64, misses: u64) -> RunAggregates {
    let totals = ClassTotals {
        arrived,
        met: arrived - misses,
        completed: arrived,
        p_miss: misses as f64 / arrived as f64,
        sojourn: Quantiles::default(),
        ttft: Quantiles::default(),
        tpot: Quantiles::default(),
        prefill_tokens: 0,
        output_tokens: 0,
        busy_s: 0.0,
        busy_s_missed: 0.0,
        busy_s_recomputed: 0.0,
        preemptions: 0,
    };
    RunAggregates {
        replicas: 1,
        window_s: 1.0,
        classes: vec![totals.clone()],
        overall: totals,
        requests: arrived,
        busy_fraction: 0.5,
        offered_load: 0.5,
        peak_waiting_per_replica: 0.0,
        p99_waiting_per_replica: 0.0,
        p99_kv_utilization: 0.0,
        prefill_s_per_token: 0.0,
        decode_s_per_token: 0.0,
        extra_percentiles: Vec::new(),
        exceedances: Vec::new(),
        steps: Default::default(),
    }
}

/// P(miss) <= 1% on the one class.
fn check() -> CheckSpec {
    CheckSpec {
        metric: CheckMetric::MissProbability,
        class: Some(0),
        class_name: Some("jobs".into()),
        percentile: 0.0,
        threshold: 0.01,
        description: "jobs: P(miss) <= 1%".into(),
    }
}

fn verdict(runs: &[RunAggregates], rule: DecisionRule) -> Verdict {
    let refs: Vec<&RunAggregates> = runs.iter().collect();
    evaluate(&[check()], &refs, rule).checks[0].verdict
}

#[test]
fn the_interval_decides_met_not_met_and_uncertain() {
    // Means 0.5%, 0.6%, 0.4%: the t interval (3 seeds) is about
    // 0.5% +/- 0.25%, within 1%.
    let tight = [run(10_000, 50), run(10_000, 60), run(10_000, 40)];
    assert_eq!(verdict(&tight, DecisionRule::Upper95), Verdict::Met);
    // Means 2.0%, 2.1%, 1.9%: clearly above.
    let above = [run(10_000, 200), run(10_000, 210), run(10_000, 190)];
    assert_eq!(verdict(&above, DecisionRule::Upper95), Verdict::NotMet);
    // Means 0.2% and 1.6%: the mean 0.9% is within 1%, but two seeds this
    // far apart leave the interval (t = 12.7) straddling it.
    let spread = [run(10_000, 20), run(10_000, 160)];
    assert_eq!(verdict(&spread, DecisionRule::Upper95), Verdict::Uncertain);
    // The mean rule takes the mean at its word.
    assert_eq!(verdict(&spread, DecisionRule::Mean), Verdict::Met);
}

#[test]
fn no_misses_are_bounded_by_the_exact_pooled_limit() {
    let runs = [run(200, 0), run(300, 0)];
    let refs: Vec<&RunAggregates> = runs.iter().collect();
    let e = evaluate(&[check()], &refs, DecisionRule::Upper95);
    let c = &e.checks[0];
    assert_eq!(c.mean, 0.0);
    // 500 requests pooled: 1 - 0.025^(1/500) = 0.735%, within 1%.
    let exact = 1.0 - libm::pow(0.025, 1.0 / 500.0);
    assert!((c.exact_upper.unwrap() - exact).abs() < 1e-9);
    assert_eq!(c.exact_upper.unwrap(), clopper_pearson(0, 500, 0.05).1);
    assert_eq!(c.bounds[1], c.exact_upper.unwrap());
    assert_eq!(c.verdict, Verdict::Met);
    // 200 requests alone bound it by 1.83%: a zero-miss run that small
    // cannot show a 1% target met.
    let one = [run(200, 0)];
    assert_eq!(verdict(&one, DecisionRule::Upper95), Verdict::Uncertain);
}

/// Where the KV cache binds the report's rho is measured on a saturated
/// replica and already counts its recomputation: the offered load adds the
/// run's recomputation only to the formula's rho, never to a measured one.
#[test]
fn the_offered_load_counts_recomputation_once() {
    let mut p = crate::params::ScenarioParams::overnight_batch();
    p.run.horizon_s = 3600.0;
    p.cluster.replicas = 1;
    let s = crate::model::scenario::Scenario::try_from(p).expect("valid");
    let options = crate::sim::RunOptions {
        keep_records: false,
        ..Default::default()
    };
    let mut report = crate::report::simulate(&s, &options).expect("runs");
    assert!(report.load.measured);
    let recomputed = report.overall.busy_s_recomputed / (report.horizon_s - report.warmup_s);
    assert!(recomputed > 0.0);
    assert_eq!(
        RunAggregates::of(&report, &[]).offered_load,
        report.load.rho
    );
    report.load.measured = false;
    assert_eq!(
        RunAggregates::of(&report, &[]).offered_load,
        report.load.rho + recomputed
    );
}

/// Two replications of a chat class judged on p99 TTFT <= 2 s: each run's
/// p99, and per tenth of its window the requests over 2 s of those counted.
fn ttft_runs(p99s: [f64; 2], batches: [Vec<[u64; 2]>; 2]) -> Vec<RunAggregates> {
    p99s.iter()
        .zip(batches)
        .map(|(&p99, batches)| {
            let counted: u64 = batches.iter().map(|b| b[1]).sum();
            let mut r = run(counted, 0);
            r.classes[0].ttft.p99 = p99;
            r.exceedances = vec![Exceedance { check: 0, batches }];
            r
        })
        .collect()
}

fn ttft_check() -> CheckSpec {
    CheckSpec {
        metric: CheckMetric::Ttft,
        class: Some(0),
        class_name: Some("chat".into()),
        percentile: 0.99,
        threshold: 2.0,
        description: "chat: p99 TTFT <= 2 s".into(),
    }
}

fn judged(runs: &[RunAggregates], check: CheckSpec) -> TargetCheck {
    let refs: Vec<&RunAggregates> = runs.iter().collect();
    evaluate(&[check], &refs, DecisionRule::Upper95)
        .checks
        .remove(0)
}

/// Ten batches of `counted` requests, `over` of each over the bound.
fn even(over: u64, counted: u64) -> Vec<[u64; 2]> {
    vec![[over, counted]; BATCHES]
}

/// Issue 40: a p99 TTFT of 1.7 and 5.7 min against 2 s (about 100x) read
/// "uncertain", the t interval over 2 replications (t = 12.7) reaching
/// down to zero. The runs' own requests decide it: 30% of 20,000 over a
/// bound that allows 1%.
#[test]
fn a_hundredfold_miss_with_two_replications_is_not_met() {
    let runs = ttft_runs([100.0, 344.0], [even(300, 1_000), even(300, 1_000)]);
    let c = judged(&runs, ttft_check());
    assert!((c.mean / c.threshold - 111.0).abs() < 1.0, "{}", c.mean);
    // The t interval alone straddles the bound...
    assert!(
        c.bounds[0] <= c.threshold && c.bounds[1] > c.threshold,
        "{:?}",
        c.bounds
    );
    // ...but the share over it is 30%, its interval far beyond 1%.
    let share = c.share_over.as_ref().expect("counted");
    assert_eq!((share.over, share.counted), (6_000, 20_000));
    assert_eq!(share.allowed, 1.0 - 0.99);
    assert!(
        share.ci95[0] > 0.28 && share.ci95[1] < 0.32,
        "{:?}",
        share.ci95
    );
    assert_eq!(c.verdict, Verdict::NotMet);
    // The same for P(miss): 10% and 50% of the requests missed against a
    // 1% target (the t interval, 30% +/- 254 points, again reaches zero).
    let mut misses = [run(10_000, 1_000), run(10_000, 5_000)];
    misses[0].exceedances = vec![Exceedance {
        check: 0,
        batches: even(100, 1_000),
    }];
    misses[1].exceedances = vec![Exceedance {
        check: 0,
        batches: even(500, 1_000),
    }];
    let c = judged(&misses, check());
    assert!(c.bounds[0] <= c.threshold, "{:?}", c.bounds);
    assert_eq!(c.verdict, Verdict::NotMet);
    // Without the counts (a run that kept no records) the t interval alone
    // is all there is, and it cannot tell.
    misses.iter_mut().for_each(|r| r.exceedances.clear());
    assert_eq!(judged(&misses, check()).verdict, Verdict::Uncertain);
}

/// A true borderline stays uncertain. With 20,000 requests and 1% allowed,
/// the exact 95% interval of an independent share is about +/- 0.14
/// points (1.96 sqrt(0.01 x 0.99 / 20,000)), so a share of 1.05% cannot be
/// told from 1%. And misses in bursts count for fewer independent
/// requests: 1.3% over, as 2.6% in half of the batches and none in the
/// others, would read "not met" as if independent (1.14% at least) but
/// not once the batches' spread widens the interval (design effect ~20).
#[test]
fn a_borderline_stays_uncertain_and_bursts_widen_the_interval() {
    let close = ttft_runs([1.9, 2.2], [even(10, 1_000), even(11, 1_000)]);
    let c = judged(&close, ttft_check());
    let share = c.share_over.as_ref().expect("counted");
    assert!(
        share.ci95[0] < 0.01 && share.ci95[1] > 0.01,
        "{:?}",
        share.ci95
    );
    assert_eq!(c.verdict, Verdict::Uncertain);
    // Independent: 260 of 20,000, evenly spread, is beyond 1%.
    let steady = ttft_runs([2.1, 2.3], [even(13, 1_000), even(13, 1_000)]);
    let c = judged(&steady, ttft_check());
    assert!(c.share_over.as_ref().unwrap().design_effect < 1.5);
    assert_eq!(c.verdict, Verdict::NotMet);
    // The same 260 in bursts.
    let bursty: Vec<[u64; 2]> = (0..BATCHES)
        .map(|b| if b % 2 == 0 { [26, 1_000] } else { [0, 1_000] })
        .collect();
    let bursts = ttft_runs([2.1, 2.3], [bursty.clone(), bursty]);
    let c = judged(&bursts, ttft_check());
    let share = c.share_over.as_ref().expect("counted");
    assert_eq!((share.over, share.counted), (260, 20_000));
    assert!(share.design_effect > 10.0, "{}", share.design_effect);
    assert!(share.ci95[0] < 0.01, "{:?}", share.ci95);
    assert_eq!(c.verdict, Verdict::Uncertain);
}

/// The counts come from the records with the report's own definitions: a
/// miss is a request not completed within its deadline, so the requests
/// over the deadline are the report's arrivals less those met; and a share
/// over a p99 bound above 1% means the p99 is beyond it.
#[test]
fn the_counts_are_the_report_s_own() {
    let mut p = crate::params::ScenarioParams::overnight_batch();
    p.run.horizon_s = 3600.0;
    p.cluster.replicas = 1;
    let s = crate::model::scenario::Scenario::try_from(p).expect("valid");
    let report = crate::report::simulate(&s, &crate::sim::RunOptions::default()).expect("runs");
    let mut ttft = ttft_check();
    ttft.class = Some(1);
    let checks = [check(), ttft];
    let summary = RunAggregates::of(&report, &checks);
    assert_eq!(summary.exceedances.len(), 2);
    let total = |e: &Exceedance| {
        e.batches
            .iter()
            .fold([0, 0], |[o, n], b| [o + b[0], n + b[1]])
    };
    let c = &report.classes[0];
    assert_eq!(
        total(&summary.exceedances[0]),
        [c.arrived - c.met, c.arrived]
    );
    let [over, counted] = total(&summary.exceedances[1]);
    assert_eq!(counted, report.classes[1].arrived);
    assert_eq!(
        over as f64 / counted as f64 > 0.01,
        report.classes[1].ttft.p99 > 2.0,
        "{over} of {counted}, p99 {}",
        report.classes[1].ttft.p99
    );
}

//! The request stream's tests: counts, batches, profiles, load modes and
//! the draws' stability.

use super::*;
use crate::params::dist::{DistParams, Shape};
use crate::params::{ClassParams, LengthsParams, LoadParams, ScenarioParams};

fn scenario(classes: Vec<ClassParams>, horizon_s: f64) -> Scenario {
    let mut p = ScenarioParams {
        classes,
        ..ScenarioParams::overnight_batch()
    };
    p.run.horizon_s = horizon_s;
    Scenario::try_from(p).expect("valid")
}

#[test]
fn same_seed_same_requests_other_seed_other_requests() {
    let s = scenario(ScenarioParams::overnight_batch().classes, 3600.0);
    let a: Vec<_> = Workload::new(&s, 7).collect();
    let b: Vec<_> = Workload::new(&s, 7).collect();
    let c: Vec<_> = Workload::new(&s, 8).collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(a.windows(2).all(|w| w[0].arrival_s <= w[1].arrival_s));
}

#[test]
fn poisson_count_matches_rate() {
    // 1000 requests/h over 100 h: N ~ Poisson(100,000), sd = 316.
    // Allow 5 sd (false alarm probability below 1e-6).
    let class = ClassParams {
        batches_per_hour: 1000.0,
        ..ClassParams::default()
    };
    let s = scenario(vec![class], 100.0 * 3600.0);
    let n = Workload::new(&s, 3).count() as f64;
    assert!((n - 100_000.0).abs() < 5.0 * 316.3, "n = {n}");
}

#[test]
fn batches_share_an_arrival_time_and_sizes_follow_x() {
    // Geometric batch sizes with mean 4: E[requests] = 4 x E[batches].
    // 500 batches/h over 100 h: 50,000 batches, 200,000 requests;
    // Var[sum] = E[N] E[X^2] = 50,000 x 28 -> sd ~ 1183. Allow 5 sd.
    let class = ClassParams {
        batches_per_hour: 500.0,
        batch_size: DistParams::new(Shape::Geometric { mean: 4.0 }),
        ..ClassParams::default()
    };
    let s = scenario(vec![class], 100.0 * 3600.0);
    let reqs: Vec<_> = Workload::new(&s, 11).collect();
    let n = reqs.len() as f64;
    assert!((n - 200_000.0).abs() < 5.0 * 1183.0, "n = {n}");
    let distinct_times = reqs
        .windows(2)
        .filter(|w| w[0].arrival_s != w[1].arrival_s)
        .count()
        + 1;
    assert!(
        (distinct_times as f64 - 50_000.0).abs() < 5.0 * 224.0,
        "batches = {distinct_times}"
    );
}

#[test]
fn time_of_day_profile_shapes_arrivals_by_hour() {
    // Only hours 0-5 send (multiplier 1); 1000/h for 10 days: 60,000
    // expected in those hours, none in the others.
    let mut profile = vec![0.0; 24];
    profile[..6].fill(1.0);
    let class = ClassParams {
        batches_per_hour: 1000.0,
        time_of_day: Some(profile),
        ..ClassParams::default()
    };
    let s = scenario(vec![class], 10.0 * 86_400.0);
    let reqs: Vec<_> = Workload::new(&s, 5).collect();
    assert!(reqs.iter().all(|r| (r.arrival_s % 86_400.0) < 6.0 * 3600.0));
    let n = reqs.len() as f64;
    assert!((n - 60_000.0).abs() < 5.0 * 245.0, "n = {n}");
}

#[test]
fn arrivals_per_hour_follow_an_uneven_profile() {
    // 200 batches/h at multiplier m(h) = 0.1 + (h mod 6) * 0.5 over 40
    // days: hour h expects 200 * m(h) * 40 arrivals, Poisson, so sd =
    // sqrt(expected). Allow 5 sd per hour; the total too.
    let profile: Vec<f64> = (0..24).map(|h| 0.1 + (h % 6) as f64 * 0.5).collect();
    let class = ClassParams {
        batches_per_hour: 200.0,
        time_of_day: Some(profile.clone()),
        ..ClassParams::default()
    };
    let days = 40.0;
    let s = scenario(vec![class], days * 86_400.0);
    let mut per_hour = [0u64; 24];
    let mut n = 0.0;
    for r in Workload::new(&s, 9) {
        per_hour[((r.arrival_s % 86_400.0) / 3600.0) as usize] += 1;
        n += 1.0;
    }
    for (h, (&got, m)) in per_hour.iter().zip(&profile).enumerate() {
        let expected = 200.0 * m * days;
        let got = got as f64;
        assert!(
            (got - expected).abs() < 5.0 * expected.sqrt(),
            "hour {h}: {got} arrivals, expected {expected}"
        );
    }
    let expected: f64 = profile.iter().map(|m| 200.0 * m * days).sum();
    assert!(
        (n - expected).abs() < 5.0 * expected.sqrt(),
        "{n} vs {expected}"
    );
}

#[test]
fn prefix_cache_never_covers_the_whole_prompt() {
    let class = ClassParams {
        prefix_cache_hit: 1.0,
        input_tokens: DistParams::constant(100.0),
        ..ClassParams::default()
    };
    let s = scenario(vec![class], 3600.0);
    assert!(Workload::new(&s, 1).all(|r| r.cached_tokens == 99));
}

#[test]
fn value_stability_of_the_first_draws() {
    // Pinned: a change here changes every shared link's numbers.
    let s = scenario(
        vec![ClassParams {
            input_tokens: DistParams::log_normal(1000.0, 4000.0),
            ..ClassParams::default()
        }],
        3600.0,
    );
    let first: Vec<(u64, u32)> = Workload::new(&s, 42)
        .take(3)
        .map(|r| ((r.arrival_s * 1e6) as u64, r.input_tokens))
        .collect();
    assert_eq!(
        first, PINNED_FIRST_DRAWS,
        "workload draws changed for seed 42"
    );
}

#[test]
fn a_fixed_count_sends_exactly_n_whatever_the_horizon() {
    // 1000 requests in geometric batches (mean 3) at 360 batches/h:
    // about 10,000 s of arrivals, far past the 60 s horizon; the last
    // batch is cut short to make exactly 1000.
    let class = ClassParams {
        batches_per_hour: 360.0,
        batch_size: DistParams::new(Shape::Geometric { mean: 3.0 }),
        load: LoadParams::FixedCount { requests: 1000 },
        ..ClassParams::default()
    };
    let s = scenario(vec![class], 60.0);
    let reqs: Vec<_> = Workload::new(&s, 4).collect();
    assert_eq!(reqs.len(), 1000);
    assert!(reqs[999].arrival_s > 60.0, "{}", reqs[999].arrival_s);
}

#[test]
fn an_offline_class_sends_exactly_n_at_time_zero() {
    let class = ClassParams {
        load: LoadParams::Offline { requests: 777 },
        ..ClassParams::default()
    };
    let s = scenario(vec![class], 60.0);
    let reqs: Vec<_> = Workload::new(&s, 4).collect();
    assert_eq!(reqs.len(), 777);
    assert!(reqs.iter().all(|r| r.arrival_s == 0.0));
}

#[test]
fn a_closed_loop_sends_its_clients_first_then_its_earliest_sends() {
    // Three clients, at most five requests, 2 s of think time. The
    // returns are noticed out of time order (the cluster notices a
    // replica's returns when it runs that replica); the class's last two
    // requests are still its two earliest sends, in either order.
    let class = ClassParams {
        load: LoadParams::ClosedLoop {
            clients: 3,
            think_ms: Some(DistParams::constant(2000.0)),
            requests: Some(5),
        },
        ..ClassParams::default()
    };
    let s = scenario(vec![class], 60.0);
    for order in [
        [(1, 5.0), (0, 3.0), (2, 4.0)],
        [(0, 3.0), (2, 4.0), (1, 5.0)],
    ] {
        let mut w = Workload::new(&s, 4);
        let first: Vec<f64> = w.by_ref().map(|r| r.arrival_s).collect();
        assert_eq!(first, [0.0; 3]);
        assert!(w.peek_s().is_infinite() && !w.is_finished());
        for (id, at_s) in order {
            w.returned(id, 0, at_s);
        }
        let next: Vec<f64> = w.by_ref().map(|r| r.arrival_s).collect();
        assert_eq!(
            next,
            [5.0, 6.0],
            "the two earliest sends, noticed {order:?}"
        );
        assert!(!w.is_finished(), "two requests are out");
        w.returned(3, 0, 8.0);
        w.returned(4, 0, 9.0);
        assert!(w.is_finished());
    }
}

#[test]
fn a_joint_model_draws_pairs_from_a_stream_of_its_own() {
    let draws = |lengths: Option<LengthsParams>, seed: u64| {
        let class = ClassParams {
            input_tokens: DistParams::log_normal(1000.0, 4000.0),
            output_tokens: DistParams::log_normal(200.0, 800.0).clamped(None, Some(4000.0)),
            lengths,
            ..ClassParams::default()
        };
        Workload::new(&scenario(vec![class], 3600.0), seed)
            .map(|r| (r.arrival_s, (r.input_tokens, r.output_tokens)))
            .unzip::<_, _, Vec<_>, Vec<_>>()
    };
    let table = LengthsParams::Pairs {
        pairs: vec![[10.0, 1.0], [20.0, 2.0]],
        weights: None,
    };
    let (times, pairs) = draws(Some(table), 3);
    // The same arrivals: the lengths take nothing from the times' stream.
    assert_eq!(times, draws(None, 3).0);
    assert!(pairs.iter().all(|p| *p == (10, 1) || *p == (20, 2)));
    assert!(pairs.contains(&(10, 1)) && pairs.contains(&(20, 2)));
    // Pinned: a change here changes the numbers of every shared link
    // with correlated lengths.
    let (_, pairs) = draws(Some(LengthsParams::Correlated { rho: 0.6 }), 42);
    assert_eq!(pairs[..3], PINNED_FIRST_PAIRS, "seed 42");
}

/// The first three (prompt, output) lengths with correlated lengths, seed 42.
const PINNED_FIRST_PAIRS: [(u32, u32); 3] = [(635, 77), (2318, 781), (1600, 522)];

/// Arrival time \[us\] and prompt length of the first three requests, seed 42.
const PINNED_FIRST_DRAWS: [(u64, u32); 3] =
    [(85_433_862, 1026), (122_809_874, 3842), (133_612_788, 1461)];

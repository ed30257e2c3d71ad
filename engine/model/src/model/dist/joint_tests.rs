//! Tests of the joint length models: their draws against the correlation
//! and the frequencies they are given, their validation, and what the
//! validated scenario reads from them.

use super::{JointLengths, preview_lengths};
use crate::error::Checker;
use crate::model::Scenario;
use crate::params::{ClassParams, DistParams, LengthsParams, ScenarioParams};

fn class(input: DistParams, output: DistParams, lengths: LengthsParams) -> ClassParams {
    ClassParams {
        input_tokens: input,
        output_tokens: output,
        lengths: Some(lengths),
        ..ClassParams::default()
    }
}

/// Pearson's correlation of the logarithms of `pairs`.
fn log_correlation(pairs: &[(u32, u32)]) -> f64 {
    let n = pairs.len() as f64;
    let logs: Vec<(f64, f64)> = pairs
        .iter()
        .map(|&(i, o)| (libm::log(i as f64), libm::log(o as f64)))
        .collect();
    let (mx, my) = logs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in &logs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    sxy / libm::sqrt(sxx * syy)
}

#[test]
fn correlated_draws_reproduce_rho_and_keep_each_marginal() {
    // n = 20,000 draws: Pearson's r on the log-lengths has a standard
    // error of about (1 - rho^2) / sqrt(n) (at most 0.0071 here); allow
    // 4 of them. Rounding to whole tokens moves the logs of prompts
    // around 1,000 and outputs around 300 by under 0.2%, far below that.
    let n = 20_000;
    let input = DistParams::log_normal(1000.0, 4000.0);
    let output = DistParams::log_normal(300.0, 1200.0);
    for rho in [-0.5, 0.0, 0.7] {
        let c = class(
            input.clone(),
            output.clone(),
            LengthsParams::Correlated { rho },
        );
        let pairs = preview_lengths(&c, n).expect("valid");
        let r = log_correlation(&pairs);
        let tolerance = 4.0 * (1.0 - rho * rho) / (n as f64).sqrt();
        assert!((r - rho).abs() < tolerance, "rho {rho}: r = {r}");
        // Each length keeps its distribution: the sample means agree
        // with the distributions' means (sigma 1.08, so a coefficient
        // of variation of 1.5: a standard error of 1.1% of the mean;
        // allow 5 of them).
        for (k, dist) in [&input, &output].into_iter().enumerate() {
            let mean = dist.to_dist().expect("valid").moments().0;
            let sample = pairs
                .iter()
                .map(|p| if k == 0 { p.0 } else { p.1 } as f64)
                .sum::<f64>()
                / n as f64;
            assert!(
                (sample / mean - 1.0).abs() < 5.0 * 0.011,
                "rho {rho}, length {k}: {sample} vs {mean}"
            );
        }
    }
}

#[test]
fn correlated_draws_keep_to_their_clamps() {
    let c = class(
        DistParams::log_normal(1000.0, 4000.0).clamped(Some(200.0), Some(3000.0)),
        DistParams::new(crate::params::Shape::LogNormalMoments {
            mean: 300.0,
            std_dev: 600.0,
        })
        .clamped(None, Some(500.0)),
        LengthsParams::Correlated { rho: 0.9 },
    );
    let pairs = preview_lengths(&c, 5000).expect("valid");
    assert!(pairs.iter().all(|p| (200..=3000).contains(&p.0)));
    assert!(pairs.iter().all(|p| (1..=500).contains(&p.1)));
    // Both clamps are reached (the medians sit inside them).
    assert!(pairs.iter().any(|p| p.0 == 3000) && pairs.iter().any(|p| p.1 == 500));
}

#[test]
fn a_table_reproduces_its_pairs_frequencies() {
    // Weights 1:2:3:4 over 40,000 draws: pair k is Binomial(n, p_k), so
    // allow 5 standard deviations sqrt(n p (1 - p)) per pair.
    let n = 40_000;
    let table = LengthsParams::Pairs {
        pairs: vec![[100.0, 10.0], [200.0, 20.0], [300.0, 30.0], [400.0, 40.0]],
        weights: Some(vec![1.0, 2.0, 3.0, 4.0]),
    };
    let draws = preview_lengths(&class(one(), one(), table), n).expect("valid");
    for (k, p) in [0.1, 0.2, 0.3, 0.4].into_iter().enumerate() {
        let pair = (100 * (k as u32 + 1), 10 * (k as u32 + 1));
        let got = draws.iter().filter(|&&d| d == pair).count() as f64;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (got - n as f64 * p).abs() < 5.0 * sd,
            "{pair:?}: {got} of {n}, expected {}",
            n as f64 * p
        );
    }
    // Without weights every row is as likely: a repeated pair is drawn
    // twice as often (p = 2/3).
    let table = LengthsParams::Pairs {
        pairs: vec![[7.0, 3.0], [7.0, 3.0], [50.0, 60.0]],
        weights: None,
    };
    let draws = preview_lengths(&class(one(), one(), table), n).expect("valid");
    let got = draws.iter().filter(|&&d| d == (7, 3)).count() as f64;
    let sd = (n as f64 * 2.0 / 9.0).sqrt();
    assert!((got - n as f64 * 2.0 / 3.0).abs() < 5.0 * sd, "{got}");
    assert!(draws.iter().all(|&d| d == (7, 3) || d == (50, 60)));
}

fn one() -> DistParams {
    DistParams::constant(1.0)
}

/// The reason validation gives for `field` (relative to the class).
fn refused(c: &ClassParams, field: &str) -> String {
    let e = preview_lengths(c, 1).expect_err("should be refused");
    e.for_field(field)
        .unwrap_or_else(|| panic!("no error for {field}: {e}"))
        .to_string()
}

#[test]
fn validation_names_the_field() {
    let lognormal = DistParams::log_normal(100.0, 400.0);
    for rho in [1.0, -1.0, f64::NAN, 3.0] {
        let c = class(
            lognormal.clone(),
            lognormal.clone(),
            LengthsParams::Correlated { rho },
        );
        assert!(refused(&c, "lengths.rho").contains("between -1 and 1"));
    }
    let c = class(
        DistParams::constant(100.0),
        lognormal.clone(),
        LengthsParams::Correlated { rho: 0.5 },
    );
    assert!(refused(&c, "lengths.kind").contains("log-normal input_tokens"));
    let table = |pairs: Vec<[f64; 2]>, weights: Option<Vec<f64>>| {
        class(one(), one(), LengthsParams::Pairs { pairs, weights })
    };
    assert!(refused(&table(vec![], None), "lengths.pairs").contains("at least one"));
    let bad = table(vec![[10.0, 5.0], [0.0, 5.0], [3.0, -1.0]], None);
    assert!(refused(&bad, "lengths.pairs[1][0]").contains("positive"));
    assert!(refused(&bad, "lengths.pairs[2][1]").contains("positive"));
    let big = table(vec![[2e8, 5.0]], None);
    assert!(refused(&big, "lengths.pairs[0][0]").contains("at most 100000000"));
    let weights = table(vec![[10.0, 5.0]], Some(vec![1.0, 2.0]));
    assert!(refused(&weights, "lengths.weights").contains("one weight per pair (1)"));
    let weights = table(vec![[10.0, 5.0], [1.0, 1.0]], Some(vec![0.0, 0.0]));
    assert!(refused(&weights, "lengths.weights").contains("all be zero"));
    let weights = table(vec![[10.0, 5.0], [1.0, 1.0]], Some(vec![1.0, -2.0]));
    assert!(refused(&weights, "lengths.weights[1]").contains("zero or more"));
}

#[test]
fn a_table_has_exact_weighted_means_and_smallest_lengths() {
    let mut check = Checker::new();
    let table = LengthsParams::Pairs {
        pairs: vec![[100.0, 40.0], [300.4, 10.0]],
        weights: Some(vec![3.0, 1.0]),
    };
    let d = one().to_dist().expect("valid");
    let Some(JointLengths::Pairs(t)) = table.build(&d, &d, &mut check) else {
        panic!("a table");
    };
    // 300.4 rounds to 300: (3 x 100 + 300) / 4 and (3 x 40 + 10) / 4.
    assert_eq!(t.means(), (150.0, 32.5));
    assert_eq!(t.smallest(), (100, 10));
}

#[test]
fn a_table_of_pairs_sets_the_mean_lengths_the_estimates_read() {
    use crate::model::analytic::WorkloadMoments;
    // One class with a table: its means replace the constant 1,000 and
    // 200 of ClassParams::default(), in the load estimate's moments.
    let mut p = ScenarioParams {
        classes: vec![ClassParams {
            lengths: Some(LengthsParams::Pairs {
                pairs: vec![[100.0, 50.0], [500.0, 10.0]],
                weights: Some(vec![3.0, 1.0]),
            }),
            ..ClassParams::default()
        }],
        ..ScenarioParams::overnight_batch()
    };
    let s = Scenario::try_from(p.clone()).expect("valid");
    assert_eq!(s.classes()[0].mean_lengths(), (200.0, 40.0));
    assert_eq!(s.classes()[0].smallest_lengths(), (100, 10));
    let m = WorkloadMoments::of(&s);
    assert_eq!((m.mean_input, m.mean_output), (200.0, 40.0));
    // A correlation keeps each length's distribution, so its means.
    p.classes[0].lengths = Some(LengthsParams::Correlated { rho: 0.5 });
    p.classes[0].input_tokens = DistParams::log_normal(1000.0, 3000.0).clamped(None, Some(8000.0));
    p.classes[0].output_tokens = DistParams::log_normal(100.0, 300.0).clamped(None, Some(2000.0));
    let s = Scenario::try_from(p).expect("valid");
    let class = &s.classes()[0];
    assert_eq!(
        class.mean_lengths(),
        (
            class.input_tokens.moments().0,
            class.output_tokens.moments().0
        )
    );
}

#[test]
fn joint_length_errors_name_the_class_field() {
    let mut p = ScenarioParams::overnight_batch();
    p.classes[1].lengths = Some(LengthsParams::Correlated { rho: 1.0 });
    p.classes[0].lengths = Some(LengthsParams::Pairs {
        pairs: vec![],
        weights: None,
    });
    let e = Scenario::try_from(p).expect_err("invalid");
    let reason = |field| e.for_field(field).unwrap_or_default();
    assert!(
        reason("classes[1].lengths.rho").contains("between -1 and 1"),
        "{e}"
    );
    assert!(
        reason("classes[0].lengths.pairs").contains("at least one"),
        "{e}"
    );
}

#[test]
fn a_class_without_joint_lengths_reads_and_writes_without_the_key() {
    // Old files keep every number: no `lengths` key reads as
    // independent lengths and is written back without one.
    let params = ScenarioParams::overnight_batch();
    assert!(params.classes.iter().all(|c| c.lengths.is_none()));
    let json = serde_json::to_string(&params).expect("serialises");
    assert!(!json.contains("lengths"), "{json}");
}

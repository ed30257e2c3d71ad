//! Reference computations and assertions shared by the report's tests: the
//! simple, slow way to get each figure, which the fast paths must match.

use super::Quantiles;
use super::cdf::{cdf_from_counts, cdf_xs};
use super::rows::whole_row;

/// Up to `points` points of the CDF of the values of `parts` (fractions
/// of `total` requests), as a report row computes them.
pub fn cdf_points(parts: &[&[f64]], total: u64, points: usize) -> Vec<[f64; 2]> {
    whole_row(parts, total, points).cdf
}

/// The reference CDF: the report's computation before bucket counting,
/// with a min and a max pass and a binary search per value.
pub fn cdf_by_search(values: &[f64], total: u64, points: usize) -> Vec<[f64; 2]> {
    if values.is_empty() || points == 0 {
        return Vec::new();
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let xs = cdf_xs(min, max, points);
    let mut counts = vec![0u64; points];
    for &v in values {
        counts[xs.partition_point(|x| *x < v).min(points - 1)] += 1;
    }
    cdf_from_counts(&xs, &counts, total)
}

/// The reference quantiles of `values` and `missing` infinite ones: a
/// sorted copy, a sequential sum and a max pass.
pub fn quantiles_by_sorting(values: &[f64], missing: u64) -> Quantiles {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |p| Quantiles::at(&sorted, missing, p);
    let n = values.len();
    Quantiles {
        count: n as u64,
        mean: if n > 0 {
            values.iter().sum::<f64>() / n as f64
        } else {
            f64::NAN
        },
        p50: at(0.5),
        p90: at(0.9),
        p95: at(0.95),
        p99: at(0.99),
        p999: at(0.999),
        max: values.iter().copied().fold(f64::NAN, f64::max),
    }
}

/// Asserts `a == b` bit for bit (NaN equal to NaN, -0 unequal to 0).
#[track_caller]
pub fn assert_same<T: std::fmt::Debug>(a: &T, b: &T, what: &str) {
    assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}");
}

/// Asserts that `a` equals `b` except for a mean within a relative
/// 1e-12: a mean over parts adds the parts' sums, whose rounding errors
/// differ from those of one sequential sum (a random walk of about
/// sqrt(n) units in the last place, so more than a few over 10^5 values).
#[track_caller]
pub fn assert_same_but_mean(a: &Quantiles, b: &Quantiles, what: &str) {
    let close =
        (a.mean - b.mean).abs() <= 1e-12 * b.mean.abs() || a.mean.is_nan() && b.mean.is_nan();
    assert!(close, "{what}: mean {} vs {}", a.mean, b.mean);
    let (mut a, b) = (a.clone(), b.clone());
    a.mean = b.mean;
    assert_same(&a, &b, what);
}

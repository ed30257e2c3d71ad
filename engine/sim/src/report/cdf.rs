//! The sojourn-time CDF of a row: its x points, log-spaced in time, and the
//! fraction of the row's requests at or below each. Small samples are
//! counted here by a binary search per value; large ones by the gather pass
//! (`select.rs`), which gives the same counts.

/// Points of the sojourn CDF in every row.
pub const CDF_POINTS: usize = 200;

/// The x points of a CDF with `points` points, log-spaced in time from the
/// smallest value `min` (at least 1e-6) to the largest `max`, which is
/// exactly the last point.
pub fn cdf_xs(min: f64, max: f64, points: usize) -> Vec<f64> {
    if points == 0 {
        return Vec::new();
    }
    let lo = min.max(1e-6);
    let hi = max.max(lo);
    let (llo, lhi) = (libm::log(lo), libm::log(hi));
    (0..points)
        .map(|i| {
            if i + 1 == points {
                hi
            } else {
                libm::exp(llo + (lhi - llo) * i as f64 / (points - 1).max(1) as f64)
            }
        })
        .collect()
}

/// The interval of `v` among the CDF points `xs` before the last one is
/// merged into it: the number of points below `v` (0 for NaN), by a binary
/// search, which counts exactly when `xs` ascend.
pub fn interval_of(xs: &[f64], v: f64) -> usize {
    xs.partition_point(|x| *x < v)
}

/// Values of `parts` per CDF interval: `counts\[i\]` holds those in
/// (xs\[i-1\], xs\[i\]], the first also those below, the last those above;
/// one binary search per value.
pub fn cdf_counts_by_search(parts: &[&[f64]], xs: &[f64]) -> Vec<u64> {
    let mut counts = vec![0u64; xs.len()];
    let Some(last) = xs.len().checked_sub(1) else {
        return counts;
    };
    for &v in parts.iter().flat_map(|p| p.iter()) {
        counts[interval_of(xs, v).min(last)] += 1;
    }
    counts
}

/// The CDF points (x, fraction of `total` requests at or below x) from the
/// values per interval.
pub fn cdf_from_counts(xs: &[f64], counts: &[u64], total: u64) -> Vec<[f64; 2]> {
    let mut below = 0;
    xs.iter()
        .zip(counts)
        .map(|(x, c)| {
            below += c;
            [*x, below as f64 / total as f64]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::cdf_points;

    #[test]
    fn cdf_points_are_log_spaced_from_the_smallest_value_to_the_largest() {
        // The tests' reference CDF takes its points from here, so the
        // spacing is pinned here: a constant ratio from the smallest value
        // (raised to 1e-6) to the largest, which is the last point exactly.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b;
        let xs = cdf_xs(0.0, 1e3, 4);
        assert_eq!(xs.len(), 4);
        for (x, want) in xs.iter().zip([1e-6, 1e-3, 1.0, 1e3]) {
            assert!(close(*x, want), "{xs:?}");
        }
        assert_eq!(xs[3], 1e3);
        assert_eq!(
            cdf_xs(5.0, 2.0, 3),
            [5.0; 3],
            "the largest below the smallest"
        );
        assert_eq!(cdf_xs(2.0, 7.0, 1), [7.0]);
        assert!(cdf_xs(2.0, 7.0, 0).is_empty());
    }

    #[test]
    fn cdf_points_are_monotone_and_end_at_the_completed_fraction() {
        let xs: Vec<f64> = (1..=100).map(|i| i as f64).collect();
        let pts = cdf_points(&[&xs], 200, 50);
        assert_eq!(pts.len(), 50);
        assert!(
            pts.windows(2)
                .all(|w| w[0][0] <= w[1][0] && w[0][1] <= w[1][1])
        );
        assert_eq!(pts[49], [100.0, 0.5]);
    }
}

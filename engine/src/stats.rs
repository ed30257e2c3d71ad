//! Small statistics helpers: exact empirical quantiles and confidence intervals.

/// The empirical p-quantile of sorted data: the smallest x with
/// F_n(x) >= p (inverse of the empirical CDF, no interpolation). NaN for no data.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let n = sorted.len();
    let rank = (p * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// Wilson score interval for a binomial proportion `k / n` at normal quantile `z`
/// (1.96 for 95%). Well behaved at k = 0 and k = n, unlike the Wald interval.
pub fn wilson_interval(k: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let p = k as f64 / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z * libm::sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / (1.0 + z2 / n);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Mean and the half-width of a Student-t confidence interval over `values`
/// (replications). The half-width is NaN for fewer than two values.
pub fn mean_and_half_width(values: &[f64], confidence_95: bool) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::NAN);
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
    let t = if confidence_95 {
        student_t_975(n - 1)
    } else {
        1.0
    };
    (mean, t * libm::sqrt(var / n as f64))
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (two-sided 95%).
pub fn student_t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => 1.96 + 2.4 / df as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_is_the_inverse_empirical_cdf() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&xs, 0.25), 1.0);
        assert_eq!(quantile_sorted(&xs, 0.26), 2.0);
        assert_eq!(quantile_sorted(&xs, 0.5), 2.0);
        assert_eq!(quantile_sorted(&xs, 1.0), 4.0);
        assert_eq!(quantile_sorted(&xs, 0.0), 1.0);
        assert!(quantile_sorted(&[], 0.5).is_nan());
    }

    #[test]
    fn wilson_interval_covers_the_estimate_and_stays_in_unit_range() {
        let (lo, hi) = wilson_interval(0, 100, 1.96);
        assert_eq!(lo, 0.0);
        assert!(hi > 0.0 && hi < 0.05, "upper bound for 0/100 was {hi}");
        let (lo, hi) = wilson_interval(50, 100, 1.96);
        assert!(lo < 0.5 && hi > 0.5);
        // Standard textbook value: 50/100 gives about [0.404, 0.596].
        assert!((lo - 0.4038).abs() < 1e-3 && (hi - 0.5962).abs() < 1e-3);
    }

    #[test]
    fn t_interval_shrinks_with_more_replications() {
        let (m, h3) = mean_and_half_width(&[1.0, 2.0, 3.0], true);
        assert_eq!(m, 2.0);
        // s = 1, n = 3, t(2) = 4.303: 4.303 / sqrt(3).
        assert!((h3 - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        let (_, h6) = mean_and_half_width(&[1.0, 2.0, 3.0, 1.0, 2.0, 3.0], true);
        assert!(h6 < h3);
    }
}

//! Small statistics helpers: exact empirical quantiles and confidence intervals.

use std::cell::RefCell;
use std::collections::BTreeMap;

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

/// The exact (Clopper-Pearson) two-sided `1 - alpha` interval for a
/// binomial proportion after `k` successes in `n` trials: the `p` at which
/// seeing at least `k` (for the lower end) or at most `k` (the upper end)
/// has probability `alpha / 2`. Conservative: it covers the true proportion
/// with probability at least `1 - alpha` for every `p` and `n`.
///
/// With no successes the upper end is `1 - (alpha/2)^(1/n)` in closed form
/// (about 3.69 / n at 95%), so zero observed misses never read as [0, 0].
/// Otherwise the ends are quantiles of Beta(k, n - k + 1) and Beta(k + 1,
/// n - k), found by bisection on the regularized incomplete beta function.
/// `(0, 1)` for no trials or an `alpha` outside (0, 1).
///
/// Each bisection evaluates the continued fraction some 60 times, with
/// O(sqrt(n)) terms each: a planner pass asks again for every fleet it has
/// measured, so intervals are kept per thread (a pure function: keeping them
/// cannot change one).
pub fn clopper_pearson(k: u64, n: u64, alpha: f64) -> (f64, f64) {
    if n == 0 || !(alpha > 0.0 && alpha < 1.0) {
        return (0.0, 1.0);
    }
    let key = (k.min(n), n, alpha.to_bits());
    if let Some(bounds) = INTERVALS.with_borrow(|kept| kept.get(&key).copied()) {
        return bounds;
    }
    let bounds = exact_interval(key.0, n, alpha);
    INTERVALS.with_borrow_mut(|kept| {
        if kept.len() >= KEPT_INTERVALS {
            kept.clear();
        }
        kept.insert(key, bounds);
    });
    bounds
}

/// Intervals kept per thread by [`clopper_pearson`]; more are computed again.
const KEPT_INTERVALS: usize = 4096;

/// (k, n, alpha's bits) to the interval's ends.
type Intervals = BTreeMap<(u64, u64, u64), (f64, f64)>;

thread_local! {
    static INTERVALS: RefCell<Intervals> =
        const { RefCell::new(BTreeMap::new()) };
}

/// [`clopper_pearson`] computed, for `0 < alpha < 1`, `n > 0` and `k <= n`.
fn exact_interval(k: u64, n: u64, alpha: f64) -> (f64, f64) {
    let tail = alpha / 2.0;
    let (kf, nf) = (k as f64, n as f64);
    let lower = if k == 0 {
        0.0
    } else if k == n {
        libm::pow(tail, 1.0 / nf)
    } else {
        beta_quantile(tail, kf, nf - kf + 1.0)
    };
    let upper = if k == n {
        1.0
    } else if k == 0 {
        1.0 - libm::pow(tail, 1.0 / nf)
    } else {
        beta_quantile(1.0 - tail, kf + 1.0, nf - kf)
    };
    (lower, upper)
}

/// The `q`-quantile of Beta(a, b): the x in \[0, 1\] with I_x(a, b) = q, by
/// bisection (I_x is increasing in x); 200 halvings reach the spacing of
/// doubles near every x.
fn beta_quantile(q: f64, a: f64, b: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if regularized_beta(mid, a, b) < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The regularized incomplete beta function I_x(a, b) for a, b > 0, by its
/// continued fraction (modified Lentz), on the side of the symmetry
/// I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges fast.
fn regularized_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b)
        + a * libm::log(x)
        + b * libm::log1p(-x);
    let front = libm::exp(ln_front);
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of I_x(a, b) (Numerical Recipes, `betacf`), to
/// relative precision 1e-15; it needs O(sqrt(max(a, b))) terms on the side
/// `regularized_beta` calls it on.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let tiny = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / tiny(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..100_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / tiny(1.0 + aa * d);
        c = tiny(1.0 + aa / c);
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / tiny(1.0 + aa * d);
        c = tiny(1.0 + aa / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
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
    fn clopper_pearson_matches_published_values() {
        // Beta quantiles to 12 digits by 40-digit bisection in mpmath
        // (`betainc(a, b, 0, x, regularized=True)`); the first three are
        // also R's binom.test(k, n)$conf.int.
        let cases = [
            (5, 20, 0.0865714691014, 0.491045871708),
            (1, 10, 0.00252857854446, 0.445016117028),
            (50, 100, 0.398321129503, 0.601678870497),
            (3, 1000, 0.00061909993165, 0.00874202323848),
        ];
        for (k, n, lo, hi) in cases {
            let (l, h) = clopper_pearson(k, n, 0.05);
            // To the 12 digits given.
            assert!(
                (l - lo).abs() < 1e-11 * lo,
                "{k}/{n}: lower {l}, expected {lo}"
            );
            assert!(
                (h - hi).abs() < 1e-11 * hi,
                "{k}/{n}: upper {h}, expected {hi}"
            );
        }
    }

    #[test]
    fn clopper_pearson_at_the_ends_is_exact_and_never_zero_width() {
        // 0 of n: [0, 1 - 0.025^(1/n)], the "rule of three" (3.69 / n at 95%).
        for n in [1u64, 7, 100, 86_400, 10_000_000] {
            let (lo, hi) = clopper_pearson(0, n, 0.05);
            assert_eq!(lo, 0.0);
            let exact = 1.0 - libm::pow(0.025, 1.0 / n as f64);
            assert_eq!(hi, exact);
            assert!(hi > 0.0);
            if n >= 86_400 {
                // -ln(0.025) = 3.689 for large n.
                assert!(
                    (hi * n as f64 - 3.689).abs() < 0.001,
                    "n = {n}: {}",
                    hi * n as f64
                );
            }
            // And the bisection agrees with the closed form where both apply.
            assert!((beta_quantile(0.975, 1.0, n as f64) - exact).abs() < 1e-12 + 1e-9 * exact);
            let (lo, hi) = clopper_pearson(n, n, 0.05);
            assert_eq!(hi, 1.0);
            assert_eq!(lo, libm::pow(0.025, 1.0 / n as f64));
        }
        assert_eq!(clopper_pearson(0, 0, 0.05), (0.0, 1.0));
        assert_eq!(clopper_pearson(1, 10, f64::NAN), (0.0, 1.0));
    }

    #[test]
    fn clopper_pearson_covers_at_least_95_percent_for_every_p() {
        // The coverage of the interval is exact to compute: the sum of the
        // binomial probabilities of the k whose interval holds p. It must be
        // at least 95% for every p (Wilson's dips below near 0 and 1).
        let n = 60u64;
        let intervals: Vec<(f64, f64)> = (0..=n).map(|k| clopper_pearson(k, n, 0.05)).collect();
        let ln_choose = |k: u64| {
            libm::lgamma(n as f64 + 1.0)
                - libm::lgamma(k as f64 + 1.0)
                - libm::lgamma((n - k) as f64 + 1.0)
        };
        for i in 1..200 {
            let p = i as f64 / 200.0;
            let coverage: f64 = (0..=n)
                .filter(|&k| intervals[k as usize].0 <= p && p <= intervals[k as usize].1)
                .map(|k| {
                    libm::exp(
                        ln_choose(k) + k as f64 * libm::log(p) + (n - k) as f64 * libm::log1p(-p),
                    )
                })
                .sum();
            assert!(coverage >= 0.95 - 1e-12, "p = {p}: coverage {coverage}");
        }
        for (k, n) in [(1u64, 50u64), (7, 300), (120, 1000), (999, 1000)] {
            let p = k as f64 / n as f64;
            let (lo, hi) = clopper_pearson(k, n, 0.05);
            assert!(lo < p && p < hi, "{k}/{n}: [{lo}, {hi}]");
        }
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

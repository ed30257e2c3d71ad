//! [`Quantiles`]' constructors and the percentiles it reports: which ranks
//! they fall on among a row's requests, finite or not.

use super::Quantiles;
use super::rows::whole_row;

impl Quantiles {
    /// From `finite` values (any order) and `missing` further requests whose
    /// value is infinite. Linear time: each percentile is found by selection
    /// (`select_ranks`), not by sorting.
    pub fn of(finite: Vec<f64>, missing: u64) -> Quantiles {
        Quantiles::of_parts(&[&finite], missing)
    }

    /// [`Quantiles::of`] the values of all `parts` together (left as they are).
    pub fn of_parts(parts: &[&[f64]], missing: u64) -> Quantiles {
        let n: usize = parts.iter().map(|p| p.len()).sum();
        whole_row(parts, n as u64 + missing, 0).quantiles
    }

    /// The p-quantile of `sorted` values plus `missing` infinite ones: the
    /// smallest x with F(x) >= p (no interpolation).
    pub fn at(sorted: &[f64], missing: u64, p: f64) -> f64 {
        match rank(p, sorted.len() as u64 + missing) {
            None => f64::NAN,
            Some(r) if r <= sorted.len() => sorted[r - 1],
            Some(_) => f64::INFINITY,
        }
    }
}

/// The percentiles that [`Quantiles`] reports, in the order of its fields.
const PROBABILITIES: [f64; 5] = [0.5, 0.9, 0.95, 0.99, 0.999];

/// The 1-based rank of the p-quantile among `total` values (`None` for none).
fn rank(p: f64, total: u64) -> Option<usize> {
    (total > 0).then(|| ((p * total as f64).ceil() as u64).clamp(1, total) as usize)
}

/// The 0-based ranks, among `n` finite values of `total` requests, of the
/// percentiles that fall on a finite value (ascending).
pub fn finite_ranks(n: usize, total: u64) -> Vec<usize> {
    PROBABILITIES
        .iter()
        .filter_map(|&p| rank(p, total).filter(|&r| r <= n).map(|r| r - 1))
        .collect()
}

/// `q` with its percentiles set: the `selected` values of the
/// [`finite_ranks`] in order, infinite beyond the finite values.
pub fn with_percentiles(mut q: Quantiles, total: u64, selected: Vec<f64>) -> Quantiles {
    let n = q.count as usize;
    let mut values = selected.into_iter();
    let fields = [&mut q.p50, &mut q.p90, &mut q.p95, &mut q.p99, &mut q.p999];
    for (p, field) in PROBABILITIES.into_iter().zip(fields) {
        *field = match rank(p, total) {
            None => f64::NAN,
            Some(r) if r > n => f64::INFINITY,
            Some(_) => values.next().unwrap_or(f64::NAN),
        };
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::cdf_points;

    #[test]
    fn quantiles_count_missing_requests_as_infinite() {
        let q = Quantiles::of(vec![9.0, 2.0, 3.0, 1.0, 5.0, 6.0, 7.0, 8.0, 4.0], 1);
        assert_eq!(q.p50, 5.0);
        assert_eq!(q.p90, 9.0);
        assert_eq!(q.p95, f64::INFINITY);
        assert_eq!(q.p99, f64::INFINITY);
        assert_eq!(q.mean, 5.0);
        let json = serde_json::to_string(&q).unwrap();
        assert!(json.contains("\"p99\":\"inf\""), "{json}");
        let back: Quantiles = serde_json::from_str(&json).unwrap();
        assert_eq!(back, q);
    }

    #[test]
    fn selection_gives_the_same_quantiles_as_sorting() {
        // 1000 values in a scrambled order: p-quantile = ceil(p * 1000)-th smallest.
        let values: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 1000) as f64).collect();
        let q = Quantiles::of(values, 0);
        assert_eq!(
            (q.p50, q.p90, q.p95, q.p99, q.p999),
            (499.0, 899.0, 949.0, 989.0, 998.0)
        );
        assert_eq!((q.mean, q.max, q.count), (499.5, 999.0, 1000));
    }

    #[test]
    fn quantiles_of_parts_are_those_of_their_concatenation() {
        let mut rng = crate::rng::stream(8, 8);
        for n in [10, 1_000, 70_000, 200_000] {
            let values: Vec<f64> = (0..n)
                .map(|_| libm::exp(crate::model::dist::unit(&mut rng) * 20.0 - 5.0))
                .collect();
            // Three uneven parts, one of them empty.
            let (a, rest) = values.split_at(n / 7);
            let (b, c) = rest.split_at(0);
            let before = [a.to_vec(), c.to_vec()];
            let parts = Quantiles::of_parts(&[a, b, c], 17);
            assert_eq!(parts, Quantiles::of(values.clone(), 17), "n = {n}");
            assert_eq!(parts.count, n as u64);
            assert_eq!([a.to_vec(), c.to_vec()], before, "parts left as they were");
            let (all, split) = (
                cdf_points(&[&values], 2 * n as u64, 40),
                cdf_points(&[a, b, c], 2 * n as u64, 40),
            );
            assert_eq!(all, split, "n = {n}");
        }
    }
}

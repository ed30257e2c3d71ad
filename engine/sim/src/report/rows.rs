//! A row's statistics (a class, or all classes together) from its sample:
//! percentiles and CDF points in one summary pass and, for large samples,
//! one gather pass, shared by each class and the whole.

use super::Quantiles;
use super::buckets::{BUCKETS, Summary};
use super::cdf::{cdf_counts_by_search, cdf_from_counts, cdf_xs};
use super::quantiles::{finite_ranks, with_percentiles};
use super::select::{Plan, gather, select_ranks};

/// Percentiles and CDF points of one row (a class, or all classes).
#[derive(Clone, Debug)]
pub struct RowStats {
    pub quantiles: Quantiles,
    pub cdf: Vec<[f64; 2]>,
}

/// Statistics of all `parts` together (`total` requests, those without a
/// value infinite; CDF with `points` points): one summary pass over the
/// values and, for large samples, one gather pass.
pub fn whole_row(parts: &[&[f64]], total: u64, points: usize) -> RowStats {
    let n: usize = parts.iter().map(|p| p.len()).sum();
    let mut row = Row::new(parts, Summary::of(parts, n >= BUCKETS), total, points);
    for part in parts {
        gather(part, None, row.plan());
    }
    row.finish()
}

/// Statistics of each part (`totals\[i\]` requests) and of all parts together
/// (`total` requests), as [`whole_row`] gives them, reading each value
/// twice in all: one summary pass per part, whose histograms add up to the
/// whole's, and one gather pass per part that feeds both its own row and
/// the whole's. The whole's mean adds the parts' sums, so it may differ in
/// the last bits from one sum over every value; everything else is the same.
pub fn each_and_whole(
    parts: &[&[f64]],
    totals: &[u64],
    total: u64,
    points: usize,
) -> (Vec<RowStats>, RowStats) {
    if let ([_], [part_total]) = (parts, totals)
        && *part_total == total
    {
        let row = whole_row(parts, total, points);
        return (vec![row.clone()], row);
    }
    let n: usize = parts.iter().map(|p| p.len()).sum();
    let summaries: Vec<Summary> = parts
        .iter()
        .map(|p| Summary::of(std::slice::from_ref(p), n >= BUCKETS))
        .collect();
    let mut whole = Row::new(parts, Summary::combine(&summaries), total, points);
    let mut rows: Vec<Row> = parts
        .iter()
        .zip(summaries)
        .zip(totals)
        .map(|((part, s), &t)| Row::new(std::slice::from_ref(part), s, t, points))
        .collect();
    for (part, row) in parts.iter().zip(&mut rows) {
        gather(part, row.plan(), whole.plan());
    }
    (rows.into_iter().map(Row::finish).collect(), whole.finish())
}

/// One row's statistics: complete, or waiting for the gather pass.
enum Row {
    Done(RowStats),
    Gathering {
        /// Count, mean and max set; percentiles to come.
        quantiles: Quantiles,
        total: u64,
        plan: Plan,
    },
}

impl Row {
    /// Starts the statistics of the values of `parts` (`total` requests,
    /// CDF with `points` points) from their `summary`: without bucket
    /// counts (small samples) they are computed at once, by selection in a
    /// copy and a binary search per value; with them, a plan says which
    /// buckets the gather pass must read.
    fn new(parts: &[&[f64]], summary: Summary, total: u64, points: usize) -> Row {
        let n = summary.n;
        let quantiles = Quantiles {
            count: n as u64,
            mean: if n > 0 {
                summary.sum / n as f64
            } else {
                f64::NAN
            },
            max: summary.max,
            ..Quantiles::default()
        };
        let ranks = finite_ranks(n, total);
        let xs = if n > 0 {
            cdf_xs(summary.min, summary.max, points)
        } else {
            Vec::new()
        };
        if summary.counts.len() != BUCKETS {
            let selected = select_ranks(&mut parts.concat(), &ranks);
            let counts = cdf_counts_by_search(parts, &xs);
            return Row::Done(RowStats {
                quantiles: with_percentiles(quantiles, total, selected),
                cdf: cdf_from_counts(&xs, &counts, total),
            });
        }
        Row::Gathering {
            quantiles,
            total,
            plan: Plan::new(&summary, &ranks, xs),
        }
    }

    /// The plan the gather pass feeds, if the row waits for one.
    fn plan(&mut self) -> Option<&mut Plan> {
        match self {
            Row::Done(_) => None,
            Row::Gathering { plan, .. } => Some(plan),
        }
    }

    /// The statistics, once every value has been offered to the plan.
    fn finish(self) -> RowStats {
        match self {
            Row::Done(stats) => stats,
            Row::Gathering {
                quantiles,
                total,
                plan,
            } => {
                let (selected, xs, counts) = plan.finish();
                RowStats {
                    quantiles: with_percentiles(quantiles, total, selected),
                    cdf: cdf_from_counts(&xs, &counts, total),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dist::unit;
    use crate::report::cdf::{CDF_POINTS, cdf_xs};
    use crate::report::testing::{
        assert_same, assert_same_but_mean, cdf_by_search, quantiles_by_sorting,
    };

    #[test]
    fn bucket_cdf_is_the_cdf_of_a_search_per_value() {
        // Large enough for bucket counts, over many octaves, with zeros,
        // values below 1e-6, ties, the largest value many times, values on
        // and next to the CDF points, and, in later rounds, negative, NaN
        // and infinite values (whose points do not ascend).
        let mut rng = crate::rng::stream(5, 5);
        let hi = libm::exp(22.0);
        let base: Vec<f64> = (0..250_000)
            .map(|i| {
                let u = unit(&mut rng);
                match i % 6 {
                    0 => 0.0,
                    1 => u * 1e-7,
                    2 => (u * 40.0).floor(),
                    5 => hi,
                    _ => libm::exp(u * 30.0 - 8.0),
                }
            })
            .collect();
        let extras: [&[f64]; 4] = [
            &[],
            &[-3.0, -0.0, -1e-300],
            &[f64::NAN, -f64::NAN],
            &[f64::INFINITY],
        ];
        for extra in extras {
            for points in [200, 1, 2, 7, 1000] {
                let mut values = base.clone();
                let len = values.len();
                let xs = cdf_xs(0.0, hi, points);
                for (j, &x) in xs.iter().enumerate() {
                    for (k, v) in [x, x.next_down(), x.next_up(), x].into_iter().enumerate() {
                        values[(97 * j + 13 * k) % len] = v;
                    }
                }
                values[1] = hi; // a point may have replaced the largest one
                values.extend_from_slice(extra);
                let total = values.len() as u64 + 11;
                let what = format!("points = {points}, extra = {extra:?}");
                let got = whole_row(&[&values], total, points);
                assert_same(&got.cdf, &cdf_by_search(&values, total, points), &what);
                assert_same(&got.quantiles, &quantiles_by_sorting(&values, 11), &what);
            }
        }
    }

    #[test]
    fn bucket_cdf_of_equal_and_nearly_equal_values() {
        // The CDF points of values this close need not ascend: the first
        // ones are exp(log(x)), which may round past the last, x itself.
        let (mut descending, mut a) = (0, 0.013f64);
        for _ in 0..40 {
            a *= 1.37;
            for b in [a, a.next_up(), a * (1.0 + 1e-12)] {
                let values: Vec<f64> = (0..BUCKETS + 7)
                    .map(|j| if j % 3 == 0 { a } else { b })
                    .collect();
                let xs = cdf_xs(a, b, CDF_POINTS);
                descending += xs.windows(2).any(|w| w[0] > w[1]) as usize;
                let total = values.len() as u64 + 2;
                for points in [CDF_POINTS, 2, 1] {
                    let what = format!("a = {a}, b = {b}, points = {points}");
                    let got = whole_row(&[&values], total, points);
                    assert_same(&got.cdf, &cdf_by_search(&values, total, points), &what);
                    assert_same(&got.quantiles, &quantiles_by_sorting(&values, 2), &what);
                }
            }
        }
        assert!(descending > 0, "some points descend");
    }

    #[test]
    fn each_part_and_the_whole_match_reference_computations() {
        // Parts empty, small and large, alone or together below and above
        // the bucket threshold; the whole's mean adds the parts' sums.
        let mut rng = crate::rng::stream(6, 6);
        let mut sample = |n: usize, scale: f64| -> Vec<f64> {
            (0..n)
                .map(|_| (libm::exp(unit(&mut rng) * 25.0 - 10.0) * scale).min(5e4))
                .collect()
        };
        let (empty, small, large) = (Vec::new(), sample(3_000, 1.0), sample(150_000, 7.0));
        let (mid_a, mid_b) = (sample(40_000, 0.5), sample(30_000, 3.0));
        let cases: [&[&[f64]]; 6] = [
            &[&empty, &small, &large],
            &[&large, &empty],
            &[&small, &empty, &small],
            &[&mid_a, &mid_b],
            &[&large],
            &[&empty],
        ];
        for (case, parts) in cases.into_iter().enumerate() {
            let totals: Vec<u64> = parts
                .iter()
                .enumerate()
                .map(|(i, p)| p.len() as u64 + 5 * i as u64)
                .collect();
            let total = totals.iter().sum();
            let (rows, whole) = each_and_whole(parts, &totals, total, CDF_POINTS);
            assert_eq!(rows.len(), parts.len());
            for (i, (row, (part, &t))) in rows.iter().zip(parts.iter().zip(&totals)).enumerate() {
                let what = format!("case {case}, part {i}");
                let missing = t - part.len() as u64;
                assert_same(&row.quantiles, &quantiles_by_sorting(part, missing), &what);
                assert_same(&row.cdf, &cdf_by_search(part, t, CDF_POINTS), &what);
            }
            let all = parts.concat();
            let what = format!("case {case}, whole");
            let missing = total - all.len() as u64;
            assert_same_but_mean(
                &whole.quantiles,
                &quantiles_by_sorting(&all, missing),
                &what,
            );
            assert_same(&whole.cdf, &cdf_by_search(&all, total, CDF_POINTS), &what);
        }
    }
}

//! The alias table that clamped lognormal counts draw from: the exact
//! distribution of the rounded, clamped count, one 64-bit draw per sample.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

use rand::Rng;

use super::{Dist, Sampler};

/// What a table depends on: the lognormal's mu and sigma and the clamps, as bits.
type TableKey = [u64; 4];

thread_local! {
    /// Tables built on this thread. A plan validates its scenario again for
    /// every simulation (in the page, a Web Worker receives each as JSON),
    /// and a table takes as long to build (an `erfc` per count, up to
    /// 65,536) as a twentieth of a day's simulation; equal distributions
    /// share one. The inputs fix a table, so sharing cannot change a draw.
    static TABLES: RefCell<BTreeMap<TableKey, Option<Arc<AliasTable>>>> =
        const { RefCell::new(BTreeMap::new()) };
}

/// Walker's alias table (built by Vose's method) for a count distribution
/// on `lo..=lo + n - 1`: one 64-bit draw picks a column uniformly (the high
/// half of a 64 x 64-bit product) and a coin (the next 32 bits) keeps the
/// column's own count or takes its alias. Column thresholds are stored to
/// 2^-32, so each count's probability is exact to about 2^-32 / n.
///
/// Used for lognormal counts with at most [`AliasTable::MAX_COUNTS`]
/// possible values (clamped, as token lengths usually are): a draw then
/// costs a multiply and a table lookup instead of a normal deviate and an
/// `exp`, and the mean and E\[X^2\] are exact sums.
#[derive(Clone, Debug)]
pub(super) struct AliasTable {
    lo: u32,
    /// Per column: threshold (high 32 bits) and alias column (low 32 bits).
    columns: Vec<u64>,
    /// Mean and E\[X^2\] of the count, exact.
    pub(super) moments: (f64, f64),
}

impl AliasTable {
    const MAX_COUNTS: f64 = 65_536.0;

    /// Distinct tables kept per thread; more are built again when asked.
    const KEPT: usize = 64;

    /// [`AliasTable::of`], built once per thread for equal distributions.
    pub(super) fn shared(dist: &Dist) -> Option<Arc<AliasTable>> {
        let Sampler::LogNormal { mu, sigma, .. } = dist.sampler else {
            return None;
        };
        let key = [mu, sigma, dist.min, dist.max].map(f64::to_bits);
        if let Some(table) = TABLES.with_borrow(|tables| tables.get(&key).cloned()) {
            return table;
        }
        let table = AliasTable::of(dist).map(Arc::new);
        TABLES.with_borrow_mut(|tables| {
            if tables.len() >= Self::KEPT {
                tables.clear();
            }
            tables.insert(key, table.clone());
        });
        table
    }

    /// The table of `dist`'s rounded, clamped counts, where it has one.
    pub(super) fn of(dist: &Dist) -> Option<AliasTable> {
        let Sampler::LogNormal { mu, sigma, .. } = dist.sampler else {
            return None;
        };
        if dist.max - dist.min + 1.0 > Self::MAX_COUNTS || sigma.is_nan() || sigma <= 0.0 {
            return None;
        }
        let (lo, hi) = (dist.min as u32, dist.max as u32);
        // At each boundary c + 1/2 between counts: P(X <= x) and P(X > x)
        // for the lognormal, the smaller one from `erfc` (accurate in its
        // tail), the other by difference.
        let boundaries: Vec<(f64, f64)> = (lo..hi)
            .map(|c| {
                let z = (libm::log(c as f64 + 0.5) - mu) / sigma;
                let tail = 0.5 * libm::erfc(z.abs() / std::f64::consts::SQRT_2);
                if z <= 0.0 {
                    (tail, 1.0 - tail)
                } else {
                    (1.0 - tail, tail)
                }
            })
            .collect();
        // Count c is drawn for X in [c - 1/2, c + 1/2), the ends also for the tails.
        let n = boundaries.len();
        let probs: Vec<f64> = (0..=n)
            .map(
                |i| match (i.checked_sub(1).map(|j| boundaries[j]), boundaries.get(i)) {
                    (None, None) => 1.0,
                    (None, Some(&(up_below, _))) => up_below,
                    (Some((_, down_above)), None) => down_above,
                    // Differences of the smaller side lose no precision.
                    (Some((down_below, down_above)), Some(&(up_below, up_above))) => {
                        if up_below <= 0.5 {
                            up_below - down_below
                        } else {
                            down_above - up_above
                        }
                    }
                },
            )
            .collect();
        let total: f64 = probs.iter().sum();
        if !(total.is_finite() && total > 0.0) {
            return None;
        }
        let moments = probs
            .iter()
            .zip(lo..=hi)
            .fold((0.0, 0.0), |(m1, m2), (p, c)| {
                let c = c as f64;
                (m1 + p * c / total, m2 + p * c * c / total)
            });
        Some(AliasTable {
            lo,
            columns: vose(&probs, total),
            moments,
        })
    }

    #[inline(always)]
    pub(super) fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        self.resolve(self.pick(rng))
    }

    /// A column (high 32 bits) and a coin (low 32 bits) from one draw: the
    /// column from the high half of a 64x64-bit product, the coin from the
    /// next 32 bits.
    #[inline(always)]
    fn pick<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let wide = rng.next_u64() as u128 * self.columns.len() as u128;
        ((wide >> 64) as u64) << 32 | (wide as u64 >> 32)
    }

    /// The count a pick gives: its column, or the column's alias.
    #[inline(always)]
    fn resolve(&self, pick: u64) -> u32 {
        let (column, coin) = ((pick >> 32) as usize, pick as u32);
        let entry = self.columns[column];
        let chosen = if coin < (entry >> 32) as u32 {
            column as u32
        } else {
            entry as u32
        };
        self.lo + chosen
    }

    /// `out.len()` draws, as many calls of [`AliasTable::sample`] give: all
    /// the picks first (the random-number chain), then all the lookups,
    /// which are independent of each other, so their cache misses overlap.
    pub(super) fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [u32]) {
        for chunk in out.chunks_mut(Self::FILL) {
            let mut picks = [0u64; Self::FILL];
            for p in &mut picks[..chunk.len()] {
                *p = self.pick(rng);
            }
            for (x, &p) in chunk.iter_mut().zip(&picks) {
                *x = self.resolve(p);
            }
        }
    }

    /// Picks made ahead of their lookups in [`AliasTable::fill`].
    const FILL: usize = 64;
}

/// Alias columns for weights `probs` summing to `total` (Vose's method).
fn vose(probs: &[f64], total: f64) -> Vec<u64> {
    let n = probs.len();
    let mut scaled: Vec<f64> = probs.iter().map(|p| p * n as f64 / total).collect();
    let mut columns: Vec<u64> = (0..n as u64).map(|i| (u32::MAX as u64) << 32 | i).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| scaled[i] < 1.0);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        let threshold = (scaled[s] * 4_294_967_296.0).min(u32::MAX as f64) as u64;
        columns[s] = threshold << 32 | l as u64;
        scaled[l] -= 1.0 - scaled[s];
        if scaled[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // What is left is full up to rounding: it keeps its own count.
    columns
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dist::build::Z90;
    use crate::model::dist::round;
    use crate::params::{DistParams, Shape};
    use crate::rng::stream;

    /// The probability each count gets from alias columns.
    fn implied(columns: &[u64]) -> Vec<f64> {
        let n = columns.len() as f64;
        let mut p = vec![0.0; columns.len()];
        for (i, &c) in columns.iter().enumerate() {
            let keep = (c >> 32) as f64 / 4_294_967_296.0;
            p[i] += keep / n;
            p[(c as u32) as usize] += (1.0 - keep) / n;
        }
        p
    }

    #[test]
    fn alias_columns_reproduce_their_weights() {
        for weights in [
            vec![0.1, 0.2, 0.3, 0.4],
            vec![5.0],
            vec![1.0, 0.0, 1.0, 0.0, 3.0],
            (1..=1000).map(|i| 1.0 / i as f64).collect(),
        ] {
            let total: f64 = weights.iter().sum();
            let p = implied(&vose(&weights, total));
            for (got, w) in p.iter().zip(&weights) {
                // Thresholds are kept to 2^-32 of a column.
                assert!((got - w / total).abs() < 1e-9, "{got} vs {}", w / total);
            }
        }
    }

    #[test]
    fn table_draws_match_direct_lognormal_draws() {
        // The bench's prompt lengths: lognormal, median 600, p90 2500, at most 16,000.
        let d = DistParams::log_normal(600.0, 2500.0)
            .clamped(None, Some(16_000.0))
            .to_dist()
            .expect("valid");
        assert!(d.table().is_some(), "clamped lognormals use a table");
        let n = 400_000;
        let mut table_rng = stream(3, 1);
        let mut direct_rng = stream(3, 2);
        let table: Vec<f64> = (0..n).map(|_| d.sample(&mut table_rng) as f64).collect();
        let direct: Vec<f64> = (0..n)
            .map(|_| round(d.raw(&mut direct_rng)).clamp(d.min, d.max))
            .collect();
        // Two samples of 400k: a proportion differs by sd sqrt(2 p (1 - p) / n)
        // (at most 0.0011); allow 5 sd.
        for q in [1.0, 50.0, 300.0, 600.0, 2500.0, 9000.0, 15_999.0] {
            let share = |xs: &[f64]| xs.iter().filter(|&&x| x <= q).count() as f64 / n as f64;
            let (a, b) = (share(&table), share(&direct));
            let sd = (2.0 * b * (1.0 - b) / n as f64).sqrt().max(1e-5);
            assert!((a - b).abs() < 5.0 * sd, "P(N <= {q}): {a} vs {b}");
        }
        // Exact moments against the direct sample's: the mean's sd is
        // std / sqrt(n); allow 5 sd.
        let mean = direct.iter().sum::<f64>() / n as f64;
        let var = direct.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        let (m1, m2) = d.moments();
        assert!(
            (m1 - mean).abs() < 5.0 * (var / n as f64).sqrt(),
            "{m1} vs {mean}"
        );
        assert!(m2 > m1 * m1, "E[X^2] {m2} above the squared mean");
        // Every draw is a whole count within the clamps.
        assert!(table.iter().all(|&x| (1.0..=16_000.0).contains(&x)));
        assert!(
            table.contains(&16_000.0),
            "the upper tail lands on the clamp"
        );
    }

    #[test]
    fn narrow_tables_keep_to_their_clamps() {
        let lognormal = |min, max| {
            DistParams::log_normal(600.0, 2500.0)
                .clamped(min, Some(max))
                .to_dist()
                .expect("valid")
        };
        let mut rng = stream(5, 5);
        // One possible count: every draw is it, and so are the moments.
        let single = lognormal(Some(700.0), 700.0);
        assert!((0..1000).all(|_| single.sample(&mut rng) == 700));
        assert_eq!(single.moments(), (700.0, 490_000.0));
        // In the upper tail, [5000, 5003]: the upper clamp takes
        // P(X >= 5002.5) (about 2.9%), the lower one nearly all the rest, and
        // no draw leaves the range.
        let tail = lognormal(Some(5000.0), 5003.0);
        let n = 40_000;
        let draws: Vec<u32> = (0..n).map(|_| tail.sample(&mut rng)).collect();
        assert!(draws.iter().all(|d| (5000..=5003).contains(d)));
        let sigma = (libm::log(2500.0) - libm::log(600.0)) / Z90;
        let z = (libm::log(5002.5) - libm::log(600.0)) / sigma;
        let p = 0.5 * libm::erfc(z / std::f64::consts::SQRT_2);
        let share = draws.iter().filter(|&&d| d == 5003).count() as f64 / n as f64;
        // Binomial share: sd sqrt(p (1 - p) / n), about 0.0008; allow 5 sd.
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        assert!((share - p).abs() < 5.0 * sd, "P(N = 5003) {share} vs {p}");
        assert!(draws.iter().filter(|&&d| d == 5000).count() as f64 > 0.96 * n as f64);
    }

    #[test]
    fn unclamped_lognormals_and_other_shapes_draw_directly() {
        let build = |shape| DistParams::new(shape).to_dist().expect("valid");
        let unclamped = build(Shape::LogNormal {
            median: 600.0,
            p90: 2500.0,
        });
        assert!(unclamped.table().is_none());
        assert!(build(Shape::Exponential { mean: 50.0 }).table().is_none());
    }
}

//! The report: per-request records and what planners read off them.
//!
//! A request *misses* when it completes after its class deadline, is
//! rejected, times out, or is unfinished when the run ends. Statistics count
//! requests that arrive at or after the warm-up.

use crate::serde_float::NonFinite;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::model::analytic::{LoadEstimate, load_estimate};
use crate::model::scenario::Scenario;
use crate::serde_float::nonfinite;
pub use crate::sim::SeriesPoint;
use crate::sim::{RequestRecord, RunError, RunOptions, RunOutput, Simulation, Status};
use crate::stats::wilson_interval;

/// Percentiles of a time \[s\]. Percentiles count every request of the
/// population; one that falls among requests that never reached the event
/// is infinite (`"inf"` in JSON, see [`crate::NonFinite`]). `mean` and
/// `max` are over the finite values (NaN, `null`, when there are none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// Requests with a finite value.
    pub count: u64,
    #[serde(with = "nonfinite")]
    pub mean: f64,
    #[serde(with = "nonfinite")]
    pub p50: f64,
    #[serde(with = "nonfinite")]
    pub p90: f64,
    #[serde(with = "nonfinite")]
    pub p95: f64,
    #[serde(with = "nonfinite")]
    pub p99: f64,
    #[serde(with = "nonfinite")]
    pub p999: f64,
    #[serde(with = "nonfinite")]
    pub max: f64,
}

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

/// The values of 0-based `ranks` (ascending, each below `values.len()`) in
/// `values` (any order, no NaN), in the order of `total_cmp`; reorders `values`.
///
/// Linear time with a small constant: one pass counts the values by the top
/// 16 bits of an order-preserving key (sign, exponent and 4 mantissa bits,
/// so sixteen buckets per octave), a second gathers the buckets that hold a
/// rank, and selection runs only inside those. Small inputs are selected
/// directly.
pub fn select_ranks(values: &mut [f64], ranks: &[usize]) -> Vec<f64> {
    debug_assert!(ranks.windows(2).all(|w| w[0] <= w[1]));
    debug_assert!(ranks.iter().all(|&r| r < values.len()));
    if values.len() >= BUCKETS {
        let summary = Summary::of(&[&*values], true);
        let mut plan = Plan::new(&summary, ranks, Vec::new());
        gather(values, Some(&mut plan), None);
        return plan.finish().0;
    }
    // Ranks ascend, so each selection only looks right of the previous one.
    let mut done = 0;
    ranks
        .iter()
        .map(|&index| {
            if index >= done {
                values[done..].select_nth_unstable_by(index - done, f64::total_cmp);
                done = index;
            }
            values[index]
        })
        .collect()
}

/// Samples from this size on (all parts together) are counted by buckets.
const BUCKETS: usize = 1 << 16;

/// Points of the sojourn CDF in every row.
const CDF_POINTS: usize = 200;

/// The percentiles that [`Quantiles`] reports, in the order of its fields.
const PROBABILITIES: [f64; 5] = [0.5, 0.9, 0.95, 0.99, 0.999];

/// The 1-based rank of the p-quantile among `total` values (`None` for none).
fn rank(p: f64, total: u64) -> Option<usize> {
    (total > 0).then(|| ((p * total as f64).ceil() as u64).clamp(1, total) as usize)
}

/// Maps f64 to u64 so that integer order is `total_cmp` order.
fn key(v: f64) -> u64 {
    let bits = v.to_bits();
    bits ^ ((((bits as i64) >> 63) as u64) | (1 << 63))
}

/// The f64 whose [`key`] is `key`.
fn from_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key ^ (1 << 63)
    } else {
        !key
    })
}

/// The bucket of `v`: the top 16 bits of its [`key`] (sign, exponent and 4
/// mantissa bits, so sixteen buckets per octave), in the order of the values.
fn bucket(v: f64) -> usize {
    (key(v) >> 48) as usize
}

/// The slot of `v`: the top 16 bits of its bits, one shift. Histograms and
/// plans are indexed by slot (per value) and walked by bucket (per bucket):
/// the slot of bucket `b` is [`slot_of_bucket`]`(b)`.
fn slot(v: f64) -> usize {
    (v.to_bits() >> 48) as usize
}

/// The slot of the values of bucket `b` (below [`BUCKETS`]): the key flips
/// every bit of a negative value and the sign bit of the others.
fn slot_of_bucket(b: usize) -> usize {
    b ^ if b & 0x8000 != 0 { 0x8000 } else { 0xFFFF }
}

/// Percentiles and CDF points of one row (a class, or all classes).
#[derive(Clone, Debug)]
struct RowStats {
    quantiles: Quantiles,
    cdf: Vec<[f64; 2]>,
}

/// Statistics of all `parts` together (`total` requests, those without a
/// value infinite; CDF with `points` points): one summary pass over the
/// values and, for large samples, one gather pass.
fn whole_row(parts: &[&[f64]], total: u64, points: usize) -> RowStats {
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
fn each_and_whole(
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

/// What one pass over a sample learns.
struct Summary {
    n: usize,
    /// Sum in reading order, as `Iterator::sum` gives it.
    sum: f64,
    /// Smallest value, NaNs aside (infinite when there are none; the sign
    /// of a zero unspecified, as with `f64::min`).
    min: f64,
    /// Largest value, NaNs aside (NaN when there are none), as
    /// `fold(f64::NAN, f64::max)` gives it.
    max: f64,
    /// Values per bucket, or empty when not counted.
    counts: Vec<u32>,
}

impl Summary {
    /// Nothing read yet.
    fn empty() -> Summary {
        Summary {
            n: 0,
            sum: -0.0,
            min: f64::INFINITY,
            max: f64::NAN,
            counts: Vec::new(),
        }
    }

    /// Nothing read yet, with the largest value at -inf: plain comparisons
    /// (one instruction each) then keep the smallest and largest values.
    fn start() -> Summary {
        Summary {
            max: f64::NEG_INFINITY,
            ..Summary::empty()
        }
    }

    /// One pass over the values of `parts` in order: their count, sum,
    /// smallest and largest and, when `histogram`, counts per bucket.
    fn of(parts: &[&[f64]], histogram: bool) -> Summary {
        let mut s = Summary::start();
        let mut counts = if histogram {
            vec![0; BUCKETS]
        } else {
            Vec::new()
        };
        for part in parts {
            match <&mut [u32; BUCKETS]>::try_from(&mut counts[..]) {
                Ok(counts) => s.read_counting(part, counts),
                Err(_) => s.read(part),
            }
        }
        s.counts = counts;
        // -inf stands for "none" only if no value is -inf.
        let infinite = |p: &&[f64]| p.contains(&f64::NEG_INFINITY);
        if s.max == f64::NEG_INFINITY && !parts.iter().any(infinite) {
            s.max = f64::NAN;
        }
        s
    }

    /// Adds `values` to count, sum, smallest and largest (NaNs never
    /// compare smaller or larger, so they leave both as they are).
    fn read(&mut self, values: &[f64]) {
        let (mut sum, mut min, mut max) = (self.sum, self.min, self.max);
        for &v in values {
            sum += v;
            min = if v < min { v } else { min };
            max = if v > max { v } else { max };
        }
        (self.n, self.sum, self.min, self.max) = (self.n + values.len(), sum, min, max);
    }

    /// [`Summary::read`], also counting the values per bucket.
    fn read_counting(&mut self, values: &[f64], counts: &mut [u32; BUCKETS]) {
        let (mut sum, mut min, mut max) = (self.sum, self.min, self.max);
        for &v in values {
            sum += v;
            min = if v < min { v } else { min };
            max = if v > max { v } else { max };
            counts[slot(v)] += 1;
        }
        (self.n, self.sum, self.min, self.max) = (self.n + values.len(), sum, min, max);
    }

    /// The buckets that hold every value: from the smallest's to the
    /// largest's, unless some lie outside (NaNs, or a zero of the other
    /// sign), and then all of them.
    fn occupied(&self) -> Range<usize> {
        if self.min <= self.max {
            let range = bucket(self.min)..bucket(self.max) + 1;
            let count = |b| {
                self.counts
                    .get(slot_of_bucket(b))
                    .map_or(0, |&c| c as usize)
            };
            if range.clone().map(count).sum::<usize>() == self.n {
                return range;
            }
        }
        0..self.counts.len()
    }

    /// The summary of all `parts` together: counts and sums added, bucket
    /// counts too when every part has them.
    fn combine(parts: &[Summary]) -> Summary {
        let mut s = Summary::empty();
        for p in parts {
            s.n += p.n;
            s.sum += p.sum;
            s.min = s.min.min(p.min);
            s.max = s.max.max(p.max);
        }
        if !parts.is_empty() && parts.iter().all(|p| p.counts.len() == BUCKETS) {
            s.counts = vec![0; BUCKETS];
            for p in parts {
                for (c, &d) in s.counts.iter_mut().zip(&p.counts) {
                    *c += d;
                }
            }
        }
        s
    }
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

/// The 0-based ranks, among `n` finite values of `total` requests, of the
/// percentiles that fall on a finite value (ascending).
fn finite_ranks(n: usize, total: u64) -> Vec<usize> {
    PROBABILITIES
        .iter()
        .filter_map(|&p| rank(p, total).filter(|&r| r <= n).map(|r| r - 1))
        .collect()
}

/// `q` with its percentiles set: the `selected` values of the
/// [`finite_ranks`] in order, infinite beyond the finite values.
fn with_percentiles(mut q: Quantiles, total: u64, selected: Vec<f64>) -> Quantiles {
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

/// The x points of a CDF with `points` points, log-spaced in time from the
/// smallest value `min` (at least 1e-6) to the largest `max`, which is
/// exactly the last point.
fn cdf_xs(min: f64, max: f64, points: usize) -> Vec<f64> {
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
fn interval_of(xs: &[f64], v: f64) -> usize {
    xs.partition_point(|x| *x < v)
}

/// Values of `parts` per CDF interval: `counts\[i\]` holds those in
/// (xs\[i-1\], xs\[i\]], the first also those below, the last those above;
/// one binary search per value.
fn cdf_counts_by_search(parts: &[&[f64]], xs: &[f64]) -> Vec<u64> {
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
fn cdf_from_counts(xs: &[f64], counts: &[u64], total: u64) -> Vec<[f64; 2]> {
    let mut below = 0;
    xs.iter()
        .zip(counts)
        .map(|(x, c)| {
            below += c;
            [*x, below as f64 / total as f64]
        })
        .collect()
}

/// What the gather pass does for a row with bucket counts: which buckets'
/// values it reads, and what for.
struct Plan {
    /// Per slot, what to do with the values of its bucket: nothing (0),
    /// count them into the CDF interval on either side of one point
    /// ([`ONE_POINT`] | the interval below it), add them to a list
    /// ([`LIST`] | the list), or whatever mark 1 + i of the sink says.
    entries: Vec<u32>,
    sink: Sink,
}

/// The flag of an entry for a bucket that holds one CDF point (and no
/// wanted rank): its values fall in interval `entry & !ONE_POINT`, or the
/// next one if above that point.
const ONE_POINT: u32 = 1 << 31;

/// The flag of an entry for a bucket that holds a wanted rank and lies
/// within one CDF interval: its values join list `entry & !LIST`.
const LIST: u32 = 1 << 30;

/// Where a plan puts the values it reads.
struct Sink {
    marks: Vec<Mark>,
    /// The bits of the values of each bucket that holds a wanted rank.
    lists: Vec<Vec<u64>>,
    /// Per wanted rank (ascending): its list and its 0-based rank there.
    wanted: Vec<(usize, usize)>,
    /// The CDF points (none without a CDF).
    xs: Vec<f64>,
    /// Values per CDF interval, as [`cdf_counts_by_search`] counts them.
    counts: Vec<u64>,
}

/// A bucket whose values need more than one comparison or one list.
#[derive(Clone, Copy)]
struct Mark {
    /// The list its values join, if it holds a wanted rank.
    list: Option<usize>,
    /// Its values fall in CDF intervals `lo..=hi` (before the last is
    /// merged into the one before it); none to find when `lo == hi`.
    lo: usize,
    hi: usize,
}

impl Plan {
    /// The plan for a row with the bucket counts of `summary`, wanted
    /// 0-based `ranks` (ascending, below the number of values) and CDF
    /// points `xs`.
    fn new(summary: &Summary, ranks: &[usize], xs: Vec<f64>) -> Plan {
        let mut plan = Plan {
            entries: vec![0; BUCKETS],
            sink: Sink {
                marks: Vec::new(),
                lists: Vec::new(),
                wanted: Vec::with_capacity(ranks.len()),
                counts: vec![0; xs.len()],
                xs,
            },
        };
        let occupied = summary.occupied();
        plan.split_cdf(&summary.counts, occupied.clone());
        plan.mark_ranks(&summary.counts, occupied.start, ranks);
        plan
    }

    /// Counts the values of every bucket (among the `occupied` ones, by
    /// slot `counts`) that lies within one CDF interval from its count
    /// alone, and sets the entries of the others, which straddle one CDF
    /// point or more, for a comparison or a search per value. Every bucket
    /// straddles all points when they do not ascend (with non-finite
    /// values, or values so close that `exp(log(x))` rounds past the last
    /// point).
    fn split_cdf(&mut self, counts: &[u32], occupied: Range<usize>) {
        let Some(last) = self.sink.xs.len().checked_sub(1) else {
            return;
        };
        let ascending = self.sink.xs.windows(2).all(|w| w[0] <= w[1]);
        for b in occupied {
            let s = slot_of_bucket(b);
            if counts[s] == 0 {
                continue;
            }
            let (lo, hi) = if ascending {
                bucket_intervals(b, &self.sink.xs)
            } else {
                (0, self.sink.xs.len())
            };
            if lo.min(last) == hi.min(last) {
                self.sink.counts[lo.min(last)] += counts[s] as u64;
            } else if hi == lo + 1 && hi <= last && lo < LIST as usize {
                self.entries[s] = ONE_POINT | lo as u32;
            } else {
                self.add_mark(s, Mark { list: None, lo, hi });
            }
        }
    }

    /// Gives the bucket of each wanted rank a list to gather its values in,
    /// and notes the rank within the bucket (slot `counts` are zero below
    /// bucket `first`).
    fn mark_ranks(&mut self, counts: &[u32], first: usize, ranks: &[usize]) {
        let (mut b, mut below) = (first, 0usize);
        for &r in ranks {
            while below + counts[slot_of_bucket(b)] as usize <= r {
                below += counts[slot_of_bucket(b)] as usize;
                b += 1;
            }
            let s = slot_of_bucket(b);
            let list = self.list_of(s, counts[s] as usize);
            self.sink.wanted.push((list, r - below));
        }
    }

    /// The list of the bucket in slot `s` (of `size` values), made if it
    /// has none.
    fn list_of(&mut self, s: usize, size: usize) -> usize {
        let entry = self.entries[s];
        let marked = entry != 0 && entry & (ONE_POINT | LIST) == 0;
        if entry & LIST != 0 {
            return (entry & !LIST) as usize;
        } else if marked && let Some(list) = self.sink.marks[entry as usize - 1].list {
            return list;
        }
        let list = self.sink.lists.len();
        self.sink.lists.push(Vec::with_capacity(size));
        if entry == 0 {
            self.entries[s] = LIST | list as u32;
        } else if marked {
            self.sink.marks[entry as usize - 1].list = Some(list);
        } else {
            let lo = (entry & !ONE_POINT) as usize;
            let hi = lo + 1;
            self.add_mark(
                s,
                Mark {
                    list: Some(list),
                    lo,
                    hi,
                },
            );
        }
        list
    }

    /// Gives the bucket in slot `s` the mark `mark`.
    fn add_mark(&mut self, s: usize, mark: Mark) {
        self.sink.marks.push(mark);
        self.entries[s] = self.sink.marks.len() as u32;
    }

    /// The entries by slot (as a fixed-size table, so that looking a slot
    /// up needs no bounds check) and the sink, apart.
    fn parts(&mut self) -> Option<(&[u32; BUCKETS], &mut Sink)> {
        let table = <&[u32; BUCKETS]>::try_from(&self.entries[..]).ok()?;
        Some((table, &mut self.sink))
    }

    /// The values of the wanted ranks, the CDF points and the values per
    /// CDF interval, once every value has been offered.
    fn finish(self) -> (Vec<f64>, Vec<f64>, Vec<u64>) {
        let Sink {
            mut lists,
            wanted,
            xs,
            counts,
            ..
        } = self.sink;
        // Ranks ascend, so each selection only looks right of the previous
        // one in the same list.
        let mut out = Vec::with_capacity(wanted.len());
        let (mut last_list, mut done) = (usize::MAX, 0);
        for (list, index) in wanted {
            let members = &mut lists[list];
            if list != last_list {
                (last_list, done) = (list, 0);
                to_keys(members);
            }
            if index >= done {
                members[done..].select_nth_unstable(index - done);
                done = index;
            }
            out.push(from_key(members[index]));
        }
        (out, xs, counts)
    }
}

/// Turns the bits of values of one bucket (so of one sign) into their
/// [`key`]s in place: one xor with the same mask for all, cheaper than
/// [`key`] per value, and integers then select faster than `total_cmp`.
fn to_keys(bits: &mut [u64]) {
    let mask = match bits.first() {
        Some(b) if b >> 63 == 1 => u64::MAX,
        _ => 1 << 63,
    };
    for b in bits {
        *b ^= mask;
    }
}

/// The CDF intervals (before the last is merged into the one before it)
/// of the smallest and the largest f64 of `bucket`, smaller first: with
/// ascending `xs`, every value of the bucket falls between them (a NaN
/// falls in 0, as does one end of any bucket holding NaNs).
fn bucket_intervals(bucket: usize, xs: &[f64]) -> (usize, usize) {
    let first = (bucket as u64) << 48;
    let a = interval_of(xs, from_key(first));
    let b = interval_of(xs, from_key(first | ((1 << 48) - 1)));
    (a.min(b), a.max(b))
}

impl Sink {
    /// Takes `v`, a value of a bucket with `entry` (not 0): into its CDF
    /// interval or its list, as the entry says, or as its mark says.
    #[inline(always)]
    fn take(&mut self, entry: u32, v: f64) {
        if entry & ONE_POINT != 0 {
            let i = (entry & !ONE_POINT) as usize;
            self.counts[i + (self.xs[i] < v) as usize] += 1;
        } else if entry & LIST != 0 {
            self.lists[(entry & !LIST) as usize].push(v.to_bits());
        } else {
            self.take_marked(entry as usize - 1, v);
        }
    }

    /// Takes `v`, a value of the bucket with mark `mark`: into its list,
    /// and into its CDF interval, searched among the few it may fall in.
    #[inline(always)]
    fn take_marked(&mut self, mark: usize, v: f64) {
        let Mark { list, lo, hi } = self.marks[mark];
        if let Some(list) = list {
            self.lists[list].push(v.to_bits());
        }
        if lo < hi {
            let i = match hi - lo {
                1 => lo + (self.xs[lo] < v) as usize,
                _ => lo + interval_of(&self.xs[lo..hi], v),
            };
            let last = self.counts.len() - 1;
            self.counts[i.min(last)] += 1;
        }
    }
}

/// Hands `v`, of slot `s`, to `sink` if the plan's `table` has an entry
/// for the slot.
#[inline(always)]
fn offer(table: &[u32; BUCKETS], sink: &mut Sink, s: usize, v: f64) {
    let entry = table[s];
    if entry != 0 {
        sink.take(entry, v);
    }
}

/// One pass over `values` (one part) that hands the values of every
/// bucket with an entry to the plans of its own row and of the whole, if
/// any.
fn gather(values: &[f64], own: Option<&mut Plan>, whole: Option<&mut Plan>) {
    match (own.and_then(Plan::parts), whole.and_then(Plan::parts)) {
        (Some((own, own_sink)), Some((whole, whole_sink))) => {
            for &v in values {
                let s = slot(v);
                offer(own, own_sink, s, v);
                offer(whole, whole_sink, s, v);
            }
        }
        (Some((table, sink)), None) | (None, Some((table, sink))) => {
            for &v in values {
                offer(table, sink, slot(v), v);
            }
        }
        (None, None) => {}
    }
}

/// Statistics of one class, or of all classes together.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassStats {
    pub name: String,
    /// The class deadline \[s\] (NaN for the overall row when classes differ).
    #[serde(with = "nonfinite")]
    pub deadline_s: f64,
    pub arrived: u64,
    pub met: u64,
    pub late: u64,
    pub rejected: u64,
    pub timed_out: u64,
    pub unfinished: u64,
    /// P(S > deadline), misses over arrivals (NaN with no arrivals).
    #[serde(with = "nonfinite")]
    pub p_miss: f64,
    /// 95% Wilson interval of `p_miss` within this run (sampling error of
    /// one seed, treating requests as independent; replications give a
    /// more honest interval).
    #[serde_as(as = "[NonFinite; 2]")]
    pub p_miss_ci95: [f64; 2],
    /// Requests meeting the SLA per hour of the measured window.
    #[serde_as(as = "NonFinite")]
    pub goodput_per_h: f64,
    /// Sojourn time (queue + service) of all arrivals; non-completed are infinite.
    pub sojourn: Quantiles,
    /// Arrival to first scheduled step.
    pub queue_wait: Quantiles,
    /// Arrival to first output token.
    pub ttft: Quantiles,
    /// Time per output token after the first, of completed requests.
    pub tpot: Quantiles,
    /// Points (sojourn \[s\], fraction of arrivals completed within it) of the
    /// sojourn CDF, log-spaced in time, for charts.
    #[serde_as(as = "Vec<[NonFinite; 2]>")]
    pub cdf: Vec<[f64; 2]>,
    /// Prompt tokens computed (cache hits excluded, recomputation included).
    pub prefill_tokens: u64,
    pub decode_tokens: u64,
    pub preemptions: u64,
    /// Replica-seconds attributed to the class's requests.
    #[serde_as(as = "NonFinite")]
    pub busy_s: f64,
    /// Replica-seconds attributed to requests that missed.
    #[serde_as(as = "NonFinite")]
    pub busy_s_missed: f64,
    /// Replica-seconds spent on tokens later discarded by preemption.
    #[serde_as(as = "NonFinite")]
    pub busy_s_recomputed: f64,
}

/// Counters of the engine's own work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineStats {
    pub requests: u64,
    /// Engine steps simulated (skipped ones included).
    pub steps: u64,
    /// Events processed: one per executed step or skipped run of steps.
    pub events: u64,
}

/// Everything a run produces.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub scenario_name: String,
    pub seed: u64,
    #[serde_as(as = "NonFinite")]
    pub horizon_s: f64,
    #[serde_as(as = "NonFinite")]
    pub warmup_s: f64,
    /// When the simulation stopped (horizon + drain) \[s\].
    #[serde_as(as = "NonFinite")]
    pub end_s: f64,
    pub replicas: u32,
    pub overall: ClassStats,
    pub classes: Vec<ClassStats>,
    pub series: Vec<SeriesPoint>,
    /// Replica-seconds spent executing steps, over the whole run.
    #[serde_as(as = "NonFinite")]
    pub busy_s: f64,
    /// Fraction of replica-time spent executing steps, over the horizon or
    /// until the last step if the fleet worked on past the horizon.
    #[serde_as(as = "NonFinite")]
    pub utilization: f64,
    /// Over the horizon.
    #[serde_as(as = "NonFinite")]
    pub prefill_tokens_per_s: f64,
    #[serde_as(as = "NonFinite")]
    pub decode_tokens_per_s: f64,
    pub load: LoadEstimate,
    pub warnings: Vec<String>,
    pub engine: EngineStats,
    /// Every request, in arrival order (empty when the run was asked not to
    /// keep them). Not serialised: export it separately.
    #[serde(skip)]
    pub records: Vec<RequestRecord>,
}

/// Whether a finished record met its class deadline.
pub fn met_deadline(r: &RequestRecord, deadline_s: f64) -> bool {
    r.status == Status::Completed && r.sojourn_s() <= deadline_s
}

struct Accumulator {
    sojourn: Vec<f64>,
    wait: Vec<f64>,
    ttft: Vec<f64>,
    tpot: Vec<f64>,
    stats: ClassStats,
}

impl Accumulator {
    /// For up to `capacity` requests.
    fn new(name: &str, deadline_s: f64, capacity: usize) -> Accumulator {
        Accumulator {
            sojourn: Vec::with_capacity(capacity),
            wait: Vec::with_capacity(capacity),
            ttft: Vec::with_capacity(capacity),
            tpot: Vec::with_capacity(capacity),
            stats: ClassStats {
                name: name.to_string(),
                deadline_s,
                arrived: 0,
                met: 0,
                late: 0,
                rejected: 0,
                timed_out: 0,
                unfinished: 0,
                p_miss: f64::NAN,
                p_miss_ci95: [f64::NAN; 2],
                goodput_per_h: 0.0,
                sojourn: Quantiles::default(),
                queue_wait: Quantiles::default(),
                ttft: Quantiles::default(),
                tpot: Quantiles::default(),
                cdf: Vec::new(),
                prefill_tokens: 0,
                decode_tokens: 0,
                preemptions: 0,
                busy_s: 0.0,
                busy_s_missed: 0.0,
                busy_s_recomputed: 0.0,
            },
        }
    }

    /// Counts record `r` (of a class with deadline `deadline_s`) and adds
    /// its times to the samples.
    fn add(&mut self, r: &RequestRecord, deadline_s: f64) {
        let s = &mut self.stats;
        s.arrived += 1;
        let met = met_deadline(r, deadline_s);
        match r.status {
            Status::Completed if met => s.met += 1,
            Status::Completed => s.late += 1,
            Status::RejectedQueueFull | Status::RejectedTooLong => s.rejected += 1,
            Status::TimedOut => s.timed_out += 1,
            Status::Unfinished | Status::Pending => s.unfinished += 1,
        }
        if r.status == Status::Completed {
            self.sojourn.push(r.sojourn_s());
            if r.output_tokens > 1 {
                self.tpot
                    .push((r.end_s - r.first_token_s) / (r.output_tokens - 1) as f64);
            }
            s.decode_tokens += r.output_tokens as u64 - 1;
        }
        if !r.admitted_s.is_nan() {
            self.wait.push(r.admitted_s - r.arrival_s);
            s.prefill_tokens += (r.input_tokens - r.cached_tokens) as u64 + r.recomputed_tokens;
        }
        if !r.first_token_s.is_nan() {
            self.ttft.push(r.first_token_s - r.arrival_s);
        }
        s.preemptions += r.preemptions as u64;
        s.busy_s += r.busy_s;
        if !met {
            s.busy_s_missed += r.busy_s;
        }
        let computed = (r.input_tokens - r.cached_tokens) as u64
            + r.output_tokens as u64
            + r.recomputed_tokens;
        if r.recomputed_tokens > 0 && computed > 0 {
            s.busy_s_recomputed += r.busy_s * r.recomputed_tokens as f64 / computed as f64;
        }
    }

    /// The overall row's counts and sums: the classes' added (what `add`
    /// would give for every record, up to the order of the floating-point
    /// sums).
    fn totals(parts: &[Accumulator], deadline_s: f64) -> ClassStats {
        let mut s = Accumulator::new("all", deadline_s, 0).stats;
        for part in parts.iter() {
            let p = &part.stats;
            macro_rules! add {
                ($($field:ident),*) => { $(s.$field += p.$field;)* };
            }
            add!(arrived, met, late, rejected, timed_out, unfinished);
            add!(prefill_tokens, decode_tokens, preemptions);
            add!(busy_s, busy_s_missed, busy_s_recomputed);
        }
        s
    }
}

/// The class rows and the overall row (deadline `deadline_s`), complete:
/// counts and sums, rates over `window_s`, and percentiles and CDF points
/// of each class and of all classes together, which share their passes
/// over the samples (see [`each_and_whole`]).
fn finish_rows(
    parts: &[Accumulator],
    deadline_s: f64,
    window_s: f64,
) -> (Vec<ClassStats>, ClassStats) {
    let mut overall = Accumulator::totals(parts, deadline_s);
    let mut classes: Vec<ClassStats> = parts.iter().map(|a| a.stats.clone()).collect();
    let sample = |of: fn(&Accumulator) -> &Vec<f64>| -> Vec<&[f64]> {
        parts.iter().map(|a| &of(a)[..]).collect()
    };
    // Requests without a value (never completed, admitted, ...) count as
    // infinite: percentiles are over every arrival, except for tpot.
    let arrived: Vec<u64> = classes.iter().map(|c| c.arrived).collect();
    let tpot = sample(|a| &a.tpot);
    let tpot_counts: Vec<u64> = tpot.iter().map(|p| p.len() as u64).collect();
    let total = overall.arrived;
    let mut rows: Vec<&mut ClassStats> = classes.iter_mut().chain([&mut overall]).collect();
    for s in rows.iter_mut() {
        add_rates(s, window_s);
    }
    let sojourn = each_and_whole(&sample(|a| &a.sojourn), &arrived, total, CDF_POINTS);
    put_rows(&mut rows, sojourn, |s, r| {
        (s.sojourn, s.cdf) = (r.quantiles, r.cdf)
    });
    let wait = each_and_whole(&sample(|a| &a.wait), &arrived, total, 0);
    put_rows(&mut rows, wait, |s, r| s.queue_wait = r.quantiles);
    let ttft = each_and_whole(&sample(|a| &a.ttft), &arrived, total, 0);
    put_rows(&mut rows, ttft, |s, r| s.ttft = r.quantiles);
    let tpot = each_and_whole(&tpot, &tpot_counts, tpot_counts.iter().sum(), 0);
    put_rows(&mut rows, tpot, |s, r| s.tpot = r.quantiles);
    (classes, overall)
}

/// Puts the statistics of each class and of all (`each`, then `all`)
/// into the class rows and the overall row (`rows`, in the same order).
fn put_rows(
    rows: &mut [&mut ClassStats],
    (each, all): (Vec<RowStats>, RowStats),
    put: fn(&mut ClassStats, RowStats),
) {
    for (s, row) in rows.iter_mut().zip(each.into_iter().chain([all])) {
        put(s, row);
    }
}

/// Sets the miss probability, its interval and the goodput of `s` (its
/// counts complete) over a window of `window_s`.
fn add_rates(s: &mut ClassStats, window_s: f64) {
    let n = s.arrived;
    let misses = n - s.met;
    s.p_miss = if n > 0 {
        misses as f64 / n as f64
    } else {
        f64::NAN
    };
    let (lo, hi) = wilson_interval(misses, n, 1.96);
    s.p_miss_ci95 = [lo, hi];
    // (No successes is no goodput, even over a window too short to divide by.)
    s.goodput_per_h = if s.met == 0 {
        0.0
    } else {
        s.met as f64 * 3600.0 / window_s
    };
}

/// What one pass over every record (warm-up included) counts besides the
/// series flows it adds up.
struct Census {
    /// Records per class, to size the samples.
    per_class: Vec<usize>,
    /// Records rejected as longer than the KV cache or the model allows.
    too_long: u64,
    /// Records preempted at least once.
    preempted: u64,
}

impl Census {
    /// Counts `records` (of `classes` classes) and adds their arrivals and
    /// completions to the `series` point of each one's interval (of
    /// `interval_s`), in one pass.
    fn take(
        records: &[RequestRecord],
        classes: usize,
        series: &mut [SeriesPoint],
        interval_s: f64,
    ) -> Census {
        let mut census = Census {
            per_class: vec![0; classes],
            too_long: 0,
            preempted: 0,
        };
        let (mut arrival, mut completion) =
            (SeriesIndex::new(interval_s), SeriesIndex::new(interval_s));
        for r in records {
            census.per_class[r.class as usize] += 1;
            census.too_long += (r.status == Status::RejectedTooLong) as u64;
            census.preempted += (r.preemptions > 0) as u64;
            if let Some(p) = series.get_mut(arrival.of(r.arrival_s)) {
                p.arrivals += 1;
            }
            if r.status == Status::Completed
                && let Some(p) = series.get_mut(completion.of(r.end_s))
            {
                p.completions += 1;
            }
        }
        census
    }
}

/// The index of the series interval (of `interval_s`) that ends at or after
/// a time, `ceil(t / interval_s) - 1` (0 up to the first interval's end),
/// remembering the last answer: successive arrivals, and mostly successive
/// completions, share an interval, and checking that costs less than the
/// conversions.
struct SeriesIndex {
    interval_s: f64,
    last: usize,
    /// `last` is the answer for quotients in (`above`, `up_to`].
    above: f64,
    up_to: f64,
}

impl SeriesIndex {
    /// Nothing remembered yet.
    fn new(interval_s: f64) -> SeriesIndex {
        SeriesIndex {
            interval_s,
            last: 0,
            above: f64::NAN,
            up_to: f64::NAN,
        }
    }

    /// The interval of time `t`.
    fn of(&mut self, t: f64) -> usize {
        let q = t / self.interval_s;
        if self.above < q && q <= self.up_to {
            return self.last;
        }
        let index = (crate::model::dist::ceil_u64(q) as usize).max(1) - 1;
        // For i > 0, i = ceil(q) - 1 exactly when i < q <= i + 1; every
        // q <= 1 gives 0. Only exact conversions are remembered.
        (self.above, self.up_to) = match index as u64 {
            0 => (f64::NEG_INFINITY, 1.0),
            i if i < 1 << 52 => (i as f64, (i + 1) as f64),
            _ => (f64::NAN, f64::NAN),
        };
        self.last = index;
        index
    }
}

/// Runs a scenario to the end and builds its report.
pub fn simulate(scenario: &Scenario, options: &RunOptions) -> Result<Report, RunError> {
    Ok(Report::build(Simulation::new(scenario, options)?.finish()?))
}

impl Report {
    /// The report of a finished run.
    pub fn build(run_output: RunOutput<'_>) -> Report {
        let RunOutput {
            scenario,
            records,
            mut series,
            busy_s: busy_per_replica,
            active_until_s,
            events,
            steps,
            end_s,
            keep_records,
        } = run_output;
        let run = &scenario.params().run;
        let window_s = run.horizon_s - run.warmup_s;
        let deadlines: Vec<f64> = scenario.classes().iter().map(|c| c.deadline_s).collect();
        let same_deadline = deadlines.windows(2).all(|w| w[0] == w[1]);
        // Flows per series interval count every request, warm-up included.
        let census = Census::take(
            &records,
            deadlines.len(),
            &mut series,
            run.series_interval_s,
        );
        let mut per_class: Vec<Accumulator> = scenario
            .params()
            .classes
            .iter()
            .zip(&census.per_class)
            .map(|(c, &count)| Accumulator::new(&c.name, c.deadline_s, count))
            .collect();
        for r in records.iter().filter(|r| r.arrival_s >= run.warmup_s) {
            per_class[r.class as usize].add(r, deadlines[r.class as usize]);
        }
        let overall_deadline = if same_deadline {
            deadlines[0]
        } else {
            f64::NAN
        };
        let (classes, overall) = finish_rows(&per_class, overall_deadline, window_s);
        drop(per_class);
        let n = scenario.params().cluster.replicas;
        let busy: f64 = busy_per_replica.iter().sum();
        let load = load_estimate(scenario);
        // Over the horizon, or until the last step when the fleet worked on
        // past it (not over the whole drain, which is mostly idle).
        let utilization = busy / (n as f64 * active_until_s.min(end_s).max(run.horizon_s));
        let warnings = warnings(
            &overall,
            &classes,
            &load,
            utilization,
            &census,
            records.len(),
        );
        Report {
            scenario_name: scenario.params().name.clone(),
            seed: run.seed,
            horizon_s: run.horizon_s,
            warmup_s: run.warmup_s,
            end_s,
            replicas: n,
            busy_s: busy,
            utilization,
            prefill_tokens_per_s: overall.prefill_tokens as f64 / window_s,
            decode_tokens_per_s: overall.decode_tokens as f64 / window_s,
            overall,
            classes,
            series,
            load,
            warnings,
            engine: EngineStats {
                requests: records.len() as u64,
                steps,
                events,
            },
            records: if keep_records { records } else { Vec::new() },
        }
    }

    /// A hash of every per-request time and outcome (FNV-1a over their bits):
    /// equal digests mean identical runs, natively or in wasm.
    pub fn digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            for byte in x.to_le_bytes() {
                h ^= byte as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for r in &self.records {
            eat(r.class as u64);
            eat(r.replica as u64);
            eat(r.input_tokens as u64);
            eat(r.output_tokens as u64);
            eat(r.preemptions as u64);
            eat(r.arrival_s.to_bits());
            eat(r.admitted_s.to_bits());
            eat(r.first_token_s.to_bits());
            eat(r.end_s.to_bits());
            eat(r.busy_s.to_bits());
            eat(r.status as u64);
        }
        h
    }
}

/// What a reader should know before trusting the figures: saturation,
/// unfinished, rejected and preempted requests, silent classes (`census`
/// counts the `records` records).
fn warnings(
    overall: &ClassStats,
    classes: &[ClassStats],
    load: &LoadEstimate,
    utilization: f64,
    census: &Census,
    records: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let pct = |k: u64, n: u64| 100.0 * k as f64 / n.max(1) as f64;
    if load.rho < 0.85 && utilization >= 0.9 {
        // The estimate assumes full batches; KV pressure, preemption and
        // small batches make a real fleet busier than rho says.
        out.push(format!(
            "Near saturation: the fleet was busy {:.0}% of the time although the load estimate says rho = {:.2}; \
             preemptions, partial batches or bursts use more capacity than the estimate assumes.",
            100.0 * utilization,
            load.rho
        ));
    }
    if load.rho >= 1.0 {
        out.push(format!(
            "Overloaded: the offered load is {:.0}% of the estimated capacity (rho = {:.2}); queues grow until requests miss, time out or are cut off at the end.",
            100.0 * load.rho,
            load.rho
        ));
    } else if load.rho >= 0.85 {
        out.push(format!(
            "Near saturation (rho = {:.2}): small errors in the step-time model or the workload become large errors in waiting time.",
            load.rho
        ));
    }
    if overall.unfinished > 0 {
        out.push(format!(
            "{} requests ({:.1}%) were still queued or running when the run ended; they count as misses.",
            overall.unfinished,
            pct(overall.unfinished, overall.arrived)
        ));
    }
    let too_long = census.too_long;
    if too_long > 0 {
        out.push(format!(
            "{too_long} requests were longer (prompt + output) than the KV cache or max_model_len allows and were rejected."
        ));
    }
    let preempted = census.preempted;
    if preempted > 0 && pct(preempted, records as u64) >= 1.0 {
        out.push(format!(
            "{:.1}% of requests were preempted at least once: the KV cache, not max_num_seqs, limits concurrency.",
            pct(preempted, records as u64)
        ));
    }
    for c in classes.iter().filter(|c| c.arrived == 0) {
        out.push(format!(
            "Class \"{}\" had no arrivals in the measured window.",
            c.name
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dist::unit;

    /// Up to `points` points of the CDF of the values of `parts` (fractions
    /// of `total` requests), as a report row computes them.
    fn cdf_points(parts: &[&[f64]], total: u64, points: usize) -> Vec<[f64; 2]> {
        whole_row(parts, total, points).cdf
    }

    /// The reference CDF: the report's computation before bucket counting,
    /// with a min and a max pass and a binary search per value.
    fn cdf_by_search(values: &[f64], total: u64, points: usize) -> Vec<[f64; 2]> {
        if values.is_empty() || points == 0 {
            return Vec::new();
        }
        let lo = values
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
            .max(1e-6);
        let hi = values
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
            .max(lo);
        let (llo, lhi) = (libm::log(lo), libm::log(hi));
        let xs: Vec<f64> = (0..points)
            .map(|i| {
                if i + 1 == points {
                    hi
                } else {
                    libm::exp(llo + (lhi - llo) * i as f64 / (points - 1).max(1) as f64)
                }
            })
            .collect();
        let mut counts = vec![0u64; points];
        for &v in values {
            counts[xs.partition_point(|x| *x < v).min(points - 1)] += 1;
        }
        let mut below = 0;
        xs.iter()
            .zip(counts)
            .map(|(x, c)| {
                below += c;
                [*x, below as f64 / total as f64]
            })
            .collect()
    }

    /// The reference quantiles of `values` and `missing` infinite ones: a
    /// sorted copy, a sequential sum and a max pass.
    fn quantiles_by_sorting(values: &[f64], missing: u64) -> Quantiles {
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
    fn assert_same<T: std::fmt::Debug>(a: &T, b: &T, what: &str) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}");
    }

    /// Asserts that `a` equals `b` except for a mean within a relative
    /// 1e-12: a mean over parts adds the parts' sums, whose rounding errors
    /// differ from those of one sequential sum (a random walk of about
    /// sqrt(n) units in the last place, so more than a few over 10^5 values).
    #[track_caller]
    fn assert_same_but_mean(a: &Quantiles, b: &Quantiles, what: &str) {
        let close =
            (a.mean - b.mean).abs() <= 1e-12 * b.mean.abs() || a.mean.is_nan() && b.mean.is_nan();
        assert!(close, "{what}: mean {} vs {}", a.mean, b.mean);
        let (mut a, b) = (a.clone(), b.clone());
        a.mean = b.mean;
        assert_same(&a, &b, what);
    }

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
    fn bucket_selection_gives_the_ranks_of_a_sort() {
        // Large enough for the bucket path, with negative values, zeros,
        // ties, subnormals and values spanning many octaves.
        let mut rng = crate::rng::stream(3, 3);
        let mut values: Vec<f64> = (0..300_000)
            .map(|i| {
                let u = crate::model::dist::unit(&mut rng);
                match i % 5 {
                    0 => -u * 1e3,
                    1 => 0.0,
                    2 => (u * 50.0).floor(),
                    3 => u * 1e-310,
                    _ => libm::exp(u * 40.0 - 10.0),
                }
            })
            .collect();
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let ranks = [0, 1, 59_999, 60_000, 150_000, 270_000, 299_700, 299_999];
        let got = select_ranks(&mut values, &ranks);
        let want: Vec<f64> = ranks.iter().map(|&r| sorted[r]).collect();
        assert_eq!(got, want);
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
    fn plans_search_every_value_when_the_points_do_not_ascend() {
        // Points in any order, several to a bucket: the counts are still
        // those of a binary search per value, however it lands.
        let mut rng = crate::rng::stream(9, 9);
        let values: Vec<f64> = (0..BUCKETS * 2)
            .map(|_| 1.9 + unit(&mut rng) * 0.5)
            .collect();
        let summary = Summary::of(&[&values], true);
        for round in 0..50 {
            let xs: Vec<f64> = (0..2 + round % 9)
                .map(|_| 1.95 + unit(&mut rng) * 0.4)
                .collect();
            let mut plan = Plan::new(&summary, &[7, 70_000], xs.clone());
            gather(&values, Some(&mut plan), None);
            let (_, _, counts) = plan.finish();
            assert_eq!(counts, cdf_counts_by_search(&[&values], &xs), "{xs:?}");
        }
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

    #[test]
    fn the_report_rows_are_those_of_every_record() {
        // The default scenario: two classes, over 65,536 requests in all,
        // some arriving in the warm-up.
        let mut params = crate::params::ScenarioParams::overnight_batch();
        params.run.warmup_s = 3600.0;
        let scenario = Scenario::try_from(params).expect("valid scenario");
        let report =
            crate::report::simulate(&scenario, &crate::sim::RunOptions::default()).expect("runs");
        let kept: Vec<&RequestRecord> = report
            .records
            .iter()
            .filter(|r| r.arrival_s >= report.warmup_s)
            .collect();
        assert!(kept.len() >= BUCKETS && kept.len() < report.records.len());
        let of = |class: Option<u16>| -> Vec<&RequestRecord> {
            let mine = |r: &&&RequestRecord| class.is_none_or(|c| r.class == c);
            kept.iter().filter(mine).copied().collect()
        };
        let rows = (0..report.classes.len())
            .map(|c| (Some(c as u16), &report.classes[c]))
            .chain([(None, &report.overall)]);
        for (class, row) in rows {
            let records = of(class);
            let n = records.len() as u64;
            let times = |f: fn(&RequestRecord) -> Option<f64>| -> Vec<f64> {
                records.iter().filter_map(|r| f(r)).collect()
            };
            let sojourn = times(|r| (r.status == Status::Completed).then(|| r.sojourn_s()));
            let wait = times(|r| (!r.admitted_s.is_nan()).then_some(r.admitted_s - r.arrival_s));
            let ttft =
                times(|r| (!r.first_token_s.is_nan()).then_some(r.first_token_s - r.arrival_s));
            let tpot = times(|r| {
                (r.status == Status::Completed && r.output_tokens > 1)
                    .then(|| (r.end_s - r.first_token_s) / (r.output_tokens - 1) as f64)
            });
            let missing = |v: &Vec<f64>| n - v.len() as u64;
            let want = [
                quantiles_by_sorting(&sojourn, missing(&sojourn)),
                quantiles_by_sorting(&wait, missing(&wait)),
                quantiles_by_sorting(&ttft, missing(&ttft)),
                quantiles_by_sorting(&tpot, 0),
            ];
            let got = [&row.sojourn, &row.queue_wait, &row.ttft, &row.tpot];
            for (got, want) in got.into_iter().zip(&want) {
                match class {
                    Some(_) => assert_same(got, want, &row.name),
                    None => assert_same_but_mean(got, want, &row.name),
                }
            }
            assert_same(&row.cdf, &cdf_by_search(&sojourn, n, CDF_POINTS), &row.name);
            assert_eq!(row.arrived, n);
        }
        // Flows per series interval, over every record.
        let interval = scenario.params().run.series_interval_s;
        let index = |t: f64| (crate::model::dist::ceil_u64(t / interval) as usize).max(1) - 1;
        for (i, p) in report.series.iter().enumerate() {
            let arrivals = report.records.iter().filter(|r| index(r.arrival_s) == i);
            let completions = report
                .records
                .iter()
                .filter(|r| r.status == Status::Completed && index(r.end_s) == i);
            assert_eq!(
                (p.arrivals, p.completions),
                (arrivals.count() as u64, completions.count() as u64),
                "interval {i}"
            );
        }
    }

    #[test]
    fn series_index_is_the_interval_formula_in_any_order() {
        let interval = 300.0;
        let formula = |t: f64| (crate::model::dist::ceil_u64(t / interval) as usize).max(1) - 1;
        let mut rng = crate::rng::stream(7, 7);
        let mut times: Vec<f64> = (0..20_000).map(|i| i as f64 * 3.7).collect();
        times.extend((0..20_000).map(|_| unit(&mut rng) * 1e5));
        times.extend((0..2_000).map(|i| (i % 40) as f64 * interval));
        times.extend((0..2_000).map(|i| ((i % 40) as f64 * interval).next_up()));
        times.extend([
            -1.0,
            -0.0,
            0.0,
            1e-300,
            interval,
            f64::NAN,
            0.5,
            f64::INFINITY,
            5.0,
            f64::NEG_INFINITY,
            1e300,
            1e18,
            1e18 + 4096.0,
            299.0,
            301.0,
        ]);
        let mut index = SeriesIndex::new(interval);
        for &t in &times {
            assert_eq!(index.of(t), formula(t), "t = {t}");
        }
    }
}

//! The gather pass: what a row needs from each bucket of its sample (a
//! [`Plan`]), the pass that hands those values over, and [`select_ranks`].
//!
//! A plan is made from a [`Summary`]'s bucket counts. Buckets that lie
//! within one CDF interval and hold no wanted rank are counted from their
//! count alone and never read again; the others are read once, each value
//! compared with one CDF point, searched among a few, or added to the list
//! in which its rank is selected.

use std::ops::Range;

use super::buckets::{BUCKETS, Summary, from_key, slot, slot_of_bucket, to_keys};
use super::cdf::interval_of;

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
/// What the gather pass does for a row with bucket counts: which buckets'
/// values it reads, and what for.
pub struct Plan {
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
    /// Values per CDF interval, as
    /// [`cdf_counts_by_search`](super::cdf::cdf_counts_by_search) counts them.
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
    pub fn new(summary: &Summary, ranks: &[usize], xs: Vec<f64>) -> Plan {
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
    pub fn finish(self) -> (Vec<f64>, Vec<f64>, Vec<u64>) {
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
pub fn gather(values: &[f64], own: Option<&mut Plan>, whole: Option<&mut Plan>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dist::unit;
    use crate::report::cdf::cdf_counts_by_search;

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
}

//! The decode steps at which decoders finish: a calendar of step buckets.
//!
//! The fast engine asks two things of it at every event: the earliest step
//! any decoder finishes at (which bounds a run of identical steps), and,
//! once the replica's step counter G has passed it, the slots finishing
//! there. A binary heap answers in O(log n) with a sift per completion; this
//! calendar answers both in O(1).
//!
//! Decoders due within the next `RING - 1` steps sit in a ring of buckets
//! indexed by step modulo `RING`, each bucket a list of slots linked through
//! `next`, with a two-level bitmap of the non-empty buckets. Decoders due
//! later (long outputs) wait in an ordered overflow set; they are rare and
//! need not move into the ring, since the earliest step is the smaller of
//! the two parts' earliest.
//!
//! Why the ring never holds two steps in one bucket: the engine never lets G
//! pass the earliest due step `m` by more than one step before taking the
//! slots due there (a run of decode steps stops at `m + 1`), so every push
//! happens at G <= m + 1 and every ring entry has a step in
//! `\[m, G + RING - 2\] ⊆ \[m, m + RING - 1\]`: `RING` consecutive steps, one per
//! bucket.

use std::collections::BTreeSet;

/// Buckets in the ring (a power of two; 64 bitmap words of 64 bits).
const RING: u64 = 4096;
const MASK: u64 = RING - 1;
const WORDS: usize = (RING / 64) as usize;
/// Ends a bucket's list.
const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct DueQueue {
    /// First slot of each bucket's list.
    heads: Vec<u32>,
    /// The next slot in the same bucket, by slot.
    next: Vec<u32>,
    /// Non-empty buckets, one bit each ...
    words: [u64; WORDS],
    /// ... and the non-empty words.
    summary: u64,
    /// Earliest step in the ring (`u64::MAX` when it is empty).
    ring_min: u64,
    /// (step, slot) of decoders due too far ahead for the ring.
    overflow: BTreeSet<(u64, u32)>,
    /// Earliest step of all (`u64::MAX` when empty).
    min: u64,
}

impl DueQueue {
    pub fn new() -> DueQueue {
        DueQueue {
            heads: vec![NONE; RING as usize],
            next: Vec::new(),
            words: [0; WORDS],
            summary: 0,
            ring_min: u64::MAX,
            overflow: BTreeSet::new(),
            min: u64::MAX,
        }
    }

    /// The earliest step any decoder finishes at (`u64::MAX` when none does).
    #[inline]
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Adds `slot`, which finishes at decode step `step` (>= `g`, the
    /// replica's step counter now).
    pub fn push(&mut self, step: u64, g: u64, slot: u32) {
        debug_assert!(step >= g);
        if step - g >= RING - 1 {
            self.overflow.insert((step, slot));
        } else {
            let s = slot as usize;
            if s >= self.next.len() {
                self.next.resize(s + 1, NONE);
            }
            let b = (step & MASK) as usize;
            self.next[s] = self.heads[b];
            self.heads[b] = slot;
            self.words[b >> 6] |= 1 << (b & 63);
            self.summary |= 1 << (b >> 6);
            self.ring_min = self.ring_min.min(step);
        }
        self.min = self.min.min(step);
    }

    /// Removes `slot`, which was pushed with `step` (a decoder leaving
    /// before its last token: preempted, timed out, or cut off at the end).
    pub fn remove(&mut self, step: u64, slot: u32) {
        let b = (step & MASK) as usize;
        let mut at = self.heads[b];
        let mut before = NONE;
        while at != NONE && at != slot {
            (before, at) = (at, self.next[at as usize]);
        }
        if at == NONE {
            self.overflow.remove(&(step, slot));
        } else {
            let after = self.next[at as usize];
            if before == NONE {
                self.heads[b] = after;
            } else {
                self.next[before as usize] = after;
            }
            if self.heads[b] == NONE {
                self.clear_bucket(b);
                if step == self.ring_min {
                    self.ring_min = self.ring_min_from(step + 1);
                }
            }
        }
        self.min = self.ring_min.min(self.overflow_min());
    }

    /// Takes every slot due at the earliest step into `out` (in no
    /// particular order) and returns that step; `None` when empty.
    pub fn pop_earliest(&mut self, out: &mut Vec<u32>) -> Option<u64> {
        let step = self.min;
        if step == u64::MAX {
            return None;
        }
        if step == self.ring_min {
            let b = (step & MASK) as usize;
            let mut at = std::mem::replace(&mut self.heads[b], NONE);
            while at != NONE {
                out.push(at);
                at = self.next[at as usize];
            }
            self.clear_bucket(b);
            self.ring_min = self.ring_min_from(step + 1);
        }
        while let Some(&(s, slot)) = self.overflow.first()
            && s == step
        {
            self.overflow.pop_first();
            out.push(slot);
        }
        self.min = self.ring_min.min(self.overflow_min());
        Some(step)
    }

    fn overflow_min(&self) -> u64 {
        self.overflow.first().map_or(u64::MAX, |&(s, _)| s)
    }

    fn clear_bucket(&mut self, b: usize) {
        let w = b >> 6;
        self.words[w] &= !(1 << (b & 63));
        if self.words[w] == 0 {
            self.summary &= !(1 << w);
        }
    }

    /// The earliest ring step at or after `from`, where every ring step lies
    /// in `[from, from + RING)` (see the module note): the first non-empty
    /// bucket circularly from `from`'s.
    fn ring_min_from(&self, from: u64) -> u64 {
        if self.summary == 0 {
            return u64::MAX;
        }
        let p = (from & MASK) as usize;
        let w = p >> 6;
        let here = self.words[w] & (u64::MAX << (p & 63));
        let b = if here != 0 {
            (w << 6) | here.trailing_zeros() as usize
        } else {
            // Later words first, then wrap around to the earliest.
            let later = self.summary & u64::MAX.checked_shl(w as u32 + 1).unwrap_or(0);
            let w2 = if later != 0 { later } else { self.summary }.trailing_zeros() as usize;
            (w2 << 6) | self.words[w2].trailing_zeros() as usize
        };
        from + ((b as u64).wrapping_sub(p as u64) & MASK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use rand::RngExt;

    /// Random pushes, removals and pops against an ordered set, keeping to
    /// the engine's discipline (steps pushed at or after G, G never more than
    /// one past the earliest step before it is popped), with steps up to
    /// three rings ahead and at the ring's edges, so that the overflow, the
    /// wrap-around and the one-bucket-per-step bound are all exercised.
    #[test]
    fn the_calendar_pops_what_an_ordered_set_pops() {
        let mut rng = stream(11, 0);
        let mut q = DueQueue::new();
        let mut model: BTreeSet<(u64, u32)> = BTreeSet::new();
        let mut free: Vec<u32> = (0..300).rev().collect();
        let mut g = 0u64;
        let mut out = Vec::new();
        for round in 0..200_000 {
            assert_eq!(
                q.min(),
                model.first().map_or(u64::MAX, |e| e.0),
                "round {round}"
            );
            match rng.random_range(0..10) {
                0..4 if !free.is_empty() => {
                    let slot = free.pop().unwrap();
                    // Mostly near, sometimes at the ring's edges, sometimes far.
                    let edges = [0, 1, RING - 3, RING - 2, RING - 1, RING, RING + 1];
                    let ahead = match rng.random_range(0..20) {
                        0 => rng.random_range(0..3 * RING),
                        1..4 => edges[rng.random_range(0..edges.len())],
                        _ => rng.random_range(0..200),
                    };
                    q.push(g + ahead, g, slot);
                    model.insert((g + ahead, slot));
                }
                4 if !model.is_empty() => {
                    let i = rng.random_range(0..model.len());
                    let e = *model.iter().nth(i).unwrap();
                    q.remove(e.0, e.1);
                    model.remove(&e);
                    free.push(e.1);
                }
                _ => {
                    // Advance G up to one past the earliest step, then pop
                    // what is due.
                    g = (g + rng.random_range(1..50)).min(q.min().saturating_add(1));
                    // A step may start decoders before the due ones are taken.
                    if rng.random_range(0..2) == 0
                        && let Some(slot) = free.pop()
                    {
                        let ahead = [0, RING - 2, RING - 1][rng.random_range(0..3)];
                        q.push(g + ahead, g, slot);
                        model.insert((g + ahead, slot));
                    }
                    while q.min() < g {
                        out.clear();
                        let step = q.pop_earliest(&mut out).unwrap();
                        let mut want: Vec<u32> =
                            model.iter().filter(|e| e.0 == step).map(|e| e.1).collect();
                        out.sort_unstable();
                        want.sort_unstable();
                        assert_eq!(out, want, "round {round}, step {step}");
                        for &slot in &out {
                            model.remove(&(step, slot));
                            free.push(slot);
                        }
                    }
                }
            }
        }
        assert!(q.pop_earliest(&mut out).is_some() || model.is_empty());
    }
}

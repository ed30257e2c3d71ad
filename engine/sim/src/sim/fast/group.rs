//! The decode group: the fast engine's decoding requests, in slots and in
//! aggregate.
//!
//! Every decoder computes one token per decode step, so with G the group's
//! decode-step counter a decoder's context is `computed = offset + G` for a
//! fixed offset. Besides the decoders themselves (in slots: no allocation or
//! shifting when one joins or leaves), the group keeps
//! - the sum of the offsets (the total decode context in O(1));
//! - a histogram of the offsets modulo the block size, with each residue's
//!   slots: the decoders at a block boundary, which need a new KV block, at
//!   any step;
//! - a calendar of the steps at which decoders produce their last token
//!   ([`DueQueue`]);
//! - the decoders in admission order (the most recently admitted one, the
//!   victim under the non-priority disciplines, in O(1)).
//!
//! A decoder's explicit state (`computed`, `generated`, `blocks`, `busy_s`)
//! is as of when it joined; it is brought up to date when it leaves.

use std::collections::BinaryHeap;

use crate::sim::due::DueQueue;
use crate::sim::rules::BlockSize;
use crate::sim::state::{Active, ReqId};
use crate::sim::{Ctx, Status};

/// A decoding request in its slot, with the keys the hot paths read.
#[derive(Debug)]
pub(super) struct Decoder {
    pub admit_seq: u64,
    /// The decode step that produces its last token.
    last_step: u64,
    /// Context minus the decode-step counter: constant while it decodes.
    offset: i64,
    /// Where its slot is in `by_residue` (of its offset's residue).
    residue_at: u32,
    /// Its state as of `active.g_sync`.
    pub active: Active,
}

/// The decoding requests of one replica.
#[derive(Debug)]
pub(super) struct DecodeGroup {
    /// Decode steps executed so far (G).
    g: u64,
    bs: BlockSize,
    /// The decoders in slots (no order; `admit_seq` gives admission order).
    slots: Vec<Option<Decoder>>,
    /// Empty slots.
    free_slots: Vec<usize>,
    /// Occupied slots.
    len: usize,
    /// Sum over decoders of (computed - G).
    offset_sum: i64,
    /// Decoders by (computed - G) mod block size: how many ...
    offset_hist: Vec<u32>,
    /// ... and which slots (the decoders at a block boundary at a given step).
    by_residue: Vec<Vec<usize>>,
    /// (admit_seq, slot) of the decoders in ascending order: the last is the
    /// most recently admitted. Requests mostly start decoding in admission
    /// order, so entries are mostly pushed at the end. Stale entries are
    /// dropped lazily: from the end when looked up, and all at once when they
    /// outnumber the decoders.
    latest: Vec<(u64, usize)>,
    /// The slot of every decoder by the decode step producing its last token.
    due: DueQueue,
    /// Scratch list of the slots due at one step.
    due_slots: Vec<u32>,
    /// Busy time each decoder has been attributed since the start \[s\].
    busy_per_decoder: f64,
    /// Under the priority discipline, the decoders by the order they are
    /// preempted in ([`crate::sim::rules::preempted_before`]: worst priority,
    /// then latest arrival, then id), the first to go on top: (priority,
    /// arrival bits, id, slot). Arrival times are not negative, so their bits
    /// order as they do. Stale entries (a slot since vacated or reused) are
    /// dropped lazily, from the top when looked up and all at once when they
    /// outnumber the decoders. `None` under other disciplines, whose victim
    /// is the latest admitted.
    by_priority: Option<BinaryHeap<(i32, u64, ReqId, usize)>>,
}

impl DecodeGroup {
    pub fn new(bs: BlockSize, by_priority: bool) -> DecodeGroup {
        DecodeGroup {
            g: 0,
            bs,
            slots: Vec::new(),
            free_slots: Vec::new(),
            len: 0,
            offset_sum: 0,
            offset_hist: vec![0; bs.size() as usize],
            by_residue: vec![Vec::new(); bs.size() as usize],
            latest: Vec::new(),
            due: DueQueue::new(),
            due_slots: Vec::new(),
            busy_per_decoder: 0.0,
            by_priority: by_priority.then(BinaryHeap::new),
        }
    }

    /// The number of decoders.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The decode steps executed so far (G).
    #[inline]
    pub fn g(&self) -> u64 {
        self.g
    }

    #[expect(
        clippy::expect_used,
        reason = "a slot in the calendar or the residue lists is live by construction (checked by check_invariants in debug builds and by the oracle)"
    )]
    pub fn decoder(&self, slot: usize) -> &Decoder {
        self.slots[slot].as_ref().expect("a live decoder slot")
    }

    /// Whether a decoder is in `slot`.
    pub fn is_live(&self, slot: usize) -> bool {
        self.slots[slot].is_some()
    }

    /// Occupied slots, in no particular order.
    pub fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.slots.len()).filter(|&i| self.slots[i].is_some())
    }

    /// The slot of the decoder of request `id`, if it decodes here.
    pub fn slot_of(&self, id: ReqId) -> Option<usize> {
        self.slots()
            .find(|&slot| self.decoder(slot).active.id == id)
    }

    /// The earliest step at which a decoder produces its last token
    /// (`u64::MAX` when none decodes).
    #[inline]
    pub fn last_due_step(&self) -> u64 {
        self.due.min()
    }

    fn residue(&self, offset: i64) -> usize {
        self.bs.rem_euclid(offset) as usize
    }

    /// The offset residue of the decoders at a block boundary at step `g`.
    fn boundary_residue(&self, g: u64) -> usize {
        self.bs.rem_euclid(-(self.bs.rem(g) as i64)) as usize
    }

    /// Blocks the decoders need in the step at G: one each for those whose
    /// context is a multiple of the block size.
    #[inline]
    pub fn blocks_needed_now(&self) -> u64 {
        self.offset_hist[self.boundary_residue(self.g)] as u64
    }

    /// The slots of the decoders that need a block in the step at G.
    pub fn at_boundary_now(&self) -> &[usize] {
        &self.by_residue[self.boundary_residue(self.g)]
    }

    /// Whether the decoder in `slot` needs a new block in the step at G.
    pub fn needs_block_now(&self, slot: usize) -> bool {
        self.bs
            .rem_euclid(self.decoder(slot).offset + self.g as i64)
            == 0
    }

    /// Blocks needed at steps g, g + 1, ...: the residue walks down the
    /// histogram (no division in the loop).
    fn needs_from(&self, g: u64) -> impl Iterator<Item = u64> + '_ {
        let bs = self.offset_hist.len();
        let mut r = self.boundary_residue(g);
        std::iter::repeat_with(move || {
            let need = self.offset_hist[r] as u64;
            r = if r == 0 { bs - 1 } else { r - 1 };
            need
        })
    }

    /// Total blocks the decoders need over the next `k` steps: a whole
    /// block each per block-size steps, plus the histogram over the
    /// `k mod block size` residues the remaining steps walk down from the
    /// boundary residue (a circular range, summed as at most two slices).
    pub fn blocks_needed_over(&self, k: u64) -> u64 {
        let full = self.bs.div(k) * self.len as u64;
        let m = self.bs.rem(k) as usize;
        let top = self.boundary_residue(self.g);
        let sum = |range: &[u32]| range.iter().map(|&c| c as u64).sum::<u64>();
        let partial = if m <= top + 1 {
            sum(&self.offset_hist[top + 1 - m..=top])
        } else {
            let wrapped = m - (top + 1);
            sum(&self.offset_hist[..=top])
                + sum(&self.offset_hist[self.offset_hist.len() - wrapped..])
        };
        full + partial
    }

    /// The number of upcoming steps, at most `k`, before the first whose
    /// decode allocations would not fit in `free_blocks`.
    pub fn steps_until_blocks_run_out(&self, k: u64, free_blocks: u32) -> u64 {
        let n = self.len as u64;
        let mut free = free_blocks as u64;
        // Over k steps a decoder crosses at most ceil(k / block size)
        // boundaries: when that many blocks each are free, none runs short.
        if (self.bs.div(k) + 1) * n <= free {
            return k;
        }
        // Every block-size steps, each decoder needs exactly one block.
        let cycles = free / n;
        free -= cycles * n;
        let start = cycles * self.bs.size();
        let mut j = start;
        for need in self.needs_from(self.g + start) {
            if need > free || j >= k {
                break;
            }
            free -= need;
            j += 1;
        }
        j.min(k)
    }

    /// Total decode KV tokens of the step at G: sum of (computed + 1).
    #[inline]
    pub fn kv_tokens(&self) -> u64 {
        let n = self.len as i64;
        (self.offset_sum + n * self.g as i64 + n) as u64
    }

    /// Counts `steps` decode steps done, each decoder attributed
    /// `busy_each_s` of busy time over them all.
    #[inline]
    pub fn advance(&mut self, steps: u64, busy_each_s: f64) {
        self.g += steps;
        self.busy_per_decoder += busy_each_s;
    }

    /// Brings a decoder's explicit state up to decode step `g`.
    fn sync_decoder(d: &mut Active, g: u64, bs: BlockSize, busy_per_decoder: f64) {
        let steps = g - d.g_sync;
        d.computed += steps;
        d.generated += steps as u32;
        d.blocks = bs.blocks_for(d.computed);
        d.busy_s += busy_per_decoder - d.busy_sync;
        d.g_sync = g;
        d.busy_sync = busy_per_decoder;
    }

    fn last_step_of(d: &Active) -> u64 {
        d.g_sync + (d.output - d.generated) as u64 - 1
    }

    /// Adds a request that has just finished its prefill (state explicit, as
    /// of now).
    pub fn join(&mut self, mut d: Active) {
        d.g_sync = self.g;
        d.busy_sync = self.busy_per_decoder;
        let offset = d.computed as i64 - d.g_sync as i64;
        let r = self.residue(offset);
        self.offset_hist[r] += 1;
        self.offset_sum += offset;
        let admit_seq = d.admit_seq;
        let preemption_key = (d.priority, d.arrival_s.to_bits(), d.id);
        let last_step = Self::last_step_of(&d);
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        self.due.push(last_step, self.g, slot as u32);
        self.slots[slot] = Some(Decoder {
            admit_seq,
            last_step,
            offset,
            residue_at: self.by_residue[r].len() as u32,
            active: d,
        });
        self.len += 1;
        self.by_residue[r].push(slot);
        if self.latest.len() > 2 * self.len + 32 {
            let slots = &self.slots;
            self.latest
                .retain(|&(seq, slot)| slots[slot].as_ref().is_some_and(|d| d.admit_seq == seq));
        }
        let mut at = self.latest.len();
        while at > 0 && self.latest[at - 1].0 > admit_seq {
            at -= 1;
        }
        self.latest.insert(at, (admit_seq, slot));
        if let Some(heap) = &mut self.by_priority {
            if heap.len() > 2 * self.len + 32 {
                let slots = &self.slots;
                heap.retain(|&(_, _, id, slot)| Self::holds(slots, slot, id));
            }
            let (priority, arrival, id) = preemption_key;
            heap.push((priority, arrival, id, slot));
        }
    }

    /// Whether `slot` holds the decoder of request `id`.
    fn holds(slots: &[Option<Decoder>], slot: usize, id: ReqId) -> bool {
        slots[slot].as_ref().is_some_and(|d| d.active.id == id)
    }

    /// Under the priority discipline, the slot of the decoder preempted
    /// before every other, pruning stale entries; `None` without decoders
    /// or under another discipline.
    pub fn first_preempted(&mut self) -> Option<usize> {
        let heap = self.by_priority.as_mut()?;
        while let Some(&(_, _, id, slot)) = heap.peek() {
            if Self::holds(&self.slots, slot, id) {
                return Some(slot);
            }
            heap.pop();
        }
        None
    }

    /// Removes the decoder in `slot`, brought up to date.
    #[expect(
        clippy::expect_used,
        reason = "a slot in the calendar or the residue lists is live by construction (checked by check_invariants in debug builds and by the oracle)"
    )]
    pub fn leave(&mut self, slot: usize) -> Active {
        let entry = self.slots[slot].take().expect("a live decoder slot");
        self.due.remove(entry.last_step, slot as u32);
        self.unlink(slot, entry.offset, entry.residue_at);
        let mut d = entry.active;
        Self::sync_decoder(&mut d, self.g, self.bs, self.busy_per_decoder);
        d
    }

    /// Removes every decoder, brought up to date, handing each to `f`.
    pub fn leave_all(&mut self, mut f: impl FnMut(Active)) {
        for slot in 0..self.slots.len() {
            if self.is_live(slot) {
                f(self.leave(slot));
            }
        }
    }

    /// Completes the decoder in `slot` where it lies (without copying it
    /// out) at `end_s`; returns the blocks it held.
    #[expect(
        clippy::expect_used,
        reason = "a slot in the calendar or the residue lists is live by construction (checked by check_invariants in debug builds and by the oracle)"
    )]
    fn complete(&mut self, slot: usize, end_s: f64, ctx: &mut Ctx) -> u32 {
        let (g, bs, busy) = (self.g, self.bs, self.busy_per_decoder);
        let entry = self.slots[slot].as_mut().expect("a live decoder slot");
        Self::sync_decoder(&mut entry.active, g, bs, busy);
        ctx.close(&entry.active, Status::Completed, end_s);
        let (offset, at, blocks) = (entry.offset, entry.residue_at, entry.active.blocks);
        self.slots[slot] = None;
        self.unlink(slot, offset, at);
        blocks
    }

    /// Drops the aggregates' record of the decoder that was in `slot`, at
    /// `at` in its residue's list.
    fn unlink(&mut self, slot: usize, offset: i64, at: u32) {
        self.free_slots.push(slot);
        self.len -= 1;
        let r = self.residue(offset);
        self.offset_hist[r] -= 1;
        self.offset_sum -= offset;
        let same = &mut self.by_residue[r];
        debug_assert_eq!(same[at as usize], slot);
        same.swap_remove(at as usize);
        // The slot moved into its place now lives at `at`.
        if let Some(&moved) = same.get(at as usize)
            && let Some(d) = &mut self.slots[moved]
        {
            d.residue_at = at;
        }
    }

    /// Whether a decoder's last token came out of a step before G (so it
    /// is done and must leave: [`Self::complete_finished`]).
    #[inline]
    pub fn any_finished(&self) -> bool {
        self.due.min() < self.g
    }

    /// Completes, at `end_s`, the decoders whose last token came out of a
    /// step before G; returns the blocks they held.
    #[inline(never)]
    pub fn complete_finished(&mut self, end_s: f64, ctx: &mut Ctx) -> u32 {
        let mut freed = 0;
        let mut slots = std::mem::take(&mut self.due_slots);
        while self.due.min() < self.g {
            slots.clear();
            self.due.pop_earliest(&mut slots);
            for &slot in &slots {
                freed += self.complete(slot as usize, end_s, ctx);
            }
        }
        self.due_slots = slots;
        freed
    }

    /// The slot of the most recently admitted decoder, pruning stale entries.
    pub fn latest(&mut self) -> Option<usize> {
        while let Some(&(seq, slot)) = self.latest.last() {
            match &self.slots[slot] {
                Some(d) if d.admit_seq == seq => return Some(slot),
                _ => {
                    self.latest.pop();
                }
            }
        }
        None
    }

    /// Checks the aggregates against the decoders' explicit state (debug
    /// builds, after every event) and returns the blocks the decoders hold.
    #[cfg(any(debug_assertions, test))]
    pub fn check(&self) -> u64 {
        let bs = self.bs.size();
        let mut held = 0;
        let mut hist = vec![0u32; bs as usize];
        let mut sum = 0i64;
        let mut seqs = Vec::new();
        for entry in self.slots.iter().flatten() {
            let d = &entry.active;
            seqs.push(entry.admit_seq);
            let offset = d.computed as i64 - d.g_sync as i64;
            assert_eq!(offset, entry.offset, "inline offset out of date");
            assert_eq!(
                Self::last_step_of(d),
                entry.last_step,
                "inline last step out of date"
            );
            assert_eq!(d.admit_seq, entry.admit_seq);
            hist[self.residue(offset)] += 1;
            sum += offset;
            held += ((offset + self.g as i64) as u64).div_ceil(bs);
            assert!(
                d.computed + (self.g - d.g_sync) < d.input as u64 + d.output as u64,
                "decoder past its end"
            );
        }
        assert_eq!(hist, self.offset_hist, "offset histogram out of date");
        let earliest = self.slots.iter().flatten().map(|d| d.last_step).min();
        assert_eq!(
            self.due.min(),
            earliest.unwrap_or(u64::MAX),
            "due calendar out of date"
        );
        for (r, slots) in self.by_residue.iter().enumerate() {
            assert_eq!(slots.len() as u32, hist[r], "residue lists out of date");
            for (at, &slot) in slots.iter().enumerate() {
                assert_eq!(self.residue(self.decoder(slot).offset), r);
                assert_eq!(self.decoder(slot).residue_at as usize, at, "residue index");
            }
        }
        assert_eq!(sum, self.offset_sum, "offset sum out of date");
        assert_eq!(seqs.len(), self.len, "decoder count out of date");
        assert_eq!(
            self.len + self.free_slots.len(),
            self.slots.len(),
            "free slots out of date"
        );
        seqs.sort_unstable();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "admit_seq repeated");
        held
    }
}

#[cfg(test)]
mod tests;

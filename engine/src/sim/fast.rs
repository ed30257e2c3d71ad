//! The fast engine: exact event skipping.
//!
//! Decoding requests are kept in aggregate: every one of them decodes one
//! token per step, so with G the replica's decode-step counter a decoder's
//! context is `computed = offset + G` for a fixed offset. The replica keeps
//! - the sum of the offsets (total decode context in O(1));
//! - a histogram of offsets modulo the block size (how many decoders cross a
//!   block boundary, and so need a new KV block, at any future step);
//! - a calendar of the steps at which decoders produce their last token
//!   (`DueQueue`).
//!
//! While nothing is prefilling and the head of the waiting queue cannot be
//! admitted, consecutive steps are identical decode-only steps whose
//! durations follow an affine piece of the step-time model. The engine then
//! jumps over k steps at once, where k stops at the first of: a completion, a
//! step whose block allocations would not fit (a preemption), the end of the
//! step-time piece, or the first step starting at or after the next external
//! event (arrival, timeout, sample). The k steps' total duration is an
//! arithmetic series. Steps with prefill chunks or admissions are executed one
//! by one, with the decoders still in aggregate: only the decoders that need
//! a block are visited, and only when the blocks run short (preemption).
//!
//! The property tests in `tests/engine/oracle.rs` check that every request's
//! times equal the reference stepper's.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::due::DueQueue;
use super::state::{Active, ReqId, WaitQueue};
use super::{Ctx, Replica, ReplicaConfig, Status};
use crate::model::dist::ceil_u64;
use crate::model::step_time::{DecodePiece, DecodePieces, StepShape};
use crate::params::Discipline;

/// A decoding request in its slot, with the keys the hot paths read.
#[derive(Debug)]
struct Decoder {
    admit_seq: u64,
    /// The decode step that produces its last token.
    last_step: u64,
    /// Context minus the decode-step counter: constant while it decodes.
    offset: i64,
    /// Where its slot is in `by_residue` (of its offset's residue).
    residue_at: u32,
    active: Active,
}

/// A run of identical decode-only steps: `steps` steps from `kv` decode KV
/// tokens with `n` decoders, each lasting `piece.at(kv + n j)`.
#[derive(Clone, Copy, Debug)]
struct DecodeRun {
    steps: u64,
    /// When the last of them starts \[s\].
    last_start: f64,
    piece: DecodePiece,
    kv: u64,
    n: u64,
}

/// A running request: a decoder in a slot, or a prefiller at an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Running {
    Decoder(usize),
    Prefiller(usize),
}

/// The block size, with quotients and remainders by shift and mask when it
/// is a power of two (as vLLM's block sizes are): a 64-bit division costs
/// more than the rest of a skipped run.
#[derive(Clone, Copy, Debug)]
struct BlockSize {
    size: u64,
    shift: u32,
    power_of_two: bool,
}

impl BlockSize {
    fn new(size: u64) -> BlockSize {
        BlockSize {
            size,
            shift: size.trailing_zeros(),
            power_of_two: size.is_power_of_two(),
        }
    }

    fn div(self, x: u64) -> u64 {
        if self.power_of_two {
            x >> self.shift
        } else {
            x / self.size
        }
    }

    fn rem(self, x: u64) -> u64 {
        if self.power_of_two {
            x & (self.size - 1)
        } else {
            x % self.size
        }
    }

    /// `x mod size` in `[0, size)`, also for negative `x`.
    fn rem_euclid(self, x: i64) -> u64 {
        if self.power_of_two {
            x as u64 & (self.size - 1)
        } else {
            x.rem_euclid(self.size as i64) as u64
        }
    }

    /// Blocks needed to hold `tokens` tokens ([`blocks_for`]).
    fn blocks_for(self, tokens: u64) -> u32 {
        (self.div(tokens) + (self.rem(tokens) != 0) as u64) as u32
    }
}

/// Orders f64 times in a heap (times are never NaN here).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Time(f64);

impl Eq for Time {}

impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Time {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

pub(crate) struct FastReplica {
    cfg: ReplicaConfig,
    /// When the next step may start \[s\].
    clock: f64,
    /// Decode steps executed so far.
    g: u64,
    free_blocks: u32,
    waiting: WaitQueue,
    next_admit_seq: u64,
    busy_s: f64,
    bs: BlockSize,
    /// Decoding requests in slots (no order; `admit_seq` gives admission
    /// order). Their `computed`, `generated`, `blocks` and `busy_s` are as of
    /// their `g_sync`.
    decoders: Vec<Option<Decoder>>,
    /// Empty slots of `decoders`.
    free_slots: Vec<usize>,
    /// Occupied slots of `decoders`.
    n_decoders: usize,
    /// Prefilling requests in admission order, fully explicit.
    prefillers: Vec<Active>,
    /// Sum over decoders of (computed - G).
    offset_sum: i64,
    /// Decoders by (computed - G) mod block size: how many ...
    offset_hist: Vec<u32>,
    /// ... and which slots (the decoders at a block boundary at a given step).
    by_residue: Vec<Vec<usize>>,
    /// (admit_seq, slot) of the decoders in ascending order: the last is the
    /// victim under the non-priority disciplines. Requests mostly start
    /// decoding in admission order, so entries are mostly pushed at the end.
    /// Stale entries are dropped lazily: from the end when looked up, and all
    /// at once when they outnumber the decoders.
    latest: Vec<(u64, usize)>,
    /// Scratch list of (admit_seq, slot) (kept to reuse its allocation).
    scratch: Vec<(u64, usize)>,
    /// Scratch list of requests whose prefill a step completed.
    promoted: Vec<Active>,
    /// The slot of every decoder by the decode step producing its last token.
    due: DueQueue,
    /// Scratch list of the slots due at one step.
    due_slots: Vec<u32>,
    /// Busy time each decoder has been attributed since the start.
    busy_per_decoder: f64,
    /// (timeout, request), only when classes have timeouts; lazily pruned.
    timeouts: BinaryHeap<Reverse<(Time, ReqId)>>,
    /// No state a router can observe changes in steps starting before this.
    quiet_until: f64,
    /// The latest time the cluster advanced this replica to.
    requested_s: f64,
    /// A decode run a lazy advance left whole (the state has not changed
    /// since it was planned).
    deferred: Option<DecodeRun>,
    /// The step-time model's decode pieces, tabulated by decoder count.
    pieces: DecodePieces,
}

impl FastReplica {
    fn offset(&self, d: &Active) -> i64 {
        d.computed as i64 - d.g_sync as i64
    }

    fn residue(&self, offset: i64) -> usize {
        self.bs.rem_euclid(offset) as usize
    }

    #[expect(
        clippy::expect_used,
        reason = "a slot in the calendar or the residue lists is live by construction (checked by check_invariants in debug builds and by the oracle)"
    )]
    fn decoder(&self, slot: usize) -> &Decoder {
        self.decoders[slot].as_ref().expect("a live decoder slot")
    }

    fn decoder_with_id(&self, id: ReqId) -> Option<usize> {
        self.decoder_slots()
            .find(|&slot| self.decoder(slot).active.id == id)
    }

    /// Occupied slots, in no particular order.
    fn decoder_slots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.decoders.len()).filter(|&i| self.decoders[i].is_some())
    }

    /// Blocks the decoders need at decode step `g`: those whose context is a
    /// multiple of the block size.
    fn blocks_needed_at(&self, g: u64) -> u64 {
        self.offset_hist[self.boundary_residue(g)] as u64
    }

    /// The offset residue of the decoders at a block boundary at step `g`.
    fn boundary_residue(&self, g: u64) -> usize {
        self.bs.rem_euclid(-(self.bs.rem(g) as i64)) as usize
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
    fn blocks_needed_over(&self, k: u64) -> u64 {
        let full = self.bs.div(k) * self.n_decoders as u64;
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
    /// decode allocations would not fit.
    fn steps_until_blocks_run_out(&self, k: u64) -> u64 {
        let n = self.n_decoders as u64;
        let mut free = self.free_blocks as u64;
        // Over k steps a decoder crosses at most ceil(k / block size)
        // boundaries: when that many blocks each are free, none runs short.
        if (self.bs.div(k) + 1) * n <= free {
            return k;
        }
        // Every block-size steps, each decoder needs exactly one block.
        let cycles = free / n;
        free -= cycles * n;
        let start = cycles * self.bs.size;
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

    fn bring_up_to_date(&self, d: &mut Active) {
        Self::sync_decoder(d, self.g, self.bs, self.busy_per_decoder);
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

    /// Adds a request that has just finished its prefill (state explicit, as of now).
    fn join_decoders(&mut self, mut d: Active) {
        d.g_sync = self.g;
        d.busy_sync = self.busy_per_decoder;
        let offset = self.offset(&d);
        let r = self.residue(offset);
        self.offset_hist[r] += 1;
        self.offset_sum += offset;
        let admit_seq = d.admit_seq;
        let last_step = Self::last_step_of(&d);
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.decoders.push(None);
            self.decoders.len() - 1
        });
        self.due.push(last_step, self.g, slot as u32);
        self.decoders[slot] = Some(Decoder {
            admit_seq,
            last_step,
            offset,
            residue_at: self.by_residue[r].len() as u32,
            active: d,
        });
        self.n_decoders += 1;
        self.by_residue[r].push(slot);
        if self.latest.len() > 2 * self.n_decoders + 32 {
            let decoders = &self.decoders;
            self.latest
                .retain(|&(seq, slot)| decoders[slot].as_ref().is_some_and(|d| d.admit_seq == seq));
        }
        let mut at = self.latest.len();
        while at > 0 && self.latest[at - 1].0 > admit_seq {
            at -= 1;
        }
        self.latest.insert(at, (admit_seq, slot));
    }

    /// Removes the decoder in `slot`, brought up to date.
    #[expect(
        clippy::expect_used,
        reason = "a slot in the calendar or the residue lists is live by construction (checked by check_invariants in debug builds and by the oracle)"
    )]
    fn leave_decoders(&mut self, slot: usize) -> Active {
        let entry = self.decoders[slot].take().expect("a live decoder slot");
        self.due.remove(entry.last_step, slot as u32);
        self.unlink_decoder(slot, entry.offset, entry.residue_at);
        let mut d = entry.active;
        self.bring_up_to_date(&mut d);
        d
    }

    /// Completes the decoder in `slot` where it lies (without copying it out).
    #[expect(
        clippy::expect_used,
        reason = "a slot in the calendar or the residue lists is live by construction (checked by check_invariants in debug builds and by the oracle)"
    )]
    fn complete_decoder(&mut self, slot: usize, end_s: f64, ctx: &mut Ctx) {
        let (g, bs, busy) = (self.g, self.bs, self.busy_per_decoder);
        let entry = self.decoders[slot].as_mut().expect("a live decoder slot");
        Self::sync_decoder(&mut entry.active, g, bs, busy);
        ctx.close(&entry.active, Status::Completed, end_s);
        let (offset, at, blocks) = (entry.offset, entry.residue_at, entry.active.blocks);
        self.decoders[slot] = None;
        self.unlink_decoder(slot, offset, at);
        self.free_blocks += blocks;
    }

    /// Drops the aggregates' record of the decoder that was in `slot`, at
    /// `at` in its residue's list.
    fn unlink_decoder(&mut self, slot: usize, offset: i64, at: u32) {
        self.free_slots.push(slot);
        self.n_decoders -= 1;
        let r = self.residue(offset);
        self.offset_hist[r] -= 1;
        self.offset_sum -= offset;
        let same = &mut self.by_residue[r];
        debug_assert_eq!(same[at as usize], slot);
        same.swap_remove(at as usize);
        // The slot moved into its place now lives at `at`.
        if let Some(&moved) = same.get(at as usize)
            && let Some(d) = &mut self.decoders[moved]
        {
            d.residue_at = at;
        }
    }

    /// Completes the decoders whose last token came out of a step before
    /// `self.g`. (The check inlines; most steps complete nothing.)
    #[inline]
    fn complete_finished_decoders(&mut self, end_s: f64, ctx: &mut Ctx) {
        if self.due.min() < self.g {
            self.complete_due_decoders(end_s, ctx);
        }
    }

    #[inline(never)]
    fn complete_due_decoders(&mut self, end_s: f64, ctx: &mut Ctx) {
        let mut slots = std::mem::take(&mut self.due_slots);
        while self.due.min() < self.g {
            slots.clear();
            self.due.pop_earliest(&mut slots);
            for &slot in &slots {
                self.complete_decoder(slot as usize, end_s, ctx);
            }
        }
        self.due_slots = slots;
    }

    /// Total decode KV tokens of the next step: sum of (computed + 1).
    fn decode_kv_tokens(&self) -> u64 {
        let n = self.n_decoders as i64;
        (self.offset_sum + n * self.g as i64 + n) as u64
    }

    fn expire_timeouts(&mut self, now: f64, ctx: &mut Ctx) {
        while let Some(Reverse((Time(at), id))) = self.timeouts.peek().copied() {
            if at > now {
                break;
            }
            self.timeouts.pop();
            self.deferred = None;
            if let Some(r) = self.waiting.remove(id) {
                ctx.close(&r, Status::TimedOut, at);
            } else if let Some(i) = self.prefillers.iter().position(|r| r.id == id) {
                let r = self.prefillers.remove(i);
                self.free_blocks += r.blocks;
                ctx.close(&r, Status::TimedOut, at);
            } else if let Some(slot) = self.decoder_with_id(id) {
                let d = self.leave_decoders(slot);
                self.free_blocks += d.blocks;
                ctx.close(&d, Status::TimedOut, at);
            }
        }
    }

    fn next_timeout_s(&self) -> f64 {
        self.timeouts
            .peek()
            .map_or(f64::INFINITY, |Reverse((Time(t), _))| *t)
    }

    /// Whether the next step could admit the head of the waiting queue, given
    /// the decoders take `decode_blocks` first and nothing else runs.
    fn could_admit(&self, decode_blocks: u64) -> bool {
        let Some(head) = self.waiting.peek() else {
            return false;
        };
        let n = self.n_decoders as u64;
        if self.n_decoders + self.prefillers.len() >= self.cfg.max_num_seqs || n >= self.cfg.budget
        {
            return false;
        }
        let tokens = head.wanted_tokens(self.cfg.threshold, self.cfg.budget - n);
        let need = self.bs.blocks_for(head.computed + tokens) as u64;
        need + decode_blocks <= self.free_blocks as u64
    }

    /// The run of identical decode-only steps that starts now, up to the
    /// first completion, block shortage or end of the step-time piece;
    /// `None` when the next step must be executed on its own.
    fn decode_run(&mut self) -> Option<DecodeRun> {
        let n = self.n_decoders as u64;
        if !self.prefillers.is_empty() || n == 0 || self.could_admit(self.blocks_needed_at(self.g))
        {
            return None;
        }
        let g_last = self.due.min();
        let mut steps = self.steps_until_blocks_run_out(g_last - self.g + 1);
        if steps == 0 {
            return None;
        }
        let kv = self.decode_kv_tokens();
        let piece = self.pieces.piece(n, kv);
        if let Some(below) = piece.valid_below {
            steps = steps.min((below - kv).div_ceil(n));
        }
        Some(DecodeRun {
            steps,
            last_start: self.clock + series_s(&piece, kv, n, steps - 1),
            piece,
            kv,
            n,
        })
    }

    /// Runs every step that starts before `t`, exactly. (The checks inline;
    /// most calls have nothing to do.)
    #[inline]
    fn advance_exact(&mut self, t: f64, ctx: &mut Ctx) {
        if self.clock < t && !self.is_idle() {
            self.run_steps(t, false, ctx);
        }
    }

    /// Runs the steps that start before `t`; when `lazy`, except a final run
    /// of identical decode steps that would have to be cut at `t`: nothing
    /// observable changes in it before its last step starts, so it is kept
    /// whole in `deferred` for a later call, which skips it in one piece or
    /// cuts it where the state must be exact.
    #[inline(never)]
    fn run_steps(&mut self, t: f64, lazy: bool, ctx: &mut Ctx) {
        while self.clock < t && !self.is_idle() {
            if ctx.over_budget() {
                return;
            }
            if self.cfg.timeouts {
                self.expire_timeouts(self.clock, ctx);
                if self.is_idle() {
                    return;
                }
            }
            self.quiet_until = f64::NEG_INFINITY;
            let next_timeout = self.next_timeout_s();
            let run = match self.deferred.take() {
                Some(run) => Some(run),
                None => self.decode_run(),
            };
            let mut skipped = false;
            if let Some(run) = run {
                // Nothing a router or the waiting queue can see changes
                // before the run's last step starts (or the next timeout).
                self.quiet_until = run.last_start.min(next_timeout);
                let limit = t.min(next_timeout);
                let k = if run.last_start < limit {
                    run.steps
                } else if lazy && t <= next_timeout {
                    self.deferred = Some(run);
                    return;
                } else {
                    // Only the steps that start before the limit.
                    let span = limit - self.clock;
                    first_step_at_or_after(&run.piece, run.kv, run.n, span, run.steps - 1)
                };
                if k > 0 {
                    self.skip(k, series_s(&run.piece, run.kv, run.n, k), ctx);
                    skipped = true;
                }
            }
            if !skipped && !self.single_prefill_steps(t, ctx) && !self.step(ctx) {
                debug_assert!(false, "a replica with work scheduled nothing");
                return;
            }
            #[cfg(debug_assertions)]
            self.check_invariants();
        }
    }

    /// Executes, while they start before `t`, the steps of the commonest
    /// shapes: the decoders plus one request prefilling, with nothing else
    /// waiting; that request either continues its prefill or is admitted in
    /// the step as the only one waiting (together four steps in five of a
    /// busy day). They follow [`Self::step`]'s rules for those cases without
    /// its general phases, and stop before the first step of any other shape
    /// (the prefill done and none to admit, blocks short, an arrival at `t`).
    /// Returns whether any step ran.
    fn single_prefill_steps(&mut self, t: f64, ctx: &mut Ctx) -> bool {
        let mut any = false;
        while !self.cfg.timeouts && self.clock < t && !ctx.over_budget() {
            let n = self.n_decoders as u64;
            let budget = self.cfg.budget - n;
            let admitting = match (self.prefillers.len(), self.waiting.len()) {
                (1, 0) => false,
                (0, 1) if self.n_decoders < self.cfg.max_num_seqs && budget > 0 => true,
                _ => break,
            };
            let p = match (admitting, self.waiting.peek()) {
                (true, Some(waiting)) => waiting,
                (true, None) => break,
                (false, _) => &self.prefillers[0],
            };
            let tokens = p.wanted_tokens(self.cfg.threshold, budget);
            let prefill_blocks = self.bs.blocks_for(p.computed + tokens) - p.blocks;
            let need = self.blocks_needed_at(self.g) + prefill_blocks as u64;
            if tokens == 0 || need > self.free_blocks as u64 {
                break;
            }
            let now = self.clock;
            if admitting && let Some(mut r) = self.waiting.pop() {
                r.admit_seq = self.next_admit_seq;
                self.next_admit_seq += 1;
                let record = &mut ctx.records[r.id as usize];
                if record.admitted_s.is_nan() {
                    record.admitted_s = now;
                }
                self.prefillers.push(r);
            }
            self.free_blocks -= need as u32;
            let p = &self.prefillers[0];
            let mut shape = StepShape {
                decode_seqs: n,
                decode_kv_tokens: if n > 0 { self.decode_kv_tokens() } else { 0 },
                ..StepShape::default()
            };
            shape.add_prefill(p.computed, tokens);
            let step_tokens = shape.tokens();
            let dt = self.cfg.step_time.step_s(&shape);
            let end = now + dt;
            // (The same quotient `step` computes twice, so the same bits.)
            let per_token_s = dt / step_tokens as f64;
            if n > 0 {
                self.g += 1;
                self.busy_per_decoder += per_token_s;
            }
            let p = &mut self.prefillers[0];
            p.blocks += prefill_blocks;
            compute_chunk(p, tokens, per_token_s, end, ctx);
            if p.is_decoding()
                && let Some(r) = self.prefillers.pop()
            {
                self.retire_prefilled(r, end, ctx);
            }
            self.complete_finished_decoders(end, ctx);
            self.clock = end;
            self.busy_s += dt;
            ctx.steps += 1;
            ctx.events += 1;
            any = true;
            #[cfg(debug_assertions)]
            self.check_invariants();
        }
        any
    }

    /// Jumps over `k` identical decode-only steps lasting `total_s` in all.
    fn skip(&mut self, k: u64, total_s: f64, ctx: &mut Ctx) {
        let n = self.n_decoders as u64;
        self.free_blocks -= self.blocks_needed_over(k) as u32;
        self.busy_per_decoder += total_s / n as f64;
        self.g += k;
        self.clock += total_s;
        self.busy_s += total_s;
        ctx.steps += k;
        ctx.events += 1;
        self.complete_finished_decoders(self.clock, ctx);
    }

    /// The running request to preempt next: under the priority discipline
    /// the least urgent (largest priority, latest arrival), otherwise the most
    /// recently admitted. `None` when nothing runs.
    fn victim(&mut self) -> Option<Running> {
        if self.cfg.discipline == Discipline::Priority {
            let key = |r: &Active| (r.priority, r.arrival_s, r.id);
            let d = self.decoder_slots().max_by(|&a, &b| {
                key(&self.decoder(a).active)
                    .partial_cmp(&key(&self.decoder(b).active))
                    .unwrap_or(Ordering::Equal)
            });
            let p = (0..self.prefillers.len()).max_by(|&a, &b| {
                key(&self.prefillers[a])
                    .partial_cmp(&key(&self.prefillers[b]))
                    .unwrap_or(Ordering::Equal)
            });
            match (d, p) {
                (Some(d), Some(p)) => {
                    Some(if key(&self.decoder(d).active) > key(&self.prefillers[p]) {
                        Running::Decoder(d)
                    } else {
                        Running::Prefiller(p)
                    })
                }
                (Some(d), None) => Some(Running::Decoder(d)),
                (None, Some(p)) => Some(Running::Prefiller(p)),
                (None, None) => None,
            }
        } else {
            let latest = self.latest_decoder();
            match (latest, self.prefillers.last()) {
                (Some(d), Some(p)) if self.decoder(d).admit_seq > p.admit_seq => {
                    Some(Running::Decoder(d))
                }
                (_, Some(_)) => Some(Running::Prefiller(self.prefillers.len() - 1)),
                (Some(d), None) => Some(Running::Decoder(d)),
                (None, None) => None,
            }
        }
    }

    /// The most recently admitted decoder, pruning stale entries.
    fn latest_decoder(&mut self) -> Option<usize> {
        while let Some(&(seq, slot)) = self.latest.last() {
            match &self.decoders[slot] {
                Some(d) if d.admit_seq == seq => return Some(slot),
                _ => {
                    self.latest.pop();
                }
            }
        }
        None
    }

    /// Whether the decoder in `slot` needs a new block in the step at the current G.
    fn at_block_boundary(&self, slot: usize) -> bool {
        self.bs
            .rem_euclid(self.decoder(slot).offset + self.g as i64)
            == 0
    }

    /// Preempts `victim`: frees its blocks (plus the one a decoder was given
    /// this step, if any), refunds its scheduled tokens to `budget` (one for
    /// a decoder already counted in the step) and sends it back to the
    /// waiting queue.
    fn preempt(
        &mut self,
        victim: Running,
        got_block_this_step: bool,
        decode_counted: bool,
        budget: &mut u64,
    ) {
        let mut r = match victim {
            Running::Decoder(slot) => {
                let mut d = self.leave_decoders(slot);
                d.blocks += got_block_this_step as u32;
                d.sched = decode_counted as u64;
                d
            }
            Running::Prefiller(i) => self.prefillers.remove(i),
        };
        *budget += r.sched;
        self.free_blocks += r.blocks;
        r.reset_for_recompute();
        self.waiting.push_front(r);
    }

    /// One step with the decoders in aggregate: the rules of
    /// [`super::reference`], applied to decoders only where they need a block.
    /// False when nothing could be scheduled or preempted (a stall, which the
    /// rules exclude; the caller stops rather than spin).
    fn step(&mut self, ctx: &mut Ctx) -> bool {
        let now = self.clock;
        let mut budget = self.cfg.budget;
        let mut preempted = false;
        let mut stopped = false;
        // Decoders later in admission order than a decoder that preempted
        // itself are not scheduled this step (priority discipline only).
        let mut unscheduled: Vec<Active> = Vec::new();
        // Phase A1: every decoder takes one token; those at a block boundary need a block.
        let need = self.blocks_needed_at(self.g);
        if need <= self.free_blocks as u64 {
            self.free_blocks -= need as u32;
        } else {
            // Blocks run short: give them to the decoders at a block boundary
            // in admission order, preempting as needed.
            let mut order = std::mem::take(&mut self.scratch);
            order.clear();
            let boundary = &self.by_residue[self.boundary_residue(self.g)];
            order.extend(
                boundary
                    .iter()
                    .map(|&slot| (self.decoder(slot).admit_seq, slot)),
            );
            // The first `free` of them get a block without preempting
            // anything, in whatever order: only the rest need sorting.
            let free = self.free_blocks as usize;
            if free > 0 {
                order.select_nth_unstable(free - 1);
            }
            order[free..].sort_unstable();
            for &(_, slot) in &order {
                // Skip decoders preempted as victims.
                if self.decoders[slot].is_none() {
                    continue;
                }
                let seq = self.decoder(slot).admit_seq;
                while self.free_blocks == 0 {
                    let Some(victim) = self.victim() else { break };
                    preempted = true;
                    if victim == Running::Decoder(slot) {
                        self.preempt(victim, false, false, &mut budget);
                        stopped = true;
                        break;
                    }
                    // An earlier decoder at a boundary was given its block already.
                    let got_block = match victim {
                        Running::Decoder(j) => {
                            self.decoder(j).admit_seq < seq && self.at_block_boundary(j)
                        }
                        Running::Prefiller(_) => false,
                    };
                    self.preempt(victim, got_block, false, &mut budget);
                }
                if stopped {
                    // Decoders admitted after it are not scheduled either.
                    let later: Vec<usize> = self
                        .decoder_slots()
                        .filter(|&s| self.decoder(s).admit_seq > seq)
                        .collect();
                    for s in later {
                        unscheduled.push(self.leave_decoders(s));
                    }
                    break;
                }
                self.free_blocks -= 1;
            }
            self.scratch = order;
        }
        let n = self.n_decoders as u64;
        budget -= n;
        // Phase A2: continuing prefills in admission order.
        let mut i = 0;
        while !stopped && i < self.prefillers.len() {
            let p = &self.prefillers[i];
            let tokens = p.wanted_tokens(self.cfg.threshold, budget);
            if tokens == 0 {
                i += 1;
                continue;
            }
            let need = self.bs.blocks_for(p.computed + tokens) - p.blocks;
            while need > self.free_blocks {
                let Some(victim) = self.victim() else { break };
                preempted = true;
                if victim == Running::Prefiller(i) {
                    self.preempt(victim, false, false, &mut budget);
                    stopped = true;
                    break;
                }
                let got_block = matches!(victim, Running::Decoder(j) if self.at_block_boundary(j));
                self.preempt(victim, got_block, true, &mut budget);
                if matches!(victim, Running::Prefiller(j) if j < i) {
                    i -= 1;
                }
            }
            if stopped {
                break;
            }
            let p = &mut self.prefillers[i];
            self.free_blocks -= need;
            p.blocks += need;
            p.sched = tokens;
            budget -= tokens;
            i += 1;
        }
        // Decoders preempted during phase A2 were scheduled; the count is final now.
        let n = self.n_decoders as u64;
        // Phase B: admissions, only when nothing was preempted.
        while !preempted
            && budget > 0
            && self.n_decoders + self.prefillers.len() < self.cfg.max_num_seqs
        {
            let Some(head) = self.waiting.peek() else {
                break;
            };
            let tokens = head.wanted_tokens(self.cfg.threshold, budget);
            let need = self.bs.blocks_for(head.computed + tokens);
            if need > self.free_blocks {
                break;
            }
            let Some(mut r) = self.waiting.pop() else {
                break;
            };
            self.free_blocks -= need;
            r.blocks = need;
            r.sched = tokens;
            r.admit_seq = self.next_admit_seq;
            self.next_admit_seq += 1;
            budget -= tokens;
            let record = &mut ctx.records[r.id as usize];
            if record.admitted_s.is_nan() {
                record.admitted_s = now;
            }
            self.prefillers.push(r);
        }
        let mut shape = StepShape {
            decode_seqs: n,
            decode_kv_tokens: if n > 0 { self.decode_kv_tokens() } else { 0 },
            ..StepShape::default()
        };
        for p in self.prefillers.iter().filter(|p| p.sched > 0) {
            shape.add_prefill(p.computed, p.sched);
        }
        let tokens = shape.tokens();
        if tokens > 0 {
            let dt = self.cfg.step_time.step_s(&shape);
            let end = now + dt;
            if n > 0 {
                self.g += 1;
                self.busy_per_decoder += dt / tokens as f64;
            }
            self.apply_prefill_chunks(dt, tokens, end, ctx);
            self.complete_finished_decoders(end, ctx);
            self.clock = end;
            self.busy_s += dt;
            ctx.steps += 1;
            ctx.events += 1;
        }
        for d in unscheduled {
            self.join_decoders(d);
        }
        tokens > 0 || preempted
    }

    /// [`super::reference::apply_step`] for the prefilling requests (none of them decodes
    /// before the step), then moves those whose prefill is now complete into
    /// the decode group in admission order: one pass that keeps the rest in
    /// order without shifting them one removal at a time.
    fn apply_prefill_chunks(&mut self, dt: f64, step_tokens: u64, end_s: f64, ctx: &mut Ctx) {
        let per_token_s = dt / step_tokens as f64;
        let mut promoted = std::mem::take(&mut self.promoted);
        self.prefillers.retain_mut(|r| {
            if r.sched > 0 {
                let tokens = std::mem::take(&mut r.sched);
                compute_chunk(r, tokens, per_token_s, end_s, ctx);
            }
            if !r.is_decoding() {
                return true;
            }
            promoted.push(r.clone());
            false
        });
        for r in promoted.drain(..) {
            self.retire_prefilled(r, end_s, ctx);
        }
        self.promoted = promoted;
    }

    /// A request whose prefill has just completed (in a step ending at
    /// `end_s`): done if that step gave its only output token, otherwise a
    /// decoder.
    fn retire_prefilled(&mut self, r: Active, end_s: f64, ctx: &mut Ctx) {
        if r.generated >= r.output {
            self.free_blocks += r.blocks;
            ctx.close(&r, Status::Completed, end_s);
        } else {
            self.join_decoders(r);
        }
    }

    fn is_idle(&self) -> bool {
        self.n_decoders == 0 && self.prefillers.is_empty() && self.waiting.is_empty()
    }

    /// Debug builds (and so every test) check the aggregates against the
    /// explicit state after each event: blocks held + free = capacity, the
    /// histogram and offset sum describe the decoders, slots and order hold.
    #[cfg(debug_assertions)]
    fn check_invariants(&self) {
        let bs = self.cfg.block_size;
        let mut held: u64 = self.prefillers.iter().map(|p| p.blocks as u64).sum();
        let mut hist = vec![0u32; bs as usize];
        let mut sum = 0i64;
        let mut seqs = Vec::new();
        for entry in self.decoders.iter().flatten() {
            let d = &entry.active;
            seqs.push(entry.admit_seq);
            let offset = self.offset(d);
            assert_eq!(offset, entry.offset, "inline offset out of date");
            assert_eq!(
                Self::last_step_of(d),
                entry.last_step,
                "inline last step out of date"
            );
            assert_eq!(d.admit_seq, entry.admit_seq);
            hist[self.residue(offset)] += 1;
            sum += offset;
            held += super::state::blocks_for((offset + self.g as i64) as u64, bs) as u64;
            assert!(
                d.computed + (self.g - d.g_sync) < d.input + d.output as u64,
                "decoder past its end"
            );
        }
        assert_eq!(
            held + self.free_blocks as u64,
            self.cfg.total_blocks as u64,
            "KV blocks leaked or over-allocated"
        );
        assert_eq!(hist, self.offset_hist, "offset histogram out of date");
        let earliest = self.decoders.iter().flatten().map(|d| d.last_step).min();
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
        assert!(self.n_decoders + self.prefillers.len() <= self.cfg.max_num_seqs);
        assert_eq!(seqs.len(), self.n_decoders, "decoder count out of date");
        assert_eq!(
            self.n_decoders + self.free_slots.len(),
            self.decoders.len(),
            "free slots out of date"
        );
        seqs.sort_unstable();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "admit_seq repeated");
        assert!(
            self.prefillers
                .windows(2)
                .all(|w| w[0].admit_seq < w[1].admit_seq)
        );
        assert!(self.prefillers.iter().all(|p| !p.is_decoding()));
    }
}

/// Applies a prefill chunk of `tokens` tokens to `r` in a step ending at
/// `end_s` (`per_token_s` of the step's time per token): its busy time, its
/// context and, when the prompt is done, its first output token.
fn compute_chunk(r: &mut Active, tokens: u64, per_token_s: f64, end_s: f64, ctx: &mut Ctx) {
    r.busy_s += per_token_s * tokens as f64;
    r.computed += tokens;
    if r.computed == r.target {
        r.generated += 1;
        let record = &mut ctx.records[r.id as usize];
        if record.first_token_s.is_nan() {
            record.first_token_s = end_s;
        }
    }
}

/// Total duration of `k` decode-only steps starting at `kv` decode KV
/// tokens with `n` decoders: step j lasts `piece.at(kv + n j)`, so the sum is
/// `k t0 + n slope k (k - 1) / 2`.
fn series_s(piece: &DecodePiece, kv: u64, n: u64, k: u64) -> f64 {
    // (Counts stay far below 2^53: through i64 the conversions are one
    // instruction each and give the same values.)
    let k = k as i64 as f64;
    k * piece.at(kv) + piece.slope_s_per_token * n as i64 as f64 * k * (k - 1.0) / 2.0
}

/// The smallest j <= `upper` with `series_s(j) >= span_s` (the number of
/// steps that start strictly before the limit).
fn first_step_at_or_after(piece: &DecodePiece, kv: u64, n: u64, span_s: f64, upper: u64) -> u64 {
    if span_s <= 0.0 {
        return 0;
    }
    let t0 = piece.at(kv);
    let c = piece.slope_s_per_token * n as f64;
    // Solve k t0 + c k (k - 1) / 2 = span for k, then correct by evaluation.
    let guess = if c > 0.0 {
        let b = t0 - c / 2.0;
        (-b + libm::sqrt(b * b + 2.0 * c * span_s)) / c
    } else if t0 > 0.0 {
        span_s / t0
    } else {
        upper as f64
    };
    let mut j = ceil_u64(guess).min(upper);
    while j < upper && series_s(piece, kv, n, j) < span_s {
        j += 1;
    }
    while j > 0 && series_s(piece, kv, n, j - 1) >= span_s {
        j -= 1;
    }
    j
}

impl Replica for FastReplica {
    fn new(cfg: ReplicaConfig) -> Self {
        FastReplica {
            clock: 0.0,
            g: 0,
            free_blocks: cfg.total_blocks,
            waiting: WaitQueue::new(cfg.discipline, cfg.timeouts),
            next_admit_seq: 0,
            busy_s: 0.0,
            bs: BlockSize::new(cfg.block_size),
            decoders: Vec::new(),
            free_slots: Vec::new(),
            n_decoders: 0,
            prefillers: Vec::new(),
            offset_sum: 0,
            offset_hist: vec![0; cfg.block_size as usize],
            by_residue: vec![Vec::new(); cfg.block_size as usize],
            latest: Vec::new(),
            scratch: Vec::new(),
            promoted: Vec::new(),
            due: DueQueue::new(),
            due_slots: Vec::new(),
            busy_per_decoder: 0.0,
            timeouts: BinaryHeap::new(),
            quiet_until: f64::NEG_INFINITY,
            requested_s: 0.0,
            deferred: None,
            pieces: DecodePieces::new(&cfg.step_time, cfg.max_num_seqs as u64),
            cfg,
        }
    }

    /// Lazy: inside a run of identical decode steps nothing observable
    /// changes, so the work is deferred until the state is needed
    /// ([`Replica::sync`], an arrival) or the run ends.
    fn advance_until(&mut self, t: f64, ctx: &mut Ctx) {
        // (Not `f64::max`: times are never NaN, and this runs for every
        // replica at every arrival.)
        if t > self.requested_s {
            self.requested_s = t;
        }
        if t > self.quiet_until && self.clock < t && !self.is_idle() {
            self.run_steps(t, true, ctx);
        }
    }

    fn sync(&mut self, ctx: &mut Ctx) {
        self.advance_exact(self.requested_s, ctx);
    }

    fn enqueue(&mut self, request: Active, t: f64, ctx: &mut Ctx) {
        self.advance_exact(t, ctx);
        self.quiet_until = f64::NEG_INFINITY;
        self.deferred = None;
        if self.is_idle() {
            self.clock = self.clock.max(t);
        }
        if self.cfg.timeouts && request.timeout_at_s.is_finite() {
            self.timeouts
                .push(Reverse((Time(request.timeout_at_s), request.id)));
        }
        self.waiting.push_back(request);
    }

    fn waiting_len(&self) -> usize {
        self.waiting.len()
    }

    fn running_len(&self) -> usize {
        self.n_decoders + self.prefillers.len()
    }

    fn used_blocks(&self) -> u32 {
        self.cfg.total_blocks - self.free_blocks
    }

    fn busy_s(&self) -> f64 {
        self.busy_s
    }

    fn clock_s(&self) -> f64 {
        self.clock
    }

    fn close_unfinished(&mut self, end_s: f64, ctx: &mut Ctx) {
        self.advance_exact(end_s, ctx);
        self.deferred = None;
        for slot in 0..self.decoders.len() {
            if self.decoders[slot].is_some() {
                let d = self.leave_decoders(slot);
                ctx.close(&d, Status::Unfinished, end_s);
            }
        }
        for r in self.prefillers.drain(..).chain(self.waiting.take_all()) {
            ctx.close(&r, Status::Unfinished, end_s);
        }
        self.free_blocks = self.cfg.total_blocks;
    }
}

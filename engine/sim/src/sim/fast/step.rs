//! The step policy: steps executed one at a time, with the decoders still in
//! aggregate.
//!
//! [`FastReplica::step`] applies the rules of [`crate::sim::rules`] (as the
//! reference stepper does) to the prefilling requests explicitly and to the
//! decoders only where they need a block: when the blocks run short, the
//! decoders at a block boundary are visited in admission order, preempting
//! victims as needed. [`FastReplica::single_prefill_steps`] runs the
//! commonest shape (the decoders plus one request prefilling, none else
//! waiting) in a tight loop. Under the prefill-first schedule a step holds
//! whole prompts alone ([`FastReplica::prefill_step`]) or decodes alone.

use super::FastReplica;
use crate::model::step_time::StepShape;
use crate::params::{Discipline, Schedule};
use crate::sim::rules::{self, Admission, blocks_needed, preempted_before};
use crate::sim::state::Active;
use crate::sim::{Ctx, Status};

/// A running request: a decoder in a slot, or a prefiller at an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Running {
    Decoder(usize),
    Prefiller(usize),
}

impl FastReplica {
    /// Executes, while they start before `t`, the steps of the commonest
    /// shapes: the decoders plus one request prefilling, with nothing else
    /// waiting; that request either continues its prefill or is admitted in
    /// the step as the only one waiting (together four steps in five of a
    /// busy day). They follow [`Self::step`]'s rules for those cases without
    /// its general phases, and stop before the first step of any other shape
    /// (the prefill done and none to admit, blocks short, an arrival at `t`).
    /// Returns whether any step ran. (Decode-first only: under prefill-first
    /// no prompt shares a step with decodes.)
    pub(super) fn single_prefill_steps(&mut self, t: f64, ctx: &mut Ctx) -> bool {
        let mut any = false;
        let decode_first = self.cfg.schedule == Schedule::DecodeFirst;
        while decode_first && !self.cfg.timeouts && self.clock.now_s() < t && !ctx.must_stop() {
            let n = self.group.len() as u64;
            let budget = self.cfg.budget - n;
            let admitting = match (self.prefillers.len(), self.pool.waiting.len()) {
                (1, 0) => false,
                (0, 1) if self.group.len() < self.cfg.max_num_seqs && budget > 0 => true,
                _ => break,
            };
            let decode_blocks = self.group.blocks_needed_now();
            let head = match admitting {
                true => self.pool.head_chunk(&self.cfg, budget, decode_blocks),
                false => Some(Admission::first_chunk(
                    &self.prefillers[0],
                    &self.cfg,
                    budget,
                    None,
                )),
            };
            let Some(head) = head else { break };
            let tokens = head.tokens;
            if tokens == 0 || !self.pool.fits(&head, decode_blocks) {
                break;
            }
            let now = self.clock.now_s();
            // The decoders' blocks first, then the prefill's (taking back
            // what it has cached): the order the free queue hands them out.
            self.pool.free.take(decode_blocks as u32);
            if admitting && let Some(mut r) = self.pool.waiting.pop() {
                self.pool.take_back(&mut r, head.resume);
                self.pool.stamp_admitted(&mut r, now, ctx);
                self.prefillers.push(r);
            }
            self.pool.free.take(head.need);
            self.prefillers[0].blocks += head.need;
            let p = &self.prefillers[0];
            let mut shape = StepShape {
                decode_seqs: n,
                decode_kv_tokens: if n > 0 { self.group.kv_tokens() } else { 0 },
                ..StepShape::default()
            };
            shape.add_prefill(p.computed, tokens);
            let step_tokens = shape.tokens();
            let dt = self.cfg.step_time.step_s(&shape);
            (ctx.batches).step(&shape, p.recomputed_in(tokens), dt, self.pool.used_blocks());
            let end = self.clock.add(dt);
            // (The same quotient `step` computes twice, so the same bits.)
            let per_token_s = dt / step_tokens as f64;
            if n > 0 {
                self.group.advance(1, per_token_s);
            }
            let p = &mut self.prefillers[0];
            rules::compute(p, tokens, per_token_s, end, ctx);
            if p.is_decoding()
                && let Some(r) = self.prefillers.pop()
            {
                self.retire_prefilled(r, end, ctx);
            }
            self.complete_finished(end, ctx);
            self.end_step(dt, ctx);
            any = true;
            #[cfg(debug_assertions)]
            self.check_invariants();
        }
        any
    }

    /// The running request to preempt next: the one
    /// [`rules::preempted_before`] every other. Under the priority discipline
    /// that may be any; otherwise it is the most recently admitted, so the
    /// latest decoder or the last prefiller (they are in admission order).
    /// `None` when nothing runs.
    fn victim(&mut self) -> Option<Running> {
        let discipline = self.cfg.discipline;
        if discipline == Discipline::Priority {
            let mut victim: Option<(Running, &Active)> = None;
            // The decoders' first in line, kept in order by the group; the
            // prefillers (few) by a scan.
            let decoder = self
                .group
                .first_preempted()
                .map(|slot| (Running::Decoder(slot), &self.group.decoder(slot).active));
            let prefillers =
                (self.prefillers.iter().enumerate()).map(|(i, p)| (Running::Prefiller(i), p));
            for (running, r) in decoder.into_iter().chain(prefillers) {
                if victim.is_none_or(|(_, v)| preempted_before(discipline, r, v)) {
                    victim = Some((running, r));
                }
            }
            return victim.map(|(running, _)| running);
        }
        match (self.group.latest(), self.prefillers.last()) {
            (Some(d), Some(p))
                if preempted_before(discipline, &self.group.decoder(d).active, p) =>
            {
                Some(Running::Decoder(d))
            }
            (_, Some(_)) => Some(Running::Prefiller(self.prefillers.len() - 1)),
            (Some(d), None) => Some(Running::Decoder(d)),
            (None, None) => None,
        }
    }

    /// Preempts `victim` ([`rules::Pool::preempt`]): a decoder leaves the
    /// group with the block it was given this step, if any, and counts the
    /// token it was scheduled when `decode_counted` (the decoders' tokens are
    /// taken from the budget all at once).
    fn preempt(
        &mut self,
        victim: Running,
        got_block_this_step: bool,
        decode_counted: bool,
        budget: &mut u64,
    ) {
        let r = match victim {
            Running::Decoder(slot) => {
                let mut d = self.group.leave(slot);
                d.blocks += got_block_this_step as u32;
                d.sched = decode_counted as u64;
                d
            }
            Running::Prefiller(i) => self.prefillers.remove(i),
        };
        self.pool.preempt(r, budget);
    }

    /// One step with the decoders in aggregate: the rules of
    /// [`crate::sim::rules`] in the reference stepper's phases, applied to
    /// decoders only where they need a block. False when nothing could be
    /// scheduled or preempted (a stall, which the rules exclude; the caller
    /// stops rather than spin). (Out of line: the driver's loop runs far
    /// more skipped runs and single-prefill steps than these, and inlined
    /// this makes every pass of the loop dearer.)
    ///
    /// Under prefill-first: the prefill step when the head of the waiting
    /// queue can be admitted, otherwise these phases with no admission (and
    /// no prefillers: every prompt completes in its step), a decode-only
    /// step.
    #[inline(never)]
    pub(super) fn step(&mut self, ctx: &mut Ctx) -> bool {
        let prefill_first = self.cfg.schedule == Schedule::PrefillFirst;
        if prefill_first && self.prefill_step(ctx) {
            return true;
        }
        let now = self.clock.now_s();
        let mut budget = self.cfg.budget;
        // Decoders later in admission order than a decoder that preempted
        // itself are not scheduled this step (priority discipline only).
        let mut unscheduled: Vec<Active> = Vec::new();
        // Phase A1: every decoder takes one token; those at a block boundary need a block.
        let need = self.group.blocks_needed_now();
        let (mut preempted, mut stopped) = if need <= self.pool.free_blocks() as u64 {
            self.pool.free.take(need as u32);
            (false, false)
        } else {
            self.give_boundary_blocks(&mut budget, &mut unscheduled)
        };
        let n = self.group.len() as u64;
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
            let need = blocks_needed(p, tokens, self.cfg.block_size);
            while need > self.pool.free_blocks() {
                let Some(victim) = self.victim() else { break };
                preempted = true;
                if victim == Running::Prefiller(i) {
                    self.preempt(victim, false, false, &mut budget);
                    stopped = true;
                    break;
                }
                let got_block =
                    matches!(victim, Running::Decoder(j) if self.group.needs_block_now(j));
                self.preempt(victim, got_block, true, &mut budget);
                if matches!(victim, Running::Prefiller(j) if j < i) {
                    i -= 1;
                }
            }
            if stopped {
                break;
            }
            self.pool
                .grant(&mut self.prefillers[i], tokens, need, &mut budget);
            i += 1;
        }
        // Decoders preempted during phase A2 were scheduled; the count is final now.
        let n = self.group.len() as u64;
        // Phase B: admissions, only when nothing was preempted.
        if !preempted && !prefill_first {
            let decoders = self.group.len();
            (self.pool).admit(
                &self.cfg,
                &mut budget,
                decoders,
                &mut self.prefillers,
                now,
                ctx,
            );
        }
        let mut shape = StepShape {
            decode_seqs: n,
            decode_kv_tokens: if n > 0 { self.group.kv_tokens() } else { 0 },
            ..StepShape::default()
        };
        let mut recomputed = 0;
        for p in self.prefillers.iter().filter(|p| p.sched > 0) {
            shape.add_prefill(p.computed, p.sched);
            recomputed += p.recomputed_in(p.sched);
        }
        let tokens = shape.tokens();
        if tokens > 0 {
            let dt = self.cfg.step_time.step_s(&shape);
            (ctx.batches).step(&shape, recomputed, dt, self.pool.used_blocks());
            let end = self.clock.add(dt);
            if n > 0 {
                self.group.advance(1, dt / tokens as f64);
            }
            self.apply_prefill_chunks(dt, tokens, end, ctx);
            self.complete_finished(end, ctx);
            self.end_step(dt, ctx);
        }
        for d in unscheduled {
            self.group.join(d);
        }
        tokens > 0 || preempted
    }

    /// Under prefill-first, the step of whole prompts that runs when the head
    /// of the waiting queue can be admitted ([`rules::Pool::admit_whole`]):
    /// the decoders wait through it (their step counter stays). False,
    /// changing nothing, when it cannot be admitted.
    fn prefill_step(&mut self, ctx: &mut Ctx) -> bool {
        let now = self.clock.now_s();
        let mut budget = self.cfg.budget;
        let decoders = self.group.len();
        (self.pool).admit_whole(
            &self.cfg,
            &mut budget,
            decoders,
            &mut self.prefillers,
            now,
            ctx,
        );
        if self.prefillers.is_empty() {
            return false;
        }
        let mut shape = StepShape::default();
        let mut recomputed = 0;
        for p in &self.prefillers {
            shape.add_prefill(p.computed, p.sched);
            recomputed += p.recomputed_in(p.sched);
        }
        let tokens = shape.tokens();
        let dt = self.cfg.step_time.step_s(&shape);
        (ctx.batches).step(&shape, recomputed, dt, self.pool.used_blocks());
        let end = self.clock.add(dt);
        self.apply_prefill_chunks(dt, tokens, end, ctx);
        self.end_step(dt, ctx);
        true
    }

    /// An executed step of `dt` seconds is over (the clock already moved to
    /// its end): the busy time and the counts grow.
    #[inline]
    fn end_step(&mut self, dt: f64, ctx: &mut Ctx) {
        self.busy_s += dt;
        ctx.steps += 1;
        ctx.events += 1;
    }

    /// Phase A1 when the blocks run short: gives them to the decoders at a
    /// block boundary in admission order, preempting as needed. (Out of
    /// line: it is rare, and inlined it makes every step dearer.)
    #[inline(never)]
    fn give_boundary_blocks(
        &mut self,
        budget: &mut u64,
        unscheduled: &mut Vec<Active>,
    ) -> (bool, bool) {
        let (mut preempted, mut stopped) = (false, false);
        let mut order = std::mem::take(&mut self.scratch);
        order.clear();
        order.extend(
            (self.group.at_boundary_now().iter())
                .map(|&slot| (self.group.decoder(slot).admit_seq, slot)),
        );
        // The first `free` of them get a block without preempting anything,
        // in whatever order: only the rest need sorting.
        let free = self.pool.free_blocks() as usize;
        if free > 0 {
            order.select_nth_unstable(free - 1);
        }
        order[free..].sort_unstable();
        for &(_, slot) in &order {
            // Skip decoders preempted as victims.
            if !self.group.is_live(slot) {
                continue;
            }
            let seq = self.group.decoder(slot).admit_seq;
            while self.pool.free_blocks() == 0 {
                let Some(victim) = self.victim() else { break };
                preempted = true;
                if victim == Running::Decoder(slot) {
                    self.preempt(victim, false, false, budget);
                    stopped = true;
                    break;
                }
                // An earlier decoder at a boundary was given its block already.
                let got_block = match victim {
                    Running::Decoder(j) => {
                        self.group.decoder(j).admit_seq < seq && self.group.needs_block_now(j)
                    }
                    Running::Prefiller(_) => false,
                };
                self.preempt(victim, got_block, false, budget);
            }
            if stopped {
                // Decoders admitted after it are not scheduled either.
                let later: Vec<usize> = (self.group.slots())
                    .filter(|&s| self.group.decoder(s).admit_seq > seq)
                    .collect();
                for s in later {
                    unscheduled.push(self.group.leave(s));
                }
                break;
            }
            self.pool.free.take(1);
        }
        self.scratch = order;
        (preempted, stopped)
    }

    /// The end of a step ([`rules::compute`]) for the prefilling requests
    /// (none of them decodes before the step), then moves those whose
    /// prefill is now complete into the decode group in admission order: one
    /// pass that keeps the rest in order without shifting them one removal
    /// at a time.
    fn apply_prefill_chunks(&mut self, dt: f64, step_tokens: u64, end_s: f64, ctx: &mut Ctx) {
        let per_token_s = dt / step_tokens as f64;
        let mut promoted = std::mem::take(&mut self.promoted);
        self.prefillers.retain_mut(|r| {
            if r.sched > 0 {
                let tokens = std::mem::take(&mut r.sched);
                rules::compute(r, tokens, per_token_s, end_s, ctx);
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
    #[inline]
    fn retire_prefilled(&mut self, r: Active, end_s: f64, ctx: &mut Ctx) {
        if rules::is_done(&r) {
            self.pool.free.give(r.blocks);
            ctx.close(&r, Status::Completed, end_s);
        } else {
            self.group.join(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rules::victim_index;
    use crate::sim::testing::{config, ctx, decoding, prefilling, request};

    /// The request `victim` names.
    fn id_of(replica: &FastReplica, victim: Running) -> u32 {
        match victim {
            Running::Decoder(slot) => replica.group.decoder(slot).active.id,
            Running::Prefiller(i) => replica.prefillers[i].id,
        }
    }

    /// Decoders and prefillers interleaved in admission order, with assorted
    /// priorities: the fast engine's victim, found from its slots, residue
    /// lists and admission list, is the one the shared rule picks from the
    /// running requests written out.
    #[test]
    fn the_victim_is_the_one_the_shared_rule_picks_from_the_list() {
        let running = || {
            let mut running = vec![
                decoding(0, 40, 9),
                decoding(1, 17, 9),
                prefilling(2, 90, 32, 5),
                decoding(3, 64, 9),
                prefilling(4, 50, 0, 5),
            ];
            for (r, priority) in running.iter_mut().zip([2, 5, 1, 5, 0]) {
                r.priority = priority;
            }
            running
        };
        let check = |mut running: Vec<Active>, discipline, want: u32| {
            let cfg = config(16, 100, discipline);
            let mut replica = FastReplica::running(cfg, running.clone());
            for (seq, r) in running.iter_mut().enumerate() {
                r.admit_seq = seq as u64;
            }
            let rule = running[victim_index(&running, discipline)].id;
            let victim = replica.victim().expect("something runs");
            assert_eq!(
                (id_of(&replica, victim), rule),
                (want, want),
                "{discipline:?}"
            );
        };
        // The most recently admitted, a prefiller, then a decoder.
        check(running(), Discipline::Fcfs, 4);
        check(running()[..4].to_vec(), Discipline::ShortestInputFirst, 3);
        // The least urgent: priority 5, then the later arrival.
        check(running(), Discipline::Priority, 3);
        let mut r = running();
        r[2].priority = 9;
        check(r, Discipline::Priority, 2);
        check(vec![decoding(0, 40, 9)], Discipline::Priority, 0);
    }

    #[test]
    fn short_of_blocks_the_most_recently_admitted_decoder_is_preempted() {
        // Blocks of 4 tokens; three decoders at a block boundary, holding
        // 1 + 2 + 3 blocks, and one block free.
        let cfg = config(4, 7, Discipline::Fcfs);
        let mut replica = FastReplica::running(
            cfg,
            vec![decoding(0, 4, 9), decoding(1, 8, 9), decoding(2, 12, 9)],
        );
        let mut ctx = ctx(3);
        assert!(replica.step(&mut ctx));
        // Request 0 takes the free block; request 2 gives up its three, one
        // of which goes to request 1.
        assert_eq!(replica.group.len(), 2);
        assert_eq!(replica.pool.free_blocks(), 2);
        let back = replica.pool.waiting.pop().expect("preempted");
        assert_eq!((back.id, back.preemptions, back.blocks), (2, 1, 0));
        assert_eq!(
            (back.computed, back.target, back.recomputed_tokens),
            (0, 13, 12)
        );
        assert_eq!(ctx.steps, 1);
        assert!((replica.clock.now_s() - 0.01).abs() < 1e-12);
        // Requests 0 and 1 decoded a token each.
        assert_eq!(replica.group.kv_tokens(), (5 + 1) + (9 + 1));
        replica.check_invariants();
    }

    #[test]
    fn a_decoder_preempted_for_a_prefill_gives_back_its_token_to_later_prefills() {
        // 40 tokens a step. Requests 0 and 1 prefill; request 2, admitted
        // last, decodes and is preempted for request 0's next chunk (two
        // blocks, one free): its token goes to request 1's chunk.
        let mut cfg = config(16, 1 + 4 + 1, Discipline::Fcfs);
        cfg.budget = 40;
        let running = vec![
            prefilling(0, 40, 16, 5),
            prefilling(1, 100, 0, 5),
            decoding(2, 50, 9),
        ];
        let mut replica = FastReplica::running(cfg, running);
        let mut ctx = ctx(3);
        assert!(replica.step(&mut ctx));
        let back = replica.pool.waiting.pop().expect("preempted");
        assert_eq!((back.id, back.preemptions), (2, 1));
        // Request 0 finished its prompt and decodes; request 1 took the
        // other 16 tokens.
        assert_eq!(ctx.records[0].first_token_s, replica.clock.now_s());
        assert_eq!(replica.group.len(), 1);
        assert_eq!(replica.prefillers[0].computed, 16);
        replica.check_invariants();
    }

    #[test]
    fn the_commonest_steps_admit_the_only_waiting_request_and_continue_its_prefill() {
        // A 150-token prompt in chunks of at most 64 tokens beside one decoder.
        let mut cfg = config(16, 100, Discipline::Fcfs);
        cfg.threshold = 64;
        let step_s = |prefill_tokens: f64| 0.001 * prefill_tokens + 0.01;
        let setup = || {
            let mut replica = FastReplica::running(cfg.clone(), vec![decoding(0, 20, 10)]);
            replica.pool.waiting.push_back(request(1, 150, 5));
            replica
        };
        let mut replica = setup();
        let mut context = ctx(2);
        assert!(replica.single_prefill_steps(1.0, &mut context));
        // 64 + 64 + 22 tokens, then nothing prefills or waits: that shape is not theirs.
        let end = 2.0 * step_s(64.0) + step_s(22.0);
        assert_eq!(context.steps, 3);
        assert_eq!(context.records[1].admitted_s, 0.0);
        assert!((context.records[1].first_token_s - end).abs() < 1e-12);
        assert!((replica.clock.now_s() - end).abs() < 1e-12);
        assert_eq!((replica.group.len(), replica.prefillers.len()), (2, 0));
        // The decoder decoded in each of them.
        assert_eq!(replica.group.kv_tokens(), (20 + 3 + 1) + (150 + 1));
        replica.check_invariants();
        // They stop before the first step starting at or after `t`.
        let mut replica = setup();
        let mut context = ctx(2);
        assert!(replica.single_prefill_steps(step_s(64.0) + 1e-9, &mut context));
        assert_eq!(context.steps, 2);
        assert_eq!(replica.prefillers[0].computed, 128);
    }
}

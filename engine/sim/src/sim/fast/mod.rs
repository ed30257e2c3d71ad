//! The fast engine: exact event skipping.
//!
//! Decoding requests are kept in aggregate ([`group`]): every one of them
//! decodes one token per step, so with G the replica's decode-step counter a
//! decoder's context is `computed = offset + G` for a fixed offset, and the
//! group keeps the sum of the offsets, a histogram of them modulo the block
//! size and a calendar of the steps at which decoders finish.
//!
//! While nothing is prefilling and the head of the waiting queue cannot be
//! admitted, consecutive steps are identical decode-only steps, skipped k at
//! a time in closed form ([`decode_run`]). Steps with prefill chunks or
//! admissions are executed one by one with the decoders still in aggregate
//! ([`step`]): only the decoders that need a block are visited, and only when
//! the blocks run short (preemption). Both follow the step rules of
//! [`crate::sim::rules`], shared with the reference stepper.
//!
//! This file holds the replica's state and the driver that picks, event by
//! event, a skipped run or an executed step. The property tests in
//! `tests/engine/oracle.rs` check that every request's times equal the
//! reference stepper's.

mod decode_run;
mod group;
mod step;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use self::decode_run::DecodeRun;
use self::group::DecodeGroup;
use super::rules::Pool;
use super::state::{Active, Clock, ReqId};
use super::{Ctx, Replica, ReplicaConfig, Status, Time};
use crate::model::step_time::DecodePieces;

pub struct FastReplica {
    cfg: ReplicaConfig,
    /// When the next step may start, compensated ([`Clock`]).
    clock: Clock,
    /// Free blocks, the waiting queue, the admission count.
    pool: Pool,
    busy_s: f64,
    /// The decoding requests.
    group: DecodeGroup,
    /// Prefilling requests in admission order, fully explicit.
    prefillers: Vec<Active>,
    /// Scratch list of (admit_seq, slot) (kept to reuse its allocation).
    scratch: Vec<(u64, usize)>,
    /// Scratch list of requests whose prefill a step completed.
    promoted: Vec<Active>,
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
    /// Abandons the requests, waiting or running, whose client timeout has
    /// passed by `now` (they end at their timeout), freeing their blocks.
    /// (Out of line: only scenarios with timeouts call it.)
    #[inline(never)]
    fn expire_timeouts(&mut self, now: f64, ctx: &mut Ctx) {
        while let Some(Reverse((Time(at), id))) = self.timeouts.peek().copied() {
            if at > now {
                break;
            }
            self.timeouts.pop();
            self.deferred = None;
            if let Some(r) = self.pool.waiting.remove(id) {
                ctx.close(&r, Status::TimedOut, at);
            } else if let Some(i) = self.prefillers.iter().position(|r| r.id == id) {
                let r = self.prefillers.remove(i);
                self.pool.free.give(r.blocks);
                ctx.close(&r, Status::TimedOut, at);
            } else if let Some(slot) = self.group.slot_of(id) {
                let d = self.group.leave(slot);
                self.pool.free.give(d.blocks);
                ctx.close(&d, Status::TimedOut, at);
            }
        }
    }

    /// Completes, at `end_s`, the decoders done by now. (The check
    /// inlines; most steps complete nothing.)
    #[inline]
    fn complete_finished(&mut self, end_s: f64, ctx: &mut Ctx) {
        if self.group.any_finished() {
            self.pool
                .free
                .give(self.group.complete_finished(end_s, ctx));
        }
    }

    fn next_timeout_s(&self) -> f64 {
        self.timeouts
            .peek()
            .map_or(f64::INFINITY, |Reverse((Time(t), _))| *t)
    }

    /// Runs every step that starts before `t`, exactly. (The checks inline;
    /// most calls have nothing to do.)
    #[inline]
    fn advance_exact(&mut self, t: f64, ctx: &mut Ctx) {
        if self.clock.now_s() < t && !self.is_idle() {
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
        while self.clock.now_s() < t && !self.is_idle() {
            if ctx.must_stop() {
                return;
            }
            if self.cfg.timeouts {
                self.expire_timeouts(self.clock.now_s(), ctx);
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
                    run.steps_before(limit - self.clock.now_s())
                };
                if k > 0 {
                    self.skip(k, run.duration_s(k), ctx);
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

    fn is_idle(&self) -> bool {
        self.group.len() == 0 && self.prefillers.is_empty() && self.pool.waiting.is_empty()
    }

    /// Debug builds (and so every test) check the aggregates against the
    /// explicit state after each event: blocks held + free = capacity, the
    /// histogram and offset sum describe the decoders, slots and order hold.
    #[cfg(any(debug_assertions, test))]
    fn check_invariants(&self) {
        let held =
            self.group.check() + self.prefillers.iter().map(|p| p.blocks as u64).sum::<u64>();
        assert_eq!(
            held + self.pool.free_blocks() as u64,
            self.cfg.total_blocks as u64,
            "KV blocks leaked or over-allocated"
        );
        assert!(self.group.len() + self.prefillers.len() <= self.cfg.max_num_seqs);
        assert!(
            self.prefillers
                .windows(2)
                .all(|w| w[0].admit_seq < w[1].admit_seq)
        );
        assert!(self.prefillers.iter().all(|p| !p.is_decoding()));
    }
}

#[cfg(test)]
impl FastReplica {
    /// A replica of `cfg` running `running` (in admission order, with state
    /// explicit as of now): those done with their prompt decode, the others
    /// prefill. Each holds the blocks for its context; the rest are free.
    fn running(cfg: ReplicaConfig, running: Vec<Active>) -> FastReplica {
        let mut replica = FastReplica::new(cfg);
        for mut r in running {
            r.blocks = replica.cfg.block_size.blocks_for(r.computed);
            r.admit_seq = replica.pool.next_admit_seq;
            replica.pool.next_admit_seq += 1;
            replica.pool.free.take(r.blocks);
            if r.is_decoding() {
                replica.group.join(r);
            } else {
                replica.prefillers.push(r);
            }
        }
        replica.check_invariants();
        replica
    }
}

impl Replica for FastReplica {
    fn new(cfg: ReplicaConfig) -> Self {
        FastReplica {
            clock: Clock::default(),
            pool: Pool::new(&cfg),
            busy_s: 0.0,
            group: DecodeGroup::new(
                cfg.block_size,
                cfg.discipline == crate::params::Discipline::Priority,
            ),
            prefillers: Vec::new(),
            scratch: Vec::new(),
            promoted: Vec::new(),
            timeouts: BinaryHeap::new(),
            quiet_until: f64::NEG_INFINITY,
            requested_s: 0.0,
            deferred: None,
            pieces: DecodePieces::new(&cfg.step_time, cfg.max_num_seqs as u64),
            cfg,
        }
    }

    fn pool(&self) -> &Pool {
        &self.pool
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
        if t > self.quiet_until && self.clock.now_s() < t && !self.is_idle() {
            self.run_steps(t, true, ctx);
        }
    }

    fn sync(&mut self, ctx: &mut Ctx) {
        self.advance_exact(self.requested_s, ctx);
    }

    fn advance_exact(&mut self, t: f64, ctx: &mut Ctx) {
        FastReplica::advance_exact(self, t, ctx);
    }

    fn enqueue(&mut self, request: Active, t: f64, ctx: &mut Ctx) {
        // Up to where the cluster advanced it: `t`, or a little before it
        // with closed loops (see `Cluster::steps_before`).
        self.advance_exact(self.requested_s.min(t), ctx);
        self.quiet_until = f64::NEG_INFINITY;
        self.deferred = None;
        if self.is_idle() {
            self.clock.wait_until(t);
        }
        if self.cfg.timeouts && request.timeout_at_s.is_finite() {
            self.timeouts
                .push(Reverse((Time(request.timeout_at_s), request.id)));
        }
        self.pool.waiting.push_back(request);
    }

    fn running_len(&self) -> usize {
        self.group.len() + self.prefillers.len()
    }

    fn busy_s(&self) -> f64 {
        self.busy_s
    }

    fn clock_s(&self) -> f64 {
        self.clock.now_s()
    }

    fn close_unfinished(&mut self, end_s: f64, ctx: &mut Ctx) {
        self.advance_exact(end_s, ctx);
        self.deferred = None;
        self.group
            .leave_all(|d| ctx.close(&d, Status::Unfinished, end_s));
        for r in self
            .prefillers
            .drain(..)
            .chain(self.pool.waiting.take_all())
        {
            ctx.close(&r, Status::Unfinished, end_s);
        }
        self.pool.free.reset(self.cfg.total_blocks);
    }
}

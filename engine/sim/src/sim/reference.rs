//! The reference stepper: one engine step at a time, every request explicit.
//! Simple and slow on purpose: it is the oracle the fast engine is checked
//! against. It applies the step rules of [`super::rules`] (which the fast
//! engine shares) to one running list in admission order; everything the
//! fast engine does in aggregate is written out here request by request.
//!
//! # One step (see docs/engine.md)
//! 1. Timeouts due at the step's start are abandoned.
//! 2. Running decodes, in admission order, get one token each.
//! 3. Running prefills, in admission order, get `min(left, threshold, budget)`.
//! 4. When a request's KV blocks cannot be allocated, the victim (least
//!    urgent under priority, else most recently admitted) is preempted to the
//!    waiting queue until the allocation fits or the request itself was
//!    preempted, which ends the running phase.
//! 5. Only if nothing was preempted: admit from the head of the waiting queue
//!    while budget, sequence slots and KV blocks allow; stop at the first that
//!    does not fit.
//! 6. The step lasts `step_s(shape)`; tokens, first tokens and completions
//!    take effect at its end.
//!
//! Under the prefill-first schedule, steps 2 to 5 become: if the head of the
//! waiting queue can be admitted whole, admit whole prompts while they fit
//! and run them alone (the decodes wait); otherwise run the decodes alone
//! (step 2 with step 4's preemptions), admitting nobody.

use crate::model::step_time::StepShape;
use crate::params::Schedule;
use crate::sim::free_blocks::FreeBlocks;
use crate::sim::rules::{self, Pool, blocks_needed, victim_index};
use crate::sim::state::{Active, Clock};
use crate::sim::{Ctx, ReplicaConfig, Status};

/// Builds one step over an explicit running list (admission order): rules
/// 2 to 5, or their prefill-first form. Marks the scheduled requests
/// (`sched > 0`) and returns the step's shape, how many of its prompt
/// tokens recompute preempted requests' contexts, and whether anything was
/// preempted. Preempted requests go back to the pool's waiting queue;
/// admitted ones join the end of `running`.
fn schedule_step(
    cfg: &ReplicaConfig,
    running: &mut Vec<Active>,
    pool: &mut Pool,
    now: f64,
    ctx: &mut Ctx,
) -> (StepShape, u64, bool) {
    let mut budget = cfg.budget;
    let preempted = match cfg.schedule {
        Schedule::DecodeFirst => {
            let preempted = schedule_running(cfg, running, pool, &mut budget);
            if !preempted {
                pool.admit(cfg, &mut budget, 0, running, now, ctx);
            }
            preempted
        }
        Schedule::PrefillFirst => {
            let before = running.len();
            pool.admit_whole(cfg, &mut budget, 0, running, now, ctx);
            // The decodes run only in a step that admitted nobody.
            running.len() == before && schedule_running(cfg, running, pool, &mut budget)
        }
    };
    let mut shape = StepShape::default();
    let mut recomputed = 0;
    for r in running.iter().filter(|r| r.sched > 0) {
        if r.is_decoding() {
            shape.add_decode(r.computed);
        } else {
            shape.add_prefill(r.computed, r.sched);
            recomputed += r.recomputed_in(r.sched);
        }
    }
    (shape, recomputed, preempted)
}

/// Rules 2 to 4: the running decodes, then the running prefills, each in
/// admission order, take their tokens from `budget`, preempting victims
/// when blocks run short. Returns whether anything was preempted.
fn schedule_running(
    cfg: &ReplicaConfig,
    running: &mut Vec<Active>,
    pool: &mut Pool,
    budget: &mut u64,
) -> bool {
    let mut preempted_any = false;
    let mut stopped = false;
    for decode_phase in [true, false] {
        let mut i = 0;
        while i < running.len() && !stopped {
            let r = &running[i];
            if r.is_decoding() != decode_phase || r.sched > 0 {
                i += 1;
                continue;
            }
            let tokens = r.wanted_tokens(cfg.threshold, *budget);
            if tokens == 0 {
                i += 1;
                continue;
            }
            let need = blocks_needed(r, tokens, cfg.block_size);
            let mut self_preempted = false;
            while need > pool.free_blocks() {
                let v = victim_index(running, cfg.discipline);
                pool.preempt(running.remove(v), budget);
                preempted_any = true;
                if v == i {
                    self_preempted = true;
                    break;
                }
                if v < i {
                    i -= 1;
                }
            }
            if self_preempted {
                stopped = true;
                break;
            }
            pool.grant(&mut running[i], tokens, need, budget);
            i += 1;
        }
    }
    preempted_any
}

/// Applies a step of `dt` seconds ending at `end_s` to the scheduled requests
/// of `list` (rule 6): tokens computed, busy time attributed in proportion to
/// tokens, first tokens and completions recorded. Completed requests leave
/// `list` and free their blocks.
fn apply_step(
    list: &mut Vec<Active>,
    dt: f64,
    step_tokens: u64,
    end_s: f64,
    free: &mut FreeBlocks,
    ctx: &mut Ctx,
) {
    let per_token_s = dt / step_tokens as f64;
    let mut i = 0;
    while i < list.len() {
        let r = &mut list[i];
        if r.sched == 0 {
            i += 1;
            continue;
        }
        let tokens = std::mem::take(&mut r.sched);
        rules::compute(r, tokens, per_token_s, end_s, ctx);
        if rules::is_done(r) {
            let done = list.remove(i);
            free.give(done.blocks);
            ctx.close(&done, Status::Completed, end_s);
        } else {
            i += 1;
        }
    }
}

/// The reference replica.
pub struct RefReplica {
    cfg: ReplicaConfig,
    /// When the next step may start, compensated ([`Clock`]).
    clock: Clock,
    /// The running requests in admission order.
    running: Vec<Active>,
    pool: Pool,
    busy_s: f64,
}

impl RefReplica {
    /// Rule 1: the requests, waiting or running, whose client timeout has
    /// passed by `now` are abandoned (ending at their timeout), and their
    /// blocks freed.
    fn expire_timeouts(&mut self, now: f64, ctx: &mut Ctx) {
        for r in self.pool.waiting.drain_where(|r| r.timeout_at_s <= now) {
            ctx.close(&r, Status::TimedOut, r.timeout_at_s);
        }
        let mut i = 0;
        while i < self.running.len() {
            if self.running[i].timeout_at_s <= now {
                let r = self.running.remove(i);
                self.pool.free.give(r.blocks);
                ctx.close(&r, Status::TimedOut, r.timeout_at_s);
            } else {
                i += 1;
            }
        }
    }

    /// One step; false when nothing could be scheduled or preempted (a stall).
    fn step(&mut self, ctx: &mut Ctx) -> bool {
        let now = self.clock.now_s();
        let (shape, recomputed, preempted) =
            schedule_step(&self.cfg, &mut self.running, &mut self.pool, now, ctx);
        let tokens = shape.tokens();
        if tokens == 0 {
            // Nothing was scheduled: everything that could run was preempted
            // (the next step admits again), or a stall.
            return preempted;
        }
        let dt = self.cfg.step_time.step_s(&shape);
        (ctx.batches).step(&shape, recomputed, dt, self.pool.used_blocks());
        let end = self.clock.add(dt);
        apply_step(&mut self.running, dt, tokens, end, &mut self.pool.free, ctx);
        self.busy_s += dt;
        ctx.steps += 1;
        ctx.events += 1;
        true
    }
}

impl super::Replica for RefReplica {
    fn new(cfg: ReplicaConfig) -> Self {
        RefReplica {
            clock: Clock::default(),
            running: Vec::new(),
            pool: Pool::new(&cfg),
            busy_s: 0.0,
            cfg,
        }
    }

    fn pool(&self) -> &Pool {
        &self.pool
    }

    fn advance_until(&mut self, t: f64, ctx: &mut Ctx) {
        while self.clock.now_s() < t && !(self.running.is_empty() && self.pool.waiting.is_empty()) {
            if ctx.must_stop() {
                return;
            }
            self.expire_timeouts(self.clock.now_s(), ctx);
            if (self.running.is_empty() && self.pool.waiting.is_empty()) || !self.step(ctx) {
                return;
            }
            #[cfg(debug_assertions)]
            {
                let held: u64 = self.running.iter().map(|r| r.blocks as u64).sum();
                assert_eq!(
                    held + self.pool.free_blocks() as u64,
                    self.cfg.total_blocks as u64,
                    "KV blocks leaked"
                );
                let block_size = self.cfg.block_size.size();
                assert!(
                    self.running
                        .iter()
                        .all(|r| r.blocks as u64 == r.computed.div_ceil(block_size)),
                    "a request holds other than the blocks for its tokens"
                );
                // (The victim rule takes the last as the most recently admitted.)
                assert!(
                    self.running
                        .windows(2)
                        .all(|w| w[0].admit_seq < w[1].admit_seq),
                    "running list out of admission order"
                );
                assert!(self.running.len() <= self.cfg.max_num_seqs);
            }
        }
    }

    fn sync(&mut self, _ctx: &mut Ctx) {}

    fn advance_exact(&mut self, t: f64, ctx: &mut Ctx) {
        self.advance_until(t, ctx);
    }

    fn enqueue(&mut self, request: Active, t: f64, _ctx: &mut Ctx) {
        // An idle replica's clock jumps to the arrival.
        if self.running.is_empty() && self.pool.waiting.is_empty() {
            self.clock.wait_until(t);
        }
        self.pool.waiting.push_back(request);
    }

    fn running_len(&self) -> usize {
        self.running.len()
    }

    fn busy_s(&self) -> f64 {
        self.busy_s
    }

    fn clock_s(&self) -> f64 {
        self.clock.now_s()
    }

    fn close_unfinished(&mut self, end_s: f64, ctx: &mut Ctx) {
        for r in self.running.drain(..).chain(self.pool.waiting.take_all()) {
            ctx.close(&r, Status::Unfinished, end_s);
        }
        self.pool.free.reset(self.cfg.total_blocks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::step_time::StepTimeModel;
    use crate::params::Discipline;
    use crate::sim::fast::FastReplica;
    use crate::sim::testing::{config, ctx, request};
    use crate::sim::{Replica, RequestRecord};

    /// Request 0 (a 100-token prompt, 5 output tokens) arrives at 0 s and
    /// request 1 (50 tokens, 2 output tokens) at 0.125 s, during request
    /// 0's third step. A step lasts 2 ms, plus 1 ms per prefill token, plus
    /// 10 ms when it decodes. Returns both records and the step count.
    fn two_requests<R: Replica>(schedule: Schedule) -> (Vec<RequestRecord>, u64) {
        let mut cfg = config(16, 1000, Discipline::Fcfs);
        cfg.schedule = schedule;
        cfg.step_time = StepTimeModel::AlphaBeta {
            alpha: 0.001,
            beta: 0.01,
            overhead: 0.002,
        };
        let mut replica = R::new(cfg);
        let mut ctx = ctx(2);
        for (id, input, output, at_s) in [(0, 100, 5, 0.0), (1, 50, 2, 0.125)] {
            let mut r = request(id, input, output);
            r.arrival_s = at_s;
            replica.advance_until(at_s, &mut ctx);
            replica.enqueue(r, at_s, &mut ctx);
        }
        replica.advance_exact(f64::INFINITY, &mut ctx);
        (ctx.records, ctx.steps)
    }

    /// (admitted, first token, end) of each record, each within 1e-12 of
    /// `want`.
    fn check_times(records: &[RequestRecord], want: [[f64; 3]; 2]) {
        for (i, (r, want)) in records.iter().zip(want).enumerate() {
            let got = [r.admitted_s, r.first_token_s, r.end_s];
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-12, "request {i}: {got:?}, want {want:?}");
            }
            assert_eq!(r.status, Status::Completed);
        }
    }

    /// Decode-first, by hand: 0-0.102 prefill of request 0 (2 + 100 ms);
    /// its decodes end at 0.114 and 0.126; 0.126-0.188 its decode with
    /// request 1's whole prompt (2 + 50 + 10 ms); 0.188-0.200 both decode,
    /// and both are done.
    fn decode_first_by_hand<R: Replica>() {
        let (records, steps) = two_requests::<R>(Schedule::DecodeFirst);
        check_times(&records, [[0.0, 0.102, 0.2], [0.126, 0.188, 0.2]]);
        assert_eq!(steps, 5);
    }

    /// Prefill-first, by hand: the same three steps to 0.126; then request
    /// 1's prompt alone, 0.126-0.178 (2 + 50 ms), request 0's decode
    /// waiting; 0.178-0.190 both decode (request 1 is done); 0.190-0.202
    /// request 0's last token. Request 0 paused for exactly one step and
    /// ends one step overhead later; request 1's first token comes 10 ms
    /// sooner. Busy time: request 0 has three steps of its own (102 + 12 +
    /// 12 ms), half of the shared one (6 ms) and its last (12 ms).
    fn prefill_first_by_hand<R: Replica>() {
        let (records, steps) = two_requests::<R>(Schedule::PrefillFirst);
        check_times(&records, [[0.0, 0.102, 0.202], [0.126, 0.178, 0.19]]);
        assert_eq!(steps, 6);
        assert!((records[0].busy_s - 0.144).abs() < 1e-12);
        assert!((records[1].busy_s - 0.058).abs() < 1e-12);
    }

    #[test]
    fn reference_decode_first_mixes_an_arrival_into_a_decode_step() {
        decode_first_by_hand::<RefReplica>();
    }

    #[test]
    fn fast_decode_first_mixes_an_arrival_into_a_decode_step() {
        decode_first_by_hand::<FastReplica>();
    }

    #[test]
    fn reference_prefill_first_pauses_the_decode_for_one_step() {
        prefill_first_by_hand::<RefReplica>();
    }

    #[test]
    fn fast_prefill_first_pauses_the_decode_for_one_step() {
        prefill_first_by_hand::<FastReplica>();
    }
}

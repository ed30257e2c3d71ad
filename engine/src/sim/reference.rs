//! The reference stepper: one engine step at a time, every request explicit.
//! Simple and slow on purpose: it is the oracle the fast engine is checked
//! against. The per-step rules live here (`schedule_step`, `apply_step`)
//! and the fast engine calls them for the rare steps it cannot do in
//! aggregate (preemptions).
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

use crate::model::step_time::StepShape;
use crate::sim::state::{Active, WaitQueue, blocks_for, victim_index};
use crate::sim::{Ctx, ReplicaConfig, Status};

/// Builds one step over an explicit running list (admission order). Marks
/// the scheduled requests (`sched > 0`) and returns the step's shape and
/// whether anything was preempted.
/// Preempted requests go to `waiting`; admitted ones join `running`.
pub(crate) fn schedule_step(
    cfg: &ReplicaConfig,
    running: &mut Vec<Active>,
    waiting: &mut WaitQueue,
    free_blocks: &mut u32,
    next_admit_seq: &mut u64,
    now: f64,
    ctx: &mut Ctx,
) -> (StepShape, bool) {
    let mut budget = cfg.budget;
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
            let tokens = r.wanted_tokens(cfg.threshold, budget);
            if tokens == 0 {
                i += 1;
                continue;
            }
            let need = blocks_for(r.computed + tokens, cfg.block_size) - r.blocks;
            let mut self_preempted = false;
            while need > *free_blocks {
                let v = victim_index(running, cfg.discipline);
                let mut victim = running.remove(v);
                budget += victim.sched;
                *free_blocks += victim.blocks;
                victim.reset_for_recompute();
                waiting.push_front(victim);
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
            let r = &mut running[i];
            *free_blocks -= need;
            r.blocks += need;
            r.sched = tokens;
            budget -= tokens;
            i += 1;
        }
    }
    if !preempted_any {
        while budget > 0 && running.len() < cfg.max_num_seqs {
            let Some(head) = waiting.peek() else { break };
            let tokens = head.wanted_tokens(cfg.threshold, budget);
            let need = blocks_for(head.computed + tokens, cfg.block_size);
            if need > *free_blocks {
                break;
            }
            let Some(mut r) = waiting.pop() else { break };
            *free_blocks -= need;
            r.blocks = need;
            r.sched = tokens;
            r.admit_seq = *next_admit_seq;
            *next_admit_seq += 1;
            budget -= tokens;
            let record = &mut ctx.records[r.id as usize];
            if record.admitted_s.is_nan() {
                record.admitted_s = now;
            }
            running.push(r);
        }
    }
    let mut shape = StepShape::default();
    for r in running.iter().filter(|r| r.sched > 0) {
        if r.is_decoding() {
            shape.add_decode(r.computed);
        } else {
            shape.add_prefill(r.computed, r.sched);
        }
    }
    (shape, preempted_any)
}

/// Applies a step of `dt` seconds ending at `end_s` to the scheduled requests
/// of `list`: tokens computed, busy time attributed in proportion to tokens,
/// first tokens and completions recorded. Completed requests leave `list`
/// and free their blocks. Calls `on_decode_start` for each request that
/// finished its prefill this step and goes on decoding.
pub(crate) fn apply_step(
    list: &mut Vec<Active>,
    dt: f64,
    step_tokens: u64,
    end_s: f64,
    free_blocks: &mut u32,
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
        let was_decoding = r.is_decoding();
        r.busy_s += per_token_s * r.sched as f64;
        r.computed += r.sched;
        r.sched = 0;
        if was_decoding || r.computed == r.target {
            r.generated += 1;
            let record = &mut ctx.records[r.id as usize];
            if record.first_token_s.is_nan() {
                record.first_token_s = end_s;
            }
        }
        if r.generated >= r.output {
            let done = list.remove(i);
            *free_blocks += done.blocks;
            ctx.close(&done, Status::Completed, end_s);
        } else {
            i += 1;
        }
    }
}

/// The reference replica.
pub(crate) struct RefReplica {
    cfg: ReplicaConfig,
    /// When the next step may start \[s\]: `sum + err` rounded.
    clock: f64,
    /// The clock as a compensated (Neumaier) sum of step durations, so that
    /// millions of steps do not accumulate a rounding drift: the fast
    /// engine sums a run of steps in closed form, and the two must agree to
    /// rounding however long the run (`oracle.rs`, long-run case).
    sum: f64,
    err: f64,
    running: Vec<Active>,
    waiting: WaitQueue,
    free_blocks: u32,
    next_admit_seq: u64,
    busy_s: f64,
}

impl RefReplica {
    /// Adds `dt` to the compensated clock and returns the new clock.
    fn add_to_clock(&mut self, dt: f64) -> f64 {
        let t = self.sum + dt;
        self.err += if self.sum.abs() >= dt.abs() {
            (self.sum - t) + dt
        } else {
            (dt - t) + self.sum
        };
        self.sum = t;
        self.clock = t + self.err;
        self.clock
    }

    fn expire_timeouts(&mut self, now: f64, ctx: &mut Ctx) {
        for r in self.waiting.drain_where(|r| r.timeout_at_s <= now) {
            ctx.close(&r, Status::TimedOut, r.timeout_at_s);
        }
        let mut i = 0;
        while i < self.running.len() {
            if self.running[i].timeout_at_s <= now {
                let r = self.running.remove(i);
                self.free_blocks += r.blocks;
                ctx.close(&r, Status::TimedOut, r.timeout_at_s);
            } else {
                i += 1;
            }
        }
    }

    /// One step; false when nothing could be scheduled or preempted (a stall).
    fn step(&mut self, ctx: &mut Ctx) -> bool {
        let now = self.clock;
        let (shape, preempted) = schedule_step(
            &self.cfg,
            &mut self.running,
            &mut self.waiting,
            &mut self.free_blocks,
            &mut self.next_admit_seq,
            now,
            ctx,
        );
        let tokens = shape.tokens();
        if tokens == 0 {
            // Everything running was preempted (the next step re-admits), or a stall.
            return preempted;
        }
        let dt = self.cfg.step_time.step_s(&shape);
        let end = self.add_to_clock(dt);
        apply_step(
            &mut self.running,
            dt,
            tokens,
            end,
            &mut self.free_blocks,
            ctx,
        );
        self.busy_s += dt;
        ctx.steps += 1;
        ctx.events += 1;
        true
    }
}

impl super::Replica for RefReplica {
    fn new(cfg: ReplicaConfig) -> Self {
        RefReplica {
            clock: 0.0,
            sum: 0.0,
            err: 0.0,
            running: Vec::new(),
            waiting: WaitQueue::new(cfg.discipline, cfg.timeouts),
            free_blocks: cfg.total_blocks,
            next_admit_seq: 0,
            busy_s: 0.0,
            cfg,
        }
    }

    fn advance_until(&mut self, t: f64, ctx: &mut Ctx) {
        while self.clock < t && !(self.running.is_empty() && self.waiting.is_empty()) {
            if ctx.over_budget() {
                return;
            }
            self.expire_timeouts(self.clock, ctx);
            if (self.running.is_empty() && self.waiting.is_empty()) || !self.step(ctx) {
                return;
            }
            #[cfg(debug_assertions)]
            {
                let held: u64 = self.running.iter().map(|r| r.blocks as u64).sum();
                assert_eq!(
                    held + self.free_blocks as u64,
                    self.cfg.total_blocks as u64,
                    "KV blocks leaked"
                );
                assert!(
                    self.running
                        .iter()
                        .all(|r| r.blocks == blocks_for(r.computed, self.cfg.block_size))
                );
                assert!(self.running.len() <= self.cfg.max_num_seqs);
            }
        }
    }

    fn sync(&mut self, _ctx: &mut Ctx) {}

    fn enqueue(&mut self, request: Active, t: f64, _ctx: &mut Ctx) {
        if self.running.is_empty() && self.waiting.is_empty() && t > self.clock {
            (self.clock, self.sum, self.err) = (t, t, 0.0);
        }
        self.waiting.push_back(request);
    }

    fn waiting_len(&self) -> usize {
        self.waiting.len()
    }

    fn running_len(&self) -> usize {
        self.running.len()
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
        for r in self.running.drain(..).chain(self.waiting.take_all()) {
            ctx.close(&r, Status::Unfinished, end_s);
        }
        self.free_blocks = self.cfg.total_blocks;
    }
}

//! The step rules both engines follow (docs/engine.md, "One engine step"):
//! the KV blocks a request holds, which running request is preempted, what
//! preemption and admission do (chunked, or whole under the prefill-first
//! schedule, "Schedules"), and how a step's tokens take effect.
//!
//! The reference stepper applies them to one explicit running list. The
//! fast engine applies them to its prefilling requests one by one, and to
//! the decoders it keeps in aggregate wherever one is named: the victim, a
//! preempted decoder (its block arithmetic on the aggregate goes through
//! [`BlockSize`] too). Nothing here knows either engine's data structures,
//! so the oracle depends on the rules, not on the fast engine.

use crate::params::Discipline;
use crate::sim::free_blocks::{FreeBlocks, Resume};
use crate::sim::state::Active;
use crate::sim::wait_queue::WaitQueue;
use crate::sim::{Ctx, ReplicaConfig};

/// The KV block size \[tokens\]: a request computing up to L tokens holds
/// ⌈L / size⌉ blocks ([`BlockSize::blocks_for`]).
///
/// Quotients and remainders go by shift and mask when the size is a power of
/// two (as vLLM's block sizes are): a 64-bit division costs more than the
/// rest of a skipped run of decode steps.
#[derive(Clone, Copy, Debug)]
pub struct BlockSize {
    size: u64,
    shift: u32,
    power_of_two: bool,
}

impl BlockSize {
    pub fn new(size: u64) -> BlockSize {
        BlockSize {
            size,
            shift: size.trailing_zeros(),
            power_of_two: size.is_power_of_two(),
        }
    }

    /// The size \[tokens\].
    pub fn size(self) -> u64 {
        self.size
    }

    /// `x / size`, rounded down.
    #[inline]
    pub fn div(self, x: u64) -> u64 {
        if self.power_of_two {
            x >> self.shift
        } else {
            x / self.size
        }
    }

    /// `x mod size`.
    #[inline]
    pub fn rem(self, x: u64) -> u64 {
        if self.power_of_two {
            x & (self.size - 1)
        } else {
            x % self.size
        }
    }

    /// `x mod size` in `[0, size)`, also for negative `x`.
    #[inline]
    pub fn rem_euclid(self, x: i64) -> u64 {
        if self.power_of_two {
            x as u64 & (self.size - 1)
        } else {
            x.rem_euclid(self.size as i64) as u64
        }
    }

    /// Blocks needed to hold `tokens` tokens: ⌈tokens / size⌉.
    #[inline]
    pub fn blocks_for(self, tokens: u64) -> u32 {
        (self.div(tokens) + (self.rem(tokens) != 0) as u64) as u32
    }
}

/// The new blocks `r` must be given to compute `tokens` more tokens (a
/// waiting request holds none).
#[inline]
pub fn blocks_needed(r: &Active, tokens: u64, block_size: BlockSize) -> u32 {
    block_size.blocks_for(r.computed + tokens) - r.blocks
}

/// Whether running request `a` is preempted before running request `b`:
/// under the priority discipline the less urgent (larger priority value,
/// then later arrival, then larger id), as vLLM does; otherwise the more
/// recently admitted.
#[inline]
pub fn preempted_before(discipline: Discipline, a: &Active, b: &Active) -> bool {
    match discipline {
        Discipline::Priority => (a.priority, a.arrival_s, a.id) > (b.priority, b.arrival_s, b.id),
        _ => a.admit_seq > b.admit_seq,
    }
}

/// The index of the victim in `running`: the request preempted before every
/// other. `running` must be in admission order and not empty.
pub fn victim_index(running: &[Active], discipline: Discipline) -> usize {
    let last = running.len() - 1;
    if discipline != Discipline::Priority {
        // The most recently admitted.
        return last;
    }
    let mut victim = last;
    for (i, r) in running.iter().enumerate() {
        if preempted_before(discipline, r, &running[victim]) {
            victim = i;
        }
    }
    victim
}

/// What a replica's steps draw on and give back to: its free KV blocks, its
/// waiting queue and the count of admissions so far.
#[derive(Debug)]
pub struct Pool {
    pub free: FreeBlocks,
    /// All the replica's blocks.
    total_blocks: u32,
    pub block_size: BlockSize,
    pub waiting: WaitQueue,
    /// The admission number (`Active::admit_seq`) of the next request admitted.
    pub next_admit_seq: u64,
}

impl Pool {
    pub fn new(cfg: &ReplicaConfig) -> Pool {
        Pool {
            free: FreeBlocks::new(cfg.total_blocks, cfg.prefix_caching),
            total_blocks: cfg.total_blocks,
            block_size: cfg.block_size,
            waiting: WaitQueue::new(cfg.discipline, cfg.timeouts),
            next_admit_seq: 0,
        }
    }

    /// Free blocks.
    #[inline(always)]
    pub fn free_blocks(&self) -> u32 {
        self.free.count()
    }

    /// Blocks in use.
    pub fn used_blocks(&self) -> u32 {
        self.total_blocks - self.free.count()
    }

    /// Schedules `tokens` tokens of `r` in the step being built, with the
    /// `need` new blocks they take ([`blocks_needed`]; they must be free).
    #[inline]
    pub fn grant(&mut self, r: &mut Active, tokens: u64, need: u32, budget: &mut u64) {
        self.free.take(need);
        r.blocks += need;
        r.sched = tokens;
        *budget -= tokens;
    }

    /// Preemption by recompute: `r`, taken out of the running requests,
    /// frees every block it holds (with prefix caching, those full of its
    /// context stay cached until allocation takes them), gives back to
    /// `budget` the tokens it was granted in this step and returns to the
    /// front of the waiting queue (by its key under the keyed disciplines).
    // Off the scheduling loop's hot path: inlined into the reference
    // stepper's loop (as LTO did once the simulator became a crate of its
    // own), it cost `sojourn bench --quick` 1.6% more instructions.
    #[inline(never)]
    pub fn preempt(&mut self, mut r: Active, budget: &mut u64) {
        *budget += r.sched;
        let full = self.block_size.div(r.computed) as u32;
        self.free.give_preempted(r.id, r.blocks, full);
        r.reset_for_recompute();
        self.waiting.push_front(r);
    }

    /// Marks `r`, just taken from the head of the waiting queue, as admitted
    /// in a step starting at `now`: it gets the next admission number, and
    /// its record the time of its first admission. That is never before
    /// its arrival: with closed loops a step starting a hair before an
    /// arrival counts as starting at it (`sim::TIE`), and admits it there.
    #[inline(always)]
    pub fn stamp_admitted(&mut self, r: &mut Active, now: f64, ctx: &mut Ctx) {
        r.admit_seq = self.next_admit_seq;
        self.next_admit_seq += 1;
        let record = &mut ctx.records[r.id as usize];
        if record.admitted_s.is_nan() {
            record.admitted_s = now.max(record.arrival_s);
        }
    }

    /// Admission, for a step in which nothing was preempted: while `budget`
    /// and sequence slots remain, the head of the waiting queue is admitted
    /// with its first chunk if the blocks for it fit; the first that does not
    /// fit stops admission (no skipping ahead). Admitted requests join the
    /// end of `running`; `others` counts the running requests not in it.
    /// (Inlined: most steps admit nobody, and a call costs more than that.)
    #[inline(always)]
    pub fn admit(
        &mut self,
        cfg: &ReplicaConfig,
        budget: &mut u64,
        others: usize,
        running: &mut Vec<Active>,
        now: f64,
        ctx: &mut Ctx,
    ) {
        while *budget > 0 && others + running.len() < cfg.max_num_seqs {
            let Some(head) = self.head_chunk(cfg, *budget, 0) else {
                break;
            };
            if !self.fits(&head, 0) {
                break;
            }
            self.admit_head(head, budget, running, now, ctx);
        }
    }

    /// How the head of the waiting queue would be admitted with `budget`
    /// tokens left after `taken` more blocks are taken from the free queue:
    /// its first chunk, with what it takes back of its cached blocks.
    /// (The common case inlines: a head never preempted, or nothing cached.)
    #[inline(always)]
    pub fn head_chunk(&self, cfg: &ReplicaConfig, budget: u64, taken: u64) -> Option<Admission> {
        let head = self.waiting.peek()?;
        if head.preemptions > 0 && !self.free.caches_nothing() {
            return Some(self.resumed_chunk(head, cfg, budget, taken));
        }
        Some(Admission::first_chunk(head, cfg, budget, None))
    }

    /// [`Pool::head_chunk`] for a head that may find blocks of its own
    /// still cached.
    #[inline(never)]
    fn resumed_chunk(
        &self,
        head: &Active,
        cfg: &ReplicaConfig,
        budget: u64,
        taken: u64,
    ) -> Admission {
        let resume = self.resume(head, taken);
        Admission::first_chunk(&Resume::view(resume, head), cfg, budget, resume)
    }

    /// Whether the blocks of `admission` are free after `taken` more are
    /// taken: its new blocks and those it takes back.
    #[inline(always)]
    pub fn fits(&self, admission: &Admission, taken: u64) -> bool {
        let back = admission.resume.map_or(0, |r| r.blocks);
        admission.need as u64 + back as u64 + taken <= self.free.count() as u64
    }

    /// Admits the head of the waiting queue as `admission` says (its blocks
    /// must be free), at the end of `running`.
    #[inline(always)]
    fn admit_head(
        &mut self,
        admission: Admission,
        budget: &mut u64,
        running: &mut Vec<Active>,
        now: f64,
        ctx: &mut Ctx,
    ) {
        if let Some(mut r) = self.waiting.pop() {
            self.take_back(&mut r, admission.resume);
            self.stamp_admitted(&mut r, now, ctx);
            self.grant(&mut r, admission.tokens, admission.need, budget);
            running.push(r);
        }
    }

    /// Under prefill-first, the tokens and new blocks with which the head of
    /// the waiting queue would be admitted whole (its prompt, or its
    /// recomputation, in one step), if they fit: `budget` tokens left, a
    /// sequence slot beside the `running` running requests, its blocks free.
    fn whole_head(&self, cfg: &ReplicaConfig, budget: u64, running: usize) -> Option<Admission> {
        if running >= cfg.max_num_seqs {
            return None;
        }
        let head = self.waiting.peek()?;
        let resume = self.resume(head, 0);
        let r = Resume::view(resume, head);
        let tokens = r.target - r.computed;
        let need = blocks_needed(&r, tokens, cfg.block_size);
        let admission = Admission {
            tokens,
            need,
            resume,
        };
        (tokens <= budget && self.fits(&admission, 0)).then_some(admission)
    }

    /// Under prefill-first, whether the next step is a prefill step: the head
    /// of the waiting queue can be admitted whole beside the `running`
    /// running requests. Decodes take no blocks before it (they wait
    /// through a prefill step), so this does not depend on them.
    pub fn admits_whole(&self, cfg: &ReplicaConfig, running: usize) -> bool {
        self.whole_head(cfg, cfg.budget, running).is_some()
    }

    /// Admission under prefill-first (vLLM V0's `_schedule_prefills` without
    /// chunking): while the head of the waiting queue fits whole (its tokens
    /// in the `budget` left, a sequence slot, its blocks), it is admitted
    /// with all its tokens; the first that does not fit stops admission.
    /// `long_prefill_threshold` plays no part. Admitted requests join the
    /// end of `running`; `others` counts the running requests not in it.
    pub fn admit_whole(
        &mut self,
        cfg: &ReplicaConfig,
        budget: &mut u64,
        others: usize,
        running: &mut Vec<Active>,
        now: f64,
        ctx: &mut Ctx,
    ) {
        while let Some(admission) = self.whole_head(cfg, *budget, others + running.len()) {
            self.admit_head(admission, budget, running, now, ctx);
        }
    }
}

/// How a waiting request is admitted: the tokens of its first chunk, the
/// new blocks they take, and what it takes back of its cached blocks.
#[derive(Clone, Copy, Debug)]
pub struct Admission {
    pub tokens: u64,
    pub need: u32,
    pub resume: Option<Resume>,
}

impl Admission {
    /// `r`'s next chunk with `budget` tokens left (`r` as `resume` gives it
    /// back, when it does).
    #[inline(always)]
    pub fn first_chunk(
        r: &Active,
        cfg: &ReplicaConfig,
        budget: u64,
        resume: Option<Resume>,
    ) -> Admission {
        let tokens = r.wanted_tokens(cfg.threshold, budget);
        Admission {
            tokens,
            need: blocks_needed(r, tokens, cfg.block_size),
            resume,
        }
    }
}

/// A step's tokens take effect at its end: `r` computed `tokens` tokens in
/// a step ending at `end_s` that took `per_token_s` per token. It is
/// attributed that busy time, its context grows, and if that context now
/// covers its whole target (a decoding request's always does; a prefill
/// chunk never goes past it) it samples an output token, its record keeping
/// the time of the first.
#[inline]
pub fn compute(r: &mut Active, tokens: u64, per_token_s: f64, end_s: f64, ctx: &mut Ctx) {
    r.busy_s += per_token_s * tokens as f64;
    r.computed += tokens;
    if r.is_decoding() {
        r.generated += 1;
        let record = &mut ctx.records[r.id as usize];
        if record.first_token_s.is_nan() {
            record.first_token_s = end_s;
        }
    }
}

/// Whether `r` has produced its last output token.
#[inline]
pub fn is_done(r: &Active) -> bool {
    r.generated >= r.output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::testing::{config, ctx, request};

    #[test]
    fn block_size_arithmetic_is_division_for_every_size() {
        for size in 1..=40u64 {
            let bs = BlockSize::new(size);
            for x in 0..5 * size + 3 {
                assert_eq!(bs.blocks_for(x) as u64, x.div_ceil(size), "{x} / {size}");
                assert_eq!(bs.div(x), x / size);
                assert_eq!(bs.rem(x), x % size);
                let y = x as i64 - 2 * size as i64;
                assert_eq!(bs.rem_euclid(y), y.rem_euclid(size as i64) as u64);
            }
        }
    }

    #[test]
    fn a_request_needs_the_blocks_its_new_tokens_cross_into() {
        let bs = BlockSize::new(16);
        let mut r = request(0, 100, 10);
        r.computed = 32;
        r.blocks = 2;
        // Token 33 opens a third block; 16 more fill it exactly.
        assert_eq!(blocks_needed(&r, 1, bs), 1);
        assert_eq!(blocks_needed(&r, 16, bs), 1);
        assert_eq!(blocks_needed(&r, 17, bs), 2);
        r.computed = 31;
        assert_eq!(blocks_needed(&r, 1, bs), 0);
    }

    #[test]
    fn victim_is_least_urgent_under_priority_else_most_recent() {
        let mut running = vec![request(1, 1, 1), request(2, 1, 1), request(3, 1, 1)];
        for (r, (priority, admit_seq)) in running.iter_mut().zip([(0, 4), (5, 5), (1, 6)]) {
            r.priority = priority;
            r.admit_seq = admit_seq;
        }
        assert_eq!(victim_index(&running, Discipline::Priority), 1);
        assert_eq!(victim_index(&running, Discipline::Fcfs), 2);
        // Equal priorities: the later arrival goes first, under priority only.
        running[1].priority = 1;
        assert_eq!(victim_index(&running, Discipline::Priority), 2);
        running[2].arrival_s = -1.0;
        assert_eq!(victim_index(&running, Discipline::Priority), 1);
        assert_eq!(victim_index(&running, Discipline::EarliestDeadlineFirst), 2);
        assert!(!preempted_before(
            Discipline::Fcfs,
            &running[0],
            &running[0]
        ));
    }

    #[test]
    fn preemption_frees_blocks_refunds_tokens_and_requeues_at_the_front() {
        let cfg = config(16, 10, Discipline::Fcfs);
        let mut pool = Pool::new(&cfg);
        pool.free.reset(3);
        pool.waiting.push_back(request(1, 50, 5));
        let mut r = request(0, 40, 5);
        r.cached = 8;
        r.computed = 40;
        r.generated = 2;
        r.blocks = 3;
        r.sched = 1;
        let mut budget = 7;
        pool.preempt(r, &mut budget);
        assert_eq!((pool.free_blocks(), budget), (6, 8));
        let back = pool.waiting.pop().expect("requeued");
        assert_eq!(back.id, 0, "a preempted request goes back to the front");
        assert_eq!((back.computed, back.target, back.blocks), (8, 42, 0));
        assert_eq!((back.recomputed_tokens, back.preemptions), (32, 1));
    }

    #[test]
    fn with_prefix_caching_a_preempted_request_takes_back_what_was_not_evicted() {
        let mut cfg = config(16, 10, Discipline::Fcfs);
        cfg.prefix_caching = true;
        let mut pool = Pool::new(&cfg);
        pool.free.reset(0);
        // 70 tokens computed (4 full blocks and a partial one), 2 generated.
        let mut r = request(0, 68, 5);
        (r.computed, r.generated, r.blocks) = (70, 2, 5);
        let mut budget = 100;
        pool.preempt(r, &mut budget);
        assert_eq!(pool.free_blocks(), 5);
        // Another request's allocation takes the partial block, then the
        // last full block; two blocks come free behind them.
        pool.free.take(2);
        pool.free.give(2);
        let mut ctx = ctx(1);
        let mut running = Vec::new();
        pool.admit(&cfg, &mut budget, 0, &mut running, 1.0, &mut ctx);
        let back = &running[0];
        // Three blocks (48 tokens) cached: 22 tokens left to compute again,
        // in two more blocks beside the three taken back.
        assert_eq!((back.computed, back.blocks, back.sched), (48, 5, 22));
        assert_eq!(back.recomputed_tokens, 70 - 48);
        assert_eq!(pool.free_blocks(), 0);
        // Without prefix caching the same request recomputes everything.
        cfg.prefix_caching = false;
        let mut pool = Pool::new(&cfg);
        pool.free.reset(0);
        let mut r = request(0, 68, 5);
        (r.computed, r.generated, r.blocks) = (70, 2, 5);
        pool.preempt(r, &mut budget);
        pool.free.take(2);
        pool.free.give(2);
        let mut running = Vec::new();
        pool.admit(&cfg, &mut budget, 0, &mut running, 1.0, &mut ctx);
        let back = &running[0];
        assert_eq!((back.computed, back.blocks, back.sched), (0, 5, 70));
        assert_eq!(back.recomputed_tokens, 70);
    }

    #[test]
    fn admission_stops_at_the_first_request_that_does_not_fit() {
        let cfg = config(16, 10, Discipline::Fcfs);
        let mut pool = Pool::new(&cfg);
        pool.free.reset(4);
        pool.next_admit_seq = 7;
        // Needs 2 blocks, then 3 (more than the 2 left), then 1.
        for (id, input) in [(0, 20), (1, 40), (2, 3)] {
            pool.waiting.push_back(request(id, input, 5));
        }
        let mut ctx = ctx(3);
        // Request 0 was admitted before, at 1 s, and preempted since.
        ctx.records[0].admitted_s = 1.0;
        let (mut budget, mut running) = (1000, Vec::new());
        pool.admit(&cfg, &mut budget, 0, &mut running, 2.5, &mut ctx);
        assert_eq!(running.len(), 1, "head-of-line blocking: no skipping ahead");
        assert_eq!((running[0].blocks, running[0].sched), (2, 20));
        assert_eq!(running[0].admit_seq, 7);
        assert_eq!(
            (pool.free_blocks(), budget, pool.next_admit_seq),
            (2, 980, 8)
        );
        assert_eq!(
            ctx.records[0].admitted_s, 1.0,
            "the first admission's time stays"
        );
        assert!(ctx.records[1].admitted_s.is_nan());
        assert_eq!(pool.waiting.len(), 2);
    }

    #[test]
    fn admission_respects_sequence_slots_and_the_token_budget() {
        let mut cfg = config(16, 100, Discipline::Fcfs);
        cfg.max_num_seqs = 3;
        let mut pool = Pool::new(&cfg);
        for id in 0..4 {
            pool.waiting.push_back(request(id, 30, 5));
        }
        let mut ctx = ctx(4);
        // Two slots left beside the one running elsewhere.
        let (mut budget, mut running) = (1000, Vec::new());
        pool.admit(&cfg, &mut budget, 1, &mut running, 3.0, &mut ctx);
        assert_eq!(running.len(), 2);
        assert_eq!(ctx.records[0].admitted_s, 3.0);
        // 40 tokens of budget: the first gets its whole prompt, the next the rest.
        let (mut budget, mut running) = (40, Vec::new());
        pool.admit(&cfg, &mut budget, 0, &mut running, 0.0, &mut ctx);
        let sched: Vec<u64> = running.iter().map(|r| r.sched).collect();
        assert_eq!((sched, budget), (vec![30, 10], 0));
    }

    #[test]
    fn whole_admission_takes_whole_prompts_until_one_does_not_fit() {
        let cfg = config(16, 100, Discipline::Fcfs);
        let mut pool = Pool::new(&cfg);
        for (id, input) in [(0, 30), (1, 50), (2, 10)] {
            pool.waiting.push_back(request(id, input, 5));
        }
        let mut ctx = ctx(3);
        // 70 tokens: the 30-token prompt, then not the 50-token one (a
        // chunk of it would fit), and nothing past it.
        assert!(pool.admits_whole(&cfg, 0));
        let (mut budget, mut running) = (70, Vec::new());
        pool.admit_whole(&cfg, &mut budget, 0, &mut running, 1.5, &mut ctx);
        let sched: Vec<u64> = running.iter().map(|r| r.sched).collect();
        assert_eq!((sched, budget, pool.waiting.len()), (vec![30], 40, 2));
        assert_eq!(ctx.records[0].admitted_s, 1.5);
        // The 50-token prompt needs 4 blocks: 3 free are not enough.
        pool.free.reset(3);
        assert!(!pool.admits_whole(&cfg, 0));
        pool.free.reset(4);
        assert!(pool.admits_whole(&cfg, 0));
        // Nor is a full batch.
        assert!(!pool.admits_whole(&cfg, cfg.max_num_seqs));
    }

    #[test]
    fn a_step_samples_a_token_when_a_prompt_completes_or_a_request_decodes() {
        let mut ctx = ctx(1);
        let mut r = request(0, 10, 3);
        compute(&mut r, 6, 0.5, 1.0, &mut ctx);
        assert_eq!((r.computed, r.generated, r.busy_s), (6, 0, 3.0));
        assert!(ctx.records[0].first_token_s.is_nan());
        compute(&mut r, 4, 0.25, 2.0, &mut ctx);
        assert_eq!((r.computed, r.generated), (10, 1));
        assert_eq!(ctx.records[0].first_token_s, 2.0);
        compute(&mut r, 1, 0.25, 3.0, &mut ctx);
        assert_eq!((r.computed, r.generated), (11, 2));
        assert_eq!(
            ctx.records[0].first_token_s, 2.0,
            "the first token's time stays"
        );
        assert!(!is_done(&r));
        compute(&mut r, 1, 0.25, 4.0, &mut ctx);
        assert!(is_done(&r));
    }
}

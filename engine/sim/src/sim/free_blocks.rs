//! A replica's free KV blocks in the order vLLM V1's free-block queue hands
//! them out, for its prefix cache's hold on preempted requests
//! (docs/engine.md, "Preempted requests keep their cached blocks").
//!
//! With prefix caching on (vLLM V1's default), a preempted request's blocks
//! go back to the free queue still holding their KV, tail first, behind
//! every block freed before them; allocation takes blocks from the queue's
//! front, evicting what they held. When the request is scheduled again,
//! the full blocks of its context that no allocation has taken since are a
//! prefix-cache hit: it recomputes only what was evicted. Without prefix
//! caching the queue is a count.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};

use crate::sim::rules::Pool;
use crate::sim::state::{Active, ReqId};

/// A preempted request's cached blocks in the queue, and the anonymous
/// free blocks queued after them (before the next run).
#[derive(Clone, Copy, Debug)]
struct Run {
    id: ReqId,
    /// Its context's leading blocks still cached (allocation evicts its
    /// last ones first).
    blocks: u32,
    after: u32,
}

/// The free blocks: their count and, with prefix caching, which of them
/// still hold a preempted request's KV, in eviction order.
#[derive(Clone, Debug)]
pub struct FreeBlocks {
    count: u32,
    /// Whether preempted requests' blocks stay cached.
    retain: bool,
    /// Anonymous free blocks before the first run (while there is one;
    /// without runs every free block is anonymous and only `count` is kept,
    /// so that taking and giving cost what a count costs).
    front: u32,
    runs: VecDeque<Run>,
    /// The sequence number of `runs[0]` (runs are numbered as pushed).
    base: u64,
    /// The run of each request with cached blocks left, by number.
    index: BTreeMap<ReqId, u64>,
}

impl FreeBlocks {
    pub fn new(count: u32, retain: bool) -> FreeBlocks {
        FreeBlocks {
            count,
            retain,
            front: 0,
            runs: VecDeque::new(),
            base: 0,
            index: BTreeMap::new(),
        }
    }

    /// Whether no preempted request has blocks cached (always so without
    /// prefix caching).
    #[inline(always)]
    pub fn caches_nothing(&self) -> bool {
        self.index.is_empty()
    }

    /// Free blocks, cached or not.
    #[inline(always)]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Takes `n` blocks (which must be free) from the front of the queue.
    #[inline(always)]
    pub fn take(&mut self, n: u32) {
        self.count -= n;
        if !self.runs.is_empty() {
            if n <= self.front {
                self.front -= n;
            } else {
                self.take_through_runs(n);
            }
        }
    }

    #[inline(never)]
    fn take_through_runs(&mut self, mut n: u32) {
        let t = n.min(self.front);
        self.front -= t;
        n -= t;
        while n > 0 {
            let run = &mut self.runs[0];
            let t = n.min(run.blocks);
            run.blocks -= t;
            n -= t;
            if run.blocks == 0 {
                let (id, number) = (run.id, self.base);
                if self.index.get(&id) == Some(&number) {
                    self.index.remove(&id);
                }
            }
            let t = n.min(run.after);
            run.after -= t;
            n -= t;
            if run.blocks == 0 {
                // Nothing of it left before its anonymous blocks: they are
                // the new front.
                self.front = run.after;
                self.runs.pop_front();
                self.base += 1;
            }
        }
    }

    /// Gives back `n` blocks that hold nothing anyone will reuse (a
    /// request finished or abandoned, or prefix caching off).
    #[inline(always)]
    pub fn give(&mut self, n: u32) {
        self.count += n;
        if let Some(run) = self.runs.back_mut() {
            run.after += n;
        }
    }

    /// Gives back the `blocks` blocks of request `id`, preempted with
    /// `full` of them full of its context: its last block (if partial) is
    /// evicted first, then its full blocks from the last.
    pub fn give_preempted(&mut self, id: ReqId, blocks: u32, full: u32) {
        let full = full.min(blocks);
        if !self.retain || full == 0 {
            self.give(blocks);
            return;
        }
        self.give(blocks - full);
        if self.runs.is_empty() {
            self.front = self.count;
        }
        self.count += full;
        self.index.insert(id, self.base + self.runs.len() as u64);
        self.runs.push_back(Run {
            id,
            blocks: full,
            after: 0,
        });
    }

    /// The cached blocks request `id` would find if `taken` more blocks were
    /// first taken from the front of the queue.
    pub fn cached_after(&self, id: ReqId, taken: u64) -> u32 {
        let Some(&number) = self.index.get(&id) else {
            return 0;
        };
        let at = (number - self.base) as usize;
        let ahead: u64 = self.front as u64
            + self
                .runs
                .range(..at)
                .map(|r| (r.blocks + r.after) as u64)
                .sum::<u64>();
        let blocks = self.runs[at].blocks as u64;
        (blocks - taken.saturating_sub(ahead).min(blocks)) as u32
    }

    /// Request `id` takes back the first `blocks` of its cached blocks
    /// (a prefix-cache hit): they leave the free queue; any of its cached
    /// blocks beyond them stay free, anonymous.
    pub fn reclaim(&mut self, id: ReqId, blocks: u32) {
        let Some(number) = self.index.remove(&id) else {
            return;
        };
        let run = &mut self.runs[(number - self.base) as usize];
        let blocks = blocks.min(run.blocks);
        run.after += run.blocks - blocks;
        run.blocks = 0;
        self.count -= blocks;
        // A run with no cached blocks left is anonymous space: fold it into
        // what comes before it.
        let at = (number - self.base) as usize;
        if at == 0 {
            self.front += self.runs[0].after;
            self.runs.pop_front();
            self.base += 1;
            while let Some(run) = self.runs.front()
                && run.blocks == 0
            {
                self.front += run.after;
                self.runs.pop_front();
                self.base += 1;
            }
        }
    }

    /// Every block free again, nothing cached.
    pub fn reset(&mut self, count: u32) {
        *self = FreeBlocks::new(count, self.retain);
    }
}

/// A preempted request's context as admission finds it: the leading
/// blocks still cached, and the tokens they hold, computed again without
/// being recomputed.
#[derive(Clone, Copy, Debug)]
pub struct Resume {
    pub blocks: u32,
    pub computed: u64,
}

impl Pool {
    /// What a prefix-cache hit gives back to `r` (waiting, holding no
    /// blocks) if it is scheduled after `taken` more blocks are taken from
    /// the free queue: its cached leading blocks, at most those before its
    /// last token (vLLM computes that one again for its logits). `None`
    /// when that is no more than `r` has computed (its shared-prefix hits).
    /// (The check inlines; the lookup is out of line: most admissions are
    /// of requests never preempted, or with nothing cached.)
    #[inline(always)]
    pub fn resume(&self, r: &Active, taken: u64) -> Option<Resume> {
        if r.preemptions == 0 || self.free.caches_nothing() {
            return None;
        }
        self.cached_context(r, taken)
    }

    #[inline(never)]
    fn cached_context(&self, r: &Active, taken: u64) -> Option<Resume> {
        let most = self.block_size.div(r.target.saturating_sub(1)) as u32;
        let blocks = self.free.cached_after(r.id, taken).min(most);
        let computed = blocks as u64 * self.block_size.size();
        (computed > r.computed).then_some(Resume { blocks, computed })
    }

    /// `r`, just taken from the waiting queue, takes back its cached blocks
    /// as `resume` found them (its other cached blocks stay free).
    #[inline(always)]
    pub fn take_back(&mut self, r: &mut Active, resume: Option<Resume>) {
        if r.preemptions == 0 || self.free.caches_nothing() {
            return;
        }
        self.take_back_cached(r, resume);
    }

    #[inline(never)]
    fn take_back_cached(&mut self, r: &mut Active, resume: Option<Resume>) {
        let Some(resume) = resume else {
            self.free.reclaim(r.id, 0);
            return;
        };
        self.free.reclaim(r.id, resume.blocks);
        r.recomputed_tokens -= resume.computed - r.computed;
        r.computed = resume.computed;
        r.blocks = resume.blocks;
    }
}

impl Resume {
    /// `r` (waiting) with its context as `resume` gives it back, or as it
    /// is when nothing does.
    pub fn view(resume: Option<Resume>, r: &Active) -> Cow<'_, Active> {
        match resume {
            None => Cow::Borrowed(r),
            Some(resume) => Cow::Owned(Active {
                computed: resume.computed,
                blocks: resume.blocks,
                ..r.clone()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queue as a plain list of block owners (None: anonymous), front
    /// first, to check the runs against.
    fn listed(q: &FreeBlocks) -> Vec<Option<ReqId>> {
        if q.runs.is_empty() {
            return vec![None; q.count as usize];
        }
        let mut out = vec![None; q.front as usize];
        for r in &q.runs {
            out.extend(std::iter::repeat_n(Some(r.id), r.blocks as usize));
            out.extend(std::iter::repeat_n(None, r.after as usize));
        }
        out
    }

    #[test]
    fn allocation_evicts_the_oldest_freed_blocks_first_and_a_run_from_its_tail() {
        let mut q = FreeBlocks::new(4, true);
        q.take(4);
        q.give_preempted(7, 3, 2); // one partial block, two full
        q.give(2); // a request finished after
        assert_eq!(listed(&q), [None, Some(7), Some(7), None, None]);
        assert_eq!(q.count(), 5);
        assert_eq!(q.cached_after(7, 0), 2);
        assert_eq!(q.cached_after(7, 2), 1);
        assert_eq!(q.cached_after(7, 9), 0);
        q.take(2);
        assert_eq!(q.cached_after(7, 0), 1);
        q.reclaim(7, 1);
        assert_eq!(q.count(), 2);
        assert_eq!(listed(&q), [None, None]);
        assert_eq!(q.cached_after(7, 0), 0);
    }

    #[test]
    fn a_reclaim_leaves_what_it_does_not_take_free_and_anonymous() {
        let mut q = FreeBlocks::new(10, true);
        q.take(10);
        q.give_preempted(1, 4, 4);
        q.give_preempted(2, 3, 3);
        q.reclaim(2, 2);
        assert_eq!(q.count(), 5);
        assert_eq!(listed(&q), [Some(1), Some(1), Some(1), Some(1), None]);
        q.reclaim(1, 4);
        assert_eq!(listed(&q), [None]);
        assert_eq!(q.count(), 1);
        // Taken through entirely, the run is gone from the index.
        q.give_preempted(3, 2, 2);
        q.take(3);
        assert_eq!(q.cached_after(3, 0), 0);
        assert!(q.index.is_empty());
    }

    #[test]
    fn without_prefix_caching_a_preemption_frees_anonymously() {
        let mut q = FreeBlocks::new(3, false);
        q.take(3);
        q.give_preempted(5, 3, 3);
        assert_eq!(q.count(), 3);
        assert_eq!(q.cached_after(5, 0), 0);
        assert_eq!(listed(&q), [None, None, None]);
    }
}

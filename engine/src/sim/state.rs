//! Per-request scheduler state and the waiting queue, shared by both engines.

use std::collections::{BTreeMap, VecDeque};

use crate::model::scenario::Class;
use crate::params::Discipline;
use crate::sim::workload::RequestSpec;

/// Index of a request in the run (arrival order).
pub type ReqId = u32;

/// A request inside a replica: waiting or running.
///
/// Token accounting: `computed` tokens have KV in the cache. A request is
/// *prefilling* while `computed < target` and *decoding* afterwards; `target`
/// is the prompt plus every output token generated so far (recomputed after a
/// preemption). The step that brings `computed` to `target` samples one output
/// token; each decode step computes one token and samples the next. A request
/// is done when `generated == output`.
#[derive(Clone, Debug)]
pub struct Active {
    pub id: ReqId,
    pub arrival_s: f64,
    pub priority: i32,
    /// Absolute deadline (for earliest-deadline-first) \[s\].
    pub deadline_at_s: f64,
    /// When the client abandons the request \[s\]; infinity without a timeout.
    pub timeout_at_s: f64,
    pub input: u64,
    pub cached: u64,
    pub output: u32,
    pub computed: u64,
    pub target: u64,
    pub generated: u32,
    pub blocks: u32,
    /// Admission order on this replica; larger is more recent.
    pub admit_seq: u64,
    /// Tokens scheduled in the step being built (0: not scheduled).
    pub sched: u64,
    /// Replica-seconds attributed to this request so far.
    pub busy_s: f64,
    /// Tokens computed and then thrown away by preemptions.
    pub recomputed_tokens: u64,
    pub preemptions: u32,
    /// Fast engine, decoding requests only: the decode-step counter when
    /// `computed`, `generated`, `blocks` and `busy_s` were last brought up to date.
    pub g_sync: u64,
    /// Fast engine: the per-decoder busy accumulator at `g_sync`.
    pub busy_sync: f64,
}

impl Active {
    /// A request as it arrives: nothing computed but its prefix-cache hits.
    pub fn arriving(id: ReqId, spec: &RequestSpec, class: &Class) -> Active {
        let t = spec.arrival_s;
        let input = spec.input_tokens as u64;
        Active {
            id,
            arrival_s: t,
            priority: class.priority,
            deadline_at_s: t + class.deadline_s,
            timeout_at_s: class.timeout_s.map_or(f64::INFINITY, |d| t + d),
            input,
            cached: spec.cached_tokens as u64,
            output: spec.output_tokens,
            computed: spec.cached_tokens as u64,
            target: input,
            generated: 0,
            blocks: 0,
            admit_seq: 0,
            sched: 0,
            busy_s: 0.0,
            recomputed_tokens: 0,
            preemptions: 0,
            g_sync: 0,
            busy_sync: 0.0,
        }
    }

    pub fn is_decoding(&self) -> bool {
        self.computed >= self.target
    }

    /// Tokens this request would compute in a step with `budget` tokens left.
    pub fn wanted_tokens(&self, threshold: u64, budget: u64) -> u64 {
        if self.is_decoding() {
            1
        } else {
            (self.target - self.computed).min(threshold).min(budget)
        }
    }

    /// Preemption by recompute: all KV is dropped; the prompt and every
    /// generated token must be computed again (prefix-cache hits excepted).
    pub fn reset_for_recompute(&mut self) {
        self.recomputed_tokens += self.computed - self.cached;
        self.computed = self.cached;
        self.target = self.input + self.generated as u64;
        self.blocks = 0;
        self.sched = 0;
        self.preemptions += 1;
    }
}

/// Ordering key of a waiting request: smaller is served first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WaitKey(u64, i64);

/// Maps an f64 to a u64 with the same order (for non-NaN values).
fn ordered_bits(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The waiting queue of one replica, in discipline order. Preempted requests
/// go back to the front under FCFS (as vLLM's `prepend_request`), and by their
/// key under the other disciplines.
#[derive(Clone, Debug)]
pub struct WaitQueue {
    discipline: Discipline,
    items: Items,
    front: i64,
    back: i64,
}

/// FCFS without timeouts (the common case) needs only a deque; everything
/// else an ordered map, plus keys by request when requests can time out.
#[derive(Clone, Debug)]
enum Items {
    Deque(VecDeque<Active>),
    Keyed {
        map: BTreeMap<WaitKey, Active>,
        keys: Option<BTreeMap<ReqId, WaitKey>>,
    },
}

impl WaitQueue {
    pub fn new(discipline: Discipline, track_keys: bool) -> WaitQueue {
        let items = if discipline == Discipline::Fcfs && !track_keys {
            Items::Deque(VecDeque::new())
        } else {
            Items::Keyed {
                map: BTreeMap::new(),
                keys: track_keys.then(BTreeMap::new),
            }
        };
        WaitQueue {
            discipline,
            items,
            front: 0,
            back: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match &self.items {
            Items::Deque(d) => d.len(),
            Items::Keyed { map, .. } => map.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key(&mut self, a: &Active, to_front: bool) -> WaitKey {
        match self.discipline {
            Discipline::Fcfs => {
                if to_front {
                    self.front -= 1;
                    WaitKey(0, self.front)
                } else {
                    self.back += 1;
                    WaitKey(0, self.back)
                }
            }
            Discipline::Priority => WaitKey(ordered_bits(a.priority as f64), a.id as i64),
            Discipline::ShortestInputFirst => {
                WaitKey(ordered_bits((a.target - a.computed) as f64), a.id as i64)
            }
            Discipline::EarliestDeadlineFirst => {
                WaitKey(ordered_bits(a.deadline_at_s), a.id as i64)
            }
        }
    }

    /// A new arrival.
    #[inline]
    pub fn push_back(&mut self, a: Active) {
        if let Items::Deque(d) = &mut self.items {
            return d.push_back(a);
        }
        let key = self.key(&a, false);
        self.insert(key, a);
    }

    /// A preempted request.
    pub fn push_front(&mut self, a: Active) {
        if let Items::Deque(d) = &mut self.items {
            return d.push_front(a);
        }
        let key = self.key(&a, true);
        self.insert(key, a);
    }

    fn insert(&mut self, key: WaitKey, a: Active) {
        if let Items::Keyed { map, keys } = &mut self.items {
            if let Some(keys) = keys {
                keys.insert(a.id, key);
            }
            map.insert(key, a);
        }
    }

    #[inline]
    pub fn peek(&self) -> Option<&Active> {
        match &self.items {
            Items::Deque(d) => d.front(),
            Items::Keyed { map, .. } => map.first_key_value().map(|(_, a)| a),
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Active> {
        match &mut self.items {
            Items::Deque(d) => d.pop_front(),
            Items::Keyed { map, keys } => {
                let (_, a) = map.pop_first()?;
                if let Some(keys) = keys {
                    keys.remove(&a.id);
                }
                Some(a)
            }
        }
    }

    /// Removes request `id` if it is waiting here (needs `track_keys`).
    pub fn remove(&mut self, id: ReqId) -> Option<Active> {
        match &mut self.items {
            Items::Deque(_) => None,
            Items::Keyed { map, keys } => {
                let key = keys.as_mut()?.remove(&id)?;
                map.remove(&key)
            }
        }
    }

    /// Removes every request for which `pred` holds, keeping the order of
    /// the rest (linear; for the reference engine).
    pub fn drain_where(&mut self, pred: impl Fn(&Active) -> bool) -> Vec<Active> {
        let any = match &self.items {
            Items::Deque(d) => d.iter().any(&pred),
            Items::Keyed { map, .. } => map.values().any(&pred),
        };
        if !any {
            return Vec::new();
        }
        let (doomed, kept): (Vec<Active>, Vec<Active>) =
            self.take_all().into_iter().partition(|a| pred(a));
        for a in kept {
            self.push_back(a);
        }
        doomed
    }

    /// Removes and returns everything, in order.
    pub fn take_all(&mut self) -> Vec<Active> {
        match &mut self.items {
            Items::Deque(d) => d.drain(..).collect(),
            Items::Keyed { map, keys } => {
                if let Some(keys) = keys {
                    keys.clear();
                }
                std::mem::take(map).into_values().collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::testing::request;

    fn req(id: ReqId, priority: i32, deadline: f64, input: u64) -> Active {
        let mut a = request(id, input, 1);
        a.priority = priority;
        a.deadline_at_s = deadline;
        a
    }

    fn order(q: &mut WaitQueue) -> Vec<ReqId> {
        std::iter::from_fn(|| q.pop().map(|a| a.id)).collect()
    }

    #[test]
    fn fcfs_serves_in_arrival_order_with_preempted_first() {
        let mut q = WaitQueue::new(Discipline::Fcfs, true);
        q.push_back(req(1, 0, 0.0, 10));
        q.push_back(req(2, 0, 0.0, 10));
        q.push_front(req(9, 0, 0.0, 10));
        q.push_front(req(8, 0, 0.0, 10));
        assert_eq!(q.remove(2).map(|a| a.id), Some(2));
        assert_eq!(order(&mut q), vec![8, 9, 1]);
    }

    #[test]
    fn keyed_disciplines_order_by_their_key() {
        let mut q = WaitQueue::new(Discipline::Priority, false);
        for (id, prio) in [(1, 2), (2, 0), (3, 2), (4, -1)] {
            q.push_back(req(id, prio, 0.0, 10));
        }
        assert_eq!(order(&mut q), vec![4, 2, 1, 3]);

        let mut q = WaitQueue::new(Discipline::EarliestDeadlineFirst, false);
        for (id, deadline) in [(1, 50.0), (2, 10.0), (3, -5.0)] {
            q.push_back(req(id, 0, deadline, 10));
        }
        assert_eq!(order(&mut q), vec![3, 2, 1]);

        let mut q = WaitQueue::new(Discipline::ShortestInputFirst, false);
        for (id, input) in [(1, 500), (2, 20), (3, 20)] {
            q.push_back(req(id, 0, 0.0, input));
        }
        assert_eq!(order(&mut q), vec![2, 3, 1]);
    }
}

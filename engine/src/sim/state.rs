//! Per-request scheduler state and the waiting queue, shared by both engines.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

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
    /// Prompt tokens, and those of them in the prefix cache. (32 bits, as
    /// drawn: with `recompute_until` the struct stays 128 bytes, which
    /// moves without a call to `memcpy`.)
    pub input: u32,
    pub cached: u32,
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
    /// The context it had reached when last preempted (the most it ever
    /// computed before): prefill chunks below it are recomputation.
    pub recompute_until: u64,
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
        let input = spec.input_tokens;
        Active {
            id,
            arrival_s: t,
            priority: class.priority,
            deadline_at_s: t + class.deadline_s,
            timeout_at_s: class.timeout_s.map_or(f64::INFINITY, |d| t + d),
            input,
            cached: spec.cached_tokens,
            output: spec.output_tokens,
            computed: spec.cached_tokens as u64,
            target: input as u64,
            generated: 0,
            blocks: 0,
            admit_seq: 0,
            sched: 0,
            busy_s: 0.0,
            recomputed_tokens: 0,
            recompute_until: 0,
            preemptions: 0,
            g_sync: 0,
            busy_sync: 0.0,
        }
    }

    pub fn is_decoding(&self) -> bool {
        self.computed >= self.target
    }

    /// Of a prefill chunk of `chunk` tokens from its current context, those
    /// it computed before and lost to a preemption.
    #[inline]
    pub fn recomputed_in(&self, chunk: u64) -> u64 {
        self.recompute_until
            .saturating_sub(self.computed)
            .min(chunk)
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
        self.recomputed_tokens += self.computed - self.cached as u64;
        self.recompute_until = self.recompute_until.max(self.computed);
        self.computed = self.cached as u64;
        self.target = self.input as u64 + self.generated as u64;
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

/// FCFS without timeouts (the common case) needs only a deque; every other
/// discipline keyed entries over a slab of requests. (An ordered map of the
/// requests themselves moved each request, about 140 bytes, several times
/// per insertion and removal: a quarter of a small fleet's run under the
/// priority discipline, where preemptions send requests back often.)
#[derive(Clone, Debug)]
enum Items {
    Deque(VecDeque<Active>),
    Keyed(Keyed),
}

/// Entries (key, slot) over `slots`, in key order. Keys are unique (a
/// request's id, or FCFS's counters, breaks ties), so the order is the
/// keys' order alone. A request removed by id leaves its entry behind, dead
/// (its slot empty); dead entries are dropped when they reach the front,
/// and only then is their slot reused, so the front is always a waiting
/// request.
#[derive(Clone, Debug, Default)]
struct Keyed {
    order: Order,
    slots: Vec<Option<Active>>,
    free: Vec<u32>,
    /// Slot by request, when requests can time out (for [`WaitQueue::remove`]).
    by_id: Option<BTreeMap<ReqId, u32>>,
    waiting: usize,
}

/// The entries in key order.
///
/// Under FCFS and priority scheduling the key's first part is shared by
/// many requests (FCFS: every one; priority: every one of a priority) and
/// the second rises with arrivals, so a *lane* per first part, a sorted
/// deque, takes an arrival at its back and a preempted request (an early
/// id, or FCFS's front counter) at or near its front, in O(1) where a heap
/// took O(log n) per insertion and removal (a sixth of a day's run of one
/// priority replica under a deep queue). The lanes are kept in key order,
/// so the first non-empty lane's front is the first entry. Earliest
/// deadline first and shortest input first have keys that differ request
/// by request: a min-heap.
#[derive(Clone, Debug)]
enum Order {
    Lanes(Vec<(u64, VecDeque<(WaitKey, u32)>)>),
    Heap(BinaryHeap<Reverse<(WaitKey, u32)>>),
}

impl Default for Order {
    fn default() -> Order {
        Order::Lanes(Vec::new())
    }
}

impl Order {
    fn for_discipline(discipline: Discipline) -> Order {
        match discipline {
            Discipline::Fcfs | Discipline::Priority => Order::Lanes(Vec::new()),
            Discipline::ShortestInputFirst | Discipline::EarliestDeadlineFirst => {
                Order::Heap(BinaryHeap::new())
            }
        }
    }

    fn push(&mut self, entry: (WaitKey, u32)) {
        match self {
            Order::Heap(heap) => heap.push(Reverse(entry)),
            Order::Lanes(lanes) => {
                let lane_key = entry.0.0;
                let at = lanes.partition_point(|(k, _)| *k < lane_key);
                if lanes.get(at).is_none_or(|(k, _)| *k != lane_key) {
                    lanes.insert(at, (lane_key, VecDeque::new()));
                }
                let lane = &mut lanes[at].1;
                match (lane.front(), lane.back()) {
                    (_, Some(back)) if entry > *back => lane.push_back(entry),
                    (Some(front), _) if entry < *front => lane.push_front(entry),
                    (None, None) => lane.push_back(entry),
                    _ => {
                        let at = lane.partition_point(|e| *e < entry);
                        lane.insert(at, entry);
                    }
                }
            }
        }
    }

    fn first(&self) -> Option<u32> {
        match self {
            Order::Heap(heap) => heap.peek().map(|Reverse((_, slot))| *slot),
            Order::Lanes(lanes) => lanes
                .iter()
                .find_map(|(_, lane)| lane.front())
                .map(|(_, slot)| *slot),
        }
    }

    fn pop_first(&mut self) -> Option<u32> {
        match self {
            Order::Heap(heap) => heap.pop().map(|Reverse((_, slot))| slot),
            Order::Lanes(lanes) => lanes
                .iter_mut()
                .find_map(|(_, lane)| lane.pop_front())
                .map(|(_, slot)| slot),
        }
    }

    /// Every entry's slot, in order; the order is left empty.
    fn drain_in_order(&mut self) -> Vec<u32> {
        match self {
            Order::Heap(heap) => {
                let mut entries = std::mem::take(heap).into_vec();
                entries.sort_unstable();
                entries
                    .iter()
                    .rev()
                    .map(|Reverse((_, slot))| *slot)
                    .collect()
            }
            Order::Lanes(lanes) => std::mem::take(lanes)
                .into_iter()
                .flat_map(|(_, lane)| lane.into_iter().map(|(_, slot)| slot))
                .collect(),
        }
    }

    fn emptied(&self) -> Order {
        match self {
            Order::Heap(_) => Order::Heap(BinaryHeap::new()),
            Order::Lanes(_) => Order::Lanes(Vec::new()),
        }
    }
}

impl Keyed {
    fn new(discipline: Discipline, track_keys: bool) -> Keyed {
        Keyed {
            order: Order::for_discipline(discipline),
            by_id: track_keys.then(BTreeMap::new),
            ..Keyed::default()
        }
    }

    fn insert(&mut self, key: WaitKey, a: Active) {
        let id = a.id;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(a);
                slot
            }
            None => {
                self.slots.push(Some(a));
                (self.slots.len() - 1) as u32
            }
        };
        if let Some(by_id) = &mut self.by_id {
            by_id.insert(id, slot);
        }
        self.order.push((key, slot));
        self.waiting += 1;
    }

    fn peek(&self) -> Option<&Active> {
        self.slots[self.order.first()? as usize].as_ref()
    }

    fn pop(&mut self) -> Option<Active> {
        let slot = self.order.pop_first()?;
        let a = self.slots[slot as usize].take();
        self.free.push(slot);
        if let (Some(by_id), Some(a)) = (&mut self.by_id, &a) {
            by_id.remove(&a.id);
        }
        self.waiting -= 1;
        self.drop_dead_front();
        a
    }

    fn remove(&mut self, id: ReqId) -> Option<Active> {
        let slot = self.by_id.as_mut()?.remove(&id)?;
        let a = self.slots[slot as usize].take()?;
        self.waiting -= 1;
        self.drop_dead_front();
        Some(a)
    }

    fn drop_dead_front(&mut self) {
        while let Some(slot) = self.order.first()
            && self.slots[slot as usize].is_none()
        {
            self.free.push(slot);
            self.order.pop_first();
        }
    }

    /// Every waiting request, in order; the queue is left empty.
    fn take_all(&mut self) -> Vec<Active> {
        let order = self.order.drain_in_order();
        let all = order
            .iter()
            .filter_map(|slot| self.slots[*slot as usize].take())
            .collect();
        *self = Keyed {
            order: self.order.emptied(),
            by_id: self.by_id.take().map(|_| BTreeMap::new()),
            ..Keyed::default()
        };
        all
    }
}

impl WaitQueue {
    pub fn new(discipline: Discipline, track_keys: bool) -> WaitQueue {
        let items = if discipline == Discipline::Fcfs && !track_keys {
            Items::Deque(VecDeque::new())
        } else {
            Items::Keyed(Keyed::new(discipline, track_keys))
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
            Items::Keyed(k) => k.waiting,
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
        if let Items::Keyed(k) = &mut self.items {
            k.insert(key, a);
        }
    }

    #[inline]
    pub fn peek(&self) -> Option<&Active> {
        match &self.items {
            Items::Deque(d) => d.front(),
            Items::Keyed(k) => k.peek(),
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Active> {
        match &mut self.items {
            Items::Deque(d) => d.pop_front(),
            Items::Keyed(k) => k.pop(),
        }
    }

    /// Removes request `id` if it is waiting here (needs `track_keys`).
    pub fn remove(&mut self, id: ReqId) -> Option<Active> {
        match &mut self.items {
            Items::Deque(_) => None,
            Items::Keyed(k) => k.remove(id),
        }
    }

    /// Removes every request for which `pred` holds, keeping the order of
    /// the rest (linear; for the reference engine).
    pub fn drain_where(&mut self, pred: impl Fn(&Active) -> bool) -> Vec<Active> {
        let any = match &self.items {
            Items::Deque(d) => d.iter().any(&pred),
            Items::Keyed(k) => k.slots.iter().flatten().any(&pred),
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
            Items::Keyed(k) => k.take_all(),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::sim::testing::request;

    fn req(id: ReqId, priority: i32, deadline: f64, input: u64) -> Active {
        let mut a = request(id, input, 1);
        a.priority = priority;
        a.deadline_at_s = deadline;
        a
    }

    /// A request moves (into the waiting queue, the running list, a decode
    /// slot) many times: at 128 bytes a move is inline, one byte more and
    /// it is a call to `memcpy` (12% more instructions on a busy day).
    #[test]
    fn a_request_fits_in_128_bytes() {
        assert_eq!(std::mem::size_of::<Active>(), 128);
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

    /// An operation on a queue, for the comparison with a plain list.
    #[derive(Clone, Debug)]
    enum Op {
        Arrive {
            priority: i32,
            deadline: f64,
            input: u64,
        },
        Preempt {
            priority: i32,
            deadline: f64,
            input: u64,
        },
        Pop,
        Remove(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        let fields = (-2..3i32, 0.0..100.0f64, 1..50u64);
        prop_oneof![
            fields
                .clone()
                .prop_map(|(priority, deadline, input)| Op::Arrive {
                    priority,
                    deadline,
                    input
                }),
            fields.prop_map(|(priority, deadline, input)| Op::Preempt {
                priority,
                deadline,
                input
            }),
            Just(Op::Pop),
            any::<u8>().prop_map(Op::Remove),
        ]
    }

    fn discipline() -> impl Strategy<Value = Discipline> {
        prop_oneof![
            Just(Discipline::Fcfs),
            Just(Discipline::Priority),
            Just(Discipline::ShortestInputFirst),
            Just(Discipline::EarliestDeadlineFirst),
        ]
    }

    proptest! {
        /// The queue (deque or heap, with removals leaving dead entries)
        /// serves exactly as a list kept in the discipline's order: FCFS
        /// arrivals at the back and preempted requests at the front, the
        /// others by (key, id).
        #[test]
        fn serves_as_a_list_in_discipline_order(
            discipline in discipline(),
            track_keys in any::<bool>(),
            ops in proptest::collection::vec(op(), 0..200),
        ) {
            let mut q = WaitQueue::new(discipline, track_keys);
            let mut list: Vec<Active> = Vec::new();
            let rank = |a: &Active| match discipline {
                Discipline::Fcfs => 0.0,
                Discipline::Priority => a.priority as f64,
                Discipline::ShortestInputFirst => (a.target - a.computed) as f64,
                Discipline::EarliestDeadlineFirst => a.deadline_at_s,
            };
            let mut next_id = 0;
            for op in ops {
                match op {
                    Op::Arrive { priority, deadline, input }
                    | Op::Preempt { priority, deadline, input } => {
                        let a = req(next_id, priority, deadline, input);
                        next_id += 1;
                        let front = matches!(op, Op::Preempt { .. });
                        let at = if discipline == Discipline::Fcfs {
                            if front { 0 } else { list.len() }
                        } else {
                            let key = (rank(&a), a.id);
                            list.partition_point(|b| (rank(b), b.id) < key)
                        };
                        list.insert(at, a.clone());
                        if front { q.push_front(a) } else { q.push_back(a) }
                    }
                    Op::Pop => {
                        let expected = (!list.is_empty()).then(|| list.remove(0).id);
                        prop_assert_eq!(q.pop().map(|a| a.id), expected);
                    }
                    Op::Remove(pick) => {
                        let id = if next_id == 0 { 0 } else { pick as ReqId % next_id };
                        let at = list.iter().position(|a| a.id == id);
                        let expected = match (track_keys, at) {
                            (true, Some(at)) => Some(list.remove(at).id),
                            _ => None,
                        };
                        prop_assert_eq!(q.remove(id).map(|a| a.id), expected);
                    }
                }
                prop_assert_eq!(q.len(), list.len());
                prop_assert_eq!(q.peek().map(|a| a.id), list.first().map(|a| a.id));
            }
            let rest: Vec<ReqId> = list.iter().map(|a| a.id).collect();
            prop_assert_eq!(q.take_all().iter().map(|a| a.id).collect::<Vec<_>>(), rest);
            prop_assert!(q.is_empty());
        }
    }
}

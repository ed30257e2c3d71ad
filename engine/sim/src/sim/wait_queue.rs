//! The waiting queue of one replica, shared by both engines: FCFS as a
//! deque, the other disciplines as keyed entries over a slab of requests.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use crate::params::Discipline;
use crate::sim::state::{Active, ReqId};

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

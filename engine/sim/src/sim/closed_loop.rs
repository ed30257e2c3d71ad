//! The cluster loop of a run with closed-loop classes, whose arrivals
//! follow completions: replicas step in the order of their next step and
//! stop at each return, so that a returned client's next send is scheduled
//! before any step that starts after it (docs/engine.md, Workload).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Cluster, Replica, Status, Time};

impl<R: Replica> Cluster<'_, R> {
    /// One unit of a run with closed loops, whose arrivals follow
    /// completions. The next known event (an arrival, a closed-loop
    /// timeout, a series sample, the end) is the limit; before it, the busy
    /// replica whose next step starts first runs the steps that start no
    /// later than any other busy replica's next step, until a closed-loop
    /// request returns. Steps so run in order of their start, and a return
    /// ends a step that started after every step run so far, so its
    /// client's next send (at or after the return) is scheduled before any
    /// step that starts after it. Once no busy replica's next step starts
    /// before the limit, the event there is taken.
    pub(super) fn react(&mut self) {
        let sample_s = if self.series.len() < self.max_series_points {
            self.next_sample_s
        } else {
            f64::INFINITY
        };
        let timeout_s = self
            .closed_timeouts
            .peek()
            .map_or(f64::INFINITY, |Reverse((Time(t), _))| *t);
        let arrival_s = self.workload.peek_s();
        let limit = arrival_s.min(timeout_s).min(sample_s).min(self.end_s);
        // A timeout is decided by the steps that start before it (one that
        // completes the request first wins), and the end is no send: only
        // sends and samples take the tie rule of `steps_before`.
        let upto = if limit == timeout_s || limit >= self.end_s {
            limit
        } else {
            self.steps_before(limit)
        };
        if self.step_earliest_replica(upto) {
            return;
        }
        if !self.order.any_busy(&self.replicas) && self.workload.is_finished() {
            self.close();
        } else if limit >= self.end_s {
            self.now_s = self.end_s;
            self.close();
        } else if limit == sample_s {
            self.now_s = limit;
            self.take_samples(limit);
        } else if limit == timeout_s {
            self.now_s = limit;
            self.closed_timeout();
        } else if let Some(spec) = self.workload.next() {
            self.now_s = spec.arrival_s;
            self.deliver(spec);
        }
    }

    /// Runs the busy replica whose next step starts first (before `limit`)
    /// up to the next step of any other busy replica (at least one step),
    /// stopping at a closed-loop return, and schedules the returned
    /// clients' next sends. False when no busy replica starts a step before
    /// `limit` (or the one that does made no progress).
    fn step_earliest_replica(&mut self, limit: f64) -> bool {
        let first = self.order.first_two(&self.replicas);
        #[cfg(debug_assertions)]
        if self.replicas.len() <= 64 {
            debug_assert_eq!(
                first,
                earliest_by_pass(&self.replicas),
                "the order is stale"
            );
        }
        let Some((i, clock, second)) = first else {
            return false;
        };
        if clock >= limit {
            return false;
        }
        // Steps starting at or before the other replicas' next steps: any
        // return of theirs ends a step that starts there, later still.
        let bound = limit.min(second.next_up());
        let events = self.ctx.events;
        self.replicas[i].advance_exact(bound, &mut self.ctx);
        self.order.touch(i);
        self.ctx.take_returns(&mut self.returned);
        for id in self.returned.drain(..) {
            let r = &self.ctx.records[id as usize];
            self.workload.returned(id, r.class, r.end_s);
        }
        // (Abandoning timed-out requests may be all it did.)
        let r = &self.replicas[i];
        let progressed = self.ctx.events != events || r.clock_s() != clock || !r.is_busy();
        debug_assert!(progressed, "a busy replica made no progress");
        progressed
    }

    /// The earliest closed-loop timeout: a request still in the system now
    /// (every step that starts before it has run) is abandoned there, and
    /// its client sends again after its think time.
    fn closed_timeout(&mut self) {
        if let Some(Reverse((Time(at_s), id))) = self.closed_timeouts.pop() {
            let r = &self.ctx.records[id as usize];
            if r.status == Status::Pending {
                self.workload.returned(id, r.class, at_s);
            }
        }
    }
}

/// The busy replicas in the order of their next step (their clocks), for
/// the closed loop's cluster: a heap, brought up to date lazily for the
/// replicas touched since (the cluster calls [`ReplicaOrder::touch`]
/// whenever it runs or hands work to one). Finding the earliest costs
/// O(log replicas) instead of a pass over every replica at every step
/// (review n12: 4,096 replicas of round-robin clients took over 300 s).
pub(super) struct ReplicaOrder {
    /// (clock, replica), earliest first; an entry is current when its
    /// replica is busy and `queued` holds its clock.
    heap: BinaryHeap<Reverse<(Time, usize)>>,
    /// The clock each replica's current entry holds (NaN: none).
    queued: Vec<f64>,
    /// Replicas touched since the heap was last brought up to date.
    touched: Vec<usize>,
    is_touched: Vec<bool>,
}

impl ReplicaOrder {
    /// The order of `n` replicas, none busy yet.
    pub fn new(n: usize) -> ReplicaOrder {
        ReplicaOrder {
            heap: BinaryHeap::new(),
            queued: vec![f64::NAN; n],
            touched: Vec::new(),
            is_touched: vec![false; n],
        }
    }

    /// Replica `i` may have changed (its clock, or whether it is busy).
    #[inline]
    pub fn touch(&mut self, i: usize) {
        if !self.is_touched[i] {
            self.is_touched[i] = true;
            self.touched.push(i);
        }
    }

    /// Every replica may have changed.
    pub fn touch_all(&mut self) {
        for i in 0..self.queued.len() {
            self.touch(i);
        }
    }

    /// Gives each touched busy replica a current entry.
    fn update<R: Replica>(&mut self, replicas: &[R]) {
        for i in self.touched.drain(..) {
            self.is_touched[i] = false;
            let r = &replicas[i];
            if !r.is_busy() {
                self.queued[i] = f64::NAN;
                continue;
            }
            let clock = r.clock_s();
            if self.queued[i].to_bits() != clock.to_bits() {
                self.queued[i] = clock;
                self.heap.push(Reverse((Time(clock), i)));
            }
        }
    }

    /// Drops stale entries from the top of the heap.
    fn prune<R: Replica>(&mut self, replicas: &[R]) {
        while let Some(&Reverse((Time(clock), i))) = self.heap.peek() {
            if replicas[i].is_busy() && self.queued[i].to_bits() == clock.to_bits() {
                return;
            }
            self.heap.pop();
        }
    }

    /// The busy replica whose next step starts first (the lowest index
    /// among equal clocks), its clock, and the next clock of any other busy
    /// replica (infinite when none); `None` when no replica is busy.
    fn first_two<R: Replica>(&mut self, replicas: &[R]) -> Option<(usize, f64, f64)> {
        self.update(replicas);
        self.prune(replicas);
        let Reverse((Time(clock), i)) = self.heap.pop()?;
        self.prune(replicas);
        let second = self
            .heap
            .peek()
            .map_or(f64::INFINITY, |Reverse((Time(c), _))| *c);
        self.heap.push(Reverse((Time(clock), i)));
        Some((i, clock, second))
    }

    /// Whether any replica is busy.
    fn any_busy<R: Replica>(&mut self, replicas: &[R]) -> bool {
        self.update(replicas);
        self.prune(replicas);
        !self.heap.is_empty()
    }
}

/// [`ReplicaOrder::first_two`] by a pass over every replica, which debug
/// builds compare it with on small fleets.
#[cfg(debug_assertions)]
fn earliest_by_pass<R: Replica>(replicas: &[R]) -> Option<(usize, f64, f64)> {
    let mut first: Option<(usize, f64)> = None;
    let mut second = f64::INFINITY;
    for (i, r) in replicas.iter().enumerate() {
        if !r.is_busy() {
            continue;
        }
        let clock = r.clock_s();
        match first {
            Some((_, c)) if clock >= c => second = second.min(clock),
            _ => {
                if let Some((_, c)) = first {
                    second = second.min(c);
                }
                first = Some((i, clock));
            }
        }
    }
    first.map(|(i, c)| (i, c, second))
}

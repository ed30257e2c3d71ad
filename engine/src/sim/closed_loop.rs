//! The cluster loop of a run with closed-loop classes, whose arrivals
//! follow completions: replicas step in the order of their next step and
//! stop at each return, so that a returned client's next send is scheduled
//! before any step that starts after it (docs/engine.md, Workload).

use std::cmp::Reverse;

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
        if !self.replicas.iter().any(R::is_busy) && self.workload.is_finished() {
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
        let mut first: Option<(usize, f64)> = None;
        let mut second = f64::INFINITY;
        for (i, r) in self.replicas.iter().enumerate() {
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
        let Some((i, clock)) = first.filter(|&(_, c)| c < limit) else {
            return false;
        };
        // Steps starting at or before the other replicas' next steps: any
        // return of theirs ends a step that starts there, later still.
        let bound = limit.min(second.next_up());
        let events = self.ctx.events;
        self.replicas[i].advance_exact(bound, &mut self.ctx);
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

//! The interface between the cluster loop and a replica engine: the
//! numbers a replica is built from ([`ReplicaConfig`]), what it writes into
//! as it runs ([`Ctx`]: records, counters, the work budget, closed-loop
//! returns) and what the cluster asks of it ([`Replica`]), which both
//! engines implement.

use crate::model::scenario::Scenario;
use crate::model::step_time::StepTimeModel;
use crate::params::{Discipline, Schedule};
use crate::sim::options::{VISITS_PER_WORK, WORK_PER_REQUEST};
use crate::sim::rules::{BlockSize, Pool};
use crate::sim::state::{Active, ReqId};
use crate::sim::{RequestRecord, Status, StepCounters};

/// Numbers a replica needs, copied out of the scenario.
#[derive(Clone, Debug)]
pub struct ReplicaConfig {
    pub max_num_seqs: usize,
    pub budget: u64,
    /// Per-request prefill limit per step (u64::MAX for none).
    pub threshold: u64,
    pub block_size: BlockSize,
    pub total_blocks: u32,
    pub discipline: Discipline,
    /// Whether any class has a timeout.
    pub timeouts: bool,
    pub schedule: Schedule,
    /// Whether preempted requests' blocks stay cached (`sim::free_blocks`).
    pub prefix_caching: bool,
    pub step_time: StepTimeModel,
}

impl ReplicaConfig {
    pub(super) fn new(scenario: &Scenario) -> ReplicaConfig {
        let e = &scenario.params().engine;
        ReplicaConfig {
            max_num_seqs: e.max_num_seqs as usize,
            budget: e.max_num_batched_tokens as u64,
            threshold: if e.long_prefill_threshold == 0 {
                u64::MAX
            } else {
                e.long_prefill_threshold as u64
            },
            block_size: BlockSize::new(scenario.memory().block_size as u64),
            total_blocks: scenario.memory().total_blocks,
            discipline: e.discipline,
            timeouts: scenario.classes().iter().any(|c| c.timeout_s.is_some()),
            schedule: e.schedule,
            prefix_caching: e.prefix_caching,
            step_time: scenario.step_time().clone(),
        }
    }
}

/// What replicas write into while they run.
pub struct Ctx {
    pub records: Vec<RequestRecord>,
    pub events: u64,
    /// Replicas the cluster has brought up to a time and looked at, one
    /// at a time (routing by load, series samples, the drain).
    pub visits: u64,
    pub steps: u64,
    /// The steps' shapes and durations, and the fullest KV cache since the
    /// last series sample.
    pub batches: StepCounters,
    /// The run's budget of work ([`Ctx::work`]).
    pub max_work: u64,
    /// The closed-loop classes, one bit each (there are at most 64 classes).
    closed_classes: u64,
    /// Closed-loop requests completed since the cluster last took them.
    pub returns: Vec<ReqId>,
    /// Replicas stop stepping once `events` passes this: what the work
    /// budget leaves to events ([`Ctx::event_allowance`]), or 0 while `returns` holds a request whose client's next send the
    /// cluster has not yet scheduled (it may fall before the next step).
    stop_after: u64,
}

impl Ctx {
    /// A context for `capacity` records; `closed_classes` has bit c set for
    /// each closed-loop class c.
    pub fn new(capacity: usize, max_work: u64, closed_classes: u64) -> Ctx {
        Ctx {
            records: Vec::with_capacity(capacity),
            events: 0,
            visits: 0,
            steps: 0,
            batches: StepCounters::default(),
            max_work,
            closed_classes,
            returns: Vec::new(),
            stop_after: max_work,
        }
    }

    /// Records how a request left a replica.
    pub fn close(&mut self, a: &Active, status: Status, end_s: f64) {
        let status = match status {
            Status::Unfinished if a.timeout_at_s <= end_s => Status::TimedOut,
            s => s,
        };
        let end_s = match status {
            Status::TimedOut => a.timeout_at_s,
            Status::Unfinished => f64::NAN,
            _ => end_s,
        };
        let r = &mut self.records[a.id as usize];
        r.status = status;
        r.end_s = end_s;
        r.busy_s = a.busy_s;
        r.preemptions = a.preemptions;
        r.recomputed_tokens = a.recomputed_tokens;
        // (Timeouts are the cluster's: it knows them in advance.)
        if status == Status::Completed && self.closed_classes >> r.class & 1 == 1 {
            self.returns.push(a.id);
            self.stop_after = 0;
        }
    }

    /// The work done so far, in units of about one engine event
    /// (docs/engine.md, Limits): each event, each request sent
    /// ([`WORK_PER_REQUEST`]) and each replica visit (a
    /// [`VISITS_PER_WORK`]th).
    pub fn work(&self) -> u64 {
        self.events
            .saturating_add(self.visits / VISITS_PER_WORK)
            .saturating_add(self.records.len() as u64 * WORK_PER_REQUEST)
    }

    pub fn over_budget(&self) -> bool {
        self.work() > self.max_work
    }

    /// The events the budget leaves room for, given the rest of the work
    /// so far: replicas stop stepping past it, so that a run of steps
    /// between two of the cluster's checks cannot overshoot the budget.
    fn event_allowance(&self) -> u64 {
        let rest = self.work() - self.events;
        self.max_work.saturating_sub(rest)
    }

    /// Brings the replicas' stopping point up to date with the work done
    /// outside them (called at each of the cluster's budget checks).
    pub fn refresh_allowance(&mut self) {
        if self.stop_after != 0 {
            self.stop_after = self.event_allowance();
        }
    }

    /// Whether `class` is a closed loop.
    pub fn is_closed(&self, class: u16) -> bool {
        self.closed_classes >> class & 1 == 1
    }

    /// Whether replicas must stop stepping: over the work budget, or a
    /// closed-loop request has returned.
    #[inline]
    pub fn must_stop(&self) -> bool {
        self.events > self.stop_after
    }

    /// Hands over the returned closed-loop requests and lets replicas step on.
    pub fn take_returns(&mut self, into: &mut Vec<ReqId>) {
        into.append(&mut self.returns);
        self.stop_after = self.event_allowance();
    }
}

/// One replica's scheduler, as the cluster loop drives it.
pub trait Replica {
    fn new(cfg: ReplicaConfig) -> Self;
    /// Runs every step that starts before `t`, abandoning timed-out requests
    /// at step starts. May defer work that no query below could observe.
    fn advance_until(&mut self, t: f64, ctx: &mut Ctx);
    /// Does any deferred work, so that `used_blocks` is exact.
    fn sync(&mut self, ctx: &mut Ctx);
    /// Runs every step that starts before `t`, deferring nothing, until
    /// [`Ctx::must_stop`] (a closed-loop request returned).
    fn advance_exact(&mut self, t: f64, ctx: &mut Ctx);
    /// Whether it holds any request.
    fn is_busy(&self) -> bool {
        self.waiting_len() + self.running_len() > 0
    }
    /// A request routed here at time `t` (after `advance_until(t)`, or with
    /// closed loops to just before `t`: `Cluster::steps_before`).
    fn enqueue(&mut self, request: Active, t: f64, ctx: &mut Ctx);
    /// Its free blocks and waiting queue.
    fn pool(&self) -> &Pool;
    fn waiting_len(&self) -> usize {
        self.pool().waiting.len()
    }
    fn running_len(&self) -> usize;
    fn used_blocks(&self) -> u32 {
        self.pool().used_blocks()
    }
    /// Total duration of the steps executed \[s\].
    fn busy_s(&self) -> f64;
    /// When the last executed step ended (or the replica last became idle) \[s\].
    fn clock_s(&self) -> f64;
    /// Marks everything still here as unfinished (or timed out) at `end_s`.
    fn close_unfinished(&mut self, end_s: f64, ctx: &mut Ctx);
}

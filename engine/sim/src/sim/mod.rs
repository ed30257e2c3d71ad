//! The cluster simulation: workload, router, replicas, per-request records.
//!
//! [`Simulation`] runs a scenario in bounded amounts of work (`advance`, for
//! progress bars and cancellation) and hands over a [`RunOutput`] (records,
//! series, counters) that `crate::Report::build` turns into statistics; the
//! simulator never names the report (`crate::simulate` does both). Both
//! engines share this loop and the step rules ([`rules`]) and differ only in
//! how a replica executes its steps: [`reference`](mod@reference) one at a
//! time, [`fast`](mod@fast) by skipping runs of identical decode steps in
//! closed form. [`options`] holds what a run is told (engine, caps) and how
//! it may be refused; [`record`] what a run records. With closed-loop
//! classes, arrivals follow completions and the loop is [`closed_loop`]'s.

mod batch;
mod closed_loop;
mod due;
pub mod fast;
mod free_blocks;
mod options;
mod record;
pub mod reference;
mod replica;
mod rules;
pub mod saturation;
pub mod state;
#[cfg(test)]
mod testing;
mod wait_queue;
pub mod workload;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;

use crate::model::Load;
use crate::model::scenario::Scenario;
use crate::params::Router;
use crate::serde_float::NonFinite;
use crate::sim::closed_loop::ReplicaOrder;
pub use crate::sim::replica::{Ctx, Replica, ReplicaConfig};
pub use crate::sim::state::Time;
use crate::sim::state::{Active, ReqId};
use crate::sim::workload::{RequestSpec, Workload};

pub use batch::StepCounters;
pub use batch::StepHistogram;
pub use options::max_series_points;
pub use options::{
    BYTES_PER_REPLICA, BYTES_PER_REQUEST, DEFAULT_MAX_WORK, EngineKind, RunError, RunOptions,
    VISITS_PER_WORK, WORK_PER_REQUEST, check_run_budget, run_bytes_estimate,
};
pub use record::{RequestRecord, RunOutput, SeriesPoint, Status};

/// With closed loops, a step that starts within this fraction of an event's
/// time (of a second, before 1 s) counts as starting at it: the event comes
/// first. Far below any step, far above the rounding that separates two
/// computations of one instant (a few ulps).
const TIE: f64 = 1e-11;

/// The drain advances in at most about this many units of work (or in
/// series intervals, when those are longer).
const DRAIN_UNITS: f64 = 10_000.0;

/// How far a [`Simulation`] has got.
#[serde_with::serde_as]
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Progress {
    /// Simulated time reached \[s\].
    #[serde_as(as = "NonFinite")]
    pub simulated_s: f64,
    /// Fraction of the run done, in \[0, 1\].
    #[serde_as(as = "NonFinite")]
    pub fraction: f64,
    pub requests: u64,
    pub done: bool,
}

struct Cluster<'s, R: Replica> {
    scenario: &'s Scenario,
    workload: Workload<'s>,
    replicas: Vec<R>,
    ctx: Ctx,
    round_robin: usize,
    series: Vec<SeriesPoint>,
    next_sample_s: f64,
    end_s: f64,
    now_s: f64,
    /// When the latest request so far arrived \[s\].
    last_arrival_s: f64,
    max_requests: u64,
    /// The run's memory budget \[bytes\] ([`RunOptions::max_bytes`]).
    max_bytes: u64,
    /// The most series points this run takes
    /// ([`crate::model::sections::MAX_SERIES_POINTS`], fewer with many
    /// replicas: [`crate::model::sections::MAX_REPLICA_SAMPLES`]).
    max_series_points: usize,
    /// How far the drain advances per unit of work.
    drain_step_s: f64,
    done: bool,
    keep_records: bool,
    /// Requests expected in all (for progress when the end is not known).
    expected_requests: f64,
    /// Whether a class is a closed loop: arrivals then follow completions
    /// ([`Cluster::react`]).
    reactive: bool,
    /// Closed-loop requests with a timeout, by when it falls (lazily pruned).
    closed_timeouts: BinaryHeap<Reverse<(Time, ReqId)>>,
    /// Scratch list of returned closed-loop requests (kept for its allocation).
    returned: Vec<ReqId>,
    /// With closed loops, the busy replicas by their next step; touched
    /// only then.
    order: ReplicaOrder,
}

impl<'s, R: Replica> Cluster<'s, R> {
    fn new(scenario: &'s Scenario, options: &RunOptions) -> Result<Self, RunError> {
        check_run_budget(scenario, options)?;
        let expected = scenario.expected_requests();
        let cfg = ReplicaConfig::new(scenario);
        let n = scenario.params().cluster.replicas as usize;
        let workload = Workload::new(scenario, scenario.params().run.seed);
        let closed_classes = (scenario.classes().iter().enumerate())
            .filter(|(_, c)| matches!(c.load, Load::ClosedLoop { .. }))
            .fold(0u64, |mask, (i, _)| mask | 1 << i);
        let interval_s = scenario.params().run.series_interval_s;
        let drain_s = scenario.drain_s();
        Ok(Cluster {
            scenario,
            workload,
            replicas: (0..n).map(|_| R::new(cfg.clone())).collect(),
            ctx: Ctx::new(
                // Five standard deviations over the mean: a reservation
                // costs address space, not memory, until it is written,
                // while outgrowing it would copy every record.
                (expected + 5.0 * scenario.requests_sd() + 64.0).min(options.max_requests as f64)
                    as usize,
                options.max_work,
                closed_classes,
            ),
            round_robin: 0,
            series: Vec::new(),
            next_sample_s: interval_s,
            // Infinite when a class sends a fixed count: the run then lasts
            // until every request is done.
            end_s: scenario.params().run.horizon_s + drain_s,
            now_s: 0.0,
            last_arrival_s: 0.0,
            max_requests: options.max_requests,
            max_bytes: options.max_bytes,
            max_series_points: max_series_points(n),
            drain_step_s: if drain_s.is_finite() {
                interval_s.max(drain_s / DRAIN_UNITS)
            } else {
                interval_s
            },
            done: false,
            keep_records: options.keep_records,
            expected_requests: expected,
            reactive: closed_classes != 0,
            closed_timeouts: BinaryHeap::new(),
            returned: Vec::new(),
            order: ReplicaOrder::new(if closed_classes != 0 { n } else { 0 }),
        })
    }

    fn check_budget(&mut self) -> Result<(), RunError> {
        if self.ctx.over_budget() {
            return Err(RunError::TooMuchWork {
                cap: self.ctx.max_work,
                simulated_s: self.now_s,
                advice: self.advice_while_running(),
            });
        }
        self.ctx.refresh_allowance();
        // The estimates checked before the run bound it in expectation;
        // these bound what it holds, whatever it turns out to send.
        let sent = self.ctx.records.len() as u64;
        if sent > self.max_requests {
            return Err(RunError::TooManyRequests {
                expected: sent as f64,
                cap: self.max_requests,
                advice: self.advice_while_running(),
            });
        }
        let held = sent as f64 * BYTES_PER_REQUEST
            + f64::from(self.scenario.params().cluster.replicas) * BYTES_PER_REPLICA;
        if held > self.max_bytes as f64 {
            return Err(RunError::TooMuchMemory {
                estimated_bytes: held,
                expected_requests: sent as f64,
                cap_bytes: self.max_bytes,
                advice: self.advice_while_running(),
            });
        }
        Ok(())
    }

    /// What to change when the run passes a cap as it goes: as before it
    /// started ([`options::fewer_requests`]), unless most requests sent
    /// were refused as too long, which only a closed loop resending after
    /// each refusal makes so many of (n01's kin, found by `sojourn-fuzz`).
    #[cold]
    fn advice_while_running(&self) -> String {
        let records = &self.ctx.records;
        let mut too_long = vec![0u64; self.scenario.classes().len()];
        for r in records
            .iter()
            .filter(|r| r.status == Status::RejectedTooLong)
        {
            too_long[r.class as usize] += 1;
        }
        let refused: u64 = too_long.iter().sum();
        let most = (0..too_long.len()).max_by_key(|&i| too_long[i]);
        match most {
            Some(i) if 2 * refused > records.len() as u64 => format!(
                "{refused} of the {} requests sent so far were refused as longer (prompt + output) than a \
                 replica holds ({} tokens), {} of them from class \"{}\", whose clients send again after each \
                 refusal: shorten its lengths (classes[{i}].input_tokens, output_tokens or lengths) or give its \
                 clients a think time (classes[{i}].load.think_ms)",
                records.len(),
                self.scenario.memory().max_seq_tokens,
                too_long[i],
                self.scenario.params().classes[i].name,
            ),
            _ => options::fewer_requests(self.scenario),
        }
    }

    /// The replicas run the steps that start before this when an event
    /// falls at `t`: `t` itself, or with closed loops a little earlier
    /// ([`TIE`]): a closed-loop send often falls exactly on a step start (a
    /// completion plus a think time of whole steps), where clocks that
    /// agree only to rounding would order the two either way.
    #[inline(always)]
    fn steps_before(&self, t: f64) -> f64 {
        if self.reactive {
            t - TIE * t.abs().max(1.0)
        } else {
            t
        }
    }

    /// Takes the time-series samples due at or before `t`. (The check
    /// inlines: most arrivals find none due.)
    #[inline(always)]
    fn sample_until(&mut self, t: f64) {
        if self.next_sample_s <= t {
            self.take_samples(t);
        }
    }

    #[inline(never)]
    fn take_samples(&mut self, t: f64) {
        while self.next_sample_s <= t
            && self.next_sample_s <= self.end_s
            && self.series.len() < self.max_series_points
        {
            let at = self.next_sample_s;
            let upto = self.steps_before(at);
            let (mut waiting, mut running, mut blocks) = (0, 0, 0u64);
            if self.reactive {
                self.order.touch_all();
            }
            self.ctx.visits += self.replicas.len() as u64;
            for r in &mut self.replicas {
                r.advance_until(upto, &mut self.ctx);
                r.sync(&mut self.ctx);
                waiting += r.waiting_len();
                running += r.running_len();
                blocks += r.used_blocks() as u64;
            }
            let per_replica = self.scenario.memory().total_blocks as f64;
            let peak = self.ctx.batches.take_peak_blocks() as f64 / per_replica;
            self.series.push(SeriesPoint {
                t_s: at,
                waiting: waiting as u64,
                running: running as u64,
                kv_utilization: blocks as f64 / (per_replica * self.replicas.len() as f64),
                kv_peak_utilization: peak,
                replicas: self.replicas.len() as u32,
                arrivals: 0,
                completions: 0,
            });
            self.next_sample_s += self.scenario.params().run.series_interval_s;
        }
    }

    fn deliver(&mut self, spec: RequestSpec) {
        let t = spec.arrival_s;
        self.last_arrival_s = self.last_arrival_s.max(t);
        let upto = self.steps_before(t);
        let class = &self.scenario.classes()[spec.class as usize];
        let id = self.ctx.records.len() as ReqId;
        self.ctx.records.push(RequestRecord::arriving(&spec));
        let kv_tokens = spec.input_tokens as u64 + spec.output_tokens as u64 - 1;
        if kv_tokens > self.scenario.memory().max_seq_tokens {
            self.reject(id, Status::RejectedTooLong, t);
            return;
        }
        let chosen = match self.scenario.params().cluster.router {
            Router::RoundRobin => {
                let c = self.round_robin;
                self.round_robin = (c + 1) % self.replicas.len();
                c
            }
            Router::JoinShortestQueue | Router::LeastKvLoad => {
                if self.reactive {
                    self.order.touch_all();
                }
                let by_kv = self.scenario.params().cluster.router == Router::LeastKvLoad;
                // One pass: each replica is brought up to `t` and weighed;
                // the first of the least loaded wins.
                let mut best = (u64::MAX, u64::MAX, 0);
                self.ctx.visits += self.replicas.len() as u64;
                for (i, r) in self.replicas.iter_mut().enumerate() {
                    r.advance_until(upto, &mut self.ctx);
                    let queue = (r.waiting_len() + r.running_len()) as u64;
                    let load = if by_kv {
                        r.sync(&mut self.ctx);
                        (r.used_blocks() as u64, queue)
                    } else {
                        (queue, 0)
                    };
                    if load < (best.0, best.1) {
                        best = (load.0, load.1, i);
                    }
                }
                best.2
            }
        };
        if self.reactive {
            self.order.touch(chosen);
        }
        let replica = &mut self.replicas[chosen];
        replica.advance_until(upto, &mut self.ctx);
        self.ctx.records[id as usize].replica = chosen as u16;
        if let Some(m) = self.scenario.params().engine.max_waiting
            && replica.waiting_len() >= m as usize
        {
            self.reject(id, Status::RejectedQueueFull, t);
            return;
        }
        let request = Active::arriving(id, &spec, class);
        if self.reactive && request.timeout_at_s.is_finite() && self.ctx.is_closed(spec.class) {
            self.closed_timeouts
                .push(Reverse((Time(request.timeout_at_s), id)));
        }
        replica.enqueue(request, t, &mut self.ctx);
    }

    /// Refuses request `id` on arrival at `t`; a closed-loop client sends
    /// again after its think time.
    fn reject(&mut self, id: ReqId, status: Status, t: f64) {
        let r = &mut self.ctx.records[id as usize];
        r.status = status;
        r.end_s = t;
        if self.reactive {
            self.workload.returned(id, r.class, t);
        }
    }

    /// Does up to `work` units (arrivals or series samples) and reports progress.
    fn advance(&mut self, work: u32) -> Result<Progress, RunError> {
        let mut left = work.max(1);
        while !self.done && left > 0 {
            left -= 1;
            self.check_budget()?;
            if self.reactive {
                self.react();
                continue;
            }
            // (Drawn as it is delivered: a request held over from one turn
            // to the next costs a trip through memory.)
            match self.workload.next() {
                Some(spec) => {
                    self.now_s = spec.arrival_s;
                    self.sample_until(spec.arrival_s);
                    self.deliver(spec);
                }
                None => {
                    // Drain: a series interval (or a 1/10,000th of the
                    // drain, if longer) per unit of work, until the end or
                    // until the fleet has nothing left to do. Once the
                    // series is full, the step doubles at every unit, so
                    // that a drain of any length (a counted run's is
                    // open-ended) takes a bounded number of units; and a
                    // step always moves the time on, however far out.
                    let t = (self.now_s + self.drain_step_s)
                        .max(self.now_s.next_up())
                        .min(self.end_s);
                    self.sample_until(t);
                    let mut idle = true;
                    self.ctx.visits += self.replicas.len() as u64;
                    for r in &mut self.replicas {
                        r.advance_until(t, &mut self.ctx);
                        idle &= !r.is_busy();
                    }
                    self.now_s = t;
                    if self.series.len() >= self.max_series_points {
                        self.drain_step_s *= 2.0;
                    }
                    if t >= self.end_s || idle {
                        self.close();
                    }
                }
            }
        }
        self.check_budget()?;
        let fraction = if self.end_s.is_finite() {
            self.now_s / self.end_s
        } else {
            self.ctx.records.len() as f64 / self.expected_requests.max(1.0)
        };
        Ok(Progress {
            simulated_s: self.now_s,
            fraction: fraction.clamp(0.0, 1.0),
            requests: self.ctx.records.len() as u64,
            done: self.done,
        })
    }

    /// Ends the run: what is still in the system is unfinished. A run whose
    /// end was open (a fixed count) ends at the latest of the horizon, its
    /// last step and its last arrival (a refused request ends where it
    /// arrives, and no request ends after the run).
    fn close(&mut self) {
        if !self.end_s.is_finite() {
            let last_s = self
                .replicas
                .iter()
                .map(|r| r.clock_s())
                .fold(self.last_arrival_s, f64::max);
            self.end_s = last_s.max(self.scenario.params().run.horizon_s);
        }
        for r in &mut self.replicas {
            r.close_unfinished(self.end_s, &mut self.ctx);
        }
        self.done = true;
    }

    fn finish(mut self) -> Result<RunOutput<'s>, RunError> {
        while !self.done {
            self.advance(u32::MAX)?;
        }
        // Busy time up to the end of the run: a step that started before the
        // end but finishes after it (the replica is busy from its start to
        // its clock) counts only up to the end, so that the busy fraction
        // is at most 1. (`max` and `min`, not `clamp`: they never panic,
        // and a NaN from an overflowing clock becomes 0.)
        let end_s = self.end_s;
        let work = self.ctx.work();
        let busy: Vec<f64> = self
            .replicas
            .iter()
            .map(|r| {
                let clock = r.clock_s();
                let within = clock.min(end_s).max(0.0);
                (r.busy_s() - (clock - end_s).max(0.0)).max(0.0).min(within)
            })
            .collect();
        let active_until_s = self
            .replicas
            .iter()
            .map(|r| r.clock_s())
            .fold(0.0, f64::max)
            .min(end_s);
        Ok(RunOutput {
            scenario: self.scenario,
            records: self.ctx.records,
            series: self.series,
            busy_s: busy,
            active_until_s,
            events: self.ctx.events,
            work,
            steps: self.ctx.steps,
            batches: self.ctx.batches,
            end_s: self.end_s,
            keep_records: self.keep_records,
        })
    }
}

/// A run in progress. Call [`Simulation::advance`] until `done`, then
/// [`Simulation::finish`].
pub struct Simulation<'s>(Engine<'s>);

enum Engine<'s> {
    Fast(Box<Cluster<'s, fast::FastReplica>>),
    Reference(Box<Cluster<'s, reference::RefReplica>>),
}

impl<'s> Simulation<'s> {
    pub fn new(scenario: &'s Scenario, options: &RunOptions) -> Result<Simulation<'s>, RunError> {
        Ok(Simulation(match options.engine {
            EngineKind::Fast => Engine::Fast(Box::new(Cluster::new(scenario, options)?)),
            EngineKind::Reference => Engine::Reference(Box::new(Cluster::new(scenario, options)?)),
        }))
    }

    /// Processes up to `work` arrivals (or drain intervals).
    pub fn advance(&mut self, work: u32) -> Result<Progress, RunError> {
        match &mut self.0 {
            Engine::Fast(c) => c.advance(work),
            Engine::Reference(c) => c.advance(work),
        }
    }

    /// Runs to the end if needed and hands over what the run produced.
    pub fn finish(self) -> Result<RunOutput<'s>, RunError> {
        match self.0 {
            Engine::Fast(c) => c.finish(),
            Engine::Reference(c) => c.finish(),
        }
    }
}

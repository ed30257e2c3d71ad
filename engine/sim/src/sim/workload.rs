//! Workload sampling: the stream of requests a scenario produces.
//!
//! Each class draws from four independent seeded streams (batch times, batch
//! sizes, prompt lengths, output lengths), so scaling one input keeps every
//! other draw the same (a joint length model draws both lengths of a
//! request from a sixth stream). Batches of a class arrive as a Poisson
//! process; a time-of-day profile makes it non-homogeneous, sampled exactly
//! by inverting the integrated rate (one exponential draw per batch; see
//! `ClassStream::invert_profile`).
//!
//! A class's load mode (`crate::model::Load`) sets how many it sends: over
//! the horizon (open), a fixed count in Poisson batches, all at time 0
//! (offline), or as closed-loop clients, whose next sends wait for their
//! requests to return (`Workload::returned`) and a think time drawn from a
//! fifth stream when each request is sent.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::Load;
use crate::model::class::Class;
use crate::model::dist::{Dist, round};
use crate::model::scenario::Scenario;
use crate::params::trace::TracedRequest;
use crate::rng::{SimRng, stream};
use crate::samplers::{Exp, Exp1};
use crate::sim::Time;
use crate::sim::state::ReqId;

/// One request as it arrives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RequestSpec {
    pub class: u16,
    pub arrival_s: f64,
    pub input_tokens: u32,
    /// Prompt tokens served from the prefix cache (at most input - 1).
    pub cached_tokens: u32,
    pub output_tokens: u32,
}

/// Draws from one seeded stream, made a block at a time: the same values in
/// the same order as one at a time, but a block's table lookups (an alias
/// table spans up to 512 KiB, so most lookups miss the cache) overlap in
/// the memory system instead of each waiting its turn.
struct Draws {
    rng: SimRng,
    block: [u32; Self::BLOCK],
    /// Next unused value in `block` (`BLOCK` when it is used up).
    at: usize,
}

impl Draws {
    const BLOCK: usize = 32;

    fn new(rng: SimRng) -> Draws {
        Draws {
            rng,
            block: [0; Self::BLOCK],
            at: Self::BLOCK,
        }
    }

    /// The next draw of `dist` (always the same distribution for a stream).
    #[inline]
    fn next(&mut self, dist: &Dist) -> u32 {
        if self.at == Self::BLOCK {
            dist.fill(&mut self.rng, &mut self.block);
            self.at = 0;
        }
        self.at += 1;
        self.block[self.at - 1]
    }
}

struct ClassStream {
    class: u16,
    /// Inter-arrival times of batches at the peak rate; `None` for a class
    /// that never sends (or sends otherwise than in Poisson batches).
    gap: Option<Exp>,
    /// Whether the rate is the same in every hour (no profile to follow).
    flat: bool,
    /// Sends at or after this end the stream: the horizon, or never for a
    /// class whose count the horizon does not bound.
    until_s: f64,
    /// Requests still to emit (a fixed count's, an offline class's);
    /// `u64::MAX` for the others, which other rules end.
    left: u64,
    times: SimRng,
    sizes: SimRng,
    inputs: Draws,
    outputs: Draws,
    /// Both lengths of a request, for a class with a joint length model.
    pairs: SimRng,
    /// Time of the batch being emitted, or of the next batch (a closed
    /// loop's next send).
    batch_s: f64,
    /// Requests of the current batch still to emit.
    left_in_batch: u32,
    /// A closed loop's clients; `None` for the other modes.
    clients: Option<Box<Clients>>,
    /// A replayed trace's next request (an index into its requests).
    traced: usize,
}

/// A closed loop's clients: the sends they have scheduled and what each
/// request out will wait after it returns.
struct Clients {
    thinks: SimRng,
    /// Sends still to schedule (`u64::MAX` when the horizon ends them).
    /// Once none are left, a return whose send comes before the latest
    /// scheduled one takes its place: a class of N requests sends its N
    /// earliest.
    left: u64,
    /// Scheduled sends, earliest first: (time, key), the key being the
    /// client's index for first sends and `clients` + the returned request's
    /// id for later ones, so that ties do not depend on the order in which
    /// returns were noticed.
    sends: BTreeSet<(Time, u64)>,
    /// Each request out, by id: its client's think time after it returns
    /// \[s\], drawn when it was sent (in arrival order, which both engines
    /// share; returns are noticed in an order that may not be).
    thinking_s: BTreeMap<ReqId, f64>,
    /// Clients with a send scheduled or a request in the system.
    busy: u64,
    clients: u64,
}

/// The requests of a scenario in arrival order (ties: lower class first, then
/// the order within a batch). An iterator: memory does not grow with the
/// number of requests. Closed-loop classes send as their requests return
/// ([`Workload::returned`]): until then [`Workload::peek_s`] shows the next
/// send known so far.
pub struct Workload<'a> {
    scenario: &'a Scenario,
    streams: Vec<ClassStream>,
    /// Requests emitted so far: the id of the next (the cluster records
    /// every request it is given, in order).
    emitted: u64,
}

impl<'a> Workload<'a> {
    pub fn new(scenario: &'a Scenario, seed: u64) -> Workload<'a> {
        let horizon_s = scenario.params().run.horizon_s;
        let streams = scenario
            .classes()
            .iter()
            .enumerate()
            .map(|(i, class)| ClassStream::new(i, class, seed, horizon_s))
            .collect();
        Workload {
            scenario,
            streams,
            emitted: 0,
        }
    }

    /// When the next request known so far arrives (infinite if none is).
    pub fn peek_s(&self) -> f64 {
        self.streams
            .iter()
            .filter(|s| s.batch_s < s.until_s)
            .map(|s| s.batch_s)
            .fold(f64::INFINITY, f64::min)
    }

    /// Whether no request will ever arrive again: every stream is done and
    /// no closed-loop client has a send scheduled or a request out.
    pub fn is_finished(&self) -> bool {
        self.streams
            .iter()
            .all(|s| s.batch_s >= s.until_s && s.clients.as_ref().is_none_or(|c| c.busy == 0))
    }

    /// Request `id` of a closed-loop class left the system at `at_s`
    /// (completed, rejected or timed out): its client sends its next
    /// request after its think time, if the class still sends.
    pub fn returned(&mut self, id: ReqId, class: u16, at_s: f64) {
        let s = &mut self.streams[class as usize];
        let Some(c) = s.clients.as_mut() else { return };
        let think_s = c.thinking_s.remove(&id).unwrap_or(0.0);
        c.busy -= 1;
        let send = (Time(at_s + think_s), c.clients + id as u64);
        if send.0.0 >= s.until_s {
            return;
        }
        if c.left > 0 {
            c.left -= 1;
            c.busy += 1;
            c.sends.insert(send);
        } else if c.sends.last().is_some_and(|&latest| send < latest) {
            // The class's requests are its earliest sends, whatever order
            // the returns are noticed in (the cluster notices a replica's
            // returns when it runs that replica, not in time order): this
            // send takes the place of the latest one scheduled, whose
            // client stops.
            c.sends.pop_last();
            c.sends.insert(send);
        }
        s.next_send();
    }
}

impl ClassStream {
    fn new(i: usize, class: &Class, seed: u64, horizon_s: f64) -> ClassStream {
        let base = 8 * i as u64;
        let peak_multiplier = class.time_of_day.iter().copied().fold(0.0, f64::max);
        let peak_rate = class.batch_rate_per_s * peak_multiplier;
        let mut s = ClassStream {
            class: i as u16,
            gap: (peak_rate > 0.0 && class.load.follows_rate())
                .then(|| Exp::new(peak_rate).ok())
                .flatten(),
            flat: class.time_of_day.iter().all(|&m| m == peak_multiplier),
            until_s: match class.load.counted_requests() {
                Some(_) => f64::INFINITY,
                None => horizon_s,
            },
            left: u64::MAX,
            times: stream(seed, base),
            sizes: stream(seed, base + 1),
            inputs: Draws::new(stream(seed, base + 2)),
            outputs: Draws::new(stream(seed, base + 3)),
            pairs: stream(seed, base + 5),
            batch_s: 0.0,
            left_in_batch: 0,
            clients: None,
            traced: 0,
        };
        match &class.load {
            Load::Open => s.next_batch(class, 0.0),
            Load::FixedCount { requests } => {
                s.left = *requests as u64;
                s.next_batch(class, 0.0);
            }
            Load::Offline { requests } => {
                s.left = *requests as u64;
                s.left_in_batch = *requests;
            }
            Load::Trace { requests } => {
                s.left = requests.len() as u64;
                s.next_traced(requests);
            }
            Load::ClosedLoop {
                clients, requests, ..
            } => {
                let clients = *clients as u64;
                let first = clients.min(requests.map_or(u64::MAX, u64::from));
                s.clients = Some(Box::new(Clients {
                    thinks: stream(seed, base + 4),
                    left: requests.map_or(u64::MAX, |n| n as u64 - first),
                    // Every client sends its first request at time 0.
                    sends: (0..first).map(|k| (Time(0.0), k)).collect(),
                    thinking_s: BTreeMap::new(),
                    busy: first,
                    clients,
                }));
                s.next_send();
            }
        }
        s
    }

    /// Draws the next batch after time `after`: its time and size (a time
    /// at or past `until_s` ends the stream); a closed loop's next send.
    fn next_batch(&mut self, class: &Class, after: f64) {
        if self.clients.is_some() {
            self.next_send();
            return;
        }
        if let Load::Trace { requests } = &class.load {
            self.next_traced(requests);
            return;
        }
        let Some(gap) = &self.gap else {
            self.batch_s = f64::INFINITY;
            return;
        };
        let t = if self.flat {
            after + gap.sample(&mut self.times)
        } else {
            self.invert_profile(class, after)
        };
        self.batch_s = if t.is_finite() { t } else { f64::INFINITY };
        if self.batch_s < self.until_s {
            self.left_in_batch = class.batch_size.sample(&mut self.sizes);
        }
    }

    /// A replayed trace: its next request's time becomes the next arrival.
    fn next_traced(&mut self, requests: &[TracedRequest]) {
        self.batch_s = requests
            .get(self.traced)
            .map_or(f64::INFINITY, |r| r.arrival_s);
        self.left_in_batch = 1;
    }

    /// A closed loop: the earliest scheduled send becomes the next arrival.
    fn next_send(&mut self) {
        let next = self
            .clients
            .as_ref()
            .and_then(|c| c.sends.first())
            .map(|&(Time(t), _)| t);
        self.batch_s = next.unwrap_or(f64::INFINITY);
        self.left_in_batch = 1;
    }

    /// The next arrival of the non-homogeneous Poisson process after `after`,
    /// exactly, by inverting its integrated rate: draw E ~ Exp(1), then walk
    /// the hours (rate constant in each) until the rate integrated from
    /// `after` reaches E. One draw per arrival, however deep the troughs.
    fn invert_profile(&mut self, class: &Class, after: f64) -> f64 {
        const HOUR: f64 = 3600.0;
        let mut left: f64 = Exp1.sample(&mut self.times);
        let mut t = after;
        while t < self.until_s {
            let hour = (t / HOUR) as u64;
            let rate = class.batch_rate_per_s * class.time_of_day[(hour % 24) as usize];
            let hour_end = (hour + 1) as f64 * HOUR;
            let room = (hour_end - t).max(0.0);
            if rate > 0.0 {
                let needed = left / rate;
                if needed < room {
                    return t + needed;
                }
                left -= rate * room;
            }
            t = hour_end;
        }
        t
    }

    /// A closed-loop request `id` is sent: its client's think time after it
    /// returns is drawn now, and its send leaves the schedule. (Out of
    /// line: only closed loops call it.)
    #[inline(never)]
    fn sent(&mut self, class: &Class, id: ReqId) {
        let (Some(c), Load::ClosedLoop { think_ms, .. }) = (self.clients.as_mut(), &class.load)
        else {
            return;
        };
        c.sends.pop_first();
        let think_s = think_ms
            .as_ref()
            .map_or(0.0, |d| d.sample(&mut c.thinks) as f64 / 1000.0);
        c.thinking_s.insert(id, think_s);
    }
}

impl Iterator for Workload<'_> {
    type Item = RequestSpec;

    #[inline(always)]
    fn next(&mut self) -> Option<RequestSpec> {
        // Few classes: a linear scan beats a heap.
        let mut best: Option<usize> = None;
        for (i, s) in self.streams.iter().enumerate() {
            if s.batch_s < s.until_s && best.is_none_or(|b| s.batch_s < self.streams[b].batch_s) {
                best = Some(i);
            }
        }
        let s = &mut self.streams[best?];
        let class = &self.scenario.classes()[s.class as usize];
        let (input_tokens, output_tokens, hit) = match (&class.lengths, &class.load) {
            (_, Load::Trace { requests }) => {
                let r = &requests[s.traced];
                s.traced += 1;
                let hit = r.prefix_hit.unwrap_or(class.prefix_cache_hit);
                (r.input_tokens, r.output_tokens, hit)
            }
            (None, _) => (
                s.inputs.next(&class.input_tokens),
                s.outputs.next(&class.output_tokens),
                class.prefix_cache_hit,
            ),
            (Some(joint), _) => {
                let (input, output) = joint.sample(&mut s.pairs);
                (input, output, class.prefix_cache_hit)
            }
        };
        let cached = round(hit * input_tokens as f64) as u32;
        let spec = RequestSpec {
            class: s.class,
            arrival_s: s.batch_s,
            input_tokens,
            cached_tokens: cached.min(input_tokens - 1),
            output_tokens,
        };
        if s.clients.is_some() {
            s.sent(class, self.emitted as ReqId);
        }
        self.emitted += 1;
        s.left -= 1;
        s.left_in_batch -= 1;
        if s.left == 0 {
            s.batch_s = f64::INFINITY;
        } else if s.left_in_batch == 0 {
            let after = s.batch_s;
            s.next_batch(class, after);
        }
        Some(spec)
    }
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;

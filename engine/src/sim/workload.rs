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
use crate::model::dist::{Dist, round};
use crate::model::scenario::{Class, Scenario};
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
        let (input_tokens, output_tokens) = match &class.lengths {
            None => (
                s.inputs.next(&class.input_tokens),
                s.outputs.next(&class.output_tokens),
            ),
            Some(joint) => joint.sample(&mut s.pairs),
        };
        let cached = round(class.prefix_cache_hit * input_tokens as f64) as u32;
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
mod tests {
    use super::*;
    use crate::params::dist::{DistParams, Shape};
    use crate::params::{ClassParams, LengthsParams, LoadParams, ScenarioParams};

    fn scenario(classes: Vec<ClassParams>, horizon_s: f64) -> Scenario {
        let mut p = ScenarioParams {
            classes,
            ..ScenarioParams::overnight_batch()
        };
        p.run.horizon_s = horizon_s;
        Scenario::try_from(p).expect("valid")
    }

    #[test]
    fn same_seed_same_requests_other_seed_other_requests() {
        let s = scenario(ScenarioParams::overnight_batch().classes, 3600.0);
        let a: Vec<_> = Workload::new(&s, 7).collect();
        let b: Vec<_> = Workload::new(&s, 7).collect();
        let c: Vec<_> = Workload::new(&s, 8).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.windows(2).all(|w| w[0].arrival_s <= w[1].arrival_s));
    }

    #[test]
    fn poisson_count_matches_rate() {
        // 1000 requests/h over 100 h: N ~ Poisson(100,000), sd = 316.
        // Allow 5 sd (false alarm probability below 1e-6).
        let class = ClassParams {
            batches_per_hour: 1000.0,
            ..ClassParams::default()
        };
        let s = scenario(vec![class], 100.0 * 3600.0);
        let n = Workload::new(&s, 3).count() as f64;
        assert!((n - 100_000.0).abs() < 5.0 * 316.3, "n = {n}");
    }

    #[test]
    fn batches_share_an_arrival_time_and_sizes_follow_x() {
        // Geometric batch sizes with mean 4: E[requests] = 4 x E[batches].
        // 500 batches/h over 100 h: 50,000 batches, 200,000 requests;
        // Var[sum] = E[N] E[X^2] = 50,000 x 28 -> sd ~ 1183. Allow 5 sd.
        let class = ClassParams {
            batches_per_hour: 500.0,
            batch_size: DistParams::new(Shape::Geometric { mean: 4.0 }),
            ..ClassParams::default()
        };
        let s = scenario(vec![class], 100.0 * 3600.0);
        let reqs: Vec<_> = Workload::new(&s, 11).collect();
        let n = reqs.len() as f64;
        assert!((n - 200_000.0).abs() < 5.0 * 1183.0, "n = {n}");
        let distinct_times = reqs
            .windows(2)
            .filter(|w| w[0].arrival_s != w[1].arrival_s)
            .count()
            + 1;
        assert!(
            (distinct_times as f64 - 50_000.0).abs() < 5.0 * 224.0,
            "batches = {distinct_times}"
        );
    }

    #[test]
    fn time_of_day_profile_shapes_arrivals_by_hour() {
        // Only hours 0-5 send (multiplier 1); 1000/h for 10 days: 60,000
        // expected in those hours, none in the others.
        let mut profile = vec![0.0; 24];
        profile[..6].fill(1.0);
        let class = ClassParams {
            batches_per_hour: 1000.0,
            time_of_day: Some(profile),
            ..ClassParams::default()
        };
        let s = scenario(vec![class], 10.0 * 86_400.0);
        let reqs: Vec<_> = Workload::new(&s, 5).collect();
        assert!(reqs.iter().all(|r| (r.arrival_s % 86_400.0) < 6.0 * 3600.0));
        let n = reqs.len() as f64;
        assert!((n - 60_000.0).abs() < 5.0 * 245.0, "n = {n}");
    }

    #[test]
    fn arrivals_per_hour_follow_an_uneven_profile() {
        // 200 batches/h at multiplier m(h) = 0.1 + (h mod 6) * 0.5 over 40
        // days: hour h expects 200 * m(h) * 40 arrivals, Poisson, so sd =
        // sqrt(expected). Allow 5 sd per hour; the total too.
        let profile: Vec<f64> = (0..24).map(|h| 0.1 + (h % 6) as f64 * 0.5).collect();
        let class = ClassParams {
            batches_per_hour: 200.0,
            time_of_day: Some(profile.clone()),
            ..ClassParams::default()
        };
        let days = 40.0;
        let s = scenario(vec![class], days * 86_400.0);
        let mut per_hour = [0u64; 24];
        let mut n = 0.0;
        for r in Workload::new(&s, 9) {
            per_hour[((r.arrival_s % 86_400.0) / 3600.0) as usize] += 1;
            n += 1.0;
        }
        for (h, (&got, m)) in per_hour.iter().zip(&profile).enumerate() {
            let expected = 200.0 * m * days;
            let got = got as f64;
            assert!(
                (got - expected).abs() < 5.0 * expected.sqrt(),
                "hour {h}: {got} arrivals, expected {expected}"
            );
        }
        let expected: f64 = profile.iter().map(|m| 200.0 * m * days).sum();
        assert!(
            (n - expected).abs() < 5.0 * expected.sqrt(),
            "{n} vs {expected}"
        );
    }

    #[test]
    fn prefix_cache_never_covers_the_whole_prompt() {
        let class = ClassParams {
            prefix_cache_hit: 1.0,
            input_tokens: DistParams::constant(100.0),
            ..ClassParams::default()
        };
        let s = scenario(vec![class], 3600.0);
        assert!(Workload::new(&s, 1).all(|r| r.cached_tokens == 99));
    }

    #[test]
    fn value_stability_of_the_first_draws() {
        // Pinned: a change here changes every shared link's numbers.
        let s = scenario(
            vec![ClassParams {
                input_tokens: DistParams::log_normal(1000.0, 4000.0),
                ..ClassParams::default()
            }],
            3600.0,
        );
        let first: Vec<(u64, u32)> = Workload::new(&s, 42)
            .take(3)
            .map(|r| ((r.arrival_s * 1e6) as u64, r.input_tokens))
            .collect();
        assert_eq!(
            first, PINNED_FIRST_DRAWS,
            "workload draws changed for seed 42"
        );
    }

    #[test]
    fn a_fixed_count_sends_exactly_n_whatever_the_horizon() {
        // 1000 requests in geometric batches (mean 3) at 360 batches/h:
        // about 10,000 s of arrivals, far past the 60 s horizon; the last
        // batch is cut short to make exactly 1000.
        let class = ClassParams {
            batches_per_hour: 360.0,
            batch_size: DistParams::new(Shape::Geometric { mean: 3.0 }),
            load: LoadParams::FixedCount { requests: 1000 },
            ..ClassParams::default()
        };
        let s = scenario(vec![class], 60.0);
        let reqs: Vec<_> = Workload::new(&s, 4).collect();
        assert_eq!(reqs.len(), 1000);
        assert!(reqs[999].arrival_s > 60.0, "{}", reqs[999].arrival_s);
    }

    #[test]
    fn an_offline_class_sends_exactly_n_at_time_zero() {
        let class = ClassParams {
            load: LoadParams::Offline { requests: 777 },
            ..ClassParams::default()
        };
        let s = scenario(vec![class], 60.0);
        let reqs: Vec<_> = Workload::new(&s, 4).collect();
        assert_eq!(reqs.len(), 777);
        assert!(reqs.iter().all(|r| r.arrival_s == 0.0));
    }

    #[test]
    fn a_closed_loop_sends_its_clients_first_then_its_earliest_sends() {
        // Three clients, at most five requests, 2 s of think time. The
        // returns are noticed out of time order (the cluster notices a
        // replica's returns when it runs that replica); the class's last two
        // requests are still its two earliest sends, in either order.
        let class = ClassParams {
            load: LoadParams::ClosedLoop {
                clients: 3,
                think_ms: Some(DistParams::constant(2000.0)),
                requests: Some(5),
            },
            ..ClassParams::default()
        };
        let s = scenario(vec![class], 60.0);
        for order in [
            [(1, 5.0), (0, 3.0), (2, 4.0)],
            [(0, 3.0), (2, 4.0), (1, 5.0)],
        ] {
            let mut w = Workload::new(&s, 4);
            let first: Vec<f64> = w.by_ref().map(|r| r.arrival_s).collect();
            assert_eq!(first, [0.0; 3]);
            assert!(w.peek_s().is_infinite() && !w.is_finished());
            for (id, at_s) in order {
                w.returned(id, 0, at_s);
            }
            let next: Vec<f64> = w.by_ref().map(|r| r.arrival_s).collect();
            assert_eq!(
                next,
                [5.0, 6.0],
                "the two earliest sends, noticed {order:?}"
            );
            assert!(!w.is_finished(), "two requests are out");
            w.returned(3, 0, 8.0);
            w.returned(4, 0, 9.0);
            assert!(w.is_finished());
        }
    }

    #[test]
    fn a_joint_model_draws_pairs_from_a_stream_of_its_own() {
        let draws = |lengths: Option<LengthsParams>, seed: u64| {
            let class = ClassParams {
                input_tokens: DistParams::log_normal(1000.0, 4000.0),
                output_tokens: DistParams::log_normal(200.0, 800.0).clamped(None, Some(4000.0)),
                lengths,
                ..ClassParams::default()
            };
            Workload::new(&scenario(vec![class], 3600.0), seed)
                .map(|r| (r.arrival_s, (r.input_tokens, r.output_tokens)))
                .unzip::<_, _, Vec<_>, Vec<_>>()
        };
        let table = LengthsParams::Pairs {
            pairs: vec![[10.0, 1.0], [20.0, 2.0]],
            weights: None,
        };
        let (times, pairs) = draws(Some(table), 3);
        // The same arrivals: the lengths take nothing from the times' stream.
        assert_eq!(times, draws(None, 3).0);
        assert!(pairs.iter().all(|p| *p == (10, 1) || *p == (20, 2)));
        assert!(pairs.contains(&(10, 1)) && pairs.contains(&(20, 2)));
        // Pinned: a change here changes the numbers of every shared link
        // with correlated lengths.
        let (_, pairs) = draws(Some(LengthsParams::Correlated { rho: 0.6 }), 42);
        assert_eq!(pairs[..3], PINNED_FIRST_PAIRS, "seed 42");
    }

    /// The first three (prompt, output) lengths with correlated lengths, seed 42.
    const PINNED_FIRST_PAIRS: [(u32, u32); 3] = [(635, 77), (2318, 781), (1600, 522)];

    /// Arrival time \[us\] and prompt length of the first three requests, seed 42.
    const PINNED_FIRST_DRAWS: [(u64, u32); 3] =
        [(85_433_862, 1026), (122_809_874, 3842), (133_612_788, 1461)];
}

//! Workload sampling: the stream of requests a scenario produces.
//!
//! Each class draws from four independent seeded streams (batch times, batch
//! sizes, prompt lengths, output lengths), so scaling one input keeps every
//! other draw the same. Batches of a class arrive as a Poisson process; a
//! time-of-day profile makes it non-homogeneous, sampled exactly by
//! inverting the integrated rate (one exponential draw per batch; see
//! `ClassStream::invert_profile`).

use crate::model::dist::{Dist, round};
use crate::model::scenario::{Class, Scenario};
use crate::rng::{SimRng, stream};
use crate::samplers::{Exp, Exp1};

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
    /// that never sends.
    gap: Option<Exp>,
    /// Whether the rate is the same in every hour (no profile to follow).
    flat: bool,
    times: SimRng,
    sizes: SimRng,
    inputs: Draws,
    outputs: Draws,
    /// Time of the batch being emitted, or of the next batch.
    batch_s: f64,
    /// Requests of the current batch still to emit.
    left_in_batch: u32,
}

/// The requests of a scenario in arrival order (ties: lower class first, then
/// the order within a batch). An iterator: memory does not grow with the
/// number of requests.
pub struct Workload<'a> {
    scenario: &'a Scenario,
    streams: Vec<ClassStream>,
    horizon_s: f64,
}

impl<'a> Workload<'a> {
    pub fn new(scenario: &'a Scenario, seed: u64) -> Workload<'a> {
        let horizon_s = scenario.params().run.horizon_s;
        let streams = scenario
            .classes()
            .iter()
            .enumerate()
            .map(|(i, class)| {
                let base = 8 * i as u64;
                let peak_multiplier = class.time_of_day.iter().copied().fold(0.0, f64::max);
                let peak_rate = class.batch_rate_per_s * peak_multiplier;
                let mut s = ClassStream {
                    class: i as u16,
                    gap: (peak_rate > 0.0)
                        .then(|| Exp::new(peak_rate).ok())
                        .flatten(),
                    flat: class.time_of_day.iter().all(|&m| m == peak_multiplier),
                    times: stream(seed, base),
                    sizes: stream(seed, base + 1),
                    inputs: Draws::new(stream(seed, base + 2)),
                    outputs: Draws::new(stream(seed, base + 3)),
                    batch_s: 0.0,
                    left_in_batch: 0,
                };
                s.next_batch(class, 0.0, horizon_s);
                s
            })
            .collect();
        Workload {
            scenario,
            streams,
            horizon_s,
        }
    }
}

impl ClassStream {
    /// Draws the next batch after time `after`: its time and size (a time
    /// at or past `horizon_s` ends the stream).
    fn next_batch(&mut self, class: &Class, after: f64, horizon_s: f64) {
        let Some(gap) = &self.gap else {
            self.batch_s = f64::INFINITY;
            return;
        };
        let t = if self.flat {
            after + gap.sample(&mut self.times)
        } else {
            self.invert_profile(class, after, horizon_s)
        };
        self.batch_s = if t.is_finite() { t } else { f64::INFINITY };
        if self.batch_s < horizon_s {
            self.left_in_batch = class.batch_size.sample(&mut self.sizes);
        }
    }

    /// The next arrival of the non-homogeneous Poisson process after `after`,
    /// exactly, by inverting its integrated rate: draw E ~ Exp(1), then walk
    /// the hours (rate constant in each) until the rate integrated from
    /// `after` reaches E. One draw per arrival, however deep the troughs.
    fn invert_profile(&mut self, class: &Class, after: f64, horizon_s: f64) -> f64 {
        const HOUR: f64 = 3600.0;
        let mut left: f64 = Exp1.sample(&mut self.times);
        let mut t = after;
        while t < horizon_s {
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
}

impl Iterator for Workload<'_> {
    type Item = RequestSpec;

    #[inline(always)]
    fn next(&mut self) -> Option<RequestSpec> {
        // Few classes: a linear scan beats a heap.
        let mut best: Option<usize> = None;
        for (i, s) in self.streams.iter().enumerate() {
            if s.batch_s < self.horizon_s
                && best.is_none_or(|b| s.batch_s < self.streams[b].batch_s)
            {
                best = Some(i);
            }
        }
        let s = &mut self.streams[best?];
        let class = &self.scenario.classes()[s.class as usize];
        let input_tokens = s.inputs.next(&class.input_tokens);
        let output_tokens = s.outputs.next(&class.output_tokens);
        let cached = round(class.prefix_cache_hit * input_tokens as f64) as u32;
        let spec = RequestSpec {
            class: s.class,
            arrival_s: s.batch_s,
            input_tokens,
            cached_tokens: cached.min(input_tokens - 1),
            output_tokens,
        };
        s.left_in_batch -= 1;
        if s.left_in_batch == 0 {
            let after = s.batch_s;
            s.next_batch(class, after, self.horizon_s);
        }
        Some(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::dist::{DistParams, Shape};
    use crate::params::{ClassParams, ScenarioParams};

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

    /// Arrival time \[us\] and prompt length of the first three requests, seed 42.
    const PINNED_FIRST_DRAWS: [(u64, u32); 3] =
        [(85_433_862, 1026), (122_809_874, 3842), (133_612_788, 1461)];
}

//! Workload sampling: the stream of requests a scenario produces.
//!
//! Each class draws from four independent seeded streams (batch times, batch
//! sizes, prompt lengths, output lengths), so scaling one input keeps every
//! other draw the same. Batches of a class arrive as a Poisson process; a
//! time-of-day profile makes it non-homogeneous, sampled exactly by thinning
//! (Lewis and Shedler): candidates at the peak rate, each kept with probability
//! rate(t) / peak rate.

use rand_distr::{Distribution, Exp};

use crate::dist::{round, unit};
use crate::rng::{SimRng, stream};
use crate::scenario::{Class, Scenario};

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

struct ClassStream {
    class: u16,
    /// Candidate inter-arrival times at the peak rate; `None` for a class
    /// that never sends.
    gap: Option<Exp<f64>>,
    peak_multiplier: f64,
    times: SimRng,
    sizes: SimRng,
    inputs: SimRng,
    outputs: SimRng,
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
        let streams = scenario
            .classes
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
                    peak_multiplier,
                    times: stream(seed, base),
                    sizes: stream(seed, base + 1),
                    inputs: stream(seed, base + 2),
                    outputs: stream(seed, base + 3),
                    batch_s: 0.0,
                    left_in_batch: 0,
                };
                s.next_batch(class, 0.0);
                s
            })
            .collect();
        Workload {
            scenario,
            streams,
            horizon_s: scenario.params.run.horizon_s,
        }
    }
}

impl ClassStream {
    /// Draws the next batch after time `after`: its time and size.
    fn next_batch(&mut self, class: &Class, after: f64) {
        let Some(gap) = &self.gap else {
            self.batch_s = f64::INFINITY;
            return;
        };
        let mut t = after;
        loop {
            t += gap.sample(&mut self.times);
            if !t.is_finite() {
                self.batch_s = f64::INFINITY;
                return;
            }
            let hour = hour_of_day(t);
            let keep = class.time_of_day[hour.min(23)] / self.peak_multiplier;
            if keep >= 1.0 || unit(&mut self.times) < keep {
                break;
            }
        }
        self.batch_s = t;
        self.left_in_batch = class.batch_size.sample(&mut self.sizes);
    }
}

impl Iterator for Workload<'_> {
    type Item = RequestSpec;

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
        let class = &self.scenario.classes[s.class as usize];
        let input_tokens = class.input_tokens.sample(&mut s.inputs);
        let output_tokens = class.output_tokens.sample(&mut s.outputs);
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
            s.next_batch(class, after);
        }
        Some(spec)
    }
}

/// `((t % 86_400) / 3600) as usize` for `t >= 0`, without the library call
/// that `%` on f64 is: the subtraction below is exact while `t < 2^52`.
fn hour_of_day(t: f64) -> usize {
    const DAY: f64 = 86_400.0;
    let seconds = if t < 4_503_599_627_370_496.0 {
        let r = t - (t / DAY) as i64 as f64 * DAY;
        // The quotient may round up to the next whole day.
        if r < 0.0 { r + DAY } else { r }
    } else {
        t % DAY
    };
    (seconds / 3600.0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::{DistParams, Shape};
    use crate::scenario::{ClassParams, ScenarioParams};

    fn scenario(classes: Vec<ClassParams>, horizon_s: f64) -> Scenario {
        let mut p = ScenarioParams {
            classes,
            ..ScenarioParams::default()
        };
        p.run.horizon_s = horizon_s;
        Scenario::try_from(p).expect("valid")
    }

    #[test]
    fn same_seed_same_requests_other_seed_other_requests() {
        let s = scenario(ScenarioParams::default().classes, 3600.0);
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
    fn hour_of_day_is_the_remainder_of_a_day() {
        let mut rng = crate::rng::stream(4, 4);
        let mut cases = vec![0.0, 86_400.0, 86_399.999_999_999_99, 3600.0, 1e15, 4.6e15];
        for k in 0..1000u64 {
            let day = k as f64 * 86_400.0;
            cases.extend([day, day - 1e-9, day + 1e-9, libm::nextafter(day, 0.0)]);
        }
        for _ in 0..100_000 {
            cases.push(unit(&mut rng) * 1e9);
        }
        for t in cases.into_iter().filter(|t| *t >= 0.0) {
            assert_eq!(
                hour_of_day(t),
                ((t % 86_400.0) / 3600.0) as usize,
                "t = {t}"
            );
        }
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
                input_tokens: DistParams::new(Shape::LogNormal {
                    median: 1000.0,
                    p90: 4000.0,
                }),
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

    /// Arrival time [us] and prompt length of the first three requests, seed 42.
    const PINNED_FIRST_DRAWS: [(u64, u32); 3] =
        [(85_433_862, 240), (122_809_874, 3513), (133_612_788, 671)];
}

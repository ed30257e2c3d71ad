//! The census: one pass over every record of a run (warm-up included) that
//! counts them per class, for the warnings, and per series interval.

use crate::sim::{RequestRecord, SeriesPoint, Status};

/// What one pass over every record (warm-up included) counts besides the
/// series flows it adds up.
pub struct Census {
    /// Records per class, to size the samples.
    pub per_class: Vec<usize>,
    /// Records rejected as longer than the KV cache or the model allows.
    pub too_long: u64,
    /// Records preempted at least once.
    pub preempted: u64,
    /// The busy period: the first arrival and the last completion \[s\]
    /// (infinite and NaN while there are none).
    pub first_arrival_s: f64,
    pub last_completion_s: f64,
    /// Output and prompt tokens of the completed requests.
    pub completed_output_tokens: u64,
    pub completed_input_tokens: u64,
}

impl Census {
    /// Output and total (prompt + output) tokens per second of the
    /// completed requests over the busy period, as offline throughput
    /// tables give them (NaN without a completion).
    pub fn busy_period_throughput(&self) -> (f64, f64, f64) {
        let period_s = self.last_completion_s - self.first_arrival_s;
        let output = self.completed_output_tokens as f64;
        let total = output + self.completed_input_tokens as f64;
        (period_s, output / period_s, total / period_s)
    }
}

impl Census {
    /// Counts `records` (of `classes` classes) and adds their arrivals and
    /// completions to the `series` point of each one's interval (of
    /// `interval_s`), in one pass.
    pub fn take(
        records: &[RequestRecord],
        classes: usize,
        series: &mut [SeriesPoint],
        interval_s: f64,
    ) -> Census {
        let mut census = Census {
            per_class: vec![0; classes],
            too_long: 0,
            preempted: 0,
            first_arrival_s: f64::INFINITY,
            last_completion_s: f64::NAN,
            completed_output_tokens: 0,
            completed_input_tokens: 0,
        };
        let (mut arrival, mut completion) =
            (SeriesIndex::new(interval_s), SeriesIndex::new(interval_s));
        for r in records {
            census.per_class[r.class as usize] += 1;
            census.too_long += (r.status == Status::RejectedTooLong) as u64;
            census.preempted += (r.preemptions > 0) as u64;
            if let Some(p) = series.get_mut(arrival.of(r.arrival_s)) {
                p.arrivals += 1;
            }
            census.first_arrival_s = census.first_arrival_s.min(r.arrival_s);
            if r.status == Status::Completed {
                // (`f64::max` ignores the NaN it starts from.)
                census.last_completion_s = census.last_completion_s.max(r.end_s);
                census.completed_output_tokens += r.output_tokens as u64;
                census.completed_input_tokens += r.input_tokens as u64;
                if let Some(p) = series.get_mut(completion.of(r.end_s)) {
                    p.completions += 1;
                }
            }
        }
        census
    }
}

/// The index of the series interval (of `interval_s`) that ends at or after
/// a time, `ceil(t / interval_s) - 1` (0 up to the first interval's end),
/// remembering the last answer: successive arrivals, and mostly successive
/// completions, share an interval, and checking that costs less than the
/// conversions.
struct SeriesIndex {
    interval_s: f64,
    last: usize,
    /// `last` is the answer for quotients in (`above`, `up_to`].
    above: f64,
    up_to: f64,
}

impl SeriesIndex {
    /// Nothing remembered yet.
    fn new(interval_s: f64) -> SeriesIndex {
        SeriesIndex {
            interval_s,
            last: 0,
            above: f64::NAN,
            up_to: f64::NAN,
        }
    }

    /// The interval of time `t`.
    fn of(&mut self, t: f64) -> usize {
        let q = t / self.interval_s;
        if self.above < q && q <= self.up_to {
            return self.last;
        }
        let index = (crate::model::dist::ceil_u64(q) as usize).max(1) - 1;
        // For i > 0, i = ceil(q) - 1 exactly when i < q <= i + 1; every
        // q <= 1 gives 0. Only exact conversions are remembered.
        (self.above, self.up_to) = match index as u64 {
            0 => (f64::NEG_INFINITY, 1.0),
            i if i < 1 << 52 => (i as f64, (i + 1) as f64),
            _ => (f64::NAN, f64::NAN),
        };
        self.last = index;
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dist::unit;

    #[test]
    fn series_index_is_the_interval_formula_in_any_order() {
        let interval = 300.0;
        let formula = |t: f64| (crate::model::dist::ceil_u64(t / interval) as usize).max(1) - 1;
        let mut rng = crate::rng::stream(7, 7);
        let mut times: Vec<f64> = (0..20_000).map(|i| i as f64 * 3.7).collect();
        times.extend((0..20_000).map(|_| unit(&mut rng) * 1e5));
        times.extend((0..2_000).map(|i| (i % 40) as f64 * interval));
        times.extend((0..2_000).map(|i| ((i % 40) as f64 * interval).next_up()));
        times.extend([
            -1.0,
            -0.0,
            0.0,
            1e-300,
            interval,
            f64::NAN,
            0.5,
            f64::INFINITY,
            5.0,
            f64::NEG_INFINITY,
            1e300,
            1e18,
            1e18 + 4096.0,
            299.0,
            301.0,
        ]);
        let mut index = SeriesIndex::new(interval);
        for &t in &times {
            assert_eq!(index.of(t), formula(t), "t = {t}");
        }
    }
}

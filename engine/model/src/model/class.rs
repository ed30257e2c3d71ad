//! A validated request class, ready to sample: its lengths, rates over
//! the day, deadline and load mode.

use crate::model::dist::{Dist, JointLengths};
use crate::model::load::Load;
use crate::params::DAY_S;

/// A validated class, ready to sample.
#[derive(Clone, Debug)]
pub struct Class {
    /// Batch arrival rate before time-of-day multipliers \[batches/s\].
    pub batch_rate_per_s: f64,
    pub batch_size: Dist,
    /// Multiplier for each hour of the day (all 1 without a profile).
    pub time_of_day: [f64; 24],
    pub input_tokens: Dist,
    pub output_tokens: Dist,
    /// The joint model of both lengths, drawn instead of the two
    /// distributions above when set (`None`: independent).
    pub lengths: Option<JointLengths>,
    pub prefix_cache_hit: f64,
    pub priority: i32,
    pub deadline_s: f64,
    pub timeout_s: Option<f64>,
    pub load: Load,
}

impl Class {
    /// Mean prompt and output lengths \[tokens\]: a table's exact means,
    /// otherwise the two distributions' (a correlation changes neither).
    pub fn mean_lengths(&self) -> (f64, f64) {
        match &self.lengths {
            Some(JointLengths::Pairs(table)) => table.means(),
            _ => (
                self.input_tokens.moments().0,
                self.output_tokens.moments().0,
            ),
        }
    }

    /// The shortest prompt and the shortest output the class can draw
    /// \[tokens\] (with a table, each over the table, not one pair).
    pub fn smallest_lengths(&self) -> (u32, u32) {
        match &self.lengths {
            Some(JointLengths::Pairs(table)) => table.smallest(),
            _ => (self.input_tokens.smallest(), self.output_tokens.smallest()),
        }
    }

    /// One request's (prompt, output) lengths \[tokens\]: from the joint
    /// model with `joint` when set, otherwise the prompt from `inputs` and
    /// the output from `outputs` (so that independent draws are what they
    /// were before joint models existed).
    pub fn sample_lengths<R: rand::Rng + ?Sized>(
        &self,
        inputs: &mut R,
        outputs: &mut R,
        joint: &mut R,
    ) -> (u32, u32) {
        match &self.lengths {
            Some(model) => model.sample(joint),
            None => (
                self.input_tokens.sample(inputs),
                self.output_tokens.sample(outputs),
            ),
        }
    }

    /// Mean batch rate over a whole day, multipliers included \[batches/s\];
    /// zero for offline and closed-loop classes, which offer no rate of
    /// their own (the load estimate counts only rate-driven classes).
    pub fn mean_batch_rate_per_s(&self) -> f64 {
        if !self.load.follows_rate() {
            return 0.0;
        }
        self.batch_rate_per_s * self.time_of_day.iter().sum::<f64>() / 24.0
    }

    /// Batches expected from time 0 (midnight) to `horizon_s`: the rate
    /// times each hour's multiplier, integrated over the horizon (over a
    /// horizon that is not whole days, a day's mean would miss a busy first
    /// hour: a multiplier of 41,083 beside ones of 2 sent three times the
    /// estimate within 458 s, found by `sojourn-fuzz`). Zero for classes
    /// that follow no rate.
    pub fn expected_batches(&self, horizon_s: f64) -> f64 {
        if !self.load.follows_rate() {
            return 0.0;
        }
        const HOUR_S: f64 = 3600.0;
        let day: f64 = self.time_of_day.iter().sum();
        let days = (horizon_s / DAY_S).floor();
        let rest = horizon_s - days * DAY_S;
        let mut hours = 0.0;
        for (h, m) in self.time_of_day.iter().enumerate() {
            let start = h as f64 * HOUR_S;
            hours += m * (rest - start).clamp(0.0, HOUR_S);
        }
        self.batch_rate_per_s * (days * day * HOUR_S + hours)
    }
}

//! What the engine steps were like, counted as they run: steps and their
//! durations by the sequences and by the tokens in each, the step time
//! spent on prompt tokens, and the fullest KV cache since the last series
//! sample ([`StepCounters`]). The report turns them
//! into batch statistics (docs/engine.md, Batch statistics).
//!
//! Both engines count every step: the reference one at a time, the fast
//! engine its executed steps one at a time and each skipped run of k
//! identical decode steps at once (k steps of the same batch, with the
//! run's total duration), so the counts agree exactly and the durations to
//! rounding.

use crate::model::step_time::StepShape;

/// Values below this have a bin each (2^14: a batch or a step's tokens
/// hardly ever reach it).
const EXACT: u64 = 1 << 14;

/// Bins per octave from [`EXACT`] on, as a power of two (each bin is
/// 1/1,024 of its octave wide).
const SUB_BITS: u32 = 10;

/// The bin of `value`: the value itself below [`EXACT`], then 1,024 bins
/// per octave, in the order of the values.
pub fn bin_of(value: u64) -> usize {
    if value < EXACT {
        return value as usize;
    }
    let octave = 63 - value.leading_zeros();
    let shift = octave - SUB_BITS;
    let within = (value >> shift) - (1 << SUB_BITS);
    (EXACT + (((octave - EXACT.trailing_zeros()) as u64) << SUB_BITS) + within) as usize
}

/// The smallest value in bin `bin`.
pub fn bin_floor(bin: usize) -> u64 {
    let bin = bin as u64;
    if bin < EXACT {
        return bin;
    }
    let octave = ((bin - EXACT) >> SUB_BITS) + EXACT.trailing_zeros() as u64;
    let within = (bin - EXACT) & ((1 << SUB_BITS) - 1);
    ((1 << SUB_BITS) + within) << (octave - SUB_BITS as u64)
}

/// Steps and their duration by a per-step value (sequences, or tokens).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepHistogram {
    /// (steps, their total duration \[s\]) by value, below [`EXACT`].
    exact: Vec<(u64, f64)>,
    /// The same for larger values, by [`bin_of`] the value minus [`EXACT`].
    wide: Vec<(u64, f64)>,
    /// Over the steps of the wide bins: the sum of the value, and of the
    /// value times the step's duration \[s\].
    wide_value_steps: f64,
    wide_value_seconds: f64,
}

impl StepHistogram {
    /// Counts `steps` steps of `value` each, lasting `duration_s` in all.
    #[inline(always)]
    fn add(&mut self, value: u64, steps: u64, duration_s: f64) {
        match self.exact.get_mut(value as usize) {
            Some(slot) => {
                slot.0 += steps;
                slot.1 += duration_s;
            }
            None => self.add_new(value, steps, duration_s),
        }
    }

    /// [`Self::add`] for a value with no bin yet or a wide one. (Out of
    /// line: each bin is new once, and wide values are rare.)
    #[inline(never)]
    fn add_new(&mut self, value: u64, steps: u64, duration_s: f64) {
        let (bins, bin) = if value < EXACT {
            (&mut self.exact, value as usize)
        } else {
            self.wide_value_steps += value as f64 * steps as f64;
            self.wide_value_seconds += value as f64 * duration_s;
            (&mut self.wide, bin_of(value) - EXACT as usize)
        };
        if bin >= bins.len() {
            bins.resize(bin + 1, (0, 0.0));
        }
        bins[bin].0 += steps;
        bins[bin].1 += duration_s;
    }

    /// (smallest value, steps, duration \[s\]) of each bin, in order.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64, f64)> + '_ {
        let wide = self
            .wide
            .iter()
            .enumerate()
            .map(|(i, b)| (i + EXACT as usize, b));
        (self.exact.iter().enumerate().chain(wide))
            .map(|(bin, &(steps, s))| (bin_floor(bin), steps, s))
    }

    /// Sum over steps of the value (exact below 2^53).
    pub fn value_steps(&self) -> f64 {
        let exact = self.exact.iter().enumerate();
        exact
            .map(|(v, &(steps, _))| v as f64 * steps as f64)
            .sum::<f64>()
            + self.wide_value_steps
    }

    /// Sum over steps of the value times the step's duration \[s\].
    pub fn value_seconds(&self) -> f64 {
        let exact = self.exact.iter().enumerate();
        exact.map(|(v, &(_, s))| v as f64 * s).sum::<f64>() + self.wide_value_seconds
    }
}

/// The counters of a run's steps, all replicas together.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepCounters {
    /// By sequences in the step (decodes and prefill chunks).
    pub by_sequences: StepHistogram,
    /// By tokens computed in the step.
    pub by_tokens: StepHistogram,
    /// Step time spent on prompt tokens (recomputed ones included), each
    /// step's duration split in proportion to its tokens \[s\]; the rest of
    /// the step time went to decode tokens.
    pub prompt_s: f64,
    /// Of it, on tokens a preempted request computes again \[s\].
    pub recompute_s: f64,
    /// The most KV blocks one replica held in a step since the last
    /// series sample ([`Self::take_peak_blocks`]).
    peak_blocks: u32,
}

impl StepCounters {
    /// An executed step of `shape`, `recomputed` of whose prompt tokens
    /// a preempted request computes again, lasting `dt` seconds, with
    /// `used_blocks` KV blocks held on its replica once it is scheduled.
    #[inline(always)]
    pub fn step(&mut self, shape: &StepShape, recomputed: u64, dt: f64, used_blocks: u32) {
        let tokens = shape.tokens();
        self.by_sequences
            .add(shape.decode_seqs + shape.prefill_seqs, 1, dt);
        self.by_tokens.add(tokens, 1, dt);
        if shape.prefill_tokens > 0 {
            // (Counts stay far below 2^53: through i64 the conversions are
            // one instruction each and give the same values.)
            let per_token_s = dt / tokens as i64 as f64;
            self.prompt_s += per_token_s * shape.prefill_tokens as i64 as f64;
            if recomputed > 0 {
                self.recompute_s += per_token_s * recomputed as i64 as f64;
            }
        }
        self.peak_blocks = self.peak_blocks.max(used_blocks);
    }

    /// A skipped run of `steps` decode-only steps of `sequences` decoders,
    /// lasting `total_s` in all, with `last_used_blocks` KV blocks held in
    /// its last step (the most: a run only allocates).
    #[inline(always)]
    pub fn decode_run(&mut self, sequences: u64, steps: u64, total_s: f64, last_used_blocks: u32) {
        self.by_sequences.add(sequences, steps, total_s);
        self.by_tokens.add(sequences, steps, total_s);
        self.peak_blocks = self.peak_blocks.max(last_used_blocks);
    }

    /// The most KV blocks one replica held in a step since the last call.
    pub fn take_peak_blocks(&mut self) -> u32 {
        std::mem::take(&mut self.peak_blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_exact_below_16384_then_1024_per_octave() {
        for v in 0..EXACT {
            assert_eq!((bin_of(v), bin_floor(v as usize)), (v as usize, v));
        }
        // 16,384 to 32,767 in bins 16 wide, 32,768 to 65,535 in bins 32 wide.
        assert_eq!(bin_of(16_384), 16_384);
        assert_eq!(bin_of(16_399), 16_384);
        assert_eq!(bin_of(16_400), 16_385);
        assert_eq!(bin_of(32_767), 17_407);
        assert_eq!(bin_of(32_768), 17_408);
        assert_eq!(bin_floor(17_408), 32_768);
        assert_eq!(bin_floor(17_409), 32_800);
        let mut last = 0;
        for v in (EXACT..1 << 40).step_by(997_331).chain([u64::MAX]) {
            let bin = bin_of(v);
            assert!(bin >= last, "bins follow the values");
            last = bin;
            let floor = bin_floor(bin);
            assert!(floor <= v && bin_of(floor) == bin, "{v}: floor {floor}");
            assert!((v - floor) as f64 <= v as f64 / 1024.0, "{v}: bin too wide");
        }
    }

    /// A run of k identical decode steps counts as k executed steps of the
    /// same shape would.
    #[test]
    fn a_skipped_run_counts_as_its_steps_one_by_one() {
        let shape = StepShape {
            decode_seqs: 5,
            decode_kv_tokens: 500,
            ..StepShape::default()
        };
        let (mut one_by_one, mut run) = (StepCounters::default(), StepCounters::default());
        for (j, dt) in [0.25, 0.5, 0.125].into_iter().enumerate() {
            one_by_one.step(&shape, 0, dt, 10 + j as u32);
        }
        run.decode_run(5, 3, 0.875, 12);
        assert_eq!(one_by_one, run);
        assert_eq!(run.by_sequences.value_steps(), 15.0);
        assert_eq!(run.by_tokens.value_seconds(), 5.0 * 0.875);
        assert_eq!(run.prompt_s, 0.0);
        assert_eq!(run.take_peak_blocks(), 12);
        assert_eq!(run.take_peak_blocks(), 0, "the peak starts again");
    }

    #[test]
    fn a_mixed_step_gives_its_prompt_tokens_their_share_of_its_time() {
        // Two decodes and an 8-token chunk, 2 tokens of it recomputed: 10
        // tokens in 10 s.
        let mut shape = StepShape {
            decode_seqs: 2,
            decode_kv_tokens: 100,
            ..StepShape::default()
        };
        shape.add_prefill(40, 8);
        let mut c = StepCounters::default();
        c.step(&shape, 2, 10.0, 7);
        assert_eq!((c.prompt_s, c.recompute_s), (8.0, 2.0));
        let bins = |h: &StepHistogram| -> Vec<(u64, u64, f64)> {
            h.bins().filter(|&(_, steps, _)| steps > 0).collect()
        };
        assert_eq!(bins(&c.by_sequences), [(3, 1, 10.0)]);
        assert_eq!(bins(&c.by_tokens), [(10, 1, 10.0)]);
    }
}

//! The batch statistics ([`BatchStats`]) from the engine's step counters
//! and the time series: the running batch and the tokens per step, each
//! weighted by step time and by step, the split of step time, the stepping
//! rate and KV cache use over time.

use super::shape::{BatchStats, KvUse, StepFigure, StepSpread};
use crate::sim::{SeriesPoint, StepCounters, StepHistogram};

/// KV cache use is summarised over at most this many stretches of the run.
pub const KV_STRETCHES: usize = 24;

impl BatchStats {
    /// The statistics of a run's `counters`, with KV use from its `series`
    /// (sampled every `interval_s`).
    pub fn build(counters: &StepCounters, series: &[SeriesPoint], interval_s: f64) -> BatchStats {
        let by_sequences = &counters.by_sequences;
        let (steps, step_s) = by_sequences
            .bins()
            .fold((0, 0.0), |(n, s), (_, steps, seconds)| {
                (n + steps, s + seconds)
            });
        let (prompt_s, recompute_s) = (counters.prompt_s, counters.recompute_s);
        BatchStats {
            steps,
            steps_per_s: steps as f64 / step_s,
            batch_size: figure(by_sequences),
            tokens_per_step: figure(&counters.by_tokens),
            // (Sums of shares of the same steps: at least zero but for
            // rounding.)
            prefill_s: (prompt_s - recompute_s).max(0.0),
            // (Sums in another order: a run without prompt tokens could
            // come out a rounding error from zero.)
            decode_s: (step_s - prompt_s).max(0.0),
            recompute_s,
            kv_use: kv_use(series, interval_s),
        }
    }
}

impl Default for BatchStats {
    /// The statistics of a run without steps: no figures.
    fn default() -> BatchStats {
        BatchStats::build(&StepCounters::default(), &[], 1.0)
    }
}

/// The figure a histogram counts, weighted by time and by step.
fn figure(histogram: &StepHistogram) -> StepFigure {
    let bins: Vec<(u64, u64, f64)> = histogram.bins().collect();
    let steps: u64 = bins.iter().map(|b| b.1).sum();
    let seconds: f64 = bins.iter().map(|b| b.2).sum();
    // The smallest value whose bins up to it hold at least `target` of
    // the weight `of` gives each.
    let at = |of: &dyn Fn(&(u64, u64, f64)) -> f64, target: f64| -> f64 {
        let mut cumulative = 0.0;
        for bin in &bins {
            cumulative += of(bin);
            if of(bin) > 0.0 && cumulative >= target {
                return bin.0 as f64;
            }
        }
        f64::NAN
    };
    let by_step = |bin: &(u64, u64, f64)| bin.1 as f64;
    let by_time = |bin: &(u64, u64, f64)| bin.2;
    // Ranks among steps as the report's percentiles take them: ceil(p n).
    let rank = |p: f64| (p * steps as f64).ceil().max(1.0);
    StepFigure {
        by_time: StepSpread {
            mean: histogram.value_seconds() / seconds,
            p50: at(&by_time, 0.5 * seconds),
            p99: at(&by_time, 0.99 * seconds),
        },
        by_step: StepSpread {
            mean: histogram.value_steps() / steps as f64,
            p50: at(&by_step, rank(0.5)),
            p99: at(&by_step, rank(0.99)),
        },
    }
}

/// KV use over at most [`KV_STRETCHES`] stretches of whole series
/// intervals: the mean of the samples and the largest replica peak in each.
fn kv_use(series: &[SeriesPoint], interval_s: f64) -> Vec<KvUse> {
    let per_stretch = series.len().div_ceil(KV_STRETCHES).max(1);
    series
        .chunks(per_stretch)
        .map(|points| KvUse {
            start_s: points[0].t_s - interval_s,
            end_s: points[points.len() - 1].t_s,
            mean: points.iter().map(|p| p.kv_utilization).sum::<f64>() / points.len() as f64,
            peak: (points.iter().map(|p| p.kv_peak_utilization)).fold(f64::NAN, f64::max),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::step_time::StepShape;

    fn decode(seqs: u64) -> StepShape {
        StepShape {
            decode_seqs: seqs,
            decode_kv_tokens: 100 * seqs,
            ..StepShape::default()
        }
    }

    /// 98 steps of 1 sequence lasting 1 s each, one of 10 sequences lasting
    /// 100 s and one of 200 lasting 4 s: by step the batch is 1 at the
    /// median and 10 at the 99th percentile (the 99th of 100 steps); by
    /// time it is 10 at the median and 200 at the 99th percentile (the
    /// last 2% of the time).
    #[test]
    fn percentiles_by_step_and_by_time_weigh_the_steps_differently() {
        let mut c = StepCounters::default();
        c.decode_run(1, 98, 98.0, 5);
        c.step(&decode(10), 0, 100.0, 9);
        c.step(&decode(200), 0, 4.0, 7);
        let stats = BatchStats::build(&c, &[], 60.0);
        assert_eq!(stats.steps, 100);
        assert_eq!(stats.steps_per_s, 100.0 / 202.0);
        let by_step = &stats.batch_size.by_step;
        assert_eq!((by_step.mean, by_step.p50, by_step.p99), (3.08, 1.0, 10.0));
        let by_time = &stats.batch_size.by_time;
        assert_eq!((by_time.p50, by_time.p99), (10.0, 200.0));
        assert_eq!(by_time.mean, (98.0 + 1000.0 + 800.0) / 202.0);
        // Decode-only: tokens per step are the batch.
        assert_eq!(stats.tokens_per_step, stats.batch_size);
        assert_eq!((stats.decode_s, stats.prefill_s), (202.0, 0.0));
    }

    #[test]
    fn large_values_fall_on_their_bins_floor() {
        let mut c = StepCounters::default();
        let mut shape = decode(2);
        shape.add_prefill(0, 20_000);
        c.step(&shape, 1000, 4.0, 1);
        c.step(&decode(3), 0, 1.0, 1);
        let stats = BatchStats::build(&c, &[], 60.0);
        // 20,002 tokens fall in the bin from 20,000 (16 wide); the means
        // are exact.
        let tokens = &stats.tokens_per_step.by_step;
        assert_eq!(
            (tokens.mean, tokens.p50, tokens.p99),
            (10_002.5, 3.0, 20_000.0)
        );
        assert_eq!(
            stats.tokens_per_step.by_time.mean,
            (20_002.0 * 4.0 + 3.0) / 5.0
        );
        assert_eq!(stats.batch_size.by_time.p50, 3.0);
        // The prompt's share of its step, 1,000 tokens of it recomputed.
        let per_token = 4.0 / 20_002.0;
        assert_eq!(stats.recompute_s, per_token * 1000.0);
        assert_eq!(stats.prefill_s, per_token * 20_000.0 - per_token * 1000.0);
        assert_eq!(stats.decode_s, 5.0 - per_token * 20_000.0);
    }

    #[test]
    fn no_steps_no_figures() {
        let stats = BatchStats::default();
        assert_eq!(stats.steps, 0);
        for spread in [&stats.batch_size.by_time, &stats.tokens_per_step.by_step] {
            assert!(spread.mean.is_nan() && spread.p50.is_nan() && spread.p99.is_nan());
        }
        assert!(stats.kv_use.is_empty());
    }

    /// 50 samples make 17 stretches of 3 (the last of 2), at most 24 in
    /// all: each the mean of its samples and the largest peak.
    #[test]
    fn kv_use_groups_whole_intervals() {
        let series: Vec<SeriesPoint> = (1..=50)
            .map(|i| SeriesPoint {
                t_s: 10.0 * i as f64,
                waiting: 0,
                running: 0,
                kv_utilization: i as f64 / 100.0,
                kv_peak_utilization: if i == 5 { 0.9 } else { 0.5 },
                replicas: 1,
                arrivals: 0,
                completions: 0,
            })
            .collect();
        let kv = kv_use(&series, 10.0);
        assert_eq!(kv.len(), 17);
        assert_eq!((kv[0].start_s, kv[0].end_s), (0.0, 30.0));
        assert!((kv[0].mean - 0.02).abs() < 1e-15);
        assert_eq!((kv[0].peak, kv[1].peak, kv[2].peak), (0.5, 0.9, 0.5));
        assert_eq!((kv[16].start_s, kv[16].end_s), (480.0, 500.0));
        assert!((kv[16].mean - 0.495).abs() < 1e-15);
    }
}

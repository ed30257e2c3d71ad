//! The lengths of the datasets benchmarks draw their prompts from, for the
//! points whose source printed only totals: a replay at the mean lengths
//! loses what sets an offline run's length, its longest requests (a few
//! long outputs still decoding at a small batch after the rest finished).
//!
//! One so far: ShareGPT as vLLM's serving benchmark samples it,
//! `engine/data/sharegpt_lengths.csv` (15,460 pairs; its header and
//! `docs/calibration-sources.md`, "ShareGPT's lengths", say how it was
//! made).

use crate::params::trace::TracedRequest;
use crate::params::{LengthsParams, lengths_from_csv};

const SHAREGPT: &str = include_str!("../../data/sharegpt_lengths.csv");

/// vLLM's ShareGPT filter keeps a prompt of at most this many tokens
/// (`is_valid_sequence`'s `max_prompt_len`)...
const MAX_PROMPT: f64 = 1024.0;
/// ... and a prompt and output of at most this many together
/// (`max_total_len`).
const MAX_TOTAL: f64 = 2048.0;

/// The (prompt, output) pairs of dataset `name` (a point's `dataset`).
fn table(name: &str) -> Result<Vec<[f64; 2]>, String> {
    let text = match name {
        "sharegpt" => SHAREGPT,
        other => return Err(format!("dataset {other} has no length table")),
    };
    match lengths_from_csv(text) {
        Ok(LengthsParams::Pairs { pairs, .. }) if !pairs.is_empty() => Ok(pairs),
        Ok(_) => Err(format!("dataset {name}'s length table is empty")),
        Err(e) => Err(format!("dataset {name}'s length table: {e}")),
    }
}

/// `pairs` scaled so that their means are the point's `input` and `output`
/// \[tokens\] (its printed totals over its prompts: the run's tokenizer,
/// and its own sample of the dataset), each pair then rounded and held
/// within vLLM's caps, which the scaling could cross.
fn scaled(pairs: &[[f64; 2]], input: f64, output: f64) -> Vec<[f64; 2]> {
    let n = pairs.len() as f64;
    let input_factor = input / (pairs.iter().map(|p| p[0]).sum::<f64>() / n);
    let output_factor = output / (pairs.iter().map(|p| p[1]).sum::<f64>() / n);
    pairs
        .iter()
        .map(|[i, o]| {
            let prompt = libm::round(i * input_factor).clamp(1.0, MAX_PROMPT);
            [
                prompt,
                libm::round(o * output_factor).clamp(1.0, MAX_TOTAL - prompt),
            ]
        })
        .collect()
}

/// Dataset `name`'s pairs scaled to the point's means, to draw from (a
/// closed-loop point's clients).
pub(super) fn lengths(name: &str, input: f64, output: f64) -> Result<LengthsParams, String> {
    Ok(LengthsParams::Pairs {
        pairs: scaled(&table(name)?, input, output),
        weights: None,
    })
}

/// An offline point's `requests` prompts, all sent at time 0: the first
/// `requests` pairs of dataset `name` (the file's order, which has nothing
/// to do with length), scaled so that these very requests have the point's
/// means. Drawing them instead would miss the printed totals by the
/// sample's error (a few percent at 1,000), which these keep to rounding.
pub(super) fn offline_requests(
    name: &str,
    requests: u32,
    input: f64,
    output: f64,
) -> Result<Vec<TracedRequest>, String> {
    let pairs = table(name)?;
    let sample = pairs.get(..requests as usize).ok_or_else(|| {
        format!(
            "dataset {name} has {} pairs, fewer than {requests} requests",
            pairs.len()
        )
    })?;
    Ok(scaled(sample, input, output)
        .into_iter()
        .map(|[i, o]| TracedRequest {
            arrival_s: 0.0,
            input_tokens: i as u32,
            output_tokens: o as u32,
            prefix_hit: None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_and_sd(xs: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
        let n = xs.clone().count() as f64;
        let mean = xs.clone().sum::<f64>() / n;
        let var = xs.map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        (mean, libm::sqrt(var))
    }

    /// The table is what its header and `docs/calibration-sources.md` say:
    /// 15,460 pairs within vLLM's filter, means 219.60 and 202.87 tokens,
    /// each spread about its mean (standard deviations 242.5 and 213.3).
    #[test]
    fn the_sharegpt_table_is_the_filtered_sample_its_header_describes() {
        let pairs = table("sharegpt").expect("a table");
        assert_eq!(pairs.len(), 15_460);
        for [i, o] in &pairs {
            assert!(*i >= 4.0 && *o >= 4.0 && *i <= MAX_PROMPT && i + o <= MAX_TOTAL);
        }
        let (input, input_sd) = mean_and_sd(pairs.iter().map(|p| p[0]));
        let (output, output_sd) = mean_and_sd(pairs.iter().map(|p| p[1]));
        assert!((input - 219.60).abs() < 0.005, "{input}");
        assert!((output - 202.87).abs() < 0.005, "{output}");
        assert!((input_sd - 242.5).abs() < 0.05, "{input_sd}");
        assert!((output_sd - 213.3).abs() < 0.05, "{output_sd}");
    }

    /// Scaled to a point's means, the table has them (within rounding and
    /// the caps) and keeps vLLM's caps; a dataset without a table is an
    /// error naming it.
    #[test]
    #[ignore = "slow: calibration datasets scaled at every point; scripts/test runs it"]
    fn scaling_meets_the_points_means_within_the_caps() {
        for (input, output) in [(217.39, 201.65), (232.6, 220.61), (215.3, 195.5)] {
            let Ok(LengthsParams::Pairs { pairs, weights }) = lengths("sharegpt", input, output)
            else {
                panic!("a table");
            };
            assert_eq!(weights, None);
            let (i, _) = mean_and_sd(pairs.iter().map(|p| p[0]));
            let (o, _) = mean_and_sd(pairs.iter().map(|p| p[1]));
            assert!((i / input - 1.0).abs() < 0.002, "{i} for {input}");
            assert!((o / output - 1.0).abs() < 0.002, "{o} for {output}");
            assert!(
                pairs
                    .iter()
                    .all(|[i, o]| *i <= MAX_PROMPT && i + o <= MAX_TOTAL)
            );
            assert!(pairs.iter().any(|[i, _]| *i == MAX_PROMPT) == (input > 219.6));
        }
        assert_eq!(
            lengths("alpaca", 100.0, 100.0),
            Err("dataset alpaca has no length table".into())
        );
    }

    /// An offline point's requests are the table's first pairs, all at time
    /// 0, whose own means are the point's within rounding (each length is
    /// rounded to a token, so a mean moves by at most half a token, plus
    /// what the caps cut); too many requests for the table is an error.
    #[test]
    #[ignore = "slow: calibration datasets at every point; scripts/test runs it"]
    fn offline_requests_are_the_first_pairs_at_the_points_means() {
        let (input, output) = (217.39, 201.65);
        let requests = offline_requests("sharegpt", 1000, input, output).expect("requests");
        assert_eq!(requests.len(), 1000);
        assert!(requests.iter().all(|r| r.arrival_s == 0.0));
        let (i, _) = mean_and_sd(requests.iter().map(|r| f64::from(r.input_tokens)));
        let (o, _) = mean_and_sd(requests.iter().map(|r| f64::from(r.output_tokens)));
        assert!((i - input).abs() <= 0.5, "{i} for {input}");
        assert!((o - output).abs() <= 0.5, "{o} for {output}");
        // The first pairs, in order: their shape is the table's first ones'.
        let table = table("sharegpt").expect("a table");
        let longer = |a: &[f64; 2], b: &[f64; 2]| a[0] > b[0];
        assert_eq!(
            longer(&table[0], &table[1]),
            requests[0].input_tokens > requests[1].input_tokens
        );
        assert!(
            offline_requests("sharegpt", 20_000, input, output)
                .is_err_and(|e| e.contains("fewer than 20000 requests"))
        );
    }
}

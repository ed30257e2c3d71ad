//! One request alone on an idle replica: its prefill chunks and decode
//! steps summed under the step-time model (the service times the two-stage
//! queue samples, and the fastest service any deadline must allow).

use crate::model::class::Class;
use crate::model::step_time::{StepShape, StepTimeModel};
use crate::params::EngineParams;

/// How long one request takes alone on an idle replica.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServiceAlone {
    /// Its prefill steps (the last one produces the first token) \[s\].
    pub ttft_s: f64,
    /// Its decode steps, one per output token after the first \[s\].
    pub decode_s: f64,
    /// One decode step with this request alone, at its prompt length \[s\].
    pub tpot_s: f64,
    pub sojourn_s: f64,
}

/// The service time of a request with `input` prompt tokens (`cached` of
/// them in the prefix cache) and `output` output tokens, alone on a replica:
/// prefill chunks of the per-request limit, then `output - 1` decode steps
/// of one sequence (summed at the mean context, exact for step times affine
/// in the context).
pub fn service_alone(
    step_time: &StepTimeModel,
    engine: &EngineParams,
    input: u64,
    cached: u64,
    output: u64,
) -> ServiceAlone {
    let budget = engine.max_num_batched_tokens.max(1) as u64;
    let chunk = if engine.long_prefill_threshold == 0 {
        budget
    } else {
        (engine.long_prefill_threshold as u64).min(budget)
    };
    let computed = cached.min(input.saturating_sub(1));
    let ttft_s = prefill_alone_s(step_time, computed, input, chunk);
    let decode_at = |context: u64| {
        let mut shape = StepShape::default();
        shape.add_decode(context);
        step_time.step_s(&shape)
    };
    let steps = output.saturating_sub(1);
    let decode_s = if steps == 0 {
        0.0
    } else {
        // Contexts run from `input` to `input + steps - 1`.
        steps as f64 * (decode_at(input) + decode_at(input + steps - 1)) / 2.0
    };
    ServiceAlone {
        ttft_s,
        decode_s,
        tpot_s: decode_at(input),
        sojourn_s: ttft_s + decode_s,
    }
}

/// Prompts of more chunks than this are summed segment by segment instead
/// of chunk by chunk (see [`prefill_alone_s`]).
pub const EXACT_CHUNKS: u64 = 2048;

/// Number of segments of the trapezoid sum over a long prompt's chunks.
const CHUNK_SEGMENTS: u64 = 1024;

/// The prefill time \[s\] of a prompt alone on a replica: its tokens from
/// `computed` to `input` in chunks of `chunk` (the last one shorter), one
/// step each.
///
/// Up to [`EXACT_CHUNKS`] chunks, every step is summed. Beyond, the full
/// chunks are split into `CHUNK_SEGMENTS` runs of consecutive chunks, and
/// each run is summed as (count) x (first + last) / 2: exact wherever the
/// step time is affine in the context over the run, which holds for the
/// alpha/beta model everywhere and for the roofline and table models except
/// in the run holding a kink (where compute overtakes memory, or a table
/// grid line). The work is O(1) in the prompt length, so a 10^8-token prompt
/// in 1-token chunks costs no more than a short one.
pub fn prefill_alone_s(step_time: &StepTimeModel, computed: u64, input: u64, chunk: u64) -> f64 {
    let chunk = chunk.max(1);
    let step = |at: u64, tokens: u64| {
        let mut shape = StepShape::default();
        shape.add_prefill(at, tokens);
        step_time.step_s(&shape)
    };
    let left = input.saturating_sub(computed);
    let full = left / chunk;
    let rest = left % chunk;
    let mut total = 0.0;
    if full <= EXACT_CHUNKS {
        for k in 0..full {
            total += step(computed + k * chunk, chunk);
        }
    } else {
        // Runs of `per` or `per + 1` chunks, the longer ones first.
        let (per, longer) = (full / CHUNK_SEGMENTS, full % CHUNK_SEGMENTS);
        let mut first = 0;
        for segment in 0..CHUNK_SEGMENTS {
            let n = per + u64::from(segment < longer);
            let last = first + n - 1;
            total += n as f64
                * (step(computed + first * chunk, chunk) + step(computed + last * chunk, chunk))
                / 2.0;
            first += n;
        }
    }
    if rest > 0 {
        total += step(computed + full * chunk, rest);
    }
    total
}

/// The fastest any request of `class` can be served: its shortest prompt
/// (with its cache hit) and shortest output, alone on an idle replica. A
/// deadline below this cannot be met by any fleet.
pub fn fastest_service(
    class: &Class,
    step_time: &StepTimeModel,
    engine: &EngineParams,
) -> ServiceAlone {
    let (input, output) = class.smallest_lengths();
    let input = input as u64;
    let cached = (class.prefix_cache_hit * input as f64).round() as u64;
    let output = output as u64;
    service_alone(step_time, engine, input, cached, output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::step_time::tests::model_of;
    use crate::params::step_time::StepTimeParams;

    /// The step-time models of the default scenario under each kind of model.
    fn models() -> Vec<StepTimeModel> {
        let kinds = [
            StepTimeParams::default(),
            StepTimeParams::AlphaBeta {
                alpha_s_per_token: 1e-4,
                beta_s_per_step: 0.02,
                overhead_s: 0.001,
            },
            StepTimeParams::Table {
                batch_tokens: vec![1.0, 8192.0],
                kv_tokens: vec![0.0, 100_000.0, 1_000_000.0],
                step_s: vec![vec![0.007, 0.01, 0.03], vec![0.2, 0.25, 0.3]],
            },
        ];
        kinds.into_iter().map(model_of).collect()
    }

    fn prefill_chunk_by_chunk(
        model: &StepTimeModel,
        mut computed: u64,
        input: u64,
        chunk: u64,
    ) -> f64 {
        let mut total = 0.0;
        while computed < input {
            let this = chunk.min(input - computed);
            let mut shape = StepShape::default();
            shape.add_prefill(computed, this);
            total += model.step_s(&shape);
            computed += this;
        }
        total
    }

    #[test]
    fn a_long_prompt_sums_its_chunks_in_bounded_work_within_a_small_error() {
        // Segments are exact where the step time is affine in the context;
        // at most two of the 1,024 segments hold a kink (the roofline's
        // compute/memory crossing, a table grid line), and the trapezoid's
        // error there is a fraction of that segment's ~1/1,024 share of the
        // sum: 1e-3 relative is a loose bound.
        for model in models() {
            for (computed, input, chunk) in [
                (0, 2048 * 512, 512),
                (0, 2049 * 512 + 7, 512),
                (100, 3_000_000, 256),
                (0, 1_000_000, 16),
                (5, 500_000, 1),
            ] {
                let exact = prefill_chunk_by_chunk(&model, computed, input, chunk);
                let fast = prefill_alone_s(&model, computed, input, chunk);
                assert!(
                    ((fast - exact) / exact).abs() < 1e-3,
                    "{computed} {input} {chunk}: {fast} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn a_hundred_million_one_token_chunks_cost_their_closed_form() {
        // r14/r15 of the review: 10^8 one-token chunks (10^8 steps of the old
        // loop). Under alpha/beta every chunk costs overhead + alpha.
        let model = &models()[1];
        let t = prefill_alone_s(model, 0, 100_000_000, 1);
        let exact = 1e8 * (0.001 + 1e-4);
        assert!(((t - exact) / exact).abs() < 1e-9, "{t} vs {exact}");
        // And the service alone with its decode steps.
        let engine = EngineParams {
            max_num_batched_tokens: 1,
            long_prefill_threshold: 1,
            ..EngineParams::default()
        };
        let alone = service_alone(model, &engine, 100_000_000, 0, 1);
        assert!(((alone.ttft_s - exact) / exact).abs() < 1e-9);
    }

    #[test]
    fn short_prompts_are_summed_chunk_by_chunk() {
        for model in models() {
            for (computed, input, chunk) in [
                (0, 1, 512),
                (0, 8192, 512),
                (300, 8000, 7),
                (0, 2048 * 3, 3),
            ] {
                assert_eq!(
                    prefill_alone_s(&model, computed, input, chunk),
                    prefill_chunk_by_chunk(&model, computed, input, chunk)
                );
            }
        }
    }
}

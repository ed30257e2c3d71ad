//! Closed-form load estimates: the load factor rho and the saturation
//! throughput, from the seeds' two-stage view (one prefill server, a decode
//! stage whose concurrency is limited by `max_num_seqs` and the KV cache).
//!
//! # Formula
//! Per replica, at saturation under decode-first chunked prefill (vLLM's
//! schedule: every step decodes the running requests and fills the rest of
//! the token budget with prompt chunks):
//! - concurrency `c = min(max_num_seqs, KV tokens / (E\[I\] + E\[O\] / 2))`
//!   (a running request holds its prompt and, on average, half its output);
//! - a step decodes `d = min(c, budget / (1 + E\[P\] / E\[O\]))` sequences and
//!   prefills `d E\[P\] / E\[O\]` prompt tokens (P: prompt tokens computed,
//!   cache hits excluded): in steady state it finishes `d / E\[O\]` requests,
//!   whose prompts the same step must prefill;
//! - that mixed step lasts `t`, so a request costs `w = E\[O\] t / d`
//!   replica-seconds; `rho = lambda w / n_replicas`, saturation throughput
//!   `n_replicas / w` (split into prompt and output tokens by the decodes'
//!   own step time, for costs per token).
//!
//! Where the KV cache holds every running request without preemption, this
//! is within 3% of simulated overload (`engine/tests/engine/saturation.rs`).
//!
//! # Where the KV cache binds
//! An overloaded engine admits a waiting request as soon as its first chunk
//! fits, so every block a completion frees is taken at once by prompt
//! chunks, and the running requests' growth is then paid for by preempting
//! the most recently admitted, mostly a request just readmitted that has
//! computed a chunk or two again. Each request then recomputes `R` tokens
//! (in simulated overload of 8B and 70B on H100, 0.2 to 3.7 times its
//! prompt plus output, one to two and a half chunks per preemption), which
//! the formula above does not count, so it is optimistic there (by 15% to
//! 79%). [`LoadEstimate::recomputing`] is the
//! same saturated step with `R` given: a step also recomputes `d R / E\[O\]`
//! tokens (charged as prompt tokens), so `w = E\[O\] t / d` grows with them.
//! Given the `R` an overload run measured it is within 3% of that run's
//! saturation on 7 of 12 shapes and within 8% on all; no closed form for
//! `R` itself is known yet (its dependence on the chunk size, the token
//! budget and the spacing of completions is in `docs/engine.md`), so
//! [`load_estimate`] counts none, and the report flags queues still growing.
//!
//! [`QueueModel`] is the seeds' two-stage queue as an instant estimate of
//! waiting times and SLA misses (see its docs and `docs/planner.md`), and
//! [`fastest_service`] the shortest time any request of a class can take.
//!
//! - `service.rs`: one request alone on an idle replica (the service times
//!   the queue samples, the fastest service a deadline must allow);
//! - `stage.rs`: one stage of the queue, M^X/G/c, solved for its waits;
//! - `queue.rs`: [`QueueModel`], the two stages in tandem, and the estimates
//!   per class.

use serde::{Deserialize, Serialize};

use crate::model::scenario::Scenario;
use crate::model::step_time::StepShape;
use crate::serde_float::NonFinite;

mod queue;
mod service;
mod stage;

pub use queue::{ClassEstimate, QueueEstimate, QueueModel};
pub use service::{fastest_service, service_alone};
pub use stage::StageEstimate;

/// Offered load against estimated capacity.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadEstimate {
    /// Mean request arrival rate over the day \[requests/s\].
    #[serde_as(as = "NonFinite")]
    pub arrival_rate_per_s: f64,
    /// Offered load / capacity: above 1 the queue grows without bound.
    #[serde_as(as = "NonFinite")]
    pub rho: f64,
    /// Requests per second the fleet completes at saturation.
    #[serde_as(as = "NonFinite")]
    pub saturation_rate_per_s: f64,
    /// Replica-seconds of work per request.
    #[serde_as(as = "NonFinite")]
    pub work_per_request_s: f64,
    /// Decode concurrency per replica at saturation.
    #[serde_as(as = "NonFinite")]
    pub decode_concurrency: f64,
    /// Replica-seconds per prompt token computed.
    #[serde_as(as = "NonFinite")]
    pub prefill_s_per_token: f64,
    /// Replica-seconds per output token.
    #[serde_as(as = "NonFinite")]
    pub decode_s_per_token: f64,
    /// Prompt + output tokens offered per second.
    #[serde_as(as = "NonFinite")]
    pub offered_tokens_per_s: f64,
}

/// Request-rate-weighted moments of the workload mix.
#[serde_with::serde_as]
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WorkloadMoments {
    #[serde_as(as = "NonFinite")]
    pub rate_per_s: f64,
    #[serde_as(as = "NonFinite")]
    pub mean_input: f64,
    #[serde_as(as = "NonFinite")]
    pub mean_prefill: f64,
    #[serde_as(as = "NonFinite")]
    pub mean_output: f64,
}

impl WorkloadMoments {
    pub fn of(scenario: &Scenario) -> WorkloadMoments {
        let mut m = WorkloadMoments {
            rate_per_s: 0.0,
            mean_input: 0.0,
            mean_prefill: 0.0,
            mean_output: 0.0,
        };
        for c in scenario.classes() {
            let rate = c.mean_batch_rate_per_s() * c.batch_size.moments().0;
            let (input, output) = c.mean_lengths();
            m.rate_per_s += rate;
            m.mean_input += rate * input;
            m.mean_prefill += rate * (input * (1.0 - c.prefix_cache_hit)).max(1.0);
            m.mean_output += rate * output;
        }
        if m.rate_per_s > 0.0 {
            m.mean_input /= m.rate_per_s;
            m.mean_prefill /= m.rate_per_s;
            m.mean_output /= m.rate_per_s;
        }
        m
    }
}

/// A replica's step at saturation under decode-first chunked prefill: the
/// running requests decode one token each and the rest of the token budget
/// prefills the prompts that replace those finishing (in steady state a
/// step finishes `decodes / E[O]` requests, whose `E[P]` prompt tokens each
/// the same step must prefill). Concurrency is what `max_num_seqs` and the
/// KV cache allow; when the budget cannot hold both, the decodes shrink to
/// `budget / (1 + E[P] / E[O])` and prefill takes the rest. Recomputed
/// tokens (`R` per request) are prefilled like prompt tokens.
struct SaturatedStep {
    /// Sequences running at saturation (decoding or prefilling).
    concurrency: f64,
    shape: StepShape,
}

impl SaturatedStep {
    fn of(scenario: &Scenario, w: &WorkloadMoments, recomputed: f64) -> SaturatedStep {
        let e = &scenario.params().engine;
        let held = w.mean_input + w.mean_output / 2.0;
        let kv_limit = scenario.memory().kv_capacity_tokens() as f64 / held.max(1.0);
        let concurrency = (e.max_num_seqs as f64).min(kv_limit).max(1.0);
        let budget = e.max_num_batched_tokens.max(1) as f64;
        let per_decode = (w.mean_prefill + recomputed) / w.mean_output.max(1.0);
        let decodes = concurrency.min(budget / (1.0 + per_decode)).max(1.0);
        let prefill = (decodes * per_decode).min(budget).max(1.0).round() as u64;
        let decodes = decodes.round().max(1.0) as u64;
        let mut shape = StepShape {
            decode_seqs: decodes,
            decode_kv_tokens: (decodes as f64 * (held + 1.0)) as u64,
            ..StepShape::default()
        };
        // Prompt tokens see half their prompt of context on average: chunks
        // of the per-request limit, each after (E[I] - chunk) / 2 tokens.
        let chunk = match e.long_prefill_threshold {
            0 => prefill,
            limit => prefill.min(limit as u64),
        }
        .min(w.mean_input.max(1.0) as u64)
        .max(1);
        let computed = ((w.mean_input - chunk as f64) / 2.0).max(0.0) as u64;
        shape.add_prefill_repeated(computed, chunk, prefill / chunk);
        if !prefill.is_multiple_of(chunk) {
            shape.add_prefill(computed, prefill % chunk);
        }
        SaturatedStep { concurrency, shape }
    }
}

/// The load estimate of a scenario as configured, counting no
/// recomputation (see the module docs for where that is optimistic).
pub fn load_estimate(scenario: &Scenario) -> LoadEstimate {
    LoadEstimate::recomputing(scenario, 0.0)
}

impl LoadEstimate {
    /// The load estimate when each request also recomputes
    /// `recomputed_per_request` tokens after preemptions (a run's measured
    /// `recomputed_tokens` per completed request, for instance): they join
    /// the saturated step's prefill and the work per request. With 0 it is
    /// [`load_estimate`].
    pub fn recomputing(scenario: &Scenario, recomputed_per_request: f64) -> LoadEstimate {
        let w = WorkloadMoments::of(scenario);
        let recomputed = recomputed_per_request.max(0.0);
        let saturated = SaturatedStep::of(scenario, &w, recomputed);
        let step = scenario.step_time();
        let t = step.step_s(&saturated.shape);
        let decodes_only = StepShape {
            prefill_tokens: 0,
            prefill_attention_pairs: 0.0,
            prefill_kv_tokens: 0,
            prefill_seqs: 0,
            ..saturated.shape
        };
        let d = saturated.shape.decode_seqs.max(1) as f64;
        let t_decode = step.step_s(&decodes_only).min(t);
        let decode_s_per_token = t_decode / d;
        let prefill_s_per_token = (t - t_decode) / saturated.shape.prefill_tokens.max(1) as f64;
        let work = (w.mean_prefill + recomputed) * prefill_s_per_token
            + w.mean_output * decode_s_per_token;
        let c = saturated.concurrency;
        let n = scenario.params().cluster.replicas as f64;
        LoadEstimate {
            arrival_rate_per_s: w.rate_per_s,
            rho: w.rate_per_s * work / n,
            saturation_rate_per_s: n / work,
            work_per_request_s: work,
            decode_concurrency: c,
            prefill_s_per_token,
            decode_s_per_token,
            offered_tokens_per_s: w.rate_per_s * (w.mean_prefill + w.mean_output),
        }
    }
}

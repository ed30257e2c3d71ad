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
//! prompt plus output), which the formula above does not count, so it is
//! optimistic there (by 15% to 80%). [`LoadEstimate::recomputing`] is the
//! same saturated step with `R` given (a step also recomputes `d R / E\[O\]`
//! tokens, charged as prompt tokens); given the `R` an overload run
//! measured it is within 3% on 7 of 12 shapes and within 8% on all, and no
//! closed form for `R` itself was found (`docs/engine.md`, Saturation). So
//! [`kv_binds`] says where the formula is not enough (the tokens a running
//! request holds, weighted by output length, against the KV cache), and
//! there the report's estimate is measured on a saturated replica by the
//! engine's own scheduler (`sim::saturation`, a layer above this one), which
//! scales the formula's work per request with [`LoadEstimate::measured`].
//! [`load_estimate`] is the formula alone: the planner's analytic floor and
//! the two-stage queue use it (an upper bound on capacity where the KV cache
//! binds, so the floor stays a floor).
//!
//! [`QueueModel`] is the seeds' two-stage queue as an instant estimate of
//! waiting times and SLA misses (see its docs and `docs/planner.md`), and
//! [`fastest_service`](crate::model::service::fastest_service) the shortest time any request of a class can take.
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
mod stage;

pub use queue::{ClassEstimate, QueueEstimate, QueueModel};
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
    /// Whether the work per request was measured on a saturated replica
    /// (where the KV cache binds: `sim::saturation`), so that it counts
    /// the recomputation the engine does there; otherwise it is the
    /// formula's, which counts none.
    #[serde(default)]
    pub measured: bool,
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
        let concurrency = (e.max_num_seqs as f64).min(kv_limit(scenario, w)).max(1.0);
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
            measured: false,
        }
    }

    /// The same estimate with `work_per_request_s` measured on a
    /// saturated replica: rho and the saturation rate follow it, and the
    /// replica-seconds per prompt and per output token scale with it (their
    /// ratio, which splits cost between prompt and output tokens, is the
    /// formula's).
    pub fn measured(&self, work_per_request_s: f64) -> LoadEstimate {
        let scale = work_per_request_s / self.work_per_request_s;
        LoadEstimate {
            rho: self.rho * scale,
            saturation_rate_per_s: self.saturation_rate_per_s / scale,
            work_per_request_s,
            prefill_s_per_token: self.prefill_s_per_token * scale,
            decode_s_per_token: self.decode_s_per_token * scale,
            measured: true,
            ..self.clone()
        }
    }
}

/// Whether the KV cache, not `max_num_seqs`, may limit a saturated
/// replica's concurrency: there an overloaded engine preempts and
/// recomputes, which the formula does not count. A request holds its prompt
/// and its output so far while it decodes, and long outputs decode longest,
/// so the tokens a running request holds on average are weighted by output
/// length: `(E[I] E[O] + E[O^2] / 2) / E[O]` over the mix (prompt and output
/// independent), which is `E[I] + E[O] / 2` only for constant outputs. With
/// a joint length model that weighting is not at hand, and the KV cache is
/// taken to bind.
pub fn kv_binds(scenario: &Scenario) -> bool {
    let (mut held, mut outputs) = (0.0, 0.0);
    for c in scenario.classes() {
        let rate = c.mean_batch_rate_per_s() * c.batch_size.moments().0;
        if rate <= 0.0 {
            continue;
        }
        if c.lengths.is_some() {
            return true;
        }
        let input = c.input_tokens.moments().0;
        let (output, output_sq) = c.output_tokens.moments();
        held += rate * (input * output + output_sq / 2.0);
        outputs += rate * output;
    }
    let held = held / outputs.max(f64::MIN_POSITIVE);
    let running = scenario.memory().kv_capacity_tokens() as f64 / held.max(1.0);
    running < scenario.params().engine.max_num_seqs as f64
}

/// Running requests the KV cache holds at the mean lengths.
fn kv_limit(scenario: &Scenario, w: &WorkloadMoments) -> f64 {
    let held = w.mean_input + w.mean_output / 2.0;
    scenario.memory().kv_capacity_tokens() as f64 / held.max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{ClassParams, DistParams, ScenarioParams};

    /// One class on 8B on one H100 (the default scenario's model and GPU).
    fn one_class(input: DistParams, output: DistParams) -> Scenario {
        let mut p = ScenarioParams::overnight_batch();
        p.classes = vec![ClassParams {
            name: "load".into(),
            batches_per_hour: 3600.0,
            input_tokens: input,
            output_tokens: output,
            ..ClassParams::default()
        }];
        p.plan = Default::default();
        Scenario::try_from(p).expect("valid")
    }

    /// The KV cache binds where 256 running requests of the mix do not fit
    /// (about 430,000 tokens here): by the mean lengths at constant ones,
    /// and, with long-tailed outputs, by the outputs' second moment although
    /// the means fit.
    #[test]
    fn the_kv_cache_binds_by_the_length_weighted_tokens_held() {
        let constant = |i, o| one_class(DistParams::constant(i), DistParams::constant(o));
        assert!(!kv_binds(&constant(200.0, 2000.0)));
        assert!(kv_binds(&constant(2000.0, 2000.0)));
        let lognormal = one_class(
            DistParams::log_normal(300.0, 1000.0),
            DistParams::log_normal(2000.0, 5000.0),
        );
        let w = WorkloadMoments::of(&lognormal);
        let by_means = kv_limit(&lognormal, &w);
        assert!(by_means > 256.0, "by the means {by_means}");
        assert!(kv_binds(&lognormal));
    }

    /// A measured work per request moves rho and the saturation rate with
    /// it, and keeps the split between prompt and output tokens.
    #[test]
    fn a_measured_work_per_request_scales_the_estimate() {
        let s = one_class(DistParams::constant(2000.0), DistParams::constant(2000.0));
        let formula = load_estimate(&s);
        let measured = formula.measured(1.5 * formula.work_per_request_s);
        assert!(measured.measured && !formula.measured);
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-12;
        assert!(close(measured.rho, 1.5 * formula.rho));
        assert!(close(
            measured.saturation_rate_per_s,
            formula.saturation_rate_per_s / 1.5
        ));
        assert!(close(
            measured.prefill_s_per_token / measured.decode_s_per_token,
            formula.prefill_s_per_token / formula.decode_s_per_token
        ));
        assert_eq!(measured.decode_concurrency, formula.decode_concurrency);
    }
}

//! Closed-form load estimates: the load factor rho and the saturation
//! throughput, from the seeds' two-stage view (one prefill server, a decode
//! stage whose concurrency is limited by `max_num_seqs` and the KV cache).
//!
//! # Formula
//! Per replica, at saturation:
//! - decode concurrency `c = min(max_num_seqs, KV tokens / (E\[I\] + E\[O\] / 2))`
//!   (a running request holds its prompt and, on average, half its output);
//! - a decode step with c sequences at mean context `E\[I\] + E\[O\] / 2` lasts
//!   `t_d`, so each output token costs `t_d / c` replica-seconds;
//! - a full prefill step of `max_num_batched_tokens` tokens at mean context
//!   `E\[I\] / 2` lasts `t_p`, so each prompt token costs `t_p / budget`;
//! - work per request `w = E\[I - cached\] t_p / budget + E\[O\] t_d / c`;
//! - `rho = lambda w / n_replicas`; saturation throughput `n_replicas / w`.
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

/// The load estimate of a scenario as configured.
pub fn load_estimate(scenario: &Scenario) -> LoadEstimate {
    let w = WorkloadMoments::of(scenario);
    let e = &scenario.params().engine;
    let held = w.mean_input + w.mean_output / 2.0;
    let kv_limit = scenario.memory().kv_capacity_tokens() as f64 / held.max(1.0);
    let c = (e.max_num_seqs as f64).min(kv_limit).max(1.0);
    let c_int = c.floor().max(1.0) as u64;
    let decode = StepShape {
        decode_seqs: c_int,
        decode_kv_tokens: (c_int as f64 * (held + 1.0)) as u64,
        ..StepShape::default()
    };
    let decode_s_per_token = scenario.step_time().step_s(&decode) / c_int as f64;
    let budget = e.max_num_batched_tokens as u64;
    let mut prefill = StepShape::default();
    // A full step of chunks at half the mean prompt of context each.
    let chunk = if e.long_prefill_threshold == 0 {
        budget
    } else {
        (e.long_prefill_threshold as u64).min(budget)
    };
    // (Equal chunks add up in closed form: no loop over the budget.)
    let mean_context = (w.mean_input / 2.0) as u64;
    prefill.add_prefill_repeated(mean_context, chunk, budget / chunk);
    if !budget.is_multiple_of(chunk) {
        prefill.add_prefill(mean_context, budget % chunk);
    }
    let prefill_s_per_token = scenario.step_time().step_s(&prefill) / budget as f64;
    let work = w.mean_prefill * prefill_s_per_token + w.mean_output * decode_s_per_token;
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

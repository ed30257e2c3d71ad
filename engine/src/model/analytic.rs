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

use crate::serde_float::NonFinite;
use serde::{Deserialize, Serialize};

use crate::model::scenario::{Class, Scenario};
use crate::model::step_time::{StepShape, StepTimeModel};
use crate::params::EngineParams;
use crate::rng::stream;
use crate::serde_float::nonfinite;

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
            let input = c.input_tokens.moments().0;
            m.rate_per_s += rate;
            m.mean_input += rate * input;
            m.mean_prefill += rate * (input * (1.0 - c.prefix_cache_hit)).max(1.0);
            m.mean_output += rate * c.output_tokens.moments().0;
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
    let input = class.input_tokens.smallest() as u64;
    let cached = (class.prefix_cache_hit * input as f64).round() as u64;
    let output = class.output_tokens.smallest() as u64;
    service_alone(step_time, engine, input, cached, output)
}

/// Monte Carlo sample size per class for the two-stage estimate's service
/// times: the tail P(S > d) of one class is estimated with standard error
/// sqrt(p (1 - p) / 10,000), about 0.001 at p = 0.01.
const QUEUE_SAMPLES: usize = 10_000;

/// One sampled request of a class, for [`QueueModel`].
#[derive(Clone, Copy, Debug)]
struct SampledRequest {
    prefill_s: f64,
    /// Output tokens after the first (decode steps).
    decode_steps: f64,
}

#[derive(Clone, Debug)]
struct ClassSample {
    name: String,
    deadline_s: f64,
    /// Requests per second over the day.
    request_rate_per_s: f64,
    /// Batches per second over the day.
    batch_rate_per_s: f64,
    /// E\[X\] and E\[X (X - 1)\] of the batch size.
    batch_mean: f64,
    batch_pairs: f64,
    /// Sampled batch sizes, sorted (for the terms in max(X - c, 0)).
    batch_sizes: Vec<f64>,
    requests: Vec<SampledRequest>,
    mean_prefill_s: f64,
    mean_decode_steps: f64,
}

impl ClassSample {
    /// (E\[m\], E\[m (m + 1) / 2\]) with m = max(X - servers, 0): batch-mates
    /// that find no free server when the batch arrives to idle servers.
    fn beyond(&self, servers: u64) -> (f64, f64) {
        let s = servers as f64;
        let (mut m1, mut pairs) = (0.0, 0.0);
        for x in self.batch_sizes.iter().rev().take_while(|x| **x > s) {
            let m = x - s;
            m1 += m;
            pairs += m * (m + 1.0) / 2.0;
        }
        let k = self.batch_sizes.len().max(1) as f64;
        (m1 / k, pairs / k)
    }
}

/// The seeds' two-stage queue, as an instant estimate beside the simulation.
///
/// # Model
/// Requests arrive in Poisson batches (M^X). Each replica is one *prefill
/// server* (service `S_p`: the request's prefill chunks, alone, the seeds'
/// alpha x I) followed by `c` *decode servers* (service `S_d = (O - 1) x t_d`,
/// the seeds' beta x O), where `c = min(max_num_seqs, KV tokens / F)` and F
/// is the time-average KV footprint of a decoding request,
/// `E\[O (I + O / 2)\] / E\[O\]` (long outputs stay resident longer). `t_d` is
/// the decode step time at the mean number of busy decoders (a fixed point
/// of Little's law). Replicas are pooled: the fleet is an M^X/G/n prefill
/// stage and an M^X/G/(n c) decode stage in tandem, both FCFS.
///
/// # Approximations
/// A request's wait in a stage is the wait of its batch's arrival, `W_0`
/// (the same for every class), plus the wait behind its own batch-mates:
/// - `W_0 = C / (c (1 - rho)) x E\[S\] (1 + c_s^2) / 2 + sum_k lambda_k
///   E\[X_k (X_k - 1)\] E\[S_k\]^2 / (2 c^2 (1 - rho))`, with C Erlang's C
///   formula and `lambda_k` batch rates: Allen-Cunneen for M/G/c plus the
///   work of other batches' members, cleared as by one server c times as
///   fast (the router spreads a batch over the replicas);
/// - behind batch-mates: `E\[S_k\] / c x E\[m (m + 1) / 2\] / E\[X_k\]` with
///   `m = max(X_k - c, 0)` members beyond the free servers.
///
/// At c = 1 the sum of the two is the exact M^X/G/1 mean wait; with X = 1
/// it is Allen-Cunneen, exact for M/M/c. An arrival finds the servers busy
/// with probability `B = max(C, sum_k lambda_k E\[m_k\] E\[S_k\] / c)` (the
/// second term: bursts that overflow the servers); a class-k request waits
/// with probability `B + (1 - B) E\[m_k\] / E\[X_k\]` (exact for M^X/M/1 and
/// M/M/c), and a wait, given there is one, is taken as exponential. Further:
/// - between the stages batches are smoothed: the decode stage sees the
///   batch terms scaled by `1 - rho_p^2` (the linking equation of Whitt's QNA);
/// - time-of-day profiles are averaged (the mean rate), priorities ignored;
/// - the stages share the accelerator: the fleet is also unstable when the
///   load estimate's rho reaches 1.
#[derive(Clone, Debug)]
pub struct QueueModel {
    classes: Vec<ClassSample>,
    /// Requests per second over all classes.
    request_rate_per_s: f64,
    /// Time-average KV tokens held by one decoding request.
    footprint_tokens: f64,
    /// Decode slots per replica.
    slots_per_replica: u64,
    step_time: StepTimeModel,
    /// Replica-seconds per request at saturation, from [`load_estimate`].
    work_per_request_s: f64,
}

/// One stage of the two-stage queue.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageEstimate {
    /// Servers in the whole fleet.
    pub servers: u64,
    #[serde_as(as = "NonFinite")]
    pub mean_service_s: f64,
    /// Squared coefficient of variation of the service time.
    #[serde_as(as = "NonFinite")]
    pub service_scv: f64,
    #[serde(with = "nonfinite")]
    pub utilization: f64,
    /// Probability that a request waits at all (over all classes).
    #[serde_as(as = "NonFinite")]
    pub p_wait: f64,
    /// Mean wait over all classes \[s\].
    #[serde(with = "nonfinite")]
    pub mean_wait_s: f64,
}

/// The estimate for one class.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassEstimate {
    pub name: String,
    #[serde_as(as = "NonFinite")]
    pub deadline_s: f64,
    /// P(S > deadline).
    #[serde_as(as = "NonFinite")]
    pub p_miss: f64,
    #[serde(with = "nonfinite")]
    pub mean_wait_s: f64,
    #[serde(with = "nonfinite")]
    pub mean_sojourn_s: f64,
    #[serde(with = "nonfinite")]
    pub sojourn_p50_s: f64,
    #[serde(with = "nonfinite")]
    pub sojourn_p90_s: f64,
    #[serde(with = "nonfinite")]
    pub sojourn_p99_s: f64,
}

/// The two-stage estimate for one fleet size.
#[serde_with::serde_as]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueEstimate {
    pub replicas: u32,
    #[serde_as(as = "NonFinite")]
    pub arrival_rate_per_s: f64,
    /// Decode slots per replica, c.
    pub decode_slots_per_replica: u64,
    /// Time-average KV footprint of a decoding request \[tokens\].
    #[serde_as(as = "NonFinite")]
    pub kv_footprint_tokens: f64,
    /// Decode step time at the mean number of busy decoders \[s\].
    #[serde_as(as = "NonFinite")]
    pub decode_step_s: f64,
    pub prefill: StageEstimate,
    pub decode: StageEstimate,
    /// The load estimate's rho at this fleet size (shared accelerator).
    #[serde(with = "nonfinite")]
    pub accelerator_rho: f64,
    /// Whether both stages and the accelerator are below saturation.
    pub stable: bool,
    pub classes: Vec<ClassEstimate>,
}

/// Waiting time in one stage as an atom at zero plus an exponential.
#[derive(Clone, Copy, Debug)]
struct Wait {
    p_wait: f64,
    /// Mean wait given a wait \[s\].
    conditional_mean_s: f64,
}

impl Wait {
    const NONE: Wait = Wait {
        p_wait: 0.0,
        conditional_mean_s: 0.0,
    };
    const FOREVER: Wait = Wait {
        p_wait: 1.0,
        conditional_mean_s: f64::INFINITY,
    };

    fn new(p_wait: f64, mean_s: f64) -> Wait {
        if mean_s <= 0.0 || p_wait <= 0.0 {
            Wait::NONE
        } else {
            Wait {
                p_wait,
                conditional_mean_s: mean_s / p_wait,
            }
        }
    }

    fn mean_s(&self) -> f64 {
        if self.p_wait == 0.0 {
            0.0
        } else {
            self.p_wait * self.conditional_mean_s
        }
    }

    /// P(W > x) for x >= 0.
    fn tail(&self, x: f64) -> f64 {
        if self.p_wait == 0.0 {
            0.0
        } else if self.conditional_mean_s.is_infinite() {
            self.p_wait
        } else {
            self.p_wait * libm::exp(-x / self.conditional_mean_s)
        }
    }
}

/// P(W1 + W2 > x) for two independent waits (each an atom at zero plus an
/// exponential); 1 for x < 0.
fn sum_tail(w1: Wait, w2: Wait, x: f64) -> f64 {
    if x < 0.0 {
        return 1.0;
    }
    let (p1, m1, p2, m2) = (
        w1.p_wait,
        w1.conditional_mean_s,
        w2.p_wait,
        w2.conditional_mean_s,
    );
    if p1 == 0.0 {
        return w2.tail(x);
    }
    if p2 == 0.0 {
        return w1.tail(x);
    }
    if m1.is_infinite() || m2.is_infinite() {
        return 1.0 - (1.0 - p1) * (1.0 - p2);
    }
    // Hypoexponential tail of E1 + E2.
    let both = if (m1 - m2).abs() <= 1e-9 * m1.max(m2) {
        (1.0 + x / m1) * libm::exp(-x / m1)
    } else {
        (m1 * libm::exp(-x / m1) - m2 * libm::exp(-x / m2)) / (m1 - m2)
    };
    p1 * (1.0 - p2) * libm::exp(-x / m1) + (1.0 - p1) * p2 * libm::exp(-x / m2) + p1 * p2 * both
}

/// Erlang's C formula: the probability of waiting in M/M/c with offered load
/// `a` = lambda / mu (through Erlang B's recursion, stable for large c).
pub fn erlang_c(servers: u64, offered_load: f64) -> f64 {
    let c = servers as f64;
    if offered_load >= c {
        return 1.0;
    }
    if offered_load <= 0.0 {
        return 0.0;
    }
    let mut b = 1.0;
    for k in 1..=servers {
        b = offered_load * b / (k as f64 + offered_load * b);
    }
    let rho = offered_load / c;
    b / (1.0 - rho * (1.0 - b))
}

/// One stage solved: its waits per class.
#[derive(Clone, Debug)]
struct Stage {
    estimate: StageEstimate,
    waits: Vec<Wait>,
}

/// Solves one stage with `servers` servers; `service_s(class, request)` is
/// the service time and `batching` scales the batch terms (1 for Poisson
/// batches, less after smoothing by an earlier stage).
fn solve_stage(
    classes: &[ClassSample],
    servers: u64,
    service_s: &dyn Fn(&SampledRequest) -> f64,
    batching: f64,
) -> Stage {
    let lambda: f64 = classes.iter().map(|c| c.request_rate_per_s).sum();
    let class_mean = |cl: &ClassSample| -> f64 {
        cl.requests.iter().map(service_s).sum::<f64>() / cl.requests.len().max(1) as f64
    };
    let (mut m1, mut m2, mut batch_work) = (0.0, 0.0, 0.0);
    for cl in classes {
        let w = cl.request_rate_per_s / lambda.max(f64::MIN_POSITIVE);
        let k = cl.requests.len().max(1) as f64;
        for r in &cl.requests {
            let x = service_s(r);
            m1 += w * x / k;
            m2 += w * x * x / k;
        }
        let mean = class_mean(cl);
        batch_work += cl.batch_rate_per_s * cl.batch_pairs * mean * mean;
    }
    let scv = if m1 > 0.0 {
        (m2 / (m1 * m1) - 1.0).max(0.0)
    } else {
        0.0
    };
    let c = servers.max(1) as f64;
    let offered = lambda * m1;
    let rho = offered / c;
    let finish = |waits: Vec<Wait>| -> Stage {
        let weight = |k: usize| classes[k].request_rate_per_s / lambda.max(f64::MIN_POSITIVE);
        Stage {
            estimate: StageEstimate {
                servers,
                mean_service_s: m1,
                service_scv: scv,
                utilization: rho,
                p_wait: (0..waits.len()).map(|k| weight(k) * waits[k].p_wait).sum(),
                mean_wait_s: (0..waits.len())
                    .map(|k| weight(k) * waits[k].mean_s())
                    .sum(),
            },
            waits,
        }
    };
    if m1 <= 0.0 || lambda <= 0.0 {
        return finish(vec![Wait::NONE; classes.len()]);
    }
    if rho >= 1.0 {
        return finish(vec![Wait::FOREVER; classes.len()]);
    }
    let erlang = erlang_c(servers.max(1), offered);
    // The Poisson part (Allen-Cunneen) plus other batches' members, served
    // as by one server c times as fast (JSQ spreads a batch over replicas).
    let batch_arrival_wait = erlang / (c * (1.0 - rho)) * m1 * (1.0 + scv) / 2.0
        + batching * batch_work / (2.0 * c * c * (1.0 - rho));
    // An arrival finds the servers busy with Erlang's probability, or more
    // often when bursts keep them busy: the load of batch members beyond
    // the free servers.
    let burst_load: f64 = classes
        .iter()
        .map(|cl| cl.batch_rate_per_s * cl.beyond(servers).0 * class_mean(cl))
        .sum::<f64>()
        * batching
        / c;
    let p_arrival = erlang.max(burst_load).min(1.0);
    let waits = classes
        .iter()
        .map(|cl| {
            let (beyond, beyond_pairs) = cl.beyond(servers);
            let mates = batching * class_mean(cl) / c * beyond_pairs / cl.batch_mean;
            let p_wait =
                p_arrival + (1.0 - p_arrival) * (batching * beyond / cl.batch_mean).min(1.0);
            Wait::new(p_wait.clamp(0.0, 1.0), batch_arrival_wait + mates)
        })
        .collect();
    finish(waits)
}

impl QueueModel {
    /// Samples each class's requests (fixed seeds: the same scenario always
    /// gives the same estimate) and derives the decode slots per replica.
    pub fn new(scenario: &Scenario) -> QueueModel {
        let engine = &scenario.params().engine;
        let mut classes = Vec::with_capacity(scenario.classes().len());
        // Time-average footprint: sum of rate x E[O (I + O / 2)] over sum of rate x E[O].
        let (mut held, mut resident) = (0.0, 0.0);
        for (k, (class, params)) in scenario
            .classes()
            .iter()
            .zip(&scenario.params().classes)
            .enumerate()
        {
            let mut inputs = stream(0xa11a_0001, k as u64);
            let mut outputs = stream(0xa11a_0002, k as u64);
            let mut sizes = stream(0xa11a_0003, k as u64);
            let (ex, ex2) = class.batch_size.moments();
            let batch_rate = class.mean_batch_rate_per_s();
            let request_rate = batch_rate * ex;
            let mut requests = Vec::with_capacity(QUEUE_SAMPLES);
            let (mut class_held, mut class_resident) = (0.0, 0.0);
            for _ in 0..QUEUE_SAMPLES {
                let input = class.input_tokens.sample(&mut inputs) as u64;
                let output = class.output_tokens.sample(&mut outputs) as u64;
                let cached = ((class.prefix_cache_hit * input as f64).round() as u64)
                    .min(input.saturating_sub(1));
                let alone = service_alone(scenario.step_time(), engine, input, cached, 1);
                let decode_steps = output.saturating_sub(1) as f64;
                class_held += decode_steps * (input as f64 + decode_steps / 2.0);
                class_resident += decode_steps;
                requests.push(SampledRequest {
                    prefill_s: alone.ttft_s,
                    decode_steps,
                });
            }
            let n = QUEUE_SAMPLES as f64;
            held += request_rate * class_held / n;
            resident += request_rate * class_resident / n;
            let mut batch_sizes: Vec<f64> = (0..QUEUE_SAMPLES)
                .map(|_| class.batch_size.sample(&mut sizes) as f64)
                .collect();
            batch_sizes.sort_by(f64::total_cmp);
            classes.push(ClassSample {
                name: params.name.clone(),
                deadline_s: class.deadline_s,
                request_rate_per_s: request_rate,
                batch_rate_per_s: batch_rate,
                batch_mean: ex.max(1.0),
                batch_pairs: (ex2 - ex).max(0.0),
                batch_sizes,
                mean_prefill_s: requests.iter().map(|r| r.prefill_s).sum::<f64>() / n,
                mean_decode_steps: requests.iter().map(|r| r.decode_steps).sum::<f64>() / n,
                requests,
            });
        }
        let footprint_tokens = if resident > 0.0 {
            held / resident
        } else {
            WorkloadMoments::of(scenario).mean_input
        };
        let kv_slots = scenario.memory().kv_capacity_tokens() as f64 / footprint_tokens.max(1.0);
        let slots_per_replica = (engine.max_num_seqs as f64).min(kv_slots).floor().max(1.0) as u64;
        let load = load_estimate(scenario);
        QueueModel {
            request_rate_per_s: classes.iter().map(|c| c.request_rate_per_s).sum(),
            classes,
            footprint_tokens,
            slots_per_replica,
            step_time: scenario.step_time().clone(),
            work_per_request_s: load.work_per_request_s,
        }
    }

    /// Decode step time with `sequences` decoding at the mean footprint.
    fn decode_step_s(&self, sequences: f64) -> f64 {
        let k = sequences.round().max(1.0) as u64;
        let shape = StepShape {
            decode_seqs: k,
            decode_kv_tokens: (k as f64 * (self.footprint_tokens + 1.0)) as u64,
            ..StepShape::default()
        };
        self.step_time.step_s(&shape)
    }

    /// Solves both stages for a fleet of `replicas`.
    pub(crate) fn solve(&self, replicas: u32) -> QueueSolution {
        let n = replicas.max(1) as f64;
        let lambda = self.request_rate_per_s;
        let mean_steps = self
            .classes
            .iter()
            .map(|c| c.request_rate_per_s * c.mean_decode_steps)
            .sum::<f64>()
            / lambda.max(f64::MIN_POSITIVE);
        // Busy decoders per replica: k = (lambda / n) E[O - 1] t_d(k), at most c.
        let c = self.slots_per_replica as f64;
        let mut busy = 1.0f64;
        for _ in 0..50 {
            busy = (lambda / n * mean_steps * self.decode_step_s(busy)).clamp(1.0, c);
        }
        let step_s = self.decode_step_s(busy);
        let prefill_servers = replicas.max(1) as u64;
        let prefill = solve_stage(&self.classes, prefill_servers, &|r| r.prefill_s, 1.0);
        // Batches leave the prefill stage smoothed (QNA): scale the batch terms.
        let prefill_rho = prefill.estimate.utilization.min(1.0);
        let decode = solve_stage(
            &self.classes,
            prefill_servers * self.slots_per_replica,
            &|r| r.decode_steps * step_s,
            1.0 - prefill_rho * prefill_rho,
        );
        let accelerator_rho = lambda * self.work_per_request_s / n;
        let stable = prefill.estimate.utilization < 1.0
            && decode.estimate.utilization < 1.0
            && accelerator_rho < 1.0;
        QueueSolution {
            decode_step_s: step_s,
            prefill,
            decode,
            accelerator_rho,
            stable,
        }
    }

    /// P(S > t) for class `class` under `solution` (1 when unstable).
    pub(crate) fn sojourn_tail(&self, solution: &QueueSolution, class: usize, t: f64) -> f64 {
        if !solution.stable {
            return 1.0;
        }
        let cl = &self.classes[class];
        let (w1, w2) = (solution.prefill.waits[class], solution.decode.waits[class]);
        let step_s = solution.decode_step_s;
        cl.requests
            .iter()
            .map(|r| sum_tail(w1, w2, t - r.prefill_s - r.decode_steps * step_s))
            .sum::<f64>()
            / cl.requests.len() as f64
    }

    /// The p-quantile of class `class`'s sojourn time under `solution`.
    pub(crate) fn sojourn_quantile(&self, solution: &QueueSolution, class: usize, p: f64) -> f64 {
        if !solution.stable {
            return f64::INFINITY;
        }
        let cl = &self.classes[class];
        let service_mean = cl.mean_prefill_s + cl.mean_decode_steps * solution.decode_step_s;
        quantile_of_tail(
            &|t| self.sojourn_tail(solution, class, t),
            1.0 - p,
            service_mean,
        )
    }

    /// The estimate for a fleet of `replicas`.
    pub fn estimate(&self, replicas: u32) -> QueueEstimate {
        let solution = self.solve(replicas);
        let classes = self
            .classes
            .iter()
            .enumerate()
            .map(|(k, cl)| {
                let service_mean =
                    cl.mean_prefill_s + cl.mean_decode_steps * solution.decode_step_s;
                let mean_wait_s = if solution.stable {
                    solution.prefill.waits[k].mean_s() + solution.decode.waits[k].mean_s()
                } else {
                    f64::INFINITY
                };
                ClassEstimate {
                    name: cl.name.clone(),
                    deadline_s: cl.deadline_s,
                    p_miss: self.sojourn_tail(&solution, k, cl.deadline_s),
                    mean_wait_s,
                    mean_sojourn_s: mean_wait_s + service_mean,
                    sojourn_p50_s: self.sojourn_quantile(&solution, k, 0.5),
                    sojourn_p90_s: self.sojourn_quantile(&solution, k, 0.9),
                    sojourn_p99_s: self.sojourn_quantile(&solution, k, 0.99),
                }
            })
            .collect();
        QueueEstimate {
            replicas,
            arrival_rate_per_s: self.request_rate_per_s,
            decode_slots_per_replica: self.slots_per_replica,
            kv_footprint_tokens: self.footprint_tokens,
            decode_step_s: solution.decode_step_s,
            prefill: solution.prefill.estimate,
            decode: solution.decode.estimate,
            accelerator_rho: solution.accelerator_rho,
            stable: solution.stable,
            classes,
        }
    }
}

/// Both stages solved for one fleet size.
#[derive(Clone, Debug)]
pub(crate) struct QueueSolution {
    pub decode_step_s: f64,
    prefill: Stage,
    decode: Stage,
    pub accelerator_rho: f64,
    pub stable: bool,
}

/// The smallest t with tail(t) <= level (tail non-increasing), by bisection
/// to a relative precision of 1e-6.
fn quantile_of_tail(tail: &dyn Fn(f64) -> f64, level: f64, scale_s: f64) -> f64 {
    let mut hi = scale_s.max(1e-3);
    let mut doublings = 0;
    while tail(hi) > level {
        hi *= 2.0;
        doublings += 1;
        if doublings > 200 {
            return f64::INFINITY;
        }
    }
    let mut lo = 0.0;
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if tail(mid) > level {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-6 * hi {
            break;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ScenarioParams;
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
        kinds
            .into_iter()
            .map(|kind| {
                let params = ScenarioParams {
                    step_time: kind,
                    ..ScenarioParams::overnight_batch()
                };
                Scenario::try_from(params)
                    .expect("valid")
                    .step_time()
                    .clone()
            })
            .collect()
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

    #[test]
    fn erlang_c_matches_textbook_values() {
        // C(4, 3) = 0.5094 (M/M/4 at rho = 0.75); one server: C = rho.
        assert!((erlang_c(4, 3.0) - 0.509_43).abs() < 1e-4);
        assert!((erlang_c(1, 0.6) - 0.6).abs() < 1e-12);
        assert_eq!(erlang_c(3, 3.0), 1.0, "saturated");
        // Many servers at low load hardly ever wait (and the recursion is stable).
        assert!(erlang_c(100_000, 50_000.0) < 1e-300);
    }

    #[test]
    fn one_server_with_batches_gives_the_exact_mx_g_1_mean_wait() {
        // Geometric batches (q = 0.4: E[X] = 2.5, E[X (X - 1)] = 7.5) at 0.2
        // per second, exponential service of mean 1 s (E[S^2] = 2): rho = 0.5
        // and the exact mean wait is rho E[S^2] / (2 E[S] (1 - rho)) +
        // E[S] E[X (X - 1)] / (2 E[X] (1 - rho)) = 1 + 3 = 4 s.
        let sizes: Vec<f64> = (1..=2000)
            .map(|i| {
                // Quantiles of the geometric distribution, for E[max(X - 1, 0)].
                let u = (i as f64 - 0.5) / 2000.0;
                (libm::log(1.0 - u) / libm::log(0.6)).ceil().max(1.0)
            })
            .collect();
        let services: Vec<SampledRequest> = (1..=20_000)
            .map(|i| SampledRequest {
                prefill_s: -libm::log(1.0 - (i as f64 - 0.5) / 20_000.0),
                decode_steps: 0.0,
            })
            .collect();
        let class = ClassSample {
            name: "x".into(),
            deadline_s: 10.0,
            request_rate_per_s: 0.5,
            batch_rate_per_s: 0.2,
            batch_mean: 2.5,
            batch_pairs: 7.5,
            batch_sizes: sizes,
            mean_prefill_s: 1.0,
            mean_decode_steps: 0.0,
            requests: services,
        };
        let stage = solve_stage(std::slice::from_ref(&class), 1, &|r| r.prefill_s, 1.0);
        // The quantile samples carry a little discretisation error.
        assert!(
            (stage.estimate.mean_wait_s - 4.0).abs() < 0.02,
            "{:?}",
            stage.estimate
        );
        // P(wait) = 1 - (1 - rho) / E[X] = 0.8 for M^X/M/1.
        assert!(
            (stage.estimate.p_wait - 0.8).abs() < 0.01,
            "{:?}",
            stage.estimate
        );
    }
}

//! [`QueueModel`]: the seeds' two-stage queue (a prefill stage and a
//! decode stage in tandem) over requests sampled from each class, and the
//! estimates per fleet size and per class it gives beside a simulation.

use serde::{Deserialize, Serialize};

use super::stage::{ClassSample, SampledRequest, Stage, StageEstimate, solve_stage, sum_tail};
use super::{WorkloadMoments, load_estimate};
use crate::model::scenario::Scenario;
use crate::model::service::service_alone;
use crate::model::step_time::{StepShape, StepTimeModel};
use crate::rng::stream;
use crate::serde_float::{NonFinite, nonfinite};

/// Monte Carlo sample size per class for the two-stage estimate's service
/// times: the tail P(S > d) of one class is estimated with standard error
/// sqrt(p (1 - p) / 10,000), about 0.001 at p = 0.01.
const QUEUE_SAMPLES: usize = 10_000;

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
            let mut pairs = stream(0xa11a_0004, k as u64);
            let (ex, ex2) = class.batch_size.moments();
            let batch_rate = class.mean_batch_rate_per_s();
            let request_rate = batch_rate * ex;
            let mut requests = Vec::with_capacity(QUEUE_SAMPLES);
            let (mut class_held, mut class_resident) = (0.0, 0.0);
            for _ in 0..QUEUE_SAMPLES {
                let (input, output) = class.sample_lengths(&mut inputs, &mut outputs, &mut pairs);
                let (input, output) = (input as u64, output as u64);
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
    pub fn solve(&self, replicas: u32) -> QueueSolution {
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
    pub fn sojourn_tail(&self, solution: &QueueSolution, class: usize, t: f64) -> f64 {
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
    pub fn sojourn_quantile(&self, solution: &QueueSolution, class: usize, p: f64) -> f64 {
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
pub struct QueueSolution {
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

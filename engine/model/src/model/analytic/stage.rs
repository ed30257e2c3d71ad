//! One stage of the two-stage queue: an M^X/G/c queue fed by the sampled
//! classes, solved for each class's wait (an atom at zero plus an
//! exponential) by the approximations in [`QueueModel`](super::QueueModel)'s
//! docs.

use serde::{Deserialize, Serialize};

use crate::serde_float::{NonFinite, nonfinite};

/// One sampled request of a class, for [`QueueModel`](super::QueueModel).
#[derive(Clone, Copy, Debug)]
pub(super) struct SampledRequest {
    pub(super) prefill_s: f64,
    /// Output tokens after the first (decode steps).
    pub(super) decode_steps: f64,
}

/// One class as the queue sees it: its rates, its batch sizes and a sample
/// of its requests.
#[derive(Clone, Debug)]
pub(super) struct ClassSample {
    pub(super) name: String,
    pub(super) deadline_s: f64,
    /// Requests per second over the day.
    pub(super) request_rate_per_s: f64,
    /// Batches per second over the day.
    pub(super) batch_rate_per_s: f64,
    /// E\[X\] and E\[X (X - 1)\] of the batch size.
    pub(super) batch_mean: f64,
    pub(super) batch_pairs: f64,
    /// Sampled batch sizes, sorted (for the terms in max(X - c, 0)).
    pub(super) batch_sizes: Vec<f64>,
    pub(super) requests: Vec<SampledRequest>,
    pub(super) mean_prefill_s: f64,
    pub(super) mean_decode_steps: f64,
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

/// Waiting time in one stage as an atom at zero plus an exponential.
#[derive(Clone, Copy, Debug)]
pub(super) struct Wait {
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

    pub(super) fn mean_s(&self) -> f64 {
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
pub(super) fn sum_tail(w1: Wait, w2: Wait, x: f64) -> f64 {
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
pub(super) struct Stage {
    pub(super) estimate: StageEstimate,
    pub(super) waits: Vec<Wait>,
}

/// Solves one stage with `servers` servers; `service_s(class, request)` is
/// the service time and `batching` scales the batch terms (1 for Poisson
/// batches, less after smoothing by an earlier stage).
pub(super) fn solve_stage(
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

#[cfg(test)]
mod tests {
    use super::*;

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

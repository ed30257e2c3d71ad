//! The report: per-request records and what planners read off them.
//!
//! A request *misses* when it completes after its class deadline, is
//! rejected, times out, or is unfinished when the run ends. Statistics count
//! requests that arrive at or after the warm-up.

use serde::{Deserialize, Serialize};

use crate::analytic::{LoadEstimate, load_estimate};
use crate::scenario::Scenario;
use crate::serde_float::nonfinite;
use crate::sim::{RequestRecord, Status};
use crate::stats::wilson_interval;

/// Percentiles of a time [s]. Percentiles count every request of the
/// population; one that falls among requests that never reached the event
/// is infinite (`"inf"` in JSON, see [`crate::serde_float`]). `mean` and
/// `max` are over the finite values (NaN, `null`, when there are none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// Requests with a finite value.
    pub count: u64,
    #[serde(with = "nonfinite")]
    pub mean: f64,
    #[serde(with = "nonfinite")]
    pub p50: f64,
    #[serde(with = "nonfinite")]
    pub p90: f64,
    #[serde(with = "nonfinite")]
    pub p95: f64,
    #[serde(with = "nonfinite")]
    pub p99: f64,
    #[serde(with = "nonfinite")]
    pub p999: f64,
    #[serde(with = "nonfinite")]
    pub max: f64,
}

impl Quantiles {
    /// From `finite` values (any order) and `missing` further requests whose
    /// value is infinite. Linear time: each percentile is found by selection
    /// ([`select_ranks`]), not by sorting.
    pub fn of(finite: Vec<f64>, missing: u64) -> Quantiles {
        Quantiles::of_parts(&[&finite], missing)
    }

    /// [`Quantiles::of`] the values of all `parts` together (left as they are).
    pub fn of_parts(parts: &[&[f64]], missing: u64) -> Quantiles {
        let n: usize = parts.iter().map(|p| p.len()).sum();
        let total = n as u64 + missing;
        let values = || parts.iter().flat_map(|p| p.iter().copied());
        let mut out = Quantiles {
            count: n as u64,
            mean: if n > 0 {
                values().sum::<f64>() / n as f64
            } else {
                f64::NAN
            },
            max: values().fold(f64::NAN, f64::max),
            ..Quantiles::default()
        };
        let fields = [
            (0.5, &mut out.p50),
            (0.9, &mut out.p90),
            (0.95, &mut out.p95),
            (0.99, &mut out.p99),
            (0.999, &mut out.p999),
        ];
        let ranks: Vec<usize> = fields
            .iter()
            .filter_map(|(p, _)| rank(*p, total).filter(|&r| r <= n).map(|r| r - 1))
            .collect();
        let mut values = select_ranks_of_parts(parts, &ranks).into_iter();
        for (p, field) in fields {
            *field = match rank(p, total) {
                None => f64::NAN,
                Some(r) if r > n => f64::INFINITY,
                Some(_) => values.next().unwrap_or(f64::NAN),
            };
        }
        out
    }

    /// The p-quantile of `sorted` values plus `missing` infinite ones: the
    /// smallest x with F(x) >= p (no interpolation).
    pub fn at(sorted: &[f64], missing: u64, p: f64) -> f64 {
        match rank(p, sorted.len() as u64 + missing) {
            None => f64::NAN,
            Some(r) if r <= sorted.len() => sorted[r - 1],
            Some(_) => f64::INFINITY,
        }
    }
}

/// The values of 0-based `ranks` (ascending, each below `values.len()`) in
/// `values` (any order, no NaN), in the order of `total_cmp`; reorders `values`.
///
/// Linear time with a small constant: one pass counts the values by the top
/// 16 bits of an order-preserving key (sign, exponent and 4 mantissa bits,
/// so sixteen buckets per octave), a second gathers the buckets that hold a
/// rank, and selection runs only inside those. Small inputs are selected
/// directly.
pub fn select_ranks(values: &mut [f64], ranks: &[usize]) -> Vec<f64> {
    debug_assert!(ranks.windows(2).all(|w| w[0] <= w[1]));
    debug_assert!(ranks.iter().all(|&r| r < values.len()));
    if values.len() >= BUCKETS {
        return select_ranks_of_parts(&[values], ranks);
    }
    // Ranks ascend, so each selection only looks right of the previous one.
    let mut done = 0;
    ranks
        .iter()
        .map(|&index| {
            if index >= done {
                values[done..].select_nth_unstable_by(index - done, f64::total_cmp);
                done = index;
            }
            values[index]
        })
        .collect()
}

/// Inputs from this size on are selected by buckets.
const BUCKETS: usize = 1 << 16;

/// [`select_ranks`] over the values of all `parts` together, leaving them
/// as they are (the per-class samples, which the overall row selects over
/// too): small inputs are copied, large ones only read.
fn select_ranks_of_parts(parts: &[&[f64]], ranks: &[usize]) -> Vec<f64> {
    let n: usize = parts.iter().map(|p| p.len()).sum();
    if n < BUCKETS {
        return select_ranks(&mut parts.concat(), ranks);
    }
    // Maps f64 to u64 so that integer order is `total_cmp` order.
    let key = |v: f64| {
        let bits = v.to_bits();
        bits ^ ((((bits as i64) >> 63) as u64) | (1 << 63))
    };
    let bucket = |v: f64| (key(v) >> 48) as usize;
    let mut counts = vec![0u32; BUCKETS];
    for &v in parts.iter().flat_map(|p| p.iter()) {
        counts[bucket(v)] += 1;
    }
    // For each rank: its bucket and its rank within the bucket.
    let mut wanted = Vec::with_capacity(ranks.len());
    let (mut b, mut below) = (0, 0usize);
    for &r in ranks {
        while below + counts[b] as usize <= r {
            below += counts[b] as usize;
            b += 1;
        }
        wanted.push((b, r - below));
    }
    // One pass gathers the members of every bucket that holds a rank.
    let mut list_of = vec![u8::MAX; BUCKETS];
    let mut lists: Vec<Vec<f64>> = Vec::new();
    for &(b, _) in &wanted {
        if list_of[b] == u8::MAX {
            list_of[b] = lists.len() as u8;
            lists.push(Vec::with_capacity(counts[b] as usize));
        }
    }
    for &v in parts.iter().flat_map(|p| p.iter()) {
        let list = list_of[bucket(v)];
        if list != u8::MAX {
            lists[list as usize].push(v);
        }
    }
    let mut out = Vec::with_capacity(ranks.len());
    let mut done = 0;
    let mut last_bucket = usize::MAX;
    for &(b, index) in &wanted {
        let members = &mut lists[list_of[b] as usize];
        if b != last_bucket {
            (last_bucket, done) = (b, 0);
        }
        if index >= done {
            members[done..].select_nth_unstable_by(index - done, f64::total_cmp);
            done = index;
        }
        out.push(members[index]);
    }
    out
}

/// The 1-based rank of the p-quantile among `total` values (`None` for none).
fn rank(p: f64, total: u64) -> Option<usize> {
    (total > 0).then(|| ((p * total as f64).ceil() as u64).clamp(1, total) as usize)
}

/// Statistics of one class, or of all classes together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassStats {
    pub name: String,
    /// The class deadline [s] (NaN for the overall row when classes differ).
    #[serde(with = "nonfinite")]
    pub deadline_s: f64,
    pub arrived: u64,
    pub met: u64,
    pub late: u64,
    pub rejected: u64,
    pub timed_out: u64,
    pub unfinished: u64,
    /// P(S > deadline), misses over arrivals (NaN with no arrivals).
    #[serde(with = "nonfinite")]
    pub p_miss: f64,
    /// 95% Wilson interval of `p_miss` within this run (sampling error of
    /// one seed, treating requests as independent; replications give a
    /// more honest interval).
    pub p_miss_ci95: [f64; 2],
    /// Requests meeting the SLA per hour of the measured window.
    pub goodput_per_h: f64,
    /// Sojourn time (queue + service) of all arrivals; non-completed are infinite.
    pub sojourn: Quantiles,
    /// Arrival to first scheduled step.
    pub queue_wait: Quantiles,
    /// Arrival to first output token.
    pub ttft: Quantiles,
    /// Time per output token after the first, of completed requests.
    pub tpot: Quantiles,
    /// Points (sojourn [s], fraction of arrivals completed within it) of the
    /// sojourn CDF, log-spaced in time, for charts.
    pub cdf: Vec<[f64; 2]>,
    /// Prompt tokens computed (cache hits excluded, recomputation included).
    pub prefill_tokens: u64,
    pub decode_tokens: u64,
    pub preemptions: u64,
    /// Replica-seconds attributed to the class's requests.
    pub busy_s: f64,
    /// Replica-seconds attributed to requests that missed.
    pub busy_s_missed: f64,
    /// Replica-seconds spent on tokens later discarded by preemption.
    pub busy_s_recomputed: f64,
}

/// The fleet's state at one instant, and the flows over the interval that
/// ends there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    pub t_s: f64,
    pub waiting: u64,
    pub running: u64,
    /// Fraction of all KV blocks in use.
    pub kv_utilization: f64,
    pub replicas: u32,
    /// Arrivals in the interval ending at `t_s`.
    pub arrivals: u64,
    /// Completions in the interval ending at `t_s`.
    pub completions: u64,
}

/// Counters of the engine's own work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineStats {
    pub requests: u64,
    /// Engine steps simulated (skipped ones included).
    pub steps: u64,
    /// Events processed: one per executed step or skipped run of steps.
    pub events: u64,
}

/// Everything a run produces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub scenario_name: String,
    pub seed: u64,
    pub horizon_s: f64,
    pub warmup_s: f64,
    /// When the simulation stopped (horizon + drain) [s].
    pub end_s: f64,
    pub replicas: u32,
    pub overall: ClassStats,
    pub classes: Vec<ClassStats>,
    pub series: Vec<SeriesPoint>,
    /// Replica-seconds spent executing steps, over the whole run.
    pub busy_s: f64,
    /// Fraction of replica-time spent executing steps, over the horizon or
    /// until the last step if the fleet worked on past the horizon.
    pub utilization: f64,
    /// Over the horizon.
    pub prefill_tokens_per_s: f64,
    pub decode_tokens_per_s: f64,
    pub load: LoadEstimate,
    pub warnings: Vec<String>,
    pub engine: EngineStats,
    /// Every request, in arrival order (empty when the run was asked not to
    /// keep them). Not serialised: export it separately.
    #[serde(skip)]
    pub records: Vec<RequestRecord>,
}

/// Whether a finished record met its class deadline.
pub fn met_deadline(r: &RequestRecord, deadline_s: f64) -> bool {
    r.status == Status::Completed && r.sojourn_s() <= deadline_s
}

struct Accumulator {
    sojourn: Vec<f64>,
    wait: Vec<f64>,
    ttft: Vec<f64>,
    tpot: Vec<f64>,
    stats: ClassStats,
}

impl Accumulator {
    /// For up to `capacity` requests.
    fn new(name: &str, deadline_s: f64, capacity: usize) -> Accumulator {
        Accumulator {
            sojourn: Vec::with_capacity(capacity),
            wait: Vec::with_capacity(capacity),
            ttft: Vec::with_capacity(capacity),
            tpot: Vec::with_capacity(capacity),
            stats: ClassStats {
                name: name.to_string(),
                deadline_s,
                arrived: 0,
                met: 0,
                late: 0,
                rejected: 0,
                timed_out: 0,
                unfinished: 0,
                p_miss: f64::NAN,
                p_miss_ci95: [f64::NAN; 2],
                goodput_per_h: 0.0,
                sojourn: Quantiles::default(),
                queue_wait: Quantiles::default(),
                ttft: Quantiles::default(),
                tpot: Quantiles::default(),
                cdf: Vec::new(),
                prefill_tokens: 0,
                decode_tokens: 0,
                preemptions: 0,
                busy_s: 0.0,
                busy_s_missed: 0.0,
                busy_s_recomputed: 0.0,
            },
        }
    }

    fn add(&mut self, r: &RequestRecord, deadline_s: f64) {
        let s = &mut self.stats;
        s.arrived += 1;
        let met = met_deadline(r, deadline_s);
        match r.status {
            Status::Completed if met => s.met += 1,
            Status::Completed => s.late += 1,
            Status::RejectedQueueFull | Status::RejectedTooLong => s.rejected += 1,
            Status::TimedOut => s.timed_out += 1,
            Status::Unfinished | Status::Pending => s.unfinished += 1,
        }
        if r.status == Status::Completed {
            self.sojourn.push(r.sojourn_s());
            if r.output_tokens > 1 {
                self.tpot
                    .push((r.end_s - r.first_token_s) / (r.output_tokens - 1) as f64);
            }
            s.decode_tokens += r.output_tokens as u64 - 1;
        }
        if !r.admitted_s.is_nan() {
            self.wait.push(r.admitted_s - r.arrival_s);
            s.prefill_tokens += (r.input_tokens - r.cached_tokens) as u64 + r.recomputed_tokens;
        }
        if !r.first_token_s.is_nan() {
            self.ttft.push(r.first_token_s - r.arrival_s);
        }
        s.preemptions += r.preemptions as u64;
        s.busy_s += r.busy_s;
        if !met {
            s.busy_s_missed += r.busy_s;
        }
        let computed = (r.input_tokens - r.cached_tokens) as u64
            + r.output_tokens as u64
            + r.recomputed_tokens;
        if r.recomputed_tokens > 0 && computed > 0 {
            s.busy_s_recomputed += r.busy_s * r.recomputed_tokens as f64 / computed as f64;
        }
    }

    /// The overall row: the classes' counts and sums added (what `add`
    /// would give for every record, up to the order of the floating-point
    /// sums) and statistics over all their samples together.
    fn overall(parts: &[Accumulator], deadline_s: f64, window_s: f64) -> ClassStats {
        let mut s = Accumulator::new("all", deadline_s, 0).stats;
        for part in parts.iter() {
            let p = &part.stats;
            macro_rules! add {
                ($($field:ident),*) => { $(s.$field += p.$field;)* };
            }
            add!(arrived, met, late, rejected, timed_out, unfinished);
            add!(prefill_tokens, decode_tokens, preemptions);
            add!(busy_s, busy_s_missed, busy_s_recomputed);
        }
        finish_over(s, parts, window_s)
    }

    fn finish(self, window_s: f64) -> ClassStats {
        let stats = self.stats.clone();
        finish_over(stats, std::slice::from_ref(&self), window_s)
    }
}

/// Completes `s` (its counts and sums already added up) with rates, and
/// with percentiles and CDF points of the samples of all `parts` together.
fn finish_over(mut s: ClassStats, parts: &[Accumulator], window_s: f64) -> ClassStats {
    let n = s.arrived;
    let misses = n - s.met;
    s.p_miss = if n > 0 {
        misses as f64 / n as f64
    } else {
        f64::NAN
    };
    let (lo, hi) = wilson_interval(misses, n, 1.96);
    s.p_miss_ci95 = [lo, hi];
    s.goodput_per_h = s.met as f64 / (window_s / 3600.0);
    let samples = |of: fn(&Accumulator) -> &Vec<f64>| -> Vec<&[f64]> {
        parts.iter().map(|a| &of(a)[..]).collect()
    };
    // Requests without a value (never completed, admitted, ...) count as infinite.
    let quantiles = |of: fn(&Accumulator) -> &Vec<f64>, every_request_has_one: bool| {
        let slices = samples(of);
        let have = slices.iter().map(|v| v.len() as u64).sum::<u64>();
        let missing = if every_request_has_one { 0 } else { n - have };
        Quantiles::of_parts(&slices, missing)
    };
    s.cdf = cdf_points(&samples(|a| &a.sojourn), n, 200);
    s.sojourn = quantiles(|a| &a.sojourn, false);
    s.queue_wait = quantiles(|a| &a.wait, false);
    s.ttft = quantiles(|a| &a.ttft, false);
    s.tpot = quantiles(|a| &a.tpot, true);
    s
}

/// Up to `points` points of the empirical CDF of `values` (any order;
/// fractions relative to `total` requests), log-spaced in time between the
/// smallest and largest value. Exact at each point; linear time.
fn cdf_points(parts: &[&[f64]], total: u64, points: usize) -> Vec<[f64; 2]> {
    let values = || parts.iter().flat_map(|p| p.iter().copied());
    if values().next().is_none() || points == 0 {
        return Vec::new();
    }
    let lo = values().fold(f64::INFINITY, f64::min).max(1e-6);
    let hi = values().fold(f64::NEG_INFINITY, f64::max).max(lo);
    let (llo, lhi) = (libm::log(lo), libm::log(hi));
    let xs: Vec<f64> = (0..points)
        .map(|i| {
            if i + 1 == points {
                hi
            } else {
                libm::exp(llo + (lhi - llo) * i as f64 / (points - 1).max(1) as f64)
            }
        })
        .collect();
    // counts[i]: values in (xs[i-1], xs[i]].
    let mut counts = vec![0u64; points];
    for v in values() {
        let i = xs.partition_point(|x| *x < v).min(points - 1);
        counts[i] += 1;
    }
    let mut below = 0;
    xs.iter()
        .zip(counts)
        .map(|(x, c)| {
            below += c;
            [*x, below as f64 / total as f64]
        })
        .collect()
}

impl Report {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        scenario: &Scenario,
        records: Vec<RequestRecord>,
        mut series: Vec<SeriesPoint>,
        busy_per_replica: &[f64],
        active_until_s: f64,
        events: u64,
        steps: u64,
        end_s: f64,
        keep_records: bool,
    ) -> Report {
        let run = &scenario.params.run;
        let window_s = run.horizon_s - run.warmup_s;
        let deadlines: Vec<f64> = scenario.classes.iter().map(|c| c.deadline_s).collect();
        let same_deadline = deadlines.windows(2).all(|w| w[0] == w[1]);
        let mut per_class_count = vec![0; deadlines.len()];
        for r in &records {
            per_class_count[r.class as usize] += 1;
        }
        let mut per_class: Vec<Accumulator> = scenario
            .params
            .classes
            .iter()
            .zip(per_class_count)
            .map(|(c, count)| Accumulator::new(&c.name, c.deadline_s, count))
            .collect();
        for r in records.iter().filter(|r| r.arrival_s >= run.warmup_s) {
            per_class[r.class as usize].add(r, deadlines[r.class as usize]);
        }
        let overall = Accumulator::overall(
            &per_class,
            if same_deadline {
                deadlines[0]
            } else {
                f64::NAN
            },
            window_s,
        );
        // Flows per series interval (every request, warm-up included).
        let interval = run.series_interval_s;
        let bucket = |t: f64| (crate::dist::ceil_u64(t / interval) as usize).max(1) - 1;
        for r in &records {
            if let Some(p) = series.get_mut(bucket(r.arrival_s)) {
                p.arrivals += 1;
            }
            if r.status == Status::Completed
                && let Some(p) = series.get_mut(bucket(r.end_s))
            {
                p.completions += 1;
            }
        }
        let classes: Vec<ClassStats> = per_class.into_iter().map(|a| a.finish(window_s)).collect();
        let n = scenario.params.cluster.replicas;
        let busy: f64 = busy_per_replica.iter().sum();
        let load = load_estimate(scenario);
        // Over the horizon, or until the last step when the fleet worked on
        // past it (not over the whole drain, which is mostly idle).
        let utilization = busy / (n as f64 * active_until_s.min(end_s).max(run.horizon_s));
        let warnings = warnings(&overall, &classes, &load, utilization, &records);
        Report {
            scenario_name: scenario.params.name.clone(),
            seed: run.seed,
            horizon_s: run.horizon_s,
            warmup_s: run.warmup_s,
            end_s,
            replicas: n,
            busy_s: busy,
            utilization,
            prefill_tokens_per_s: overall.prefill_tokens as f64 / window_s,
            decode_tokens_per_s: overall.decode_tokens as f64 / window_s,
            overall,
            classes,
            series,
            load,
            warnings,
            engine: EngineStats {
                requests: records.len() as u64,
                steps,
                events,
            },
            records: if keep_records { records } else { Vec::new() },
        }
    }

    /// A hash of every per-request time and outcome (FNV-1a over their bits):
    /// equal digests mean identical runs, natively or in wasm.
    pub fn digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            for byte in x.to_le_bytes() {
                h ^= byte as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for r in &self.records {
            eat(r.class as u64);
            eat(r.replica as u64);
            eat(r.input_tokens as u64);
            eat(r.output_tokens as u64);
            eat(r.preemptions as u64);
            eat(r.arrival_s.to_bits());
            eat(r.admitted_s.to_bits());
            eat(r.first_token_s.to_bits());
            eat(r.end_s.to_bits());
            eat(r.busy_s.to_bits());
            eat(r.status as u64);
        }
        h
    }
}

fn warnings(
    overall: &ClassStats,
    classes: &[ClassStats],
    load: &LoadEstimate,
    utilization: f64,
    records: &[RequestRecord],
) -> Vec<String> {
    let mut out = Vec::new();
    let pct = |k: u64, n: u64| 100.0 * k as f64 / n.max(1) as f64;
    if load.rho < 0.85 && utilization >= 0.9 {
        // The estimate assumes full batches; KV pressure, preemption and
        // small batches make a real fleet busier than rho says.
        out.push(format!(
            "Near saturation: the fleet was busy {:.0}% of the time although the load estimate says rho = {:.2}; \
             preemptions, partial batches or bursts use more capacity than the estimate assumes.",
            100.0 * utilization,
            load.rho
        ));
    }
    if load.rho >= 1.0 {
        out.push(format!(
            "Overloaded: the offered load is {:.0}% of the estimated capacity (rho = {:.2}); queues grow until requests miss, time out or are cut off at the end.",
            100.0 * load.rho,
            load.rho
        ));
    } else if load.rho >= 0.85 {
        out.push(format!(
            "Near saturation (rho = {:.2}): small errors in the step-time model or the workload become large errors in waiting time.",
            load.rho
        ));
    }
    if overall.unfinished > 0 {
        out.push(format!(
            "{} requests ({:.1}%) were still queued or running when the run ended; they count as misses.",
            overall.unfinished,
            pct(overall.unfinished, overall.arrived)
        ));
    }
    let too_long = records
        .iter()
        .filter(|r| r.status == Status::RejectedTooLong)
        .count() as u64;
    if too_long > 0 {
        out.push(format!(
            "{too_long} requests were longer (prompt + output) than the KV cache or max_model_len allows and were rejected."
        ));
    }
    let preempted = records.iter().filter(|r| r.preemptions > 0).count() as u64;
    if preempted > 0 && pct(preempted, records.len() as u64) >= 1.0 {
        out.push(format!(
            "{:.1}% of requests were preempted at least once: the KV cache, not max_num_seqs, limits concurrency.",
            pct(preempted, records.len() as u64)
        ));
    }
    for c in classes.iter().filter(|c| c.arrived == 0) {
        out.push(format!(
            "Class \"{}\" had no arrivals in the measured window.",
            c.name
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_count_missing_requests_as_infinite() {
        let q = Quantiles::of(vec![9.0, 2.0, 3.0, 1.0, 5.0, 6.0, 7.0, 8.0, 4.0], 1);
        assert_eq!(q.p50, 5.0);
        assert_eq!(q.p90, 9.0);
        assert_eq!(q.p95, f64::INFINITY);
        assert_eq!(q.p99, f64::INFINITY);
        assert_eq!(q.mean, 5.0);
        let json = serde_json::to_string(&q).unwrap();
        assert!(json.contains("\"p99\":\"inf\""), "{json}");
        let back: Quantiles = serde_json::from_str(&json).unwrap();
        assert_eq!(back, q);
    }

    #[test]
    fn selection_gives_the_same_quantiles_as_sorting() {
        // 1000 values in a scrambled order: p-quantile = ceil(p * 1000)-th smallest.
        let values: Vec<f64> = (0..1000).map(|i| ((i * 7919) % 1000) as f64).collect();
        let q = Quantiles::of(values, 0);
        assert_eq!(
            (q.p50, q.p90, q.p95, q.p99, q.p999),
            (499.0, 899.0, 949.0, 989.0, 998.0)
        );
        assert_eq!((q.mean, q.max, q.count), (499.5, 999.0, 1000));
    }

    #[test]
    fn bucket_selection_gives_the_ranks_of_a_sort() {
        // Large enough for the bucket path, with negative values, zeros,
        // ties, subnormals and values spanning many octaves.
        let mut rng = crate::rng::stream(3, 3);
        let mut values: Vec<f64> = (0..300_000)
            .map(|i| {
                let u = crate::dist::unit(&mut rng);
                match i % 5 {
                    0 => -u * 1e3,
                    1 => 0.0,
                    2 => (u * 50.0).floor(),
                    3 => u * 1e-310,
                    _ => libm::exp(u * 40.0 - 10.0),
                }
            })
            .collect();
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let ranks = [0, 1, 59_999, 60_000, 150_000, 270_000, 299_700, 299_999];
        let got = select_ranks(&mut values, &ranks);
        let want: Vec<f64> = ranks.iter().map(|&r| sorted[r]).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn quantiles_of_parts_are_those_of_their_concatenation() {
        let mut rng = crate::rng::stream(8, 8);
        for n in [10, 1_000, 70_000, 200_000] {
            let values: Vec<f64> = (0..n)
                .map(|_| libm::exp(crate::dist::unit(&mut rng) * 20.0 - 5.0))
                .collect();
            // Three uneven parts, one of them empty.
            let (a, rest) = values.split_at(n / 7);
            let (b, c) = rest.split_at(0);
            let before = [a.to_vec(), c.to_vec()];
            let parts = Quantiles::of_parts(&[a, b, c], 17);
            assert_eq!(parts, Quantiles::of(values.clone(), 17), "n = {n}");
            assert_eq!(parts.count, n as u64);
            assert_eq!([a.to_vec(), c.to_vec()], before, "parts left as they were");
            let (all, split) = (
                cdf_points(&[&values], 2 * n as u64, 40),
                cdf_points(&[a, b, c], 2 * n as u64, 40),
            );
            assert_eq!(all, split, "n = {n}");
        }
    }

    #[test]
    fn cdf_points_are_monotone_and_end_at_the_completed_fraction() {
        let xs: Vec<f64> = (1..=100).map(|i| i as f64).collect();
        let pts = cdf_points(&[&xs], 200, 50);
        assert_eq!(pts.len(), 50);
        assert!(
            pts.windows(2)
                .all(|w| w[0][0] <= w[1][0] && w[0][1] <= w[1][1])
        );
        assert_eq!(pts[49], [100.0, 0.5]);
    }
}

//! Per-request scheduler state, shared by both engines (their waiting
//! queue is `sim::wait_queue`), a replica's [`Clock`], and [`Time`], f64
//! times ordered for heaps.

use crate::model::class::Class;
use crate::sim::workload::RequestSpec;

/// Index of a request in the run (arrival order).
pub type ReqId = u32;

/// A request inside a replica: waiting or running.
///
/// Token accounting: `computed` tokens have KV in the cache. A request is
/// *prefilling* while `computed < target` and *decoding* afterwards; `target`
/// is the prompt plus every output token generated so far (recomputed after a
/// preemption). The step that brings `computed` to `target` samples one output
/// token; each decode step computes one token and samples the next. A request
/// is done when `generated == output`.
#[derive(Clone, Debug)]
pub struct Active {
    pub id: ReqId,
    pub arrival_s: f64,
    pub priority: i32,
    /// Absolute deadline (for earliest-deadline-first) \[s\].
    pub deadline_at_s: f64,
    /// When the client abandons the request \[s\]; infinity without a timeout.
    pub timeout_at_s: f64,
    /// Prompt tokens, and those of them in the prefix cache. (32 bits, as
    /// drawn: with `recompute_until` the struct stays 128 bytes, which
    /// moves without a call to `memcpy`.)
    pub input: u32,
    pub cached: u32,
    pub output: u32,
    pub computed: u64,
    pub target: u64,
    pub generated: u32,
    pub blocks: u32,
    /// Admission order on this replica; larger is more recent.
    pub admit_seq: u64,
    /// Tokens scheduled in the step being built (0: not scheduled).
    pub sched: u64,
    /// Replica-seconds attributed to this request so far.
    pub busy_s: f64,
    /// Tokens computed and then thrown away by preemptions.
    pub recomputed_tokens: u64,
    /// The context it had reached when last preempted (the most it ever
    /// computed before): prefill chunks below it are recomputation.
    pub recompute_until: u64,
    pub preemptions: u32,
    /// Fast engine, decoding requests only: the decode-step counter when
    /// `computed`, `generated`, `blocks` and `busy_s` were last brought up to date.
    pub g_sync: u64,
    /// Fast engine: the per-decoder busy accumulator at `g_sync`.
    pub busy_sync: f64,
}

impl Active {
    /// A request as it arrives: nothing computed but its prefix-cache hits.
    pub fn arriving(id: ReqId, spec: &RequestSpec, class: &Class) -> Active {
        let t = spec.arrival_s;
        let input = spec.input_tokens;
        Active {
            id,
            arrival_s: t,
            priority: class.priority,
            deadline_at_s: t + class.deadline_s,
            timeout_at_s: class.timeout_s.map_or(f64::INFINITY, |d| t + d),
            input,
            cached: spec.cached_tokens,
            output: spec.output_tokens,
            computed: spec.cached_tokens as u64,
            target: input as u64,
            generated: 0,
            blocks: 0,
            admit_seq: 0,
            sched: 0,
            busy_s: 0.0,
            recomputed_tokens: 0,
            recompute_until: 0,
            preemptions: 0,
            g_sync: 0,
            busy_sync: 0.0,
        }
    }

    pub fn is_decoding(&self) -> bool {
        self.computed >= self.target
    }

    /// Of a prefill chunk of `chunk` tokens from its current context, those
    /// it computed before and lost to a preemption.
    #[inline]
    pub fn recomputed_in(&self, chunk: u64) -> u64 {
        self.recompute_until
            .saturating_sub(self.computed)
            .min(chunk)
    }

    /// Tokens this request would compute in a step with `budget` tokens left.
    pub fn wanted_tokens(&self, threshold: u64, budget: u64) -> u64 {
        if self.is_decoding() {
            1
        } else {
            (self.target - self.computed).min(threshold).min(budget)
        }
    }

    /// Preemption by recompute: all KV is dropped; the prompt and every
    /// generated token must be computed again (prefix-cache hits excepted).
    pub fn reset_for_recompute(&mut self) {
        self.recomputed_tokens += self.computed - self.cached as u64;
        self.recompute_until = self.recompute_until.max(self.computed);
        self.computed = self.cached as u64;
        self.target = self.input as u64 + self.generated as u64;
        self.blocks = 0;
        self.sched = 0;
        self.preemptions += 1;
    }
}

/// A replica's clock: when its next step may start \[s\], kept as a
/// compensated (Neumaier) sum of step durations.
///
/// Both engines keep their clocks this way, so that they agree to rounding
/// however long a replica stays busy: the reference adds its steps one by
/// one, the fast engine a skipped run's closed-form duration at once (and a
/// run cut at an arrival or a sample in two pieces). Added naively, millions
/// of equal small durations round the same way each time: on an M/M/16 day
/// of 5 million 1 ms steps the fast engine's clock ended 5.5e-8 s (1.1e-11
/// relative) off the exact sum of its steps, and arrivals that fell between
/// the two engines' step starts were admitted a step apart
/// (`tests/engine/oracle.rs`, `a_long_busy_run_agrees_to_rounding`).
/// Compensated, each clock is the exact sum of its durations rounded once
/// (up to the rounding of the durations themselves: a run's closed form).
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    /// `sum + err`, rounded: the time \[s\].
    now_s: f64,
    /// The durations added naively since the clock was last set.
    sum: f64,
    /// The rounding error `sum` has lost so far.
    err: f64,
}

impl Clock {
    /// The time \[s\].
    #[inline(always)]
    pub fn now_s(&self) -> f64 {
        self.now_s
    }

    /// Moves the clock on by `dt` and returns the new time \[s\].
    ///
    /// # Formula
    /// `t = sum + dt` rounded, and the part of the exact sum it lost, exactly
    /// (an error-free transformation): `(sum - t) + dt` when `dt <= sum`
    /// (Dekker's fast two-sum, exact because durations are never negative;
    /// a replica's clock is nearly always far larger than a step or a run),
    /// else Knuth's two-sum ([`rounding_lost`]).
    #[inline(always)]
    pub fn add(&mut self, dt: f64) -> f64 {
        debug_assert!(dt >= 0.0, "a step of {dt} s");
        let t = self.sum + dt;
        self.err += if dt <= self.sum {
            (self.sum - t) + dt
        } else {
            rounding_lost(self.sum, dt, t)
        };
        self.sum = t;
        self.now_s = t + self.err;
        self.now_s
    }

    /// An idle replica's clock jumps to `t` (an arrival), if that is later.
    pub fn wait_until(&mut self, t: f64) {
        if t > self.now_s {
            *self = Clock {
                now_s: t,
                sum: t,
                err: 0.0,
            };
        }
    }
}

/// What `t`, the sum `a + b` rounded, lost: `a + b - t` exactly, whichever
/// of the two is larger (Knuth's two-sum). (Out of line and cold, so that
/// [`Clock::add`]'s common case stays a branch and three operations.)
#[cold]
#[inline(never)]
fn rounding_lost(a: f64, b: f64, t: f64) -> f64 {
    let b_kept = t - a;
    (a - (t - b_kept)) + (b - b_kept)
}

/// Orders f64 times in a heap (times are never NaN here).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Time(pub f64);

impl Eq for Time {}

impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Time {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request moves (into the waiting queue, the running list, a decode
    /// slot) many times: at 128 bytes a move is inline, one byte more and
    /// it is a call to `memcpy` (12% more instructions on a busy day).
    #[test]
    fn a_request_fits_in_128_bytes() {
        assert_eq!(std::mem::size_of::<Active>(), 128);
    }

    /// A positive normal f64 in units of 2^-62 (exact for these tests'
    /// values: 1 ms and times of about 2,000 s).
    fn units(x: f64) -> i128 {
        let bits = x.to_bits();
        let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
        let exponent = ((bits >> 52) & 0x7ff) as i32 - 1075;
        (mantissa as i128) << (exponent + 62)
    }

    /// A million steps of 1 ms from 2,048.3 s: added naively the clock ends
    /// 2e-7 s late (each addition rounds the same way); compensated it is
    /// the exact sum of the durations, rounded once.
    #[test]
    fn a_clock_stays_within_a_rounding_of_the_exact_sum() {
        let (start_s, step_s, steps) = (2048.3, 0.001, 1_000_000);
        let mut clock = Clock::default();
        clock.wait_until(start_s);
        let mut naive_s = start_s;
        for _ in 0..steps {
            clock.add(step_s);
            naive_s += step_s;
        }
        let exact = units(start_s) + steps as i128 * units(step_s);
        let exact_s = exact as f64 / (1u64 << 62) as f64;
        assert_eq!(clock.now_s(), exact_s);
        assert!((naive_s - exact_s).abs() > 1e-7, "{naive_s} {exact_s}");
        // A run of steps added at once lands within a rounding of the same.
        let mut runs = Clock::default();
        runs.wait_until(start_s);
        for _ in 0..steps / 1000 {
            runs.add(1000.0 * step_s);
        }
        assert!((runs.now_s() - exact_s).abs() <= 2.0 * f64::EPSILON * exact_s);
    }

    /// A duration longer than the clock (a replica's first run) takes the
    /// other branch, as exact: 0.3 s is lost whole each time it meets 2^53 s
    /// (where f64s are 2 s apart), and five of them (the start and four
    /// steps) carry the clock to 2^53 + 2, the nearest to 2^53 + 1.5, where
    /// a naive sum stays at 2^53.
    #[test]
    fn a_duration_longer_than_the_clock_is_compensated_too() {
        let big_s = (1u64 << 53) as f64;
        let mut clock = Clock::default();
        clock.wait_until(0.3);
        assert_eq!(clock.add(big_s), big_s);
        for _ in 0..4 {
            clock.add(0.3);
        }
        assert_eq!(clock.now_s(), big_s + 2.0);
    }
}

//! Per-request scheduler state, shared by both engines (their waiting
//! queue is `sim::wait_queue`), and [`Time`], f64 times ordered for heaps.

use crate::model::scenario::Class;
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

/// Orders f64 times in a heap (times are never NaN here).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Time(pub f64);

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
}

//! Event skipping: planning and skipping runs of identical decode steps.
//!
//! While nothing is prefilling and the head of the waiting queue cannot be
//! admitted, consecutive steps are identical decode-only steps whose
//! durations follow an affine piece of the step-time model: step j of a run
//! starting at `kv` decode KV tokens with `n` decoders lasts
//! `piece.at(kv + n j)`, so k steps last `k t0 + n slope k (k - 1) / 2`. A
//! run ends at the first of: a completion, a step whose block allocations
//! would not fit (a preemption), the end of the step-time piece; the driver
//! ([`super::FastReplica::run_steps`]) cuts it at the first step starting at
//! or after the next external event (arrival, timeout, sample).

use super::FastReplica;
use crate::model::dist::ceil_u64;
use crate::model::step_time::DecodePiece;
use crate::params::Schedule;
use crate::sim::Ctx;

/// A run of identical decode-only steps: `steps` steps from `kv` decode KV
/// tokens with `n` decoders, each lasting `piece.at(kv + n j)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct DecodeRun {
    pub steps: u64,
    /// When the last of them starts \[s\].
    pub last_start: f64,
    pub piece: DecodePiece,
    pub kv: u64,
    pub n: u64,
}

impl DecodeRun {
    /// Total duration of the run's first `k` steps \[s\].
    pub fn duration_s(&self, k: u64) -> f64 {
        series_s(&self.piece, self.kv, self.n, k)
    }

    /// The number of the run's steps that start strictly before `span_s`
    /// after its first, at most `steps - 1` (the run is cut before its last).
    pub fn steps_before(&self, span_s: f64) -> u64 {
        first_step_at_or_after(&self.piece, self.kv, self.n, span_s, self.steps - 1)
    }
}

impl FastReplica {
    /// Whether the next step could admit the head of the waiting queue, given
    /// the decoders take `decode_blocks` first and nothing else runs. Under
    /// prefill-first the prompt comes before the decoders' blocks, and whole.
    /// (While a run lasts, free blocks only fall and nothing else changes,
    /// so a head that cannot be admitted at its start cannot be at any of
    /// its steps: a cached block of the head's that the decoders take is one
    /// block less free and one more its first chunk needs.)
    fn could_admit(&self, decode_blocks: u64) -> bool {
        if self.cfg.schedule == Schedule::PrefillFirst {
            let running = self.group.len() + self.prefillers.len();
            return self.pool.admits_whole(&self.cfg, running);
        }
        let n = self.group.len() as u64;
        if self.group.len() + self.prefillers.len() >= self.cfg.max_num_seqs || n >= self.cfg.budget
        {
            return false;
        }
        self.pool
            .head_chunk(&self.cfg, self.cfg.budget - n, decode_blocks)
            .is_some_and(|head| self.pool.fits(&head, decode_blocks))
    }

    /// The run of identical decode-only steps that starts now, up to the
    /// first completion, block shortage or end of the step-time piece;
    /// `None` when the next step must be executed on its own.
    pub(super) fn decode_run(&self) -> Option<DecodeRun> {
        let n = self.group.len() as u64;
        if !self.prefillers.is_empty() || n == 0 || self.could_admit(self.group.blocks_needed_now())
        {
            return None;
        }
        let g = self.group.g();
        let mut steps = self.group.steps_until_blocks_run_out(
            self.group.last_due_step() - g + 1,
            self.pool.free_blocks(),
        );
        if steps == 0 {
            return None;
        }
        let kv = self.group.kv_tokens();
        let piece = self.pieces.piece(n, kv);
        if let Some(below) = piece.valid_below {
            steps = steps.min((below - kv).div_ceil(n));
        }
        Some(DecodeRun {
            steps,
            last_start: self.clock.now_s() + series_s(&piece, kv, n, steps - 1),
            piece,
            kv,
            n,
        })
    }

    /// Jumps over `k` identical decode-only steps lasting `total_s` in all.
    pub(super) fn skip(&mut self, k: u64, total_s: f64, ctx: &mut Ctx) {
        let n = self.group.len() as u64;
        self.pool.free.take(self.group.blocks_needed_over(k) as u32);
        (ctx.batches).decode_run(n, k, total_s, self.pool.used_blocks());
        self.group.advance(k, total_s / n as f64);
        let end_s = self.clock.add(total_s);
        self.busy_s += total_s;
        ctx.steps += k;
        ctx.events += 1;
        self.complete_finished(end_s, ctx);
    }
}

/// Total duration of `k` decode-only steps starting at `kv` decode KV
/// tokens with `n` decoders: step j lasts `piece.at(kv + n j)`, so the sum is
/// `k t0 + n slope k (k - 1) / 2`.
fn series_s(piece: &DecodePiece, kv: u64, n: u64, k: u64) -> f64 {
    // (Counts stay far below 2^53: through i64 the conversions are one
    // instruction each and give the same values.)
    let k = k as i64 as f64;
    k * piece.at(kv) + piece.slope_s_per_token * n as i64 as f64 * k * (k - 1.0) / 2.0
}

/// The smallest j <= `upper` with `series_s(j) >= span_s` (the number of
/// steps that start strictly before the limit).
fn first_step_at_or_after(piece: &DecodePiece, kv: u64, n: u64, span_s: f64, upper: u64) -> u64 {
    if span_s <= 0.0 {
        return 0;
    }
    let t0 = piece.at(kv);
    let c = piece.slope_s_per_token * n as f64;
    // Solve k t0 + c k (k - 1) / 2 = span for k, then correct by evaluation.
    let guess = if c > 0.0 {
        let b = t0 - c / 2.0;
        (-b + libm::sqrt(b * b + 2.0 * c * span_s)) / c
    } else if t0 > 0.0 {
        span_s / t0
    } else {
        upper as f64
    };
    let mut j = ceil_u64(guess).min(upper);
    while j < upper && series_s(piece, kv, n, j) < span_s {
        j += 1;
    }
    while j > 0 && series_s(piece, kv, n, j - 1) >= span_s {
        j -= 1;
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scenario::Scenario;
    use crate::model::step_time::StepShape;
    use crate::params::{Discipline, ScenarioParams, StepTimeParams};
    use crate::sim::Status;
    use crate::sim::testing::{config, ctx, decoding, prefilling, request};

    /// Each decode step lasts 10 ms under [`config`]'s alpha/beta model.
    const DECODE_STEP_S: f64 = 0.01;

    fn steps_of(replica: &FastReplica) -> Option<u64> {
        replica.decode_run().map(|run| run.steps)
    }

    #[test]
    fn a_run_ends_with_the_first_completion() {
        let cfg = config(16, 1000, Discipline::Fcfs);
        let mut replica = FastReplica::running(cfg, vec![decoding(0, 100, 9), decoding(1, 50, 5)]);
        let run = replica.decode_run().expect("a run of decode steps");
        // The fifth step gives request 1 its last token.
        assert_eq!(run.steps, 5);
        assert!((run.last_start - 4.0 * DECODE_STEP_S).abs() < 1e-12);
        let mut ctx = ctx(2);
        replica.skip(run.steps, run.duration_s(run.steps), &mut ctx);
        assert_eq!(ctx.records[1].status, Status::Completed);
        assert!((ctx.records[1].end_s - 5.0 * DECODE_STEP_S).abs() < 1e-12);
        assert_eq!(ctx.records[0].status, Status::Pending);
        assert_eq!((replica.group.len(), ctx.steps, ctx.events), (1, 5, 1));
        replica.check_invariants();
        // The next run goes on to request 0's last token.
        assert_eq!(steps_of(&replica), Some(4));
    }

    #[test]
    fn a_run_ends_before_the_first_step_whose_blocks_do_not_fit() {
        // Blocks of 4 tokens. A context of 5 fills its two blocks in three
        // steps; the fourth needs a third block.
        let run = |context, total_blocks| {
            let cfg = config(4, total_blocks, Discipline::Fcfs);
            steps_of(&FastReplica::running(cfg, vec![decoding(0, context, 100)]))
        };
        assert_eq!(run(5, 2), Some(3));
        // With one block free, the run goes on until the fourth block.
        assert_eq!(run(5, 3), Some(7));
        // At a block boundary with none free, the next step must preempt.
        assert_eq!(run(8, 2), None);
        assert_eq!(run(8, 3), Some(4));
    }

    #[test]
    fn a_run_ends_where_the_step_time_piece_ends() {
        // Step times measured at 0, 1,000 and 2,000 decode KV tokens:
        // bilinear, so affine only within a cell.
        let params = ScenarioParams {
            step_time: StepTimeParams::Table {
                batch_tokens: vec![1.0, 64.0],
                kv_tokens: vec![0.0, 1000.0, 2000.0],
                step_s: vec![vec![0.01, 0.02, 0.04], vec![0.02, 0.03, 0.05]],
            },
            ..ScenarioParams::overnight_batch()
        };
        let scenario = Scenario::try_from(params).expect("valid");
        let mut cfg = config(16, 1000, Discipline::Fcfs);
        cfg.step_time = scenario.step_time().clone();
        // Decode KV tokens 2 (489 + 1) = 980, two more a step: steps 0 to 9
        // read fewer than 1,000, step 10 reads 1,000.
        let replica = FastReplica::running(cfg, vec![decoding(0, 489, 50), decoding(1, 489, 50)]);
        let run = replica.decode_run().expect("a run of decode steps");
        assert_eq!((run.kv, run.n, run.steps), (980, 2, 10));
        assert_eq!(run.piece.valid_below, Some(1000));
        for j in 0..run.steps {
            let shape = StepShape {
                decode_seqs: 2,
                decode_kv_tokens: 980 + 2 * j,
                ..StepShape::default()
            };
            let step_s = replica.cfg.step_time.step_s(&shape);
            assert!(
                (run.piece.at(980 + 2 * j) - step_s).abs() < 1e-12,
                "step {j}"
            );
        }
    }

    #[test]
    fn no_run_while_a_request_prefills_or_the_head_of_the_queue_fits() {
        let cfg = config(16, 100, Discipline::Fcfs);
        let mut replica = FastReplica::running(cfg.clone(), vec![decoding(0, 30, 20)]);
        assert_eq!(steps_of(&replica), Some(20));
        // A 40-token prompt needs 3 blocks: admitted in the next step.
        replica.pool.waiting.push_back(request(1, 40, 5));
        assert_eq!(steps_of(&replica), None);
        // Short of blocks (or of sequence slots), it waits through the run.
        replica.pool.free.reset(2);
        assert_eq!(steps_of(&replica), Some(20));
        // The decoders take their blocks first: a decoder at a block
        // boundary leaves 2 of 3 free blocks.
        let mut at_boundary = FastReplica::running(cfg.clone(), vec![decoding(0, 32, 20)]);
        at_boundary.pool.waiting.push_back(request(1, 40, 5));
        at_boundary.pool.free.reset(3);
        assert_eq!(steps_of(&at_boundary), Some(20));
        at_boundary.pool.free.reset(4);
        assert_eq!(steps_of(&at_boundary), None);
        replica.pool.free.reset(98);
        replica.cfg.max_num_seqs = 1;
        assert_eq!(steps_of(&replica), Some(20));
        // A prefilling request: its steps are not decode-only.
        let replica =
            FastReplica::running(cfg, vec![decoding(0, 30, 20), prefilling(1, 40, 16, 5)]);
        assert_eq!(steps_of(&replica), None);
    }

    #[test]
    fn under_prefill_first_a_run_waits_only_for_a_head_that_fits_whole() {
        let mut cfg = config(16, 100, Discipline::Fcfs);
        cfg.schedule = crate::params::Schedule::PrefillFirst;
        // A decoder at a block boundary and a 40-token prompt (3 blocks)
        // with 3 blocks free: the prompt runs first, before the decoder
        // takes its block (decode-first would run the decodes instead).
        let mut replica = FastReplica::running(cfg.clone(), vec![decoding(0, 32, 20)]);
        replica.pool.waiting.push_back(request(1, 40, 5));
        replica.pool.free.reset(3);
        assert_eq!(steps_of(&replica), None);
        replica.pool.free.reset(2);
        assert_eq!(steps_of(&replica), Some(20));
        // A prompt only a chunk of which fits the budget waits whole:
        // decode-first would admit the chunk.
        replica.pool.free.reset(98);
        replica.cfg.budget = 39;
        assert_eq!(steps_of(&replica), Some(20));
        replica.cfg.schedule = crate::params::Schedule::DecodeFirst;
        assert_eq!(steps_of(&replica), None);
        // Nor does a sequence slot wait for the decoders' step.
        let mut full = FastReplica::running(cfg, vec![decoding(0, 30, 20)]);
        full.pool.waiting.push_back(request(1, 40, 5));
        assert_eq!(steps_of(&full), None);
        full.cfg.max_num_seqs = 1;
        assert_eq!(steps_of(&full), Some(20));
    }

    #[test]
    fn a_cut_run_keeps_exactly_the_steps_that_start_before_the_limit() {
        for (slope, n) in [(0.0, 3), (2e-6, 10), (1e-3, 1), (-1e-7, 4)] {
            let piece = DecodePiece {
                base_s: 0.01,
                slope_s_per_token: slope,
                valid_below: None,
            };
            let run = DecodeRun {
                steps: 400,
                last_start: f64::NAN,
                piece,
                kv: 1000,
                n,
            };
            // The closed form against a step-by-step sum.
            let mut start_s = 0.0;
            for j in 0..run.steps {
                let d = run.duration_s(j);
                assert!(
                    (d - start_s).abs() <= 1e-12 * start_s.max(1.0),
                    "{slope} {j}"
                );
                start_s += piece.at(1000 + n * j);
            }
            // Limits between steps, and exactly at a step's start (that step
            // does not start before it).
            let at_starts = [1, 2, 3, 7, 50, 399].map(|j| run.duration_s(j));
            let spans = [-1.0, 0.0, 1e-9, 0.01, 0.010_000_1, 0.5, 1.234, 3.0, 1e9];
            for span in spans.into_iter().chain(at_starts) {
                let k = run.steps_before(span);
                let want = (0..run.steps)
                    .find(|&j| j == run.steps - 1 || run.duration_s(j) >= span)
                    .unwrap_or(0);
                assert_eq!(k, want, "slope {slope}, span {span}");
            }
        }
    }
}

//! The decode group against its decoders written out one by one.

use super::*;
use crate::rng::stream;
use crate::sim::testing::{ctx, decoding};
use rand::RngExt;

/// A decoder as the test sees it, written out: its context and the
/// tokens it had left when it joined, at step `joined_g`, and the busy
/// time attributed since.
struct Plain {
    id: ReqId,
    admit_seq: u64,
    computed: u64,
    left: u32,
    joined_g: u64,
    busy_s: f64,
}

impl Plain {
    fn computed_at(&self, g: u64) -> u64 {
        self.computed + (g - self.joined_g)
    }

    fn last_step(&self) -> u64 {
        self.joined_g + self.left as u64 - 1
    }
}

/// Checks every aggregate the engine reads against a recomputation
/// from the decoders written out.
fn check_sums(group: &DecodeGroup, plain: &[Plain], bs: u64) {
    let g = group.g();
    assert_eq!(group.len(), plain.len());
    let kv: u64 = plain.iter().map(|d| d.computed_at(g) + 1).sum();
    assert_eq!(group.kv_tokens(), kv, "decode KV tokens");
    let needs_at = |j: u64| {
        (plain.iter())
            .filter(|d| (d.computed_at(g) + j).is_multiple_of(bs))
            .count() as u64
    };
    assert_eq!(group.blocks_needed_now(), needs_at(0));
    let sorted = |mut ids: Vec<ReqId>| {
        ids.sort_unstable();
        ids
    };
    let at_boundary = (group.at_boundary_now().iter()).map(|&s| group.decoder(s).active.id);
    let at_boundary = sorted(at_boundary.collect());
    let want = (plain.iter()).filter(|d| d.computed_at(g).is_multiple_of(bs));
    let want = sorted(want.map(|d| d.id).collect());
    assert_eq!(at_boundary, want, "the decoders at a block boundary");
    let mut over = 0;
    for k in 0..3 * bs + 2 {
        assert_eq!(group.blocks_needed_over(k), over, "blocks over {k} steps");
        over += needs_at(k);
    }
    for free in [0, 1, 2, 5, 40] {
        let k = 4 * bs + 3;
        let (mut left, mut fit) = (free as u64, 0);
        while fit < k && needs_at(fit) <= left {
            left -= needs_at(fit);
            fit += 1;
        }
        assert_eq!(
            group.steps_until_blocks_run_out(k, free),
            fit,
            "{free} free"
        );
    }
    let earliest = plain.iter().map(Plain::last_step).min();
    assert_eq!(group.last_due_step(), earliest.unwrap_or(u64::MAX));
    if !plain.is_empty() {
        let held: u64 = plain.iter().map(|d| d.computed_at(g).div_ceil(bs)).sum();
        assert_eq!(group.check(), held, "blocks held");
    }
}

/// Random joins, departures and runs of steps, with block sizes that
/// are and are not powers of two: after each, the aggregates (offset
/// sum, histogram, residue lists, calendar, admission order) agree with
/// the decoders written out, and a leaving or completing decoder's
/// explicit state is the one it would have stepping one at a time.
#[test]
fn the_aggregates_agree_with_the_decoders_written_out() {
    for (seed, bs) in [(1, 16), (2, 4), (3, 5), (4, 1)] {
        let mut rng = stream(seed, 0);
        let mut group = DecodeGroup::new(BlockSize::new(bs), false);
        let mut plain: Vec<Plain> = Vec::new();
        let mut ctx = ctx(2_000);
        let (mut next_id, mut next_seq) = (0, 0);
        let mut reserved: Vec<u64> = Vec::new();
        for _ in 0..1_500 {
            match rng.random_range(0..8) {
                0..3 => {
                    let context = rng.random_range(1..5 * bs + 7);
                    let left = rng.random_range(1..3 * bs as u32 + 4);
                    // Mostly in admission order; sometimes one admitted
                    // earlier (its prefill took longer) joins after later ones.
                    let admit_seq = if rng.random_range(0..3) == 0
                        && let Some(seq) = reserved.pop()
                    {
                        seq
                    } else {
                        if rng.random_range(0..4) == 0 {
                            reserved.push(next_seq);
                            next_seq += 1;
                        }
                        next_seq += 1;
                        next_seq - 1
                    };
                    group.join(Active {
                        admit_seq,
                        ..decoding(next_id, context, left)
                    });
                    plain.push(Plain {
                        id: next_id,
                        admit_seq,
                        computed: context,
                        left,
                        joined_g: group.g(),
                        busy_s: 0.0,
                    });
                    next_id += 1;
                }
                3 if !plain.is_empty() => {
                    let d = plain.swap_remove(rng.random_range(0..plain.len()));
                    let slot = group.slot_of(d.id).expect("decoding here");
                    let left = group.leave(slot);
                    let g = group.g();
                    assert_eq!(left.computed, d.computed_at(g));
                    assert_eq!(left.generated as u64, 1 + g - d.joined_g);
                    assert_eq!(left.blocks as u64, d.computed_at(g).div_ceil(bs));
                    assert!((left.busy_s - d.busy_s).abs() < 1e-9);
                }
                _ => {
                    // Never past the step after the earliest completion.
                    let k = rng.random_range(1..2 * bs + 3);
                    let k = k.min(group.last_due_step().saturating_add(1) - group.g());
                    let busy_each_s = rng.random_range(0.0..1.0);
                    group.advance(k, busy_each_s);
                    for d in &mut plain {
                        d.busy_s += busy_each_s;
                    }
                    let g = group.g();
                    let (done, kept): (Vec<Plain>, Vec<Plain>) =
                        plain.drain(..).partition(|d| d.last_step() < g);
                    assert_eq!(group.any_finished(), !done.is_empty());
                    let freed = group.complete_finished(g as f64, &mut ctx);
                    plain = kept;
                    let held: u64 = done.iter().map(|d| d.computed_at(g).div_ceil(bs)).sum();
                    assert_eq!(freed as u64, held, "blocks freed by completions");
                    for d in &done {
                        let record = &ctx.records[d.id as usize];
                        assert_eq!(record.status, Status::Completed);
                        assert_eq!(record.end_s, g as f64);
                        assert!((record.busy_s - d.busy_s).abs() < 1e-9);
                    }
                }
            }
            check_sums(&group, &plain, bs);
            let latest = plain.iter().max_by_key(|d| d.admit_seq).map(|d| d.id);
            let found = group.latest().map(|slot| group.decoder(slot).active.id);
            assert_eq!(found, latest, "the most recently admitted");
        }
    }
}

#[test]
fn blocks_run_out_at_the_first_step_that_does_not_fit() {
    // Block size 4; contexts 4 (at a boundary now), 5 and 7: blocks are
    // needed at steps 0, 1 and 3, then at 4, 5 and 7, and so on.
    let mut group = DecodeGroup::new(BlockSize::new(4), false);
    for (id, context) in [(0, 4), (1, 7), (2, 5)] {
        group.join(Active {
            admit_seq: id as u64,
            ..decoding(id, context, 100)
        });
    }
    assert_eq!(group.blocks_needed_now(), 1);
    assert_eq!(group.blocks_needed_over(4), 3);
    assert_eq!(group.blocks_needed_over(6), 5);
    assert_eq!(group.steps_until_blocks_run_out(100, 0), 0);
    assert_eq!(group.steps_until_blocks_run_out(100, 2), 3);
    assert_eq!(group.steps_until_blocks_run_out(100, 4), 5);
    assert_eq!(group.steps_until_blocks_run_out(2, 0), 0);
    assert_eq!(group.steps_until_blocks_run_out(2, 4), 2);
    group.advance(1, 0.0);
    assert_eq!(group.blocks_needed_now(), 1);
    assert_eq!(group.kv_tokens(), (5 + 1) + (8 + 1) + (6 + 1));
}

//! The work bounds of a fit ([`super::fit`]): how many requests a
//! benchmark fit's replays may simulate (checked before the first), how
//! much work (engine events and requests, checked as they run), and how many step times a
//! step-time fit may compute, with the messages that say what to change.

use super::measurements::{BenchmarkPoint, Place};
use crate::format::{counted, format_count};

/// The requests the replays of one benchmark fit may simulate in all,
/// checked before the first replay: the points' requests (each replay's,
/// [`BenchmarkPoint::replay_requests`], plus [`REPLAY_OVERHEAD_REQUESTS`])
/// times the most evaluations the fit may make (80 by default: 50,000
/// requests for one replay of all the points). Replays where few requests
/// share a step took 0.7-1.5 us a request natively on the development
/// machine (2 cores shared with other work), so this is 3-6 s; longer
/// outputs and prompts cost more steps a request, which [`MAX_FIT_WORK`]
/// bounds. It bounds memory too: replays run one at a time, and the
/// largest a fit of 80 evaluations accepts holds 50,000 requests, about
/// 12 MB at 230 bytes each (at most 444,000 and 100 MB for the fewest
/// evaluations a fit makes, 9), far inside a run's 1 GiB.
pub const MAX_FIT_REQUESTS: u64 = 4_000_000;

/// What a replay costs beside its requests, in requests: validating its
/// scenario, building the run and its report took 66 us natively for a
/// one-request replay, 25 requests' worth.
pub const REPLAY_OVERHEAD_REQUESTS: u64 = 25;

/// The work (in a run's units, `RunOptions::max_work`: each engine event,
/// an executed step or a skipped run of steps, two for each request, a
/// quarter for each replica visit) the
/// replays of one benchmark fit may take in all, each replay of all the
/// points its share (this over the most evaluations: 250,000 by default),
/// checked as the replays run: the work of requests that take many steps
/// each (long outputs at high concurrency, long prompts in many chunks),
/// which a count of requests does not see. An event took 0.55-0.9 us
/// natively on the shapes measured, so this is 11-18 s. With the requests,
/// an accepted fit takes under half a minute natively: the heaviest tried
/// (a point of 4,900 prompts of 100,000 tokens, 240,000 events a replay,
/// beside nine of 4,975 short requests) took 160-190 ms an evaluation,
/// 13-15 s for 80.
pub const MAX_FIT_WORK: u64 = 20_000_000;

/// The step times a step-time fit may compute in all, each evaluation
/// counting its measurements plus `STEP_EVALUATION_OVERHEAD` (the model's
/// build): about 0.7 us each natively, so 1.4 s at most. Its evaluations
/// are at most this over that count, and at most 50,000.
pub const MAX_STEP_FIT_WORK: u64 = 2_000_000;

/// An evaluation's cost beside its step times, in step times (building the
/// model: a 14-row fit's 145 evaluations took under 5 ms).
pub(super) const STEP_EVALUATION_OVERHEAD: u64 = 50;

/// Where each point is: where it was read, or its item in a JSON list.
pub(super) fn places(points: &[BenchmarkPoint]) -> Vec<Place> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| Place::or_item(&p.place, "benchmarks", i))
        .collect()
}

/// Why a replay of the points stopped at `place`: past `per_set` units of
/// work, its share of [`MAX_FIT_WORK`] over `most` replays.
pub(super) fn over_work(place: &Place, per_set: u64, most: u32) -> String {
    format!(
        "{place}: one replay of the points, up to this one, takes more than {} units of work \
         (engine steps and requests), its share of the {} a fit may take over its up to {} replays of them (long prompts \
         and long outputs take many steps a request); lower the requests, input_tokens or \
         output_tokens of this point or those before it, or fit fewer points",
        format_count(per_set),
        format_count(MAX_FIT_WORK),
        format_count(u64::from(most)),
    )
}

/// Refuses `points` if `most` replays of each could simulate more than
/// [`MAX_FIT_REQUESTS`] requests, naming the largest points' rows.
pub(super) fn check_requests(
    points: &[BenchmarkPoint],
    places: &[Place],
    most: u32,
) -> Result<(), String> {
    const NAMED: usize = 3;
    let cost = |p: &BenchmarkPoint| u64::from(p.replay_requests()) + REPLAY_OVERHEAD_REQUESTS;
    let per_set: u64 = points.iter().map(cost).sum();
    let total = per_set.saturating_mul(u64::from(most));
    if total <= MAX_FIT_REQUESTS {
        return Ok(());
    }
    let mut largest: Vec<usize> = (0..points.len()).collect();
    largest.sort_by_key(|&i| std::cmp::Reverse(points[i].replay_requests()));
    let mut named: Vec<String> = largest
        .iter()
        .take(NAMED)
        .map(|&i| {
            let p = &points[i];
            format!(
                "{} ({})",
                places[i].column(p.requests_column()),
                counted(u64::from(p.replay_requests()), "request")
            )
        })
        .collect();
    if points.len() > NAMED {
        named.push(format!("and {} more", points.len() - NAMED));
    }
    let allowed = MAX_FIT_REQUESTS / u64::from(most);
    Err(format!(
        "the fit would simulate about {} requests, replaying each of its {} up to {most} times, \
         more than the {} a fit may; the largest: {}. Lower the requests \
         of the largest points (a replay's figures settle within a few thousand requests) or \
         fit fewer points: one replay of all the points may hold {} requests, each point counting \
         {REPLAY_OVERHEAD_REQUESTS} more for its replay",
        format_count(total),
        counted(points.len() as u64, "point"),
        format_count(MAX_FIT_REQUESTS),
        named.join("; "),
        format_count(allowed),
    ))
}

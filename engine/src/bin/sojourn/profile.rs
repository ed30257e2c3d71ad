//! `sojourn plan --profile`: where a plan's time goes. The plan is driven
//! as the page drives it (a [`PlanSession`], one round of independent
//! simulations at a time), its simulations run one after another on this
//! thread, each timed; then it prints, by the stage of the plan that
//! asked for them, the simulations, their requests and seconds, the
//! planner's own passes, and the rounds replayed on 1, 2 and 4 workers by
//! the measured times (when the search's choice and the whole plan would
//! come). A benchmark command: the plan is the same as `sojourn plan`'s.

use std::collections::BTreeMap;
use std::time::Instant;

use sojourn_engine::{PlanOptions, PlanPoll, PlanSession};

use crate::args::PlanArgs;
use crate::load_scenario;

/// One simulation as it ran.
struct Timed {
    stage: String,
    /// Replication 0 (a first seed) or a later one.
    first_seed: bool,
    requests: u64,
    seconds: f64,
}

/// One round: the page's work before it (the poll that asked for its
/// simulations, and the provisional pass), then the simulations.
struct Round {
    /// The planner's passes before the round's simulations start \[s\].
    planner_seconds: f64,
    /// The search's choice was first known as this round started.
    decided: bool,
    jobs: Vec<Timed>,
}

pub fn profile(args: &PlanArgs) -> Result<(), String> {
    let scenario = load_scenario(&args.path, args.seed)?;
    let options = PlanOptions::default();
    let options = if args.search_only {
        options.search_only()
    } else {
        options
    };
    let mut session = PlanSession::new(scenario, options);
    let mut rounds: Vec<Round> = Vec::new();
    let mut decided = false;
    let (result, last_poll_seconds) = loop {
        let started = Instant::now();
        let poll = session.poll().map_err(|e| e.to_string())?;
        let poll_seconds = started.elapsed().as_secs_f64();
        let jobs = match poll {
            PlanPoll::Done(result) => break (result, poll_seconds),
            PlanPoll::Jobs(jobs) => jobs,
        };
        // As the page does: the search's choice is asked for once the
        // round's jobs are handed out, and shown while they run.
        let started = Instant::now();
        let decided_now = !decided && session.provisional().is_some();
        decided |= decided_now;
        let mut round = Round {
            jobs: Vec::with_capacity(jobs.len()),
            planner_seconds: poll_seconds + started.elapsed().as_secs_f64(),
            decided: decided_now,
        };
        for job in jobs {
            let started = Instant::now();
            let output = job.run(&mut |_| true).map_err(|e| e.to_string())?;
            round.jobs.push(Timed {
                stage: job.stage().to_string(),
                first_seed: job.key().replication == 0,
                requests: output.requests(),
                seconds: started.elapsed().as_secs_f64(),
            });
            session.submit(output);
        }
        rounds.push(round);
    };
    say!("Where the plan of {} goes", args.path);
    say!(
        "  {:<28} {:>11} {:>8} {:>10} {:>9}",
        "stage",
        "simulations",
        "(seed 1)",
        "requests",
        "seconds"
    );
    let mut by_stage: BTreeMap<&str, (u64, u64, u64, f64)> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for job in rounds.iter().flat_map(|r| &r.jobs) {
        if !by_stage.contains_key(job.stage.as_str()) {
            order.push(&job.stage);
        }
        let entry = by_stage.entry(&job.stage).or_default();
        entry.0 += 1;
        entry.1 += u64::from(job.first_seed);
        entry.2 += job.requests;
        entry.3 += job.seconds;
    }
    let mut total = (0, 0, 0.0);
    for stage in order {
        let (runs, first, requests, seconds) = by_stage[stage];
        say!(
            "  {stage:<28} {runs:>11} {:>8} {:>9.2}M {seconds:>8.2}s",
            format!("({first})"),
            requests as f64 / 1e6
        );
        total = (total.0 + runs, total.1 + requests, total.2 + seconds);
    }
    let planner: f64 = last_poll_seconds + rounds.iter().map(|r| r.planner_seconds).sum::<f64>();
    say!(
        "  {:<28} {:>11} {:>8} {:>9.2}M {:>8.2}s",
        "all simulations",
        total.0,
        "",
        total.1 as f64 / 1e6,
        total.2
    );
    say!(
        "  {:<28} {:>11} {:>8} {:>10} {planner:>8.2}s",
        "the planner's passes",
        format!("{} polls", rounds.len() + 1),
        "",
        ""
    );
    say!(
        "{} rounds; {} simulations ({} in the plan's count)",
        rounds.len(),
        total.0,
        result.simulations
    );
    // What the choice waits for, whatever the machine's load: the
    // simulations of the rounds before the one it first shows in.
    let before: Vec<&Timed> = rounds
        .iter()
        .take_while(|r| !r.decided)
        .flat_map(|r| &r.jobs)
        .collect();
    if rounds.iter().any(|r| r.decided) {
        say!(
            "the search's choice after {} rounds, {} simulations ({:.2}M requests, {:.2} s)",
            rounds.iter().take_while(|r| !r.decided).count(),
            before.len(),
            before.iter().map(|j| j.requests).sum::<u64>() as f64 / 1e6,
            before.iter().map(|j| j.seconds).sum::<f64>()
        );
    }
    for workers in [1, 2, 4] {
        let (choice, end) = replay(&rounds, last_poll_seconds, workers);
        say!(
            "  replayed on {workers} worker{}: the search's choice at {}, the whole plan at {end:.2} s",
            if workers == 1 { "" } else { "s" },
            choice.map_or("the end".to_string(), |c| format!("{c:.2} s"))
        );
    }
    Ok(())
}

/// When the search's choice and the whole plan would come on `workers`
/// workers \[s\]: before each round the planner's passes, then its jobs in
/// order, each to the first free worker; the round ends with its last job.
/// The choice shows once the passes before the round that first has it
/// are done; the plan once the last poll after the last round is.
fn replay(rounds: &[Round], last_poll: f64, workers: usize) -> (Option<f64>, f64) {
    let mut clock = 0.0;
    let mut choice = None;
    for round in rounds {
        clock += round.planner_seconds;
        if round.decided {
            choice = Some(clock);
        }
        let mut free_at = vec![clock; workers];
        for job in &round.jobs {
            if let Some(earliest) = free_at.iter_mut().min_by(|a, b| a.total_cmp(b)) {
                *earliest += job.seconds;
            }
        }
        clock = free_at.iter().copied().fold(clock, f64::max);
    }
    (choice, clock + last_poll)
}

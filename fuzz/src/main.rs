//! `sojourn-fuzz`: Sojourn's fuzz campaign (`docs/reliability.md`).
//!
//! Generated and damaged inputs of every kind (scenario files, request
//! traces, length tables, measurements to fit, the plan panel's typed
//! search lists, share links) go through the engine and the app's parsers
//! as the page and the CLI use them: read, validated, run with the shipped
//! caps, the report checked, the plan's up-front checks made. Each input is
//! timed (by CPU) and its heap measured; a panic, an input over 10 s or 1 GB,
//! a worker that hangs or dies, and a few broken rules are findings, each
//! written as a reproducer that `--replay` runs again.
//!
//! ```text
//! sojourn-fuzz [--seed S] [--inputs N] [--start I] [--kind K] [--out DIR]
//!              [--threads T] [--time-limit S] [--memory-limit-mb MB]
//!              [--validate-limit S] [--hang-s S] [--kill-mb MB]
//!              [--plans FRACTION] [--plan-limit S] [--plan-max-requests N]
//! sojourn-fuzz --replay FILE... [--hang-s S] [--plans 1] [limits]
//! sojourn-fuzz --show --seed S --index I [--kind K]
//! ```

// A command-line tool, not a library: a bad argument or a file it cannot
// write ends it with a message, never a panic, but the harness's own
// invariants (a generated value that always serialises) read best as
// `expect`. The workspace denies these lints for the libraries.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test harness: see the comment above"
)]

mod alloc;
mod campaign;
mod corpus;
mod cpu;
mod exec;
mod findings;
mod input;
mod make;
mod outcome;
mod rng;
mod summary;

use std::path::PathBuf;

use input::Kind;
use outcome::Limits;

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

const USAGE: &str = "usage:
  sojourn-fuzz [--seed S] [--inputs N] [--start I] [--kind K] [--out DIR] [--threads T]
               [--time-limit S] [--memory-limit-mb MB] [--validate-limit S]
               [--hang-s S] [--kill-mb MB]
               [--plans FRACTION] [--plan-limit S] [--plan-max-requests N]
  sojourn-fuzz --replay FILE... [--hang-s S] [--plans 1] [limits]
  sojourn-fuzz --show --seed S --index I [--kind K]
kinds: scenario, trace, lengths, calibration, search, link (default: a mix)";

enum Mode {
    Campaign,
    Worker,
    Replay(Vec<PathBuf>),
    Show(u64),
}

fn parse_args() -> Result<(Mode, campaign::Options), String> {
    let mut options = campaign::Options {
        seed: 1,
        start: 0,
        inputs: 1000,
        kind: None,
        out: PathBuf::from("target/sojourn-fuzz"),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        limits: Limits::default(),
        plans: 0.0,
        hang_s: 20.0,
        kill_bytes: 4_000_000_000,
    };
    let mut mode = Mode::Campaign;
    let mut show = false;
    let mut replay = false;
    let mut files = Vec::new();
    let mut index = None;
    let mut args = std::env::args().skip(1);
    fn value<T: std::str::FromStr>(
        flag: &str,
        args: &mut impl Iterator<Item = String>,
    ) -> Result<T, String> {
        let text = args.next().ok_or(format!("{flag} needs a value"))?;
        text.parse()
            .map_err(|_| format!("{flag}: cannot read {text:?}"))
    }
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seed" => options.seed = value(&arg, &mut args)?,
            "--inputs" => options.inputs = value(&arg, &mut args)?,
            "--start" => options.start = value(&arg, &mut args)?,
            "--kind" => {
                let text: String = value(&arg, &mut args)?;
                options.kind = Some(Kind::parse(&text).ok_or(format!("unknown kind {text:?}"))?);
            }
            "--out" => options.out = value(&arg, &mut args)?,
            "--threads" => options.threads = value(&arg, &mut args)?,
            "--time-limit" => options.limits.time_s = value(&arg, &mut args)?,
            "--memory-limit-mb" => {
                options.limits.memory_bytes = value::<u64>(&arg, &mut args)? * 1_000_000;
            }
            "--validate-limit" => options.limits.validate_s = value(&arg, &mut args)?,
            "--hang-s" => options.hang_s = value(&arg, &mut args)?,
            "--kill-mb" => options.kill_bytes = value::<u64>(&arg, &mut args)? * 1_000_000,
            "--plans" => options.plans = value(&arg, &mut args)?,
            "--plan-limit" => options.limits.plan_time_s = value(&arg, &mut args)?,
            "--plan-max-requests" => options.limits.plan_max_requests = value(&arg, &mut args)?,
            "--worker" => mode = Mode::Worker,
            "--show" => show = true,
            "--index" => index = Some(value(&arg, &mut args)?),
            "--replay" => replay = true,
            "-h" | "--help" => return Err(String::new()),
            file if replay && !file.starts_with("--") => files.push(PathBuf::from(file)),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if show {
        mode = Mode::Show(index.ok_or("--show needs --index")?);
    }
    if replay {
        if files.is_empty() {
            return Err("--replay needs reproducer files".into());
        }
        mode = Mode::Replay(files);
    }
    Ok((mode, options))
}

fn main() {
    let (mode, options) = match parse_args() {
        Ok(parsed) => parsed,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("sojourn-fuzz: {message}");
            }
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let result = match mode {
        Mode::Campaign => campaign::run(&options),
        Mode::Worker => {
            alloc::set_hard_cap(usize::try_from(options.kill_bytes).unwrap_or(usize::MAX));
            campaign::worker(
                options.seed,
                options.kind,
                &options.limits,
                options.plans,
                options.hang_s,
            )
        }
        Mode::Replay(files) => {
            alloc::set_hard_cap(usize::try_from(options.kill_bytes).unwrap_or(usize::MAX));
            let limits = Limits {
                plans: options.plans > 0.0,
                ..options.limits
            };
            campaign::replay(&files, &limits, options.hang_s)
        }
        Mode::Show(index) => {
            let input = make::input(options.seed, index, options.kind);
            println!(
                "{}",
                serde_json::to_string_pretty(&input).expect("an input serialises")
            );
            Ok(0)
        }
    };
    match result {
        Ok(status) => std::process::exit(status),
        Err(message) => {
            eprintln!("sojourn-fuzz: {message}");
            std::process::exit(2);
        }
    }
}

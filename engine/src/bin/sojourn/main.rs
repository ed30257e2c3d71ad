//! `sojourn`: the engine from the command line.
//!
//! ```text
//! sojourn run SCENARIO.json \[--seed N\] \[--json\] \[--engine fast|reference\] \[--records FILE.csv\]
//! sojourn plan SCENARIO.json \[--json\] \[--seed N\] \[--search-only\]
//! sojourn plan --bench
//! sojourn bench \[--quick\]
//! sojourn calibrate MEASUREMENTS.csv|json --scenario SCENARIO.json \[--json\] \[--out FITTED.json\]
//! sojourn example            # prints the example scenario as JSON
//! ```
//!
//! [`args`] parses the command line once into a typed command; `run.rs`,
//! `plan.rs`, `bench.rs` and `calibrate.rs` carry it out, writing their text with the
//! engine's presentation layer (the same numbers, labels and tables as the
//! web page); `huge_pages.rs` is the allocator.

use std::process::ExitCode;

use sojourn_engine::{Scenario, ScenarioParams};

/// `println!` that ends the program quietly when stdout is closed (e.g.
/// `sojourn bench | head`) instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// `print!` with the same behaviour as [`say!`].
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if write!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

mod args;
mod bench;
mod calibrate;
#[cfg(target_os = "linux")]
mod huge_pages;
mod plan;
mod profile;
mod run;

use args::{Command, USAGE};

/// Large buffers on 2 MiB pages where Linux grants them on request
/// (transparent huge pages in `madvise` mode, the common default).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: huge_pages::HugePageHint = huge_pages::HugePageHint;

fn main() -> ExitCode {
    match args::parse(std::env::args_os().skip(1)).and_then(execute) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("sojourn: {message}");
            ExitCode::FAILURE
        }
    }
}

fn execute(command: Command) -> Result<(), String> {
    match command {
        Command::Help => {
            say!("{USAGE}");
            Ok(())
        }
        Command::Example => {
            let json = serde_json::to_string_pretty(&ScenarioParams::overnight_batch())
                .map_err(|e| e.to_string())?;
            say!("{json}");
            Ok(())
        }
        Command::Run(args) => run::run(&args),
        Command::Plan(args) if args.profile => profile::profile(&args),
        Command::Plan(args) => plan::plan(&args),
        Command::PlanBench { json, threads } => plan::bench(json, threads),
        Command::Bench { quick } => bench::bench(quick),
        Command::Calibrate(args) => calibrate::calibrate(&args),
    }
}

/// The scenario in the file at `path`, with `seed` if given, validated
/// (every problem on a line of its own).
fn load_scenario(path: &str, seed: Option<u64>) -> Result<Scenario, String> {
    let text = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let mut params = sojourn_engine::scenario_params_from_json(&text)
        .map_err(|e| format!("{path}: not a scenario: {e}"))?;
    if let Some(seed) = seed {
        params.run.seed = seed;
    }
    Scenario::try_from(params).map_err(|e| {
        format!(
            "{path}: invalid scenario:\n  {}",
            e.to_string().replace("; ", "\n  ")
        )
    })
}

/// A value as pretty JSON.
fn pretty_json(value: &impl serde::Serialize) -> Result<String, String> {
    serde_json::to_string_pretty(value).map_err(|e| e.to_string())
}

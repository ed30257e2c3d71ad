//! The command line, parsed once into a typed [`Command`]: one parser for
//! every command, each accepting only its own flags (anything else is an
//! error naming it), so the commands themselves never see raw arguments.

use std::ffi::OsString;

use sojourn_engine::EngineKind;

pub const USAGE: &str = "\
usage:
  sojourn run SCENARIO.json [--seed N] [--json] [--engine fast|reference] [--records FILE.csv]
  sojourn plan SCENARIO.json [--json] [--seed N] [--search-only] [--threads N] [--profile]
  sojourn plan --bench [--threads N]
  sojourn bench [--quick]
  sojourn calibrate MEASUREMENTS.csv|json --scenario SCENARIO.json [--json] [--out FITTED.json]
  sojourn example

run      simulate a scenario and print a summary (or the report as JSON)
plan     capacity plan from the scenario's plan section: the cheapest
         configuration (hardware, discipline, engine settings) and fleet
         meeting the SLA targets, why, its service curve, expected/low/high
         demand re-planned and sensitivity (or all of it as JSON), on
         --threads N threads (default: every core; the result is the same);
         --bench times the searches of a fixed 24 h scenario; --profile
         runs the plan's simulations one at a time, timing each, and prints
         where they go by stage and the rounds replayed on 1, 2 and 4 workers
bench    time the fast engine on a fixed day of 1M+ requests on 8 replicas,
         and the reference stepper on a smaller one for the speedup
calibrate  fit the per-operation step-time model to measured step times
         or benchmark points (docs/calibration.md) and print the fitted
         values and each point's error before and after; --out writes the
         scenario with the fitted step time (a measured table CSV is
         checked and written as the scenario's step time)
example  print the example scenario (the overnight batch case of the source
         documents), a starting point for your own files";

/// What to do.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// Print [`USAGE`].
    Help,
    /// Print the example scenario.
    Example,
    Run(RunArgs),
    Plan(PlanArgs),
    /// `plan --bench`: time the capacity searches of the benchmark scenario.
    PlanBench {
        json: bool,
        threads: u32,
    },
    Bench {
        quick: bool,
    },
    Calibrate(CalibrateArgs),
}

/// `sojourn run`.
#[derive(Debug, PartialEq)]
pub struct RunArgs {
    pub path: String,
    /// Replaces the scenario's seed.
    pub seed: Option<u64>,
    pub json: bool,
    pub engine: EngineKind,
    /// Where to write every request's record as CSV.
    pub records: Option<String>,
}

/// `sojourn plan`.
#[derive(Debug, PartialEq)]
pub struct PlanArgs {
    pub path: String,
    pub seed: Option<u64>,
    pub json: bool,
    /// Only the capacity searches: no cases, service curve or sensitivity.
    pub search_only: bool,
    /// Simulation threads (0: every core).
    pub threads: u32,
    /// Time each simulation and print where the plan's time goes.
    pub profile: bool,
}

/// `sojourn calibrate`.
#[derive(Debug, PartialEq)]
pub struct CalibrateArgs {
    /// The measurements (CSV or JSON).
    pub measurements: String,
    /// The scenario whose model and hardware the fit is for.
    pub scenario: String,
    pub json: bool,
    /// Where to write the scenario with the fitted step time.
    pub out: Option<String>,
}

/// Each command and the flags it takes; run and plan also take a scenario
/// file, calibrate a measurements file.
const COMMANDS: [(&str, &[&str]); 5] = [
    ("run", &["seed", "json", "engine", "records"]),
    (
        "plan",
        &["seed", "json", "bench", "search-only", "threads", "profile"],
    ),
    ("bench", &["quick"]),
    ("calibrate", &["scenario", "json", "out"]),
    ("example", &[]),
];

/// Every flag any command takes, as read.
#[derive(Default)]
struct Flags {
    path: Option<String>,
    seed: Option<u64>,
    json: bool,
    engine: Option<EngineKind>,
    records: Option<String>,
    bench: bool,
    search_only: bool,
    profile: bool,
    quick: bool,
    threads: u32,
    scenario: Option<String>,
    out: Option<String>,
}

/// Parses the arguments after the program's name.
pub fn parse(args: impl IntoIterator<Item = impl Into<OsString>>) -> Result<Command, String> {
    use lexopt::prelude::*;
    let text = |e: lexopt::Error| e.to_string();
    let mut parser = lexopt::Parser::from_args(args);
    let command = match parser.next().map_err(text)? {
        Some(Value(v)) => v.string().map_err(text)?,
        Some(Long("help")) | Some(Short('h')) | None => return Ok(Command::Help),
        Some(other) => return Err(format!("{}\n{USAGE}", other.unexpected())),
    };
    let Some((_, allowed)) = COMMANDS.iter().find(|(name, _)| *name == command) else {
        return Err(format!("unknown command \"{command}\"\n{USAGE}"));
    };
    let takes = |flag: &str| allowed.contains(&flag);
    let takes_path = matches!(command.as_str(), "run" | "plan" | "calibrate");
    let mut flags = Flags::default();
    while let Some(arg) = parser.next().map_err(text)? {
        match arg {
            Long("seed") if takes("seed") => {
                let value = parser.value().map_err(text)?;
                flags.seed = Some(value.parse::<u64>().map_err(|e| format!("--seed: {e}"))?);
            }
            Long("json") if takes("json") => flags.json = true,
            Long("threads") if takes("threads") => {
                let value = parser.value().map_err(text)?;
                flags.threads = value
                    .parse::<u32>()
                    .map_err(|e| format!("--threads: {e}"))?;
            }
            Long("engine") if takes("engine") => {
                let value = parser.value().map_err(text)?.string().map_err(text)?;
                flags.engine = Some(match value.as_str() {
                    "fast" => EngineKind::Fast,
                    "reference" => EngineKind::Reference,
                    other => {
                        return Err(format!(
                            "--engine: expected fast or reference, got \"{other}\""
                        ));
                    }
                });
            }
            Long("records") if takes("records") => {
                flags.records = Some(parser.value().map_err(text)?.string().map_err(text)?);
            }
            Long("scenario") if takes("scenario") => {
                flags.scenario = Some(parser.value().map_err(text)?.string().map_err(text)?);
            }
            Long("out") if takes("out") => {
                flags.out = Some(parser.value().map_err(text)?.string().map_err(text)?);
            }
            Long("bench") if takes("bench") => flags.bench = true,
            Long("search-only") if takes("search-only") => flags.search_only = true,
            Long("profile") if takes("profile") => flags.profile = true,
            Long("quick") if takes("quick") => flags.quick = true,
            Value(v) if takes_path && flags.path.is_none() => {
                flags.path = Some(v.string().map_err(text)?);
            }
            other => return Err(other.unexpected().to_string()),
        }
    }
    Ok(match command.as_str() {
        "run" => Command::Run(RunArgs {
            path: flags
                .path
                .ok_or("run needs a scenario file (try `sojourn example > scenario.json`)")?,
            seed: flags.seed,
            json: flags.json,
            engine: flags.engine.unwrap_or(EngineKind::Fast),
            records: flags.records,
        }),
        "plan" if flags.bench => Command::PlanBench {
            json: flags.json,
            threads: flags.threads,
        },
        "plan" => Command::Plan(PlanArgs {
            path: flags
                .path
                .ok_or("plan needs a scenario file (try scenarios/overnight-batch.json)")?,
            seed: flags.seed,
            json: flags.json,
            search_only: flags.search_only,
            threads: flags.threads,
            profile: flags.profile,
        }),
        "bench" => Command::Bench { quick: flags.quick },
        "calibrate" => Command::Calibrate(CalibrateArgs {
            measurements: flags.path.ok_or(
                "calibrate needs a measurements file (CSV or JSON; see docs/calibration.md)",
            )?,
            scenario: flags.scenario.ok_or(
                "calibrate needs --scenario SCENARIO.json (the model and hardware measured)",
            )?,
            json: flags.json,
            out: flags.out,
        }),
        _ => Command::Example,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(args: &[&str], expected: Result<Command, &str>) {
        assert_eq!(
            parse(args.iter().copied()),
            expected.map_err(str::to_string),
            "{args:?}"
        );
    }

    #[test]
    fn each_command_gets_its_flags() {
        check(
            &[
                "run",
                "s.json",
                "--seed",
                "7",
                "--engine",
                "reference",
                "--json",
            ],
            Ok(Command::Run(RunArgs {
                path: "s.json".into(),
                seed: Some(7),
                json: true,
                engine: EngineKind::Reference,
                records: None,
            })),
        );
        check(
            &["run", "--records", "r.csv", "s.json"],
            Ok(Command::Run(RunArgs {
                path: "s.json".into(),
                seed: None,
                json: false,
                engine: EngineKind::Fast,
                records: Some("r.csv".into()),
            })),
        );
        check(
            &[
                "plan",
                "s.json",
                "--search-only",
                "--seed=3",
                "--threads",
                "3",
            ],
            Ok(Command::Plan(PlanArgs {
                path: "s.json".into(),
                seed: Some(3),
                json: false,
                search_only: true,
                threads: 3,
                profile: false,
            })),
        );
        check(
            &["plan", "s.json", "--profile"],
            Ok(Command::Plan(PlanArgs {
                path: "s.json".into(),
                seed: None,
                json: false,
                search_only: false,
                threads: 0,
                profile: true,
            })),
        );
        check(
            &["plan", "--bench"],
            Ok(Command::PlanBench {
                json: false,
                threads: 0,
            }),
        );
        check(
            &["plan", "--bench", "--threads", "2"],
            Ok(Command::PlanBench {
                json: false,
                threads: 2,
            }),
        );
        check(&["bench", "--quick"], Ok(Command::Bench { quick: true }));
        check(
            &["calibrate", "steps.csv", "--scenario", "s.json"],
            Ok(Command::Calibrate(CalibrateArgs {
                measurements: "steps.csv".into(),
                scenario: "s.json".into(),
                json: false,
                out: None,
            })),
        );
        check(
            &[
                "calibrate",
                "--json",
                "--scenario=s.json",
                "points.json",
                "--out",
                "fitted.json",
            ],
            Ok(Command::Calibrate(CalibrateArgs {
                measurements: "points.json".into(),
                scenario: "s.json".into(),
                json: true,
                out: Some("fitted.json".into()),
            })),
        );
        check(&["example"], Ok(Command::Example));
        check(&[], Ok(Command::Help));
        check(&["--help"], Ok(Command::Help));
        check(&["-h"], Ok(Command::Help));
    }

    #[test]
    fn a_flag_of_another_command_is_refused_by_name() {
        check(&["bench", "--seed", "3"], Err("invalid option '--seed'"));
        check(
            &["run", "s.json", "--quick"],
            Err("invalid option '--quick'"),
        );
        check(
            &["plan", "s.json", "--engine", "fast"],
            Err("invalid option '--engine'"),
        );
        check(&["example", "extra"], Err("unexpected argument \"extra\""));
        check(
            &["calibrate", "m.csv", "--scenario", "s.json", "--seed", "1"],
            Err("invalid option '--seed'"),
        );
        check(
            &["run", "s.json", "--out", "f.json"],
            Err("invalid option '--out'"),
        );
        check(
            &["run", "a.json", "b.json"],
            Err("unexpected argument \"b.json\""),
        );
    }

    #[test]
    fn bad_values_and_missing_files_say_what_is_wrong() {
        check(
            &["run", "s.json", "--engine", "slow"],
            Err("--engine: expected fast or reference, got \"slow\""),
        );
        check(
            &["run", "s.json", "--seed", "abc"],
            Err("--seed: cannot parse argument \"abc\": invalid digit found in string"),
        );
        check(
            &["run", "--seed"],
            Err("missing argument for option '--seed'"),
        );
        check(
            &["run"],
            Err("run needs a scenario file (try `sojourn example > scenario.json`)"),
        );
        check(
            &["plan"],
            Err("plan needs a scenario file (try scenarios/overnight-batch.json)"),
        );
        check(
            &["calibrate", "m.csv"],
            Err("calibrate needs --scenario SCENARIO.json (the model and hardware measured)"),
        );
        check(
            &["calibrate", "--scenario", "s.json"],
            Err("calibrate needs a measurements file (CSV or JSON; see docs/calibration.md)"),
        );
        check(
            &["calibrate", "m.csv", "--scenario"],
            Err("missing argument for option '--scenario'"),
        );
        let unknown = parse(["bogus"]).expect_err("an unknown command");
        assert!(
            unknown.starts_with("unknown command \"bogus\"\nusage:"),
            "{unknown}"
        );
        let option_first = parse(["-x"]).expect_err("an option before the command");
        assert!(
            option_first.starts_with("invalid option '-x'\nusage:"),
            "{option_first}"
        );
    }
}

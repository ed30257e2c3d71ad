//! `sojourn run`: simulate a scenario and print its summary (or the report
//! as JSON), optionally writing every request's record as CSV.

use sojourn_engine::{RunOptions, RunSummary, records_csv, run_text, simulate};

use crate::args::RunArgs;
use crate::{load_scenario, pretty_json};

pub fn run(args: &RunArgs) -> Result<(), String> {
    let scenario = load_scenario(&args.path, args.seed)?;
    let options = RunOptions {
        engine: args.engine,
        ..RunOptions::default()
    };
    let report = simulate(&scenario, &options).map_err(|e| e.to_string())?;
    if let Some(file) = &args.records {
        std::fs::write(file, records_csv(&report)).map_err(|e| format!("{file}: {e}"))?;
    }
    if args.json {
        say!("{}", pretty_json(&report)?);
    } else {
        say_raw!(
            "{}",
            run_text(&RunSummary::new(report, &scenario), &scenario).map_err(|e| e.to_string())?
        );
    }
    Ok(())
}

//! `sojourn calibrate`: fit the per-operation step-time model to measured
//! step times or benchmark points and print the fitted values and each
//! point's error before and after (or all of it as JSON); `--out` writes
//! the scenario with the fitted step time. A measured table (CSV of either
//! grid shape) is checked and, with `--out`, written as the step time.

use std::fmt::Write as _;

use sojourn_engine::calibration::{
    FitResult, Measurements, fit, parameters_table, parse_measurements, points_table,
};
use sojourn_engine::{Scenario, ScenarioParams, format_number};

use crate::args::CalibrateArgs;
use crate::{load_scenario, pretty_json};

pub fn calibrate(args: &CalibrateArgs) -> Result<(), String> {
    let path = &args.measurements;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let measurements = parse_measurements(&text).map_err(|e| format!("{path}: {e}"))?;
    let mut params = load_scenario(&args.scenario, None)?.params().clone();
    if let Measurements::Table(table) = measurements {
        params.step_time = table;
        say!("{path}: a measured step-time table");
        return write_out(args, params);
    }
    let result = fit(&params, &measurements).map_err(|e| format!("{path}: {e}"))?;
    if args.json {
        say!("{}", pretty_json(&result)?);
    } else {
        say_raw!("{}", summary(&result, path));
    }
    result.apply(&mut params);
    write_out(args, params)
}

/// Writes `params` to `--out`, if given, after checking it.
fn write_out(args: &CalibrateArgs, params: ScenarioParams) -> Result<(), String> {
    let Some(out) = &args.out else {
        return Ok(());
    };
    let scenario = Scenario::try_from(params).map_err(|e| format!("not written: {e}"))?;
    std::fs::write(out, pretty_json(scenario.params())? + "\n")
        .map_err(|e| format!("{out}: {e}"))?;
    if !args.json {
        say!("wrote {out}");
    }
    Ok(())
}

/// The fit in a few lines: what was fitted, the error before and after,
/// the parameters and each point.
fn summary(result: &FitResult, path: &str) -> String {
    let mut out = String::new();
    let record = result.operations.fit.as_ref();
    let _ = writeln!(
        out,
        "{path}: {} {} fitted in {} evaluations",
        result.points().len(),
        record.map_or("", |r| r.data.as_str()),
        result.evaluations
    );
    let _ = writeln!(
        out,
        "  root mean square log error: {} before, {} after",
        format_number(result.rms_log_error_before, 3),
        format_number(result.rms_log_error_after, 3)
    );
    let _ = writeln!(out);
    parameters_table(result).write_text(&mut out, "  ");
    let _ = writeln!(out);
    points_table(result.points()).write_text(&mut out, "  ");
    out
}

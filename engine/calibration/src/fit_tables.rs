//! A fit's result as tables for the page and the CLI: each parameter
//! before and after, and each measurement against the model before and
//! after.

use super::fit::FitResult;
use crate::format::format_number;
use crate::params::step_time::FittedPoint;
use crate::present::table::{Cell, DataTable};

/// A fit's parameters as a table: each value before and after, and whether
/// the fit set it.
pub fn parameters_table(result: &FitResult) -> DataTable {
    let mut table = DataTable::new(
        "fit-parameters",
        "Fitted step-time parameters",
        &["parameter", "before", "after", "fitted"],
    );
    for p in &result.parameters {
        table.rows.push(vec![
            Cell::text(&p.field),
            Cell::number(p.before, format_number(p.before, 4)),
            Cell::number(p.after, format_number(p.after, 4)),
            Cell::text(match (p.fitted, p.at_bound) {
                (true, true) => "fitted, at its bound",
                (true, false) => "fitted",
                (false, _) => "kept",
            }),
        ]);
    }
    table
}

/// A fit's points as a table (those of a [`FitResult`] or of a scenario's
/// [`FitRecord`](crate::params::step_time::FitRecord)): each measured figure, the model's value before and
/// after, and their errors (model over measured, minus one).
pub fn points_table(points: &[FittedPoint]) -> DataTable {
    let mut table = DataTable::new(
        "fit-points",
        "Each measurement before and after the fit",
        &[
            "point",
            "figure",
            "measured",
            "before",
            "error before [%]",
            "after",
            "error after [%]",
        ],
    );
    let percent = |e: f64| Cell::number(100.0 * e, format!("{:+.1}", 100.0 * e));
    for p in points {
        table.rows.push(vec![
            Cell::text(p.point.clone()),
            Cell::text(p.figure.clone()),
            Cell::number(p.measured, format_number(p.measured, 4)),
            Cell::number(p.before, format_number(p.before, 4)),
            percent(p.error_before()),
            Cell::number(p.after, format_number(p.after, 4)),
            percent(p.error_after()),
        ]);
    }
    table
}

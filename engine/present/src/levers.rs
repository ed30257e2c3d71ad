//! The levers tried against the target that sets the fleet, as a table:
//! each lever's smallest fleet meeting every target, its cost and what it
//! saves against the plan's smallest fleet.

use super::run_tables::usd_cell;
use super::table::{Cell, DataTable};
use crate::plan::PlanResult;

/// The levers of `plan`'s diagnosis; `None` when none was tried.
pub fn levers_table(plan: &PlanResult) -> Option<DataTable> {
    let d = plan.binding.as_ref()?.diagnosis.as_ref()?;
    if d.levers.is_empty() {
        return None;
    }
    let mut table = DataTable::new(
        "levers",
        format!("Levers against {}", d.target),
        &[
            "lever",
            "replicas",
            "GPUs with reserve",
            "USD per month",
            "saving per month [USD]",
            "simulations",
        ],
    );
    for (i, lever) in d.levers.iter().enumerate() {
        let replicas = if lever.replicas.is_empty() {
            Cell::text("none below the plan's")
        } else {
            Cell::text(
                lever
                    .replicas
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(" + "),
            )
        };
        let best = if d.best == Some(i) { " (best)" } else { "" };
        table.rows.push(vec![
            Cell::text(format!("{}{best}", lever.label)),
            replicas,
            Cell::maybe(lever.gpus.map(f64::from), |g| format!("{g:.0}")),
            usd_cell(lever.usd_per_month),
            usd_cell(lever.saving_usd_per_month),
            Cell::number(lever.simulations as f64, lever.simulations.to_string()),
        ]);
    }
    Some(table)
}

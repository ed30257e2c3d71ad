//! The verdict's sentences: how the configured fleet fares against the
//! targets, and the recommended fleet's line (or, with no fleet meeting the
//! targets, why: said here and nowhere else on the page), and what a
//! provisional plan (the search's decision while the rest runs) says.
//! Every cost says which fleet it is for.

use sojourn_engine::{PlanResult, RunSummary, Sensitivity, format_usd, verdict_counts};

use super::{chosen_configuration, counted, reserve_replicas};

/// "The configured fleet, 4 replicas of H100 SXM5 80GB x2: 2 of 4 targets
/// met, 2 not met." from its one run, or "... over 4 replications." from
/// `plan`'s judgement of it (a plan of the run's inputs).
pub fn configured_line(run: &RunSummary, plan: Option<&PlanResult>) -> String {
    let basis = &run.cost.basis;
    let fleet = format!(
        "The configured fleet, {} of {} x{}",
        counted(run.report.replicas.into(), "replica"),
        basis.hardware,
        basis.gpus_per_replica,
    );
    match plan.and_then(|p| p.configured.as_ref()) {
        Some(c) => format!(
            "{fleet}: {} over {}.",
            verdict_counts(&c.evaluation),
            counted(c.evaluation.replications.into(), "replication")
        ),
        None => format!(
            "{fleet}: {} (one simulation).",
            verdict_counts(&run.targets)
        ),
    }
}

/// The recommended fleet in a line, and a line under it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanLine {
    /// "The plan: 8 + 1 replicas of H100 SXM x2, FCFS", or "No fleet meets
    /// the targets".
    pub fleet: String,
    /// How it fares and what it costs, or why no fleet meets the targets.
    pub detail: String,
    /// A plan meeting every target exists.
    pub met: bool,
}

/// The plan's line for the verdict.
pub fn plan_line(plan: &PlanResult) -> PlanLine {
    let (Some(rec), Some(chosen)) = (&plan.recommendation, chosen_configuration(plan)) else {
        return PlanLine {
            fleet: "No fleet meets the targets".to_string(),
            detail: plan
                .unattainable
                .clone()
                .unwrap_or_else(|| "No configuration meets every target.".to_string()),
            met: false,
        };
    };
    let e = &rec.evaluation;
    let judged = if e.meets {
        format!(
            "every target met over {}",
            counted(e.replications.into(), "replication")
        )
    } else {
        format!(
            "{} over {}",
            verdict_counts(e),
            counted(e.replications.into(), "replication")
        )
    };
    let cost = match rec.budget.fleet.usd_per_month {
        Some(month) => format!(
            "{} per month, {} per year for this fleet (steady and reserve)",
            format_usd(month),
            format_usd(12.0 * month)
        ),
        None => format!("{} GPUs (no price given)", rec.total_gpus),
    };
    PlanLine {
        fleet: format!(
            "The plan: {} + {} replicas of {}",
            rec.steady_replicas,
            reserve_replicas(plan),
            chosen.name
        ),
        detail: format!("{judged}; {cost}."),
        met: e.meets,
    }
}

/// The sensitivity's reading, with what "largest impact" measures: the
/// tornado draws the cost or P(miss) swing, and the inputs re-planned are
/// chosen by the largest of those and the swing of the check closest to
/// its bound, which the tornado does not draw.
pub fn sensitivity_reading(s: &Sensitivity) -> String {
    format!(
        "{} An input's impact is its largest effect on cost per success, P(miss) or the target closest to its bound (the worst check's value against its bound), so an input re-planned for its effect on a target may show a short bar.",
        s.reading
    )
}

/// What a provisional plan (the search's decision, while the cases, the
/// service curve and sensitivity still run) says beside it: short, so
/// that the page keeps its layout when the complete plan replaces it.
pub const PROVISIONAL: &str =
    "Provisional: the search's choice; the service curve can still add replicas";

//! The summary of one run that the page shows and the CLI prints: the
//! engine's [`Report`] itself (its per-request records are never
//! serialised, so the web worker sends it to the page without them), its
//! digest, the configured fleet's cost from the engine's cost model, and the
//! run against every target of the plan section (judged where the records
//! are, so that any percentile can be read).

use serde::{Deserialize, Serialize};

use crate::model::scenario::Scenario;
use crate::plan::cost::{ReportCost, report_cost};
use crate::plan::evaluate::{self, CheckSpec, Evaluation};
use crate::report::{ClassStats, Report};

/// One run, as shown: the report, its digest and its cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run's report (records included only where the run kept them and
    /// the summary has not travelled as JSON).
    pub report: Report,
    /// The report's digest of every per-request time, as 16 hex digits,
    /// taken where the records are (see [`Report::digest`]).
    pub digest: String,
    /// The configured fleet's cost over the measured window: steady
    /// replicas as simulated plus the plan's reserve.
    pub cost: ReportCost,
    /// This run against every target and the sustainability check, as the
    /// planner judges one replication (its decision rule; with one run a
    /// percentile's bound is its value, P(miss)'s the exact Clopper-Pearson
    /// bound).
    pub targets: Evaluation,
}

impl RunSummary {
    /// The summary of `report`, a run of `scenario`.
    pub fn new(report: Report, scenario: &Scenario) -> RunSummary {
        let checks = CheckSpec::all(scenario);
        let run = evaluate::RunAggregates::of(&report, &checks);
        RunSummary {
            digest: format!("{:016x}", report.digest()),
            cost: report_cost(&report, scenario.params()),
            targets: evaluate::evaluate(&checks, &[&run], scenario.params().plan.decision),
            report,
        }
    }

    /// Each class, then every class together, named "all classes".
    pub fn class_rows(&self) -> impl Iterator<Item = (&str, &ClassStats)> {
        let report = &self.report;
        report
            .classes
            .iter()
            .map(|c| (c.name.as_str(), c))
            .chain([("all classes", &report.overall)])
    }
}

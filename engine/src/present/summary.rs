//! The summary of one run that the page shows and the CLI prints: the
//! engine's [`Report`] itself (its per-request records are never
//! serialised, so the web worker sends it to the page without them), its
//! digest, and the configured fleet's cost from the engine's cost model.

use serde::{Deserialize, Serialize};

use crate::model::scenario::Scenario;
use crate::plan::cost::{ReportCost, report_cost};
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
}

impl RunSummary {
    /// The summary of `report`, a run of `scenario`.
    pub fn new(report: Report, scenario: &Scenario) -> RunSummary {
        RunSummary {
            digest: format!("{:016x}", report.digest()),
            cost: report_cost(&report, scenario.params()),
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

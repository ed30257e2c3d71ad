//! What the results on the page are for: whether an edit can be re-costed
//! rather than simulated, the notes and marks that say how current the
//! results are (and which panels changed since), and the provenance a
//! download carries.

use leptos::prelude::*;
use sojourn_engine::ScenarioParams;

use super::{AppState, PlanStatus, RunStatus};
use crate::browser;
use crate::link;
use crate::provenance::Provenance;

impl AppState {
    /// Whether the current scenario differs from the last job's in prices
    /// alone, with that job's single run complete: then its results are
    /// re-costed rather than simulated again.
    pub fn can_recost(&self) -> bool {
        let ran = self
            .jobs
            .with_value(|jobs| jobs.job_params().is_some() && jobs.single_run_done());
        ran && self.blocked_reason().is_none()
            && self
                .params
                .with_untracked(|p| self.jobs.with_value(|jobs| jobs.can_recost(p)))
    }

    /// What the results on the page are for, when "Done." alone would
    /// mislead: earlier inputs (and what brings them up to date), or the
    /// last simulations re-costed at new prices (and, from the engine's
    /// count, whether any simulation ran, which and why).
    pub fn results_note(&self) -> Option<String> {
        if self.recosted.get() {
            let (simulated, which) = self.plan_simulated.get();
            if simulated > 0 || which.is_some() {
                let which = which.unwrap_or_default();
                return Some(if self.run.with(RunStatus::is_running) {
                    format!(
                        "Costs re-computed at the new prices; the new prices move the plan's search to fleets the last plan never simulated, so these are simulated now ({simulated} so far): {which}."
                    )
                } else {
                    format!(
                        "Costs re-computed at the new prices from the last simulations and {}, of fleets the last plan never simulated, which the new prices brought into the plan (a configuration it had ruled out by cost, or a new choice's cases, curve and sensitivity): {which}.",
                        crate::results::counted(simulated, "new simulation")
                    )
                });
            }
        }
        if self.run.with(RunStatus::is_running) {
            return None;
        }
        let current = self.params.with(|p| {
            self.results
                .with(|r| r.as_ref().map(|results| results.params == *p))
        });
        match current {
            Some(false) if self.blocked_reason().is_some() => {
                Some("Results are for earlier inputs: fix the inputs, then press Run.")
            }
            Some(false) if self.updating() => Some("Results are for earlier inputs: updating."),
            Some(false) => Some("Results are for earlier inputs: press Run."),
            Some(true) if self.recosted.get() => Some(
                "Costs re-computed at the new prices from the last simulations; nothing was simulated again.",
            ),
            _ => None,
        }
        .map(str::to_string)
    }

    /// Where a download comes from: the scenario of the results shown (the
    /// inputs while there are none), its link, and now.
    pub fn provenance(&self) -> Provenance {
        let params = self
            .results
            .with_untracked(|r| r.as_ref().map(|r| r.params.clone()))
            .unwrap_or_else(|| self.params.get_untracked());
        Self::provenance_of(&params)
    }

    /// Where a download of `params` comes from: its name, its link, and now.
    pub fn provenance_of(params: &ScenarioParams) -> Provenance {
        let link = link::encode(params).ok().map(|value| {
            format!(
                "{}{}",
                browser::page_address(),
                link::replace_in_query(&browser::query(), &value)
            )
        });
        Provenance::new(&params.name, link, &browser::now_iso())
    }

    /// Whether the plan shown is a complete plan of earlier inputs (kept
    /// until the current inputs' plan replaces it).
    pub fn plan_is_stale(&self) -> bool {
        let current = self.params.get();
        self.plan
            .with(|p| matches!(p, PlanStatus::Done { params, .. } if **params != current))
    }

    /// Whether results for earlier inputs are being brought up to date: a
    /// run is going, or runs follow every change and the last one was
    /// neither cancelled nor failed (after either, nothing runs until the
    /// next edit or Run, which [`AppState::start`] and the edit clear).
    fn updating(&self) -> bool {
        self.run.with(|run| match run {
            RunStatus::Running { .. } => true,
            RunStatus::Cancelled | RunStatus::Failed(_) => false,
            RunStatus::Idle | RunStatus::Done => self.auto_run.get(),
        })
    }

    /// Beside results for earlier inputs: whether they wait for the inputs
    /// to be fixed (a run still going is for the earlier inputs too, so
    /// "updating" would promise what it cannot bring), are being brought
    /// up to date, or wait for Run.
    pub fn stale_label(&self) -> &'static str {
        if self.blocked_reason().is_some() {
            "for earlier inputs: fix the inputs to run"
        } else if self.updating() {
            "for earlier inputs: updating"
        } else {
            "for earlier inputs: press Run"
        }
    }

    /// Whether the run results shown are for earlier inputs.
    pub fn results_are_stale(&self) -> bool {
        let current = self.params.get();
        self.results
            .with(|r| r.as_ref().is_some_and(|r| r.params != current))
    }

    /// Whether the plan the verdict and the headline show is for earlier
    /// inputs: the complete plan of earlier inputs, with no provisional
    /// plan of these inputs in its place.
    pub fn shown_plan_is_stale(&self) -> bool {
        self.provisional.with(Option::is_none) && self.plan_is_stale()
    }

    /// The mark over a block of results computed for `earlier` inputs:
    /// what it waits for, and the panels of the form changed since ("For
    /// earlier inputs (changed: Model, Hardware): updating").
    pub fn stale_mark(&self, earlier: &ScenarioParams) -> String {
        let changed = self.params.with(|now| changed_panels(earlier, now));
        let label = self.stale_label();
        let wait = label.strip_prefix("for earlier inputs: ").unwrap_or(label);
        if changed.is_empty() {
            format!("For earlier inputs: {wait}")
        } else {
            format!(
                "For earlier inputs (changed: {}): {wait}",
                changed.join(", ")
            )
        }
    }

    /// The mark over the run's results, when they are for earlier inputs.
    pub fn results_stale_mark(&self) -> Option<String> {
        if !self.results_are_stale() {
            return None;
        }
        self.results
            .with(|r| r.as_ref().map(|r| self.stale_mark(&r.params)))
    }

    /// The mark over the plan's results, when the plan shown is for
    /// earlier inputs.
    pub fn plan_stale_mark(&self) -> Option<String> {
        if !self.shown_plan_is_stale() {
            return None;
        }
        self.plan.with(|p| match p {
            PlanStatus::Done { params, .. } => Some(self.stale_mark(params)),
            _ => None,
        })
    }
}

/// The panels of the form (by their headings) whose inputs differ between
/// `earlier` and `now`, in the form's order.
pub fn changed_panels(earlier: &ScenarioParams, now: &ScenarioParams) -> Vec<&'static str> {
    let (a, b) = (&earlier.plan, &now.plan);
    let serving = earlier.replica != now.replica
        || earlier.engine != now.engine
        || earlier.cluster != now.cluster
        || earlier.step_time != now.step_time
        || earlier.step_time_scale.to_bits() != now.step_time_scale.to_bits();
    let prices = a.pricing != b.pricing || a.reserve != b.reserve;
    let cases = a.best != b.best || a.worst != b.worst;
    let targets = {
        let (mut a, mut b) = (a.clone(), b.clone());
        for plan in [&mut a, &mut b] {
            plan.pricing = Default::default();
            plan.reserve = Default::default();
            plan.best = Default::default();
            plan.worst = Default::default();
        }
        a != b
    };
    [
        ("Scenario name", earlier.name != now.name),
        ("Workload", earlier.classes != now.classes),
        ("Model", earlier.model != now.model),
        ("Hardware", earlier.hardware != now.hardware),
        ("Serving engine and cluster", serving),
        ("Simulation", earlier.run != now.run),
        ("Prices and reserve", prices),
        ("SLA targets and candidates", targets),
        ("Best and worst cases", cases),
    ]
    .into_iter()
    .filter_map(|(panel, changed)| changed.then_some(panel))
    .collect()
}

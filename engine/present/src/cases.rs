//! The base, best and worst cases as the page simulates them on the
//! configured fleet, with the rule that prices them, and the planner's
//! decision rule in words: each written once for the page and the CLI.

use serde::{Deserialize, Serialize};

use crate::params::ScenarioParams;
use crate::params::plan::{DecisionRule, Multipliers};

/// The base scenario or one of its named overrides (the plan section's
/// `best` and `worst` multipliers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Case {
    Base,
    Best,
    Worst,
}

impl Case {
    pub const ALL: [Case; 3] = [Case::Base, Case::Best, Case::Worst];

    /// "base", "best", "worst": the plan section's names, also the names of
    /// the plan's [`ScenarioResult`](crate::plan::ScenarioResult)s.
    pub fn name(self) -> &'static str {
        match self {
            Case::Base => "base",
            Case::Best => "best",
            Case::Worst => "worst",
        }
    }

    /// What the case is, as tables and charts name it: "expected demand",
    /// "low demand", "high demand".
    pub fn label(self) -> &'static str {
        match self {
            Case::Base => "expected demand",
            Case::Best => "low demand",
            Case::Worst => "high demand",
        }
    }

    /// The multipliers of this case from the scenario's plan section.
    pub fn multipliers(self, params: &ScenarioParams) -> Multipliers {
        match self {
            Case::Base => Multipliers::BASE,
            Case::Best => params.plan.best,
            Case::Worst => params.plan.worst,
        }
    }

    /// The parameters simulated for this case: the multipliers applied, the
    /// plan section kept (so the case is costed with the same reserve) and
    /// its prices, per GPU-hour and fixed, scaled by the case's price
    /// multiplier, as the planner prices its cases.
    pub fn params(self, params: &ScenarioParams) -> ScenarioParams {
        let multipliers = self.multipliers(params);
        let mut out = multipliers.apply(params);
        out.plan = params.plan.clone();
        out.plan.pricing = params.plan.pricing.scaled(multipliers.price);
        out
    }
}

/// How the planner decides that a target is met, in words: "mean", "upper
/// end of the 95% interval" (after "decided by the").
pub fn decision_label(rule: DecisionRule) -> &'static str {
    match rule {
        DecisionRule::Mean => "mean",
        DecisionRule::Upper95 => "upper end of the 95% interval",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_and_worst_cases_apply_their_multipliers_and_prices() {
        let mut params = ScenarioParams::overnight_batch();
        params.plan.pricing.usd_per_gpu_hour = Some(2.5);
        params.plan.pricing.fixed_usd_per_month = 100.0;
        params.plan.worst.price = 1.5;
        let worst = Case::Worst.params(&params);
        assert_eq!(
            worst.classes[0].batches_per_hour,
            params.classes[0].batches_per_hour * params.plan.worst.arrival_rate
        );
        assert_eq!(worst.plan.pricing.usd_per_gpu_hour, Some(2.5 * 1.5));
        assert_eq!(worst.plan.pricing.fixed_usd_per_month, 150.0);
        assert_eq!(worst.plan.reserve, params.plan.reserve);
        assert_eq!(Case::Base.params(&params), params);
        let names: Vec<&str> = Case::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names, ["base", "best", "worst"]);
        let labels: Vec<&str> = Case::ALL.iter().map(|c| c.label()).collect();
        assert_eq!(labels, ["expected demand", "low demand", "high demand"]);
        assert_eq!(decision_label(DecisionRule::Mean), "mean");
    }
}

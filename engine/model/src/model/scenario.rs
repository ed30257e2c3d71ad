//! The validated scenario: [`Scenario::try_from`] checks a
//! [`ScenarioParams`] once and derives the memory budget and the step-time
//! model; code downstream never re-checks.

use crate::error::{Checker, ScenarioError};
use crate::model::class::Class;
use crate::model::load::{Load, refusals_possible};
use crate::model::memory::MemoryBudget;
use crate::model::plan_checks::check_plan;
use crate::model::sections::{MAX_REPLICAS, Sections, check_sections};
use crate::model::service::service_alone;
use crate::model::step_time::StepTimeModel;
use crate::model::targets::Target;
use crate::params::ScenarioParams;

/// A checked scenario with its derived quantities.
#[derive(Clone, Debug)]
pub struct Scenario {
    params: ScenarioParams,
    classes: Vec<Class>,
    memory: MemoryBudget,
    step_time: StepTimeModel,
    drain_s: f64,
    targets: Vec<Target>,
}

impl TryFrom<ScenarioParams> for Scenario {
    type Error = ScenarioError;

    fn try_from(params: ScenarioParams) -> Result<Self, ScenarioError> {
        let mut check = Checker::new();
        let sections = check_sections(&params, &mut check);
        let built = match (&sections, check.has_errors()) {
            (Some(s), false) => Some((s.classes.as_slice(), &s.step_time)),
            _ => None,
        };
        check_plan(&params, built, &mut check);
        check.finish()?;
        match sections {
            Some(Sections {
                classes,
                memory,
                step_time,
                drain_s,
            }) => Ok(Scenario {
                targets: Target::all(&params),
                params,
                classes,
                memory,
                step_time,
                drain_s,
            }),
            // A section that could not be built comes with an error, so this
            // is unreachable; report it as an error rather than panic.
            None => Err(ScenarioError::single(
                "",
                "internal error: incomplete validation",
            )),
        }
    }
}

impl Scenario {
    /// Whether the planner can plan the scenario: it scales each class's rate
    /// for its demand cases, service curve and sensitivity, and prices the
    /// fleet per hour of the horizon, which only open classes follow (a fixed
    /// count, an offline class or a closed loop sends what its mode says, for
    /// as long as that takes). Checked when a plan starts, not by validation:
    /// a single run of any mode is valid.
    pub fn check_plannable(&self) -> Result<(), ScenarioError> {
        let params = &self.params.classes;
        match params.iter().position(|c| !c.load.is_open()) {
            None => Ok(()),
            Some(i) => Err(ScenarioError::single(
                format!("classes[{i}].load"),
                "the planner scales arrival rates and prices the fleet per hour of the horizon, \
                 which only open classes follow; simulate this scenario, or plan with the class open",
            )),
        }
    }

    /// The parameters it was built from, unchanged.
    pub fn params(&self) -> &ScenarioParams {
        &self.params
    }

    /// The validated classes, in the order of `params().classes`.
    pub fn classes(&self) -> &[Class] {
        &self.classes
    }

    /// Per-replica memory: weights, KV cache, blocks.
    pub fn memory(&self) -> &MemoryBudget {
        &self.memory
    }

    /// The step-time model built from the scenario's sections.
    pub fn step_time(&self) -> &StepTimeModel {
        &self.step_time
    }

    /// The plan's targets, validated, the default applied when none is
    /// listed.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// How long the fleet keeps working after the horizon \[s\]: infinite
    /// when a class sends a fixed number of requests (the run then lasts
    /// until every request is done; docs/engine.md, Workload).
    pub fn drain_s(&self) -> f64 {
        if self.is_counted() {
            f64::INFINITY
        } else {
            self.drain_s
        }
    }

    /// Whether a class sends a fixed number of requests.
    pub fn is_counted(&self) -> bool {
        self.classes
            .iter()
            .any(|c| c.load.counted_requests().is_some())
    }

    /// Whether a class is a closed loop (its sends follow its returns).
    pub fn is_closed_loop(&self) -> bool {
        self.classes
            .iter()
            .any(|c| matches!(c.load, Load::ClosedLoop { .. }))
    }

    /// Mean arrival rate of requests over all rate-driven classes
    /// \[requests/s\].
    pub fn mean_request_rate_per_s(&self) -> f64 {
        self.classes
            .iter()
            .map(|c| c.mean_batch_rate_per_s() * c.batch_size.moments().0)
            .sum()
    }

    /// Expected number of requests: the sum of [`Scenario::class_requests`].
    pub fn expected_requests(&self) -> f64 {
        (0..self.classes.len())
            .map(|i| self.class_requests(i))
            .sum()
    }

    /// Expected number of requests class `i` sends: over the horizon at an
    /// open class's rate, a counted class's count, and for a closed loop
    /// over the horizon at most one request per client per cycle
    /// ([`Scenario::closed_loop_cycle_s`]).
    pub fn class_requests(&self, i: usize) -> f64 {
        let horizon = self.params.run.horizon_s;
        let c = &self.classes[i];
        match (&c.load, c.load.counted_requests()) {
            (_, Some(n)) => n as f64,
            (Load::ClosedLoop { clients, .. }, None) => {
                *clients as f64 * (horizon / self.closed_loop_cycle_s(c)).ceil()
            }
            _ => c.expected_batches(horizon) * c.batch_size.moments().0,
        }
    }

    /// The shortest mean time between two sends of one closed-loop client of
    /// `class` \[s\]: its think time, plus the time its request spends in the
    /// system at the least. That is service alone (a batch serves each
    /// request more slowly, so this overestimates the sends), cut short by
    /// the class's timeout; and nothing at all when a request can be
    /// refused on arrival ([`Scenario::refusals_possible`]): a refused
    /// client sends again after its think time alone. Zero when neither
    /// bounds it (validation refuses such a loop without a total).
    pub fn closed_loop_cycle_s(&self, class: &Class) -> f64 {
        let Load::ClosedLoop { think_ms, .. } = &class.load else {
            return f64::INFINITY;
        };
        let think_s = think_ms.as_ref().map_or(0.0, |d| d.moments().0 / 1000.0);
        let in_system_s = if self.refusals_possible() {
            0.0
        } else {
            self.service_alone_s(class)
                .min(class.timeout_s.unwrap_or(f64::INFINITY))
        };
        think_s + in_system_s
    }

    /// Whether a request can find its replica's waiting queue full
    /// (`engine.max_waiting`): always with a bound, unless every class is a
    /// closed loop without a timeout and all their clients together cannot
    /// fill it (the one arriving is not yet waiting). A timed-out request
    /// keeps its place in the queue until its replica's next step (rule 1),
    /// while its client sends again, so with timeouts a few clients can
    /// fill any queue.
    pub fn refusals_possible(&self) -> bool {
        refusals_possible(&self.params)
    }
    /// One request of `class` at its mean lengths alone on a replica \[s\].
    fn service_alone_s(&self, class: &Class) -> f64 {
        let (input, output) = class.mean_lengths();
        let input = input.round() as u64;
        let cached = (class.prefix_cache_hit * input as f64).round() as u64;
        let output = output.round() as u64;
        service_alone(&self.step_time, &self.params.engine, input, cached, output).sojourn_s
    }

    /// Standard deviation of the number of requests over the horizon: each
    /// open class's count is compound Poisson, with variance (batches
    /// expected) x E\[X^2\] for batch size X; the other modes' counts are
    /// fixed (or, for a closed loop, estimated from above).
    pub fn requests_sd(&self) -> f64 {
        let horizon = self.params.run.horizon_s;
        self.classes
            .iter()
            .filter(|c| matches!(c.load, Load::Open))
            .map(|c| c.expected_batches(horizon) * c.batch_size.moments().1)
            .sum::<f64>()
            .sqrt()
    }

    /// This scenario with another fleet size and seed. Nothing derived
    /// depends on either, so no re-validation is needed beyond the range of
    /// `replicas`; cached distribution moments are kept.
    pub fn with_replicas_and_seed(
        &self,
        replicas: u32,
        seed: u64,
    ) -> Result<Scenario, ScenarioError> {
        if replicas == 0 || replicas > MAX_REPLICAS {
            return Err(ScenarioError::single(
                "cluster.replicas",
                format!("must be between 1 and {MAX_REPLICAS}, got {replicas}"),
            ));
        }
        let mut out = self.clone();
        out.params.cluster.replicas = replicas;
        out.params.run.seed = seed;
        Ok(out)
    }
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;

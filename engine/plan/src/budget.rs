//! A plan's whole work, checked before its first simulation: every run it
//! may make fits the per-run budgets, and the requests of all its runs
//! together fit the plan's ([`PlanOptions::max_plan_requests`]). The count
//! of runs by phase that this checks is the one the progress bar divides by.

use crate::explore::WIDTH;
use crate::model::scenario::Scenario;
use crate::params::plan::{Multipliers, PlanParams, SensitivityInput};
use crate::sim::RunOptions;
use crate::{PlanError, PlanOptions};

/// The default plan budget: 500 million simulated requests in all, by the
/// estimate below. At the engine's half a microsecond a request natively,
/// about four minutes of one core. The shipped scenarios' plans expect 0.4
/// to 30 million (`shipped_scenarios_plan_within_the_budget`).
pub const MAX_PLAN_REQUESTS: f64 = 5e8;

/// A rough number of runs per capacity search, for the estimates.
const SEARCH_RUNS_GUESS: u64 = 8;

/// What a share of a plan's runs is for, to name in a refusal.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// The capacity searches of the expected demand, the scenario's own
    /// settings and the configured fleet.
    Search,
    /// Low and high demand re-planned.
    Cases,
    /// The service curve's loads.
    Curve,
    /// The sensitivity's ends, and the re-plans of its top inputs.
    Sensitivity,
}

/// Some of a plan's runs: `runs` of the scenario under `multipliers`.
struct Share {
    phase: Phase,
    multipliers: Multipliers,
    runs: u64,
}

/// The runs a plan of `plan` over `configurations` configurations expects,
/// by phase. Rough: on the shipped scenarios the total comes within -18%
/// to +83% of the simulations run.
fn shares(plan: &PlanParams, options: &PlanOptions, configurations: usize) -> Vec<Share> {
    let r = plan.min_replications.clamp(1, plan.replications.max(1)) as u64;
    let curve_replications = plan.service_curve.replications.map_or(r, u64::from);
    let explorations = (configurations as u64).min(WIDTH as u64 + 1);
    // One configuration's search, and the whole space's (branch and bound
    // decides about WIDTH + 1 configurations' searches in full).
    let one_search = SEARCH_RUNS_GUESS * r / 2;
    let share = |phase, multipliers, runs| Share {
        phase,
        multipliers,
        runs,
    };
    // The search, the scenario's own settings searched for the "why" and
    // the configured fleet judged.
    let mut out = vec![share(
        Phase::Search,
        Multipliers::BASE,
        explorations * one_search + one_search + 2 * r,
    )];
    if options.scenarios {
        out.push(share(Phase::Cases, plan.best, one_search));
        out.push(share(Phase::Cases, plan.worst, one_search));
    }
    if options.service_curve {
        // Each load, and the operating point.
        out.push(share(Phase::Curve, Multipliers::BASE, curve_replications));
        for &load in &plan.service_curve.load_multipliers {
            let m = Multipliers {
                arrival_rate: load,
                ..Multipliers::BASE
            };
            out.push(share(Phase::Curve, m, curve_replications));
        }
    }
    if options.sensitivity {
        let delta = plan.sensitivity.delta;
        let replications = plan.sensitivity.replications as u64;
        for &input in &plan.sensitivity.inputs {
            if input == SensitivityInput::Price {
                continue;
            }
            for factor in [1.0 - delta, 1.0 + delta] {
                let m = Multipliers::BASE.with(input, factor);
                out.push(share(Phase::Sensitivity, m, replications));
            }
        }
        // The top inputs re-planned from the plan's fleet.
        out.push(share(Phase::Sensitivity, Multipliers::BASE, 2 * one_search));
    }
    out
}

/// The simulations a plan of `scenario` over `configurations`
/// configurations expects, for its progress bar.
pub fn estimate_simulations(
    scenario: &Scenario,
    options: &PlanOptions,
    configurations: usize,
) -> u64 {
    shares(&scenario.params().plan, options, configurations)
        .iter()
        .map(|s| s.runs)
        .sum()
}

/// Checks, before the first simulation, that every simulation the plan may
/// run fits the per-run budgets (the base, best and worst cases, each
/// service-curve load and each sensitivity end, on the largest workload
/// each gives: the fleet and the hardware do not change how many requests
/// arrive), and that the requests of all its expected runs together fit
/// the plan's budget. A plan never discards finished work because a later
/// point is too large, nor starts work it cannot finish.
pub fn check_budget(scenario: &Scenario, options: &PlanOptions) -> Result<(), PlanError> {
    scenario
        .check_plannable()
        .map_err(|error| PlanError::InvalidCase {
            case: "base".to_string(),
            error,
        })?;
    let plan = &scenario.params().plan;
    let run_options = RunOptions {
        max_requests: options.max_requests_per_run,
        max_bytes: options.max_bytes_per_run,
        ..RunOptions::default()
    };
    let base_requests = scenario.expected_requests();
    let configurations = plan
        .candidates
        .as_ref()
        .map_or(1, Vec::len)
        .saturating_mul(plan.search.count(scenario.params()));
    let mut by_phase = [0.0; 4];
    for share in shares(plan, options, configurations) {
        let m = share.multipliers;
        // Only the multipliers that raise the number of requests need a
        // case of their own; fewer requests than the base's fit as well.
        let requests = if m.arrival_rate <= 1.0 && m.batch_size <= 1.0 {
            base_requests
        } else {
            let case = case_name(share.phase, &m);
            let scenario = Scenario::try_from(m.apply(scenario.params())).map_err(|error| {
                PlanError::InvalidCase {
                    case: case.clone(),
                    error,
                }
            })?;
            crate::sim::check_run_budget(&scenario, &run_options)
                .map_err(|error| PlanError::Run { case, error })?;
            scenario.expected_requests()
        };
        by_phase[share.phase as usize] += share.runs as f64 * requests;
    }
    crate::sim::check_run_budget(scenario, &run_options).map_err(|error| PlanError::Run {
        case: "base".to_string(),
        error,
    })?;
    let expected: f64 = by_phase.iter().sum();
    if expected.is_nan() || expected > options.max_plan_requests {
        let phases = [
            Phase::Search,
            Phase::Cases,
            Phase::Curve,
            Phase::Sensitivity,
        ];
        let (largest, requests) = phases
            .into_iter()
            .zip(by_phase)
            .fold((Phase::Search, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        return Err(PlanError::TooMuchWork {
            expected_requests: expected,
            cap: options.max_plan_requests,
            advice: fewer_runs(plan, largest, requests, configurations),
        });
    }
    Ok(())
}

/// The case a share's runs are named by in a refusal.
fn case_name(phase: Phase, m: &Multipliers) -> String {
    match phase {
        Phase::Curve => format!("base at {}x load", m.arrival_rate),
        Phase::Cases => format!(
            "{} demand",
            if m.arrival_rate < 1.0 { "low" } else { "high" }
        ),
        Phase::Sensitivity | Phase::Search => {
            let changed = [
                (SensitivityInput::ArrivalRate, m.arrival_rate),
                (SensitivityInput::BatchSize, m.batch_size),
            ]
            .into_iter()
            .find(|(_, v)| *v != 1.0);
            match changed {
                Some((input, factor)) => format!("{} x{factor}", input.label()),
                None => "base".to_string(),
            }
        }
    }
}

/// Where most of a plan's work goes and the fields that set it.
fn fewer_runs(plan: &PlanParams, phase: Phase, requests: f64, configurations: usize) -> String {
    let share = format!("about {:.0} million of them", requests / 1e6);
    match phase {
        Phase::Search => format!(
            "the capacity searches are {share} ({configurations} configurations, up to {} replications each): \
             pin search dimensions (plan.search) or list fewer candidates (plan.candidates), \
             lower plan.min_replications or plan.replications, or shorten run.horizon_s",
            plan.replications
        ),
        Phase::Cases => format!(
            "low and high demand re-planned are {share}: bring plan.worst's multipliers closer to 1 or shorten run.horizon_s"
        ),
        Phase::Curve => format!(
            "the service curve is {share} ({} loads up to {}x, {} replications each): list fewer or lower loads \
             (plan.service_curve.load_multipliers) or fewer replications (plan.service_curve.replications)",
            plan.service_curve.load_multipliers.len(),
            plan.service_curve
                .load_multipliers
                .iter()
                .fold(0.0f64, |a, &b| a.max(b)),
            plan.service_curve
                .replications
                .unwrap_or(plan.min_replications.clamp(1, plan.replications.max(1)))
        ),
        Phase::Sensitivity => format!(
            "the sensitivity is {share} ({} inputs, {} replications each end): list fewer inputs \
             (plan.sensitivity.inputs) or fewer replications (plan.sensitivity.replications)",
            plan.sensitivity.inputs.len(),
            plan.sensitivity.replications
        ),
    }
}

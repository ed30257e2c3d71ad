//! Fitting the per-operation model's efficiencies to a user's own
//! measurements: step times (the model is a formula of each step's shape)
//! or benchmark points (each point replayed in the engine).
//!
//! # Method
//! Least squares on relative errors: the fit minimises
//! `sum_i ln(model_i / measured_i)^2` over the logarithms of the
//! parameters, each kept within bounds (efficiencies in \[0.001, 1\],
//! seconds in \[1 ns, 1 s\]), by Levenberg-Marquardt with a
//! finite-difference Jacobian and steps clipped to the bounds. It is written
//! here, about a hundred lines, rather than taken from a crate: there are
//! at most eight parameters, so each step solves an 8 x 8 system, and the
//! crates that do it (`levenberg-marquardt` on `nalgebra`, `argmin`) would
//! bring a linear-algebra stack into the page's WebAssembly for that; this
//! one uses only `libm`, so a fit gives the same numbers on every target. A
//! step is kept only if it lowers the sum, so a fit never ends worse than
//! where it started.
//!
//! # Which parameters
//! Only those the data can tell apart. At the starting values the fit
//! measures how each parameter moves the predictions (a Jacobian column)
//! and keeps them in the order of [`KNOBS`], each only if it moves them
//! (root mean square above 1e-4 per unit of log-parameter) and at least 2%
//! of its column is not explained by those kept before it. So the
//! interconnect stays at its default without tensor parallelism, attention's
//! FLOP efficiency without a prefill long enough to be compute-bound, and
//! the all-reduce latency always with step times (every step pays it with
//! the overhead: the two are one constant). The rest keep the values they
//! had (the scenario's, else the accelerator family's defaults); the result
//! says which were fitted.
//!
//! # Work
//! A step-time fit evaluates the formula: with central differences about
//! 17 evaluations per iteration, each one step time per measurement, and
//! at most [`MAX_STEP_FIT_WORK`] step times in all (a 2,000-row fit may
//! make 975 evaluations, about 1.4 s natively at worst; the 2,000 noisy
//! rows tried took 122 and 0.2 s), so the page's fit, on its own thread,
//! cannot run away. A benchmark fit replays every point per evaluation,
//! with forward differences, and stops after `max_evaluations` evaluations
//! ([`BENCHMARK_EVALUATIONS`] by default): the replays use the scenario's
//! seed, so the same input gives the same fit. Its work is bounded twice
//! (see [`MAX_FIT_REQUESTS`](super::MAX_FIT_REQUESTS) and [`MAX_FIT_WORK`]): the requests of
//! every replay it may make, checked before the first, and the work
//! (engine events and requests) of each replay of the set, checked as it runs; together they
//! keep an accepted fit under half a minute natively.

use serde::{Deserialize, Serialize};

use super::fit_budget::{
    MAX_FIT_WORK, MAX_STEP_FIT_WORK, STEP_EVALUATION_OVERHEAD, check_requests, over_work, places,
};
use super::fit_knobs::{KNOBS, Knob};
use super::least_squares::{identifiable, normal_equations, solve_unheld, sum_of_squares};
use super::measurements::{BenchmarkPoint, MeasuredStep, Measurements, Place};
use super::{ReplayError, replay_within};
use crate::error::Checker;
use crate::model::scenario::Scenario;
use crate::model::step_time::{Family, StepTimeModel};
use crate::params::step_time::{FitRecord, FittedPoint};
use crate::params::{OperationsParams, ScenarioParams, StepTimeParams};
use crate::sim::RunError;

/// Whole-set evaluations a benchmark fit makes at most by default (each
/// replays every point once).
pub const BENCHMARK_EVALUATIONS: u32 = 80;

/// A fitted per-operation model and what it was fitted to (JSON both ways:
/// the page's worker sends it to the page).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitResult {
    /// The model: the fitted fields set, the others as the scenario had
    /// them; its `fit` holds the record (the points and their errors).
    pub operations: OperationsParams,
    /// Every parameter, fitted or kept.
    pub parameters: Vec<FittedParameter>,
    /// Times the model was evaluated on the whole set.
    pub evaluations: u32,
    /// Root mean square of ln(model / measured) with the starting values.
    pub rms_log_error_before: f64,
    /// The same with the fitted values.
    pub rms_log_error_after: f64,
}

/// One parameter of the per-operation model in a fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedParameter {
    /// Its field in the scenario's `step_time`.
    pub field: String,
    pub before: f64,
    pub after: f64,
    /// Whether the fit set it (else the data could not tell it apart).
    pub fitted: bool,
    /// Whether the fitted value is at a bound (an efficiency of 1, or
    /// 0.001; a time of 1 ns or 1 s): the data ask for more than the model
    /// allows, and the other parameters, or the model's shape, are off.
    pub at_bound: bool,
}

impl FitResult {
    /// Each measured figure with the model's value before and after.
    pub fn points(&self) -> &[FittedPoint] {
        self.operations.fit.as_ref().map_or(&[], |r| &r.points)
    }

    /// Writes the fitted model into `params` (the record goes with it).
    pub fn apply(&self, params: &mut ScenarioParams) {
        params.step_time = StepTimeParams::Operations(self.operations.clone());
    }
}

/// Fits the per-operation model of `params` to `measurements` (benchmark
/// points within [`BENCHMARK_EVALUATIONS`]); a table is not fitted.
pub fn fit(params: &ScenarioParams, measurements: &Measurements) -> Result<FitResult, String> {
    fit_with_progress(params, measurements, &mut |_, _| {})
}

/// [`fit`], telling `progress` after each replay of the set of benchmark
/// points how many replays it has made and the most it may make (`(done,
/// most)`; a fit that converges stops before `most`). A step-time fit, a
/// matter of milliseconds, tells nothing.
pub fn fit_with_progress(
    params: &ScenarioParams,
    measurements: &Measurements,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<FitResult, String> {
    match measurements {
        Measurements::StepTimes(steps) => fit_step_times(params, steps),
        Measurements::Benchmarks(points) => {
            fit_benchmarks(params, points, BENCHMARK_EVALUATIONS, progress)
        }
        Measurements::Table(_) => Err(
            "a measured table is the step-time model itself: use it as it is, there is nothing to fit"
                .into(),
        ),
    }
}

/// Fits the per-operation model of `params` to measured step times.
pub fn fit_step_times(
    params: &ScenarioParams,
    steps: &[MeasuredStep],
) -> Result<FitResult, String> {
    let shapes: Vec<_> = steps.iter().map(MeasuredStep::shape).collect();
    let mut scenario = params.clone();
    let mut predict = |operations: &OperationsParams| {
        scenario.step_time = StepTimeParams::Operations(operations.clone());
        let model = StepTimeModel::build(&scenario, &mut Checker::new())
            .ok_or("the step-time model is invalid")?;
        Ok(shapes.iter().map(|shape| model.step_s(shape)).collect())
    };
    let measured = steps
        .iter()
        .enumerate()
        .map(|(i, s)| Measured {
            point: s.label(),
            figure: "step [s]",
            place: Place::or_item(&s.place, "step_times", i).column("step_s"),
            value: s.step_s,
        })
        .collect();
    run(
        params,
        "step times",
        measured,
        &mut predict,
        &step_time_search(steps.len()),
    )
}

/// How a step-time fit of `rows` measurements searches: central
/// differences, within [`MAX_STEP_FIT_WORK`].
fn step_time_search(rows: usize) -> Search {
    let per_evaluation = rows as u64 + STEP_EVALUATION_OVERHEAD;
    Search {
        step: 1e-6,
        central: true,
        max_evaluations: (MAX_STEP_FIT_WORK / per_evaluation).min(50_000) as u32,
    }
}

/// Fits the per-operation model of `params` to benchmark points, each
/// replayed on one replica of the scenario's configuration, within
/// `max_evaluations` replays of the whole set; refused before the first if
/// they could simulate more than [`MAX_FIT_REQUESTS`](super::MAX_FIT_REQUESTS) requests, and as they
/// run if one replay of the set takes more than its share of
/// [`MAX_FIT_WORK`]; `progress` as [`fit_with_progress`]'s.
pub fn fit_benchmarks(
    params: &ScenarioParams,
    points: &[BenchmarkPoint],
    max_evaluations: u32,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<FitResult, String> {
    let places = places(points);
    let search = benchmark_search(max_evaluations);
    let most = search.most_evaluations();
    check_requests(points, &places, most)?;
    let per_set = MAX_FIT_WORK / u64::from(most);
    let scenarios: Vec<ScenarioParams> = points.iter().map(|p| p.scenario(params)).collect();
    let mut replays = 0;
    let mut predict = |operations: &OperationsParams| {
        let mut predicted = Vec::new();
        let mut work = 0;
        for ((point, place), scenario) in points.iter().zip(&places).zip(&scenarios) {
            let mut scenario = scenario.clone();
            scenario.step_time = StepTimeParams::Operations(operations.clone());
            let run =
                replay_within(scenario, per_set.saturating_sub(work)).map_err(|e| match e {
                    ReplayError::Run(RunError::TooMuchWork { .. }) => {
                        over_work(place, per_set, most)
                    }
                    other => format!("{place}: replaying this point: {other}"),
                })?;
            work += run.work;
            predicted.extend(point.figures().iter().map(|(figure, _)| figure.of(&run)));
        }
        replays += 1;
        progress(replays, most);
        Ok(predicted)
    };
    let measured = points
        .iter()
        .zip(&places)
        .flat_map(|(p, place)| {
            p.figures()
                .into_iter()
                .map(move |(figure, value)| Measured {
                    point: p.label(),
                    figure: figure.label(),
                    place: place.column(figure.column()),
                    value,
                })
        })
        .collect();
    run(params, "benchmark points", measured, &mut predict, &search)
}

/// Whether a benchmark fit of `points` (as [`fit`] makes it) is within
/// [`MAX_FIT_REQUESTS`](super::MAX_FIT_REQUESTS), or why not: a check of microseconds, before any
/// replay.
pub fn check_benchmark_budget(points: &[BenchmarkPoint]) -> Result<(), String> {
    let most = benchmark_search(BENCHMARK_EVALUATIONS).most_evaluations();
    check_requests(points, &places(points), most)
}

/// How a benchmark fit searches: forward differences (each evaluation
/// replays every point), within `max_evaluations`.
fn benchmark_search(max_evaluations: u32) -> Search {
    Search {
        step: 1e-3,
        central: false,
        max_evaluations,
    }
}

/// One measured figure.
struct Measured {
    /// The point or step in words, for the record's table.
    point: String,
    /// The figure with its unit.
    figure: &'static str,
    /// Its row and column in the file (or its JSON path), for errors.
    place: String,
    value: f64,
}

/// The model's values for every measured figure, with the given parameters.
type Predict<'a> = dyn FnMut(&OperationsParams) -> Result<Vec<f64>, String> + 'a;

/// How the fit probes and how long it may search.
struct Search {
    /// Finite-difference step in log-parameter.
    step: f64,
    /// Central differences (two evaluations per parameter) or forward.
    central: bool,
    max_evaluations: u32,
}

impl Search {
    /// The most evaluations a fit makes: `max_evaluations`, but at least
    /// the first evaluation and the first Jacobian over every parameter
    /// ([`minimise`] starts no Jacobian and tries no step past
    /// `max_evaluations`).
    fn most_evaluations(&self) -> u32 {
        let per_parameter = if self.central { 2 } else { 1 };
        self.max_evaluations
            .max(1 + per_parameter * KNOBS.len() as u32)
    }
}

/// A sum of squared log errors this small is an exact fit.
const EXACT: f64 = 1e-28;

/// The model's values at one point of the search, and their log errors.
#[derive(Clone)]
struct Evaluation {
    predicted: Vec<f64>,
    residuals: Vec<f64>,
}

/// The least-squares problem: the model's predictions for a point of the
/// search, and the measurements.
struct Problem<'a, 'p> {
    predict: &'a mut Predict<'p>,
    /// The starting model (the parameters not fitted keep its values).
    base: OperationsParams,
    measured: Vec<f64>,
    /// Where each measured figure is, for errors.
    places: Vec<String>,
    evaluations: u32,
}

impl Problem<'_, '_> {
    /// The model with the parameters `free` at exp(`logs`).
    fn operations(&self, free: &[usize], logs: &[f64]) -> OperationsParams {
        let mut operations = self.base.clone();
        for (&k, &log) in free.iter().zip(logs) {
            *(KNOBS[k].slot)(&mut operations) = Some(libm::exp(log));
        }
        operations
    }

    /// The model's value and ln(model / measured) of every figure, or why
    /// there is none.
    fn evaluate(&mut self, operations: &OperationsParams) -> Result<Evaluation, String> {
        self.evaluations += 1;
        let predicted = (self.predict)(operations)?;
        let residuals = predicted
            .iter()
            .zip(&self.measured)
            .zip(&self.places)
            .map(|((p, m), place)| {
                if p.is_finite() && *p > 0.0 {
                    Ok(libm::log(p / m))
                } else {
                    Err(format!("{place}: the model gives {p} for the measured {m}"))
                }
            })
            .collect::<Result<_, String>>()?;
        Ok(Evaluation {
            predicted,
            residuals,
        })
    }

    /// The evaluation at a point of the search, or why the model has none
    /// there (a step there is then refused).
    fn at(&mut self, free: &[usize], logs: &[f64]) -> Result<Evaluation, String> {
        let operations = self.operations(free, logs);
        self.evaluate(&operations)
    }

    /// d residuals / d log-parameter for each of `free`, by finite
    /// differences around `logs` (where the residuals are `r`).
    fn jacobian(
        &mut self,
        free: &[usize],
        logs: &[f64],
        r: &[f64],
        search: &Search,
    ) -> Result<Vec<Vec<f64>>, String> {
        let mut columns = Vec::with_capacity(free.len());
        for (c, &k) in free.iter().enumerate() {
            let (lo, hi) = KNOBS[k].bounds();
            let x = logs[c];
            let (a, b) = if search.central {
                ((x - search.step).max(lo), (x + search.step).min(hi))
            } else if x + search.step <= hi {
                (x, x + search.step)
            } else {
                (x - search.step, x)
            };
            let mut at = |value: f64| {
                if value == x {
                    return Ok(r.to_vec());
                }
                let mut moved = logs.to_vec();
                moved[c] = value;
                self.at(free, &moved).map(|e| e.residuals)
            };
            let (ra, rb) = (at(a)?, at(b)?);
            columns.push(ra.iter().zip(&rb).map(|(p, q)| (q - p) / (b - a)).collect());
        }
        Ok(columns)
    }
}

/// Runs the fit from `params`' operations values (the family's defaults
/// where it has none) and records it.
fn run(
    params: &ScenarioParams,
    data: &str,
    measured: Vec<Measured>,
    predict: &mut Predict,
    search: &Search,
) -> Result<FitResult, String> {
    let mut base = match &params.step_time {
        StepTimeParams::Operations(o) => o.clone(),
        _ => OperationsParams::default(),
    };
    base.fit = None;
    let mut checked = params.clone();
    checked.step_time = StepTimeParams::Operations(base.clone());
    Scenario::try_from(checked).map_err(|e| format!("the scenario is invalid: {e}"))?;

    let defaults = Family::of(&params.hardware.name).defaults();
    let start: Vec<f64> = KNOBS
        .iter()
        .map(|knob| {
            let value = (knob.slot)(&mut base.clone()).unwrap_or((knob.default)(&defaults));
            let (lo, hi) = knob.bounds();
            libm::log(value.max(f64::MIN_POSITIVE)).clamp(lo, hi)
        })
        .collect();
    let mut problem = Problem {
        predict,
        base: base.clone(),
        measured: measured.iter().map(|m| m.value).collect(),
        places: measured.iter().map(|m| m.place.clone()).collect(),
        evaluations: 0,
    };
    let before = problem.evaluate(&base)?;
    let all: Vec<usize> = (0..KNOBS.len()).collect();
    let columns = problem
        .jacobian(&all, &start, &before.residuals, search)
        .map_err(|e| format!("near the starting values: {e}"))?;
    let free = identifiable(&columns, measured.len());
    let logs: Vec<f64> = free.iter().map(|&k| start[k]).collect();
    let (logs, after) = minimise(&mut problem, &free, logs, before.clone(), search);

    let operations = problem.operations(&free, &logs);
    let value = |operations: &OperationsParams, knob: &Knob| {
        (knob.slot)(&mut operations.clone()).unwrap_or((knob.default)(&defaults))
    };
    let parameters = KNOBS
        .iter()
        .enumerate()
        .map(|(k, knob)| FittedParameter {
            field: knob.field.to_string(),
            before: value(&base, knob),
            after: value(&operations, knob),
            fitted: free.contains(&k),
            at_bound: free
                .iter()
                .zip(&logs)
                .any(|(&f, &x)| f == k && (x <= knob.bounds().0 || x >= knob.bounds().1)),
        })
        .collect();
    let points = measured
        .into_iter()
        .zip(before.predicted.iter().zip(&after.predicted))
        .map(|(measured, (&before, &after))| FittedPoint {
            point: measured.point,
            figure: measured.figure.to_string(),
            measured: measured.value,
            before,
            after,
        })
        .collect();
    let rms = |r: &[f64]| libm::sqrt(sum_of_squares(r) / r.len().max(1) as f64);
    Ok(FitResult {
        operations: OperationsParams {
            fit: Some(FitRecord {
                data: data.to_string(),
                fitted: free.iter().map(|&k| KNOBS[k].field.to_string()).collect(),
                points,
            }),
            ..operations
        },
        parameters,
        evaluations: problem.evaluations,
        rms_log_error_before: rms(&before.residuals),
        rms_log_error_after: rms(&after.residuals),
    })
}

/// Levenberg-Marquardt from `logs` (evaluated as `current`): each iteration
/// solves `(JᵀJ + λ diag(JᵀJ)) δ = -Jᵀr` for the parameters not held at a
/// bound (a parameter at a bound the gradient pushes past stays there),
/// clips the step to the bounds and keeps it only if the sum of squares
/// falls (λ shrinks tenfold), else retries with λ ten times larger. Stops at
/// an exact fit, when no step helps or a step gains less than a 1e-10th of
/// the sum, or when the next iteration would pass the evaluation budget.
fn minimise(
    problem: &mut Problem,
    free: &[usize],
    mut logs: Vec<f64>,
    mut current: Evaluation,
    search: &Search,
) -> (Vec<f64>, Evaluation) {
    let per_jacobian = (free.len() * if search.central { 2 } else { 1 }) as u32;
    let mut cost = sum_of_squares(&current.residuals);
    let mut damping = 1e-3;
    while !free.is_empty()
        && cost > EXACT
        && problem.evaluations + per_jacobian < search.max_evaluations
    {
        let Ok(jacobian) = problem.jacobian(free, &logs, &current.residuals, search) else {
            break;
        };
        let (normal, gradient) = normal_equations(&jacobian, &current.residuals);
        let held: Vec<bool> = free
            .iter()
            .zip(&logs)
            .zip(&gradient)
            .map(|((&k, &x), &g)| {
                let (lo, hi) = KNOBS[k].bounds();
                (x <= lo && g > 0.0) || (x >= hi && g < 0.0)
            })
            .collect();
        let before = cost;
        while damping < 1e12 && problem.evaluations < search.max_evaluations {
            let trial: Vec<f64> = match solve_unheld(&normal, &gradient, damping, &held) {
                Some(step) => logs
                    .iter()
                    .zip(&step)
                    .zip(free)
                    .map(|((x, d), &k)| {
                        let (lo, hi) = KNOBS[k].bounds();
                        (x + d).clamp(lo, hi)
                    })
                    .collect(),
                None => logs.clone(),
            };
            let accepted = (trial != logs)
                .then(|| problem.at(free, &trial).ok())
                .flatten()
                .filter(|e| sum_of_squares(&e.residuals) < cost);
            if let Some(evaluation) = accepted {
                cost = sum_of_squares(&evaluation.residuals);
                (logs, current) = (trial, evaluation);
                damping = (damping / 10.0).max(1e-12);
                break;
            }
            damping *= 10.0;
        }
        if before - cost <= 1e-10 * before {
            break;
        }
    }
    (logs, current)
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;

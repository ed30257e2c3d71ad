//! The validated scenario: [`Scenario::try_from`] checks a
//! [`ScenarioParams`] once and derives the memory budget and the step-time
//! model; code downstream never re-checks.

use crate::error::{Checker, ScenarioError, show};
use crate::model::analytic::service_alone;
use crate::model::dist::{Dist, JointLengths};
use crate::model::load::{
    Load, check_closed_loops, check_counted_run, check_load, refusals_possible,
};
use crate::model::memory::MemoryBudget;
use crate::model::plan_checks::check_plan;
use crate::model::step_time::StepTimeModel;
pub use crate::params::MAX_HORIZON_S;
use crate::params::{ClassParams, DAY_S, FORMAT_VERSION, ScenarioParams, Schedule};

/// Most request classes in one scenario.
pub const MAX_CLASSES: usize = 64;
/// Most replicas in one cluster.
pub const MAX_REPLICAS: u32 = 4096;
/// Most time-series intervals in one run.
pub const MAX_SERIES_POINTS: usize = 100_000;
/// At most this many replica samples (series points x replicas) in a run:
/// each sample visits every replica.
pub const MAX_REPLICA_SAMPLES: u64 = 20_000_000;

/// A validated class, ready to sample.
#[derive(Clone, Debug)]
pub struct Class {
    /// Batch arrival rate before time-of-day multipliers \[batches/s\].
    pub batch_rate_per_s: f64,
    pub batch_size: Dist,
    /// Multiplier for each hour of the day (all 1 without a profile).
    pub time_of_day: [f64; 24],
    pub input_tokens: Dist,
    pub output_tokens: Dist,
    /// The joint model of both lengths, drawn instead of the two
    /// distributions above when set (`None`: independent).
    pub lengths: Option<JointLengths>,
    pub prefix_cache_hit: f64,
    pub priority: i32,
    pub deadline_s: f64,
    pub timeout_s: Option<f64>,
    pub load: Load,
}

impl Class {
    /// Mean prompt and output lengths \[tokens\]: a table's exact means,
    /// otherwise the two distributions' (a correlation changes neither).
    pub fn mean_lengths(&self) -> (f64, f64) {
        match &self.lengths {
            Some(JointLengths::Pairs(table)) => table.means(),
            _ => (
                self.input_tokens.moments().0,
                self.output_tokens.moments().0,
            ),
        }
    }

    /// The shortest prompt and the shortest output the class can draw
    /// \[tokens\] (with a table, each over the table, not one pair).
    pub fn smallest_lengths(&self) -> (u32, u32) {
        match &self.lengths {
            Some(JointLengths::Pairs(table)) => table.smallest(),
            _ => (self.input_tokens.smallest(), self.output_tokens.smallest()),
        }
    }

    /// One request's (prompt, output) lengths \[tokens\]: from the joint
    /// model with `joint` when set, otherwise the prompt from `inputs` and
    /// the output from `outputs` (so that independent draws are what they
    /// were before joint models existed).
    pub fn sample_lengths<R: rand::Rng + ?Sized>(
        &self,
        inputs: &mut R,
        outputs: &mut R,
        joint: &mut R,
    ) -> (u32, u32) {
        match &self.lengths {
            Some(model) => model.sample(joint),
            None => (
                self.input_tokens.sample(inputs),
                self.output_tokens.sample(outputs),
            ),
        }
    }

    /// Mean batch rate over a whole day, multipliers included \[batches/s\];
    /// zero for offline and closed-loop classes, which offer no rate of
    /// their own (the load estimate counts only rate-driven classes).
    pub fn mean_batch_rate_per_s(&self) -> f64 {
        if !self.load.follows_rate() {
            return 0.0;
        }
        self.batch_rate_per_s * self.time_of_day.iter().sum::<f64>() / 24.0
    }

    /// Batches expected from time 0 (midnight) to `horizon_s`: the rate
    /// times each hour's multiplier, integrated over the horizon (over a
    /// horizon that is not whole days, a day's mean would miss a busy first
    /// hour: a multiplier of 41,083 beside ones of 2 sent three times the
    /// estimate within 458 s, found by `sojourn-fuzz`). Zero for classes
    /// that follow no rate.
    pub fn expected_batches(&self, horizon_s: f64) -> f64 {
        if !self.load.follows_rate() {
            return 0.0;
        }
        const HOUR_S: f64 = 3600.0;
        let day: f64 = self.time_of_day.iter().sum();
        let days = (horizon_s / DAY_S).floor();
        let rest = horizon_s - days * DAY_S;
        let mut hours = 0.0;
        for (h, m) in self.time_of_day.iter().enumerate() {
            let start = h as f64 * HOUR_S;
            hours += m * (rest - start).clamp(0.0, HOUR_S);
        }
        self.batch_rate_per_s * (days * day * HOUR_S + hours)
    }
}

/// A checked scenario with its derived quantities.
#[derive(Clone, Debug)]
pub struct Scenario {
    params: ScenarioParams,
    classes: Vec<Class>,
    memory: MemoryBudget,
    step_time: StepTimeModel,
    drain_s: f64,
}

impl TryFrom<ScenarioParams> for Scenario {
    type Error = ScenarioError;

    fn try_from(params: ScenarioParams) -> Result<Self, ScenarioError> {
        let mut check = Checker::new();
        if params.version == 0 || params.version > FORMAT_VERSION {
            check.fail(
                "version",
                format!(
                    "format version {} is not known to this build (it reads 1 to {FORMAT_VERSION})",
                    params.version
                ),
            );
        }
        let classes = check_classes(&params, &mut check);
        check_engine(&params, &mut check);
        let memory = MemoryBudget::derive(&params, &mut check);
        check.positive("step_time_scale", params.step_time_scale);
        let step_time = check.at("step_time", |c| StepTimeModel::build(&params, c));
        let drain_s = check_run(&params, &mut check);
        check_counted_run(&params, &mut check);
        if let Some(classes) = &classes {
            let longest = memory.as_ref().map(|m| m.max_seq_tokens);
            check_closed_loops(&params, classes, longest, &mut check);
        }
        let built = match (&classes, &step_time, check.has_errors()) {
            (Some(classes), Some(step_time), false) => Some((classes.as_slice(), step_time)),
            _ => None,
        };
        check_plan(&params, built, &mut check);
        check.finish()?;
        match (classes, memory, step_time) {
            (Some(classes), Some(memory), Some(step_time)) => Ok(Scenario {
                params,
                classes,
                memory,
                step_time,
                drain_s,
            }),
            // Every `None` above comes with an error, so this is unreachable;
            // report it as an error rather than panic.
            _ => Err(ScenarioError::single(
                "",
                "internal error: incomplete validation",
            )),
        }
    }
}

impl Scenario {
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

fn check_classes(params: &ScenarioParams, check: &mut Checker) -> Option<Vec<Class>> {
    if params.classes.is_empty() {
        check.fail("classes", "must hold at least one request class");
        return None;
    }
    if params.classes.len() > MAX_CLASSES {
        check.fail(
            "classes",
            format!(
                "at most {MAX_CLASSES} classes, got {}",
                params.classes.len()
            ),
        );
        return None;
    }
    let mut classes = Vec::with_capacity(params.classes.len());
    let mut ok = true;
    for (i, class) in params.classes.iter().enumerate() {
        let built = check.at("classes", |c| {
            c.at(format!("[{i}]"), |c| check_class(class, c))
        });
        match built {
            Some(class) => classes.push(class),
            None => ok = false,
        }
    }
    for (i, a) in params.classes.iter().enumerate() {
        if params.classes[..i].iter().any(|b| b.name == a.name) {
            check.fail(
                &format!("classes[{i}].name"),
                format!("\"{}\" is used by another class", a.name),
            );
            ok = false;
        }
    }
    ok.then_some(classes)
}

fn check_class(class: &ClassParams, check: &mut Checker) -> Option<Class> {
    let before = check.has_errors();
    if class.name.trim().is_empty() {
        check.fail("name", "must not be empty");
    }
    check.non_negative("batches_per_hour", class.batches_per_hour);
    let batch_size = check.at("batch_size", |c| class.batch_size.build(c));
    let input_tokens = check.at("input_tokens", |c| class.input_tokens.build(c));
    let output_tokens = check.at("output_tokens", |c| class.output_tokens.build(c));
    let lengths = match (&class.lengths, &input_tokens, &output_tokens) {
        (Some(lengths), Some(input), Some(output)) => {
            check.at("lengths", |c| lengths.build(input, output, c))
        }
        _ => None,
    };
    let load = check_load(class, check);
    check.within("prefix_cache_hit", class.prefix_cache_hit, 0.0, 1.0);
    check.positive("deadline_s", class.deadline_s);
    if let Some(t) = class.timeout_s {
        check.positive("timeout_s", t);
    }
    let mut time_of_day = [1.0; 24];
    if let Some(profile) = &class.time_of_day {
        if profile.len() != 24 {
            check.fail(
                "time_of_day",
                format!("must have 24 hourly multipliers, got {}", profile.len()),
            );
        } else {
            for (h, m) in profile.iter().enumerate() {
                check.non_negative(&format!("time_of_day[{h}]"), *m);
                time_of_day[h] = *m;
            }
            if profile.iter().all(|m| *m == 0.0) {
                check.fail("time_of_day", "must not be zero in every hour");
            }
        }
    }
    if check.has_errors() != before {
        return None;
    }
    Some(Class {
        batch_rate_per_s: class.batches_per_hour / 3600.0,
        batch_size: batch_size?,
        time_of_day,
        input_tokens: input_tokens?,
        output_tokens: output_tokens?,
        lengths,
        prefix_cache_hit: class.prefix_cache_hit,
        priority: class.priority,
        deadline_s: class.deadline_s,
        timeout_s: class.timeout_s,
        load: load?,
    })
}

pub(crate) fn check_engine(params: &ScenarioParams, check: &mut Checker) {
    let e = &params.engine;
    check.at("engine", |c| {
        c.at_least("max_num_seqs", e.max_num_seqs as u64, 1);
        c.at_least("max_num_batched_tokens", e.max_num_batched_tokens as u64, 1);
        if e.max_num_batched_tokens < e.max_num_seqs {
            c.fail(
                "max_num_batched_tokens",
                format!(
                    "must be at least max_num_seqs ({}) so that every running sequence can decode each step, got {}",
                    e.max_num_seqs, e.max_num_batched_tokens
                ),
            );
        }
        if !(1..=1024).contains(&e.block_size) {
            c.fail("block_size", format!("must be between 1 and 1024 tokens, got {}", e.block_size));
        }
        if let Some(m) = e.max_model_len {
            c.at_least("max_model_len", m as u64, 2);
            // vLLM V0 refuses this at start-up without chunked prefill: a
            // sequence of max_model_len tokens could never be scheduled.
            if e.schedule == Schedule::PrefillFirst && e.max_num_batched_tokens < m {
                c.fail(
                    "max_num_batched_tokens",
                    format!(
                        "must be at least max_model_len ({m}) under the prefill_first schedule, which runs every prompt (and every recomputation) whole in one step, got {}; raise it or lower max_model_len",
                        e.max_num_batched_tokens
                    ),
                );
            }
        }
    });
    check.at("cluster", |c| {
        let n = params.cluster.replicas;
        if n == 0 || n > MAX_REPLICAS {
            c.fail(
                "replicas",
                format!("must be between 1 and {MAX_REPLICAS}, got {n}"),
            );
        }
    });
}

fn check_run(params: &ScenarioParams, check: &mut Checker) -> f64 {
    let r = &params.run;
    check.at("run", |c| {
        if c.positive("horizon_s", r.horizon_s) && r.horizon_s > MAX_HORIZON_S {
            c.fail(
                "horizon_s",
                format!("must be at most one year ({MAX_HORIZON_S} s), got {}", show(r.horizon_s)),
            );
        }
        if c.non_negative("warmup_s", r.warmup_s) && r.warmup_s >= r.horizon_s {
            c.fail(
                "warmup_s",
                format!("must be shorter than the horizon ({} s), got {}", show(r.horizon_s), show(r.warmup_s)),
            );
        }
        if let Some(d) = r.drain_s {
            c.non_negative("drain_s", d);
        }
        if c.positive("series_interval_s", r.series_interval_s) {
            // Points over the horizon alone; the drain's are capped as it
            // runs (the series stops at the cap, see docs/engine.md).
            let points = r.horizon_s / r.series_interval_s;
            let replicas = params.cluster.replicas.max(1) as f64;
            let most = (MAX_SERIES_POINTS as f64).min(MAX_REPLICA_SAMPLES as f64 / replicas);
            if points > most {
                c.fail(
                    "series_interval_s",
                    format!(
                        "gives {} samples over the horizon, more than the {} allowed{}; use at least {} s",
                        show(points.ceil()),
                        show(most.floor()),
                        if most < MAX_SERIES_POINTS as f64 {
                            format!(" with {} replicas (each sample visits every replica)", show(replicas))
                        } else {
                            String::new()
                        },
                        show((r.horizon_s / most).ceil())
                    ),
                );
            }
        }
    });
    let longest_deadline = params
        .classes
        .iter()
        .map(|c| c.deadline_s)
        .filter(|d| d.is_finite())
        .fold(0.0, f64::max);
    r.drain_s.unwrap_or(longest_deadline).min(MAX_HORIZON_S)
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;

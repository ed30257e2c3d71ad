//! The plan section's search space: the engine and cluster settings the
//! planner may change beyond replicas and hardware candidates, and one
//! point of that space, a [`Setting`].

use serde::{Deserialize, Serialize};

use crate::params::plan::TargetParams;
use crate::params::{Discipline, EngineParams, Router, ScenarioParams, Schedule};

/// The dimensions of the configuration space beyond replicas and hardware
/// candidates. Each is a list of values to try; absent, the dimension keeps
/// its default: every service discipline is compared, everything else is
/// pinned to the scenario's own setting. One value pins a dimension.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchParams {
    /// Service disciplines; absent: all four.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disciplines: Option<Vec<Discipline>>,
    /// `engine.max_num_seqs` values; absent: the configured one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_seqs: Option<Vec<u32>>,
    /// `engine.max_num_batched_tokens` (the per-step token budget) values;
    /// absent: the configured one, and [`TPOT_TOKEN_BUDGET`] beside it
    /// where [`SearchParams::default_budgets`] says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_batched_tokens: Option<Vec<u32>>,
    /// `engine.max_waiting` (the admission limit m per replica) values;
    /// `null` stands for no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_waiting: Option<Vec<Option<u32>>>,
    /// Routers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routers: Option<Vec<Router>>,
}

/// The service disciplines in the order the planner lists them.
pub const DISCIPLINES: [Discipline; 4] = [
    Discipline::Fcfs,
    Discipline::Priority,
    Discipline::ShortestInputFirst,
    Discipline::EarliestDeadlineFirst,
];

/// The token budget a plan with a time-per-output-token target searches
/// beside the configured one when the budget list is absent: with chunked
/// prefill a long prompt's chunks fill decode steps up to the budget, and
/// a smaller budget shortens those steps (the levers of docs/planner.md,
/// where 2048 is the first tried).
pub const TPOT_TOKEN_BUDGET: u32 = 2048;

/// One point of the configuration space beyond replicas: a candidate's
/// index and the engine and cluster settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    pub discipline: Discipline,
    pub max_num_seqs: u32,
    pub max_num_batched_tokens: u32,
    /// None: no admission limit.
    pub max_waiting: Option<u32>,
    pub router: Router,
}

impl Setting {
    /// The scenario's own setting.
    pub fn of(params: &ScenarioParams) -> Setting {
        Setting {
            discipline: params.engine.discipline,
            max_num_seqs: params.engine.max_num_seqs,
            max_num_batched_tokens: params.engine.max_num_batched_tokens,
            max_waiting: params.engine.max_waiting,
            router: params.cluster.router,
        }
    }

    /// `params` with this setting.
    pub fn apply(&self, params: &mut ScenarioParams) {
        let engine: &mut EngineParams = &mut params.engine;
        engine.discipline = self.discipline;
        engine.max_num_seqs = self.max_num_seqs;
        engine.max_num_batched_tokens = self.max_num_batched_tokens;
        engine.max_waiting = self.max_waiting;
        params.cluster.router = self.router;
    }
}

impl SearchParams {
    /// How many settings [`SearchParams::settings`] lists, counted without
    /// listing them (saturating): a space is checked against its limit
    /// before anything enumerates it. (Listed values are distinct in a
    /// valid scenario; a repeat counts twice here.)
    pub fn count(&self, params: &ScenarioParams) -> usize {
        fn len<T>(listed: Option<&Vec<T>>, default: usize) -> usize {
            listed.map_or(default, Vec::len)
        }
        [
            len(self.disciplines.as_ref(), DISCIPLINES.len()),
            len(self.max_num_seqs.as_ref(), 1),
            len(
                self.max_num_batched_tokens.as_ref(),
                self.default_budgets(params).len(),
            ),
            len(self.max_waiting.as_ref(), 1),
            len(self.routers.as_ref(), 1),
        ]
        .into_iter()
        .fold(1usize, usize::saturating_mul)
    }

    /// Every setting the plan may choose for `params`, the scenario's own
    /// values first in each dimension when they are among those listed (so
    /// that among equally cheap settings the configured one wins).
    pub fn settings(&self, params: &ScenarioParams) -> Vec<Setting> {
        let own = Setting::of(params);
        fn first<T: Clone + PartialEq>(own: &T, listed: Option<&Vec<T>>, all: &[T]) -> Vec<T> {
            let values: Vec<T> = listed.map_or_else(|| all.to_vec(), |v| v.clone());
            let mut out: Vec<T> = values
                .iter()
                .filter(|v| *v == own)
                .take(1)
                .cloned()
                .collect();
            for v in values {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            out
        }
        let disciplines = first(&own.discipline, self.disciplines.as_ref(), &DISCIPLINES);
        let seqs = first(
            &own.max_num_seqs,
            self.max_num_seqs.as_ref(),
            &[own.max_num_seqs],
        );
        let budgets = first(
            &own.max_num_batched_tokens,
            self.max_num_batched_tokens.as_ref(),
            &self.default_budgets(params),
        );
        let waiting = first(
            &own.max_waiting,
            self.max_waiting.as_ref(),
            &[own.max_waiting],
        );
        let routers = first(&own.router, self.routers.as_ref(), &[own.router]);
        let mut out = Vec::new();
        for &discipline in &disciplines {
            for &max_num_seqs in &seqs {
                for &max_num_batched_tokens in &budgets {
                    for &w in &waiting {
                        for &router in &routers {
                            out.push(Setting {
                                discipline,
                                max_num_seqs,
                                max_num_batched_tokens,
                                max_waiting: w,
                                router,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// The token budgets searched when none are listed: the configured one,
    /// and, when the plan has a time-per-output-token target and prefills
    /// are chunked into decode steps (the decode-first schedule),
    /// [`TPOT_TOKEN_BUDGET`] too if it is smaller and still lets every
    /// sequence limit searched decode each step (so it is always a valid
    /// engine).
    pub fn default_budgets(&self, params: &ScenarioParams) -> Vec<u32> {
        let own = params.engine.max_num_batched_tokens;
        let tpot = params
            .plan
            .targets
            .iter()
            .any(|t| matches!(t, TargetParams::TpotPercentile { .. }));
        let most_seqs = self
            .max_num_seqs
            .as_ref()
            .and_then(|v| v.iter().copied().max())
            .unwrap_or(0)
            .max(params.engine.max_num_seqs);
        let smaller = TPOT_TOKEN_BUDGET < own && TPOT_TOKEN_BUDGET >= most_seqs;
        if tpot && smaller && params.engine.schedule == Schedule::DecodeFirst {
            vec![own, TPOT_TOKEN_BUDGET]
        } else {
            vec![own]
        }
    }

    /// The dimensions with more than one value, by name, for messages.
    pub fn open_dimensions(&self, params: &ScenarioParams) -> Vec<&'static str> {
        let settings = self.settings(params);
        let own = Setting::of(params);
        let mut out = Vec::new();
        let mut differ = |name: &'static str, f: &dyn Fn(&Setting, &Setting) -> bool| {
            if settings.iter().any(|s| f(s, &own)) {
                out.push(name);
            }
        };
        differ("discipline", &|a, b| a.discipline != b.discipline);
        differ("max_num_seqs", &|a, b| a.max_num_seqs != b.max_num_seqs);
        differ("max_num_batched_tokens", &|a, b| {
            a.max_num_batched_tokens != b.max_num_batched_tokens
        });
        differ("max_waiting", &|a, b| a.max_waiting != b.max_waiting);
        differ("router", &|a, b| a.router != b.router);
        out
    }
}

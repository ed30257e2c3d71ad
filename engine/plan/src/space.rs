//! The configuration space: every hardware candidate (with its
//! tensor-parallel degree) crossed with every engine and cluster setting the
//! plan section opens (`plan.search`: by default the four service
//! disciplines), each searched over replicas.

use crate::params::plan::{ResolvedCandidate, Setting, resolve_candidates};
use crate::params::{Discipline, Router, ScenarioParams};

/// One point of the space beyond replicas.
#[derive(Clone, Debug)]
pub struct Configuration {
    /// Index into the resolved candidates.
    pub candidate: usize,
    pub setting: Setting,
    /// The scenario's parameters for it (no plan section).
    pub params: ScenarioParams,
    /// "H100 SXM x1, priority" (the candidate, then each setting that
    /// differs from the scenario's own).
    pub label: String,
    /// Every setting is the scenario's own: what a replicas-only planner
    /// would search.
    pub baseline: bool,
}

/// Every configuration, candidate by candidate, each candidate's settings
/// in the order `SearchParams::settings` lists them (the scenario's own
/// first).
pub fn configurations(base: &ScenarioParams) -> (Vec<ResolvedCandidate>, Vec<Configuration>) {
    let candidates = resolve_candidates(base);
    let settings = base.plan.search.settings(base);
    let own = Setting::of(base);
    let mut out = Vec::with_capacity(candidates.len() * settings.len());
    for (c, candidate) in candidates.iter().enumerate() {
        for setting in &settings {
            let mut params = candidate.params.clone();
            setting.apply(&mut params);
            out.push(Configuration {
                candidate: c,
                label: label(&candidate.name, setting, &own, settings.len() > 1),
                baseline: *setting == own,
                setting: setting.clone(),
                params,
            });
        }
    }
    (candidates, out)
}

/// A discipline in words.
pub fn discipline_label(d: Discipline) -> &'static str {
    match d {
        Discipline::Fcfs => "first come, first served",
        Discipline::Priority => "priority",
        Discipline::ShortestInputFirst => "shortest input first",
        Discipline::EarliestDeadlineFirst => "earliest deadline first",
    }
}

/// A discipline's short name, as tables show it.
pub fn discipline_short(d: Discipline) -> &'static str {
    match d {
        Discipline::Fcfs => "FCFS",
        Discipline::Priority => "priority",
        Discipline::ShortestInputFirst => "SIF",
        Discipline::EarliestDeadlineFirst => "EDF",
    }
}

/// A router in words.
pub fn router_label(r: Router) -> &'static str {
    match r {
        Router::RoundRobin => "round robin",
        Router::JoinShortestQueue => "join shortest queue",
        Router::LeastKvLoad => "least KV load",
    }
}

/// The settings of `setting` that differ from `own`, in words, e.g.
/// ["priority", "max_num_seqs 128"] (the discipline always, when the
/// discipline is searched).
pub fn differences(setting: &Setting, own: &Setting, discipline_always: bool) -> Vec<String> {
    let mut out = Vec::new();
    if discipline_always || setting.discipline != own.discipline {
        out.push(discipline_short(setting.discipline).to_string());
    }
    if setting.max_num_seqs != own.max_num_seqs {
        out.push(format!("max_num_seqs {}", setting.max_num_seqs));
    }
    if setting.max_num_batched_tokens != own.max_num_batched_tokens {
        out.push(format!("token budget {}", setting.max_num_batched_tokens));
    }
    if setting.max_waiting != own.max_waiting {
        out.push(match setting.max_waiting {
            Some(m) => format!("admission limit {m}"),
            None => "no admission limit".to_string(),
        });
    }
    if setting.router != own.router {
        out.push(router_label(setting.router).to_string());
    }
    out
}

fn label(candidate: &str, setting: &Setting, own: &Setting, searched: bool) -> String {
    let parts = differences(setting, own, searched);
    if parts.is_empty() {
        candidate.to_string()
    } else {
        format!("{candidate}, {}", parts.join(", "))
    }
}

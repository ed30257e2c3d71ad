//! How a plan explains itself: every configuration's search, the decision
//! rule in words, the frontier of cost against the worst target's margin
//! of what was explored,
//! what the search saved, and what made the difference against the
//! scenario's own settings.

use crate::cost::{self, FleetCost};
use crate::curve::judged_ratio;
use crate::diagnose;
use crate::evaluate::{CheckMetric, Evaluation};
use crate::explore::Exploration;
use crate::format::{format_percent_whole, format_usd};
use crate::params::plan::{DecisionRule, Multipliers, Setting};
use crate::result::{
    ConfigurationResult, ExploredPoint, PlanResult, SearchDimension, SearchEffort, SearchResult,
    SearchStatus,
};
use crate::runner::{Halt, Runner};
use crate::space::{differences, discipline_label, discipline_short, router_label};

/// The plan's result before its phases fill it: the targets, the rule, the
/// space, every configuration's search and the frontier.
pub(super) fn skeleton(runner: &mut Runner, base: &Exploration) -> PlanResult {
    let params = runner.base.params();
    let plan = &params.plan;
    let configurations: Vec<ConfigurationResult> = base
        .configs
        .iter()
        .zip(&base.searches)
        .map(|(&c, search)| {
            let config = &runner.configs[c];
            let candidate = &runner.candidates[config.candidate];
            ConfigurationResult {
                name: config.label.clone(),
                candidate: candidate.name.clone(),
                hardware: candidate.params.hardware.name.clone(),
                gpus_per_replica: candidate.params.replica.gpus_per_replica,
                usd_per_gpu_hour: candidate.usd_per_gpu_hour,
                pricing_model: candidate.pricing_model,
                discipline: config.setting.discipline,
                max_num_seqs: config.setting.max_num_seqs,
                max_num_batched_tokens: config.setting.max_num_batched_tokens,
                max_waiting: config.setting.max_waiting,
                router: config.setting.router,
                baseline: config.baseline,
                search: search.clone(),
            }
        })
        .collect();
    let explored = explored_points(runner, base);
    let simulations: u64 = base.searches.iter().map(|s| s.simulations).sum();
    let probes = 32 - plan.max_replicas.leading_zeros() as u64 + 1;
    let plain = configurations.len() as u64 * probes * plan.replications as u64;
    PlanResult {
        scenario_name: params.name.clone(),
        model: params.model.name.clone(),
        success_criterion: cost::success_criterion(params),
        targets: runner
            .checks
            .iter()
            .map(|c| c.description.clone())
            .collect(),
        replications: plan.replications,
        min_replications: runner.min_replications(),
        decision: plan.decision,
        decision_rule: decision_rule(plan.decision, runner.min_replications(), plan.replications),
        search_space: search_space(runner),
        runner_ups: base.runner_ups.iter().map(|&i| base.configs[i]).collect(),
        chosen: base.best_config(),
        baseline: None,
        explanation: String::new(),
        configurations,
        explored,
        recommendation: None,
        binding: None,
        unattainable: None,
        configured: None,
        configured_not_judged: None,
        scenarios: Vec::new(),
        worst_case_cover: None,
        service_curve: None,
        sensitivity: None,
        analytic: None,
        simulations: 0,
        simulated_requests: 0,
        search_effort: SearchEffort {
            configurations: base.configs.len() as u32,
            pruned: base.pruned(),
            simulations,
            plain_simulations: plain,
            saved: plain.saturating_sub(simulations),
        },
        warnings: Vec::new(),
    }
}

/// Shows the searches of the scenario's own settings as the baseline
/// exploration ran them (the whole space's search may have pruned them
/// early), with their fleets among the explored points and their runs in
/// the effort.
pub(super) fn merge_baseline(runner: &mut Runner, result: &mut PlanResult, baseline: &Exploration) {
    for (&c, search) in baseline.configs.iter().zip(&baseline.searches) {
        let old = std::mem::replace(&mut result.configurations[c].search, search.clone());
        result.search_effort.simulations += search.simulations.saturating_sub(old.simulations);
    }
    let effort = &mut result.search_effort;
    effort.saved = effort.plain_simulations.saturating_sub(effort.simulations);
    result
        .explored
        .retain(|p| !baseline.configs.contains(&p.configuration));
    result.explored.extend(explored_points(runner, baseline));
    mark_frontier(&mut result.explored);
}

/// The decision rule in words.
pub(super) fn decision_rule(rule: DecisionRule, min: u32, max: u32) -> String {
    match rule {
        DecisionRule::Upper95 => format!(
            "A target is met when the upper end of its 95% interval is within it (Student's t over the replications; for P(miss) at least the exact Clopper-Pearson bound of the misses pooled over them, so no misses still bound it above zero); not met when the lower end is beyond it, or when the share of requests over the bound (the deadline for P(miss)), pooled over every replication's requests, is beyond the share the target allows (1 - q for a q-th percentile) by its exact 95% interval at the sample size the requests' bursts leave; uncertain otherwise. Each fleet starts with {min} replications and doubles them, up to {max}, while a target is uncertain; one still uncertain at {max} counts as not met. The cheapest fleet whose every target is met is chosen."
        ),
        DecisionRule::Mean => format!(
            "A target is met when the mean over the replications ({min} to {max}) is within it: a point estimate, with no allowance for chance (set the decision to upper95 to decide on the 95% bound). The cheapest fleet whose every target is met is chosen."
        ),
    }
}

/// The searched dimensions and their values.
fn search_space(runner: &Runner) -> Vec<SearchDimension> {
    let mut dims = vec![SearchDimension {
        name: "hardware and GPUs per replica".to_string(),
        values: runner.candidates.iter().map(|c| c.name.clone()).collect(),
    }];
    let settings: Vec<&Setting> = runner
        .configs
        .iter()
        .filter(|c| c.candidate == 0)
        .map(|c| &c.setting)
        .collect();
    let mut dim = |name: &str, f: &dyn Fn(&Setting) -> String| {
        let mut values: Vec<String> = Vec::new();
        for s in &settings {
            let v = f(s);
            if !values.contains(&v) {
                values.push(v);
            }
        }
        dims.push(SearchDimension {
            name: name.to_string(),
            values,
        });
    };
    dim("service discipline", &|s| {
        discipline_label(s.discipline).to_string()
    });
    dim("max_num_seqs", &|s| s.max_num_seqs.to_string());
    dim("token budget per step", &|s| {
        s.max_num_batched_tokens.to_string()
    });
    dim("admission limit per replica", &|s| {
        s.max_waiting.map_or("none".to_string(), |m| m.to_string())
    });
    dim("router", &|s| router_label(s.router).to_string());
    let plan = &runner.base.params().plan;
    dims.push(SearchDimension {
        name: "replicas".to_string(),
        values: vec![format!("1 to {}", plan.max_replicas)],
    });
    dims
}

/// Every decided fleet of the base searches (the most replications per
/// fleet), with the frontier marked.
fn explored_points(runner: &mut Runner, base: &Exploration) -> Vec<ExploredPoint> {
    let min = runner.min_replications();
    let reserve = runner.reserve_replicas();
    let mut out: Vec<ExploredPoint> = Vec::new();
    let mut cases = Vec::new();
    for (&c, search) in base.configs.iter().zip(&base.searches) {
        let Ok(case) = runner.case(c, Multipliers::BASE, "expected demand") else {
            continue;
        };
        let mut decided: Vec<&Evaluation> = search
            .evaluations
            .iter()
            .chain(&search.at_answer)
            .filter(|e| e.replications >= min)
            .collect();
        decided.sort_by_key(|e| (e.replicas, std::cmp::Reverse(e.replications)));
        decided.dedup_by_key(|e| e.replicas);
        for e in decided {
            let classes = runner.class_intervals(case, e.replicas, e.replications);
            let p_miss = classes.iter().map(|k| k.p_miss.mean).fold(0.0, f64::max);
            let p_miss_upper = e
                .checks
                .iter()
                .filter(|k| k.metric == CheckMetric::MissProbability)
                .map(|k| k.bounds[1])
                .fold(p_miss, f64::max);
            let worst_check = e
                .checks
                .iter()
                .map(|k| (judged_ratio(k), k))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, k)| k.description.clone());
            let basis = runner.basis(case);
            let fleet = FleetCost::new(&basis, e.replicas, reserve, 1.0);
            out.push(ExploredPoint {
                configuration: c,
                replicas: e.replicas,
                total_gpus: fleet.gpus,
                usd_per_month: fleet.usd_per_month,
                p_miss,
                p_miss_upper,
                worst_ratio: e.worst_ratio,
                worst_check,
                replications: e.replications,
                verdict: e.verdict,
                on_frontier: false,
                cost: None,
            });
            cases.push(case);
        }
    }
    // Only the frontier is priced: a point dominated here stays dominated
    // when the baseline's points join (`merge_baseline`).
    mark_frontier(&mut out);
    for (p, &case) in out.iter_mut().zip(&cases) {
        if p.on_frontier {
            p.cost = Some(runner.cost_summary(case, p.replicas, p.replications));
        }
    }
    out
}

/// Marks the points no other point beats on both cost and the worst
/// target's margin (`worst_ratio`, so that a latency target that binds
/// counts as much as P(miss)): sorted by cost, a point is on the frontier
/// when its ratio is below every cheaper point's. The chosen fleet is on
/// it, since every cheaper fleet fails a target (ratio above 1) and it
/// meets them all. Only the frontier keeps its full cost (more points only
/// take points off the frontier, so none needs it back).
fn mark_frontier(points: &mut [ExploredPoint]) {
    for p in points.iter_mut() {
        p.on_frontier = false;
    }
    let cost = |p: &ExploredPoint| p.usd_per_month.unwrap_or(p.total_gpus as f64);
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| {
        cost(&points[a])
            .total_cmp(&cost(&points[b]))
            .then(points[a].worst_ratio.total_cmp(&points[b].worst_ratio))
    });
    let mut lowest = f64::INFINITY;
    for i in order {
        if points[i].worst_ratio < lowest {
            points[i].on_frontier = true;
            lowest = points[i].worst_ratio;
        }
    }
    for p in points.iter_mut().filter(|p| !p.on_frontier) {
        p.cost = None;
    }
}

/// Why no configuration meets the targets, said once: each check no fleet
/// can meet (on the configuration that comes closest to it, see
/// `diagnose.rs`), then, when some configuration is not ruled out that way,
/// how close its search came.
pub(super) fn unattainable_reason(runner: &mut Runner, base: &Exploration) -> Result<String, Halt> {
    // (check, lowest floor, its candidate, candidates ruled out).
    let mut diagnosed: Vec<(usize, f64, String, Vec<String>)> = Vec::new();
    let mut closest: Option<&SearchResult> = None;
    let ratio = |s: &SearchResult| {
        s.at_answer
            .as_ref()
            .map_or(f64::INFINITY, |e| e.worst_ratio)
    };
    for (&c, search) in base.configs.iter().zip(&base.searches) {
        if search.status != SearchStatus::Unattainable {
            continue;
        }
        let case = runner.case(c, Multipliers::BASE, "expected demand")?;
        match runner.unreachable(case) {
            Some(u) => match diagnosed.iter_mut().find(|d| d.0 == u.check) {
                Some(d) => {
                    if !d.3.contains(&search.candidate) {
                        d.3.push(search.candidate.clone());
                    }
                    if u.floor < d.1 {
                        d.1 = u.floor;
                        d.2 = search.candidate.clone();
                    }
                }
                None => diagnosed.push((
                    u.check,
                    u.floor,
                    search.candidate.clone(),
                    vec![search.candidate.clone()],
                )),
            },
            None if closest.is_none_or(|s| ratio(search) < ratio(s)) => closest = Some(search),
            None => {}
        }
    }
    let mut sentences: Vec<String> = diagnosed
        .iter()
        .map(|(check, floor, candidate, candidates)| {
            let spec = &runner.checks[*check];
            let fastest = if candidates.len() > 1 {
                ", the fastest of the hardware searched"
            } else {
                ""
            };
            format!(
                "No fleet can meet {}: {}{fastest}; more replicas shorten queues, not steps.",
                spec.description,
                diagnose::fastest_phrase(spec, *floor, candidate)
            )
        })
        .collect();
    if let Some(search) = closest {
        sentences.push(format!(
            "With {}, {}.",
            search.configuration, search.message
        ));
    }
    if sentences.is_empty() {
        sentences.push(format!(
            "No configuration meets every target with up to {} replicas.",
            runner.base.params().plan.max_replicas
        ));
    }
    Ok(sentences.join(" "))
}

/// Fills in the baseline and the explanation: what made the difference
/// between the chosen configuration and the cheapest with the scenario's own
/// settings (`baseline`: its index and search, or `None` when none meets).
pub(super) fn explain(
    runner: &Runner,
    result: &mut PlanResult,
    chosen: usize,
    baseline: Option<(usize, SearchResult)>,
) {
    result.baseline = baseline.as_ref().map(|(b, _)| *b);
    let reserve = runner.reserve_replicas();
    let chosen_search = &result.configurations[chosen].search;
    let n = chosen_search.found.unwrap_or(0);
    let config = &runner.configs[chosen];
    let fleet = |n: u32, label: &str| format!("{n} + {reserve} replicas of {label}");
    let own = Setting::of(runner.base.params());
    let change = describe_change(runner, chosen, &own);
    result.explanation = match baseline {
        Some((b, _)) if b == chosen => {
            if runner.configs.len() > 1 {
                format!(
                    "The scenario's own engine settings (discipline, sequence and token limits, admission limit, router) are already the cheapest: {}; no other setting searched is cheaper on any hardware.",
                    fleet(n, &config.label)
                )
            } else {
                format!("{} meet every target.", fleet(n, &config.label))
            }
        }
        None => format!(
            "{change} makes the targets reachable: {}; with the scenario's own settings no fleet up to {} replicas meets them.",
            fleet(n, &config.label),
            runner.base.params().plan.max_replicas
        ),
        Some((b, search)) => {
            let nb = search.found.unwrap_or(0);
            // A class is protected from the others: with one class there
            // is nothing to protect it from.
            let several = runner.base.params().classes.len() > 1;
            let binding = binding_class(&search).filter(|_| several);
            let what = match binding {
                Some(class) => format!("{change} protects the {class} class"),
                None => format!("{change} needs fewer replicas"),
            };
            let saving = match (
                chosen_search
                    .cost
                    .as_ref()
                    .and_then(|c| c.fleet.usd_per_month),
                search.cost.as_ref().and_then(|c| c.fleet.usd_per_month),
            ) {
                (Some(a), Some(bb)) if bb > a => format!(
                    ", saving {} per month ({} less)",
                    format_usd(bb - a),
                    format_percent_whole((bb - a) / bb)
                ),
                (Some(a), Some(bb)) => format!(", at {} more per month", format_usd(a - bb)),
                _ => String::new(),
            };
            format!(
                "{what}: {} instead of {} with the scenario's own settings (the smallest fleets meeting every target){saving}.",
                fleet(n, &config.label),
                fleet(nb, &runner.configs[b].label)
            )
        }
    };
}

/// The explanation when `plan.search` leaves the scenario's own settings
/// out of the space: the chosen fleet, and which of its own values the
/// search left out (so no fleet with them was searched to compare with).
pub(super) fn explain_without_baseline(runner: &Runner, result: &mut PlanResult, chosen: usize) {
    let params = runner.base.params();
    let own = Setting::of(params);
    let settings = params.plan.search.settings(params);
    // A dimension is left out when no setting of the space has its own value.
    let left_out = |same: &dyn Fn(&Setting) -> bool| !settings.iter().any(same);
    let waiting = own
        .max_waiting
        .map_or("none".to_string(), |m| m.to_string());
    let out: Vec<String> = [
        (
            left_out(&|s| s.discipline == own.discipline),
            format!("discipline ({})", discipline_label(own.discipline)),
        ),
        (
            left_out(&|s| s.max_num_seqs == own.max_num_seqs),
            format!("max_num_seqs ({})", own.max_num_seqs),
        ),
        (
            left_out(&|s| s.max_num_batched_tokens == own.max_num_batched_tokens),
            format!("token budget ({})", own.max_num_batched_tokens),
        ),
        (
            left_out(&|s| s.max_waiting == own.max_waiting),
            format!("admission limit ({waiting})"),
        ),
        (
            left_out(&|s| s.router == own.router),
            format!("router ({})", router_label(own.router)),
        ),
    ]
    .into_iter()
    .filter_map(|(out, what)| out.then_some(what))
    .collect();
    let n = result.configurations[chosen].search.found.unwrap_or(0);
    result.explanation = format!(
        "{} + {} replicas of {} meet every target. The search leaves out the scenario's own {}, so no fleet with its own settings was searched to compare with.",
        n,
        runner.reserve_replicas(),
        runner.configs[chosen].label,
        out.join(" and ")
    );
}

/// "Priority scheduling", "Earliest deadline first scheduling with
/// max_num_seqs 128", "H200 SXM x1": what the chosen configuration changes.
fn describe_change(runner: &Runner, chosen: usize, own: &Setting) -> String {
    let config = &runner.configs[chosen];
    let mut parts = Vec::new();
    if config.setting.discipline != own.discipline {
        let mut d = format!("{} scheduling", discipline_label(config.setting.discipline));
        if let Some(first) = d.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        parts.push(d);
    }
    let rest: Vec<String> = differences(&config.setting, own, false)
        .into_iter()
        .filter(|d| d != discipline_short(config.setting.discipline))
        .collect();
    parts.extend(rest);
    if parts.is_empty() {
        return runner.candidates[config.candidate].name.clone();
    }
    parts.join(" with ")
}

/// The class of the check that held the baseline back: the worst check of
/// its last failing decided evaluation (or of its first, when none failed).
fn binding_class(search: &SearchResult) -> Option<String> {
    let failing = search
        .evaluations
        .iter()
        .filter(|e| !e.meets && e.replications > 1)
        .max_by_key(|e| e.replicas)
        .or_else(|| {
            search
                .evaluations
                .iter()
                .filter(|e| !e.meets)
                .max_by_key(|e| e.replicas)
        })?;
    failing
        .checks
        .iter()
        .filter(|c| !c.met)
        .max_by(|a, b| (a.bounds[1] / a.threshold).total_cmp(&(b.bounds[1] / b.threshold)))
        .and_then(|c| c.class.clone())
}

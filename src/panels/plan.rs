//! The planner's inputs: prices, reserve, SLA targets, candidate hardware,
//! best and worst cases, and (under "Advanced") the search settings.

use leptos::prelude::*;
use sojourn_engine::presets;
use sojourn_engine::{
    CandidateParams, Multipliers, PricingModel, ScenarioParams, SensitivityInput, TargetParams,
};

use crate::form::{enum_parse, enum_text, hardware_preset_id};
use crate::help;
use crate::panels::fields::{
    CheckField, Kind, LazyDetails, ListField, NumberField, SelectField, TextField,
};
use crate::panels::model::count_u32;
use crate::state::AppState;

fn pricing_options(inherit: bool) -> Vec<(String, String)> {
    let mut options = Vec::new();
    if inherit {
        options.push((String::new(), "As in Prices".to_string()));
    }
    for model in [
        PricingModel::OnDemand,
        PricingModel::Reserved,
        PricingModel::Spot,
    ] {
        options.push((enum_text(&model), model.label().to_string()));
    }
    options
}

#[component]
pub fn PricesPanel(state: AppState) -> impl IntoView {
    view! {
        <section class="panel" aria-labelledby="prices-heading">
            <h2 id="prices-heading">"Prices and reserve"</h2>
            <div class="grid">
                <NumberField
                    state
                    path="plan.pricing.usd_per_gpu_hour"
                    label="Price per GPU-hour"
                    unit="USD"
                    help=help::PRICE
                    optional=true
                    placeholder="none (GPU-hours only)"
                    get=|p| p.plan.pricing.usd_per_gpu_hour
                    set=|p, v| p.plan.pricing.usd_per_gpu_hour = v
                />
                <SelectField
                    state
                    path="plan.pricing.pricing_model"
                    label="Pricing model"
                    help=help::PRICING_MODEL
                    options=|_| pricing_options(false)
                    get=|p| enum_text(&p.plan.pricing.pricing_model)
                    set=|p, v| {
                        if let Some(m) = enum_parse(v) {
                            p.plan.pricing.pricing_model = m;
                        }
                    }
                />
                <TextField
                    state
                    path="plan.pricing.price_date"
                    label="Price date"
                    help=help::PRICE_DATE
                    placeholder="e.g. 2025-09-01"
                    get=|p| p.plan.pricing.price_date.clone()
                    set=|p, v| p.plan.pricing.price_date = v
                />
                <TextField
                    state
                    path="plan.pricing.provider_region"
                    label="Provider and region"
                    help=help::PROVIDER_REGION
                    placeholder="e.g. cloud, region, instance"
                    get=|p| p.plan.pricing.provider_region.clone()
                    set=|p, v| p.plan.pricing.provider_region = v
                />
                <NumberField
                    state
                    path="plan.pricing.fixed_usd_per_month"
                    label="Fixed costs"
                    unit="USD/month"
                    help=help::FIXED_COSTS
                    get=|p| Some(p.plan.pricing.fixed_usd_per_month)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.plan.pricing.fixed_usd_per_month = v;
                        }
                    }
                />
                <NumberField
                    state
                    path="plan.reserve.failure_reserve_replicas"
                    label="Failure reserve (N+k)"
                    unit="replicas"
                    help=help::FAILURE_RESERVE
                    kind=Kind::Count
                    get=|p| Some(p.plan.reserve.failure_reserve_replicas as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.plan.reserve.failure_reserve_replicas = count_u32(v);
                        }
                    }
                />
                <NumberField
                    state
                    path="plan.reserve.warm_idle_replicas"
                    label="Warm idle replicas"
                    unit="replicas"
                    help=help::WARM_IDLE
                    kind=Kind::Count
                    get=|p| Some(p.plan.reserve.warm_idle_replicas as f64)
                    set=|p, v| {
                        if let Some(v) = v {
                            p.plan.reserve.warm_idle_replicas = count_u32(v);
                        }
                    }
                />
            </div>
        </section>
    }
}

#[component]
pub fn TargetsPanel(state: AppState) -> impl IntoView {
    let count = Memo::new(move |_| state.params.with(|p| p.plan.targets.len()));
    let error = Memo::new(move |_| state.field_error("plan.targets"));
    view! {
        <section class="panel" aria-labelledby="targets-heading">
            <h2 id="targets-heading">"SLA targets and candidates"</h2>
            <p class="panel-note">{help::TARGETS}</p>
            {move || {
                (0..count.get()).map(|index| view! { <TargetEditor state index /> }).collect_view()
            }}
            <p class="field-error" aria-live="polite">
                {move || error.get()}
            </p>
            <button
                type="button"
                class="secondary"
                on:click=move |_| {
                    state
                        .params
                        .update(|p| {
                            p.plan
                                .targets
                                .push(TargetParams::MissProbability {
                                    class: None,
                                    epsilon: 0.01,
                                });
                        })
                }
            >
                "Add target"
            </button>
            <Candidates state />
        </section>
    }
}

fn target_metric(target: &TargetParams) -> &'static str {
    match target {
        TargetParams::MissProbability { .. } => "miss_probability",
        TargetParams::SojournPercentile { .. } => "sojourn_percentile",
        TargetParams::TtftPercentile { .. } => "ttft_percentile",
        TargetParams::TpotPercentile { .. } => "tpot_percentile",
    }
}

fn with_metric(target: &TargetParams, metric: &str) -> TargetParams {
    let class = target.class().map(str::to_string);
    let (percentile, bound_s) = target.percentile_bound().unwrap_or((0.99, 0.0));
    let bound = |default: f64| if bound_s > 0.0 { bound_s } else { default };
    match metric {
        "sojourn_percentile" => TargetParams::SojournPercentile {
            class,
            percentile,
            bound_s: bound(86_400.0),
        },
        "ttft_percentile" => TargetParams::TtftPercentile {
            class,
            percentile,
            bound_s: bound(10.0),
        },
        "tpot_percentile" => TargetParams::TpotPercentile {
            class,
            percentile,
            bound_s: bound(0.1),
        },
        _ => TargetParams::MissProbability {
            class,
            epsilon: 0.01,
        },
    }
}

fn set_class(target: &mut TargetParams, name: Option<String>) {
    match target {
        TargetParams::MissProbability { class, .. }
        | TargetParams::SojournPercentile { class, .. }
        | TargetParams::TtftPercentile { class, .. }
        | TargetParams::TpotPercentile { class, .. } => *class = name,
    }
}

#[component]
fn TargetEditor(state: AppState, index: usize) -> impl IntoView {
    let prefix = format!("plan.targets[{index}]");
    let is_miss = Memo::new(move |_| {
        state.params.with(|p| {
            matches!(
                p.plan.targets.get(index),
                Some(TargetParams::MissProbability { .. })
            )
        })
    });
    let target_error = {
        let path = prefix.clone();
        Memo::new(move |_| state.field_error(&path))
    };
    let fields_prefix = prefix.clone();
    let fields = move || {
        let prefix = fields_prefix.clone();
        if is_miss.get() {
            view! {
                <NumberField
                    state
                    path=format!("{prefix}.epsilon")
                    label="Largest P(miss)"
                    unit="%"
                    help=help::P_MISS
                    kind=Kind::Percent
                    get=move |p| match p.plan.targets.get(index) {
                        Some(TargetParams::MissProbability { epsilon, .. }) => Some(*epsilon),
                        _ => None,
                    }
                    set=move |p, v| {
                        if let (Some(TargetParams::MissProbability { epsilon, .. }), Some(v)) = (
                            p.plan.targets.get_mut(index),
                            v,
                        ) {
                            *epsilon = v;
                        }
                    }
                />
            }
            .into_any()
        } else {
            view! {
                <NumberField
                    state
                    path=format!("{prefix}.percentile")
                    label="Percentile"
                    unit="%"
                    help="Which percentile is bounded: 99 for p99."
                    kind=Kind::Percent
                    get=move |p| {
                        p.plan.targets.get(index).and_then(|t| t.percentile_bound()).map(|(q, _)| q)
                    }
                    set=move |p, v| {
                        if let (Some((q, _)), Some(v)) = (
                            p
                                .plan
                                .targets
                                .get_mut(index)
                                .and_then(TargetParams::percentile_bound_mut),
                            v,
                        ) {
                            *q = v;
                        }
                    }
                />
                <NumberField
                    state
                    path=format!("{prefix}.bound_s")
                    label="At most"
                    help="The bound on that percentile."
                    kind=Kind::Duration
                    get=move |p| {
                        p.plan.targets.get(index).and_then(|t| t.percentile_bound()).map(|(_, b)| b)
                    }
                    set=move |p, v| {
                        if let (Some((_, b)), Some(v)) = (
                            p
                                .plan
                                .targets
                                .get_mut(index)
                                .and_then(TargetParams::percentile_bound_mut),
                            v,
                        ) {
                            *b = v;
                        }
                    }
                />
            }
            .into_any()
        }
    };
    view! {
        <fieldset class="target">
            <legend>{format!("Target {}", index + 1)}</legend>
            <div class="grid">
                <SelectField
                    state
                    path=format!("{prefix}.metric")
                    label="Metric"
                    help=help::TARGETS
                    options=|_| {
                        vec![
                            ("miss_probability".to_string(), "P(sojourn > deadline)".to_string()),
                            ("sojourn_percentile".to_string(), "Sojourn percentile".to_string()),
                            (
                                "ttft_percentile".to_string(),
                                "Time to first token percentile".to_string(),
                            ),
                            (
                                "tpot_percentile".to_string(),
                                "Time per output token percentile".to_string(),
                            ),
                        ]
                    }
                    get=move |p| {
                        p.plan.targets.get(index).map(target_metric).unwrap_or_default().to_string()
                    }
                    set=move |p, metric| {
                        if let Some(t) = p.plan.targets.get_mut(index) {
                            *t = with_metric(t, metric);
                        }
                    }
                />
                <SelectField
                    state
                    path=format!("{prefix}.class")
                    label="Applies to"
                    help="Every class separately, or one class."
                    options=|p: &ScenarioParams| {
                        let mut options = vec![(String::new(), "Every class".to_string())];
                        options.extend(p.classes.iter().map(|c| (c.name.clone(), c.name.clone())));
                        options
                    }
                    get=move |p| {
                        p.plan
                            .targets
                            .get(index)
                            .and_then(|t| t.class())
                            .unwrap_or_default()
                            .to_string()
                    }
                    set=move |p, name| {
                        if let Some(t) = p.plan.targets.get_mut(index) {
                            set_class(t, (!name.is_empty()).then(|| name.to_string()))
                        }
                    }
                />
                {fields}
            </div>
            <p class="field-error" aria-live="polite">
                {move || target_error.get()}
            </p>
            <button
                type="button"
                class="secondary danger"
                aria-label=format!("Remove target {}", index + 1)
                on:click=move |_| {
                    state
                        .params
                        .update(|p| {
                            if index < p.plan.targets.len() {
                                p.plan.targets.remove(index);
                            }
                        })
                }
            >
                "Remove target"
            </button>
        </fieldset>
    }
}

fn new_candidate(p: &ScenarioParams) -> CandidateParams {
    CandidateParams {
        hardware_preset: hardware_preset_id(p).map(str::to_string),
        gpus_per_replica: p.replica.gpus_per_replica,
        ..CandidateParams::default()
    }
}

#[component]
fn Candidates(state: AppState) -> impl IntoView {
    let count = Memo::new(move |_| {
        state
            .params
            .with(|p| p.plan.candidates.as_ref().map(Vec::len))
    });
    let error = Memo::new(move |_| state.field_error("plan.candidates"));
    view! {
        <CheckField
            state
            path="plan.candidates.on"
            label="Compare hardware options"
            help=help::CANDIDATES
            get=|p| p.plan.candidates.is_some()
            set=|p, on| p.plan.candidates = on.then(|| vec![new_candidate(p)])
        />
        {move || {
            count
                .get()
                .map(|n| {
                    view! {
                        {(0..n)
                            .map(|index| view! { <CandidateEditor state index /> })
                            .collect_view()}
                        <button
                            type="button"
                            class="secondary"
                            on:click=move |_| {
                                state
                                    .params
                                    .update(|p| {
                                        let candidate = new_candidate(p);
                                        if let Some(list) = p.plan.candidates.as_mut() {
                                            list.push(candidate);
                                        }
                                    })
                            }
                        >
                            "Add hardware option"
                        </button>
                    }
                })
        }}
        <p class="field-error" aria-live="polite">
            {move || error.get()}
        </p>
    }
}

#[component]
fn CandidateEditor(state: AppState, index: usize) -> impl IntoView {
    let prefix = format!("plan.candidates[{index}]");
    let candidate = move |p: &ScenarioParams| {
        p.plan
            .candidates
            .as_ref()
            .and_then(|c| c.get(index))
            .cloned()
    };
    let error = {
        let path = prefix.clone();
        Memo::new(move |_| state.field_error(&path))
    };
    view! {
        <fieldset class="target">
            <legend>{format!("Hardware option {}", index + 1)}</legend>
            <div class="grid">
                <TextField
                    state
                    path=format!("{prefix}.name")
                    label="Name"
                    help="A name for this option; empty names it after the hardware."
                    placeholder="automatic"
                    get=move |p| candidate(p).map(|c| c.name).unwrap_or_default()
                    set=move |p, v| {
                        if let Some(c) = p.plan.candidates.as_mut().and_then(|c| c.get_mut(index)) {
                            c.name = v;
                        }
                    }
                />
                <SelectField
                    state
                    path=format!("{prefix}.hardware_preset")
                    label="Accelerator"
                    help=help::HARDWARE
                    options=|_| {
                        let mut options = vec![
                            (String::new(), "The configured hardware".to_string()),
                        ];
                        options
                            .extend(
                                presets::hardware_presets()
                                    .into_iter()
                                    .map(|h| (h.id.to_string(), h.params.name.clone())),
                            );
                        options
                    }
                    get=move |p| candidate(p).and_then(|c| c.hardware_preset).unwrap_or_default()
                    set=move |p, id| {
                        if let Some(c) = p.plan.candidates.as_mut().and_then(|c| c.get_mut(index)) {
                            c.hardware_preset = (!id.is_empty()).then(|| id.to_string());
                            c.hardware = None;
                        }
                    }
                />
                <NumberField
                    state
                    path=format!("{prefix}.gpus_per_replica")
                    label="GPUs per replica"
                    help=help::GPUS_PER_REPLICA
                    kind=Kind::Count
                    get=move |p| candidate(p).map(|c| c.gpus_per_replica as f64)
                    set=move |p, v| {
                        if let (Some(c), Some(v)) = (
                            p.plan.candidates.as_mut().and_then(|c| c.get_mut(index)),
                            v,
                        ) {
                            c.gpus_per_replica = count_u32(v);
                        }
                    }
                />
                <NumberField
                    state
                    path=format!("{prefix}.usd_per_gpu_hour")
                    label="Price per GPU-hour"
                    unit="USD"
                    help=help::PRICE
                    optional=true
                    placeholder="as in Prices"
                    get=move |p| candidate(p).and_then(|c| c.usd_per_gpu_hour)
                    set=move |p, v| {
                        if let Some(c) = p.plan.candidates.as_mut().and_then(|c| c.get_mut(index)) {
                            c.usd_per_gpu_hour = v;
                        }
                    }
                />
                <SelectField
                    state
                    path=format!("{prefix}.pricing_model")
                    label="Pricing model"
                    help=help::PRICING_MODEL
                    options=|_| pricing_options(true)
                    get=move |p| {
                        candidate(p)
                            .and_then(|c| c.pricing_model)
                            .map(|m| enum_text(&m))
                            .unwrap_or_default()
                    }
                    set=move |p, v| {
                        if let Some(c) = p.plan.candidates.as_mut().and_then(|c| c.get_mut(index)) {
                            c.pricing_model = enum_parse(v);
                        }
                    }
                />
            </div>
            <p class="field-error" aria-live="polite">
                {move || error.get()}
            </p>
            <button
                type="button"
                class="secondary danger"
                aria-label=format!("Remove hardware option {}", index + 1)
                on:click=move |_| {
                    state
                        .params
                        .update(|p| {
                            if let Some(list) = p.plan.candidates.as_mut() && index < list.len()
                                && list.len() > 1
                            {
                                list.remove(index);
                            }
                        })
                }
            >
                "Remove option"
            </button>
        </fieldset>
    }
}

fn multiplier_get(
    which: &'static str,
    input: SensitivityInput,
) -> impl Fn(&ScenarioParams) -> Option<f64> + Send + Sync + Clone {
    move |p: &ScenarioParams| {
        let m: &Multipliers = if which == "best" {
            &p.plan.best
        } else {
            &p.plan.worst
        };
        Some(m.get(input))
    }
}

fn multiplier_set(
    which: &'static str,
    input: SensitivityInput,
) -> impl Fn(&mut ScenarioParams, Option<f64>) + Send + Sync + Clone {
    move |p: &mut ScenarioParams, v: Option<f64>| {
        if let Some(v) = v {
            let m = if which == "best" {
                &mut p.plan.best
            } else {
                &mut p.plan.worst
            };
            *m = m.with(input, v);
        }
    }
}

#[component]
pub fn CasesPanel(state: AppState) -> impl IntoView {
    view! {
        <section class="panel" aria-labelledby="cases-heading">
            <h2 id="cases-heading">"Best and worst cases"</h2>
            <p class="panel-note">{help::MULTIPLIERS}</p>
            <table class="multipliers">
                <thead>
                    <tr>
                        <th scope="col">"Input"</th>
                        <th scope="col">"Best"</th>
                        <th scope="col">"Worst"</th>
                    </tr>
                </thead>
                <tbody>
                    {SensitivityInput::ALL
                        .into_iter()
                        .map(|input| {
                            let name = enum_text(&input);
                            let (best_get, best_set) = (
                                multiplier_get("best", input),
                                multiplier_set("best", input),
                            );
                            let (worst_get, worst_set) = (
                                multiplier_get("worst", input),
                                multiplier_set("worst", input),
                            );
                            view! {
                                <tr>
                                    <th scope="row">{input.label()}</th>
                                    <td>
                                        <NumberField
                                            state
                                            path=format!("plan.best.{name}")
                                            label=format!("Best: {}", input.label())
                                            unit="x"
                                            help=help::MULTIPLIERS
                                            get=best_get
                                            set=best_set
                                        />
                                    </td>
                                    <td>
                                        <NumberField
                                            state
                                            path=format!("plan.worst.{name}")
                                            label=format!("Worst: {}", input.label())
                                            unit="x"
                                            help=help::MULTIPLIERS
                                            get=worst_get
                                            set=worst_set
                                        />
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            <LazyDetails summary="Advanced: search, replications, sensitivity, service curve">
                <div class="grid">
                    <NumberField
                        state
                        path="plan.replications"
                        label="Replications"
                        unit="seeds"
                        help=help::REPLICATIONS
                        kind=Kind::Count
                        get=|p| Some(p.plan.replications as f64)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.plan.replications = count_u32(v);
                            }
                        }
                    />
                    <NumberField
                        state
                        path="plan.max_replicas"
                        label="Largest fleet searched"
                        unit="replicas"
                        help=help::MAX_REPLICAS
                        kind=Kind::Count
                        get=|p| Some(p.plan.max_replicas as f64)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.plan.max_replicas = count_u32(v);
                            }
                        }
                    />
                    <NumberField
                        state
                        path="plan.max_busy_fraction"
                        label="Most busy time"
                        unit="%"
                        help=help::MAX_BUSY
                        kind=Kind::Percent
                        get=|p| Some(p.plan.max_busy_fraction)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.plan.max_busy_fraction = v;
                            }
                        }
                    />
                    <SelectField
                        state
                        path="plan.decision"
                        label="Decide targets by"
                        help=help::DECISION
                        options=|_| {
                            vec![
                                ("mean".to_string(), "Mean over replications".to_string()),
                                ("upper95".to_string(), "Upper end of the 95% interval".to_string()),
                            ]
                        }
                        get=|p| enum_text(&p.plan.decision)
                        set=|p, v| {
                            if let Some(d) = enum_parse(v) {
                                p.plan.decision = d;
                            }
                        }
                    />
                    <NumberField
                        state
                        path="plan.sensitivity.delta"
                        label="Sensitivity step"
                        unit="%"
                        help=help::SENSITIVITY
                        kind=Kind::Percent
                        get=|p| Some(p.plan.sensitivity.delta)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.plan.sensitivity.delta = v;
                            }
                        }
                    />
                    <NumberField
                        state
                        path="plan.sensitivity.replications"
                        label="Sensitivity replications"
                        unit="seeds"
                        help=help::REPLICATIONS
                        kind=Kind::Count
                        get=|p| Some(p.plan.sensitivity.replications as f64)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.plan.sensitivity.replications = count_u32(v);
                            }
                        }
                    />
                    <ListField
                        state
                        path="plan.service_curve.load_multipliers"
                        label="Service-curve loads"
                        unit="x base"
                        help=help::LOAD_MULTIPLIERS
                        get=|p| p.plan.service_curve.load_multipliers.clone()
                        set=|p, v| p.plan.service_curve.load_multipliers = v
                    />
                    <NumberField
                        state
                        path="plan.service_curve.headroom_fraction"
                        label="Headroom below the knee"
                        unit="%"
                        help=help::HEADROOM
                        kind=Kind::Percent
                        get=|p| Some(p.plan.service_curve.headroom_fraction)
                        set=|p, v| {
                            if let Some(v) = v {
                                p.plan.service_curve.headroom_fraction = v;
                            }
                        }
                    />
                </div>
            </LazyDetails>
        </section>
    }
}

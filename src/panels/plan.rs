//! The planner's inputs: prices, reserve, SLA targets, candidate hardware,
//! best and worst cases, and (under "Advanced") the search settings.

use leptos::prelude::*;
use sojourn_engine::presets;
use sojourn_engine::{
    CandidateParams, DEFAULT_EPSILON, PricingModel, ScenarioParams, SensitivityInput, TargetParams,
};

use crate::form::hardware_preset_id;
use crate::help;
use crate::panels::at::{At, Item, at};
use crate::panels::fields::{Field, check, choice, fields, list, menu, number, options, text};
use crate::panels::search::{SearchSpace, toggled};
use crate::panels::{FieldMessage, LazyDetails, ListEditors, Panel, RemoveButton};
use crate::registry::{Words, enum_parse, enum_text, inputs};
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
    let rows = vec![
        number(
            at!(plan.pricing.usd_per_gpu_hour),
            &inputs::PRICING_USD_PER_GPU_HOUR,
        )
        .placeholder("none (GPU-hours only)"),
        choice(
            at!(plan.pricing.pricing_model),
            &inputs::PRICING_PRICING_MODEL,
            |_| pricing_options(false),
        ),
        text(at!(plan.pricing.price_date), &inputs::PRICING_PRICE_DATE)
            .placeholder("e.g. 2025-09-01"),
        text(
            at!(plan.pricing.provider_region),
            &inputs::PRICING_PROVIDER_REGION,
        )
        .placeholder("e.g. cloud, region, instance"),
        number(
            at!(plan.pricing.fixed_usd_per_month),
            &inputs::PRICING_FIXED_USD_PER_MONTH,
        ),
        number(
            at!(plan.reserve.failure_reserve_replicas),
            &inputs::RESERVE_FAILURE_RESERVE_REPLICAS,
        ),
        number(
            at!(plan.reserve.warm_idle_replicas),
            &inputs::RESERVE_WARM_IDLE_REPLICAS,
        ),
    ];
    view! {
        <Panel id="prices" title="Prices and reserve">
            <div class="grid">{fields(state, rows)}</div>
        </Panel>
    }
}

#[component]
pub fn TargetsPanel(state: AppState) -> impl IntoView {
    view! {
        <Panel id="targets" title="SLA targets and candidates">
            <p class="panel-note">{help::TARGETS}</p>
            <ListEditors
                state
                path="plan.targets"
                len=|p| p.plan.targets.len()
                editor=|state, index| view! { <TargetEditor state index /> }.into_any()
                add=|p| {
                    p.plan
                        .targets
                        .push(TargetParams::MissProbability {
                            class: None,
                            epsilon: DEFAULT_EPSILON,
                        })
                }
                add_label="Add target"
            />
            <Candidates state />
            <SearchSpace state />
        </Panel>
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
            epsilon: DEFAULT_EPSILON,
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

/// The target at `index` of the plan.
fn target_item(index: usize) -> Item<TargetParams> {
    Item::new(
        format!("plan.targets[{index}]"),
        move |p| p.plan.targets.get(index),
        move |p| p.plan.targets.get_mut(index),
    )
}

/// The boxes of a target's bound: P(miss), or a percentile and its bound.
fn bound_fields(index: usize, miss: bool) -> Vec<Field> {
    let target = target_item(index);
    if miss {
        let epsilon = target.at(
            "epsilon",
            |t| match t {
                TargetParams::MissProbability { epsilon, .. } => Some(*epsilon),
                _ => None,
            },
            |t, value| {
                if let TargetParams::MissProbability { epsilon, .. } = t {
                    *epsilon = value;
                }
            },
        );
        return vec![number(epsilon, &inputs::TARGET_EPSILON)];
    }
    let percentile = target.at(
        "percentile",
        |t| t.percentile_bound().map(|(q, _)| q),
        |t, value| {
            if let Some((q, _)) = t.percentile_bound_mut() {
                *q = value;
            }
        },
    );
    let bound = target.at(
        "bound_s",
        |t| t.percentile_bound().map(|(_, b)| b),
        |t, value| {
            if let Some((_, b)) = t.percentile_bound_mut() {
                *b = value;
            }
        },
    );
    vec![
        number(percentile, &inputs::TARGET_PERCENTILE),
        number(bound, &inputs::TARGET_BOUND_S),
    ]
}

#[component]
fn TargetEditor(state: AppState, index: usize) -> impl IntoView {
    let target = target_item(index);
    let is_miss = Memo::new(move |_| {
        state.params.with(|p| {
            matches!(
                p.plan.targets.get(index),
                Some(TargetParams::MissProbability { .. })
            )
        })
    });
    let metric = target.at(
        "metric",
        |t| Some(target_metric(t).to_string()),
        |t, metric: String| *t = with_metric(t, &metric),
    );
    let class = target.at(
        "class",
        |t| Some(t.class().unwrap_or_default().to_string()),
        |t, name: String| set_class(t, (!name.is_empty()).then_some(name)),
    );
    let rows = vec![
        menu(metric, &inputs::TARGET_METRIC, |_| {
            options(&[
                ("miss_probability", "P(sojourn > deadline)"),
                ("sojourn_percentile", "Sojourn percentile"),
                ("ttft_percentile", "Time to first token percentile"),
                ("tpot_percentile", "Time per output token percentile"),
            ])
        }),
        menu(class, &inputs::TARGET_CLASS, |p| {
            let mut options = vec![(String::new(), "Every class".to_string())];
            options.extend(p.classes.iter().map(|c| (c.name.clone(), c.name.clone())));
            options
        }),
    ];
    view! {
        <fieldset class="target">
            <legend>{format!("Target {}", index + 1)}</legend>
            <div class="grid">
                {fields(state, rows)} {move || fields(state, bound_fields(index, is_miss.get()))}
            </div>
            <FieldMessage state path=target.path().to_string() />
            <RemoveButton
                state
                text="Remove target"
                name=format!("Remove target {}", index + 1)
                remove=move |p| {
                    if index < p.plan.targets.len() {
                        p.plan.targets.remove(index);
                    }
                }
            />
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
    // "on" is no field of the engine's: the path names the checkbox only.
    let on = At::new(
        "plan.candidates.on",
        |p| Some(p.plan.candidates.is_some()),
        |p, on| p.plan.candidates = on.then(|| vec![new_candidate(p)]),
    );
    view! {
        {check(on, &inputs::CANDIDATES_ON).view(state)}
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
        <FieldMessage state path="plan.candidates" />
    }
}

#[component]
fn CandidateEditor(state: AppState, index: usize) -> impl IntoView {
    let option = Item::new(
        format!("plan.candidates[{index}]"),
        move |p| p.plan.candidates.as_ref()?.get(index),
        move |p| p.plan.candidates.as_mut()?.get_mut(index),
    );
    let hardware = option.at(
        "hardware_preset",
        |c| Some(c.hardware_preset.clone().unwrap_or_default()),
        |c, id: String| {
            c.hardware_preset = (!id.is_empty()).then_some(id);
            c.hardware = None;
        },
    );
    let pricing = option.at(
        "pricing_model",
        |c| Some(c.pricing_model.map(|m| enum_text(&m)).unwrap_or_default()),
        |c, name: String| c.pricing_model = enum_parse(&name),
    );
    let rows = vec![
        text(at!(option, name), &inputs::CANDIDATE_NAME).placeholder("automatic"),
        menu(hardware, &inputs::CANDIDATE_HARDWARE_PRESET, |_| {
            let mut options = vec![(String::new(), "The configured hardware".to_string())];
            options.extend(
                presets::hardware_presets()
                    .into_iter()
                    .map(|h| (h.id.to_string(), h.params.name.clone())),
            );
            options
        }),
        number(
            at!(option, gpus_per_replica),
            &inputs::CANDIDATE_GPUS_PER_REPLICA,
        ),
        number(
            at!(option, usd_per_gpu_hour),
            &inputs::CANDIDATE_USD_PER_GPU_HOUR,
        )
        .placeholder("as in Prices"),
        menu(pricing, &inputs::CANDIDATE_PRICING_MODEL, |_| {
            pricing_options(true)
        }),
    ];
    view! {
        <fieldset class="target">
            <legend>{format!("Hardware option {}", index + 1)}</legend>
            <div class="grid">{fields(state, rows)}</div>
            <FieldMessage state path=option.path().to_string() />
            <RemoveButton
                state
                text="Remove option"
                name=format!("Remove hardware option {}", index + 1)
                remove=move |p| {
                    if let Some(list) = p.plan.candidates.as_mut() && index < list.len()
                        && list.len() > 1
                    {
                        list.remove(index);
                    }
                }
            />
        </fieldset>
    }
}

/// The best or worst case's multiplier on `input`.
fn multiplier_at(which: &'static str, input: SensitivityInput) -> At<f64> {
    let best = which == "best";
    At::new(
        format!("plan.{which}.{}", enum_text(&input)),
        move |p| {
            let m = if best { &p.plan.best } else { &p.plan.worst };
            Some(m.get(input))
        },
        move |p, value| {
            let m = if best {
                &mut p.plan.best
            } else {
                &mut p.plan.worst
            };
            *m = m.with(input, value);
        },
    )
}

/// Whether the sensitivity analysis varies `input`, as a checkbox: the list
/// is rewritten in the planner's order (none ticked skips the analysis).
fn sensitivity_input(input: SensitivityInput) -> At<bool> {
    At::new(
        format!("plan.sensitivity.inputs.{}", enum_text(&input)),
        move |p| Some(p.plan.sensitivity.inputs.contains(&input)),
        move |p, ticked| {
            let current = &p.plan.sensitivity.inputs;
            p.plan.sensitivity.inputs = toggled(SensitivityInput::ALL, current, input, ticked);
        },
    )
}

#[component]
pub fn CasesPanel(state: AppState) -> impl IntoView {
    let cell = move |which: &'static str, case: &str, input: SensitivityInput| {
        let label = format!("{case}: {}", input.label());
        let field = number(
            multiplier_at(which, input),
            Words::new(label, "x", help::MULTIPLIERS),
        );
        view! { <td>{field.view(state)}</td> }
    };
    let advanced = move || {
        let rows = vec![
            number(at!(plan.replications), &inputs::PLAN_REPLICATIONS),
            number(at!(plan.min_replications), &inputs::PLAN_MIN_REPLICATIONS),
            number(at!(plan.max_replicas), &inputs::PLAN_MAX_REPLICAS),
            number(at!(plan.max_busy_fraction), &inputs::PLAN_MAX_BUSY_FRACTION),
            choice(at!(plan.decision), &inputs::PLAN_DECISION, |_| {
                options(&[
                    ("mean", "Mean over replications"),
                    ("upper95", "Upper end of the 95% interval"),
                ])
            }),
            number(at!(plan.sensitivity.delta), &inputs::SENSITIVITY_DELTA),
            number(
                at!(plan.sensitivity.replications),
                &inputs::SENSITIVITY_REPLICATIONS,
            ),
            list(
                at!(plan.service_curve.load_multipliers),
                &inputs::SERVICE_CURVE_LOAD_MULTIPLIERS,
            ),
            number(
                at!(plan.service_curve.headroom_fraction),
                &inputs::SERVICE_CURVE_HEADROOM_FRACTION,
            ),
            number(
                at!(plan.service_curve.replications),
                &inputs::SERVICE_CURVE_REPLICATIONS,
            )
            .placeholder("decided like a fleet"),
        ];
        let inputs = SensitivityInput::ALL
            .into_iter()
            .map(|input| {
                check(
                    sensitivity_input(input),
                    Words::new(input.label(), "", help::SENSITIVITY_INPUTS),
                )
            })
            .collect();
        view! {
            <div class="grid">{fields(state, rows)}</div>
            <p class="panel-note">"Inputs the sensitivity analysis varies"</p>
            <div class="grid checks">{fields(state, inputs)}</div>
            <FieldMessage state path="plan.sensitivity.inputs" />
        }
    };
    view! {
        <Panel id="cases" title="Best and worst cases">
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
                            view! {
                                <tr>
                                    <th scope="row">{input.label()}</th>
                                    {cell("best", "Best", input)}
                                    {cell("worst", "Worst", input)}
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            <LazyDetails summary="Advanced: search, replications, sensitivity, service curve">
                {advanced()}
            </LazyDetails>
        </Panel>
    }
}

#[cfg(test)]
mod tests {
    use sojourn_engine::Scenario;

    use super::*;

    /// Unticking an input drops it from the list in the planner's order,
    /// ticking puts it back in its place; none ticked is a valid scenario
    /// that skips the analysis.
    #[test]
    fn sensitivity_checkboxes_rewrite_the_inputs_in_order() {
        let mut p = ScenarioParams::overnight_batch();
        assert_eq!(p.plan.sensitivity.inputs, SensitivityInput::ALL.to_vec());
        let price = sensitivity_input(SensitivityInput::Price);
        assert_eq!(price.path, "plan.sensitivity.inputs.price");
        (price.set)(&mut p, false);
        assert_eq!((price.get)(&p), Some(false));
        assert_eq!(p.plan.sensitivity.inputs.len(), 6);
        assert!(!p.plan.sensitivity.inputs.contains(&SensitivityInput::Price));
        (price.set)(&mut p, true);
        assert_eq!(p.plan.sensitivity.inputs, SensitivityInput::ALL.to_vec());
        for input in SensitivityInput::ALL {
            (sensitivity_input(input).set)(&mut p, false);
        }
        assert!(p.plan.sensitivity.inputs.is_empty());
        Scenario::try_from(p).expect("no input to vary is valid");
    }
}

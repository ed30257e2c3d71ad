//! The plan's part of the results: its headline figures (the cheapest
//! fleet meeting the targets) and the plan itself: the fleet in words, the
//! cases and candidates, the service curve and the sensitivity tornado.

use leptos::prelude::*;
use sojourn_engine::{
    Case, RunSummary, cases_table, configurations_table, decision_label, recommendation_details,
};

use super::{ChartFigure, FigureCard, TableView, placeholder, placeholder_sized, plan_of};
use crate::charts::{Theme, TornadoMetric, service_curve_chart, tornado_chart, tornado_rows};
use crate::format::format_count;
use crate::help;
use crate::job::Stage;
use crate::results::plan_figures;
use crate::state::{AppState, PlanStatus, RunStatus};

#[component]
pub(super) fn PlanHeadline(state: AppState) -> impl IntoView {
    let figures = move || match state.plan.get() {
        PlanStatus::Done { plan, .. } => plan_figures(&plan)
            .into_iter()
            .map(|figure| view! { <FigureCard figure /> })
            .collect_view()
            .into_any(),
        PlanStatus::Running | PlanStatus::NotRun => {
            let label = match state.run.get() {
                RunStatus::Running {
                    label,
                    fraction,
                    stage: Stage::Plan,
                } => format!("{label} ({:.0} %)", fraction * 100.0),
                RunStatus::Running { .. } => "Waiting for the simulation".to_string(),
                _ => "Not planned yet".to_string(),
            };
            ["Planned replicas", "Planned cost per success"]
                .into_iter()
                .map(|title| {
                    view! {
                        <div class="metric">
                            <dt>{title}</dt>
                            <dd>
                                <span class="metric-value">"…"</span>
                                <span class="metric-detail">{label.clone()}</span>
                            </dd>
                        </div>
                    }
                })
                .collect_view()
                .into_any()
        }
        PlanStatus::Failed(message) => view! {
            <div class="metric warn">
                <dt>"Plan"</dt>
                <dd>
                    <span class="metric-value">"failed"</span>
                    <span class="metric-detail">{message}</span>
                </dd>
            </div>
        }
        .into_any(),
    };
    let stale = Memo::new(move |_| {
        let current = state.params.get();
        state
            .plan
            .with(|p| matches!(p, PlanStatus::Done { params, .. } if **params != current))
    });
    view! {
        <h3>
            "Cheapest fleet meeting the targets"
            <span class="stale" class:shown=move || stale.get()>
                "for earlier inputs: updating"
            </span>
        </h3>
        <dl class="metrics plan-metrics">{figures}</dl>
    }
}

#[component]
pub(super) fn PlanResults(state: AppState, theme: Memo<Theme>, width: Memo<u32>) -> impl IntoView {
    let plan = Memo::new(move |_| plan_of(&state));
    let metric = RwSignal::new(TornadoMetric::CostPerSuccess);
    let curve_svg = Signal::derive(move || {
        plan.with(|p| {
            p.as_ref()
                .and_then(|p| p.service_curve.as_ref())
                .map(|c| service_curve_chart(c, &theme.get(), width.get()))
                .unwrap_or_else(|| {
                    placeholder(
                        "Service curve",
                        "Service curve: waiting for the plan",
                        &theme.get(),
                        width.get(),
                    )
                })
        })
    });
    let tornado_svg = Signal::derive(move || {
        plan.with(|p| match p.as_ref().and_then(|p| p.sensitivity.as_ref()) {
            Some(s) => {
                let rows = tornado_rows(s, metric.get());
                tornado_chart(
                    &rows,
                    metric.get(),
                    s.delta,
                    s.base_usd_per_success.is_some(),
                    &theme.get(),
                    width.get(),
                )
            }
            None => {
                // The height the tornado will have, so nothing moves when it comes.
                let rows = state
                    .params
                    .with(|p| p.plan.sensitivity.inputs.len())
                    .max(1);
                placeholder_sized(
                    "Sensitivity",
                    "Sensitivity: waiting for the plan",
                    &theme.get(),
                    width.get(),
                    crate::charts::tornado_height(rows),
                )
            }
        })
    });
    let recommendation = move || {
        plan.with(|p| {
            p.as_ref().and_then(|p| p.recommendation.as_ref()).map(|r| {
                view! {
                    <dl class="plan-details">
                        {recommendation_details(r)
                            .into_iter()
                            .map(|(label, text)| {
                                view! {
                                    <div>
                                        <dt>{label}</dt>
                                        <dd>{text}</dd>
                                    </div>
                                }
                            })
                            .collect_view()}
                    </dl>
                    <ul class="plan-notes">
                        {r.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}
                    </ul>
                }
            })
        })
    };
    let plan_warnings = move || {
        plan.with(|p| {
            p.as_ref().filter(|p| !p.warnings.is_empty()).map(|p| view! {
                <div class="warnings" role="note" aria-label="Warnings from the planner">
                    <ul>
                        {p.warnings.iter().map(|w| view! { <li>{w.clone()}</li> }).collect_view()}
                    </ul>
                </div>
            })
        })
    };
    let summary = move || {
        plan.with(|p| {
            p.as_ref().map(|p| {
                format!(
                    "{} simulations ({} requests); {} replications per fleet, decided by the {}. Targets: {}.",
                    p.simulations,
                    format_count(p.simulated_requests),
                    p.replications,
                    decision_label(p.decision),
                    p.targets.join("; ")
                )
            })
        })
    };
    view! {
        <section class="plan-results" aria-labelledby="plan-heading">
            <h3 id="plan-heading">"Capacity plan"</h3>
            <p class="run-meta">{summary}</p>
            {recommendation}
            {plan_warnings}
            {move || {
                let plan = plan.get();
                state
                    .results
                    .with(|r| {
                        r.as_ref()
                            .map(|r| {
                                let runs: Vec<(Case, &RunSummary)> = [(Case::Base, &r.base)]
                                    .into_iter()
                                    .chain(r.cases.iter().map(|(case, run)| (*case, run)))
                                    .collect();
                                view! {
                                    <TableView table=cases_table(&runs, plan.as_ref()) open=true />
                                }
                            })
                    })
            }}
            {move || {
                plan.get()
                    .map(|plan| view! { <TableView table=configurations_table(&plan) open=true /> })
            }}
            <ChartFigure
                id="curve-figure"
                caption="Service curve and operating point"
                help_text=help::SERVICE_CURVE
                chart=curve_svg
            />
            <ChartFigure
                id="tornado-figure"
                caption="Sensitivity (tornado)"
                help_text=help::TORNADO
                chart=tornado_svg
            >
                <label class="inline-check">
                    <select
                        aria-label="What the tornado shows"
                        on:change=move |e| {
                            metric
                                .set(
                                    if event_target_value(&e) == "miss" {
                                        TornadoMetric::MissProbability
                                    } else {
                                        TornadoMetric::CostPerSuccess
                                    },
                                );
                        }
                    >
                        <option value="cost" selected=true>
                            "Cost per success"
                        </option>
                        <option value="miss">"P(miss)"</option>
                    </select>
                </label>
            </ChartFigure>
        </section>
    }
}

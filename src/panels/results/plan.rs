//! The plan's part of the results: its headline figures (the cheapest
//! configuration and fleet meeting the targets) and the plan itself: the
//! fleet and why, the decision rule, what the search did, cost against
//! P(miss) of every fleet it decided, every configuration's search, the
//! demand cases and the sensitivity (`plan/cases.rs`), and the service
//! curve.

mod cases;

use leptos::prelude::*;
use sojourn_engine::{PlanResult, configurations_table, format_count, recommendation_details};

use super::{ChartFigure, FigureCard, TableView, placeholder_sized, plan_of};
use crate::charts::{
    PARETO_TITLE, Theme, message_chart, pareto_chart, pareto_height, service_curve_chart,
    service_curve_height,
};
use crate::help;
use crate::job::Stage;
use crate::results::{
    decision_summary, pareto_input, plan_figures, plan_statement, search_effort_line,
};
use crate::state::{AppState, PlanStatus, RunStatus};
use cases::{PlanCases, PlanSensitivity};

/// Where the plan is while it has no result: its progress, waiting for the
/// simulation, failed, or not started.
pub(super) fn pending_text(state: &AppState) -> String {
    if let PlanStatus::Failed(message) = state.plan.get() {
        return format!("The plan failed: {message}");
    }
    match state.run.get() {
        RunStatus::Running {
            label,
            fraction,
            stage: Stage::Plan,
        } => format!("{label}, {:.0} % done", fraction * 100.0),
        // The plan's simulations start beside the single run.
        RunStatus::Running { .. } if state.plan.get() == PlanStatus::Running => {
            "Planning beside the simulation".to_string()
        }
        RunStatus::Running { .. } => "Waiting for the simulation".to_string(),
        _ => "Not planned yet".to_string(),
    }
}

/// Why a finished plan has no `what` (a service curve, a sensitivity): no
/// fleet to measure it on, or the plan's options leave it out.
fn absent(plan: &PlanResult, what: &str) -> String {
    if plan.recommendation.is_none() {
        format!("No fleet meets the targets, so there is no {what} to draw.")
    } else {
        format!("No {what}: the plan's options leave it out.")
    }
}

#[component]
pub(super) fn PlanHeadline(state: AppState) -> impl IntoView {
    let cards = |figures: Vec<_>| {
        figures
            .into_iter()
            .map(|figure| view! { <FigureCard figure /> })
            .collect_view()
            .into_any()
    };
    let figures = move || match (state.plan.get(), state.provisional.get()) {
        // The complete plan's figures, the same size: the heading says
        // they are provisional.
        (_, Some(plan)) => cards(plan_figures(&plan)),
        (PlanStatus::Done { plan, .. }, None) => cards(plan_figures(&plan)),
        (PlanStatus::Running | PlanStatus::NotRun, None) => {
            let label = pending_text(&state);
            [
                "Planned configuration",
                "Planned replicas",
                "Planned cost per success",
            ]
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
        (PlanStatus::Failed(message), None) => view! {
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
    // A provisional plan of the current inputs takes the headline's place.
    let stale = Memo::new(move |_| state.shown_plan_is_stale());
    view! {
        <h3>
            "Cheapest configuration meeting the targets"
            <span class="stale" class:shown=move || stale.get()>
                {move || state.stale_label()}
            </span>
            <span class="provisional" class:shown=move || state.provisional.with(Option::is_some)>
                "provisional: the search's choice"
            </span>
        </h3>
        <dl class="metrics plan-metrics" class:is-stale=move || stale.get()>
            {figures}
        </dl>
    }
}

#[component]
pub(super) fn PlanResults(state: AppState, theme: Memo<Theme>, width: Memo<u32>) -> impl IntoView {
    let plan = Memo::new(move |_| plan_of(&state));
    let pending = Memo::new(move |_| pending_text(&state));
    let pareto_svg = Signal::derive(move || {
        state.plan.with(|p| match p {
            PlanStatus::Done { plan, .. } if plan.explored.is_empty() => message_chart(
                PARETO_TITLE,
                "No fleet meets the targets, so none was simulated",
                &theme.get(),
                width.get(),
                pareto_height(width.get(), &theme.get()),
            ),
            PlanStatus::Done { plan, .. } => {
                pareto_chart(&pareto_input(plan), &theme.get(), width.get())
            }
            _ => placeholder_sized(
                PARETO_TITLE,
                &format!("{PARETO_TITLE}: {}", pending.get()),
                &theme.get(),
                width.get(),
                pareto_height(width.get(), &theme.get()),
            ),
        })
    });
    let curve_absent = Memo::new(move |_| {
        plan.with(|p| {
            p.as_ref()
                .filter(|p| p.service_curve.is_none())
                .map(|p| absent(p, "service curve"))
        })
    });
    let curve_svg = Signal::derive(move || {
        plan.with(|p| {
            p.as_ref()
                .and_then(|p| p.service_curve.as_ref())
                .map(|c| service_curve_chart(c, &theme.get(), width.get()))
                .unwrap_or_else(|| {
                    placeholder_sized(
                        "Service curve",
                        &format!("Service curve: {}", pending.get()),
                        &theme.get(),
                        width.get(),
                        service_curve_height(width.get()),
                    )
                })
        })
    });
    // How many rows the configurations table will have (a CSS variable
    // sizing its slot).
    let configurations_rows = move || {
        state.params.with(|p| {
            let candidates = p.plan.candidates.as_ref().map_or(1, Vec::len);
            format!("--rows: {}", candidates * p.plan.search.settings(p).len())
        })
    };
    view! {
        <section class="plan-results" aria-labelledby="plan-heading">
            <h3 id="plan-heading">
                "Capacity plan" <span class="stale" class:shown=move || state.plan_is_stale()>
                    {move || state.stale_label()}
                </span>
            </h3>
            // The summary's and the configurations table's space, kept
            // while the plan runs, so that nothing below moves when it comes.
            // (Once the plan is there, its own height: a plan shorter
            // than the default's left blank gaps, issue 40.)
            <div class="plan-summary-slot" class:planned=move || plan.with(Option::is_some)>
                {move || match plan.get() {
                    Some(plan) => view! { <PlanSummary plan /> }.into_any(),
                    None => view! { <p class="plan-pending">{move || pending.get()}</p> }.into_any(),
                }}
            </div>
            <ChartFigure
                id="pareto-figure"
                caption="Cost against the worst target's margin (value / bound) of every fleet decided"
                help_text=help::PARETO
                chart=pareto_svg
            />
            <div
                class="plan-configurations-slot"
                class:planned=move || plan.with(Option::is_some)
                style=configurations_rows
            >
                {move || {
                    plan.get()
                        .map(|plan| {
                            view! { <TableView table=configurations_table(&plan) open=true /> }
                        })
                }}
            </div>
            <PlanCases state plan />
            <Show
                when=move || curve_absent.with(Option::is_none)
                fallback=move || view! { <p class="panel-note">{curve_absent.get()}</p> }
            >
                <ChartFigure
                    id="curve-figure"
                    caption="Service curve and operating point"
                    help_text=help::SERVICE_CURVE
                    chart=curve_svg
                />
            </Show>
            <PlanSensitivity state plan theme width pending />
        </section>
    }
}

/// The plan in words: the fleet and its configuration, why, the decision
/// rule and the targets, what the search did, the plan's details and notes.
#[component]
fn PlanSummary(plan: PlanResult) -> impl IntoView {
    let statement = plan_statement(&plan);
    let why = (!plan.explanation.is_empty()).then(|| {
        view! {
            <p class="plan-why">
                <strong>"Why: "</strong>
                {plan.explanation.clone()}
            </p>
        }
    });
    let details = plan.recommendation.as_ref().map(|r| {
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
    });
    let warnings = (!plan.warnings.is_empty()).then(|| {
        view! {
            <div class="warnings" role="note" aria-label="Warnings from the planner">
                <ul>
                    {plan.warnings.iter().map(|w| view! { <li>{w.clone()}</li> }).collect_view()}
                </ul>
            </div>
        }
    });
    let effort = format!(
        "{}. {} simulations in all ({} requests).",
        search_effort_line(&plan),
        format_count(plan.simulations),
        format_count(plan.simulated_requests),
    );
    let unmet = plan.recommendation.is_none();
    view! {
        <div class="plan-statement" class:warn=unmet id="plan-statement">
            <p class="plan-fleet">{statement.fleet}</p>
            <p class="plan-fleet-detail">{statement.detail}</p>
        </div>
        {why}
        <details class="plan-rule">
            <summary>{decision_summary(&plan)}</summary>
            <p>{plan.decision_rule.clone()}</p>
            <p>"Targets:"</p>
            <ul>{plan.targets.iter().map(|t| view! { <li>{t.clone()}</li> }).collect_view()}</ul>
            <p>"Searched:"</p>
            <ul>
                {plan
                    .search_space
                    .iter()
                    .map(|d| view! { <li>{format!("{}: {}", d.name, d.values.join(", "))}</li> })
                    .collect_view()}
            </ul>
        </details>
        <p class="run-meta plan-effort">{effort}</p>
        {details}
        {warnings}
    }
}

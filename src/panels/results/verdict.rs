//! The verdict, first in the results: every target against the configured
//! fleet (its one run, then the plan's judgement of it once a plan of the
//! same inputs is done) and the plan's fleet (the engine's `verdict_table`), how the
//! configured fleet fares in a sentence, the recommended fleet's line with
//! which target sets it (or why no fleet meets the targets, said only
//! here), and the decision rule beside them.

use leptos::prelude::*;
use sojourn_engine::{decision_rule_short, verdict_table};

use super::TableView;
use super::plan::pending_text;
use crate::results::{PROVISIONAL, configured_line, plan_line};
use crate::state::{AppState, PlanStatus};

#[component]
pub(super) fn Verdict(state: AppState) -> impl IntoView {
    let configured = move || {
        state.results.with(|r| {
            r.as_ref().map(|r| {
                // A provisional plan (of these inputs) gives the plan's
                // fleet; it has not judged the configured one.
                let (plan, current) = match (state.plan.get(), state.provisional.get()) {
                    (_, Some(plan)) => (Some(*plan), false),
                    (PlanStatus::Done { plan, params }, None) => (Some(*plan), *params == r.params),
                    _ => (None, false),
                };
                let judged = plan.as_ref().filter(|_| current);
                view! {
                    <p class="verdict-configured">{configured_line(&r.base, judged)}</p>
                    <TableView table=verdict_table(&r.base, plan.as_ref(), current) open=true />
                }
            })
        })
    };
    let planned = move || match (state.plan.get(), state.provisional.get()) {
        (_, Some(plan)) => {
            let line = plan_line(&plan);
            view! {
                <div class="verdict-plan pending" id="verdict-plan">
                    <p class="verdict-fleet">{line.fleet}</p>
                    <p class="verdict-detail">{line.detail}</p>
                    <p class="verdict-binding">{PROVISIONAL}.</p>
                </div>
            }
            .into_any()
        }
        (PlanStatus::Done { plan, .. }, None) => {
            let line = plan_line(&plan);
            // No fleet to name: the line reads as a message, at the size of
            // its reason, not as a fleet.
            let no_fleet = plan.recommendation.is_none();
            // It takes the place the provisional plan's note had, so the
            // verdict keeps its height when the plan completes.
            let binding = plan.binding_sentence().map(|sentence| {
                view! {
                    <p class="verdict-binding">
                        <strong>"What sets the fleet: "</strong>
                        {sentence}
                    </p>
                }
            });
            view! {
                <div class="verdict-plan" class:warn=!line.met id="verdict-plan">
                    <p class="verdict-fleet" class:no-fleet=no_fleet>
                        {line.fleet}
                    </p>
                    <p class="verdict-detail">{line.detail}</p>
                    {binding}
                    <super::diagnosis::BindingDiagnosis plan=(*plan).clone() />
                </div>
            }
            .into_any()
        }
        // A failure is a message with its reason, not a fleet.
        (PlanStatus::Failed(message), None) => view! {
            <div class="verdict-plan warn" id="verdict-plan">
                <p class="verdict-failure">
                    <strong>"The plan failed: "</strong>
                    {message}
                </p>
            </div>
        }
        .into_any(),
        _ => view! {
            <div class="verdict-plan pending" id="verdict-plan">
                <p class="verdict-fleet">"The plan: …"</p>
                <p class="verdict-detail">{pending_text(&state)}</p>
            </div>
        }
        .into_any(),
    };
    let rule = move || decision_rule_short(state.params.with(|p| p.plan.decision));
    view! {
        <section class="verdict" aria-labelledby="verdict-heading">
            <h3 id="verdict-heading">"Verdict against the targets"</h3>
            {configured}
            {planned}
            <p class="verdict-rule">
                <strong>"Decision rule: "</strong>
                {rule}
            </p>
        </section>
    }
}

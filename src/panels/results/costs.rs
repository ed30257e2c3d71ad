//! The costs, each saying which fleet it is for: first the plan's (its
//! budget per month and year, steady and reserve, and its unit costs), then
//! the configured fleet's as simulated. Each has a bar of where the money
//! goes.

use leptos::prelude::*;
use sojourn_engine::{
    FleetCost, UnitCosts, cost_table, format_duration_s, format_usd, plan_budget_table,
    plan_unit_costs_table,
};

use super::{TableView, plan_of};
use crate::help;
use crate::panels::fields::Info;
use crate::results::cost_segments;
use crate::state::AppState;

/// Where a fleet's money goes, as a bar and its legend; a note without a
/// price.
fn cost_bar(fleet: &FleetCost, units: &UnitCosts, whose: &str) -> AnyView {
    let Some(segments) = cost_segments(fleet, units) else {
        return view! {
            <p class="panel-note">
                "No price given: costs are in GPU-hours. Enter a price per GPU-hour under Prices to see USD."
            </p>
        }
        .into_any();
    };
    let label = segments
        .iter()
        .map(|s| s.describe())
        .collect::<Vec<_>>()
        .join(", ");
    // The parts are over the costed window (the simulated horizon), not
    // per month as the budget beside them: say so.
    let window = format!(
        "Over the {} simulated, {} costs {} in all:",
        format_duration_s(fleet.window_h * 3600.0),
        whose,
        format_usd(fleet.usd_total.unwrap_or(0.0))
    );
    view! {
        <p class="cost-window">{window.clone()}</p>
        <div class="cost-bar" role="img" aria-label=format!("{window} {label}")>
            {segments
                .iter()
                .map(|s| {
                    view! {
                        <span
                            class=format!("seg cost-{}", s.key)
                            style:width=format!("{:.2}%", s.share * 100.0)
                            title=s.label
                        ></span>
                    }
                })
                .collect_view()}
        </div>
        <ul class="memory-legend">
            {segments
                .into_iter()
                .filter(|s| s.usd > 0.0)
                .map(|s| {
                    view! {
                        <li>
                            <span class=format!("swatch cost-{}", s.key)></span>
                            {s.describe()}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

/// The plan's cost, once there is a plan, then the configured fleet's.
#[component]
pub(super) fn Costs(state: AppState) -> impl IntoView {
    let plan_cost = move || {
        plan_of(&state)
            .and_then(|plan| plan.recommendation)
            .map(|rec| {
                let heading = format!(
                    "Cost of the plan: {} + {} replicas of {}",
                    rec.steady_replicas,
                    rec.failure_reserve_replicas + rec.warm_idle_replicas,
                    rec.candidate
                );
                view! {
                    <h3 id="plan-cost-heading">
                        {heading} <Info topic="cost per success" text=help::COST_PER_SUCCESS />
                    </h3>
                    {cost_bar(&rec.budget.fleet, &rec.budget.units, "the plan")}
                    <TableView table=plan_budget_table(&rec) open=true />
                    <TableView table=plan_unit_costs_table(&rec) open=true />
                }
            })
    };
    let configured = move || {
        state.results.with(|r| {
            r.as_ref().map(|r| {
                let heading = format!(
                    "Cost of the configured fleet: {} + {} replicas, as simulated",
                    r.base.cost.fleet.steady_replicas, r.base.cost.fleet.reserve_replicas
                );
                view! {
                    <h3 id="cost-heading">
                        {heading} <Info topic="cost per success" text=help::COST_PER_SUCCESS />
                    </h3>
                    {cost_bar(&r.base.cost.fleet, &r.base.cost.units, "the configured fleet")}
                    <TableView table=cost_table(&r.base) open=true />
                }
            })
        })
    };
    view! {
        <section class="cost-breakdown plan-cost" aria-label="Cost of the plan">
            {plan_cost}
        </section>
        <section class="cost-breakdown" aria-label="Cost of the configured fleet">
            {configured}
        </section>
    }
}

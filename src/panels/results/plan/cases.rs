//! The plan's demand cases (expected, low and high demand, each re-planned,
//! and the fleet covering high demand) and its sensitivity (the tornado on
//! the plan's fixed fleet, how to read it, the re-planned fleets).

use leptos::prelude::*;
use sojourn_engine::PlanResult;

use super::super::{ChartFigure, TableView, case_runs, placeholder_sized};
use super::absent;
use crate::charts::{Theme, TornadoMetric, tornado_chart, tornado_height, tornado_rows};
use crate::help;
use crate::results::{cover_sentence, plan_cases_table, replanned_table, sensitivity_reading};
use crate::state::AppState;

/// The cases (the configured fleet's runs as they arrive, then each case's
/// own plan and the plan's fleet under it) and the cost of covering high
/// demand.
#[component]
pub(in crate::panels::results) fn PlanCases(
    state: AppState,
    plan: Memo<Option<PlanResult>>,
) -> impl IntoView {
    let table = move || {
        let plan = plan.get();
        state.results.with(|r| {
            r.as_ref().map(|r| {
                let table = plan_cases_table(&case_runs(r), plan.as_ref());
                view! { <TableView table open=true /> }
            })
        })
    };
    let cover = move || {
        plan.with(|p| p.as_ref().and_then(cover_sentence))
            .map(|sentence| view! { <p class="plan-cover">{sentence}</p> })
    };
    // Its space kept while the plan runs (the plan's table is wider, with
    // a sentence under it), so that nothing below moves when it comes.
    view! {
        <div class="plan-cases-slot" class:planned=move || plan.with(Option::is_some)>
            {table}
            {cover}
        </div>
    }
}

/// How to read the sensitivity, the tornado (the plan's fleet held fixed)
/// and the fleets re-planned for the inputs with the largest impact; a note
/// instead when the finished plan has none.
#[component]
pub(in crate::panels::results) fn PlanSensitivity(
    state: AppState,
    plan: Memo<Option<PlanResult>>,
    theme: Memo<Theme>,
    width: Memo<u32>,
    pending: Memo<String>,
) -> impl IntoView {
    let metric = RwSignal::new(TornadoMetric::CostPerSuccess);
    let missing = Memo::new(move |_| {
        plan.with(|p| {
            p.as_ref()
                .filter(|p| p.sensitivity.is_none())
                .map(|p| absent(p, "sensitivity"))
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
                    &format!("Sensitivity: {}", pending.get()),
                    &theme.get(),
                    width.get(),
                    tornado_height(rows),
                )
            }
        })
    });
    let reading = move || {
        plan.with(|p| {
            p.as_ref()
                .and_then(|p| p.sensitivity.as_ref())
                .map(|s| view! { <p class="plan-reading">{sensitivity_reading(s)}</p> })
        })
    };
    let replanned = move || {
        plan.with(|p| {
            p.as_ref()
                .and_then(replanned_table)
                .map(|table| view! { <TableView table open=true /> })
        })
    };
    view! {
        <Show
            when=move || missing.with(Option::is_none)
            fallback=move || view! { <p class="panel-note">{missing.get()}</p> }
        >
            <ChartFigure
                id="tornado-figure"
                caption="Sensitivity on the plan's fleet (tornado)"
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
                        <option
                            value="cost"
                            selected=move || { metric.get() == TornadoMetric::CostPerSuccess }
                        >
                            "Cost per success"
                        </option>
                        <option
                            value="miss"
                            selected=move || { metric.get() == TornadoMetric::MissProbability }
                        >
                            "P(miss)"
                        </option>
                    </select>
                </label>
            </ChartFigure>
            // How to read the tornado and the table of re-planned fleets,
            // between them: it comes with the plan, and above the tornado
            // it pushed the chart down as it came.
            {reading}
            {replanned}
        </Show>
    }
}

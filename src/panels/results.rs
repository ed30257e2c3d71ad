//! The results: the verdict against the targets (`results/verdict.rs`),
//! headline figures of the configured fleet, the sojourn-time CDF, the
//! costs of the plan and of the configured fleet (`results/costs.rs`), the
//! fleet over time and the tables behind every chart, each downloadable;
//! the plan's part is in `results/plan.rs`. The tables are the engine's
//! (`sojourn_engine::DataTable`, the same the CLI prints).

mod batch;
mod costs;
mod diagnosis;
mod plan;
mod table;
mod verdict;

use leptos::prelude::*;
use sojourn_engine::{
    Case, PlanResult, RunSummary, alternatives_cost_table, analytic_table, cases_table,
    class_table, curve_table, explored_table, frontier_cost_table, sensitivity_table, series_table,
};

use crate::browser;
use crate::charts::{
    Chart, Theme, cdf_chart, chart_width, message_chart, series_chart, titled_svg,
};
use crate::format::{counted, format_count};
use crate::help;
use crate::panels::fields::Info;
use crate::panels::toolbar::file_stem;
use crate::results::{Figure, cdf_input, cdf_points_table, run_figures};
use crate::state::{AppState, PlanStatus, Results, RunStatus};
use batch::BatchPanel;
use costs::Costs;
use plan::{PlanHeadline, PlanResults};
pub use table::TableView;
use verdict::Verdict;

#[component]
fn FigureCard(figure: Figure) -> impl IntoView {
    let help_text = figure.topic.help();
    let warning = figure.warning.clone();
    let warn = warning.is_some();
    view! {
        <div class="metric" class:warn=warn>
            <dt>
                {figure.label} {help_text.map(|text| view! { <Info topic=figure.label text /> })}
            </dt>
            <dd>
                <span class="metric-value">{figure.value}</span>
                <span class="metric-detail">{figure.detail}</span>
                {warning.map(|w| view! { <span class="metric-warning">{w}</span> })}
            </dd>
        </div>
    }
}

/// A block of results, marked while it is for earlier inputs (`mark`, see
/// `AppState::stale_mark`): dimmed, under a note naming the panels
/// changed since and what brings it up to date. The note lies over the
/// block's first line, so marking moves nothing on the page.
#[component]
pub(super) fn StaleBlock(
    #[prop(into)] mark: Signal<Option<String>>,
    #[prop(optional, into)] class: String,
    children: Children,
) -> impl IntoView {
    view! {
        <div
            class=format!("result-block {class}")
            class:is-stale=move || mark.with(Option::is_some)
        >
            <p class="stale-badge" class:shown=move || mark.with(Option::is_some)>
                {move || mark.get().unwrap_or_default()}
            </p>
            {children()}
        </div>
    }
}

/// A chart with its caption and download buttons. The box keeps the
/// chart's aspect ratio, so the page does not jump when it redraws.
#[component]
fn ChartFigure(
    #[prop(into)] id: String,
    #[prop(into)] caption: String,
    help_text: &'static str,
    chart: Signal<Chart>,
    #[prop(optional)] children: Option<Children>,
) -> impl IntoView {
    // A download carries the caption and the scenario's name above the
    // chart: a file has no page around it to say what it shows.
    let state = use_context::<AppState>();
    let heading = StoredValue::new(caption.clone());
    let exported = move || {
        let chart = chart.get_untracked();
        let (scenario, dark) = state.map_or((String::new(), false), |s| {
            let provenance = s.provenance();
            (
                format!(
                    "Scenario: {}; {}",
                    provenance.scenario, provenance.generator
                ),
                s.dark.get_untracked(),
            )
        });
        let (svg, height) =
            heading.with_value(|heading| titled_svg(&chart, heading, &scenario, &Theme::of(dark)));
        (chart, svg, height)
    };
    let save_svg = move |_| {
        let (chart, svg, _) = exported();
        let _ = browser::download_text(
            &format!("{}.svg", file_stem(&chart.title)),
            "image/svg+xml",
            &svg,
        );
    };
    let save_png = move |_| {
        let (chart, svg, height) = exported();
        let _ = browser::download_svg_as_png(
            &format!("{}.png", file_stem(&chart.title)),
            &svg,
            chart.width as f64,
            height as f64,
            2.0,
        );
    };
    let caption_id = format!("{id}-caption");
    let labelled_by = caption_id.clone();
    view! {
        <figure class="chart-figure" id=id aria-labelledby=labelled_by>
            <figcaption id=caption_id>
                <span class="caption-text">{caption}</span>
                <Info topic="this chart" text=help_text />
                <span class="chart-actions">
                    {children.map(|c| c())} <button type="button" class="small" on:click=save_svg>
                        "SVG"
                    </button> <button type="button" class="small" on:click=save_png>
                        "PNG"
                    </button>
                </span>
            </figcaption>
            <div
                class="chart"
                style:aspect-ratio=move || chart.with(|c| format!("{} / {}", c.width, c.height))
                inner_html=move || chart.with(|c| c.svg.clone())
            ></div>
        </figure>
    }
}

#[component]
pub fn ResultsPanel(state: AppState) -> impl IntoView {
    let theme = Memo::new(move |_| Theme::of(state.dark.get()));
    let width = Memo::new(move |_| chart_width(state.window_width.get()));
    let per_class = RwSignal::new(false);
    let has_results = Memo::new(move |_| state.results.with(Option::is_some));
    let stale = Memo::new(move |_| state.results_are_stale());
    let run_mark = Memo::new(move |_| state.results_stale_mark());
    // The verdict reads the run and the plan: marked when either is for
    // earlier inputs (the run's mark first: it names the older change).
    let verdict_mark = Memo::new(move |_| run_mark.get().or_else(|| state.plan_stale_mark()));
    let figures = Memo::new(move |_| {
        state
            .results
            .with(|r| r.as_ref().map(|r| run_figures(&r.base)).unwrap_or_default())
    });
    let cdf = Memo::new(move |_| {
        let per_class = per_class.get();
        state.results.with(|r| {
            r.as_ref()
                .map(|r| cdf_input(&r.base, &r.cases, per_class))
                .unwrap_or_default()
        })
    });
    let cdf_svg = Signal::derive(move || {
        if has_results.get() {
            cdf.with(|input| cdf_chart(input, &theme.get(), width.get()))
        } else {
            placeholder(
                "Waiting for the simulation",
                "The sojourn-time CDF appears here",
                &theme.get(),
                width.get(),
            )
        }
    });
    let series_svg = Signal::derive(move || {
        state.results.with(|r| {
            series_chart(
                r.as_ref()
                    .map(|r| r.base.report.series.as_slice())
                    .unwrap_or(&[]),
                &theme.get(),
                width.get(),
            )
        })
    });
    let warnings = Memo::new(move |_| {
        state.results.with(|r| {
            r.as_ref()
                .map(|r| r.base.report.warnings.clone())
                .unwrap_or_default()
        })
    });
    let run_failed = move || match state.run.get() {
        RunStatus::Failed(message) => Some(view! {
            <p class="run-error" role="alert">
                {format!("The simulation failed: {message}")}
            </p>
        }),
        _ => None,
    };
    let digest = move || {
        state.results.with(|r| {
            r.as_ref().map(|r| {
                let report = &r.base.report;
                format!(
                    "Seed {}, {}, {} requests simulated; digest {}.",
                    report.seed,
                    counted(report.replicas.into(), "replica"),
                    format_count(report.overall.arrived),
                    r.base.digest
                )
            })
        })
    };
    view! {
        <section
            class="results"
            id="results"
            tabindex="-1"
            aria-labelledby="results-heading"
            aria-busy=move || if state.run.with(RunStatus::is_running) { "true" } else { "false" }
        >
            <div class="results-head">
                <h2 id="results-heading">"Results"</h2>
                <span class="stale" class:shown=move || stale.get()>
                    {move || state.stale_label()}
                </span>
            </div>
            {run_failed}
            <StaleBlock mark=verdict_mark>
                <Verdict state />
            </StaleBlock>
            <section class="headline" aria-label="Headline figures">
                <h3>
                    {move || {
                        state
                            .results
                            .with(|r| {
                                r.as_ref()
                                    .map_or(
                                        "The configured fleet".to_string(),
                                        |r| {
                                            format!(
                                                "The configured fleet: {}, one simulation",
                                                counted(r.base.report.replicas.into(), "replica"),
                                            )
                                        },
                                    )
                            })
                    }} <span class="stale" class:shown=move || stale.get()>
                        {move || state.stale_label()}
                    </span>
                </h3>
                <dl
                    class="metrics"
                    class:placeholder=move || !has_results.get()
                    class:is-stale=move || stale.get()
                >
                    {move || {
                        let figures = figures.get();
                        if figures.is_empty() {
                            (0..5)
                                .map(|_| {
                                    view! {
                                        <div class="metric">
                                            <dt>"…"</dt>
                                            <dd>
                                                <span class="metric-value">"–"</span>
                                            </dd>
                                        </div>
                                    }
                                })
                                .collect_view()
                                .into_any()
                        } else {
                            figures
                                .into_iter()
                                .map(|figure| view! { <FigureCard figure /> })
                                .collect_view()
                                .into_any()
                        }
                    }}
                </dl>
                <PlanHeadline state />
            </section>
            <StaleBlock mark=run_mark>
                <ChartFigure
                    id="cdf-figure"
                    caption="Sojourn-time CDF against the deadline"
                    help_text=help::CDF
                    chart=cdf_svg
                >
                    <label class="inline-check">
                        <input
                            type="checkbox"
                            prop:checked=move || per_class.get()
                            on:change=move |e| per_class.set(event_target_checked(&e))
                        />
                        "Per-class curves"
                    </label>
                </ChartFigure>
                <p class="run-meta">{digest}</p>
                {move || {
                    let list = warnings.get();
                    (!list.is_empty())
                        .then(|| {
                            view! {
                                <div
                                    class="warnings"
                                    role="note"
                                    aria-label="Warnings from the simulation"
                                >
                                    <h3>"Warnings"</h3>
                                    <ul>
                                        {list
                                            .into_iter()
                                            .map(|w| view! { <li>{w}</li> })
                                            .collect_view()}
                                    </ul>
                                </div>
                            }
                        })
                }}
            </StaleBlock>
            <StaleBlock mark=Signal::derive(move || {
                run_mark.get().or_else(|| state.plan_stale_mark())
            })>
                <Costs state />
            </StaleBlock>
            <StaleBlock mark=run_mark>
                <BatchPanel state />
                <ChartFigure
                    id="series-figure"
                    caption="Queue, batch, KV cache and replicas over the horizon"
                    help_text=help::KV_CACHE
                    chart=series_svg
                />
            </StaleBlock>
            <StaleBlock mark=Signal::derive(move || state.plan_stale_mark())>
                <PlanResults state theme width />
            </StaleBlock>
            <section class="tables" aria-labelledby="tables-heading">
                <h3 id="tables-heading">"Numbers behind the charts"</h3>
                {move || {
                    state
                        .results
                        .with(|r| {
                            r.as_ref()
                                .map(|r| {
                                    view! {
                                        <TableView table=class_table(&r.base) open=true />
                                        <TableView table=cdf_points_table(&cdf.get_untracked()) />
                                        <TableView table=series_table(&r.base) />
                                    }
                                })
                        })
                }}
                {move || {
                    let plan = plan_of(&state);
                    state
                        .results
                        .with(|r| {
                            r.as_ref()
                                .map(|r| {
                                    view! {
                                        <TableView table=cases_table(
                                            &case_runs(r),
                                            plan.as_ref(),
                                        ) />
                                    }
                                })
                        })
                }}
                {move || {
                    plan_of(&state)
                        .map(|plan| {
                            view! {
                                <TableView table=explored_table(&plan) />
                                {frontier_cost_table(&plan)
                                    .map(|t| view! { <TableView table=t /> })}
                                {alternatives_cost_table(&plan)
                                    .map(|t| view! { <TableView table=t /> })}
                                {curve_table(&plan).map(|t| view! { <TableView table=t /> })}
                                {sensitivity_table(&plan).map(|t| view! { <TableView table=t /> })}
                                {analytic_table(&plan).map(|t| view! { <TableView table=t /> })}
                            }
                        })
                }}
                <button
                    type="button"
                    class="secondary"
                    on:click=move |_| {
                        let json = export_json(&state);
                        let name = state.params.with_untracked(|p| file_stem(&p.name));
                        let _ = browser::download_text(
                            &format!("{name}-results.json"),
                            "application/json",
                            &json,
                        );
                    }
                >
                    "Download all results (JSON)"
                </button>
            </section>
        </section>
    }
}

/// The runs of each case on the configured fleet, as far as they have
/// arrived.
fn case_runs(results: &Results) -> Vec<(Case, &RunSummary)> {
    [(Case::Base, &results.base)]
        .into_iter()
        .chain(results.cases.iter().map(|(case, run)| (*case, run)))
        .collect()
}

fn plan_of(state: &AppState) -> Option<PlanResult> {
    state.plan.with(|p| match p {
        PlanStatus::Done { plan, .. } => Some((**plan).clone()),
        _ => None,
    })
}

/// Everything on the page as one JSON document: the scenario and every result.
fn export_json(state: &AppState) -> String {
    let params = state.params.get_untracked();
    let document = state.results.with_untracked(|r| {
        serde_json::json!({
            "provenance": state.provenance(),
            "scenario": params,
            "link": crate::link::encode(&params).ok(),
            "base": r.as_ref().map(|r| &r.base),
            "cases": r.as_ref().map(|r| &r.cases),
            "plan": plan_of(state),
        })
    });
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

/// What a chart shows before its results arrive (the size of the chart to
/// come, so nothing moves when it does).
fn placeholder(title: &str, message: &str, theme: &Theme, width: u32) -> Chart {
    placeholder_sized(
        title,
        message,
        theme,
        width,
        crate::charts::chart_height(width, 0.52, 300),
    )
}

fn placeholder_sized(title: &str, message: &str, theme: &Theme, width: u32, height: u32) -> Chart {
    message_chart(title, &format!("{message}…"), theme, width, height)
}

//! The results: the verdict against the targets (`results/verdict.rs`),
//! headline figures of the configured fleet, the sojourn-time CDF, the
//! costs of the plan and of the configured fleet (`results/costs.rs`), the
//! fleet over time and the tables behind every chart, each downloadable;
//! the plan's part is in `results/plan.rs`. The tables are the engine's
//! (`sojourn_engine::DataTable`, the same the CLI prints).

mod batch;
mod costs;
mod plan;
mod verdict;

use leptos::prelude::*;
use sojourn_engine::{
    Case, DataTable, PlanResult, RunSummary, alternatives_cost_table, analytic_table, cases_table,
    class_table, curve_table, explored_table, frontier_cost_table, sensitivity_table, series_table,
};

use crate::browser;
use crate::charts::{Chart, Theme, cdf_chart, chart_width, message_chart, series_chart};
use crate::format::{counted, format_count};
use crate::help;
use crate::panels::fields::Info;
use crate::panels::toolbar::file_stem;
use crate::results::{Figure, cdf_input, cdf_points_table, run_figures};
use crate::state::{AppState, PlanStatus, Results, RunStatus};
use crate::tables::{cell_class, grouped_headers, in_order, page_order, sentence_columns};
use batch::BatchPanel;
use costs::Costs;
use plan::{PlanHeadline, PlanResults};
use verdict::Verdict;

fn figure_help(label: &str) -> Option<&'static str> {
    Some(match label {
        "P(miss)" => help::P_MISS,
        "Goodput" => help::GOODPUT,
        "Cost per successful request" | "Planned cost per success" => help::COST_PER_SUCCESS,
        "Utilization" => help::UTILIZATION,
        "Concurrency" => help::CONCURRENCY,
        "Planned replicas" => help::FAILURE_RESERVE,
        "Planned configuration" => help::CONFIGURATION,
        _ => return None,
    })
}

#[component]
fn FigureCard(figure: Figure) -> impl IntoView {
    let help_text = figure_help(figure.label);
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
    let save_svg = move |_| {
        let chart = chart.get_untracked();
        let _ = browser::download_text(
            &format!("{}.svg", file_stem(&chart.title)),
            "image/svg+xml",
            &chart.svg,
        );
    };
    let save_png = move |_| {
        let chart = chart.get_untracked();
        let _ = browser::download_svg_as_png(
            &format!("{}.png", file_stem(&chart.title)),
            &chart.svg,
            chart.width as f64,
            chart.height as f64,
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

/// A table with a CSV download. A table shown closed builds its rows only
/// once it is first opened: the CDF's points and the fleet over time hold
/// thousands of cells, half the page, which the first results would
/// otherwise wait for.
#[component]
pub fn TableView(table: DataTable, #[prop(optional)] open: bool) -> impl IntoView {
    // The CSV starts with where it comes from (see `provenance.rs`).
    let state = use_context::<AppState>();
    let title = table.title.clone();
    let id = format!("table-{}", table.id);
    let table = StoredValue::new(table);
    let shown = RwSignal::new(open);
    view! {
        <details
            class="data-table"
            open=open
            id=id
            on:toggle=move |event| {
                if event_target::<web_sys::HtmlDetailsElement>(&event).open() {
                    shown.set(true);
                }
            }
        >
            <summary>{title.clone()}</summary>
            <button
                type="button"
                class="small"
                aria-label=format!("Download {title} as CSV")
                on:click=move |_| {
                    let (file, csv) = table
                        .with_value(|table| (format!("{}.csv", table.id), table.to_csv()));
                    let csv = match state {
                        Some(state) => state.provenance().csv(&title, &csv),
                        None => csv,
                    };
                    let _ = browser::download_text(&file, "text/csv", &csv);
                }
            >
                "CSV"
            </button>
            {move || shown.get().then(|| table.with_value(table_rows))}
        </details>
    }
}

/// A table's header and rows, in a box that scrolls sideways.
fn table_rows(table: &DataTable) -> impl IntoView + use<> {
    // The columns of sentences go under each row (`sentence_columns`).
    let under = sentence_columns(table);
    let order: Vec<usize> = page_order(&table.columns)
        .into_iter()
        .filter(|i| !under.contains(i))
        .collect();
    let headers = table.headers();
    let span = order.len();
    view! {
        // Focusable and named, so a keyboard can scroll a wide table.
        <div
            class="table-scroll"
            tabindex="0"
            role="region"
            aria-label=format!("{} (scrolls)", table.title)
        >
            <table>
                <thead>{header_rows(&headers, &order)}</thead>
                <tbody>
                    {table
                        .rows
                        .iter()
                        .map(|row| {
                            let lines: Vec<(String, String)> = under
                                .iter()
                                .filter_map(|&i| {
                                    let text = &row.get(i)?.text;
                                    (!text.is_empty()).then(|| (headers[i].clone(), text.clone()))
                                })
                                .collect();
                            // (column, its cell) of each sentence under the row.
                            view! {
                                <tr class:above-line=!lines
                                    .is_empty()>
                                    {in_order(row, &order)
                                        .zip(in_order(&headers, &order))
                                        .map(|(cell, header)| {
                                            view! {
                                                <td class=cell_class(cell) data-column=header.clone()>
                                                    {cell.text.clone()}
                                                </td>
                                            }
                                        })
                                        .collect_view()}
                                </tr>
                                {lines
                                    .into_iter()
                                    .map(|(header, text)| {
                                        let line = format!("{header}: {text}");
                                        view! {
                                            <tr class="row-line">
                                                <td colspan=span data-column=header>
                                                    <span>{line}</span>
                                                </td>
                                            </tr>
                                        }
                                    })
                                    .collect_view()}
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// A table's header: one row, or two when its columns have groups ("own
/// plan: USD per month" under "own plan"; see `grouped_headers`).
fn header_rows(headers: &[String], order: &[usize]) -> impl IntoView + use<> {
    let shown: Vec<&str> = in_order(headers, order).map(String::as_str).collect();
    match grouped_headers(&shown) {
        None => view! {
            <tr>
                {shown
                    .iter()
                    .map(|header| {
                        view! {
                            <th scope="col" data-column=header.to_string()>
                                {header.to_string()}
                            </th>
                        }
                    })
                    .collect_view()}
            </tr>
        }
        .into_any(),
        Some((top, names)) => view! {
            <tr>
                {top
                    .into_iter()
                    .map(|cell| {
                        if cell.whole {
                            let header = cell.text.clone();
                            view! {
                                <th scope="col" rowspan="2" data-column=header>
                                    {cell.text}
                                </th>
                            }
                                .into_any()
                        } else {
                            view! {
                                <th scope="colgroup" colspan=cell.span class="group">
                                    {cell.text}
                                </th>
                            }
                                .into_any()
                        }
                    })
                    .collect_view()}
            </tr>
            <tr>
                {names
                    .into_iter()
                    .map(|column| {
                        view! {
                            <th scope="col" data-column=column.header>
                                {column.name}
                            </th>
                        }
                    })
                    .collect_view()}
            </tr>
        }
        .into_any(),
    }
}

#[component]
pub fn ResultsPanel(state: AppState) -> impl IntoView {
    let theme = Memo::new(move |_| Theme::of(state.dark.get()));
    let width = Memo::new(move |_| chart_width(state.window_width.get()));
    let per_class = RwSignal::new(false);
    let has_results = Memo::new(move |_| state.results.with(Option::is_some));
    let stale = Memo::new(move |_| {
        let current = state.params.get();
        state
            .results
            .with(|r| r.as_ref().is_some_and(|r| r.params != current))
    });
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
            <Verdict state />
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
                    }}
                </h3>
                <dl class="metrics" class:placeholder=move || !has_results.get()>
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
            <Costs state />
            <BatchPanel state />
            <ChartFigure
                id="series-figure"
                caption="Queue, batch, KV cache and replicas over the horizon"
                help_text=help::KV_CACHE
                chart=series_svg
            />
            <PlanResults state theme width />
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

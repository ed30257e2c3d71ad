//! The results: headline figures, the sojourn-time CDF, cost, the fleet
//! over time, the plan (candidates, cases, service curve, sensitivity) and
//! the tables behind every chart, each downloadable.

use leptos::prelude::*;
use sojourn_engine::PlanResult;

use crate::browser;
use crate::charts::{
    Chart, Theme, TornadoMetric, cdf_chart, chart_width, series_chart, service_curve_chart,
    tornado_chart, tornado_rows,
};
use crate::help;
use crate::panels::fields::Info;
use crate::panels::toolbar::file_stem;
use crate::results::{
    Figure, analytic_table, candidates_table, cases_table, cdf_input, cdf_table, class_table,
    cost_segments, cost_table, curve_table, plan_figures, run_figures, sensitivity_table,
    series_table,
};
use crate::state::{AppState, PlanStatus, RunStatus};
use crate::table::Table;

fn figure_help(label: &str) -> Option<&'static str> {
    Some(match label {
        "P(miss)" => help::P_MISS,
        "Goodput" => help::GOODPUT,
        "Cost per successful request" | "Planned cost per success" => help::COST_PER_SUCCESS,
        "Utilization" => help::UTILIZATION,
        "Load (rho)" => help::RHO,
        "Planned replicas" => help::FAILURE_RESERVE,
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

/// A table with a CSV download.
#[component]
fn TableView(table: Table, #[prop(optional)] open: bool) -> impl IntoView {
    let csv = table.to_csv();
    let file = format!("{}.csv", table.id);
    let id = format!("table-{}", table.id);
    view! {
        <details class="data-table" open=open id=id>
            <summary>{table.title.clone()}</summary>
            <button
                type="button"
                class="small"
                aria-label=format!("Download {} as CSV", table.title)
                on:click=move |_| {
                    let _ = browser::download_text(&file, "text/csv", &csv);
                }
            >
                "CSV"
            </button>
            <div class="table-scroll">
                <table>
                    <thead>
                        <tr>
                            {table
                                .columns
                                .iter()
                                .map(|c| view! { <th scope="col">{c.clone()}</th> })
                                .collect_view()}
                        </tr>
                    </thead>
                    <tbody>
                        {table
                            .rows
                            .iter()
                            .map(|row| {
                                view! {
                                    <tr>
                                        {row
                                            .iter()
                                            .map(|cell| view! { <td>{cell.text.clone()}</td> })
                                            .collect_view()}
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
        </details>
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
                r.as_ref().map(|r| r.base.series.as_slice()).unwrap_or(&[]),
                &theme.get(),
                width.get(),
            )
        })
    });
    let warnings = Memo::new(move |_| {
        state.results.with(|r| {
            r.as_ref()
                .map(|r| r.base.warnings.clone())
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
                format!(
                    "Seed {}, {} replicas, {} requests simulated; digest {}.",
                    r.base.seed,
                    r.base.replicas,
                    crate::format::format_count(r.base.overall.arrived),
                    r.base.digest
                )
            })
        })
    };
    view! {
        <section
            class="results"
            aria-labelledby="results-heading"
            aria-busy=move || if state.run.with(RunStatus::is_running) { "true" } else { "false" }
        >
            <div class="results-head">
                <h2 id="results-heading">"Results"</h2>
                <span class="stale" class:shown=move || stale.get()>
                    "for earlier inputs: updating"
                </span>
            </div>
            {run_failed}
            <section class="headline" aria-label="Headline figures">
                <h3>"This configuration"</h3>
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
            <CostBreakdown state />
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
                                        <TableView table=cdf_table(&cdf.get_untracked()) />
                                        <TableView table=series_table(&r.base) />
                                    }
                                })
                        })
                }}
                {move || {
                    plan_of(&state)
                        .map(|plan| {
                            view! {
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
            "scenario": params,
            "link": crate::link::encode(&params).ok(),
            "base": r.as_ref().map(|r| &r.base),
            "cases": r.as_ref().map(|r| &r.cases),
            "plan": plan_of(state),
        })
    });
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

/// The configured fleet's cost: a bar of where the money goes, and the table.
#[component]
fn CostBreakdown(state: AppState) -> impl IntoView {
    let view = move || {
        state.results.with(|r| {
            r.as_ref().map(|r| {
                let bar = match cost_segments(&r.base) {
                    Some(segments) => {
                        let label = segments
                            .iter()
                            .map(|s| format!("{} {} ({})", s.label, crate::format::format_usd(s.usd), crate::format::format_percent_whole(s.share)))
                            .collect::<Vec<_>>()
                            .join(", ");
                        view! {
                            <div
                                class="cost-bar"
                                role="img"
                                aria-label=format!("Where the cost goes: {label}")
                            >
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
                                                {format!(
                                                    "{} {} ({})",
                                                    s.label,
                                                    crate::format::format_usd(s.usd),
                                                    crate::format::format_percent_whole(s.share),
                                                )}
                                            </li>
                                        }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                        .into_any()
                    }
                    None => view! {
                        <p class="panel-note">
                            "No price given: costs are in GPU-hours. Enter a price per GPU-hour under Prices to see USD."
                        </p>
                    }.into_any(),
                };
                view! {
                    {bar}
                    <TableView table=cost_table(&r.base) open=true />
                }
            })
        })
    };
    view! {
        <section class="cost-breakdown" aria-labelledby="cost-heading">
            <h3 id="cost-heading">
                "Cost breakdown" <Info topic="cost per success" text=help::COST_PER_SUCCESS />
            </h3>
            {view}
        </section>
    }
}

#[component]
fn PlanHeadline(state: AppState) -> impl IntoView {
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
                    stage: crate::job::Stage::Plan,
                } => format!("{label} ({:.0} %)", fraction * 100.0),
                RunStatus::Running { .. } => "Waiting for the simulation".to_string(),
                _ => "Not planned yet".to_string(),
            };
            view! {
                <div class="metric">
                    <dt>"Planned replicas"</dt>
                    <dd>
                        <span class="metric-value">"…"</span>
                        <span class="metric-detail">{label.clone()}</span>
                    </dd>
                </div>
                <div class="metric">
                    <dt>"Planned cost per success"</dt>
                    <dd>
                        <span class="metric-value">"…"</span>
                        <span class="metric-detail">{label}</span>
                    </dd>
                </div>
            }
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
fn PlanResults(state: AppState, theme: Memo<Theme>, width: Memo<u32>) -> impl IntoView {
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
            p.as_ref().and_then(|p| p.recommendation.clone()).map(|r| {
                let fmt = |v: Option<f64>| v.map(|v| crate::format::format_number(v, 3)).unwrap_or_else(|| "–".to_string());
                view! {
                    <dl class="plan-details">
                        <div>
                            <dt>"Fleet"</dt>
                            <dd>
                                {format!(
                                    "{} steady + {} failure reserve + {} warm idle = {} replicas ({} GPUs) of {}",
                                    r.steady_replicas,
                                    r.failure_reserve_replicas,
                                    r.warm_idle_replicas,
                                    r.total_replicas,
                                    r.total_gpus,
                                    r.candidate,
                                )}
                            </dd>
                        </div>
                        <div>
                            <dt>"Admission limit"</dt>
                            <dd>
                                {r
                                    .admission_limit_per_replica
                                    .map(|l| {
                                        format!(
                                            "{} waiting requests per replica",
                                            crate::format::format_count(l),
                                        )
                                    })
                                    .unwrap_or_else(|| "–".to_string())}
                            </dd>
                        </div>
                        <div>
                            <dt>"Scale up when"</dt>
                            <dd>
                                {format!(
                                    "waiting per replica stays above {} or KV cache use above {}",
                                    fmt(r.scale_up_queue_per_replica),
                                    r
                                        .scale_up_kv_utilization
                                        .map(crate::format::format_percent_whole)
                                        .unwrap_or_else(|| "–".to_string()),
                                )}
                            </dd>
                        </div>
                        <div>
                            <dt>"Headroom"</dt>
                            <dd>
                                {format!(
                                    "{}; {}",
                                    r
                                        .headroom_to_knee
                                        .map(|h| {
                                            format!(
                                                "{} below the knee",
                                                crate::format::format_percent_whole(h),
                                            )
                                        })
                                        .unwrap_or_else(|| {
                                            "no knee within the service curve".to_string()
                                        }),
                                    r
                                        .headroom_to_sla_limit
                                        .map(|h| {
                                            format!(
                                                "{} below the SLA limit",
                                                crate::format::format_percent_whole(h),
                                            )
                                        })
                                        .unwrap_or_else(|| {
                                            "every point of the curve meets the targets".to_string()
                                        }),
                                )}
                            </dd>
                        </div>
                        <div>
                            <dt>"Cost basis"</dt>
                            <dd>{r.budget.basis.label()}</dd>
                        </div>
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
                    crate::format::format_count(p.simulated_requests),
                    p.replications,
                    match p.decision {
                        sojourn_engine::DecisionRule::Mean => "mean",
                        sojourn_engine::DecisionRule::Upper95 => "upper end of the 95% interval",
                    },
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
                                view! {
                                    <TableView
                                        table=cases_table(&r.base, &r.cases, plan.as_ref())
                                        open=true
                                    />
                                }
                            })
                    })
            }}
            {move || {
                plan.get()
                    .map(|plan| view! { <TableView table=candidates_table(&plan) open=true /> })
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
    let svg = format!(
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"{message}\">\
         <rect width=\"100%\" height=\"100%\" fill=\"{bg}\"/>\
         <text x=\"50%\" y=\"50%\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"14\" fill=\"{ink}\">{message}…</text></svg>",
        bg = crate::charts::hex(theme.background),
        ink = crate::charts::hex(theme.muted),
    );
    Chart {
        svg,
        width,
        height,
        title: title.to_string(),
    }
}

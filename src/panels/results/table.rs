//! A table of the results as the page shows it: its rows in the page's
//! column order (`tables.rs`), in a box that scrolls sideways, with a CSV
//! download that says where it comes from.

use leptos::prelude::*;
use sojourn_engine::DataTable;

use crate::browser;
use crate::state::AppState;
use crate::tables::{cell_class, grouped_headers, in_order, page_order, sentence_columns};

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

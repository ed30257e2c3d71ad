//! The "Batches" panel: what the engine steps of the base run were like
//! (the engine's batch statistics): the running batch and the tokens per
//! step, the stepping rate, step time by part as a bar, KV cache use over
//! time as a strip of bars, and the tables behind them. Every number and
//! word comes from the engine's present layer, as in the CLI's summary.

use leptos::prelude::*;
use sojourn_engine::{
    batch_lines, batch_table, kv_use_table, kv_use_words, step_time_parts, step_time_table,
};

use super::TableView;
use crate::format::format_percent_whole;
use crate::panels::fields::Info;
use crate::state::AppState;

const HELP: &str = "What the engine's steps were like, over every step of the run and all replicas. Running batch: the sequences in a step (decodes and prompt chunks), weighted by step time (what a typical moment of work looks like; the table also weighs every step alike). Step time is split in proportion to the tokens of each step: first-time prompt tokens (prefill), decode tokens, and tokens computed again after a preemption (recomputation). KV cache: the mean of the fleet's samples and the fullest any replica got, over stretches of the run.";

#[component]
pub fn BatchPanel(state: AppState) -> impl IntoView {
    let body = move || {
        state.results.with(|r| {
            r.as_ref().map(|r| {
                let stats = &r.base.report.batches;
                let [batch, rate, split] = batch_lines(stats);
                let parts = step_time_parts(stats);
                let stretches: Vec<_> = stats
                    .kv_use
                    .iter()
                    .map(|kv| (kv_use_words(kv), kv.mean, kv.peak))
                    .collect();
                let kv_label = stretches
                    .iter()
                    .map(|s| s.0.as_str())
                    .collect::<Vec<_>>()
                    .join("; ");
                view! {
                    <p class="batch-line">{batch}</p>
                    <p class="batch-line">{rate}</p>
                    <div class="cost-bar" role="img" aria-label=split.clone()>
                        {parts
                            .iter()
                            .map(|p| {
                                view! {
                                    <span
                                        class=format!("seg batch-{}", p.key)
                                        style:width=format!("{:.2}%", p.share * 100.0)
                                        title=p.label
                                    ></span>
                                }
                            })
                            .collect_view()}
                    </div>
                    <ul class="memory-legend">
                        {parts
                            .iter()
                            .map(|p| {
                                view! {
                                    <li>
                                        <span class=format!("swatch batch-{}", p.key)></span>
                                        {format!("{} {}", p.label, format_percent_whole(p.share))}
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                    <div
                        class="kv-use"
                        role="img"
                        aria-label=format!("KV cache used over time: {kv_label}")
                    >
                        {stretches
                            .into_iter()
                            .map(|(words, mean, peak)| {
                                view! {
                                    <span class="kv-stretch" title=words>
                                        <span
                                            class="kv-peak"
                                            style:height=format!("{:.1}%", peak * 100.0)
                                        ></span>
                                        <span
                                            class="kv-mean"
                                            style:height=format!("{:.1}%", mean * 100.0)
                                        ></span>
                                    </span>
                                }
                            })
                            .collect_view()}
                    </div>
                    <ul class="memory-legend">
                        <li>
                            <span class="swatch kv-mean"></span>
                            "KV cache used, mean of the samples"
                        </li>
                        <li>
                            <span class="swatch kv-peak"></span>
                            "peak (fullest replica)"
                        </li>
                    </ul>
                    <TableView table=batch_table(&r.base) open=true />
                    <TableView table=step_time_table(&r.base) />
                    <TableView table=kv_use_table(&r.base) />
                }
            })
        })
    };
    view! {
        <section class="batches" aria-labelledby="batches-heading">
            <h3 id="batches-heading">"Batches" <Info topic="batches" text=HELP /></h3>
            {body}
        </section>
    }
}

//! How a run's batch statistics read ([`BatchStats`]): the CLI
//! summary's lines, the parts of step time (the page's bar), and the
//! tables of the running batch, of step time and of KV cache use over time.

use super::run_tables::{count_cell, percent_cell};
use super::summary::RunSummary;
use super::table::{Cell, DataTable};
use crate::format::{format_count, format_duration_s, format_number, format_percent_whole};
use crate::report::{BatchStats, KvUse, StepSpread};

/// One part of the engine's step time: prefill, decode or recomputation.
#[derive(Clone, Debug, PartialEq)]
pub struct StepTimePart {
    /// A stable key (CSS classes).
    pub key: &'static str,
    pub label: &'static str,
    /// Replica-seconds.
    pub seconds: f64,
    /// Fraction of all step time (NaN without steps).
    pub share: f64,
}

/// Prefill (first-time prompt tokens), decode and recomputation, with
/// their shares of step time.
pub fn step_time_parts(stats: &BatchStats) -> [StepTimePart; 3] {
    let total = stats.prefill_s + stats.decode_s + stats.recompute_s;
    let part = |key, label, seconds: f64| StepTimePart {
        key,
        label,
        seconds,
        share: seconds / total,
    };
    [
        part("prefill", "prefill", stats.prefill_s),
        part("decode", "decode", stats.decode_s),
        part("recompute", "recomputation", stats.recompute_s),
    ]
}

/// A per-step figure in a few words: "52.3 (p50 48, p99 96)".
fn spread_words(spread: &StepSpread) -> String {
    format!(
        "{} (p50 {}, p99 {})",
        format_number(spread.mean, 3),
        format_number(spread.p50, 3),
        format_number(spread.p99, 3)
    )
}

/// The batch statistics in three lines (the CLI's summary, the page's
/// panel): the running batch and the tokens per step weighted by step
/// time, the stepping rate, and the parts of step time.
pub fn batch_lines(stats: &BatchStats) -> [String; 3] {
    let parts = step_time_parts(stats)
        .map(|p| format!("{} {}", p.label, format_percent_whole(p.share)))
        .join(", ");
    [
        format!(
            "running batch {} sequences, {} tokens per step (over step time)",
            spread_words(&stats.batch_size.by_time),
            spread_words(&stats.tokens_per_step.by_time)
        ),
        format!(
            "{} steps, {} per second of step time (mean step {})",
            format_count(stats.steps),
            format_number(stats.steps_per_s, 3),
            format_duration_s(1.0 / stats.steps_per_s)
        ),
        format!("step time: {parts}"),
    ]
}

/// One stretch of KV cache use in words: "2–3 h: mean 41 %, peak 88 %".
pub fn kv_use_words(kv: &KvUse) -> String {
    format!(
        "{}–{} h: mean {}, peak {}",
        format_number(kv.start_s / 3600.0, 3),
        format_number(kv.end_s / 3600.0, 3),
        format_percent_whole(kv.mean),
        format_percent_whole(kv.peak)
    )
}

fn figure_cell(value: f64) -> Cell {
    if value.is_nan() {
        Cell::empty()
    } else {
        Cell::number(value, format_number(value, 3))
    }
}

/// The running batch and the tokens per step, each weighted by step time
/// and by step.
pub fn batch_table(run: &RunSummary) -> DataTable {
    let stats = &run.report.batches;
    let mut table = DataTable::new(
        "batches",
        format!(
            "Batches ({} engine steps, all replicas)",
            format_count(stats.steps)
        ),
        &["per step", "weighted by", "mean", "p50", "p99"],
    );
    let figures = [
        ("sequences", &stats.batch_size),
        ("tokens", &stats.tokens_per_step),
    ];
    for (what, figure) in figures {
        for (weight, spread) in [("step time", &figure.by_time), ("step", &figure.by_step)] {
            table.rows.push(vec![
                Cell::text(what),
                Cell::text(weight),
                figure_cell(spread.mean),
                figure_cell(spread.p50),
                figure_cell(spread.p99),
            ]);
        }
    }
    table
}

/// Step time by part, in replica-hours and as shares, and the stepping rate.
pub fn step_time_table(run: &RunSummary) -> DataTable {
    let stats = &run.report.batches;
    let mut table = DataTable::new(
        "step-time",
        "Step time by part",
        &["part", "replica-hours [h]", "share"],
    );
    let hours = |seconds: f64| Cell::number(seconds / 3600.0, format_number(seconds / 3600.0, 3));
    for part in step_time_parts(stats) {
        table.rows.push(vec![
            Cell::text(part.label),
            hours(part.seconds),
            percent_cell(part.share),
        ]);
    }
    table.rows.push(vec![
        Cell::text("steps"),
        count_cell(stats.steps),
        Cell::empty(),
    ]);
    table.rows.push(vec![
        Cell::text("steps per second of step time"),
        figure_cell(stats.steps_per_s),
        Cell::empty(),
    ]);
    table
}

/// KV cache use over the run, stretch by stretch.
pub fn kv_use_table(run: &RunSummary) -> DataTable {
    let mut table = DataTable::new(
        "kv-use",
        "KV cache used over time",
        &[
            "from [h]",
            "to [h]",
            "mean (fleet, at samples)",
            "peak (fullest replica)",
        ],
    );
    let hours = |seconds: f64| Cell::number(seconds / 3600.0, format_number(seconds / 3600.0, 4));
    let share = |fraction: f64| Cell::number(fraction, format_percent_whole(fraction));
    for kv in &run.report.batches.kv_use {
        table.rows.push(vec![
            hours(kv.start_s),
            hours(kv.end_s),
            share(kv.mean),
            share(kv.peak),
        ]);
    }
    table
}

//! How the page writes numbers. Counts, percentages, durations, money and
//! sizes read as in the CLI: they are the engine's (`sojourn_engine`'s
//! presentation layer), re-exported here for the page's modules. What is the
//! page's own is how an input box shows a value.

pub use sojourn_engine::{
    counted, format_count, format_duration_s, format_gib, format_number, format_percent,
    format_percent_interval, format_percent_whole, format_usd,
};

/// A plain value as an input box shows it: the shortest text that reads back
/// as the same `f64` ("0.2", "1800", "86400").
pub fn input_text(value: f64) -> String {
    if value.is_finite() && value == value.trunc() && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

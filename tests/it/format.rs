//! How the page writes numbers.

use sojourn_app::format::{
    format_count, format_duration_s, format_number, format_percent, format_percent_interval,
    format_usd, input_text,
};

#[test]
fn counts_get_thousands_separators() {
    let check = |count, expected: &str| assert_eq!(format_count(count), expected);
    check(0, "0");
    check(999, "999");
    check(1_000, "1,000");
    check(12_345, "12,345");
    check(1_234_567, "1,234,567");
}

#[test]
fn probabilities_read_as_percentages() {
    let check = |probability, expected: &str| assert_eq!(format_percent(probability), expected);
    check(0.0, "0.00 %");
    check(0.0123, "1.23 %");
    check(1.0, "100.00 %");
    // Not zero, but would round to zero: say so rather than print 0.00 %.
    check(0.000_01, "< 0.01 %");
    check(f64::NAN, "n/a");
    assert_eq!(format_percent_interval([0.00936, 0.01069]), "0.94–1.07 %");
}

#[test]
fn durations_pick_a_readable_unit() {
    let check = |duration_s, expected: &str| assert_eq!(format_duration_s(duration_s), expected);
    check(0.25, "250 ms");
    check(1.0, "1.0 s");
    check(90.0, "90.0 s");
    check(600.0, "10.0 min");
    check(12_240.0, "3.4 h");
    check(-1.0, "n/a");
    // A percentile among requests that never finished.
    check(f64::INFINITY, "never");
}

#[test]
fn money_keeps_three_significant_digits_when_small() {
    let check = |usd, expected: &str| assert_eq!(format_usd(usd), expected);
    check(12_345.4, "$12,345");
    check(12.345, "$12.35");
    check(0.0123, "$0.0123");
    check(0.000_846, "$0.000846");
    check(0.0, "$0");
    check(f64::NAN, "n/a");
}

#[test]
fn plain_numbers_round_to_significant_digits() {
    let check = |value, digits, expected: &str| assert_eq!(format_number(value, digits), expected);
    check(1800.0, 4, "1,800");
    check(0.45, 3, "0.45");
    check(0.000_123_4, 3, "0.000123");
    check(123_456.0, 3, "123,456");
    check(f64::INFINITY, 3, "∞");
}

#[test]
fn input_boxes_show_the_shortest_text_that_reads_back() {
    for value in [0.2, 1800.0, 86_400.0, 1e-4, 0.1 + 0.2] {
        let text = input_text(value);
        assert_eq!(text.parse::<f64>(), Ok(value), "{text}");
    }
    assert_eq!(input_text(1800.0), "1800");
}

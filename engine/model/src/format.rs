//! How numbers read, on the page, in the CLI and in the planner's messages:
//! counts, percentages and their intervals, durations, money, plain
//! numbers, multiples and sizes for tables and figures (`format_*`), and
//! the shorter words of sentences (`duration`, `percent`,
//! `percentile_label`). One implementation, so no two places write the same
//! number two ways. A foundation module (no dependency on the rest of the
//! engine), so the planner below `present` uses it too. Magnitudes come from `libm::log10` (the engine calls no platform
//! maths).

/// What a missing value reads as (an en dash, as on the page).
pub const MISSING: &str = "–";

/// A count with thousands separators: `12345` becomes "12,345".
pub fn format_count(count: u64) -> String {
    let digits = count.to_string();
    let mut text = String::with_capacity(digits.len() + digits.len() / 3);
    for (idx, digit) in digits.chars().enumerate() {
        if idx > 0 && (digits.len() - idx).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

/// `count` and its noun: "1 replica", "1,200 replicas".
pub fn counted(count: u64, noun: &str) -> String {
    format!(
        "{} {noun}{}",
        format_count(count),
        if count == 1 { "" } else { "s" }
    )
}

/// A probability as a percentage with two decimals: `0.0123` becomes "1.23 %".
/// Probabilities that would round to zero but are not zero read "< 0.01 %".
pub fn format_percent(probability: f64) -> String {
    if !probability.is_finite() {
        return "n/a".to_string();
    }
    let percent = probability * 100.0;
    if percent > 0.0 && percent < 0.005 {
        "< 0.01 %".to_string()
    } else {
        format!("{percent:.2} %")
    }
}

/// A fraction as a whole percentage: `0.284` becomes "28 %".
pub fn format_percent_whole(fraction: f64) -> String {
    if !fraction.is_finite() {
        return "n/a".to_string();
    }
    format!("{:.0} %", fraction * 100.0)
}

/// A 95% interval of a probability: "0.94–1.07 %".
pub fn format_percent_interval(interval: [f64; 2]) -> String {
    let [low, high] = interval;
    if !(low.is_finite() && high.is_finite()) {
        return "n/a".to_string();
    }
    format!("{:.2}–{:.2} %", low * 100.0, high * 100.0)
}

/// A difference of two probabilities in percentage points: "+0.144 pp".
pub fn format_percent_points(difference: f64) -> String {
    if !difference.is_finite() {
        return MISSING.to_string();
    }
    format!("{:+.3} pp", difference * 100.0)
}

/// A duration \[s\] in the largest unit that keeps it readable:
/// milliseconds below 1 s, seconds below 2 min, minutes below 2 h, then hours.
/// Infinite durations (requests that never finished) read "never".
pub fn format_duration_s(duration_s: f64) -> String {
    if duration_s == f64::INFINITY {
        return "never".to_string();
    }
    if !duration_s.is_finite() || duration_s < 0.0 {
        return "n/a".to_string();
    }
    if duration_s < 1.0 {
        format!("{:.0} ms", duration_s * 1e3)
    } else if duration_s < 120.0 {
        format!("{duration_s:.1} s")
    } else if duration_s < 7200.0 {
        format!("{:.1} min", duration_s / 60.0)
    } else {
        format!("{:.1} h", duration_s / 3600.0)
    }
}

/// A signed difference of two durations in seconds: "+7.0 s", "-25.5 s".
pub fn format_signed_s(difference_s: f64) -> String {
    if !difference_s.is_finite() {
        return MISSING.to_string();
    }
    format!("{difference_s:+.1} s")
}

/// An amount of money \[USD\] with precision that suits its size:
/// "$1,234", "$12.35", "$0.0123", "$0.000123".
pub fn format_usd(usd: f64) -> String {
    if !usd.is_finite() {
        return "n/a".to_string();
    }
    let sign = if usd < 0.0 { "-" } else { "" };
    let amount = usd.abs();
    if amount >= 1000.0 {
        format!("{sign}${}", format_count(amount.round() as u64))
    } else if amount >= 1.0 {
        format!("{sign}${amount:.2}")
    } else if amount == 0.0 {
        "$0".to_string()
    } else {
        // Three significant digits for small unit costs.
        let decimals = (2.0 - libm::log10(amount).floor()).clamp(2.0, 9.0) as usize;
        format!("{sign}${amount:.decimals$}")
    }
}

/// A number with `significant` significant digits and thousands separators
/// for large values, without an exponent: "1,800", "0.45", "0.000123".
pub fn format_number(value: f64, significant: u32) -> String {
    if !value.is_finite() {
        return if value.is_nan() { "n/a" } else { "∞" }.to_string();
    }
    if value == 0.0 {
        return "0".to_string();
    }
    let magnitude = libm::log10(value.abs()).floor() as i32;
    let decimals = (significant as i32 - 1 - magnitude).max(0) as usize;
    if decimals == 0 {
        let rounded = value.abs().round() as u64;
        let sign = if value < 0.0 { "-" } else { "" };
        return format!("{sign}{}", format_count(rounded));
    }
    let text = format!("{value:.decimals$}");
    // Trailing zeros after the point add nothing.
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

/// A multiple of something (a load, a ratio to a threshold), three
/// significant digits: "1.23x", "0.5x".
pub fn format_multiple(value: f64) -> String {
    format!("{}x", format_number(value, 3))
}

/// Bytes as GiB with one decimal: "15.0 GiB".
pub fn format_gib(bytes: f64) -> String {
    if !bytes.is_finite() {
        return "n/a".to_string();
    }
    format!("{:.1} GiB", bytes / 1_073_741_824.0)
}

/// `value` written by `show`, or [`MISSING`].
pub fn format_or_missing(value: Option<f64>, show: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| MISSING.to_string(), show)
}

/// "yes" or "no".
pub fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

// Words for sentences (the planner's target descriptions and messages):
// as short as the value allows, trailing zeros trimmed.

/// "1%", "0.1%", "100%".
pub fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p >= 1.0 && p == p.round() {
        format!("{p:.0}%")
    } else {
        let text = format!("{p:.3}");
        format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// "p99", "p99.9", "p95".
pub fn percentile_label(p: f64) -> String {
    let text = format!("{:.3}", p * 100.0);
    format!("p{}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// A duration for messages: "850 ms", "30 s", "12.5 min", "24 h".
pub fn duration(s: f64) -> String {
    let trim = |x: f64| {
        let text = format!("{x:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if !s.is_finite() {
        "never".to_string()
    } else if s < 1.0 {
        format!("{} ms", trim(s * 1000.0))
    } else if s < 120.0 {
        format!("{} s", trim(s))
    } else if s < 7200.0 {
        format!("{} min", trim(s / 60.0))
    } else {
        format!("{} h", trim(s / 3600.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        check(0.000_05, "0.01 %");
        check(f64::NAN, "n/a");
        assert_eq!(format_percent_interval([0.00936, 0.01069]), "0.94–1.07 %");
        assert_eq!(format_percent_interval([0.0, f64::NAN]), "n/a");
        assert_eq!(format_percent_whole(0.284), "28 %");
        assert_eq!(format_percent_points(0.001_44), "+0.144 pp");
        assert_eq!(format_percent_points(-0.01), "-1.000 pp");
        assert_eq!(format_percent_points(f64::INFINITY), MISSING);
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        let check =
            |duration_s, expected: &str| assert_eq!(format_duration_s(duration_s), expected);
        check(0.25, "250 ms");
        check(1.0, "1.0 s");
        check(90.0, "90.0 s");
        check(600.0, "10.0 min");
        check(12_240.0, "3.4 h");
        check(86_400.0, "24.0 h");
        check(-1.0, "n/a");
        check(f64::NAN, "n/a");
        // A percentile among requests that never finished.
        check(f64::INFINITY, "never");
        // Each unit starts exactly at its boundary.
        check(0.999, "999 ms");
        check(119.9, "119.9 s");
        check(120.0, "2.0 min");
        check(7199.0, "120.0 min");
        check(7200.0, "2.0 h");
        assert_eq!(format_signed_s(7.04), "+7.0 s");
        assert_eq!(format_signed_s(-25.5), "-25.5 s");
        assert_eq!(format_signed_s(f64::NAN), MISSING);
    }

    #[test]
    fn money_keeps_three_significant_digits_when_small() {
        let check = |usd, expected: &str| assert_eq!(format_usd(usd), expected);
        check(12_345.4, "$12,345");
        check(1000.0, "$1,000");
        check(12.345, "$12.35");
        check(1.0, "$1.00");
        check(0.1, "$0.100");
        check(0.0123, "$0.0123");
        check(0.000_846, "$0.000846");
        check(0.0, "$0");
        check(-2.5, "-$2.50");
        check(f64::NAN, "n/a");
    }

    #[test]
    fn plain_numbers_round_to_significant_digits() {
        let check =
            |value, digits, expected: &str| assert_eq!(format_number(value, digits), expected);
        check(1800.0, 4, "1,800");
        check(1000.0, 3, "1,000");
        check(0.45, 3, "0.45");
        check(0.000_123_4, 3, "0.000123");
        check(123_456.0, 3, "123,456");
        check(-0.5, 3, "-0.5");
        check(f64::INFINITY, 3, "∞");
        check(f64::NAN, 3, "n/a");
        assert_eq!(format_multiple(1.234), "1.23x");
        assert_eq!(format_multiple(0.5), "0.5x");
        assert_eq!(format_gib(16.0 * 1_073_741_824.0), "16.0 GiB");
        assert_eq!(format_or_missing(None, format_usd), MISSING);
        assert_eq!(format_or_missing(Some(2.0), format_usd), "$2.00");
        assert_eq!((yes_no(true), yes_no(false)), ("yes", "no"));
    }
}

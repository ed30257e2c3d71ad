//! How the page writes numbers: counts, probabilities, durations, money,
//! sizes. Plain functions, tested natively (`tests/it/format.rs`).

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
        let decimals = (2.0 - amount.log10().floor()).clamp(2.0, 9.0) as usize;
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
    let magnitude = value.abs().log10().floor() as i32;
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

/// Bytes as GiB with one decimal: "15.0 GiB".
pub fn format_gib(bytes: f64) -> String {
    if !bytes.is_finite() {
        return "n/a".to_string();
    }
    format!("{:.1} GiB", bytes / 1_073_741_824.0)
}

/// A plain value as an input box shows it: the shortest text that reads back
/// as the same `f64` ("0.2", "1800", "86400").
pub fn input_text(value: f64) -> String {
    if value.is_finite() && value == value.trunc() && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

//! Reading what a user typed: numbers (a comma only groups thousands),
//! whole numbers, durations with units, and lists, with the message each
//! box shows when the text does not read.

use crate::format::input_text;

/// A number as typed: "1800", "1,800", "0.2", "1e-4". `None` if not a
/// number. A comma only separates thousands (groups of three digits before
/// any decimal point): "3,5" is refused, never read as 35, since in many
/// locales it means 3.5 (the box then asks for a decimal point).
pub fn parse_number(text: &str) -> Option<f64> {
    let text = text.trim();
    if text.contains(',') && !thousands_grouped(text) {
        return None;
    }
    let cleaned: String = text.chars().filter(|c| *c != ',' && *c != '_').collect();
    if cleaned.is_empty() {
        return None;
    }
    cleaned
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
}

/// Whether the commas of `text` group its integer part in thousands:
/// "1,800", "-12,345.5", not "3,5", "1,80" or "1,8000".
fn thousands_grouped(text: &str) -> bool {
    let whole = text.split(['.', 'e', 'E']).next().unwrap_or("");
    let whole = whole.trim_start_matches(['-', '+']);
    let mut groups = whole.split(',');
    let first = groups.next().unwrap_or("");
    (1..=3).contains(&first.len())
        && groups.all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()))
        && !text
            .split(['.', 'e', 'E'])
            .skip(1)
            .any(|rest| rest.contains(','))
}

/// A whole number of zero or more, as typed.
pub fn parse_count(text: &str) -> Option<u64> {
    let value = parse_number(text)?;
    (value >= 0.0 && value == value.trunc() && value <= u64::MAX as f64).then_some(value as u64)
}

/// What to say when a box holds text that is not a number.
pub const NOT_A_NUMBER: &str =
    "enter a number, with a point for decimals (3.5; a comma only separates thousands: 1,800)";
/// What to say when a box holds text that is not a whole number.
pub const NOT_A_COUNT: &str = "enter a whole number (0 or more)";
/// What to say when a duration does not read.
pub const NOT_A_DURATION: &str = "enter a duration such as 90 s, 15 min, 24 h or 2 d";

/// A duration as typed, in seconds: "90", "90 s", "250 ms", "15 min", "24h",
/// "1.5 d". A bare number is in seconds.
pub fn parse_duration_s(text: &str) -> Option<f64> {
    let text = text.trim().to_ascii_lowercase();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value = parse_number(number)?;
    let scale = match unit.trim() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "ms" => 1e-3,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86_400.0,
        _ => return None,
    };
    Some(value * scale)
}

/// A duration \[s\] as a duration box shows it, in the largest unit that
/// divides it: "24 h", "15 min", "90 s", "0.25 s".
pub fn duration_text(seconds: f64) -> String {
    if !seconds.is_finite() {
        return input_text(seconds);
    }
    let whole = |unit: f64| seconds >= unit && (seconds / unit).fract() == 0.0;
    if whole(3600.0) {
        format!("{} h", input_text(seconds / 3600.0))
    } else if whole(60.0) {
        format!("{} min", input_text(seconds / 60.0))
    } else {
        format!("{} s", input_text(seconds))
    }
}

/// A duration \[s\] in words, largest units first: "1 h 30 min",
/// "2 d 3 h", "36 h", "1 min 30 s", "250 ms".
pub fn duration_words(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return input_text(seconds);
    }
    if seconds > 0.0 && seconds < 1.0 {
        return format!("{} ms", input_text(rounded(seconds * 1e3)));
    }
    let mut rest = seconds;
    let mut parts = Vec::new();
    // Days from two on: a day's deadline reads "24 h", as the box shows it.
    for (unit, name, from) in [(86_400.0, "d", 2.0), (3600.0, "h", 1.0), (60.0, "min", 1.0)] {
        let count = (rest / unit).floor();
        if count >= from {
            parts.push(format!("{} {name}", input_text(count)));
            rest -= count * unit;
        }
    }
    let rest = rounded(rest);
    if rest > 0.0 || parts.is_empty() {
        parts.push(format!("{} s", input_text(rest)));
    }
    parts.join(" ")
}

/// `x` to a millionth: no float noise in the words ("0.1 s", not
/// "0.09999999999999432 s").
fn rounded(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// What a duration box's text reads as, when its text does not say it
/// plainly: "90 min = 1 h 30 min", "90 s = 1 min 30 s" for a bare "90"
/// (seconds); `None` for "24 h", text that says just that, or text that is
/// not a duration (its error says so).
pub fn duration_echo(typed: &str) -> Option<String> {
    let seconds = parse_duration_s(typed)?;
    let typed = typed.trim();
    let bare = !typed.contains(|c: char| c.is_ascii_alphabetic());
    let typed = if bare {
        format!("{typed} s")
    } else {
        typed.to_string()
    };
    let words = duration_words(seconds);
    let plain = |text: &str| text.to_ascii_lowercase().replace(' ', "");
    (plain(&typed) != plain(&words)).then(|| format!("{typed} = {words}"))
}

/// A list of numbers as typed: "0.5, 1, 1.5" (commas, semicolons or spaces).
pub fn parse_list(text: &str) -> Option<Vec<f64>> {
    text.split([',', ';', ' ', '\n', '\t'])
        .filter(|part| !part.trim().is_empty())
        .map(|part| part.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect()
}

/// What to say when a list of whole numbers does not read.
pub const NOT_COUNTS: &str = "enter whole numbers separated by commas, or leave it empty";
/// What to say when a list of limits does not read.
pub const NOT_LIMITS: &str =
    "enter whole numbers separated by commas (none for no limit), or leave it empty";
/// What to say when a list holds "1,024": a thousands separator or two values.
pub const AMBIGUOUS_COMMA: &str = "a comma between digits is ambiguous in a list (1,024 could be 1024 or 1 and 24): write numbers without thousands separators and put a space after each comma";

/// Whole numbers typed as a list ("64, 256"); with `none_allowed`, "none"
/// is an entry without a limit. An empty box is `None` (the default).
/// "1,024" is refused rather than read as 1 and 24 or as 1024.
pub fn parse_counts(
    text: &str,
    none_allowed: bool,
) -> Result<Option<Vec<Option<u32>>>, &'static str> {
    if ambiguous_comma(text) {
        return Err(AMBIGUOUS_COMMA);
    }
    let parts: Vec<&str> = text
        .split([',', ';', ' ', '\n', '\t'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect();
    if parts.is_empty() {
        return Ok(None);
    }
    let not_read = if none_allowed { NOT_LIMITS } else { NOT_COUNTS };
    parts
        .into_iter()
        .map(|part| {
            if none_allowed && part.eq_ignore_ascii_case("none") {
                Ok(None)
            } else {
                parse_count(part)
                    .and_then(|n| u32::try_from(n).ok())
                    .map(Some)
                    .ok_or(not_read)
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// Whether `text` has a comma between one to three digits and exactly
/// three ("1,024", "64,256"), which reads as a thousands group or as two
/// values.
fn ambiguous_comma(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        if b != b',' {
            return false;
        }
        let left = bytes[..i]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let right = bytes[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let before = i.checked_sub(left + 1).map(|j| bytes[j]);
        (1..=3).contains(&left) && right == 3 && before != Some(b'.')
    })
}

/// A list of whole numbers as its box shows it ("none" for no limit).
pub fn counts_text(values: &Option<Vec<Option<u32>>>) -> String {
    values.as_ref().map_or_else(String::new, |values| {
        values
            .iter()
            .map(|v| v.map_or_else(|| "none".to_string(), |n| n.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// A list as a list box shows it.
pub fn list_text(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| input_text(*v))
        .collect::<Vec<_>>()
        .join(", ")
}

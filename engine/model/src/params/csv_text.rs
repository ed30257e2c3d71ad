//! What the engine's three CSV readers share (a class's length pairs,
//! [`super::lengths_from_csv`]; a request trace,
//! [`super::trace::parse_trace_csv`]; a user's measurements, in
//! `calibration`): the separator, the records with the row each starts
//! on, and numbers as the file writes them.
//!
//! # Separator
//! The first line that is neither blank nor a `#` comment (the header, or
//! a headerless table's first row) decides, outside double quotes: a tab if
//! it holds one (a spreadsheet's cells pasted), else a semicolon if it holds
//! one (the CSV of the locales that write decimals with a comma), else a
//! comma. Every row uses that one; a row separated otherwise reads as one
//! field, and the error about its fields says so.
//!
//! # Rows
//! A record is numbered by the line it starts on, from 1, as a spreadsheet
//! numbers rows: the header (if any) is row 1, and blank lines and comment
//! lines count. Blank lines (even of spaces) and lines starting with `#` are
//! skipped; fields may be quoted and are trimmed; lines may end in CRLF.
//!
//! # Decimal commas
//! A decimal point always reads. A comma reads as the decimal mark only in
//! a file separated by semicolons or tabs, and only where it cannot be a
//! thousands separator: `1,5` and `0,050` are 1.5 and 0.05, while `1,500`
//! (one to three digits, the first not 0, a comma and three digits) could
//! be 1.5 or 1500 and is refused, as is a number with both marks or two
//! commas (digit grouping is never read). A file writes every number one
//! way: a number with a decimal comma in a file where another has a
//! decimal point is refused, naming the other's row. In a comma-separated
//! file the comma separates fields, so a quoted `"1,5"` is refused too.

use std::borrow::Cow;
use std::cell::Cell;

/// How a CSV text separates its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Separator {
    Comma,
    Semicolon,
    Tab,
}

impl Separator {
    /// The separator of `text`, read from its first line that is neither
    /// blank nor a comment (see the module's documentation).
    pub fn sniff(text: &str) -> Separator {
        let Some(first) = text
            .lines()
            .find(|line| !line.trim().is_empty() && !line.starts_with('#'))
        else {
            return Separator::Comma;
        };
        let (mut quoted, mut tab, mut semicolon) = (false, false, false);
        for c in first.chars() {
            match c {
                '"' => quoted = !quoted,
                '\t' if !quoted => tab = true,
                ';' if !quoted => semicolon = true,
                _ => {}
            }
        }
        if tab {
            Separator::Tab
        } else if semicolon {
            Separator::Semicolon
        } else {
            Separator::Comma
        }
    }

    fn byte(self) -> u8 {
        match self {
            Separator::Comma => b',',
            Separator::Semicolon => b';',
            Separator::Tab => b'\t',
        }
    }

    /// Its name, plural, for messages.
    fn name(self) -> &'static str {
        match self {
            Separator::Comma => "commas",
            Separator::Semicolon => "semicolons",
            Separator::Tab => "tabs",
        }
    }

    /// Why a row of `fields` does not match a header of `columns` columns.
    pub fn width_mismatch(self, fields: &csv::StringRecord, columns: usize) -> String {
        let plural = if fields.len() == 1 { "" } else { "s" };
        format!(
            "{} field{plural}, but the header names {columns} columns{}",
            fields.len(),
            self.hint(fields)
        )
    }

    /// A clause for an error about a row's number of fields: the other
    /// separator its single field holds, if any (the row is separated
    /// otherwise than the first), else nothing.
    pub fn hint(self, fields: &csv::StringRecord) -> String {
        let [field] = fields.iter().collect::<Vec<_>>()[..] else {
            return String::new();
        };
        [Separator::Tab, Separator::Semicolon, Separator::Comma]
            .into_iter()
            .find(|other| *other != self && field.contains(other.byte() as char))
            .map_or_else(String::new, |other| {
                format!(
                    " (the first row separates its fields with {}, this one with {}: use one separator throughout)",
                    self.name(),
                    other.name()
                )
            })
    }
}

/// A problem reading a record: its row and the reason.
pub type RecordError = (usize, String);

/// The records of `text` (separated by `separator`) with the row each
/// starts on, fields trimmed; blank lines and `#` comment lines skipped.
/// Records may differ in length: each reader checks its own.
pub fn records(
    text: &str,
    separator: Separator,
) -> impl Iterator<Item = Result<(usize, csv::StringRecord), RecordError>> + '_ {
    let line = |p: Option<&csv::Position>| line_at(text.as_bytes(), p.map_or(0, |p| p.byte()));
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(separator.byte())
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes())
        .into_records()
        .filter_map(move |record| match record {
            Ok(r) if r.iter().all(str::is_empty) => None,
            Ok(r) => Some(Ok((line(r.position()), r))),
            Err(e) => Some(Err((line(e.position()), e.to_string()))),
        })
}

/// The line (from 1) of the record the reader says starts at `byte`. The
/// reader's position can lie before the line ends, blank lines and comment
/// lines it skipped (its own line count misses blank lines and CRLF), so
/// those are passed over first.
fn line_at(text: &[u8], byte: u64) -> usize {
    let mut at = (byte as usize).min(text.len());
    while at < text.len() {
        let line_start = at == 0 || text[at - 1] == b'\n';
        match text[at] {
            b'#' if line_start => {
                at += text[at..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .unwrap_or(text.len() - at);
            }
            b if b.is_ascii_whitespace() => at += 1,
            _ => break,
        }
    }
    1 + text[..at].iter().filter(|b| **b == b'\n').count()
}

/// A decimal mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    Point,
    Comma,
}

/// The numbers of one file: the decimal comma's rules, and the first
/// decimal mark the file used with its row, so that a file mixing the two
/// is refused.
pub struct Numbers {
    separator: Separator,
    first_mark: Cell<Option<(Mark, usize)>>,
}

impl Numbers {
    pub fn new(separator: Separator) -> Numbers {
        Numbers {
            separator,
            first_mark: Cell::new(None),
        }
    }

    /// The number `text` of row `row`, or why it is none (the reason
    /// quotes the text; the caller names the row and column).
    pub fn read(&self, text: &str, row: usize) -> Result<f64, String> {
        self.plain(text, row)?
            .parse()
            .map_err(|_| format!("\"{text}\" is not a number"))
    }

    /// `text` with a decimal comma written as a point, for a parser that
    /// reads points only; refused as [`Numbers::read`] refuses it. Text that
    /// is no number is returned as it is, for the caller's parser to refuse.
    pub fn plain<'t>(&self, text: &'t str, row: usize) -> Result<Cow<'t, str>, String> {
        let commas = text.matches(',').count();
        let number = |t: &str| t.parse::<f64>().is_ok();
        let numeric = text.bytes().any(|b| b.is_ascii_digit())
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || b"+-.,eE".contains(&b));
        if commas == 0 || !numeric {
            if text.contains('.') && number(text) {
                self.mark(Mark::Point, text, row)?;
            }
            return Ok(Cow::Borrowed(text));
        }
        if self.separator == Separator::Comma {
            return Err(format!(
                "\"{text}\" holds a comma, which separates this file's fields: write decimals with a point (1.5) and digits without grouping"
            ));
        }
        if commas > 1 || text.contains('.') {
            return Err(format!(
                "\"{text}\" groups its digits, which is not read: write it without grouping (1234.5 or 1234,5)"
            ));
        }
        let pointed = text.replace(',', ".");
        if thousands_shaped(text) {
            return Err(format!(
                "\"{text}\" could be a decimal comma ({pointed}) or a thousands separator ({}): write it with a point ({pointed}) or without the comma",
                text.replace(',', "")
            ));
        }
        if !number(&pointed) {
            return Ok(Cow::Owned(pointed));
        }
        self.mark(Mark::Comma, text, row)?;
        Ok(Cow::Owned(pointed))
    }

    /// Keeps `mark` as the file's, or refuses it if another row used the
    /// other.
    fn mark(&self, mark: Mark, text: &str, row: usize) -> Result<(), String> {
        match self.first_mark.get() {
            None => {
                self.first_mark.set(Some((mark, row)));
                Ok(())
            }
            Some((first, _)) if first == mark => Ok(()),
            Some((_, first_row)) => {
                let (this, other) = match mark {
                    Mark::Comma => ("a decimal comma", "a decimal point"),
                    Mark::Point => ("a decimal point", "a decimal comma"),
                };
                Err(format!(
                    "\"{text}\" has {this}, but row {first_row} wrote a number with {other}: write every number of the file the same way"
                ))
            }
        }
    }
}

/// Whether `text` reads as a number with one thousands separator: an
/// optional sign, one to three digits (the first not 0), a comma and three
/// digits ("1,500", "-12,000").
fn thousands_shaped(text: &str) -> bool {
    let digits = text.trim_start_matches(['+', '-']);
    let Some((whole, part)) = digits.split_once(',') else {
        return false;
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(whole)
        && whole.len() <= 3
        && !whole.starts_with('0')
        && all_digits(part)
        && part.len() == 3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Vec<(usize, Vec<String>)> {
        records(text, Separator::sniff(text))
            .map(|r| {
                let (row, record) = r.expect("a record");
                (row, record.iter().map(str::to_string).collect())
            })
            .collect()
    }

    // The header line decides the separator: a tab over a semicolon over a
    // comma, none inside quotes; comment and blank lines before it are
    // passed over and every row keeps its line number.
    #[test]
    fn the_separator_is_sniffed_from_the_first_line() {
        for (text, separator) in [
            ("a,b\n1,2\n", Separator::Comma),
            ("# c;d\n\na;b\n1;2,5\n", Separator::Semicolon),
            ("a\tb;c,d\n", Separator::Tab),
            ("\"a;b\",c\n", Separator::Comma),
            ("", Separator::Comma),
        ] {
            assert_eq!(Separator::sniff(text), separator, "{text:?}");
        }
        assert_eq!(
            fields("# c\n\nx;y\r\n 1 ;\"2,5\"\n"),
            [
                (3, vec!["x".to_string(), "y".into()]),
                (4, vec!["1".into(), "2,5".into()]),
            ]
        );
    }

    fn read(separator: Separator, texts: &[&str]) -> Result<Vec<f64>, String> {
        let numbers = Numbers::new(separator);
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| numbers.read(t, i + 2))
            .collect()
    }

    // A decimal comma reads where the comma cannot be the separator or a
    // thousands separator; every ambiguity is refused, never guessed.
    #[test]
    fn decimal_commas_read_only_where_unambiguous() {
        let semicolon = Separator::Semicolon;
        assert_eq!(
            read(semicolon, &["1,5", "0,050", "1234,5", "-2,25", "12", "1e3"]),
            Ok(vec![1.5, 0.05, 1234.5, -2.25, 12.0, 1000.0])
        );
        assert_eq!(read(Separator::Tab, &["0,5"]), Ok(vec![0.5]));
        assert_eq!(read(semicolon, &["1.5", "2.25"]), Ok(vec![1.5, 2.25]));
        let refused = |separator, texts: &[&str], reason: &str| {
            let e = read(separator, texts).expect_err("refused");
            assert!(e.contains(reason), "{texts:?}: {e}");
        };
        refused(
            semicolon,
            &["1,500"],
            "could be a decimal comma (1.500) or a thousands separator (1500)",
        );
        refused(semicolon, &["-12,000"], "thousands separator");
        refused(semicolon, &["1.234,5"], "groups its digits");
        refused(semicolon, &["1,234,567"], "groups its digits");
        refused(Separator::Comma, &["1,5"], "separates this file's fields");
        refused(
            semicolon,
            &["0,5", "7", "1.5"],
            "\"1.5\" has a decimal point, but row 2 wrote a number with a decimal comma",
        );
        refused(
            Separator::Tab,
            &["1.5", "2,5"],
            "\"2,5\" has a decimal comma, but row 2 wrote a number with a decimal point",
        );
        refused(semicolon, &["abc"], "\"abc\" is not a number");
        refused(semicolon, &["a,b,c"], "\"a,b,c\" is not a number");
        refused(semicolon, &["1,5,"], "groups its digits");
    }

    #[test]
    fn a_row_separated_otherwise_is_named() {
        let record = csv::StringRecord::from(vec!["100;20"]);
        assert_eq!(
            Separator::Tab.hint(&record),
            " (the first row separates its fields with tabs, this one with semicolons: use one separator throughout)"
        );
        assert_eq!(
            Separator::Comma.hint(&csv::StringRecord::from(vec!["100"])),
            ""
        );
        assert_eq!(
            Separator::Comma.width_mismatch(&csv::StringRecord::from(vec!["1\t2"]), 3),
            "1 field, but the header names 3 columns (the first row separates its fields with commas, this one with tabs: use one separator throughout)"
        );
    }
}

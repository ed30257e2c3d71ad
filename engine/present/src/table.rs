//! Tables of numbers: what the page shows under "Numbers behind the charts",
//! what its CSV downloads hold and what the CLI prints. Each cell keeps its
//! raw value (for CSV, in full precision) and its text (for the page and the
//! terminal); each column its name and unit.

/// One cell: the text shown and the value exported.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub text: String,
    pub value: CellValue,
}

/// What a cell exports to CSV.
#[derive(Clone, Debug, PartialEq)]
pub enum CellValue {
    Number(f64),
    Text(String),
    Empty,
}

impl Cell {
    /// A number shown as `text`.
    pub fn number(value: f64, text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            value: CellValue::Number(value),
        }
    }

    pub fn text(text: impl Into<String>) -> Cell {
        let text = text.into();
        Cell {
            value: CellValue::Text(text.clone()),
            text,
        }
    }

    /// A missing value, shown as [`MISSING`](crate::format::MISSING).
    pub fn empty() -> Cell {
        Cell {
            text: crate::format::MISSING.to_string(),
            value: CellValue::Empty,
        }
    }

    /// A number that may be absent.
    pub fn maybe(value: Option<f64>, show: impl Fn(f64) -> String) -> Cell {
        match value {
            Some(v) => Cell::number(v, show(v)),
            None => Cell::empty(),
        }
    }
}

/// A column: its name and the unit of its exported values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    /// The unit of the CSV values ("s", "USD", "req/h"), when they have one.
    pub unit: Option<&'static str>,
}

impl Column {
    /// A column from its header: "sojourn p99 \[s\]" has the name
    /// "sojourn p99" and the unit "s".
    pub fn parse(header: &'static str) -> Column {
        let unit = header
            .strip_suffix(']')
            .and_then(|rest| rest.rsplit_once(" ["));
        match unit {
            Some((name, unit)) => Column {
                name,
                unit: Some(unit),
            },
            None => Column {
                name: header,
                unit: None,
            },
        }
    }

    /// The header shown and exported: the name, then the unit in brackets.
    pub fn header(&self) -> String {
        match self.unit {
            Some(unit) => format!("{} [{unit}]", self.name),
            None => self.name.to_string(),
        }
    }
}

/// A column asked for by a name its table does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownColumn {
    /// The table's id.
    pub table: &'static str,
    pub name: String,
}

impl std::fmt::Display for UnknownColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "table \"{}\" has no column \"{}\"",
            self.table, self.name
        )
    }
}

impl std::error::Error for UnknownColumn {}

/// A titled table with a header row.
#[derive(Clone, Debug, PartialEq)]
pub struct DataTable {
    /// Stable id: the CSV file name and the page's element id.
    pub id: &'static str,
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
}

impl DataTable {
    /// An empty table; each header may end in its unit ("p99 \[s\]").
    pub fn new(id: &'static str, title: impl Into<String>, headers: &[&'static str]) -> DataTable {
        DataTable {
            id,
            title: title.into(),
            columns: headers.iter().map(|h| Column::parse(h)).collect(),
            rows: Vec::new(),
        }
    }

    pub fn headers(&self) -> Vec<String> {
        self.columns.iter().map(Column::header).collect()
    }

    /// The table's text (`to_text`) appended to `out`, each line indented.
    pub fn write_text(&self, out: &mut String, indent: &str) {
        for line in self.to_text() {
            out.push_str(indent);
            out.push_str(&line);
            out.push('\n');
        }
    }

    /// The table as CSV (RFC 4180): a header row, then one row per row.
    /// Numbers are written in full precision; infinities as `inf`; missing
    /// values (NaN included) as empty fields.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let line = |cells: Vec<String>| cells.join(",") + "\r\n";
        out.push_str(&line(self.headers().iter().map(|h| csv_field(h)).collect()));
        for row in &self.rows {
            out.push_str(&line(
                row.iter()
                    .map(|cell| match &cell.value {
                        CellValue::Number(x) if x.is_finite() => format!("{x}"),
                        CellValue::Number(x) if x.is_nan() => String::new(),
                        CellValue::Number(x) => if *x > 0.0 { "inf" } else { "-inf" }.to_string(),
                        CellValue::Text(t) => csv_field(t),
                        CellValue::Empty => String::new(),
                    })
                    .collect(),
            ));
        }
        out
    }

    /// The columns named (by name or header), in the order given; a name
    /// the table does not have is an error naming it (a renamed column
    /// must not vanish from the CLI's or the page's selection unseen).
    pub fn select(&self, names: &[&str]) -> Result<DataTable, UnknownColumn> {
        let picked = names
            .iter()
            .map(|n| {
                self.columns
                    .iter()
                    .position(|c| c.name == *n || c.header() == *n)
                    .ok_or_else(|| UnknownColumn {
                        table: self.id,
                        name: n.to_string(),
                    })
            })
            .collect::<Result<Vec<usize>, _>>()?;
        Ok(DataTable {
            id: self.id,
            title: self.title.clone(),
            columns: picked.iter().map(|&i| self.columns[i].clone()).collect(),
            rows: self
                .rows
                .iter()
                .map(|row| picked.iter().filter_map(|&i| row.get(i).cloned()).collect())
                .collect(),
        })
    }

    /// The table as aligned plain text, one line per row after the header
    /// line: columns two spaces apart, columns of words left-aligned, the
    /// rest (numbers and missing values) right-aligned, no trailing spaces.
    pub fn to_text(&self) -> Vec<String> {
        let headers = self.headers();
        let width = |i: usize| {
            self.rows
                .iter()
                .filter_map(|row| row.get(i))
                .map(|cell| cell.text.chars().count())
                .chain([headers[i].chars().count()])
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..headers.len()).map(width).collect();
        let numeric: Vec<bool> = (0..headers.len())
            .map(|i| {
                !self.rows.iter().any(|row| {
                    matches!(
                        row.get(i),
                        Some(Cell {
                            value: CellValue::Text(_),
                            ..
                        })
                    )
                })
            })
            .collect();
        let line = |texts: Vec<&str>| {
            let cells: Vec<String> = texts
                .iter()
                .enumerate()
                .map(|(i, text)| {
                    let pad = widths[i].saturating_sub(text.chars().count());
                    if numeric[i] {
                        format!("{}{text}", " ".repeat(pad))
                    } else {
                        format!("{text}{}", " ".repeat(pad))
                    }
                })
                .collect();
            cells.join("  ").trim_end().to_string()
        };
        let mut lines = vec![line(headers.iter().map(String::as_str).collect())];
        for row in &self.rows {
            lines.push(line(row.iter().map(|c| c.text.as_str()).collect()));
        }
        lines
    }
}

/// Quotes a CSV field when it holds a comma, quote or line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> DataTable {
        let mut table = DataTable::new("t", "Title", &["class", "P(miss)", "p99 [s]"]);
        table.rows.push(vec![
            Cell::text("api, \"fast\""),
            Cell::number(0.019_816_2, "1.98 %"),
            Cell::number(f64::INFINITY, "never"),
        ]);
        table.rows.push(vec![
            Cell::text("batch"),
            Cell::empty(),
            Cell::number(623.5, "10.4 min"),
        ]);
        table
    }

    #[test]
    fn csv_has_a_header_full_precision_and_quoting() {
        assert_eq!(
            example().to_csv(),
            "class,P(miss),p99 [s]\r\n\"api, \"\"fast\"\"\",0.0198162,inf\r\nbatch,,623.5\r\n"
        );
        let mut odd = DataTable::new("t", "Title", &["x"]);
        odd.rows.push(vec![Cell::number(f64::NAN, "n/a")]);
        odd.rows.push(vec![Cell::number(f64::NEG_INFINITY, "-∞")]);
        assert_eq!(odd.to_csv(), "x\r\n\r\n-inf\r\n");
    }

    #[test]
    fn plain_fields_are_not_quoted() {
        assert_eq!(csv_field("api"), "api");
        assert_eq!(csv_field("a\nb"), "\"a\nb\"");
        assert_eq!(csv_field("a\rb"), "\"a\rb\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn headers_keep_their_units() {
        let column = Column::parse("sojourn p99 [s]");
        assert_eq!((column.name, column.unit), ("sojourn p99", Some("s")));
        assert_eq!(column.header(), "sojourn p99 [s]");
        let plain = Column::parse("P(miss)");
        assert_eq!((plain.name, plain.unit), ("P(miss)", None));
        assert_eq!(example().headers(), ["class", "P(miss)", "p99 [s]"]);
    }

    #[test]
    fn text_aligns_numbers_right_and_words_left() {
        assert_eq!(
            example().to_text(),
            [
                "class        P(miss)   p99 [s]",
                "api, \"fast\"   1.98 %     never",
                "batch              –  10.4 min",
            ]
        );
    }

    #[test]
    fn a_selection_keeps_the_named_columns_in_order() {
        let picked = example().select(&["p99", "class"]).expect("both exist");
        assert_eq!(picked.headers(), ["p99 [s]", "class"]);
        assert_eq!(picked.rows[1][0].text, "10.4 min");
        assert_eq!(picked.rows[1][1].text, "batch");
    }

    #[test]
    fn selecting_a_column_the_table_lacks_is_an_error_naming_it() {
        let error = example()
            .select(&["p99", "no such column", "class"])
            .expect_err("no such column");
        assert_eq!(error.name, "no such column");
        assert_eq!(
            error.to_string(),
            format!(
                "table \"{}\" has no column \"no such column\"",
                example().id
            )
        );
    }
}

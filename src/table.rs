//! Tables of numbers: what the page shows under "Numbers behind the charts"
//! and what the CSV downloads hold. Each cell keeps its raw value (for CSV,
//! full precision) and its text (for the page).

/// One cell: the text shown and the value exported.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub text: String,
    pub value: CellValue,
}

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

    /// A missing value, shown as a dash.
    pub fn empty() -> Cell {
        Cell {
            text: "–".to_string(),
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

/// A titled table with a header row.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Stable id: the CSV file name and the DOM id.
    pub id: &'static str,
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    pub fn new(id: &'static str, title: impl Into<String>, columns: &[&str]) -> Table {
        Table {
            id,
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// The table as CSV (RFC 4180): a header row, then one row per row.
    /// Numbers are written in full precision; infinities as `inf`; missing
    /// values as empty fields.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let line = |cells: Vec<String>| cells.join(",") + "\r\n";
        out.push_str(&line(self.columns.iter().map(|c| csv_field(c)).collect()));
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
}

/// Quotes a CSV field when it holds a comma, quote or line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

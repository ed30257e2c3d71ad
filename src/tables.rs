//! How the page lays out the engine's tables: a finance reader must see
//! the money columns of a wide table without scrolling, so the page shows
//! them right after the first column (which stays in place as the scroll
//! moves the others); the CSV keeps the engine's order. Columns named
//! "group: name" ("own plan: USD per month") are shown under one header of
//! their group with their own short name below it, and a column of
//! sentences runs as a line under each row, so the plan's tables fit beside
//! their first column at 1280 px instead of scrolling.

use sojourn_engine::{Cell, CellValue, Column, DataTable};

/// Whether `column` holds money: its unit is USD, or its name speaks of
/// USD or cost ("USD per month", "cost swing").
pub fn is_money(column: &Column) -> bool {
    column.unit == Some("USD") || column.name.contains("USD") || column.name.starts_with("cost")
}

/// The order the page shows `columns` in, as indices: the first column,
/// then the money columns, then the others, each group in the engine's
/// order.
pub fn page_order(columns: &[Column]) -> Vec<usize> {
    let rest = 1..columns.len();
    let money = rest.clone().filter(|&i| is_money(&columns[i]));
    let other = rest.filter(|&i| !is_money(&columns[i]));
    (0..columns.len().min(1))
        .chain(money)
        .chain(other)
        .collect()
}

/// `items` (a header row or a row of cells) in `order`.
pub fn in_order<'a, T>(items: &'a [T], order: &'a [usize]) -> impl Iterator<Item = &'a T> + 'a {
    order.iter().filter_map(|&i| items.get(i))
}

/// How a cell may break across lines: figures never; words (a
/// configuration, "H100 SXM5 80GB x1, priority") where the table needs the
/// room; a sentence always.
pub fn cell_class(cell: &Cell) -> &'static str {
    match cell.value {
        CellValue::Text(_) if is_sentence(cell) => "sentence",
        CellValue::Text(_) => "words",
        _ => "",
    }
}

/// Text longer than this is a sentence (a configuration's label, "H100
/// SXM5 80GB x1, priority", is 27 characters).
const SENTENCE_CHARS: usize = 40;

fn is_sentence(cell: &Cell) -> bool {
    matches!(cell.value, CellValue::Text(_)) && cell.text.chars().count() > SENTENCE_CHARS
}

/// The columns, other than the first, that hold a sentence in some row (a
/// search's outcome, "6 replicas of H100 SXM5 80GB x1, FCFS meet every
/// target ..."): the page shows them as a line under each row, across the
/// table, instead of a column (as a column it pushed the table's last
/// columns out of sight).
pub fn sentence_columns(table: &DataTable) -> Vec<usize> {
    (1..table.columns.len())
        .filter(|&i| {
            table
                .rows
                .iter()
                .any(|row| row.get(i).is_some_and(is_sentence))
        })
        .collect()
}

/// A cell of a table's first header row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupHeader {
    pub text: String,
    /// How many columns it spans.
    pub span: usize,
    /// A column of no group: its whole header, over both rows.
    pub whole: bool,
}

/// A column of a group, in the second header row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupedColumn {
    /// Its whole header, "own plan: USD per month".
    pub header: String,
    /// What the row shows, "USD per month".
    pub name: String,
}

/// The group and the short name of a header "group: name", or `None`.
fn split_group(header: &str) -> Option<(&str, &str)> {
    header
        .split_once(": ")
        .filter(|(group, name)| !group.is_empty() && !name.is_empty())
}

/// `headers` (in the order shown) as two header rows when some are named
/// "group: name": the first row holds each run of neighbouring columns of
/// one group once, spanning them, and every other column whole; the second
/// the grouped columns' whole headers and short names. `None` when no
/// column has a group.
pub fn grouped_headers(headers: &[&str]) -> Option<(Vec<GroupHeader>, Vec<GroupedColumn>)> {
    if !headers.iter().any(|h| split_group(h).is_some()) {
        return None;
    }
    let mut top: Vec<GroupHeader> = Vec::new();
    let mut names = Vec::new();
    for header in headers {
        match split_group(header) {
            Some((group, name)) => {
                names.push(GroupedColumn {
                    header: header.to_string(),
                    name: name.to_string(),
                });
                match top.last_mut() {
                    Some(last) if !last.whole && last.text == group => last.span += 1,
                    _ => top.push(GroupHeader {
                        text: group.to_string(),
                        span: 1,
                        whole: false,
                    }),
                }
            }
            None => top.push(GroupHeader {
                text: header.to_string(),
                span: 1,
                whole: true,
            }),
        }
    }
    Some((top, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_columns_come_right_after_the_first() {
        let columns: Vec<Column> = [
            "case",
            "P(miss)",
            "own plan: USD per month",
            "replicas",
            "cost per success [USD]",
            "cost swing",
            "GPU-hours",
        ]
        .into_iter()
        .map(Column::parse)
        .collect();
        assert_eq!(page_order(&columns), [0, 2, 4, 5, 1, 3, 6]);
        let names: Vec<&str> = in_order(&columns, &page_order(&columns))
            .map(|c| c.name)
            .collect();
        assert_eq!(names[..2], ["case", "own plan: USD per month"]);
        assert!(page_order(&[]).is_empty());
    }

    #[test]
    fn columns_of_a_group_share_one_header_over_their_short_names() {
        let headers = [
            "case",
            "own plan: USD per month",
            "own plan: cost per success [USD]",
            "own plan: configuration",
            "plan's fleet: targets",
            "notes",
            "own plan: GPUs",
        ];
        let (top, names) = grouped_headers(&headers).expect("grouped");
        let top: Vec<(&str, usize, bool)> = top
            .iter()
            .map(|g| (g.text.as_str(), g.span, g.whole))
            .collect();
        assert_eq!(
            top,
            [
                ("case", 1, true),
                ("own plan", 3, false),
                ("plan's fleet", 1, false),
                ("notes", 1, true),
                ("own plan", 1, false),
            ]
        );
        let short: Vec<&str> = names.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            short,
            [
                "USD per month",
                "cost per success [USD]",
                "configuration",
                "targets",
                "GPUs"
            ]
        );
        assert_eq!(names[3].header, "plan's fleet: targets");
        assert_eq!(grouped_headers(&["case", "P(miss)"]), None);
    }

    #[test]
    fn sentences_go_under_their_row_words_may_wrap_figures_do_not() {
        let long = "6 replicas of H100 SXM5 80GB x1, FCFS meet every target";
        assert_eq!(cell_class(&Cell::text(long)), "sentence");
        assert_eq!(
            cell_class(&Cell::text("H100 SXM5 80GB x1, priority")),
            "words"
        );
        assert_eq!(cell_class(&Cell::number(1.0, "1".repeat(50))), "");
        let mut table = DataTable::new("t", "T", &["first", "a", "details", "b"]);
        table.rows.push(vec![
            Cell::text(long),
            Cell::number(1.0, "1"),
            Cell::text("short"),
            Cell::text("x"),
        ]);
        assert_eq!(
            sentence_columns(&table),
            Vec::<usize>::new(),
            "none but the first"
        );
        table.rows.push(vec![
            Cell::text("y"),
            Cell::number(2.0, "2"),
            Cell::text(long),
            Cell::empty(),
        ]);
        assert_eq!(sentence_columns(&table), [2]);
    }
}

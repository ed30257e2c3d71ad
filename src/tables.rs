//! How the page lays out the engine's tables: a finance reader must see
//! the money columns of a wide table without scrolling, so the page shows
//! them right after the first column (which stays in place as the scroll
//! moves the others); the CSV keeps the engine's order.

use sojourn_engine::Column;

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
}

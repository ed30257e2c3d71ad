//! Tables and their CSV.

use sojourn_app::table::{Cell, Table, csv_field};

#[test]
fn csv_has_a_header_full_precision_and_quoting() {
    let mut table = Table::new("t", "Title", &["class", "P(miss)", "p99 [s]"]);
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
    assert_eq!(
        table.to_csv(),
        "class,P(miss),p99 [s]\r\n\"api, \"\"fast\"\"\",0.0198162,inf\r\nbatch,,623.5\r\n"
    );
}

#[test]
fn plain_fields_are_not_quoted() {
    assert_eq!(csv_field("api"), "api");
    assert_eq!(csv_field("a\nb"), "\"a\nb\"");
}

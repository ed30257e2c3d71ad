//! How input boxes show numbers (the page's own format; every other number
//! format is the engine's, tested in `engine/model/src/format.rs`).

use sojourn_app::format::input_text;

#[test]
fn input_boxes_show_the_shortest_text_that_reads_back() {
    for value in [0.2, 1800.0, 86_400.0, 1e-4, 0.1 + 0.2] {
        let text = input_text(value);
        assert_eq!(text.parse::<f64>(), Ok(value), "{text}");
    }
    assert_eq!(input_text(1800.0), "1800");
}

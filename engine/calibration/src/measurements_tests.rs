use super::*;

/// `measurements` without the places they were read at, to compare the
/// same measurements read from different files.
fn unplaced(measurements: Measurements) -> Measurements {
    match measurements {
        Measurements::StepTimes(steps) => Measurements::StepTimes(
            steps
                .into_iter()
                .map(|s| MeasuredStep { place: None, ..s })
                .collect(),
        ),
        Measurements::Benchmarks(points) => Measurements::Benchmarks(
            points
                .into_iter()
                .map(|p| BenchmarkPoint { place: None, ..p })
                .collect(),
        ),
        table => table,
    }
}

fn check_error(text: &str, place: &str, reason_contains: &str) {
    let e = parse_measurements(text).expect_err("an error");
    assert_eq!(e.place, place, "{e}");
    assert!(e.reason.contains(reason_contains), "{e}");
}

#[test]
fn step_times_read_from_csv_and_json_alike() {
    let csv = "# a sweep\nprefill_tokens,decode_seqs,kv_tokens,step_s\n2048,0,2048,0.05\n\n0, 8, 8008 ,0.011\n";
    let json = r#"{"step_times": [
        {"prefill_tokens": 2048, "decode_seqs": 0, "kv_tokens": 2048, "step_s": 0.05},
        {"prefill_tokens": 0, "decode_seqs": 8, "kv_tokens": 8008, "step_s": 0.011}]}"#;
    let (Ok(Measurements::StepTimes(rows)), Ok(Measurements::StepTimes(items))) =
        (parse_measurements(csv), parse_measurements(json))
    else {
        panic!("step times expected");
    };
    // The same steps, each with its own place: the line of its row (the
    // comment is row 1, the header row 2), or its item.
    let places = |steps: &[MeasuredStep]| steps.iter().map(|s| s.place.clone()).collect::<Vec<_>>();
    assert_eq!(places(&rows), [Some(Place::Row(3)), Some(Place::Row(5))]);
    let item = |index| {
        Some(Place::Item {
            list: "step_times",
            index,
        })
    };
    assert_eq!(places(&items), [item(0), item(1)]);
    assert_eq!(
        unplaced(Measurements::StepTimes(rows.clone())),
        unplaced(Measurements::StepTimes(items))
    );
    let shape = rows[1].shape();
    assert_eq!((shape.decode_seqs, shape.decode_kv_tokens), (8, 8008));
    let shape = rows[0].shape();
    assert_eq!(
        (shape.prefill_tokens, shape.prefill_kv_tokens),
        (2048, 2048)
    );
    assert_eq!(shape.prefill_attention_pairs, 2048.0 * 2049.0 / 2.0);
}

/// The `csv` crate reads what spreadsheets write: quoted fields, CRLF line
/// ends, lines of spaces; rows keep their line numbers.
#[test]
fn csv_fields_may_be_quoted_and_lines_end_in_crlf() {
    let plain = "prefill_tokens,decode_seqs,kv_tokens,step_s\n2048,0,2048,0.05\n";
    let quoted =
        "prefill_tokens,decode_seqs,kv_tokens,step_s\r\n   \r\n\"2048\",0,2048,\" 0.05\"\r\n";
    assert_eq!(
        unplaced(parse_measurements(quoted).expect("quoted")),
        unplaced(parse_measurements(plain).expect("plain"))
    );
    check_error(
        "prefill_tokens,decode_seqs,kv_tokens,step_s\r\n\r\n# slow\r\n\"512\",0,512,\"fast\"\r\n",
        "row 4, column step_s",
        "\"fast\" is not a number",
    );
}

// A spreadsheet of a decimal-comma locale exports semicolons, and pasted
// cells are tab-separated: both read as the comma file does (the reader
// took commas only, so such a header was one unknown column). A number
// that could be read two ways, or a file writing decimals both ways, is
// refused by row and column.
#[test]
fn csv_may_be_separated_by_semicolons_or_tabs_with_decimal_commas() {
    let commas = "prefill_tokens,decode_seqs,kv_tokens,step_s\n2048,0,2048,0.05\n0,8,8008,0.011\n";
    let semicolons =
        "prefill_tokens;decode_seqs;kv_tokens;step_s\n2048;0;2048;0,05\n0;8;8008;0,011\n";
    let expected = parse_measurements(commas).expect("commas");
    assert_eq!(parse_measurements(semicolons), Ok(expected.clone()));
    assert_eq!(parse_measurements(&commas.replace(',', "\t")), Ok(expected));
    check_error(
        "prefill_tokens;decode_seqs;kv_tokens;step_s\n512;0;512;0,020\n512;0;512;0.03\n",
        "row 3, column step_s",
        "row 2 wrote a number with a decimal comma",
    );
    check_error(
        "mode\trequests\tinput_tokens\toutput_tokens\toutput_tokens_per_s\noffline\t1,000\t100\t10\t5000\n",
        "row 2, column requests",
        "or a thousands separator (1000)",
    );
    check_error(
        "prefill_tokens,decode_seqs,kv_tokens,step_s\n512,0,512,\"0,02\"\n",
        "row 2, column step_s",
        "separates this file's fields",
    );
}

#[test]
fn csv_errors_name_the_row_and_column() {
    let header = "prefill_tokens,decode_seqs,kv_tokens,step_s\n";
    check_error(
        &format!("{header}512,0,512,0.02\n512,0,512,abc\n"),
        "row 3, column step_s",
        "\"abc\" is not a number",
    );
    check_error(
        &format!("# comment\n{header}0,8,4,0.01\n"),
        "row 3, column kv_tokens",
        "each decode reads at least one",
    );
    check_error(
        &format!("{header}512,0,512\n"),
        "row 2",
        "3 fields, but the header names 4 columns",
    );
    check_error(
        &format!("{header}512,1.5,600,0.02\n"),
        "row 2, column decode_seqs",
        "not a whole number",
    );
    check_error(
        "prefill_tokens,decode_seqs,kv_token,step_s\n",
        "row 1, column kv_token",
        "unknown column",
    );
    check_error(
        "mode,input_tokens,output_tokens,mean_itl_ms\noffline,1000,1000,20\n",
        "row 2, column requests",
        "number of requests",
    );
    check_error(
        "mode,clients,input_tokens,output_tokens,mean_ttft_ms\nconcurrency,8,1000,200,\n",
        "row 2, column output_tokens_per_s",
        "at least one measured figure",
    );
    check_error(
        r#"{"step_times": [{"prefill_tokens": 1, "decode_seqs": 0, "kv_tokens": 1, "step_s": -1}]}"#,
        "step_times[0].step_s",
        "positive",
    );
    check_error(
        r#"{"benchmarks": [{"mode": "open", "input_tokens": 1, "output_tokens": 1}]}"#,
        "benchmarks[0].mode",
        "unknown variant",
    );
}

#[test]
fn benchmark_points_read_with_empty_figures_left_out() {
    let csv = "mode,requests,clients,input_tokens,output_tokens,output_tokens_per_s,mean_itl_ms,mean_ttft_ms\n\
               offline,3000,,128,2048,22003.6,,\n\
               concurrency,,50,5000,500,814.4,59.73,834.5\n";
    let Ok(Measurements::Benchmarks(points)) = parse_measurements(csv) else {
        panic!("benchmark points expected");
    };
    assert_eq!(
        points[0].figures(),
        vec![(Figure::OutputTokensPerS, 22003.6)]
    );
    assert_eq!(points[1].clients, Some(50));
    assert_eq!(points[1].figures().len(), 3);
    assert_eq!(points[1].label(), "50 clients, 5000 in / 500 out");
}

#[test]
fn table_csvs_of_either_shape_become_grids() {
    let by_batch =
        "batch_size,context_tokens,step_s\n8,3000,0.03\n1,1000,0.01\n1,3000,0.012\n8,1000,0.02\n";
    assert_eq!(
        parse_measurements(by_batch),
        Ok(Measurements::Table(StepTimeParams::BatchTable {
            batch_sizes: vec![1.0, 8.0],
            context_tokens: vec![1000.0, 3000.0],
            step_s: vec![vec![0.01, 0.012], vec![0.02, 0.03]],
        }))
    );
    let by_tokens = "batch_tokens,kv_tokens,step_s\n1,0,0.007\n8192,0,0.2\n";
    assert_eq!(
        parse_measurements(by_tokens),
        Ok(Measurements::Table(StepTimeParams::Table {
            batch_tokens: vec![1.0, 8192.0],
            kv_tokens: vec![0.0],
            step_s: vec![vec![0.007], vec![0.2]],
        }))
    );
    check_error(
        "batch_size,context_tokens,step_s\n1,1000,0.01\n8,3000,0.03\n",
        "",
        "no row measures batch_size 1, context_tokens 3000",
    );
    check_error(
        "batch_size,context_tokens,step_s\n1,1000,0.01\n1,1000,0.02\n",
        "row 3, column context_tokens",
        "already measured on row 2",
    );
}

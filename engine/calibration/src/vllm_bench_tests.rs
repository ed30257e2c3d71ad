use super::*;
use crate::{Measurements, check_benchmark_budget, parse_measurements};

/// A result file as `vllm bench serve --save-result` writes it (its keys;
/// the per-request lists left out, as without `--save-detailed`).
fn result_json(max_concurrency: &str, request_rate: &str, completed: u32) -> String {
    format!(
        r#"{{"date": "20250101-120000", "backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": {completed},
        "request_rate": {request_rate}, "burstiness": 1.0, "max_concurrency": {max_concurrency},
        "duration": 150.87, "completed": {completed}, "total_input_tokens": {input},
        "total_output_tokens": {output}, "request_throughput": 0.21, "request_goodput": null,
        "output_throughput": 434.4, "total_token_throughput": 868.8,
        "mean_ttft_ms": 7279.56, "median_ttft_ms": 7099.88, "std_ttft_ms": 1.0, "p99_ttft_ms": 10999.46,
        "mean_tpot_ms": 70.14, "median_tpot_ms": 70.23, "std_tpot_ms": 1.0, "p99_tpot_ms": 72.63,
        "mean_itl_ms": 69.9, "median_itl_ms": 68.15, "std_itl_ms": 1.0, "p99_itl_ms": 72.47}}"#,
        input = 2048 * completed,
        output = 1024 * completed + completed / 3,
    )
}

/// The printed summary of the newer client: the concurrency inside the
/// block.
const SUMMARY: &str = "\
Starting main benchmark run...
============ Serving Benchmark Result ============
Successful requests:                     32
Failed requests:                         0
Maximum request concurrency:             8
Benchmark duration (s):                  150.87
Total input tokens:                      65536
Total generated tokens:                  32768
Request throughput (req/s):              0.21
Output token throughput (tok/s):         434.40
Peak output token throughput (tok/s):    512.00
Total Token throughput (tok/s):          868.80
---------------Time to First Token----------------
Mean TTFT (ms):                          279.56
Median TTFT (ms):                        270.88
P99 TTFT (ms):                           999.46
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          18.14
Median TPOT (ms):                        18.23
P99 TPOT (ms):                           19.63
---------------Inter-token Latency----------------
Mean ITL (ms):                           18.10
Median ITL (ms):                         18.15
P99 ITL (ms):                            22.47
==================================================
";

fn points(text: &str) -> Vec<BenchmarkPoint> {
    match parse_measurements(text) {
        Ok(Measurements::Benchmarks(points)) => points,
        other => panic!("benchmark points expected, got {other:?}"),
    }
}

fn refused(text: &str) -> String {
    parse_measurements(text).expect_err("refused").to_string()
}

#[test]
fn a_result_file_under_max_concurrency_is_a_concurrency_point_at_its_means() {
    let [p] = &points(&result_json("16", "\"inf\"", 300))[..] else {
        panic!("one point");
    };
    assert_eq!(p.mode, BenchmarkMode::Concurrency);
    assert_eq!((p.clients, p.requests), (Some(16), Some(300)));
    // The totals over the completed requests, rounded (1024.33 -> 1024).
    assert_eq!((p.input_tokens, p.output_tokens), (2048, 1024));
    assert_eq!(p.output_tokens_per_s, Some(434.4));
    // The mean ITL (every gap, as a replay reads it), not the mean TPOT.
    assert_eq!(p.mean_itl_ms, Some(69.9));
    assert_eq!(p.mean_ttft_ms, Some(7279.56));
    assert_eq!(
        p.place,
        Some(Place::Vllm {
            index: 0,
            summary: false
        })
    );
}

#[test]
fn a_result_sent_at_once_without_max_concurrency_is_offline() {
    for rate in ["\"inf\"", "null"] {
        let [p] = &points(&result_json("null", rate, 1000))[..] else {
            panic!("one point");
        };
        assert_eq!(p.mode, BenchmarkMode::Offline, "rate {rate}");
        assert_eq!((p.requests, p.clients), (Some(1000), None));
    }
}

#[test]
fn several_results_one_after_another_or_in_a_list_are_several_points() {
    let lines = format!(
        "{}\n{}\n",
        result_json("1", "\"inf\"", 40),
        result_json("64", "\"inf\"", 640)
    )
    .replace('\n', " ")
    .replace("} {", "}\n{");
    let clients = |ps: Vec<BenchmarkPoint>| ps.iter().map(|p| p.clients).collect::<Vec<_>>();
    assert_eq!(clients(points(&lines)), [Some(1), Some(64)]);
    let list = format!(
        "[{}, {}]",
        result_json("1", "\"inf\"", 40),
        result_json("64", "\"inf\"", 640)
    );
    assert_eq!(clients(points(&list)), [Some(1), Some(64)]);
    // The second one's place is named in its errors.
    let bad = list.replacen("\"completed\": 640", "\"completed\": 0", 1);
    assert_eq!(
        refused(&bad),
        "vLLM result 2, key \"completed\": 0 is not a number of requests (a whole number, at least 1)"
    );
}

#[test]
fn a_missing_key_is_named_with_what_it_gives() {
    let text = result_json("8", "\"inf\"", 32).replace("\"total_output_tokens\"", "\"x\"");
    let e = refused(&text);
    assert!(
        e.starts_with("vLLM result 1: no key \"total_output_tokens\" (the generated tokens"),
        "{e}"
    );
    let text = result_json("8", "\"inf\"", 32).replace("\"completed\"", "\"done\"");
    assert!(
        refused(&text).starts_with("vLLM result 1: no key \"completed\""),
        "{}",
        refused(&text)
    );
    // A figure of the wrong type names its key; no figure at all names
    // the first one the point could have.
    let text = result_json("8", "\"inf\"", 32)
        .replace("\"mean_itl_ms\": 69.9", "\"mean_itl_ms\": \"fast\"");
    assert_eq!(
        refused(&text),
        "vLLM result 1, key \"mean_itl_ms\": \"fast\" is not a number"
    );
    let text = r#"{"completed": 10, "total_input_tokens": 1000, "total_output_tokens": 1000, "max_concurrency": 2}"#;
    let e = refused(text);
    assert!(
        e.starts_with(
            "vLLM result 1, key \"output_throughput\": give at least one measured figure"
        ),
        "{e}"
    );
}

#[test]
fn a_result_at_a_request_rate_is_refused_naming_the_rate() {
    for concurrency in ["null", "8"] {
        let e = refused(&result_json(concurrency, "4.0", 100));
        assert!(
            e.starts_with("vLLM result 1, key \"request_rate\": 4 requests/s: requests sent at a rate are not replayed"),
            "{e}"
        );
    }
}

#[test]
fn the_printed_summary_reads_as_the_result_file_does() {
    let [p] = &points(SUMMARY)[..] else {
        panic!("one point");
    };
    assert_eq!(p.mode, BenchmarkMode::Concurrency);
    assert_eq!((p.clients, p.requests), (Some(8), Some(32)));
    assert_eq!((p.input_tokens, p.output_tokens), (2048, 1024));
    assert_eq!(
        (p.output_tokens_per_s, p.mean_itl_ms, p.mean_ttft_ms),
        (Some(434.4), Some(18.1), Some(279.56))
    );
    assert_eq!(
        p.place,
        Some(Place::Vllm {
            index: 0,
            summary: true
        })
    );
}

#[test]
fn older_summaries_with_their_settings_before_each_block_are_read_per_block() {
    // benchmark_serving.py printed the rate and concurrency before the
    // block; pasted from a log, with a prefix on each line.
    let old = SUMMARY.replace("Maximum request concurrency:             8\n", "");
    let log = format!(
        "# Traffic request rate: inf\n# Maximum request concurrency: 4\n{}\n\
         # Traffic request rate: inf\n# Maximum request concurrency: 32\n{}",
        old.lines().map(|l| format!("# {l}\n")).collect::<String>(),
        old.replace(
            "Successful requests:                     32",
            "Successful requests: 64"
        ),
    );
    let ps = points(&log);
    let loads: Vec<_> = ps.iter().map(|p| (p.clients, p.requests)).collect();
    assert_eq!(loads, [(Some(4), Some(32)), (Some(32), Some(64))]);
    // Without a concurrency and sent at once: offline.
    assert_eq!(points(&old)[0].mode, BenchmarkMode::Offline);
}

#[test]
fn a_summary_without_a_line_names_it() {
    let text = SUMMARY.replace("Total generated tokens:", "Total tokens out:");
    let e = refused(&text);
    assert!(
        e.starts_with("vLLM summary 1: no line \"Total generated tokens:\""),
        "{e}"
    );
    let text = SUMMARY.replace(
        "Mean ITL (ms):                           18.10",
        "Mean ITL (ms): n/a",
    );
    assert_eq!(
        refused(&text),
        "vLLM summary 1, line \"Mean ITL (ms)\": \"n/a\" is not a number"
    );
    let text = SUMMARY.replace(
        "Maximum request concurrency:             8",
        "Request rate configured (RPS):          2.50",
    );
    assert!(
        refused(&text)
            .starts_with("vLLM summary 1, line \"Request rate configured (RPS)\": 2.5 requests/s"),
        "{}",
        refused(&text)
    );
}

#[test]
fn a_result_over_the_fits_budget_is_refused_naming_its_key() {
    let ps = points(&result_json("null", "\"inf\"", 200_000));
    let e = check_benchmark_budget(&ps).expect_err("over the budget");
    assert!(
        e.contains("the largest: vLLM result 1, key \"completed\" (200,000 requests)"),
        "{e}"
    );
}

#[test]
fn sojourns_own_json_is_not_taken_for_a_vllm_result() {
    let own = r#"{"benchmarks": [{"mode": "concurrency", "clients": 4, "input_tokens": 100,
        "output_tokens": 100, "mean_itl_ms": 20}]}"#;
    let [p] = &points(own)[..] else {
        panic!("one point");
    };
    assert_eq!(
        p.place,
        Some(Place::Item {
            list: "benchmarks",
            index: 0
        })
    );
}

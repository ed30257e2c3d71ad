//! The seed inputs kept with the crate (`corpus/`, see its README) and the
//! shipped example scenarios, built into the binary so that a campaign
//! depends on nothing outside the repository.

/// A named seed: its file name and text.
pub type Seed = (&'static str, &'static str);

/// How many of [`SCENARIOS`] are the shipped examples (they come first).
pub const SHIPPED: usize = 6;

/// Scenario files: the shipped examples, then the reviewers' reproducers
/// (`corpus/scenarios/`; a partial one is merged over `sojourn example`).
pub const SCENARIOS: &[Seed] = &[
    (
        "batch-only-70b.json",
        include_str!("../../scenarios/batch-only-70b.json"),
    ),
    (
        "calibration-nim-llama33-70b.json",
        include_str!("../../scenarios/calibration-nim-llama33-70b.json"),
    ),
    (
        "chat-unattainable.json",
        include_str!("../../scenarios/chat-unattainable.json"),
    ),
    (
        "interactive-chat.json",
        include_str!("../../scenarios/interactive-chat.json"),
    ),
    (
        "long-context-documents.json",
        include_str!("../../scenarios/long-context-documents.json"),
    ),
    (
        "overnight-batch.json",
        include_str!("../../scenarios/overnight-batch.json"),
    ),
    (
        "n01_closed_loop_rejected_retry.json",
        include_str!("../corpus/scenarios/n01_closed_loop_rejected_retry.json"),
    ),
    (
        "n02_closed_loop_timeout_retry.json",
        include_str!("../corpus/scenarios/n02_closed_loop_timeout_retry.json"),
    ),
    (
        "n03_trace_arrival_1e19_hangs.json",
        include_str!("../corpus/scenarios/n03_trace_arrival_1e19_hangs.json"),
    ),
    (
        "n04_offline_small_series_interval.json",
        include_str!("../corpus/scenarios/n04_offline_small_series_interval.json"),
    ),
    (
        "n04b_offline_1M_tiny_series_interval.json",
        include_str!("../corpus/scenarios/n04b_offline_1M_tiny_series_interval.json"),
    ),
    (
        "n05_fp8_peak_panic.json",
        include_str!("../corpus/scenarios/n05_fp8_peak_panic.json"),
    ),
    (
        "n05b_fp8_peak_negative_capacity.json",
        include_str!("../corpus/scenarios/n05b_fp8_peak_negative_capacity.json"),
    ),
    (
        "n05c_interconnect_zero_phantom_timeouts.json",
        include_str!("../corpus/scenarios/n05c_interconnect_zero_phantom_timeouts.json"),
    ),
    (
        "n05d_interconnect_negative_panic.json",
        include_str!("../corpus/scenarios/n05d_interconnect_negative_panic.json"),
    ),
    (
        "n06_table_negative_extrapolation.json",
        include_str!("../corpus/scenarios/n06_table_negative_extrapolation.json"),
    ),
    (
        "n07_search_space_enumerated_before_limit.json",
        include_str!("../corpus/scenarios/n07_search_space_enumerated_before_limit.json"),
    ),
    (
        "n08_checks_table_zero_interval.json",
        include_str!("../corpus/scenarios/n08_checks_table_zero_interval.json"),
    ),
    (
        "n09_closed_loop_admitted_before_arrival.json",
        include_str!("../corpus/scenarios/n09_closed_loop_admitted_before_arrival.json"),
    ),
    (
        "n10_duplicate_top_level_key.json",
        include_str!("../corpus/scenarios/n10_duplicate_top_level_key.json"),
    ),
    (
        "n11_end_before_last_arrival.json",
        include_str!("../corpus/scenarios/n11_end_before_last_arrival.json"),
    ),
    (
        "n12_closed_loop_4096_replicas.json",
        include_str!("../corpus/scenarios/n12_closed_loop_4096_replicas.json"),
    ),
    (
        "n13_plan_curve_unbounded_work.json",
        include_str!("../corpus/scenarios/n13_plan_curve_unbounded_work.json"),
    ),
    (
        "n15_offline_over_memory_budget.json",
        include_str!("../corpus/scenarios/n15_offline_over_memory_budget.json"),
    ),
    (
        "n16_fast_reference_drift_mm16.json",
        include_str!("../corpus/scenarios/n16_fast_reference_drift_mm16.json"),
    ),
    (
        "r01_series_drain_blowup.json",
        include_str!("../corpus/scenarios/r01_series_drain_blowup.json"),
    ),
    (
        "r02_series_drain_realistic.json",
        include_str!("../corpus/scenarios/r02_series_drain_realistic.json"),
    ),
    (
        "r02b_series_drain_10s.json",
        include_str!("../corpus/scenarios/r02b_series_drain_10s.json"),
    ),
    (
        "r03_drain_4096_replicas_slow.json",
        include_str!("../corpus/scenarios/r03_drain_4096_replicas_slow.json"),
    ),
    (
        "r04_unknown_key_in_distribution.json",
        include_str!("../corpus/scenarios/r04_unknown_key_in_distribution.json"),
    ),
    (
        "r05_gamma_becomes_constant_1.json",
        include_str!("../corpus/scenarios/r05_gamma_becomes_constant_1.json"),
    ),
    (
        "r06_utilization_over_100pct.json",
        include_str!("../corpus/scenarios/r06_utilization_over_100pct.json"),
    ),
    (
        "r07_report_json_inf_as_null.json",
        include_str!("../corpus/scenarios/r07_report_json_inf_as_null.json"),
    ),
    (
        "r08_weights_overflow_wrong_message.json",
        include_str!("../corpus/scenarios/r08_weights_overflow_wrong_message.json"),
    ),
    (
        "r09_count_above_1e8_silently_clamped.json",
        include_str!("../corpus/scenarios/r09_count_above_1e8_silently_clamped.json"),
    ),
    (
        "r10_parse_error_without_field.json",
        include_str!("../corpus/scenarios/r10_parse_error_without_field.json"),
    ),
    (
        "r11_tiny_horizon_goodput_nan.json",
        include_str!("../corpus/scenarios/r11_tiny_horizon_goodput_nan.json"),
    ),
    (
        "r12_plan_tpot_only_all_rejected.json",
        include_str!("../corpus/scenarios/r12_plan_tpot_only_all_rejected.json"),
    ),
    (
        "r13_plan_class_without_arrivals.json",
        include_str!("../corpus/scenarios/r13_plan_class_without_arrivals.json"),
    ),
    (
        "r14_plan_analytic_unbounded.json",
        include_str!("../corpus/scenarios/r14_plan_analytic_unbounded.json"),
    ),
    (
        "r15_validation_slow.json",
        include_str!("../corpus/scenarios/r15_validation_slow.json"),
    ),
    (
        "r19_memory_4_8GB_under_request_cap.json",
        include_str!("../corpus/scenarios/r19_memory_4_8GB_under_request_cap.json"),
    ),
    (
        "r20_memory_2GB_year_17M_requests.json",
        include_str!("../corpus/scenarios/r20_memory_2GB_year_17M_requests.json"),
    ),
];

/// Request traces (CSV).
pub const TRACES: &[Seed] = &[
    (
        "n03b_trace.csv",
        include_str!("../corpus/traces/n03b_trace.csv"),
    ),
    ("plain.csv", include_str!("../corpus/traces/plain.csv")),
    (
        "two_classes.csv",
        include_str!("../corpus/traces/two_classes.csv"),
    ),
];

/// Tables of (prompt, output) lengths (CSV).
pub const LENGTHS: &[Seed] = &[
    ("pairs.csv", include_str!("../corpus/lengths/pairs.csv")),
    (
        "weighted.csv",
        include_str!("../corpus/lengths/weighted.csv"),
    ),
];

/// Share links found in review.
pub const LINKS: &[Seed] = &[(
    "r16_bitflip_format1.txt",
    include_str!("../corpus/links/r16_bitflip_format1.txt"),
)];

/// Measurements to fit (CSV and JSON).
pub const CALIBRATION: &[Seed] = &[
    (
        "batch_table.csv",
        include_str!("../corpus/calibration/batch_table.csv"),
    ),
    (
        "benchmarks.csv",
        include_str!("../corpus/calibration/benchmarks.csv"),
    ),
    (
        "benchmarks.json",
        include_str!("../corpus/calibration/benchmarks.json"),
    ),
    (
        "n14_calibrate_40_benchmarks.csv",
        include_str!("../corpus/calibration/n14_calibrate_40_benchmarks.csv"),
    ),
    (
        "step_times.csv",
        include_str!("../corpus/calibration/step_times.csv"),
    ),
    (
        "step_times.json",
        include_str!("../corpus/calibration/step_times.json"),
    ),
    ("table.csv", include_str!("../corpus/calibration/table.csv")),
];

/// The scenario the reviewers fitted `n14_calibrate_40_benchmarks.csv` to.
pub const CALIBRATION_BASE: &str = include_str!("../corpus/calibration/n14_calib_base.json");

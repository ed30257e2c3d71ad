//! Reading what users type, and the edits behind the form's buttons.

use sojourn_app::charts::log_correlation;
use sojourn_app::form::{
    LOAD_KINDS, NO_THINK, convert_shape, dist_preview, duration_echo, duration_text,
    duration_words, expert_layout_note, lengths_kind, lengths_preview, load_kind, load_requests,
    new_class, pairs_csv, parse_count, parse_duration_s, parse_list, parse_number,
    set_lengths_kind, set_load_kind, set_think_kind, shape_kind, think, think_kind,
    typical_seq_tokens,
};
use sojourn_engine::{
    ClassParams, DistParams, LengthsParams, LoadParams, Scenario, ScenarioParams, Shape,
    lengths_from_csv, presets,
};

#[test]
fn numbers_accept_separators_and_exponents_but_not_words() {
    assert_eq!(parse_number("1,800"), Some(1800.0));
    assert_eq!(parse_number(" 1e-4 "), Some(1e-4));
    assert_eq!(parse_number(""), None);
    assert_eq!(parse_number("ten"), None);
    assert_eq!(parse_number("inf"), None, "infinity is not a usable input");
    // A comma groups thousands only: a decimal comma is refused, never
    // read as a larger number (the review's "3,5" became 35).
    assert_eq!(parse_number("1,234,567.5"), Some(1_234_567.5));
    assert_eq!(parse_number("-12,345"), Some(-12_345.0));
    for typed in ["3,5", "12,34", "1,8000", ",800", "1.5,0", "1,800,"] {
        assert_eq!(parse_number(typed), None, "{typed}");
    }
    assert_eq!(parse_count("12"), Some(12));
    assert_eq!(parse_count("1.5"), None);
    assert_eq!(parse_count("-1"), None);
}

#[test]
fn durations_read_units_and_show_the_largest_whole_unit() {
    let check = |text, seconds| assert_eq!(parse_duration_s(text), Some(seconds), "{text}");
    check("90", 90.0);
    check("90 s", 90.0);
    check("250ms", 0.25);
    check("15 min", 900.0);
    check("24h", 86_400.0);
    check("1.5 d", 129_600.0);
    assert_eq!(parse_duration_s("soon"), None);
    assert_eq!(parse_duration_s("5 fortnights"), None);
    assert_eq!(duration_text(86_400.0), "24 h");
    assert_eq!(duration_text(60.0), "1 min");
    assert_eq!(duration_text(90.0), "90 s");
    assert_eq!(duration_text(0.25), "0.25 s");
    for seconds in [86_400.0, 60.0, 90.0, 0.25, 5400.0] {
        assert_eq!(parse_duration_s(&duration_text(seconds)), Some(seconds));
    }
}

#[test]
fn lists_read_commas_and_spaces() {
    assert_eq!(parse_list("0.5, 1,1.5  2"), Some(vec![0.5, 1.0, 1.5, 2.0]));
    assert_eq!(parse_list("1, x"), None);
}

#[test]
fn switching_a_distribution_family_keeps_its_typical_value() {
    let lognormal = Shape::LogNormal {
        median: 1500.0,
        p90: 6000.0,
    };
    assert_eq!(
        convert_shape(&lognormal, "constant"),
        Shape::Constant { value: 1500.0 }
    );
    let gamma = convert_shape(&lognormal, "gamma");
    assert_eq!(shape_kind(&gamma), "gamma");
    // Every family a menu offers converts to a distribution the engine accepts.
    for (kind, _) in sojourn_app::form::SHAPE_KINDS {
        let shape = convert_shape(&lognormal, kind);
        assert!(dist_preview(&DistParams::new(shape)).is_ok(), "{kind}");
    }
}

#[test]
fn the_preview_uses_the_engines_sampler_and_messages() {
    let summary = dist_preview(&DistParams::log_normal(1000.0, 3000.0))
        .expect("a valid distribution previews");
    assert!(
        (summary.p50 - 1000.0).abs() < 100.0,
        "median {}",
        summary.p50
    );
    assert_eq!(summary.histogram.len(), 20);
    let error = dist_preview(&DistParams::log_normal(1000.0, 800.0))
        .expect_err("p90 below the median is invalid");
    assert!(error.contains("greater than the median (1000)"), "{error}");
}

#[test]
fn new_classes_get_unused_names() {
    let params = ScenarioParams::overnight_batch();
    let class = new_class(&params);
    assert!(params.classes.iter().all(|c| c.name != class.name));
}

#[test]
fn the_memory_bar_judges_a_typical_request() {
    let tokens = typical_seq_tokens(&ScenarioParams::overnight_batch());
    // The API stream dominates the request rate: about 800 + 200 tokens.
    assert!((900.0..2000.0).contains(&tokens), "{tokens}");
}

#[test]
fn switching_how_lengths_go_together_keeps_what_it_can() {
    let mut params = ScenarioParams::overnight_batch();
    let class = &mut params.classes[1];
    class.output_tokens = DistParams::constant(200.0);
    assert_eq!(lengths_kind(class), "independent");
    // A correlation needs both lengths log-normal: the constant output
    // becomes one around the same value; the log-normal input stays.
    let input = class.input_tokens.clone();
    set_lengths_kind(class, "correlated");
    assert_eq!(class.lengths, Some(LengthsParams::Correlated { rho: 0.5 }));
    assert_eq!(class.input_tokens, input);
    assert_eq!(shape_kind(&class.output_tokens.shape), "log_normal");
    Scenario::try_from(params.clone()).expect("a correlation that validates");
    // A table starts from draws of the lengths as they were (independent).
    let class = &mut params.classes[1];
    set_lengths_kind(class, "pairs");
    let Some(LengthsParams::Pairs { pairs, weights }) = &class.lengths else {
        panic!("a table: {:?}", class.lengths);
    };
    assert_eq!((pairs.len(), weights), (20, &None));
    // Its CSV reads back as the same table.
    assert_eq!(lengths_from_csv(&pairs_csv(class)).ok(), class.lengths);
    Scenario::try_from(params.clone()).expect("a table that validates");
    set_lengths_kind(&mut params.classes[1], "independent");
    assert_eq!(params.classes[1].lengths, None);
    // The memory bar's typical request reads a table's weighted means:
    // (1 x 100 + 3 x 300) / 4 + (1 x 50 + 3 x 10) / 4 = 250 + 20.
    params.classes.truncate(1);
    params.classes[0].lengths = Some(LengthsParams::Pairs {
        pairs: vec![[100.0, 50.0], [300.0, 10.0]],
        weights: Some(vec![1.0, 3.0]),
    });
    assert_eq!(typical_seq_tokens(&params), 270.0);
}

#[test]
fn the_lengths_preview_draws_from_the_class_model() {
    let class = |lengths| ClassParams {
        input_tokens: DistParams::log_normal(1000.0, 4000.0),
        output_tokens: DistParams::log_normal(200.0, 800.0),
        lengths,
        ..ClassParams::default()
    };
    // 4,000 draws: the standard error of r is at most 1/sqrt(4000) = 0.016.
    let independent = lengths_preview(&class(None)).expect("valid");
    assert_eq!(independent.len(), 4000);
    let r = log_correlation(&independent).expect("varies");
    assert!(r.abs() < 0.07, "{r}");
    let correlated =
        lengths_preview(&class(Some(LengthsParams::Correlated { rho: 0.8 }))).expect("valid");
    let r = log_correlation(&correlated).expect("varies");
    assert!((r - 0.8).abs() < 4.0 * 0.36 / 4000f64.sqrt(), "{r}");
    let table = LengthsParams::Pairs {
        pairs: vec![[30.0, 900.0], [5000.0, 12.0]],
        weights: None,
    };
    let pairs = lengths_preview(&class(Some(table))).expect("valid");
    assert!(pairs.iter().all(|p| *p == (30, 900) || *p == (5000, 12)));
    let error = lengths_preview(&class(Some(LengthsParams::Correlated { rho: 1.5 })));
    let error = error.unwrap_err();
    assert!(
        error.starts_with("Prompt and output together, correlation (rho): "),
        "{error}"
    );
}

#[test]
fn every_load_mode_the_page_offers_gives_a_valid_scenario() {
    // The default's classes have hourly profiles and batches, which
    // offline and closed-loop classes refuse: switching removes them and
    // says so, so that the scenario stays valid.
    let default = ScenarioParams::overnight_batch();
    assert!(default.classes.iter().any(|c| c.time_of_day.is_some()));
    for (kind, _) in LOAD_KINDS {
        let mut p = default.clone();
        for class in &mut p.classes {
            let had_profile = class.time_of_day.is_some();
            let removed = set_load_kind(class, kind);
            assert_eq!(load_kind(class), kind);
            let sets_own_times = matches!(kind, "offline" | "closed_loop");
            assert_eq!(
                removed.contains(&"its hourly profile"),
                sets_own_times && had_profile,
                "{kind}: {removed:?}"
            );
        }
        Scenario::try_from(p).unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

#[test]
fn switching_load_modes_keeps_the_count_and_the_think_time_keeps_its_typical_value() {
    let mut class = ClassParams::default();
    assert_eq!(load_kind(&class), "open");
    assert!(set_load_kind(&mut class, "offline").is_empty());
    class.load = LoadParams::Offline { requests: 250 };
    set_load_kind(&mut class, "closed_loop");
    assert_eq!(load_requests(&class), Some(250), "the count carries over");
    assert_eq!(think_kind(&class), NO_THINK.0);
    set_think_kind(&mut class, "constant");
    let start = think(&class).expect("a think time").clone();
    set_think_kind(&mut class, "exponential");
    assert_eq!(
        think(&class).map(|d| d.shape.clone()),
        Some(convert_shape(&start.shape, "exponential"))
    );
    set_think_kind(&mut class, NO_THINK.0);
    assert!(think(&class).is_none());
    set_load_kind(&mut class, "fixed_count");
    assert_eq!(class.load, LoadParams::FixedCount { requests: 250 });
    set_load_kind(&mut class, "open");
    assert_eq!(class.load, LoadParams::Open);
    assert_eq!(load_requests(&class), None);
}

#[test]
fn a_duration_box_echoes_what_it_read() {
    let echo = |typed: &str| duration_echo(typed);
    assert_eq!(echo("90 min").as_deref(), Some("90 min = 1 h 30 min"));
    assert_eq!(
        echo("90").as_deref(),
        Some("90 s = 1 min 30 s"),
        "a bare number is seconds"
    );
    assert_eq!(echo("1.5 d").as_deref(), Some("1.5 d = 36 h"));
    assert_eq!(echo("50 h").as_deref(), Some("50 h = 2 d 2 h"));
    assert_eq!(echo("0.25").as_deref(), Some("0.25 s = 250 ms"));
    // Text that already says plainly what it means is not echoed.
    for plain in ["24 h", "24h", "15 min", "30", "250 ms", "2 d"] {
        assert_eq!(echo(plain), None, "{plain}");
    }
    assert_eq!(
        echo("soon"),
        None,
        "the error speaks for text that does not read"
    );
    assert_eq!(duration_words(176_461.5), "2 d 1 h 1 min 1.5 s");
    assert_eq!(duration_words(0.0), "0 s");
    assert_eq!(duration_words(3600.1), "1 h 0.1 s");
}

/// gpt-oss's weight precision menu says "fp4", yet its weights are not
/// 116.8 B x 0.5 bytes: the model panel says what the precision covers.
/// Models whose weights share one precision get no note.
#[test]
fn a_quantized_experts_model_says_what_its_weight_precision_covers() {
    let gpt_oss = presets::model("gpt-oss-120b").expect("preset");
    let note = expert_layout_note(&gpt_oss).expect("gpt-oss quantizes its experts only");
    for part in [
        "114.7 B parameters at 4.25 bits",
        "the other 2.1 B are bf16",
        "60.7 GiB in all",
    ] {
        assert!(note.contains(part), "{part}: {note}");
    }
    let mut unscaled = gpt_oss.clone();
    if let Some(moe) = unscaled.moe.as_mut() {
        moe.expert_scale_bits = None;
    }
    let note = expert_layout_note(&unscaled).expect("still its experts only");
    assert!(note.contains("at 4 bits a weight; the other"), "{note}");
    for id in ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3"] {
        let model = presets::model(id).expect("preset");
        assert_eq!(expert_layout_note(&model), None, "{id}");
    }
}

/// The search's lists of whole numbers: commas, semicolons or spaces
/// between values, "none" for no limit where a limit may be absent, empty
/// for the scenario's own; "1,024" is refused rather than read as 1 and 24
/// (or as 1024), and so is anything that is not a whole number a u32 holds.
#[test]
fn count_lists_read_values_and_refuse_ambiguous_commas() {
    use sojourn_app::form::{AMBIGUOUS_COMMA, NOT_COUNTS, NOT_LIMITS, counts_text, parse_counts};
    assert_eq!(
        parse_counts("64, 256 ;1024", false),
        Ok(Some(vec![Some(64), Some(256), Some(1024)]))
    );
    assert_eq!(parse_counts("  ", false), Ok(None));
    assert_eq!(
        parse_counts("None, 500", true),
        Ok(Some(vec![None, Some(500)]))
    );
    assert_eq!(parse_counts("none", false), Err(NOT_COUNTS));
    assert_eq!(parse_counts("many", true), Err(NOT_LIMITS));
    for typed in ["1.5", "-3", "5000000000", "1.024"] {
        assert_eq!(parse_counts(typed, false), Err(NOT_COUNTS), "{typed}");
    }
    for typed in ["1,024", "64,256", "8,192, 16,384"] {
        assert_eq!(parse_counts(typed, false), Err(AMBIGUOUS_COMMA), "{typed}");
    }
    assert_eq!(
        parse_counts("64,2560", false),
        Ok(Some(vec![Some(64), Some(2560)]))
    );
    assert_eq!(counts_text(&Some(vec![None, Some(500)])), "none, 500");
    assert_eq!(counts_text(&None), "");
    let shown = counts_text(&Some(vec![Some(64), Some(1024)]));
    assert_eq!(
        parse_counts(&shown, false),
        Ok(Some(vec![Some(64), Some(1024)]))
    );
}

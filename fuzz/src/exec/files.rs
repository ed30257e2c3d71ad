//! Running the file inputs: a request trace, a length table, measurements
//! to fit, the search boxes' typed lists and a share link, each through the
//! parser the page or the CLI uses, then (where it gives one) as a
//! scenario through `super::scenario`.

use serde_json::Value;
use sojourn_app::registry::enum_parse;
use sojourn_app::{form, link};
use sojourn_engine::calibration::{self, BenchmarkMode, Measurements};
use sojourn_engine::{Discipline, Router, ScenarioParams};

use super::{Ctx, Stage, What, base, no_field, scenario};
use crate::input::Input;

/// A trace imported as the page does (its requests replayed), or its
/// classes fitted (an open stream drawn from them).
pub(super) fn trace(input: &Input, ctx: &mut Ctx) {
    let Some(base) = base(input, ctx) else { return };
    if input.variant == "fit" {
        ctx.at("parse_trace_csv");
        let requests = match sojourn_engine::parse_trace_csv(&input.text) {
            Ok(requests) => requests,
            Err(e) => return ctx.refused(Stage::NotRead, e),
        };
        ctx.at("fit_trace_classes");
        let classes = sojourn_engine::fit_trace_classes(&requests);
        scenario(ScenarioParams { classes, ..base }, ctx);
    } else {
        ctx.at("import_trace");
        let params = match sojourn_app::form::import_trace(&base, &input.text) {
            Ok((params, _)) => params,
            Err(e) => return ctx.refused(Stage::NotRead, e),
        };
        scenario(params, ctx);
    }
}

/// A lengths table as a class's `lengths`, previewed as the page does.
pub(super) fn lengths(input: &Input, ctx: &mut Ctx) {
    let Some(mut base) = base(input, ctx) else {
        return;
    };
    ctx.at("lengths_from_csv");
    let lengths = match sojourn_engine::lengths_from_csv(&input.text) {
        Ok(lengths) => lengths,
        Err(e) => return ctx.refused(Stage::NotRead, e),
    };
    let Some(class) = base.classes.first_mut() else {
        return;
    };
    class.lengths = Some(lengths);
    ctx.at("preview_lengths");
    if let Err(error) = sojourn_engine::preview_lengths(class, sojourn_app::form::PREVIEW_SAMPLES) {
        no_field(&error, ctx);
    }
    scenario(base, ctx);
}

/// Benchmark points small enough to replay 80 times in a second or two.
fn small_benchmarks(points: &[calibration::BenchmarkPoint]) -> bool {
    points.len() <= 4
        && points.iter().all(|p| {
            let requests = match p.mode {
                BenchmarkMode::Offline => p.requests.unwrap_or(0),
                BenchmarkMode::Concurrency => p
                    .requests
                    .unwrap_or(0)
                    .max(p.clients.unwrap_or(1).saturating_mul(4)),
            };
            requests <= 100
                && p.clients.unwrap_or(0) <= 16
                && p.input_tokens <= 8192
                && p.output_tokens <= 1024
        })
}

/// Measurements read, fitted (step times as the page does; benchmark
/// points as `sojourn calibrate` does, when small), applied, and the
/// result validated and run.
pub(super) fn calibration(input: &Input, ctx: &mut Ctx) {
    let Some(mut base) = base(input, ctx) else {
        return;
    };
    ctx.at("parse_measurements");
    let measurements = match calibration::parse_measurements(&input.text) {
        Ok(m) => m,
        Err(e) => return ctx.refused(Stage::NotRead, e),
    };
    ctx.stage = Stage::Checked;
    match &measurements {
        Measurements::Benchmarks(points) => {
            // The fit's own budget first (what the page checks pasted
            // points with); a fit it accepts may take up to half a minute,
            // so only small ones run within the campaign's time limit.
            ctx.at("calibration::check_benchmark_budget");
            if let Err(e) = calibration::check_benchmark_budget(points) {
                return ctx.refused(Stage::Checked, e);
            }
            if !small_benchmarks(points) {
                ctx.fit_skipped = true;
                return;
            }
            ctx.at("calibration::fit (benchmarks)");
            match calibration::fit(&base, &measurements) {
                Ok(result) => result.apply(&mut base),
                Err(e) => return ctx.refused(Stage::Checked, e),
            }
        }
        _ => {
            ctx.at("calibration::prepare (page)");
            match sojourn_app::form::prepare(&base, &input.text) {
                Ok(sojourn_app::form::Next::Show(prepared)) => prepared.apply(&mut base),
                // Benchmark points (the page's worker fits them) are the
                // branch above.
                Ok(sojourn_app::form::Next::FitInWorker(_)) => return,
                Err(e) => return ctx.refused(Stage::Checked, e),
            }
        }
    }
    scenario(base, ctx);
}

/// The search lists as typed in the page: each box read by the page's
/// parser (a box that does not read keeps the scenario's value, as the
/// page does), then validated with the plan's checks.
pub(super) fn search(input: &Input, ctx: &mut Ctx) {
    let Some(mut base) = base(input, ctx) else {
        return;
    };
    ctx.at("search lists (JSON of the boxes)");
    let Ok(boxes) = serde_json::from_str::<Value>(&input.text) else {
        return;
    };
    let text = |key: &str| boxes.get(key).and_then(Value::as_str).map(str::to_string);
    let mut read_any = false;
    ctx.at("parse_counts");
    let counts = |text: Option<String>, none_allowed: bool| {
        text.and_then(|t| form::parse_counts(&t, none_allowed).ok())
    };
    let search = &mut base.plan.search;
    if let Some(v) = counts(text("max_num_seqs"), false) {
        search.max_num_seqs = v.map(|v| v.into_iter().flatten().collect());
        read_any = true;
    }
    if let Some(v) = counts(text("max_num_batched_tokens"), false) {
        search.max_num_batched_tokens = v.map(|v| v.into_iter().flatten().collect());
        read_any = true;
    }
    if let Some(v) = counts(text("max_waiting"), true) {
        search.max_waiting = v;
        read_any = true;
    }
    ctx.at("parse_list");
    if let Some(v) = text("load_multipliers").and_then(|t| form::parse_list(&t)) {
        base.plan.service_curve.load_multipliers = v;
        read_any = true;
    }
    let names = |key: &str| -> Option<Vec<String>> {
        boxes.get(key)?.as_array().map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
    };
    if let Some(names) = names("disciplines") {
        base.plan.search.disciplines = Some(
            names
                .iter()
                .filter_map(|n| enum_parse::<Discipline>(n))
                .collect(),
        );
    }
    if let Some(names) = names("routers") {
        base.plan.search.routers = Some(
            names
                .iter()
                .filter_map(|n| enum_parse::<Router>(n))
                .collect(),
        );
    }
    if !read_any {
        return ctx.refused(Stage::NotRead, "no box reads");
    }
    ctx.simulate = false;
    scenario(base, ctx);
}

/// A share link decoded (from the address bar or the browser's storage),
/// then run; or a query string given to the query helpers.
pub(super) fn link(input: &Input, ctx: &mut Ctx) {
    if input.variant == "query" {
        ctx.at("query string helpers");
        let value = "2.NEW";
        let replaced = link::replace_in_query(&input.text, value);
        if link::find_in_query(&replaced).as_deref() != Some(value) {
            ctx.find(
                What::QueryString,
                format!(
                    "replace_in_query gives {replaced:?}, whose find_in_query is {:?}",
                    link::find_in_query(&replaced)
                ),
            );
        }
        let removed = link::set_in_query(&input.text, None);
        if link::find_in_query(&removed).is_some() {
            ctx.find(
                What::QueryString,
                format!("set_in_query(None) gives {removed:?}, which still holds a link"),
            );
        }
        ctx.stage = Stage::Checked;
        return;
    }
    ctx.at("link::decode");
    let decoded = if input.variant == "storage" {
        link::decode_from_storage(&input.text)
    } else {
        link::decode(&input.text)
    };
    let params = match decoded {
        Ok(params) => params,
        Err(e) => return ctx.refused(Stage::NotRead, e),
    };
    if input.variant == "damaged" && !input.base.is_empty() && input.base != input.text {
        ctx.at("link::decode (the undamaged link)");
        if let Ok(original) = link::decode(&input.base)
            && original != params
        {
            ctx.find(
                What::DamagedLinkAccepted,
                "a damaged format-2 link decodes to another scenario",
            );
        }
    }
    scenario(params, ctx);
}

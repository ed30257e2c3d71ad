//! Reading step-time measurements a user pastes or opens (what `sojourn
//! calibrate` reads: step times, benchmark points, vLLM's benchmark output,
//! a measured grid) into what the calibration panel shows and applies: a
//! fit, a checked table, or benchmark points for its worker to fit. No DOM;
//! tested natively.

use sojourn_engine::calibration::{
    FitResult, FittedPoint, Measurements, check_benchmark_budget, fit, parameters_table,
    parse_measurements, points_table,
};
use sojourn_engine::{DataTable, Scenario, ScenarioParams, StepTimeParams, format_number};

/// What pasted measurements give, ready to show and apply.
#[derive(Clone, Debug, PartialEq)]
pub enum Prepared {
    /// The per-operation model fitted to measured step times.
    Fit(Box<FitResult>),
    /// A measured grid, checked, to use as the step-time model.
    Table(Box<StepTimeParams>),
}

/// What to do with pasted measurements.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// Show this, ready to apply.
    Show(Prepared),
    /// Fit this many benchmark points in the worker (within the budget).
    FitInWorker(usize),
}

/// Reads `text` (CSV or JSON, or vLLM's benchmark output) and fits
/// `params`' per-operation model to step times, checks the grid it holds,
/// or checks benchmark points against the fit's budget for the worker to
/// fit; the message names the row and column (or key) of bad input.
pub fn prepare(params: &ScenarioParams, text: &str) -> Result<Next, String> {
    match parse_measurements(text).map_err(|e| e.to_string())? {
        Measurements::Benchmarks(points) => {
            check_benchmark_budget(&points).map_err(|e| format!("Too large to fit: {e}."))?;
            Ok(Next::FitInWorker(points.len()))
        }
        Measurements::Table(table) => {
            let mut checked = params.clone();
            checked.step_time = table.clone();
            Scenario::try_from(checked)
                .map(|_| Next::Show(Prepared::Table(Box::new(table))))
                .map_err(|e| format!("The table is not usable: {e}"))
        }
        steps => fit(params, &steps).map(|result| Next::Show(Prepared::Fit(Box::new(result)))),
    }
}

impl Prepared {
    /// Writes the fitted model (with its record) or the table into `params`.
    pub fn apply(&self, params: &mut ScenarioParams) {
        match self {
            Prepared::Fit(result) => result.apply(params),
            Prepared::Table(table) => params.step_time = (**table).clone(),
        }
    }

    /// One sentence on what applying does.
    pub fn summary(&self) -> String {
        match self {
            Prepared::Fit(result) => {
                let data = result
                    .operations
                    .fit
                    .as_ref()
                    .map_or("step times", |r| r.data.as_str());
                let to = if data == "step times" {
                    format!("{} step times", result.points().len())
                } else {
                    format!(
                        "{} measured figures of {data} (replayed {} times)",
                        result.points().len(),
                        result.evaluations
                    )
                };
                format!(
                    "Fitted {} of 8 parameters to {to}: root mean square log error {} before, {} after.",
                    result.parameters.iter().filter(|p| p.fitted).count(),
                    format_number(result.rms_log_error_before, 3),
                    format_number(result.rms_log_error_after, 3),
                )
            }
            Prepared::Table(_) => {
                "A measured step-time table: Apply makes it the step-time model.".into()
            }
        }
    }

    /// The tables to show: the parameters and each point, or none.
    pub fn tables(&self) -> Vec<DataTable> {
        match self {
            Prepared::Fit(result) => {
                vec![parameters_table(result), points_table(result.points())]
            }
            Prepared::Table(_) => Vec::new(),
        }
    }
}

/// The record of the fit the scenario's step time carries, if any.
pub fn fit_record(params: &ScenarioParams) -> Option<(String, Vec<FittedPoint>)> {
    let StepTimeParams::Operations(o) = &params.step_time else {
        return None;
    };
    let record = o.fit.as_ref()?;
    let line = format!(
        "This model was fitted to {} {} (fitted: {}).",
        record.points.len(),
        record.data,
        record.fitted.join(", ")
    );
    Some((line, record.points.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sojourn_engine::OperationsParams;

    /// The example scenario under the per-operation model.
    fn params() -> ScenarioParams {
        let mut p = ScenarioParams::overnight_batch();
        p.step_time = StepTimeParams::Operations(OperationsParams::default());
        p
    }

    /// Step times 20% slower than the model's defaults, as a CSV.
    fn slower_steps(p: &ScenarioParams) -> String {
        let model = Scenario::try_from(p.clone())
            .expect("valid")
            .step_time()
            .clone();
        let mut csv = String::from("prefill_tokens,decode_seqs,kv_tokens,step_s\n");
        for (prefill, seqs, kv) in [
            (2048, 0, 2048),
            (8192, 0, 8192),
            (0, 1, 1001),
            (0, 64, 64 * 2001),
            (0, 256, 256 * 4001),
        ] {
            let mut shape = sojourn_engine::StepShape::default();
            if prefill > 0 {
                shape.add_prefill(0, prefill);
            }
            shape.decode_seqs = seqs;
            shape.decode_kv_tokens = kv - prefill;
            csv += &format!("{prefill},{seqs},{kv},{}\n", 1.2 * model.step_s(&shape));
        }
        csv
    }

    // Pasted step times are fitted, and Apply puts the fitted model and its
    // record in the scenario (so the link carries them) and the page shows
    // the record.
    #[test]
    fn pasted_step_times_are_fitted_and_applied_with_their_record() {
        let mut p = params();
        let Ok(Next::Show(prepared)) = prepare(&p, &slower_steps(&p)) else {
            panic!("a fit expected");
        };
        let Prepared::Fit(result) = &prepared else {
            panic!("a fit expected");
        };
        assert!(result.rms_log_error_after < 0.01 * result.rms_log_error_before);
        assert_eq!(prepared.tables().len(), 2);
        assert_eq!(prepared.tables()[1].rows.len(), 5);
        assert!(
            prepared.summary().starts_with("Fitted "),
            "{}",
            prepared.summary()
        );
        assert_eq!(fit_record(&p), None);
        prepared.apply(&mut p);
        Scenario::try_from(p.clone()).expect("the applied scenario is valid");
        let (line, points) = fit_record(&p).expect("a record");
        assert!(
            line.starts_with("This model was fitted to 5 step times"),
            "{line}"
        );
        assert_eq!(points.len(), 5);
    }

    // Benchmark points over a fit's budget (review issue 39's n14: 40 of
    // 4,000,000 requests) get the engine's refusal naming their rows, from a
    // check of microseconds, where the page sent them to the CLI, which
    // then ran for minutes.
    #[test]
    fn benchmark_points_over_the_fits_budget_are_refused_by_row() {
        let mut n14 =
            String::from("mode,requests,input_tokens,output_tokens,output_tokens_per_s\n");
        for i in 0..40 {
            n14 += &format!("offline,4000000,{},10,5000\n", 100 + i);
        }
        let e = prepare(&params(), &n14).expect_err("over the budget");
        assert!(
            e.starts_with("Too large to fit: the fit would simulate about"),
            "{e}"
        );
        assert!(
            e.contains("the largest: row 2, column requests (4,000,000 requests)"),
            "{e}"
        );
    }

    // Bad input gets a message naming the row and column; benchmark points
    // are sent to the CLI; a table is checked and applied as it is.
    #[test]
    fn bad_rows_benchmarks_and_tables_get_their_own_answers() {
        let mut p = params();
        let e = prepare(
            &p,
            "prefill_tokens,decode_seqs,kv_tokens,step_s\n512,0,512,fast\n",
        )
        .expect_err("a bad cell");
        assert_eq!(e, "row 2, column step_s: \"fast\" is not a number");
        assert_eq!(
            prepare(
                &p,
                "mode,clients,input_tokens,output_tokens,mean_itl_ms\nconcurrency,1,100,100,20\n",
            ),
            Ok(Next::FitInWorker(1)),
            "benchmark points go to the worker"
        );
        let e = prepare(
            &p,
            "batch_size,context_tokens,step_s\n1,1000,0.02\n8,1000,0.01\n",
        )
        .expect_err("a table faster with more sequences");
        assert!(e.contains("step_time.step_s[1]"), "{e}");
        let Ok(Next::Show(table)) = prepare(
            &p,
            "batch_size,context_tokens,step_s\n1,1000,0.01\n8,1000,0.02\n",
        ) else {
            panic!("a table");
        };
        table.apply(&mut p);
        assert!(matches!(p.step_time, StepTimeParams::BatchTable { .. }));
        assert!(table.tables().is_empty());
    }

    // Benchmark points (here vLLM's JSON result) go to the worker, which
    // fits them as `fit` does and sends the result as JSON; the page shows
    // it with each point's error and applies it like a step-time fit.
    #[test]
    fn benchmark_points_fit_in_the_worker_and_come_back_whole() {
        let mut p = params();
        let vllm = r#"{"num_prompts": 8, "request_rate": "inf", "max_concurrency": 2,
            "completed": 8, "total_input_tokens": 4096, "total_output_tokens": 512,
            "output_throughput": 150.0, "mean_ttft_ms": 80.0, "mean_itl_ms": 30.0}"#;
        assert_eq!(prepare(&p, vllm), Ok(Next::FitInWorker(1)));
        let result = fit(&p, &parse_measurements(vllm).expect("points")).expect("a fit");
        let sent = crate::job::WorkerMessage::Fitted {
            id: 3,
            result: Box::new(result.clone()),
        };
        let received = crate::job::WorkerMessage::from_json(&sent.to_json()).expect("read back");
        assert_eq!(received, sent);
        let prepared = Prepared::Fit(Box::new(result));
        assert!(
            prepared
                .summary()
                .contains("3 measured figures of benchmark points"),
            "{}",
            prepared.summary()
        );
        assert_eq!(prepared.tables()[1].rows.len(), 3);
        prepared.apply(&mut p);
        let (line, _) = fit_record(&p).expect("a record");
        assert!(line.contains("benchmark points"), "{line}");
    }
}

//! The report: per-request records and what planners read off them.
//!
//! A request *misses* when it completes after its class deadline, is
//! rejected, times out, or is unfinished when the run ends. Statistics count
//! requests that arrive at or after the warm-up.
//!
//! [`Report::build`] turns a run's output into a report: the census of every
//! record (`census.rs`), the class and overall rows (`aggregate.rs`), whose
//! percentiles and CDF points (`rows.rs`, `quantiles.rs`, `cdf.rs`) come from
//! bucketed selection in two passes per sample (`buckets.rs`, `select.rs`),
//! the warnings (`warnings.rs`) and the batch statistics (`batch.rs`). The
//! public types and their JSON shape are in `shape.rs`.

mod aggregate;
mod batch;
mod buckets;
mod cdf;
mod census;
mod quantiles;
mod rows;
mod select;
mod shape;
mod warnings;

#[cfg(test)]
mod testing;

pub use shape::{
    BatchStats, ClassStats, EngineStats, KvUse, Quantiles, Report, StepFigure, StepSpread,
};

use crate::model::scenario::Scenario;
use crate::sim::{RunError, RunOptions, RunOutput, Simulation};
use aggregate::{Accumulator, finish_rows};
use census::Census;
use warnings::warnings;

/// Runs a scenario to the end and builds its report.
pub fn simulate(scenario: &Scenario, options: &RunOptions) -> Result<Report, RunError> {
    Ok(Report::build(Simulation::new(scenario, options)?.finish()?))
}

impl Report {
    /// The report of a finished run.
    pub fn build(run_output: RunOutput<'_>) -> Report {
        let RunOutput {
            scenario,
            records,
            mut series,
            busy_s: busy_per_replica,
            active_until_s,
            events,
            work,
            steps,
            batches,
            end_s,
            keep_records,
        } = run_output;
        let run = &scenario.params().run;
        let window_s = run.horizon_s - run.warmup_s;
        let deadlines: Vec<f64> = scenario.classes().iter().map(|c| c.deadline_s).collect();
        let same_deadline = deadlines.windows(2).all(|w| w[0] == w[1]);
        // Flows per series interval count every request, warm-up included.
        let census = Census::take(
            &records,
            deadlines.len(),
            &mut series,
            run.series_interval_s,
        );
        let mut per_class: Vec<Accumulator> = scenario
            .params()
            .classes
            .iter()
            .zip(&census.per_class)
            .map(|(c, &count)| Accumulator::new(&c.name, c.deadline_s, count))
            .collect();
        for r in records.iter().filter(|r| r.arrival_s >= run.warmup_s) {
            per_class[r.class as usize].add(r, deadlines[r.class as usize]);
        }
        let overall_deadline = if same_deadline {
            deadlines[0]
        } else {
            f64::NAN
        };
        let (classes, overall) = finish_rows(&per_class, overall_deadline, window_s);
        drop(per_class);
        let n = scenario.params().cluster.replicas;
        let busy: f64 = busy_per_replica.iter().sum();
        let load = crate::sim::saturation::load_estimate(scenario);
        // Over the horizon, or until the last step when the fleet worked on
        // past it (not over the whole drain, which is mostly idle).
        let utilization = busy / (n as f64 * active_until_s.min(end_s).max(run.horizon_s));
        let warnings = warnings(
            &overall,
            &classes,
            &load,
            &series,
            run.horizon_s,
            &census,
            records.len(),
        );
        let (busy_period_s, output_tokens_per_s, total_tokens_per_s) =
            census.busy_period_throughput();
        let batches = BatchStats::build(&batches, &series, run.series_interval_s);
        Report {
            scenario_name: scenario.params().name.clone(),
            seed: run.seed,
            horizon_s: run.horizon_s,
            warmup_s: run.warmup_s,
            end_s,
            replicas: n,
            busy_s: busy,
            utilization,
            prefill_tokens_per_s: overall.prefill_tokens as f64 / window_s,
            decode_tokens_per_s: overall.decode_tokens as f64 / window_s,
            busy_period_s,
            output_tokens_per_s,
            total_tokens_per_s,
            overall,
            classes,
            series,
            load,
            warnings,
            engine: EngineStats {
                requests: records.len() as u64,
                steps,
                events,
                work,
            },
            batches,
            records: if keep_records { records } else { Vec::new() },
        }
    }

    /// A hash of every per-request time and outcome (FNV-1a over their bits):
    /// equal digests mean identical runs, natively or in wasm.
    pub fn digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            for byte in x.to_le_bytes() {
                h ^= byte as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for r in &self.records {
            eat(r.class as u64);
            eat(r.replica as u64);
            eat(r.input_tokens as u64);
            eat(r.output_tokens as u64);
            eat(r.preemptions as u64);
            eat(r.arrival_s.to_bits());
            eat(r.admitted_s.to_bits());
            eat(r.first_token_s.to_bits());
            eat(r.end_s.to_bits());
            eat(r.busy_s.to_bits());
            eat(r.status as u64);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::buckets::BUCKETS;
    use crate::report::cdf::CDF_POINTS;
    use crate::report::testing::{
        assert_same, assert_same_but_mean, cdf_by_search, quantiles_by_sorting,
    };
    use crate::sim::{RequestRecord, Status};

    #[test]
    #[ignore = "slow: oracle: every row recomputed from the records; scripts/test runs it"]
    fn the_report_rows_are_those_of_every_record() {
        // The default scenario: two classes, over 65,536 requests in all,
        // some arriving in the warm-up.
        let mut params = crate::params::ScenarioParams::overnight_batch();
        params.run.warmup_s = 3600.0;
        let scenario = Scenario::try_from(params).expect("valid scenario");
        let report =
            crate::report::simulate(&scenario, &crate::sim::RunOptions::default()).expect("runs");
        let kept: Vec<&RequestRecord> = report
            .records
            .iter()
            .filter(|r| r.arrival_s >= report.warmup_s)
            .collect();
        assert!(kept.len() >= BUCKETS && kept.len() < report.records.len());
        let of = |class: Option<u16>| -> Vec<&RequestRecord> {
            let mine = |r: &&&RequestRecord| class.is_none_or(|c| r.class == c);
            kept.iter().filter(mine).copied().collect()
        };
        let rows = (0..report.classes.len())
            .map(|c| (Some(c as u16), &report.classes[c]))
            .chain([(None, &report.overall)]);
        for (class, row) in rows {
            let records = of(class);
            let n = records.len() as u64;
            let times = |f: fn(&RequestRecord) -> Option<f64>| -> Vec<f64> {
                records.iter().filter_map(|r| f(r)).collect()
            };
            let sojourn = times(|r| (r.status == Status::Completed).then(|| r.sojourn_s()));
            let wait = times(|r| (!r.admitted_s.is_nan()).then_some(r.admitted_s - r.arrival_s));
            let ttft =
                times(|r| (!r.first_token_s.is_nan()).then_some(r.first_token_s - r.arrival_s));
            let tpot = times(|r| {
                (r.status == Status::Completed && r.output_tokens > 1)
                    .then(|| (r.end_s - r.first_token_s) / (r.output_tokens - 1) as f64)
            });
            let missing = |v: &Vec<f64>| n - v.len() as u64;
            let want = [
                quantiles_by_sorting(&sojourn, missing(&sojourn)),
                quantiles_by_sorting(&wait, missing(&wait)),
                quantiles_by_sorting(&ttft, missing(&ttft)),
                quantiles_by_sorting(&tpot, 0),
            ];
            let got = [&row.sojourn, &row.queue_wait, &row.ttft, &row.tpot];
            for (got, want) in got.into_iter().zip(&want) {
                match class {
                    Some(_) => assert_same(got, want, &row.name),
                    None => assert_same_but_mean(got, want, &row.name),
                }
            }
            assert_same(&row.cdf, &cdf_by_search(&sojourn, n, CDF_POINTS), &row.name);
            assert_eq!(row.arrived, n);
        }
        // Flows per series interval, over every record.
        let interval = scenario.params().run.series_interval_s;
        let index = |t: f64| (crate::model::dist::ceil_u64(t / interval) as usize).max(1) - 1;
        for (i, p) in report.series.iter().enumerate() {
            let arrivals = report.records.iter().filter(|r| index(r.arrival_s) == i);
            let completions = report
                .records
                .iter()
                .filter(|r| r.status == Status::Completed && index(r.end_s) == i);
            assert_eq!(
                (p.arrivals, p.completions),
                (arrivals.count() as u64, completions.count() as u64),
                "interval {i}"
            );
        }
    }
}

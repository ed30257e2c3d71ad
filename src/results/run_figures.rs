//! The configured fleet's headline figures, from its one simulation: P(miss)
//! of every class together, goodput, cost per success, utilization (busy
//! time, beside the offered work the sustainable target reads) and
//! concurrency. Each says which fleet, run and classes it is for, so that
//! it does not read as the verdict's per-class, per-replication figures.

use sojourn_engine::{CheckMetric, MISSING, RunSummary};

use super::{Figure, Topic, per_success};
use crate::format::{
    format_count, format_number, format_percent, format_percent_interval, format_percent_whole,
    format_usd,
};

/// The headline figures of the simulated configuration.
pub fn run_figures(run: &RunSummary) -> Vec<Figure> {
    let report = &run.report;
    let overall = &report.overall;
    let units = &run.cost.units;
    let cost_detail = match (units.usd_per_success, units.gpu_hours_per_success) {
        (Some(_), _) => format!(
            "configured fleet: {} steady + {} reserve replicas; {}",
            run.cost.fleet.steady_replicas,
            run.cost.fleet.reserve_replicas,
            price_label(run)
        ),
        (None, Some(_)) => "no price given: enter one under Prices to see USD".to_string(),
        (None, None) => "no request met its deadline".to_string(),
    };
    vec![
        Figure {
            topic: Topic::MissProbability,
            label: "P(miss), all classes",
            value: format_percent(overall.p_miss),
            detail: format!(
                "one simulation, every class together (95% CI {}); the verdict judges each class against its target",
                format_percent_interval(overall.p_miss_ci95)
            ),
            warning: None,
        },
        Figure {
            topic: Topic::Goodput,
            label: "Goodput",
            value: format!("{} req/h", format_number(overall.goodput_per_h, 4)),
            detail: format!(
                "{} of {} requests met their deadline",
                format_count(overall.met),
                format_count(overall.arrived)
            ),
            warning: None,
        },
        Figure {
            topic: Topic::CostPerSuccess,
            label: "Cost per successful request",
            value: per_success(units),
            detail: cost_detail,
            warning: None,
        },
        Figure {
            topic: Topic::Utilization,
            label: "Utilization",
            value: format_percent_whole(report.utilization),
            detail: format!(
                "busy time: of {} replicas' time executing steps, however few requests each step holds{}",
                report.replicas,
                offered_load(run)
                    .map(|rho| format!(
                        "; not the offered work against capacity ({}), which the sustainable target reads",
                        format_percent(rho)
                    ))
                    .unwrap_or_default()
            ),
            warning: None,
        },
        concurrency_figure(run),
    ]
}

/// The offered work against the fleet's capacity in this run: what the
/// sustainable target reads (`None` without one).
fn offered_load(run: &RunSummary) -> Option<f64> {
    run.targets
        .checks
        .iter()
        .find(|c| c.metric == CheckMetric::OfferedLoad)
        .map(|c| c.mean)
        .filter(|rho| rho.is_finite())
}

/// How full the replicas' batches are: requests running per replica on
/// average (over the series samples of the measured window), against the
/// load estimate's concurrency at saturation. Measured like utilization,
/// so the two agree: a replica can be busy every second with a batch of
/// one.
fn concurrency_figure(run: &RunSummary) -> Figure {
    let report = &run.report;
    let samples: Vec<f64> = report
        .series
        .iter()
        .filter(|p| p.t_s >= report.warmup_s && p.replicas > 0)
        .map(|p| p.running as f64 / f64::from(p.replicas))
        .collect();
    let mean = if samples.is_empty() {
        f64::NAN
    } else {
        samples.iter().sum::<f64>() / samples.len() as f64
    };
    let saturation = report.load.decode_concurrency;
    Figure {
        topic: Topic::Concurrency,
        label: "Concurrency",
        value: if mean.is_finite() {
            format_number(mean, 3)
        } else {
            MISSING.to_string()
        },
        detail: format!(
            "requests running per replica, on average; about {} at saturation",
            format_number(saturation, 3)
        ),
        warning: None,
    }
}

fn price_label(run: &RunSummary) -> String {
    let basis = &run.cost.basis;
    let price = basis
        .usd_per_gpu_hour
        .map(|p| format!("{}/GPU-h {}", format_usd(p), basis.pricing_model.label()))
        .unwrap_or_default();
    let mut parts = vec![price];
    if !basis.provider_region.trim().is_empty() {
        parts.push(basis.provider_region.clone());
    }
    if !basis.price_date.trim().is_empty() {
        parts.push(format!("priced {}", basis.price_date));
    }
    parts.join(", ")
}

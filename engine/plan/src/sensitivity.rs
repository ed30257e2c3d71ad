//! One-at-a-time sensitivity, read two ways: on the plan's fixed fleet, each
//! input moved down and up by the plan's delta, and how far cost per
//! success, P(miss) and the worst check move (the data behind a tornado
//! chart); and, for the inputs with the largest impact, the fleet
//! re-planned at each end (the chosen configuration's own capacity search)
//! and its monthly cost.

use crate::cost::{self, FleetCost};
use crate::evaluate::CheckMetric;
use crate::explore::floor;
use crate::params::plan::{Multipliers, SensitivityInput};
use crate::result::{Sensitivity, SensitivityRow};
use crate::runner::{Gather, Halt, Runner};
use crate::search::{Bounds, capacity_search};

/// Inputs (besides price, which needs no run) re-planned at both ends.
const REPLANNED_INPUTS: usize = 2;

/// The sensitivity of `replicas` of configuration `candidate` (whose
/// smallest fleet is `min_replicas`), rows sorted by impact.
pub(super) fn sensitivity(
    runner: &mut Runner,
    candidate: usize,
    replicas: u32,
    min_replicas: u32,
) -> Result<Sensitivity, Halt> {
    let settings = runner.base.params().plan.sensitivity.clone();
    let reps = settings.replications;
    let delta = settings.delta;
    runner.phase = "sensitivity".to_string();
    let base_case = runner.case(candidate, Multipliers::BASE, "expected demand")?;
    // Every point is independent: gather them all before stopping.
    let mut points = Gather::default();
    let base = points.take(point(runner, base_case, Multipliers::BASE, replicas, reps))?;
    let mut all_ends = Vec::new();
    for &input in &settings.inputs {
        for factor in [1.0 - delta, 1.0 + delta] {
            let m = Multipliers::BASE.with(input, factor);
            let case = runner.case(candidate, m, &format!("{} x{factor}", input.label()))?;
            all_ends.push(points.take(point(runner, case, m, replicas, reps))?);
        }
    }
    points.finish(())?;
    let Some(base) = base else {
        return Err(Halt::Pending);
    };
    let mut all_ends = all_ends.into_iter().flatten();
    // P(miss) swings count relative to the base P(miss), or, when the
    // base has no misses, to the tightest miss target (1% without one).
    let tightest_epsilon = runner
        .checks
        .iter()
        .filter(|c| c.metric == CheckMetric::MissProbability)
        .map(|c| c.threshold)
        .fold(0.01, f64::min);
    let p_miss_scale = if base.p_miss > 0.0 {
        base.p_miss
    } else {
        tightest_epsilon
    };
    let mut rows = Vec::new();
    for &input in &settings.inputs {
        let (Some(low), Some(high)) = (all_ends.next(), all_ends.next()) else {
            break;
        };
        let relative = |a: Option<f64>, b: Option<f64>, base: Option<f64>| match (a, b, base) {
            (Some(a), Some(b), Some(base)) if base > 0.0 => Some((b - a).abs() / base),
            _ => None,
        };
        let cost_swing = relative(
            low.usd_per_success,
            high.usd_per_success,
            base.usd_per_success,
        )
        .or_else(|| {
            relative(
                low.gpu_hours_per_success,
                high.gpu_hours_per_success,
                base.gpu_hours_per_success,
            )
        });
        rows.push(SensitivityRow {
            input,
            label: input.label().to_string(),
            low_multiplier: 1.0 - delta,
            high_multiplier: 1.0 + delta,
            p_miss_low: low.p_miss,
            p_miss_high: high.p_miss,
            usd_per_success_low: low.usd_per_success,
            usd_per_success_high: high.usd_per_success,
            gpu_hours_per_success_low: low.gpu_hours_per_success,
            gpu_hours_per_success_high: high.gpu_hours_per_success,
            meets_low: low.meets,
            meets_high: high.meets,
            worst_ratio_low: low.worst_ratio,
            worst_ratio_high: high.worst_ratio,
            cost_swing: cost_swing.unwrap_or(0.0),
            p_miss_swing: (high.p_miss - low.p_miss).abs(),
            impact: cost_swing
                .unwrap_or(0.0)
                .max((high.p_miss - low.p_miss).abs() / p_miss_scale)
                .max(ratio_swing(low.worst_ratio, high.worst_ratio)),
            replanned_replicas_low: None,
            replanned_replicas_high: None,
            replanned_usd_per_month_low: None,
            replanned_usd_per_month_high: None,
        });
    }
    rows.sort_by(|a, b| {
        b.impact
            .total_cmp(&a.impact)
            .then(b.cost_swing.total_cmp(&a.cost_swing))
            .then(a.input.cmp(&b.input))
    });
    replan(runner, candidate, min_replicas, delta, &mut rows)?;
    let label = runner.configs[candidate].label.clone();
    Ok(Sensitivity {
        reading: format!(
            "On the fixed fleet: {} of {label}, each input moved by {} with the others at their base values. Re-planned: for price and the {REPLANNED_INPUTS} other inputs with the largest impact, the smallest fleet of {label} meeting every target at each end ({min_replicas} at the base) and its monthly cost with the reserve.",
            crate::format::counted(replicas.into(), "replica"),
            crate::format::percent(delta)
        ),
        basis: runner.basis(base_case),
        candidate: runner.configs[candidate].label.clone(),
        replicas,
        delta,
        replications: reps,
        base_p_miss: base.p_miss,
        base_usd_per_success: base.usd_per_success,
        base_gpu_hours_per_success: base.gpu_hours_per_success,
        rows,
    })
}

/// Fills in the re-planned fleets of price (the base fleet at the moved
/// price: no run) and of the `REPLANNED_INPUTS` other rows with the largest
/// impact (rows are sorted by it).
fn replan(
    runner: &mut Runner,
    config: usize,
    min_replicas: u32,
    delta: f64,
    rows: &mut [SensitivityRow],
) -> Result<(), Halt> {
    let reserve = runner.reserve_replicas();
    let max = runner.base.params().plan.max_replicas;
    let mut searches = Gather::default();
    let mut others = 0;
    for row in rows.iter_mut() {
        let is_price = row.input == SensitivityInput::Price;
        if !is_price {
            if others == REPLANNED_INPUTS {
                continue;
            }
            others += 1;
        }
        for (factor, low) in [(1.0 - delta, true), (1.0 + delta, false)] {
            let m = Multipliers::BASE.with(row.input, factor);
            let case = runner.case(config, m, &format!("{} x{factor}", row.input.label()))?;
            let found = if is_price {
                Some(min_replicas)
            } else {
                let bounds = Bounds {
                    floor: floor(runner, case),
                    ceiling: max,
                };
                searches
                    .take(capacity_search(runner, case, bounds))?
                    .and_then(|s| s.found)
            };
            let Some(n) = found else { continue };
            let basis = runner.basis_at_price(case, m.price);
            let usd = FleetCost::new(&basis, n, reserve, 1.0).usd_per_month;
            if low {
                row.replanned_replicas_low = Some(n);
                row.replanned_usd_per_month_low = usd;
            } else {
                row.replanned_replicas_high = Some(n);
                row.replanned_usd_per_month_high = usd;
            }
        }
    }
    searches.finish(())
}

/// One end of a sensitivity row (or the base it is compared with).
#[derive(Clone, Copy, Debug)]
struct SensitivityPoint {
    p_miss: f64,
    usd_per_success: Option<f64>,
    gpu_hours_per_success: Option<f64>,
    /// Every check (targets and sustainability) over the same seeds.
    meets: bool,
    worst_ratio: f64,
}

/// P(miss) and cost per success of `case` on `replicas`, priced with
/// `multipliers` (a price change shares the runs of the unchanged system).
fn point(
    runner: &mut Runner,
    case: usize,
    multipliers: Multipliers,
    replicas: u32,
    reps: u32,
) -> Result<SensitivityPoint, Halt> {
    let evaluation = runner.evaluate(case, replicas, reps)?;
    let runs = runner.runs(case, replicas, reps);
    let cost = cost::summarize(
        runner.basis_at_price(case, multipliers.price),
        &runs,
        replicas,
        runner.reserve_replicas(),
    );
    let p_miss = runs.iter().map(|r| r.overall.p_miss).sum::<f64>() / reps as f64;
    Ok(SensitivityPoint {
        p_miss,
        usd_per_success: cost.units.usd_per_success,
        gpu_hours_per_success: cost.units.gpu_hours_per_success,
        meets: evaluation.meets,
        worst_ratio: evaluation.worst_ratio,
    })
}

/// How far the worst check moves between the two ends of a sensitivity row,
/// in units of its threshold (infinite ratios count as 10: far off).
fn ratio_swing(low: f64, high: f64) -> f64 {
    (high.min(10.0) - low.min(10.0)).abs()
}

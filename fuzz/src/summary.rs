//! The campaign's counts: per kind, what became of the inputs (read,
//! valid, refused, run), the findings of each kind, and the slowest and
//! largest inputs; and the findings grouped by what, where and why.

use std::collections::BTreeMap;

use crate::input::Kind;
use crate::outcome::{Outcome, Stage, What};

/// The counts of one kind (or of all).
#[derive(Clone, Debug, Default)]
pub struct Counts {
    pub inputs: u64,
    pub not_read: u64,
    pub invalid: u64,
    pub checked: u64,
    pub budget: u64,
    pub work_cap: u64,
    pub ran: u64,
    pub panicked: u64,
    pub findings: BTreeMap<What, u64>,
    /// Wall time of all its inputs \[s\].
    pub total_s: f64,
    pub slowest_s: f64,
    pub slowest_index: u64,
    pub largest_bytes: u64,
    pub largest_index: u64,
    pub slowest_validation_s: f64,
    pub plans_refused: u64,
    pub plans_run: u64,
    pub plan_ratios: Vec<f64>,
    pub fits_skipped: u64,
    /// Runs that sent more requests than their up-front estimate.
    pub sent_over_estimate: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Outcome) {
        self.inputs += 1;
        match o.stage {
            Stage::NotRead => self.not_read += 1,
            Stage::Invalid => self.invalid += 1,
            Stage::Checked => self.checked += 1,
            Stage::Budget => self.budget += 1,
            Stage::WorkCap => self.work_cap += 1,
            Stage::Ran => self.ran += 1,
            Stage::Panicked => self.panicked += 1,
        }
        for f in &o.findings {
            *self.findings.entry(f.what).or_default() += 1;
        }
        self.total_s += o.seconds;
        if o.cpu_seconds > self.slowest_s {
            self.slowest_s = o.cpu_seconds;
            self.slowest_index = o.index;
        }
        if o.peak_bytes > self.largest_bytes {
            self.largest_bytes = o.peak_bytes;
            self.largest_index = o.index;
        }
        self.slowest_validation_s = self.slowest_validation_s.max(o.validate_seconds);
        if let Some(plan) = &o.plan {
            if plan.refused {
                self.plans_refused += 1;
            }
            if plan.ran {
                self.plans_run += 1;
                if plan.simulated_requests.is_finite() && plan.estimated_requests > 0.0 {
                    self.plan_ratios
                        .push(plan.simulated_requests / plan.estimated_requests);
                }
            }
        }
        if o.fit_skipped {
            self.fits_skipped += 1;
        }
        if o.sent_over_estimate {
            self.sent_over_estimate += 1;
        }
    }

    /// A finding of the supervisor's (a hang or a crash: no outcome).
    pub fn add_lost(&mut self, what: What) {
        self.inputs += 1;
        *self.findings.entry(what).or_default() += 1;
    }

    fn count(&self, what: What) -> u64 {
        self.findings.get(&what).copied().unwrap_or(0)
    }

    fn other_findings(&self) -> u64 {
        self.findings
            .iter()
            .filter(|(w, _)| {
                !matches!(
                    w,
                    What::Panic | What::OverTime | What::OverMemory | What::Hang | What::Crash
                )
            })
            .map(|(_, n)| n)
            .sum()
    }

    fn merge(&mut self, other: &Counts) {
        self.inputs += other.inputs;
        self.not_read += other.not_read;
        self.invalid += other.invalid;
        self.checked += other.checked;
        self.budget += other.budget;
        self.work_cap += other.work_cap;
        self.ran += other.ran;
        self.panicked += other.panicked;
        self.total_s += other.total_s;
        for (w, n) in &other.findings {
            *self.findings.entry(*w).or_default() += n;
        }
        if other.slowest_s > self.slowest_s {
            self.slowest_s = other.slowest_s;
            self.slowest_index = other.slowest_index;
        }
        if other.largest_bytes > self.largest_bytes {
            self.largest_bytes = other.largest_bytes;
            self.largest_index = other.largest_index;
        }
        self.slowest_validation_s = self.slowest_validation_s.max(other.slowest_validation_s);
        self.plans_refused += other.plans_refused;
        self.plans_run += other.plans_run;
        self.plan_ratios.extend(&other.plan_ratios);
        self.fits_skipped += other.fits_skipped;
        self.sent_over_estimate += other.sent_over_estimate;
    }
}

/// Counts by kind.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub by_kind: BTreeMap<Kind, Counts>,
}

impl Summary {
    pub fn add(&mut self, o: &Outcome) {
        self.by_kind.entry(o.kind).or_default().add(o);
    }

    pub fn add_lost(&mut self, kind: Kind, what: What) {
        self.by_kind.entry(kind).or_default().add_lost(what);
    }

    pub fn total(&self) -> Counts {
        let mut total = Counts::default();
        for c in self.by_kind.values() {
            total.merge(c);
        }
        total
    }

    /// The table, as Markdown (it pastes into a note as it is).
    pub fn table(&self) -> String {
        let mut out = String::from(
            "| kind | inputs | not read | invalid | valid | refused by budget | ran | work cap | panics | over time | over memory | hangs | crashes | other findings | time | slowest (CPU) | largest peak | slowest validation |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        let rows = self
            .by_kind
            .iter()
            .map(|(k, c)| (k.name().to_string(), c.clone()))
            .chain(std::iter::once(("all".to_string(), self.total())));
        for (name, c) in rows {
            let valid = c.checked + c.budget + c.work_cap + c.ran;
            out += &format!(
                "| {name} | {} | {} | {} | {valid} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} s | {:.2} s (#{}) | {:.0} MB (#{}) | {:.3} s |\n",
                c.inputs,
                c.not_read,
                c.invalid,
                c.budget,
                c.ran,
                c.work_cap,
                c.count(What::Panic),
                c.count(What::OverTime),
                c.count(What::OverMemory),
                c.count(What::Hang),
                c.count(What::Crash),
                c.other_findings(),
                c.total_s,
                c.slowest_s,
                c.slowest_index,
                c.largest_bytes as f64 / 1e6,
                c.largest_index,
                c.slowest_validation_s,
            );
        }
        let total = self.total();
        out += &format!(
            "\nPlan checks refused {} scenarios; {} plans ran{}. Benchmark fits skipped as too large: {}. \
             Runs that sent over 1.25 times their up-front estimate of requests (bounded by the run's own \
             count of what it sent): {}.\n",
            total.plans_refused,
            total.plans_run,
            ratio_words(&total.plan_ratios),
            total.fits_skipped,
            total.sent_over_estimate
        );
        if total.count(What::Panic) + total.count(What::Crash) > 0 || total.panicked > 0 {
            out += &format!("Inputs ended by a panic: {}.\n", total.panicked);
        }
        out
    }
}

fn ratio_words(ratios: &[f64]) -> String {
    if ratios.is_empty() {
        return String::new();
    }
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    format!(
        " (simulated / estimated requests: min {:.3}, median {:.3}, max {:.3})",
        sorted[0],
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1]
    )
}

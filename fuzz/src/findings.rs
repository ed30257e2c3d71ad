//! The campaign's findings: each input's reproducer written once, and
//! findings grouped by what, kind, step and detail (numbers blanked) with
//! the first few reproducers of each kept, for the summary.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::input::{Input, Kind};
use crate::outcome::{Finding, Outcome, What};

/// A reproducer: the input exactly, where it came from and what happened.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Reproducer {
    pub seed: u64,
    pub index: u64,
    pub findings: Vec<Finding>,
    pub seconds: f64,
    pub peak_bytes: u64,
    pub input: Input,
}

/// Findings grouped: one group per (what, kind, step, detail with its
/// numbers blanked), with a few reproducers each.
#[derive(Default)]
pub struct Findings {
    groups: BTreeMap<String, Group>,
}

#[derive(Clone, Debug, Serialize)]
struct Group {
    what: What,
    kind: Kind,
    step: String,
    detail: String,
    count: u64,
    files: Vec<String>,
    /// Every input of the group (`--show --index` makes any of them).
    indices: Vec<u64>,
}

/// The first reproducers of a group kept \[files\].
const KEPT_PER_GROUP: usize = 3;

/// A detail with its numbers blanked, so that the same defect at other
/// values groups together.
fn blanked(detail: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in detail.chars() {
        if c.is_ascii_digit() || (in_number && (c == '.' || c == 'e' || c == '-')) {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out.chars().take(160).collect()
}

impl Findings {
    pub fn add(&mut self, dir: &Path, seed: u64, outcome: &Outcome, input: &Input) {
        let mut written: Option<String> = None;
        for f in &outcome.findings {
            let key = format!(
                "{:?}/{}/{}/{}",
                f.what,
                input.kind,
                f.step,
                blanked(&f.detail)
            );
            let group = self.groups.entry(key).or_insert_with(|| Group {
                what: f.what,
                kind: input.kind,
                step: f.step.clone(),
                detail: f.detail.clone(),
                count: 0,
                files: Vec::new(),
                indices: Vec::new(),
            });
            group.count += 1;
            group.indices.push(outcome.index);
            if group.files.len() < KEPT_PER_GROUP {
                let file = match &written {
                    Some(file) => file.clone(),
                    None => {
                        let name = format!(
                            "{}-{}-s{seed}-i{}.json",
                            f.what.label().replace(' ', "-"),
                            input.kind,
                            outcome.index
                        );
                        let reproducer = Reproducer {
                            seed,
                            index: outcome.index,
                            findings: outcome.findings.clone(),
                            seconds: outcome.seconds,
                            peak_bytes: outcome.peak_bytes,
                            input: input.clone(),
                        };
                        let path = dir.join(&name);
                        let text = serde_json::to_string_pretty(&reproducer).unwrap_or_default();
                        if let Err(e) = fs::write(&path, text) {
                            eprintln!("cannot write {}: {e}", path.display());
                        }
                        written = Some(path.display().to_string());
                        path.display().to_string()
                    }
                };
                group.files.push(file);
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.groups.values().map(|g| g.count).sum()
    }

    /// How many groups.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// Every group, as JSON (`findings.json`).
    pub fn json(&self) -> String {
        let groups: Vec<&Group> = self.groups.values().collect();
        serde_json::to_string_pretty(&groups).unwrap_or_default()
    }

    pub fn words(&self) -> String {
        let mut out = String::new();
        for g in self.groups.values() {
            out += &format!(
                "- {} x{} [{}] in {}: {}\n  {}\n",
                g.what.label(),
                g.count,
                g.kind,
                g.step,
                g.detail,
                g.files.join("\n  ")
            );
        }
        out
    }
}

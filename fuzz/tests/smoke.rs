//! The fuzz campaign kept alive in CI: a small fixed-seed campaign of every
//! kind must finish without a finding (docs/reliability.md).

use std::process::Command;

/// Inputs in the smoke campaign: a few of each kind, under a minute in a
/// debug build.
const INPUTS: &str = "400";

#[test]
fn a_small_fixed_seed_campaign_finds_nothing() {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("sojourn-fuzz-smoke");
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_sojourn-fuzz"))
        .args(["--seed", "1", "--inputs", INPUTS, "--threads", "2"])
        // A debug build is slower than the campaign's: more time before a finding.
        .args(["--time-limit", "20", "--hang-s", "40", "--out"])
        .arg(&out)
        .output()
        .expect("the fuzz binary runs");
    let summary = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "findings (reproducers in {}):\n{summary}\n{}",
        out.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        summary.contains(&format!("| all | {INPUTS} |")),
        "{summary}"
    );
}

//! The engine gives bit-identical results natively and under wasm32.
//!
//! `tests/golden/determinism.json` pins the digest of every per-request time
//! for a small scenario with a fixed seed. The native run and the wasm32 run
//! (in headless Chromium) both compare against it, so together they prove the
//! two targets agree. After an intended change to the engine's numbers,
//! re-bless natively with `SOJOURN_BLESS=1 cargo test -p sojourn-app --test it`.

use serde_json::{Value, json};
use sojourn_engine::{RunOptions, RunParams, Scenario, ScenarioParams, simulate};

/// The golden file, embedded at compile time so the wasm32 build reads it too.
const GOLDEN: &str = include_str!("../golden/determinism.json");

/// One hour of the default scenario with seed 7: small enough to run in a
/// second in the browser, large enough to exercise queueing.
fn small_scenario() -> Scenario {
    let params = ScenarioParams {
        run: RunParams {
            horizon_s: 3600.0,
            seed: 7,
            ..RunParams::default()
        },
        ..ScenarioParams::default()
    };
    Scenario::try_from(params).expect("the small scenario is valid")
}

/// What the golden file holds for a run: the digest as 16 hex digits and the
/// number of arrivals (a readable hint when the digest changes).
fn observed() -> Value {
    let report = simulate(&small_scenario(), &RunOptions::default()).expect("the run succeeds");
    json!({
        "digest": format!("{:016x}", report.digest()),
        "arrived": report.overall.arrived,
    })
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn fixed_seed_reproduces_golden_digest() {
    let observed = observed();
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("SOJOURN_BLESS").is_some_and(|value| value == "1") {
        bless(&observed);
        return;
    }
    let golden: Value = serde_json::from_str(GOLDEN).expect("the golden file is JSON");
    assert_eq!(
        observed, golden,
        "the engine's output for the fixed-seed scenario changed; if that is \
         intended, re-bless natively with SOJOURN_BLESS=1"
    );
}

#[cfg(not(target_arch = "wasm32"))]
fn bless(observed: &Value) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/determinism.json");
    let text = serde_json::to_string_pretty(observed).expect("a JSON value serialises");
    std::fs::write(path, text + "\n").expect("the golden file is writable");
}

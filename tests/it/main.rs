//! The app's tests, as one test binary for both targets.
//!
//! - Natively (`cargo test --workspace`): `determinism`, and the plain
//!   modules the page is built on: `link` (share links), `job` (worker
//!   messages), `results` (figures and the engine's tables of a real run),
//!   `charts`, `examples` (the shipped scenarios the page offers, its guide),
//!   `import` (the files a user opens), `registry` (the inputs' words),
//!   `form` and `format` (input boxes; the number formats and CSV
//!   are the engine's, tested there).
//! - In headless Chromium (`cargo test -p sojourn-app --target
//!   wasm32-unknown-unknown`, run by wasm-bindgen-test-runner): `determinism`
//!   again, under wasm32, against the same golden file, plus `browser`, which
//!   mounts the app in the page.
//!
//! A test that must run on both targets carries both attributes:
//! `#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]`
//! and `#[cfg_attr(not(target_arch = "wasm32"), test)]`.

// A test crate: its helpers (outside `#[test]` functions, where clippy's
// allow-*-in-tests do not reach) state what they expect with unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

/// Whether to rewrite golden files instead of comparing with them:
/// `SOJOURN_BLESS=1`, the one switch for every golden file and generated
/// table in the workspace (natively; a wasm32 test only compares).
#[cfg(not(target_arch = "wasm32"))]
pub fn blessing() -> bool {
    std::env::var_os("SOJOURN_BLESS").is_some_and(|value| value == "1")
}

#[cfg(target_arch = "wasm32")]
mod browser;
mod determinism;
// Plain logic: once, natively, is enough.
#[cfg(not(target_arch = "wasm32"))]
mod charts;
#[cfg(not(target_arch = "wasm32"))]
mod examples;
#[cfg(not(target_arch = "wasm32"))]
mod form;
#[cfg(not(target_arch = "wasm32"))]
mod format;
#[cfg(not(target_arch = "wasm32"))]
mod import;
#[cfg(not(target_arch = "wasm32"))]
mod job;
#[cfg(not(target_arch = "wasm32"))]
mod link;
#[cfg(not(target_arch = "wasm32"))]
mod registry;
#[cfg(not(target_arch = "wasm32"))]
mod results;

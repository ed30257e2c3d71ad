//! Entry point: starts the simulation workers, then mounts the app on the
//! page body once they have loaded.
//!
//! A worker's script and WebAssembly load through the page's thread, so
//! building the page first (a few hundred milliseconds) would hold them
//! up, and the first run with them. Waiting for them costs the page tens
//! of milliseconds; it waits at most [`LOAD_WAIT`].

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// The longest the page waits for its workers before it is built anyway.
const LOAD_WAIT: Duration = Duration::from_millis(500);

fn main() {
    console_error_panic_hook::set_once();
    let pool = sojourn_app::worker_client::start_early();
    let mounted = Rc::new(Cell::new(false));
    let mount = move || {
        if !mounted.replace(true) {
            leptos::mount::mount_to_body(sojourn_app::App);
        }
    };
    leptos::prelude::set_timeout(mount.clone(), LOAD_WAIT);
    pool.when_loaded(mount);
}

//! Entry point of the simulation Web Worker: installs the message handler
//! and does nothing else (see `src/worker.rs`). Natively it does nothing.

fn main() {
    #[cfg(target_arch = "wasm32")]
    sojourn_app::worker::start();
}

//! Entry point: mounts the app on the page body and does nothing else.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(sojourn_app::App);
}

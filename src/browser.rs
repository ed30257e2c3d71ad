//! Thin wrappers over the browser APIs the page uses: the address bar,
//! localStorage, file downloads and uploads, the clipboard, the colour
//! scheme, and turning an SVG into a PNG. Each returns what failed as text
//! instead of panicking.

use js_sys::Array;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, HtmlCanvasElement, HtmlImageElement, Url};

/// Where the last scenario is remembered.
pub const STORAGE_KEY: &str = "sojourn.scenario";

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

/// How many logical cores the browser offers the page
/// (`navigator.hardwareConcurrency`).
pub fn hardware_concurrency() -> Option<f64> {
    window().map(|w| w.navigator().hardware_concurrency())
}

/// The current query string (`?s=...`), or "".
pub fn query() -> String {
    window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

/// The page's address without query or fragment.
pub fn page_address() -> String {
    window()
        .and_then(|w| {
            let location = w.location();
            Some(format!(
                "{}{}",
                location.origin().ok()?,
                location.pathname().ok()?
            ))
        })
        .unwrap_or_default()
}

/// Replaces the query string without reloading, scrolling or adding history.
/// An empty `query` removes it (an empty URL would leave the address as it is).
pub fn replace_query(query: &str) {
    let Some(window) = window() else {
        return;
    };
    let url = if query.is_empty() {
        window
            .location()
            .pathname()
            .unwrap_or_else(|_| "/".to_string())
    } else {
        query.to_string()
    };
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
}

fn storage() -> Option<web_sys::Storage> {
    window().and_then(|w| w.local_storage().ok().flatten())
}

pub fn load_stored(key: &str) -> Option<String> {
    storage().and_then(|s| s.get_item(key).ok().flatten())
}

/// Keeps `value` under `key`; false when the storage is full or disabled.
pub fn store(key: &str, value: &str) -> bool {
    storage().is_some_and(|storage| storage.set_item(key, value).is_ok())
}

/// Whether the system asks for dark mode.
pub fn prefers_dark() -> bool {
    window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|query| query.matches())
}

/// Calls `on_change(dark)` whenever the system colour scheme changes.
pub fn watch_color_scheme(on_change: impl Fn(bool) + 'static) {
    let Some(query) =
        window().and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
    else {
        return;
    };
    let listener = Closure::<dyn FnMut(web_sys::MediaQueryListEvent)>::new(
        move |event: web_sys::MediaQueryListEvent| on_change(event.matches()),
    );
    let _ = query.add_event_listener_with_callback("change", listener.as_ref().unchecked_ref());
    listener.forget();
}

/// Calls `on_resize(width)` with the window's inner width now and on resize.
pub fn watch_width(on_resize: impl Fn(f64) + 'static) {
    let Some(window) = window() else {
        return;
    };
    let width = |w: &web_sys::Window| {
        w.inner_width()
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(1200.0)
    };
    on_resize(width(&window));
    let target = window.clone();
    let listener = Closure::<dyn FnMut()>::new(move || on_resize(width(&target)));
    let _ = window.add_event_listener_with_callback("resize", listener.as_ref().unchecked_ref());
    listener.forget();
}

fn blob(content: &str, mime: &str) -> Result<Blob, String> {
    let parts = Array::of1(&JsValue::from_str(content));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| "cannot create the file".to_string())
}

fn download_url(url: &str, file_name: &str) -> Result<(), String> {
    let document = window().and_then(|w| w.document()).ok_or("no document")?;
    let anchor: HtmlAnchorElement = document
        .create_element("a")
        .map_err(|_| "cannot create a link")?
        .unchecked_into();
    anchor.set_href(url);
    anchor.set_download(file_name);
    anchor.click();
    Ok(())
}

/// Offers `content` as a file download.
pub fn download_text(file_name: &str, mime: &str, content: &str) -> Result<(), String> {
    let blob = blob(content, mime)?;
    let url = Url::create_object_url_with_blob(&blob).map_err(|_| "cannot create the file")?;
    let outcome = download_url(&url, file_name);
    revoke_later(url);
    outcome
}

/// Revokes an object URL after the download has had time to start.
fn revoke_later(url: String) {
    leptos::prelude::set_timeout(
        move || {
            let _ = Url::revoke_object_url(&url);
        },
        std::time::Duration::from_secs(30),
    );
}

/// Draws `svg` (width x height CSS pixels) on a canvas at `scale` and offers
/// it as a PNG download.
pub fn download_svg_as_png(
    file_name: &str,
    svg: &str,
    width: f64,
    height: f64,
    scale: f64,
) -> Result<(), String> {
    let document = window().and_then(|w| w.document()).ok_or("no document")?;
    let svg_blob = blob(svg, "image/svg+xml")?;
    let svg_url =
        Url::create_object_url_with_blob(&svg_blob).map_err(|_| "cannot create the image")?;
    let image = HtmlImageElement::new().map_err(|_| "cannot create an image")?;
    let canvas: HtmlCanvasElement = document
        .create_element("canvas")
        .map_err(|_| "cannot create a canvas")?
        .unchecked_into();
    canvas.set_width((width * scale) as u32);
    canvas.set_height((height * scale) as u32);
    let file_name = file_name.to_string();
    let loaded = image.clone();
    let url_for_load = svg_url.clone();
    let on_load = Closure::once(move || {
        let Ok(Some(context)) = canvas.get_context("2d") else {
            return;
        };
        let context: web_sys::CanvasRenderingContext2d = context.unchecked_into();
        let _ = context.scale(scale, scale);
        let _ = context
            .draw_image_with_html_image_element_and_dw_and_dh(&loaded, 0.0, 0.0, width, height);
        let _ = Url::revoke_object_url(&url_for_load);
        if let Ok(png) = canvas.to_data_url_with_type("image/png") {
            let _ = download_url(&png, &file_name);
        }
    });
    image.set_onload(Some(on_load.as_ref().unchecked_ref()));
    on_load.forget();
    image.set_src(&svg_url);
    Ok(())
}

/// Copies `text` to the clipboard; resolves to whether it worked.
pub async fn copy_to_clipboard(text: &str) -> bool {
    let Some(clipboard) = window().map(|w| w.navigator().clipboard()) else {
        return false;
    };
    wasm_bindgen_futures::JsFuture::from(clipboard.write_text(text))
        .await
        .is_ok()
}

/// The text of the first file picked in a file input.
pub async fn read_picked_file(input: &web_sys::HtmlInputElement) -> Option<(String, String)> {
    let file = input.files()?.get(0)?;
    let name = file.name();
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .ok()?;
    Some((name, text.as_string()?))
}

/// The time now as ISO 8601 in UTC ("2026-11-26T14:00:00.000Z").
pub fn now_iso() -> String {
    js_sys::Date::new_0()
        .to_iso_string()
        .as_string()
        .unwrap_or_default()
}

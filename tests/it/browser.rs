//! The app mounted in a real page, driven as a user would: find the button
//! by its name, click it, wait for the result.

use std::time::Duration;

use leptos::mount::mount_to;
use leptos::prelude::*;
use sojourn_app::App;
use sojourn_app::panels::run::RunPanel;
use sojourn_engine::{RunParams, ScenarioParams};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::wasm_bindgen_test;
use web_sys::{Element, HtmlButtonElement, HtmlElement};

/// How long a run may take in the test browser before the test gives up.
const RESULT_TIMEOUT: Duration = Duration::from_secs(15);

/// A fresh element in the page's body to mount into; removed on drop so
/// tests do not see each other's DOM.
struct Container(HtmlElement);

impl Container {
    fn new() -> Container {
        let element = document()
            .create_element("div")
            .expect("a div can be created")
            .unchecked_into::<HtmlElement>();
        document()
            .body()
            .expect("the test page has a body")
            .append_child(&element)
            .expect("the div can be attached");
        Container(element)
    }

    /// The button whose accessible name (here: its text) is `name`.
    fn button(&self, name: &str) -> HtmlButtonElement {
        let buttons = self
            .0
            .query_selector_all("button")
            .expect("a valid selector");
        (0..buttons.length())
            .filter_map(|idx| buttons.item(idx))
            .filter_map(|node| node.dyn_into::<HtmlButtonElement>().ok())
            .find(|button| {
                button
                    .text_content()
                    .is_some_and(|text| text.trim() == name)
            })
            .unwrap_or_else(|| panic!("no button named {name:?}"))
    }

    fn find(&self, selector: &str) -> Option<Element> {
        self.0.query_selector(selector).expect("a valid selector")
    }

    /// Polls until `selector` matches, failing after [`RESULT_TIMEOUT`].
    async fn wait_for(&self, selector: &str) -> Element {
        let poll_every = Duration::from_millis(25);
        let mut waited = Duration::ZERO;
        loop {
            if let Some(element) = self.find(selector) {
                return element;
            }
            assert!(
                waited < RESULT_TIMEOUT,
                "nothing matched {selector:?} after {RESULT_TIMEOUT:?}; the page shows: {}",
                self.0.text_content().unwrap_or_default()
            );
            sleep(poll_every).await;
            waited += poll_every;
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        self.0.remove();
    }
}

/// Yields to the browser for `duration`, letting timers, frames and Leptos's
/// scheduled updates run.
async fn sleep(duration: Duration) {
    let millis = i32::try_from(duration.as_millis()).unwrap_or(i32::MAX);
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        window()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, millis)
            .expect("setTimeout is available");
    });
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .expect("a timer promise resolves");
}

#[wasm_bindgen_test]
async fn run_button_shows_the_default_scenarios_result() {
    let container = Container::new();
    let _mounted = mount_to(container.0.clone(), App);
    assert!(
        container
            .find("h1")
            .is_some_and(|h1| h1.text_content().as_deref() == Some("Sojourn")),
        "the page is titled Sojourn"
    );

    container.button("Run").click();

    let result = container.wait_for(".result").await;
    let text = result.text_content().unwrap_or_default();
    for label in ["Requests arrived", "P(miss)", "p99 sojourn"] {
        assert!(text.contains(label), "the result lacks {label:?}: {text}");
    }
    assert!(text.contains('%'), "P(miss) reads as a percentage: {text}");
    assert!(
        container.find("[role=alert]").is_none(),
        "a successful run shows no error"
    );
}

#[wasm_bindgen_test]
async fn invalid_scenario_shows_an_error_instead_of_a_result() {
    let container = Container::new();
    let params = ScenarioParams {
        run: RunParams {
            horizon_s: -1.0,
            ..RunParams::default()
        },
        ..ScenarioParams::default()
    };
    let _mounted = mount_to(container.0.clone(), move || view! { <RunPanel params /> });

    container.button("Run").click();

    let alert = container.wait_for("[role=alert]").await;
    let message = alert.text_content().unwrap_or_default();
    assert!(
        message.starts_with("The scenario is invalid:"),
        "the alert says what is wrong: {message}"
    );
    assert!(
        container.find(".result").is_none(),
        "a failed run shows no result"
    );
}

//! The app mounted in a real page, driven as a user would: find inputs by
//! their labels and buttons by their names. The simulation worker's files
//! are not served by the test runner, so these tests cover the page's own
//! behaviour (the end-to-end suite in `e2e/` covers runs): the form, the
//! engine's validation messages, and that a missing worker is reported
//! rather than leaving the page blank.

use std::time::Duration;

use leptos::mount::mount_to;
use leptos::prelude::*;
use sojourn_app::App;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::wasm_bindgen_test;
use web_sys::{Element, HtmlButtonElement, HtmlElement, HtmlInputElement};

/// How long the page may take to react before a test gives up.
const TIMEOUT: Duration = Duration::from_secs(15);

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

    /// The input labelled `label` (the first, when several share it).
    fn input(&self, label: &str) -> HtmlInputElement {
        let labels = self
            .0
            .query_selector_all("label")
            .expect("a valid selector");
        let target = (0..labels.length())
            .filter_map(|idx| labels.item(idx))
            .filter_map(|node| node.dyn_into::<Element>().ok())
            .find(|l| l.text_content().is_some_and(|text| text.trim() == label))
            .and_then(|l| l.get_attribute("for"))
            .unwrap_or_else(|| panic!("no label {label:?}"));
        self.find(&format!("#{target}"))
            .expect("the label points at an input")
            .unchecked_into()
    }

    fn find(&self, selector: &str) -> Option<Element> {
        self.0.query_selector(selector).expect("a valid selector")
    }

    fn text(&self) -> String {
        self.0.text_content().unwrap_or_default()
    }

    /// Polls until `condition` holds, failing after [`TIMEOUT`].
    async fn wait_until(&self, what: &str, condition: impl Fn(&Container) -> bool) {
        let poll_every = Duration::from_millis(25);
        let mut waited = Duration::ZERO;
        while !condition(self) {
            assert!(
                waited < TIMEOUT,
                "{what}: not after {TIMEOUT:?}; the page shows: {}",
                self.text()
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

/// Yields to the browser for `duration`.
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

fn type_into(input: &HtmlInputElement, text: &str) {
    input.set_value(text);
    let event = web_sys::Event::new("input").expect("an input event");
    input.dispatch_event(&event).expect("the event dispatches");
}

#[wasm_bindgen_test]
async fn the_form_shows_the_default_scenario_and_its_memory_verdict() {
    let container = Container::new();
    let _mounted = mount_to(container.0.clone(), App);
    assert!(
        container
            .find("h1")
            .is_some_and(|h1| h1.text_content().as_deref() == Some("Sojourn"))
    );
    // Properties are set by render effects: wait for them.
    container
        .wait_until("the deadline reads in hours", |c| {
            c.input("Deadline (SLA)").value() == "24 h"
        })
        .await;
    assert_eq!(container.input("Batch arrivals").value(), "3");
    container
        .wait_until("the memory bar judges the fit", |c| {
            c.text().contains("Fits: the KV cache holds")
        })
        .await;
}

#[wasm_bindgen_test]
async fn an_invalid_input_shows_the_engines_message_and_blocks_run() {
    let container = Container::new();
    let _mounted = mount_to(container.0.clone(), App);
    let median = container.input("Median");
    type_into(&container.input("p90"), "10");
    container
        .wait_until("the engine's message appears", |c| {
            c.text()
                .contains("must be greater than the median (400), got 10")
        })
        .await;
    assert!(
        container.button("Run").disabled(),
        "Run is blocked while the scenario is invalid"
    );
    assert!(
        container.text().contains("Fix the scenario first"),
        "and says why"
    );
    type_into(&median, "abc");
    container
        .wait_until("a word is not a number", |c| {
            c.text().contains("enter a number")
        })
        .await;
    type_into(&median, "5");
    type_into(&container.input("p90"), "2000");
    container
        .wait_until("Run is enabled again", |c| !c.button("Run").disabled())
        .await;
}

#[wasm_bindgen_test]
async fn a_missing_worker_is_reported_not_a_blank_page() {
    let container = Container::new();
    let _mounted = mount_to(container.0.clone(), App);
    container
        .wait_until("the failure is shown", |c| {
            c.text().contains("The run failed")
        })
        .await;
    assert!(container.find("h1").is_some(), "the page is still there");
}

/// Issue 41: every box the page draws, the advanced ones opened too, has
/// a label and an explanation (the registry's words, or its tables').
#[wasm_bindgen_test]
async fn every_box_on_the_page_has_a_label_and_an_explanation() {
    let container = Container::new();
    let _mounted = mount_to(container.0.clone(), App);
    let labels = |c: &Container| {
        let found =
            c.0.query_selector_all("label[for^='f-']")
                .expect("a valid selector");
        (0..found.length())
            .filter_map(|idx| found.item(idx))
            .filter_map(|node| node.dyn_into::<Element>().ok())
            .collect::<Vec<_>>()
    };
    container
        .wait_until("the form is drawn", |c| !labels(c).is_empty())
        .await;
    let closed = labels(&container).len();
    // The advanced sections build their boxes when first opened.
    let details = container
        .0
        .query_selector_all("details")
        .expect("a valid selector");
    for details in (0..details.length()).filter_map(|idx| details.item(idx)) {
        if let Ok(details) = details.dyn_into::<web_sys::HtmlDetailsElement>() {
            details.set_open(true);
        }
    }
    container
        .wait_until("the advanced boxes are drawn", |c| {
            labels(c).len() > closed + 10
        })
        .await;
    for label in labels(&container) {
        let name = label.text_content().unwrap_or_default();
        let control = label.get_attribute("for").unwrap_or_default();
        assert!(!name.trim().is_empty(), "the box {control} has no label");
        let help = label
            .parent_element()
            .and_then(|frame| frame.query_selector("[role='tooltip']").ok().flatten())
            .and_then(|tip| tip.text_content())
            .unwrap_or_default();
        assert!(
            !help.trim().is_empty(),
            "the box {name:?} ({control}) has no explanation"
        );
    }
}

//! The page's side of the simulation worker: spawns it, posts jobs, hands
//! its messages to a callback, and cancels by terminating it.
//!
//! The worker is created from a small Blob script that loads Trunk's
//! `worker.js` and `worker_bg.wasm` from the page's base URL, so the site
//! works under any path. A message sent before the worker says `ready` would
//! be lost, so the newest job waits until then.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Array;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Blob, BlobPropertyBag, ErrorEvent, MessageEvent, Url, Worker};

use crate::job::{JobRequest, Stage, WorkerMessage};

type Listener = Rc<dyn Fn(WorkerMessage)>;

/// A handle on the worker; cheap to clone.
#[derive(Clone)]
pub struct WorkerClient(Rc<RefCell<Inner>>);

struct Inner {
    worker: Option<Worker>,
    ready: bool,
    /// The job to post once the worker is ready.
    queued: Option<String>,
    /// The job in flight, if any.
    busy: Option<u64>,
    listener: Listener,
    script_url: Option<String>,
    _on_message: Option<Closure<dyn FnMut(MessageEvent)>>,
    _on_error: Option<Closure<dyn FnMut(ErrorEvent)>>,
}

impl WorkerClient {
    /// Spawns the worker; `listener` receives every message of the current job.
    pub fn new(listener: impl Fn(WorkerMessage) + 'static) -> WorkerClient {
        let client = WorkerClient(Rc::new(RefCell::new(Inner {
            worker: None,
            ready: false,
            queued: None,
            busy: None,
            listener: Rc::new(listener),
            script_url: None,
            _on_message: None,
            _on_error: None,
        })));
        client.spawn();
        client
    }

    /// Runs `job`, superseding (terminating) any job in flight.
    pub fn start(&self, job: &JobRequest) {
        if self.0.borrow().busy.is_some() {
            self.respawn();
        }
        let json = serde_json::to_string(job).unwrap_or_default();
        let mut inner = self.0.borrow_mut();
        inner.busy = Some(job.id);
        match (&inner.worker, inner.ready) {
            (Some(worker), true) => {
                let _ = worker.post_message(&JsValue::from_str(&json));
            }
            _ => inner.queued = Some(json),
        }
    }

    /// Stops the job in flight, if any.
    pub fn cancel(&self) {
        if self.0.borrow().busy.is_some() {
            self.respawn();
        }
        self.0.borrow_mut().busy = None;
    }

    fn respawn(&self) {
        if let Some(worker) = self.0.borrow_mut().worker.take() {
            worker.terminate();
        }
        self.spawn();
    }

    fn spawn(&self) {
        let listener = self.0.borrow().listener.clone();
        let spawned = spawn_worker();
        let mut inner = self.0.borrow_mut();
        inner.ready = false;
        inner.queued = None;
        inner.busy = None;
        let (worker, script_url) = match spawned {
            Ok(spawned) => spawned,
            Err(message) => {
                drop(inner);
                listener(WorkerMessage::Failed {
                    id: 0,
                    stage: Stage::Simulate,
                    message,
                });
                return;
            }
        };
        let weak = Rc::downgrade(&self.0);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let Some(inner) = weak.upgrade() else {
                return;
            };
            let Some(text) = event.data().as_string() else {
                return;
            };
            let message = match WorkerMessage::from_json(&text) {
                Ok(message) => message,
                Err(error) => WorkerMessage::Failed {
                    id: inner.borrow().busy.unwrap_or(0),
                    stage: Stage::Simulate,
                    message: format!("unreadable message from the worker: {error}"),
                },
            };
            let listener = {
                let mut state = inner.borrow_mut();
                match &message {
                    WorkerMessage::Ready => {
                        state.ready = true;
                        if let Some(url) = state.script_url.take() {
                            let _ = Url::revoke_object_url(&url);
                        }
                        let queued = state.queued.take();
                        if let (Some(worker), Some(job)) = (&state.worker, queued) {
                            let _ = worker.post_message(&JsValue::from_str(&job));
                        }
                        return;
                    }
                    WorkerMessage::Finished { id } if state.busy == Some(*id) => state.busy = None,
                    WorkerMessage::Failed { id, .. } if state.busy == Some(*id) => {
                        state.busy = None
                    }
                    _ => {}
                }
                state.listener.clone()
            };
            listener(message);
        });
        let weak = Rc::downgrade(&self.0);
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            let Some(inner) = weak.upgrade() else {
                return;
            };
            let (id, listener) = {
                let mut state = inner.borrow_mut();
                let id = state.busy.take().unwrap_or(0);
                (id, state.listener.clone())
            };
            listener(WorkerMessage::Failed {
                id,
                stage: Stage::Simulate,
                message: format!("the simulation worker stopped: {}", event.message()),
            });
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        inner.worker = Some(worker);
        inner.script_url = Some(script_url);
        inner._on_message = Some(on_message);
        inner._on_error = Some(on_error);
    }
}

/// Starts a worker that loads Trunk's worker build relative to the page.
fn spawn_worker() -> Result<(Worker, String), String> {
    let base = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.base_uri().ok().flatten())
        .ok_or("the page has no base URL")?;
    let resolve = |file: &str| {
        Url::new_with_base(file, &base)
            .map(|url| url.href())
            .map_err(|_| format!("cannot resolve {file} against {base}"))
    };
    let script = format!(
        "importScripts({js:?});wasm_bindgen({{module_or_path:{wasm:?}}});",
        js = resolve("worker.js")?,
        wasm = resolve("worker_bg.wasm")?,
    );
    let parts = Array::of1(&JsValue::from_str(&script));
    let options = BlobPropertyBag::new();
    options.set_type("text/javascript");
    let blob = Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| "cannot create the worker script".to_string())?;
    let url = Url::create_object_url_with_blob(&blob)
        .map_err(|_| "cannot create the worker script URL".to_string())?;
    let worker = Worker::new(&url).map_err(|error| {
        format!(
            "the browser refused to start the simulation worker: {}",
            error.as_string().unwrap_or_default()
        )
    })?;
    Ok((worker, url))
}

//! The page's side of the simulation workers: a pool of Web Workers, each
//! running one [`JobRequest`] at a time. The pool posts requests, hands
//! every worker message to a callback, and stops requests by terminating
//! their workers and starting fresh ones.
//!
//! A worker is created from a small Blob script that loads Trunk's
//! `worker.js` and `worker_bg.wasm` from the page's base URL, so the site
//! works under any path. A message sent before a worker says `ready` would
//! be lost, so its request waits until then. A worker that fails to load or
//! throws is reported as a `failed` message for the request it held and is
//! not restarted until the next [`WorkerPool::revive`] (a worker that cannot
//! load would otherwise fail again and again).

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use js_sys::Array;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Blob, BlobPropertyBag, ErrorEvent, MessageEvent, Url, Worker};

use crate::job::{JobRequest, Stage, WorkerMessage};

/// Most workers the page starts. A plan's batches seldom hold more
/// independent simulations than this, and each worker holds its own copy of
/// the engine and of its run's records (tens of MB for a day of traffic),
/// so more would cost memory without saving time.
pub const MAX_WORKERS: usize = 8;

/// How many workers to start: one per logical core the browser reports
/// (`navigator.hardwareConcurrency`), at least one and at most
/// [`MAX_WORKERS`]; one when the browser does not say.
pub fn pool_size(hardware_concurrency: Option<f64>) -> usize {
    let cores = hardware_concurrency
        .filter(|n| n.is_finite())
        .unwrap_or(1.0);
    (cores as usize).clamp(1, MAX_WORKERS)
}

type Listener = Rc<dyn Fn(WorkerMessage)>;

/// A handle on the pool; cheap to clone.
#[derive(Clone)]
pub struct WorkerPool(Rc<RefCell<Pool>>);

struct Pool {
    slots: Vec<Slot>,
    /// `None` until [`WorkerPool::listen`]; messages wait in `unheard`.
    listener: Option<Listener>,
    unheard: Vec<WorkerMessage>,
    /// Called once every worker has loaded or failed to.
    on_loaded: Option<Box<dyn FnOnce()>>,
}

/// One worker of the pool.
#[derive(Default)]
struct Slot {
    /// `None` when it could not start or has failed.
    worker: Option<Worker>,
    ready: bool,
    /// The request to post once the worker is ready.
    queued: Option<String>,
    /// The job id and stage of the request it holds, if any.
    busy: Option<(u64, Stage)>,
    script_url: Option<String>,
    _on_message: Option<Closure<dyn FnMut(MessageEvent)>>,
    _on_error: Option<Closure<dyn FnMut(ErrorEvent)>>,
}

impl WorkerPool {
    /// Starts `size` workers. They load at once; what they say waits for
    /// [`WorkerPool::listen`].
    pub fn start(size: usize) -> WorkerPool {
        let pool = WorkerPool(Rc::new(RefCell::new(Pool {
            slots: (0..size).map(|_| Slot::default()).collect(),
            listener: None,
            unheard: Vec::new(),
            on_loaded: None,
        })));
        for index in 0..size {
            pool.respawn(index);
        }
        pool
    }

    /// Calls `hook` once every worker has loaded (said it is ready) or
    /// failed to: at once if they have.
    pub fn when_loaded(&self, hook: impl FnOnce() + 'static) {
        self.0.borrow_mut().on_loaded = Some(Box::new(hook));
        loaded(&self.0);
    }

    /// From now on `listener` receives every message from the workers
    /// (after the pool has noted which worker is free again), starting with
    /// those that came before.
    pub fn listen(&self, listener: impl Fn(WorkerMessage) + 'static) {
        let unheard = {
            let mut pool = self.0.borrow_mut();
            pool.listener = Some(Rc::new(listener));
            std::mem::take(&mut pool.unheard)
        };
        for message in unheard {
            tell(&self.0, message);
        }
    }

    /// The workers that run nothing (loaded or still loading), in order.
    pub fn idle(&self) -> Vec<usize> {
        let pool = self.0.borrow();
        (0..pool.slots.len())
            .filter(|&index| {
                let slot = &pool.slots[index];
                slot.worker.is_some() && slot.busy.is_none()
            })
            .collect()
    }

    /// Posts `request` to worker `index`, one of [`WorkerPool::idle`], or
    /// queues it until the worker is ready.
    pub fn post(&self, index: usize, request: &JobRequest) {
        let json = request.to_json();
        let mut pool = self.0.borrow_mut();
        let Some(slot) = pool.slots.get_mut(index) else {
            return;
        };
        let Some(worker) = &slot.worker else {
            return;
        };
        if slot.ready {
            let _ = worker.post_message(&JsValue::from_str(&json));
        } else {
            slot.queued = Some(json);
        }
        slot.busy = Some((request.id(), request.stage()));
    }

    /// Stops every request in flight (terminating its worker and starting
    /// a fresh one).
    pub fn stop_all(&self) {
        self.stop_where(|_| true);
    }

    /// Terminates every worker for good (a pool its owner no longer needs).
    pub fn terminate(&self) {
        let mut pool = self.0.borrow_mut();
        for slot in &mut pool.slots {
            if let Some(worker) = slot.worker.take() {
                worker.set_onmessage(None);
                worker.set_onerror(None);
                worker.terminate();
            }
            slot.busy = None;
        }
    }

    /// Stops the plan's requests in flight.
    pub fn stop_plan(&self) {
        self.stop_where(|stage| stage == Stage::Plan);
    }

    /// Stops every request in flight and restarts the workers that failed:
    /// a fresh start for a new job.
    pub fn revive(&self) {
        self.stop_all();
        let failed: Vec<usize> = {
            let pool = self.0.borrow();
            (0..pool.slots.len())
                .filter(|&index| pool.slots[index].worker.is_none())
                .collect()
        };
        for index in failed {
            self.respawn(index);
        }
    }

    fn stop_where(&self, stop: impl Fn(Stage) -> bool) {
        let stopped: Vec<usize> = {
            let pool = self.0.borrow();
            (0..pool.slots.len())
                .filter(|&index| pool.slots[index].busy.is_some_and(|(_, stage)| stop(stage)))
                .collect()
        };
        for index in stopped {
            self.respawn(index);
        }
    }

    /// Replaces worker `index` with a fresh one (reporting a failure to
    /// start through the listener).
    fn respawn(&self, index: usize) {
        let old = std::mem::take(&mut self.0.borrow_mut().slots[index]);
        if let Some(worker) = old.worker {
            // Its handlers are dropped with the slot: detach them first.
            worker.set_onmessage(None);
            worker.set_onerror(None);
            worker.terminate();
        }
        if let Some(url) = old.script_url {
            let _ = Url::revoke_object_url(&url);
        }
        let (worker, script_url) = match spawn_worker() {
            Ok(spawned) => spawned,
            Err(message) => {
                let failed = WorkerMessage::Failed {
                    id: 0,
                    stage: Stage::Simulate,
                    message,
                };
                tell(&self.0, failed);
                return;
            }
        };
        let on_message = on_message(Rc::downgrade(&self.0), index);
        let on_error = on_error(Rc::downgrade(&self.0), index);
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        self.0.borrow_mut().slots[index] = Slot {
            worker: Some(worker),
            script_url: Some(script_url),
            _on_message: Some(on_message),
            _on_error: Some(on_error),
            ..Slot::default()
        };
    }
}

/// Worker `index`'s message handler: posts the queued request once it is
/// ready, frees it when its request ends, and passes every other message on.
fn on_message(pool: Weak<RefCell<Pool>>, index: usize) -> Closure<dyn FnMut(MessageEvent)> {
    Closure::new(move |event: MessageEvent| {
        let Some(shared) = pool.upgrade() else {
            return;
        };
        let Some(text) = event.data().as_string() else {
            return;
        };
        let message = {
            let mut pool = shared.borrow_mut();
            let slot = &mut pool.slots[index];
            let message = match WorkerMessage::from_json(&text) {
                Ok(message) => message,
                Err(error) => {
                    let (id, stage) = slot.busy.take().unwrap_or((0, Stage::Simulate));
                    WorkerMessage::Failed {
                        id,
                        stage,
                        message: format!("unreadable message from the worker: {error}"),
                    }
                }
            };
            if message == WorkerMessage::Ready {
                slot.ready = true;
                if let Some(url) = slot.script_url.take() {
                    let _ = Url::revoke_object_url(&url);
                }
                if let (Some(worker), Some(request)) = (&slot.worker, slot.queued.take()) {
                    let _ = worker.post_message(&JsValue::from_str(&request));
                }
                drop(pool);
                loaded(&shared);
                return;
            }
            if message.ends_request() && slot.busy.map(|(id, _)| id) == message.job_id() {
                slot.busy = None;
            }
            message
        };
        tell(&shared, message);
    })
}

/// Worker `index`'s error handler: the worker failed to load or threw. It
/// is terminated and left out of the pool until [`WorkerPool::revive`], and
/// its request is reported as failed.
fn on_error(pool: Weak<RefCell<Pool>>, index: usize) -> Closure<dyn FnMut(ErrorEvent)> {
    Closure::new(move |event: ErrorEvent| {
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let (id, stage) = {
            let mut pool = pool.borrow_mut();
            let slot = &mut pool.slots[index];
            if let Some(worker) = slot.worker.take() {
                worker.terminate();
            }
            slot.busy.take().unwrap_or((0, Stage::Simulate))
        };
        let failed = WorkerMessage::Failed {
            id,
            stage,
            message: format!("the simulation worker stopped: {}", event.message()),
        };
        tell(&pool, failed);
        loaded(&pool);
    })
}

/// Calls the pool's `on_loaded` hook if every worker has loaded or failed.
fn loaded(pool: &RefCell<Pool>) {
    let hook = {
        let mut pool = pool.borrow_mut();
        let all = pool
            .slots
            .iter()
            .all(|slot| slot.ready || slot.worker.is_none());
        if !all {
            return;
        }
        pool.on_loaded.take()
    };
    if let Some(hook) = hook {
        hook();
    }
}

/// Passes `message` to the pool's listener, or keeps it for the listener
/// to come. The listener is called with the pool not borrowed: it may post.
fn tell(pool: &RefCell<Pool>, message: WorkerMessage) {
    let listener = {
        let mut pool = pool.borrow_mut();
        match pool.listener.clone() {
            Some(listener) => listener,
            None => return pool.unheard.push(message),
        }
    };
    listener(message);
}

thread_local! {
    /// The pool [`start_early`] started, until the page takes it.
    static STARTED: RefCell<Option<WorkerPool>> = const { RefCell::new(None) };
}

/// Starts the page's pool of workers (one per core, [`pool_size`]) before
/// the page is built; the page takes it with [`page_pool`]. Returns a
/// handle on it, to wait for its workers ([`WorkerPool::when_loaded`]).
pub fn start_early() -> WorkerPool {
    let pool = sized_pool();
    STARTED.with(|started| *started.borrow_mut() = Some(pool.clone()));
    pool
}

/// The page's pool: the one [`start_early`] started (taken once), or a new
/// one.
pub fn page_pool() -> WorkerPool {
    STARTED
        .with(|started| started.borrow_mut().take())
        .unwrap_or_else(sized_pool)
}

/// A pool of one worker per core the browser reports ([`pool_size`]).
fn sized_pool() -> WorkerPool {
    WorkerPool::start(pool_size(crate::browser::hardware_concurrency()))
}

/// Starts a worker that loads Trunk's worker build relative to the page. A
/// module that fails to load or start rejects a promise, which a worker
/// does not report to the page: the script throws it again from a timer,
/// which the page sees as an `error` event.
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
        "importScripts({js:?});wasm_bindgen({{module_or_path:{wasm:?}}})\
         .catch(e=>setTimeout(()=>{{throw e;}}));",
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

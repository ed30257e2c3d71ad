//! The memory a run holds, counted by this binary's allocator, against the
//! estimate a run is refused on before it starts (`run_bytes_estimate`,
//! docs/engine.md "Limits"): the estimate is never below the use. Its own
//! test binary, with one test, so that nothing else allocates while a run
//! is measured.

// A test crate: its helpers state what they expect with unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use sojourn_engine::{
    ClassParams, DistParams, LoadParams, Report, Router, RunOptions, Scenario, ScenarioParams,
    Simulation, run_bytes_estimate,
};

/// The system allocator, counting the bytes allocated now and at the most.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = NOW.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the new block allocated before the old one is freed,
        // as a moving reallocation holds both.
        grew(new_size);
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes held above what was held before, while `f` ran.
fn peak_while<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = NOW.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - before)
}

/// One class of `load` on the example's model and fleet.
fn one_class(load: LoadParams, batches_per_hour: f64, horizon_s: f64) -> ScenarioParams {
    let mut p = ScenarioParams::overnight_batch();
    p.classes = vec![ClassParams {
        name: "c".into(),
        batches_per_hour,
        input_tokens: DistParams::constant(100.0),
        output_tokens: DistParams::constant(10.0),
        load,
        ..ClassParams::default()
    }];
    p.run.horizon_s = horizon_s;
    p
}

#[test]
fn the_memory_estimate_is_at_least_what_a_run_holds() {
    let cases = [
        // n15's shape: every request waiting at once (the waiting queue
        // grows to hold them all).
        (
            "offline",
            one_class(LoadParams::Offline { requests: 300_000 }, 0.0, 60.0),
        ),
        // A steady open stream: few requests in the system at once.
        ("open", one_class(LoadParams::Open, 360_000.0, 3600.0)),
        // The example, a day of two classes with batches.
        ("example", ScenarioParams::overnight_batch()),
        // Many closed-loop clients: the workload holds a send per client.
        (
            "closed loop",
            one_class(
                LoadParams::ClosedLoop {
                    clients: 20_000,
                    think_ms: Some(DistParams::constant(1000.0)),
                    requests: None,
                },
                0.0,
                120.0,
            ),
        ),
        // Many clients over a short horizon: their state, not the
        // requests, could dominate.
        (
            "many clients",
            one_class(
                LoadParams::ClosedLoop {
                    clients: 200_000,
                    think_ms: Some(DistParams::constant(1000.0)),
                    requests: None,
                },
                0.0,
                2.0,
            ),
        ),
        // The most replicas, a few requests each: the replicas' own state
        // (each decode-due ring, its block pool, its queues) dominates
        // (found by sojourn-fuzz: 4,096 replicas and no requests held
        // 147 MB against an estimate of 1 MB).
        ("many replicas", {
            let mut p = one_class(LoadParams::Open, 360_000.0, 600.0);
            p.cluster.replicas = 4096;
            // (Load-aware routing would look at 4,096 replicas per arrival,
            // past the routing budget.)
            p.cluster.router = Router::RoundRobin;
            p
        }),
    ];
    let mut over = Vec::new();
    for (name, params) in cases {
        let scenario = Scenario::try_from(params).unwrap();
        let estimate = run_bytes_estimate(&scenario);
        // The run, then its report: the peak of each over what was held
        // before the run.
        let before = NOW.load(Ordering::Relaxed);
        let (output, run_peak) = peak_while(|| {
            let mut sim = Simulation::new(&scenario, &RunOptions::default()).unwrap();
            while !sim.advance(u32::MAX).unwrap().done {}
            sim.finish().unwrap()
        });
        let held = NOW.load(Ordering::Relaxed) - before;
        let (report, build_peak) = peak_while(|| Report::build(output));
        let used = run_peak.max(held + build_peak);
        let requests = report.records.len();
        println!(
            "{name}: {requests} requests, run {run_peak} B, report {} B, estimated {estimate:.0} B ({:.0} B a request used)",
            held + build_peak,
            used as f64 / requests as f64
        );
        assert!(requests > 50_000, "{name}: {requests} requests");
        // Every case uses at least a tenth of its estimate: an estimate
        // padded far beyond the use would refuse runs that fit.
        assert!(
            used as f64 > estimate / 10.0,
            "{name}: used {used} B, estimated {estimate:.0} B"
        );
        if used as f64 > estimate {
            over.push(format!("{name}: used {used} B, estimated {estimate:.0} B"));
        }
    }
    assert!(over.is_empty(), "{over:?}");
}

//! A counting allocator: the system allocator, with the bytes live now and
//! the most live since the last [`reset_peak`], so that each input's peak
//! heap is measured. A worker runs one input at a time on one thread, so
//! the process's counts are the input's.
//!
//! A hard cap stops a runaway input before it takes the machine: an
//! allocation that would take the live heap over [`set_hard_cap`]'s bytes
//! ends the process with [`OVER_HARD_CAP_EXIT`] (the supervisor then writes
//! the input it was running as a finding).

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The exit status of a worker stopped by the hard memory cap.
pub const OVER_HARD_CAP_EXIT: i32 = 86;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static HARD_CAP: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The system allocator, counted.
pub struct Counting;

impl Counting {
    fn added(size: usize) {
        let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
        PEAK.fetch_max(live, Ordering::Relaxed);
        if live > HARD_CAP.load(Ordering::Relaxed) {
            over_hard_cap();
        }
    }
}

/// Tells the supervisor the step the input was in (a line `CRASH <step>`
/// on stdout), then ends the process. Nothing here allocates: the step is
/// a `&'static str`, written straight to the file descriptor.
#[cold]
fn over_hard_cap() -> ! {
    let step = crate::exec::STEP.try_lock().map_or("?", |s| *s);
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd as _;
        // SAFETY: descriptor 1 is this process's stdout, open for its
        // whole life; the `File` is forgotten, so it is never closed here.
        let mut stdout = unsafe { std::fs::File::from_raw_fd(1) };
        let _ = stdout.write_all(b"\nCRASH ");
        let _ = stdout.write_all(step.as_bytes());
        let _ = stdout.write_all(b"\n");
        std::mem::forget(stdout);
    }
    let _ = std::io::stderr()
        .write_all(b"sojourn-fuzz worker: live heap over the hard cap, stopping\n");
    std::process::exit(OVER_HARD_CAP_EXIT);
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the counters are plain atomics and allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received (see the impl's comment).
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            Counting::added(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            Counting::added(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as received.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            Counting::added(new_size);
        }
        new
    }
}

/// Bytes live now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Starts a new peak at the bytes live now.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Makes the peak at least `bytes` (after a nested measurement).
pub fn raise_peak(bytes: usize) {
    PEAK.fetch_max(bytes, Ordering::Relaxed);
}

/// The most bytes live since [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Ends the process when the live heap would pass `bytes`.
pub fn set_hard_cap(bytes: usize) {
    HARD_CAP.store(bytes, Ordering::Relaxed);
}

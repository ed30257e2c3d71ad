//! The system allocator, plus a hint to back large allocations with huge
//! pages (Linux only). A day's request records alone are about 90 MB: on
//! 4 KiB pages their first touch takes some 22,000 page faults, about a
//! tenth of `sojourn bench`'s wall time; on 2 MiB pages, fewer than fifty.
//! The hint changes only how memory is paged, never its contents. This file
//! holds the crate's only `unsafe` code and its only `libc` use.

use std::alloc::{GlobalAlloc, Layout, System};

/// The allocator `main.rs` installs.
pub struct HugePageHint;

const HUGE_PAGE: usize = 2 << 20;
/// Allocations from this size on get the hint: the records, and the
/// report's samples of a busy class (a few MB each).
const LARGE: usize = HUGE_PAGE;

/// Advises huge pages for the whole 2 MiB pages inside `[ptr, ptr + size)`.
fn hint(ptr: *mut u8, size: usize) {
    if ptr.is_null() || size < LARGE {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize + size) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: the range lies inside the allocation just made, and
        // MADV_HUGEPAGE only changes how it is paged. A refusal (no THP
        // support) leaves ordinary pages, so the result is ignored.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

// SAFETY: every call is forwarded to `System` unchanged; the hint only
// touches memory the call has just returned.
unsafe impl GlobalAlloc for HugePageHint {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        hint(ptr, layout.size());
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        hint(ptr, layout.size());
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let ptr = unsafe { System.realloc(ptr, layout, new_size) };
        hint(ptr, new_size);
        ptr
    }
}

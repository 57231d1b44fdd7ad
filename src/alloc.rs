//! Memory from the system allocator, with large blocks backed by transparent huge pages: a
//! million-node model lives in a few large arrays, and faulting them in 4 KiB at a time cost
//! about a tenth of a whole `annotate` run. The CLI installs [`HugePages`] as its allocator.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of at least this many bytes are advised onto huge pages.
const LARGE: usize = 4 << 20;

/// The system allocator, asking Linux to back every block of at least 4 MiB with transparent
/// huge pages (on machines where they are given only on request).
#[derive(Debug, Default)]
pub struct HugePages;

// SAFETY: every call is passed to `System` unchanged; the madvise hint that follows a large
// allocation changes neither its address, its size nor its contents.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System`'s.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout (every block does, above).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the caller's contract for `realloc` is `System`'s.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise(p, new_size);
        p
    }
}

/// Asks Linux to back the whole 2 MiB pages inside `bytes` bytes at `p` with huge pages; best
/// before they are first touched. Only a hint: failures are ignored, small blocks and other
/// systems are left alone.
pub fn advise(p: *const u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    if !p.is_null() && bytes >= LARGE {
        const HUGE: usize = 2 << 20;
        let start = p as usize;
        let lo = start.next_multiple_of(HUGE);
        let hi = start.saturating_add(bytes) / HUGE * HUGE;
        if hi > lo {
            // SAFETY: [lo, hi) lies inside the block; MADV_HUGEPAGE changes neither the
            // contents nor the mapping's permissions, only how it is backed.
            unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, bytes);
}

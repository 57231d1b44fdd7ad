//! The pass commands' memory policy: keep freed memory for reuse, and fault the heap's pages in
//! on a second thread ahead of the pass, which then finds them mapped. Both are glibc and
//! Linux specifics; elsewhere they do nothing and the pass runs the same.

use std::path::Path;

use onnx_bcast::{io, Model, Result};

/// Loads the model at `path` for a pass (infer, check, a rewrite), with the heap it needs
/// faulted in on another thread while it loads (`writes`: the pass saves the model too).
/// The file is read into the heap's top as well, so a large file's buffer is faulted in the
/// same way while the read fills it (at 1M nodes the read faulted 1,100 pages on the pass's
/// thread instead of 9,300).
pub fn load_for_pass(path: &Path, writes: bool) -> Result<Model> {
    let limits = io::Limits::from_env()?;
    // What cannot be read is reported by the load.
    if let Some(meta) = std::fs::metadata(path).ok().filter(|m| m.len() <= limits.max_bytes) {
        populate_heap(usize::try_from(meta.len()).unwrap_or(0));
    }
    io::load_observed(path, &limits, |bytes| populate_heap(io::footprint(bytes, writes)))
}

/// Has glibc keep freed memory for reuse rather than hand it back to the OS. A pass (load,
/// infer, rewrite, save) allocates and frees a model's worth of memory phase after phase, and
/// by default every block above glibc's mmap threshold is unmapped on free, so the next phase
/// faults fresh zeroed pages in again: a tenth of an `annotate` at a million nodes, measured
/// in `scripts/bench_pass.py` runs. The process ends with the pass, so nothing is held long.
/// Not for `run`, `bench` and `test`, whose kernel buffers were tuned with the default policy.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn keep_freed_memory() {
    // SAFETY: mallopt only changes glibc's allocation policy; it is called before this process
    // starts any thread, and returns 0 (ignored: the default policy is still correct) when a
    // value is refused.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_freed_memory() {}

/// Below this many bytes the pass faults its own pages in: a thread is not worth starting.
/// Measured on generated chains (`annotate`, alternating runs): populating costs 0.15 ms at
/// 1,000 and 2,000 nodes (footprints of 0.6 and 1.2 MB), is even at 3,000 (1.8 MB), and
/// saves 0.4-0.6 ms at 5,000 (3.1 MB) and 1.7-2 ms of 12.5 at 10,000 (6.4 MB).
const POPULATE_FROM: usize = 2 << 20;

/// The most populated ahead, whatever the estimate.
const POPULATE_AT_MOST: usize = 8 << 30;

/// Grows the heap by `bytes` and faults its pages in on a new thread, front to back, while
/// this one goes on; after [`keep_freed_memory`], so that the heap's top is where the pass's
/// allocations come from and nothing is given back. A first touch of a page costs a fault
/// of a few microseconds on the VMs we measure on, a quarter of an `annotate` at a million
/// nodes (`scripts/bench_pass.py`); the second core is idle through loading and inference.
///
/// The thread only asks the kernel to map the pages (`MADV_POPULATE_WRITE`), which writes no
/// byte, so it never races with the allocator or the pass. When anything is refused it stops,
/// and the pass faults the rest itself as before.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn populate_heap(bytes: usize) {
    const STEP: usize = 2 << 20;
    const PAGE: usize = 4096;
    let bytes = bytes.min(POPULATE_AT_MOST);
    if bytes < POPULATE_FROM {
        return;
    }
    // SAFETY: a block is taken and given straight back, never touched: under
    // `keep_freed_memory` it stays in the heap's top, where the next allocations come from.
    let block = unsafe { libc::malloc(bytes) };
    if block.is_null() {
        return;
    }
    // SAFETY: `block` came from malloc above and is freed once.
    unsafe { libc::free(block) };
    let (start, end) =
        ((block as usize).saturating_add(PAGE - 1) & !(PAGE - 1), (block as usize).saturating_add(bytes));
    let populate = move || {
        let mut at = start;
        while at < end {
            let len = STEP.min(end - at) & !(PAGE - 1);
            // SAFETY: the range lies in the heap (mapped, and never unmapped under
            // `keep_freed_memory`); populating it maps pages without writing to them.
            if len == 0 || unsafe { libc::madvise(at as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) } != 0 {
                return;
            }
            at += len;
        }
    };
    // Not joined: the process may end while it runs, which stops it.
    let _ = std::thread::Builder::new().name("populate".into()).stack_size(64 << 10).spawn(populate);
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn populate_heap(_bytes: usize) {}

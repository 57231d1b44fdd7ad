//! Peak memory of a broadcast: `Add([64,256,56,56], [1,256,1,1])` float32 allocates its output
//! once and no temporary of that size, measured with a counting global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use onnx_bcast::exec::{self, HostTensor, Options};
use onnx_bcast::ir::Node;
use onnx_bcast::Model;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn add_allocates_its_output_once() {
    let x = HostTensor::from_vec(vec![64, 256, 56, 56], vec![1.0f32; 64 * 256 * 56 * 56]).unwrap();
    let b = HostTensor::from_vec(vec![1, 256, 1, 1], (0..256).map(|i| i as f32).collect()).unwrap();
    let out_bytes = 64 * 256 * 56 * 56 * 4;
    let node = Node::new("add_bias", "Add", Model::MAIN).with_inputs([None, None]);
    let before = LIVE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let out = exec::run_node(&node, 13, vec![Some(x), Some(b)], &Options::default()).unwrap();
    let peak = PEAK.load(Ordering::SeqCst) - before;
    eprintln!("output {out_bytes} bytes, peak allocation during Add {peak} bytes");
    assert!(peak >= out_bytes, "the output itself is {out_bytes} bytes, peak {peak}");
    assert!(peak < out_bytes + (1 << 20), "peak {peak} bytes: more than the output ({out_bytes}) plus 1 MiB");
    let v = out[0].elems::<f32>().unwrap();
    assert_eq!((v[0], v[3136], v[v.len() - 1]), (1.0, 2.0, 256.0));
}

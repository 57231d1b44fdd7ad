//! A STREAM-style probe of the machine's memory bandwidth ceiling: a large f32 copy with plain
//! stores and with non-temporal stores, on 1 thread and on all threads. Bytes count reads plus
//! writes, as the broadcast benchmark counts them. Also a write-only fill with non-temporal
//! stores (`nt_fill_gbs_t*`), the ceiling of patterns that read almost nothing (Expand, an
//! outer product); it is reported, not used as the ceiling. The same fill through the C
//! library's `memset` (`memset_fill_gbs_t*`; glibc picks `rep stosb` or its own streaming
//! stores by size) shows whether another way of writing gets more out of the machine.
//!
//! `cargo run --release --example stream` prints one JSON line.

use std::time::Instant;

use onnx_bcast::exec::tensor::advise_huge;
use rayon::prelude::*;

const LEN: usize = 64 << 20; // 64 Mi f32 = 256 MiB per array.
const REPEAT: usize = 7;

fn copy_plain(dst: &mut [f32], src: &[f32]) {
    dst.copy_from_slice(src);
}

/// Copies with non-temporal (streaming) stores where the CPU has AVX; plain stores otherwise.
fn copy_nt(dst: &mut [f32], src: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx") {
            // SAFETY: AVX was detected at run time; the function checks alignment itself.
            unsafe { copy_nt_avx(dst, src) };
            return;
        }
    }
    copy_plain(dst, src);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn copy_nt_avx(dst: &mut [f32], src: &[f32]) {
    use std::arch::x86_64::{_mm256_loadu_ps, _mm256_stream_ps, _mm_sfence};
    let n = dst.len().min(src.len());
    // Streaming stores need 32-byte alignment: copy a plain head up to it.
    let head = dst.as_ptr().align_offset(32).min(n);
    dst[..head].copy_from_slice(&src[..head]);
    let body = (n - head) / 8 * 8;
    let (d, s) = (dst[head..].as_mut_ptr(), src[head..].as_ptr());
    let mut i = 0;
    while i < body {
        // SAFETY: i + 8 <= body <= n - head, so both accesses are in bounds; d + i is 32-byte
        // aligned because d is and i is a multiple of 8 f32s.
        unsafe { _mm256_stream_ps(d.add(i), _mm256_loadu_ps(s.add(i))) };
        i += 8;
    }
    dst[head + body..n].copy_from_slice(&src[head + body..n]);
    // Order the streaming stores before any later load of the data.
    _mm_sfence();
}

/// Fills `dst` with its first element using non-temporal stores (AVX), plain stores otherwise.
fn fill_nt(dst: &mut [f32], _src: &[f32]) {
    let x = dst.first().copied().unwrap_or(0.0) + 1.0;
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx") {
            // SAFETY: AVX was detected at run time; the function checks alignment itself.
            unsafe { fill_nt_avx(dst, x) };
            return;
        }
    }
    dst.fill(x);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn fill_nt_avx(dst: &mut [f32], x: f32) {
    use std::arch::x86_64::{_mm256_set1_ps, _mm256_stream_ps, _mm_sfence};
    let n = dst.len();
    let head = dst.as_ptr().align_offset(32).min(n);
    dst[..head].fill(x);
    let body = (n - head) / 8 * 8;
    let d = dst[head..].as_mut_ptr();
    let v = _mm256_set1_ps(x);
    let mut i = 0;
    while i < body {
        // SAFETY: i + 8 <= body <= n - head, so the store is in bounds; d + i is 32-byte
        // aligned because d is and i is a multiple of 8 f32s.
        unsafe { _mm256_stream_ps(d.add(i), v) };
        i += 8;
    }
    dst[head + body..].fill(x);
    _mm_sfence();
}

/// Fills `dst` with the byte 0x3f (each f32 about 0.75) through `memset`.
fn fill_memset(dst: &mut [f32], _src: &[f32]) {
    // SAFETY: `dst` is valid for `dst.len()` f32s, and any bit pattern is a valid f32.
    unsafe { std::ptr::write_bytes(dst.as_mut_ptr(), 0x3f, dst.len()) };
}

fn measure(threads: usize, f: fn(&mut [f32], &[f32]), dst: &mut [f32], src: &[f32]) -> f64 {
    measure_bytes(threads, f, dst, src, 2)
}

/// GB/s of `f` over the arrays, counting `arrays` times the array size per pass.
fn measure_bytes(threads: usize, f: fn(&mut [f32], &[f32]), dst: &mut [f32], src: &[f32], arrays: usize) -> f64 {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
    let chunk = LEN.div_ceil(threads * 16).max(1 << 16);
    let mut best = f64::INFINITY;
    for _ in 0..REPEAT {
        let t = Instant::now();
        pool.install(|| dst.par_chunks_mut(chunk).zip(src.par_chunks(chunk)).for_each(|(d, s)| f(d, s)));
        best = best.min(t.elapsed().as_secs_f64());
    }
    (arrays * LEN * 4) as f64 / best / 1e9
}

fn main() {
    // Both arrays on huge pages where the system gives them, as the executor's buffers are.
    let mut src: Vec<f32> = Vec::with_capacity(LEN);
    advise_huge(&src);
    src.extend((0..LEN).map(|i| i as f32));
    let mut dst = vec![0f32; LEN];
    advise_huge(&dst);
    let all = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut fields = Vec::new();
    for threads in [1, all] {
        let plain = measure(threads, copy_plain, &mut dst, &src);
        let nt = measure(threads, copy_nt, &mut dst, &src);
        assert_eq!(dst[LEN - 1], (LEN - 1) as f32);
        let fill = measure_bytes(threads, fill_nt, &mut dst, &src, 1);
        let memset = measure_bytes(threads, fill_memset, &mut dst, &src, 1);
        assert_eq!(dst[0].to_bits(), 0x3f3f_3f3f);
        fields.push(format!(
            "\"copy_gbs_t{threads}\": {plain:.2}, \"nt_copy_gbs_t{threads}\": {nt:.2}, \"nt_fill_gbs_t{threads}\": {fill:.2}, \"memset_fill_gbs_t{threads}\": {memset:.2}"
        ));
    }
    println!("{{{}, \"threads\": {all}}}", fields.join(", "));
}

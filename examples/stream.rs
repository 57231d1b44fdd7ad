//! A STREAM-style probe of the machine's memory bandwidth ceiling: a large f32 copy with plain
//! stores and with non-temporal stores, on 1 thread and on all threads. Bytes count reads plus
//! writes, as the broadcast benchmark counts them.
//!
//! `cargo run --release --example stream` prints one JSON line.

use std::time::Instant;

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

fn measure(threads: usize, f: fn(&mut [f32], &[f32]), dst: &mut [f32], src: &[f32]) -> f64 {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
    let chunk = LEN.div_ceil(threads * 16).max(1 << 16);
    let mut best = f64::INFINITY;
    for _ in 0..REPEAT {
        let t = Instant::now();
        pool.install(|| dst.par_chunks_mut(chunk).zip(src.par_chunks(chunk)).for_each(|(d, s)| f(d, s)));
        best = best.min(t.elapsed().as_secs_f64());
    }
    (2 * LEN * 4) as f64 / best / 1e9
}

fn main() {
    let src: Vec<f32> = (0..LEN).map(|i| i as f32).collect();
    let mut dst = vec![0f32; LEN];
    let all = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut fields = Vec::new();
    for threads in [1, all] {
        let plain = measure(threads, copy_plain, &mut dst, &src);
        let nt = measure(threads, copy_nt, &mut dst, &src);
        fields.push(format!("\"copy_gbs_t{threads}\": {plain:.2}, \"nt_copy_gbs_t{threads}\": {nt:.2}"));
    }
    assert_eq!(dst[LEN - 1], (LEN - 1) as f32);
    println!("{{{}, \"threads\": {all}}}", fields.join(", "));
}

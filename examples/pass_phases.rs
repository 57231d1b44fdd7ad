//! Where the time of `annotate` goes: read, decode (with the unknown-field walk), infer,
//! annotate, encode and write, timed one by one on the model given (with glibc's default
//! allocation policy, where the CLI keeps freed memory for reuse).
//!
//! `cargo run --release --example pass_phases -- MODEL [OUT]` prints one line per phase, with
//! the process's resident memory after it where `/proc` tells it.

use std::path::Path;
use std::time::Instant;

use onnx_bcast::infer::{self, Options};
use onnx_bcast::{io, rewrite};

/// The resident set (`VmRSS`), or nothing where `/proc/self/status` is not there.
fn resident() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("");
    line.trim_start_matches("VmRSS:").trim().to_string()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = Path::new(args.get(1).ok_or("usage: pass_phases MODEL [OUT]")?);
    let out = args.get(2).map(String::as_str).unwrap_or("/tmp/pass_phases.onnx");
    let start = Instant::now();
    let mut last = start;
    let mut lap = |what: &str| {
        let now = Instant::now();
        println!("{what:>8} {:8.4} s {:>8}", (now - last).as_secs_f64(), resident());
        last = now;
    };
    let bytes = std::fs::read(path)?;
    lap("read");
    let mut m = io::decode(&bytes, path, path.parent())?;
    lap("decode");
    let mut inf = infer::infer(&m, &Options::default());
    lap("infer");
    rewrite::annotate_taking(&mut m, &mut inf);
    lap("annotate");
    let encoded = io::encode(&m);
    lap("encode");
    io::write_atomic(Path::new(out), &encoded)?;
    lap("write");
    drop((m, inf, bytes, encoded));
    lap("drop");
    println!("{:>8} {:8.4} s", "total", start.elapsed().as_secs_f64());
    Ok(())
}

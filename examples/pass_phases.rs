//! Where the time of `annotate` goes: read, decode (with the unknown-field walk), infer,
//! annotate, encode and write, timed one by one on the model given.
//!
//! `cargo run --release --example pass_phases -- MODEL [OUT]` prints one line per phase, with
//! the process's resident memory after it where `/proc` tells it.
//!
//! `cargo run --release --example pass_phases -- MODEL OUT RUNS` runs the phases RUNS times in
//! one process instead and prints each phase's first, median and fastest time: the warm cost
//! of each, without the faults and cold caches of a first run (run it with
//! `MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=4000000000` for the CLI's memory policy).

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

const PHASES: [&str; 7] = ["read", "decode", "infer", "annotate", "encode", "write", "drop"];

/// One run of every phase, each phase's seconds passed to `lap` as it ends.
fn run(path: &Path, out: &Path, mut lap: impl FnMut(usize)) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path)?;
    lap(0);
    let mut m = io::decode(&bytes, path, path.parent())?;
    lap(1);
    let mut inf = infer::infer(&m, &Options::default());
    lap(2);
    rewrite::annotate_taking(&mut m, &mut inf);
    lap(3);
    let encoded = io::encode(&m);
    lap(4);
    io::write_atomic(out, &encoded)?;
    lap(5);
    drop((m, inf, bytes, encoded));
    lap(6);
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = Path::new(args.get(1).ok_or("usage: pass_phases MODEL [OUT [RUNS]]")?);
    let out = Path::new(args.get(2).map(String::as_str).unwrap_or("/tmp/pass_phases.onnx"));
    if let Some(runs) = args.get(3) {
        let mut times = vec![Vec::new(); PHASES.len()];
        for _ in 0..runs.parse::<usize>()? {
            let mut last = Instant::now();
            run(path, out, |phase| {
                let now = Instant::now();
                times[phase].push((now - last).as_secs_f64() * 1e3);
                last = now;
            })?;
        }
        for (name, mut t) in PHASES.iter().zip(times) {
            let first = t.first().copied().unwrap_or(f64::NAN);
            t.sort_by(f64::total_cmp);
            let (median, min) =
                (t.get(t.len() / 2).copied().unwrap_or(f64::NAN), t.first().copied().unwrap_or(f64::NAN));
            println!("{name:>8} first {first:.3} median {median:.3} min {min:.3} ms");
        }
        return Ok(());
    }
    let start = Instant::now();
    let mut last = start;
    run(path, out, |phase| {
        let now = Instant::now();
        println!("{:>8} {:8.4} s {:>8}", PHASES[phase], (now - last).as_secs_f64(), resident());
        last = now;
    })?;
    println!("{:>8} {:8.4} s", "total", start.elapsed().as_secs_f64());
    Ok(())
}

//! Where the time of `annotate` goes: read, decode (with the unknown-field walk), infer,
//! annotate, encode and write, timed one by one on the model given.
//!
//! `cargo run --release --example pass_phases -- MODEL [OUT]` prints one line per phase.

use std::path::Path;
use std::time::Instant;

use onnx_bcast::infer::{self, Options};
use onnx_bcast::{io, rewrite};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = Path::new(args.get(1).ok_or("usage: pass_phases MODEL [OUT]")?);
    let out = args.get(2).map(String::as_str).unwrap_or("/tmp/pass_phases.onnx");
    let start = Instant::now();
    let mut last = start;
    let mut lap = |what: &str| {
        let now = Instant::now();
        println!("{what:>8} {:8.4} s", (now - last).as_secs_f64());
        last = now;
    };
    let bytes = std::fs::read(path)?;
    lap("read");
    let mut m = io::decode(&bytes, path, path.parent())?;
    lap("decode");
    let inf = infer::infer(&m, &Options::default());
    lap("infer");
    rewrite::annotate(&mut m, &inf);
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

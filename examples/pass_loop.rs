//! The pass as a library call, timed the way `scripts/bench_pass.py` times onnx: load, infer,
//! annotate and save, run after run in one process, each run timed from the read of the file
//! to the end of the save; the model is dropped between runs, outside the timing (as the
//! script's `del` is for onnx). What a converter calling the pass from Rust pays, without the
//! CLI's process start, exit and memory policy.
//!
//! `cargo run --release --example pass_loop -- MODEL OUT RUNS` prints each run's seconds, one a
//! line.

use std::path::Path;
use std::time::Instant;

use onnx_bcast::infer::{self, Options};
use onnx_bcast::{io, rewrite};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, model, out, runs] = &args[..] else {
        return Err("usage: pass_loop MODEL OUT RUNS".into());
    };
    let (model, out) = (Path::new(model), Path::new(out));
    for _ in 0..runs.parse::<usize>()? {
        let start = Instant::now();
        let mut m = io::load(model)?;
        let mut inf = infer::infer(&m, &Options::default());
        rewrite::annotate_taking(&mut m, &mut inf);
        io::save(&m, out)?;
        println!("{:.6}", start.elapsed().as_secs_f64());
        drop((m, inf));
    }
    Ok(())
}

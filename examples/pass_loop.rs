//! The pass as a library call, timed the way `scripts/bench_pass.py` times onnx: load, infer,
//! annotate and save, run after run in one process, each run timed from the read of the file
//! to the end of the save; the model is dropped between runs, outside the timing (as the
//! script's `del` is for onnx). What a converter calling the pass from Rust pays, without the
//! CLI's process start, exit and memory policy.
//!
//! `cargo run --release --example pass_loop -- MODEL OUT RUNS` prints each run's seconds, one a
//! line. With `-` for RUNS it runs once for each line read from its input, printing each
//! run's seconds as it ends, until the input closes: so that a benchmark can alternate its
//! runs with another side's.

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Instant;

use onnx_bcast::infer::{self, Options};
use onnx_bcast::{io, rewrite};

/// One pass over `model`, written to `out`; its seconds.
fn run(model: &Path, out: &Path) -> Result<f64, Box<dyn std::error::Error>> {
    let start = Instant::now();
    let mut m = io::load(model)?;
    let mut inf = infer::infer(&m, &Options::default());
    rewrite::annotate_taking(&mut m, &mut inf);
    io::save(&m, out)?;
    let seconds = start.elapsed().as_secs_f64();
    drop((m, inf));
    Ok(seconds)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, model, out, runs] = &args[..] else {
        return Err("usage: pass_loop MODEL OUT RUNS|-".into());
    };
    let (model, out) = (Path::new(model), Path::new(out));
    let mut stdout = std::io::stdout().lock();
    if runs == "-" {
        for line in std::io::stdin().lock().lines() {
            line?;
            writeln!(stdout, "{:.6}", run(model, out)?)?;
            stdout.flush()?;
        }
    } else {
        for _ in 0..runs.parse::<usize>()? {
            writeln!(stdout, "{:.6}", run(model, out)?)?;
        }
    }
    Ok(())
}

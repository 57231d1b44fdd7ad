//! `onnx-bcast bench`: times whole-model runs of the CPU executor on deterministic generated
//! inputs (warm-up first, then the median, minimum and maximum of the timed runs) in a rayon
//! pool of the requested size.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use onnx_bcast::exec::compare::generate;
use onnx_bcast::exec::{self, fuse, Options};
use onnx_bcast::{io, Error, Result};

use super::{PlainFormat, OK};

/// What `bench` measured, in milliseconds per whole-model run.
struct Timing {
    median: f64,
    min: f64,
    max: f64,
}

fn timing(mut ms: Vec<f64>) -> Option<Timing> {
    ms.sort_by(f64::total_cmp);
    let n = ms.len();
    let median = match n {
        0 => return None,
        _ if n % 2 == 1 => ms[n / 2],
        _ => (ms[n / 2 - 1] + ms[n / 2]) / 2.0,
    };
    Some(Timing { median, min: ms[0], max: ms[n - 1] })
}

#[allow(clippy::too_many_arguments)]
pub fn bench(
    model: &Path,
    dims: &HashMap<String, i64>,
    threads: Option<usize>,
    repeat: usize,
    warmup: usize,
    format: PlainFormat,
    max_memory: u64,
) -> Result<u8> {
    if repeat == 0 {
        return Err(Error::Usage("--repeat must be at least 1".into()));
    }
    let m = io::load(model)?;
    let inputs = generate(&m, dims, max_memory)?;
    let opts = Options { max_memory };
    if threads == Some(0) {
        return Err(Error::Usage("--threads must be at least 1".into()));
    }
    // rayon takes 0 threads as not set: its default (RAYON_NUM_THREADS, else one per core).
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| Error::Usage(format!("cannot start {threads:?} threads: {e}")))?;
    let threads = pool.current_num_threads();
    let mut ms = Vec::with_capacity(repeat);
    pool.install(|| -> Result<()> {
        for i in 0..warmup + repeat {
            let t = Instant::now();
            let outs = exec::run(&m, inputs.clone(), &opts)?;
            let dt = t.elapsed().as_secs_f64() * 1e3;
            // The outputs go back to the executor's pool, so the next run writes into warm pages
            // (as a runtime with pre-bound outputs does).
            outs.into_iter().for_each(|(_, o)| fuse::recycle(o));
            if i >= warmup {
                ms.push(dt);
            }
        }
        Ok(())
    })?;
    let t = timing(ms).ok_or_else(|| Error::Usage("no timed runs".into()))?;
    match format {
        PlainFormat::Json => super::say!(
            "{{\"model\": {}, \"threads\": {threads}, \"repeat\": {repeat}, \"warmup\": {warmup}, \
             \"median_ms\": {:.4}, \"min_ms\": {:.4}, \"max_ms\": {:.4}}}",
            json_str(&model.display().to_string()),
            t.median,
            t.min,
            t.max
        ),
        PlainFormat::Text => super::say!(
            "{}: {threads} threads, {repeat} runs after {warmup} warm-up: median {:.3} ms, min {:.3} ms, max {:.3} ms",
            model.display(),
            t.median,
            t.min,
            t.max
        ),
    }
    Ok(OK)
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let t = timing(vec![3.0, 1.0, 2.0]).unwrap();
        assert_eq!((t.median, t.min, t.max), (2.0, 1.0, 3.0));
        let t = timing(vec![4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(t.median, 2.5);
        assert!(timing(vec![]).is_none());
    }

    #[test]
    fn json_strings_escape() {
        assert_eq!(json_str("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}

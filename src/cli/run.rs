//! `onnx-bcast run`: executes a model on `.npy` / `.pb` inputs and writes one `.npy` per graph
//! output.

use std::path::{Path, PathBuf};

use onnx_bcast::exec::{self, npy, Options};
use onnx_bcast::{io, Error, Result};

use super::OK;

/// A file name for output `name`: path separators and other unsafe characters become `_`.
fn file_name(name: &str, taken: &mut Vec<String>) -> String {
    let mut base: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    if base.is_empty() || base.starts_with('.') {
        base = format!("output{base}");
    }
    let mut candidate = base.clone();
    let mut i = 1;
    while taken.contains(&candidate) {
        candidate = format!("{base}_{i}");
        i += 1;
    }
    taken.push(candidate.clone());
    format!("{candidate}.npy")
}

pub fn run(model: &Path, inputs: &[(String, PathBuf)], output_dir: Option<&Path>, max_memory: u64) -> Result<u8> {
    let m = io::load(model)?;
    let opts = Options { max_memory };
    let mut feeds = Vec::with_capacity(inputs.len());
    for (name, file) in inputs {
        feeds.push((name.clone(), npy::read_input(file, max_memory)?));
    }
    let outputs = exec::run(&m, feeds, &opts)?;
    let dir = output_dir.unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let mut taken = Vec::new();
    for (name, t) in &outputs {
        let path = dir.join(file_name(name, &mut taken));
        npy::write(&path, t)?;
        super::say!("{name}: {}{:?} -> {}", t.dtype(), t.shape, path.display());
    }
    Ok(OK)
}

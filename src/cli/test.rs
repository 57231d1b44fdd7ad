//! `onnx-bcast test`: runs ONNX backend-format case folders (`model.onnx` and
//! `test_data_set_*/{input,output}_*.pb`) like onnxruntime's onnx_test_runner: one line per
//! case, a summary, exit 1 when a case fails.

use std::path::{Path, PathBuf};

use onnx_bcast::exec::compare::{compare, Tolerance};
use onnx_bcast::exec::{self, tensor, HostTensor, Options};
use onnx_bcast::shape::Type;
use onnx_bcast::{io, Error, Model, Result};

use super::{FAILED, FINDINGS, OK};

/// The case folders under `dir`: itself when it holds `model.onnx`, else its subfolders that
/// do, sorted.
fn cases(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.join("model.onnx").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let mut out = Vec::new();
    for e in entries {
        let p = e.map_err(|source| Error::Io { path: dir.to_path_buf(), source })?.path();
        if p.join("model.onnx").is_file() {
            out.push(p);
        }
    }
    if out.is_empty() {
        return Err(Error::Usage(format!("{}: no test case (a folder with model.onnx) found", dir.display())));
    }
    out.sort();
    Ok(out)
}

/// The sorted `prefix_<i>.pb` files of a data set.
fn numbered(dir: &Path, prefix: &str) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let mut found: Vec<(usize, PathBuf)> = Vec::new();
    for e in entries {
        let p = e.map_err(|source| Error::Io { path: dir.to_path_buf(), source })?.path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if let Some(i) = name.strip_prefix(prefix).and_then(|r| r.strip_suffix(".pb")).and_then(|i| i.parse().ok()) {
            found.push((i, p));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// How one case ended.
enum Verdict {
    Pass(usize),
    /// The model computed something else, or the executor could not run it.
    Fail(String),
    /// The executor does not run what the case holds (an op, an element type): the case says
    /// nothing either way.
    Skip(String),
    /// The job could not be done: unreadable files, a resource limit.
    Error(Error),
}

fn read(path: &Path, budget: u64) -> Result<(String, HostTensor)> {
    let t = io::read_tensor(path)?;
    let host = tensor::from_ir(&t, None, budget).map_err(|f| f.into_error(&path.display().to_string()))?;
    Ok((t.name, host))
}

fn run_case(dir: &Path, opts: &Options) -> Verdict {
    let model = match io::load(&dir.join("model.onnx")) {
        Ok(m) => m,
        Err(e) => return Verdict::Error(e),
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(source) => return Verdict::Error(Error::Io { path: dir.to_path_buf(), source }),
    };
    let mut sets: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_")))
        .collect();
    sets.sort();
    if sets.is_empty() {
        return Verdict::Error(Error::Usage(format!("{}: no test_data_set_* folder", dir.display())));
    }
    for set in &sets {
        match run_set(&model, set, opts) {
            Ok(None) => {}
            Ok(Some(why)) => {
                let set_name = set.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                return Verdict::Fail(format!("{set_name}: {why}"));
            }
            Err(Error::Unsupported { what, .. }) => return Verdict::Skip(what),
            Err(e @ (Error::Exec { .. } | Error::Tensor { .. })) => return Verdict::Fail(e.to_string()),
            Err(e) => return Verdict::Error(e),
        }
    }
    Verdict::Pass(sets.len())
}

/// Runs one data set; `Some(reason)` when an output differs.
fn run_set(model: &Model, set: &Path, opts: &Options) -> Result<Option<String>> {
    let main = model.graph(Model::MAIN);
    let tensor = |ty: &Option<onnx_bcast::shape::Type>| !matches!(ty, Some(Type::Sequence(_) | Type::Optional(_)));
    if !main.inputs.iter().chain(&main.outputs).all(|i| tensor(&i.ty)) {
        return Err(Error::Unsupported { place: None, what: "sequence and optional values".into() });
    }
    let free: Vec<String> = model.free_inputs();
    let names: Vec<String> = main.inputs.iter().map(|i| model.name(i.value).to_string()).collect();
    let mut feeds = Vec::new();
    for (k, path) in numbered(set, "input_")?.iter().enumerate() {
        let (name, t) = read(path, opts.max_memory)?;
        // Bind by the tensor's name when it names an input, else by position.
        let name = if names.contains(&name) {
            name
        } else {
            free.get(k)
                .cloned()
                .ok_or_else(|| Error::Usage(format!("{}: more inputs than the model has", path.display())))?
        };
        feeds.push((name, t));
    }
    if let Some(missing) = free.iter().find(|f| !feeds.iter().any(|(n, _)| n == *f)) {
        return Err(Error::Usage(format!("{}: no file holds input '{missing}'", set.display())));
    }
    let got = exec::run(model, feeds, opts)?;
    let want = numbered(set, "output_")?;
    if want.len() != got.len() {
        return Ok(Some(format!("{} outputs expected, the model gives {}", want.len(), got.len())));
    }
    for ((name, g), path) in got.iter().zip(&want) {
        let (_, w) = read(path, opts.max_memory)?;
        if let Err(why) = compare(g, &w, Tolerance::BACKEND) {
            return Ok(Some(format!("output '{name}': {why}")));
        }
    }
    Ok(None)
}

pub fn test(dirs: &[PathBuf], max_memory: u64) -> Result<u8> {
    let mut all = Vec::new();
    for d in dirs {
        all.extend(cases(d)?);
    }
    let opts = Options { max_memory };
    let (mut passed, mut failed, mut errors) = (0usize, 0usize, 0usize);
    // Skipped cases by what the executor does not run.
    let mut skipped: std::collections::BTreeMap<String, usize> = Default::default();
    for case in &all {
        let name = case.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        match run_case(case, &opts) {
            Verdict::Pass(sets) => {
                passed += 1;
                super::say!("PASS {name} ({})", super::count(sets, "data set", "data sets"));
            }
            Verdict::Fail(why) => {
                failed += 1;
                super::say!("FAIL {name}: {why}");
            }
            Verdict::Skip(what) => {
                super::say!("SKIP {name}: the executor does not run {what}");
                *skipped.entry(what).or_default() += 1;
            }
            Verdict::Error(e) => {
                errors += 1;
                super::say!("ERROR {name}: {e}");
            }
        }
    }
    let mut summary = format!("{}: {passed} passed, {failed} failed", super::count(all.len(), "case", "cases"));
    if !skipped.is_empty() {
        let mut by_count: Vec<(&String, &usize)> = skipped.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let ops: Vec<String> = by_count.iter().map(|(op, k)| format!("{op} ({k})")).collect();
        let n = skipped.values().sum::<usize>();
        summary += &format!(", {n} skipped, as the executor does not run {}", ops.join(", "));
    }
    if errors > 0 {
        summary += &format!(", {errors} could not run");
    }
    super::say!("{summary}");
    Ok(match (errors, failed) {
        (0, 0) => OK,
        (0, _) => FINDINGS,
        _ => FAILED,
    })
}

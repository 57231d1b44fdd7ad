//! `annotate MODEL -o OUT`: writes the model back with `value_info` for every tensor.

use std::path::Path;

use onnx_bcast::infer::Options;
use onnx_bcast::{rewrite, Result};

use super::{prepare, FINDINGS, OK};

pub fn run(model: &Path, out: &super::Output, options: &Options, fix_declared: bool) -> Result<u8> {
    let Some((mut m, mut inf)) = prepare(model, options, fix_declared)? else { return Ok(FINDINGS) };
    let added = rewrite::annotate_taking(&mut m, &mut inf);
    rewrite::bind_declared(&mut m, &options.bindings);
    let out = out.save(&m, model)?;
    let added = super::count(added, "value_info entry", "value_info entries");
    eprintln!("onnx-bcast: {}: {added} added, written to {}", model.display(), out.display());
    // The process ends next and the OS takes the memory back at once; freeing a large model
    // piece by piece would only add time (a tenth of the run at a million nodes).
    std::mem::forget(m);
    std::mem::forget(inf);
    Ok(OK)
}

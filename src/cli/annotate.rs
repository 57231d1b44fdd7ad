//! `annotate MODEL -o OUT`: writes the model back with `value_info` for every tensor.

use std::path::Path;

use onnx_bcast::infer::{self, Options};
use onnx_bcast::{rewrite, Result};

use super::{refuse, FINDINGS, OK};

pub fn run(model: &Path, out: &super::Output, options: &Options) -> Result<u8> {
    let mut m = onnx_bcast::io::load(model)?;
    infer::check_bindings(&options.bindings, &m.input_dims())?;
    let mut inf = infer::infer(&m, options);
    if refuse(model, &inf) {
        return Ok(FINDINGS);
    }
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

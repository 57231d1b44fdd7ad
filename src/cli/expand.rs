//! `expand MODEL -o OUT`: writes the model back with every implicit broadcast made explicit.

use std::path::Path;

use onnx_bcast::infer::{self, Options};
use onnx_bcast::{rewrite, Result};

use super::{refuse, FINDINGS, OK};

pub fn run(model: &Path, out: &super::Output, options: &Options) -> Result<u8> {
    let mut m = onnx_bcast::io::load(model)?;
    let inf = infer::infer(&m, options);
    if refuse(model, &inf) {
        return Ok(FINDINGS);
    }
    let report = rewrite::expand(&mut m, options);
    for d in &report.diagnostics {
        eprintln!("{d}");
    }
    rewrite::bind_declared(&mut m, &options.bindings);
    let out = out.save(&m, model)?;
    eprintln!(
        "onnx-bcast: {}: {} nodes made explicit with {} added nodes and constants, written to {}",
        model.display(),
        report.rewritten,
        report.added,
        out.display()
    );
    Ok(OK)
}

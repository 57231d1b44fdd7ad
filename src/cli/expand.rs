//! `expand MODEL -o OUT`: writes the model back with every implicit broadcast made explicit.

use std::path::Path;

use onnx_bcast::infer::Options;
use onnx_bcast::{rewrite, Result};

use super::{prepare, FINDINGS, OK};

pub fn run(model: &Path, out: &super::Output, options: &Options, fix_declared: bool) -> Result<u8> {
    let Some((mut m, inf)) = prepare(model, options, fix_declared)? else { return Ok(FINDINGS) };
    let report = rewrite::expand(&mut m, &inf)?;
    for d in &report.diagnostics {
        eprintln!("{d}");
    }
    rewrite::bind_declared(&mut m, &options.bindings);
    let out = out.save(&m, model)?;
    eprintln!(
        "onnx-bcast: {}: {} made explicit with {} added, written to {}",
        model.display(),
        super::count(report.rewritten, "node", "nodes"),
        super::count(report.added, "node or constant", "nodes and constants"),
        out.display()
    );
    Ok(OK)
}

//! `implicit MODEL -o OUT`: removes Expand/Tile nodes that implicit broadcasting makes redundant.

use std::path::Path;

use onnx_bcast::infer::Options;
use onnx_bcast::{rewrite, Result};

use super::{prepare, FINDINGS, OK};

pub fn run(model: &Path, out: &super::Output) -> Result<u8> {
    let Some((mut m, inf)) = prepare(model, &Options::default(), false)? else { return Ok(FINDINGS) };
    let report = rewrite::implicit(&mut m, &inf)?;
    let out = out.save(&m, model)?;
    eprintln!(
        "onnx-bcast: {}: {} removed ({} that fed them), written to {}",
        model.display(),
        super::count(report.removed, "explicit broadcast", "explicit broadcasts"),
        super::count(report.dead, "node or constant", "nodes and constants"),
        out.display()
    );
    Ok(OK)
}

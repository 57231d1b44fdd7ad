//! `onnx-bcast verify`: runs two models (an original and its rewrite) on the same generated
//! inputs and compares their outputs exactly: translation validation for the rewrites.

use std::collections::HashMap;
use std::path::Path;

use onnx_bcast::exec::compare::{compare, generate, Tolerance};
use onnx_bcast::exec::{self, Options};
use onnx_bcast::{io, Result};

use super::{FINDINGS, OK};

pub fn verify(original: &Path, rewritten: &Path, dims: &HashMap<String, i64>, max_memory: u64) -> Result<u8> {
    let a = io::load(original)?;
    let b = io::load(rewritten)?;
    let opts = Options { max_memory };
    let inputs = generate(&a, dims, max_memory)?;
    let got_a = exec::run(&a, inputs.clone(), &opts)?;
    let got_b = exec::run(&b, inputs, &opts)?;
    let mut code = OK;
    if got_a.len() != got_b.len() {
        super::say!("MISMATCH: {} outputs in the original, {} in the rewrite", got_a.len(), got_b.len());
        return Ok(FINDINGS);
    }
    for ((na, ta), (nb, tb)) in got_a.iter().zip(&got_b) {
        let label = if na == nb { na.clone() } else { format!("{na} / {nb}") };
        match compare(tb, ta, Tolerance::EXACT) {
            Ok(()) => super::say!("OK {label}: {}{:?}", ta.dtype(), ta.shape),
            Err(why) => {
                super::say!("MISMATCH {label}: {why}");
                code = FINDINGS;
            }
        }
    }
    super::say!("{}", if code == OK { "outputs are identical" } else { "outputs differ" });
    Ok(code)
}

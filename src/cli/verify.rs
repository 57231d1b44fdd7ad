//! `onnx-bcast verify`: checks a rewrite against its original on the executor, site by site
//! (every node the rewrite changed, with what computes its new inputs) and, where the executor
//! runs both models, output by output (`exec::verify`).

use std::collections::HashMap;
use std::path::Path;

use onnx_bcast::exec::verify::{verify as check, Outcome};
use onnx_bcast::exec::Options;
use onnx_bcast::{io, Result};

use super::{count, FINDINGS, OK};

pub fn verify(
    original: &Path,
    rewritten: &Path,
    dims: &HashMap<String, i64>,
    shapes: &HashMap<String, Vec<i64>>,
    max_memory: u64,
) -> Result<u8> {
    let a = io::load(original)?;
    let b = io::load(rewritten)?;
    onnx_bcast::infer::check_bindings(dims, &a.input_dims())?;
    let report = check(&a, &b, dims, shapes, &Options { max_memory })?;
    let (mut same, mut differ, mut not_run) = (0, 0, 0);
    for site in &report.sites {
        let at = format!("{} ({}) in {}", site.node, site.op_type, site.graph);
        match &site.outcome {
            Outcome::Identical { nodes } => {
                same += 1;
                super::say!("OK {at}: identical, {} of the rewrite", count(*nodes, "node", "nodes"));
            }
            Outcome::Differs(why) => {
                differ += 1;
                super::say!("MISMATCH {at}: {why}");
            }
            Outcome::NotRun(why) => {
                not_run += 1;
                super::say!("NOT RUN {at}: {why}");
            }
        }
    }
    let mut sizes: Vec<String> = report.bindings.iter().map(|(k, v)| format!("{k}={v}")).collect();
    sizes.sort();
    let sizes = if sizes.is_empty() { String::new() } else { format!(" at {}", sizes.join(", ")) };
    super::say!(
        "{} changed{sizes}: {same} identical, {differ} differ, {not_run} not run",
        count(report.sites.len(), "site", "sites")
    );
    match &report.whole {
        Ok(outputs) => {
            for (name, r) in outputs {
                match r {
                    Ok(()) => super::say!("OK output {name}"),
                    Err(why) => super::say!("MISMATCH output {name}: {why}"),
                }
            }
            let all = outputs.iter().all(|(_, r)| r.is_ok());
            super::say!("whole model: {}", if all { "outputs are identical" } else { "outputs differ" });
        }
        Err(why) => super::say!("whole model: not run ({why})"),
    }
    Ok(if report.identical() { OK } else { FINDINGS })
}

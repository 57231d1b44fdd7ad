//! Legacy broadcasts: before opset 7, Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater,
//! Less and Gemm broadcast only with `broadcast=1`, input B matching a run of A's axes that
//! starts at `axis` (by default the trailing axes). The plan makes that explicit at the model's
//! own opset: B is unsqueezed to A's rank with 1s around the run (XLA's
//! `broadcast_dimensions`), tiled to A's shape, and the attributes are dropped, so the model
//! means the same under any later opset.

use crate::infer::Inference;
use crate::ir::{norm_domain, Model, NodeId};

use super::expand::{leading, Site};
use super::Patch;

/// Plans a legacy binary node; `None` when it does not broadcast (`broadcast` unset or 0).
pub(super) fn binary(patch: &mut Patch, model: &Model, inf: &Inference, n: NodeId) -> Result<Option<bool>, String> {
    let node = model.node(n);
    if node.attr_int("broadcast").unwrap_or(0) == 0 {
        return Ok(None);
    }
    if node.inputs.len() != 2 || node.inputs.iter().any(Option::is_none) {
        return Err("a legacy broadcast needs inputs A and B".into());
    }
    let axis = node.attr_int("axis");
    let site = Site::new(patch, model, inf, n, Some(0))?;
    // B's dims land at axes start..start+rank(B) of A; the other axes are unsqueezed.
    let run = |r: usize, rank: usize| -> Option<Vec<i64>> {
        let placed = crate::shape::legacy_dims(r, rank, axis)?;
        Some((0..r as i64).filter(|a| !placed.contains(a)).collect())
    };
    site.run(patch, &[1], run)?;
    patch.drop_attrs.extend([(n, "broadcast"), (n, "axis")]);
    Ok(Some(true))
}

/// True when node `n` is the default domain's `op` read before opset 7.
fn before_7(model: &Model, n: NodeId, op: &str) -> bool {
    let node = model.node(n);
    node.op_type == op && norm_domain(&node.domain).is_empty() && model.opset_or_default(&node.domain) < 7
}

/// True for a Gemm before opset 7 with `broadcast=1`.
pub(super) fn is_gemm(model: &Model, n: NodeId) -> bool {
    before_7(model, n, "Gemm") && model.node(n).attr_int("broadcast").unwrap_or(0) != 0
}

/// Plans a legacy Gemm: C (numpy-aligned, as the op table's rule reads it) becomes `[M, N]`.
pub(super) fn gemm(patch: &mut Patch, model: &Model, inf: &Inference, n: NodeId) -> Result<Option<bool>, String> {
    if model.node(n).inputs.get(2).copied().flatten().is_some() {
        Site::new(patch, model, inf, n, None)?.run(patch, &[2], leading)?;
    }
    patch.drop_attrs.push((n, "broadcast"));
    Ok(Some(true))
}

/// True for a PRelu before opset 7, whose slope broadcasts per channel.
pub(super) fn is_prelu(model: &Model, n: NodeId) -> bool {
    before_7(model, n, "PRelu")
}

/// Plans a PRelu before opset 7: the slope stretches to X by numpy's rule when it can, else a
/// 1-D slope of X's channel count sits at the channel axis 1 (the legacy form with `axis=1`),
/// which is how onnx's reference evaluator reads these models.
pub(super) fn prelu(patch: &mut Patch, model: &Model, inf: &Inference, n: NodeId) -> Result<Option<bool>, String> {
    let node = model.node(n);
    let shape = |i: usize| node.inputs.get(i).copied().flatten().and_then(|v| inf.shape(v));
    let (Some(x), Some(slope)) = (shape(0), shape(1)) else {
        return Err("the ranks of X and the slope must be known".into());
    };
    let site = Site::new(patch, model, inf, n, Some(0))?;
    if crate::shape::uni(x, slope, 1).is_ok() {
        return site.run(patch, &[1], leading).map(Some);
    }
    if slope.len() == 1 && x.len() >= 2 && crate::shape::legacy(x, slope, Some(1)).is_ok() {
        let channel =
            |r: usize, rank: usize| (rank == 1 && r >= 2).then(|| (0..r as i64).filter(|a| *a != 1).collect());
        return site.run(patch, &[1], channel).map(Some);
    }
    Err("the slope matches neither X's trailing axes nor its channel axis".into())
}

//! `implicit`, the inverse of `expand`: removes `Expand`, `Tile` and leading-axis `Unsqueeze`
//! nodes whose output feeds only broadcasting-family nodes that broadcast implicitly to the
//! same result (and is no graph output), then the nodes and constants that only fed them.
//! Legacy opset<7 nodes are left alone: without `broadcast=1` they do not broadcast.

use std::collections::{HashMap, HashSet};

use crate::dtype::DType;
use crate::infer::Inference;
use crate::ir::{norm_domain, AttrValue, Def, Model, NodeId, TensorData, ValueId};
use crate::ops::ShapeRule;
use crate::shape::{multi, uni, Dim, Shape};

use super::{family_rule, same, same_shape, Patch, Wire};

/// What `implicit` did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Expand/Tile/Unsqueeze nodes removed.
    pub removed: usize,
    /// Nodes and initializers removed because they only fed those.
    pub dead: usize,
}

/// Removes redundant explicit broadcasts until none is left, given the caller's inference of
/// `model`. Inference is not run again: a removal is planned only where every consumer's
/// output keeps its type, so the inference stays the model's after each round (a chain
/// `Unsqueeze -> Expand -> Add` loses its Expand in one round, its Unsqueeze in the next).
/// In debug builds the result is inferred again and its graph outputs compared. A model with
/// error findings is refused, as the command line refuses it.
pub fn implicit(model: &mut Model, inf: &Inference) -> crate::Result<Report> {
    if inf.has_errors() {
        return Err(crate::Error::Findings { errors: inf.errors() });
    }
    let mut report = Report::default();
    loop {
        let patch = plan(model, inf);
        if patch.is_empty() {
            break;
        }
        report.removed += patch.remove.len();
        report.dead += patch.apply(model);
    }
    #[cfg(debug_assertions)]
    outputs_kept(model, inf);
    Ok(report)
}

/// The invariant: the graph outputs' inferred shapes are what they were.
#[cfg(debug_assertions)]
fn outputs_kept(model: &Model, inf: &Inference) {
    let again = crate::infer::infer(model, inf.options());
    for g in model.graph_ids() {
        for o in &model.graph(g).outputs {
            if let (Some(a), Some(b)) = (inf.shape(o.value), again.shape(o.value)) {
                assert!(
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.known().is_none() || x == y),
                    "implicit changed output {}: {a:?} became {b:?}",
                    model.name(o.value)
                );
            }
        }
    }
}

/// One round: consumers' inputs to rewire past redundant broadcasts, which the patch removes.
fn plan(model: &Model, inf: &Inference) -> Patch {
    let graph_outputs: HashSet<ValueId> = model.graphs.iter().flat_map(|g| g.outputs.iter().map(|o| o.value)).collect();
    // Each consumer's inputs as the plan so far leaves them.
    let mut current: HashMap<NodeId, Vec<Option<ValueId>>> = HashMap::new();
    let mut out = Patch::default();
    for g in model.graph_ids() {
        for &r in &model.graph(g).order {
            let node = model.node(r);
            let (Some(Some(x)), [Some(y)]) = (node.inputs.first(), node.outputs.as_slice()) else { continue };
            if !norm_domain(&node.domain).is_empty() || graph_outputs.contains(y) {
                continue;
            }
            let redundant = match node.op_type.as_str() {
                "Expand" => model.opset_or_default(&node.domain) >= 8,
                "Tile" => tile_stretches_ones(model, inf, r),
                "Unsqueeze" => unsqueeze_leading(model, inf, r),
                _ => false,
            };
            if !redundant {
                continue;
            }
            // Each user's inputs with `x` for `y`, if every user gives the same result so.
            let users = model.users(*y).into_iter();
            let trial: Option<Vec<_>> = users
                .map(|u| {
                    let un = model.node(u);
                    if un.graph != g || !un.inputs.contains(&Some(*y)) {
                        return None;
                    }
                    let mut ins = current.get(&u).cloned().unwrap_or_else(|| un.inputs.to_vec());
                    for i in ins.iter_mut().filter(|i| **i == Some(*y)) {
                        *i = Some(*x);
                    }
                    same_result(model, inf, u, &ins).then_some((u, ins))
                })
                .collect();
            let Some(trial) = trial.filter(|t| !t.is_empty()) else { continue };
            for (u, ins) in trial {
                for (slot, v) in model.node(u).inputs.iter().enumerate() {
                    if *v == Some(*y) {
                        out.rewires.push((u, slot, Wire::Old(*x)));
                    }
                }
                current.insert(u, ins);
            }
            out.remove.push(r);
        }
    }
    out
}

/// True when family node `u` with inputs `ins` gives the shape it gives now, by implicit
/// broadcasting.
fn same_result(model: &Model, inf: &Inference, u: NodeId, ins: &[Option<ValueId>]) -> bool {
    let node = model.node(u);
    let Some(o) = node.outputs.first().copied().flatten().and_then(|v| inf.shape(v)) else { return false };
    if o.iter().any(|d| matches!(d, Dim::Unknown)) {
        return false;
    }
    let shape = |v: &Option<ValueId>| v.and_then(|v| inf.shape(v)).map(Vec::as_slice);
    let got: Option<Shape> = match family_rule(model, node) {
        Some(ShapeRule::Multi) => {
            let shapes: Option<Vec<&[Dim]>> = ins.iter().filter(|v| v.is_some()).map(shape).collect();
            shapes.and_then(|s| multi(&s).ok()).map(|b| b.shape)
        }
        Some(ShapeRule::Uni { to, from }) => {
            // Only the stretched input may lose its explicit broadcast.
            if node.inputs.get(to) != ins.get(to) {
                return false;
            }
            match (ins.get(to).and_then(shape), ins.get(from).and_then(shape)) {
                (Some(t), Some(f)) => uni(t, f, from).ok().map(|b| b.shape),
                _ => None,
            }
        }
        _ => None,
    };
    got.is_some_and(|s| same_shape(&s, o))
}

/// A Tile that only stretches axes of size 1 (or repeats an axis once): a broadcast.
fn tile_stretches_ones(model: &Model, inf: &Inference, r: NodeId) -> bool {
    let node = model.node(r);
    if model.opset_or_default(&node.domain) < 6 {
        return false;
    }
    let (Some(Some(x)), Some(Some(reps))) = (node.inputs.first(), node.inputs.get(1)) else { return false };
    let Some(shape) = inf.shape(*x) else { return false };
    if let Some(reps) = const_ints(model, inf, *reps) {
        return shape.len() == reps.len() && shape.iter().zip(reps).all(|(d, rep)| rep == 1 || *d == Dim::Known(1));
    }
    // Repeats computed at run time: the output's shape tells. An axis whose size stays the same
    // was repeated once (or is empty either way).
    let Some(Some(y)) = node.outputs.first() else { return false };
    let Some(out) = inf.shape(*y) else { return false };
    shape.len() == out.len() && shape.iter().zip(out).all(|(d, o)| *d == Dim::Known(1) || same(d, o))
}

/// The contents of a small integer tensor: as inference knows them, or a `Cast` to an integer
/// type of a `Constant` holding integral floats (how `expand` writes integer constants before
/// opset 9 in models whose IR version allows no free initializers).
fn const_ints(model: &Model, inf: &Inference, v: ValueId) -> Option<Vec<i64>> {
    if let Some(dims) = inf.value(v) {
        return dims.iter().map(Dim::known).collect();
    }
    let Def::Node(cast, _) = model.value(v).def else { return None };
    let cast = model.node(cast);
    let to_int = cast.attr_int("to").and_then(|t| i32::try_from(t).ok()).and_then(DType::from_onnx)?.is_int();
    let Some(Some(src)) = cast.inputs.first() else { return None };
    let Def::Node(c, _) = model.value(*src).def else { return None };
    let c = model.node(c);
    if cast.op_type != "Cast" || !to_int || c.op_type != "Constant" {
        return None;
    }
    let Some(AttrValue::Tensor(t)) = c.attr("value") else { return None };
    let n = t.len().filter(|n| *n <= crate::ops::MAX_TRACKED)?;
    let floats: Vec<f64> = match &t.data {
        TensorData::Doubles(v) => v.clone(),
        TensorData::Floats(v) => v.iter().map(|x| f64::from(*x)).collect(),
        _ => return None,
    };
    let ints: Option<Vec<i64>> =
        floats.iter().map(|f| (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(*f as i64)).collect();
    ints.filter(|v| v.len() == n)
}

/// An Unsqueeze that only adds leading axes, which numpy's rank promotion adds implicitly.
fn unsqueeze_leading(model: &Model, inf: &Inference, r: NodeId) -> bool {
    let node = model.node(r);
    let Some(Some(x)) = node.inputs.first() else { return false };
    let Some(rank) = inf.shape(*x).map(Vec::len) else { return false };
    let axes: Option<Vec<i64>> = if model.opset_or_default(&node.domain) >= 13 {
        node.inputs.get(1).copied().flatten().and_then(|a| inf.value(a)?.iter().map(Dim::known).collect())
    } else {
        node.attr_ints("axes").map(<[i64]>::to_vec)
    };
    let Some(axes) = axes else { return false };
    let out_rank = (rank + axes.len()) as i64;
    let mut norm: Vec<i64> = axes.iter().map(|a| if *a < 0 { a + out_rank } else { *a }).collect();
    norm.sort_unstable();
    norm.iter().copied().eq(0..axes.len() as i64)
}

//! `annotate`: writes the inferred type of every tensor of every graph (subgraphs included)
//! into the model, symbols as `dim_param`. Graph inputs and outputs keep what they declare and
//! gain what inference knows beyond it; `value_info` entries follow inference, which has
//! already merged what they declared. A size the model's declared types name otherwise than
//! inference does is written with the model's name (`rewrite::declared_names`): an exporter's
//! `floor(h/2 - 1/2) + 1` stays so, on the tensors it declared and on those it did not.

use std::collections::HashMap;

use crate::infer::Inference;
use crate::ir::{Def, GraphId, IdMap, Model, ValueId};
use crate::shape::{Dim, Term, Type};

use super::{declared_names, renamed, writable, Patch, Place};

/// Annotates `model` with the types in `inf`; returns how many `value_info` entries it added.
///
/// ```
/// use onnx_bcast::{infer, io, rewrite};
///
/// let mut model = io::load("models/attention_mask.onnx".as_ref())?;
/// let inf = infer::infer(&model, &infer::Options::default());
/// assert_eq!(rewrite::annotate(&mut model, &inf), 2);
/// let bytes = io::encode(&model);
/// # Ok::<(), onnx_bcast::Error>(())
/// ```
pub fn annotate(model: &mut Model, inf: &Inference) -> usize {
    annotate_from(model, &mut Types::Copying(inf))
}

/// [`annotate`], moving the type of each node output out of `inf` instead of copying it (a
/// million copies at a million nodes), for a caller done with those types.
pub fn annotate_taking(model: &mut Model, inf: &mut Inference) -> usize {
    annotate_from(model, &mut Types::Taking(inf))
}

/// Where annotate gets types: a graph input's or output's to merge with what it declares
/// (`inf().ty`), and a node output's to write (`output`, each asked for once).
enum Types<'a> {
    Copying(&'a Inference),
    Taking(&'a mut Inference),
}

impl Types<'_> {
    fn inf(&self) -> &Inference {
        match self {
            Types::Copying(inf) => inf,
            Types::Taking(inf) => inf,
        }
    }

    fn output(&mut self, v: ValueId) -> Option<Type> {
        match self {
            Types::Copying(inf) => inf.ty(v).cloned(),
            Types::Taking(inf) => inf.take_ty(v),
        }
    }
}

fn annotate_from(model: &mut Model, types: &mut Types) -> usize {
    let renames = declared_names(model, types.inf());
    let mut patch = Patch::default();
    for g in model.graph_ids() {
        graph(model, g, types, &renames, &mut patch);
    }
    let added = patch.new_infos();
    patch.apply(model);
    added
}

/// The types to write in graph `g`: its inputs' and outputs' declared types filled in with
/// what inference adds, and the inferred type of each value its nodes define.
fn graph(model: &Model, g: GraphId, types: &mut Types, renames: &HashMap<Term, Term>, patch: &mut Patch) {
    let gr = model.graph(g);
    for (place, infos) in [(Place::Input as fn(usize) -> Place, &gr.inputs), (Place::Output, &gr.outputs)] {
        for (i, vi) in infos.iter().enumerate() {
            let inferred = types.inf().ty(vi.value);
            // A copy only where a size is renamed: `fill` copies what it keeps.
            let renamed_ty = inferred.filter(|_| !renames.is_empty()).map(|t| renamed(t.clone(), renames));
            let inferred = renamed_ty.as_ref().or(inferred);
            if let Some(ty) = fill(vi.ty.as_ref(), inferred).filter(|ty| vi.ty.as_ref() != Some(ty)) {
                patch.types.push((g, place(i), ty));
            }
        }
    }
    patch.new_infos.push((g, Vec::with_capacity(gr.order.len().saturating_sub(gr.value_info.len()))));
    // Sorted, for a binary search per value: a graph may have as many outputs as nodes.
    let mut outputs: Vec<ValueId> = gr.outputs.iter().map(|o| o.value).collect();
    outputs.sort_unstable();
    let known: IdMap<ValueId, usize> = gr.value_info.iter().enumerate().map(|(i, vi)| (vi.value, i)).collect();
    // Each value a node of this graph defines, once: the slot its definition names.
    let produced = gr
        .order
        .iter()
        .flat_map(|n| model.node(*n).outputs.iter().enumerate().filter_map(move |(slot, v)| v.map(|v| (*n, slot, v))))
        .filter(|(n, slot, v)| model.value(*v).graph == g && model.value(*v).def == Def::Node(*n, *slot))
        .map(|(_, _, v)| v);
    for v in produced {
        if outputs.binary_search(&v).is_ok() {
            continue;
        }
        let Some(ty) = types.output(v).filter(writable).map(|t| renamed(t, renames)) else { continue };
        match known.get(&v) {
            Some(&i) if gr.value_info[i].ty.as_ref() == Some(&ty) => {}
            Some(&i) => patch.types.push((g, Place::Info(i), ty)),
            // Met once (`produced` holds no value twice), so never looked up again.
            None => patch.declare_new(g, v, ty),
        }
    }
}

/// The declared type with what inference adds: unknown element types, ranks and dims filled
/// in, declared sizes and symbols kept.
fn fill(declared: Option<&Type>, inferred: Option<&Type>) -> Option<Type> {
    let inferred = inferred.filter(|t| writable(t));
    let Some(declared) = declared else { return inferred.cloned() };
    let Some(inferred) = inferred else { return Some(declared.clone()) };
    match (declared, inferred) {
        (Type::Tensor { dtype: dd, shape: ds }, Type::Tensor { dtype: id, shape: is }) => {
            let shape = match (ds, is) {
                (None, s) => s.clone(),
                (Some(d), Some(i)) if d.len() == i.len() => Some(
                    d.iter()
                        .zip(i)
                        .map(|(a, b)| if matches!(a, Dim::Unknown) { b.clone() } else { a.clone() })
                        .collect(),
                ),
                (d, _) => d.clone(),
            };
            Some(Type::Tensor { dtype: dd.or(*id), shape })
        }
        (Type::Sequence(None), Type::Sequence(Some(_))) | (Type::Optional(None), Type::Optional(Some(_))) => {
            Some(inferred.clone())
        }
        (Type::Sequence(Some(d)), Type::Sequence(Some(i))) => {
            Some(Type::Sequence(fill(Some(d), Some(i)).map(Box::new)))
        }
        (Type::Optional(Some(d)), Type::Optional(Some(i))) => {
            Some(Type::Optional(fill(Some(d), Some(i)).map(Box::new)))
        }
        _ => Some(declared.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    #[test]
    fn fill_keeps_declared_and_adds_inferred() {
        let decl = Type::tensor(None, Some(vec![Dim::sym("batch"), Dim::Unknown]));
        let inf = Type::tensor(Some(DType::F32), Some(vec![Dim::Known(2), Dim::Known(3)]));
        let got = fill(Some(&decl), Some(&inf)).unwrap();
        assert_eq!(got, Type::tensor(Some(DType::F32), Some(vec![Dim::sym("batch"), Dim::Known(3)])));
        assert_eq!(fill(None, Some(&inf)), Some(inf.clone()));
        assert_eq!(fill(Some(&decl), None), Some(decl.clone()));
    }
}

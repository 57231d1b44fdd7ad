//! `annotate`: writes the inferred type of every tensor of every graph (subgraphs included)
//! into the model, symbols as `dim_param`. Graph inputs and outputs keep what they declare and
//! gain what inference knows beyond it; `value_info` entries follow inference, which has
//! already merged what they declared. A size the model's declared types name otherwise than
//! inference does is written with the model's name (`rewrite::declared_names`): an exporter's
//! `floor(h/2 - 1/2) + 1` stays so, on the tensors it declared and on those it did not.

use std::collections::HashMap;

use crate::infer::Inference;
use crate::ir::{Def, GraphId, IdMap, Model, ValueId, ValueInfo};
use crate::shape::{Dim, Term, Type};

use super::{declared_names, renamed, writable};

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
    let renames = declared_names(model, inf);
    annotate_from(model, &mut Copying(inf), &renames)
}

/// [`annotate`], moving the type of each node output out of `inf` instead of copying it (a
/// million copies at a million nodes), for a caller done with those types.
pub fn annotate_taking(model: &mut Model, inf: &mut Inference) -> usize {
    let renames = declared_names(model, inf);
    annotate_from(model, &mut Taking(inf), &renames)
}

/// Where annotate gets types: a graph input's or output's to merge with what it declares,
/// and a node output's to write (each asked for once).
trait Types {
    fn ty(&self, v: ValueId) -> Option<&Type>;
    fn output(&mut self, v: ValueId) -> Option<Type>;
}

struct Copying<'a>(&'a Inference);

impl Types for Copying<'_> {
    fn ty(&self, v: ValueId) -> Option<&Type> {
        self.0.ty(v)
    }

    fn output(&mut self, v: ValueId) -> Option<Type> {
        self.0.ty(v).cloned()
    }
}

struct Taking<'a>(&'a mut Inference);

impl Types for Taking<'_> {
    fn ty(&self, v: ValueId) -> Option<&Type> {
        self.0.ty(v)
    }

    fn output(&mut self, v: ValueId) -> Option<Type> {
        self.0.take_ty(v)
    }
}

fn annotate_from(model: &mut Model, inf: &mut impl Types, renames: &HashMap<Term, Term>) -> usize {
    let mut added = 0;
    let graphs: Vec<GraphId> = model.graph_ids().collect();
    for g in graphs {
        added += graph(model, g, inf, renames);
    }
    added
}

fn graph(model: &mut Model, g: GraphId, inf: &mut impl Types, renames: &HashMap<Term, Term>) -> usize {
    let fill_all = |infos: &mut Vec<ValueInfo>| {
        for vi in infos.iter_mut() {
            let owned;
            let inferred = match inf.ty(vi.value) {
                Some(t) if !renames.is_empty() => {
                    owned = renamed(t.clone(), renames);
                    Some(&owned)
                }
                t => t,
            };
            if let Some(ty) = fill(vi.ty.as_ref(), inferred) {
                if vi.ty.as_ref() != Some(&ty) {
                    vi.ty = Some(ty);
                }
            }
        }
    };
    let gr = model.graph_mut(g);
    let mut inputs = std::mem::take(&mut gr.inputs);
    let mut outputs = std::mem::take(&mut gr.outputs);
    fill_all(&mut inputs);
    fill_all(&mut outputs);
    let gr = model.graph_mut(g);
    gr.inputs = inputs;
    gr.outputs = outputs;

    // Sorted, for a binary search per value: a graph may have as many outputs as nodes.
    let mut outputs: Vec<ValueId> = model.graph(g).outputs.iter().map(|o| o.value).collect();
    outputs.sort_unstable();
    let known: IdMap<ValueId, usize> =
        model.graph(g).value_info.iter().enumerate().map(|(i, vi)| (vi.value, i)).collect();
    let mut added = 0;
    let m: &Model = model;
    // Each value a node of this graph defines, once: the slot its definition names.
    let produced: Vec<ValueId> = m
        .graph(g)
        .order
        .iter()
        .flat_map(|n| m.node(*n).outputs.iter().enumerate().filter_map(move |(slot, v)| v.map(|v| (*n, slot, v))))
        .filter(|(n, slot, v)| m.value(*v).graph == g && m.value(*v).def == Def::Node(*n, *slot))
        .map(|(_, _, v)| v)
        .collect();
    model.graph_mut(g).value_info.reserve(produced.len().saturating_sub(known.len()));
    for v in produced {
        if outputs.binary_search(&v).is_ok() {
            continue;
        }
        let Some(ty) = inf.output(v).filter(writable).map(|t| renamed(t, renames)) else { continue };
        match known.get(&v) {
            Some(&i) => {
                let vi = &mut model.graph_mut(g).value_info[i];
                if vi.ty.as_ref() != Some(&ty) {
                    vi.ty = Some(ty);
                }
            }
            None => {
                // Met once (`produced` holds no value twice), so never looked up again.
                model.graph_mut(g).value_info.push(ValueInfo::new(v, Some(ty)));
                added += 1;
            }
        }
    }
    added
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

//! `expand`: makes every implicit broadcast explicit. Each input of a broadcasting-family node
//! whose shape differs from the output's gets an `Unsqueeze` to the output's rank (XLA's
//! `broadcast_dimensions`) and an `Expand` (before opset 8: `Tile`) to the output's shape.
//! Static targets are constants; symbolic ones are computed in the graph from the operands'
//! `Shape`s. Legacy opset<7 `broadcast`/`axis` nodes are planned in `legacy.rs`.

use std::collections::HashMap;

use crate::diag::{Code, Diagnostic, Severity};
use crate::dtype::DType;
use crate::infer::Inference;
use crate::ir::{AttrValue, Attribute, Model, NodeId, ValueId};
use crate::ops::ShapeRule;
use crate::shape::{Dim, Shape, Type};

use super::{family_rule, legacy, same, same_shape, At, Patch, Wire};

/// What `expand` did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Nodes whose inputs were made explicit (or whose legacy attributes were dropped).
    pub rewritten: usize,
    /// Nodes and constants added.
    pub added: usize,
    /// Nodes left as they were, each with a warning saying why.
    pub diagnostics: Vec<Diagnostic>,
    /// The family nodes the plan vouches for: made explicit, or explicit already.
    pub handled: Vec<NodeId>,
    /// The family nodes of unknown rank whose broadcast is computed in the graph: explicit by
    /// construction, which inferred shapes cannot show.
    pub computed: Vec<NodeId>,
}

/// Makes every broadcast of `model` explicit, given its inference (which the caller has, and
/// which is not run again), and in debug builds checks the invariant on the result. A model
/// with error findings is refused, as the command line refuses it.
///
/// ```
/// use onnx_bcast::{infer, io, rewrite, Model};
///
/// let mut model = io::load("models/nary_sum.onnx".as_ref())?;
/// let inf = infer::infer(&model, &infer::Options::default());
/// let report = rewrite::expand(&mut model, &inf)?;
/// assert_eq!(report.rewritten, 4); // Sum, Max, Min and Mean
/// let ops: Vec<&str> = model.graph(Model::MAIN).order().iter().map(|n| model.node(*n).op_type.as_str()).collect();
/// assert!(ops.contains(&"Expand"));
/// # Ok::<(), onnx_bcast::Error>(())
/// ```
pub fn expand(model: &mut Model, inf: &Inference) -> crate::Result<Report> {
    if inf.has_errors() {
        return Err(crate::Error::Findings { errors: inf.errors() });
    }
    let (patch, mut report) = plan(model, inf);
    report.added = patch.nodes.len();
    #[cfg(debug_assertions)]
    let assumed = stretched_under_assumptions(model, inf);
    patch.apply(model);
    #[cfg(debug_assertions)]
    {
        let after = crate::infer::infer(model, inf.options());
        let bad: Vec<String> = super::violations(model, &after)
            .into_iter()
            .filter(|(n, _)| report.handled.contains(n) && !assumed.contains(n))
            .map(|(_, m)| m)
            .collect();
        debug_assert!(bad.is_empty(), "expand broke its invariant:\n{}", bad.join("\n"));
    }
    Ok(report)
}

/// The unidirectional nodes (PRelu, the legacy `broadcast=1` form) whose stretched input
/// stretches under an assumption (`S is 1 or ?1`, `n = 2`): the expanded input's shape is
/// `max(S, ?1)` or `(n-1)*2` while the output keeps `?1` or `n`, equal when the assumption
/// holds, which comparing shapes cannot show. The invariant check leaves them out.
#[cfg(debug_assertions)]
fn stretched_under_assumptions(model: &Model, inf: &Inference) -> Vec<NodeId> {
    let positions = model.positions();
    let mut out = Vec::new();
    for g in &model.graphs {
        for &n in &g.order {
            let node = model.node(n);
            let stretches = matches!(family_rule(model, node), Some(ShapeRule::Uni { .. } | ShapeRule::Legacy));
            if !(legacy::is_prelu(model, n) || stretches) {
                continue;
            }
            let label = model.label_with(n, &positions);
            if inf.constraints.iter().any(|c| c.graph == g.path && c.node == label) {
                out.push(n);
            }
        }
    }
    out
}

/// The edits that make every broadcast of `model` explicit, given its inference.
pub fn plan(model: &Model, inf: &Inference) -> (Patch, Report) {
    let mut patch = Patch { renames: super::declared_names(model, inf), ..Patch::new(model) };
    let mut report = Report::default();
    for g in model.graph_ids() {
        for &n in &model.graph(g).order {
            let node = model.node(n);
            let result = match family_rule(model, node) {
                _ if legacy::is_prelu(model, n) => legacy::prelu(&mut patch, model, inf, n),
                Some(ShapeRule::Legacy) => legacy::binary(&mut patch, model, inf, n),
                Some(ShapeRule::Multi) if super::inputs_alike(inf, node) => continue,
                Some(ShapeRule::Multi) if expanded_alike(model, node) => {
                    report.computed.push(n);
                    continue;
                }
                Some(ShapeRule::Multi) if ranked(model, inf, n) => {
                    let slots: Vec<usize> = (0..node.inputs.len()).filter(|i| node.inputs[*i].is_some()).collect();
                    Site::new(&patch, model, inf, n, None).and_then(|s| s.run(&mut patch, &slots, leading)).map(Some)
                }
                Some(ShapeRule::Uni { to, from }) if ranked(model, inf, n) => {
                    Site::new(&patch, model, inf, n, Some(to))
                        .and_then(|s| s.run(&mut patch, &[from], leading))
                        .map(Some)
                }
                rule @ Some(ShapeRule::Multi | ShapeRule::Uni { .. }) => {
                    let uni = match rule {
                        Some(ShapeRule::Uni { to, from }) => Some((to, from)),
                        _ => None,
                    };
                    let result = unranked(&mut patch, model, inf, n, uni);
                    if let Ok(changed) = result {
                        report.computed.push(n);
                        report.rewritten += usize::from(changed);
                        continue;
                    }
                    result.map(Some)
                }
                _ if legacy::is_gemm(model, n) => legacy::gemm(&mut patch, model, inf, n),
                _ => continue,
            };
            match result {
                Ok(None) => {}
                Ok(Some(changed)) => {
                    report.handled.push(n);
                    report.rewritten += usize::from(changed);
                }
                Err(why) => {
                    let msg = format!("left implicit: {why}");
                    let mut d = Diagnostic::new(Severity::Warning, Code::ExpandSkipped, &model.graph(g).path, msg);
                    d.node = Some(model.node_label(n));
                    d.op_type = Some(node.op_type.to_string());
                    report.diagnostics.push(d);
                }
            }
        }
    }
    (patch, report)
}

/// An error when inference never reached the node of output `v` (it has no type at all):
/// a branch of an `If` that no input takes.
fn unreached(inf: &Inference, v: ValueId) -> Result<(), String> {
    match inf.ty(v) {
        Some(_) => Ok(()),
        None => Err("inference did not reach the node (an If branch that these sizes never take)".into()),
    }
}

/// True when every operand of the node is the output of an `Expand` to one and the same
/// target (as `expand` writes a broadcast whose sizes it folds at run time): the operands have
/// one shape by construction, which inference may not see (each `Expand` of an unknown size
/// gets a size of its own).
fn expanded_alike(model: &Model, node: &crate::ir::Node) -> bool {
    let target = |v: &ValueId| {
        let e = expand_of(model, *v).filter(|e| model.opset_or_default(&e.domain) >= 8)?;
        e.inputs.get(1).copied().flatten()
    };
    let mut targets = node.inputs.iter().flatten().map(target);
    let Some(Some(first)) = targets.next() else { return false };
    node.inputs.iter().flatten().count() >= 2 && targets.all(|t| t == Some(first))
}

/// The `Expand` node whose first output is `v`, if one is.
fn expand_of(model: &Model, v: ValueId) -> Option<&crate::ir::Node> {
    match model.value(v).def {
        crate::ir::Def::Node(e, 0) if model.node(e).op_type == "Expand" => Some(model.node(e)),
        _ => None,
    }
}

/// True when the node's output and every input it has are of known rank.
fn ranked(model: &Model, inf: &Inference, n: NodeId) -> bool {
    let node = model.node(n);
    node.inputs.iter().chain(node.outputs.first()).flatten().all(|v| inf.shape(*v).is_some())
}

/// Makes a node explicit whose ranks are not all known (an `If` whose branches give different
/// ranks feeds it): the broadcast is computed in the graph. Each operand is unsqueezed at the
/// front by as many axes as its rank falls short of the largest (`Shape`, `Size`, `Max`,
/// `Sub`, `Range`, `Unsqueeze`), the target is the fold `Where(Equal(acc, 1), s, acc)` of the
/// padded shapes (right for size 0), and each operand is expanded to it. For a unidirectional
/// node (`uni`: the output's slot and the stretched one) only the stretched operand moves, to
/// the other's rank and shape. Needs opset 13, where `Unsqueeze` takes its axes as an input.
fn unranked(
    patch: &mut Patch,
    model: &Model,
    inf: &Inference,
    n: NodeId,
    uni: Option<(usize, usize)>,
) -> Result<bool, String> {
    let node = model.node(n);
    let opset = model.opset_or_default(&node.domain);
    unreached(inf, node.outputs.first().copied().flatten().ok_or("the node has no output")?)?;
    let mut operands = Vec::new();
    for (slot, v) in node.inputs.iter().enumerate() {
        let Some(v) = *v else { continue };
        let dtype = inf
            .ty(v)
            .and_then(Type::dtype)
            .ok_or_else(|| format!("the element type of '{}' is unknown", model.name(v)))?;
        operands.push((slot, v, dtype));
    }
    if opset < 13 {
        return Err(format!("a rank is unknown, and an operand's rank is raised in the graph only from opset 13 (the model imports {opset})"));
    }
    // Made explicit already (by this pass, before): the operands that move are expanded to one
    // target, which for a unidirectional node is the other operand's shape.
    let expanded_to = |v: ValueId| expand_of(model, v)?.inputs.get(1).copied().flatten();
    let targets: Vec<Option<ValueId>> = match uni {
        Some((_, from)) => vec![node.inputs.get(from).copied().flatten().and_then(expanded_to)],
        None => operands.iter().map(|o| expanded_to(o.1)).collect(),
    };
    let shape_of_to = |t: ValueId| match (uni, model.value(t).def) {
        (Some((to, _)), crate::ir::Def::Node(s, 0)) => {
            model.node(s).op_type == "Shape" && model.node(s).inputs.first() == node.inputs.get(to)
        }
        (None, _) => true,
        _ => false,
    };
    if let Some(Some(t)) = targets.first() {
        if targets.iter().all(|x| *x == Some(*t)) && shape_of_to(*t) {
            return Ok(false);
        }
    }
    let at = At::node(model, n);
    let base = patch.base_name(model, n);
    let name = |what: &str| format!("{base}_{what}");
    let op = |patch: &mut Patch, op: &'static str, inputs: Vec<Wire>, what: &str, ty: Option<Type>| {
        patch.node(at, op, inputs, vec![], &name(what), ty)
    };
    // Every vector inserted here is declared with a symbol for its length (no unknown size, so
    // inferring the result invents no symbol, and the model's own unknown sizes keep their
    // names): an operand's shape with its rank, `in0_rank` where it is unknown; the padded
    // shapes and the fold's with the largest rank, the `max` of those that `Max` computes, so
    // that the fold's `Equal` and `Where` are seen to take operands of one shape.
    let ranks: Vec<Dim> = (operands.iter())
        .map(|&(slot, v, _)| {
            inf.shape(v).map_or_else(|| Dim::sym(&name(&format!("in{slot}_rank"))), |s| Dim::Known(s.len() as i64))
        })
        .collect();
    let len = Dim::max_of(&ranks.iter().collect::<Vec<_>>());
    let vector = |what: String| Some(Type::tensor(Some(DType::I64), Some(vec![Dim::sym(&name(&what))])));
    let i64_vec = Some(Type::tensor(Some(DType::I64), Some(vec![len.clone()])));
    let i64_scalar = Some(Type::tensor(Some(DType::I64), Some(vec![])));
    let scalar = |patch: &mut Patch, what: &str, k: i64| {
        let t = crate::ir::Tensor::new(&name(what), DType::I64, vec![], crate::ir::TensorData::Int64s(vec![k]));
        patch.constant(at, &name(what), t)
    };
    // Each operand's shape and rank, by slot.
    let mut measured = HashMap::new();
    for &(slot, v, _) in &operands {
        let own = vector(format!("in{slot}_rank"));
        let s = op(patch, "Shape", vec![Wire::Old(v)], &format!("in{slot}_shape"), own);
        let r = op(patch, "Size", vec![s], &format!("in{slot}_rank"), i64_scalar.clone());
        measured.insert(slot, (s, r));
    }
    let (rank, moved): (Wire, Vec<usize>) = match uni {
        Some((to, from)) => (measured.get(&to).ok_or("the stretched-to input is absent")?.1, vec![from]),
        None => {
            let all = operands.iter().map(|o| measured[&o.0].1).collect();
            (op(patch, "Max", all, "rank", i64_scalar.clone()), operands.iter().map(|o| o.0).collect())
        }
    };
    let (zero, one) = (scalar(patch, "zero", 0), scalar(patch, "one", 1));
    let mut padded = HashMap::new();
    for &(slot, v, dtype) in operands.iter().filter(|o| moved.contains(&o.0)) {
        let pad = op(patch, "Sub", vec![rank, measured[&slot].1], &format!("in{slot}_pad"), i64_scalar.clone());
        let axes = op(patch, "Range", vec![zero, pad, one], &format!("in{slot}_axes"), vector(format!("in{slot}_pad")));
        let ty = Some(Type::tensor(Some(dtype), None));
        let u = op(patch, "Unsqueeze", vec![Wire::Old(v), axes], &format!("in{slot}_unsqueezed"), ty);
        padded.insert(slot, u);
    }
    let target = match uni {
        Some((to, _)) => measured[&to].0,
        None => {
            let mut acc: Option<Wire> = None;
            let mut ones: Option<Wire> = None;
            for &(slot, _, _) in &operands {
                let s = op(patch, "Shape", vec![padded[&slot]], &format!("in{slot}_padded_shape"), i64_vec.clone());
                acc = Some(match acc {
                    None => s,
                    Some(a) => {
                        let bool_vec = Some(Type::tensor(Some(DType::Bool), Some(vec![len.clone()])));
                        let ones = ones.get_or_insert_with(|| {
                            let axis = patch.ints(at, &name("rank_axes"), &[0]);
                            let len = op(patch, "Unsqueeze", vec![rank, axis], "rank_vector", i64s(1));
                            let value =
                                Attribute::new("value", AttrValue::Tensor(crate::ir::Tensor::i64s("value", &[1])));
                            patch.node(at, "ConstantOfShape", vec![len], vec![value], &name("ones"), i64_vec.clone())
                        });
                        let is_one = op(patch, "Equal", vec![a, *ones], &format!("in{slot}_is_one"), bool_vec);
                        op(patch, "Where", vec![is_one, s, a], &format!("bcast_shape{slot}"), i64_vec.clone())
                    }
                });
            }
            acc.ok_or("the node has no operand")?
        }
    };
    // Each expanded operand has the output's shape: declared so where it is known, so that the
    // nodes after this one are inferred as before.
    let out_shape = node.outputs.first().copied().flatten().and_then(|v| inf.shape(v)).cloned();
    for &(slot, _, dtype) in operands.iter().filter(|o| moved.contains(&o.0)) {
        let ty = Some(Type::tensor(Some(dtype), out_shape.clone()));
        let e = op(patch, "Expand", vec![padded[&slot], target], &format!("in{slot}_expanded"), ty);
        patch.rewires.push((n, slot, e));
    }
    Ok(true)
}

/// The axes `Unsqueeze` inserts to bring a rank-`rank` operand to rank `r` by numpy's rule:
/// the leading ones.
pub(super) fn leading(r: usize, rank: usize) -> Option<Vec<i64>> {
    (rank <= r).then(|| (0..(r - rank) as i64).collect())
}

/// Where one size of a target shape comes from at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    Const(i64),
    /// Axis `axis` of operand `slot`'s own shape.
    Dim {
        slot: usize,
        axis: usize,
    },
    /// Axis `axis` of the broadcast of all operands' shapes, computed in the graph.
    Bcast(usize),
}

/// How an operand is stretched to the output's shape.
enum Stretch {
    /// `Expand` to a shape assembled from these sizes.
    Expand(Vec<Src>),
    /// `Tile` by these static repeats.
    TileStatic(Vec<i64>),
    /// `Tile` by `target - shape + 1` at run time, the target assembled from these sizes.
    TileRuntime(Vec<Src>),
}

/// One operand to rewrite: its slot, value and element type, the axes to unsqueeze, its shape
/// after that, and the stretch (if the unsqueezed shape still differs from the output's).
struct Step {
    slot: usize,
    v: ValueId,
    dtype: Option<DType>,
    axes: Vec<i64>,
    placed: Shape,
    stretch: Option<Stretch>,
}

/// A family node being made explicit: its output shape and its operands.
pub(super) struct Site<'a> {
    model: &'a Model,
    n: NodeId,
    at: At,
    base: String,
    opset: i64,
    /// The output's inferred shape.
    out: Shape,
    /// The output's shape as declared for inserted tensors: unknown sizes get fresh symbols.
    decl: Shape,
    /// Each present input: slot, value, shape, element type.
    operands: Vec<(usize, ValueId, Shape, Option<DType>)>,
    /// An operand whose shape is the output's by the op's rule (PRelu's X, legacy A).
    exact: Option<usize>,
    /// Each operand made explicit so far, by slot: itself at the output's rank.
    full: HashMap<usize, Wire>,
}

impl<'a> Site<'a> {
    /// Reads the node's shapes from `inf`; fails when a rank or element type is unknown.
    pub(super) fn new(
        patch: &Patch,
        model: &'a Model,
        inf: &Inference,
        n: NodeId,
        exact: Option<usize>,
    ) -> Result<Site<'a>, String> {
        let node = model.node(n);
        let out_v = node.outputs.first().copied().flatten().ok_or("the node has no output")?;
        unreached(inf, out_v)?;
        let out = inf.shape(out_v).ok_or("the output's rank is unknown")?.clone();
        let base = patch.base_name(model, n);
        let mut operands = Vec::new();
        for (slot, v) in node.inputs.iter().enumerate() {
            let Some(v) = v else { continue };
            let ty = inf.ty(*v);
            let shape =
                ty.and_then(Type::shape).ok_or_else(|| format!("the rank of '{}' is unknown", model.name(*v)))?;
            operands.push((slot, *v, shape.clone(), ty.and_then(Type::dtype)));
        }
        let decl = out
            .iter()
            .enumerate()
            .map(|(k, d)| match d {
                Dim::Unknown => Dim::sym(&format!("{base}_d{k}")),
                d => d.clone(),
            })
            .collect();
        Ok(Site {
            model,
            n,
            at: At::node(model, n),
            base,
            opset: model.opset_or_default(&node.domain),
            out,
            decl,
            operands,
            exact,
            full: HashMap::new(),
        })
    }

    fn operand(&self, slot: usize) -> Option<&(usize, ValueId, Shape, Option<DType>)> {
        self.operands.iter().find(|o| o.0 == slot)
    }

    /// Makes operands `slots` explicit, `axes(r, rank)` naming the axes that bring an operand
    /// of rank `rank` to the output's rank `r`. Gives whether anything changed.
    pub(super) fn run(
        mut self,
        patch: &mut Patch,
        slots: &[usize],
        axes: impl Fn(usize, usize) -> Option<Vec<i64>>,
    ) -> Result<bool, String> {
        let r = self.out.len();
        let mut steps = Vec::new();
        for &slot in slots {
            let Some(&(_, v, ref shape, dtype)) = self.operand(slot) else { continue };
            if same_shape(shape, &self.out) {
                continue;
            }
            if dtype.is_none() {
                return Err(format!("the element type of '{}' is unknown", self.model.name(v)));
            }
            let ax = axes(r, shape.len()).ok_or_else(|| {
                format!("'{}' has rank {}, more than the output's {r}", self.model.name(v), shape.len())
            })?;
            let placed = crate::shape::in_dim(shape, r, &complement(r, &ax))
                .map_err(|_| format!("'{}' cannot be placed in rank {r}", self.model.name(v)))?;
            let stretch = if same_shape(&placed, &self.out) { None } else { Some(self.stretch(&placed)?) };
            steps.push(Step { slot, v, dtype, axes: ax, placed, stretch });
        }
        if steps.is_empty() {
            return Ok(false);
        }
        if steps.iter().any(|s| !s.axes.is_empty()) && self.opset < 1 {
            return Err("Unsqueeze needs opset 1".into());
        }
        // Unsqueeze every operand first, so the run-time broadcast shape (if any) can use them.
        for step in &steps {
            let wire = self.unsqueeze(patch, step);
            self.full.insert(step.slot, wire);
        }
        for step in &steps {
            let wire = self.emit_stretch(patch, self.full[&step.slot], step);
            patch.rewires.push((self.n, step.slot, wire));
        }
        Ok(true)
    }

    /// Plans how an operand whose shape after unsqueezing is `placed` reaches the output's.
    fn stretch(&self, placed: &[Dim]) -> Result<Stretch, String> {
        let r = self.out.len();
        if self.opset >= 8 {
            let piece = |k: usize| self.source(k).or((self.opset >= 9).then_some(Src::Bcast(k)));
            let pieces: Option<Vec<Src>> =
                (0..r).map(|k| if same(&placed[k], &self.out[k]) { Some(Src::Const(1)) } else { piece(k) }).collect();
            // A size folded at run time is one inference cannot name: every operand then
            // expands to the whole output shape, one vector for all, so that the operands are
            // seen to have one shape (`expanded_alike`) when the result is expanded again.
            let pieces = match pieces {
                Some(p) if p.iter().any(|x| matches!(x, Src::Bcast(_))) => (0..r).map(piece).collect(),
                other => other,
            };
            return pieces.map(Stretch::Expand).ok_or_else(|| {
                "a symbolic size needs a run-time broadcast of shapes, which needs opset 9 (Where)".to_string()
            });
        }
        if self.opset < 6 {
            return Err(format!("Tile with a repeats input needs opset 6, the model imports {}", self.opset));
        }
        let fixed: Option<Vec<i64>> = (0..r)
            .map(|k| match (&placed[k], &self.out[k]) {
                (a, b) if same(a, b) => Some(1),
                (Dim::Known(1), Dim::Known(n)) => Some(*n),
                _ => None,
            })
            .collect();
        if let Some(reps) = fixed {
            return Ok(Stretch::TileStatic(reps));
        }
        let target: Option<Vec<Src>> = (0..r).map(|k| self.source(k)).collect();
        target.map(Stretch::TileRuntime).ok_or_else(|| "a size of the output is unknown before opset 8".to_string())
    }

    /// Where output size `k` can be read at run time without computing a broadcast: a known
    /// size, the exact operand, or an operand holding the same symbol (at the same axis first).
    fn source(&self, k: usize) -> Option<Src> {
        let (r, want) = (self.out.len(), &self.out[k]);
        if let Dim::Known(n) = want {
            return Some(Src::Const(*n));
        }
        if let Some(slot) = self.exact {
            let axis = (k + self.operand(slot)?.2.len()).checked_sub(r)?;
            return Some(Src::Dim { slot, axis });
        }
        if *want == Dim::Unknown {
            return None;
        }
        let aligned = self.operands.iter().find_map(|(slot, _, shape, _)| {
            let axis = (k + shape.len()).checked_sub(r)?;
            (shape.get(axis) == Some(want)).then_some(Src::Dim { slot: *slot, axis })
        });
        aligned.or_else(|| {
            self.operands.iter().find_map(|(slot, _, shape, _)| {
                shape.iter().position(|d| d == want).map(|axis| Src::Dim { slot: *slot, axis })
            })
        })
    }

    fn name(&self, what: &str) -> String {
        format!("{}_{what}", self.base)
    }

    /// A node `op` without attributes at the site, its output named after `what`.
    fn op(&self, patch: &mut Patch, op: &'static str, inputs: Vec<Wire>, what: &str, ty: Option<Type>) -> Wire {
        patch.node(self.at, op, inputs, vec![], &self.name(what), ty)
    }

    /// The step's operand at the output's rank: unsqueezed where it gains axes.
    fn unsqueeze(&self, patch: &mut Patch, step: &Step) -> Wire {
        let (x, slot, axes) = (Wire::Old(step.v), step.slot, &step.axes);
        if axes.is_empty() {
            return x;
        }
        let ty = Some(Type::tensor(step.dtype, Some(step.placed.clone())));
        let what = format!("in{slot}_unsqueezed");
        if self.opset >= 13 {
            let a = patch.ints(self.at, &self.name(&format!("in{slot}_axes")), axes);
            self.op(patch, "Unsqueeze", vec![x, a], &what, ty)
        } else {
            let attr = Attribute::new("axes", AttrValue::Ints(axes.to_vec()));
            patch.node(self.at, "Unsqueeze", vec![x], vec![attr], &self.name(&what), ty)
        }
    }

    /// The step's operand `x` (unsqueezed) stretched to the output's shape, where it needs to be.
    fn emit_stretch(&self, patch: &mut Patch, x: Wire, step: &Step) -> Wire {
        let Some(stretch) = &step.stretch else { return x };
        let (slot, ty) = (step.slot, Some(Type::tensor(step.dtype, Some(self.decl.clone()))));
        let out = format!("in{slot}_expanded");
        match stretch {
            Stretch::Expand(pieces) => {
                let t = self.vector(patch, pieces, &format!("in{slot}_target"));
                self.op(patch, "Expand", vec![x, t], &out, ty)
            }
            Stretch::TileStatic(reps) => {
                let t = patch.ints(self.at, &self.name(&format!("in{slot}_repeats")), reps);
                self.op(patch, "Tile", vec![x, t], &out, ty)
            }
            Stretch::TileRuntime(pieces) => {
                let r = self.out.len();
                let target = self.vector(patch, pieces, &format!("in{slot}_target"));
                let have = self.shape_of(patch, x, &format!("in{slot}_shape"), r);
                let vec_ty = i64s(r);
                let diff = self.op(patch, "Sub", vec![target, have], &format!("in{slot}_diff"), vec_ty.clone());
                let ones = self.ones(patch);
                let reps = self.op(patch, "Add", vec![diff, ones], &format!("in{slot}_repeats"), vec_ty);
                self.op(patch, "Tile", vec![x, reps], &out, ty)
            }
        }
    }

    /// A vector of 1s as long as the output's rank.
    fn ones(&self, patch: &mut Patch) -> Wire {
        patch.ints(self.at, &self.name("ones"), &vec![1; self.out.len()])
    }

    /// `Shape(x)` for a rank-`rank` tensor.
    fn shape_of(&self, patch: &mut Patch, x: Wire, what: &str, rank: usize) -> Wire {
        self.op(patch, "Shape", vec![x], what, i64s(rank))
    }

    /// The shape all operands broadcast to, computed in the graph: a fold of
    /// `Where(Equal(acc, 1), s, acc)` over the operands' shapes at the output's rank. Unlike
    /// an element-wise `Max` it is right when a size is 0.
    fn bcast(&self, patch: &mut Patch) -> Wire {
        let r = self.out.len();
        let operands: Vec<(usize, ValueId, usize)> = self.operands.iter().map(|o| (o.0, o.1, o.2.len())).collect();
        let mut acc: Option<Wire> = None;
        for (slot, v, rank) in operands {
            let full = match self.full.get(&slot) {
                Some(w) => *w,
                None if rank == r => Wire::Old(v),
                // Operands of lower rank are always unsqueezed first (their shape differs).
                None => continue,
            };
            let s = self.shape_of(patch, full, &format!("in{slot}_shape"), r);
            acc = Some(match acc {
                None => s,
                Some(a) => {
                    let ones = self.ones(patch);
                    let bools = Some(Type::tensor(Some(DType::Bool), Some(vec![Dim::Known(r as i64)])));
                    let is_one = self.op(patch, "Equal", vec![a, ones], &format!("in{slot}_is_one"), bools);
                    self.op(patch, "Where", vec![is_one, s, a], &format!("bcast_shape{slot}"), i64s(r))
                }
            });
        }
        acc.unwrap_or_else(|| patch.ints(self.at, &self.name("bcast_shape"), &vec![1; r]))
    }

    /// A 1-D int64 tensor of the sizes `pieces`. Sizes read from operands are symbols (or
    /// known), so the same sizes anywhere in the graph give the same vector, made once there
    /// ([`Patch::sizes`]); a vector that folds the operands' shapes at run time is the node's
    /// own.
    fn vector(&self, patch: &mut Patch, pieces: &[Src], what: &str) -> Wire {
        let read: Option<Vec<Dim>> = pieces
            .iter()
            .map(|p| match *p {
                Src::Const(c) => Some(Dim::Known(c)),
                Src::Dim { slot, axis } => self.operand(slot)?.2.get(axis).filter(|d| **d != Dim::Unknown).cloned(),
                Src::Bcast(_) => None,
            })
            .collect();
        match read {
            Some(sizes) => patch.sizes(self.at, sizes, |patch| self.assemble(patch, pieces, what)),
            None => self.assemble(patch, pieces, what),
        }
    }

    /// [`Site::vector`] built: constants, `Gather`s from `Shape`s, joined by `Concat` when
    /// there is more than one run.
    fn assemble(&self, patch: &mut Patch, pieces: &[Src], what: &str) -> Wire {
        // Runs of constants, of axes of one operand, and of axes of the broadcast shape.
        enum Run {
            Const(Vec<i64>),
            Dims(usize, Vec<i64>),
            Bcast(Vec<i64>),
        }
        let mut runs: Vec<Run> = Vec::new();
        for p in pieces {
            match (runs.last_mut(), *p) {
                (Some(Run::Const(v)), Src::Const(c)) => v.push(c),
                (Some(Run::Dims(s, v)), Src::Dim { slot, axis }) if *s == slot => v.push(axis as i64),
                (Some(Run::Bcast(v)), Src::Bcast(k)) => v.push(k as i64),
                (_, Src::Const(c)) => runs.push(Run::Const(vec![c])),
                (_, Src::Dim { slot, axis }) => runs.push(Run::Dims(slot, vec![axis as i64])),
                (_, Src::Bcast(k)) => runs.push(Run::Bcast(vec![k as i64])),
            }
        }
        let many = runs.len() > 1;
        let mut parts = Vec::new();
        for (i, run) in runs.into_iter().enumerate() {
            let part = if many { format!("{what}{i}") } else { what.to_string() };
            let wire = match run {
                Run::Const(v) => patch.ints(self.at, &self.name(&part), &v),
                Run::Dims(slot, axes) => {
                    let Some(&(_, v, ref shape, _)) = self.operand(slot) else { continue };
                    let s = self.shape_of(patch, Wire::Old(v), &format!("in{slot}_shape"), shape.len());
                    self.gather(patch, s, shape.len(), &axes, &part)
                }
                Run::Bcast(axes) => {
                    let b = self.bcast(patch);
                    self.gather(patch, b, self.out.len(), &axes, &part)
                }
            };
            parts.push(wire);
        }
        match parts.as_slice() {
            [one] => *one,
            _ => {
                let attr = Attribute::new("axis", AttrValue::Int(0));
                let ty = i64s(pieces.len());
                patch.node(self.at, "Concat", parts, vec![attr], &self.name(what), ty)
            }
        }
    }

    /// Elements `axes` of the rank-`len` vector `v` (`v` itself when that is all of it).
    fn gather(&self, patch: &mut Patch, v: Wire, len: usize, axes: &[i64], part: &str) -> Wire {
        if axes.iter().copied().eq(0..len as i64) {
            return v;
        }
        let idx = patch.ints(self.at, &self.name(&format!("{part}_indices")), axes);
        let attr = Attribute::new("axis", AttrValue::Int(0));
        patch.node(self.at, "Gather", vec![v, idx], vec![attr], &self.name(part), i64s(axes.len()))
    }
}

/// The type of a 1-D int64 tensor of `len` elements.
fn i64s(len: usize) -> Option<Type> {
    Some(Type::tensor(Some(DType::I64), Some(vec![Dim::Known(len as i64)])))
}

/// The axes of `0..r` not in `axes`: where an operand's own dims land after unsqueezing.
fn complement(r: usize, axes: &[i64]) -> Vec<i64> {
    (0..r as i64).filter(|a| !axes.contains(a)).collect()
}

//! Shape and type inference: `Model` -> a side table of types (and shape-tensor contents) keyed
//! by `ValueId`, plus diagnostics and the side conditions symbolic broadcasting assumed.
//! Never mutates the graph and never stops at the first problem.

use std::collections::HashMap;

use crate::diag::{Diagnostic, Severity};
use crate::dtype::DType;
use crate::ir::{Def, GraphId, Model, NodeId, ValueId};
use crate::ops::{self, Ctx, Out, RuleError, ShapeRule, TypeRule};
use crate::shape::{self, render, Assumption, BroadcastError, Dim, Shape, Type};

/// Settings of one inference run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Values for symbolic dims (`--dim NAME=VALUE`), applied before inference.
    pub bindings: HashMap<String, i64>,
    /// Known contents of small integer graph inputs of the main graph (a shape fed at run
    /// time), used as shape-tensor values.
    pub values: HashMap<String, Vec<i64>>,
}

/// A side condition symbolic broadcasting assumed, with the node that needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    pub assumption: Assumption,
    pub graph: String,
    pub node: String,
    pub op_type: String,
    pub axis: usize,
}

/// The result of inference: a type per value, the contents of small integer tensors, the
/// findings and the side conditions.
#[derive(Clone, Debug, Default)]
pub struct Inference {
    types: Vec<Option<Type>>,
    values: Vec<Option<Vec<Dim>>>,
    pub diagnostics: Vec<Diagnostic>,
    pub constraints: Vec<Constraint>,
}

impl Inference {
    /// The value's inferred type.
    pub fn ty(&self, v: ValueId) -> Option<&Type> {
        self.types.get(v.index()).and_then(Option::as_ref)
    }

    /// The value's inferred shape, when its rank is known.
    pub fn shape(&self, v: ValueId) -> Option<&Shape> {
        self.ty(v).and_then(Type::shape)
    }

    /// The contents of a small integer tensor, when known or symbolic.
    pub fn value(&self, v: ValueId) -> Option<&[Dim]> {
        self.values.get(v.index()).and_then(Option::as_deref)
    }

    /// True when some finding is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }
}

/// The default-domain opset assumed when a model imports none.
const DEFAULT_OPSET: i64 = 21;

/// Infers every value's type in every graph of `model`.
pub fn infer(model: &Model, options: &Options) -> Inference {
    let mut cx = Infer {
        model,
        options,
        out: Inference {
            types: vec![None; model.values.len()],
            values: vec![None; model.values.len()],
            ..Inference::default()
        },
    };
    if model.opset("").is_none() && !model.opsets.iter().any(|o| !o.domain.is_empty()) {
        let msg = format!("the model imports no opset; assuming the default domain at version {DEFAULT_OPSET}");
        cx.out.diagnostics.push(Diagnostic::new(Severity::Warning, "no-opset", "main", msg));
    }
    cx.out.diagnostics.extend(crate::validate::validate(model));
    cx.graph(Model::MAIN);
    cx.out
}

struct Infer<'a> {
    model: &'a Model,
    options: &'a Options,
    out: Inference,
}

impl Infer<'_> {
    fn bind(&self, ty: &Type) -> Type {
        match ty {
            Type::Tensor { dtype, shape } => Type::Tensor {
                dtype: *dtype,
                shape: shape.as_ref().map(|s| {
                    s.iter()
                        .map(|d| match d {
                            Dim::Sym(sym) => match self.options.bindings.get(sym.as_str()) {
                                Some(v) => Dim::Known(*v),
                                None => d.clone(),
                            },
                            _ => d.clone(),
                        })
                        .collect()
                }),
            },
            Type::Sequence(e) => Type::Sequence(e.as_ref().map(|t| Box::new(self.bind(t)))),
            Type::Optional(e) => Type::Optional(e.as_ref().map(|t| Box::new(self.bind(t)))),
            Type::Other => Type::Other,
        }
    }

    fn set(&mut self, v: ValueId, ty: Option<Type>, value: Option<Vec<Dim>>) {
        self.out.types[v.index()] = ty;
        self.out.values[v.index()] = value;
    }

    fn graph(&mut self, g: GraphId) {
        let model = self.model;
        let graph = model.graph(g);
        for t in &graph.initializers {
            if let Some(v) = graph.scope.get(&t.name) {
                let dims = t.dims.iter().map(|d| if *d >= 0 { Dim::Known(*d) } else { Dim::Unknown }).collect();
                let value = t.ints(ops::MAX_TRACKED).map(|v| v.into_iter().map(Dim::Known).collect());
                self.set(*v, Some(Type::tensor(t.dtype, Some(dims))), value);
            }
        }
        for input in &graph.inputs {
            if let Some(ty) = &input.ty {
                let ty = self.bind(ty);
                let fed = (g == Model::MAIN).then(|| self.options.values.get(model.name(input.value))).flatten();
                let value = match fed {
                    Some(v) => Some(v.iter().map(|x| Dim::Known(*x)).collect()),
                    None => self.out.values[input.value.index()].take(),
                };
                self.set(input.value, Some(ty), value);
            }
        }
        let declared: HashMap<ValueId, (&Type, bool)> = graph
            .value_info
            .iter()
            .map(|vi| (vi, false))
            .chain(graph.outputs.iter().map(|vi| (vi, true)))
            .filter_map(|(vi, is_output)| vi.ty.as_ref().map(|t| (vi.value, (t, is_output))))
            .collect();

        let (order, cyclic) = model.topo_order(g);
        if !cyclic.is_empty() {
            let names: Vec<String> = cyclic.iter().map(|n| model.node_label(*n)).collect();
            let mut d = Diagnostic::new(
                Severity::Error,
                "graph-cycle",
                &graph.path,
                format!("nodes form a cycle: {}", names.join(", ")),
            );
            d.node = names.first().cloned();
            self.out.diagnostics.push(d);
        }
        for n in order {
            self.node(n, &declared);
        }
        // Graph outputs must be defined.
        for o in &graph.outputs {
            if model.value(o.value).def == Def::Undefined {
                let msg =
                    format!("graph output '{}' is not defined by any node, input or initializer", model.name(o.value));
                self.out.diagnostics.push(Diagnostic::new(Severity::Error, "undefined-output", &graph.path, msg));
            }
        }
    }

    fn diag(&self, n: NodeId, severity: Severity, code: &'static str, message: String) -> Diagnostic {
        let node = self.model.node(n);
        let mut d = Diagnostic::new(severity, code, &self.model.graph(node.graph).path, message);
        d.node = Some(self.model.node_label(n));
        d.op_type = Some(node.op_type.clone());
        d.inputs = node
            .inputs
            .iter()
            .map(|v| match v {
                Some(v) => (self.model.name(*v).to_string(), self.render(*v)),
                None => (String::new(), "(absent)".into()),
            })
            .collect();
        d
    }

    fn render(&self, v: ValueId) -> String {
        match self.out.ty(v) {
            Some(Type::Tensor { dtype, shape }) => {
                let dt = dtype.map(DType::name).unwrap_or("?");
                match shape {
                    Some(s) => format!("{dt}{}", render(s)),
                    None => format!("{dt}[..]"),
                }
            }
            Some(Type::Sequence(_)) => "sequence".into(),
            Some(Type::Optional(_)) => "optional".into(),
            Some(Type::Other) => "other".into(),
            None => "?".into(),
        }
    }

    fn node(&mut self, n: NodeId, declared: &HashMap<ValueId, (&Type, bool)>) {
        let model = self.model;
        let node = model.node(n);
        for v in node.inputs.iter().flatten() {
            if model.value(*v).def == Def::Undefined {
                let msg =
                    format!("input '{}' is not defined by any node, input or initializer in scope", model.name(*v));
                let d = self.diag(n, Severity::Error, "undefined-input", msg);
                self.out.diagnostics.push(d);
            }
        }
        for v in node.outputs.iter().flatten() {
            if model.value(*v).shadows.is_some() {
                let msg = format!("output '{}' is already defined earlier in this graph", model.name(*v));
                let d = self.diag(n, Severity::Error, "duplicate-output", msg);
                self.out.diagnostics.push(d);
            }
        }
        for (_, sub) in node.subgraphs() {
            self.subgraph(n, sub);
        }

        let opset = model.opset(&node.domain).unwrap_or(if node.domain.is_empty() { DEFAULT_OPSET } else { 1 });
        let result = match node.op_type.as_str() {
            "If" if node.domain.is_empty() => Ok(self.if_outputs(n)),
            _ => match ops::lookup(&node.domain, &node.op_type, opset) {
                Some(def) => {
                    let ctx = Ctx {
                        model,
                        node,
                        opset,
                        inputs: node.inputs.iter().map(|v| v.and_then(|v| self.out.ty(v))).collect(),
                        values: node.inputs.iter().map(|v| v.and_then(|v| self.out.value(v))).collect(),
                    };
                    apply(def, &ctx)
                }
                None => {
                    let domain = if node.domain.is_empty() { "ai.onnx" } else { &node.domain };
                    let msg = if ops::exists(&node.domain, &node.op_type) {
                        format!("{} does not exist in {domain} opset {opset}; its outputs are unknown", node.op_type)
                    } else {
                        format!("no shape rule for {domain}.{}; its outputs are unknown", node.op_type)
                    };
                    let d = self.diag(n, Severity::Warning, "unknown-op", msg);
                    self.out.diagnostics.push(d);
                    Ok(Out::default())
                }
            },
        };
        let out = match result {
            Ok(out) => out,
            Err(e) => {
                let d = self.rule_error(n, e);
                self.out.diagnostics.push(d);
                Out::default()
            }
        };
        let graph = model.graph(node.graph).path.clone();
        for (axis, assumption) in out.assumptions {
            let c = Constraint {
                assumption,
                graph: graph.clone(),
                node: model.node_label(n),
                op_type: node.op_type.clone(),
                axis,
            };
            if !self.out.constraints.contains(&c) {
                self.out.constraints.push(c);
            }
        }
        let mut types = out.types.into_iter();
        let mut values = out.values.into_iter();
        for v in node.outputs.iter() {
            let (ty, value) = (types.next().flatten(), values.next().flatten());
            let Some(v) = v else { continue };
            let ty = match declared.get(v) {
                Some((decl, is_output)) => self.reconcile(n, *v, ty, &self.bind(decl), *is_output),
                None => ty,
            };
            self.set(*v, ty, value);
        }
    }

    /// Merges a declared type into the inferred one (declared dims fill unknown ones) and
    /// reports where they contradict: an error for graph outputs, a warning for value_info.
    fn reconcile(
        &mut self,
        n: NodeId,
        v: ValueId,
        inferred: Option<Type>,
        declared: &Type,
        is_output: bool,
    ) -> Option<Type> {
        let Some(inferred) = inferred else { return Some(declared.clone()) };
        let (Type::Tensor { dtype: id, shape: is }, Type::Tensor { dtype: dd, shape: ds }) = (&inferred, declared)
        else {
            return Some(inferred);
        };
        let mut clash = None;
        if let (Some(a), Some(b)) = (id, dd) {
            if a != b {
                clash = Some(format!("element type {b} is declared, {a} is inferred"));
            }
        }
        let shape = match (is, ds) {
            (Some(a), Some(b)) if a.len() != b.len() => {
                clash.get_or_insert(format!("rank {} is declared, {} is inferred", b.len(), a.len()));
                Some(a.clone())
            }
            (Some(a), Some(b)) => Some(
                a.iter()
                    .zip(b)
                    .enumerate()
                    .map(|(axis, (x, y))| match (x, y) {
                        (Dim::Known(p), Dim::Known(q)) if p != q => {
                            clash.get_or_insert(format!("size {q} is declared at axis {axis}, {p} is inferred"));
                            x.clone()
                        }
                        (Dim::Unknown, _) => y.clone(),
                        (Dim::Sym(_), Dim::Known(_)) => y.clone(),
                        _ => x.clone(),
                    })
                    .collect(),
            ),
            (None, b) => b.clone(),
            (a, None) => a.clone(),
        };
        if let Some(what) = clash {
            let (severity, kind) =
                if is_output { (Severity::Error, "graph output") } else { (Severity::Warning, "value_info") };
            let msg = format!("{kind} '{}' contradicts inference: {what}", self.model.name(v));
            let d = self.diag(n, severity, "declared-shape-mismatch", msg);
            self.out.diagnostics.push(d);
        }
        Some(Type::Tensor { dtype: id.or(*dd), shape })
    }

    fn rule_error(&self, n: NodeId, e: RuleError) -> Diagnostic {
        let model = self.model;
        let node = model.node(n);
        let name =
            |i: usize| node.inputs.get(i).copied().flatten().map(|v| model.name(v).to_string()).unwrap_or_default();
        match e {
            RuleError::Broadcast(BroadcastError::Clash { axis, sizes }) => {
                let parts: Vec<String> = sizes.iter().map(|(i, d)| format!("'{}' has size {d}", name(*i))).collect();
                let msg = format!("inputs do not broadcast: at axis {axis}, {}", parts.join(" and "));
                let mut d = self.diag(n, Severity::Error, "broadcast-incompatible", msg);
                d.axis = Some(axis);
                d.sizes = sizes.into_iter().map(|(i, s)| (i, s.to_string())).collect();
                d
            }
            RuleError::Broadcast(BroadcastError::Rank { input, rank, target }) => {
                let msg =
                    format!("'{}' has rank {rank}, more than the rank {target} it must broadcast to", name(input));
                self.diag(n, Severity::Error, "broadcast-incompatible", msg)
            }
            RuleError::Broadcast(BroadcastError::BadDims { dims, rank }) => {
                let msg = format!(
                    "the broadcast places '{}' at axes {dims:?}, outside the {rank} axes of '{}'",
                    name(1),
                    name(0)
                );
                self.diag(n, Severity::Error, "broadcast-incompatible", msg)
            }
            RuleError::Invalid(msg) => self.diag(n, Severity::Error, "invalid-node", msg),
        }
    }

    fn subgraph(&mut self, n: NodeId, sub: GraphId) {
        let model = self.model;
        let node = model.node(n);
        let g = model.graph(sub);
        // Loop bodies take (iteration number, condition, loop-carried values...).
        if node.op_type == "Loop" {
            for (i, input) in g.inputs.iter().enumerate() {
                if input.ty.is_some() {
                    continue;
                }
                let ty = match i {
                    0 => Some(Type::tensor(Some(DType::I64), Some(vec![]))),
                    1 => Some(Type::tensor(Some(DType::Bool), Some(vec![]))),
                    _ => node.inputs.get(i).copied().flatten().and_then(|v| self.out.ty(v).cloned()),
                };
                self.set(input.value, ty, None);
            }
        }
        self.graph(sub);
    }

    /// If's outputs: each branch's output, merged dim by dim.
    fn if_outputs(&self, n: NodeId) -> Out {
        let model = self.model;
        let node = model.node(n);
        let branch = |name: &str| match node.attr(name) {
            Some(crate::ir::AttrValue::Graph(g)) => Some(*g),
            _ => None,
        };
        let (Some(then), Some(other)) = (branch("then_branch"), branch("else_branch")) else {
            return Out::default();
        };
        let outs = |g: GraphId| -> Vec<Option<Type>> {
            model.graph(g).outputs.iter().map(|o| self.out.ty(o.value).cloned()).collect()
        };
        let types = outs(then).into_iter().zip(outs(other)).map(|(a, b)| merge(a, b)).collect();
        Out { types, ..Out::default() }
    }
}

/// The type that covers both `a` and `b`: what they agree on.
fn merge(a: Option<Type>, b: Option<Type>) -> Option<Type> {
    match (a?, b?) {
        (Type::Tensor { dtype: da, shape: sa }, Type::Tensor { dtype: db, shape: sb }) => {
            let dtype = if da == db { da } else { None };
            let shape = match (sa, sb) {
                (Some(x), Some(y)) if x.len() == y.len() => {
                    Some(x.into_iter().zip(y).map(|(p, q)| if p == q { p } else { Dim::Unknown }).collect())
                }
                _ => None,
            };
            Some(Type::Tensor { dtype, shape })
        }
        (x, y) if x == y => Some(x),
        _ => None,
    }
}

/// Applies a row of the op table to a node.
pub fn apply(def: &ops::OpDef, c: &Ctx) -> Result<Out, RuleError> {
    let present: Vec<usize> = (0..c.inputs.len()).filter(|i| c.node.inputs[*i].is_some()).collect();
    let shapes: Option<Vec<&[Dim]>> = present.iter().map(|i| c.shape(*i)).collect();
    let mut out = match def.shape {
        ShapeRule::Multi => match shapes {
            Some(s) => {
                let b = shape::multi(&s).map_err(|e| renumber(e, &present))?;
                Out {
                    types: vec![Some(Type::tensor(None, Some(b.shape)))],
                    assumptions: b.assumptions,
                    ..Out::default()
                }
            }
            None => tensor_out(None),
        },
        ShapeRule::Equal => match shapes {
            Some(s) => tensor_out(Some(equal(&s).map_err(|e| renumber(e, &present))?)),
            None => tensor_out(None),
        },
        ShapeRule::Uni { to, from } => match (c.shape(to), c.shape(from)) {
            (Some(t), Some(f)) => {
                let b = shape::uni(t, f, from).map_err(RuleError::Broadcast)?;
                Out {
                    types: vec![Some(Type::tensor(None, Some(b.shape)))],
                    assumptions: b.assumptions,
                    ..Out::default()
                }
            }
            (t, _) => tensor_out(t.map(<[Dim]>::to_vec)),
        },
        ShapeRule::Legacy => match (c.shape(0), c.shape(1)) {
            (Some(a), Some(b)) if c.node.attr_int("broadcast").unwrap_or(0) != 0 => {
                let br = shape::legacy(a, b, c.node.attr_int("axis")).map_err(RuleError::Broadcast)?;
                Out {
                    types: vec![Some(Type::tensor(None, Some(br.shape)))],
                    assumptions: br.assumptions,
                    ..Out::default()
                }
            }
            (Some(a), Some(b)) => tensor_out(Some(equal(&[a, b]).map_err(RuleError::Broadcast)?)),
            (a, _) => tensor_out(a.map(<[Dim]>::to_vec)),
        },
        ShapeRule::Expand => {
            let target: Option<Vec<Dim>> = match (c.value(1), c.shape(1)) {
                (Some(v), _) => Some(v.to_vec()),
                (None, Some([Dim::Known(r)])) => Some(vec![Dim::Unknown; (*r).clamp(0, 1 << 16) as usize]),
                _ => None,
            };
            if let Some(bad) = target.iter().flatten().find(|d| matches!(d, Dim::Known(k) if *k < 0)) {
                return Err(RuleError::Invalid(format!("Expand's shape holds a negative size {bad}")));
            }
            match (c.shape(0), target) {
                (Some(x), Some(t)) => {
                    let b = shape::expand(x, &t).map_err(RuleError::Broadcast)?;
                    Out {
                        types: vec![Some(Type::tensor(None, Some(b.shape)))],
                        assumptions: b.assumptions,
                        ..Out::default()
                    }
                }
                _ => tensor_out(None),
            }
        }
        ShapeRule::SameAs(i) => tensor_out(c.shape(i).map(<[Dim]>::to_vec)),
        ShapeRule::Custom(f) => f(c)?,
    };
    let dtype = match def.ty {
        TypeRule::SameAs(i) => c.dtype(i),
        TypeRule::Fixed(d) => Some(d),
        TypeRule::AttrTo => c.node.attr_int("to").and_then(|t| i32::try_from(t).ok()).and_then(DType::from_onnx),
        TypeRule::Custom => return Ok(out),
    };
    for t in out.types.iter_mut().flatten() {
        if let Type::Tensor { dtype: d, .. } = t {
            *d = dtype;
        }
    }
    Ok(out)
}

fn tensor_out(shape: Option<Shape>) -> Out {
    Out { types: vec![Some(Type::tensor(None, shape))], ..Out::default() }
}

/// Maps input indices of a broadcast error from the present inputs back to node slots.
fn renumber(e: BroadcastError<Dim>, present: &[usize]) -> RuleError {
    RuleError::Broadcast(match e {
        BroadcastError::Clash { axis, sizes } => BroadcastError::Clash {
            axis,
            sizes: sizes.into_iter().map(|(i, d)| (present.get(i).copied().unwrap_or(i), d)).collect(),
        },
        other => other,
    })
}

/// The one shape all of `shapes` have (ops that take equal shapes only).
fn equal(shapes: &[&[Dim]]) -> Result<Shape, BroadcastError<Dim>> {
    let Some(first) = shapes.first() else { return Ok(Vec::new()) };
    let mut out: Shape = first.to_vec();
    for (i, s) in shapes.iter().enumerate().skip(1) {
        if s.len() != out.len() {
            return Err(BroadcastError::Rank { input: i, rank: s.len(), target: out.len() });
        }
        for (axis, (o, d)) in out.iter_mut().zip(s.iter()).enumerate() {
            match (&*o, d) {
                (Dim::Known(a), Dim::Known(b)) if a != b => {
                    return Err(BroadcastError::Clash { axis, sizes: vec![(0, o.clone()), (i, d.clone())] })
                }
                (Dim::Unknown, _) | (Dim::Sym(_), Dim::Known(_)) => *o = d.clone(),
                _ => {}
            }
        }
    }
    Ok(out)
}

//! Rewrites that keep a model's meaning: `annotate` (value_info for every tensor), `expand`
//! (every implicit broadcast made explicit, legacy `broadcast`/`axis` forms included) and
//! `implicit` (its inverse). Each plans a [`Patch`] from the model and one inference side
//! table, then applies it in one place (tract's `ModelPatch`).

pub mod annotate;
pub mod expand;
pub mod implicit;
mod legacy;

use std::collections::{HashMap, HashSet};

use crate::dtype::DType;
use crate::infer::Inference;
use crate::ir::{
    norm_domain, AttrValue, Attribute, Def, GraphId, IdMap, Model, Node, NodeId, Tensor, TensorData, ValueId, ValueInfo,
};
use crate::ops::{self, ShapeRule};
use crate::shape::{render, Assumption, Dim, Term, Type};
use crate::{Code, Diagnostic, Severity};

pub use annotate::{annotate, annotate_taking};
pub use expand::expand;
pub use implicit::implicit;

/// The rewrites the command line and the Python package run by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// [`annotate()`]: `value_info` for every tensor of every graph.
    Annotate,
    /// [`expand()`]: every implicit broadcast made explicit.
    Expand,
    /// [`implicit()`]: explicit broadcasts that implicit broadcasting makes redundant removed.
    Implicit,
}

/// What [`run`] did.
#[derive(Debug)]
pub struct Done {
    /// One line saying what changed: `3 value_info entries added`.
    pub summary: String,
    /// Declared types replaced (`fix_declared`) and broadcasts left as they were.
    pub warnings: Vec<Diagnostic>,
    /// The inference the pass started from (`annotate` has taken out the types it wrote).
    pub inference: Inference,
}

/// Infers `model` under `options` and runs `pass` on it, as the command line's `annotate`,
/// `expand` and `implicit` do.
///
/// ```
/// use onnx_bcast::rewrite::{run, Pass};
///
/// let mut model = onnx_bcast::io::load("models/nary_sum.onnx".as_ref())?;
/// let done = run(Pass::Expand, &mut model, &Default::default(), false)?.expect("no error findings");
/// // 7 Unsqueeze and Expand nodes, and the 7 constants they read.
/// assert_eq!(done.summary, "4 nodes made explicit with 14 nodes and constants added");
///
/// // A model whose broadcasts cannot work is not rewritten: its errors come back.
/// let mut broken = onnx_bcast::io::load("models/broken.onnx".as_ref())?;
/// let errors = run(Pass::Annotate, &mut broken, &Default::default(), false)?.unwrap_err();
/// assert_eq!(errors[0].code, onnx_bcast::Code::BroadcastIncompatible);
/// # Ok::<(), onnx_bcast::Error>(())
/// ```
///
/// With `fix_declared`, declared types that contradict inference are first replaced by the
/// inferred ones (a warning each) when they are the model's only errors. A model with error findings is not rewritten: they are
/// given back as `Ok(Err(errors))`. Symbols bound in `options` are replaced by their sizes in
/// the declared types of what `annotate` and `expand` write.
pub fn run(
    pass: Pass,
    model: &mut Model,
    options: &crate::infer::Options,
    fix_declared: bool,
) -> crate::Result<Result<Done, Vec<Diagnostic>>> {
    use crate::report::count;
    let mut inf = crate::infer::infer(model, options);
    let mut warnings = Vec::new();
    let mut errors = inf.diagnostics.iter().filter(|d| d.severity == Severity::Error);
    if fix_declared && inf.has_errors() && errors.all(|d| d.code == Code::DeclaredShapeMismatch) {
        warnings = self::fix_declared(model, &inf);
        inf = crate::infer::infer(model, options);
    }
    if inf.has_errors() {
        return Ok(Err(inf.diagnostics.into_iter().filter(|d| d.severity == Severity::Error).collect()));
    }
    let summary = match pass {
        Pass::Annotate => {
            let added = annotate_taking(model, &mut inf);
            format!("{} added", count(added, "value_info entry", "value_info entries"))
        }
        Pass::Expand => {
            let report = expand(model, &inf)?;
            warnings.extend(report.diagnostics);
            format!(
                "{} made explicit with {} added",
                count(report.rewritten, "node", "nodes"),
                count(report.added, "node or constant", "nodes and constants")
            )
        }
        Pass::Implicit => {
            let report = implicit(model, &inf)?;
            format!(
                "{} removed ({} that fed them)",
                count(report.removed, "explicit broadcast", "explicit broadcasts"),
                count(report.dead, "node or constant", "nodes and constants")
            )
        }
    };
    if pass != Pass::Implicit {
        bind_declared(model, &options.bindings);
    }
    Ok(Ok(Done { summary, warnings, inference: inf }))
}

/// A value a patch refers to: one already in the model, or the `i`th one the patch creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wire {
    Old(ValueId),
    New(usize),
}

/// Where a patch places new nodes: in `graph`, just before node `before`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct At {
    pub graph: GraphId,
    pub before: NodeId,
}

impl At {
    /// Just before node `n`, in its graph.
    pub(crate) fn node(model: &Model, n: NodeId) -> At {
        At { graph: model.node(n).graph, before: n }
    }
}

#[derive(Clone, Debug)]
struct NewValue {
    graph: GraphId,
    name: String,
    /// The type written to `value_info` (none for initializers).
    ty: Option<Type>,
}

#[derive(Clone, Debug)]
struct NewNode {
    /// The node it is placed before, in that node's graph.
    before: NodeId,
    op: &'static str,
    inputs: Vec<Wire>,
    output: usize,
    attrs: Vec<Attribute>,
    /// For a constant: its tensor, stored as an initializer (or a `Constant` node before IR
    /// version 4, where initializers must also be graph inputs).
    constant: Option<Tensor>,
}

/// Where a patch writes a type in a graph: the declared type of input or output `i`, or of
/// `value_info` entry `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    Input(usize),
    Output(usize),
    Info(usize),
}

/// Edits to a model, computed first and applied together by [`Patch::apply`]: new values,
/// new nodes placed before existing ones, constants, rewired inputs, dropped attributes,
/// removed nodes and declared types.
#[derive(Clone, Debug, Default)]
pub struct Patch {
    values: Vec<NewValue>,
    nodes: Vec<NewNode>,
    /// Inputs set: (node, slot, what it reads).
    rewires: Vec<(NodeId, usize, Wire)>,
    /// Attributes removed: (node, name).
    drop_attrs: Vec<(NodeId, &'static str)>,
    /// Nodes removed once their outputs' users are rewired (their outputs left unread), with
    /// the pure nodes and initializers that only fed them.
    remove: Vec<NodeId>,
    /// Types written for existing entries, each in its place in a graph.
    types: Vec<(GraphId, Place, Type)>,
    /// New `value_info` entries, by graph (room made for them ahead, then filled by
    /// `declare_new`).
    new_infos: Vec<(GraphId, Vec<ValueInfo>)>,
    names: HashSet<String, foldhash::fast::RandomState>,
    /// For each base `fresh` found taken, the next suffix to try: every smaller one is taken,
    /// so a model whose nodes share one name costs one probe per new name, not one per
    /// earlier name (5,000 nodes named alike took 41 s to `expand`).
    next_suffix: HashMap<String, u64, foldhash::fast::RandomState>,
    /// Each node's index in its graph's order, built the first time an unnamed node needs
    /// one for [`Patch::base_name`] (a search per node made `expand` quadratic).
    positions: std::cell::OnceCell<crate::ir::IdMap<NodeId, usize>>,
    /// Symbolic sizes as the model itself names them ([`declared_names`]), for the types
    /// written for new values.
    renames: HashMap<Term, Term>,
    /// Each node, int64 constant and shape vector made so far, by all that decides its
    /// output: asked for again in the same graph, it is not made twice (common
    /// subexpressions: a chain whose nodes all add `b` gets one `Unsqueeze` of `b` and one
    /// `axes` constant, not one each).
    made: HashMap<Made, Wire, foldhash::fast::RandomState>,
}

/// What decides a new node's output: its graph, op, inputs, integer attributes and declared
/// type; a constant's graph and int64 contents; a shape vector's graph and sizes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Made {
    Node { graph: GraphId, op: &'static str, inputs: Vec<Wire>, attrs: Vec<(String, Vec<i64>)>, ty: Option<Type> },
    Ints { graph: GraphId, values: Vec<i64> },
    Sizes { graph: GraphId, sizes: Vec<Dim> },
}

/// Our name for a symbolic size mapped to the model's, where the model's declared types
/// name it otherwise: an exporter writes its own text for a size (`floor(h/2 - 1/2) + 1`
/// where inference derives `floor((h-1)/2)+1`), and a tensor inserted beside that one and
/// declared with our text would look to other tools (onnx's shape inference) like a
/// different size. A name the model gives two texts is left as ours, and so is a size that
/// holds an unknown (`?1`) or a broadcast taken under a side condition (`max(a,b)`): the
/// model's name for it states more than inference knows. A text that is another size at
/// some size where the model runs is no name for ours: the declaration is false there.
pub(crate) fn declared_names(model: &Model, inf: &Inference) -> HashMap<Term, Term> {
    let guessed = |t: &Term| t.has_fresh() || t.has_broadcast();
    let mut seen: HashMap<Term, Option<Term>> = HashMap::new();
    // Whether each pair met differs at a size where the model runs (PP-OCRv5's Resize
    // outputs, which onnxruntime then refuses to run), decided once per pair.
    let mut unlike: HashMap<(Term, Term), bool> = HashMap::new();
    for g in &model.graphs {
        for info in g.inputs.iter().chain(&g.outputs).chain(&g.value_info) {
            let (Some(declared), Some(ours)) = (info.ty.as_ref().and_then(Type::shape), inf.shape(info.value)) else {
                continue;
            };
            if declared.len() != ours.len() {
                continue;
            }
            for (d, o) in declared.iter().zip(ours) {
                let (Dim::Term(theirs), Dim::Term(ours)) = (d, o) else { continue };
                if theirs == ours || guessed(ours) || theirs.has_fresh() {
                    continue;
                }
                // Decided for the first thousand pairs; past them the model's text is kept.
                let key = (ours.clone(), theirs.clone());
                let false_somewhere = match unlike.get(&key) {
                    Some(f) => *f,
                    None if unlike.len() < 1000 => {
                        let equal = Assumption::Equal(ours.clone(), theirs.clone());
                        let f = crate::contract::fails_where_runs(&equal, &inf.constraints) == Some(true);
                        unlike.insert(key, f);
                        f
                    }
                    None => false,
                };
                if !false_somewhere {
                    let entry = seen.entry(ours.clone()).or_insert_with(|| Some(theirs.clone()));
                    if entry.as_ref() != Some(theirs) {
                        *entry = None;
                    }
                }
            }
        }
    }
    seen.into_iter().filter_map(|(ours, theirs)| Some((ours, theirs?))).collect()
}

/// `t` with each symbolic size that `renames` holds written with the name it maps to.
pub(crate) fn renamed(t: Type, renames: &HashMap<Term, Term>) -> Type {
    if renames.is_empty() {
        return t;
    }
    t.map_dims(&|d| match d {
        Dim::Term(s) => renames.get(s).map_or_else(|| d.clone(), |t| Dim::Term(t.clone())),
        d => d.clone(),
    })
}

impl Patch {
    /// An empty patch for `model`; names it creates avoid every name the model uses.
    pub fn new(model: &Model) -> Patch {
        let mut names: HashSet<String, _> = model.values.iter().map(|v| v.name.to_string()).collect();
        names.extend(model.nodes.node_weights().map(|n| n.name.to_string()));
        names.extend(model.graphs.iter().flat_map(|g| g.initializers.iter().map(|t| t.name.clone())));
        Patch { names, ..Patch::default() }
    }

    /// The base for names derived from node `n` of `model` (the model the patch was made
    /// for): its name, or `op_type_index` when it has none.
    pub(crate) fn base_name(&self, model: &Model, n: NodeId) -> String {
        let node = model.node(n);
        if !node.name.is_empty() {
            return node.name.to_string();
        }
        let index = self.positions.get_or_init(|| model.positions()).get(&n).copied().unwrap_or(0);
        format!("{}_{index}", node.op_type)
    }

    /// True when the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
            && self.rewires.is_empty()
            && self.drop_attrs.is_empty()
            && self.remove.is_empty()
            && self.types.is_empty()
            && self.new_infos() == 0
    }

    /// The number of `value_info` entries it adds.
    pub fn new_infos(&self) -> usize {
        self.new_infos.iter().map(|(_, v)| v.len()).sum()
    }

    /// A name derived from `base` that neither the model nor this patch uses yet.
    fn fresh(&mut self, base: &str) -> String {
        let name = if self.names.contains(base) {
            let next = self.next_suffix.entry(base.to_string()).or_insert(1);
            loop {
                let candidate = format!("{base}_{next}");
                *next += 1;
                if !self.names.contains(&candidate) {
                    break candidate;
                }
            }
        } else {
            base.to_string()
        };
        self.names.insert(name.clone());
        name
    }

    fn value(&mut self, graph: GraphId, base: &str, ty: Option<Type>) -> usize {
        let name = self.fresh(base);
        let ty = ty.map(|t| renamed(t, &self.renames));
        self.values.push(NewValue { graph, name, ty });
        self.values.len() - 1
    }

    /// Adds a one-output node `op` at `at`; its output is named after `base` and declared
    /// with type `ty`. A node the patch already made in that graph with the same op, inputs,
    /// attributes and type is not made again: its output is given instead. It was placed
    /// before an earlier node of the graph (plans visit nodes in the graph's order), so it is
    /// defined before this use too.
    fn node(
        &mut self,
        at: At,
        op: &'static str,
        inputs: Vec<Wire>,
        attrs: Vec<Attribute>,
        base: &str,
        ty: Option<Type>,
    ) -> Wire {
        let int_attr = |a: &Attribute| match &a.value {
            AttrValue::Int(i) => Some((a.name.clone(), vec![*i])),
            AttrValue::Ints(v) => Some((a.name.clone(), v.clone())),
            _ => None,
        };
        let key = attrs.iter().map(int_attr).collect::<Option<Vec<_>>>().map(|attrs| Made::Node {
            graph: at.graph,
            op,
            inputs: inputs.clone(),
            attrs,
            ty: ty.clone(),
        });
        self.made_once(key, |patch| {
            let output = patch.value(at.graph, base, ty);
            patch.nodes.push(NewNode { before: at.before, op, inputs, output, attrs, constant: None });
            Wire::New(output)
        })
    }

    /// The wire made for `key` before, or `make`'s (remembered under `key`).
    fn made_once(&mut self, key: Option<Made>, make: impl FnOnce(&mut Patch) -> Wire) -> Wire {
        if let Some(w) = key.as_ref().and_then(|k| self.made.get(k)) {
            return *w;
        }
        let w = make(self);
        if let Some(k) = key {
            self.made.insert(k, w);
        }
        w
    }

    /// Adds a constant tensor, usable by nodes placed at `at`.
    fn constant(&mut self, at: At, base: &str, tensor: Tensor) -> Wire {
        let output = self.value(at.graph, base, None);
        self.nodes.push(NewNode {
            before: at.before,
            op: "Constant",
            inputs: Vec::new(),
            output,
            attrs: Vec::new(),
            constant: Some(tensor),
        });
        Wire::New(output)
    }

    /// A 1-D int64 constant, made once per graph for given contents.
    fn ints(&mut self, at: At, base: &str, values: &[i64]) -> Wire {
        let key = Made::Ints { graph: at.graph, values: values.to_vec() };
        self.made_once(Some(key), |patch| patch.constant(at, base, Tensor::i64s(base, values)))
    }

    /// The 1-D int64 vector of `sizes` made before in `at`'s graph, or `make`'s. Sizes that
    /// are the same symbol are the same at run time, wherever they were read; so the run-time
    /// shape a chain of nodes over `[batch, seq]` broadcasts to is computed once.
    fn sizes(&mut self, at: At, sizes: Vec<Dim>, make: impl FnOnce(&mut Patch) -> Wire) -> Wire {
        self.made_once(Some(Made::Sizes { graph: at.graph, sizes }), make)
    }

    /// Adds a `value_info` entry declaring `ty` for `value` in `graph`.
    fn declare_new(&mut self, graph: GraphId, value: ValueId, ty: Type) {
        let info = ValueInfo::new(value, Some(ty));
        match self.new_infos.last_mut() {
            Some((g, list)) if *g == graph => list.push(info),
            _ => self.new_infos.push((graph, vec![info])),
        }
    }

    /// Applies the edits to `model`; gives how many nodes and initializers went with the
    /// removed nodes because they only fed them.
    pub fn apply(mut self, model: &mut Model) -> usize {
        let ids: Vec<ValueId> = self.values.iter().map(|v| model.add_value(v.graph, &v.name, Def::Undefined)).collect();
        let resolve = |w: Wire| match w {
            Wire::Old(v) => v,
            Wire::New(i) => ids[i],
        };
        let mut placed = Vec::new();
        for n in std::mem::take(&mut self.nodes) {
            let out = ids[n.output];
            let graph = model.node(n.before).graph;
            let Some(tensor) = n.constant else {
                let id = one_output(model, graph, n.op, n.inputs.into_iter().map(|w| Some(resolve(w))), out, n.attrs);
                placed.push((id, n.before));
                continue;
            };
            if model.ir_version >= 4 {
                model.attach_initializer(out, tensor);
                continue;
            }
            // Before opset 9, Constant holds floating-point tensors only: integers go through a
            // double (exact below 2^53) and a Cast.
            let ints = (tensor.dtype == Some(DType::I64)).then(|| tensor.ints(usize::MAX)).flatten();
            match ints.filter(|_| model.opset_or_default("") < 9) {
                Some(v) => {
                    let name = self.fresh(&format!("{}_f64", model.name(out)));
                    let raw = model.add_value(graph, &name, Def::Undefined);
                    let doubles = TensorData::Doubles(v.iter().map(|x| *x as f64).collect());
                    let value = AttrValue::Tensor(Tensor::new(&name, DType::F64, tensor.dims.clone(), doubles));
                    let c = one_output(model, graph, "Constant", [], raw, vec![Attribute::new("value", value)]);
                    let to = AttrValue::Int(i64::from(DType::I64.onnx()));
                    let cast = one_output(model, graph, "Cast", [Some(raw)], out, vec![Attribute::new("to", to)]);
                    placed.extend([(c, n.before), (cast, n.before)]);
                }
                None => {
                    let value = vec![Attribute::new("value", AttrValue::Tensor(tensor))];
                    placed.push((one_output(model, graph, "Constant", [], out, value), n.before));
                }
            }
        }
        model.place_before_all(&placed);
        let rewires: Vec<_> = std::mem::take(&mut self.rewires)
            .into_iter()
            .map(|(node, slot, w)| (node, slot, Some(resolve(w))))
            .collect();
        model.set_inputs(&rewires);
        for (node, name) in std::mem::take(&mut self.drop_attrs) {
            model.node_mut(node).attrs.retain(|a| a.name != name);
        }
        for (v, id) in std::mem::take(&mut self.values).into_iter().zip(ids) {
            if let Some(ty) = v.ty {
                model.graph_mut(v.graph).value_info.push(ValueInfo::new(id, Some(ty)));
            }
        }
        for (g, place, ty) in std::mem::take(&mut self.types) {
            let gr = model.graph_mut(g);
            let slot = match place {
                Place::Input(i) => &mut gr.inputs[i].ty,
                Place::Output(i) => &mut gr.outputs[i].ty,
                Place::Info(i) => &mut gr.value_info[i].ty,
            };
            *slot = Some(ty);
        }
        for (g, mut infos) in std::mem::take(&mut self.new_infos) {
            let list = &mut model.graph_mut(g).value_info;
            if list.is_empty() {
                *list = infos;
            } else {
                list.append(&mut infos);
            }
        }
        if self.remove.is_empty() {
            return 0;
        }
        sweep(model, std::mem::take(&mut self.remove))
    }
}

/// Adds node `op` to `graph`, reading `inputs`, with the one output `out`, whose name it takes.
fn one_output(
    model: &mut Model,
    graph: GraphId,
    op: &str,
    inputs: impl IntoIterator<Item = Option<ValueId>>,
    out: ValueId,
    attrs: Vec<Attribute>,
) -> NodeId {
    let node = Node::new(model.name(out), op, graph).with_inputs(inputs).with_outputs([Some(out)]);
    model.add_node(Node { attrs, ..node })
}

/// Removes nodes `remove` (whose outputs nothing reads any more), then the pure nodes and
/// initializers that only fed them; gives how many of those died with them.
fn sweep(model: &mut Model, remove: Vec<NodeId>) -> usize {
    // How many input slots of the nodes left take each value, kept as nodes die, and the
    // removals done together at the end: removing nodes and initializers one at a time, and
    // asking each value for its users, scanned the whole model each time (31 s for
    // `implicit` of an expanded 10k-node chain).
    let mut uses: IdMap<ValueId, usize> = IdMap::default();
    for node in model.nodes.node_weights() {
        for v in node.inputs.iter().flatten() {
            *uses.entry(*v).or_default() += 1;
        }
    }
    let graph_outputs: HashSet<ValueId> = model.graphs.iter().flat_map(|g| g.outputs.iter().map(|o| o.value)).collect();
    let mut removed: HashSet<NodeId> = HashSet::new();
    let mut dead_inits: HashSet<(GraphId, usize)> = HashSet::new();
    let mut gone: HashSet<ValueId> = HashSet::new();
    let mut work: Vec<ValueId> = Vec::new();
    let mut dying: Vec<NodeId> = remove.into_iter().filter(|r| removed.insert(*r)).collect();
    let unused =
        |v: &ValueId, uses: &IdMap<ValueId, usize>| !graph_outputs.contains(v) && uses.get(v).is_none_or(|k| *k == 0);
    let mut dead = 0;
    loop {
        // A node dies: its inputs lose a use each and are looked at next; its outputs go.
        for n in dying.drain(..) {
            let node = model.node(n);
            for v in node.inputs.iter().flatten() {
                if let Some(k) = uses.get_mut(v) {
                    *k = k.saturating_sub(1);
                }
                work.push(*v);
            }
            gone.extend(node.outputs.iter().flatten());
        }
        let Some(v) = work.pop() else { break };
        if !unused(&v, &uses) {
            continue;
        }
        match model.value(v).def {
            Def::Node(p, _) if !removed.contains(&p) => {
                let node = model.node(p);
                let pure = norm_domain(&node.domain).is_empty()
                    && node.subgraphs().is_empty()
                    && !node.op_type.starts_with("Random")
                    && !matches!(node.op_type.as_str(), "Multinomial" | "Bernoulli");
                if pure && node.outputs.iter().flatten().all(|o| unused(o, &uses)) {
                    removed.insert(p);
                    dying.push(p);
                    dead += 1;
                }
            }
            Def::Initializer => {
                let graph = model.value(v).graph;
                if let Some(index) = model.value(v).initializer {
                    if dead_inits.insert((graph, index)) {
                        gone.insert(v);
                        dead += 1;
                    }
                }
            }
            _ => {}
        }
    }
    model.remove_nodes(&removed);
    model.remove_initializers(&dead_inits);
    for g in &mut model.graphs {
        g.value_info.retain(|vi| !gone.contains(&vi.value));
    }
    dead
}

/// True when two dims are provably the same size: equal known sizes or equal symbols.
pub(crate) fn same(a: &Dim, b: &Dim) -> bool {
    a == b && *a != Dim::Unknown
}

/// True when two shapes are provably equal.
pub(crate) fn same_shape(a: &[Dim], b: &[Dim]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

/// True when the node has two or more inputs and all have one and the same known shape: it
/// broadcasts nothing, whatever name a declared output gives a size inference left anonymous.
pub(crate) fn inputs_alike(inf: &Inference, node: &Node) -> bool {
    let mut shapes = node.inputs.iter().flatten().map(|v| inf.shape(*v));
    let Some(Some(first)) = shapes.next() else { return false };
    node.inputs.iter().flatten().count() >= 2 && shapes.all(|s| s.is_some_and(|s| same_shape(s, first)))
}

/// A type fit to write to `value_info`: tensors (also inside sequences and optionals) whose
/// element type is known.
pub(crate) fn writable(ty: &Type) -> bool {
    match ty {
        Type::Tensor { dtype, .. } => dtype.is_some(),
        Type::Sequence(Some(t)) | Type::Optional(Some(t)) => writable(t),
        _ => false,
    }
}

/// The broadcasting family of the contract: nodes whose shape rule lets inputs of different
/// shapes meet (Add ... Where, PRelu; the legacy opset<7 forms too).
pub(crate) fn family_rule(model: &Model, node: &Node) -> Option<ShapeRule> {
    if !norm_domain(&node.domain).is_empty() {
        return None;
    }
    let def = ops::lookup(&node.domain, &node.op_type, model.opset_or_default(&node.domain))?;
    def.shape.broadcasts().then_some(def.shape)
}

/// Every node of the broadcasting family that sees an input shape unlike its output shape
/// (or whose shapes are not all known), with a message: the invariant `expand` establishes.
pub fn violations(model: &Model, inf: &Inference) -> Vec<(NodeId, String)> {
    let mut out = Vec::new();
    let positions = model.positions();
    for g in &model.graphs {
        for &n in &g.order {
            let node = model.node(n);
            if family_rule(model, node).is_none() || inputs_alike(inf, node) {
                continue;
            }
            let label = format!("{}: {} ({})", g.path, model.label_with(n, &positions), node.op_type);
            let Some(o) = node.outputs.first().copied().flatten().and_then(|v| inf.shape(v)) else {
                out.push((n, format!("{label}: the output shape is unknown")));
                continue;
            };
            for v in node.inputs.iter().flatten() {
                match inf.shape(*v) {
                    Some(s) if same_shape(s, o) => {}
                    Some(s) => {
                        let (name, s) = (model.name(*v), render(s));
                        out.push((n, format!("{label}: input '{name}' has shape {s}, the output {}", render(o))));
                    }
                    None => out.push((n, format!("{label}: input '{}' has an unknown shape", model.name(*v)))),
                }
            }
        }
    }
    out
}

/// Replaces each declared type that contradicts inference (on a graph output or a
/// `value_info`, in any graph) with the inferred one, and gives a warning for each: for a
/// model whose exporter declared a wrong type (`[1, seqlen]` for an output that is
/// `[8, 1, 8210]` at run time), the only thing between it and a rewrite.
pub fn fix_declared(model: &mut Model, inf: &Inference) -> Vec<Diagnostic> {
    let mut fixed = Vec::new();
    let Model { graphs, values, .. } = model;
    for g in graphs.iter_mut() {
        for (kind, infos) in [("graph output", &mut g.outputs), ("value_info", &mut g.value_info)] {
            for vi in infos.iter_mut() {
                let (Some(declared), Some(inferred)) = (&vi.ty, inf.ty(vi.value)) else { continue };
                let Some(why) = crate::infer::contradiction(inferred, declared) else { continue };
                let name = &values[vi.value.index()].name;
                let msg = format!(
                    "{kind} '{name}': the declared type {declared} is replaced by the inferred {inferred} ({why})"
                );
                fixed.push(Diagnostic::new(Severity::Warning, Code::DeclaredTypeFixed, &g.path, msg));
                vi.ty = Some(inferred.clone());
            }
        }
    }
    fixed
}

/// Replaces the symbols bound by `--dim` in every graph's declared inputs, outputs and
/// value_info with their values, so the rewritten model states the sizes it was specialised to.
pub fn bind_declared(model: &mut Model, bindings: &HashMap<String, i64>) {
    if bindings.is_empty() {
        return;
    }
    for g in &mut model.graphs {
        for vi in g.inputs.iter_mut().chain(g.outputs.iter_mut()).chain(g.value_info.iter_mut()) {
            vi.ty = vi.ty.as_ref().map(|ty| ty.bind(bindings));
        }
    }
}

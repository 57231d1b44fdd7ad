//! Shape and type inference: `Model` -> a side table of types (and shape-tensor contents) keyed
//! by `ValueId`, plus diagnostics and the side conditions symbolic broadcasting assumed.
//! Never mutates the graph and never stops at the first problem.

use std::collections::HashMap;

use crate::diag::{Code, Diagnostic, Severity};
use crate::dtype::DType;
use crate::ir::{norm_domain as norm, Def, GraphId, IdMap, Model, NodeId, ValueId};
use crate::ops::{self, Ctx, Out, RuleError, ShapeRule, TypeRule};
use crate::shape::{self, Assumption, Broadcast, BroadcastError, Dim, Shape, Term, Type};

fn render_sizes(sizes: &[i64]) -> String {
    let distinct: std::collections::BTreeSet<i64> = sizes.iter().copied().collect();
    let parts: Vec<String> = distinct.iter().map(i64::to_string).collect();
    parts.join(" or ")
}

/// Settings of one inference run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Values for symbolic dims (`--dim NAME=VALUE`), applied before inference.
    pub bindings: HashMap<String, i64>,
    /// Known contents of small integer graph inputs of the main graph (a shape fed at run
    /// time), used as shape-tensor values.
    pub values: HashMap<String, Vec<i64>>,
    /// Known contents of small floating-point graph inputs of the main graph (Resize scales
    /// fed at run time).
    pub floats: HashMap<String, Vec<f64>>,
    /// Known contents of small string graph inputs of the main graph.
    pub strings: HashMap<String, Vec<String>>,
    /// Shape rules declared as data (`--op-rules`), for ops no built-in rule covers; they
    /// come before the shipped contrib rules.
    pub op_rules: Option<std::sync::Arc<ops::OpRules>>,
}

/// Checks `--dim` style bindings against the symbolic dims the graph inputs `declared`: a name
/// no input declares is a mistake (a typo, or the wrong model), not a binding to ignore.
pub fn check_bindings(
    bindings: &HashMap<String, i64>,
    declared: &std::collections::BTreeSet<String>,
) -> crate::Result<()> {
    check_declared(bindings.keys(), declared, "bound")
}

/// Checks that each of `names` (dims `what`: "bound", "required") is a symbolic dim the graph
/// inputs `declared`; the first other, in order, is an error listing those they declare.
pub fn check_declared<'a>(
    names: impl IntoIterator<Item = &'a String>,
    declared: &std::collections::BTreeSet<String>,
    what: &'static str,
) -> crate::Result<()> {
    let Some(name) = names.into_iter().filter(|k| !declared.contains(*k)).min() else { return Ok(()) };
    Err(crate::Error::UnknownDim { name: name.to_string(), what, declared: declared.iter().cloned().collect() })
}

/// A side condition symbolic broadcasting assumed, with the node that needs it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Constraint {
    pub assumption: Assumption,
    pub graph: String,
    pub node: String,
    pub op_type: String,
    pub axis: usize,
    /// Set for the condition that a size the model declares for the node's output holds.
    pub declared: Option<Declared>,
}

impl Constraint {
    /// True unless a value_info's declaration is all the condition rests on: onnxruntime
    /// refuses only some of the runs where such a declaration is false ([`Declared::output`]).
    pub fn firm(&self) -> bool {
        self.declared.as_ref().is_none_or(|d| d.output)
    }
}

/// A size the model declares for a node's output where inference computes another term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Declared {
    /// The tensor declaring it.
    pub tensor: String,
    /// Declared as a graph output, where the same clash at known sizes is an error. Else by
    /// value_info, which onnxruntime trusts when it plans memory: it refuses some runs where
    /// the declared size is false, and not others.
    pub output: bool,
}

/// The result of inference: a type per value, the contents of small integer tensors, the
/// findings and the side conditions.
#[derive(Clone, Debug, Default)]
pub struct Inference {
    types: Vec<Option<Type>>,
    values: Sparse<Vec<Dim>>,
    floats: Sparse<Vec<f64>>,
    strings: Sparse<Vec<String>>,
    ratios: Sparse<ops::Ratio>,
    spreads: Sparse<ops::Spread>,
    pub diagnostics: Vec<Diagnostic>,
    pub constraints: Vec<Constraint>,
    /// Indices whose values are neither held nor bounded ([`ops::Out::unbounded`]), with the
    /// node that takes them.
    pub(crate) unbounded: Vec<(ValueId, String)>,
    /// The paths of If branches inferred without knowing which one runs.
    pub(crate) open_branches: Vec<String>,
    /// For which sizes of each symbolic input dim the side conditions hold.
    pub contract: crate::contract::Contract,
    /// The options it ran under, so that a pass can infer its result again alike.
    options: Options,
}

/// An element of tracked tensor contents, with the memory it takes.
trait Contents {
    fn bytes(&self) -> usize;
}

impl Contents for Dim {
    /// Its expression's text counted in full, though clones share it: an upper bound.
    fn bytes(&self) -> usize {
        let text = match self {
            Dim::Term(t) => t.size() as usize * 16,
            _ => 0,
        };
        std::mem::size_of::<Dim>().saturating_add(text)
    }
}

impl Contents for f64 {
    fn bytes(&self) -> usize {
        8
    }
}

impl Contents for String {
    fn bytes(&self) -> usize {
        std::mem::size_of::<String>().saturating_add(self.len())
    }
}

/// Facts only some values have (the contents of small tensors): a map keyed by value, so a
/// model of a million values pays only for those that have them.
#[derive(Clone, Debug)]
struct Sparse<T>(IdMap<ValueId, T>);

impl<T> Default for Sparse<T> {
    fn default() -> Sparse<T> {
        Sparse(IdMap::default())
    }
}

impl<T> Sparse<T> {
    // Most models hold few such values and many nodes ask: an empty map answers without
    // hashing.
    fn get(&self, v: ValueId) -> Option<&T> {
        if self.0.is_empty() {
            return None;
        }
        self.0.get(&v)
    }

    fn set(&mut self, v: ValueId, x: Option<T>) {
        if let Some(x) = x {
            self.0.insert(v, x);
        } else {
            self.take(v);
        }
    }

    /// Each input slot's entry as `view` shows it, for a rule's [`ops::Ctx`]: none at all when
    /// no value has one, as in most models, which rules read as `None` for every slot.
    fn per_input<'a, U: ?Sized>(
        &'a self,
        inputs: &crate::ir::Slots,
        view: impl Fn(&'a T) -> &'a U,
    ) -> ops::PerInput<Option<&'a U>> {
        if self.0.is_empty() {
            return ops::PerInput::new();
        }
        inputs.iter().map(|v| v.and_then(|v| self.get(v)).map(&view)).collect()
    }

    fn take(&mut self, v: ValueId) -> Option<T> {
        if self.0.is_empty() {
            return None;
        }
        self.0.remove(&v)
    }
}

impl Inference {
    /// The value's inferred type.
    pub fn ty(&self, v: ValueId) -> Option<&Type> {
        self.types.get(v.index()).and_then(Option::as_ref)
    }

    /// Moves the value's inferred type out (for a caller done with it).
    pub(crate) fn take_ty(&mut self, v: ValueId) -> Option<Type> {
        self.types.get_mut(v.index()).and_then(Option::take)
    }

    /// The value's inferred shape, when its rank is known.
    pub fn shape(&self, v: ValueId) -> Option<&Shape> {
        self.ty(v).and_then(Type::shape)
    }

    /// The contents of a small integer tensor, or of a float tensor holding sizes cast to
    /// float (whole numbers), when known or symbolic.
    pub fn value(&self, v: ValueId) -> Option<&[Dim]> {
        self.values.get(v).map(Vec::as_slice)
    }

    /// True when some finding is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }

    /// The number of error findings.
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Error).count()
    }

    /// The options inference ran under.
    pub fn options(&self) -> &Options {
        &self.options
    }
}

/// Debug builds infer each plain broadcast again through the general path
/// ([`Infer::check_plain`]) in models of up to this many nodes: every model of the test suites
/// but the stress models of 100,000 nodes, whose runs a deadline bounds.
#[cfg(debug_assertions)]
const CROSS_CHECKED_NODES: usize = 1 << 14;

/// How deep model-local function calls may nest (a function that calls itself stops here).
const MAX_CALL_DEPTH: usize = 16;

/// The fewest function-body nodes all calls together may infer. Each call infers its body
/// again, so calls that fan out (F calls G eight times, G calls H eight times, ...) would grow
/// exponentially with the nesting: an 8 KB model ran for hours. The budget is this or 16 times
/// the model's own node count, whichever is larger; past it, calls' outputs are unknown.
const MIN_CALL_BUDGET: usize = 1 << 18;

/// The fewest bytes of tensor contents (shape tensors, small constants) that nodes and calls
/// may add in all; the budget is this or 256 bytes per node of the model, whichever is
/// larger. Each value holds at most `ops::MAX_TRACKED` elements, but a chain of nodes each
/// folding a 1,024-element constant again held 2.4 GB for a 2.5 MB model, and a chain of
/// Identity nodes copies a string tensor at every step. Past it, contents are not kept.
const MIN_TRACKED_BYTES: usize = 64 << 20;

/// Infers every value's type in every graph of `model`.
///
/// ```
/// use onnx_bcast::infer::{infer, Options};
///
/// let model = onnx_bcast::io::load("models/attention_mask.onnx".as_ref())?;
/// // --dim batch=8
/// let options = Options { bindings: [("batch".to_string(), 8)].into(), ..Options::default() };
/// let inf = infer(&model, &options);
/// let scores = model.resolve(onnx_bcast::Model::MAIN, "scores").unwrap();
/// assert_eq!(inf.ty(scores).unwrap().to_string(), "float32[8, 12, seq, seq]");
/// # Ok::<(), onnx_bcast::Error>(())
/// ```
pub fn infer(model: &Model, options: &Options) -> Inference {
    let mut cx = Infer {
        traced: Default::default(),
        model,
        options,
        seen: Default::default(),
        position: std::cell::OnceCell::new(),
        declared_seen: Default::default(),
        input_dims: std::cell::OnceCell::new(),
        fresh: 0,
        overrides: HashMap::new(),
        calls: 0,
        budget: MIN_CALL_BUDGET.max(model.nodes.node_count().saturating_mul(16)),
        reported: Default::default(),
        tracked: MIN_TRACKED_BYTES.max(model.nodes.node_count().saturating_mul(256)),
        default_opset: model.opset_or_default(""),
        rows: Vec::new(),
        functions: Functions::new(model),
        typed_by_node: Default::default(),
        out: Inference { types: vec![None; model.values.len()], options: options.clone(), ..Inference::default() },
    };
    if model.opset("").is_none() && !model.opsets.iter().any(|o| !o.domain.is_empty()) {
        let version = crate::ir::default_opset("");
        let msg = format!("the model imports no opset; assuming the default domain at version {version}");
        cx.out.diagnostics.push(Diagnostic::new(Severity::Warning, Code::NoOpset, "main", msg));
    }
    cx.out.diagnostics.extend(crate::validate::validate(model));
    cx.graph(Model::MAIN);
    cx.contradictions();
    let reported =
        cx.out.diagnostics.iter().filter(|d| d.code == Code::SymbolContradiction).filter_map(|d| d.node.clone());
    let (mut contract, found) = crate::contract::solve(&cx.out.constraints, &reported.collect());
    // The contract is over the sizes a caller chooses, the main graph's input dims. Conditions
    // over a subgraph's own symbols alone (a generation decoder's past and total lengths, which
    // BeamSearch feeds) stay among the constraints.
    let inputs = model.input_dims();
    contract.dims.retain(|name, _| inputs.contains(name));
    contract.relations.retain(|r| r.dims.iter().any(|d| inputs.contains(d)));
    crate::contract::unseen(&mut contract, model, &cx.out);
    crate::contract::branched(&mut contract, &cx.out.constraints, &cx.out.open_branches);
    crate::contract::explain(&mut contract, model, &cx.out);
    cx.out.contract = contract;
    cx.out.diagnostics.extend(found);
    cx.out
}

/// How many clashes of a model get their sizes traced back ([`crate::provenance`]).
pub(crate) const MAX_TRACED: usize = 1000;

struct Infer<'a> {
    /// Clashes traced so far.
    traced: std::cell::Cell<usize>,
    model: &'a Model,
    options: &'a Options,
    out: Inference,
    /// The side conditions recorded so far, to keep them unique in linear time.
    seen: std::collections::HashSet<Constraint, foldhash::fast::RandomState>,
    /// Each node's index in its graph's file order, for labels in linear time.
    position: std::cell::OnceCell<IdMap<NodeId, usize>>,
    /// The conditions recorded from declared sizes ([`Infer::assume`]).
    declared_seen: std::collections::HashSet<Assumption, foldhash::fast::RandomState>,
    /// The main graph's input dims ([`Model::input_dims`]), read on first use.
    input_dims: std::cell::OnceCell<std::collections::BTreeSet<String>>,
    /// Fresh symbols handed out so far.
    fresh: usize,
    /// Attributes of function-body nodes, as the current call gives them.
    overrides: HashMap<NodeId, Vec<crate::ir::Attribute>>,
    /// How deep function calls nest right now.
    calls: usize,
    /// How many more function-body nodes calls may infer ([`MIN_CALL_BUDGET`]).
    budget: usize,
    /// Where findings inside function bodies were reported: (graph, node, code). A body is
    /// inferred at every call, and one finding per body node and code is enough.
    reported: std::collections::HashSet<(String, Option<String>, Code)>,
    /// How many more bytes of tensor contents nodes and calls may add ([`MIN_TRACKED_BYTES`]).
    tracked: usize,
    /// The version of the default domain the model imports (or [`crate::ir::default_opset`]).
    default_opset: i64,
    /// The op table rows looked up last, by (domain, op type, opset): most models use a
    /// handful of ops over and over.
    rows: Vec<(crate::ir::Name, crate::ir::Name, i64, Option<&'static ops::OpDef>)>,
    /// Model-local functions by (domain, name), and the opsets imports give by (the function
    /// whose body imports it, or `None` for the model's; domain): looked up per node, and a
    /// file may hold tens of thousands of either (a list searched per node took 19 s for
    /// 50,000 functions).
    functions: Functions<'a>,
    /// Subgraph inputs typed by what their node feeds them, over their declarations: `graph`
    /// leaves them as they are.
    typed_by_node: std::collections::HashSet<ValueId>,
}

#[derive(Default)]
struct Functions<'a> {
    by_name: HashMap<(&'a str, &'a str), &'a crate::ir::Function>,
    opsets: HashMap<(Option<GraphId>, &'a str), i64>,
}

impl<'a> Functions<'a> {
    fn new(model: &'a Model) -> Functions<'a> {
        let mut f = Functions::default();
        // The first of a name or a domain listed twice is the one a search would find.
        for o in &model.opsets {
            f.opsets.entry((None, norm(&o.domain))).or_insert(o.version);
        }
        for func in &model.functions {
            f.by_name.entry((&func.domain, &func.name)).or_insert(func);
            for o in &func.opsets {
                f.opsets.entry((Some(func.graph), norm(&o.domain))).or_insert(o.version);
            }
        }
        f
    }
}

impl Infer<'_> {
    /// [`ops::lookup`], answered from the rows looked up last when it can.
    fn row(&mut self, domain: &crate::ir::Name, op: &crate::ir::Name, opset: i64) -> Option<&'static ops::OpDef> {
        const KEPT: usize = 8;
        if let Some(hit) = self.rows.iter().find(|r| r.2 == opset && r.1 == *op && r.0 == *domain) {
            return hit.3;
        }
        let found = ops::lookup(domain, op, opset);
        if self.rows.len() == KEPT {
            self.rows.remove(0);
        }
        self.rows.push((domain.clone(), op.clone(), opset, found));
        found
    }

    /// A declared type as inference reads it: `--dim` bindings applied, and a `dim_param`
    /// longer than [`shape::MAX_TEXT`] bytes unknown (a long name carried to every tensor it
    /// broadcasts into would multiply the output; the model keeps it as written).
    fn bind(&self, ty: &Type) -> Type {
        ty.map_dims(&|d| d.bind(&self.options.bindings).bounded())
    }

    fn set(&mut self, v: ValueId, ty: Option<Type>, value: Option<Vec<Dim>>) {
        self.out.types[v.index()] = ty;
        self.out.values.set(v, value);
    }

    /// The version of `domain` that nodes of graph `g` see: a function body's own imports
    /// first, then the model's.
    fn opset(&self, g: GraphId, domain: &str) -> i64 {
        if self.model.functions.is_empty() && domain.is_empty() {
            // The common case, once per node: no function bodies, the default domain.
            return self.default_opset;
        }
        // A subgraph inside a function body sees the function's imports.
        let own = self.functions.opsets.get(&(Some(self.model.root(g)), norm(domain)));
        let model = || self.functions.opsets.get(&(None, norm(domain)));
        own.or_else(model).copied().unwrap_or_else(|| crate::ir::default_opset(domain))
    }

    /// A call of a model-local function: its body is inferred with the node's inputs (types
    /// and contents) and attributes, and its outputs are the node's.
    fn call(&mut self, n: NodeId, f: &crate::ir::Function) -> Out {
        let model = self.model;
        let node = model.node(n);
        let limit = if self.calls >= MAX_CALL_DEPTH {
            Some(format!("function calls nest deeper than {MAX_CALL_DEPTH}"))
        } else {
            (self.budget == 0).then(|| "function calls have inferred as many body nodes as this model allows".into())
        };
        if let Some(why) = limit {
            self.flag(n, Severity::Warning, Code::UnknownOp, format!("{why}; {}'s outputs are unknown", node.op_type));
            return Out::default();
        }
        let body = model.graph(f.graph);
        for (i, input) in body.inputs.iter().enumerate() {
            let actual = node.inputs.get(i).copied().flatten();
            let ty = actual.and_then(|v| self.out.ty(v).cloned());
            let value = self.keep(actual.and_then(|v| self.out.values.get(v).cloned()));
            self.set(input.value, ty, value);
            let floats = self.keep(actual.and_then(|v| self.out.floats.get(v).cloned()));
            self.out.floats.set(input.value, floats);
            let strings = self.keep(actual.and_then(|v| self.out.strings.get(v).cloned()));
            self.out.strings.set(input.value, strings);
        }
        // Body attributes that refer to the caller's: its value, else the function's default,
        // else absent.
        let mut saved = Vec::new();
        for (body_node, attr, from) in &f.refs {
            let given = node.attr(from).cloned().or_else(|| {
                f.attributes.iter().find(|(name, _)| name == from).and_then(|(_, default)| default.clone())
            });
            let mut attrs: Vec<crate::ir::Attribute> = match self.overrides.get(body_node) {
                Some(a) => a.clone(),
                None => model.node(*body_node).attrs.clone(),
            };
            attrs.retain(|a| &a.name != attr);
            if let Some(v) = given {
                attrs.push(crate::ir::Attribute::new(attr, v));
            }
            saved.push((*body_node, self.overrides.insert(*body_node, attrs)));
        }
        self.calls += 1;
        self.graph(f.graph);
        self.calls -= 1;
        for (body_node, old) in saved.into_iter().rev() {
            match old {
                Some(a) => self.overrides.insert(body_node, a),
                None => self.overrides.remove(&body_node),
            };
        }
        Out {
            types: body.outputs.iter().map(|o| self.out.ty(o.value).cloned()).collect(),
            values: body.outputs.iter().map(|o| self.out.values.get(o.value).cloned()).collect(),
            floats: body.outputs.iter().map(|o| self.out.floats.get(o.value).cloned()).collect(),
            strings: body.outputs.iter().map(|o| self.out.strings.get(o.value).cloned()).collect(),
            ..Out::default()
        }
    }

    /// Gives each unknown dim of `s` a fresh symbol of its own (`?N`): nothing is assumed about
    /// its size, but the nodes it flows into see it equal to itself.
    fn name_unknowns(&mut self, s: &mut Shape) {
        for d in s.iter_mut().filter(|d| **d == Dim::Unknown) {
            self.fresh += 1;
            *d = Dim::fresh(self.fresh as u64);
        }
    }

    /// Reports symbols that side conditions force to two different sizes other than 1: no
    /// input size satisfies them all. Symbols that conditions make equal (`a = b`) count as
    /// one.
    fn contradictions(&mut self) {
        let constraints = &self.out.constraints;
        // Each symbol's class under the `Equal` conditions: a union-find keyed by symbol.
        // Terms hash as their interned hash: foldhash, not SipHash, mixes it.
        type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
        let mut parent: Map<&Term, &Term> = Map::default();
        fn root<'a>(parent: &mut Map<&'a Term, &'a Term>, mut s: &'a Term) -> &'a Term {
            while let Some(&p) = parent.get(s) {
                if let Some(&up) = parent.get(p) {
                    parent.insert(s, up);
                }
                s = p;
            }
            s
        }
        for c in constraints {
            if let Assumption::Equal(a, b) = &c.assumption {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                if ra != rb {
                    parent.insert(rb, ra);
                }
            }
        }
        // Keyed by class: a model with many symbols has as many entries (a list searched per
        // condition took 2.6 s for 50,000).
        let mut allowed: Map<&Term, (Vec<i64>, &Constraint, &Term)> = Map::default();
        let mut found = Vec::new();
        // A class is reported once: later conditions on it only repeat the first conflict.
        let mut reported: std::collections::HashSet<&Term, foldhash::fast::RandomState> = Default::default();
        for c in constraints {
            let Assumption::OneOf { sym, sizes } = &c.assumption else { continue };
            let class = root(&mut parent, sym);
            if reported.contains(class) {
                continue;
            }
            match allowed.get_mut(class) {
                Some((have, first, first_sym)) => {
                    let both: Vec<i64> = have.iter().copied().filter(|x| sizes.contains(x)).collect();
                    if both.is_empty() {
                        reported.insert(class);
                        let named = if *first_sym == sym {
                            format!("symbol '{sym}' must be")
                        } else {
                            format!("symbols '{first_sym}' and '{sym}', which side conditions make equal, must be")
                        };
                        let msg = format!(
                            "{named} {} for {} ({}) and {} for {} ({}): no size satisfies both",
                            render_sizes(have),
                            first.node,
                            first.op_type,
                            render_sizes(sizes),
                            c.node,
                            c.op_type
                        );
                        let mut d = Diagnostic::new(Severity::Error, Code::SymbolContradiction, &c.graph, msg);
                        d.node = Some(c.node.clone());
                        d.op_type = Some(c.op_type.clone());
                        d.axis = Some(c.axis);
                        found.push(d);
                    }
                    *have = both;
                }
                None => {
                    allowed.insert(class, (sizes.clone(), c, sym));
                }
            }
        }
        self.out.diagnostics.extend(found);
    }

    /// `contents` when the budget of kept contents ([`MIN_TRACKED_BYTES`]) still has room for
    /// them, which they then take.
    fn keep<T: Contents>(&mut self, contents: Option<Vec<T>>) -> Option<Vec<T>> {
        let contents = contents?;
        let bytes = contents.iter().map(Contents::bytes).fold(0usize, usize::saturating_add);
        self.tracked = self.tracked.checked_sub(bytes)?;
        Some(contents)
    }

    /// Records a finding; inside a function body, only the first at its node with its code.
    fn report(&mut self, d: Diagnostic) {
        if self.calls > 0 && !self.reported.insert((d.graph.clone(), d.node.clone(), d.code)) {
            return;
        }
        self.out.diagnostics.push(d);
    }

    fn graph(&mut self, g: GraphId) {
        let model = self.model;
        let graph = model.graph(g);
        if self.calls > 0 {
            self.budget = self.budget.saturating_sub(graph.order.len().max(1));
        }
        for t in &graph.initializers {
            if let Some(v) = model.local(g, &t.name) {
                let dims = t.dims.iter().map(|d| if *d >= 0 { Dim::Known(*d) } else { Dim::Unknown }).collect();
                let value = ops::tensor_ints(t, ops::MAX_TRACKED).map(|v| v.into_iter().map(Dim::Known).collect());
                self.set(v, Some(Type::tensor(t.dtype, Some(dims))), value);
                self.out.floats.set(v, ops::tensor_floats(t, ops::MAX_TRACKED));
                self.out.strings.set(v, ops::tensor_strings(t, ops::MAX_TRACKED));
            }
        }
        for input in &graph.inputs {
            let Some(ty) = input.ty.as_ref().filter(|_| !self.typed_by_node.contains(&input.value)) else { continue };
            let mut ty = self.bind(ty);
            let is_init = model.value(input.value).initializer.is_some();
            if g == Model::MAIN && !is_init {
                if let Type::Tensor { shape: Some(s), .. } = &mut ty {
                    // A declared 0 is the size 0, as the spec and onnxruntime take it; an
                    // exporter that meant "dynamic" wrote it by mistake, so say what it means.
                    let declared = input.ty.as_ref().and_then(Type::shape);
                    let zeros: Vec<String> = (0..s.len())
                        .filter(|&a| s[a] == Dim::Known(0) && declared.is_some_and(|d| d[a] == Dim::Known(0)))
                        .map(|a| a.to_string())
                        .collect();
                    if !zeros.is_empty() {
                        let msg = format!(
                            "input '{}' declares size 0 at axis {}: only empty tensors can be fed to it (an exporter that meant a dynamic size should write a dim_param)",
                            model.name(input.value),
                            zeros.join(", ")
                        );
                        self.report(Diagnostic::new(Severity::Warning, Code::ZeroDimInput, &graph.path, msg));
                    }
                    // Each unknown input dim (no dim_param, a negative dim_value, or the
                    // placeholder `?`) is its own fresh symbol: unknown, but equal to
                    // itself wherever it flows.
                    self.name_unknowns(s);
                }
            }
            let name = model.name(input.value);
            let fed = (g == Model::MAIN).then(|| self.options.values.get(name)).flatten();
            let value =
                fed.map(|v| v.iter().map(|x| Dim::Known(*x)).collect()).or_else(|| self.out.values.take(input.value));
            if let Some(f) = (g == Model::MAIN).then(|| self.options.floats.get(name)).flatten() {
                self.out.floats.set(input.value, Some(f.clone()));
            }
            if let Some(f) = (g == Model::MAIN).then(|| self.options.strings.get(name)).flatten() {
                self.out.strings.set(input.value, Some(f.clone()));
            }
            if is_init && self.out.types[input.value.index()].is_some() {
                // onnxruntime refuses an initializer unlike its input's declaration ("Shape of
                // initializer w does not match. {3} != {2,3}", "has element type tensor(float)
                // but usage of initializer in graph expects tensor(double)").
                let held = self.out.types[input.value.index()].as_ref();
                if let Some(why) = held.and_then(|held| init_misfit(input.ty.as_ref(), held)) {
                    let msg = format!("graph input '{name}' {why}");
                    self.report(Diagnostic::new(Severity::Error, Code::DeclaredShapeMismatch, &graph.path, msg));
                }
                // An initializer's own dims are what a run sees unless the input is fed.
                if let Some(v) = value {
                    self.out.values.set(input.value, Some(v));
                }
                continue;
            }
            self.set(input.value, Some(ty), value);
        }
        let declared: IdMap<ValueId, (&Type, bool)> = graph
            .value_info
            .iter()
            .map(|vi| (vi, false))
            .chain(graph.outputs.iter().map(|vi| (vi, true)))
            .filter_map(|(vi, is_output)| vi.ty.as_ref().map(|t| (vi.value, (t, is_output))))
            .collect();

        let (order, cyclic) = model.topo_order(g);
        if !cyclic.is_empty() {
            // Name a handful: a cycle through a large graph would otherwise print every node.
            const SHOWN: usize = 8;
            let names: Vec<String> = cyclic.iter().take(SHOWN).map(|n| self.label(*n)).collect();
            let more = match cyclic.len().saturating_sub(SHOWN) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let msg = format!("{} nodes are on or behind a cycle: {}{more}", cyclic.len(), names.join(", "));
            let mut d = Diagnostic::new(Severity::Error, Code::GraphCycle, &graph.path, msg);
            d.node = names.first().cloned();
            self.report(d);
        }
        for n in order {
            self.node(n, &declared);
        }
        // Graph outputs must be defined.
        for o in &graph.outputs {
            if model.value(o.value).def == Def::Undefined {
                let msg =
                    format!("graph output '{}' is not defined by any node, input or initializer", model.name(o.value));
                self.report(Diagnostic::new(Severity::Error, Code::UndefinedOutput, &graph.path, msg));
            }
        }
    }

    /// Records a finding about node `n` ([`Infer::diag`], [`Infer::report`]).
    fn flag(&mut self, n: NodeId, severity: Severity, code: Code, message: String) {
        let d = self.diag(n, severity, code, message);
        self.report(d);
    }

    fn diag(&self, n: NodeId, severity: Severity, code: Code, message: String) -> Diagnostic {
        let node = self.model.node(n);
        let mut d = Diagnostic::new(severity, code, &self.model.graph(node.graph).path, message);
        d.node = Some(self.label(n));
        d.op_type = Some(node.op_type.to_string());
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

    /// The node's outputs under a rule declared as data (`--op-rules`), a contrib op's code or
    /// a shipped contrib rule, in that order; `None` when none covers it.
    fn declared(&self, node: &crate::ir::Node, opset: i64) -> Option<Result<Out, RuleError>> {
        let c = self.ctx(node, opset);
        let user = self.options.op_rules.as_ref().and_then(|r| r.apply(&c));
        user.or_else(|| ops::contrib(&c)).or_else(|| ops::OpRules::builtin().apply(&c))
    }

    /// The node's label in messages: its name, or `op_type#index`.
    fn label(&self, n: NodeId) -> String {
        self.model.label_with(n, self.position.get_or_init(|| self.model.positions()))
    }

    fn render(&self, v: ValueId) -> String {
        self.out.ty(v).map_or_else(|| "?".into(), Type::to_string)
    }

    fn node(&mut self, n: NodeId, declared: &IdMap<ValueId, (&Type, bool)>) {
        let model = self.model;
        let node = model.node(n);
        for v in node.inputs.iter().flatten() {
            if model.value(*v).def == Def::Undefined {
                let msg =
                    format!("input '{}' is not defined by any node, input or initializer in scope", model.name(*v));
                self.flag(n, Severity::Error, Code::UndefinedInput, msg);
            }
        }
        for v in node.outputs.iter().flatten() {
            if model.value(*v).shadows.is_some() {
                let msg = format!("output '{}' is already defined earlier in this graph", model.name(*v));
                self.flag(n, Severity::Error, Code::DuplicateOutput, msg);
            }
        }
        // An If whose condition is known runs one branch only: the other is not inferred, so
        // that nothing in it (a Squeeze of a size that is not 1 there) is reported.
        let taken = match node.inputs.first().copied().flatten().and_then(|c| self.out.value(c)) {
            Some([Dim::Known(k)]) if node.op_type == "If" && node.domain.is_empty() => {
                Some(if *k != 0 { "then_branch" } else { "else_branch" })
            }
            _ => None,
        };
        let open = taken.is_none() && node.op_type == "If" && node.domain.is_empty();
        for (attr, sub) in node.subgraphs() {
            if taken.is_none_or(|t| t == attr) {
                if open {
                    self.out.open_branches.push(model.graph(sub).path.clone());
                }
                self.subgraph(n, sub);
            }
        }

        let opset = self.opset(node.graph, &node.domain);
        // Inside a function body, attributes that refer to the caller's take its values.
        let owned;
        let node = match self.overrides.get(&n) {
            Some(attrs) => {
                owned = crate::ir::Node { attrs: attrs.clone(), ..node.clone() };
                &owned
            }
            None => node,
        };
        let function = self.functions.by_name.get(&(node.domain.as_str(), node.op_type.as_str())).copied();
        let def = if function.is_none() { self.row(&node.domain, &node.op_type, opset) } else { None };
        // onnxruntime's own ops, which onnx's table lacks, by onnxruntime's schemas.
        let own = if function.is_none() && def.is_none() {
            ops::contrib_schema(&node.domain, &node.op_type, opset)
        } else {
            None
        };
        if let Some(s) = own {
            self.check_types(n, node, s, opset);
        }
        if let Some(def) = def {
            // Not checked above the newest opset the table knows, where a schema may have changed.
            if ops::newest(&node.domain).is_some_and(|newest| opset <= newest) {
                self.check_types(n, node, def.schema, opset);
            }
            if let Some((v, ty)) = self.plain_broadcast(node, def, declared) {
                #[cfg(debug_assertions)]
                if model.nodes.node_count() <= CROSS_CHECKED_NODES {
                    self.check_plain(node, def, opset, &ty);
                }
                self.out.floats.set(v, None);
                self.out.strings.set(v, None);
                self.out.ratios.set(v, None);
                self.out.spreads.set(v, None);
                self.set(v, Some(ty), None);
                return;
            }
        }
        let (ins, outs) = (node.inputs.len(), node.outputs().len());
        let misfit = match def {
            // "input 1 is marked single but has an empty string in the graph".
            Some(def) => def.schema.arity.misfit(ins, outs).or_else(|| empty_required(def.schema.arity, node)),
            None => own.and_then(|s| {
                s.arity
                    .misfit(ins, outs)
                    .or_else(|| empty_required(s.arity, node))
                    .or_else(|| ops::registry::needed_input(node))
            }),
        };
        let result = match (node.op_type.as_str(), function) {
            ("If", _) if node.domain.is_empty() => match def.map(|d| apply(d, &self.ctx(node, opset))) {
                Some(Err(e)) => Err(e),
                _ => Ok(self.if_outputs(n, node)),
            },
            (_, Some(f)) => Ok(self.call(n, f)),
            // A node of more or fewer inputs or outputs than its schema's (a standard op's at
            // the model's opset, a contrib op's as onnxruntime registers it).
            _ if misfit.is_some() => Err(RuleError::Invalid(format!(
                "{}{} {}",
                node.op_type,
                def.map(|_| format!(" (opset {opset})")).unwrap_or_default(),
                misfit.unwrap_or_default()
            ))),
            _ => match def {
                Some(def) if def.schema.deprecated() => Err(RuleError::Invalid(format!(
                    "{} is deprecated from opset {}; onnx's checker and onnxruntime refuse it",
                    node.op_type, def.schema.since
                ))),
                Some(def) => apply(def, &self.ctx(node, opset)),
                // No table row: rules declared as data (`--op-rules`), then the contrib ops'
                // code, then the shipped contrib rules.
                None => match self.declared(node, opset) {
                    Some(out) => out,
                    None => {
                        let domain = if node.domain.is_empty() { "ai.onnx" } else { &node.domain };
                        let op = &node.op_type;
                        let msg = if ops::exists(&node.domain, op) {
                            format!("{op} does not exist in {domain} opset {opset}; its outputs are unknown")
                        } else {
                            format!("no shape rule for {domain}.{op}; its outputs are unknown")
                        };
                        self.flag(n, Severity::Warning, Code::UnknownOp, msg);
                        Ok(Out::default())
                    }
                },
            },
        };
        // No rule may give a tensor a negative size: a TopK with k = -5, a Resize, ConvTranspose,
        // Col2Im or CenterCropPad with negative sizes among its constants gave [6, -5] and the
        // like with no finding. The node is refused instead, whichever rule it went through.
        let result = result.and_then(|out| {
            let negative = out.types.iter().enumerate().find_map(|(k, t)| {
                let shape = t.as_ref()?.shape()?;
                shape.iter().enumerate().find_map(|(a, d)| d.known().filter(|n| *n < 0).map(|n| (k, a, n)))
            });
            match negative {
                Some((k, a, n)) => Err(RuleError::Invalid(format!(
                    "{}: output {k} would have the negative size {n} at axis {a}",
                    node.op_type
                ))),
                None => Ok(out),
            }
        });
        let out = match result {
            Ok(out) => out,
            Err(e) => {
                let aligned = def.is_some_and(|d| matches!(d.shape, ShapeRule::Multi));
                let d = self.rule_error(n, e, aligned);
                self.report(d);
                Out::default()
            }
        };
        if let Some(v) = out.unbounded.and_then(|i| node.inputs.get(i).copied().flatten()) {
            let label = self.label(n);
            self.out.unbounded.push((v, label));
        }
        for (code, msg) in out.warnings {
            self.flag(n, Severity::Warning, code, msg);
        }
        for (axis, assumption) in out.assumptions {
            self.assume(n, axis, assumption, None);
        }
        let mut types = out.types.into_iter();
        let mut values = out.values.into_iter();
        let mut floats = out.floats.into_iter();
        let mut strings = out.strings.into_iter();
        let mut ratios = out.ratios.into_iter();
        let mut spreads = out.spreads.into_iter();
        for v in node.outputs.iter() {
            let (ty, value, float) = (types.next().flatten(), values.next().flatten(), floats.next().flatten());
            let (string, ratio, spread) = (strings.next().flatten(), ratios.next().flatten(), spreads.next().flatten());
            let Some(v) = v else { continue };
            let (float, string) = (self.keep(float), self.keep(string));
            let ratio = ratio.and_then(|r| Some(ops::Ratio { num: self.keep(Some(r.num))?, den: r.den }));
            self.out.floats.set(*v, float);
            self.out.strings.set(*v, string);
            self.out.ratios.set(*v, ratio);
            self.out.spreads.set(*v, spread);
            // Contents are kept only when they match the inferred element count.
            let count = ty.as_ref().and_then(Type::shape).and_then(|s| numel(s));
            let value = value.filter(|x| count.is_none_or(|n| n == x.len()));
            let value = self.keep(value);
            let mut ty = match declared.get(v) {
                Some((decl, is_output)) => self.reconcile(n, *v, ty, &self.bind(decl), *is_output),
                None => ty,
            };
            if let Some(Type::Tensor { shape: Some(s), .. }) = &mut ty {
                self.name_unknowns(s);
            }
            self.set(*v, ty, value);
        }
    }

    /// Reports inputs whose element types or kinds (a sequence fed to Add) the op's schema, at
    /// the model's opset, does not allow (`type-unsupported`) or which a type variable binds
    /// to different element types (`type-mismatch`: `Add(float32, float16)`), attributes it
    /// does not define, and attribute values `registry::bad_choice` refuses, as onnxruntime
    /// refuses such a model. Constant's newer value_* attributes, which onnxruntime reads at
    /// any opset, are a warning.
    fn check_types(&mut self, n: NodeId, node: &crate::ir::Node, schema: &ops::Schema, opset: i64) {
        if let Some(why) = attr_misfit(node, schema.attrs) {
            // onnxruntime makes a Constant an initializer before it checks schemas, reading
            // every value_* attribute at any opset (value_int came with opset 12).
            let newer = ["value_int", "value_ints", "value_float", "value_floats", "value_string", "value_strings"];
            let read = node.op_type == "Constant"
                && crate::ir::norm_domain(&node.domain).is_empty()
                && node.attrs.len() == 1
                && newer.contains(&node.attrs[0].name.as_str());
            let (severity, code, who) = match read {
                true => {
                    (Severity::Warning, Code::RuntimeDiffers, "onnx's checker refuses the node; onnxruntime runs it")
                }
                false => (Severity::Error, Code::InvalidNode, "onnx's checker and onnxruntime refuse the node"),
            };
            self.flag(n, severity, code, format!("{} (opset {opset}) {why}; {who}", node.op_type));
        }
        if let Some((attr, value, list)) = ops::registry::bad_choice(node, opset) {
            let op = &node.op_type;
            let msg = format!("{op} (opset {opset}) has {attr}={}; it takes {}", shown(&value), or_list(&list));
            self.flag(n, Severity::Error, Code::InvalidNode, msg);
        }
        // The first input bound to each type variable: (variable, element type, input).
        let mut bound: ops::PerInput<(usize, DType, ValueId)> = ops::PerInput::new();
        for (slot, v) in node.inputs.iter().enumerate() {
            let Some(v) = *v else { continue };
            let (Some((var, elements)), Some(ty)) = (schema.inputs.of(slot), self.out.ty(v)) else { continue };
            if let Some((_, what)) = ops::kind(ty).filter(|_| !elements.kinds.takes(ty)) {
                let (name, op) = (self.model.name(v), &node.op_type);
                let takes = elements.kinds.words();
                let msg = format!(
                    "input '{name}' is {what}, which {op} (opset {opset}) does not take there; it takes {takes}"
                );
                self.flag(n, Severity::Error, Code::TypeUnsupported, msg);
                continue;
            }
            let Type::Tensor { dtype: Some(dtype), .. } = ty else { continue };
            let Some(bit) = u32::try_from(dtype.onnx()).ok().and_then(|c| 1u64.checked_shl(c)) else { continue };
            if elements.set & bit == 0 {
                let name = self.model.name(v);
                let allowed: Vec<&str> = (0..64)
                    .filter(|c| elements.set >> c & 1 == 1)
                    .filter_map(|c| DType::from_onnx(c).map(DType::name))
                    .collect();
                let msg = format!(
                    "input '{name}' has element type {}, which {} (opset {opset}) does not take there; it takes {}",
                    dtype.name(),
                    node.op_type,
                    allowed.join(", ")
                );
                self.flag(n, Severity::Error, Code::TypeUnsupported, msg);
                continue;
            }
            if !elements.binds {
                continue;
            }
            match bound.iter().find(|(b, ..)| *b == var) {
                Some((_, first, w)) if first != dtype => {
                    let name = self.model.name(v);
                    let msg = format!(
                        "inputs '{}' ({}) and '{name}' ({}) must have one element type",
                        self.model.name(*w),
                        first.name(),
                        dtype.name()
                    );
                    self.flag(n, Severity::Error, Code::TypeMismatch, msg);
                }
                Some(_) => {}
                None => bound.push((var, *dtype, v)),
            }
        }
    }

    /// What a rule sees of `node`: its inputs' types and contents, its subgraphs' outputs.
    fn ctx<'c>(&'c self, node: &'c crate::ir::Node, opset: i64) -> Ctx<'c> {
        let model = self.model;
        let subgraph_outputs = node
            .subgraphs()
            .into_iter()
            .map(|(name, g)| (name, model.graph(g).outputs.iter().map(|o| self.out.ty(o.value).cloned()).collect()))
            .collect();
        Ctx {
            model,
            node,
            opset,
            inputs: node.inputs.iter().map(|v| v.and_then(|v| self.out.ty(v))).collect(),
            values: self.out.values.per_input(&node.inputs, Vec::as_slice),
            floats: self.out.floats.per_input(&node.inputs, Vec::as_slice),
            strings: self.out.strings.per_input(&node.inputs, Vec::as_slice),
            ratios: self.out.ratios.per_input(&node.inputs, |r| r),
            spreads: self.out.spreads.per_input(&node.inputs, |x| x),
            subgraph_outputs,
            loop_cond_stays_true: node.op_type == "Loop"
                && node.subgraphs().first().is_some_and(|(_, g)| {
                    model.graph(*g).outputs.first().and_then(|o| self.out.value(o.value)) == Some(&[Dim::Known(1)][..])
                }),
        }
    }

    /// The type of `node`'s one output when the node is the plain broadcast an elementwise node
    /// usually is: its op table row `def` (so not a model-local function) is a `Multi` row
    /// whose arity it has, every input is present, of known rank and without tracked contents,
    /// it broadcasts without side conditions to a shape with no unknown dim, and its output is
    /// undeclared. For such a node the general path
    /// (`apply`, then the bookkeeping of each output in `node`) gives exactly this type and
    /// nothing else (debug builds check it, `check_plain`), through steps that cost a third of
    /// inference on a chain of them. `None`: take the general path.
    fn plain_broadcast(
        &self,
        node: &crate::ir::Node,
        def: &ops::OpDef,
        declared: &IdMap<ValueId, (&Type, bool)>,
    ) -> Option<(ValueId, Type)> {
        let [Some(out)] = node.outputs.as_slice() else { return None };
        let plain = matches!(def.shape, ShapeRule::Multi) && def.meaning.check.is_none();
        if declared.contains_key(out) || !plain || !def.takes(node.inputs.len()) {
            return None;
        }
        let mut shapes: ops::PerInput<&[Dim]> = ops::PerInput::new();
        for v in &node.inputs {
            let v = (*v)?;
            let (values, floats) = (self.out.values.get(v).is_some(), self.out.floats.get(v).is_some());
            if values || floats || self.out.ratios.get(v).is_some() || self.out.spreads.get(v).is_some() {
                return None;
            }
            shapes.push(self.out.shape(v)?);
        }
        let dtype = match def.ty {
            TypeRule::SameAs(i) => node.inputs.get(i).copied().flatten().and_then(|v| self.out.ty(v)?.dtype()),
            TypeRule::Fixed(d) => Some(d),
            TypeRule::AttrTo | TypeRule::Custom => return None,
        };
        let b = shape::multi(&shapes).ok()?;
        if !b.assumptions.is_empty() || b.shape.contains(&Dim::Unknown) {
            return None;
        }
        Some((*out, Type::tensor(dtype, Some(b.shape))))
    }

    /// Checks [`Infer::plain_broadcast`]'s answer against the general path's.
    #[cfg(debug_assertions)]
    fn check_plain(&self, node: &crate::ir::Node, def: &ops::OpDef, opset: i64, ty: &Type) {
        let general = apply(def, &self.ctx(node, opset));
        let same = match &general {
            Ok(out) => {
                matches!(out.types.as_slice(), [Some(t)] if t == ty)
                    && out.assumptions.is_empty()
                    && out.values.iter().all(Option::is_none)
                    && out.floats.iter().all(Option::is_none)
                    && out.strings.iter().all(Option::is_none)
                    && out.spreads.iter().all(Option::is_none)
            }
            _ => false,
        };
        debug_assert!(same, "plain broadcast of {} gave {ty:?}, the general path {general:?}", node.op_type);
    }

    /// Records a side condition that node `n` needs at `axis`, once; one the model declares
    /// (for tensor `declared`) once whatever the node, as exporters declare a size again for
    /// each tensor carrying it.
    fn assume(&mut self, n: NodeId, axis: usize, assumption: Assumption, declared: Option<Declared>) {
        if declared.is_some() && !self.declared_seen.insert(assumption.clone()) {
            return;
        }
        // The same size written otherwise (`floor(floor(h/2 - 1/2)/2) + 1` for
        // `floor((h-1)/4)+1`) is no condition; looked for in the first thousand, each a few
        // thousand evaluations at most.
        let few = self.declared_seen.len() <= 1000;
        if declared.is_some() && few && crate::contract::always(&assumption) == Some(true) {
            return;
        }
        // Nor is a bound every size meets (a frame of 400 over `N+400` samples).
        let sizes = |_: &Term| (0, None);
        match &assumption {
            Assumption::AtLeast { size, min } if size.bounds(&sizes).0 >= *min => return,
            Assumption::AtMost { size, max } if size.bounds(&sizes).1.is_some_and(|m| m <= *max) => return,
            _ => {}
        }
        let node = self.model.node(n);
        let c = Constraint {
            assumption,
            graph: self.model.graph(node.graph).path.clone(),
            node: self.label(n),
            op_type: node.op_type.to_string(),
            axis,
            declared,
        };
        if self.seen.insert(c.clone()) {
            self.out.constraints.push(c);
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
        let clash = contradiction(&inferred, declared);
        // onnxruntime refuses a model whose declared element type disagrees with its own
        // inference, value_info included, but merges a disagreeing value_info shape with a
        // warning: so an element-type clash is an error wherever it is declared.
        let type_clash = matches!((id, dd), (Some(a), Some(b)) if a != b);
        // A declared known size replaces an inferred term: exporters write what their own
        // symbolic engines proved (torch.export's 4 heads where inference has
        // `floor(544/(floor(h/8)*floor(w/8)*8+8))`). It is also the condition that the term
        // takes that size on a graph output, as the same clash between known sizes is an error
        // there (PP-OCR's recognizer declares 25 where it computes `floor((width-3)/4)+1`), and
        // wherever the term is over one input dim alone. So is a declared term over the same
        // dim: onnxruntime plans memory by the declared sizes and refuses a run where they are
        // false (PP-OCRv5's detector declares `floor((h-1)/16)+1` where its Resize computes
        // `floor((h-1)/32)*2+2`: unequal below 17). Over several dims such terms are kept
        // apart, as the solver seldom proves two ways of writing a size equal.
        let mut held = Vec::new();
        let shape = match (is, ds) {
            (Some(a), Some(b)) if a.len() != b.len() => Some(a.clone()),
            (Some(a), Some(b)) => Some(
                a.iter()
                    .zip(b)
                    .enumerate()
                    .map(|(axis, (x, y))| match (x, y) {
                        (Dim::Unknown, _) => y.clone(),
                        (Dim::Term(f), Dim::Term(_)) if f.is_anonymous() => y.clone(),
                        (Dim::Term(f), Dim::Known(k)) => {
                            if is_output && !f.is_anonymous() || self.over_one_input_dim(f, None) {
                                held.push((axis, Assumption::OneOf { sym: f.clone(), sizes: vec![*k] }));
                            }
                            y.clone()
                        }
                        (Dim::Term(f), Dim::Term(d)) => {
                            if f != d && self.over_one_input_dim(f, Some(d)) {
                                held.push((axis, Assumption::Equal(f.clone(), d.clone())));
                            }
                            x.clone()
                        }
                        _ => x.clone(),
                    })
                    .collect(),
            ),
            (None, b) => b.clone(),
            (a, None) => a.clone(),
        };
        for (axis, assumption) in held {
            let declared = Declared { tensor: self.model.name(v).to_string(), output: is_output };
            self.assume(n, axis, assumption, Some(declared));
        }
        if let Some(what) = clash {
            let kind = if is_output { "graph output" } else { "value_info" };
            let severity = if is_output || type_clash { Severity::Error } else { Severity::Warning };
            let msg = format!("{kind} '{}' contradicts inference: {what}", self.model.name(v));
            self.flag(n, severity, Code::DeclaredShapeMismatch, msg);
        }
        Some(Type::Tensor { dtype: id.or(*dd), shape })
    }

    /// True when term `a` (and `b`, if given) is built over one input dim of the main graph and
    /// nothing else, the same dim for both.
    fn over_one_input_dim(&self, a: &Term, b: Option<&Term>) -> bool {
        let inputs = self.input_dims.get_or_init(|| self.model.input_dims());
        let x = a.atoms();
        x.len() == 1 && b.is_none_or(|b| b.atoms() == x) && x[0].as_name().is_some_and(|n| inputs.contains(n))
    }

    /// The finding of a rule's error; `aligned`: inputs align at their last axis (numpy's rule),
    /// so an axis of the output can be named in each input's own terms.
    fn rule_error(&self, n: NodeId, e: RuleError, aligned: bool) -> Diagnostic {
        let model = self.model;
        let node = model.node(n);
        let name =
            |i: usize| node.inputs.get(i).copied().flatten().map(|v| model.name(v).to_string()).unwrap_or_default();
        let msg = match e {
            RuleError::Broadcast(BroadcastError::Clash { axis, sizes }) => {
                // Inputs align at their last axis: name the axis in each input's own terms where
                // its rank is not the output's.
                let rank =
                    |i: usize| node.inputs.get(i).copied().flatten().and_then(|v| self.out.shape(v)).map(Vec::len);
                let out_rank = (0..node.inputs.len()).filter_map(rank).max().unwrap_or(0);
                let parts: Vec<String> = sizes
                    .iter()
                    .map(|(i, d)| match rank(*i).and_then(|r| (axis + r).checked_sub(out_rank)) {
                        Some(own) if aligned && own != axis => format!("'{}' has size {d} (its axis {own})", name(*i)),
                        _ => format!("'{}' has size {d}", name(*i)),
                    })
                    .collect();
                let at = if parts.iter().any(|p| p.contains("(its axis")) { " of the output" } else { "" };
                let msg = format!("inputs do not broadcast: at axis {axis}{at}, {}", parts.join(" and "));
                let mut d = self.diag(n, Severity::Error, Code::BroadcastIncompatible, msg);
                d.axis = Some(axis);
                d.sizes = sizes.iter().map(|(i, s)| (*i, s.to_string())).collect();
                // Where each clashing size came from, for the first clashes of a model.
                if self.traced.get() < MAX_TRACED {
                    self.traced.set(self.traced.get() + 1);
                    let positions = self.position.get_or_init(|| model.positions());
                    for (i, size) in &sizes {
                        let own =
                            rank(*i).and_then(|r| if aligned { (axis + r).checked_sub(out_rank) } else { Some(axis) });
                        let Some(v) = node.inputs.get(*i).copied().flatten() else { continue };
                        // Where the input is not aligned at its last axis (the legacy `axis`),
                        // the axis holding the clashing size.
                        let shape = self.out.shape(v);
                        let own = own.filter(|a| shape.is_some_and(|s| s.get(*a) == Some(size))).or_else(|| {
                            let s = shape?;
                            let mut at = s.iter().enumerate().filter(|(_, d)| *d == size).map(|(a, _)| a);
                            at.next().filter(|_| at.next().is_none())
                        });
                        let Some(own) = own else { continue };
                        if let Some(o) = crate::provenance::trace(model, &self.out, positions, v, own) {
                            d.origins.push((*i, o.render(&|d: &Dim| d.to_string())));
                        }
                    }
                }
                return d;
            }
            RuleError::Broadcast(BroadcastError::Rank { input, rank, target }) => {
                format!("'{}' has rank {rank}, more than the rank {target} it must broadcast to", name(input))
            }
            RuleError::Broadcast(BroadcastError::BadDims { dims, rank }) => {
                let (b, a) = (name(1), name(0));
                format!("the broadcast places '{b}' at axes {dims:?}, outside the {rank} axes of '{a}'")
            }
            RuleError::Unequal { input, rule } => {
                let shape = |i: usize| {
                    node.inputs.get(i).copied().flatten().map_or_else(|| "?".to_string(), |v| self.render(v))
                };
                let (op, first, other) = (&node.op_type, name(0), name(input));
                let (a, b) = (shape(0), shape(input));
                format!("{op}'s inputs must have equal shapes {rule}: '{first}' is {a} and '{other}' is {b}")
            }
            RuleError::Window(msg) => return self.diag(n, Severity::Error, Code::WindowTooLarge, msg),
            RuleError::Invalid(msg) => return self.diag(n, Severity::Error, Code::InvalidNode, msg),
        };
        // With where each of the node's inputs comes from (a finding about whole shapes, such as
        // ranks, has no one size to trace).
        let mut d = self.diag(n, Severity::Error, Code::BroadcastIncompatible, msg);
        let positions = self.position.get_or_init(|| model.positions());
        for (i, v) in node.inputs.iter().enumerate() {
            if let Some(v) = v {
                d.origins.push((i, crate::provenance::source_of(model, positions, *v)));
            }
        }
        d
    }

    fn subgraph(&mut self, n: NodeId, sub: GraphId) {
        let model = self.model;
        let node = model.node(n);
        let g = model.graph(sub);
        // Loop bodies take (iteration number, condition, loop-carried values...).
        if node.op_type == "Loop" {
            for (i, input) in g.inputs.iter().enumerate() {
                if let Some(declared) = input.ty.as_ref().filter(|t| t.shape().is_some()) {
                    // onnxruntime merges the condition's type into the body's declaration and
                    // refuses a contradiction; it infers carried values from the declarations,
                    // as here, but runs the body on them as they are: a declaration the initial
                    // value contradicts is a warning.
                    let fed = node.inputs.get(i).copied().flatten().filter(|_| i >= 1);
                    if let Some((v, what)) = fed.and_then(|v| Some((v, contradiction(self.out.ty(v)?, declared)?))) {
                        let (body_in, value) = (model.name(input.value), model.name(v));
                        let msg = format!("body input '{body_in}' contradicts the value '{value}' fed to it: {what}");
                        let severity = if i == 1 { Severity::Error } else { Severity::Warning };
                        self.flag(n, severity, Code::DeclaredShapeMismatch, msg);
                    }
                    if i == 1 {
                        self.out.values.set(input.value, Some(vec![Dim::Known(1)]));
                    }
                    continue;
                }
                let ty = match i {
                    0 => Some(Type::tensor(Some(DType::I64), Some(vec![]))),
                    1 => Some(Type::tensor(Some(DType::Bool), Some(vec![]))),
                    // A carried value may change shape across iterations: keep its rank and
                    // element type only.
                    _ => node.inputs.get(i).copied().flatten().and_then(|v| self.out.ty(v)).map(|t| match t {
                        Type::Tensor { dtype, shape } => {
                            Type::tensor(*dtype, shape.as_ref().map(|s| vec![Dim::Unknown; s.len()]))
                        }
                        other => other.clone(),
                    }),
                };
                // The body runs only while the condition is true.
                let value = (i == 1).then(|| vec![Dim::Known(1)]);
                self.set(input.value, ty, value);
            }
        }
        if node.op_type == "Scan" && node.domain.is_empty() {
            self.scan_body(n, sub);
        }
        let encoder = matches!(node.attr("encoder"), Some(crate::ir::AttrValue::Graph(e)) if *e == sub);
        if encoder && node.domain == "com.microsoft" && node.op_type.ends_with("BeamSearch") {
            self.encoder_inputs(n, sub);
        }
        self.graph(sub);
    }

    /// BeamSearch and WhisperBeamSearch feed input_ids (Whisper: the audio features) to their
    /// encoder's first input as they are. onnxruntime runs the encoder on what it is fed,
    /// whatever the encoder declares (a stale [B, 80, 2999] runs 3000 frames), so the encoder is
    /// inferred on that: a Whisper fed 100 frames fails in its position table. The names the
    /// encoder declares for the fed sizes (its `batch_size`) are the node's in its other inputs.
    fn encoder_inputs(&mut self, n: NodeId, sub: GraphId) {
        let model = self.model;
        let g = model.graph(sub);
        let fed = model.node(n).inputs.first().copied().flatten().and_then(|v| self.out.ty(v)).cloned();
        let (Some(first), Some(fed)) = (g.inputs.first(), fed) else { return };
        let mut names: HashMap<&str, Dim> = HashMap::new();
        if let (Some(declared), Some(sizes)) = (first.ty.as_ref().and_then(Type::shape), fed.shape()) {
            if declared.len() == sizes.len() {
                let named = declared.iter().zip(sizes).filter_map(|(d, f)| Some((d.term()?.as_name()?, f.clone())));
                names.extend(named);
            }
        }
        self.set(first.value, Some(fed), None);
        self.typed_by_node.insert(first.value);
        for input in &g.inputs[1..] {
            let Some(declared) = &input.ty else { continue };
            let renamed = declared.map_dims(&|d| match d.term() {
                Some(t) => t.substitute(&|a| a.as_name().and_then(|name| names.get(name).cloned())),
                None => d.clone(),
            });
            let ty = self.bind(&renamed);
            self.set(input.value, Some(ty), None);
            self.typed_by_node.insert(input.value);
        }
    }

    /// Types a Scan body's inputs from the node: state values as they are, scan inputs with
    /// their scan axis removed.
    fn scan_body(&mut self, n: NodeId, sub: GraphId) {
        let model = self.model;
        let node = model.node(n);
        let opset = model.opset_or_default("");
        let offset = usize::from(opset < 9);
        let m = node.attr_int("num_scan_inputs").unwrap_or(0).max(0) as usize;
        let body = model.graph(sub);
        let n_state = node.inputs.len().saturating_sub(offset + m);
        let axes = node.attr_ints("scan_input_axes");
        for (i, input) in body.inputs.iter().enumerate() {
            let Some(t) = node.inputs.get(offset + i).copied().flatten().and_then(|v| self.out.ty(v)) else { continue };
            let ty = match t {
                // Before opset 9 a state keeps its batch axis outside the body.
                Type::Tensor { dtype, shape: Some(s) } if i < n_state && opset < 9 => {
                    Type::tensor(*dtype, s.get(1..).map(<[Dim]>::to_vec))
                }
                _ if i < n_state => t.clone(),
                Type::Tensor { dtype, shape: Some(s) } => {
                    let r = s.len() as i64;
                    // Before opset 9 axis 0 is the batch and axis 1 the sequence.
                    let a = match axes.and_then(|a| a.get(i - n_state).copied()).unwrap_or(0) {
                        _ if opset < 9 => 1,
                        a if a < 0 => a + r,
                        a => a,
                    };
                    let mut s2 = s.clone();
                    if (0..r).contains(&a) {
                        s2.remove(a as usize);
                        if opset < 9 && !s2.is_empty() {
                            s2.remove(0);
                        }
                        Type::tensor(*dtype, Some(s2))
                    } else {
                        Type::tensor(*dtype, None)
                    }
                }
                other => other.clone(),
            };
            if let Some(declared) = input.ty.as_ref().filter(|t| t.shape().is_some()) {
                // onnxruntime merges what the node feeds into the body's declarations and
                // refuses the model where they differ.
                if let Some(what) = contradiction(&ty, declared) {
                    let msg =
                        format!("body input '{}' contradicts what the node feeds it: {what}", model.name(input.value));
                    self.flag(n, Severity::Error, Code::DeclaredShapeMismatch, msg);
                }
                continue;
            }
            self.set(input.value, Some(ty), None);
        }
    }

    /// If's outputs: each branch's output, merged dim by dim. Where the branches give an
    /// output different ranks and the condition is not known, the output has no rank, and a
    /// warning says so (binding the symbols the condition depends on decides it).
    fn if_outputs(&mut self, n: NodeId, node: &crate::ir::Node) -> Out {
        let model = self.model;
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
        // A condition known at inference time picks its branch.
        let cond = node.inputs.first().copied().flatten();
        if let Some([Dim::Known(k)]) = cond.and_then(|v| self.out.value(v)) {
            let g = if *k != 0 { then } else { other };
            let values = model.graph(g).outputs.iter().map(|o| self.out.value(o.value).map(<[Dim]>::to_vec)).collect();
            return Out { types: outs(g).into(), values, ..Out::default() };
        }
        let (a, b) = (outs(then), outs(other));
        for (k, (x, y)) in a.iter().zip(&b).enumerate() {
            let rank = |t: &Option<Type>| t.as_ref().and_then(Type::shape).map(Vec::len);
            let (Some(p), Some(q)) = (rank(x), rank(y)) else { continue };
            if p != q {
                let cond = cond.map(|c| model.name(c)).unwrap_or("(absent)");
                let msg = format!(
                    "output {k} has rank {p} in then_branch and rank {q} in else_branch, and the condition '{cond}' is not known here, so its rank is left unknown; binding the symbols it depends on with --dim decides it"
                );
                self.flag(n, Severity::Warning, Code::BranchRankDiffers, msg);
            }
        }
        let types = a.into_iter().zip(b).map(|(a, b)| merge(a, b)).collect();
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

/// Where a declared type contradicts an inferred one, in words: the element type, the rank or
/// a known size (the first of these that differs); `None` where they agree or one is unknown.
pub fn contradiction(inferred: &Type, declared: &Type) -> Option<String> {
    let (Type::Tensor { dtype: id, shape: is }, Type::Tensor { dtype: dd, shape: ds }) = (inferred, declared) else {
        return None;
    };
    if let Some((a, b)) = id.zip(*dd).filter(|(a, b)| a != b) {
        return Some(format!("element type {b} is declared, {a} is inferred"));
    }
    let (Some(a), Some(b)) = (is, ds) else { return None };
    if a.len() != b.len() {
        return Some(format!("rank {} is declared, {} is inferred", b.len(), a.len()));
    }
    a.iter().zip(b).enumerate().find_map(|(axis, (x, y))| match (x, y) {
        (Dim::Known(p), Dim::Known(q)) if p != q => {
            Some(format!("size {q} is declared at axis {axis}, {p} is inferred"))
        }
        _ => None,
    })
}

/// Applies a row of the op table to a node.
pub fn apply(def: &ops::OpDef, c: &Ctx) -> Result<Out, RuleError> {
    let present: ops::PerInput<usize> = (0..c.inputs.len()).filter(|i| c.node.inputs[*i].is_some()).collect();
    let shapes: Option<ops::PerInput<&[Dim]>> = present.iter().map(|i| c.shape(*i)).collect();
    if let Some(check) = def.meaning.check {
        check(c)?;
    }
    let mut out = match def.shape {
        ShapeRule::Multi => match shapes {
            Some(s) => broadcast_out(shape::multi(&s).map_err(|e| RuleError::broadcast_among(e, &present))?),
            None => tensor_out(None),
        },
        ShapeRule::Equal(why) => match shapes {
            Some(s) => broadcast_out(equal(&s).map_err(|e| unequal(e, &present, why))?),
            None => tensor_out(None),
        },
        ShapeRule::Uni { to, from } => match (c.shape(to), c.shape(from)) {
            (Some(t), Some(f)) => broadcast_out(shape::uni(t, f, from).map_err(RuleError::Broadcast)?),
            (t, _) => tensor_out(t.map(<[Dim]>::to_vec)),
        },
        ShapeRule::Legacy => match (c.shape(0), c.shape(1)) {
            (Some(a), Some(b)) if c.node.attr_int("broadcast").unwrap_or(0) != 0 => {
                broadcast_out(shape::legacy(a, b, c.node.attr_int("axis")).map_err(RuleError::Broadcast)?)
            }
            (Some(a), Some(b)) => {
                broadcast_out(equal(&[a, b]).map_err(|e| unequal(e, &[0, 1], "unless broadcast=1 is set"))?)
            }
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
                (Some(x), Some(t)) => broadcast_out(shape::expand(x, &t).map_err(RuleError::Broadcast)?),
                _ => tensor_out(None),
            }
        }
        ShapeRule::SameAs(i) => tensor_out(c.shape(i).map(<[Dim]>::to_vec)),
        ShapeRule::Custom(f) => f(c)?,
    };
    if let Some(v) = fold(def.meaning.fold, c, &out) {
        out.values = vec![Some(v)];
    } else if let Some(s) = fold_spread(def.meaning, c, &out) {
        out.spreads = vec![Some(s)];
    }
    if let Some(v) = fold_floats(def.meaning.floats, c, &out) {
        out.floats = vec![Some(v)];
    } else if let Some(r) = fold_ratio(def.meaning.ratio, c, &out) {
        match r.den {
            1 => out.values = vec![Some(r.num)],
            _ => out.ratios = vec![Some(r)],
        }
    }
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

/// How an initializer's type contradicts its graph input's declaration: another element type,
/// rank or known size (a symbol declared there takes any size).
fn init_misfit(declared: Option<&Type>, held: &Type) -> Option<String> {
    let declared = declared?;
    if let (Some(d), Some(h)) = (declared.dtype(), held.dtype()) {
        if d != h {
            return Some(format!("declares element type {d}, its initializer holds {h}"));
        }
    }
    let (d, h) = (declared.shape()?, held.shape()?);
    let differs = d.len() != h.len()
        || d.iter().zip(h).any(|(a, b)| matches!((a.known(), b.known()), (Some(a), Some(b)) if a != b));
    differs.then(|| format!("declares shape {}, its initializer holds {}", shape::render(d), shape::render(h)))
}

/// What is wrong with a node that leaves a required input or output empty.
fn empty_required(arity: ops::Arity, node: &crate::ir::Node) -> Option<String> {
    let (what, k) = arity.empty_required(&node.inputs, node.outputs())?;
    Some(format!("leaves {what} {k} empty, which it requires"))
}

/// An attribute's string value as a message shows it: an empty one as ''.
fn shown(v: &str) -> &str {
    if v.is_empty() {
        "''"
    } else {
        v
    }
}

/// `a, b or c`, each `shown`.
fn or_list(list: &[String]) -> String {
    let q: Vec<&str> = list.iter().map(|v| shown(v)).collect();
    match q.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// What is wrong with a node's attributes by its schema: a name the schema lacks, one given
/// twice, a required one missing, or one of another kind (an int `alpha` where the schema's is
/// a float). Attributes of a kind this build does not read are not compared.
fn attr_misfit(node: &crate::ir::Node, schema: ops::Attrs) -> Option<String> {
    let names: Vec<&str> = node.attrs.iter().map(|a| a.name.as_str()).collect();
    let unknown: Vec<&str> = names.iter().copied().filter(|a| schema.kind(a).is_none()).collect();
    if !unknown.is_empty() {
        return Some(format!("has no attribute '{}'", unknown.join("', '")));
    }
    if let Some(twice) = names.iter().enumerate().find(|(i, a)| names[..*i].contains(a)).map(|(_, a)| a) {
        return Some(format!("has the attribute '{twice}' twice"));
    }
    if let Some(missing) = schema.required().find(|r| !names.contains(r)) {
        return Some(format!("needs the attribute '{missing}'"));
    }
    // Each kind in words, by its `AttributeProto.type` (1 to 14).
    const WORDS: [&str; 14] = [
        "a float",
        "an int",
        "a string",
        "a tensor",
        "a graph",
        "floats",
        "ints",
        "strings",
        "tensors",
        "graphs",
        "a sparse tensor",
        "sparse tensors",
        "a type",
        "types",
    ];
    let word = |k: i32| usize::try_from(k - 1).ok().and_then(|i| WORDS.get(i)).copied().unwrap_or("another kind");
    node.attrs.iter().find_map(|a| {
        let (given, want) = (crate::io::attr_type(&a.value)?, schema.kind(&a.name)?);
        (want != given).then(|| format!("has {} '{}' where the schema's is {}", word(given), a.name, word(want)))
    })
}

/// The number of elements of a shape whose dims are all known.
fn numel(shape: &[Dim]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, d| acc.checked_mul(usize::try_from(d.known()?).ok()?))
}

/// Shape-tensor propagation through an elementwise op: each output element from the
/// broadcast input elements, when every input's contents and the output's shape are known.
fn fold(f: ops::Fold, c: &Ctx, out: &Out) -> Option<Vec<Dim>> {
    if matches!(f, ops::Fold::None) {
        return None;
    }
    let out_type = out.types.first()?.as_ref()?;
    // Float contents are whole numbers (sizes cast to float): moved, never computed on, as
    // float arithmetic (a Div) is not the integer arithmetic of `Dim`.
    let float = |t: Option<&Type>| t.and_then(Type::dtype).is_some_and(DType::is_float);
    if matches!(f, ops::Fold::Unary(_) | ops::Fold::Binary(_))
        && (float(Some(out_type)) || c.inputs.iter().any(|t| float(*t)))
    {
        return None;
    }
    let oshape = out_type.shape()?;
    let n = numel(oshape).filter(|n| *n <= ops::MAX_TRACKED)?;
    let k = if matches!(f, ops::Fold::Broadcast0) { 1 } else { c.inputs.len() };
    let mut ins = Vec::with_capacity(k);
    for i in 0..k {
        let s = c.shape(i)?;
        let v = c.value(i)?;
        if numel(s)? != v.len() || s.len() > oshape.len() {
            return None;
        }
        ins.push((s, v));
    }
    let rank = oshape.len();
    let dims: Vec<usize> = oshape.iter().map(|d| d.known().map(|x| x as usize)).collect::<Option<_>>()?;
    let mut result = Vec::with_capacity(n);
    let mut idx = vec![0usize; rank];
    for _ in 0..n {
        let elems: Vec<&Dim> = ins
            .iter()
            .map(|(s, v)| {
                let off = rank - s.len();
                let mut flat = 0usize;
                for (j, d) in s.iter().enumerate() {
                    let size = d.known().unwrap_or(1) as usize;
                    let i = if size == 1 { 0 } else { idx[off + j] };
                    flat = flat * size + i;
                }
                &v[flat]
            })
            .collect();
        let e = match (f, elems.as_slice()) {
            (ops::Fold::Unary(g), [a]) => g(a),
            (ops::Fold::Binary(g), [a, rest @ ..]) if !rest.is_empty() => {
                rest.iter().fold((*a).clone(), |acc, b| g(&acc, b))
            }
            (ops::Fold::Broadcast0, [a]) => (*a).clone(),
            (ops::Fold::Where, [cond, x, y]) => match cond.known() {
                Some(0) => (*y).clone(),
                Some(_) => (*x).clone(),
                None if x == y => (*x).clone(),
                None => Dim::Unknown,
            },
            _ => return None,
        };
        result.push(e);
        for j in (0..rank).rev() {
            idx[j] += 1;
            if idx[j] < dims[j] {
                break;
            }
            idx[j] = 0;
        }
    }
    Some(result)
}

/// Floating-point contents through the elementwise ops the expanded function bodies use
/// to compute sizes (Range's `ceil((limit - start) / delta)`), each step rounded as
/// onnxruntime computes it: float32 `1 / 0.1` is 10, not 9.99... onnxruntime's CPU kernels
/// compute float16 and bfloat16 in float32, and whether a result is then rounded to the type
/// depends on the graph (a Cast after it may fold the rounding away), so such a result is kept
/// only where the type holds it exactly.
fn fold_floats(f: ops::FloatFold, c: &Ctx, out: &Out) -> Option<Vec<f64>> {
    if matches!(f, ops::FloatFold::None) {
        return None;
    }
    let dtype = c.dtype(0).filter(|d| d.is_float())?;
    // Each step in float32, float64 exactly; the float8 and float4 types are not folded.
    let step = |x: f64| match dtype {
        DType::F64 => Some(x),
        DType::F32 | DType::F16 | DType::BF16 => Some(x as f32 as f64),
        _ => None,
    };
    let round = |x: f64| step(x).filter(|r| dtype.round_float(*r) == Some(*r));
    // Pow's exponent may be an integer tensor.
    let ins: Vec<Vec<f64>> = (0..c.inputs.len()).map(|i| c.numbers(i)).collect::<Option<_>>()?;
    let n = scalars_or_same(out, ins.iter().map(Vec::len))?;
    let at = |v: &[f64], i: usize| *elem(v, i);
    match (f, ins.as_slice()) {
        (ops::FloatFold::Binary(f), [a, rest @ ..]) if !rest.is_empty() => {
            (0..n).map(|i| round(rest.iter().try_fold(at(a, i), |acc, b| step(f(acc, at(b, i))))?)).collect()
        }
        (ops::FloatFold::Unary(f), [a]) => (0..n).map(|i| round(f(at(a, i)))).collect(),
        _ => None,
    }
}

/// The element count of an elementwise op's small output when each input, of the lengths
/// `lens`, is a scalar or of that count: enough for size arithmetic.
fn scalars_or_same(out: &Out, mut lens: impl Iterator<Item = usize>) -> Option<usize> {
    let n = numel(out.types.first()?.as_ref()?.shape()?).filter(|n| *n <= ops::MAX_TRACKED)?;
    lens.all(|l| l == 1 || l == n).then_some(n)
}

/// Element `i` of a scalar or same-size input (see [`scalars_or_same`]).
fn elem<T>(v: &[T], i: usize) -> &T {
    &v[if v.len() == 1 { 0 } else { i }]
}

/// Sizes through floating-point arithmetic: TorchScript traces `math.ceil(h / 2) * 2` on a
/// size as `Mul(Ceil(Div(Cast(h), 2.0)), 2.0)`. Each element is a size `n / d` over a whole
/// number `d <= 1024`, computed exactly, as float32 computes it while `n` is below 2^24: over a
/// power of two every step is exact; over another `d` the one rounding of the division is below
/// `1/d`, the least distance from `n / d` to a whole number it is not, so a Ceil or Floor right
/// after it is exact, and nothing else may follow it (`(h / 7 + 8) * 7` is 61.99.. in float32
/// at h = 6). Known numerators past 2^24 are unknown, as in Cast; symbolic ones are taken to be
/// below it. Scalars and same-size inputs only.
fn fold_ratio(f: ops::RatioFold, c: &Ctx, out: &Out) -> Option<ops::Ratio> {
    use ops::RatioFold as R;
    if matches!(f, R::None) || !matches!(c.dtype(0), Some(DType::F32 | DType::F64)) {
        return None;
    }
    let ins: Vec<ops::Ratio> = (0..c.inputs.len()).map(|i| c.ratio(i)).collect::<Option<_>>()?;
    let n = scalars_or_same(out, ins.iter().map(|r| r.num.len()))?;
    if !matches!(f, R::Ceil | R::Floor) && ins.iter().any(|r| r.den & (r.den - 1) != 0) {
        return None;
    }
    let at = |r: &ops::Ratio, i: usize| elem(&r.num, i).clone();
    let k = |x: i64| Dim::Known(x);
    let (num, den): (Vec<Dim>, i64) = match (f, ins.as_slice()) {
        (R::Ceil, [a]) => ((0..n).map(|i| at(a, i).div_ceil(&k(a.den))).collect(), 1),
        (R::Floor, [a]) => ((0..n).map(|i| at(a, i).div_floor(&k(a.den))).collect(), 1),
        (R::Add | R::Sub, [a, b]) => {
            let den = shape::lcm(a.den, b.den)?;
            let term = |r: &ops::Ratio, i| at(r, i).mul(&k(den / r.den));
            let op = |x: Dim, y: Dim| if matches!(f, R::Add) { x.add(&y) } else { x.sub(&y) };
            ((0..n).map(|i| op(term(a, i), term(b, i))).collect(), den)
        }
        (R::Mul, [a, b]) => ((0..n).map(|i| at(a, i).mul(&at(b, i))).collect(), a.den.checked_mul(b.den)?),
        // By a known number `p / q`: times `q`, over `p`.
        (R::Div, [a, b]) => {
            let &[Dim::Known(p)] = &b.num[..] else { return None };
            let den = a.den.checked_mul(p.checked_abs()?).filter(|d| *d != 0)?;
            ((0..n).map(|i| at(a, i).mul(&k(b.den * p.signum()))).collect(), den)
        }
        _ => return None,
    };
    if den > 1024 {
        return None;
    }
    // Over 1 where every element divides exactly (`(2h) / 2` is `h`).
    let whole: Option<Vec<Dim>> =
        num.iter().map(|x| Some(x.div_floor(&k(den))).filter(|q| q.mul(&k(den)) == *x)).collect();
    let (num, den) = match whole {
        Some(w) if den > 1 => (w, 1),
        _ => (num, den),
    };
    let limit = if c.dtype(0) == Some(DType::F32) { 1 << 24 } else { 1 << 53 };
    let num = num
        .into_iter()
        .map(|x| if x.known().is_some_and(|v| v.unsigned_abs() > limit) { Dim::Unknown } else { x })
        .collect();
    Some(ops::Ratio { num, den })
}

/// The spread of an output whose contents are not held: Expand's is its input's; Where's
/// spans both choices'; a sum's,
/// difference's or product's of integers, from its inputs' bounds (`arange(seq) + 2`, BART's
/// positions, is from 2 to `seq+1`; `arange(batch) * seq + arange(seq)`, flat positions, from 0
/// to `batch*seq-1`), a product's only of inputs that are not negative.
fn fold_spread(m: &ops::Meaning, c: &Ctx, out: &Out) -> Option<ops::Spread> {
    use ops::RatioFold as R;
    if matches!(m.fold, ops::Fold::Broadcast0) {
        let shape = out.types.first()?.as_ref()?.shape().map(Vec::as_slice);
        return c.spreads.first().copied().flatten().map(|s| s.fit(shape));
    }
    if matches!(m.fold, ops::Fold::Where) {
        let (a, b) = (c.between(1)?, c.between(2)?);
        let (lo, hi) = (Dim::min_of(&[&a.lo, &b.lo]), Dim::max_of(&[&a.hi, &b.hi]));
        return Some(ops::Spread::Between(ops::Bounds { lo, hi, tight: false }));
    }
    if !matches!(m.ratio, R::Add | R::Sub | R::Mul) || !c.dtype(0).is_some_and(DType::is_int) {
        return None;
    }
    let (a, b) = (c.between(0)?, c.between(1)?);
    let (lo, hi) = match m.ratio {
        R::Add => (a.lo.add(&b.lo), a.hi.add(&b.hi)),
        R::Sub => (a.lo.sub(&b.hi), a.hi.sub(&b.lo)),
        _ if a.lo.is_nonneg() && b.lo.is_nonneg() => (a.lo.mul(&b.lo), a.hi.mul(&b.hi)),
        _ => return None,
    };
    // Each pair of elements meets somewhere where no axis has two sizes other than 1 (an
    // outer sum: `arange(s)[:, None] - arange(s)[None, :]`), so the extremes are reached.
    let (sa, sb) = (c.shape(0)?, c.shape(1)?);
    let other = |s: &[Dim], k: usize| k < s.len() && s[s.len() - 1 - k] != Dim::Known(1);
    let outer = (0..sa.len().max(sb.len())).all(|k| !(other(sa, k) && other(sb, k)));
    let tight = a.tight && b.tight && outer;
    (lo != Dim::Unknown && hi != Dim::Unknown).then_some(ops::Spread::Between(ops::Bounds { lo, hi, tight }))
}

fn tensor_out(shape: Option<Shape>) -> Out {
    Out { types: smallvec::smallvec![Some(Type::tensor(None, shape))], ..Out::default() }
}

/// The one output of a broadcast (element type set later), with its side conditions.
fn broadcast_out(b: Broadcast<Dim>) -> Out {
    Out { assumptions: b.assumptions, ..tensor_out(Some(b.shape)) }
}

/// The error of inputs that must have equal shapes, naming the input that differs from the
/// first by its node slot.
fn unequal(e: BroadcastError<Dim>, present: &[usize], rule: &'static str) -> RuleError {
    let input = match e {
        BroadcastError::Clash { sizes, .. } => sizes.last().map_or(1, |(i, _)| *i),
        BroadcastError::Rank { input, .. } => input,
        BroadcastError::BadDims { .. } => 1,
    };
    RuleError::Unequal { input: present.get(input).copied().unwrap_or(input), rule }
}

/// The one shape all of `shapes` have (ops that take equal shapes only).
fn equal(shapes: &[&[Dim]]) -> Result<Broadcast<Dim>, BroadcastError<Dim>> {
    let Some(first) = shapes.first() else { return Ok(Broadcast { shape: Vec::new(), assumptions: Vec::new() }) };
    let mut out: Shape = first.to_vec();
    let mut assumptions = Vec::new();
    for (i, s) in shapes.iter().enumerate().skip(1) {
        if s.len() != out.len() {
            return Err(BroadcastError::Rank { input: i, rank: s.len(), target: out.len() });
        }
        for (axis, (o, d)) in out.iter_mut().zip(s.iter()).enumerate() {
            let Some((pinned, assumed)) = o.pin(d) else {
                return Err(BroadcastError::Clash { axis, sizes: vec![(0, o.clone()), (i, d.clone())] });
            };
            assumptions.extend(assumed.map(|a| (axis, a)));
            *o = pinned;
        }
    }
    Ok(Broadcast { shape: out, assumptions })
}

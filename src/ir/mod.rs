//! The IR: a model's graphs as one petgraph `StableGraph` of nodes behind typed ids, a table of
//! values, and subgraphs (If/Loop/Scan bodies) as nested graphs that see their parents' values.
//!
//! Every entity keeps the protobuf fields the pass does not interpret in an [`Opaque`] carry,
//! so saving a loaded model writes back exactly what was read.

mod display;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use petgraph::stable_graph::{NodeIndex, StableGraph};
use petgraph::visit::EdgeRef;
use petgraph::Direction;

use crate::dtype::DType;
use crate::shape::{Dim, Term, Type};

/// The encoded protobuf message an IR entity was read from, with the parts the IR owns
/// (names, lists of nodes and values, subgraphs, tensor data) cleared. Empty for entities a
/// rewrite created. Only `io` reads or writes it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Opaque(pub(crate) Vec<u8>);

impl std::fmt::Debug for Opaque {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Opaque({} bytes)", self.0.len())
    }
}

/// A hasher for the program's own ids (`NodeId`, `ValueId`), which are small dense integers
/// no input chooses: one multiply instead of SipHash. Not for names read from a file.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A map keyed by ids, hashed with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The names a graph defines. The table holds only value ids, found by the hash of their name
/// (the name itself is stored once, in the [`Value`]), so a graph of a million values keeps a
/// table small enough for the last-level cache. Hashed with foldhash seeded at random, so
/// that no file can choose names that collide. Look names up with [`Model::local`].
#[derive(Clone, Default)]
pub struct Scope {
    table: hashbrown::HashTable<ValueId>,
    state: foldhash::fast::RandomState,
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scope({} names)", self.table.len())
    }
}

impl Scope {
    /// Enters value `id` (whose name hashes to `hash`) unless the name is already taken:
    /// then returns the value that took it. One probe.
    fn enter(&mut self, values: &[Value], hash: u64, id: ValueId) -> Option<ValueId> {
        use hashbrown::hash_table::Entry;
        let name = &values[id.index()].name;
        let state = &self.state;
        let entry =
            self.table.entry(hash, |v| values[v.index()].name == *name, |v| name_hash(state, &values[v.index()].name));
        match entry {
            Entry::Occupied(e) => Some(*e.get()),
            Entry::Vacant(e) => {
                e.insert(id);
                None
            }
        }
    }
}

/// A name's hash under a scope's seed (a free function, so that it can be called while the
/// scope's table is borrowed mutably).
fn name_hash(state: &foldhash::fast::RandomState, name: &str) -> u64 {
    std::hash::BuildHasher::hash_one(state, name)
}

/// A name held in the IR (node, op type, domain, value): up to 24 bytes inline, so the
/// typical name costs no allocation and is read from the struct that holds it.
pub type Name = compact_str::CompactString;

/// A node's input or output slots: up to four inline, no allocation for the usual node.
pub type Slots = smallvec::SmallVec<[Option<ValueId>; 4]>;

/// A domain as opset imports and nodes compare it: `ai.onnx` is the default domain `""`.
pub(crate) fn norm_domain(d: &str) -> &str {
    if d == "ai.onnx" {
        ""
    } else {
        d
    }
}

/// A value (tensor, sequence, ...) of some graph. Stored as index + 1, so that
/// `Option<ValueId>` takes four bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(std::num::NonZeroU32);

impl std::fmt::Debug for ValueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ValueId({})", self.index())
    }
}

/// A node of some graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(NodeIndex<u32>);

/// A graph: the main graph or a subgraph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GraphId(u32);

impl ValueId {
    /// The index of the value in the model's arena ([`Model::value_ids`] order).
    pub fn index(self) -> usize {
        (self.0.get() - 1) as usize
    }

    /// The id of the value at `index` in the model's arena (saturating: the arena never holds
    /// `u32::MAX` values, as a file that large is refused first).
    fn at(index: usize) -> ValueId {
        ValueId(std::num::NonZeroU32::MIN.saturating_add(u32::try_from(index).unwrap_or(u32::MAX)))
    }
}

impl GraphId {
    /// The index of the graph ([`Model::graph_ids`] order).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The version a domain is read at when the model imports none: 21 for the default domain
/// (onnx's, the newest a model without imports is likely to have been written for), 1 for
/// any other.
pub fn default_opset(domain: &str) -> i64 {
    if norm_domain(domain).is_empty() {
        21
    } else {
        1
    }
}

/// The model's own text for symbolic sizes, by term (a model's `spellings`).
pub type Spellings = HashMap<Term, Box<str>>;

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    /// A graph input (possibly with an initializer as its default).
    Input,
    /// An initializer that is not a graph input.
    Initializer,
    /// Output `slot` of a node.
    Node(NodeId, usize),
    /// A name that nothing in scope defines.
    Undefined,
}

/// A value: a name in one graph's scope.
#[derive(Clone, Debug)]
pub struct Value {
    pub(crate) name: Name,
    pub(crate) graph: GraphId,
    pub(crate) def: Def,
    /// The index into the graph's `initializers`, when one holds this value's data.
    pub(crate) initializer: Option<usize>,
    /// Set when an earlier definition in the same graph already claimed this name.
    pub(crate) shadows: Option<ValueId>,
}

impl Value {
    /// The value's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The graph whose scope holds the name.
    pub fn graph(&self) -> GraphId {
        self.graph
    }

    /// Where the value comes from.
    pub fn def(&self) -> Def {
        self.def
    }

    /// The value an earlier definition of the same name in the same graph made: that one
    /// keeps the name (ONNX's first definition wins).
    pub fn shadows(&self) -> Option<ValueId> {
        self.shadows
    }
}

/// A tensor held in the model: an initializer or an attribute value.
#[derive(Clone, Debug)]
#[allow(clippy::len_without_is_empty)]
pub struct Tensor {
    pub name: String,
    pub dtype: Option<DType>,
    pub dims: Vec<i64>,
    pub data: TensorData,
    pub(crate) proto: Opaque,
}

/// A tensor's elements, in whichever field of `TensorProto` held them.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    /// `raw_data`: little-endian bytes.
    Raw(Vec<u8>),
    Floats(Vec<f32>),
    /// `int32_data`, which also carries int8/16, uint8/16, bool, float16 and bfloat16.
    Int32s(Vec<i32>),
    Int64s(Vec<i64>),
    Doubles(Vec<f64>),
    /// `uint64_data`, which also carries uint32.
    Uint64s(Vec<u64>),
    Strings(Vec<Vec<u8>>),
    /// Stored in another file (`data_location: EXTERNAL`); read on demand and only inside the
    /// model's folder.
    External {
        location: String,
        offset: u64,
        length: Option<u64>,
    },
    /// No elements are stored.
    Empty,
}

impl Tensor {
    /// A new tensor with the given data (for rewrites; nothing carried).
    pub fn new(name: &str, dtype: DType, dims: Vec<i64>, data: TensorData) -> Tensor {
        Tensor { name: name.to_string(), dtype: Some(dtype), dims, data, proto: Opaque::default() }
    }

    /// The number of elements its dims promise, or `None` on a negative dim or overflow.
    pub fn len(&self) -> Option<usize> {
        self.dims.iter().try_fold(1usize, |acc, d| acc.checked_mul(usize::try_from(*d).ok()?))
    }

    /// The elements of an integer tensor stored inline, when there are at most `limit`.
    pub fn ints(&self, limit: usize) -> Option<Vec<i64>> {
        let n = self.len()?;
        if n > limit {
            return None;
        }
        let dtype = self.dtype?;
        let v: Vec<i64> = match &self.data {
            TensorData::Int64s(v) => v.clone(),
            TensorData::Int32s(v) if dtype != DType::Bool => v.iter().map(|x| *x as i64).collect(),
            TensorData::Uint64s(v) => v.iter().map(|x| i64::try_from(*x).ok()).collect::<Option<_>>()?,
            TensorData::Raw(b) => {
                let size = dtype.size()?;
                let chunks = b.chunks_exact(size);
                match dtype {
                    DType::I64 => chunks.map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default())).collect(),
                    DType::I32 => chunks.map(|c| i32::from_le_bytes(c.try_into().unwrap_or_default()) as i64).collect(),
                    DType::I16 => chunks.map(|c| i16::from_le_bytes(c.try_into().unwrap_or_default()) as i64).collect(),
                    DType::I8 => chunks.map(|c| c[0] as i8 as i64).collect(),
                    DType::U8 => chunks.map(|c| c[0] as i64).collect(),
                    DType::U16 => chunks.map(|c| u16::from_le_bytes(c.try_into().unwrap_or_default()) as i64).collect(),
                    DType::U32 => chunks.map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()) as i64).collect(),
                    _ => return None,
                }
            }
            // No data field: right for a tensor of no elements (an empty shape, `[0]`).
            TensorData::Empty if dtype.is_int() => Vec::new(),
            _ => return None,
        };
        (v.len() == n).then_some(v)
    }

    /// A 1-D int64 tensor, as Reshape/Expand/Unsqueeze operands need.
    pub fn i64s(name: &str, values: &[i64]) -> Tensor {
        Tensor::new(name, DType::I64, vec![values.len() as i64], TensorData::Int64s(values.to_vec()))
    }
}

/// An attribute's value. Sparse tensors and type protos stay in the carry as `Other`.
#[derive(Clone, Debug)]
pub enum AttrValue {
    Float(f32),
    Int(i64),
    String(Vec<u8>),
    Tensor(Tensor),
    Graph(GraphId),
    Floats(Vec<f32>),
    Ints(Vec<i64>),
    Strings(Vec<Vec<u8>>),
    Tensors(Vec<Tensor>),
    Graphs(Vec<GraphId>),
    Other,
}

/// A node attribute.
#[derive(Clone, Debug)]
pub struct Attribute {
    pub name: String,
    pub value: AttrValue,
    pub(crate) proto: Opaque,
}

impl Attribute {
    /// The tensors the attribute holds (`t` or `tensors`), none for other kinds.
    pub fn tensors(&self) -> &[Tensor] {
        match &self.value {
            AttrValue::Tensor(t) => std::slice::from_ref(t),
            AttrValue::Tensors(ts) => ts,
            _ => &[],
        }
    }

    /// A new attribute (for rewrites).
    pub fn new(name: &str, value: AttrValue) -> Attribute {
        Attribute { name: name.to_string(), value, proto: Opaque::default() }
    }
}

/// An ONNX node.
#[derive(Clone, Debug)]
pub struct Node {
    pub name: Name,
    pub op_type: Name,
    pub domain: Name,
    pub(crate) graph: GraphId,
    /// One entry per input slot; `None` for an omitted optional input (`""`). Changed only
    /// through [`Model::set_input`], which keeps the edges in step.
    pub(crate) inputs: Slots,
    /// One entry per output slot; `None` for an omitted optional output.
    pub(crate) outputs: Slots,
    pub attrs: Vec<Attribute>,
    pub(crate) proto: Opaque,
}

impl Node {
    /// A new node (for rewrites).
    pub fn new(name: &str, op_type: &str, graph: GraphId) -> Node {
        Node {
            name: Name::new(name),
            op_type: Name::new(op_type),
            domain: Name::default(),
            graph,
            inputs: Slots::new(),
            outputs: Slots::new(),
            attrs: Vec::new(),
            proto: Opaque::default(),
        }
    }

    /// This node with these input slots; [`Model::add_node`] links them.
    pub fn with_inputs(mut self, inputs: impl IntoIterator<Item = Option<ValueId>>) -> Node {
        self.inputs = inputs.into_iter().collect();
        self
    }

    /// This node with these output slots; [`Model::add_node`] makes it their definition.
    pub fn with_outputs(mut self, outputs: impl IntoIterator<Item = Option<ValueId>>) -> Node {
        self.outputs = outputs.into_iter().collect();
        self
    }

    /// The graph the node is in.
    pub fn graph(&self) -> GraphId {
        self.graph
    }

    /// The value in each input slot; `None` for an omitted optional input.
    pub fn inputs(&self) -> &[Option<ValueId>] {
        &self.inputs
    }

    /// The value in each output slot; `None` for an omitted optional output.
    pub fn outputs(&self) -> &[Option<ValueId>] {
        &self.outputs
    }

    /// The attribute named `name`.
    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|a| a.name == name).map(|a| &a.value)
    }

    /// An integer attribute.
    pub fn attr_int(&self, name: &str) -> Option<i64> {
        let Some(AttrValue::Int(i)) = self.attr(name) else { return None };
        Some(*i)
    }

    /// A float attribute.
    pub fn attr_float(&self, name: &str) -> Option<f32> {
        let Some(AttrValue::Float(f)) = self.attr(name) else { return None };
        Some(*f)
    }

    /// An integer-list attribute.
    pub fn attr_ints(&self, name: &str) -> Option<&[i64]> {
        let Some(AttrValue::Ints(v)) = self.attr(name) else { return None };
        Some(v)
    }

    /// A string attribute, as text.
    pub fn attr_str(&self, name: &str) -> Option<String> {
        let Some(AttrValue::String(s)) = self.attr(name) else { return None };
        Some(String::from_utf8_lossy(s).into_owned())
    }

    /// The subgraphs this node holds, with the attribute that holds each.
    pub fn subgraphs(&self) -> Vec<(&str, GraphId)> {
        let mut out = Vec::new();
        for a in &self.attrs {
            match &a.value {
                AttrValue::Graph(g) => out.push((a.name.as_str(), *g)),
                AttrValue::Graphs(gs) => out.extend(gs.iter().map(|g| (a.name.as_str(), *g))),
                _ => {}
            }
        }
        out
    }
}

/// A graph input, output or `value_info` entry: a value and the type declared for it.
#[derive(Clone, Debug)]
pub struct ValueInfo {
    pub value: ValueId,
    pub ty: Option<Type>,
    pub(crate) proto: Opaque,
}

impl ValueInfo {
    /// A new entry (for rewrites).
    pub fn new(value: ValueId, ty: Option<Type>) -> ValueInfo {
        ValueInfo { value, ty, proto: Opaque::default() }
    }
}

/// A graph or subgraph.
#[derive(Clone, Debug)]
pub struct Graph {
    pub name: String,
    /// `main`, or the path to a subgraph such as `if0/then_branch`.
    pub path: String,
    /// The node that holds this subgraph; `None` for the main graph.
    pub(crate) parent: Option<NodeId>,
    /// The nodes in file order (the order they are saved in).
    pub(crate) order: Vec<NodeId>,
    /// Declared types: edit `ty`, not the lists (their values belong to the graph's scope).
    pub inputs: Vec<ValueInfo>,
    pub outputs: Vec<ValueInfo>,
    pub value_info: Vec<ValueInfo>,
    /// Indexed by values' `initializer()`: changed through the model.
    pub(crate) initializers: Vec<Tensor>,
    /// The names this graph defines.
    pub(crate) scope: Scope,
    pub(crate) proto: Opaque,
}

impl Graph {
    /// The node that holds this subgraph; `None` for the main graph.
    pub fn parent(&self) -> Option<NodeId> {
        self.parent
    }

    /// The nodes in file order (the order they are saved in).
    pub fn order(&self) -> &[NodeId] {
        &self.order
    }

    /// The tensors the graph holds (weights, constants, defaults of inputs).
    pub fn initializers(&self) -> &[Tensor] {
        &self.initializers
    }
}

/// A model-local function: an op `domain.name` defined by a body graph.
#[derive(Clone, Debug)]
pub struct Function {
    pub domain: String,
    pub name: String,
    /// The body: its inputs and outputs are the function's formal inputs and outputs.
    pub graph: GraphId,
    /// The opsets the body imports (the model's when empty).
    pub opsets: Vec<Opset>,
    /// The attributes the function declares, with their defaults where it gives one.
    pub attributes: Vec<(String, Option<AttrValue>)>,
    /// Body node attributes that refer to the caller's: (node, attribute, caller's attribute).
    pub refs: Vec<(NodeId, String, String)>,
}

/// An operator set the model imports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opset {
    pub domain: String,
    pub version: i64,
}

/// Each node's index in one graph's order: a dense table when the graph holds a good share of
/// the arena's nodes (the main graph), else a map, so a small subgraph costs no more than its
/// size.
enum Positions {
    Dense(Vec<u32>),
    Sparse(IdMap<NodeIndex<u32>, usize>),
}

impl Positions {
    fn new(order: &[NodeId], bound: usize) -> Positions {
        if order.len().saturating_mul(8) >= bound && u32::try_from(order.len()).is_ok() {
            let mut dense = vec![u32::MAX; bound];
            for (i, n) in order.iter().enumerate() {
                if let Some(slot) = dense.get_mut(n.0.index()) {
                    *slot = i as u32;
                }
            }
            Positions::Dense(dense)
        } else {
            Positions::Sparse(order.iter().enumerate().map(|(i, n)| (n.0, i)).collect())
        }
    }

    fn get(&self, n: NodeIndex<u32>) -> Option<usize> {
        match self {
            Positions::Dense(d) => d.get(n.index()).filter(|i| **i != u32::MAX).map(|i| *i as usize),
            Positions::Sparse(m) => m.get(&n).copied(),
        }
    }
}

/// A loaded ONNX model.
#[derive(Clone, Debug)]
pub struct Model {
    pub ir_version: i64,
    pub opsets: Vec<Opset>,
    pub(crate) graphs: Vec<Graph>,
    pub(crate) values: Vec<Value>,
    /// All nodes of all graphs; an edge runs from a value's producer to each node of the
    /// producer's graph that uses it, directly or inside one of its subgraphs.
    pub(crate) nodes: StableGraph<Node, ValueId>,
    /// The folder the model was read from: external data resolves inside it.
    pub dir: Option<PathBuf>,
    /// Where the file held data this build drops when it writes the model back (protobuf
    /// fields unknown to its schema), e.g. `graph.node[3]: unknown field 99`. Empty when a
    /// save is lossless.
    pub lossy: Vec<String>,
    /// Model-local functions (`FunctionProto`), each body loaded as a graph of its own (no
    /// parent, not reachable from the main graph). Read-only: saving writes the functions
    /// back as they were read.
    pub functions: Vec<Function>,
    /// The model's own text for symbolic sizes whose canonical text differs (an exporter's
    /// `floor(h/2 - 1/2) + 1`), first seen in its declared types: sizes written for tensors
    /// the model did not declare use it, so that other tools see one size, not two.
    pub(crate) spellings: Spellings,
    pub(crate) proto: Opaque,
}

impl Model {
    /// The main graph.
    pub const MAIN: GraphId = GraphId(0);

    /// The graph `id`.
    pub fn graph(&self, id: GraphId) -> &Graph {
        &self.graphs[id.index()]
    }

    /// The outermost graph holding `id` (itself if it is not a subgraph): the main graph or a
    /// function's body, whose opset imports a subgraph sees.
    pub(crate) fn root(&self, mut id: GraphId) -> GraphId {
        while let Some(parent) = self.graph(id).parent {
            id = self.node(parent).graph;
        }
        id
    }

    /// The ids of all graphs, the main graph first.
    pub fn graph_ids(&self) -> impl Iterator<Item = GraphId> {
        (0..self.graphs.len() as u32).map(GraphId)
    }

    /// The graph `id`, mutably.
    pub fn graph_mut(&mut self, id: GraphId) -> &mut Graph {
        &mut self.graphs[id.index()]
    }

    /// How many nodes the model holds, in all graphs.
    pub fn node_count(&self) -> usize {
        self.nodes.node_count()
    }

    /// Every node of every graph (function bodies included), in no particular order.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes.node_indices().map(|i| (NodeId(i), &self.nodes[i]))
    }

    /// Every value of every graph, in the order they were made.
    pub fn value_ids(&self) -> impl Iterator<Item = ValueId> {
        (0..self.values.len()).map(ValueId::at)
    }

    /// The node `id`.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0]
    }

    /// The node `id`, mutably: its name, op type, domain and attributes. Its inputs change
    /// through [`Model::set_input`], so that edges follow.
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.0]
    }

    /// The value `id`.
    pub fn value(&self, id: ValueId) -> &Value {
        &self.values[id.index()]
    }

    /// The value's name.
    pub fn name(&self, id: ValueId) -> &str {
        &self.values[id.index()].name
    }

    /// The version of `domain` the model imports (`""` and `ai.onnx` are the same domain).
    pub fn opset(&self, domain: &str) -> Option<i64> {
        self.opsets.iter().find(|o| norm_domain(&o.domain) == norm_domain(domain)).map(|o| o.version)
    }

    /// The version of `domain` the model's nodes are read at: the imported one, or
    /// [`default_opset`] where the model imports none. Inference, the executor and the
    /// rewrites all ask here, so they cannot disagree.
    pub fn opset_or_default(&self, domain: &str) -> i64 {
        self.opset(domain).unwrap_or_else(|| default_opset(domain))
    }

    /// The node's label in messages: its name, or `op_type#index` when the name is empty.
    pub fn node_label(&self, id: NodeId) -> String {
        let index = || self.graph(self.node(id).graph).order.iter().position(|n| *n == id).unwrap_or(0);
        self.label_at(id, index)
    }

    /// Each node's index in its graph's file order: with [`Model::label_with`], labels for many
    /// nodes in linear time.
    pub fn positions(&self) -> IdMap<NodeId, usize> {
        self.graphs.iter().flat_map(|g| g.order.iter().enumerate().map(|(i, n)| (*n, i))).collect()
    }

    /// [`Model::node_label`] with the positions computed once by [`Model::positions`].
    pub fn label_with(&self, id: NodeId, positions: &IdMap<NodeId, usize>) -> String {
        self.label_at(id, || positions.get(&id).copied().unwrap_or(0))
    }

    fn label_at(&self, id: NodeId, index: impl FnOnce() -> usize) -> String {
        let node = self.node(id);
        if node.name.is_empty() {
            format!("{}#{}", node.op_type, index())
        } else {
            node.name.to_string()
        }
    }

    /// The names of the main graph's inputs that a caller must feed: those without an
    /// initializer as their default, in declaration order (how test data numbers them).
    pub fn free_inputs(&self) -> Vec<String> {
        let main = self.graph(Model::MAIN);
        main.inputs
            .iter()
            .filter(|i| self.value(i.value).initializer.is_none())
            .map(|i| self.name(i.value).to_string())
            .collect()
    }

    /// The symbolic dims (`dim_param`s) the main graph's inputs declare, sorted: the names
    /// `--dim` may bind.
    pub fn input_dims(&self) -> std::collections::BTreeSet<String> {
        let main = self.graph(Model::MAIN);
        main.inputs
            .iter()
            .filter(|i| self.value(i.value).initializer.is_none())
            .filter_map(|i| i.ty.as_ref().and_then(Type::shape))
            .flatten()
            .filter_map(Dim::term)
            .flat_map(Term::atoms)
            .filter_map(|a| a.as_name().map(str::to_string))
            .collect()
    }

    /// Declares the shape of the main graph's input `name` as `dims` (element type kept): for
    /// inputs whose dims have no name a binding could reach.
    pub fn declare_input_shape(&mut self, name: &str, dims: &[i64]) -> crate::Result<()> {
        let v = self.local(Model::MAIN, name);
        let Some(info) = self.graph_mut(Model::MAIN).inputs.iter_mut().find(|i| Some(i.value) == v) else {
            return Err(crate::Error::Usage(format!("the model has no input named '{name}'")));
        };
        let dtype = info.ty.as_ref().and_then(Type::dtype);
        info.ty = Some(Type::tensor(dtype, Some(dims.iter().map(|d| Dim::Known(*d)).collect())));
        Ok(())
    }

    /// Looks `name` up in `graph`'s scope and then its ancestors'.
    pub fn resolve(&self, mut graph: GraphId, name: &str) -> Option<ValueId> {
        loop {
            let g = self.graph(graph);
            if let Some(v) = self.local(graph, name) {
                return Some(v);
            }
            graph = self.node(g.parent?).graph;
        }
    }

    /// The node of graph `in_graph` that is `node` or holds it in a subgraph, if any.
    pub fn ancestor_in(&self, mut node: NodeId, in_graph: GraphId) -> Option<NodeId> {
        loop {
            let g = self.node(node).graph;
            if g == in_graph {
                return Some(node);
            }
            node = self.graph(g).parent?;
        }
    }

    /// The value `name` names in `graph`'s own scope (not its ancestors').
    pub fn local(&self, graph: GraphId, name: &str) -> Option<ValueId> {
        self.local_hashed(graph, name, self.scope_hash(graph, name))
    }

    /// Makes room in `graph`'s scope for `additional` more names.
    pub fn reserve_names(&mut self, graph: GraphId, additional: usize) {
        let Model { graphs, values, .. } = self;
        let scope = &mut graphs[graph.index()].scope;
        let state = &scope.state;
        scope.table.reserve(additional, |v| name_hash(state, &values[v.index()].name));
    }

    /// Adds a value named `name` to `graph`'s scope. A value's name never changes afterwards:
    /// the scope finds values by it.
    pub fn add_value(&mut self, graph: GraphId, name: &str, def: Def) -> ValueId {
        let id = self.push_value(graph, name, def);
        let hash = self.scope_hash(graph, name);
        let Model { graphs, values, .. } = self;
        let shadows = graphs[graph.index()].scope.enter(values, hash, id);
        self.values[id.index()].shadows = shadows;
        id
    }

    /// The hash `graph`'s scope files `name` under, for [`Model::local_hashed`] and
    /// [`Model::enter_names`].
    pub(crate) fn scope_hash(&self, graph: GraphId, name: &str) -> u64 {
        name_hash(&self.graph(graph).scope.state, name)
    }

    /// [`Model::local`] with the name's [`Model::scope_hash`] already known.
    pub(crate) fn local_hashed(&self, graph: GraphId, name: &str, hash: u64) -> Option<ValueId> {
        self.graph(graph).scope.table.find(hash, |v| self.values[v.index()].name == name).copied()
    }

    /// Adds a value to `graph` without entering its name in the scope: `local` and `resolve`
    /// do not find it until [`Model::enter_names`] does.
    pub(crate) fn push_value(&mut self, graph: GraphId, name: &str, def: Def) -> ValueId {
        let id = ValueId::at(self.values.len());
        self.values.push(Value { name: Name::new(name), graph, def, initializer: None, shadows: None });
        id
    }

    /// Enters values added by [`Model::push_value`] in `graph`'s scope, given in the order
    /// they were added, each with its name's [`Model::scope_hash`]. The result is that of
    /// entering them one by one (the first definition of a name claims it, later ones shadow
    /// it), but a large batch is entered grouped by where each name lands in the table, so
    /// that a million names cost a sweep through the table rather than a cache miss each.
    /// Returns true when some value of the batch shadows another.
    pub(crate) fn enter_names(&mut self, graph: GraphId, batch: &[(u64, ValueId)]) -> bool {
        /// Below this many names the table stays in cache: enter them in order.
        const GROUPED_MIN: usize = 1 << 15;
        /// Groups by the top bits of the bucket index.
        const GROUP_BITS: u32 = 12;
        let Model { graphs, values, .. } = self;
        let scope = &mut graphs[graph.index()].scope;
        let state = &scope.state;
        scope.table.reserve(batch.len(), |v| name_hash(state, &values[v.index()].name));
        let grouped;
        let batch = if batch.len() < GROUPED_MIN {
            batch
        } else {
            // hashbrown's first probe for a hash is its low bits under the bucket mask;
            // the bucket count is the capacity's 8/7, a power of two. A wrong guess here
            // costs speed only.
            let buckets = (scope.table.capacity() / 7 * 8).next_power_of_two();
            let shift = buckets.trailing_zeros().saturating_sub(GROUP_BITS);
            let group = |hash: u64| (hash as usize & (buckets - 1)) >> shift;
            // A counting sort: stable, so each name's definitions keep their order.
            let mut starts = vec![0usize; (1 << GROUP_BITS) + 1];
            for (hash, _) in batch {
                starts[group(*hash) + 1] += 1;
            }
            for i in 1..starts.len() {
                starts[i] += starts[i - 1];
            }
            let mut out = vec![(0, ValueId::at(0)); batch.len()];
            for &(hash, id) in batch {
                let slot = &mut starts[group(hash)];
                out[*slot] = (hash, id);
                *slot += 1;
            }
            grouped = out;
            &grouped[..]
        };
        let mut shadowed = false;
        for &(hash, id) in batch {
            if let Some(first) = scope.enter(values, hash, id) {
                values[id.index()].shadows = Some(first);
                shadowed = true;
            }
        }
        shadowed
    }

    /// Adds a graph (for loaders and rewrites); its path is derived from its parent.
    pub fn add_graph(&mut self, mut graph: Graph) -> GraphId {
        let id = GraphId(self.graphs.len() as u32);
        graph.scope = Scope::default();
        self.graphs.push(graph);
        id
    }

    /// Adds `node` to the node arena without placing it in an order: it becomes the
    /// definition of its outputs, and its inputs are linked.
    pub fn add_node(&mut self, node: Node) -> NodeId {
        let id = NodeId(self.nodes.add_node(node));
        for slot in 0..self.nodes[id.0].outputs.len() {
            if let Some(v) = self.nodes[id.0].outputs[slot] {
                self.values[v.index()].def = Def::Node(id, slot);
            }
        }
        for slot in 0..self.nodes[id.0].inputs.len() {
            if let Some(v) = self.nodes[id.0].inputs[slot] {
                self.link(v, id);
            }
        }
        id
    }

    /// Adds the edge for `value` used by `consumer` (see the `nodes` field).
    pub(crate) fn link(&mut self, value: ValueId, consumer: NodeId) {
        if let Def::Node(producer, _) = self.value(value).def {
            let graph = self.node(producer).graph;
            if let Some(user) = self.ancestor_in(consumer, graph) {
                self.nodes.add_edge(producer.0, user.0, value);
            }
        }
    }

    /// Sets input `slot` of `node` to `value`, keeping edges in step.
    pub fn set_input(&mut self, node: NodeId, slot: usize, value: Option<ValueId>) {
        self.set_inputs(&[(node, slot, value)]);
    }

    /// Sets many inputs at once, as [`Model::set_input`] would one by one, with the edges of
    /// each producer that loses uses rebuilt once: petgraph keeps a node's edges in a linked
    /// list, so unlinking the uses of a value read by thousands of nodes one at a time walks
    /// that list each time (40 s for `implicit` of an expanded 100k-node chain).
    pub fn set_inputs(&mut self, changes: &[(NodeId, usize, Option<ValueId>)]) {
        // The edges lost, (producer, user, value) -> how many, and their producers.
        let mut lost: HashMap<(NodeIndex<u32>, NodeIndex<u32>, ValueId), usize> = HashMap::new();
        let mut producers = Vec::new();
        for &(node, slot, value) in changes {
            if let Some(old) = self.node(node).inputs.get(slot).copied().flatten() {
                if let Def::Node(producer, _) = self.value(old).def {
                    if let Some(user) = self.ancestor_in(node, self.node(producer).graph) {
                        *lost.entry((producer.0, user.0, old)).or_default() += 1;
                        producers.push(producer.0);
                    }
                }
            }
            let inputs = &mut self.node_mut(node).inputs;
            if inputs.len() <= slot {
                inputs.resize(slot + 1, None);
            }
            inputs[slot] = value;
            if let Some(v) = value {
                self.link(v, node);
            }
        }
        producers.sort_unstable();
        producers.dedup();
        for producer in producers {
            // Every edge out of the producer, taken off at the head of its list (one step
            // each), and those it keeps put back.
            let edges: Vec<_> = self
                .nodes
                .edges_directed(producer, Direction::Outgoing)
                .map(|e| (e.id(), e.target(), *e.weight()))
                .collect();
            for (e, ..) in &edges {
                self.nodes.remove_edge(*e);
            }
            for (_, user, value) in edges {
                match lost.get_mut(&(producer, user, value)) {
                    Some(k) if *k > 0 => *k -= 1,
                    _ => {
                        self.nodes.add_edge(producer, user, value);
                    }
                }
            }
        }
    }

    /// Removes the nodes `ids` from the arena and their graphs' orders (one pass over each
    /// graph's order, however many nodes); their outputs become undefined.
    pub fn remove_nodes(&mut self, ids: &HashSet<NodeId>) {
        let mut graphs = HashSet::new();
        for id in ids {
            if let Some(node) = self.nodes.remove_node(id.0) {
                graphs.insert(node.graph);
                for v in node.outputs.iter().flatten() {
                    self.values[v.index()].def = Def::Undefined;
                }
            }
        }
        for g in graphs {
            self.graph_mut(g).order.retain(|n| !ids.contains(n));
        }
    }

    /// The nodes of `graph` that use `value`, directly or in their subgraphs.
    pub fn users(&self, value: ValueId) -> Vec<NodeId> {
        match self.value(value).def {
            Def::Node(p, _) => {
                let mut out: Vec<NodeId> = self
                    .nodes
                    .edges_directed(p.0, Direction::Outgoing)
                    .filter(|e| *e.weight() == value)
                    .map(|e| NodeId(e.target()))
                    .collect();
                out.sort();
                out.dedup();
                out
            }
            _ => {
                self.nodes.node_indices().filter(|n| self.nodes[*n].inputs.contains(&Some(value))).map(NodeId).collect()
            }
        }
    }

    /// The nodes of `graph` in a topological order (ties kept in file order), and the nodes
    /// left on a cycle.
    pub fn topo_order(&self, graph: GraphId) -> (Vec<NodeId>, Vec<NodeId>) {
        let order = &self.graph(graph).order;
        let pos = Positions::new(order, petgraph::visit::NodeIndexable::node_bound(&self.nodes));
        // Files usually list nodes in topological order, and then the order below is the
        // file's: each node becomes ready, and the first by position, once those before it
        // are placed.
        let in_order = order.iter().enumerate().all(|(i, n)| {
            self.nodes.edges_directed(n.0, Direction::Incoming).all(|e| pos.get(e.source()).is_none_or(|j| j < i))
        });
        if in_order {
            return (order.clone(), Vec::new());
        }
        let mut indegree = vec![0usize; order.len()];
        for (i, n) in order.iter().enumerate() {
            indegree[i] =
                self.nodes.edges_directed(n.0, Direction::Incoming).filter(|e| pos.get(e.source()).is_some()).count();
        }
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> =
            (0..order.len()).filter(|i| indegree[*i] == 0).map(std::cmp::Reverse).collect();
        let mut sorted = Vec::with_capacity(order.len());
        while let Some(std::cmp::Reverse(i)) = ready.pop() {
            sorted.push(order[i]);
            for e in self.nodes.edges_directed(order[i].0, Direction::Outgoing) {
                if let Some(j) = pos.get(e.target()) {
                    indegree[j] -= 1;
                    if indegree[j] == 0 {
                        ready.push(std::cmp::Reverse(j));
                    }
                }
            }
        }
        let cyclic = order.iter().zip(&indegree).filter(|(_, d)| **d > 0).map(|(n, _)| *n).collect();
        (sorted, cyclic)
    }

    /// Places each `(node, anchor)` (nodes already in the arena) in its graph's order just
    /// before `anchor`, nodes with the same anchor in the order given, or at the end when
    /// `anchor` is not in that order. One pass over each graph's order, however many nodes:
    /// placing them one search at a time took minutes for `expand` of 200,000 nodes.
    pub fn place_before_all(&mut self, placed: &[(NodeId, NodeId)]) {
        let mut at: HashMap<(GraphId, NodeId), Vec<NodeId>> = HashMap::new();
        let mut graphs = Vec::new();
        let mut seen = HashSet::new();
        for &(node, anchor) in placed {
            let graph = self.node(node).graph;
            at.entry((graph, anchor)).or_default().push(node);
            if seen.insert(graph) {
                graphs.push(graph);
            }
        }
        for graph in graphs {
            let old = std::mem::take(&mut self.graph_mut(graph).order);
            let mut order = Vec::with_capacity(old.len() + placed.len());
            for n in old {
                order.extend(at.remove(&(graph, n)).unwrap_or_default());
                order.push(n);
            }
            // Anchors not in the order: at the end, in the order they were given.
            for &(node, anchor) in placed {
                if self.node(node).graph == graph && at.contains_key(&(graph, anchor)) {
                    order.push(node);
                }
            }
            self.graph_mut(graph).order = order;
        }
    }

    /// Makes `tensor` the initializer of `value` (a value of `graph` that nothing defines yet).
    pub fn attach_initializer(&mut self, value: ValueId, mut tensor: Tensor) {
        let graph = self.value(value).graph;
        tensor.name = self.name(value).to_string();
        let inits = &mut self.graph_mut(graph).initializers;
        inits.push(tensor);
        let index = inits.len() - 1;
        let v = &mut self.values[value.index()];
        v.def = Def::Initializer;
        v.initializer = Some(index);
    }

    /// Removes the initializers `dead` (graph, index): the values they defined become undefined
    /// (unless they are also graph inputs) and the other values' initializer indices follow.
    /// One pass over the values, however many initializers.
    pub fn remove_initializers(&mut self, dead: &HashSet<(GraphId, usize)>) {
        // Each graph's new index for every old one, `None` for those removed.
        let mut moved: HashMap<GraphId, Vec<Option<usize>>> = HashMap::new();
        for &(g, _) in dead {
            if moved.contains_key(&g) {
                continue;
            }
            let inits = &mut self.graph_mut(g).initializers;
            let mut next = 0..;
            let map: Vec<Option<usize>> =
                (0..inits.len()).map(|i| if dead.contains(&(g, i)) { None } else { next.next() }).collect();
            let mut kept = map.iter();
            inits.retain(|_| kept.next().is_some_and(Option::is_some));
            moved.insert(g, map);
        }
        for v in self.values.iter_mut() {
            let (Some(map), Some(i)) = (moved.get(&v.graph), v.initializer) else { continue };
            let Some(new) = map.get(i) else { continue };
            v.initializer = *new;
            if v.initializer.is_none() && v.def == Def::Initializer {
                v.def = Def::Undefined;
            }
        }
    }
}

pub use display::dump;

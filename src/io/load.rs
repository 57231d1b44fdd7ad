//! Loading: a `ModelProto`'s bytes into the IR. The main graph is read field by field from the
//! wire (names borrowed, plain nodes keep no carry); anything unusual (a repeated graph field,
//! groups, bad UTF-8, deep nesting) goes through prost's decoder first, so errors are prost's.
//! Model-local functions load as parentless graphs.

use super::*;
use crate::onnx::fields::number::{attribute_proto, graph_proto, model_proto, node_proto};

pub(super) struct Loader<'a> {
    path: &'a Path,
    max_depth: usize,
    model: Model,
}

/// Why the wire-level loader stopped: something it leaves to prost (malformed bytes, a
/// message repeated where prost would merge, groups), or a loading error proper.
pub(super) enum Fail {
    Wire,
    Load(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Load(e)
    }
}

impl From<prost::DecodeError> for Fail {
    fn from(_: prost::DecodeError) -> Fail {
        Fail::Wire
    }
}

pub(super) type Fast<T> = std::result::Result<T, Fail>;

/// The deepest message nesting the wire-level loader takes on; deeper models are decoded by
/// prost as a whole first, so that its recursion limit applies exactly as before.
pub(super) const FAST_DEPTH: usize = 64;

/// Loads the model from its bytes: `fast`, the wire-level loader's result, when nesting allows
/// it, else (or when it met anything it leaves to prost) prost's decoder on the whole message
/// first. Both give the same model and the same errors.
pub(super) fn load_bytes(
    bytes: &[u8],
    path: &Path,
    dir: Option<&Path>,
    limits: &Limits,
    fast: Option<Fast<Model>>,
) -> Result<Model> {
    let full = || {
        onnx::ModelProto::decode(bytes)
            .map_err(|e| Error::Decode { path: path.to_path_buf(), reason: decode_reason(&e) })
    };
    match fast {
        Some(Ok(model)) => return Ok(model),
        Some(Err(Fail::Load(e))) => {
            // prost would have refused the file before loading started.
            full()?;
            return Err(e);
        }
        Some(Err(Fail::Wire)) | None => {}
    }
    let proto = full()?;
    from_proto(proto, path, dir, limits).map_err(|f| match f {
        Fail::Load(e) => e,
        Fail::Wire => {
            Error::Decode { path: path.to_path_buf(), reason: "a message prost wrote does not re-read".into() }
        }
    })
}

/// One field of an encoded message: its number, wire type, the whole field (key included)
/// and, for length-delimited fields, the payload.
pub(super) struct Field<'a> {
    pub(super) number: u32,
    pub(super) wire: u8,
    whole: &'a [u8],
    pub(super) payload: &'a [u8],
}

/// The fields of an encoded message: malformed keys, lengths past the end and invalid wire
/// types are [`Fail::Wire`], left to prost to report; so are groups, which no ONNX message
/// has, unless stepped over whole (`all_fields`, for the unknown-field walk: prost skips an
/// unknown group).
pub(super) struct Fields<'a> {
    buf: &'a [u8],
    groups: bool,
}

impl<'a> Iterator for Fields<'a> {
    type Item = Fast<Field<'a>>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        (!self.buf.is_empty()).then(|| self.field())
    }
}

impl<'a> Fields<'a> {
    #[inline(always)]
    fn field(&mut self) -> Fast<Field<'a>> {
        let all = self.buf;
        let mut pos = 0;
        let key = varint(all, &mut pos).ok_or(Fail::Wire)?;
        let number = u32::try_from(key >> 3).map_err(|_| Fail::Wire)?;
        let wire = (key & 7) as u8;
        if number == 0 || key > u64::from(u32::MAX) {
            return Err(Fail::Wire);
        }
        let start = match wire {
            0 => {
                varint(all, &mut pos).ok_or(Fail::Wire)?;
                pos
            }
            1 | 5 => {
                pos += if wire == 1 { 8 } else { 4 };
                pos
            }
            2 => {
                let len = usize::try_from(varint(all, &mut pos).ok_or(Fail::Wire)?).map_err(|_| Fail::Wire)?;
                let start = pos;
                pos = pos.checked_add(len).ok_or(Fail::Wire)?;
                start
            }
            3 if self.groups => {
                let start = pos;
                super::unknown::skip_group(all, &mut pos).ok_or(Fail::Wire)?;
                start
            }
            _ => return Err(Fail::Wire),
        };
        let whole = all.get(..pos).ok_or(Fail::Wire)?;
        self.buf = &all[pos..];
        Ok(Field { number, wire, whole, payload: &whole[start..] })
    }
}

pub(super) fn fields(buf: &[u8]) -> Fields<'_> {
    Fields { buf, groups: false }
}

/// The fields as `fields` gives them, groups stepped over whole.
pub(super) fn all_fields(buf: &[u8]) -> Fields<'_> {
    Fields { buf, groups: true }
}

/// The payload of a length-delimited field the loader reads itself.
pub(super) fn delimited<'a>(f: &Field<'a>) -> Fast<&'a [u8]> {
    (f.wire == 2).then_some(f.payload).ok_or(Fail::Wire)
}

pub(super) fn text<'a>(f: &Field<'a>) -> Fast<&'a str> {
    let bytes = delimited(f)?;
    // Names are short and almost always ASCII, which a word-at-a-time check settles faster
    // than the general validation.
    if bytes.is_ascii() {
        // SAFETY: ASCII is valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).map_err(|_| Fail::Wire)
}

/// The wire-level loader: the model's own fields and functions through prost, the graph
/// read field by field.
pub(super) fn from_wire(bytes: &[u8], path: &Path, dir: Option<&Path>, limits: &Limits) -> Fast<Model> {
    let mut graph = None;
    let mut rest = Vec::new();
    for f in fields(bytes) {
        let f = f?;
        if f.number == model_proto::GRAPH {
            if graph.is_some() {
                // prost merges a repeated singular message; leave that to it.
                return Err(Fail::Wire);
            }
            graph = Some(delimited(&f)?);
        } else {
            rest.extend_from_slice(f.whole);
        }
    }
    let proto = onnx::ModelProto::decode(rest.as_slice())?;
    let graph = graph.ok_or_else(|| Error::NoGraph { path: path.to_path_buf() })?;
    load_graph(proto, graph, path, dir, limits)
}

pub(super) fn from_proto(mut proto: onnx::ModelProto, path: &Path, dir: Option<&Path>, limits: &Limits) -> Fast<Model> {
    let graph = proto.graph.take().ok_or_else(|| Error::NoGraph { path: path.to_path_buf() })?;
    load_graph(proto, &graph.encode_to_vec(), path, dir, limits)
}

/// Loads the model whose own fields are `proto` (graph taken out) and whose main graph is
/// encoded in `graph`.
pub(super) fn load_graph(
    proto: onnx::ModelProto,
    graph: &[u8],
    path: &Path,
    dir: Option<&Path>,
    limits: &Limits,
) -> Fast<Model> {
    let functions = proto.functions.clone();
    let model = Model {
        ir_version: proto.ir_version.unwrap_or(0),
        opsets: opsets_from(&proto.opset_import),
        graphs: Vec::new(),
        values: Vec::new(),
        nodes: Default::default(),
        dir: dir.map(Path::to_path_buf),
        functions: Vec::new(),
        spellings: Spellings::default(),
        proto: Opaque(proto.encode_to_vec()),
        lossy: Vec::new(),
    };
    let mut loader = Loader { path, max_depth: limits.max_depth, model };
    loader.graph(graph, None, "main".to_string(), 0)?;
    loader.functions(functions)?;
    Ok(loader.model)
}

/// A node as read from the wire: names borrowed from the bytes.
pub(super) struct WireNode<'a> {
    name: Option<&'a str>,
    op_type: Option<&'a str>,
    domain: Option<&'a str>,
    /// Where its inputs and outputs start in the graph's name list, and how many of each.
    names: usize,
    inputs: usize,
    outputs: usize,
    attrs: Vec<&'a [u8]>,
    /// Holds nothing the IR does not: no carry needed.
    plain: bool,
}

/// Reads a `NodeProto`, pushing its input and output names to `names`.
pub(super) fn wire_node<'a>(bytes: &'a [u8], names: &mut Vec<&'a str>) -> Fast<WireNode<'a>> {
    let mut n = WireNode {
        name: None,
        op_type: None,
        domain: None,
        names: names.len(),
        inputs: 0,
        outputs: 0,
        attrs: Vec::new(),
        plain: true,
    };
    let mut outputs: smallvec::SmallVec<[&str; 4]> = smallvec::SmallVec::new();
    for f in fields(bytes) {
        let f = f?;
        match f.number {
            node_proto::INPUT => {
                names.push(text(&f)?);
                n.inputs += 1;
            }
            node_proto::OUTPUT => outputs.push(text(&f)?),
            node_proto::NAME => n.name = Some(text(&f)?),
            node_proto::OP_TYPE => n.op_type = Some(text(&f)?),
            node_proto::DOMAIN => n.domain = Some(text(&f)?),
            node_proto::ATTRIBUTE => n.attrs.push(delimited(&f)?),
            // Known fields the IR does not hold go to the carry (prost checks them there).
            node_proto::DOC_STRING
            | node_proto::OVERLOAD
            | node_proto::METADATA_PROPS
            | node_proto::DEVICE_CONFIGURATIONS => n.plain = false,
            // Unknown fields: prost drops them (the unknown-field walk records them).
            _ => {}
        }
    }
    n.outputs = outputs.len();
    names.extend(outputs);
    // An empty string that is present must be written back present: carry it.
    if [n.name, n.op_type, n.domain].contains(&Some("")) {
        n.plain = false;
    }
    Ok(n)
}

/// The node outputs a loader read last, by name hash: most inputs name one of them, and
/// the scope does not hold them until the graph's nodes are all read.
pub(super) struct Recent(Box<[Option<ValueId>; Recent::SIZE]>);

impl Default for Recent {
    fn default() -> Recent {
        Recent(Box::new([None; Recent::SIZE]))
    }
}

impl Recent {
    const SIZE: usize = 4096;

    fn slot(hash: u64) -> usize {
        (hash >> 32) as usize % Recent::SIZE
    }

    fn put(&mut self, hash: u64, v: ValueId) {
        self.0[Recent::slot(hash)] = Some(v);
    }

    fn find(&self, model: &Model, hash: u64, name: &str) -> Option<ValueId> {
        self.0[Recent::slot(hash)].filter(|v| model.value(*v).name == name)
    }
}

/// The carry of a node that is not plain: its fields but inputs, outputs and attributes.
pub(super) fn node_carry(bytes: &[u8]) -> Fast<Opaque> {
    let mut rest = Vec::new();
    for f in fields(bytes) {
        let f = f?;
        if !matches!(f.number, node_proto::INPUT | node_proto::OUTPUT | node_proto::ATTRIBUTE) {
            rest.extend_from_slice(f.whole);
        }
    }
    Ok(Opaque(onnx::NodeProto::decode(rest.as_slice())?.encode_to_vec()))
}

impl Loader<'_> {
    /// Loads the encoded `GraphProto` in `bytes`.
    fn graph(&mut self, bytes: &[u8], parent: Option<NodeId>, path: String, depth: usize) -> Fast<GraphId> {
        if depth > self.max_depth {
            return Err(Error::TooDeep { path: self.path.to_path_buf(), graph: path, limit: self.max_depth }.into());
        }
        let (mut nodes, mut inputs, mut outputs, mut value_info, mut initializers) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut rest = Vec::new();
        for f in fields(bytes) {
            let f = f?;
            match f.number {
                graph_proto::NODE => nodes.push(delimited(&f)?),
                graph_proto::INITIALIZER => initializers.push(delimited(&f)?),
                graph_proto::INPUT => inputs.push(delimited(&f)?),
                graph_proto::OUTPUT => outputs.push(delimited(&f)?),
                graph_proto::VALUE_INFO => value_info.push(delimited(&f)?),
                _ => rest.extend_from_slice(f.whole),
            }
        }
        let g = onnx::GraphProto::decode(rest.as_slice())?;
        let id = self.model.add_graph(Graph {
            name: g.name.clone().unwrap_or_default(),
            path,
            parent,
            order: Vec::with_capacity(nodes.len()),
            inputs: Vec::with_capacity(inputs.len()),
            outputs: Vec::with_capacity(outputs.len()),
            value_info: Vec::with_capacity(value_info.len()),
            initializers: Vec::with_capacity(initializers.len()),
            scope: Default::default(),
            proto: Opaque(g.encode_to_vec()),
        });
        self.model.reserve_names(id, inputs.len() + initializers.len() + nodes.len());
        // Most nodes have one output and one edge in: grow the arenas once.
        self.model.nodes.reserve_nodes(nodes.len());
        self.model.nodes.reserve_edges(nodes.len());
        self.model.values.reserve(inputs.len() + initializers.len() + nodes.len());

        // Definitions first: inputs, initializers, then every node's outputs, so that uses
        // resolve whatever order the file lists nodes in.
        for vi in inputs {
            let vi = onnx::ValueInfoProto::decode(vi)?;
            let v = self.model.add_value(id, vi.name.as_deref().unwrap_or(""), Def::Input);
            let info = value_info_from(vi, v, &mut self.model.spellings);
            self.model.graph_mut(id).inputs.push(info);
        }
        for t in initializers {
            let t = tensor_from(onnx::TensorProto::decode(t)?);
            let index = self.model.graph(id).initializers.len();
            let v = match self.model.local(id, &t.name) {
                Some(v) if self.model.value(v).def == Def::Input => v,
                _ => self.model.add_value(id, &t.name, Def::Initializer),
            };
            self.model.values[v.index()].initializer.get_or_insert(index);
            self.model.graph_mut(id).initializers.push(t);
        }
        // Room for three inputs and an output a node, so that a million nodes with more than
        // two inputs on average do not copy these lists as they grow.
        let mut names = Vec::with_capacity(nodes.len() * 4);
        // Each input name's value when this graph already defined it by the time its node was
        // read, found while the name is still in cache; `None` is looked up later. One entry
        // per name, outputs `None`, so it lines up with `names`. Node outputs enter the scope
        // only after the loop (`enter_names`), so here they are found among the recent ones.
        // Either way the answer is the one the full lookup gives once fixed up for shadowing:
        // the first definition of a name keeps it.
        let mut early: Vec<Option<ValueId>> = Vec::with_capacity(nodes.len() * 4);
        let mut pending = Vec::with_capacity(nodes.len());
        // Nodes without attributes whose every use was found as they were read: their inputs
        // are set and linked then, while the node is in cache, instead of in a second pass
        // over all nodes.
        let mut done = Vec::with_capacity(nodes.len());
        let mut defs = Vec::with_capacity(nodes.len());
        let mut recent = Recent::default();
        for bytes in nodes {
            let n = wire_node(bytes, &mut names)?;
            let model = &self.model;
            early.extend(names[n.names..n.names + n.inputs].iter().map(|name| {
                let hash = model.scope_hash(id, name);
                recent.find(model, hash, name).or_else(|| model.local_hashed(id, name, hash))
            }));
            early.extend(std::iter::repeat_n(None, n.outputs));
            let uses = n.names..n.names + n.inputs;
            let found = || names[uses.clone()].iter().zip(&early[uses.clone()]);
            let ready = n.attrs.is_empty() && found().all(|(name, v)| name.is_empty() || v.is_some());
            let inputs: Slots =
                if ready { found().map(|(name, v)| v.filter(|_| !name.is_empty())).collect() } else { Slots::new() };
            let node = Node {
                name: Name::new(n.name.unwrap_or("")),
                op_type: Name::new(n.op_type.unwrap_or("")),
                domain: Name::new(n.domain.unwrap_or("")),
                graph: id,
                inputs,
                outputs: Slots::new(),
                attrs: Vec::new(),
                proto: if n.plain { Opaque::default() } else { node_carry(bytes)? },
            };
            // Links the inputs found already.
            let nid = self.model.add_node(node);
            self.model.graph_mut(id).order.push(nid);
            if ready {
                done.push(nid);
            }
            let first = n.names + n.inputs;
            let mut outs = Slots::with_capacity(n.outputs);
            for (slot, name) in names[first..first + n.outputs].iter().enumerate() {
                outs.push((!name.is_empty()).then(|| {
                    let hash = self.model.scope_hash(id, name);
                    let v = self.model.push_value(id, name, Def::Node(nid, slot));
                    defs.push((hash, v));
                    recent.put(hash, v);
                    v
                }));
            }
            self.model.node_mut(nid).outputs = outs;
            if !ready {
                pending.push((nid, n.names, n.inputs, n.attrs));
            }
        }
        if self.model.enter_names(id, &defs) {
            // A use found a later definition of a name among the recent ones: the first
            // definition keeps the name.
            for v in early.iter_mut().flatten() {
                *v = self.model.value(*v).shadows.unwrap_or(*v);
            }
            for nid in done {
                for slot in 0..self.model.node(nid).inputs.len() {
                    let v = self.model.node(nid).inputs[slot];
                    if let Some(first) = v.and_then(|v| self.model.value(v).shadows) {
                        self.model.set_input(nid, slot, Some(first));
                    }
                }
            }
        }
        drop(defs);
        // Subgraphs and attributes, then uses.
        for (nid, first, count, attrs) in pending {
            let mut converted = Vec::with_capacity(attrs.len());
            for a in attrs {
                converted.push(self.attribute(a, nid, depth)?);
            }
            self.model.node_mut(nid).attrs = converted;
            let ins: Slots = names[first..first + count]
                .iter()
                .zip(&early[first..first + count])
                .map(|(name, found)| (!name.is_empty()).then(|| found.unwrap_or_else(|| self.use_name(id, name))))
                .collect();
            for v in ins.iter().flatten() {
                self.model.link(*v, nid);
            }
            self.model.node_mut(nid).inputs = ins;
        }
        for vi in outputs {
            let vi = onnx::ValueInfoProto::decode(vi)?;
            let v = self.use_name(id, vi.name.as_deref().unwrap_or(""));
            let info = value_info_from(vi, v, &mut self.model.spellings);
            self.model.graph_mut(id).outputs.push(info);
        }
        for vi in value_info {
            let vi = onnx::ValueInfoProto::decode(vi)?;
            let v = self.use_name(id, vi.name.as_deref().unwrap_or(""));
            let info = value_info_from(vi, v, &mut self.model.spellings);
            self.model.graph_mut(id).value_info.push(info);
        }
        Ok(id)
    }

    /// The value `name` refers to from graph `g`, or a new undefined value.
    fn use_name(&mut self, g: GraphId, name: &str) -> ValueId {
        self.model.resolve(g, name).unwrap_or_else(|| self.model.add_value(g, name, Def::Undefined))
    }

    /// Loads the encoded `AttributeProto` in `bytes` of node `node`.
    fn attribute(&mut self, bytes: &[u8], node: NodeId, depth: usize) -> Fast<Attribute> {
        let (mut g, mut gs) = (Vec::new(), Vec::new());
        let mut rest = Vec::new();
        for f in fields(bytes) {
            let f = f?;
            match f.number {
                attribute_proto::G => g.push(delimited(&f)?),
                attribute_proto::GRAPHS => gs.push(delimited(&f)?),
                _ => rest.extend_from_slice(f.whole),
            }
        }
        if g.len() > 1 {
            // prost merges a repeated singular message; leave that to it.
            return Err(Fail::Wire);
        }
        let mut a = onnx::AttributeProto::decode(rest.as_slice())?;
        let name = a.name.clone().unwrap_or_default();
        // The kind of an attribute without `type` depends on which fields are set.
        if a.r#type.is_none_or(|t| t == 0) {
            a.g = g.first().map(|_| onnx::GraphProto::default());
            a.graphs = vec![onnx::GraphProto::default(); gs.len()];
        }
        let kind = attr_kind(&a);
        a.g = None;
        a.graphs = Vec::new();
        let t = a.t.take();
        let ts = std::mem::take(&mut a.tensors);
        // A subgraph's path names the node holding it; only graph attributes need it (the
        // label is a linear search for unnamed nodes, so not for every attribute).
        let sub_path = |model: &Model| {
            let base = match model.graph(model.node(node).graph).path.as_str() {
                "main" => String::new(),
                p => format!("{p}/"),
            };
            format!("{base}{}/{name}", model.node_label(node))
        };
        let value = match kind {
            K_TENSOR => AttrValue::Tensor(tensor_from(t.unwrap_or_default())),
            K_TENSORS => AttrValue::Tensors(ts.into_iter().map(tensor_from).collect()),
            K_GRAPH => {
                let path = sub_path(&self.model);
                AttrValue::Graph(self.graph(g.first().copied().unwrap_or(&[]), Some(node), path, depth + 1)?)
            }
            K_GRAPHS => {
                let mut ids = Vec::with_capacity(gs.len());
                let base = sub_path(&self.model);
                for (i, sub) in gs.into_iter().enumerate() {
                    let path = format!("{base}[{i}]");
                    ids.push(self.graph(sub, Some(node), path, depth + 1)?);
                }
                AttrValue::Graphs(ids)
            }
            _ => simple_attr(&a, kind),
        };
        Ok(Attribute { name, value, proto: Opaque(a.encode_to_vec()) })
    }
}

pub(super) const K_FLOAT: i32 = 1;
pub(super) const K_INT: i32 = 2;
pub(super) const K_STRING: i32 = 3;
pub(super) const K_TENSOR: i32 = 4;
pub(super) const K_GRAPH: i32 = 5;
pub(super) const K_FLOATS: i32 = 6;
pub(super) const K_INTS: i32 = 7;
pub(super) const K_STRINGS: i32 = 8;
pub(super) const K_TENSORS: i32 = 9;
pub(super) const K_GRAPHS: i32 = 10;

/// The kind of an attribute value as `AttributeProto.type` numbers it (`FLOAT` 1 to `GRAPHS`
/// 10); `None` for a kind this build does not read.
pub(crate) fn attr_type(v: &AttrValue) -> Option<i32> {
    Some(match v {
        AttrValue::Float(_) => K_FLOAT,
        AttrValue::Int(_) => K_INT,
        AttrValue::String(_) => K_STRING,
        AttrValue::Tensor(_) => K_TENSOR,
        AttrValue::Graph(_) => K_GRAPH,
        AttrValue::Floats(_) => K_FLOATS,
        AttrValue::Ints(_) => K_INTS,
        AttrValue::Strings(_) => K_STRINGS,
        AttrValue::Tensors(_) => K_TENSORS,
        AttrValue::Graphs(_) => K_GRAPHS,
        AttrValue::Other => return None,
    })
}

/// The attribute's kind: its `type`, or for old models that omit it, the field that is set.
pub(super) fn attr_kind(a: &onnx::AttributeProto) -> i32 {
    match a.r#type {
        Some(t) if t != 0 => t,
        _ if a.f.is_some() => K_FLOAT,
        _ if a.i.is_some() => K_INT,
        _ if a.s.is_some() => K_STRING,
        _ if a.t.is_some() => K_TENSOR,
        _ if a.g.is_some() => K_GRAPH,
        _ if !a.floats.is_empty() => K_FLOATS,
        _ if !a.ints.is_empty() => K_INTS,
        _ if !a.strings.is_empty() => K_STRINGS,
        _ if !a.tensors.is_empty() => K_TENSORS,
        _ if !a.graphs.is_empty() => K_GRAPHS,
        _ => 0,
    }
}

pub(super) fn simple_attr(a: &onnx::AttributeProto, kind: i32) -> AttrValue {
    match kind {
        K_FLOAT => AttrValue::Float(a.f.unwrap_or_default()),
        K_INT => AttrValue::Int(a.i.unwrap_or_default()),
        K_STRING => AttrValue::String(a.s.clone().unwrap_or_default()),
        K_FLOATS => AttrValue::Floats(a.floats.clone()),
        K_INTS => AttrValue::Ints(a.ints.clone()),
        K_STRINGS => AttrValue::Strings(a.strings.clone()),
        _ => AttrValue::Other,
    }
}

pub(super) fn value_info_from(vi: onnx::ValueInfoProto, value: ValueId, spellings: &mut Spellings) -> ValueInfo {
    let ty = vi.r#type.as_ref().map(type_from);
    if let (Some(t), Some(declared)) = (&ty, &vi.r#type) {
        spell(t, declared, spellings);
    }
    ValueInfo { value, ty, proto: Opaque(vi.encode_to_vec()) }
}

/// The IR view of a `TypeProto`.
pub(super) fn type_from(t: &onnx::TypeProto) -> Type {
    use onnx::type_proto::Value as V;
    match &t.value {
        Some(V::TensorType(tt)) => Type::Tensor {
            dtype: tt.elem_type.and_then(DType::from_onnx),
            shape: tt.shape.as_ref().map(|s| s.dim.iter().map(dim_from).collect()),
        },
        Some(V::SequenceType(s)) => Type::Sequence(s.elem_type.as_ref().map(|t| Box::new(type_from(t)))),
        Some(V::OptionalType(o)) => Type::Optional(o.elem_type.as_ref().map(|t| Box::new(type_from(t)))),
        _ => Type::Other,
    }
}

pub(super) fn dim_from(d: &onnx::tensor_shape_proto::Dimension) -> Dim {
    use onnx::tensor_shape_proto::dimension::Value;
    match &d.value {
        Some(Value::DimValue(v)) if *v >= 0 => Dim::Known(*v),
        // `?` is a placeholder some exporters write for a size they do not name.
        Some(Value::DimParam(p)) if !p.is_empty() && p != "?" => Dim::parse(p),
        _ => Dim::Unknown,
    }
}

/// Records the model's text for each symbolic size of `t` (read from `declared`) whose
/// canonical text differs, where none was recorded yet.
pub(super) fn spell(t: &Type, declared: &onnx::TypeProto, spellings: &mut Spellings) {
    use onnx::tensor_shape_proto::dimension::Value;
    let (Type::Tensor { shape: Some(shape), .. }, Some(onnx::type_proto::Value::TensorType(tt))) = (t, &declared.value)
    else {
        return;
    };
    let Some(declared) = &tt.shape else { return };
    for (d, dim) in shape.iter().zip(&declared.dim) {
        if let (Dim::Term(term), Some(Value::DimParam(text))) = (d, &dim.value) {
            if term.as_name().is_none() && spellings.get(term).is_none() && term.to_string() != *text {
                spellings.insert(term.clone(), text.as_str().into());
            }
        }
    }
}

/// A term's text as written to `dim_param`: the model's own spelling of it, else its name as
/// it is (without a copy), else its canonical text.
pub(super) fn term_text<'a>(t: &'a Term, spellings: &'a Spellings) -> std::borrow::Cow<'a, str> {
    use std::borrow::Cow;
    match spellings.get(t) {
        Some(text) => Cow::Borrowed(text),
        None => t.as_name().map_or_else(|| Cow::Owned(t.to_string()), Cow::Borrowed),
    }
}

pub(super) fn type_to(t: &Type, sp: &Spellings) -> onnx::TypeProto {
    use onnx::tensor_shape_proto::{dimension::Value as DV, Dimension};
    use onnx::type_proto::{Optional, Sequence, Tensor as TT, Value as V};
    let elem = |e: &Option<Box<Type>>| e.as_deref().map(|t| Box::new(type_to(t, sp)));
    let value = match t {
        Type::Tensor { dtype, shape } => V::TensorType(TT {
            elem_type: Some(dtype.map(DType::onnx).unwrap_or(0)),
            shape: shape.as_ref().map(|s| onnx::TensorShapeProto {
                dim: s
                    .iter()
                    .map(|d| Dimension {
                        denotation: None,
                        value: match d {
                            Dim::Known(n) => Some(DV::DimValue(*n)),
                            Dim::Term(t) if !t.has_fresh() => Some(DV::DimParam(term_text(t, sp).into_owned())),
                            Dim::Term(_) | Dim::Unknown => None,
                        },
                    })
                    .collect(),
            }),
        }),
        Type::Sequence(e) => V::SequenceType(Box::new(Sequence { elem_type: elem(e) })),
        Type::Optional(e) => V::OptionalType(Box::new(Optional { elem_type: elem(e) })),
        Type::Other => return onnx::TypeProto::default(),
    };
    onnx::TypeProto { denotation: None, value: Some(value) }
}

/// The IR view of `opset_import`.
pub(super) fn opsets_from(imports: &[onnx::OperatorSetIdProto]) -> Vec<Opset> {
    imports
        .iter()
        .map(|o| Opset { domain: o.domain.clone().unwrap_or_default(), version: o.version.unwrap_or(0) })
        .collect()
}

/// The IR view of a tensor: data moved out, the rest carried.
pub(super) fn tensor_from(mut t: onnx::TensorProto) -> Tensor {
    let data = if t.data_location == Some(onnx::tensor_proto::DataLocation::External as i32) {
        let get = |k: &str| t.external_data.iter().find(|e| e.key.as_deref() == Some(k)).and_then(|e| e.value.clone());
        TensorData::External {
            location: get("location").unwrap_or_default(),
            offset: get("offset").and_then(|v| v.parse().ok()).unwrap_or(0),
            length: get("length").and_then(|v| v.parse().ok()),
        }
    } else if let Some(raw) = t.raw_data.take() {
        TensorData::Raw(raw)
    } else if !t.float_data.is_empty() {
        TensorData::Floats(std::mem::take(&mut t.float_data))
    } else if !t.int32_data.is_empty() {
        TensorData::Int32s(std::mem::take(&mut t.int32_data))
    } else if !t.int64_data.is_empty() {
        TensorData::Int64s(std::mem::take(&mut t.int64_data))
    } else if !t.double_data.is_empty() {
        TensorData::Doubles(std::mem::take(&mut t.double_data))
    } else if !t.uint64_data.is_empty() {
        TensorData::Uint64s(std::mem::take(&mut t.uint64_data))
    } else if !t.string_data.is_empty() {
        TensorData::Strings(std::mem::take(&mut t.string_data))
    } else {
        TensorData::Empty
    };
    Tensor {
        name: t.name.clone().unwrap_or_default(),
        dtype: t.data_type.and_then(DType::from_onnx),
        dims: t.dims.clone(),
        data,
        proto: Opaque(t.encode_to_vec()),
    }
}

// Model-local functions (FunctionProto). Each body is loaded as a graph without a parent so
// that inference can run through it; the functions themselves stay in the model's carry, so
// saving writes them back exactly as read.

impl Loader<'_> {
    fn functions(&mut self, functions: Vec<onnx::FunctionProto>) -> Fast<()> {
        for f in functions {
            let domain = f.domain.clone().unwrap_or_default();
            let name = f.name.clone().unwrap_or_default();
            // Attributes of body nodes that take the caller's value, by node position.
            let refs: Vec<(usize, String, String)> = f
                .node
                .iter()
                .enumerate()
                .flat_map(|(i, n)| {
                    n.attribute.iter().filter_map(move |a| {
                        let r = a.ref_attr_name.as_deref().filter(|r| !r.is_empty())?;
                        Some((i, a.name.clone().unwrap_or_default(), r.to_string()))
                    })
                })
                .collect();
            let value_info = |names: &[String]| -> Vec<onnx::ValueInfoProto> {
                names.iter().map(|n| onnx::ValueInfoProto { name: Some(n.clone()), ..Default::default() }).collect()
            };
            let body = onnx::GraphProto {
                name: Some(name.clone()),
                node: f.node.clone(),
                input: value_info(&f.input),
                output: value_info(&f.output),
                value_info: f.value_info.clone(),
                ..Default::default()
            };
            let label = if domain.is_empty() { name.clone() } else { format!("{domain}.{name}") };
            let graph = self.graph(&body.encode_to_vec(), None, format!("function {label}"), 1)?;
            let order = self.model.graph(graph).order.clone();
            let refs = refs.into_iter().filter_map(|(i, a, r)| Some((*order.get(i)?, a, r))).collect();
            let mut attributes: Vec<(String, Option<AttrValue>)> =
                f.attribute.iter().map(|a| (a.clone(), None)).collect();
            for a in &f.attribute_proto {
                attributes.push((a.name.clone().unwrap_or_default(), Some(simple_attr(a, attr_kind(a)))));
            }
            let opsets = opsets_from(&f.opset_import);
            self.model.functions.push(crate::ir::Function { domain, name, graph, opsets, attributes, refs });
        }
        Ok(())
    }
}

//! `ModelProto` <-> IR, tensor files and external data. The only module besides `onnx.rs`
//! that names prost types.
//!
//! Loading keeps every field: what the IR interprets is copied out, and the rest of each
//! message stays encoded in the entity's `Opaque` carry. Saving decodes the carry and writes
//! back only what the IR holds differently, so `save(load(m))` decodes equal to `m`.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use prost::Message;

use crate::diag::{Error, Result};
use crate::dtype::DType;
use crate::ir::{
    AttrValue, Attribute, Def, Graph, GraphId, Model, Node, NodeId, Opaque, Opset, Tensor, TensorData, ValueId,
    ValueInfo,
};
use crate::onnx;
use crate::shape::{Dim, Sym, Type};

/// Protobuf's hard limit on one message.
pub const MAX_MESSAGE: u64 = 2 * 1024 * 1024 * 1024 - 1;

/// How deep subgraphs may nest (onnxruntime's limit too).
pub const MAX_DEPTH: usize = 32;

/// Reads and loads the model at `path`.
pub fn load(path: &Path) -> Result<Model> {
    let bytes = read_limited(path)?;
    let dir = path.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
    decode(&bytes, path, dir)
}

/// Loads a model from its encoded bytes; `path` names it in errors and `dir` is where its
/// external data lives.
pub fn decode(bytes: &[u8], path: &Path, dir: Option<&Path>) -> Result<Model> {
    let proto = onnx::ModelProto::decode(bytes)
        .map_err(|e| Error::Decode { path: path.to_path_buf(), reason: e.to_string() })?;
    from_proto(proto, path, dir)
}

fn read_limited(path: &Path) -> Result<Vec<u8>> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let meta = fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(Error::Decode { path: path.to_path_buf(), reason: "is a directory".into() });
    }
    if meta.len() > MAX_MESSAGE {
        return Err(Error::TooLarge { path: path.to_path_buf(), size: meta.len() });
    }
    fs::read(path).map_err(io)
}

/// Encodes the model.
pub fn encode(model: &Model) -> Vec<u8> {
    to_proto(model).encode_to_vec()
}

/// Writes the model to `path` atomically: a temporary file in the same folder, then a rename,
/// so a failed write leaves any old file intact.
pub fn save(model: &Model, path: &Path) -> Result<()> {
    write_atomic(path, &encode(model))
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name =
        path.file_name().ok_or_else(|| io(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path")))?;
    let tmp = dir.join(format!(".{}.tmp{}", file_name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io)
}

// ---------------------------------------------------------------------------------------------
// Loading.

struct Loader<'a> {
    path: &'a Path,
    model: Model,
}

fn from_proto(mut proto: onnx::ModelProto, path: &Path, dir: Option<&Path>) -> Result<Model> {
    let graph = proto.graph.take().ok_or_else(|| Error::NoGraph { path: path.to_path_buf() })?;
    let opsets = proto
        .opset_import
        .iter()
        .map(|o| Opset { domain: o.domain.clone().unwrap_or_default(), version: o.version.unwrap_or(0) })
        .collect();
    let functions = proto.functions.clone();
    let model = Model {
        ir_version: proto.ir_version.unwrap_or(0),
        opsets,
        graphs: Vec::new(),
        values: Vec::new(),
        nodes: Default::default(),
        dir: dir.map(Path::to_path_buf),
        functions: Vec::new(),
        proto: Opaque(proto.encode_to_vec()),
    };
    let mut loader = Loader { path, model };
    loader.graph(graph, None, "main".to_string(), 0)?;
    loader.functions(functions)?;
    Ok(loader.model)
}

impl Loader<'_> {
    fn graph(
        &mut self,
        mut g: onnx::GraphProto,
        parent: Option<NodeId>,
        path: String,
        depth: usize,
    ) -> Result<GraphId> {
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep { path: self.path.to_path_buf(), graph: path, limit: MAX_DEPTH });
        }
        let nodes = std::mem::take(&mut g.node);
        let inputs = std::mem::take(&mut g.input);
        let outputs = std::mem::take(&mut g.output);
        let value_info = std::mem::take(&mut g.value_info);
        let initializers = std::mem::take(&mut g.initializer);
        let id = self.model.add_graph(Graph {
            name: g.name.clone().unwrap_or_default(),
            path,
            parent,
            order: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            value_info: Vec::new(),
            initializers: Vec::new(),
            scope: HashMap::new(),
            proto: Opaque(g.encode_to_vec()),
        });

        // Definitions first: inputs, initializers, then every node's outputs, so that uses
        // resolve whatever order the file lists nodes in.
        for vi in inputs {
            let v = self.model.add_value(id, vi.name.as_deref().unwrap_or(""), Def::Input);
            let info = value_info_from(vi, v);
            self.model.graph_mut(id).inputs.push(info);
        }
        for t in initializers {
            let t = tensor_from(t);
            let index = self.model.graph(id).initializers.len();
            let v = match self.model.graph(id).scope.get(&t.name) {
                Some(v) if self.model.value(*v).def == Def::Input => *v,
                _ => self.model.add_value(id, &t.name, Def::Initializer),
            };
            self.model.values[v.index()].initializer.get_or_insert(index);
            self.model.graph_mut(id).initializers.push(t);
        }
        let mut pending = Vec::with_capacity(nodes.len());
        for mut n in nodes {
            let input = std::mem::take(&mut n.input);
            let output = std::mem::take(&mut n.output);
            let attrs = std::mem::take(&mut n.attribute);
            let node = Node {
                name: n.name.clone().unwrap_or_default(),
                op_type: n.op_type.clone().unwrap_or_default(),
                domain: n.domain.clone().unwrap_or_default(),
                graph: id,
                inputs: Vec::new(),
                outputs: Vec::new(),
                attrs: Vec::new(),
                proto: Opaque(n.encode_to_vec()),
            };
            let nid = self.model.add_node(node);
            self.model.graph_mut(id).order.push(nid);
            let outs: Vec<Option<ValueId>> = output
                .iter()
                .enumerate()
                .map(|(slot, name)| (!name.is_empty()).then(|| self.model.add_value(id, name, Def::Node(nid, slot))))
                .collect();
            self.model.node_mut(nid).outputs = outs;
            pending.push((nid, input, attrs));
        }
        // Subgraphs and attributes, then uses.
        for (nid, input, attrs) in pending {
            let mut converted = Vec::with_capacity(attrs.len());
            for a in attrs {
                converted.push(self.attribute(a, nid, depth)?);
            }
            self.model.node_mut(nid).attrs = converted;
            let ins: Vec<Option<ValueId>> =
                input.iter().map(|name| (!name.is_empty()).then(|| self.use_name(id, name))).collect();
            for v in ins.iter().flatten() {
                self.model.link(*v, nid);
            }
            self.model.node_mut(nid).inputs = ins;
        }
        for vi in outputs {
            let v = self.use_name(id, vi.name.as_deref().unwrap_or(""));
            let info = value_info_from(vi, v);
            self.model.graph_mut(id).outputs.push(info);
        }
        for vi in value_info {
            let v = self.use_name(id, vi.name.as_deref().unwrap_or(""));
            let info = value_info_from(vi, v);
            self.model.graph_mut(id).value_info.push(info);
        }
        Ok(id)
    }

    /// The value `name` refers to from graph `g`, or a new undefined value.
    fn use_name(&mut self, g: GraphId, name: &str) -> ValueId {
        match self.model.resolve(g, name) {
            Some(v) => v,
            None => self.model.add_value(g, name, Def::Undefined),
        }
    }

    fn attribute(&mut self, mut a: onnx::AttributeProto, node: NodeId, depth: usize) -> Result<Attribute> {
        let name = a.name.clone().unwrap_or_default();
        let kind = attr_kind(&a);
        let t = a.t.take();
        let g = a.g.take();
        let ts = std::mem::take(&mut a.tensors);
        let gs = std::mem::take(&mut a.graphs);
        let label = self.model.node_label(node);
        let base = match self.model.graph(self.model.node(node).graph).path.as_str() {
            "main" => String::new(),
            p => format!("{p}/"),
        };
        let value = match kind {
            K_TENSOR => AttrValue::Tensor(tensor_from(t.unwrap_or_default())),
            K_TENSORS => AttrValue::Tensors(ts.into_iter().map(tensor_from).collect()),
            K_GRAPH => {
                let path = format!("{base}{label}/{name}");
                AttrValue::Graph(self.graph(g.unwrap_or_default(), Some(node), path, depth + 1)?)
            }
            K_GRAPHS => {
                let mut ids = Vec::with_capacity(gs.len());
                for (i, sub) in gs.into_iter().enumerate() {
                    let path = format!("{base}{label}/{name}[{i}]");
                    ids.push(self.graph(sub, Some(node), path, depth + 1)?);
                }
                AttrValue::Graphs(ids)
            }
            _ => simple_attr(&a, kind),
        };
        Ok(Attribute { name, value, proto: Opaque(a.encode_to_vec()) })
    }
}

const K_FLOAT: i32 = 1;
const K_INT: i32 = 2;
const K_STRING: i32 = 3;
const K_TENSOR: i32 = 4;
const K_GRAPH: i32 = 5;
const K_FLOATS: i32 = 6;
const K_INTS: i32 = 7;
const K_STRINGS: i32 = 8;
const K_TENSORS: i32 = 9;
const K_GRAPHS: i32 = 10;

/// The attribute's kind: its `type`, or for old models that omit it, the field that is set.
fn attr_kind(a: &onnx::AttributeProto) -> i32 {
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

fn simple_attr(a: &onnx::AttributeProto, kind: i32) -> AttrValue {
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

fn value_info_from(vi: onnx::ValueInfoProto, value: ValueId) -> ValueInfo {
    let ty = vi.r#type.as_ref().map(type_from);
    ValueInfo { value, ty, proto: Opaque(vi.encode_to_vec()) }
}

/// The IR view of a `TypeProto`.
fn type_from(t: &onnx::TypeProto) -> Type {
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

fn dim_from(d: &onnx::tensor_shape_proto::Dimension) -> Dim {
    use onnx::tensor_shape_proto::dimension::Value;
    match &d.value {
        Some(Value::DimValue(v)) if *v >= 0 => Dim::Known(*v),
        Some(Value::DimParam(p)) if !p.is_empty() => Dim::Sym(Sym::new(p)),
        _ => Dim::Unknown,
    }
}

fn type_to(t: &Type) -> onnx::TypeProto {
    use onnx::tensor_shape_proto::{dimension::Value as DV, Dimension};
    use onnx::type_proto::{Optional, Sequence, Tensor as TT, Value as V};
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
                            Dim::Sym(s) => Some(DV::DimParam(s.as_str().to_string())),
                            Dim::Unknown => None,
                        },
                    })
                    .collect(),
            }),
        }),
        Type::Sequence(e) => {
            V::SequenceType(Box::new(Sequence { elem_type: e.as_deref().map(|t| Box::new(type_to(t))) }))
        }
        Type::Optional(e) => {
            V::OptionalType(Box::new(Optional { elem_type: e.as_deref().map(|t| Box::new(type_to(t))) }))
        }
        Type::Other => return onnx::TypeProto::default(),
    };
    onnx::TypeProto { denotation: None, value: Some(value) }
}

/// The IR view of a tensor: data moved out, the rest carried.
fn tensor_from(mut t: onnx::TensorProto) -> Tensor {
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

// ---------------------------------------------------------------------------------------------
// Saving.

fn carry<M: Message + Default>(o: &Opaque) -> M {
    // The carry was encoded by this module from a valid message, so it decodes.
    M::decode(o.0.as_slice()).unwrap_or_default()
}

fn put_str(slot: &mut Option<String>, v: &str) {
    if slot.as_deref().unwrap_or("") != v {
        *slot = Some(v.to_string());
    }
}

fn to_proto(model: &Model) -> onnx::ModelProto {
    let mut p: onnx::ModelProto = carry(&model.proto);
    if p.ir_version.unwrap_or(0) != model.ir_version {
        p.ir_version = Some(model.ir_version);
    }
    let current: Vec<Opset> = p
        .opset_import
        .iter()
        .map(|o| Opset { domain: o.domain.clone().unwrap_or_default(), version: o.version.unwrap_or(0) })
        .collect();
    if current != model.opsets {
        p.opset_import = model
            .opsets
            .iter()
            .map(|o| onnx::OperatorSetIdProto { domain: Some(o.domain.clone()), version: Some(o.version) })
            .collect();
    }
    p.graph = Some(graph_to(model, Model::MAIN));
    p
}

fn graph_to(model: &Model, id: GraphId) -> onnx::GraphProto {
    let g = model.graph(id);
    let mut p: onnx::GraphProto = carry(&g.proto);
    put_str(&mut p.name, &g.name);
    p.node = g.order.iter().map(|n| node_to(model, *n)).collect();
    p.initializer = g.initializers.iter().map(tensor_to).collect();
    p.input = g.inputs.iter().map(|v| value_info_to(model, v)).collect();
    p.output = g.outputs.iter().map(|v| value_info_to(model, v)).collect();
    p.value_info = g.value_info.iter().map(|v| value_info_to(model, v)).collect();
    p
}

fn node_to(model: &Model, id: NodeId) -> onnx::NodeProto {
    let n = model.node(id);
    let mut p: onnx::NodeProto = carry(&n.proto);
    put_str(&mut p.name, &n.name);
    put_str(&mut p.op_type, &n.op_type);
    put_str(&mut p.domain, &n.domain);
    let name = |v: &Option<ValueId>| v.map(|v| model.name(v).to_string()).unwrap_or_default();
    p.input = n.inputs.iter().map(name).collect();
    p.output = n.outputs.iter().map(name).collect();
    p.attribute = n.attrs.iter().map(|a| attr_to(model, a)).collect();
    p
}

fn attr_to(model: &Model, a: &Attribute) -> onnx::AttributeProto {
    let mut p: onnx::AttributeProto = carry(&a.proto);
    put_str(&mut p.name, &a.name);
    let kind = match &a.value {
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
        AttrValue::Other => return p,
    };
    match &a.value {
        AttrValue::Tensor(t) => p.t = Some(tensor_to(t)),
        AttrValue::Tensors(ts) => p.tensors = ts.iter().map(tensor_to).collect(),
        AttrValue::Graph(g) => p.g = Some(graph_to(model, *g)),
        AttrValue::Graphs(gs) => p.graphs = gs.iter().map(|g| graph_to(model, *g)).collect(),
        simple => {
            let same = attr_kind(&p) == kind && matches!((simple_attr(&p, kind), simple), (x, y) if attr_eq(&x, y));
            if !same {
                p.f = None;
                p.i = None;
                p.s = None;
                p.floats.clear();
                p.ints.clear();
                p.strings.clear();
                match simple {
                    AttrValue::Float(f) => p.f = Some(*f),
                    AttrValue::Int(i) => p.i = Some(*i),
                    AttrValue::String(s) => p.s = Some(s.clone()),
                    AttrValue::Floats(v) => p.floats = v.clone(),
                    AttrValue::Ints(v) => p.ints = v.clone(),
                    AttrValue::Strings(v) => p.strings = v.clone(),
                    _ => {}
                }
            }
        }
    }
    // A loaded attribute keeps its `type` as read (old files omit it); one a rewrite created
    // (empty carry) states it, as the checker requires from IR version 2.
    if attr_kind(&p) != kind || a.proto.0.is_empty() {
        p.r#type = Some(kind);
    }
    p
}

/// Equality of simple attribute values, bitwise for floats (so NaN payloads round-trip).
fn attr_eq(a: &AttrValue, b: &AttrValue) -> bool {
    match (a, b) {
        (AttrValue::Float(x), AttrValue::Float(y)) => x.to_bits() == y.to_bits(),
        (AttrValue::Floats(x), AttrValue::Floats(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.to_bits() == b.to_bits())
        }
        (AttrValue::Int(x), AttrValue::Int(y)) => x == y,
        (AttrValue::Ints(x), AttrValue::Ints(y)) => x == y,
        (AttrValue::String(x), AttrValue::String(y)) => x == y,
        (AttrValue::Strings(x), AttrValue::Strings(y)) => x == y,
        _ => false,
    }
}

fn value_info_to(model: &Model, v: &ValueInfo) -> onnx::ValueInfoProto {
    let mut p: onnx::ValueInfoProto = carry(&v.proto);
    put_str(&mut p.name, model.name(v.value));
    if p.r#type.as_ref().map(type_from) != v.ty {
        p.r#type = v.ty.as_ref().map(type_to);
    }
    p
}

fn tensor_to(t: &Tensor) -> onnx::TensorProto {
    let mut p: onnx::TensorProto = carry(&t.proto);
    put_str(&mut p.name, &t.name);
    if p.dims != t.dims {
        p.dims = t.dims.clone();
    }
    if p.data_type.and_then(DType::from_onnx) != t.dtype {
        p.data_type = Some(t.dtype.map(DType::onnx).unwrap_or(0));
    }
    match &t.data {
        TensorData::Raw(v) => p.raw_data = Some(v.clone()),
        TensorData::Floats(v) => p.float_data = v.clone(),
        TensorData::Int32s(v) => p.int32_data = v.clone(),
        TensorData::Int64s(v) => p.int64_data = v.clone(),
        TensorData::Doubles(v) => p.double_data = v.clone(),
        TensorData::Uint64s(v) => p.uint64_data = v.clone(),
        TensorData::Strings(v) => p.string_data = v.clone(),
        TensorData::External { .. } | TensorData::Empty => {}
    }
    p
}

// ---------------------------------------------------------------------------------------------
// Tensor files and external data.

/// Reads a serialized `TensorProto` (a backend test case's `input_0.pb`).
pub fn read_tensor(path: &Path) -> Result<Tensor> {
    let bytes = read_limited(path)?;
    let p = onnx::TensorProto::decode(bytes.as_slice())
        .map_err(|e| Error::Decode { path: path.to_path_buf(), reason: format!("not a TensorProto: {e}") })?;
    Ok(tensor_from(p))
}

/// Encodes a tensor as a serialized `TensorProto`.
pub fn encode_tensor(t: &Tensor) -> Vec<u8> {
    tensor_to(t).encode_to_vec()
}

/// Reads the bytes of an externally stored tensor: only a relative location inside `dir`, no
/// symlinks or multiply-linked files, and an offset and length inside the file.
pub fn read_external(dir: &Path, tensor: &str, location: &str, offset: u64, length: Option<u64>) -> Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let bad = |reason: String| Error::ExternalData { tensor: tensor.to_string(), reason };
    let rel = Path::new(location);
    if location.is_empty()
        || rel.is_absolute()
        || rel.components().any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(bad(format!("location '{location}' is not a plain relative path inside the model's folder")));
    }
    let full = dir.join(rel);
    // Every component below the model's folder must be a real directory or file, not a link.
    let mut at = dir.to_path_buf();
    for c in rel.components() {
        at.push(c);
        let meta = fs::symlink_metadata(&at).map_err(|e| bad(format!("'{location}': {e}")))?;
        if meta.file_type().is_symlink() {
            return Err(bad(format!("'{location}' goes through a symbolic link")));
        }
    }
    let meta = fs::symlink_metadata(&full).map_err(|e| bad(format!("'{location}': {e}")))?;
    if !meta.is_file() {
        return Err(bad(format!("'{location}' is not a regular file")));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(bad(format!("'{location}' has {} hard links", meta.nlink())));
        }
    }
    let size = meta.len();
    let length = length.unwrap_or(size.saturating_sub(offset));
    let end = offset.checked_add(length).filter(|e| *e <= size).ok_or_else(|| {
        bad(format!("offset {offset} + length {length} is past the end of '{location}' ({size} bytes)"))
    })?;
    let _ = end;
    let mut f = fs::File::open(&full).map_err(|e| bad(format!("'{location}': {e}")))?;
    f.seek(SeekFrom::Start(offset)).map_err(|e| bad(format!("'{location}': {e}")))?;
    let mut buf = Vec::new();
    f.take(length).read_to_end(&mut buf).map_err(|e| bad(format!("'{location}': {e}")))?;
    Ok(buf)
}

// ---------------------------------------------------------------------------------------------
// Model-local functions (FunctionProto). Each body is loaded as a graph without a parent so
// that inference can run through it; the functions themselves stay in the model's carry, so
// saving writes them back exactly as read.

impl Loader<'_> {
    fn functions(&mut self, functions: Vec<onnx::FunctionProto>) -> Result<()> {
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
            let graph = self.graph(body, None, format!("function {label}"), 1)?;
            let order = self.model.graph(graph).order.clone();
            let refs = refs.into_iter().filter_map(|(i, a, r)| Some((*order.get(i)?, a, r))).collect();
            let mut attributes: Vec<(String, Option<AttrValue>)> =
                f.attribute.iter().map(|a| (a.clone(), None)).collect();
            for a in &f.attribute_proto {
                attributes.push((a.name.clone().unwrap_or_default(), Some(simple_attr(a, attr_kind(a)))));
            }
            let opsets = f
                .opset_import
                .iter()
                .map(|o| Opset { domain: o.domain.clone().unwrap_or_default(), version: o.version.unwrap_or(0) })
                .collect();
            self.model.functions.push(crate::ir::Function { domain, name, graph, opsets, attributes, refs });
        }
        Ok(())
    }
}

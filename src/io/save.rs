//! Saving: the IR back to a `ModelProto`'s bytes. Nodes and value infos are written straight to
//! the output in prost's field order, each entity's carry merged back, so the bytes are those
//! prost would write.

use super::*;
use crate::onnx::fields::number::{
    attribute_proto, graph_proto, node_proto, tensor_shape_proto, tensor_shape_proto_dimension as dimension,
    type_proto, type_proto_tensor, value_info_proto,
};

pub(super) fn carry<M: Message + Default>(o: &Opaque) -> M {
    // The carry was encoded by this module from a valid message, so it decodes.
    M::decode(o.0.as_slice()).unwrap_or_default()
}

pub(super) fn put_str(slot: &mut Option<String>, v: &str) {
    if slot.as_deref().unwrap_or("") != v {
        *slot = Some(v.to_string());
    }
}

/// The model's own fields as saved, without the graph.
pub(super) fn model_head(model: &Model) -> onnx::ModelProto {
    let mut p: onnx::ModelProto = carry(&model.proto);
    if p.ir_version.unwrap_or(0) != model.ir_version {
        p.ir_version = Some(model.ir_version);
    }
    if opsets_from(&p.opset_import) != model.opsets {
        p.opset_import = model
            .opsets
            .iter()
            .map(|o| onnx::OperatorSetIdProto { domain: Some(o.domain.clone()), version: Some(o.version) })
            .collect();
    }
    p.graph = None;
    p
}

/// Writes `v` as a varint, as prost does; the one-byte ones (most keys, lengths and dims)
/// with one push.
#[inline]
pub(super) fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(super) fn put_key(out: &mut Vec<u8>, field: u32, wire: u32) {
    put_varint(u64::from(field << 3 | wire), out);
}

/// Writes the key and length of a length-delimited field whose `len` payload bytes follow.
pub(super) fn put_len_prefix(out: &mut Vec<u8>, field: u32, len: usize) {
    put_key(out, field, 2);
    put_varint(len as u64, out);
}

/// Writes a length-delimited field (string, bytes or message).
pub(super) fn put_len_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_len_prefix(out, field, bytes.len());
    out.extend_from_slice(bytes);
}

/// The encoded size of a length-delimited field whose payload is `len` bytes.
pub(super) fn len_field_len(field: u32, len: usize) -> usize {
    prost::encoding::encoded_len_varint(u64::from(field << 3 | 2))
        + prost::encoding::encoded_len_varint(len as u64)
        + len
}

/// Writes graph `id` as length-delimited field `field` to `out`: the body is written in
/// place after room for the longest length prefix, then moved up to its prefix, so a large
/// graph is never held twice.
pub(super) fn put_graph_field(model: &Model, id: GraphId, field: u32, out: &mut Vec<u8>) {
    put_key(out, field, 2);
    let at = out.len();
    out.extend_from_slice(&[0; 10]);
    let (front, rest) = graph_carry(model, id);
    graph_front(model, id, front, out);
    value_infos(model, &model.graph(id).value_info, out);
    rest.encode_raw(out);
    let len = out.len() - at - 10;
    let mut prefix = Vec::with_capacity(10);
    put_varint(len as u64, &mut prefix);
    out[at..at + prefix.len()].copy_from_slice(&prefix);
    out.copy_within(at + 10.., at + prefix.len());
    out.truncate(at + prefix.len() + len);
}

/// Graph `id`'s carried fields: those written between its nodes and its inputs (name,
/// doc_string), and the rest.
pub(super) fn graph_carry(model: &Model, id: GraphId) -> (onnx::GraphProto, onnx::GraphProto) {
    let g = model.graph(id);
    let mut p: onnx::GraphProto = carry(&g.proto);
    put_str(&mut p.name, &g.name);
    let front = onnx::GraphProto { name: p.name.take(), doc_string: p.doc_string.take(), ..Default::default() };
    (front, p)
}

/// The first part of graph `id`'s body: nodes, the carried name and doc_string with the
/// initializers, inputs and outputs.
pub(super) fn graph_front(model: &Model, id: GraphId, front: onnx::GraphProto, out: &mut Vec<u8>) {
    let g = model.graph(id);
    let mut scratch = Vec::new();
    for n in &g.order {
        node_bytes(model, *n, out, &mut scratch);
    }
    // prost writes fields in tag order; these come between `node` (1) and `input` (11).
    let mid = onnx::GraphProto { initializer: g.initializers.iter().map(tensor_to).collect(), ..front };
    mid.encode_raw(out);
    drop(mid);
    let mut last = LastType::new(model);
    for v in &g.inputs {
        value_info_bytes(model, v, graph_proto::INPUT, out, &mut last);
    }
    for v in &g.outputs {
        value_info_bytes(model, v, graph_proto::OUTPUT, out, &mut last);
    }
}

/// Writes `infos` as a graph's `value_info` fields (13). After them come what the graph's
/// carry holds beyond (quantization annotations, sparse initializers, metadata).
pub(super) fn value_infos(model: &Model, infos: &[ValueInfo], out: &mut Vec<u8>) {
    let mut last = LastType::new(model);
    for v in infos {
        value_info_bytes(model, v, graph_proto::VALUE_INFO, out, &mut last);
    }
}

/// The encoded `type` field of the value info written last, copied for the next one when its
/// type is the same: a graph's tensors share a handful of types, mostly in runs (every value
/// info of a 10k-node chain after the first), and comparing a type costs less than
/// measuring and writing it again.
pub(super) struct LastType<'m> {
    ty: Option<&'m Type>,
    field: Vec<u8>,
    spellings: &'m Spellings,
}

impl<'m> LastType<'m> {
    fn new(model: &'m Model) -> LastType<'m> {
        LastType { ty: None, field: Vec::new(), spellings: &model.spellings }
    }

    /// The `type` field (2) of a `ValueInfoProto` for `t`.
    fn field(&mut self, t: &'m Type) -> &[u8] {
        if self.ty != Some(t) {
            self.field.clear();
            put_len_prefix(&mut self.field, value_info_proto::TYPE, type_len(t, self.spellings));
            put_type(t, &mut self.field, self.spellings);
            self.ty = Some(t);
        }
        &self.field
    }
}

/// Writes node `id` as field 1 of a `GraphProto` to `out`; `scratch` is reused for its body.
pub(super) fn node_bytes(model: &Model, id: NodeId, out: &mut Vec<u8>, scratch: &mut Vec<u8>) {
    let n = model.node(id);
    scratch.clear();
    let name = |v: &Option<ValueId>| v.map_or("", |v| model.name(v));
    for v in &n.inputs {
        put_len_field(scratch, node_proto::INPUT, name(v).as_bytes());
    }
    for v in &n.outputs {
        put_len_field(scratch, node_proto::OUTPUT, name(v).as_bytes());
    }
    if n.proto.0.is_empty() {
        // Nothing carried: the fields `put_str` sets on an empty message, in tag order.
        for (field, text) in [(node_proto::NAME, &n.name), (node_proto::OP_TYPE, &n.op_type)] {
            if !text.is_empty() {
                put_len_field(scratch, field, text.as_bytes());
            }
        }
        for a in &n.attrs {
            attr_bytes(model, a, scratch);
        }
        if !n.domain.is_empty() {
            put_len_field(scratch, node_proto::DOMAIN, n.domain.as_bytes());
        }
    } else {
        let mut p: onnx::NodeProto = carry(&n.proto);
        put_str(&mut p.name, &n.name);
        put_str(&mut p.op_type, &n.op_type);
        put_str(&mut p.domain, &n.domain);
        // prost writes fields in tag order; these come between `output` (2) and `attribute` (5).
        let head = onnx::NodeProto { name: p.name.take(), op_type: p.op_type.take(), ..Default::default() };
        head.encode_raw(scratch);
        for a in &n.attrs {
            attr_bytes(model, a, scratch);
        }
        // The rest: doc_string, domain, overload, metadata and device configurations.
        p.encode_raw(scratch);
    }
    put_len_field(out, graph_proto::NODE, scratch);
}

/// Writes attribute `a` as field 5 of a `NodeProto` to `out`.
pub(super) fn attr_bytes(model: &Model, a: &Attribute, out: &mut Vec<u8>) {
    let mut p = attr_to(a);
    let mut body = Vec::new();
    // prost writes fields in tag order: subgraphs go after the fields whose tags come first
    // (`g`, 6, follows `t`; `graphs`, 11, follows `tensors`), the rest after them.
    let (field, graphs): (u32, &[GraphId]) = match &a.value {
        AttrValue::Graph(g) => (attribute_proto::G, std::slice::from_ref(g)),
        AttrValue::Graphs(gs) => (attribute_proto::GRAPHS, gs),
        _ => (0, &[]),
    };
    if field != 0 {
        let mut head = onnx::AttributeProto {
            name: p.name.take(),
            f: p.f.take(),
            i: p.i.take(),
            s: p.s.take(),
            t: p.t.take(),
            ..Default::default()
        };
        if field == attribute_proto::GRAPHS {
            head.floats = std::mem::take(&mut p.floats);
            head.ints = std::mem::take(&mut p.ints);
            head.strings = std::mem::take(&mut p.strings);
            head.tensors = std::mem::take(&mut p.tensors);
        }
        head.encode_raw(&mut body);
        for g in graphs {
            put_graph_field(model, *g, field, &mut body);
        }
    }
    p.encode_raw(&mut body);
    put_len_field(out, node_proto::ATTRIBUTE, &body);
}

/// The attribute as saved, without its subgraphs (`attr_bytes` writes those).
pub(super) fn attr_to(a: &Attribute) -> onnx::AttributeProto {
    let mut p: onnx::AttributeProto = carry(&a.proto);
    put_str(&mut p.name, &a.name);
    let Some(kind) = attr_type(&a.value) else { return p };
    match &a.value {
        AttrValue::Tensor(t) => p.t = Some(tensor_to(t)),
        AttrValue::Tensors(ts) => p.tensors = ts.iter().map(tensor_to).collect(),
        // Placeholders for the kind check below; `attr_bytes` writes the graphs themselves.
        AttrValue::Graph(_) => p.g = Some(onnx::GraphProto::default()),
        AttrValue::Graphs(gs) => p.graphs = vec![onnx::GraphProto::default(); gs.len()],
        simple => {
            let same = attr_kind(&p) == kind && attr_eq(&simple_attr(&p, kind), simple);
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
    p.g = None;
    p.graphs = Vec::new();
    p
}

/// Equality of simple attribute values, bitwise for floats (so NaN payloads round-trip).
pub(super) fn attr_eq(a: &AttrValue, b: &AttrValue) -> bool {
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

/// Writes value info `v` as field `field` of a `GraphProto` to `out`.
pub(super) fn value_info_bytes<'m>(
    model: &Model,
    v: &'m ValueInfo,
    field: u32,
    out: &mut Vec<u8>,
    last: &mut LastType<'m>,
) {
    if !v.proto.0.is_empty() {
        put_len_field(out, field, &value_info_to(model, v).encode_to_vec());
        return;
    }
    // Nothing carried: the name when it is not empty, the type when there is one.
    let name = model.name(v.value);
    let ty = v.ty.as_ref().map_or(&[][..], |t| last.field(t));
    let len = if name.is_empty() { 0 } else { len_field_len(value_info_proto::NAME, name.len()) } + ty.len();
    put_len_prefix(out, field, len);
    if !name.is_empty() {
        put_len_field(out, value_info_proto::NAME, name.as_bytes());
    }
    out.extend_from_slice(ty);
}

/// The encoded size of [`type_to`]'s `TypeProto` for `t`.
pub(super) fn type_len(t: &Type, sp: &Spellings) -> usize {
    match t {
        Type::Tensor { dtype, shape } => {
            len_field_len(type_proto::TENSOR_TYPE, tensor_type_len(*dtype, shape.as_deref(), sp))
        }
        _ => type_to(t, sp).encoded_len(),
    }
}

pub(super) fn elem_code(dtype: Option<DType>) -> u64 {
    i64::from(dtype.map(DType::onnx).unwrap_or(0)) as u64
}

pub(super) fn tensor_type_len(dtype: Option<DType>, shape: Option<&[Dim]>, sp: &Spellings) -> usize {
    1 + prost::encoding::encoded_len_varint(elem_code(dtype))
        + shape.map_or(0, |s| len_field_len(type_proto_tensor::SHAPE, shape_len(s, sp)))
}

pub(super) fn shape_len(shape: &[Dim], sp: &Spellings) -> usize {
    shape.iter().map(|d| len_field_len(tensor_shape_proto::DIM, dim_len(d, sp))).sum()
}

/// A dim's encoded size. A size inference invented (`?3`, or a term over one) is written as
/// an unnamed dim: its number means nothing outside one run of inference.
pub(super) fn dim_len(d: &Dim, sp: &Spellings) -> usize {
    match d {
        Dim::Known(n) => 1 + prost::encoding::encoded_len_varint(*n as u64),
        Dim::Term(t) if !t.has_fresh() => len_field_len(dimension::DIM_PARAM, term_text(t, sp).len()),
        Dim::Term(_) | Dim::Unknown => 0,
    }
}

/// Writes the fields of [`type_to`]'s `TypeProto` for `t`.
pub(super) fn put_type(t: &Type, out: &mut Vec<u8>, sp: &Spellings) {
    let Type::Tensor { dtype, shape } = t else {
        type_to(t, sp).encode_raw(out);
        return;
    };
    put_len_prefix(out, type_proto::TENSOR_TYPE, tensor_type_len(*dtype, shape.as_deref(), sp));
    put_key(out, type_proto_tensor::ELEM_TYPE, 0);
    put_varint(elem_code(*dtype), out);
    if let Some(shape) = shape {
        put_len_prefix(out, type_proto_tensor::SHAPE, shape_len(shape, sp));
        for d in shape {
            put_len_prefix(out, tensor_shape_proto::DIM, dim_len(d, sp));
            match d {
                Dim::Known(n) => {
                    put_key(out, dimension::DIM_VALUE, 0);
                    put_varint(*n as u64, out);
                }
                Dim::Term(t) if !t.has_fresh() => put_len_field(out, dimension::DIM_PARAM, term_text(t, sp).as_bytes()),
                Dim::Term(_) | Dim::Unknown => {}
            }
        }
    }
}

pub(super) fn value_info_to(model: &Model, v: &ValueInfo) -> onnx::ValueInfoProto {
    let mut p: onnx::ValueInfoProto = carry(&v.proto);
    put_str(&mut p.name, model.name(v.value));
    if p.r#type.as_ref().map(type_from) != v.ty {
        p.r#type = v.ty.as_ref().map(|t| type_to(t, &model.spellings));
    }
    p
}

pub(super) fn tensor_to(t: &Tensor) -> onnx::TensorProto {
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

/// The `dim_value`s a value's declared tensor type holds as written in the file (negative
/// ones included, which the IR reads as unknown): one entry per axis, `None` for a
/// `dim_param` or an unset dim. `None` when no tensor shape is declared.
pub fn declared_dims(info: &ValueInfo) -> Option<Vec<Option<i64>>> {
    use onnx::tensor_shape_proto::dimension::Value as DV;
    use onnx::type_proto::Value as V;
    let p: onnx::ValueInfoProto = carry(&info.proto);
    let mut ty = p.r#type?;
    // Look through sequences and optionals to the tensor inside.
    loop {
        match ty.value? {
            V::TensorType(t) => {
                let shape = t.shape?;
                return Some(
                    shape
                        .dim
                        .iter()
                        .map(|d| match d.value {
                            Some(DV::DimValue(v)) => Some(v),
                            _ => None,
                        })
                        .collect(),
                );
            }
            V::SequenceType(s) => ty = *s.elem_type?,
            V::OptionalType(o) => ty = *o.elem_type?,
            _ => return None,
        }
    }
}

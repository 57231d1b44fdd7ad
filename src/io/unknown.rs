//! Unknown fields. prost drops fields its schema does not know, so a model that holds any
//! cannot be written back whole; the wire format is walked once at load to say where.

/// The messages of `onnx.proto` whose fields the walk knows.
#[derive(Clone, Copy, Debug)]
pub(super) enum Msg {
    Model,
    Graph,
    Node,
    Attr,
    Tensor,
    Segment,
    Sparse,
    ValueInfo,
    Type,
    TypeTensor,
    TypeSeq,
    TypeMap,
    TypeOpt,
    TypeOpaque,
    Shape,
    Dimension,
    Entry,
    Opset,
    Function,
    Training,
    DeviceConf,
    Annotation,
    NodeDevConf,
    Sharding,
    ShardedDim,
    SimpleSharded,
    IntIntList,
}

/// A known field: a scalar (or packed scalars, strings, bytes), or a message of type `Msg`
/// named `&str`, repeated or not.
pub(super) enum Known {
    Scalar,
    Msg(&'static str, Msg, bool),
}

/// The field numbered `n` of message `m`, as `proto/onnx.proto` (ONNX 1.23.2) declares it.
pub(super) fn field(m: Msg, n: u64) -> Option<Known> {
    use Known::{Msg as M, Scalar as S};
    use Msg::*;
    let f = match (m, n) {
        (Model, 1..=6) => S,
        (Model, 7) => M("graph", Graph, false),
        (Model, 8) => M("opset_import", Opset, true),
        (Model, 14) => M("metadata_props", Entry, true),
        (Model, 20) => M("training_info", Training, true),
        (Model, 25) => M("functions", Function, true),
        (Model, 26) => M("configuration", DeviceConf, true),
        (Graph, 2 | 10) => S,
        (Graph, 1) => M("node", Node, true),
        (Graph, 5) => M("initializer", Tensor, true),
        (Graph, 15) => M("sparse_initializer", Sparse, true),
        (Graph, 11) => M("input", ValueInfo, true),
        (Graph, 12) => M("output", ValueInfo, true),
        (Graph, 13) => M("value_info", ValueInfo, true),
        (Graph, 14) => M("quantization_annotation", Annotation, true),
        (Graph, 16) => M("metadata_props", Entry, true),
        (Node, 1..=4 | 6..=8) => S,
        (Node, 5) => M("attribute", Attr, true),
        (Node, 9) => M("metadata_props", Entry, true),
        (Node, 10) => M("device_configurations", NodeDevConf, true),
        (Attr, 1..=4 | 7..=9 | 13 | 20 | 21) => S,
        (Attr, 5) => M("t", Tensor, false),
        (Attr, 6) => M("g", Graph, false),
        (Attr, 10) => M("tensors", Tensor, true),
        (Attr, 11) => M("graphs", Graph, true),
        (Attr, 14) => M("tp", Type, false),
        (Attr, 15) => M("type_protos", Type, true),
        (Attr, 22) => M("sparse_tensor", Sparse, false),
        (Attr, 23) => M("sparse_tensors", Sparse, true),
        (Tensor, 1 | 2 | 4..=12 | 14) => S,
        (Tensor, 3) => M("segment", Segment, false),
        (Tensor, 13) => M("external_data", Entry, true),
        (Tensor, 16) => M("metadata_props", Entry, true),
        (Segment, 1 | 2) => S,
        (Sparse, 1) => M("values", Tensor, false),
        (Sparse, 2) => M("indices", Tensor, false),
        (Sparse, 3) => S,
        (ValueInfo, 1 | 3) => S,
        (ValueInfo, 2) => M("type", Type, false),
        (ValueInfo, 4) => M("metadata_props", Entry, true),
        (Type, 6) => S,
        (Type, 1) => M("tensor_type", TypeTensor, false),
        (Type, 4) => M("sequence_type", TypeSeq, false),
        (Type, 5) => M("map_type", TypeMap, false),
        (Type, 7) => M("opaque_type", TypeOpaque, false),
        (Type, 8) => M("sparse_tensor_type", TypeTensor, false),
        (Type, 9) => M("optional_type", TypeOpt, false),
        (TypeTensor, 1) => S,
        (TypeTensor, 2) => M("shape", Shape, false),
        (TypeSeq | TypeOpt, 1) => M("elem_type", Type, false),
        (TypeMap, 1) => S,
        (TypeMap, 2) => M("value_type", Type, false),
        (TypeOpaque, 1 | 2) => S,
        (Shape, 1) => M("dim", Dimension, true),
        (Dimension, 1..=3) => S,
        (Entry | Opset | IntIntList, 1 | 2) => S,
        (Function, 1 | 4..=6 | 8 | 10 | 13) => S,
        (Function, 7) => M("node", Node, true),
        (Function, 9) => M("opset_import", Opset, true),
        (Function, 11) => M("attribute_proto", Attr, true),
        (Function, 12) => M("value_info", ValueInfo, true),
        (Function, 14) => M("metadata_props", Entry, true),
        (Training, 1) => M("initialization", Graph, false),
        (Training, 2) => M("algorithm", Graph, false),
        (Training, 3) => M("initialization_binding", Entry, true),
        (Training, 4) => M("update_binding", Entry, true),
        (DeviceConf, 1..=3) => S,
        (Annotation, 1) => S,
        (Annotation, 2) => M("quant_parameter_tensor_names", Entry, true),
        (NodeDevConf, 1 | 3) => S,
        (NodeDevConf, 2) => M("sharding_spec", Sharding, true),
        (Sharding, 1 | 2) => S,
        (Sharding, 3) => M("index_to_device_group_map", IntIntList, true),
        (Sharding, 4) => M("sharded_dim", ShardedDim, true),
        (ShardedDim, 1) => S,
        (ShardedDim, 2) => M("simple_sharding", SimpleSharded, true),
        (SimpleSharded, 1..=3) => S,
        _ => return None,
    };
    Some(f)
}

/// How many places [`unknown_fields`] names before it only counts.
pub(super) const MAX_LOSSY: usize = 20;

/// Where `bytes` (an encoded `ModelProto`) holds fields the schema does not know, and how deep
/// its messages nest.
pub(super) fn unknown_fields(bytes: &[u8]) -> (Vec<String>, usize) {
    let mut w = Walk { out: Vec::new(), count: 0, deepest: 0, path: Vec::new() };
    w.walk(bytes, Msg::Model, 0);
    if w.count > MAX_LOSSY {
        let more = w.count - MAX_LOSSY;
        w.out.push(format!("and {more} more"));
    }
    (w.out, w.deepest)
}

pub(super) fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Skips one field value of wire type `wire` at `pos` (for a group, up to its end).
pub(super) fn skip(buf: &[u8], pos: &mut usize, wire: u64) -> Option<()> {
    let mut groups = 0usize;
    let mut wire = wire;
    loop {
        match wire {
            0 => {
                varint(buf, pos)?;
            }
            1 => *pos = pos.checked_add(8).filter(|p| *p <= buf.len())?,
            2 => {
                let len = usize::try_from(varint(buf, pos)?).ok()?;
                *pos = pos.checked_add(len).filter(|p| *p <= buf.len())?;
            }
            3 => groups += 1,
            4 => groups = groups.checked_sub(1)?,
            5 => *pos = pos.checked_add(4).filter(|p| *p <= buf.len())?,
            _ => return None,
        }
        if groups == 0 {
            return Some(());
        }
        wire = varint(buf, pos)? & 7;
    }
}

/// How deep the unknown-field walk descends; deeper messages are noted as unchecked.
pub(super) const WALK_DEPTH: usize = 200;

/// True when the encoded `NodeProto` in `buf` holds only well-formed length-delimited scalar
/// fields the schema knows (inputs, outputs, name, op type, doc string, domain, overload): most
/// nodes, and nothing in them for the walk to note or descend into.
pub(super) fn plain_node(buf: &[u8]) -> bool {
    let mut pos = 0;
    while pos < buf.len() {
        let Some(key) = varint(buf, &mut pos) else { return false };
        if key & 7 != 2
            || !matches!(field(Msg::Node, key >> 3), Some(Known::Scalar))
            || skip(buf, &mut pos, 2).is_none()
        {
            return false;
        }
    }
    true
}

/// The state of the unknown-field walk. The path to the current message is kept as a stack
/// of (field name, index) and rendered only when something is noted.
pub(super) struct Walk {
    out: Vec<String>,
    count: usize,
    deepest: usize,
    path: Vec<(&'static str, Option<usize>)>,
}

impl Walk {
    fn note(&mut self, what: std::fmt::Arguments) {
        self.count += 1;
        if self.out.len() < MAX_LOSSY {
            let mut text = String::from("model");
            for (name, index) in &self.path {
                text.push('.');
                text.push_str(name);
                if let Some(i) = index {
                    text.push_str(&format!("[{i}]"));
                }
            }
            self.out.push(format!("{text}: {what}"));
        }
    }

    fn walk(&mut self, buf: &[u8], msg: Msg, depth: usize) {
        self.deepest = self.deepest.max(depth);
        if depth > WALK_DEPTH {
            self.note(format_args!("nested too deep to check"));
            return;
        }
        // How many of each repeated message field came before, to name the index; a message
        // has few such fields.
        let mut seen: Vec<(u64, usize)> = Vec::new();
        let mut pos = 0;
        while pos < buf.len() {
            let Some(key) = varint(buf, &mut pos) else {
                self.note(format_args!("malformed field"));
                return;
            };
            let (number, wire) = (key >> 3, key & 7);
            let start = pos;
            if skip(buf, &mut pos, wire).is_none() {
                self.note(format_args!("malformed field {number}"));
                return;
            }
            match field(msg, number) {
                None => self.note(format_args!("unknown field {number}")),
                Some(Known::Msg(name, sub, repeated)) if wire == 2 => {
                    let mut inner = start;
                    if varint(buf, &mut inner).is_none() {
                        continue;
                    }
                    let Some(body) = buf.get(inner..pos) else { continue };
                    let index = if repeated {
                        Some(match seen.iter_mut().find(|(n, _)| *n == number) {
                            Some((_, i)) => {
                                *i += 1;
                                *i
                            }
                            None => {
                                seen.push((number, 0));
                                0
                            }
                        })
                    } else {
                        None
                    };
                    if matches!(sub, Msg::Node) && depth < WALK_DEPTH && plain_node(body) {
                        // Nothing inside to note or descend into: only how deep it lies.
                        self.deepest = self.deepest.max(depth + 1);
                        continue;
                    }
                    self.path.push((name, index));
                    self.walk(body, sub, depth + 1);
                    self.path.pop();
                }
                Some(_) => {}
            }
        }
    }
}

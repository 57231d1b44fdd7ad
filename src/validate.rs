//! Structure checks that need no shapes: tensors whose dims, element counts, byte sizes and
//! stored data disagree, unsafe external-data references, negative or overflowing declared
//! dims and names defined twice, external weights that are not there, nodes of domains not
//! imported and imports newer than this build knows. Returns findings; reads no file
//! (external weights are looked at with a stat only) and never mutates the model.

use crate::diag::{Code, Diagnostic, Severity};
use crate::dtype::DType;
use crate::io;
use crate::ir::{norm_domain, AttrValue, Def, Graph, Model, NodeId, Tensor, TensorData};

/// Every structural finding of `model`, graph by graph in file order.
pub fn validate(model: &Model) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for graph in &model.graphs {
        for t in &graph.initializers {
            tensor(model, graph, None, &format!("initializer '{}'", t.name), t, &mut out);
        }
        for n in &graph.order {
            for a in &model.node(*n).attrs {
                for (i, t) in a.tensors().iter().enumerate() {
                    let what = match &a.value {
                        AttrValue::Tensors(_) => format!("tensor {i} of attribute '{}'", a.name),
                        _ => format!("tensor of attribute '{}'", a.name),
                    };
                    tensor(model, graph, Some(*n), &what, t, &mut out);
                }
            }
        }
        let declared = graph
            .inputs
            .iter()
            .map(|v| ("graph input", v))
            .chain(graph.outputs.iter().map(|v| ("graph output", v)))
            .chain(graph.value_info.iter().map(|v| ("value_info", v)));
        for (kind, info) in declared {
            let Some(dims) = io::declared_dims(info) else { continue };
            let name = model.name(info.value);
            let what = format!("{kind} '{name}'");
            if let Some((severity, code, msg)) = declared_problem(&what, &dims) {
                out.push(Diagnostic { severity, ..finding(model, graph, None, code, msg) });
            }
        }
    }
    imports(model, &mut out);
    for v in &model.values {
        if v.shadows.is_some() && matches!(v.def, Def::Input | Def::Initializer) {
            let graph = model.graph(v.graph);
            let kind = if v.def == Def::Input { "graph input" } else { "initializer" };
            let msg = format!("{kind} '{}' is already defined earlier in this graph", v.name);
            out.push(finding(model, graph, None, Code::DuplicateDefinition, msg));
        }
    }
    out
}

/// The domains onnxruntime takes without an import: the default one (which `no-opset` covers)
/// and its own.
const IMPLIED: &[&str] = &["", "ai.onnx.ml", "com.microsoft", "com.microsoft.nchwc", "com.ms.internal.nhwc"];

/// Imports onnxruntime refuses: a node of another domain than `IMPLIED` that its graph does not
/// import ("No opset import for domain 'foo'"; a function body imports its own, or else the
/// model's), and a newer version of a known domain than this build knows ("Opset 30 is under
/// development"), a warning, as a newer onnxruntime may run it.
fn imports(model: &Model, out: &mut Vec<Diagnostic>) {
    for o in &model.opsets {
        if let Some(newest) = crate::ops::newest(&o.domain).filter(|n| o.version > *n) {
            let domain = if norm_domain(&o.domain).is_empty() { "ai.onnx" } else { &o.domain };
            let msg = format!(
                "the model imports {domain} opset {}, newer than the {newest} this build knows: onnxruntime 1.32 \
                 refuses it, and its ops are inferred by their opset-{newest} schemas",
                o.version
            );
            out.push(Diagnostic::new(Severity::Warning, Code::OpsetUnknown, "main", msg));
        }
    }
    for g in model.graph_ids() {
        // A function body's own imports, where it has any (onnxruntime: "No opset registered for
        // domain my.g in function F"), else the model's.
        let root = model.root(g);
        let opsets = match model.functions.iter().find(|f| f.graph == root) {
            Some(f) if !f.opsets.is_empty() => &f.opsets,
            _ => &model.opsets,
        };
        let graph = model.graph(g);
        for n in &graph.order {
            let domain = norm_domain(&model.node(*n).domain);
            if !IMPLIED.contains(&domain) && !opsets.iter().any(|o| norm_domain(&o.domain) == domain) {
                let msg =
                    format!("its domain '{domain}' is not among the opsets imported; onnxruntime refuses the model");
                out.push(finding(model, graph, Some(*n), Code::DomainNotImported, msg));
            }
        }
    }
}

fn finding(model: &Model, graph: &Graph, node: Option<NodeId>, code: Code, message: String) -> Diagnostic {
    let mut d = Diagnostic::new(Severity::Error, code, &graph.path, message);
    if let Some(n) = node {
        d.node = Some(model.node_label(n));
        d.op_type = Some(model.node(n).op_type.to_string());
    }
    d
}

/// The first problem of `dims` (a negative dim, or an element count past `i64::MAX`), as a
/// code and a message naming `what`.
fn dims_problem(what: &str, dims: &[i64]) -> Option<(Code, String)> {
    if let Some((axis, d)) = dims.iter().enumerate().find(|(_, d)| **d < 0) {
        return Some((Code::NegativeDim, format!("{what} has dim {d} at axis {axis}; dims must be 0 or more")));
    }
    if elements(dims).is_none() {
        return Some((Code::SizeOverflow, format!("{what} has dims {dims:?}: more than 2^63 elements")));
    }
    None
}

/// [`dims_problem`] for a declared shape, whose symbolic or unset dims (`None`) count as
/// unknown: a negative dim at its real axis, or known dims whose product alone overflows.
/// Exporters (Paddle, older PyTorch) write -1 for a dynamic size, which is read as unknown and
/// worth a warning; any other negative size is an error.
fn declared_problem(what: &str, dims: &[Option<i64>]) -> Option<(Severity, Code, String)> {
    if let Some((axis, d)) = dims.iter().enumerate().find_map(|(i, d)| d.filter(|d| *d < 0).map(|d| (i, d))) {
        return Some(match d {
            -1 => (
                Severity::Warning,
                Code::NegativeDim,
                format!("{what} has dim -1 at axis {axis}; it is read as unknown"),
            ),
            _ => (
                Severity::Error,
                Code::NegativeDim,
                format!("{what} has dim {d} at axis {axis}; sizes are 0 or more, and only -1 is read as unknown"),
            ),
        });
    }
    let known: Vec<i64> = dims.iter().flatten().copied().collect();
    dims_problem(what, &known).map(|(code, msg)| (Severity::Error, code, msg))
}

/// The element count of non-negative `dims`, or `None` past `i64::MAX`.
fn elements(dims: &[i64]) -> Option<u64> {
    dims.iter().try_fold(1i64, |acc, d| acc.checked_mul(*d)).and_then(|n| u64::try_from(n).ok())
}

/// The bytes `n` elements of `dtype` take in `raw_data`, when the layout is known; `Err` on
/// overflow.
fn raw_bytes(dtype: DType, n: u64) -> Option<Result<u64, ()>> {
    match dtype {
        // 4-bit types pack two elements to a byte.
        DType::Other(21..=23) => Some(Ok(n.div_ceil(2))),
        _ => dtype.size().map(|s| n.checked_mul(s as u64).ok_or(())),
    }
}

/// How many entries the typed data field holding `n` elements of `dtype` has, when the spec
/// says so unambiguously.
fn typed_len(dtype: DType, data: &TensorData, n: u64) -> Option<u64> {
    let two = || n.checked_mul(2);
    match (data, dtype) {
        (TensorData::Floats(_), DType::F32) => Some(n),
        (TensorData::Floats(_), DType::C64) => two(),
        (TensorData::Doubles(_), DType::F64) => Some(n),
        (TensorData::Doubles(_), DType::C128) => two(),
        (TensorData::Int64s(_), DType::I64) => Some(n),
        (TensorData::Uint64s(_), DType::U32 | DType::U64) => Some(n),
        (TensorData::Strings(_), DType::Str) => Some(n),
        (
            TensorData::Int32s(_),
            DType::I32
            | DType::I16
            | DType::I8
            | DType::U16
            | DType::U8
            | DType::Bool
            | DType::F16
            | DType::BF16
            | DType::Other(17..=20),
        ) => Some(n),
        (TensorData::Int32s(_), DType::Other(21..=23)) => Some(n.div_ceil(2)),
        _ => None,
    }
}

fn tensor(model: &Model, graph: &Graph, node: Option<NodeId>, what: &str, t: &Tensor, out: &mut Vec<Diagnostic>) {
    let mut push = |code, msg| out.push(finding(model, graph, node, code, msg));
    if let Some((code, msg)) = dims_problem(what, &t.dims) {
        push(code, msg);
        return;
    }
    let Some(n) = elements(&t.dims) else { return };
    let Some(dtype) = t.dtype else { return };
    let expected = raw_bytes(dtype, n);
    if let Some(Err(())) = expected {
        push(Code::SizeOverflow, format!("{what} has dims {:?}: its {} bytes overflow", t.dims, dtype.name()));
        return;
    }
    let expected = expected.and_then(Result::ok);
    match &t.data {
        TensorData::Raw(bytes) => {
            if let Some(want) = expected {
                if bytes.len() as u64 != want {
                    let msg = format!(
                        "{what} holds {} bytes of raw_data, but {n} {} elements (dims {:?}) take {want}",
                        bytes.len(),
                        dtype.name(),
                        t.dims
                    );
                    push(Code::TensorDataSize, msg);
                }
            }
        }
        TensorData::External { location, offset, length } => {
            if let Some(why) = io::unsafe_location(location) {
                push(Code::ExternalDataUnsafe, format!("{what}: {why}"));
            } else if let Some(dir) = &model.dir {
                // The weights a run would read must be there: checked with a stat, never a read.
                if let Err(crate::Error::ExternalData { reason, .. }) =
                    io::external_extent(dir, &t.name, location, *offset, *length)
                {
                    push(Code::ExternalDataMissing, format!("{what}: {reason}"));
                }
            }
            if let (Some(len), Some(want)) = (length, expected) {
                if *len != want {
                    let msg = format!(
                        "{what} references {len} bytes of external data, but {n} {} elements (dims {:?}) take {want}",
                        dtype.name(),
                        t.dims
                    );
                    push(Code::TensorDataSize, msg);
                }
            }
        }
        TensorData::Empty => {
            if n > 0 && dtype != DType::Str {
                let msg = format!("{what} holds no data, but its dims {:?} promise {n} elements", t.dims);
                push(Code::TensorDataSize, msg);
            }
        }
        data => {
            let have = match data {
                TensorData::Floats(v) => v.len(),
                TensorData::Int32s(v) => v.len(),
                TensorData::Int64s(v) => v.len(),
                TensorData::Doubles(v) => v.len(),
                TensorData::Uint64s(v) => v.len(),
                TensorData::Strings(v) => v.len(),
                _ => return,
            } as u64;
            match typed_len(dtype, data, n) {
                Some(want) if want != have => {
                    let msg = format!(
                        "{what} holds {have} stored values, but {n} {} elements (dims {:?}) need {want}",
                        dtype.name(),
                        t.dims
                    );
                    push(Code::TensorDataSize, msg);
                }
                _ => {}
            }
        }
    }
}

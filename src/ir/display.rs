//! A stable text dump of a model's graphs, for snapshots and `--dump` output: one line per
//! input, initializer, node and output, in file order, subgraphs indented under their node.

use std::fmt::Write;

use super::{AttrValue, GraphId, Model, ValueId};

/// Dumps the model; `ty` renders a value's type (e.g. from the shape table), or `None` to omit.
pub fn dump(model: &Model, ty: &dyn Fn(ValueId) -> Option<String>) -> String {
    let mut out = String::new();
    graph(model, &model.positions(), Model::MAIN, 0, ty, &mut out);
    out
}

fn graph(
    model: &Model,
    positions: &super::IdMap<super::NodeId, usize>,
    id: GraphId,
    depth: usize,
    ty: &dyn Fn(ValueId) -> Option<String>,
    out: &mut String,
) {
    let pad = "  ".repeat(depth);
    let g = model.graph(id);
    let typed = |v: ValueId| match ty(v) {
        Some(t) => format!("{}: {t}", model.name(v)),
        None => model.name(v).to_string(),
    };
    let _ = writeln!(out, "{pad}graph {}", g.path);
    for i in &g.inputs {
        let _ = writeln!(out, "{pad}  input {}", typed(i.value));
    }
    for t in &g.initializers {
        let dtype = t.dtype.map(|d| d.name()).unwrap_or("?");
        let _ = writeln!(out, "{pad}  init {}: {dtype}{:?}", t.name, t.dims);
    }
    for n in &g.order {
        let node = model.node(*n);
        let ins: Vec<&str> = node.inputs.iter().map(|v| v.map(|v| model.name(v)).unwrap_or("")).collect();
        let outs: Vec<String> = node.outputs.iter().map(|v| v.map(typed).unwrap_or_default()).collect();
        let mut attrs = Vec::new();
        for a in &node.attrs {
            let v = match &a.value {
                AttrValue::Int(i) => i.to_string(),
                AttrValue::Float(f) => f.to_string(),
                AttrValue::Ints(v) => format!("{v:?}"),
                AttrValue::Floats(v) => format!("{v:?}"),
                AttrValue::String(s) => format!("{:?}", String::from_utf8_lossy(s)),
                AttrValue::Tensor(t) => format!("tensor{:?}", t.dims),
                AttrValue::Graph(_) | AttrValue::Graphs(_) => "graph".to_string(),
                _ => "..".to_string(),
            };
            attrs.push(format!("{}={v}", a.name));
        }
        let attrs = if attrs.is_empty() { String::new() } else { format!(" {{{}}}", attrs.join(", ")) };
        let op =
            if node.domain.is_empty() { node.op_type.to_string() } else { format!("{}.{}", node.domain, node.op_type) };
        let _ = writeln!(
            out,
            "{pad}  {} = {op}({}){attrs} -> {}",
            model.label_with(*n, positions),
            ins.join(", "),
            outs.join(", ")
        );
        for (_, sub) in node.subgraphs() {
            graph(model, positions, sub, depth + 2, ty, out);
        }
    }
    for o in &g.outputs {
        let _ = writeln!(out, "{pad}  output {}", typed(o.value));
    }
}

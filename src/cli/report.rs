//! Rendering of inference results: the `infer` table and JSON, and `check`'s findings in
//! text, JSON and GitHub annotation form.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use onnx_bcast::infer::{Constraint, Inference};
use onnx_bcast::ir::{GraphId, Model, NodeId, ValueId};
use onnx_bcast::shape::{Dim, Type};
use onnx_bcast::{Diagnostic, Result};

use super::Format;

/// Every tensor of every graph (inputs, initializers, node outputs) and every node, in file
/// order with subgraphs after the node that holds them.
fn walk(model: &Model) -> (Vec<ValueId>, Vec<NodeId>) {
    fn graph(model: &Model, g: GraphId, values: &mut Vec<ValueId>, nodes: &mut Vec<NodeId>) {
        let gr = model.graph(g);
        values.extend(gr.inputs.iter().map(|i| i.value));
        for t in &gr.initializers {
            if let Some(v) = model.local(g, &t.name) {
                if !values.contains(&v) {
                    values.push(v);
                }
            }
        }
        for n in &gr.order {
            nodes.push(*n);
            values.extend(model.node(*n).outputs.iter().flatten());
            for (_, sub) in model.node(*n).subgraphs() {
                graph(model, sub, values, nodes);
            }
        }
    }
    let (mut values, mut nodes) = (Vec::new(), Vec::new());
    graph(model, Model::MAIN, &mut values, &mut nodes);
    (values, nodes)
}

/// The key of a value in `tensors`: its name, qualified by its graph when a name repeats.
fn keys(model: &Model, values: &[ValueId]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    values
        .iter()
        .map(|v| {
            let name = model.name(*v).to_string();
            if seen.insert(name.clone()) {
                name
            } else {
                format!("{}:{name}", model.graph(model.value(*v).graph).path)
            }
        })
        .collect()
}

fn dim_json(d: &Dim) -> Json {
    match d {
        Dim::Known(n) => json!(n),
        Dim::Sym(s) => json!(s.as_str()),
        Dim::Unknown => Json::Null,
    }
}

fn type_json(ty: Option<&Type>) -> Json {
    let (dtype, shape) = match ty {
        Some(Type::Tensor { dtype, shape }) => (
            dtype.map(|d| json!(d.name())).unwrap_or(Json::Null),
            shape.as_ref().map(|s| Json::Array(s.iter().map(dim_json).collect())).unwrap_or(Json::Null),
        ),
        Some(Type::Sequence(_)) => (json!("sequence"), Json::Null),
        Some(Type::Optional(_)) => (json!("optional"), Json::Null),
        _ => (Json::Null, Json::Null),
    };
    json!({"dtype": dtype, "shape": shape})
}

fn type_text(ty: Option<&Type>) -> (String, String) {
    match ty {
        Some(Type::Tensor { dtype, shape }) => (
            dtype.map(|d| d.name().to_string()).unwrap_or_else(|| "?".into()),
            shape.as_ref().map(|s| onnx_bcast::shape::render(s)).unwrap_or_else(|| "?".into()),
        ),
        Some(Type::Sequence(_)) => ("sequence".into(), "-".into()),
        Some(Type::Optional(_)) => ("optional".into(), "-".into()),
        Some(Type::Other) => ("other".into(), "-".into()),
        None => ("?".into(), "?".into()),
    }
}

pub fn diag_json(d: &Diagnostic) -> Json {
    let mut m = Map::new();
    m.insert("severity".into(), json!(d.severity.to_string()));
    m.insert("code".into(), json!(d.code));
    m.insert("node".into(), json!(d.node));
    m.insert("op_type".into(), json!(d.op_type));
    m.insert("graph".into(), json!(d.graph));
    m.insert("axis".into(), json!(d.axis));
    if !d.inputs.is_empty() {
        let inputs: Vec<Json> = d.inputs.iter().map(|(n, s)| json!({"name": n, "shape": s})).collect();
        m.insert("inputs".into(), Json::Array(inputs));
    }
    if !d.sizes.is_empty() {
        let sizes: Vec<Json> = d.sizes.iter().map(|(i, s)| json!({"input": i, "size": s})).collect();
        m.insert("sizes".into(), Json::Array(sizes));
    }
    m.insert("message".into(), json!(d.message));
    Json::Object(m)
}

fn constraint_json(c: &Constraint) -> Json {
    json!({"condition": c.assumption.to_string(), "node": c.node, "op_type": c.op_type, "graph": c.graph, "axis": c.axis})
}

pub fn infer_json(path: &Path, model: &Model, inf: &Inference) -> String {
    let (values, nodes) = walk(model);
    let positions = model.positions();
    let mut tensors = Map::new();
    for (k, v) in keys(model, &values).into_iter().zip(&values) {
        tensors.insert(k, type_json(inf.ty(*v)));
    }
    let mut opsets = Map::new();
    for o in &model.opsets {
        opsets.insert(o.domain.clone(), json!(o.version));
    }
    let nodes: Vec<Json> = nodes
        .iter()
        .map(|n| {
            let node = model.node(*n);
            let names = |vs: &[Option<ValueId>]| -> Vec<String> {
                vs.iter().map(|v| v.map(|v| model.name(v).to_string()).unwrap_or_default()).collect()
            };
            json!({
                "name": model.label_with(*n, &positions), "op_type": node.op_type, "domain": node.domain,
                "graph": model.graph(node.graph).path,
                "inputs": names(&node.inputs), "outputs": names(&node.outputs),
            })
        })
        .collect();
    let doc = json!({
        "model": path.display().to_string(),
        "ir_version": model.ir_version,
        "opsets": opsets,
        "tensors": tensors,
        "nodes": nodes,
        "diagnostics": inf.diagnostics.iter().map(diag_json).collect::<Vec<_>>(),
        "constraints": inf.constraints.iter().map(constraint_json).collect::<Vec<_>>(),
    });
    format!("{}\n", serde_json::to_string_pretty(&doc).unwrap_or_default())
}

pub fn infer_text(path: &Path, model: &Model, inf: &Inference) -> String {
    let (values, _) = walk(model);
    let mut out = String::new();
    let opsets: Vec<String> = model
        .opsets
        .iter()
        .map(|o| format!("{} {}", if o.domain.is_empty() { "ai.onnx" } else { &o.domain }, o.version))
        .collect();
    let _ = writeln!(out, "model {} (ir_version {}, opset {})", path.display(), model.ir_version, opsets.join(", "));
    let rows: Vec<(String, String, String)> = keys(model, &values)
        .into_iter()
        .zip(&values)
        .map(|(k, v)| {
            let (d, s) = type_text(inf.ty(*v));
            (k, d, s)
        })
        .collect();
    let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max("tensor".len());
    let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max("dtype".len());
    let _ = writeln!(out, "\n{:w0$}  {:w1$}  shape", "tensor", "dtype");
    for (k, d, s) in rows {
        let _ = writeln!(out, "{k:w0$}  {d:w1$}  {s}");
    }
    if !inf.constraints.is_empty() {
        let _ = writeln!(out, "\nassumed:");
        for c in &inf.constraints {
            let _ = writeln!(
                out,
                "  {}   (needed by {} ({}) at axis {}, {})",
                c.assumption, c.node, c.op_type, c.axis, c.graph
            );
        }
    }
    for d in &inf.diagnostics {
        let _ = writeln!(out, "\n{d}");
    }
    let errors = inf.diagnostics.iter().filter(|d| d.severity == onnx_bcast::Severity::Error).count();
    let warnings = inf.diagnostics.len() - errors;
    let _ = writeln!(out, "\n{} tensors, {errors} errors, {warnings} warnings", values.len());
    out
}

pub fn check(results: &[(PathBuf, Result<(Model, Inference)>)], format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Json => {
            let models: Vec<Json> = results
                .iter()
                .map(|(p, r)| match r {
                    Ok((_, inf)) => json!({
                        "model": p.display().to_string(),
                        "diagnostics": inf.diagnostics.iter().map(diag_json).collect::<Vec<_>>(),
                        "constraints": inf.constraints.iter().map(constraint_json).collect::<Vec<_>>(),
                    }),
                    Err(e) => json!({"model": p.display().to_string(), "error": e.to_string()}),
                })
                .collect();
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(&json!({"models": models})).unwrap_or_default());
        }
        Format::Github => {
            for (p, r) in results {
                match r {
                    Ok((_, inf)) => {
                        for d in &inf.diagnostics {
                            let node = d.node.clone().unwrap_or_else(|| d.graph.clone());
                            let op = d.op_type.clone().unwrap_or_default();
                            let _ = writeln!(
                                out,
                                "::{} file={},title={}::{node} ({op}): {}",
                                d.severity,
                                p.display(),
                                d.code,
                                d.message.replace('\n', " ")
                            );
                        }
                    }
                    Err(e) => {
                        let _ = writeln!(
                            out,
                            "::error file={},title=unreadable::{}",
                            p.display(),
                            e.to_string().replace('\n', " ")
                        );
                    }
                }
            }
        }
        Format::Text => {
            for (p, r) in results {
                match r {
                    Ok((_, inf)) if inf.diagnostics.is_empty() => {
                        let _ = writeln!(out, "{}: ok", p.display());
                    }
                    Ok((_, inf)) => {
                        let _ = writeln!(out, "{}:", p.display());
                        for d in &inf.diagnostics {
                            let _ = writeln!(out, "{d}\n");
                        }
                    }
                    Err(e) => {
                        let _ = writeln!(out, "{}: error: {e}", p.display());
                    }
                }
            }
        }
    }
    out
}

//! Reports: the `infer` table and JSON, `check`'s findings as text, JSON, GitHub annotations
//! and SARIF, and `diff`'s JSON, in the shapes `docs/cli.md` fixes. The command line prints
//! them; the Python package parses the JSON into dicts.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use crate::infer::{Constraint, Inference};
use crate::ir::{GraphId, Model, NodeId, ValueId};
use crate::shape::{Dim, Type};
use crate::{Code, Diagnostic, Result};

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

/// The key of a value in `tensors`: its name, qualified by its graph when a name repeats (and
/// numbered when that is taken too, so that no two values share a key).
fn keys(model: &Model, values: &[ValueId]) -> Vec<String> {
    let mut seen: std::collections::HashSet<String, foldhash::fast::RandomState> = Default::default();
    seen.reserve(values.len());
    values
        .iter()
        .map(|v| {
            let name = model.name(*v);
            let mut key = name.to_string();
            if seen.contains(&key) {
                let path = &model.graph(model.value(*v).graph).path;
                key = format!("{path}:{name}");
                let mut i = 2;
                while seen.contains(&key) {
                    key = format!("{path}:{name}#{i}");
                    i += 1;
                }
            }
            seen.insert(key.clone());
            key
        })
        .collect()
}

/// A JSON array of the items `F` gives, serialized as they come: no list is built first.
struct Seq<F>(F);

impl<F: Fn() -> I, I: Iterator<Item: serde::Serialize>> serde::Serialize for Seq<F> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

/// A dim as JSON: a number, a symbol's name, or null.
struct DimJson<'a>(&'a Dim);

impl serde::Serialize for DimJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self.0 {
            Dim::Known(n) => s.serialize_i64(*n),
            Dim::Term(t) => s.collect_str(t),
            Dim::Unknown => s.serialize_unit(),
        }
    }
}

/// A type as JSON: `{"dtype": ..., "shape": [...]}`, null where unknown.
struct TypeJson<'a>(Option<&'a Type>);

impl serde::Serialize for TypeJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (dtype, shape) = match self.0 {
            Some(Type::Tensor { dtype, shape }) => (dtype.map(|d| d.name()), shape.as_deref()),
            Some(Type::Sequence(_)) => (Some("sequence"), None),
            Some(Type::Optional(_)) => (Some("optional"), None),
            _ => (None, None),
        };
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("dtype", &dtype)?;
        map.serialize_entry("shape", &shape.map(|s| Seq(|| s.iter().map(DimJson))))?;
        map.end()
    }
}

/// A type's dtype and shape for the `infer` table: the shape's dims, or the text that stands
/// for them (`?` for a tensor of unknown rank or an unknown type, `-` for what is not a tensor).
fn type_text(ty: Option<&Type>) -> (&'static str, Result<&[Dim], &'static str>) {
    match ty {
        Some(Type::Tensor { dtype, shape }) => (dtype.map_or("?", |d| d.name()), shape.as_deref().ok_or("?")),
        Some(Type::Sequence(_)) => ("sequence", Err("-")),
        Some(Type::Optional(_)) => ("optional", Err("-")),
        Some(Type::Other) => ("other", Err("-")),
        None => ("?", Err("?")),
    }
}

/// A finding as JSON, in the contract's key order.
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
    if !d.origins.is_empty() {
        let origins: Vec<Json> = d.origins.iter().map(|(i, o)| json!({"input": i, "origin": o})).collect();
        m.insert("provenance".into(), Json::Array(origins));
    }
    if !d.sizes.is_empty() {
        let sizes: Vec<Json> = d.sizes.iter().map(|(i, s)| json!({"input": i, "size": s})).collect();
        m.insert("sizes".into(), Json::Array(sizes));
    }
    m.insert("message".into(), json!(d.message));
    Json::Object(m)
}

fn constraint_json(c: &Constraint) -> Json {
    let mut j = json!({"condition": c.assumption.to_string(), "node": c.node, "op_type": c.op_type, "graph": c.graph, "axis": c.axis});
    if let Some(d) = &c.declared {
        j["declared"] = json!(d.tensor);
    }
    j
}

fn contract_json(c: &crate::contract::Contract) -> Json {
    let dims: Map<String, Json> = c
        .dims
        .iter()
        .map(|(name, d)| {
            let counter = d.counterexample.as_ref().map(|c| {
                json!({"value": c.value, "node": c.node, "op_type": c.op_type, "graph": c.graph, "message": c.message,
                       "provenance": c.origins})
            });
            let entry = json!({
                "min": d.min, "max": d.max, "modulus": d.modulus, "residues": d.residues,
                "except": d.except, "also": d.also, "exact": d.exact, "text": d.text,
                "counterexample": counter,
            });
            (name.clone(), entry)
        })
        .collect();
    let relations: Vec<Json> = c
        .relations
        .iter()
        .map(|r| json!({"dims": r.dims, "condition": r.condition, "node": r.node, "exact": r.exact}))
        .collect();
    json!({"dims": dims, "relations": relations})
}

/// One line per restricted dim and per relation, as `check` and `infer` print the contract.
fn contract_lines(c: &crate::contract::Contract) -> Vec<String> {
    let mut out = Vec::new();
    for (name, d) in &c.dims {
        let mut line = format!("{name}: {}", d.text);
        if !d.exact {
            line.push_str(" (not exact)");
        }
        if let Some(x) = &d.counterexample {
            line.push_str(&format!("   (fails at {})", x.message));
            for o in &x.origins {
                line.push_str(&format!("\n      {o}"));
            }
        }
        out.push(line);
    }
    for r in &c.relations {
        out.push(format!("{}: {}   (needed by {})", r.dims.join(", "), r.condition, r.node));
    }
    out
}

/// The `infer --format json` document.
pub fn infer_json(path: &Path, model: &Model, inf: &Inference) -> String {
    let (values, nodes) = walk(model);
    let keys = keys(model, &values);
    let mut opsets = Map::new();
    for o in &model.opsets {
        opsets.insert(o.domain.clone(), json!(o.version));
    }
    let doc = InferDoc { path, model, inf, opsets, values: &values, keys: &keys, nodes: &nodes };
    // Serialized as it is walked: one small value per tensor or node at a time, never a tree
    // of the whole model (hundreds of bytes of maps per value).
    let mut out = Vec::new();
    let _ = serde_json::to_writer_pretty(&mut out, &doc);
    out.push(b'\n');
    String::from_utf8(out).unwrap_or_default()
}

/// The `infer --format json` document, in the contract's key order.
struct InferDoc<'a> {
    path: &'a Path,
    model: &'a Model,
    inf: &'a Inference,
    opsets: Map<String, Json>,
    values: &'a [ValueId],
    keys: &'a [String],
    nodes: &'a [NodeId],
}

impl serde::Serialize for InferDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        /// The tensors, each with its type.
        struct Tensors<'a>(&'a InferDoc<'a>);
        impl serde::Serialize for Tensors<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                let d = self.0;
                let mut map = s.serialize_map(Some(d.values.len()))?;
                for (k, v) in d.keys.iter().zip(d.values) {
                    map.serialize_entry(k, &TypeJson(d.inf.ty(*v)))?;
                }
                map.end()
            }
        }
        /// One node: `{"name", "op_type", "domain", "graph", "inputs", "outputs"}`.
        struct NodeJson<'a> {
            model: &'a Model,
            node: NodeId,
            label: String,
        }
        impl serde::Serialize for NodeJson<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                let (model, node) = (self.model, self.model.node(self.node));
                // Value names, `""` for an omitted one.
                let name = |v: &Option<ValueId>| v.map_or("", |v| model.name(v));
                let mut map = s.serialize_map(Some(6))?;
                map.serialize_entry("name", &self.label)?;
                map.serialize_entry("op_type", node.op_type.as_str())?;
                map.serialize_entry("domain", node.domain.as_str())?;
                map.serialize_entry("graph", &model.graph(node.graph).path)?;
                map.serialize_entry("inputs", &Seq(|| node.inputs.iter().map(name)))?;
                map.serialize_entry("outputs", &Seq(|| node.outputs.iter().map(name)))?;
                map.end()
            }
        }
        let (model, positions) = (self.model, self.model.positions());
        // The nodes, each with its op and the names of its inputs and outputs.
        let nodes =
            Seq(|| self.nodes.iter().map(|n| NodeJson { model, node: *n, label: model.label_with(*n, &positions) }));
        let mut map = s.serialize_map(Some(8))?;
        map.serialize_entry("model", &self.path.display().to_string())?;
        map.serialize_entry("ir_version", &self.model.ir_version)?;
        map.serialize_entry("opsets", &self.opsets)?;
        map.serialize_entry("tensors", &Tensors(self))?;
        map.serialize_entry("nodes", &nodes)?;
        map.serialize_entry("diagnostics", &self.inf.diagnostics.iter().map(diag_json).collect::<Vec<_>>())?;
        map.serialize_entry("constraints", &self.inf.constraints.iter().map(constraint_json).collect::<Vec<_>>())?;
        map.serialize_entry("contract", &contract_json(&self.inf.contract))?;
        map.end()
    }
}

/// `n` and the noun that counts it: `1 error`, `2 errors`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The `infer` table: every tensor's type and shape, then what was assumed, the contract and
/// the findings.
pub fn infer_text(path: &Path, model: &Model, inf: &Inference) -> String {
    let (values, _) = walk(model);
    let mut out = String::new();
    let opsets: Vec<String> = model
        .opsets
        .iter()
        .map(|o| format!("{} {}", if o.domain.is_empty() { "ai.onnx" } else { &o.domain }, o.version))
        .collect();
    let _ = writeln!(out, "model {} (ir_version {}, opset {})", path.display(), model.ir_version, opsets.join(", "));
    // Written row by row: no string is built per tensor but its key.
    let keys = keys(model, &values);
    let types: Vec<_> = values.iter().map(|v| type_text(inf.ty(*v))).collect();
    let w0 = keys.iter().map(String::len).max().unwrap_or(0).max("tensor".len());
    let w1 = types.iter().map(|t| t.0.len()).max().unwrap_or(0).max("dtype".len());
    let _ = writeln!(out, "\n{:w0$}  {:w1$}  shape", "tensor", "dtype");
    for (k, (d, shape)) in keys.iter().zip(&types) {
        let _ = match shape {
            Ok(s) => writeln!(out, "{k:w0$}  {d:w1$}  {}", crate::shape::Rendered(s)),
            Err(text) => writeln!(out, "{k:w0$}  {d:w1$}  {text}"),
        };
    }
    conditions(&mut out, inf, "\n", "");
    for d in &inf.diagnostics {
        let _ = writeln!(out, "\n{d}");
    }
    let errors = inf.diagnostics.iter().filter(|d| d.severity == crate::Severity::Error).count();
    let warnings = inf.diagnostics.len() - errors;
    let _ = writeln!(
        out,
        "\n{}, {}, {}",
        count(values.len(), "tensor", "tensors"),
        count(errors, "error", "errors"),
        count(warnings, "warning", "warnings")
    );
    out
}

/// The `assumed:` and `contract:` blocks of the text reports, each heading after `before` and
/// indented by `indent`, its lines by two spaces more.
fn conditions(out: &mut String, inf: &Inference, before: &str, indent: &str) {
    if !inf.constraints.is_empty() {
        let _ = writeln!(out, "{before}{indent}assumed:");
        for c in &inf.constraints {
            let _ = writeln!(out, "{indent}  {}", assumed_line(c));
        }
    }
    let lines = contract_lines(&inf.contract);
    if !lines.is_empty() {
        let _ = writeln!(out, "{before}{indent}contract:");
        for l in lines {
            let _ = writeln!(out, "{indent}  {l}");
        }
    }
}

/// One line per side condition, as `check` and `infer` print it.
fn assumed_line(c: &Constraint) -> String {
    let by = match &c.declared {
        Some(d) => format!("declared for '{}', made by", d.tensor),
        None => "needed by".to_string(),
    };
    format!("{}   ({by} {} ({}) at axis {}, {})", c.assumption, c.node, c.op_type, c.axis, c.graph)
}

/// Each op without a rule once, with how many nodes use it: the findings `check` shows.
fn shown(inf: &Inference) -> Vec<Diagnostic> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut list: Vec<(Diagnostic, usize)> = Vec::new();
    for d in &inf.diagnostics {
        if d.code == Code::UnknownOp && d.message.starts_with("no shape rule for") {
            if let Some(&at) = first.get(d.message.as_str()) {
                list[at].1 += 1;
                continue;
            }
            first.insert(&d.message, list.len());
        }
        list.push((d.clone(), 1));
    }
    list.into_iter()
        .map(|(mut d, n)| {
            if n > 1 {
                d.message = format!("{} ({n} nodes use it; the first is shown)", d.message);
            }
            d
        })
        .collect()
}

/// Findings as a JSON array.
pub fn diagnostics_json(found: &[Diagnostic]) -> String {
    Json::Array(found.iter().map(diag_json).collect()).to_string()
}

/// One model of `check --format json`: `{"model", "diagnostics", "constraints", "contract"}`.
pub fn model_json(path: &Path, inf: &Inference) -> Json {
    json!({
        "model": path.display().to_string(),
        "diagnostics": inf.diagnostics.iter().map(diag_json).collect::<Vec<_>>(),
        "constraints": inf.constraints.iter().map(constraint_json).collect::<Vec<_>>(),
        "contract": contract_json(&inf.contract),
    })
}

/// `check --format json`: `{"models": [...]}`, a model that could not be read as
/// `{"model", "error"}`.
pub fn check_json(results: &[(PathBuf, Result<Inference>)]) -> String {
    let models: Vec<Json> = results
        .iter()
        .map(|(p, r)| match r {
            Ok(inf) => model_json(p, inf),
            Err(e) => json!({"model": p.display().to_string(), "error": e.to_string()}),
        })
        .collect();
    format!("{}\n", serde_json::to_string_pretty(&json!({"models": models})).unwrap_or_default())
}

/// `check --format github`: one workflow command per finding, assumption and contract line.
pub fn check_github(results: &[(PathBuf, Result<Inference>)]) -> String {
    let mut out = String::new();
    let one_line = |s: &str| s.replace('\n', " ");
    for (p, r) in results {
        let file = p.display();
        let inf = match r {
            Ok(inf) => inf,
            Err(e) => {
                let _ = writeln!(out, "::error file={file},title=unreadable::{}", one_line(&e.to_string()));
                continue;
            }
        };
        for d in &shown(inf) {
            let node = d.node.clone().unwrap_or_else(|| d.graph.clone());
            let op = d.op_type.clone().unwrap_or_default();
            let _ =
                writeln!(out, "::{} file={file},title={}::{node} ({op}): {}", d.severity, d.code, one_line(&d.message));
        }
        for c in &inf.constraints {
            let (node, op, cond, axis, graph) = (&c.node, &c.op_type, &c.assumption, c.axis, &c.graph);
            let _ = writeln!(out, "::notice file={file},title=assumed::{node} ({op}): {cond} (axis {axis}, {graph})");
        }
        for l in contract_lines(&inf.contract) {
            let _ = writeln!(out, "::notice file={file},title=contract::{}", one_line(&l));
        }
    }
    out
}

/// `check`'s text report; a model that could not be read was reported on stderr.
pub fn check_text(results: &[(PathBuf, Result<Inference>)]) -> String {
    let mut out = String::new();
    for (p, inf) in results.iter().filter_map(|(p, r)| r.as_ref().ok().map(|inf| (p, inf))) {
        if inf.diagnostics.is_empty() {
            let _ = writeln!(out, "{}: ok", p.display());
        } else {
            let _ = writeln!(out, "{}:", p.display());
            for d in &shown(inf) {
                let _ = writeln!(out, "{d}\n");
            }
        }
        conditions(&mut out, inf, "", "  ");
    }
    out
}

/// A path as a SARIF artifact URI: relative paths stay relative (to the folder `check` ran
/// in, which code scanning takes as the repository's root), absolute ones become `file://`
/// URIs; bytes outside `A-Za-z0-9-._~/` are percent-encoded.
fn artifact_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut out = String::from(if path.is_absolute() { "file://" } else { "" });
    for b in text.trim_start_matches("./").bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `check --format sarif`: a SARIF 2.1.0 log with one run. Each finding is a result whose
/// `ruleId` is its code, located in the model file (the artifact) and at its node in its
/// graph (a logical location `graph/node`); the rules of the codes found are described once
/// in the tool's driver. A model that could not be read is a tool execution notification,
/// and makes the run unsuccessful.
pub fn check_sarif(results: &[(PathBuf, Result<Inference>)]) -> String {
    sarif_log(results.iter().map(|(p, r)| (p.as_path(), r.as_ref().map(shown).map_err(|e| e.to_string()))).collect())
}

/// `diff --format sarif`: the differences as results located in the new model.
pub fn diff_sarif(new: &Path, found: &[Diagnostic]) -> String {
    sarif_log(vec![(new, Ok(found.to_vec()))])
}

/// A SARIF log of the findings of each file, or why it could not be read.
fn sarif_log(files: Vec<(&Path, std::result::Result<Vec<Diagnostic>, String>)>) -> String {
    let found: Vec<(usize, &Vec<Diagnostic>)> =
        files.iter().enumerate().filter_map(|(i, (_, r))| r.as_ref().ok().map(|ds| (i, ds))).collect();
    let mut codes: Vec<Code> = found.iter().flat_map(|(_, ds)| ds.iter().map(|d| d.code)).collect();
    codes.sort();
    codes.dedup();
    let rules: Vec<Json> =
        codes.iter().map(|c| json!({"id": c.as_str(), "shortDescription": {"text": c.description()}})).collect();
    let level = |s: crate::Severity| if s == crate::Severity::Error { "error" } else { "warning" };
    let mut sarif_results = Vec::new();
    for (i, ds) in &found {
        for d in ds.iter() {
            let (name, kind, qualified) = match &d.node {
                Some(node) => (node, "function", format!("{}/{node}", d.graph)),
                None => (&d.graph, "module", d.graph.clone()),
            };
            let mut properties = Map::new();
            properties.insert("graph".into(), json!(d.graph));
            if let Some(op) = &d.op_type {
                properties.insert("op_type".into(), json!(op));
            }
            if let Some(axis) = d.axis {
                properties.insert("axis".into(), json!(axis));
            }
            sarif_results.push(json!({
                "ruleId": d.code.as_str(),
                "ruleIndex": codes.binary_search(&d.code).unwrap_or(0),
                "level": level(d.severity),
                "message": {"text": match (&d.node, &d.op_type) {
                    (Some(node), Some(op)) => format!("{node} ({op}): {}", d.message),
                    _ => d.message.clone(),
                }},
                "locations": [{
                    "physicalLocation": {"artifactLocation": {"uri": artifact_uri(files[*i].0), "index": i}},
                    "logicalLocations": [{"name": name, "fullyQualifiedName": qualified, "kind": kind}],
                }],
                "properties": properties,
            }));
        }
    }
    let artifacts: Vec<Json> = files
        .iter()
        .map(|(p, _)| json!({"location": {"uri": artifact_uri(p)}, "mimeType": "application/onnx"}))
        .collect();
    let notifications: Vec<Json> = files
        .iter()
        .enumerate()
        .filter_map(|(i, (p, r))| r.as_ref().err().map(|e| (i, p, e)))
        .map(|(i, p, e)| {
            json!({"level": "error", "message": {"text": e},
                   "locations": [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(p), "index": i}}}]})
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "onnx-bcast",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "invocations": [{"executionSuccessful": notifications.is_empty(), "toolExecutionNotifications": notifications}],
            "artifacts": artifacts,
            "results": sarif_results,
        }],
    });
    format!("{}\n", serde_json::to_string_pretty(&doc).unwrap_or_default())
}

/// `diff --format json`: `{"old", "new", "diagnostics"}`.
pub fn diff_json(old: &Path, new: &Path, found: &[Diagnostic]) -> String {
    let doc = json!({
        "old": old.display().to_string(),
        "new": new.display().to_string(),
        "diagnostics": found.iter().map(diag_json).collect::<Vec<_>>(),
    });
    format!("{}\n", serde_json::to_string_pretty(&doc).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx;
    use prost::Message;

    #[test]
    fn every_tensor_has_its_own_key() {
        // `a` defined twice (an error, but listed), and a value literally named `main:a`,
        // the key the second `a` takes: each keeps an entry of its own.
        let node = |name: &str, out: &str| onnx::NodeProto {
            name: Some(name.into()),
            op_type: Some("Relu".into()),
            input: vec!["x".into()],
            output: vec![out.into()],
            ..Default::default()
        };
        let m = onnx::ModelProto {
            ir_version: Some(8),
            opset_import: vec![onnx::OperatorSetIdProto { domain: Some(String::new()), version: Some(17) }],
            graph: Some(onnx::GraphProto {
                node: vec![node("n0", "a"), node("n1", "a"), node("n2", "main:a")],
                input: vec![onnx::ValueInfoProto { name: Some("x".into()), ..Default::default() }],
                ..Default::default()
            }),
            ..Default::default()
        };
        let model = crate::io::decode(&m.encode_to_vec(), Path::new("k.onnx"), None).unwrap();
        let (values, _) = walk(&model);
        assert_eq!(keys(&model, &values), ["x", "a", "main:a", "main:main:a"]);
        let inf = crate::infer::infer(&model, &Default::default());
        let json: Json = serde_json::from_str(&infer_json(Path::new("k.onnx"), &model, &inf)).unwrap();
        assert_eq!(json["tensors"].as_object().unwrap().len(), 4);
    }
}

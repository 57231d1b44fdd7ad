//! The rewrites over the ONNX backend cases: after `expand` no broadcasting-family node sees an
//! input shape unlike its output's (all 213 family cases and the opset-6 legacy cases),
//! `expand` is idempotent byte for byte, and `implicit(expand(m))` gives back m's nodes.

use crate::build;
use crate::common;

use onnx_bcast::infer::{infer, Options};
use onnx_bcast::ir::AttrValue;
use onnx_bcast::rewrite::{self, violations};
use onnx_bcast::{io, Model};

fn load(case: &common::Case) -> Model {
    onnx_bcast::load(&case.dir.join("model.onnx")).unwrap_or_else(|e| panic!("{}: {e}", case.name))
}

/// Family nodes whose inputs differ in shape from their output, before any rewrite.
fn implicit_broadcasts(model: &Model) -> usize {
    let inf = infer(model, &Options::default());
    violations(model, &inf).len()
}

fn expanded(model: &Model) -> Model {
    let mut m = model.clone();
    let inf = onnx_bcast::infer::infer(&m, &Options::default());
    let report = rewrite::expand(&mut m, &inf).unwrap();
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    m
}

fn family() -> Vec<common::Case> {
    let cases: Vec<_> = common::cases("node").into_iter().filter(|c| c.family).collect();
    assert_eq!(cases.len(), 213, "the manifest's broadcasting-family cases");
    cases
}

#[test]
fn expand_leaves_no_implicit_broadcast_in_family_cases() {
    let mut rewritten = 0;
    for case in family() {
        let model = load(&case);
        let before = implicit_broadcasts(&model);
        let m = expanded(&model);
        let inf = infer(&m, &Options::default());
        assert!(!inf.has_errors(), "{}: {:?}", case.name, inf.diagnostics);
        let bad = violations(&m, &inf);
        assert!(bad.is_empty(), "{}: {bad:?}", case.name);
        if before > 0 {
            assert!(m.node_count() > model.node_count(), "{}: nothing was inserted", case.name);
            rewritten += 1;
        }
    }
    // onnx's own shape inference finds 35 family cases (Expand aside) whose node sees an input
    // shape unlike its output's; the others have equal shapes.
    assert_eq!(rewritten, 35);
}

#[test]
fn expand_is_idempotent_byte_for_byte() {
    let mut models: Vec<(String, Model)> = family().iter().map(|c| (c.name.clone(), load(c))).collect();
    models.extend(common::cases("legacy").iter().map(|c| (c.name.clone(), load(c))));
    for name in ["attention_mask", "nary_sum", "legacy_opset6", "subgraph_if"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("models/{name}.onnx"));
        models.push((name.to_string(), onnx_bcast::load(&path).unwrap()));
    }
    for (name, model) in models {
        let once = io::encode(&expanded(&model));
        let reloaded = io::decode(&once, name.as_ref(), None).unwrap();
        let twice = io::encode(&expanded(&reloaded));
        assert!(once == twice, "{name}: expand changed its own output");
    }
}

#[test]
fn implicit_undoes_expand() {
    let mut checked = 0;
    for case in family() {
        let model = load(&case);
        let ops = |m: &Model| -> Vec<String> {
            m.graph(Model::MAIN).order().iter().map(|n| m.node(*n).op_type.to_string()).collect()
        };
        let original = ops(&model);
        if original.iter().any(|op| op == "Expand" || op == "Tile") {
            continue;
        }
        // Through bytes, as the command line would do it.
        let bytes = io::encode(&expanded(&model));
        let mut m = io::decode(&bytes, case.name.as_ref(), None).unwrap();
        let inf = onnx_bcast::infer::infer(&m, &Options::default());
        let report = rewrite::implicit(&mut m, &inf).unwrap();
        assert_eq!(m.node_count(), model.node_count(), "{}: {report:?}", case.name);
        assert_eq!(ops(&m), original, "{}", case.name);
        assert!(m.graph(Model::MAIN).value_info.len() <= model.graph(Model::MAIN).value_info.len());
        // The graph still infers as the original did.
        let (a, b) = (infer(&model, &Options::default()), infer(&m, &Options::default()));
        for (o, p) in model.graph(Model::MAIN).outputs.iter().zip(&m.graph(Model::MAIN).outputs) {
            assert_eq!(a.ty(o.value), b.ty(p.value), "{}", case.name);
        }
        checked += 1;
    }
    assert!(checked >= 200, "{checked}");
}

#[test]
fn implicit_keeps_expands_that_change_the_result() {
    // test_expand_dim_changed: Expand is the model's only node and feeds the graph output.
    let case = family().into_iter().find(|c| c.name == "test_expand_dim_changed").unwrap();
    let mut m = load(&case);
    let before = m.node_count();
    let inf = onnx_bcast::infer::infer(&m, &Options::default());
    assert_eq!(rewrite::implicit(&mut m, &inf).unwrap().removed, 0);
    assert_eq!(m.node_count(), before);
}

#[test]
fn legacy_cases_become_explicit_without_attributes() {
    let mut seen = 0;
    for case in common::cases("legacy") {
        let model = load(&case);
        let m = expanded(&model);
        let inf = infer(&m, &Options::default());
        assert!(!inf.has_errors(), "{}: {:?}", case.name, inf.diagnostics);
        assert!(violations(&m, &inf).is_empty(), "{}", case.name);
        for n in m.nodes().map(|(_, n)| n) {
            assert!(n.attr("broadcast").is_none(), "{}: {} keeps broadcast", case.name, n.name);
            if n.op_type != "Constant" && n.op_type != "Unsqueeze" {
                assert!(n.attr("axis").is_none(), "{}", case.name);
            }
            // Before opset 9, Constant holds floating-point tensors only.
            if let Some(AttrValue::Tensor(t)) = n.attr("value") {
                assert!(t.dtype.is_some_and(|d| d.is_float()), "{}: {:?}", case.name, t.dtype);
            }
        }
        seen += 1;
    }
    assert_eq!(seen, 6);
}

#[test]
fn annotate_covers_every_tensor_of_every_graph() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/subgraph_if.onnx");
    let mut m = onnx_bcast::load(&path).unwrap();
    let inf = infer(&m, &Options::default());
    rewrite::annotate(&mut m, &inf);
    for g in m.graph_ids() {
        let graph = m.graph(g);
        let declared: Vec<_> = graph.value_info.iter().chain(&graph.outputs).map(|v| v.value).collect();
        for n in graph.order() {
            for v in m.node(*n).outputs().iter().flatten() {
                assert!(declared.contains(v), "{}: {} has no value_info", graph.path, m.name(*v));
            }
        }
        for o in &graph.outputs {
            assert!(o.ty.is_some());
        }
    }
    // Annotating twice changes nothing.
    let once = io::encode(&m);
    let inf = infer(&m, &Options::default());
    rewrite::annotate(&mut m, &inf);
    assert!(io::encode(&m) == once);
}

/// Moving types out of the inference writes the same model as copying them, subgraphs (where
/// a value of one graph is used in another) included.
#[test]
fn annotate_taking_writes_what_annotate_writes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "onnx") {
            continue;
        }
        let Ok(model) = onnx_bcast::load(&path) else { continue };
        let inf = infer(&model, &Options::default());
        let (mut copied, mut taken, mut drained) = (model.clone(), model, inf.clone());
        rewrite::annotate(&mut copied, &inf);
        rewrite::annotate_taking(&mut taken, &mut drained);
        assert!(io::encode(&copied) == io::encode(&taken), "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 5, "only {seen} models");
}

#[test]
fn rewrites_hold_over_every_backend_case() {
    // Every case, family or not: expand never panics (its debug-build invariant check runs
    // here), is idempotent, and annotate and implicit run on its output.
    let (mut total, mut refused) = (0, 0);
    for case in common::cases("node") {
        let model = load(&case);
        total += 1;
        if infer(&model, &Options::default()).has_errors() {
            refused += 1;
            continue;
        }
        let mut m = model.clone();
        let inf = onnx_bcast::infer::infer(&m, &Options::default());
        rewrite::expand(&mut m, &inf).unwrap();
        let once = io::encode(&m);
        let mut again = io::decode(&once, case.name.as_ref(), None).unwrap();
        let inf = onnx_bcast::infer::infer(&again, &Options::default());
        rewrite::expand(&mut again, &inf).unwrap();
        assert!(io::encode(&again) == once, "{}: expand is not idempotent", case.name);
        let inf = infer(&again, &Options::default());
        assert!(!inf.has_errors(), "{}: expand introduced errors: {:?}", case.name, inf.diagnostics);
        rewrite::annotate(&mut again, &inf);
        let inf = onnx_bcast::infer::infer(&again, &Options::default());
        rewrite::implicit(&mut again, &inf).unwrap();
    }
    assert_eq!(total, 1884);
    assert!(refused < total / 10, "{refused} of {total} cases have error findings");
}

/// A size the model declares in its own words (an exporter's `a + b` for what inference
/// derives as `a+b`): the tensors `expand` inserts beside it are declared with the model's
/// text, so that other tools (onnx's shape inference) see one size, not two. Without that
/// value_info, they carry inference's text.
#[test]
fn expand_declares_inserted_tensors_with_the_models_names_for_sizes() {
    use build::{input, load, model, node, with_int};
    let declared_type = |m: &mut onnx_bcast::io::proto::ModelProto| {
        let g = m.graph.as_mut().expect("a graph");
        g.value_info.push(input("c", &["a + b"]));
    };
    let mut proto = model(
        17,
        vec![input("x", &["a"]), input("y", &["b"]), input("s", &[1i64])],
        vec![with_int(node("cat", "Concat", &["x", "y"], &["c"]), "axis", 0), node("add", "Add", &["c", "s"], &["z"])],
        &["z"],
    );
    // As saved: the text each inserted tensor's size is written with.
    let dims_of_inserted = |m: &Model| -> Vec<String> {
        let g = saved(m);
        g.value_info.iter().filter(|vi| vi.name().ends_with("_expanded")).flat_map(dim_texts).collect()
    };
    let plain = expanded(&load(&proto));
    assert_eq!(dims_of_inserted(&plain), vec!["a+b"]);
    declared_type(&mut proto);
    let named = expanded(&load(&proto));
    assert_eq!(dims_of_inserted(&named), vec!["a + b"]);
}

/// `annotate` writes a size the model names otherwise with the model's name: on the tensor
/// that declares it (an exporter's `a + b`, which inference derives as `a+b`) and on a tensor
/// downstream of it that declares nothing, so the annotated model names that size one way.
/// Before, the declared `a + b` was overwritten with `a+b`.
#[test]
fn annotate_keeps_the_models_names_for_sizes() {
    use build::{input, load, model, node, with_int};
    let mut proto = model(
        17,
        vec![input("x", &["a"]), input("y", &["b"])],
        vec![with_int(node("cat", "Concat", &["x", "y"], &["c"]), "axis", 0), node("relu", "Relu", &["c"], &["r"])],
        &["r"],
    );
    // As saved: the text the tensor's size is written with.
    let dims = |m: &Model, name: &str| -> Vec<String> {
        let g = saved(m);
        let vi = g.value_info.iter().chain(&g.output).find(|vi| vi.name() == name).expect("annotated");
        dim_texts(vi)
    };
    let annotated = |p: &onnx_bcast::io::proto::ModelProto| {
        let mut m = load(p);
        let inf = onnx_bcast::infer::infer(&m, &Default::default());
        rewrite::annotate(&mut m, &inf);
        m
    };
    let plain = annotated(&proto);
    assert_eq!((dims(&plain, "c"), dims(&plain, "r")), (vec!["a+b".to_string()], vec!["a+b".to_string()]));
    proto.graph.as_mut().expect("a graph").value_info.push(input("c", &["a + b"]));
    let named = annotated(&proto);
    assert_eq!((dims(&named, "c"), dims(&named, "r")), (vec!["a + b".to_string()], vec!["a + b".to_string()]));
}

/// The main graph of `m` as saved.
fn saved(m: &Model) -> onnx_bcast::io::proto::GraphProto {
    use prost::Message;
    onnx_bcast::io::proto::ModelProto::decode(io::encode(m).as_slice()).expect("saved").graph.expect("a graph")
}

/// Each dim of a value info's shape as its text: `dim_param` or `dim_value`.
fn dim_texts(vi: &onnx_bcast::io::proto::ValueInfoProto) -> Vec<String> {
    use onnx_bcast::io::proto::{tensor_shape_proto::dimension::Value, type_proto};
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref().and_then(|t| t.value.as_ref()) else {
        return Vec::new();
    };
    let dims = t.shape.as_ref().map(|s| s.dim.as_slice()).unwrap_or_default();
    dims.iter()
        .map(|d| match &d.value {
            Some(Value::DimParam(p)) => p.clone(),
            Some(Value::DimValue(v)) => v.to_string(),
            None => "?".into(),
        })
        .collect()
}

/// A chain of `n` nodes that each broadcast `b: [4,1]` against the chain's
/// `[batch, 4, seq]` (after the first, which meets `x: [batch,1,seq]`): Add, Mul, Sub, Div in
/// turn. Only the last output is a graph output.
fn chain(n: usize) -> onnx_bcast::io::proto::ModelProto {
    use build::{input, model, node, D};
    let ops = ["Add", "Mul", "Sub", "Div"];
    let nodes = (0..n)
        .map(|i| {
            let prev = if i == 0 { "x".to_string() } else { format!("t{}", i - 1) };
            node(&format!("n{i}"), ops[i % 4], &[&prev, "b"], &[&format!("t{i}")])
        })
        .collect();
    let last = format!("t{}", n - 1);
    model(17, vec![input("x", &[D::S("batch"), D::N(1), D::S("seq")]), input("b", &[4i64, 1])], nodes, &[&last])
}

/// `expand` makes each expansion once per graph: a node it would insert a second time (the
/// same op on the same inputs) and a shape vector of sizes it already computed (the same
/// symbols) are reused. A chain of nodes that all broadcast `b` to `[batch, 4, seq]` gets
/// one `Unsqueeze` and one `Expand` of `b`, whatever its length; before, every node got its
/// own `Shape -> Gather -> Concat -> Expand` (12 nodes and constants a node on the pass
/// benchmark's chains, 0.68 s for 10,000). The expanded chain computes what the original
/// does, bit for bit.
#[test]
fn expand_makes_each_expansion_once_per_graph() {
    use onnx_bcast::exec::{self, HostTensor};
    let added = |n: usize| {
        let original = build::load(&chain(n));
        let before = original.node_count();
        let m = expanded(&original);
        let inf = infer(&m, &Options::default());
        assert!(violations(&m, &inf).is_empty());
        (m.node_count() - before, m.graph(Model::MAIN).initializers().len(), original, m)
    };
    let (nodes, inits, _, _) = added(4);
    let (nodes_40, inits_40, original, m) = added(40);
    assert_eq!((nodes_40, inits_40), (nodes, inits), "a longer chain inserted more");
    // x gets one Expand, b one Unsqueeze and one Expand, and the symbolic target one
    // Shape -> Gather -> Concat: at most a dozen nodes in all.
    assert!(nodes <= 12, "{nodes} nodes inserted");
    let m = io::decode(&io::encode(&m), "chain.onnx".as_ref(), None).expect("the rewrite decodes");
    let x: Vec<f32> = (0..6).map(|i| i as f32 * 0.75 - 1.0).collect();
    let b: Vec<f32> = vec![0.5, -2.0, 3.25, 1.5];
    let feed = || {
        vec![
            ("x".to_string(), HostTensor::from_vec(vec![2, 1, 3], x.clone()).expect("x")),
            ("b".to_string(), HostTensor::from_vec(vec![4, 1], b.clone()).expect("b")),
        ]
    };
    let run = |m: &Model| exec::run(m, feed(), &exec::Options::default()).expect("the chain runs");
    let (want, got) = (run(&original), run(&m));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1.shape, vec![2, 4, 3]);
    assert_eq!(format!("{:?}", got[0].1.data), format!("{:?}", want[0].1.data));
}

/// The library takes one path with the command line: `expand` and `implicit` refuse a model
/// with error findings (the command line exits 1 on it), and rewrite with the inference the
/// caller gives, not one of their own: bound sizes give static targets.
#[test]
fn rewrites_refuse_errors_and_use_the_callers_inference() {
    let broken = onnx_bcast::load(std::path::Path::new("models/broken.onnx")).unwrap();
    let inf = infer(&broken, &Options::default());
    let mut m = broken.clone();
    match rewrite::expand(&mut m, &inf) {
        Err(onnx_bcast::Error::Findings { errors: 1 }) => {}
        other => panic!("expand of a broken model: {other:?}"),
    }
    assert!(matches!(rewrite::implicit(&mut m, &inf), Err(onnx_bcast::Error::Findings { errors: 1 })));
    assert_eq!(io::encode(&m), io::encode(&broken), "a refused rewrite changes nothing");
    // attention_mask.onnx under batch=2, seq=5: every target is a constant, no Shape is read.
    let mut m = onnx_bcast::load(std::path::Path::new("models/attention_mask.onnx")).unwrap();
    let bound = Options { bindings: [("batch".to_string(), 2), ("seq".to_string(), 5)].into(), ..Options::default() };
    let inf = infer(&m, &bound);
    rewrite::expand(&mut m, &inf).unwrap();
    let ops: Vec<&str> = m.nodes().map(|(_, n)| n).map(|n| n.op_type.as_str()).collect();
    assert!(ops.contains(&"Expand") && !ops.contains(&"Shape"), "{ops:?}");
}

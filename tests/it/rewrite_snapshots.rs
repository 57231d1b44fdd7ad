//! Snapshots of rewritten small graphs as stable text (`ir::dump` with inferred types), so a
//! change in what the rewrites insert shows up in review.

use crate::common;

use std::path::Path;

use onnx_bcast::infer::{infer, Options};
use onnx_bcast::shape::{render, Dim, Type};
use onnx_bcast::{ir, rewrite, Model};

fn model(name: &str) -> Model {
    onnx_bcast::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("models/{name}.onnx"))).unwrap()
}

fn case(name: &str) -> Model {
    onnx_bcast::load(&common::data().join(name).join("model.onnx")).unwrap()
}

/// The model as text, each value with its inferred type.
fn dump(m: &Model) -> String {
    let inf = infer(m, &Options::default());
    assert!(!inf.has_errors(), "{:?}", inf.diagnostics);
    ir::dump(m, &|v| inf.ty(v).map(|t| text(Some(t))))
}

fn expand(mut m: Model) -> String {
    let inf = onnx_bcast::infer::infer(&m, &Options::default());
    let report = rewrite::expand(&mut m, &inf).unwrap();
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    let inf = infer(&m, &Options::default());
    assert!(rewrite::violations(&m, &inf).is_empty());
    dump(&m)
}

#[test]
fn expand_symbolic_attention_mask() {
    // Symbolic targets are gathered from the operands' Shape; equal sizes stay 1 in the target.
    insta::assert_snapshot!("rewrite_expand_attention_mask", expand(model("attention_mask")));
}

#[test]
fn expand_nary_static() {
    insta::assert_snapshot!("rewrite_expand_nary_sum", expand(model("nary_sum")));
}

#[test]
fn expand_legacy_opset6() {
    // IR version 3: constants are Constant nodes (doubles cast to int64 before opset 9).
    insta::assert_snapshot!("rewrite_expand_legacy_opset6", expand(model("legacy_opset6")));
}

#[test]
fn expand_inside_subgraphs() {
    insta::assert_snapshot!("rewrite_expand_subgraph_if", expand(model("subgraph_if")));
}

#[test]
fn expand_opset7_uses_tile() {
    insta::assert_snapshot!("rewrite_expand_opset7_tile", expand(case("node/test_and_bcast4v2d")));
}

#[test]
fn expand_prelu_stretches_only_the_slope() {
    insta::assert_snapshot!("rewrite_expand_prelu", expand(case("node/test_prelu_broadcast")));
}

#[test]
fn expand_two_symbols_computes_the_broadcast_in_the_graph() {
    // `mask` gets its own batch symbol: the output's batch is max(batch,b2), which no operand
    // holds, so the broadcast of the operands' shapes is computed with Equal/Where.
    let mut m = model("attention_mask");
    let mask = m.resolve(Model::MAIN, "mask").unwrap();
    let main = m.graph_mut(Model::MAIN);
    let vi = main.inputs.iter_mut().find(|i| i.value == mask).unwrap();
    if let Some(Type::Tensor { shape: Some(s), .. }) = &mut vi.ty {
        s[0] = Dim::sym("b2");
    }
    insta::assert_snapshot!("rewrite_expand_two_symbols", expand(m));
}

#[test]
fn annotate_fills_value_info() {
    let mut out = String::new();
    for name in ["attention_mask", "subgraph_if"] {
        let mut m = model(name);
        let inf = infer(&m, &Options::default());
        rewrite::annotate(&mut m, &inf);
        for g in m.graph_ids() {
            let graph = m.graph(g);
            out.push_str(&format!("{name}: graph {}\n", graph.path));
            let kinds = [("input", &graph.inputs), ("value_info", &graph.value_info), ("output", &graph.outputs)];
            for (kind, infos) in kinds {
                for vi in infos {
                    out.push_str(&format!("  {kind} {}: {}\n", m.name(vi.value), text(vi.ty.as_ref())));
                }
            }
        }
    }
    insta::assert_snapshot!("rewrite_annotate", out);
}

#[test]
fn expand_unknown_sizes() {
    // `mask` has an unknown batch size (inference names it `?1`): no operand holds the output's
    // batch, so both operands are expanded to the broadcast computed at run time.
    let mut m = model("attention_mask");
    let mask = m.resolve(Model::MAIN, "mask").unwrap();
    let main = m.graph_mut(Model::MAIN);
    let vi = main.inputs.iter_mut().find(|i| i.value == mask).unwrap();
    if let Some(Type::Tensor { shape: Some(s), .. }) = &mut vi.ty {
        s[0] = Dim::Unknown;
    }
    let text = expand(m.clone());
    // And expanding again changes nothing.
    let mut once = m;
    let inf = onnx_bcast::infer::infer(&once, &Options::default());
    rewrite::expand(&mut once, &inf).unwrap();
    let bytes = onnx_bcast::io::encode(&once);
    let mut twice = onnx_bcast::io::decode(&bytes, "m".as_ref(), None).unwrap();
    let inf = onnx_bcast::infer::infer(&twice, &Options::default());
    let report = rewrite::expand(&mut twice, &inf).unwrap();
    assert_eq!(report.added, 0);
    assert!(onnx_bcast::io::encode(&twice) == bytes);
    insta::assert_snapshot!("rewrite_expand_unknown_sizes", text);
}

fn text(ty: Option<&Type>) -> String {
    match ty {
        Some(Type::Tensor { dtype, shape }) => format!(
            "{}{}",
            dtype.map(|d| d.name()).unwrap_or("?"),
            shape.as_ref().map(|s| render(s)).unwrap_or("[..]".into())
        ),
        Some(other) => format!("{other:?}"),
        None => "-".into(),
    }
}

#[test]
fn implicit_after_expand() {
    let mut m = model("attention_mask");
    let inf = onnx_bcast::infer::infer(&m, &Options::default());
    rewrite::expand(&mut m, &inf).unwrap();
    let inf = onnx_bcast::infer::infer(&m, &Options::default());
    let report = rewrite::implicit(&mut m, &inf).unwrap();
    // Four Expands (mask, scale, keep, neg) and the Unsqueezes of the two scalars.
    assert_eq!(report.removed, 6, "{report:?}");
    insta::assert_snapshot!("rewrite_implicit_attention_mask", dump(&m));
}

//! A structured generator of broadcasting graphs: random input shapes (known sizes or symbols)
//! feed a chain of Add/Sub/Mul/Div/Sum/Max/Min/Mean/Where/Equal/And/PRelu nodes. Each node's
//! inferred shape must match what its concrete input shapes give under `shape::multi::<usize>`
//! (or `uni` for PRelu), and every concrete clash must be reported (or, with unbound symbols,
//! show up as a broken side condition). Once the executor is merged, the same generated
//! models should also be run on zero-filled inputs of the concrete shapes and their output
//! shapes compared with the same expectations.

#![no_main]

use std::collections::HashMap;
use std::path::Path;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use onnx_bcast::io::proto::{self as onnx, tensor_shape_proto, type_proto};
use onnx_bcast::shape::{self, Assumption, Dim, Term};
use onnx_bcast::{infer, io, Model};
use prost::Message;

#[derive(Arbitrary, Debug)]
struct Input {
    boolean: bool,
    dims: Vec<u8>,
    /// Bit `i` set: axis `i` is declared as the symbol `n<size>`.
    symbolic: u8,
}

#[derive(Arbitrary, Debug)]
struct NodeSpec {
    op: u8,
    args: Vec<u8>,
}

#[derive(Arbitrary, Debug)]
struct Spec {
    inputs: Vec<Input>,
    nodes: Vec<NodeSpec>,
    /// Bind every symbol to its size through `Options::bindings`.
    bind: bool,
}

struct Val {
    name: String,
    boolean: bool,
    shape: Vec<usize>,
}

/// (op_type, arity range, output is bool, inputs are bool: per slot).
const OPS: &[(&str, usize, usize, bool)] = &[
    ("Add", 2, 2, false),
    ("Sub", 2, 2, false),
    ("Mul", 2, 2, false),
    ("Div", 2, 2, false),
    ("Sum", 1, 4, false),
    ("Max", 1, 4, false),
    ("Min", 1, 4, false),
    ("Mean", 1, 4, false),
    ("Where", 3, 3, false),
    ("Equal", 2, 2, true),
    ("And", 2, 2, true),
    ("PRelu", 2, 2, false),
];

fn tensor_type(boolean: bool, dims: Vec<tensor_shape_proto::Dimension>) -> onnx::TypeProto {
    onnx::TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(if boolean { 9 } else { 1 }),
            shape: Some(onnx::TensorShapeProto { dim: dims }),
        })),
        ..Default::default()
    }
}

/// The size a term stands for: the name `n<k>` is k.
fn eval(t: &Term) -> Option<usize> {
    let v = t.eval(&|a| a.as_name().and_then(|n| n.strip_prefix('n')?.parse().ok()))?;
    usize::try_from(v).ok()
}

fn holds(a: &Assumption) -> Option<bool> {
    a.holds(&|t| t.as_name().and_then(|n| n.strip_prefix('n')?.parse().ok()))
}

fuzz_target!(|spec: Spec| {
    let mut vals: Vec<Val> = Vec::new();
    let mut graph = onnx::GraphProto { name: Some("g".into()), ..Default::default() };
    for (i, inp) in spec.inputs.iter().take(5).enumerate() {
        let shape: Vec<usize> = inp.dims.iter().take(4).map(|b| usize::from(b % 5)).collect();
        let dims = shape
            .iter()
            .enumerate()
            .map(|(axis, d)| tensor_shape_proto::Dimension {
                value: Some(if inp.symbolic & (1 << axis) != 0 {
                    tensor_shape_proto::dimension::Value::DimParam(format!("n{d}"))
                } else {
                    tensor_shape_proto::dimension::Value::DimValue(*d as i64)
                }),
                ..Default::default()
            })
            .collect();
        let name = format!("x{i}");
        graph.input.push(onnx::ValueInfoProto {
            name: Some(name.clone()),
            r#type: Some(tensor_type(inp.boolean, dims)),
            ..Default::default()
        });
        vals.push(Val { name, boolean: inp.boolean, shape });
    }
    // Each node: its name, its output and the concrete output shape (None on a clash).
    let mut expected: Vec<(String, &str, String, Option<Vec<usize>>)> = Vec::new();
    for (k, n) in spec.nodes.iter().take(8).enumerate() {
        let (op, lo, hi, bool_in) = OPS[usize::from(n.op) % OPS.len()];
        let arity = lo + n.args.first().map_or(0, |a| usize::from(*a)) % (hi - lo + 1);
        let mut args = Vec::new();
        for slot in 0..arity {
            let want_bool = bool_in || (op == "Where" && slot == 0);
            let pool: Vec<usize> = (0..vals.len()).filter(|i| vals[*i].boolean == want_bool).collect();
            if pool.is_empty() {
                break;
            }
            let pick = n.args.get(slot + 1).map_or(0, |a| usize::from(*a));
            args.push(pool[pick % pool.len()]);
        }
        if args.len() != arity {
            continue;
        }
        let shapes: Vec<&[usize]> = args.iter().map(|i| vals[*i].shape.as_slice()).collect();
        let concrete = if op == "PRelu" {
            shape::uni::<usize>(shapes[0], shapes[1], 1).ok().map(|b| b.shape)
        } else {
            shape::multi::<usize>(&shapes).ok().map(|b| b.shape)
        };
        let name = format!("n{k}");
        let out = format!("y{k}");
        graph.node.push(onnx::NodeProto {
            name: Some(name.clone()),
            op_type: Some(op.into()),
            input: args.iter().map(|i| vals[*i].name.clone()).collect(),
            output: vec![out.clone()],
            ..Default::default()
        });
        if let Some(s) = &concrete {
            let boolean = matches!(op, "Equal" | "And") || (op != "Where" && vals[args[0]].boolean);
            let boolean = if op == "Where" { vals[args[1]].boolean } else { boolean };
            vals.push(Val { name: out.clone(), boolean, shape: s.clone() });
        }
        expected.push((name, op, out, concrete));
    }
    let model = onnx::ModelProto {
        ir_version: Some(8),
        opset_import: vec![onnx::OperatorSetIdProto { domain: Some(String::new()), version: Some(17) }],
        graph: Some(graph),
        ..Default::default()
    };
    let bytes = model.encode_to_vec();
    let model = match io::decode(&bytes, Path::new("gen.onnx"), None) {
        Ok(m) => m,
        Err(e) => panic!("a generated model does not load: {e}"),
    };
    // A declared 0 means 0 here (by default inference reads it as an exporter's "dynamic").
    let mut options = infer::Options::default();
    if spec.bind {
        options.bindings = (0..5).map(|k| (format!("n{k}"), k as i64)).collect::<HashMap<_, _>>();
    }
    let inf = infer::infer(&model, &options);
    // Once a clash makes a symbol's side conditions unsatisfiable, later nodes that constrain
    // the same symbol are reported as contradicting it too: a cascade, not a false finding.
    let any_clash = expected.iter().any(|(_, _, _, c)| c.is_none());
    for (name, _op, out, concrete) in &expected {
        let on_node = |d: &&onnx_bcast::Diagnostic| d.node.as_deref() == Some(name.as_str());
        let reported = inf.diagnostics.iter().filter(on_node).any(|d| !(any_clash && d.code == onnx_bcast::Code::SymbolContradiction));
        let reported = if concrete.is_none() { inf.diagnostics.iter().any(|d| on_node(&d)) } else { reported };
        let Some(v) = model.local(Model::MAIN, out) else { panic!("output of {name} not in scope") };
        match concrete {
            Some(want) => {
                assert!(!reported, "{name}: a finding on shapes that broadcast: {:?}", inf.diagnostics);
                let Some(got) = inf.shape(v) else { panic!("{name}: no shape inferred, want {want:?}") };
                assert_eq!(got.len(), want.len(), "{name}: rank");
                for (axis, (g, w)) in got.iter().zip(want).enumerate() {
                    match g {
                        Dim::Known(k) => assert_eq!(*k, *w as i64, "{name} axis {axis}: {got:?} vs {want:?}"),
                        Dim::Term(s) => {
                            assert!(!spec.bind, "{name}: symbol {s} left after binding every symbol");
                            assert_eq!(eval(s), Some(*w), "{name} axis {axis}: {got:?} vs {want:?}");
                        }
                        Dim::Unknown => assert!(!spec.bind, "{name}: unknown dim with every size bound"),
                    }
                }
            }
            None => {
                let broken = inf.constraints.iter().any(|c| c.node == *name && holds(&c.assumption) == Some(false));
                assert!(reported || (!spec.bind && broken), "{name}: a clash neither reported nor assumed away");
            }
        }
    }
});

//! Inference on a generated 100,000-node chain: it finishes, gets every shape, and does not
//! recurse with the graph's size. Time it in a release build with
//! `cargo test --release --test it perf -- --nocapture`.

use std::path::Path;
use std::time::Instant;

use onnx_bcast::infer::{infer, Options};
use onnx_bcast::io::proto::{
    tensor_proto, tensor_shape_proto, type_proto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    TensorShapeProto, TypeProto, ValueInfoProto,
};
use onnx_bcast::shape::Dim;
use prost::Message;

fn dim(d: tensor_shape_proto::dimension::Value) -> tensor_shape_proto::Dimension {
    tensor_shape_proto::Dimension { value: Some(d), ..Default::default() }
}

fn node(op: &str, inputs: &[String], output: &str) -> NodeProto {
    NodeProto { op_type: Some(op.into()), input: inputs.to_vec(), output: vec![output.into()], ..Default::default() }
}

/// `x[batch, 8]` through `n` nodes alternating Add (with `y[d]`, so that every Add records
/// the side condition that `d` is 1 or 8), Relu and, every 1000th, a Shape -> Reshape round
/// trip. Unnamed nodes: diagnostics and conditions label them by position.
fn chain(n: usize) -> Vec<u8> {
    use tensor_shape_proto::dimension::Value as DV;
    let input = ValueInfoProto {
        name: Some("x".into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(tensor_proto::DataType::Float as i32),
                shape: Some(TensorShapeProto { dim: vec![dim(DV::DimParam("batch".into())), dim(DV::DimValue(8))] }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let side = ValueInfoProto {
        name: Some("y".into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(tensor_proto::DataType::Float as i32),
                shape: Some(TensorShapeProto { dim: vec![dim(DV::DimParam("d".into()))] }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut nodes = Vec::with_capacity(n);
    let mut prev = "x".to_string();
    let mut i = 0;
    while nodes.len() < n {
        let out = format!("t{i}");
        if i % 1000 == 999 && nodes.len() + 2 <= n {
            let s = format!("s{i}");
            nodes.push(node("Shape", &[prev.clone()], &s));
            nodes.push(node("Reshape", &[prev.clone(), s], &out));
        } else if i % 2 == 0 {
            nodes.push(node("Add", &[prev.clone(), "y".into()], &out));
        } else {
            nodes.push(node("Relu", &[prev.clone()], &out));
        }
        prev = out;
        i += 1;
    }
    let output = ValueInfoProto { name: Some(prev), ..Default::default() };
    let graph = GraphProto {
        name: Some("chain".into()),
        node: nodes,
        input: vec![input, side],
        output: vec![output],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(17) }],
        graph: Some(graph),
        ..Default::default()
    };
    model.encode_to_vec()
}

#[test]
fn chain_of_100k_nodes() {
    let bytes = chain(100_000);
    let model = onnx_bcast::io::decode(&bytes, Path::new("chain.onnx"), None).expect("decodes");
    let start = Instant::now();
    let inf = infer(&model, &Options::default());
    let took = start.elapsed();
    eprintln!("infer on 100,000 nodes: {:.3} s", took.as_secs_f64());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics.first());
    // One side condition per Add: `d` is 1 or 8.
    assert!(inf.constraints.len() > 49_000, "{}", inf.constraints.len());
    let out = model.graph(onnx_bcast::Model::MAIN).outputs[0].value;
    assert_eq!(inf.shape(out), Some(&vec![Dim::sym("batch"), Dim::Known(8)]));
}

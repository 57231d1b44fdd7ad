//! The wire-level loader and writer: a load/save round trip writes exactly the bytes prost
//! writes for the same message, whatever fields the IR does not hold; odd encodings (a graph
//! given twice, groups, bad UTF-8, wrong wire types, truncation) load or fail exactly as prost
//! decides.

use std::path::Path;

use onnx_bcast::io::proto::{self as onnx, tensor_shape_proto::dimension::Value as DV, type_proto};
use prost::Message;

fn entry(k: &str, v: &str) -> onnx::StringStringEntryProto {
    onnx::StringStringEntryProto { key: Some(k.into()), value: Some(v.into()) }
}

fn tensor_type(elem: i32, dims: &[DV]) -> onnx::TypeProto {
    onnx::TypeProto {
        denotation: None,
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem),
            shape: Some(onnx::TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|d| onnx::tensor_shape_proto::Dimension { denotation: None, value: Some(d.clone()) })
                    .collect(),
            }),
        })),
    }
}

fn vi(name: &str, ty: Option<onnx::TypeProto>) -> onnx::ValueInfoProto {
    onnx::ValueInfoProto { name: Some(name.into()), r#type: ty, ..Default::default() }
}

fn node(name: Option<&str>, op: &str, inputs: &[&str], outputs: &[&str]) -> onnx::NodeProto {
    onnx::NodeProto {
        name: name.map(Into::into),
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn int_attr(name: &str, v: i64) -> onnx::AttributeProto {
    onnx::AttributeProto { name: Some(name.into()), r#type: Some(2), i: Some(v), ..Default::default() }
}

/// A model that uses many of the fields the IR does not hold, at every level.
fn rich_model() -> onnx::ModelProto {
    let then = onnx::GraphProto {
        name: Some("then".into()),
        node: vec![node(Some("inner"), "Add", &["x", "b"], &["y_then"])],
        output: vec![vi("y_then", None)],
        doc_string: Some("the then branch".into()),
        ..Default::default()
    };
    let els = onnx::GraphProto {
        name: Some("else".into()),
        node: vec![node(None, "Sub", &["x", "b"], &["y_else"])],
        output: vec![vi("y_else", Some(tensor_type(1, &[DV::DimParam("n".into())])))],
        ..Default::default()
    };
    let mut plain = node(Some("add"), "Add", &["x", "b"], &["s"]);
    plain.attribute.push(int_attr("unused", 3));
    let mut carried = node(Some("mul"), "Mul", &["s", "b"], &["m"]);
    carried.doc_string = Some("a node with a doc string".into());
    carried.domain = Some("".into());
    carried.metadata_props.push(entry("k", "v"));
    carried.attribute.push(onnx::AttributeProto {
        name: Some("note".into()),
        r#type: Some(3),
        s: Some(b"text".to_vec()),
        doc_string: Some("attribute doc".into()),
        ..Default::default()
    });
    let mut iff = node(Some("if"), "If", &["c"], &["y"]);
    iff.attribute.push(onnx::AttributeProto {
        name: Some("then_branch".into()),
        r#type: Some(5),
        g: Some(then),
        doc_string: Some("g doc".into()),
        ..Default::default()
    });
    // No `type`: the kind comes from the field that is set.
    iff.attribute.push(onnx::AttributeProto { name: Some("else_branch".into()), g: Some(els), ..Default::default() });
    iff.domain = Some("ai.onnx".into());
    let mut unnamed = node(Some(""), "Relu", &["m"], &["r", ""]);
    unnamed.overload = Some("o".into());
    let mut x = vi("x", Some(tensor_type(1, &[DV::DimValue(2), DV::DimParam("n".into())])));
    x.doc_string = Some("input doc".into());
    let mut y = vi("y", None);
    y.metadata_props.push(entry("a", "b"));
    let graph = onnx::GraphProto {
        name: Some("main".into()),
        node: vec![plain, carried, iff, unnamed, node(None, "Identity", &["r"], &["out"])],
        input: vec![x, vi("b", Some(tensor_type(1, &[DV::DimValue(1)]))), vi("c", Some(tensor_type(9, &[])))],
        output: vec![y, vi("out", Some(tensor_type(1, &[DV::DimValue(-1)])))],
        value_info: vec![vi("s", Some(tensor_type(1, &[]))), vi("", None)],
        initializer: vec![onnx::TensorProto {
            name: Some("b".into()),
            dims: vec![1],
            data_type: Some(1),
            float_data: vec![0.5],
            doc_string: Some("tensor doc".into()),
            ..Default::default()
        }],
        doc_string: Some("graph doc".into()),
        metadata_props: vec![entry("g", "h")],
        ..Default::default()
    };
    onnx::ModelProto {
        ir_version: Some(8),
        producer_name: Some("wire test".into()),
        doc_string: Some("model doc".into()),
        opset_import: vec![onnx::OperatorSetIdProto { domain: Some("".into()), version: Some(17) }],
        metadata_props: vec![entry("m", "n")],
        graph: Some(graph),
        ..Default::default()
    }
}

fn load(bytes: &[u8]) -> onnx_bcast::Result<onnx_bcast::Model> {
    onnx_bcast::io::decode(bytes, Path::new("wire.onnx"), None)
}

#[test]
fn saving_writes_exactly_what_prost_writes() {
    let bytes = rich_model().encode_to_vec();
    let model = load(&bytes).unwrap();
    assert!(model.lossy.is_empty(), "{:?}", model.lossy);
    assert!(onnx_bcast::io::encode(&model) == bytes, "a load/save round trip changed the bytes");
}

#[test]
fn a_large_graph_is_written_as_prost_writes_it() {
    // Past 50,000 nodes and value_info entries the writer encodes the graph in two parts on
    // two threads, the value infos split between them; the bytes, in memory and on disk, must
    // still be prost's.
    let mut m = rich_model();
    let g = m.graph.as_mut().unwrap();
    let mut prev = "out".to_string();
    for i in 0..50_000 {
        let out = format!("r{i}");
        g.node.push(node(Some(&format!("relu{i}")), "Relu", &[&prev], &[&out]));
        let mut info = vi(&out, Some(tensor_type(1, &[DV::DimValue(-1)])));
        if i % 1000 == 0 {
            info.doc_string = Some(format!("entry {i}"));
        }
        g.value_info.push(info);
        prev = out;
    }
    let bytes = m.encode_to_vec();
    let model = load(&bytes).unwrap();
    assert!(onnx_bcast::io::encode(&model) == bytes, "a load/save round trip changed the bytes");
    let dir = std::env::temp_dir().join(format!("onnx-bcast-wire-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("large.onnx");
    onnx_bcast::io::save(&model, &path).unwrap();
    let written = std::fs::read(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(written == bytes, "the saved file differs from prost's bytes");
}

#[test]
fn annotated_output_is_what_prost_writes() {
    // After annotate, the value infos a rewrite added (no carry) are written directly; the
    // result must still be prost's encoding of the message it decodes to.
    let mut model = load(&rich_model().encode_to_vec()).unwrap();
    let inf = onnx_bcast::infer::infer(&model, &Default::default());
    assert!(onnx_bcast::rewrite::annotate(&mut model, &inf) > 0);
    let saved = onnx_bcast::io::encode(&model);
    let canonical = onnx::ModelProto::decode(saved.as_slice()).unwrap().encode_to_vec();
    assert!(saved == canonical, "the writer's bytes differ from prost's");
    let again = load(&saved).unwrap();
    assert!(onnx_bcast::io::encode(&again) == saved, "save is not a fixed point");
}

/// Appends field `number` with a length-delimited `body`.
fn field(mut out: Vec<u8>, number: u32, body: &[u8]) -> Vec<u8> {
    prost::encoding::encode_key(number, prost::encoding::WireType::LengthDelimited, &mut out);
    prost::encoding::encode_varint(body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

/// Loads `bytes` and checks the outcome against prost: an error exactly when prost refuses
/// them, and otherwise a model that saves as prost's encoding of its decoding.
fn agrees_with_prost(bytes: &[u8]) {
    match onnx::ModelProto::decode(bytes) {
        Err(e) => {
            let err = load(bytes).expect_err("prost refuses these bytes, the loader must too");
            assert!(err.to_string().contains("wire.onnx"), "{err}");
            let _ = e;
        }
        Ok(m) if m.graph.is_none() => {
            let err = load(bytes).expect_err("a model without a graph is refused");
            assert!(err.to_string().contains("wire.onnx"), "{err}");
        }
        Ok(m) => {
            let loaded = load(bytes).unwrap();
            assert!(onnx_bcast::io::encode(&loaded) == m.encode_to_vec(), "differs from prost's decoding");
        }
    }
}

#[test]
fn a_graph_given_twice_is_merged_as_prost_merges() {
    let mut m = rich_model();
    let second = onnx::GraphProto {
        node: vec![node(Some("later"), "Neg", &["x"], &["z"])],
        name: Some("renamed".into()),
        ..Default::default()
    };
    let first = m.graph.take().unwrap();
    let bytes = field(field(m.encode_to_vec(), 7, &first.encode_to_vec()), 7, &second.encode_to_vec());
    agrees_with_prost(&bytes);
    let loaded = load(&bytes).unwrap();
    assert_eq!(loaded.graph(onnx_bcast::Model::MAIN).name, "renamed");
    assert_eq!(loaded.graph(onnx_bcast::Model::MAIN).order().len(), 6);
}

#[test]
fn odd_encodings_load_or_fail_as_prost_decides() {
    let base = rich_model();
    let g = base.graph.clone().unwrap();
    let mut head = base.clone();
    head.graph = None;
    let head = head.encode_to_vec();
    let graph_with_node = |node: &[u8]| {
        let mut g = g.clone();
        g.node.clear();
        field(head.clone(), 7, &field(g.encode_to_vec(), 1, node))
    };
    // A node name that is not UTF-8.
    let mut bad_utf8 = Vec::new();
    bad_utf8 = field(bad_utf8, 3, &[0xff, 0xfe]);
    agrees_with_prost(&graph_with_node(&bad_utf8));
    // Names that are UTF-8 but not ASCII, and one that is ASCII up to a bad last byte.
    let unicode = node(Some("ノード"), "Relu", &["入力"], &["y\u{e9}"]).encode_to_vec();
    agrees_with_prost(&graph_with_node(&unicode));
    let loaded = load(&graph_with_node(&unicode)).unwrap();
    let n = loaded.graph(onnx_bcast::Model::MAIN).order()[0];
    assert_eq!(loaded.node(n).name, "ノード");
    agrees_with_prost(&graph_with_node(&field(Vec::new(), 3, b"abcdefgh\xff")));
    // A node input given as a varint instead of a string.
    let mut wrong_wire = Vec::new();
    prost::encoding::encode_key(1, prost::encoding::WireType::Varint, &mut wrong_wire);
    prost::encoding::encode_varint(5, &mut wrong_wire);
    agrees_with_prost(&graph_with_node(&wrong_wire));
    // An unknown field held in a group, which prost skips.
    let mut group = node(Some("n"), "Relu", &["x"], &["y"]).encode_to_vec();
    prost::encoding::encode_key(50, prost::encoding::WireType::StartGroup, &mut group);
    prost::encoding::encode_key(51, prost::encoding::WireType::Varint, &mut group);
    prost::encoding::encode_varint(1, &mut group);
    prost::encoding::encode_key(50, prost::encoding::WireType::EndGroup, &mut group);
    agrees_with_prost(&graph_with_node(&group));
    // An attribute whose subgraph is given twice (prost merges them).
    let sub = onnx::GraphProto { name: Some("a".into()), ..Default::default() }.encode_to_vec();
    let sub2 = onnx::GraphProto { doc_string: Some("b".into()), ..Default::default() }.encode_to_vec();
    let body = onnx::AttributeProto { name: Some("body".into()), r#type: Some(5), ..Default::default() };
    let attr = field(field(body.encode_to_vec(), 6, &sub), 6, &sub2);
    let mut n = node(Some("loop"), "Loop", &["x"], &["y"]);
    n.attribute.clear();
    agrees_with_prost(&graph_with_node(&field(n.encode_to_vec(), 5, &attr)));
    // Every truncation of the rich model.
    let bytes = base.encode_to_vec();
    for cut in (0..bytes.len()).step_by(7) {
        agrees_with_prost(&bytes[..cut]);
    }
}

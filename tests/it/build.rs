//! A tiny model builder for tests: assembles `ModelProto`s from the prost types in
//! `onnx_bcast::io::proto` (the same messages a `.onnx` file holds), encodes them, and loads them
//! through `io::decode` or writes them to a file for the CLI.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use onnx_bcast::io::proto::{
    attribute_proto::AttributeType, tensor_proto::DataType, tensor_shape_proto, type_proto, AttributeProto, GraphProto,
    ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use prost::Message;

/// One dim of a declared shape: a size or a `dim_param` symbol.
#[derive(Clone, Debug)]
pub enum D {
    N(i64),
    S(&'static str),
}

impl From<i64> for D {
    fn from(n: i64) -> D {
        D::N(n)
    }
}

impl From<&'static str> for D {
    fn from(s: &'static str) -> D {
        D::S(s)
    }
}

/// A float32 initializer `name` of shape `dims` holding `values`.
pub fn floats(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(DataType::Float as i32),
        float_data: values.to_vec(),
        ..Default::default()
    }
}

/// A float32 graph input (or output) named `name` with a declared shape.
pub fn input<T: Into<D> + Clone>(name: &str, shape: &[T]) -> ValueInfoProto {
    typed(name, DataType::Float, shape)
}

/// A graph input (or output) of element type `elem` named `name` with a declared shape.
pub fn typed<T: Into<D> + Clone>(name: &str, elem: DataType, shape: &[T]) -> ValueInfoProto {
    let dim = shape
        .iter()
        .map(|d| tensor_shape_proto::Dimension {
            denotation: None,
            value: Some(match d.clone().into() {
                D::N(n) => tensor_shape_proto::dimension::Value::DimValue(n),
                D::S(s) => tensor_shape_proto::dimension::Value::DimParam(s.to_string()),
            }),
        })
        .collect();
    let tensor = type_proto::Tensor { elem_type: Some(elem as i32), shape: Some(TensorShapeProto { dim }) };
    ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(TypeProto { denotation: None, value: Some(type_proto::Value::TensorType(tensor)) }),
        ..Default::default()
    }
}

/// A graph output with no declared type, so that only inference speaks.
pub fn output(name: &str) -> ValueInfoProto {
    ValueInfoProto { name: Some(name.to_string()), ..Default::default() }
}

/// A node of the default domain.
pub fn node(name: &str, op: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    NodeProto {
        name: Some(name.to_string()),
        op_type: Some(op.to_string()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

/// `node` with an integer attribute added.
pub fn with_int(mut n: NodeProto, attr: &str, value: i64) -> NodeProto {
    n.attribute.push(AttributeProto {
        name: Some(attr.to_string()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(value),
        ..Default::default()
    });
    n
}

/// `node` with an attribute of integers added.
pub fn with_ints(mut n: NodeProto, attr: &str, values: &[i64]) -> NodeProto {
    n.attribute.push(AttributeProto {
        name: Some(attr.to_string()),
        r#type: Some(AttributeType::Ints as i32),
        ints: values.to_vec(),
        ..Default::default()
    });
    n
}

/// `node` with an attribute of floats added.
pub fn with_floats(mut n: NodeProto, attr: &str, values: &[f32]) -> NodeProto {
    n.attribute.push(AttributeProto {
        name: Some(attr.to_string()),
        r#type: Some(AttributeType::Floats as i32),
        floats: values.to_vec(),
        ..Default::default()
    });
    n
}

/// `node` with a string attribute added.
pub fn with_str(mut n: NodeProto, attr: &str, value: &str) -> NodeProto {
    n.attribute.push(AttributeProto {
        name: Some(attr.to_string()),
        r#type: Some(AttributeType::String as i32),
        s: Some(value.as_bytes().to_vec()),
        ..Default::default()
    });
    n
}

/// `node` with an attribute of strings added.
pub fn with_strs(mut n: NodeProto, attr: &str, values: &[&str]) -> NodeProto {
    n.attribute.push(AttributeProto {
        name: Some(attr.to_string()),
        r#type: Some(AttributeType::Strings as i32),
        strings: values.iter().map(|v| v.as_bytes().to_vec()).collect(),
        ..Default::default()
    });
    n
}

/// A legacy (opset < 7) binary node with `broadcast=1` and, when given, `axis`.
pub fn legacy(name: &str, op: &str, a: &str, b: &str, out: &str, axis: Option<i64>) -> NodeProto {
    let n = with_int(node(name, op, &[a, b], &[out]), "broadcast", 1);
    match axis {
        Some(axis) => with_int(n, "axis", axis),
        None => n,
    }
}

/// A model importing the default domain at `opset`, with an IR version that opset allows.
pub fn model(opset: i64, inputs: Vec<ValueInfoProto>, nodes: Vec<NodeProto>, outputs: &[&str]) -> ModelProto {
    let ir_version = match opset {
        ..=8 => 3,
        9 => 4,
        10 => 5,
        11 => 6,
        12..=14 => 7,
        15..=18 => 8,
        _ => 9,
    };
    ModelProto {
        ir_version: Some(ir_version),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(opset) }],
        producer_name: Some("tests/it/build.rs".to_string()),
        graph: Some(GraphProto {
            name: Some("g".to_string()),
            node: nodes,
            input: inputs,
            output: outputs.iter().map(|o| output(o)).collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A model with one binary node `op` named `name`: `a` and `b` in, `y` out.
pub fn binary(opset: i64, name: &str, op: &str, a: &[i64], b: &[i64]) -> ModelProto {
    model(opset, vec![input("a", a), input("b", b)], vec![node(name, op, &["a", "b"], &["y"])], &["y"])
}

/// The encoded bytes of `m`, as a `.onnx` file holds them.
pub fn encode(m: &ModelProto) -> Vec<u8> {
    m.encode_to_vec()
}

/// `m` loaded into the IR through the same decoder files go through.
pub fn load(m: &ModelProto) -> onnx_bcast::Model {
    onnx_bcast::io::decode(&encode(m), Path::new("built.onnx"), None).expect("a built model decodes")
}

/// Writes `m` to `dir/name` (creating `dir`) and gives the path.
pub fn write(m: &ModelProto, dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create the test directory");
    let path = dir.join(name);
    std::fs::write(&path, encode(m)).expect("write the model");
    path
}

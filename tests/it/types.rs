//! Element types against the op schemas' type constraints: inputs that one type variable binds
//! to two types (`type-mismatch`) and inputs of a type the op does not take at the model's
//! opset (`type-unsupported`). Each expectation is onnxruntime 1.32's verdict on the same
//! model (`InferenceSession` refuses it with a "Type Error" naming the node, or loads it);
//! `scripts/type_oracle.py` makes that comparison for every schema.

use crate::build;

use build::{node, typed, with_int};
use onnx_bcast::infer::{infer, Options};
use onnx_bcast::io::proto::{tensor_proto::DataType, ModelProto, NodeProto, ValueInfoProto};
use onnx_bcast::{ops, Severity};

/// The (code, message) of every finding about element types, in order.
fn type_findings(m: &ModelProto) -> Vec<(&'static str, String)> {
    let model = build::load(m);
    let inf = infer(&model, &Options::default());
    inf.diagnostics
        .iter()
        .filter(|d| d.code.as_str().starts_with("type-"))
        .inspect(|d| assert_eq!(d.severity, Severity::Error, "{d:?}"))
        .map(|d| (d.code.as_str(), d.message.clone()))
        .collect()
}

fn one_node(opset: i64, inputs: Vec<ValueInfoProto>, n: NodeProto) -> ModelProto {
    let outputs: Vec<String> = n.output.clone();
    let outputs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    build::model(opset, inputs, vec![n], &outputs)
}

fn f32(name: &str) -> ValueInfoProto {
    typed(name, DataType::Float, &[2, 3])
}

fn of(name: &str, elem: DataType) -> ValueInfoProto {
    typed(name, elem, &[3])
}

#[test]
fn a_type_variable_bound_to_two_types_is_a_mismatch() {
    // onnxruntime: "Type parameter (T) of Optype (Add) bound to different types
    // (tensor(float) and tensor(float16) in node (add)".
    let m = one_node(17, vec![f32("a"), of("b", DataType::Float16)], node("add", "Add", &["a", "b"], &["c"]));
    assert_eq!(
        type_findings(&m),
        [("type-mismatch", "inputs 'a' (float32) and 'b' (float16) must have one element type".to_string())]
    );
    // The same for Where's two branches (the condition is another variable) and for a
    // variadic input that takes one type (Sum, Concat): each input off the first one's type.
    let m = one_node(
        17,
        vec![of("c", DataType::Bool), f32("x"), of("y", DataType::Float16)],
        node("w", "Where", &["c", "x", "y"], &["o"]),
    );
    assert_eq!(type_findings(&m).len(), 1);
    let m = one_node(
        17,
        vec![f32("a"), of("b", DataType::Float), of("c", DataType::Double)],
        node("s", "Sum", &["a", "b", "c"], &["o"]),
    );
    assert_eq!(
        type_findings(&m),
        [("type-mismatch", "inputs 'a' (float32) and 'c' (float64) must have one element type".to_string())]
    );
    let m = one_node(
        17,
        vec![of("a", DataType::Float), of("b", DataType::Float16), of("c", DataType::Int64)],
        with_int(node("cat", "Concat", &["a", "b", "c"], &["o"]), "axis", 0),
    );
    let found = type_findings(&m);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found.iter().all(|(code, m)| *code == "type-mismatch" && m.starts_with("inputs 'a' (float32)")),
        "{found:?}"
    );
}

#[test]
fn inputs_outside_the_schema_types_are_unsupported() {
    // onnxruntime: "Type 'tensor(int8)' of input parameter (a) of operator (Add) in node (add)
    // is invalid": Add takes int8 from opset 14 on, not at 7.
    let add = |opset| {
        one_node(
            opset,
            vec![typed("a", DataType::Int8, &[2, 3]), of("b", DataType::Int8)],
            node("add", "Add", &["a", "b"], &["c"]),
        )
    };
    let found = type_findings(&add(7));
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].0, "type-unsupported");
    assert_eq!(
        found[0].1,
        "input 'a' has element type int8, which Add (opset 7) does not take there; it takes float32, int32, int64, \
         float16, float64, uint32, uint64"
    );
    assert!(type_findings(&add(14)).is_empty());
    // A uint8 PRelu input; a float condition for Where; Expand's shape as int32.
    let prelu = one_node(
        17,
        vec![typed("x", DataType::Uint8, &[2, 3]), of("slope", DataType::Float)],
        node("p", "PRelu", &["x", "slope"], &["y"]),
    );
    assert_eq!(type_findings(&prelu).len(), 1);
    assert!(type_findings(&prelu)[0].1.starts_with("input 'x' has element type uint8"));
    let cond =
        one_node(17, vec![of("c", DataType::Float), f32("x"), f32("y")], node("w", "Where", &["c", "x", "y"], &["o"]));
    assert_eq!(
        type_findings(&cond)[0].1,
        "input 'c' has element type float32, which Where (opset 17) does not take there; it takes bool"
    );
    let shape = |elem| {
        one_node(17, vec![of("x", DataType::Float16), typed("s", elem, &[2])], node("e", "Expand", &["x", "s"], &["y"]))
    };
    assert_eq!(type_findings(&shape(DataType::Int32)).len(), 1);
    assert!(type_findings(&shape(DataType::Int64)).is_empty());
}

#[test]
fn distinct_type_variables_and_heterogeneous_repeats_bind_nothing() {
    // Pow's exponent has its own variable (T1) from opset 12: onnxruntime loads this.
    let pow = one_node(17, vec![f32("a"), of("b", DataType::Int64)], node("p", "Pow", &["a", "b"], &["c"]));
    assert!(type_findings(&pow).is_empty());
    // Loop's carried values (V) repeat heterogeneously: each slot takes its own type, while
    // its trip count and condition keep theirs.
    let lp = ops::lookup("", "Loop", 21).expect("Loop 21");
    let (carried, a) = lp.schema.inputs.of(2).expect("v_initial");
    let (again, b) = lp.schema.inputs.of(5).expect("a later carried value");
    assert_eq!(carried, again);
    assert!(!a.binds && !b.binds);
    assert!(lp.schema.inputs.of(0).is_some_and(|(_, m)| m.binds && m.set == 1 << DataType::Int64 as u32));
    // Sum's repeated input takes one type throughout.
    let sum = ops::lookup("", "Sum", 13).expect("Sum 13");
    assert!(sum.schema.inputs.of(7).is_some_and(|(var, m)| var == 0 && m.binds));
}

#[test]
fn types_come_from_inference_as_well_as_declarations() {
    // A Cast to float16 meets a float32 input: onnxruntime refuses the Add as above.
    let cast = with_int(node("cast", "Cast", &["a"], &["h"]), "to", DataType::Float16 as i64);
    let m = build::model(17, vec![f32("a"), f32("b")], vec![cast, node("add", "Add", &["h", "b"], &["c"])], &["c"]);
    assert_eq!(
        type_findings(&m),
        [("type-mismatch", "inputs 'h' (float16) and 'b' (float32) must have one element type".to_string())]
    );
}

#[test]
fn opsets_newer_than_the_schemas_are_not_checked() {
    // A schema past the newest one known may allow more types; nothing is assumed there.
    let newest = ops::newest("").expect("the default domain");
    let m = one_node(newest + 1, vec![f32("a"), of("b", DataType::Float16)], node("add", "Add", &["a", "b"], &["c"]));
    assert!(type_findings(&m).is_empty());
    let m = one_node(newest, vec![f32("a"), of("b", DataType::Float16)], node("add", "Add", &["a", "b"], &["c"]));
    assert_eq!(type_findings(&m).len(), 1);
}

#[test]
fn a_value_info_element_type_that_contradicts_inference_is_an_error() {
    // onnxruntime refuses a float16 value_info for a float32 Add ("Type Error: Type
    // (tensor(float16)) of output arg (c) of node (add) does not match expected type
    // (tensor(float))") but loads one of a different size, merging it with a warning.
    let findings = |vi: ValueInfoProto| {
        let mut m = build::model(
            17,
            vec![f32("a"), of("b", DataType::Float)],
            vec![node("add", "Add", &["a", "b"], &["c"]), node("r", "Relu", &["c"], &["d"])],
            &["d"],
        );
        m.graph.as_mut().expect("graph").value_info.push(vi);
        let inf = infer(&build::load(&m), &Options::default());
        inf.diagnostics.iter().map(|d| (d.severity, d.code.as_str(), d.message.clone())).collect::<Vec<_>>()
    };
    assert_eq!(
        findings(typed("c", DataType::Float16, &[2, 3])),
        [(
            Severity::Error,
            "declared-shape-mismatch",
            "value_info 'c' contradicts inference: element type float16 is declared, float32 is inferred".to_string()
        )]
    );
    let size = findings(typed("c", DataType::Float, &[2, 4]));
    assert_eq!(size.len(), 1, "{size:?}");
    assert_eq!((size[0].0, size[0].1), (Severity::Warning, "declared-shape-mismatch"));
}

#[test]
fn a_value_of_another_kind_than_the_schema_takes_is_unsupported() {
    use onnx_bcast::io::proto::{type_proto, TypeProto};
    // `name` declared as a sequence (or an optional) of float32 [2, 3].
    let wrapped = |name: &str, optional: bool| {
        let inner = Box::new(f32(name).r#type.expect("a type"));
        let value = match optional {
            false => type_proto::Value::SequenceType(Box::new(type_proto::Sequence { elem_type: Some(inner) })),
            true => type_proto::Value::OptionalType(Box::new(type_proto::Optional { elem_type: Some(inner) })),
        };
        ValueInfoProto { r#type: Some(TypeProto { denotation: None, value: Some(value) }), ..f32(name) }
    };
    // onnxruntime: "Type Error: Type 'tensor(float)' of input parameter (x) of operator
    // (SequenceLength) in node (n) is invalid", and the same for 'seq(tensor(float))' fed to Add.
    let length = one_node(17, vec![f32("x")], node("n", "SequenceLength", &["x"], &["y"]));
    assert_eq!(
        type_findings(&length),
        [(
            "type-unsupported",
            "input 'x' is a tensor, which SequenceLength (opset 17) does not take there; it takes a sequence"
                .to_string()
        )]
    );
    let add = one_node(17, vec![wrapped("s", false), f32("x")], node("n", "Add", &["s", "x"], &["y"]));
    assert_eq!(
        type_findings(&add),
        [(
            "type-unsupported",
            "input 's' is a sequence, which Add (opset 17) does not take there; it takes a tensor".into()
        )]
    );
    // Identity takes sequences from opset 14 and optionals from 16; OptionalGetElement
    // takes tensors from 18. onnxruntime loads each of these from that version on.
    let identity =
        |opset, optional| one_node(opset, vec![wrapped("s", optional)], node("n", "Identity", &["s"], &["y"]));
    assert_eq!(type_findings(&identity(13, false)).len(), 1);
    assert!(type_findings(&identity(14, false)).is_empty());
    assert_eq!(type_findings(&identity(15, true)).len(), 1);
    assert!(type_findings(&identity(16, true)).is_empty());
    let get = |opset| one_node(opset, vec![f32("x")], node("n", "OptionalGetElement", &["x"], &["y"]));
    assert_eq!(
        type_findings(&get(15)),
        [(
            "type-unsupported",
            "input 'x' is a tensor, which OptionalGetElement (opset 15) does not take there; it takes an optional"
                .to_string()
        )]
    );
    assert!(type_findings(&get(18)).is_empty());
}

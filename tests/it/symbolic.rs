//! Symbolic inference on small hand-built models: shape tensors through arithmetic, side
//! conditions and their contradictions, `--dim` bindings, exporter quirks, arity checks and
//! subgraph paths in diagnostics.

use std::path::Path;

use onnx_bcast::infer::{infer, Inference, Options};
use onnx_bcast::io::proto::{
    attribute_proto, tensor_proto, tensor_shape_proto, type_proto, AttributeProto, GraphProto, ModelProto, NodeProto,
    OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};
use onnx_bcast::shape::Dim;
use onnx_bcast::Model;
use prost::Message;

/// A dim written as a number or a symbol name.
#[derive(Clone, Copy)]
enum D {
    N(i64),
    S(&'static str),
}

fn input(name: &str, elem: tensor_proto::DataType, dims: &[D]) -> ValueInfoProto {
    use tensor_shape_proto::dimension::Value as DV;
    let dim = dims
        .iter()
        .map(|d| tensor_shape_proto::Dimension {
            value: Some(match d {
                D::N(n) => DV::DimValue(*n),
                D::S(s) => DV::DimParam(s.to_string()),
            }),
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem as i32),
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn f32_input(name: &str, dims: &[D]) -> ValueInfoProto {
    input(name, tensor_proto::DataType::Float, dims)
}

fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        name: Some(outputs.first().map(|o| format!("{op}_{o}")).unwrap_or_default()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

/// `n` with an integer attribute.
fn with_int(mut n: NodeProto, name: &str, v: i64) -> NodeProto {
    n.attribute.push(AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    });
    n
}

/// `n` with a string attribute.
fn with_str(mut n: NodeProto, name: &str, v: &str) -> NodeProto {
    n.attribute.push(AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec()),
        ..Default::default()
    });
    n
}

fn ints_init(name: &str, v: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: vec![v.len() as i64],
        data_type: Some(tensor_proto::DataType::Int64 as i32),
        int64_data: v.to_vec(),
        ..Default::default()
    }
}

/// An int64 scalar initializer.
fn scalar(name: &str, v: i64) -> TensorProto {
    TensorProto { dims: vec![], ..ints_init(name, &[v]) }
}

fn f32_init(name: &str, n: usize) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: vec![n as i64],
        data_type: Some(tensor_proto::DataType::Float as i32),
        float_data: vec![0.25; n],
        ..Default::default()
    }
}

fn graph(nodes: Vec<NodeProto>, inputs: Vec<ValueInfoProto>, inits: Vec<TensorProto>, outputs: &[&str]) -> GraphProto {
    GraphProto {
        name: Some("g".into()),
        node: nodes,
        input: inputs,
        initializer: inits,
        output: outputs.iter().map(|o| ValueInfoProto { name: Some(o.to_string()), ..Default::default() }).collect(),
        ..Default::default()
    }
}

/// An If branch attribute.
fn branch(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Graph as i32),
        g: Some(g),
        ..Default::default()
    }
}

fn model(g: GraphProto) -> Model {
    model_at(g, 17)
}

fn model_at(g: GraphProto, opset: i64) -> Model {
    let m = ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(opset) }],
        graph: Some(g),
        ..Default::default()
    };
    onnx_bcast::io::decode(&m.encode_to_vec(), Path::new("t.onnx"), None).expect("decodes")
}

fn shape_of<'a>(m: &Model, inf: &'a Inference, name: &str) -> Option<&'a Vec<Dim>> {
    inf.shape(m.resolve(Model::MAIN, name).expect("named value"))
}

fn codes(inf: &Inference) -> Vec<&'static str> {
    inf.diagnostics.iter().map(|d| d.code.as_str()).collect()
}

fn d(n: i64) -> Dim {
    Dim::Known(n)
}

#[test]
fn reshape_through_shape_arithmetic_keeps_symbols() {
    // x[batch, seq, 64] -> [batch*seq, 64] computed as Shape -> Gather -> Mul -> Concat.
    let nodes = vec![
        node("Shape", &["x"], &["s"]),
        node("Gather", &["s", "i0"], &["b"]),
        node("Gather", &["s", "i1"], &["t"]),
        node("Mul", &["b", "t"], &["bt"]),
        with_int(node("Concat", &["bt", "c64"], &["target"]), "axis", 0),
        node("Reshape", &["x", "target"], &["y"]),
        node("Add", &["t", "one"], &["t1"]),
        node("ConstantOfShape", &["t1"], &["z"]),
    ];
    let g = graph(
        nodes,
        vec![f32_input("x", &[D::S("batch"), D::S("seq"), D::N(64)])],
        vec![ints_init("i0", &[0]), ints_init("i1", &[1]), ints_init("c64", &[64]), ints_init("one", &[1])],
        &["y", "z"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![Dim::parse("batch*seq"), d(64)]));
    assert_eq!(shape_of(&m, &inf, "z"), Some(&vec![Dim::parse("seq+1")]));
    // Bound, the same graph gives numbers.
    let opts = Options { bindings: [("batch".into(), 2), ("seq".into(), 5)].into(), ..Options::default() };
    let inf = infer(&m, &opts);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![d(10), d(64)]));
    assert_eq!(shape_of(&m, &inf, "z"), Some(&vec![d(6)]));
}

#[test]
fn a_symbol_forced_to_two_sizes_is_an_error() {
    // PRelu's slope stretches to x: the symbol n must equal 3 and also 4.
    let g = graph(
        vec![node("PRelu", &["x", "s3"], &["a"]), node("PRelu", &["x", "s4"], &["b"])],
        vec![f32_input("x", &[D::S("n")])],
        vec![f32_init("s3", 3), f32_init("s4", 4)],
        &["a", "b"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert_eq!(codes(&inf), vec!["symbol-contradiction"]);
    assert!(inf.has_errors());
    assert_eq!(inf.constraints.len(), 2);
    // With n bound to 3, the second PRelu is the one that fails, as a broadcast error.
    let inf = infer(&m, &Options { bindings: [("n".into(), 3)].into(), ..Options::default() });
    assert_eq!(codes(&inf), vec!["broadcast-incompatible"]);
    assert_eq!(inf.diagnostics[0].node.as_deref(), Some("PRelu_b"));
}

#[test]
fn side_conditions_that_agree_are_no_error() {
    // n must be 1 or 3, and 1 or 4: n = 1 satisfies both, so no error, two constraints.
    let g = graph(
        vec![node("Add", &["x", "s3"], &["a"]), node("Add", &["x", "s4"], &["b"])],
        vec![f32_input("x", &[D::S("n")])],
        vec![f32_init("s3", 3), f32_init("s4", 4)],
        &["a", "b"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(inf.constraints.len(), 2);
    assert_eq!(shape_of(&m, &inf, "a"), Some(&vec![d(3)]));
}

#[test]
fn zero_dim_on_an_input_is_the_size_0_with_a_warning() {
    let g = graph(vec![node("Relu", &["x"], &["y"])], vec![f32_input("x", &[D::N(0), D::N(8)])], vec![], &["y"]);
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert_eq!(codes(&inf), vec!["zero-dim-input"]);
    assert!(inf.diagnostics[0].message.contains("only empty tensors can be fed"), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![d(0), d(8)]));
    // A symbol bound to 0 is the size 0 too, with no word about exporters.
    let g = graph(vec![node("Relu", &["x"], &["y"])], vec![f32_input("x", &[D::S("n"), D::N(8)])], vec![], &["y"]);
    let m = model(g);
    let inf = infer(&m, &Options { bindings: [("n".to_string(), 0)].into(), ..Options::default() });
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![d(0), d(8)]));
}

/// onnxruntime 1.32 refuses a model importing ai.onnx opset 30 ("Opset 30 is under
/// development ... Current official support for domain ai.onnx is till opset 28"): a warning,
/// as a newer onnxruntime may run it, and the ops are inferred by their newest schemas.
#[test]
fn a_newer_opset_than_known_is_a_warning() {
    let g = graph(vec![node("Relu", &["x"], &["y"])], vec![f32_input("x", &[D::N(2)])], vec![], &["y"]);
    let inf = infer(&model_at(g, 30), &Options::default());
    assert_eq!(codes(&inf), vec!["opset-unknown"]);
    assert!(
        inf.diagnostics[0].message.contains("ai.onnx opset 30, newer than the 28"),
        "{}",
        inf.diagnostics[0].message
    );
    assert_eq!(inf.diagnostics[0].severity, onnx_bcast::Severity::Warning);
}

#[test]
fn wrong_input_count_is_an_invalid_node() {
    let g = graph(vec![node("Relu", &["x", "x"], &["y"])], vec![f32_input("x", &[D::N(2)])], vec![], &["y"]);
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert_eq!(codes(&inf), vec!["invalid-node"]);
    assert!(inf.diagnostics[0].message.contains("takes 1 input, the node has 2"), "{}", inf.diagnostics[0].message);
}

#[test]
fn diagnostics_in_a_branch_name_the_subgraph_and_if_merges_branches() {
    let then_g = graph(vec![node("Add", &["x", "s3"], &["t"])], vec![], vec![f32_init("s3", 3)], &["t"]);
    let else_g = graph(vec![node("Add", &["x", "s4"], &["e"])], vec![], vec![f32_init("s4", 4)], &["e"]);
    let mut if_node = node("If", &["c"], &["y"]);
    if_node.name = Some("if0".into());
    if_node.attribute = vec![branch("then_branch", then_g), branch("else_branch", else_g)];
    let g = graph(
        vec![if_node],
        vec![input("c", tensor_proto::DataType::Bool, &[]), f32_input("x", &[D::N(5)])],
        vec![],
        &["y"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    let graphs: Vec<&str> = inf.diagnostics.iter().map(|d| d.graph.as_str()).collect();
    assert_eq!(codes(&inf), vec!["broadcast-incompatible", "broadcast-incompatible"]);
    assert!(graphs.iter().all(|g| g.starts_with("if0/")), "{graphs:?}");
    assert_ne!(graphs[0], graphs[1]);
}

#[test]
fn if_with_agreeing_branches_keeps_their_shape() {
    let then_g = graph(vec![node("Relu", &["x"], &["t"])], vec![], vec![], &["t"]);
    let else_g = graph(vec![node("Neg", &["x"], &["e"])], vec![], vec![], &["e"]);
    let mut if_node = node("If", &["c"], &["y"]);
    if_node.attribute = vec![branch("then_branch", then_g), branch("else_branch", else_g)];
    let g = graph(
        vec![if_node],
        vec![input("c", tensor_proto::DataType::Bool, &[]), f32_input("x", &[D::S("n"), D::N(5)])],
        vec![],
        &["y"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![Dim::sym("n"), d(5)]));
}

/// A Loop of `trips` (an int64 initializer of that many elements) carrying x0 [`x0`] through a
/// body that declares it [2] and negates it; with a bool condition of shape `cond` if given.
fn loop_of(trips: &[i64], x0: i64, cond: Option<&[D]>) -> Model {
    let body = graph(
        vec![node("Identity", &["ci"], &["co"]), node("Neg", &["x"], &["xo"])],
        vec![
            input("i", tensor_proto::DataType::Int64, &[]),
            input("ci", tensor_proto::DataType::Bool, &[]),
            f32_input("x", &[D::N(2)]),
        ],
        vec![],
        &["co", "xo"],
    );
    let mut l = node("Loop", &["m", if cond.is_some() { "c" } else { "" }, "x0"], &["y"]);
    l.attribute = vec![branch("body", body)];
    let mut inputs = vec![f32_input("x0", &[D::N(x0)])];
    inputs.extend(cond.map(|c| input("c", tensor_proto::DataType::Bool, c)));
    model(graph(vec![l], inputs, vec![ints_init("m", trips)], &["y"]))
}

/// onnxruntime infers a Loop body from its declarations but runs it on the values fed (a body
/// declaring [2] fed [3] runs), so a declaration the initial value contradicts is a warning.
#[test]
fn a_loop_body_declaration_the_fed_value_contradicts_is_a_warning() {
    let inf = infer(&loop_of(&[3], 3, None), &Options::default());
    assert_eq!(codes(&inf), vec!["declared-shape-mismatch"]);
    assert_eq!(inf.diagnostics[0].severity, onnx_bcast::Severity::Warning);
    let msg = &inf.diagnostics[0].message;
    assert!(
        msg.contains(
            "body input 'x' contradicts the value 'x0' fed to it: size 2 is declared at axis 0, 3 is inferred"
        ),
        "{msg}"
    );
}

/// The condition's type is merged into the body's: a [1] fed to a scalar cond_in is refused
/// (onnxruntime 1.32: "Mismatch between number of inferred and declared dimensions").
#[test]
fn a_loop_condition_unlike_the_body_declaration_is_an_error() {
    let inf = infer(&loop_of(&[3], 2, Some(&[])), &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let inf = infer(&loop_of(&[3], 2, Some(&[D::N(1)])), &Options::default());
    assert_eq!(codes(&inf), vec!["declared-shape-mismatch"]);
    assert_eq!(inf.diagnostics[0].severity, onnx_bcast::Severity::Error);
    assert!(inf.diagnostics[0].message.contains("body input 'ci' contradicts the value 'c'"), "{:?}", inf.diagnostics);
}

/// Scan (opset 16) of a state s0 [`s0`] over scan inputs of `xs`, through a body that declares
/// s and each x [2] and adds x0 to s.
fn scan_of(s0: i64, xs: &[&[i64]]) -> Model {
    let mut body_in = vec![f32_input("s", &[D::N(2)])];
    body_in.extend((0..xs.len()).map(|k| f32_input(&format!("x{k}"), &[D::N(2)])));
    let body = graph(
        vec![node("Add", &["s", "x0"], &["so"]), node("Identity", &["so"], &["y"])],
        body_in,
        vec![],
        &["so", "y"],
    );
    let names: Vec<String> = (0..xs.len()).map(|k| format!("xs{k}")).collect();
    let mut inputs: Vec<&str> = vec!["s0"];
    inputs.extend(names.iter().map(String::as_str));
    let mut scan = with_int(node("Scan", &inputs, &["sf", "ys"]), "num_scan_inputs", xs.len() as i64);
    scan.attribute.push(branch("body", body));
    let mut graph_in = vec![f32_input("s0", &[D::N(s0)])];
    graph_in.extend(xs.iter().zip(&names).map(|(x, n)| f32_input(n, &x.iter().map(|d| D::N(*d)).collect::<Vec<_>>())));
    model_at(graph(vec![scan], graph_in, vec![], &["sf", "ys"]), 16)
}

/// What onnxruntime 1.32 refuses of a Scan: a scan input without its scan axis ("scan_input_axes
/// axis value 0 is invalid for a tensor of rank 0"), scan inputs of two lengths and a state
/// unlike the body's declaration ("Can't merge shape info ... Inferred=4 Declared=3", "Inferred=3
/// Declared=2").
#[test]
fn scan_inputs_have_their_axis_one_length_and_the_declared_shapes() {
    let m = scan_of(2, &[&[3, 2]]);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "ys"), Some(&vec![d(3), d(2)]));
    assert!(codes(&infer(&scan_of(2, &[&[3, 2], &[3, 2]]), &Options::default())).is_empty());
    for (m, code, text) in [
        (scan_of(2, &[&[]]), "invalid-node", "axis 0 is outside"),
        (scan_of(2, &[&[3, 2], &[4, 2]]), "invalid-node", "scan input 2 has 4 steps, an earlier one 3"),
        (scan_of(3, &[&[3, 2]]), "declared-shape-mismatch", "body input 's' contradicts what the node feeds it"),
    ] {
        let inf = infer(&m, &Options::default());
        assert_eq!(codes(&inf), vec![code], "{:?}", inf.diagnostics);
        assert!(inf.diagnostics[0].message.contains(text), "{}", inf.diagnostics[0].message);
        assert_eq!(inf.diagnostics[0].severity, onnx_bcast::Severity::Error);
    }
}

/// onnxruntime 1.32 refuses a Scan of no iterations, which the spec allows ("Invalid
/// dim0_offset of 0. Dimension 0 is 0"): over known sizes a warning says so, over a symbolic
/// length it is a condition. Scanning `x[3:]` of `x` [n, 2] from the state `x[:1]` runs at n = 4
/// and 5 and is refused at n = 1 and 3; the contract said every n (onnx-asr's wespeaker features, which scan frames
/// of `N-240` samples, run from N = 400).
#[test]
fn a_scan_of_no_iterations_is_what_onnxruntime_refuses() {
    let inf = infer(&scan_of(2, &[&[0, 2]]), &Options::default());
    assert_eq!(codes(&inf), vec!["zero-dim-input", "runtime-differs"], "{:?}", inf.diagnostics);
    assert!(inf.diagnostics[1].message.contains("no iterations"), "{}", inf.diagnostics[1].message);
    // The state, x[:1], is made of n too; the trace follows the scan input.
    let body = graph(
        vec![node("Add", &["s", "x0"], &["so"]), node("Identity", &["so"], &["y"])],
        vec![f32_input("s", &[D::S("a"), D::N(2)]), f32_input("x0", &[D::N(2)])],
        vec![],
        &["so", "y"],
    );
    let mut scan = with_int(node("Scan", &["s0", "xs"], &["sf", "ys"]), "num_scan_inputs", 1);
    scan.attribute.push(branch("body", body));
    let first = node("Slice", &["x", "zero", "one", "ax"], &["s0"]);
    let rest = node("Slice", &["x", "st", "en", "ax"], &["xs"]);
    let consts = [("zero", 0), ("one", 1), ("st", 3), ("en", 1000), ("ax", 0)].map(|(n, v)| ints_init(n, &[v]));
    let m = model_at(
        graph(vec![first, rest, scan], vec![f32_input("x", &[D::S("n"), D::N(2)])], consts.to_vec(), &["sf", "ys"]),
        16,
    );
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert!(inf.contract.accepts("n", 4) && !inf.contract.accepts("n", 3), "{:?}", inf.contract);
    let refused = inf.contract.dims["n"].counterexample.as_ref().expect("a counterexample");
    assert!(refused.origins.iter().any(|o| o.starts_with("'xs'")), "{:?}", refused.origins);
}

/// onnxruntime 1.32's refusals the spec does not make, over symbolic sizes, are conditions of
/// the contract: RotaryEmbedding of a sequence longer than its caches' 50 positions ("Updating
/// cos_cache and sin_cache in RotaryEmbedding is not currently supported": seq 50 runs, 51 is
/// refused) and an AffineGrid of height `h-5` ("size[2] (H=0) must be positive": h = 6 runs, 5
/// is refused).
#[test]
fn onnxruntime_s_refusals_over_symbols_are_conditions() {
    let mut cache = f32_init("c", 200);
    cache.dims = vec![50, 4];
    let pos = input("p", tensor_proto::DataType::Int64, &[D::N(2), D::S("seq")]);
    let rope = with_int(node("RotaryEmbedding", &["x", "c", "c", "p"], &["y"]), "num_heads", 4);
    let x = f32_input("x", &[D::N(2), D::S("seq"), D::N(32)]);
    let inf = infer(&model_at(graph(vec![rope], vec![x, pos], vec![cache], &["y"]), 23), &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert!(inf.contract.accepts("seq", 50) && !inf.contract.accepts("seq", 51), "{:?}", inf.contract);

    let mut theta = f32_init("t", 12);
    theta.dims = vec![2, 2, 3];
    let nodes = vec![
        node("Shape", &["x"], &["s0"]),
        node("Sub", &["s0", "five"], &["s"]),
        node("AffineGrid", &["t", "s"], &["y"]),
    ];
    let x = f32_input("x", &[D::N(2), D::N(3), D::S("h"), D::N(7)]);
    let m = model_at(graph(nodes, vec![x], vec![theta, ints_init("five", &[0, 0, 5, 0])], &["y"]), 20);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert!(inf.contract.accepts("h", 6) && !inf.contract.accepts("h", 5), "{:?}", inf.contract);
}

/// onnxruntime runs onnx's StringNormalizer inference at load, which refuses a 2-D input whose
/// first dim has no value of 1 ("Input shape must have either [C] or [1,C] dimensions where C >
/// 0" for `x [b, n]`, at any b; `x [1, n]` and `x [n]` load and run). The spec's `[1, C]` makes
/// `b` 1 in the contract; the load failure is a `runtime-differs` warning.
#[test]
fn a_string_normalizer_batch_not_declared_1_is_what_onnxruntime_refuses() {
    let run = |dims: &[D]| {
        let x = input("x", tensor_proto::DataType::String, dims);
        let n = node("StringNormalizer", &["x"], &["y"]);
        infer(&model_at(graph(vec![n], vec![x], vec![], &["y"]), 10), &Options::default())
    };
    let inf = run(&[D::S("b"), D::S("n")]);
    assert_eq!(codes(&inf), vec!["runtime-differs"], "{:?}", inf.diagnostics);
    assert!(inf.diagnostics[0].message.contains("not declared 1 (here b)"), "{:?}", inf.diagnostics);
    assert!(inf.contract.accepts("b", 1) && !inf.contract.accepts("b", 2), "{:?}", inf.contract);
    for dims in [&[D::N(1), D::S("n")][..], &[D::S("n")]] {
        let inf = run(dims);
        assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    }
}

/// A Scan's state keeps its shape across iterations (the spec). onnxruntime 1.32 refuses a body
/// that gives it back otherwise: at load ("Can't merge shape info ... Inferred=4 Declared=2")
/// or at run time ("ensure the pre-allocated shapes match"). A state `s0` [n] added to scan
/// elements [2] runs only at n = 2; the contract said every n. A state [2] concatenated with
/// them grows to [4]; it was inferred as if it ran.
#[test]
fn a_scan_state_keeps_its_shape() {
    let scan = |op: &str, s0: D| {
        let mut grow = node(op, &["s", "x0"], &["so"]);
        if op == "Concat" {
            grow = with_int(grow, "axis", 0);
        }
        let body = graph(
            vec![grow, node("Identity", &["so"], &["y"])],
            vec![f32_input("s", &[s0]), f32_input("x0", &[D::N(2)])],
            vec![],
            &["so", "y"],
        );
        let mut scan = with_int(node("Scan", &["s0", "xs"], &["sf", "ys"]), "num_scan_inputs", 1);
        scan.attribute.push(branch("body", body));
        let inputs = vec![f32_input("s0", &[s0]), f32_input("xs", &[D::N(3), D::N(2)])];
        model_at(graph(vec![scan], inputs, vec![], &["sf", "ys"]), 16)
    };
    let inf = infer(&scan("Add", D::S("n")), &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert!(inf.contract.accepts("n", 2) && !inf.contract.accepts("n", 1), "{:?}", inf.contract);
    assert!(!inf.contract.accepts("n", 3), "{:?}", inf.contract);
    let inf = infer(&scan("Concat", D::N(2)), &Options::default());
    assert_eq!(codes(&inf), vec!["invalid-node"], "{:?}", inf.diagnostics);
    assert!(inf.diagnostics[0].message.contains("turns state 0 of shape [2] into [4]"), "{:?}", inf.diagnostics);
}

/// Scan before opset 9: every state and scan input leads with one batch axis. onnxruntime
/// 1.32 refuses a state of batch 2 beside a scan input of batch 1 ("Can't merge shape info.
/// ... Inferred=1 Declared=2 Dimension=0").
#[test]
fn a_scan_8_has_one_batch() {
    let scan8 = |state: i64, xs: i64| {
        let body = graph(
            vec![node("Add", &["s", "x"], &["so"]), node("Identity", &["so"], &["y"])],
            vec![f32_input("s", &[D::N(2)]), f32_input("x", &[D::N(2)])],
            vec![],
            &["so", "y"],
        );
        let mut scan = with_int(node("Scan", &["", "s0", "xs"], &["sf", "ys"]), "num_scan_inputs", 1);
        scan.attribute.push(branch("body", body));
        let inputs = vec![f32_input("s0", &[D::N(state), D::N(2)]), f32_input("xs", &[D::N(xs), D::N(3), D::N(2)])];
        model_at(graph(vec![scan], inputs, vec![], &["sf", "ys"]), 8)
    };
    let m = scan8(2, 2);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "sf"), Some(&vec![d(2), d(2)]));
    assert_eq!(shape_of(&m, &inf, "ys"), Some(&vec![d(2), d(3), d(2)]));
    // A batch of 0: "Invalid dim0_offset of 0", where the spec runs the body on nothing.
    let inf = infer(&scan8(0, 0), &Options::default());
    assert!(codes(&inf).contains(&"runtime-differs"), "{:?}", inf.diagnostics);
    let inf = infer(&scan8(2, 1), &Options::default());
    assert_eq!(codes(&inf), vec!["invalid-node"], "{:?}", inf.diagnostics);
    assert!(inf.diagnostics[0].message.contains("input 2 has a batch of 1, an earlier one 2"), "{:?}", inf.diagnostics);
}

/// If's condition and Loop's trip count hold one element (the spec; onnxruntime 1.32: "If
/// nodes condition input must have exactly one element", "'Loop' input 'M' should be a scalar
/// tensor. Got shape of {2}"); one element of rank 1 runs in both.
#[test]
fn if_and_loop_take_one_element_counts() {
    let bool_in = |dims: &[D]| input("c", tensor_proto::DataType::Bool, dims);
    let if_of = |dims: &[D]| {
        let then_g = graph(vec![node("Relu", &["x"], &["t"])], vec![], vec![], &["t"]);
        let else_g = graph(vec![node("Neg", &["x"], &["e"])], vec![], vec![], &["e"]);
        let mut if_node = node("If", &["c"], &["y"]);
        if_node.attribute = vec![branch("then_branch", then_g), branch("else_branch", else_g)];
        model(graph(vec![if_node], vec![bool_in(dims), f32_input("x", &[D::N(5)])], vec![], &["y"]))
    };
    for (m, ok) in [
        (if_of(&[D::N(2)]), false),
        (if_of(&[D::N(1)]), true),
        (loop_of(&[3, 3], 2, None), false),
        (loop_of(&[3], 2, None), true),
    ] {
        let inf = infer(&m, &Options::default());
        let want: Vec<&str> = if ok { vec![] } else { vec!["invalid-node"] };
        assert_eq!(codes(&inf), want, "{:?}", inf.diagnostics);
    }
}

/// The pattern torch exports for `x.squeeze(-1)` on a dynamic dim: If(size == 1, Squeeze,
/// Identity). Its rank depends on the size, so it stays unknown with a warning, until the size
/// is bound.
#[test]
fn if_whose_branches_differ_in_rank_warns_until_the_condition_is_known() {
    let then_g = graph(vec![node("Squeeze", &["x", "axis2"], &["t"])], vec![], vec![ints_init("axis2", &[2])], &["t"]);
    let else_g = graph(vec![node("Identity", &["x"], &["e"])], vec![], vec![], &["e"]);
    let mut if_node = node("If", &["c"], &["y"]);
    if_node.name = Some("squeeze_if_one".into());
    if_node.attribute = vec![branch("then_branch", then_g), branch("else_branch", else_g)];
    let g = graph(
        vec![
            node("Shape", &["x"], &["s"]),
            node("Gather", &["s", "two"], &["n"]),
            node("Equal", &["n", "one"], &["c"]),
            if_node,
        ],
        vec![f32_input("x", &[D::S("b"), D::N(4), D::S("n")])],
        vec![ints_init("two", &[2]), ints_init("one", &[1])],
        &["y"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert_eq!(codes(&inf), vec!["branch-rank-differs"]);
    let msg = &inf.diagnostics[0].message;
    assert!(msg.contains("rank 2 in then_branch and rank 3 in else_branch") && msg.contains("'c'"), "{msg}");
    assert_eq!(inf.diagnostics[0].node.as_deref(), Some("squeeze_if_one"));
    assert_eq!(shape_of(&m, &inf, "y"), None);
    let bound = |n: i64| Options { bindings: [("n".to_string(), n)].into_iter().collect(), ..Options::default() };
    let inf = infer(&m, &bound(1));
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![Dim::sym("b"), d(4)]));
    let inf = infer(&m, &bound(5));
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![Dim::sym("b"), d(4), d(5)]));
}

/// torch's `position_ids[:, :seq]` on a [1, 64] buffer: the slice is `min(64,seq)` long, its
/// broadcast against `seq` is `seq` under the side condition that they are equal or 1 (the
/// model works for seq <= 64), and slicing an axis of size `seq` to `seq` is `seq`.
#[test]
fn slice_to_a_symbolic_end_is_a_min() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["s"]),
            node("Gather", &["s", "one"], &["end"]),
            node("Slice", &["p", "zero", "end", "one"], &["pos"]),
            node("Add", &["x", "pos"], &["y"]),
            node("Slice", &["x", "zero", "end", "one"], &["same"]),
        ],
        vec![f32_input("x", &[D::S("batch"), D::S("seq")]), f32_input("p", &[D::N(1), D::N(64)])],
        vec![ints_init("zero", &[0]), ints_init("one", &[1])],
        &["y", "same"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "pos"), Some(&vec![d(1), Dim::parse("min(64,seq)")]));
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![Dim::sym("batch"), Dim::sym("seq")]));
    assert_eq!(shape_of(&m, &inf, "same"), Some(&vec![Dim::sym("batch"), Dim::sym("seq")]));
    assert_eq!(inf.constraints.len(), 1, "{:?}", inf.constraints);
    // Bound, the same graph is exact either way, and too long a sequence does not broadcast.
    let bound = |n: i64| Options { bindings: [("seq".to_string(), n)].into_iter().collect(), ..Options::default() };
    let inf = infer(&m, &bound(7));
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "pos"), Some(&vec![d(1), d(7)]));
    let inf = infer(&m, &bound(100));
    assert_eq!(codes(&inf), vec!["broadcast-incompatible"]);
}

/// The length of `range(n)[start:end:step]` by Python's `slice.indices` (numpy's and ONNX's
/// clamping), counted element by element.
fn python_slice_len(n: i64, start: i64, end: i64, step: i64) -> i64 {
    let adjust = |i: i64, lo: i64, hi: i64| {
        let i = if i < 0 { i.saturating_add(n) } else { i };
        i.clamp(lo, hi)
    };
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let (mut i, end) = (adjust(start, lo, hi), adjust(end, lo, hi));
    let mut count = 0;
    while (step > 0 && i < end) || (step < 0 && i > end) {
        count += 1;
        i += step;
    }
    count
}

/// A slice of a symbolic axis is a term (`x[:-1]` is `max(n-1,0)`), equal to the clamped length
/// for every size of the axis, including the ends exporters write for "to the end".
#[test]
fn slice_of_a_symbolic_axis_is_its_clamped_length() {
    let far = [i64::MAX, i64::MIN, i64::MIN + 1, i64::from(i32::MAX), -i64::from(i32::MAX)];
    let indices: Vec<i64> = (-4..=4).chain(far).collect();
    for &step in &[1i64, 2, 3, -1, -2] {
        for &start in &indices {
            for &end in &indices {
                let g = graph(
                    vec![node("Slice", &["x", "s", "e", "zero", "st"], &["y"])],
                    vec![f32_input("x", &[D::S("n")])],
                    vec![
                        ints_init("s", &[start]),
                        ints_init("e", &[end]),
                        ints_init("zero", &[0]),
                        ints_init("st", &[step]),
                    ],
                    &["y"],
                );
                let m = model(g);
                let inf = infer(&m, &Options::default());
                let y = &shape_of(&m, &inf, "y").expect("a shape")[0];
                assert!(!y.to_string().contains('?'), "x[{start}:{end}:{step}] is {y}");
                for n in 0..10 {
                    let at = y.bind(&[("n".to_string(), n)].into_iter().collect());
                    assert_eq!(
                        at,
                        d(python_slice_len(n, start, end, step)),
                        "x[{start}:{end}:{step}] = {y} at n = {n}"
                    );
                }
            }
        }
    }
}

/// Bounds read off shapes: XLM's `input_ids[:, -seq:]` (a start never positive that reaches
/// the axis's start) is the whole axis, and with an end of -1 one less; a start that is a size
/// counts from the start. Each equals Python's slice length at every size tried.
#[test]
fn slices_with_symbolic_bounds_clamp_as_python_does() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["sx"]),
            with_int(node("Gather", &["sx", "one_s"], &["n"]), "axis", 0),
            node("Neg", &["n"], &["neg_n"]),
            node("Unsqueeze", &["neg_n", "zero"], &["from"]),
            node("Slice", &["x", "from", "far", "one"], &["tail"]),
            node("Slice", &["x", "from", "minus1", "one"], &["tail1"]),
            node("Shape", &["y"], &["sy"]),
            node("Gather", &["sy", "one"], &["m"]),
            node("Slice", &["x", "m", "far", "one"], &["rest"]),
        ],
        vec![f32_input("x", &[D::S("b"), D::S("n")]), f32_input("y", &[D::S("b"), D::S("m")])],
        vec![
            ints_init("zero", &[0]),
            ints_init("one", &[1]),
            TensorProto { dims: vec![], ..ints_init("one_s", &[1]) },
            ints_init("minus1", &[-1]),
            ints_init("far", &[i64::MAX]),
        ],
        &["tail", "tail1", "rest"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "tail"), Some(&vec![Dim::sym("b"), Dim::sym("n")]));
    let tail1 = &shape_of(&m, &inf, "tail1").expect("a shape")[1];
    let rest = &shape_of(&m, &inf, "rest").expect("a shape")[1];
    for n in 0..8 {
        for mv in 0..8 {
            let env = [("n".to_string(), n), ("m".to_string(), mv)].into_iter().collect();
            assert_eq!(tail1.bind(&env), d(python_slice_len(n, -n, -1, 1)), "x[-n:-1] = {tail1} at n = {n}");
            assert_eq!(rest.bind(&env), d(python_slice_len(n, mv, i64::MAX, 1)), "x[m:] = {rest} at n={n}, m={mv}");
        }
    }
}

/// A bound whose sign depends on the size, on an axis it cannot pass: torch's dynamo export of
/// SEW slices a pooled axis `max(t, 0)` to `t` (`x[3:][:n-3]` here), and an axis to the size
/// it has, computed again (`ConstantOfShape([n-3])[:n-3]`). The bound is the whole axis at
/// every size, and as a start it leaves nothing. Each equals Python's slice length at every
/// size tried (the axis of `n - 3` exists from n = 3).
#[test]
fn a_bound_at_the_axis_size_is_the_whole_axis_whatever_its_sign() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["sx"]),
            node("Gather", &["sx", "zero"], &["n"]),
            node("Sub", &["n", "three"], &["n3"]),
            node("Slice", &["x", "three", "far", "zero"], &["t"]),
            node("Slice", &["t", "zero", "n3", "zero"], &["upto"]),
            node("Slice", &["t", "n3", "far", "zero"], &["from"]),
            node("ConstantOfShape", &["n3"], &["c"]),
            node("Slice", &["c", "zero", "n3", "zero"], &["c_upto"]),
        ],
        vec![f32_input("x", &[D::S("n")])],
        vec![ints_init("zero", &[0]), ints_init("three", &[3]), ints_init("far", &[i64::MAX])],
        &["upto", "from", "c_upto"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let [upto, from, c_upto] = ["upto", "from", "c_upto"].map(|k| shape_of(&m, &inf, k).expect("a shape")[0].clone());
    for n in 0..12 {
        let env = [("n".to_string(), n)].into_iter().collect();
        let t = python_slice_len(n, 3, i64::MAX, 1);
        assert_eq!(upto.bind(&env), d(python_slice_len(t, 0, n - 3, 1)), "x[3:][:n-3] = {upto} at n = {n}");
        assert_eq!(from.bind(&env), d(python_slice_len(t, n - 3, i64::MAX, 1)), "x[3:][n-3:] = {from} at n = {n}");
        if n >= 3 {
            assert_eq!(c_upto.bind(&env), d(python_slice_len(n - 3, 0, n - 3, 1)), "c[:n-3] = {c_upto} at n = {n}");
        }
    }
}

/// A bound that is a size less a constant is negative at a few sizes only: Funnel's decoder
/// slices `x[:, :seq-1]` on an axis `seq`. Worked out as if it never were negative, the
/// length is kept where it is Python's at each of those sizes (`x[:n-1]`, `x[1:n-1]`), and
/// unknown where it is not (`x[n-2:]` is 2 from n = 2, but 0 and 1 below). Every length
/// given equals Python's at every size tried.
#[test]
fn a_bound_negative_at_a_few_sizes_is_checked_there() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["sx"]),
            node("Gather", &["sx", "zero"], &["n"]),
            node("Sub", &["n", "one"], &["n1"]),
            node("Sub", &["n", "two"], &["n2"]),
            node("Slice", &["x", "zero", "n1", "zero"], &["upto"]),
            node("Slice", &["x", "one", "n1", "zero"], &["inner"]),
            node("Slice", &["x", "n2", "far", "zero"], &["last2"]),
        ],
        vec![f32_input("x", &[D::S("n")])],
        vec![ints_init("zero", &[0]), ints_init("one", &[1]), ints_init("two", &[2]), ints_init("far", &[i64::MAX])],
        &["upto", "inner", "last2"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let [upto, inner, last2] = ["upto", "inner", "last2"].map(|k| shape_of(&m, &inf, k).expect("a shape")[0].clone());
    assert_eq!(upto, Dim::parse("max(0,n-1)"));
    for n in 0..12 {
        let env = [("n".to_string(), n)].into_iter().collect();
        assert_eq!(upto.bind(&env), d(python_slice_len(n, 0, n - 1, 1)), "x[:n-1] = {upto} at n = {n}");
        assert_eq!(inner.bind(&env), d(python_slice_len(n, 1, n - 1, 1)), "x[1:n-1] = {inner} at n = {n}");
        // Not the guess `2` (it is 0 and 1 below n = 2): numpy's rule as a term.
        assert_eq!(last2.bind(&env), d(python_slice_len(n, n - 2, i64::MAX, 1)), "x[n-2:] = {last2} at n = {n}");
    }
}

/// A bound whose sign changes with the size, on a fixed axis or a symbolic one: MPT slices its
/// ALiBi bias of 64 positions from `64 - seq`, wav2vec2-conformer its relative positions from
/// `5000 - t`. The length is numpy's rule written as a term (a negative bound counts from the
/// end): each equals Python's slice length at every size up to 300.
#[test]
fn a_bound_of_either_sign_is_numpy_s_rule_as_a_term() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["sx"]),
            node("Slice", &["sx", "zero", "one"], &["n"]),
            node("Sub", &["c64", "n"], &["b1"]),
            node("Sub", &["n", "c70"], &["b2"]),
            node("Add", &["n", "n"], &["n2"]),
            node("Sub", &["n2", "c7"], &["b3"]),
            node("Sub", &["c5", "n"], &["b4"]),
            with_int(node("Concat", &["x", "x"], &["xx"]), "axis", 0),
            node("Slice", &["y", "b1", "far"], &["s1"]),
            node("Slice", &["y", "b2", "far"], &["s2"]),
            node("Slice", &["y", "zero", "b1"], &["s3"]),
            node("Slice", &["x", "b4", "far"], &["s4"]),
            node("Slice", &["x", "b4", "b3"], &["s5"]),
            node("Slice", &["y", "b4", "b1", "zero", "two"], &["s6"]),
            node("Slice", &["xx", "b4", "b1"], &["s7"]),
        ],
        vec![f32_input("x", &[D::S("n")]), f32_input("y", &[D::N(64)])],
        vec![
            ints_init("zero", &[0]),
            ints_init("one", &[1]),
            ints_init("two", &[2]),
            ints_init("c5", &[5]),
            ints_init("c7", &[7]),
            ints_init("c64", &[64]),
            ints_init("c70", &[70]),
            ints_init("far", &[i64::MAX]),
        ],
        &["s1", "s2", "s3", "s4", "s5", "s6", "s7"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    // (output, axis size, start, end, step) as functions of n.
    type Bound = fn(i64) -> i64;
    let far: Bound = |_| i64::MAX;
    let rows: [(&str, Bound, Bound, Bound, i64); 7] = [
        ("s1", |_| 64, |n| 64 - n, far, 1),
        ("s2", |_| 64, |n| n - 70, far, 1),
        ("s3", |_| 64, |_| 0, |n| 64 - n, 1),
        ("s4", |n| n, |n| 5 - n, far, 1),
        ("s5", |n| n, |n| 5 - n, |n| 2 * n - 7, 1),
        ("s6", |_| 64, |n| 5 - n, |n| 64 - n, 2),
        ("s7", |n| 2 * n, |n| 5 - n, |n| 64 - n, 1),
    ];
    for (name, size, start, end, step) in rows {
        let len = &shape_of(&m, &inf, name).expect("a shape")[0];
        assert!(!matches!(len, Dim::Term(t) if t.has_fresh()) && *len != Dim::Unknown, "{name} = {len}");
        for n in 0..=300 {
            let env = [("n".to_string(), n)].into_iter().collect();
            let python = python_slice_len(size(n), start(n), end(n), step);
            assert_eq!(len.bind(&env), d(python), "{name} = {len} at n = {n}");
        }
    }
}

/// Range over sizes: XLNet's `arange(seq, -seq, -1)` has 2*seq elements, and `arange(1, seq)`
/// has none at seq 0 (not -1). Each equals Python's `len(range(..))` at every size tried.
#[test]
fn ranges_over_sizes_count_as_python_does() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["sx"]),
            with_int(node("Gather", &["sx", "zero"], &["n"]), "axis", 0),
            node("Neg", &["n"], &["neg_n"]),
            node("Range", &["n", "neg_n", "minus1"], &["down"]),
            node("Range", &["one", "n", "one"], &["up"]),
        ],
        vec![f32_input("x", &[D::S("n")])],
        vec![
            TensorProto { dims: vec![], ..ints_init("zero", &[0]) },
            TensorProto { dims: vec![], ..ints_init("one", &[1]) },
            TensorProto { dims: vec![], ..ints_init("minus1", &[-1]) },
        ],
        &["down", "up"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "down"), Some(&vec![Dim::parse("n*2")]));
    let up = &shape_of(&m, &inf, "up").expect("a shape")[0];
    for n in 0..8 {
        let python = (1..n).count() as i64;
        assert_eq!(up.bind(&[("n".to_string(), n)].into_iter().collect()), d(python), "arange(1, n) = {up} at n = {n}");
    }
}

/// A ceil_mode pooling over a symbolic axis (Funnel's [2, 1] by [2, 1]) is `ceil(span/s)+1`
/// where the last window cannot start past the input. The expected sizes are onnxruntime 1.32's
/// MaxPool outputs (kernel, stride, pads, from the first length that fits).
#[test]
fn ceil_mode_pools_over_a_symbol_are_terms() {
    // (kernel, stride, pad begin, pad end, first length, sizes from it on)
    type Row = ([i64; 4], i64, &'static [i64]);
    let rows: [Row; 4] = [
        ([2, 2, 0, 0], 2, &[1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]),
        ([3, 2, 1, 1], 1, &[1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7]),
        ([3, 2, 0, 0], 3, &[1, 2, 2, 3, 3, 4, 4, 5, 5, 6]),
        ([4, 3, 1, 0], 3, &[1, 2, 2, 2, 3, 3, 3, 4, 4, 4]),
    ];
    for ([k, st, pb, pe], first, want) in rows {
        let mut n = node("MaxPool", &["x"], &["y"]);
        for (name, v) in [("kernel_shape", vec![k]), ("strides", vec![st]), ("pads", vec![pb, pe])] {
            n.attribute.push(AttributeProto {
                name: Some(name.into()),
                r#type: Some(attribute_proto::AttributeType::Ints as i32),
                ints: v,
                ..Default::default()
            });
        }
        let g = graph(
            vec![with_int(n, "ceil_mode", 1)],
            vec![f32_input("x", &[D::N(1), D::N(1), D::S("L")])],
            vec![],
            &["y"],
        );
        let m = model(g);
        let inf = infer(&m, &Options::default());
        let y = &shape_of(&m, &inf, "y").expect("a shape")[2];
        for (l, want) in (first..).zip(want) {
            assert_eq!(
                y.bind(&[("L".to_string(), l)].into_iter().collect()),
                d(*want),
                "k={k} s={st} pads={pb},{pe}: {y} at L={l}"
            );
        }
    }
}

/// wav2vec2's positional convolution: `conv(x)[:, :, :-1]` added to a tensor of size `n-1`.
/// The slice is `max(n-1,0)`, which is `n-1` where `n-1` sizes a tensor: the sum has that size,
/// with no side condition.
#[test]
fn a_clamped_slice_beside_its_size_is_that_size() {
    let g = graph(
        vec![node("Slice", &["x", "zero", "minus1", "one"], &["a"]), node("Add", &["a", "w"], &["y"])],
        vec![f32_input("x", &[D::S("b"), D::S("n")]), f32_input("w", &[D::S("b"), D::S("n - 1")])],
        vec![ints_init("zero", &[0]), ints_init("minus1", &[-1]), ints_init("one", &[1])],
        &["y"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "a"), Some(&vec![Dim::sym("b"), Dim::parse("max(n-1,0)")]));
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![Dim::sym("b"), Dim::parse("n-1")]));
    assert!(inf.constraints.is_empty(), "{:?}", inf.constraints);
}

/// BLOOM folds heads into the batch: `[b, 4, s, 8]` to `[b*4, -1, 8]`, the `b*4` computed from
/// the input's shape. The `-1` is `s` (the divisor is symbolic, and divides). And a size
/// computed with `Min` (torch's `min(seq, 64)` in the dynamo export of GPT-Neo) is a `min` term,
/// one divided by a size (Segformer's dynamo export) a quotient, and a square (DINOv2's) a product.
#[test]
fn a_symbolic_divisor_and_a_min_keep_their_sizes() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["s"]),
            with_int(node("Gather", &["s", "zero"], &["b"]), "axis", 0),
            node("Mul", &["b", "four"], &["b4"]),
            node("Unsqueeze", &["b4", "axis0"], &["b4v"]),
            with_int(node("Concat", &["b4v", "minus1", "eight"], &["target"]), "axis", 0),
            node("Reshape", &["x", "target"], &["y"]),
            with_int(node("Gather", &["s", "two"], &["seq"]), "axis", 0),
            node("Min", &["seq", "sixty_four"], &["m"]),
            node("Unsqueeze", &["m", "axis0"], &["mv"]),
            node("ConstantOfShape", &["mv"], &["pos"]),
            // torch's dynamo export divides sizes by sizes: b*4*s // (b*4) is s.
            node("Mul", &["b4", "seq"], &["b4s"]),
            node("Div", &["b4s", "b4"], &["q"]),
            node("Unsqueeze", &["q", "axis0"], &["qv"]),
            node("ConstantOfShape", &["qv"], &["z"]),
            // And squares a patch count with Pow.
            node("Pow", &["seq", "two"], &["sq"]),
            node("Unsqueeze", &["sq", "axis0"], &["sqv"]),
            node("ConstantOfShape", &["sqv"], &["area"]),
        ],
        vec![f32_input("x", &[D::S("b"), D::N(4), D::S("s"), D::N(8)])],
        vec![
            TensorProto { dims: vec![], ..ints_init("zero", &[0]) },
            TensorProto { dims: vec![], ..ints_init("two", &[2]) },
            ints_init("axis0", &[0]),
            ints_init("minus1", &[-1]),
            ints_init("eight", &[8]),
            TensorProto { dims: vec![], ..ints_init("four", &[4]) },
            TensorProto { dims: vec![], ..ints_init("sixty_four", &[64]) },
        ],
        &["y", "pos", "z", "area"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![Dim::parse("b*4"), Dim::sym("s"), d(8)]));
    assert_eq!(shape_of(&m, &inf, "pos"), Some(&vec![Dim::parse("min(64,s)")]));
    assert_eq!(shape_of(&m, &inf, "z"), Some(&vec![Dim::sym("s")]));
    assert_eq!(shape_of(&m, &inf, "area"), Some(&vec![Dim::parse("s*s")]));
    assert!(inf.constraints.is_empty(), "{:?}", inf.constraints);
}

/// Expand carries a small tensor's contents, so a shape built through it (as `expand`'s own
/// rewrite of `Mul(ConstantOfShape, -1)` does) still gives a Reshape an exact shape.
#[test]
fn expand_carries_shape_tensor_contents() {
    let g = graph(
        vec![node("Expand", &["four", "two"], &["target"]), node("Reshape", &["x", "target"], &["y"])],
        vec![f32_input("x", &[D::N(16)])],
        vec![ints_init("four", &[4]), ints_init("two", &[2])],
        &["y"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![d(4), d(4)]));
}

/// A function body reads its own opset imports: onnxruntime refuses a body calling `my.g.G`
/// when the function imports only the default domain, though the model imports `my.g` ("No
/// opset registered for domain my.g in function F"), and runs it when the function imports it.
#[test]
fn a_function_body_needs_its_own_imports() {
    use onnx_bcast::io::proto::FunctionProto;
    let opset =
        |d: &str| OperatorSetIdProto { domain: Some(d.into()), version: Some(if d.is_empty() { 17 } else { 1 }) };
    let function = |domain: &str, name: &str, body: NodeProto, imports: &[&str]| FunctionProto {
        name: Some(name.into()),
        domain: Some(domain.into()),
        input: vec!["x".into()],
        output: vec!["z".into()],
        node: vec![body],
        opset_import: imports.iter().map(|d| opset(d)).collect(),
        ..Default::default()
    };
    let call = |domain: &str, op: &str, ins: &[&str], outs: &[&str]| NodeProto {
        domain: Some(domain.into()),
        ..node(op, ins, outs)
    };
    let codes_with = |f_imports: &[&str]| {
        let g = function("my.g", "G", node("Relu", &["x"], &["z"]), &[""]);
        let f = function("my.f", "F", call("my.g", "G", &["x"], &["z"]), f_imports);
        let m = ModelProto {
            ir_version: Some(8),
            opset_import: vec![opset(""), opset("my.f"), opset("my.g")],
            graph: Some(graph(
                vec![call("my.f", "F", &["a"], &["y"])],
                vec![f32_input("a", &[D::N(2)])],
                vec![],
                &["y"],
            )),
            functions: vec![f, g],
            ..Default::default()
        };
        let m = onnx_bcast::io::decode(&m.encode_to_vec(), Path::new("f.onnx"), None).expect("decodes");
        codes(&infer(&m, &Options::default())).into_iter().map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(codes_with(&[""]), ["domain-not-imported"]);
    assert!(codes_with(&["", "my.g"]).is_empty());
}

#[test]
fn model_local_functions_are_inferred_through_their_bodies() {
    use onnx_bcast::io::proto::FunctionProto;
    // local.AddT(x, y) = Transpose<perm = @perm>(Add(x, y)), called with perm = [0, 2, 1] and
    // without it (Transpose's default reverses the axes).
    let mut transpose = node("Transpose", &["t"], &["z"]);
    transpose.attribute.push(AttributeProto {
        name: Some("perm".into()),
        r#type: Some(attribute_proto::AttributeType::Ints as i32),
        ref_attr_name: Some("perm".into()),
        ..Default::default()
    });
    let f = FunctionProto {
        name: Some("AddT".into()),
        domain: Some("local".into()),
        input: vec!["x".into(), "y".into()],
        output: vec!["z".into()],
        attribute: vec!["perm".into()],
        node: vec![node("Add", &["x", "y"], &["t"]), transpose],
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(17) }],
        ..Default::default()
    };
    let mut call = node("AddT", &["a", "b"], &["out"]);
    call.domain = Some("local".into());
    call.attribute.push(AttributeProto {
        name: Some("perm".into()),
        r#type: Some(attribute_proto::AttributeType::Ints as i32),
        ints: vec![0, 2, 1],
        ..Default::default()
    });
    let mut plain = node("AddT", &["a", "b"], &["out2"]);
    plain.domain = Some("local".into());
    let g = graph(
        vec![call, plain],
        vec![f32_input("a", &[D::S("n"), D::N(2), D::N(3)]), f32_input("b", &[D::N(3)])],
        vec![],
        &["out", "out2"],
    );
    let m = ModelProto {
        ir_version: Some(8),
        opset_import: vec![
            OperatorSetIdProto { domain: Some(String::new()), version: Some(17) },
            OperatorSetIdProto { domain: Some("local".into()), version: Some(1) },
        ],
        graph: Some(g),
        functions: vec![f],
        ..Default::default()
    };
    let bytes = m.encode_to_vec();
    let m = onnx_bcast::io::decode(&bytes, Path::new("f.onnx"), None).expect("decodes");
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "out"), Some(&vec![Dim::sym("n"), d(3), d(2)]));
    assert_eq!(shape_of(&m, &inf, "out2"), Some(&vec![d(3), d(2), Dim::sym("n")]));
    // The functions are written back as they were read.
    assert_eq!(onnx_bcast::io::encode(&m), bytes);
}

#[test]
fn concat_pins_a_symbol_to_the_size_it_meets() {
    // Concat along axis 0 needs equal sizes at axis 1: n must be 5, and then also 6.
    let axis0 = |n: NodeProto| with_int(n, "axis", 0);
    let g = graph(
        vec![axis0(node("Concat", &["x", "y"], &["a"])), axis0(node("Concat", &["x", "z"], &["b"]))],
        vec![
            f32_input("x", &[D::N(2), D::S("n")]),
            f32_input("y", &[D::N(3), D::N(5)]),
            f32_input("z", &[D::N(1), D::N(6)]),
        ],
        vec![],
        &["a", "b"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert_eq!(shape_of(&m, &inf, "a"), Some(&vec![d(5), d(5)]));
    assert_eq!(codes(&inf), vec!["symbol-contradiction"]);
}

/// TopK's K is [1]: a K declared [n] holds only where n is 1, which the contract says.
#[test]
fn a_symbolic_topk_k_records_its_condition() {
    let m = model_at(
        graph(
            vec![node("TopK", &["x", "k"], &["v", "i"])],
            vec![f32_input("x", &[D::N(5)]), input("k", tensor_proto::DataType::Int64, &[D::S("n")])],
            vec![],
            &["v"],
        ),
        11,
    );
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let conditions: Vec<(String, &str)> =
        inf.constraints.iter().map(|c| (c.assumption.to_string(), c.op_type.as_str())).collect();
    assert_eq!(conditions, vec![("n = 1".to_string(), "TopK")]);
}

/// Axes that must match exactly and meet two different symbols (or a symbol and a size) hold
/// only when those sizes are equal; the result names one of them, so the other's equality is
/// a side condition. Found on YOLOv8's head, whose Concat meets `(a)*2` and the backbone's
/// `floor(...)+1`: equal for some heights only, and before this no condition was recorded.
#[test]
fn exact_axes_meeting_two_symbols_record_that_they_are_equal() {
    let conditions = |inf: &Inference| -> Vec<(String, String, usize)> {
        inf.constraints.iter().map(|c| (c.assumption.to_string(), c.op_type.clone(), c.axis)).collect()
    };
    // Concat along 0: axis 1 meets `a` and `b`.
    let concat = with_int(node("Concat", &["x", "y"], &["c"]), "axis", 0);
    let m = model(graph(
        vec![concat],
        vec![f32_input("x", &[D::N(2), D::S("a")]), f32_input("y", &[D::N(3), D::S("b")])],
        vec![],
        &["c"],
    ));
    let inf = infer(&m, &Options::default());
    assert_eq!(shape_of(&m, &inf, "c"), Some(&vec![d(5), Dim::sym("a")]));
    assert_eq!(conditions(&inf), vec![("a = b".to_string(), "Concat".to_string(), 1)]);
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);

    // MatMul: the inner dims `k` and `j`.
    let m = model(graph(
        vec![node("MatMul", &["p", "q"], &["r"])],
        vec![f32_input("p", &[D::S("m"), D::S("k")]), f32_input("q", &[D::S("j"), D::N(4)])],
        vec![],
        &["r"],
    ));
    let inf = infer(&m, &Options::default());
    assert_eq!(shape_of(&m, &inf, "r"), Some(&vec![Dim::sym("m"), d(4)]));
    // (The inner dims are no axis of the output; the condition names the node.)
    let matmul: Vec<_> = conditions(&inf).into_iter().map(|(c, op, _)| (c, op)).collect();
    assert_eq!(matmul, vec![("k = j".to_string(), "MatMul".to_string())]);

    // Sum before opset 8 takes equal shapes only: `n` against 5 and `n` against `t`.
    let m = model_at(
        graph(
            vec![node("Sum", &["u", "v"], &["w"]), node("Sum", &["u", "z"], &["w2"])],
            vec![f32_input("u", &[D::S("n")]), f32_input("v", &[D::N(5)]), f32_input("z", &[D::S("t")])],
            vec![],
            &["w", "w2"],
        ),
        6,
    );
    let inf = infer(&m, &Options::default());
    assert_eq!(shape_of(&m, &inf, "w"), Some(&vec![d(5)]));
    assert_eq!(shape_of(&m, &inf, "w2"), Some(&vec![Dim::sym("n")]));
    assert_eq!(
        conditions(&inf),
        vec![("n = 5".to_string(), "Sum".to_string(), 0), ("n = t".to_string(), "Sum".to_string(), 0)]
    );
}

/// Symbols that a condition makes equal are one size: `a = b` (a Concat) with `a = 5` and
/// `b = 6` (two more) holds for no input, and is reported as a contradiction naming both.
#[test]
fn symbols_made_equal_share_their_sizes() {
    let axis0 = |n: NodeProto| with_int(n, "axis", 0);
    let inputs = || {
        vec![
            f32_input("x", &[D::N(2), D::S("a")]),
            f32_input("y", &[D::N(3), D::S("b")]),
            f32_input("z", &[D::N(1), D::N(5)]),
            f32_input("w", &[D::N(1), D::N(6)]),
        ]
    };
    let nodes = |w: &str| {
        vec![
            axis0(node("Concat", &["x", "y"], &["p"])),
            axis0(node("Concat", &["x", "z"], &["q"])),
            axis0(node("Concat", &["y", w], &["r"])),
        ]
    };
    let m = model(graph(nodes("w"), inputs(), vec![], &["p", "q", "r"]));
    let inf = infer(&m, &Options::default());
    assert_eq!(codes(&inf), vec!["symbol-contradiction"]);
    let msg = &inf.diagnostics[0].message;
    assert!(msg.starts_with("symbols 'a' and 'b', which side conditions make equal, must be 5 for"), "{msg}");
    assert_eq!(inf.diagnostics[0].node.as_deref(), Some("Concat_r"));
    // With `b = 5` instead the three conditions agree.
    let m = model(graph(nodes("z"), inputs(), vec![], &["p", "q", "r"]));
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(inf.constraints.len(), 3);
}

/// A tensor of no elements may carry no data field at all (paddle2onnx writes its `[]`
/// shape constants so); its contents are known, empty. Here a size goes through Reshape to
/// a scalar by such a constant, as in PP-OCR's recognizer, whose Reshape target was then
/// `[?1, ?2, ?3, ?4]` for `[0, 1, x, 120]`.
#[test]
fn an_empty_constant_without_data_is_known_to_be_empty() {
    let mut empty = ints_init("empty", &[]);
    empty.int64_data.clear();
    empty.raw_data = None;
    let nodes = vec![
        node("Shape", &["x"], &["s"]),
        node("Slice", &["s", "three", "four"], &["sl"]),
        node("Squeeze", &["sl", "zero"], &["sq"]),
        node("Reshape", &["sq", "empty"], &["scalar"]),
        node("Unsqueeze", &["scalar", "zero"], &["us"]),
        with_int(node("Concat", &["zero", "one", "us", "c120"], &["target"]), "axis", 0),
        node("Reshape", &["y", "target"], &["out"]),
    ];
    let m = model(graph(
        nodes,
        vec![
            f32_input("x", &[D::S("n"), D::N(120), D::N(1), D::S("w")]),
            f32_input("y", &[D::S("n"), D::S("w"), D::N(120)]),
        ],
        vec![
            empty,
            ints_init("three", &[3]),
            ints_init("four", &[4]),
            ints_init("zero", &[0]),
            ints_init("one", &[1]),
            ints_init("c120", &[120]),
        ],
        &["out"],
    ));
    let inf = infer(&m, &Options::default());
    assert_eq!(shape_of(&m, &inf, "scalar"), Some(&vec![]));
    assert_eq!(shape_of(&m, &inf, "out"), Some(&vec![Dim::sym("n"), d(1), Dim::sym("w"), d(120)]));
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
}

/// Einsum stretches a label of size 1 to the other inputs' size for it, as numpy and
/// onnxruntime do: `ij,ij->ij` over [1, 3] and [2, 3] gives [2, 3] in both (checked by hand
/// with numpy 2.4 and onnxruntime 1.32). With `n` for the 2 the output is `[n, 3]`; it was
/// `[1, 3]`, the first size met.
#[test]
fn einsum_stretches_a_label_of_size_one() {
    let e = with_str(node("Einsum", &["a", "b"], &["c"]), "equation", "ij,ij->ij");
    let m = model(graph(
        vec![e],
        vec![f32_input("a", &[D::N(1), D::N(3)]), f32_input("b", &[D::S("n"), D::N(3)])],
        vec![],
        &["c"],
    ));
    let inf = infer(&m, &Options::default());
    assert_eq!(shape_of(&m, &inf, "c"), Some(&vec![Dim::sym("n"), d(3)]));
    assert!(inf.diagnostics.is_empty() && inf.constraints.is_empty(), "{:?} {:?}", inf.diagnostics, inf.constraints);
}

/// A float scalar initializer.
fn f32_scalar(name: &str, v: f32) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        data_type: Some(tensor_proto::DataType::Float as i32),
        float_data: vec![v],
        ..Default::default()
    }
}

/// YOLO-style anchors: a grid `Range(0.0, float(w), 1.0) + 0.5` over a feature map's width,
/// added to that feature map. The width, cast to float, stays the symbol it was: the grid is
/// `[w]` and the Add needs no side condition (it used to get an unknown size and an "equal
/// or 1" condition against `w`). float(w) / float(2) is w/2, not `floor(w/2)`.
#[test]
fn a_range_over_a_size_cast_to_float_keeps_the_size() {
    let float = tensor_proto::DataType::Float as i64;
    let to_float = with_int(node("Cast", &["wi"], &["wf"]), "to", float);
    let two_to_float = with_int(node("Cast", &["two_i"], &["two_f"]), "to", float);
    let g = graph(
        vec![
            node("Shape", &["x"], &["s"]),
            node("Gather", &["s", "three"], &["wi"]),
            to_float,
            node("Range", &["zero", "wf", "one"], &["grid"]),
            node("Add", &["grid", "centre"], &["cells"]),
            node("Add", &["x", "cells"], &["y"]),
            two_to_float,
            node("Div", &["wf", "two_f"], &["ratio"]),
            node("Range", &["zero", "ratio", "one"], &["r"]),
        ],
        vec![f32_input("x", &[D::S("batch"), D::N(4), D::S("h"), D::S("w")])],
        vec![
            ints_init("three", &[3]),
            f32_scalar("zero", 0.0),
            f32_scalar("one", 1.0),
            f32_scalar("centre", 0.5),
            TensorProto { dims: vec![], ..ints_init("two_i", &[2]) },
        ],
        &["y", "r"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "grid"), Some(&vec![Dim::sym("w")]));
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![Dim::sym("batch"), d(4), Dim::sym("h"), Dim::sym("w")]));
    assert!(inf.constraints.is_empty(), "{:?}", inf.constraints);
    // w / 2 in floats is not known to be whole: Range over it gets no size (floor(w/2)
    // would be wrong for every odd w), only a fresh name for an unknown one.
    let r = shape_of(&m, &inf, "r").expect("ranked");
    assert!(matches!(&r[..], [Dim::Term(t)] if t.has_fresh()), "{r:?}");
}

/// Sizes through float arithmetic, as TorchScript traces `math.ceil(h / 2) * 2` on a size
/// (MobileViT pads its feature maps so): `Cast(Mul(Ceil(Div(Cast(h), 2.0)), 2.0))`. Each
/// result is the size's exact arithmetic, checked against integer arithmetic at h = 0 to 40;
/// onnxruntime 1.32 gives the same sizes on this model at h = 1 to 9. Float16 holds whole
/// numbers only up to 2048, so its arithmetic stays unknown.
#[test]
fn sizes_through_float_arithmetic_are_exact_terms() {
    use tensor_proto::DataType::{Float, Float16, Int64};
    let cast =
        |from: &str, to: &str, ty: tensor_proto::DataType| with_int(node("Cast", &[from], &[to]), "to", ty as i64);
    let f16 = |name: &str, v: f32| TensorProto {
        data_type: Some(Float16 as i32),
        int32_data: vec![i32::from(half::f16::from_f32(v).to_bits())],
        float_data: vec![],
        ..f32_scalar(name, v)
    };
    // Each integer size `k` becomes the shape of a tensor `k_shape`.
    let mut nodes = vec![
        node("Shape", &["x"], &["s"]),
        node("Gather", &["s", "two_i"], &["h"]),
        cast("h", "hf", Float),
        node("Div", &["hf", "two"], &["half"]),
        node("Ceil", &["half"], &["half_up"]),
        node("Mul", &["half_up", "two"], &["padded_f"]),
        cast("padded_f", "padded", Int64),
        node("Mul", &["hf", "point_five"], &["half2"]),
        node("Floor", &["half2"], &["half_down_f"]),
        cast("half_down_f", "half_down", Int64),
        node("Sub", &["hf", "one"], &["hm1"]),
        node("Div", &["hm1", "two"], &["half_hm1"]),
        node("Mul", &["hm1", "quarter"], &["quarter_hm1"]),
        node("Add", &["half_hm1", "quarter_hm1"], &["three_quarters"]),
        node("Ceil", &["three_quarters"], &["thirds_f"]),
        cast("thirds_f", "thirds", Int64),
        cast("h", "hh", Float16),
        node("Div", &["hh", "two_h"], &["half_h"]),
        node("Ceil", &["half_h"], &["half_h_up"]),
        cast("half_h_up", "half16", Int64),
    ];
    let sizes = ["padded", "half_down", "thirds", "half16"];
    for k in sizes {
        nodes.push(node("Unsqueeze", &[k, "zero_i"], &[&format!("{k}_1")]));
        nodes.push(node("ConstantOfShape", &[&format!("{k}_1")], &[&format!("{k}_shape")]));
    }
    let outputs: Vec<String> = sizes.iter().map(|k| format!("{k}_shape")).collect();
    let g = graph(
        nodes,
        vec![f32_input("x", &[D::N(1), D::N(3), D::S("h"), D::N(4)])],
        vec![
            TensorProto { dims: vec![], ..ints_init("two_i", &[2]) },
            ints_init("zero_i", &[0]),
            f32_scalar("two", 2.0),
            f32_scalar("point_five", 0.5),
            f32_scalar("one", 1.0),
            f32_scalar("quarter", 0.25),
            f16("two_h", 2.0),
        ],
        &outputs.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    type Size = fn(i64) -> i64;
    let expected: [(&str, Size); 3] = [
        ("padded", |h| (h + 1) / 2 * 2),
        ("half_down", |h| h / 2),
        // ceil(3 (h - 1) / 4), h - 1 negative at h = 0.
        ("thirds", |h| (3 * (h - 1)).div_euclid(4) + i64::from((3 * (h - 1)).rem_euclid(4) != 0)),
    ];
    for (k, f) in expected {
        let shape = shape_of(&m, &inf, &format!("{k}_shape")).expect("ranked");
        let [dim @ Dim::Term(_)] = &shape[..] else { panic!("{k}: {shape:?}") };
        for h in 0..=40 {
            let at = dim.bind(&[("h".to_string(), h)].into());
            assert_eq!(at, d(f(h)), "{k} = {dim} at h = {h}");
        }
    }
    let half16 = shape_of(&m, &inf, "half16_shape").expect("ranked");
    assert!(matches!(&half16[..], [Dim::Term(t)] if t.has_fresh()), "{half16:?}");
}

/// Float size arithmetic rounds: `(h / 7 + 8) * 7` is 61.99.. in float32 at h = 6, so its
/// Floor is 61, not the 62 of exact arithmetic, and `(h / 1.5 + 1 - 5) * h * 1.5` likewise at
/// h = 7 (both found by a differential against onnxruntime, scripts/float_sizes_ort.py). Every
/// size inference gives must be float32's at every h tried; a division by a power of two is
/// exact, so MobileViT's `ceil(h / 2) * 2` keeps its term.
#[test]
fn float_size_arithmetic_is_named_only_where_float32_is_exact() {
    type Row = (&'static str, &'static [(&'static str, f32)], fn(f32) -> f32, bool);
    let rows: [Row; 4] = [
        ("(h/7+8)*7", &[("Div", 7.0), ("Add", 8.0), ("Mul", 7.0)], |h| (h / 7.0 + 8.0) * 7.0, false),
        (
            "((h/1.5+1-5)*h)*1.5",
            &[("Div", 1.5), ("Add", 1.0), ("Sub", 5.0), ("MulH", 0.0), ("Mul", 1.5)],
            |h| (h / 1.5 + 1.0 - 5.0) * h * 1.5,
            false,
        ),
        ("ceil(h/2)*2", &[("Div", 2.0), ("Ceil", 0.0), ("Mul", 2.0)], |h| (h / 2.0).ceil() * 2.0, true),
        ("ceil(h/7)", &[("Div", 7.0), ("Ceil", 0.0)], |h| (h / 7.0).ceil(), true),
    ];
    for (what, steps, f32_chain, named) in rows {
        let mut nodes = vec![
            node("Shape", &["x"], &["s"]),
            node("Gather", &["s", "one"], &["hi"]),
            with_int(node("Cast", &["hi"], &["v0"]), "to", tensor_proto::DataType::Float as i64),
        ];
        let mut inits = vec![TensorProto { dims: vec![], ..ints_init("one", &[1]) }, ints_init("zero", &[0])];
        for (k, (op, c)) in steps.iter().enumerate() {
            let (cur, out, cst) = (format!("v{k}"), format!("v{}", k + 1), format!("c{k}"));
            match *op {
                "Ceil" => nodes.push(node("Ceil", &[&cur], &[&out])),
                "MulH" => nodes.push(node("Mul", &[&cur, "v0"], &[&out])),
                _ => {
                    nodes.push(node(op, &[&cur, &cst], &[&out]));
                    inits.push(f32_scalar(&cst, *c));
                }
            }
        }
        let last = format!("v{}", steps.len());
        nodes.push(node("Floor", &[&last], &["f"]));
        nodes.push(with_int(node("Cast", &["f"], &["n"]), "to", tensor_proto::DataType::Int64 as i64));
        nodes.push(node("Unsqueeze", &["n", "zero"], &["n1"]));
        nodes.push(node("ConstantOfShape", &["n1"], &["y"]));
        let m = model(graph(nodes, vec![f32_input("x", &[D::N(1), D::S("h")])], inits, &["y"]));
        let inf = infer(&m, &Options::default());
        let dim = shape_of(&m, &inf, "y").expect("a shape")[0].clone();
        let is_named = matches!(&dim, Dim::Term(t) if !t.has_fresh());
        assert_eq!(is_named, named, "{what}: {dim}");
        for h in 0..=40 {
            let want = f32_chain(h as f32).floor() as i64;
            if is_named && want >= 0 {
                assert_eq!(dim.bind(&[("h".to_string(), h)].into()), d(want), "{what} = {dim} at h = {h}");
            }
        }
    }
}

/// Conv and ConvTranspose nodes that onnxruntime refuses were inferred as if they ran: input
/// channels other than the weight's times the group, a group that is not positive or does not
/// divide the channels, negative ConvTranspose pads or output_padding, an output_padding not
/// below the stride. Each row gives the output shape onnxruntime 1.32 gives when run, or our
/// message where it refuses the node (its own words in the comment).
#[test]
fn convolutions_check_channels_groups_and_padding_as_onnxruntime_does() {
    use crate::build::{self, with_int, with_ints};
    type Row = (
        &'static str,
        i64,
        &'static [(&'static str, &'static [i64])],
        [i64; 3],
        [i64; 3],
        Result<[i64; 3], &'static str>,
    );
    let rows: &[Row] = &[
        // "Input channels C is not equal to kernel channels * group. C: 4 kernel channels: 2 group: 1"
        ("Conv", 1, &[], [1, 4, 5], [2, 2, 3], Err("Conv: the input has 4 channels, the weight 2 x group 1")),
        // "Output channels M is not divisible by group. M: 3 group: 2"
        ("Conv", 2, &[], [1, 4, 5], [3, 2, 3], Err("Conv: group 2 does not divide the 3 output channels")),
        // "Input channels C is not equal to kernel channels * group. C: 4 kernel channels: 2 group: 0"
        ("Conv", 0, &[], [1, 4, 5], [3, 2, 3], Err("Conv: group 0 is not positive")),
        ("Conv", 2, &[], [1, 4, 5], [4, 2, 3], Ok([1, 4, 3])),
        // "filter number not equal to input channel number. filter_number: 2 num_input_channels: 3"
        (
            "ConvTranspose",
            1,
            &[],
            [1, 3, 5],
            [2, 2, 3],
            Err("ConvTranspose: the input has 3 channels, the weight 2 filters"),
        ),
        ("ConvTranspose", 2, &[], [1, 4, 5], [4, 2, 3], Ok([1, 4, 7])),
        // "Input channels C must be divisible by group for ConvTranspose. C=4 group=3."
        (
            "ConvTranspose",
            3,
            &[],
            [1, 4, 5],
            [4, 2, 3],
            Err("ConvTranspose: group 3 does not divide the 4 input channels"),
        ),
        // "Attribute pads must not contain negative values"
        (
            "ConvTranspose",
            1,
            &[("pads", &[-1, -1])],
            [1, 2, 5],
            [2, 2, 3],
            Err("pads and output_padding must be 0 or more"),
        ),
        // "Attribute output_padding must not contain negative values"
        ("ConvTranspose", 1, &[("strides", &[2]), ("output_padding", &[-1])], [1, 2, 5], [2, 2, 3], Err("0 or more")),
        // "output_padding[0] (2) must be less than max(stride, dilation) (2) for spatial dimension 0."
        ("ConvTranspose", 1, &[("strides", &[2]), ("output_padding", &[2])], [1, 2, 5], [2, 2, 3], Err("not below")),
        ("ConvTranspose", 1, &[("strides", &[2]), ("output_padding", &[1])], [1, 2, 5], [2, 2, 3], Ok([1, 2, 12])),
    ];
    for (op, group, attrs, x, w, want) in rows {
        let mut n = with_int(build::node("c", op, &["x", "w"], &["y"]), "group", *group);
        for (name, v) in *attrs {
            n = with_ints(n, name, v);
        }
        let m = build::load(&build::model(18, vec![build::input("x", x), build::input("w", w)], vec![n], &["y"]));
        let inf = infer(&m, &Options::default());
        let messages: Vec<&str> = inf.diagnostics.iter().map(|d| d.message.as_str()).collect();
        match want {
            Ok(y) => {
                assert!(messages.is_empty(), "{op} {x:?} {w:?}: {messages:?}");
                assert_eq!(shape_of(&m, &inf, "y"), Some(&y.map(d).to_vec()), "{op} {x:?} {w:?}");
            }
            Err(e) => assert!(messages.iter().any(|m| m.contains(e)), "{op} {x:?} {w:?}: {messages:?}"),
        }
    }
    // Symbolic channels must be the weight's: a condition, not an error.
    let n = build::node("c", "Conv", &["x", "w"], &["y"]);
    let m = build::model(
        18,
        vec![build::input("x", &[build::D::N(1), build::D::S("c"), build::D::N(5)]), build::input("w", &[2, 2, 3])],
        vec![n],
        &["y"],
    );
    let inf = infer(&build::load(&m), &Options::default());
    assert!(
        inf.diagnostics.is_empty() && inf.contract.accepts("c", 2) && !inf.contract.accepts("c", 4),
        "{:?}",
        inf.contract
    );
}

/// Negative pads crop an axis: over a symbolic size `n` the output `n-6` is a size only for n of
/// 6 or more (onnxruntime 1.32 runs [1, 8] to [1, 2] and refuses [1, 4]), which inference now
/// assumes, so the contract says it; it said nothing.
#[test]
fn negative_pads_over_a_symbol_are_a_condition() {
    let pads = ints_init("p", &[0, -3, 0, -3]);
    let g =
        graph(vec![node("Pad", &["x", "p"], &["y"])], vec![f32_input("x", &[D::N(1), D::S("n")])], vec![pads], &["y"]);
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert!(inf.contract.accepts("n", 6) && !inf.contract.accepts("n", 5), "{:?}", inf.contract);
}

/// STFT's frame must fit in the signal: onnxruntime 1.32 runs a window of 400 over a signal of
/// 400 samples and refuses 399 ("window_size <= signal_size was false"). Over a symbolic length
/// that is a condition, and none where padding makes every length fit (the whisper and NeMo
/// feature extractors of onnx-asr pad by the window first); the rule wanted a 3-D signal, and
/// both models were refused.
#[test]
fn an_stft_frame_must_fit_in_its_signal() {
    let stft = |pad: bool| {
        let x = vec![f32_input("x", &[D::N(1), D::S("n")]), f32_input("w", &[D::N(400)])];
        let mut nodes = vec![node("STFT", &["s", "st", "w"], &["y"])];
        let mut inits = vec![ints_init("st", &[160])];
        if pad {
            nodes.insert(0, node("Pad", &["x", "p"], &["s"]));
            inits.push(ints_init("p", &[0, 200, 0, 200]));
        } else {
            nodes[0].input[0] = "x".into();
        }
        let m = model(graph(nodes, x, inits, &["y"]));
        let inf = infer(&m, &Options::default());
        let frames = shape_of(&m, &inf, "y").map(|s| s[1].to_string());
        (inf, frames)
    };
    let (bare, frames) = stft(false);
    assert!(bare.diagnostics.is_empty(), "{:?}", bare.diagnostics);
    assert!(bare.contract.accepts("n", 400) && !bare.contract.accepts("n", 399), "{:?}", bare.contract);
    // floor((n-400)/160)+1, as the terms write it.
    assert_eq!(frames.as_deref(), Some("floor((n-80)/160)-1"));
    let (padded, frames) = stft(true);
    assert!(padded.diagnostics.is_empty() && padded.constraints.is_empty(), "{:?}", padded.constraints);
    assert_eq!(frames.as_deref(), Some("floor(n/160)+1"));
}

/// Nodes whose inputs do not fit together, which onnxruntime 1.32 refuses, were inferred as if
/// they ran: attributes the op's schema does not define, normalization scales of the wrong
/// length, scatter updates of another shape than their indices, indices beyond the data, axes
/// the input lacks, blocks that do not tile, ops onnx deprecates at the model's opset (they
/// were inferred with the last rule before).
/// Each row is a one-node model (inputs named by role; i of int64, q and z of uint8), with
/// onnxruntime's output shape where it runs, our message where it refuses (its words in the
/// comment).
#[test]
fn inputs_that_do_not_fit_are_errors_as_in_onnxruntime() {
    use crate::build::{self, typed, with_int};
    use onnx_bcast::io::proto::tensor_proto::DataType;
    type Row = (
        &'static str,
        i64,
        &'static [(&'static str, i64)],
        &'static [(&'static str, &'static [i64])],
        Result<&'static [i64], &'static str>,
    );
    let rows: &[Row] = &[
        // "Dimension mismatch in unification between 4 and 3"
        (
            "BatchNormalization",
            18,
            &[],
            &[("x", &[2, 3, 4]), ("s", &[4]), ("b", &[3]), ("m", &[3]), ("v", &[3])],
            Err("input 1 must be of shape [3]"),
        ),
        // "Input 1 expected to have rank 1 but has rank 2"
        (
            "BatchNormalization",
            18,
            &[],
            &[("x", &[2, 3]), ("s", &[1, 3]), ("b", &[3]), ("m", &[3]), ("v", &[3])],
            Err("ranks 1 and 2 differ"),
        ),
        (
            "BatchNormalization",
            18,
            &[],
            &[("x", &[2, 3]), ("s", &[3]), ("b", &[3]), ("m", &[3]), ("v", &[3])],
            Ok(&[2, 3]),
        ),
        // "Mismatch between input data and scale: size of scale != input channel count 4 vs. 3"
        (
            "InstanceNormalization",
            18,
            &[],
            &[("x", &[2, 3, 4]), ("s", &[4]), ("b", &[3])],
            Err("input 1 must be of shape [3]"),
        ),
        // "Invalid input data: number of dimensions is less than 3: 2"
        ("InstanceNormalization", 18, &[], &[("x", &[2, 3]), ("s", &[3]), ("b", &[3])], Err("input rank 2 is below 3")),
        // "Scale and (optional) bias must match X.shape[axis:] or be NumPy-broadcastable to it."
        ("LayerNormalization", 18, &[], &[("x", &[2, 3, 4]), ("s", &[3]), ("b", &[4])], Err("do not broadcast")),
        ("LayerNormalization", 18, &[("axis", 1)], &[("x", &[2, 3, 4]), ("s", &[2, 3, 4])], Ok(&[2, 3, 4])),
        // "Incompatible dimensions" (opset 21: one scale per channel)
        (
            "GroupNormalization",
            21,
            &[("num_groups", 2)],
            &[("x", &[2, 4, 3]), ("s", &[2]), ("b", &[2])],
            Err("input 1 must be of shape [4]"),
        ),
        (
            "GroupNormalization",
            21,
            &[("num_groups", 2)],
            &[("x", &[2, 4, 3]), ("s", &[4]), ("b", &[4])],
            Ok(&[2, 4, 3]),
        ),
        // A scale or bias of one value broadcasts (onnxruntime 1.32 runs it).
        ("GroupNormalization", 21, &[("num_groups", 2)], &[("x", &[2, 4, 3]), ("s", &[1]), ("b", &[])], Ok(&[2, 4, 3])),
        // onnxruntime's function body fails to reshape 3 channels into 2 groups
        (
            "GroupNormalization",
            21,
            &[("num_groups", 2)],
            &[("x", &[2, 3, 4]), ("s", &[3]), ("b", &[3])],
            Err("3 is not a multiple of 2"),
        ),
        // "Indices vs updates dimensions differs at position=1 2 vs 3"
        (
            "ScatterElements",
            18,
            &[],
            &[("x", &[2, 3]), ("i", &[2, 2]), ("u", &[2, 3])],
            Err("indices and updates: sizes 2 and 3 differ at axis 1"),
        ),
        // "Indices dim=4 at pos=1 is greater than input dim=3"
        (
            "ScatterElements",
            18,
            &[],
            &[("x", &[2, 3]), ("i", &[2, 4]), ("u", &[2, 4])],
            Err("indices have 4 at axis 1"),
        ),
        ("ScatterElements", 18, &[], &[("x", &[2, 3]), ("i", &[3, 2]), ("u", &[3, 2])], Ok(&[2, 3])),
        // "Indices must have the same rank as Input. Indices rank=1. Input rank=2"
        (
            "ScatterElements",
            18,
            &[],
            &[("x", &[2, 3]), ("i", &[2]), ("u", &[2])],
            Err("indices of rank 1 for data of rank 2"),
        ),
        // "GatherElements op: Rank of input 'data' needs to be equal to rank of input 'indices'"
        ("GatherElements", 18, &[], &[("x", &[2, 3]), ("i", &[2])], Err("indices of rank 1 for data of rank 2")),
        // "'indices' shape should have values within bounds of 'data' shape."
        ("GatherElements", 18, &[], &[("x", &[2, 3]), ("i", &[2, 4])], Err("indices have 4 at axis 1")),
        ("GatherElements", 18, &[], &[("x", &[2, 3]), ("i", &[5, 2])], Ok(&[5, 2])),
        // "updates tensor should have shape equal to indices.shape[:-1] + data.shape[indices.shape[-1]:]"
        (
            "ScatterND",
            18,
            &[],
            &[("x", &[4, 3]), ("i", &[2, 1]), ("u", &[2, 4])],
            Err("updates: sizes 3 and 4 differ at axis 1"),
        ),
        // "last dimension of indices must not be larger than rank of input tensor"
        (
            "ScatterND",
            18,
            &[],
            &[("x", &[4, 3]), ("i", &[2, 3]), ("u", &[2])],
            Err("index length 3 for data of rank 2"),
        ),
        ("ScatterND", 18, &[], &[("x", &[4, 3]), ("i", &[2, 1]), ("u", &[2, 3])], Ok(&[4, 3])),
        // "input tensor and indices tensor must have rank larger than 0"; GatherND: "Both `data`
        // and `indices` input tensors in GatherND op need to have rank larger than 0"
        ("ScatterND", 18, &[], &[("x", &[]), ("i", &[0]), ("u", &[])], Err("data and indices of rank 1 or more")),
        ("GatherND", 18, &[], &[("x", &[]), ("i", &[0])], Err("data and indices of rank 1 or more")),
        // "'axis' must be in [-2 , 1]. Its actual value is: 2" (and at opset 11 by default on
        // rank 1: "must be in [-1 , 0]. Its actual value is: 1")
        ("Softmax", 18, &[("axis", 2)], &[("x", &[2, 3])], Err("axis 2 is outside")),
        ("Softmax", 11, &[], &[("x", &[3])], Err("axis 1 is outside")),
        ("Softmax", 11, &[("axis", 1)], &[("x", &[2, 3])], Ok(&[2, 3])),
        // "Input rank must be >= 1 for Softmax."
        ("Softmax", 18, &[], &[("x", &[])], Err("a scalar input has no axis")),
        ("Hardmax", 18, &[("axis", -3)], &[("x", &[2, 3])], Err("axis -3 is outside")),
        // "Input rank must be >= 2."
        ("Trilu", 18, &[], &[("x", &[4])], Err("input rank 1 is below 2")),
        // "DepthToSpace requires input depth to be a multiple of (block_size * block_size)"
        ("DepthToSpace", 18, &[("blocksize", 2)], &[("x", &[1, 6, 2, 2])], Err("6 is not a multiple of 4")),
        // "SpaceToDepth requires input height to be a multiple of block_size"
        ("SpaceToDepth", 18, &[("blocksize", 2)], &[("x", &[1, 1, 3, 4])], Err("3 is not a multiple of 2")),
        // Deprecated ops: "Op registered for Upsample is deprecated in domain_version of 10"
        ("Upsample", 10, &[], &[("x", &[1, 1, 2, 2]), ("s", &[4])], Err("Upsample is deprecated from opset 10")),
        (
            "Scatter",
            11,
            &[],
            &[("x", &[2, 3]), ("i", &[1, 2]), ("u", &[1, 2])],
            Err("Scatter is deprecated from opset 11"),
        ),
        ("Scatter", 10, &[], &[("x", &[2, 3]), ("i", &[1, 2]), ("u", &[1, 2])], Ok(&[2, 3])),
        // onnx deprecates GroupNormalization 18 (one scale per group), onnxruntime runs it.
        (
            "GroupNormalization",
            18,
            &[("num_groups", 2)],
            &[("x", &[2, 4, 3]), ("s", &[2]), ("b", &[2])],
            Ok(&[2, 4, 3]),
        ),
        (
            "GroupNormalization",
            20,
            &[("num_groups", 2)],
            &[("x", &[2, 4, 3]), ("s", &[4]), ("b", &[4])],
            Err("input 1 must be of shape [2]"),
        ),
        (
            "LSTM",
            18,
            &[("hidden_size", 4)],
            &[("x", &[5, 2, 3]), ("w", &[1, 16, 3]), ("r", &[1, 16, 4])],
            Ok(&[5, 1, 2, 4]),
        ),
        // "Input W must have shape {1,16,3}. Actual:{1,12,3}"
        (
            "LSTM",
            18,
            &[("hidden_size", 4)],
            &[("x", &[5, 2, 3]), ("w", &[1, 12, 3]), ("r", &[1, 16, 4])],
            Err("input 1 must be of shape [1, 16, 3]"),
        ),
        // "Input W must have shape {1,12,3}. Actual:{2,12,3}"
        (
            "GRU",
            18,
            &[("hidden_size", 4)],
            &[("x", &[5, 2, 3]), ("w", &[2, 12, 3]), ("r", &[2, 12, 4])],
            Err("input 1 must be of shape [1, 12, 3]"),
        ),
        // "Input R must have shape {1,4,4}. Actual:{1,5,4}"
        (
            "RNN",
            18,
            &[("hidden_size", 4)],
            &[("x", &[5, 2, 3]), ("w", &[1, 4, 3]), ("r", &[1, 5, 4])],
            Err("input 2 must be of shape [1, 4, 4]"),
        ),
        // "For per axis quantization, scale must be 1D tensor with size 3"
        (
            "DequantizeLinear",
            18,
            &[("axis", 1)],
            &[("q", &[2, 3]), ("s", &[2]), ("z", &[2])],
            Err("input 1 must be of shape [3]"),
        ),
        (
            "DequantizeLinear",
            18,
            &[("axis", 1)],
            &[("q", &[2, 3]), ("s", &[3]), ("z", &[2])],
            Err("input 2 must be of shape [3]"),
        ),
        ("DequantizeLinear", 18, &[("axis", 1)], &[("q", &[2, 3]), ("s", &[3]), ("z", &[3])], Ok(&[2, 3])),
        ("DequantizeLinear", 18, &[], &[("q", &[5]), ("s", &[]), ("z", &[1])], Ok(&[5])),
        (
            "QuantizeLinear",
            18,
            &[("axis", 0)],
            &[("x", &[2, 3]), ("s", &[3]), ("z", &[3])],
            Err("input 1 must be of shape [2]"),
        ),
        (
            "QuantizeLinear",
            21,
            &[("axis", 1), ("block_size", 2)],
            &[("x", &[2, 4]), ("s", &[2, 3]), ("z", &[2, 3])],
            Err("input 1 must be of shape [2, 2]"),
        ),
        (
            "QuantizeLinear",
            21,
            &[("axis", 1), ("block_size", 2)],
            &[("x", &[2, 4]), ("s", &[2, 2]), ("z", &[2, 2])],
            Ok(&[2, 4]),
        ),
        // "Dimension mismatch in unification between 3 and 2" (batch indices per roi)
        (
            "RoiAlign",
            18,
            &[],
            &[("x", &[1, 3, 8, 8]), ("r", &[2, 4]), ("i", &[3])],
            Err("input 2 must be of shape [2]"),
        ),
        // "boxes and scores should have same spatial_dimension."
        (
            "NonMaxSuppression",
            18,
            &[],
            &[("x", &[1, 5, 4]), ("s", &[1, 2, 6])],
            Err("input 1 must be of shape [1, 2, 5]"),
        ),
        // "Dimension mismatch in unification between 2 and 1"; "The last dimension of the grid
        // tensor must be the rank of the grid tensor - 2."
        ("GridSample", 18, &[], &[("x", &[1, 3, 8, 8]), ("g", &[2, 4, 4, 2])], Err("sizes 1 and 2 differ at axis 0")),
        ("GridSample", 18, &[], &[("x", &[1, 3, 8, 8]), ("g", &[1, 4, 4, 3])], Err("sizes 2 and 3 differ at axis 3")),
        // "The inner-most 2 dimensions must have the same size (mat_w:3 != mat_h:2)."
        ("Det", 18, &[], &[("x", &[2, 3])], Err("Det: not square")),
        ("Det", 18, &[], &[("x", &[4, 3, 3])], Ok(&[4])),
        // "sequence_lens shape must be {batch_size}. Got:{2}. batch_size=3"
        ("ReverseSequence", 18, &[], &[("x", &[4, 3]), ("i", &[2])], Err("input 1 must be of shape [3]")),
        // "size_ % 2 == 1 was false."
        ("LRN", 18, &[("size", 2)], &[("x", &[1, 2, 3, 3])], Err("size 2 is not odd")),
        ("LRN", 18, &[("size", 3)], &[("x", &[1, 2, 3, 3])], Ok(&[1, 2, 3, 3])),
        // attention_helper.h: "inconsistent head size", "... sequence length", heads that do not
        // divide; from opset 24 the mask's last size may fall short of the keys (the spec pads
        // it, where onnxruntime 1.32 wants it exact) but not exceed them.
        (
            "Attention",
            23,
            &[],
            &[("x", &[2, 4, 8, 16]), ("k", &[2, 4, 6, 12]), ("v", &[2, 4, 6, 16])],
            Err("head size 16 and 12 differ"),
        ),
        (
            "Attention",
            23,
            &[],
            &[("x", &[2, 4, 8, 16]), ("k", &[2, 4, 6, 16]), ("v", &[2, 4, 5, 16])],
            Err("sequence 6 and 5 differ"),
        ),
        (
            "Attention",
            23,
            &[],
            &[("x", &[2, 4, 8, 16]), ("k", &[2, 3, 6, 16]), ("v", &[2, 3, 6, 16])],
            Err("3 heads of K and V do not divide Q's 4"),
        ),
        (
            "Attention",
            23,
            &[("q_num_heads", 4), ("kv_num_heads", 2)],
            &[("x", &[2, 8, 64]), ("k", &[2, 6, 30]), ("v", &[2, 6, 32])],
            Err("head size 16 and 15 differ"),
        ),
        (
            "Attention",
            23,
            &[("q_num_heads", 4), ("kv_num_heads", 2)],
            &[("x", &[2, 8, 64]), ("k", &[2, 6, 32]), ("v", &[2, 6, 32])],
            Ok(&[2, 8, 64]),
        ),
        (
            "Attention",
            23,
            &[],
            &[("x", &[2, 4, 8, 16]), ("k", &[2, 4, 6, 16]), ("v", &[2, 4, 6, 16]), ("m", &[8, 7])],
            Err("the mask's last size 7 does not fit the 6 keys"),
        ),
        (
            "Attention",
            23,
            &[],
            &[("x", &[2, 4, 8, 16]), ("k", &[2, 4, 6, 16]), ("v", &[2, 4, 6, 16]), ("m", &[3, 6])],
            Err("the mask's leading sizes [3]"),
        ),
        // "Scale and (optional) bias must match X.shape[axis:] or be NumPy-broadcastable to it."
        ("RMSNormalization", 23, &[], &[("x", &[2, 3, 4]), ("s", &[3])], Err("do not broadcast")),
        ("RMSNormalization", 23, &[], &[("x", &[2, 3, 4]), ("s", &[4])], Ok(&[2, 3, 4])),
        // "Input 'cos_cache' dimension 1 should be same as head_size / 2 or rotary_embedding_dim / 2, got 6"
        (
            "RotaryEmbedding",
            23,
            &[],
            &[("x", &[2, 4, 8, 16]), ("c", &[10, 6]), ("s", &[10, 6]), ("i", &[2, 8])],
            Err("input 1 must be of shape [10, 8]"),
        ),
        (
            "RotaryEmbedding",
            23,
            &[],
            &[("x", &[2, 4, 8, 16]), ("c", &[10, 8]), ("s", &[10, 8]), ("i", &[2, 8])],
            Ok(&[2, 4, 8, 16]),
        ),
        // Attributes the schema lacks: "Unrecognized attribute: axis for operator
        // DequantizeLinear" (onnxruntime's quantize_static wrote it, per channel at opset 12).
        (
            "DequantizeLinear",
            12,
            &[("axis", 0)],
            &[("q", &[2, 3]), ("s", &[]), ("z", &[])],
            Err("DequantizeLinear (opset 12) has no attribute 'axis'"),
        ),
        ("DequantizeLinear", 13, &[("axis", 0)], &[("q", &[2, 3]), ("s", &[]), ("z", &[])], Ok(&[2, 3])),
        (
            "Relu",
            18,
            &[("alpha", 1), ("beta", 2)],
            &[("x", &[2])],
            Err("Relu (opset 18) has no attribute 'alpha', 'beta'"),
        ),
    ];
    for (op, opset, attrs, inputs, want) in rows {
        let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
        let mut n = build::node("n", op, &names, &["y"]);
        for (name, v) in *attrs {
            n = with_int(n, name, *v);
        }
        let elem = |name: &str| match name {
            "i" => DataType::Int64,
            "q" | "z" => DataType::Uint8,
            _ => DataType::Float,
        };
        let vis = inputs.iter().map(|(name, s)| typed(name, elem(name), s)).collect();
        let m = build::load(&build::model(*opset, vis, vec![n], &["y"]));
        let inf = infer(&m, &Options::default());
        let messages: Vec<&str> = inf.diagnostics.iter().map(|d| d.message.as_str()).collect();
        match want {
            Ok(y) => {
                assert!(messages.is_empty(), "{op} {inputs:?}: {messages:?}");
                assert_eq!(shape_of(&m, &inf, "y"), Some(&y.iter().map(|k| d(*k)).collect()), "{op} {inputs:?}");
            }
            Err(e) => assert!(messages.iter().any(|m| m.contains(e)), "{op} {inputs:?}: {messages:?}"),
        }
    }
}

/// CumSum's axis is its second input: one the input lacks is an error (onnxruntime 1.32:
/// "HandleNegativeAxis ... axis >= -tensor_rank && axis <= tensor_rank - 1"). Indices that reach
/// 4 along an axis of symbolic size `n` need n of 4 or more. Gather's constant indices must lie
/// in the axis ("indices element out of data bounds, idx=2 must be within the inclusive range
/// [-2,1]"). A Reshape -1 beside a size of 0 cannot be told ("Product cannot be 0 in
/// combination with -1"), where [2, 0] to (0, -1) with allowzero cancelled the 0s and gave
/// [0, 2]. Pooling pads as wide as the kernel are refused ("Pad should be smaller than
/// kernel"), a convolution's are not. Col2Im's blocks must divide its channels, MaxRoiPool's
/// rois hold five numbers.
#[test]
fn value_axes_and_symbolic_index_bounds_are_checked() {
    let one = |n: NodeProto, x: &[D], init: Vec<TensorProto>| {
        let g = graph(vec![n], vec![f32_input("x", x)], init, &["y"]);
        let inf = infer(&model_at(g, 18), &Options::default());
        inf.diagnostics.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
    };
    let gather = |i: i64, axis: i64| {
        one(
            with_int(node("Gather", &["x", "i"], &["y"]), "axis", axis),
            &[D::N(2), D::N(3)],
            vec![ints_init("i", &[i])],
        )
    };
    assert_eq!((gather(1, 0), gather(-2, 0), gather(2, 1), gather(-3, 1)), (vec![], vec![], vec![], vec![]));
    assert_eq!(gather(2, 0), ["Gather: index 2 is outside the 2 elements of its axis"]);
    assert_eq!(gather(-4, 1), ["Gather: index -4 is outside the 3 elements of its axis"]);
    let reshape = |x: &[D], allowzero: i64| {
        let n = with_int(node("Reshape", &["x", "s"], &["y"]), "allowzero", allowzero);
        one(n, x, vec![ints_init("s", &[0, -1])])
    };
    for (x, allowzero) in [(&[D::N(2), D::N(0)], 1), (&[D::N(0), D::N(3)], 0), (&[D::N(0), D::S("n")], 0)] {
        let msgs = reshape(x, allowzero);
        assert!(msgs.iter().any(|m| m.contains("-1 beside a size of 0")), "{msgs:?}");
    }
    let pool = |op: &str, pads: &[i64]| {
        let n = crate::build::with_ints(
            crate::build::with_ints(node(op, &["x"], &["y"]), "kernel_shape", &[3]),
            "pads",
            pads,
        );
        one(n, &[D::N(1), D::N(1), D::N(5)], vec![])
    };
    assert!(pool("MaxPool", &[2, 2]).is_empty());
    // "'input' dim[1] (5) must be a positive multiple of prod(block_shape) (4)."
    let col2im = |ch: i64| {
        let consts = vec![ints_init("s", &[3, 3]), ints_init("k", &[2, 2])];
        one(node("Col2Im", &["x", "s", "k"], &["y"]), &[D::N(1), D::N(ch), D::N(4)], consts)
    };
    assert!(col2im(4).is_empty());
    assert_eq!(col2im(5), ["Col2Im: axis 1: 5 is not a multiple of 4"]);
    // MaxRoiPool's rois hold 5 numbers each ("R->Shape()[1] == 5 was false").
    let roi = |k: i64| {
        let n = crate::build::with_ints(node("MaxRoiPool", &["x", "r"], &["y"]), "pooled_shape", &[2, 2]);
        let inputs = vec![f32_input("x", &[D::N(1), D::N(3), D::N(8), D::N(8)]), f32_input("r", &[D::N(2), D::N(k)])];
        infer(&model(graph(vec![n], inputs, vec![], &["y"])), &Options::default()).diagnostics.len()
    };
    assert_eq!((roi(5), roi(4)), (0, 1));
    // The spec's inference and onnxruntime take an ellipsis of one length in every input
    // ("Ellipsis for input 1 represents 1 dimensions, but ellipsis for input 0 represents 2").
    let einsum = |a: &[D]| {
        let n = with_str(node("Einsum", &["x", "b"], &["y"]), "equation", "...ij,...jk->...ik");
        let inputs = vec![f32_input("x", a), f32_input("b", &[D::N(3), D::N(3), D::N(4)])];
        infer(&model(graph(vec![n], inputs, vec![], &["y"])), &Options::default()).diagnostics.len()
    };
    assert_eq!((einsum(&[D::N(1), D::N(2), D::N(3)]), einsum(&[D::N(2), D::N(1), D::N(2), D::N(3)])), (0, 1));
    for (op, pads) in [("MaxPool", [3, 0]), ("AveragePool", [0, 3]), ("LpPool", [4, 4])] {
        let msgs = pool(op, &pads);
        assert!(msgs.iter().any(|m| m.contains("refuses a pad as wide as the kernel")), "{op}: {msgs:?}");
    }
    let cum = |axis: i64| {
        let g = graph(
            vec![node("CumSum", &["x", "a"], &["y"])],
            vec![f32_input("x", &[D::N(4), D::N(3)])],
            vec![ints_init("a", &[axis])],
            &["y"],
        );
        infer(&model(g), &Options::default()).diagnostics.len()
    };
    assert_eq!((cum(-2), cum(1), cum(2), cum(-3)), (0, 0, 1, 1));
    let i = input("i", tensor_proto::DataType::Int64, &[D::N(2), D::N(4)]);
    let g = graph(
        vec![node("GatherElements", &["x", "i"], &["y"])],
        vec![f32_input("x", &[D::N(2), D::S("n")]), i],
        vec![],
        &["y"],
    );
    let inf = infer(&model(g), &Options::default());
    assert!(
        inf.diagnostics.is_empty() && inf.contract.accepts("n", 4) && !inf.contract.accepts("n", 3),
        "{:?}",
        inf.contract
    );
}

/// A sequence longer than the positions of RotaryEmbedding's caches is refused by onnxruntime
/// 1.32 ("Updating cos_cache and sin_cache in RotaryEmbedding is not currently supported"), so
/// over a symbolic `seq` the contract is an upper bound: 1 to 16 for caches of 16 positions,
/// failing first at 17 with the node named.
#[test]
fn rotary_caches_bound_the_sequence() {
    use crate::build::{self, model as proto_model, node as proto_node, typed, with_int};
    use onnx_bcast::io::proto::{self as onnx, tensor_proto::DataType};
    let n = with_int(proto_node("rope", "RotaryEmbedding", &["x", "p", "c", "s"], &["y"]), "num_heads", 2);
    let n = onnx::NodeProto { domain: Some("com.microsoft".into()), ..n };
    let inputs = vec![
        typed("x", DataType::Float, &[build::D::S("batch"), build::D::S("seq"), build::D::N(8)]),
        typed("p", DataType::Int64, &[build::D::S("batch"), build::D::S("seq")]),
        typed("c", DataType::Float, &[16i64, 2]),
        typed("s", DataType::Float, &[16i64, 2]),
    ];
    let mut m = proto_model(17, inputs, vec![n], &["y"]);
    m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft".into()), version: Some(1) });
    let inf = infer(&build::load(&m), &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert!(inf.contract.accepts("seq", 16) && !inf.contract.accepts("seq", 17), "{:?}", inf.contract);
    let seq = &inf.contract.dims["seq"];
    assert_eq!((seq.min, seq.max, seq.text.as_str()), (1, Some(16), "1 to 16"));
    let ce = seq.counterexample.as_ref().unwrap();
    assert_eq!((ce.value, ce.node.as_str()), (17, "rope"));
}

/// A graph as onnxruntime writes it at ORT_ENABLE_ALL: an NCHWc convolution (weights padded
/// to 16 output channels), an NCHWc max pool of 3x3, a ReorderOutput back to the 8 real
/// channels. The symbolic sizes go through, and the pool's window makes the contract: the
/// NCHW pool would refuse an input of 1 and run one of 2, the NCHWc one dies on an empty
/// output height, so height from 3 (width from 2). Eight channels of padding
/// are a block only on a machine with AVX-512 (16 channels; onnxruntime 1.32 with blocks of 8
/// refuses the ReorderOutput: "Input channels must match the NCHWc block-aligned channel
/// count"), a machine-dependent warning.
#[test]
fn nchwc_graphs_keep_their_symbolic_sizes() {
    use crate::build::{self, model as proto_model, node as proto_node, typed, with_int, with_ints, D as B};
    use onnx_bcast::io::proto::{self as onnx, tensor_proto::DataType};
    let nchwc = |n: onnx::NodeProto| onnx::NodeProto { domain: Some("com.microsoft.nchwc".into()), ..n };
    let conv = with_ints(proto_node("conv", "Conv", &["x", "w"], &["c"]), "pads", &[1, 1, 1, 1]);
    let pool = with_ints(proto_node("pool", "MaxPool", &["c"], &["p"]), "kernel_shape", &[3, 3]);
    let back = with_int(proto_node("back", "ReorderOutput", &["p"], &["y"]), "channels", 8);
    let inputs = vec![
        typed("x", DataType::Float, &[B::S("batch"), B::N(3), B::S("h"), B::S("w")]),
        typed("w", DataType::Float, &[16i64, 3, 3, 3]),
    ];
    let mut m = proto_model(17, inputs, vec![nchwc(conv), nchwc(pool), nchwc(back)], &["y"]);
    m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft.nchwc".into()), version: Some(1) });
    let model = build::load(&m);
    let inf = infer(&model, &Options::default());
    let found: Vec<_> = inf.diagnostics.iter().map(|d| (d.code.as_str(), d.node.as_deref())).collect();
    assert_eq!(found, [("machine-dependent", Some("back"))], "{:?}", inf.diagnostics);
    let render = |name: &str| onnx_bcast::shape::render(shape_of(&model, &inf, name).expect("shaped"));
    assert_eq!(render("c"), "[batch, 16, h, w]");
    assert_eq!(render("y"), "[batch, 8, h-2, w-2]");
    assert!(inf.contract.accepts("h", 3) && !inf.contract.accepts("h", 2), "{:?}", inf.contract);
    assert!(inf.contract.accepts("w", 2) && !inf.contract.accepts("w", 1), "{:?}", inf.contract);
}

/// The NCHWc kernels check channels against the machine's block: 8, or 16 with AVX-512. A
/// node only one width runs is a machine-dependent warning naming it, one neither runs an
/// invalid node. onnxruntime 1.32 on a machine of blocks of 8 ran every row marked 8 or both,
/// and refused the rows marked 16 (Conv of 12 channels: "input and filter shapes do not match
/// a supported blocked layout"; ReorderOutput of 8 in 16: "Input channels must match the NCHWc
/// block-aligned channel count").
#[test]
fn nchwc_nodes_say_which_block_width_runs_them() {
    use crate::build::{self, model as proto_model, node as proto_node, typed, with_int, with_ints};
    use onnx_bcast::io::proto::{self as onnx, tensor_proto::DataType};
    let nchwc = |n: onnx::NodeProto| onnx::NodeProto { domain: Some("com.microsoft.nchwc".into()), ..n };
    let pool = |ch: i64| {
        let n = with_ints(proto_node("n", "MaxPool", &["x"], &["y"]), "kernel_shape", &[2, 2]);
        (vec![typed("x", DataType::Float, &[1i64, ch, 4, 4])], n)
    };
    let conv = |ch: i64, m: i64| {
        let n = proto_node("n", "Conv", &["x", "w"], &["y"]);
        (vec![typed("x", DataType::Float, &[1i64, ch, 4, 4]), typed("w", DataType::Float, &[m, ch, 1, 1])], n)
    };
    let reorder = |ch: i64, channels: i64| {
        let n = with_int(proto_node("n", "ReorderOutput", &["x"], &["y"]), "channels", channels);
        (vec![typed("x", DataType::Float, &[1i64, ch, 4, 4])], n)
    };
    let rows = [
        ("MaxPool of 16", pool(16), "both"),
        ("MaxPool of 24", pool(24), "8"),
        ("MaxPool of 12", pool(12), "neither"),
        ("Conv of 4 to 16", conv(4, 16), "both"),
        ("Conv of 12 to 16", conv(12, 16), "16"),
        ("Conv of 24 to 16", conv(24, 16), "8"),
        ("Conv of 16 to 8", conv(16, 8), "8"),
        ("Conv of 16 to 12", conv(16, 12), "neither"),
        ("ReorderOutput of 9 in 16", reorder(16, 9), "both"),
        ("ReorderOutput of 8 in 16", reorder(16, 8), "16"),
        ("ReorderOutput of 20 in 24", reorder(24, 20), "8"),
        ("ReorderOutput of 17 in 16", reorder(16, 17), "neither"),
    ];
    for (what, (inputs, node), runs) in rows {
        let mut m = proto_model(17, inputs, vec![nchwc(node)], &["y"]);
        m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft.nchwc".into()), version: Some(1) });
        let inf = infer(&build::load(&m), &Options::default());
        let found: Vec<(&str, &str)> = inf.diagnostics.iter().map(|d| (d.code.as_str(), d.message.as_str())).collect();
        match runs {
            "both" => assert!(found.is_empty(), "{what}: {found:?}"),
            "neither" => assert!(matches!(found[..], [("invalid-node", _)]), "{what}: {found:?}"),
            width => assert!(
                matches!(found[..], [("machine-dependent", m)] if m.contains(&format!("is {width} channels"))),
                "{what}: {found:?}"
            ),
        }
    }
}

/// GroupQueryAttention as onnxruntime-genai's graphs use it: the present key and value hold
/// max(past, total) positions (onnxruntime 1.32: a past of 3 and a total of 10 give 10), the
/// total read from a constant or from the attention mask's width.
#[test]
fn group_query_attention_presents_hold_the_total_length() {
    use crate::build::{self, model as proto_model, node as proto_node, typed, with_int, D as B};
    use onnx_bcast::io::proto::{self as onnx, tensor_proto::DataType};
    let gqa = |past: B, total: Option<i64>| {
        let n = with_int(
            with_int(proto_node("g", "GroupQueryAttention", &[], &["y", "pk_out", "pv_out"]), "num_heads", 4),
            "kv_num_heads",
            2,
        );
        let n = onnx::NodeProto {
            domain: Some("com.microsoft".into()),
            input: ["q", "", "", "pk", "pv", "sl", "tot"].map(String::from).to_vec(),
            ..n
        };
        let past = || {
            [
                B::N(1),
                B::N(2),
                match &past {
                    B::N(n) => B::N(*n),
                    B::S(s) => B::S(s),
                },
                B::N(16),
            ]
        };
        let mut inputs = vec![
            typed("q", DataType::Float, &[1i64, 7, 128]),
            typed("pk", DataType::Float, &past()),
            typed("pv", DataType::Float, &past()),
        ];
        inputs.push(typed("sl", DataType::Int32, &[1i64]));
        let mut m = proto_model(17, inputs, vec![n], &["y", "pk_out"]);
        let g = m.graph.as_mut().unwrap();
        match total {
            Some(t) => g.initializer.push(onnx::TensorProto {
                name: Some("tot".into()),
                data_type: Some(DataType::Int32 as i32),
                int32_data: vec![t as i32],
                ..Default::default()
            }),
            None => g.input.push(typed("tot", DataType::Int32, &[] as &[i64])),
        }
        m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft".into()), version: Some(1) });
        let model = build::load(&m);
        let inf = infer(&model, &Options::default());
        assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
        onnx_bcast::shape::render(shape_of(&model, &inf, "pk_out").expect("shaped"))
    };
    assert_eq!(gqa(B::N(3), Some(10)), "[1, 2, 10, 16]");
    assert_eq!(gqa(B::S("past"), Some(10)), "[1, 2, max(10,past), 16]");
    assert!(gqa(B::N(3), None).starts_with("[1, 2, ?"), "a total not known leaves the length unknown");
}

/// A sliding-window GroupQueryAttention (onnxruntime-genai's Gemma-2 layers) holds the whole
/// window in its cache: onnxruntime 1.32 refuses "KV cache capacity (32) must be at least
/// local_window_size (4096)". Over a symbolic capacity the contract is a lower bound, traced
/// to the past input that carries it.
#[test]
fn sliding_window_caches_hold_the_window() {
    use crate::build::{self, model as proto_model, node as proto_node, typed, with_int, D as B};
    use onnx_bcast::io::proto::{self as onnx, tensor_proto::DataType};
    // A sliding cache is updated in place: onnxruntime wants the present outputs.
    let outs = ["y", "present_key", "present_value"];
    let n = with_int(with_int(proto_node("g", "GroupQueryAttention", &[], &outs), "num_heads", 4), "kv_num_heads", 2);
    let n = with_int(with_int(n, "local_window_size", 64), "sliding_window_cache", 1);
    let n = onnx::NodeProto {
        domain: Some("com.microsoft".into()),
        input: ["q", "", "", "pk", "pv", "sl", "tot"].map(String::from).to_vec(),
        ..n
    };
    let past = [B::S("batch"), B::N(2), B::S("window"), B::N(16)];
    let inputs = vec![
        typed("q", DataType::Float, &[B::S("batch"), B::N(1), B::N(128)]),
        typed("pk", DataType::Float, &past),
        typed("pv", DataType::Float, &past),
        typed("sl", DataType::Int32, &[B::S("batch")]),
        typed("tot", DataType::Int32, &[] as &[i64]),
    ];
    let mut m = proto_model(17, inputs, vec![n], &["y"]);
    m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft".into()), version: Some(1) });
    let inf = infer(&build::load(&m), &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let window = &inf.contract.dims["window"];
    assert_eq!((window.min, window.max, window.text.as_str()), (64, None, "at least 64"));
    let ce = window.counterexample.as_ref().unwrap();
    assert_eq!((ce.value, ce.origins.len()), (1, 1), "{ce:?}");
    assert!(ce.origins[0].starts_with("'pk'"), "{ce:?}");
}

/// `n` with a one-element tensor attribute `value` (ConstantOfShape's fill).
fn with_fill(mut n: NodeProto, t: TensorProto) -> NodeProto {
    n.attribute.push(AttributeProto {
        name: Some("value".into()),
        r#type: Some(attribute_proto::AttributeType::Tensor as i32),
        t: Some(t),
        ..Default::default()
    });
    n
}

/// torch's TorchScript export writes `arange(n)` as `NonZero(ConstantOfShape([n], 1))`
/// (Longformer, LED): every element is the fill, so NonZero counts all of them, or none for a
/// zero fill (the default is a float zero), also after ops that only relabel the axes.
/// onnxruntime 1.32 gives [1, a], [2, a*b], [1, 0], [2, 0], [1, 100000] (too long to hold) and
/// [2, a*b] at (a, b) = (2, 3) and (5, 3).
#[test]
fn non_zero_of_a_constant_fill_counts_every_element_or_none() {
    let one = TensorProto {
        dims: vec![1],
        data_type: Some(tensor_proto::DataType::Int64 as i32),
        int64_data: vec![1],
        ..Default::default()
    };
    let half = TensorProto {
        dims: vec![1],
        data_type: Some(tensor_proto::DataType::Float as i32),
        float_data: vec![2.5],
        ..Default::default()
    };
    let zero = TensorProto { int64_data: vec![0], ..one.clone() };
    let g = graph(
        vec![
            node("Shape", &["x"], &["sx"]),
            node("Slice", &["sx", "zero", "one"], &["n"]),
            with_fill(node("ConstantOfShape", &["n"], &["ones"]), one.clone()),
            node("NonZero", &["ones"], &["arange"]),
            with_fill(node("ConstantOfShape", &["sx"], &["halves"]), half),
            node("NonZero", &["halves"], &["all"]),
            node("ConstantOfShape", &["n"], &["zeros"]),
            node("NonZero", &["zeros"], &["none"]),
            with_fill(node("ConstantOfShape", &["sx"], &["izeros"]), zero),
            node("NonZero", &["izeros"], &["inone"]),
            with_fill(node("ConstantOfShape", &["big"], &["long"]), one),
            node("NonZero", &["long"], &["many"]),
            // Reshape, Unsqueeze and Identity only relabel the axes: the fill stays.
            node("Reshape", &["halves", "flat"], &["hflat"]),
            node("Unsqueeze", &["hflat", "zero"], &["hrow"]),
            node("Identity", &["hrow"], &["hsame"]),
            node("NonZero", &["hsame"], &["moved"]),
        ],
        vec![f32_input("x", &[D::S("a"), D::S("b")])],
        vec![ints_init("zero", &[0]), ints_init("one", &[1]), ints_init("big", &[100_000]), ints_init("flat", &[-1])],
        &["arange", "all", "none", "inone", "many", "moved"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "arange"), Some(&vec![d(1), Dim::parse("a")]));
    assert_eq!(shape_of(&m, &inf, "all"), Some(&vec![d(2), Dim::parse("a*b")]));
    assert_eq!(shape_of(&m, &inf, "none"), Some(&vec![d(1), d(0)]));
    assert_eq!(shape_of(&m, &inf, "inone"), Some(&vec![d(2), d(0)]));
    assert_eq!(shape_of(&m, &inf, "many"), Some(&vec![d(1), d(100_000)]));
    assert_eq!(shape_of(&m, &inf, "moved"), Some(&vec![d(2), Dim::parse("a*b")]));
    let inf = infer(&m, &Options { bindings: [("a".into(), 5), ("b".into(), 3)].into(), ..Options::default() });
    assert_eq!(shape_of(&m, &inf, "arange"), Some(&vec![d(1), d(5)]));
    assert_eq!(shape_of(&m, &inf, "all"), Some(&vec![d(2), d(15)]));
}

/// OneHot of known indices folds its contents: TorchScript writes torch's `repeat` by a head
/// count as a OneHot of the constant index 2 whose on value is the count (YOSO's Tile), and a
/// OneHot along axis 0 lays each depth out in turn. onnxruntime 1.32 gives y = [b, 1, b, s] and
/// z = [1, 2, 1, 1, 2, 1] at (b, s) = (3, 5) and (2, 7).
#[test]
fn one_hot_of_known_indices_has_known_contents() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["sx"]),
            node("Slice", &["sx", "zero", "one"], &["b"]),
            with_int(node("Concat", &["one", "b"], &["vals"]), "axis", 0),
            node("OneHot", &["two", "four", "vals"], &["oh"]),
            node("Reshape", &["oh", "flat"], &["rep"]),
            node("Tile", &["x", "rep"], &["y"]),
            with_int(node("OneHot", &["idx2", "three", "onetwo"], &["oh2"]), "axis", 0),
            node("Reshape", &["oh2", "flat"], &["shape2"]),
            node("ConstantOfShape", &["shape2"], &["z"]),
        ],
        vec![f32_input("x", &[D::S("b"), D::N(1), D::N(1), D::S("s")])],
        vec![
            ints_init("zero", &[0]),
            ints_init("one", &[1]),
            ints_init("two", &[2]),
            scalar("four", 4),
            ints_init("flat", &[-1]),
            TensorProto { dims: vec![2, 1], ..ints_init("idx2", &[-1, 0]) },
            scalar("three", 3),
            ints_init("onetwo", &[1, 2]),
        ],
        &["y", "z"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let sym = Dim::parse;
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![sym("b"), d(1), sym("b"), sym("s")]));
    assert_eq!(shape_of(&m, &inf, "z"), Some(&[1, 2, 1, 1, 2, 1].map(d).to_vec()));
}

/// A table sliced from `40000 - n` and added to an input of length `n` (wav2vec2-conformer's
/// relative positions, at its scale of 9,999 positions) runs while the slice keeps `n`
/// positions or one: the condition settles only past n = 80,000, and the contract is still
/// exact. Python's slice rule, written out here, gives the sizes it holds at.
#[test]
fn a_contract_whose_condition_settles_late_is_exact() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["sx"]),
            node("Slice", &["sx", "zero", "one"], &["n"]),
            node("Sub", &["c", "n"], &["start"]),
            node("Slice", &["y", "start", "far"], &["pos"]),
            node("Add", &["x", "pos"], &["z"]),
        ],
        vec![f32_input("x", &[D::S("n")]), f32_input("y", &[D::N(40_000)])],
        vec![ints_init("zero", &[0]), ints_init("one", &[1]), ints_init("c", &[40_000]), ints_init("far", &[i64::MAX])],
        &["z"],
    );
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let python_len = |n: i64| {
        let start = 40_000 - n;
        let start = if start < 0 { (start + 40_000).max(0) } else { start.min(40_000) };
        40_000 - start
    };
    let dim = inf.contract.dims.get("n").expect("n is restricted");
    assert!(dim.exact && inf.contract.relations.is_empty(), "{dim:?} {:?}", inf.contract.relations);
    for n in 1..=130_000 {
        let len = python_len(n);
        assert_eq!(inf.contract.accepts("n", n), len == n || len == 1 || n == 1, "n = {n}: {}", dim.text);
    }
}

/// Positions that index a table: GPT-2's `wpe[arange(s)]`, BART's `table[arange(s) + 2]`, and
/// a flat `arange(b)*s + arange(s)` into the flattened input, beside token ids that are data.
/// onnxruntime 1.32 runs (b, s) = (2, 1), (2, 64), (3, 64) and refuses (2, 65) and (1, 2000)
/// ("indices element out of data bounds"); Mod's positions stay unknown, so the sizes they are
/// computed from are not exact.
#[test]
fn positions_that_index_a_table_bound_the_sequence() {
    let table = |name: &str, rows: i64| TensorProto { dims: vec![rows, 4], ..f32_init(name, rows as usize * 4) };
    let nodes = |last: NodeProto| {
        vec![
            node("Shape", &["x"], &["sx"]),
            node("Gather", &["sx", "one_s"], &["n"]),
            node("Range", &["zero_s", "n", "one_s"], &["r"]),
            node("Unsqueeze", &["r", "zero"], &["pos"]),
            node("Gather", &["table", "pos"], &["e"]),
            node("Add", &["pos", "two_s"], &["p2"]),
            node("Gather", &["table2", "p2"], &["e2"]),
            node("Gather", &["sx", "zero_s"], &["b"]),
            node("Range", &["zero_s", "b", "one_s"], &["rb"]),
            node("Unsqueeze", &["rb", "one"], &["col"]),
            node("Mul", &["col", "n"], &["rows"]),
            node("Add", &["rows", "pos"], &["flat_idx"]),
            with_int(node("Flatten", &["x"], &["xf"]), "axis", 0),
            with_int(node("Gather", &["xf", "flat_idx"], &["picked"]), "axis", 1),
            node("Gather", &["table", "ids"], &["emb"]),
            last,
        ]
    };
    let inputs = || {
        vec![
            f32_input("x", &[D::S("b"), D::S("s")]),
            input("ids", tensor_proto::DataType::Int64, &[D::S("b"), D::S("s")]),
        ]
    };
    let inits = || {
        vec![
            ints_init("zero", &[0]),
            ints_init("one", &[1]),
            scalar("zero_s", 0),
            scalar("one_s", 1),
            scalar("two_s", 2),
            scalar("seven_s", 7),
            table("table", 64),
            table("table2", 66),
        ]
    };
    let m = model(graph(nodes(node("Identity", &["e"], &["y"])), inputs(), inits(), &["y", "e2", "picked", "emb"]));
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let s = &inf.contract.dims["s"];
    assert_eq!((s.min, s.max, s.exact), (1, Some(64), true), "{s:?}");
    assert_eq!(s.counterexample.as_ref().map(|c| c.value), Some(65));
    assert!(inf.contract.relations.is_empty(), "{:?}", inf.contract.relations);
    assert!(!inf.contract.dims.contains_key("b"), "{:?}", inf.contract.dims);
    // Too many positions to hold, known: both tables refuse them.
    let at = |s: i64| Options { bindings: [("b".into(), 1), ("s".into(), s)].into(), ..Options::default() };
    assert_eq!(codes(&infer(&m, &at(2000))), ["invalid-node", "invalid-node"]);
    assert_eq!(codes(&infer(&m, &at(64))), Vec::<&str>::new());
    // Positions whose values inference does not follow.
    let mut g = graph(nodes(node("Mod", &["pos", "seven_s"], &["wrapped"])), inputs(), inits(), &["w"]);
    g.node.push(node("Gather", &["table", "wrapped"], &["w"]));
    let inf = infer(&model(g), &Options::default());
    assert!(!inf.contract.dims["s"].exact, "{:?}", inf.contract.dims);
    let unseen: Vec<(&[String], &str)> =
        inf.contract.relations.iter().map(|r| (r.dims.as_slice(), r.condition.as_str())).collect();
    let want = "the indices of Gather_w, computed from these sizes, stay in range";
    assert_eq!(unseen, [(&["b".to_string(), "s".to_string()][..], want)]);
}

/// torch.export indexes a mask by `mask[arange(b)[:, None], arange(s)[None, :]]`: a GatherND
/// of the two expanded `arange`s concatenated along the last axis, each within the axis it
/// indexes. DeBERTa's relative positions are clipped to a table: bounded where the clipped
/// `arange` difference reaches the table's end. onnxruntime 1.32 runs (b, s, mb, ms) =
/// (2, 3, 2, 3), (1, 2, 2, 3), (2, 3, 3, 5), (2, 4, 2, 4) and refuses (3, 3, 2, 3) and
/// (2, 4, 2, 3) (GatherND) and (2, 5, 2, 5) (the Gather of a table of 12 rows).
#[test]
fn index_tuples_and_clipped_positions_are_bounded() {
    let table = |name: &str, rows: i64| TensorProto { dims: vec![rows, 2], ..f32_init(name, rows as usize * 2) };
    let g = graph(
        vec![
            node("Shape", &["x"], &["sx"]),
            node("Gather", &["sx", "zero_s"], &["b"]),
            node("Gather", &["sx", "one_s"], &["s"]),
            node("Range", &["zero_s", "b", "one_s"], &["rb"]),
            node("Range", &["zero_s", "s", "one_s"], &["rs"]),
            node("Unsqueeze", &["rb", "ax12"], &["ib"]),
            node("Unsqueeze", &["rs", "ax02"], &["is"]),
            node("Unsqueeze", &["b", "zero"], &["b1"]),
            node("Unsqueeze", &["s", "zero"], &["s1"]),
            with_int(node("Concat", &["b1", "s1", "one"], &["tshape"]), "axis", 0),
            node("Expand", &["ib", "tshape"], &["eb"]),
            node("Expand", &["is", "tshape"], &["es"]),
            with_int(node("Concat", &["eb", "es"], &["idx"]), "axis", -1),
            node("GatherND", &["mask", "idx"], &["y"]),
            node("Unsqueeze", &["rs", "one"], &["rcol"]),
            node("Unsqueeze", &["rs", "zero"], &["rrow"]),
            node("Sub", &["rcol", "rrow"], &["rel"]),
            node("Add", &["rel", "eight_s"], &["shifted"]),
            node("Clip", &["shifted", "zero_s", "fifteen_s"], &["bucket"]),
            node("Gather", &["table16", "bucket"], &["z16"]),
            node("Gather", &["table12", "bucket"], &["z12"]),
        ],
        vec![
            f32_input("x", &[D::S("b"), D::S("s")]),
            input("mask", tensor_proto::DataType::Int64, &[D::S("mb"), D::S("ms")]),
        ],
        vec![
            ints_init("zero", &[0]),
            ints_init("one", &[1]),
            ints_init("ax12", &[1, 2]),
            ints_init("ax02", &[0, 2]),
            scalar("zero_s", 0),
            scalar("one_s", 1),
            scalar("eight_s", 8),
            scalar("fifteen_s", 15),
            table("table16", 16),
            table("table12", 12),
        ],
        &["y", "z16", "z12"],
    );
    let inf = infer(&model(g), &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    for (sizes, runs) in [
        ([2, 3, 2, 3], true),
        ([1, 2, 2, 3], true),
        ([2, 3, 3, 5], true),
        ([2, 4, 2, 4], true),
        ([3, 3, 2, 3], false),
        ([2, 4, 2, 3], false),
        ([2, 5, 2, 5], false),
    ] {
        let value = |t: &onnx_bcast::shape::Term| {
            ["b", "s", "mb", "ms"].iter().position(|n| t.as_name() == Some(n)).map(|i| sizes[i])
        };
        let holds = inf.constraints.iter().all(|c| c.assumption.holds(&value) == Some(true));
        assert_eq!(holds, runs, "{sizes:?}: {:?}", inf.constraints);
    }
    assert_eq!(inf.contract.dims["s"].max, Some(4));
    assert!(inf.contract.relations.iter().all(|r| !r.condition.contains("indices")), "{:?}", inf.contract.relations);
}

/// A known index into a symbolic axis needs the axis to reach it: TorchScript unrolls Mamba's
/// scan over the 7 positions it was traced with, `x[:, 6]` among them. onnxruntime 1.32
/// refuses s = 6 ("indices element out of data bounds") and runs s = 7 and 9, as it runs
/// index -7 there and refuses it at s = 6.
#[test]
fn a_known_index_needs_the_axis_to_reach_it() {
    let g = graph(
        vec![
            with_int(node("Gather", &["x", "six"], &["last"]), "axis", 1),
            with_int(node("Gather", &["x", "minus7"], &["first"]), "axis", 1),
        ],
        vec![f32_input("x", &[D::S("b"), D::S("s")])],
        vec![scalar("six", 6), scalar("minus7", -7)],
        &["last", "first"],
    );
    let inf = infer(&model(g), &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let s = &inf.contract.dims["s"];
    assert_eq!((s.min, s.max, s.exact), (7, None, true), "{s:?}");
}

/// Squeeze of a listed axis of symbolic size needs it to be 1. onnxruntime 1.32 runs x of
/// [3, 1] and refuses [3, 0], [3, 2] and [3, 3] ("Dimension of input 1 must be 1 instead of
/// 2"), with the axes as an input (opset 13) and as an attribute (opset 11); PP-OCRv2's
/// recognizer squeezes its pooled height this way, and runs only to a height of 48.
#[test]
fn a_squeezed_symbolic_axis_must_be_1() {
    let x = || vec![f32_input("x", &[D::S("n"), D::S("h")])];
    let as_input = model(graph(vec![node("Squeeze", &["x", "ax"], &["y"])], x(), vec![ints_init("ax", &[1])], &["y"]));
    let mut n = node("Squeeze", &["x"], &["y"]);
    n.attribute.push(AttributeProto {
        name: Some("axes".into()),
        r#type: Some(attribute_proto::AttributeType::Ints as i32),
        ints: vec![1],
        ..Default::default()
    });
    let as_attr = model_at(graph(vec![n], x(), vec![], &["y"]), 11);
    for m in [as_input, as_attr] {
        let inf = infer(&m, &Options::default());
        assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
        let h = &inf.contract.dims["h"];
        assert_eq!((h.min, h.max, h.exact), (1, Some(1), true), "{h:?}");
        assert!(!inf.contract.dims.contains_key("n"));
    }
}

/// A condition inside a branch holds only where that branch runs: with `c` unknown, the
/// contract keeps it but is not exact. onnxruntime 1.32 runs x of [2, 3] with c false and
/// refuses it with c true (the then-branch squeezes axis 1); both run [2, 1].
#[test]
fn a_condition_in_an_unknown_branch_is_not_exact() {
    let then_g = graph(vec![node("Squeeze", &["x", "ax"], &["t"])], vec![], vec![ints_init("ax", &[1])], &["t"]);
    let else_g = graph(vec![node("Identity", &["x"], &["e"])], vec![], vec![], &["e"]);
    let mut if_node = node("If", &["c"], &["y"]);
    if_node.attribute = vec![branch("then_branch", then_g), branch("else_branch", else_g)];
    let inputs = vec![input("c", tensor_proto::DataType::Bool, &[]), f32_input("x", &[D::S("n"), D::S("s")])];
    let inf = infer(&model(graph(vec![if_node], inputs, vec![], &["y"])), &Options::default());
    let s = &inf.contract.dims["s"];
    assert_eq!((s.max, s.exact), (Some(1), false), "{s:?}");
}

/// A GatherND of one index per tuple, `mask[arange(s)]` (the dynamo exports' mask positions):
/// each index within the mask. onnxruntime 1.32 runs (s, ms) = (3, 3) and (2, 5) and refuses
/// (3, 2), (4, 3) and (5, 3); it does the same with the slice `arange(s)[1:]`, whose bounds
/// inference keeps but does not know to be reached, so that it leaves the sizes not exact.
#[test]
fn gather_nd_of_positions_needs_the_mask_to_hold_them() {
    let build = |slice: bool| {
        let mut nodes = vec![
            node("Shape", &["x"], &["sx"]),
            node("Gather", &["sx", "one_s"], &["s"]),
            node("Range", &["zero_s", "s", "one_s"], &["r"]),
        ];
        nodes.push(if slice { node("Slice", &["r", "one", "big"], &["p"]) } else { node("Identity", &["r"], &["p"]) });
        nodes.push(node("Unsqueeze", &["p", "one"], &["idx"]));
        nodes.push(node("GatherND", &["mask", "idx"], &["y"]));
        let inputs =
            vec![f32_input("x", &[D::S("b"), D::S("s")]), input("mask", tensor_proto::DataType::Int64, &[D::S("ms")])];
        let inits = vec![scalar("zero_s", 0), scalar("one_s", 1), ints_init("one", &[1]), ints_init("big", &[1000])];
        infer(&model(graph(nodes, inputs, inits, &["y"])), &Options::default())
    };
    let inf = build(false);
    for (s, ms, runs) in [(3, 3, true), (2, 5, true), (3, 2, false), (4, 3, false), (5, 3, false)] {
        let value = |t: &onnx_bcast::shape::Term| match t.as_name() {
            Some("s") => Some(s),
            Some("ms") => Some(ms),
            _ => Some(1),
        };
        let holds = inf.constraints.iter().all(|c| c.assumption.holds(&value) == Some(true));
        assert_eq!(holds, runs, "{s} {ms}: {:?}", inf.constraints);
    }
    assert!(inf.contract.relations.iter().all(|r| !r.condition.contains("indices")), "{:?}", inf.contract.relations);
    let sliced = build(true);
    assert!(sliced.contract.relations.iter().any(|r| r.condition.contains("indices")), "{:?}", sliced.contract);
}

/// A graph output declared [3] over `Relu(x)`, x [n]. onnxruntime 1.32 runs it at n=5 and
/// returns y [5], with a warning only ("Expected shape from model of {3} does not match actual
/// shape of {5} for output y"), but the same clash at known sizes is this tool's error.
fn output_declared_over_a_term() -> Model {
    let mut g = graph(
        vec![node("Relu", &["x"], &["t"]), node("Identity", &["t"], &["y"])],
        vec![f32_input("x", &[D::S("n")])],
        vec![],
        &[],
    );
    g.output = vec![f32_input("y", &[D::N(3)])];
    model(g)
}

/// A graph output's known size where inference has a term is a condition the contract solves:
/// it said nothing, and `--dim n=5` then found the error.
#[test]
fn a_graph_output_declared_known_over_a_term_is_a_condition() {
    let m = output_declared_over_a_term();
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "t"), Some(&vec![Dim::sym("n")]));
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![d(3)]));
    assert!(inf.contract.accepts("n", 3) && !inf.contract.accepts("n", 5), "{:?}", inf.contract);
    assert_eq!(inf.contract.dims["n"].text, "only 3");
    let bound = Options { bindings: [("n".into(), 5)].into(), ..Options::default() };
    let inf = infer(&m, &bound);
    assert_eq!(codes(&inf), vec!["declared-shape-mismatch"]);
    assert_eq!(inf.diagnostics[0].severity, onnx_bcast::Severity::Error);
}

/// PP-OCR's detector in small: x [1, 4, h] pooled by 2 (`a1`, `r`) and by 4 (`a2`), `a2`
/// resized by 2 (`up`) and added to `a1`. The value_info declares `up` of `a1`'s size,
/// `floor((h-1)/2)+1`, where it is `floor((h-1)/4)*2+2`: false at h = 1 and 2, where the Add
/// still broadcasts (1 against 2). With `declared`, onnxruntime 1.32 refuses h = 1 and 2 ("Shape
/// mismatch attempting to re-use buffer. {1,4,1} != {1,4,2}": it gave `up` the freed buffer of
/// `r`, declared alike), as it refuses PP-OCRv5's detector at sizes 1 to 4; without the
/// value_info it runs both. Without the Relu no buffer of that size is free, and it runs both
/// with the value_info too: so the dim is not exact. Both run 3, 4, 7, 8, 11, 12 and refuse 5,
/// 6, 9, 10, 13 (the Add: 3 against 4).
fn declared_resize(declared: bool) -> Model {
    let pool = |from: &str, to: &str| {
        crate::build::with_ints(
            crate::build::with_ints(node("MaxPool", &[from], &[to]), "kernel_shape", &[1]),
            "strides",
            &[2],
        )
    };
    let nodes = vec![
        pool("x", "a1"),
        node("Relu", &["a1"], &["r"]),
        pool("r", "a2"),
        node("Resize", &["a2", "", "scales"], &["up"]),
        node("Add", &["a1", "up"], &["y"]),
    ];
    let scales = crate::build::floats("scales", &[3], &[1.0, 1.0, 2.0]);
    let mut g = graph(nodes, vec![f32_input("x", &[D::N(1), D::N(4), D::S("h")])], vec![scales], &["y"]);
    if declared {
        let decl = |n: &str, size: &'static str| f32_input(n, &[D::N(1), D::N(4), D::S(size)]);
        let half = "floor((h-1)/2)+1";
        g.value_info = vec![decl("a1", half), decl("r", half), decl("a2", "floor((h-1)/4)+1"), decl("up", half)];
    }
    model(g)
}

/// A size value_info declares over the same input dim as the term inference computes is the
/// condition that they are equal: the contract refused no size that only the declaration
/// makes onnxruntime refuse.
#[test]
fn a_declared_term_unlike_the_inferred_one_is_a_condition() {
    let sizes = |m: &Model| {
        let inf = infer(m, &Options::default());
        assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
        let accepted: Vec<i64> = (1..=13).filter(|h| inf.contract.accepts("h", *h)).collect();
        (accepted, inf)
    };
    let (plain, inf) = sizes(&declared_resize(false));
    assert_eq!(plain, [1, 2, 3, 4, 7, 8, 11, 12]);
    assert!(inf.contract.dims["h"].exact);
    let (accepted, inf) = sizes(&declared_resize(true));
    assert_eq!(accepted, [3, 4, 7, 8, 11, 12]);
    let h = &inf.contract.dims["h"];
    assert!(!h.exact, "{h:?}");
    let ce = h.counterexample.as_ref().unwrap();
    assert_eq!(ce.value, 1);
    assert!(ce.message.contains("computes 2 at axis 2 of 'up', which the model declares 1"), "{}", ce.message);
    // Declared once, whatever the number of tensors declaring it.
    let declared: Vec<_> = inf.constraints.iter().filter_map(|c| c.declared.as_ref()).collect();
    assert_eq!(declared.len(), 1, "{:?}", inf.constraints);
    assert!(!declared[0].output);
    // `annotate` writes what `up` is, not the false name: onnxruntime then runs h = 1 and 2
    // again, as it does PP-OCRv4's detector once annotated after onnxruntime's own
    // `symbolic_shape_infer --auto_merge` declared its Resize outputs alike.
    let mut m = declared_resize(true);
    onnx_bcast::rewrite::annotate(&mut m, &inf);
    let saved = ModelProto::decode(onnx_bcast::io::encode(&m).as_slice()).unwrap().graph.unwrap();
    let up = saved.value_info.iter().find(|v| v.name() == "up").unwrap();
    assert_eq!(up, &f32_input("up", &[D::N(1), D::N(4), D::S("floor((h-1)/4)*2+2")]));
    let (accepted, inf) = sizes(&m);
    assert_eq!(accepted, plain);
    assert!(inf.contract.dims["h"].exact);
}

/// A graph output declared `[2, seq]` over `x[:, 1:]`, x [2, seq]: false at every size. Bound
/// with `--dim` it is the `declared-shape-mismatch` error at each (onnxruntime 1.32 runs it at
/// seq = 5 and returns [2, 4]); unbound it was no finding, and is now that error too, not an
/// `unsatisfiable` model.
#[test]
fn a_graph_output_declared_false_at_every_size_is_a_declared_shape_error() {
    let nodes = vec![node("Slice", &["x", "one", "end", "one"], &["y"])];
    let inits = vec![ints_init("one", &[1]), ints_init("end", &[i64::MAX])];
    let mut g = graph(nodes, vec![f32_input("x", &[D::N(2), D::S("seq")])], inits, &[]);
    g.output = vec![f32_input("y", &[D::N(2), D::S("seq")])];
    let m = model(g);
    let inf = infer(&m, &Options::default());
    assert_eq!(codes(&inf), vec!["declared-shape-mismatch"]);
    assert!(
        inf.diagnostics[0].message.contains("graph output 'y' is declared unlike"),
        "{}",
        inf.diagnostics[0].message
    );
    let bound = infer(&m, &Options { bindings: [("seq".into(), 5)].into(), ..Options::default() });
    assert_eq!(codes(&bound), vec!["declared-shape-mismatch"]);
}

/// RoBERTa's positions, `cumsum(ids != 1, axis 1) * (ids != 1) + 1`, into a table of 64.
fn roberta_positions() -> Model {
    let table = TensorProto { dims: vec![64, 4], ..f32_init("table", 256) };
    let cast =
        |from: &str, to: &str, ty: tensor_proto::DataType| with_int(node("Cast", &[from], &[to]), "to", ty as i64);
    let nodes = vec![
        node("Equal", &["ids", "one_s"], &["pad"]),
        node("Not", &["pad"], &["keep"]),
        cast("keep", "mask", tensor_proto::DataType::Int32),
        node("CumSum", &["mask", "one_s"], &["sums"]),
        node("Mul", &["sums", "mask"], &["kept"]),
        cast("kept", "kept64", tensor_proto::DataType::Int64),
        node("Add", &["kept64", "one_s"], &["pos"]),
        node("Gather", &["table", "pos"], &["e"]),
    ];
    let ids = input("ids", tensor_proto::DataType::Int64, &[D::S("b"), D::S("s")]);
    model(graph(nodes, vec![ids], vec![scalar("one_s", 1), table], &["e"]))
}

/// The running sum reads the length of its axis: onnxruntime 1.32 runs the model above at
/// (b, s) = (2, 62) and refuses (2, 63) with ids of 5 ("indices element out of data bounds,
/// idx=64"), and runs (2, 100) with ids of 1, all padding. The contract said nothing of s; it
/// now names the Gather as a relation over s alone, which is then not exact.
#[test]
fn a_running_sum_of_a_mask_into_a_table_reads_its_axis() {
    let m = roberta_positions();
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    let relations: Vec<_> = inf.contract.relations.iter().map(|r| (r.dims.clone(), r.node.as_str())).collect();
    assert_eq!(relations, vec![(vec!["s".to_string()], "Gather_e")], "{:?}", inf.contract.relations);
    assert!(inf.contract.relations[0].condition.contains("the indices of Gather_e"));
}

/// A ScatterND whose index length is a symbol gives the data's shape (it once read the
/// unknown length as scalar indices, an error). onnxruntime 1.32 runs it at k = 1.
#[test]
fn scatter_nd_of_a_symbolic_index_length_keeps_the_data_shape() {
    let i = input("i", tensor_proto::DataType::Int64, &[D::N(2), D::S("k")]);
    let inputs = vec![f32_input("x", &[D::N(4), D::N(5)]), i, f32_input("u", &[D::N(2), D::N(5)])];
    let m = model(graph(vec![node("ScatterND", &["x", "i", "u"], &["y"])], inputs, vec![], &["y"]));
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert_eq!(shape_of(&m, &inf, "y"), Some(&vec![d(4), d(5)]));
}

/// A zero point that must hold one value, declared `[k]`, is the condition k = 1, not an
/// error. onnxruntime 1.32 runs ConvInteger at k = 1 and refuses k = 2
/// ("IsScalarOr1ElementVector(X_Zero_Point) was false").
#[test]
fn one_value_of_a_symbolic_length_is_a_condition() {
    use tensor_proto::DataType::Uint8 as U8;
    let inputs = vec![
        input("x", U8, &[D::N(1), D::N(1), D::N(3), D::N(3)]),
        input("w", U8, &[D::N(1), D::N(1), D::N(1), D::N(1)]),
        input("xz", U8, &[D::S("k")]),
    ];
    let m = model(graph(vec![node("ConvInteger", &["x", "w", "xz"], &["y"])], inputs, vec![], &["y"]));
    let inf = infer(&m, &Options::default());
    assert!(inf.diagnostics.is_empty(), "{:?}", inf.diagnostics);
    assert!(inf.contract.accepts("k", 1) && !inf.contract.accepts("k", 2), "{:?}", inf.contract);
}

/// BART's `shift_tokens_right` as TorchScript writes it: ScatterND (or GatherND) of index
/// tuples `(arange(b)[:, None], arange(s)[1:])` expanded to [b, s-1], empty where s is 1.
fn shifted_tuples(op: &str) -> Model {
    let nodes = vec![
        node("Shape", &["x"], &["sh"]),
        node("Gather", &["sh", "zero_s"], &["b"]),
        node("Gather", &["sh", "one_s"], &["s"]),
        node("Range", &["zero_s", "b", "one_s"], &["rb"]),
        node("Reshape", &["rb", "col"], &["rbc"]),
        node("Range", &["zero_s", "s", "one_s"], &["rs"]),
        node("Slice", &["rs", "one", "end", "zero"], &["rs1"]),
        node("Sub", &["s", "one_s"], &["sm1"]),
        node("Unsqueeze", &["b", "zero"], &["bu"]),
        node("Unsqueeze", &["sm1", "zero"], &["su"]),
        with_int(node("Concat", &["bu", "su"], &["target"]), "axis", 0),
        node("Expand", &["rbc", "target"], &["eb"]),
        node("Expand", &["rs1", "target"], &["es"]),
        node("Unsqueeze", &["eb", "last"], &["ub"]),
        node("Unsqueeze", &["es", "last"], &["us"]),
        with_int(node("Concat", &["ub", "us"], &["idx"]), "axis", -1),
        node("Slice", &["x", "zero", "last", "one"], &["upd"]),
        if op == "ScatterND" { node(op, &["x", "idx", "upd"], &["y"]) } else { node(op, &["x", "idx"], &["y"]) },
    ];
    let inits = vec![
        scalar("zero_s", 0),
        scalar("one_s", 1),
        ints_init("zero", &[0]),
        ints_init("one", &[1]),
        ints_init("last", &[-1]),
        ints_init("col", &[-1, 1]),
        ints_init("end", &[i64::MAX]),
    ];
    model(graph(nodes, vec![f32_input("x", &[D::S("b"), D::S("s")])], inits, &["y"]))
}

/// Index tuples that are empty at some sizes fit where their bounds do: where they are not
/// empty the bounds hold, and empty ones index nothing. onnxruntime 1.32 runs both models at
/// (b, s) = (2, 1), (1, 1), (2, 5) and (3, 64). Their indices were a relation over b and s.
#[test]
fn index_tuples_empty_at_some_sizes_fit_where_their_bounds_do() {
    for op in ["ScatterND", "GatherND"] {
        let m = shifted_tuples(op);
        let inf = infer(&m, &Options::default());
        assert!(inf.diagnostics.is_empty(), "{op}: {:?}", inf.diagnostics);
        assert!(inf.contract.dims.is_empty() && inf.contract.relations.is_empty(), "{op}: {:?}", inf.contract);
    }
    let m = shifted_tuples("GatherND");
    let s_1 = Dim::sym("s").sub(&d(1));
    assert_eq!(shape_of(&m, &infer(&m, &Options::default()), "y"), Some(&vec![Dim::sym("b"), s_1]));
}

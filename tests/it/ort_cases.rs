//! Shapes onnxruntime 1.32 gives at run time (CPUExecutionProvider, graph optimizations off)
//! where inference once said otherwise, found by `scripts/ort_diff.py`. Each row is a one-node
//! model (float inputs of concrete shapes, int64 initializers its rule reads) with the shape
//! of output `y` that onnxruntime produced, or `None` where onnxruntime refuses the model: then
//! inference must report an error finding on the node.

use crate::build::{self, input, node, typed, with_floats, with_int, with_ints, with_str, with_strs};

use onnx_bcast::infer::{infer, Options};
use onnx_bcast::io::proto::attribute_proto::AttributeType;
use onnx_bcast::io::proto::{
    tensor_proto::DataType, AttributeProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
};
use onnx_bcast::shape::Dim;
use onnx_bcast::{Model, Severity};

/// An int64 initializer `name` of shape `dims` holding `values`.
type Const<'a> = (&'a str, &'a [i64], &'a [i64]);

fn case(opset: i64, inputs: &[(&str, &[i64])], consts: &[Const<'_>], n: NodeProto) -> ModelProto {
    let inputs = inputs.iter().map(|(name, shape)| input(name, shape)).collect();
    let mut m = build::model(opset, inputs, vec![n], &["y"]);
    let g = m.graph.as_mut().unwrap();
    g.initializer = consts
        .iter()
        .map(|(name, dims, values)| TensorProto {
            name: Some(name.to_string()),
            dims: dims.to_vec(),
            data_type: Some(DataType::Int64 as i32),
            int64_data: values.to_vec(),
            ..Default::default()
        })
        .collect();
    m
}

fn dft(inputs: &[&str]) -> NodeProto {
    with_int(node("dft", "DFT", inputs, &["y"]), "onesided", 1)
}

/// STFT-17 of signal `s` every `step` samples, with a window input `w` of shape `window` and
/// an int64 scalar frame_length, each where given.
fn stft(s: &[i64], step: &'static [i64], window: Option<&[i64]>, frame: Option<&'static [i64]>) -> ModelProto {
    let mut inputs = vec![("s", s)];
    inputs.extend(window.map(|w| ("w", w)));
    let mut consts: Vec<Const> = vec![("st", &[], step)];
    consts.extend(frame.map(|f| ("fl", &[] as &[i64], f)));
    let names = ["s", "st", if window.is_some() { "w" } else { "" }, if frame.is_some() { "fl" } else { "" }];
    let used = if frame.is_some() { 4 } else { 3 - usize::from(window.is_none()) };
    case(17, &inputs, &consts, node("stft", "STFT", &names[..used], &["y"]))
}

fn conv_t(x: &[i64], w: &[i64], auto_pad: &str, stride: i64, opad: i64) -> ModelProto {
    let n = with_ints(node("ct", "ConvTranspose", &["x", "w"], &["y"]), "strides", &[stride, stride]);
    let n = with_ints(with_str(n, "auto_pad", auto_pad), "output_padding", &[opad, opad]);
    case(22, &[("x", x), ("w", w)], &[], n)
}

/// A loss with `reduction="none"`: input `x`, int64 target `t`, optional weight `w`.
fn loss(op: &str, x: &[i64], t: &[i64], w: Option<&[i64]>) -> ModelProto {
    loss_at(13, op, x, t, w)
}

fn loss_at(opset: i64, op: &str, x: &[i64], t: &[i64], w: Option<&[i64]>) -> ModelProto {
    let mut inputs = vec![input("x", x), typed("t", DataType::Int64, t)];
    inputs.extend(w.map(|w| input("w", w)));
    let names: Vec<&str> = ["x", "t", "w"][..inputs.len()].to_vec();
    let n = with_str(node("loss", op, &names, &["y"]), "reduction", "none");
    build::model(opset, inputs, vec![n], &["y"])
}

/// A normalization of `x` over the axes from `axis` with `scale` and an optional `bias`.
fn norm(op: &str, x: &[i64], scale: &[i64], bias: Option<&[i64]>, axis: i64) -> ModelProto {
    let mut inputs = vec![input("x", x), input("s", scale)];
    inputs.extend(bias.map(|b| input("b", b)));
    let names: Vec<&str> = ["x", "s", "b"][..inputs.len()].to_vec();
    let opset = if op == "RMSNormalization" { 23 } else { 17 };
    build::model(opset, inputs, vec![with_int(node("norm", op, &names, &["y"]), "axis", axis)], &["y"])
}

/// LayerNormalization-17 of x [2, 3] with its mean and inverse deviation asked for.
fn layer_norm_stats(stash_type: i64) -> ModelProto {
    let n = node("norm", "LayerNormalization", &["x", "s"], &["y", "mean", "inv"]);
    build::model(17, vec![input("x", &[2, 3]), input("s", &[3])], vec![with_int(n, "stash_type", stash_type)], &["y"])
}

/// TfIdfVectorizer-9 (TF) of 4 int64 values, counting the unigram 2.
fn tfidf_grams(min: i64, max: i64, skip: i64) -> ModelProto {
    let n = with_str(node("t", "TfIdfVectorizer", &["x"], &["y"]), "mode", "TF");
    let n = with_int(with_int(with_int(n, "min_gram_length", min), "max_gram_length", max), "max_skip_count", skip);
    let n = with_ints(with_ints(with_ints(n, "ngram_counts", &[0]), "ngram_indexes", &[0]), "pool_int64s", &[2]);
    build::model(9, vec![typed("x", DataType::Int64, &[4])], vec![n], &["y"])
}

/// TfIdfVectorizer-9 counting unigrams and bigrams, the bigrams from pool entry 1 on.
fn bigrams() -> ModelProto {
    with_ints_at(tfidf_grams(1, 2, 0), "ngram_counts", &[0, 1])
}

/// A unigram and a bigram (pool [2, 3, 4]), counted at `indexes`.
fn tfidf_bigram(indexes: &[i64]) -> ModelProto {
    with_ints_at(with_ints_at(bigrams(), "pool_int64s", &[2, 3, 4]), "ngram_indexes", indexes)
}

/// The same in IDF mode, weighing the n-grams by `weights`.
fn tfidf_weighted(weights: &[f32]) -> ModelProto {
    let mut m = tfidf_bigram(&[0, 1]);
    let n = &mut m.graph.as_mut().unwrap().node[0];
    n.attribute.retain(|a| a.name() != "mode");
    *n = with_floats(with_str(std::mem::take(n), "mode", "IDF"), "weights", weights);
    m
}

/// QuantizeLinear-21 of x [2, 3] by a scalar scale with a uint8 zero point, to `to`.
fn quantize_to(to: DataType) -> ModelProto {
    let n = with_int(node("q", "QuantizeLinear", &["x", "s", "z"], &["y"]), "output_dtype", to as i64);
    build::model(
        21,
        vec![input("x", &[2, 3]), input::<i64>("s", &[]), typed::<i64>("z", DataType::Uint8, &[])],
        vec![n],
        &["y"],
    )
}

/// QuantizeLinear of x [2, 3] at `opset` by a scalar scale with a uint8 zero point.
fn quantize_at(opset: i64) -> ModelProto {
    let n = node("q", "QuantizeLinear", &["x", "s", "z"], &["y"]);
    let inputs = vec![input("x", &[2, 3]), input::<i64>("s", &[]), typed::<i64>("z", DataType::Uint8, &[])];
    build::model(opset, inputs, vec![n], &["y"])
}

/// DequantizeLinear-21 of uint8 x [2, 3] by a scalar scale and zero point.
fn dequantize() -> ModelProto {
    let n = node("q", "DequantizeLinear", &["x", "s", "z"], &["y"]);
    let inputs = vec![
        typed::<i64>("x", DataType::Uint8, &[2, 3]),
        input::<i64>("s", &[]),
        typed::<i64>("z", DataType::Uint8, &[]),
    ];
    build::model(21, inputs, vec![n], &["y"])
}

fn gather_el(x: &[i64], i: &[i64], axis: i64) -> ModelProto {
    let n = with_int(node("ge", "GatherElements", &["x", "i"], &["y"]), "axis", axis);
    build::model(13, vec![input("x", x), typed("i", DataType::Int64, i)], vec![n], &["y"])
}

/// Gather along axis 0, or GatherND with no batch axes, of `x` by int64 indices `i`.
fn take(op: &str, x: &[i64], i: &[i64]) -> ModelProto {
    build::model(
        13,
        vec![input("x", x), typed("i", DataType::Int64, i)],
        vec![node("g", op, &["x", "i"], &["y"])],
        &["y"],
    )
}

fn grid(x: &[i64], g: &[i64]) -> ModelProto {
    case(16, &[("x", x), ("g", g)], &[], node("gs", "GridSample", &["x", "g"], &["y"]))
}

/// OneHot of 3 indices, depth 10, with `values` of that shape.
fn one_hot(values: &[i64]) -> ModelProto {
    let n = node("oh", "OneHot", &["i", "d", "v"], &["y"]);
    case(11, &[("v", values)], &[("i", &[3], &[0, 1, 2]), ("d", &[], &[10])], n)
}

fn conv(x: &[i64], w: &[i64], group: i64, bias: Option<&[i64]>) -> ModelProto {
    let mut inputs = vec![("x", x), ("w", w)];
    inputs.extend(bias.map(|b| ("b", b)));
    let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
    case(11, &inputs, &[], with_int(node("conv", "Conv", &names, &["y"]), "group", group))
}

fn range() -> NodeProto {
    node("range", "Range", &["s", "l", "d"], &["y"])
}

/// A pool of `x`, with a 2x2 window unless global.
fn pool(op: &str, x: &[i64]) -> ModelProto {
    let n = node("pool", op, &["x"], &["y"]);
    let n = if op.starts_with("Global") { n } else { with_ints(n, "kernel_shape", &[2, 2]) };
    case(12, &[("x", x)], &[], n)
}

/// A per-channel normalization of x [2, 3, 4]: `scale` first, `rest` for every other
/// per-channel input (BatchNormalization's bias, mean and variance; InstanceNormalization's B).
fn norm_c(op: &str, opset: i64, scale: &[i64], rest: &[i64]) -> ModelProto {
    let names: &[&str] = if op == "BatchNormalization" { &["x", "s", "b", "m", "v"] } else { &["x", "s", "b"] };
    let shapes = names.iter().enumerate().map(|(i, n)| {
        (
            *n,
            match i {
                0 => &[2, 3, 4][..],
                1 => scale,
                _ => rest,
            },
        )
    });
    case(opset, &shapes.collect::<Vec<_>>(), &[], node("norm", op, names, &["y"]))
}

/// GroupNormalization of x [3, 4, 2, 2] in 2 groups.
fn group_norm(opset: i64, scale: &[i64], bias: &[i64]) -> ModelProto {
    let n = with_int(node("gn", "GroupNormalization", &["x", "s", "b"], &["y"]), "num_groups", 2);
    case(opset, &[("x", &[3, 4, 2, 2]), ("s", scale), ("b", bias)], &[], n)
}

fn feature_extractor(x: &[i64], y: &[i64]) -> ModelProto {
    let mut n = node("afe", "ArrayFeatureExtractor", &["x", "i"], &["y"]);
    n.domain = Some("ai.onnx.ml".into());
    let mut m = build::model(17, vec![input("x", x), typed("i", DataType::Int64, y)], vec![n], &["y"]);
    m.opset_import.push(OperatorSetIdProto { domain: Some("ai.onnx.ml".into()), version: Some(3) });
    m
}

/// A recurrent `op` with hidden_size 4 over x [2, 3, 5] and its further inputs of `shapes`
/// (W, R, B, sequence_lens (int32), initial_h, ...).
fn rnn(op: &str, shapes: &[&[i64]]) -> ModelProto {
    let names = ["x", "w", "r", "b", "sl", "h0", "c0", "p"];
    let inputs = std::iter::once(&[2, 3, 5][..]).chain(shapes.iter().copied()).zip(names);
    let inputs = inputs.map(|(s, n)| if n == "sl" { typed(n, DataType::Int32, s) } else { input(n, s) }).collect();
    let mut n = with_int(node("rnn", op, &names[..shapes.len() + 1], &["y"]), "hidden_size", 4);
    n.output.push("y_h".into());
    build::model(14, inputs, vec![n], &["y"])
}

/// An ai.onnx.ml TreeEnsemble of one branch reading feature `feature` over x of shape `x`.
fn tree_ensemble(x: &[i64], feature: i64) -> ModelProto {
    let n = node("t", "TreeEnsemble", &["x"], &["y"]);
    let n = with_ints(with_ints(n, "tree_roots", &[0]), "nodes_featureids", &[feature]);
    let n = with_ints(with_ints(n, "nodes_truenodeids", &[0]), "nodes_falsenodeids", &[1]);
    let mut n = with_ints(with_ints(n, "nodes_trueleafs", &[1]), "nodes_falseleafs", &[1]);
    for (name, t) in [
        (
            "nodes_modes",
            TensorProto {
                dims: vec![1],
                data_type: Some(DataType::Uint8 as i32),
                int32_data: vec![0],
                ..Default::default()
            },
        ),
        ("nodes_splits", build::floats("", &[1], &[0.5])),
        ("leaf_weights", build::floats("", &[2], &[1.0, 2.0])),
    ] {
        let r#type = Some(AttributeType::Tensor as i32);
        n.attribute.push(AttributeProto { name: Some(name.into()), r#type, t: Some(t), ..Default::default() });
    }
    let n = with_int(with_ints(n, "leaf_targetids", &[0, 0]), "n_targets", 1);
    ml(with_int(n, "aggregate_function", 1), x, 5)
}

/// The same tree whose branch tests membership (mode 6) in `members`, when given.
fn member_tree(members: Option<&[f32]>) -> ModelProto {
    let mut m = tree_ensemble(&[4, 3], 0);
    let n = &mut m.graph.as_mut().unwrap().node[0];
    for a in n.attribute.iter_mut().filter(|a| a.name() == "nodes_modes") {
        a.t.as_mut().unwrap().int32_data = vec![6];
    }
    if let Some(v) = members {
        let t = build::floats("", &[v.len() as i64], v);
        let r#type = Some(AttributeType::Tensor as i32);
        n.attribute.push(AttributeProto {
            name: Some("membership_values".into()),
            r#type,
            t: Some(t),
            ..Default::default()
        });
    }
    m
}

/// `m` with its first node's activation `act` and float attributes `floats`.
fn fused_act(m: ModelProto, act: &str, floats: &[(&str, f32)]) -> ModelProto {
    let mut m = without(m, "activation");
    let n = &mut m.graph.as_mut().unwrap().node[0];
    *n = with_str(std::mem::take(n), "activation", act);
    for (name, v) in floats {
        *n = with_attr(std::mem::take(n), name, Some(*v), &[]);
    }
    m
}

/// FusedConv of x [1, 2, 5, 5] by w [3, 2, 3, 3], with `params` as activation_params if any.
fn fused_conv(params: &[f32]) -> ModelProto {
    let n = node("c", "FusedConv", &["x", "w"], &["y"]);
    let n = if params.is_empty() { n } else { with_floats(n, "activation_params", params) };
    ms(MS, n, &[("x", &[1, 2, 5, 5], DataType::Float), ("w", &[3, 2, 3, 3], DataType::Float)], &[])
}

/// QLinearMul-1 of uint8 [2, 3] and [3], input `empty` left empty.
fn qlinear_mul(empty: usize) -> ModelProto {
    use DataType::{Float as F, Uint8 as U8};
    let all = ["a", "as", "az", "b", "bs", "bz", "cs", "cz"];
    let mut names: Vec<&str> = all.to_vec();
    names[empty] = "";
    while names.last() == Some(&"") {
        names.pop();
    }
    let shapes: [&[i64]; 8] = [&[2, 3], &[], &[], &[3], &[], &[], &[], &[]];
    let ins: Vec<(&str, &[i64], DataType)> = all
        .iter()
        .zip(shapes)
        .filter(|(n, _)| names.contains(n))
        .map(|(n, s)| (*n, s, if n.ends_with('s') { F } else { U8 }))
        .collect();
    ms(MS, node("q", "QLinearMul", &names, &["y"]), &ins, &[])
}

/// QLinearGlobalAveragePool-1 of uint8 [1, 2, 5, 6] with x_zero_point (input 2) left empty.
fn qlinear_gap() -> ModelProto {
    use DataType::{Float as F, Uint8 as U8};
    let ins: &[(&str, &[i64], DataType)] = &[("x", &[1, 2, 5, 6], U8), ("xs", &[], F), ("ys", &[], F), ("yz", &[], U8)];
    ms(MS, node("q", "QLinearGlobalAveragePool", &["x", "xs", "", "ys", "yz"], &["y"]), ins, &[])
}

/// MultiHeadAttention-1 of a query [2, 3, 8] and a value [2, 4, 8] with no key, 2 heads.
fn mha_no_key() -> ModelProto {
    let n = with_int(node("m", "MultiHeadAttention", &["q", "", "v"], &["y"]), "num_heads", 2);
    ms(MS, n, &[("q", &[2, 3, 8], DataType::Float), ("v", &[2, 4, 8], DataType::Float)], &[])
}

/// `m` with its first node's string attribute `name` set to `value`.
fn with_str_at(m: ModelProto, name: &str, value: &str) -> ModelProto {
    let mut m = without(m, name);
    let n = &mut m.graph.as_mut().unwrap().node[0];
    *n = with_str(std::mem::take(n), name, value);
    m
}

/// The contrib Pad-1 of x [2, 3] by [0, 1, 0, 1] in `mode`.
fn contrib_pad(mode: &str) -> ModelProto {
    let n = with_str(node("p", "Pad", &["x", "p"], &["y"]), "mode", mode);
    ms(MS, n, &[("x", &[2, 3], DataType::Float)], &[("p", &[4], &[0, 1, 0, 1], DataType::Int64)])
}

/// The contrib GridSample-1 of x [1, 1, 4, 4] on a grid [1, 3, 3, 2] in `mode`.
fn contrib_grid(mode: &str) -> ModelProto {
    let n = with_str(node("g", "GridSample", &["x", "g"], &["y"]), "mode", mode);
    ms(MS, n, &[("x", &[1, 1, 4, 4], DataType::Float), ("g", &[1, 3, 3, 2], DataType::Float)], &[])
}

/// `m` without its first node's attribute `name`.
fn without(mut m: ModelProto, name: &str) -> ModelProto {
    m.graph.as_mut().unwrap().node[0].attribute.retain(|a| a.name() != name);
    m
}

/// `op` (an ai.onnx.ml tree ensemble of version 3) of one branch reading feature `feature`
/// and two leaves claiming feature 7, over x of shape `x`.
fn tree_v3(op: &str, x: &[i64], feature: i64) -> ModelProto {
    let n = node("t", op, &["x"], if op == "TreeEnsembleClassifier" { &["l", "y"] } else { &["y"] });
    let n = with_ints(with_ints(n, "nodes_treeids", &[0, 0, 0]), "nodes_nodeids", &[0, 1, 2]);
    let n = with_ints(with_ints(n, "nodes_featureids", &[feature, 7, 7]), "nodes_truenodeids", &[1, 0, 0]);
    let n = with_strs(with_ints(n, "nodes_falsenodeids", &[2, 0, 0]), "nodes_modes", &["BRANCH_LEQ", "LEAF", "LEAF"]);
    let n = with_floats(n, "nodes_values", &[0.5, 0.0, 0.0]);
    let n = match op {
        "TreeEnsembleClassifier" => {
            let n = with_ints(with_ints(n, "class_treeids", &[0, 0]), "class_nodeids", &[1, 2]);
            let n = with_ints(with_ints(n, "class_ids", &[0, 1]), "classlabels_int64s", &[0, 1]);
            with_floats(n, "class_weights", &[1.0, 1.0])
        }
        _ => {
            let n = with_ints(with_ints(n, "target_treeids", &[0, 0]), "target_nodeids", &[1, 2]);
            with_floats(with_ints(with_int(n, "n_targets", 1), "target_ids", &[0, 0]), "target_weights", &[1.0, 2.0])
        }
    };
    ml(n, x, 3)
}

/// An ai.onnx.ml node `n` over x of shape `x`, at that domain's `version`.
fn ml(mut n: NodeProto, x: &[i64], version: i64) -> ModelProto {
    n.domain = Some("ai.onnx.ml".into());
    let mut m = case(21, &[("x", x)], &[], n);
    m.opset_import.push(OperatorSetIdProto { domain: Some("ai.onnx.ml".into()), version: Some(version) });
    m
}

/// A recurrent `op` with hidden_size 4 over x of shape `x` (inputs 5 wide), W and R of one
/// direction.
fn rnn_x(op: &str, x: &[i64]) -> ModelProto {
    let gates = if op == "GRU" { 12 } else { 4 };
    let n = with_int(node("rnn", op, &["x", "w", "r"], &["y"]), "hidden_size", 4);
    case(14, &[("x", x), ("w", &[1, gates, 5]), ("r", &[1, gates, 4])], &[], n)
}

/// Attention of Q, K, V (and a mask) of `shapes`, with (q_num_heads, kv_num_heads) when given.
fn attention(shapes: &[&[i64]], heads: Option<(i64, i64)>) -> ModelProto {
    attention_at(23, shapes, heads)
}

fn attention_at(opset: i64, shapes: &[&[i64]], heads: Option<(i64, i64)>) -> ModelProto {
    let names = ["q", "k", "v", "m"];
    let inputs: Vec<(&str, &[i64])> = names.into_iter().zip(shapes.iter().copied()).collect();
    let mut n = node("att", "Attention", &names[..shapes.len()], &["y"]);
    if let Some((q, kv)) = heads {
        n = with_int(with_int(n, "q_num_heads", q), "kv_num_heads", kv);
    }
    case(opset, &inputs, &[], n)
}

/// A scatter into `x` at int64 indices of shape `i` (zeros at run time) of `updates`.
fn scatter(op: &str, x: &[i64], i: &[i64], updates: &[i64], axis: i64) -> ModelProto {
    let n = node("scatter", op, &["x", "i", "u"], &["y"]);
    let n = if op == "ScatterND" { n } else { with_int(n, "axis", axis) };
    let opset = if op == "Scatter" { 10 } else { 16 };
    build::model(opset, vec![input("x", x), typed("i", DataType::Int64, i), input("u", updates)], vec![n], &["y"])
}

/// Split of `x` into 4 outputs by num_outputs, the last one `y`.
fn split4(x: &[i64]) -> ModelProto {
    let n = with_int(node("split", "Split", &["x"], &["y0", "y1", "y2", "y"]), "num_outputs", 4);
    case(18, &[("x", x)], &[], n)
}

fn blocks(op: &str, x: &[i64]) -> ModelProto {
    case(13, &[("x", x)], &[], with_int(node("b", op, &["x"], &["y"]), "blocksize", 2))
}

/// `op` (Conv or ConvTranspose, opset 11) of x and w, with group and maybe kernel_shape.
fn conv_k(op: &str, x: &[i64], w: &[i64], group: i64, kernel: Option<&[i64]>) -> ModelProto {
    let n = with_int(node("c", op, &["x", "w"], &["y"]), "group", group);
    let n = match kernel {
        Some(k) => with_ints(n, "kernel_shape", k),
        None => n,
    };
    case(11, &[("x", x), ("w", w)], &[], n)
}

fn roi_align(x: &[i64], rois: &[i64], batch: &[i64]) -> ModelProto {
    let n = with_int(with_int(node("ra", "RoiAlign", &["x", "r", "b"], &["y"]), "output_height", 2), "output_width", 3);
    build::model(16, vec![input("x", x), input("r", rois), typed("b", DataType::Int64, batch)], vec![n], &["y"])
}

/// ReverseSequence of x by int64 lengths of shape `lens` (time_axis 1 - batch_axis).
fn reverse(x: &[i64], lens: &[i64], batch_axis: i64) -> ModelProto {
    let n = with_int(node("rs", "ReverseSequence", &["x", "s"], &["y"]), "batch_axis", batch_axis);
    let n = with_int(n, "time_axis", 1 - batch_axis);
    build::model(10, vec![input("x", x), typed("s", DataType::Int64, lens)], vec![n], &["y"])
}

/// Slice of x [4, 5] from [0, 1] to [2, 3] along `axes`.
fn slice(axes: &'static [i64]) -> ModelProto {
    let consts: &[Const] = &[("s", &[2], &[0, 1]), ("e", &[2], &[2, 3]), ("a", &[2], axes)];
    case(13, &[("x", &[4, 5])], consts, node("sl", "Slice", &["x", "s", "e", "a"], &["y"]))
}

/// `op` ("Resize" at opset 13 or "Upsample" at 9) of x [1, 1, 4, 4] by float `scales`.
fn rescale(op: &str, scales: &[f32]) -> ModelProto {
    let (opset, inputs): (i64, &[&str]) = if op == "Upsample" { (9, &["x", "s"]) } else { (13, &["x", "", "s"]) };
    let mut m = case(opset, &[("x", &[1, 1, 4, 4])], &[], node("r", op, inputs, &["y"]));
    m.graph.as_mut().unwrap().initializer.push(build::floats("s", &[4], scales));
    m
}

/// ReverseSequence of x [2, 3] (time axis 0, batch axis 1) by constant lengths.
fn rev_lens(lens: &'static [i64]) -> ModelProto {
    let n = with_int(with_int(node("rs", "ReverseSequence", &["x", "l"], &["y"]), "batch_axis", 1), "time_axis", 0);
    case(10, &[("x", &[2, 3])], &[("l", &[3], lens)], n)
}

/// QLinearMatMul of uint8 a [2, 3] and b [3, 4] with a's and b's scale and zero point of
/// `shapes` (y's scalar).
fn qmatmul(shapes: [&[i64]; 4]) -> ModelProto {
    let u8_in = |n: &str, s: &[i64]| typed(n, DataType::Uint8, s);
    let [a_s, a_z, b_s, b_z] = shapes;
    let inputs = vec![
        u8_in("a", &[2, 3]),
        input("as", a_s),
        u8_in("az", a_z),
        u8_in("b", &[3, 4]),
        input("bs", b_s),
        u8_in("bz", b_z),
        input::<i64>("ys", &[]),
        u8_in("yz", &[]),
    ];
    let n = node("q", "QLinearMatMul", &["a", "as", "az", "b", "bs", "bz", "ys", "yz"], &["y"]);
    build::model(21, inputs, vec![n], &["y"])
}

/// MelWeightMatrix of 8 bins for `dft_length`, 8192 Hz from 0 to 4096.
fn mel(dft_length: &'static [i64]) -> ModelProto {
    let n = node("m", "MelWeightMatrix", &["b", "d", "r", "lo", "hi"], &["y"]);
    let mut m = case(17, &[], &[("b", &[], &[8]), ("d", &[], dft_length), ("r", &[], &[8192])], n);
    let g = m.graph.as_mut().unwrap();
    g.initializer.extend([build::floats("lo", &[], &[0.0]), build::floats("hi", &[], &[4096.0])]);
    m
}

/// GatherND (batch_dims 1) of x [2, 3, 4] by int64 indices of shape `i`.
fn gather_nd(i: &[i64]) -> ModelProto {
    let n = with_int(node("g", "GatherND", &["x", "i"], &["y"]), "batch_dims", 1);
    build::model(13, vec![input("x", &[2, 3, 4]), typed("i", DataType::Int64, i)], vec![n], &["y"])
}

/// Opset-18 `op` (Pad, CenterCropPad or Resize) of x [2, 3, 4] along attribute or input
/// `axes`: Pad by [0, 1, 0, 4], the others to sizes [2, 2].
fn axes_twice(op: &str, axes: &'static [i64]) -> ModelProto {
    if op == "Pad" {
        let consts: &[Const] = &[("p", &[4], &[0, 1, 0, 4]), ("a", &[2], axes)];
        return case(18, &[("x", &[2, 3, 4])], consts, node("p", "Pad", &["x", "p", "", "a"], &["y"]));
    }
    let inputs: &[&str] = if op == "Resize" { &["x", "", "", "s"] } else { &["x", "s"] };
    let n = with_ints(node("n", op, inputs, &["y"]), "axes", axes);
    case(18, &[("x", &[2, 3, 4])], &[("s", &[2], &[2, 2])], n)
}

/// `m` with its first node's int attribute `name` set to `value`.
fn with_int_at(mut m: ModelProto, name: &str, value: i64) -> ModelProto {
    let n = &mut m.graph.as_mut().unwrap().node[0];
    n.attribute.retain(|a| a.name() != name);
    *n = with_int(std::mem::take(n), name, value);
    m
}

/// `m` with its first node's int-list attribute `name` set to `values`.
fn with_ints_at(mut m: ModelProto, name: &str, values: &[i64]) -> ModelProto {
    let n = &mut m.graph.as_mut().unwrap().node[0];
    n.attribute.retain(|a| a.name() != name);
    *n = with_ints(std::mem::take(n), name, values);
    m
}

/// MaxUnpool-11 of x [1, 1, 2, 2] by 2x2 windows.
fn max_unpool() -> ModelProto {
    let n = with_ints(node("u", "MaxUnpool", &["x", "i"], &["y"]), "kernel_shape", &[2, 2]);
    let inputs = vec![input("x", &[1, 1, 2, 2]), typed("i", DataType::Int64, &[1, 1, 2, 2])];
    build::model(11, inputs, vec![n], &["y"])
}

/// LabelEncoder-2 of x [2, 3] from the keys 1, 2, 3 to `values`.
fn label_encoder(values: &[f32]) -> ModelProto {
    let n = with_floats(node("l", "LabelEncoder", &["x"], &["y"]), "keys_floats", &[1.0, 2.0, 3.0]);
    ml(with_floats(n, "values_floats", values), &[2, 3], 2)
}

/// ReduceSum-13 of x [2, 3, 4] over `axes` with an int attribute set.
fn reduce_sum(axes: &'static [i64], attr: &str, value: i64) -> ModelProto {
    let n = with_int(node("r", "ReduceSum", &["x", "a"], &["y"]), attr, value);
    case(13, &[("x", &[2, 3, 4])], &[("a", &[axes.len() as i64], axes)], n)
}

fn arg_max() -> ModelProto {
    case(13, &[("x", &[2, 3, 4])], &[], with_int(node("a", "ArgMax", &["x"], &["y"]), "axis", 1))
}

fn cum_sum(attr: &str, value: i64) -> ModelProto {
    let n = with_int(node("c", "CumSum", &["x", "a"], &["y"]), attr, value);
    case(14, &[("x", &[2, 3])], &[("a", &[], &[1])], n)
}

fn cast_to(to: i64) -> ModelProto {
    case(21, &[("x", &[2, 3])], &[], with_int(node("c", "Cast", &["x"], &["y"]), "to", to))
}

/// Cast-25 of x [2, 3] to float, or CastLike-25 like a float [1], with `round_mode` given.
fn round_mode(op: &str, mode: &str) -> ModelProto {
    let n = if op == "Cast" {
        with_int(node("c", op, &["x"], &["y"]), "to", 1)
    } else {
        node("c", op, &["x", "t"], &["y"])
    };
    let inputs: &[(&str, &[i64])] = if op == "Cast" { &[("x", &[2, 3])] } else { &[("x", &[2, 3]), ("t", &[1])] };
    case(25, inputs, &[], with_str(n, "round_mode", mode))
}

/// Split-18 of x [4, 2] along axis 0 into two outputs, with num_outputs `k` and, if `sizes`,
/// a split input [2, 2].
fn split_n(k: i64, sizes: bool) -> ModelProto {
    let inputs: &[&str] = if sizes { &["x", "s"] } else { &["x"] };
    let n = with_int(node("s", "Split", inputs, &["y", "z"]), "num_outputs", k);
    case(18, &[("x", &[4, 2])], &[("s", &[2], &[2, 2])], n)
}

/// RotaryEmbedding-23 of x [2, 3, 4, 8] with position ids [2, 4] and caches [8, 4].
fn rotary_4d() -> ModelProto {
    let n = node("r", "RotaryEmbedding", &["x", "c", "s", "p"], &["y"]);
    case(23, &[("x", &[2, 3, 4, 8]), ("c", &[8, 4]), ("s", &[8, 4])], &[("p", &[2, 4], &[0, 1, 2, 3, 0, 1, 2, 3])], n)
}

/// BatchNormalization-15 of x [2, 3, 4, 4] in training mode or not, with `outputs` outputs.
fn batch_norm(training: i64, outputs: usize) -> ModelProto {
    let n = node("bn", "BatchNormalization", &["x", "s", "b", "m", "v"], &["y", "rm", "rv"][..outputs]);
    let inputs: [(&str, &[i64]); 5] = [("x", &[2, 3, 4, 4]), ("s", &[3]), ("b", &[3]), ("m", &[3]), ("v", &[3])];
    case(15, &inputs, &[], with_int(n, "training_mode", training))
}

fn flatten(opset: i64, axis: i64) -> ModelProto {
    case(opset, &[("x", &[2, 3, 4])], &[], with_int(node("f", "Flatten", &["x"], &["y"]), "axis", axis))
}

fn modulo(opset: i64, fmod: i64) -> ModelProto {
    case(opset, &[("a", &[2, 3]), ("b", &[2, 3])], &[], with_int(node("m", "Mod", &["a", "b"], &["y"]), "fmod", fmod))
}

fn grid_mode(opset: i64, mode: &str) -> ModelProto {
    let n = with_str(node("gs", "GridSample", &["x", "g"], &["y"]), "mode", mode);
    case(opset, &[("x", &[1, 1, 3, 2]), ("g", &[1, 2, 4, 2])], &[], n)
}

/// A 1x1 `op` by 2 over x [1, 1, 4, 4] at `opset`, auto_pad SAME_UPPER, with `ints`.
fn same_pool(op: &str, opset: i64, ints: &[(&str, i64)]) -> ModelProto {
    let n = with_ints(with_ints(node("p", op, &["x"], &["y"]), "kernel_shape", &[1, 1]), "strides", &[2, 2]);
    let n = ints.iter().fold(with_str(n, "auto_pad", "SAME_UPPER"), |n, (k, v)| with_int(n, k, *v));
    case(opset, &[("x", &[1, 1, 4, 4])], &[], n)
}

/// A 3x3 Conv-11 of x [1, 1, 5, 5] with pads of 0 beside `auto_pad`.
fn conv_pads(auto_pad: &str) -> ModelProto {
    with_ints_at(with_str_at(conv(&[1, 1, 5, 5], &[1, 1, 3, 3], 1, None), "auto_pad", auto_pad), "pads", &[0; 4])
}

/// Resize-19 of x [1, 1, 2, 2] to [1, 1, 4, 4] by scales or sizes, with a
/// `keep_aspect_ratio_policy`.
fn resize_policy(policy: &str, sizes: bool) -> ModelProto {
    let inputs: &[&str] = if sizes { &["x", "", "", "s"] } else { &["x", "", "s"] };
    let n = with_str(node("r", "Resize", inputs, &["y"]), "keep_aspect_ratio_policy", policy);
    if sizes {
        return case(19, &[("x", &[1, 1, 2, 2])], &[("s", &[4], &[1, 1, 4, 4])], n);
    }
    let mut m = case(19, &[("x", &[1, 1, 2, 2])], &[], n);
    m.graph.as_mut().unwrap().initializer.push(build::floats("s", &[4], &[1.0, 1.0, 2.0, 2.0]));
    m
}

fn max_pool_pad(auto_pad: &str) -> ModelProto {
    let n = with_ints(node("p", "MaxPool", &["x"], &["y"]), "kernel_shape", &[2, 2]);
    case(22, &[("x", &[1, 1, 4, 4])], &[], with_str(n, "auto_pad", auto_pad))
}

/// Resize of x [1, 1, 2, 2] to sizes [1, 1, 4, 4], roi and scales left empty.
fn resize_sizes(opset: i64) -> ModelProto {
    let n = node("r", "Resize", &["x", "", "", "s"], &["y"]);
    case(opset, &[("x", &[1, 1, 2, 2])], &[("s", &[4], &[1, 1, 4, 4])], n)
}

/// Resize-19 of x [1, 1, 2, 2] to [1, 1, 4, 4].
fn resize_nearest(mode: &str, nearest_mode: &str) -> ModelProto {
    let n = with_str(node("r", "Resize", &["x", "", "", "s"], &["y"]), "mode", mode);
    case(19, &[("x", &[1, 1, 2, 2])], &[("s", &[4], &[1, 1, 4, 4])], with_str(n, "nearest_mode", nearest_mode))
}

fn pad_by(mode: &str, x: &[i64], pads: &'static [i64]) -> ModelProto {
    let n = with_str(node("p", "Pad", &["x", "p"], &["y"]), "mode", mode);
    case(19, &[("x", x)], &[("p", &[4], pads)], n)
}

/// Pad-18 of x [2, 3] by [0, 1, 0, 1] held in pads of shape `pads`, with a constant of shape
/// `value` if given and axes [1] of shape `axes` if given (then pads [0, 1]).
fn pad_shapes(pads: &'static [i64], value: Option<&[i64]>, axes: Option<&'static [i64]>) -> ModelProto {
    let p: &[i64] = if axes.is_some() { &[0, 1] } else { &[0, 1, 0, 1] };
    let mut consts: Vec<Const> = vec![("p", pads, p)];
    consts.extend(axes.map(|a| ("a", a, &[1][..])));
    let names = ["x", "p", if value.is_some() { "c" } else { "" }, if axes.is_some() { "a" } else { "" }];
    let mut m = case(18, &[("x", &[2, 3])], &consts, node("p", "Pad", &names, &["y"]));
    if let Some(v) = value {
        let count = v.iter().product::<i64>() as usize;
        m.graph.as_mut().unwrap().initializer.push(build::floats("c", v, &vec![0.0; count]));
    }
    m
}

/// Resize-18 of x [1, 1, 4, 4] to sizes [3, 3] by tf_crop_and_resize with a roi of shape
/// `roi` (its values crop nothing), along `axes` if given.
fn crop_resize(roi: &[i64], axes: Option<&[i64]>) -> ModelProto {
    let n = with_str(
        node("r", "Resize", &["x", "roi", "", "s"], &["y"]),
        "coordinate_transformation_mode",
        "tf_crop_and_resize",
    );
    let (n, sizes): (_, &[i64]) = match axes {
        Some(a) => (with_ints(n, "axes", a), &[3, 3]),
        None => (n, &[1, 1, 3, 3]),
    };
    let mut m = case(18, &[("x", &[1, 1, 4, 4])], &[("s", &[sizes.len() as i64], sizes)], n);
    let count = roi.iter().product::<i64>() as usize;
    let values: Vec<f32> = (0..count).map(|i| if i < count / 2 { 0.0 } else { 1.0 }).collect();
    m.graph.as_mut().unwrap().initializer.push(build::floats("roi", roi, &values));
    m
}

/// MelWeightMatrix-17 of 8 bins, dft_length 16, 8192 Hz from 0 to 4096, the five inputs
/// of `shapes`, each filled with its value.
fn mel_shaped(shapes: [&'static [i64]; 5]) -> ModelProto {
    let n = node("m", "MelWeightMatrix", &["b", "d", "r", "lo", "hi"], &["y"]);
    let count = |s: &[i64]| s.iter().product::<i64>() as usize;
    let [b, d, r, lo, hi] = shapes;
    let ints = [("b", b, 8), ("d", d, 16), ("r", r, 8192)].map(|(name, s, v)| (name, s, vec![v; count(s)]));
    let consts: Vec<Const> = ints.iter().map(|(name, s, v)| (*name, *s, v.as_slice())).collect();
    let mut m = case(17, &[], &consts, n);
    let g = m.graph.as_mut().unwrap();
    g.initializer
        .extend([build::floats("lo", lo, &vec![0.0; count(lo)]), build::floats("hi", hi, &vec![4096.0; count(hi)])]);
    m
}

/// QLinearConv-10 of uint8 x [1, 2, 5, 5] by a [4, 2, 3, 3] weight, with x's, w's and y's
/// scale and zero point of `shapes` (in input order).
fn qconv(shapes: [&[i64]; 6]) -> ModelProto {
    let [xs, xz, ws, wz, ys, yz] = shapes;
    let u8_in = |n: &str, s: &[i64]| typed(n, DataType::Uint8, s);
    let inputs = vec![
        u8_in("x", &[1, 2, 5, 5]),
        input("xs", xs),
        u8_in("xz", xz),
        u8_in("w", &[4, 2, 3, 3]),
        input("ws", ws),
        u8_in("wz", wz),
        input("ys", ys),
        u8_in("yz", yz),
    ];
    let n = node("q", "QLinearConv", &["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], &["y"]);
    build::model(10, inputs, vec![n], &["y"])
}

/// ConvInteger-10 of uint8 x [1, 2, 5, 5] by a [4, 2, 3, 3] weight with zero points of `xz`
/// and `wz`.
fn conv_integer(xz: &[i64], wz: &[i64]) -> ModelProto {
    let u8_in = |n: &str, s: &[i64]| typed(n, DataType::Uint8, s);
    let inputs = vec![u8_in("x", &[1, 2, 5, 5]), u8_in("w", &[4, 2, 3, 3]), u8_in("xz", xz), u8_in("wz", wz)];
    build::model(10, inputs, vec![node("c", "ConvInteger", &["x", "w", "xz", "wz"], &["y"])], &["y"])
}

/// MatMulInteger-10 of uint8 a [4, 3] and b [3, 2] with zero points of `az` and `bz` if given.
fn matmul_integer(az: Option<&[i64]>, bz: Option<&[i64]>) -> ModelProto {
    let u8_in = |n: &str, s: &[i64]| typed(n, DataType::Uint8, s);
    let mut inputs = vec![u8_in("a", &[4, 3]), u8_in("b", &[3, 2])];
    inputs.extend(az.map(|s| u8_in("az", s)));
    inputs.extend(bz.map(|s| u8_in("bz", s)));
    let names = ["a", "b", if az.is_some() { "az" } else { "" }, if bz.is_some() { "bz" } else { "" }];
    build::model(10, inputs, vec![node("m", "MatMulInteger", &names, &["y"])], &["y"])
}

/// ConvTranspose (opset 11) of x by a [1, 2, 3, 3] weight, strides [3, 2], to `output_shape`.
fn conv_t_to(x: &[i64], output_shape: &[i64]) -> ModelProto {
    let n = with_ints(node("ct", "ConvTranspose", &["x", "w"], &["y"]), "strides", &[3, 2]);
    case(11, &[("x", x), ("w", &[1, 2, 3, 3])], &[], with_ints(n, "output_shape", output_shape))
}

/// Resize (opset 18) of x along axes 2 and 3 to `sizes` under `policy`.
fn resize_kept(policy: &str, x: &[i64], sizes: &'static [i64]) -> ModelProto {
    let n = with_ints(node("r", "Resize", &["x", "", "", "s"], &["y"]), "axes", &[2, 3]);
    case(18, &[("x", x)], &[("s", &[2], sizes)], with_str(n, "keep_aspect_ratio_policy", policy))
}

/// Resize (opset 13) of x of shape `x` to `sizes`.
/// Resize of x [1, 1, 4, 4] by scales [1, 1, 2, 2] and sizes [1, 1, 8, 8] both.
fn resize_both() -> ModelProto {
    let mut m = resize_to(&[1, 1, 4, 4], &[1, 1, 8, 8]);
    let g = m.graph.as_mut().unwrap();
    g.node[0].input[2] = "sc".into();
    g.initializer.push(build::floats("sc", &[4], &[1.0, 1.0, 2.0, 2.0]));
    m
}

fn resize_to(x: &[i64], sizes: &'static [i64]) -> ModelProto {
    let n = node("r", "Resize", &["x", "", "", "s"], &["y"]);
    case(13, &[("x", x)], &[("s", &[4], sizes)], n)
}
/// A node at `opset` over float inputs of `shapes`, in order (an empty one: left out).
fn over(opset: i64, shapes: &[&[i64]], mut n: NodeProto) -> ModelProto {
    let names = ["x0", "x1", "x2", "x3", "x4", "x5", "x6"];
    let names: Vec<&str> =
        names.into_iter().zip(shapes).map(|(name, s)| if s.is_empty() { "" } else { name }).collect();
    n.input = names.iter().map(|name| name.to_string()).collect();
    let inputs: Vec<(&str, &[i64])> =
        names.into_iter().zip(shapes.iter().copied()).filter(|(n, _)| !n.is_empty()).collect();
    case(opset, &inputs, &[], n)
}

/// LinearAttention's usual query, key and value.
const QKV: &[i64] = &[2, 3, 32];

/// LinearAttention with `update_rule` and `q_num_heads` (kv_num_heads 4) over query, key,
/// value, past_state, decay and beta of `shapes`.
fn lin_att(rule: &str, q_heads: i64, shapes: &[&[i64]]) -> ModelProto {
    let n = with_int(node("la", "LinearAttention", &[], &["y", "state"]), "q_num_heads", q_heads);
    over(27, shapes, with_str(with_int(n, "kv_num_heads", 4), "update_rule", rule))
}

/// CausalConvWithState over input [2, 4, 5] and weight, bias and past_state of `shapes`, with
/// `activation`.
fn causal_conv(shapes: &[&[i64]], activation: &str) -> ModelProto {
    let shapes: Vec<&[i64]> = std::iter::once(&[2, 4, 5][..]).chain(shapes.iter().copied()).collect();
    over(27, &shapes, with_str(node("cc", "CausalConvWithState", &[], &["y", "state"]), "activation", activation))
}

/// TensorScatter of `update` into a cache [2, 3, 8, 4] along `axis` in `mode`, with int64
/// write_indices (zeros at run time) of shape `indices` where that is not empty.
fn tensor_scatter(update: &[i64], indices: &[i64], axis: i64, mode: &str) -> ModelProto {
    let mut inputs = vec![input("c", &[2, 3, 8, 4]), input("u", update), typed("w", DataType::Int64, indices)];
    inputs.truncate(if indices.is_empty() { 2 } else { 3 });
    let n = node("ts", "TensorScatter", &["c", "u", "w"][..inputs.len()], &["y"]);
    build::model(24, inputs, vec![with_str(with_int(n, "axis", axis), "mode", mode)], &["y"])
}

/// RotaryEmbedding of `x` with cos and sin caches of shape `cache` and, where not empty,
/// int64 position_ids (zeros at run time) of shape `positions`, and integer attributes `attrs`.
fn rotary(x: &[i64], cache: &[i64], positions: &[i64], attrs: &[(&str, i64)]) -> ModelProto {
    let mut inputs = vec![input("x", x), input("c", cache), input("s", cache), typed("p", DataType::Int64, positions)];
    inputs.truncate(if positions.is_empty() { 3 } else { 4 });
    let n = node("re", "RotaryEmbedding", &["x", "c", "s", "p"][..inputs.len()], &["y"]);
    build::model(23, inputs, vec![attrs.iter().fold(n, |n, (a, v)| with_int(n, a, *v))], &["y"])
}

/// Attention at `opset` over Q, K, V, attn_mask, past_key, past_value and (int64, zeros at
/// run time) nonpad_kv_seqlen of `shapes` (empty: left out); present_key and present_value
/// out with a past (onnxruntime wants them).
fn attention_past(opset: i64, shapes: &[&[i64]]) -> ModelProto {
    let mut m = over(opset, shapes, node("att", "Attention", &[], &["y"]));
    for i in m.graph.as_mut().unwrap().input.iter_mut().filter(|i| i.name.as_deref() == Some("x6")) {
        *i = typed("x6", DataType::Int64, shapes[6]);
    }
    if shapes.get(4).is_some_and(|p| !p.is_empty()) {
        with_present(m)
    } else {
        m
    }
}

/// Add-13 of x [2, 3] and an input w declared `declared` with an initializer of shape `held`.
fn declared_init(declared: &[i64], held: &[i64]) -> ModelProto {
    let mut m = case(13, &[("x", &[2, 3]), ("w", declared)], &[], node("a", "Add", &["x", "w"], &["y"]));
    let n = held.iter().product::<i64>() as usize;
    m.graph.as_mut().unwrap().initializer.push(build::floats("w", held, &vec![1.0; n]));
    m
}

/// Attention over a past with only present output `kept` of the two.
fn one_present(opset: i64, kept: &str) -> ModelProto {
    let mut m = attention_past(opset, &[Q4, K4, K4, &[], PAST, PAST]);
    m.graph.as_mut().unwrap().node[0].output =
        vec!["y".into(), if kept == "pk" { "pk" } else { "" }.into(), "pv".into()];
    if kept == "pk" {
        m.graph.as_mut().unwrap().node[0].output.pop();
    }
    m
}

/// `m` with its node's present_key and present_value outputs.
fn with_present(mut m: ModelProto) -> ModelProto {
    m.graph.as_mut().unwrap().node[0].output.extend(["pk".to_string(), "pv".to_string()]);
    m
}

/// Attention's usual Q and K (and V).
const Q4: &[i64] = &[2, 3, 4, 8];
const K4: &[i64] = &[2, 3, 6, 8];
const PAST: &[i64] = &[2, 3, 5, 8];

/// (what, model, onnxruntime 1.32's output shape or `None` where it refuses the model).
fn table() -> Vec<(&'static str, ModelProto, Option<Vec<i64>>)> {
    let lp = |p: i64| case(1, &[("x", &[3, 4])], &[], with_int(node("l", "LpNormalization", &["x"], &["y"]), "p", p));
    // Reshape of x [3, 4] by [2, 6] held in a shape tensor of shape `dims`.
    let reshape =
        |dims: &[i64]| case(13, &[("x", &[3, 4])], &[("s", dims, &[2, 6])], node("r", "Reshape", &["x", "s"], &["y"]));
    vec![
        // onnx's experimental ops of opsets 1 to 9 as onnxruntime runs them: "Bias size (2)
        // does not match the number of channels (3)", "Input is expected to have four
        // dimensions corresponding to [N,C,H,W]", "Input's height (10) needs to be greater than
        // or equal to the topBorder (2) + ...", "ai.onnx:ImageScaler(10) is not a registered
        // function/op".
        ("ImageScaler", scaler(9, &[1, 3, 4, 5], &[1.0, 2.0, 3.0]), Some(vec![1, 3, 4, 5])),
        ("ImageScaler 2 biases", scaler(9, &[1, 3, 4, 5], &[1.0, 2.0]), None),
        ("ImageScaler rank 3", scaler(9, &[3, 4, 5], &[1.0, 2.0, 3.0]), None),
        ("ImageScaler opset 10", scaler(10, &[1, 3, 4, 5], &[1.0, 2.0, 3.0]), None),
        ("ScaledTanh", case(9, &[("x", &[2, 3])], &[], tanh(&["alpha", "beta"])), Some(vec![2, 3])),
        ("ScaledTanh without beta", case(9, &[("x", &[2, 3])], &[], tanh(&["alpha"])), None),
        (
            "ImageScaler without bias",
            case(9, &[("x", &[1, 3, 4, 5])], &[], node("s", "ImageScaler", &["x"], &["y"])),
            None,
        ),
        ("Crop", crop(&[1, 3, 10, 12], &[1, 2, 3, 4], None), Some(vec![1, 3, 4, 8])),
        ("Crop scale [5,6]", crop(&[1, 3, 10, 12], &[1, 2, 3, 4], Some(&[5, 6])), Some(vec![1, 3, 5, 6])),
        ("Crop scale [9,6]", crop(&[1, 3, 10, 12], &[1, 2, 3, 4], Some(&[9, 6])), None),
        ("Crop border [8,2,5,4]", crop(&[1, 3, 10, 12], &[8, 2, 5, 4], None), None),
        ("Crop rank 3", crop(&[3, 10, 12], &[1, 2, 3, 4], None), None),
        (
            "DynamicSlice",
            case(
                9,
                &[("x", &[4, 6])],
                &[("s", &[2], &[1, 2]), ("e", &[2], &[3, 5])],
                node("d", "DynamicSlice", &["x", "s", "e"], &["y"]),
            ),
            Some(vec![2, 3]),
        ),
        // Slice's bounds fed at run time: vectors of one length, no more than the rank ("Starts
        // must be a 1-D array", "Starts and ends shape mismatch", "'axes' has an axis outside
        // of the tensor dimension count"); without axes the first that many axes are sliced.
        ("Slice fed starts [2,1]", fed_slice(&[&[2, 1], &[2, 1]]), None),
        ("Slice fed starts [2] ends [3]", fed_slice(&[&[2], &[3]]), None),
        ("Slice fed starts [3] of rank 2", fed_slice(&[&[3], &[3]]), None),
        ("Slice fed starts [2] axes [1]", fed_slice(&[&[2], &[2], &[1]]), None),
        ("Slice fed starts [0]", fed_slice(&[&[0], &[0]]), Some(vec![4, 6])),
        // Attributes as the schema types them ("Required attribute 'axis' is missing",
        // "Mismatched attribute type in ' : alpha'. Expected: 'FLOAT', actual: 'INT'",
        // "Attribute 'axis' appeared multiple times").
        ("Concat without axis", two(node("c", "Concat", &["a", "b"], &["y"])), None),
        ("Concat axis 1.0", two(with_attr(node("c", "Concat", &["a", "b"], &["y"]), "axis", Some(1.0), &[])), None),
        (
            "Concat axis twice",
            two(with_int(with_int(node("c", "Concat", &["a", "b"], &["y"]), "axis", 0), "axis", 1)),
            None,
        ),
        (
            "Gemm alpha 2 (int)",
            two(with_int(with_int(node("g", "Gemm", &["a", "b"], &["y"]), "transB", 1), "alpha", 2)),
            None,
        ),
        (
            "Gemm alpha 2.0",
            two(with_attr(with_int(node("g", "Gemm", &["a", "b"], &["y"]), "transB", 1), "alpha", Some(2.0), &[])),
            Some(vec![2, 2]),
        ),
        (
            "Transpose perm of floats",
            two(with_attr(node("t", "Transpose", &["a"], &["y"]), "perm", None, &[1.0, 0.0])),
            None,
        ),
        // A node of more outputs than its schema's ("Node with schema(::Add:14) has output
        // size 2 not in range [min=1, max=1]").
        (
            "Add of 2 outputs",
            case(17, &[("a", &[2, 3]), ("b", &[2, 3])], &[], node("a", "Add", &["a", "b"], &["y", "z"])),
            None,
        ),
        (
            "Add",
            case(17, &[("a", &[2, 3]), ("b", &[2, 3])], &[], node("a", "Add", &["a", "b"], &["y"])),
            Some(vec![2, 3]),
        ),
        // SwiGLU's inputs have one shape, no broadcasting (ORT: "Can't merge shape info"; it has
        // no Swish-24 kernel to run the valid one, whose [2, 4] is onnx's inference).
        (
            "SwiGLU [2,4] [2,5]",
            case(28, &[("a", &[2, 4]), ("b", &[2, 5])], &[], node("s", "SwiGLU", &["a", "b"], &["y"])),
            None,
        ),
        (
            "SwiGLU [2,4] [1,4]",
            case(28, &[("a", &[2, 4]), ("b", &[1, 4])], &[], node("s", "SwiGLU", &["a", "b"], &["y"])),
            None,
        ),
        (
            "SwiGLU [2,4] [2,4]",
            case(28, &[("a", &[2, 4]), ("b", &[2, 4])], &[], node("s", "SwiGLU", &["a", "b"], &["y"])),
            Some(vec![2, 4]),
        ),
        // Clip: "min should be a scalar" (one element of rank 1 runs).
        (
            "Clip min [1]",
            case(13, &[("x", &[2, 3]), ("lo", &[1])], &[], node("c", "Clip", &["x", "lo"], &["y"])),
            Some(vec![2, 3]),
        ),
        ("Clip min [2]", case(13, &[("x", &[2, 3]), ("lo", &[2])], &[], node("c", "Clip", &["x", "lo"], &["y"])), None),
        (
            "Clip max [1,1]",
            case(13, &[("x", &[2, 3]), ("hi", &[1, 1])], &[], node("c", "Clip", &["x", "", "hi"], &["y"])),
            None,
        ),
        // Dropout: "Ratio of Dropout must be a scalar."
        (
            "Dropout ratio [1]",
            case(13, &[("x", &[2, 3]), ("r", &[1])], &[], node("d", "Dropout", &["x", "r"], &["y"])),
            None,
        ),
        (
            "Dropout ratio []",
            case(13, &[("x", &[2, 3]), ("r", &[])], &[], node("d", "Dropout", &["x", "r"], &["y"])),
            Some(vec![2, 3]),
        ),
        // TopK: "K input must be a one-dimensional tensor of size 1."
        (
            "TopK k []",
            case(11, &[("x", &[2, 3])], &[("k", &[], &[2])], node("t", "TopK", &["x", "k"], &["y", "i"])),
            None,
        ),
        (
            "TopK k [1]",
            case(11, &[("x", &[2, 3])], &[("k", &[1], &[2])], node("t", "TopK", &["x", "k"], &["y", "i"])),
            Some(vec![2, 2]),
        ),
        // EyeLike: "Input tensor must be 2-dimensional".
        ("EyeLike [2,3,4]", case(9, &[("x", &[2, 3, 4])], &[], node("e", "EyeLike", &["x"], &["y"])), None),
        ("EyeLike [2,3]", case(9, &[("x", &[2, 3])], &[], node("e", "EyeLike", &["x"], &["y"])), Some(vec![2, 3])),
        // ArgMax over an empty axis fails at run time, unless the output is empty too.
        (
            "ArgMax [0,3] axis 0",
            case(13, &[("x", &[0, 3])], &[], with_int(node("a", "ArgMax", &["x"], &["y"]), "axis", 0)),
            None,
        ),
        (
            "ArgMax [0,3] axis 1",
            case(13, &[("x", &[0, 3])], &[], with_int(node("a", "ArgMax", &["x"], &["y"]), "axis", 1)),
            Some(vec![0, 1]),
        ),
        // CumProd's axis holds one element, as CumSum's.
        (
            "CumProd axis [1,0]",
            case(26, &[("x", &[2, 3])], &[("a", &[2], &[1, 0])], node("c", "CumProd", &["x", "a"], &["y"])),
            None,
        ),
        (
            "CumProd axis [1]",
            case(26, &[("x", &[2, 3])], &[("a", &[1], &[1])], node("c", "CumProd", &["x", "a"], &["y"])),
            Some(vec![2, 3]),
        ),
        // DFT: "one-sided DFT requires real input (last dimension must be 1)", "inverse
        // one-sided DFT requires complex input (last dimension must be 2)", "The input tensor
        // must have a last dimension of 1 (real) or 2 (complex)".
        ("DFT onesided [1,8,2]", case(17, &[("x", &[1, 8, 2])], &[], dft(&["x"])), None),
        ("DFT onesided [1,8,1]", case(17, &[("x", &[1, 8, 1])], &[], dft(&["x"])), Some(vec![1, 5, 2])),
        (
            "DFT inverse onesided [1,8,1]",
            case(17, &[("x", &[1, 8, 1])], &[], with_int(dft(&["x"]), "inverse", 1)),
            None,
        ),
        (
            "DFT inverse onesided [1,5,2]",
            case(17, &[("x", &[1, 5, 2])], &[], with_int(dft(&["x"]), "inverse", 1)),
            Some(vec![1, 8, 1]),
        ),
        ("DFT [1,8,3]", case(17, &[("x", &[1, 8, 3])], &[], node("dft", "DFT", &["x"], &["y"])), None),
        // "dft_length must be greater than zero".
        (
            "DFT dft_length 0",
            case(17, &[("x", &[2, 3, 1])], &[("n", &[], &[0])], node("dft", "DFT", &["x", "n"], &["y"])),
            None,
        ),
        (
            "DFT dft_length 4",
            case(17, &[("x", &[2, 3, 1])], &[("n", &[], &[4])], node("dft", "DFT", &["x", "n"], &["y"])),
            Some(vec![2, 4, 2]),
        ),
        // STFT: a signal [batch, length] is real; "window_size <= signal_size was false",
        // "frame_step must be greater than zero", "signal shape must end in 1 (real) or 2",
        // "window input must have rank = 1", "the dimension of the window must match the
        // frame_length"; with neither a window nor a frame_length, "Tensor shape.Size() must
        // be >= 0"; an empty frame kills the process (SIGFPE). One-sided even for complex input.
        ("STFT [2,100] window 16", stft(&[2, 100], &[4], Some(&[16]), None), Some(vec![2, 22, 9, 2])),
        ("STFT [2,16] window 16", stft(&[2, 16], &[4], Some(&[16]), None), Some(vec![2, 1, 9, 2])),
        ("STFT [2,15] window 16", stft(&[2, 15], &[4], Some(&[16]), None), None),
        ("STFT step 0", stft(&[2, 100], &[0], Some(&[16]), None), None),
        ("STFT step -4", stft(&[2, 100], &[-4], Some(&[16]), None), None),
        ("STFT step 200", stft(&[2, 100], &[200], Some(&[16]), None), Some(vec![2, 1, 9, 2])),
        ("STFT [2,100,3]", stft(&[2, 100, 3], &[4], Some(&[16]), None), None),
        ("STFT [2,100,1,1]", stft(&[2, 100, 1, 1], &[4], Some(&[16]), None), None),
        ("STFT [100]", stft(&[100], &[4], Some(&[16]), None), None),
        ("STFT window [16,1]", stft(&[2, 100], &[4], Some(&[16, 1]), None), None),
        ("STFT no window or frame_length", stft(&[2, 100], &[4], None, None), None),
        ("STFT frame_length 16", stft(&[2, 100, 1], &[3], None, Some(&[16])), Some(vec![2, 29, 9, 2])),
        ("STFT window 16 frame_length 8", stft(&[2, 100], &[4], Some(&[16]), Some(&[8])), None),
        ("STFT frame_length 0", stft(&[2, 100], &[4], None, Some(&[0])), None),
        ("STFT window [0]", stft(&[2, 100], &[4], Some(&[0]), None), None),
        ("STFT frame_length -4", stft(&[2, 100], &[4], None, Some(&[-4])), None),
        ("STFT complex window 15", stft(&[2, 100, 2], &[4], Some(&[15]), None), Some(vec![2, 22, 8, 2])),
        ("STFT [0,100]", stft(&[0, 100], &[4], Some(&[16]), None), Some(vec![0, 22, 9, 2])),
        // Recurrent ops: "First input tensor must have rank 3".
        ("GRU x [2,3,5,1]", rnn_x("GRU", &[2, 3, 5, 1]), None),
        ("RNN x [2,3]", rnn_x("RNN", &[2, 3]), None),
        // The tree ensembles: "Input 0 expected to have rank 2 but has rank 1"; "One path in
        // the graph requests feature 2 but input tensor has 2 features" (a leaf's feature id
        // is not read). LinearRegressor: "Input shape had more than 2 dimension".
        ("TreeEnsemble x [3]", tree_ensemble(&[3], 0), None),
        ("TreeEnsemble feature 2 of 3", tree_ensemble(&[4, 3], 2), Some(vec![4, 1])),
        ("TreeEnsemble feature 2 of 2", tree_ensemble(&[4, 2], 2), None),
        // "TreeEnsemble membership node 0 must have at least one membership value".
        ("TreeEnsemble member node, a set", member_tree(Some(&[1.0, 2.0, f32::NAN])), Some(vec![4, 1])),
        ("TreeEnsemble member node, no set", member_tree(None), None),
        ("TreeEnsemble member node, an empty set", member_tree(Some(&[f32::NAN, 1.0])), None),
        ("TreeEnsembleRegressor feature 2 of 3", tree_v3("TreeEnsembleRegressor", &[5, 3], 2), Some(vec![5, 1])),
        ("TreeEnsembleRegressor feature 2 of 2", tree_v3("TreeEnsembleRegressor", &[5, 2], 2), None),
        ("TreeEnsembleClassifier feature 2 of 0", tree_v3("TreeEnsembleClassifier", &[5, 0], 2), None),
        ("TreeEnsembleClassifier x [2,3,4]", tree_v3("TreeEnsembleClassifier", &[2, 3, 4], 0), None),
        (
            "LinearRegressor x [2,3,4]",
            ml(with_floats(node("l", "LinearRegressor", &["x"], &["y"]), "coefficients", &[1.0; 4]), &[2, 3, 4], 3),
            None,
        ),
        // Einsum: "Cannot parse the diagonal elements along dims 1 and 2 for input shape
        // {3,5,1}": a label twice in one term does not stretch, across terms it does.
        ("Einsum ...ii of [3,5,1]", einsum("...ii->...i", &[&[3, 5, 1]]), None),
        ("Einsum iij of [2,1,3]", einsum("iij->j", &[&[2, 1, 3]]), None),
        ("Einsum iij of [2,2,3]", einsum("iij->j", &[&[2, 2, 3]]), Some(vec![3])),
        ("Einsum ij,ij of [3,1], [3,4]", einsum("ij,ij->ij", &[&[3, 1], &[3, 4]]), Some(vec![3, 4])),
        // LpNormalization: "p_ == 1 || p_ == 2 was false" (the spec's "only 1 or 2").
        ("LpNormalization p 3", lp(3), None),
        ("LpNormalization p 1", lp(1), Some(vec![3, 4])),
        // Pad: negative pads that leave a negative size.
        ("Pad [3,4] by [0,-3,0,-2]", pad_by("constant", &[3, 4], &[0, -3, 0, -2]), None),
        ("Pad [3,4] by [0,-4,0,0]", pad_by("constant", &[3, 4], &[0, -4, 0, 0]), Some(vec![3, 0])),
        // Reshape: "A shape tensor must be a vector tensor".
        ("Reshape to [[2,6]]", reshape(&[1, 2]), None),
        ("Reshape to [2,6]", reshape(&[2]), Some(vec![2, 6])),
        // Scales: Resize's "greater than 0", Upsample's "greater than or equal to 1".
        ("Resize scale 0", rescale("Resize", &[1.0, 1.0, 0.0, 2.0]), None),
        ("Upsample scale 0.5", rescale("Upsample", &[1.0, 1.0, 0.5, 2.0]), None),
        ("Upsample scale 1", rescale("Upsample", &[1.0, 1.0, 1.0, 2.0]), Some(vec![1, 1, 4, 8])),
        // Sizes: "Scale value should be greater than 0" (a size of 0 from 4), "Input dim is zero
        // but required output dim is non-zero"; an empty axis may stay empty.
        ("Resize [1,1,4,4] to [1,1,0,4]", resize_to(&[1, 1, 4, 4], &[1, 1, 0, 4]), None),
        ("Resize [1,1,0,4] to [1,1,2,4]", resize_to(&[1, 1, 0, 4], &[1, 1, 2, 4]), None),
        ("Resize [1,1,0,4] to [1,1,0,8]", resize_to(&[1, 1, 0, 4], &[1, 1, 0, 8]), Some(vec![1, 1, 0, 8])),
        // "Either `sizes` or `scales` must be provided, but not both of them": an empty one
        // is none, so a scalar cannot be resized.
        ("Resize scales and sizes", resize_both(), None),
        ("Resize neither", case(13, &[("x", &[1, 1, 4, 4])], &[], node("r", "Resize", &["x"], &["y"])), None),
        (
            "Resize a scalar",
            case(13, &[("x", &[])], &[("s", &[0], &[])], node("r", "Resize", &["x", "", "", "s"], &["y"])),
            None,
        ),
        // "Invalid sequence length: 3. Value must be in range [0,2]".
        ("ReverseSequence lens [3,3,3] over 2", rev_lens(&[3, 3, 3]), None),
        ("ReverseSequence lens [2,0,1] over 2", rev_lens(&[2, 0, 1]), Some(vec![2, 3])),
        // LpNormalization of a scalar: "axis 0 is not in valid range [-0,-1]".
        ("LpNormalization x []", case(13, &[("x", &[])], &[], node("l", "LpNormalization", &["x"], &["y"])), None),
        (
            "LpNormalization x [3]",
            case(13, &[("x", &[3])], &[], node("l", "LpNormalization", &["x"], &["y"])),
            Some(vec![3]),
        ),
        // QLinearMatMul: a zero point has its scale's shape, or both hold one element.
        ("QLinearMatMul scale [] zero point [1]", qmatmul([&[], &[1], &[], &[]]), Some(vec![2, 4])),
        ("QLinearMatMul scale [] zero point [0]", qmatmul([&[], &[0], &[], &[]]), None),
        ("QLinearMatMul scale [3] zero point []", qmatmul([&[3], &[], &[], &[]]), None),
        ("QLinearMatMul b scale [4] zero point [4]", qmatmul([&[], &[], &[4], &[4]]), Some(vec![2, 4])),
        // MelWeightMatrix: dft_length / 2 + 1 rows, dividing toward zero.
        ("MelWeightMatrix dft_length -1", mel(&[-1]), Some(vec![1, 8])),
        ("MelWeightMatrix dft_length 16", mel(&[16]), Some(vec![9, 8])),
        ("QLinearMatMul b scale [1] zero point [4]", qmatmul([&[], &[], &[1], &[4]]), Some(vec![2, 4])),
        // GatherND batch_dims 1: "indices batch size (3) is not divisible by input batch size (2)".
        ("GatherND batch 3 of 2", gather_nd(&[3, 1]), None),
        ("GatherND batch 4 of 2", gather_nd(&[4, 1]), Some(vec![4, 4])),
        // onnxruntime wants the data's batch to divide the index tuples, not to equal their
        // batch: "indices batch size (1) is not divisible by input batch size (2)".
        ("GatherND batch 1 of 2, 2 tuples", gather_nd(&[1, 2, 1]), Some(vec![1, 2, 4])),
        ("GatherND batch 1 of 2, 1 tuple", gather_nd(&[1, 1, 1]), None),
        ("GatherND indices without an index axis", gather_nd(&[2]), None),
        // Pad in edge, reflect or wrap mode: negative pads crop first, and onnxruntime wants
        // something left of a non-empty input ("Pad: invalid mode: 2 with zero effective input
        // extent"), and reflects at most what is left less one ("Pad reflect: post-pad (3)
        // exceeds maximum allowed (2)", "Pad reflect requires axis length >= 2 after slicing").
        ("Pad edge crops all, pads 1", pad_by("edge", &[2, 3], &[0, -3, 0, 1]), None),
        ("Pad edge crops all", pad_by("edge", &[2, 3], &[0, -3, 0, 0]), None),
        ("Pad reflect crops all", pad_by("reflect", &[2, 3], &[0, -3, 0, 0]), None),
        ("Pad constant crops all, pads 1", pad_by("constant", &[2, 3], &[0, -3, 0, 1]), Some(vec![2, 1])),
        ("Pad reflect 3 of 5 cropped by 2", pad_by("reflect", &[2, 5], &[0, -2, 0, 3]), None),
        ("Pad reflect 2 of 5 cropped by 2", pad_by("reflect", &[2, 5], &[0, -2, 0, 2]), Some(vec![2, 5])),
        ("Pad reflect 1 of 5 cropped by 4", pad_by("reflect", &[2, 5], &[0, -4, 0, 1]), None),
        ("Pad edge 1 of 5 cropped by 4", pad_by("edge", &[2, 5], &[0, -4, 0, 1]), Some(vec![2, 2])),
        ("Pad wrap 3 of 5 cropped by 2", pad_by("wrap", &[2, 5], &[0, -2, 0, 3]), Some(vec![2, 6])),
        ("Pad edge of an empty input", pad_by("edge", &[0, 5], &[0, -5, 0, 1]), Some(vec![0, 1])),
        // pads and axes are vectors ("'pads' input must be a 1D (shape: [2 * input_rank])
        // tensor"), the constant one value.
        ("Pad pads [1, 4]", pad_shapes(&[1, 4], None, None), None),
        ("Pad pads [2, 2]", pad_shapes(&[2, 2], None, None), None),
        ("Pad constant [1]", pad_shapes(&[4], Some(&[1]), None), Some(vec![2, 5])),
        ("Pad constant [2]", pad_shapes(&[4], Some(&[2]), None), None),
        ("Pad constant [0]", pad_shapes(&[4], Some(&[0]), None), None),
        ("Pad axes [1, 1]", pad_shapes(&[2], None, Some(&[1, 1])), None),
        ("Pad axes [1]", pad_shapes(&[2], None, Some(&[1])), Some(vec![2, 4])),
        // tf_crop_and_resize takes two roi values per axis, or per listed axis ("size of roi
        // array should be 2 * N", "roi input length (6) must be either 2 * rank (8) or 2 *
        // number of axes").
        ("Resize roi of 7", crop_resize(&[7], None), None),
        ("Resize roi of 0", crop_resize(&[0], None), None),
        ("Resize roi of 8", crop_resize(&[8], None), Some(vec![1, 1, 3, 3])),
        ("Resize roi [2, 4]", crop_resize(&[2, 4], None), Some(vec![1, 1, 3, 3])),
        ("Resize roi of 6, 2 axes", crop_resize(&[6], Some(&[2, 3])), None),
        ("Resize roi of 4, 2 axes", crop_resize(&[4], Some(&[2, 3])), Some(vec![1, 1, 3, 3])),
        ("Resize roi of 8, 2 axes", crop_resize(&[8], Some(&[2, 3])), Some(vec![1, 1, 3, 3])),
        // MelWeightMatrix: "num_mel_bins input must be scalar", "dft_length input must be
        // scalar"; the others hold one element.
        ("MelWeightMatrix scalars", mel_shaped([&[], &[], &[], &[], &[]]), Some(vec![9, 8])),
        ("MelWeightMatrix bins [1]", mel_shaped([&[1], &[], &[], &[], &[]]), None),
        ("MelWeightMatrix dft_length [1]", mel_shaped([&[], &[1], &[], &[], &[]]), None),
        ("MelWeightMatrix rate [1]", mel_shaped([&[], &[], &[1], &[], &[]]), Some(vec![9, 8])),
        ("MelWeightMatrix rate [2]", mel_shaped([&[], &[], &[2], &[], &[]]), None),
        ("MelWeightMatrix lower edge [1]", mel_shaped([&[], &[], &[], &[1], &[]]), Some(vec![9, 8])),
        ("MelWeightMatrix lower edge [2]", mel_shaped([&[], &[], &[], &[2], &[]]), None),
        ("MelWeightMatrix upper edge [2]", mel_shaped([&[], &[], &[], &[], &[2]]), None),
        // QLinearConv: x's and y's scale and zero point hold one value, w's one or one per
        // output channel (qlinearconv.cc: "x_scale must be a scalar or 1D tensor or size 1",
        // "w_scale must be a scalar or 1D tensor of size 1 or M").
        ("QLinearConv scalars", qconv([&[], &[], &[], &[], &[], &[]]), Some(vec![1, 4, 3, 3])),
        ("QLinearConv x scale [1]", qconv([&[1], &[], &[], &[], &[], &[]]), Some(vec![1, 4, 3, 3])),
        ("QLinearConv x scale [0]", qconv([&[0], &[], &[], &[], &[], &[]]), None),
        ("QLinearConv x scale [2]", qconv([&[2], &[], &[], &[], &[], &[]]), None),
        ("QLinearConv x zero point [2]", qconv([&[], &[2], &[], &[], &[], &[]]), None),
        ("QLinearConv w scale [4]", qconv([&[], &[], &[4], &[], &[], &[]]), Some(vec![1, 4, 3, 3])),
        ("QLinearConv w scale [2]", qconv([&[], &[], &[2], &[], &[], &[]]), None),
        ("QLinearConv w scale [4, 1]", qconv([&[], &[], &[4, 1], &[], &[], &[]]), None),
        ("QLinearConv w zero point [4]", qconv([&[], &[], &[], &[4], &[], &[]]), Some(vec![1, 4, 3, 3])),
        ("QLinearConv w zero point [2]", qconv([&[], &[], &[], &[2], &[], &[]]), None),
        ("QLinearConv y scale [2]", qconv([&[], &[], &[], &[], &[2], &[]]), None),
        ("QLinearConv y zero point [2]", qconv([&[], &[], &[], &[], &[], &[2]]), None),
        // ConvInteger: the same zero points (onnxruntime also refuses a per-channel w zero
        // point, which the spec allows and inference keeps).
        ("ConvInteger zero points [1]", conv_integer(&[1], &[1]), Some(vec![1, 4, 3, 3])),
        ("ConvInteger x zero point [2]", conv_integer(&[2], &[]), None),
        ("ConvInteger w zero point [2]", conv_integer(&[], &[2]), None),
        ("ConvInteger w zero point [4, 1]", conv_integer(&[], &[4, 1]), None),
        // Quantized MatMuls: a parameter is one value (a scalar or [1]; "IsScalarOr1ElementVector"),
        // or one per column of b ([N] or b's shape with a K of 1, "IsBQuantParamSupported").
        // Per-row a and y parameters, which the spec allows, onnxruntime refuses; kept.
        ("QLinearMatMul a scale [0] zero point [0]", qmatmul([&[0], &[0], &[], &[]]), None),
        ("QLinearMatMul a scale [1, 1] zero point [1, 1]", qmatmul([&[1, 1], &[1, 1], &[], &[]]), None),
        ("QLinearMatMul b scale [0] zero point [0]", qmatmul([&[], &[], &[0], &[0]]), None),
        ("QLinearMatMul b scale [3] zero point [3]", qmatmul([&[], &[], &[3], &[3]]), None),
        ("QLinearMatMul b scale [1, 4] zero point [1, 4]", qmatmul([&[], &[], &[1, 4], &[1, 4]]), Some(vec![2, 4])),
        ("QLinearMatMul b scale [1, 1] zero point [1, 1]", qmatmul([&[], &[], &[1, 1], &[1, 1]]), None),
        ("MatMulInteger a zero point [1]", matmul_integer(Some(&[1]), None), Some(vec![4, 2])),
        ("MatMulInteger a zero point [0]", matmul_integer(Some(&[0]), None), None),
        ("MatMulInteger a zero point [2]", matmul_integer(Some(&[2]), None), None),
        ("MatMulInteger a zero point [1, 1]", matmul_integer(Some(&[1, 1]), None), None),
        ("MatMulInteger b zero point [2]", matmul_integer(None, Some(&[2])), Some(vec![4, 2])),
        ("MatMulInteger b zero point [1, 2]", matmul_integer(None, Some(&[1, 2])), Some(vec![4, 2])),
        ("MatMulInteger b zero point [0]", matmul_integer(None, Some(&[0])), None),
        ("MatMulInteger b zero point [3]", matmul_integer(None, Some(&[3])), None),
        ("QLinearConv x scale [1, 1]", qconv([&[1, 1], &[], &[], &[], &[], &[]]), None),
        ("QLinearConv w zero point [1, 1]", qconv([&[], &[], &[], &[1, 1], &[], &[]]), None),
        ("ConvInteger x zero point [1, 1]", conv_integer(&[1, 1], &[]), None),
        // Pad of an empty axis by edge or reflect: it may stay empty, not grow ("Cannot use
        // 'edge' mode to pad dimension with a value of 0").
        ("Pad edge grows an empty axis", pad_by("edge", &[2, 0], &[0, 2, 0, -1]), None),
        ("Pad edge keeps an empty axis empty", pad_by("edge", &[2, 0], &[0, 1, 0, -1]), Some(vec![2, 0])),
        ("Pad reflect keeps an empty axis empty", pad_by("reflect", &[2, 0], &[1, 1, 0, -1]), Some(vec![3, 0])),
        // Axes listed twice: "Axis 1 is referred to more than once."
        ("Pad axes [1, -2]", axes_twice("Pad", &[1, -2]), None),
        ("Pad axes [0, 1]", axes_twice("Pad", &[0, 1]), Some(vec![2, 8, 4])),
        ("CenterCropPad axes [1, 1]", axes_twice("CenterCropPad", &[1, 1]), None),
        ("Resize axes [1, 1]", axes_twice("Resize", &[1, 1]), None),
        // Windows: "size input must be greater than 0."
        ("HammingWindow size 0", case(17, &[], &[("n", &[], &[0])], node("w", "HammingWindow", &["n"], &["y"])), None),
        (
            "HammingWindow size 4",
            case(17, &[], &[("n", &[], &[4])], node("w", "HammingWindow", &["n"], &["y"])),
            Some(vec![4]),
        ),
        // ConvTranspose with output_shape [10, 8], strides [3, 2], a 3x3 kernel: "Explicit
        // output_shape is inconsistent with input spatial dimensions" below 3 rows, "Attribute
        // output_shape has incorrect size" (onnx's inference) for 4 entries.
        ("ConvTranspose output_shape from [3,3]", conv_t_to(&[1, 1, 3, 3], &[10, 8]), Some(vec![1, 2, 10, 8])),
        ("ConvTranspose output_shape from [10,3]", conv_t_to(&[1, 1, 10, 3], &[10, 8]), Some(vec![1, 2, 10, 8])),
        ("ConvTranspose output_shape from [2,3]", conv_t_to(&[1, 1, 2, 3], &[10, 8]), None),
        ("ConvTranspose output_shape from [3,2]", conv_t_to(&[1, 1, 3, 2], &[10, 8]), None),
        // "Attribute output_shape must not contain negative values" (its total padding overflowed).
        ("ConvTranspose output_shape [i64::MIN,8]", conv_t_to(&[1, 1, 3, 3], &[i64::MIN, 8]), None),
        ("ConvTranspose output_shape of 4", conv_t_to(&[1, 1, 3, 3], &[1, 2, 10, 8]), None),
        // Attention 25 (its function body): "invalid expand shape" for K or V of another batch,
        // a 4-D batch of 1 broadcasting.
        ("Attention 25 K batch 5", attention_at(25, &[&[2, 4, 4, 8], &[5, 1, 6, 8], &[5, 1, 6, 6]], None), None),
        (
            "Attention 25 K batch 1",
            attention_at(25, &[&[2, 4, 4, 8], &[1, 1, 6, 8], &[1, 1, 6, 6]], None),
            Some(vec![2, 4, 4, 6]),
        ),
        ("Attention 25 V batch 3", attention_at(25, &[&[2, 4, 4, 8], &[2, 1, 6, 8], &[3, 1, 6, 6]], None), None),
        ("Attention 25 3-D K batch 1", attention_at(25, &[&[2, 4, 32], &[1, 6, 8], &[1, 6, 6]], Some((4, 1))), None),
        // Attention 25: K's head size and V's sequence are Q's and K's ("invalid expand
        // shape", Reshape's "The input tensor cannot be reshaped"), or 1 in 4-D (broadcast).
        (
            "Attention 25 K head 1",
            attention_at(25, &[&[2, 3, 4, 8], &[2, 3, 6, 1], &[2, 3, 6, 8]], None),
            Some(vec![2, 3, 4, 8]),
        ),
        (
            "Attention 25 3-D K head 1",
            attention_at(25, &[&[2, 4, 32], &[2, 6, 1], &[2, 6, 6]], Some((4, 1))),
            Some(vec![2, 4, 24]),
        ),
        ("Attention 25 Q head 1", attention_at(25, &[&[2, 3, 4, 1], &[2, 3, 6, 8], &[2, 3, 6, 8]], None), None),
        ("Attention 25 K sequence 1", attention_at(25, &[&[2, 3, 4, 8], &[2, 3, 1, 8], &[2, 3, 6, 8]], None), None),
        ("Attention 25 V sequence 5", attention_at(25, &[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 5, 8]], None), None),
        (
            "Attention 25 3-D V sequence 1",
            attention_at(25, &[&[2, 4, 24], &[2, 6, 24], &[2, 1, 24]], Some((3, 3))),
            None,
        ),
        // A size of 0 under a keep_aspect_ratio_policy: not_smaller takes the larger scale and
        // runs, not_larger the smaller, 0 ("Scale value should be greater than 0"); an empty
        // axis cannot grow ("Input dim is zero but required output dim is non-zero").
        ("Resize not_smaller to [0,3]", resize_kept("not_smaller", &[1, 1, 2, 5], &[0, 3]), Some(vec![1, 1, 1, 3])),
        ("Resize not_smaller to [0,0]", resize_kept("not_smaller", &[1, 1, 2, 5], &[0, 0]), None),
        ("Resize not_larger [1,1,0,5] to [1,2]", resize_kept("not_larger", &[1, 1, 0, 5], &[1, 2]), None),
        ("Resize not_larger to [0,3]", resize_kept("not_larger", &[1, 1, 2, 5], &[0, 3]), None),
        ("CumProd x []", case(26, &[("x", &[])], &[("a", &[], &[0])], node("c", "CumProd", &["x", "a"], &["y"])), None),
        // ORT: "[ShapeInferenceError] Invalid Target shape product of 0. Product cannot be 0
        // in combination with -1"; we cancelled the two zeros and said [2, 6, 0].
        (
            "Reshape [0,3,4] to [2,-1,0] allowzero",
            case(
                21,
                &[("x", &[0, 3, 4])],
                &[("s", &[3], &[2, -1, 0])],
                with_int(node("r", "Reshape", &["x", "s"], &["y"]), "allowzero", 1),
            ),
            None,
        ),
        (
            "Reshape [0,3,4] to [0,-1]",
            case(21, &[("x", &[0, 3, 4])], &[("s", &[2], &[0, -1])], node("r", "Reshape", &["x", "s"], &["y"])),
            None,
        ),
        (
            "Reshape [0,3,4] to [3,-1]",
            case(21, &[("x", &[0, 3, 4])], &[("s", &[2], &[3, -1])], node("r", "Reshape", &["x", "s"], &["y"])),
            Some(vec![3, 0]),
        ),
        // DFT's axis counts over all axes, the trailing real/imaginary one excluded (-1 is
        // refused: "axis attribute value -1 is invalid for a tensor of rank 4"); we counted -2
        // over the signal axes only and transformed axis 1.
        (
            "DFT-20 axis -2",
            case(20, &[("x", &[1, 10, 6, 1])], &[("a", &[], &[-2])], dft(&["x", "", "a"])),
            Some(vec![1, 10, 4, 2]),
        ),
        ("DFT-20 axis -1", case(20, &[("x", &[1, 10, 6, 1])], &[("a", &[], &[-1])], dft(&["x", "", "a"])), None),
        (
            "DFT-17 axis -2",
            case(17, &[("x", &[1, 10, 6, 1])], &[], with_int(dft(&["x"]), "axis", -2)),
            Some(vec![1, 10, 4, 2]),
        ),
        // ConvTranspose with auto_pad SAME pads toward d*stride, but a kernel shorter than the
        // stride cannot pad negatively; output_padding counts only up to the stride. We said
        // d*stride (2 and 9 below).
        ("ConvTranspose SAME k1 s2", conv_t(&[1, 1, 1, 1], &[1, 2, 1, 1], "SAME_UPPER", 2, 0), Some(vec![1, 2, 1, 1])),
        (
            "ConvTranspose SAME k3 s2 opad1",
            conv_t(&[1, 1, 3, 3], &[1, 2, 3, 3], "SAME_UPPER", 2, 1),
            Some(vec![1, 2, 6, 6]),
        ),
        (
            "ConvTranspose SAME k1 s3 opad1",
            conv_t(&[1, 1, 3, 3], &[1, 2, 1, 1], "SAME_LOWER", 3, 1),
            Some(vec![1, 2, 8, 8]),
        ),
        // NegativeLogLikelihoodLoss (and SoftmaxCrossEntropyLoss, whose expansion runs it):
        // "Input and target dimension value mismatch", "Target rank must be 1 less than the
        // input rank", "Weight rank must be 1". A weight of another length than C runs.
        ("NLLLoss target [4,2]", loss("NegativeLogLikelihoodLoss", &[3, 5, 2], &[4, 2], None), None),
        ("NLLLoss target [3,3]", loss("NegativeLogLikelihoodLoss", &[3, 5, 2], &[3, 3], None), None),
        ("NLLLoss target [3]", loss("NegativeLogLikelihoodLoss", &[3, 5, 2], &[3], None), None),
        ("NLLLoss weight [5,1]", loss("NegativeLogLikelihoodLoss", &[3, 5, 2], &[3, 2], Some(&[5, 1])), None),
        ("NLLLoss weight [4]", loss("NegativeLogLikelihoodLoss", &[3, 5, 2], &[3, 2], Some(&[4])), Some(vec![3, 2])),
        ("NLLLoss input [3]", loss("NegativeLogLikelihoodLoss", &[3], &[], None), None),
        ("SCELoss target [4,2]", loss("SoftmaxCrossEntropyLoss", &[3, 5, 2], &[4, 2], None), None),
        ("SCELoss target [3]", loss("SoftmaxCrossEntropyLoss", &[3, 5, 2], &[3], None), None),
        // SoftmaxCrossEntropyLoss's body reshapes to [N, C, -1]: "Invalid Target shape product
        // of 0" for N or C of 0; NegativeLogLikelihoodLoss runs them.
        ("SCELoss x [0,5]", loss("SoftmaxCrossEntropyLoss", &[0, 5], &[0], None), None),
        ("SCELoss x [3,0]", loss("SoftmaxCrossEntropyLoss", &[3, 0], &[3], None), None),
        ("SCELoss x [3,5,0]", loss("SoftmaxCrossEntropyLoss", &[3, 5, 0], &[3, 0], None), Some(vec![3, 0])),
        ("NLLLoss x [0,5,2]", loss("NegativeLogLikelihoodLoss", &[0, 5, 2], &[0, 2], None), Some(vec![0, 2])),
        // No classes for a target (its body's GatherElements indexes past them; onnx's
        // reference cannot reshape to [N, 0, -1]).
        ("NLLLoss x [3,0]", loss("NegativeLogLikelihoodLoss", &[3, 0], &[3], None), None),
        ("NLLLoss x [3,0,2]", loss("NegativeLogLikelihoodLoss", &[3, 0, 2], &[3, 2], None), None),
        ("NLLLoss x [3,0,0]", loss("NegativeLogLikelihoodLoss", &[3, 0, 0], &[3, 0], None), Some(vec![3, 0])),
        ("NLLLoss x [0,0]", loss("NegativeLogLikelihoodLoss", &[0, 0], &[0], None), Some(vec![0])),
        ("SCELoss weight [1]", loss("SoftmaxCrossEntropyLoss", &[3, 5, 2], &[3, 2], Some(&[1])), Some(vec![3, 2])),
        // LayerNormalization and RMSNormalization: "Scale and (optional) bias must match
        // X.shape[axis:] or be NumPy-broadcastable to it" (broadcast to all of X: [3, 4] runs
        // with axis -1), and "Size of X.shape[axis:] must be at least 1, got 0".
        ("LayerNorm scale [5]", norm("LayerNormalization", &[2, 3, 4], &[5], None, -1), None),
        ("LayerNorm scale [1]", norm("LayerNormalization", &[2, 3, 4], &[1], None, -1), Some(vec![2, 3, 4])),
        ("LayerNorm scale [3,4]", norm("LayerNormalization", &[2, 3, 4], &[3, 4], None, -1), Some(vec![2, 3, 4])),
        ("LayerNorm scale [2,3,4,1]", norm("LayerNormalization", &[2, 3, 4], &[2, 3, 4, 1], None, -1), None),
        ("LayerNorm bias [5]", norm("LayerNormalization", &[2, 3, 4], &[4], Some(&[5]), -1), None),
        ("LayerNorm x [2,3,0]", norm("LayerNormalization", &[2, 3, 0], &[1], None, -1), None),
        ("LayerNorm x [2,0,4] axis 1", norm("LayerNormalization", &[2, 0, 4], &[4], None, 1), None),
        ("LayerNorm x [0,3,4]", norm("LayerNormalization", &[0, 3, 4], &[4], None, -1), Some(vec![0, 3, 4])),
        ("RMSNorm scale [5]", norm("RMSNormalization", &[2, 3, 4], &[5], None, -1), None),
        ("RMSNorm scale [3,4]", norm("RMSNormalization", &[2, 3, 4], &[3, 4], None, -1), Some(vec![2, 3, 4])),
        ("RMSNorm x [2,3,0]", norm("RMSNormalization", &[2, 3, 0], &[1], None, -1), None),
        // GatherElements: "Rank of input 'data' needs to be equal to rank of input 'indices'",
        // "'indices' shape should have values within bounds of 'data' shape" off the axis.
        ("GatherElements [3,4] by [2]", gather_el(&[3, 4], &[2], 0), None),
        ("GatherElements [3,4] by [2,4,1]", gather_el(&[3, 4], &[2, 4, 1], 0), None),
        ("GatherElements [3,4] by [4,2] axis 1", gather_el(&[3, 4], &[4, 2], 1), None),
        ("GatherElements [3,4] by [2,9] axis 1", gather_el(&[3, 4], &[2, 9], 1), Some(vec![2, 9])),
        ("GatherElements [3,4] by [5,2] axis 0", gather_el(&[3, 4], &[5, 2], 0), Some(vec![5, 2])),
        // No index fits an empty axis: "indices element out of data bounds", "invalid index
        // found"; no indices run.
        ("GatherElements [3,0] by [3,2] axis 1", gather_el(&[3, 0], &[3, 2], 1), None),
        ("GatherElements [3,0] by [3,0] axis 1", gather_el(&[3, 0], &[3, 0], 1), Some(vec![3, 0])),
        ("Gather [0,3] by [2]", take("Gather", &[0, 3], &[2]), None),
        ("Gather [0,3] by [2,0]", take("Gather", &[0, 3], &[2, 0]), Some(vec![2, 0, 3])),
        ("GatherND [0,3] by [2,1]", take("GatherND", &[0, 3], &[2, 1]), None),
        ("GatherND [3,0] by [2,2]", take("GatherND", &[3, 0], &[2, 2]), None),
        ("GatherND [3,0] by [2,1]", take("GatherND", &[3, 0], &[2, 1]), Some(vec![2, 0])),
        ("GatherND [0,3] by [0,1]", take("GatherND", &[0, 3], &[0, 1]), Some(vec![0, 3])),
        // GridSample: "The last dimension of the grid tensor must be the rank of the grid tensor
        // - 2", "Dimension mismatch in unification between 2 and 1" (batch), and at run time
        // "Input spatial dimensions must be non-empty for sampling".
        ("GridSample grid [1,2,4,3]", grid(&[1, 1, 3, 2], &[1, 2, 4, 3]), None),
        ("GridSample grid batch 2", grid(&[1, 1, 3, 2], &[2, 2, 4, 2]), None),
        ("GridSample x [1,1,0,2]", grid(&[1, 1, 0, 2], &[1, 2, 4, 2]), None),
        ("GridSample", grid(&[1, 1, 3, 2], &[1, 2, 4, 2]), Some(vec![1, 1, 2, 4])),
        // OneHot: "Input 'values' must have exactly two elements".
        ("OneHot values [1]", one_hot(&[1]), None),
        ("OneHot values [3]", one_hot(&[3]), None),
        ("OneHot values [2]", one_hot(&[2]), Some(vec![3, 10])),
        // Conv: "Input channels C is not equal to kernel channels * group", "Output channels M
        // is not divisible by group", "bias must be a 1D tensor of size output_channels".
        ("Conv C 3, W [2,2,3,3]", conv(&[1, 3, 5, 5], &[2, 2, 3, 3], 1, None), None),
        ("Conv C 0, W [2,1,3,3]", conv(&[1, 0, 5, 5], &[2, 1, 3, 3], 1, None), None),
        ("Conv group 2", conv(&[1, 4, 5, 5], &[2, 2, 3, 3], 2, None), Some(vec![1, 2, 3, 3])),
        ("Conv group 2, M 3", conv(&[1, 4, 5, 5], &[3, 2, 3, 3], 2, None), None),
        ("Conv bias [3], M 2", conv(&[1, 3, 5, 5], &[2, 3, 3, 3], 1, Some(&[3])), None),
        // Range: "limit in Range operator should be scalar like tensor, yet got shape:{2}" (a
        // limit of shape [1] computed by Shape and Gather runs).
        ("Range limit [2]", case(11, &[], &[("s", &[], &[0]), ("l", &[2], &[5, 6]), ("d", &[], &[1])], range()), None),
        ("Range limit [0]", case(11, &[], &[("s", &[], &[0]), ("l", &[0], &[]), ("d", &[], &[1])], range()), None),
        ("Range", case(11, &[], &[("s", &[], &[0]), ("l", &[], &[5]), ("d", &[], &[1])], range()), Some(vec![5])),
        // Pools: "Invalid input shape. Only N can be zero" at run time.
        ("MaxPool [1,0,4,4]", pool("MaxPool", &[1, 0, 4, 4]), None),
        ("MaxPool [0,1,4,4]", pool("MaxPool", &[0, 1, 4, 4]), Some(vec![0, 1, 3, 3])),
        ("MaxPool [0,0,4,4]", pool("MaxPool", &[0, 0, 4, 4]), Some(vec![0, 0, 3, 3])),
        ("AveragePool [1,1,0,4]", pool("AveragePool", &[1, 1, 0, 4]), None),
        ("GlobalAveragePool [1,0,4,4]", pool("GlobalAveragePool", &[1, 0, 4, 4]), None),
        ("GlobalMaxPool [1,2,0,4]", pool("GlobalMaxPool", &[1, 2, 0, 4]), None),
        ("GlobalMaxPool [0,2,4,4]", pool("GlobalMaxPool", &[0, 2, 4, 4]), Some(vec![0, 2, 1, 1])),
        // BatchNormalization: "Dimension mismatch in unification between 4 and 3", "Input 1
        // expected to have rank 1"; opset 9 at run time: "Invalid input scale: 0th dimension !=
        // 3". InstanceNormalization: "size of scale != input channel count", "Invalid input B:
        // number of dimensions is not 1".
        ("BatchNorm-15 scale [4]", norm_c("BatchNormalization", 15, &[4], &[3]), None),
        ("BatchNorm-15 scale [3,1]", norm_c("BatchNormalization", 15, &[3, 1], &[3]), None),
        ("BatchNorm-15 bias, mean, var [2]", norm_c("BatchNormalization", 15, &[3], &[2]), None),
        ("BatchNorm-9 scale [4]", norm_c("BatchNormalization", 9, &[4], &[3]), None),
        ("BatchNorm-15", norm_c("BatchNormalization", 15, &[3], &[3]), Some(vec![2, 3, 4])),
        ("InstanceNorm scale [4]", norm_c("InstanceNormalization", 6, &[4], &[3]), None),
        ("InstanceNorm bias [3,1]", norm_c("InstanceNormalization", 6, &[3], &[3, 1]), None),
        ("InstanceNorm", norm_c("InstanceNormalization", 6, &[3], &[3]), Some(vec![2, 3, 4])),
        // GroupNormalization's function reshapes scale and bias: any shape of C values (of
        // num_groups before opset 21) runs.
        ("GroupNorm-21 scale [1,4]", group_norm(21, &[1, 4], &[4]), Some(vec![3, 4, 2, 2])),
        ("GroupNorm-21 scale [2,2]", group_norm(21, &[2, 2], &[4]), Some(vec![3, 4, 2, 2])),
        ("GroupNorm-21 scale [1,5]", group_norm(21, &[1, 5], &[4]), None),
        ("GroupNorm-18 bias [2,1]", group_norm(18, &[2], &[2, 1]), Some(vec![3, 4, 2, 2])),
        ("GroupNorm-18 scale [4]", group_norm(18, &[4], &[2]), None),
        // ArrayFeatureExtractor of a 1-D input: onnxruntime's output is [1, k] (onnx's
        // inference gives no shape).
        ("ArrayFeatureExtractor [4] by [2]", feature_extractor(&[4], &[2]), Some(vec![1, 2])),
        // "Indices tensor must have rank >= 1".
        (
            "OneHot of scalar indices",
            case(
                11,
                &[],
                &[("i", &[], &[1]), ("d", &[], &[10]), ("v", &[2], &[0, 1])],
                node("oh", "OneHot", &["i", "d", "v"], &["y"]),
            ),
            None,
        ),
        ("ArrayFeatureExtractor [3,4] by [2]", feature_extractor(&[3, 4], &[2]), Some(vec![3, 2])),
        // GRU, RNN and LSTM over x [2, 3, 5] with hidden_size 4: "Input W must have shape
        // {1,12,5}. Actual:{1,12,6}" and the like for R, B, sequence_lens, initial_h,
        // initial_c and P.
        ("GRU", rnn("GRU", &[&[1, 12, 5], &[1, 12, 4]]), Some(vec![2, 1, 3, 4])),
        ("GRU W [1,12,6]", rnn("GRU", &[&[1, 12, 6], &[1, 12, 4]]), None),
        ("GRU R [1,12,3]", rnn("GRU", &[&[1, 12, 5], &[1, 12, 3]]), None),
        ("GRU B [1,20]", rnn("GRU", &[&[1, 12, 5], &[1, 12, 4], &[1, 20]]), None),
        ("GRU sequence_lens [4]", rnn("GRU", &[&[1, 12, 5], &[1, 12, 4], &[1, 24], &[4]]), None),
        ("GRU initial_h [1,2,4]", rnn("GRU", &[&[1, 12, 5], &[1, 12, 4], &[1, 24], &[3], &[1, 2, 4]]), None),
        ("RNN W [2,4,5]", rnn("RNN", &[&[2, 4, 5], &[1, 4, 4]]), None),
        (
            "LSTM P [1,11]",
            rnn("LSTM", &[&[1, 16, 5], &[1, 16, 4], &[1, 32], &[3], &[1, 3, 4], &[1, 3, 4], &[1, 11]]),
            None,
        ),
        (
            "LSTM initial_c [1,2,4]",
            rnn("LSTM", &[&[1, 16, 5], &[1, 16, 4], &[1, 32], &[3], &[1, 3, 4], &[1, 2, 4]]),
            None,
        ),
        (
            "LSTM",
            rnn("LSTM", &[&[1, 16, 5], &[1, 16, 4], &[1, 32], &[3], &[1, 3, 4], &[1, 3, 4], &[1, 12]]),
            Some(vec![2, 1, 3, 4]),
        ),
        // Attention (opset 23): onnxruntime's ComputeOutputShapeForAttention refuses Q, K, V
        // of other ranks, batches or K/V sequences, Q and K of other head sizes, heads that do
        // not split 3-D hidden sizes or Q's heads, sizes 0 and a mask of another Q sequence;
        // onnx's inference a 3-D Q without q_num_heads. (A mask whose Q axis is 1, which the
        // spec broadcasts, onnxruntime refuses too; the spec is followed there.)
        ("Attention", attention(&[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 6, 8]], None), Some(vec![2, 3, 4, 8])),
        ("Attention K batch 3", attention(&[&[2, 3, 4, 8], &[3, 3, 6, 8], &[3, 3, 6, 8]], None), None),
        ("Attention V sequence 5", attention(&[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 5, 8]], None), None),
        ("Attention K head size 7", attention(&[&[2, 3, 4, 8], &[2, 3, 6, 7], &[2, 3, 6, 8]], None), None),
        ("Attention Q 4-D, K 3-D", attention(&[&[2, 3, 4, 8], &[2, 6, 24], &[2, 6, 24]], Some((3, 3))), None),
        ("Attention 3-D, no heads", attention(&[&[2, 4, 24], &[2, 6, 24], &[2, 6, 24]], None), None),
        ("Attention 3-D", attention(&[&[2, 4, 24], &[2, 6, 24], &[2, 6, 24]], Some((3, 3))), Some(vec![2, 4, 24])),
        ("Attention 3-D, 5 K/V heads", attention(&[&[2, 4, 24], &[2, 6, 24], &[2, 6, 24]], Some((3, 5))), None),
        ("Attention Q sequence 0", attention(&[&[2, 3, 0, 8], &[2, 3, 6, 8], &[2, 3, 6, 8]], None), None),
        ("Attention mask [3,6]", attention(&[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 6, 8], &[3, 6]], None), None),
        ("Attention 3 Q heads, 2 K heads", attention(&[&[2, 3, 4, 8], &[2, 2, 6, 8], &[2, 2, 6, 8]], None), None),
        (
            "Attention 4 Q heads, 2 K heads",
            attention(&[&[2, 4, 4, 8], &[2, 2, 6, 8], &[2, 2, 6, 8]], None),
            Some(vec![2, 4, 4, 8]),
        ),
        // Opset 25 runs as the function body: a V sequence of 1 broadcasts, a Q sequence of
        // 0 gives an empty output.
        (
            "Attention-25 V sequence 1",
            attention_at(25, &[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 1, 8]], None),
            Some(vec![2, 3, 4, 8]),
        ),
        (
            "Attention-25 Q sequence 0",
            attention_at(25, &[&[2, 3, 0, 8], &[2, 3, 6, 8], &[2, 3, 6, 8]], None),
            Some(vec![2, 3, 0, 8]),
        ),
        // The mask broadcasts to [batch, heads, Q sequence, ...] at every opset: at 25 the
        // body's Add refuses [2,0,4,6] and [3,5,6] ("Incompatible dimensions", "Attempting to
        // broadcast an axis"), and takes a last axis of 7 for a total of 6.
        (
            "Attention-25 mask [2,0,4,6]",
            attention_at(25, &[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 6, 8], &[2, 0, 4, 6]], None),
            None,
        ),
        (
            "Attention-25 mask [3,5,6]",
            attention_at(25, &[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 6, 8], &[3, 5, 6]], None),
            None,
        ),
        (
            "Attention-25 mask [3,4,6]",
            attention_at(25, &[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 6, 8], &[3, 4, 6]], None),
            Some(vec![2, 3, 4, 8]),
        ),
        (
            "Attention-25 mask [4,7]",
            attention_at(25, &[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 6, 8], &[4, 7]], None),
            Some(vec![2, 3, 4, 8]),
        ),
        // ScatterElements and Scatter: "Indices vs updates dimensions differs at position=1 2
        // vs 3", "Indices and updates must have the same rank", "Indices must have the same
        // rank as Input", "Indices dim=5 at pos=1 is greater than input dim=4". ScatterND:
        // "updates tensor should have shape equal to indices.shape[:-1] +
        // data.shape[indices.shape[-1]:]", "last dimension of indices must not be larger than
        // rank of input tensor".
        ("ScatterElements", scatter("ScatterElements", &[3, 4], &[2, 2], &[2, 2], 0), Some(vec![3, 4])),
        ("ScatterElements updates [2,3]", scatter("ScatterElements", &[3, 4], &[2, 2], &[2, 3], 0), None),
        ("ScatterElements updates [2]", scatter("ScatterElements", &[3, 4], &[2, 2], &[2], 0), None),
        ("ScatterElements indices [2]", scatter("ScatterElements", &[3, 4], &[2], &[2], 0), None),
        ("ScatterElements indices [5,2]", scatter("ScatterElements", &[3, 4], &[5, 2], &[5, 2], 0), Some(vec![3, 4])),
        ("ScatterElements indices [2,5]", scatter("ScatterElements", &[3, 4], &[2, 5], &[2, 5], 0), None),
        (
            "ScatterElements indices [2,5] axis 1",
            scatter("ScatterElements", &[3, 4], &[2, 5], &[2, 5], 1),
            Some(vec![3, 4]),
        ),
        ("Scatter updates [2,3]", scatter("Scatter", &[3, 4], &[2, 2], &[2, 3], 0), None),
        ("ScatterND", scatter("ScatterND", &[3, 4, 5], &[2, 1], &[2, 4, 5], 0), Some(vec![3, 4, 5])),
        ("ScatterND updates [2,4,4]", scatter("ScatterND", &[3, 4, 5], &[2, 1], &[2, 4, 4], 0), None),
        ("ScatterND indices [2,4]", scatter("ScatterND", &[3, 4, 5], &[2, 4], &[2], 0), None),
        ("ScatterND indices [2,3]", scatter("ScatterND", &[3, 4, 5], &[2, 3], &[2], 0), Some(vec![3, 4, 5])),
        // Split by num_outputs (y is the last part): "Invalid num_outputs value of 4. Split
        // sizes would produce a negative final split".
        ("Split [1] in 4", split4(&[1]), None),
        ("Split [6] in 4", split4(&[6]), Some(vec![0])),
        ("Split [7] in 4", split4(&[7]), Some(vec![1])),
        // SpaceToDepth, DepthToSpace: "requires input height to be a multiple of block_size",
        // "requires input depth to be a multiple of (block_size * block_size)".
        ("SpaceToDepth [1,2,5,4]", blocks("SpaceToDepth", &[1, 2, 5, 4]), None),
        ("SpaceToDepth [1,2,4,5]", blocks("SpaceToDepth", &[1, 2, 4, 5]), None),
        ("SpaceToDepth [1,2,4,6]", blocks("SpaceToDepth", &[1, 2, 4, 6]), Some(vec![1, 8, 2, 3])),
        ("DepthToSpace [1,6,2,2]", blocks("DepthToSpace", &[1, 6, 2, 2]), None),
        ("DepthToSpace [1,8,2,2]", blocks("DepthToSpace", &[1, 8, 2, 2]), Some(vec![1, 2, 4, 4])),
        // kernel_shape against the weight: "kernel_shape is not compatible with W shape";
        // ConvTranspose's weight is [C, M/group, ...]: "filter number not equal to input
        // channel number" (with group 2 as well).
        ("Conv kernel_shape [2,2], W 3x3", conv_k("Conv", &[1, 2, 5, 5], &[2, 2, 3, 3], 1, Some(&[2, 2])), None),
        (
            "ConvTranspose kernel_shape [2,2], W 3x3",
            conv_k("ConvTranspose", &[1, 2, 5, 5], &[2, 2, 3, 3], 1, Some(&[2, 2])),
            None,
        ),
        ("ConvTranspose C 3, W [2,2,3,3]", conv_k("ConvTranspose", &[1, 3, 5, 5], &[2, 2, 3, 3], 1, None), None),
        (
            "ConvTranspose C 4, W [2,2,3,3], group 2",
            conv_k("ConvTranspose", &[1, 4, 5, 5], &[2, 2, 3, 3], 2, None),
            None,
        ),
        ("ConvTranspose", conv_k("ConvTranspose", &[1, 2, 5, 5], &[2, 2, 3, 3], 1, None), Some(vec![1, 2, 7, 7])),
        // Trilu: "Input rank must be >= 2", "k should be a 0-D or 1-D tensor with 1 element";
        // CumSum: "Cannot apply CumSum operator on a scalar", an axis of two elements.
        ("Trilu x [4]", case(14, &[("x", &[4])], &[], node("t", "Trilu", &["x"], &["y"])), None),
        (
            "Trilu k [1,2]",
            case(14, &[("x", &[3, 4])], &[("k", &[2], &[1, 2])], node("t", "Trilu", &["x", "k"], &["y"])),
            None,
        ),
        (
            "Trilu k [1]",
            case(14, &[("x", &[3, 4])], &[("k", &[1], &[1])], node("t", "Trilu", &["x", "k"], &["y"])),
            Some(vec![3, 4]),
        ),
        ("CumSum x []", case(14, &[("x", &[])], &[("a", &[], &[0])], node("c", "CumSum", &["x", "a"], &["y"])), None),
        (
            "CumSum axis [0,1]",
            case(14, &[("x", &[3, 4])], &[("a", &[2], &[0, 1])], node("c", "CumSum", &["x", "a"], &["y"])),
            None,
        ),
        (
            "CumSum axis [1]",
            case(14, &[("x", &[3, 4])], &[("a", &[1], &[1])], node("c", "CumSum", &["x", "a"], &["y"])),
            Some(vec![3, 4]),
        ),
        // RoiAlign: "Input 0 expected to have rank 4", "Dimension mismatch in unification
        // between 3 and 2" (batch_indices), "Second dimension for rois should be exactly 4",
        // "Input 1 expected to have rank 2".
        ("RoiAlign", roi_align(&[1, 3, 8, 8], &[2, 4], &[2]), Some(vec![2, 3, 2, 3])),
        ("RoiAlign X [1,3,8,8,1]", roi_align(&[1, 3, 8, 8, 1], &[2, 4], &[2]), None),
        ("RoiAlign batch_indices [3]", roi_align(&[1, 3, 8, 8], &[2, 4], &[3]), None),
        ("RoiAlign rois [2,5]", roi_align(&[1, 3, 8, 8], &[2, 5], &[2]), None),
        ("RoiAlign rois [2]", roi_align(&[1, 3, 8, 8], &[2], &[2]), None),
        // ReverseSequence: "sequence_lens shape must be {batch_size}. Got:{4}. batch_size=3",
        // "'input' must have rank >= 2", "'sequence_lens' must have rank of 1".
        ("ReverseSequence", reverse(&[4, 3, 2], &[3], 1), Some(vec![4, 3, 2])),
        ("ReverseSequence lens [4]", reverse(&[4, 3, 2], &[4], 1), None),
        ("ReverseSequence lens [4] batch_axis 0", reverse(&[4, 3, 2], &[4], 0), Some(vec![4, 3, 2])),
        ("ReverseSequence x [4]", reverse(&[4], &[1], 1), None),
        ("ReverseSequence lens [3,1]", reverse(&[4, 3, 2], &[3, 1], 1), None),
        // Slice: "Axis 0 is referred to more than once" (also as 0 and -2).
        ("Slice axes [0,0]", slice(&[0, 0]), None),
        ("Slice axes [0,-2]", slice(&[0, -2]), None),
        ("Slice axes [0,1]", slice(&[0, 1]), Some(vec![2, 2])),
        // --- imgops ---
        // "[ShapeInferenceError] Input tensor must be 1-dimensional" (no kernel runs a valid one).
        ("ImageDecoder x [2,3]", image_decoder(&[2, 3]), None),
        ("ImageDecoder x []", image_decoder(&[]), None),
        // "Input shape must have either [C] or [1,C] dimensions where C > 0" (the spec's
        // inference), at run time "Single dimension value must be greater than 0".
        ("StringNormalizer [3]", strings("StringNormalizer", &[3]), Some(vec![3])),
        ("StringNormalizer [1,3]", strings("StringNormalizer", &[1, 3]), Some(vec![1, 3])),
        ("StringNormalizer [0]", strings("StringNormalizer", &[0]), None),
        ("StringNormalizer [1,0]", strings("StringNormalizer", &[1, 0]), None),
        ("StringNormalizer [2,3]", strings("StringNormalizer", &[2, 3]), None),
        ("StringNormalizer []", strings("StringNormalizer", &[]), None),
        ("StringNormalizer [1,2,3]", strings("StringNormalizer", &[1, 2, 3]), None),
        // "Input shape must have either [C] or [B,C] dimensions with B > 0."
        ("TfIdfVectorizer [2,4]", tfidf(&[2, 4]), Some(vec![2, 2])),
        ("TfIdfVectorizer [2,0]", tfidf(&[2, 0]), Some(vec![2, 2])),
        ("TfIdfVectorizer [0]", tfidf(&[0]), Some(vec![2])),
        ("TfIdfVectorizer [0,4]", tfidf(&[0, 4]), None),
        // From opset 22: "Dimension mismatch in unification between 4 and 3" (weight and C).
        (
            "NLLLoss-22 weight [3]",
            loss_at(22, "NegativeLogLikelihoodLoss", &[2, 3, 4], &[2, 4], Some(&[3])),
            Some(vec![2, 4]),
        ),
        ("NLLLoss-22 weight [4]", loss_at(22, "NegativeLogLikelihoodLoss", &[2, 3, 4], &[2, 4], Some(&[4])), None),
        ("NLLLoss-22 weight [1]", loss_at(22, "NegativeLogLikelihoodLoss", &[2, 3, 4], &[2, 4], Some(&[1])), None),
        (
            "SCELoss-22 weight [3]",
            loss_at(22, "SoftmaxCrossEntropyLoss", &[2, 3, 4], &[2, 4], Some(&[3])),
            Some(vec![2, 4]),
        ),
        ("SCELoss-22 weight [2]", loss_at(22, "SoftmaxCrossEntropyLoss", &[2, 3, 4], &[2, 4], Some(&[2])), None),
        // AffineGrid: "size[0] (2) must equal theta batch dimension (5)", "theta shape must be
        // [N, 2, 3] for 2D", "Input theta tensor dimension is not 3", "Length of input 'size'
        // is 3. It must be 4 for 2D or 5 for 5D."
        ("AffineGrid 2-D", affine_grid(&[2, 2, 3], &[2, 3, 5, 6]), Some(vec![2, 5, 6, 2])),
        ("AffineGrid 3-D", affine_grid(&[2, 3, 4], &[2, 3, 4, 5, 6]), Some(vec![2, 4, 5, 6, 3])),
        ("AffineGrid theta [5,2,3]", affine_grid(&[5, 2, 3], &[2, 3, 5, 6]), None),
        ("AffineGrid theta [2,2,4]", affine_grid(&[2, 2, 4], &[2, 3, 5, 6]), None),
        ("AffineGrid theta [2,2,3], 3-D", affine_grid(&[2, 2, 3], &[2, 3, 4, 5, 6]), None),
        ("AffineGrid theta [2,3]", affine_grid(&[2, 3], &[2, 3, 5, 6]), None),
        ("AffineGrid size [2,3,5]", affine_grid(&[2, 2, 3], &[2, 3, 5]), None),
        // The channel count shapes nothing: a negative one runs ("size[2] (H=-5) must be
        // positive" for a height).
        ("AffineGrid size [2,-3,5,6]", affine_grid(&[2, 2, 3], &[2, -3, 5, 6]), Some(vec![2, 5, 6, 2])),
        ("AffineGrid size [2,3,-5,6]", affine_grid(&[2, 2, 3], &[2, 3, -5, 6]), None),
        // Col2Im: "'block_shape' input must contain only positive values", "Dimension mismatch
        // in unification between 2 and 1" (the two lengths), "All 'image_shape' values must be
        // positive", "'input' dim[1] (0) must be a positive multiple of prod(block_shape)",
        // "Padded image extent is smaller than the dilated kernel", "'input' dim[2] (1) does
        // not match the number of sliding blocks (5)".
        ("Col2Im", col2im(&[1, 5, 5], &[5, 5], &[1, 5], &[]), Some(vec![1, 1, 5, 5])),
        ("Col2Im pads", col2im(&[1, 5, 15], &[5, 5], &[1, 5], &[0, 1, 0, 1]), Some(vec![1, 1, 5, 5])),
        ("Col2Im block [0,5]", col2im(&[1, 5, 5], &[5, 5], &[0, 5], &[]), None),
        ("Col2Im image [1]", col2im(&[1, 5, 5], &[1], &[1, 5], &[]), None),
        ("Col2Im image [0,5]", col2im(&[1, 5, 0], &[0, 5], &[1, 5], &[]), None),
        ("Col2Im x [1,0,5]", col2im(&[1, 0, 5], &[5, 5], &[1, 5], &[]), None),
        ("Col2Im image [5,1]", col2im(&[1, 5, 5], &[5, 1], &[1, 5], &[]), None),
        ("Col2Im x [1,5,1]", col2im(&[1, 5, 1], &[5, 5], &[1, 5], &[]), None),
        // MaxUnpool: "Index tensor shape should be same as that of the input data tensor",
        // "output_shape is smaller than minimum required", "output_shape batch and channel
        // dimensions must match input", "'output_shape' must have same number of elements".
        ("MaxUnpool", unpool(&[1, 1, 2, 2], &[1, 1, 2, 2], None), Some(vec![1, 1, 4, 4])),
        ("MaxUnpool output_shape", unpool(&[1, 1, 2, 2], &[1, 1, 2, 2], Some(&[1, 1, 5, 5])), Some(vec![1, 1, 5, 5])),
        ("MaxUnpool I [1,1,2,3]", unpool(&[1, 1, 2, 2], &[1, 1, 2, 3], None), None),
        ("MaxUnpool I [1,2,2]", unpool(&[1, 1, 2, 2], &[1, 2, 2], None), None),
        // A rank below 3 is refused before the spatial axes are counted (it panicked).
        ("MaxUnpool x [4]", unpool(&[4], &[4], None), None),
        ("MaxUnpool output_shape [1,1,6,5]", unpool(&[1, 1, 3, 3], &[1, 1, 3, 3], Some(&[1, 1, 6, 5])), None),
        ("MaxUnpool output_shape [1,0,9,9]", unpool(&[1, 1, 2, 2], &[1, 1, 2, 2], Some(&[1, 0, 9, 9])), None),
        ("MaxUnpool output_shape [1,1,9]", unpool(&[1, 1, 2, 2], &[1, 1, 2, 2], Some(&[1, 1, 9])), None),
        // "Computed output dimension is not positive for axis 2".
        ("MaxUnpool x [1,1,0,2]", unpool(&[1, 1, 0, 2], &[1, 1, 0, 2], None), None),
        // DeformConv: "Offset channel count must be offset_group * 2 * kH * kW", "Offset batch
        // size must match input batch size", "Offset spatial height must match output oH",
        // "Offset must be 4D", and as much for the mask with offset_group * kH * kW channels.
        ("DeformConv", deform(&[1, 1, 3, 3], &[1, 8, 2, 2], None), Some(vec![1, 1, 2, 2])),
        ("DeformConv mask", deform(&[1, 1, 3, 3], &[1, 8, 2, 2], Some(&[1, 4, 2, 2])), Some(vec![1, 1, 2, 2])),
        ("DeformConv offset [1,4,2,2]", deform(&[1, 1, 3, 3], &[1, 4, 2, 2], None), None),
        ("DeformConv x [2,1,3,3]", deform(&[2, 1, 3, 3], &[1, 8, 2, 2], None), None),
        ("DeformConv offset [1,8,3,2]", deform(&[1, 1, 3, 3], &[1, 8, 3, 2], None), None),
        ("DeformConv offset [8,2,2]", deform(&[1, 1, 3, 3], &[8, 2, 2], None), None),
        ("DeformConv mask [1,8,2,2]", deform(&[1, 1, 3, 3], &[1, 8, 2, 2], Some(&[1, 8, 2, 2])), None),
        ("DeformConv mask [1,4,1,2]", deform(&[1, 1, 3, 3], &[1, 8, 2, 2], Some(&[1, 4, 1, 2])), None),
        // "Input channels C must be positive", "Output channels M (oC) must be positive",
        // "Input channels must be divisible by offset_group", "offset_group must be positive".
        ("DeformConv w [0,1,2,2]", deform_w(&[0, 1, 2, 2], &[1, 8, 2, 2], 1), None),
        ("DeformConv offset_group 2, C 1", deform_w(&[1, 1, 2, 2], &[1, 16, 2, 2], 2), None),
        ("DeformConv offset_group 0", deform_w(&[1, 1, 2, 2], &[1, 0, 2, 2], 0), None),
        ("DeformConv x [0,1,3,3]", deform(&[0, 1, 3, 3], &[0, 8, 2, 2], None), Some(vec![0, 1, 2, 2])),
        // ScatterND: "indices must be empty when an indexed data dimension has size 0",
        // "invalid indice found, indice = 4" (of constant indices).
        ("ScatterND x [0,3]", scatter_nd(&[0, 3], &[2, 1], None, &[2, 3]), None),
        ("ScatterND x [0,3], no indices", scatter_nd(&[0, 3], &[0, 1], None, &[0, 3]), Some(vec![0, 3])),
        ("ScatterND x [3,0]", scatter_nd(&[3, 0], &[2, 1], None, &[2, 0]), Some(vec![3, 0])),
        ("ScatterND indices [0,-4]", scatter_nd(&[4, 3], &[2, 1], Some(&[0, -4]), &[2, 3]), Some(vec![4, 3])),
        ("ScatterND indices [0,4]", scatter_nd(&[4, 3], &[2, 1], Some(&[0, 4]), &[2, 3]), None),
        ("ScatterND indices [0,-5]", scatter_nd(&[4, 3], &[2, 1], Some(&[0, -5]), &[2, 3]), None),
        ("ScatterND indices [[1,3]]", scatter_nd(&[4, 3], &[1, 2], Some(&[1, 3]), &[1]), None),
        // NonMaxSuppression: "iou_threshold must be in range [0, 1]" (its first element).
        ("NonMaxSuppression iou 0.5", nms(&[], &[0.5]), Some(vec![3, 3])),
        ("NonMaxSuppression iou [0.5,3]", nms(&[2], &[0.5, 3.0]), Some(vec![3, 3])),
        ("NonMaxSuppression iou 1.5", nms(&[], &[1.5]), None),
        ("NonMaxSuppression iou -0.1", nms(&[], &[-0.1]), None),
        // Ranks onnxruntime refuses: "Invalid input X: NumDimensions() < 1", GroupNormalization's
        // body "Invalid position of 0", MeanVarianceNormalization's "No valid axes are
        // specified" (it drops axes beyond the rank), MaxRoiPool's "Input tensor must have at
        // least 4 dimensions" and kernel of 2 pooled sizes, Multinomial's "Input tensor must have
        // rank 2".
        (
            "BatchNormalization x []",
            case(
                15,
                &[("x", &[]), ("s", &[1]), ("b", &[1]), ("m", &[1]), ("v", &[1])],
                &[],
                node("bn", "BatchNormalization", &["x", "s", "b", "m", "v"], &["y"]),
            ),
            None,
        ),
        (
            "BatchNormalization x [3]",
            case(
                15,
                &[("x", &[3]), ("s", &[1]), ("b", &[1]), ("m", &[1]), ("v", &[1])],
                &[],
                node("bn", "BatchNormalization", &["x", "s", "b", "m", "v"], &["y"]),
            ),
            Some(vec![3]),
        ),
        ("GroupNormalization x [3]", group_norm_of(21, &[3]), None),
        ("GroupNormalization x [2,3]", group_norm_of(21, &[2, 3]), Some(vec![2, 3])),
        ("MVN x [2,3] axes [5]", mvn(&[2, 3], Some(&[5])), None),
        ("MVN x [2,3] axes [1,5]", mvn(&[2, 3], Some(&[1, 5])), Some(vec![2, 3])),
        ("MVN x []", mvn(&[], None), None),
        ("MVN x [3]", mvn(&[3], None), Some(vec![3])),
        ("Multinomial x [3]", case(7, &[("x", &[3])], &[], node("mn", "Multinomial", &["x"], &["y"])), None),
        (
            "Multinomial x [2,3]",
            case(7, &[("x", &[2, 3])], &[], node("mn", "Multinomial", &["x"], &["y"])),
            Some(vec![2, 1]),
        ),
        ("MaxRoiPool x [1,2,4,4]", roi_pool(&[1, 2, 4, 4], &[1, 1]), Some(vec![1, 2, 1, 1])),
        ("MaxRoiPool x [1,2,4]", roi_pool(&[1, 2, 4], &[1, 1]), None),
        ("MaxRoiPool x [1,2,4,4,4]", roi_pool(&[1, 2, 4, 4, 4], &[1, 1, 1]), None),
        // Unique of empty inputs: no slices are none distinct, empty slices one (numpy agrees).
        ("Unique x [0,3] axis 0", unique(&[0, 3], Some(0)), Some(vec![0, 3])),
        ("Unique x [0,3] axis 1", unique(&[0, 3], Some(1)), Some(vec![0, 1])),
        ("Unique x [0,2,0] axis 1", unique(&[0, 2, 0], Some(1)), Some(vec![0, 1, 0])),
        ("Unique x [2,0,3] axis 2", unique(&[2, 0, 3], Some(2)), Some(vec![2, 0, 1])),
        ("Unique x [2,0]", unique(&[2, 0], None), Some(vec![0])),
        ("Unique x [1,3] axis 0", unique(&[1, 3], Some(0)), Some(vec![1, 3])),
        ("Unique x [1]", unique(&[1], None), Some(vec![1])),
        // --- seqops ---
        // LinearAttention, the schema's inference: "q_num_heads (6) must be a multiple of
        // kv_num_heads (4)", "update_rule 'gated_delta' requires decay input", "update_rule
        // 'linear' forbids decay input", "update_rule must be one of ...", "Packed query last
        // dim (33) must be divisible by q_num_heads (4)", "Dimension mismatch in unification"
        // (head sizes, batch and sequence, past_state), "Input 3 expected to have rank 4",
        // "decay last dim (1) must be kv_num_heads (4) or kv_num_heads * d_k (32)", "beta last
        // dim (2) must be 1 or kv_num_heads (4)".
        ("LinearAttention", lin_att("linear", 4, &[QKV; 3]), Some(vec![2, 3, 32])),
        ("LinearAttention GQA", lin_att("linear", 8, &[&[2, 3, 64], QKV, &[2, 3, 16]]), Some(vec![2, 3, 32])),
        ("LinearAttention 6 of 4 heads", lin_att("linear", 6, &[&[2, 3, 24][..]; 3]), None),
        ("LinearAttention gated_delta no decay", lin_att("gated_delta", 4, &[QKV; 3]), None),
        ("LinearAttention rule foo", lin_att("foo", 4, &[QKV; 3]), None),
        ("LinearAttention linear with decay", lin_att("linear", 4, &[QKV, QKV, QKV, &[], &[2, 3, 4]]), None),
        ("LinearAttention query [2,3,33]", lin_att("linear", 4, &[&[2, 3, 33], QKV, QKV]), None),
        ("LinearAttention key [2,3,16]", lin_att("linear", 4, &[QKV, &[2, 3, 16], QKV]), None),
        ("LinearAttention value [2,4,32]", lin_att("linear", 4, &[QKV, QKV, &[2, 4, 32]]), None),
        ("LinearAttention past [2,4,8,4]", lin_att("linear", 4, &[QKV, QKV, QKV, &[2, 4, 8, 4]]), None),
        ("LinearAttention past [2,4,8]", lin_att("linear", 4, &[QKV, QKV, QKV, &[2, 4, 8]]), None),
        ("LinearAttention decay [2,3,32]", lin_att("gated", 4, &[QKV, QKV, QKV, &[], QKV]), Some(vec![2, 3, 32])),
        ("LinearAttention decay [2,3,1]", lin_att("gated", 4, &[QKV, QKV, QKV, &[], &[2, 3, 1]]), None),
        (
            "LinearAttention beta [2,3,1]",
            lin_att("delta", 4, &[QKV, QKV, QKV, &[], &[], &[2, 3, 1]]),
            Some(vec![2, 3, 32]),
        ),
        ("LinearAttention beta [2,3,2]", lin_att("delta", 4, &[QKV, QKV, QKV, &[], &[], &[2, 3, 2]]), None),
        ("LinearAttention beta [1,3,4]", lin_att("delta", 4, &[QKV, QKV, QKV, &[], &[], &[1, 3, 4]]), None),
        // CausalConvWithState, the schema's inference: "Input 1 expected to have rank 3",
        // "Dimension mismatch in unification between 2 and 1" (weight [C, 1, k], bias [C],
        // past_state [B, C, k - 1]), "unsupported activation value 'foo'".
        ("CausalConvWithState", causal_conv(&[&[4, 1, 3], &[4], &[2, 4, 2]], "silu"), Some(vec![2, 4, 5])),
        ("CausalConvWithState activation foo", causal_conv(&[&[4, 1, 3]], "foo"), None),
        ("CausalConvWithState weight [4,2,3]", causal_conv(&[&[4, 2, 3]], "none"), None),
        ("CausalConvWithState weight [3,1,3]", causal_conv(&[&[3, 1, 3]], "none"), None),
        ("CausalConvWithState weight [4,1,3,1]", causal_conv(&[&[4, 1, 3, 1]], "none"), None),
        ("CausalConvWithState bias [5]", causal_conv(&[&[4, 1, 3], &[5]], "none"), None),
        ("CausalConvWithState bias [4,1]", causal_conv(&[&[4, 1, 3], &[4, 1]], "none"), None),
        ("CausalConvWithState past [2,4,3]", causal_conv(&[&[4, 1, 3], &[], &[2, 4, 3]], "none"), None),
        ("CausalConvWithState past [1,4,2]", causal_conv(&[&[4, 1, 3], &[], &[1, 4, 2]], "none"), None),
        // TensorScatter: the schema's "past_cache and update must have the same rank", "axis 0
        // is out of range for rank 4", "Dimension mismatch in unification" (update, write_indices
        // [batch]), "Input 2 expected to have rank 1"; the kernel's "update sequence_length (9)
        // exceeds max_sequence_length (8)" (the spec's sequence_length <= max_sequence_length)
        // and "mode must be 'linear' or 'circular'".
        ("TensorScatter", tensor_scatter(&[2, 3, 2, 4], &[2], -2, "linear"), Some(vec![2, 3, 8, 4])),
        ("TensorScatter axis -1", tensor_scatter(&[2, 3, 8, 2], &[], -1, "circular"), Some(vec![2, 3, 8, 4])),
        ("TensorScatter indices [3]", tensor_scatter(&[2, 3, 2, 4], &[3], -2, "linear"), None),
        ("TensorScatter indices [2,1]", tensor_scatter(&[2, 3, 2, 4], &[2, 1], -2, "linear"), None),
        ("TensorScatter update [2,2,2,4]", tensor_scatter(&[2, 2, 2, 4], &[], -2, "linear"), None),
        ("TensorScatter update [2,3,9,4]", tensor_scatter(&[2, 3, 9, 4], &[], -2, "circular"), None),
        ("TensorScatter update [2,3,2,4,1]", tensor_scatter(&[2, 3, 2, 4, 1], &[], -2, "linear"), None),
        ("TensorScatter axis 0", tensor_scatter(&[2, 3, 8, 4], &[], 0, "linear"), None),
        ("TensorScatter mode foo", tensor_scatter(&[2, 3, 2, 4], &[], -2, "foo"), None),
        // RotaryEmbedding, the spec's shapes as ORT 1.32 checks them: "Input 'position_ids'
        // dimension 0 should be of size batch_size", "... is expected to have 2 dimensions",
        // "Inputs 'cos_cache' and 'sin_cache' are expected to have the same shape as input 'x'",
        // "Input 'cos_cache' is expected to have 2 dimensions" (with position_ids),
        // "rotary_embedding_dim must be less than or equal to head_size", "Input shape is 3D,
        // num_heads attribute must be provided", "hidden_size=30 must be divisible by
        // num_heads=4".
        ("RotaryEmbedding", rotary(&[2, 4, 3, 8], &[2, 3, 4], &[], &[]), Some(vec![2, 4, 3, 8])),
        (
            "RotaryEmbedding positions",
            rotary(&[2, 3, 32], &[50, 2], &[2, 3], &[("num_heads", 4), ("rotary_embedding_dim", 4)]),
            Some(vec![2, 3, 32]),
        ),
        ("RotaryEmbedding positions [1,3]", rotary(&[2, 4, 3, 8], &[50, 4], &[1, 3], &[]), None),
        ("RotaryEmbedding positions [2,3,1]", rotary(&[2, 4, 3, 8], &[50, 4], &[2, 3, 1], &[]), None),
        ("RotaryEmbedding cache [2,2,4]", rotary(&[2, 4, 3, 8], &[2, 2, 4], &[], &[]), None),
        ("RotaryEmbedding cache [2,3,4] positions", rotary(&[2, 4, 3, 8], &[2, 3, 4], &[2, 3], &[]), None),
        (
            "RotaryEmbedding rotary dim 16",
            rotary(&[2, 4, 3, 8], &[50, 8], &[2, 3], &[("rotary_embedding_dim", 16)]),
            None,
        ),
        ("RotaryEmbedding 3-D no num_heads", rotary(&[2, 3, 32], &[2, 3, 4], &[], &[]), None),
        ("RotaryEmbedding 4 heads of 30", rotary(&[2, 3, 30], &[2, 3, 3], &[], &[("num_heads", 4)]), None),
        // Attention: the schema's "The past_value input shall be 4 dimensions", "3D inputs
        // expected to have q_num_heads attribute" (also at opset 25), "past_key and past_value
        // must be provided together"; the spec's past shapes, which the opset-23/24 kernels
        // ("Output shapes for Attention could not be computed", "inconsistent batch_size
        // (between Q and past_key)") and the opset-25 body's Concat enforce; the kernels' "V
        // head size must be greater than 0", "Q number of heads must be greater than 0",
        // "nonpad_kv_seqlen must have shape [batch_size]", and at opset 23 (no padding) a mask
        // whose last size is neither 1 nor the keys'; nonpad_kv_seqlen with a past cache (the
        // spec's "should not", which the kernel refuses and opset 25's schema states).
        ("Attention past", attention_past(23, &[Q4, K4, K4, &[4, 11], PAST, PAST]), Some(vec![2, 3, 4, 8])),
        // "!((past_key != nullptr) && (present_key == nullptr)) was false"; onnx 25's
        // inference: "present_key and present_value must be requested together".
        ("Attention past, no present_key", one_present(23, "pv"), None),
        ("Attention 25 past, no present_value", one_present(25, "pk"), None),
        // A graph input beside its initializer, declared otherwise ("Shape of initializer w
        // does not match. {3} != {2,3}").
        ("Add of an input [3] whose initializer is [2,3]", declared_init(&[3], &[2, 3]), None),
        ("Add of an input [3] whose initializer is [3]", declared_init(&[3], &[3]), Some(vec![2, 3])),
        // An output Single in the schema left empty ("This is an invalid model").
        (
            "DynamicQuantizeLinear without y_scale",
            case(11, &[("x", &[2, 3])], &[], node("q", "DynamicQuantizeLinear", &["x"], &["y", "", "z"])),
            None,
        ),
        ("Attention past_value [2,3,5]", attention_past(24, &[Q4, K4, K4, &[], PAST, &[2, 3, 5]]), None),
        ("Attention past_key [2,2,5,8]", attention_past(25, &[Q4, K4, K4, &[], &[2, 2, 5, 8], PAST]), None),
        ("Attention past_value [2,3,5,7]", attention_past(23, &[Q4, K4, K4, &[], PAST, &[2, 3, 5, 7]]), None),
        ("Attention past_key alone", attention_past(23, &[Q4, K4, K4, &[], PAST]), None),
        ("Attention 3-D no heads opset 25", attention_at(25, &[&[2, 4, 24], &[2, 6, 24], &[2, 6, 24]], None), None),
        ("Attention V [2,3,6,0]", attention_past(23, &[Q4, K4, &[2, 3, 6, 0]]), None),
        ("Attention Q [2,0,4,8]", attention_past(24, &[&[2, 0, 4, 8], K4, K4]), None),
        ("Attention mask [4,5] opset 23", attention_past(23, &[Q4, K4, K4, &[4, 5]]), None),
        ("Attention nonpad [2]", attention_past(24, &[Q4, K4, K4, &[], &[], &[], &[2]]), Some(vec![2, 3, 4, 8])),
        ("Attention nonpad [3]", attention_past(24, &[Q4, K4, K4, &[], &[], &[], &[3]]), None),
        ("Attention nonpad and past", attention_past(24, &[Q4, K4, K4, &[], PAST, PAST, &[2]]), None),
        ("Attention nonpad and present", with_present(attention_past(25, &[Q4, K4, K4, &[], &[], &[], &[2]])), None),
        // The opset-25 body broadcasts nonpad_kv_seqlen against the batch ("Incompatible
        // dimensions" at its Add): [1] runs, [5] of a batch of 2 does not.
        ("Attention 25 nonpad [1]", attention_past(25, &[Q4, K4, K4, &[], &[], &[], &[1]]), Some(vec![2, 3, 4, 8])),
        ("Attention 25 nonpad [5]", attention_past(25, &[Q4, K4, K4, &[], &[], &[], &[5]]), None),
        // Read at older opsets (`ort_diff.py --opsets`). Flatten: "Invalid value(-1) for
        // attribute 'axis'" before opset 11. Mod: "fmod || supports_float_floor_mod was false"
        // for floats with fmod=0 before opset 28.
        ("Flatten axis -1 opset 10", flatten(10, -1), None),
        ("Flatten axis -1 opset 11", flatten(11, -1), Some(vec![6, 4])),
        ("Flatten axis 2 opset 10", flatten(10, 2), Some(vec![6, 4])),
        ("Mod float fmod 0 opset 13", modulo(13, 0), None),
        ("Mod float fmod 1 opset 13", modulo(13, 1), Some(vec![2, 3])),
        ("Mod float fmod 0 opset 28", modulo(28, 0), Some(vec![2, 3])),
        // Resize 11 requires roi and scales ("input 1 is marked single but has an empty
        // string in the graph"); 13 makes them optional.
        ("Resize 11 no roi", resize_sizes(11), None),
        ("Resize 13 no roi", resize_sizes(13), Some(vec![1, 1, 4, 4])),
        // onnxruntime makes a Constant an initializer before checking its schema: it runs
        // value_int before opset 12 (a runtime-differs warning here; onnx's checker refuses).
        (
            "Constant value_int opset 11",
            case(11, &[], &[], with_int(node("c", "Constant", &[], &["y"]), "value_int", 3)),
            Some(vec![]),
        ),
        // String attributes outside their lists: onnxruntime refuses each kernel ("mode
        // \"linear\" not supported, expect bilinear, nearest or bicubic"; "Unknown AutoPadType
        // String"; "Invalid normalize value of foo").
        ("GridSample 16 mode linear", grid_mode(16, "linear"), None),
        ("GridSample 16 mode bilinear", grid_mode(16, "bilinear"), Some(vec![1, 1, 2, 4])),
        ("GridSample 20 mode bilinear", grid_mode(20, "bilinear"), None),
        ("GridSample 20 mode linear", grid_mode(20, "linear"), Some(vec![1, 1, 2, 4])),
        ("Pad mode empty", pad_by("", &[3, 4], &[0, 1, 0, 1]), None),
        ("MaxPool auto_pad same_upper", max_pool_pad("same_upper"), None),
        ("MaxPool auto_pad empty", max_pool_pad(""), Some(vec![1, 1, 3, 3])),
        ("Resize nearest_mode foo", resize_nearest("nearest", "foo"), None),
        ("Resize linear nearest_mode foo", resize_nearest("linear", "foo"), Some(vec![1, 1, 4, 4])),
        ("Normalizer norm foo", ml(with_str(node("n", "Normalizer", &["x"], &["y"]), "norm", "foo"), &[2, 3], 1), None),
        (
            "Normalizer norm L1",
            ml(with_str(node("n", "Normalizer", &["x"], &["y"]), "norm", "L1"), &[2, 3], 1),
            Some(vec![2, 3]),
        ),
        // Int attributes (`ort_diff.py --attrs`). onnx's inference and onnxruntime keep reduced
        // axes for keepdims=1 only, and read an empty axes list as none for
        // noop_with_empty_axes=1 only.
        ("ReduceSum keepdims 2", reduce_sum(&[1], "keepdims", 2), Some(vec![2, 4])),
        ("ReduceSum keepdims 1", reduce_sum(&[1], "keepdims", 1), Some(vec![2, 1, 4])),
        ("ReduceSum noop 2", reduce_sum(&[], "noop_with_empty_axes", 2), Some(vec![1, 1, 1])),
        ("ReduceSum noop 1", reduce_sum(&[], "noop_with_empty_axes", 1), Some(vec![2, 3, 4])),
        ("ArgMax keepdims -1", with_int_at(arg_max(), "keepdims", -1), Some(vec![2, 4])),
        // "fmod must have value either 0 or 1", "exclusive == 0 || exclusive == 1 was false",
        // storage_order likewise.
        ("Mod fmod 2", modulo(13, 2), None),
        ("CumSum exclusive 2", cum_sum("exclusive", 2), None),
        // "Required min_gram_length must be positive", "max_gram_length must be inbounds of
        // ngram_counts", "max_skip_count must be non-negative".
        ("TfIdfVectorizer min_gram_length 0", tfidf_grams(0, 1, 0), None),
        ("TfIdfVectorizer max_gram_length 2 of 1 count", tfidf_grams(1, 2, 0), None),
        ("TfIdfVectorizer max_skip_count -1", tfidf_grams(1, 1, -1), None),
        ("TfIdfVectorizer", tfidf_grams(1, 1, 0), Some(vec![1])),
        // "output_dtype INT8 does not match y_zero_point type UINT8".
        ("QuantizeLinear output_dtype int8, uint8 zero point", quantize_to(DataType::Int8), None),
        ("QuantizeLinear output_dtype uint8, uint8 zero point", quantize_to(DataType::Uint8), Some(vec![2, 3])),
        ("CumSum reverse 1", cum_sum("reverse", 1), Some(vec![2, 3])),
        ("MaxPool storage_order 2", with_int_at(max_pool_pad("NOTSET"), "storage_order", 2), None),
        // `ort_diff.py --attrs choices`. pads beside an auto_pad: "A Conv/ConvTranspose node
        // has both 'auto_pad' and 'pads' attributes" (an empty auto_pad is NOTSET there, not
        // in onnx's ConvTranspose inference: "The pads attribute cannot be used simultaneously
        // with auto_pad attribute"); the pools take both. "Providing `scales` is incompatible
        // with a `keep_aspect_ratio_policy` other than \"stretch\"".
        ("Conv VALID beside pads", conv_pads("VALID"), None),
        ("Conv SAME_UPPER beside pads", conv_pads("SAME_UPPER"), None),
        ("Conv \"\" beside pads", conv_pads(""), Some(vec![1, 1, 3, 3])),
        ("Conv NOTSET beside pads", conv_pads("NOTSET"), Some(vec![1, 1, 3, 3])),
        (
            "ConvTranspose VALID beside pads",
            with_ints_at(conv_t(&[1, 1, 3, 3], &[1, 1, 3, 3], "VALID", 1, 0), "pads", &[0; 4]),
            None,
        ),
        (
            "ConvTranspose \"\" beside pads",
            with_ints_at(conv_t(&[1, 1, 3, 3], &[1, 1, 3, 3], "", 1, 0), "pads", &[0; 4]),
            None,
        ),
        (
            "ConvTranspose NOTSET beside pads",
            with_ints_at(conv_t(&[1, 1, 3, 3], &[1, 1, 3, 3], "NOTSET", 1, 0), "pads", &[0; 4]),
            Some(vec![1, 1, 5, 5]),
        ),
        ("MaxPool VALID beside pads", with_ints_at(max_pool_pad("VALID"), "pads", &[1; 4]), Some(vec![1, 1, 3, 3])),
        ("Resize scales not_larger", resize_policy("not_larger", false), None),
        ("Resize scales stretch", resize_policy("stretch", false), Some(vec![1, 1, 4, 4])),
        ("Resize sizes not_larger", resize_policy("not_larger", true), Some(vec![1, 1, 2, 2])),
        // `ort_diff.py --opsets --attrs`: "'block_size' must be non-negative", "CPU
        // QuantizeLinear only supports precision 0 (use scale type), FLOAT, and FLOAT16",
        // "Sampling ratio should be >=0", and BatchNormalization 7 reading `spatial` other than 1
        // as per element ("Invalid input scale: NumDimensions() != 3").
        ("QuantizeLinear block_size -1", with_int_at(quantize_to(DataType::Uint8), "block_size", -1), None),
        ("QuantizeLinear block_size 0", with_int_at(quantize_to(DataType::Uint8), "block_size", 0), Some(vec![2, 3])),
        ("DequantizeLinear block_size -1", with_int_at(dequantize(), "block_size", -1), None),
        ("DequantizeLinear", dequantize(), Some(vec![2, 3])),
        ("QuantizeLinear 25 precision int64", with_int_at(quantize_at(25), "precision", 7), None),
        ("QuantizeLinear 25 precision float16", with_int_at(quantize_at(25), "precision", 10), Some(vec![2, 3])),
        (
            "RoiAlign sampling_ratio -1",
            with_int_at(roi_align(&[1, 3, 8, 8], &[2, 4], &[2]), "sampling_ratio", -1),
            None,
        ),
        (
            "RoiAlign sampling_ratio 0",
            with_int_at(roi_align(&[1, 3, 8, 8], &[2, 4], &[2]), "sampling_ratio", 0),
            Some(vec![2, 3, 2, 3]),
        ),
        (
            "BatchNormalization 7 spatial 0, scale [3]",
            with_int_at(norm_c("BatchNormalization", 7, &[3], &[3]), "spatial", 0),
            None,
        ),
        (
            "BatchNormalization 7 spatial 0, scale [3,4]",
            with_int_at(norm_c("BatchNormalization", 7, &[3, 4], &[3, 4]), "spatial", 0),
            Some(vec![2, 3, 4]),
        ),
        (
            "BatchNormalization 7 spatial 2, scale [3]",
            with_int_at(norm_c("BatchNormalization", 7, &[3], &[3]), "spatial", 2),
            None,
        ),
        (
            "BatchNormalization 7 spatial 1, scale [3]",
            with_int_at(norm_c("BatchNormalization", 7, &[3], &[3]), "spatial", 1),
            Some(vec![2, 3, 4]),
        ),
        // "Attribute to does not specify a valid type"; an EyeLike of dtype 0 has no type.
        ("Cast to 99", cast_to(99), None),
        ("Cast to 10", cast_to(10), Some(vec![2, 3])),
        // Cast checks round_mode ("Attribute round_mode must be 'up', 'down', or 'nearest'"),
        // CastLike reads it no further.
        ("Cast round_mode bogus", round_mode("Cast", "bogus"), None),
        ("Cast round_mode up", round_mode("Cast", "up"), Some(vec![2, 3])),
        ("CastLike round_mode bogus", round_mode("CastLike", "bogus"), Some(vec![2, 3])),
        (
            "EyeLike dtype 0",
            with_int_at(case(21, &[("x", &[3, 3])], &[], node("e", "EyeLike", &["x"], &["y"])), "dtype", 0),
            None,
        ),
        // Split: "Both 'split' input and 'num_outputs' attribute were given", "cannot be lower
        // than 1", "Number of outputs (2) does not match num_outputs (3)".
        ("Split num_outputs and split", split_n(2, true), None),
        ("Split num_outputs 0", split_n(0, false), None),
        ("Split num_outputs 3 of 2", split_n(3, false), None),
        ("Split num_outputs -1", split_n(-1, false), None),
        ("Split num_outputs 2", split_n(2, false), Some(vec![2, 2])),
        // "Integer overflow" on a negative batch_dims.
        ("GatherND batch_dims -1", with_int_at(take("GatherND", &[2, 3], &[2, 1]), "batch_dims", -1), None),
        // Attention 23 and 24: a positive head count must be the 4-D input's; 25 takes none.
        ("Attention 23 4-D heads 1", attention_at(23, &[Q4, K4, K4], Some((1, 1))), None),
        ("Attention 23 4-D heads 3", attention_at(23, &[Q4, K4, K4], Some((3, 3))), Some(vec![2, 3, 4, 8])),
        ("Attention 25 4-D heads 3", attention_at(25, &[Q4, K4, K4], Some((3, 3))), None),
        ("RotaryEmbedding num_heads -1", with_int_at(rotary_4d(), "num_heads", -1), None),
        ("RotaryEmbedding 4-D", rotary_4d(), Some(vec![2, 3, 4, 8])),
        // "This number of op outputs should be 3 when Training_mode = True", "... 1 when
        // Training_mode = False".
        ("BatchNorm training 1 output", batch_norm(1, 1), None),
        ("BatchNorm inference 3 outputs", batch_norm(0, 3), None),
        ("BatchNorm training 3 outputs", batch_norm(1, 3), Some(vec![2, 3, 4, 4])),
        (
            "LayerNorm stash_type -1",
            with_int_at(norm("LayerNormalization", &[2, 3], &[3], None, -1), "stash_type", -1),
            Some(vec![2, 3]),
        ),
        ("LayerNorm stash_type -1 with statistics", layer_norm_stats(-1), None),
        ("LayerNorm stash_type 1 with statistics", layer_norm_stats(1), Some(vec![2, 3])),
        (
            "LayerNorm stash_type 0",
            with_int_at(norm("LayerNormalization", &[2, 3], &[3], None, -1), "stash_type", 0),
            Some(vec![2, 3]),
        ),
        (
            "RMSNorm stash_type -1",
            with_int_at(norm("RMSNormalization", &[2, 3], &[3], None, -1), "stash_type", -1),
            Some(vec![2, 3]),
        ),
        // Int lists: "Explicit output size must be positive", "All stride values must be
        // positive", "The number of keys 3 and the number of values 2 must be the same",
        // "ngram_indexes must be non-empty", "items % ngram_size == 0".
        (
            "ConvTranspose output_shape [0,5]",
            with_ints_at(conv_t(&[1, 1, 3, 3], &[1, 2, 3, 3], "NOTSET", 1, 0), "output_shape", &[0, 5]),
            None,
        ),
        (
            "ConvTranspose output_shape [5,5]",
            with_ints_at(conv_t(&[1, 1, 3, 3], &[1, 2, 3, 3], "NOTSET", 1, 0), "output_shape", &[5, 5]),
            Some(vec![1, 2, 5, 5]),
        ),
        ("MaxUnpool strides [0,2]", with_ints_at(max_unpool(), "strides", &[0, 2]), None),
        ("MaxUnpool strides [2,2]", with_ints_at(max_unpool(), "strides", &[2, 2]), Some(vec![1, 1, 4, 4])),
        ("LabelEncoder 3 keys 2 values", label_encoder(&[1.0, 2.0]), None),
        ("LabelEncoder 3 keys 3 values", label_encoder(&[1.0, 2.0, 3.0]), Some(vec![2, 3])),
        // "At least one of keys_tensor, keys_strings, keys_int64s, keys_floats must be set".
        ("LabelEncoder no keys", without(label_encoder(&[1.0, 2.0, 3.0]), "keys_floats"), None),
        ("TfIdfVectorizer no ngram_indexes", with_ints_at(tfidf_grams(1, 1, 0), "ngram_indexes", &[]), None),
        ("TfIdfVectorizer half a bigram", with_ints_at(bigrams(), "pool_int64s", &[2, 3]), None),
        ("TfIdfVectorizer a bigram", tfidf_bigram(&[0, 1]), Some(vec![2])),
        // "weights and indexes must have equal size".
        ("TfIdfVectorizer 1 weight 2 indexes", tfidf_weighted(&[1.0]), None),
        ("TfIdfVectorizer 2 weights 2 indexes", tfidf_weighted(&[1.0, 2.0]), Some(vec![2])),
        (
            "TfIdfVectorizer 2 unigrams 2 indexes",
            with_ints_at(with_ints_at(tfidf_grams(1, 1, 0), "pool_int64s", &[2, 3]), "ngram_indexes", &[0, 1]),
            Some(vec![2]),
        ),
        // "TreeEnsemble contains a cycle or shared internal node"; onnx's inference: "Attribute
        // 'nodes_truenodeids' must have 2 elements"; a root past the nodes.
        (
            "TreeEnsemble branch to itself",
            with_ints_at(with_ints_at(tree_ensemble(&[2, 3], 0), "nodes_trueleafs", &[0]), "nodes_truenodeids", &[0]),
            None,
        ),
        (
            "TreeEnsemble 2 featureids for 1 node",
            with_ints_at(tree_ensemble(&[2, 3], 0), "nodes_featureids", &[0, 0]),
            None,
        ),
        ("TreeEnsemble root 1 of 1 node", with_ints_at(tree_ensemble(&[2, 3], 0), "tree_roots", &[1]), None),
        ("TreeEnsemble 1 target for 2 leaves", with_ints_at(tree_ensemble(&[2, 3], 0), "leaf_targetids", &[0]), None),
        // "target/class count must be positive"; the aggregate is one of four.
        ("TreeEnsemble n_targets 0", with_int_at(tree_ensemble(&[2, 3], 0), "n_targets", 0), None),
        ("TreeEnsemble aggregate_function 7", with_int_at(tree_ensemble(&[2, 3], 0), "aggregate_function", 7), None),
    ]
    .into_iter()
    .chain(contrib_table())
    .chain(float_table())
    .collect()
}

/// An integer initializer: name, dims, values, element type (int64 or int32).
type Int<'a> = (&'a str, &'a [i64], &'a [i64], DataType);

/// A one-node model of onnxruntime's `domain` (com.microsoft, or com.microsoft.nchwc for the
/// NCHWc ops its optimizer writes at ORT_ENABLE_ALL) over typed inputs and integer initializers.
fn ms(domain: &str, n: NodeProto, inputs: &[(&str, &[i64], DataType)], consts: &[Int<'_>]) -> ModelProto {
    let inputs = inputs.iter().map(|(name, s, t)| typed(name, *t, s)).collect();
    let mut m = build::model(17, inputs, vec![NodeProto { domain: Some(domain.into()), ..n }], &["y"]);
    m.opset_import.push(OperatorSetIdProto { domain: Some(domain.into()), version: Some(1) });
    m.graph.as_mut().unwrap().initializer = consts
        .iter()
        .map(|(name, dims, values, t)| TensorProto {
            name: Some(name.to_string()),
            dims: dims.to_vec(),
            data_type: Some(*t as i32),
            int64_data: if *t == DataType::Int64 { values.to_vec() } else { vec![] },
            int32_data: if *t == DataType::Int32 { values.iter().map(|v| *v as i32).collect() } else { vec![] },
            ..Default::default()
        })
        .collect();
    m
}

/// com.microsoft Attention-1 (QAttention when `quantized`) of x shaped `x` ([2, 3, 8] in
/// the base case) by w [8, 24], two heads, with a constant int32 mask of shape `mask` holding
/// 3s, and QAttention's input scale, weight scale, input and weight zero points shaped `q`.
fn ms_attention(quantized: bool, x: &[i64], mask: Option<&[i64]>, q: [&[i64]; 4]) -> ModelProto {
    use DataType::{Float as F, Int32, Uint8 as U8};
    let t = if quantized { U8 } else { F };
    let mut inputs: Vec<(&str, &[i64], DataType)> = vec![("x", x, t), ("w", &[8, 24], t), ("b", &[24], F)];
    let mut names = vec!["x", "w", "b"];
    if quantized {
        inputs.extend([("xs", q[0], F), ("ws", q[1], F), ("xz", q[2], U8), ("wz", q[3], U8)]);
        names.extend(["xs", "ws", if mask.is_some() { "m" } else { "" }, "xz", "wz"]);
    } else if mask.is_some() {
        names.push("m");
    }
    let values = vec![3; mask.map_or(0, |m| m.iter().product::<i64>() as usize)];
    let consts: Vec<Int> = mask.map(|m| ("m", m, &values[..], Int32)).into_iter().collect();
    let op = if quantized { "QAttention" } else { "Attention" };
    ms(MS, with_int(node("a", op, &names, &["y"]), "num_heads", 2), &inputs, &consts)
}

/// DynamicQuantizeLSTM-1 of x [5, 2, 3] forward, hidden 4: int8 W [1, 3, 16] and R [1, 4, 16],
/// per-tensor scales and zero points, with the inputs `changed` (by name: W, R, B, ih, ws, wz)
/// of other shapes, and a per-channel W zero point [1, 16] of `zp` when given.
fn dq_lstm(changed: &[(&str, &[i64])], zp: Option<i32>) -> ModelProto {
    use DataType::{Float as F, Int8 as I8};
    let shapes: &[(&str, &[i64], DataType)] =
        &[("x", &[5, 2, 3], F), ("W", &[1, 3, 16], I8), ("R", &[1, 4, 16], I8), ("B", &[1, 32], F)];
    let rest: &[(&str, &[i64], DataType)] = &[("ih", &[1, 2, 4], F), ("ws", &[1], F), ("wz", &[1], I8)];
    let mut inputs = Vec::new();
    for (name, shape, t) in shapes.iter().chain(rest).chain(&[("rs", &[1][..], F), ("rz", &[1][..], I8)]) {
        let shape = changed.iter().find(|(n, _)| n == name).map_or(*shape, |(_, s)| *s);
        let shape = if zp.is_some() && matches!(*name, "ws" | "wz") { &[1, 16][..] } else { shape };
        if !(zp.is_some() && *name == "wz") {
            inputs.push(typed::<i64>(name, *t, shape));
        }
    }
    let ins = ["x", "W", "R", "B", "", "ih", "", "", "ws", "wz", "rs", "rz"];
    let n = NodeProto {
        domain: Some(MS.into()),
        ..with_int(node("l", "DynamicQuantizeLSTM", &ins, &["y"]), "hidden_size", 4)
    };
    let mut m = build::model(17, inputs, vec![n], &["y"]);
    m.opset_import.push(OperatorSetIdProto { domain: Some(MS.into()), version: Some(1) });
    if let Some(z) = zp {
        let t = TensorProto {
            name: Some("wz".into()),
            dims: vec![1, 16],
            data_type: Some(I8 as i32),
            int32_data: vec![z; 16],
            ..Default::default()
        };
        m.graph.as_mut().unwrap().initializer.push(t);
    }
    m
}

/// EmbedLayerNormalization-1 (QEmbedLayerNormalization when `quantized`) of input_ids [2, 3]
/// with segment_ids, word [10, 8], position [16, 8] and segment [2, 8] embeddings, gamma and
/// beta [8] and a mask [2, 3], the inputs `changed` (by name: t, w, p, g, m, gs) of other shapes
/// (`None`: left out), and `outputs` outputs.
fn embed(quantized: bool, changed: &[(&str, Option<&[i64]>)], outputs: usize) -> ModelProto {
    use DataType::{Float as F, Int32 as I32, Uint8 as U8};
    let t = if quantized { U8 } else { F };
    let mut all: Vec<(&str, &[i64], DataType)> = vec![
        ("i", &[2, 3], I32),
        ("t", &[2, 3], I32),
        ("w", &[10, 8], t),
        ("p", &[16, 8], t),
        ("e", &[2, 8], t),
        ("g", &[8], t),
        ("b", &[8], t),
        ("m", &[2, 3], I32),
    ];
    if quantized {
        let scales = ["ws", "ps", "es", "gs", "bs"].map(|n| (n, &[][..], F));
        let zeros = ["wz", "pz", "ez", "gz", "bz"].map(|n| (n, &[][..], U8));
        all.extend(scales.into_iter().chain(zeros));
    }
    let mut names = Vec::new();
    let mut inputs = Vec::new();
    for (name, shape, dt) in all {
        match changed.iter().find(|(n, _)| *n == name) {
            Some((_, None)) => names.push(""),
            Some((_, Some(s))) => {
                names.push(name);
                inputs.push((name, *s, dt));
            }
            None => {
                names.push(name);
                inputs.push((name, shape, dt));
            }
        }
    }
    let op = if quantized { "QEmbedLayerNormalization" } else { "EmbedLayerNormalization" };
    let outs: Vec<&str> = ["y", "mask_index", "sum"][..outputs].to_vec();
    let mut m = ms(MS, node("e", op, &names, &outs), &inputs, &[]);
    m.graph.as_mut().unwrap().output.truncate(1);
    m
}

/// QLinearWhere-1 of a bool condition [2, 1], uint8 x [1, 3] and x2 [2, 3]: x's scale (of
/// `value`) and zero point shaped `x`, x2's and the output's a scalar 0.1 and 0.
fn qlinear_where(x: &[i64], value: f32) -> ModelProto {
    use DataType::{Bool, Uint8 as U8};
    let names = ["c", "x", "xs", "xz", "x2", "ys", "yz", "zs", "zz"];
    let inputs: &[(&str, &[i64], DataType)] = &[("c", &[2, 1], Bool), ("x", &[1, 3], U8), ("x2", &[2, 3], U8)];
    let mut m = ms(MS, node("w", "QLinearWhere", &names, &["y"]), inputs, &[]);
    quant_params(&mut m, &[("xs", x, value), ("ys", &[], 0.1), ("zs", &[], 0.1)]);
    m
}

/// Constant scales `(name, shape, value)` added to `m`, each with a uint8 zero point of 0 of
/// its shape, named as the scale with its `s` made `z`.
fn quant_params(m: &mut ModelProto, scales: &[(&str, &[i64], f32)]) {
    let g = m.graph.as_mut().unwrap();
    for (name, dims, v) in scales {
        let count = dims.iter().product::<i64>() as usize;
        g.initializer.push(build::floats(name, dims, &vec![*v; count]));
        let zero = TensorProto {
            name: Some(name.replace('s', "z")),
            dims: dims.to_vec(),
            data_type: Some(DataType::Uint8 as i32),
            int32_data: vec![0; count],
            ..Default::default()
        };
        g.initializer.push(zero);
    }
}

/// QLinearConcat-1 along axis 1 of uint8 a and b, y's scale and zero point shaped `y` and a's
/// `a` (constants of 0.1 and 0 for y, 0.2 and 0 for a and b).
fn qlinear_concat(a: &[i64], b: &[i64], qa: &[i64], y: &[i64]) -> ModelProto {
    use DataType::Uint8 as U8;
    let names = ["ys", "yz", "a", "as", "az", "b", "bs", "bz"];
    let n = with_int(node("q", "QLinearConcat", &names, &["y"]), "axis", 1);
    let mut m = ms(MS, n, &[("a", a, U8), ("b", b, U8)], &[]);
    quant_params(&mut m, &[("ys", y, 0.1), ("as", qa, 0.2), ("bs", &[], 0.2)]);
    m
}

/// `m` with its first node's input `slot` left empty.
fn without_input(mut m: ModelProto, slot: usize) -> ModelProto {
    m.graph.as_mut().unwrap().node[0].input[slot] = String::new();
    m
}

/// MoE with the sparse mixer.
fn sparse_mixer() -> ModelProto {
    with_int_at(moe(&[10, 4], &[4, 8, 16], &[4, 16, 8]), "use_sparse_mixer", 1)
}

/// DecoderMaskedMultiHeadAttention-1 of one position, 2 heads of 4, over a `past` key and value
/// with past_present_share_buffer `shared` and `filled` of them held.
fn shared_past(shared: i64, past: Option<&[i64]>, filled: Option<i64>) -> ModelProto {
    use DataType::{Float as F, Int32};
    let names = ["q", "k", "v", "", "", "pk", "pv", "n"];
    let used = if filled.is_some() {
        8
    } else if past.is_some() {
        7
    } else {
        3
    };
    let outs: &[&str] = if past.is_some() { &["y", "pk_out", "pv_out"] } else { &["y"] };
    let n = with_int(node("d", "DecoderMaskedMultiHeadAttention", &names[..used], outs), "num_heads", 2);
    let mut ins: Vec<(&str, &[i64], DataType)> = vec![("q", &[2, 1, 8], F), ("k", &[2, 1, 8], F), ("v", &[2, 1, 8], F)];
    ins.extend(past.into_iter().flat_map(|p| [("pk", p, F), ("pv", p, F)]));
    let filled = filled.map(|f| [f]);
    let consts: Vec<Int> = filled.iter().map(|f| ("n", &[1][..], &f[..], Int32)).collect();
    ms(MS, with_int(n, "past_present_share_buffer", shared), &ins, &consts)
}

/// WordConvEmbedding of words [2, 3, 4] by a conv [5, 1, 2, 6] with a size attribute set.
fn word_conv_with(attr: &str, value: i64) -> ModelProto {
    use DataType::{Float as F, Int32};
    let ins = [("s", &[2, 3, 4][..], Int32), ("w", &[5, 1, 2, 6], F), ("b", &[5], F), ("c", &[10, 6], F)];
    ms(MS, with_int(node("w", "WordConvEmbedding", &["s", "w", "b", "c"], &["y"]), attr, value), &ins, &[])
}

/// MoE of x [2, 5, 8] over 4 experts, each picking k=1.
fn moe(router: &[i64], fc1: &[i64], fc2: &[i64]) -> ModelProto {
    use DataType::Float as F;
    let ins = [("x", &[2, 5, 8][..], F), ("r", router, F), ("w1", fc1, F), ("b1", &[4, 16], F), ("w2", fc2, F)];
    ms(MS, with_int(node("m", "MoE", &["x", "r", "w1", "b1", "w2"], &["y"]), "k", 1), &ins, &[])
}

const MS: &str = "com.microsoft";
const NCHWC: &str = "com.microsoft.nchwc";

/// Rows of onnxruntime's contrib ops beyond the fused transformer ones (their rules in
/// src/ops/contrib.rs) and of the layout ops of ORT_ENABLE_ALL: NHWC (`channels_last`) quantized
/// ops and NCHWc (channels in blocks of 8 or 16 by the machine's vector width; these rows hold
/// on either).
/// Sizes computed in floating point, rounded as onnxruntime computes them: float32 `1 / 0.1`
/// is 10 (in float64 arithmetic it floors to 9), an int64 2049 is 2048 as float16. Float16
/// arithmetic runs in float32 on the CPU, rounded to float16 or not depending on the graph
/// (2048 + 1 gives 2049 before a Cast, 2048 as an output): only what float16 holds is kept.
fn float_table() -> Vec<(&'static str, ModelProto, Option<Vec<i64>>)> {
    use DataType::{Double as F64, Float as F, Float16 as F16, Int64 as I64};
    let un = |op: &str| node("f", op, &["a"], &["f"]);
    let bin = |op: &str| node("f", op, &["a", "b"], &["f"]);
    let (div, floor) = (|| node("q", "Div", &["a", "b"], &["q"]), || node("f", "Floor", &["q"], &["f"]));
    let sum3 = || node("f", "Sum", &["a", "b", "b"], &["f"]);
    let cast = |to: DataType| with_int(node("f", "Cast", &["a"], &["f"]), "to", to as i64);
    vec![
        ("float32 floor(1 / 0.1)", float_size(vec![div(), floor()], &[("a", F, 1.0), ("b", F, 0.1)]), Some(vec![10])),
        (
            "float64 floor(1 / 0.1)",
            float_size(vec![div(), floor()], &[("a", F64, 1.0), ("b", F64, 0.1)]),
            Some(vec![10]),
        ),
        ("float32 16 ^ 0.5", float_size(vec![bin("Pow")], &[("a", F, 16.0), ("b", F, 0.5)]), Some(vec![4])),
        ("float32 3 ^ int64 2", float_size(vec![bin("Pow")], &[("a", F, 3.0), ("b", I64, 2.0)]), Some(vec![9])),
        ("float32 sqrt(16)", float_size(vec![un("Sqrt")], &[("a", F, 16.0)]), Some(vec![4])),
        ("float32 round(2.5)", float_size(vec![un("Round")], &[("a", F, 2.5)]), Some(vec![2])),
        ("float32 round(3.5)", float_size(vec![un("Round")], &[("a", F, 3.5)]), Some(vec![4])),
        ("float32 1 / 0.25", float_size(vec![un("Reciprocal")], &[("a", F, 0.25)]), Some(vec![4])),
        ("float32 sum(2, 1.5, 1.5)", float_size(vec![sum3()], &[("a", F, 2.0), ("b", F, 1.5)]), Some(vec![5])),
        ("float16 sum(2048, 1, 1)", float_size(vec![sum3()], &[("a", F16, 2048.0), ("b", F16, 1.0)]), Some(vec![2050])),
        ("int64 2049 as float16", float_size(vec![cast(F16)], &[("a", I64, 2049.0)]), Some(vec![2048])),
        ("int64 2^24+1 as float32", float_size(vec![cast(F)], &[("a", I64, 16_777_217.0)]), Some(vec![16_777_216])),
    ]
}

fn contrib_table() -> Vec<(&'static str, ModelProto, Option<Vec<i64>>)> {
    use DataType::{Float as F, Int16, Int32, Int32 as I32, Int64, Uint8 as U8};
    let q = [("xs", &[][..], F), ("xz", &[], U8), ("ys", &[], F), ("yz", &[], U8)];
    let pool = |op: &str, x: &[i64], kernel: &[i64], last: bool| {
        let n =
            with_int(with_ints(node("p", op, &[], &["y"]), "kernel_shape", kernel), "channels_last", i64::from(last));
        let n = NodeProto { input: vec!["x".into(), "xs".into(), "xz".into(), "ys".into(), "yz".into()], ..n };
        ms(MS, n, &[&[("x", x, U8)][..], &q].concat(), &[])
    };
    let nhwc_max = |x: &[i64], kernel: &[i64]| {
        ms(MS, with_ints(node("p", "NhwcMaxPool", &["x"], &["y"]), "kernel_shape", kernel), &[("x", x, U8)], &[])
    };
    let gemm = |c: &[i64]| {
        let n = with_str(node("g", "FusedGemm", &["a", "b", "c"], &["y"]), "activation", "Relu");
        ms(MS, n, &[("a", &[3, 4], F), ("b", &[4, 5], F), ("c", c, F)], &[])
    };
    let qwhere = |y: &[i64]| {
        let names = ["c", "x", "xs", "xz", "y", "ys", "yz", "zs", "zz"];
        let ins = [("c", &[2, 1][..], DataType::Bool), ("x", &[1, 3], U8), ("y_", y, U8)];
        let n = node("w", "QLinearWhere", &names.map(|n| if n == "y" { "y_" } else { n }), &["y"]);
        let params: Vec<(&str, &[i64], DataType)> = ["xs", "xz", "ys", "yz", "zs", "zz"]
            .iter()
            .map(|n| (*n, &[][..], if n.ends_with('s') { F } else { U8 }))
            .collect();
        ms(MS, n, &[&ins[..], &params].concat(), &[])
    };
    let gbq = |scales: &[i64], gather_axis: i64| {
        let n = with_int(node("g", "GatherBlockQuantized", &["d", "i", "s"], &["y"]), "block_size", 16);
        let n = with_int(n, "gather_axis", gather_axis);
        ms(MS, n, &[("d", &[5, 16], U8), ("i", &[2, 3], Int64), ("s", scales, F)], &[])
    };
    let expand_dims = |axis: i64| {
        ms(MS, node("e", "ExpandDims", &["x", "a"], &["y"]), &[("x", &[2, 3], F)], &[("a", &[], &[axis], Int32)])
    };
    let cdist =
        |a: &[i64], b: &[i64]| ms(MS, node("d", "CDist", &["a", "b"], &["y"]), &[("a", a, F), ("b", b, F)], &[]);
    let crop = |rois: &[i64]| {
        let consts: &[Int] = &[("b", &[4], &[0, 1, 0, 1], Int32), ("s", &[2], &[5, 6], Int32)];
        ms(
            MS,
            node("c", "CropAndResize", &["x", "r", "b", "s"], &["y"]),
            &[("x", &[2, 3, 8, 8], F), ("r", rois, F)],
            consts,
        )
    };
    let masked = |m: &[i64]| {
        let n = with_ints(node("p", "MaxpoolWithMask", &["x", "m"], &["y"]), "kernel_shape", &[2, 2]);
        ms(MS, n, &[("x", &[1, 2, 5, 6], F), ("m", m, Int32)], &[])
    };
    let nchwc_conv = |x: &[i64], w: &[i64]| {
        let n = with_ints(node("c", "Conv", &["x", "w"], &["y"]), "kernel_shape", &[1, 1]);
        ms(NCHWC, n, &[("x", x, F), ("w", w, F)], &[])
    };
    let nchwc_max = |x: &[i64]| {
        ms(NCHWC, with_ints(node("p", "MaxPool", &["x"], &["y"]), "kernel_shape", &[3, 2]), &[("x", x, F)], &[])
    };
    let reorder_in = |x: &[i64]| ms(NCHWC, node("r", "ReorderInput", &["x"], &["y"]), &[("x", x, F)], &[]);
    let reorder_out = |x: &[i64], channels: i64| {
        ms(NCHWC, with_int(node("r", "ReorderOutput", &["x"], &["y"]), "channels", channels), &[("x", x, F)], &[])
    };
    let dmmha = |q: &[i64], k: &[i64], v: &[i64]| {
        let n = with_int(node("d", "DecoderMaskedMultiHeadAttention", &["q", "k", "v"], &["y"]), "num_heads", 2);
        ms(MS, n, &[("q", q, F), ("k", k, F), ("v", v, F)], &[])
    };
    let unfold = |size: i64| {
        let n =
            with_int(with_int(with_int(node("u", "UnfoldTensor", &["x"], &["y"]), "dim", 1), "size", size), "step", 2);
        ms(MS, n, &[("x", &[2, 7, 4], F)], &[])
    };
    let word_conv = |s: &[i64], w: &[i64]| {
        let ins = [("s", s, Int32), ("w", w, F), ("b", &[5][..], F), ("c", &[10, 6], F)];
        ms(MS, node("w", "WordConvEmbedding", &["s", "w", "b", "c"], &["y"]), &ins, &[])
    };
    let bnb4 = |a: &[i64], b: &[i64]| {
        let n = with_int(with_int(node("m", "MatMulBnb4", &["a", "b", "m"], &["y"]), "K", 16), "N", 8);
        let n = with_int(with_int(n, "block_size", 16), "quant_type", 1);
        ms(MS, n, &[("a", a, F), ("b", b, U8), ("m", &[8], F)], &[])
    };
    let qsoftmax = |axis: i64| {
        let n = with_int(
            with_int(node("s", "QLinearSoftmax", &["x", "xs", "xz", "ys", "yz"], &["y"]), "opset", 13),
            "axis",
            axis,
        );
        ms(MS, n, &[&[("x", &[2, 3][..], U8)][..], &q].concat(), &[])
    };
    let nchwc_upsample = |scales: &[i64]| {
        let n = with_ints(node("u", "Upsample", &["x"], &["y"]), "scales", scales);
        ms(NCHWC, n, &[("x", &[1, 16, 3, 3], F)], &[])
    };
    let upsample_modes = |mode: Option<&str>, transform: &str| {
        let n = with_ints(node("u", "Upsample", &["x"], &["y"]), "scales", &[1, 1, 2, 2]);
        let n = with_str(n, "coordinate_transformation_mode", transform);
        ms(NCHWC, mode.map_or(n.clone(), |m| with_str(n, "mode", m)), &[("x", &[1, 16, 3, 3], F)], &[])
    };
    let ngram = |ids: &[i64]| {
        let n = with_int(node("n", "NGramRepeatBlock", &["i", "s"], &["y"]), "ngram_size", 2);
        ms(MS, n, &[("i", ids, Int64), ("s", &[2, 10], F)], &[])
    };
    let gqa = |batch: i64, seq: i64, past: i64| {
        let n = with_int(with_int(node("g", "GroupQueryAttention", &[], &["y"]), "num_heads", 4), "kv_num_heads", 2);
        let n = NodeProto { input: ["q", "", "", "pk", "pv", "sl", "t"].map(String::from).to_vec(), ..n };
        let ins =
            [("q", &[batch, seq, 128][..], F), ("pk", &[batch, 2, past, 16], F), ("pv", &[batch, 2, past, 16], F)];
        let lens = vec![past + seq - 1; batch as usize];
        ms(MS, n, &ins, &[("sl", &[batch], &lens, Int32), ("t", &[], &[past + seq], Int32)])
    };
    let dqmm = |bias: &[i64]| {
        let ins = [
            ("a", &[2, 4][..], F),
            ("b", &[4, 3], DataType::Int8),
            ("bs", &[1], F),
            ("bz", &[1], DataType::Int8),
            ("bias", bias, F),
        ];
        ms(MS, node("d", "DynamicQuantizeMatMul", &["a", "b", "bs", "bz", "bias"], &["y"]), &ins, &[])
    };
    let skip = |op: &str, x: &[i64], skip: &[i64]| {
        let ins = [("x", x, F), ("s", skip, F), ("g", &x[x.len() - 1..], F)];
        ms(MS, node("n", op, &["x", "s", "g"], &["y"]), &ins, &[])
    };
    vec![
        // Skip*LayerNormalization: a skip of no higher rank than the input ("skip is expected to
        // have same shape as input or, a batch size of 1 or no batch size"), a hidden size
        // above 0 ("hidden_size must be positive").
        ("SkipLayerNorm [3,4] [1,3,4]", skip("SkipLayerNormalization", &[3, 4], &[1, 3, 4]), None),
        ("SkipLayerNorm [2,3,4] [3,4]", skip("SkipLayerNormalization", &[2, 3, 4], &[3, 4]), Some(vec![2, 3, 4])),
        // "epsilon_ >= 0 was false".
        (
            "SkipLayerNorm epsilon -1",
            float_at(skip("SkipLayerNormalization", &[2, 3, 4], &[3, 4]), "epsilon", -1.0),
            None,
        ),
        (
            "SkipSimplifiedLayerNorm epsilon 0",
            float_at(skip("SkipSimplifiedLayerNormalization", &[2, 3, 4], &[3, 4]), "epsilon", 0.0),
            Some(vec![2, 3, 4]),
        ),
        ("SkipSimplifiedLayerNorm [3,4] [1,3,4]", skip("SkipSimplifiedLayerNormalization", &[3, 4], &[1, 3, 4]), None),
        ("SkipSimplifiedLayerNorm [2,3,0]", skip("SkipSimplifiedLayerNormalization", &[2, 3, 0], &[2, 3, 0]), None),
        // DynamicQuantizeMatMul reads its bias as one value per column, in any shape ("bias
        // tensor's element count must equal B's last dimension (3)").
        ("DynamicQuantizeMatMul bias [1,3]", dqmm(&[1, 3]), Some(vec![2, 3])),
        ("DynamicQuantizeMatMul bias [3,1]", dqmm(&[3, 1]), Some(vec![2, 3])),
        ("DynamicQuantizeMatMul bias [2,3]", dqmm(&[2, 3]), None),
        // GroupQueryAttention continues a past one position at a time in a batch of more than
        // one ("batch_size must be 1 when sequence_length > 1 and past context is given").
        ("GQA batch 2 past 3 one position", gqa(2, 1, 3), Some(vec![2, 1, 64])),
        ("GQA batch 1 past 3 seven positions", gqa(1, 7, 3), Some(vec![1, 7, 64])),
        ("GQA batch 2 no past seven positions", gqa(2, 7, 0), Some(vec![2, 7, 64])),
        ("GQA batch 2 past 3 two positions", gqa(2, 2, 3), None),
        // "sliding_window_cache=1 requires local_window_size > 0", "sliding_window_cache=1
        // requires the present_key and present_value outputs"; "Input 'past_key' and
        // 'past_value' shall be both present or both absent".
        ("GQA sliding cache without a window", with_int_at(gqa(1, 1, 3), "sliding_window_cache", 1), None),
        (
            "GQA sliding cache, window 2, no presents",
            with_int_at(with_int_at(gqa(1, 1, 3), "sliding_window_cache", 1), "local_window_size", 2),
            None,
        ),
        ("GQA past_value without past_key", without_input(gqa(1, 1, 3), 3), None),
        // MoE ("Input 'router_probs' is expected to have shape {10,4}", "Input
        // 'fc1_experts_weights' is expected to have shape {4,18,8}": its intermediate size comes
        // from fc2's), both weight layouts.
        ("MoE", moe(&[10, 4], &[4, 8, 16], &[4, 16, 8]), Some(vec![2, 5, 8])),
        ("MoE other layout", moe(&[10, 4], &[4, 16, 8], &[4, 8, 16]), Some(vec![2, 5, 8])),
        ("MoE router [5,4]", moe(&[5, 4], &[4, 8, 16], &[4, 16, 8]), None),
        ("MoE fc2 [4,16,9]", moe(&[10, 4], &[4, 8, 16], &[4, 16, 9]), None),
        // "Sparse mixer only supports k=2".
        ("MoE sparse mixer k 1", with_int_at(moe(&[10, 4], &[4, 8, 16], &[4, 16, 8]), "use_sparse_mixer", 1), None),
        ("MoE sparse mixer k 2", with_int_at(sparse_mixer(), "k", 2), Some(vec![2, 5, 8])),
        // DecoderMaskedMultiHeadAttention decodes one position; the value's heads are not
        // checked ("Input sequence length should be 1").
        ("DMMHA", dmmha(&[2, 1, 8], &[2, 1, 8], &[2, 1, 9]), Some(vec![2, 1, 9])),
        ("DMMHA 4-D key and value", dmmha(&[2, 1, 8], &[2, 2, 5, 4], &[2, 2, 5, 4]), Some(vec![2, 1, 8])),
        ("DMMHA query of 3", dmmha(&[2, 3, 8], &[2, 3, 8], &[2, 3, 8]), None),
        ("DMMHA 4-D key of batch 3", dmmha(&[2, 1, 8], &[3, 2, 5, 4], &[3, 2, 5, 4]), None),
        // "QK head size should be same as V head size".
        ("DMMHA value of hidden 0", dmmha(&[2, 1, 8], &[2, 1, 8], &[2, 1, 0]), None),
        // Self-attention's past is a buffer shared with present, with the length filled
        // ("past_present_share_buffer_ was false", "past_sequence_length (0) plus
        // kv_sequence_length (1) must not exceed max_sequence_length (0)", "past_sequence_length
        // tensor must be of one element when past_present_share_buffer is set", "past_sequence_length
        // must be non-negative and less than max_sequence_length (4), got 4").
        ("DMMHA shared, past 4, 3 filled", shared_past(1, Some(&[2, 2, 4, 4]), Some(3)), Some(vec![2, 1, 8])),
        ("DMMHA shared, past 4, 4 filled", shared_past(1, Some(&[2, 2, 4, 4]), Some(4)), None),
        ("DMMHA shared, past 4, no length", shared_past(1, Some(&[2, 2, 4, 4]), None), None),
        ("DMMHA shared, no past", shared_past(1, None, None), None),
        ("DMMHA past 4 not shared", shared_past(0, Some(&[2, 2, 4, 4]), Some(3)), None),
        ("UnfoldTensor size 7 of 7", unfold(7), Some(vec![2, 1, 4, 7])),
        ("UnfoldTensor size 8 of 7", unfold(8), None),
        ("WordConvEmbedding", word_conv(&[2, 3, 4], &[5, 1, 2, 6]), Some(vec![2, 5])),
        ("WordConvEmbedding kernel wider than words", word_conv(&[2, 3, 4], &[5, 1, 4, 6]), None),
        // "Conv filter size does not match embedding_size attribute", and likewise the window
        // and the char embedding; -1 is "not given".
        ("WordConvEmbedding embedding_size 5", word_conv_with("embedding_size", 5), Some(vec![2, 5])),
        ("WordConvEmbedding embedding_size 4", word_conv_with("embedding_size", 4), None),
        ("WordConvEmbedding conv_window_size 3", word_conv_with("conv_window_size", 3), None),
        ("WordConvEmbedding char_embedding_size 5", word_conv_with("char_embedding_size", 5), None),
        ("WordConvEmbedding char_embedding_size -1", word_conv_with("char_embedding_size", -1), Some(vec![2, 5])),
        ("MatMulBnb4", bnb4(&[2, 3, 16], &[64]), Some(vec![2, 3, 8])),
        ("MatMulBnb4 B of 60 bytes", bnb4(&[2, 3, 16], &[60]), None),
        ("MatMulBnb4 K 12", bnb4(&[2, 3, 12], &[64]), None),
        // "only 0 (FP4) and 1 (NF4) are supported"; with transB=0 A's last size is N and Y's K
        // ("Incompatible dimensions for matrix multiplication").
        ("MatMulBnb4 quant_type 2", with_int_at(bnb4(&[2, 3, 16], &[64]), "quant_type", 2), None),
        ("MatMulBnb4 transB 0 A [2,3,8]", with_int_at(bnb4(&[2, 3, 8], &[64]), "transB", 0), Some(vec![2, 3, 16])),
        ("MatMulBnb4 transB 0 A [2,3,16]", with_int_at(bnb4(&[2, 3, 16], &[64]), "transB", 0), None),
        // "'axis' must be in [-2 , 1]".
        ("QLinearSoftmax axis -2", qsoftmax(-2), Some(vec![2, 3])),
        ("QLinearSoftmax axis 2", qsoftmax(2), None),
        ("NGramRepeatBlock", ngram(&[2, 5]), Some(vec![2, 10])),
        ("NGramRepeatBlock ids [1,2,5]", ngram(&[1, 2, 5]), None),
        (
            "contrib GatherND",
            ms(MS, node("g", "GatherND", &["x", "i"], &["y"]), &[("x", &[2, 3, 4], F), ("i", &[5, 2], Int64)], &[]),
            Some(vec![5, 4]),
        ),
        // FusedGemm (Gemm with an activation): "Gemm: Invalid bias shape for broadcast".
        ("FusedGemm c [5]", gemm(&[5]), Some(vec![3, 5])),
        ("FusedGemm c [4]", gemm(&[4]), None),
        // "unknown kernel type", "No attribute with name:'gamma'is defined".
        ("FusedGemm no activation", without(gemm(&[5]), "activation"), None),
        ("FusedGemm Gelu", fused_act(gemm(&[5]), "Gelu", &[]), None),
        ("FusedGemm Selu alpha", fused_act(gemm(&[5]), "Selu", &[("activation_alpha", 1.0)]), None),
        (
            "FusedGemm Selu alpha gamma",
            fused_act(gemm(&[5]), "Selu", &[("activation_alpha", 1.0), ("activation_gamma", 1.0)]),
            Some(vec![3, 5]),
        ),
        // "GetFusedActivationAttr(info, activation_).IsOK() was false".
        ("FusedConv Gelu", fused_act(fused_conv(&[]), "Gelu", &[]), None),
        ("FusedConv Clip [0]", fused_act(fused_conv(&[0.0]), "Clip", &[]), None),
        ("FusedConv Clip [0,6]", fused_act(fused_conv(&[0.0, 6.0]), "Clip", &[]), Some(vec![1, 3, 3, 3])),
        ("FusedConv HardSwish", fused_act(fused_conv(&[]), "HardSwish", &[]), Some(vec![1, 3, 3, 3])),
        (
            "TransposeMatMul transA",
            ms(
                MS,
                with_int(node("t", "TransposeMatMul", &["a", "b"], &["y"]), "transA", 1),
                &[("a", &[4, 3], F), ("b", &[4, 5], F)],
                &[],
            ),
            Some(vec![3, 5]),
        ),
        (
            "MatMulInteger16",
            ms(
                MS,
                node("m", "MatMulInteger16", &["a", "b"], &["y"]),
                &[("a", &[2, 3, 4], Int16), ("b", &[4, 5], Int16)],
                &[],
            ),
            Some(vec![2, 3, 5]),
        ),
        // NHWC pools: a window one larger than the input leaves an empty output, as
        // MaxpoolWithMask's does; two larger is refused.
        ("NhwcMaxPool [1,5,6,3]", nhwc_max(&[1, 5, 6, 3], &[2, 2]), Some(vec![1, 4, 5, 3])),
        // `real_mutate.py`: DynamicQuantizeLSTM's inputs as its kernel checks them ("Input W must
        // have shape {1,3,16}", "InputWeight zero point must be zero" for a per-channel one).
        ("DynamicQuantizeLSTM", dq_lstm(&[], None), Some(vec![5, 1, 2, 4])),
        ("DynamicQuantizeLSTM W [1,16,3]", dq_lstm(&[("W", &[1, 16, 3])], None), None),
        ("DynamicQuantizeLSTM R [1,4,20]", dq_lstm(&[("R", &[1, 4, 20])], None), None),
        ("DynamicQuantizeLSTM B [1,33]", dq_lstm(&[("B", &[1, 33])], None), None),
        ("DynamicQuantizeLSTM initial_h [1,3,4]", dq_lstm(&[("ih", &[1, 3, 4])], None), None),
        ("DynamicQuantizeLSTM W_scale [2]", dq_lstm(&[("ws", &[2])], None), None),
        ("DynamicQuantizeLSTM per-channel zero point 0", dq_lstm(&[], Some(0)), Some(vec![5, 1, 2, 4])),
        ("DynamicQuantizeLSTM per-channel zero point 1", dq_lstm(&[], Some(1)), None),
        ("DynamicQuantizeLSTM hidden_size 0", with_int_at(dq_lstm(&[], None), "hidden_size", 0), None),
        // `ort_diff.py --contrib` over the contrib ops the deployed models hold. "clip_ > 0.f";
        // "Input 'mask_index' is expected to have 1, 2, 3 or 4 dimensions" (Attention's too);
        // "input scale must be a scalar or 1D tensor of size 1", "Input 'weight_scale' must be
        // a scalar or a 1D tensor of size 3 * hidden_size"; QLinearConcat's "Can't merge shape
        // info" and "QlinearBuildLookupTable : input X_scale must be a scalar or 1D tensor of
        // size 1" for an input quantized unlike the output.
        ("DynamicQuantizeLSTM clip 0", float_at(dq_lstm(&[], None), "clip", 0.0), None),
        ("DynamicQuantizeLSTM direction bogus", with_str_at(dq_lstm(&[], None), "direction", "bogus"), None),
        ("QAttention", ms_attention(true, &[2, 3, 8], Some(&[2]), [&[], &[], &[], &[]]), Some(vec![2, 3, 8])),
        (
            "QAttention mask [2,3]",
            ms_attention(true, &[2, 3, 8], Some(&[2, 3]), [&[], &[], &[], &[]]),
            Some(vec![2, 3, 8]),
        ),
        ("QAttention mask [5]", ms_attention(true, &[2, 3, 8], Some(&[5]), [&[], &[], &[], &[]]), None),
        ("QAttention mask [2,4]", ms_attention(true, &[2, 3, 8], Some(&[2, 4]), [&[], &[], &[], &[]]), None),
        ("QAttention mask []", ms_attention(true, &[2, 3, 8], Some(&[]), [&[], &[], &[], &[]]), None),
        ("Attention-1 mask []", ms_attention(false, &[2, 3, 8], Some(&[]), [&[]; 4]), None),
        ("Attention-1 mask [2]", ms_attention(false, &[2, 3, 8], Some(&[2]), [&[]; 4]), Some(vec![2, 3, 8])),
        ("QAttention input scale [1,1]", ms_attention(true, &[2, 3, 8], None, [&[1, 1], &[], &[], &[]]), None),
        ("QAttention input zero point [2]", ms_attention(true, &[2, 3, 8], None, [&[], &[], &[2], &[]]), None),
        ("QAttention weight scale [2]", ms_attention(true, &[2, 3, 8], None, [&[], &[2], &[], &[]]), None),
        (
            "QAttention weight scale [24]",
            ms_attention(true, &[2, 3, 8], None, [&[1], &[24], &[1], &[24]]),
            Some(vec![2, 3, 8]),
        ),
        ("QLinearConcat [2,3] [3,4] axis 1", qlinear_concat(&[2, 3], &[3, 4], &[], &[]), None),
        ("QLinearConcat [0,3] [2,4] axis 1", qlinear_concat(&[0, 3], &[2, 4], &[], &[]), None),
        ("QLinearConcat [2,0] [2,4] axis 1", qlinear_concat(&[2, 0], &[2, 4], &[], &[]), Some(vec![2, 4])),
        ("QLinearConcat a's scale [1,1]", qlinear_concat(&[2, 3], &[2, 4], &[1, 1], &[]), None),
        ("QLinearConcat y's scale [1,1]", qlinear_concat(&[2, 3], &[2, 4], &[], &[1, 1]), None),
        ("QLinearWhere x's scale [1,1], as z's", qlinear_where(&[1, 1], 0.1), Some(vec![2, 3])),
        ("QLinearWhere x's scale [1,1], not z's", qlinear_where(&[1, 1], 0.2), None),
        ("QLinearWhere x's scale [2], not z's", qlinear_where(&[2], 0.2), None),
        // EmbedLayerNormalization's and QEmbedLayerNormalization's inputs as onnxruntime's
        // inference and kernels check them ("position_embedding should have 2 dimensions,
        // dimension size known, and same hidden size as word_embedding", "Input 0 and 1 shall
        // have same shape", "output index 1 is out of range", "Input 4 is null", "Gamma scale
        // must be a scalar or 1D tensor of size 1").
        ("EmbedLayerNormalization", embed(false, &[], 2), Some(vec![2, 3, 8])),
        ("EmbedLayerNormalization with embedding_sum", embed(false, &[], 3), Some(vec![2, 3, 8])),
        ("EmbedLayerNormalization one output", embed(false, &[], 1), None),
        ("EmbedLayerNormalization position [16,7]", embed(false, &[("p", Some(&[16, 7]))], 2), None),
        ("EmbedLayerNormalization gamma [8,1]", embed(false, &[("g", Some(&[8, 1]))], 2), None),
        ("EmbedLayerNormalization word [10,0]", embed(false, &[("w", Some(&[10, 0]))], 2), None),
        ("EmbedLayerNormalization segment_ids [2,4]", embed(false, &[("t", Some(&[2, 4]))], 2), None),
        ("EmbedLayerNormalization mask [3,3]", embed(false, &[("m", Some(&[3, 3]))], 2), None),
        ("EmbedLayerNormalization no segment_embedding", embed(false, &[("e", None)], 2), None),
        ("EmbedLayerNormalization no segment_ids", embed(false, &[("t", None)], 2), Some(vec![2, 3, 8])),
        ("QEmbedLayerNormalization", embed(true, &[], 2), Some(vec![2, 3, 8])),
        ("QEmbedLayerNormalization gamma scale [2]", embed(true, &[("gs", Some(&[2]))], 2), None),
        ("QEmbedLayerNormalization no segment_ids", embed(true, &[("t", None)], 2), None),
        ("QEmbedLayerNormalization beta [9]", embed(true, &[("b", Some(&[9]))], 2), None),
        ("FusedConv auto_pad bogus", with_str_at(fused_act(fused_conv(&[]), "Relu", &[]), "auto_pad", "bogus"), None),
        (
            "FusedConv auto_pad VALID",
            with_str_at(fused_act(fused_conv(&[]), "Relu", &[]), "auto_pad", "VALID"),
            Some(vec![1, 3, 3, 3]),
        ),
        ("NhwcMaxPool [1,1,6,3]", nhwc_max(&[1, 1, 6, 3], &[2, 2]), Some(vec![1, 0, 5, 3])),
        ("NhwcMaxPool kernel 3 on 1", nhwc_max(&[1, 1, 6, 3], &[3, 2]), None),
        // "Unknown AutoPadType String", "Invalid 'mode' attribute value", "mode \"bogus\" not
        // supported, expect bilinear, nearest or bicubic".
        // Zero points onnxruntime's type inference reads though the schema makes them optional
        // ("Input data type does not match the expected data type"), a required one left
        // empty, and MultiHeadAttention's value without its key ("Input 'value' shall absent
        // when 'key' is absent").
        ("QLinearMul without a's zero point", qlinear_mul(2), None),
        ("QLinearMul without c's zero point", qlinear_mul(7), Some(vec![2, 3])),
        ("QLinearGlobalAveragePool input 2 empty", qlinear_gap(), None),
        ("MultiHeadAttention value without key", mha_no_key(), None),
        ("NhwcMaxPool auto_pad bogus", with_str_at(nhwc_max(&[1, 5, 6, 3], &[2, 2]), "auto_pad", "bogus"), None),
        ("contrib Pad wrap", contrib_pad("wrap"), Some(vec![2, 5])),
        ("contrib Pad bogus", contrib_pad("bogus"), None),
        ("contrib GridSample bicubic", contrib_grid("bicubic"), Some(vec![1, 1, 3, 3])),
        ("contrib GridSample cubic", contrib_grid("cubic"), None),
        ("QLinearAveragePool NHWC", pool("QLinearAveragePool", &[1, 5, 6, 3], &[2, 2], true), Some(vec![1, 4, 5, 3])),
        ("QLinearAveragePool NCHW", pool("QLinearAveragePool", &[1, 3, 5, 6], &[2, 2], false), Some(vec![1, 3, 4, 5])),
        // An empty output: NCHW runs it; NHWC dies of SIGFPE, at any spatial axis.
        (
            "QLinearAveragePool NCHW window 2 on 1",
            pool("QLinearAveragePool", &[1, 3, 1, 6], &[2, 2], false),
            Some(vec![1, 3, 0, 5]),
        ),
        ("QLinearAveragePool NHWC window 2 on 1", pool("QLinearAveragePool", &[1, 1, 6, 3], &[2, 2], true), None),
        ("QLinearAveragePool NHWC window 7 on 6", pool("QLinearAveragePool", &[1, 5, 6, 3], &[5, 7], true), None),
        (
            "QLinearConv NHWC",
            {
                let n = with_ints(
                    node("c", "QLinearConv", &["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], &["y"]),
                    "kernel_shape",
                    &[3, 3],
                );
                let ins = [("x", &[1, 6, 7, 2][..], U8), ("w", &[4, 2, 3, 3], U8), ("ws", &[], F), ("wz", &[], U8)];
                ms(MS, with_int(n, "channels_last", 1), &[&ins[..], &q].concat(), &[])
            },
            Some(vec![1, 4, 5, 4]),
        ),
        ("QLinearWhere [2,1] [1,3] [2,3]", qwhere(&[2, 3]), Some(vec![2, 3])),
        ("QLinearWhere [2,1] [1,3] [4,3]", qwhere(&[4, 3]), None),
        // GatherBlockQuantized, 4 bits in uint8 in blocks of 16: "data and scales do not match
        // shapes", "gather_axis must be 0, for uint8 data".
        ("GatherBlockQuantized", gbq(&[5, 2], 0), Some(vec![2, 3, 32])),
        ("GatherBlockQuantized scales [5,3]", gbq(&[5, 3], 0), None),
        ("GatherBlockQuantized gather_axis 1", gbq(&[5, 2], 1), None),
        ("ExpandDims -1", expand_dims(-1), Some(vec![2, 3, 1])),
        ("ExpandDims 3", expand_dims(3), None),
        (
            "Range contrib without delta",
            ms(MS, node("r", "Range", &["a", "b"], &["y"]), &[], &[("a", &[], &[0], Int64), ("b", &[], &[10], Int64)]),
            Some(vec![10]),
        ),
        ("CDist", cdist(&[3, 4], &[5, 4]), Some(vec![3, 5])),
        ("CDist other columns", cdist(&[3, 4], &[5, 3]), None),
        ("CDist no columns", cdist(&[3, 0], &[5, 0]), None),
        ("CropAndResize", crop(&[4, 4]), Some(vec![4, 3, 5, 6])),
        ("CropAndResize rois [4,5]", crop(&[4, 5]), None),
        ("MaxpoolWithMask mask [1,1,5,6]", masked(&[1, 1, 5, 6]), Some(vec![1, 2, 4, 5])),
        ("MaxpoolWithMask mask [1,2,5,5]", masked(&[1, 2, 5, 5]), None),
        (
            "Pad contrib pads [1,4]",
            ms(
                MS,
                node("p", "Pad", &["x", "p"], &["y"]),
                &[("x", &[2, 3], F)],
                &[("p", &[1, 4], &[1, 0, 1, 2], Int64)],
            ),
            Some(vec![4, 5]),
        ),
        (
            "GridSample contrib 5-D",
            ms(
                MS,
                node("g", "GridSample", &["x", "g"], &["y"]),
                &[("x", &[1, 2, 5, 6, 3], F), ("g", &[1, 3, 4, 2, 3], F)],
                &[],
            ),
            None,
        ),
        // NCHWc: "NCHWc Conv input and filter shapes do not match a supported blocked layout",
        // "(X_shape[1] % MlasNchwcGetBlockSize()) == 0", "(channels % 4) == 0", "Input channels
        // must match the NCHWc block-aligned channel count".
        ("NCHWc Conv [1,3,4,6] [16,3,1,1]", nchwc_conv(&[1, 3, 4, 6], &[16, 3, 1, 1]), Some(vec![1, 16, 4, 6])),
        ("NCHWc Conv [1,16,4,6] [12,16,1,1]", nchwc_conv(&[1, 16, 4, 6], &[12, 16, 1, 1]), None),
        ("NCHWc MaxPool [1,16,4,6]", nchwc_max(&[1, 16, 4, 6]), Some(vec![1, 16, 2, 5])),
        ("NCHWc MaxPool [1,4,4,6]", nchwc_max(&[1, 4, 4, 6]), None),
        // An output empty in height dies (SIGFPE); empty in width runs.
        ("NCHWc MaxPool [1,16,2,6]", nchwc_max(&[1, 16, 2, 6]), None),
        ("NCHWc MaxPool [1,16,4,1]", nchwc_max(&[1, 16, 4, 1]), Some(vec![1, 16, 2, 0])),
        ("ReorderInput [1,32,4,6]", reorder_in(&[1, 32, 4, 6]), Some(vec![1, 32, 4, 6])),
        ("ReorderInput [1,6,4,6]", reorder_in(&[1, 6, 4, 6]), None),
        ("ReorderOutput 12 of 16", reorder_out(&[1, 16, 4, 6], 12), Some(vec![1, 12, 4, 6])),
        ("ReorderOutput 17 of 16", reorder_out(&[1, 16, 4, 6], 17), None),
        ("ReorderOutput 16 of 32", reorder_out(&[1, 32, 4, 6], 16), None),
        ("NCHWc Upsample", nchwc_upsample(&[1, 1, 2, 2]), Some(vec![1, 16, 6, 6])),
        // "scales_[0] == 1 && scales_[1] == 1 && scales_[2] >= 1 && scales_[3] >= 1 was false".
        ("NCHWc Upsample scales [1,2,2,2]", nchwc_upsample(&[1, 2, 2, 2]), None),
        // "transformation_mode_ == TransformationMode::ASYMMETRIC" in nearest mode; "Unsupported
        // transformation mode", "Unsupported mode 'cubic' for NCHWc Upsample".
        ("NCHWc Upsample half_pixel", upsample_modes(None, "half_pixel"), None),
        ("NCHWc Upsample linear half_pixel", upsample_modes(Some("linear"), "half_pixel"), Some(vec![1, 16, 6, 6])),
        ("NCHWc Upsample linear pytorch_half_pixel", upsample_modes(Some("linear"), "pytorch_half_pixel"), None),
        ("NCHWc Upsample cubic", upsample_modes(Some("cubic"), "asymmetric"), None),
        // Generation over the smallest decoder onnxruntime's GPT-2 check takes (below): input_ids
        // [2, 3] and BeamSearch's max_length 6, num_beams 3, num_return_sequences 2 unless set.
        // "max_length (3) shall be greater than input sequence length (3)", "num_return_sequences
        // (4) shall be be no more than num_beams (3)", "num_beams shall be a positive integer no
        // more than 128, got 0", "Node input num_beams should be a scalar. Got shape of {1,1}",
        // "Inputs 0 shall be 2 dimensions", "Input 'vocab_mask'  dimension 0 does not match with
        // vocab_size's, got 9", "input_ids and prefix_vocab_mask must have the same batch_size",
        // "Input 'attention_mask' is expected to have same shape as input_ids", "vocab_size
        // attribute (12) cannot exceed decoder subgraph logits width (10)", "input_ids and
        // presence_mask must have the same batch_size".
        ("BeamSearch", generate("BeamSearch", &[2, 3], &[], None), Some(vec![2, 2, 6])),
        ("BeamSearch of no tokens", generate("BeamSearch", &[2, 0], &[], None), Some(vec![2, 2, 6])),
        (
            "BeamSearch max_length 4",
            generate("BeamSearch", &[2, 3], &[("max_length", &[1], &[4], I32)], None),
            Some(vec![2, 2, 4]),
        ),
        ("BeamSearch max_length 3", generate("BeamSearch", &[2, 3], &[("max_length", &[1], &[3], I32)], None), None),
        (
            "BeamSearch 4 of 3 beams",
            generate("BeamSearch", &[2, 3], &[("num_return_sequences", &[1], &[4], I32)], None),
            None,
        ),
        (
            "BeamSearch 0 beams",
            generate(
                "BeamSearch",
                &[2, 3],
                &[("num_beams", &[1], &[0], I32), ("num_return_sequences", &[1], &[0], I32)],
                None,
            ),
            None,
        ),
        (
            "BeamSearch num_beams [1,1]",
            generate("BeamSearch", &[2, 3], &[("num_beams", &[1, 1], &[3], I32)], None),
            None,
        ),
        ("BeamSearch input_ids [1,2,3]", generate("BeamSearch", &[1, 2, 3], &[], None), None),
        (
            "BeamSearch vocab_mask [10]",
            generate("BeamSearch", &[2, 3], &[("vocab_mask", &[10], &[1; 10], I32)], None),
            Some(vec![2, 2, 6]),
        ),
        (
            "BeamSearch vocab_mask [9]",
            generate("BeamSearch", &[2, 3], &[("vocab_mask", &[9], &[1; 9], I32)], None),
            None,
        ),
        (
            "BeamSearch prefix_vocab_mask [1,10]",
            generate("BeamSearch", &[2, 3], &[("prefix_vocab_mask", &[1, 10], &[1; 10], I32)], None),
            None,
        ),
        (
            "BeamSearch attention_mask [2,4]",
            generate("BeamSearch", &[2, 3], &[("attention_mask", &[2, 4], &[1; 8], I32)], None),
            None,
        ),
        ("BeamSearch vocab_size 8", generate("BeamSearch", &[2, 3], &[], Some(8)), Some(vec![2, 2, 6])),
        ("BeamSearch vocab_size 12", generate("BeamSearch", &[2, 3], &[], Some(12)), None),
        ("GreedySearch", generate("GreedySearch", &[2, 3], &[], None), Some(vec![2, 6])),
        // onnxruntime reads repetition_penalty's first value, in any shape, and checks
        // length_penalty is one ("Node input length_penalty should be a scalar").
        (
            "GreedySearch repetition_penalty [2]",
            generate("GreedySearch", &[2, 3], &[("repetition_penalty", &[2], &[], F)], None),
            Some(vec![2, 6]),
        ),
        (
            "BeamSearch length_penalty [2]",
            generate("BeamSearch", &[2, 3], &[("length_penalty", &[2], &[], F)], None),
            None,
        ),
        (
            "GreedySearch max_length 3",
            generate("GreedySearch", &[2, 3], &[("max_length", &[1], &[3], I32)], None),
            None,
        ),
        ("Sampling", generate("Sampling", &[2, 3], &[], None), Some(vec![2, 6])),
        (
            "Sampling presence_mask [1,10]",
            generate("Sampling", &[2, 3], &[("presence_mask", &[1, 10], &[1; 10], I32)], None),
            None,
        ),
        // "ngram_size_ > 0"; "model_type == kModelTypeGpt" for GreedySearch and Sampling, and
        // BeamSearch's T5 wants its encoder; a vocab_size below -1 is compared with the masks.
        ("NGramRepeatBlock ngram_size 0", with_int_at(ngram(&[2, 5]), "ngram_size", 0), None),
        ("Sampling model_type 1", with_int_at(generate("Sampling", &[2, 3], &[], None), "model_type", 1), None),
        (
            "BeamSearch model_type 1 without encoder",
            with_int_at(generate("BeamSearch", &[2, 3], &[], None), "model_type", 1),
            None,
        ),
        (
            "GreedySearch vocab_size -2",
            with_int_at(generate("GreedySearch", &[2, 3], &[], None), "vocab_size", -2),
            None,
        ),
        // Int attributes (`ort_diff.py --attrs --contrib`): "num_heads > 0", "MoE attribute 'k'
        // must be >= 1"; swiglu_fusion is read for the swiglu activation only; "Two inputs
        // should have same rank and rank >= 3 if transBatchA or transBatchB is true".
        (
            "DecoderMaskedMultiHeadAttention num_heads 0",
            with_int_at(dmmha(&[2, 1, 16], &[2, 1, 16], &[2, 1, 16]), "num_heads", 0),
            None,
        ),
        ("MoE k 0", with_int_at(moe(&[10, 4], &[4, 8, 16], &[4, 16, 8]), "k", 0), None),
        (
            "MoE relu swiglu_fusion 1",
            with_int_at(moe(&[10, 4], &[4, 8, 16], &[4, 16, 8]), "swiglu_fusion", 1),
            Some(vec![2, 5, 8]),
        ),
        (
            "FusedMatMul transBatchA [2,3,4] by [4,5]",
            with_int_at(
                ms(MS, node("f", "FusedMatMul", &["a", "b"], &["y"]), &[("a", &[2, 3, 4], F), ("b", &[4, 5], F)], &[]),
                "transBatchA",
                1,
            ),
            None,
        ),
        (
            "FusedMatMul transBatchA [2,3,4] by [3,4,5]",
            with_int_at(
                ms(
                    MS,
                    node("f", "FusedMatMul", &["a", "b"], &["y"]),
                    &[("a", &[2, 3, 4], F), ("b", &[3, 4, 5], F)],
                    &[],
                ),
                "transBatchA",
                1,
            ),
            Some(vec![3, 2, 5]),
        ),
    ]
    .into_iter()
    .chain(recurrent_table())
    .collect()
}

/// The recurrent layers onnxruntime-genai's builder writes for LFM2 and Qwen3.5
/// (CausalConvWithState, LinearAttention and its gates, GatedRMSNorm, GatedAdd). Output `y` is
/// the op's output `at` (a carried state is output 1), over float inputs of the given shapes
/// ("" for an absent optional one).
fn recurrent_table() -> Vec<(&'static str, ModelProto, Option<Vec<i64>>)> {
    let op = |op: &str, at: usize, ins: &[(&str, &[i64])], attrs: &[(&str, i64)], strs: &[(&str, &str)]| {
        let names: Vec<&str> = ins.iter().map(|(n, _)| *n).collect();
        // The ops' required outputs: a state besides the output for the first two.
        let least = if op == "CausalConvWithState" || op == "LinearAttention" { 2 } else { 1 };
        let outs: Vec<&str> = ["o0", "o1", "o2"]
            .iter()
            .take(least.max(at + 1))
            .enumerate()
            .map(|(i, o)| if i == at { "y" } else { o })
            .collect();
        let mut n = node("r", op, &names, &outs);
        n = attrs.iter().fold(n, |n, (a, v)| with_int(n, a, *v));
        n = strs.iter().fold(n, |n, (a, v)| with_str(n, a, v));
        let typed: Vec<(&str, &[i64], DataType)> =
            ins.iter().filter(|(n, _)| !n.is_empty()).map(|(n, s)| (*n, *s, DataType::Float)).collect();
        ms(MS, n, &typed, &[])
    };
    let conv = |at: usize, x: &[i64], w: &[i64], b: &[i64], s: &[i64], attrs: &[(&str, i64)], strs: &[(&str, &str)]| {
        let ins =
            [("x", x), ("w", w), (if b.is_empty() { "" } else { "b" }, b), (if s.is_empty() { "" } else { "s" }, s)];
        let end = if s.is_empty() {
            if b.is_empty() {
                2
            } else {
                3
            }
        } else {
            4
        };
        op("CausalConvWithState", at, &ins[..end], attrs, strs)
    };
    let heads = [("q_num_heads", 2), ("kv_num_heads", 4)];
    // LinearAttention with 2 query heads of 3 and 4 kv heads (values of 6) over B 2, T 5.
    let la = |at: usize, q: &[i64], k: &[i64], v: &[i64], g: &[i64], b: &[i64], attrs: &[(&str, i64)]| {
        let ins = [("q", q), ("k", k), ("v", v), ("", &[][..]), (if g.is_empty() { "" } else { "g" }, g), ("b", b)];
        let attrs: Vec<(&str, i64)> =
            heads.iter().filter(|(h, _)| !attrs.iter().any(|(a, _)| a == h)).chain(attrs).copied().collect();
        op("LinearAttention", at, &ins[..if b.is_empty() { 5 } else { 6 }], &attrs, &[])
    };
    let (q, k, v, g, b) = (&[2, 5, 6][..], &[2, 5, 12][..], &[2, 5, 24][..], &[2, 5, 4][..], &[2, 5, 4][..]);
    let gate = |at: usize, a: &[i64], d: &[i64], b: &[i64]| {
        let ins = [("a", a), ("d", d), ("e", d), ("b", b)];
        op("LinearAttentionGate", at, &ins[..if b.is_empty() { 3 } else { 4 }], &[], &[])
    };
    let rms = |x: &[i64], s: &[i64], g: &[i64], act: &str| {
        let strs = if act.is_empty() { vec![] } else { vec![("activation", act)] };
        op("GatedRMSNorm", 0, &[("x", x), ("s", s), ("g", g)], &[], &strs)
    };
    let add = |x: &[i64], y: &[i64], g: &[i64]| op("GatedAdd", 0, &[("x", x), ("y_", y), ("g", g)], &[], &[]);
    let branchwise = |x: &[i64], s: &[i64], branches: i64| {
        let ins = [("x", x), ("s", s)];
        op("BranchwiseRMSNorm", 0, &ins[..if s.is_empty() { 1 } else { 2 }], &[("num_branches", branches)], &[])
    };
    // GatedDeltaNet over 6 tokens, 2 query heads of 8, 4 value heads of 5, a batch of 2.
    let (dq, dv, dd, ds) = (&[6, 2, 8][..], &[6, 4, 5][..], &[6, 4][..], &[2, 4, 5, 8][..]);
    let delta = |at: usize, q: &[i64], k: &[i64], v: &[i64], d: &[i64], state: &[i64]| {
        let named = |name, s: &[i64]| if s.is_empty() { "" } else { name };
        let ins = [("q", q), (named("k", k), k), (named("v", v), v), ("", &[][..]), ("d", d), ("b", d), ("s", state)];
        op("GatedDeltaNet", at, &ins[..if state.is_empty() { 6 } else { 7 }], &[], &[])
    };
    // The same over requests of cu_seqlens (an int32 initializer), without initial_state.
    let ragged = |cu: &[i64]| {
        let n = node("r", "GatedDeltaNet", &["q", "k", "v", "c", "d", "b"], &["y"]);
        let ins: Vec<(&str, &[i64], DataType)> = [("q", dq), ("k", dq), ("v", dv), ("d", dd), ("b", dd)]
            .iter()
            .map(|(n, s)| (*n, *s, DataType::Float))
            .collect();
        ms(MS, n, &ins, &[("c", &[3], cu, DataType::Int32)])
    };
    let tokenizer = |x: &[i64], mincharnum: i64| {
        let n = with_int(with_int(node("t", "Tokenizer", &["x"], &["y"]), "mincharnum", mincharnum), "mark", 1);
        ms(MS, with_str(with_str(n, "pad_value", "#"), "tokenexp", "a"), &[("x", x, DataType::String)], &[])
    };
    vec![
        // onnxruntime 1.32's newest CPU ops: "scale must have shape (H), (C * H), or (C, H)",
        // "grouped streams must have rank at least 2", "flattened stream width must be positive
        // and divisible by num_branches", "branch and hidden dimensions must be positive".
        ("BranchwiseRMSNorm [12]", branchwise(&[2, 3, 4], &[12], 0), Some(vec![2, 3, 4])),
        ("BranchwiseRMSNorm [3,4]", branchwise(&[2, 3, 4], &[3, 4], 0), Some(vec![2, 3, 4])),
        ("BranchwiseRMSNorm [3]", branchwise(&[2, 3, 4], &[3], 0), None),
        ("BranchwiseRMSNorm flat [3,4]", branchwise(&[2, 12], &[3, 4], 3), Some(vec![2, 12])),
        ("BranchwiseRMSNorm flat [4,3]", branchwise(&[2, 12], &[4, 3], 3), None),
        ("BranchwiseRMSNorm 5 branches", branchwise(&[2, 12], &[], 5), None),
        ("BranchwiseRMSNorm rank 1", branchwise(&[4], &[], 0), None),
        ("BranchwiseRMSNorm H 0", branchwise(&[2, 3, 0], &[], 0), None),
        // "num_heads_v (6) must be a positive multiple of num_heads_q (4)", "total_tokens (5)
        // must be divisible by batch (2)", "cu_seqlens is absent, so initial_state is required
        // to determine batch size", "key and value must both be present or both be omitted".
        ("GatedDeltaNet", delta(0, dq, dq, dv, dd, ds), Some(vec![6, 4, 5])),
        ("GatedDeltaNet final_state", delta(1, dq, dq, dv, dd, ds), Some(vec![2, 4, 5, 8])),
        ("GatedDeltaNet state_update", delta(2, dq, dq, dv, dd, ds), Some(vec![2, 0])),
        ("GatedDeltaNet packed", delta(0, &[6, 52], &[], &[], dd, ds), Some(vec![6, 4, 5])),
        ("GatedDeltaNet packed 53", delta(0, &[6, 53], &[], &[], dd, ds), None),
        // "std::isfinite(gate_lower_bound_) && gate_lower_bound_ < 0.0f was false".
        (
            "GatedDeltaNet gate bound -1",
            float_at(delta(0, dq, dq, dv, dd, ds), "gate_lower_bound", -1.0),
            Some(vec![6, 4, 5]),
        ),
        ("GatedDeltaNet gate bound 0", float_at(delta(0, dq, dq, dv, dd, ds), "gate_lower_bound", 0.0), None),
        (
            "GatedDeltaNet gate bound -inf",
            float_at(delta(0, dq, dq, dv, dd, ds), "gate_lower_bound", f32::NEG_INFINITY),
            None,
        ),
        (
            "GatedDeltaNet rank 4",
            delta(0, &[2, 3, 2, 8], &[2, 3, 2, 8], &[2, 3, 4, 5], &[2, 3, 4], &[]),
            Some(vec![2, 3, 4, 5]),
        ),
        ("GatedDeltaNet 6 value heads", delta(0, &[6, 4, 8], &[6, 4, 8], &[6, 6, 5], &[6, 6], &[2, 6, 5, 8]), None),
        ("GatedDeltaNet 5 tokens", delta(0, &[5, 2, 8], &[5, 2, 8], &[5, 4, 5], &[5, 4], ds), None),
        ("GatedDeltaNet without a batch", delta(0, dq, dq, dv, dd, &[]), None),
        ("GatedDeltaNet without a value", delta(0, dq, dq, &[], dd, ds), None),
        ("GatedDeltaNet decay [6,3]", delta(0, dq, dq, dv, &[6, 3], ds), None),
        // "cu_seqlens must be non-decreasing", "must start at 0 and end at total_tokens".
        ("GatedDeltaNet cu_seqlens [0,2,6]", ragged(&[0, 2, 6]), Some(vec![6, 4, 5])),
        ("GatedDeltaNet cu_seqlens [0,7,6]", ragged(&[0, 7, 6]), None),
        ("GatedDeltaNet cu_seqlens [0,2,5]", ragged(&[0, 2, 5]), None),
        // Tokenizer: "Input dimensions are either [C] or [N][C] allowed", "attribute mincharnum
        // must have a positive value"; empty inputs keep their rank ([N, C] gives [N, 0]).
        ("Tokenizer [0]", tokenizer(&[0], 1), Some(vec![0])),
        ("Tokenizer [0,3]", tokenizer(&[0, 3], 1), Some(vec![0, 0])),
        ("Tokenizer [2,0]", tokenizer(&[2, 0], 1), Some(vec![2, 0])),
        ("Tokenizer [1,1,1]", tokenizer(&[1, 1, 1], 1), None),
        ("Tokenizer mincharnum 0", tokenizer(&[0], 0), None),
        // CausalConvWithState: "Input 'past_state' is expected to have shape {2,8,2}, got
        // {2,8,3}", "weight channels must match input channels", "weight must be depthwise",
        // "bias must be 1D with size C", "input must have 3 dimensions for ndim=1",
        // "activation must be one of: none, silu, swish".
        (
            "CausalConv",
            conv(0, &[2, 8, 5], &[8, 1, 3], &[8], &[2, 8, 2], &[], &[("activation", "silu")]),
            Some(vec![2, 8, 5]),
        ),
        (
            "CausalConv state dilation 2",
            conv(1, &[2, 8, 5], &[8, 1, 3], &[], &[], &[("dilation", 2)], &[]),
            Some(vec![2, 8, 4]),
        ),
        ("CausalConv state kernel 1", conv(1, &[2, 8, 5], &[8, 1, 1], &[], &[], &[], &[]), Some(vec![2, 8, 0])),
        (
            "CausalConv channels_last state",
            conv(1, &[2, 5, 2, 4], &[8, 1, 3], &[], &[], &[("channels_last", 1)], &[]),
            Some(vec![2, 2, 2, 4]),
        ),
        ("CausalConv past [2,8,3]", conv(0, &[2, 8, 5], &[8, 1, 3], &[], &[2, 8, 3], &[], &[]), None),
        (
            "CausalConv channels_last past [2,2,8]",
            conv(0, &[2, 5, 2, 4], &[8, 1, 3], &[], &[2, 2, 8], &[("channels_last", 1)], &[]),
            None,
        ),
        ("CausalConv weight [4,1,3]", conv(0, &[2, 8, 5], &[4, 1, 3], &[], &[], &[], &[]), None),
        ("CausalConv weight [8,2,3]", conv(0, &[2, 8, 5], &[8, 2, 3], &[], &[], &[], &[]), None),
        ("CausalConv bias [4]", conv(0, &[2, 8, 5], &[8, 1, 3], &[4], &[], &[], &[]), None),
        ("CausalConv input rank 4", conv(0, &[2, 8, 4, 5], &[8, 1, 3, 3], &[], &[], &[], &[]), None),
        ("CausalConv activation relu", conv(0, &[2, 8, 5], &[8, 1, 3], &[], &[], &[], &[("activation", "relu")]), None),
        // LinearAttention: "query hidden size must be divisible by q_num_heads", "kv_num_heads
        // must be divisible by n_k_heads", "value hidden size must be divisible by
        // kv_num_heads", "decay last dim must be H_kv or H_kv*d_k", "beta last dim must be
        // H_kv or 1", "decay input is required for update_rule=gated_delta".
        ("com.microsoft LinearAttention", la(0, q, k, v, g, b, &[]), Some(vec![2, 5, 24])),
        ("com.microsoft LinearAttention state", la(1, q, k, v, g, b, &[]), Some(vec![2, 4, 3, 6])),
        (
            "com.microsoft LinearAttention 2 key heads, beta [2,5,1]",
            la(0, q, &[2, 5, 6], v, &[2, 5, 12], &[2, 5, 1], &[]),
            Some(vec![2, 5, 24]),
        ),
        (
            "com.microsoft LinearAttention inverse",
            la(
                0,
                &[2, 5, 12],
                &[2, 5, 6],
                &[2, 5, 12],
                &[2, 5, 2],
                &[2, 5, 2],
                &[("q_num_heads", 4), ("kv_num_heads", 2)],
            ),
            Some(vec![2, 5, 24]),
        ),
        ("com.microsoft LinearAttention key [2,5,24]", la(0, q, &[2, 5, 24], v, g, b, &[]), None),
        ("com.microsoft LinearAttention query [2,5,7]", la(0, &[2, 5, 7], k, v, g, b, &[]), None),
        ("com.microsoft LinearAttention query [2,5,0]", la(0, &[2, 5, 0], &[2, 5, 0], v, g, b, &[]), None),
        ("com.microsoft LinearAttention value [2,5,26]", la(0, q, k, &[2, 5, 26], g, b, &[]), None),
        ("com.microsoft LinearAttention decay [2,5,1]", la(0, q, k, v, &[2, 5, 1], b, &[]), None),
        ("com.microsoft LinearAttention beta [2,5,2]", la(0, q, k, v, g, &[2, 5, 2], &[]), None),
        ("com.microsoft LinearAttention no decay", la(0, q, k, v, &[], b, &[]), None),
        ("com.microsoft LinearAttention sequences 5 and 6", la(0, q, k, &[2, 6, 24], g, b, &[]), None),
        ("com.microsoft LinearAttention 3 of 4 heads", la(0, &[2, 5, 9], k, v, g, b, &[("q_num_heads", 3)]), None),
        // LinearAttentionGate: "dt_bias must have 4 elements, got 3", "b must have the same
        // shape as a", "a last dimension must be positive", "The b input is required when the
        // beta output is requested".
        ("LinearAttentionGate", gate(1, &[2, 5, 4], &[4], &[2, 5, 4]), Some(vec![2, 5, 4])),
        ("LinearAttentionGate dt_bias [4,1]", gate(0, &[2, 5, 4], &[4, 1], &[]), Some(vec![2, 5, 4])),
        ("LinearAttentionGate dt_bias [3]", gate(0, &[2, 5, 4], &[3], &[]), None),
        ("LinearAttentionGate b [2,5,3]", gate(1, &[2, 5, 4], &[4], &[2, 5, 3]), None),
        // b is read for the beta output only.
        ("LinearAttentionGate no beta, b [2,5,3]", gate(0, &[2, 5, 4], &[4], &[2, 5, 3]), Some(vec![2, 5, 4])),
        ("LinearAttentionGate a [2,5,0]", gate(0, &[2, 5, 0], &[0], &[]), None),
        ("LinearAttentionGate beta without b", gate(1, &[2, 5, 4], &[4], &[]), None),
        // GatedRMSNorm: "X last dimension (64) must be a multiple of the scale length (12)",
        // "gate must have the same shape as X", "scale must not be empty", "activation must be
        // one of: silu, swish, sigmoid".
        ("GatedRMSNorm", rms(&[2, 5, 64], &[16], &[2, 5, 64], "sigmoid"), Some(vec![2, 5, 64])),
        ("GatedRMSNorm X [2,5,0]", rms(&[2, 5, 0], &[16], &[2, 5, 0], ""), Some(vec![2, 5, 0])),
        ("GatedRMSNorm scale [12]", rms(&[2, 5, 64], &[12], &[2, 5, 64], ""), None),
        ("GatedRMSNorm gate [1,5,64]", rms(&[2, 5, 64], &[16], &[1, 5, 64], ""), None),
        ("GatedRMSNorm scale [0]", rms(&[2, 5, 64], &[0], &[2, 5, 64], ""), None),
        ("GatedRMSNorm activation relu", rms(&[2, 5, 64], &[16], &[2, 5, 64], "relu"), None),
        // GatedAdd: "gate last dimension must be 1", "gate dimension 1 must match X", "Y must
        // have the same shape as X", "gate must have the same rank as X", "X last dimension
        // must be positive".
        ("GatedAdd", add(&[2, 5, 8], &[2, 5, 8], &[2, 5, 1]), Some(vec![2, 5, 8])),
        ("GatedAdd X [0,5,8]", add(&[0, 5, 8], &[0, 5, 8], &[0, 5, 1]), Some(vec![0, 5, 8])),
        ("GatedAdd gate [2,5,8]", add(&[2, 5, 8], &[2, 5, 8], &[2, 5, 8]), None),
        ("GatedAdd gate [2,1,1]", add(&[2, 5, 8], &[2, 5, 8], &[2, 1, 1]), None),
        ("GatedAdd Y [1,5,8]", add(&[2, 5, 8], &[1, 5, 8], &[2, 5, 1]), None),
        ("GatedAdd gate [2,5]", add(&[2, 5, 8], &[2, 5, 8], &[2, 5]), None),
        ("GatedAdd X [2,5,0]", add(&[2, 5, 0], &[2, 5, 0], &[2, 5, 1]), None),
        // Arity, as onnxruntime's schemas give it on loading ("Node with schema
        // (com.microsoft::Gelu:1) has input size 2 not in range [min=1, max=1]"; "has output
        // size 1 not in range [min=2, max=3]").
        // DynamicTimeWarping: "input rank must be 2, or (3 with first dim equal to 1)"; a path of
        // the longer side through one row, of none through an empty matrix.
        ("DynamicTimeWarping [1,5]", op("DynamicTimeWarping", 0, &[("x", &[1, 5])], &[], &[]), Some(vec![2, 5])),
        ("DynamicTimeWarping [1,4,1]", op("DynamicTimeWarping", 0, &[("x", &[1, 4, 1])], &[], &[]), Some(vec![2, 4])),
        ("DynamicTimeWarping [0,4]", op("DynamicTimeWarping", 0, &[("x", &[0, 4])], &[], &[]), Some(vec![2, 0])),
        ("DynamicTimeWarping [3,3,3]", op("DynamicTimeWarping", 0, &[("x", &[3, 3, 3])], &[], &[]), None),
        ("DynamicTimeWarping [5]", op("DynamicTimeWarping", 0, &[("x", &[5])], &[], &[]), None),
        ("Gelu of 2 inputs", op("Gelu", 0, &[("x", &[2, 3]), ("z", &[2, 3])], &[], &[]), None),
        // and attributes ("Unrecognized attribute: foo for operator Gelu", "Mismatched
        // attribute type in ' : alpha'").
        ("Gelu with an attribute foo", op("Gelu", 0, &[("x", &[2, 3])], &[("foo", 1)], &[]), None),
        // and element types ("Type 'tensor(int64)' of input parameter (x) of operator (Gelu)
        // in node () is invalid").
        ("Gelu of int64", ms(MS, node("g", "Gelu", &["x"], &["y"]), &[("x", &[2, 3], DataType::Int64)], &[]), None),
        // A domain the model does not import: onnxruntime takes its own ones without, and
        // refuses others ("No opset import for domain 'my.ops'").
        ("Gelu, com.microsoft not imported", unimported(MS, "Gelu"), Some(vec![2, 3])),
        ("Relu of my.ops not imported", unimported("my.ops", "Relu"), None),
        ("QuickGelu alpha 1 (int)", op("QuickGelu", 0, &[("x", &[2, 3])], &[("alpha", 1)], &[]), None),
        (
            "QuickGelu alpha 1.0",
            {
                let mut m = op("QuickGelu", 0, &[("x", &[2, 3])], &[], &[]);
                let n = &mut m.graph.as_mut().unwrap().node[0];
                *n = with_attr(n.clone(), "alpha", Some(1.0), &[]);
                m
            },
            Some(vec![2, 3]),
        ),
        ("GatedAdd of 2 inputs", op("GatedAdd", 0, &[("x", &[2, 5, 8]), ("y_", &[2, 5, 8])], &[], &[]), None),
        (
            "CausalConv of 1 output",
            {
                let mut m = conv(0, &[2, 8, 5], &[8, 1, 3], &[], &[], &[], &[]);
                m.graph.as_mut().unwrap().node[0].output.truncate(1);
                m.graph.as_mut().unwrap().node[0].output[0] = "y".into();
                m
            },
            None,
        ),
    ]
}

/// `op` (BeamSearch, GreedySearch or Sampling) over int32 input_ids of shape `ids`, with
/// max_length 6, min_length 1 and for BeamSearch num_beams 3 and num_return_sequences 2, each
/// replaced by `set`, which also gives further inputs; the penalties are float inputs, [1]
/// unless `set` gives their shape (`ort_rows.py` feeds 0.5). The decoder is the smallest onnxruntime's GPT-2 subgraph check
/// takes: logits [B, S, 10] = Gather(E, input_ids), and one layer's past passed through.
fn generate(op: &str, ids: &[i64], set: &[(&str, &[i64], &[i64], DataType)], vocab: Option<i64>) -> ModelProto {
    use build::{floats, D};
    use onnx_bcast::io::proto::{attribute_proto::AttributeType, AttributeProto, GraphProto};
    use DataType::{Float as F, Int32 as I32};
    let slots: &[&str] = match op {
        "BeamSearch" => &[
            "input_ids",
            "max_length",
            "min_length",
            "num_beams",
            "num_return_sequences",
            "length_penalty",
            "repetition_penalty",
            "vocab_mask",
            "prefix_vocab_mask",
            "attention_mask",
        ],
        // GreedySearch's; Sampling adds presence_mask.
        _ => &[
            "input_ids",
            "max_length",
            "min_length",
            "repetition_penalty",
            "vocab_mask",
            "prefix_vocab_mask",
            "attention_mask",
            "presence_mask",
        ],
    };
    let slots = if op == "GreedySearch" { &slots[..7] } else { slots };
    let defaults: [(&str, &[i64], &[i64], DataType); 4] = [
        ("max_length", &[1], &[6], I32),
        ("min_length", &[1], &[1], I32),
        ("num_beams", &[1], &[3], I32),
        ("num_return_sequences", &[1], &[2], I32),
    ];
    let penalty = |n: &str| n.ends_with("_penalty");
    let consts: Vec<Int> = defaults
        .iter()
        .filter(|(n, ..)| slots.contains(n) && !set.iter().any(|s| s.0 == *n))
        .chain(set.iter().filter(|s| !penalty(s.0)))
        .copied()
        .collect();
    let penalties: Vec<(&str, &[i64], DataType)> = ["length_penalty", "repetition_penalty"]
        .iter()
        .filter(|n| slots.contains(n))
        .map(|n| (*n, set.iter().find(|s| s.0 == *n).map_or(&[1][..], |s| s.1), F))
        .collect();
    let given = |n: &str| n == "input_ids" || consts.iter().any(|c| c.0 == n) || penalties.iter().any(|p| p.0 == n);
    let mut names: Vec<&str> = slots.iter().map(|n| if given(n) { *n } else { "" }).collect();
    while names.last() == Some(&"") {
        names.pop();
    }
    let (b, s, p) = (D::S("B"), D::S("S"), D::S("P"));
    let past = [D::N(2), b.clone(), D::N(1), p, D::N(1)];
    let decoder = GraphProto {
        name: Some("decoder".into()),
        node: vec![
            node("g", "Gather", &["E", "input_ids"], &["logits"]),
            node("p", "Identity", &["past_0"], &["present_0"]),
        ],
        input: vec![
            typed("input_ids", I32, &[b.clone(), s.clone()]),
            typed("position_ids", I32, &[b.clone(), s.clone()]),
            typed("attention_mask", I32, &[b.clone(), D::S("T")]),
            typed("past_0", F, &past),
        ],
        output: vec![typed("logits", F, &[b, s, D::N(10)]), typed("present_0", F, &past)],
        initializer: vec![floats("E", &[10, 10], &[0.1; 100])],
        ..Default::default()
    };
    let mut n = with_int(
        with_int(with_int(node("gen", op, &names, &["y"]), "eos_token_id", 9), "pad_token_id", 0),
        "model_type",
        0,
    );
    if let Some(v) = vocab {
        n = with_int(n, "vocab_size", v);
    }
    n.attribute.push(AttributeProto {
        name: Some("decoder".into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(decoder),
        ..Default::default()
    });
    ms(MS, n, &[&[("input_ids", ids, I32)][..], &penalties].concat(), &consts)
}

fn image_decoder(x: &[i64]) -> ModelProto {
    build::model(20, vec![typed("x", DataType::Uint8, x)], vec![node("img", "ImageDecoder", &["x"], &["y"])], &["y"])
}

/// `op` of one string initializer `x` of shape `dims`, every string "a".
fn strings(op: &str, dims: &[i64]) -> ModelProto {
    let mut m = build::model(10, vec![], vec![node("s", op, &["x"], &["y"])], &["y"]);
    let n = dims.iter().product::<i64>() as usize;
    m.graph.as_mut().unwrap().initializer = vec![TensorProto {
        name: Some("x".to_string()),
        dims: dims.to_vec(),
        data_type: Some(DataType::String as i32),
        string_data: vec![b"a".to_vec(); n],
        ..Default::default()
    }];
    m
}

/// TfIdfVectorizer counting the 1-grams 2 and 3 of an int64 `x`.
fn tfidf(x: &[i64]) -> ModelProto {
    let n = with_str(node("tf", "TfIdfVectorizer", &["x"], &["y"]), "mode", "TF");
    let n = with_ints(with_ints(n, "ngram_counts", &[0]), "ngram_indexes", &[0, 1]);
    let n = with_int(with_int(with_int(n, "min_gram_length", 1), "max_gram_length", 1), "max_skip_count", 0);
    build::model(9, vec![typed("x", DataType::Int64, x)], vec![with_ints(n, "pool_int64s", &[2, 3])], &["y"])
}

/// Einsum (opset 12) of `equation` over inputs of `shapes`.
fn einsum(equation: &str, shapes: &[&[i64]]) -> ModelProto {
    let names = ["a", "b", "c"];
    let inputs: Vec<(&str, &[i64])> = names.into_iter().zip(shapes.iter().copied()).collect();
    case(12, &inputs, &[], with_str(node("e", "Einsum", &names[..shapes.len()], &["y"]), "equation", equation))
}

fn affine_grid(theta: &[i64], size: &[i64]) -> ModelProto {
    let n = node("ag", "AffineGrid", &["t", "s"], &["y"]);
    case(20, &[("t", theta)], &[("s", &[size.len() as i64], size)], n)
}

fn col2im(x: &[i64], image: &[i64], block: &[i64], pads: &[i64]) -> ModelProto {
    let n = node("c2i", "Col2Im", &["x", "i", "b"], &["y"]);
    let n = if pads.is_empty() { n } else { with_ints(n, "pads", pads) };
    let consts = [("i", &[image.len() as i64][..], image), ("b", &[block.len() as i64][..], block)];
    case(18, &[("x", x)], &consts, n)
}

/// MaxUnpool-11 of `x` with int64 indices `i`, kernel and strides 2, an optional output_shape.
fn unpool(x: &[i64], i: &[i64], shape: Option<&[i64]>) -> ModelProto {
    let names: &[&str] = if shape.is_some() { &["x", "i", "o"] } else { &["x", "i"] };
    let n = with_ints(node("mu", "MaxUnpool", names, &["y"]), "kernel_shape", &[2, 2]);
    let len = [shape.map_or(0, |s| s.len() as i64)];
    let o = shape.map(|s| ("o", &len[..], s));
    let mut m = case(11, &[("x", x)], o.as_slice(), with_ints(n, "strides", &[2, 2]));
    m.graph.as_mut().unwrap().input.push(typed("i", DataType::Int64, i));
    m
}

/// DeformConv-19 of `x` with a [1, 1, 2, 2] weight, an offset and an optional mask.
fn deform(x: &[i64], offset: &[i64], mask: Option<&[i64]>) -> ModelProto {
    let names: &[&str] = if mask.is_some() { &["x", "w", "o", "", "m"] } else { &["x", "w", "o"] };
    let mut inputs = vec![("x", x), ("w", &[1, 1, 2, 2][..]), ("o", offset)];
    inputs.extend(mask.map(|m| ("m", m)));
    case(19, &inputs, &[], node("dc", "DeformConv", names, &["y"]))
}

/// DeformConv-19 of a [1, 1, 3, 3] input with weight `w`, an offset and `offset_group`.
fn deform_w(w: &[i64], offset: &[i64], group: i64) -> ModelProto {
    let n = with_int(node("dc", "DeformConv", &["x", "w", "o"], &["y"]), "offset_group", group);
    case(19, &[("x", &[1, 1, 3, 3]), ("w", w), ("o", offset)], &[], n)
}

/// ScatterND-18 of `x` with updates `u` and int64 indices of shape `i`: an input, or an
/// initializer holding `values`.
fn scatter_nd(x: &[i64], i: &[i64], values: Option<&[i64]>, u: &[i64]) -> ModelProto {
    let n = node("sn", "ScatterND", &["x", "i", "u"], &["y"]);
    let consts: Vec<Const> = values.map(|v| ("i", i, v)).into_iter().collect();
    let mut m = case(18, &[("x", x), ("u", u)], &consts, n);
    if values.is_none() {
        m.graph.as_mut().unwrap().input.push(typed("i", DataType::Int64, i));
    }
    m
}

/// NonMaxSuppression-11 of 6 apart boxes in one class, at most 3, with a float32
/// iou_threshold of shape `dims` holding `iou`.
fn nms(dims: &[i64], iou: &[f32]) -> ModelProto {
    let boxes: Vec<f32> = (0..6).flat_map(|i| [i as f32 * 2.0, 0.0, i as f32 * 2.0 + 1.0, 1.0]).collect();
    let scores: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let n = node("nms", "NonMaxSuppression", &["b", "s", "m", "t"], &["y"]);
    let mut m = case(11, &[], &[("m", &[1], &[3])], n);
    let float = |name: &str, dims: &[i64], v: &[f32]| TensorProto {
        name: Some(name.to_string()),
        dims: dims.to_vec(),
        data_type: Some(DataType::Float as i32),
        float_data: v.to_vec(),
        ..Default::default()
    };
    let g = m.graph.as_mut().unwrap();
    g.initializer.extend([float("b", &[1, 6, 4], &boxes), float("s", &[1, 1, 6], &scores), float("t", dims, iou)]);
    m
}

/// Slice-13 of a [4, 6] input by int64 bounds fed at run time of these shapes (starts, ends,
/// then axes).
fn fed_slice(bounds: &[&[i64]]) -> ModelProto {
    let names = ["s", "e", "a"];
    let mut m =
        case(13, &[("x", &[4, 6])], &[], node("sl", "Slice", &[&["x"][..], &names[..bounds.len()]].concat(), &["y"]));
    let g = m.graph.as_mut().unwrap();
    g.input.extend(names.iter().zip(bounds).map(|(n, s)| typed(n, DataType::Int64, s)));
    m
}

/// `op` of `domain` over a [2, 3] input, in a model that does not import the domain.
fn unimported(domain: &str, op: &str) -> ModelProto {
    let mut m = ms(domain, node("n", op, &["x"], &["y"]), &[("x", &[2, 3], DataType::Float)], &[]);
    m.opset_import.retain(|o| o.domain() != domain);
    m
}

/// A node of opset 17 over two [2, 3] inputs `a` and `b`.
fn two(n: NodeProto) -> ModelProto {
    case(17, &[("a", &[2, 3]), ("b", &[2, 3])], &[], n)
}

/// `n` with a float attribute `f`, or else a floats one.
/// `m` with its first node's float attribute `name` set to `value`.
fn float_at(mut m: ModelProto, name: &str, value: f32) -> ModelProto {
    let n = &mut m.graph.as_mut().unwrap().node[0];
    n.attribute.retain(|a| a.name() != name);
    *n = with_attr(std::mem::take(n), name, Some(value), &[]);
    m
}

fn with_attr(mut n: NodeProto, name: &str, f: Option<f32>, floats: &[f32]) -> NodeProto {
    use onnx_bcast::io::proto::{attribute_proto::AttributeType, AttributeProto};
    let kind = if f.is_some() { AttributeType::Float } else { AttributeType::Floats };
    n.attribute.push(AttributeProto {
        name: Some(name.into()),
        r#type: Some(kind as i32),
        f,
        floats: floats.to_vec(),
        ..Default::default()
    });
    n
}

/// ScaledTanh with these float attributes, each 1.
fn tanh(attrs: &[&str]) -> NodeProto {
    attrs.iter().fold(node("s", "ScaledTanh", &["x"], &["y"]), |n, a| with_attr(n, a, Some(1.0), &[]))
}

/// ImageScaler at `opset` of `x` with these biases.
fn scaler(opset: i64, x: &[i64], bias: &[f32]) -> ModelProto {
    case(opset, &[("x", x)], &[], with_floats(node("s", "ImageScaler", &["x"], &["y"]), "bias", bias))
}

/// A scalar computed by `nodes` into `f` from scalar initializers (name, element type, value)
/// taken as a size: `y = ConstantOfShape([Cast<int64>(f)])`, whose shape is `[f]`.
fn float_size(nodes: Vec<NodeProto>, consts: &[(&str, DataType, f64)]) -> ModelProto {
    use DataType::{Double, Float, Float16, Int64};
    let mut nodes = nodes;
    nodes.extend([
        with_int(node("c", "Cast", &["f"], &["n"]), "to", Int64 as i64),
        node("u", "Unsqueeze", &["n", "ax"], &["s"]),
        node("y", "ConstantOfShape", &["s"], &["y"]),
    ]);
    let mut m = build::model(17, vec![], nodes, &["y"]);
    let g = m.graph.as_mut().unwrap();
    g.initializer.push(TensorProto {
        name: Some("ax".into()),
        dims: vec![1],
        data_type: Some(Int64 as i32),
        int64_data: vec![0],
        ..Default::default()
    });
    g.initializer.extend(consts.iter().map(|&(name, dtype, v)| {
        let mut t = TensorProto { name: Some(name.into()), data_type: Some(dtype as i32), ..Default::default() };
        match dtype {
            Float => t.float_data = vec![v as f32],
            Double => t.double_data = vec![v],
            Float16 => t.int32_data = vec![i32::from(half::f16::from_f64(v).to_bits())],
            Int64 => t.int64_data = vec![v as i64],
            _ => unreachable!("{dtype:?}"),
        }
        t
    }));
    m
}

/// Crop-1 of `x` by `border` and an optional `scale`.
fn crop(x: &[i64], border: &[i64], scale: Option<&[i64]>) -> ModelProto {
    let n = with_ints(node("c", "Crop", &["x"], &["y"]), "border", border);
    case(9, &[("x", x)], &[], scale.map_or(n.clone(), |s| with_ints(n, "scale", s)))
}

/// GroupNormalization of one group over `x`, scale and bias of its channels from opset 21
/// (of the group before).
fn group_norm_of(opset: i64, x: &[i64]) -> ModelProto {
    let per: &[i64] = if opset >= 21 && x.len() > 1 { &x[1..2] } else { &[1] };
    let n = with_int(node("gn", "GroupNormalization", &["x", "s", "b"], &["y"]), "num_groups", 1);
    case(opset, &[("x", x), ("s", per), ("b", per)], &[], n)
}

/// MeanVarianceNormalization of `x` over `axes` (the default [0, 2, 3] without).
fn mvn(x: &[i64], axes: Option<&[i64]>) -> ModelProto {
    let n = node("mvn", "MeanVarianceNormalization", &["x"], &["y"]);
    case(13, &[("x", x)], &[], axes.map_or(n.clone(), |a| with_ints(n, "axes", a)))
}

/// MaxRoiPool of `x` by one roi to `pooled`.
fn roi_pool(x: &[i64], pooled: &[i64]) -> ModelProto {
    let n = with_ints(node("rp", "MaxRoiPool", &["x", "r"], &["y"]), "pooled_shape", pooled);
    case(1, &[("x", x), ("r", &[1, 5])], &[], n)
}

/// Unique of `x`, along `axis` where given.
fn unique(x: &[i64], axis: Option<i64>) -> ModelProto {
    let n = node("u", "Unique", &["x"], &["y"]);
    case(11, &[("x", x)], &[], axis.map_or(n.clone(), |a| with_int(n, "axis", a)))
}

/// `ONNX_BCAST_ORT_ROWS=DIR cargo test ort_cases` also writes each row's model and what
/// onnxruntime does with it (`None`: refuses it, `Some(shape)`: gives `y` that shape,
/// `Differs(shape)`: not that) to DIR, where `scripts/ort_rows.py DIR` runs them under
/// onnxruntime.
fn dump(what: &str, m: &ModelProto, want: &str) {
    let Some(dir) = std::env::var_os("ONNX_BCAST_ORT_ROWS").map(std::path::PathBuf::from) else { return };
    use prost::Message;
    let file = what.replace('/', "_");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{file}.onnx")), m.encode_to_vec()).unwrap();
    std::fs::write(dir.join(format!("{file}.want")), want).unwrap();
}

#[test]
fn inference_agrees_with_onnxruntime() {
    let mut wrong = Vec::new();
    for (what, m, ort) in table() {
        dump(what, &m, &format!("{ort:?}"));
        let model = build::load(&m);
        let inf = infer(&model, &Options::default());
        let errors: Vec<&str> =
            inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
        let y = inf.shape(model.resolve(Model::MAIN, "y").unwrap());
        match ort {
            Some(shape) if !errors.is_empty() || y != Some(&shape.iter().copied().map(Dim::Known).collect()) => {
                wrong.push(format!("{what}: onnxruntime gives {shape:?}, we said {y:?} {errors:?}"))
            }
            None if errors.is_empty() => wrong.push(format!("{what}: onnxruntime refuses it, we said {y:?}")),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Where the spec and onnxruntime 1.32 give a node different shapes, inference keeps the
/// spec's and a `runtime-differs` warning gives onnxruntime's: Squeeze with an empty axes list
/// (onnxruntime removes every 1) and a backward Slice ending at INT64_MAX or INT32_MAX
/// (onnxruntime slices to the start), and OneHot of depth 0 (onnxruntime refuses it; onnx's
/// inference and reference give an empty axis).
#[test]
fn where_onnxruntime_differs_from_the_spec_a_warning_says_so() {
    let one_hot = |depth: i64| {
        let consts: &[Const] = &[("i", &[3], &[0, 1, 2]), ("d", &[], &[depth]), ("v", &[2], &[0, 1])];
        case(11, &[], consts, node("oh", "OneHot", &["i", "d", "v"], &["y"]))
    };
    let squeeze = |x: &[i64]| {
        let consts: &[Const] = &[("a", &[0], &[])];
        case(13, &[("x", x)], consts, node("sq", "Squeeze", &["x", "a"], &["y"]))
    };
    let back = |x: &[i64], start: i64, end: i64| {
        let consts: &[Const] = &[("s", &[1], &[start]), ("e", &[1], &[end]), ("a", &[1], &[0]), ("t", &[1], &[-1])];
        case(13, &[("x", x)], consts, node("sl", "Slice", &["x", "s", "e", "a", "t"], &["y"]))
    };
    let dft = |x: &[i64], n: &'static [i64]| {
        let n: &[Const] = &[("n", &[], n)];
        case(17, &[("x", x)], n, node("dft", "DFT", &["x", "n"], &["y"]))
    };
    let upsample_scalar = || {
        let mut m = case(9, &[("x", &[])], &[], node("u", "Upsample", &["x", "s"], &["y"]));
        m.graph.as_mut().unwrap().initializer.push(build::floats("s", &[0], &[]));
        m
    };
    let max32 = i64::from(i32::MAX);
    let att = |mask: &[i64]| attention(&[&[2, 3, 4, 8], &[2, 3, 6, 8], &[2, 3, 6, 8], mask], None);
    let lrn = |x: &[i64]| case(13, &[("x", x)], &[], with_int(node("lrn", "LRN", &["x"], &["y"]), "size", 3));
    let gru = |layout: i64| {
        let n = with_int(node("rnn", "GRU", &["x", "w", "r"], &["y"]), "hidden_size", 4);
        let inputs = vec![input("x", &[2, 3, 5]), input("w", &[1, 12, 5]), input("r", &[1, 12, 4])];
        build::model(14, inputs, vec![with_int(n, "layout", layout)], &["y"])
    };
    let rec = |op: &str, x: &[i64], hidden: Option<i64>| {
        let h = hidden.unwrap_or(4);
        let g = h * [("RNN", 1), ("GRU", 3), ("LSTM", 4)].iter().find(|(o, _)| *o == op).unwrap().1;
        let n = node("rnn", op, &["x", "w", "r"], &["y"]);
        let n = hidden.map_or(n.clone(), |h| with_int(n, "hidden_size", h));
        build::model(14, vec![input("x", x), input("w", &[1, g, x[2]]), input("r", &[1, g, h])], vec![n], &["y"])
    };
    let wrap = |x: &[i64]| {
        let n = with_str(node("pad", "Pad", &["x", "p"], &["y"]), "mode", "wrap");
        case(19, &[("x", x)], &[("p", &[4], &[0, 1, 0, 1])], n)
    };
    let conv_t0 = |opad: i64| {
        let n = with_ints(node("ct", "ConvTranspose", &["x", "w"], &["y"]), "strides", &[2, 2]);
        case(17, &[("x", &[1, 1, 3, 0]), ("w", &[1, 2, 3, 3])], &[], with_ints(n, "output_padding", &[opad, opad]))
    };
    let conv_t3 =
        |x: &[i64], w: &[i64]| case(17, &[("x", x), ("w", w)], &[], node("ct", "ConvTranspose", &["x", "w"], &["y"]));
    let qmatmul3 = |col: &[i64]| {
        let u8_in = |n: &str, s: &[i64]| typed(n, DataType::Uint8, s);
        let (f, a, b) = (|n: &str, s: &[i64]| input(n, s), u8_in("a", &[2, 2, 3]), u8_in("b", &[2, 3, 4]));
        let inputs =
            vec![a, f("as", &[]), u8_in("az", &[]), b, f("bs", col), u8_in("bz", col), f("ys", &[]), u8_in("yz", &[])];
        let n = node("q", "QLinearMatMul", &["a", "as", "az", "b", "bs", "bz", "ys", "yz"], &["y"]);
        build::model(21, inputs, vec![n], &["y"])
    };
    let affine = |size: &[i64]| affine_grid(&[size[0], 2, 3], size);
    let cubic = |x: &[i64], scales: &[f32], antialias: i64| {
        let n =
            with_int(with_str(node("r", "Resize", &["x", "", "s"], &["y"]), "mode", "cubic"), "antialias", antialias);
        let mut m = case(19, &[("x", x)], &[], n);
        m.graph.as_mut().unwrap().initializer.push(build::floats("s", &[scales.len() as i64], scales));
        m
    };
    let nearest_aa = |antialias: i64| {
        let mut m = cubic(&[1, 2, 8, 8], &[1.0, 1.0, 0.5, 0.5], antialias);
        m.graph.as_mut().unwrap().node[0].attribute[0].s = Some(b"nearest".to_vec());
        m
    };
    let linear = |x: &[i64], scales: &[f32]| {
        let mut m = cubic(x, scales, 0);
        m.graph.as_mut().unwrap().node[0].attribute[0].s = Some(b"linear".to_vec());
        m
    };
    let causal = |x: &[i64]| over(27, &[x, &[4, 1, 3]], node("cc", "CausalConvWithState", &[], &["y", "state"]));
    let grid_mode = |x: &[i64], g: &[i64], mode: &str| {
        case(20, &[("x", x), ("g", g)], &[], with_str(node("gs", "GridSample", &["x", "g"], &["y"]), "mode", mode))
    };
    let regex = |pattern: Option<&str>| {
        let n = node("r", "RegexFullMatch", &["x"], &["y"]);
        let n = pattern.map_or(n.clone(), |p| with_str(n, "pattern", p));
        let mut m = build::model(20, vec![typed("x", DataType::String, &[2, 3])], vec![n], &["y"]);
        m.graph.as_mut().unwrap().output[0] = typed("y", DataType::Bool, &[2, 3]);
        m
    };
    let x6: &[i64] = &[1, 2, 3, 3, 3, 3];
    let pool4 = |op: &str, x: &[i64]| {
        let n = node("p", op, &["x"], &["y"]);
        let n = if op.starts_with("Global") { n } else { with_ints(n, "kernel_shape", &vec![2; x.len() - 2]) };
        case(19, &[("x", x)], &[], n)
    };
    let deform = |x: &[i64], w: &[i64], offset: &[i64]| {
        case(22, &[("x", x), ("w", w), ("o", offset)], &[], node("dc", "DeformConv", &["x", "w", "o"], &["y"]))
    };
    for (k, (m, shape, ort)) in [
        // "Input X must be 4D (N, C, H, W)": the spec's DeformConv is N-D.
        (
            deform(&[1, 2, 5], &[2, 2, 3], &[1, 3, 3]),
            vec![1, 2, 3],
            Some("onnxruntime takes only a 4-D input, not 3-D"),
        ),
        (deform(&[1, 2, 5, 5], &[2, 2, 3, 3], &[1, 18, 3, 3]), vec![1, 2, 3, 3], None),
        // "Unsupported pooling size", "Unsupported kernel dimension : 4", "Input dimension
        // cannot be less than 3": the spec pools over any spatial axes.
        (pool4("MaxPool", x6), vec![1, 2, 2, 2, 2, 2], Some("onnxruntime pools 1 to 3 spatial axes, not 4")),
        (pool4("LpPool", x6), vec![1, 2, 2, 2, 2, 2], Some("not 4")),
        (pool4("GlobalAveragePool", x6), vec![1, 2, 1, 1, 1, 1], Some("not 4")),
        (pool4("GlobalMaxPool", &[3, 2]), vec![3, 2], Some("not 0")),
        (pool4("AveragePool", &[1, 2, 3, 3, 3]), vec![1, 2, 2, 2, 2], None),
        (pool4("GlobalLpPool", &[1, 2, 3, 3, 3]), vec![1, 2, 1, 1, 1], None),
        // "Only 4-D or 5-D tensor is supported", "Only support GridSample Cubic mode in 4-D
        // cases": the spec's GridSample-20 samples N-D inputs.
        (grid_mode(&[1, 2, 5], &[1, 4, 1], "linear"), vec![1, 2, 4], Some("no linear kernel for an input of rank 3")),
        (grid_mode(&[1, 2, 4, 5, 6], &[1, 3, 3, 3, 3], "cubic"), vec![1, 2, 3, 3, 3], Some("no cubic kernel")),
        (grid_mode(&[1, 2, 4, 5, 6], &[1, 3, 3, 3, 3], "nearest"), vec![1, 2, 3, 3, 3], None),
        (grid_mode(&[1, 2, 4, 5], &[1, 3, 3, 2], "cubic"), vec![1, 2, 3, 3], None),
        // "Invalid input shape: {3}" in the function body's Conv of the state and no input.
        (causal(&[2, 4, 0]), vec![2, 4, 0], Some("CausalConvWithState: an empty sequence; onnxruntime refuses it")),
        (causal(&[2, 4, 1]), vec![2, 4, 1], None),
        // SoftmaxCrossEntropyLoss's body reshapes [N, C, -1] back by the scores' shape: "Invalid
        // position of 0" past axis 2.
        (
            loss("SoftmaxCrossEntropyLoss", &[3, 5, 2, 0], &[3, 2, 0], None),
            vec![3, 2, 0],
            Some("SoftmaxCrossEntropyLoss: axis 3 is empty; onnxruntime refuses it"),
        ),
        (loss("SoftmaxCrossEntropyLoss", &[3, 5, 0, 2], &[3, 0, 2], None), vec![3, 0, 2], None),
        // LinearAttention's body reshapes to [B, T, heads, -1]: "size != 0" where B or T is 0.
        (
            lin_att("linear", 4, &[&[0, 3, 32][..]; 3]),
            vec![0, 3, 32],
            Some("LinearAttention: an empty batch; onnxruntime refuses it"),
        ),
        (lin_att("linear", 4, &[&[2, 0, 32][..]; 3]), vec![2, 0, 32], Some("an empty sequence")),
        (lin_att("linear", 4, &[&[2, 3, 0], &[2, 3, 0], QKV]), vec![2, 3, 32], None),
        // and where it repeats 4 key and value heads for 8 query heads, "input_shape_size ==
        // requested_shape_size" over heads of size 0.
        (
            lin_att("linear", 8, &[&[2, 3, 64], QKV, &[2, 3, 0]]),
            vec![2, 3, 0],
            Some("LinearAttention: grouped heads of size 0; onnxruntime refuses it"),
        ),
        (lin_att("linear", 8, &[&[2, 3, 0], &[2, 3, 0], QKV]), vec![2, 3, 64], Some("grouped heads of size 0")),
        // Its Conv of 0 groups: SIGFPE.
        (
            over(27, &[&[2, 0, 8], &[0, 1, 3]], node("cc", "CausalConvWithState", &[], &["y", "state"])),
            vec![2, 0, 8],
            Some("CausalConvWithState: no channels; onnxruntime refuses it"),
        ),
        (causal(&[0, 4, 2]), vec![0, 4, 2], None),
        // "The input tensor cannot be reshaped to the requested shape" in the function body.
        (
            group_norm_of(18, &[0, 2, 4]),
            vec![0, 2, 4],
            Some("GroupNormalization: an empty input; onnxruntime refuses it"),
        ),
        (group_norm_of(21, &[2, 2, 0, 3]), vec![2, 2, 0, 3], Some("an empty input")),
        (group_norm_of(21, &[2, 2, 4]), vec![2, 2, 4], None),
        // "size[2] (H=0) must be positive": the spec gives an empty grid.
        (affine(&[2, 3, 0, 5]), vec![2, 0, 5, 2], Some("AffineGrid: size[2] is 0; onnxruntime refuses it")),
        (affine(&[0, 3, 4, 5]), vec![0, 4, 5, 2], None),
        // "Updating cos_cache and sin_cache in RotaryEmbedding is not currently supported": the
        // spec's position ids index the cache, whatever its length.
        (rotary(&[2, 3, 32], &[2, 4], &[2, 3], &[("num_heads", 4)]), vec![2, 3, 32], Some("over a cache of 2 rows")),
        (rotary(&[2, 3, 32], &[3, 4], &[2, 3], &[("num_heads", 4)]), vec![2, 3, 32], None),
        // "'Linear' mode only supports: 2-D inputs or 3-D inputs ... or 4-D inputs with the
        // corresponding outermost 2 scale values being 1 or the corresponding outermost and
        // innermost scale values being 1"; "'Cubic' mode only supports" 2-D, NCHW, and NHWC
        // growing or with antialias.
        (linear(&[8], &[2.0]), vec![16], Some("no linear kernel for scales [2]")),
        (linear(&[1, 4, 4, 3], &[1.0, 2.0, 1.0, 2.0]), vec![1, 8, 4, 6], Some("no linear kernel")),
        (linear(&[1, 4, 4, 3], &[1.0, 2.0, 2.0, 1.0]), vec![1, 8, 8, 3], None),
        // "exclude_outside can be set to 1 when mode is CUBIC".
        (
            with_int_at(linear(&[1, 4, 4, 3], &[1.0, 2.0, 2.0, 1.0]), "exclude_outside", 1),
            vec![1, 8, 8, 3],
            Some("exclude_outside in linear mode, which onnxruntime takes only in cubic mode"),
        ),
        (with_int_at(cubic(&[1, 8, 8, 3], &[1.0, 0.5, 0.5, 1.0], 1), "exclude_outside", 1), vec![1, 4, 4, 3], None),
        // "No attribute with name:'pattern'is defined": onnxruntime wants one.
        (regex(None), vec![2, 3], Some("RegexFullMatch without a pattern")),
        (regex(Some("a.*")), vec![2, 3], None),
        (cubic(&[3, 4, 4], &[1.0, 2.0, 2.0], 0), vec![3, 8, 8], Some("no cubic kernel")),
        (cubic(&[1, 8, 8, 3], &[1.0, 0.5, 0.5, 1.0], 0), vec![1, 4, 4, 3], Some("no cubic kernel")),
        (cubic(&[1, 8, 8, 3], &[1.0, 0.5, 0.5, 1.0], 1), vec![1, 4, 4, 3], None),
        (cubic(&[1, 8, 8, 3], &[1.0, 2.0, 2.0, 1.0], 0), vec![1, 16, 16, 3], None),
        (nearest_aa(1), vec![1, 2, 4, 4], Some("no nearest kernel with antialias")),
        (nearest_aa(0), vec![1, 2, 4, 4], None),
        // "input zero point must be a scalar or 1D tensor of size 1"; "weight zero point must be
        // a scalar, 1D tensor of size 1, or last to second dimension is 1": the spec's per-row
        // and per-column forms.
        (qmatmul([&[2], &[2], &[], &[]]), vec![2, 4], Some("one value per row of a")),
        (qmatmul3(&[4]), vec![2, 2, 4], Some("a vector per column of a b not 2-D")),
        (qmatmul3(&[2, 1, 4]), vec![2, 2, 4], None),
        (qmatmul([&[], &[], &[4], &[4]]), vec![2, 4], None),
        // "output_padding (1) may be too large for stride (2). Expected input size 1 but got 0".
        (conv_t0(1), vec![1, 2, 8, 2], Some("output_padding 1 is not 0")),
        (conv_t0(0), vec![1, 2, 7, 1], None),
        // SIGSEGV: 3 spatial axes, an empty one before a last that is not.
        (
            conv_t3(&[1, 1, 3, 0, 5], &[1, 2, 3, 3, 3]),
            vec![1, 2, 5, 2, 7],
            Some("an empty spatial axis of [1, 1, 3, 0, 5] before a last one that is not; onnxruntime refuses it"),
        ),
        (conv_t3(&[1, 1, 3, 4, 0], &[1, 2, 3, 3, 3]), vec![1, 2, 5, 6, 2], None),
        (conv_t3(&[1, 0, 3, 0, 5], &[0, 2, 3, 3, 3]), vec![1, 2, 5, 2, 7], None),
        // "Input tensor has no dimensions": the spec pads a scalar by no pads.
        (
            case(18, &[("x", &[])], &[("p", &[0], &[])], node("pad", "Pad", &["x", "p"], &["y"])),
            vec![],
            Some("Pad: a scalar input, which onnxruntime refuses"),
        ),
        (
            case(18, &[("x", &[])], &[("s", &[0], &[])], node("ccp", "CenterCropPad", &["x", "s"], &["y"])),
            vec![],
            Some("CenterCropPad: a scalar input"),
        ),
        (case(18, &[("x", &[3])], &[("p", &[2], &[0, 0])], node("pad", "Pad", &["x", "p"], &["y"])), vec![3], None),
        // "Unexpected mode of 3": any empty input in wrap mode.
        (wrap(&[0, 4]), vec![0, 6], Some("onnxruntime refuses")),
        (wrap(&[2, 4]), vec![2, 6], None),
        // "X_shape.NumDimensions() == 4 was false": the spec takes [N, C, D1, ..., Dk].
        (lrn(&[5, 5, 5]), vec![5, 5, 5], Some("onnxruntime runs LRN only on 4-D input")),
        (lrn(&[1, 5, 5, 5]), vec![1, 5, 5, 5], None),
        // "padding values must be non-negative": with auto_pad SAME a stride past the window
        // pads by less than 0, which onnxruntime's MLAS pools refuse (MaxPool of one output
        // without dilation, AveragePool before 19) and its other kernels take.
        (same_pool("MaxPool", 22, &[]), vec![1, 1, 2, 2], Some("pads axis 2 by -1 (stride 2, window 1, size 4)")),
        (same_pool("AveragePool", 11, &[]), vec![1, 1, 2, 2], Some("onnxruntime refuses it")),
        (same_pool("AveragePool", 19, &[]), vec![1, 1, 2, 2], None),
        (same_pool("MaxPool", 22, &[("storage_order", 1)]), vec![1, 1, 2, 2], None),
        (with_ints_at(same_pool("MaxPool", 22, &[]), "dilations", &[2, 2]), vec![1, 1, 2, 2], None),
        (with_ints_at(same_pool("MaxPool", 22, &[]), "kernel_shape", &[3, 3]), vec![1, 1, 2, 2], None),
        // "only supports precision 0 (use scale type), FLOAT, and FLOAT16"; the spec takes any
        // float type.
        (with_int_at(quantize_at(25), "precision", 16), vec![2, 3], Some("precision bfloat16")),
        // "Attribute round_mode is only used for cast to float8e8m0": its default goes.
        (round_mode("Cast", "down"), vec![2, 3], Some("round_mode down to a type other than float8e8m0")),
        // "alpha_ > 0.0f was false", "beta_ > 0.0f was false": the spec bounds neither.
        (float_at(lrn(&[1, 5, 5, 5]), "alpha", 0.0), vec![1, 5, 5, 5], Some("alpha 0; onnxruntime refuses")),
        (float_at(lrn(&[1, 5, 5, 5]), "beta", f32::NAN), vec![1, 5, 5, 5], Some("beta NaN; onnxruntime refuses")),
        (float_at(lrn(&[1, 5, 5, 5]), "beta", 0.5), vec![1, 5, 5, 5], None),
        // onnxruntime aborts the process ("terminate called without an active exception") on
        // an empty batch of GRU or LSTM, or a GRU's empty sequence or input; it wants
        // hidden_size ("info.GetAttr(\"hidden_size\", ...).IsOK()"), above 0 for GRU and LSTM.
        // The spec's reference takes the hidden size from R.
        (rec("GRU", &[0, 3, 5], Some(4)), vec![0, 1, 3, 4], Some("GRU: an empty sequence; onnxruntime refuses it")),
        (rec("GRU", &[2, 0, 5], Some(4)), vec![2, 1, 0, 4], Some("GRU: an empty batch")),
        // "clip_ > 0.f was false" for GRU and LSTM; RNN takes any clip.
        (float_at(rec("GRU", &[2, 1, 5], Some(4)), "clip", 0.0), vec![2, 1, 1, 4], Some("GRU: clip 0; onnxruntime")),
        (float_at(rec("LSTM", &[2, 1, 5], Some(4)), "clip", f32::NAN), vec![2, 1, 1, 4], Some("LSTM: clip NaN")),
        (float_at(rec("LSTM", &[2, 1, 5], Some(4)), "clip", 0.5), vec![2, 1, 1, 4], None),
        (float_at(rec("RNN", &[2, 1, 5], Some(4)), "clip", -1.0), vec![2, 1, 1, 4], None),
        (rec("GRU", &[2, 3, 0], Some(4)), vec![2, 1, 3, 4], Some("GRU: an empty input size")),
        (rec("LSTM", &[2, 0, 5], Some(4)), vec![2, 1, 0, 4], Some("LSTM: an empty batch")),
        (rec("LSTM", &[0, 3, 0], Some(4)), vec![0, 1, 3, 4], None),
        (rec("RNN", &[0, 0, 0], Some(4)), vec![0, 1, 0, 4], None),
        (rec("GRU", &[2, 3, 5], Some(0)), vec![2, 1, 3, 0], Some("GRU: hidden_size 0; onnxruntime refuses it")),
        (rec("LSTM", &[2, 3, 5], Some(0)), vec![2, 1, 3, 0], Some("LSTM: hidden_size 0")),
        (rec("RNN", &[2, 3, 5], Some(0)), vec![2, 1, 3, 0], None),
        (rec("LSTM", &[2, 3, 5], None), vec![2, 1, 3, 4], Some("LSTM: no hidden_size; onnxruntime refuses it")),
        (rec("RNN", &[2, 3, 5], None), vec![2, 1, 3, 4], Some("RNN: no hidden_size")),
        // onnxruntime aborts the process on a Unique whose slices along the axis are empty
        // only after it.
        (unique(&[3, 0], Some(0)), vec![1, 0], Some("along axis 0 are empty after it; onnxruntime refuses them")),
        (unique(&[2, 3, 0], Some(1)), vec![2, 1, 0], Some("along axis 1 are empty")),
        (unique(&[2, 0, 3], Some(0)), vec![1, 0, 3], Some("along axis 0 are empty")),
        (unique(&[0, 3, 0], Some(1)), vec![0, 1, 0], None),
        (unique(&[2, 0, 3], Some(1)), vec![2, 0, 3], None),
        // "Batchwise recurrent operations (layout == 1) are not supported".
        (gru(1), vec![2, 3, 1, 4], Some("onnxruntime runs only layout 0")),
        (gru(0), vec![2, 1, 3, 4], None),
        // "Invalid Y argument: num_indices = 0".
        (feature_extractor(&[3, 4], &[0]), vec![3, 0], Some("onnxruntime refuses them")),
        // "attn_mask must be 2D or 3D or 4D tensor", "inconsistent q_sequence_length",
        // "inconsistent total_sequence_length": the spec stretches the mask.
        (att(&[1, 6]), vec![2, 3, 4, 8], Some("onnxruntime takes a mask only of rank 2 to 4 ending in [4, 6]")),
        (att(&[6]), vec![2, 3, 4, 8], Some("onnxruntime takes a mask")),
        (att(&[2, 3, 4, 1]), vec![2, 3, 4, 8], Some("onnxruntime takes a mask")),
        (att(&[3, 4, 6]), vec![2, 3, 4, 8], None),
        // "scale must be greater than 0 if specified", in the kernels of opsets 23 and 24.
        (float_at(att(&[3, 4, 6]), "scale", -1.0), vec![2, 3, 4, 8], Some("scale -1; onnxruntime's kernel refuses")),
        (float_at(att(&[3, 4, 6]), "scale", 0.5), vec![2, 3, 4, 8], None),
        // Opset 24 pads a short mask; onnxruntime's kernel does not.
        (
            attention_at(24, &[&[2, 4, 8, 16], &[2, 4, 6, 16], &[2, 4, 6, 16], &[8, 5]], None),
            vec![2, 4, 8, 16],
            Some("ending in [8, 6], not [8, 5]"),
        ),
        // "DFT input signal dimension must be greater than zero when the output is non-empty":
        // the spec zero-pads it.
        (dft(&[1, 0, 1], &[8]), vec![1, 8, 2], Some("onnxruntime refuses")),
        (dft(&[0, 0, 1], &[8]), vec![0, 8, 2], None),
        (squeeze(&[1, 3, 1]), vec![1, 3, 1], Some("onnxruntime gives [3]")),
        (squeeze(&[2, 3]), vec![2, 3], None),
        (back(&[5], -1, i64::MAX), vec![0], Some("onnxruntime slices to the start, a size of 5")),
        (back(&[5], 3, max32), vec![0], Some("onnxruntime slices to the start, a size of 4")),
        (back(&[5], -1, i64::MIN), vec![5], None),
        (back(&[0], -1, i64::MAX), vec![0], None),
        (one_hot(0), vec![3, 0], Some("onnxruntime refuses it")),
        // "Either scales or sizes MUST be provided as input": an empty scales is none there.
        (upsample_scalar(), vec![], Some("onnxruntime takes for none")),
        // "Attribute saturate is only used for cast to float 8 types".
        (with_int_at(cast_to(1), "saturate", 0), vec![2, 3], Some("onnxruntime refuses it")),
        (with_int_at(cast_to(1), "saturate", 1), vec![2, 3], None),
        (one_hot(2), vec![3, 2], None),
        // "Post-activation SwiGLU ... CUDA": the CPU kernel refuses it.
        (
            with_int_at(moe(&[10, 4], &[4, 8, 16], &[4, 16, 8]), "swiglu_limit_after_activation", 1),
            vec![2, 5, 8],
            Some("onnxruntime's CPU kernel refuses swiglu_limit_after_activation"),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let want = if ort.is_some() { format!("Differs({shape:?})") } else { format!("Some({shape:?})") };
        dump(&format!("runtime-differs {k}"), &m, &want);
        let model = build::load(&m);
        let inf = infer(&model, &Options::default());
        let y = inf.shape(model.resolve(Model::MAIN, "y").unwrap());
        assert_eq!(y, Some(&shape.iter().copied().map(Dim::Known).collect()));
        let found: Vec<(Severity, &str, &str)> = inf
            .diagnostics
            .iter()
            .filter(|d| d.code != "zero-dim-input")
            .map(|d| (d.severity, d.code.as_str(), d.message.as_str()))
            .collect();
        match ort {
            Some(text) => {
                assert!(
                    matches!(found[..], [(Severity::Warning, "runtime-differs", m)] if m.contains(text)),
                    "{found:?}"
                )
            }
            None => assert!(found.is_empty(), "{found:?}"),
        }
    }
}

/// A contrib op that runs a standard op's rule on a view names itself in the rule's error,
/// not the standard op.
#[test]
fn a_borrowed_rule_names_the_node_s_own_op() {
    use DataType::{Float as F, Int32};
    let m = ms(MS, node("e", "ExpandDims", &["x", "a"], &["y"]), &[("x", &[2, 3], F)], &[("a", &[], &[5], Int32)]);
    let inf = infer(&build::load(&m), &Options::default());
    let errors: Vec<&str> = inf.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(errors, ["ExpandDims: axis 5 is outside the 3 axes of its input"]);
}

/// BeamSearch's other outputs, as onnxruntime 1.32 gives them for `generate`'s model:
/// sequences_scores [B, num_return_sequences] and scores [max_length - S, B, num_beams, vocab],
/// the vocabulary being `vocab_size` where set. Over a symbolic S, max_length bounds it.
#[test]
fn beam_search_scores_are_onnxruntime_s() {
    use build::D;
    for (ids, vocab, scores) in [
        (vec![D::N(2), D::N(3)], None, "[3, 2, 3, 10]"),
        (vec![D::N(2), D::N(3)], Some(8), "[3, 2, 3, 8]"),
        (vec![D::N(2), D::N(0)], None, "[6, 2, 3, 10]"),
        (vec![D::S("batch"), D::S("seq")], None, "[6-seq, batch, 3, 10]"),
    ] {
        let mut m = generate("BeamSearch", &[2, 3], &[], vocab);
        let g = m.graph.as_mut().unwrap();
        g.input[0] = typed("input_ids", DataType::Int32, &ids);
        g.node[0].output.extend(["ss".to_string(), "sc".to_string()]);
        g.output.extend([build::output("ss"), build::output("sc")]);
        let model = build::load(&m);
        let inf = infer(&model, &Options::default());
        let shape = |n: &str| inf.shape(model.resolve(Model::MAIN, n).unwrap()).map(|s| onnx_bcast::shape::render(s));
        assert_eq!(shape("sc").as_deref(), Some(scores));
        let batch = if matches!(ids[0], D::N(_)) { "2" } else { "batch" };
        assert_eq!(shape("ss"), Some(format!("[{batch}, 2]")));
        let bounds: Vec<String> = inf.constraints.iter().map(|a| a.assumption.to_string()).collect();
        assert_eq!(bounds, if batch == "2" { vec![] } else { vec!["seq <= 5".to_string()] });
    }
}

/// A condition over a subgraph's own symbols alone (the decoder's S and T, which BeamSearch
/// feeds) is a constraint, not part of the model's input contract.
#[test]
fn a_decoder_s_own_sizes_stay_out_of_the_contract() {
    use onnx_bcast::io::proto::attribute_proto::AttributeType;
    let mut m = generate("BeamSearch", &[2, 3], &[], None);
    let g = m.graph.as_mut().unwrap();
    g.input[0] = typed("input_ids", DataType::Int32, &["batch", "seq"]);
    let beam = &mut g.node[0];
    let decoder = beam.attribute.iter_mut().find(|a| a.r#type == Some(AttributeType::Graph as i32)).unwrap();
    decoder.g.as_mut().unwrap().node.push(node("add", "Add", &["position_ids", "attention_mask"], &["sum"]));
    let model = build::load(&m);
    let inf = infer(&model, &Options::default());
    let conditions: Vec<String> = inf.constraints.iter().map(|c| c.assumption.to_string()).collect();
    assert_eq!(conditions, ["S, T are equal or 1", "seq <= 5"]);
    assert_eq!(inf.contract.dims.keys().collect::<Vec<_>>(), ["seq"]);
    assert!(inf.contract.relations.is_empty(), "{:?}", inf.contract.relations);
}

/// GreedySearch and Sampling crash onnxruntime 1.32 on an empty prompt (input_ids [2, 0]:
/// a segmentation fault, probed on `deployed_models.py`'s gpt2_greedy and gpt2_sampling),
/// where BeamSearch runs it ([2, 1, 6]). Not a row: `ort_rows.py` runs its rows in-process.
/// Over a symbolic prompt length the contract starts at 1.
#[test]
fn an_empty_prompt_is_refused_where_onnxruntime_crashes() {
    for op in ["GreedySearch", "Sampling"] {
        let inf = infer(&build::load(&generate(op, &[2, 0], &[], None)), &Options::default());
        let errors: Vec<&str> =
            inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
        assert_eq!(errors, [format!("{op}: input_ids is empty: onnxruntime crashes on an empty prompt")], "{op}");
        let mut m = generate(op, &[2, 3], &[], None);
        m.graph.as_mut().unwrap().input[0] = typed("input_ids", DataType::Int32, &["batch", "seq"]);
        let inf = infer(&build::load(&m), &Options::default());
        assert_eq!(inf.contract.dims["seq"].text, "1 to 5", "{op}");
    }
    let inf = infer(&build::load(&generate("BeamSearch", &[2, 0], &[], None)), &Options::default());
    assert!(inf.diagnostics.iter().all(|d| d.severity != Severity::Error), "{:?}", inf.diagnostics);
}

/// The i-th n-gram of TfIdfVectorizer's pool counts at ngram_indexes[i] (the spec: "parallel
/// to the specified 'pool_*' attribute"). onnxruntime 1.32 reads past a shorter list: it ran a
/// pool of 7 n-grams with 6 indexes and died (SIGABRT) with 4. Not a row, as what onnxruntime
/// does depends on the memory past the list.
#[test]
fn tfidf_takes_an_index_for_every_n_gram() {
    let inf = infer(&build::load(&tfidf_bigram(&[0])), &Options::default());
    let errors: Vec<&str> =
        inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
    assert_eq!(errors, ["TfIdfVectorizer: 1 ngram_indexes for the pool's 2 n-grams"]);
    let inf = infer(&build::load(&tfidf_bigram(&[1, 0, 2])), &Options::default());
    assert!(!inf.has_errors(), "more indexes than n-grams widen the output: {:?}", inf.diagnostics);
}

/// DecoderMaskedMultiHeadAttention with a shared past writes the new key and value through
/// present_key and present_value: without both outputs onnxruntime 1.32 dies of SIGSEGV. Not
/// a row, as a crash would take `ort_rows.py`'s runner with it.
#[test]
fn a_shared_past_without_its_present_outputs_is_refused() {
    for outputs in [&["y"][..], &["y", "pk_out"], &["y", "", "pv_out"]] {
        let mut m = shared_past(1, Some(&[2, 2, 4, 4]), Some(3));
        m.graph.as_mut().unwrap().node[0].output = outputs.iter().map(|o| o.to_string()).collect();
        let inf = infer(&build::load(&m), &Options::default());
        let errors: Vec<&str> =
            inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
        let want =
            "DecoderMaskedMultiHeadAttention: a shared past without present_key and present_value: onnxruntime crashes";
        assert_eq!(errors, [want], "{outputs:?}");
    }
}

/// QLinearSigmoid and QLinearLeakyRelu without y_zero_point: onnxruntime 1.32 aborts
/// (SIGABRT), though the schema makes it optional. Not a row, as the crash would take
/// `ort_rows.py`'s runner with it.
#[test]
fn a_quantized_activation_needs_its_output_zero_point() {
    use DataType::{Float as F, Uint8 as U8};
    for op in ["QLinearSigmoid", "QLinearLeakyRelu"] {
        let ins: &[(&str, &[i64], DataType)] = &[("x", &[2, 3], U8), ("xs", &[], F), ("xz", &[], U8), ("ys", &[], F)];
        let inf = infer(
            &build::load(&ms(MS, node("q", op, &["x", "xs", "xz", "ys"], &["y"]), ins, &[])),
            &Options::default(),
        );
        let errors: Vec<&str> =
            inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
        assert_eq!(errors, [format!("{op} leaves input 4 empty, which onnxruntime crashes without")], "{op}");
    }
}

/// Outputs left out where onnxruntime 1.32 cannot run the node: any of Split's (SIGSEGV),
/// BatchNormalization's running statistics in training mode (SIGSEGV), every output of an RNN
/// ("At least one output should be requested"), and a Loop or Scan with fewer outputs than its
/// body gives ("Graph attribute inferencing returned type information for 3 outputs. Expected
/// 2") or one left out ("FindDeviceForValue"). Not rows: the crashes would take
/// `ort_rows.py`'s runner with them, and the rest read the node cases.
#[test]
fn outputs_left_out_where_onnxruntime_cannot_run() {
    let errors = |m: &Model| -> Vec<String> {
        let inf = infer(m, &Options::default());
        inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.clone()).collect()
    };
    let split = with_int(node("s", "Split", &["x"], &["a", "", "c"]), "num_outputs", 3);
    let m = build::model(18, vec![input("x", &[6, 2])], vec![split], &["a"]);
    assert_eq!(errors(&build::load(&m)), ["Split: output 1 is left out, which onnxruntime crashes on"]);
    let n =
        with_int(node("bn", "BatchNormalization", &["x", "s", "b", "m", "v"], &["y", "", "rv"]), "training_mode", 1);
    let ins = vec![input("x", &[2, 3, 4]), input("s", &[3]), input("b", &[3]), input("m", &[3]), input("v", &[3])];
    let m = build::model(15, ins, vec![n], &["y"]);
    let want = "BatchNormalization: output 1 is left out in training mode, which onnxruntime crashes on";
    assert_eq!(errors(&build::load(&m)), [want]);
    let n = with_int(node("l", "LSTM", &["x", "w", "r"], &["", "", ""]), "hidden_size", 4);
    let m =
        build::model(14, vec![input("x", &[2, 3, 5]), input("w", &[1, 16, 5]), input("r", &[1, 16, 4])], vec![n], &[]);
    assert_eq!(errors(&build::load(&m)), ["LSTM: no output is asked for"]);
    for (case, want) in [
        ("test_loop11", "Loop: the body gives 2 values after its condition, the node has 1 outputs"),
        ("test_scan9_sum", "Scan: the body gives 2 values, the node has 1 outputs"),
    ] {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/node").join(case).join("model.onnx");
        let mut m = <ModelProto as prost::Message>::decode(std::fs::read(path).unwrap().as_slice()).unwrap();
        let g = m.graph.as_mut().unwrap();
        let dropped = g.node[0].output.pop().unwrap();
        g.output.retain(|o| o.name() != dropped);
        assert_eq!(errors(&build::load(&m)), [want], "{case}");
    }
}

/// Skip*LayerNormalization reads its skip modulo the skip's size: an empty skip beside a
/// filled input is SIGFPE in onnxruntime 1.32, an empty input with it runs. Not a row (the
/// crash).
#[test]
fn an_empty_skip_beside_a_filled_input_is_refused() {
    use DataType::Float as F;
    for (x, skip, refused) in [(&[2i64, 3, 4][..], &[0i64, 3, 4][..], true), (&[0, 3, 4], &[0, 3, 4], false)] {
        let ins = [("x", x, F), ("s", skip, F), ("g", &[4][..], F)];
        let m = ms(MS, node("n", "SkipSimplifiedLayerNormalization", &["x", "s", "g"], &["y"]), &ins, &[]);
        let inf = infer(&build::load(&m), &Options::default());
        let errors: Vec<&str> =
            inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
        let want: &[&str] =
            if refused { &["SkipSimplifiedLayerNormalization: input 1 is empty and input 0 is not"] } else { &[] };
        assert_eq!(errors, want, "{x:?} {skip:?}");
    }
}

/// DecoderMaskedMultiHeadAttention with a query of hidden size 0: onnxruntime 1.32 dies of
/// SIGFPE, as MultiHeadAttention does. Not a row (the crash).
#[test]
fn a_decoder_step_of_hidden_size_0_is_refused() {
    use DataType::Float as F;
    let ins = [("q", &[2i64, 1, 0][..], F), ("k", &[2, 1, 0], F), ("v", &[2, 1, 0], F)];
    let n = with_int(node("d", "DecoderMaskedMultiHeadAttention", &["q", "k", "v"], &["y"]), "num_heads", 2);
    let inf = infer(&build::load(&ms(MS, n, &ins, &[])), &Options::default());
    let errors: Vec<&str> =
        inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
    assert_eq!(errors, ["DecoderMaskedMultiHeadAttention: input 0 has a hidden size of 0"]);
}

/// WhisperBeamSearch takes audio features [B, 80, 3000]; its prompt is the decoder's start
/// token, so max_length must exceed 1. Expected values are onnxruntime 1.32's runs of its own
/// Whisper export of a tiny Whisper (`scripts/deployed_models.py`, whisper_beam) with these
/// parameters as initializers: [2, 1, 3] for max_length 3, "max_length (1) shall be greater
/// than input sequence length (1)", "Inputs 0 shall be 3 dimensions in whisper graph".
#[test]
fn whisper_beam_search_is_onnxruntime_s() {
    use build::D;
    for (features, max_length, want) in [
        (vec![D::N(2), D::N(80), D::N(3000)], 3, Some("[2, 1, 3]")),
        (vec![D::N(2), D::N(80), D::N(3000)], 1, None),
        (vec![D::N(80), D::N(3000)], 3, None),
    ] {
        let set: &[(&str, &[i64], &[i64], DataType)] = &[
            ("max_length", &[1], &[max_length], DataType::Int32),
            ("num_beams", &[1], &[2], DataType::Int32),
            ("num_return_sequences", &[1], &[1], DataType::Int32),
        ];
        let mut m = generate("BeamSearch", &[2, 3], set, None);
        let g = m.graph.as_mut().unwrap();
        g.input[0] = typed("input_ids", DataType::Float, &features);
        g.node[0].op_type = Some("WhisperBeamSearch".into());
        let model = build::load(&m);
        let inf = infer(&model, &Options::default());
        let errors: Vec<&str> =
            inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
        let y = inf.shape(model.resolve(Model::MAIN, "y").unwrap()).map(|s| onnx_bcast::shape::render(s));
        match want {
            Some(shape) => assert_eq!((y.as_deref(), errors.len()), (Some(shape), 0), "{errors:?}"),
            None => assert_eq!(errors.len(), 1, "{y:?}"),
        }
    }
}

/// WhisperBeamSearch feeds its audio features to its encoder's first input as they are, and
/// onnxruntime runs the encoder on them whatever it declares: its Whisper export refuses 100
/// frames inside the encoder (a position table of 1,500 after a stride of 2), and runs 3,000
/// under a stale declaration of 2,999. Here the encoder adds a table of 6 to [B, 4, frames],
/// then its second input [B, 4, 1].
#[test]
fn a_whisper_encoder_runs_on_the_features_it_is_fed() {
    use build::D;
    use onnx_bcast::io::proto::{attribute_proto::AttributeType, AttributeProto, GraphProto};
    for (features, declared, errors, contract) in [
        (vec![D::N(2), D::N(4), D::N(6)], 6, 0, None),
        (vec![D::N(2), D::N(4), D::N(5)], 6, 1, None),
        (vec![D::N(2), D::N(4), D::N(6)], 5, 0, None),
        (vec![D::S("batch"), D::N(4), D::S("frames")], 6, 0, Some("one of 1, 6")),
    ] {
        let set: &[(&str, &[i64], &[i64], DataType)] = &[
            ("max_length", &[1], &[3], DataType::Int32),
            ("num_beams", &[1], &[2], DataType::Int32),
            ("num_return_sequences", &[1], &[1], DataType::Int32),
        ];
        let mut m = generate("BeamSearch", &[2, 3], set, None);
        let g = m.graph.as_mut().unwrap();
        g.input[0] = typed("input_ids", DataType::Float, &features);
        let beam = &mut g.node[0];
        beam.op_type = Some("WhisperBeamSearch".into());
        let encoder = GraphProto {
            name: Some("encoder".into()),
            node: vec![
                node("add", "Add", &["features", "table"], &["sum"]),
                node("add2", "Add", &["sum", "other"], &["encoded"]),
            ],
            input: vec![
                typed("features", DataType::Float, &[D::S("B"), D::N(4), D::N(declared)]),
                typed("other", DataType::Float, &[D::S("B"), D::N(4), D::N(1)]),
            ],
            output: vec![typed("encoded", DataType::Float, &[D::S("B"), D::N(4), D::N(6)])],
            initializer: vec![build::floats("table", &[6], &[0.5; 6])],
            ..Default::default()
        };
        beam.attribute.push(AttributeProto {
            name: Some("encoder".into()),
            r#type: Some(AttributeType::Graph as i32),
            g: Some(encoder),
            ..Default::default()
        });
        let model = build::load(&m);
        let inf = infer(&model, &Options::default());
        let found: Vec<&str> =
            inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.as_str()).collect();
        assert_eq!(found.len(), errors, "{found:?}");
        assert_eq!(inf.contract.dims.get("frames").map(|d| d.text.as_str()), contract);
        // The encoder's B is the node's batch in its other inputs too: no condition ties them.
        let conditions: Vec<String> = inf.constraints.iter().map(|c| c.assumption.to_string()).collect();
        assert!(conditions.iter().all(|c| !c.contains('B')), "{conditions:?}");
    }
}

/// Negative pads that leave an axis a negative size say so in constant mode (the message spoke
/// of reflecting, which only reflect mode does).
#[test]
fn a_crop_past_the_axis_says_what_is_left() {
    let m = pad_by("constant", &[3, 4], &[0, -3, 0, -2]);
    let inf = infer(&build::load(&m), &Options::default());
    let found: Vec<&str> = inf.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(found, ["Pad (constant): negative pads leave axis 1 a size of -1; onnxruntime refuses it"]);
}

/// onnxruntime 1.32 aborts (SIGABRT, the standard library's distributions asserting) on a
/// uniform distribution whose low is not at most its high and on a normal one of scale 0 or
/// less, NaN among them; equal bounds run. Not rows (the crash).
#[test]
fn a_random_distribution_onnxruntime_aborts_on_is_refused() {
    let random = |op: &str, floats: &[(&str, f32)]| {
        let n = if op.ends_with("Like") {
            node("r", op, &["x"], &["y"])
        } else {
            with_ints(node("r", op, &[], &["y"]), "shape", &[2, 3])
        };
        let n = floats.iter().fold(n, |n, (k, v)| with_attr(n, k, Some(*v), &[]));
        let inputs = if op.ends_with("Like") { vec![input("x", &[2, 3])] } else { vec![] };
        let inf = infer(&build::load(&build::model(17, inputs, vec![n], &["y"])), &Options::default());
        inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.clone()).collect::<Vec<_>>()
    };
    let aborts = |op: &str, what: &str| [format!("{op}: {what}, which onnxruntime aborts on")];
    assert_eq!(random("RandomUniform", &[("low", 3.0)]), aborts("RandomUniform", "low 3 not at most high 1"));
    assert_eq!(
        random("RandomUniformLike", &[("high", -1.0)]),
        aborts("RandomUniformLike", "low 0 not at most high -1")
    );
    assert_eq!(random("RandomUniform", &[("low", f32::NAN)]), aborts("RandomUniform", "low NaN not at most high 1"));
    assert!(random("RandomUniform", &[("low", 1.0)]).is_empty());
    assert!(random("RandomUniformLike", &[("low", f32::NEG_INFINITY), ("high", f32::INFINITY)]).is_empty());
    assert_eq!(random("RandomNormal", &[("scale", 0.0)]), aborts("RandomNormal", "scale 0"));
    assert_eq!(random("RandomNormalLike", &[("scale", -1.0)]), aborts("RandomNormalLike", "scale -1"));
    assert!(random("RandomNormal", &[("mean", f32::INFINITY)]).is_empty());
}

/// onnxruntime 1.32 dies on an empty batch of QAttention (SIGFPE) and of DynamicQuantizeLSTM
/// (SIGABRT); an empty sequence runs. Not rows (the crashes).
#[test]
fn an_empty_batch_of_a_quantized_sequence_op_is_refused() {
    let errors = |m: &ModelProto| -> Vec<String> {
        let inf = infer(&build::load(m), &Options::default());
        inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).map(|d| d.message.clone()).collect()
    };
    let qattention = |x: &[i64]| ms_attention(true, x, None, [&[], &[], &[], &[]]);
    let want = ["QAttention: an empty batch, which onnxruntime crashes on"];
    assert_eq!(errors(&qattention(&[0, 3, 8])), want);
    assert!(errors(&qattention(&[2, 0, 8])).is_empty());
    let lstm = |x: &[i64]| dq_lstm(&[("x", x), ("ih", &[1, x[1], 4])], None);
    assert_eq!(errors(&lstm(&[5, 0, 3])), ["DynamicQuantizeLSTM: an empty batch, which onnxruntime aborts on"]);
    assert!(errors(&lstm(&[0, 2, 3])).is_empty());
}

"""Generates src/ops/table.rs: one row per ONNX operator and per opset version at which its
schema changed, with the input arity and the inputs' type constraints taken from onnx's
schemas and the shape, type and fold rules named below. Run by hand after changing RULES:
python3 scripts/gen_op_table.py"""

import onnx
import onnx.defs
from onnx import TensorProto

UNARY = """Acos Acosh Asin Asinh Atan Atanh Ceil Cos Cosh Elu Erf Exp Floor HardSigmoid HardSwish
LeakyRelu Log Mish Reciprocal Relu Round Selu Sigmoid Sign Sin Sinh Softplus Softsign Sqrt Tan Tanh
ThresholdedRelu Celu Gelu Shrink Swish BitwiseNot Clip Softmax LogSoftmax Hardmax LpNormalization
LRN MeanVarianceNormalization InstanceNormalization CumSum CumProd Trilu ReverseSequence Scatter
ScatterElements ScatterND TensorScatter RotaryEmbedding GroupNormalization RMSNormalization
SwiGLU""".split()
FOLD_UNARY = {"Neg": "neg", "Abs": "abs"}
BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Mod": "modulo", "Pow": None,
          "BitShift": None, "BitwiseAnd": None, "BitwiseOr": None, "BitwiseXor": None}
COMPARE = {"Equal": "eq", "Greater": "gt", "Less": "lt", "GreaterOrEqual": "ge", "LessOrEqual": "le",
           "And": "and", "Or": "or", "Xor": None}
NARY = {"Max": "max", "Min": "min", "Sum": None, "Mean": None}

# Ops whose whole rule is a custom function: op -> (function, type rule).
CUSTOM = {
    "Constant": "constant", "Identity": "identity", "Cast": "cast", "CastLike": "cast_like",
    "Shape": "shape", "Size": "size", "Gather": "gather", "Slice": "slice", "Concat": "concat",
    "Unsqueeze": "unsqueeze", "Squeeze": "squeeze", "Reshape": "reshape",
    "ConstantOfShape": "constant_of_shape", "Range": "range", "Tile": "tile",
    "ReduceSum": "reduce", "ReduceMean": "reduce", "ReduceMax": "reduce", "ReduceMin": "reduce",
    "ReduceProd": "reduce", "ReduceL1": "reduce", "ReduceL2": "reduce", "ReduceLogSum": "reduce",
    "ReduceLogSumExp": "reduce", "ReduceSumSquare": "reduce", "ArgMax": "arg_reduce",
    "ArgMin": "arg_reduce", "Transpose": "transpose", "Flatten": "flatten", "Split": "split",
    "Pad": "pad", "Resize": "resize", "Upsample": "resize", "TopK": "topk", "MatMul": "matmul",
    "MatMulInteger": "matmul", "QLinearMatMul": "matmul", "Gemm": "gemm", "Conv": "conv",
    "ConvInteger": "conv", "QLinearConv": "conv", "DeformConv": "conv",
    "ConvTranspose": "conv_transpose", "MaxPool": "pool", "AveragePool": "pool", "LpPool": "pool",
    "GlobalAveragePool": "global_pool", "GlobalMaxPool": "global_pool", "GlobalLpPool": "global_pool",
    "BatchNormalization": "batch_norm", "LayerNormalization": "layer_norm", "Einsum": "einsum",
    "OneHot": "one_hot", "GatherElements": "gather_elements", "GatherND": "gather_nd",
    "SpaceToDepth": "space_to_depth", "DepthToSpace": "depth_to_space", "NonZero": "non_zero",
    "Unique": "unique", "Compress": "compress", "NonMaxSuppression": "nms", "DFT": "dft",
    "STFT": "stft", "HannWindow": "window", "HammingWindow": "window", "BlackmanWindow": "window",
    "MelWeightMatrix": "mel_weight_matrix", "RNN": "rnn", "GRU": "rnn", "LSTM": "rnn",
    "RoiAlign": "roi_align", "MaxRoiPool": "max_roi_pool", "GridSample": "grid_sample",
    "AffineGrid": "affine_grid", "Det": "det", "QuantizeLinear": "quantize",
    "DequantizeLinear": "dequantize", "DynamicQuantizeLinear": "dynamic_quantize",
    "NegativeLogLikelihoodLoss": "nll_loss", "SoftmaxCrossEntropyLoss": "sce_loss",
    "Dropout": "dropout", "RandomNormal": "random", "RandomUniform": "random",
    "RandomNormalLike": "random_like", "RandomUniformLike": "random_like", "Bernoulli": "random_like",
    "Multinomial": "multinomial", "EyeLike": "random_like", "MaxUnpool": "max_unpool",
    "Col2Im": "col2im", "CenterCropPad": "center_crop_pad", "Attention": "attention",
    "FlexAttention": "flex_attention", "LinearAttention": "linear_attention",
    "CausalConvWithState": "causal_conv", "TfIdfVectorizer": "tfidf", "StringSplit": "string_split",
    "StringNormalizer": "string_normalizer", "StringConcat": "string_concat",
    "RegexFullMatch": "regex_full_match", "OptionalHasElement": "optional_has_element",
    "OptionalGetElement": "optional_get_element", "Optional": "optional", "BitCast": "bit_cast",
    "ImageDecoder": "image_decoder", "Momentum": "optimizer", "Adagrad": "optimizer", "Adam": "optimizer",
    "Expand": None, "Where": None, "PRelu": None, "Not": None, "IsNaN": None, "IsInf": None,
    "Neg": None, "If": "unknown_outputs", "Loop": "loop_outputs", "Scan": "scan_outputs",
    "SequenceAt": "sequence_at", "SequenceConstruct": "sequence_construct",
    "SequenceEmpty": "sequence_empty", "SequenceErase": "sequence_same",
    "SequenceInsert": "sequence_same", "SequenceLength": "sequence_length",
    "SequenceMap": "unknown_outputs", "SplitToSequence": "split_to_sequence",
    "ConcatFromSequence": "concat_from_sequence",
    # ai.onnx.ml
    "LabelEncoder": "label_encoder", "TreeEnsemble": "tree_ensemble",
    "ArrayFeatureExtractor": "array_feature_extractor", "Binarizer": "same_shape_and_type",
    "Normalizer": "ml_float_same", "Scaler": "ml_float_same", "Imputer": "same_shape_and_type",
    "FeatureVectorizer": "feature_vectorizer", "CastMap": "unknown_outputs", "CategoryMapper": "category_mapper",
    "DictVectorizer": "unknown_outputs", "LinearClassifier": "ml_classifier",
    "LinearRegressor": "ml_regressor", "OneHotEncoder": "ml_one_hot_encoder", "SVMClassifier": "ml_classifier",
    "SVMRegressor": "ml_regressor", "TreeEnsembleClassifier": "ml_classifier",
    "TreeEnsembleRegressor": "ml_regressor", "ZipMap": "zip_map",
    # training
    "Gradient": "unknown_outputs",
}


def rule(op, since):
    """(shape, type, fold) for `op` at version `since`."""
    if op in UNARY:
        return "S::SameAs(0)", "T::SameAs(0)", "F::None"
    if op in FOLD_UNARY:
        return "S::SameAs(0)", "T::SameAs(0)", f"F::Unary(fold::{FOLD_UNARY[op]})"
    if op == "Not":
        return "S::SameAs(0)", "BOOL", "F::Unary(fold::not)"
    if op in ("IsNaN", "IsInf"):
        return "S::SameAs(0)", "BOOL", "F::None"
    fold = lambda f: f"F::Binary(fold::{f})" if f else "F::None"
    if op in BINARY:
        return ("S::Legacy" if since < 7 else "S::Multi"), "T::SameAs(0)", fold(BINARY[op])
    if op in COMPARE:
        return ("S::Legacy" if since < 7 else "S::Multi"), "BOOL", fold(COMPARE[op])
    if op in NARY:
        return ("S::Equal" if since < 8 else "S::Multi"), "T::SameAs(0)", fold(NARY[op])
    if op == "Where":
        return "S::Multi", "T::SameAs(1)", "F::Where"
    if op == "Expand":
        return "S::Expand", "T::SameAs(0)", "F::Broadcast0"
    if op == "PRelu":
        return ("S::Uni { to: 0, from: 1 }" if since >= 7 else "S::SameAs(0)"), "T::SameAs(0)", "F::None"
    if op in CUSTOM:
        return f"S::Custom(rules::{CUSTOM[op]})", "T::Custom", "F::None"
    raise SystemExit(f"no rule for {op}")


# A formal input that no tensor type can take: `Constraints::NONE`, which names no set.
NO_VAR = "C::NONE"

# Element types with a numpy name, the names `DType::name` gives.
NP = {TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.UINT16, TensorProto.INT16,
      TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL, TensorProto.FLOAT16, TensorProto.DOUBLE,
      TensorProto.UINT32, TensorProto.UINT64, TensorProto.COMPLEX64, TensorProto.COMPLEX128}


def element_code(type_str):
    """The element-type code of "tensor(float)" and the like; None for any other type."""
    if not (type_str.startswith("tensor(") and type_str.endswith(")")):
        return None
    return TensorProto.DataType.Value(type_str[len("tensor("):-1].upper())


def constraints(s, masks):
    """The schema's input constraints as Rust: each formal input's type variable (an index
    into the row's list of element-type sets, NO_VAR where no tensor type is allowed), the
    sets, and how the last input repeats. Sets are named constants, collected in `masks`."""
    allowed = {t.type_param_str: list(t.allowed_type_strs) for t in s.type_constraints}
    variables, sets, ins = {}, [], []
    for formal in s.inputs:
        # A formal input's type is a variable of the schema or one type written out.
        strs = allowed.get(formal.type_str, [formal.type_str])
        codes = sorted({c for c in map(element_code, strs) if c is not None})
        if not codes:
            ins.append(NO_VAR)
            continue
        if formal.type_str not in variables:
            mask = sum(1 << c for c in codes)
            name = masks.setdefault(mask, f"E{len(masks)}")
            variables[formal.type_str] = len(sets)
            # One type written out binds nothing: a second input of that type is checked
            # against the set alone, as it would be anyway.
            sets.append((name, formal.type_str in allowed))
        ins.append(variables[formal.type_str])
    last = s.inputs[-1] if s.inputs else None
    if last is not None and last.option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
        rep = "R::Same" if last.is_homogeneous else "R::Each"
    else:
        rep = "R::No"
    sets_rs = ", ".join(f"{'var' if var else 'one'}({name})" for name, var in sets)
    return f"C::new(&[{', '.join(map(str, ins))}], &[{sets_rs}], {rep})"


def main():
    rows = []
    masks = {}
    seen = set()
    for s in onnx.defs.get_all_schemas_with_history():
        domain = "" if s.domain == "ai.onnx" else s.domain
        if domain not in ("", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview"):
            continue
        key = (domain, s.name, s.since_version)
        if key in seen:
            continue
        seen.add(key)
        if s.deprecated:
            continue
        shape, ty, fold = rule(s.name, s.since_version)
        hi = "u32::MAX" if s.max_input >= 2**31 - 1 else str(s.max_input)
        rows.append((domain, s.name, s.since_version, s.min_input, hi, shape, ty, fold, constraints(s, masks)))
    rows.sort()
    newest = sorted(("" if d == "ai.onnx" else d, hi) for d, (_, hi) in onnx.defs.C.schema_version_map().items())
    out = [
        f"//! The op table's rows, generated by `scripts/gen_op_table.py` from onnx {onnx.__version__}'s",
        "//! schemas: one row per op and per opset version at which its schema changed.",
        "",
        "use super::rules::{self, fold};",
        "use super::{Constraints as C, Elements, Fold as F, OpDef, Repeat as R, ShapeRule as S, TypeRule as T};",
        "use crate::dtype::DType;",
        "",
        "const BOOL: T = T::Fixed(DType::Bool);",
        "",
        "/// A type variable of the schema: every input it types has one element type, from the set.",
        "const fn var(set: u64) -> Elements {",
        "    Elements { set, binds: true }",
        "}",
        "",
        "/// One type written out in the schema (`tensor(int64)`): each input it types is checked alone.",
        "const fn one(set: u64) -> Elements {",
        "    Elements { set, binds: false }",
        "}",
        "",
        "#[allow(clippy::too_many_arguments)]",
        "const fn r(domain: &'static str, op: &'static str, since: i64, min_inputs: u32, max_inputs: u32, shape: S, ty: T, fold: F, inputs: C) -> OpDef {",
        "    OpDef { op, domain, since, min_inputs, max_inputs, shape, ty, fold, inputs }",
        "}",
        "",
        "/// The newest opset version of each domain these schemas describe.",
        "pub static NEWEST: &[(&str, i64)] = &[" + ", ".join(f'("{d}", {v})' for d, v in newest) + "];",
        "",
        "// The element-type sets of the schemas' type constraints: bit `c` for type code `c`.",
    ]
    for mask, name in sorted(masks.items(), key=lambda kv: int(kv[1][1:])):
        names = ", ".join(onnx.helper.tensor_dtype_to_np_dtype(c).name if c in NP else TensorProto.DataType.Name(c).lower()
                          for c in range(64) if mask >> c & 1)
        out.append(f"const {name}: u64 = {mask:#x}; // {names}")
    out += [
        "",
        "/// Every op the pass knows.",
        "#[rustfmt::skip]",
        "pub static TABLE: &[OpDef] = &[",
    ]
    for d, op, since, lo, hi, shape, ty, fold, ins in rows:
        out.append(f'    r("{d}", "{op}", {since}, {lo}, {hi}, {shape}, {ty}, {fold}, {ins}),')
    out.append("];")
    open("src/ops/table.rs", "w").write("\n".join(out) + "\n")
    print(len(rows), "rows")


main()

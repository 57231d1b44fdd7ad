//! What each op means, one row per op: its shape and type rules (a family, which fixes the
//! rule at each opset version), how the contents of its small outputs fold, the executor's
//! kernel and whether loop fusion takes it. The schemas' own facts (arity and type
//! constraints, per version) are generated into `table.rs`; a test keeps the two naming the
//! same ops. Adding an op is a row here (and its rule in a file of `rules/` if it needs code).

use super::rules::{self as r, fold};
use super::{CustomRule, FloatFold as FF, Fold as F, RatioFold as R, ShapeRule, TypeRule};
use crate::dtype::DType;
use crate::exec::{kernels as k, shape_ops as s, Kernel};
use crate::shape::Dim;

/// How an op's output shapes and element types follow from its inputs, by kind of op.
#[derive(Clone, Copy, Debug)]
pub enum Family {
    /// The output is like input 0, whose other inputs and attributes need no check against it:
    /// unary math and activations.
    Unary,
    /// Input 0's shape, element type bool (Not, IsNaN, IsInf).
    Predicate,
    /// Two inputs broadcast multidirectionally; before opset 7, the legacy `broadcast`/`axis`
    /// form.
    Binary,
    /// As `Binary`, element type bool.
    Compare,
    /// Any number of inputs broadcast multidirectionally; before opset 8 they must have one
    /// shape.
    Nary,
    /// Inputs of one shape, with no broadcasting (SwiGLU).
    Equal,
    /// `Where(cond, x, y)`: all three broadcast; the element type is x's.
    Where,
    /// Input 0 broadcast against the shape held in input 1.
    Expand,
    /// The slope stretches unidirectionally to the input from opset 7; before, one shape.
    PRelu,
    /// A rule written as a function in `rules/`.
    Custom(CustomRule),
}

impl Family {
    /// The shape and type rules of the schema version `since`.
    pub fn rules(self, since: i64) -> (ShapeRule, TypeRule) {
        use ShapeRule as S;
        let same = TypeRule::SameAs(0);
        let bool = TypeRule::Fixed(DType::Bool);
        match self {
            Family::Unary => (S::SameAs(0), same),
            Family::Predicate => (S::SameAs(0), bool),
            Family::Binary => (if since < 7 { S::Legacy } else { S::Multi }, same),
            Family::Compare => (if since < 7 { S::Legacy } else { S::Multi }, bool),
            Family::Nary => (if since < 8 { S::Equal("at this opset") } else { S::Multi }, same),
            Family::Equal => (S::Equal("(it does not broadcast)"), same),
            Family::Where => (S::Multi, TypeRule::SameAs(1)),
            Family::Expand => (S::Expand, same),
            Family::PRelu => (if since < 7 { S::SameAs(0) } else { S::Uni { to: 0, from: 1 } }, same),
            Family::Custom(f) => (S::Custom(f), TypeRule::Custom),
        }
    }
}

/// The ops loop fusion (`exec::fuse`) runs in its fused f32 loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fuse {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Sum,
    Where,
    Expand,
}

/// A check of a node beyond its family's rule: an error where the spec refuses the node.
pub type Check = fn(&super::Ctx) -> Result<(), super::RuleError>;

/// What one op means.
#[derive(Clone, Copy, Debug)]
pub struct Meaning {
    pub domain: &'static str,
    pub op: &'static str,
    pub family: Family,
    pub fold: F,
    /// How its floating-point contents fold.
    pub floats: FF,
    /// How sizes held in floating point fold.
    pub ratio: R,
    /// The executor's kernel (default domain only).
    pub kernel: Option<Kernel>,
    /// Whether loop fusion takes the op, and as what.
    pub fuse: Option<Fuse>,
    /// The inputs whose elements the output's are, moved or selected, where the op computes
    /// none (Reshape's data; Pad's data and padding value); empty for the others.
    pub moves: &'static [usize],
    /// What the spec refuses of an op whose family's rule needs no code (an attribute that
    /// the inputs' element types rule out), checked before that rule.
    pub check: Option<Check>,
}

const fn op(op: &'static str, family: Family) -> Meaning {
    Meaning {
        domain: "",
        op,
        family,
        fold: F::None,
        floats: FF::None,
        ratio: R::None,
        kernel: None,
        fuse: None,
        moves: &[],
        check: None,
    }
}

const fn custom(name: &'static str, rule: CustomRule) -> Meaning {
    op(name, Family::Custom(rule))
}

impl Meaning {
    const fn fold(self, fold: F) -> Meaning {
        Meaning { fold, ..self }
    }
    const fn floats(self, floats: FF) -> Meaning {
        Meaning { floats, ..self }
    }
    const fn ratio(self, ratio: R) -> Meaning {
        Meaning { ratio, ..self }
    }
    const fn kernel(self, kernel: Kernel) -> Meaning {
        Meaning { kernel: Some(kernel), ..self }
    }
    const fn fuse(self, fuse: Fuse) -> Meaning {
        Meaning { fuse: Some(fuse), ..self }
    }
    const fn moves(self, moves: &'static [usize]) -> Meaning {
        Meaning { moves, ..self }
    }
    const fn check(self, check: Check) -> Meaning {
        Meaning { check: Some(check), ..self }
    }
    const fn domain(self, domain: &'static str) -> Meaning {
        Meaning { domain, ..self }
    }
}

use Family::*;

/// Every op the pass knows.
#[rustfmt::skip]
pub static OPS: &[Meaning] = &[
    // The broadcasting family.
    op("Add", Binary).fold(F::Binary(Dim::add)).floats(FF::Binary(|a, b| a + b)).ratio(R::Add).kernel(|c| k::arith(c, k::Arith::Add)).fuse(Fuse::Add),
    op("And", Compare).fold(F::Binary(fold::and)).kernel(|c| k::logical(c, |p, q| p & q)),
    op("BitShift", Binary).kernel(k::bit_shift),
    op("BitwiseAnd", Binary).kernel(|c| k::bitwise(c, k::Bit::And)),
    op("BitwiseOr", Binary).kernel(|c| k::bitwise(c, k::Bit::Or)),
    op("BitwiseXor", Binary).kernel(|c| k::bitwise(c, k::Bit::Xor)),
    op("Div", Binary).fold(F::Binary(fold::div)).floats(FF::Binary(|a, b| a / b)).ratio(R::Div).kernel(|c| k::arith(c, k::Arith::Div)).fuse(Fuse::Div),
    op("Equal", Compare).fold(F::Binary(fold::eq)).kernel(|c| k::compare(c, k::Cmp::Eq)),
    op("Expand", Expand).fold(F::Broadcast0).kernel(k::expand).fuse(Fuse::Expand).moves(&[0]),
    op("Greater", Compare).fold(F::Binary(fold::gt)).kernel(|c| k::compare(c, k::Cmp::Gt)),
    op("GreaterOrEqual", Compare).fold(F::Binary(fold::ge)).kernel(|c| k::compare(c, k::Cmp::Ge)),
    op("Less", Compare).fold(F::Binary(fold::lt)).kernel(|c| k::compare(c, k::Cmp::Lt)),
    op("LessOrEqual", Compare).fold(F::Binary(fold::le)).kernel(|c| k::compare(c, k::Cmp::Le)),
    op("Max", Nary).fold(F::Binary(|a, b| Dim::max_of(&[a, b]))).floats(FF::Binary(f64::max)).kernel(|c| k::nary(c, k::Arith::Max, false)).fuse(Fuse::Max),
    op("Mean", Nary).kernel(|c| k::nary(c, k::Arith::Add, true)),
    op("Min", Nary).fold(F::Binary(|a, b| Dim::min_of(&[a, b]))).floats(FF::Binary(f64::min)).kernel(|c| k::nary(c, k::Arith::Min, false)).fuse(Fuse::Min),
    op("Mod", Binary).fold(F::Binary(Dim::modulo)).kernel(k::modulo).check(r::float_mod),
    op("Mul", Binary).fold(F::Binary(Dim::mul)).floats(FF::Binary(|a, b| a * b)).ratio(R::Mul).kernel(|c| k::arith(c, k::Arith::Mul)).fuse(Fuse::Mul),
    op("Or", Compare).fold(F::Binary(fold::or)).kernel(|c| k::logical(c, |p, q| p | q)),
    op("PRelu", PRelu).kernel(k::prelu),
    op("Pow", Binary).fold(F::Binary(fold::pow)).floats(FF::Binary(f64::powf)).kernel(k::pow_op),
    op("Sub", Binary).fold(F::Binary(Dim::sub)).floats(FF::Binary(|a, b| a - b)).ratio(R::Sub).kernel(|c| k::arith(c, k::Arith::Sub)).fuse(Fuse::Sub),
    op("Sum", Nary).floats(FF::Binary(|a, b| a + b)).kernel(|c| k::nary(c, k::Arith::Add, false)).fuse(Fuse::Sum),
    op("Where", Where).fold(F::Where).kernel(k::where_op).fuse(Fuse::Where),
    op("Xor", Compare).kernel(|c| k::logical(c, |p, q| p ^ q)),
    // Shapes, plumbing and math the executor runs.
    op("Abs", Unary).fold(F::Unary(fold::abs)).floats(FF::Unary(f64::abs)).kernel(|c| k::num_unary(c, k::NumUnary::Abs)),
    op("Acos", Unary).kernel(|c| k::unary_float(c, f64::acos)),
    op("Acosh", Unary).kernel(|c| k::unary_float(c, f64::acosh)),
    op("Asin", Unary).kernel(|c| k::unary_float(c, f64::asin)),
    op("Asinh", Unary).kernel(|c| k::unary_float(c, f64::asinh)),
    op("Atan", Unary).kernel(|c| k::unary_float(c, f64::atan)),
    op("Atanh", Unary).kernel(|c| k::unary_float(c, f64::atanh)),
    custom("Cast", r::cast).kernel(k::cast),
    custom("CastLike", r::cast_like).kernel(k::cast_like),
    op("Ceil", Unary).floats(FF::Unary(f64::ceil)).ratio(R::Ceil).kernel(|c| k::unary_float(c, f64::ceil)),
    custom("Concat", r::concat).kernel(s::concat),
    custom("Constant", r::constant).kernel(s::constant),
    custom("ConstantOfShape", r::constant_of_shape).kernel(s::constant_of_shape),
    op("Cos", Unary).kernel(|c| k::unary_float(c, f64::cos)),
    op("Cosh", Unary).kernel(|c| k::unary_float(c, f64::cosh)),
    op("Exp", Unary).kernel(|c| k::unary_float(c, f64::exp)),
    custom("Flatten", r::flatten).kernel(s::flatten).moves(&[0]),
    op("Floor", Unary).floats(FF::Unary(f64::floor)).ratio(R::Floor).kernel(|c| k::unary_float(c, f64::floor)),
    custom("Gather", r::gather).kernel(s::gather).moves(&[0]),
    custom("Gemm", r::gemm).kernel(s::gemm),
    custom("Identity", r::identity).kernel(s::identity).moves(&[0]),
    op("IsNaN", Predicate).kernel(k::is_nan),
    op("LeakyRelu", Unary).kernel(k::leaky_relu),
    op("Log", Unary).kernel(|c| k::unary_float(c, f64::ln)),
    op("Neg", Unary).fold(F::Unary(fold::neg)).floats(FF::Unary(|a| -a)).kernel(|c| k::num_unary(c, k::NumUnary::Neg)),
    op("Not", Predicate).fold(F::Unary(fold::not)).kernel(k::not),
    custom("Range", r::range).kernel(s::range),
    op("Reciprocal", Unary).floats(FF::Unary(|x| 1.0 / x)).kernel(|c| k::unary_float(c, |x| 1.0 / x)),
    op("Relu", Unary).floats(FF::Unary(|a| a.max(0.0))).kernel(|c| k::num_unary(c, k::NumUnary::Relu)),
    custom("Reshape", r::reshape).kernel(s::reshape).moves(&[0]),
    op("Round", Unary).floats(FF::Unary(f64::round_ties_even)).kernel(|c| k::unary_float(c, f64::round_ties_even)),
    custom("Shape", r::shape).kernel(s::shape_op),
    op("Sigmoid", Unary).kernel(|c| k::unary_float(c, |x| 1.0 / (1.0 + (-x).exp()))),
    op("Sign", Unary).kernel(|c| k::num_unary(c, k::NumUnary::Sign)),
    op("Sin", Unary).kernel(|c| k::unary_float(c, f64::sin)),
    op("Sinh", Unary).kernel(|c| k::unary_float(c, f64::sinh)),
    custom("Size", r::size).kernel(s::size),
    custom("Slice", r::slice).kernel(s::slice).moves(&[0]),
    op("Softplus", Unary).kernel(|c| k::unary_float(c, |x| x.exp().ln_1p())),
    op("Softsign", Unary).kernel(|c| k::unary_float(c, |x| x / (1.0 + x.abs()))),
    op("Sqrt", Unary).floats(FF::Unary(f64::sqrt)).kernel(|c| k::unary_float(c, f64::sqrt)),
    custom("Squeeze", r::squeeze).kernel(s::squeeze).moves(&[0]),
    op("Tan", Unary).kernel(|c| k::unary_float(c, f64::tan)),
    op("Tanh", Unary).kernel(|c| k::unary_float(c, f64::tanh)),
    custom("Tile", r::tile).kernel(s::tile).moves(&[0]),
    custom("Unsqueeze", r::unsqueeze).kernel(s::unsqueeze).moves(&[0]),
    // Inference only.
    custom("AffineGrid", r::affine_grid),
    custom("ArgMax", r::arg_reduce),
    custom("ArgMin", r::arg_reduce),
    custom("Attention", r::attention),
    custom("AveragePool", r::pool),
    custom("BatchNormalization", r::batch_norm),
    custom("Bernoulli", r::random_like),
    custom("BitCast", r::bit_cast),
    op("BitwiseNot", Unary),
    custom("BlackmanWindow", r::window),
    custom("CausalConvWithState", r::causal_conv),
    op("Celu", Unary),
    custom("CenterCropPad", r::center_crop_pad),
    custom("Clip", r::clip),
    custom("Col2Im", r::col2im),
    custom("Compress", r::compress).moves(&[0]),
    custom("ConcatFromSequence", r::concat_from_sequence),
    custom("Conv", r::conv),
    custom("ConvInteger", r::conv),
    custom("ConvTranspose", r::conv_transpose),
    custom("CumProd", r::cum_sum),
    custom("CumSum", r::cum_sum),
    custom("DFT", r::dft),
    custom("DeformConv", r::conv),
    custom("DepthToSpace", r::space_depth),
    custom("DequantizeLinear", r::dequantize),
    custom("Det", r::det),
    custom("Dropout", r::dropout),
    custom("DynamicQuantizeLinear", r::dynamic_quantize),
    custom("Einsum", r::einsum),
    op("Elu", Unary),
    op("Erf", Unary),
    custom("EyeLike", r::eye_like),
    custom("GRU", r::rnn),
    custom("GatherElements", r::gather_elements).moves(&[0]),
    custom("GatherND", r::gather_nd).moves(&[0]),
    op("Gelu", Unary),
    custom("GlobalAveragePool", r::global_pool),
    custom("GlobalLpPool", r::global_pool),
    custom("GlobalMaxPool", r::global_pool),
    custom("GridSample", r::grid_sample),
    custom("GroupNormalization", r::group_norm),
    custom("HammingWindow", r::window),
    custom("HannWindow", r::window),
    op("HardSigmoid", Unary),
    op("HardSwish", Unary),
    custom("Hardmax", r::along_axis),
    custom("If", r::if_cond),
    custom("ImageDecoder", r::image_decoder),
    custom("InstanceNormalization", r::instance_norm),
    op("IsInf", Predicate),
    custom("LRN", r::lrn),
    custom("LSTM", r::rnn),
    custom("LayerNormalization", r::layer_norm),
    custom("LinearAttention", r::linear_attention),
    custom("LogSoftmax", r::along_axis),
    custom("Loop", r::loop_outputs),
    custom("LpNormalization", r::along_axis),
    custom("LpPool", r::pool),
    custom("MatMul", r::matmul),
    custom("MatMulInteger", r::matmul),
    custom("MaxPool", r::pool),
    custom("MaxRoiPool", r::max_roi_pool),
    custom("MaxUnpool", r::max_unpool),
    custom("MeanVarianceNormalization", r::mean_variance_norm),
    custom("MelWeightMatrix", r::mel_weight_matrix),
    op("Mish", Unary),
    custom("Multinomial", r::multinomial),
    custom("NegativeLogLikelihoodLoss", r::nll_loss),
    custom("NonMaxSuppression", r::nms),
    custom("NonZero", r::non_zero),
    custom("OneHot", r::one_hot),
    custom("Optional", r::optional),
    custom("OptionalGetElement", r::optional_get_element),
    custom("OptionalHasElement", r::optional_has_element),
    custom("Pad", r::pad).moves(&[0, 2]),
    custom("QLinearConv", r::conv),
    custom("QLinearMatMul", r::matmul),
    custom("QuantizeLinear", r::quantize),
    custom("RMSNormalization", r::layer_norm),
    custom("RNN", r::rnn),
    custom("RandomNormal", r::random),
    custom("RandomNormalLike", r::random_like),
    custom("RandomUniform", r::random),
    custom("RandomUniformLike", r::random_like),
    custom("ReduceL1", r::reduce),
    custom("ReduceL2", r::reduce),
    custom("ReduceLogSum", r::reduce),
    custom("ReduceLogSumExp", r::reduce),
    custom("ReduceMax", r::reduce),
    custom("ReduceMean", r::reduce),
    custom("ReduceMin", r::reduce),
    custom("ReduceProd", r::reduce),
    custom("ReduceSum", r::reduce),
    custom("ReduceSumSquare", r::reduce),
    custom("RegexFullMatch", r::regex_full_match),
    custom("Resize", r::resize),
    custom("ReverseSequence", r::reverse_sequence),
    custom("RoiAlign", r::roi_align),
    custom("RotaryEmbedding", r::rotary_embedding),
    custom("STFT", r::stft),
    custom("Scan", r::scan_outputs),
    custom("Scatter", r::scatter_elements),
    custom("ScatterElements", r::scatter_elements),
    custom("ScatterND", r::scatter_nd),
    op("Selu", Unary),
    custom("SequenceAt", r::sequence_at),
    custom("SequenceConstruct", r::sequence_construct),
    custom("SequenceEmpty", r::sequence_empty),
    custom("SequenceErase", r::sequence_same),
    custom("SequenceInsert", r::sequence_same),
    custom("SequenceLength", r::sequence_length),
    custom("SequenceMap", r::unknown_outputs),
    op("Shrink", Unary),
    custom("Softmax", r::along_axis),
    custom("SoftmaxCrossEntropyLoss", r::sce_loss),
    custom("SpaceToDepth", r::space_depth),
    custom("Split", r::split),
    custom("SplitToSequence", r::split_to_sequence),
    custom("StringConcat", r::string_concat),
    custom("StringNormalizer", r::string_normalizer),
    custom("StringSplit", r::string_split),
    op("SwiGLU", Equal),
    op("Swish", Unary),
    custom("TensorScatter", r::tensor_scatter),
    custom("TfIdfVectorizer", r::tfidf),
    op("ThresholdedRelu", Unary),
    custom("TopK", r::topk),
    custom("Transpose", r::transpose).moves(&[0]),
    custom("Trilu", r::trilu),
    custom("Unique", r::unique),
    custom("Upsample", r::resize),
    custom("ArrayFeatureExtractor", r::array_feature_extractor).domain("ai.onnx.ml"),
    op("Binarizer", Unary).domain("ai.onnx.ml"),
    custom("CastMap", r::unknown_outputs).domain("ai.onnx.ml"),
    custom("CategoryMapper", r::category_mapper).domain("ai.onnx.ml"),
    custom("DictVectorizer", r::unknown_outputs).domain("ai.onnx.ml"),
    custom("FeatureVectorizer", r::feature_vectorizer).domain("ai.onnx.ml"),
    op("Imputer", Unary).domain("ai.onnx.ml"),
    custom("LabelEncoder", r::label_encoder).domain("ai.onnx.ml"),
    custom("LinearClassifier", r::ml_classifier).domain("ai.onnx.ml"),
    custom("LinearRegressor", r::ml_regressor).domain("ai.onnx.ml"),
    custom("Normalizer", r::ml_float_same).domain("ai.onnx.ml"),
    custom("OneHotEncoder", r::ml_one_hot_encoder).domain("ai.onnx.ml"),
    custom("SVMClassifier", r::ml_classifier).domain("ai.onnx.ml"),
    custom("SVMRegressor", r::ml_regressor).domain("ai.onnx.ml"),
    custom("Scaler", r::ml_float_same).domain("ai.onnx.ml"),
    custom("TreeEnsemble", r::tree_ensemble).domain("ai.onnx.ml"),
    custom("TreeEnsembleClassifier", r::ml_classifier).domain("ai.onnx.ml"),
    custom("TreeEnsembleRegressor", r::ml_regressor).domain("ai.onnx.ml"),
    custom("ZipMap", r::zip_map).domain("ai.onnx.ml"),
    custom("FlexAttention", r::flex_attention).domain("ai.onnx.preview"),
    custom("Adagrad", r::optimizer).domain("ai.onnx.preview.training"),
    custom("Adam", r::optimizer).domain("ai.onnx.preview.training"),
    custom("Gradient", r::unknown_outputs).domain("ai.onnx.preview.training"),
    custom("Momentum", r::optimizer).domain("ai.onnx.preview.training"),
];

const AUTO_PAD: &[&str] = &["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", ""];
const DIRECTION: &[&str] = &["forward", "reverse", "bidirectional"];
const BLOCKS: &[&str] = &["DCR", "CRD"];
const ROUND: &[&str] = &["up", "down", "nearest"];
const TRANSFORM: &[&str] = &["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"];
const AGGREGATE: &[&str] = &["AVERAGE", "SUM", "MIN", "MAX"];
const NODE_MODES: &[&str] = &["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "LEAF"];
const KERNELS: &[&str] = &["LINEAR", "POLY", "RBF", "SIGMOID"];
const ML: &str = "ai.onnx.ml";

/// The values a string attribute (or each string of a list) takes: (domain, op, attribute,
/// the opset version from which the list holds, the list). A value outside it is an error,
/// where onnxruntime refuses it too; where it is looser than the spec's list, its list is the
/// one here (an empty `auto_pad`, Pad's `wrap` before opset 19, Resize 10's `cubic`). Not
/// listed: attributes onnxruntime never validates (a Scatter's or loss's `reduction`,
/// CastLike's `round_mode`, though Cast's is checked), and those the rules check themselves
/// (Resize's `nearest_mode`, Einsum's equation).
#[rustfmt::skip]
pub static CHOICES: &[(&str, &str, &str, i64, &[&str])] = &[
    ("", "AveragePool", "auto_pad", 1, AUTO_PAD),
    ("", "BitShift", "direction", 11, &["LEFT", "RIGHT"]),
    ("", "Cast", "round_mode", 24, ROUND),
    ("", "Conv", "auto_pad", 1, AUTO_PAD),
    ("", "ConvInteger", "auto_pad", 10, AUTO_PAD),
    ("", "ConvTranspose", "auto_pad", 1, AUTO_PAD),
    ("", "DepthToSpace", "mode", 11, BLOCKS),
    ("", "GRU", "direction", 1, DIRECTION),
    ("", "Gelu", "approximate", 20, &["none", "tanh"]),
    ("", "GridSample", "mode", 16, &["bilinear", "nearest", "bicubic"]),
    ("", "GridSample", "mode", 20, &["linear", "nearest", "cubic"]),
    ("", "GridSample", "padding_mode", 16, &["zeros", "border", "reflection"]),
    ("", "LSTM", "direction", 1, DIRECTION),
    ("", "LpPool", "auto_pad", 1, AUTO_PAD),
    ("", "MaxPool", "auto_pad", 1, AUTO_PAD),
    ("", "Pad", "mode", 1, &["constant", "reflect", "edge", "wrap"]),
    ("", "QLinearConv", "auto_pad", 10, AUTO_PAD),
    ("", "RNN", "direction", 1, DIRECTION),
    ("", "Resize", "coordinate_transformation_mode", 11, &["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
        "align_corners", "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"]),
    ("", "Resize", "keep_aspect_ratio_policy", 18, &["stretch", "not_larger", "not_smaller"]),
    ("", "Resize", "mode", 10, &["nearest", "linear", "cubic"]),
    ("", "RoiAlign", "mode", 10, &["avg", "max"]),
    ("", "SpaceToDepth", "mode", 28, BLOCKS),
    ("", "StringNormalizer", "case_change_action", 10, &["LOWER", "UPPER", "NONE"]),
    ("", "TfIdfVectorizer", "mode", 9, &["TF", "IDF", "TFIDF"]),
    ("", "Upsample", "mode", 7, &["nearest", "linear"]),
    (ML, "LinearClassifier", "post_transform", 1, TRANSFORM),
    (ML, "LinearRegressor", "post_transform", 1, TRANSFORM),
    (ML, "Normalizer", "norm", 1, &["MAX", "L1", "L2"]),
    (ML, "SVMClassifier", "kernel_type", 1, KERNELS),
    (ML, "SVMClassifier", "post_transform", 1, TRANSFORM),
    (ML, "SVMRegressor", "kernel_type", 1, KERNELS),
    (ML, "SVMRegressor", "post_transform", 1, TRANSFORM),
    (ML, "TreeEnsembleClassifier", "nodes_modes", 1, NODE_MODES),
    (ML, "TreeEnsembleClassifier", "post_transform", 1, TRANSFORM),
    (ML, "TreeEnsembleRegressor", "aggregate_function", 1, AGGREGATE),
    (ML, "TreeEnsembleRegressor", "nodes_modes", 1, NODE_MODES),
    (ML, "TreeEnsembleRegressor", "post_transform", 1, TRANSFORM),
    (MS, "DynamicQuantizeLSTM", "direction", 1, DIRECTION),
    (MS, "FusedConv", "auto_pad", 1, AUTO_PAD),
    (MS, "GatedDeltaNet", "beta_activation", 1, &["none", "sigmoid"]),
    (MS, "GridSample", "mode", 1, &["bilinear", "nearest", "bicubic"]),
    (MS, "GridSample", "padding_mode", 1, &["zeros", "border", "reflection"]),
    (MS, "MaxpoolWithMask", "auto_pad", 1, AUTO_PAD),
    (MS, "NhwcMaxPool", "auto_pad", 1, AUTO_PAD),
    (MS, "Pad", "mode", 1, &["constant", "reflect", "edge", "wrap"]),
    (MS, "QLinearAveragePool", "auto_pad", 1, AUTO_PAD),
    (MS, "QLinearConv", "auto_pad", 1, AUTO_PAD),
    (NCHWC, "AveragePool", "auto_pad", 1, AUTO_PAD),
    (NCHWC, "Conv", "auto_pad", 1, AUTO_PAD),
    (NCHWC, "MaxPool", "auto_pad", 1, AUTO_PAD),
    (NCHWC, "Upsample", "coordinate_transformation_mode", 1, &["asymmetric", "align_corners", "half_pixel"]),
    (NCHWC, "Upsample", "mode", 1, &["nearest", "linear"]),
];

const FLAG: &[i64] = &[0, 1];
const MS: &str = "com.microsoft";
const NCHWC: &str = "com.microsoft.nchwc";

/// The same for int attributes onnxruntime refuses other values of: flags it reads as 0 or 1
/// only, TreeEnsemble's enumerations, the model types its generation ops run (GPT; T5
/// and Whisper for BeamSearch), MatMulBnb4's quantizations (FP4, NF4).
#[rustfmt::skip]
pub static INT_CHOICES: &[(&str, &str, &str, i64, &[i64])] = &[
    ("", "CumProd", "exclusive", 26, FLAG),
    ("", "CumProd", "reverse", 26, FLAG),
    ("", "CumSum", "exclusive", 11, FLAG),
    ("", "CumSum", "reverse", 11, FLAG),
    ("", "MaxPool", "storage_order", 8, FLAG),
    ("", "Mod", "fmod", 10, FLAG),
    (MS, "BeamSearch", "model_type", 1, &[0, 1, 2]),
    (MS, "MatMulBnb4", "quant_type", 1, &[0, 1]),
    (MS, "GreedySearch", "model_type", 1, &[0]),
    (MS, "Sampling", "model_type", 1, &[0]),
    (ML, "TreeEnsemble", "aggregate_function", 5, &[0, 1, 2, 3]),
    (ML, "TreeEnsemble", "post_transform", 5, &[0, 1, 2, 3, 4]),
];

/// The least value of int attributes onnxruntime's own kernels check: head counts ("num_heads >
/// 0"), MoE's k, GatedDeltaNet's chunk size, the contrib RotaryEmbedding's sizes.
#[rustfmt::skip]
pub static INT_LEAST: &[(&str, &str, &str, i64, i64)] = &[
    (MS, "Attention", "num_heads", 1, 1),
    (MS, "DecoderMaskedMultiHeadAttention", "num_heads", 1, 1),
    (MS, "GatedDeltaNet", "chunk_size", 1, 1),
    (MS, "GroupQueryAttention", "kv_num_heads", 1, 1),
    (MS, "GroupQueryAttention", "num_heads", 1, 1),
    (MS, "MoE", "k", 1, 1),
    (MS, "MultiHeadAttention", "num_heads", 1, 1),
    (MS, "NGramRepeatBlock", "ngram_size", 1, 1),
    (MS, "PackedMultiHeadAttention", "num_heads", 1, 1),
    (MS, "RotaryEmbedding", "num_heads", 1, 0),
    (MS, "RotaryEmbedding", "rotary_embedding_dim", 1, 0),
    (MS, "Sampling", "min_tokens_to_keep", 1, 0),
];

/// Inputs onnxruntime's own ops need though their schemas mark them optional: (domain, op,
/// input, why). Zero points its QLinear type inference reads ("Input data type does not match
/// the expected data type"), output zero points without which its kernels abort, and
/// BeamSearch's min_length ("Node input max_length is required") and length_penalty ("Input 5
/// expected to have type but instead is null").
#[rustfmt::skip]
pub static NEEDED_INPUTS: &[(&str, &str, usize, &str)] = &[
    (MS, "BeamSearch", 2, "onnxruntime's kernel reads"),
    (MS, "BeamSearch", 5, INFERENCE_READS),
    (MS, "QLinearAdd", 2, INFERENCE_READS),
    (MS, "QLinearAdd", 5, INFERENCE_READS),
    (MS, "QLinearAveragePool", 2, INFERENCE_READS),
    (MS, "QLinearLeakyRelu", 4, "onnxruntime crashes without"),
    (MS, "QLinearMul", 2, INFERENCE_READS),
    (MS, "QLinearMul", 5, INFERENCE_READS),
    (MS, "QLinearReduceMean", 2, INFERENCE_READS),
    (MS, "QLinearSigmoid", 4, "onnxruntime crashes without"),
];

const INFERENCE_READS: &str = "onnxruntime's type inference reads";

/// The first input of `node` that `NEEDED_INPUTS` lists and the node leaves empty, in words.
pub fn needed_input(node: &crate::ir::Node) -> Option<String> {
    let domain = crate::ir::norm_domain(&node.domain);
    let mut rows = NEEDED_INPUTS.iter().filter(|(d, op, ..)| (*d, *op) == (domain, node.op_type.as_str()));
    let (_, _, k, why) = rows.find(|(_, _, k, _)| node.inputs.get(*k).is_none_or(Option::is_none))?;
    Some(format!("leaves input {k} empty, which {why}"))
}

/// The newest row's value at `opset` for each attribute that `rows` give `node`'s op.
fn lists<V: Copy>(
    rows: &'static [(&str, &str, &str, i64, V)],
    node: &crate::ir::Node,
    opset: i64,
) -> Vec<(&'static str, V)> {
    let domain = crate::ir::norm_domain(&node.domain);
    let mut out: Vec<(&'static str, V)> = Vec::new();
    // Rows are oldest first: a later one replaces an earlier list.
    for (_, _, attr, _, list) in
        rows.iter().filter(|(d, op, _, since, _)| (*d, *op) == (domain, node.op_type.as_str()) && *since <= opset)
    {
        out.retain(|(a, _)| a != attr);
        out.push((attr, *list));
    }
    out
}

/// A float attribute's values onnxruntime's kernel takes, with those values in words.
pub type FloatRange = (fn(f32) -> bool, &'static str);

/// The float attributes of onnxruntime's own ops that its kernels bound: epsilons (`epsilon_ >=
/// 0`, which NaN fails too), the recurrent clip (`clip_ > 0.f`) and GatedDeltaNet's gate bound
/// (finite and below 0). The bounds onnxruntime adds to the standard ops' spec are
/// `runtime-differs` warnings in their rules.
#[rustfmt::skip]
pub static FLOAT_IN: &[(&str, &str, &str, i64, FloatRange)] = &[
    (MS, "DynamicQuantizeLSTM", "clip", 1, (|v| v > 0.0, "above 0")),
    (MS, "EmbedLayerNormalization", "epsilon", 1, (|e| e >= 0.0, "0 or more")),
    (MS, "GatedDeltaNet", "gate_lower_bound", 1, (|g| g.is_finite() && g < 0.0, "a finite value below 0")),
    (MS, "QEmbedLayerNormalization", "epsilon", 1, (|e| e >= 0.0, "0 or more")),
    (MS, "SkipLayerNormalization", "epsilon", 1, (|e| e >= 0.0, "0 or more")),
    (MS, "SkipSimplifiedLayerNormalization", "epsilon", 1, (|e| e >= 0.0, "0 or more")),
];

/// The first attribute of `node` (or element of a list) whose value `CHOICES` or
/// `INT_CHOICES` does not list at `opset`, below its `INT_LEAST` or outside its `FLOAT_IN`:
/// (attribute, value, the values taken), in words.
pub fn bad_choice(node: &crate::ir::Node, opset: i64) -> Option<(&'static str, String, Vec<String>)> {
    use crate::ir::AttrValue;
    // The ops the tables name, so that every other node (nearly all) is passed over at once.
    static NAMED: std::sync::OnceLock<std::collections::HashSet<&'static str>> = std::sync::OnceLock::new();
    let named = NAMED.get_or_init(|| {
        let ops = CHOICES.iter().map(|r| r.1).chain(INT_CHOICES.iter().map(|r| r.1));
        ops.chain(INT_LEAST.iter().map(|r| r.1)).chain(FLOAT_IN.iter().map(|r| r.1)).collect()
    });
    if !named.contains(node.op_type.as_str()) {
        return None;
    }
    let words = |list: &[&str]| list.iter().map(|v| v.to_string()).collect();
    let strings = lists(CHOICES, node, opset).into_iter().find_map(|(attr, list)| {
        let values = match node.attr(attr)? {
            AttrValue::String(s) => std::slice::from_ref(s),
            AttrValue::Strings(v) => v.as_slice(),
            _ => return None,
        };
        let bad = values.iter().map(|v| String::from_utf8_lossy(v)).find(|v| !list.contains(&v.as_ref()))?;
        Some((attr, bad.into_owned(), words(list)))
    });
    let ints = || {
        lists(INT_CHOICES, node, opset).into_iter().find_map(|(attr, list)| {
            let v = node.attr_int(attr).filter(|v| !list.contains(v))?;
            Some((attr, v.to_string(), list.iter().map(i64::to_string).collect()))
        })
    };
    let least = || {
        lists(INT_LEAST, node, opset).into_iter().find_map(|(attr, min)| {
            let v = node.attr_int(attr).filter(|v| *v < min)?;
            Some((attr, v.to_string(), vec![format!("{min} or more")]))
        })
    };
    let floats = || {
        lists(FLOAT_IN, node, opset).into_iter().find_map(|(attr, (takes, words))| {
            let v = node.attr_float(attr).filter(|v| !takes(*v))?;
            Some((attr, v.to_string(), vec![words.to_string()]))
        })
    };
    strings.or_else(ints).or_else(least).or_else(floats)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn the_registry_names_every_schema_op_once() {
        let schemas: HashSet<_> = super::super::table::TABLE.iter().map(|s| (s.domain, s.op)).collect();
        let mut rows = HashSet::new();
        for m in super::OPS {
            assert!(rows.insert((m.domain, m.op)), "{}::{} has two rows", m.domain, m.op);
            assert!(schemas.contains(&(m.domain, m.op)), "{}::{} has no schema", m.domain, m.op);
            // The executor, fusion and float folds rely on this instead of checking domains.
            let default_only = m.kernel.is_some() || m.fuse.is_some() || !matches!(m.floats, super::FF::None);
            assert!(
                m.domain.is_empty() || !default_only,
                "{}::{}: kernels, fusion and float folds are for the default domain",
                m.domain,
                m.op
            );
        }
        for s in &schemas {
            assert!(rows.contains(s), "{}::{} has no row in the registry", s.0, s.1);
        }
        // An op moves only inputs it takes (at its newest version: Pad's value was an
        // attribute before opset 11).
        for m in super::OPS.iter().filter(|m| !m.moves.is_empty()) {
            let inputs = super::super::table::TABLE.iter().filter(|s| (s.domain, s.op) == (m.domain, m.op));
            let most = inputs.map(|s| s.arity.max_inputs).max().unwrap_or(0);
            let past = m.moves.iter().find(|i| **i as u32 >= most);
            assert!(past.is_none(), "{}::{} moves input {past:?}, past its {most} inputs", m.domain, m.op);
        }
    }

    #[test]
    fn the_schemas_are_sorted_by_op_and_version() {
        let keys: Vec<_> = super::super::table::TABLE.iter().map(|s| (s.domain, s.op, s.since)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "lookup takes each op's rows as one run, oldest first");
    }

    #[test]
    fn families_give_each_version_its_rule() {
        use super::super::ShapeRule as S;
        let at = |op: &str, v: i64| super::super::lookup("", op, v).map(|d| format!("{:?}", d.shape));
        assert_eq!(at("Add", 6), Some(format!("{:?}", S::Legacy)));
        assert_eq!(at("Add", 7), Some(format!("{:?}", S::Multi)));
        assert_eq!(at("Sum", 7), Some(format!("{:?}", S::Equal("at this opset"))));
        assert_eq!(at("Sum", 8), Some(format!("{:?}", S::Multi)));
        assert_eq!(at("PRelu", 6), Some(format!("{:?}", S::SameAs(0))));
        assert_eq!(at("PRelu", 9), Some(format!("{:?}", S::Uni { to: 0, from: 1 })));
        assert_eq!(at("GreaterOrEqual", 6), None, "GreaterOrEqual came at opset 12");
    }
}

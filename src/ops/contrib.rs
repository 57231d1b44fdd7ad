//! Shape rules for onnxruntime's `com.microsoft` ops that do not fit the vocabulary of rules
//! declared as data (`rules/com.microsoft.json` holds those that do). Facts from
//! onnxruntime's schemas (`onnxruntime/core/graph/contrib_ops/*_defs.cc`) and what
//! onnxruntime 1.32 infers and checks at run time.

use super::rules::{
    self, axis_in, expect_count, expect_one_value, expect_rank, expect_shape, outs as out, ty as tensor,
};
use super::{Ctx, Out, RuleError};
use crate::diag::Code;
use crate::dtype::DType;
use crate::shape::{render, uni, Assumption, Dim, Shape, Type};

type R = Result<Out, RuleError>;
type Rule = fn(&Ctx) -> R;

const RULES: &[(&str, Rule)] = &[
    ("Attention", attention),
    ("QAttention", attention),
    ("MultiHeadAttention", multi_head_attention),
    ("GroupQueryAttention", group_query_attention),
    ("FusedMatMul", fused_matmul),
    ("FusedConv", |c| conv_activation(c).and_then(|()| rules::conv(c))),
    // With `channels_last`, NHWC input and output; the weight stays [M, C/group, k...].
    ("QLinearConv", |c| layout(c, rules::conv)),
    ("QGemm", qgemm),
    ("QLinearConcat", qlinear_concat),
    ("QLinearWhere", qlinear_where),
    ("EmbedLayerNormalization", embed_layer_norm),
    ("QEmbedLayerNormalization", embed_layer_norm),
    ("QLinearGlobalAveragePool", qlinear_global_average_pool),
    ("QuantizeLinear", quantize_linear),
    ("DynamicQuantizeLSTM", dynamic_quantize_lstm),
    ("BiasSplitGelu", bias_split_gelu),
    ("RotaryEmbedding", rotary_embedding),
    ("DynamicQuantizeMatMul", matmul_to_float),
    ("MatMulIntegerToFloat", matmul_to_float),
    ("MatMulNBits", matmul_nbits),
    ("QLinearSigmoid", qlinear_lookup),
    ("QLinearLeakyRelu", qlinear_lookup),
    ("QLinearAveragePool", qlinear_average_pool),
    ("NhwcMaxPool", |c| channels_last(c, rules::pool)),
    ("MaxpoolWithMask", maxpool_with_mask),
    ("FusedGemm", |c| gemm_activation(c).and_then(|()| rules::gemm(&c.view(13, None, None)))),
    ("TransposeMatMul", fused_matmul),
    ("MatMulInteger16", matmul_integer16),
    ("GatherBlockQuantized", gather_block_quantized),
    ("ExpandDims", |c| rules::one_element(c, 1).and_then(|()| rules::unsqueeze(&c.view(13, None, None)))),
    ("Range", range),
    ("Pad", pad),
    ("Unique", unique),
    ("GridSample", grid_sample),
    ("CDist", cdist),
    ("CropAndResize", crop_and_resize),
    ("GatherND", |c| rules::gather_nd(&c.view(11, None, None))),
    ("UnfoldTensor", unfold_tensor),
    ("MurmurHash3", murmur_hash3),
    ("MoE", moe),
    ("QMoE", moe),
    ("DecoderMaskedMultiHeadAttention", decoder_masked_mha),
    ("WordConvEmbedding", word_conv_embedding),
    ("MatMulBnb4", matmul_bnb4),
    ("BeamSearch", |c| generation(c, &BEAM)),
    ("WhisperBeamSearch", |c| generation(c, &BEAM)),
    ("GreedySearch", |c| generation(c, &GREEDY)),
    ("Sampling", |c| generation(c, &SAMPLING)),
    // The standard ops of opset 27 widened with onnxruntime's attributes.
    ("CausalConvWithState", rules::causal_conv),
    ("LinearAttention", rules::linear_attention),
    ("LinearAttentionGate", linear_attention_gate),
    ("GatedRMSNorm", gated_rms_norm),
    ("BranchwiseRMSNorm", branchwise_rms_norm),
    ("Tokenizer", tokenizer),
    ("GatedDeltaNet", gated_delta_net),
    ("GatedAdd", gated_add),
    ("DynamicTimeWarping", dynamic_time_warping),
];

/// onnxruntime's NCHWc ops (`com.microsoft.nchwc`), which its optimizer writes at the highest
/// level (`ORT_ENABLE_ALL`) on x86: channels in blocks of 8 or 16, the tensors' shapes NCHW
/// with the channel count rounded up to the block.
const NCHWC: &[(&str, Rule)] = &[
    ("Conv", |c| conv_activation(c).and_then(|()| nchwc_conv(c))),
    ("MaxPool", |c| blocked(c, nchwc_pool)),
    ("AveragePool", |c| blocked(c, nchwc_pool)),
    ("GlobalMaxPool", |c| blocked(c, rules::global_pool)),
    ("GlobalAveragePool", |c| blocked(c, rules::global_pool)),
    ("ReorderInput", reorder_input),
    ("ReorderOutput", reorder_output),
    ("Upsample", |c| blocked(c, nchwc_upsample)),
];

/// onnx's experimental ops of opsets 1 to 9, which onnx dropped and onnxruntime still runs
/// there (old converters wrote them: ImageScaler in the model zoo's Tiny YOLOv2). GRUUnit and
/// GivenTensorFill, which onnxruntime 1.32 cannot run, are left unknown.
const EXPERIMENTAL: &[(&str, Rule)] = &[
    ("ImageScaler", image_scaler),
    ("Crop", crop),
    ("DynamicSlice", |c| experimental(c).and_then(|()| rules::slice(&c.view(10, None, None)))),
    ("Scale", like_input),
    ("ScaledTanh", alpha_beta),
    ("ParametricSoftplus", alpha_beta),
    ("Affine", like_input),
];

/// The node's outputs under the rule here; `None` when there is none.
pub fn contrib(c: &Ctx) -> Option<R> {
    let table = match crate::ir::norm_domain(&c.node.domain) {
        "com.microsoft" => RULES,
        "com.microsoft.nchwc" => NCHWC,
        "" => EXPERIMENTAL,
        _ => return None,
    };
    table.iter().find(|(name, _)| *name == c.node.op_type).map(|(_, rule)| rule(c))
}

/// An op with a `channels_last` attribute: the NCHW rule, or with it set, `channels_last`.
fn layout(c: &Ctx, rule: Rule) -> R {
    if c.node.attr_int("channels_last").unwrap_or(0) == 0 {
        return rule(c);
    }
    channels_last(c, rule)
}

/// An NHWC op (`channels_last`) by the NCHW rule: input 0's channels moved to axis 1 for the
/// rule, and output 0's (and the axes its conditions name) moved back to the end.
fn channels_last(c: &Ctx, rule: Rule) -> R {
    let Some(x) = c.shape(0).filter(|x| x.len() >= 3) else { return rule(c) };
    let mut nchw = x.to_vec();
    nchw[1..].rotate_right(1);
    let t = Type::tensor(c.dtype(0), Some(nchw));
    let mut o = rule(&c.view(c.opset, Some((0, &t)), None))?;
    if let Some(Some(Type::Tensor { shape: Some(y), .. })) = o.types.first_mut() {
        y[1..].rotate_left(1);
    }
    for (axis, _) in &mut o.assumptions {
        *axis = match *axis {
            0 => 0,
            1 => x.len() - 1,
            a => a - 1,
        };
    }
    Ok(o)
}

fn invalid<T>(c: &Ctx, msg: String) -> Result<T, RuleError> {
    Err(RuleError::Invalid(format!("{}: {msg}", c.node.op_type)))
}

/// The activations FusedGemm takes (onnxruntime's element-wise functors; others are "unknown
/// kernel type"), each with the `activation_*` attributes its functor reads ("No attribute
/// with name:'alpha'is defined").
const GEMM_ACTIVATIONS: &[(&str, &[&str])] = &[
    ("Relu", &[]),
    ("Sigmoid", &[]),
    ("Tanh", &[]),
    ("Softplus", &[]),
    ("Softsign", &[]),
    ("Celu", &["activation_alpha"]),
    ("Elu", &["activation_alpha"]),
    ("LeakyRelu", &["activation_alpha"]),
    ("ThresholdedRelu", &["activation_alpha"]),
    ("HardSigmoid", &["activation_alpha", "activation_beta"]),
    ("ParametricSoftplus", &["activation_alpha", "activation_beta"]),
    ("ScaledTanh", &["activation_alpha", "activation_beta"]),
    ("Selu", &["activation_alpha", "activation_gamma"]),
];

/// The activations FusedConv and the NCHWc Conv fuse (MLAS's), with the number of
/// `activation_params` each reads, `None` for none read.
const CONV_ACTIVATIONS: &[(&str, Option<usize>)] = &[
    ("Relu", None),
    ("Sigmoid", None),
    ("Tanh", None),
    ("HardSwish", None),
    ("LeakyRelu", Some(1)),
    ("Clip", Some(2)),
    ("HardSigmoid", Some(2)),
];

/// FusedGemm's activation, which it must have, and the attributes it reads.
fn gemm_activation(c: &Ctx) -> Result<(), RuleError> {
    let Some(act) = c.node.attr_str("activation") else { return invalid(c, "no activation is given".into()) };
    let Some((_, reads)) = GEMM_ACTIVATIONS.iter().find(|(a, _)| *a == act) else {
        return invalid(c, format!("onnxruntime fuses no activation '{act}'"));
    };
    match reads.iter().find(|a| c.node.attr(a).is_none()) {
        Some(missing) => invalid(c, format!("the {act} activation reads {missing}, which is not given")),
        None => Ok(()),
    }
}

/// FusedConv's activation, where given, and the number of parameters it reads.
fn conv_activation(c: &Ctx) -> Result<(), RuleError> {
    let Some(act) = c.node.attr_str("activation") else { return Ok(()) };
    let Some((_, reads)) = CONV_ACTIVATIONS.iter().find(|(a, _)| *a == act) else {
        return invalid(c, format!("onnxruntime fuses no activation '{act}' into a convolution"));
    };
    let given = match c.node.attr("activation_params") {
        Some(crate::ir::AttrValue::Floats(v)) => v.len(),
        _ => 0,
    };
    match reads {
        Some(n) if given != *n => invalid(c, format!("the {act} activation takes {n} activation_params, not {given}")),
        _ => Ok(()),
    }
}

/// Attention and QAttention: output [B, S, v_hidden], v_hidden from `qkv_hidden_sizes[2]` or
/// a third of the bias; `present` [2, B, N, P+S, H] from `past` (input 4, QAttention 8). The
/// type is the bias's (QAttention's input is integer).
fn attention(c: &Ctx) -> R {
    let quantized = c.node.op_type == "QAttention";
    let (mask_at, past_at) = if quantized { (5, 8) } else { (3, 4) };
    let dtype = c.dtype(2).or(c.dtype(0));
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None), tensor(dtype, None)]) };
    if x.len() != 3 {
        return invalid(c, format!("input has rank {}, not 3", x.len()));
    }
    // QAttention divides by the batch (SIGFPE on an empty one).
    if quantized && x[0] == Dim::Known(0) {
        return invalid(c, "an empty batch, which onnxruntime crashes on".into());
    }
    let v_hidden = match c.node.attr_ints("qkv_hidden_sizes") {
        Some([_, _, v]) => Dim::Known(*v),
        Some(other) => return invalid(c, format!("qkv_hidden_sizes has {} entries, not 3", other.len())),
        None => match c.shape(2).or_else(|| c.shape(1).map(|w| &w[w.len().saturating_sub(1)..])) {
            Some([b]) => match b {
                Dim::Known(n) if n % 3 != 0 => return invalid(c, format!("a bias of {n} does not split in three")),
                _ => b.div_floor(&Dim::Known(3)),
            },
            _ => Dim::Unknown,
        },
    };
    // As onnxruntime checks them: weights [input hidden, q+k+v hidden], a bias per weight
    // column, and heads that divide the query's hidden size.
    let mut checked = Out::default();
    let columns = c.shape(1).and_then(|w| w.get(1)).cloned().unwrap_or(Dim::Unknown);
    expect_shape(c, 1, &[x[2].clone(), columns.clone()], &mut checked)?;
    expect_shape(c, 2, std::slice::from_ref(&columns), &mut checked)?;
    // Q, K and V hidden sizes: the attribute's, or thirds of the weight's columns. They must be
    // in [1, INT_MAX].
    let sizes =
        c.node.attr_ints("qkv_hidden_sizes").map(<[i64]>::to_vec).or_else(|| columns.known().map(|n| vec![n / 3]));
    if let Some(h) = sizes.iter().flatten().find(|h| **h < 1) {
        return invalid(c, format!("a hidden size of {h}"));
    }
    let q_hidden = sizes.as_ref().and_then(|s| s.first().copied());
    let heads = c.node.attr_int("num_heads").unwrap_or(0);
    if let Some(h) = q_hidden.filter(|h| heads <= 0 || h % heads != 0) {
        return invalid(c, format!("num_heads {heads} does not divide the hidden size {h}"));
    }
    // QAttention's input scale and zero point hold one value, its weight's one or one per
    // column ("Input 'weight_scale' must be a scalar or a 1D tensor of size 3 * hidden_size").
    if quantized {
        expect_one_value(c, 3, &mut checked)?;
        expect_one_value(c, 6, &mut checked)?;
        for i in [4, 7] {
            rules::one_or_each(c, i, &columns, "weight column", &mut checked)?;
        }
    }
    // mask_index: [B], [2B] or [3B + 2] (end and start positions), [B, total] (or a dummy),
    // or [B, S, total] (onnxruntime: "Inputs 'mask_index' with 2D data shall have shape
    // batch_size x total_sequence_length"), of rank 1 to 4.
    let past = c.shape(past_at).filter(|p| p.len() == 5).map_or(Dim::Known(0), |p| p[3].clone());
    let total = past.add(&x[1]);
    match c.shape(mask_at) {
        Some(m) if m.is_empty() || m.len() > 4 => {
            return invalid(c, format!("a mask_index of rank {}; it takes 1 to 4", m.len()));
        }
        Some([n]) => {
            if let (Some(n), Some(b)) = (n.known(), x[0].known()) {
                let allowed = [Some(b), b.checked_mul(2), b.checked_mul(3).and_then(|x| x.checked_add(2))];
                if !allowed.contains(&Some(n)) {
                    return invalid(c, format!("a 1-D mask_index of {n} for a batch of {b}"));
                }
            }
        }
        // [1, 1] and [B, 1] are dummy masks, which onnxruntime drops.
        Some([b, Dim::Known(1)]) if b.known() == Some(1) || b == &x[0] => {}
        Some([_, _]) => expect_shape(c, mask_at, &[x[0].clone(), total], &mut checked)?,
        Some([_, _, _]) => expect_shape(c, mask_at, &[x[0].clone(), x[1].clone(), total], &mut checked)?,
        _ => {}
    }
    let output = vec![x[0].clone(), x[1].clone(), v_hidden];
    let present = c.shape(past_at).map(|p| {
        let mut p = p.to_vec();
        if p.len() == 5 && c.node.attr_int("past_present_share_buffer").unwrap_or(0) == 0 {
            p[3] = p[3].add(&x[1]);
        }
        p
    });
    checked.types = smallvec::smallvec![tensor(dtype, Some(output)), tensor(dtype, present)];
    Ok(checked)
}

/// MultiHeadAttention: output [B, S, v_hidden] (packed QKV [B, L, N, 3, H]: [B, L, N*H]);
/// `present_key`/`present_value` [B, N, P+L, H] from `past_key` (input 6).
fn multi_head_attention(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    // onnxruntime: "Input 'value' shall absent when 'key' is absent", "Expect rank of key be 5
    // for packed kv".
    match (c.has(1), c.has(2), c.shape(1).map(<[Dim]>::len)) {
        (false, true, _) => return invalid(c, "a value without a key".into()),
        (true, false, Some(r)) if r != 5 => {
            return invalid(c, format!("a key of rank {r} without a value: packed keys and values are 5-D"))
        }
        _ => {}
    }
    let Some(q) = c.shape(0) else { return out(vec![tensor(dtype, None); 3]) };
    let output = match (q.len(), c.shape(2), c.shape(1)) {
        (5, _, _) => Some(vec![q[0].clone(), q[1].clone(), q[2].mul(&q[4])]),
        (3, Some(v), _) if v.len() == 3 => Some(vec![q[0].clone(), q[1].clone(), v[2].clone()]),
        (3, Some(v), _) if v.len() == 4 => Some(vec![q[0].clone(), q[1].clone(), v[1].mul(&v[3])]),
        (3, None, Some(k)) if k.len() == 3 || k.len() == 5 => Some(q.to_vec()),
        (3, ..) => None,
        (r, _, _) => return invalid(c, format!("query has rank {r}, not 3 or 5")),
    };
    // The new keys' length: the value's (or key's) axis 1 for rank-3 inputs; the query's.
    let kv_len = match (c.shape(2), c.shape(1)) {
        (Some(v), _) if v.len() == 3 => Some(v[1].clone()),
        (_, Some(k)) if k.len() == 3 || k.len() == 5 => Some(k[1].clone()),
        _ if q.len() == 5 => Some(q[1].clone()),
        _ => None,
    };
    let present = |past: Option<&[Dim]>| {
        let (p, len) = (past?, kv_len.clone()?);
        (p.len() == 4).then(|| vec![p[0].clone(), p[1].clone(), p[2].add(&len), p[3].clone()])
    };
    // Separate 3-D query, key and value, as onnxruntime checks them: one batch, the key's
    // hidden size the query's, the value's sequence the key's.
    let mut checked = Out::default();
    // A value comes with a key of its rank, 3 or 4 (onnxruntime: "Expect rank of key and
    // value be same, and either 3 or 4").
    if let (Some(k), Some(v)) = (c.shape(1), c.shape(2)) {
        if k.len() != v.len() || !(3..=4).contains(&k.len()) {
            return invalid(c, format!("key and value have ranks {} and {}, not one of 3 or 4", k.len(), v.len()));
        }
        // 4-D, both are [B, N, L, H] ("shall have same shape").
        if k.len() == 4 {
            expect_shape(c, 2, k, &mut checked)?;
        }
    }
    // num_heads splits a 3-D query's and value's hidden sizes (onnxruntime's reshape fails
    // otherwise; DecoderMaskedMultiHeadAttention splits the query's only).
    let split = if c.node.op_type == "MultiHeadAttention" { 2 } else { 1 };
    // A hidden size of 0 kills onnxruntime 1.32 (SIGFPE) where it splits one.
    if let Some(n) = c.node.attr_int("num_heads").filter(|n| *n > 0) {
        for (i, s) in [(0, Some(q)), (2, c.shape(2))].into_iter().take(split) {
            match s.filter(|s| s.len() == 3).and_then(|s| s[2].known()) {
                Some(0) => return invalid(c, format!("input {i} has a hidden size of 0")),
                Some(h) if h % n != 0 => {
                    return invalid(c, format!("num_heads {n} does not divide input {i}'s hidden size {h}"))
                }
                _ => {}
            }
        }
    }
    if let (3, Some([b, kv, _])) = (q.len(), c.shape(1)) {
        expect_shape(c, 1, &[q[0].clone(), kv.clone(), q[2].clone()], &mut checked)?;
        if let Some(v) = c.shape(2).filter(|v| v.len() == 3) {
            expect_shape(c, 2, &[b.clone(), kv.clone(), v[2].clone()], &mut checked)?;
        }
    }
    checked.types = smallvec::smallvec![
        tensor(dtype, output),
        tensor(dtype, present(c.shape(6))),
        tensor(dtype, present(c.shape(7)))
    ];
    Ok(checked)
}

/// GroupQueryAttention: output like the query ([B, S, N*H]; packed QKV gives N*H of
/// (N + 2*N_kv)*H); `present_key`/`present_value` [B, N_kv, T, H] with T the total sequence
/// length where it is known (a constant input 6, or no past), else unknown.
fn group_query_attention(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let cache = c.dtype(3).or(dtype);
    let n = c.node.attr_int("num_heads").unwrap_or(0);
    let kv = c.node.attr_int("kv_num_heads").unwrap_or(0);
    let Some(q) = c.shape(0) else { return out(vec![tensor(dtype, None), tensor(cache, None), tensor(cache, None)]) };
    if q.len() != 3 {
        return invalid(c, format!("query has rank {}, not 3", q.len()));
    }
    let heads = kv.checked_mul(2).and_then(|k| k.checked_add(n));
    let Some(heads) = heads.filter(|_| n > 0 && kv > 0 && n % kv == 0) else {
        return invalid(c, format!("num_heads {n} is not a positive multiple of kv_num_heads {kv}"));
    };
    let (packed, sliding) = (!c.has(2), c.node.attr_int("sliding_window_cache").unwrap_or(0) == 1);
    // "sliding_window_cache=1 requires local_window_size > 0"; "Input 'past_key' and
    // 'past_value' shall be both present or both absent".
    if sliding && c.node.attr_int("local_window_size").unwrap_or(-1) <= 0 {
        return invalid(c, "sliding_window_cache without a local_window_size above 0".into());
    }
    // "sliding_window_cache=1 requires the present_key and present_value outputs".
    if sliding && !(c.asks(1) && c.asks(2)) {
        return invalid(c, "sliding_window_cache without present_key and present_value".into());
    }
    if c.has(3) != c.has(4) {
        return invalid(c, "past_key and past_value come together".into());
    }
    let hidden = if packed { q[2].mul(&Dim::Known(n)).div_floor(&Dim::Known(heads)) } else { q[2].clone() };
    let head = if packed { q[2].div_floor(&Dim::Known(heads)) } else { q[2].div_floor(&Dim::Known(n)) };
    // As onnxruntime checks them: the heads split the query's hidden size; key and value are
    // [B, S, kv heads * head] with the query's S when there is no past; past_key and past_value
    // [B, kv heads, P, head] of one P; seqlens_k one per batch, total_sequence_length one value.
    let mut checked = Out::default();
    let per = if packed { heads } else { n };
    if let Some(h) = q[2].known().filter(|h| h % per != 0) {
        return invalid(c, format!("the query's hidden size {h} does not split into {per} heads"));
    }
    if let Some(k) = c.shape(1).filter(|_| !packed) {
        if k.len() != 3 {
            return invalid(c, format!("key has rank {}, not 3", k.len()));
        }
        let seq = if c.has(3) { k[1].clone() } else { q[1].clone() };
        let want = [q[0].clone(), seq, head.mul(&Dim::Known(kv))];
        expect_shape(c, 1, &want, &mut checked)?;
        expect_shape(c, 2, &want, &mut checked)?;
    }
    if let Some(p) = c.shape(3).filter(|p| p.len() == 4) {
        let want = [q[0].clone(), Dim::Known(kv), p[2].clone(), head.clone()];
        expect_shape(c, 3, &want, &mut checked)?;
        expect_shape(c, 4, &want, &mut checked)?;
        // A sliding-window cache holds the whole window ("KV cache capacity (32) must be at
        // least local_window_size (4096)"): over a symbolic capacity, a contract's lower bound.
        let window = c.node.attr_int("local_window_size").unwrap_or(-1);
        if sliding && window > 0 {
            match &p[2] {
                Dim::Known(cap) if *cap < window => {
                    return invalid(c, format!("a sliding-window cache of {cap} positions for a window of {window}"));
                }
                Dim::Term(size) => {
                    checked.assumptions.push((2, Assumption::AtLeast { size: size.clone(), min: window }))
                }
                _ => {}
            }
        }
    }
    expect_shape(c, 5, std::slice::from_ref(&q[0]), &mut checked)?;
    expect_one_value(c, 6, &mut checked)?;
    let output = vec![q[0].clone(), q[1].clone(), hidden];
    let total = c.value(6).and_then(|v| v.first().cloned());
    // onnxruntime continues a past (a total longer than the new positions) one position at a
    // time in a batch of more than one ("batch_size must be 1 when sequence_length > 1 and past
    // context is given").
    if let (Some(b), Some(s), Some(t)) = (q[0].known(), q[1].known(), total.as_ref().and_then(Dim::known)) {
        if b > 1 && s > 1 && t > s {
            return invalid(c, format!("a batch of {b} continues a past of {} with {s} positions, not one", t - s));
        }
    }
    let present = match (c.shape(3), total) {
        (Some(p), _) if p.len() == 4 && sliding => Some(p.to_vec()),
        // onnxruntime's present holds max(past, total) positions (past + new ones, as genai's
        // graphs feed it, total_sequence_length being the mask's width).
        (Some(p), Some(t)) if p.len() == 4 => {
            Some(vec![p[0].clone(), p[1].clone(), Dim::max_of(&[&p[2], &t]), p[3].clone()])
        }
        (Some(p), _) if p.len() == 4 => Some(vec![p[0].clone(), p[1].clone(), Dim::Unknown, p[3].clone()]),
        (None, Some(t)) => Some(vec![q[0].clone(), Dim::Known(kv), t, head]),
        (None, None) => {
            let len = c.shape(1).filter(|k| k.len() == 3).map_or_else(|| q[1].clone(), |k| k[1].clone());
            Some(vec![q[0].clone(), Dim::Known(kv), len, head])
        }
        _ => None,
    };
    checked.types =
        smallvec::smallvec![tensor(dtype, Some(output)), tensor(cache, present.clone()), tensor(cache, present)];
    Ok(checked)
}

/// FusedMatMul: MatMul of A and B, each transposed as `transA`/`transB` ask (the last two
/// axes) and `transBatchA`/`transBatchB` (the first axis moved behind the batch axes).
fn fused_matmul(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(a), Some(b)) = (c.shape(0), c.shape(1)) else { return out(vec![tensor(dtype, None)]) };
    // onnxruntime: "Two inputs should have same rank and rank >= 3 if transBatchA or
    // transBatchB is true".
    let batch = ["transBatchA", "transBatchB"].iter().any(|t| c.node.attr_int(t).unwrap_or(0) != 0);
    if batch && (a.len() < 3 || a.len() != b.len()) {
        return invalid(c, format!("transBatchA or transBatchB with inputs of ranks {} and {}", a.len(), b.len()));
    }
    let view = |s: &[Dim], trans: &str, batch: &str| -> Shape {
        let r = s.len();
        if r < 2 {
            return s.to_vec();
        }
        let tb = c.node.attr_int(batch).unwrap_or(0) != 0;
        let t = c.node.attr_int(trans).unwrap_or(0) != 0;
        let (mut dims, row) = if tb { (s[1..r - 1].to_vec(), &s[0]) } else { (s[..r - 2].to_vec(), &s[r - 2]) };
        let col = &s[r - 1];
        dims.extend(if t { [col, row] } else { [row, col] }.into_iter().cloned());
        dims
    };
    let (a, b) = (view(a, "transA", "transBatchA"), view(b, "transB", "transBatchB"));
    let (shape, assumptions) = rules::matmul_shape(&a, &b)?;
    Ok(Out { types: smallvec::smallvec![tensor(dtype, Some(shape))], assumptions, ..Out::default() })
}

/// QLinearAveragePool: AveragePool of NCHW, or NHWC with `channels_last`; the scales and zero
/// points are scalars (onnxruntime: "Scale and Zero-point must be a scalar").
fn qlinear_average_pool(c: &Ctx) -> R {
    (1..5).try_for_each(|i| expect_rank(c, i, 0))?;
    if c.node.attr_int("channels_last").unwrap_or(0) == 0 {
        return rules::pool(c);
    }
    let o = channels_last(c, rules::pool)?;
    pooled_not_empty(c, 1..c.shape(0).map_or(0, |x| x.len().saturating_sub(1)), "NHWC", o)
}

/// The NCHWc MaxPool and AveragePool: the standard pool, whose output must not be empty in
/// height.
fn nchwc_pool(c: &Ctx) -> R {
    pooled_not_empty(c, 2..3, "NCHWc", rules::pool(c)?)
}

/// onnxruntime's NHWC and NCHWc pooling kernels die (SIGFPE) on an output that is empty at
/// `axes` where its NCHW kernel runs one (a window larger than the padded input): at those axes
/// of `o`'s output 0 a known 0 is an error, and a symbolic size the condition that it is 1 or
/// more where inputs of 1 or more may leave it at 0.
fn pooled_not_empty(c: &Ctx, axes: std::ops::Range<usize>, kernel: &str, mut o: Out) -> R {
    let Some(Some(Type::Tensor { shape: Some(y), .. })) = o.types.first() else { return Ok(o) };
    let mut conditions = Vec::new();
    for a in axes.filter(|a| *a < y.len()) {
        match &y[a] {
            Dim::Known(0) => {
                return Err(RuleError::Window(format!(
                    "{}: the output {} is empty at axis {a}, the window being larger than the padded input; \
                     onnxruntime's {kernel} kernel dies on it",
                    c.node.op_type,
                    render(y)
                )))
            }
            Dim::Term(t) if t.bounds(&|_| (1, None)).0 < 1 => {
                conditions.push((a, Assumption::AtLeast { size: t.clone(), min: 1 }))
            }
            _ => {}
        }
    }
    o.assumptions.extend(conditions);
    Ok(o)
}

/// MaxpoolWithMask: MaxPool of X; the int32 mask has X's rank and spatial sizes, and a batch
/// and channels it repeats over (positive when X's are).
fn maxpool_with_mask(c: &Ctx) -> R {
    let mut checked = Out::default();
    if let (Some(x), Some(m)) = (c.shape(0), c.shape(1)) {
        if m.len() != x.len() || x.len() < 2 {
            return invalid(c, format!("the mask {} and X {} differ in rank", render(m), render(x)));
        }
        let mut want = x.to_vec();
        for i in 0..2 {
            want[i] = m[i].clone();
            if m[i].known() == Some(0) && x[..2].iter().all(|d| d.known().is_some_and(|n| n > 0)) {
                return invalid(c, format!("the mask {} is empty where X {} is not", render(m), render(x)));
            }
        }
        expect_shape(c, 1, &want, &mut checked)?;
    }
    let mut o = rules::pool(c)?;
    o.assumptions.extend(checked.assumptions);
    Ok(o)
}

/// MatMulInteger16: numpy's matmul of two int16 tensors, int32.
fn matmul_integer16(c: &Ctx) -> R {
    let (Some(a), Some(b)) = (c.shape(0), c.shape(1)) else { return out(vec![tensor(Some(DType::I32), None)]) };
    let (shape, assumptions) = rules::matmul_shape(a, b)?;
    Ok(Out { types: smallvec::smallvec![tensor(Some(DType::I32), Some(shape))], assumptions, ..Out::default() })
}

/// GatherBlockQuantized: Gather of block-quantized `data` along `gather_axis` (0), dequantized
/// in the scales' type. uint8 data packs 8/`bits` values a byte along its last axis, which must
/// then be `quantize_axis`, and gathers along axis 0. As onnxruntime checks them: the scales
/// have data's shape with `quantize_axis` cut into blocks of `block_size` (a power of 2 from 16;
/// 128 by default), the zero points the scales' shape (packed like the data).
fn gather_block_quantized(c: &Ctx) -> R {
    let dtype = c.dtype(2);
    let attr = |n: &str, d: i64| c.node.attr_int(n).unwrap_or(d);
    let (bits, block) = (attr("bits", 4), attr("block_size", 128));
    if block < 16 || block.count_ones() != 1 {
        return invalid(c, format!("block_size {block} is not a power of 2 from 16"));
    }
    let packed = c.dtype(0) == Some(DType::U8);
    if (packed && ![2, 4, 8].contains(&bits)) || (!packed && bits != 4) {
        return invalid(c, format!("bits {bits} for {} data", c.dtype(0).map_or("this", DType::name)));
    }
    let (Some(data), Some(indices)) = (c.shape(0), c.shape(1)) else { return out(vec![tensor(dtype, None)]) };
    let r = data.len();
    let g = axis_in(attr("gather_axis", 0), r, &c.node.op_type)?;
    let q = axis_in(attr("quantize_axis", 1), r, &c.node.op_type)?;
    if packed && (g != 0 || q + 1 != r) {
        return invalid(c, format!("uint8 data gathers along axis 0 and is quantized along its last, not {g} and {q}"));
    }
    let per_byte = if packed { 8 / bits } else { 1 };
    let mut values = data.to_vec();
    values[q] = values[q].mul(&Dim::Known(per_byte));
    let mut checked = Out::default();
    let mut scales = data.to_vec();
    scales[q] = values[q].div_ceil(&Dim::Known(block));
    expect_shape(c, 2, &scales, &mut checked)?;
    let mut zero_points = scales.clone();
    zero_points[q] = scales[q].div_ceil(&Dim::Known(per_byte));
    expect_shape(c, 3, &zero_points, &mut checked)?;
    let mut shape = values[..g].to_vec();
    shape.extend(indices.iter().cloned());
    shape.extend(values[g + 1..].iter().cloned());
    checked.types = smallvec::smallvec![tensor(dtype, Some(shape))];
    Ok(checked)
}

/// The contrib Range: the standard one, with `delta` 1 when omitted.
fn range(c: &Ctx) -> R {
    let one = [Dim::Known(1)];
    let view = c.view(11, None, Some((2, &one[..])).filter(|_| !c.has(2)));
    rules::range(&view)
}

/// The contrib Pad: Pad-11, its pads [2 * rank] or [1, 2 * rank].
fn pad(c: &Ctx) -> R {
    let Some([Dim::Known(1), n]) = c.shape(1) else { return rules::pad(&c.view(11, None, None)) };
    let t = Type::tensor(c.dtype(1), Some(vec![n.clone()]));
    let view = c.view(11, Some((1, &t)), None);
    rules::pad(&view)
}

/// The contrib Unique: of a vector only; the unique values, each element's index among them
/// and their counts.
fn unique(c: &Ctx) -> R {
    expect_rank(c, 0, 1)?;
    let mut o = rules::unique(c)?;
    o.types.remove(1);
    Ok(o)
}

/// The contrib GridSample: the standard one, of 4-D inputs only.
fn grid_sample(c: &Ctx) -> R {
    expect_rank(c, 0, 4)?;
    rules::grid_sample(c)
}

/// CDist: the distances between the rows of A [M, K] and B [N, K], [M, N].
fn cdist(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    (0..2).try_for_each(|i| expect_rank(c, i, 2))?;
    let (Some(a), Some(b)) = (c.shape(0), c.shape(1)) else {
        return out(vec![tensor(dtype, Some(vec![Dim::Unknown; 2]))]);
    };
    let mut checked = Out::default();
    expect_shape(c, 1, &[b[0].clone(), a[1].clone()], &mut checked)?;
    if a[1].known() == Some(0) {
        return invalid(c, format!("the rows of A {} are empty", render(a)));
    }
    checked.types = smallvec::smallvec![tensor(dtype, Some(vec![a[0].clone(), b[0].clone()]))];
    Ok(checked)
}

/// CropAndResize: X [N, C, H, W], rois [R, 4], batch_indices [R] and crop_size [2] give
/// [R, C, crop_height, crop_width].
fn crop_and_resize(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    expect_rank(c, 0, 4)?;
    let mut checked = Out::default();
    let rois = c.shape(1).and_then(|r| r.first()).cloned().unwrap_or(Dim::Unknown);
    expect_shape(c, 1, &[rois.clone(), Dim::Known(4)], &mut checked)?;
    expect_shape(c, 2, std::slice::from_ref(&rois), &mut checked)?;
    expect_shape(c, 3, &[Dim::Known(2)], &mut checked)?;
    let channels = c.shape(0).and_then(|x| x.get(1)).cloned().unwrap_or(Dim::Unknown);
    let crop = c.value(3).filter(|v| v.len() == 2).map_or_else(|| vec![Dim::Unknown; 2], <[Dim]>::to_vec);
    let shape = [vec![rois, channels], crop].concat();
    checked.types = smallvec::smallvec![tensor(dtype, Some(shape))];
    Ok(checked)
}

/// The NCHWc block is 8 channels, or 16 with AVX-512 (`MlasNchwcGetBlockSize`), and each
/// kernel checks the channels against the block of the machine it runs on: `runs(b)` says
/// whether a node runs with blocks of `b`. Neither is the node's error; one only is a
/// `machine-dependent` warning on `out` (an ORT_ENABLE_ALL graph written on another machine).
fn block_widths(c: &Ctx, what: String, runs: impl Fn(i64) -> bool, out: R) -> R {
    let width = match (runs(8), runs(16)) {
        (false, false) => return invalid(c, format!("{what} fit no NCHWc block (8 or 16 channels)")),
        (true, false) => "8 channels (no AVX-512)",
        (false, true) => "16 channels (AVX-512)",
        (true, true) => return out,
    };
    let mut out = out?;
    let msg = format!("{what} fit onnxruntime's NCHWc block only where it is {width}");
    out.warnings.push((crate::diag::Code::MachineDependent, msg));
    Ok(out)
}

/// An NCHWc-blocked input of rank 4, as the NCHWc pools and Upsample take it: a whole number
/// of blocks.
fn blocked(c: &Ctx, rule: Rule) -> R {
    expect_rank(c, 0, 4)?;
    match c.shape(0).and_then(|x| x[1].known()) {
        Some(ch) => block_widths(c, format!("{ch} channels"), |b| ch % b == 0, rule(c)),
        None => rule(c),
    }
}

/// UnfoldTensor: the windows of `size` every `step` along `dim` (-1), as a new last axis of
/// `size` ([.., n, ..] gives [.., (n - size) / step + 1, .., size]); onnxruntime wants
/// 0 < size <= n and a positive step.
fn unfold_tensor(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (size, step) = (c.node.attr_int("size").unwrap_or(0), c.node.attr_int("step").unwrap_or(1));
    if size <= 0 || step <= 0 {
        return invalid(c, format!("size {size} and step {step} must be positive"));
    }
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None)]) };
    let d = axis_in(c.node.attr_int("dim").unwrap_or(-1), x.len(), &c.node.op_type)?;
    let mut checked = Out::default();
    match &x[d] {
        Dim::Known(n) if *n < size => return invalid(c, format!("windows of {size} do not fit in {n} at axis {d}")),
        Dim::Term(sym) => checked.assumptions.push((d, Assumption::AtLeast { size: sym.clone(), min: size })),
        _ => {}
    }
    let mut shape = x.to_vec();
    shape[d] = x[d].sub(&Dim::Known(size)).div_floor(&Dim::Known(step)).add(&Dim::Known(1));
    shape.push(Dim::Known(size));
    checked.types = smallvec::smallvec![tensor(dtype, Some(shape))];
    Ok(checked)
}

/// MurmurHash3: one hash per element, uint32 (int32 with `positive` other than 1).
fn murmur_hash3(c: &Ctx) -> R {
    // onnxruntime gives uint32 for positive=1 only.
    let dtype = if c.node.attr_int("positive").unwrap_or(1) == 1 { DType::U32 } else { DType::I32 };
    out(vec![tensor(Some(dtype), c.shape(0).map(<[Dim]>::to_vec))])
}

/// MoE and QMoE: the output is like the input ([rows, hidden] or [B, S, hidden]). As
/// onnxruntime checks them (moe_helper.h): router_probs is [rows, experts]; the expert weights
/// are 3-D, their intermediate size read from fc2's (QMoE packs 8 / expert_weight_bits values a
/// byte), fc1's doubled when `swiglu_fusion` fuses two matrices; each weight in one of two
/// layouts, each bias and row-wise scale [experts, its output size].
fn moe(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let q = c.node.op_type == "QMoE";
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None)]) };
    if !(2..=3).contains(&x.len()) {
        return invalid(c, format!("input has rank {}, not 2 or 3", x.len()));
    }
    // Slots of fc1, fc2 and fc3 weights, scales (QMoE) and biases.
    let (w, scales, bias): ([usize; 3], Option<[usize; 3]>, [usize; 3]) =
        if q { ([2, 5, 8], Some([3, 6, 9]), [4, 7, 10]) } else { ([2, 4, 6], None, [3, 5, 7]) };
    expect_rank(c, 1, 2)?;
    w[..2].iter().try_for_each(|i| expect_rank(c, *i, 3))?;
    let mut checked = Out { types: smallvec::smallvec![tensor(dtype, Some(x.to_vec()))], ..Out::default() };
    let (rows, hidden) = (Dim::product(&x[..x.len() - 1]), &x[x.len() - 1]);
    let experts = c.shape(1).map_or(Dim::Unknown, |r| r[1].clone());
    expect_shape(c, 1, &[rows, experts.clone()], &mut checked)?;
    let top = c.node.attr_int("k").unwrap_or(1);
    if let Some(e) = experts.known().filter(|e| top > *e) {
        return invalid(c, format!("k {top} is more than the {e} experts"));
    }
    // onnxruntime: "Sparse mixer only supports k=2" (every kernel), and its CPU kernel
    // refuses to clamp after the activation, which CUDA's does.
    if c.node.attr_int("use_sparse_mixer") == Some(1) && top != 2 {
        return invalid(c, format!("the sparse mixer picks 2 experts, not k {top}"));
    }
    if c.node.attr_int("swiglu_limit_after_activation").is_some_and(|v| v != 0) {
        let msg = "onnxruntime's CPU kernel refuses swiglu_limit_after_activation (its CUDA kernel runs it)";
        checked.warnings.push((Code::RuntimeDiffers, msg.into()));
    }
    let pack = if q { 8 / c.node.attr_int("expert_weight_bits").unwrap_or(4).clamp(1, 8) } else { 1 };
    let (Some(h), Some([_, f1, f2])) = (hidden.known(), c.shape(w[1]).map(|s| [&s[0], &s[1], &s[2]])) else {
        return Ok(checked);
    };
    let (Some(f1), Some(f2)) = (f1.known(), f2.known()) else { return Ok(checked) };
    let packed = f1.checked_mul(f2).and_then(|n| n.checked_mul(pack));
    let inter = match packed {
        Some(n) if h > 0 && n % h == 0 && n > 0 => n / h,
        _ => return invalid(c, format!("no intermediate size fits fc2 [.., {f1}, {f2}] and a hidden size of {h}")),
    };
    // onnxruntime reads swiglu_fusion only for the swiglu activation.
    let swiglu = c.node.attr_str("activation_type").as_deref() == Some("swiglu");
    let fused = swiglu && c.node.attr_int("swiglu_fusion").unwrap_or(0) != 0;
    let Some(fc1) = (if fused { inter.checked_mul(2) } else { Some(inter) }) else {
        return invalid(c, format!("twice the intermediate size {inter} overflows"));
    };
    let fc1_rows = c.shape(w[0]).and_then(|s| s.get(1)).and_then(Dim::known);
    let legacy = (h != inter && f1 == inter) || (h == inter && fused && fc1_rows == Some(h));
    let k = |n: i64| Dim::Known(n);
    let e = || experts.clone();
    let weights = if legacy {
        [[e(), k(h), k(fc1 / pack)], [e(), k(inter), k(h / pack)], [e(), k(h), k(inter / pack)]]
    } else {
        [[e(), k(fc1), k(h / pack)], [e(), k(h), k(inter / pack)], [e(), k(inter), k(h / pack)]]
    };
    for (slot, want) in w.iter().zip(&weights) {
        expect_shape(c, *slot, want, &mut checked)?;
    }
    for (i, size) in [fc1, h, inter].into_iter().enumerate() {
        expect_shape(c, bias[i], &[e(), k(size)], &mut checked)?;
        if let Some(s) = scales {
            match c.node.attr_int("block_size").filter(|b| *b > 0) {
                Some(b) => {
                    let blocks = if i == 1 { inter } else { h };
                    expect_shape(c, s[i], &[e(), k(size), k((blocks + b - 1) / b)], &mut checked)?
                }
                None => expect_shape(c, s[i], &[e(), k(size)], &mut checked)?,
            }
        }
    }
    Ok(checked)
}

/// DecoderMaskedMultiHeadAttention, one decoding step: MultiHeadAttention's checks, a query
/// [B, 1, D], a 4-D key of the query's batch; output [B, 1, v_hidden] (the value's hidden size,
/// or its heads times head size when 4-D); present_key and present_value are past_key and
/// past_value (inputs 5 and 6), the buffer they share.
fn decoder_masked_mha(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(q) = c.shape(0) else { return out(vec![tensor(dtype, None); 3]) };
    if q.len() != 3 {
        return invalid(c, format!("query has rank {}, not 3", q.len()));
    }
    if let Some(s) = q[1].known().filter(|s| *s != 1) {
        return invalid(c, format!("a query of {s} positions: it decodes one"));
    }
    // Self-attention (a 3-D key, or none beside a packed query) keeps its keys in one buffer:
    // past_key [B, N, max length, H], which is also present_key, with past_sequence_length
    // (input 7) of them filled. onnxruntime's kernel takes a past only in that form
    // ("past_present_share_buffer_ was false"), and then wants the length and room for one
    // more key ("past_sequence_length (0) plus kv_sequence_length (1) must not exceed
    // max_sequence_length (0)").
    if c.shape(1).is_none_or(|k| k.len() == 3) {
        let shared = c.node.attr_int("past_present_share_buffer").unwrap_or(0) != 0;
        let room = c.shape(5).filter(|p| p.len() == 4).map(|p| &p[2]);
        match (shared, c.has(5), c.has(7)) {
            (false, true, _) => return invalid(c, "a past_key without past_present_share_buffer".into()),
            (true, false, _) => return invalid(c, "past_present_share_buffer with no past_key to share".into()),
            (true, true, false) => return invalid(c, "past_present_share_buffer with no past_sequence_length".into()),
            _ if shared && room.and_then(Dim::known) == Some(0) => {
                return invalid(c, "a shared past_key with room for no key".into())
            }
            // It writes the new key and value through the present outputs (a segfault without).
            _ if shared && !(c.asks(1) && c.asks(2)) => {
                return invalid(c, "a shared past without present_key and present_value: onnxruntime crashes".into());
            }
            _ => {}
        }
        let filled = c.value(7).and_then(|v| v.first()).and_then(Dim::known);
        if let (Some(n), Some(room)) = (filled, room.and_then(Dim::known)) {
            if n < 0 || n >= room {
                return invalid(c, format!("past_sequence_length {n} leaves no room in a past_key of {room}"));
            }
        }
    }
    let mut checked = multi_head_attention(c)?;
    // Its kernel takes one head size for the query and the value ("QK head size should be
    // same as V head size"), the value's split by num_heads rounding down.
    let heads = c.node.attr_int("num_heads").filter(|n| *n > 0);
    if let (Some(n), Some(3), Some([_, _, v])) = (heads, c.shape(1).map(<[Dim]>::len), c.shape(2)) {
        if let (Some(qh), Some(vh)) = (q[2].known(), v.known()) {
            if qh / n != vh / n {
                return invalid(c, format!("the value's head size {} is not the query's {}", vh / n, qh / n));
            }
        }
    }
    if let Some(k) = c.shape(1).filter(|k| k.len() == 4) {
        expect_shape(c, 1, &[[q[0].clone()].as_slice(), &k[1..]].concat(), &mut checked)?;
    }
    let hidden = match c.shape(2) {
        Some([_, _, h]) => h.clone(),
        Some([_, n, _, h]) => n.mul(h),
        _ => Dim::Unknown,
    };
    let past = |i: usize| c.shape(i).map(<[Dim]>::to_vec);
    let y = vec![q[0].clone(), q[1].clone(), hidden];
    checked.types = smallvec::smallvec![tensor(dtype, Some(y)), tensor(dtype, past(5)), tensor(dtype, past(6))];
    Ok(checked)
}

/// WordConvEmbedding: words [N, word length, ..] of characters, a conv weight [E, 1, width,
/// char embedding], its bias [E] and the character embeddings [chars, char embedding] give [N,
/// E]. onnxruntime wants the kernel no wider than a word.
fn word_conv_embedding(c: &Ctx) -> R {
    let dtype = c.dtype(1);
    expect_rank(c, 1, 4)?;
    let (Some(s), Some(w)) = (c.shape(0), c.shape(1)) else { return out(vec![tensor(dtype, None)]) };
    let mut checked = Out::default();
    expect_shape(c, 2, &w[..1], &mut checked)?;
    if let Some(e) = c.shape(3) {
        expect_shape(c, 3, &[e.first().cloned().unwrap_or(Dim::Unknown), w[3].clone()], &mut checked)?;
    }
    if let (Some(len), Some(width)) = (s.get(1).and_then(Dim::known), w[2].known()) {
        if width > len {
            return invalid(c, format!("a kernel {width} wide over words of {len}"));
        }
    }
    // Each size attribute, unless -1 (the default), must be the weights' own (onnxruntime:
    // "Conv filter size does not match embedding_size attribute").
    let chars = c.shape(3).and_then(|e| e.get(1)).unwrap_or(&w[3]);
    for (attr, have) in [("embedding_size", &w[0]), ("conv_window_size", &w[2]), ("char_embedding_size", chars)] {
        let given = c.node.attr_int(attr).filter(|v| *v != -1);
        if let Some((v, have)) = given.zip(have.known()).filter(|(v, have)| v != have) {
            return invalid(c, format!("{attr} {v}, where the weights give {have}"));
        }
    }
    let first = s.first().cloned().unwrap_or(Dim::Unknown);
    checked.types = smallvec::smallvec![tensor(dtype, Some(vec![first, w[0].clone()]))];
    Ok(checked)
}

/// MatMulBnb4: A [.., K] times B [K, N] (with transB=0, A [.., N] times [N, K]), B packed two
/// 4-bit values a byte in blocks of `block_size` with one absmax each: [.., N]. onnxruntime
/// wants at least N*K/2 bytes and N*K/block_size scales.
fn matmul_bnb4(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let attr = |n: &str| c.node.attr_int(n).unwrap_or(0);
    let (k, n, block) = (attr("K"), attr("N"), attr("block_size"));
    if k <= 0 || n <= 0 || block <= 0 {
        return invalid(c, format!("K {k}, N {n} and block_size {block} must be positive"));
    }
    let values = k.saturating_mul(n);
    let ceil = |d: i64| values / d + i64::from(values % d != 0);
    for (i, what, least) in [(1, "B", ceil(2)), (2, "absmax", ceil(block))] {
        if let Some(have) = c.shape(i).and_then(|s| Dim::product(s).known()).filter(|have| *have < least) {
            return invalid(c, format!("{what} holds {have} values, not the {least} K {k} and N {n} need"));
        }
    }
    let Some(a) = c.shape(0).filter(|a| !a.is_empty()) else { return out(vec![tensor(dtype, None)]) };
    // B is held as [N, K]; transB (default 1, any other value true) multiplies by its transpose.
    let (inner, outer) = if c.node.attr_int("transB") == Some(0) { (n, k) } else { (k, n) };
    let (mut checked, last) = (Out::default(), a.len() - 1);
    let mut want = a.to_vec();
    want[last] = Dim::Known(inner);
    expect_shape(c, 0, &want, &mut checked)?;
    let mut y = a.to_vec();
    y[last] = Dim::Known(outer);
    checked.types = smallvec::smallvec![tensor(dtype, Some(y))];
    Ok(checked)
}

/// The NCHWc Conv: the standard rule (weights and bias hold the rounded-up channel counts); a
/// fused `Sum` (input 3) has the output's shape.
fn nchwc_conv(c: &Ctx) -> R {
    expect_rank(c, 0, 4)?;
    // Fewer input channels than a block are taken as they are; the output channels fill whole
    // blocks (onnxruntime's test ConvRejectsUnalignedOutputChannels).
    let ch = c.shape(0).and_then(|x| x[1].known());
    let m = c.shape(1).and_then(|w| w.first()).and_then(Dim::known);
    if ch.is_none() && m.is_none() {
        return nchwc_conv_shape(c);
    }
    let show = |n: Option<i64>| n.map_or("?".to_string(), |n| n.to_string());
    let what = format!("{} input and {} output channels", show(ch), show(m));
    let runs = |b| ch.is_none_or(|ch| ch < b || ch % b == 0) && m.is_none_or(|m| m > 0 && m % b == 0);
    block_widths(c, what, runs, nchwc_conv_shape(c))
}

fn nchwc_conv_shape(c: &Ctx) -> R {
    let mut o = rules::conv(c)?;
    if let Some(Some(y)) = o.types.first().cloned().map(|t| t.and_then(|t| t.shape().cloned())) {
        expect_shape(c, 3, &y, &mut o)?;
    }
    Ok(o)
}

/// ReorderInput: NCHW (or NHWC with `channels_last`) into NCHWc, the channels rounded up to the
/// block, whose size is the machine's (8 or 16): known only for a multiple of 16.
fn reorder_input(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    expect_rank(c, 0, 4)?;
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None)]) };
    let mut shape = x.to_vec();
    if c.node.attr_int("channels_last").unwrap_or(0) != 0 {
        shape[1..].rotate_right(1);
    }
    // onnxruntime reorders only a multiple of 4 channels.
    if let Some(ch) = shape[1].known().filter(|ch| ch % 4 != 0) {
        return invalid(c, format!("{ch} channels are not a multiple of 4"));
    }
    shape[1] = shape[1].known().filter(|ch| ch % 16 == 0).map_or(Dim::Unknown, Dim::Known);
    out(vec![tensor(dtype, Some(shape))])
}

/// ReorderOutput: NCHWc back to NCHW (or NHWC with `channels_last`) of `channels` channels.
fn reorder_output(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let channels = c.node.attr_int("channels").unwrap_or(0);
    if channels <= 0 {
        return invalid(c, format!("channels {channels} is not positive"));
    }
    expect_rank(c, 0, 4)?;
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None)]) };
    let mut shape = x.to_vec();
    shape[1] = Dim::Known(channels);
    if c.node.attr_int("channels_last").unwrap_or(0) != 0 {
        shape[1..].rotate_left(1);
    }
    let result = out(vec![tensor(dtype, Some(shape))]);
    // The blocks hold the channels with less than a block of padding.
    match x[1].known() {
        Some(ch) => block_widths(
            c,
            format!("{channels} channels in {ch} blocked ones"),
            |b| ch % b == 0 && channels <= ch && ch - channels < b,
            result,
        ),
        None => result,
    }
}

/// The NCHWc Upsample: each axis times its whole-number `scales` entry.
fn nchwc_upsample(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(x), Some(scales)) = (c.shape(0), c.node.attr_ints("scales")) else {
        return out(vec![tensor(dtype, rules::rank_only(c, 0))]);
    };
    if scales.len() != x.len() || scales.iter().any(|s| *s <= 0) {
        return invalid(c, format!("scales {scales:?} for an input of rank {}", x.len()));
    }
    // onnxruntime: "scales_[0] == 1 && scales_[1] == 1 && ..." (it scales height and width).
    if scales.iter().take(2).any(|s| *s != 1) {
        return invalid(c, format!("scales {scales:?}: it scales height and width only"));
    }
    // "transformation_mode_ == TransformationMode::ASYMMETRIC" in nearest mode.
    let nearest = c.node.attr_str("mode").is_none_or(|m| m == "nearest");
    if let Some(t) = c.node.attr_str("coordinate_transformation_mode").filter(|t| nearest && t != "asymmetric") {
        return invalid(c, format!("coordinate_transformation_mode {t} in nearest mode, which takes asymmetric"));
    }
    out(vec![tensor(dtype, Some(x.iter().zip(scales).map(|(d, s)| d.mul(&Dim::Known(*s))).collect()))])
}

/// QGemm: [M, N] of A and B (each possibly transposed), in y_zero_point's type when given,
/// else float.
fn qgemm(c: &Ctx) -> R {
    let dtype = if c.has(8) { c.dtype(8) } else { Some(DType::F32) };
    let (Some(a), Some(b)) = (c.shape(0), c.shape(3)) else { return out(vec![tensor(dtype, None)]) };
    if a.len() != 2 || b.len() != 2 {
        return invalid(c, format!("A and B have ranks {} and {}, not 2", a.len(), b.len()));
    }
    let t = |n: &str| c.node.attr_int(n).unwrap_or(0) != 0;
    let (m, k) = if t("transA") { (&a[1], &a[0]) } else { (&a[0], &a[1]) };
    let (kb, n) = if t("transB") { (&b[1], &b[0]) } else { (&b[0], &b[1]) };
    // As onnxruntime checks them: one inner size; A's and Y's scale and zero point one value,
    // B's one or one per column, of one shape.
    let mut checked = Out::default();
    let Some((_, same)) = k.pin(kb) else { return invalid(c, format!("A's inner size {k} and B's {kb} differ")) };
    checked.assumptions.extend(same.map(|s| (0, s)));
    [1, 2, 7, 8].into_iter().try_for_each(|i| expect_one_value(c, i, &mut checked))?;
    for i in [4, 5] {
        rules::one_or_each(c, i, n, "column", &mut checked)?;
    }
    if let (Some(s), Some(z)) = (c.shape(4), c.shape(5)) {
        if s != z {
            return invalid(c, format!("B's scale {} and zero point {} differ in shape", render(s), render(z)));
        }
    }
    checked.types = smallvec::smallvec![tensor(dtype, Some(vec![m.clone(), n.clone()]))];
    Ok(checked)
}

/// QLinearConcat: (Y_scale, Y_zero_point, then (tensor, scale, zero point) triples), concatenated
/// along `axis`, in Y_zero_point's type.
/// An input quantized unlike the output (its scale or zero point's first value another) is
/// requantized through a lookup table, whose scales and zero points hold one value
/// ("QlinearBuildLookupTable : input X_scale must be a scalar or 1D tensor of size 1"); one
/// quantized as the output is copied as it is. `inputs` are (scale, zero point) slots, `output`
/// the output's.
fn requantized(c: &Ctx, inputs: &[(usize, usize)], output: (usize, usize), out: &mut Out) -> Result<(), RuleError> {
    let first = |i: usize| c.float_value(i).and_then(|v| v.first().copied());
    let zero = |i: usize| c.value(i).and_then(|v| v.first().cloned());
    for &(s, z) in inputs {
        let same = first(s).is_some() && first(s) == first(output.0) && zero(z).is_some() && zero(z) == zero(output.1);
        if !same {
            [output.0, output.1, s, z].into_iter().try_for_each(|j| expect_one_value(c, j, out))?;
        }
    }
    Ok(())
}

/// QLinearWhere (condition, X, its scale and zero point, Y, its, the output's): condition, X
/// and Y broadcast, in X's type; X and Y requantized to the output's parameters.
fn qlinear_where(c: &Ctx) -> R {
    let mut o = Out::default();
    requantized(c, &[(2, 3), (5, 6)], (7, 8), &mut o)?;
    let slots = [0, 1, 4];
    let shapes: Option<Vec<&[Dim]>> = slots.iter().map(|i| c.shape(*i)).collect();
    let shape = match shapes {
        Some(s) => {
            let b = crate::shape::multi(&s).map_err(|e| RuleError::broadcast_among(e, &slots))?;
            o.assumptions.extend(b.assumptions);
            Some(b.shape)
        }
        None => None,
    };
    o.types = smallvec::smallvec![tensor(c.dtype(1), shape)];
    Ok(o)
}

fn qlinear_concat(c: &Ctx) -> R {
    let dtype = c.dtype(1);
    let k = c.inputs.len();
    if k < 5 || (k - 2) % 3 != 0 {
        return invalid(c, format!("{k} inputs are not 2 plus (tensor, scale, zero point) triples"));
    }
    let mut checked = Out::default();
    let inputs: Vec<(usize, usize)> = (3..k).step_by(3).map(|i| (i, i + 1)).collect();
    requantized(c, &inputs, (0, 1), &mut checked)?;
    let shapes: Option<Vec<&[Dim]>> = (2..k).step_by(3).map(|i| c.shape(i)).collect();
    let Some(shapes) = shapes else { return out(vec![tensor(dtype, None)]) };
    let r = shapes[0].len();
    let a = axis_in(c.node.attr_int("axis").unwrap_or(0), r, &c.node.op_type)?;
    if shapes.iter().any(|s| s.len() != r) {
        return invalid(c, "the inputs' ranks differ".into());
    }
    // Every other axis alike, an empty input's too (onnxruntime's inference: "Can't merge
    // shape info", where Concat lets an empty input pass).
    for (j, s) in shapes.iter().enumerate().skip(1) {
        for (axis, (d, first)) in s.iter().zip(shapes[0]).enumerate().filter(|(axis, _)| *axis != a) {
            let Some((_, same)) = first.pin(d) else {
                return invalid(c, format!("inputs 0 and {j} differ at axis {axis}: {first} and {d}"));
            };
            checked.assumptions.extend(same.map(|x| (axis, x)));
        }
    }
    let mut shape = shapes[0].to_vec();
    shape[a] = shapes.iter().fold(Dim::Known(0), |acc, s| acc.add(&s[a]));
    checked.types = smallvec::smallvec![tensor(dtype, Some(shape))];
    Ok(checked)
}

/// EmbedLayerNormalization and QEmbedLayerNormalization: [B, S, D] from input_ids [B, S] and
/// a word embedding [V, D] (in its type; QEmbed's in the scales'), a mask_index [B] of
/// int32 and EmbedLayerNormalization's embedding_sum [B, S, D]. As onnxruntime checks them:
/// the embeddings 2-D and gamma and beta 1-D, all of D, known and above 0 ("position_embedding
/// should have 2 dimensions, dimension size known, and same hidden size as word_embedding");
/// segment_ids and the mask shaped as input_ids ("Input 0 and 1 shall have same shape"), and with
/// a segment_embedding; QEmbed's segment inputs all given or none, its scales and zero points
/// one value each.
fn embed_layer_norm(c: &Ctx) -> R {
    let quantized = c.node.op_type == "QEmbedLayerNormalization";
    // QEmbed's segment inputs come together ("segment_ids, segment_embedding,
    // segment_embedding_scale, and segment_embedding_zero_point must either all be provided").
    let segment = [1, 4, 10, 15];
    if quantized && segment.iter().any(|i| c.has(*i)) && !segment.iter().all(|i| c.has(*i)) {
        return invalid(c, format!("inputs {segment:?} (the segments') come all together or not at all"));
    }
    // EmbedLayerNormalization's type inference reads segment_embedding's type with segment_ids
    // ("Input 4 is null").
    if c.has(1) && !c.has(4) {
        return invalid(c, "segment_ids without a segment_embedding".into());
    }
    let mut o = Out::default();
    if quantized {
        (8..18).filter(|i| c.has(*i)).try_for_each(|i| expect_one_value(c, i, &mut o))?;
    }
    let ids = c.shape(0);
    if let Some(ids) = ids.filter(|s| s.len() != 2) {
        return invalid(c, format!("input_ids has rank {}, not 2", ids.len()));
    }
    if let Some(ids) = ids {
        for i in [1, 7] {
            expect_shape(c, i, ids, &mut o)?;
        }
    }
    // onnxruntime's type inference sets mask_index whether asked for or not.
    if c.node.outputs.len() < 2 {
        return invalid(c, "gives mask_index (output 1) whether it is used or not".into());
    }
    let hidden = match c.shape(2) {
        Some([_, d @ Dim::Known(1..)]) => d.clone(),
        Some(w) => return invalid(c, format!("word_embedding {} is not 2-D of a known hidden size", render(w))),
        None => Dim::Unknown,
    };
    for (i, what, rank) in [(3, "position_embedding", 2), (4, "segment_embedding", 2), (5, "gamma", 1), (6, "beta", 1)]
    {
        let Some(s) = c.shape(i) else { continue };
        let fits =
            s.len() == rank && s[rank - 1].known().is_some() && (hidden.known().is_none() || s[rank - 1] == hidden);
        if !fits {
            return invalid(c, format!("{what} {} is not {rank}-D of the word embedding's hidden size", render(s)));
        }
    }
    let dtype = if quantized { c.dtype(8) } else { c.dtype(2) };
    let (b, seq) = ids.map_or((Dim::Unknown, Dim::Unknown), |s| (s[0].clone(), s[1].clone()));
    let y = Some(vec![b.clone(), seq, hidden]);
    o.types = smallvec::smallvec![tensor(dtype, y.clone()), tensor(Some(DType::I32), Some(vec![b]))];
    if !quantized {
        o.types.push(tensor(dtype, y));
    }
    Ok(o)
}

/// QLinearGlobalAveragePool: every spatial axis 1 (NCHW: axes 2..; `channels_last`: 1..r-1).
fn qlinear_global_average_pool(c: &Ctx) -> R {
    // The scales and zero points hold one value (onnxruntime: "IsScalarOr1ElementVector").
    let mut checked = Out::default();
    (1..5).try_for_each(|i| expect_one_value(c, i, &mut checked))?;
    let dtype = c.dtype(0);
    let shape = c.shape(0).filter(|s| s.len() >= 2).map(|x| {
        let r = x.len();
        let last = c.node.attr_int("channels_last").unwrap_or(0) != 0;
        let spatial = if last { 1..r - 1 } else { 2..r };
        x.iter().enumerate().map(|(i, d)| if spatial.contains(&i) { Dim::Known(1) } else { d.clone() }).collect()
    });
    checked.types = smallvec::smallvec![tensor(dtype, shape)];
    Ok(checked)
}

/// RotaryEmbedding: output like the input, [B, S, hidden] or [B, N, S, H]. As onnxruntime
/// checks them: position_ids a scalar or [1] (an offset) or [B, S]; cos and sin caches 2-D of one
/// shape, [positions, rot / 2] with rot the rotary_embedding_dim or else the head size (or
/// half the head size with any rotary_embedding_dim).
fn rotary_embedding(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None)]) };
    if !(3..=4).contains(&x.len()) {
        return invalid(c, format!("input has rank {}, not 3 or 4", x.len()));
    }
    let mut checked = Out::default();
    let (b, seq) = (&x[0], &x[x.len() - 2]);
    match c.shape(1) {
        Some([_, _]) => expect_shape(c, 1, &[b.clone(), seq.clone()], &mut checked)?,
        Some([_]) => expect_shape(c, 1, &[Dim::Known(1)], &mut checked)?,
        Some(p) if p.len() > 2 => return invalid(c, format!("position_ids has rank {}, not 0 to 2", p.len())),
        _ => {}
    }
    if let Some(cos) = c.shape(2) {
        if cos.len() != 2 {
            return invalid(c, format!("cos_cache has rank {}, not 2", cos.len()));
        }
        expect_shape(c, 3, cos, &mut checked)?;
        let heads = c.node.attr_int("num_heads").unwrap_or(0);
        if let Some(h) = x[2].known().filter(|h| x.len() == 3 && heads > 0 && h % heads != 0) {
            return invalid(c, format!("num_heads {heads} does not divide the hidden size {h}"));
        }
        let head = match x.len() {
            4 => x[3].clone(),
            _ if heads > 0 => x[2].div_floor(&Dim::Known(heads)),
            _ => Dim::Unknown,
        };
        let rot = c.node.attr_int("rotary_embedding_dim").filter(|r| *r > 0).map_or(head.clone(), Dim::Known);
        // onnxruntime takes a cache of half the head size whatever the rotary size, which is
        // at most the head size ("rotary_embedding_dim must be less than or equal to head_size").
        let half_head = head.known().map(|h| h / 2);
        if let Some((r, h)) = rot.known().zip(head.known()).filter(|(r, h)| r > h) {
            return invalid(c, format!("rotary_embedding_dim {r} exceeds the head size {h}"));
        }
        if let Some((half, r)) =
            cos[1].known().zip(rot.known()).filter(|(half, r)| *half != r / 2 && Some(*half) != half_head)
        {
            return invalid(c, format!("cos_cache holds {half} per position, not half the rotary size {r}"));
        }
        // The sequence fits the caches' positions ("Updating cos_cache and sin_cache in
        // RotaryEmbedding is not currently supported").
        match (seq, cos[0].known()) {
            (Dim::Known(s), Some(max)) if *s > max => {
                return invalid(c, format!("a sequence of {s} is longer than the caches' {max} positions"))
            }
            (Dim::Term(t), Some(max)) => {
                checked.assumptions.push((x.len() - 2, Assumption::AtMost { size: t.clone(), max }))
            }
            _ => {}
        }
    }
    checked.types = smallvec::smallvec![tensor(dtype, Some(x.to_vec()))];
    Ok(checked)
}

/// DynamicQuantizeMatMul (float A, quantized B) and MatMulIntegerToFloat (integer A and B):
/// MatMul of A and B, in A's type or a_scale's. As onnxruntime checks them: B's zero point one
/// value or one per column ([N], or B's shape with a K of 1); the scales stretch to the output
/// they multiply; the bias a vector of B's last size, which onnxruntime does not read when the
/// output is empty.
fn matmul_to_float(c: &Ctx) -> R {
    let dynamic = c.node.op_type == "DynamicQuantizeMatMul";
    let dtype = if dynamic { c.dtype(0) } else { c.dtype(2) };
    let (Some(a), Some(b)) = (c.shape(0), c.shape(1)) else { return out(vec![tensor(dtype, None)]) };
    let (cols, scales, bias): (&[usize], &[usize], usize) = if dynamic { (&[3], &[2], 4) } else { (&[5], &[2, 3], 6) };
    rules::quantized_per(c, a, b, (&[], cols))?;
    let (shape, assumptions) = rules::matmul_shape(a, b)?;
    let mut checked = Out { assumptions, ..Default::default() };
    for &i in scales {
        if let Some(s) = c.shape(i) {
            let Ok(stretch) = uni(&shape, s, i) else {
                return invalid(
                    c,
                    format!("input {i} of shape {} does not stretch to the output {}", render(s), render(&shape)),
                );
            };
            checked.assumptions.extend(stretch.assumptions);
        }
    }
    // The bias holds one value per column, in any shape (onnxruntime: "bias tensor's element
    // count must equal B's last dimension"); a vector keeps its exact check.
    if let Some(n) = b.last().filter(|_| !shape.iter().any(|d| d.known() == Some(0))) {
        rules::expect_count(c, bias, n, &mut checked)?;
    }
    checked.types = smallvec::smallvec![tensor(dtype, Some(shape))];
    Ok(checked)
}

/// MatMulNBits: A [.., K] times a B of `bits`-bit blocks of `block_size`, giving [.., N]. As
/// onnxruntime checks them: B is [N, blocks, block_size * bits / 8] with blocks the blocks of
/// K (rounded up), the scales [N * blocks] or [N, blocks], a bias [N].
fn matmul_nbits(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let attr = |name| c.node.attr_int(name);
    let (Some(k), Some(n), Some(block)) = (attr("K"), attr("N"), attr("block_size")) else {
        return invalid(c, "needs the attributes K, N and block_size".into());
    };
    let bits = attr("bits").unwrap_or(4);
    if k < 0 || n < 0 || block <= 0 || bits <= 0 {
        return invalid(c, format!("K {k}, N {n}, block_size {block} and bits {bits} are not sizes"));
    }
    let blocks = k / block + i64::from(k % block != 0);
    let (Some(blob), Some(scales)) = (block.checked_mul(bits).map(|b| b / 8), n.checked_mul(blocks)) else {
        return invalid(c, format!("block_size {block} of {bits} bits over {n} columns overflows"));
    };
    let mut checked = Out::default();
    let shape = match c.shape(0) {
        Some([lead @ .., last]) => {
            let Some((_, same)) = last.pin(&Dim::Known(k)) else {
                return invalid(c, format!("A's last size {last} is not K = {k}"));
            };
            checked.assumptions.extend(same.map(|s| (lead.len(), s)));
            Some(lead.iter().cloned().chain([Dim::Known(n)]).collect())
        }
        Some([]) => return invalid(c, "A is a scalar".into()),
        None => None,
    };
    // onnxruntime runs an empty B of rank 3 whatever its sizes, and looks at nothing else.
    if let Some(b) = c.shape(1).filter(|b| b.iter().any(|d| d.known() == Some(0))) {
        if b.len() != 3 {
            return invalid(c, format!("an empty B has rank {}, not 3", b.len()));
        }
        checked.types = smallvec::smallvec![tensor(dtype, shape)];
        return Ok(checked);
    }
    expect_shape(c, 1, &[Dim::Known(n), Dim::Known(blocks), Dim::Known(blob)], &mut checked)?;
    match c.shape(2) {
        Some([_]) => expect_shape(c, 2, &[Dim::Known(scales)], &mut checked)?,
        Some(_) => expect_shape(c, 2, &[Dim::Known(n), Dim::Known(blocks)], &mut checked)?,
        None => {}
    }
    expect_shape(c, 5, &[Dim::Known(n)], &mut checked)?;
    checked.types = smallvec::smallvec![tensor(dtype, shape)];
    Ok(checked)
}

/// QLinearSigmoid and QLinearLeakyRelu: like X, with X's and Y's scale and zero point one
/// value each (onnxruntime builds one lookup table from them).
fn qlinear_lookup(c: &Ctx) -> R {
    let mut checked = Out::default();
    (1..5).try_for_each(|i| expect_one_value(c, i, &mut checked))?;
    checked.types = smallvec::smallvec![tensor(c.dtype(0), c.shape(0).map(<[Dim]>::to_vec))];
    Ok(checked)
}

/// The contrib QuantizeLinear: like x, in y_zero_point's type, uint8 without one.
fn quantize_linear(c: &Ctx) -> R {
    let dtype = if c.has(2) { c.dtype(2) } else { Some(DType::U8) };
    out(vec![tensor(dtype, c.shape(0).map(<[Dim]>::to_vec))])
}

/// DynamicQuantizeLSTM: Y [seq, dirs, B, hidden], Y_h and Y_c [dirs, B, hidden], float. Its
/// inputs as onnxruntime's kernel checks them ("Input W must have shape {1,3,16}"): W [dirs,
/// input, 4*hidden] (the ONNX LSTM's transposed), R [dirs, hidden, 4*hidden], B [dirs,
/// 8*hidden], sequence_lens [B], initial_h and initial_c [dirs, B, hidden], P [dirs,
/// 3*hidden]; each scale and zero point [dirs] or [dirs, 4*hidden], a per-channel zero point
/// all 0 ("InputWeight zero point must be zero"). hidden_size is required and above 0, and
/// the batch not empty (SIGABRT); clip is `FLOAT_IN`'s.
fn dynamic_quantize_lstm(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let dirs = Dim::Known(if c.node.attr_str("direction").as_deref() == Some("bidirectional") { 2 } else { 1 });
    let Some(h) = c.node.attr_int("hidden_size").filter(|h| (1..=i64::MAX / 8).contains(h)) else {
        return invalid(c, "needs a hidden_size above 0".into());
    };
    let (hidden, gates) = (Dim::Known(h), |k: i64| Dim::Known(k * h));
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None); 3]) };
    if x.len() != 3 {
        return invalid(c, format!("X has rank {}, not 3", x.len()));
    }
    if x[1] == Dim::Known(0) {
        return invalid(c, "an empty batch, which onnxruntime aborts on".into());
    }
    let mut o = Out::default();
    let d = || dirs.clone();
    let state = [d(), x[1].clone(), hidden.clone()];
    for (i, want) in [
        (1, vec![d(), x[2].clone(), gates(4)]),
        (2, vec![d(), hidden.clone(), gates(4)]),
        (3, vec![d(), gates(8)]),
        (4, vec![x[1].clone()]),
        (5, state.to_vec()),
        (6, state.to_vec()),
        (7, vec![d(), gates(3)]),
    ] {
        expect_shape(c, i, &want, &mut o)?;
    }
    for i in 8..12 {
        let want = if c.shape(i).is_some_and(|s| s.len() == 1) { vec![d()] } else { vec![d(), gates(4)] };
        expect_shape(c, i, &want, &mut o)?;
    }
    let nonzero = |i: usize| c.value(i).is_some_and(|v| v.iter().any(|z| *z != Dim::Known(0)));
    if let Some(i) = [9, 11].into_iter().find(|i| c.shape(*i).is_some_and(|s| s.len() == 2) && nonzero(*i)) {
        return invalid(c, format!("input {i}, a per-channel zero point, holds values other than 0"));
    }
    let y = vec![x[0].clone(), d(), x[1].clone(), hidden.clone()];
    o.types = smallvec::smallvec![
        tensor(dtype, Some(y)),
        tensor(dtype, Some(state.to_vec())),
        tensor(dtype, Some(state.to_vec()))
    ];
    Ok(o)
}

/// BiasSplitGelu: X [N, S, D] and a bias of D give [N, S, D/2].
fn bias_split_gelu(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(x), Some(b)) = (c.shape(0), c.shape(1)) else { return out(vec![tensor(dtype, None)]) };
    if x.len() != 3 || b.len() != 1 {
        return invalid(c, format!("X and bias have ranks {} and {}, not 3 and 1", x.len(), b.len()));
    }
    let half = match &b[0] {
        Dim::Known(n) if n % 2 != 0 => return invalid(c, format!("a bias of {n} does not split in two")),
        d => d.div_floor(&Dim::Known(2)),
    };
    out(vec![tensor(dtype, Some(vec![x[0].clone(), x[1].clone(), half]))])
}

/// Where a generation op (BeamSearch, GreedySearch, Sampling) keeps its inputs.
struct Generation {
    /// Slots of one-value inputs: max_length, min_length, the counts, length_penalty.
    scalars: &'static [usize],
    /// Inputs onnxruntime reads the first value of, in any shape but empty (it then aborts):
    /// repetition_penalty, logits_processor, Sampling's seed.
    firsts: &'static [usize],
    /// num_beams and num_return_sequences (BeamSearch only).
    beams: Option<(usize, usize)>,
    /// length_penalty and repetition_penalty, whose type is the scores'.
    penalties: &'static [usize],
    vocab_mask: usize,
    /// Masks of [batch, vocab]: prefix_vocab_mask, and Sampling's presence_mask.
    batch_vocab: &'static [usize],
    attention_mask: usize,
}

const BEAM: Generation = Generation {
    scalars: &[1, 2, 3, 4, 5],
    firsts: &[6, 11],
    beams: Some((3, 4)),
    penalties: &[5, 6],
    vocab_mask: 7,
    batch_vocab: &[8],
    attention_mask: 9,
};
const GREEDY: Generation = Generation {
    scalars: &[1, 2],
    firsts: &[3],
    beams: None,
    penalties: &[3],
    vocab_mask: 4,
    batch_vocab: &[5],
    attention_mask: 6,
};
const SAMPLING: Generation = Generation { firsts: &[3, 8], batch_vocab: &[5, 7], ..GREEDY };

/// BeamSearch, GreedySearch and Sampling run their `decoder` subgraph until `max_length`.
/// Outputs: sequences [B, num_return_sequences, max_length] (GreedySearch and Sampling
/// [B, max_length]); BeamSearch's sequences_scores [B, num_return_sequences] and scores
/// [max_length - S, B, num_beams, vocab]. input_ids is [B, S] (Whisper's model_type 2: audio
/// features [B, features, frames], after which S is 1); max_length must exceed S; the vocabulary is the
/// `vocab_size` attribute, at most the decoder's logits width, or else that width. As
/// onnxruntime 1.32 checks them at run time.
fn generation(c: &Ctx, g: &Generation) -> R {
    let whisper = c.node.op_type == "WhisperBeamSearch" || c.node.attr_int("model_type") == Some(2);
    let logits = c.subgraph_outputs.iter().find(|(n, _)| *n == "decoder").and_then(|(_, o)| o.first()?.as_ref());
    let dtype = g.penalties.iter().find(|i| c.has(**i)).map_or(logits.and_then(Type::dtype), |i| c.dtype(*i));
    let width = logits.and_then(Type::shape).and_then(|s| s.last()?.known());
    // A T5 model (model_type 1) runs an encoder first (onnxruntime: "GetAttr<GraphProto>
    // (\"encoder\") ... was false").
    if c.node.attr_int("model_type") == Some(1) && c.node.attr("encoder").is_none() {
        return invalid(c, "model_type 1 (T5) without an encoder graph".into());
    }
    // A vocab_size of -1 or 0 is not given (onnxruntime reads the logits' width then).
    if let Some(v) = c.node.attr_int("vocab_size").filter(|v| *v < -1) {
        return invalid(c, format!("vocab_size {v} is negative"));
    }
    let vocab = match (c.node.attr_int("vocab_size").filter(|v| *v > 0), width) {
        (Some(v), Some(w)) if v > w => return invalid(c, format!("vocab_size {v} exceeds the decoder's {w} logits")),
        (Some(v), _) => Dim::Known(v),
        (None, w) => w.map_or(Dim::Unknown, Dim::Known),
    };
    let mut checked = Out::default();
    g.scalars.iter().try_for_each(|i| expect_one_value(c, *i, &mut checked))?;
    if let Some(i) = g.firsts.iter().find(|i| c.shape(**i).is_some_and(|s| s.contains(&Dim::Known(0)))) {
        return invalid(c, format!("input {i} is empty, where one value is read"));
    }
    // A count of 1 to `max` where known ("num_beams shall be a positive integer no more than
    // 128", "num_return_sequences (4) shall be be no more than num_beams (3)").
    let positive = |i: usize, what: &str, max: Option<i64>| match c.ints(i).as_deref() {
        Some([v]) if *v < 1 || max.is_some_and(|m| *v > m) => {
            invalid(c, format!("{what} is {v}, not 1 to {}", max.map_or("any".into(), |m| m.to_string())))
        }
        Some([v]) => Ok(Dim::Known(*v)),
        _ => Ok(Dim::Unknown),
    };
    let max_length = positive(1, "max_length", Some(i64::from(i32::MAX)))?;
    let ids = c.shape(0);
    if let Some(x) = ids.filter(|x| x.len() != if whisper { 3 } else { 2 }) {
        return invalid(c, format!("input_ids has rank {}, not {}", x.len(), if whisper { 3 } else { 2 }));
    }
    let batch = ids.map_or(Dim::Unknown, |x| x[0].clone());
    let seq = ids.filter(|_| !whisper).map_or(Dim::Unknown, |x| x[1].clone());
    // "max_length (3) shall be greater than input sequence length (3)"; over a symbolic S, a
    // bound on input_ids' axis 1. Whisper's prompt is its decoder's: without decoder_input_ids
    // (input 10), the start token alone.
    let prompt = if !whisper || c.has(10) { seq.clone() } else { Dim::Known(1) };
    match (&prompt, max_length.known()) {
        (Dim::Known(s), Some(m)) if m <= *s => {
            return invalid(c, format!("max_length {m} is not above the input sequence length {s}"))
        }
        (Dim::Term(t), Some(m)) => checked.assumptions.push((1, Assumption::AtMost { size: t.clone(), max: m - 1 })),
        _ => {}
    }
    // GreedySearch and Sampling do not survive an empty prompt in onnxruntime 1.32 (it crashes,
    // or does not return); BeamSearch runs one.
    if g.beams.is_none() && !whisper {
        match &prompt {
            Dim::Known(0) => {
                return invalid(c, "input_ids is empty: onnxruntime crashes on an empty prompt".into());
            }
            Dim::Term(t) => checked.assumptions.push((1, Assumption::AtLeast { size: t.clone(), min: 1 })),
            _ => {}
        }
    }
    // repetition_penalty, the last penalty.
    let repetition = g.penalties.last().and_then(|i| c.float_value(*i)).and_then(|v| v.first());
    if let Some(p) = repetition.filter(|p| p.partial_cmp(&&0.0) != Some(std::cmp::Ordering::Greater)) {
        return invalid(c, format!("repetition_penalty is {p}, not above 0"));
    }
    expect_rank(c, g.vocab_mask, 1)?;
    expect_shape(c, g.vocab_mask, std::slice::from_ref(&vocab), &mut checked)?;
    for i in g.batch_vocab {
        expect_rank(c, *i, 2)?;
        expect_shape(c, *i, &[batch.clone(), vocab.clone()], &mut checked)?;
    }
    if let Some(x) = ids.filter(|_| !whisper) {
        expect_rank(c, g.attention_mask, 2)?;
        expect_shape(c, g.attention_mask, x, &mut checked)?;
    }
    let Some((beams_at, returned_at)) = g.beams else {
        checked.types = smallvec::smallvec![tensor(Some(DType::I32), Some(vec![batch, max_length]))];
        return Ok(checked);
    };
    let beams = positive(beams_at, "num_beams", Some(128))?;
    let returned = positive(returned_at, "num_return_sequences", beams.known())?;
    let steps = if whisper { Dim::Unknown } else { max_length.sub(&seq) };
    checked.types = smallvec::smallvec![
        tensor(Some(DType::I32), Some(vec![batch.clone(), returned.clone(), max_length])),
        tensor(dtype, Some(vec![batch.clone(), returned])),
        tensor(dtype, Some(vec![steps, batch, beams, vocab])),
    ];
    Ok(checked)
}

/// An attribute naming one of `allowed` (or absent) as onnxruntime requires.
fn one_of(c: &Ctx, name: &str, allowed: &[&str]) -> Result<(), RuleError> {
    match c.node.attr_str(name) {
        Some(v) if !allowed.contains(&v.as_str()) => invalid(c, format!("{name} {v:?} is not one of {allowed:?}")),
        _ => Ok(()),
    }
}

/// LinearAttentionGate: decay, and beta (from b), like `a` [.., H] with H above 0; dt_bias and
/// decay_scale hold H values each; b, read for beta only, has a's shape.
fn linear_attention_gate(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let beta = c.asks(1);
    if beta && !c.has(3) {
        return invalid(c, "the beta output needs b".into());
    }
    let Some(a) = c.shape(0) else { return out(vec![tensor(dtype, None); c.node.outputs().len()]) };
    let Some(h) = a.last() else { return invalid(c, "a is a scalar".into()) };
    if h.known() == Some(0) {
        return invalid(c, "a has no heads".into());
    }
    let mut checked = Out::default();
    expect_count(c, 1, h, &mut checked)?;
    expect_count(c, 2, h, &mut checked)?;
    if beta {
        expect_shape(c, 3, a, &mut checked)?;
    }
    checked.types = vec![tensor(dtype, Some(a.to_vec())); c.node.outputs().len()].into();
    Ok(checked)
}

/// GatedRMSNorm: Y like X [.., H * C], normalized in groups of C, the scale's length; the gate
/// has X's shape.
fn gated_rms_norm(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    one_of(c, "activation", &["silu", "swish", "sigmoid"])?;
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None)]) };
    let Some(last) = x.last() else { return invalid(c, "X is a scalar".into()) };
    let mut checked = Out::default();
    expect_shape(c, 2, x, &mut checked)?;
    match (last.known(), c.shape(1).and_then(|s| Dim::product(s).known())) {
        (_, Some(0)) => return invalid(c, "an empty scale".into()),
        (Some(n), Some(g)) if n % g != 0 => {
            return invalid(c, format!("X's last size {n} is not a multiple of the scale's {g}"))
        }
        _ => {}
    }
    checked.types = smallvec::smallvec![tensor(dtype, Some(x.to_vec()))];
    Ok(checked)
}

/// BranchwiseRMSNorm: Y like X, grouped [.., C, H] or, with `num_branches` C, flattened
/// [.., C * H]; C and H above 0. The optional scale is [H], [C * H] or [C, H].
fn branchwise_rms_norm(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None)]) };
    let (branches, h) = match (c.node.attr_int("num_branches").unwrap_or(0), x) {
        (b, _) if b < 0 => return invalid(c, format!("num_branches is {b}")),
        (0, [.., b, h]) => (b.clone(), h.clone()),
        (0, _) => return invalid(c, format!("a grouped X [.., C, H] has rank 2 or more, not {}", x.len())),
        (b, [.., w]) => match w.known() {
            Some(n) if n <= 0 || n % b != 0 => {
                return invalid(c, format!("X's last size {n} is not a positive multiple of num_branches {b}"))
            }
            _ => (Dim::Known(b), w.div_floor(&Dim::Known(b))),
        },
        (_, []) => return invalid(c, "X is a scalar".into()),
    };
    if branches.known() == Some(0) || h.known() == Some(0) {
        return invalid(c, "a branch count or hidden size of 0".into());
    }
    if let Some(s) = c.shape(1) {
        let width = branches.mul(&h);
        // Sizes that may be equal: the same, or either not known.
        let may = |a: &Dim, b: &Dim| a == b || a.known().is_none() || b.known().is_none();
        let fits = match s {
            [n] => may(n, &h) || may(n, &width),
            [a, b] => may(a, &branches) && may(b, &h),
            _ => false,
        };
        if !fits {
            let want = format!("[{h}], [{width}] or [{branches}, {h}]");
            return invalid(c, format!("the scale is {}, not {want}", render(s)));
        }
    }
    out(vec![tensor(dtype, Some(x.to_vec()))])
}

/// Tokenizer: strings [C] or [N, C] split into [C, D] or [N, C, D], D the most tokens of any
/// string (2 more with `mark`), not known here. An empty input gives [0], or [N, 0] of [N, C],
/// as onnxruntime 1.32 does; a symbolic size is taken as not 0. `mincharnum` is above 0, and
/// `separators` or `tokenexp` is set.
fn tokenizer(c: &Ctx) -> R {
    if c.node.attr_int("mincharnum").is_some_and(|m| m <= 0) {
        return invalid(c, "mincharnum must be above 0".into());
    }
    if c.node.attr("separators").is_none() && c.node.attr("tokenexp").is_none() {
        return invalid(c, "neither separators nor tokenexp is set".into());
    }
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None)]) };
    let y = match x {
        [_] | [_, _] if x.iter().any(|d| d.known() == Some(0)) => [&x[..x.len() - 1], &[Dim::Known(0)]].concat(),
        [_] | [_, _] => [x, &[Dim::Unknown]].concat(),
        _ => return invalid(c, format!("X is [C] or [N, C], not of rank {}", x.len())),
    };
    out(vec![tensor(dtype, Some(y))])
}

/// GatedDeltaNet, token-major: query [T, Hq, Dk] (or [B, S, Hq, Dk]), key like it, value
/// [.., Hv, Dv] with Hv a positive multiple of Hq; or, without key and value, a packed query
/// [T, 2 Hq Dk + Hv Dv] whose other heads come from initial_state. Output [.., Hv, Dv];
/// final_state [B, Hv, Dv, Dk] (float32, as initial_state); state_update [B, C (decay width +
/// Hq Dk + Hv Dv)], C the `state_update_capacity` (0 to 8), the decay width Hv Dk for a decay
/// [.., Hv, Dk] and otherwise Hv. The batch is the rank-4 query's, cu_seqlens' length less
/// one, or initial_state's, which then divides T. decay and beta are given as update_rule uses
/// them.
fn gated_delta_net(c: &Ctx) -> R {
    rules::update_rule(c, false).or_else(|e| invalid(c, e))?;
    let gate = c.node.attr_str("gate_activation").unwrap_or_else(|| "none".into());
    if gate != "none" && !(c.has(7) && c.has(8)) {
        return invalid(c, format!("gate_activation '{gate}' needs a_log and dt_bias"));
    }
    let capacity = c.node.attr_int("state_update_capacity").unwrap_or(0);
    if !(0..=8).contains(&capacity) || (capacity > 0) != c.has(9) {
        return invalid(c, format!("state_update_capacity {capacity} (0 to 8, with capture_count when above 0)"));
    }
    let (dtype, f32) = (c.dtype(0), Some(DType::F32));
    let unknown = || out(vec![tensor(dtype, None), tensor(f32, None), tensor(f32, None)]);
    let Some(q) = c.shape(0) else { return unknown() };
    let packed = !c.has(1);
    if packed == c.has(2) {
        return invalid(c, "a key and a value are both given or both omitted".into());
    }
    let ranks: &[usize] = if packed { &[2, 3] } else { &[3, 4] };
    if !ranks.contains(&q.len()) {
        return invalid(c, format!("the query has rank {}, not {ranks:?}", q.len()));
    }
    let lead = &q[..q.len() - if packed { 1 } else { 2 }];
    if lead.iter().any(|d| d.known() == Some(0)) {
        return invalid(c, "no tokens".into());
    }
    if lead.len() == 2 && c.has(3) {
        return invalid(c, "cu_seqlens with a rank-4 query (ragged packing is rank 3)".into());
    }
    let mut checked = Out::default();
    let state = c.shape(6);
    let (hq, dk, hv, dv) = if packed {
        let Some(s) = state else { return invalid(c, "a packed query needs initial_state".into()) };
        expect_rank(c, 6, 4)?;
        let (hv, dv, dk) = (s[1].clone(), s[2].clone(), s[3].clone());
        let width = q[q.len() - 1].sub(&hv.mul(&dv));
        if let (Some(w), Some(d)) = (width.known(), dk.known()) {
            if d <= 0 || w <= 0 || d.checked_mul(2).is_none_or(|t| w % t != 0) {
                return invalid(c, format!("the packed query's {} is not 2 Hq {d} + {}", q[q.len() - 1], hv.mul(&dv)));
            }
        }
        (width.div_floor(&dk.mul(&Dim::Known(2))), dk, hv, dv)
    } else {
        let (Some(_), Some(v)) = (c.shape(1), c.shape(2)) else { return unknown() };
        expect_shape(c, 1, q, &mut checked)?;
        expect_rank(c, 2, q.len())?;
        let v_lead = rules::pin_shapes(&v[..lead.len()], lead, &mut checked);
        v_lead.map_err(|e| RuleError::Invalid(format!("GatedDeltaNet: the value's sizes are not the query's: {e}")))?;
        (q[lead.len()].clone(), q[lead.len() + 1].clone(), v[lead.len()].clone(), v[lead.len() + 1].clone())
    };
    if dk.known() == Some(0) || dv.known() == Some(0) {
        return invalid(c, "a head size of 0".into());
    }
    match (hq.known(), hv.known()) {
        (Some(h), Some(v)) if h <= 0 || v <= 0 || v % h != 0 => {
            return invalid(c, format!("num_heads_v ({v}) is not a positive multiple of num_heads_q ({h})"))
        }
        _ => {}
    }
    let batch = match (lead, c.shape(3), state) {
        ([b, _], ..) => b.clone(),
        (_, Some([n]), _) if n.known().is_none_or(|n| n >= 2) => {
            if let Some(v) = c.ints(3).filter(|v| v.len() >= 2) {
                let (rises, ends) =
                    (v.windows(2).all(|w| w[0] <= w[1]), lead[0].known().is_none_or(|t| v[v.len() - 1] == t));
                if v[0] != 0 || !rises || !ends {
                    return invalid(c, format!("cu_seqlens {v:?} does not rise from 0 to the tokens"));
                }
            }
            n.sub(&Dim::Known(1))
        }
        (_, Some(_), _) => return invalid(c, "cu_seqlens is not a vector of 2 or more".into()),
        (_, None, Some(s)) => {
            if let (Some(t), Some(b)) = (lead[0].known(), s[0].known()) {
                if b <= 0 || t % b != 0 {
                    return invalid(c, format!("{t} tokens are not a multiple of the batch {b}"));
                }
            }
            s[0].clone()
        }
        (_, None, None) => return invalid(c, "without cu_seqlens, initial_state gives the batch".into()),
    };
    let full = [batch.clone(), hv.clone(), dv.clone(), dk.clone()];
    expect_shape(c, 6, &full, &mut checked)?;
    let per_head = [lead, std::slice::from_ref(&hv)].concat();
    expect_shape(c, 5, &per_head, &mut checked)?;
    let decay_width = match c.shape(4) {
        Some(d) if d.len() == per_head.len() => {
            expect_shape(c, 4, &per_head, &mut checked)?;
            hv.clone()
        }
        Some(_) => {
            expect_shape(c, 4, &[&per_head[..], std::slice::from_ref(&dk)].concat(), &mut checked)?;
            hv.mul(&dk)
        }
        None => hv.clone(),
    };
    let update = decay_width.add(&hq.mul(&dk)).add(&hv.mul(&dv)).mul(&Dim::Known(capacity));
    checked.types = smallvec::smallvec![
        tensor(dtype, Some([lead, &[hv, dv]].concat())),
        tensor(f32, Some(full.to_vec())),
        tensor(f32, Some(vec![batch, update])),
    ];
    Ok(checked)
}

/// GatedAdd: X + Y * gate, like X [.., C] (C above 0); Y has X's shape, the gate X's leading
/// sizes and a last of 1, or with gate_weight [K, 1] a last of K.
fn gated_add(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return out(vec![tensor(dtype, None)]) };
    let Some(last) = x.last() else { return invalid(c, "X is a scalar".into()) };
    if last.known() == Some(0) {
        return invalid(c, "X's last size is 0".into());
    }
    let mut checked = Out::default();
    expect_shape(c, 1, x, &mut checked)?;
    let k = match c.shape(3) {
        Some(w) => {
            expect_rank(c, 3, 2)?;
            expect_shape(c, 3, &[w[0].clone(), Dim::Known(1)], &mut checked)?;
            w[0].clone()
        }
        None if c.has(3) => Dim::Unknown,
        None => Dim::Known(1),
    };
    expect_shape(c, 2, &[&x[..x.len() - 1], &[k]].concat(), &mut checked)?;
    checked.types = smallvec::smallvec![tensor(dtype, Some(x.to_vec()))];
    Ok(checked)
}

/// An experimental op exists up to opset 9 ("ai.onnx:ImageScaler(10) is not a registered
/// function/op").
fn experimental(c: &Ctx) -> Result<(), RuleError> {
    match c.opset {
        10.. => invalid(c, format!("an experimental op onnx dropped at opset 10; the model imports {}", c.opset)),
        _ => Ok(()),
    }
}

/// Scale, ScaledTanh, ParametricSoftplus, Affine: elementwise, like the input.
fn like_input(c: &Ctx) -> R {
    experimental(c)?;
    out(vec![tensor(c.dtype(0), c.shape(0).map(<[Dim]>::to_vec))])
}

/// ScaledTanh and ParametricSoftplus, whose kernels need both `alpha` and `beta`.
fn alpha_beta(c: &Ctx) -> R {
    if c.node.attr("alpha").is_none() || c.node.attr("beta").is_none() {
        return invalid(c, "alpha and beta are required".into());
    }
    like_input(c)
}

/// ImageScaler: like its [N, C, H, W] input, with one `bias` per channel (required).
fn image_scaler(c: &Ctx) -> R {
    experimental(c)?;
    expect_rank(c, 0, 4)?;
    let Some(crate::ir::AttrValue::Floats(bias)) = c.node.attr("bias") else {
        return invalid(c, "bias is required".into());
    };
    let bias = bias.len();
    if let Some(ch) = c.shape(0).and_then(|x| x[1].known()).filter(|ch| *ch != bias as i64) {
        return invalid(c, format!("{bias} biases for {ch} channels"));
    }
    like_input(c)
}

/// Crop of [N, C, H, W] by `border` [left, top, right, bottom]: [N, C, H - top - bottom, W -
/// left - right], or with `scale` [h, w] an h by w window from the top left corner, which must
/// fit.
fn crop(c: &Ctx) -> R {
    experimental(c)?;
    expect_rank(c, 0, 4)?;
    let border = c.node.attr_ints("border").unwrap_or_default();
    let [left, top, right, bottom] = border[..] else {
        return invalid(c, format!("{} border sizes, not 4", border.len()));
    };
    let scale = c.node.attr_ints("scale");
    if border.iter().chain(scale.unwrap_or_default()).any(|b| *b < 0) || scale.is_some_and(|s| s.len() != 2) {
        return invalid(c, "a negative border or scale, or a scale of other than 2 sizes".into());
    }
    let Some(x) = c.shape(0) else { return out(vec![tensor(c.dtype(0), None)]) };
    let mut checked = Out::default();
    let mut y = x.to_vec();
    for (axis, first, last, window) in [(2, top, bottom, scale.map(|s| s[0])), (3, left, right, scale.map(|s| s[1]))] {
        let need = first.saturating_add(window.unwrap_or(last));
        match &x[axis] {
            Dim::Known(n) if *n < need => {
                return invalid(c, format!("an axis of {n} is narrower than the crop's {need}"))
            }
            Dim::Term(t) => checked.assumptions.push((axis, Assumption::AtLeast { size: t.clone(), min: need })),
            _ => {}
        }
        y[axis] = window.map_or_else(|| x[axis].sub(&Dim::Known(first.saturating_add(last))), Dim::Known);
    }
    checked.types = smallvec::smallvec![tensor(c.dtype(0), Some(y))];
    Ok(checked)
}

/// DynamicTimeWarping of a cost matrix [M, N] (or [1, M, N]): the path's points as int32 [2, L],
/// max(M, N) <= L < M + N. L is known where the matrix is empty (0) or one row or column thick
/// (the longer side).
fn dynamic_time_warping(c: &Ctx) -> R {
    let Some(x) = c.shape(0) else { return out(vec![tensor(Some(DType::I32), None)]) };
    let (m, n) = match x {
        [m, n] | [Dim::Known(1), m, n] => (m, n),
        _ => return invalid(c, format!("a cost of shape {}, not [M, N] or [1, M, N]", render(x))),
    };
    let len = match (m.known(), n.known()) {
        (Some(0), _) | (_, Some(0)) => Dim::Known(0),
        (Some(1), _) => n.clone(),
        (_, Some(1)) => m.clone(),
        _ => Dim::Unknown,
    };
    out(vec![tensor(Some(DType::I32), Some(vec![Dim::Known(2), len]))])
}

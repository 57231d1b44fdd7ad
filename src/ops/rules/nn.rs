//! Neural-network rules other than convolution and pooling: Resize, MatMul and Gemm, the
//! normalizations, Softmax and its kin along an axis, NonMaxSuppression, LRN, RoiAlign,
//! GridSample, AffineGrid, Det, the losses and Dropout.

use super::{
    attr_dtype, axes_or_all, axis_in, dim, exact_div, expect_count, expect_rank, expect_shape, float_size, invalid,
    like_input, matmul_shape, not_empty, numel, one, one_value, op_err, outs, pin_shapes, rank_only, ty, unknown_rank,
    R,
};
use crate::diag::Code;
use crate::dtype::DType;
use crate::ir::AttrValue;
use crate::ops::{Ctx, Out, RuleError};
use crate::shape::{arith, multi, render, uni, Dim, Shape, Type};

/// Inputs `inputs` are vectors of `len` elements: normalizations' scales, biases, means and
/// variances.
fn vectors_of(c: &Ctx, inputs: std::ops::Range<usize>, len: &Dim, out: &mut Out) -> Result<(), RuleError> {
    inputs.into_iter().try_for_each(|i| expect_shape(c, i, std::slice::from_ref(len), out))
}

pub fn resize(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let rank = data.len();
    let unknown = || outs(vec![ty(dtype, Some(unknown_rank(rank)))]);
    let (scales_at, sizes_at) = match (c.node.op_type.as_str(), c.opset) {
        ("Upsample", v) if v < 9 => (None, None),
        ("Upsample", _) | ("Resize", 10) => (Some(1), None),
        _ => (Some(2), Some(3)),
    };
    // One of scales and sizes, an empty one counting as none (onnx's inference: "Either
    // `sizes` or `scales` must be provided, but not both of them").
    let given = |i: usize| c.has(i) && c.shape(i).is_none_or(|s| s != [Dim::Known(0)]);
    if let (Some(a), Some(b)) = (scales_at, sizes_at) {
        if given(a) == given(b) {
            let what =
                if given(a) { "both scales and sizes" } else { "neither scales nor sizes (an empty one is none)" };
            return invalid(format!("Resize: {what}; it takes one of them"));
        }
    }
    // How nearest rounds, read (and refused by onnxruntime when unknown) in nearest mode only.
    let nearest = c.node.attr_str("mode").is_none_or(|m| m == "nearest");
    if let Some(m) = c.node.attr_str("nearest_mode").filter(|_| c.opset >= 11 && nearest) {
        if !["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", ""].contains(&m.as_str()) {
            return invalid(format!(
                "Resize: nearest_mode '{m}'; it takes round_prefer_floor, round_prefer_ceil, floor or ceil"
            ));
        }
    }
    let axes = axes_or_all(c.node.attr_ints("axes"), rank, &c.node.op_type)?;
    // A crop takes a start and an end for each axis, or for each listed one (onnxruntime:
    // "size of roi array should be 2 * N where N is the rank of input tensor X").
    if c.opset >= 11 && c.node.attr_str("coordinate_transformation_mode").as_deref() == Some("tf_crop_and_resize") {
        let n = c.shape(1).and_then(numel);
        let fits = |n: usize| n == 2 * rank || (c.node.attr_ints("axes").is_some() && n == 2 * axes.len());
        if let Some(n) = n.filter(|n| !fits(*n)) {
            return invalid(format!("Resize: a roi of {n} values for a crop of {} axes", axes.len()));
        }
    }
    let mut shape = data.to_vec();
    // Each axis's scale where known, for the layouts onnxruntime interpolates (`ort_layout`).
    let mut per_axis = vec![Some(1.0); rank];
    if let Some(i) = sizes_at.filter(|i| given(*i)) {
        let Some(sizes) = c.value(i) else { return unknown() };
        if sizes.len() != axes.len() {
            return invalid(format!("Resize: {} sizes for {} axes", sizes.len(), axes.len()));
        }
        let policy = c.node.attr_str("keep_aspect_ratio_policy").unwrap_or_else(|| "stretch".into());
        // An empty axis cannot grow; stretched, a size of 0 from a non-empty axis is a scale of
        // 0 (onnxruntime refuses both; a policy's one scale is checked below).
        let stretch = policy == "stretch";
        for (a, s) in axes.iter().zip(sizes) {
            match (&data[*a], s) {
                (Dim::Known(d), Dim::Known(0)) if *d > 0 && stretch => {
                    return invalid(format!(
                        "Resize: size 0 for axis {a} of {d} is a scale of 0; scales must be above 0"
                    ));
                }
                (Dim::Known(0), Dim::Known(n)) if *n > 0 => {
                    return invalid(format!("Resize: axis {a} is empty and cannot grow to {n}"));
                }
                (d, s) if stretch => {
                    per_axis[*a] = match (d, s) {
                        (Dim::Known(0), _) => Some(1.0),
                        (Dim::Known(d), Dim::Known(s)) => Some(*s as f64 / *d as f64),
                        (Dim::Term(x), Dim::Term(y)) if x == y => Some(1.0),
                        _ => None,
                    };
                    shape[*a] = s.clone();
                }
                _ => {}
            }
        }
        if !stretch {
            let pairs: Option<Vec<(f64, i64)>> = axes
                .iter()
                .enumerate()
                .map(|(k, a)| Some((sizes[k].known()? as f64 / data[*a].known()? as f64, data[*a].known()?)))
                .collect();
            let Some(pairs) = pairs else { return unknown() };
            let pick = pairs.iter().map(|p| p.0);
            let scale =
                if policy == "not_larger" { pick.fold(f64::INFINITY, f64::min) } else { pick.fold(0.0, f64::max) };
            if scale <= 0.0 {
                return invalid(format!(
                    "Resize: the sizes give the scale {scale} under {policy}; scales must be above 0"
                ));
            }
            for (k, a) in axes.iter().enumerate() {
                shape[*a] = float_size((scale * pairs[k].1 as f64 + 0.5).floor());
                per_axis[*a] = Some(scale);
            }
        }
        let mut out = Out::default();
        ort_layout(c, &per_axis, &mut out);
        out.types = smallvec::smallvec![ty(dtype, Some(shape))];
        return Ok(out);
    }
    // onnx's inference: "Providing `scales` is incompatible with a `keep_aspect_ratio_policy`
    // other than \"stretch\"".
    let policy = c.node.attr_str("keep_aspect_ratio_policy").filter(|p| p != "stretch");
    if let Some(p) = policy.filter(|_| scales_at.is_some_and(given)) {
        return invalid(format!("Resize: scales with keep_aspect_ratio_policy {p}, which takes sizes"));
    }
    let scales: Option<Vec<f64>> = match scales_at {
        None => c.node.attr("scales").and_then(|a| match a {
            AttrValue::Floats(f) => Some(f.iter().map(|x| *x as f64).collect()),
            _ => None,
        }),
        Some(i) => c.numbers(i),
    };
    let Some(scales) = scales else { return unknown() };
    if scales.len() != axes.len() {
        return invalid(format!("Resize: {} scales for {} axes", scales.len(), axes.len()));
    }
    // Upsample's scales are 1 or more, Resize's above 0 (the spec; onnxruntime refuses others).
    let (op, upsample) = (&c.node.op_type, c.node.op_type == "Upsample");
    let mut out = Out::default();
    for (&a, &s) in axes.iter().zip(&scales) {
        per_axis[a] = Some(s);
        if !(s >= 1.0 || (s > 0.0 && !upsample)) {
            let least = if upsample { "1 or more" } else { "above 0" };
            return invalid(format!("{op}: scale {s} at axis {a}; scales must be {least}"));
        }
        shape[a] = match &data[a] {
            Dim::Known(d) => {
                let o = float_size(f64::from((*d as f32) * (s as f32)).floor());
                if o == Dim::Known(0) && *d > 0 {
                    let msg = format!("Resize: axis {a} of {d} scaled by {s} comes out empty (floor({d} x {s}) = 0); onnxruntime returns an empty tensor");
                    out.warnings.push((crate::diag::Code::ResizeEmpty, msg));
                }
                o
            }
            other if s == 1.0 => other.clone(),
            // Whole-number scales and their reciprocals stay exact for any size.
            other if s > 1.0 && s.fract() == 0.0 && s < 1e9 => other.mul(&Dim::Known(s as i64)),
            other if s > 0.0 && s < 1.0 && (1.0 / s).fract() == 0.0 => other.div_floor(&Dim::Known((1.0 / s) as i64)),
            _ => Dim::Unknown,
        };
    }
    // Upsample 9 and Resize 10: an input of scales (Upsample 7's attribute runs).
    if rank == 0 && scales_at.is_some() && sizes_at.is_none() {
        let msg = format!("{op} of a scalar: its scales are empty, which onnxruntime takes for none; it refuses it");
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
    ort_layout(c, &per_axis, &mut out);
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

/// onnxruntime interpolates linearly over a 2-D or 3-D input, or the inner axes of a 4-D or
/// 5-D one (a 4-D one's middle two too), and cubically over a 2-D input or a 4-D one's inner
/// or middle two axes, those only growing unless `antialias` (its "'Cubic' mode only
/// supports"), and no nearest with `antialias`. The spec takes any axes and has nearest
/// ignore `antialias`: what onnxruntime refuses is `runtime-differs`.
/// `scales` holds each axis's scale where known; a layout that may fit is not flagged.
fn ort_layout(c: &Ctx, scales: &[Option<f64>], out: &mut Out) {
    // Three-valued: 0 no, 1 maybe, 2 yes; `min` is and, `max` is or.
    let is = |k: usize, f: fn(f64) -> bool| scales[k].map_or(1, |s| 2 * u8::from(f(s)));
    let one = |k| is(k, |s| s == 1.0);
    let grows = |k| is(k, |s| s >= 1.0);
    let antialias = c.node.attr_int("antialias").unwrap_or(0) != 0;
    let (op, mode) = (&c.node.op_type, c.node.attr_str("mode").unwrap_or_else(|| "nearest".into()));
    let runs = match (mode.as_str(), scales.len()) {
        // "when anti-aliasing is set, Resize only supports mode `LINEAR` and `CUBIC`"; the
        // spec has nearest ignore it.
        ("nearest", _) if antialias => 0,
        ("linear", 2 | 3) | ("cubic", 2) => 2,
        ("linear", 4) => one(0).min(one(1).max(one(3))),
        ("linear", 5) => one(0).min(one(1)),
        ("cubic", 4) => {
            let middle = one(3).min(if antialias { 2 } else { grows(1).min(grows(2)) });
            one(0).min(one(1).max(middle))
        }
        ("linear" | "cubic", _) => 0,
        _ => 2,
    };
    // "exclude_outside can be set to 1 when mode is CUBIC"; the spec reads it in any mode.
    if c.node.attr_int("exclude_outside").is_some_and(|e| e != 0) && mode != "cubic" {
        let msg = format!("{op}: exclude_outside in {mode} mode, which onnxruntime takes only in cubic mode");
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
    if runs == 0 {
        let scales: Vec<String> = scales.iter().map(|s| s.map_or("?".into(), |s| s.to_string())).collect();
        let aa = if antialias { " with antialias" } else { "" };
        let msg = format!("{op}: onnxruntime has no {mode} kernel{aa} for scales [{}]", scales.join(", "));
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
}

pub fn matmul(c: &Ctx) -> R {
    let (bi, dtype) = match c.node.op_type.as_str() {
        "MatMulInteger" => (1, Some(DType::I32)),
        "QLinearMatMul" => (3, c.dtype(7)),
        _ => (1, c.dtype(0)),
    };
    let mut out = Out::default();
    if bi == 3 {
        // A's and y's zero points have their scale's shape (the spec), or both hold one element
        // (onnxruntime runs a scalar beside a [1]). onnxruntime runs b's of unlike shapes.
        for (s, z) in [(1, 2), (6, 7)] {
            let one = |i| c.shape(i).and_then(numel) == Some(1);
            if let Some(scale) = c.shape(s).filter(|_| !(one(s) && one(z))) {
                expect_shape(c, z, scale, &mut out)?;
            }
        }
    }
    let (Some(a), Some(b)) = (c.shape(0), c.shape(bi)) else { return outs(vec![ty(dtype, None)]) };
    if bi == 3 || c.has(2) || c.has(3) {
        let (rows, cols): (&[usize], &[usize]) = if bi == 3 { (&[1, 2, 6, 7], &[4, 5]) } else { (&[2], &[3]) };
        quantized_per(c, a, b, (rows, cols))?;
        // onnxruntime takes one value per row of a in neither op, and one per column of b as
        // [N] only for a 2-D b ("weight zero point must be a scalar, 1D tensor of size 1, or
        // last to second dimension is 1").
        let per_row = rows.iter().find(|i| c.shape(**i).is_some_and(|s| !one_value(s)));
        let per_col = cols.iter().find(|i| c.shape(**i).is_some_and(|s| s.len() == 1 && !one_value(s)) && b.len() != 2);
        if let Some(i) = per_row.or(per_col) {
            let what = if per_row.is_some() { "one value per row of a" } else { "a vector per column of a b not 2-D" };
            let msg = format!("{}: input {i} holds {what}, which onnxruntime refuses", c.node.op_type);
            out.warnings.push((Code::RuntimeDiffers, msg));
        }
    }
    let (shape, assumptions) = matmul_shape(a, b)?;
    out.assumptions.extend(assumptions);
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

/// The quantization parameters of a quantized MatMul: one value, or (inputs `rows`) one per
/// row of `a`, [M] or a's shape with a last size of 1, or (inputs `cols`) one per column of
/// `b`, [N] or b's shape with a K of 1; the spec's shapes. onnxruntime runs per-row ones in
/// neither op, which is its limit.
pub(in crate::ops) fn quantized_per(
    c: &Ctx,
    a: &[Dim],
    b: &[Dim],
    (rows, cols): (&[usize], &[usize]),
) -> Result<(), RuleError> {
    let like = |s: &[Dim], want: &[Dim]| {
        s.len() == want.len() && s.iter().zip(want).all(|(x, y)| x.known().zip(y.known()).is_none_or(|(x, y)| x == y))
    };
    // The one-per forms of a matrix `x`: its size `from_end` axes from the end, alone, or `x`
    // with the other of its last two sizes 1.
    let per = |x: &[Dim], from_end: usize| -> Vec<Vec<Dim>> {
        let n = x.len();
        if n < 2 {
            return vec![];
        }
        let mut stretched = x.to_vec();
        stretched[n + from_end - 3] = Dim::Known(1);
        vec![vec![x[n - from_end].clone()], stretched]
    };
    for (inputs, forms, what) in [(rows, per(a, 2), "row of a"), (cols, per(b, 1), "column of b")] {
        for &i in inputs {
            let Some(s) = c.shape(i) else { continue };
            if one_value(s) || forms.iter().any(|f| like(s, f)) {
                continue;
            }
            let (op, s) = (&c.node.op_type, render(s));
            return invalid(format!("{op}: input {i} of shape {s} is neither one value nor one per {what}"));
        }
    }
    Ok(())
}

/// Gemm: `Y[M,N] = alpha * A' B' + beta * C`, C stretching unidirectionally to `[M,N]` (with
/// `broadcast=1` before opset 7, where without it C must be `[M,N]`).
pub fn gemm(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(a), Some(b)) = (c.shape(0), c.shape(1)) else {
        return outs(vec![ty(dtype, Some(unknown_rank(2)))]);
    };
    let trans = |n| c.node.attr_int(n).unwrap_or(0) != 0;
    let y = arith::gemm(a, b, trans("transA"), trans("transB")).map_err(op_err(&c.node.op_type))?.to_vec();
    let mut out = one(Type::tensor(dtype, Some(y.clone())));
    if let Some(cs) = c.shape(2) {
        if c.opset < 7 && c.node.attr_int("broadcast").unwrap_or(0) == 0 {
            if cs.len() != 2 || multi(&[cs, &y]).map_or(true, |b| b.shape != y) {
                return invalid(format!(
                    "without broadcast=1, Gemm's C must be [M, N] = {}, got {}",
                    render(&y),
                    render(cs)
                ));
            }
        } else {
            out.assumptions = uni(&y, cs, 2).map_err(RuleError::Broadcast)?.assumptions;
        }
    }
    Ok(out)
}

pub fn batch_norm(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let x = c.shape(0).map(<[Dim]>::to_vec);
    // [N, C, ...], or [N] of one channel (onnxruntime: "Invalid input X: NumDimensions() < 1").
    if x.as_ref().is_some_and(Vec::is_empty) {
        return invalid("BatchNormalization: a scalar input; it takes [N] or [N, C, ...]".into());
    }
    // From opset 14, one output in inference mode and three in training mode (onnx's inference:
    // "This number of op outputs should be 3 when Training_mode = True").
    let training = c.node.attr_int("training_mode").unwrap_or(0) != 0;
    let (want, mode) = if training { (3, "training") } else { (1, "inference") };
    let n = c.node.outputs.len();
    if c.opset >= 14 && n != want {
        return invalid(format!("BatchNormalization: {n} outputs in {mode} mode; it gives {want}"));
    }
    // onnxruntime dies of SIGSEGV when the running mean or variance is left out.
    if let Some(k) = c.node.outputs().iter().position(Option::is_none).filter(|_| c.opset >= 14 && training) {
        return invalid(format!(
            "BatchNormalization: output {k} is left out in training mode, which onnxruntime crashes on"
        ));
    }
    let mut out = Out::default();
    // Scale, bias, mean and variance hold one value per channel, but per element of [C, ...]
    // when `spatial` (to opset 8) is not 1, as onnxruntime reads it ("Invalid input scale:
    // NumDimensions() != 3").
    match (x.as_deref(), c.node.attr_int("spatial")) {
        (Some([_, ch, ..]), None | Some(1)) => vectors_of(c, 1..5, ch, &mut out)?,
        (Some([_, rest @ ..]), Some(_)) if !rest.is_empty() => {
            (1..5).try_for_each(|i| expect_shape(c, i, rest, &mut out))?;
        }
        _ => {}
    }
    let mut types = vec![ty(dtype, x.clone())];
    let n = c.node.outputs.len();
    if c.opset >= 14 {
        // Running mean and variance take the shapes of inputs 3 and 4.
        let stats = [3, 4].into_iter().take(n.saturating_sub(1));
        types.extend(stats.map(|i| ty(c.dtype(i), c.shape(i).map(<[Dim]>::to_vec))));
    } else {
        let ch = dim(c, 0, 1);
        types.extend((1..n).map(|_| ty(dtype, Some(vec![ch.clone()]))));
    }
    out.types = types.into();
    Ok(out)
}

/// MeanVarianceNormalization: like its input, over `axes` (default [0, 2, 3]). onnxruntime
/// 1.32 normalizes over those within the input's rank and refuses none ("No valid axes are
/// specified"), as the spec's body refuses any outside.
pub fn mean_variance_norm(c: &Ctx) -> R {
    let out = like_input(c);
    let Some(r) = c.shape(0).map(|x| x.len() as i64) else { return Ok(out) };
    let axes = c.node.attr_ints("axes").map_or(vec![0, 2, 3], <[i64]>::to_vec);
    if !axes.iter().any(|a| (-r..r).contains(a)) {
        return invalid(format!("MeanVarianceNormalization: no axis of {axes:?} is within rank {r}"));
    }
    Ok(out)
}

/// InstanceNormalization: one scale and bias per channel of an input of rank 3 or more
/// (onnxruntime refuses rank 2).
pub fn instance_norm(c: &Ctx) -> R {
    let mut out = like_input(c);
    match c.shape(0) {
        Some(x) if x.len() < 3 => return invalid(format!("InstanceNormalization: input rank {} is below 3", x.len())),
        Some(x) => vectors_of(c, 1..3, &x[1], &mut out)?,
        None => {}
    }
    Ok(out)
}

/// GroupNormalization: the groups divide the channels; scale and bias hold one value per
/// channel from opset 21, one per group before (or one value in all), in any shape: the
/// function that defines the op reshapes them, and onnxruntime runs a [1, C] or [2, C/2] one.
pub fn group_norm(c: &Ctx) -> R {
    let mut out = like_input(c);
    let g = c.node.attr_int("num_groups").unwrap_or(0);
    if g < 1 {
        return invalid(format!("GroupNormalization: num_groups {g} is not positive"));
    }
    // [N, C, ...]: its body's Reshape to [N, groups, -1] fails at load below rank 2.
    if let Some(r) = c.shape(0).map(<[Dim]>::len).filter(|r| *r < 2) {
        return invalid(format!("GroupNormalization: input rank {r} is below 2"));
    }
    if let Some([_, ch, ..]) = c.shape(0) {
        let (_, multiple) =
            exact_div(ch, g).map_err(|e| RuleError::Invalid(format!("GroupNormalization: channels: {e}")))?;
        out.assumptions.extend(multiple.map(|m| (1, m)));
        // onnxruntime 1.32 broadcasts a scale or bias of one value.
        let per = if c.opset >= 21 { ch.clone() } else { Dim::Known(g) };
        for i in (1..3).filter(|i| !c.shape(*i).is_some_and(one_value)) {
            expect_count(c, i, &per, &mut out)?;
        }
    }
    // onnxruntime 1.32 runs the function that defines the op, whose Reshape to [N, groups, -1]
    // refuses an empty input ("The input tensor cannot be reshaped to the requested shape").
    if let Some(x) = c.shape(0) {
        let what = "GroupNormalization: an empty input";
        match x.iter().position(|d| d.known() == Some(0)) {
            Some(a) => not_empty(&x[a], a, what, &mut out),
            None => x.iter().enumerate().for_each(|(a, d)| not_empty(d, a, what, &mut out)),
        }
    }
    Ok(out)
}

/// LayerNormalization and RMSNormalization. onnxruntime refuses a scale or bias that does not
/// broadcast to X, and nothing to normalize (a size 0 from `axis` on).
pub fn layer_norm(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, None), ty(None, None), ty(None, None)]) };
    // The statistics outputs are of stash_type, which onnxruntime refuses to make of a code
    // past the known ones ("Invalid tensor data type -1"); with no statistics asked for, or
    // of 0, it runs any.
    let stats = c.node.outputs().iter().skip(1).any(Option::is_some);
    let stash = match attr_dtype(c, "stash_type", Some(DType::F32)) {
        Err(e) if stats && c.node.attr_int("stash_type") != Some(0) => return Err(e),
        stash => stash.unwrap_or(Some(DType::F32)),
    };
    let axis = axis_in(c.node.attr_int("axis").unwrap_or(-1), x.len(), &c.node.op_type)?;
    let mut out = Out::default();
    // Scale and bias stretch to the input (onnxruntime 1.32 takes a scale of the input's whole
    // shape as well as of the normalized axes').
    for s in (1..3).filter_map(|i| Some((i, c.shape(i)?))) {
        out.assumptions.extend(uni(x, s.1, s.0).map_err(RuleError::Broadcast)?.assumptions);
    }
    if x[axis..].contains(&Dim::Known(0)) {
        let x = render(x);
        return invalid(format!("{}: nothing to normalize from axis {axis} of {x}", c.node.op_type));
    }
    let mut stat: Shape = x[..axis].to_vec();
    stat.extend(vec![Dim::Known(1); x.len() - axis]);
    out.types = smallvec::smallvec![ty(dtype, Some(x.to_vec())), ty(stash, Some(stat.clone())), ty(stash, Some(stat))];
    Ok(out)
}

/// Softmax, LogSoftmax, Hardmax, LpNormalization: like the input, along an axis it has.
/// LpNormalization's order is 1 or 2 (the spec's "only 1 or 2 are supported"; onnxruntime
/// refuses others when it builds the node).
pub fn along_axis(c: &Ctx) -> R {
    let op = c.node.op_type.as_str();
    if let Some(p) = c.node.attr_int("p").filter(|p| op == "LpNormalization" && !(1..=2).contains(p)) {
        return invalid(format!("LpNormalization: p is {p}, not 1 or 2"));
    }
    match c.shape(0) {
        Some([]) => return invalid(format!("{op}: a scalar input has no axis")),
        Some(x) => {
            let default = if op != "LpNormalization" && c.opset < 13 { 1 } else { -1 };
            axis_in(c.node.attr_int("axis").unwrap_or(default), x.len(), op)?;
        }
        _ => {}
    }
    Ok(like_input(c))
}

/// NonMaxSuppression: the number of selected boxes is known when the boxes, scores and
/// limits are.
pub fn nms(c: &Ctx) -> R {
    // Boxes [batch, n, 4], scores [batch, classes, n].
    let mut out = Out::default();
    if let Some(b) = c.shape(0) {
        let [batch, n, _] = b else { return invalid(format!("NonMaxSuppression: boxes of rank {}", b.len())) };
        expect_shape(c, 0, &[batch.clone(), n.clone(), Dim::Known(4)], &mut out)?;
        expect_shape(c, 1, &[batch.clone(), dim(c, 1, 1), n.clone()], &mut out)?;
    }
    // The spec's iou_threshold is in [0, 1]; onnxruntime refuses its first element outside.
    if let Some(t) = c.float_value(3).and_then(<[f64]>::first).filter(|t| **t < 0.0 || **t > 1.0) {
        return invalid(format!("NonMaxSuppression: iou_threshold {t} is outside [0, 1]"));
    }
    let count = nms_count(c).map_or(Dim::Unknown, |n| Dim::Known(n as i64));
    out.types = smallvec::smallvec![ty(Some(DType::I64), Some(vec![count, Dim::Known(3)]))];
    Ok(out)
}

/// LRN: like the input, over an odd, positive number of channels (onnxruntime refuses others).
pub fn lrn(c: &Ctx) -> R {
    match c.node.attr_int("size") {
        Some(n) if n <= 0 || n % 2 == 0 => {
            invalid(format!("LRN: size {n} is not odd and positive; onnxruntime refuses it"))
        }
        _ => {
            let mut out = like_input(c);
            // The spec takes [N, C, D1, ..., Dk]; onnxruntime's kernel only 4-D input.
            if let Some(r) = c.shape(0).map(<[Dim]>::len).filter(|r| *r != 4) {
                let msg = format!("LRN: an input of rank {r}; onnxruntime runs LRN only on 4-D input");
                out.warnings.push((Code::RuntimeDiffers, msg));
            }
            // The spec puts no bound on them; onnxruntime: "alpha_ > 0.0f was false".
            for attr in ["alpha", "beta"] {
                if let Some(v) = c.node.attr_float(attr).filter(|v| v.is_nan() || *v <= 0.0) {
                    let msg = format!("LRN: {attr} {v}; onnxruntime refuses one that is not positive");
                    out.warnings.push((Code::RuntimeDiffers, msg));
                }
            }
            Ok(out)
        }
    }
}

fn nms_count(c: &Ctx) -> Option<usize> {
    let (bs, ss) = (c.shape(0)?, c.shape(1)?);
    let (boxes, scores) = (c.numbers(0)?, c.numbers(1)?);
    let [Dim::Known(nb), Dim::Known(sp), Dim::Known(4)] = bs else { return None };
    let [Dim::Known(nb2), Dim::Known(nc), Dim::Known(sp2)] = ss else { return None };
    let (nb, sp, nc) = (*nb as usize, *sp as usize, *nc as usize);
    let sizes = (nb.checked_mul(sp).and_then(|n| n.checked_mul(4)), nb.checked_mul(nc).and_then(|n| n.checked_mul(sp)));
    if nb != *nb2 as usize || sp != *sp2 as usize || sizes != (Some(boxes.len()), Some(scores.len())) {
        return None;
    }
    let scalar = |i: usize| c.numbers(i).and_then(|v| v.first().copied());
    let max_out = if c.has(2) { scalar(2)? as usize } else { 0 };
    let iou_thr = if c.has(3) { scalar(3)? } else { 0.0 };
    let score_thr = if c.has(4) { Some(scalar(4)?) } else { None };
    let center = c.node.attr_int("center_point_box").unwrap_or(0) != 0;
    let corners = |b: usize, i: usize| -> [f64; 4] {
        let v = &boxes[(b * sp + i) * 4..(b * sp + i) * 4 + 4];
        if center {
            [v[1] - v[3] / 2.0, v[0] - v[2] / 2.0, v[1] + v[3] / 2.0, v[0] + v[2] / 2.0]
        } else {
            [v[0].min(v[2]), v[1].min(v[3]), v[0].max(v[2]), v[1].max(v[3])]
        }
    };
    let iou = |a: [f64; 4], b: [f64; 4]| {
        let h = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
        let w = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
        let inter = h * w;
        let area = |x: [f64; 4]| (x[2] - x[0]) * (x[3] - x[1]);
        let union = area(a) + area(b) - inter;
        if union <= 0.0 {
            0.0
        } else {
            inter / union
        }
    };
    let mut total = 0;
    for b in 0..nb {
        for k in 0..nc {
            let sc = &scores[(b * nc + k) * sp..(b * nc + k + 1) * sp];
            let mut order: Vec<usize> = (0..sp).filter(|i| score_thr.is_none_or(|t| sc[*i] > t)).collect();
            order.sort_by(|x, y| sc[*y].partial_cmp(&sc[*x]).unwrap_or(std::cmp::Ordering::Equal));
            let mut kept: Vec<usize> = Vec::new();
            for i in order {
                if kept.len() >= max_out {
                    break;
                }
                if kept.iter().all(|j| iou(corners(b, i), corners(b, *j)) <= iou_thr) {
                    kept.push(i);
                }
            }
            total += kept.len();
        }
    }
    Some(total)
}

/// RoiAlign: X [N, C, H, W], rois [num_rois, 4] and batch_indices [num_rois], as onnx's
/// inference and onnxruntime check.
pub fn roi_align(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    if c.shape(0).is_some_and(|x| x.len() != 4) {
        return invalid("RoiAlign: X must have rank 4".into());
    }
    // "If > 0, then exactly sampling_ratio x sampling_ratio grid points are used. If == 0,
    // then an adaptive number".
    if let Some(r) = c.node.attr_int("sampling_ratio").filter(|r| *r < 0) {
        return invalid(format!("RoiAlign: sampling_ratio {r}; it takes 0 (adaptive) or more"));
    }
    let ch = dim(c, 0, 1);
    let n = dim(c, 1, 0);
    let h = Dim::Known(c.node.attr_int("output_height").unwrap_or(1));
    let w = Dim::Known(c.node.attr_int("output_width").unwrap_or(1));
    // Rois [n, 4] and one batch index each.
    let mut out = Out::default();
    expect_shape(c, 1, &[n.clone(), Dim::Known(4)], &mut out)?;
    expect_shape(c, 2, std::slice::from_ref(&n), &mut out)?;
    out.types = smallvec::smallvec![ty(dtype, Some(vec![n, ch, h, w]))];
    Ok(out)
}

pub fn grid_sample(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(x), Some(g)) = (c.shape(0), c.shape(1)) else { return outs(vec![ty(dtype, rank_only(c, 0))]) };
    if x.len() < 3 || g.len() != x.len() {
        return invalid("GridSample: the grid's rank must equal the input's".into());
    }
    // One grid per input of the batch, of points of rank - 2 coordinates; onnxruntime samples
    // no empty input axis.
    let mut out = Out::default();
    let mut want = g.to_vec();
    (want[0], want[x.len() - 1]) = (x[0].clone(), Dim::Known(x.len() as i64 - 2));
    expect_shape(c, 1, &want, &mut out)?;
    if x[2..].contains(&Dim::Known(0)) {
        return invalid(format!("GridSample: an input spatial axis has size 0 in {}", render(x)));
    }
    // The spec samples N-D inputs in every mode; onnxruntime 4-D and 5-D ones, cubically only
    // 4-D ("Only 4-D or 5-D tensor is supported", "Only support GridSample Cubic mode in 4-D").
    let mode = c.node.attr_str("mode").unwrap_or_else(|| "linear".into());
    if !(4..=5).contains(&x.len()) || (mode.ends_with("cubic") && x.len() != 4) {
        let msg = format!("GridSample: onnxruntime has no {mode} kernel for an input of rank {}", x.len());
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
    let mut shape = vec![x[0].clone(), x[1].clone()];
    shape.extend(g[1..g.len() - 1].iter().cloned());
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

/// AffineGrid: theta [N, 2, 3] with a size [N, C, H, W], [N, 3, 4] with [N, C, D, H, W]
/// (onnx's inference checks the size's length, onnxruntime theta's shape).
pub fn affine_grid(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    expect_rank(c, 0, 3)?;
    let Some(size) = c.value(1) else { return outs(vec![ty(dtype, None)]) };
    if !(4..=5).contains(&size.len()) {
        return invalid(format!("AffineGrid: size has {} entries, not 4 or 5", size.len()));
    }
    // The channels (size[1]) shape nothing, and onnxruntime runs a negative count there.
    if let Some(n) = size.iter().enumerate().find_map(|(i, d)| d.known().filter(|n| *n < 0 && i != 1)) {
        return invalid(format!("AffineGrid: negative size {n}"));
    }
    let axes = size.len() as i64 - 2;
    let mut out = Out::default();
    expect_shape(c, 0, &[size[0].clone(), Dim::Known(axes), Dim::Known(axes + 1)], &mut out)?;
    // onnxruntime wants each spatial size positive ("size[2] (H=0) must be positive").
    for (k, d) in size.iter().enumerate().skip(2) {
        not_empty(d, k - 1, &format!("AffineGrid: size[{k}] is 0"), &mut out);
    }
    let mut shape = vec![size[0].clone()];
    shape.extend(size[2..].iter().cloned());
    shape.push(Dim::Known(axes));
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

pub fn det(c: &Ctx) -> R {
    let mut out = Out::default();
    let shape = match c.shape(0) {
        Some([batch @ .., h, w]) => {
            pin_shapes(std::slice::from_ref(h), std::slice::from_ref(w), &mut out)
                .map_err(|e| RuleError::Invalid(format!("Det: not square: {e}")))?;
            Some(batch.to_vec())
        }
        Some(x) => return invalid(format!("Det: input rank {} is below 2", x.len())),
        None => None,
    };
    out.types = smallvec::smallvec![ty(c.dtype(0), shape)];
    Ok(out)
}

/// NegativeLogLikelihoodLoss's and SoftmaxCrossEntropyLoss's loss: input [N, C, d1, ...],
/// target [N, d1, ...], a weight of rank 1 (as onnx's inference, so onnxruntime, checks).
fn loss_shape(c: &Ctx, out: &mut Out) -> Result<Option<Shape>, RuleError> {
    let op = &c.node.op_type;
    if let Some(x) = c.shape(0) {
        if x.len() < 2 {
            return invalid(format!("{op}: input rank {} is below 2", x.len()));
        }
        let target: Shape = std::iter::once(&x[0]).chain(&x[2..]).cloned().collect();
        expect_shape(c, 1, &target, out)?;
    }
    // A weight of rank 1, from opset 22 one per class (onnx's inference unifies them then;
    // onnxruntime runs other lengths before).
    let classes = if c.opset >= 22 { dim(c, 0, 1) } else { Dim::Unknown };
    expect_shape(c, 2, &[classes], out)?;
    Ok(match c.node.attr_str("reduction").as_deref().unwrap_or("mean") {
        "none" => c.shape(1).map(<[Dim]>::to_vec),
        _ => Some(vec![]),
    })
}

pub fn nll_loss(c: &Ctx) -> R {
    let mut out = Out::default();
    let loss = loss_shape(c, &mut out)?;
    // No class for a target to name, ignored or not: onnx's reference cannot reshape the
    // input to [N, 0, -1] and onnxruntime's body gathers out of range.
    if let Some(x) = c.shape(0).filter(|x| x[1] == Dim::Known(0)) {
        if let Some(n) = numel(&[&x[..1], &x[2..]].concat()).filter(|n| *n > 0) {
            return invalid(format!("NegativeLogLikelihoodLoss: no classes for its {n} targets"));
        }
    }
    out.types = smallvec::smallvec![ty(c.dtype(0), loss)];
    Ok(out)
}

pub fn sce_loss(c: &Ctx) -> R {
    let mut out = Out::default();
    let loss = loss_shape(c, &mut out)?;
    // Its function body reshapes the scores to [N, C, -1], which an N or C of 0 leaves
    // undetermined: onnx's inference, so onnxruntime, refuses it.
    if c.shape(0).is_some_and(|x| x[..2].contains(&Dim::Known(0))) {
        return invalid("SoftmaxCrossEntropyLoss: a batch or class count of 0".into());
    }
    // The body then reshapes [N, C, -1] back by the scores' own shape, where a 0 past axis 2
    // would copy an axis [N, C, -1] lacks ("Invalid position of 0" in onnxruntime 1.32).
    for (a, d) in c.shape(0).unwrap_or_default().iter().enumerate().skip(3) {
        not_empty(d, a, &format!("SoftmaxCrossEntropyLoss: axis {a} is empty"), &mut out);
    }
    out.types = smallvec::smallvec![ty(c.dtype(0), loss), ty(c.dtype(0), c.shape(0).map(<[Dim]>::to_vec))];
    Ok(out)
}

pub fn dropout(c: &Ctx) -> R {
    // ratio and training_mode are scalars (onnx's inference: "must be a scalar").
    expect_rank(c, 1, 0)?;
    expect_rank(c, 2, 0)?;
    let x = c.shape(0).map(<[Dim]>::to_vec);
    let mask = if c.opset >= 10 { Some(DType::Bool) } else { c.dtype(0) };
    outs(vec![ty(c.dtype(0), x.clone()), ty(mask, x)])
}

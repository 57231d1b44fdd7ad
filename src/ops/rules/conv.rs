//! Convolution and pooling rules, on the window arithmetic they share (kernel, strides,
//! dilations, pads, `auto_pad`, `ceil_mode`): Conv and its kin, ConvTranspose, the pools,
//! MaxRoiPool, MaxUnpool and Col2Im.

use super::{
    exact_div, expect_one_value, expect_shape, invalid, one_or_each, op_err, outs, pin_shapes, rank_only, ty,
    unknown_rank, R,
};
use crate::diag::Code;
use crate::dtype::DType;
use crate::ops::{Ctx, Out, RuleError};
use crate::shape::{render, Assumption, Dim, Shape};

/// The spatial output sizes of a convolution or pooling window over `spatial` input sizes (the
/// input's axes from 2), with the side conditions and warnings they come with.
///
/// A window larger than its padded input is refused by onnxruntime for a convolution
/// ("Invalid input shape"): an error. For pooling the spec's floor and onnxruntime's integer
/// division part there: kernel 3, stride 3 over 2 elements gives 0 by the spec and 1 under
/// onnxruntime, which runs it; that is a warning naming both, and the size onnxruntime gives
/// is inferred (it is what runs). Only a size onnxruntime finds negative is an error. Where
/// the input's size is symbolic, the window fitting is a side condition. `pool` says which
/// of the two the caller is (the standard pools and onnxruntime's contrib ones take this
/// arithmetic from `pool`).
fn window_out(
    c: &Ctx,
    spatial: &[Dim],
    kernel: &[i64],
    ceil: bool,
    pool: bool,
    out: &mut Out,
) -> Result<Shape, RuleError> {
    let n = spatial.len();
    let op = c.node.op_type.as_str();
    if kernel.len() != n {
        return invalid(format!("{op}: kernel of rank {} for {} spatial axes", kernel.len(), n));
    }
    let (strides, dil) = (ints_or(c, "strides", 1, n), ints_or(c, "dilations", 1, n));
    let auto = c.node.attr_str("auto_pad").unwrap_or_else(|| "NOTSET".into());
    let pads = if auto == "VALID" { vec![0; 2 * n] } else { ints_or(c, "pads", 0, 2 * n) };
    if strides.len() != n || dil.len() != n || pads.len() != 2 * n {
        return invalid(format!("{op}: strides, dilations or pads do not match {n} spatial axes"));
    }
    if strides.iter().chain(&dil).any(|x| *x <= 0) || kernel.iter().any(|k| *k <= 0) {
        return invalid(format!("{op}: kernel, strides and dilations must be positive"));
    }
    if pads.iter().any(|p| *p < 0) {
        return invalid(format!("{op}: pads must be 0 or more"));
    }
    if let Some(i) = (0..n).find(|&i| pool && pads[i].max(pads[i + n]) >= kernel[i]) {
        let msg = "onnxruntime refuses a pad as wide as the kernel";
        return invalid(format!(
            "{op}: pads {} and {} at axis {} for a kernel of {}; {msg}",
            pads[i],
            pads[i + n],
            i + 2,
            kernel[i]
        ));
    }
    let (mut shape, mut warned) = (Vec::with_capacity(n), false);
    for i in 0..n {
        let (axis, d, s) = (i + 2, &spatial[i], strides[i]);
        let (Some(ek), Some(pad)) =
            ((kernel[i] - 1).checked_mul(dil[i]).and_then(|x| x.checked_add(1)), pads[i].checked_add(pads[i + n]))
        else {
            return invalid(format!("{op}: the window or the pads at axis {axis} overflow"));
        };
        if auto.starts_with("SAME") {
            if !pool && *d == Dim::Known(0) {
                return invalid(format!("{op}: axis {axis} of the input is empty; onnxruntime refuses it"));
            }
            // One warning a node: the first axis that refuses.
            if pool && !warned && mlas_pools(c, &dil) {
                warned = same_pad_below_zero(c, &auto, axis, d, s, ek, out);
            }
            shape.push(d.div_ceil(&Dim::Known(s)));
            continue;
        }
        // The span the window's first position leaves: negative when it does not fit.
        let span = d.add(&Dim::Known(pad)).sub(&Dim::Known(ek));
        let Dim::Known(num) = span else {
            if let Dim::Term(sym) = d {
                // Convolutions need the window to fit; onnxruntime runs a pooling until its
                // output size, divided toward zero, comes out negative (see below).
                // In i128: with a stride past i64::MAX / 2 the pooling's `2 * s` overflowed.
                let (ek, pad, s) = (i128::from(ek), i128::from(pad), i128::from(s));
                let min = if pool { ek - pad - 2 * s + 1 } else { ek - pad };
                // At most the window, so an i64 whenever it is above 1.
                if let Some(min) = i64::try_from(min).ok().filter(|m| *m > 1) {
                    out.assumptions.push((axis, Assumption::AtLeast { size: sym.clone(), min }));
                }
            }
            // With ceil_mode: `ceil(span/s) + 1`, less one where the last window would start
            // past the input and the left padding, which needs `ceil(span/s)*s >= d + pad_begin`;
            // `ceil(span/s)*s < span + s`, so never when `pad_end - window + s <= 0` (a pool
            // whose stride is its window, or a 3-wide one by 2 padded by 1).
            let exact_ceil = i128::from(pads[i + n]) - i128::from(ek) + i128::from(s) <= 0;
            shape.push(match ceil {
                false => span.div_floor(&Dim::Known(s)).add(&Dim::Known(1)),
                true if exact_ceil => span.div_ceil(&Dim::Known(s)).add(&Dim::Known(1)),
                true => Dim::Unknown,
            });
            continue;
        };
        let dv = d.known().unwrap_or(0);
        let mut o = num.div_euclid(s) + 1 + i64::from(ceil && num.rem_euclid(s) != 0);
        // With ceil_mode the last window must start inside the input or the left padding.
        if ceil && o > 0 && (o - 1).saturating_mul(s) >= dv + pads[i] {
            o -= 1;
        }
        if num >= 0 {
            shape.push(Dim::Known(o));
            continue;
        }
        let window =
            if dil[i] == 1 { format!("{ek}") } else { format!("{ek}: kernel {}, dilation {}", kernel[i], dil[i]) };
        let padded =
            if pad == 0 { format!("{dv}") } else { format!("{} = {dv} + pads {}, {}", dv + pad, pads[i], pads[i + n]) };
        let refused = format!("{op}: at axis {axis} the window ({window}) is larger than the padded input ({padded})");
        // onnxruntime divides as C does, toward zero.
        let runtime = if ceil { o } else { num / s + 1 };
        if !pool || runtime < 0 {
            return Err(RuleError::Window(format!("{refused}; onnxruntime refuses such a node")));
        }
        let msg = if runtime == o {
            format!("{refused}: the output is empty at axis {axis}")
        } else {
            format!("{refused}: by the spec's floor the output has size {o} there, by onnxruntime's integer division {runtime}, which is what runs")
        };
        out.warnings.push((crate::diag::Code::WindowTooLarge, msg));
        shape.push(Dim::Known(runtime));
    }
    Ok(shape)
}

/// The ints attribute `name`, or `len` copies of `default` without it.
fn ints_or(c: &Ctx, name: &str, default: i64, len: usize) -> Vec<i64> {
    c.node.attr_ints(name).map_or_else(|| vec![default; len], <[i64]>::to_vec)
}

/// A convolution's kernel sizes: `kernel_shape`, else the weight `w`'s axes from 2 when known.
/// onnxruntime refuses a `kernel_shape` unlike the weight's sizes.
fn kernel_of(c: &Ctx, w: &[Dim]) -> Result<Option<Vec<i64>>, RuleError> {
    match c.node.attr_ints("kernel_shape") {
        Some(k) if k.len() + 2 != w.len() || k.iter().zip(&w[2..]).any(|(k, d)| d.known().is_some_and(|d| d != *k)) => {
            invalid(format!("{}: kernel_shape {k:?} does not match the weight {}", c.node.op_type, render(w)))
        }
        Some(k) => Ok(Some(k.to_vec())),
        None => Ok(w[2..].iter().map(Dim::known).collect()),
    }
}

/// "This attribute cannot be used simultaneously with auto_pad attribute" (the spec of
/// `pads`): onnxruntime's convolutions refuse both ("A Conv/ConvTranspose node has both
/// 'auto_pad' and 'pads' attributes"), reading an empty auto_pad as NOTSET where onnx's
/// ConvTranspose inference does not. Its pools, and onnx's inference of them, take both.
fn pads_beside_auto_pad(c: &Ctx) -> Result<(), RuleError> {
    let op = &c.node.op_type;
    let unset = |a: &str| a == "NOTSET" || a.is_empty() && op != "ConvTranspose";
    match c.node.attr_str("auto_pad") {
        Some(a) if !unset(&a) && c.node.attr("pads").is_some() => {
            let a = if a.is_empty() { "\"\"".to_string() } else { a.to_string() };
            invalid(format!("{op}: auto_pad {a} beside pads; it takes one or the other"))
        }
        _ => Ok(()),
    }
}

pub fn conv(c: &Ctx) -> R {
    pads_beside_auto_pad(c)?;
    let (wi, bias, dtype) = match c.node.op_type.as_str() {
        "ConvInteger" => (1, None, Some(DType::I32)),
        "QLinearConv" => (3, Some(8), c.dtype(7)),
        "DeformConv" => (1, Some(3), c.dtype(0)),
        _ => (1, Some(2), c.dtype(0)),
    };
    let (Some(x), Some(w)) = (c.shape(0), c.shape(wi)) else { return outs(vec![ty(dtype, rank_only(c, 0))]) };
    let op = &c.node.op_type;
    if x.len() < 3 || w.len() != x.len() {
        return invalid(format!("{op}: input rank {} and weight rank {}", x.len(), w.len()));
    }
    let mut out = Out::default();
    // onnxruntime: the input has the weight's channels times the group, the group divides
    // the output channels, and a bias has one value per output channel.
    let group = c.node.attr_int("group").unwrap_or(1);
    if group < 1 {
        return invalid(format!("{op}: group {group} is not positive"));
    }
    let Some((_, same)) = x[1].pin(&w[1].mul(&Dim::Known(group))) else {
        return invalid(format!("{op}: the input has {} channels, the weight {} x group {group}", x[1], w[1]));
    };
    out.assumptions.extend(same.map(|a| (1, a)));
    if let Some(m) = w[0].known().filter(|m| m % group != 0) {
        return invalid(format!("{op}: group {group} does not divide the {m} output channels"));
    }
    if let Some(b) = bias {
        expect_shape(c, b, &w[..1], &mut out)?;
    }
    // Quantization parameters: the input's and output's hold one value, the weight's one or
    // one per output channel (the spec; onnxruntime runs the latter in QLinearConv only).
    let (single, per_channel): (&[usize], &[usize]) = match op.as_str() {
        "QLinearConv" => (&[1, 2, 6, 7], &[4, 5]),
        "ConvInteger" => (&[2], &[3]),
        _ => (&[], &[]),
    };
    single.iter().try_for_each(|i| expect_one_value(c, *i, &mut out))?;
    for &i in per_channel {
        one_or_each(c, i, &w[0], "output channel", &mut out)?;
    }
    let mut shape = vec![x[0].clone(), w[0].clone()];
    let Some(kernel) = kernel_of(c, w)? else {
        shape.extend(unknown_rank(x.len() - 2));
        out.types = smallvec::smallvec![ty(dtype, Some(shape))];
        return Ok(out);
    };
    shape.extend(window_out(c, &x[2..], &kernel, false, false, &mut out)?);
    if op == "DeformConv" {
        // The spec's offset is [N, offset_group * prod(kernel) * axes, output...], its mask
        // [N, offset_group * prod(kernel), output...], and offset_group divides C;
        // onnxruntime checks them and wants C and M positive.
        let og = c.node.attr_int("offset_group").unwrap_or(1);
        if og < 1 || x[1].known().is_some_and(|ch| ch == 0 || ch % og != 0) || w[0] == Dim::Known(0) {
            return invalid(format!(
                "{op}: {} input channels, {} output channels, offset_group {og}: the counts must be positive and offset_group divide the first",
                x[1], w[0]
            ));
        }
        let taps = kernel.iter().fold(Dim::Known(og), |n, k| n.mul(&Dim::Known(*k)));
        let mut want = shape.clone();
        want[0] = x[0].clone();
        for (i, channels) in [(2, taps.mul(&Dim::Known(kernel.len() as i64))), (4, taps)] {
            want[1] = channels;
            expect_shape(c, i, &want, &mut out)?;
        }
        // The spec deforms over any spatial axes, onnxruntime 1.32 over two ("Input X must be
        // 4D (N, C, H, W)").
        if x.len() != 4 {
            let msg = format!("{op}: onnxruntime takes only a 4-D input, not {}-D", x.len());
            out.warnings.push((Code::RuntimeDiffers, msg));
        }
    }
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

pub fn conv_transpose(c: &Ctx) -> R {
    pads_beside_auto_pad(c)?;
    let dtype = c.dtype(0);
    let (Some(x), Some(w)) = (c.shape(0), c.shape(1)) else { return outs(vec![ty(dtype, rank_only(c, 0))]) };
    if x.len() < 3 || w.len() != x.len() {
        return invalid(format!("ConvTranspose: input rank {} and weight rank {}", x.len(), w.len()));
    }
    let n = x.len() - 2;
    let mut out = Out::default();
    // onnxruntime: the weight has one filter per input channel, and the group divides them.
    let group = c.node.attr_int("group").unwrap_or(1);
    if group < 1 {
        return invalid(format!("ConvTranspose: group {group} is not positive"));
    }
    let Some((_, same)) = x[1].pin(&w[0]) else {
        return invalid(format!("ConvTranspose: the input has {} channels, the weight {} filters", x[1], w[0]));
    };
    out.assumptions.extend(same.map(|a| (1, a)));
    if let Some(ch) = x[1].known().filter(|ch| ch % group != 0) {
        return invalid(format!("ConvTranspose: group {group} does not divide the {ch} input channels"));
    }
    let mut shape = vec![x[0].clone(), w[1].mul(&Dim::Known(group))];
    let os = c.node.attr_ints("output_shape");
    if let Some(os) = os.filter(|os| os.len() != n) {
        return invalid(format!("ConvTranspose: output_shape has {} entries for {n} spatial axes", os.len()));
    }
    // onnxruntime: "Explicit output size must be positive".
    if let Some(d) = os.and_then(|os| os.iter().find(|d| **d <= 0)) {
        return invalid(format!("ConvTranspose: output_shape holds {d}; its sizes must be positive"));
    }
    let Some(kernel) = kernel_of(c, w)? else {
        shape.extend(match os {
            Some(os) => os.iter().copied().map(Dim::Known).collect(),
            None => unknown_rank(n),
        });
        out.types = smallvec::smallvec![ty(dtype, Some(shape))];
        return Ok(out);
    };
    let (strides, dil) = (ints_or(c, "strides", 1, n), ints_or(c, "dilations", 1, n));
    let (pads, opad) = (ints_or(c, "pads", 0, 2 * n), ints_or(c, "output_padding", 0, n));
    if strides.len() != n || dil.len() != n || pads.len() != 2 * n || opad.len() != n || kernel.len() != n {
        return invalid("ConvTranspose: attributes do not match the spatial rank".into());
    }
    if strides.iter().chain(&dil).chain(&kernel).any(|x| *x <= 0) {
        return invalid("ConvTranspose: kernel, strides and dilations must be positive".into());
    }
    if pads.iter().chain(&opad).any(|p| *p < 0) {
        return invalid("ConvTranspose: pads and output_padding must be 0 or more".into());
    }
    if let Some(i) = (0..n).find(|&i| opad[i] >= strides[i].max(dil[i])) {
        return invalid(format!(
            "ConvTranspose: output_padding {} at spatial axis {i} is not below the stride or dilation; onnxruntime refuses it",
            opad[i]
        ));
    }
    // Each axis's kernel with its dilation.
    let eks: Vec<i64> = (0..n).map(|i| (kernel[i] - 1).saturating_mul(dil[i]).saturating_add(1)).collect();
    if let Some(os) = os {
        // The pads output_shape implies are its total padding, stride*(x-1) + output_padding +
        // the dilated kernel - output_shape: never negative by the spec, and onnxruntime
        // refuses it from -stride down ("Explicit output_shape is inconsistent with input
        // spatial dimensions"), or an empty input.
        for i in 0..n {
            let Some(d) = x[2 + i].known() else { continue };
            let total = strides[i]
                .saturating_mul(d.saturating_sub(1))
                .saturating_add(opad[i])
                .saturating_add(eks[i])
                .saturating_sub(os[i]);
            if d < 1 || total <= -strides[i] {
                return invalid(format!(
                    "ConvTranspose: output_shape {} at axis {} is out of reach of an input of {d}",
                    os[i],
                    2 + i
                ));
            }
        }
        shape.extend(os.iter().copied().map(Dim::Known));
        out.types = smallvec::smallvec![ty(dtype, Some(shape))];
        return Ok(out);
    }
    let auto = c.node.attr_str("auto_pad").unwrap_or_else(|| "NOTSET".into());
    for i in 0..n {
        let (axis, d, ek) = (2 + i, &x[2 + i], eks[i]);
        let o = if auto == "SAME_UPPER" || auto == "SAME_LOWER" {
            // Padded to d*stride, but pads are never negative: onnxruntime's output is
            // (d-1)*stride + min(stride, output_padding + kernel).
            let rest = strides[i].min(opad[i].saturating_add(ek));
            d.sub(&Dim::Known(1)).mul(&Dim::Known(strides[i])).add(&Dim::Known(rest))
        } else {
            let pad = if auto == "VALID" { 0 } else { pads[i].saturating_add(pads[i + n]) };
            if *d == Dim::Known(0) && opad[i] > 0 {
                let msg = format!(
                    "ConvTranspose: axis {axis} is empty and output_padding {} is not 0, which onnxruntime refuses",
                    opad[i]
                );
                out.warnings.push((Code::RuntimeDiffers, msg));
            }
            // The output is (d-1)*stride + the rest, and onnxruntime refuses it below 1.
            let rest = opad[i].saturating_add(ek).saturating_sub(pad);
            if let (Dim::Term(sym), true) = (d, rest < 1) {
                let min = (1 - rest).div_euclid(strides[i]) + i64::from((1 - rest).rem_euclid(strides[i]) != 0) + 1;
                out.assumptions.push((axis, Assumption::AtLeast { size: sym.clone(), min }));
            }
            d.sub(&Dim::Known(1)).mul(&Dim::Known(strides[i])).add(&Dim::Known(rest))
        };
        if let Some(k) = o.known().filter(|k| *k < 1) {
            return Err(RuleError::Window(format!(
                "ConvTranspose: at axis {axis} the pads leave an output of size {k}; onnxruntime refuses such a node"
            )));
        }
        shape.push(o);
    }
    // onnxruntime 1.32 dies (SIGSEGV) on 3 or more spatial axes with an empty one before a
    // last one that is not ([1, 1, 3, 0, 5]); [1, 1, 3, 4, 0], 2-D inputs and no batch or
    // channels in or out run.
    let empty_before_last = x[2..x.len() - 1].contains(&Dim::Known(0)) && x[x.len() - 1].known() != Some(0);
    let work = [&x[0], &x[1], &shape[1]].iter().all(|d| d.known() != Some(0));
    if n >= 3 && work && empty_before_last {
        let msg = format!(
            "ConvTranspose: an empty spatial axis of {} before a last one that is not; onnxruntime refuses it",
            render(x)
        );
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

/// onnxruntime pools nothing empty but a batch of 0: "Only N can be zero".
fn pool_empty(c: &Ctx, x: &[Dim]) -> Result<(), RuleError> {
    if x[0].known().is_some_and(|n| n != 0) && x[1..].contains(&Dim::Known(0)) {
        return invalid(format!("{}: input {} is empty but not in its batch", c.node.op_type, render(x)));
    }
    Ok(())
}

/// Whether onnxruntime 1.32 hands this pool to its MLAS kernel, which refuses a negative pad
/// ("padding values must be non-negative") where its other kernels take one as none: a float or
/// float16 MaxPool with one output, `storage_order` 0 and no dilation, or AveragePool before
/// opset 19. Found by probing each case; the spec clamps nothing and forbids nothing here.
fn mlas_pools(c: &Ctx, dil: &[i64]) -> bool {
    let float = c.dtype(0).is_none_or(|t| matches!(t, DType::F32 | DType::F16));
    let max = c.node.op_type == "MaxPool"
        && !c.asks(1)
        && c.node.attr_int("storage_order").unwrap_or(0) == 0
        && dil.iter().all(|d| *d == 1);
    c.node.domain.is_empty() && float && (max || c.node.op_type == "AveragePool" && c.opset < 19)
}

/// With `auto_pad` SAME the pads total `(ceil(d / s) - 1) * s + window - d`, below 0 when the
/// stride passes the window (a 1-wide MaxPool by 2 over an even size, as TensorFlow exports
/// write): a `runtime-differs` warning where `mlas_pools` says onnxruntime refuses that. Says
/// whether it warned.
fn same_pad_below_zero(c: &Ctx, auto: &str, axis: usize, d: &Dim, s: i64, ek: i64, out: &mut Out) -> bool {
    let op = &c.node.op_type;
    let refuses = "onnxruntime refuses it (\"padding values must be non-negative\")";
    let msg = match d.known() {
        Some(0) => return false,
        Some(dv) => {
            let (dv, s, ek) = (i128::from(dv), i128::from(s), i128::from(ek));
            let total = ((dv + s - 1) / s - 1) * s + ek - dv;
            if total >= 0 {
                return false;
            }
            format!("{op}: auto_pad {auto} pads axis {axis} by {total} (stride {s}, window {ek}, size {dv}); {refuses}")
        }
        // Below 0 at every multiple of the stride.
        None if s > ek => {
            format!("{op}: auto_pad {auto} pads axis {axis} by less than 0 when its size {d} is a multiple of the stride {s} (window {ek}); {refuses}")
        }
        None => return false,
    };
    out.warnings.push((Code::RuntimeDiffers, msg));
    true
}

/// onnxruntime pools over 1 to 3 spatial axes ("Unsupported pooling size", LpPool's
/// "Unsupported kernel dimension"), its global pools too ("Input dimension cannot be less
/// than 3"), and unpools as many; the spec over any number. `x` is a standard op's input,
/// of rank 2 or more.
fn pooled_axes(c: &Ctx, x: &[Dim], out: &mut Out) {
    if c.node.domain.is_empty() && !(3..=5).contains(&x.len()) {
        let msg = format!("{}: onnxruntime pools 1 to 3 spatial axes, not {}", c.node.op_type, x.len() - 2);
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
}

pub fn pool(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, None), ty(Some(DType::I64), None)]) };
    if x.len() < 3 {
        return invalid(format!("{}: input rank {} is below 3", c.node.op_type, x.len()));
    }
    pool_empty(c, x)?;
    let Some(kernel) = c.node.attr_ints("kernel_shape") else {
        return invalid(format!("{} needs kernel_shape", c.node.op_type));
    };
    let ceil = c.node.attr_int("ceil_mode").unwrap_or(0) != 0;
    let mut out = Out::default();
    pooled_axes(c, x, &mut out);
    let mut shape = vec![x[0].clone(), x[1].clone()];
    shape.extend(window_out(c, &x[2..], kernel, ceil, true, &mut out)?);
    out.types = smallvec::smallvec![ty(dtype, Some(shape.clone())), ty(Some(DType::I64), Some(shape))];
    Ok(out)
}

pub fn global_pool(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    if x.len() < 2 {
        return invalid(format!("{}: input rank {} is below 2", c.node.op_type, x.len()));
    }
    pool_empty(c, x)?;
    let mut out = Out::default();
    pooled_axes(c, x, &mut out);
    let mut shape = x[..2].to_vec();
    shape.extend(vec![Dim::Known(1); x.len() - 2]);
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

pub fn max_roi_pool(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(x), Some(r), Some(p)) = (c.shape(0), c.shape(1), c.node.attr_ints("pooled_shape")) else {
        return outs(vec![ty(dtype, None)]);
    };
    // X [N, C, H, W], pooled to (height, width) (onnx's inference; onnxruntime's kernel).
    if x.len() != 4 || p.len() != 2 {
        return invalid(format!(
            "MaxRoiPool: pooled_shape {p:?} for an input of rank {}; it pools [N, C, H, W] to 2 sizes",
            x.len()
        ));
    }
    // Rois [n, 5]: a batch index and four corners each.
    let mut out = Out::default();
    expect_shape(c, 1, &[r.first().cloned().unwrap_or(Dim::Unknown), Dim::Known(5)], &mut out)?;
    let mut shape = vec![r.first().cloned().unwrap_or(Dim::Unknown), x.get(1).cloned().unwrap_or(Dim::Unknown)];
    shape.extend(p.iter().copied().map(Dim::Known));
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

/// MaxUnpool: [N, C, (x - 1) * stride + kernel - pads, ...], or `output_shape`, which
/// onnxruntime takes only of X's length, batch and channels and at least that large. The
/// indices are shaped as X (the spec; onnxruntime checks it).
pub fn max_unpool(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let mut out = Out::default();
    // onnxruntime: "kernel_shape_[dim] > 0", "All stride values must be positive".
    for attr in ["kernel_shape", "strides"] {
        if let Some(v) = c.node.attr_ints(attr).and_then(|v| v.iter().find(|v| **v <= 0)) {
            return invalid(format!("MaxUnpool: {attr} holds {v}; it takes positive sizes"));
        }
    }
    let least = match (c.shape(0), c.node.attr_ints("kernel_shape")) {
        (Some(x), Some(k)) => {
            expect_shape(c, 1, x, &mut out)?;
            let least = unpooled(c, x, k)?;
            pooled_axes(c, x, &mut out);
            Some((x, least))
        }
        _ => None,
    };
    let shape = match (c.value(2), least) {
        (Some(given), Some((x, least))) => {
            let small = |(g, l): (&Dim, &Dim)| g.known().zip(l.known()).is_some_and(|(g, l)| g < l);
            if given.len() != x.len() || given[2..].iter().zip(&least[2..]).any(small) {
                let (given, least) = (render(given), render(&least));
                return invalid(format!("MaxUnpool: output_shape {given} for an unpooled shape of {least}"));
            }
            pin_shapes(&given[..2], &x[..2], &mut out).map_err(op_err("MaxUnpool: output_shape against X"))?;
            Some(given.to_vec())
        }
        (given, _) if c.has(2) => given.map(<[Dim]>::to_vec),
        (_, least) => least.map(|(_, s)| s),
    };
    out.types = smallvec::smallvec![ty(dtype, shape)];
    Ok(out)
}

/// The shape MaxUnpool gives X without an `output_shape`.
fn unpooled(c: &Ctx, x: &[Dim], k: &[i64]) -> Result<Shape, RuleError> {
    if x.len() < 3 {
        return invalid(format!("MaxUnpool: input rank {} is below 3", x.len()));
    }
    let n = x.len() - 2;
    if k.len() != n {
        return invalid("MaxUnpool: kernel_shape does not match the spatial rank".into());
    }
    let (strides, pads) = (ints_or(c, "strides", 1, n), ints_or(c, "pads", 0, 2 * n));
    if strides.len() != n || pads.len() != 2 * n {
        return invalid("MaxUnpool: strides or pads do not match the spatial rank".into());
    }
    let mut shape = x[..2].to_vec();
    for i in 0..n {
        let rest = Dim::Known(k[i]).sub(&Dim::Known(pads[i])).sub(&Dim::Known(pads[i + n]));
        let d = x[2 + i].sub(&Dim::Known(1)).mul(&Dim::Known(strides[i])).add(&rest);
        // onnxruntime: "Computed output dimension is not positive".
        if d.known().is_some_and(|d| d <= 0) {
            return invalid(format!("MaxUnpool: the output's axis {} would have size {d}", i + 2));
        }
        shape.push(d);
    }
    Ok(shape)
}

/// Col2Im: [N, C * prod(block), L] to [N, C, image...], L the number of blocks the image,
/// pads, strides and dilations give, as a convolution's output size (onnxruntime checks it).
pub fn col2im(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(x), Some(img), Some(block)) = (c.shape(0), c.value(1), c.value(2)) else {
        return outs(vec![ty(dtype, None)]);
    };
    if x.len() != 3 {
        return invalid("Col2Im needs a 3-D input".into());
    }
    // The spec's inference: "'block_shape' input must contain only positive values", and
    // one size per image axis; onnxruntime: "All 'image_shape' values must be positive".
    if img.len() != block.len() {
        return invalid(format!("Col2Im: image_shape has {} sizes, block_shape {}", img.len(), block.len()));
    }
    if let Some(d) = img.iter().chain(block).find(|d| d.known().is_some_and(|d| d <= 0)) {
        return invalid(format!(
            "Col2Im: image_shape {} and block_shape {} must be positive, not {d}",
            render(img),
            render(block)
        ));
    }
    // The blocks' size divides the input's second axis, which is positive (onnxruntime
    // refuses it otherwise).
    let mut out = Out::default();
    let channels = match Dim::product(block).known() {
        Some(k) if k > 0 => {
            let (part, multiple) =
                exact_div(&x[1], k).map_err(|e| RuleError::Invalid(format!("Col2Im: axis 1: {e}")))?;
            out.assumptions.extend(multiple.map(|m| (1, m)));
            part
        }
        _ => x[1].div_floor(&Dim::product(block)),
    };
    if channels == Dim::Known(0) {
        return invalid("Col2Im: the input has no channels".into());
    }
    if let Some(kernel) = block.iter().map(Dim::known).collect::<Option<Vec<i64>>>() {
        let blocks = Dim::product(&window_out(c, img, &kernel, false, false, &mut out)?);
        let (_, same) = x[2]
            .pin(&blocks)
            .ok_or_else(|| RuleError::Invalid(format!("Col2Im: the input has {} blocks, the image {blocks}", x[2])))?;
        out.assumptions.extend(same.map(|a| (2, a)));
    }
    let mut shape = vec![x[0].clone(), channels];
    shape.extend(img.iter().cloned());
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

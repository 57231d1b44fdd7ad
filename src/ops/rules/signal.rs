//! Signal-processing rules: DFT, STFT, the window generators (Blackman, Hamming, Hann) and
//! MelWeightMatrix.

use super::{
    attr_dtype, axis_in, dim, expect_rank, first_value, fold, invalid, numel, one_element, outs, ty, unknown_rank, R,
};
use crate::diag::Code;
use crate::dtype::DType;
use crate::ops::{Ctx, Out, RuleError};
use crate::shape::{Assumption, Dim};

pub fn dft(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    if x.len() < 2 {
        return invalid("DFT needs an input of rank 2 or more".into());
    }
    let axis = match (c.opset >= 20, c.has(2), c.ints(2).as_deref()) {
        (false, ..) => c.node.attr_int("axis").unwrap_or(1),
        (true, false, _) => -2,
        (true, true, Some([a])) => *a,
        (true, true, _) => return outs(vec![ty(dtype, Some(unknown_rank(x.len())))]),
    };
    // The axis counts over all axes (as onnxruntime and onnx's inference do) but may not be
    // the trailing complex one.
    let a = axis_in(axis, x.len(), &c.node.op_type)?;
    if a == x.len() - 1 {
        return invalid(format!("DFT: axis {axis} is the trailing real/imaginary axis"));
    }
    let mut shape = x.to_vec();
    let len = match c.value(1) {
        Some([d]) => d.clone(),
        _ if c.has(1) => Dim::Unknown,
        _ => x[a].clone(),
    };
    if let Some(n) = len.known().filter(|n| c.has(1) && *n <= 0) {
        return invalid(format!("DFT: dft_length {n}; it must be above 0"));
    }
    let onesided = c.node.attr_int("onesided").unwrap_or(0) != 0;
    let inverse = c.node.attr_int("inverse").unwrap_or(0) != 0;
    let last = x.len() - 1;
    // The trailing axis is 1 (real) or 2 (complex); a one-sided transform takes real input,
    // its inverse complex input (onnx's inference and onnxruntime refuse others).
    let (want, what): (&[i64], _) = match (onesided, inverse) {
        (true, false) => (&[1], "a one-sided DFT takes real input, 1"),
        (true, true) => (&[2], "an inverse one-sided DFT takes complex input, 2"),
        _ => (&[1, 2], "it must be 1 (real) or 2 (complex)"),
    };
    if let Dim::Known(n) = x[last] {
        if !want.contains(&n) {
            return invalid(format!("DFT: the trailing axis holds {n}; {what}"));
        }
    }
    if onesided && inverse {
        // The inverse of a one-sided transform is real, of the given length or 2(n-1).
        shape[a] = if c.has(1) { len } else { x[a].sub(&Dim::Known(1)).mul(&Dim::Known(2)) };
        shape[last] = Dim::Known(1);
    } else {
        shape[a] = if onesided { len.div_floor(&Dim::Known(2)).add(&Dim::Known(1)) } else { len };
        shape[last] = Dim::Known(2);
    }
    let mut out = Out::default();
    // The spec zero-pads an empty signal to the DFT's length; onnxruntime refuses it.
    if x[a] == Dim::Known(0) && numel(&shape).is_some_and(|n| n > 0) {
        let msg = format!("DFT: axis {a} is empty, which onnxruntime refuses when the output is not");
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

/// STFT as onnxruntime runs it: a real signal `[batch, length]` or `[batch, length, 1]`, or a
/// complex one `[batch, length, 2]`; the window's length, or else frame_length, is the frame,
/// which must fit in the signal (onnxruntime runs a frame as long as the signal, and crashes on
/// an empty one); frames start every frame_step > 0 samples.
pub fn stft(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, Some(unknown_rank(4)))]) };
    if !(2..=3).contains(&x.len()) {
        return invalid(format!(
            "STFT: a signal of rank {}; it must be [batch, length] or [batch, length, 1 or 2]",
            x.len()
        ));
    }
    if let Some(n) = x.get(2).and_then(Dim::known).filter(|n| !matches!(n, 1 | 2)) {
        return invalid(format!("STFT: the signal's trailing axis holds {n}; it must be 1 (real) or 2 (complex)"));
    }
    one_element(c, 1)?;
    expect_rank(c, 2, 1)?;
    let window = c.has(2).then(|| dim(c, 2, 0));
    if c.has(3) {
        // onnx's inference, which onnxruntime runs, wants a scalar where no window is given.
        if window.is_none() {
            expect_rank(c, 3, 0)?
        } else {
            one_element(c, 3)?
        }
    }
    let length = c.has(3).then(|| first_value(c, 3));
    let frame = match (window, length) {
        (Some(w), Some(l)) => match (w.known(), l.known()) {
            (Some(a), Some(b)) if a != b => {
                return invalid(format!("STFT: a window of {a} samples with frame_length {b}; they must be equal"))
            }
            (None, Some(_)) => l,
            _ => w,
        },
        (Some(w), None) => w,
        (None, Some(l)) => l,
        (None, None) => return invalid("STFT needs a window or a frame_length".into()),
    };
    if let Some(f) = frame.known().filter(|f| *f <= 0) {
        return invalid(format!("STFT: a frame of {f} samples; it must be at least 1"));
    }
    let step = first_value(c, 1);
    if let Some(s) = step.known().filter(|s| *s <= 0) {
        return invalid(format!("STFT: frame_step {s}; it must be above 0"));
    }
    let mut out = Out::default();
    match (&x[1], frame.known()) {
        (Dim::Known(n), Some(f)) if f > *n => {
            return Err(RuleError::Window(format!("STFT: a frame of {f} samples does not fit in a signal of {n}")));
        }
        (Dim::Term(sym), Some(f)) if f > 1 => {
            out.assumptions.push((1, Assumption::AtLeast { size: sym.clone(), min: f }))
        }
        _ => {}
    }
    let frames = x[1].sub(&frame).div_floor(&step).add(&Dim::Known(1));
    // One-sided even for complex input, which the spec forbids and onnxruntime runs.
    let onesided = c.node.attr_int("onesided").unwrap_or(1) != 0;
    let bins = if onesided { frame.div_floor(&Dim::Known(2)).add(&Dim::Known(1)) } else { frame };
    out.types = smallvec::smallvec![ty(dtype, Some(vec![x[0].clone(), frames, bins, Dim::Known(2)]))];
    Ok(out)
}

pub fn window(c: &Ctx) -> R {
    let dtype = attr_dtype(c, "output_datatype", Some(DType::F32))?;
    let n = first_value(c, 0);
    if let Some(n) = n.known().filter(|n| *n <= 0) {
        return invalid(format!("{}: size {n}; it must be above 0", c.node.op_type));
    }
    outs(vec![ty(dtype, Some(vec![n]))])
}

/// MelWeightMatrix: all five inputs are scalars by the spec. onnxruntime wants num_mel_bins
/// and dft_length of rank 0, and one element of the others.
pub fn mel_weight_matrix(c: &Ctx) -> R {
    expect_rank(c, 0, 0)?;
    expect_rank(c, 1, 0)?;
    (2..5).try_for_each(|i| one_element(c, i))?;
    let dtype = attr_dtype(c, "output_datatype", Some(DType::F32))?;
    let bins = first_value(c, 0);
    // dft_length / 2 + 1, dividing toward zero as onnxruntime does (a length of -1 gives 1).
    let dft = first_value(c, 1);
    outs(vec![ty(dtype, Some(vec![fold::div(&dft, &Dim::Known(2)).add(&Dim::Known(1)), bins]))])
}

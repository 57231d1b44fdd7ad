//! Rules whose output follows an input element for element or is generated: Clip, Identity,
//! Cast, CastLike, BitCast, the quantization ops, the random generators, EyeLike, Multinomial
//! and the training optimizers.

use super::{
    attr_dtype, axis_in, dim, expect_rank, expect_shape, fold, invalid, known_shape, like_input, moved, one, one_value,
    outs, same_type_of, ty, with_dim, R,
};
use crate::dtype::DType;
use crate::ops::{Bounds, Ctx, Out, RuleError, Spread};
use crate::shape::{render, Dim, Type};

/// Mod of floats before opset 28 must set `fmod=1` ("If the input type is floating point, then
/// `fmod` attribute must be set to 1"); onnxruntime refuses at run time. Mod 28 defines it.
pub fn float_mod(c: &Ctx) -> Result<(), crate::ops::RuleError> {
    match c.dtype(0) {
        Some(d) if c.opset < 28 && d.is_float() && c.node.attr_int("fmod").unwrap_or(0) == 0 => {
            invalid(format!("Mod: {} inputs need fmod=1 before opset 28 (the model imports {})", d.name(), c.opset))
        }
        _ => Ok(()),
    }
}

/// Clip's min and max are scalars (onnxruntime also runs one-element vectors).
pub fn clip(c: &Ctx) -> R {
    for i in [1, 2] {
        match c.shape(i) {
            Some(s) if s.len() > 1 || s.first().and_then(Dim::known).is_some_and(|n| n != 1) => {
                return invalid(format!("Clip: input {i} must be a scalar, not {}", render(s)));
            }
            _ => {}
        }
    }
    let mut out = like_input(c);
    // Integers clipped to known limits: each bound clipped, reached where the input's is
    // (DeBERTa's relative positions, clipped to the table's rows); the limits themselves bound
    // an input of unknown elements.
    if let (true, Some(mn), Some(mx)) = (c.dtype(0).is_some_and(DType::is_int), c.between(1), c.between(2)) {
        let clip = |v: &Dim| Dim::min_of(&[&Dim::max_of(&[v, &mn.lo]), &mx.hi]);
        let bounds = match c.between(0) {
            Some(x) => Bounds { lo: clip(&x.lo), hi: clip(&x.hi), tight: x.tight && mn.tight && mx.tight },
            None => Bounds { lo: clip(&mn.lo), hi: mx.hi.clone(), tight: false },
        };
        out.spreads = vec![Some(Spread::Between(bounds))];
    }
    Ok(out)
}

pub fn identity(c: &Ctx) -> R {
    let mut out = moved(c, same_type_of(c, 0));
    out.strings = vec![c.string_value(0).map(<[String]>::to_vec)];
    Ok(out)
}

fn cast_to(c: &Ctx, to: Option<DType>) -> R {
    let mut out = one(Type::tensor(to, c.shape(0).map(<[Dim]>::to_vec)));
    let to_int = to.is_some_and(|d| d.is_int() || d == DType::Bool);
    let from_int = c.dtype(0).is_some_and(|d| d.is_int() || d == DType::Bool);
    let value = match (from_int, to_int, to) {
        (true, true, Some(DType::Bool)) => c.value(0).map(|v| v.iter().map(|d| fold::and(d, d)).collect()),
        (true, true, _) => c.value(0).map(<[Dim]>::to_vec),
        // A size cast to float or double (an exporter's `arange(w)` over a feature map) keeps
        // its symbol: the float holds that whole number, exactly for any size below 2^24
        // (a known value past it is unknown). Float16 and bfloat16 round from 2048 and 256,
        // so they keep nothing. Moves, Range, Cast back to an integer and the exact float
        // arithmetic of sizes (`infer::fold_ratio`) read these contents.
        (true, false, Some(DType::F32 | DType::F64)) if c.dtype(0) != Some(DType::Bool) => c.value(0).map(|v| {
            v.iter()
                .map(|d| match d {
                    Dim::Known(k) if k.unsigned_abs() > 1 << 24 => Dim::Unknown,
                    d => d.clone(),
                })
                .collect()
        }),
        // Floats that are whole numbers convert exactly (truncation toward zero), as do the
        // sizes float contents hold.
        (false, true, Some(DType::Bool)) => {
            c.float_value(0).map(|f| f.iter().map(|x| Dim::Known((*x != 0.0) as i64)).collect())
        }
        (false, true, _) => c.float_value(0).map_or(c.value(0).map(<[Dim]>::to_vec), |f| {
            Some(
                f.iter()
                    .map(|x| if x.is_finite() && x.abs() < 9e15 { Dim::Known(x.trunc() as i64) } else { Dim::Unknown })
                    .collect(),
            )
        }),
        _ => None,
    };
    // A spread of whole numbers stays where the target type holds them (an index `arange`
    // cast to int64).
    if value.is_none() && matches!(to, Some(DType::I32 | DType::I64 | DType::F64)) {
        out.spreads = vec![c.between(0).map(Spread::Between)];
    }
    out.values = vec![value];
    // Rounded to the target type: 2049 is 2048 in float16.
    out.floats = vec![to.and_then(|to| c.numbers(0)?.into_iter().map(|x| to.round_float(x)).collect())];
    Ok(out)
}

pub fn cast(c: &Ctx) -> R {
    saturated(c, attr_dtype(c, "to", None)?)
}

pub fn cast_like(c: &Ctx) -> R {
    saturated(c, c.dtype(1))
}

/// Cast and CastLike to `to`. The spec reads saturate for float8 targets only; onnxruntime
/// refuses saturate=0 for the others ("Attribute saturate is only used for cast to float 8
/// types").
fn saturated(c: &Ctx, to: Option<DType>) -> R {
    let mut out = cast_to(c, to)?;
    let float8 = matches!(to, Some(DType::Other(17..=20 | 24)));
    if c.node.attr_int("saturate") == Some(0) && to.is_some() && !float8 {
        let msg = format!("{}: saturate=0 to a type other than float8; onnxruntime refuses it", c.node.op_type);
        out.warnings.push((crate::diag::Code::RuntimeDiffers, msg));
    }
    // Cast's round_mode "only applies to casting to float8e8m0"; onnxruntime refuses one other
    // than the default there ("Attribute round_mode is only used for cast to float8e8m0").
    let round = c.node.attr_str("round_mode").filter(|m| m != "up" && c.node.op_type == "Cast");
    if let Some(m) = round.filter(|_| to.is_some_and(|t| t != DType::Other(24))) {
        let msg = format!("Cast: round_mode {m} to a type other than float8e8m0; onnxruntime refuses it");
        out.warnings.push((crate::diag::Code::RuntimeDiffers, msg));
    }
    Ok(out)
}

pub fn bit_cast(c: &Ctx) -> R {
    outs(vec![ty(attr_dtype(c, "to", None)?, c.shape(0).map(<[Dim]>::to_vec))])
}

pub fn quantize(c: &Ctx) -> R {
    let given = attr_dtype(c, "output_dtype", None)?;
    // onnx's inference: "output_dtype INT8 does not match y_zero_point type UINT8".
    if let (Some(want), Some(zero), true) = (given, c.dtype(2), c.has(2)) {
        if want != zero {
            return invalid(format!("QuantizeLinear: output_dtype {} and a {} zero point", want.name(), zero.name()));
        }
    }
    let dtype = if c.has(2) { c.dtype(2) } else { given.or(Some(DType::U8)) };
    let mut out = quantized(c, dtype)?;
    // The type the division runs in (opset 23): a float type, of which onnxruntime's CPU
    // kernel takes float and float16 ("only supports precision 0 (use scale type), FLOAT, and
    // FLOAT16").
    match attr_dtype(c, "precision", None)? {
        Some(DType::F32 | DType::F16) | None => {}
        Some(t) if t.is_float() => {
            let msg = format!("QuantizeLinear: precision {}; onnxruntime's CPU kernel refuses it", t.name());
            out.warnings.push((crate::diag::Code::RuntimeDiffers, msg));
        }
        Some(t) => return invalid(format!("QuantizeLinear: precision {}; it takes a float type", t.name())),
    }
    Ok(out)
}

pub fn dequantize(c: &Ctx) -> R {
    quantized(c, attr_dtype(c, "output_dtype", c.dtype(1))?.or(c.dtype(1)))
}

/// QuantizeLinear and DequantizeLinear: like the input, in `dtype`. The scale (input 1) holds
/// one value, one per element of `axis`, or (`block_size`) one per block of `axis` with the
/// input's other sizes; the zero point (input 2) is shaped like the scale.
fn quantized(c: &Ctx, dtype: Option<DType>) -> R {
    let mut out = Out::default();
    if let (Some(x), Some(s)) = (c.shape(0), c.shape(1)) {
        let axis = || axis_in(c.node.attr_int("axis").unwrap_or(1), x.len(), &c.node.op_type);
        let block = c.node.attr_int("block_size").unwrap_or(0);
        // "The block size is a positive integer", 0 when not blocked.
        if block < 0 {
            return invalid(format!("{}: block_size {block}; it takes a positive size", c.node.op_type));
        }
        // One value (a scalar or a vector of one) either way for scale and zero point.
        let want = match s {
            _ if block > 0 => with_dim(x, axis()?, x[axis()?].div_ceil(&Dim::Known(block))),
            _ if one_value(s) => s.to_vec(),
            _ => vec![x[axis()?].clone()],
        };
        expect_shape(c, 1, &want, &mut out)?;
        if !(one_value(s) && c.shape(2).is_some_and(one_value)) {
            expect_shape(c, 2, s, &mut out)?;
        }
    }
    out.types = smallvec::smallvec![ty(dtype, c.shape(0).map(<[Dim]>::to_vec))];
    Ok(out)
}

pub fn dynamic_quantize(c: &Ctx) -> R {
    outs(vec![
        ty(Some(DType::U8), c.shape(0).map(<[Dim]>::to_vec)),
        ty(Some(DType::F32), Some(vec![])),
        ty(Some(DType::U8), Some(vec![])),
    ])
}

pub fn random(c: &Ctx) -> R {
    distribution(c)?;
    let dtype = attr_dtype(c, "dtype", Some(DType::F32))?;
    outs(vec![ty(dtype, c.node.attr_ints("shape").map(known_shape))])
}

/// A uniform distribution's bounds in order and a normal one's scale above 0, as the standard
/// library's distributions onnxruntime builds assert: it aborts the process on others (NaN
/// among them).
fn distribution(c: &Ctx) -> Result<(), RuleError> {
    let at = |name, default| c.node.attr_float(name).unwrap_or(default);
    let op = &c.node.op_type;
    let (low, high, scale) = (at("low", 0.0), at("high", 1.0), at("scale", 1.0));
    let what = match op.as_str() {
        "RandomUniform" | "RandomUniformLike" if low.partial_cmp(&high).is_none_or(|o| o.is_gt()) => {
            format!("low {low} not at most high {high}")
        }
        "RandomNormal" | "RandomNormalLike" if scale.is_nan() || scale <= 0.0 => format!("scale {scale}"),
        _ => return Ok(()),
    };
    invalid(format!("{op}: {what}, which onnxruntime aborts on"))
}

pub fn eye_like(c: &Ctx) -> R {
    expect_rank(c, 0, 2)?;
    random_like(c)
}

pub fn random_like(c: &Ctx) -> R {
    distribution(c)?;
    let dtype = attr_dtype(c, "dtype", c.dtype(0))?;
    outs(vec![ty(dtype, c.shape(0).map(<[Dim]>::to_vec))])
}

/// Multinomial: [batch, sample_size] samples of a [batch, classes] input (onnx's inference:
/// "Input tensor must have rank 2").
pub fn multinomial(c: &Ctx) -> R {
    expect_rank(c, 0, 2)?;
    let dtype = attr_dtype(c, "dtype", Some(DType::I32))?;
    let batch = dim(c, 0, 0);
    let n = Dim::Known(c.node.attr_int("sample_size").unwrap_or(1));
    outs(vec![ty(dtype, Some(vec![batch, n]))])
}

/// Momentum, Adagrad, Adam: inputs (R, T, X.., G.., state..), outputs one new tensor per
/// optimized tensor and per state, each shaped like the input it replaces.
pub fn optimizer(c: &Ctx) -> R {
    let n = c.node.outputs.len();
    outs((0..n).map(|i| same_type_of(c, 2 + i)).collect())
}

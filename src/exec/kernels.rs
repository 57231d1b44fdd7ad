//! The broadcasting family's kernels (Add ... PRelu, Where, Expand, the N-ary Sum/Mean/Max/Min,
//! the legacy opset<7 `broadcast`/`axis` form), the unary math ops and Cast. Output shapes
//! come from the one rule in `crate::shape`; every loop runs on `broadcast`'s iterator.

use super::broadcast::{fold_into, map1, map2, map3, Budget};
use super::scalar::{pow, Conv, Int, Num};
use super::tensor::{Data, Elem, HostTensor};
use super::{Ctx, Fail};
use crate::dtype::DType;
use crate::ops::{self, ShapeRule};
use crate::shape::{self, BroadcastError};

/// Runs `$body` with `$x`, `$y` bound to the elements of two tensors of the same type, one of
/// the listed `Data` variants; `$want` names those types in the error for any other pair.
macro_rules! same {
    ($want:literal [$($v:ident)*] $a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {
        match ($a, $b) {
            $((Data::$v($x), Data::$v($y)) => $body,)*
            (a, b) => return Err(type_error(a, b, $want)),
        }
    };
}

/// `same!` for the numeric types.
macro_rules! same_num {
    ($($t:tt)*) => { same!("numeric" [F16 BF16 F32 F64 I8 I16 I32 I64 U8 U16 U32 U64] $($t)*) };
}

/// `same!` for the integer types.
macro_rules! same_int {
    ($($t:tt)*) => { same!("integer" [I8 I16 I32 I64 U8 U16 U32 U64] $($t)*) };
}

/// `same!` for every type.
macro_rules! same_any {
    ($($t:tt)*) => { same!("matching" [F16 BF16 F32 F64 I8 I16 I32 I64 U8 U16 U32 U64 Bool Str] $($t)*) };
}

/// Runs `$body` with `$x` bound to a tensor's elements when they are of one of the listed
/// `Data` variants; `$other` for the rest.
macro_rules! with {
    ([$($v:ident)*] $a:expr, $x:ident => $body:expr, else $other:expr) => {
        match $a {
            $(Data::$v($x) => $body,)*
            _ => $other,
        }
    };
}

/// `with!` for the numeric types.
macro_rules! with_num {
    ($($t:tt)*) => { with!([F16 BF16 F32 F64 I8 I16 I32 I64 U8 U16 U32 U64] $($t)*) };
}

/// `with!` for the float types.
macro_rules! with_float {
    ($($t:tt)*) => { with!([F16 BF16 F32 F64] $($t)*) };
}

fn type_error(a: &Data, b: &Data, want: &str) -> Fail {
    if a.dtype() == b.dtype() {
        Fail::Invalid(format!("element type {} is not supported here (needs {want} types)", a.dtype()))
    } else {
        Fail::Invalid(format!("inputs have element types {} and {}; they must be the same", a.dtype(), b.dtype()))
    }
}

fn bcast_error(e: BroadcastError<usize>, shapes: &[&HostTensor]) -> Fail {
    let list = shapes.iter().map(|t| format!("{:?}", t.shape)).collect::<Vec<_>>().join(", ");
    Fail::Invalid(match e {
        BroadcastError::Clash { axis, sizes } => {
            format!("input shapes {list} do not broadcast: sizes {sizes:?} clash at output axis {axis}")
        }
        other => format!("input shapes {list} do not broadcast: {other:?}"),
    })
}

/// The two operands of a binary family op, viewed so that plain multidirectional broadcasting
/// applies, and the output shape. Before opset 7 the legacy `broadcast`/`axis` form decides:
/// input 1 is placed at `axis` of input 0 (`shape::legacy`), or the shapes must be equal.
fn operands2(ctx: &Ctx) -> Result<(HostTensor, HostTensor, Vec<usize>), Fail> {
    let a = ctx.input(0)?.clone();
    let b = ctx.input(1)?.clone();
    let legacy = ops::lookup(&ctx.node.domain, &ctx.node.op_type, ctx.opset)
        .is_some_and(|d| matches!(d.shape, ShapeRule::Legacy));
    if !legacy {
        let out = shape::multi::<usize>(&[&a.shape, &b.shape]).map_err(|e| bcast_error(e, &[&a, &b]))?.shape;
        return Ok((a, b, out));
    }
    if ctx.node.attr_int("broadcast").unwrap_or(0) == 0 {
        if a.shape != b.shape {
            return Err(Fail::Invalid(format!(
                "without broadcast=1 (opset {}) the shapes must be equal: {:?} and {:?}",
                ctx.opset, a.shape, b.shape
            )));
        }
        let out = a.shape.clone();
        return Ok((a, b, out));
    }
    let axis = ctx.node.attr_int("axis");
    let out = shape::legacy::<usize>(&a.shape, &b.shape, axis).map_err(|e| bcast_error(e, &[&a, &b]))?.shape;
    // `legacy` accepted the placement; view b at those axes so the common iterator applies.
    let dims = shape::legacy_dims(a.shape.len(), b.shape.len(), axis)
        .ok_or_else(|| Fail::Invalid(format!("axis {axis:?} places input 1 outside input 0")))?;
    let placed = shape::in_dim::<usize>(&b.shape, a.shape.len(), &dims).map_err(|e| bcast_error(e, &[&a, &b]))?;
    let b = b.reshaped(placed)?;
    Ok((a, b, out))
}

/// The output shape of the N-ary ops: multidirectional from opset 8, equal shapes before.
fn operands_n(ctx: &Ctx) -> Result<(Vec<HostTensor>, Vec<usize>), Fail> {
    let xs: Vec<HostTensor> = ctx.inputs.iter().flatten().cloned().collect();
    if xs.is_empty() {
        return Err(Fail::Invalid("needs at least one input".into()));
    }
    let equal = ops::lookup(&ctx.node.domain, &ctx.node.op_type, ctx.opset)
        .is_some_and(|d| matches!(d.shape, ShapeRule::Equal(_)));
    if equal {
        if let Some(x) = xs.iter().find(|x| x.shape != xs[0].shape) {
            return Err(Fail::Invalid(format!(
                "before opset 8 all inputs must have one shape: {:?} and {:?}",
                xs[0].shape, x.shape
            )));
        }
        let out = xs[0].shape.clone();
        return Ok((xs, out));
    }
    let shapes: Vec<&[usize]> = xs.iter().map(|x| x.shape.as_slice()).collect();
    let refs: Vec<&HostTensor> = xs.iter().collect();
    let out = shape::multi::<usize>(&shapes).map_err(|e| bcast_error(e, &refs))?.shape;
    Ok((xs, out))
}

fn one(shape: Vec<usize>, data: Data) -> Result<Vec<HostTensor>, Fail> {
    Ok(vec![HostTensor::new(shape, data)?])
}

/// The arithmetic ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Fmod,
    Max,
    Min,
}

/// Add, Sub, Mul, Div (and Mod).
pub fn arith(ctx: &Ctx, op: Arith) -> Result<Vec<HostTensor>, Fail> {
    let (a, b, out) = operands2(ctx)?;
    let (bu, xs, ys) = (ctx.budget, &a.shape, &b.shape);
    let data = same_num!(&*a.data, &*b.data, |x, y| Elem::wrap(match op {
        Arith::Add => map2(bu, &out, x, xs, y, ys, |p, q| p.add(*q))?,
        Arith::Sub => map2(bu, &out, x, xs, y, ys, |p, q| p.sub(*q))?,
        Arith::Mul => map2(bu, &out, x, xs, y, ys, |p, q| p.mul(*q))?,
        Arith::Div => map2(bu, &out, x, xs, y, ys, |p, q| p.div(*q))?,
        Arith::Mod => map2(bu, &out, x, xs, y, ys, |p, q| p.modulo(*q))?,
        Arith::Fmod => map2(bu, &out, x, xs, y, ys, |p, q| p.fmod(*q))?,
        Arith::Max => map2(bu, &out, x, xs, y, ys, |p, q| p.maxn(*q))?,
        Arith::Min => map2(bu, &out, x, xs, y, ys, |p, q| p.minn(*q))?,
    }));
    one(out, data)
}

/// Mod: `fmod=0` is numpy's `mod` (sign of the divisor, integers only); `fmod=1` is C's
/// `fmod` (sign of the dividend), required for floats.
pub fn modulo(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let fmod = ctx.node.attr_int("fmod").unwrap_or(0) == 1;
    arith(ctx, if fmod { Arith::Fmod } else { Arith::Mod })
}

/// Pow: the base and exponent may have different types (opset 12+); the result has the
/// base's type.
pub fn pow_op(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let (a, b, out) = operands2(ctx)?;
    let bu = ctx.budget;
    let unsupported = || Fail::Invalid(format!("Pow of {} by {} is not supported", a.dtype(), b.dtype()));
    let data = with_num!(&*a.data, x => with_num!(&*b.data, y => {
        Elem::wrap(map2(bu, &out, x, &a.shape, y, &b.shape, |p, q| pow(*p, *q))?)
    }, else return Err(unsupported())), else return Err(unsupported()));
    one(out, data)
}

/// The comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Gt,
    Ge,
    Lt,
    Le,
}

/// Equal, Greater, GreaterOrEqual, Less, LessOrEqual.
pub fn compare(ctx: &Ctx, op: Cmp) -> Result<Vec<HostTensor>, Fail> {
    let (a, b, out) = operands2(ctx)?;
    let (bu, xs, ys) = (ctx.budget, &a.shape, &b.shape);
    let v = same_any!(&*a.data, &*b.data, |x, y| match op {
        Cmp::Eq => map2(bu, &out, x, xs, y, ys, |p, q| p == q)?,
        Cmp::Gt => map2(bu, &out, x, xs, y, ys, |p, q| p > q)?,
        Cmp::Ge => map2(bu, &out, x, xs, y, ys, |p, q| p >= q)?,
        Cmp::Lt => map2(bu, &out, x, xs, y, ys, |p, q| p < q)?,
        Cmp::Le => map2(bu, &out, x, xs, y, ys, |p, q| p <= q)?,
    });
    one(out, Data::Bool(v))
}

/// And, Or, Xor: `f` on bool inputs.
pub fn logical(ctx: &Ctx, f: fn(bool, bool) -> bool) -> Result<Vec<HostTensor>, Fail> {
    let (a, b, out) = operands2(ctx)?;
    let (Data::Bool(x), Data::Bool(y)) = (&*a.data, &*b.data) else {
        return Err(Fail::Invalid(format!("needs bool inputs, not {} and {}", a.dtype(), b.dtype())));
    };
    let v = map2(ctx.budget, &out, x, &a.shape, y, &b.shape, |p, q| f(*p, *q))?;
    one(out, Data::Bool(v))
}

/// The bitwise ops and shifts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bit {
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

/// BitwiseAnd, BitwiseOr, BitwiseXor (and BitShift).
pub fn bitwise(ctx: &Ctx, op: Bit) -> Result<Vec<HostTensor>, Fail> {
    let (a, b, out) = operands2(ctx)?;
    let (bu, xs, ys) = (ctx.budget, &a.shape, &b.shape);
    let data = same_int!(&*a.data, &*b.data, |x, y| Elem::wrap(match op {
        Bit::And => map2(bu, &out, x, xs, y, ys, |p, q| p.and(*q))?,
        Bit::Or => map2(bu, &out, x, xs, y, ys, |p, q| p.or(*q))?,
        Bit::Xor => map2(bu, &out, x, xs, y, ys, |p, q| p.xor(*q))?,
        Bit::Shl => map2(bu, &out, x, xs, y, ys, |p, q| p.shl(*q))?,
        Bit::Shr => map2(bu, &out, x, xs, y, ys, |p, q| p.shr(*q))?,
    }));
    one(out, data)
}

/// BitShift: `direction` is `LEFT` or `RIGHT` (required).
pub fn bit_shift(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    match ctx.node.attr_str("direction").as_deref() {
        Some("LEFT") => bitwise(ctx, Bit::Shl),
        Some("RIGHT") => bitwise(ctx, Bit::Shr),
        other => Err(Fail::Invalid(format!("direction must be LEFT or RIGHT, not {other:?}"))),
    }
}

/// Sum (`Arith::Add`), Max and Min of any number of inputs; Mean is Sum with `mean`.
pub fn nary(ctx: &Ctx, op: Arith, mean: bool) -> Result<Vec<HostTensor>, Fail> {
    let (xs, out) = operands_n(ctx)?;
    let dtype = xs[0].dtype();
    if let Some(x) = xs.iter().find(|x| x.dtype() != dtype) {
        return Err(Fail::Invalid(format!("inputs have element types {dtype} and {}", x.dtype())));
    }
    let data = with_num!(&*xs[0].data, first => nary_t(first, ctx.budget, op, mean, &xs, &out)?,
        else return Err(Fail::Invalid(format!("element type {dtype} is not supported here"))));
    one(out, data)
}

/// `nary` at the type of `_first` (input 0's elements, which only pick it): the inputs folded
/// left to right, the first two combined directly.
fn nary_t<T: Num>(
    _first: &[T],
    bu: Budget,
    op: Arith,
    mean: bool,
    xs: &[HostTensor],
    out: &[usize],
) -> Result<Data, Fail> {
    let f = |a: &T, b: &T| match op {
        Arith::Add => a.add(*b),
        Arith::Max => a.maxn(*b),
        _ => a.minn(*b),
    };
    let parts: Vec<(&[T], &[usize])> = xs.iter().map(|x| (x.elems::<T>().unwrap_or(&[]), x.shape.as_slice())).collect();
    let mut v = match parts.as_slice() {
        [] => return Err(Fail::Invalid("needs at least one input".into())),
        [(x, s)] => map1(bu, out, x, s, |a| *a)?,
        [(x, xs), (y, ys)] => map2(bu, out, x, xs, y, ys, f)?,
        [(x, s), rest @ ..] => {
            let mut acc = map1(bu, out, x, s, |a| *a)?;
            for (y, ys) in rest {
                fold_into(&mut acc, out, y, ys, f)?;
            }
            acc
        }
    };
    if mean {
        let k = T::from_u64(xs.len() as u64);
        for e in &mut v {
            *e = e.div(k);
        }
    }
    Ok(T::wrap(v))
}

/// Where's element: `a` where the condition holds, else `b`.
#[inline(always)]
fn pick<T: Clone>(c: &bool, a: &T, b: &T) -> T {
    if *c {
        a.clone()
    } else {
        b.clone()
    }
}

/// Where(cond, x, y): multidirectional over all three.
pub fn where_op(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let c = ctx.input(0)?;
    let x = ctx.input(1)?;
    let y = ctx.input(2)?;
    let Data::Bool(cv) = &*c.data else {
        return Err(Fail::Invalid(format!("condition must be bool, not {}", c.dtype())));
    };
    let out = shape::multi::<usize>(&[&c.shape, &x.shape, &y.shape]).map_err(|e| bcast_error(e, &[c, x, y]))?.shape;
    let bu = ctx.budget;
    let data = same_any!(&*x.data, &*y.data, |xv, yv| {
        let v = map3(bu, &out, (cv, &c.shape), (xv, &x.shape), (yv, &y.shape), pick)?;
        Elem::wrap(v)
    });
    one(out, data)
}

/// PRelu: the slope stretches unidirectionally to x's shape.
pub fn prelu(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let s = ctx.input(1)?;
    let out = shape::uni::<usize>(&x.shape, &s.shape, 1).map_err(|e| bcast_error(e, &[x, s]))?.shape;
    let bu = ctx.budget;
    let data = same_num!(&*x.data, &*s.data, |a, b| Elem::wrap(map2(bu, &out, a, &x.shape, b, &s.shape, |v, k| {
        if *v < Num::zero() {
            v.mul(*k)
        } else {
            *v
        }
    })?));
    one(out, data)
}

/// Expand: x broadcast against the shape held in input 1 (both ways, `shape::expand`).
pub fn expand(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let target = ctx.ints(1)?;
    let target: Vec<usize> = target
        .iter()
        .map(|d| usize::try_from(*d).ok())
        .collect::<Option<_>>()
        .ok_or_else(|| Fail::Invalid(format!("shape {target:?} has a negative size")))?;
    let out = shape::expand::<usize>(&x.shape, &target).map_err(|e| bcast_error(e, &[x]))?.shape;
    broadcast_to(ctx.budget, x, out)
}

/// Copies `x` broadcast to `out` (which it must stretch to).
pub fn broadcast_to(bu: Budget, x: &HostTensor, out: Vec<usize>) -> Result<Vec<HostTensor>, Fail> {
    let data = super::tensor::with_any!(&*x.data, v => Elem::wrap(map1(bu, &out, v, &x.shape, Clone::clone)?));
    one(out, data)
}

// ---------------------------------------------------------------------------------------------
// Unary math.

/// The unary ops that run in f64 on float inputs: `g` on each element.
pub fn unary_float(ctx: &Ctx, g: fn(f64) -> f64) -> Result<Vec<HostTensor>, Fail> {
    float_map(ctx, g)
}

/// LeakyRelu with `alpha` (default 0.01).
pub fn leaky_relu(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let alpha = ctx.node.attr_float("alpha").unwrap_or(0.01) as f64;
    float_map(ctx, |f| if f < 0.0 { f * alpha } else { f })
}

fn float_map(ctx: &Ctx, g: impl Fn(f64) -> f64 + Sync) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    fn go<T: Num>(bu: Budget, v: &[T], s: &[usize], g: &(impl Fn(f64) -> f64 + Sync)) -> Result<Data, Fail> {
        Ok(T::wrap(map1(bu, s, v, s, |e| T::from_f64(g(e.to_f64())))?))
    }
    let data = with_float!(&*x.data, v => go(ctx.budget, v, &x.shape, &g)?,
        else return Err(Fail::Invalid(format!("needs a float input, not {}", x.dtype()))));
    one(x.shape.clone(), data)
}

/// The unary ops defined for every numeric type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumUnary {
    Abs,
    Neg,
    Sign,
    Relu,
}

fn num_unary_t<T: Num>(op: NumUnary, bu: Budget, v: &[T], s: &[usize]) -> Result<Vec<T>, Fail> {
    let z = T::zero();
    match op {
        NumUnary::Abs => map1(bu, s, v, s, |e| if *e < z { z.sub(*e) } else { *e }),
        NumUnary::Neg => map1(bu, s, v, s, |e| z.sub(*e)),
        NumUnary::Sign => map1(bu, s, v, s, |e| {
            if *e > z {
                T::from_i64(1)
            } else if *e < z {
                T::from_i64(-1)
            } else {
                *e
            }
        }),
        NumUnary::Relu => map1(bu, s, v, s, |e| e.maxn(z)),
    }
}

/// Abs, Neg, Sign, Relu.
pub fn num_unary(ctx: &Ctx, op: NumUnary) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let data = with_num!(&*x.data, v => Elem::wrap(num_unary_t(op, ctx.budget, v, &x.shape)?),
        else return Err(Fail::Invalid(format!("needs a numeric input, not {}", x.dtype()))));
    one(x.shape.clone(), data)
}

/// Not: bool only.
pub fn not(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let Data::Bool(v) = &*x.data else {
        return Err(Fail::Invalid(format!("needs a bool input, not {}", x.dtype())));
    };
    one(x.shape.clone(), Data::Bool(map1(ctx.budget, &x.shape, v, &x.shape, |b| !b)?))
}

/// IsNaN: bool output.
pub fn is_nan(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let bu = ctx.budget;
    let v = with_num!(&*x.data, v => map1(bu, &x.shape, v, &x.shape, |e| e.is_nan())?,
        else return Err(Fail::Invalid(format!("needs a numeric input, not {}", x.dtype()))));
    one(x.shape.clone(), Data::Bool(v))
}

// ---------------------------------------------------------------------------------------------
// Cast.

fn cast_from<S: Conv>(bu: Budget, v: &[S], to: DType) -> Result<Data, Fail> {
    fn conv<S: Conv, T: Conv>(bu: Budget, v: &[S]) -> Result<Vec<T>, Fail> {
        bu.check::<T>("output", v.len())?;
        Ok(v.iter().map(|x| T::cast(*x)).collect())
    }
    Ok(match to {
        DType::F16 => Data::F16(conv(bu, v)?),
        DType::BF16 => Data::BF16(conv(bu, v)?),
        DType::F32 => Data::F32(conv(bu, v)?),
        DType::F64 => Data::F64(conv(bu, v)?),
        DType::I8 => Data::I8(conv(bu, v)?),
        DType::I16 => Data::I16(conv(bu, v)?),
        DType::I32 => Data::I32(conv(bu, v)?),
        DType::I64 => Data::I64(conv(bu, v)?),
        DType::U8 => Data::U8(conv(bu, v)?),
        DType::U16 => Data::U16(conv(bu, v)?),
        DType::U32 => Data::U32(conv(bu, v)?),
        DType::U64 => Data::U64(conv(bu, v)?),
        DType::Bool => Data::Bool(conv(bu, v)?),
        DType::Str => {
            bu.check::<Vec<u8>>("output", v.len())?;
            Data::Str(
                v.iter()
                    .map(|x| match S::KIND {
                        super::scalar::Kind::Float => format_float(x.to_f64()),
                        super::scalar::Kind::Signed => x.to_i64().to_string(),
                        super::scalar::Kind::Unsigned => x.to_u64().to_string(),
                        super::scalar::Kind::Bool => (if x.to_u64() != 0 { "True" } else { "False" }).to_string(),
                    })
                    .map(String::into_bytes)
                    .collect(),
            )
        }
        other => return Err(Fail::Unsupported(format!("Cast to {other}"))),
    })
}

fn format_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "INF" } else { "-INF" }.into()
    } else {
        format!("{f}")
    }
}

fn parse_str(s: &[u8]) -> Result<f64, Fail> {
    let text = String::from_utf8_lossy(s);
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "nan" | "+nan" | "-nan" => return Ok(f64::NAN),
        "inf" | "+inf" | "infinity" | "+infinity" => return Ok(f64::INFINITY),
        "-inf" | "-infinity" => return Ok(f64::NEG_INFINITY),
        _ => {}
    }
    t.parse::<f64>().map_err(|_| Fail::Invalid(format!("cannot cast the string '{t}' to a number")))
}

/// Converts `x` to element type `to` (Cast, CastLike).
pub fn cast_to(bu: Budget, x: &HostTensor, to: DType) -> Result<HostTensor, Fail> {
    if x.dtype() == to {
        return Ok(x.clone());
    }
    let data = match &*x.data {
        Data::Bool(v) => cast_from(bu, v, to)?,
        Data::Str(v) => {
            if to == DType::Str {
                Data::Str(v.clone())
            } else {
                let f: Vec<f64> = v.iter().map(|s| parse_str(s)).collect::<Result<_, _>>()?;
                cast_from(bu, &f, to)?
            }
        }
        d => with_num!(d, v => cast_from(bu, v, to)?, else unreachable!("bool and string handled above")),
    };
    HostTensor::new(x.shape.clone(), data)
}

/// Cast: the `to` attribute names the ONNX element type.
pub fn cast(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let code = ctx.node.attr_int("to").ok_or_else(|| Fail::Invalid("no 'to' attribute".into()))?;
    let to = i32::try_from(code)
        .ok()
        .and_then(DType::from_onnx)
        .ok_or_else(|| Fail::Invalid(format!("'to' = {code} is not an element type")))?;
    Ok(vec![cast_to(ctx.budget, x, to)?])
}

/// CastLike: to the element type of input 1.
pub fn cast_like(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let like = ctx.input(1)?;
    Ok(vec![cast_to(ctx.budget, x, like.dtype())?])
}

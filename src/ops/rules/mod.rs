//! The custom shape rules the op table names, one function per op family, and the element
//! folds of shape-tensor propagation.
//!
//! The rules live in one file per op family: `tensor` (shape and data movement, reductions),
//! `index` (ops that address elements by index: Gather*/Scatter*, OneHot, Einsum, ...), `conv`
//! (convolutions and pools), `nn` (Resize, MatMul and Gemm, normalizations, losses, ...),
//! `sequence` (recurrent and attention ops, control flow, sequences and optionals), `signal`
//! (DFT, STFT, windows), `ml` (`ai.onnx.ml`, strings and images) and `elementwise` (casts,
//! quantization, random generators). This module holds the helpers they share and re-exports
//! every rule, so callers name a rule `rules::name` whichever file holds it.

mod conv;
mod elementwise;
mod index;
mod ml;
mod nn;
mod sequence;
mod signal;
mod tensor;

pub use conv::*;
pub use elementwise::*;
pub use index::*;
pub use ml::*;
pub use nn::*;
pub use sequence::*;
pub use signal::*;
pub use tensor::*;

use super::{Bounds, Ctx, Out, RuleError};
use crate::diag::Code;
use crate::dtype::DType;
use crate::ir::{Tensor, TensorData};
use crate::shape::{arith, multi, render, Assumption, Dim, Shape, Term, Type};

type R = Result<Out, RuleError>;

/// Elements above this many are not tracked as shape-tensor contents.
pub const MAX_TRACKED: usize = 1024;

/// The element folds of shape-tensor propagation, named by the op table.
pub mod fold {
    use crate::shape::Dim;

    fn truth(b: Option<bool>) -> Dim {
        b.map_or(Dim::Unknown, |b| Dim::Known(b as i64))
    }

    fn cmp(a: &Dim, b: &Dim) -> Option<std::cmp::Ordering> {
        match (a, b) {
            (Dim::Known(x), Dim::Known(y)) => Some(x.cmp(y)),
            (Dim::Term(_), _) if a == b => Some(std::cmp::Ordering::Equal),
            // A size against a negative constant (torch's `expand(-1)` tests `shape == -1`).
            (Dim::Term(_), Dim::Known(k)) if *k < 0 && a.is_nonneg() => Some(std::cmp::Ordering::Greater),
            (Dim::Known(k), Dim::Term(_)) if *k < 0 && b.is_nonneg() => Some(std::cmp::Ordering::Less),
            _ => None,
        }
    }

    pub fn neg(a: &Dim) -> Dim {
        Dim::Known(0).sub(a)
    }
    pub fn not(a: &Dim) -> Dim {
        truth(a.known().map(|x| x == 0))
    }
    pub fn abs(a: &Dim) -> Dim {
        match a {
            Dim::Known(x) => x.checked_abs().map_or(Dim::Unknown, Dim::Known),
            _ => Dim::Unknown,
        }
    }
    /// Integer division truncates toward zero in ONNX (C semantics); symbolic sizes are
    /// non-negative, where that is the floor (torch's `b*8*h*w // (b*8)` is `h*w`).
    pub fn div(a: &Dim, b: &Dim) -> Dim {
        match (a, b) {
            (Dim::Known(x), Dim::Known(y)) => x.checked_div(*y).map_or(Dim::Unknown, Dim::Known),
            (_, Dim::Known(y)) if *y > 0 => a.div_floor(b),
            (Dim::Term(_), Dim::Term(_)) => a.div_floor(b),
            (Dim::Known(x), Dim::Term(_)) if *x >= 0 => a.div_floor(b),
            _ => Dim::Unknown,
        }
    }
    /// An integer to a known power (torch's dynamo export squares a patch count).
    pub fn pow(a: &Dim, b: &Dim) -> Dim {
        b.known().map_or(Dim::Unknown, |k| a.pow(k))
    }
    pub fn eq(a: &Dim, b: &Dim) -> Dim {
        truth(cmp(a, b).map(|o| o.is_eq()))
    }
    pub fn lt(a: &Dim, b: &Dim) -> Dim {
        truth(cmp(a, b).map(|o| o.is_lt()))
    }
    pub fn gt(a: &Dim, b: &Dim) -> Dim {
        truth(cmp(a, b).map(|o| o.is_gt()))
    }
    pub fn le(a: &Dim, b: &Dim) -> Dim {
        truth(cmp(a, b).map(|o| o.is_le()))
    }
    pub fn ge(a: &Dim, b: &Dim) -> Dim {
        truth(cmp(a, b).map(|o| o.is_ge()))
    }
    pub fn and(a: &Dim, b: &Dim) -> Dim {
        truth(a.known().zip(b.known()).map(|(x, y)| x != 0 && y != 0))
    }
    pub fn or(a: &Dim, b: &Dim) -> Dim {
        truth(a.known().zip(b.known()).map(|(x, y)| x != 0 || y != 0))
    }
}

/// The elements of an integer or boolean tensor stored inline, when there are at most
/// `limit`.
pub fn tensor_ints(t: &Tensor, limit: usize) -> Option<Vec<i64>> {
    if t.dtype == Some(DType::Bool) {
        let n = t.len().filter(|n| *n <= limit)?;
        let v: Vec<i64> = match &t.data {
            TensorData::Raw(b) => b.iter().map(|x| (*x != 0) as i64).collect(),
            TensorData::Int32s(v) => v.iter().map(|x| (*x != 0) as i64).collect(),
            TensorData::Empty => Vec::new(),
            _ => return None,
        };
        return (v.len() == n).then_some(v);
    }
    t.ints(limit)
}

/// The elements of a float32, float64, float16 or bfloat16 tensor stored inline, when there
/// are at most `limit`.
pub fn tensor_floats(t: &Tensor, limit: usize) -> Option<Vec<f64>> {
    let n = t.len().filter(|n| *n <= limit)?;
    let v: Vec<f64> = match (&t.data, t.dtype?) {
        (TensorData::Floats(v), _) => v.iter().map(|x| *x as f64).collect(),
        (TensorData::Doubles(v), _) => v.clone(),
        (TensorData::Raw(b), DType::F32) => {
            b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64).collect()
        }
        (TensorData::Raw(b), DType::F16) => {
            b.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64()).collect()
        }
        (TensorData::Raw(b), DType::BF16) => {
            b.chunks_exact(2).map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64()).collect()
        }
        (TensorData::Int32s(v), DType::F16) => v.iter().map(|x| half::f16::from_bits(*x as u16).to_f64()).collect(),
        (TensorData::Int32s(v), DType::BF16) => v.iter().map(|x| half::bf16::from_bits(*x as u16).to_f64()).collect(),
        (TensorData::Raw(b), DType::F64) => {
            b.chunks_exact(8).map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect()
        }
        (TensorData::Empty, d) if d.is_float() => Vec::new(),
        _ => return None,
    };
    (v.len() == n).then_some(v)
}

/// The elements of a string tensor, when there are at most `limit`.
pub fn tensor_strings(t: &Tensor, limit: usize) -> Option<Vec<String>> {
    match (&t.data, t.dtype?) {
        (TensorData::Strings(v), DType::Str) if v.len() <= limit && Some(v.len()) == t.len() => {
            Some(v.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect())
        }
        (TensorData::Empty, DType::Str) if t.len() == Some(0) => Some(Vec::new()),
        _ => None,
    }
}

pub(super) fn ty(dtype: Option<DType>, shape: Option<Shape>) -> Option<Type> {
    Some(Type::tensor(dtype, shape))
}

pub(super) fn outs(types: Vec<Option<Type>>) -> R {
    Ok(Out { types: types.into(), ..Out::default() })
}

fn one(t: Type) -> Out {
    Out { types: smallvec::smallvec![Some(t)], ..Out::default() }
}

/// One output of type `t` holding input 0's integer and float contents, or its spread: an op
/// that only relabels the axes leaves the elements in order.
fn moved(c: &Ctx, t: Option<Type>) -> Out {
    let mut out = Out { types: smallvec::smallvec![t], ..Out::default() };
    out.values = vec![c.value(0).map(<[Dim]>::to_vec)];
    out.floats = vec![c.float_value(0).map(<[f64]>::to_vec)];
    let shape = out.types[0].as_ref().and_then(Type::shape).map(Vec::as_slice);
    out.spreads = vec![c.spreads.first().copied().flatten().map(|s| s.fit(shape))];
    out
}

/// Indices (input 1) must fall in the axis they index, of `size` elements, counting from its
/// end when negative (onnxruntime: "indices element out of data bounds"). Known indices
/// outside it are the node's error. Indices known only as a [`crate::ops::Spread`] (torch's
/// `arange(seq)` into a table of 64 positions) give the conditions that their least and
/// greatest element fit ([`within`]); `axis` is the output axis the conditions concern.
pub(super) fn indices_fit(c: &Ctx, size: &Dim, axis: usize, out: &mut Out) -> Result<(), RuleError> {
    let op = &c.node.op_type;
    // No index fits an empty axis, whatever the values fed (onnxruntime: "indices element out
    // of data bounds").
    let count = c.shape(1).and_then(|i| Dim::product(i).known());
    if let (Some(0), Some(n @ 1..)) = (size.known(), count) {
        return invalid(format!("{op}: {n} indices into an empty axis"));
    }
    if let (Some(idx), Some(d)) = (c.ints(1), size.known()) {
        return match idx.iter().find(|i| !(-d..d).contains(*i)) {
            Some(i) => invalid(format!("{op}: index {i} is outside the {d} elements of its axis")),
            None => Ok(()),
        };
    }
    let Some(bounds) = c.between(1) else {
        out.unbounded = Some(1);
        return Ok(());
    };
    within(c, bounds, size, axis, out)
}

/// Indices (input 1) within `bounds` must fall in an axis of `size` elements, as
/// [`indices_fit`] says. Bounds that are not tight decide only where they fit for every size,
/// and so do indices that may be empty at some sizes (their bounds hold where they are not,
/// and empty ones index nothing: BART's `ids[:, 1:]` tuples); else the indices are unbounded.
pub(super) fn within(c: &Ctx, bounds: Bounds, size: &Dim, axis: usize, out: &mut Out) -> Result<(), RuleError> {
    let nonempty = match c.shape(1).map(Dim::product) {
        Some(Dim::Known(0)) => return Ok(()),
        Some(Dim::Known(_)) => true,
        Some(Dim::Term(t)) => t.bounds(&|_| (1, None)).0 >= 1,
        Some(Dim::Unknown) | None => false,
    };
    let Bounds { lo, hi, tight } = bounds;
    let tight = tight && nonempty;
    // `hi <= size - 1` and `lo >= -size`, each `x >= min` or `x <= max` with the index it is
    // about: over the indices where the size is known, over the size where the indices are
    // (`batch >= 1` for index 0), else over their difference. A size is never below 0, so
    // indices that are not negative need nothing more.
    let needs = match (size, &hi, &lo) {
        (Dim::Known(d), _, _) => {
            [(hi.clone(), None, Some(d.saturating_sub(1)), &hi), (lo.clone(), Some(d.saturating_neg()), None, &lo)]
        }
        (_, Dim::Known(h), Dim::Known(l)) => {
            let least = |m: i64| Some(m).filter(|m| *m > 0);
            [
                (size.clone(), least(h.saturating_add(1)), None, &hi),
                (size.clone(), least(l.saturating_neg()), None, &lo),
            ]
        }
        _ => [(hi.sub(size), None, Some(-1), &hi), (lo.add(size), Some(0).filter(|_| !lo.is_nonneg()), None, &lo)],
    };
    let (mut conditions, mut undecided) = (Vec::new(), false);
    for (x, min, max, index) in needs {
        let (least, most) = x.bounds();
        match x {
            Dim::Known(v) if min.is_some_and(|m| v < m) || max.is_some_and(|m| v > m) => match tight {
                true => {
                    let op = &c.node.op_type;
                    return invalid(format!("{op}: index {index} is outside the {size} elements of its axis"));
                }
                false => undecided = true,
            },
            Dim::Unknown => undecided |= min.is_some() || max.is_some(),
            // A condition that holds for every size is none (`batch*seq >= 0`).
            Dim::Term(t) => match (min, max) {
                (Some(min), _) if least < min => {
                    let (size, min) = unshifted(t, min);
                    conditions.push((axis, Assumption::AtLeast { size, min }))
                }
                (_, Some(max)) if most.is_none_or(|b| b > max) => {
                    let (size, max) = unshifted(t, max);
                    conditions.push((axis, Assumption::AtMost { size, max }))
                }
                _ => {}
            },
            Dim::Known(_) => {}
        }
    }
    match tight {
        true => out.assumptions.extend(conditions),
        false => undecided |= !conditions.is_empty(),
    }
    if undecided {
        out.unbounded = Some(1);
    }
    Ok(())
}

/// A bound on `t` as a bound on `t` less its constant (`seq <= 64` for `seq-1 <= 63`).
fn unshifted(t: Term, bound: i64) -> (Term, i64) {
    let shift = Some(t.constant()).filter(|c| *c != 0);
    match shift.and_then(|c| Some((Dim::Term(t.clone()).sub(&Dim::Known(c)), bound.checked_sub(c)?))) {
        Some((Dim::Term(u), b)) => (u, b),
        _ => (t, bound),
    }
}

pub(super) fn invalid<T>(msg: String) -> Result<T, RuleError> {
    Err(RuleError::Invalid(msg))
}

/// `axis` (negative counts from the end) as an index into `rank` axes.
pub(super) fn axis_in(axis: i64, rank: usize, op: &str) -> Result<usize, RuleError> {
    arith::axis(axis, rank).map_err(op_err(op))
}

/// The axes `list` names (negative counting from the end), each once, or all `rank` axes
/// without one.
fn axes_or_all(list: Option<&[i64]>, rank: usize, op: &str) -> Result<Vec<usize>, RuleError> {
    let Some(list) = list else { return Ok((0..rank).collect()) };
    let mut axes = Vec::with_capacity(list.len());
    for x in list {
        let a = axis_in(*x, rank, op)?;
        if axes.contains(&a) {
            return invalid(format!("{op}: axis {a} is listed twice"));
        }
        axes.push(a);
    }
    Ok(axes)
}

/// A shared shape computation's reason, as this op's error.
fn op_err(op: &str) -> impl Fn(String) -> RuleError + '_ {
    move |why| RuleError::Invalid(format!("{op}: {why}"))
}

fn known_shape(dims: &[i64]) -> Shape {
    dims.iter().map(|d| if *d >= 0 { Dim::Known(*d) } else { Dim::Unknown }).collect()
}

fn unknown_rank(n: usize) -> Shape {
    vec![Dim::Unknown; n]
}

/// Input `i`'s rank, every size unknown.
pub(super) fn rank_only(c: &Ctx, i: usize) -> Option<Shape> {
    c.shape(i).map(|s| unknown_rank(s.len()))
}

/// The element type named by an integer attribute, or `default`; an error where the attribute
/// names none (onnx's inference: "Attribute to does not specify a valid type").
fn attr_dtype(c: &Ctx, name: &str, default: Option<DType>) -> Result<Option<DType>, RuleError> {
    // The quantizers' output_dtype and precision default to 0, "not given".
    let unset = |k: &i64| *k == 0 && matches!(name, "output_dtype" | "precision");
    let Some(code) = c.node.attr_int(name).filter(|k| !unset(k)) else { return Ok(default) };
    match i32::try_from(code).ok().filter(|k| (1..=DType::LAST_CODE).contains(k)) {
        Some(k) => Ok(DType::from_onnx(k)),
        None => invalid(format!("{}: {name}={code} names no element type", c.node.op_type)),
    }
}

fn same_type_of(c: &Ctx, i: usize) -> Option<Type> {
    c.inputs.get(i).copied().flatten().cloned()
}

/// Input 0's type, for an op whose output is like its input.
fn like_input(c: &Ctx) -> Out {
    Out { types: smallvec::smallvec![same_type_of(c, 0)], ..Out::default() }
}

/// Where two shapes must be one: an error at the first axis whose known sizes differ, the
/// conditions that make symbolic sizes equal.
pub(super) fn pin_shapes(a: &[Dim], b: &[Dim], out: &mut Out) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("ranks {} and {} differ", a.len(), b.len()));
    }
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let (_, same) = x.pin(y).ok_or_else(|| format!("sizes {x} and {y} differ at axis {k}"))?;
        out.assumptions.extend(same.map(|s| (k, s)));
    }
    Ok(())
}

/// An axis onnxruntime refuses to find empty where the spec allows it (Scan's iterations,
/// AffineGrid's sizes): a known 0 is a `runtime-differs` warning, `what` and "onnxruntime refuses
/// it"; a compound size gets the condition that it is 1 or more (a size named alone is 1 or more
/// in every contract already).
pub(super) fn not_empty(len: &Dim, axis: usize, what: &str, out: &mut Out) {
    match len {
        Dim::Known(0) => out.warnings.push((Code::RuntimeDiffers, format!("{what}; onnxruntime refuses it"))),
        Dim::Term(t) if t.size() > 1 => out.assumptions.push((axis, Assumption::AtLeast { size: t.clone(), min: 1 })),
        _ => {}
    }
}

/// Input `i`, where present with a known shape, has the shape `want` (onnxruntime refuses
/// any other): an error where known sizes differ, conditions where symbolic ones may.
pub(super) fn expect_shape(c: &Ctx, i: usize, want: &[Dim], out: &mut Out) -> Result<(), RuleError> {
    match c.shape(i) {
        Some(s) => pin_shapes(want, s, out).map_err(|e| {
            RuleError::Invalid(format!("{}: input {i} must be of shape {}: {e}", c.node.op_type, render(want)))
        }),
        None => Ok(()),
    }
}

/// Input `i`, where present with a known shape, holds `n` values in any shape: a scale or bias
/// that the runtime reads as a flat buffer. A vector is checked as `[n]`, with its conditions
/// over symbolic sizes.
pub(super) fn expect_count(c: &Ctx, i: usize, n: &Dim, out: &mut Out) -> Result<(), RuleError> {
    match c.shape(i).filter(|s| s.len() != 1).map(|s| Dim::product(s).known()) {
        Some(Some(k)) if n.known().is_some_and(|n| n != k) => {
            invalid(format!("{}: input {i} holds {k} values, not {n}", c.node.op_type))
        }
        Some(_) => Ok(()),
        None => expect_shape(c, i, std::slice::from_ref(n), out),
    }
}

/// Input `i`, where present with a known shape, has rank `r` (the schema's rank check).
pub(super) fn expect_rank(c: &Ctx, i: usize, r: usize) -> Result<(), RuleError> {
    match c.shape(i) {
        Some(s) if s.len() != r => invalid(format!("{}: input {i} has rank {}, not {r}", c.node.op_type, s.len())),
        _ => Ok(()),
    }
}

/// Axis `k` of input `i`'s shape, unknown where that is not known.
fn dim(c: &Ctx, i: usize, k: usize) -> Dim {
    c.shape(i).and_then(|s| s.get(k).cloned()).unwrap_or(Dim::Unknown)
}

/// The first element of input `i`'s contents (a scalar size), unknown where not known.
fn first_value(c: &Ctx, i: usize) -> Dim {
    c.value(i).and_then(|v| v.first().cloned()).unwrap_or(Dim::Unknown)
}

/// The size an integer attribute gives, unknown without it.
fn attr_dim(c: &Ctx, name: &str) -> Dim {
    c.node.attr_int(name).map_or(Dim::Unknown, Dim::Known)
}

pub fn unknown_outputs(_: &Ctx) -> R {
    Ok(Out::default())
}

/// `shape` with axis `a` of size `d`.
fn with_dim(shape: &[Dim], a: usize, d: Dim) -> Shape {
    let mut s = shape.to_vec();
    s[a] = d;
    s
}

/// `d / k` where `k` must divide `d`: an error for a known size it does not divide, the
/// condition that it does for a symbolic one (`n` must equal `(n/4)*4`).
fn exact_div(d: &Dim, k: i64) -> Result<(Dim, Option<Assumption>), String> {
    let part = d.div_floor(&Dim::Known(k));
    match (d, part.mul(&Dim::Known(k))) {
        (Dim::Known(v), _) if v % k != 0 => Err(format!("{v} is not a multiple of {k}")),
        (Dim::Term(t), Dim::Term(whole)) if &whole != t => Ok((part, Some(Assumption::Equal(t.clone(), whole)))),
        _ => Ok((part, None)),
    }
}

/// The element count of `shape`, when every size is known.
fn numel(shape: &[Dim]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, d| acc.checked_mul(usize::try_from(d.known()?).ok()?))
}

/// A reduction's output shape: the listed axes (all for an empty list) kept as 1 with `keep`,
/// else dropped.
pub(super) fn reduced(data: &[Dim], axes: &[i64], keep: bool, op: &str) -> Result<Shape, RuleError> {
    let mut picked = vec![axes.is_empty(); data.len()];
    for a in axes {
        picked[axis_in(*a, data.len(), op)?] = true;
    }
    let kept = data.iter().zip(picked).filter_map(|(d, p)| match (p, keep) {
        (false, _) => Some(d.clone()),
        (true, true) => Some(Dim::Known(1)),
        (true, false) => None,
    });
    Ok(kept.collect())
}

/// A whole-number size worked out in floating point; unknown past `i64::MAX` (or infinite),
/// where `as i64` would saturate: a scale of 1e30 over a dim of 2 came out as 2^63 - 1.
fn float_size(x: f64) -> Dim {
    // 2^63 is the first f64 past i64::MAX.
    if x.is_finite() && (0.0..9_223_372_036_854_775_808.0).contains(&x) {
        Dim::Known(x as i64)
    } else {
        Dim::Unknown
    }
}

/// numpy's matmul of shapes `a` and `b`, with its side conditions (batch axes broadcast,
/// inner sizes equal).
pub(super) fn matmul_shape(a: &[Dim], b: &[Dim]) -> Result<(Shape, Vec<(usize, Assumption)>), RuleError> {
    if a.is_empty() || b.is_empty() {
        return invalid("MatMul needs inputs of rank 1 or more".into());
    }
    let a2: Shape = if a.len() == 1 { vec![Dim::Known(1), a[0].clone()] } else { a.to_vec() };
    let b2: Shape = if b.len() == 1 { vec![b[0].clone(), Dim::Known(1)] } else { b.to_vec() };
    let (ka, kb) = (&a2[a2.len() - 1], &b2[b2.len() - 2]);
    let Some((_, inner)) = ka.pin(kb) else {
        return invalid(format!("MatMul's inner dimensions differ: {ka} and {kb}"));
    };
    let br = multi(&[&a2[..a2.len() - 2], &b2[..b2.len() - 2]]).map_err(RuleError::Broadcast)?;
    let mut assumptions = br.assumptions;
    let mut shape = br.shape;
    assumptions.extend(inner.map(|a| (shape.len(), a)));
    if a.len() > 1 {
        shape.push(a2[a2.len() - 2].clone());
    }
    if b.len() > 1 {
        shape.push(b2[b2.len() - 1].clone());
    }
    Ok((shape, assumptions))
}

/// A scalar or a vector of one: one value, as onnxruntime takes a scale, zero point or
/// normalization weight that applies to everything.
pub(super) fn one_value(s: &[Dim]) -> bool {
    matches!(s, [] | [Dim::Known(1)])
}

/// Input `i`, where present with a known shape, is one value: a scalar or a vector of one (of
/// a symbolic length, the condition that it is 1).
pub(super) fn expect_one_value(c: &Ctx, i: usize, out: &mut Out) -> Result<(), RuleError> {
    match c.shape(i) {
        Some([Dim::Term(t)]) => {
            out.assumptions.push((0, Assumption::OneOf { sym: t.clone(), sizes: vec![1] }));
            Ok(())
        }
        Some(s) if !one_value(s) => {
            invalid(format!("{}: input {i} of shape {} is not one value (a scalar or [1])", c.node.op_type, render(s)))
        }
        _ => Ok(()),
    }
}

/// Input `i`, where present with a known shape, is one value or a vector of `len`: one per
/// output channel or column (`what` names which), as per-channel quantization parameters are.
pub(super) fn one_or_each(c: &Ctx, i: usize, len: &Dim, what: &str, out: &mut Out) -> Result<(), RuleError> {
    match c.shape(i) {
        Some(s) if one_value(s) => Ok(()),
        Some([_]) => expect_shape(c, i, std::slice::from_ref(len), out),
        Some(s) => {
            invalid(format!("{}: input {i} of shape {} is not one value or one per {what}", c.node.op_type, render(s)))
        }
        None => Ok(()),
    }
}

/// Input `i`, where present with a known shape, holds one element (onnxruntime refuses more).
pub(super) fn one_element(c: &Ctx, i: usize) -> Result<(), RuleError> {
    match c.shape(i).and_then(numel) {
        Some(n) if n != 1 => invalid(format!("{}: input {i} holds {n} elements, not one", c.node.op_type)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::fold;
    use crate::shape::Dim;

    #[test]
    fn a_size_is_never_a_negative_constant() {
        let seq = Dim::sym("seq");
        assert_eq!(fold::eq(&seq, &Dim::Known(-1)), Dim::Known(0));
        assert_eq!(fold::eq(&Dim::Known(-1), &Dim::parse("min(64,seq)")), Dim::Known(0));
        assert_eq!(fold::lt(&Dim::Known(-1), &seq.mul(&Dim::sym("batch"))), Dim::Known(1));
        // An expression with a subtraction may be negative; a size may be any other size.
        assert_eq!(fold::eq(&seq.sub(&Dim::Known(2)), &Dim::Known(-1)), Dim::Unknown);
        assert_eq!(fold::eq(&seq, &Dim::Known(3)), Dim::Unknown);
    }
}

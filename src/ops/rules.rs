//! The custom shape rules the op table names, one function per op family, and the element
//! folds of shape-tensor propagation.

use super::{Ctx, Out, RuleError};
use crate::dtype::DType;
use crate::ir::{AttrValue, Tensor, TensorData};
use crate::shape::{arith, multi, render, uni, Assumption, Dim, Shape, Type};

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
    /// non-negative, where that is the floor.
    pub fn div(a: &Dim, b: &Dim) -> Dim {
        match (a, b) {
            (Dim::Known(x), Dim::Known(y)) => x.checked_div(*y).map_or(Dim::Unknown, Dim::Known),
            (_, Dim::Known(y)) if *y > 0 => a.div_floor(b),
            _ => Dim::Unknown,
        }
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

/// One output of type `t` whose contents are `v`.
fn valued(t: Type, v: Option<Vec<Dim>>) -> R {
    Ok(Out { types: smallvec::smallvec![Some(t)], values: vec![v], ..Out::default() })
}

/// One output of type `t` holding input 0's integer and float contents: an op that only
/// relabels the axes leaves the elements in order.
fn moved(c: &Ctx, t: Option<Type>) -> Out {
    let mut out = Out { types: smallvec::smallvec![t], ..Out::default() };
    out.values = vec![c.value(0).map(<[Dim]>::to_vec)];
    out.floats = vec![c.float_value(0).map(<[f64]>::to_vec)];
    out
}

fn invalid<T>(msg: String) -> Result<T, RuleError> {
    Err(RuleError::Invalid(msg))
}

/// `axis` (negative counts from the end) as an index into `rank` axes.
pub(super) fn axis_in(axis: i64, rank: usize, op: &str) -> Result<usize, RuleError> {
    arith::axis(axis, rank).map_err(op_err(op))
}

/// The axes `list` names (negative counting from the end), or all `rank` axes without one.
fn axes_or_all(list: Option<&[i64]>, rank: usize, op: &str) -> Result<Vec<usize>, RuleError> {
    match list {
        Some(a) => a.iter().map(|x| axis_in(*x, rank, op)).collect(),
        None => Ok((0..rank).collect()),
    }
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

/// The most axes a rank read off a tensor's size (a shape input of unknown contents) may give.
/// No real model comes near; past it the rank is reported unknown rather than allocated.
const MAX_RANK: i64 = 1 << 16;

/// Unknown dims for a rank read off a tensor's size: `None` (rank unknown) outside
/// `0..=MAX_RANK`.
fn unknown_rank_of(n: i64) -> Option<Shape> {
    (0..=MAX_RANK).contains(&n).then(|| unknown_rank(n as usize))
}

/// The integer list given by attribute `attr` or, when the attribute is absent, by the
/// contents of input `input`. `Err(())` when the input is present but its contents unknown.
fn ints_from(c: &Ctx, attr: &str, input: usize) -> Result<Option<Vec<i64>>, ()> {
    if let Some(v) = c.node.attr_ints(attr) {
        return Ok(Some(v.to_vec()));
    }
    if c.has(input) {
        return c.ints(input).map(Some).ok_or(());
    }
    Ok(None)
}

/// The element type named by an integer attribute, or `default`.
fn attr_dtype(c: &Ctx, name: &str, default: Option<DType>) -> Option<DType> {
    match c.node.attr_int(name).and_then(|t| i32::try_from(t).ok()) {
        Some(code) => DType::from_onnx(code),
        None => default,
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
fn pin_shapes(a: &[Dim], b: &[Dim], out: &mut Out) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("ranks {} and {} differ", a.len(), b.len()));
    }
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let (_, same) = x.pin(y).ok_or_else(|| format!("sizes {x} and {y} differ at axis {k}"))?;
        out.assumptions.extend(same.map(|s| (k, s)));
    }
    Ok(())
}

/// Input `i`, where present with a known shape, has the shape `want` (onnxruntime refuses
/// any other): an error where known sizes differ, conditions where symbolic ones may.
pub(super) fn expect_shape(c: &Ctx, i: usize, want: &[Dim], out: &mut Out) -> Result<(), RuleError> {
    match c.shape(i).filter(|_| c.has(i)) {
        Some(s) => pin_shapes(want, s, out).map_err(|e| {
            RuleError::Invalid(format!("{}: input {i} must be of shape {}: {e}", c.node.op_type, render(want)))
        }),
        None => Ok(()),
    }
}

/// Input `i`, where present with a known shape, has rank `r` (the schema's rank check).
fn expect_rank(c: &Ctx, i: usize, r: usize) -> Result<(), RuleError> {
    match c.shape(i).filter(|_| c.has(i)) {
        Some(s) if s.len() != r => invalid(format!("{}: input {i} has rank {}, not {r}", c.node.op_type, s.len())),
        _ => Ok(()),
    }
}

/// Inputs `inputs` are vectors of `len` elements: normalizations' scales, biases, means and
/// variances.
fn vectors_of(c: &Ctx, inputs: std::ops::Range<usize>, len: &Dim, out: &mut Out) -> Result<(), RuleError> {
    inputs.into_iter().try_for_each(|i| expect_shape(c, i, std::slice::from_ref(len), out))
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

/// Clip's min and max are scalars (onnxruntime also runs one-element vectors).
pub fn clip(c: &Ctx) -> R {
    for i in [1, 2] {
        match c.shape(i).filter(|_| c.has(i)) {
            Some(s) if s.len() > 1 || s.first().and_then(Dim::known).is_some_and(|n| n != 1) => {
                return invalid(format!("Clip: input {i} must be a scalar, not {}", render(s)));
            }
            _ => {}
        }
    }
    Ok(like_input(c))
}

/// If's condition holds one element (the spec); inference takes the outputs from the branches.
pub fn if_cond(c: &Ctx) -> R {
    one_element(c, 0)?;
    Ok(Out::default())
}

pub fn ml_float_same(c: &Ctx) -> R {
    outs(vec![ty(Some(DType::F32), c.shape(0).map(<[Dim]>::to_vec))])
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
    let to_float = to.is_some_and(DType::is_float);
    let value = match (from_int, to_int, to) {
        (true, true, Some(DType::Bool)) => c.value(0).map(|v| v.iter().map(|d| fold::and(d, d)).collect()),
        (true, true, _) => c.value(0).map(<[Dim]>::to_vec),
        // A size cast to float or double (an exporter's `arange(w)` over a feature map) keeps
        // its symbol: the float holds that whole number, exactly for any size below 2^24
        // (a known value past it is unknown). Float16 and bfloat16 round from 2048 and 256,
        // so they keep nothing. Only moves and Range read these contents; arithmetic on float
        // contents is not folded (`infer::fold`).
        (true, false, Some(DType::F32 | DType::F64)) if c.dtype(0) != Some(DType::Bool) => c.value(0).map(|v| {
            v.iter()
                .map(|d| match d {
                    Dim::Known(k) if k.unsigned_abs() > 1 << 24 => Dim::Unknown,
                    d => d.clone(),
                })
                .collect()
        }),
        // Floats that are whole numbers convert exactly (truncation toward zero).
        (false, true, Some(DType::Bool)) => {
            c.float_value(0).map(|f| f.iter().map(|x| Dim::Known((*x != 0.0) as i64)).collect())
        }
        (false, true, _) => c.float_value(0).map(|f| {
            f.iter()
                .map(|x| if x.is_finite() && x.abs() < 9e15 { Dim::Known(x.trunc() as i64) } else { Dim::Unknown })
                .collect()
        }),
        _ => None,
    };
    out.values = vec![value];
    out.floats = vec![match (to_float, from_int) {
        (true, true) => c.ints(0).map(|v| v.into_iter().map(|x| x as f64).collect()),
        (true, false) => c.float_value(0).map(<[f64]>::to_vec),
        _ => None,
    }];
    Ok(out)
}

pub fn cast(c: &Ctx) -> R {
    cast_to(c, attr_dtype(c, "to", None))
}

pub fn cast_like(c: &Ctx) -> R {
    cast_to(c, c.dtype(1))
}

pub fn bit_cast(c: &Ctx) -> R {
    outs(vec![ty(attr_dtype(c, "to", None), c.shape(0).map(<[Dim]>::to_vec))])
}

pub fn constant(c: &Ctx) -> R {
    let Some(attr) = c.node.attrs.first() else {
        return invalid("Constant has no value attribute".into());
    };
    let ints = |v: &[i64]| Some(v.iter().map(|x| Dim::Known(*x)).collect::<Vec<_>>());
    let mut floats = None;
    let mut strings = None;
    let (dtype, shape, value) = match (&attr.name[..], &attr.value) {
        ("value", AttrValue::Tensor(t)) => {
            floats = tensor_floats(t, MAX_TRACKED);
            strings = tensor_strings(t, MAX_TRACKED);
            (t.dtype, Some(known_shape(&t.dims)), tensor_ints(t, MAX_TRACKED).and_then(|v| ints(&v)))
        }
        ("value_float", AttrValue::Float(f)) => {
            floats = Some(vec![*f as f64]);
            (Some(DType::F32), Some(vec![]), None)
        }
        ("value_floats", AttrValue::Floats(v)) => {
            floats = (v.len() <= MAX_TRACKED).then(|| v.iter().map(|x| *x as f64).collect());
            (Some(DType::F32), Some(vec![Dim::Known(v.len() as i64)]), None)
        }
        ("value_int", AttrValue::Int(i)) => (Some(DType::I64), Some(vec![]), ints(&[*i])),
        ("value_ints", AttrValue::Ints(v)) => {
            (Some(DType::I64), Some(vec![Dim::Known(v.len() as i64)]), ints(v).filter(|v| v.len() <= MAX_TRACKED))
        }
        ("value_string", AttrValue::String(_)) => (Some(DType::Str), Some(vec![]), None),
        ("value_strings", AttrValue::Strings(v)) => {
            strings = Some(v.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect());
            (Some(DType::Str), Some(vec![Dim::Known(v.len() as i64)]), None)
        }
        ("sparse_value", _) => (None, None, None),
        (name, _) => return invalid(format!("Constant has an unexpected attribute '{name}'")),
    };
    let mut out = one(Type::tensor(dtype, shape));
    out.values = vec![value];
    out.floats = vec![floats];
    out.strings = vec![strings];
    Ok(out)
}

pub fn shape(c: &Ctx) -> R {
    let Some(s) = c.shape(0) else {
        return outs(vec![ty(Some(DType::I64), Some(vec![Dim::Unknown]))]);
    };
    let picked = s[arith::shape_range(s.len(), c.node.attr_int("start"), c.node.attr_int("end"))].to_vec();
    valued(Type::tensor(Some(DType::I64), Some(vec![Dim::Known(picked.len() as i64)])), Some(picked))
}

pub fn size(c: &Ctx) -> R {
    let n = c.shape(0).map(|s| vec![Dim::product(s)]).filter(|v| v[0] != Dim::Unknown);
    valued(Type::tensor(Some(DType::I64), Some(vec![])), n)
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

pub fn gather(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(data), Some(ind)) = (c.shape(0), c.shape(1)) else {
        return outs(vec![ty(dtype, None)]);
    };
    let axis = c.node.attr_int("axis").unwrap_or(0);
    let shape = arith::gather(data, ind, axis).map_err(op_err("Gather"))?;
    let mut out = one(Type::tensor(dtype, Some(shape)));
    let idx = c.ints(1);
    // Known indices must fall in the axis, counting from its end when negative (onnxruntime:
    // "indices element out of data bounds").
    let d = arith::axis(axis, data.len()).ok().and_then(|a| data[a].known());
    if let (Some(idx), Some(d)) = (&idx, d) {
        if let Some(i) = idx.iter().find(|i| !(-d..d).contains(*i)) {
            return invalid(format!("Gather: index {i} is outside the {d} elements of its axis"));
        }
    }
    // Contents: gathering from a 1-D shape tensor with known indices.
    if let (Some(v), Some(idx), 1) = (c.value(0), idx, data.len()) {
        out.values = vec![idx.iter().map(|i| Some(v[arith::axis(*i, v.len()).ok()?].clone())).collect()];
    }
    Ok(out)
}

/// The length of a slice `start:end:step` of an axis of size `dim`, clamped as numpy clamps
/// it; unknown when that cannot be told.
fn slice_len(dim: &Dim, start: i64, end: i64, step: i64) -> Dim {
    // On a symbolic axis, the whole axis forward or backward.
    let forward = step == 1 && start == 0 && end >= i32::MAX as i64;
    let backward = step == -1 && start >= i32::MAX as i64 - 1 && end <= -(i32::MAX as i64);
    match dim {
        Dim::Known(d) => crate::shape::slice_range(*d, start, end, step).map_or(Dim::Unknown, |(_, n)| Dim::Known(n)),
        Dim::Term(_) if forward || backward => dim.clone(),
        _ => Dim::Unknown,
    }
}

pub fn slice(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let rank = data.len();
    let (starts, ends, axes, steps) = if c.opset < 10 {
        let attr = |name| c.node.attr_ints(name).map(<[i64]>::to_vec);
        (attr("starts"), attr("ends"), attr("axes"), None)
    } else {
        (c.ints(1), c.ints(2), c.ints(3), c.ints(4))
    };
    let axes_unknown = c.opset >= 10 && c.has(3) && axes.is_none();
    let steps_unknown = c.opset >= 10 && c.has(4) && steps.is_none();
    // Known ends, or (with known starts) ends that are sizes read off a shape (`x[:, :seq]`).
    let ends: Option<Vec<Dim>> = match (&starts, ends) {
        (_, Some(e)) => Some(e.into_iter().map(Dim::Known).collect()),
        (Some(st), None) if c.opset >= 10 => {
            c.value(2).filter(|e| e.len() == st.len() && e.iter().all(Dim::is_nonneg)).map(<[Dim]>::to_vec)
        }
        _ => None,
    };
    let (Some(starts), Some(ends)) = (starts, ends) else {
        // Without the bounds only the rank is known; axes not sliced keep their size when
        // the axes are known.
        let mut shape = data.to_vec();
        let sliced = axes.filter(|_| c.opset >= 10).unwrap_or_else(|| (0..rank as i64).collect());
        for i in sliced.iter().filter_map(|a| axis_in(*a, rank, "Slice").ok()) {
            shape[i] = Dim::Unknown;
        }
        return outs(vec![ty(dtype, Some(shape))]);
    };
    if axes_unknown || steps_unknown {
        return outs(vec![ty(dtype, Some(unknown_rank(rank)))]);
    }
    if starts.len() != ends.len() {
        return invalid(format!("Slice: {} starts but {} ends", starts.len(), ends.len()));
    }
    let axes: Vec<i64> = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps: Vec<i64> = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if axes.len() != starts.len() || steps.len() != starts.len() {
        return invalid("Slice: starts, ends, axes and steps differ in length".into());
    }
    let mut shape: Shape = data.to_vec();
    let (mut ranges, mut seen) = (vec![None; rank], vec![false; rank]);
    for k in 0..starts.len() {
        let a = axis_in(axes[k], rank, "Slice")?;
        if std::mem::replace(&mut seen[a], true) {
            return invalid(format!("Slice: axis {a} is sliced twice"));
        }
        if steps[k] == 0 {
            return invalid("Slice: a step is 0".into());
        }
        shape[a] = match &ends[k] {
            Dim::Known(e) => {
                ranges[a] = Some((starts[k], *e, steps[k]));
                slice_len(&data[a], starts[k], *e, steps[k])
            }
            // From 0 by 1 to a size `e`: the end clamps to the axis, so `min(axis, e)`.
            e if starts[k] == 0 && steps[k] == 1 => data[a].min_size(e),
            _ => Dim::Unknown,
        };
    }
    let mut out = one(Type::tensor(dtype, Some(shape)));
    // Contents: each output axis takes `count` input indices from `first` by `step`.
    let dims: Option<Vec<i64>> = data.iter().map(Dim::known).collect();
    if let (Some(v), Some(dims), true) = (c.value(0), dims, ends.iter().all(|e| e.known().is_some())) {
        let walk: Option<Vec<Walk>> = (dims.iter().zip(&ranges).enumerate())
            .map(|(a, (&n, r))| {
                let (s, e, st) = r.unwrap_or((0, n, 1));
                let (first, count) = crate::shape::slice_range(n, s, e, st)?;
                Some((a, first, st, count))
            })
            .collect();
        out.values = vec![walk.and_then(|w| strided(v, &dims, &w))];
    }
    Ok(out)
}

pub fn concat(c: &Ctx) -> R {
    let dtype = (0..c.inputs.len()).find_map(|i| c.dtype(i));
    let present: Vec<usize> = (0..c.inputs.len()).filter(|i| c.has(*i)).collect();
    let shapes: Option<Vec<&[Dim]>> = present.iter().map(|i| c.shape(*i)).collect();
    let Some(shapes) = shapes else {
        let rank = present.iter().find_map(|i| c.shape(*i)).map(|s| s.len());
        return outs(vec![ty(dtype, rank.map(unknown_rank))]);
    };
    let (shape, assumptions) =
        arith::concat(&shapes, c.node.attr_int("axis").unwrap_or(0)).map_err(op_err("Concat"))?;
    let rank = shape.len();
    let mut out = one(Type::tensor(dtype, Some(shape)));
    out.assumptions = assumptions;
    if rank == 1 {
        let vals: Option<Vec<&[Dim]>> = present.iter().map(|i| c.value(*i)).collect();
        out.values = vec![vals.map(|v| v.concat()).filter(|v| v.len() <= MAX_TRACKED)];
    }
    Ok(out)
}

pub fn unsqueeze(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let axes = match ints_from(c, "axes", 1) {
        Ok(Some(a)) => a,
        Ok(None) => return invalid("Unsqueeze needs axes".into()),
        Err(()) => {
            let rank = c.shape(0).zip(list_len(c, 1)).and_then(|(s, n)| (s.len() as i64).checked_add(n));
            return outs(vec![ty(dtype, rank.and_then(unknown_rank_of))]);
        }
    };
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let shape = arith::unsqueeze(data, &axes).map_err(op_err("Unsqueeze"))?;
    Ok(moved(c, ty(dtype, Some(shape))))
}

pub fn squeeze(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let Ok(axes) = ints_from(c, "axes", 1) else { return outs(vec![ty(dtype, fewer_axes(c, 1, data.len()))]) };
    let Some(shape) = arith::squeeze(data, axes.as_deref()).map_err(op_err("Squeeze"))? else {
        return outs(vec![ty(dtype, None)]);
    };
    Ok(moved(c, ty(dtype, Some(shape))))
}

/// What a Reshape of `data` to `shape` needs of symbolic sizes: as many elements in and out,
/// or, with a `-1` at `minus`, an element count the other sizes divide. Equal factors on both
/// sides are cancelled first; `None` where nothing symbolic is left to hold.
fn reshape_condition(data: &[Dim], shape: &[Dim], minus: Option<usize>) -> Option<Assumption> {
    let mut num: Vec<&Dim> = data.iter().collect();
    let mut den: Vec<&Dim> = Vec::new();
    for (_, d) in shape.iter().enumerate().filter(|(i, _)| Some(*i) != minus) {
        match num.iter().position(|n| *n == d) {
            Some(p) => {
                num.remove(p);
            }
            None => den.push(d),
        }
    }
    let (n, d) = (Dim::product(num), Dim::product(den));
    let total = match minus {
        // `n` must be a multiple of `d`: `n = floor(n/d)*d`.
        Some(_) => match &d {
            Dim::Known(k) if *k > 0 => n.div_floor(&d).mul(&d),
            _ => return None,
        },
        None => d,
    };
    match (n, total) {
        (Dim::Term(a), Dim::Term(b)) if a != b => Some(Assumption::Equal(a, b)),
        (Dim::Term(a), Dim::Known(k)) | (Dim::Known(k), Dim::Term(a)) if k > 0 => {
            Some(Assumption::OneOf { sym: a, sizes: vec![k] })
        }
        _ => None,
    }
}

pub fn reshape(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let target: Option<Vec<Dim>> = if c.opset < 5 {
        c.node.attr_ints("shape").map(|v| v.iter().map(|x| Dim::Known(*x)).collect())
    } else {
        c.value(1).map(<[Dim]>::to_vec)
    };
    let Some(target) = target else { return outs(vec![ty(dtype, list_len(c, 1).and_then(unknown_rank_of))]) };
    let allowzero = c.node.attr_int("allowzero").unwrap_or(0) != 0;
    let data = c.shape(0);
    let (shape, minus) = arith::reshape(data, &target, allowzero).map_err(op_err("Reshape"))?;
    let condition = data.and_then(|data| reshape_condition(data, &shape, minus));
    let mut out = moved(c, ty(dtype, Some(shape)));
    out.assumptions.extend(condition.map(|a| (0, a)));
    Ok(out)
}

pub fn constant_of_shape(c: &Ctx) -> R {
    let (dtype, fill) = match c.node.attr("value") {
        Some(AttrValue::Tensor(t)) => (t.dtype, tensor_ints(t, 1).and_then(|v| v.first().copied())),
        _ => (Some(DType::F32), None),
    };
    let shape: Option<Shape> = match c.value(0) {
        Some(v) => Some(v.to_vec()),
        None => c.shape(0).and_then(|s| match s {
            [Dim::Known(n)] => unknown_rank_of(*n),
            [] => Some(vec![]),
            _ => None,
        }),
    };
    if let Some(bad) = shape.iter().flatten().find(|d| matches!(d, Dim::Known(k) if *k < 0)) {
        return invalid(format!("ConstantOfShape: negative size {bad}"));
    }
    let mut out = one(Type::tensor(dtype, shape.clone()));
    if let (Some(f), Some(n)) = (fill, shape.as_deref().and_then(numel)) {
        if n <= MAX_TRACKED {
            out.values = vec![Some(vec![Dim::Known(f); n])];
        }
    }
    Ok(out)
}

pub fn range(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    // onnxruntime takes a scalar or any one-element tensor.
    (0..3).try_for_each(|i| one_element(c, i))?;
    let mut out = one(Type::tensor(dtype, Some(vec![Dim::Unknown])));
    // A scalar as a size: integer contents, or a float that is a whole number.
    let size = |i: usize| match c.value(i) {
        Some(v) => v.first().cloned(),
        None => match c.numbers(i).as_deref() {
            Some([x]) if x.fract() == 0.0 && x.abs() < 9e15 => Some(Dim::Known(*x as i64)),
            _ => None,
        },
    };
    if let (Some(s), Some(l), Some(Dim::Known(d))) = (size(0), size(1), size(2)) {
        if d == 0 {
            return invalid("Range: delta is 0".into());
        }
        let n = match (&s, &l) {
            (Dim::Known(a), Dim::Known(b)) => {
                let n = arith::range_count(i128::from(*a), i128::from(*b), i128::from(d)).unwrap_or(0);
                // From i64::MIN to i64::MAX there are 2^64 - 1: no size, not i64::MAX.
                i64::try_from(n).map_or(Dim::Unknown, Dim::Known)
            }
            // With a symbolic limit: only count upward from a known start by a positive step.
            _ if d > 0 => l.sub(&s).div_ceil(&Dim::Known(d)),
            _ => Dim::Unknown,
        };
        let tracked = n.known().filter(|k| (*k as usize) <= MAX_TRACKED);
        if let (Some(k), Dim::Known(a), true) = (tracked, &s, dtype.is_some_and(DType::is_int)) {
            out.values =
                vec![(0..k).map(|i| i.checked_mul(d).and_then(|x| x.checked_add(*a)).map(Dim::Known)).collect()];
        }
        out.types[0] = Some(Type::tensor(dtype, Some(vec![n])));
        return Ok(out);
    }
    let (s, l, d) = (c.numbers(0), c.numbers(1), c.numbers(2));
    if let (Some([s]), Some([l]), Some([d])) = (s.as_deref(), l.as_deref(), d.as_deref()) {
        let Some(n) = arith::range_count_f64(*s, *l, *d) else {
            return invalid("Range: delta is 0 or the count is not a number".into());
        };
        if n.is_finite() && n < 1e15 {
            out.types[0] = Some(Type::tensor(dtype, Some(vec![Dim::Known(n as i64)])));
        }
    }
    Ok(out)
}

pub fn tile(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let shape = match c.value(1) {
        Some(r) => arith::tile(data, r).map_err(op_err("Tile"))?,
        None => unknown_rank(data.len()),
    };
    outs(vec![ty(dtype, Some(shape))])
}

/// Unknown dims for `rank` axes less those input `i` lists (a list of unknown contents but
/// known length): Squeeze's output, or a reduction's without keepdims.
fn fewer_axes(c: &Ctx, i: usize, rank: usize) -> Option<Shape> {
    rank.checked_sub(list_len(c, i)? as usize).map(unknown_rank)
}

/// The length of input `i`, a list (its contents unknown), when known.
fn list_len(c: &Ctx, i: usize) -> Option<i64> {
    c.shape(i).and_then(|s| s.first()).and_then(Dim::known)
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

pub fn reduce(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let keep = c.node.attr_int("keepdims").unwrap_or(1) != 0;
    let noop = c.node.attr_int("noop_with_empty_axes").unwrap_or(0) != 0;
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let Ok(axes) = ints_from(c, "axes", 1) else {
        let shape = if keep { Some(unknown_rank(data.len())) } else { fewer_axes(c, 1, data.len()) };
        return outs(vec![ty(dtype, shape)]);
    };
    let axes = axes.unwrap_or_default();
    if axes.is_empty() && noop {
        return valued(Type::tensor(dtype, Some(data.to_vec())), c.value(0).map(<[Dim]>::to_vec));
    }
    let mut out = one(Type::tensor(dtype, Some(reduced(data, &axes, keep, &c.node.op_type)?)));
    if data.len() == 1 {
        if let Some(v) = c.value(0) {
            let r = match c.node.op_type.as_str() {
                "ReduceProd" => Some(Dim::product(v)),
                "ReduceSum" => Some(v.iter().fold(Dim::Known(0), |a, b| a.add(b))),
                "ReduceMax" => v.iter().cloned().reduce(|a, b| a.max_dim(&b)),
                "ReduceMin" => v.iter().cloned().reduce(|a, b| a.min_dim(&b)),
                _ => None,
            };
            out.values = vec![r.filter(|d| *d != Dim::Unknown).map(|d| vec![d])];
        }
    }
    Ok(out)
}

pub fn arg_reduce(c: &Ctx) -> R {
    let keep = c.node.attr_int("keepdims").unwrap_or(1) != 0;
    let Some(data) = c.shape(0) else { return outs(vec![ty(Some(DType::I64), None)]) };
    let axis = c.node.attr_int("axis").unwrap_or(0);
    // An empty axis has no index to give, unless the output is empty too (onnxruntime runs
    // that one).
    let a = axis_in(axis, data.len(), &c.node.op_type)?;
    let filled = data.iter().enumerate().all(|(k, d)| k == a || d.known().is_some_and(|n| n > 0));
    if data[a] == Dim::Known(0) && filled {
        return invalid(format!("{}: axis {axis} is empty, so there is no index to give", c.node.op_type));
    }
    outs(vec![ty(Some(DType::I64), Some(reduced(data, &[axis], keep, &c.node.op_type)?))])
}

/// One output axis of a strided walk: the input axis it steps along, the first index there,
/// the step and the count of indices.
type Walk = (usize, i64, i64, i64);

/// The elements of a row-major tensor of `dims` holding `v`, walked as `walk` says, one entry
/// per output axis (Slice, Transpose).
fn strided(v: &[Dim], dims: &[i64], walk: &[Walk]) -> Option<Vec<Dim>> {
    if numel(&known_shape(dims))? != v.len() {
        return None;
    }
    let total = walk.iter().try_fold(1usize, |a, w| a.checked_mul(usize::try_from(w.3).ok()?))?;
    if total > MAX_TRACKED {
        return None;
    }
    // Saturating: a stride past an axis of 0 elements is never used.
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(dims[i + 1]);
    }
    let mut out = Vec::with_capacity(total);
    let mut idx = vec![0i64; walk.len()];
    for _ in 0..total {
        let flat: i64 = walk.iter().zip(&idx).map(|(&(a, first, step, _), i)| (first + i * step) * strides[a]).sum();
        out.push(v.get(usize::try_from(flat).ok()?)?.clone());
        for (i, w) in idx.iter_mut().zip(walk).rev() {
            *i += 1;
            if *i < w.3 {
                break;
            }
            *i = 0;
        }
    }
    Some(out)
}

pub fn transpose(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let rank = data.len();
    let perm = c.node.attr_ints("perm").map_or_else(|| (0..rank as i64).rev().collect(), <[i64]>::to_vec);
    if perm.len() != rank {
        return invalid(format!("Transpose: perm has {} entries for rank {rank}", perm.len()));
    }
    let mut seen = vec![false; rank];
    let mut axes = Vec::with_capacity(rank);
    for p in perm {
        let a = axis_in(p, rank, "Transpose")?;
        if std::mem::replace(&mut seen[a], true) {
            return invalid(format!("Transpose: axis {a} repeats in perm"));
        }
        axes.push(a);
    }
    let mut out = one(Type::tensor(dtype, Some(axes.iter().map(|a| data[*a].clone()).collect())));
    // Contents: each output axis walks an input axis whole.
    if let (Some(v), Some(dims)) = (c.value(0), data.iter().map(Dim::known).collect::<Option<Vec<i64>>>()) {
        let walk: Vec<Walk> = axes.iter().map(|a| (*a, 0, 1, dims[*a])).collect();
        out.values = vec![strided(v, &dims, &walk)];
    }
    Ok(out)
}

pub fn flatten(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, Some(unknown_rank(2)))]) };
    let [x, y] = arith::flatten(data, c.node.attr_int("axis").unwrap_or(1)).map_err(op_err("Flatten"))?;
    valued(Type::tensor(dtype, Some(vec![x, y])), c.value(0).map(<[Dim]>::to_vec))
}

pub fn split(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let n = c.node.outputs.len();
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None); n]) };
    let axis = axis_in(c.node.attr_int("axis").unwrap_or(0), data.len(), "Split")?;
    let num_outputs = c.node.attr_int("num_outputs");
    let d = &data[axis];
    let mut condition = None;
    let sizes: Vec<Dim> = match ints_from(c, "split", 1) {
        Ok(Some(s)) if !s.is_empty() => {
            if s.len() != n {
                return invalid(format!("Split: {} sizes for {n} outputs", s.len()));
            }
            if let Some(x) = s.iter().find(|x| **x < 0) {
                return invalid(format!("Split: size {x} is negative"));
            }
            let total = s.iter().try_fold(0i64, |a, x| a.checked_add(*x));
            if let Some(k) = d.known().filter(|k| total != Some(*k)) {
                return invalid(format!("Split: sizes {s:?} do not add up to {k}"));
            }
            s.iter().map(|x| Dim::Known(*x)).collect()
        }
        Err(()) => vec![Dim::Unknown; n],
        Ok(_) => {
            let parts = num_outputs.unwrap_or(n as i64).max(1);
            match d {
                Dim::Known(k) if num_outputs.is_some() => {
                    // Every part but the last has ceil(k / parts) elements; the last has what is
                    // left, which onnxruntime refuses below 0 (1 into 4 parts).
                    let chunk = (k / parts + i64::from(k % parts != 0)).max(0);
                    let last = chunk.checked_mul(n as i64 - 1).and_then(|x| k.checked_sub(x)).filter(|l| *l >= 0);
                    let Some(last) = last else {
                        return invalid(format!("Split: {k} in parts of {chunk} leaves nothing for the last of {n}"));
                    };
                    (0..n).map(|i| Dim::Known(if i + 1 == n { last } else { chunk })).collect()
                }
                Dim::Term(_) if n == 1 => vec![d.clone()],
                Dim::Term(_) if num_outputs.is_some() => {
                    // ceil(d / parts) each, the last what is left, which must not be negative.
                    let chunk = d.div_ceil(&Dim::Known(parts));
                    let last = d.sub(&chunk.mul(&Dim::Known(n as i64 - 1)));
                    if let Dim::Term(t) = &last {
                        condition = Some(Assumption::AtLeast { size: t.clone(), min: 0 });
                    }
                    (0..n).map(|i| if i + 1 == n { last.clone() } else { chunk.clone() }).collect()
                }
                // Equal parts: the size must be a multiple of their number.
                _ => {
                    let (part, multiple) = exact_div(d, parts).map_err(op_err("Split"))?;
                    condition = multiple;
                    vec![part; n]
                }
            }
        }
    };
    // Contents: splitting a 1-D shape tensor into known pieces.
    let mut values = Vec::new();
    if let (Some(v), 1) = (c.value(0), data.len()) {
        let mut at = 0usize;
        for s in &sizes {
            let piece = s.known().and_then(|k| v.get(at..at.checked_add(k as usize)?)).map(<[Dim]>::to_vec);
            at = at.saturating_add(s.known().unwrap_or(0).max(0) as usize);
            values.push(piece);
        }
    }
    let types = sizes.into_iter().map(|s| ty(dtype, Some(with_dim(data, axis, s)))).collect();
    Ok(Out { types, values, assumptions: condition.map(|a| vec![(axis, a)]).unwrap_or_default(), ..Out::default() })
}

pub fn pad(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let rank = data.len();
    let pads: Option<Vec<Dim>> = if c.opset < 11 {
        c.node.attr_ints("pads").or(c.node.attr_ints("paddings")).map(|p| p.iter().map(|x| Dim::Known(*x)).collect())
    } else {
        c.value(1).map(<[Dim]>::to_vec)
    };
    let listed = c.opset >= 18 && c.has(3);
    let list = if listed { c.ints(3) } else { None };
    // Pads, or axes listed, whose contents are unknown leave only the rank known.
    let Some(pads) = pads.filter(|_| !listed || list.is_some()) else {
        return outs(vec![ty(dtype, Some(unknown_rank(rank)))]);
    };
    let axes = axes_or_all(list.as_deref(), rank, "Pad")?;
    if pads.len() != 2 * axes.len() {
        return invalid(format!("Pad: {} pads for {} axes", pads.len(), axes.len()));
    }
    // onnxruntime reflects at most size-1 elements on a side (an axis of 1 has nothing to
    // reflect), and pads no empty axis by reflect, edge or wrap.
    let mode = c.node.attr_str("mode").unwrap_or_else(|| "constant".into());
    let mut out = Out::default();
    let mut shape = data.to_vec();
    for (k, &a) in axes.iter().enumerate() {
        let (before, after) = (&pads[k], &pads[k + axes.len()]);
        let widest = [before, after].into_iter().filter_map(Dim::known).max().unwrap_or(0);
        let min = match mode.as_str() {
            "reflect" if widest > 0 => widest.saturating_add(1),
            "edge" | "wrap" if widest > 0 => 1,
            _ => 0,
        };
        match &data[a] {
            Dim::Known(d) if *d < min => {
                let why = match (mode.as_str(), d) {
                    (_, 0) => format!("axis {a} is empty"),
                    ("reflect", _) => format!("a pad of {widest} exceeds the {} elements axis {a} can reflect", d - 1),
                    _ => format!("axis {a} has {d} elements"),
                };
                return Err(RuleError::Window(format!("Pad ({mode}): {why}; onnxruntime refuses it")));
            }
            Dim::Term(sym) if min > 1 => out.assumptions.push((a, Assumption::AtLeast { size: sym.clone(), min })),
            _ => {}
        }
        let size = data[a].add(before).add(after);
        if let Some(n) = size.known().filter(|n| *n < 0) {
            return Err(RuleError::Window(format!("Pad: negative pads leave axis {a} a size of {n}")));
        }
        // Negative pads crop: `n-6` is a size only where n >= 6.
        if let Dim::Term(t) = &size {
            if !size.is_nonneg() {
                out.assumptions.push((a, Assumption::AtLeast { size: t.clone(), min: 0 }));
            }
        }
        shape[a] = size;
    }
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
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
    let axes = axes_or_all(c.node.attr_ints("axes"), rank, "Resize")?;
    let mut shape = data.to_vec();
    if let Some(i) = sizes_at.filter(|i| c.has(*i) && c.shape(*i).is_none_or(|s| s != [Dim::Known(0)])) {
        let Some(sizes) = c.value(i) else { return unknown() };
        if sizes.len() != axes.len() {
            return invalid(format!("Resize: {} sizes for {} axes", sizes.len(), axes.len()));
        }
        // A size of 0 from a non-empty axis is a scale of 0; an empty axis cannot grow
        // (onnxruntime refuses both).
        for (a, s) in axes.iter().zip(sizes) {
            match (&data[*a], s) {
                (Dim::Known(d), Dim::Known(0)) if *d > 0 => {
                    return invalid(format!(
                        "Resize: size 0 for axis {a} of {d} is a scale of 0; scales must be above 0"
                    ));
                }
                (Dim::Known(0), Dim::Known(n)) if *n > 0 => {
                    return invalid(format!("Resize: axis {a} is empty and cannot grow to {n}"));
                }
                _ => {}
            }
        }
        let policy = c.node.attr_str("keep_aspect_ratio_policy").unwrap_or_else(|| "stretch".into());
        if policy == "stretch" {
            for (a, s) in axes.iter().zip(sizes) {
                shape[*a] = s.clone();
            }
        } else {
            let pairs: Option<Vec<(f64, i64)>> = axes
                .iter()
                .enumerate()
                .map(|(k, a)| Some((sizes[k].known()? as f64 / data[*a].known()? as f64, data[*a].known()?)))
                .collect();
            let Some(pairs) = pairs else { return unknown() };
            let pick = pairs.iter().map(|p| p.0);
            let scale =
                if policy == "not_larger" { pick.fold(f64::INFINITY, f64::min) } else { pick.fold(0.0, f64::max) };
            if scale < 0.0 {
                return invalid(format!("Resize: the sizes give the negative scale {scale} under {policy}"));
            }
            for (k, a) in axes.iter().enumerate() {
                shape[*a] = float_size((scale * pairs[k].1 as f64 + 0.5).floor());
            }
        }
        return outs(vec![ty(dtype, Some(shape))]);
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
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
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

pub fn topk(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None), ty(Some(DType::I64), None)]) };
    let axis = axis_in(c.node.attr_int("axis").unwrap_or(-1), data.len(), "TopK")?;
    let k = match c.node.attr_int("k") {
        Some(k) if c.opset < 10 => Dim::Known(k),
        _ => {
            expect_shape(c, 1, &[Dim::Known(1)], &mut Out::default())?;
            first_value(c, 1)
        }
    };
    if let (Dim::Known(k), Dim::Known(d)) = (&k, &data[axis]) {
        if k > d || *k < 0 {
            return invalid(format!("TopK: k = {k} for an axis of size {d}"));
        }
    }
    let shape = with_dim(data, axis, k);
    outs(vec![ty(dtype, Some(shape.clone())), ty(Some(DType::I64), Some(shape))])
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
    let (shape, assumptions) = matmul_shape(a, b)?;
    out.assumptions.extend(assumptions);
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
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

/// Gemm: `Y[M,N] = alpha * A' B' + beta * C`, C stretching unidirectionally to `[M,N]` (with
/// `broadcast=1` before opset 7, where without it C must be `[M,N]`).
pub fn gemm(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(a), Some(b)) = (c.shape(0), c.shape(1)) else {
        return outs(vec![ty(dtype, Some(unknown_rank(2)))]);
    };
    let trans = |n| c.node.attr_int(n).unwrap_or(0) != 0;
    let y = arith::gemm(a, b, trans("transA"), trans("transB")).map_err(op_err("Gemm"))?.to_vec();
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

/// The spatial output sizes of a convolution or pooling window over `spatial` input sizes (the
/// input's axes from 2), with the side conditions and warnings they come with.
///
/// A window larger than its padded input is refused by onnxruntime for a convolution
/// ("Invalid input shape"): an error. For pooling the spec's floor and onnxruntime's integer
/// division part there: kernel 3, stride 3 over 2 elements gives 0 by the spec and 1 under
/// onnxruntime, which runs it; that is a warning naming both, and the size onnxruntime gives
/// is inferred (it is what runs). Only a size onnxruntime finds negative is an error. Where
/// the input's size is symbolic, the window fitting is a side condition.
fn window_out(c: &Ctx, spatial: &[Dim], kernel: &[i64], ceil: bool, out: &mut Out) -> Result<Shape, RuleError> {
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
    let conv = !matches!(op, "AveragePool" | "MaxPool" | "LpPool" | "MaxUnpool");
    let pools = matches!(op, "AveragePool" | "MaxPool" | "LpPool");
    if let Some(i) = (0..n).find(|&i| pools && pads[i].max(pads[i + n]) >= kernel[i]) {
        let msg = "onnxruntime refuses a pad as wide as the kernel";
        return invalid(format!(
            "{op}: pads {} and {} at axis {} for a kernel of {}; {msg}",
            pads[i],
            pads[i + n],
            i + 2,
            kernel[i]
        ));
    }
    let mut shape = Vec::with_capacity(n);
    for i in 0..n {
        let (axis, d, s) = (i + 2, &spatial[i], strides[i]);
        let (Some(ek), Some(pad)) =
            ((kernel[i] - 1).checked_mul(dil[i]).and_then(|x| x.checked_add(1)), pads[i].checked_add(pads[i + n]))
        else {
            return invalid(format!("{op}: the window or the pads at axis {axis} overflow"));
        };
        if auto.starts_with("SAME") {
            if conv && *d == Dim::Known(0) {
                return invalid(format!("{op}: axis {axis} of the input is empty; onnxruntime refuses it"));
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
                let min = if conv { ek - pad } else { ek - pad - 2 * s + 1 };
                // At most the window, so an i64 whenever it is above 1.
                if let Some(min) = i64::try_from(min).ok().filter(|m| *m > 1) {
                    out.assumptions.push((axis, Assumption::AtLeast { size: sym.clone(), min }));
                }
            }
            shape.push(if ceil { Dim::Unknown } else { span.div_floor(&Dim::Known(s)).add(&Dim::Known(1)) });
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
        if conv || runtime < 0 {
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

pub fn conv(c: &Ctx) -> R {
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
    let mut shape = vec![x[0].clone(), w[0].clone()];
    let Some(kernel) = kernel_of(c, w)? else {
        shape.extend(unknown_rank(x.len() - 2));
        out.types = smallvec::smallvec![ty(dtype, Some(shape))];
        return Ok(out);
    };
    shape.extend(window_out(c, &x[2..], &kernel, false, &mut out)?);
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
    }
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

pub fn conv_transpose(c: &Ctx) -> R {
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
    let kernel = kernel_of(c, w)?.filter(|_| os.is_none());
    let Some(kernel) = kernel else {
        shape.extend(match os {
            Some(os) => os[os.len().saturating_sub(n)..].iter().copied().map(Dim::Known).collect(),
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
    let auto = c.node.attr_str("auto_pad").unwrap_or_else(|| "NOTSET".into());
    for i in 0..n {
        let (axis, d) = (2 + i, &x[2 + i]);
        let ek = (kernel[i] - 1).saturating_mul(dil[i]).saturating_add(1);
        let o = if auto == "SAME_UPPER" || auto == "SAME_LOWER" {
            // Padded to d*stride, but pads are never negative: onnxruntime's output is
            // (d-1)*stride + min(stride, output_padding + kernel).
            let rest = strides[i].min(opad[i].saturating_add(ek));
            d.sub(&Dim::Known(1)).mul(&Dim::Known(strides[i])).add(&Dim::Known(rest))
        } else {
            let pad = if auto == "VALID" { 0 } else { pads[i].saturating_add(pads[i + n]) };
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
    let mut shape = vec![x[0].clone(), x[1].clone()];
    shape.extend(window_out(c, &x[2..], kernel, ceil, &mut out)?);
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
    let mut shape = x[..2].to_vec();
    shape.extend(vec![Dim::Known(1); x.len() - 2]);
    outs(vec![ty(dtype, Some(shape))])
}

pub fn max_roi_pool(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(x), Some(r), Some(p)) = (c.shape(0), c.shape(1), c.node.attr_ints("pooled_shape")) else {
        return outs(vec![ty(dtype, None)]);
    };
    // Rois [n, 5]: a batch index and four corners each.
    let mut out = Out::default();
    expect_shape(c, 1, &[r.first().cloned().unwrap_or(Dim::Unknown), Dim::Known(5)], &mut out)?;
    let mut shape = vec![r.first().cloned().unwrap_or(Dim::Unknown), x.get(1).cloned().unwrap_or(Dim::Unknown)];
    shape.extend(p.iter().copied().map(Dim::Known));
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

pub fn batch_norm(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let x = c.shape(0).map(<[Dim]>::to_vec);
    let mut out = Out::default();
    // Scale, bias, mean and variance hold one value per channel (but per element with
    // `spatial=0`, opsets 7 and 8).
    if let (Some([_, ch, ..]), None | Some(1)) = (x.as_deref(), c.node.attr_int("spatial")) {
        vectors_of(c, 1..5, ch, &mut out)?;
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
/// channel from opset 21, one per group before (or one value in all).
pub fn group_norm(c: &Ctx) -> R {
    let mut out = like_input(c);
    let g = c.node.attr_int("num_groups").unwrap_or(0);
    if g < 1 {
        return invalid(format!("GroupNormalization: num_groups {g} is not positive"));
    }
    if let Some([_, ch, ..]) = c.shape(0) {
        let (_, multiple) =
            exact_div(ch, g).map_err(|e| RuleError::Invalid(format!("GroupNormalization: channels: {e}")))?;
        out.assumptions.extend(multiple.map(|m| (1, m)));
        // onnxruntime 1.32 broadcasts a scale or bias of one value.
        let per = if c.opset >= 21 { ch.clone() } else { Dim::Known(g) };
        for i in (1..3).filter(|i| !matches!(c.shape(*i), Some([] | [Dim::Known(1)]))) {
            expect_shape(c, i, std::slice::from_ref(&per), &mut out)?;
        }
    }
    Ok(out)
}

/// LayerNormalization and RMSNormalization. onnxruntime refuses a scale or bias that does not
/// broadcast to X, and nothing to normalize (a size 0 from `axis` on).
pub fn layer_norm(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, None), ty(None, None), ty(None, None)]) };
    let stash = attr_dtype(c, "stash_type", Some(DType::F32));
    let axis = axis_in(c.node.attr_int("axis").unwrap_or(-1), x.len(), &c.node.op_type)?;
    let mut out = Out::default();
    // Scale and bias stretch to the input (onnxruntime 1.32 takes a scale of the input's whole
    // shape as well as of the normalized axes').
    for s in (1..3).filter_map(|i| Some((i, c.shape(i).filter(|_| c.has(i))?))) {
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
pub fn along_axis(c: &Ctx) -> R {
    let op = c.node.op_type.as_str();
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

/// CumSum: like the input, along the axis its second input holds (one element).
pub fn cum_sum(c: &Ctx) -> R {
    one_element(c, 1)?;
    match (c.shape(0), c.value(1).and_then(|v| v.first()?.known())) {
        (Some([]), _) => return invalid(format!("{}: the input is a scalar, with no axis", c.node.op_type)),
        (Some(x), Some(a)) => {
            axis_in(a, x.len(), &c.node.op_type)?;
        }
        _ => {}
    }
    Ok(like_input(c))
}

/// Trilu: like the input, a batch of matrices; its `k` holds one element.
pub fn trilu(c: &Ctx) -> R {
    one_element(c, 1)?;
    match c.shape(0) {
        Some(x) if x.len() < 2 => invalid(format!("Trilu: input rank {} is below 2", x.len())),
        _ => Ok(like_input(c)),
    }
}

/// Input `i`, where present with a known shape, holds one element (onnxruntime refuses more).
fn one_element(c: &Ctx, i: usize) -> Result<(), RuleError> {
    match c.shape(i).filter(|_| c.has(i)).and_then(numel) {
        Some(n) if n != 1 => invalid(format!("{}: input {i} holds {n} elements, not one", c.node.op_type)),
        _ => Ok(()),
    }
}

/// One Einsum term: its labels (ASCII letters) and, when it has an ellipsis, how many labels
/// come before it. A second ellipsis or a stray dot is refused.
fn einsum_term(t: &str) -> Result<(Vec<char>, Option<usize>), RuleError> {
    let letters = |part: &str| -> Result<Vec<char>, RuleError> {
        part.chars()
            .map(|ch| match ch {
                'a'..='z' | 'A'..='Z' => Ok(ch),
                _ => Err(RuleError::Invalid(format!("Einsum: term '{t}' holds '{ch}', which is not a label"))),
            })
            .collect()
    };
    match t.split_once("...") {
        Some((before, after)) => {
            let mut labels = letters(before)?;
            let ell = labels.len();
            labels.extend(letters(after)?);
            Ok((labels, Some(ell)))
        }
        None => Ok((letters(t)?, None)),
    }
}

pub fn einsum(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(eq) = c.node.attr_str("equation") else { return invalid("Einsum needs an equation".into()) };
    let eq: String = eq.chars().filter(|ch| !ch.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(einsum_term(r)?)),
        None => (eq.as_str(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    let present: Vec<usize> = (0..c.inputs.len()).filter(|i| c.has(*i)).collect();
    if terms.len() != present.len() {
        return invalid(format!("Einsum: {} terms for {} inputs", terms.len(), present.len()));
    }
    // Each label's size and how often the terms name it; a label of size 1 in one input
    // stretches to the others' (numpy's and onnxruntime's Einsum broadcast labels as they
    // broadcast the ellipsis).
    let mut sizes: std::collections::BTreeMap<char, (Dim, usize)> = Default::default();
    let mut assumptions = Vec::new();
    let mut ell: Vec<Vec<Dim>> = Vec::new();
    for (t, i) in terms.iter().zip(&present) {
        let (labels, at) = einsum_term(t)?;
        let Some(s) = c.shape(*i) else { return outs(vec![ty(dtype, None)]) };
        let fits = if at.is_some() { labels.len() <= s.len() } else { labels.len() == s.len() };
        if !fits {
            return invalid(format!("Einsum: term '{t}' does not fit rank {}", s.len()));
        }
        // The ellipsis covers the dims the labels leave.
        let ne = s.len() - labels.len();
        if let Some(p) = at {
            // The spec's inference and onnxruntime take an ellipsis of one length throughout.
            if let Some(first) = ell.first().filter(|e| e.len() != ne) {
                return invalid(format!("Einsum: the ellipsis stands for {} axes and for {ne}", first.len()));
            }
            ell.push(s[p..p + ne].to_vec());
        }
        for (j, &ch) in labels.iter().enumerate() {
            let axis = if at.is_some_and(|p| j >= p) { j + ne } else { j };
            let d = &s[axis];
            let (e, n) = sizes.entry(ch).or_insert_with(|| (d.clone(), 0));
            *n += 1;
            if *n > 1 {
                let b = multi(&[std::slice::from_ref(e), std::slice::from_ref(d)])
                    .map_err(|_| RuleError::Invalid(format!("Einsum: label '{ch}' has sizes {e} and {d}")))?;
                // Conditions name the axis of the input that met the label again.
                assumptions.extend(b.assumptions.into_iter().map(|(_, a)| (axis, a)));
                *e = b.shape.into_iter().next().unwrap_or(Dim::Unknown);
            }
        }
    }
    let refs: Vec<&[Dim]> = ell.iter().map(Vec::as_slice).collect();
    let ell_shape = multi(&refs).map_err(RuleError::Broadcast)?.shape;
    // Without an output term: the ellipsis, then the labels used once, in order.
    let (out_labels, out_at) = rhs.unwrap_or_else(|| {
        let once: Vec<char> = sizes.iter().filter(|(_, (_, n))| *n == 1).map(|(ch, _)| *ch).collect();
        (once, (!ell.is_empty()).then_some(0))
    });
    let labelled: Result<Shape, RuleError> = (out_labels.iter())
        .map(|ch| match sizes.get(ch) {
            Some((d, _)) => Ok(d.clone()),
            None => invalid(format!("Einsum: output label '{ch}' is in no input")),
        })
        .collect();
    let mut shape = labelled?;
    // The ellipsis goes where the output term has it: before label `p` (at most their count).
    if let Some(p) = out_at {
        shape.splice(p..p, ell_shape);
    }
    Ok(Out { types: smallvec::smallvec![ty(dtype, Some(shape))], assumptions, ..Out::default() })
}

pub fn one_hot(c: &Ctx) -> R {
    let dtype = c.dtype(2);
    let Some(ind) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let depth = match c.numbers(1).as_deref() {
        // The spec's inference and onnxruntime refuse a negative depth.
        Some([d]) if d.trunc() < 0.0 => return invalid(format!("OneHot: the depth {d} is negative")),
        // Not `as i64`: a depth of 1e30 saturated.
        Some([d]) => float_size(d.trunc()),
        _ => Dim::Unknown,
    };
    let rank = ind.len() + 1;
    let axis = axis_in(c.node.attr_int("axis").unwrap_or(-1), rank, "OneHot")?;
    let mut out = Out::default();
    expect_shape(c, 2, &[Dim::Known(2)], &mut out)?;
    let mut shape = ind.to_vec();
    shape.insert(axis, depth);
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

pub fn gather_elements(c: &Ctx) -> R {
    let mut out = Out::default();
    elements_fit(c, &mut out)?;
    out.types = smallvec::smallvec![ty(c.dtype(0), c.shape(1).map(<[Dim]>::to_vec))];
    Ok(out)
}

/// Scatter and ScatterElements: like the data; the updates have the indices' shape.
pub fn scatter_elements(c: &Ctx) -> R {
    let mut out = like_input(c);
    elements_fit(c, &mut out)?;
    if let (Some(i), Some(u)) = (c.shape(1), c.shape(2)) {
        pin_shapes(i, u, &mut out)
            .map_err(|e| RuleError::Invalid(format!("{}: indices and updates: {e}", c.node.op_type)))?;
    }
    Ok(out)
}

/// GatherElements' and ScatterElements' indices (input 1) have the data's rank, an axis it
/// has, and off that axis no size beyond the data's (onnxruntime refuses larger ones).
fn elements_fit(c: &Ctx, out: &mut Out) -> Result<(), RuleError> {
    let (Some(x), Some(i)) = (c.shape(0), c.shape(1)) else { return Ok(()) };
    let op = c.node.op_type.as_str();
    if x.len() != i.len() {
        return invalid(format!("{op}: indices of rank {} for data of rank {}", i.len(), x.len()));
    }
    let axis = axis_in(c.node.attr_int("axis").unwrap_or(0), x.len(), op)?;
    for (a, (n, d)) in i.iter().zip(x).enumerate().filter(|(a, _)| *a != axis) {
        match (n.known(), d) {
            (Some(n), Dim::Known(d)) if n > *d => {
                return invalid(format!("{op}: indices have {n} at axis {a}, beyond the data's {d}"));
            }
            (Some(n), Dim::Term(t)) if n > 1 => {
                out.assumptions.push((a, Assumption::AtLeast { size: t.clone(), min: n }))
            }
            _ => {}
        }
    }
    Ok(())
}

/// ScatterND: like the data; the updates are shaped `indices[:-1] + data[k:]`, `k` the
/// indices' last size.
pub fn scatter_nd(c: &Ctx) -> R {
    let mut out = like_input(c);
    let (Some(x), Some(i)) = (c.shape(0), c.shape(1)) else { return Ok(out) };
    let Some((Some(k), outer)) = i.split_last().map(|(k, outer)| (k.known(), outer)) else {
        return invalid("ScatterND: indices are a scalar".into());
    };
    let Some(inner) = usize::try_from(k).ok().and_then(|k| x.get(k..)) else {
        return invalid(format!("ScatterND: index length {k} for data of rank {}", x.len()));
    };
    // Each index within its axis (the spec; onnxruntime: "invalid indice found"), so none
    // into an empty one ("indices must be empty when an indexed data dimension has size 0").
    let indexed = &x[..x.len() - inner.len()];
    if indexed.contains(&Dim::Known(0)) && Dim::product(outer).known().is_some_and(|n| n > 0) {
        return invalid(format!("ScatterND: indices into the empty axis of data {}", render(x)));
    }
    let tuples = c.value(1).unwrap_or_default().chunks(indexed.len().max(1));
    let outside = tuples.flat_map(|t| t.iter().zip(indexed)).find_map(|(i, d)| {
        let (i, d) = (i.known()?, d.known()?);
        (i < -d || i >= d).then_some((i, d))
    });
    if let Some((i, d)) = outside {
        return invalid(format!("ScatterND: index {i} outside an axis of size {d}"));
    }
    if let Some(u) = c.shape(2) {
        let want: Shape = outer.iter().chain(inner).cloned().collect();
        pin_shapes(&want, u, &mut out).map_err(|e| RuleError::Invalid(format!("ScatterND: updates: {e}")))?;
    }
    Ok(out)
}

pub fn gather_nd(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(data), Some(ind)) = (c.shape(0), c.shape(1)) else { return outs(vec![ty(dtype, None)]) };
    let b = c.node.attr_int("batch_dims").unwrap_or(0).max(0) as usize;
    let Some(last) = ind.last() else { return invalid("GatherND needs indices of rank 1 or more".into()) };
    let Dim::Known(k) = last else { return outs(vec![ty(dtype, None)]) };
    let k = usize::try_from(*k).unwrap_or(usize::MAX);
    if b.checked_add(k).is_none_or(|n| n > data.len()) {
        return invalid(format!("GatherND: batch_dims {b} + index length {k} exceed the data rank {}", data.len()));
    }
    // The first batch_dims axes of the indices are the data's (the spec has them equal;
    // onnxruntime runs any multiple of the data's batch).
    let batch = |s: &[Dim]| s.get(..b).and_then(|s| Dim::product(s).known());
    if let (Some(d), Some(i)) = (batch(data), batch(&ind[..ind.len() - 1])) {
        if (d == 0 && i != 0) || (d > 0 && i % d != 0) {
            return invalid(format!("GatherND: a batch of {i} indices for a batch of {d} data"));
        }
    }
    let mut shape = ind[..ind.len() - 1].to_vec();
    shape.extend(data[b + k..].iter().cloned());
    outs(vec![ty(dtype, Some(shape))])
}

/// SpaceToDepth moves `blocksize`-square blocks of height and width into the channels;
/// DepthToSpace moves them back.
pub fn space_depth(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let op = c.node.op_type.as_str();
    let b = c.node.attr_int("blocksize").unwrap_or(1);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, Some(unknown_rank(4)))]) };
    if x.len() != 4 || b <= 0 {
        return invalid(format!("{op} needs a 4-D input and a positive blocksize"));
    }
    // The blocksize squared, unknown past `i64::MAX`; onnxruntime refuses sizes it does not
    // divide.
    let square = b.checked_mul(b);
    let mut out = Out::default();
    let mut divide = |axis: usize, k: i64| match exact_div(&x[axis], k) {
        Ok((part, multiple)) => {
            out.assumptions.extend(multiple.map(|m| (axis, m)));
            Ok(part)
        }
        Err(e) => invalid(format!("{op}: axis {axis}: {e}")),
    };
    let (bb, sq) = (Dim::Known(b), square.map_or(Dim::Unknown, Dim::Known));
    let shape = if op == "SpaceToDepth" {
        vec![x[0].clone(), x[1].mul(&sq), divide(2, b)?, divide(3, b)?]
    } else {
        let c = square.map_or(Ok(Dim::Unknown), |sq| divide(1, sq))?;
        vec![x[0].clone(), c, x[2].mul(&bb), x[3].mul(&bb)]
    };
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

pub fn non_zero(c: &Ctx) -> R {
    let rank = c.shape(0).map(|s| Dim::Known(s.len() as i64)).unwrap_or(Dim::Unknown);
    let count = match (c.value(0), c.float_value(0)) {
        (Some(v), _) if v.iter().all(|d| d.known().is_some()) => {
            Dim::Known(v.iter().filter(|d| **d != Dim::Known(0)).count() as i64)
        }
        (_, Some(f)) => Dim::Known(f.iter().filter(|x| **x != 0.0).count() as i64),
        _ => Dim::Unknown,
    };
    outs(vec![ty(Some(DType::I64), Some(vec![rank, count]))])
}

pub fn unique(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let i64t = Some(DType::I64);
    let Some(x) = c.shape(0) else {
        let list = ty(i64t, Some(unknown_rank(1)));
        return outs(vec![ty(dtype, None), list.clone(), list.clone(), list]);
    };
    let axis = c.node.attr_int("axis").map(|a| axis_in(a, x.len(), "Unique")).transpose()?;
    // With known contents, the number of distinct elements (or slices) is known.
    let count = match (c.numbers(0), numel(x)) {
        (Some(v), Some(n)) if v.len() == n => {
            let (outer, len, inner) = match axis {
                Some(a) => {
                    (numel(&x[..a]).unwrap_or(0), x[a].known().unwrap_or(0) as usize, numel(&x[a + 1..]).unwrap_or(0))
                }
                None => (1, n, 1),
            };
            // A set, not a list: a model of 2,000 Unique nodes over one 1,024-element constant
            // took 3 s with a linear search for each slice.
            let seen: std::collections::HashSet<Vec<u64>> = (0..len)
                .map(|j| {
                    (0..outer)
                        .flat_map(|o| (0..inner).map(move |i| (o * len + j) * inner + i))
                        .map(|k| if v[k] == 0.0 { 0 } else { v[k].to_bits() })
                        .collect()
                })
                .collect();
            Dim::Known(seen.len() as i64)
        }
        _ => Dim::Unknown,
    };
    let (y, inverse) = match axis {
        Some(a) => (with_dim(x, a, count.clone()), x[a].clone()),
        None => (vec![count.clone()], Dim::product(x)),
    };
    outs(vec![
        ty(dtype, Some(y)),
        ty(i64t, Some(vec![count.clone()])),
        ty(i64t, Some(vec![inverse])),
        ty(i64t, Some(vec![count])),
    ])
}

pub fn compress(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let axis = c.node.attr_int("axis").map(|a| axis_in(a, x.len(), "Compress")).transpose()?;
    let n = match axis {
        Some(a) => x[a].known(),
        None => numel(x).map(|n| n as i64),
    };
    let count = match (c.value(1), n) {
        (Some(v), Some(n)) if v.iter().all(|d| d.known().is_some()) => {
            Dim::Known(v.iter().take(n.max(0) as usize).filter(|d| **d != Dim::Known(0)).count() as i64)
        }
        _ => Dim::Unknown,
    };
    let shape = match axis {
        Some(a) => with_dim(x, a, count),
        None => vec![count],
    };
    outs(vec![ty(dtype, Some(shape))])
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
    if let Some(t) = c.float_value(3).filter(|_| c.has(3)).and_then(<[f64]>::first).filter(|t| **t < 0.0 || **t > 1.0) {
        return invalid(format!("NonMaxSuppression: iou_threshold {t} is outside [0, 1]"));
    }
    let count = nms_count(c).map_or(Dim::Unknown, |n| Dim::Known(n as i64));
    out.types = smallvec::smallvec![ty(Some(DType::I64), Some(vec![count, Dim::Known(3)]))];
    Ok(out)
}

/// ReverseSequence: like the input; one length per batch entry, over two distinct axes of
/// 0 and 1.
pub fn reverse_sequence(c: &Ctx) -> R {
    let mut out = like_input(c);
    let (b, t) = (c.node.attr_int("batch_axis").unwrap_or(1), c.node.attr_int("time_axis").unwrap_or(0));
    if b == t || !(0..2).contains(&b) || !(0..2).contains(&t) {
        return invalid(format!("ReverseSequence: batch_axis {b} and time_axis {t} must be 0 and 1"));
    }
    match c.shape(0) {
        Some(x) if x.len() < 2 => return invalid(format!("ReverseSequence: input rank {} is below 2", x.len())),
        Some(x) => {
            expect_shape(c, 1, &[x[b as usize].clone()], &mut out)?;
            // Each length lies within the time axis (onnxruntime: "Invalid sequence length").
            let time = &x[t as usize];
            if let Some(n) = c.ints(1).iter().flatten().find(|n| **n < 0 || time.known().is_some_and(|t| **n > t)) {
                return invalid(format!("ReverseSequence: sequence length {n} is outside 0..={time}"));
            }
        }
        None => {}
    }
    Ok(out)
}

/// LRN: like the input, over an odd, positive number of channels (onnxruntime refuses others).
pub fn lrn(c: &Ctx) -> R {
    match c.node.attr_int("size") {
        Some(n) if n <= 0 || n % 2 == 0 => {
            invalid(format!("LRN: size {n} is not odd and positive; onnxruntime refuses it"))
        }
        _ => Ok(like_input(c)),
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
    let a = axis_in(axis, x.len(), "DFT")?;
    if a == x.len() - 1 {
        return invalid(format!("DFT: axis {axis} is the trailing real/imaginary axis"));
    }
    let mut shape = x.to_vec();
    let len = match c.value(1) {
        Some([d]) => d.clone(),
        _ if c.has(1) => Dim::Unknown,
        _ => x[a].clone(),
    };
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
    outs(vec![ty(dtype, Some(shape))])
}

pub fn stft(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, Some(unknown_rank(4)))]) };
    if x.len() != 3 {
        return invalid("STFT needs a 3-D signal".into());
    }
    let step = first_value(c, 1);
    let frame = if c.has(3) { first_value(c, 3) } else { dim(c, 2, 0) };
    let frames = x[1].sub(&frame).div_floor(&step).add(&Dim::Known(1));
    let onesided = c.node.attr_int("onesided").unwrap_or(1) != 0;
    let bins = if onesided { frame.div_floor(&Dim::Known(2)).add(&Dim::Known(1)) } else { frame };
    outs(vec![ty(dtype, Some(vec![x[0].clone(), frames, bins, Dim::Known(2)]))])
}

pub fn window(c: &Ctx) -> R {
    let dtype = attr_dtype(c, "output_datatype", Some(DType::F32));
    let n = first_value(c, 0);
    if let Some(n) = n.known().filter(|n| *n <= 0) {
        return invalid(format!("{}: size {n}; it must be above 0", c.node.op_type));
    }
    outs(vec![ty(dtype, Some(vec![n]))])
}

pub fn mel_weight_matrix(c: &Ctx) -> R {
    let dtype = attr_dtype(c, "output_datatype", Some(DType::F32));
    let bins = first_value(c, 0);
    // dft_length / 2 + 1, dividing toward zero as onnxruntime does (a length of -1 gives 1).
    let dft = first_value(c, 1);
    outs(vec![ty(dtype, Some(vec![fold::div(&dft, &Dim::Known(2)).add(&Dim::Known(1)), bins]))])
}

pub fn rnn(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let dirs = Dim::Known(if c.node.attr_str("direction").as_deref() == Some("bidirectional") { 2 } else { 1 });
    let hidden = attr_dim(c, "hidden_size");
    let layout = c.node.attr_int("layout").unwrap_or(0);
    expect_rank(c, 0, 3)?;
    let Some(x) = c.shape(0) else {
        let unknown = |rank| ty(dtype, Some(unknown_rank(rank)));
        return outs(vec![unknown(4), unknown(3), unknown(3)]);
    };
    // Layout 0: X is [seq, batch, input], Y [seq, dirs, batch, hidden], Y_h [dirs, batch,
    // hidden]; layout 1 puts the batch first in all three.
    let (x0, x1) = (x[0].clone(), x[1].clone());
    let (batch, y, yh) = if layout == 0 {
        (x1.clone(), vec![x0, dirs.clone(), x1.clone(), hidden.clone()], vec![dirs.clone(), x1, hidden.clone()])
    } else {
        (x0.clone(), vec![x0.clone(), x1, dirs.clone(), hidden.clone()], vec![x0, dirs.clone(), hidden.clone()])
    };
    // The weights as onnxruntime checks them: W [dirs, gates*hidden, input], R [dirs,
    // gates*hidden, hidden], B [dirs, 2*gates*hidden], sequence_lens [batch], initial states
    // like Y_h, LSTM's peepholes P [dirs, 3*hidden].
    let gates = hidden.mul(&Dim::Known(match c.node.op_type.as_str() {
        "LSTM" => 4,
        "GRU" => 3,
        _ => 1,
    }));
    let mut out = Out::default();
    expect_shape(c, 1, &[dirs.clone(), gates.clone(), x[2].clone()], &mut out)?;
    expect_shape(c, 2, &[dirs.clone(), gates.clone(), hidden.clone()], &mut out)?;
    expect_shape(c, 3, &[dirs.clone(), gates.mul(&Dim::Known(2))], &mut out)?;
    expect_shape(c, 4, &[batch], &mut out)?;
    for i in [5, 6] {
        expect_shape(c, i, &yh, &mut out)?;
    }
    expect_shape(c, 7, &[dirs, hidden.mul(&Dim::Known(3))], &mut out)?;
    out.types = smallvec::smallvec![ty(dtype, Some(y)), ty(dtype, Some(yh.clone())), ty(dtype, Some(yh))];
    Ok(out)
}

/// RoiAlign: X [N, C, H, W], rois [num_rois, 4] and batch_indices [num_rois], as onnx's
/// inference and onnxruntime check.
pub fn roi_align(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    if c.shape(0).is_some_and(|x| x.len() != 4) {
        return invalid("RoiAlign: X must have rank 4".into());
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
    if let Some(n) = size.iter().find_map(|d| d.known().filter(|n| *n < 0)) {
        return invalid(format!("AffineGrid: negative size {n}"));
    }
    let axes = size.len() as i64 - 2;
    let mut out = Out::default();
    expect_shape(c, 0, &[size[0].clone(), Dim::Known(axes), Dim::Known(axes + 1)], &mut out)?;
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

pub fn quantize(c: &Ctx) -> R {
    let dtype = if c.has(2) { c.dtype(2) } else { attr_dtype(c, "output_dtype", Some(DType::U8)).or(Some(DType::U8)) };
    quantized(c, dtype)
}

pub fn dequantize(c: &Ctx) -> R {
    quantized(c, attr_dtype(c, "output_dtype", c.dtype(1)).or(c.dtype(1)))
}

/// QuantizeLinear and DequantizeLinear: like the input, in `dtype`. The scale (input 1) holds
/// one value, one per element of `axis`, or (`block_size`) one per block of `axis` with the
/// input's other sizes; the zero point (input 2) is shaped like the scale.
fn quantized(c: &Ctx, dtype: Option<DType>) -> R {
    let mut out = Out::default();
    if let (Some(x), Some(s)) = (c.shape(0), c.shape(1)) {
        let axis = || axis_in(c.node.attr_int("axis").unwrap_or(1), x.len(), &c.node.op_type);
        let block = c.node.attr_int("block_size").unwrap_or(0);
        // One value: a scalar or a vector of one, either way for scale and zero point.
        let one = |s: &[Dim]| matches!(s, [] | [Dim::Known(1)]);
        let want = match s {
            _ if block > 0 => with_dim(x, axis()?, x[axis()?].div_ceil(&Dim::Known(block))),
            _ if one(s) => s.to_vec(),
            _ => vec![x[axis()?].clone()],
        };
        expect_shape(c, 1, &want, &mut out)?;
        if !(one(s) && c.shape(2).is_some_and(one)) {
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
    out.types = smallvec::smallvec![ty(c.dtype(0), loss_shape(c, &mut out)?)];
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

pub fn random(c: &Ctx) -> R {
    let dtype = attr_dtype(c, "dtype", Some(DType::F32));
    outs(vec![ty(dtype, c.node.attr_ints("shape").map(known_shape))])
}

pub fn eye_like(c: &Ctx) -> R {
    expect_rank(c, 0, 2)?;
    random_like(c)
}

pub fn random_like(c: &Ctx) -> R {
    let dtype = attr_dtype(c, "dtype", c.dtype(0));
    outs(vec![ty(dtype, c.shape(0).map(<[Dim]>::to_vec))])
}

pub fn multinomial(c: &Ctx) -> R {
    let dtype = attr_dtype(c, "dtype", Some(DType::I32));
    let batch = dim(c, 0, 0);
    let n = Dim::Known(c.node.attr_int("sample_size").unwrap_or(1));
    outs(vec![ty(dtype, Some(vec![batch, n]))])
}

/// MaxUnpool: [N, C, (x - 1) * stride + kernel - pads, ...], or `output_shape`, which
/// onnxruntime takes only of X's length, batch and channels and at least that large. The
/// indices are shaped as X (the spec; onnxruntime checks it).
pub fn max_unpool(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let mut out = Out::default();
    let least = match (c.shape(0), c.node.attr_ints("kernel_shape")) {
        (Some(x), Some(k)) => {
            expect_shape(c, 1, x, &mut out)?;
            Some((x, unpooled(c, x, k)?))
        }
        _ => None,
    };
    let shape = match (c.value(2).filter(|_| c.has(2)), least) {
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
        let blocks = Dim::product(&window_out(c, img, &kernel, false, &mut out)?);
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

pub fn center_crop_pad(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let Some(v) = c.value(1) else { return outs(vec![ty(dtype, Some(unknown_rank(x.len())))]) };
    let axes = axes_or_all(c.node.attr_ints("axes"), x.len(), "CenterCropPad")?;
    if axes.len() != v.len() {
        return invalid("CenterCropPad: shape and axes differ in length".into());
    }
    let mut shape = x.to_vec();
    for (k, a) in axes.iter().enumerate() {
        shape[*a] = v[k].clone();
    }
    outs(vec![ty(dtype, Some(shape))])
}

pub fn attention(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(q), Some(k), Some(v)) = (c.shape(0), c.shape(1), c.shape(2)) else {
        return outs(vec![
            ty(dtype, rank_only(c, 0)),
            ty(c.dtype(1), Some(unknown_rank(4))),
            ty(c.dtype(2), Some(unknown_rank(4))),
            ty(dtype, Some(unknown_rank(4))),
        ]);
    };
    let qh = attr_dim(c, "q_num_heads");
    let kvh = attr_dim(c, "kv_num_heads");
    // The schema wants both head counts for a 3-D Q, at every opset.
    let heads = match (q.len(), qh.known(), kvh.known()) {
        (3, Some(a), Some(b)) => Some((a, b)),
        (3, ..) => return invalid("Attention: 3-D inputs need q_num_heads and kv_num_heads".into()),
        _ => None,
    };
    let (b, q_heads, q_seq) = match q.len() {
        4 => (q[0].clone(), q[1].clone(), q[2].clone()),
        3 => (q[0].clone(), qh.clone(), q[1].clone()),
        r => return invalid(format!("Attention: Q has rank {r}")),
    };
    let (kv_heads, kv_seq, head) = match k.len() {
        4 => (k[1].clone(), k[2].clone(), k[3].clone()),
        3 => (kvh.clone(), k[1].clone(), k[2].div_floor(&kvh)),
        r => return invalid(format!("Attention: K has rank {r}")),
    };
    let v_head = match v.len() {
        4 => v[3].clone(),
        3 => v[2].div_floor(&kvh),
        r => return invalid(format!("Attention: V has rank {r}")),
    };
    // onnxruntime 1.32 has Attention kernels for opsets 23 and 24, which check: Q, K and V of
    // one rank, one batch; Q's head size is K's, V's sequence is K's (and its heads K's); K's
    // heads divide Q's; a 3-D input's last size splits into its heads; no size is 0;
    // nonpad_kv_seqlen [batch] (as the spec says). From opset 25 it runs the function body,
    // which broadcasts and checks none of this.
    let mut out = Out::default();
    if c.opset < 25 {
        let sizes = [&b, &q_heads, &q_seq, &kv_heads, &kv_seq, &head, &v_head];
        attention_kernel_checks(q, k, v, sizes, heads, &mut out)?;
        expect_shape(c, 6, std::slice::from_ref(&b), &mut out)?;
    }
    // The spec's past_key [batch, kv heads, past, head size] and past_value (V's head size),
    // given together, which the kernels and the opset-25 body's Concat enforce; no
    // nonpad_kv_seqlen with them (nor, from opset 25, with present_key or present_value).
    if c.has(4) != c.has(5) {
        return invalid("Attention: past_key and past_value come together".into());
    }
    let present = c.opset >= 25 && c.node.outputs().iter().skip(1).take(2).any(Option::is_some);
    if c.has(6) && (c.has(4) || present) {
        return invalid("Attention: nonpad_kv_seqlen with a past or present cache".into());
    }
    let past = if c.has(4) { dim(c, 4, 2) } else { Dim::Known(0) };
    for (i, size) in [(4, &head), (5, &v_head)] {
        expect_shape(c, i, &[b.clone(), kv_heads.clone(), past.clone(), size.clone()], &mut out)?;
    }
    let y = if q.len() == 4 {
        vec![b.clone(), q_heads.clone(), q_seq.clone(), v_head.clone()]
    } else {
        vec![b.clone(), q_seq.clone(), q_heads.mul(&v_head)]
    };
    let total = past.add(&kv_seq);
    // The mask stretches to [batch, heads, q_seq]. Along its last axis it stretches to `total`
    // at opset 23 and holds at most `total` at 24, which pads a shorter one (onnxruntime
    // 1.32's kernels want it exact); the opset-25 body takes any.
    if let Some((last, lead)) = c.shape(3).filter(|_| c.has(3)).and_then(|m| m.split_last()) {
        let scores = [b.clone(), q_heads.clone(), q_seq.clone()];
        let stretch = uni(&scores, lead, 3).map_err(|_| {
            let (m, scores) = (render(lead), render(&scores));
            RuleError::Invalid(format!("Attention: the mask's leading sizes {m} do not stretch to {scores}"))
        })?;
        out.assumptions.extend(stretch.assumptions);
        let fits = |(l, t): (i64, i64)| match c.opset {
            ..=23 => l == t || l == 1,
            24 => l <= t,
            _ => true,
        };
        if let Some((l, t)) = last.known().zip(total.known()).filter(|lt| !fits(*lt)) {
            return invalid(format!("Attention: the mask's last size {l} does not fit the {t} keys"));
        }
    }
    out.types = smallvec::smallvec![
        ty(dtype, Some(y)),
        ty(c.dtype(1), Some(vec![b.clone(), kv_heads.clone(), total.clone(), head])),
        ty(c.dtype(2), Some(vec![b.clone(), kv_heads, total.clone(), v_head])),
        ty(dtype, Some(vec![b, q_heads, q_seq, total])),
    ];
    Ok(out)
}

/// The checks of onnxruntime's opset-23/24 Attention kernels (see `attention`), with the
/// conditions symbolic sizes need.
fn attention_kernel_checks(
    q: &[Dim],
    k: &[Dim],
    v: &[Dim],
    sizes: [&Dim; 7],
    heads: Option<(i64, i64)>,
    out: &mut Out,
) -> Result<(), RuleError> {
    if q.len() != k.len() || k.len() != v.len() {
        return invalid(format!("Attention: Q, K and V have ranks {}, {} and {}", q.len(), k.len(), v.len()));
    }
    let [b, q_heads, _, kv_heads, kv_seq, head, _] = sizes;
    let q_head = match heads {
        None => q[3].clone(),
        Some((qh, kvh)) => {
            let q_head = exact_head(&q[2], qh, "Attention: Q's hidden size", out)?;
            exact_head(&k[2], kvh, "Attention: K's hidden size", out)?;
            exact_head(&v[2], kvh, "Attention: V's hidden size", out)?;
            q_head
        }
    };
    let v_seq = if v.len() == 4 { &v[2] } else { &v[1] };
    for (what, x, y) in
        [("batch", b, &k[0]), ("batch", b, &v[0]), ("head size", &q_head, head), ("sequence", kv_seq, v_seq)]
    {
        let (_, same) = x.pin(y).ok_or_else(|| RuleError::Invalid(format!("Attention: {what} {x} and {y} differ")))?;
        out.assumptions.extend(same.map(|s| (0, s)));
    }
    if v.len() == 4 && v[1].known().zip(k[1].known()).is_some_and(|(x, y)| x != y) {
        return invalid(format!("Attention: V has {} heads, K {}", v[1], k[1]));
    }
    if let (Some(a), Some(h)) = (q_heads.known(), kv_heads.known()) {
        if h <= 0 || a % h != 0 {
            return invalid(format!("Attention: {h} heads of K and V do not divide Q's {a}"));
        }
    }
    if sizes.iter().any(|d| d.known() == Some(0)) {
        return invalid("Attention: a batch, head count, sequence or head size is 0".into());
    }
    Ok(())
}

/// A packed attention input's last size `d` over its `heads`, which must divide it: an error
/// (`what` names the size) where it does not, the condition that it does for a symbolic one.
fn exact_head(d: &Dim, heads: i64, what: &str, out: &mut Out) -> Result<Dim, RuleError> {
    if heads <= 0 {
        return invalid(format!("{what}: {heads} heads"));
    }
    let (part, multiple) = exact_div(d, heads).map_err(|e| RuleError::Invalid(format!("{what}: {e}")))?;
    out.assumptions.extend(multiple.map(|m| (0, m)));
    Ok(part)
}

/// Inputs present with a known shape have the ranks `ranks` lists in input order
/// (onnxruntime refuses others: "Input i expected to have rank r").
fn expect_ranks(c: &Ctx, ranks: &[usize]) -> Result<(), RuleError> {
    ranks.iter().enumerate().try_for_each(|(i, r)| expect_rank(c, i, *r))
}

/// RotaryEmbedding: like the input, [batch, heads, seq, head] or [batch, seq, hidden] with
/// num_heads dividing hidden. The cos and sin caches, of one shape, hold half the rotary size
/// (the head size unless `rotary_embedding_dim`, at most it, says): [batch, seq, rot/2], or
/// [positions, rot/2] with position_ids [batch, seq]. The spec's rules, which onnxruntime checks.
pub fn rotary_embedding(c: &Ctx) -> R {
    let mut out = like_input(c);
    let Some(x) = c.shape(0) else { return Ok(out) };
    let (b, seq, head) = match (x.len(), c.node.attr_int("num_heads")) {
        (4, _) => (&x[0], &x[2], x[3].clone()),
        (3, Some(n)) => (&x[0], &x[1], exact_head(&x[2], n, "RotaryEmbedding: the hidden size", &mut out)?),
        (3, None) => return invalid("RotaryEmbedding: a 3-D input needs num_heads".into()),
        (r, _) => return invalid(format!("RotaryEmbedding: input rank {r} is not 3 or 4")),
    };
    let rot = match c.node.attr_int("rotary_embedding_dim").filter(|d| *d != 0) {
        Some(r) if r < 0 || head.known().is_some_and(|h| r > h) => {
            return invalid(format!("RotaryEmbedding: rotary_embedding_dim {r} is not in 0..={head}"))
        }
        Some(r) => Dim::Known(r),
        None => head,
    };
    let half = rot.div_floor(&Dim::Known(2));
    let cache = if c.has(3) {
        expect_shape(c, 3, &[b.clone(), seq.clone()], &mut out)?;
        vec![dim(c, 1, 0), half]
    } else {
        vec![b.clone(), seq.clone(), half]
    };
    expect_shape(c, 1, &cache, &mut out)?;
    expect_shape(c, 2, &cache, &mut out)?;
    Ok(out)
}

pub fn flex_attention(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(q), Some(v)) = (c.shape(0), c.shape(2)) else { return outs(vec![ty(dtype, Some(unknown_rank(4)))]) };
    if q.len() != 4 || v.len() != 4 {
        return invalid("FlexAttention needs rank-4 Q, K and V".into());
    }
    outs(vec![ty(dtype, Some(vec![q[0].clone(), q[1].clone(), q[2].clone(), v[3].clone()]))])
}

/// LinearAttention (opset 27): packed query [B, T, Hq*dk], key [B, T, Hkv*dk], value
/// [B, T, Hkv*dv], state [B, Hkv, dk, dv]. The schema's inference (onnxruntime quotes it)
/// wants both head counts, positive, Hkv dividing Hq; the decay input exactly for the gated
/// rules and beta for the delta ones; these ranks and sizes; decay's last size Hkv or Hkv*dk
/// and beta's 1 or Hkv.
pub fn linear_attention(c: &Ctx) -> R {
    let op = op_err("LinearAttention");
    let (Some(qh), Some(kvh)) = (c.node.attr_int("q_num_heads"), c.node.attr_int("kv_num_heads")) else {
        return Err(op("q_num_heads and kv_num_heads are required".into()));
    };
    if qh <= 0 || kvh <= 0 || qh % kvh != 0 {
        return Err(op(format!("q_num_heads {qh} is not a positive multiple of kv_num_heads {kvh}")));
    }
    let rule = c.node.attr_str("update_rule").unwrap_or_else(|| "gated_delta".into());
    let Some(uses) = ["linear", "gated", "delta", "gated_delta"].iter().position(|r| *r == rule) else {
        return Err(op(format!("unknown update_rule '{rule}'")));
    };
    for (i, name, wanted) in [(4, "decay", uses % 2 == 1), (5, "beta", uses >= 2)] {
        if c.has(i) != wanted {
            return Err(op(format!("update_rule '{rule}' {} the {name} input", ["forbids", "needs"][wanted as usize])));
        }
    }
    expect_ranks(c, &[3, 3, 3, 4, 3, 3])?;
    let dtype = c.dtype(0);
    let state = if c.has(3) { c.dtype(3) } else { dtype };
    let (Some(q), Some(k), Some(v)) = (c.shape(0), c.shape(1), c.shape(2)) else {
        return outs(vec![ty(dtype, Some(unknown_rank(3))), ty(state, Some(unknown_rank(4)))]);
    };
    let mut out = Out::default();
    let dk = exact_head(&q[2], qh, "LinearAttention: the query's last size", &mut out)?;
    let k_dk = exact_head(&k[2], kvh, "LinearAttention: the key's last size", &mut out)?;
    let dv = exact_head(&v[2], kvh, "LinearAttention: the value's last size", &mut out)?;
    let (b, t) = (&q[0], &q[1]);
    let heads = [dk.clone()];
    for (what, x, y) in
        [("key", &k[..2], &q[..2]), ("value", &v[..2], &q[..2]), ("key's head", &[k_dk][..], &heads[..])]
    {
        pin_shapes(x, y, &mut out).map_err(|e| op(format!("the {what} sizes are not the query's: {e}")))?;
    }
    let (kvh, qh) = (Dim::Known(kvh), Dim::Known(qh));
    expect_shape(c, 3, &[b.clone(), kvh.clone(), dk.clone(), dv.clone()], &mut out)?;
    for (i, name, lasts) in [(4, "decay", [kvh.clone(), kvh.mul(&dk)]), (5, "beta", [Dim::Known(1), kvh.clone()])] {
        let Some(s) = c.shape(i).filter(|_| c.has(i)) else { continue };
        pin_shapes(&s[..2], &q[..2], &mut out).map_err(|e| op(format!("{name}'s sizes are not the query's: {e}")))?;
        if s[2].known().is_some_and(|l| lasts.iter().all(|x| x.known().is_some_and(|x| x != l))) {
            return Err(op(format!("{name}'s last size {} is not {} or {}", s[2], lasts[0], lasts[1])));
        }
    }
    out.types = smallvec::smallvec![
        ty(dtype, Some(vec![b.clone(), t.clone(), qh.mul(&dv)])),
        ty(state, Some(vec![b.clone(), kvh, dk, dv])),
    ];
    Ok(out)
}

/// CausalConvWithState (opset 27): like the input [B, C, L], and a state [B, C, k-1] for a
/// depthwise weight [C, 1, k]. The schema's inference wants these ranks and sizes, a bias [C],
/// k at least 1 and a known activation.
pub fn causal_conv(c: &Ctx) -> R {
    if let Some(a) = c.node.attr_str("activation").filter(|a| !["none", "silu", "swish"].contains(&a.as_str())) {
        return invalid(format!("CausalConvWithState: unknown activation '{a}'"));
    }
    expect_ranks(c, &[3, 3, 1, 3])?;
    let dtype = c.dtype(0);
    let (b, ch, k) = (dim(c, 0, 0), dim(c, 0, 1), dim(c, 1, 2));
    if let Some(k) = k.known().filter(|k| *k < 1) {
        return invalid(format!("CausalConvWithState: kernel size {k} is below 1"));
    }
    let mut out = Out::default();
    expect_shape(c, 1, &[ch.clone(), Dim::Known(1), k.clone()], &mut out)?;
    expect_shape(c, 2, std::slice::from_ref(&ch), &mut out)?;
    let state = vec![b, ch, k.sub(&Dim::Known(1))];
    expect_shape(c, 3, &state, &mut out)?;
    out.types = smallvec::smallvec![ty(dtype, c.shape(0).map(<[Dim]>::to_vec)), ty(dtype, Some(state))];
    Ok(out)
}

/// TensorScatter: like the cache. The schema wants `axis` off the batch axis, the update of
/// the cache's sizes but along it and write_indices [batch]; the spec, no more updates along
/// it than the cache holds (onnxruntime checks at run time) and mode linear or circular.
pub fn tensor_scatter(c: &Ctx) -> R {
    let mut out = like_input(c);
    if let Some(m) = c.node.attr_str("mode").filter(|m| m != "linear" && m != "circular") {
        return invalid(format!("TensorScatter: unknown mode '{m}'"));
    }
    let Some(cache) = c.shape(0) else { return Ok(out) };
    let axis = c.node.attr_int("axis").unwrap_or(-2);
    let a = axis_in(axis, cache.len(), "TensorScatter")?;
    if a == 0 {
        return invalid(format!("TensorScatter: axis {axis} is the batch axis"));
    }
    expect_shape(c, 2, &cache[..1], &mut out)?;
    if let Some(u) = c.shape(1) {
        if u.len() != cache.len() {
            return invalid(format!("TensorScatter: the update's rank {} is not the cache's {}", u.len(), cache.len()));
        }
        expect_shape(c, 1, &with_dim(cache, a, u[a].clone()), &mut out)?;
        if u[a].known().zip(cache[a].known()).is_some_and(|(u, m)| u > m) {
            return invalid(format!("TensorScatter: {} updates along axis {a} exceed the cache's {}", u[a], cache[a]));
        }
    }
    Ok(out)
}

pub fn tfidf(c: &Ctx) -> R {
    let width = c
        .node
        .attr_ints("ngram_indexes")
        .and_then(|v| v.iter().max().and_then(|m| m.checked_add(1)).map(Dim::Known))
        .unwrap_or(Dim::Unknown);
    let shape = match c.shape(0) {
        None => None,
        Some([_]) => Some(vec![width]),
        // onnxruntime: "Input shape must have either [C] or [B,C] dimensions with B > 0".
        Some([Dim::Known(0), _]) => return invalid("TfIdfVectorizer: a batch of 0 rows".into()),
        Some([n, _]) => Some(vec![n.clone(), width]),
        Some(s) => return invalid(format!("TfIdfVectorizer needs a 1-D or 2-D input, not {}-D", s.len())),
    };
    outs(vec![ty(Some(DType::F32), shape)])
}

pub fn string_split(c: &Ctx) -> R {
    let x = c.shape(0).map(<[Dim]>::to_vec);
    // With known strings the widest split is known (Python's `str.split`).
    let width = c.string_value(0).filter(|v| x.as_deref().and_then(numel) == Some(v.len())).map(|v| {
        let delim = c.node.attr_str("delimiter").unwrap_or_default();
        let max = c.node.attr_int("maxsplit").filter(|m| *m >= 0);
        let count = |s: &String| -> usize {
            let pieces = if delim.is_empty() { s.split_whitespace().count() } else { s.split(delim.as_str()).count() };
            max.map_or(pieces, |m| pieces.min(m as usize + 1))
        };
        Dim::Known(v.iter().map(count).max().unwrap_or(0) as i64)
    });
    // An empty input splits into nothing.
    let width = width.or_else(|| (x.as_deref().and_then(numel) == Some(0)).then_some(Dim::Known(0)));
    let y: Option<Shape> = x.as_ref().map(|s| s.iter().cloned().chain([width.unwrap_or(Dim::Unknown)]).collect());
    outs(vec![ty(Some(DType::Str), y), ty(Some(DType::I64), x)])
}

pub fn string_normalizer(c: &Ctx) -> R {
    let mut out = Out::default();
    let shape = match c.shape(0) {
        None => None,
        // The spec's inference: "Input shape must have either [C] or [1,C] dimensions where C > 0".
        Some([] | [.., Dim::Known(0)] | [_, _, _, ..]) => {
            return invalid("StringNormalizer: the input must be [C] or [1, C] with C > 0".into())
        }
        Some(x) => {
            if let [_, n] = x {
                expect_shape(c, 0, &[Dim::Known(1), n.clone()], &mut out)?;
            }
            let stops: Vec<String> = match c.node.attr("stopwords") {
                Some(AttrValue::Strings(w)) => w.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect(),
                _ => Vec::new(),
            };
            let sensitive = c.node.attr_int("is_case_sensitive").unwrap_or(0) != 0;
            let kept = |w: &&String| {
                !w.is_empty()
                    && !stops.iter().any(|s| if sensitive { s == *w } else { s.to_lowercase() == w.to_lowercase() })
            };
            // The words kept, at least one (an empty string where none is).
            let words = c.string_value(0).filter(|v| x.last().and_then(Dim::known) == Some(v.len() as i64));
            let mut shape = vec![Dim::Known(1); x.len() - 1];
            shape.push(words.map_or(Dim::Unknown, |v| Dim::Known(v.iter().filter(kept).count().max(1) as i64)));
            Some(shape)
        }
    };
    out.types = smallvec::smallvec![ty(Some(DType::Str), shape)];
    Ok(out)
}

pub fn string_concat(c: &Ctx) -> R {
    let shape = match (c.shape(0), c.shape(1)) {
        (Some(a), Some(b)) => Some(multi(&[a, b]).map_err(RuleError::Broadcast)?.shape),
        _ => None,
    };
    outs(vec![ty(Some(DType::Str), shape)])
}

pub fn regex_full_match(c: &Ctx) -> R {
    outs(vec![ty(Some(DType::Bool), c.shape(0).map(<[Dim]>::to_vec))])
}

pub fn optional_has_element(_: &Ctx) -> R {
    outs(vec![ty(Some(DType::Bool), Some(vec![]))])
}

pub fn optional_get_element(c: &Ctx) -> R {
    let t = match c.inputs.first().copied().flatten() {
        Some(Type::Optional(Some(inner))) => Some((**inner).clone()),
        Some(t @ Type::Tensor { .. }) => Some(t.clone()),
        Some(t @ Type::Sequence(_)) => Some(t.clone()),
        _ => None,
    };
    outs(vec![t])
}

pub fn optional(c: &Ctx) -> R {
    let inner = same_type_of(c, 0).map(Box::new);
    outs(vec![Some(Type::Optional(inner))])
}

/// ImageDecoder: height and width come from the encoded header when the bytes are known
/// (PNG, BMP, PNM, JPEG, TIFF, JPEG 2000, WebP); channels from `pixel_format`.
pub fn image_decoder(c: &Ctx) -> R {
    expect_rank(c, 0, 1)?;
    let channels = if c.node.attr_str("pixel_format").as_deref() == Some("Grayscale") { 1 } else { 3 };
    let hw = c.ints(0).and_then(|v| {
        let b: Vec<u8> = v.iter().map(|x| *x as u8).collect();
        image_size(&b).filter(|(h, w)| *h > 0 && *w > 0)
    });
    let (h, w) = hw.map_or((Dim::Unknown, Dim::Unknown), |(h, w)| (Dim::Known(h), Dim::Known(w)));
    outs(vec![ty(Some(DType::U8), Some(vec![h, w, Dim::Known(channels)]))])
}

/// (height, width) from an encoded image's header.
fn image_size(b: &[u8]) -> Option<(i64, i64)> {
    // The unsigned integer in the `n` bytes at `i`, big-endian or little-endian.
    let uint = |i: usize, n: usize, big: bool| -> Option<i64> {
        let bytes = b.get(i..i.checked_add(n)?)?;
        let push = |acc: i64, x: &u8| acc << 8 | i64::from(*x);
        Some(if big { bytes.iter().fold(0, push) } else { bytes.iter().rev().fold(0, push) })
    };
    let be16 = |i| uint(i, 2, true);
    let be32 = |i| uint(i, 4, true);
    if b.starts_with(b"\x89PNG") {
        return Some((be32(20)?, be32(16)?));
    }
    if b.starts_with(b"BM") {
        // Signed: a negative height stores the rows top-down.
        let le32 = |i| Some(uint(i, 4, false)? as u32 as i32 as i64);
        return Some((le32(22)?.abs(), le32(18)?));
    }
    if b.len() > 2 && b[0] == b'P' && (b'1'..=b'6').contains(&b[1]) {
        let text = String::from_utf8_lossy(&b[2..b.len().min(256)]);
        let mut nums = text
            .lines()
            .flat_map(|l| l.split('#').next().unwrap_or("").split_whitespace())
            .map(|t| t.parse::<i64>().ok());
        let (w, h) = (nums.next()??, nums.next()??);
        return Some((h, w));
    }
    if b.starts_with(&[0xFF, 0xD8]) {
        let mut i = 2;
        while i + 9 < b.len() {
            if b[i] != 0xFF {
                return None;
            }
            i += match b[i + 1] {
                // A start of frame: its height and width.
                0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => return Some((be16(i + 5)?, be16(i + 7)?)),
                // A fill byte, then markers without a length.
                0xFF => 1,
                0xD0..=0xD9 | 0x01 => 2,
                _ => 2 + be16(i + 2)? as usize,
            };
        }
        return None;
    }
    // TIFF: the first IFD's ImageWidth (256) and ImageLength (257) entries.
    if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        let big = b[0] == b'M';
        let u16_at = |i| uint(i, 2, big);
        let u32_at = |i| uint(i, 4, big);
        let ifd = usize::try_from(u32_at(4)?).ok()?;
        let (mut w, mut h) = (None, None);
        for k in 0..u16_at(ifd)? as usize {
            let e = ifd + 2 + 12 * k;
            let value = match u16_at(e + 2)? {
                3 => u16_at(e + 8)?,
                4 => u32_at(e + 8)?,
                _ => continue,
            };
            match u16_at(e)? {
                256 => w = Some(value),
                257 => h = Some(value),
                _ => {}
            }
        }
        return Some((h?, w?));
    }
    // JPEG 2000: the JP2 header box, or a bare codestream's SIZ marker.
    if b.get(4..8) == Some(b"jP  ") {
        let i = b.windows(4).position(|x| x == b"ihdr")?;
        return Some((be32(i + 4)?, be32(i + 8)?));
    }
    if b.starts_with(&[0xFF, 0x4F, 0xFF, 0x51]) {
        return Some((be32(12)? - be32(20)?, be32(8)? - be32(16)?));
    }
    if b.starts_with(b"RIFF") && b.get(8..12) == Some(b"WEBP") {
        return match b.get(12..16)? {
            b"VP8 " => Some((uint(28, 2, false)? & 0x3FFF, uint(26, 2, false)? & 0x3FFF)),
            b"VP8L" => {
                let bits = uint(21, 4, false)?;
                Some((((bits >> 14) & 0x3FFF) + 1, (bits & 0x3FFF) + 1))
            }
            b"VP8X" => Some((uint(27, 3, false)? + 1, uint(24, 3, false)? + 1)),
            _ => None,
        };
    }
    None
}

/// Momentum, Adagrad, Adam: inputs (R, T, X.., G.., state..), outputs one new tensor per
/// optimized tensor and per state, each shaped like the input it replaces.
pub fn optimizer(c: &Ctx) -> R {
    let n = c.node.outputs.len();
    outs((0..n).map(|i| same_type_of(c, 2 + i)).collect())
}

pub fn label_encoder(c: &Ctx) -> R {
    let dtype = ["values_strings", "values_int64s", "values_floats", "values_tensor"]
        .iter()
        .find_map(|a| c.node.attr(a).map(|v| (*a, v)))
        .and_then(|(a, v)| match (a, v) {
            ("values_strings", _) => Some(DType::Str),
            ("values_int64s", _) => Some(DType::I64),
            ("values_floats", _) => Some(DType::F32),
            (_, AttrValue::Tensor(t)) => t.dtype,
            _ => None,
        });
    outs(vec![ty(dtype, c.shape(0).map(<[Dim]>::to_vec))])
}

pub fn tree_ensemble(c: &Ctx) -> R {
    expect_rank(c, 0, 2)?;
    let n = dim(c, 0, 0);
    let t = attr_dim(c, "n_targets");
    outs(vec![ty(c.dtype(0), Some(vec![n, t]))])
}

pub fn array_feature_extractor(c: &Ctx) -> R {
    let shape = match (c.shape(0), c.shape(1)) {
        (Some(x), Some(y)) if !x.is_empty() => {
            // onnxruntime gives a 1-D input a leading axis of 1.
            let mut s = if x.len() == 1 { vec![Dim::Known(1)] } else { x[..x.len() - 1].to_vec() };
            s.push(Dim::product(y));
            Some(s)
        }
        _ => None,
    };
    outs(vec![ty(c.dtype(0), shape)])
}

/// The batch size of an ai.onnx.ml input: its first dim, or 1 for a 1-D input.
fn ml_batch(c: &Ctx) -> Dim {
    match c.shape(0) {
        Some([n, _]) => n.clone(),
        Some([_]) => Dim::Known(1),
        _ => Dim::Unknown,
    }
}

/// LinearClassifier, SVMClassifier, TreeEnsembleClassifier: a label per row (int64 or string,
/// as the class labels are) and a score per row and class.
pub fn ml_classifier(c: &Ctx) -> R {
    let n = ml_batch(c);
    let label = if c.node.attr("classlabels_strings").is_some() { DType::Str } else { DType::I64 };
    outs(vec![ty(Some(label), Some(vec![n.clone()])), ty(Some(DType::F32), Some(vec![n, Dim::Unknown]))])
}

/// LinearRegressor, SVMRegressor, TreeEnsembleRegressor: `[N, targets]` floats.
pub fn ml_regressor(c: &Ctx) -> R {
    let targets = c.node.attr_int("targets").or(c.node.attr_int("n_targets")).unwrap_or(1);
    let targets = if c.node.op_type == "SVMRegressor" { 1 } else { targets };
    outs(vec![ty(Some(DType::F32), Some(vec![ml_batch(c), Dim::Known(targets)]))])
}

/// FeatureVectorizer: `[N, sum(inputdimensions)]` floats.
pub fn feature_vectorizer(c: &Ctx) -> R {
    let width = c
        .node
        .attr_ints("inputdimensions")
        .and_then(|d| d.iter().try_fold(0i64, |a, x| a.checked_add(*x)))
        .map_or(Dim::Unknown, Dim::Known);
    outs(vec![ty(Some(DType::F32), Some(vec![ml_batch(c), width]))])
}

/// OneHotEncoder: the input's shape with a trailing axis of one entry per category.
pub fn ml_one_hot_encoder(c: &Ctx) -> R {
    let cats = match (c.node.attr("cats_int64s"), c.node.attr("cats_strings")) {
        (Some(AttrValue::Ints(v)), _) => Dim::Known(v.len() as i64),
        (_, Some(AttrValue::Strings(v))) => Dim::Known(v.len() as i64),
        _ => Dim::Unknown,
    };
    let shape = c.shape(0).map(|s| s.iter().cloned().chain(std::iter::once(cats.clone())).collect());
    outs(vec![ty(Some(DType::F32), shape)])
}

/// ZipMap: a sequence of maps, one per row (not a tensor).
pub fn zip_map(_: &Ctx) -> R {
    outs(vec![Some(Type::Sequence(Some(Box::new(Type::Other))))])
}

pub fn category_mapper(c: &Ctx) -> R {
    let to = if c.dtype(0) == Some(DType::Str) { DType::I64 } else { DType::Str };
    outs(vec![ty(Some(to), c.shape(0).map(<[Dim]>::to_vec))])
}

/// The element type of input 0, a sequence, when known.
fn element<'a>(c: &Ctx<'a>) -> Option<&'a Type> {
    match c.inputs.first().copied().flatten() {
        Some(Type::Sequence(Some(e))) => Some(e),
        _ => None,
    }
}

/// A sequence of tensors of element type `dtype`, their shapes unknown.
fn sequence_of(dtype: Option<DType>) -> Option<Type> {
    Some(Type::Sequence(Some(Box::new(Type::tensor(dtype, None)))))
}

pub fn sequence_at(c: &Ctx) -> R {
    match element(c) {
        Some(e) => outs(vec![Some(e.clone())]),
        None => Ok(Out::default()),
    }
}

pub fn sequence_construct(c: &Ctx) -> R {
    let first = same_type_of(c, 0);
    let all_same = (1..c.inputs.len()).all(|i| same_type_of(c, i) == first);
    let elem = first.map(|t| if all_same { t } else { Type::tensor(t.dtype(), None) });
    outs(vec![Some(Type::Sequence(elem.map(Box::new)))])
}

pub fn sequence_empty(c: &Ctx) -> R {
    outs(vec![sequence_of(attr_dtype(c, "dtype", Some(DType::F32)))])
}

pub fn sequence_same(c: &Ctx) -> R {
    outs(vec![element(c).and_then(|e| sequence_of(e.dtype()))])
}

pub fn sequence_length(_: &Ctx) -> R {
    outs(vec![ty(Some(DType::I64), Some(vec![]))])
}

pub fn split_to_sequence(c: &Ctx) -> R {
    outs(vec![sequence_of(c.dtype(0))])
}

pub fn concat_from_sequence(c: &Ctx) -> R {
    outs(vec![ty(element(c).and_then(Type::dtype), None)])
}

/// Loop's outputs: the final loop-carried values (typed like the body's outputs, with dims
/// that may change across iterations unknown) and the scan outputs, stacked along a new
/// first axis whose length is the trip count where that is known.
pub fn loop_outputs(c: &Ctx) -> R {
    one_element(c, 0)?;
    let Some((_, body)) = c.subgraph_outputs.iter().find(|(n, _)| *n == "body") else { return Ok(Out::default()) };
    let carried = c.inputs.len().saturating_sub(2);
    // The trip count is known when the condition is absent or provably stays true (its body
    // output is known true given a true input).
    let cond_stays = !c.has(1) || (c.value(1) == Some(&[Dim::Known(1)][..]) && c.loop_cond_stays_true);
    let trip = if c.has(0) && cond_stays { first_value(c, 0) } else { Dim::Unknown };
    let mut types = Vec::new();
    for (i, t) in body.iter().skip(1).enumerate() {
        let t = t.clone();
        if i < carried {
            // A carried value keeps the dims its initial value and the body's output agree on.
            let init = same_type_of(c, 2 + i);
            types.push(match (init, t) {
                (
                    Some(Type::Tensor { dtype: d0, shape: Some(s0) }),
                    Some(Type::Tensor { dtype: d1, shape: Some(s1) }),
                ) if s0.len() == s1.len() => {
                    let shape =
                        s0.iter().zip(&s1).map(|(a, b)| if a == b { a.clone() } else { Dim::Unknown }).collect();
                    ty(d0.or(d1), Some(shape))
                }
                (Some(Type::Tensor { dtype: d0, .. }), Some(Type::Tensor { dtype: d1, .. })) => ty(d0.or(d1), None),
                (init, body) => init.or(body).map(|t| Type::tensor(t.dtype(), None)),
            });
        } else {
            types.push(t.map(|t| match t {
                Type::Tensor { dtype, shape } => {
                    Type::Tensor { dtype, shape: shape.map(|s| std::iter::once(trip.clone()).chain(s).collect()) }
                }
                other => other,
            }));
        }
    }
    outs(types)
}

/// Scan's outputs (opset 9+): the final state values, then the scan outputs with the scan
/// axis (of the first scan input's length) inserted.
pub fn scan_outputs(c: &Ctx) -> R {
    let Some((_, body)) = c.subgraph_outputs.iter().find(|(n, _)| *n == "body") else { return Ok(Out::default()) };
    let Some(m) = c.node.attr_int("num_scan_inputs") else { return invalid("Scan needs num_scan_inputs".into()) };
    let offset = if c.opset < 9 { 1 } else { 0 };
    let n_state = c.inputs.len().saturating_sub(offset + m.max(0) as usize);
    let first_scan = offset + n_state;
    // Each scan input has its scan axis (axis 1 before opset 9, after the batch), and all have
    // one length there.
    let in_axes = c.node.attr_ints("scan_input_axes");
    let mut out = Out::default();
    let mut seq = Dim::Unknown;
    for i in first_scan..c.inputs.len() {
        let Some(s) = c.shape(i) else { continue };
        let a = if c.opset < 9 { 1 } else { in_axes.and_then(|v| v.get(i - first_scan).copied()).unwrap_or(0) };
        let a = axis_in(a, s.len(), "Scan")?;
        let Some((pinned, same)) = seq.pin(&s[a]) else {
            return invalid(format!("Scan: scan input {i} has {} steps, an earlier one {seq}", s[a]));
        };
        out.assumptions.extend(same.map(|x| (0, x)));
        seq = pinned;
    }
    let out_axes = c.node.attr_ints("scan_output_axes");
    let mut types = Vec::new();
    for (i, t) in body.iter().enumerate() {
        if i < n_state {
            types.push(match (t, same_type_of(c, offset + i)) {
                (Some(Type::Tensor { dtype, shape: Some(s) }), Some(_)) if c.opset < 9 => {
                    // Before opset 9 the state keeps its batch axis outside the body.
                    let batch = dim(c, offset + i, 0);
                    ty(*dtype, Some(std::iter::once(batch).chain(s.iter().cloned()).collect()))
                }
                (Some(t), _) if c.opset >= 9 => Some(t.clone()),
                (_, init) => init,
            });
            continue;
        }
        let k = i - n_state;
        types.push(t.clone().map(|t| match t {
            Type::Tensor { dtype, shape: Some(mut s) } => {
                if c.opset < 9 {
                    s.splice(0..0, [dim(c, first_scan, 0), seq.clone()]);
                    return Type::Tensor { dtype, shape: Some(s) };
                }
                let a = out_axes.and_then(|v| v.get(k).copied()).unwrap_or(0);
                let shape = arith::axis(a, s.len() + 1).ok().map(|a| {
                    s.insert(a, seq.clone());
                    s
                });
                Type::Tensor { dtype, shape }
            }
            other => other,
        }));
    }
    out.types = types.into();
    Ok(out)
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

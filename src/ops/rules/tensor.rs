//! Shape and data movement rules: Constant, Shape, Size, Gather, Slice, Concat,
//! Squeeze/Unsqueeze, Reshape, ConstantOfShape, Range, Tile, the reductions (Reduce*, ArgMax,
//! ArgMin), Transpose, Flatten, Split, Pad and TopK.

use super::{
    axes_or_all, axis_in, exact_div, expect_rank, expect_shape, first_value, invalid, known_shape, moved, numel, one,
    one_element, op_err, outs, reduced, tensor_floats, tensor_ints, tensor_strings, ty, unknown_rank, with_dim,
    MAX_TRACKED, R,
};
use crate::diag::Code;
use crate::dtype::DType;
use crate::ir::AttrValue;
use crate::ops::{Bounds, Ctx, Out, RuleError, Spread};
use crate::shape::{arith, render, Assumption, Dim, Shape, Term, Type};

/// One output of type `t` whose contents are `v`.
fn valued(t: Type, v: Option<Vec<Dim>>) -> R {
    Ok(Out { types: smallvec::smallvec![Some(t)], values: vec![v], ..Out::default() })
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
        // Another attribute, or one of another kind: the schema check reports it.
        _ => return outs(vec![None]),
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

pub fn gather(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let (Some(data), Some(ind)) = (c.shape(0), c.shape(1)) else {
        return outs(vec![ty(dtype, None)]);
    };
    let axis = c.node.attr_int("axis").unwrap_or(0);
    let shape = arith::gather(data, ind, axis).map_err(op_err(&c.node.op_type))?;
    let mut out = one(Type::tensor(dtype, Some(shape)));
    let idx = c.ints(1);
    if let Ok(a) = arith::axis(axis, data.len()) {
        super::indices_fit(c, &data[a], a + ind.iter().position(|d| d.term().is_some()).unwrap_or(0), &mut out)?;
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
    match dim {
        Dim::Known(d) => crate::shape::slice_range(*d, start, end, step).map_or(Dim::Unknown, |(_, n)| Dim::Known(n)),
        Dim::Term(t) if step != 0 => {
            // Worked out over a stand-in size first, which the arithmetic knows to be at least
            // 0 as `dim` is (it sizes the input): so the whole axis is `dim`, not `max(dim,0)`.
            let n = Term::fresh(u64::MAX);
            match symbolic_slice_len(&Dim::Term(n.clone()), start, end, step) {
                Dim::Term(len) => len.substitute(&|a| (*a == n).then(|| Dim::Term(t.clone()))),
                len => len,
            }
        }
        _ => Dim::Unknown,
    }
}

/// The length of `x[start:end:step]`, `step > 0`, on an axis of size `d`, as a term where the
/// axis or a bound is symbolic (a bound may be a size read off a shape: `x[:, :seq]` is
/// `min(d,seq)`, `x[:, -seq:]` of an axis `seq` is `seq`): `ceil((E - S) / step)` elements, at
/// least 0. Each bound clamps into `[0, d]` as numpy's does, where its sign can be told: a bound
/// that is never negative counts from the start, one always negative from the end, and one never
/// positive with `d` plus it never positive is 0 either way, and one never below `d` is past the
/// end (a start past `d` needs no clamp: it leaves `E - S <= 0`); a bound negative at a few
/// sizes only is checked there. Otherwise the sign test itself is a term: exact, if long.
fn slice_between(d: &Dim, start: &Dim, end: &Dim, step: i64) -> Dim {
    let k = Dim::Known;
    let upper = |x: &Dim| x.bounds().1;
    // `clamp_high`: an end clamps at `d`; a start past `d` leaves the length at 0 anyway.
    let resolve = |i: &Dim, clamp_high: bool| -> Option<Dim> {
        // At or past `d`, whatever its sign, it resolves to `d`: `d` is at least 0, so the
        // bound is too (torch's dynamo export slices an axis to a size it computes again as
        // the same term). So does `u` on an axis `max(u, c)`, `c <= 0`: `d` there is `u`, or 0
        // with `u` at most 0, where every bound resolves to 0.
        let past_end = i.sub(d).is_nonneg() || d.term().and_then(Term::clamped_of).is_some_and(|u| i.term() == Some(u));
        if past_end {
            return Some(d.clone());
        }
        let from_end = d.add(i);
        let low = match i {
            Dim::Known(v) if v.unsigned_abs() >= PAST_END as u64 => return Some(if *v > 0 { d.clone() } else { k(0) }),
            Dim::Known(v) => *v,
            Dim::Term(_) => i.bounds().0,
            Dim::Unknown => return None,
        };
        if low >= 0 {
            Some(if clamp_high { Dim::min_of(&[i, d]) } else { i.clone() })
        } else if upper(i).is_some_and(|h| h < 0) {
            Some(Dim::max_of(&[&from_end, &k(0)]))
        } else if upper(i).is_some_and(|h| h <= 0) && upper(&from_end).is_some_and(|h| h <= 0) {
            Some(k(0))
        } else {
            None
        }
    };
    let length = |s: &Dim, e: &Dim| Dim::max_of(&[&e.sub(s).div_ceil(&k(step)), &k(0)]);
    let (s, e) = (resolve(start, false), resolve(end, true));
    if let (Some(s), Some(e)) = (&s, &e) {
        return length(s, e);
    }
    // One bound `n + c`, a name plus a negative constant, is negative only at the sizes
    // n < -c. The length worked out as if it never were is kept when, at each of those sizes,
    // it is numpy's (`x[:, :n-1]` on an axis `n`: 0 at n = 0 either way).
    let guess = (|| {
        let (unsure, guess) = match (&s, &e) {
            (None, Some(e)) => (start, length(start, e)),
            (Some(s), None) => (end, length(s, &Dim::min_of(&[end, d]))),
            _ => return None,
        };
        let name = unsure.term()?.atoms().iter().find_map(|a| a.as_name().map(str::to_string))?;
        let Dim::Known(c @ -64..=-1) = unsure.sub(&Dim::sym(&name)) else { return None };
        let holds = (0..-c).all(|v| {
            let env = [(name.clone(), v)].into();
            let at = |x: &Dim| x.bind(&env).known();
            let numpy = (|| crate::shape::slice_range(at(d)?, at(start)?, at(end)?, step))();
            numpy.is_some_and(|(_, len)| at(&guess) == Some(len))
        });
        holds.then_some(guess)
    })();
    if let Some(guess) = guess {
        return guess;
    }
    // Else numpy's rule itself, as a term: `[i < 0]` is `min(max(-i, 0), 1)` for an integer
    // `i`, and a negative bound counts from the end (MPT's ALiBi bias sliced from `64 - seq`).
    let numpy = |i: &Dim, clamp_high: bool| {
        let negative = Dim::min_of(&[&Dim::max_of(&[&k(0).sub(i), &k(0)]), &k(1)]);
        let i = Dim::max_of(&[&i.add(&d.mul(&negative)), &k(0)]);
        if clamp_high {
            Dim::min_of(&[&i, d])
        } else {
            i
        }
    };
    let s = s.unwrap_or_else(|| numpy(start, false));
    let e = e.unwrap_or_else(|| numpy(end, true));
    length(&s, &e)
}

/// An index this far from 0 (or farther) is past either end of a symbolic axis: exporters
/// write INT32_MAX, INT64_MAX and INT64_MIN (give or take one) for "to the end".
const PAST_END: i64 = i32::MAX as i64 - 1;

/// [`slice_len`] on an axis of symbolic size `d`, as a term: `x[:-1]` is `max(d-1, 0)`. A
/// forward slice is [`slice_between`]'s; a backward one takes `ceil((S - E) / -step)`, at least
/// 0, `S` clamped into `[-1, d-1]` and `E` clamped at -1.
fn symbolic_slice_len(d: &Dim, start: i64, end: i64, step: i64) -> Dim {
    let k = Dim::Known;
    if step > 0 {
        return slice_between(d, &k(start), &k(end), step);
    }
    // A negative index counts from the end, and clamps at -1.
    let from_end = |i: i64| Dim::max_of(&[&d.add(&k(i)), &k(-1)]);
    let last = d.sub(&k(1));
    let s = match start {
        i if i >= PAST_END => last.clone(),
        i if i >= 0 => Dim::min_of(&[&k(i), &last]),
        i if i <= -PAST_END => k(-1),
        i => from_end(i),
    };
    let e = match end {
        i if i >= PAST_END => last,
        i if i >= 0 => k(i),
        i if i <= -PAST_END => k(-1),
        i => from_end(i),
    };
    Dim::max_of(&[&s.sub(&e).div_ceil(&k(step.checked_neg().unwrap_or(i64::MAX))), &k(0)])
}

/// Slice's starts, ends, axes and steps inputs (opset 10 on) are vectors of one length, no
/// longer than the data's rank, whatever their contents (onnxruntime: "Starts must be a 1-D
/// array", "Starts and ends shape mismatch", "'axes' has an axis outside of the tensor
/// dimension count"): that length, where known.
fn bounds_count(c: &Ctx, rank: usize) -> Result<Option<i64>, RuleError> {
    let mut count = None;
    for (i, what) in [(1, "starts"), (2, "ends"), (3, "axes"), (4, "steps")] {
        let Some(s) = c.shape(i) else { continue };
        let [n] = s else { return invalid(format!("Slice: {what} has rank {}, not 1", s.len())) };
        match (n.known(), count) {
            (Some(n), Some(k)) if n != k => return invalid(format!("Slice: {what} holds {n} values, starts {k}")),
            (Some(n), _) => count = Some(n),
            _ => {}
        }
    }
    match count {
        Some(n) if n > rank as i64 => invalid(format!("Slice: {n} axes sliced of a rank-{rank} tensor")),
        _ => Ok(count),
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
    let count = if c.opset >= 10 { bounds_count(c, rank)? } else { None };
    let axes_unknown = c.opset >= 10 && c.has(3) && axes.is_none();
    let steps_unknown = c.opset >= 10 && c.has(4) && steps.is_none();
    // Known bounds, or sizes read off a shape (`x[:, :seq]`, `x[:, -seq:]`).
    let bound = |known: Option<Vec<i64>>, input: usize| match known {
        Some(k) => Some(k.into_iter().map(Dim::Known).collect::<Vec<Dim>>()),
        None if c.opset >= 10 => c.value(input).map(<[Dim]>::to_vec),
        None => None,
    };
    let (starts, ends) = (bound(starts, 1), bound(ends, 2));
    let (Some(starts), Some(ends)) = (starts, ends) else {
        // Without the bounds only the rank is known; axes not sliced keep their size when
        // the axes are known, or without axes the bounds' count (the first that many).
        let mut shape = data.to_vec();
        let first = count.filter(|_| !c.has(3)).unwrap_or(rank as i64);
        let sliced = axes.filter(|_| c.opset >= 10).unwrap_or_else(|| (0..first).collect());
        for i in sliced.iter().filter_map(|a| axis_in(*a, rank, &c.node.op_type).ok()) {
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
    let mut warnings = Vec::new();
    for k in 0..starts.len() {
        let a = axis_in(axes[k], rank, &c.node.op_type)?;
        if std::mem::replace(&mut seen[a], true) {
            return invalid(format!("Slice: axis {a} is sliced twice"));
        }
        if steps[k] == 0 {
            return invalid("Slice: a step is 0".into());
        }
        shape[a] = match (&starts[k], &ends[k]) {
            (Dim::Known(start), Dim::Known(e)) => {
                let start = *start;
                // onnxruntime reads an end of INT32_MAX or INT64_MAX as "to the end" in either
                // direction; the spec clamps it to the last index, so a backward slice is empty.
                if steps[k] < 0 && (*e == i64::MAX || *e == i64::from(i32::MAX)) && data[a].known() != Some(0) {
                    let ort = slice_len(&data[a], start, i64::MIN, steps[k]);
                    let end = if *e == i64::MAX { "INT64_MAX" } else { "INT32_MAX" };
                    let msg = format!(
                        "Slice: axis {a} ends at {end} with step {}: empty by the spec; onnxruntime slices to the start, a size of {ort}",
                        steps[k]
                    );
                    warnings.push((Code::RuntimeDiffers, msg));
                }
                ranges[a] = Some((start, *e, steps[k]));
                slice_len(&data[a], start, *e, steps[k])
            }
            (start, end) if steps[k] > 0 => slice_between(&data[a], start, end, steps[k]),
            _ => Dim::Unknown,
        };
    }
    let mut out = one(Type::tensor(dtype, Some(shape)));
    out.warnings = warnings;
    // Contents: each output axis takes `count` input indices from `first` by `step`.
    let dims: Option<Vec<i64>> = data.iter().map(Dim::known).collect();
    let known = |b: &[Dim]| b.iter().all(|x| x.known().is_some());
    if let (Some(v), Some(dims), true) = (c.value(0), dims, known(&starts) && known(&ends)) {
        let walk: Option<Vec<Walk>> = (dims.iter().zip(&ranges).enumerate())
            .map(|(a, (&n, r))| {
                let (s, e, st) = r.unwrap_or((0, n, 1));
                let (first, count) = crate::shape::slice_range(n, s, e, st)?;
                Some((a, first, st, count))
            })
            .collect();
        out.values = vec![walk.and_then(|w| strided(v, &dims, &w))];
    }
    // Some of the input's elements: within its bounds, which they may not reach.
    if out.values.first().is_none_or(Option::is_none) {
        let bounds = c.between(0).map(|b| Bounds { tight: false, ..b });
        out.spreads = vec![bounds.map(Spread::Between)];
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
        arith::concat(&shapes, c.node.attr_int("axis").unwrap_or(0)).map_err(op_err(&c.node.op_type))?;
    let rank = shape.len();
    let mut out = one(Type::tensor(dtype, Some(shape)));
    out.assumptions = assumptions;
    if rank == 1 {
        let vals: Option<Vec<&[Dim]>> = present.iter().map(|i| c.value(*i)).collect();
        out.values = vec![vals.map(|v| v.concat()).filter(|v| v.len() <= MAX_TRACKED)];
    }
    // Index tuples: one column from each input of one column along the last axis.
    if rank > 1 && arith::axis(c.node.attr_int("axis").unwrap_or(0), rank).ok() == Some(rank - 1) {
        let column = |i: &usize| match (c.shape(*i)?.last()?, c.spreads.get(*i).copied().flatten()) {
            (Dim::Known(1), Some(Spread::Columns(cols))) => cols.first().cloned(),
            (Dim::Known(1), _) => c.between(*i),
            _ => None,
        };
        out.spreads = vec![present.iter().map(column).collect::<Option<Vec<_>>>().map(Spread::Columns)];
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
    let shape = arith::unsqueeze(data, &axes).map_err(op_err(&c.node.op_type))?;
    Ok(moved(c, ty(dtype, Some(shape))))
}

pub fn squeeze(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let Ok(axes) = ints_from(c, "axes", 1) else { return outs(vec![ty(dtype, fewer_axes(c, 1, data.len()))]) };
    let Some(shape) = arith::squeeze(data, axes.as_deref()).map_err(op_err(&c.node.op_type))? else {
        return outs(vec![ty(dtype, None)]);
    };
    let mut out = moved(c, ty(dtype, Some(shape)));
    // A listed axis of symbolic size must be 1 (onnxruntime: "Dimension of input 1 must be 1
    // instead of 2"); a size 0 is refused as a known size is, once bound.
    for a in axes.iter().flatten().filter_map(|a| arith::axis(*a, data.len()).ok()) {
        if let Dim::Term(t) = &data[a] {
            out.assumptions.push((a, Assumption::AtMost { size: t.clone(), max: 1 }));
        }
    }
    // onnxruntime reads an empty list as none and removes every axis of size 1.
    if axes.as_ref().is_some_and(Vec::is_empty) && data.iter().any(|d| d.known().is_none_or(|k| k == 1)) {
        let ort = match data.iter().map(Dim::known).collect::<Option<Vec<i64>>>() {
            Some(d) => format!("gives {}", render(&d.into_iter().filter(|k| *k != 1).collect::<Vec<_>>())),
            None => "removes every axis of size 1".into(),
        };
        let msg = format!("Squeeze: an empty axes list removes no axis by the spec; onnxruntime {ort}");
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
    Ok(out)
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
            Dim::Term(_) => n.div_floor(&d).mul(&d),
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
    // The shape is a vector (the spec; onnxruntime: "A shape tensor must be a vector tensor").
    if c.opset >= 5 {
        expect_rank(c, 1, 1)?;
    }
    let target: Option<Vec<Dim>> = if c.opset < 5 {
        c.node.attr_ints("shape").map(|v| v.iter().map(|x| Dim::Known(*x)).collect())
    } else {
        c.value(1).map(<[Dim]>::to_vec)
    };
    let Some(target) = target else { return outs(vec![ty(dtype, list_len(c, 1).and_then(unknown_rank_of))]) };
    let allowzero = c.node.attr_int("allowzero").unwrap_or(0) != 0;
    let data = c.shape(0);
    let (shape, minus) = arith::reshape(data, &target, allowzero).map_err(op_err(&c.node.op_type))?;
    let condition = data.and_then(|data| reshape_condition(data, &shape, minus));
    let mut out = moved(c, ty(dtype, Some(shape)));
    out.assumptions.extend(condition.map(|a| (0, a)));
    Ok(out)
}

pub fn constant_of_shape(c: &Ctx) -> R {
    let (dtype, fill, number) = match c.node.attr("value") {
        Some(AttrValue::Tensor(t)) => {
            let fill = tensor_ints(t, 1).and_then(|v| v.first().copied());
            let number = fill.map(|x| x as f64).or_else(|| tensor_floats(t, 1)?.first().copied());
            (t.dtype, fill, number)
        }
        // The default: a float32 zero.
        _ => (Some(DType::F32), None, Some(0.0)),
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
    match (fill, shape.as_deref().and_then(numel)) {
        (Some(f), Some(n)) if n <= MAX_TRACKED => out.values = vec![Some(vec![Dim::Known(f); n])],
        _ => out.spreads = vec![number.map(Spread::Fill)],
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
            // From 0 up to a size read off a shape (`arange(seq)`), which is not negative.
            (Dim::Known(0), _) if d > 0 => l.div_ceil(&Dim::Known(d)),
            // Otherwise `max(ceil((limit - start) / delta), 0)` elements (XLNet counts down
            // from `seq` to `-seq`: 2*seq; `arange(1, seq)` is `max(seq-1,0)`).
            _ => Dim::max_of(&[&l.sub(&s).div_ceil(&Dim::Known(d)), &Dim::Known(0)]),
        };
        let tracked = n.known().filter(|k| (*k as usize) <= MAX_TRACKED);
        if let (Some(k), Dim::Known(a), true) = (tracked, &s, dtype.is_some_and(DType::is_int)) {
            out.values =
                vec![(0..k).map(|i| i.checked_mul(d).and_then(|x| x.checked_add(*a)).map(Dim::Known)).collect()];
        } else if n != Dim::Unknown && s != Dim::Unknown {
            // From `start` to its last element, `start + (n-1)*delta`, the other way down.
            let last = s.add(&n.sub(&Dim::Known(1)).mul(&Dim::Known(d)));
            let (lo, hi) = if d > 0 { (s, last) } else { (last, s) };
            if lo != Dim::Unknown && hi != Dim::Unknown {
                out.spreads = vec![Some(Spread::Between(Bounds { lo, hi, tight: true }))];
            }
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
        Some(r) => arith::tile(data, r).map_err(op_err(&c.node.op_type))?,
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

pub fn reduce(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    // onnx's inference and onnxruntime keep the axes only for keepdims=1, and take an empty
    // axes list as none only for noop_with_empty_axes=1 (any other value is false).
    let keep = c.node.attr_int("keepdims").unwrap_or(1) == 1;
    let noop = c.node.attr_int("noop_with_empty_axes").unwrap_or(0) == 1;
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
                "ReduceMax" => v.iter().cloned().reduce(|a, b| Dim::max_of(&[&a, &b])),
                "ReduceMin" => v.iter().cloned().reduce(|a, b| Dim::min_of(&[&a, &b])),
                _ => None,
            };
            out.values = vec![r.filter(|d| *d != Dim::Unknown).map(|d| vec![d])];
        }
    }
    Ok(out)
}

pub fn arg_reduce(c: &Ctx) -> R {
    let keep = c.node.attr_int("keepdims").unwrap_or(1) == 1;
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
        let a = axis_in(p, rank, &c.node.op_type)?;
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
    let axis = c.node.attr_int("axis").unwrap_or(1);
    if axis < 0 && c.opset < 11 {
        // Negative axes came with Flatten 11; onnx's inference and onnxruntime refuse them before.
        return invalid(format!("Flatten: axis {axis} is negative, which opset {} does not allow (11 on)", c.opset));
    }
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, Some(unknown_rank(2)))]) };
    let [x, y] = arith::flatten(data, axis).map_err(op_err(&c.node.op_type))?;
    valued(Type::tensor(dtype, Some(vec![x, y])), c.value(0).map(<[Dim]>::to_vec))
}

pub fn split(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let n = c.node.outputs.len();
    let num_outputs = c.node.attr_int("num_outputs");
    // onnxruntime 1.32 dies of SIGSEGV on a Split with an output left out.
    if let Some(k) = c.node.outputs().iter().position(Option::is_none) {
        return invalid(format!("Split: output {k} is left out, which onnxruntime crashes on"));
    }
    // onnx's inference: "Both 'split' input and 'num_outputs' attribute were given", "cannot be
    // lower than 1"; onnxruntime: "Number of outputs (2) does not match num_outputs (3)".
    match num_outputs {
        Some(k) if k < 1 => return invalid(format!("Split: num_outputs={k}; it takes 1 or more")),
        Some(_) if c.has(1) => return invalid("Split: both a split input and num_outputs are given".into()),
        Some(k) if k != n as i64 => return invalid(format!("Split: num_outputs={k}, and the node has {n} outputs")),
        _ => {}
    }
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None); n]) };
    let axis = axis_in(c.node.attr_int("axis").unwrap_or(0), data.len(), &c.node.op_type)?;
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
                    let (part, multiple) = exact_div(d, parts).map_err(op_err(&c.node.op_type))?;
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
    // pads and axes are vectors, the constant one value (onnxruntime: "'pads' input must be a
    // 1D (shape: [2 * input_rank]) tensor").
    if c.opset >= 11 {
        expect_rank(c, 1, 1)?;
        expect_rank(c, 3, 1)?;
        one_element(c, 2)?;
    }
    let listed = c.opset >= 18 && c.has(3);
    let list = if listed { c.ints(3) } else { None };
    // Pads, or axes listed, whose contents are unknown leave only the rank known.
    let Some(pads) = pads.filter(|_| !listed || list.is_some()) else {
        return outs(vec![ty(dtype, Some(unknown_rank(rank)))]);
    };
    let axes = axes_or_all(list.as_deref(), rank, &c.node.op_type)?;
    if pads.len() != 2 * axes.len() {
        return invalid(format!("Pad: {} pads for {} axes", pads.len(), axes.len()));
    }
    // Negative pads crop first. Of what is left (the extent), onnxruntime reflects at most
    // extent-1 elements on a side, and grows no empty axis by reflect, edge or wrap; nor does
    // it take a non-empty input that the crop leaves an empty extent in these modes.
    let mode = c.node.attr_str("mode").unwrap_or_else(|| "constant".into());
    let copies = mode != "constant";
    let input_empty = data.iter().any(|d| d.known() == Some(0));
    let mut out = Out::default();
    let mut shape = data.to_vec();
    for (k, &a) in axes.iter().enumerate() {
        let (before, after) = (&pads[k], &pads[k + axes.len()]);
        let widest = [before, after].into_iter().filter_map(Dim::known).max().unwrap_or(0);
        let crop = [before, after].into_iter().filter_map(Dim::known).map(|p| p.min(0)).fold(0i64, i64::saturating_add);
        // An empty axis can only stay empty: there is nothing to copy into the pads.
        let grows = before.known().zip(after.known()).map_or(widest > 0, |(b, a)| b.saturating_add(a) > 0);
        let min = match mode.as_str() {
            "reflect" if widest > 0 => widest.saturating_add(1),
            "edge" | "wrap" if widest > 0 => 1,
            _ => 0,
        };
        match &data[a] {
            Dim::Known(d) if copies && ((*d == 0 && grows) || (!input_empty && d.saturating_add(crop) <= 0)) => {
                let why = if *d == 0 {
                    format!("axis {a} is empty and cannot grow")
                } else {
                    format!("the pads crop all of axis {a}")
                };
                return Err(RuleError::Window(format!("Pad ({mode}): {why}; onnxruntime refuses it")));
            }
            Dim::Known(d) if !input_empty && d.saturating_add(crop) < min => {
                let left = d.saturating_add(crop);
                let why = match min {
                    0 => format!("negative pads leave axis {a} a size of {left}"),
                    _ => format!("a pad of {widest} exceeds the {} elements axis {a} can reflect", left - 1),
                };
                return Err(RuleError::Window(format!("Pad ({mode}): {why}; onnxruntime refuses it")));
            }
            Dim::Term(sym) if min > 1 => {
                let min = min.saturating_sub(crop);
                out.assumptions.push((a, Assumption::AtLeast { size: sym.clone(), min }))
            }
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
    if mode == "wrap" && input_empty {
        let msg = "Pad (wrap): an empty input, which onnxruntime refuses (\"Unexpected mode of 3\")";
        out.warnings.push((Code::RuntimeDiffers, msg.into()));
    }
    scalar_pad(c, rank, &mut out);
    out.types = smallvec::smallvec![ty(dtype, Some(shape))];
    Ok(out)
}

/// The spec pads a scalar by no pads; onnxruntime 1.32's Pad, and so CenterCropPad's body,
/// refuses one ("Input tensor has no dimensions").
pub(super) fn scalar_pad(c: &Ctx, rank: usize, out: &mut Out) {
    if rank == 0 {
        let msg = format!("{}: a scalar input, which onnxruntime refuses", c.node.op_type);
        out.warnings.push((Code::RuntimeDiffers, msg));
    }
}

pub fn topk(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(data) = c.shape(0) else { return outs(vec![ty(dtype, None), ty(Some(DType::I64), None)]) };
    let axis = axis_in(c.node.attr_int("axis").unwrap_or(-1), data.len(), &c.node.op_type)?;
    let mut out = Out::default();
    let k = match c.node.attr_int("k") {
        Some(k) if c.opset < 10 => Dim::Known(k),
        _ => {
            expect_shape(c, 1, &[Dim::Known(1)], &mut out)?;
            first_value(c, 1)
        }
    };
    if let (Dim::Known(k), Dim::Known(d)) = (&k, &data[axis]) {
        if k > d || *k < 0 {
            return invalid(format!("TopK: k = {k} for an axis of size {d}"));
        }
    }
    let shape = with_dim(data, axis, k);
    out.types = smallvec::smallvec![ty(dtype, Some(shape.clone())), ty(Some(DType::I64), Some(shape))];
    Ok(out)
}

//! The ops around the broadcasting family that shape subgraphs and rewritten models use:
//! Constant, ConstantOfShape, Shape, Size, Identity, Reshape, Flatten, Squeeze, Unsqueeze,
//! Gather, Slice, Concat, Tile, Range, and Gemm.

use super::broadcast::{map1, Budget};
use super::kernels::broadcast_to;
use super::scalar::{Kind, Num};
use super::tensor::{from_ir, numel, with_any, Data, Elem, HostTensor};
use super::{Ctx, Fail};
use crate::ir::AttrValue;
use crate::shape::{self, arith};

fn one(t: HostTensor) -> Result<Vec<HostTensor>, Fail> {
    Ok(vec![t])
}

/// The axis `axis` of a rank-`rank` tensor, negative counting from the end.
fn norm_axis(axis: i64, rank: usize) -> Result<usize, Fail> {
    arith::axis(axis, rank).map_err(Fail::Invalid)
}

/// A shape as the sizes shared shape arithmetic takes (`usize` always fits in `i64` here:
/// every shape was allocated).
fn sizes(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|d| *d as i64).collect()
}

fn to_usizes(v: &[i64], what: &str) -> Result<Vec<usize>, Fail> {
    v.iter()
        .map(|d| usize::try_from(*d).ok())
        .collect::<Option<_>>()
        .ok_or_else(|| Fail::Invalid(format!("{what} {v:?} has a negative entry")))
}

/// Constant: `value` (a tensor) or one of `value_float(s)`, `value_int(s)`, `value_string(s)`.
pub fn constant(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    for a in &ctx.node.attrs {
        let t = match &a.value {
            AttrValue::Tensor(t) if a.name == "value" => from_ir(t, ctx.dir, ctx.budget.0)?,
            AttrValue::Float(f) if a.name == "value_float" => HostTensor::scalar(*f),
            AttrValue::Floats(v) if a.name == "value_floats" => HostTensor::from_vec(vec![v.len()], v.clone())?,
            AttrValue::Int(i) if a.name == "value_int" => HostTensor::scalar(*i),
            AttrValue::Ints(v) if a.name == "value_ints" => HostTensor::from_vec(vec![v.len()], v.clone())?,
            AttrValue::String(s) if a.name == "value_string" => HostTensor::scalar(s.clone()),
            AttrValue::Strings(v) if a.name == "value_strings" => HostTensor::from_vec(vec![v.len()], v.clone())?,
            _ => continue,
        };
        return one(t);
    }
    Err(Fail::Invalid("no supported value attribute (sparse_value is not supported)".into()))
}

/// ConstantOfShape: a tensor of the given shape filled with `value` (default float32 0).
pub fn constant_of_shape(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let shape = to_usizes(&ctx.ints(0)?, "shape")?;
    let value = match ctx.node.attr("value") {
        Some(AttrValue::Tensor(t)) => from_ir(t, ctx.dir, ctx.budget.0)?,
        _ => HostTensor::scalar(0f32),
    };
    if value.len() != 1 {
        return Err(Fail::Invalid(format!("value must hold one element, not {}", value.len())));
    }
    let flat = value.reshaped(Vec::new())?;
    broadcast_to(ctx.budget, &flat, shape)
}

/// Shape, with the `start`/`end` attributes of opset 15.
pub fn shape_op(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let picked =
        sizes(&x.shape[arith::shape_range(x.shape.len(), ctx.node.attr_int("start"), ctx.node.attr_int("end"))]);
    one(HostTensor::from_vec(vec![picked.len()], picked)?)
}

/// Size: the element count as an int64 scalar.
pub fn size(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    one(HostTensor::scalar(ctx.input(0)?.len() as i64))
}

/// Identity (and Dropout at inference).
pub fn identity(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    one(ctx.input(0)?.clone())
}

/// Reshape: the shape from input 1 (opset 5+) or the `shape` attribute; 0 copies the input's
/// dim unless `allowzero=1`; one -1 is inferred.
pub fn reshape(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let target = if ctx.opset < 5 {
        ctx.node.attr_ints("shape").map(<[i64]>::to_vec).ok_or_else(|| Fail::Invalid("no 'shape' attribute".into()))?
    } else {
        ctx.ints(1)?
    };
    let allow_zero = ctx.node.attr_int("allowzero").unwrap_or(0) == 1;
    let (out, _) = arith::reshape(Some(&sizes(&x.shape)), &target, allow_zero).map_err(Fail::Invalid)?;
    one(x.reshaped(to_usizes(&out, "shape")?)?)
}

/// Flatten at `axis` (default 1) into two dims.
pub fn flatten(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let out = arith::flatten(&sizes(&x.shape), ctx.node.attr_int("axis").unwrap_or(1)).map_err(Fail::Invalid)?;
    one(x.reshaped(to_usizes(&out, "shape")?)?)
}

/// The integer list `name`: input `i` from opset `since` (Squeeze/Unsqueeze's axes: 13; Slice's
/// operands: 10), the attribute before.
fn int_list(ctx: &Ctx, since: i64, i: usize, name: &str) -> Result<Option<Vec<i64>>, Fail> {
    if ctx.opset >= since {
        ctx.opt(i).map(|t| t.to_i64s().ok_or_else(|| Fail::Invalid(format!("{name} must be integers")))).transpose()
    } else {
        Ok(ctx.node.attr_ints(name).map(<[i64]>::to_vec))
    }
}

/// Squeeze: removes the listed size-1 axes, or all of them.
pub fn squeeze(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let out = arith::squeeze(&sizes(&x.shape), int_list(ctx, 13, 1, "axes")?.as_deref())
        .map_err(Fail::Invalid)?
        .unwrap_or_default();
    one(x.reshaped(to_usizes(&out, "shape")?)?)
}

/// Unsqueeze: inserts size-1 axes at the listed output positions.
pub fn unsqueeze(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let list = int_list(ctx, 13, 1, "axes")?.ok_or_else(|| Fail::Invalid("no axes".into()))?;
    let out = arith::unsqueeze(&sizes(&x.shape), &list).map_err(Fail::Invalid)?;
    one(x.reshaped(to_usizes(&out, "shape")?)?)
}

/// Gather along `axis` (default 0); negative indices count from the end.
pub fn gather(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let idx = ctx.input(1)?.to_i64s().ok_or_else(|| Fail::Invalid("indices must be integers".into()))?;
    let axis_attr = ctx.node.attr_int("axis").unwrap_or(0);
    let out_shape = arith::gather(&sizes(&x.shape), &sizes(&ctx.input(1)?.shape), axis_attr).map_err(Fail::Invalid)?;
    let out_shape = to_usizes(&out_shape, "shape")?;
    let axis = norm_axis(axis_attr, x.shape.len())?;
    let n = x.shape[axis];
    let idx: Vec<usize> = idx
        .iter()
        .map(|&i| {
            let j = if i < 0 { i + n as i64 } else { i };
            usize::try_from(j).ok().filter(|j| *j < n)
        })
        .collect::<Option<_>>()
        .ok_or_else(|| Fail::Invalid(format!("an index is out of range for axis {axis} of size {n}")))?;
    let total = numel(&out_shape).ok_or_else(|| Fail::Invalid("output shape overflows".into()))?;
    // An empty input may have sizes whose products overflow (0 x 2^32 x 2^32), and an empty
    // output may still loop over 2^40 outer rows: neither is walked.
    if total == 0 {
        return one(HostTensor::new(out_shape, empty_like(&x.data))?);
    }
    // Both are factors of the output's element count (the output has their dims), so fit.
    let outer: usize = x.shape[..axis].iter().product();
    let inner: usize = x.shape[axis + 1..].iter().product();
    fn go<T: Clone>(
        bu: Budget,
        v: &[T],
        total: usize,
        outer: usize,
        n: usize,
        inner: usize,
        idx: &[usize],
    ) -> Result<Vec<T>, Fail> {
        bu.check::<T>("output", total)?;
        let mut out = Vec::with_capacity(total);
        for o in 0..outer {
            for &i in idx {
                let start = (o * n + i) * inner;
                out.extend_from_slice(&v[start..start + inner]);
            }
        }
        Ok(out)
    }
    let bu = ctx.budget;
    let data = with_any!(&*x.data, v => Elem::wrap(go(bu, v, total, outer, n, inner, &idx)?));
    one(HostTensor::new(out_shape, data)?)
}

/// Slice: `starts`, `ends`, `axes`, `steps` as inputs (opset 10+) or attributes (before).
pub fn slice(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let r = x.shape.len();
    let list = |i: usize, name: &str| int_list(ctx, 10, i, name);
    let starts = list(1, "starts")?.ok_or_else(|| Fail::Invalid("no starts".into()))?;
    let ends = list(2, "ends")?.ok_or_else(|| Fail::Invalid("no ends".into()))?;
    let axes = list(3, "axes")?.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = if ctx.opset >= 10 { list(4, "steps")? } else { None }.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(Fail::Invalid("starts, ends, axes and steps differ in length".into()));
    }
    // Per axis: first index, step and count.
    let mut first = vec![0i64; r];
    let mut step = vec![1i64; r];
    let mut count: Vec<usize> = x.shape.clone();
    for k in 0..starts.len() {
        let a = norm_axis(axes[k], r)?;
        let d = x.shape[a] as i64;
        let s = steps[k];
        let (b, n) =
            crate::shape::slice_range(d, starts[k], ends[k], s).ok_or_else(|| Fail::Invalid("a step is 0".into()))?;
        first[a] = b;
        step[a] = s;
        count[a] = n as usize;
    }
    let total = numel(&count).ok_or_else(|| Fail::Invalid("output shape overflows".into()))?;
    // An empty input's strides may overflow (0 x 2^32 x 2^32); its slices are all empty.
    if total == 0 {
        return one(HostTensor::new(count, empty_like(&x.data))?);
    }
    // Row-major strides of the input, which is not empty (each count is at most its dim).
    let mut strides = vec![1i64; r];
    for a in (0..r.saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * x.shape[a + 1] as i64;
    }
    fn go<T: Clone>(
        bu: Budget,
        v: &[T],
        total: usize,
        first: &[i64],
        step: &[i64],
        count: &[usize],
        strides: &[i64],
    ) -> Result<Vec<T>, Fail> {
        bu.check::<T>("output", total)?;
        let mut out = Vec::with_capacity(total);
        if total == 0 {
            return Ok(out);
        }
        let r = count.len();
        let mut idx = vec![0usize; r];
        loop {
            let off: i64 = (0..r).map(|a| (first[a] + idx[a] as i64 * step[a]) * strides[a]).sum();
            out.push(v[off as usize].clone());
            let mut a = r;
            loop {
                if a == 0 {
                    return Ok(out);
                }
                a -= 1;
                idx[a] += 1;
                if idx[a] < count[a] {
                    break;
                }
                idx[a] = 0;
            }
        }
    }
    let bu = ctx.budget;
    let data = with_any!(&*x.data, v => Elem::wrap(go(bu, v, total, &first, &step, &count, &strides)?));
    one(HostTensor::new(count, data)?)
}

/// Concat along `axis`.
pub fn concat(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let xs: Vec<&HostTensor> = ctx.inputs.iter().flatten().collect();
    let first = *xs.first().ok_or_else(|| Fail::Invalid("needs at least one input".into()))?;
    let axis_attr = ctx.node.attr_int("axis").ok_or_else(|| Fail::Invalid("no 'axis'".into()))?;
    let shapes: Vec<Vec<i64>> = xs.iter().map(|x| sizes(&x.shape)).collect();
    let shapes: Vec<&[i64]> = shapes.iter().map(Vec::as_slice).collect();
    let out_shape = to_usizes(&arith::concat(&shapes, axis_attr).map_err(Fail::Invalid)?.0, "shape")?;
    let axis = norm_axis(axis_attr, first.shape.len())?;
    if let Some(x) = xs.iter().find(|x| x.dtype() != first.dtype()) {
        return Err(Fail::Invalid(format!("inputs have element types {} and {}", first.dtype(), x.dtype())));
    }
    let total = numel(&out_shape).ok_or_else(|| Fail::Invalid("output shape overflows".into()))?;
    // Empty inputs may have sizes whose products overflow (0 x 2^32 x 2^32), and an empty
    // output may still loop over 2^40 outer rows: neither is walked.
    if total == 0 {
        return one(HostTensor::new(out_shape, empty_like(&first.data))?);
    }
    // Neither it nor an input's block is more than the output's element count.
    let outer: usize = first.shape[..axis].iter().product();
    fn go<T: Elem>(bu: Budget, xs: &[&HostTensor], total: usize, outer: usize, axis: usize) -> Result<Vec<T>, Fail> {
        bu.check::<T>("output", total)?;
        let mut out = Vec::with_capacity(total);
        let parts: Vec<(&[T], usize)> =
            xs.iter().map(|x| (x.elems::<T>().unwrap_or(&[]), x.shape[axis..].iter().product())).collect();
        for o in 0..outer {
            for (v, block) in &parts {
                out.extend_from_slice(&v[o * block..(o + 1) * block]);
            }
        }
        Ok(out)
    }
    let bu = ctx.budget;
    // The first input's elements only pick the type `go` runs at.
    fn wrap_like<T: Elem>(_: &[T], v: Vec<T>) -> Data {
        T::wrap(v)
    }
    let data = with_any!(&*first.data, v => wrap_like(v, go(bu, &xs, total, outer, axis)?));
    one(HostTensor::new(out_shape, data)?)
}

/// Tile with `repeats` (opset 6+): a broadcast copy of x viewed as [1,d0,1,d1,...] to
/// [r0,d0,r1,d1,...], which is the tiled tensor in row-major order.
pub fn tile(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let x = ctx.input(0)?;
    let reps = ctx.ints(1)?;
    let out = to_usizes(&arith::tile(&sizes(&x.shape), &reps).map_err(Fail::Invalid)?, "shape")?;
    let reps = to_usizes(&reps, "repeats")?;
    let mut view = Vec::with_capacity(2 * reps.len());
    let mut wide = Vec::with_capacity(2 * reps.len());
    for (d, r) in x.shape.iter().zip(&reps) {
        view.extend([1, *d]);
        wide.extend([*r, *d]);
    }
    let t = broadcast_to(ctx.budget, &x.reshaped(view)?, wide)?;
    one(t[0].reshaped(out)?)
}

/// Range(start, limit, delta): `max(ceil((limit - start) / delta), 0)` elements.
pub fn range(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let (s, l, d) = (ctx.input(0)?, ctx.input(1)?, ctx.input(2)?);
    fn go<T: Num>(bu: Budget, s: &[T], l: &[T], d: &[T]) -> Result<Vec<T>, Fail> {
        let (Some(s), Some(l), Some(d)) = (s.first(), l.first(), d.first()) else {
            return Err(Fail::Invalid("start, limit and delta must be scalars".into()));
        };
        // Integers counted exactly (bounds past 2^53 lose digits as f64).
        let wide = |x: &T| if T::KIND == Kind::Unsigned { i128::from(x.to_u64()) } else { i128::from(x.to_i64()) };
        let n = if T::FLOAT {
            arith::range_count_f64(s.to_f64(), l.to_f64(), d.to_f64())
        } else {
            arith::range_count(wide(s), wide(l), wide(d)).map(|n| n as f64)
        };
        let n = n.ok_or_else(|| Fail::Invalid("delta is 0 or the range is not a number".into()))?;
        if n >= usize::MAX as f64 {
            return Err(Fail::Budget { what: "output".into(), bytes: n as u128, budget: bu.0 });
        }
        let n = n as usize;
        bu.check::<T>("output", n)?;
        let mut out = Vec::with_capacity(n);
        let mut v = *s;
        for _ in 0..n {
            out.push(v);
            v = v.add(*d);
        }
        Ok(out)
    }
    let bu = ctx.budget;
    macro_rules! each {
        ($($v:ident),*) => {
            match (&*s.data, &*l.data, &*d.data) {
                $((Data::$v(a), Data::$v(b), Data::$v(c)) => Data::$v(go(bu, a, b, c)?),)*
                _ => return Err(Fail::Invalid(format!(
                    "start, limit and delta must have one numeric type, not {}, {} and {}",
                    s.dtype(), l.dtype(), d.dtype()
                ))),
            }
        };
    }
    let data = each!(F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64);
    let n = data.len();
    one(HostTensor::new(vec![n], data)?)
}

/// Gemm: `alpha * A' B' + beta * C`, C stretching unidirectionally to [M, N] (before opset 7
/// only with `broadcast=1`, which this accepts either way).
pub fn gemm(ctx: &Ctx) -> Result<Vec<HostTensor>, Fail> {
    let a = ctx.input(0)?;
    let b = ctx.input(1)?;
    let c = ctx.opt(2);
    let ta = ctx.node.attr_int("transA").unwrap_or(0) != 0;
    let tb = ctx.node.attr_int("transB").unwrap_or(0) != 0;
    let alpha = ctx.node.attr_float("alpha").unwrap_or(1.0) as f64;
    let beta = ctx.node.attr_float("beta").unwrap_or(1.0) as f64;
    let out = to_usizes(&arith::gemm(&sizes(&a.shape), &sizes(&b.shape), ta, tb).map_err(Fail::Invalid)?, "shape")?;
    let (m, n, ac, bc) = (out[0], out[1], a.shape[1], b.shape[1]);
    let k = if ta { a.shape[0] } else { ac };
    if let Some(c) = c {
        shape::uni::<usize>(&out, &c.shape, 2)
            .map_err(|_| Fail::Invalid(format!("C of shape {:?} does not stretch to {out:?}", c.shape)))?;
    }
    fn go<T: Num>(
        bu: Budget,
        (a, ta, ac): (&[T], bool, usize),
        (b, tb, bc): (&[T], bool, usize),
        c: Option<&HostTensor>,
        (m, k, n): (usize, usize, usize),
        (alpha, beta): (f64, f64),
    ) -> Result<Vec<T>, Fail> {
        let mn = m.checked_mul(n).ok_or_else(|| Fail::Invalid(format!("output [{m}, {n}] overflows")))?;
        let mut acc = bu.alloc::<f64>("output", mn, 0.0)?;
        for i in 0..m {
            for p in 0..k {
                let av = if ta { a[p * ac + i] } else { a[i * ac + p] }.to_f64();
                let row = &mut acc[i * n..(i + 1) * n];
                for (j, o) in row.iter_mut().enumerate() {
                    let bv = if tb { b[j * bc + p] } else { b[p * bc + j] }.to_f64();
                    *o += av * bv;
                }
            }
        }
        let cv: Option<Vec<f64>> = match c {
            Some(c) => {
                let cd = c.elems::<T>().ok_or_else(|| Fail::Invalid("C has another element type".into()))?;
                Some(map1(bu, &[m, n], cd, &c.shape, |v| v.to_f64())?)
            }
            None => None,
        };
        Ok(acc
            .iter()
            .enumerate()
            .map(|(i, v)| T::from_f64(alpha * v + cv.as_ref().map_or(0.0, |c| beta * c[i])))
            .collect())
    }
    let bu = ctx.budget;
    let data = match (&*a.data, &*b.data) {
        (Data::F32(x), Data::F32(y)) => Data::F32(go(bu, (x, ta, ac), (y, tb, bc), c, (m, k, n), (alpha, beta))?),
        (Data::F64(x), Data::F64(y)) => Data::F64(go(bu, (x, ta, ac), (y, tb, bc), c, (m, k, n), (alpha, beta))?),
        (Data::I32(x), Data::I32(y)) => Data::I32(go(bu, (x, ta, ac), (y, tb, bc), c, (m, k, n), (alpha, beta))?),
        (Data::I64(x), Data::I64(y)) => Data::I64(go(bu, (x, ta, ac), (y, tb, bc), c, (m, k, n), (alpha, beta))?),
        _ => return Err(Fail::Invalid(format!("unsupported element types {} and {}", a.dtype(), b.dtype()))),
    };
    one(HostTensor::new(out, data)?)
}

/// No elements, of the element type of `data`.
fn empty_like(data: &Data) -> Data {
    fn none<T: Elem>(_: &[T]) -> Data {
        T::wrap(Vec::new())
    }
    with_any!(data, v => none(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{run_node, Options};
    use crate::ir::{Attribute, Node};
    use crate::Model;

    fn call(
        op: &str,
        opset: i64,
        inputs: Vec<HostTensor>,
        attrs: Vec<(&str, AttrValue)>,
    ) -> Result<HostTensor, String> {
        let mut n = Node::new("n", op, Model::MAIN);
        n.inputs = smallvec::smallvec![None; inputs.len()];
        n.attrs = attrs.into_iter().map(|(k, v)| Attribute::new(k, v)).collect();
        run_node(&n, opset, inputs.into_iter().map(Some).collect(), &Options::default())
            .map(|mut v| v.remove(0))
            .map_err(|e| e.to_string())
    }

    fn i64s(shape: Vec<usize>, v: Vec<i64>) -> HostTensor {
        HostTensor::from_vec(shape, v).unwrap()
    }

    #[test]
    fn slice_steps_and_empty_axes() {
        let x = i64s(vec![2, 5], (0..10).collect());
        let v = |s: &[i64]| i64s(vec![s.len()], s.to_vec());
        // x[:, ::-2] = [[4, 2, 0], [9, 7, 5]]
        let got = call("Slice", 13, vec![x.clone(), v(&[-1]), v(&[i64::MIN]), v(&[1]), v(&[-2])], vec![]).unwrap();
        assert_eq!(got, i64s(vec![2, 3], vec![4, 2, 0, 9, 7, 5]));
        // x[1:, 1:4] = [[6, 7, 8]]
        let got = call("Slice", 13, vec![x, v(&[1, 1]), v(&[9, 4])], vec![]).unwrap();
        assert_eq!(got, i64s(vec![1, 3], vec![6, 7, 8]));
        // A negative step over an empty axis gives an empty result, not a panic.
        let e = i64s(vec![0], vec![]);
        let got = call("Slice", 13, vec![e, v(&[-1]), v(&[-10]), v(&[0]), v(&[-1])], vec![]).unwrap();
        assert_eq!(got.shape, vec![0]);
    }

    #[test]
    fn tile_gather_reshape_unsqueeze() {
        let x = i64s(vec![2, 2], vec![1, 2, 3, 4]);
        let reps = i64s(vec![2], vec![2, 3]);
        let got = call("Tile", 13, vec![x.clone(), reps], vec![]).unwrap();
        let want: Vec<i64> = [1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4].repeat(2);
        assert_eq!(got, i64s(vec![4, 6], want));
        let idx = i64s(vec![2], vec![-1, 0]);
        let got = call("Gather", 13, vec![x.clone(), idx], vec![("axis", AttrValue::Int(1))]).unwrap();
        assert_eq!(got, i64s(vec![2, 2], vec![2, 1, 4, 3]));
        let got = call("Reshape", 13, vec![x.clone(), i64s(vec![2], vec![0, -1])], vec![]).unwrap();
        assert_eq!(got.shape, vec![2, 2]);
        assert!(call("Reshape", 13, vec![x.clone(), i64s(vec![1], vec![3])], vec![]).is_err());
        let got = call("Unsqueeze", 11, vec![x.clone()], vec![("axes", AttrValue::Ints(vec![0, -1]))]).unwrap();
        assert_eq!(got.shape, vec![1, 2, 2, 1]);
        let got = call("Squeeze", 13, vec![got, i64s(vec![1], vec![-1])], vec![]).unwrap();
        assert_eq!(got.shape, vec![1, 2, 2]);
        let bad = call("Gather", 13, vec![x, i64s(vec![1], vec![2])], vec![]).unwrap_err();
        assert!(bad.contains("out of range"), "{bad}");
    }

    #[test]
    fn range_is_budgeted() {
        let s = |v: i64| HostTensor::scalar(v);
        assert_eq!(call("Range", 11, vec![s(1), s(10), s(3)], vec![]).unwrap(), i64s(vec![3], vec![1, 4, 7]));
        assert_eq!(call("Range", 11, vec![s(5), s(1), s(1)], vec![]).unwrap().shape, vec![0]);
        let huge = call("Range", 11, vec![s(0), s(i64::MAX), s(1)], vec![]).unwrap_err();
        assert!(huge.contains("memory budget"), "{huge}");
        // Past 2^53, counted as integers: as f64 both bounds were one number and the range empty.
        let far = 1i64 << 60;
        let got = call("Range", 11, vec![s(far), s(far + 3), s(1)], vec![]).unwrap();
        assert_eq!(got, i64s(vec![3], vec![far, far + 1, far + 2]));
        let f = |v: f32| HostTensor::scalar(v);
        assert_eq!(call("Range", 11, vec![f(1.0), f(2.0), f(0.3)], vec![]).unwrap().shape, vec![4]);
    }
}

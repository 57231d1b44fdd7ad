//! Rules for ops that address elements by index or position: CumSum, Trilu, Einsum, OneHot,
//! GatherElements/ScatterElements, GatherND/ScatterND, DepthToSpace/SpaceToDepth, NonZero,
//! Unique, Compress, ReverseSequence and CenterCropPad.

use super::{
    axes_or_all, axis_in, exact_div, expect_shape, float_size, invalid, like_input, numel, one_element, outs,
    pin_shapes, ty, unknown_rank, with_dim, MAX_TRACKED, R,
};
use crate::diag::Code;
use crate::dtype::DType;
use crate::ops::{Bounds, Ctx, Out, RuleError, Spread};
use crate::shape::{multi, render, Assumption, Dim, Shape};

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
        // A label named twice in one term takes a diagonal: its sizes there are equal, and a
        // size of 1 does not stretch (numpy and onnxruntime refuse 'ii' over [5, 1]).
        let mut mine: std::collections::BTreeMap<char, &Dim> = Default::default();
        for (j, &ch) in labels.iter().enumerate() {
            let axis = if at.is_some_and(|p| j >= p) { j + ne } else { j };
            let d = &s[axis];
            let (e, n) = sizes.entry(ch).or_insert_with(|| (d.clone(), 0));
            *n += 1;
            if let Some(first) = mine.insert(ch, d) {
                let (_, same) = first.pin(d).ok_or_else(|| {
                    RuleError::Invalid(format!("Einsum: label '{ch}' has sizes {first} and {d} in the term '{t}'"))
                })?;
                assumptions.extend(same.map(|a| (axis, a)));
            } else if *n > 1 {
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
    // onnx's inference, which onnxruntime runs, wants indices of rank 1 or more.
    if ind.is_empty() {
        return invalid("OneHot: scalar indices; they must have rank 1 or more".into());
    }
    let depth = match c.numbers(1).as_deref() {
        // The spec's inference and onnxruntime refuse a negative depth.
        Some([d]) if d.trunc() < 0.0 => return invalid(format!("OneHot: the depth {d} is negative")),
        // Not `as i64`: a depth of 1e30 saturated.
        Some([d]) => float_size(d.trunc()),
        _ => Dim::Unknown,
    };
    let rank = ind.len() + 1;
    let axis = axis_in(c.node.attr_int("axis").unwrap_or(-1), rank, &c.node.op_type)?;
    let mut out = Out::default();
    expect_shape(c, 2, &[Dim::Known(2)], &mut out)?;
    if depth == Dim::Known(0) {
        let msg =
            "OneHot: a depth of 0 gives an empty axis by the spec; onnxruntime refuses it (\"Depth is negative\")";
        out.warnings.push((Code::RuntimeDiffers, msg.into()));
    }
    let mut shape = ind.to_vec();
    shape.insert(axis, depth.clone());
    // Contents, from known indices in range: torch's `repeat` by a head count is a OneHot of a
    // constant index whose on value is the count (YOSO's Tile).
    let n = numel(&shape).filter(|n| *n <= MAX_TRACKED);
    let (inner, d) = (numel(&ind[axis..]), depth.known());
    if let (Some(idx), Some(n), Some(inner), Some(d)) = (c.numbers(0), n, inner, d) {
        let d = d as f64;
        if idx.iter().all(|i| i.fract() == 0.0 && (-d..d).contains(i)) && inner > 0 {
            let depth = d as usize;
            let on = |p: usize| {
                let i = idx[p / (depth * inner) * inner + p % inner];
                (if i < 0.0 { i + d } else { i }) as usize == p / inner % depth
            };
            if let Some([off, on_value]) = c.value(2) {
                out.values = vec![Some((0..n).map(|p| if on(p) { on_value } else { off }.clone()).collect())];
            } else if let Some(&[off, on_value]) = c.float_value(2) {
                out.floats = vec![Some((0..n).map(|p| if on(p) { on_value } else { off }).collect())];
            }
        }
    }
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
    super::indices_fit(c, &x[axis], axis, out)?;
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
    if x.is_empty() || i.is_empty() {
        return invalid("ScatterND needs data and indices of rank 1 or more".into());
    }
    let Some((Some(k), outer)) = i.split_last().map(|(k, outer)| (k.known(), outer)) else { return Ok(out) };
    let Some(inner) = usize::try_from(k).ok().and_then(|k| x.get(k..)) else {
        return invalid(format!("ScatterND: index length {k} for data of rank {}", x.len()));
    };
    // Each index within its axis (the spec; onnxruntime: "invalid indice found").
    let indexed = &x[..x.len() - inner.len()];
    index_tuples(c, indexed, &mut out)?;
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
    let b = c.node.attr_int("batch_dims").unwrap_or(0);
    // onnxruntime: "Integer overflow" on a negative count.
    let Ok(b) = usize::try_from(b) else { return invalid(format!("GatherND: batch_dims {b} is negative")) };
    let (Some(data), Some(ind)) = (c.shape(0), c.shape(1)) else { return outs(vec![ty(dtype, None)]) };
    let Some(last) = ind.last().filter(|_| !data.is_empty()) else {
        return invalid("GatherND needs data and indices of rank 1 or more".into());
    };
    if b >= ind.len() {
        return invalid(format!("GatherND: batch_dims {b} leaves indices of rank {} no index axis", ind.len()));
    }
    let Dim::Known(k) = last else { return outs(vec![ty(dtype, None)]) };
    let k = usize::try_from(*k).unwrap_or(usize::MAX);
    if b.checked_add(k).is_none_or(|n| n > data.len()) {
        return invalid(format!("GatherND: batch_dims {b} + index length {k} exceed the data rank {}", data.len()));
    }
    // The first batch_dims axes of the indices are the data's. The spec has them equal;
    // onnxruntime only needs the data's batch to divide the number of index tuples, so only
    // that is an error here.
    let data_batch = data.get(..b).and_then(|s| Dim::product(s).known());
    if let (Some(d), Some(i)) = (data_batch, Dim::product(&ind[..ind.len() - 1]).known()) {
        if (d == 0 && i != 0) || (d > 0 && i % d != 0) {
            return invalid(format!("GatherND: a data batch of {d} does not divide the {i} index tuples"));
        }
    }
    let mut shape = ind[..ind.len() - 1].to_vec();
    shape.extend(data[b + k..].iter().cloned());
    let mut out = Out { types: smallvec::smallvec![ty(dtype, Some(shape))], ..Out::default() };
    index_tuples(c, &data[b..b + k], &mut out)?;
    Ok(out)
}

/// GatherND's and ScatterND's index tuples (input 1), each index within the axis of `axes` it
/// indexes: by its column's bounds, or by the bounds of all, which only one column reaches.
/// None fits an empty axis, whatever the values fed (onnxruntime: "invalid index found",
/// "indices must be empty when an indexed data dimension has size 0").
fn index_tuples(c: &Ctx, axes: &[Dim], out: &mut Out) -> Result<(), RuleError> {
    let tuples = c.shape(1).and_then(|i| Dim::product(i.split_last()?.1).known());
    if axes.contains(&Dim::Known(0)) && tuples.is_some_and(|n| n > 0) {
        let data = c.shape(0).map_or_else(|| "?".into(), render);
        return invalid(format!("{}: indices into the empty axis of data {data}", c.node.op_type));
    }
    let cols = match (c.spreads.get(1).copied().flatten(), c.between(1)) {
        (Some(Spread::Columns(cols)), _) if cols.len() == axes.len() => cols.clone(),
        (_, Some(all)) if axes.len() == 1 => vec![all],
        (_, Some(all)) => vec![Bounds { tight: false, ..all }; axes.len()],
        (_, None) => {
            out.unbounded = Some(1);
            return Ok(());
        }
    };
    for (col, size) in cols.into_iter().zip(axes) {
        super::within(c, col, size, 0, out)?;
    }
    Ok(())
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
        // Every element alike (`ConstantOfShape([n])`, torch's `arange`): all of them or none.
        _ => match (c.fill(0), c.shape(0)) {
            (Some(x), Some(s)) if x != 0.0 => Dim::product(s),
            (Some(_), Some(_)) => Dim::Known(0),
            _ => Dim::Unknown,
        },
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
    let axis = c.node.attr_int("axis").map(|a| axis_in(a, x.len(), &c.node.op_type)).transpose()?;
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
        // Without them: no slices are none distinct, one slice or empty ones are one.
        _ => {
            let (len, slice) = match axis {
                Some(a) => (x[a].clone(), Dim::product(&x[..a]).mul(&Dim::product(&x[a + 1..]))),
                None => (Dim::product(x), Dim::Known(1)),
            };
            match (len.known(), slice.known()) {
                (Some(0), _) => Dim::Known(0),
                (Some(1), _) | (_, Some(0)) => Dim::Known(1),
                _ => Dim::Unknown,
            }
        }
    };
    let (y, inverse) = match axis {
        Some(a) => (with_dim(x, a, count.clone()), x[a].clone()),
        None => (vec![count.clone()], Dim::product(x)),
    };
    let mut out = outs(vec![
        ty(dtype, Some(y)),
        ty(i64t, Some(vec![count.clone()])),
        ty(i64t, Some(vec![inverse])),
        ty(i64t, Some(vec![count])),
    ])?;
    // onnxruntime 1.32 aborts the process where the sizes after the axis hold nothing and
    // those before it and the axis do ([3, 0] along axis 0); [0, 3, 0] along 1 runs.
    if let Some(a) = axis {
        let none = |d: Dim| d.known() == Some(0);
        if none(Dim::product(&x[a + 1..])) && !none(Dim::product(&x[..=a])) {
            let msg = format!("Unique: the slices along axis {a} are empty after it; onnxruntime refuses them");
            out.warnings.push((Code::RuntimeDiffers, msg));
        }
    }
    Ok(out)
}

pub fn compress(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let axis = c.node.attr_int("axis").map(|a| axis_in(a, x.len(), &c.node.op_type)).transpose()?;
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

pub fn center_crop_pad(c: &Ctx) -> R {
    let dtype = c.dtype(0);
    let Some(x) = c.shape(0) else { return outs(vec![ty(dtype, None)]) };
    let Some(v) = c.value(1) else { return outs(vec![ty(dtype, Some(unknown_rank(x.len())))]) };
    let axes = axes_or_all(c.node.attr_ints("axes"), x.len(), &c.node.op_type)?;
    if axes.len() != v.len() {
        return invalid("CenterCropPad: shape and axes differ in length".into());
    }
    let mut shape = x.to_vec();
    for (k, a) in axes.iter().enumerate() {
        shape[*a] = v[k].clone();
    }
    let mut out = outs(vec![ty(dtype, Some(shape))])?;
    super::tensor::scalar_pad(c, x.len(), &mut out);
    Ok(out)
}

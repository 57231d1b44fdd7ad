//! Shape arithmetic that inference and the executor share: the output shapes of Reshape,
//! Flatten, Squeeze, Unsqueeze, Concat, Gather, Tile, Shape and Gemm, and what a Slice keeps
//! of an axis. Written once, generic over the size type as the broadcast rules are (`Dim` in
//! inference, `i64` in the executor), so that the two cannot disagree. An `Err` is the reason
//! the op is invalid, without the op's name.

use super::dim::{Assumption, Dim};

/// A size shape arithmetic works on: `Dim` in inference, `i64` in the executor.
pub trait Size: Clone + PartialEq + std::fmt::Display {
    /// The size `k`.
    fn of(k: i64) -> Self;
    /// The size, when known.
    fn known(&self) -> Option<i64>;
    /// A size nothing is known of, where the type has one (`Dim::Unknown`).
    fn unknown() -> Option<Self>;
    /// `self + other`; `None` where it overflows.
    fn plus(&self, other: &Self) -> Option<Self>;
    /// `self * other`; `None` where it overflows.
    fn times(&self, other: &Self) -> Option<Self>;
    /// One size for two that must be equal, with the side condition that makes them so;
    /// `None` when they differ.
    fn pin(&self, other: &Self) -> Option<(Self, Option<Assumption>)>;
    /// The product of `all` over the product of `some` (Reshape's `-1`); `None` when it is
    /// known not to be a whole number of elements.
    fn quotient(all: &[Self], some: &[Self]) -> Option<Self>;
}

impl Size for i64 {
    fn of(k: i64) -> i64 {
        k
    }
    fn known(&self) -> Option<i64> {
        Some(*self)
    }
    fn unknown() -> Option<i64> {
        None
    }
    fn plus(&self, other: &i64) -> Option<i64> {
        self.checked_add(*other)
    }
    fn times(&self, other: &i64) -> Option<i64> {
        self.checked_mul(*other)
    }
    fn pin(&self, other: &i64) -> Option<(i64, Option<Assumption>)> {
        (self == other).then_some((*self, None))
    }
    fn quotient(all: &[i64], some: &[i64]) -> Option<i64> {
        let (n, d) = (product(all)?, product(some)?);
        (d != 0 && n % d == 0).then(|| n / d)
    }
}

impl Size for Dim {
    fn of(k: i64) -> Dim {
        Dim::Known(k)
    }
    fn known(&self) -> Option<i64> {
        Dim::known(self)
    }
    fn unknown() -> Option<Dim> {
        Some(Dim::Unknown)
    }
    fn plus(&self, other: &Dim) -> Option<Dim> {
        Some(self.add(other))
    }
    fn times(&self, other: &Dim) -> Option<Dim> {
        Some(self.mul(other))
    }
    fn pin(&self, other: &Dim) -> Option<(Dim, Option<Assumption>)> {
        Dim::pin(self, other)
    }
    /// Equal factors cancelled first, so that symbols survive (`[b, 4*s] / [4]` is `b*s`);
    /// unknown where it cannot be told.
    fn quotient(all: &[Dim], some: &[Dim]) -> Option<Dim> {
        let mut num: Vec<&Dim> = all.iter().collect();
        let mut den: Vec<&Dim> = Vec::new();
        for d in some {
            if let Some(p) = num.iter().position(|n| *n == d && !matches!(n, Dim::Unknown)) {
                num.remove(p);
            } else {
                den.push(d);
            }
        }
        let (n, d) = (Dim::product(num), Dim::product(den));
        Some(match (&n, &d) {
            (Dim::Known(a), Dim::Known(b)) if *b == 0 || a % b != 0 => return None,
            (Dim::Known(a), Dim::Known(b)) => Dim::Known(a / b),
            (_, Dim::Known(1)) => n,
            (Dim::Term(_), Dim::Known(b)) if *b > 0 => n.div_floor(&d),
            // `[b, 4, s, 8]` to `[b*4, -1, 8]`: `b*s*4 / (b*4)` is `s`. Where the divisor does
            // not divide, a `floor(n/d)` term, whose divisibility Reshape's rule requires.
            (Dim::Term(_) | Dim::Known(_), Dim::Term(_)) => n.div_floor(&d),
            _ => Dim::Unknown,
        })
    }
}

/// The product of `dims` (1 for none); `None` where it overflows.
pub fn product<D: Size>(dims: &[D]) -> Option<D> {
    dims.iter().try_fold(D::of(1), |acc, d| acc.times(d))
}

/// Axis `axis` of a rank-`rank` tensor, negative counting from the end.
pub fn axis(axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    let a = if axis < 0 { axis.saturating_add(r) } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(format!("axis {axis} is outside the {rank} axes of its input"))
    }
}

/// Reshape of `data` (when its shape is known) to `target`: a 0 copies the input's size at
/// that axis unless `allow_zero`; one -1 takes what the other sizes leave. Gives the shape and
/// the axis of the -1.
pub fn reshape<D: Size>(data: Option<&[D]>, target: &[D], allow_zero: bool) -> Result<(Vec<D>, Option<usize>), String> {
    let mut shape = Vec::with_capacity(target.len());
    let mut minus = None;
    for (i, d) in target.iter().enumerate() {
        match d.known() {
            Some(0) if !allow_zero => match data {
                Some(data) => match data.get(i) {
                    Some(x) => shape.push(x.clone()),
                    None => return Err(format!("0 at axis {i} copies an axis the input lacks")),
                },
                None => shape.push(D::unknown().ok_or("no input shape")?),
            },
            Some(-1) => {
                if minus.replace(i).is_some() {
                    return Err("more than one -1".into());
                }
                shape.push(D::of(1));
            }
            Some(k) if k < -1 => return Err(format!("negative size {k}")),
            _ => shape.push(d.clone()),
        }
    }
    let Some(data) = data else {
        if let Some(m) = minus {
            shape[m] = D::unknown().ok_or("no input shape")?;
        }
        return Ok((shape, minus));
    };
    match minus {
        Some(m) => {
            let others: Vec<D> = shape.iter().enumerate().filter(|(i, _)| *i != m).map(|(_, d)| d.clone()).collect();
            // Any size over 0 fills 0 elements; onnxruntime refuses it.
            if others.iter().any(|d| d.known() == Some(0)) {
                return Err("-1 beside a size of 0 cannot be told".into());
            }
            shape[m] = D::quotient(data, &others).ok_or_else(|| {
                format!(
                    "-1 cannot take the rest of {} elements: the other sizes hold {}",
                    show(product(data)),
                    show(product(&others))
                )
            })?;
        }
        None => {
            let (n, m) = (product(data), product(&shape));
            if let (Some(a), Some(b)) = (n.as_ref().and_then(D::known), m.as_ref().and_then(D::known)) {
                if a != b {
                    return Err(format!("{a} elements cannot take shape {}", super::render(&shape)));
                }
            }
        }
    }
    Ok((shape, minus))
}

fn show<D: Size>(d: Option<D>) -> String {
    d.map_or_else(|| "too many".into(), |d| d.to_string())
}

/// Flatten at `axis` into two sizes.
pub fn flatten<D: Size>(data: &[D], axis: i64) -> Result<[D; 2], String> {
    let r = data.len() as i64;
    let a = if axis < 0 { axis.saturating_add(r) } else { axis };
    if !(0..=r).contains(&a) {
        return Err(format!("axis {axis} is outside 0..={r}"));
    }
    let (x, y) = data.split_at(a as usize);
    Ok([product(x).ok_or("the output shape overflows")?, product(y).ok_or("the output shape overflows")?])
}

/// Squeeze: drops the listed axes, each of size 1, or every axis of size 1. `Ok(None)` where
/// that cannot be told (no axes and a size not known).
pub fn squeeze<D: Size>(data: &[D], axes: Option<&[i64]>) -> Result<Option<Vec<D>>, String> {
    let mut dropped = vec![false; data.len()];
    match axes {
        Some(list) => {
            for &a in list {
                let i = axis(a, data.len())?;
                match data[i].known() {
                    Some(k) if k != 1 => return Err(format!("axis {i} has size {k}, not 1")),
                    _ => dropped[i] = true,
                }
            }
        }
        None => {
            for (i, d) in data.iter().enumerate() {
                match d.known() {
                    Some(k) => dropped[i] = k == 1,
                    None => return Ok(None),
                }
            }
        }
    }
    Ok(Some(data.iter().zip(&dropped).filter(|(_, x)| !**x).map(|(d, _)| d.clone()).collect()))
}

/// Unsqueeze: size-1 axes at the listed output positions.
pub fn unsqueeze<D: Size>(data: &[D], axes: &[i64]) -> Result<Vec<D>, String> {
    let rank = data.len() + axes.len();
    // Masks, not lists searched per axis: both lengths come from the file.
    let mut placed = vec![false; rank];
    for &a in axes {
        let i = axis(a, rank)?;
        if std::mem::replace(&mut placed[i], true) {
            return Err(format!("axis {i} is listed twice"));
        }
    }
    let mut rest = data.iter();
    Ok(placed.iter().map(|p| if *p { D::of(1) } else { rest.next().cloned().unwrap_or_else(|| D::of(1)) }).collect())
}

/// A shape with the side conditions it takes, each with the output axis it concerns.
pub type Conditioned<D> = (Vec<D>, Vec<(usize, Assumption)>);

/// Concat of `shapes` along `axis`: equal sizes off the axis (with the side conditions that
/// make them so, by output axis), summed on it.
pub fn concat<D: Size>(shapes: &[&[D]], axis_attr: i64) -> Result<Conditioned<D>, String> {
    let first = shapes.first().ok_or("there are no inputs")?;
    let rank = first.len();
    let at = axis(axis_attr, rank)?;
    let mut shape = first.to_vec();
    let mut assumptions = Vec::new();
    for s in &shapes[1..] {
        if s.len() != rank {
            return Err(format!("inputs have ranks {rank} and {}", s.len()));
        }
        for (i, d) in s.iter().enumerate() {
            if i == at {
                shape[i] = shape[i].plus(d).ok_or("the output shape overflows")?;
            } else {
                let (pinned, assumed) =
                    shape[i].pin(d).ok_or_else(|| format!("inputs differ at axis {i}: {} and {d}", shape[i]))?;
                assumptions.extend(assumed.map(|a| (i, a)));
                shape[i] = pinned;
            }
        }
    }
    Ok((shape, assumptions))
}

/// Gather along `axis`: the data's axes around it, the indices' axes in its place.
pub fn gather<D: Size>(data: &[D], indices: &[D], axis_attr: i64) -> Result<Vec<D>, String> {
    if data.is_empty() {
        return Err("the data must have rank 1 or more".into());
    }
    let a = axis(axis_attr, data.len())?;
    Ok(data[..a].iter().chain(indices).chain(&data[a + 1..]).cloned().collect())
}

/// Tile: each size times its repeat count.
pub fn tile<D: Size>(data: &[D], repeats: &[D]) -> Result<Vec<D>, String> {
    if repeats.len() != data.len() {
        return Err(format!("{} repeats for rank {}", repeats.len(), data.len()));
    }
    // The spec's inference and onnxruntime refuse a negative repeat, over any size: a
    // symbolic `n` times -2 is no size either.
    if let Some(r) = repeats.iter().find_map(|r| r.known().filter(|r| *r < 0)) {
        return Err(format!("the repeat {r} is negative"));
    }
    data.iter().zip(repeats).map(|(d, r)| d.times(r).ok_or_else(|| "the output shape overflows".into())).collect()
}

/// Gemm's output `[M, N]` from A and B, each transposed first where asked; their inner sizes
/// must agree where both are known.
pub fn gemm<D: Size>(a: &[D], b: &[D], trans_a: bool, trans_b: bool) -> Result<[D; 2], String> {
    let ([a0, a1], [b0, b1]) = (a, b) else {
        return Err(format!("A and B must be matrices, not of ranks {} and {}", a.len(), b.len()));
    };
    let (m, ka) = if trans_a { (a1, a0) } else { (a0, a1) };
    let (kb, n) = if trans_b { (b1, b0) } else { (b0, b1) };
    match (ka.known(), kb.known()) {
        (Some(x), Some(y)) if x != y => Err(format!("the inner sizes differ: {x} and {y}")),
        _ => Ok([m.clone(), n.clone()]),
    }
}

/// Range's element count for integers, exactly: `max(ceil((limit - start) / delta), 0)`;
/// `None` for a delta of 0.
pub fn range_count(start: i128, limit: i128, delta: i128) -> Option<i128> {
    if delta == 0 {
        return None;
    }
    let span = limit - start;
    let q = span / delta;
    // Division truncates toward zero; a remainder of the quotient's sign rounds it up.
    let ceil = if span % delta != 0 && (span < 0) == (delta < 0) { q + 1 } else { q };
    Some(ceil.max(0))
}

/// Range's element count for floating-point bounds; `None` for a delta of 0 or a count that
/// is not a number.
pub fn range_count_f64(start: f64, limit: f64, delta: f64) -> Option<f64> {
    let n = ((limit - start) / delta).ceil();
    (delta != 0.0 && !n.is_nan()).then(|| n.max(0.0))
}

/// The axes `start..end` of a rank-`rank` shape that Shape (opset 15) returns, each bound
/// negative counting from the end and clamped; empty when `end` is before `start`.
pub fn shape_range(rank: usize, start: Option<i64>, end: Option<i64>) -> std::ops::Range<usize> {
    let r = rank as i64;
    let clamp = |v: i64| (if v < 0 { v.saturating_add(r) } else { v }).clamp(0, r) as usize;
    let (s, e) = (clamp(start.unwrap_or(0)), clamp(end.unwrap_or(r)));
    s..e.max(s)
}

/// The indices a slice `start:end:step` keeps of an axis of `size` elements, clamped as numpy
/// and ONNX clamp them: the first index and how many there are. `None` for a step of 0 or a
/// negative size. An empty result has first index 0.
pub fn slice_range(size: i64, start: i64, end: i64, step: i64) -> Option<(i64, i64)> {
    if step == 0 || size < 0 {
        return None;
    }
    let fix = |v: i64| if v < 0 { v.saturating_add(size) } else { v };
    let (first, end) = if step > 0 {
        (fix(start).clamp(0, size), fix(end).clamp(0, size))
    } else if size > 0 {
        (fix(start).clamp(0, size - 1), fix(end).clamp(-1, size - 1))
    } else {
        return Some((0, 0));
    };
    // The indices first, first+step, ... strictly before `end`: the span over the step,
    // rounded up, computed so that no step (i64::MIN included) overflows.
    let span = if step > 0 { end - first } else { first - end };
    if span <= 0 {
        return Some((0, 0));
    }
    let count = (span.unsigned_abs() - 1) / step.unsigned_abs() + 1;
    Some((first, count as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Dim {
        Dim::parse(text)
    }

    #[test]
    fn reshape_follows_the_spec_on_known_sizes() {
        // The examples of the ONNX Reshape page, on a [2, 3, 4] input.
        let data = [2i64, 3, 4];
        let go = |t: &[i64], z| reshape(Some(&data), t, z).map(|(s, _)| s);
        assert_eq!(go(&[4, 2, 3], false), Ok(vec![4, 2, 3]));
        assert_eq!(go(&[2, -1], false), Ok(vec![2, 12]));
        assert_eq!(go(&[0, 4, 3], false), Ok(vec![2, 4, 3]));
        assert_eq!(go(&[-1], false), Ok(vec![24]));
        assert!(go(&[-1, -1], false).is_err());
        assert!(go(&[5, -1], false).is_err(), "24 elements do not divide by 5");
        assert!(go(&[4, 5], false).is_err());
        assert!(go(&[2, -2, 12], false).is_err());
        assert!(go(&[0, 0, 0, 0], false).is_err(), "a 0 copies an axis the input lacks");
        // Zero sizes: with allowzero a 0 is a size, and a -1 beside it cannot be told.
        let empty = [0i64, 3];
        assert_eq!(reshape(Some(&empty), &[3, 0], true).map(|r| r.0), Ok(vec![3, 0]));
        assert!(reshape(Some(&empty), &[0, -1], true).is_err());
        assert_eq!(
            reshape(Some(&empty), &[0, -1], false).map(|r| r.0),
            Err("-1 beside a size of 0 cannot be told".to_string())
        );
        // Symbolic sizes agree: a 0 beside -1 is no more cancelled out of [2, 0] than divided.
        let dims = [Dim::Known(2), Dim::Known(0)];
        assert!(reshape(Some(&dims), &[Dim::Known(0), Dim::Known(-1)], true).is_err());
        assert!(reshape(Some(&[Dim::Known(0), d("n")]), &[Dim::Known(0), Dim::Known(-1)], false).is_err());
    }

    #[test]
    fn reshape_keeps_symbols_and_agrees_with_the_integers_where_known() {
        let data = [d("batch"), d("seq"), Dim::Known(768)];
        let target = [Dim::Known(0), Dim::Known(0), Dim::Known(12), Dim::Known(-1)];
        let (shape, minus) = reshape(Some(&data), &target, false).unwrap();
        assert_eq!(shape, vec![d("batch"), d("seq"), Dim::Known(12), Dim::Known(64)]);
        assert_eq!(minus, Some(3));
        let (shape, _) = reshape(Some(&data), &[Dim::Known(-1), Dim::Known(768)], false).unwrap();
        assert_eq!(shape, vec![d("batch*seq"), Dim::Known(768)]);
        // Without the input's shape, what a 0 or -1 stands for is unknown.
        let (shape, _) = reshape(None, &[Dim::Known(0), Dim::Known(-1)], false).unwrap();
        assert_eq!(shape, vec![Dim::Unknown, Dim::Unknown]);
        for t in [[4i64, -1], [0, 12], [-1, 6], [3, 3]] {
            let ints = reshape(Some(&[2i64, 3, 4][..]), &t, false).map(|r| r.0);
            let dims = reshape(Some(&[2, 3, 4].map(Dim::Known)[..]), &t.map(Dim::Known), false).map(|r| r.0);
            assert_eq!(ints.map(|s| s.into_iter().map(Dim::Known).collect::<Vec<_>>()), dims, "{t:?}");
        }
    }

    #[test]
    fn squeeze_unsqueeze_flatten_concat_gather_tile() {
        assert_eq!(squeeze(&[1i64, 3, 1], None), Ok(Some(vec![3])));
        assert_eq!(squeeze(&[1i64, 3, 1], Some(&[-1])), Ok(Some(vec![1, 3])));
        assert!(squeeze(&[1i64, 3], Some(&[1])).is_err());
        assert!(squeeze(&[1i64, 3], Some(&[2])).is_err());
        assert_eq!(squeeze(&[d("n"), Dim::Known(1)], None), Ok(None), "n may be 1");
        assert_eq!(unsqueeze(&[3i64, 4], &[0, -1]), Ok(vec![1, 3, 4, 1]));
        assert!(unsqueeze(&[3i64], &[0, 0]).is_err());
        assert!(unsqueeze(&[3i64], &[2]).is_err());
        assert_eq!(flatten(&[2i64, 3, 4], 0), Ok([1, 24]));
        assert_eq!(flatten(&[2i64, 3, 4], -1), Ok([6, 4]));
        assert!(flatten(&[2i64, 3], 3).is_err());
        assert_eq!(concat(&[&[2i64, 3][..], &[2, 5]], 1).map(|r| r.0), Ok(vec![2, 8]));
        assert!(concat(&[&[2i64, 3][..], &[3, 3]], 1).is_err());
        assert!(concat(&[&[2i64, 3][..], &[2]], 0).is_err());
        let (shape, assumed) = concat(&[&[d("b"), Dim::Known(3)][..], &[Dim::Known(4), Dim::Known(5)]], 1).unwrap();
        assert_eq!(shape, vec![Dim::Known(4), Dim::Known(8)]);
        assert_eq!(assumed.len(), 1, "b must be 4");
        assert_eq!(gather(&[5i64, 6, 7], &[2, 3], 1), Ok(vec![5, 2, 3, 7]));
        assert!(gather::<i64>(&[], &[2], 0).is_err());
        assert_eq!(tile(&[2i64, 3], &[3, 1]), Ok(vec![6, 3]));
        assert!(tile(&[2i64, 3], &[3]).is_err());
        assert!(tile(&[i64::MAX, 3], &[2, 1]).is_err());
        assert_eq!(gemm(&[3i64, 4], &[4, 5], false, false), Ok([3, 5]));
        assert_eq!(gemm(&[4i64, 3], &[5, 4], true, true), Ok([3, 5]));
        assert!(gemm(&[3i64, 4], &[5, 4], false, false).is_err());
        assert!(gemm(&[3i64, 4, 1], &[4, 5], false, false).is_err());
        assert_eq!(gemm(&[d("m"), d("k")], &[Dim::Known(4), d("n")], false, false), Ok([d("m"), d("n")]));
        assert_eq!(range_count(0, 10, 3), Some(4));
        assert_eq!(range_count(10, 0, -3), Some(4));
        assert_eq!(range_count(10, 0, 3), Some(0));
        assert_eq!(range_count(1 << 60, (1 << 60) + 3, 1), Some(3), "exact where f64 is not");
        assert_eq!(range_count(0, 1, 0), None);
        assert_eq!(range_count_f64(1.0, 2.0, 0.3), Some(4.0));
        assert_eq!(range_count_f64(2.0, 1.0, 0.3), Some(0.0));
        assert_eq!(range_count_f64(0.0, 1.0, 0.0), None);
        assert_eq!(shape_range(4, Some(-3), None), 1..4);
        assert_eq!(shape_range(4, Some(3), Some(1)), 3..3);
        assert_eq!(shape_range(4, Some(-9), Some(9)), 0..4);
    }

    /// The indices the ONNX Slice spec's words give, enumerated: a negative bound counts from
    /// the end; starts are clamped to [0, size] for positive steps and [0, size-1] for
    /// negative ones, ends to [0, size] and [-1, size-1].
    fn spec(size: i64, start: i64, end: i64, step: i64) -> Vec<i64> {
        let norm = |v: i64, lo: i64, hi: i64| (if v < 0 { v + size } else { v }).max(lo).min(hi);
        let (s, e) = if step > 0 {
            (norm(start, 0, size), norm(end, 0, size))
        } else {
            (norm(start, 0, size - 1), norm(end, -1, size - 1))
        };
        let mut out = Vec::new();
        let mut i = s;
        while (step > 0 && i < e) || (step < 0 && i > e) {
            out.push(i);
            i += step;
        }
        out
    }

    #[test]
    fn matches_the_spec_on_small_axes_empty_ones_included() {
        for size in 0..6 {
            for start in -8..8 {
                for end in -8..8 {
                    for step in [-3, -2, -1, 1, 2, 3] {
                        let want = spec(size, start, end, step);
                        let (first, count) = slice_range(size, start, end, step).unwrap();
                        let got: Vec<i64> = (0..count).map(|k| first + k * step).collect();
                        assert_eq!(got, want, "size {size}, {start}:{end}:{step}");
                    }
                }
            }
        }
    }

    #[test]
    fn extreme_bounds_and_steps_do_not_overflow() {
        assert_eq!(slice_range(5, 0, i64::MAX, i64::MAX), Some((0, 1)));
        assert_eq!(slice_range(5, i64::MAX, i64::MIN, i64::MIN), Some((4, 1)));
        assert_eq!(slice_range(0, -1, i64::MIN, -1), Some((0, 0)));
        assert_eq!(slice_range(i64::MAX, 0, i64::MAX, 1), Some((0, i64::MAX)));
        assert_eq!(slice_range(3, 0, 3, 0), None);
    }
}

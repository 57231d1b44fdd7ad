//! The broadcasting rules, each written once: multidirectional (numpy, N-ary), unidirectional
//! (PRelu's slope, Gemm's C), Expand, XLA's `broadcast_in_dim` and the legacy opset<7 `axis`
//! form built from it. Generic over the dimension type so that inference (`Dim`) and the
//! executor (`usize`) share one rule.

use super::dim::{Assumption, Dim};
use super::term::{self, Term};

/// A dimension type the broadcast rule can work on.
pub trait BroadcastDim: Clone + PartialEq + std::fmt::Debug {
    /// The size 1, the identity of broadcasting.
    fn one() -> Self;

    /// The size that `dims` (the sizes of one output axis, one per input that has the axis)
    /// broadcast to, with the side conditions that this needs; `None` when they clash.
    fn axis(dims: &[&Self]) -> Option<(Self, Vec<Assumption>)>;

    /// The side conditions under which `from` stretches to `target` without changing it
    /// (unidirectional broadcasting); `None` when it cannot.
    fn stretch(from: &Self, target: &Self) -> Option<Vec<Assumption>>;
}

impl BroadcastDim for usize {
    fn one() -> usize {
        1
    }

    fn axis(dims: &[&usize]) -> Option<(usize, Vec<Assumption>)> {
        let out =
            dims.iter().map(|d| **d).filter(|&d| d != 1).try_fold(1, |out, d| (out == 1 || out == d).then_some(d))?;
        Some((out, Vec::new()))
    }

    fn stretch(from: &usize, target: &usize) -> Option<Vec<Assumption>> {
        (*from == 1 || from == target).then(Vec::new)
    }
}

impl BroadcastDim for Dim {
    fn one() -> Dim {
        Dim::Known(1)
    }

    /// A known size other than 1 wins and each term must be 1 or that size; else an unknown
    /// size wins; else one term, or the broadcast of several, which must each be 1 or equal.
    /// `multi` takes axes whose sizes agree before it asks.
    fn axis(dims: &[&Dim]) -> Option<(Dim, Vec<Assumption>)> {
        let mut known: Option<i64> = None;
        let mut terms: smallvec::SmallVec<[&Term; 4]> = smallvec::SmallVec::new();
        let mut unknown = false;
        for d in dims {
            match d {
                Dim::Known(1) => {}
                Dim::Known(n) => match known {
                    Some(k) if k != *n => return None,
                    _ => known = Some(*n),
                },
                Dim::Term(t) => terms.push(t),
                Dim::Unknown => unknown = true,
            }
        }
        terms.sort_unstable();
        terms.dedup();
        // `max(u, 0)` beside `u` is `u`: `u` sizes a tensor here, so it is not negative.
        let all = terms.clone();
        terms.retain(|t| !t.clamped_of().is_some_and(|u| all.contains(&u)));
        if let Some(k) = known {
            // A known size other than 1 wins; each term must be 1 or that size.
            let sizes = |k| if k == 1 { vec![1] } else { vec![1, k] };
            let assume = terms.into_iter().map(|t| Assumption::OneOf { sym: t.clone(), sizes: sizes(k) }).collect();
            return Some((Dim::Known(k), assume));
        }
        if unknown {
            return Some((Dim::Unknown, Vec::new()));
        }
        match terms.as_slice() {
            [] => Some((Dim::Known(1), Vec::new())),
            [one] => Some((Dim::Term((*one).clone()), Vec::new())),
            many => {
                let assume = Assumption::EqualOrOne(many.iter().map(|t| (*t).clone()).collect());
                Some((term::broadcast(many), vec![assume]))
            }
        }
    }

    fn stretch(from: &Dim, target: &Dim) -> Option<Vec<Assumption>> {
        match (from, target) {
            (Dim::Known(1) | Dim::Unknown, _) | (_, Dim::Unknown) => Some(Vec::new()),
            (a, b) if a == b => Some(Vec::new()),
            (Dim::Known(_), Dim::Known(_)) => None,
            (Dim::Term(s), Dim::Known(k)) => Some(vec![Assumption::OneOf { sym: s.clone(), sizes: vec![1, *k] }]),
            (Dim::Known(k), Dim::Term(t)) => Some(vec![Assumption::OneOf { sym: t.clone(), sizes: vec![*k] }]),
            (Dim::Term(s), Dim::Term(t)) => Some(vec![Assumption::Stretches { from: s.clone(), to: t.clone() }]),
        }
    }
}

/// A broadcast result: the output shape and the side conditions it assumed, each with the
/// output axis it was needed at.
#[derive(Clone, Debug, PartialEq)]
pub struct Broadcast<D> {
    pub shape: Vec<D>,
    pub assumptions: Vec<(usize, Assumption)>,
}

/// Why shapes do not broadcast.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BroadcastError<D> {
    /// At output `axis`, these (input index, size) pairs cannot be stretched to one size.
    Clash { axis: usize, sizes: Vec<(usize, D)> },
    /// Input `input` has more dims (`rank`) than the shape it must stretch to (`target`).
    Rank { input: usize, rank: usize, target: usize },
    /// The broadcast dimensions are not strictly increasing or lie outside the output rank.
    BadDims { dims: Vec<i64>, rank: usize },
}

/// Multidirectional (numpy) broadcasting of any number of shapes: the rule of the Array API
/// standard, generalised to N inputs (constraint C1 of the N-ary `Broadcast` operator).
///
/// Shapes are aligned at their last axis; each output axis takes the size that every input
/// having that axis can be stretched to (its own size, or 1).
pub fn multi<D: BroadcastDim>(shapes: &[&[D]]) -> Result<Broadcast<D>, BroadcastError<D>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let one = D::one();
    let mut shape = Vec::with_capacity(rank);
    let mut assumptions = Vec::new();
    let mut column: smallvec::SmallVec<[&D; 4]> = smallvec::SmallVec::new();
    for axis in 0..rank {
        if let Some(d) = agreed(shapes, rank, axis, &one) {
            shape.push(d.clone());
            continue;
        }
        column.clear();
        column.extend(shapes.iter().filter_map(|s| aligned(s, rank, axis)));
        let Some((d, assume)) = D::axis(&column) else {
            return Err(clash(shapes, rank, axis));
        };
        shape.push(d);
        assumptions.extend(assume.into_iter().map(|a| (axis, a)));
    }
    Ok(Broadcast { shape, assumptions })
}

/// The size every input having output axis `axis` agrees on, when each holds `one` or that
/// same size: then it is the axis's size and needs no side condition, which is what
/// [`BroadcastDim::axis`] finds with more work. Most axes of most nodes are so.
fn agreed<'a, D: PartialEq>(shapes: &[&'a [D]], rank: usize, axis: usize, one: &'a D) -> Option<&'a D> {
    let mut size = one;
    for d in shapes.iter().filter_map(|s| aligned(s, rank, axis)) {
        if d == one || d == size {
            continue;
        }
        if size != one {
            return None;
        }
        size = d;
    }
    Some(size)
}

/// The size of output axis `axis` in `shape` aligned right to `rank` dims, if it has one.
fn aligned<D>(shape: &[D], rank: usize, axis: usize) -> Option<&D> {
    (axis + shape.len()).checked_sub(rank).and_then(|i| shape.get(i))
}

fn clash<D: BroadcastDim>(shapes: &[&[D]], rank: usize, axis: usize) -> BroadcastError<D> {
    let one = D::one();
    let sizes = shapes
        .iter()
        .enumerate()
        .filter_map(|(i, s)| aligned(s, rank, axis).filter(|d| **d != one).map(|d| (i, d.clone())))
        .collect();
    BroadcastError::Clash { axis, sizes }
}

/// Unidirectional broadcasting: `from` (input `input`) stretches to `target`, which does not
/// change. The result is `target` and the side conditions assumed.
pub fn uni<D: BroadcastDim>(target: &[D], from: &[D], input: usize) -> Result<Broadcast<D>, BroadcastError<D>> {
    if from.len() > target.len() {
        return Err(BroadcastError::Rank { input, rank: from.len(), target: target.len() });
    }
    let offset = target.len() - from.len();
    let mut assumptions = Vec::new();
    for (i, f) in from.iter().enumerate() {
        let axis = offset + i;
        let Some(assume) = D::stretch(f, &target[axis]) else {
            let sizes = vec![(0, target[axis].clone()), (input, f.clone())];
            return Err(BroadcastError::Clash { axis, sizes });
        };
        assumptions.extend(assume.into_iter().map(|a| (axis, a)));
    }
    Ok(Broadcast { shape: target.to_vec(), assumptions })
}

/// Expand's rule: the input and the requested shape broadcast both ways.
pub fn expand<D: BroadcastDim>(input: &[D], target: &[D]) -> Result<Broadcast<D>, BroadcastError<D>> {
    multi(&[input, target])
}

/// XLA's `broadcast_in_dim` ("InDim" broadcasting): places dim `i` of `low` at output axis
/// `dims[i]` of a rank-`rank` shape and fills the other axes with 1. `dims` must be strictly
/// increasing and inside `0..rank`.
pub fn in_dim<D: BroadcastDim>(low: &[D], rank: usize, dims: &[i64]) -> Result<Vec<D>, BroadcastError<D>> {
    let bad = || BroadcastError::BadDims { dims: dims.to_vec(), rank };
    if dims.len() != low.len() || dims.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad());
    }
    let mut out = vec![D::one(); rank];
    for (d, &at) in low.iter().zip(dims) {
        let at = usize::try_from(at).ok().filter(|&a| a < rank).ok_or_else(bad)?;
        out[at] = d.clone();
    }
    Ok(out)
}

/// The axes of a rank-`a` shape that a rank-`b` operand's dims land on in the legacy form:
/// `axis..axis+b`, by default the trailing `b` axes; `None` when that run does not lie inside
/// (the run must start inside `a` even when `b` is a scalar and the run is empty).
pub fn legacy_dims(a: usize, b: usize, axis: Option<i64>) -> Option<Vec<i64>> {
    let last = (a as i64).checked_sub(b as i64).filter(|l| *l >= 0)?;
    let start = axis.unwrap_or(last);
    (0..=last).contains(&start).then(|| (start..start + b as i64).collect())
}

/// The legacy (opset < 7) `broadcast=1` form: `b` matches a contiguous run of `a`'s axes
/// starting at `axis` (by default the trailing axes), which is `broadcast_in_dim` with
/// dimensions `axis..axis+rank(b)`, and then stretches to `a` unidirectionally. The output is
/// `a`'s shape.
pub fn legacy<D: BroadcastDim>(a: &[D], b: &[D], axis: Option<i64>) -> Result<Broadcast<D>, BroadcastError<D>> {
    if b.len() > a.len() {
        return Err(BroadcastError::Rank { input: 1, rank: b.len(), target: a.len() });
    }
    let Some(dims) = legacy_dims(a.len(), b.len(), axis) else {
        let start = axis.unwrap_or(0);
        let dims = (0..b.len().max(1) as i64).map(|i| start.saturating_add(i)).collect();
        return Err(BroadcastError::BadDims { dims, rank: a.len() });
    };
    let placed = in_dim(b, a.len(), &dims)?;
    uni(a, &placed, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dims: &[usize]) -> Vec<usize> {
        dims.to_vec()
    }

    #[test]
    fn numpy_basics() {
        let out = multi::<usize>(&[&[8, 1, 6, 1], &[7, 1, 5]]).unwrap();
        assert_eq!(out.shape, shape(&[8, 7, 6, 5]));
        assert_eq!(multi::<usize>(&[]).unwrap().shape, Vec::<usize>::new());
        let err = multi::<usize>(&[&[3], &[4]]).unwrap_err();
        assert_eq!(err, BroadcastError::Clash { axis: 0, sizes: vec![(0, 3), (1, 4)] });
    }

    #[test]
    fn zero_broadcasts_only_with_zero_and_one() {
        assert_eq!(multi::<usize>(&[&[0, 3], &[1, 3]]).unwrap().shape, vec![0, 3]);
        assert_eq!(multi::<usize>(&[&[0], &[0]]).unwrap().shape, vec![0]);
        assert!(multi::<usize>(&[&[0], &[2]]).is_err());
        let d = |n| Dim::Known(n);
        assert!(multi::<Dim>(&[&[d(0)], &[d(2)]]).is_err());
    }

    #[test]
    fn symbols() {
        let b = Dim::sym("batch");
        let s = Dim::sym("seq");
        // Equal symbols stay; 1 is the identity.
        let out = multi(&[&[b.clone(), Dim::Known(1)][..], &[b.clone(), s.clone()]]).unwrap();
        assert_eq!(out.shape, vec![b.clone(), s.clone()]);
        assert!(out.assumptions.is_empty());
        // A known size beats a symbol and records the side condition.
        let out = multi(&[&[s.clone()][..], &[Dim::Known(512)]]).unwrap();
        assert_eq!(out.shape, vec![Dim::Known(512)]);
        let want = Assumption::OneOf { sym: Term::name("seq"), sizes: vec![1, 512] };
        assert_eq!(out.assumptions, vec![(0, want)]);
        // Two different symbols: a result plus a side condition.
        let out = multi(&[std::slice::from_ref(&s), std::slice::from_ref(&b)]).unwrap();
        assert_eq!(out.shape, vec![Dim::parse("broadcast(batch,seq)")]);
        assert_eq!(out.shape[0].to_string(), "broadcast(batch,seq)");
        let want = Assumption::EqualOrOne(vec![Term::name("batch"), Term::name("seq")]);
        assert_eq!(out.assumptions, vec![(0, want)]);
        // Unknown with a known non-1 size gives that size; with 1 stays unknown.
        assert_eq!(multi(&[&[Dim::Unknown][..], &[Dim::Known(4)]]).unwrap().shape, vec![Dim::Known(4)]);
        assert_eq!(multi(&[&[Dim::Unknown][..], &[Dim::Known(1)]]).unwrap().shape, vec![Dim::Unknown]);
    }

    #[test]
    fn agreeing_axes_give_what_the_general_rule_gives() {
        // Every column of one to three sizes, as a rank-1 shape per input: `multi` takes its
        // quick path where the sizes agree and must answer as the general rule (`Dim::axis`)
        // does.
        let dims =
            [Dim::Known(0), Dim::Known(1), Dim::Known(4), Dim::Known(5), Dim::sym("a"), Dim::sym("b"), Dim::Unknown];
        let mut quick = 0;
        for a in &dims {
            for b in &dims {
                for c in &dims {
                    for column in [vec![a], vec![a, b], vec![a, b, c]] {
                        let shapes: Vec<&[Dim]> = column.iter().map(|d| std::slice::from_ref(*d)).collect();
                        let got = multi(&shapes).map(|b| (b.shape, b.assumptions));
                        let want = match Dim::axis(&column) {
                            Some((d, assume)) => Ok((vec![d], assume.into_iter().map(|a| (0, a)).collect())),
                            None => Err(clash(&shapes, 1, 0)),
                        };
                        assert_eq!(got, want, "{column:?}");
                        quick += usize::from(agreed(&shapes, 1, 0, &Dim::Known(1)).is_some());
                    }
                }
            }
        }
        // The quick path was taken, and not everywhere.
        assert!(quick > 100 && quick < 7 * 7 * 7 * 3, "{quick}");
    }

    #[test]
    fn unidirectional() {
        assert_eq!(uni::<usize>(&[2, 3, 4], &[3, 1], 1).unwrap().shape, vec![2, 3, 4]);
        assert!(uni::<usize>(&[2, 1], &[2, 3], 1).is_err());
        assert!(matches!(uni::<usize>(&[3], &[2, 3], 1), Err(BroadcastError::Rank { input: 1, rank: 2, target: 1 })));
    }

    #[test]
    fn in_dim_checks_its_dimensions() {
        assert_eq!(in_dim::<usize>(&[3], 2, &[1]).unwrap(), vec![1, 3]);
        assert_eq!(in_dim::<usize>(&[3], 2, &[0]).unwrap(), vec![3, 1]);
        assert!(in_dim::<usize>(&[3, 4], 4, &[2, 1]).is_err());
        assert!(in_dim::<usize>(&[3], 2, &[2]).is_err());
        assert!(in_dim::<usize>(&[3], 2, &[-1]).is_err());
    }
}

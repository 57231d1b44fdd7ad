//! Properties of the one broadcast rule (`shape::multi`): it matches a naive oracle written
//! here from the Array API algorithm, it is commutative and permutation-invariant, the N-ary
//! result equals folding the binary one, it rejects exactly the incompatible inputs and says
//! where; over `Dim` it agrees with `usize` on known dims, and with symbols its result holds
//! for every substitution that satisfies the side conditions it recorded.

use std::collections::BTreeMap;

use onnx_bcast::shape::{self, Assumption, BroadcastError, Dim};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Oracles, written from the seed documents without looking at the library.

/// The Array API algorithm for two shapes, step by step: walk `i` from `N-1` down to 0, take
/// `d1`/`d2` (1 where a shape has no such dim), and set `shape[i]` to `d2` if `d1 == 1`, to
/// `d1` if `d2 == 1` or `d1 == d2`, else fail.
fn array_api(shape1: &[usize], shape2: &[usize]) -> Option<Vec<usize>> {
    let (n1, n2) = (shape1.len(), shape2.len());
    let n = n1.max(n2);
    let mut shape = vec![0; n];
    for i in (0..n).rev() {
        // The document indexes from the right end of each shape.
        let d1 = if i >= n - n1 { shape1[i - (n - n1)] } else { 1 };
        let d2 = if i >= n - n2 { shape2[i - (n - n2)] } else { 1 };
        shape[i] = if d1 == 1 {
            d2
        } else if d2 == 1 || d1 == d2 {
            d1
        } else {
            return None;
        };
    }
    Some(shape)
}

/// The sizes of output axis `axis` (of `rank`) over the inputs that have it, with their index.
fn column(shapes: &[Vec<usize>], rank: usize, axis: usize) -> Vec<(usize, usize)> {
    shapes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.len() + axis >= rank)
        .map(|(i, s)| (i, s[s.len() + axis - rank]))
        .collect()
}

/// N inputs: each output axis takes the one size other than 1 that its inputs have (1 if none);
/// two different sizes other than 1 clash.
fn nary_oracle(shapes: &[Vec<usize>]) -> Option<Vec<usize>> {
    let rank = shapes.iter().map(Vec::len).max().unwrap_or(0);
    (0..rank)
        .map(|axis| {
            let mut big: Vec<usize> =
                column(shapes, rank, axis).into_iter().map(|(_, d)| d).filter(|&d| d != 1).collect();
            big.sort_unstable();
            big.dedup();
            match big.as_slice() {
                [] => Some(1),
                [d] => Some(*d),
                _ => None,
            }
        })
        .collect()
}

fn refs<T>(shapes: &[Vec<T>]) -> Vec<&[T]> {
    shapes.iter().map(Vec::as_slice).collect()
}

fn multi(shapes: &[Vec<usize>]) -> Result<Vec<usize>, BroadcastError<usize>> {
    shape::multi::<usize>(&refs(shapes)).map(|b| {
        assert!(b.assumptions.is_empty(), "plain sizes need no side conditions");
        b.shape
    })
}

/// Unidirectional broadcasting, from ONNX's Broadcasting.md: `from` broadcasts to `target`
/// when, aligned at the right, each of its sizes is 1 or the target's, and it has no more axes.
fn uni_oracle(target: &[usize], from: &[usize]) -> bool {
    from.len() <= target.len() && from.iter().rev().zip(target.iter().rev()).all(|(&f, &t)| f == 1 || f == t)
}

/// The legacy opset<7 form: `b` lies over `a`'s axes `axis..axis+rank(b)` (by default the
/// trailing ones), each size 1 or equal to `a`'s there; the output is `a`.
fn legacy_oracle(a: &[usize], b: &[usize], axis: Option<i64>) -> bool {
    let start = axis.unwrap_or(a.len() as i64 - b.len() as i64);
    if start < 0 || start as usize + b.len() > a.len() {
        return false;
    }
    b.iter().enumerate().all(|(i, &d)| d == 1 || d == a[start as usize + i])
}

/// XLA's InDim: dims strictly increasing, inside the rank, one per low axis; the low shape's
/// sizes land at those axes and every other axis is 1.
fn in_dim_oracle(low: &[usize], rank: usize, bdims: &[i64]) -> Option<Vec<usize>> {
    let ok = bdims.len() == low.len()
        && bdims.iter().all(|&d| d >= 0 && (d as usize) < rank)
        && bdims.windows(2).all(|w| w[0] < w[1]);
    ok.then(|| (0..rank).map(|axis| bdims.iter().position(|&d| d == axis as i64).map_or(1, |i| low[i])).collect())
}

// ---------------------------------------------------------------------------------------------
// Strategies.

/// 1 to 4 shapes of rank 0 to 5 with sizes 0 to 4, made from one base shape so that many of
/// them broadcast: each input drops some leading axes, and each of its sizes is the base's,
/// a 1, or (less often) anything.
fn shapes() -> impl Strategy<Value = Vec<Vec<usize>>> {
    let base = prop::collection::vec(0usize..5, 0..=5);
    let inputs = prop::collection::vec((0usize..=5, prop::collection::vec((0u8..10, 0usize..5), 5)), 1..=4);
    (base, inputs).prop_map(|(base, inputs)| {
        inputs
            .into_iter()
            .map(|(drop, modes)| {
                let drop = drop.min(base.len());
                base[drop..]
                    .iter()
                    .zip(modes)
                    .map(|(&b, (mode, any))| match mode {
                        0..=4 => b,
                        5..=7 => 1,
                        _ => any,
                    })
                    .collect()
            })
            .collect()
    })
}

/// Shapes and a permutation of them.
fn shapes_and_permutation() -> impl Strategy<Value = (Vec<Vec<usize>>, Vec<usize>)> {
    shapes().prop_flat_map(|s| {
        let n = s.len();
        (Just(s), Just((0..n).collect::<Vec<usize>>()).prop_shuffle())
    })
}

const SYMS: [&str; 3] = ["a", "b", "c"];

/// Shapes whose dims are sizes 0 to 4 or the symbols a, b, c, and values for the symbols.
fn symbolic() -> impl Strategy<Value = (Vec<Vec<Dim>>, BTreeMap<String, usize>)> {
    let dim = prop_oneof![
        3 => (0i64..5).prop_map(Dim::Known),
        2 => Just(Dim::Known(1)),
        3 => (0usize..3).prop_map(|i| Dim::sym(SYMS[i])),
    ];
    let shapes = prop::collection::vec(prop::collection::vec(dim, 0..=4), 1..=4);
    let value = prop_oneof![2 => Just(1usize), 3 => 0usize..5];
    let values = prop::collection::vec(value, 3)
        .prop_map(|v| SYMS.iter().zip(v).map(|(s, v)| (s.to_string(), v)).collect::<BTreeMap<_, _>>());
    (shapes, values)
}

// ---------------------------------------------------------------------------------------------
// Symbolic evaluation.

/// The non-1 values of `vals` are all equal.
fn equal_or_one(vals: &[usize]) -> bool {
    let mut big = vals.iter().filter(|&&v| v != 1);
    match big.next() {
        None => true,
        Some(first) => big.all(|v| v == first),
    }
}

fn eval(d: &Dim, values: &BTreeMap<String, usize>) -> usize {
    match d {
        Dim::Known(k) => *k as usize,
        Dim::Term(t) => t.eval(&|a| a.as_name().map(|n| values[n] as i64)).expect("a broadcast that holds") as usize,
        Dim::Unknown => unreachable!("the strategies make no unknown dims"),
    }
}

fn holds(a: &Assumption, values: &BTreeMap<String, usize>) -> bool {
    a.holds(&|t| t.as_name().map(|n| values[n] as i64)) == Some(true)
}

// ---------------------------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(crate::common::prop_config(1024))]

    /// Two inputs: exactly the Array API algorithm, success and failure alike.
    #[test]
    fn two_inputs_match_the_array_api(s in shapes()) {
        let (a, b) = (&s[0], s.get(1).unwrap_or(&s[0]));
        let pair = vec![a.clone(), b.clone()];
        prop_assert_eq!(multi(&pair).ok(), array_api(a, b));
    }

    /// N inputs: the naive per-axis oracle, and the oracle agrees with folding the Array API
    /// algorithm (a check of the oracles against each other).
    #[test]
    fn n_inputs_match_the_oracle(s in shapes()) {
        let want = nary_oracle(&s);
        prop_assert_eq!(multi(&s).ok(), want.clone());
        let folded = s.iter().try_fold(Vec::new(), |acc, x| array_api(&acc, x));
        prop_assert_eq!(folded, want);
    }

    /// Swapping two inputs changes nothing but the input indices of an error.
    #[test]
    fn commutative(s in shapes()) {
        let (a, b) = (s[0].clone(), s.get(1).unwrap_or(&s[0]).clone());
        match (multi(&[a.clone(), b.clone()]), multi(&[b, a])) {
            (Ok(x), Ok(y)) => prop_assert_eq!(x, y),
            (Err(BroadcastError::Clash { axis: p, sizes: x }), Err(BroadcastError::Clash { axis: q, sizes: y })) => {
                prop_assert_eq!(p, q);
                let swapped: Vec<(usize, usize)> = y.into_iter().rev().map(|(i, d)| (1 - i, d)).collect();
                prop_assert_eq!(x, swapped);
            }
            (x, y) => prop_assert!(false, "{:?} vs {:?}", x, y),
        }
    }

    /// Any order of N inputs gives the same shape, or the same clashing axis with the same
    /// (input, size) pairs once renumbered.
    #[test]
    fn permutation_invariant((s, perm) in shapes_and_permutation()) {
        let permuted: Vec<Vec<usize>> = perm.iter().map(|&i| s[i].clone()).collect();
        match (multi(&s), multi(&permuted)) {
            (Ok(x), Ok(y)) => prop_assert_eq!(x, y),
            (Err(BroadcastError::Clash { axis: p, sizes: x }), Err(BroadcastError::Clash { axis: q, sizes: y })) => {
                prop_assert_eq!(p, q);
                let mut back: Vec<(usize, usize)> = y.into_iter().map(|(i, d)| (perm[i], d)).collect();
                back.sort_unstable();
                prop_assert_eq!(x, back);
            }
            (x, y) => prop_assert!(false, "{:?} vs {:?}", x, y),
        }
    }

    /// The N-ary rule equals folding the binary rule from the scalar shape.
    #[test]
    fn n_ary_equals_folded_binary(s in shapes()) {
        let folded = s.iter().try_fold(Vec::new(), |acc, x| multi(&[acc, x.clone()]).ok());
        prop_assert_eq!(multi(&s).ok(), folded);
    }

    /// A refusal names an axis that really clashes, with exactly the inputs whose size there is
    /// not 1; a result satisfies constraint C1 (each input's size is the result's or 1) and,
    /// without zero sizes, is the maximum at every axis.
    #[test]
    fn errors_say_where_and_results_satisfy_c1(s in shapes()) {
        let rank = s.iter().map(Vec::len).max().unwrap_or(0);
        match multi(&s) {
            Ok(out) => {
                prop_assert_eq!(out.len(), rank);
                for (axis, &o) in out.iter().enumerate() {
                    let col = column(&s, rank, axis);
                    prop_assert!(col.iter().all(|&(_, d)| d == o || d == 1), "C1 at axis {}", axis);
                    if col.iter().all(|&(_, d)| d > 0) {
                        prop_assert_eq!(o, col.iter().map(|&(_, d)| d).max().unwrap_or(1));
                    }
                }
            }
            Err(BroadcastError::Clash { axis, sizes }) => {
                prop_assert!(axis < rank);
                let col = column(&s, rank, axis);
                let big: Vec<(usize, usize)> = col.into_iter().filter(|&(_, d)| d != 1).collect();
                prop_assert_eq!(&sizes, &big);
                prop_assert!(!equal_or_one(&big.iter().map(|&(_, d)| d).collect::<Vec<_>>()));
            }
            Err(other) => prop_assert!(false, "multi gave {:?}", other),
        }
    }

    /// Known `Dim`s give exactly the `usize` result, errors included, with no side conditions.
    #[test]
    fn known_dims_agree_with_usize(s in shapes()) {
        let ds: Vec<Vec<Dim>> = s.iter().map(|x| x.iter().map(|&d| Dim::Known(d as i64)).collect()).collect();
        let got = shape::multi::<Dim>(&refs(&ds));
        match (multi(&s), got) {
            (Ok(u), Ok(d)) => {
                prop_assert!(d.assumptions.is_empty());
                prop_assert_eq!(d.shape, u.iter().map(|&x| Dim::Known(x as i64)).collect::<Vec<_>>());
            }
            (Err(BroadcastError::Clash { axis: p, sizes: u }), Err(BroadcastError::Clash { axis: q, sizes: d })) => {
                prop_assert_eq!(p, q);
                prop_assert_eq!(d, u.into_iter().map(|(i, x)| (i, Dim::Known(x as i64))).collect::<Vec<_>>());
            }
            (u, d) => prop_assert!(false, "{:?} vs {:?}", u, d),
        }
    }

    /// With symbols: a symbolic refusal holds for every value of the symbols; a symbolic result
    /// with its side conditions satisfied is the `usize` result of the substituted shapes; and
    /// when the substituted shapes broadcast, the side conditions hold (they are needed, not
    /// just enough).
    #[test]
    fn symbols_substitute_to_the_usize_result((ds, values) in symbolic()) {
        let concrete: Vec<Vec<usize>> = ds.iter().map(|s| s.iter().map(|d| eval(d, &values)).collect()).collect();
        let sym = shape::multi::<Dim>(&refs(&ds));
        let plain = multi(&concrete);
        match (&sym, &plain) {
            (Err(e), Ok(p)) => prop_assert!(false, "symbolic refusal {:?}, but {:?} broadcasts to {:?}", e, values, p),
            (Err(_), Err(_)) => {}
            (Ok(b), _) => {
                let rank = ds.iter().map(Vec::len).max().unwrap_or(0);
                prop_assert!(b.assumptions.iter().all(|(axis, _)| *axis < rank));
                let satisfied = b.assumptions.iter().all(|(_, a)| holds(a, &values));
                match plain {
                    Ok(p) => {
                        prop_assert!(satisfied, "{:?} broadcast under {:?}, yet {:?} fails", concrete, values, b.assumptions);
                        let out: Vec<usize> = b.shape.iter().map(|d| eval(d, &values)).collect();
                        prop_assert_eq!(out, p);
                    }
                    Err(_) => prop_assert!(!satisfied, "{:?} holds under {:?} but {:?} does not broadcast", b.assumptions, values, concrete),
                }
            }
        }
    }

    /// Unidirectional broadcasting accepts exactly what the oracle accepts, and gives the
    /// target; it accepts exactly when numpy broadcasting of the two gives the target.
    #[test]
    fn uni_matches_its_oracle(s in shapes()) {
        let (t, f) = (&s[0], s.get(1).unwrap_or(&s[0]));
        let got = shape::uni::<usize>(t, f, 1);
        prop_assert_eq!(got.is_ok(), uni_oracle(t, f), "{:?} <- {:?}: {:?}", t, f, got);
        if let Ok(b) = got {
            prop_assert_eq!(&b.shape, t);
        }
        let both = multi(&[t.clone(), f.clone()]).ok();
        prop_assert_eq!(uni_oracle(t, f), both.as_ref() == Some(t));
    }

    /// The legacy form accepts exactly what the oracle accepts, with or without `axis`, and
    /// its output is always A's shape.
    #[test]
    fn legacy_matches_its_oracle(s in shapes(), axis in prop::option::of(-1i64..6)) {
        let (a, b) = (&s[0], s.get(1).unwrap_or(&s[0]));
        let got = shape::legacy::<usize>(a, b, axis);
        prop_assert_eq!(got.is_ok(), legacy_oracle(a, b, axis), "{:?} {:?} axis {:?}: {:?}", a, b, axis, got);
        if let Ok(out) = got {
            prop_assert_eq!(&out.shape, a);
        }
        // Without `axis`, the legacy form is unidirectional broadcasting.
        if axis.is_none() {
            prop_assert_eq!(shape::legacy::<usize>(a, b, None).is_ok(), uni_oracle(a, b));
        }
    }

    /// `in_dim` places the low shape exactly as XLA's definition says, and refuses bad dims.
    #[test]
    fn in_dim_matches_its_oracle(
        low in prop::collection::vec(0usize..5, 0..=3),
        rank in 0usize..=5,
        bdims in prop::collection::vec(-1i64..6, 0..=4),
    ) {
        let got = shape::in_dim::<usize>(&low, rank, &bdims).ok();
        prop_assert_eq!(got, in_dim_oracle(&low, rank, &bdims));
    }

    /// `in_dim` with increasing dims drawn from the rank always succeeds.
    #[test]
    fn in_dim_accepts_increasing_dims(mask in prop::collection::vec(any::<bool>(), 0..=5), sizes in prop::collection::vec(0usize..5, 5)) {
        let bdims: Vec<i64> = mask.iter().enumerate().filter(|(_, &m)| m).map(|(i, _)| i as i64).collect();
        let low: Vec<usize> = sizes[..bdims.len()].to_vec();
        let out = shape::in_dim::<usize>(&low, mask.len(), &bdims);
        prop_assert_eq!(out.ok(), in_dim_oracle(&low, mask.len(), &bdims));
    }
}

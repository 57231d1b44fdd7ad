//! The broadcast rule (`shape::multi`, for `usize` and for known `Dim`s) against a naive
//! oracle written from numpy's definition, plus commutativity and N-ary = folded binary.

#![no_main]

use libfuzzer_sys::fuzz_target;
use onnx_bcast::shape::{multi, BroadcastError, Dim};

/// numpy's rule, spelled out: pad every shape with leading 1s to the longest rank; on each
/// axis the sizes other than 1 must all be equal, and the result is that size (or 1). On a
/// clash, the first (leftmost) clashing axis.
fn oracle(shapes: &[Vec<usize>]) -> Result<Vec<usize>, usize> {
    let rank = shapes.iter().map(Vec::len).max().unwrap_or(0);
    let padded: Vec<Vec<usize>> =
        shapes.iter().map(|s| std::iter::repeat_n(1, rank - s.len()).chain(s.iter().copied()).collect()).collect();
    let mut out = Vec::new();
    for axis in 0..rank {
        let mut sizes: Vec<usize> = padded.iter().map(|s| s[axis]).filter(|d| *d != 1).collect();
        sizes.sort_unstable();
        sizes.dedup();
        match sizes.as_slice() {
            [] => out.push(1),
            [d] => out.push(*d),
            _ => return Err(axis),
        }
    }
    Ok(out)
}

fuzz_target!(|input: Vec<Vec<u8>>| {
    // Small sizes make clashes and 1s common; at most 6 shapes of rank at most 6.
    let shapes: Vec<Vec<usize>> =
        input.iter().take(6).map(|s| s.iter().take(6).map(|b| usize::from(b % 5)).collect()).collect();
    let refs: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
    let want = oracle(&shapes);
    let got = multi::<usize>(&refs);
    match (&want, &got) {
        (Ok(w), Ok(g)) => {
            assert_eq!(w, &g.shape, "{shapes:?}");
            assert!(g.assumptions.is_empty());
        }
        (Err(axis), Err(BroadcastError::Clash { axis: a, sizes })) => {
            assert_eq!(axis, a, "{shapes:?}");
            // The sizes named clash: at least two different sizes other than 1.
            let mut s: Vec<usize> = sizes.iter().map(|(_, d)| *d).collect();
            s.sort_unstable();
            s.dedup();
            assert!(s.len() >= 2 && !s.contains(&1), "{shapes:?}: {sizes:?}");
            for (i, d) in sizes {
                let sh = &shapes[*i];
                let rank = shapes.iter().map(Vec::len).max().unwrap_or(0);
                assert_eq!(sh[a + sh.len() - rank], *d, "{shapes:?}");
            }
        }
        _ => panic!("{shapes:?}: oracle {want:?}, multi {got:?}"),
    }
    // The same over known `Dim`s.
    let dims: Vec<Vec<Dim>> = shapes.iter().map(|s| s.iter().map(|d| Dim::Known(*d as i64)).collect()).collect();
    let drefs: Vec<&[Dim]> = dims.iter().map(Vec::as_slice).collect();
    match (&want, multi::<Dim>(&drefs)) {
        (Ok(w), Ok(g)) => {
            assert_eq!(g.shape, w.iter().map(|d| Dim::Known(*d as i64)).collect::<Vec<_>>(), "{shapes:?}");
            assert!(g.assumptions.is_empty());
        }
        (Err(axis), Err(BroadcastError::Clash { axis: a, .. })) => assert_eq!(*axis, a),
        (w, g) => panic!("{shapes:?}: oracle {w:?}, multi::<Dim> {g:?}"),
    }
    // Commutative: any order gives the same result.
    let mut rev = refs.clone();
    rev.reverse();
    assert_eq!(multi::<usize>(&rev).map(|b| b.shape).ok(), want.clone().ok(), "{shapes:?} reversed");
    // N-ary equals folding the binary rule.
    let mut acc: Option<Vec<usize>> = Some(Vec::new());
    for s in &refs {
        acc = acc.and_then(|a| multi::<usize>(&[&a, s]).ok().map(|b| b.shape));
    }
    assert_eq!(acc, want.ok(), "{shapes:?} folded");
});

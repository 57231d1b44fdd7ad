//! The one strided broadcast iterator every kernel runs on: operands of any broadcastable
//! shapes are walked in output order with stride 0 on broadcast axes, adjacent axes coalesced
//! where contiguous in every operand, and the innermost axis handed to a contiguous or scalar
//! loop that the compiler vectorizes. Outer axes advance like an odometer (no per-element
//! index division); large outputs are split into chunks that rayon runs in parallel.
//!
//! The output shape is never decided here: callers compute it with `shape::multi` (or `uni`,
//! `expand`, `legacy`) and hand it in.

use rayon::prelude::*;

use super::Fail;

/// Outputs with at least this many elements run in parallel chunks.
pub const PAR_THRESHOLD: usize = 1 << 16;

/// The memory budget one allocation may take, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget(pub u64);

impl Budget {
    /// Refuses `n` elements of `T` when they would exceed the budget; checked in u128 so no
    /// size overflows.
    pub fn check<T>(&self, what: &str, n: usize) -> Result<(), Fail> {
        let bytes = n as u128 * std::mem::size_of::<T>().max(1) as u128;
        if bytes > self.0 as u128 {
            return Err(Fail::Budget { what: what.to_string(), bytes, budget: self.0 });
        }
        Ok(())
    }

    /// A vector of `n` copies of `fill`, after [`Budget::check`]. Zero-valued primitive fills
    /// come from `calloc`, so untouched pages cost nothing.
    pub fn alloc<T: Clone>(&self, what: &str, n: usize, fill: T) -> Result<Vec<T>, Fail> {
        self.check::<T>(what, n)?;
        Ok(vec![fill; n])
    }
}

/// How `K` operands are walked to fill a contiguous output: coalesced output dims (outermost
/// first, never empty) and each operand's stride, in elements, on each of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan<const K: usize> {
    dims: Vec<usize>,
    strides: Vec<[usize; K]>,
    len: usize,
}

impl<const K: usize> Plan<K> {
    /// The plan for operands of shapes `inputs` (contiguous, row-major) read as `out`. Every
    /// input must stretch to `out` (rank at most `out`'s, each dim equal or 1): the caller
    /// decided that with the broadcast rule; `None` when it does not hold.
    pub fn new(out: &[usize], inputs: [&[usize]; K]) -> Option<Plan<K>> {
        let rank = out.len();
        let len = super::tensor::numel(out)?;
        let mut full: Vec<[usize; K]> = vec![[0; K]; rank];
        for (k, shape) in inputs.iter().enumerate() {
            let offset = rank.checked_sub(shape.len())?;
            let mut stride = 1usize;
            for (i, &d) in shape.iter().enumerate().rev() {
                let o = out[offset + i];
                if d == o && d != 1 {
                    full[offset + i][k] = stride;
                } else if d != 1 {
                    return None;
                }
                // An input has at most the output's elements, so only the inputs of an empty
                // output (0 x 2^32 x 2^32) get past usize here: their strides are never read.
                stride = match stride.checked_mul(d) {
                    Some(s) => s,
                    None if len == 0 => 0,
                    None => return None,
                };
            }
        }
        if len == 0 {
            return Some(Plan { dims: vec![0], strides: vec![[0; K]], len });
        }
        let mut dims: Vec<usize> = Vec::with_capacity(rank);
        let mut strides: Vec<[usize; K]> = Vec::with_capacity(rank);
        for (axis, &d) in out.iter().enumerate() {
            if d == 1 {
                continue;
            }
            let s = full[axis];
            if let (Some(pd), Some(ps)) = (dims.last_mut(), strides.last_mut()) {
                if (0..K).all(|k| ps[k] == s[k] * d) {
                    *pd *= d;
                    *ps = s;
                    continue;
                }
            }
            dims.push(d);
            strides.push(s);
        }
        if dims.is_empty() {
            dims.push(1);
            strides.push([0; K]);
        }
        Some(Plan { dims, strides, len })
    }

    /// The number of output elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The coalesced output dims (outermost first).
    #[cfg(test)]
    fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Each operand's stride on the innermost coalesced axis: 0 (broadcast) or 1.
    pub fn inner(&self) -> [usize; K] {
        self.strides[self.strides.len() - 1]
    }

    /// Fills `out` (of [`Plan::len`] elements): `run(chunk, offsets)` is called for runs of
    /// the innermost axis, where operand `k`'s elements for `chunk[i]` sit at
    /// `offsets[k] + i * inner()[k]`. Runs in parallel chunks above [`PAR_THRESHOLD`].
    pub fn drive<O: Send>(&self, out: &mut [O], run: &(impl Fn(&mut [O], [usize; K]) + Sync)) {
        debug_assert_eq!(out.len(), self.len);
        chunks(out, &|o: &mut [O], start: usize| {
            self.range(start, o, &mut |o: &mut [O], offs: [usize; K]| run(o, offs))
        });
    }

    /// Like [`Plan::drive`], but hands out whole chunks: `fill(chunk, start)` must fill the
    /// output elements `start..start + chunk.len()`, typically with [`Plan::range`]. Lets a
    /// caller set up per-chunk state (scratch registers, a store fence) once per chunk
    /// instead of once per run.
    pub fn drive_chunks<O: Send>(&self, out: &mut [O], fill: &(impl Fn(&mut [O], usize) + Sync)) {
        debug_assert_eq!(out.len(), self.len);
        chunks(out, fill);
    }

    /// Fills `out`, the output elements from `start` on, one run of the innermost axis at a
    /// time: `run(chunk, offsets)` as in [`Plan::drive`].
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    pub fn range<O>(&self, start: usize, out: &mut [O], run: &mut impl Runs<O, K>) {
        let nd = self.dims.len();
        let inner = self.dims[nd - 1];
        let istr = self.strides[nd - 1];
        // No elements: an outer axis may be empty too, which the unravelling below divides by.
        if inner == 0 || out.is_empty() {
            return;
        }
        // Unravel the start once per chunk: the only divisions.
        let mut row = start / inner;
        let mut col = start % inner;
        let mut idx = vec![0usize; nd - 1];
        let mut base = [0usize; K];
        for a in (0..nd - 1).rev() {
            idx[a] = row % self.dims[a];
            row /= self.dims[a];
            for k in 0..K {
                base[k] += idx[a] * self.strides[a][k];
            }
        }
        let mut pos = 0;
        while pos < out.len() {
            let n = (inner - col).min(out.len() - pos);
            let mut offs = base;
            for k in 0..K {
                offs[k] += col * istr[k];
            }
            run.run(&mut out[pos..pos + n], offs);
            pos += n;
            col = 0;
            for a in (0..nd - 1).rev() {
                idx[a] += 1;
                for k in 0..K {
                    base[k] += self.strides[a][k];
                }
                if idx[a] < self.dims[a] {
                    break;
                }
                for k in 0..K {
                    base[k] -= self.strides[a][k] * self.dims[a];
                }
                idx[a] = 0;
            }
        }
    }
}

/// What [`Plan::range`] calls for each run: any `FnMut(run, offsets)`, or a type of the
/// caller's whose `run` is `#[inline(always)]` (closures do not take on the target features of
/// the function they are defined in, so a loop compiled for AVX2 must not go through one).
pub trait Runs<O, const K: usize> {
    /// Fills one run; operand `k`'s elements start at `offs[k]`.
    fn run(&mut self, out: &mut [O], offs: [usize; K]);
}

impl<O, const K: usize, F: FnMut(&mut [O], [usize; K])> Runs<O, K> for F {
    #[inline(always)]
    fn run(&mut self, out: &mut [O], offs: [usize; K]) {
        self(out, offs)
    }
}

fn mismatch(out: &[usize], inputs: &[&[usize]]) -> Fail {
    Fail::Invalid(format!("input shapes {inputs:?} do not stretch to the output shape {out:?}"))
}

/// One operand's run: `n` elements from `offset` with stride `S` (0 or 1).
#[inline(always)]
fn run_of<const S: usize, T>(v: &[T], offset: usize, n: usize) -> &[T] {
    if S == 0 {
        &v[offset..offset + 1]
    } else {
        &v[offset..offset + n]
    }
}

#[inline(always)]
fn run1<const SA: usize, A, O>(o: &mut [O], a: &[A], f: &impl Fn(&A) -> O)
where
    O: Clone,
{
    if SA == 1 {
        for (o, x) in o.iter_mut().zip(a) {
            *o = f(x);
        }
    } else {
        let v = f(&a[0]);
        o.fill(v);
    }
}

#[inline(always)]
fn run2<const SA: usize, const SB: usize, A, B, O: Clone>(o: &mut [O], a: &[A], b: &[B], f: &impl Fn(&A, &B) -> O) {
    if SA == 1 && SB == 1 {
        for ((o, x), y) in o.iter_mut().zip(a).zip(b) {
            *o = f(x, y);
        }
    } else if SA == 1 {
        let y = &b[0];
        for (o, x) in o.iter_mut().zip(a) {
            *o = f(x, y);
        }
    } else if SB == 1 {
        let x = &a[0];
        for (o, y) in o.iter_mut().zip(b) {
            *o = f(x, y);
        }
    } else {
        let v = f(&a[0], &b[0]);
        o.fill(v);
    }
}

#[inline(always)]
fn run3<const SA: usize, const SB: usize, const SC: usize, A, B, C, O>(
    o: &mut [O],
    a: &[A],
    b: &[B],
    c: &[C],
    f: &impl Fn(&A, &B, &C) -> O,
) {
    for (i, o) in o.iter_mut().enumerate() {
        *o = f(&a[i * SA], &b[i * SB], &c[i * SC]);
    }
}

/// Broadcasts `a` (shape `ash`) to `out` and maps each element through `f`: Expand, Tile
/// (through an interleaved view), Cast and the unary ops.
pub fn map1<A: Sync, O: Clone + Default + Send + Sync>(
    budget: Budget,
    out: &[usize],
    a: &[A],
    ash: &[usize],
    f: impl Fn(&A) -> O + Sync,
) -> Result<Vec<O>, Fail> {
    let plan = Plan::new(out, [ash]).ok_or_else(|| mismatch(out, &[ash]))?;
    let mut o = budget.alloc("output", plan.len(), O::default())?;
    match plan.inner() {
        [1] => plan.drive(&mut o, &|o, [ia]| run1::<1, _, _>(o, run_of::<1, _>(a, ia, o.len()), &f)),
        _ => plan.drive(&mut o, &|o, [ia]| run1::<0, _, _>(o, run_of::<0, _>(a, ia, o.len()), &f)),
    }
    Ok(o)
}

/// Broadcasts `a` and `b` to `out` and combines them elementwise with `f`.
#[allow(clippy::too_many_arguments)]
pub fn map2<A: Sync, B: Sync, O: Clone + Default + Send + Sync>(
    budget: Budget,
    out: &[usize],
    a: &[A],
    ash: &[usize],
    b: &[B],
    bsh: &[usize],
    f: impl Fn(&A, &B) -> O + Sync,
) -> Result<Vec<O>, Fail> {
    let plan = Plan::new(out, [ash, bsh]).ok_or_else(|| mismatch(out, &[ash, bsh]))?;
    let mut o = budget.alloc("output", plan.len(), O::default())?;
    macro_rules! go {
        ($sa:literal, $sb:literal) => {
            plan.drive(&mut o, &|o, [ia, ib]| {
                let n = o.len();
                run2::<$sa, $sb, _, _, _>(o, run_of::<$sa, _>(a, ia, n), run_of::<$sb, _>(b, ib, n), &f)
            })
        };
    }
    match plan.inner() {
        [1, 1] => go!(1, 1),
        [1, _] => go!(1, 0),
        [_, 1] => go!(0, 1),
        _ => go!(0, 0),
    }
    Ok(o)
}

/// Broadcasts `a`, `b` and `c` to `out` and combines them elementwise with `f` (Where).
#[allow(clippy::too_many_arguments)]
pub fn map3<A: Sync, B: Sync, C: Sync, O: Clone + Default + Send + Sync>(
    budget: Budget,
    out: &[usize],
    (a, ash): (&[A], &[usize]),
    (b, bsh): (&[B], &[usize]),
    (c, csh): (&[C], &[usize]),
    f: impl Fn(&A, &B, &C) -> O + Sync,
) -> Result<Vec<O>, Fail> {
    let plan = Plan::new(out, [ash, bsh, csh]).ok_or_else(|| mismatch(out, &[ash, bsh, csh]))?;
    let mut o = budget.alloc("output", plan.len(), O::default())?;
    macro_rules! go {
        ($sa:literal, $sb:literal, $sc:literal) => {
            plan.drive(&mut o, &|o, [ia, ib, ic]| {
                let n = o.len();
                run3::<$sa, $sb, $sc, _, _, _, _>(
                    o,
                    run_of::<$sa, _>(a, ia, n),
                    run_of::<$sb, _>(b, ib, n),
                    run_of::<$sc, _>(c, ic, n),
                    &f,
                )
            })
        };
    }
    match plan.inner() {
        [1, 1, 1] => go!(1, 1, 1),
        [1, 1, _] => go!(1, 1, 0),
        [1, _, 1] => go!(1, 0, 1),
        [1, _, _] => go!(1, 0, 0),
        [_, 1, 1] => go!(0, 1, 1),
        [_, 1, _] => go!(0, 1, 0),
        [_, _, 1] => go!(0, 0, 1),
        _ => go!(0, 0, 0),
    }
    Ok(o)
}

/// Combines `b` (broadcast to `out`) into `acc` (of shape `out`) in place: `acc = f(acc, b)`.
/// The N-ary ops (Sum, Mean, Max, Min) fold their inputs with it.
pub fn fold_into<O: Send + Sync, B: Sync>(
    acc: &mut [O],
    out: &[usize],
    b: &[B],
    bsh: &[usize],
    f: impl Fn(&O, &B) -> O + Sync,
) -> Result<(), Fail> {
    let plan = Plan::new(out, [bsh]).ok_or_else(|| mismatch(out, &[bsh]))?;
    if plan.len() != acc.len() {
        return Err(mismatch(out, &[bsh]));
    }
    match plan.inner() {
        [1] => plan.drive(acc, &|o, [ib]| {
            let n = o.len();
            for (o, y) in o.iter_mut().zip(&b[ib..ib + n]) {
                *o = f(o, y);
            }
        }),
        _ => plan.drive(acc, &|o, [ib]| {
            let y = &b[ib];
            for o in o.iter_mut() {
                *o = f(o, y);
            }
        }),
    }
    Ok(())
}

/// Fills `out`, in parallel chunks above [`PAR_THRESHOLD`] elements: `fill(chunk, start)` for
/// the elements `start..start + chunk.len()`. Generic only over the element type: the kernel
/// comes in as a `dyn` (one call per chunk of thousands of elements; callgrind counts the same
/// instructions as with it inlined), so rayon's machinery is compiled once per element type,
/// not once per kernel, where its 1,859 copies were 40% of the library's LLVM IR (`cargo
/// llvm-lines --release --lib`) and the library took three times as long to build.
fn chunks<O: Send>(out: &mut [O], fill: &(dyn Fn(&mut [O], usize) + Sync)) {
    let threads = rayon::current_num_threads();
    if out.len() < PAR_THRESHOLD || threads < 2 {
        fill(out, 0);
        return;
    }
    let chunk = (out.len() / (threads * 4)).max(PAR_THRESHOLD / 4);
    out.par_chunks_mut(chunk).enumerate().for_each(|(i, o)| fill(o, i * chunk));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesces_contiguous_axes() {
        // [64,256,56,56] + [1,256,1,1]: the two spatial axes merge; the channel axis stays.
        let p = Plan::new(&[64, 256, 56, 56], [&[64, 256, 56, 56][..], &[1, 256, 1, 1]]).unwrap();
        assert_eq!(p.dims(), &[64, 256, 3136]);
        assert_eq!(p.inner(), [1, 0]);
        // Same shapes collapse to one axis.
        let p = Plan::new(&[8, 12, 512], [&[8, 12, 512][..], &[8, 12, 512]]).unwrap();
        assert_eq!(p.dims(), &[8 * 12 * 512]);
        // [8,12,512,512] + [8,1,1,512]: axes 1 and 2 merge (broadcast in b, contiguous in a).
        let p = Plan::new(&[8, 12, 512, 512], [&[8, 12, 512, 512][..], &[8, 1, 1, 512]]).unwrap();
        assert_eq!(p.dims(), &[8, 12 * 512, 512]);
        // A scalar output still has one axis.
        let p = Plan::new(&[], [&[][..], &[]]).unwrap();
        assert_eq!((p.dims(), p.len()), (&[1][..], 1));
        assert!(Plan::new(&[3], [&[4][..]]).is_none());
        assert!(Plan::new(&[3], [&[1, 3][..]]).is_none());
        // An empty output whose inputs' strides pass usize (this refused a valid broadcast).
        let big = 1usize << 32;
        let p = Plan::new(&[0, big, big], [&[0, big, big][..], &[1, 1, big]]).unwrap();
        assert_eq!(p.len(), 0);
        assert!(Plan::new(&[0, big, big], [&[0, big, 2][..]]).is_none());
    }

    #[test]
    fn chunks_start_anywhere() {
        // Every split point of a broadcast gives the same result as one sequential pass.
        let a: Vec<u32> = (0..6).collect();
        let b: Vec<u32> = (0..4).map(|x| x * 100).collect();
        let plan = Plan::new(&[2, 3, 4], [&[2, 3, 1][..], &[4]]).unwrap();
        let mut want = vec![0u32; 24];
        plan.range(0, &mut want, &mut |o: &mut [u32], [ia, ib]: [usize; 2]| {
            for (i, o) in o.iter_mut().enumerate() {
                *o = a[ia] + b[ib + i];
            }
        });
        let naive: Vec<u32> = (0..24).map(|i| a[i / 4] + b[i % 4]).collect();
        assert_eq!(want, naive);
        for split in 0..24 {
            let mut got = vec![0u32; 24];
            let (lo, hi) = got.split_at_mut(split);
            let f = |o: &mut [u32], [ia, ib]: [usize; 2]| {
                for (i, o) in o.iter_mut().enumerate() {
                    *o = a[ia] + b[ib + i];
                }
            };
            plan.range(0, lo, &mut { f });
            plan.range(split, hi, &mut { f });
            assert_eq!(got, naive, "split at {split}");
        }
    }
}

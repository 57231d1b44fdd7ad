//! Comparing outputs (exact for integers, bools and strings; `|got - want| <= atol + rtol *
//! |want|` for floats, NaN matching NaN) and generating deterministic inputs from a model's
//! declared input types, for `test` and `verify`.

use std::collections::HashMap;

use half::{bf16, f16};

use super::tensor::{Data, HostTensor};
use crate::diag::Error;
use crate::dtype::DType;
use crate::ir::Model;
use crate::shape::Dim;

/// Float tolerance: the ONNX backend tests' defaults are `rtol = 1e-3`, `atol = 1e-7`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Tolerance {
    /// The ONNX backend tests' tolerance.
    pub const BACKEND: Tolerance = Tolerance { rtol: 1e-3, atol: 1e-7 };
    /// Exact equality (NaN still matches NaN).
    pub const EXACT: Tolerance = Tolerance { rtol: 0.0, atol: 0.0 };
}

fn floats_match(g: f64, w: f64, tol: Tolerance) -> bool {
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    if g.is_infinite() || w.is_infinite() {
        return g == w;
    }
    (g - w).abs() <= tol.atol + tol.rtol * w.abs()
}

/// Checks `got` against `want`: same element type and shape, then the elements. The error
/// says where the first mismatch is and how many elements differ.
pub fn compare(got: &HostTensor, want: &HostTensor, tol: Tolerance) -> Result<(), String> {
    if got.dtype() != want.dtype() {
        return Err(format!("element type {} != expected {}", got.dtype(), want.dtype()));
    }
    if got.shape != want.shape {
        return Err(format!("shape {:?} != expected {:?}", got.shape, want.shape));
    }
    fn report<T: std::fmt::Debug>(bad: Vec<usize>, got: &[T], want: &[T]) -> Result<(), String> {
        match bad.first() {
            None => Ok(()),
            Some(&i) => Err(format!(
                "{} of {} elements differ; first at flat index {i}: got {:?}, expected {:?}",
                bad.len(),
                want.len(),
                got[i],
                want[i]
            )),
        }
    }
    fn exact<T: PartialEq + std::fmt::Debug>(g: &[T], w: &[T]) -> Result<(), String> {
        report((0..w.len()).filter(|i| g[*i] != w[*i]).collect(), g, w)
    }
    fn approx<T: Copy + std::fmt::Debug>(g: &[T], w: &[T], tol: Tolerance, f: impl Fn(T) -> f64) -> Result<(), String> {
        report((0..w.len()).filter(|i| !floats_match(f(g[*i]), f(w[*i]), tol)).collect(), g, w)
    }
    match (&*got.data, &*want.data) {
        (Data::F16(g), Data::F16(w)) => approx(g, w, tol, f16::to_f64),
        (Data::BF16(g), Data::BF16(w)) => approx(g, w, tol, bf16::to_f64),
        (Data::F32(g), Data::F32(w)) => approx(g, w, tol, |x| x as f64),
        (Data::F64(g), Data::F64(w)) => approx(g, w, tol, |x| x),
        (Data::I8(g), Data::I8(w)) => exact(g, w),
        (Data::I16(g), Data::I16(w)) => exact(g, w),
        (Data::I32(g), Data::I32(w)) => exact(g, w),
        (Data::I64(g), Data::I64(w)) => exact(g, w),
        (Data::U8(g), Data::U8(w)) => exact(g, w),
        (Data::U16(g), Data::U16(w)) => exact(g, w),
        (Data::U32(g), Data::U32(w)) => exact(g, w),
        (Data::U64(g), Data::U64(w)) => exact(g, w),
        (Data::Bool(g), Data::Bool(w)) => exact(g, w),
        (Data::Str(g), Data::Str(w)) => exact(g, w),
        _ => Err("element types differ".into()),
    }
}

/// A small deterministic generator (SplitMix64).
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An integer in `lo..hi`.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo) as u64) as i64
    }
}

/// Deterministic inputs for every graph input of `model` that has no initializer, from its
/// declared type, by [`tensor_for`]. Symbolic dims take their value from `dims`.
pub fn generate(model: &Model, dims: &HashMap<String, i64>, budget: u64) -> Result<Vec<(String, HostTensor)>, Error> {
    let main = model.graph(Model::MAIN);
    let mut out = Vec::new();
    for info in &main.inputs {
        if model.value(info.value).initializer.is_some() {
            continue;
        }
        let name = model.name(info.value).to_string();
        let bad = |reason: String| Error::Tensor { tensor: name.clone(), reason };
        let ty = info.ty.as_ref().ok_or_else(|| bad("has no declared type to generate data for".into()))?;
        let dtype = ty.dtype().ok_or_else(|| bad("has no declared element type".into()))?;
        let shape = ty.shape().ok_or_else(|| bad("has no declared shape".into()))?;
        let shape: Vec<usize> = shape
            .iter()
            .map(|d| match d {
                Dim::Known(n) => usize::try_from(*n).map_err(|_| bad(format!("has a negative dim {n}"))),
                Dim::Term(t) => t
                    .eval(&|a| a.as_name().and_then(|n| dims.get(n)).copied())
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| bad(format!("dim '{t}' is symbolic; bind it with --dim {t}=N"))),
                Dim::Unknown => Err(bad("has an unknown dim; declare it or bind a symbol with --dim".into())),
            })
            .collect::<Result<_, _>>()?;
        out.push((name.clone(), tensor_for(&name, dtype, shape, budget)?));
    }
    Ok(out)
}

/// A deterministic tensor of `dtype` and `shape` for the value `name`: floats are multiples of
/// 1/8 in [-4, 4) (exact in every float type), signed integers in [-8, 8), unsigned in [0, 16),
/// bools and short strings at random. The stream is seeded by the name, so a value of the
/// same name gets the same data wherever it is generated.
pub fn tensor_for(name: &str, dtype: DType, shape: Vec<usize>, budget: u64) -> Result<HostTensor, Error> {
    let bad = |reason: String| Error::Tensor { tensor: name.to_string(), reason };
    let n = super::tensor::numel(&shape).ok_or_else(|| bad(format!("shape {shape:?} overflows")))?;
    let bytes = n as u128 * dtype.size().unwrap_or(24) as u128;
    if bytes > budget as u128 {
        return Err(Error::Budget { what: format!("generated input '{name}'"), bytes, budget });
    }
    let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let mut rng = Rng(seed);
    let mut fl = || (rng.int(-32, 32) as f64) / 8.0;
    let data = match dtype {
        DType::F16 => Data::F16((0..n).map(|_| f16::from_f64(fl())).collect()),
        DType::BF16 => Data::BF16((0..n).map(|_| bf16::from_f64(fl())).collect()),
        DType::F32 => {
            // Large inputs on huge pages, as numpy gives onnxruntime's inputs.
            let mut v = Vec::with_capacity(n);
            super::tensor::advise_huge(&v);
            v.extend((0..n).map(|_| fl() as f32));
            Data::F32(v)
        }
        DType::F64 => Data::F64((0..n).map(|_| fl()).collect()),
        DType::I8 => Data::I8((0..n).map(|_| rng.int(-8, 8) as i8).collect()),
        DType::I16 => Data::I16((0..n).map(|_| rng.int(-8, 8) as i16).collect()),
        DType::I32 => Data::I32((0..n).map(|_| rng.int(-8, 8) as i32).collect()),
        DType::I64 => Data::I64((0..n).map(|_| rng.int(-8, 8)).collect()),
        DType::U8 => Data::U8((0..n).map(|_| rng.int(0, 16) as u8).collect()),
        DType::U16 => Data::U16((0..n).map(|_| rng.int(0, 16) as u16).collect()),
        DType::U32 => Data::U32((0..n).map(|_| rng.int(0, 16) as u32).collect()),
        DType::U64 => Data::U64((0..n).map(|_| rng.int(0, 16) as u64).collect()),
        DType::Bool => Data::Bool((0..n).map(|_| rng.next() & 1 == 1).collect()),
        DType::Str => Data::Str((0..n).map(|_| format!("s{}", rng.int(0, 4)).into_bytes()).collect()),
        other => return Err(bad(format!("element type {other} cannot be generated"))),
    };
    HostTensor::new(shape, data).map_err(|f| f.into_error(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_and_nan() {
        let t = |v: Vec<f32>| HostTensor::from_vec(vec![v.len()], v).unwrap();
        assert!(compare(&t(vec![1.0, f32::NAN]), &t(vec![1.0005, f32::NAN]), Tolerance::BACKEND).is_ok());
        assert!(compare(&t(vec![1.0]), &t(vec![1.01]), Tolerance::BACKEND).is_err());
        assert!(compare(&t(vec![1.0]), &t(vec![1.0 + f32::EPSILON]), Tolerance::EXACT).is_err());
        assert!(compare(&t(vec![f32::INFINITY]), &t(vec![f32::NEG_INFINITY]), Tolerance::BACKEND).is_err());
        let i = |v: Vec<i32>| HostTensor::from_vec(vec![v.len()], v).unwrap();
        let e = compare(&i(vec![1, 2, 3]), &i(vec![1, 5, 6]), Tolerance::BACKEND).unwrap_err();
        assert!(e.starts_with("2 of 3 elements differ; first at flat index 1"), "{e}");
        assert!(compare(&i(vec![1]), &t(vec![1.0]), Tolerance::BACKEND).is_err());
    }
}

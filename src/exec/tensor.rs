//! Host tensors: a shape and typed contiguous storage for every element type the executor runs,
//! the element traits kernels are generic over, and conversion from IR tensors.

use std::path::Path;
use std::sync::Arc;

use half::{bf16, f16};

use super::Fail;
use crate::dtype::DType;
use crate::ir::{Tensor, TensorData};

/// A tensor's elements, contiguous in row-major order.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
    /// ONNX strings are byte strings.
    Str(Vec<Vec<u8>>),
}

/// A tensor held by the executor: a shape and shared, immutable data (so Reshape, Identity
/// and friends do not copy).
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    pub shape: Vec<usize>,
    pub data: Arc<Data>,
}

/// An element type the executor stores.
pub trait Elem: Clone + Default + Send + Sync + std::fmt::Debug + 'static {
    /// The ONNX type of this element.
    const DTYPE: DType;
    /// The elements, when `data` holds this type.
    fn slice(data: &Data) -> Option<&[Self]>;
    /// Wraps a vector of these elements.
    fn wrap(v: Vec<Self>) -> Data;
}

macro_rules! elem {
    ($t:ty, $variant:ident, $dtype:expr) => {
        impl Elem for $t {
            const DTYPE: DType = $dtype;
            fn slice(data: &Data) -> Option<&[Self]> {
                match data {
                    Data::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap(v: Vec<Self>) -> Data {
                Data::$variant(v)
            }
        }
    };
}

elem!(f16, F16, DType::F16);
elem!(bf16, BF16, DType::BF16);
elem!(f32, F32, DType::F32);
elem!(f64, F64, DType::F64);
elem!(i8, I8, DType::I8);
elem!(i16, I16, DType::I16);
elem!(i32, I32, DType::I32);
elem!(i64, I64, DType::I64);
elem!(u8, U8, DType::U8);
elem!(u16, U16, DType::U16);
elem!(u32, U32, DType::U32);
elem!(u64, U64, DType::U64);
elem!(bool, Bool, DType::Bool);
elem!(Vec<u8>, Str, DType::Str);

/// Runs `$body` with `$v` bound to the elements of `$data`, whatever their type.
macro_rules! with_any {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            $crate::exec::Data::F16($v) => $body,
            $crate::exec::Data::BF16($v) => $body,
            $crate::exec::Data::F32($v) => $body,
            $crate::exec::Data::F64($v) => $body,
            $crate::exec::Data::I8($v) => $body,
            $crate::exec::Data::I16($v) => $body,
            $crate::exec::Data::I32($v) => $body,
            $crate::exec::Data::I64($v) => $body,
            $crate::exec::Data::U8($v) => $body,
            $crate::exec::Data::U16($v) => $body,
            $crate::exec::Data::U32($v) => $body,
            $crate::exec::Data::U64($v) => $body,
            $crate::exec::Data::Bool($v) => $body,
            $crate::exec::Data::Str($v) => $body,
        }
    };
}
pub(crate) use with_any;

impl Data {
    /// The element type.
    pub fn dtype(&self) -> DType {
        fn of<T: Elem>(_: &[T]) -> DType {
            T::DTYPE
        }
        with_any!(self, v => of(v))
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        with_any!(self, v => v.len())
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a string element takes in memory besides its bytes: its vector.
pub const STRING_HEADER: u128 = std::mem::size_of::<Vec<u8>>() as u128;

impl HostTensor {
    /// A tensor of `shape` holding `data`; fails when the element count does not match.
    pub fn new(shape: Vec<usize>, data: Data) -> Result<HostTensor, Fail> {
        let n = numel(&shape).ok_or_else(|| Fail::Invalid(format!("shape {shape:?} overflows")))?;
        if n != data.len() {
            return Err(Fail::Invalid(format!("shape {shape:?} needs {n} elements, data has {}", data.len())));
        }
        Ok(HostTensor { shape, data: Arc::new(data) })
    }

    /// A tensor from typed elements.
    pub fn from_vec<T: Elem>(shape: Vec<usize>, v: Vec<T>) -> Result<HostTensor, Fail> {
        HostTensor::new(shape, T::wrap(v))
    }

    /// A scalar.
    pub fn scalar<T: Elem>(v: T) -> HostTensor {
        HostTensor { shape: Vec::new(), data: Arc::new(T::wrap(vec![v])) }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The same data viewed with another shape of the same element count.
    pub fn reshaped(&self, shape: Vec<usize>) -> Result<HostTensor, Fail> {
        let n = numel(&shape).ok_or_else(|| Fail::Invalid(format!("shape {shape:?} overflows")))?;
        if n != self.len() {
            return Err(Fail::Invalid(format!(
                "cannot view {} elements of shape {:?} as shape {shape:?}",
                self.len(),
                self.shape
            )));
        }
        Ok(HostTensor { shape, data: self.data.clone() })
    }

    /// The elements as `T`, when the tensor holds that type.
    pub fn elems<T: Elem>(&self) -> Option<&[T]> {
        T::slice(&self.data)
    }

    /// The elements of an integer tensor as i64 (shape operands: Reshape, Expand, Slice, ...).
    pub fn to_i64s(&self) -> Option<Vec<i64>> {
        Some(match &*self.data {
            Data::I64(v) => v.clone(),
            Data::I32(v) => v.iter().map(|x| *x as i64).collect(),
            Data::I16(v) => v.iter().map(|x| *x as i64).collect(),
            Data::I8(v) => v.iter().map(|x| *x as i64).collect(),
            Data::U8(v) => v.iter().map(|x| *x as i64).collect(),
            Data::U16(v) => v.iter().map(|x| *x as i64).collect(),
            Data::U32(v) => v.iter().map(|x| *x as i64).collect(),
            Data::U64(v) => v.iter().map(|x| i64::try_from(*x).ok()).collect::<Option<_>>()?,
            _ => return None,
        })
    }

    /// The bytes the elements take (strings count their lengths).
    pub fn bytes(&self) -> u128 {
        match &*self.data {
            Data::Str(v) => v.iter().map(|s| s.len() as u128 + STRING_HEADER).sum(),
            d => d.len() as u128 * d.dtype().size().unwrap_or(1) as u128,
        }
    }
}

/// Asks Linux to back a large buffer with transparent huge pages (on machines where they are
/// given only on request), which spares the TLB misses of streaming through it 4 KiB at a
/// time; call it before the pages are first touched. Only a hint: failures are ignored, and
/// elsewhere it does nothing.
pub fn advise_huge<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
        let start = v.as_ptr() as usize;
        let lo = start.next_multiple_of(HUGE);
        let hi = start.saturating_add(bytes) / HUGE * HUGE;
        if hi > lo {
            // SAFETY: [lo, hi) lies inside the vector's own allocation; MADV_HUGEPAGE changes
            // neither the contents nor the mapping's permissions, only how it is backed.
            unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// The number of elements of `shape`, or `None` on overflow. A shape with a 0 is empty
/// whatever its other sizes multiply to: (2^40, 2^40, 0) holds no element.
pub fn numel(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |acc, d| acc.checked_mul(*d))
}

fn budget_check(what: &str, n: usize, size: usize, budget: u64) -> Result<(), Fail> {
    let bytes = n as u128 * size as u128;
    if bytes > budget as u128 {
        return Err(Fail::Budget { what: what.to_string(), bytes, budget });
    }
    Ok(())
}

/// Decodes little-endian bytes of `dtype` into typed data; `what` names the tensor.
pub fn from_le_bytes(dtype: DType, bytes: &[u8], n: usize, what: &str) -> Result<Data, Fail> {
    let size = dtype.size().filter(|_| supported(dtype)).ok_or_else(|| unsupported(dtype))?;
    let want = n.checked_mul(size).ok_or_else(|| Fail::Invalid(format!("tensor '{what}': size overflows")))?;
    if bytes.len() != want {
        return Err(Fail::Invalid(format!(
            "tensor '{what}': {} bytes of raw data, {n} elements of {dtype} need {want}",
            bytes.len()
        )));
    }
    macro_rules! dec {
        ($t:ty, $variant:ident, $w:literal) => {
            Data::$variant(
                bytes.chunks_exact($w).map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or([0; $w]))).collect(),
            )
        };
    }
    Ok(match dtype {
        DType::F16 => dec!(f16, F16, 2),
        DType::BF16 => dec!(bf16, BF16, 2),
        DType::F32 => dec!(f32, F32, 4),
        DType::F64 => dec!(f64, F64, 8),
        DType::I8 => Data::I8(bytes.iter().map(|b| *b as i8).collect()),
        DType::I16 => dec!(i16, I16, 2),
        DType::I32 => dec!(i32, I32, 4),
        DType::I64 => dec!(i64, I64, 8),
        DType::U8 => Data::U8(bytes.to_vec()),
        DType::U16 => dec!(u16, U16, 2),
        DType::U32 => dec!(u32, U32, 4),
        DType::U64 => dec!(u64, U64, 8),
        DType::Bool => Data::Bool(bytes.iter().map(|b| *b != 0).collect()),
        other => return Err(unsupported(other)),
    })
}

fn supported(dtype: DType) -> bool {
    empty(dtype).is_some()
}

fn unsupported(dtype: DType) -> Fail {
    Fail::Unsupported(format!("element type {dtype}"))
}

/// Converts an IR tensor (initializer, attribute or `.pb` file) to a host tensor. External
/// data is read only from inside `dir` (the model's folder); no folder means it is refused.
/// The element count is checked against `budget` bytes before anything is allocated.
pub fn from_ir(t: &Tensor, dir: Option<&Path>, budget: u64) -> Result<HostTensor, Fail> {
    let what = t.name.as_str();
    let dtype = t.dtype.ok_or_else(|| Fail::Invalid(format!("tensor '{what}' has no element type")))?;
    if !supported(dtype) {
        return Err(unsupported(dtype));
    }
    let shape: Vec<usize> = t
        .dims
        .iter()
        .map(|d| usize::try_from(*d).ok())
        .collect::<Option<_>>()
        .ok_or_else(|| Fail::Invalid(format!("tensor '{what}' has a negative dim in {:?}", t.dims)))?;
    let n = numel(&shape).ok_or_else(|| Fail::Invalid(format!("tensor '{what}': {:?} overflows", t.dims)))?;
    budget_check(&format!("tensor '{what}'"), n, dtype.size().unwrap_or(24), budget)?;
    let bad_field = || Fail::Invalid(format!("tensor '{what}': its data field does not fit element type {dtype}"));
    // An inline field of `len` elements, which holds `dtype` when `holds`.
    let fits = |len: usize, holds: bool| {
        if len != n {
            Err(Fail::Invalid(format!("tensor '{what}' of shape {:?} holds {len} elements, not {n}", t.dims)))
        } else if !holds {
            Err(bad_field())
        } else {
            Ok(())
        }
    };
    let data = match &t.data {
        TensorData::Raw(b) if dtype != DType::Str => from_le_bytes(dtype, b, n, what)?,
        TensorData::External { location, offset, length } => {
            let dir = dir.ok_or_else(|| {
                Fail::Invalid(format!("tensor '{what}' has external data but no model folder to read it from"))
            })?;
            let bytes = crate::io::read_external(dir, what, location, *offset, *length)
                .map_err(|e| Fail::Invalid(e.to_string()))?;
            from_le_bytes(dtype, &bytes, n, what)?
        }
        TensorData::Floats(v) => {
            fits(v.len(), dtype == DType::F32)?;
            Data::F32(v.clone())
        }
        TensorData::Doubles(v) => {
            fits(v.len(), dtype == DType::F64)?;
            Data::F64(v.clone())
        }
        TensorData::Int64s(v) => {
            fits(v.len(), dtype == DType::I64)?;
            Data::I64(v.clone())
        }
        TensorData::Uint64s(v) => {
            fits(v.len(), true)?;
            match dtype {
                DType::U64 => Data::U64(v.clone()),
                DType::U32 => Data::U32(v.iter().map(|x| *x as u32).collect()),
                _ => return Err(bad_field()),
            }
        }
        TensorData::Int32s(v) => {
            fits(v.len(), true)?;
            match dtype {
                DType::I32 => Data::I32(v.clone()),
                DType::I16 => Data::I16(v.iter().map(|x| *x as i16).collect()),
                DType::I8 => Data::I8(v.iter().map(|x| *x as i8).collect()),
                DType::U16 => Data::U16(v.iter().map(|x| *x as u16).collect()),
                DType::U8 => Data::U8(v.iter().map(|x| *x as u8).collect()),
                DType::Bool => Data::Bool(v.iter().map(|x| *x != 0).collect()),
                DType::F16 => Data::F16(v.iter().map(|x| f16::from_bits(*x as u16)).collect()),
                DType::BF16 => Data::BF16(v.iter().map(|x| bf16::from_bits(*x as u16)).collect()),
                _ => return Err(bad_field()),
            }
        }
        TensorData::Strings(v) => {
            fits(v.len(), dtype == DType::Str)?;
            Data::Str(v.clone())
        }
        TensorData::Empty if n == 0 => empty(dtype).ok_or_else(|| unsupported(dtype))?,
        TensorData::Empty | TensorData::Raw(_) => {
            return Err(Fail::Invalid(format!("tensor '{what}' of shape {:?} holds no usable data", t.dims)))
        }
    };
    HostTensor::new(shape, data)
}

/// An empty vector of the given type, for tensors with no elements; `None` for the types the
/// executor does not store.
pub fn empty(dtype: DType) -> Option<Data> {
    Some(match dtype {
        DType::F16 => Data::F16(Vec::new()),
        DType::BF16 => Data::BF16(Vec::new()),
        DType::F32 => Data::F32(Vec::new()),
        DType::F64 => Data::F64(Vec::new()),
        DType::I8 => Data::I8(Vec::new()),
        DType::I16 => Data::I16(Vec::new()),
        DType::I32 => Data::I32(Vec::new()),
        DType::I64 => Data::I64(Vec::new()),
        DType::U8 => Data::U8(Vec::new()),
        DType::U16 => Data::U16(Vec::new()),
        DType::U32 => Data::U32(Vec::new()),
        DType::U64 => Data::U64(Vec::new()),
        DType::Bool => Data::Bool(Vec::new()),
        DType::Str => Data::Str(Vec::new()),
        _ => return None,
    })
}

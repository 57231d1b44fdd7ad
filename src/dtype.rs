//! Element types: the ONNX `TensorProto.DataType` codes, their numpy names and byte sizes.

use std::fmt;

/// An ONNX element type. Codes not known to this build are kept as `Other(code)` so they
/// round-trip and render, instead of being refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    F32,
    U8,
    I8,
    U16,
    I16,
    I32,
    I64,
    Str,
    Bool,
    F16,
    F64,
    U32,
    U64,
    C64,
    C128,
    BF16,
    /// Any other code of `TensorProto.DataType` (float8, int4, ...), or an unknown one.
    Other(i32),
}

impl DType {
    /// The last `TensorProto.DataType` code onnx 1.23 defines (FLOAT6E3M2).
    pub const LAST_CODE: i32 = 28;

    /// The type for an ONNX `data_type` / `elem_type` code; `None` for 0 (UNDEFINED).
    pub fn from_onnx(code: i32) -> Option<DType> {
        Some(match code {
            0 => return None,
            1 => DType::F32,
            2 => DType::U8,
            3 => DType::I8,
            4 => DType::U16,
            5 => DType::I16,
            6 => DType::I32,
            7 => DType::I64,
            8 => DType::Str,
            9 => DType::Bool,
            10 => DType::F16,
            11 => DType::F64,
            12 => DType::U32,
            13 => DType::U64,
            14 => DType::C64,
            15 => DType::C128,
            16 => DType::BF16,
            other => DType::Other(other),
        })
    }

    /// The ONNX `data_type` code.
    pub fn onnx(self) -> i32 {
        match self {
            DType::F32 => 1,
            DType::U8 => 2,
            DType::I8 => 3,
            DType::U16 => 4,
            DType::I16 => 5,
            DType::I32 => 6,
            DType::I64 => 7,
            DType::Str => 8,
            DType::Bool => 9,
            DType::F16 => 10,
            DType::F64 => 11,
            DType::U32 => 12,
            DType::U64 => 13,
            DType::C64 => 14,
            DType::C128 => 15,
            DType::BF16 => 16,
            DType::Other(code) => code,
        }
    }

    /// numpy's name for the type (`float32`, `int64`, `bool`, ...); ONNX-only types use the
    /// lower-cased ONNX name (`float8e4m3fn`, `int4`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::U16 => "uint16",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::Str => "string",
            DType::Bool => "bool",
            DType::F16 => "float16",
            DType::F64 => "float64",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
            DType::BF16 => "bfloat16",
            DType::Other(17) => "float8e4m3fn",
            DType::Other(18) => "float8e4m3fnuz",
            DType::Other(19) => "float8e5m2",
            DType::Other(20) => "float8e5m2fnuz",
            DType::Other(21) => "uint4",
            DType::Other(22) => "int4",
            DType::Other(23) => "float4e2m1",
            DType::Other(24) => "float8e8m0",
            DType::Other(25) => "uint2",
            DType::Other(26) => "int2",
            DType::Other(27) => "float6e2m3",
            DType::Other(28) => "float6e3m2",
            DType::Other(_) => "unknown",
        }
    }

    /// The type with numpy name `name`, the inverse of [`DType::name`].
    pub fn from_name(name: &str) -> Option<DType> {
        (1..=28).filter_map(DType::from_onnx).find(|d| d.name() == name)
    }

    /// Bytes per element for fixed-size types with a byte-aligned layout; `None` for strings
    /// and sub-byte types.
    pub fn size(self) -> Option<usize> {
        Some(match self {
            DType::U8 | DType::I8 | DType::Bool => 1,
            DType::U16 | DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 | DType::C64 => 8,
            DType::C128 => 16,
            DType::Other(17..=20) | DType::Other(24) => 1,
            DType::Str | DType::Other(_) => return None,
        })
    }

    /// True for floating-point types (including float16 and bfloat16).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::Other(17..=20 | 23 | 24 | 27 | 28))
    }

    /// `x` rounded to this floating-point type, as onnxruntime holds the element; `None` for
    /// the float8 and float4 types (not rounded here) and non-float types.
    pub fn round_float(self, x: f64) -> Option<f64> {
        match self {
            DType::F64 => Some(x),
            DType::F32 => Some(x as f32 as f64),
            DType::F16 => Some(half::f16::from_f64(x).to_f64()),
            DType::BF16 => Some(half::bf16::from_f64(x).to_f64()),
            _ => None,
        }
    }

    /// True for signed and unsigned integer types.
    pub fn is_int(self) -> bool {
        matches!(
            self,
            DType::U8
                | DType::I8
                | DType::U16
                | DType::I16
                | DType::I32
                | DType::I64
                | DType::U32
                | DType::U64
                | DType::Other(21 | 22 | 25 | 26)
        )
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DType::Other(code) if self.name() == "unknown" => write!(f, "dtype{code}"),
            _ => f.write_str(self.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for code in 1..=28 {
            let d = DType::from_onnx(code).unwrap();
            assert_eq!(d.onnx(), code);
            assert_eq!(DType::from_name(d.name()), Some(d), "{code}");
        }
        assert_eq!(DType::from_onnx(0), None);
        assert_eq!(DType::F32.name(), "float32");
        assert_eq!(DType::Bool.name(), "bool");
    }
}

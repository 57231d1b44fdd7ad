//! Element semantics: arithmetic with each ONNX op's rules per type (wrapping integers,
//! truncating division, numpy's and C's remainders, NaN-propagating max/min) and the
//! conversions Cast uses. Kernels are generic over these traits.

use half::{bf16, f16};

use super::tensor::Elem;

/// How a type converts: through f64, i64 or u64 (bool converts through u64 as 0/1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Float,
    Signed,
    Unsigned,
    Bool,
}

/// Conversions between the numeric types and bool, with C/numpy cast semantics (float to
/// integer truncates; integer to integer wraps; to bool is `!= 0`).
pub trait Conv: Elem + Copy {
    const KIND: Kind;
    fn to_f64(self) -> f64;
    fn to_i64(self) -> i64;
    fn to_u64(self) -> u64;
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
    fn from_u64(v: u64) -> Self;

    /// `v` of another type converted to this one.
    #[inline(always)]
    fn cast<S: Conv>(v: S) -> Self {
        match S::KIND {
            Kind::Float => Self::from_f64(v.to_f64()),
            Kind::Signed => Self::from_i64(v.to_i64()),
            Kind::Unsigned | Kind::Bool => Self::from_u64(v.to_u64()),
        }
    }
}

/// A numeric element: the arithmetic of the broadcasting family.
pub trait Num: Conv + PartialOrd {
    const FLOAT: bool;
    fn zero() -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// Division; integers truncate toward zero, and divide by zero gives 0 (as numpy).
    fn div(self, o: Self) -> Self;
    /// numpy's `mod`: the result takes the divisor's sign (Mod with `fmod=0`).
    fn modulo(self, o: Self) -> Self;
    /// C's `fmod`: the result takes the dividend's sign (Mod with `fmod=1`).
    fn fmod(self, o: Self) -> Self;
    fn is_nan(self) -> bool;
    /// The larger value; NaN if either is NaN.
    #[inline(always)]
    fn maxn(self, o: Self) -> Self {
        if self.is_nan() || o.is_nan() {
            return if self.is_nan() { self } else { o };
        }
        if o > self {
            o
        } else {
            self
        }
    }
    /// The smaller value; NaN if either is NaN.
    #[inline(always)]
    fn minn(self, o: Self) -> Self {
        if self.is_nan() || o.is_nan() {
            return if self.is_nan() { self } else { o };
        }
        if o < self {
            o
        } else {
            self
        }
    }
}

/// An integer element: bitwise ops and shifts.
pub trait Int: Num {
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    /// BitShift LEFT: shifts of a negative amount or of the width or more give 0.
    fn shl(self, by: Self) -> Self;
    /// BitShift RIGHT (arithmetic for signed types): out-of-range shifts give 0, or -1 for a
    /// negative signed value.
    fn shr(self, by: Self) -> Self;
}

/// `Conv` by `as` casts (the integers, f32 and f64).
macro_rules! conv_as {
    ($t:ty, $kind:expr) => {
        impl Conv for $t {
            const KIND: Kind = $kind;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
        }
    };
}

/// Binary ops of a `Num` or `Int` impl, each `#[inline(always)]`: `name(a, b) = expr`, `a`
/// standing for `self`.
macro_rules! binops {
    ($($op:ident($a:ident, $b:ident) = $e:expr;)*) => {
        $(
            #[inline(always)]
            fn $op(self, $b: Self) -> Self {
                let $a = self;
                $e
            }
        )*
    };
}

macro_rules! int {
    ($t:ty, $kind:expr) => {
        conv_as!($t, $kind);
        impl Num for $t {
            const FLOAT: bool = false;
            #[inline(always)]
            fn zero() -> Self {
                0
            }
            binops! {
                add(a, o) = a.wrapping_add(o);
                sub(a, o) = a.wrapping_sub(o);
                mul(a, o) = a.wrapping_mul(o);
                div(a, o) = if o == 0 { 0 } else { a.wrapping_div(o) };
                fmod(a, o) = if o == 0 { 0 } else { a.wrapping_rem(o) };
            }
            #[inline(always)]
            fn modulo(self, o: Self) -> Self {
                if o == 0 {
                    return 0;
                }
                let r = self.wrapping_rem(o);
                #[allow(unused_comparisons)]
                if r != 0 && ((r < 0) != (o < 0)) {
                    r.wrapping_add(o)
                } else {
                    r
                }
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
        }
        impl Int for $t {
            binops! {
                and(a, o) = a & o;
                or(a, o) = a | o;
                xor(a, o) = a ^ o;
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shl(self, by: Self) -> Self {
                if by < 0 || (by as u64) >= Self::BITS as u64 {
                    0
                } else {
                    self.wrapping_shl(by as u32)
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shr(self, by: Self) -> Self {
                if by < 0 || (by as u64) >= Self::BITS as u64 {
                    if self < 0 {
                        (0 as $t).wrapping_sub(1)
                    } else {
                        0
                    }
                } else {
                    self.wrapping_shr(by as u32)
                }
            }
        }
    };
}

int!(i8, Kind::Signed);
int!(i16, Kind::Signed);
int!(i32, Kind::Signed);
int!(i64, Kind::Signed);
int!(u8, Kind::Unsigned);
int!(u16, Kind::Unsigned);
int!(u32, Kind::Unsigned);
int!(u64, Kind::Unsigned);

impl Conv for bool {
    const KIND: Kind = Kind::Bool;
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn to_u64(self) -> u64 {
        self as u64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn from_u64(v: u64) -> Self {
        v != 0
    }
}

macro_rules! float_native {
    ($t:ty) => {
        conv_as!($t, Kind::Float);
        impl Num for $t {
            const FLOAT: bool = true;
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
            binops! {
                add(a, o) = a + o;
                sub(a, o) = a - o;
                mul(a, o) = a * o;
                div(a, o) = a / o;
                fmod(a, o) = a % o;
            }
            /// numpy's float `mod` (npy_divmod): fmod, then moved into the divisor's sign; a
            /// zero result takes the divisor's sign.
            #[inline(always)]
            fn modulo(self, o: Self) -> Self {
                let m = self % o;
                if o == 0.0 {
                    m
                } else if m == 0.0 {
                    (0.0 as $t).copysign(o)
                } else if (o < 0.0) != (m < 0.0) {
                    m + o
                } else {
                    m
                }
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.is_nan()
            }
        }
    };
}

float_native!(f32);
float_native!(f64);

/// Binary `Num` ops of a half type: f32's op on the operands widened to f32, rounded back.
macro_rules! via_f32 {
    ($t:ty: $($op:ident)*) => {
        $(
            #[inline(always)]
            fn $op(self, o: Self) -> Self {
                <$t>::from_f32(Num::$op(self.to_f32(), o.to_f32()))
            }
        )*
    };
}

macro_rules! float_half {
    ($t:ty) => {
        impl Conv for $t {
            const KIND: Kind = Kind::Float;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.to_f64()
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self.to_f32() as i64
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self.to_f32() as u64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$t>::from_f64(v)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                <$t>::from_f64(v as f64)
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                <$t>::from_f64(v as f64)
            }
        }
        impl Num for $t {
            const FLOAT: bool = true;
            #[inline(always)]
            fn zero() -> Self {
                <$t>::ZERO
            }
            via_f32!($t: add sub mul div modulo fmod);
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.is_nan()
            }
        }
    };
}

float_half!(f16);
float_half!(bf16);

/// `base ^ exp` for Pow: integer powers wrap (negative exponents give 0 except for bases 1
/// and -1); with a float on either side the power is taken in f64 and converted to the
/// base's type, as numpy's `power(a, b).astype(a.dtype)`.
#[inline(always)]
pub fn pow<T: Num, U: Num>(base: T, exp: U) -> T {
    if T::FLOAT || U::FLOAT {
        return T::from_f64(base.to_f64().powf(exp.to_f64()));
    }
    let e: i128 = if U::KIND == Kind::Unsigned { exp.to_u64() as i128 } else { exp.to_i64() as i128 };
    let one = T::from_i64(1);
    if e < 0 {
        let b = base.to_i64();
        return match b {
            1 => one,
            -1 if T::KIND == Kind::Signed => {
                if e % 2 == 0 {
                    one
                } else {
                    base
                }
            }
            _ => T::zero(),
        };
    }
    let mut e = e as u128;
    let mut acc = one;
    let mut b = base;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.mul(b);
        }
        b = b.mul(b);
        e >>= 1;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remainders_follow_numpy_and_c() {
        // numpy: np.mod(-7, 3) == 2, np.mod(7, -3) == -2, np.fmod(-7, 3) == -1.
        assert_eq!((-7i32).modulo(3), 2);
        assert_eq!(7i32.modulo(-3), -2);
        assert_eq!((-7i32).fmod(3), -1);
        assert_eq!(i32::MIN.modulo(-1), 0);
        assert_eq!(5u8.modulo(0), 0);
        assert_eq!((-7.5f64).modulo(2.0), 0.5);
        assert_eq!((-7.5f64).fmod(2.0), -1.5);
        assert!((0.0f64).modulo(-2.0).is_sign_negative());
        assert_eq!((-1.0f64).modulo(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn integer_division_truncates() {
        assert_eq!((-7i64).div(2), -3);
        assert_eq!(7i8.div(-2), -3);
        assert_eq!(i8::MIN.div(-1), i8::MIN);
        assert_eq!(1u32.div(0), 0);
    }

    #[test]
    fn shifts_and_nan() {
        assert_eq!(1i8.shl(7), -128);
        assert_eq!(1i8.shl(8), 0);
        assert_eq!((-16i8).shr(2), -4);
        assert_eq!((-16i8).shr(9), -1);
        assert_eq!(16u8.shr(-1i8 as u8), 0);
        assert!(1.0f32.maxn(f32::NAN).is_nan());
        assert!(f32::NAN.minn(1.0).is_nan());
        assert_eq!(pow(2i32, 10i64), 1024);
        assert_eq!(pow(2i64, -1i64), 0);
        assert_eq!(pow(-1i32, -3i32), -1);
        assert_eq!(pow(3i32, 0.5f32), 1);
    }
}

//! The rows of the op table and the custom shape rules they name.

use super::{Ctx, OpDef, Out, RuleError, ShapeRule as S, TypeRule as T};
use crate::dtype::DType;
use crate::ir::AttrValue;
use crate::shape::{uni, Dim, Type};

const fn row(op: &'static str, since: i64, shape: S, ty: T) -> OpDef {
    OpDef { op, domain: "", since, shape, ty }
}

const BOOL: T = T::Fixed(DType::Bool);

/// Every op the pass knows, in the default domain unless a row says otherwise.
pub static TABLE: &[OpDef] = &[
    // The broadcasting family. Before opset 7 the binary ones used the `broadcast`/`axis`
    // attributes; before opset 8 the N-ary ones took equal shapes only.
    row("Add", 1, S::Legacy, T::SameAs(0)),
    row("Add", 7, S::Multi, T::SameAs(0)),
    row("Sub", 1, S::Legacy, T::SameAs(0)),
    row("Sub", 7, S::Multi, T::SameAs(0)),
    row("Mul", 1, S::Legacy, T::SameAs(0)),
    row("Mul", 7, S::Multi, T::SameAs(0)),
    row("Div", 1, S::Legacy, T::SameAs(0)),
    row("Div", 7, S::Multi, T::SameAs(0)),
    row("Pow", 1, S::Legacy, T::SameAs(0)),
    row("Pow", 7, S::Multi, T::SameAs(0)),
    row("Mod", 10, S::Multi, T::SameAs(0)),
    row("BitShift", 11, S::Multi, T::SameAs(0)),
    row("And", 1, S::Legacy, BOOL),
    row("And", 7, S::Multi, BOOL),
    row("Or", 1, S::Legacy, BOOL),
    row("Or", 7, S::Multi, BOOL),
    row("Xor", 1, S::Legacy, BOOL),
    row("Xor", 7, S::Multi, BOOL),
    row("BitwiseAnd", 18, S::Multi, T::SameAs(0)),
    row("BitwiseOr", 18, S::Multi, T::SameAs(0)),
    row("BitwiseXor", 18, S::Multi, T::SameAs(0)),
    row("Equal", 1, S::Legacy, BOOL),
    row("Equal", 7, S::Multi, BOOL),
    row("Greater", 1, S::Legacy, BOOL),
    row("Greater", 7, S::Multi, BOOL),
    row("Less", 1, S::Legacy, BOOL),
    row("Less", 7, S::Multi, BOOL),
    row("GreaterOrEqual", 12, S::Multi, BOOL),
    row("LessOrEqual", 12, S::Multi, BOOL),
    row("Max", 1, S::Equal, T::SameAs(0)),
    row("Max", 8, S::Multi, T::SameAs(0)),
    row("Min", 1, S::Equal, T::SameAs(0)),
    row("Min", 8, S::Multi, T::SameAs(0)),
    row("Sum", 1, S::Equal, T::SameAs(0)),
    row("Sum", 8, S::Multi, T::SameAs(0)),
    row("Mean", 1, S::Equal, T::SameAs(0)),
    row("Mean", 8, S::Multi, T::SameAs(0)),
    row("Where", 9, S::Multi, T::SameAs(1)),
    row("Expand", 8, S::Expand, T::SameAs(0)),
    row("PRelu", 1, S::Uni { to: 0, from: 1 }, T::SameAs(0)),
    row("Gemm", 1, S::Custom(gemm), T::SameAs(0)),
    // Ops that let small models flow.
    row("Constant", 1, S::Custom(constant), T::Custom),
    row("Identity", 1, S::Custom(identity), T::SameAs(0)),
    row("Cast", 1, S::Custom(identity), T::AttrTo),
    row("CastLike", 15, S::Custom(identity), T::SameAs(1)),
    row("Shape", 1, S::Custom(shape), T::Fixed(DType::I64)),
    row("Size", 1, S::Custom(size), T::Fixed(DType::I64)),
    // Unary elementwise ops.
    row("Abs", 1, S::SameAs(0), T::SameAs(0)),
    row("Neg", 1, S::SameAs(0), T::SameAs(0)),
    row("Exp", 1, S::SameAs(0), T::SameAs(0)),
    row("Log", 1, S::SameAs(0), T::SameAs(0)),
    row("Sqrt", 1, S::SameAs(0), T::SameAs(0)),
    row("Reciprocal", 1, S::SameAs(0), T::SameAs(0)),
    row("Floor", 1, S::SameAs(0), T::SameAs(0)),
    row("Ceil", 1, S::SameAs(0), T::SameAs(0)),
    row("Round", 11, S::SameAs(0), T::SameAs(0)),
    row("Sign", 9, S::SameAs(0), T::SameAs(0)),
    row("Relu", 1, S::SameAs(0), T::SameAs(0)),
    row("LeakyRelu", 1, S::SameAs(0), T::SameAs(0)),
    row("Elu", 1, S::SameAs(0), T::SameAs(0)),
    row("Selu", 1, S::SameAs(0), T::SameAs(0)),
    row("Celu", 12, S::SameAs(0), T::SameAs(0)),
    row("ThresholdedRelu", 10, S::SameAs(0), T::SameAs(0)),
    row("Sigmoid", 1, S::SameAs(0), T::SameAs(0)),
    row("HardSigmoid", 1, S::SameAs(0), T::SameAs(0)),
    row("HardSwish", 14, S::SameAs(0), T::SameAs(0)),
    row("Tanh", 1, S::SameAs(0), T::SameAs(0)),
    row("Softplus", 1, S::SameAs(0), T::SameAs(0)),
    row("Softsign", 1, S::SameAs(0), T::SameAs(0)),
    row("Mish", 18, S::SameAs(0), T::SameAs(0)),
    row("Gelu", 20, S::SameAs(0), T::SameAs(0)),
    row("Erf", 9, S::SameAs(0), T::SameAs(0)),
    row("Sin", 7, S::SameAs(0), T::SameAs(0)),
    row("Cos", 7, S::SameAs(0), T::SameAs(0)),
    row("Tan", 7, S::SameAs(0), T::SameAs(0)),
    row("Asin", 7, S::SameAs(0), T::SameAs(0)),
    row("Acos", 7, S::SameAs(0), T::SameAs(0)),
    row("Atan", 7, S::SameAs(0), T::SameAs(0)),
    row("Sinh", 9, S::SameAs(0), T::SameAs(0)),
    row("Cosh", 9, S::SameAs(0), T::SameAs(0)),
    row("Asinh", 9, S::SameAs(0), T::SameAs(0)),
    row("Acosh", 9, S::SameAs(0), T::SameAs(0)),
    row("Atanh", 9, S::SameAs(0), T::SameAs(0)),
    row("Not", 1, S::SameAs(0), BOOL),
    row("BitwiseNot", 18, S::SameAs(0), T::SameAs(0)),
    row("IsNaN", 9, S::SameAs(0), BOOL),
    row("IsInf", 10, S::SameAs(0), BOOL),
    row("Clip", 1, S::SameAs(0), T::SameAs(0)),
];

/// One output of type `ty`.
fn one(ty: Type) -> Out {
    Out { types: vec![Some(ty)], ..Out::default() }
}

fn identity(c: &Ctx) -> Result<Out, RuleError> {
    let mut out = one(Type::tensor(c.dtype(0), c.shape(0).map(<[Dim]>::to_vec)));
    if let Some(ty) = c.inputs.first().copied().flatten() {
        if !matches!(ty, Type::Tensor { .. }) {
            out.types[0] = Some(ty.clone());
        }
    }
    // Integer contents pass through Identity and integer-to-integer Cast.
    let to_int = match c.node.attr_int("to").and_then(|t| i32::try_from(t).ok()) {
        Some(code) => DType::from_onnx(code).is_some_and(DType::is_int),
        None => c.node.op_type == "Identity",
    };
    out.values = vec![c.value(0).filter(|_| to_int).map(<[Dim]>::to_vec)];
    Ok(out)
}

/// Elements above this many are not tracked as shape-tensor contents.
pub const MAX_TRACKED: usize = 1024;

fn constant(c: &Ctx) -> Result<Out, RuleError> {
    let Some(attr) = c.node.attrs.first() else {
        return Err(RuleError::Invalid("Constant has no value attribute".into()));
    };
    let ints = |v: &[i64]| Some(v.iter().map(|x| Dim::Known(*x)).collect::<Vec<_>>());
    let (dtype, shape, value) = match (&attr.name[..], &attr.value) {
        ("value", AttrValue::Tensor(t)) => {
            let dims: Option<Vec<Dim>> = t.dims.iter().map(|d| (*d >= 0).then_some(Dim::Known(*d))).collect();
            let value = t.ints(MAX_TRACKED).and_then(|v| ints(&v));
            (t.dtype, dims, value)
        }
        ("value_float", AttrValue::Float(_)) => (Some(DType::F32), Some(vec![]), None),
        ("value_floats", AttrValue::Floats(v)) => (Some(DType::F32), Some(vec![Dim::Known(v.len() as i64)]), None),
        ("value_int", AttrValue::Int(i)) => (Some(DType::I64), Some(vec![]), ints(&[*i])),
        ("value_ints", AttrValue::Ints(v)) => {
            (Some(DType::I64), Some(vec![Dim::Known(v.len() as i64)]), ints(v).filter(|v| v.len() <= MAX_TRACKED))
        }
        ("value_string", AttrValue::String(_)) => (Some(DType::Str), Some(vec![]), None),
        ("value_strings", AttrValue::Strings(v)) => (Some(DType::Str), Some(vec![Dim::Known(v.len() as i64)]), None),
        ("sparse_value", _) => (None, None, None),
        (name, _) => return Err(RuleError::Invalid(format!("Constant has an unexpected attribute '{name}'"))),
    };
    let mut out = one(Type::tensor(dtype, shape));
    out.values = vec![value];
    Ok(out)
}

fn shape(c: &Ctx) -> Result<Out, RuleError> {
    let Some(s) = c.shape(0) else {
        return Ok(one(Type::tensor(Some(DType::I64), Some(vec![Dim::Unknown]))));
    };
    let rank = s.len() as i64;
    let clamp = |v: i64| if v < 0 { (v + rank).max(0) } else { v.min(rank) };
    let start = clamp(c.node.attr_int("start").unwrap_or(0)) as usize;
    let end = clamp(c.node.attr_int("end").unwrap_or(rank)) as usize;
    let picked: Vec<Dim> = s.get(start..end.max(start)).unwrap_or(&[]).to_vec();
    let mut out = one(Type::tensor(Some(DType::I64), Some(vec![Dim::Known(picked.len() as i64)])));
    out.values = vec![Some(picked)];
    Ok(out)
}

fn size(c: &Ctx) -> Result<Out, RuleError> {
    let mut out = one(Type::tensor(Some(DType::I64), Some(vec![])));
    let n = c.shape(0).and_then(|s| s.iter().try_fold(1i64, |acc, d| acc.checked_mul(d.known()?)));
    out.values = vec![n.map(|n| vec![Dim::Known(n)])];
    Ok(out)
}

/// Gemm: `Y[M,N] = alpha * A' B' + beta * C`, C stretching unidirectionally to `[M,N]` (with
/// `broadcast=1` before opset 7, where without it C must be `[M,N]`).
fn gemm(c: &Ctx) -> Result<Out, RuleError> {
    let (Some(a), Some(b)) = (c.shape(0), c.shape(1)) else {
        return Ok(one(Type::tensor(c.dtype(0), Some(vec![Dim::Unknown, Dim::Unknown]))));
    };
    if a.len() != 2 || b.len() != 2 {
        return Err(RuleError::Invalid(format!("Gemm needs 2-D A and B, got ranks {} and {}", a.len(), b.len())));
    }
    let trans = |n| c.node.attr_int(n).unwrap_or(0) != 0;
    let (m, ka) = if trans("transA") { (&a[1], &a[0]) } else { (&a[0], &a[1]) };
    let (kb, n) = if trans("transB") { (&b[1], &b[0]) } else { (&b[0], &b[1]) };
    if let (Dim::Known(x), Dim::Known(y)) = (ka, kb) {
        if x != y {
            return Err(RuleError::Invalid(format!("Gemm's inner dimensions differ: {x} and {y}")));
        }
    }
    let y = vec![m.clone(), n.clone()];
    let mut out = one(Type::tensor(c.dtype(0), Some(y.clone())));
    if let Some(cs) = c.shape(2) {
        let legacy_strict = c.opset < 7 && c.node.attr_int("broadcast").unwrap_or(0) == 0;
        if legacy_strict {
            if cs.len() != 2 || crate::shape::multi(&[cs, &y]).map(|b| b.shape != y).unwrap_or(true) {
                return Err(RuleError::Invalid(format!(
                    "without broadcast=1, Gemm's C must be [M, N] = {}, got {}",
                    crate::shape::render(&y),
                    crate::shape::render(cs)
                )));
            }
        } else {
            out.assumptions = uni(&y, cs, 2).map_err(RuleError::Broadcast)?.assumptions;
        }
    }
    Ok(out)
}

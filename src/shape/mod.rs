//! Dims, shapes and the broadcasting rules. Imports nothing from the IR: every broadcasting
//! decision of the program is made here.

pub mod arith;
mod broadcast;
mod dim;
mod growth;
mod parse;
mod term;

pub use arith::slice_range;
pub use broadcast::{expand, in_dim, legacy, legacy_dims, multi, uni, Broadcast, BroadcastDim, BroadcastError};
pub use dim::{render, Assumption, Dim, Rendered};
pub use growth::{lcm, Growth, MAX_PERIOD};
pub use parse::{parse, MAX_TEXT};
pub use term::{Term, MAX_NODES};

/// A shape as inference knows it.
pub type Shape = Vec<Dim>;

use crate::dtype::DType;

/// The type of a value as declared in a model or inferred: a tensor with an element type and
/// shape (each may be unknown), a sequence or optional of such, or something else (map, sparse
/// tensor, opaque) that this pass does not look into.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Tensor { dtype: Option<DType>, shape: Option<Shape> },
    Sequence(Option<Box<Type>>),
    Optional(Option<Box<Type>>),
    Other,
}

impl std::fmt::Display for Type {
    /// `float32[batch, 3]`; `?` for what is unknown (`?[..]`: not even the rank).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Type::Tensor { dtype, shape } => {
                f.write_str(dtype.map(DType::name).unwrap_or("?"))?;
                match shape {
                    Some(s) => write!(f, "{}", Rendered(s)),
                    None => f.write_str("[..]"),
                }
            }
            Type::Sequence(_) => f.write_str("sequence"),
            Type::Optional(_) => f.write_str("optional"),
            Type::Other => f.write_str("other"),
        }
    }
}

impl Type {
    /// A tensor type.
    pub fn tensor(dtype: Option<DType>, shape: Option<Shape>) -> Type {
        Type::Tensor { dtype, shape }
    }

    /// The element type, for a tensor.
    pub fn dtype(&self) -> Option<DType> {
        match self {
            Type::Tensor { dtype, .. } => *dtype,
            _ => None,
        }
    }

    /// The type with every symbol named in `bindings` replaced by its value (`--dim`).
    pub fn bind(&self, bindings: &std::collections::HashMap<String, i64>) -> Type {
        self.map_dims(&|d| d.bind(bindings))
    }

    /// The type with `f` applied to every dim of every tensor in it.
    pub fn map_dims(&self, f: &impl Fn(&Dim) -> Dim) -> Type {
        match self {
            Type::Tensor { dtype, shape } => {
                Type::Tensor { dtype: *dtype, shape: shape.as_ref().map(|s| s.iter().map(f).collect()) }
            }
            Type::Sequence(e) => Type::Sequence(e.as_ref().map(|t| Box::new(t.map_dims(f)))),
            Type::Optional(e) => Type::Optional(e.as_ref().map(|t| Box::new(t.map_dims(f)))),
            Type::Other => Type::Other,
        }
    }

    /// The shape, for a tensor whose rank is known.
    pub fn shape(&self) -> Option<&Shape> {
        match self {
            Type::Tensor { shape, .. } => shape.as_ref(),
            _ => None,
        }
    }
}

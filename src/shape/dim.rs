//! `Dim`: a dimension that is known, symbolic (a `dim_param`) or unknown, and the side
//! conditions (`Assumption`) that symbolic broadcasting records.

use std::fmt;
use std::sync::Arc;

/// A symbolic size: a `dim_param` name such as `batch`, or `max(a,b)`, the size two different
/// symbols broadcast to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(Arc<str>);

impl Sym {
    /// The symbol named `name`.
    pub fn new(name: &str) -> Sym {
        Sym(Arc::from(name))
    }

    /// The symbol's text, as written to `dim_param`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The named symbols this one stands for: itself, or the members of a `max(..)`.
    pub fn atoms(&self) -> Vec<&str> {
        match self.0.strip_prefix("max(").and_then(|s| s.strip_suffix(')')) {
            Some(inner) => inner.split(',').collect(),
            None => vec![&self.0],
        }
    }

    /// The size that all of `syms` broadcast to, given that they are equal or 1: the symbol
    /// itself when there is one name, else `max(a,b,..)` over the sorted distinct names.
    pub fn max_of<'a>(syms: impl IntoIterator<Item = &'a Sym>) -> Sym {
        let mut atoms: Vec<&str> = syms.into_iter().flat_map(Sym::atoms).collect();
        atoms.sort_unstable();
        atoms.dedup();
        match atoms.as_slice() {
            [one] => Sym::new(one),
            many => Sym::new(&format!("max({})", many.join(","))),
        }
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One dimension of a shape as inference knows it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dim {
    /// A size known at compile time.
    Known(i64),
    /// A size named by a symbol; equal symbols are equal sizes.
    Sym(Sym),
    /// A size nothing is known about.
    Unknown,
}

impl Dim {
    /// A symbolic dim named `name`.
    pub fn sym(name: &str) -> Dim {
        Dim::Sym(Sym::new(name))
    }

    /// The size, when known.
    pub fn known(&self) -> Option<i64> {
        match self {
            Dim::Known(n) => Some(*n),
            _ => None,
        }
    }
}

impl From<i64> for Dim {
    fn from(n: i64) -> Dim {
        Dim::Known(n)
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(n) => write!(f, "{n}"),
            Dim::Sym(s) => write!(f, "{s}"),
            Dim::Unknown => f.write_str("?"),
        }
    }
}

/// A side condition that symbolic broadcasting assumed in order to give a result.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Assumption {
    /// The symbol's value is one of these sizes (`seq` is 1 or 512).
    OneOf { sym: Sym, sizes: Vec<i64> },
    /// The symbols are equal, or all but one of them are 1.
    EqualOrOne(Vec<Sym>),
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Assumption::OneOf { sym, sizes } => {
                let sizes: Vec<String> = sizes.iter().map(i64::to_string).collect();
                match sizes.as_slice() {
                    [one] => write!(f, "{sym} = {one}"),
                    _ => write!(f, "{sym} is {}", sizes.join(" or ")),
                }
            }
            Assumption::EqualOrOne(syms) => {
                let names: Vec<&str> = syms.iter().map(Sym::as_str).collect();
                write!(f, "{} are equal or 1", names.join(", "))
            }
        }
    }
}

/// Renders a shape as `[batch, 12, ?]`.
pub fn render<D: fmt::Display>(shape: &[D]) -> String {
    let parts: Vec<String> = shape.iter().map(D::to_string).collect();
    format!("[{}]", parts.join(", "))
}

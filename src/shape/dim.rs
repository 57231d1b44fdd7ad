//! `Dim`: a dimension that is known, symbolic (a [`Term`]) or unknown (its arithmetic is in
//! `term.rs`), and the side conditions (`Assumption`) that symbolic broadcasting records.

use std::collections::HashMap;
use std::fmt;

use super::term::{self, Term};

/// One dimension of a shape as inference knows it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dim {
    /// A size known at compile time.
    Known(i64),
    /// A symbolic size: a named size or an expression over named sizes. Equal terms are equal
    /// sizes.
    Term(Term),
    /// A size nothing is known about.
    Unknown,
}

impl Dim {
    /// The size named `name` (a `dim_param` taken as a name, not read as an expression).
    pub fn sym(name: &str) -> Dim {
        Dim::Term(Term::name(name))
    }

    /// The `n`th size inference knows nothing about (`?n`): unknown, but equal to itself.
    pub fn fresh(n: u64) -> Dim {
        Dim::Term(Term::fresh(n))
    }

    /// The size a `dim_param` names, read as an expression where it is one (see
    /// [`super::parse`]).
    pub fn parse(text: &str) -> Dim {
        super::parse::parse(text)
    }

    /// The term, for a symbolic dim.
    pub fn term(&self) -> Option<&Term> {
        match self {
            Dim::Term(t) => Some(t),
            _ => None,
        }
    }

    /// Where two dims must be the same size: the one that knows more (the first of two
    /// terms), with the side condition that makes them equal when they differ; `None` for two
    /// different known sizes, which no input makes equal.
    pub fn pin(&self, other: &Dim) -> Option<(Dim, Option<Assumption>)> {
        Some(match (self, other) {
            (Dim::Known(a), Dim::Known(b)) if a != b => return None,
            (Dim::Term(s), Dim::Known(k)) | (Dim::Known(k), Dim::Term(s)) => {
                (Dim::Known(*k), Some(Assumption::OneOf { sym: s.clone(), sizes: vec![*k] }))
            }
            // `max(u, 0)` and `u` both size tensors: then `u` is not negative, and they are equal.
            (Dim::Term(a), Dim::Term(b)) if a.clamped_of() == Some(b) || b.clamped_of() == Some(a) => {
                (Dim::Term(a.clamped_of().unwrap_or(a).clone()), None)
            }
            (Dim::Term(a), Dim::Term(b)) if a != b => (self.clone(), Some(Assumption::Equal(a.clone(), b.clone()))),
            (Dim::Unknown, _) => (other.clone(), None),
            _ => (self.clone(), None),
        })
    }

    /// This dim with the named sizes in `bindings` replaced by their values (`--dim`).
    pub fn bind(&self, bindings: &HashMap<String, i64>) -> Dim {
        match self {
            Dim::Term(t) if !bindings.is_empty() => {
                t.substitute(&|a| a.as_name().and_then(|n| bindings.get(n)).map(|v| Dim::Known(*v)))
            }
            _ => self.clone(),
        }
    }

    /// This dim, or an unknown size where it holds a name longer than [`super::MAX_TEXT`]
    /// bytes: inference does not carry such a name into every tensor it reaches.
    pub fn bounded(self) -> Dim {
        match &self {
            Dim::Term(t) if t.has_long_name() => Dim::Unknown,
            _ => self,
        }
    }

    /// True when the dim cannot be negative (its named sizes being sizes, 0 or more).
    pub fn is_nonneg(&self) -> bool {
        self.bounds().0 >= 0
    }

    /// The size, when known.
    pub fn known(&self) -> Option<i64> {
        match self {
            Dim::Known(n) => Some(*n),
            _ => None,
        }
    }

    /// `min(self, other)` for two sizes (never negative), a `min` term where it cannot be told.
    pub fn min_size(&self, other: &Dim) -> Dim {
        Dim::min_of(&[self, other])
    }

    /// The smallest of `dims`, a `min` term where it cannot be told.
    pub fn min_of(dims: &[&Dim]) -> Dim {
        term::extreme(dims, false)
    }

    /// The largest of `dims`, a `max` term where it cannot be told.
    pub fn max_of(dims: &[&Dim]) -> Dim {
        term::extreme(dims, true)
    }

    /// The size `dims` broadcast to by numpy's rule for one axis, where they do (unknown where
    /// one is unknown; `None` for two different known sizes other than 1).
    pub fn broadcast_of(dims: &[&Dim]) -> Dim {
        <Dim as super::BroadcastDim>::axis(dims).map_or(Dim::Unknown, |(d, _)| d)
    }

    /// The product of `dims` (1 for none).
    pub fn product<'a>(dims: impl IntoIterator<Item = &'a Dim>) -> Dim {
        dims.into_iter().fold(Dim::Known(1), |acc, d| acc.mul(d))
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
            Dim::Term(t) => write!(f, "{t}"),
            Dim::Unknown => f.write_str("?"),
        }
    }
}

/// A side condition that symbolic broadcasting assumed in order to give a result.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Assumption {
    /// The size is one of these (`seq` is 1 or 512).
    OneOf { sym: Term, sizes: Vec<i64> },
    /// The sizes that are not 1 are all equal (numpy's rule for one axis).
    EqualOrOne(Vec<Term>),
    /// `from` is 1 or equals `to` (unidirectional: `from` stretches to `to`, never the reverse).
    Stretches { from: Term, to: Term },
    /// The two sizes are equal: axes that must match exactly (Concat's other axes, MatMul's
    /// inner dims, same-shape operands) met under two different terms.
    Equal(Term, Term),
    /// The size is at least `min`: a convolution or pooling window must fit in its input, a
    /// reflect padding must be narrower than its axis.
    AtLeast { size: Term, min: i64 },
    /// The size is at most `max`: a sequence must fit the positions of rotary caches.
    AtMost { size: Term, max: i64 },
}

impl Assumption {
    /// True when the condition holds with each named size or fresh unknown taking the value
    /// `value` gives it; `None` where a value is missing.
    pub fn holds(&self, value: &dyn Fn(&Term) -> Option<i64>) -> Option<bool> {
        Some(match self {
            Assumption::OneOf { sym, sizes } => sizes.contains(&sym.eval(value)?),
            Assumption::EqualOrOne(terms) => {
                // The size other than 1 met so far (1: none yet).
                let mut seen = 1;
                for t in terms {
                    match t.eval(value)? {
                        1 => {}
                        v if seen != 1 && seen != v => return Some(false),
                        v => seen = v,
                    }
                }
                true
            }
            Assumption::Stretches { from, to } => {
                let f = from.eval(value)?;
                f == 1 || f == to.eval(value)?
            }
            Assumption::Equal(a, b) => a.eval(value)? == b.eval(value)?,
            Assumption::AtLeast { size, min } => size.eval(value)? >= *min,
            Assumption::AtMost { size, max } => size.eval(value)? <= *max,
        })
    }
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
            Assumption::EqualOrOne(terms) => {
                let names: Vec<String> = terms.iter().map(Term::to_string).collect();
                write!(f, "{} are equal or 1", names.join(", "))
            }
            Assumption::Stretches { from, to } => write!(f, "{from} is 1 or {to}"),
            Assumption::Equal(a, b) => write!(f, "{a} = {b}"),
            Assumption::AtLeast { size, min } => write!(f, "{size} >= {min}"),
            Assumption::AtMost { size, max } => write!(f, "{size} <= {max}"),
        }
    }
}

/// Renders a shape as `[batch, 12, ?]`.
pub fn render<D: fmt::Display>(shape: &[D]) -> String {
    Rendered(shape).to_string()
}

/// A shape displayed as [`render`] writes it, without building the string first.
#[derive(Debug)]
pub struct Rendered<'a, D>(pub &'a [D]);

impl<D: fmt::Display> fmt::Display for Rendered<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str) -> Dim {
        Dim::sym(name)
    }

    #[test]
    fn known_arithmetic_is_checked() {
        assert_eq!(Dim::Known(6).mul(&Dim::Known(7)), Dim::Known(42));
        assert_eq!(Dim::Known(i64::MAX).add(&Dim::Known(1)), Dim::Unknown);
        assert_eq!(Dim::Known(7).div_floor(&Dim::Known(2)), Dim::Known(3));
        assert_eq!(Dim::Known(-7).div_floor(&Dim::Known(2)), Dim::Known(-4));
        assert_eq!(Dim::Known(7).div_ceil(&Dim::Known(2)), Dim::Known(4));
        assert_eq!(Dim::Known(-7).modulo(&Dim::Known(3)), Dim::Known(2));
        assert_eq!(Dim::Known(7).div_floor(&Dim::Known(0)), Dim::Unknown);
    }

    #[test]
    fn terms_print_as_exporters_write_them() {
        assert_eq!(s("batch").mul(&s("seq")).to_string(), "batch*seq");
        assert_eq!(s("seq").mul(&s("batch")), s("batch").mul(&s("seq")));
        assert_eq!(s("seq").add(&Dim::Known(1)).to_string(), "seq+1");
        assert_eq!(s("h").div_floor(&Dim::Known(32)).to_string(), "floor(h/32)");
        assert_eq!(
            s("h").sub(&Dim::Known(1)).div_floor(&Dim::Known(2)).add(&Dim::Known(1)).to_string(),
            "floor((h-1)/2)+1"
        );
        assert_eq!(s("x").mul(&Dim::Known(4)).sub(&Dim::Known(1)).div_floor(&Dim::Known(2)).to_string(), "x*2-1");
        assert_eq!(s("seq").min_size(&Dim::Known(64)).to_string(), "min(64,seq)");
        assert_eq!(Dim::Known(5).sub(&s("a")).to_string(), "5-a");
    }

    #[test]
    fn identities() {
        assert_eq!(s("x").mul(&Dim::Known(1)), s("x"));
        assert_eq!(s("x").sub(&s("x")), Dim::Known(0));
        assert_eq!(s("x").mul(&Dim::Known(0)), Dim::Known(0));
        assert_eq!(s("x").add(&Dim::Unknown), Dim::Unknown);
        assert_eq!(s("seq").min_size(&s("seq")), s("seq"));
        assert_eq!(s("seq").min_size(&Dim::Known(0)), Dim::Known(0));
        // Sizes all known: the answer, not an unknown.
        assert_eq!(Dim::Known(3).min_size(&Dim::Known(10)), Dim::Known(3));
        assert_eq!(Dim::max_of(&[&Dim::Known(3), &Dim::Known(10)]), Dim::Known(10));
        assert_eq!(s("seq").add(&Dim::Known(1)).sub(&Dim::Known(1)), s("seq"));
    }
}

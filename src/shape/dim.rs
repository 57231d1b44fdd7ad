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
        match self.0.strip_prefix("max(").and_then(|s| s.strip_suffix(')')).filter(|s| balanced(s)) {
            Some(inner) => split_args(inner),
            None => vec![&self.0],
        }
    }

    /// The size that all of `syms` broadcast to, given that they are equal or 1: the symbol
    /// itself when there is one name, else `max(a,b,..)` over the sorted distinct names. A
    /// `min(x,k)` beside `x` itself is dropped: it is never larger than `x`.
    pub fn max_of<'a>(syms: impl IntoIterator<Item = &'a Sym>) -> Sym {
        let mut atoms: Vec<&str> = syms.into_iter().flat_map(Sym::atoms).collect();
        atoms.sort_unstable();
        atoms.dedup();
        let all = atoms.clone();
        atoms.retain(|a| {
            let args = a.strip_prefix("min(").and_then(|s| s.strip_suffix(')')).filter(|s| balanced(s));
            !args.is_some_and(|inner| split_args(inner).iter().any(|x| all.contains(x)))
        });
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

/// The longest expression a derived size keeps (`max(a,b)`, `batch*seq+64`, ...); a longer
/// one is an unknown dim. Expressions grow with the nodes they pass through: without a bound,
/// a chain of n broadcasts over n symbols held and printed O(n^2) text (48 MB for 3,000 Adds).
pub const MAX_EXPR: usize = 512;

/// The size `text` names, derived from other sizes: unknown past [`MAX_EXPR`] bytes.
fn derived(text: String) -> Dim {
    Dim::sym(&text).bounded()
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

    /// Where two dims must be the same size: the one that knows more (the first of two
    /// symbols), with the side condition that makes them equal when their names differ; `None`
    /// for two different known sizes, which no input makes equal.
    pub fn pin(&self, other: &Dim) -> Option<(Dim, Option<Assumption>)> {
        Some(match (self, other) {
            (Dim::Known(a), Dim::Known(b)) if a != b => return None,
            (Dim::Sym(s), Dim::Known(k)) | (Dim::Known(k), Dim::Sym(s)) => {
                (Dim::Known(*k), Some(Assumption::OneOf { sym: s.clone(), sizes: vec![*k] }))
            }
            (Dim::Sym(a), Dim::Sym(b)) if a != b => (self.clone(), Some(Assumption::Equal(a.clone(), b.clone()))),
            (Dim::Unknown, _) => (other.clone(), None),
            _ => (self.clone(), None),
        })
    }

    /// This dim, or an unknown one for a symbol longer than [`MAX_EXPR`] bytes.
    pub fn bounded(self) -> Dim {
        match self {
            Dim::Sym(s) if s.as_str().len() > MAX_EXPR => Dim::Unknown,
            d => d,
        }
    }

    /// This dim with a symbol named in `bindings` replaced by its value (`--dim`).
    pub fn bind(&self, bindings: &std::collections::HashMap<String, i64>) -> Dim {
        match self {
            Dim::Sym(sym) => bindings.get(sym.as_str()).map_or_else(|| self.clone(), |v| Dim::Known(*v)),
            _ => self.clone(),
        }
    }

    /// True when the dim cannot be negative: a known size of 0 or more, or an expression with
    /// no subtraction and no negative constant over symbols, which are sizes.
    pub fn is_nonneg(&self) -> bool {
        match self {
            Dim::Known(k) => *k >= 0,
            Dim::Sym(s) => !s.as_str().contains('-'),
            Dim::Unknown => false,
        }
    }

    /// The size, when known.
    pub fn known(&self) -> Option<i64> {
        match self {
            Dim::Known(n) => Some(*n),
            _ => None,
        }
    }
}

/// The bytes of `text` outside any parentheses, with their positions (parentheses left out).
fn top_level(text: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let mut depth = 0i32;
    text.bytes().enumerate().filter(move |&(_, b)| {
        match b {
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ => return depth == 0,
        }
        false
    })
}

/// Splits `e+k` or `e-k` (a trailing integer added at the top level) into `(e, ±k)`.
fn split_offset(text: &str) -> Option<(&str, i64)> {
    let (i, sign) = top_level(text).filter(|&(i, b)| i > 0 && matches!(b, b'+' | b'-')).last()?;
    let k: i64 = text[i + 1..].parse().ok()?;
    let k = if sign == b'-' { k.checked_neg()? } else { k };
    Some((&text[..i], k))
}

/// Splits a product `e*k` (every top-level operator a `*`, the last factor an integer) into
/// `(e, k)`.
fn split_factor(text: &str) -> Option<(&str, i64)> {
    let mut last = None;
    for (i, b) in top_level(text) {
        match b {
            b'+' | b'-' | b'/' | b'%' if i > 0 => return None,
            b'*' => last = Some(i),
            _ => {}
        }
    }
    let i = last?;
    Some((&text[..i], text[i + 1..].parse().ok()?))
}

/// True when `text` is an expression this module writes over integers: names, integers,
/// `+ - * %`, and calls, a `/` only as the division inside `floor(..)` or `ceil(..)`. A
/// `dim_param` that an exporter wrote with true division (`h/2 - 1/2`), a decimal number or
/// spaces is not taken apart; a name may hold a dot.
fn integral(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if let Some(call) = ["floor(", "ceil("].into_iter().find(|c| rest.starts_with(c)) {
            // The call's argument is `a/b` of two integral operands; its own `/` is floor's.
            let open = i + call.len() - 1;
            let Some(close) = closing_paren(text, open) else { return false };
            let inner = &text[open + 1..close];
            let Some(slash) = top_slash(inner) else { return false };
            if !integral(&inner[..slash]) || !integral(&inner[slash + 1..]) {
                return false;
            }
            i = close + 1;
            continue;
        }
        match bytes[i] {
            b'/' | b' ' => return false,
            // A decimal point: a '.' in a token that starts with a digit or with the '.'
            // itself (`0.5`, `.5`), not one in a name (`DynamicDimension.1`, as paddle2onnx
            // names dims).
            b'.' => {
                let start = bytes[..i]
                    .iter()
                    .rposition(|b| matches!(b, b'+' | b'-' | b'*' | b'%' | b'(' | b')' | b','))
                    .map_or(0, |p| p + 1);
                if start == i || bytes[start].is_ascii_digit() {
                    return false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    true
}

/// Where the one `/` at parenthesis depth 0 of `text` is.
fn top_slash(text: &str) -> Option<usize> {
    let mut slashes = top_level(text).filter(|&(_, b)| b == b'/').map(|(i, _)| i);
    let first = slashes.next()?;
    slashes.next().is_none().then_some(first)
}

/// `floor((e*c + d) / k)` (or `ceil`) as `e*(c/k) + floor(d/k)` when `k` divides `c` and `e`
/// is an integer expression: how a stride-2 layer after a 2x upsampling gives back the size
/// it started from (`floor((s*4-1)/2)+1` is `s*2`).
fn linear_div(a: &Dim, b: &Dim, ceil: bool) -> Option<Dim> {
    let (Dim::Sym(s), &Dim::Known(k)) = (a, b) else { return None };
    if k <= 0 {
        return None;
    }
    let (base, d) = split_offset(s.as_str()).unwrap_or((s.as_str(), 0));
    let (e, c) = split_factor(strip_parens(base))?;
    if c % k != 0 || !integral(e) {
        return None;
    }
    let q = if ceil { -((-i128::from(d)).div_euclid(i128::from(k))) } else { i128::from(d).div_euclid(i128::from(k)) };
    Some(Dim::sym(strip_parens(e)).mul(&Dim::Known(c / k)).add(&Dim::Known(i64::try_from(q).ok()?)))
}

/// `(e + k) + m` as `e + (k + m)`, when `s` ends in an added integer.
fn offset_sum(s: &Dim, m: i64) -> Option<Dim> {
    let Dim::Sym(s) = s else { return None };
    let (base, k) = split_offset(s.as_str())?;
    Some(match k.checked_add(m) {
        Some(0) => Dim::sym(strip_parens(base)),
        Some(t) => Dim::sym(strip_parens(base)).add(&Dim::Known(t)),
        None => Dim::Unknown,
    })
}

/// `(e * c) * k` as `e * (c * k)`, when `s` ends in an integer factor.
fn scaled_product(s: &Dim, k: i64) -> Option<Dim> {
    let Dim::Sym(s) = s else { return None };
    let (e, c) = split_factor(s.as_str())?;
    Some(c.checked_mul(k).map_or(Dim::Unknown, |ck| Dim::sym(strip_parens(e)).mul(&Dim::Known(ck))))
}

/// The comma-separated arguments of a call's inside, split at parenthesis depth 0.
fn split_args(inner: &str) -> Vec<&str> {
    let mut start = 0;
    let mut out = Vec::new();
    for (i, _) in top_level(inner).filter(|&(_, b)| b == b',') {
        out.push(&inner[start..i]);
        start = i + 1;
    }
    out.push(&inner[start..]);
    out
}

/// `(e)` as `e` when the parentheses enclose the whole text.
fn strip_parens(text: &str) -> &str {
    match text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        Some(inner) if balanced(inner) => inner,
        _ => text,
    }
}

fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    for ch in text.chars() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// True when `text` is a bare name (no operator), so it needs no parentheses inside an
/// expression.
fn atomic(text: &str) -> bool {
    !text.contains(['+', '-', '*', '/', '%', '(', ')', ',', ' '])
        || (text.starts_with(['f', 'c', 'm']) && balanced_call(text))
}

/// True for `name(...)` whose closing parenthesis is the last character.
fn balanced_call(text: &str) -> bool {
    let Some(open) = text.find('(') else { return false };
    text[..open].chars().all(|ch| ch.is_ascii_alphabetic()) && closing_paren(text, open) == Some(text.len() - 1)
}

/// Where the parenthesis that closes the one at byte `open` of `text` is.
fn closing_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, b) in text.bytes().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn operand(d: &Dim) -> String {
    let text = d.to_string();
    if atomic(&text) || matches!(d, Dim::Known(n) if *n >= 0) {
        text
    } else {
        format!("({text})")
    }
}

/// The operators at parenthesis depth 0 of an expression's text.
fn top_ops(text: &str) -> Vec<u8> {
    top_level(text).filter(|&(i, b)| i > 0 && matches!(b, b'+' | b'-' | b'*' | b'/' | b'%')).map(|(_, b)| b).collect()
}

/// The operand's text inside a product: parenthesised only when it is a sum or difference.
fn factor(d: &Dim) -> String {
    let text = d.to_string();
    if matches!(d, Dim::Known(n) if *n < 0) || top_ops(&text).iter().any(|b| matches!(b, b'+' | b'-' | b'%')) {
        format!("({text})")
    } else {
        text
    }
}

/// The operand's text on the right of a `-`: parenthesised when it is a sum or difference.
fn subtrahend(d: &Dim) -> String {
    let text = d.to_string();
    if top_ops(&text).iter().any(|b| matches!(b, b'+' | b'-')) {
        format!("({text})")
    } else {
        text
    }
}

/// Symbolic arithmetic: known sizes compute (with overflow giving an unknown), symbols
/// survive as expressions (`batch*seq`, `seq+1`, `floor(h/32)`), and anything that meets an
/// unknown is unknown. Identities (`x+0`, `x*1`, `x-x`, `x/1`) simplify.
impl Dim {
    /// `self + other`.
    pub fn add(&self, other: &Dim) -> Dim {
        match (self, other) {
            (Dim::Unknown, _) | (_, Dim::Unknown) => Dim::Unknown,
            (Dim::Known(a), Dim::Known(b)) => a.checked_add(*b).map_or(Dim::Unknown, Dim::Known),
            (x, Dim::Known(0)) | (Dim::Known(0), x) => x.clone(),
            (Dim::Known(k), s) | (s, Dim::Known(k)) => offset_sum(s, *k).unwrap_or_else(|| match *k < 0 {
                true => derived(format!("{s}-{}", -(*k as i128))),
                false => derived(format!("{s}+{k}")),
            }),
            (a, b) => {
                let (x, y) = if a <= b { (a, b) } else { (b, a) };
                derived(format!("{x}+{y}"))
            }
        }
    }

    /// `self - other`.
    pub fn sub(&self, other: &Dim) -> Dim {
        match (self, other) {
            (Dim::Unknown, _) | (_, Dim::Unknown) => Dim::Unknown,
            (Dim::Known(a), Dim::Known(b)) => a.checked_sub(*b).map_or(Dim::Unknown, Dim::Known),
            (x, Dim::Known(k)) => k.checked_neg().map_or(Dim::Unknown, |n| x.add(&Dim::Known(n))),
            (a, b) if a == b => Dim::Known(0),
            (a, b) => derived(format!("{a}-{}", subtrahend(b))),
        }
    }

    /// `self * other`.
    pub fn mul(&self, other: &Dim) -> Dim {
        match (self, other) {
            (Dim::Known(0), _) | (_, Dim::Known(0)) => Dim::Known(0),
            (Dim::Unknown, _) | (_, Dim::Unknown) => Dim::Unknown,
            (Dim::Known(a), Dim::Known(b)) => a.checked_mul(*b).map_or(Dim::Unknown, Dim::Known),
            (x, Dim::Known(1)) | (Dim::Known(1), x) => x.clone(),
            (Dim::Known(k), s) | (s, Dim::Known(k)) => {
                scaled_product(s, *k).unwrap_or_else(|| derived(format!("{}*{}", factor(s), factor(&Dim::Known(*k)))))
            }
            (a, b) => {
                let (x, y) = if a <= b { (a, b) } else { (b, a) };
                derived(format!("{}*{}", factor(x), factor(y)))
            }
        }
    }

    /// `floor(self / other)`; unknown for a zero divisor.
    pub fn div_floor(&self, other: &Dim) -> Dim {
        match (self, other) {
            (_, Dim::Known(0)) | (Dim::Unknown, _) | (_, Dim::Unknown) => Dim::Unknown,
            (Dim::Known(a), Dim::Known(b)) => match (a.checked_div(*b), a.checked_rem(*b)) {
                (Some(q), Some(r)) if r != 0 && ((r < 0) != (*b < 0)) => Dim::Known(q - 1),
                (Some(q), Some(_)) => Dim::Known(q),
                _ => Dim::Unknown,
            },
            (x, Dim::Known(1)) => x.clone(),
            (a, b) if a == b => Dim::Known(1),
            (a, b) => {
                linear_div(a, b, false).unwrap_or_else(|| derived(format!("floor({}/{})", operand(a), operand(b))))
            }
        }
    }

    /// `ceil(self / other)`; unknown for a zero divisor.
    pub fn div_ceil(&self, other: &Dim) -> Dim {
        match (self, other) {
            (_, Dim::Known(0)) | (Dim::Unknown, _) | (_, Dim::Unknown) => Dim::Unknown,
            (Dim::Known(a), Dim::Known(b)) => match (a.checked_neg(), b) {
                (Some(na), b) => match Dim::Known(na).div_floor(&Dim::Known(*b)) {
                    Dim::Known(q) => q.checked_neg().map_or(Dim::Unknown, Dim::Known),
                    other => other,
                },
                _ => Dim::Unknown,
            },
            (x, Dim::Known(1)) => x.clone(),
            (a, b) if a == b => Dim::Known(1),
            (a, b) => linear_div(a, b, true).unwrap_or_else(|| derived(format!("ceil({}/{})", operand(a), operand(b)))),
        }
    }

    /// `self mod other` with the divisor's sign (Python's `%`, ONNX Mod with `fmod=0`).
    pub fn modulo(&self, other: &Dim) -> Dim {
        match (self, other) {
            (_, Dim::Known(0)) | (Dim::Unknown, _) | (_, Dim::Unknown) => Dim::Unknown,
            (Dim::Known(a), Dim::Known(b)) => match a.checked_rem(*b) {
                Some(r) if r != 0 && ((r < 0) != (*b < 0)) => Dim::Known(r + b),
                Some(r) => Dim::Known(r),
                None => Dim::Unknown,
            },
            (_, Dim::Known(1)) => Dim::Known(0),
            (a, b) if a == b => Dim::Known(0),
            (a, b) => derived(format!("{}%{}", operand(a), operand(b))),
        }
    }

    /// The larger of two sizes, when it can be told.
    pub fn max_dim(&self, other: &Dim) -> Dim {
        match (self, other) {
            (Dim::Known(a), Dim::Known(b)) => Dim::Known(*a.max(b)),
            (a, b) if a == b => a.clone(),
            _ => Dim::Unknown,
        }
    }

    /// The smaller of two sizes, when it can be told.
    pub fn min_dim(&self, other: &Dim) -> Dim {
        match (self, other) {
            (Dim::Known(a), Dim::Known(b)) => Dim::Known(*a.min(b)),
            (a, b) if a == b => a.clone(),
            _ => Dim::Unknown,
        }
    }

    /// `min(self, other)` for two sizes (never negative), as an expression where it cannot
    /// be told: a symbol against itself is itself, and a known 0 is 0.
    pub fn min_size(&self, other: &Dim) -> Dim {
        match (self, other) {
            (Dim::Unknown, _) | (_, Dim::Unknown) => Dim::Unknown,
            (Dim::Known(a), Dim::Known(b)) => Dim::Known(*a.min(b)),
            (Dim::Known(0), _) | (_, Dim::Known(0)) => Dim::Known(0),
            (a, b) if a == b => a.clone(),
            (a, b) => {
                let (x, y) = if a <= b { (a, b) } else { (b, a) };
                derived(format!("min({x},{y})"))
            }
        }
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
    /// The symbols that are not 1 are all equal (numpy's rule for one axis).
    EqualOrOne(Vec<Sym>),
    /// `from` is 1 or equals `to` (unidirectional: `from` stretches to `to`, never the reverse).
    Stretches { from: Sym, to: Sym },
    /// The two sizes are equal: axes that must match exactly (Concat's other axes, MatMul's
    /// inner dims, same-shape operands) met under two different names.
    Equal(Sym, Sym),
    /// The size is at least `min`: a convolution or pooling window must fit in its input, a
    /// reflect padding must be narrower than its axis.
    AtLeast { size: Sym, min: i64 },
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
            Assumption::Stretches { from, to } => write!(f, "{from} is 1 or {to}"),
            Assumption::Equal(a, b) => write!(f, "{a} = {b}"),
            Assumption::AtLeast { size, min } => write!(f, "{size} >= {min}"),
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
    fn min_of_sizes_and_broadcast_beside_it() {
        assert_eq!(s("seq").min_size(&Dim::Known(64)), s("min(64,seq)"));
        assert_eq!(s("seq").min_size(&s("seq")), s("seq"));
        assert_eq!(s("seq").min_size(&Dim::Known(0)), Dim::Known(0));
        assert_eq!(Dim::Known(3).min_size(&Dim::Known(64)), Dim::Known(3));
        let Dim::Sym(m) = s("seq").min_size(&Dim::Known(64)) else { panic!("a symbol") };
        // A min never exceeds its own argument, so it broadcasts to that argument...
        assert_eq!(Sym::max_of([&m, &Sym::new("seq")]), Sym::new("seq"));
        // ...but not to another symbol; and the commas inside it do not split a max.
        let other = Sym::max_of([&m, &Sym::new("batch")]);
        assert_eq!(other, Sym::new("max(batch,min(64,seq))"));
        assert_eq!(other.atoms(), vec!["batch", "min(64,seq)"]);
        assert_eq!(Sym::max_of([&other, &Sym::new("seq")]), Sym::new("max(batch,seq)"));
    }

    #[test]
    fn symbols_survive_arithmetic() {
        assert_eq!(s("batch").mul(&s("seq")), s("batch*seq"));
        assert_eq!(s("seq").mul(&s("batch")), s("batch*seq"));
        assert_eq!(s("seq").add(&Dim::Known(1)), s("seq+1"));
        assert_eq!(s("h").div_floor(&Dim::Known(32)), s("floor(h/32)"));
        assert_eq!(s("h").add(&Dim::Known(2)).div_floor(&Dim::Known(2)), s("floor((h+2)/2)"));
        // Offsets fold and cancel.
        assert_eq!(s("seq").add(&Dim::Known(1)).sub(&Dim::Known(1)), s("seq"));
        assert_eq!(s("seq").sub(&Dim::Known(3)).add(&Dim::Known(1)), s("seq-2"));
        assert_eq!(s("h").div_floor(&Dim::Known(2)).add(&Dim::Known(1)).sub(&Dim::Known(1)), s("floor(h/2)"));
        // Identities.
        assert_eq!(s("x").mul(&Dim::Known(1)), s("x"));
        assert_eq!(s("x").sub(&s("x")), Dim::Known(0));
        assert_eq!(s("x").mul(&Dim::Known(0)), Dim::Known(0));
        assert_eq!(s("x").add(&Dim::Unknown), Dim::Unknown);
        assert_eq!(Dim::product(&[s("a"), Dim::Known(2), s("b")]), s("a*2*b"));
    }
}

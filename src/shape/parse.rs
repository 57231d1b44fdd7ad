//! Reading a size's text, once, where a model is loaded: a `dim_param` such as `batch`, torch's
//! `s0*2` or an exporter's `floor(h/2 - 1/2) + 1` becomes a term where it reads as an integer
//! expression, and a named size (its whole text) where it does not. Nothing else reads a size's
//! text.
//!
//! Read: integers and decimals, names, `+ - * / %`, parentheses, and `floor`, `ceil`, `min`,
//! `max`, `broadcast`. Inside `floor` and `ceil` division is true division over rationals
//! (`h/2 - 1/2`); elsewhere a result must be an integer (`h*4/2` is `h*2`, `h/2` is not read).
//! Also the Python that torch's dynamo exporter writes (sympy's printing): `//` floor division,
//! `**` to a constant power, `Min`, `Max` and `Mod(a, b)` (`a % b`).

use super::dim::Dim;
use super::term::{Term, MAX_POWER};

/// The longest `dim_param` read as a size; a longer one is kept as an opaque name, which the
/// model writes back as it was and inference takes for an unknown size (a 100 KB name carried
/// into every tensor it reaches would multiply a report).
pub const MAX_TEXT: usize = 4096;

/// The size `text` names: its term where it reads as an integer expression, else the named size
/// whose name is the whole text, unread past [`MAX_TEXT`] bytes.
pub fn parse(text: &str) -> Dim {
    // A plain name, as most dim_params are, reads as itself.
    let plain = !text.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && !text.bytes().any(|b| b" \t\r\n+-*/%(),".contains(&b));
    if text.len() > MAX_TEXT || (plain && !text.is_empty()) {
        return Dim::Term(Term::name(text));
    }
    let mut p = Parser { text: text.as_bytes(), at: 0, depth: 0 };
    let read = p.expr().filter(|_| {
        p.space();
        p.at == p.text.len()
    });
    match read.and_then(Value::integer) {
        Some(Dim::Unknown) | None => Dim::Term(Term::name(text)),
        Some(d) => d,
    }
}

/// A value read so far: `num / den`, `den` a positive constant or a size.
#[derive(Clone)]
struct Value {
    num: Dim,
    den: Dim,
}

impl Value {
    fn int(d: Dim) -> Value {
        Value { num: d, den: Dim::Known(1) }
    }

    /// The integer this value is, when it is one.
    fn integer(self) -> Option<Dim> {
        if self.den == Dim::Known(1) {
            return Some(self.num);
        }
        let q = self.num.div_floor(&self.den);
        (q.mul(&self.den) == self.num).then_some(q)
    }

    fn add(self, other: Value) -> Option<Value> {
        if self.den == other.den {
            return known(Value { num: self.num.add(&other.num), den: self.den });
        }
        let num = self.num.mul(&other.den).add(&other.num.mul(&self.den));
        known(Value { num, den: self.den.mul(&other.den) })
    }

    fn neg(self) -> Value {
        Value { num: Dim::Known(0).sub(&self.num), den: self.den }
    }

    fn mul(self, other: Value) -> Option<Value> {
        known(Value { num: self.num.mul(&other.num), den: self.den.mul(&other.den) })
    }

    /// `self / other` over rationals; a negative constant divisor moves its sign up.
    fn div(self, other: Value) -> Option<Value> {
        match other.num {
            Dim::Known(0) | Dim::Unknown => None,
            Dim::Known(k) if k < 0 => self.neg().div(Value { num: Dim::Known(k.checked_neg()?), den: other.den }),
            _ => known(Value { num: self.num.mul(&other.den), den: self.den.mul(&other.num) }),
        }
    }
}

/// `v`, or `None` when arithmetic lost it (an overflow makes an unknown).
fn known(v: Value) -> Option<Value> {
    (v.num != Dim::Unknown && v.den != Dim::Unknown).then_some(v)
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    depth: usize,
}

/// How deep parentheses and calls may nest in a size's text.
const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.space();
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.at += usize::from(hit);
        hit
    }

    fn expr(&mut self) -> Option<Value> {
        let mut v = self.term()?;
        loop {
            if self.eat(b'+') {
                v = v.add(self.term()?)?;
            } else if self.eat(b'-') {
                v = v.add(self.term()?.neg())?;
            } else {
                return Some(v);
            }
        }
    }

    fn term(&mut self) -> Option<Value> {
        let mut v = self.unary()?;
        loop {
            if self.eat(b'*') {
                v = v.mul(self.unary()?)?;
            } else if self.eat(b'/') {
                v = if self.eat(b'/') {
                    let d = self.unary()?.integer()?;
                    known(Value::int(v.integer()?.div_floor(&d)))?
                } else {
                    v.div(self.unary()?)?
                };
            } else if self.eat(b'%') {
                let k = self.unary()?.integer()?;
                v = Value::int(v.integer()?.modulo(&k));
            } else {
                return Some(v);
            }
        }
    }

    fn unary(&mut self) -> Option<Value> {
        if self.eat(b'-') {
            return Some(self.unary()?.neg());
        }
        let base = self.atom()?;
        // `**` binds tighter than a sign on its left (`-a**2` is `-(a**2)`), and to the right.
        if self.peek() == Some(b'*') && self.text.get(self.at + 1) == Some(&b'*') {
            self.at += 2;
            // Up to `MAX_POWER`, also of a number; a larger power is a name.
            let exp = self.unary()?.integer()?.known().filter(|e| (0..=MAX_POWER).contains(e))?;
            return known(Value::int(base.integer()?.pow(exp)));
        }
        Some(base)
    }

    fn atom(&mut self) -> Option<Value> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let v = self.atom_inner();
        self.depth -= 1;
        v
    }

    fn atom_inner(&mut self) -> Option<Value> {
        if self.eat(b'(') {
            let v = self.expr()?;
            return self.eat(b')').then_some(v);
        }
        let start = self.at;
        while self.text.get(self.at).is_some_and(|b| !b" \t\r\n+-*/%(),".contains(b)) {
            self.at += 1;
        }
        let word = std::str::from_utf8(&self.text[start..self.at]).ok()?;
        if word.is_empty() {
            return None;
        }
        if word.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return number(word);
        }
        if self.peek() == Some(b'(')
            && matches!(word, "floor" | "ceil" | "min" | "max" | "broadcast" | "Min" | "Max" | "Mod")
        {
            self.at += 1;
            let mut args = vec![self.expr()?];
            while self.eat(b',') {
                args.push(self.expr()?);
            }
            if !self.eat(b')') {
                return None;
            }
            return call(word, args);
        }
        Some(Value::int(Dim::Term(Term::name(word))))
    }
}

/// `12` or `0.5` (`.5`) as a rational.
fn number(word: &str) -> Option<Value> {
    let (whole, frac) = word.split_once('.').unwrap_or((word, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !(all_digits(whole) && all_digits(frac)) || (whole.is_empty() && frac.is_empty()) {
        return None;
    }
    let digits = format!("{whole}{frac}");
    let num: i64 = digits.parse().ok()?;
    let den = 10i64.checked_pow(u32::try_from(frac.len()).ok()?)?;
    Some(Value { num: Dim::Known(num), den: Dim::Known(den) })
}

fn call(name: &str, args: Vec<Value>) -> Option<Value> {
    match (name, args.as_slice()) {
        ("floor", [v]) => known(Value::int(v.num.div_floor(&v.den))),
        ("ceil", [v]) => known(Value::int(v.num.div_ceil(&v.den))),
        ("floor" | "ceil", _) => None,
        ("Mod", [a, k]) => known(Value::int(a.clone().integer()?.modulo(&k.clone().integer()?))),
        ("Mod", _) | (_, []) => None,
        _ => {
            let dims: Vec<Dim> = args.into_iter().map(Value::integer).collect::<Option<_>>()?;
            let refs: Vec<&Dim> = dims.iter().collect();
            let d = match name {
                "min" | "Min" => Dim::min_of(&refs),
                "max" | "Max" => Dim::max_of(&refs),
                _ => Dim::broadcast_of(&refs),
            };
            (d != Dim::Unknown).then(|| Value::int(d))
        }
    }
}

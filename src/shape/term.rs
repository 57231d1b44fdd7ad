//! Sizes as terms: a symbolic size is an expression the program can take apart, evaluate and
//! compare, never text. Terms are built only through the arithmetic here, which keeps them in a
//! canonical form, and are interned, so that two spellings of one size are one term and terms
//! compare and hash in constant time.
//!
//! The canonical form: a sum `c0 + Σ c·m` of integer multiples of monomials, each monomial a
//! sorted product of atoms; atoms are names, fresh unknowns, `floor(e/k)` of a sum by a constant
//! `k >= 2`, `floor(a/b)` by a symbolic divisor (`a` may be a constant there), `min`, `max` and
//! `broadcast`; `a` over `b` is exact where `a` is a monomial times `b`. A `floor`'s sum
//! has its coefficients in `[0, k)`, its constant in `(-k, 0]` and no factor common to all its
//! coefficients and `k` (what falls outside moves out of the floor), and a floor of a floor
//! is one floor (`floor(floor(e/a)/b) = floor(e/(a·b))`). Guaranteed: two terms of the class
//! "integer-affine over names, plus at most one floor of such an affine form times an
//! integer", equal for every binding of their names to sizes, are the same term
//! (`tests/it/terms.rs` checks it on random terms).
//!
//! Sizes are at least 0: `min(0, t)` is 0 for a term that cannot be negative. A sum holding
//! `min(c,t)` and `max(t-c,0)` holds `t` (an axis sliced at `c` and joined again). A term holds at
//! most [`MAX_NODES`] nodes; a longer one is an unknown size, so that a chain of broadcasts
//! over new names stays linear in time and memory.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};

use super::dim::Dim;

/// The most nodes a term holds; a larger one is an unknown size.
pub const MAX_NODES: u32 = 64;

/// The largest power of a term written out as a product (`Pow`, sympy's `(hw + 1)**2`).
pub const MAX_POWER: i64 = 8;

/// A symbolic size in canonical form (see the module's documentation). Cloning shares it.
#[derive(Clone)]
pub struct Term(Arc<Node>);

struct Node {
    kind: Kind,
    hash: u64,
    /// The number of nodes below and including this one.
    size: u32,
}

/// One node of a term. Children are terms, compared and hashed by identity (they are interned).
/// The order is structural (names by their text) and is the order sums and products are kept
/// in: variants compare in the order they are declared here, then field by field.
#[derive(PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Kind {
    /// A named size: a `dim_param`, or an exporter's expression this module cannot read.
    Name(Box<str>),
    /// A size inference knows nothing about, numbered (`?3`).
    Fresh(u64),
    /// `Π f`: two or more atoms in order (a factor may repeat).
    Product(Box<[Term]>),
    /// `floor(e/k)`, `k >= 2`, `e` canonical for it.
    Floor(Term, i64),
    /// `floor(a/b)` with a symbolic divisor that does not divide `a`.
    Div(Term, Term),
    /// The smallest of a constant (if any) and two or more terms, or one term and the constant.
    Min(Box<[Term]>, Option<i64>),
    /// The largest, likewise.
    Max(Box<[Term]>, Option<i64>),
    /// The size that sizes which are each 1 or one common size broadcast to (numpy's rule for
    /// one axis), where inference cannot tell which; the side condition is kept beside it.
    Broadcast(Box<[Term]>),
    /// `Σ c·m + c0`: monomials `m` in order, coefficients not 0; never a lone monomial with
    /// coefficient 1 and no constant. No monomials only as a constant `Div`'s numerator.
    Sum(Box<[(Term, i64)]>, i64),
}

impl PartialEq for Term {
    fn eq(&self, other: &Term) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Term {}

impl Hash for Term {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl PartialOrd for Term {
    fn partial_cmp(&self, other: &Term) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Term {
    /// `Kind`'s order: the same on every run, so the text a term prints as is too.
    fn cmp(&self, other: &Term) -> Ordering {
        if self == other {
            return Ordering::Equal;
        }
        self.0.kind.cmp(&other.0.kind)
    }
}

impl fmt::Debug for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Term({self})")
    }
}

// ---------------------------------------------------------------------------------------------
// Interning: every term is made through `intern`, which gives back the live term equal to the
// one asked for when there is one. The table holds weak references, swept as it grows, so a
// process that reads many models keeps only the terms still in use.

#[derive(Default)]
struct Table {
    /// Keyed by the kind's hash, already a foldhash.
    map: HashMap<u64, smallvec::SmallVec<[Weak<Node>; 1]>, foldhash::fast::FixedState>,
    entries: usize,
    sweep_at: usize,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

impl Kind {
    fn children(&self) -> Vec<&Term> {
        match self {
            Kind::Name(_) | Kind::Fresh(_) => Vec::new(),
            Kind::Sum(ts, _) => ts.iter().map(|(t, _)| t).collect(),
            Kind::Product(ts) | Kind::Broadcast(ts) | Kind::Min(ts, _) | Kind::Max(ts, _) => ts.iter().collect(),
            Kind::Floor(t, _) => vec![t],
            Kind::Div(a, b) => vec![a, b],
        }
    }
}

/// The live term for `kind`, made when there is none; `None` past [`MAX_NODES`].
fn intern(kind: Kind) -> Option<Term> {
    let size = kind.children().iter().fold(1u32, |n, c| n.saturating_add(c.0.size));
    if size > MAX_NODES {
        return None;
    }
    let hash = foldhash::fast::FixedState::with_seed(0x5eed_7e45).hash_one(&kind);
    let mut guard = TABLE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let table = guard.get_or_insert_with(Table::default);
    let bucket = table.map.entry(hash).or_default();
    for w in bucket.iter() {
        if let Some(t) = w.upgrade() {
            if t.kind == kind {
                return Some(Term(t));
            }
        }
    }
    let node = Arc::new(Node { kind, hash, size });
    bucket.push(Arc::downgrade(&node));
    table.entries += 1;
    if table.entries > table.sweep_at {
        table.map.retain(|_, ws| {
            ws.retain(|w| w.strong_count() > 0);
            !ws.is_empty()
        });
        table.entries = table.map.values().map(|ws| ws.len()).sum();
        table.sweep_at = (2 * table.entries).max(4096);
    }
    Some(Term(node))
}

impl Drop for Node {
    /// Drops the children iteratively: a deep term must not overflow the stack.
    fn drop(&mut self) {
        let mut stack: Vec<Term> = Vec::new();
        take_children(&mut self.kind, &mut stack);
        while let Some(t) = stack.pop() {
            if let Some(mut node) = Arc::into_inner(t.0) {
                take_children(&mut node.kind, &mut stack);
            }
        }
    }
}

fn take_children(kind: &mut Kind, out: &mut Vec<Term>) {
    match std::mem::replace(kind, Kind::Fresh(0)) {
        Kind::Name(_) | Kind::Fresh(_) => {}
        Kind::Sum(ts, _) => out.extend(ts.into_vec().into_iter().map(|(t, _)| t)),
        Kind::Product(ts) | Kind::Broadcast(ts) | Kind::Min(ts, _) | Kind::Max(ts, _) => out.extend(ts.into_vec()),
        Kind::Floor(t, _) => out.push(t),
        Kind::Div(a, b) => out.extend([a, b]),
    }
}

// ---------------------------------------------------------------------------------------------
// Polynomials: the working form of the arithmetic. `c0 + Σ c·m`, each monomial a sorted list
// of atoms (non-empty), in order, coefficients not 0.

#[derive(Clone, Debug, PartialEq, Eq)]
struct Poly {
    c0: i64,
    terms: Vec<(Vec<Term>, i64)>,
}

impl Poly {
    fn constant(c0: i64) -> Poly {
        Poly { c0, terms: Vec::new() }
    }

    fn atom(t: Term) -> Poly {
        Poly { c0: 0, terms: vec![(vec![t], 1)] }
    }

    /// The polynomial a dim stands for; `None` for an unknown dim.
    fn of(d: &Dim) -> Option<Poly> {
        match d {
            Dim::Known(k) => Some(Poly::constant(*k)),
            Dim::Term(t) => Some(t.poly()),
            Dim::Unknown => None,
        }
    }

    /// Sorts the monomials and adds up equal ones; `None` on overflow.
    fn normalize(mut self) -> Option<Poly> {
        self.terms.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Vec<Term>, i64)> = Vec::with_capacity(self.terms.len());
        for (m, c) in self.terms {
            match out.last_mut() {
                Some((last, lc)) if *last == m => *lc = lc.checked_add(c)?,
                _ => out.push((m, c)),
            }
        }
        out.retain(|(_, c)| *c != 0);
        Poly { c0: self.c0, terms: out }.joined_slices()
    }

    /// `min(c,t) + max(t-c,0)` is `t` for every `t`: an axis sliced at `c` (`x[:c]` and
    /// `x[c:]`) and concatenated again is the axis. Each such pair, with one coefficient,
    /// becomes `t`.
    fn joined_slices(mut self) -> Option<Poly> {
        let single = |m: &[Term]| match m {
            [a] => Some(a.clone()),
            _ => None,
        };
        let pair = self.terms.iter().enumerate().find_map(|(i, (m, coef))| {
            let Kind::Min(ts, Some(c)) = &single(m)?.0.kind else { return None };
            let [t] = &ts[..] else { return None };
            let rest = Dim::Term(t.clone()).sub(&Dim::Known(*c));
            let j = self.terms.iter().position(|(n, k)| {
                k == coef
                    && single(n).is_some_and(|u| {
                        matches!(&u.0.kind, Kind::Max(us, Some(0)) if us.len() == 1 && Dim::Term(us[0].clone()) == rest)
                    })
            })?;
            Some((i, j, t.clone(), *coef))
        });
        let Some((i, j, t, coef)) = pair else { return Some(self) };
        for k in [i.max(j), i.min(j)] {
            self.terms.remove(k);
        }
        self.add(t.poly().scale(coef)?)
    }

    fn add(mut self, other: Poly) -> Option<Poly> {
        self.c0 = self.c0.checked_add(other.c0)?;
        self.terms.extend(other.terms);
        self.normalize()
    }

    fn scale(mut self, k: i64) -> Option<Poly> {
        if k == 0 {
            return Some(Poly::constant(0));
        }
        self.c0 = self.c0.checked_mul(k)?;
        for (_, c) in &mut self.terms {
            *c = c.checked_mul(k)?;
        }
        Some(self)
    }

    fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut out = Poly::constant(self.c0.checked_mul(other.c0)?);
        for (m, c) in &self.terms {
            out.terms.push((m.clone(), c.checked_mul(other.c0)?));
        }
        for (m, c) in &other.terms {
            out.terms.push((m.clone(), c.checked_mul(self.c0)?));
            for (n, d) in &self.terms {
                let mut f = m.clone();
                f.extend(n.iter().cloned());
                f.sort();
                out.terms.push((f, c.checked_mul(*d)?));
            }
        }
        out.normalize()
    }

    /// The dim this polynomial is: a constant, a lone monomial, or a sum.
    fn dim(self) -> Dim {
        let Poly { c0, terms } = self;
        if terms.is_empty() {
            return Dim::Known(c0);
        }
        if c0 == 0 && terms.len() == 1 && terms[0].1 == 1 {
            let (m, _) = terms.into_iter().next().expect("one monomial");
            return monomial(m);
        }
        let mut ts = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            let Dim::Term(t) = monomial(m) else { return Dim::Unknown };
            ts.push((t, c));
        }
        intern(Kind::Sum(ts.into(), c0)).map_or(Dim::Unknown, Dim::Term)
    }
}

/// The term of a monomial: its atom, or their product.
fn monomial(mut m: Vec<Term>) -> Dim {
    if m.len() == 1 {
        return Dim::Term(m.pop().expect("one atom"));
    }
    intern(Kind::Product(m.into())).map_or(Dim::Unknown, Dim::Term)
}

fn gcd(a: i64, b: i64) -> i64 {
    super::growth::gcd(a.into(), b.into()).min(i64::MAX.into()) as i64
}

/// `floor(p / k)` for `k > 0`, canonical: what is a multiple of `k` moves out of the floor, a
/// factor common to the rest and `k` is cancelled, and a floor of a floor is one floor.
fn floor_div(p: Poly, k: i64) -> Option<Dim> {
    if k <= 0 {
        return None;
    }
    if k == 1 {
        return Some(p.dim());
    }
    // The constant's share: c0 = q0·k + r0 with r0 in (-k, 0] (from -c0 = -q0·k - r0, where
    // q0·k itself may not fit).
    let neg = p.c0.checked_neg()?;
    let (q0, r0) = (-neg.div_euclid(k), -neg.rem_euclid(k));
    let mut quot = Poly::constant(q0);
    let mut rem = Poly::constant(r0);
    for (m, c) in p.terms {
        let (q, r) = (c.div_euclid(k), c.rem_euclid(k));
        if q != 0 {
            quot.terms.push((m.clone(), q));
        }
        if r != 0 {
            rem.terms.push((m, r));
        }
    }
    if rem.terms.is_empty() {
        return Some(quot.add(Poly::constant(if r0 < 0 { -1 } else { 0 }))?.dim());
    }
    // floor((floor(u/m) + c)/k) = floor((u + c·m)/(m·k)).
    if let [(mono, 1)] = rem.terms.as_slice() {
        if let [atom] = mono.as_slice() {
            if let Kind::Floor(u, m) = &atom.0.kind {
                let inner = u.poly().add(Poly::constant(rem.c0.checked_mul(*m)?))?;
                let merged = floor_div(inner, m.checked_mul(k)?)?;
                return Some(quot.add(Poly::of(&merged)?)?.dim());
            }
        }
    }
    let g = rem.terms.iter().fold(k, |g, (_, c)| gcd(g, *c));
    if g > 1 {
        // floor((g·R + r0)/(g·k')) = floor((R + floor(r0/g))/k') for integer R.
        let reduced = Poly { c0: r0.div_euclid(g), terms: rem.terms.into_iter().map(|(m, c)| (m, c / g)).collect() };
        let inner = floor_div(reduced, k / g)?;
        return Some(quot.add(Poly::of(&inner)?)?.dim());
    }
    let Dim::Term(arg) = rem.dim() else { return None };
    let floor = intern(Kind::Floor(arg, k))?;
    Some(quot.add(Poly::atom(floor))?.dim())
}

// ---------------------------------------------------------------------------------------------
// The arithmetic on dims.

impl Dim {
    /// The smallest and largest value the dim can take (`None`: no largest), each named size
    /// or fresh unknown within `atoms`' bounds; wide where it cannot tell, never wrong.
    pub(super) fn bounds_in(&self, atoms: &dyn Fn(&Term) -> (i64, Option<i64>)) -> (i64, Option<i64>) {
        match self {
            Dim::Known(v) => (*v, Some(*v)),
            Dim::Term(t) => t.bounds(atoms),
            Dim::Unknown => (i64::MIN, None),
        }
    }

    /// The smallest and largest value the dim can take (`None`: no largest), every named size
    /// and unknown being a size, 0 or more; wide where it cannot tell, never wrong.
    pub fn bounds(&self) -> (i64, Option<i64>) {
        self.bounds_in(&|_| (0, None))
    }

    /// `self + other`.
    pub fn add(&self, other: &Dim) -> Dim {
        (|| Some(Poly::of(self)?.add(Poly::of(other)?)?.dim()))().unwrap_or(Dim::Unknown)
    }

    /// `self - other`.
    pub fn sub(&self, other: &Dim) -> Dim {
        (|| Some(Poly::of(self)?.add(Poly::of(other)?.scale(-1)?)?.dim()))().unwrap_or(Dim::Unknown)
    }

    /// `self * other`.
    pub fn mul(&self, other: &Dim) -> Dim {
        if matches!(self, Dim::Known(0)) || matches!(other, Dim::Known(0)) {
            return Dim::Known(0);
        }
        (|| Some(Poly::of(self)?.mul(&Poly::of(other)?)?.dim()))().unwrap_or(Dim::Unknown)
    }

    /// `self` to the power `k`: exact for a known size; for a term, the product of `k` factors,
    /// `k` up to `MAX_POWER` (8); unknown otherwise (and on overflow).
    pub fn pow(&self, k: i64) -> Dim {
        match self {
            Dim::Known(x) => u32::try_from(k).ok().and_then(|k| x.checked_pow(k)).map_or(Dim::Unknown, Dim::Known),
            Dim::Term(_) if (0..=MAX_POWER).contains(&k) => (0..k).fold(Dim::Known(1), |acc, _| acc.mul(self)),
            _ => Dim::Unknown,
        }
    }

    /// `floor(self / other)`; unknown for a zero divisor.
    pub fn div_floor(&self, other: &Dim) -> Dim {
        match other {
            Dim::Known(k) if *k > 0 => (|| floor_div(Poly::of(self)?, *k))().unwrap_or(Dim::Unknown),
            Dim::Known(k) if *k < 0 => match self {
                // floor(a / -k) = floor(-a / k).
                Dim::Known(_) | Dim::Term(_) => {
                    Dim::Known(0).sub(self).div_floor(&Dim::Known(k.checked_neg().unwrap_or(0)))
                }
                Dim::Unknown => Dim::Unknown,
            },
            Dim::Term(d) => div_term(self, d),
            _ => Dim::Unknown,
        }
    }

    /// `ceil(self / other)` as `floor((self + other - 1) / other)` for a positive divisor (a
    /// size, or a constant); unknown for a zero divisor.
    pub fn div_ceil(&self, other: &Dim) -> Dim {
        match other {
            Dim::Known(k) if *k > 0 => self.add(&Dim::Known(k - 1)).div_floor(other),
            Dim::Term(_) => self.add(&other.sub(&Dim::Known(1))).div_floor(other),
            Dim::Known(k) if *k < 0 => {
                // ceil(a / b) = -floor(-a / b).
                Dim::Known(0).sub(&Dim::Known(0).sub(self).div_floor(other))
            }
            _ => Dim::Unknown,
        }
    }

    /// `self mod other` with the divisor's sign (Python's `%`, ONNX Mod with `fmod=0`), for a
    /// known divisor.
    pub fn modulo(&self, other: &Dim) -> Dim {
        match other {
            Dim::Known(0) | Dim::Unknown | Dim::Term(_) => Dim::Unknown,
            Dim::Known(_) => self.sub(&other.mul(&self.div_floor(other))),
        }
    }
}

/// `floor(a / d)` for a symbolic divisor: exact where `d`'s monomial divides every monomial of
/// `a` (`batch*seq*64 / (batch*64)` is `seq`), else a `floor(a/d)` atom.
fn div_term(a: &Dim, d: &Term) -> Dim {
    let (Some(p), q) = (Poly::of(a), d.poly()) else { return Dim::Unknown };
    // `p = m·q` for one monomial `m` (`p == q` among them: 1).
    if let Some(m) = monomial_quotient(&p, &q) {
        return m.dim();
    }
    if let ([(dm, dc)], 0) = (q.terms.as_slice(), q.c0) {
        if *dc > 0 && p.c0 == 0 {
            let mut quotient = Poly::constant(0);
            let exact = p.terms.iter().all(|(m, c)| match remove_factors(m, dm) {
                Some(rest) if rest.is_empty() => {
                    quotient.c0 = quotient.c0.saturating_add(*c);
                    true
                }
                Some(rest) => {
                    quotient.terms.push((rest, *c));
                    true
                }
                None => false,
            });
            if exact {
                return (|| floor_div(quotient.normalize()?, *dc))().unwrap_or(Dim::Unknown);
            }
        }
    }
    let a = match p.dim() {
        Dim::Term(a) => a,
        Dim::Known(0) => return Dim::Known(0),
        // A constant over a size (`196//(h*w)`, from torch): the numerator is a sum of no
        // monomials, a term only inside this `Div`.
        Dim::Known(c) => match intern(Kind::Sum(Box::new([]), c)) {
            Some(a) => a,
            None => return Dim::Unknown,
        },
        Dim::Unknown => return Dim::Unknown,
    };
    intern(Kind::Div(a, d.clone())).map_or(Dim::Unknown, Dim::Term)
}

/// `m` where `p = m·q` for one monomial `m` times an integer (`batch·X·Y / (X·Y)` with `X·Y`
/// a sum is `batch`): each monomial of `p` over the first of `q` is tried.
fn monomial_quotient(p: &Poly, q: &Poly) -> Option<Poly> {
    let (dm, dc) = q.terms.first()?;
    p.terms.iter().find_map(|(pm, pc)| {
        let rest = remove_factors(pm, dm)?;
        let c = (pc.checked_rem(*dc)? == 0).then(|| pc.checked_div(*dc))??;
        let m = if rest.is_empty() { Poly::constant(c) } else { Poly { c0: 0, terms: vec![(rest, c)] } };
        (m.mul(q)? == *p).then_some(m)
    })
}

/// `m` without the factors of `d` (a sub-multiset of it); `None` when `d` does not divide `m`.
/// An empty result is the monomial 1.
fn remove_factors(m: &[Term], d: &[Term]) -> Option<Vec<Term>> {
    let mut rest = m.to_vec();
    for f in d {
        let i = rest.iter().position(|x| x == f)?;
        rest.remove(i);
    }
    Some(rest)
}

/// The smallest (`max` false) or largest of `dims`: told where the differences are constants,
/// else a `min`/`max` term over the rest.
pub(super) fn extreme(dims: &[&Dim], max: bool) -> Dim {
    let better = |x: i64, y: i64| if max { x > y } else { x < y };
    let pick = |c: Option<i64>, k: i64| Some(c.map_or(k, |c| if better(k, c) { k } else { c }));
    let mut constant: Option<i64> = None;
    let mut terms: Vec<Term> = Vec::new();
    for d in dims {
        match d {
            Dim::Unknown => return Dim::Unknown,
            Dim::Known(k) => constant = pick(constant, *k),
            Dim::Term(t) => match &t.0.kind {
                // A min of mins (a max of maxes) is one.
                Kind::Min(ts, c) | Kind::Max(ts, c) if matches!(t.0.kind, Kind::Max(..)) == max => {
                    if let Some(c) = c {
                        constant = pick(constant, *c);
                    }
                    terms.extend(ts.iter().cloned());
                }
                _ => terms.push(t.clone()),
            },
        }
    }
    terms.sort();
    terms.dedup();
    // Terms a constant apart: keep the one that wins.
    let mut kept: Vec<Term> = Vec::new();
    'next: for t in terms {
        for k in kept.iter_mut() {
            if let Dim::Known(diff) = Dim::Term(t.clone()).sub(&Dim::Term(k.clone())) {
                if better(diff, 0) {
                    *k = t;
                }
                continue 'next;
            }
        }
        kept.push(t);
    }
    kept.sort();
    // A constant every term beats (or none beats) by its bounds decides alone.
    if let Some(c) = constant {
        let bounds: Vec<(i64, Option<i64>)> = kept.iter().map(|t| t.bounds(&|_| (0, None))).collect();
        if !kept.is_empty() && bounds.iter().all(|&(l, h)| if max { c >= h.unwrap_or(i64::MAX) } else { c <= l }) {
            return Dim::Known(c);
        }
        // A constant that no term can beat drops out; with no terms it is the answer.
        if !kept.is_empty() && bounds.iter().all(|&(l, h)| if max { l >= c } else { h.is_some_and(|h| h <= c) }) {
            constant = None;
        }
    }
    match (constant, kept.len()) {
        (Some(c), 0) => Dim::Known(c),
        (None, 0) => Dim::Unknown,
        (None, 1) => Dim::Term(kept.pop().expect("one term")),
        (c, _) => {
            let kind = if max { Kind::Max(kept.into(), c) } else { Kind::Min(kept.into(), c) };
            intern(kind).map_or(Dim::Unknown, Dim::Term)
        }
    }
}

/// Nested broadcasts are flattened up to this many members; past it they nest, so that a chain
/// of broadcasts over new names costs the same at every step.
const FLAT_BROADCAST: usize = 8;

/// The size `terms` (each 1 or one common size) broadcast to: the one term when they are
/// equal, else a `broadcast` term. A `min(t, ..)` beside `t` itself is dropped: never larger
/// than `t`, it is `t` or 1 wherever the condition holds.
pub(super) fn broadcast(terms: &[&Term]) -> Dim {
    let mut members: Vec<Term> = Vec::new();
    let total: usize = terms.iter().map(|t| if let Kind::Broadcast(ts) = &t.0.kind { ts.len() } else { 1 }).sum();
    for t in terms {
        match &t.0.kind {
            Kind::Broadcast(ts) if total <= FLAT_BROADCAST => members.extend(ts.iter().cloned()),
            _ => members.push((*t).clone()),
        }
    }
    members.sort();
    members.dedup();
    let all = members.clone();
    members.retain(|m| match &m.0.kind {
        Kind::Min(args, _) => !args.iter().any(|a| all.contains(a)),
        _ => true,
    });
    match members.len() {
        0 => Dim::Known(1),
        1 => Dim::Term(members.pop().expect("one member")),
        _ => intern(Kind::Broadcast(members.into())).map_or(Dim::Unknown, Dim::Term),
    }
}

impl Term {
    pub(super) fn kind(&self) -> &Kind {
        &self.0.kind
    }

    /// `u`, for `max(u, c)` with `c <= 0` (a slice's clamped length): the same size as `u`
    /// wherever `u` is the size of a tensor, which cannot be negative.
    pub fn clamped_of(&self) -> Option<&Term> {
        match &self.0.kind {
            Kind::Max(ts, Some(c)) if ts.len() == 1 && *c <= 0 => Some(&ts[0]),
            _ => None,
        }
    }

    /// The size named `name` (a `dim_param` as written; not read as an expression).
    pub fn name(name: &str) -> Term {
        intern(Kind::Name(name.into())).expect("a name is one node")
    }

    /// The `n`th size inference knows nothing about, printed `?n`.
    pub fn fresh(n: u64) -> Term {
        intern(Kind::Fresh(n)).expect("a fresh size is one node")
    }

    /// The number of nodes of the term.
    pub fn size(&self) -> u32 {
        self.0.size
    }

    /// The name, for a named size.
    pub fn as_name(&self) -> Option<&str> {
        match &self.0.kind {
            Kind::Name(s) => Some(s),
            _ => None,
        }
    }

    /// The number the term adds to its other summands (`-1` in `seq-1`; 0 for a term that
    /// is no sum).
    pub fn constant(&self) -> i64 {
        match &self.0.kind {
            Kind::Sum(_, c0) => *c0,
            _ => 0,
        }
    }

    /// True for a size inference invented (`?n`) and for a term built over one.
    pub fn has_fresh(&self) -> bool {
        self.any(&|k| matches!(k, Kind::Fresh(_)))
    }

    /// True for a term holding a name longer than [`super::MAX_TEXT`] bytes (kept unread).
    pub fn has_long_name(&self) -> bool {
        self.any(&|k| matches!(k, Kind::Name(n) if n.len() > super::MAX_TEXT))
    }

    /// True for a term built over fresh unknowns only: it names no size of the model.
    pub fn is_anonymous(&self) -> bool {
        !self.any(&|k| matches!(k, Kind::Name(_)))
    }

    /// True for a term holding a `broadcast` (a size taken under a side condition).
    pub fn has_broadcast(&self) -> bool {
        self.any(&|k| matches!(k, Kind::Broadcast(_)))
    }

    fn any(&self, f: &dyn Fn(&Kind) -> bool) -> bool {
        f(&self.0.kind) || self.0.kind.children().iter().any(|c| c.any(f))
    }

    /// The polynomial this term is.
    fn poly(&self) -> Poly {
        match &self.0.kind {
            Kind::Sum(ts, c0) => Poly {
                c0: *c0,
                terms: ts
                    .iter()
                    .map(|(t, c)| match &t.0.kind {
                        Kind::Product(fs) => (fs.to_vec(), *c),
                        _ => (vec![t.clone()], *c),
                    })
                    .collect(),
            },
            Kind::Product(fs) => Poly { c0: 0, terms: vec![(fs.to_vec(), 1)] },
            _ => Poly::atom(self.clone()),
        }
    }

    /// The named sizes and fresh unknowns the term is built over, each once, in order.
    pub fn atoms(&self) -> Vec<Term> {
        let mut out = Vec::new();
        let mut stack = vec![self.clone()];
        while let Some(t) = stack.pop() {
            match &t.0.kind {
                Kind::Name(_) | Kind::Fresh(_) => out.push(t.clone()),
                k => stack.extend(k.children().into_iter().cloned()),
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The term's value when each named size or fresh unknown takes the value `value` gives
    /// it, exact in integers; `None` where one has none, on overflow, for a division by 0,
    /// and for a broadcast of sizes that do not broadcast.
    pub fn eval(&self, value: &dyn Fn(&Term) -> Option<i64>) -> Option<i64> {
        let all = |ts: &[Term]| ts.iter().map(|t| t.eval(value)).collect::<Option<Vec<i64>>>();
        Some(match &self.0.kind {
            Kind::Name(_) | Kind::Fresh(_) => value(self)?,
            Kind::Sum(ts, c0) => {
                ts.iter().try_fold(*c0, |acc, (t, c)| acc.checked_add(t.eval(value)?.checked_mul(*c)?))?
            }
            Kind::Product(fs) => fs.iter().try_fold(1i64, |acc, f| acc.checked_mul(f.eval(value)?))?,
            Kind::Floor(t, k) => t.eval(value)?.div_euclid(*k),
            Kind::Div(a, b) => {
                let (n, d) = (a.eval(value)?, b.eval(value)?);
                let q = n.checked_div(d)?;
                if n % d != 0 && ((n < 0) != (d < 0)) {
                    q - 1
                } else {
                    q
                }
            }
            Kind::Min(ts, c) => all(ts)?.into_iter().chain(*c).min()?,
            Kind::Max(ts, c) => all(ts)?.into_iter().chain(*c).max()?,
            Kind::Broadcast(ts) => {
                all(ts)?.into_iter().filter(|&v| v != 1).try_fold(1, |out, v| (out == 1 || out == v).then_some(v))?
            }
        })
    }

    /// The smallest and largest value the term can take (`None`: no largest) when each named
    /// size or fresh unknown lies within the bounds `bounds` gives it; wide where it cannot
    /// tell, never wrong.
    pub fn bounds(&self, bounds: &dyn Fn(&Term) -> (i64, Option<i64>)) -> (i64, Option<i64>) {
        let b = |t: &Term| t.bounds(bounds);
        let clamp = |x: i128| x.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        match &self.0.kind {
            Kind::Name(_) | Kind::Fresh(_) => bounds(self),
            Kind::Sum(ts, c0) => {
                let (mut lo, mut hi) = (*c0 as i128, Some(*c0 as i128));
                for (t, c) in ts {
                    let (l, h) = b(t);
                    let c = *c as i128;
                    if c > 0 {
                        lo += c * l as i128;
                        hi = hi.zip(h).map(|(x, h)| x + c * h as i128);
                    } else {
                        match h {
                            Some(h) => lo += c * h as i128,
                            None => lo = i64::MIN as i128,
                        }
                        hi = hi.map(|x| x + c * l as i128);
                    }
                }
                let (mut lo, mut hi) = (clamp(lo), hi.map(clamp));
                // `min(a, b) + r` is at most `a + r` and `b + r`, which can be tighter than the
                // sum of the parts' bounds (`min(64,s) - s <= 0`); `max(a, b) + r` likewise at
                // least. Taken for a sum with one such term, with coefficient 1.
                let extremes: Vec<usize> = (0..ts.len())
                    .filter(|&i| ts[i].1 == 1 && matches!(ts[i].0 .0.kind, Kind::Min(..) | Kind::Max(..)))
                    .collect();
                if let [i] = extremes[..] {
                    let rest = Dim::Term(self.clone()).sub(&Dim::Term(ts[i].0.clone()));
                    let (Kind::Min(ms, k) | Kind::Max(ms, k)) = &ts[i].0 .0.kind else { unreachable!("a min or max") };
                    let members = ms.iter().map(|m| Dim::Term(m.clone())).chain(k.map(Dim::Known));
                    let bound = |m: Dim| m.add(&rest).bounds_in(bounds);
                    if matches!(ts[i].0 .0.kind, Kind::Min(..)) {
                        if let Some(h) = members.filter_map(|m| bound(m).1).min() {
                            hi = Some(hi.map_or(h, |x| x.min(h)));
                        }
                    } else {
                        lo = members.map(|m| bound(m).0).max().map_or(lo, |l| lo.max(l));
                    }
                }
                // Each floor `c·floor(e/k)` lies between `c·(e-k+1)/k` and `c·e/k`. Where the
                // parts' bounds leave a side open, the floors take their side of that range,
                // either every floor or only those whose sign opens the side (the others kept
                // as atoms): times the lcm `L` of their divisors, the sum is bounded by the
                // bound of `L·r + Σ c·(L/k)·e'`, `r` the rest. Tighter where the floors and `r`
                // share names (`4s - 4·floor(3s/4)` is at least 0, `3s - 4·floor(3s/4)` 0 to 3).
                let floors: Vec<(&Term, &Term, i64, i64)> = ts
                    .iter()
                    .filter_map(|(t, c)| match &t.0.kind {
                        Kind::Floor(e, k) => Some((t, e, *c, *k)),
                        _ => None,
                    })
                    .collect();
                let l = floors.iter().try_fold(1, |l, (_, _, _, k)| super::lcm(l, *k));
                if let (false, Some(l)) = (floors.is_empty(), l) {
                    let rest = ts.iter().filter(|(t, _)| !matches!(t.0.kind, Kind::Floor(..)));
                    let rest =
                        rest.fold(Dim::Known(*c0), |acc, (t, c)| acc.add(&Dim::Term(t.clone()).mul(&Dim::Known(*c))));
                    // `low`: the side that bounds the sum from below; `all`: every floor
                    // relaxed, else only those whose coefficient opens that side.
                    let relaxed = |low: bool, all: bool| {
                        floors.iter().fold(rest.mul(&Dim::Known(l)), |acc, (f, e, c, k)| {
                            let (Some(m), Some(cl)) = (c.checked_mul(l / k), c.checked_mul(l)) else {
                                return Dim::Unknown;
                            };
                            if !all && (*c > 0) == low {
                                return acc.add(&Dim::Term((*f).clone()).mul(&Dim::Known(cl)));
                            }
                            let slack = if (*c > 0) == low { k - 1 } else { 0 };
                            acc.add(&Dim::Term((*e).clone()).sub(&Dim::Known(slack)).mul(&Dim::Known(m)))
                        })
                    };
                    let bound = |d: Dim| d.bounds_in(bounds);
                    // The second way only where it differs from the first and relaxes some floor.
                    let mixed = floors.iter().any(|f| f.2 > 0) && floors.iter().any(|f| f.2 < 0);
                    if lo == i64::MIN {
                        let some = if mixed { bound(relaxed(true, false)).0 } else { i64::MIN };
                        let low = bound(relaxed(true, true)).0.max(some);
                        if low > i64::MIN {
                            lo = low.div_euclid(l) + i64::from(low.rem_euclid(l) != 0);
                        }
                    }
                    if hi.is_none() {
                        let b = if mixed { bound(relaxed(false, false)).1 } else { None };
                        let a = bound(relaxed(false, true)).1;
                        hi = a.into_iter().chain(b).min().map(|h| h.div_euclid(l));
                    }
                }
                (lo, hi)
            }
            Kind::Product(fs) => {
                // Exact for factors that cannot be negative; wide otherwise.
                let bs: Vec<(i64, Option<i64>)> = fs.iter().map(b).collect();
                if bs.iter().any(|(l, _)| *l < 0) {
                    return (i64::MIN, None);
                }
                let lo = bs.iter().fold(1i128, |acc, (l, _)| acc * *l as i128);
                let hi = bs.iter().try_fold(1i128, |acc, (_, h)| h.map(|h| acc.saturating_mul(h as i128)));
                (clamp(lo), hi.map(clamp))
            }
            Kind::Floor(t, k) => {
                let (l, h) = b(t);
                (l.div_euclid(*k), h.map(|h| h.div_euclid(*k)))
            }
            Kind::Div(a, d) => {
                let ((al, ah), (dl, _)) = (b(a), b(d));
                if al >= 0 && dl > 0 {
                    (0, ah.map(|h| h / dl))
                } else {
                    (i64::MIN, None)
                }
            }
            Kind::Min(ts, c) => {
                let bs: Vec<_> = ts.iter().map(b).collect();
                let lo = bs.iter().map(|x| x.0).chain(*c).min().unwrap_or(0);
                let hi = bs.iter().filter_map(|x| x.1).chain(*c).min();
                (lo, hi)
            }
            Kind::Max(ts, c) => {
                let bs: Vec<_> = ts.iter().map(b).collect();
                let lo = bs.iter().map(|x| x.0).chain(*c).max().unwrap_or(0);
                let hi = bs.iter().map(|x| x.1).chain(c.map(Some)).try_fold(i64::MIN, |m, h| h.map(|h| m.max(h)));
                (lo, hi)
            }
            Kind::Broadcast(ts) => {
                let bs: Vec<_> = ts.iter().map(b).collect();
                let lo = bs.iter().map(|x| x.0).min().unwrap_or(1).min(1);
                let hi = bs.iter().map(|x| x.1).try_fold(1i64, |m, h| h.map(|h| m.max(h)));
                (lo, hi)
            }
        }
    }

    /// The term with each named size or fresh unknown that `with` gives a dim replaced by it,
    /// rebuilt through the arithmetic (so a bound size computes).
    pub fn substitute(&self, with: &dyn Fn(&Term) -> Option<Dim>) -> Dim {
        let sub = |t: &Term| t.substitute(with);
        let all = |ts: &[Term]| ts.iter().map(sub).collect::<Vec<Dim>>();
        match &self.0.kind {
            Kind::Name(_) | Kind::Fresh(_) => with(self).unwrap_or_else(|| Dim::Term(self.clone())),
            Kind::Sum(ts, c0) => ts.iter().fold(Dim::Known(*c0), |acc, (t, c)| acc.add(&sub(t).mul(&Dim::Known(*c)))),
            Kind::Product(fs) => fs.iter().fold(Dim::Known(1), |acc, f| acc.mul(&sub(f))),
            Kind::Floor(t, k) => sub(t).div_floor(&Dim::Known(*k)),
            Kind::Div(a, d) => sub(a).div_floor(&sub(d)),
            Kind::Min(ts, c) | Kind::Max(ts, c) => {
                let mut dims = all(ts);
                dims.extend(c.map(Dim::Known));
                let refs: Vec<&Dim> = dims.iter().collect();
                extreme(&refs, matches!(self.0.kind, Kind::Max(..)))
            }
            Kind::Broadcast(ts) => {
                let dims = all(ts);
                Dim::broadcast_of(&dims.iter().collect::<Vec<_>>())
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Printing: the text written to `dim_param` and reports. `2*x` is written `x*2`, as exporters
// and the earlier text form wrote it.

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.kind {
            Kind::Name(s) => f.write_str(s),
            Kind::Fresh(n) => write!(f, "?{n}"),
            Kind::Product(fs) => join(f, fs, "*"),
            Kind::Sum(ts, c0) => {
                // A constant goes first where the first term is subtracted (`5-a`), or alone.
                let lead = ts.first().is_none_or(|(_, c)| *c < 0) && *c0 > 0;
                if lead {
                    write!(f, "{c0}")?;
                }
                for (i, (t, c)) in ts.iter().enumerate() {
                    let first = i == 0 && !lead;
                    match (*c, first) {
                        (1, true) => write!(f, "{t}")?,
                        (1, false) => write!(f, "+{t}")?,
                        (-1, _) => write!(f, "-{t}")?,
                        (c, true) if c > 0 => write!(f, "{t}*{c}")?,
                        (c, false) if c > 0 => write!(f, "+{t}*{c}")?,
                        (c, _) => write!(f, "-{t}*{}", -(c as i128))?,
                    }
                }
                match *c0 {
                    _ if lead => Ok(()),
                    0 => Ok(()),
                    c if c > 0 => write!(f, "+{c}"),
                    c => write!(f, "-{}", -(c as i128)),
                }
            }
            Kind::Floor(t, k) => {
                if matches!(t.0.kind, Kind::Sum(..)) {
                    write!(f, "floor(({t})/{k})")
                } else {
                    write!(f, "floor({t}/{k})")
                }
            }
            Kind::Div(a, b) => {
                let wrap = |t: &Term| {
                    matches!(&t.0.kind, Kind::Sum(ts, _) if !ts.is_empty()) || matches!(t.0.kind, Kind::Product(_))
                };
                let (a, b) = (
                    if wrap(a) { format!("({a})") } else { a.to_string() },
                    if wrap(b) { format!("({b})") } else { b.to_string() },
                );
                write!(f, "floor({a}/{b})")
            }
            Kind::Min(ts, c) | Kind::Max(ts, c) => {
                f.write_str(if matches!(self.0.kind, Kind::Min(..)) { "min(" } else { "max(" })?;
                // A min or max holds at least one term beside its constant.
                if let Some(c) = c {
                    write!(f, "{c},")?;
                }
                join(f, ts, ",")?;
                f.write_str(")")
            }
            Kind::Broadcast(ts) => {
                f.write_str("broadcast(")?;
                join(f, ts, ",")?;
                f.write_str(")")
            }
        }
    }
}

/// Writes `terms` with `sep` between them.
fn join(f: &mut fmt::Formatter<'_>, terms: &[Term], sep: &str) -> fmt::Result {
    for (i, t) in terms.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{t}")?;
    }
    Ok(())
}

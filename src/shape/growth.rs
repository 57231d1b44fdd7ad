//! How a size term of one named size grows: what the contract solver needs to prove, rather
//! than sample, for which sizes a condition holds.
//!
//! A term built from sums, products by constants, floors by constants, `min`, `max` and
//! `broadcast` of one size `x` is, beyond some size (`settle`), an exact arithmetic sequence on
//! each class of sizes modulo a `period`: a floor by `k` of a term that grows by `d` over `p`
//! grows by exactly `d` over `p*k`; of two arguments of `min`/`max`/`broadcast` with equal
//! slopes the difference repeats with the period, and with different slopes they never cross
//! again beyond the point their envelopes allow. A condition comparing such terms (equal, one
//! of some sizes, at least a size) is therefore, beyond the largest such point, the same on
//! `x` and `x + period`.

use super::term::{Kind, Term};

/// The longest period followed; a term that needs a longer one is not analysed.
pub const MAX_PERIOD: i64 = 1 << 20;

/// See the module's documentation. `slope` is exact (`num/den`); `offset` and `spread` bound
/// the term: `|t(x) - slope*x - offset| <= spread` for every size `x >= 1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Growth {
    pub num: i128,
    pub den: i128,
    pub offset: f64,
    pub spread: f64,
    pub period: i64,
    /// Beyond this size the term is arithmetic on each class modulo `period`.
    pub settle: f64,
}

impl Growth {
    pub fn constant(c: i64) -> Growth {
        Growth { num: 0, den: 1, offset: c as f64, spread: 0.0, period: 1, settle: 0.0 }
    }

    fn slope(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// Slopes are kept reduced with a positive denominator: equal slopes are equal pairs.
    fn same_slope(&self, other: &Growth) -> bool {
        (self.num, self.den) == (other.num, other.den)
    }

    /// The size beyond which `self` and `other` are never equal unless their slopes agree
    /// (0 when they do: their difference then repeats with the period).
    pub fn crossing(&self, other: &Growth) -> f64 {
        if self.same_slope(other) {
            return 0.0;
        }
        let gap = (self.offset - other.offset).abs() + self.spread + other.spread;
        gap / (self.slope() - other.slope()).abs() + 1.0
    }

    fn scale(self, c: i64) -> Option<Growth> {
        let num = self.num.checked_mul(i128::from(c))?;
        Some(Growth { num, offset: self.offset * c as f64, spread: self.spread * (c as f64).abs(), ..self }.reduced())
    }

    fn add(self, o: Growth) -> Option<Growth> {
        let num = self.num.checked_mul(o.den)?.checked_add(o.num.checked_mul(self.den)?)?;
        Some(
            Growth {
                num,
                den: self.den.checked_mul(o.den)?,
                offset: self.offset + o.offset,
                spread: self.spread + o.spread,
                period: lcm(self.period, o.period)?,
                settle: self.settle.max(o.settle),
            }
            .reduced(),
        )
    }

    fn floor(self, k: i64) -> Option<Growth> {
        let period = self.period.checked_mul(k).filter(|p| *p <= MAX_PERIOD)?;
        Some(
            Growth {
                den: self.den.checked_mul(i128::from(k))?,
                offset: self.offset / k as f64 - 0.5,
                spread: self.spread / k as f64 + 0.5,
                period,
                ..self
            }
            .reduced(),
        )
    }

    /// `max` (or `min`) of two, of any slopes: beyond their crossing the one of the larger (or
    /// smaller) slope is the extreme. `broadcast` takes the larger where slopes differ, as the
    /// smaller must then be 1 for the sizes to broadcast.
    fn extreme(self, o: Growth, max: bool) -> Option<Growth> {
        let period = lcm(self.period, o.period)?;
        let settle = self.settle.max(o.settle);
        if self.same_slope(&o) {
            let pick = |a: f64, b: f64| if max { a.max(b) } else { a.min(b) };
            let lo = pick(self.offset - self.spread, o.offset - o.spread);
            let hi = pick(self.offset + self.spread, o.offset + o.spread);
            return Some(Growth { offset: (lo + hi) / 2.0, spread: (hi - lo) / 2.0, period, settle, ..self });
        }
        let larger = self.slope() > o.slope();
        let winner = if larger == max { self } else { o };
        Some(Growth { period, settle: settle.max(self.crossing(&o)), ..winner })
    }

    fn reduced(self) -> Growth {
        let g = gcd(self.num, self.den).max(1);
        Growth { num: self.num / g, den: self.den / g, ..self }
    }
}

/// The greatest common divisor of `|a|` and `|b|` (`i128::MAX` where it is `2^127`).
pub(super) fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i128::try_from(a).unwrap_or(i128::MAX)
}

pub fn lcm(a: i64, b: i64) -> Option<i64> {
    let g = gcd(i128::from(a), i128::from(b)).max(1);
    i64::try_from(i128::from(a) / g * i128::from(b)).ok().filter(|p| *p <= MAX_PERIOD)
}

impl Term {
    /// How the term grows as a function of the named size `x`; `None` when it holds another
    /// size, a product of two growing sizes, a symbolic divisor, or needs a period past
    /// [`MAX_PERIOD`].
    pub fn growth(&self, x: &Term) -> Option<Growth> {
        match self.kind() {
            Kind::Name(_) | Kind::Fresh(_) => (self == x).then_some(Growth { num: 1, ..Growth::constant(0) }),
            Kind::Sum(monomials, c0) => {
                let mut acc = Growth::constant(*c0);
                for (m, c) in monomials.iter() {
                    acc = acc.add(m.growth(x)?.scale(*c)?)?;
                }
                Some(acc)
            }
            // A product where all factors but one are constant beyond some size (`d * [i < 0]`
            // of a slice bound whose sign settles) is that one scaled.
            Kind::Product(fs) => {
                let (mut scale, mut settle, mut rest) = (1i64, 0f64, None);
                for g in fs.iter().map(|f| f.growth(x)) {
                    let g = g?;
                    settle = settle.max(g.settle);
                    match (g.num, g.spread) {
                        (0, s) if s == 0.0 && g.offset.fract() == 0.0 => scale = scale.checked_mul(g.offset as i64)?,
                        _ if rest.is_none() => rest = Some(g),
                        _ => return None,
                    }
                }
                let g = rest.unwrap_or(Growth::constant(1)).scale(scale)?;
                Some(Growth { settle: g.settle.max(settle), ..g })
            }
            Kind::Div(..) => None,
            Kind::Floor(e, k) => e.growth(x)?.floor(*k),
            Kind::Min(ts, c) | Kind::Max(ts, c) => {
                let max = matches!(self.kind(), Kind::Max(..));
                let members = c.map(Growth::constant).map(Some).into_iter().chain(ts.iter().map(|t| t.growth(x)));
                members.reduce(|acc, g| acc?.extreme(g?, max))?
            }
            Kind::Broadcast(ts) => {
                let one = Growth::constant(1);
                // Beyond its crossing with 1, whether a member is 1 no longer changes along a class.
                // A size that falls with `x` is not one a broadcast is taken over.
                let members = ts.iter().map(|t| {
                    t.growth(x).filter(|g| g.num >= 0).map(|g| Growth { settle: g.settle.max(g.crossing(&one)), ..g })
                });
                members.reduce(|acc, g| acc?.extreme(g?, true))?
            }
        }
    }
}

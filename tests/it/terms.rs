//! Sizes as terms against integers. Random sequences of the operations shape rules use, applied
//! to named sizes and, in step, to the integers the names stand for: each result's value
//! (`Term::eval`) must be the integer result, and so must the text it prints, read by the small
//! evaluator here (independent of `src/shape`), and reading that text back (`shape::parse`)
//! must give the same term. And terms of the class the canonical form is guaranteed for
//! (integer-affine over names plus one floor of such a form), equal on every binding tried,
//! must be one term.

use std::collections::HashMap;

use onnx_bcast::shape::{self, Dim};
use proptest::prelude::*;

/// Evaluates an expression as `Dim` prints them: integers, names, `+ - * %` (`%` with the
/// divisor's sign), `floor(a/b)`, `ceil(a/b)`, `min(..)`, `max(..)` and parentheses.
struct Eval<'a> {
    text: &'a [u8],
    at: usize,
    env: &'a HashMap<String, i64>,
}

impl Eval<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    fn expr(&mut self) -> Option<i64> {
        let mut v = self.term()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.at += 1;
            let r = self.term()?;
            v = if op == b'+' { v.checked_add(r)? } else { v.checked_sub(r)? };
        }
        Some(v)
    }

    fn term(&mut self) -> Option<i64> {
        let mut v = self.factor()?;
        while let Some(op @ (b'*' | b'%')) = self.peek() {
            self.at += 1;
            let r = self.factor()?;
            v = if op == b'*' {
                v.checked_mul(r)?
            } else {
                let m = v.checked_rem(r)?;
                if m != 0 && (m < 0) != (r < 0) {
                    m + r
                } else {
                    m
                }
            };
        }
        Some(v)
    }

    fn factor(&mut self) -> Option<i64> {
        match self.peek()? {
            b'-' => {
                self.at += 1;
                self.factor()?.checked_neg()
            }
            b'(' => {
                self.at += 1;
                let v = self.expr()?;
                self.eat(b')')?;
                Some(v)
            }
            b'0'..=b'9' => {
                let start = self.at;
                while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    self.at += 1;
                }
                std::str::from_utf8(&self.text[start..self.at]).ok()?.parse().ok()
            }
            _ => {
                let start = self.at;
                // Names as exporters write them: paddle2onnx's `DynamicDimension.1` holds a dot.
                while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.') {
                    self.at += 1;
                }
                let name = std::str::from_utf8(&self.text[start..self.at]).ok()?;
                if self.peek() != Some(b'(') {
                    return self.env.get(name).copied();
                }
                self.at += 1;
                let v = match name {
                    "floor" | "ceil" => {
                        let a = self.expr()?;
                        self.eat(b'/')?;
                        let b = self.expr()?;
                        if b == 0 {
                            return None;
                        }
                        let (q, inexact) = (a.checked_div(b)?, a % b != 0);
                        let negative = (a < 0) != (b < 0);
                        match (name, inexact) {
                            ("floor", true) if negative => q - 1,
                            ("ceil", true) if !negative => q + 1,
                            _ => q,
                        }
                    }
                    "min" | "max" => {
                        let mut vals = vec![self.expr()?];
                        while self.eat(b',').is_some() {
                            vals.push(self.expr()?);
                        }
                        if name == "min" {
                            *vals.iter().min()?
                        } else {
                            *vals.iter().max()?
                        }
                    }
                    _ => return None,
                };
                self.eat(b')')?;
                Some(v)
            }
        }
    }
}

/// The value of a dim's printed text, by the evaluator above.
fn eval_text(d: &Dim, env: &HashMap<String, i64>) -> Option<i64> {
    match d {
        Dim::Known(k) => Some(*k),
        Dim::Unknown => None,
        Dim::Term(t) => {
            let text = t.to_string();
            let mut e = Eval { text: text.as_bytes(), at: 0, env };
            let v = e.expr()?;
            (e.at == e.text.len()).then_some(v)
        }
    }
}

/// The value of a dim by `Term::eval`, names taking their values from `env`.
fn eval(d: &Dim, env: &HashMap<String, i64>) -> Option<i64> {
    match d {
        Dim::Known(k) => Some(*k),
        Dim::Unknown => None,
        Dim::Term(t) => t.eval(&|a| a.as_name().and_then(|n| env.get(n)).copied()),
    }
}

#[test]
fn the_evaluator_reads_what_it_should() {
    let env: HashMap<String, i64> = [("h".to_string(), 37), ("w".to_string(), 5)].into();
    let cases = [
        ("floor((h-1)/2)+1", 19),
        ("ceil(h/4)", 10),
        ("(floor(h/2)+1)*4*w", 380),
        ("h-(w+2)*3", 16),
        ("(-3)*w", -15),
        ("h%w", 2),
        ("max(h,min(64,w))", 37),
        ("floor((-7)/2)", -4),
        ("ceil((-7)/2)", -3),
    ];
    for (text, want) in cases {
        let mut e = Eval { text: text.as_bytes(), at: 0, env: &env };
        assert_eq!(e.expr(), Some(want), "{text}");
    }
}

/// One step: an operation on two earlier results (by index) or on one and a constant.
#[derive(Clone, Debug)]
enum Op {
    Add(usize, usize),
    Sub(usize, usize),
    Mul(usize, usize),
    AddK(usize, i64),
    MulK(usize, i64),
    Floor(usize, i64),
    Ceil(usize, i64),
    Mod(usize, i64),
    Min(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Add(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Sub(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Mul(a, b)),
        (any::<usize>(), -6i64..7).prop_map(|(a, k)| Op::AddK(a, k)),
        (any::<usize>(), 1i64..5).prop_map(|(a, k)| Op::MulK(a, k)),
        (any::<usize>(), 1i64..9).prop_map(|(a, k)| Op::Floor(a, k)),
        (any::<usize>(), 1i64..9).prop_map(|(a, k)| Op::Ceil(a, k)),
        (any::<usize>(), 1i64..9).prop_map(|(a, k)| Op::Mod(a, k)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Min(a, b)),
    ]
}

proptest! {
    #![proptest_config(crate::common::prop_config(2000))]

    #[test]
    fn symbolic_results_evaluate_to_the_integer_results(
        h in 1i64..2000,
        w in 1i64..2000,
        ops in prop::collection::vec(op(), 1..12),
    ) {
        let env: HashMap<String, i64> = [("h".to_string(), h), ("w".to_string(), w)].into();
        // Each result as a Dim and as the integer it stands for.
        let mut vals: Vec<(Dim, i64)> = vec![(Dim::sym("h"), h), (Dim::sym("w"), w), (Dim::Known(3), 3)];
        for op in ops {
            let n = vals.len();
            let pick = |i: usize| vals[i % n].clone();
            let next = match op {
                Op::Add(a, b) => { let (x, y) = (pick(a), pick(b)); (x.0.add(&y.0), x.1.checked_add(y.1)) }
                Op::Sub(a, b) => { let (x, y) = (pick(a), pick(b)); (x.0.sub(&y.0), x.1.checked_sub(y.1)) }
                Op::Mul(a, b) => { let (x, y) = (pick(a), pick(b)); (x.0.mul(&y.0), x.1.checked_mul(y.1)) }
                Op::AddK(a, k) => { let x = pick(a); (x.0.add(&Dim::Known(k)), x.1.checked_add(k)) }
                Op::MulK(a, k) => { let x = pick(a); (x.0.mul(&Dim::Known(k)), x.1.checked_mul(k)) }
                Op::Floor(a, k) => { let x = pick(a); (x.0.div_floor(&Dim::Known(k)), Some(x.1.div_euclid(k))) }
                Op::Ceil(a, k) => { let x = pick(a); (x.0.div_ceil(&Dim::Known(k)), Some(-(-x.1).div_euclid(k))) }
                Op::Mod(a, k) => { let x = pick(a); (x.0.modulo(&Dim::Known(k)), Some(x.1.rem_euclid(k))) }
                Op::Min(a, b) => { let (x, y) = (pick(a), pick(b)); (x.0.min_size(&y.0), Some(x.1.min(y.1))) }
            };
            // Past i64 (or past the expression limit) the step is not compared; it ends here.
            let (Some(v), d) = (next.1, next.0) else { break };
            if d == Dim::Unknown || v.abs() > 1 << 40 {
                break;
            }
            // `min_size` is for sizes; a negative operand is outside its contract.
            if matches!(op, Op::Min(..)) && (vals.iter().any(|x| x.1 < 0)) {
                break;
            }
            prop_assert_eq!(eval(&d, &env), Some(v), "{} with h={}, w={}", d, h, w);
            prop_assert_eq!(eval_text(&d, &env), Some(v), "the text of {} with h={}, w={}", d, h, w);
            if d.to_string().len() <= shape::MAX_TEXT {
                prop_assert_eq!(&shape::parse(&d.to_string()), &d, "{} read back", d);
            }
            vals.push((d, v));
        }
    }
}

#[test]
fn a_stride_two_layer_after_a_two_times_upsampling_gives_the_size_back() {
    // YOLO necks: a feature map of size `a` is upsampled twice (a*2*2), then each stride-2
    // convolution (kernel 3, pad 1: floor((x-1)/2)+1) halves it again.
    let conv = |x: &Dim| x.add(&Dim::Known(-1)).div_floor(&Dim::Known(2)).add(&Dim::Known(1));
    let a = conv(&Dim::sym("h"));
    assert_eq!(a.to_string(), "floor((h-1)/2)+1");
    let up = a.mul(&Dim::Known(2)).mul(&Dim::Known(2));
    assert_eq!(up.to_string(), "floor((h-1)/2)*4+4");
    let p4 = conv(&up);
    assert_eq!(p4, a.mul(&Dim::Known(2)));
    assert_eq!(conv(&p4), a);
    // ceil((a*4+1)/2) is a*2+1.
    assert_eq!(up.add(&Dim::Known(1)).div_ceil(&Dim::Known(2)), a.mul(&Dim::Known(2)).add(&Dim::Known(1)));
}

#[test]
fn a_chain_of_convolutions_is_one_floor() {
    // floor(floor(e/a)/b) = floor(e/(a*b)): five stride-2 layers over `h` are one floor, so a
    // condition relating two stages of a pyramid reads in the terms a person would write.
    let conv = |x: &Dim| x.add(&Dim::Known(-1)).div_floor(&Dim::Known(2)).add(&Dim::Known(1));
    let mut x = Dim::sym("h");
    for _ in 0..5 {
        x = conv(&x);
    }
    assert_eq!(x.to_string(), "floor((h-1)/32)+1");
    for h in 0i64..300 {
        let mut v = h;
        for _ in 0..5 {
            v = (v - 1).div_euclid(2) + 1;
        }
        assert_eq!(eval(&x, &HashMap::from([("h".to_string(), h)])), Some(v), "h = {h}");
    }
}

#[test]
fn exporters_spellings_read_as_the_same_terms() {
    let conv = Dim::sym("h").add(&Dim::Known(-1)).div_floor(&Dim::Known(2)).add(&Dim::Known(1));
    // onnx writes `floor(h/2 - 1/2) + 1` for this size; torch writes `2*s0` for `s0*2`.
    assert_eq!(shape::parse("floor(h/2 - 1/2) + 1"), conv);
    assert_eq!(shape::parse("2*s0"), Dim::sym("s0").mul(&Dim::Known(2)));
    assert_eq!(shape::parse("ceil(h/2)"), Dim::sym("h").div_ceil(&Dim::Known(2)));
    // True division that is no integer, a decimal factor, a name with a dot: names, whole.
    for text in ["h/2 - 1/2", "h*0.5", "h*.5", "DynamicDimension.1", "batch size", "a+"] {
        assert_eq!(shape::parse(text), Dim::sym(text), "{text}");
    }
    // `h*0.5*4` is an integer again.
    assert_eq!(shape::parse("h*0.5*4"), Dim::sym("h").mul(&Dim::Known(2)));
}

/// torch's dynamo exporter writes sizes as sympy prints them (these are from BEiT, Swin, MPT,
/// GPT-Neo and DistilBERT exports): `//`, `**`, `Min`, `Max`, `Mod`. Each reads as a term with
/// the value Python gives the text (the expected values are Python's, `Mod` being `%`).
#[test]
fn dynamo_exporters_python_reads_as_terms() {
    let bindings = [(8, 8), (32, 32), (32, 48), (63, 17)];
    let cases: [(&str, [i64; 4]); 6] = [
        ("(196//((2*((s41//8)) - 1)*(2*((s69//8)) - 1)))", [196, 4, 2, 5]),
        ("(((s41//8))*((s69//8)) + 1)**2", [4, 289, 625, 225]),
        ("((s69//2)) + (Mod(4 - (Mod((s69//2), 4)), 4))", [4, 16, 24, 8]),
        ("1 - Max(0, 1 - s20)", [0, 1, 1, 1]),
        ("((s97*Min(64, s98))//s98)", [8, 32, 48, 17]),
        ("-s41**2 + 3", [-61, -1021, -1021, -3966]),
    ];
    for (text, want) in cases {
        let d = shape::parse(text);
        assert_ne!(d, Dim::sym(text), "{text} is read");
        for ((s41, s69), want) in bindings.iter().zip(want) {
            let env: HashMap<String, i64> =
                [("s41", *s41), ("s69", *s69), ("s20", s41 - 8), ("s97", *s69), ("s98", *s41)]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect();
            assert_eq!(d.bind(&env), Dim::Known(want), "{text} = {d} at s41={s41}, s69={s69}");
        }
    }
    // Powers past 8, and of a size, stay names.
    for text in ["s0**9", "2**s0"] {
        assert_eq!(shape::parse(text), Dim::sym(text), "{text}");
    }
}

/// Swin's window partition reshapes `[b*X*Y, ..]` to `[-1, X, Y, ..]` with `X` and `Y` sums
/// (the padded height over the window): the `-1` is `b`. A divisor that is a sum divides a
/// multiple of it by a monomial; where it does not divide, the floor keeps its value.
#[test]
fn a_multiple_of_a_sum_over_the_sum_is_the_multiplier() {
    let (b, h, w) = (Dim::sym("b"), Dim::sym("h"), Dim::sym("w"));
    let xy = h.add(&Dim::Known(1)).mul(&w.add(&Dim::Known(2)));
    assert_eq!(b.mul(&xy).div_floor(&xy), b);
    assert_eq!(b.mul(&xy).mul(&Dim::Known(3)).div_floor(&xy), b.mul(&Dim::Known(3)));
    assert_eq!(xy.mul(&Dim::Known(6)).div_floor(&xy), Dim::Known(6));
    let odd = b.mul(&xy).add(&Dim::Known(1)).div_floor(&xy);
    for (bv, hv, wv) in [(1, 0, 0), (2, 3, 1), (5, 7, 9)] {
        let env: HashMap<String, i64> = [("b", bv), ("h", hv), ("w", wv)].map(|(k, v)| (k.to_string(), v)).into();
        let want = (bv * (hv + 1) * (wv + 2) + 1).div_euclid((hv + 1) * (wv + 2));
        assert_eq!(eval(&odd, &env), Some(want), "{odd} at b={bv}, h={hv}, w={wv}");
    }
}

/// `torch.cat([x[:, :c], x[:, c:]])` (Funnel's first token and the rest): `min(c,n)` and
/// `max(n-c,0)` add up to `n` for every `n`, and so for any size expression in its place.
#[test]
fn an_axis_sliced_and_joined_again_is_the_axis() {
    let k = Dim::Known;
    for t in [Dim::sym("n"), Dim::sym("h").div_floor(&k(2)).add(&k(1)), Dim::parse("a*b")] {
        for c in [0, 1, 3, -2] {
            let head = Dim::min_of(&[&k(c), &t]);
            let tail = Dim::max_of(&[&t.sub(&k(c)), &k(0)]);
            assert_eq!(head.add(&tail), t, "{head} + {tail}");
            assert_eq!(tail.add(&head).mul(&k(3)), t.mul(&k(3)), "3 ({tail} + {head})");
        }
    }
}

/// XLM slices `pos[:, -seq:]` from `pos[:, :seq]` of a 64-long table: the axis `min(64,seq)`
/// plus the start `-seq` is never positive, which the bounds must see to read the start as 0.
/// Their sum's bounds are at most each member's plus the rest (`min(64,s)-s <= 0`, and
/// `max(3,s)-s >= 0`), not the parts' bounds added (at most 64, at least 3 - unbounded).
#[test]
fn a_min_beside_its_member_is_bounded_by_it() {
    let s = Dim::sym("s");
    let bounds = |d: Dim| d.term().expect("a term").bounds(&|_| (0, None));
    assert_eq!(bounds(Dim::min_of(&[&Dim::Known(64), &s]).sub(&s)).1, Some(0));
    assert_eq!(bounds(Dim::max_of(&[&Dim::Known(3), &s]).sub(&s)).0, 0);
    // Still never narrower than the values it takes: min(64,s)-s is -36 at s = 100.
    assert!(bounds(Dim::min_of(&[&Dim::Known(64), &s]).sub(&s)).0 <= -36);
}

/// Longformer pads its sequence to a multiple of 4: `s + (4 - s % 4) % 4`, which is
/// `4s - 4·floor(3s/4)`. It is never negative, which the bounds see through the floor's own
/// bounds (`floor(3s/4)` lies between `(3s-3)/4` and `3s/4`), not only the parts' (`-4·floor`
/// has no lower bound), so torch's `expand(-1)` test of it against -1 folds.
#[test]
fn a_sum_with_a_floor_is_bounded_through_the_floor() {
    let s = Dim::sym("s");
    let padded = s.mul(&Dim::Known(4)).sub(&s.mul(&Dim::Known(3)).div_floor(&Dim::Known(4)).mul(&Dim::Known(4)));
    let bounds = |d: &Dim| d.term().expect("a term").bounds(&|_| (0, None));
    assert_eq!(bounds(&padded), (0, None), "{padded}");
    assert!(padded.is_nonneg());
    // At most 3 more than s, at least s: s + (4 - s % 4) % 4.
    assert_eq!(bounds(&padded.sub(&s)), (0, Some(3)), "{}", padded.sub(&s));
    // Swin pads a map of floor(h/2) so: two floors, the outer over the inner. Only the floor
    // whose coefficient is negative need be relaxed to see the sum is at least 0.
    let x = Dim::sym("h").div_floor(&Dim::Known(2));
    let padded = x.mul(&Dim::Known(4)).sub(&x.mul(&Dim::Known(3)).div_floor(&Dim::Known(4)).mul(&Dim::Known(4)));
    assert_eq!(bounds(&padded).0, 0, "{padded}");
}

#[test]
fn a_dot_in_a_name_is_not_a_decimal_point() {
    // paddle2onnx names input dims `DynamicDimension.1`. Reshape's -1 over a PP-OCR
    // recognizer's [n, 120, 1, x*3] divides x*360 by 360: it must give x back.
    let conv = |d: &Dim| d.add(&Dim::Known(-1)).div_floor(&Dim::Known(2)).add(&Dim::Known(1));
    let x = conv(&conv(&Dim::sym("DynamicDimension.1")));
    assert_eq!(x.to_string(), "floor((DynamicDimension.1-1)/4)+1");
    assert_eq!(x.mul(&Dim::Known(360)).div_floor(&Dim::Known(360)), x);
    let up = x.mul(&Dim::Known(4)).add(&Dim::Known(-1)).div_floor(&Dim::Known(2));
    for w in 1i64..200 {
        let env = HashMap::from([("DynamicDimension.1".to_string(), w)]);
        let xv = (w - 1).div_euclid(2).div_euclid(2) + 1;
        assert_eq!(eval(&up, &env), Some((xv * 4 - 1).div_euclid(2)), "w = {w}");
        assert_eq!(eval_text(&up, &env), Some((xv * 4 - 1).div_euclid(2)), "w = {w}");
    }
}

#[test]
fn a_chain_of_broadcasts_over_new_names_stays_linear() {
    // 10,000 broadcasts, each over a new name: each step builds a constant amount.
    let mut acc = Dim::sym("s0");
    let start = std::time::Instant::now();
    for i in 1..10_000 {
        acc = Dim::broadcast_of(&[&acc, &Dim::sym(&format!("s{i}"))]);
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
    // Past the node limit the size is unknown rather than ever larger.
    assert!(matches!(acc, Dim::Unknown) || acc.term().is_some_and(|t| t.size() <= shape::MAX_NODES));
}

/// An integer-affine form over `a` and `b`: constant, coefficient of a, coefficient of b.
type Affine = (i64, i64, i64);

fn affine(f: Affine) -> Dim {
    Dim::Known(f.0).add(&Dim::sym("a").mul(&Dim::Known(f.1))).add(&Dim::sym("b").mul(&Dim::Known(f.2)))
}

fn value(f: Affine, a: i64, b: i64) -> i64 {
    f.0 + f.1 * a + f.2 * b
}

/// A term of the guaranteed class, `m*floor(A/k) + B`, built in one of several ways that give
/// the same size: directly, with a multiple of `k` moved into the floor and out again, with a
/// common factor put in, as a floor of a floor, or as a ceil.
fn class_term(outer: i64, inner: Affine, k: i64, rest: Affine, way: u8) -> Dim {
    let floor = match way % 5 {
        0 => affine(inner).div_floor(&Dim::Known(k)),
        1 => affine(inner).add(&Dim::sym("b").mul(&Dim::Known(k))).div_floor(&Dim::Known(k)).sub(&Dim::sym("b")),
        2 => affine(inner).mul(&Dim::Known(3)).add(&Dim::Known(2)).div_floor(&Dim::Known(3 * k)),
        3 => affine(inner).div_floor(&Dim::Known(1)).div_floor(&Dim::Known(k)),
        _ => affine(inner).sub(&Dim::Known(k - 1)).div_ceil(&Dim::Known(k)),
    };
    floor.mul(&Dim::Known(outer)).add(&affine(rest))
}

fn class_value(outer: i64, inner: Affine, k: i64, rest: Affine, a: i64, b: i64) -> i64 {
    outer * value(inner, a, b).div_euclid(k) + value(rest, a, b)
}

fn affine_strategy() -> impl Strategy<Value = Affine> {
    (-9i64..10, -4i64..5, -4i64..5)
}

proptest! {
    #![proptest_config(crate::common::prop_config(3000))]

    #[test]
    fn one_size_built_two_ways_is_one_term(
        outer in -3i64..4,
        inner in affine_strategy(),
        k in 1i64..7,
        rest in affine_strategy(),
        ways in (0u8..5, 0u8..5),
    ) {
        let (x, y) = (class_term(outer, inner, k, rest, ways.0), class_term(outer, inner, k, rest, ways.1));
        for a in 0..12 {
            for b in 0..12 {
                let env = HashMap::from([("a".to_string(), a), ("b".to_string(), b)]);
                prop_assert_eq!(eval(&x, &env), Some(class_value(outer, inner, k, rest, a, b)));
            }
        }
        prop_assert_eq!(&x, &y, "{} and {}", x, y);
    }

    #[test]
    fn bounds_hold_at_every_size(outer in -3i64..4, inner in affine_strategy(), k in 1i64..7, rest in affine_strategy()) {
        let x = class_term(outer, inner, k, rest, 0);
        let Dim::Term(t) = &x else { return Ok(()) };
        let (lo, hi) = t.bounds(&|_| (0, None));
        for a in 0..40 {
            for b in 0..40 {
                let v = class_value(outer, inner, k, rest, a, b);
                prop_assert!(lo <= v && hi.is_none_or(|h| v <= h), "{} = {} at a={}, b={}: bounds {:?}", x, v, a, b, (lo, hi));
            }
        }
    }

    #[test]
    fn bounds_of_sums_of_two_floors_hold_at_every_size(
        p in (-3i64..4, affine_strategy(), 1i64..7, affine_strategy()),
        q in (-3i64..4, affine_strategy(), 1i64..7),
    ) {
        // Swin's kind: m·floor(A/k) + B plus n·floor((C·floor(A/k) + D)/j), floors inside floors.
        let inner = class_term(1, p.1, p.2, (0, 0, 0), 0);
        let outer = inner.mul(&Dim::Known(q.1 .1)).add(&affine(q.1)).div_floor(&Dim::Known(q.2)).mul(&Dim::Known(q.0));
        let x = class_term(p.0, p.1, p.2, p.3, 0).add(&outer);
        let Dim::Term(t) = &x else { return Ok(()) };
        let (lo, hi) = t.bounds(&|_| (0, None));
        for a in 0..30 {
            for b in 0..30 {
                let f = value(p.1, a, b).div_euclid(p.2);
                let v = p.0 * f + value(p.3, a, b) + q.0 * (q.1 .1 * f + value(q.1, a, b)).div_euclid(q.2);
                prop_assert!(lo <= v && hi.is_none_or(|h| v <= h), "{} = {} at a={}, b={}: bounds {:?}", x, v, a, b, (lo, hi));
            }
        }
    }

    #[test]
    fn terms_equal_on_every_binding_are_one_term(
        p in (-3i64..4, affine_strategy(), 1i64..7, affine_strategy()),
        q in (-3i64..4, affine_strategy(), 1i64..7, affine_strategy()),
    ) {
        let (x, y) = (class_term(p.0, p.1, p.2, p.3, 0), class_term(q.0, q.1, q.2, q.3, 0));
        let equal = (0..16).all(|a| (0..16).all(|b| {
            class_value(p.0, p.1, p.2, p.3, a, b) == class_value(q.0, q.1, q.2, q.3, a, b)
        }));
        prop_assert_eq!(equal, x == y, "{} and {}", x, y);
    }
}

// ---------------------------------------------------------------------------------------------
// Contracts: the solver's set of sizes against the conditions evaluated size by size.

/// A term of the one size `h`: steps of `+k`, `*k`, `floor(/k)`, `ceil(/k)`, `min(k, .)`,
/// `max(k - ., 0)` (falling to 0) and `. * [. > k]` (a product with a factor that settles).
fn one_size_term(steps: &[(u8, i64)]) -> Dim {
    let mut d = Dim::sym("h");
    let k0 = Dim::Known(0);
    for &(op, k) in steps {
        d = match op % 7 {
            0 => d.add(&Dim::Known(k - 3)),
            1 => d.mul(&Dim::Known(k.clamp(1, 3))),
            2 => d.div_floor(&Dim::Known(k.max(2))),
            3 => d.div_ceil(&Dim::Known(k.max(2))),
            4 => Dim::min_of(&[&d, &Dim::Known(k * 9)]),
            5 => Dim::max_of(&[&Dim::Known(k * 9).sub(&d), &k0]),
            _ => d.mul(&Dim::min_of(&[&Dim::max_of(&[&d.sub(&Dim::Known(k * 9)), &k0]), &Dim::Known(1)])),
        };
    }
    d
}

fn condition(kind: u8, a: &Dim, b: &Dim, k: i64) -> Option<shape::Assumption> {
    use shape::Assumption as A;
    let (Dim::Term(ta), tb) = (a, b) else { return None };
    // `a` rounded down to a multiple of `k`: conditions that repeat with a period.
    let kk = Dim::Known(k % 7 + 2);
    let rounded = a.div_floor(&kk).mul(&kk);
    if let (4 | 5, Dim::Term(r)) = (kind % 6, &rounded) {
        if r != ta {
            return Some(match kind % 6 {
                4 => A::Equal(ta.clone(), r.clone()),
                _ => A::EqualOrOne(vec![r.clone(), b.mul(&Dim::Known(2)).term()?.clone()]),
            });
        }
    }
    Some(match (kind % 4, tb) {
        (0, _) => A::OneOf { sym: ta.clone(), sizes: vec![1, k] },
        (1, Dim::Term(tb)) if ta != tb => A::Equal(ta.clone(), tb.clone()),
        (2, Dim::Term(tb)) if ta != tb => A::EqualOrOne(vec![ta.clone(), tb.clone()]),
        _ => A::AtLeast { size: ta.clone(), min: k },
    })
}

proptest! {
    #![proptest_config(crate::common::prop_config(400))]

    /// For random conditions on one size, the contract accepts exactly the sizes at which
    /// every condition holds, checked on every size up to 3,000 (beyond the solver's window).
    #[test]
    fn contracts_are_the_sizes_where_the_conditions_hold(
        conds in prop::collection::vec(
            (prop::collection::vec((any::<u8>(), 1i64..6), 0..4),
             prop::collection::vec((any::<u8>(), 1i64..6), 0..4),
             any::<u8>(), 2i64..40),
            1..4),
    ) {
        let h = onnx_bcast::shape::Term::name("h");
        let mut constraints = Vec::new();
        for (i, (sa, sb, kind, k)) in conds.iter().enumerate() {
            let (a, b) = (one_size_term(sa), one_size_term(sb));
            if let Some(assumption) = condition(*kind, &a, &b, *k) {
                constraints.push(onnx_bcast::infer::Constraint {
                    assumption,
                    graph: "main".into(),
                    node: format!("n{i}"),
                    op_type: "Add".into(),
                    axis: 0,
                    declared: None,
                });
            }
        }
        let (contract, errors) = onnx_bcast::contract::solve(&constraints, &Default::default());
        prop_assume!(contract.relations.is_empty());
        let holds = |v: i64| constraints.iter().all(|c| c.assumption.holds(&|t| (*t == h).then_some(v)) == Some(true));
        if !errors.is_empty() {
            prop_assert!((1..=3000).all(|v| !holds(v)), "unsatisfiable, yet a size holds: {errors:?}");
        } else {
            for v in 1..=3000 {
                prop_assert_eq!(contract.accepts("h", v), holds(v), "h={} {:?}", v, contract.dims.get("h"));
            }
            if let Some(d) = contract.dims.get("h") {
                let c = d.counterexample.as_ref().expect("a restricted dim has a counterexample");
                prop_assert!(!holds(c.value) && (1..c.value).all(holds));
            }
        }
    }
}

/// A binary operation on sizes.
type SizeOp = fn(&Dim, &Dim) -> Dim;

/// `floor(x / y)` in i128, for `y != 0`.
fn floor_i128(x: i128, y: i128) -> i128 {
    let q = x / y;
    q - i128::from(x % y != 0 && (x < 0) != (y < 0))
}

/// Sizes at the ends of i64 (a model's attribute or a folded constant can be anything): every
/// operation gives the exact result when it fits in i64 and an unknown size when it does not,
/// and none panics, on known sizes and on a term holding such a constant.
#[test]
fn extreme_sizes_give_exact_or_unknown_results() {
    let edges = [i64::MIN, i64::MIN + 1, -(1 << 62), -3, -2, -1, 0, 1, 2, 3, 1 << 62, i64::MAX - 1, i64::MAX];
    let n = Dim::sym("n");
    let env = HashMap::from([("n".to_string(), 0i64)]);
    for &a in &edges {
        for &b in &edges {
            let (x, y) = (a as i128, b as i128);
            let cases: [(&str, SizeOp, Option<i128>); 6] = [
                ("+", Dim::add, Some(x + y)),
                ("-", Dim::sub, Some(x - y)),
                ("*", Dim::mul, Some(x * y)),
                ("floor", Dim::div_floor, (b != 0).then(|| floor_i128(x, y))),
                ("ceil", Dim::div_ceil, (b != 0).then(|| -floor_i128(-x, y))),
                ("mod", Dim::modulo, (b != 0).then(|| x - y * floor_i128(x, y))),
            ];
            for (name, f, want) in cases {
                let want = want.and_then(|v| i64::try_from(v).ok());
                let got = f(&Dim::Known(a), &Dim::Known(b));
                assert!(got == Dim::Unknown || got.known() == want, "{a} {name} {b}: {got}, want {want:?} or unknown");
            }
        }
        // With a symbol left in: floor((n + a) / k) and ceil((n + a) / k), valued at n = 0.
        for k in [2, 3, 1 << 62, i64::MAX] {
            let (x, y) = (a as i128, k as i128);
            let sum = n.add(&Dim::Known(a));
            for (got, want) in
                [(sum.div_floor(&Dim::Known(k)), floor_i128(x, y)), (sum.div_ceil(&Dim::Known(k)), -floor_i128(-x, y))]
            {
                if let Some(v) = eval(&got, &env) {
                    assert_eq!(v as i128, want, "(n + {a}) by {k} = {got}");
                }
            }
        }
    }
}

//! `Dim` arithmetic against integers: random sequences of the operations shape rules use,
//! applied to symbols and, in step, to the integers the symbols stand for. The expression a
//! symbolic result prints must evaluate, by the small parser here (independent of the
//! simplifications in `src/shape/dim.rs`), to the integer result.

use std::collections::HashMap;

use onnx_bcast::shape::Dim;
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

fn eval(d: &Dim, env: &HashMap<String, i64>) -> Option<i64> {
    match d {
        Dim::Known(k) => Some(*k),
        Dim::Unknown => None,
        Dim::Sym(s) => {
            let mut e = Eval { text: s.as_str().as_bytes(), at: 0, env };
            let v = e.expr()?;
            (e.at == e.text.len()).then_some(v)
        }
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
        assert_eq!(eval(&Dim::sym(text), &env), Some(want), "{text}");
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
    #![proptest_config(ProptestConfig::with_cases(2000))]

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
            let got = eval(&d, &env);
            prop_assert_eq!(got, Some(v), "{} with h={}, w={}", d, h, w);
            vals.push((d, v));
        }
    }
}

#[test]
fn a_stride_two_layer_after_a_two_times_upsampling_gives_the_size_back() {
    // YOLO necks: a feature map of size `a` is upsampled twice (a*2*2), then each stride-2
    // convolution (kernel 3, pad 1: floor((x-1)/2)+1) halves it again.
    let a = Dim::sym("h").add(&Dim::Known(-1)).div_floor(&Dim::Known(2)).add(&Dim::Known(1));
    assert_eq!(a.to_string(), "floor((h-1)/2)+1");
    let up = a.mul(&Dim::Known(2)).mul(&Dim::Known(2));
    assert_eq!(up.to_string(), "(floor((h-1)/2)+1)*4");
    let conv = |x: &Dim| x.add(&Dim::Known(-1)).div_floor(&Dim::Known(2)).add(&Dim::Known(1));
    let p4 = conv(&up);
    assert_eq!(p4.to_string(), "(floor((h-1)/2)+1)*2");
    assert_eq!(conv(&p4), a);
    // The same with ceil: ceil((a*4+1)/2) is a*2+1.
    assert_eq!(up.add(&Dim::Known(1)).div_ceil(&Dim::Known(2)).to_string(), "(floor((h-1)/2)+1)*2+1");
}

#[test]
fn true_division_written_by_an_exporter_is_not_taken_apart() {
    // onnx writes `h/2 - 1/2` for a size; `(h/2 - 1/2)*4` is not a multiple of an integer
    // expression, so floor((that*4-1)/2) stays as it is.
    let x = Dim::sym("h/2 - 1/2").mul(&Dim::Known(4)).add(&Dim::Known(-1));
    assert_eq!(x.div_floor(&Dim::Known(2)).to_string(), "floor(((h/2 - 1/2)*4-1)/2)");
    // Nor is a factor the divisor does not divide.
    let y = Dim::sym("h").mul(&Dim::Known(3)).add(&Dim::Known(-1));
    assert_eq!(y.div_floor(&Dim::Known(2)).to_string(), "floor((h*3-1)/2)");
}

#[test]
fn a_dot_in_a_name_is_not_a_decimal_point() {
    // paddle2onnx names input dims `DynamicDimension.1`. Reshape's -1 over a PP-OCR
    // recognizer's [n, 120, 1, x*3] divides x*360 by 360; the dot made the division stay
    // (`floor(((...)*360)/360)`) and grow into a 1.5 KB `max(...)` down the model.
    let conv = |d: &Dim| d.add(&Dim::Known(-1)).div_floor(&Dim::Known(2)).add(&Dim::Known(1));
    let x = conv(&conv(&Dim::sym("DynamicDimension.1")));
    assert_eq!(x.to_string(), "floor(floor((DynamicDimension.1-1)/2)/2)+1");
    let back = x.mul(&Dim::Known(360)).div_floor(&Dim::Known(360));
    assert_eq!(back, x);
    let up = x.mul(&Dim::Known(4)).add(&Dim::Known(-1)).div_floor(&Dim::Known(2));
    assert_eq!(up.to_string(), "(floor(floor((DynamicDimension.1-1)/2)/2)+1)*2-1");
    for w in 1i64..200 {
        let env = HashMap::from([("DynamicDimension.1".to_string(), w)]);
        let xv = (w - 1).div_euclid(2).div_euclid(2) + 1;
        assert_eq!(eval(&up, &env), Some((xv * 4 - 1).div_euclid(2)), "w = {w}");
    }
    // A decimal number is still not taken apart: `h*0.5` is no integer, nor is `h*.5`,
    // written without its leading zero.
    for decimal in ["h*0.5", "h*.5"] {
        let half = Dim::sym(decimal).mul(&Dim::Known(4)).add(&Dim::Known(-1));
        let kept = half.div_floor(&Dim::Known(2)).to_string();
        assert!(kept.starts_with("floor(") && kept.ends_with("-1)/2)"), "{decimal}: {kept}");
    }
}

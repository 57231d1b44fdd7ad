//! Properties of the broadcast kernels: for random broadcastable shapes, a broadcasting kernel
//! equals Expand of each input to the output shape followed by the same kernel on equal
//! shapes, and Expand equals a naive per-element oracle (index arithmetic, no strides).

use onnx_bcast::exec::{self, Data, HostTensor, Options};
use onnx_bcast::ir::{AttrValue, Attribute, Node};
use onnx_bcast::Model;
use proptest::prelude::*;

/// A naive broadcast copy: for each output index, the input element at the same index with
/// broadcast axes pinned to 0 (numpy's rule, written independently of the executor).
fn naive_expand<T: Clone>(v: &[T], shape: &[usize], out: &[usize]) -> Vec<T> {
    let n: usize = out.iter().product();
    let offset = out.len() - shape.len();
    (0..n)
        .map(|flat| {
            let mut rest = flat;
            let mut idx = vec![0; out.len()];
            for a in (0..out.len()).rev() {
                idx[a] = rest % out[a];
                rest /= out[a];
            }
            let mut at = 0;
            for (i, d) in shape.iter().enumerate() {
                let j = if *d == 1 { 0 } else { idx[offset + i] };
                at = at * d + j;
            }
            v[at].clone()
        })
        .collect()
}

fn node(op: &str, inputs: usize) -> Node {
    let mut n = Node::new("n", op, Model::MAIN);
    n = n.with_inputs(vec![None; inputs]);
    if op == "Mod" {
        n.attrs.push(Attribute::new("fmod", AttrValue::Int(0)));
    }
    n
}

fn run(op: &str, inputs: Vec<HostTensor>) -> HostTensor {
    let n = node(op, inputs.len());
    let mut out = exec::run_node(&n, 18, inputs.into_iter().map(Some).collect(), &Options::default())
        .unwrap_or_else(|e| panic!("{op}: {e}"));
    out.remove(0)
}

fn expanded(t: &HostTensor, out: &[usize]) -> HostTensor {
    let data = match &*t.data {
        Data::I32(v) => Data::I32(naive_expand(v, &t.shape, out)),
        Data::F32(v) => Data::F32(naive_expand(v, &t.shape, out)),
        Data::Bool(v) => Data::Bool(naive_expand(v, &t.shape, out)),
        _ => unreachable!(),
    };
    HostTensor::new(out.to_vec(), data).unwrap()
}

/// An output shape (empty axes included) and some input shapes that broadcast to it: each
/// input takes a suffix of the output's axes, with some of them set to 1.
fn shapes(inputs: usize) -> impl Strategy<Value = (Vec<usize>, Vec<Vec<usize>>)> {
    prop::collection::vec(0usize..5, 0..5).prop_flat_map(move |out| {
        let r = out.len();
        let one = (0..=r, prop::collection::vec(any::<bool>(), r)).prop_map({
            let out = out.clone();
            move |(drop, ones)| (drop..r).map(|a| if ones[a] { 1 } else { out[a] }).collect::<Vec<usize>>()
        });
        prop::collection::vec(one, inputs).prop_map(|ins| (numpy_shape(&ins), ins))
    })
}

/// The shape numpy gives for inputs made by `shapes`: right-aligned, each axis the size other
/// than 1 among the inputs that have it (they are that size or 1 by construction), else 1.
fn numpy_shape(ins: &[Vec<usize>]) -> Vec<usize> {
    let r = ins.iter().map(Vec::len).max().unwrap_or(0);
    (0..r)
        .map(|a| {
            let mut sizes = ins.iter().filter_map(|s| (a + s.len()).checked_sub(r).map(|i| s[i]));
            sizes.find(|d| *d != 1).unwrap_or(1)
        })
        .collect()
}

fn ints(shape: &[usize], seed: u64) -> HostTensor {
    let n: usize = shape.iter().product();
    let v: Vec<i32> = (0..n as u64).map(|i| ((i * 7919 + seed * 104729) % 23) as i32 - 11).collect();
    HostTensor::from_vec(shape.to_vec(), v).unwrap()
}

fn floats(shape: &[usize], seed: u64) -> HostTensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n as u64).map(|i| (((i * 7919 + seed * 104729) % 41) as f32 - 20.0) / 4.0).collect();
    HostTensor::from_vec(shape.to_vec(), v).unwrap()
}

fn bools(shape: &[usize], seed: u64) -> HostTensor {
    let n: usize = shape.iter().product();
    let v: Vec<bool> = (0..n as u64).map(|i| (i * 31 + seed) % 3 == 0).collect();
    HostTensor::from_vec(shape.to_vec(), v).unwrap()
}

fn same_bits(a: &HostTensor, b: &HostTensor) -> bool {
    match (&*a.data, &*b.data) {
        (Data::F32(x), Data::F32(y)) => a.shape == b.shape && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()),
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(crate::common::prop_config(128))]

    #[test]
    fn binary_equals_expand_then_same_shape((out, ins) in shapes(2), seed in 0u64..1000) {
        for op in ["Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Equal", "Greater", "BitwiseXor", "BitShift"] {
            let a = ints(&ins[0], seed);
            let b = ints(&ins[1], seed + 1);
            let mut n = node(op, 2);
            if op == "BitShift" {
                n.attrs.push(Attribute::new("direction", AttrValue::String(b"LEFT".to_vec())));
            }
            let go = |x: HostTensor, y: HostTensor| {
                exec::run_node(&n, 18, vec![Some(x), Some(y)], &Options::default()).unwrap().remove(0)
            };
            let direct = go(a.clone(), b.clone());
            let via = go(expanded(&a, &out), expanded(&b, &out));
            prop_assert_eq!(&direct.shape, &out);
            prop_assert!(same_bits(&direct, &via), "{} {:?} {:?}", op, ins[0], ins[1]);
        }
        for op in ["Add", "Mul", "Pow", "Max", "PRelu"] {
            let (a, b) = if op == "PRelu" {
                // PRelu's slope stretches to x, so x takes the full output shape.
                (floats(&out, seed), floats(&ins[1], seed + 1))
            } else {
                (floats(&ins[0], seed), floats(&ins[1], seed + 1))
            };
            let direct = run(op, vec![a.clone(), b.clone()]);
            let via = run(op, vec![expanded(&a, &out), expanded(&b, &out)]);
            prop_assert!(same_bits(&direct, &via), "{} {:?} {:?}", op, a.shape, b.shape);
        }
    }

    #[test]
    fn nary_and_where_equal_expand_then_same_shape((out, ins) in shapes(3), seed in 0u64..1000) {
        let xs: Vec<HostTensor> = ins.iter().enumerate().map(|(i, s)| floats(s, seed + i as u64)).collect();
        let full: Vec<HostTensor> = xs.iter().map(|x| expanded(x, &out)).collect();
        for op in ["Sum", "Mean", "Max", "Min"] {
            let direct = run(op, xs.clone());
            let via = run(op, full.clone());
            prop_assert!(same_bits(&direct, &via), "{} {:?}", op, ins);
        }
        let c = bools(&ins[0], seed);
        let direct = run("Where", vec![c.clone(), xs[1].clone(), xs[2].clone()]);
        let via = run("Where", vec![expanded(&c, &out), full[1].clone(), full[2].clone()]);
        prop_assert!(same_bits(&direct, &via), "Where {:?}", ins);
    }

    #[test]
    fn expand_equals_the_naive_oracle((out, ins) in shapes(1), seed in 0u64..1000) {
        let x = ints(&ins[0], seed);
        let target = HostTensor::from_vec(vec![out.len()], out.iter().map(|d| *d as i64).collect()).unwrap();
        let got = run("Expand", vec![x.clone(), target]);
        prop_assert_eq!(got, expanded(&x, &out));
    }
}

#[test]
fn large_outputs_run_in_parallel_chunks_and_agree() {
    // Above the parallel threshold, with chunk boundaries inside rows.
    let (a_shape, b_shape, out) = (vec![3, 1, 257, 129], vec![5, 257, 1], vec![3, 5, 257, 129]);
    let a = floats(&a_shape, 1);
    let b = floats(&b_shape, 2);
    let direct = run("Add", vec![a.clone(), b.clone()]);
    let via = run("Add", vec![expanded(&a, &out), expanded(&b, &out)]);
    assert!(same_bits(&direct, &via));
    let (Data::F32(x), Data::F32(y), Data::F32(z)) = (&*a.data, &*b.data, &*direct.data) else { unreachable!() };
    let want = naive_expand(x, &a_shape, &out)
        .iter()
        .zip(naive_expand(y, &b_shape, &out))
        .map(|(p, q)| p + q)
        .collect::<Vec<f32>>();
    assert_eq!(z, &want);
}

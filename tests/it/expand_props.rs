//! `expand` keeps meaning on random graphs: DAGs of broadcasting nodes (Add, Sub, Mul, Max,
//! Min, Sum, Where) whose operands are earlier results or graph inputs, of random shapes that
//! broadcast to a full shape, with sizes declared as numbers or as the symbols `a`, `b` and
//! `c`. Two families of values live side by side, each with its own full shape (the second
//! names the first's symbols in rotation: `a` becomes `b`), and a node takes its operands from
//! one family. Every node output is a graph output. For sizes bound at run time, the expanded
//! model gives the original's outputs bit for bit. Operands that many nodes share, and targets
//! of the same symbolic sizes, exercise the reuse of inserted nodes and shape vectors across
//! nodes; targets of different symbols at the same place (one in each family) must not be
//! taken for one another.

use crate::build;

use build::{model, node, typed, D};
use onnx_bcast::exec::{self, HostTensor};
use onnx_bcast::io::proto::tensor_proto::DataType;
use onnx_bcast::{infer, io, rewrite, Model};
use proptest::prelude::*;

const SYMBOLS: [&str; 3] = ["a", "b", "c"];
const OPS: [&str; 7] = ["Add", "Sub", "Mul", "Max", "Min", "Sum", "Where"];

/// One axis of the full shape: a known size, or symbol `SYMBOLS[i]`.
#[derive(Clone, Copy, Debug)]
enum Axis {
    Known(usize),
    Sym(usize),
}

/// An input: its element type (float or bool), and for each of its axes (the last ones of the
/// full shape) whether it has the full size there or 1.
#[derive(Clone, Debug)]
struct Leaf {
    family: usize,
    boolean: bool,
    rank: usize,
    full: Vec<bool>,
}

/// The full shape of `family`: the second renames symbol `s` to `s + 1`.
fn of_family(full: &[Axis], family: usize) -> Vec<Axis> {
    full.iter()
        .map(|a| match a {
            Axis::Sym(s) => Axis::Sym((s + family) % SYMBOLS.len()),
            a => *a,
        })
        .collect()
}

fn declared(full: &[Axis], leaf: &Leaf) -> Vec<D> {
    let full = &of_family(full, leaf.family);
    let axes = &full[full.len() - leaf.rank..];
    axes.iter()
        .zip(&leaf.full)
        .map(|(a, keep)| match (a, keep) {
            (Axis::Known(n), true) => D::N(*n as i64),
            (Axis::Sym(s), true) => D::S(SYMBOLS[*s]),
            _ => D::N(1),
        })
        .collect()
}

fn concrete(full: &[Axis], leaf: &Leaf, sizes: &[usize; 3]) -> Vec<usize> {
    let full = &of_family(full, leaf.family);
    let axes = &full[full.len() - leaf.rank..];
    axes.iter()
        .zip(&leaf.full)
        .map(|(a, keep)| match (a, keep) {
            (Axis::Known(n), true) => *n,
            (Axis::Sym(s), true) => sizes[*s],
            _ => 1,
        })
        .collect()
}

fn feed(shape: Vec<usize>, boolean: bool, seed: usize) -> HostTensor {
    let n: usize = shape.iter().product();
    let t = if boolean {
        HostTensor::from_vec(shape, (0..n).map(|i| (i * 7 + seed) % 3 == 0).collect::<Vec<bool>>())
    } else {
        HostTensor::from_vec(
            shape,
            (0..n).map(|i| ((i * 13 + seed * 5) % 17) as f32 * 0.25 - 2.0).collect::<Vec<f32>>(),
        )
    };
    t.expect("a feed")
}

fn axis() -> impl Strategy<Value = Axis> {
    prop_oneof![(1usize..4).prop_map(Axis::Known), (0usize..3).prop_map(Axis::Sym)]
}

fn leaf(rank: usize) -> impl Strategy<Value = Leaf> {
    (0usize..2, any::<bool>(), 0..=rank, prop::collection::vec(any::<bool>(), rank))
        .prop_map(move |(family, boolean, r, full)| Leaf { family, boolean, rank: r, full: full[rank - r..].to_vec() })
}

/// A node: its op (an index into `OPS`) and its operand picks, each an index into the values
/// of its family so far (inputs, then earlier outputs), taken modulo their count.
type Pick = (usize, Vec<usize>);

/// The full shape, the inputs, and the nodes.
fn graphs() -> impl Strategy<Value = (Vec<Axis>, Vec<Leaf>, Vec<Pick>)> {
    prop::collection::vec(axis(), 1..4).prop_flat_map(|full| {
        let r = full.len();
        (
            Just(full),
            prop::collection::vec(leaf(r), 2..7),
            prop::collection::vec((0..OPS.len(), prop::collection::vec(any::<usize>(), 3)), 1..8),
        )
    })
}

proptest! {
    #![proptest_config(crate::common::prop_config(96))]

    #[test]
    fn expanded_graphs_compute_what_the_originals_do(
        (full, leaves, ops) in graphs(),
        sizes in prop::array::uniform3(1usize..4),
    ) {
        // Values: (name, family, is bool). Where takes a bool condition; the other ops floats.
        let mut values: Vec<(String, usize, bool)> = Vec::new();
        let mut inputs = Vec::new();
        let mut feeds = Vec::new();
        for (i, l) in leaves.iter().enumerate() {
            let name = format!("x{i}");
            let elem = if l.boolean { DataType::Bool } else { DataType::Float };
            inputs.push(typed(&name, elem, &declared(&full, l)));
            feeds.push((name.clone(), feed(concrete(&full, l, &sizes), l.boolean, i)));
            values.push((name, l.family, l.boolean));
        }
        // A float input of each family's full shape, so that every node has a float operand.
        for family in 0..2 {
            let whole = Leaf { family, boolean: false, rank: full.len(), full: vec![true; full.len()] };
            let name = format!("w{family}");
            inputs.push(typed(&name, DataType::Float, &declared(&full, &whole)));
            feeds.push((name.clone(), feed(concrete(&full, &whole, &sizes), false, 99 + family)));
            values.push((name, family, false));
        }
        let mut nodes = Vec::new();
        let mut outputs = Vec::new();
        for (i, (op, picks)) in ops.iter().enumerate() {
            let op = OPS[*op];
            let family = i % 2;
            let pick = |k: usize, boolean: bool| -> String {
                let of: Vec<&String> =
                    values.iter().filter(|v| v.1 == family && v.2 == boolean).map(|v| &v.0).collect();
                of[picks[k] % of.len()].clone()
            };
            let ins: Vec<String> = match op {
                "Where" if values.iter().any(|v| v.1 == family && v.2) => {
                    vec![pick(0, true), pick(1, false), pick(2, false)]
                }
                "Where" => continue,
                "Sum" => vec![pick(0, false), pick(1, false), pick(2, false)],
                _ => vec![pick(0, false), pick(1, false)],
            };
            let out = format!("t{i}");
            let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
            nodes.push(node(&format!("n{i}"), op, &refs, &[&out]));
            outputs.push(out.clone());
            values.push((out, family, false));
        }
        prop_assume!(!nodes.is_empty());
        let outs: Vec<&str> = outputs.iter().map(String::as_str).collect();
        let original = build::load(&model(17, inputs, nodes, &outs));
        let mut m = original.clone();
        let inf = onnx_bcast::infer::infer(&m, &infer::Options::default());
        let report = rewrite::expand(&mut m, &inf).unwrap();
        prop_assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        let m: Model = io::decode(&io::encode(&m), "expanded.onnx".as_ref(), None).expect("the rewrite decodes");
        let run = |m: &Model| exec::run(m, feeds.clone(), &exec::Options::default()).expect("the model runs");
        let (want, got) = (run(&original), run(&m));
        prop_assert_eq!(got.len(), want.len());
        for ((name, g), (_, w)) in got.iter().zip(&want) {
            prop_assert_eq!(&g.shape, &w.shape, "{}", name);
            prop_assert_eq!(format!("{:?}", g.data), format!("{:?}", w.data), "{}", name);
        }
    }
}

//! Loop fusion is invisible: for random broadcast shapes and random chains of f32 elementwise
//! nodes (Add, Sub, Mul, Div, Max, Min, Sum, Where, Expand), running the whole model (which
//! fuses the chain into one loop) gives the same bits as running each node on its own through
//! `exec::run_node` (which never fuses). The one freedom is where two NaNs meet in an Add or a
//! Mul: Rust does not fix which payload wins, and compilers swap such operands
//! (`arithmetic_chains_match_on_long_runs` checks those elements against a scalar oracle).

use std::collections::HashMap;
use std::path::Path;

use onnx_bcast::exec::{self, fuse, Data, HostTensor, Options};
use onnx_bcast::ir::Node;
use onnx_bcast::{io, Model};
use proptest::prelude::*;

// A minimal protobuf writer for the few ModelProto fields these tests need, so the models are
// built independently of the crate's own encoder.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn field_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    varint(out, field << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn field_int(out: &mut Vec<u8>, field: u64, v: u64) {
    varint(out, field << 3);
    varint(out, v);
}

/// ValueInfoProto with a tensor type (elem 1 = float, 9 = bool, 7 = int64) and known dims.
fn value_info(name: &str, elem: Option<(u64, &[usize])>) -> Vec<u8> {
    let mut v = Vec::new();
    field_bytes(&mut v, 1, name.as_bytes());
    if let Some((elem, dims)) = elem {
        let mut shape = Vec::new();
        for d in dims {
            let mut dim = Vec::new();
            field_int(&mut dim, 1, *d as u64);
            field_bytes(&mut shape, 1, &dim);
        }
        let mut tt = Vec::new();
        field_int(&mut tt, 1, elem);
        field_bytes(&mut tt, 2, &shape);
        let mut ty = Vec::new();
        field_bytes(&mut ty, 1, &tt);
        field_bytes(&mut v, 2, &ty);
    }
    v
}

struct Spec {
    /// (op, inputs, output)
    nodes: Vec<(&'static str, Vec<String>, String)>,
    /// (name, elem type, shape)
    inputs: Vec<(String, u64, Vec<usize>)>,
    outputs: Vec<String>,
}

fn build(spec: &Spec) -> Model {
    let mut g = Vec::new();
    for (i, (op, ins, out)) in spec.nodes.iter().enumerate() {
        let mut n = Vec::new();
        for x in ins {
            field_bytes(&mut n, 1, x.as_bytes());
        }
        field_bytes(&mut n, 2, out.as_bytes());
        field_bytes(&mut n, 3, format!("n{i}").as_bytes());
        field_bytes(&mut n, 4, op.as_bytes());
        field_bytes(&mut g, 1, &n);
    }
    field_bytes(&mut g, 2, b"g");
    for (name, elem, shape) in &spec.inputs {
        field_bytes(&mut g, 11, &value_info(name, Some((*elem, shape))));
    }
    for o in &spec.outputs {
        field_bytes(&mut g, 12, &value_info(o, None));
    }
    let mut m = Vec::new();
    field_int(&mut m, 1, 8);
    let mut opset = Vec::new();
    field_bytes(&mut opset, 1, b"");
    field_int(&mut opset, 2, 17);
    field_bytes(&mut m, 8, &opset);
    field_bytes(&mut m, 7, &g);
    io::decode(&m, Path::new("fuse_props.onnx"), None).expect("the test model decodes")
}

/// Runs each node alone (no fusion), in spec order, and gives the named outputs.
fn unfused(spec: &Spec, feeds: &HashMap<String, HostTensor>) -> Vec<HostTensor> {
    let mut vals = feeds.clone();
    for (op, ins, out) in &spec.nodes {
        let n = Node::new(out, op, Model::MAIN).with_inputs(vec![None; ins.len()]);
        let inputs = ins.iter().map(|i| Some(vals[i].clone())).collect();
        let mut r = exec::run_node(&n, 17, inputs, &Options::default()).unwrap_or_else(|e| panic!("{op}: {e}"));
        vals.insert(out.clone(), r.remove(0));
    }
    spec.outputs.iter().map(|o| vals[o].clone()).collect()
}

fn fused(spec: &Spec, feeds: &HashMap<String, HostTensor>) -> (Vec<HostTensor>, usize) {
    let model = build(spec);
    let (order, _) = model.topo_order(Model::MAIN);
    let mut uses = HashMap::new();
    for n in &order {
        for v in model.node(*n).inputs().iter().flatten() {
            *uses.entry(*v).or_insert(0usize) += 1;
        }
    }
    for o in &model.graph(Model::MAIN).outputs {
        *uses.entry(o.value).or_insert(0usize) += 1;
    }
    let groups = fuse::plan(&model, &order, &uses).fused_groups();
    let ins: Vec<(String, HostTensor)> = feeds.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let out = exec::run(&model, ins, &Options::default()).expect("the fused model runs");
    (out.into_iter().map(|(_, t)| t).collect(), groups)
}

fn bits(t: &HostTensor) -> (Vec<usize>, Vec<u32>) {
    match &*t.data {
        Data::F32(v) => (t.shape.clone(), v.iter().map(|x| x.to_bits()).collect()),
        other => panic!("expected f32, got {:?}", other.dtype()),
    }
}

/// Floats in quarter steps over [-4, 4), zero included (so Div meets 0/0 and x/0).
fn floats(shape: &[usize], seed: u64) -> HostTensor {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let v: Vec<f32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s % 32) as f32 - 16.0) / 4.0
        })
        .collect();
    HostTensor::from_vec(shape.to_vec(), v).unwrap()
}

fn bools(shape: &[usize], seed: u64) -> HostTensor {
    let n: usize = shape.iter().product();
    let v: Vec<bool> = (0..n).map(|i| (i as u64).wrapping_mul(seed | 1).rotate_left(7) & 4 != 0).collect();
    HostTensor::from_vec(shape.to_vec(), v).unwrap()
}

/// Input shapes that broadcast together: each a suffix of `out`'s axes with some set to 1.
fn shapes(n: usize) -> impl Strategy<Value = Vec<Vec<usize>>> {
    prop::collection::vec(1usize..6, 0..5).prop_flat_map(move |out| {
        let r = out.len();
        let one = (0..=r, prop::collection::vec(any::<bool>(), r)).prop_map({
            let out = out.clone();
            move |(drop, ones)| (drop..r).map(|a| if ones[a] { 1 } else { out[a] }).collect::<Vec<usize>>()
        });
        prop::collection::vec(one, n)
    })
}

const OPS: [&str; 8] = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Where"];

proptest! {
    #![proptest_config(crate::common::prop_config(200))]

    #[test]
    fn fused_chain_equals_unfused(shs in shapes(6), ops in prop::collection::vec(0usize..OPS.len(), 1..6), seed in any::<u64>(), side_output in any::<bool>()) {
        let mut spec = Spec { nodes: Vec::new(), inputs: Vec::new(), outputs: Vec::new() };
        let mut feeds = HashMap::new();
        let mut next_leaf = 0usize;
        let mut leaf = |elem: u64, spec: &mut Spec, feeds: &mut HashMap<String, HostTensor>| {
            let sh = shs[next_leaf % shs.len()].clone();
            let name = format!("x{next_leaf}");
            let t = if elem == 9 { bools(&sh, seed ^ next_leaf as u64) } else { floats(&sh, seed ^ next_leaf as u64) };
            feeds.insert(name.clone(), t);
            spec.inputs.push((name.clone(), elem, sh));
            next_leaf += 1;
            name
        };
        let mut cur = leaf(1, &mut spec, &mut feeds);
        for (i, op) in ops.iter().enumerate() {
            let op = OPS[*op];
            let out = format!("t{i}");
            let ins = match op {
                "Where" => {
                    let c = leaf(9, &mut spec, &mut feeds);
                    let y = leaf(1, &mut spec, &mut feeds);
                    if i % 2 == 0 { vec![c, cur, y] } else { vec![c, y, cur] }
                }
                "Sum" => {
                    let a = leaf(1, &mut spec, &mut feeds);
                    let b = leaf(1, &mut spec, &mut feeds);
                    vec![a, cur, b]
                }
                _ => {
                    let a = leaf(1, &mut spec, &mut feeds);
                    if i % 2 == 0 { vec![cur, a] } else { vec![a, cur] }
                }
            };
            spec.nodes.push((op, ins, out.clone()));
            cur = out;
        }
        spec.outputs.push(cur);
        let n_leaves = next_leaf;
        // An intermediate that is also a graph output must be materialized, and still right.
        if side_output && spec.nodes.len() > 1 {
            spec.outputs.push("t0".to_string());
        }
        let want = unfused(&spec, &feeds);
        let before = fuse::fused_runs();
        let (got, groups) = fused(&spec, &feeds);
        // Past MAX_LEAVES operands the group runs node by node (still checked for equality).
        prop_assert!(n_leaves > fuse::MAX_LEAVES || fuse::fused_runs() > before, "no group ran as a fused loop");
        prop_assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            prop_assert_eq!(bits(g), bits(w));
        }
        let chain = spec.nodes.len() - usize::from(side_output && spec.nodes.len() > 1);
        prop_assert!(chain < 2 || groups >= 1, "a chain of {} nodes was not fused", spec.nodes.len());
    }
}

#[test]
fn expand_then_add_fuses_and_matches() {
    let mut spec = Spec {
        nodes: vec![
            ("Expand", vec!["a".into(), "shape".into()], "e".into()),
            ("Add", vec!["e".into(), "b".into()], "y".into()),
        ],
        inputs: vec![("a".into(), 1, vec![3, 1]), ("shape".into(), 7, vec![3]), ("b".into(), 1, vec![4])],
        outputs: vec!["y".into()],
    };
    let mut feeds = HashMap::new();
    feeds.insert("a".to_string(), floats(&[3, 1], 1));
    feeds.insert("shape".to_string(), HostTensor::from_vec(vec![3], vec![2i64, 1, 4]).unwrap());
    feeds.insert("b".to_string(), floats(&[4], 2));
    let want = unfused(&spec, &feeds);
    let before = fuse::fused_runs();
    let (got, groups) = fused(&spec, &feeds);
    assert!(fuse::fused_runs() > before);
    assert_eq!(groups, 1);
    assert_eq!(want[0].shape, vec![2, 3, 4]);
    assert_eq!(bits(&got[0]), bits(&want[0]));
    // A non-f32 chain falls back to the kernels and still runs.
    spec.inputs = vec![("a".into(), 7, vec![3, 1]), ("shape".into(), 7, vec![3]), ("b".into(), 7, vec![4])];
    feeds.insert("a".to_string(), HostTensor::from_vec(vec![3, 1], vec![1i64, 2, 3]).unwrap());
    feeds.insert("b".to_string(), HostTensor::from_vec(vec![4], vec![10i64, 20, 30, 40]).unwrap());
    let (got, _) = fused(&spec, &feeds);
    assert_eq!(got[0].shape, vec![2, 3, 4]);
    let Data::I64(v) = &*got[0].data else { panic!("expected i64") };
    assert_eq!(&v[..5], &[11, 21, 31, 41, 12]);
}

#[test]
fn large_outputs_take_the_streaming_path() {
    // 9*1000*517 elements (18.6 MB) pass the non-temporal threshold and the parallel split;
    // runs of 517 (not a multiple of any vector width) start at every alignment.
    let x = [9, 1000, 517];
    assert!(x.iter().product::<usize>() * 4 >= fuse::NT_BYTES);
    let spec = Spec {
        nodes: vec![
            ("Add", vec!["x".into(), "m".into()], "t".into()),
            ("Mul", vec!["t".into(), "s".into()], "y".into()),
        ],
        inputs: vec![("x".into(), 1, x.to_vec()), ("m".into(), 1, vec![9, 1, 517]), ("s".into(), 1, vec![])],
        outputs: vec!["y".into()],
    };
    let mut feeds = HashMap::new();
    feeds.insert("x".to_string(), floats(&x, 3));
    feeds.insert("m".to_string(), floats(&[9, 1, 517], 4));
    feeds.insert("s".to_string(), floats(&[], 5));
    let want = unfused(&spec, &feeds);
    for _ in 0..2 {
        let before = fuse::fused_runs();
        let (got, groups) = fused(&spec, &feeds);
        assert!(fuse::fused_runs() > before);
        assert_eq!(groups, 1);
        assert_eq!(bits(&got[0]), bits(&want[0]));
        // Hand the buffer back so the second run reuses it (stale contents must be overwritten).
        for t in got {
            fuse::recycle(t);
        }
    }
}

#[test]
fn streaming_path_matches_for_fills_wheres_and_sums() {
    // Outputs past the non-temporal threshold whose root is a per-run constant (Expand of a
    // channel vector: the scalar fill path), a Where with a broadcast condition, and a Sum of
    // row, column and scalar operands; odd run lengths, so every run starts at a different
    // alignment and ends in a partial vector.
    let out = [5, 7, 331, 389];
    assert!(out.iter().product::<usize>() * 4 >= fuse::NT_BYTES);
    let mut feeds = HashMap::new();
    feeds.insert("c".to_string(), floats(&[1, 7, 1, 1], 6));
    feeds.insert("shape".to_string(), HostTensor::from_vec(vec![4], out.iter().map(|d| *d as i64).collect()).unwrap());
    feeds.insert("x".to_string(), floats(&out, 7));
    feeds.insert("cond".to_string(), bools(&[1, 1, 331, 389], 8));
    feeds.insert("s".to_string(), floats(&[], 9));
    feeds.insert("row".to_string(), floats(&[389], 10));
    feeds.insert("col".to_string(), floats(&[5, 7, 331, 1], 11));
    let specs = [
        Spec {
            nodes: vec![("Expand", vec!["c".into(), "shape".into()], "y".into())],
            inputs: vec![("c".into(), 1, vec![1, 7, 1, 1]), ("shape".into(), 7, vec![4])],
            outputs: vec!["y".into()],
        },
        Spec {
            nodes: vec![("Where", vec!["cond".into(), "x".into(), "s".into()], "y".into())],
            inputs: vec![
                ("cond".into(), 9, vec![1, 1, 331, 389]),
                ("x".into(), 1, out.to_vec()),
                ("s".into(), 1, vec![]),
            ],
            outputs: vec!["y".into()],
        },
        Spec {
            nodes: vec![("Sum", vec!["col".into(), "row".into(), "s".into(), "x".into()], "y".into())],
            inputs: vec![
                ("col".into(), 1, vec![5, 7, 331, 1]),
                ("row".into(), 1, vec![389]),
                ("s".into(), 1, vec![]),
                ("x".into(), 1, out.to_vec()),
            ],
            outputs: vec!["y".into()],
        },
    ];
    for spec in &specs {
        let feeds: HashMap<String, HostTensor> =
            spec.inputs.iter().map(|(n, _, _)| (n.clone(), feeds[n].clone())).collect();
        let want = unfused(spec, &feeds);
        assert_eq!(want[0].shape, out.to_vec());
        let before = fuse::fused_runs();
        let (got, _) = fused(spec, &feeds);
        assert!(fuse::fused_runs() > before, "{} did not run fused", spec.nodes[0].0);
        assert_eq!(bits(&got[0]), bits(&want[0]), "{}", spec.nodes[0].0);
    }
}

#[test]
fn arithmetic_chains_match_on_long_runs() {
    // A chain of Add/Sub/Mul/Div with the running value on either side and a scalar first
    // operand runs tile by tile in vector registers. Runs shorter than, equal to, and not a
    // multiple of the tile, in cache and past the non-temporal threshold (where every run
    // starts at another alignment, and runs of 1100 span three blocks); leaves that are
    // constant along a run and ones that move. NaN payloads from the inputs go through both
    // operand orders. Both runs, fused and node by node, are held to `chain_oracle`: the same
    // bits wherever the result is a number or one NaN meets a number; where two NaNs meet in
    // a commutative Add or Mul either payload may come out (Rust does not fix which, and in
    // release builds LLVM swaps the unfused multiply's operands).
    for (outer, rows, run) in
        [(3, 5, 31), (3, 5, 32), (2, 3, 45), (2, 2, 64), (3, 4, 100), (8, 1000, 517), (2, 2000, 1100)]
    {
        let out = [outer, rows, run];
        let leaves: [(&str, Vec<usize>); 7] = [
            ("s", vec![]),
            ("x", out.to_vec()),
            ("m", vec![outer, 1, run]),
            ("b", vec![rows, 1]),
            ("c", vec![run]),
            ("n", vec![outer, rows, 1]),
            ("d", vec![1, rows, run]),
        ];
        let spec = Spec {
            nodes: vec![
                ("Sub", vec!["s".into(), "x".into()], "t0".into()),
                ("Div", vec!["m".into(), "t0".into()], "t1".into()),
                ("Mul", vec!["t1".into(), "b".into()], "t2".into()),
                ("Sub", vec!["c".into(), "t2".into()], "t3".into()),
                ("Add", vec!["n".into(), "t3".into()], "t4".into()),
                ("Mul", vec!["d".into(), "t4".into()], "t5".into()),
                ("Div", vec!["t5".into(), "m".into()], "t6".into()),
                ("Add", vec!["t6".into(), "c".into()], "y".into()),
            ],
            inputs: leaves.iter().map(|(n, sh)| (n.to_string(), 1, sh.clone())).collect(),
            outputs: vec!["y".into()],
        };
        let mut feeds = HashMap::new();
        for (i, (n, sh)) in leaves.iter().enumerate() {
            let mut t = floats(sh, 20 + i as u64);
            // Quiet NaNs with distinct payloads in two operands that meet in the Add and the Mul.
            if let (Data::F32(v), "n" | "d") = (std::sync::Arc::make_mut(&mut t.data), *n) {
                for (j, e) in v.iter_mut().enumerate().filter(|(j, _)| j % 7 == 3) {
                    *e = f32::from_bits(0x7fc0_0000 | (i as u32) << 8 | (j as u32 & 0xff));
                }
            }
            feeds.insert(n.to_string(), t);
        }
        let want = unfused(&spec, &feeds);
        assert_eq!(want[0].shape, out.to_vec());
        let before = fuse::fused_runs();
        let (got, groups) = fused(&spec, &feeds);
        assert!(fuse::fused_runs() > before);
        assert_eq!(groups, 1);
        let (g, w) = (bits(&got[0]), bits(&want[0]));
        assert_eq!(g.0, w.0);
        let oracle = chain_oracle(&spec, &feeds, out);
        assert!(oracle.iter().any(|o| o.len > 1), "runs of {run}: no two NaNs met");
        for (path, b) in [("fused", &g.1), ("node by node", &w.1)] {
            let first = b.iter().zip(&oracle).position(|(x, o)| !o.contains(x));
            assert_eq!(first, None, "runs of {run}, {path}: first element off the oracle");
        }
    }
}

/// What each element of the output of `spec` (a chain of two-operand Add, Sub, Mul and Div
/// over three-axis broadcasts) may be, element by element in scalar code, node by node as the
/// spec lists them: one bit pattern where the result is a number, or where NaNs come only
/// from one operand at each step (x86 and Arm pass a NaN operand through, quieted); every
/// payload that may win where two NaNs meet; the default NaN where the operation makes one.
fn chain_oracle(spec: &Spec, feeds: &HashMap<String, HostTensor>, out: [usize; 3]) -> Vec<Outcomes> {
    // Each leaf's data and strides over the output's three axes, 0 where it broadcasts.
    let leaves: Vec<(&[f32], [usize; 3])> = spec
        .inputs
        .iter()
        .map(|(n, _, _)| {
            let t = &feeds[n];
            let Data::F32(v) = &*t.data else { panic!("f32 leaves") };
            let mut strides = [0; 3];
            let mut stride = 1;
            for (a, &len) in t.shape.iter().enumerate().rev() {
                if len > 1 {
                    strides[3 - t.shape.len() + a] = stride;
                }
                stride *= len;
            }
            (v.as_slice(), strides)
        })
        .collect();
    // Slots: the leaves, then each node's output; a step reads two slots into the next one.
    let mut slot: HashMap<&str, usize> = spec.inputs.iter().enumerate().map(|(i, (n, _, _))| (n.as_str(), i)).collect();
    // (operation, whether it commutes, the slots of its two operands)
    type Step = (fn(f32, f32) -> f32, bool, usize, usize);
    let steps: Vec<Step> = spec
        .nodes
        .iter()
        .enumerate()
        .map(|(i, (op, ins, output))| {
            let (f, commutes): (fn(f32, f32) -> f32, bool) = match *op {
                "Add" => (|x, y| x + y, true),
                "Sub" => (|x, y| x - y, false),
                "Mul" => (|x, y| x * y, true),
                "Div" => (|x, y| x / y, false),
                other => panic!("no oracle for {other}"),
            };
            let step = (f, commutes, slot[ins[0].as_str()], slot[ins[1].as_str()]);
            slot.insert(output.as_str(), leaves.len() + i);
            step
        })
        .collect();
    let result = slot[spec.outputs[0].as_str()];
    let mut values = vec![Outcomes::one(0.0); leaves.len() + steps.len()];
    let mut all = Vec::with_capacity(out.iter().product());
    for o in 0..out[0] {
        for r in 0..out[1] {
            for k in 0..out[2] {
                for (value, (v, st)) in values.iter_mut().zip(&leaves) {
                    *value = Outcomes::one(v[o * st[0] + r * st[1] + k * st[2]]);
                }
                for (i, &(f, commutes, a, b)) in steps.iter().enumerate() {
                    values[leaves.len() + i] = values[a].step(values[b], f, commutes);
                }
                all.push(values[result]);
            }
        }
    }
    all
}

/// The bit patterns a float in [`chain_oracle`] may have: one, or NaNs that may each win.
#[derive(Clone, Copy)]
struct Outcomes {
    bits: [u32; 8],
    len: usize,
}

impl Outcomes {
    fn one(x: f32) -> Outcomes {
        Outcomes { bits: [x.to_bits(); 8], len: 1 }
    }

    fn nan(&self) -> bool {
        f32::from_bits(self.bits[0]).is_nan()
    }

    fn contains(&self, b: &u32) -> bool {
        self.bits[..self.len].contains(b)
    }

    fn step(self, o: Outcomes, f: fn(f32, f32) -> f32, commutes: bool) -> Outcomes {
        match (self.nan(), o.nan()) {
            (false, false) => Outcomes::one(f(f32::from_bits(self.bits[0]), f32::from_bits(o.bits[0]))),
            (true, false) => self,
            (false, true) => o,
            // Without commuting, x86 gives the first operand's payload.
            (true, true) if !commutes => self,
            (true, true) => {
                let mut both = self;
                for &b in &o.bits[..o.len] {
                    both.bits[both.len] = b;
                    both.len += 1;
                }
                both
            }
        }
    }
}

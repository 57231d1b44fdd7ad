//! Every rewritten broadcasting-family case and opset-6 legacy case runs through the executor:
//! the rewritten model's outputs equal the original's bit for bit (where the original runs)
//! and match the case's expected outputs.

use crate::common;

use common::{numbered, read};

use std::path::Path;

use onnx_bcast::exec::{self, Data, HostTensor, Options};
use onnx_bcast::{io, rewrite, Model};

fn inputs(model: &Model, dir: &Path) -> Vec<(String, HostTensor)> {
    let free: Vec<String> = model.free_inputs();
    numbered(&dir.join("test_data_set_0"), "input_")
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let (name, t) = read(p);
            (if free.contains(&name) { name } else { free[k].clone() }, t)
        })
        .collect()
}

/// Elements as f64 (floats) or exact bits (the rest), for comparing.
fn floats(t: &HostTensor) -> Option<Vec<f64>> {
    match &*t.data {
        Data::F32(v) => Some(v.iter().map(|x| *x as f64).collect()),
        Data::F64(v) => Some(v.clone()),
        Data::F16(v) => Some(v.iter().map(|x| x.to_f64()).collect()),
        Data::BF16(v) => Some(v.iter().map(|x| x.to_f64()).collect()),
        _ => None,
    }
}

/// `None` when `got` matches the expected output: same dtype and shape, floats within the
/// backend tests' rtol 1e-3 / atol 1e-7, the rest exactly.
fn mismatch(got: &HostTensor, want: &HostTensor) -> Option<String> {
    if got.dtype() != want.dtype() || got.shape != want.shape {
        return Some(format!("{}{:?} != expected {}{:?}", got.dtype(), got.shape, want.dtype(), want.shape));
    }
    match (floats(got), floats(want)) {
        (Some(g), Some(w)) => g.iter().zip(&w).position(|(g, w)| {
            !(if w.is_nan() { g.is_nan() } else { (g - w).abs() <= 1e-7 + 1e-3 * w.abs() || g == w })
        }),
        _ => (format!("{:?}", got.data) != format!("{:?}", want.data)).then_some(0),
    }
    .map(|i| format!("element {i} differs"))
}

fn run(model: &Model, dir: &Path) -> Result<Vec<(String, HostTensor)>, String> {
    exec::run(model, inputs(model, dir), &Options::default()).map_err(|e| e.to_string())
}

#[test]
fn rewritten_cases_run_like_the_originals() {
    let cases: Vec<common::Case> =
        common::cases("node").into_iter().filter(|c| c.family).chain(common::cases("legacy")).collect();
    assert_eq!(cases.len(), 219);
    let mut identical = 0;
    for case in &cases {
        let original = onnx_bcast::load(&case.dir.join("model.onnx")).unwrap();
        let mut m = original.clone();
        let inf = onnx_bcast::infer::infer(&m, &onnx_bcast::infer::Options::default());
        let report = rewrite::expand(&mut m, &inf).unwrap();
        assert!(report.diagnostics.is_empty(), "{}: {:?}", case.name, report.diagnostics);
        // Through bytes, as a user of the command line would get it.
        let m = io::decode(&io::encode(&m), case.name.as_ref(), Some(&case.dir)).unwrap();
        let got = run(&m, &case.dir).unwrap_or_else(|e| panic!("{}: the rewrite does not run: {e}", case.name));
        let want = numbered(&case.dir.join("test_data_set_0"), "output_");
        assert_eq!(got.len(), want.len(), "{}", case.name);
        for ((name, g), p) in got.iter().zip(&want) {
            if let Some(why) = mismatch(g, &read(p).1) {
                panic!("{}: output {name}: {why}", case.name);
            }
        }
        if let Ok(before) = run(&original, &case.dir) {
            for ((name, a), (_, b)) in before.iter().zip(&got) {
                assert!(
                    a.shape == b.shape && format!("{:?}", a.data) == format!("{:?}", b.data),
                    "{}: output {name} differs from the original's",
                    case.name
                );
            }
            identical += 1;
        }
    }
    // The executor runs every original too (legacy broadcasts included).
    assert_eq!(identical, cases.len());
}

/// Where ranks are unknown (here a Reshape to a shape fed at run time; in silero VAD an `If`
/// whose branches differ in rank), `expand` computes the broadcast in the graph: each operand
/// unsqueezed by the ranks it lacks, then expanded to the fold of the padded shapes. The
/// result leaves no implicit broadcast and computes the original's outputs bit for bit, for
/// operands of either rank and for empty ones; expanding it again changes nothing.
#[test]
fn broadcasts_of_unknown_rank_are_computed_in_the_graph() {
    use crate::build;
    use build::D;
    let m = build::model(
        17,
        vec![
            build::input("x", &[D::S("n")]),
            build::typed("s", onnx_bcast::io::proto::tensor_proto::DataType::Int64, &[D::S("k")]),
            build::input("b", &[1i64, 3]),
        ],
        vec![build::node("shape_it", "Reshape", &["x", "s"], &["y"]), build::node("add0", "Add", &["y", "b"], &["z"])],
        &["z"],
    );
    let original = build::load(&m);
    let mut expanded = original.clone();
    let inf = onnx_bcast::infer::infer(&expanded, &Default::default());
    assert!(inf.shape(original.local(Model::MAIN, "y").unwrap()).is_none(), "y's rank is unknown");
    let report = rewrite::expand(&mut expanded, &inf).unwrap();
    assert_eq!((report.rewritten, report.diagnostics.len()), (1, 0), "{:?}", report.diagnostics);
    let bytes = io::encode(&expanded);
    let mut again = io::decode(&bytes, Path::new("e.onnx"), None).unwrap();
    let inf = onnx_bcast::infer::infer(&again, &Default::default());
    assert_eq!(rewrite::expand(&mut again, &inf).unwrap().rewritten, 0);
    assert_eq!(io::encode(&again), bytes, "expand of its own output changes nothing");
    let f = |shape: Vec<usize>| {
        let n: usize = shape.iter().product();
        HostTensor::from_vec(shape, (0..n).map(|i| i as f32 * 0.5 - 1.0).collect::<Vec<f32>>()).unwrap()
    };
    for (n, s) in
        [(6, vec![2, 3]), (3, vec![3]), (3, vec![1, 3]), (12, vec![2, 2, 3]), (0, vec![0, 3]), (6, vec![2, 1, 3])]
    {
        let s_t = HostTensor::from_vec(vec![s.len()], s.iter().map(|d| *d as i64).collect::<Vec<i64>>()).unwrap();
        let feed = vec![("x".to_string(), f(vec![n])), ("s".to_string(), s_t), ("b".to_string(), f(vec![1, 3]))];
        let want = exec::run(&original, feed.clone(), &Options::default()).unwrap();
        let got = exec::run(&expanded, feed, &Options::default()).unwrap();
        assert_eq!(got[0].1.shape, want[0].1.shape, "{s:?}");
        assert_eq!(format!("{:?}", got[0].1.data), format!("{:?}", want[0].1.data), "{s:?}");
    }
    // At run time the Add sees operands of its output's shape: no implicit broadcast is left.
    let ops: Vec<&str> = expanded.nodes().map(|(_, n)| n).map(|n| n.op_type.as_str()).collect();
    assert_eq!(ops.iter().filter(|o| **o == "Expand").count(), 2, "{ops:?}");
}

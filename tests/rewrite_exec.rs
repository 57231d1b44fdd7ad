//! Every rewritten broadcasting-family case and opset-6 legacy case runs through the executor:
//! the rewritten model's outputs equal the original's bit for bit (where the original runs)
//! and match the case's expected outputs.

mod common;

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

//! The executor on the ONNX backend node cases: every broadcasting-family case (manifest
//! `broadcast_family: true`) and the opset-6 legacy cases run through `exec::run` and through
//! `onnx-bcast test`, compared against the expected outputs the onnx package generated.
//! Also the memory budget: an `Expand` to [1e6, 1e6] float32 fails at once, in the library
//! and on the command line.

use crate::common;

use common::{numbered, read};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use onnx_bcast::exec::{self, Data, HostTensor, Options};
use onnx_bcast::ir::Node;
use onnx_bcast::{Error, Model};

/// An element as this test compares it, independent of the executor's own comparison:
/// floats by value with tolerance, everything else exactly.
#[derive(Debug)]
enum Val {
    F(f64),
    I(i128),
    S(Vec<u8>),
}

fn vals(t: &HostTensor) -> Vec<Val> {
    match &*t.data {
        Data::F16(v) => v.iter().map(|x| Val::F(x.to_f64())).collect(),
        Data::BF16(v) => v.iter().map(|x| Val::F(x.to_f64())).collect(),
        Data::F32(v) => v.iter().map(|x| Val::F(*x as f64)).collect(),
        Data::F64(v) => v.iter().map(|x| Val::F(*x)).collect(),
        Data::I8(v) => v.iter().map(|x| Val::I(*x as i128)).collect(),
        Data::I16(v) => v.iter().map(|x| Val::I(*x as i128)).collect(),
        Data::I32(v) => v.iter().map(|x| Val::I(*x as i128)).collect(),
        Data::I64(v) => v.iter().map(|x| Val::I(*x as i128)).collect(),
        Data::U8(v) => v.iter().map(|x| Val::I(*x as i128)).collect(),
        Data::U16(v) => v.iter().map(|x| Val::I(*x as i128)).collect(),
        Data::U32(v) => v.iter().map(|x| Val::I(*x as i128)).collect(),
        Data::U64(v) => v.iter().map(|x| Val::I(*x as i128)).collect(),
        Data::Bool(v) => v.iter().map(|x| Val::I(*x as i128)).collect(),
        Data::Str(v) => v.iter().map(|x| Val::S(x.clone())).collect(),
    }
}

/// `None` when `got` matches `want`: same dtype and shape; floats within the ONNX backend
/// tests' rtol 1e-3 / atol 1e-7 (NaN matches NaN, infinities match exactly); the rest exact.
fn mismatch(got: &HostTensor, want: &HostTensor) -> Option<String> {
    if got.dtype() != want.dtype() || got.shape != want.shape {
        return Some(format!("{}{:?} != expected {}{:?}", got.dtype(), got.shape, want.dtype(), want.shape));
    }
    for (i, (g, w)) in vals(got).iter().zip(vals(want)).enumerate() {
        let ok = match (g, &w) {
            (Val::F(g), Val::F(w)) if w.is_nan() => g.is_nan(),
            (Val::F(g), Val::F(w)) if w.is_infinite() => g == w,
            (Val::F(g), Val::F(w)) => (g - w).abs() <= 1e-7 + 1e-3 * w.abs(),
            (Val::I(g), Val::I(w)) => g == w,
            (Val::S(g), Val::S(w)) => g == w,
            _ => false,
        };
        if !ok {
            return Some(format!("element {i}: got {g:?}, expected {w:?}"));
        }
    }
    None
}

/// Runs every data set of the case; the first problem, if any.
fn run_case(dir: &Path) -> Option<String> {
    let model = onnx_bcast::load(&dir.join("model.onnx")).unwrap_or_else(|e| panic!("{e}"));
    let free: Vec<String> = model.free_inputs();
    let set = dir.join("test_data_set_0");
    let inputs: Vec<(String, HostTensor)> = numbered(&set, "input_")
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let (name, t) = read(p);
            (if free.contains(&name) { name } else { free[k].clone() }, t)
        })
        .collect();
    let got = match exec::run(&model, inputs, &Options::default()) {
        Ok(g) => g,
        Err(e) => return Some(e.to_string()),
    };
    let want = numbered(&set, "output_");
    if want.len() != got.len() {
        return Some(format!("{} outputs, expected {}", got.len(), want.len()));
    }
    for ((name, g), p) in got.iter().zip(&want) {
        if let Some(why) = mismatch(g, &read(p).1) {
            return Some(format!("output {name}: {why}"));
        }
    }
    None
}

fn family_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = common::cases("node").into_iter().filter(|c| c.family).map(|c| c.dir).collect();
    assert_eq!(dirs.len(), 213, "the manifest lists 213 broadcasting-family cases");
    let legacy: Vec<PathBuf> = common::cases("legacy").into_iter().map(|c| c.dir).collect();
    assert_eq!(legacy.len(), 6);
    dirs.extend(legacy);
    dirs
}

#[test]
fn family_and_legacy_cases_match_expected_outputs() {
    let dirs = family_dirs();
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| run_case(d).map(|why| format!("{}: {why}", d.file_name().unwrap().to_string_lossy())))
        .collect();
    assert!(failures.is_empty(), "{} of {} cases fail:\n{}", failures.len(), dirs.len(), failures.join("\n"));
}

#[test]
fn the_comparison_catches_a_wrong_value() {
    // A sanity check on the check itself: a perturbed expectation must be reported.
    let want = read(&common::data().join("node/test_add/test_data_set_0/output_0.pb")).1;
    let mut v = want.elems::<f32>().unwrap().to_vec();
    v[7] += 0.01 * v[7].abs().max(1.0);
    let bad = HostTensor::from_vec(want.shape.clone(), v).unwrap();
    assert!(mismatch(&bad, &want).is_some());
    let ints = HostTensor::from_vec(vec![2], vec![1i64, 2]).unwrap();
    let other = HostTensor::from_vec(vec![2], vec![1i64, 3]).unwrap();
    assert!(mismatch(&ints, &other).is_some());
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_onnx-bcast"))
}

#[test]
fn cli_test_passes_every_family_and_legacy_case() {
    let dirs = family_dirs();
    let out = bin().arg("test").args(&dirs).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("PASS ")).count(), 219);
    assert!(stdout.lines().last().unwrap().starts_with("219 cases: 219 passed, 0 failed"), "{stdout}");
}

#[test]
fn cli_test_fails_a_case_with_a_wrong_expected_output() {
    // test_add with test_sub's expected output (same shape and type) must fail with exit 1.
    let tmp = std::env::temp_dir().join(format!("onnx-bcast-wrong-{}", std::process::id()));
    let set = tmp.join("test_add_wrong/test_data_set_0");
    std::fs::create_dir_all(&set).unwrap();
    let node = common::data().join("node");
    std::fs::copy(node.join("test_add/model.onnx"), tmp.join("test_add_wrong/model.onnx")).unwrap();
    for f in ["input_0.pb", "input_1.pb"] {
        std::fs::copy(node.join("test_add/test_data_set_0").join(f), set.join(f)).unwrap();
    }
    std::fs::copy(node.join("test_sub/test_data_set_0/output_0.pb"), set.join("output_0.pb")).unwrap();
    let out = bin().arg("test").arg(tmp.join("test_add_wrong")).arg(node.join("test_add")).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    std::fs::remove_dir_all(&tmp).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL test_add_wrong: test_data_set_0: output 'sum'"), "{stdout}");
    assert!(stdout.contains("PASS test_add "), "{stdout}");
    assert!(stdout.contains("2 cases: 1 passed, 1 failed"), "{stdout}");
}

/// A case whose op the executor lacks is a SKIP, counted apart from failures, by op; only a
/// FAIL makes `test` exit 1.
#[test]
fn cli_test_skips_what_the_executor_does_not_run() {
    let node = common::data().join("node");
    let cases = ["test_add", "test_softmax_example", "test_transpose_default", "test_transpose_all_permutations_0"];
    let out = bin().arg("test").args(cases.iter().map(|c| node.join(c))).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("SKIP test_softmax_example: the executor does not run Softmax"), "{stdout}");
    assert_eq!(
        stdout.lines().last().unwrap(),
        "4 cases: 1 passed, 0 failed, 3 skipped, as the executor does not run Transpose (2), Softmax (1)"
    );
}

#[test]
fn expand_past_the_budget_fails_at_once() {
    let node = Node::new("expand_huge", "Expand", Model::MAIN).with_inputs([None, None]);
    let x = HostTensor::from_vec(vec![1], vec![1.5f32]).unwrap();
    let shape = HostTensor::from_vec(vec![2], vec![1_000_000i64, 1_000_000]).unwrap();
    let start = Instant::now();
    let err = exec::run_node(&node, 13, vec![Some(x), Some(shape)], &Options::default()).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(1));
    match err {
        Error::Budget { bytes, budget, .. } => {
            assert_eq!(bytes, 4_000_000_000_000);
            assert_eq!(budget, 4 << 30);
        }
        other => panic!("expected a budget error, got {other}"),
    }
}

#[test]
fn cli_run_refuses_a_huge_expand_with_exit_2() {
    let tmp = std::env::temp_dir().join(format!("onnx-bcast-huge-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let x = tmp.join("x.npy");
    exec::npy::write(&x, &HostTensor::from_vec(vec![1], vec![2.0f32]).unwrap()).unwrap();
    let start = Instant::now();
    let out = bin()
        .arg("run")
        .arg(common::data().join("exec/expand_huge.onnx"))
        .arg("--input")
        .arg(format!("x={}", x.display()))
        .arg("--output-dir")
        .arg(&tmp)
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let wrote = tmp.join("y.npy").exists();
    std::fs::remove_dir_all(&tmp).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("expand_huge (Expand)") && stderr.contains("4000000000000 bytes"), "{stderr}");
    assert!(stderr.contains("over the memory budget of 4294967296 bytes"), "{stderr}");
    assert!(!wrote);
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

#[test]
fn cli_run_writes_npy_outputs() {
    // test_add_bcast through `run` with .pb inputs; the .npy output read back equals the
    // expected output.
    let dir = common::data().join("node/test_add_bcast");
    let tmp = std::env::temp_dir().join(format!("onnx-bcast-run-{}", std::process::id()));
    let set = dir.join("test_data_set_0");
    let out = bin()
        .arg("run")
        .arg(dir.join("model.onnx"))
        .arg("--input")
        .arg(format!("x={}", set.join("input_0.pb").display()))
        .arg(format!("y={}", set.join("input_1.pb").display()))
        .arg("--output-dir")
        .arg(&tmp)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let got = exec::npy::read(&tmp.join("sum.npy"), u64::MAX).unwrap();
    std::fs::remove_dir_all(&tmp).unwrap();
    let want = read(&set.join("output_0.pb")).1;
    assert_eq!(mismatch(&got, &want), None);
}

#[test]
fn cli_run_takes_no_input_flag_for_a_model_without_inputs() {
    // test_constant has no graph input; test_add_bcast without its inputs names the first.
    let dir = common::data().join("node/test_constant");
    let tmp = std::env::temp_dir().join(format!("onnx-bcast-run-none-{}", std::process::id()));
    let out = bin().arg("run").arg(dir.join("model.onnx")).arg("--output-dir").arg(&tmp).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let got = exec::npy::read(&tmp.join("values.npy"), u64::MAX).unwrap();
    std::fs::remove_dir_all(&tmp).unwrap();
    let want = read(&dir.join("test_data_set_0/output_0.pb")).1;
    assert_eq!(mismatch(&got, &want), None);
    let out = bin().arg("run").arg(common::data().join("node/test_add_bcast/model.onnx")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("input 'x' is required and was not given"), "{stderr}");
}

#[test]
fn cli_verify_compares_two_models() {
    // A model against itself is identical; Add against Sub on the same inputs is not.
    let node = common::data().join("node");
    let ok = bin().arg("verify").arg(node.join("test_add/model.onnx")).arg(node.join("test_add/model.onnx")).output();
    let ok = ok.unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));
    let bad = bin().arg("verify").arg(node.join("test_add/model.onnx")).arg(node.join("test_sub/model.onnx")).output();
    let bad = bad.unwrap();
    let stdout = String::from_utf8_lossy(&bad.stdout);
    assert_eq!(bad.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("MISMATCH"), "{stdout}");
}

/// Empty inputs whose other sizes multiply past `usize::MAX` (a `.npy` header may say
/// `(0, 4294967296, 4294967296)`): Slice's input strides and Gather's and Concat's outer and
/// inner products overflowed (debug-build panics), and Gather and Concat with an empty output
/// but 2^40 outer rows looped over them; the broadcast plan of Add, Tile and Expand refused
/// such inputs as not stretching to their own shape. Each gives its empty output at once.
#[test]
fn empty_tensors_with_huge_sizes_run_without_overflow() {
    let big = 1usize << 32;
    let x = |shape: Vec<usize>| HostTensor::from_vec(shape, Vec::<f32>::new()).unwrap();
    let ints = |v: Vec<i64>| HostTensor::from_vec(vec![v.len()], v).unwrap();
    let int = |name: &str, v: i64| onnx_bcast::ir::Attribute::new(name, onnx_bcast::ir::AttrValue::Int(v));
    let run = |op: &str, attrs: Vec<onnx_bcast::ir::Attribute>, inputs: Vec<HostTensor>| {
        let mut node = Node::new("n", op, Model::MAIN).with_inputs(vec![None; inputs.len()]);
        node.attrs = attrs;
        let start = Instant::now();
        let out = exec::run_node(&node, 18, inputs.into_iter().map(Some).collect(), &Options::default())
            .unwrap_or_else(|e| panic!("{op}: {e}"));
        assert!(start.elapsed() < Duration::from_secs(5), "{op} took {:?}", start.elapsed());
        out.into_iter().next().unwrap().shape
    };
    let slice = |axis: i64| vec![x(vec![0, big, big]), ints(vec![0]), ints(vec![1]), ints(vec![axis])];
    for (axis, want) in [(0, [0, big, big]), (1, [0, 1, big]), (2, [0, big, 1])] {
        assert_eq!(run("Slice", vec![], slice(axis)), want, "Slice at axis {axis}");
    }
    assert_eq!(run("Gather", vec![int("axis", 0)], vec![x(vec![0, big, big]), ints(vec![])]), vec![0, big, big]);
    assert_eq!(run("Gather", vec![int("axis", 1)], vec![x(vec![big, 0, big]), ints(vec![])]), vec![big, 0, big]);
    assert_eq!(
        run("Concat", vec![int("axis", 1)], vec![x(vec![0, big, big]), x(vec![0, big, big])]),
        vec![0, 2 * big, big]
    );
    assert_eq!(run("Add", vec![], vec![x(vec![0, big, big]), x(vec![0, big, big])]), vec![0, big, big]);
    assert_eq!(run("Tile", vec![], vec![x(vec![0, big, big]), ints(vec![2, 1, 1])]), vec![0, big, big]);
    assert_eq!(run("Expand", vec![], vec![x(vec![0, big, big]), ints(vec![2, 1, 1, 1])]), vec![2, 0, big, big]);
    assert_eq!(
        run("Concat", vec![int("axis", 1)], vec![x(vec![big, 0, big]), x(vec![big, 0, big])]),
        vec![big, 0, big]
    );
    // The 0 last: the element count overflowed on 2^40 x 2^40 before it reached the 0, and the
    // tensor was refused as too large.
    let wide = 1usize << 40;
    assert_eq!(run("Add", vec![], vec![x(vec![wide, wide, 0]), x(vec![wide, 1, 0])]), vec![wide, wide, 0]);
    assert_eq!(
        run("Concat", vec![int("axis", 2)], vec![x(vec![wide, wide, 0]), x(vec![wide, wide, 0])]),
        vec![wide, wide, 0]
    );
    assert_eq!(run("Gather", vec![int("axis", 2)], vec![x(vec![wide, wide, 0]), ints(vec![])]), vec![wide, wide, 0]);
}

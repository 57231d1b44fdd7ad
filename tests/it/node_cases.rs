//! Inference over the ONNX backend node cases (generated from onnx 1.23.2 by
//! `scripts/gen_node_cases.py`): inferred output shapes and dtypes against the expected outputs.
//! Three settings: onnx's own (declared output types kept, nothing fed; onnx gets 1,852 of
//! 1,859, `scripts/onnx_node_baseline.py`), declared types stripped so that only inference
//! speaks, and stripped with the small inputs' contents fed as a session would see them.

use crate::common;

use onnx_bcast::infer::{infer, Options};
use onnx_bcast::shape::{Dim, Type};
use onnx_bcast::Model;

#[derive(Debug, PartialEq)]
enum Verdict {
    Exact,
    /// Something is unknown, nothing contradicts.
    Partial(String),
    /// A known dim or dtype disagrees with the expected output.
    Wrong(String),
}

fn strip_declared(model: &mut Model) {
    let main = model.graph_mut(Model::MAIN);
    for o in &mut main.outputs {
        o.ty = None;
    }
    main.value_info.clear();
}

/// The contents of the case's small integer inputs (shapes fed at run time), as a runtime's
/// session would see them.
fn fed_values(case: &common::Case, model: &Model) -> Options {
    let mut options = Options::default();
    let inputs: Vec<String> = model.free_inputs();
    for (k, name) in inputs.iter().enumerate() {
        let pb = case.dir.join(format!("test_data_set_0/input_{k}.pb"));
        if let Ok(t) = onnx_bcast::io::read_tensor(&pb) {
            // Encoded images (uint8) are fed whole; other tensors when small.
            let limit =
                if t.dtype == Some(onnx_bcast::dtype::DType::U8) { 1 << 20 } else { onnx_bcast::ops::MAX_TRACKED };
            if let Some(v) = onnx_bcast::ops::tensor_ints(&t, limit) {
                options.values.insert(name.clone(), v);
            } else if let Some(v) = onnx_bcast::ops::tensor_floats(&t, onnx_bcast::ops::MAX_TRACKED) {
                options.floats.insert(name.clone(), v);
            } else if let Some(v) = onnx_bcast::ops::tensor_strings(&t, onnx_bcast::ops::MAX_TRACKED) {
                options.strings.insert(name.clone(), v);
            }
        }
    }
    options
}

fn judge(case: &common::Case) -> Verdict {
    let mut model = onnx_bcast::load(&case.dir.join("model.onnx")).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    strip_declared(&mut model);
    let inf = infer(&model, &fed_values(case, &model));
    if std::env::var("NODE_CASE").is_ok_and(|n| n == case.name) {
        for id in model.value_ids() {
            let v = model.value(id);
            if model.local(v.graph(), v.name()) == Some(id) {
                eprintln!("{}: {:?} value {:?}", v.name(), inf.ty(id), inf.value(id));
            }
        }
        eprintln!("{:#?}", inf.diagnostics);
    }
    verdict(case, &model, &inf)
}

/// Compares the inferred types of the case's graph outputs with its expected outputs.
fn verdict(case: &common::Case, model: &Model, inf: &onnx_bcast::infer::Inference) -> Verdict {
    let outs: Vec<_> = model.graph(Model::MAIN).outputs.iter().map(|o| o.value).collect();
    let mut partial = None;
    for ((kind, dtype, shape), v) in case.outputs.iter().zip(outs) {
        if kind != "tensor" {
            continue;
        }
        let got = inf.ty(v);
        let (gd, gs) = match got {
            Some(Type::Tensor { dtype, shape }) => (*dtype, shape.clone()),
            other => {
                partial.get_or_insert(format!("output {}: {other:?}", model.name(v)));
                continue;
            }
        };
        match (gd, dtype) {
            (Some(g), Some(want)) if g.name() != want => {
                return Verdict::Wrong(format!("{}: dtype {} != {want}", model.name(v), g.name()))
            }
            (None, _) => {
                partial.get_or_insert(format!("{}: dtype unknown", model.name(v)));
            }
            _ => {}
        }
        let want = shape.as_ref().unwrap();
        match gs {
            None => {
                partial.get_or_insert(format!("{}: rank unknown", model.name(v)));
            }
            Some(s) if s.len() != want.len() => {
                return Verdict::Wrong(format!("{}: rank {} != {}", model.name(v), s.len(), want.len()))
            }
            Some(s) => {
                for (axis, (g, w)) in s.iter().zip(want).enumerate() {
                    match g {
                        Dim::Known(k) if k != w => {
                            return Verdict::Wrong(format!("{}: axis {axis}: {k} != {w}", model.name(v)))
                        }
                        Dim::Known(_) => {}
                        other => {
                            partial.get_or_insert(format!("{}: axis {axis} is {other}", model.name(v)));
                        }
                    }
                }
            }
        }
    }
    match partial {
        Some(p) => Verdict::Partial(p),
        None => Verdict::Exact,
    }
}

/// The cases listed in `tests/data/node/not_static.txt`: outputs sized by input contents.
fn not_static() -> Vec<String> {
    let text = std::fs::read_to_string(common::data().join("node/not_static.txt")).expect("not_static.txt");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn broadcasting_family_cases_are_exact() {
    let cases: Vec<_> = common::cases("node").into_iter().filter(|c| c.family).collect();
    assert_eq!(cases.len(), 213, "the manifest's family count");
    let bad: Vec<String> = cases
        .iter()
        .filter_map(|c| match judge(c) {
            Verdict::Exact => None,
            v => Some(format!("{}: {v:?}", c.name)),
        })
        .collect();
    assert!(bad.is_empty(), "{} of 213 not exact:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn legacy_broadcast_cases_are_exact() {
    for c in common::cases("legacy") {
        assert_eq!(judge(&c), Verdict::Exact, "{}", c.name);
    }
}

/// The 1,859 cases whose outputs are all tensors.
fn tensor_cases() -> Vec<common::Case> {
    let cases: Vec<_> =
        common::cases("node").into_iter().filter(|c| c.outputs.iter().all(|o| o.0 == "tensor")).collect();
    assert_eq!(cases.len(), 1859);
    cases
}

#[test]
fn all_node_cases_none_wrong() {
    let cases = tensor_cases();
    let mut exact = 0;
    let mut wrong = Vec::new();
    let mut partial = Vec::new();
    let verbose = std::env::var_os("NODE_CASES_VERBOSE").is_some();
    for c in &cases {
        match judge(c) {
            Verdict::Exact => exact += 1,
            Verdict::Partial(why) => {
                partial.push(c.name.clone());
                if verbose {
                    eprintln!("partial {}: {why}", c.name);
                }
            }
            Verdict::Wrong(why) => wrong.push(format!("{}: {why}", c.name)),
        }
    }
    eprintln!("exact: {exact} of {}", cases.len());
    assert!(wrong.is_empty(), "{} cases wrong:\n{}", wrong.len(), wrong.join("\n"));
    let unlisted: Vec<&String> = partial.iter().filter(|n| !not_static().contains(n)).collect();
    assert!(unlisted.is_empty(), "not exact and not in not_static.txt: {unlisted:?}");
    // Issue 3's bar (onnx's own inference: 1,852).
    assert!(exact >= 1853, "only {exact} of {} exact", cases.len());
}

/// With declared output types stripped and nothing fed, onnx gets 1,295 (1,407 with its data
/// propagation); inference here must beat both and never be wrong.
#[test]
fn static_stripped_beats_onnx() {
    let cases = tensor_cases();
    let mut exact = 0;
    let mut wrong = Vec::new();
    for c in &cases {
        let mut model = onnx_bcast::load(&c.dir.join("model.onnx")).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        strip_declared(&mut model);
        let inf = infer(&model, &Options::default());
        match verdict(c, &model, &inf) {
            Verdict::Exact => exact += 1,
            Verdict::Partial(_) => {}
            Verdict::Wrong(why) => wrong.push(format!("{}: {why}", c.name)),
        }
    }
    eprintln!("stripped, static: exact {exact} of {}", cases.len());
    assert!(wrong.is_empty(), "{} cases wrong:\n{}", wrong.len(), wrong.join("\n"));
    assert!(exact > 1407, "only {exact} of {} exact (onnx: 1,295, with data_prop 1,407)", cases.len());
}

/// onnx's own count (1,852 of 1,859, `scripts/onnx_node_baseline.py`) is taken the way
/// `onnx.shape_inference.infer_shapes` runs on these files: declared output types kept and
/// merged, no input contents, default options. Same setting here, and inference must never
/// contradict a (correct) declared type.
#[test]
fn static_with_declared_types_beats_onnx() {
    let cases = tensor_cases();
    let mut exact = 0;
    let mut wrong = Vec::new();
    let mut clashes = Vec::new();
    for c in &cases {
        let model = onnx_bcast::load(&c.dir.join("model.onnx")).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let inf = infer(&model, &Options::default());
        for d in &inf.diagnostics {
            if d.code == "declared-shape-mismatch" {
                clashes.push(format!("{}: {}", c.name, d.message));
            }
        }
        match verdict(c, &model, &inf) {
            Verdict::Exact => exact += 1,
            Verdict::Partial(why) => eprintln!("not exact {}: {why}", c.name),
            Verdict::Wrong(why) => wrong.push(format!("{}: {why}", c.name)),
        }
    }
    eprintln!("declared kept, static: exact {exact} of {}", cases.len());
    assert!(wrong.is_empty(), "{} cases wrong:\n{}", wrong.len(), wrong.join("\n"));
    assert!(clashes.is_empty(), "{} declared types contradicted:\n{}", clashes.len(), clashes.join("\n"));
    assert!(exact >= 1853, "only {exact} of {} exact (onnx: 1,852)", cases.len());
}

//! Every example of the three seed documents (`/work/shared/seeds/`): the Array API algorithm
//! (000), XLA's degenerate, InDim and composed broadcasts (001) and the N-ary `Broadcast`
//! operator with constraint C1 (002). Each goes through `shape::multi` (or `in_dim`) for
//! `usize` and `Dim`, through inference on a model built with `build.rs`, and through
//! the `check` command's exit code and JSON diagnostic. Expected shapes are written out by hand
//! from the documents.

use crate::build;

use std::path::{Path, PathBuf};
use std::process::Command;

use onnx_bcast::infer::{infer, Options};
use onnx_bcast::io::proto::ModelProto;
use onnx_bcast::shape::{self, BroadcastError, Dim};
use onnx_bcast::{Model, Severity};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Helpers.

/// A shape written in a table.
type S = &'static [usize];
/// The clashing (input index, size) pairs of a refusal.
type Sizes = &'static [(usize, usize)];

fn dims(s: &[usize]) -> Vec<Dim> {
    s.iter().map(|&d| Dim::Known(d as i64)).collect()
}

fn i64s(s: &[usize]) -> Vec<i64> {
    s.iter().map(|&d| d as i64).collect()
}

/// `shape::multi` over `usize` and over `Dim` must both give `want`.
fn multi_ok(shapes: &[&[usize]], want: &[usize]) {
    let got = shape::multi::<usize>(shapes).unwrap_or_else(|e| panic!("{shapes:?}: {e:?}"));
    assert_eq!(got.shape, want, "usize {shapes:?}");
    assert!(got.assumptions.is_empty());
    let ds: Vec<Vec<Dim>> = shapes.iter().map(|s| dims(s)).collect();
    let refs: Vec<&[Dim]> = ds.iter().map(Vec::as_slice).collect();
    let got = shape::multi::<Dim>(&refs).unwrap_or_else(|e| panic!("{shapes:?}: {e:?}"));
    assert_eq!(got.shape, dims(want), "Dim {shapes:?}");
    assert!(got.assumptions.is_empty());
}

/// `shape::multi` over `usize` and over `Dim` must both refuse, at `axis`, with exactly the
/// (input, size) pairs `sizes`.
fn multi_err(shapes: &[&[usize]], axis: usize, sizes: &[(usize, usize)]) {
    let err = shape::multi::<usize>(shapes).expect_err("must not broadcast");
    assert_eq!(err, BroadcastError::Clash { axis, sizes: sizes.to_vec() }, "usize {shapes:?}");
    let ds: Vec<Vec<Dim>> = shapes.iter().map(|s| dims(s)).collect();
    let refs: Vec<&[Dim]> = ds.iter().map(Vec::as_slice).collect();
    let err = shape::multi::<Dim>(&refs).expect_err("must not broadcast");
    let want = sizes.iter().map(|&(i, s)| (i, Dim::Known(s as i64))).collect();
    assert_eq!(err, BroadcastError::Clash { axis, sizes: want }, "Dim {shapes:?}");
}

/// The inferred shape of the model's first graph output, and the error findings.
fn infer_model(m: &ModelProto) -> (Option<Vec<Dim>>, Vec<onnx_bcast::Diagnostic>) {
    let model = build::load(m);
    let inf = infer(&model, &Options::default());
    let out = model.graph(Model::MAIN).outputs[0].value;
    let errors = inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).cloned().collect();
    (inf.shape(out).cloned(), errors)
}

fn scratch() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("seeds")
}

/// Runs `onnx-bcast check --format json` on `m` written as `<file>.onnx`: the exit code and
/// the model's entry of the JSON report.
fn check(m: &ModelProto, file: &str) -> (i32, Value) {
    let path = build::write(m, &scratch(), &format!("{file}.onnx"));
    let out = Command::new(env!("CARGO_BIN_EXE_onnx-bcast"))
        .args(["check", "--format", "json"])
        .arg(&path)
        .output()
        .expect("run onnx-bcast");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{file}: check's output is not JSON ({e}): {stdout}"));
    let code = out.status.code().unwrap_or_else(|| panic!("{file}: killed by a signal"));
    (code, doc["models"][0].clone())
}

/// The model broadcasts: inference gives `want` with no error, and `check` exits 0.
fn model_ok(m: &ModelProto, file: &str, want: &[usize]) {
    let (shape, errors) = infer_model(m);
    assert!(errors.is_empty(), "{file}: unexpected findings {errors:#?}");
    assert_eq!(shape, Some(dims(want)), "{file}");
    let (code, report) = check(m, file);
    assert_eq!(code, 0, "{file}: check exit code, report {report}");
    let errors: Vec<&Value> =
        report["diagnostics"].as_array().unwrap().iter().filter(|d| d["severity"] == "error").collect();
    assert!(errors.is_empty(), "{file}: {errors:?}");
}

/// The model does not broadcast: inference reports one `broadcast-incompatible` error on
/// `node` at `axis` with exactly the clashing (input, size) pairs `sizes`, and `check` exits 1
/// with a JSON diagnostic naming the node and the axis. `axis` is `None` for errors that have
/// no single axis (ranks, axes outside the shape).
fn model_err(m: &ModelProto, file: &str, node: &str, axis: Option<usize>, sizes: &[(usize, usize)]) {
    let (_, errors) = infer_model(m);
    assert_eq!(errors.len(), 1, "{file}: {errors:#?}");
    let d = &errors[0];
    assert_eq!(d.code, "broadcast-incompatible", "{file}: {d}");
    assert_eq!(d.node.as_deref(), Some(node), "{file}");
    assert_eq!(d.axis, axis, "{file}: {d}");
    let want: Vec<(usize, String)> = sizes.iter().map(|&(i, s)| (i, s.to_string())).collect();
    assert_eq!(d.sizes, want, "{file}: {d}");

    let (code, report) = check(m, file);
    assert_eq!(code, 1, "{file}: check exit code, report {report}");
    let diags = report["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{file}: {diags:?}");
    let j = &diags[0];
    assert_eq!(j["severity"], "error");
    assert_eq!(j["code"], "broadcast-incompatible");
    assert_eq!(j["node"], node);
    match axis {
        Some(a) => assert_eq!(j["axis"], a, "{file}: {j}"),
        None => assert!(j["axis"].is_null(), "{file}: {j}"),
    }
    let jsizes: Vec<(u64, String)> = j["sizes"]
        .as_array()
        .map(|s| s.iter().map(|p| (p["input"].as_u64().unwrap(), p["size"].as_str().unwrap().to_string())).collect())
        .unwrap_or_default();
    let want: Vec<(u64, String)> = want.into_iter().map(|(i, s)| (i as u64, s)).collect();
    assert_eq!(jsizes, want, "{file}: {j}");
}

/// An opset-17 `Add` of inputs `a` and `b`.
fn add(name: &str, a: &[usize], b: &[usize]) -> ModelProto {
    build::binary(17, name, "Add", &i64s(a), &i64s(b))
}

/// An opset-6 legacy `Add(A, B, broadcast=1[, axis])`.
fn legacy_add(name: &str, a: &[usize], b: &[usize], axis: Option<i64>) -> ModelProto {
    build::model(
        6,
        vec![build::input("A", &i64s(a)), build::input("B", &i64s(b))],
        vec![build::legacy(name, "Add", "A", "B", "Y", axis)],
        &["Y"],
    )
}

/// XLA's `broadcast_in_dim` of `low` into rank `rank`, then numpy broadcasting with `high`,
/// for `usize` and `Dim`.
fn in_dim_multi(low: &[usize], high: &[usize], bdims: &[i64]) -> Result<Vec<usize>, BroadcastError<usize>> {
    let placed = shape::in_dim::<usize>(low, high.len(), bdims)?;
    let out = shape::multi::<usize>(&[high, &placed]).map(|b| b.shape);
    // The same through `Dim`.
    let placed_d = shape::in_dim::<Dim>(&dims(low), high.len(), bdims).expect("Dim in_dim agrees with usize");
    assert_eq!(placed_d, dims(&placed));
    let out_d = shape::multi::<Dim>(&[&dims(high), &placed_d]).map(|b| b.shape);
    match (&out, out_d) {
        (Ok(u), Ok(d)) => assert_eq!(d, dims(u)),
        (Err(_), Err(_)) => {}
        (u, d) => panic!("usize and Dim disagree: {u:?} vs {d:?}"),
    }
    out
}

// ---------------------------------------------------------------------------------------------
// 000: the Array API standard.

/// The six pairs that broadcast, with their results, as the document writes them.
const ARRAY_API_OK: &[(S, S, S)] = &[
    (&[8, 1, 6, 1], &[7, 1, 5], &[8, 7, 6, 5]),
    (&[5, 4], &[1], &[5, 4]),
    (&[5, 4], &[4], &[5, 4]),
    (&[15, 3, 5], &[15, 1, 5], &[15, 3, 5]),
    (&[15, 3, 5], &[3, 5], &[15, 3, 5]),
    (&[15, 3, 5], &[3, 1], &[15, 3, 5]),
];

/// The two pairs that do not, with the output axis that clashes and the clashing sizes:
/// `3` vs `4`, and `2 x 1` vs `8 x 4 x 3` whose "second dimension does not match" (output
/// axis 1: 2 against 4).
const ARRAY_API_BAD: &[(S, S, usize, usize, usize)] = &[(&[3], &[4], 0, 3, 4), (&[2, 1], &[8, 4, 3], 1, 2, 4)];

#[test]
fn array_api_examples_through_the_rule() {
    for (a, b, want) in ARRAY_API_OK {
        multi_ok(&[a, b], want);
        multi_ok(&[b, a], want);
    }
    for (a, b, axis, sa, sb) in ARRAY_API_BAD {
        multi_err(&[a, b], *axis, &[(0, *sa), (1, *sb)]);
        multi_err(&[b, a], *axis, &[(0, *sb), (1, *sa)]);
    }
}

#[test]
fn array_api_examples_through_add_models() {
    for (k, (a, b, want)) in ARRAY_API_OK.iter().enumerate() {
        model_ok(&add(&format!("add_ok{k}"), a, b), &format!("array_api_ok{k}"), want);
        // Reversed operands, inference only.
        let (shape, errors) = infer_model(&add("rev", b, a));
        assert!(errors.is_empty());
        assert_eq!(shape, Some(dims(want)));
    }
    for (k, (a, b, axis, sa, sb)) in ARRAY_API_BAD.iter().enumerate() {
        let node = format!("add_bad{k}");
        model_err(&add(&node, a, b), &format!("array_api_bad{k}"), &node, Some(*axis), &[(0, *sa), (1, *sb)]);
    }
}

// ---------------------------------------------------------------------------------------------
// 001: XLA. Degenerate dimensions.

/// The degenerate pairs that broadcast: the three examples and the outer operation.
const XLA_DEGENERATE_OK: &[(S, S, S)] = &[
    (&[2, 1], &[2, 3], &[2, 3]),
    (&[1, 2, 5], &[7, 2, 5], &[7, 2, 5]),
    (&[7, 2, 5], &[7, 1, 5], &[7, 2, 5]),
    (&[2, 1], &[1, 3], &[2, 3]),
];

#[test]
fn xla_degenerate_examples_through_the_rule() {
    for (a, b, want) in XLA_DEGENERATE_OK {
        multi_ok(&[a, b], want);
        multi_ok(&[b, a], want);
    }
    // (7,2,5) and (7,2,6) are incompatible: axis 2, 5 against 6.
    multi_err(&[&[7, 2, 5], &[7, 2, 6]], 2, &[(0, 5), (1, 6)]);
}

#[test]
fn xla_degenerate_examples_through_add_models() {
    for (k, (a, b, want)) in XLA_DEGENERATE_OK.iter().enumerate() {
        model_ok(&add(&format!("add_deg{k}"), a, b), &format!("xla_degenerate_ok{k}"), want);
    }
    model_err(
        &add("add_deg_bad", &[7, 2, 5], &[7, 2, 6]),
        "xla_degenerate_bad",
        "add_deg_bad",
        Some(2),
        &[(0, 5), (1, 6)],
    );
}

#[test]
fn xla_degenerate_examples_through_legacy_models() {
    // Legacy broadcasting is unidirectional: B stretches to A and the output is A's shape, so
    // each example works with the larger shape as A (a size-1 dim of B stretches, as ONNX's
    // own example of a (1, 1) B onto a (2, 3, 4, 5) A shows)...
    model_ok(&legacy_add("leg_deg0", &[2, 3], &[2, 1], None), "legacy_degenerate0", &[2, 3]);
    model_ok(&legacy_add("leg_deg1", &[7, 2, 5], &[1, 2, 5], None), "legacy_degenerate1", &[7, 2, 5]);
    model_ok(&legacy_add("leg_deg2", &[7, 2, 5], &[7, 1, 5], None), "legacy_degenerate2", &[7, 2, 5]);
    model_ok(&legacy_add("leg_deg3", &[1, 2, 5], &[1, 2, 5], Some(0)), "legacy_degenerate3", &[1, 2, 5]);
    // ... and fails with the smaller shape as A: A's size-1 dim cannot grow.
    let cases: &[(&str, S, S, usize, usize, usize)] = &[
        ("leg_deg_rev0", &[2, 1], &[2, 3], 1, 1, 3),
        ("leg_deg_rev1", &[1, 2, 5], &[7, 2, 5], 0, 1, 7),
        ("leg_deg_rev2", &[7, 1, 5], &[7, 2, 5], 1, 1, 2),
        // The incompatible pair stays incompatible.
        ("leg_deg_bad", &[7, 2, 5], &[7, 2, 6], 2, 5, 6),
        // The outer operation needs both sides to stretch: the legacy form cannot express it,
        // in either order.
        ("leg_outer", &[2, 1], &[1, 3], 1, 1, 3),
        ("leg_outer_rev", &[1, 3], &[2, 1], 0, 1, 2),
    ];
    for (node, a, b, axis, sa, sb) in cases {
        model_err(&legacy_add(node, a, b, None), node, node, Some(*axis), &[(0, *sa), (1, *sb)]);
    }
}

// ---------------------------------------------------------------------------------------------
// 001: XLA. InDim broadcasting.

#[test]
fn xla_in_dim_examples_through_the_rule() {
    // |1 2 3; 4 5 6| + |7 8 9|: the vector (3) onto the (2,3) matrix with dims (1).
    assert_eq!(shape::in_dim::<usize>(&[3], 2, &[1]).unwrap(), vec![1, 3]);
    assert_eq!(in_dim_multi(&[3], &[2, 3], &[1]).unwrap(), vec![2, 3]);
    // With dims (0) the vector's 3 meets the matrix's 2 rows: invalid.
    assert_eq!(shape::in_dim::<usize>(&[3], 2, &[0]).unwrap(), vec![3, 1]);
    assert_eq!(in_dim_multi(&[3], &[2, 3], &[0]), Err(BroadcastError::Clash { axis: 0, sizes: vec![(0, 2), (1, 3)] }));
    // A scalar needs no dims: |1 2 3; 4 5 6| + 7.
    assert_eq!(shape::in_dim::<usize>(&[], 2, &[]).unwrap(), vec![1, 1]);
    assert_eq!(in_dim_multi(&[], &[2, 3], &[]).unwrap(), vec![2, 3]);
    // The 3-vector onto a 3x3 matrix, both ways: as columns (dims (1)) or as rows (dims (0)).
    assert_eq!(shape::in_dim::<usize>(&[3], 2, &[1]).unwrap(), vec![1, 3]);
    assert_eq!(shape::in_dim::<usize>(&[3], 2, &[0]).unwrap(), vec![3, 1]);
    assert_eq!(in_dim_multi(&[3], &[3, 3], &[1]).unwrap(), vec![3, 3]);
    assert_eq!(in_dim_multi(&[3], &[3, 3], &[0]).unwrap(), vec![3, 3]);
    // The 2x3x4 cuboid and a 3x4 matrix with dims (1,2).
    assert_eq!(shape::in_dim::<usize>(&[3, 4], 3, &[1, 2]).unwrap(), vec![1, 3, 4]);
    assert_eq!(in_dim_multi(&[3, 4], &[2, 3, 4], &[1, 2]).unwrap(), vec![2, 3, 4]);
}

/// M x N x P x Q of the formal definition, with distinct sizes so that a wrong axis shows.
const MNPQ: [usize; 4] = [2, 3, 4, 5];

#[test]
fn xla_formal_definition_through_the_rule() {
    // A vector T matched to each dim k: T must equal that dim.
    for (k, &t) in MNPQ.iter().enumerate() {
        let mut placed = vec![1; 4];
        placed[k] = t;
        assert_eq!(shape::in_dim::<usize>(&[t], 4, &[k as i64]).unwrap(), placed);
        assert_eq!(in_dim_multi(&[t], &MNPQ, &[k as i64]).unwrap(), MNPQ.to_vec());
        // A T unlike the matched dim (and not 1) is refused at that axis.
        let wrong = 7;
        assert_eq!(
            in_dim_multi(&[wrong], &MNPQ, &[k as i64]),
            Err(BroadcastError::Clash { axis: k, sizes: vec![(0, MNPQ[k]), (1, wrong)] })
        );
    }
    // A T x V matrix matched to dims (2,3), (1,2) and (0,3).
    for (a, b) in [(2usize, 3usize), (1, 2), (0, 3)] {
        let (t, v) = (MNPQ[a], MNPQ[b]);
        let mut placed = vec![1; 4];
        placed[a] = t;
        placed[b] = v;
        assert_eq!(shape::in_dim::<usize>(&[t, v], 4, &[a as i64, b as i64]).unwrap(), placed);
        assert_eq!(in_dim_multi(&[t, v], &MNPQ, &[a as i64, b as i64]).unwrap(), MNPQ.to_vec());
    }
    // Dims must be strictly increasing: V to N and T to P, or V to both P and N, are illegal,
    // and so are dims outside the rank.
    let (t, v) = (MNPQ[2], MNPQ[1]);
    for bad in [&[2i64, 1][..], &[1, 1], &[2, 2], &[3, 4], &[-1, 2]] {
        assert_eq!(
            shape::in_dim::<usize>(&[t, v], 4, bad),
            Err(BroadcastError::BadDims { dims: bad.to_vec(), rank: 4 }),
            "{bad:?}"
        );
        assert!(shape::in_dim::<Dim>(&dims(&[t, v]), 4, bad).is_err());
    }
    // As many dims as the low-rank array has axes.
    assert!(shape::in_dim::<usize>(&[t, v], 4, &[1]).is_err());
}

#[test]
fn xla_in_dim_examples_through_legacy_models() {
    // The legacy form places B at the contiguous run `axis..axis+rank(B)` of A (by default
    // the trailing axes): InDim with contiguous dims.
    // The 3-vector onto the 2x3 matrix: dims (1), by default or with axis=1.
    model_ok(&legacy_add("leg_vec", &[2, 3], &[3], None), "legacy_vec", &[2, 3]);
    model_ok(&legacy_add("leg_vec_ax1", &[2, 3], &[3], Some(1)), "legacy_vec_ax1", &[2, 3]);
    // dims (0): 3 against the 2 rows.
    model_err(
        &legacy_add("leg_vec_ax0", &[2, 3], &[3], Some(0)),
        "legacy_vec_ax0",
        "leg_vec_ax0",
        Some(0),
        &[(0, 2), (1, 3)],
    );
    // The scalar: |1 2 3; 4 5 6| + 7.
    model_ok(&legacy_add("leg_scalar", &[2, 3], &[], None), "legacy_scalar", &[2, 3]);
    // The 3x3 matrix both ways.
    model_ok(&legacy_add("leg_3x3_cols", &[3, 3], &[3], Some(1)), "legacy_3x3_cols", &[3, 3]);
    model_ok(&legacy_add("leg_3x3_rows", &[3, 3], &[3], Some(0)), "legacy_3x3_rows", &[3, 3]);
    // The cuboid and the 3x4 matrix: dims (1,2), which are also its trailing axes.
    model_ok(&legacy_add("leg_cuboid", &[2, 3, 4], &[3, 4], Some(1)), "legacy_cuboid", &[2, 3, 4]);
    model_ok(&legacy_add("leg_cuboid_default", &[2, 3, 4], &[3, 4], None), "legacy_cuboid_default", &[2, 3, 4]);
    // M x N x P x Q with a vector at each dim.
    for (k, &t) in MNPQ.iter().enumerate() {
        let node = format!("leg_mnpq_vec{k}");
        model_ok(&legacy_add(&node, &MNPQ, &[t], Some(k as i64)), &node, &MNPQ);
        // A mismatching T is refused at axis k.
        let node = format!("leg_mnpq_wrong{k}");
        model_err(&legacy_add(&node, &MNPQ, &[7], Some(k as i64)), &node, &node, Some(k), &[(0, t), (1, 7)]);
    }
    // T x V at dims (2,3) and (1,2); (0,3) is not contiguous, so the legacy form cannot say it.
    model_ok(&legacy_add("leg_mnpq_23", &MNPQ, &[4, 5], Some(2)), "legacy_mnpq_23", &MNPQ);
    model_ok(&legacy_add("leg_mnpq_12", &MNPQ, &[3, 4], Some(1)), "legacy_mnpq_12", &MNPQ);
    // A run that leaves A's axes.
    model_err(&legacy_add("leg_mnpq_34", &MNPQ, &[4, 5], Some(3)), "legacy_mnpq_34", "leg_mnpq_34", None, &[]);
    // Even an empty run (a scalar B) must start inside A.
    model_err(&legacy_add("leg_scalar_far", &[2, 3], &[], Some(3)), "legacy_scalar_far", "leg_scalar_far", None, &[]);
    model_ok(&legacy_add("leg_scalar_end", &[2, 3], &[], Some(2)), "legacy_scalar_end", &[2, 3]);
}

/// The acceptance: onnx's own inference accepts both, they are errors.
#[test]
fn legacy_acceptance_examples_are_errors() {
    // B[3,4] without axis matches the trailing axes (4,5): 4 against 3 at axis 2.
    let m = legacy_add("add_no_axis", &[2, 3, 4, 5], &[3, 4], None);
    model_err(&m, "acceptance_no_axis", "add_no_axis", Some(2), &[(0, 4), (1, 3)]);
    // B[5] at axis 1 meets A's 3.
    let m = legacy_add("add_axis1", &[2, 3, 4, 5], &[5], Some(1));
    model_err(&m, "acceptance_axis1", "add_axis1", Some(1), &[(0, 3), (1, 5)]);
    // The forms that are right: B[3,4] at axis 1 and B[5] by default.
    model_ok(&legacy_add("add_axis1_ok", &[2, 3, 4, 5], &[3, 4], Some(1)), "acceptance_axis1_ok", &[2, 3, 4, 5]);
    model_ok(&legacy_add("add_suffix_ok", &[2, 3, 4, 5], &[5], None), "acceptance_suffix_ok", &[2, 3, 4, 5]);
}

#[test]
fn legacy_without_broadcast_needs_equal_shapes() {
    // "Without specifying broadcasting, this operation is invalid": opset 6 without
    // `broadcast=1` takes equal shapes only.
    let m = build::model(
        6,
        vec![build::input("A", &[2i64, 3]), build::input("B", &[3i64])],
        vec![build::node("add_plain", "Add", &["A", "B"], &["Y"])],
        &["Y"],
    );
    let (_, errors) = infer_model(&m);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].node.as_deref(), Some("add_plain"));
    let (code, report) = check(&m, "legacy_plain");
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["diagnostics"][0]["node"], "add_plain");
    // Equal shapes are fine.
    let m = build::model(
        6,
        vec![build::input("A", &[2i64, 3]), build::input("B", &[2i64, 3])],
        vec![build::node("add_same", "Add", &["A", "B"], &["Y"])],
        &["Y"],
    );
    model_ok(&m, "legacy_same", &[2, 3]);
}

// ---------------------------------------------------------------------------------------------
// 001: XLA. Composition.

#[test]
fn xla_composition_through_the_rule() {
    // |1 2 3 4| + [5 6]: the 4-vector with dims (0) and the 1x2 matrix give 4x2.
    assert_eq!(shape::in_dim::<usize>(&[4], 2, &[0]).unwrap(), vec![4, 1]);
    assert_eq!(in_dim_multi(&[4], &[1, 2], &[0]).unwrap(), vec![4, 2]);
    // The 1x2 matrix onto 4x3x1 with dims (1,2): 1x1x2 in between, 4x3x2 out.
    assert_eq!(shape::in_dim::<usize>(&[1, 2], 3, &[1, 2]).unwrap(), vec![1, 1, 2]);
    assert_eq!(in_dim_multi(&[1, 2], &[4, 3, 1], &[1, 2]).unwrap(), vec![4, 3, 2]);
}

#[test]
fn xla_composition_through_opset17_models() {
    // With the rank promotion written out (numpy aligns at the right, so the vector is given
    // as the 4x1 that dims (0) makes of it), an opset-17 Add composes both broadcasts.
    model_ok(&add("add_comp0", &[4, 1], &[1, 2]), "composition0", &[4, 2]);
    model_ok(&add("add_comp1", &[4, 3, 1], &[1, 2]), "composition1", &[4, 3, 2]);
}

#[test]
fn xla_composition_through_legacy_models_is_refused() {
    // The legacy rule is unidirectional (the output is A's shape), so neither composition can
    // be written as one legacy Add.
    // A = 1x2, B = the 4-vector at axis 0: A's 1 cannot grow to 4.
    model_err(
        &legacy_add("leg_comp0", &[1, 2], &[4], Some(0)),
        "legacy_composition0",
        "leg_comp0",
        Some(0),
        &[(0, 1), (1, 4)],
    );
    // A = 4x3x1, B = 1x2 at axis 1: A's last 1 cannot grow to 2.
    model_err(
        &legacy_add("leg_comp1", &[4, 3, 1], &[1, 2], Some(1)),
        "legacy_composition1",
        "leg_comp1",
        Some(2),
        &[(0, 1), (1, 2)],
    );
}

// ---------------------------------------------------------------------------------------------
// 002: the N-ary Broadcast operator and constraint C1.

/// The document's definition, written out: pad every shape with leading 1s to the largest
/// rank, take the maximum at each axis, and require constraint C1 (each size is the maximum
/// or 1). Only for sizes of 1 or more, where the maximum is the broadcast size.
fn c1_oracle(shapes: &[&[usize]]) -> Option<Vec<usize>> {
    let ny = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let padded: Vec<Vec<usize>> =
        shapes.iter().map(|s| std::iter::repeat_n(1, ny - s.len()).chain(s.iter().copied()).collect()).collect();
    let dy: Vec<usize> = (0..ny).map(|i| padded.iter().map(|p| p[i]).max().unwrap_or(1)).collect();
    let c1 = padded.iter().all(|p| p.iter().zip(&dy).all(|(d, m)| d == m || *d == 1));
    c1.then_some(dy)
}

/// N-ary examples that satisfy C1, with their common shape.
const NARY_OK: &[(&[S], S)] = &[
    (&[&[8, 1, 6, 1], &[7, 1, 5], &[1], &[6, 5]], &[8, 7, 6, 5]),
    (&[&[2, 1, 4], &[3, 1], &[1]], &[2, 3, 4]),
    (&[&[], &[5], &[2, 1]], &[2, 5]),
    (&[&[15, 3, 5], &[15, 1, 5], &[3, 1], &[5]], &[15, 3, 5]),
];

/// N-ary examples that violate C1: the axis and the (input, size) pairs that clash.
const NARY_BAD: &[(&[S], usize, Sizes)] = &[
    (&[&[2, 3], &[1, 3], &[4, 3]], 0, &[(0, 2), (2, 4)]),
    (&[&[8, 1, 6, 1], &[7, 1, 5], &[1], &[5, 5]], 2, &[(0, 6), (3, 5)]),
    (&[&[2], &[3], &[4]], 0, &[(0, 2), (1, 3), (2, 4)]),
    (&[&[1, 3], &[2, 1], &[1, 1], &[2, 4]], 1, &[(0, 3), (3, 4)]),
];

#[test]
fn nary_examples_through_the_rule() {
    for (shapes, want) in NARY_OK {
        assert_eq!(c1_oracle(shapes).as_deref(), Some(*want), "the oracle agrees with the table");
        multi_ok(shapes, want);
        // Z_m = Broadcast(X_1..X_N)_m: every input stretches to the common shape.
        for x in shapes.iter() {
            assert_eq!(shape::expand::<usize>(x, want).unwrap().shape, want.to_vec());
            assert_eq!(shape::uni::<usize>(want, x, 1).unwrap().shape, want.to_vec());
        }
    }
    for (shapes, axis, sizes) in NARY_BAD {
        assert_eq!(c1_oracle(shapes), None, "the oracle agrees with the table");
        multi_err(shapes, *axis, sizes);
    }
}

const NAMES: [&str; 4] = ["x0", "x1", "x2", "x3"];

fn nary_model(opset: i64, op: &str, node: &str, shapes: &[&[usize]]) -> ModelProto {
    let inputs = shapes.iter().zip(NAMES).map(|(s, n)| build::input(n, &i64s(s))).collect();
    build::model(opset, inputs, vec![build::node(node, op, &NAMES[..shapes.len()], &["y"])], &["y"])
}

#[test]
fn nary_examples_through_sum_max_min_mean_models() {
    for op in ["Sum", "Max", "Min", "Mean"] {
        for (k, (shapes, want)) in NARY_OK.iter().enumerate() {
            let node = format!("{}_ok{k}", op.to_lowercase());
            model_ok(&nary_model(13, op, &node, shapes), &node, want);
        }
        for (k, (shapes, axis, sizes)) in NARY_BAD.iter().enumerate() {
            let node = format!("{}_bad{k}", op.to_lowercase());
            let m = nary_model(13, op, &node, shapes);
            model_err(&m, &node, &node, Some(*axis), sizes);
            // The message names the clashing inputs, and only those.
            let (_, errors) = infer_model(&m);
            for (i, name) in NAMES.iter().enumerate().take(shapes.len()) {
                let named = errors[0].message.contains(&format!("'{name}'"));
                assert_eq!(named, sizes.iter().any(|(j, _)| *j == i), "{node}: {}", errors[0].message);
            }
        }
    }
}

#[test]
fn nary_before_opset_8_takes_equal_shapes() {
    // Sum/Max/Min/Mean broadcast from opset 8; at opset 6 the first example is an error and
    // equal shapes are fine.
    for op in ["Sum", "Max", "Min", "Mean"] {
        let node = format!("{}_v6", op.to_lowercase());
        let (_, errors) = infer_model(&nary_model(6, op, &node, NARY_OK[0].0));
        assert_eq!(errors.len(), 1, "{node}: {errors:#?}");
        assert_eq!(errors[0].node.as_deref(), Some(node.as_str()));
        let (shape, errors) = infer_model(&nary_model(6, op, &node, &[&[2, 3], &[2, 3], &[2, 3]]));
        assert!(errors.is_empty(), "{errors:#?}");
        assert_eq!(shape, Some(dims(&[2, 3])));
    }
}

// ---------------------------------------------------------------------------------------------
// The seed examples with symbols in place of sizes (a `dim_param` where the document has a
// number): the rules of issue 2, item 4, on the documents' own shapes.

#[test]
fn array_api_examples_with_symbols() {
    use shape::{Assumption, Term};
    let k = |n: i64| Dim::Known(n);
    let s = Dim::sym;
    // 8 x 1 x 6 x 1 with n for the 8: a symbol against an absent axis stays, no condition.
    let out = shape::multi::<Dim>(&[&[s("n"), k(1), k(6), k(1)], &[k(7), k(1), k(5)]]).unwrap();
    assert_eq!(out.shape, vec![s("n"), k(7), k(6), k(5)]);
    assert!(out.assumptions.is_empty());
    // 15 x s x 5 against 15 x 1 x 5: 1 is the identity.
    let out = shape::multi::<Dim>(&[&[k(15), s("s"), k(5)], &[k(15), k(1), k(5)]]).unwrap();
    assert_eq!(out.shape, vec![k(15), s("s"), k(5)]);
    assert!(out.assumptions.is_empty());
    // 15 x 3 x 5 against s x 5: the known 3 wins, and s must be 1 or 3.
    let out = shape::multi::<Dim>(&[&[k(15), k(3), k(5)], &[s("s"), k(5)]]).unwrap();
    assert_eq!(out.shape, vec![k(15), k(3), k(5)]);
    assert_eq!(out.assumptions, vec![(1, Assumption::OneOf { sym: Term::name("s"), sizes: vec![1, 3] })]);
    // The failing 3 against 4, as a against b: a result, and the condition that fails for 3, 4.
    let out = shape::multi::<Dim>(&[&[s("a")], &[s("b")]]).unwrap();
    assert_eq!(out.shape, vec![Dim::parse("broadcast(a,b)")]);
    assert_eq!(out.assumptions, vec![(0, Assumption::EqualOrOne(vec![Term::name("a"), Term::name("b")]))]);
    // 2 x 1 against 8 x a x 3: the 2 wins at axis 1 and a must be 1 or 2.
    let out = shape::multi::<Dim>(&[&[k(2), k(1)], &[k(8), s("a"), k(3)]]).unwrap();
    assert_eq!(out.shape, vec![k(8), k(2), k(3)]);
    assert_eq!(out.assumptions, vec![(1, Assumption::OneOf { sym: Term::name("a"), sizes: vec![1, 2] })]);
    // Symbols never hide a clash between known sizes: 2 x s against 8 x 4 x 3.
    assert_eq!(
        shape::multi::<Dim>(&[&[k(2), s("s")], &[k(8), k(4), k(3)]]),
        Err(BroadcastError::Clash { axis: 1, sizes: vec![(0, k(2)), (1, k(4))] })
    );
}

#[test]
fn symbolic_seed_model_through_check() {
    // The third Array API example, 5 x 4 + 4, with the vector's size a symbol: the known 4
    // wins, check passes and reports the side condition; binding seq to 4 or 1 passes, to 3
    // clashes at axis 1.
    let m = build::model(
        17,
        vec![build::input("a", &[build::D::N(5), build::D::N(4)]), build::input("b", &[build::D::S("seq")])],
        vec![build::node("add_sym", "Add", &["a", "b"], &["y"])],
        &["y"],
    );
    let (shape, errors) = infer_model(&m);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(shape, Some(vec![Dim::Known(5), Dim::Known(4)]));
    let (code, report) = check(&m, "symbolic_seed");
    assert_eq!(code, 0, "{report}");
    let constraints = report["constraints"].as_array().unwrap();
    assert_eq!(constraints.len(), 1, "{report}");
    assert_eq!(constraints[0]["node"], "add_sym");
    assert_eq!(constraints[0]["axis"], 1);
    let path = scratch().join("symbolic_seed.onnx");
    for (seq, want) in [("seq=4", 0), ("seq=1", 0), ("seq=3", 1)] {
        let out = Command::new(env!("CARGO_BIN_EXE_onnx-bcast"))
            .args(["check", "--format", "json", "--dim", seq])
            .arg(&path)
            .output()
            .expect("run onnx-bcast");
        assert_eq!(out.status.code(), Some(want), "--dim {seq}");
        if want == 1 {
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            let d = &doc["models"][0]["diagnostics"][0];
            assert_eq!(d["node"], "add_sym");
            assert_eq!(d["axis"], 1);
        }
    }
}

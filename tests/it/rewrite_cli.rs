//! The rewrite commands as a user runs them: exit codes, refusal to rewrite a broken model,
//! `--dim` specialisation, and the written file.

use crate::build;

use std::path::{Path, PathBuf};
use std::process::Command;

use onnx_bcast::infer::{infer, Options};
use onnx_bcast::rewrite::violations;
use onnx_bcast::shape::{Dim, Type};
use onnx_bcast::Model;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_onnx-bcast"))
}

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models")
}

fn out(name: &str) -> PathBuf {
    // Under the target folder, like the other suites: one folder reused by every run, where a
    // folder per process in the system's temp dir was never removed (14 MB a run).
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rewrite_cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn expand_writes_an_explicit_model() {
    let dst = out("attention.onnx");
    let st = bin().args(["expand", models().join("attention_mask.onnx").to_str().unwrap(), "-o"]).arg(&dst).status();
    assert_eq!(st.unwrap().code(), Some(0));
    let m = onnx_bcast::load(&dst).unwrap();
    assert!(violations(&m, &infer(&m, &Options::default())).is_empty());
}

#[test]
fn rewrites_refuse_models_with_errors() {
    for cmd in ["annotate", "expand", "implicit"] {
        let dst = out(&format!("broken_{cmd}.onnx"));
        let o = bin().args([cmd, models().join("broken.onnx").to_str().unwrap(), "-o"]).arg(&dst).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("broadcast-incompatible"));
        assert!(!dst.exists(), "{cmd} wrote a model it refused");
    }
    let o = bin().args(["expand", "no/such/model.onnx", "-o"]).arg(out("none.onnx")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn dim_bindings_specialise_the_model() {
    let dst = out("attention_bound.onnx");
    let st = bin()
        .args(["expand", models().join("attention_mask.onnx").to_str().unwrap(), "--dim", "batch=2", "--dim", "seq=5"])
        .arg("-o")
        .arg(&dst)
        .status();
    assert_eq!(st.unwrap().code(), Some(0));
    let m = onnx_bcast::load(&dst).unwrap();
    // The inputs now state the sizes the targets were computed for; no Shape is needed.
    for i in &m.graph(Model::MAIN).inputs {
        let Some(Type::Tensor { shape: Some(s), .. }) = &i.ty else { panic!() };
        assert!(s.iter().all(|d| matches!(d, Dim::Known(_))), "{s:?}");
    }
    assert!(m.nodes().map(|(_, n)| n).all(|n| n.op_type != "Shape"));
    assert!(violations(&m, &infer(&m, &Options::default())).is_empty());
}

#[test]
fn rewrites_do_not_overwrite_their_input() {
    let src = out("in_place.onnx");
    std::fs::copy(models().join("nary_sum.onnx"), &src).unwrap();
    let before = std::fs::read(&src).unwrap();
    for cmd in ["annotate", "expand", "implicit"] {
        let o = bin().arg(cmd).arg(&src).arg("-o").arg(&src).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{cmd}");
    }
    assert!(std::fs::read(&src).unwrap() == before);
}

#[test]
fn in_place_replaces_the_input_when_asked() {
    let src = out("replace.onnx");
    std::fs::copy(models().join("nary_sum.onnx"), &src).unwrap();
    let before = std::fs::read(&src).unwrap();
    let o = bin().arg("expand").arg(&src).arg("--in-place").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let after = std::fs::read(&src).unwrap();
    assert!(after != before, "nary_sum broadcasts, so expand must change it");
    let m = onnx_bcast::load(&src).unwrap();
    assert!(violations(&m, &infer(&m, &Options::default())).is_empty());
}

#[test]
fn a_large_model_is_annotated_as_the_library_annotates_it() {
    // Large enough that loading walks unknown fields on a second thread (past 1 MiB) and
    // encoding runs on two: the file must be what loading, inferring, annotating and
    // encoding in this process gives.
    use build::D;
    use prost::Message;
    let mut nodes = Vec::new();
    let mut prev = "x".to_string();
    for i in 0..60_000 {
        let out = format!("a_rather_long_tensor_name_{i}");
        nodes.push(build::node(&format!("node_{i}"), ["Add", "Mul", "Sub"][i % 3], &[&prev, "b"], &[&out]));
        prev = out;
    }
    let x = build::input("x", &[D::S("batch"), D::N(1), D::S("seq")]);
    let m = build::model(17, vec![x, build::input("b", &[4, 1])], nodes, &[&prev]);
    let bytes = m.encode_to_vec();
    assert!(bytes.len() > 1 << 20, "too small for the second thread");
    let src = out("large_chain.onnx");
    std::fs::write(&src, &bytes).unwrap();
    let dst = out("large_chain.annotated.onnx");
    let st = bin().arg("annotate").arg(&src).arg("-o").arg(&dst).status().unwrap();
    assert_eq!(st.code(), Some(0));
    let mut want = onnx_bcast::io::decode(&bytes, &src, None).unwrap();
    let inf = infer(&want, &Options::default());
    assert_eq!(onnx_bcast::rewrite::annotate(&mut want, &inf), 59_999);
    let written = std::fs::read(&dst).unwrap();
    assert!(written == onnx_bcast::io::encode(&want), "the command wrote other bytes than the library");
    let y = onnx_bcast::io::proto::ModelProto::decode(written.as_slice()).unwrap();
    let last = y.graph.unwrap().value_info.into_iter().last().unwrap();
    let name = "a_rather_long_tensor_name_59998";
    assert_eq!(last, build::input(name, &[D::S("batch"), D::N(4), D::S("seq")]));
}

/// `--fix-declared`: where the only errors are declared types that contradict inference (an
/// exporter's `[1, seqlen]` for an output that is `[20, 1, 8210]` at run time), `annotate` and
/// `expand` replace them with the inferred types, warn for each, and go on; without the flag
/// they refuse, and with it a model with other errors is still refused.
#[test]
fn fix_declared_replaces_contradicted_types() {
    use build::D;
    use prost::Message;
    let mut m = build::model(
        17,
        vec![build::input("x", &[2i64, 3]), build::input("b", &[3i64])],
        vec![build::node("add0", "Add", &["x", "b"], &["y"])],
        &["y"],
    );
    m.graph.as_mut().unwrap().output[0] = build::input("y", &[D::N(1), D::S("seqlen")]);
    let src = out("wrong_declared.onnx");
    std::fs::write(&src, m.encode_to_vec()).unwrap();
    for cmd in ["annotate", "expand"] {
        let dst = out(&format!("wrong_declared.{cmd}.onnx"));
        let _ = std::fs::remove_file(&dst);
        let r = bin().arg(cmd).arg(&src).arg("-o").arg(&dst).output().unwrap();
        assert_eq!(r.status.code(), Some(1), "{cmd}: {}", String::from_utf8_lossy(&r.stderr));
        assert!(!dst.exists(), "{cmd}: refused, nothing written");
        let r = bin().arg(cmd).arg(&src).arg("-o").arg(&dst).arg("--fix-declared").output().unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(0), "{cmd}: {stderr}");
        assert!(
            stderr.contains("warning[declared-type-fixed]: graph output 'y': the declared type float32[1, seqlen] is replaced by the inferred float32[2, 3] (size 1 is declared at axis 0, 2 is inferred)"),
            "{cmd}: {stderr}"
        );
        let written = onnx_bcast::io::proto::ModelProto::decode(std::fs::read(&dst).unwrap().as_slice()).unwrap();
        assert_eq!(written.graph.unwrap().output[0], build::input("y", &[2i64, 3]), "{cmd}");
    }
    // Another error besides: still refused.
    let mut m2 = m.clone();
    m2.graph.as_mut().unwrap().input[1] = build::input("b", &[4i64]);
    let src2 = out("wrong_declared_and_broken.onnx");
    std::fs::write(&src2, m2.encode_to_vec()).unwrap();
    let r = bin().arg("expand").arg(&src2).arg("-o").arg(out("never.onnx")).arg("--fix-declared").output().unwrap();
    assert_eq!(r.status.code(), Some(1));
}

/// `verify` checks a rewrite site by site: every node the rewrite changed runs on the
/// executor with what computes its new inputs, against the original node on the same data; so
/// a model with an op the executor lacks (Softmax here) is still checked where it was
/// rewritten, and a broken rewrite fails.
#[test]
fn verify_checks_every_rewritten_site() {
    use build::D;
    use prost::Message;
    let m = build::model(
        17,
        vec![build::input("x", &[D::S("batch"), D::N(4), D::S("seq")]), build::input("b", &[4i64, 1])],
        vec![build::node("add0", "Add", &["x", "b"], &["y"]), build::node("soft", "Softmax", &["y"], &["z"])],
        &["z"],
    );
    let src = out("verify_softmax.onnx");
    std::fs::write(&src, m.encode_to_vec()).unwrap();
    let dst = out("verify_softmax.expanded.onnx");
    assert_eq!(bin().arg("expand").arg(&src).arg("-o").arg(&dst).status().unwrap().code(), Some(0));
    let r = bin().arg("verify").arg(&src).arg(&dst).arg("--dim").arg("batch=2").output().unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("OK add0 (Add) in main: identical"), "{stdout}");
    assert!(stdout.contains("1 site changed at batch=2, seq=4: 1 identical, 0 differ, 0 not run"), "{stdout}");
    assert!(stdout.contains("whole model: not run (node soft: the executor does not run Softmax)"), "{stdout}");
    // Broken on purpose: the Add takes b where the rewrite expanded it, unexpanded x.
    let mut broken = onnx_bcast::io::proto::ModelProto::decode(std::fs::read(&dst).unwrap().as_slice()).unwrap();
    let g = broken.graph.as_mut().unwrap();
    let add = g.node.iter_mut().find(|n| n.name.as_deref() == Some("add0")).unwrap();
    add.input[1] = "x".into();
    let bad = out("verify_softmax.broken.onnx");
    std::fs::write(&bad, broken.encode_to_vec()).unwrap();
    let r = bin().arg("verify").arg(&src).arg(&bad).output().unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("MISMATCH add0 (Add) in main: output 0:"), "{stdout}");
}

//! The command line as a user meets it: insta snapshots of `infer` and `check` output and of
//! rendered diagnostics, exit codes for files that are not models, the JSON keys of the
//! contract (`../shared/CONTRACT.md`), and `--dim`. The built binary runs with the crate
//! root as its working directory and relative paths, so no snapshot holds an absolute path.

use crate::build;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use onnx_bcast::infer::{infer, Options};
use onnx_bcast::Severity;
use serde_json::Value;

/// What one run of the binary gave.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The whole run as snapshot text.
    fn render(&self) -> String {
        format!("exit code: {}\n--- stdout\n{}--- stderr\n{}", self.code, self.stdout, self.stderr)
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `onnx-bcast ARGS` in the crate root.
fn run<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    let out =
        Command::new(env!("CARGO_BIN_EXE_onnx-bcast")).current_dir(root()).args(args).output().expect("run onnx-bcast");
    let code = out.status.code().expect("onnx-bcast was killed by a signal");
    let run = Run {
        code,
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    };
    assert!(!run.stderr.contains("panicked"), "onnx-bcast panicked:\n{}", run.stderr);
    assert_ne!(code, 101, "onnx-bcast panicked:\n{}", run.stderr);
    run
}

/// The sample models, as paths relative to the crate root, sorted.
fn sample_models() -> Vec<String> {
    let mut models: Vec<String> = std::fs::read_dir(root().join("models"))
        .expect("models/")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
        .map(|p| format!("models/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    models.sort();
    assert!(models.len() >= 5, "{models:?}");
    models
}

/// A scratch directory under the target directory, relative to the crate root when it lies
/// inside it (so paths in output stay short).
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli").join(name);
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

// ---------------------------------------------------------------------------------------------
// Snapshots.

#[test]
fn infer_text_on_every_sample_model() {
    for m in sample_models() {
        let r = run(&["infer", &m]);
        let stem = Path::new(&m).file_stem().unwrap().to_string_lossy().to_string();
        // broken.onnx has an error finding; the others have none.
        assert_eq!(r.code, if stem == "broken" { 1 } else { 0 }, "{m}: {}", r.stderr);
        insta::assert_snapshot!(format!("infer_text_{stem}"), r.render());
    }
}

#[test]
fn infer_json_on_the_broken_model() {
    let r = run(&["infer", "models/broken.onnx", "--format", "json"]);
    assert_eq!(r.code, 1);
    insta::assert_snapshot!("infer_json_broken", r.render());
}

#[test]
fn check_broken_model_in_every_format() {
    for format in ["text", "json", "github"] {
        let r = run(&["check", "models/broken.onnx", "--format", format]);
        assert_eq!(r.code, 1, "{format}");
        insta::assert_snapshot!(format!("check_broken_{format}"), r.render());
    }
}

#[test]
fn check_the_models_directory() {
    // A directory is searched for *.onnx; one broken model makes the exit code 1.
    let r = run(&["check", "models"]);
    assert_eq!(r.code, 1);
    insta::assert_snapshot!("check_models_dir", r.render());
}

#[test]
fn github_annotations_follow_the_contract() {
    let r = run(&["check", "models/broken.onnx", "--format", "github"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stdout);
    let line = lines[0];
    // `::error file=PATH,title=CODE::NODE (OP): MESSAGE`
    let rest = line.strip_prefix("::error file=models/broken.onnx,title=broadcast-incompatible::").expect(line);
    assert!(rest.starts_with("add_bad (Add): "), "{line}");
}

/// Models built in the test whose rendered diagnostics are snapshots: a legacy node without
/// `broadcast=1`, the legacy acceptance errors, an N-ary clash, a symbolic clash (named in the
/// short input's own axes too), a legacy axis outside the shape, a rank clash.
#[test]
fn rendered_diagnostics() {
    let legacy = |name: &str, a: &[i64], b: &[i64], axis: Option<i64>| {
        build::model(
            6,
            vec![build::input("A", a), build::input("B", b)],
            vec![build::legacy(name, "Add", "A", "B", "Y", axis)],
            &["Y"],
        )
    };
    let sum = build::model(
        13,
        vec![build::input("p", &[2i64, 3]), build::input("q", &[1i64, 3]), build::input("r", &[4i64, 3])],
        vec![build::node("sum3", "Sum", &["p", "q", "r"], &["y"])],
        &["y"],
    );
    let symbolic = build::model(
        17,
        vec![build::input("x", &[D::S("batch"), D::S("seq"), D::N(3)]), build::input("w", &[D::N(4)])],
        vec![build::node("", "Mul", &["x", "w"], &["y"])],
        &["y"],
    );
    let prelu = build::model(
        17,
        vec![build::input("x", &[2i64, 3]), build::input("slope", &[2i64, 3, 1])],
        vec![build::node("prelu", "PRelu", &["x", "slope"], &["y"])],
        &["y"],
    );
    // Without broadcast=1 the legacy form takes equal shapes only.
    let legacy_plain = build::model(
        6,
        vec![build::input("A", &[2i64, 3]), build::input("B", &[3i64])],
        vec![build::node("add_plain", "Add", &["A", "B"], &["Y"])],
        &["Y"],
    );
    let cases = [
        ("legacy_no_broadcast", legacy_plain),
        ("legacy_no_axis", legacy("add_no_axis", &[2, 3, 4, 5], &[3, 4], None)),
        ("legacy_axis1", legacy("add_axis1", &[2, 3, 4, 5], &[5], Some(1))),
        ("legacy_axis_outside", legacy("add_far", &[2, 3, 4, 5], &[4, 5], Some(3))),
        ("nary_sum", sum),
        ("symbolic_mul", symbolic),
        ("prelu_rank", prelu),
    ];
    let mut text = String::new();
    for (label, m) in cases {
        let model = build::load(&m);
        let inf = infer(&model, &Options::default());
        let errors: Vec<_> = inf.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
        assert_eq!(errors.len(), 1, "{label}: {:#?}", inf.diagnostics);
        text.push_str(&format!("== {label}\n{}\n\n", errors[0]));
    }
    insta::assert_snapshot!("rendered_diagnostics", text);
}

use build::D;

// ---------------------------------------------------------------------------------------------
// Files that are not models.

/// Deterministic pseudo-random bytes (xorshift), so that a failure can be replayed.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// `check` exits 2 with one line on stderr that names the file and says why.
fn assert_refused(args: &[&str], path: &str) {
    let r = run(args);
    assert_eq!(r.code, 2, "{args:?}: {}", r.render());
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line of reason, got {:?}", r.stderr);
    assert!(lines[0].starts_with("onnx-bcast: "), "{}", lines[0]);
    assert!(lines[0].contains(path), "{args:?}: the reason names {path}: {}", lines[0]);
}

#[test]
fn check_refuses_files_that_are_not_models() {
    let dir = scratch("not_models");
    let rel = |p: &Path| p.strip_prefix(root()).map(Path::to_path_buf).unwrap_or_else(|_| p.to_path_buf());
    // Random bytes, several seeds and lengths.
    for (seed, len) in [(1u64, 1usize), (2, 16), (3, 300), (4, 4096), (5, 65536)] {
        let p = dir.join(format!("noise{seed}.onnx"));
        std::fs::write(&p, noise(seed, len)).unwrap();
        let p = rel(&p).display().to_string();
        assert_refused(&["check", &p], &p);
        assert_refused(&["check", &p, "--format", "json"], &p);
    }
    // An empty file decodes as an empty ModelProto: no graph.
    let empty = dir.join("empty.onnx");
    std::fs::write(&empty, b"").unwrap();
    let empty = rel(&empty).display().to_string();
    assert_refused(&["check", &empty], &empty);
    // A text file.
    assert_refused(&["check", "Cargo.toml"], "Cargo.toml");
    // A directory with no models in it.
    let hollow = scratch("hollow");
    std::fs::write(hollow.join("notes.txt"), b"no models here").unwrap();
    let hollow = rel(&hollow).display().to_string();
    assert_refused(&["check", &hollow], &hollow);
    // A file that does not exist.
    assert_refused(&["check", "models/no_such_model.onnx"], "models/no_such_model.onnx");
    assert_refused(&["infer", "models/no_such_model.onnx"], "models/no_such_model.onnx");
    // A directory given to infer.
    assert_refused(&["infer", "models"], "models");
}

#[test]
fn one_unreadable_model_makes_check_exit_2() {
    // The readable models are still reported; the exit code says the job was not done.
    let r = run(&["check", "models/attention_mask.onnx", "models/no_such_model.onnx", "models/broken.onnx"]);
    assert_eq!(r.code, 2, "{}", r.render());
    assert!(r.stdout.contains("models/attention_mask.onnx: ok"), "{}", r.stdout);
    assert!(r.stdout.contains("add_bad (Add)"), "{}", r.stdout);
}

#[test]
fn damaged_models_never_panic() {
    // Every truncation and many single-byte corruptions of each sample model, straight through
    // the library (decode, infer) and, for a sample of them, through `check`.
    let dir = scratch("damaged");
    let mut cli_runs = 0;
    for m in sample_models() {
        let bytes = std::fs::read(root().join(&m)).unwrap();
        let path = Path::new(&m);
        let mut variants: Vec<Vec<u8>> = (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
        for (k, b) in noise(bytes.len() as u64, 2 * bytes.len()).chunks(2).enumerate() {
            let mut v = bytes.clone();
            let at = (usize::from(b[0]) << 8 | usize::from(b[1])) % v.len();
            v[at] ^= 1 << (k % 8);
            variants.push(v);
        }
        for (k, v) in variants.iter().enumerate() {
            if let Ok(model) = onnx_bcast::io::decode(v, path, None) {
                let _ = infer(&model, &Options::default());
            }
            if k % 97 == 0 {
                let p = dir.join(format!("{}_{k}.onnx", path.file_stem().unwrap().to_string_lossy()));
                std::fs::write(&p, v).unwrap();
                let r = run(&[Path::new("check"), p.as_path()]);
                assert!((0..=2).contains(&r.code), "{}: {}", p.display(), r.render());
                cli_runs += 1;
            }
        }
    }
    assert!(cli_runs > 10);
}

#[test]
fn random_bytes_never_panic_the_library() {
    for seed in 0..2000u64 {
        let bytes = noise(seed, (seed as usize * 7) % 600);
        if let Ok(model) = onnx_bcast::io::decode(&bytes, Path::new("noise.onnx"), None) {
            let _ = infer(&model, &Options::default());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The JSON contract and --dim.

const INFER_KEYS: [&str; 7] = ["model", "ir_version", "opsets", "tensors", "nodes", "diagnostics", "constraints"];

fn assert_dim(d: &Value, what: &str) {
    assert!(d.is_i64() || d.is_string() || d.is_null(), "{what}: a dim is an integer, a string or null: {d}");
}

#[test]
fn infer_json_has_the_contract_keys() {
    for m in sample_models() {
        let r = run(&["infer", &m, "--format", "json"]);
        let doc = r.json();
        let obj = doc.as_object().expect("an object");
        for k in INFER_KEYS {
            assert!(obj.contains_key(k), "{m}: missing key {k}");
        }
        assert_eq!(doc["model"], m.as_str());
        assert!(doc["ir_version"].is_i64(), "{m}");
        assert!(doc["opsets"][""].is_i64(), "{m}: {}", doc["opsets"]);
        let tensors = doc["tensors"].as_object().expect("tensors is an object");
        assert!(!tensors.is_empty());
        for (name, t) in tensors {
            assert!(t["dtype"].is_string() || t["dtype"].is_null(), "{m}: {name}");
            match &t["shape"] {
                Value::Null => {}
                Value::Array(dims) => dims.iter().for_each(|d| assert_dim(d, name)),
                other => panic!("{m}: {name}: shape {other}"),
            }
        }
        for n in doc["nodes"].as_array().expect("nodes is an array") {
            for k in ["name", "op_type", "domain", "graph", "inputs", "outputs"] {
                assert!(n.get(k).is_some(), "{m}: node {n} lacks {k}");
            }
            assert!(n["inputs"].is_array() && n["outputs"].is_array());
        }
        for d in doc["diagnostics"].as_array().expect("diagnostics is an array") {
            for k in ["severity", "code", "node", "op_type", "graph", "axis", "message"] {
                assert!(d.get(k).is_some(), "{m}: diagnostic {d} lacks {k}");
            }
        }
        assert!(doc["constraints"].is_array());
    }
    // The README's example in the contract's own words.
    let doc = run(&["infer", "models/attention_mask.onnx", "--format", "json"]).json();
    assert_eq!(doc["tensors"]["x"], serde_json::json!({"dtype": "float32", "shape": ["batch", 12, "seq", "seq"]}));
    assert_eq!(doc["tensors"]["mask"], serde_json::json!({"dtype": "float32", "shape": ["batch", 1, 1, "seq"]}));
    assert_eq!(doc["opsets"], serde_json::json!({"": 17}));
    assert_eq!(doc["ir_version"], 8);
    let add = doc["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "add_mask").expect("add_mask");
    assert_eq!(
        add,
        &serde_json::json!({"name": "add_mask", "op_type": "Add", "domain": "", "graph": "main",
                            "inputs": ["x", "mask"], "outputs": ["scores"]})
    );
    // A subgraph's node names its graph by path.
    let doc = run(&["infer", "models/subgraph_if.onnx", "--format", "json"]).json();
    let then_add = doc["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "then_add").expect("then_add");
    assert_eq!(then_add["graph"], "if0/then_branch");
    assert_eq!(doc["tensors"]["t"]["shape"], serde_json::json!(["batch", 16]));
}

#[test]
fn infer_json_diagnostics_and_constraints() {
    // The broken model: the diagnostic names the node, the axis and the sizes.
    let doc = run(&["infer", "models/broken.onnx", "--format", "json"]).json();
    let d = &doc["diagnostics"][0];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["code"], "broadcast-incompatible");
    assert_eq!(d["node"], "add_bad");
    assert_eq!(d["op_type"], "Add");
    assert_eq!(d["graph"], "main");
    assert_eq!(d["axis"], 1);
    // A symbol against a known size: the side condition is listed with the node.
    let m = build::model(
        17,
        vec![build::input("x", &[D::S("batch"), D::S("seq")]), build::input("bias", &[D::N(512)])],
        vec![build::node("add_bias", "Add", &["x", "bias"], &["y"])],
        &["y"],
    );
    let dir = scratch("constraints");
    let p = build::write(&m, &dir, "seq.onnx");
    let r = run(&[Path::new("infer"), p.as_path(), Path::new("--format"), Path::new("json")]);
    assert_eq!(r.code, 0, "{}", r.render());
    let doc = r.json();
    assert_eq!(doc["tensors"]["y"]["shape"], serde_json::json!(["batch", 512]));
    let cs = doc["constraints"].as_array().unwrap();
    assert_eq!(cs.len(), 1, "{cs:?}");
    assert_eq!(cs[0]["node"], "add_bias");
    assert_eq!(cs[0]["axis"], 1);
    let cond = cs[0]["condition"].as_str().unwrap();
    assert!(cond.contains("seq") && cond.contains("512"), "{cond}");
    // And in text, under `assumed:`.
    let r = run(&[Path::new("infer"), p.as_path()]);
    let assumed = r.stdout.split("assumed:").nth(1).expect("an assumed: section");
    assert!(assumed.contains("add_bias"), "{}", r.stdout);
}

#[test]
fn dim_binds_a_symbol() {
    let doc = run(&["infer", "models/attention_mask.onnx", "--format", "json", "--dim", "batch=2"]).json();
    assert_eq!(doc["tensors"]["x"]["shape"], serde_json::json!([2, 12, "seq", "seq"]));
    assert_eq!(doc["tensors"]["masked"]["shape"], serde_json::json!([2, 12, "seq", "seq"]));
    let doc =
        run(&["infer", "models/attention_mask.onnx", "--format", "json", "--dim", "batch=2", "--dim", "seq=7"]).json();
    assert_eq!(doc["tensors"]["scores"]["shape"], serde_json::json!([2, 12, 7, 7]));
    assert_eq!(doc["tensors"]["keep"]["shape"], serde_json::json!([1, 1, 7, 7]));
    // Binding batch in broken.onnx fixes x's rows, and the clash at axis 1 stays.
    let r = run(&["check", "models/broken.onnx", "--dim", "batch=2", "--format", "json"]);
    assert_eq!(r.code, 1);
    let r = run(&["infer", "models/broken.onnx", "--dim", "batch=2", "--format", "json"]);
    assert_eq!(r.json()["tensors"]["x"]["shape"], serde_json::json!([2, 3]));
}

/// `--dim` mistakes end the job (exit 2) with a message that says what is wrong: a name no
/// graph input declares (listing the names they do), one name bound to two sizes, a negative
/// size. Binding 0 is a size like any other, with no word about exporters.
#[test]
fn dim_mistakes_are_errors() {
    for cmd in ["infer", "check"] {
        let r = run(&[cmd, "models/attention_mask.onnx", "--dim", "nobody=4"]);
        assert_eq!(r.code, 2, "{}", r.render());
        assert!(r.stdout.is_empty(), "{}", r.render());
        assert!(
            r.stderr.contains("the dim 'nobody' is bound, but no graph input declares it (they declare: batch, seq)"),
            "{}",
            r.render()
        );
        let r = run(&[cmd, "models/attention_mask.onnx", "--dim", "batch=2", "--dim", "batch=3"]);
        assert_eq!(r.code, 2, "{}", r.render());
        assert!(r.stderr.contains("--dim binds 'batch' twice, to 2 and to 3"), "{}", r.render());
        let r = run(&[cmd, "models/attention_mask.onnx", "--dim", "batch=-2"]);
        assert_eq!(r.code, 2, "{}", r.render());
    }
    // The same binding twice is no conflict, spaces around the name or not.
    let r = run(&["check", "models/attention_mask.onnx", "--dim", "batch=2", "--dim", " batch = 2"]);
    assert_eq!(r.code, 0, "{}", r.render());
    // Over several models, a name one of them declares is enough.
    let r = run(&["check", "models/attention_mask.onnx", "models/nary_sum.onnx", "--dim", "seq=4"]);
    assert_eq!(r.code, 0, "{}", r.render());
    // A model with no symbolic input says so.
    let r = run(&["infer", "models/nary_sum.onnx", "--dim", "seq=4"]);
    assert!(r.stderr.contains("the graph inputs declare no symbolic dim"), "{}", r.render());
    // 0 binds the size 0, silently.
    let r = run(&["infer", "models/attention_mask.onnx", "--format", "json", "--dim", "batch=0"]);
    assert_eq!(r.code, 0, "{}", r.render());
    assert_eq!(r.json()["tensors"]["masked"]["shape"], serde_json::json!([0, 12, "seq", "seq"]));
    assert_eq!(r.json()["diagnostics"], serde_json::json!([]));
}

/// A declared `dim_value: 0` is the size 0, as the spec and onnxruntime take it, with a
/// warning that only empty tensors can be fed. The old flag is accepted and changes nothing.
#[test]
fn a_declared_zero_is_the_size_zero() {
    let m =
        build::model(13, vec![build::input("x", &[0i64, 8])], vec![build::node("r", "Relu", &["x"], &["y"])], &["y"]);
    let p = build::write(&m, &scratch("zero_dims"), "empty.onnx");
    for extra in [&[][..], &[Path::new("--zero-dims-are-sizes")][..]] {
        let mut args = vec![Path::new("infer"), p.as_path(), Path::new("--format"), Path::new("json")];
        args.extend(extra);
        let r = run(&args);
        assert_eq!(r.code, 0, "{}", r.render());
        assert_eq!(r.json()["tensors"]["y"]["shape"], serde_json::json!([0, 8]));
        let d = &r.json()["diagnostics"][0];
        assert_eq!(d["code"], "zero-dim-input");
        assert!(d["message"].as_str().unwrap().contains("only empty tensors can be fed"), "{d}");
    }
    // Add([0, 3], [1, 3]) is [0, 3], and [0] + [5] does not broadcast.
    let m = build::model(
        13,
        vec![
            build::input("a", &[0i64, 3]),
            build::input("b", &[1i64, 3]),
            build::input("c", &[0i64]),
            build::input("d", &[5i64]),
        ],
        vec![build::node("ab", "Add", &["a", "b"], &["e"]), build::node("cd", "Add", &["c", "d"], &["f"])],
        &["e", "f"],
    );
    let p = build::write(&m, &scratch("zero_dims"), "zero_add.onnx");
    let r = run(&[Path::new("infer"), p.as_path(), Path::new("--format"), Path::new("json")]);
    assert_eq!(r.code, 1, "{}", r.render());
    assert_eq!(r.json()["tensors"]["e"]["shape"], serde_json::json!([0, 3]));
    let r = run(&[Path::new("check"), p.as_path()]);
    assert_eq!(r.code, 1, "{}", r.render());
    assert!(r.stdout.contains("error[broadcast-incompatible]") && r.stdout.contains("cd (Add)"), "{}", r.render());
}

#[test]
fn bad_dim_exits_2() {
    for bad in ["batch", "batch=", "=3", "batch=-1", "batch=x", "batch=1.5", "batch=99999999999999999999"] {
        for cmd in ["infer", "check"] {
            let r = run(&[cmd, "models/attention_mask.onnx", "--dim", bad]);
            assert_eq!(r.code, 2, "{cmd} --dim {bad}: {}", r.render());
            assert!(r.stdout.is_empty(), "{cmd} --dim {bad}: no results on stdout");
            assert!(r.stderr.contains("--dim"), "{cmd} --dim {bad}: {}", r.stderr);
        }
    }
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        &["infer", "models/attention_mask.onnx", "--format", "github"][..],
        &["infer", "models/attention_mask.onnx", "--format", "yaml"],
        &["check"],
        &["frobnicate"],
    ] {
        let r = run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.render());
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
}

/// A chain of `n` Add nodes written to a scratch folder: long enough at 100k that a pass over
/// it is still running when its processes are looked at.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn long_chain(name: &str, n: usize) -> PathBuf {
    let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    let nodes = (0..names.len())
        .map(|i| {
            let prev = if i == 0 { "x" } else { names[i - 1].as_str() };
            build::node(&format!("n{i}"), "Add", &[prev, "b"], &[names[i].as_str()])
        })
        .collect();
    let last = names.last().map(String::as_str).unwrap_or("x");
    let m = build::model(17, vec![build::input("x", &["batch", "seq"]), build::input("b", &[1i64])], nodes, &[last]);
    build::write(&m, &scratch(name), "chain.onnx")
}

/// Starts `onnx-bcast infer PATH`, its stdout to `stdout` and its stderr piped.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn start_infer(path: &Path, stdout: std::process::Stdio) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_onnx-bcast"))
        .arg("infer")
        .arg(path)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run onnx-bcast")
}

/// Output cut short by its reader (`| head`) ends the pass quietly: no panic, no message, and
/// the exit code the work gives (here 0: the chain is fine).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_reader_that_stops_early_ends_the_pass_quietly() {
    use std::io::Read;
    let path = long_chain("cut_short", 100_000);
    let mut child = start_infer(&path, std::process::Stdio::piped());
    let mut first = [0u8; 16];
    child.stdout.take().expect("stdout").read_exact(&mut first).expect("some output");
    let out = child.wait_with_output().expect("wait for onnx-bcast");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{:?} {stderr}", out.status);
    assert!(stderr.is_empty(), "{stderr}");
}

/// A rewrite's output replaces whatever its path names, by a rename: a file, a FIFO (which the
/// save must neither block on nor write into) or a symbolic link (replaced itself; the file
/// it points to is left alone). The same bytes each time as into a fresh path.
#[cfg(unix)]
#[test]
fn a_rewrite_replaces_whatever_its_output_path_names() {
    let dir = scratch("replaced");
    let model = "models/attention_mask.onnx";
    let fresh = dir.join("fresh.onnx");
    let _ = std::fs::remove_file(&fresh);
    assert_eq!(run(&["annotate", model, "-o", fresh.to_str().unwrap()]).code, 0);
    let want = std::fs::read(&fresh).expect("the fresh output");
    let pointed = dir.join("pointed.txt");
    std::fs::write(&pointed, b"left alone").unwrap();
    for kind in ["file", "fifo", "symlink"] {
        let out = dir.join(format!("{kind}.onnx"));
        let _ = std::fs::remove_file(&out);
        match kind {
            "file" => std::fs::write(&out, b"old contents, longer than nothing").unwrap(),
            "fifo" => {
                let c = std::ffi::CString::new(out.to_str().unwrap()).unwrap();
                // SAFETY: creates a FIFO at a path given as a NUL-terminated string.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
            }
            _ => std::os::unix::fs::symlink(&pointed, &out).unwrap(),
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_onnx-bcast"))
            .current_dir(root())
            .args(["annotate", model, "-o", out.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run onnx-bcast");
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("poll onnx-bcast") {
                break s;
            }
            if start.elapsed().as_secs() > 30 {
                let _ = child.kill();
                panic!("{kind}: annotate did not finish");
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(status.code(), Some(0), "{kind}");
        let meta = std::fs::symlink_metadata(&out).unwrap();
        assert!(meta.file_type().is_file(), "{kind}: not replaced by a file");
        assert_eq!(std::fs::read(&out).unwrap(), want, "{kind}");
    }
    assert_eq!(std::fs::read(&pointed).unwrap(), b"left alone");
}

/// `check` says what it assumed: a model that runs only for some sizes does not look clean.
/// In text, after the findings, one line per side condition with its node; in GitHub's
/// format, one `::notice` each.
#[test]
fn check_shows_what_it_assumed() {
    let m = build::model(
        13,
        vec![build::input("a", &["n"]), build::input("b", &["m"])],
        vec![build::node("add_ab", "Add", &["a", "b"], &["c"])],
        &["c"],
    );
    let p = build::write(&m, &scratch("assumed"), "two_symbols.onnx");
    let r = run(&[Path::new("check"), p.as_path()]);
    assert_eq!(r.code, 0, "{}", r.render());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].ends_with(": ok"), "{}", r.stdout);
    assert_eq!(lines[1], "  assumed:", "{}", r.stdout);
    assert_eq!(lines[2], "    m, n are equal or 1   (needed by add_ab (Add) at axis 0, main)", "{}", r.stdout);
    // A condition over two dims is a relation of the contract.
    assert_eq!(lines[3], "  contract:", "{}", r.stdout);
    assert_eq!(lines[4], "    m, n: m, n are equal or 1   (needed by add_ab)", "{}", r.stdout);
    let r = run(&[Path::new("check"), p.as_path(), Path::new("--format"), Path::new("github")]);
    let file = p.display();
    assert_eq!(
        r.stdout.trim(),
        format!(
            "::notice file={file},title=assumed::add_ab (Add): m, n are equal or 1 (axis 0, main)\n\
             ::notice file={file},title=contract::m, n: m, n are equal or 1   (needed by add_ab)"
        )
    );
}

/// `--help` matches behaviour: every command names the exit codes, every argument has a line
/// of help, and `--format` offers only the values the command takes.
#[test]
fn help_names_exit_codes_arguments_and_formats() {
    let commands = ["infer", "check", "annotate", "expand", "implicit", "run", "test", "verify", "bench"];
    let top = run(&["--help"]);
    assert!(top.stdout.contains("Exit codes:\n  0  done"), "{}", top.stdout);
    for cmd in commands {
        let r = run(&[cmd, "--help"]);
        assert_eq!(r.code, 0, "{}", r.render());
        assert!(r.stdout.contains("Exit codes:\n  0  done"), "{cmd}: {}", r.stdout);
        // In the short help every argument and option is one line: its name, then its help.
        let short = run(&[cmd, "-h"]).stdout;
        for line in short.lines().filter(|l| l.starts_with("  ") && !l.starts_with("   ")) {
            let line = line.trim();
            if line.starts_with(['<', '-']) {
                let (_, help) = line.split_once("  ").unwrap_or((line, ""));
                assert!(!help.trim().is_empty(), "{cmd}: no help for {line:?}");
            }
        }
    }
    for (cmd, values) in [("infer", "text, json]"), ("check", "text, json, github, sarif]"), ("bench", "text, json]")] {
        let short = run(&[cmd, "-h"]).stdout;
        assert!(short.contains(&format!("[possible values: {values}")), "{cmd}: {short}");
    }
    let r = run(&["infer", "models/nary_sum.onnx", "--format", "github"]);
    assert_eq!(r.code, 2, "{}", r.render());
}

/// Windows that do not fit (issue 25, item 3), as onnxruntime 1.32 treats them: a convolution
/// whose window is larger than its padded input is an error naming the node, the axis, the
/// input's size and the window; a pooling that onnxruntime runs is a warning naming the spec's
/// size and onnxruntime's; reflect padding wider than its axis and a ConvTranspose whose
/// pads eat its output are errors; an empty Resize output is a warning. Symbolic sizes give
/// side conditions instead.
#[test]
fn windows_that_do_not_fit() {
    use build::{input, model, node, with_ints, with_str};
    let dir = scratch("windows");
    let check = |m: &onnx_bcast::io::proto::ModelProto, name: &str| {
        let p = build::write(m, &dir, name);
        let r = run(&[Path::new("check"), p.as_path()]);
        let inf = run(&[Path::new("infer"), p.as_path(), Path::new("--format"), Path::new("json")]);
        (r, inf.json())
    };
    // Conv, kernel 3 over 2x2: onnxruntime says "Invalid input shape".
    let conv = model(
        17,
        vec![input("x", &[2i64, 3, 2, 2]), input("w", &[32i64, 3, 3, 3])],
        vec![node("conv0", "Conv", &["x", "w"], &["y"])],
        &["y"],
    );
    let (r, _) = check(&conv, "conv.onnx");
    assert_eq!(r.code, 1, "{}", r.render());
    assert!(
        r.stdout.contains(
            "error[window-too-large]: Conv: at axis 2 the window (3) is larger than the padded input (2); onnxruntime refuses such a node"
        ) && r.stdout.contains("conv0 (Conv)"),
        "{}",
        r.render()
    );
    // With padding it fits, and the padded size is spelled out when it does not.
    let padded = |p: i64| {
        model(
            17,
            vec![input("x", &[1i64, 1, 2]), input("w", &[1i64, 1, 5])],
            vec![with_ints(node("conv1", "Conv", &["x", "w"], &["y"]), "pads", &[p, p])],
            &["y"],
        )
    };
    let (r, doc) = check(&padded(2), "conv_padded.onnx");
    assert_eq!(r.code, 0, "{}", r.render());
    assert_eq!(doc["tensors"]["y"]["shape"], serde_json::json!([1, 1, 2]));
    let (r, _) = check(&padded(1), "conv_short.onnx");
    assert!(r.stdout.contains("the window (5) is larger than the padded input (4 = 2 + pads 1, 1)"), "{}", r.render());
    // AveragePool kernel 3, stride 3 over 2 (PaddleOCR's v4 recognizer at small heights): 0 by
    // the spec's floor, 1 under onnxruntime, which runs it. A warning, and onnxruntime's 1.
    let pool = |k: i64, s: i64, n: i64| {
        let p =
            with_ints(with_ints(node("pool0", "AveragePool", &["x"], &["y"]), "kernel_shape", &[k]), "strides", &[s]);
        model(12, vec![input("x", &[1i64, 1, n])], vec![p], &["y"])
    };
    let (r, doc) = check(&pool(3, 3, 2), "pool_runs.onnx");
    assert_eq!(r.code, 0, "{}", r.render());
    assert!(
        r.stdout.contains("warning[window-too-large]: AveragePool: at axis 2 the window (3) is larger than the padded input (2): by the spec's floor the output has size 0 there, by onnxruntime's integer division 1, which is what runs"),
        "{}",
        r.render()
    );
    assert_eq!(doc["tensors"]["y"]["shape"], serde_json::json!([1, 1, 1]));
    // Stride 1 over 2: both give 0, an empty output; over 1, onnxruntime refuses.
    let (r, doc) = check(&pool(3, 1, 2), "pool_empty.onnx");
    assert_eq!(r.code, 0, "{}", r.render());
    assert!(r.stdout.contains("the output is empty at axis 2"), "{}", r.render());
    assert_eq!(doc["tensors"]["y"]["shape"], serde_json::json!([1, 1, 0]));
    let (r, _) = check(&pool(3, 1, 1), "pool_refused.onnx");
    assert_eq!(r.code, 1, "{}", r.render());
    assert!(r.stdout.contains("error[window-too-large]: AveragePool: at axis 2"), "{}", r.render());
    // Symbolic: the window fitting is a side condition.
    let sym = model(
        17,
        vec![input("x", &[D::N(1), D::N(3), D::S("h"), D::S("w")]), input("k", &[8i64, 3, 7, 7])],
        vec![with_ints(node("stem", "Conv", &["x", "k"], &["y"]), "pads", &[1, 1, 1, 1])],
        &["y"],
    );
    let (r, _) = check(&sym, "conv_symbolic.onnx");
    assert_eq!(r.code, 0, "{}", r.render());
    assert!(r.stdout.contains("h >= 5   (needed by stem (Conv) at axis 2, main)"), "{}", r.render());
    assert!(r.stdout.contains("w >= 5   (needed by stem (Conv) at axis 3, main)"), "{}", r.render());
    // Reflect padding: at most size-1 a side ("Pad reflect: pre-pad (4) exceeds maximum allowed (2)").
    let pad = |mode: &str, p: i64, n: i64| {
        let node = with_ints(with_str(node("pad0", "Pad", &["x"], &["y"]), "mode", mode), "pads", &[0, p, 0, 0]);
        model(10, vec![input("x", &[1i64, n])], vec![node], &["y"])
    };
    let (r, _) = check(&pad("reflect", 4, 3), "reflect.onnx");
    assert_eq!(r.code, 1, "{}", r.render());
    assert!(
        r.stdout
            .contains("Pad (reflect): a pad of 4 exceeds the 2 elements axis 1 can reflect; onnxruntime refuses it"),
        "{}",
        r.render()
    );
    assert_eq!(check(&pad("reflect", 2, 3), "reflect_ok.onnx").0.code, 0);
    assert_eq!(check(&pad("edge", 4, 3), "edge.onnx").0.code, 0);
    assert_eq!(check(&pad("edge", 1, 0), "edge_empty.onnx").0.code, 1);
    assert_eq!(check(&pad("constant", 1, 0), "constant_empty.onnx").0.code, 0);
    // ConvTranspose whose pads leave nothing.
    let ct = model(
        17,
        vec![input("x", &[1i64, 1, 2]), input("w", &[1i64, 1, 3])],
        vec![with_ints(node("up", "ConvTranspose", &["x", "w"], &["y"]), "pads", &[3, 3])],
        &["y"],
    );
    let (r, _) = check(&ct, "convt.onnx");
    assert_eq!(r.code, 1, "{}", r.render());
    assert!(r.stdout.contains("ConvTranspose: at axis 2 the pads leave an output of size -2"), "{}", r.render());
    // Resize: scale 0.1 on 3 is an empty tensor under onnxruntime, a warning; a scale of 0 is
    // an error (the spec: "greater than 0"; onnxruntime: "Scale value should be greater than
    // 0"), as is Upsample's 0.5 ("greater than or equal to 1" in both).
    let resize = |op: &str, opset: i64, scale: f32| {
        let s = build::floats("s", &[2], &[1.0, scale]);
        let inputs: &[&str] = if op == "Upsample" { &["x", "s"] } else { &["x", "", "s"] };
        let mut m = model(opset, vec![input("x", &[1i64, 3])], vec![node("rs", op, inputs, &["y"])], &["y"]);
        m.graph.as_mut().unwrap().initializer.push(s);
        m
    };
    let (r, doc) = check(&resize("Resize", 13, 0.1), "resize_empty.onnx");
    assert_eq!(r.code, 0, "{}", r.render());
    assert!(
        r.stdout.contains("warning[resize-empty]") && r.stdout.contains("comes out empty (floor(3 x"),
        "{}",
        r.render()
    );
    assert_eq!(doc["tensors"]["y"]["shape"], serde_json::json!([1, 0]));
    let (r, _) = check(&resize("Resize", 13, 0.0), "resize_zero.onnx");
    assert_eq!(r.code, 1, "{}", r.render());
    assert!(r.stdout.contains("Resize: scale 0 at axis 1; scales must be above 0"), "{}", r.render());
    let (r, _) = check(&resize("Upsample", 9, 0.5), "upsample_half.onnx");
    assert_eq!(r.code, 1, "{}", r.render());
    assert!(r.stdout.contains("Upsample: scale 0.5 at axis 1; scales must be 1 or more"), "{}", r.render());
}

/// One default opset for every part: a model that imports none is read at the default
/// domain's version 21 by inference and by the executor alike (the executor took opset 1, so
/// `run` refused the `Add([2,3],[3])` that `infer` accepted).
#[test]
fn a_model_without_opsets_is_read_alike_everywhere() {
    use onnx_bcast::exec::{npy, HostTensor};
    let dir = scratch("no_opset");
    let mut m = build::binary(13, "add0", "Add", &[2, 3], &[3]);
    m.opset_import.clear();
    let p = build::write(&m, &dir, "m.onnx");
    let r = run(&[Path::new("infer"), p.as_path()]);
    assert_eq!(r.code, 0, "{}", r.render());
    assert!(r.stdout.contains("[2, 3]") && r.stdout.contains("no-opset"), "{}", r.render());
    let (a, b) = (dir.join("a.npy"), dir.join("b.npy"));
    npy::write(&a, &HostTensor::from_vec(vec![2, 3], vec![1f32; 6]).unwrap()).unwrap();
    npy::write(&b, &HostTensor::from_vec(vec![3], vec![2f32; 3]).unwrap()).unwrap();
    let (ia, ib) = (format!("a={}", a.display()), format!("b={}", b.display()));
    let out = dir.join("out");
    let r = run(&[
        Path::new("run"),
        p.as_path(),
        Path::new("--input"),
        Path::new(&ia),
        Path::new("--input"),
        Path::new(&ib),
        Path::new("--output-dir"),
        out.as_path(),
    ]);
    assert_eq!(r.code, 0, "{}", r.render());
    let y = npy::read(&out.join("y.npy"), 1 << 20).unwrap();
    assert_eq!(y.shape, vec![2, 3]);
    assert_eq!(y.elems::<f32>().unwrap(), &[3f32; 6]);
}

// ---------------------------------------------------------------------------------------------
// Input contracts (`contract` in the JSON, `--require`, `unsatisfiable`).

/// x [1, 1, h] through two MaxPools (kernel 2, stride 2), the second doubled by a Concat
/// and added to the first. onnxruntime divides pooling sizes toward zero, so a pooling runs on
/// an input smaller than its window; run for h = 1..=40 (onnxruntime 1.32) it accepts 1, 2, 3,
/// 4, 5, 8, 9, 12, 13, ...: 1 to 3, then h mod 4 of 0 or 1; h = 6 fails at `sum` (3 and 2).
fn pooled_model() -> onnx_bcast::io::proto::ModelProto {
    use build::{input, model, node, with_int, with_ints};
    let pool = |name: &str, i: &str, o: &str| {
        with_ints(with_ints(node(name, "MaxPool", &[i], &[o]), "kernel_shape", &[2]), "strides", &[2])
    };
    model(
        17,
        vec![input("x", &[D::N(1), D::N(1), D::S("h")])],
        vec![
            pool("pool1", "x", "a"),
            pool("pool2", "a", "b"),
            with_int(node("twice", "Concat", &["b", "b"], &["c"]), "axis", 2),
            node("sum", "Add", &["a", "c"], &["y"]),
        ],
        &["y"],
    )
}

#[test]
fn contracts_say_which_sizes_run() {
    let p = build::write(&pooled_model(), &scratch("contract"), "pooled.onnx");
    let r = run(&[OsStr::new("infer"), p.as_os_str(), OsStr::new("--format"), OsStr::new("json")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let h = &doc["contract"]["dims"]["h"];
    assert_eq!(h["min"], 1, "{h}");
    assert_eq!(h["max"], Value::Null);
    assert_eq!(h["modulus"], 4);
    assert_eq!(h["residues"], serde_json::json!([0, 1]));
    assert_eq!(h["except"], serde_json::json!([]));
    assert_eq!(h["also"], serde_json::json!([2, 3]));
    assert_eq!(h["exact"], true);
    assert_eq!(h["counterexample"]["value"], 6);
    assert_eq!(h["counterexample"]["node"], "sum");
    // Where each size `sum` gets at h = 6 came from.
    assert_eq!(
        h["counterexample"]["provenance"][1],
        "'c': x axis 2 = 6 -> pool1 (MaxPool) 3 -> pool2 (MaxPool) 1 -> twice (Concat) 2"
    );
    let text = run(&[OsStr::new("check"), p.as_os_str()]);
    assert!(text.stdout.contains("h: a multiple of 4, or 1 more than one, or 2, 3"), "{}", text.stdout);
    // --require: every size accepted passes; one refused fails, naming it.
    let ok = run(&[OsStr::new("check"), p.as_os_str(), OsStr::new("--require"), OsStr::new("h=4..=64/4")]);
    assert_eq!(ok.code, 0, "{}", ok.stdout);
    let bad = run(&[OsStr::new("check"), p.as_os_str(), OsStr::new("--require"), OsStr::new("h=1..=8")]);
    assert_eq!(bad.code, 1, "{}", bad.stdout);
    assert!(bad.stdout.contains("require-failed") && bad.stdout.contains("h=6"), "{}", bad.stdout);
    let unknown = run(&[OsStr::new("check"), p.as_os_str(), OsStr::new("--require"), OsStr::new("w=1,2")]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    let spec = run(&[OsStr::new("check"), p.as_os_str(), OsStr::new("--require"), OsStr::new("h=9..=1")]);
    assert_eq!(spec.code, 2, "{}", spec.stderr);
}

/// A size traced back through a Transpose comes from the axis the permutation moved, not
/// from the same index: y = x^T + pos, with x [batch, 8, t] and pos [16, 8], fails at t = 2,
/// which is x's axis 2 (axis 1 holds the 8). Without `perm` the axes are reversed.
#[test]
fn provenance_follows_a_transpose() {
    use build::{input, model, node, with_ints};
    for (shape, perm, pos, want) in [
        (vec![D::S("batch"), D::N(8), D::S("t")], Some(&[0, 2, 1][..]), vec![16, 8], "'p': x axis 2 = 2"),
        (vec![D::S("t"), D::N(8)], None, vec![8, 16], "'p': x axis 0 = 2"),
    ] {
        let transpose = node("tr", "Transpose", &["x"], &["p"]);
        let transpose = match perm {
            Some(perm) => with_ints(transpose, "perm", perm),
            None => transpose,
        };
        let mut m =
            model(17, vec![input("x", &shape)], vec![transpose, node("sum", "Add", &["p", "pos"], &["y"])], &["y"]);
        m.graph.as_mut().unwrap().initializer.push(build::floats("pos", &pos, &vec![0.0; 128]));
        let p = build::write(&m, &scratch("transposed"), "transposed.onnx");
        let r = run(&[OsStr::new("infer"), p.as_os_str(), OsStr::new("--format"), OsStr::new("json")]);
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        let ce = &doc["contract"]["dims"]["t"]["counterexample"];
        assert_eq!((&ce["value"], &ce["provenance"][0]), (&serde_json::json!(2), &serde_json::json!(want)), "{doc}");
    }
}

/// A Reshape to [-1, 6] of x [batch, 12] gives [batch*2, 6], added to y [7, 6]: batch*2 must
/// be 1 or 7, which no integer is.
#[test]
fn a_condition_no_size_satisfies_is_an_error() {
    use build::{input, model, node};
    use onnx_bcast::io::proto as onnx;
    let shape = onnx::TensorProto {
        name: Some("shape".into()),
        data_type: Some(7),
        dims: vec![2],
        int64_data: vec![-1, 6],
        ..Default::default()
    };
    let mut m = model(
        17,
        vec![input("x", &[D::S("batch"), D::N(12)]), input("y", &[7, 6])],
        vec![node("reshape", "Reshape", &["x", "shape"], &["r"]), node("add", "Add", &["r", "y"], &["z"])],
        &["z"],
    );
    m.graph.as_mut().unwrap().initializer.push(shape);
    let p = build::write(&m, &scratch("contract"), "unsat.onnx");
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("error[unsatisfiable]") && r.stdout.contains("add (Add)"), "{}", r.stdout);
    // --deny-warnings: a model with only a warning fails.
    let warn = build::write(&build::binary(17, "n", "Add", &[0, 3], &[1, 3]), &scratch("contract"), "warn.onnx");
    assert_eq!(run(&[OsStr::new("check"), warn.as_os_str()]).code, 0);
    assert_eq!(run(&[OsStr::new("check"), warn.as_os_str(), OsStr::new("--deny-warnings")]).code, 1);
}

/// x [BATCH, H] reshaped to [BATCH, -1, K]: H must be a multiple of K.
fn windowed(batch: D, h: &'static str, k: i64) -> onnx_bcast::io::proto::ModelProto {
    use build::{input, model, node};
    let shape = onnx_bcast::io::proto::TensorProto {
        name: Some("shape".into()),
        data_type: Some(7),
        dims: vec![3],
        int64_data: vec![0, -1, k],
        ..Default::default()
    };
    let mut m = model(
        17,
        vec![input("x", &[batch, D::S(h)])],
        vec![node("windows", "Reshape", &["x", "shape"], &["y"])],
        &["y"],
    );
    m.graph.as_mut().unwrap().initializer.push(shape);
    m
}

#[test]
fn diff_finds_what_callers_would_meet() {
    let dir = scratch("diff");
    let base = build::write(&windowed(D::S("batch"), "h", 32), &dir, "base.onnx");
    let with = |name: &str, m| build::write(&m, &dir, name);
    let diff = |new: &Path| run(&[Path::new("diff"), base.as_path(), new]);
    // The contract of the base: h a multiple of 32.
    let r = run(&[Path::new("check"), base.as_path()]);
    assert!(r.stdout.contains("h: a multiple of 32"), "{}", r.stdout);
    // Two saves of one model: nothing.
    let saved = dir.join("saved.onnx");
    assert_eq!(run(&[Path::new("annotate"), base.as_path(), Path::new("-o"), saved.as_path()]).code, 0);
    let r = diff(&saved);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.ends_with("no differences\n"), "{}", r.stdout);
    // A batch that became fixed.
    let r = diff(&with("fixed.onnx", windowed(D::N(2), "h", 32)));
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("error[dim-fixed]: input 'x' axis 0 was 'batch'") && r.stdout.contains("fixed to 2"),
        "{}",
        r.stdout
    );
    // A height that must now be a multiple of 64: 32 was accepted and is not.
    let r = diff(&with("narrow.onnx", windowed(D::S("batch"), "h", 64)));
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("error[contract-narrowed]: 'h' no longer accepts 32"), "{}", r.stdout);
    // A renamed symbol; its contract is compared under the new name.
    let r = diff(&with("renamed.onnx", windowed(D::S("batch"), "height", 32)));
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("error[symbol-renamed]: input 'x' axis 1 was 'h', is now 'height'"), "{}", r.stdout);
    assert!(!r.stdout.contains("contract-narrowed"), "{}", r.stdout);
    // JSON and GitHub formats.
    let r =
        run(&[Path::new("diff"), base.as_path(), &dir.join("fixed.onnx"), Path::new("--format"), Path::new("json")]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["diagnostics"][0]["code"], "dim-fixed");
    let r =
        run(&[Path::new("diff"), base.as_path(), &dir.join("fixed.onnx"), Path::new("--format"), Path::new("github")]);
    assert!(r.stdout.starts_with("::error file="), "{}", r.stdout);
}

/// An equal Split of a symbolic axis needs a multiple of its parts; with `num_outputs`
/// (opset 18) the last part takes what is left, which must not be negative.
#[test]
fn splits_say_which_sizes_divide() {
    use build::{input, model, node, with_int};
    let split = with_int(node("thirds", "Split", &["x"], &["a", "b", "c"]), "axis", 1);
    let m = model(13, vec![input("x", &[D::S("batch"), D::S("n")])], vec![split], &["a", "b", "c"]);
    let p = build::write(&m, &scratch("split"), "thirds.onnx");
    let r = run(&[OsStr::new("infer"), p.as_os_str()]);
    assert!(r.stdout.contains("a       float32  [batch, floor(n/3)]"), "{}", r.stdout);
    assert!(r.stdout.contains("n: a multiple of 3   (fails at n=1: thirds (Split)"), "{}", r.stdout);
    let split = with_int(with_int(node("parts", "Split", &["x"], &["a", "b", "c", "d"]), "axis", 1), "num_outputs", 4);
    let m = model(18, vec![input("x", &[D::S("batch"), D::S("n")])], vec![split], &["a", "b", "c", "d"]);
    let p = build::write(&m, &scratch("split"), "parts.onnx");
    let r = run(&[OsStr::new("infer"), p.as_os_str(), OsStr::new("--format"), OsStr::new("json")]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    // ceil(n/4)*3 <= n: n = 1, 2 and 5 leave the last part negative (2+2+2 > 5); onnxruntime
    // 1.32 refuses just these of 1..=12 ("Split sizes would produce a negative final split").
    let n = &doc["contract"]["dims"]["n"];
    let accepted: Vec<i64> = (1..=12)
        .filter(|v| {
            let c = n;
            let list = |k: &str| c[k].as_array().unwrap().iter().any(|x| x == v);
            list("also")
                || (*v >= c["min"].as_i64().unwrap()
                    && c["residues"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|r| r.as_i64() == Some(v % c["modulus"].as_i64().unwrap()))
                    && !list("except"))
        })
        .collect();
    assert_eq!(accepted, vec![3, 4, 6, 7, 8, 9, 10, 11, 12], "{n}");
}

/// Ops of a domain no built-in rule covers: shapes flow through a rule declared as data, and a
/// broadcast conflict behind it is found; without the rule each op is listed once.
#[test]
fn rules_declared_as_data_carry_shapes_through_custom_ops() {
    use build::{input, model, node};
    let custom = |name: &str, i: &str, o: &str| onnx_bcast::io::proto::NodeProto {
        domain: Some("my.ops".into()),
        ..node(name, "Scale2", &[i], &[o])
    };
    let mut m = model(
        17,
        vec![input("x", &[D::S("batch"), D::N(8)]), input("z", &[D::S("batch"), D::N(7)])],
        vec![custom("s1", "x", "a"), custom("s2", "a", "b"), node("add", "Add", &["b", "z"], &["y"])],
        &["y"],
    );
    m.opset_import.push(onnx_bcast::io::proto::OperatorSetIdProto { domain: Some("my.ops".into()), version: Some(1) });
    let dir = scratch("op_rules");
    let p = build::write(&m, &dir, "custom.onnx");
    // Without a rule: one warning for the op, with its count; the Add cannot be checked.
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.stdout.matches("warning[unknown-op]").count(), 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("no shape rule for my.ops.Scale2; its outputs are unknown (2 nodes use it"),
        "{}",
        r.stdout
    );
    // With the rule: the shapes flow through both nodes and the Add's conflict is found.
    let rules = dir.join("rules.json");
    std::fs::write(
        &rules,
        r#"{"rules": [
  {"domain": "my.ops", "op": "Scale2", "outputs": [{"shape": {"same": 0}, "type": {"input": 0}}]}
]}"#,
    )
    .unwrap();
    let r = run(&[OsStr::new("check"), p.as_os_str(), OsStr::new("--op-rules"), rules.as_os_str()]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("error[broadcast-incompatible]") && r.stdout.contains("'b' has size 8 and 'z' has size 7"),
        "{}",
        r.stdout
    );
    // The size's origin runs through the custom nodes back to x.
    assert!(r.stdout.contains("= input 0: x axis 1 = 8"), "{}", r.stdout);
    // The same from the environment.
    let out = Command::new(env!("CARGO_BIN_EXE_onnx-bcast"))
        .args([OsStr::new("infer"), p.as_os_str()])
        .env("ONNX_BCAST_OP_RULES", &rules)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("b       float32  [batch, 8]"));
    // A mistake in the file is exit 2, naming the file and the line.
    std::fs::write(&rules, "{\"rules\": [\n  {\"op\": \"Scale2\", \"outputs\": [{\"shape\": {\"sideways\": 0}}]}\n]}")
        .unwrap();
    let r = run(&[OsStr::new("check"), p.as_os_str(), OsStr::new("--op-rules"), rules.as_os_str()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("rules.json:2:"), "{}", r.stderr);
}

/// A rules file's size or a node's attribute read as one that is negative gave tensors negative
/// dims (`[-9223372036854775808, 3]` went on into Tile, Concat and Flatten): a negative size in
/// the file is exit 2 naming it, and one from an attribute is the node's error.
#[test]
fn declared_rules_refuse_negative_sizes() {
    use build::{input, model, node, with_int};
    let custom = |n: i64| onnx_bcast::io::proto::NodeProto {
        domain: Some("my.ops".into()),
        ..with_int(node("c", "Sized", &["x"], &["y"]), "n", n)
    };
    let dir = scratch("op_rules_negative");
    let rules = dir.join("rules.json");
    let write_rules = |shape: &str| {
        let text =
            format!(r#"{{"rules": [{{"domain": "my.ops", "op": "Sized", "outputs": [{{"shape": {shape}}}]}}]}}"#);
        std::fs::write(&rules, text).unwrap();
    };
    let check = |n: i64| {
        let mut m = model(17, vec![input("x", &[2i64, 3])], vec![custom(n)], &["y"]);
        m.opset_import
            .push(onnx_bcast::io::proto::OperatorSetIdProto { domain: Some("my.ops".into()), version: Some(1) });
        let p = build::write(&m, &dir, "sized.onnx");
        run(&[OsStr::new("infer"), p.as_os_str(), OsStr::new("--op-rules"), rules.as_os_str()])
    };
    for shape in [r#"{"dims": [-9223372036854775808, 3]}"#, r#"{"same": 0, "set": [[0, -1]]}"#] {
        write_rules(shape);
        let r = check(1);
        assert_eq!(r.code, 2, "{shape}: {}", r.stdout);
        assert!(
            r.stderr.contains("rules.json: my.ops.Sized: the size ") && r.stderr.contains(" is negative"),
            "{}",
            r.stderr
        );
    }
    write_rules(r#"{"dims": [{"attr": "n"}, 3]}"#);
    let r = check(-5);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("Sized: attribute 'n' gives the negative size -5"), "{}", r.stdout);
    assert!(!r.stdout.contains("[-5, 3]"), "{}", r.stdout);
    let r = check(5);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("[5, 3]"), "{}", r.stdout);
}

/// The shipped contrib rules parse and cover what they claim.
#[test]
fn the_shipped_contrib_rules_parse() {
    let rules = onnx_bcast::ops::OpRules::builtin();
    assert!(rules.has("com.microsoft", "Gelu"));
}

/// onnxruntime's contrib ops, on shapes onnxruntime 1.32 itself infers for them (one-node
/// models, as read back from an onnxruntime session): Attention with a past, FusedMatMul with
/// transB, SkipLayerNormalization's mean, MatMulNBits.
#[test]
fn contrib_ops_have_onnxruntimes_shapes() {
    use build::{input, model, node, with_int};
    use onnx_bcast::io::proto as onnx;
    let ms = |n: onnx::NodeProto| onnx::NodeProto { domain: Some("com.microsoft".into()), ..n };
    let nodes = vec![
        ms(with_int(node("att", "Attention", &["x", "w", "bias", "", "past"], &["a", "present"]), "num_heads", 4)),
        ms(with_int(node("fmm", "FusedMatMul", &["p", "q"], &["f"]), "transB", 1)),
        ms(node("sln", "SkipLayerNormalization", &["s", "s", "g"], &["sy", "mean"])),
        ms(with_int(
            with_int(with_int(node("nb", "MatMulNBits", &["s", "qb", "qs"], &["nbo"]), "K", 16), "N", 32),
            "block_size",
            16,
        )),
    ];
    let mut m = model(
        17,
        vec![
            input("x", &[2i64, 5, 16]),
            input("w", &[16i64, 48]),
            input("bias", &[48i64]),
            input("past", &[2i64, 2, 4, 2, 4]),
            input("p", &[3i64, 2, 5, 4]),
            input("q", &[2i64, 6, 4]),
            input("s", &[D::S("batch"), D::S("seq"), D::N(16)]),
            input("g", &[16i64]),
            // B packed as bytes (onnxruntime refuses a float B).
            build::typed("qb", onnx::tensor_proto::DataType::Uint8, &[32i64, 1, 8]),
            input("qs", &[32i64]),
        ],
        nodes,
        &["a", "present", "f", "sy", "mean", "nbo"],
    );
    m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft".into()), version: Some(1) });
    let p = build::write(&m, &scratch("contrib"), "contrib.onnx");
    let r = run(&[OsStr::new("infer"), p.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    for want in [
        "a        float32  [2, 5, 16]",
        "present  float32  [2, 2, 4, 7, 4]",
        "f        float32  [3, 2, 5, 6]",
        "sy       float32  [batch, seq, 16]",
        "mean     float32  [batch, seq, 1]",
        "nbo      float32  [batch, seq, 32]",
    ] {
        assert!(r.stdout.contains(want), "{want}\n{}", r.stdout);
    }
}

/// Contrib attention that onnxruntime 1.32 refuses at run time was inferred as if it ran:
/// Attention weights whose rows are not the input's hidden size ("Input 1 dimension 0 should
/// have same length as dimension 2 of input 0"), a bias unlike the weight's columns, heads
/// that do not divide the hidden size ("hidden_size should be divisible by num_heads");
/// MultiHeadAttention keys of another hidden size than the query ("Input 'query' and 'key'
/// shall have same dim 2") and values of another length than the keys ("shall have same dim
/// 1 (kv_sequence_length)").
#[test]
fn contrib_attention_checks_what_onnxruntime_checks() {
    use build::{input, model, node, with_int};
    use onnx_bcast::io::proto as onnx;
    let infer = |op: &str, heads: i64, shapes: &[(&str, &[i64])]| {
        let names: Vec<&str> = shapes.iter().map(|(n, _)| *n).collect();
        // num_heads only for the attention ops: onnxruntime refuses an attribute an op lacks.
        let n = node("a", op, &names, &["y"]);
        let n = if heads > 0 { with_int(n, "num_heads", heads) } else { n };
        let n = onnx::NodeProto { domain: Some("com.microsoft".into()), ..n };
        let mut m = model(17, shapes.iter().map(|(n, s)| input(n, s)).collect(), vec![n], &["y"]);
        m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft".into()), version: Some(1) });
        let inf = onnx_bcast::infer::infer(&build::load(&m), &Default::default());
        inf.diagnostics.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
    };
    let att = |w: &[i64], b: &[i64], heads| infer("Attention", heads, &[("x", &[2, 3, 8]), ("w", w), ("b", b)]);
    assert!(att(&[8, 24], &[24], 2).is_empty());
    assert_eq!(
        att(&[6, 24], &[24], 2),
        ["Attention: input 1 must be of shape [8, 24]: sizes 8 and 6 differ at axis 0"]
    );
    assert_eq!(att(&[8, 24], &[18], 2), ["Attention: input 2 must be of shape [24]: sizes 24 and 18 differ at axis 0"]);
    assert_eq!(att(&[8, 24], &[24], 5), ["Attention: num_heads 5 does not divide the hidden size 8"]);
    // "Q, K and V hidden sizes must be in [1, INT_MAX]".
    assert_eq!(att(&[8, 0], &[0], 2).last().map(String::as_str), Some("Attention: a hidden size of 0"));
    let mha = |k: &[i64], v: &[i64]| infer("MultiHeadAttention", 2, &[("q", &[2, 3, 8]), ("k", k), ("v", v)]);
    assert!(mha(&[2, 5, 8], &[2, 5, 8]).is_empty());
    assert!(mha(&[2, 5, 6], &[2, 5, 8])[0].contains("input 1 must be of shape [2, 5, 8]"));
    assert!(mha(&[2, 5, 8], &[2, 4, 8])[0].contains("input 2 must be of shape [2, 5, 8]"));
    // num_heads splits the value's hidden size too (onnxruntime fails in a reshape).
    assert!(mha(&[2, 5, 8], &[2, 5, 6]).is_empty());
    assert_eq!(
        mha(&[2, 5, 8], &[2, 5, 7]),
        ["MultiHeadAttention: num_heads 2 does not divide input 2's hidden size 7"]
    );
    // A hidden size of 0 to split kills onnxruntime 1.32 (SIGFPE); an empty batch or
    // sequence runs.
    let last = |m: Vec<String>| m.last().cloned().unwrap_or_default();
    assert_eq!(last(mha(&[2, 5, 8], &[2, 5, 0])), "MultiHeadAttention: input 2 has a hidden size of 0");
    let q0 = infer("MultiHeadAttention", 2, &[("q", &[2, 3, 0]), ("k", &[2, 5, 0]), ("v", &[2, 5, 6])]);
    assert_eq!(last(q0), "MultiHeadAttention: input 0 has a hidden size of 0");
    let seq0 = infer("MultiHeadAttention", 2, &[("q", &[2, 0, 8]), ("k", &[2, 0, 8]), ("v", &[2, 0, 6])]);
    assert!(seq0.iter().all(|m| m.contains("declares size 0")), "{seq0:?}");
    // BiasGelu's and FastGelu's bias is a vector of the input's last size ("Input 1 is
    // expected to have 1 dimensions, got 2", "Input 1 dimension 0 should have same length as
    // the last dimension of input 0"); it broadcast.
    for op in ["BiasGelu", "FastGelu"] {
        let gelu = |b: &[i64]| infer(op, 0, &[("x", &[2, 3, 4]), ("b", b)]);
        assert!(gelu(&[4]).is_empty(), "{op}");
        for b in [&[1][..], &[3, 4]] {
            assert!(
                gelu(b).first().is_some_and(|m| m.contains("input 1 must be of shape [4]")),
                "{op} {b:?}: {:?}",
                gelu(b)
            );
        }
    }
}

/// More contrib shapes onnxruntime 1.32 refuses, each probed there: QLinearAdd's scales and
/// zero points of rank 1 ("Scale and Zero-point must be a scalar"); RotaryEmbedding's caches
/// of two shapes ("Inputs 'cos_cache' and 'sin_cache' are expected to have the same shape")
/// or rank 3, and the position ids, cache widths and sequence lengths it checks; MultiHeadAttention's key and value of two ranks ("Expect rank of key and value
/// be same") or, 4-D, two shapes ("shall have same shape"); Attention's mask_index of another length or shape ("with 1D data shall have
/// length of batch_size or 2 * batch_size or 3 * batch_size + 2"), a [B, 1] dummy mask
/// running; QGemm's inner sizes and quantization parameters ("zero point of input a must be a
/// scalar or 1D tensor of size 1"), DynamicQuantizeMatMul's, MatMulIntegerToFloat's and
/// QLinearGlobalAveragePool's, QLinearSigmoid's and QLinearLeakyRelu's; GroupQueryAttention's
/// key, value, past and seqlens_k; MatMulNBits' packed weight and scales.
#[test]
fn contrib_ops_check_shapes_as_onnxruntime_does() {
    use build::{model, node, typed, with_int};
    use onnx_bcast::io::proto::{self as onnx, tensor_proto::DataType};
    let errors = |n: onnx::NodeProto, inputs: &[(&str, &[i64], DataType)]| {
        let names: Vec<&str> = inputs.iter().map(|(n, ..)| *n).collect();
        let n = onnx::NodeProto {
            domain: Some("com.microsoft".into()),
            input: names.iter().map(|s| s.to_string()).collect(),
            ..n
        };
        let inputs = inputs.iter().map(|(name, s, t)| typed(name, *t, s)).collect();
        let mut m = model(17, inputs, vec![n], &["y"]);
        m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft".into()), version: Some(1) });
        let inf = onnx_bcast::infer::infer(&build::load(&m), &Default::default());
        inf.diagnostics.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
    };
    let (f, u8, i32, i64) = (DataType::Float, DataType::Uint8, DataType::Int32, DataType::Int64);
    let qadd = |scale: &[i64]| {
        let names = [("a", &[2, 3][..], u8), ("as", scale, f), ("az", &[], u8), ("b", &[3], u8), ("bs", &[], f)];
        let rest = [("bz", &[][..], u8), ("cs", &[], f), ("cz", &[], u8)];
        errors(node("q", "QLinearAdd", &[], &["y"]), &[&names[..], &rest[..]].concat())
    };
    assert!(qadd(&[]).is_empty());
    assert_eq!(qadd(&[1]), ["QLinearAdd: input 1 has rank 1, not one of [0]"]);
    // A declared broadcast of inputs 0 and 3 names them, not the first two inputs.
    let names = [("a", &[2, 3][..], u8), ("as", &[], f), ("az", &[], u8), ("b", &[4], u8), ("bs", &[], f)];
    let rest = [("bz", &[][..], u8), ("cs", &[], f), ("cz", &[], u8)];
    let clash = errors(node("q", "QLinearAdd", &[], &["y"]), &[&names[..], &rest[..]].concat());
    assert!(clash.len() == 1 && clash[0].contains("'a' has size 3 and 'b' has size 4"), "{clash:?}");
    let rotary = |cos: &[i64], sin: &[i64]| {
        let n = with_int(node("r", "RotaryEmbedding", &[], &["y"]), "num_heads", 2);
        errors(n, &[("x", &[2, 3, 8], f), ("p", &[2, 3], i64), ("c", cos, f), ("s", sin, f)])
    };
    assert!(rotary(&[16, 2], &[16, 2]).is_empty());
    assert!(
        rotary(&[16, 2], &[16, 3])[0].contains("input 3 must be of shape [16, 2]"),
        "{:?}",
        rotary(&[16, 2], &[16, 3])
    );
    assert_eq!(rotary(&[1, 16, 2], &[1, 16, 2])[0], "RotaryEmbedding: cos_cache has rank 3, not 2");
    // position_ids an offset ([] or [1]; "Input 'position_ids' is expected to have 0, 1, or 2
    // dimensions, got 1" for [3]) or [B, S] ("Input 'position_ids' dimension 1 should be of
    // size sequence_length"), caches of half the head size ("Input 'cos_cache' dimension 1 should be
    // same as head_size / 2"), as many positions as the sequence ("Updating cos_cache and
    // sin_cache in RotaryEmbedding is not currently supported").
    let rotary_of = |x: &[i64], p: &[i64], cache: &[i64]| {
        let n = with_int(node("r", "RotaryEmbedding", &[], &["y"]), "num_heads", 2);
        errors(n, &[("x", x, f), ("p", p, i64), ("c", cache, f), ("s", cache, f)])
    };
    assert!(rotary_of(&[2, 2, 16, 4], &[2, 16], &[16, 2]).is_empty());
    assert!(rotary_of(&[2, 3, 8], &[2, 4], &[16, 2])[0].contains("input 1 must be of shape [2, 3]"));
    assert!(rotary_of(&[2, 3, 8], &[1], &[16, 2]).is_empty() && rotary_of(&[2, 3, 8], &[], &[16, 2]).is_empty());
    assert!(rotary_of(&[2, 3, 8], &[3], &[16, 2])[0].contains("input 1 must be of shape [1]"));
    assert_eq!(
        rotary_of(&[2, 3, 8], &[2, 3], &[16, 3]),
        ["RotaryEmbedding: cos_cache holds 3 per position, not half the rotary size 4"]
    );
    assert_eq!(
        rotary_of(&[2, 3, 9], &[2, 3], &[16, 2]),
        ["RotaryEmbedding: num_heads 2 does not divide the hidden size 9"]
    );
    assert_eq!(
        rotary_of(&[2, 20, 8], &[2, 20], &[16, 2]),
        ["RotaryEmbedding: a sequence of 20 is longer than the caches' 16 positions"]
    );
    let mha = |k: &[i64], v: &[i64]| {
        let n = with_int(node("m", "MultiHeadAttention", &[], &["y"]), "num_heads", 2);
        errors(n, &[("q", &[2, 3, 8], f), ("k", k, f), ("v", v, f)])
    };
    assert!(mha(&[2, 2, 5, 4], &[2, 2, 5, 4]).is_empty());
    assert!(mha(&[2, 2, 5, 4], &[2, 2, 5, 3])[0].contains("input 2 must be of shape [2, 2, 5, 4]"));
    assert_eq!(
        mha(&[1, 2, 5, 8], &[2, 5, 6]),
        ["MultiHeadAttention: key and value have ranks 4 and 3, not one of 3 or 4"]
    );
    let att = |mask: &[i64]| {
        let n = with_int(node("a", "Attention", &[], &["y"]), "num_heads", 2);
        errors(n, &[("x", &[2, 3, 8], f), ("w", &[8, 24], f), ("b", &[24], f), ("m", mask, i32)])
    };
    for ok in [&[2][..], &[4], &[8], &[2, 3], &[2, 1], &[1, 1], &[2, 3, 3]] {
        assert!(att(ok).is_empty(), "{ok:?}: {:?}", att(ok));
    }
    assert_eq!(att(&[3]), ["Attention: a 1-D mask_index of 3 for a batch of 2"]);
    assert!(att(&[2, 4])[0].contains("input 3 must be of shape [2, 3]"), "{:?}", att(&[2, 4]));
    let qgemm = |b: &[i64], az: &[i64], bs: &[i64], bz: &[i64]| {
        let ins = [("a", &[2, 4][..], u8), ("as", &[], f), ("az", az, u8), ("b", b, u8), ("bs", bs, f), ("bz", bz, u8)];
        errors(node("g", "QGemm", &[], &["y"]), &ins)
    };
    assert!(qgemm(&[4, 3], &[], &[], &[]).is_empty());
    assert!(qgemm(&[4, 3], &[1], &[3], &[3]).is_empty());
    assert_eq!(qgemm(&[1, 3], &[], &[], &[]), ["QGemm: A's inner size 4 and B's 1 differ"]);
    assert_eq!(qgemm(&[4, 3], &[2], &[], &[]), ["QGemm: input 2 of shape [2] is not one value (a scalar or [1])"]);
    assert!(
        qgemm(&[4, 3], &[], &[2], &[2])[0].contains("input 4 must be of shape [3]"),
        "{:?}",
        qgemm(&[4, 3], &[], &[2], &[2])
    );
    assert_eq!(qgemm(&[4, 3], &[], &[], &[1]), ["QGemm: B's scale [] and zero point [1] differ in shape"]);
    // DynamicQuantizeMatMul: B's zero point one value or one per column ("Per-column
    // quantization parameter of batched matrix should have same dimension as the matrix"), the
    // scale stretching to the output (a [2, 1] runs), the bias one per column ("bias tensor's
    // element count must equal B's last dimension"), which onnxruntime does not read when the
    // output is empty.
    let dq = |b: &[i64], scale: &[i64], zp: &[i64], bias: &[i64]| {
        let i8 = DataType::Int8;
        let ins = [("a", &[2, 4][..], f), ("b", b, i8), ("bs", scale, f), ("bz", zp, i8), ("bias", bias, f)];
        errors(node("d", "DynamicQuantizeMatMul", &[], &["y"]), &ins)
    };
    for (b, scale, zp, bias) in [
        (&[4, 3][..], &[1][..], &[1][..], &[3][..]),
        (&[4, 3], &[3], &[3], &[3]),
        (&[4, 3], &[1, 3], &[1, 3], &[3]),
        (&[4, 3], &[2, 1], &[1], &[3]),
        (&[4, 0], &[1], &[1], &[3]),
    ] {
        // (An input declared [4, 0] gets the zero-dim-input warning, no more.)
        let found = dq(b, scale, zp, bias);
        assert!(
            found.iter().all(|m| m.starts_with("input 'b' declares size 0")),
            "{b:?} {scale:?} {bias:?}: {found:?}"
        );
    }
    assert_eq!(
        dq(&[4, 3], &[1], &[4], &[3]),
        ["DynamicQuantizeMatMul: input 3 of shape [4] is neither one value nor one per column of b"]
    );
    assert_eq!(
        dq(&[4, 3], &[4], &[1], &[3]),
        ["DynamicQuantizeMatMul: input 2 of shape [4] does not stretch to the output [2, 3]"]
    );
    assert!(
        dq(&[4, 3], &[1], &[1], &[1])[0].contains("input 4 must be of shape [3]"),
        "{:?}",
        dq(&[4, 3], &[1], &[1], &[1])
    );
    // MatMulIntegerToFloat multiplies the output by its scales, which stretch to it
    // ("Attempting to broadcast an axis by a dimension other than 1"); its B zero point is one
    // value or one per column.
    let mi = |b_scale: &[i64], b_zp: &[i64]| {
        let ins = [("a", &[2, 4][..], u8), ("b", &[4, 3], u8), ("as", &[1], f), ("bs", b_scale, f), ("az", &[1], u8)];
        errors(node("m", "MatMulIntegerToFloat", &[], &["y"]), &[&ins[..], &[("bz", b_zp, u8)]].concat())
    };
    for ok in [&[1][..], &[3], &[2, 1], &[2, 3]] {
        assert!(mi(ok, &[1]).is_empty(), "{ok:?}: {:?}", mi(ok, &[1]));
    }
    assert_eq!(mi(&[4], &[1]), ["MatMulIntegerToFloat: input 3 of shape [4] does not stretch to the output [2, 3]"]);
    assert_eq!(
        mi(&[1], &[2, 1]),
        ["MatMulIntegerToFloat: input 5 of shape [2, 1] is neither one value nor one per column of b"]
    );
    // GroupQueryAttention (4 heads, 2 kv heads of 8): key and value [B, S, 16] with the query's
    // S without a past ("query and key must have the same sequence length when past_key is not
    // provided"), past_key [B, 2, P, 8] ("Input 'past_key' shall have kv_num_heads"), seqlens_k
    // one per batch ("seqlens_k must have batch_size (2) elements, got 3").
    let gqa = |k: &[i64], past: &[i64], seqlens: &[i64]| {
        let n = with_int(with_int(node("g", "GroupQueryAttention", &[], &["y"]), "num_heads", 4), "kv_num_heads", 2);
        let slots = ["q", "k", "v", if past.is_empty() { "" } else { "pk" }, if past.is_empty() { "" } else { "pv" }];
        let n = onnx::NodeProto {
            domain: Some("com.microsoft".into()),
            input: slots.iter().chain(&["sl", "tot"]).map(|s| s.to_string()).collect(),
            ..n
        };
        let mut ins = vec![typed("q", f, &[2i64, 1, 32]), typed("k", f, k), typed("v", f, k)];
        if !past.is_empty() {
            ins.extend([typed("pk", f, past), typed("pv", f, past)]);
        }
        ins.extend([typed("sl", i32, seqlens), typed::<i64>("tot", i32, &[])]);
        let mut m = model(17, ins, vec![n], &["y"]);
        m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft".into()), version: Some(1) });
        let inf = onnx_bcast::infer::infer(&build::load(&m), &Default::default());
        inf.diagnostics.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
    };
    assert!(gqa(&[2, 1, 16], &[], &[2]).is_empty());
    assert!(gqa(&[2, 1, 16], &[2, 2, 3, 8], &[2]).is_empty());
    for (k, past, seqlens, text) in [
        (&[2, 1, 8][..], &[][..], &[2][..], "input 1 must be of shape [2, 1, 16]: sizes 16 and 8 differ at axis 2"),
        (&[2, 2, 16], &[], &[2], "input 1 must be of shape [2, 1, 16]: sizes 1 and 2 differ at axis 1"),
        (&[2, 1, 16], &[2, 1, 3, 8], &[2], "input 3 must be of shape [2, 2, 3, 8]: sizes 2 and 1 differ at axis 1"),
        (&[2, 1, 16], &[], &[3], "input 5 must be of shape [2]: sizes 2 and 3 differ at axis 0"),
    ] {
        let found = gqa(k, past, seqlens);
        assert!(found.first().is_some_and(|m| m.contains(text)), "{k:?} {past:?} {seqlens:?}: {found:?}");
    }
    // MatMulNBits (K 40, N 8, 4 bits in blocks of 32: 2 blocks of 16 bytes per column):
    // "Input 'quantized_weight' is expected to have shape {8,2,16}", "Input 'scales' is
    // expected to have shape {16} or {8,2}", "bias shape must be [N]".
    let nbits = |a: &[i64], b: &[i64], scales: &[i64]| {
        let n = with_int(with_int(node("q", "MatMulNBits", &[], &["y"]), "K", 40), "N", 8);
        let n = with_int(with_int(n, "bits", 4), "block_size", 32);
        errors(n, &[("a", a, f), ("b", b, u8), ("s", scales, f)])
    };
    assert!(nbits(&[2, 3, 40], &[8, 2, 16], &[16]).is_empty() && nbits(&[2, 40], &[8, 2, 16], &[8, 2]).is_empty());
    assert_eq!(nbits(&[2, 32], &[8, 2, 16], &[16]), ["MatMulNBits: A's last size 32 is not K = 40"]);
    assert!(nbits(&[2, 40], &[8, 1, 16], &[16])[0].contains("input 1 must be of shape [8, 2, 16]"));
    assert!(nbits(&[2, 40], &[8, 2, 16], &[8])[0].contains("input 2 must be of shape [16]"));
    // QLinearSigmoid and QLinearLeakyRelu: scales and zero points one value each
    // (qlinear_lookup_table.cc refuses a [2] x scale).
    for op in ["QLinearSigmoid", "QLinearLeakyRelu"] {
        let lookup = |scale: &[i64]| {
            let ins = [("x", &[2, 3][..], u8), ("xs", scale, f), ("xz", &[], u8), ("ys", &[], f), ("yz", &[1], u8)];
            errors(node("l", op, &[], &["y"]), &ins)
        };
        assert!(lookup(&[1]).is_empty(), "{op}");
        assert_eq!(lookup(&[2]), [format!("{op}: input 1 of shape [2] is not one value (a scalar or [1])")]);
    }
    let gap = |scale: &[i64]| {
        let n = with_int(node("p", "QLinearGlobalAveragePool", &[], &["y"]), "channels_last", 0);
        errors(n, &[("x", &[1, 2, 3, 3], u8), ("xs", scale, f), ("xz", &[], u8), ("ys", &[], f), ("yz", &[], u8)])
    };
    assert!(gap(&[1]).is_empty());
    assert_eq!(gap(&[1, 1]), ["QLinearGlobalAveragePool: input 1 of shape [1, 1] is not one value (a scalar or [1])"]);
}

/// Attributes from the model are bad input too: a GroupQueryAttention whose head counts
/// overflow is an invalid node, not a panic.
#[test]
fn contrib_attributes_that_overflow_are_findings() {
    use build::{input, model, node, typed, with_int};
    use onnx_bcast::io::proto::tensor_proto::DataType;
    let gqa = with_int(
        // The 7 input slots onnxruntime's schema wants, the optional ones absent.
        with_int(node("gqa", "GroupQueryAttention", &["q", "", "", "", "", "sl", "t"], &["o"]), "num_heads", 2),
        "kv_num_heads",
        i64::MAX,
    );
    let mut m = model(
        17,
        vec![
            input("q", &[2i64, 5, 16]),
            typed("sl", DataType::Int32, &[2i64]),
            typed("t", DataType::Int32, &[] as &[i64]),
        ],
        vec![onnx_bcast::io::proto::NodeProto { domain: Some("com.microsoft".into()), ..gqa }],
        &["o"],
    );
    m.opset_import
        .push(onnx_bcast::io::proto::OperatorSetIdProto { domain: Some("com.microsoft".into()), version: Some(1) });
    let p = build::write(&m, &scratch("contrib"), "gqa_overflow.onnx");
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("error[invalid-node]") && r.stdout.contains("kv_num_heads"), "{}", r.stdout);
}

/// `docs/cli.md` lists every finding code with the sentence `diag::Code` gives it (the rules
/// of the SARIF report), and no other; no two codes share a name.
#[test]
fn the_docs_list_every_finding_code() {
    use onnx_bcast::Code;
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md")).unwrap();
    let section = doc.split("## Finding codes").nth(1).expect("a Finding codes section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
    let want: Vec<String> = Code::ALL.iter().map(|c| format!("| `{}` | {} |", c.as_str(), c.description())).collect();
    assert_eq!(rows, want);
    let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), Code::ALL.len());
}

/// A declared rule may name the shapes some inputs must have, in the vocabulary of its
/// outputs: a known size that differs is the node's error, a symbolic one a condition. The
/// shipped SkipLayerNormalization rule says gamma, beta and bias are vectors of the input's
/// last size, where onnxruntime 1.32 refuses others ("Last dimension of gamma and input does
/// not match"); it took any. Its skip ends in the input's last two sizes.
#[test]
fn declared_rules_check_input_shapes() {
    use build::{input, model, node};
    use onnx_bcast::io::proto as onnx;
    let text = r#"{"rules": [{"domain": "my.ops", "op": "Scale",
        "inputs": [{"input": 1, "shape": {"dims": [{"input": 0, "dim": -1}]}}],
        "outputs": [{"shape": {"same": 0}, "type": {"input": 0}}]}]}"#;
    let rules = onnx_bcast::ops::OpRules::parse(text, "rules.json").unwrap();
    let options = onnx_bcast::infer::Options { op_rules: Some(std::sync::Arc::new(rules)), ..Default::default() };
    let infer = |domain: &str, op: &str, inputs: Vec<onnx::ValueInfoProto>| {
        let names: Vec<String> = inputs.iter().map(|i| i.name.clone().unwrap_or_default()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let n = onnx::NodeProto { domain: Some(domain.into()), ..node("n", op, &names, &["y"]) };
        let mut m = model(17, inputs, vec![n], &["y"]);
        m.opset_import.push(onnx::OperatorSetIdProto { domain: Some(domain.into()), version: Some(1) });
        onnx_bcast::infer::infer(&build::load(&m), &options)
    };
    let scale = |x: &[D], s: i64| infer("my.ops", "Scale", vec![input("x", x), input("s", &[s])]);
    assert!(scale(&[D::N(2), D::N(8)], 8).diagnostics.is_empty());
    let inf = scale(&[D::N(2), D::N(8)], 6);
    assert_eq!(inf.diagnostics[0].message, "Scale: input 1 must be of shape [8]: sizes 8 and 6 differ at axis 0");
    let inf = scale(&[D::N(2), D::S("h")], 8);
    assert!(
        inf.diagnostics.is_empty() && inf.contract.accepts("h", 8) && !inf.contract.accepts("h", 7),
        "{:?}",
        inf.contract
    );
    let sln_of = |skip: &[i64], gamma: i64| {
        let x = || input("x", &[2i64, 3, 8]);
        infer("com.microsoft", "SkipLayerNormalization", vec![x(), input("skip", skip), input("g", &[gamma])])
    };
    let sln = |gamma: i64| sln_of(&[2, 3, 8], gamma);
    assert!(sln(8).diagnostics.is_empty());
    assert!(sln(6).diagnostics[0].message.contains("input 2 must be of shape [8]"), "{:?}", sln(6).diagnostics);
    // The skip ends in the input's last two sizes, at rank 2 or 3 (onnxruntime: "last two
    // dimensions of skip needs to be same as input", "skip is expected to have 3 or 2
    // dimensions"); its batch onnxruntime does not check.
    for skip in [&[2, 3, 8][..], &[1, 3, 8], &[3, 8], &[5, 3, 8]] {
        assert!(sln_of(skip, 8).diagnostics.is_empty(), "{skip:?}: {:?}", sln_of(skip, 8).diagnostics);
    }
    for (skip, text) in [
        (&[2, 1, 8][..], "input 1 must end in [3, 8]: sizes 3 and 1 differ at axis 0"),
        (&[8], "input 1 has rank 1, not one of [2, 3]"),
        (&[1, 2, 3, 8], "input 1 has rank 4, not one of [2, 3]"),
    ] {
        let inf = sln_of(skip, 8);
        assert_eq!(inf.diagnostics.len(), 1, "{skip:?}: {:?}", inf.diagnostics);
        assert!(inf.diagnostics[0].message.contains(text), "{skip:?}: {}", inf.diagnostics[0].message);
    }
}

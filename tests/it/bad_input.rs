//! The bad-input suite: hostile and broken models run through the built `onnx-bcast` binary,
//! each with the exit code and message it must give; never a panic or a signal, never more
//! than 2 GiB of (virtual) memory or 10 s. Also the library's defences that the CLI does not
//! reach yet: external data, lossy and overwriting saves, atomic writes, determinism.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use onnx_bcast::io::proto::{self as onnx, tensor_shape_proto, type_proto};
use onnx_bcast::io::{self, SaveOptions};
use onnx_bcast::shape::Dim;
use onnx_bcast::Error;
use prost::Message;

const BIN: &str = env!("CARGO_BIN_EXE_onnx-bcast");

// ---------------------------------------------------------------------------------------------
// Running the binary under limits.

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the binary with `args` under a 2 GiB address-space limit and a 10 s deadline, and
/// checks that it exited by itself (no signal, no panic).
fn run_env<S: AsRef<OsStr>>(args: &[S], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg("ulimit -v 2097152 && exec \"$0\" \"$@\"").arg(BIN);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn the binary");
    // Drain the pipes on threads so that a large output cannot block the child.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut s).ok();
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut s).ok();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(10) {
            child.kill().ok();
            child.wait().ok();
            panic!("onnx-bcast {:?} took over 10 s", args.iter().map(|a| a.as_ref().to_owned()).collect::<Vec<_>>());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = String::from_utf8_lossy(&t_out.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap()).into_owned();
    let Some(code) = status.code() else { panic!("killed by a signal: {status:?}\nstderr: {stderr}") };
    assert!(!stderr.contains("panicked"), "a panic:\n{stderr}");
    assert!(!stderr.contains("memory allocation"), "ran out of memory:\n{stderr}");
    Run { code, stdout, stderr }
}

fn run<S: AsRef<OsStr>>(args: &[S]) -> Run {
    run_env(args, &[])
}

/// `check PATH`: asserts the exit code and that stdout (findings) or stderr (errors) holds every
/// one of `needles`.
fn expect_check(path: &Path, code: i32, needles: &[&str]) -> Run {
    let r = run(&[OsStr::new("check"), path.as_os_str()]);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert_eq!(r.code, code, "{}: exit code\n{all}", path.display());
    for n in needles {
        assert!(all.contains(n), "{}: '{n}' missing from\n{all}", path.display());
    }
    r
}

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad_input").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---------------------------------------------------------------------------------------------
// Building models.

fn dim(v: i64) -> tensor_shape_proto::Dimension {
    tensor_shape_proto::Dimension {
        value: Some(tensor_shape_proto::dimension::Value::DimValue(v)),
        ..Default::default()
    }
}

fn tensor_type(elem: i32, dims: &[i64]) -> onnx::TypeProto {
    onnx::TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem),
            shape: Some(onnx::TensorShapeProto { dim: dims.iter().map(|d| dim(*d)).collect() }),
        })),
        ..Default::default()
    }
}

fn vi(name: &str, dims: &[i64]) -> onnx::ValueInfoProto {
    onnx::ValueInfoProto { name: Some(name.into()), r#type: Some(tensor_type(1, dims)), ..Default::default() }
}

/// A float tensor of one dim named `param`.
fn sym_vi(name: &str, param: &str) -> onnx::ValueInfoProto {
    let mut v = vi(name, &[1]);
    if let Some(type_proto::Value::TensorType(t)) = v.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        if let Some(shape) = t.shape.as_mut() {
            shape.dim[0].value = Some(tensor_shape_proto::dimension::Value::DimParam(param.into()));
        }
    }
    v
}

/// An `ints` attribute.
fn ints_attr(name: &str, v: &[i64]) -> onnx::AttributeProto {
    onnx::AttributeProto {
        name: Some(name.into()),
        r#type: Some(onnx::attribute_proto::AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    }
}

/// The int64 initializer `c` holding 0..1024.
fn iota_1024() -> onnx::TensorProto {
    onnx::TensorProto {
        name: Some("c".into()),
        data_type: Some(7),
        dims: vec![1024],
        int64_data: (0..1024).collect(),
        ..Default::default()
    }
}

fn node(name: &str, op: &str, inputs: &[&str], outputs: &[&str]) -> onnx::NodeProto {
    onnx::NodeProto {
        name: Some(name.into()),
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn model(graph: onnx::GraphProto) -> onnx::ModelProto {
    onnx::ModelProto {
        ir_version: Some(8),
        opset_import: vec![onnx::OperatorSetIdProto { domain: Some(String::new()), version: Some(17) }],
        graph: Some(graph),
        ..Default::default()
    }
}

fn graph(
    nodes: Vec<onnx::NodeProto>,
    inputs: Vec<onnx::ValueInfoProto>,
    outputs: Vec<onnx::ValueInfoProto>,
) -> onnx::GraphProto {
    onnx::GraphProto { name: Some("g".into()), node: nodes, input: inputs, output: outputs, ..Default::default() }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `y = x + w` with the initializer `w` as given.
fn with_initializer(w: onnx::TensorProto) -> onnx::ModelProto {
    let mut g = graph(vec![node("add", "Add", &["x", "w"], &["y"])], vec![vi("x", &[2, 3])], vec![vi("y", &[])]);
    g.output[0].r#type = None;
    g.initializer.push(w);
    model(g)
}

fn float_tensor(name: &str, dims: &[i64]) -> onnx::TensorProto {
    onnx::TensorProto { name: Some(name.into()), data_type: Some(1), dims: dims.to_vec(), ..Default::default() }
}

/// A small deterministic generator for random bytes.
fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 56) as u8
        })
        .collect()
}

fn sample_model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/attention_mask.onnx")
}

// ---------------------------------------------------------------------------------------------
// Unreadable and malformed files.

#[test]
fn random_bytes_are_refused_cleanly() {
    let dir = scratch("random");
    for seed in 0..24u64 {
        let len = [1, 7, 64, 1000, 65536][seed as usize % 5];
        let p = write(&dir, &format!("r{seed}.onnx"), &random_bytes(seed, len));
        let r = run(&[OsStr::new("check"), p.as_os_str()]);
        // Random bytes are almost never a model: a decode error, or a message with no graph.
        assert_eq!(r.code, 2, "{}: {}", p.display(), r.stderr);
        assert!(
            r.stderr.contains("not a valid ONNX model") || r.stderr.contains("the model has no graph"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains(&format!("r{seed}.onnx")), "names the file: {}", r.stderr);
    }
}

#[test]
fn every_truncation_of_a_model_is_handled() {
    let bytes = std::fs::read(sample_model()).unwrap();
    // Every prefix in-process: an error or a model, never a panic.
    let mut refused = 0;
    for n in 0..bytes.len() {
        match io::decode(&bytes[..n], Path::new("t.onnx"), None) {
            Ok(m) => {
                let _ = onnx_bcast::infer::infer(&m, &Default::default());
            }
            Err(_) => refused += 1,
        }
    }
    assert!(refused > bytes.len() / 2, "most prefixes are not valid models ({refused} of {})", bytes.len());
    // And a sample through the binary.
    let dir = scratch("truncated");
    for n in (0..bytes.len()).step_by(37) {
        let p = write(&dir, &format!("t{n}.onnx"), &bytes[..n]);
        let r = run(&[OsStr::new("infer"), p.as_os_str()]);
        assert!(r.code == 2 || r.code == 0 || r.code == 1, "{n}: {}", r.stderr);
        if r.code == 2 {
            assert!(r.stderr.contains(&format!("t{n}.onnx")), "{}", r.stderr);
        }
    }
    // The empty file is an empty message: no graph.
    let p = write(&dir, "empty.onnx", b"");
    let r = run(&[OsStr::new("infer"), p.as_os_str()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("empty.onnx: the model has no graph"), "{}", r.stderr);
}

#[test]
fn missing_files_and_folders_are_errors() {
    let dir = scratch("missing");
    let r = run(&[OsStr::new("infer"), dir.join("nope.onnx").as_os_str()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nope.onnx") && r.stderr.contains("No such file"), "{}", r.stderr);
    let r = run(&[OsStr::new("infer"), dir.as_os_str()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("is a directory"), "{}", r.stderr);
    // A device that never ends is not read.
    #[cfg(unix)]
    {
        let r = run(&["infer", "/dev/zero"]);
        assert_eq!(r.code, 2);
        assert!(r.stderr.contains("/dev/zero: not a valid ONNX model: not a regular file"), "{}", r.stderr);
    }
}

#[test]
fn files_over_two_gib_are_refused_without_reading() {
    let dir = scratch("huge");
    let p = dir.join("huge.onnx");
    // A sparse file: takes no disk, and reading it would take far over 10 s and 2 GiB.
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(io::MAX_MESSAGE + 1).unwrap();
    drop(f);
    let r = expect_check(&p, 2, &["huge.onnx", "2147483648 bytes", "external data"]);
    assert!(r.stderr.contains("2 GiB"), "{}", r.stderr);
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn the_size_limit_is_adjustable() {
    let p = sample_model();
    let size = std::fs::metadata(&p).unwrap().len();
    let limit = (size - 1).to_string();
    let r = run_env(&[OsStr::new("check"), p.as_os_str()], &[("ONNX_BCAST_MAX_BYTES", &limit)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains(&format!("{size} bytes is over the limit of {limit} bytes")), "{}", r.stderr);
    let r = run_env(&[OsStr::new("check"), p.as_os_str()], &[("ONNX_BCAST_MAX_BYTES", &size.to_string())]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_env(&[OsStr::new("check"), p.as_os_str()], &[("ONNX_BCAST_MAX_BYTES", "lots")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("ONNX_BCAST_MAX_BYTES='lots' is not a non-negative integer"), "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------------
// Nesting bombs and big graphs.

/// A model whose main graph holds an `If` whose branch holds an `If`, `depth` levels deep.
/// Built as bytes, level by level, so that no recursive encoder (or drop) runs in the test.
fn nested_ifs(depth: usize) -> Vec<u8> {
    let mut inner = graph(vec![node("leaf", "Identity", &["x"], &["y"])], vec![], vec![vi("y", &[])]);
    inner.output[0].r#type = None;
    let mut bytes = inner.encode_to_vec();
    for level in (0..depth).rev() {
        let attr = onnx::AttributeProto { name: Some("then_branch".into()), r#type: Some(5), ..Default::default() };
        let attr = nest(attr.encode_to_vec(), 6, &bytes);
        let n = nest(node(&format!("if{level}"), "If", &["c"], &["y"]).encode_to_vec(), 5, &attr);
        let mut g = onnx::GraphProto { name: Some(format!("g{level}")), ..Default::default() };
        g.output.push(onnx::ValueInfoProto { name: Some("y".into()), ..Default::default() });
        if level == 0 {
            g.input = vec![
                vi("x", &[2]),
                onnx::ValueInfoProto {
                    name: Some("c".into()),
                    r#type: Some(tensor_type(9, &[])),
                    ..Default::default()
                },
            ];
        }
        bytes = nest(g.encode_to_vec(), 1, &n);
    }
    let mut m = model(graph(vec![], vec![], vec![]));
    m.graph = None;
    nest(m.encode_to_vec(), 7, &bytes)
}

#[test]
fn subgraph_nesting_is_bounded() {
    let dir = scratch("nesting");
    // Moderate nesting loads.
    let p = write(&dir, "nest20.onnx", &nested_ifs(20));
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_ne!(r.code, 2, "{}", r.stderr);
    // The depth limit is adjustable and names where it was hit.
    let r = run_env(&[OsStr::new("check"), p.as_os_str()], &[("ONNX_BCAST_MAX_DEPTH", "3")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("subgraphs nest deeper than 3 levels"), "{}", r.stderr);
    assert!(r.stderr.contains("if0/then_branch/if1/then_branch/if2/then_branch/if3/then_branch"), "{}", r.stderr);
    // A bomb far past protobuf's recursion limit is a decode error, not a stack overflow.
    let p = write(&dir, "nest5000.onnx", &nested_ifs(5000));
    let r = expect_check(&p, 2, &["nest5000.onnx: not a valid ONNX model", "recursion limit"]);
    let _ = r;
    // Past MAX_DEPTH but inside protobuf's limit is refused by the depth check or the decoder,
    // whichever comes first; both name the file and exit 2.
    let p = write(&dir, "nest33.onnx", &nested_ifs(io::MAX_DEPTH + 1));
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("nest33.onnx"), "{}", r.stderr);
}

/// Model-local functions `F0..F39`, each calling the next `fan` times in a chain (the last
/// is a Relu): inferring every call's body anew is `fan^39` bodies.
fn function_fan_out(fan: usize) -> Vec<u8> {
    let local = || onnx::OperatorSetIdProto { domain: Some("local".into()), version: Some(1) };
    let call = |op: &str, input: &str, output: &str| onnx::NodeProto {
        domain: Some("local".into()),
        ..node("", op, &[input], &[output])
    };
    let functions = (0..40)
        .map(|i| {
            let body = if i == 39 {
                vec![node("", "Relu", &["a"], &["b"])]
            } else {
                let names: Vec<String> = (0..=fan)
                    .map(|k| {
                        if k == 0 {
                            "a".into()
                        } else if k == fan {
                            "b".into()
                        } else {
                            format!("t{k}")
                        }
                    })
                    .collect();
                (0..fan).map(|k| call(&format!("F{}", i + 1), &names[k], &names[k + 1])).collect()
            };
            onnx::FunctionProto {
                name: Some(format!("F{i}")),
                domain: Some("local".into()),
                input: vec!["a".into()],
                output: vec!["b".into()],
                node: body,
                opset_import: vec![
                    onnx::OperatorSetIdProto { domain: Some(String::new()), version: Some(17) },
                    local(),
                ],
                ..Default::default()
            }
        })
        .collect();
    let mut m = model(graph(vec![call("F0", "x", "y")], vec![vi("x", &[2])], vec![]));
    m.opset_import.push(local());
    m.functions = functions;
    m.encode_to_vec()
}

/// Each call infers its function's body again, so calls that fan out grew exponentially with
/// the nesting: an 8 KB model with eight calls a level ran for hours, and two calls a level
/// printed 65,536 copies of the depth warning (9 MB). Now all calls together infer a bounded
/// number of body nodes, and a finding inside a body is reported once per node and code.
#[test]
fn function_call_fan_out_is_bounded() {
    let dir = scratch("fan_out");
    for fan in [2, 8] {
        let p = write(&dir, &format!("fan{fan}.onnx"), &function_fan_out(fan));
        let r = run(&[OsStr::new("check"), p.as_os_str()]);
        assert_eq!(r.code, 0, "fan {fan}: {}", r.stderr);
        assert!(r.stdout.contains("function calls nest deeper than 16"), "fan {fan}: {}", r.stdout);
        assert!(r.stdout.len() < 100_000, "fan {fan}: {} bytes of findings", r.stdout.len());
    }
    let p = dir.join("fan8.onnx");
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert!(r.stdout.contains("as many body nodes as this model allows"), "{}", r.stdout);
}

/// Symbolic sizes used to grow without bound: a chain of n Adds, each over a new symbol,
/// held and printed `max(s0,...,si)` at every step (48 MB of `infer` for 3,000 nodes), and a
/// 100 KB `dim_param` was copied into every tensor it reached (100 MB of `infer` and of
/// `annotate` output from a 122 KB model). Terms past `MAX_NODES` nodes and names past
/// `MAX_TEXT` bytes are now unknown sizes, while the saved model keeps the name as written.
#[test]
fn symbolic_sizes_do_not_amplify_the_output() {
    let dir = scratch("amplify");
    let n = 3000;
    let mut inputs = vec![sym_vi("x0", "s0")];
    let mut nodes = Vec::new();
    for i in 1..n {
        inputs.push(sym_vi(&format!("x{i}"), &format!("s{i}")));
        let prev = if i == 1 { "x0".to_string() } else { format!("y{}", i - 1) };
        nodes.push(node(&format!("n{i}"), "Add", &[&prev, &format!("x{i}")], &[&format!("y{i}")]));
    }
    let p = write(&dir, "chain.onnx", &model(graph(nodes, inputs, vec![])).encode_to_vec());
    let r = run(&[OsStr::new("infer"), p.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.len() < 2_000_000, "{} bytes for {n} nodes", r.stdout.len());
    // Below the limit the expression is kept.
    let y2 = r.stdout.lines().find(|l| l.starts_with("y2 ")).unwrap_or_default();
    assert!(y2.ends_with("float32  [broadcast(s0,s1,s2)]"), "{y2}");

    let long = "S".repeat(100_000);
    let nodes = (0..1000)
        .map(|i| {
            let prev = if i == 0 { "x".to_string() } else { format!("y{}", i - 1) };
            node(&format!("n{i}"), "Add", &[&prev, "b"], &[&format!("y{i}")])
        })
        .collect();
    let m = model(graph(nodes, vec![sym_vi("x", &long), vi("b", &[1])], vec![]));
    let p = write(&dir, "long.onnx", &m.encode_to_vec());
    let r = run(&[OsStr::new("infer"), p.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.len() < 200_000, "{} bytes", r.stdout.len());
    let out = dir.join("long.annotated.onnx");
    let r = run(&[OsStr::new("annotate"), p.as_os_str(), OsStr::new("-o"), out.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let saved = std::fs::read(&out).unwrap();
    assert!(saved.len() < 400_000, "{} bytes", saved.len());
    let saved = onnx::ModelProto::decode(saved.as_slice()).unwrap();
    assert_eq!(saved.graph.unwrap().input[0], sym_vi("x", &long), "the declared name is written back as it was");
}

/// Tensor contents that inference keeps (shape tensors, small constants) had no budget in
/// all: 100,000 Adds each folding a 1,024-element constant again held 2.4 GB (from 2.5 MB),
/// and 2,000 Identity nodes copying a 1 MB string tensor held 2 GB (from 1 MB). Both now
/// stay under the 2 GiB address-space limit `run` sets, and keep the early contents.
#[test]
fn kept_tensor_contents_are_bounded() {
    let dir = scratch("contents");
    let chain = |op: &str, n: usize, c: onnx::TensorProto| {
        let nodes = (0..n)
            .map(|i| {
                let prev = if i == 0 { "c".to_string() } else { format!("y{}", i - 1) };
                let inputs: Vec<&str> = if op == "Add" { vec![&prev, "c"] } else { vec![&prev] };
                node(&format!("n{i}"), op, &inputs, &[&format!("y{i}")])
            })
            .collect();
        let mut g = graph(nodes, vec![], vec![]);
        g.initializer.push(c);
        model(g).encode_to_vec()
    };
    let strings = onnx::TensorProto {
        name: Some("c".into()),
        data_type: Some(8),
        dims: vec![1024],
        string_data: vec![vec![b'x'; 1000]; 1024],
        ..Default::default()
    };
    for (name, bytes) in
        [("adds.onnx", chain("Add", 100_000, iota_1024())), ("identities.onnx", chain("Identity", 100_000, strings))]
    {
        let p = write(&dir, name, &bytes);
        let r = run(&[OsStr::new("check"), p.as_os_str()]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
    }
    // The first nodes' contents are still known: y0 = c + c.
    let p = dir.join("adds.onnx");
    let m = io::load(&p).unwrap();
    let inf = onnx_bcast::infer::infer(&m, &Default::default());
    let y0 = m.local(onnx_bcast::Model::MAIN, "y0").unwrap();
    let expected: Vec<Dim> = (0..1024).map(|k| Dim::Known(2 * k)).collect();
    assert_eq!(inf.value(y0), Some(expected.as_slice()));
}

/// Rules that searched a list once per element were quadratic in what the file holds: an
/// Unsqueeze with 200,000 axes took 7.4 s (release) from 0.8 MB, a ReduceSum or Squeeze over
/// 200,000 axes 3.6 s, and 2,000 Unique nodes over one 1,024-element constant 3 s from 47 KB.
/// Each is now linear; in this debug build each stays well inside `run`'s 10 s deadline.
#[test]
fn rules_are_linear_in_axis_lists_and_contents() {
    let dir = scratch("linear");
    let r = 200_000;
    let with_axes = |op: &str, rank: usize| {
        let mut n = node("n", op, &["x"], &["y"]);
        n.attribute.push(ints_attr("axes", &(0..r as i64).collect::<Vec<_>>()));
        let mut m = model(graph(vec![n], vec![vi("x", &vec![1; rank])], vec![]));
        m.opset_import[0].version = Some(11);
        m.encode_to_vec()
    };
    let uniques = {
        let nodes = (0..2000).map(|i| node(&format!("u{i}"), "Unique", &["c"], &[&format!("y{i}")])).collect();
        let mut g = graph(nodes, vec![], vec![]);
        g.initializer.push(iota_1024());
        model(g).encode_to_vec()
    };
    let cases = [
        ("unsqueeze.onnx", with_axes("Unsqueeze", 1)),
        ("reduce.onnx", with_axes("ReduceSum", r)),
        ("squeeze.onnx", with_axes("Squeeze", r)),
        ("unique.onnx", uniques),
    ];
    for (name, bytes) in cases {
        let p = write(&dir, name, &bytes);
        let r = run(&[OsStr::new("check"), p.as_os_str()]);
        assert_eq!(r.code, 0, "{name}: {}{}", r.stdout, r.stderr);
    }
}

/// `n` Adds, the `i`th of `xi: [4,1]` and `bi: [1,4]` (operands of their own, so that each
/// gets expansions of its own), all named `name`, written to `dir/FILE.onnx` and rewritten by
/// `expand` (which must succeed) to `dir/FILE.expanded.onnx`: the run and that path.
fn expand_adds(dir: &Path, file: &str, name: &str, n: usize) -> (Run, PathBuf) {
    let adds = (0..n).map(|i| node(name, "Add", &[&format!("x{i}"), &format!("b{i}")], &[&format!("t{i}")])).collect();
    let inputs = (0..n).flat_map(|i| [vi(&format!("x{i}"), &[4, 1]), vi(&format!("b{i}"), &[1, 4])]).collect();
    let m = model(graph(adds, inputs, vec![]));
    let p = write(dir, &format!("{file}.onnx"), &m.encode_to_vec());
    let out = dir.join(format!("{file}.expanded.onnx"));
    let r = run(&[OsStr::new("expand"), p.as_os_str(), OsStr::new("-o"), out.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    (r, out)
}

/// A value read by every node of a chain: `expand` gives the chain one Expand of `b`, which
/// all 30,000 Adds read, and `implicit` rewires them all back to `b`. Unlinking those uses
/// one at a time walked the Expand's list of edges each time (40 s in release for 100,000).
#[test]
fn implicit_rewires_a_value_read_by_every_node_in_linear_time() {
    let dir = scratch("linear_hub");
    let n = 30_000;
    let adds = (0..n)
        .map(|i| {
            let prev = if i == 0 { "x".to_string() } else { format!("t{}", i - 1) };
            node("", "Add", &[&prev, "b"], &[&format!("t{i}")])
        })
        .collect();
    let m = model(graph(adds, vec![vi("x", &[4, 1]), vi("b", &[1, 4])], vec![vi(&format!("t{}", n - 1), &[4, 4])]));
    let p = write(&dir, "chain.onnx", &m.encode_to_vec());
    let expanded = dir.join("chain.expanded.onnx");
    let r = run(&[OsStr::new("expand"), p.as_os_str(), OsStr::new("-o"), expanded.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let back = dir.join("chain.implicit.onnx");
    let r = run(&[OsStr::new("implicit"), expanded.as_os_str(), OsStr::new("-o"), back.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let g = onnx::ModelProto::decode(std::fs::read(&back).unwrap().as_slice()).unwrap().graph.unwrap();
    assert_eq!(g.node.len(), n, "{}", r.stderr);
    assert!(g.node.iter().all(|x| x.op_type() == "Add" && x.input[1] == "b"));
}

/// The contract evaluated each distinct condition over its window, up to 2^18 sizes: 20,000
/// pools of strides 2 to 20,001 added to their input took 15 s in release. It now spends at
/// most 2^22 evaluations, past which a condition is a relation; and sizes declared in
/// value_info under 8,000 texts (each a condition since they are false at some sizes) cost
/// no more in `check` or in `annotate`, which asks of each text whether it names the size.
#[test]
fn many_periodic_conditions_stay_within_a_budget() {
    let dir = scratch("periodic_conditions");
    let n = 8_000;
    let mut x = vi("x", &[1, 1, 1]);
    if let Some(type_proto::Value::TensorType(t)) = x.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.shape.as_mut().unwrap().dim[2].value = Some(tensor_shape_proto::dimension::Value::DimParam("h".into()));
    }
    let mut nodes = Vec::new();
    for i in 0..n {
        let mut pool = node(&format!("pool{i}"), "MaxPool", &["x"], &[&format!("p{i}")]);
        pool.attribute = vec![ints_attr("kernel_shape", &[1]), ints_attr("strides", &[i as i64 + 2])];
        nodes.extend([pool, node(&format!("add{i}"), "Add", &[&format!("p{i}"), "x"], &[&format!("y{i}")])]);
    }
    let p = write(&dir, "pools.onnx", &model(graph(nodes, vec![x], vec![])).encode_to_vec());
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("h: h, floor((h-1)/8001)+1 are equal or 1"), "a relation past the budget");

    let relus = (0..n).map(|i| node(&format!("r{i}"), "Relu", &["x"], &[&format!("y{i}")])).collect();
    let mut g = graph(relus, vec![sym_vi("x", "h")], vec![]);
    g.value_info = (0..n).map(|i| sym_vi(&format!("y{i}"), &format!("floor(h/{})", i + 2))).collect();
    let p = write(&dir, "declared.onnx", &model(g).encode_to_vec());
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = dir.join("declared.annotated.onnx");
    let r = run(&[OsStr::new("annotate"), p.as_os_str(), OsStr::new("-o"), out.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Work that searched a list per node was quadratic in the model: `expand` placed each new
/// node by searching its graph's order and named each unnamed node by its position (3.3 s
/// in release for 50,000 rewritten Adds); inference looked each call up among the model's
/// functions (19 s for 50,000) and each side condition among the symbols seen (2.6 s for
/// 50,000); annotate looked each value up among the graph's outputs; implicit removed dead
/// nodes and initializers one by one, scanning the model for each. In this debug build
/// each now stays well inside `run`'s 10 s deadline.
#[test]
fn passes_are_linear_in_nodes_functions_and_symbols() {
    let dir = scratch("linear_model");
    let n = 30_000;
    // Unnamed Adds: each gets both operands expanded.
    let (r, out) = expand_adds(&dir, "adds", "", n);
    assert!(r.stderr.contains(&format!("{n} nodes made explicit")), "{}", r.stderr);
    // The new nodes sit before the node they feed, named after its position.
    let saved = onnx::ModelProto::decode(std::fs::read(&out).unwrap().as_slice()).unwrap().graph.unwrap();
    let last = saved.node.iter().rposition(|x| x.op_type.as_deref() == Some("Expand")).unwrap();
    assert_eq!(saved.node[last + 1].output, vec![format!("t{}", n - 1)]);
    assert!(saved.node[last].name().starts_with(&format!("Add_{}", n - 1)), "{:?}", saved.node[last].name);
    // And back: implicit removed nodes and initializers one at a time, each removal and each
    // use check scanning the model (52 s in release for this one).
    let back = dir.join("adds.implicit.onnx");
    let r = run(&[OsStr::new("implicit"), out.as_os_str(), OsStr::new("-o"), back.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let g = onnx::ModelProto::decode(std::fs::read(&back).unwrap().as_slice()).unwrap().graph.unwrap();
    assert_eq!(g.node.len(), n, "{}", r.stderr);
    assert!(g
        .node
        .iter()
        .enumerate()
        .all(|(i, x)| x.op_type() == "Add" && x.input == [format!("x{i}"), format!("b{i}")]));
    assert!(g.initializer.is_empty());

    // One function per call, each of a distinct name.
    let local = || onnx::OperatorSetIdProto { domain: Some("local".into()), version: Some(1) };
    let calls = (0..n)
        .map(|i| onnx::NodeProto {
            domain: Some("local".into()),
            ..node("", &format!("F{i}"), &["x"], &[&format!("y{i}")])
        })
        .collect();
    let mut m = model(graph(calls, vec![vi("x", &[2])], vec![]));
    m.opset_import.push(local());
    m.functions = (0..n)
        .map(|i| onnx::FunctionProto {
            name: Some(format!("F{i}")),
            domain: Some("local".into()),
            input: vec!["a".into()],
            output: vec!["b".into()],
            node: vec![node("", "Relu", &["a"], &["b"])],
            opset_import: vec![onnx::OperatorSetIdProto { domain: Some(String::new()), version: Some(17) }],
            ..Default::default()
        })
        .collect();
    let p = write(&dir, "functions.onnx", &m.encode_to_vec());
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    // A new symbol per Add, each recorded as "1 or 4". 50,000: searching a list per condition
    // took 2.6 s in release there, several times the deadline in debug, while the linear pass
    // takes 3 to 4 s in debug (100,000 took 7 to 8 s alone and over 10 s beside the other
    // tests on two cores).
    let symbols = 50_000;
    let mut inputs = vec![vi("b", &[4])];
    inputs.extend((0..symbols).map(|i| sym_vi(&format!("x{i}"), &format!("s{i}"))));
    let adds =
        (0..symbols).map(|i| node(&format!("n{i}"), "Add", &[&format!("x{i}"), "b"], &[&format!("y{i}")])).collect();
    let p = write(&dir, "symbols.onnx", &model(graph(adds, inputs, vec![])).encode_to_vec());
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    // As many graph outputs as nodes: annotate searched the outputs for each value (7.1 s
    // in release for 200,000).
    let n = 100_000;
    let relus = (0..n).map(|i| node(&format!("n{i}"), "Relu", &["x"], &[&format!("y{i}")])).collect();
    let outputs = (0..n).map(|i| onnx::ValueInfoProto { name: Some(format!("y{i}")), ..Default::default() }).collect();
    let p = write(&dir, "outputs.onnx", &model(graph(relus, vec![vi("x", &[2])], outputs)).encode_to_vec());
    let out = dir.join("outputs.annotated.onnx");
    let r = run(&[OsStr::new("annotate"), p.as_os_str(), OsStr::new("-o"), out.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let saved = onnx::ModelProto::decode(std::fs::read(&out).unwrap().as_slice()).unwrap().graph.unwrap();
    assert_eq!(saved.output.len(), n);
    assert!(saved.value_info.is_empty(), "graph outputs carry their own types, not value_info");
    assert_eq!(saved.output[n - 1], vi(&format!("y{}", n - 1), &[2]));
}

/// `expand` names each new node and tensor after the node it feeds, with `_1`, `_2`, ...
/// when the name is taken, and tried the suffixes from 1 each time: with every node named
/// alike that was quadratic (5,000 Adds named `same`: 41 s in release). In this debug build
/// 5,000 stay well inside `run`'s 10 s deadline, and every name written is distinct.
#[test]
fn expand_names_stay_linear_when_nodes_share_a_name() {
    let n = 5_000;
    let (_, out) = expand_adds(&scratch("same_names"), "same", "same", n);
    let g = onnx::ModelProto::decode(std::fs::read(&out).unwrap().as_slice()).unwrap().graph.unwrap();
    let added: Vec<&str> = g.node.iter().map(|x| x.name()).filter(|name| *name != "same").collect();
    let distinct: std::collections::HashSet<&str> = added.iter().copied().collect();
    assert!(added.len() >= 2 * n, "{} nodes added", added.len());
    assert_eq!(distinct.len(), added.len(), "a name was written twice");
    let tensors: std::collections::HashSet<&str> =
        g.node.iter().flat_map(|x| x.output.iter().map(String::as_str)).collect();
    assert_eq!(tensors.len(), g.node.iter().map(|x| x.output.len()).sum::<usize>(), "a tensor was defined twice");
}

#[test]
fn type_nesting_bombs_are_refused() {
    // sequence(sequence(...(tensor))) three thousand deep, built as bytes.
    let mut t = tensor_type(1, &[1]).encode_to_vec();
    for _ in 0..3000 {
        t = nest(Vec::new(), 4, &nest(Vec::new(), 1, &t));
    }
    let x = nest(onnx::ValueInfoProto { name: Some("x".into()), ..Default::default() }.encode_to_vec(), 2, &t);
    let g = graph(vec![node("id", "Identity", &["x"], &["y"])], vec![], vec![]);
    let g = nest(g.encode_to_vec(), 11, &x);
    let mut m = model(graph(vec![], vec![], vec![]));
    m.graph = None;
    let bytes = nest(m.encode_to_vec(), 7, &g);
    let dir = scratch("typebomb");
    let p = write(&dir, "types.onnx", &bytes);
    expect_check(&p, 2, &["types.onnx: not a valid ONNX model", "recursion limit"]);
}

#[test]
fn a_chain_of_100k_nodes_is_fast() {
    let n = 100_000;
    let nodes: Vec<onnx::NodeProto> = (0..n)
        .map(|i| {
            let a = if i == 0 { "x".to_string() } else { format!("t{}", i - 1) };
            node(&format!("n{i}"), "Add", &[&a, "b"], &[&format!("t{i}")])
        })
        .collect();
    let mut out = vi(&format!("t{}", n - 1), &[4, 8]);
    out.r#type = Some(tensor_type(1, &[4, 8]));
    let m = model(graph(nodes, vec![vi("x", &[4, 1]), vi("b", &[8])], vec![out]));
    let dir = scratch("chain");
    let p = write(&dir, "chain.onnx", &m.encode_to_vec());
    let r = expect_check(&p, 0, &[]);
    assert!(!r.stdout.contains("error"), "{}", r.stdout);
    // Listed in reverse, the same chain is sorted, not walked recursively.
    let mut m = m;
    m.graph.as_mut().unwrap().node.reverse();
    let p = write(&dir, "chain_rev.onnx", &m.encode_to_vec());
    expect_check(&p, 0, &[]);
    // Closing the chain into one 100k-node cycle is a finding.
    let g = m.graph.as_mut().unwrap();
    g.node.last_mut().unwrap().input[0] = format!("t{}", n - 1);
    let p = write(&dir, "cycle.onnx", &m.encode_to_vec());
    expect_check(&p, 1, &["graph-cycle", "100000 nodes are on or behind a cycle", "and 99992 more"]);
}

// ---------------------------------------------------------------------------------------------
// Dims, element counts and data sizes.

#[test]
fn negative_and_overflowing_initializer_dims_name_the_tensor() {
    let dir = scratch("dims");
    let p = write(&dir, "neg.onnx", &with_initializer(float_tensor("w", &[2, -3])).encode_to_vec());
    expect_check(&p, 1, &["negative-dim", "initializer 'w' has dim -3 at axis 1"]);
    let p = write(&dir, "over.onnx", &with_initializer(float_tensor("w", &[1 << 40, 1 << 40])).encode_to_vec());
    expect_check(&p, 1, &["size-overflow", "initializer 'w'"]);
    // Elements fit, bytes do not (2^62 float32s are 2^64 bytes).
    let p = write(&dir, "bytes.onnx", &with_initializer(float_tensor("w", &[1 << 62])).encode_to_vec());
    expect_check(&p, 1, &["size-overflow", "initializer 'w'"]);
}

#[test]
fn negative_and_huge_declared_dims_are_findings() {
    let dir = scratch("declared");
    let m = model(graph(vec![node("add", "Add", &["x", "x"], &["y"])], vec![vi("x", &[2, -1])], vec![]));
    let p = write(&dir, "neg.onnx", &m.encode_to_vec());
    // Exporters write -1 for a dynamic dim: a warning, read as unknown, not a failure.
    expect_check(&p, 0, &["warning[negative-dim]", "graph input 'x' has dim -1 at axis 1; it is read as unknown"]);
    // Any other negative size is no size at all.
    let m = model(graph(vec![node("add", "Add", &["x", "x"], &["y"])], vec![vi("x", &[2, -5])], vec![]));
    let p = write(&dir, "neg5.onnx", &m.encode_to_vec());
    expect_check(&p, 1, &["error[negative-dim]", "graph input 'x' has dim -5 at axis 1; sizes are 0 or more"]);
    // The axis counts symbolic dims too.
    let mut x = vi("x", &[0, -7]);
    if let Some(type_proto::Value::TensorType(t)) = &mut x.r#type.as_mut().unwrap().value {
        t.shape.as_mut().unwrap().dim[0].value = Some(tensor_shape_proto::dimension::Value::DimParam("batch".into()));
    }
    let m = model(graph(vec![node("add", "Add", &["x", "x"], &["y"])], vec![x], vec![]));
    let p = write(&dir, "neg_sym.onnx", &m.encode_to_vec());
    expect_check(&p, 1, &["error[negative-dim]", "graph input 'x' has dim -7 at axis 1"]);
    let big = i64::MAX;
    let m = model(graph(
        vec![node("add", "Add", &["x", "z"], &["y"])],
        vec![vi("x", &[big, big]), vi("z", &[big])],
        vec![],
    ));
    let p = write(&dir, "huge.onnx", &m.encode_to_vec());
    let r = expect_check(&p, 1, &["size-overflow", "graph input 'x'"]);
    assert!(!r.stdout.contains("graph input 'z'"), "one dim of i64::MAX is a valid shape: {}", r.stdout);
    // Inference itself copes with them.
    let r = run(&[OsStr::new("infer"), OsStr::new("--format"), OsStr::new("json"), p.as_os_str()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains(&format!("[{big}, {big}]")) || r.stdout.contains(&big.to_string()), "{}", r.stdout);
}

#[test]
fn raw_data_must_match_dims_and_dtype() {
    let dir = scratch("raw");
    let mut w = float_tensor("w", &[2, 3]);
    w.raw_data = Some(vec![0; 20]);
    let p = write(&dir, "short.onnx", &with_initializer(w).encode_to_vec());
    expect_check(
        &p,
        1,
        &[
            "tensor-data-size",
            "initializer 'w' holds 20 bytes of raw_data, but 6 float32 elements (dims [2, 3]) take 24",
        ],
    );
    let mut w = float_tensor("w", &[2, 3]);
    w.float_data = vec![1.0; 5];
    let p = write(&dir, "floats.onnx", &with_initializer(w).encode_to_vec());
    expect_check(&p, 1, &["tensor-data-size", "initializer 'w' holds 5 stored values"]);
    let mut w = float_tensor("w", &[2, 3]);
    w.raw_data = Some(vec![0; 24]);
    let p = write(&dir, "ok.onnx", &with_initializer(w).encode_to_vec());
    expect_check(&p, 0, &[]);
    // Sub-byte and complex layouts: 3 int4s take 2 bytes; 2 complex64s take 4 floats.
    let mut w = float_tensor("w", &[3]);
    w.data_type = Some(22);
    w.raw_data = Some(vec![0; 2]);
    let p = write(&dir, "int4.onnx", &with_initializer(w.clone()).encode_to_vec());
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert!(!r.stdout.contains("tensor-data-size"), "{}", r.stdout);
    w.raw_data = Some(vec![0; 3]);
    let p = write(&dir, "int4_bad.onnx", &with_initializer(w).encode_to_vec());
    expect_check(&p, 1, &["tensor-data-size", "holds 3 bytes of raw_data, but 3 int4 elements (dims [3]) take 2"]);
    let mut w = float_tensor("w", &[2]);
    w.data_type = Some(14);
    w.float_data = vec![0.0; 4];
    let p = write(&dir, "c64.onnx", &with_initializer(w.clone()).encode_to_vec());
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert!(!r.stdout.contains("tensor-data-size"), "{}", r.stdout);
    w.float_data = vec![0.0; 2];
    let p = write(&dir, "c64_bad.onnx", &with_initializer(w).encode_to_vec());
    expect_check(&p, 1, &["tensor-data-size", "holds 2 stored values, but 2 complex64 elements (dims [2]) need 4"]);
    // The same inside a Constant node's attribute names the node.
    let mut t = float_tensor("", &[4]);
    t.raw_data = Some(vec![0; 3]);
    let mut c = node("const", "Constant", &[], &["k"]);
    c.attribute.push(onnx::AttributeProto {
        name: Some("value".into()),
        r#type: Some(4),
        t: Some(t),
        ..Default::default()
    });
    let p = write(&dir, "const.onnx", &model(graph(vec![c], vec![], vec![])).encode_to_vec());
    expect_check(&p, 1, &["tensor-data-size", "tensor of attribute 'value' holds 3 bytes", "const (Constant)"]);
}

// ---------------------------------------------------------------------------------------------
// Structure.

#[test]
fn structure_errors_name_what_is_wrong() {
    let dir = scratch("structure");
    let two = || vec![vi("x", &[2])];
    // A cycle.
    let m = model(graph(vec![node("a", "Add", &["x", "q"], &["p"]), node("b", "Relu", &["p"], &["q"])], two(), vec![]));
    let p = write(&dir, "cycle.onnx", &m.encode_to_vec());
    expect_check(&p, 1, &["graph-cycle", "2 nodes are on or behind a cycle: a, b"]);
    // An undefined input.
    let m = model(graph(vec![node("a", "Add", &["x", "ghost"], &["p"])], two(), vec![]));
    let p = write(&dir, "undefined.onnx", &m.encode_to_vec());
    expect_check(&p, 1, &["undefined-input", "input 'ghost' is not defined"]);
    // A duplicate output.
    let m = model(graph(vec![node("a", "Relu", &["x"], &["p"]), node("b", "Relu", &["x"], &["p"])], two(), vec![]));
    let p = write(&dir, "dup.onnx", &m.encode_to_vec());
    expect_check(&p, 1, &["duplicate-output", "output 'p' is already defined"]);
    // An undefined graph output.
    let m = model(graph(vec![], two(), vec![vi("nowhere", &[2])]));
    let p = write(&dir, "undef_out.onnx", &m.encode_to_vec());
    expect_check(&p, 1, &["undefined-output", "graph output 'nowhere'"]);
    // An initializer given twice.
    let mut w = float_tensor("w", &[1]);
    w.raw_data = Some(vec![0; 4]);
    let mut m = with_initializer(w.clone());
    m.graph.as_mut().unwrap().initializer.push(w);
    let p = write(&dir, "dup_init.onnx", &m.encode_to_vec());
    expect_check(&p, 1, &["duplicate-definition", "initializer 'w' is already defined"]);
}

// ---------------------------------------------------------------------------------------------
// External data.

fn external(name: &str, location: &str, length: u64, dims: &[i64]) -> onnx::TensorProto {
    let entry = |k: &str, v: String| onnx::StringStringEntryProto { key: Some(k.into()), value: Some(v) };
    let mut t = float_tensor(name, dims);
    t.data_location = Some(1);
    t.external_data =
        vec![entry("location", location.into()), entry("offset", "0".into()), entry("length", length.to_string())];
    t
}

#[test]
fn huge_external_data_is_checked_without_reading_it() {
    let dir = scratch("ext_huge");
    // 10^12 bytes that do not exist: check and infer must not try to read them.
    let n = 250_000_000_000i64;
    let mut m = with_initializer(external("w", "weights.bin", 4 * n as u64, &[n]));
    m.graph.as_mut().unwrap().input[0] = vi("x", &[n]);
    let p = write(&dir, "big.onnx", &m.encode_to_vec());
    // A sparse file of that size: its length is all a stat sees.
    std::fs::File::create(dir.join("weights.bin")).unwrap().set_len(4 * n as u64).unwrap();
    let r = expect_check(&p, 0, &[]);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let r = run(&[OsStr::new("infer"), p.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("250000000000"), "{}", r.stdout);
}

#[test]
fn unsafe_external_locations_are_findings() {
    let dir = scratch("ext_unsafe");
    for (i, loc) in ["../secret.bin", "/etc/passwd", "a/../../b", "..\\..\\b", "C:\\w.bin", ""].iter().enumerate() {
        let p = write(&dir, &format!("m{i}.onnx"), &with_initializer(external("w", loc, 24, &[2, 3])).encode_to_vec());
        expect_check(&p, 1, &["external-data-unsafe", "initializer 'w'"]);
    }
    // A length that does not match the dims is a finding too (still nothing is read).
    let p = write(&dir, "len.onnx", &with_initializer(external("w", "w.bin", 7, &[2, 3])).encode_to_vec());
    expect_check(&p, 1, &["tensor-data-size", "references 7 bytes of external data, but 6 float32 elements"]);
}

/// Weights that are not there are a finding, found with a stat: a missing file, and one
/// shorter than offset + length, each an error naming the tensor and the file.
#[test]
fn missing_external_weights_are_errors() {
    let dir = scratch("ext_missing");
    let p = write(&dir, "m.onnx", &with_initializer(external("w", "w.bin", 24, &[2, 3])).encode_to_vec());
    let _ = std::fs::remove_file(dir.join("w.bin"));
    expect_check(&p, 1, &["error[external-data-missing]", "initializer 'w': 'w.bin': No such file"]);
    std::fs::write(dir.join("w.bin"), [0u8; 20]).unwrap();
    expect_check(
        &p,
        1,
        &[
            "error[external-data-missing]",
            "initializer 'w': offset 0 + length 24 is past the end of 'w.bin' (20 bytes)",
        ],
    );
    std::fs::write(dir.join("w.bin"), [0u8; 24]).unwrap();
    expect_check(&p, 0, &[]);
}

/// A rewrite written to another folder takes the external data files along (the written
/// model never points at data that is not beside it); written beside the input, it shares them.
#[test]
fn rewrites_elsewhere_take_their_external_data_along() {
    let root = scratch("ext_copy");
    let (src, dst) = (root.join("src"), root.join("dst"));
    std::fs::create_dir_all(src.join("weights")).unwrap();
    let _ = std::fs::remove_dir_all(&dst);
    let data: Vec<u8> = (0..24u8).collect();
    std::fs::write(src.join("weights/w.bin"), &data).unwrap();
    let p = write(&src, "m.onnx", &with_initializer(external("w", "weights/w.bin", 24, &[2, 3])).encode_to_vec());
    let out = dst.join("m.annotated.onnx");
    for cmd in ["annotate", "expand"] {
        let r = run(&[OsStr::new(cmd), p.as_os_str(), OsStr::new("-o"), out.as_os_str()]);
        assert_eq!(r.code, 0, "{cmd}: {}", r.stderr);
        assert_eq!(std::fs::read(dst.join("weights/w.bin")).unwrap(), data, "{cmd}");
        let m = onnx_bcast::load(&out).unwrap();
        assert_eq!(io::read_external(&dst, "w", "weights/w.bin", 0, Some(24)).unwrap(), data);
        assert!(m.dir.is_some());
    }
    // Beside the input: no second copy is made.
    let beside = src.join("m.annotated.onnx");
    let r = run(&[OsStr::new("annotate"), p.as_os_str(), OsStr::new("-o"), beside.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let files: Vec<_> = std::fs::read_dir(src.join("weights")).unwrap().collect();
    assert_eq!(files.len(), 1);
}

#[test]
fn read_external_refuses_escapes_links_and_bad_ranges() {
    let root = scratch("ext_read");
    let dir = root.join("model");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(root.join("secret.bin"), b"secret!!").unwrap();
    std::fs::write(dir.join("w.bin"), b"0123456789").unwrap();
    std::fs::write(dir.join("sub/v.bin"), b"abcd").unwrap();
    let read = |loc: &str, off: u64, len: Option<u64>| io::read_external(&dir, "w", loc, off, len);
    let refused = |loc: &str, off: u64, len: Option<u64>, why: &str| match read(loc, off, len) {
        Err(Error::ExternalData { tensor, reason }) => {
            assert_eq!(tensor, "w");
            assert!(reason.contains(why), "{loc}: '{reason}' lacks '{why}'");
        }
        other => panic!("{loc}: {other:?}"),
    };
    assert_eq!(read("w.bin", 2, Some(3)).unwrap(), b"234");
    assert_eq!(read("w.bin", 4, None).unwrap(), b"456789");
    assert_eq!(read("sub/v.bin", 0, None).unwrap(), b"abcd");
    assert_eq!(read("./w.bin", 0, Some(1)).unwrap(), b"0");
    refused("../secret.bin", 0, None, "leaves the model's folder");
    refused("sub/../../secret.bin", 0, None, "leaves the model's folder");
    refused(root.join("secret.bin").to_str().unwrap(), 0, None, "absolute path");
    refused("w.bin", 8, Some(3), "past the end");
    refused("w.bin", 11, None, "past the end");
    refused("w.bin", u64::MAX, Some(2), "past the end");
    refused("w.bin", 1, Some(u64::MAX), "past the end");
    refused("missing.bin", 0, None, "missing.bin");
    refused("sub", 0, None, "not a regular file");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.join("secret.bin"), dir.join("link.bin")).unwrap();
        refused("link.bin", 0, None, "symbolic link");
        std::os::unix::fs::symlink(&root, dir.join("up")).unwrap();
        refused("up/secret.bin", 0, None, "symbolic link");
        std::fs::hard_link(root.join("secret.bin"), dir.join("hard.bin")).unwrap();
        refused("hard.bin", 0, None, "hard links");
    }
}

// ---------------------------------------------------------------------------------------------
// No silent loss.

/// Appends an unknown field (number 99, varint 1) to an encoded message.
fn with_unknown(mut bytes: Vec<u8>) -> Vec<u8> {
    prost::encoding::encode_key(99, prost::encoding::WireType::Varint, &mut bytes);
    prost::encoding::encode_varint(1, &mut bytes);
    bytes
}

/// Wraps `body` as field `number` (length-delimited) of `outer`.
fn nest(mut outer: Vec<u8>, number: u32, body: &[u8]) -> Vec<u8> {
    prost::encoding::encode_key(number, prost::encoding::WireType::LengthDelimited, &mut outer);
    prost::encoding::encode_varint(body.len() as u64, &mut outer);
    outer.extend_from_slice(body);
    outer
}

/// A model whose first node carries an unknown field.
fn lossy_model() -> Vec<u8> {
    let node_bytes = with_unknown(node("relu", "Relu", &["x"], &["y"]).encode_to_vec());
    let g = graph(vec![], vec![vi("x", &[2])], vec![vi("y", &[2])]);
    let graph_bytes = nest(g.encode_to_vec(), 1, &node_bytes);
    let mut m = model(g);
    m.graph = None;
    nest(m.encode_to_vec(), 7, &graph_bytes)
}

#[test]
fn unknown_fields_are_recorded_where_they_are() {
    let m = io::decode(&lossy_model(), Path::new("l.onnx"), None).unwrap();
    assert_eq!(m.lossy, vec!["model.graph.node[0]: unknown field 99".to_string()]);
    let top = with_unknown(model(graph(vec![], vec![], vec![])).encode_to_vec());
    let m = io::decode(&top, Path::new("l.onnx"), None).unwrap();
    assert_eq!(m.lossy, vec!["model: unknown field 99".to_string()]);
    // Reading is not refused: the model is checked as usual.
    let dir = scratch("lossy_check");
    let p = write(&dir, "lossy.onnx", &lossy_model());
    expect_check(&p, 0, &[]);
}

#[test]
fn unknown_fields_after_plain_nodes_are_named_by_their_index() {
    // Plain nodes are passed over without a descent (`plain_node`); they still count, and a
    // node with an attribute or an odd wire type is looked into.
    let plain = |i: usize| node(&format!("n{i}"), "Relu", &["x"], &[&format!("y{i}")]).encode_to_vec();
    // node[3] holds an attribute with an unknown field in it.
    let alpha = onnx::AttributeProto {
        name: Some("alpha".into()),
        r#type: Some(onnx::attribute_proto::AttributeType::Float as i32),
        f: Some(1.0),
        ..Default::default()
    };
    let attr_bytes = nest(node("a", "Relu", &["x"], &["ya"]).encode_to_vec(), 5, &with_unknown(alpha.encode_to_vec()));
    let nodes = [plain(0), plain(1), with_unknown(plain(2)), attr_bytes, plain(4), with_unknown(plain(5))];
    let g = graph(vec![], vec![vi("x", &[2])], vec![vi("y0", &[2])]);
    let graph_bytes = nodes.iter().fold(g.encode_to_vec(), |acc, n| nest(acc, 1, n));
    let mut m = model(g);
    m.graph = None;
    let bytes = nest(m.encode_to_vec(), 7, &graph_bytes);
    let m = io::decode(&bytes, Path::new("l.onnx"), None).unwrap();
    assert_eq!(
        m.lossy,
        vec![
            "model.graph.node[2]: unknown field 99".to_string(),
            "model.graph.node[3].attribute[0]: unknown field 99".to_string(),
            "model.graph.node[5]: unknown field 99".to_string(),
        ]
    );
}

#[test]
fn no_shipped_model_or_backend_case_is_lossy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in ["models", "tests/data/node", "tests/data/legacy", "tests/data/real"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "onnx") {
                    let m = io::load(&p).unwrap();
                    assert!(m.lossy.is_empty(), "{}: {:?}", p.display(), m.lossy);
                    n += 1;
                }
            }
        }
    }
    assert!(n > 1800, "{n}");
}

#[test]
fn save_checked_refuses_lossy_models_and_overwriting_the_input() {
    let dir = scratch("save_checked");
    let input = write(&dir, "in.onnx", &lossy_model());
    let m = io::load(&input).unwrap();
    let out = dir.join("out.onnx");
    let opts = |allow_lossy, in_place| SaveOptions { allow_lossy, in_place, input: Some(input.as_path()) };
    match io::save_checked(&m, &out, &opts(false, false)) {
        Err(e @ Error::Lossy { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("model.graph.node[0]: unknown field 99") && msg.contains("--allow-lossy"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists(), "nothing written on refusal");
    io::save_checked(&m, &out, &opts(true, false)).unwrap();
    assert!(io::load(&out).unwrap().lossy.is_empty(), "the written model lost the unknown field");
    // The input path, another spelling of it, or a hard link to it: refused without --in-place.
    let before = std::fs::read(&input).unwrap();
    let spelled = dir.join(".").join("in.onnx");
    #[allow(unused_mut)]
    let mut same = vec![input.clone(), spelled];
    #[cfg(unix)]
    {
        std::fs::hard_link(&input, dir.join("alias.onnx")).unwrap();
        same.push(dir.join("alias.onnx"));
    }
    for target in &same {
        match io::save_checked(&m, target, &opts(true, false)) {
            Err(e @ Error::WouldOverwrite { .. }) => assert!(e.to_string().contains("--in-place"), "{e}"),
            other => panic!("{}: {other:?}", target.display()),
        }
        assert_eq!(std::fs::read(&input).unwrap(), before, "input untouched");
    }
    io::save_checked(&m, &input, &opts(true, true)).unwrap();
    assert_ne!(std::fs::read(&input).unwrap(), before, "--in-place rewrites the input");
    // A clean model saves with the defaults.
    let clean = io::load(&sample_model()).unwrap();
    io::save_checked(&clean, &dir.join("clean.onnx"), &SaveOptions::default()).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Atomic writes.

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect()
}

#[test]
fn failed_writes_leave_the_old_file_intact() {
    let dir = scratch("atomic");
    // The parent is a file: nothing can be created.
    let file = write(&dir, "plain", b"old");
    let err = io::write_atomic(&file.join("out.onnx"), b"new").unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert_eq!(std::fs::read(&file).unwrap(), b"old");
    // The target is a non-empty folder: the rename fails, the folder and its file stay, and
    // the temporary file is removed.
    let target = dir.join("target.onnx");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"old").unwrap();
    assert!(io::write_atomic(&target, b"new").is_err());
    assert_eq!(std::fs::read(target.join("keep")).unwrap(), b"old");
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    // A stale temporary file or a planted link at the temporary name is never written through.
    let out = dir.join("out.onnx");
    std::fs::write(&out, b"old").unwrap();
    let planted = dir.join(format!(".out.onnx.tmp{}-0", std::process::id()));
    #[cfg(unix)]
    std::os::unix::fs::symlink(&file, &planted).unwrap();
    #[cfg(not(unix))]
    std::fs::write(&planted, b"stale").unwrap();
    io::write_atomic(&out, b"new").unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), b"new");
    assert_eq!(std::fs::read(&file).unwrap(), b"old", "the link's target was not written");
    std::fs::remove_file(&planted).unwrap();
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

// ---------------------------------------------------------------------------------------------
// Determinism.

#[test]
fn output_is_byte_identical_across_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut models: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
        .collect();
    models.sort();
    assert!(models.len() >= 5);
    for p in &models {
        // Separate processes hash with different seeds: output must not depend on them.
        for format in ["json", "text"] {
            let args = [OsStr::new("infer"), OsStr::new("--format"), OsStr::new(format), p.as_os_str()];
            let a = run(&args);
            let b = run(&args);
            assert!(!a.stdout.is_empty());
            assert_eq!(a.stdout, b.stdout, "{} {format}", p.display());
            assert_eq!(a.code, b.code);
        }
        // Saving: two independent loads encode to the same bytes, and saved files are equal.
        let dir = scratch("determinism");
        let (m1, m2) = (io::load(p).unwrap(), io::load(p).unwrap());
        io::save(&m1, &dir.join("a.onnx")).unwrap();
        io::save(&m2, &dir.join("b.onnx")).unwrap();
        assert_eq!(std::fs::read(dir.join("a.onnx")).unwrap(), std::fs::read(dir.join("b.onnx")).unwrap());
    }
    let r = run(&[OsStr::new("check"), OsStr::new("--format"), OsStr::new("json"), root.as_os_str()]);
    let again = run(&[OsStr::new("check"), OsStr::new("--format"), OsStr::new("json"), root.as_os_str()]);
    assert_eq!(r.stdout, again.stdout);
}

// ---------------------------------------------------------------------------------------------
// Committed bad models and fuzz regressions.

#[test]
fn replayed_bad_models_give_their_expected_results() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad");
    let manifest = std::fs::read_to_string(dir.join("manifest.txt")).unwrap();
    let mut n = 0;
    for line in manifest.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut parts = line.splitn(3, '\t');
        let (file, code, needle) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let path = dir.join(file);
        let r = run(&[OsStr::new("check"), OsStr::new("--format"), OsStr::new("text"), path.as_os_str()]);
        assert_eq!(r.code.to_string(), code, "{file}: {}{}", r.stdout, r.stderr);
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains(needle), "{file}: '{needle}' missing from\n{all}");
        n += 1;
    }
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "onnx"))
        .count();
    assert_eq!(n, files, "every committed bad model is in the manifest");
}

/// Found by the `broadcast_graph` fuzz target (`tests/data/bad/fuzz/broadcast_graph-prelu-uni-sym`):
/// PRelu's slope `[s]` stretching to `x: [t]` recorded `EqualOrOne([s, t])`, which holds for
/// t = 1, s = 2, where the slope cannot stretch (unidirectional broadcasting never changes x).
/// Fixed in `src/shape`: `BroadcastDim::stretch` for two symbols records `Stretches`.
#[test]
fn prelu_symbolic_slope_side_condition_is_unidirectional() {
    use onnx_bcast::shape::Assumption;
    let m = model(graph(
        vec![node("p", "PRelu", &["t", "s"], &["y"])],
        vec![sym_vi("t", "t_n"), sym_vi("s", "s_n")],
        vec![],
    ));
    let m = io::decode(&m.encode_to_vec(), Path::new("prelu.onnx"), None).unwrap();
    let inf = onnx_bcast::infer::infer(&m, &Default::default());
    let value = |t: &onnx_bcast::shape::Term| Some(if t.as_name() == Some("t_n") { 1 } else { 2 });
    let holds = |a: &Assumption| a.holds(&value) == Some(true);
    let ruled_out = inf.has_errors() || inf.constraints.iter().any(|c| !holds(&c.assumption));
    assert!(ruled_out, "t = 1, s = 2 satisfies every side condition: {:?}", inf.constraints);
}

/// Found by a structure-aware fuzzer (valid protobuf, extreme attributes and dims): Split with
/// `num_outputs` over a dim of `i64::MAX` overflowed its chunk size (a `clamp` panic in release
/// builds), and SpaceToDepth and DepthToSpace squared a blocksize of 2^32. Also explicit split
/// sizes that overflow or are negative. Each is inferred in this (debug) build, where any
/// overflow panics; the expected sizes are worked out by hand.
#[test]
fn attribute_arithmetic_never_overflows() {
    use onnx::attribute_proto::AttributeType;

    let int = |name: &str, v: i64| onnx::AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    };
    let infer_with = |n: onnx::NodeProto, inputs: Vec<onnx::ValueInfoProto>, opset: i64| {
        let outputs: Vec<String> = n.output.clone();
        let mut m = model(graph(vec![n], inputs, vec![]));
        m.opset_import[0].version = Some(opset);
        m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("ai.onnx.ml".into()), version: Some(3) });
        let m = io::decode(&m.encode_to_vec(), Path::new("hostile.onnx"), None).unwrap();
        let inf = onnx_bcast::infer::infer(&m, &Default::default());
        let shapes: Vec<Option<Vec<Dim>>> =
            outputs.iter().map(|o| m.local(onnx_bcast::Model::MAIN, o).and_then(|v| inf.shape(v)).cloned()).collect();
        (shapes, inf.has_errors())
    };
    let infer = |n: onnx::NodeProto, x: &[i64], opset: i64| infer_with(n, vec![vi("x", x)], opset);
    let big = i64::MAX;
    // ceil((2^63 - 1) / 3) = 3074457345618258603 twice, then the 3074457345618258601 left.
    let mut split = node("s", "Split", &["x"], &["a", "b", "c"]);
    split.attribute.push(int("num_outputs", 3));
    let (shapes, _) = infer(split, &[big], 18);
    let k = |n: i64| Some(vec![Dim::Known(n)]);
    assert_eq!(shapes, vec![k(3074457345618258603), k(3074457345618258603), k(3074457345618258601)]);
    // Sizes that add up past i64::MAX, or that are negative, are findings.
    for sizes in [[big, big], [-1, 3], [big, 2 - big]] {
        let mut split = node("s", "Split", &["x"], &["a", "b"]);
        split.attribute.push(ints_attr("split", &sizes));
        let (_, errors) = infer(split, &[2], 11);
        assert!(errors, "split sizes {sizes:?} of a dim of 2 are refused");
    }
    // A blocksize of 2^32 squares past i64::MAX: the channel dim is not known, the others are
    // (SpaceToDepth's blocks must tile height and width, as onnxruntime requires).
    let mut s2d = node("s", "SpaceToDepth", &["x"], &["y"]);
    s2d.attribute.push(int("blocksize", 1 << 32));
    let (shapes, _) = infer(s2d.clone(), &[1, 3, 1 << 33, 1 << 32], 13);
    let y = shapes[0].clone().unwrap();
    assert!(y[1].known().is_none(), "{y:?}");
    assert_eq!((&y[0], &y[2], &y[3]), (&Dim::Known(1), &Dim::Known(2), &Dim::Known(1)));
    assert!(infer(s2d, &[1, 3, 4, 4], 13).1, "a block of 2^32 does not tile a height of 4");
    let mut d2s = node("d", "DepthToSpace", &["x"], &["y"]);
    d2s.attribute.push(int("blocksize", 1 << 32));
    let (shapes, _) = infer(d2s, &[1, 3, 4, 4], 13);
    let y = shapes[0].clone().unwrap();
    assert!(y[1].known().is_none(), "{y:?}");
    assert_eq!((&y[0], &y[2], &y[3]), (&Dim::Known(1), &Dim::Known(1 << 34), &Dim::Known(1 << 34)));
    // A rank read off a size: axes of 2^62 entries leave the rank unknown (this allocated it).
    let axes = onnx::ValueInfoProto { r#type: Some(tensor_type(7, &[1 << 62])), ..vi("a", &[]) };
    let (shapes, _) = infer_with(node("u", "Unsqueeze", &["x", "a"], &["y"]), vec![vi("x", &[2, 3]), axes], 13);
    assert_eq!(shapes, vec![None]);
    let axes = onnx::ValueInfoProto { r#type: Some(tensor_type(7, &[2])), ..vi("a", &[]) };
    let (shapes, _) = infer_with(node("u", "Unsqueeze", &["x", "a"], &["y"]), vec![vi("x", &[2, 3]), axes], 13);
    assert_eq!(shapes.len(), 1);
    assert_eq!(shapes[0].as_ref().map(Vec::len), Some(4), "2-D plus two axes: 4-D");
    // Sums of attribute values: FeatureVectorizer's width, TfIdfVectorizer's largest index + 1.
    let mut fv = node("f", "FeatureVectorizer", &["x"], &["y"]);
    fv.domain = Some("ai.onnx.ml".into());
    fv.attribute.push(ints_attr("inputdimensions", &[1 << 62, 1 << 62]));
    let (shapes, _) = infer(fv, &[2, 3], 13);
    let y = shapes[0].clone().unwrap();
    assert!(y.len() == 2 && y[1].known().is_none(), "{y:?}");
    let mut tfidf = node("t", "TfIdfVectorizer", &["x"], &["y"]);
    tfidf.attribute.push(ints_attr("ngram_indexes", &[0, big]));
    tfidf.attribute.push(ints_attr("pool_int64s", &[1, 2]));
    let (shapes, _) = infer(tfidf.clone(), &[5], 13);
    let y = shapes[0].clone().unwrap();
    assert!(y.len() == 1 && y[0].known().is_none(), "{y:?}");
    // Its input is 1-D or 2-D: a scalar is a finding (this indexed its first dim).
    let (_, errors) = infer(tfidf, &[], 13);
    assert!(errors, "TfIdfVectorizer of a scalar is refused");
}

/// Found by the same fuzzer: `expand`'s debug self-check panicked on a PRelu whose slope
/// `[S, 2]` stretches to `x: [?, ?]` under the assumptions `S is 1 or ?1` and `?2 = 2`. The
/// expanded slope is inferred as `[max(?1,S), 2]`, the output keeps `[?1, ?2]`: equal when
/// the assumptions hold, which the check cannot show, so it leaves such nodes out.
#[test]
fn expand_checks_prelu_stretched_under_assumptions_without_panicking() {
    let dims = |d: &[Option<tensor_shape_proto::dimension::Value>]| onnx::ValueInfoProto {
        r#type: Some(onnx::TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(onnx::TensorShapeProto {
                    dim: d
                        .iter()
                        .map(|v| tensor_shape_proto::Dimension { value: v.clone(), ..Default::default() })
                        .collect(),
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    use tensor_shape_proto::dimension::Value::{DimParam, DimValue};
    let x = onnx::ValueInfoProto { name: Some("x".into()), ..dims(&[None, None]) };
    let slope =
        onnx::ValueInfoProto { name: Some("s".into()), ..dims(&[Some(DimParam("S".into())), Some(DimValue(2))]) };
    let m = model(graph(vec![node("p", "PRelu", &["x", "s"], &["y"])], vec![x, slope], vec![]));
    let mut m = io::decode(&m.encode_to_vec(), Path::new("prelu.onnx"), None).unwrap();
    let inf = onnx_bcast::infer::infer(&m, &Default::default());
    assert!(!inf.constraints.is_empty(), "the stretch is assumed: {:?}", inf.constraints);
    let report = onnx_bcast::rewrite::expand(&mut m, &inf).unwrap();
    assert_eq!(report.rewritten, 1, "{:?}", report.diagnostics);
}

/// `bytes` with a model doc_string of `len` bytes appended (a field may come in any order).
fn padded(bytes: &[u8], len: usize) -> Vec<u8> {
    nest(bytes.to_vec(), 6, &vec![b'x'; len])
}

#[test]
fn past_a_mebibyte_the_same_models_give_the_same_answers() {
    // From 1 MiB the unknown-field walk runs on a second thread while the wire-level loader
    // starts, before the walk has said how deep the model nests; what comes out must not
    // depend on that.
    let dir = scratch("padded");
    let pad = 3 << 19;
    let m = io::decode(&padded(&lossy_model(), pad), Path::new("l.onnx"), None).unwrap();
    assert_eq!(m.lossy, vec!["model.graph.node[0]: unknown field 99".to_string()]);
    let p = write(&dir, "lossy.onnx", &padded(&lossy_model(), pad));
    expect_check(&p, 0, &[]);
    // Nesting past protobuf's recursion limit, of subgraphs and of types.
    let p = write(&dir, "nest5000.onnx", &padded(&nested_ifs(5000), pad));
    expect_check(&p, 2, &["nest5000.onnx: not a valid ONNX model", "recursion limit"]);
    let mut t = tensor_type(1, &[1]).encode_to_vec();
    for _ in 0..3000 {
        t = nest(Vec::new(), 4, &nest(Vec::new(), 1, &t));
    }
    let x = nest(onnx::ValueInfoProto { name: Some("x".into()), ..Default::default() }.encode_to_vec(), 2, &t);
    let g = nest(graph(vec![node("id", "Identity", &["x"], &["y"])], vec![], vec![]).encode_to_vec(), 11, &x);
    let mut m = model(graph(vec![], vec![], vec![]));
    m.graph = None;
    let p = write(&dir, "types.onnx", &padded(&nest(m.encode_to_vec(), 7, &g), pad));
    expect_check(&p, 2, &["types.onnx: not a valid ONNX model", "recursion limit"]);
    // Nesting the wire-level loader would take on but the depth limit refuses.
    let p = write(&dir, "nest20.onnx", &padded(&nested_ifs(20), pad));
    let r = run_env(&[OsStr::new("check"), p.as_os_str()], &[("ONNX_BCAST_MAX_DEPTH", "3")]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("subgraphs nest deeper than 3 levels"), "{}", r.stderr);
    let r = run(&[OsStr::new("check"), p.as_os_str()]);
    assert_ne!(r.code, 2, "{}", r.stderr);
    // Past what the wire-level loader takes on (64 messages deep) but inside prost's limit:
    // 25 nested Ifs are 76 messages deep, so prost decodes them.
    let small = io::decode(&nested_ifs(25), Path::new("a.onnx"), None).unwrap();
    let large = io::decode(&padded(&nested_ifs(25), pad), Path::new("a.onnx"), None).unwrap();
    assert_eq!((small.graph_ids().count(), large.graph_ids().count()), (26, 26));
    assert_eq!(small.lossy, large.lossy);
}

/// Found reading the Einsum rule: a term with two ellipses (`...i...`) sliced its input's
/// shape past its end and panicked (exit 101). Each of these equations is refused as an
/// invalid node naming the term; `check` exits 1.
#[test]
fn einsum_equations_with_stray_dots_are_refused() {
    let dir = scratch("einsum_dots");
    let cases = [
        ("...i...", "...i..."),
        ("...i...->i", "...i..."),
        ("......", "......"),
        ("i...j...k", "i...j...k"),
        ("i.j", "i.j"),
        ("..i", "..i"),
        (".", "."),
        ("ij->i.j", "i.j"),
    ];
    for (k, (eq, bad)) in cases.iter().enumerate() {
        let mut n = node("e", "Einsum", &["a"], &["c"]);
        n.attribute.push(onnx::AttributeProto {
            name: Some("equation".into()),
            r#type: Some(onnx::attribute_proto::AttributeType::String as i32),
            s: Some(eq.as_bytes().to_vec()),
            ..Default::default()
        });
        let m = model(graph(vec![n], vec![vi("a", &[2, 3])], vec![]));
        let path = write(&dir, &format!("einsum{k}.onnx"), &m.encode_to_vec());
        expect_check(&path, 1, &["invalid-node", &format!("Einsum: term '{bad}' holds '.', which is not a label")]);
    }
}

/// The contrib Attention's 1-D mask_index is [B], [2B] or [3B + 2]; over a batch of 2^62
/// (`--dim batch=4611686018427387904` on an optimized BERT) `2 * B` overflowed, a debug-build
/// panic. Such a mask fits none of them.
#[test]
fn attention_mask_index_over_a_huge_batch_does_not_overflow() {
    let mut n = node("att", "Attention", &["x", "w", "b", "m"], &["y"]);
    n.domain = Some("com.microsoft".into());
    n.attribute.push(onnx::AttributeProto {
        name: Some("num_heads".into()),
        r#type: Some(onnx::attribute_proto::AttributeType::Int as i32),
        i: Some(2),
        ..Default::default()
    });
    let mut mask = vi("m", &[5]);
    if let Some(type_proto::Value::TensorType(t)) = mask.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.elem_type = Some(6);
    }
    let inputs = vec![vi("x", &[1 << 62, 3, 12]), vi("w", &[12, 36]), vi("b", &[36]), mask];
    let mut m = model(graph(vec![n], inputs, vec![]));
    m.opset_import.push(onnx::OperatorSetIdProto { domain: Some("com.microsoft".into()), version: Some(1) });
    let dir = scratch("attention-huge-batch");
    let path = write(&dir, "att.onnx", &m.encode_to_vec());
    expect_check(&path, 1, &["invalid-node", "a 1-D mask_index of 5 for a batch of 4611686018427387904"]);
}

/// A pooling over a symbolic dim with a stride past `i64::MAX / 2` overflowed (a debug-build
/// panic) where its side condition on the dim took `2 * stride` from the window. Such a stride
/// leaves nothing to assume: the output size is inferred with no side condition.
#[test]
fn pooling_with_a_huge_stride_over_a_symbolic_dim_does_not_overflow() {
    use onnx::attribute_proto::AttributeType;

    let mut x = vi("x", &[1, 1, 1]);
    if let Some(type_proto::Value::TensorType(t)) = x.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.shape.as_mut().unwrap().dim[2].value = Some(tensor_shape_proto::dimension::Value::DimParam("h".into()));
    }
    for (stride, ceil) in [(i64::MAX, 1), (i64::MAX, 0), (1 << 62, 1), (i64::MAX / 2 + 1, 0)] {
        let mut pool = node("p", "MaxPool", &["x"], &["y"]);
        pool.attribute.push(ints_attr("kernel_shape", &[2]));
        pool.attribute.push(ints_attr("strides", &[stride]));
        pool.attribute.push(onnx::AttributeProto {
            name: Some("ceil_mode".into()),
            r#type: Some(AttributeType::Int as i32),
            i: Some(ceil),
            ..Default::default()
        });
        let m = model(graph(vec![pool], vec![x.clone()], vec![]));
        let m = io::decode(&m.encode_to_vec(), Path::new("pool.onnx"), None).unwrap();
        let inf = onnx_bcast::infer::infer(&m, &Default::default());
        assert!(!inf.has_errors(), "stride {stride}, ceil_mode {ceil}");
        assert!(inf.constraints.is_empty(), "stride {stride}: {:?}", inf.constraints);
        let y = m.local(onnx_bcast::Model::MAIN, "y").and_then(|v| inf.shape(v)).cloned().unwrap();
        assert_eq!((y.len(), &y[0], &y[1]), (3, &Dim::Known(1), &Dim::Known(1)), "stride {stride}: {y:?}");
    }
}

/// Resize sizes worked out in floating point were cast with `as i64`, which saturates: scales
/// of 1e30 (or infinity) over a dim of 2 gave a size of 2^63 - 1, and `keep_aspect_ratio_policy`
/// stretched a dim of 5 by 2^63 / 4 to the same. Past `i64::MAX` the size is unknown.
#[test]
fn resize_sizes_past_i64_are_unknown_not_saturated() {
    let x = vi("x", &[1, 1, 4, 5]);
    let infer = |inputs: Vec<&str>, init: onnx::TensorProto, policy: Option<&str>| {
        let mut n = node("r", "Resize", &inputs, &["y"]);
        if let Some(p) = policy {
            n.attribute.push(onnx::AttributeProto {
                name: Some("keep_aspect_ratio_policy".into()),
                r#type: Some(onnx::attribute_proto::AttributeType::String as i32),
                s: Some(p.as_bytes().to_vec()),
                ..Default::default()
            });
        }
        let mut g = graph(vec![n], vec![x.clone()], vec![]);
        g.initializer.push(init);
        let m = io::decode(&model(g).encode_to_vec(), Path::new("resize.onnx"), None).unwrap();
        let inf = onnx_bcast::infer::infer(&m, &Default::default());
        m.local(onnx_bcast::Model::MAIN, "y").and_then(|v| inf.shape(v)).cloned().unwrap()
    };
    let scales = onnx::TensorProto {
        name: Some("s".into()),
        data_type: Some(1),
        dims: vec![4],
        float_data: vec![1.0, 1.0, 1e30, f32::INFINITY],
        ..Default::default()
    };
    let y = infer(vec!["x", "", "s"], scales, None);
    assert_eq!((&y[0], &y[1]), (&Dim::Known(1), &Dim::Known(1)), "{y:?}");
    assert!(y[2].known().is_none() && y[3].known().is_none(), "{y:?}");
    let sizes = onnx::TensorProto {
        name: Some("s".into()),
        data_type: Some(7),
        dims: vec![4],
        int64_data: vec![1, 1, i64::MAX, i64::MAX],
        ..Default::default()
    };
    let y = infer(vec!["x", "", "", "s"], sizes, Some("not_smaller"));
    assert!(y[3].known().is_none(), "5 x (2^63 - 1) / 4 does not fit: {y:?}");
}

/// Sizes read off constants that were clamped or cast into a wrong answer: Range from i64::MIN
/// to i64::MAX by 1 (2^64 - 1 elements) was inferred as i64::MAX elements, OneHot's depth went
/// through `as i64` (1e30 saturated, -5 gave a size of -5, then an unknown size where the
/// spec's inference and onnxruntime 1.32 refuse it: "Input 'depth' must be non-negative"), and
/// AffineGrid took a negative size as a dim.
#[test]
fn sizes_from_constants_are_never_clamped() {
    let int64 = |name: &str, v: &[i64]| onnx::TensorProto {
        name: Some(name.into()),
        data_type: Some(7),
        dims: if v.len() == 1 { vec![] } else { vec![v.len() as i64] },
        int64_data: v.to_vec(),
        ..Default::default()
    };
    let float = |name: &str, v: &[f32]| onnx::TensorProto {
        name: Some(name.into()),
        data_type: Some(1),
        dims: if v.len() == 1 { vec![] } else { vec![v.len() as i64] },
        float_data: v.to_vec(),
        ..Default::default()
    };
    let infer = |n: onnx::NodeProto, inputs: Vec<onnx::ValueInfoProto>, inits: Vec<onnx::TensorProto>| {
        let mut g = graph(vec![n], inputs, vec![]);
        g.initializer = inits;
        let mut m = model(g);
        m.opset_import[0].version = Some(20);
        let m = io::decode(&m.encode_to_vec(), Path::new("clamped.onnx"), None).unwrap();
        let inf = onnx_bcast::infer::infer(&m, &Default::default());
        (m.local(onnx_bcast::Model::MAIN, "y").and_then(|v| inf.shape(v)).cloned(), inf.has_errors())
    };
    let range = node("r", "Range", &["a", "b", "d"], &["y"]);
    let (y, _) = infer(range.clone(), vec![], vec![int64("a", &[i64::MIN]), int64("b", &[i64::MAX]), int64("d", &[1])]);
    let y = y.unwrap();
    assert!(y.len() == 1 && y[0].known().is_none(), "{y:?}");
    let (y, _) = infer(range, vec![], vec![int64("a", &[i64::MIN]), int64("b", &[i64::MAX]), int64("d", &[3])]);
    assert_eq!(y, Some(vec![Dim::Known(6148914691236517205)]), "(2^64 - 1) / 3");
    let one_hot = |depth: f32| {
        let n = node("o", "OneHot", &["i", "depth", "v"], &["y"]);
        let i = onnx::ValueInfoProto { r#type: Some(tensor_type(7, &[3])), ..vi("i", &[]) };
        infer(n, vec![i], vec![float("depth", &[depth]), float("v", &[0.0, 1.0])])
    };
    for depth in [1e30, f32::INFINITY] {
        let (y, errors) = one_hot(depth);
        let y = y.unwrap();
        assert!(!errors && y.len() == 2 && y[0] == Dim::Known(3) && y[1].known().is_none(), "depth {depth}: {y:?}");
    }
    for depth in [-5.0, -1e30, f32::NEG_INFINITY] {
        assert!(one_hot(depth).1, "a depth of {depth} is refused");
    }
    // -0.5 truncates to 0 as onnxruntime's cast does: an empty axis, no error.
    assert_eq!(one_hot(-0.5), (Some(vec![Dim::Known(3), Dim::Known(0)]), false));
    let n = node("g", "AffineGrid", &["theta", "size"], &["y"]);
    let (_, errors) = infer(n, vec![vi("theta", &[1, 2, 3])], vec![int64("size", &[1, 1, -5, 4])]);
    assert!(errors, "a negative AffineGrid size is refused");
}

/// Negative sizes among a node's constants went straight into its output shape with no finding:
/// TopK with k = -5 gave [6, -5], Resize with sizes [1, 1, -4, 7] gave [1, 1, -4, 7], and
/// ConvTranspose's output_shape, Col2Im's image shape and CenterCropPad's shape the same. A
/// negative output size is now the node's error, whichever rule gave it. Over a symbolic dim a
/// negative Tile repeat gave `-2*n`, and Resize's `not_larger` sizes with a negative one an
/// unknown size, where onnxruntime 1.32 refuses both ("'Repeats' input must not contain
/// negative values", "Scale value should be greater than 0").
#[test]
fn negative_output_sizes_are_errors() {
    let int64 = |name: &str, v: &[i64]| onnx::TensorProto {
        name: Some(name.into()),
        data_type: Some(7),
        dims: vec![v.len() as i64],
        int64_data: v.to_vec(),
        ..Default::default()
    };
    let check = |n: onnx::NodeProto, x: onnx::ValueInfoProto, init: onnx::TensorProto, want: &str| {
        let mut g = graph(vec![n], vec![x], vec![]);
        g.initializer.push(init);
        let mut m = model(g);
        m.opset_import[0].version = Some(18);
        let m = io::decode(&m.encode_to_vec(), Path::new("negative.onnx"), None).unwrap();
        let inf = onnx_bcast::infer::infer(&m, &Default::default());
        let y = m.local(onnx_bcast::Model::MAIN, "y").and_then(|v| inf.shape(v)).cloned();
        assert!(
            y.is_none_or(|y| y.iter().all(|d| d.known().is_none_or(|n| n >= 0))),
            "{want}: a negative size is inferred"
        );
        let msgs: Vec<String> = inf.diagnostics.iter().map(|d| d.message.clone()).collect();
        assert!(msgs.iter().any(|m| m.contains(want)), "{want}: {msgs:?}");
    };
    // Over a symbolic axis (over a known one TopK's own rule refuses k = -5).
    let topk = node("t", "TopK", &["x", "k"], &["y", "i"]);
    check(topk, sym_vi("x", "n"), int64("k", &[-5]), "TopK: output 0 would have the negative size -5 at axis 0");
    check(
        node("r", "Resize", &["x", "", "", "s"], &["y"]),
        vi("x", &[1, 1, 4, 5]),
        int64("s", &[1, 1, -4, 7]),
        "Resize: output 0 would have the negative size -4 at axis 2",
    );
    check(
        node("c", "CenterCropPad", &["x", "s"], &["y"]),
        vi("x", &[4, 5]),
        int64("s", &[3, i64::MIN]),
        "negative size -9223372036854775808 at axis 1",
    );
    check(
        node("t", "Tile", &["x", "r"], &["y"]),
        sym_vi("x", "n"),
        int64("r", &[-2]),
        "Tile: the repeat -2 is negative",
    );
    let mut resize = node("r", "Resize", &["x", "", "", "s"], &["y"]);
    resize.attribute.push(onnx::AttributeProto {
        name: Some("keep_aspect_ratio_policy".into()),
        r#type: Some(3),
        s: Some(b"not_larger".to_vec()),
        ..Default::default()
    });
    check(
        resize,
        vi("x", &[1, 1, 2, 3]),
        int64("s", &[1, 1, -4, 6]),
        "Resize: the sizes give the scale -2 under not_larger; scales must be above 0",
    );
}

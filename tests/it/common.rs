//! Helpers shared by the integration tests: the backend-case manifest and model loading.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The folder of the repo's test data.
pub fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// One backend case of a manifest.
#[derive(Debug)]
pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub family: bool,
    pub has_data: bool,
    /// (kind, dtype, shape) of each expected output.
    pub outputs: Vec<(String, Option<String>, Option<Vec<i64>>)>,
}

/// The cases listed in `tests/data/<suite>/manifest.json`.
pub fn cases(suite: &str) -> Vec<Case> {
    let dir = data().join(suite);
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest");
    let doc: Value = serde_json::from_str(&text).expect("manifest is JSON");
    doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().to_string(),
            dir: dir.join(c["name"].as_str().unwrap()),
            family: c["broadcast_family"].as_bool().unwrap(),
            has_data: c["has_data"].as_bool().unwrap(),
            outputs: c["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    (
                        o["kind"].as_str().unwrap().to_string(),
                        o["dtype"].as_str().map(str::to_string),
                        o["shape"].as_array().map(|s| s.iter().map(|d| d.as_i64().unwrap()).collect()),
                    )
                })
                .collect(),
        })
        .collect()
}

/// Reads a test-data tensor file as the executor's tensor, with its name.
pub fn read(path: &Path) -> (String, onnx_bcast::exec::HostTensor) {
    let t = onnx_bcast::io::read_tensor(path).unwrap_or_else(|e| panic!("{e}"));
    let host =
        onnx_bcast::exec::tensor::from_ir(&t, None, u64::MAX).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (t.name, host)
}

/// `dir/PREFIX0.pb`, `dir/PREFIX1.pb`, ... as long as they exist.
pub fn numbered(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    (0..).map(|i| dir.join(format!("{prefix}{i}.pb"))).take_while(|p| p.exists()).collect()
}

/// A property suite's configuration: `default` cases, or `PROPTEST_CASES` when it is set, to
/// run a suite longer by hand (`PROPTEST_CASES=20000 cargo test --test it terms`).
pub fn prop_config(default: u32) -> proptest::test_runner::Config {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    proptest::test_runner::Config { cases, ..proptest::test_runner::Config::default() }
}

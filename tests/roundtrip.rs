//! `save(load(m))` decodes equal to `m`: for every shipped model and every backend case.

mod common;

use std::path::Path;

use onnx_bcast::onnx::ModelProto;
use prost::Message;

/// Loads `path` into the IR, encodes it again and compares with the original message. The
/// comparison is on canonical encodings, so NaN attributes compare by their bits.
fn assert_round_trip(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let original = ModelProto::decode(bytes.as_slice()).unwrap().encode_to_vec();
    let model = onnx_bcast::io::decode(&bytes, path, path.parent()).unwrap();
    let saved = onnx_bcast::io::encode(&model);
    let again = ModelProto::decode(saved.as_slice()).unwrap().encode_to_vec();
    assert!(original == again, "{} changed on a load/save round trip", path.display());
    // And saving is a fixed point.
    let reloaded = onnx_bcast::io::decode(&saved, path, path.parent()).unwrap();
    assert!(onnx_bcast::io::encode(&reloaded) == saved, "{}: save is not a fixed point", path.display());
}

#[test]
fn shipped_models_round_trip() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "onnx") {
            assert_round_trip(&p);
            n += 1;
        }
    }
    assert!(n >= 5);
}

#[test]
fn backend_cases_round_trip() {
    let mut n = 0;
    for suite in ["node", "legacy"] {
        for c in common::cases(suite) {
            assert_round_trip(&c.dir.join("model.onnx"));
            n += 1;
        }
    }
    assert_eq!(n, 1884 + 6);
}

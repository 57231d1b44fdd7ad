//! `save(load(m))` decodes equal to `m`: for every shipped model and every backend case.

use crate::common;

use std::path::Path;

use onnx_bcast::io::proto::ModelProto;
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

#[test]
fn files_past_a_mebibyte_are_written_whole() {
    // From 1 MiB, files go to the disk in 4 MiB blocks staged in aligned memory, the last one
    // padded, then cut to length: sizes around both boundaries must read back unchanged.
    let dir = std::env::temp_dir().join(format!("onnx-bcast-direct-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for size in [(1 << 20) - 1, 1 << 20, (1 << 20) + 1, 4 << 20, (4 << 20) + 4095, (8 << 20) + 1, 9_000_017] {
        let bytes: Vec<u8> = (0..size)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let path = dir.join("out.bin");
        onnx_bcast::io::write_atomic(&path, &bytes).unwrap();
        let back = std::fs::read(&path).unwrap();
        assert_eq!(back.len(), size);
        assert!(back == bytes, "{size} bytes did not read back");
    }
    // Nothing but the file is left in the folder.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

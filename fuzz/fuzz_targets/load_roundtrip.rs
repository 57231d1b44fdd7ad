//! Bytes -> load -> validate + infer -> save never panics, and saving a loaded model is a fixed
//! point: `save(load(save(load(b)))) == save(load(b))`, with nothing left that would be lost;
//! two loads of the same bytes give the same findings.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use onnx_bcast::{infer, io, ir};

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.onnx");
    // No folder: nothing may be read from disk.
    let Ok(model) = io::decode(data, path, None) else { return };
    let inf = infer::infer(&model, &infer::Options::default());
    for d in &inf.diagnostics {
        let _ = d.to_string();
    }
    let _ = ir::dump(&model, &|v| inf.ty(v).map(|t| format!("{t:?}")));
    // Deterministic: a second load (its hash maps seeded differently) finds the same things.
    let twin = io::decode(data, path, None).expect("the same bytes load twice");
    let inf2 = infer::infer(&twin, &infer::Options::default());
    assert!(inf.diagnostics == inf2.diagnostics, "diagnostics differ between two loads");
    assert!(inf.constraints == inf2.constraints, "constraints differ between two loads");
    assert!(model.lossy == twin.lossy);
    let saved = io::encode(&model);
    let again = match io::decode(&saved, path, None) {
        Ok(m) => m,
        Err(e) => panic!("a saved model does not load again: {e}"),
    };
    assert!(again.lossy.is_empty(), "a saved model holds unknown fields: {:?}", again.lossy);
    assert!(io::encode(&again) == saved, "saving a loaded model is not a fixed point");
});

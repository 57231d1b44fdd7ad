//! Inference on real exported models kept in `tests/data/real/` (see its README).

use crate::common;

use onnx_bcast::infer::{infer, Options};
use onnx_bcast::shape::Dim;
use onnx_bcast::Model;

#[test]
fn paddle_ocr_classifier_every_tensor_ranked() {
    let path = common::data().join("real/ch_ppocr_mobile_v2.0_cls_infer.onnx");
    let model = onnx_bcast::load(&path).expect("loads");
    let inf = infer(&model, &Options::default());
    assert!(!inf.has_errors(), "{:?}", inf.diagnostics);
    let main = model.graph(Model::MAIN);
    let outputs: Vec<_> =
        main.order().iter().flat_map(|n| model.node(*n).outputs().iter().flatten().copied()).collect();
    assert_eq!(outputs.len(), 566);
    let unranked: Vec<&str> = outputs.iter().filter(|v| inf.shape(**v).is_none()).map(|v| model.name(*v)).collect();
    assert!(unranked.is_empty(), "{unranked:?}");
    // onnxruntime: [1, 2] for a batch of 1; the batch is the input's `-1`, a fresh symbol here.
    let out = inf.shape(main.outputs[0].value).expect("output ranked");
    assert_eq!(out.len(), 2);
    assert_eq!(out[1], Dim::Known(2));
    assert!(matches!(&out[0], Dim::Term(t) if t.has_fresh()), "{out:?}");
}

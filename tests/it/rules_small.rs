//! Every shape rule over small and empty sizes never panics: for each row of the op table, one-node
//! models with inputs of random small shapes (sizes 0 to 3, symbols, ranks 0 to 4), small integer
//! inputs stored as initializers with random contents (the shape tensors rules read), and random
//! common attributes, inferred and expanded. A wav2vec2 export whose feature length reached 0
//! panicked in a Slice rule before (`slice_len` clamped with a minimum above its maximum).

use crate::build;

use std::panic::{catch_unwind, AssertUnwindSafe};

use build::D;
use onnx_bcast::io::proto::{
    attribute_proto::AttributeType, tensor_proto::DataType, AttributeProto, NodeProto, TensorProto,
};
use prost::Message;

/// A small deterministic generator (xorshift), so a failure names a case that replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn small(&mut self) -> i64 {
        // Mostly -3..=3, now and then an extreme.
        match self.below(16) {
            0 => i64::MAX,
            1 => i64::MIN,
            _ => self.below(7) as i64 - 3,
        }
    }
}

/// The first element type an input's constraint allows (int64 where it may), as an ONNX code.
fn elem_type(def: &onnx_bcast::ops::OpDef, slot: usize) -> i32 {
    match def.schema.inputs.of(slot) {
        Some((_, e)) if e.set & (1 << DataType::Int64 as u64) != 0 => DataType::Int64 as i32,
        Some((_, e)) if e.set != 0 => e.set.trailing_zeros() as i32,
        _ => DataType::Float as i32,
    }
}

fn ints_attr(name: &str, v: Vec<i64>) -> AttributeProto {
    AttributeProto { name: Some(name.into()), r#type: Some(AttributeType::Ints as i32), ints: v, ..Default::default() }
}

fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    }
}

/// A one-node model of `def` with `n` inputs and `outs` outputs drawn from `rng`.
fn case(def: &onnx_bcast::ops::OpDef, n: usize, outs: usize, rng: &mut Rng) -> Vec<u8> {
    let mut inputs = Vec::new();
    let mut inits = Vec::new();
    let mut names = Vec::new();
    for slot in 0..n {
        let name = format!("i{slot}");
        let elem = elem_type(def, slot);
        let rank = rng.below(5) as usize;
        let dims: Vec<D> = (0..rank)
            .map(|_| match rng.below(6) {
                0 => D::S("n"),
                k => D::N(k as i64 - 1),
            })
            .collect();
        // Small integer tensors get contents: the shapes, axes and bounds rules read.
        let known: Option<Vec<i64>> = dims.iter().map(|d| if let D::N(k) = d { Some(*k) } else { None }).collect();
        match known.filter(|k| elem == DataType::Int64 as i32 && k.len() <= 1 && rng.below(4) != 0) {
            Some(k) => {
                let len = k.iter().product::<i64>() as usize;
                inits.push(TensorProto {
                    name: Some(name.clone()),
                    data_type: Some(elem),
                    dims: k,
                    int64_data: (0..len).map(|_| rng.small()).collect(),
                    ..Default::default()
                });
            }
            None => inputs.push(build::typed(&name, DataType::try_from(elem).unwrap_or(DataType::Float), &dims)),
        }
        names.push(name);
    }
    let mut node = NodeProto {
        name: Some("n0".into()),
        op_type: Some(def.schema.op.into()),
        domain: Some(def.schema.domain.into()),
        input: names,
        output: (0..outs.max(1)).map(|k| format!("y{k}")).collect(),
        ..Default::default()
    };
    for a in ["axis", "keepdims", "group", "k", "blocksize", "batch_dims", "broadcast", "ceil_mode"] {
        if rng.below(3) == 0 {
            node.attribute.push(int_attr(a, rng.small()));
        }
    }
    for a in ["axes", "perm", "kernel_shape", "strides", "pads", "dilations", "starts", "ends", "split", "shape"] {
        if rng.below(3) == 0 {
            let len = rng.below(5) as usize;
            node.attribute.push(ints_attr(a, (0..len).map(|_| rng.small()).collect()));
        }
    }
    let mut m = build::model(def.schema.since.max(1), inputs, vec![node], &["y0"]);
    if !def.schema.domain.is_empty() {
        m.opset_import.push(onnx_bcast::io::proto::OperatorSetIdProto {
            domain: Some(def.schema.domain.into()),
            version: Some(def.schema.since),
        });
    }
    m.graph.as_mut().unwrap().initializer = inits;
    m.encode_to_vec()
}

/// `RULES_SMALL_ROUNDS` (cases per row, default 12) and `RULES_SMALL_SEED` run it longer or
/// elsewhere by hand.
#[test]
fn every_rule_survives_small_and_empty_sizes() {
    let env = |k: &str, default: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let mut rng = Rng(env("RULES_SMALL_SEED", 0x9e37_79b9_7f4a_7c15).max(1));
    let rounds = env("RULES_SMALL_ROUNDS", 12);
    let mut failures = Vec::new();
    let mut cases = 0;
    for def in onnx_bcast::ops::table() {
        for _ in 0..rounds {
            // Counts within the schema's, up to a few past its least.
            let a = def.schema.arity;
            let n = (a.min_inputs + rng.below(u64::from(a.max_inputs.min(a.min_inputs + 3) - a.min_inputs) + 1) as u32)
                as usize;
            let outs = (a.min_outputs
                + rng.below(u64::from(a.max_outputs.min(a.min_outputs + 1) - a.min_outputs) + 1) as u32)
                as usize;
            let bytes = case(def, n, outs, &mut rng);
            cases += 1;
            let ran = catch_unwind(AssertUnwindSafe(|| {
                let Ok(mut model) = onnx_bcast::io::decode(&bytes, std::path::Path::new("case.onnx"), None) else {
                    return;
                };
                let inf = onnx_bcast::infer::infer(&model, &Default::default());
                if !inf.has_errors() {
                    onnx_bcast::rewrite::expand(&mut model, &inf).unwrap();
                }
            }));
            if ran.is_err() {
                let m = onnx_bcast::io::proto::ModelProto::decode(bytes.as_slice()).unwrap();
                failures.push(format!("{} (opset {}): {:?}", def.schema.op, def.schema.since, m.graph.unwrap()));
            }
        }
    }
    assert!(cases >= 600 * rounds, "only {cases} cases");
    assert!(failures.is_empty(), "{} cases panicked:\n{}", failures.len(), failures.join("\n\n"));
}

//! The prost types generated from `proto/onnx.proto`, and (`fields`) the field numbers and
//! the table of known fields that `build.rs` writes from the same descriptor, for the wire-level
//! loader, writer and unknown-field walk in `io`.

#![allow(clippy::all, missing_docs, missing_debug_implementations)]

include!(concat!(env!("OUT_DIR"), "/onnx.rs"));

/// Field numbers (`number::node_proto::INPUT`) and known fields (`field`) of each message.
pub(crate) mod fields {
    include!(concat!(env!("OUT_DIR"), "/onnx_fields.rs"));
}

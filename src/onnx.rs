//! The prost types generated from `proto/onnx.proto`, nothing else.

#![allow(clippy::all, missing_docs, missing_debug_implementations)]

include!(concat!(env!("OUT_DIR"), "/onnx.rs"));

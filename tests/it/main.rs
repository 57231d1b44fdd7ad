//! The integration tests, as one crate so that they link once: each module is the suite of
//! one part (`cli`: the command line's contract; `node_cases`: onnx's backend node cases;
//! `bad_input`: malformed models; ...). `tests/exec_memory.rs` stays a crate of its own: it
//! counts the allocations of its whole process.

mod build;
mod common;

mod bad_input;
mod broadcast_props;
mod cli;
mod exec_cases;
mod exec_props;
mod expand_props;
mod fuse_props;
mod node_cases;
mod ort_cases;
mod perf;
mod real_models;
mod rewrite_cases;
mod rewrite_cli;
mod rewrite_exec;
mod rewrite_snapshots;
mod roundtrip;
mod rules_small;
mod scope;
mod seeds;
mod symbolic;
mod terms;
mod types;
mod wire;

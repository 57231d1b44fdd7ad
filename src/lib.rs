//! onnx-bcast: an ONNX broadcasting pass.
//!
//! Load a model into the IR ([`io::load`]), infer every tensor's type and shape with the
//! broadcasting rules ([`infer::infer`]), rewrite it, run it, save it ([`io::save`]).

pub mod contract;
pub mod diag;
pub mod diff;
pub mod dtype;
pub mod exec;
pub mod infer;
pub mod io;
pub mod ir;
pub mod onnx;
pub mod ops;
pub mod provenance;
pub mod report;
pub mod rewrite;
pub mod shape;
pub mod validate;

pub use diag::{Code, Diagnostic, Error, Result, Severity};
pub use io::{load, save};
pub use ir::Model;

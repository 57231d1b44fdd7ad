//! onnx-bcast: an ONNX broadcasting pass.
//!
//! Load a model into the IR ([`io::load`]), infer every tensor's type and shape with the
//! broadcasting rules ([`infer::infer`]), rewrite it ([`rewrite::run`]), run it
//! ([`exec::run`]), save it ([`io::save`]).
//!
//! ```
//! use onnx_bcast::{infer, io, Model, Severity};
//!
//! let model = io::load("models/attention_mask.onnx".as_ref())?;
//! let inf = infer::infer(&model, &infer::Options::default());
//! let out = model.graph(Model::MAIN).outputs[0].value;
//! assert_eq!(inf.ty(out).unwrap().to_string(), "float32[batch, 12, seq, seq]");
//! assert!(inf.diagnostics.iter().all(|d| d.severity != Severity::Error));
//!
//! // A broadcast that cannot work is an error finding naming the node and the axis.
//! let broken = io::load("models/broken.onnx".as_ref())?;
//! let found = &infer::infer(&broken, &infer::Options::default()).diagnostics[0];
//! assert_eq!((found.code.as_str(), found.node.as_deref(), found.axis), ("broadcast-incompatible", Some("add_bad"), Some(1)));
//! # Ok::<(), onnx_bcast::Error>(())
//! ```

pub mod contract;
pub mod diag;
pub mod diff;
pub mod dtype;
pub mod exec;
pub mod infer;
pub mod io;
pub mod ir;
mod onnx;
pub mod ops;
pub mod provenance;
pub mod report;
pub mod rewrite;
pub mod shape;
pub mod validate;

pub use diag::{Code, Diagnostic, Error, Result, Severity};
pub use io::{load, save};
pub use ir::Model;

//! Errors (the job could not be done) and diagnostics (findings about a model that was read).

use std::fmt;
use std::path::PathBuf;

/// Why a job could not be done. The CLI exits 2 on any of these.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: not a valid ONNX model: {reason}", path.display())]
    Decode { path: PathBuf, reason: String },
    #[error("{}: {size} bytes is over the limit of {limit} bytes (protobuf's 2 GiB message limit unless ONNX_BCAST_MAX_BYTES lowers it); store large weights as external data", path.display())]
    TooLarge { path: PathBuf, size: u64, limit: u64 },
    #[error("{}: the model has no graph", path.display())]
    NoGraph { path: PathBuf },
    #[error("{}: no *.onnx files in this directory", path.display())]
    NoModels { path: PathBuf },
    #[error("{}: subgraphs nest deeper than {limit} levels (at {graph})", path.display())]
    TooDeep { path: PathBuf, graph: String, limit: usize },
    #[error("tensor '{tensor}': {reason}")]
    Tensor { tensor: String, reason: String },
    #[error("external data of tensor '{tensor}': {reason}")]
    ExternalData { tensor: String, reason: String },
    #[error("{0}")]
    Usage(String),
    #[error("{}: refusing to write: the model holds data this build cannot write back ({}); pass --allow-lossy to drop it", path.display(), places.join("; "))]
    Lossy { path: PathBuf, places: Vec<String> },
    #[error("{}: refusing to overwrite the input model; pass --in-place to replace it", path.display())]
    WouldOverwrite { path: PathBuf },
    #[error("node {node} ({op}): {reason}")]
    Exec { node: String, op: String, reason: String },
    /// The executor does not run what the model holds: an op without a kernel (`what` is the
    /// op), an op with subgraphs, an element type, a cast to one.
    #[error("{}the executor does not run {what}", place.as_ref().map(|p| format!("{p}: ")).unwrap_or_default())]
    Unsupported { place: Option<String>, what: String },
    #[error("{what} needs {bytes} bytes, over the memory budget of {budget} bytes")]
    Budget { what: String, bytes: u128, budget: u64 },
    #[error("the model has {errors} error finding{}; it is not rewritten", if *errors == 1 { "" } else { "s" })]
    Findings { errors: usize },
    #[error("the dim '{name}' is {what}, but no graph input declares it ({})", declared_list(declared))]
    UnknownDim { name: String, what: &'static str, declared: Vec<String> },
}

/// The symbolic dims the graph inputs declare, for [`Error::UnknownDim`].
fn declared_list(declared: &[String]) -> String {
    match declared {
        [] => "the graph inputs declare no symbolic dim".into(),
        names => format!("they declare: {}", names.join(", ")),
    }
}

/// The result type of the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// A finding about a model: what is wrong, where, and (for broadcasting) the axis and the
/// (input, size) pairs that clash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable code, e.g. `broadcast-incompatible`.
    pub code: &'static str,
    /// The graph path: `main` or e.g. `if0/then_branch`.
    pub graph: String,
    /// The node label (`name`, or `op_type#index`), when a node is concerned.
    pub node: Option<String>,
    pub op_type: Option<String>,
    /// The output axis that clashes, for broadcasting.
    pub axis: Option<usize>,
    /// Each input concerned: its name and rendered shape.
    pub inputs: Vec<(String, String)>,
    /// The clashing (input index, size) pairs, for broadcasting.
    pub sizes: Vec<(usize, String)>,
    /// Where each clashing size came from (input index, the path in words).
    pub origins: Vec<(usize, String)>,
    pub message: String,
}

impl Diagnostic {
    /// A finding with the given severity, code and message and nothing else set.
    pub fn new(severity: Severity, code: &'static str, graph: &str, message: String) -> Diagnostic {
        Diagnostic {
            severity,
            code,
            graph: graph.to_string(),
            node: None,
            op_type: None,
            axis: None,
            inputs: Vec::new(),
            sizes: Vec::new(),
            origins: Vec::new(),
            message,
        }
    }
}

impl fmt::Display for Diagnostic {
    /// Renders like a compiler: a headline, then the node, its inputs' shapes and the axis.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.severity, self.code, self.message)?;
        if let (Some(node), Some(op)) = (&self.node, &self.op_type) {
            write!(f, "\n  --> {}: {node} ({op})", self.graph)?;
        } else {
            write!(f, "\n  --> {}", self.graph)?;
        }
        for (i, (name, shape)) in self.inputs.iter().enumerate() {
            let mark = self.sizes.iter().find(|(k, _)| *k == i);
            match (mark, self.axis) {
                (Some((_, size)), Some(axis)) => {
                    write!(f, "\n   | input {i} '{name}': {shape}   <- {size} at axis {axis}")?
                }
                _ => write!(f, "\n   | input {i} '{name}': {shape}")?,
            }
        }
        for (i, origin) in &self.origins {
            write!(f, "\n   = input {i}: {origin}")?;
        }
        Ok(())
    }
}

//! Errors (the job could not be done) and diagnostics (findings about a model that was read).

use std::fmt;
use std::path::PathBuf;

/// Why a job could not be done. The CLI exits 2 on any of these.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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

/// Defines [`Code`]: every finding's stable code, its text and what it means, in one place
/// (the SARIF report's rules and `docs/cli.md` are made from it).
macro_rules! codes {
    ($($variant:ident = $text:literal: $help:literal,)*) => {
        /// A finding's stable code, e.g. `broadcast-incompatible`. New codes may come.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $(#[doc = $help] $variant,)*
        }

        impl Code {
            /// Every code, in the order of the table.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The code as users see it: `broadcast-incompatible`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $text,)* }
            }

            /// One sentence on what the finding means.
            pub fn description(self) -> &'static str {
                match self { $(Code::$variant => $help,)* }
            }
        }
    };
}

codes! {
    BroadcastIncompatible = "broadcast-incompatible": "The inputs of a broadcasting op have sizes that do not broadcast (neither equal nor 1), or an input has more axes than the output it must broadcast to.",
    WindowTooLarge = "window-too-large": "A convolution or pooling window (with dilation and padding), or reflect padding, is larger than the axis it slides over: the node has no valid output.",
    ResizeEmpty = "resize-empty": "A Resize gives an empty output axis at these sizes; onnxruntime may refuse it.",
    MachineDependent = "machine-dependent": "onnxruntime runs the node on some machines only: an NCHWc layout (ORT_ENABLE_ALL) in blocks of 8 channels, or of 16 where AVX-512 is, that the other block width refuses.",
    RuntimeDiffers = "runtime-differs": "The spec and onnxruntime disagree on this node (other output shapes, or onnxruntime refuses it): inference follows the spec, and the finding says what onnxruntime does.",
    SymbolContradiction = "symbol-contradiction": "A symbolic size must equal two different sizes at once: no input size satisfies the model.",
    Unsatisfiable = "unsatisfiable": "No size of an input dim satisfies every condition the model puts on it: the model cannot run.",
    RequireFailed = "require-failed": "A size that `check --require` asks for is outside the dim's contract.",
    DeclaredShapeMismatch = "declared-shape-mismatch": "A type or shape declared in the model (value_info, a graph output, a graph input beside its initializer) contradicts the inferred one.",
    DeclaredTypeFixed = "declared-type-fixed": "A declared type that contradicted inference was replaced by the inferred one (`--fix-declared`).",
    TypeMismatch = "type-mismatch": "Inputs that must share an element type have different ones.",
    TypeUnsupported = "type-unsupported": "An input's element type, or its kind (tensor, sequence, optional), is not one the op's schema allows at the model's opset.",
    InvalidNode = "invalid-node": "A node's attributes or inputs break its op's rules (an axis out of range, a missing attribute, a string attribute outside its list, a bad count or an empty required input).",
    UnknownOp = "unknown-op": "No shape rule is known for the op: its outputs' shapes are unknown, and inference carries on past it.",
    NoOpset = "no-opset": "The model imports no opset for the default domain; the newest known one is assumed.",
    OpsetUnknown = "opset-unknown": "The model imports a newer opset of a known domain than this build knows: onnxruntime 1.32 refuses it; its ops are inferred by the newest schemas known.",
    DomainNotImported = "domain-not-imported": "A node's domain is not among the opsets its graph imports: onnxruntime refuses the model.",
    BranchRankDiffers = "branch-rank-differs": "The branches of an If give outputs of different ranks: the condition decides what later ops get.",
    UndefinedInput = "undefined-input": "A node uses a tensor that no graph input, initializer or earlier node defines.",
    UndefinedOutput = "undefined-output": "A graph output names a tensor that nothing defines.",
    DuplicateOutput = "duplicate-output": "Two nodes write the same tensor.",
    DuplicateDefinition = "duplicate-definition": "A name is defined twice in one graph (input, initializer or node output).",
    GraphCycle = "graph-cycle": "Nodes depend on each other in a cycle: the graph cannot be run in any order.",
    ZeroDimInput = "zero-dim-input": "A graph input declares a size of 0: only empty tensors can be fed to it.",
    NegativeDim = "negative-dim": "A declared or stored size is negative (-1 is read as unknown; any other negative size is an error).",
    SizeOverflow = "size-overflow": "A tensor's element or byte count overflows 64 bits.",
    TensorDataSize = "tensor-data-size": "A stored tensor's data does not match its dims and element type.",
    ExternalDataMissing = "external-data-missing": "A tensor's external-data file is missing or shorter than its offset and length.",
    ExternalDataUnsafe = "external-data-unsafe": "A tensor's external-data path leaves the model's folder (absolute, `..`, or a link) and is not read.",
    ExpandSkipped = "expand-skipped": "`expand` left an implicit broadcast as it was, because its target shape could not be computed.",
    InputAdded = "input-added": "`diff`: the new model has a graph input the old one lacks.",
    InputRemoved = "input-removed": "`diff`: a graph input of the old model is gone.",
    InputTypeChanged = "input-type-changed": "`diff`: a graph input's element type changed.",
    InputShapeChanged = "input-shape-changed": "`diff`: a graph input's shape changed.",
    OutputRemoved = "output-removed": "`diff`: a graph output of the old model is gone.",
    OutputTypeChanged = "output-type-changed": "`diff`: a graph output's element type changed.",
    OutputShapeChanged = "output-shape-changed": "`diff`: a graph output's inferred shape changed.",
    SymbolRenamed = "symbol-renamed": "`diff`: an input axis's symbolic size has a new name.",
    DimFixed = "dim-fixed": "`diff`: an input axis that was symbolic now has a fixed size.",
    ContractNarrowed = "contract-narrowed": "`diff`: an input dim no longer accepts a size it accepted before.",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A finding about a model: what is wrong, where, and (for broadcasting) the axis and the
/// (input, size) pairs that clash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable code, e.g. `broadcast-incompatible`.
    pub code: Code,
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
    pub fn new(severity: Severity, code: Code, graph: &str, message: String) -> Diagnostic {
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

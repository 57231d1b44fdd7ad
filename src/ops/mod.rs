//! The op table: one row per operator (and per opset version where its rule changes), naming
//! its shape rule and its element-type rule. Adding an op touches this table only.

mod rules;

pub use rules::MAX_TRACKED;

use crate::dtype::DType;
use crate::ir::{Model, Node};
use crate::shape::{Assumption, BroadcastError, Dim, Type};

/// How an op's output shapes follow from its inputs.
#[derive(Clone, Copy, Debug)]
pub enum ShapeRule {
    /// Multidirectional (numpy) broadcasting of all inputs: Add, Sum, Where, ...
    Multi,
    /// All inputs must have one shape, which the output takes (Sum/Max/Min/Mean before
    /// opset 8).
    Equal,
    /// Input `from` stretches unidirectionally to input `to`'s shape (PRelu's slope).
    Uni { to: usize, from: usize },
    /// The legacy (opset < 7) form: with `broadcast=1`, input 1 matches a run of input 0's
    /// axes starting at `axis`; without it, the shapes must be equal.
    Legacy,
    /// Input 0 broadcast against the shape held in input 1.
    Expand,
    /// The output has input `i`'s shape.
    SameAs(usize),
    /// Any other rule.
    Custom(CustomRule),
}

impl ShapeRule {
    /// True for the broadcasting family: rules under which inputs of different shapes meet.
    pub fn broadcasts(&self) -> bool {
        matches!(self, ShapeRule::Multi | ShapeRule::Uni { .. } | ShapeRule::Legacy)
    }
}

/// How an op's output element types follow from its inputs.
#[derive(Clone, Copy, Debug)]
pub enum TypeRule {
    /// The element type of input `i`.
    SameAs(usize),
    /// Always this type (comparisons give bool).
    Fixed(DType),
    /// The type named by the `to` attribute (Cast).
    AttrTo,
    /// Decided by the custom shape rule.
    Custom,
}

/// A shape rule written as a function.
pub type CustomRule = fn(&Ctx) -> Result<Out, RuleError>;

/// What a rule sees of a node.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub model: &'a Model,
    pub node: &'a Node,
    /// The version of the node's domain the model imports.
    pub opset: i64,
    /// Each input slot's type, when known (`None` also for omitted optional inputs).
    pub inputs: Vec<Option<&'a Type>>,
    /// Each input slot's contents, when it is a small integer tensor whose elements are known
    /// or symbolic (shape tensors).
    pub values: Vec<Option<&'a [Dim]>>,
}

impl Ctx<'_> {
    /// Input `i`'s shape, when its rank is known.
    pub fn shape(&self, i: usize) -> Option<&[Dim]> {
        self.inputs.get(i).copied().flatten().and_then(Type::shape).map(Vec::as_slice)
    }

    /// Input `i`'s element type.
    pub fn dtype(&self, i: usize) -> Option<DType> {
        self.inputs.get(i).copied().flatten().and_then(Type::dtype)
    }

    /// Input `i`'s contents, for a small integer tensor.
    pub fn value(&self, i: usize) -> Option<&[Dim]> {
        self.values.get(i).copied().flatten()
    }
}

/// What a rule concludes: one entry per output slot.
#[derive(Clone, Debug, Default)]
pub struct Out {
    pub types: Vec<Option<Type>>,
    /// Contents of small integer outputs (shape tensors), when derivable.
    pub values: Vec<Option<Vec<Dim>>>,
    /// Side conditions assumed, with the output axis each concerns.
    pub assumptions: Vec<(usize, Assumption)>,
}

/// Why a rule could not give output types.
#[derive(Clone, Debug)]
pub enum RuleError {
    /// Inputs that do not broadcast.
    Broadcast(BroadcastError<Dim>),
    /// Anything else that makes the node invalid.
    Invalid(String),
}

/// One row of the op table.
#[derive(Clone, Copy, Debug)]
pub struct OpDef {
    pub op: &'static str,
    pub domain: &'static str,
    /// The first opset version this row describes; it holds until the next row of the op.
    pub since: i64,
    pub shape: ShapeRule,
    pub ty: TypeRule,
}

/// The row for `op` in `domain` at opset `version`; `None` when the op is unknown or did not
/// exist yet at that version.
pub fn lookup(domain: &str, op: &str, version: i64) -> Option<&'static OpDef> {
    let domain = if domain == "ai.onnx" { "" } else { domain };
    rules::TABLE.iter().filter(|d| d.op == op && d.domain == domain && d.since <= version).max_by_key(|d| d.since)
}

/// True when `op` is known in `domain` at any version.
pub fn exists(domain: &str, op: &str) -> bool {
    let domain = if domain == "ai.onnx" { "" } else { domain };
    rules::TABLE.iter().any(|d| d.op == op && d.domain == domain)
}

/// Every row, for tests and listings.
pub fn table() -> &'static [OpDef] {
    rules::TABLE
}

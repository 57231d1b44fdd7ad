//! The op table: one row per operator (and per opset version where its rule changes), naming
//! its shape rule and its element-type rule. Adding an op touches this table only.

mod contrib;
mod declared;
pub mod registry;
mod rules;
mod table;

pub use contrib::contrib;
pub use declared::OpRules;
pub use registry::{Family, Fuse, Meaning};
pub use rules::{tensor_floats, tensor_ints, tensor_strings, MAX_TRACKED};

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::dtype::DType;
use crate::ir::{Model, Node};
use crate::shape::{Assumption, BroadcastError, Dim, Type};

/// How an op's output shapes follow from its inputs.
#[derive(Clone, Copy, Debug)]
pub enum ShapeRule {
    /// Multidirectional (numpy) broadcasting of all inputs: Add, Sum, Where, ...
    Multi,
    /// All inputs must have one shape, which the output takes (SwiGLU; Sum/Max/Min/Mean before
    /// opset 8). The text says why, for the finding.
    Equal(&'static str),
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

/// One entry per input slot of a node: inline for up to four, the usual case.
pub type PerInput<T> = smallvec::SmallVec<[T; 4]>;

/// One entry per output slot of a node: inline for one, the usual case.
pub type PerOutput<T> = smallvec::SmallVec<[T; 1]>;

/// What a rule sees of a node.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub model: &'a Model,
    pub node: &'a Node,
    /// The version of the node's domain the model imports.
    pub opset: i64,
    /// Each input slot's type, when known (`None` also for omitted optional inputs).
    pub inputs: PerInput<Option<&'a Type>>,
    /// Each input slot's contents, when it is a small integer tensor whose elements are known
    /// or symbolic (shape tensors). Shorter than `inputs` (empty) when the slots past its end
    /// have none: read it with `value`.
    pub values: PerInput<Option<&'a [Dim]>>,
    /// Each input slot's contents, when it is a small floating-point tensor whose elements are
    /// known (Resize scales, Range bounds); read with `float_value`, as `values`.
    pub floats: PerInput<Option<&'a [f64]>>,
    /// Each input slot's contents, when it is a small string tensor; read with `string_value`.
    pub strings: PerInput<Option<&'a [String]>>,
    /// Each input slot's contents, when it is a small floating-point tensor of sizes over a
    /// whole number; read with `ratio`, as `values`.
    pub ratios: PerInput<Option<&'a Ratio>>,
    /// What is known of each input slot's elements where its contents are not held; read
    /// with `fill` and `between`.
    pub spreads: PerInput<Option<&'a Spread>>,
    /// The inferred types of the outputs of each subgraph the node holds, by attribute name.
    pub subgraph_outputs: Vec<(&'a str, Vec<Option<Type>>)>,
    /// For Loop: the body's condition output is known true whenever its condition input is.
    pub loop_cond_stays_true: bool,
}

impl Ctx<'_> {
    /// Input `i`'s shape, when its rank is known (never for an omitted input).
    pub fn shape(&self, i: usize) -> Option<&[Dim]> {
        self.inputs.get(i).copied().flatten().and_then(Type::shape).map(Vec::as_slice)
    }

    /// Input `i`'s element type.
    pub fn dtype(&self, i: usize) -> Option<DType> {
        self.inputs.get(i).copied().flatten().and_then(Type::dtype)
    }

    /// Input `i`'s contents, for a small integer tensor (or a float one holding sizes cast
    /// to float: whole numbers, which only moves and Range read).
    pub fn value(&self, i: usize) -> Option<&[Dim]> {
        self.values.get(i).copied().flatten()
    }

    /// Input `i`'s contents, for a small floating-point tensor.
    pub fn float_value(&self, i: usize) -> Option<&[f64]> {
        self.floats.get(i).copied().flatten()
    }

    /// Input `i`'s contents, for a small string tensor.
    pub fn string_value(&self, i: usize) -> Option<&[String]> {
        self.strings.get(i).copied().flatten()
    }

    /// Input `i`'s floating-point contents as sizes over one whole number: whole contents
    /// (over 1), a [`Ratio`], or known numbers that are whole once multiplied by a power of
    /// two up to 1024 (exact in binary: `0.5` is 1/2).
    pub fn ratio(&self, i: usize) -> Option<Ratio> {
        if let Some(r) = self.ratios.get(i).copied().flatten() {
            return Some(r.clone());
        }
        if let Some(v) = self.value(i) {
            return Some(Ratio { num: v.to_vec(), den: 1 });
        }
        let f = self.float_value(i)?;
        let den = (0..=10).map(|p| 1i64 << p).find(|d| f.iter().all(|x| (x * *d as f64).fract() == 0.0))?;
        let num = f
            .iter()
            .map(|x| x * den as f64)
            .map(|x| (x.abs() < 9e15).then(|| Dim::Known(x as i64)))
            .collect::<Option<_>>()?;
        Some(Ratio { num, den })
    }

    /// The number every element of input `i` equals, for an input whose contents are not held
    /// (held contents are read whole, with `value` or `float_value`).
    pub fn fill(&self, i: usize) -> Option<f64> {
        match self.spreads.get(i).copied().flatten()? {
            Spread::Fill(x) => Some(*x),
            Spread::Between(..) | Spread::Columns(_) => None,
        }
    }

    /// Bounds on the elements of input `i`, an integer tensor of held contents or of a known
    /// [`Spread`] (`None` for empty contents).
    pub fn between(&self, i: usize) -> Option<Bounds> {
        if let Some(v) = self.value(i) {
            let v: Vec<&Dim> = v.iter().collect();
            return (!v.is_empty()).then(|| Bounds { lo: Dim::min_of(&v), hi: Dim::max_of(&v), tight: true });
        }
        match self.spreads.get(i).copied().flatten()?.fit(None) {
            Spread::Between(b) => Some(b),
            Spread::Fill(x) if x.fract() == 0.0 && x.abs() < 9e15 => {
                Some(Bounds { lo: Dim::Known(x as i64), hi: Dim::Known(x as i64), tight: true })
            }
            Spread::Fill(_) | Spread::Columns(_) => None,
        }
    }

    /// Input `i`'s contents when every element is a known integer.
    pub fn ints(&self, i: usize) -> Option<Vec<i64>> {
        self.value(i)?.iter().map(Dim::known).collect()
    }

    /// Input `i`'s contents as numbers, from integer or floating-point contents.
    pub fn numbers(&self, i: usize) -> Option<Vec<f64>> {
        match self.float_value(i) {
            Some(f) => Some(f.to_vec()),
            None => Some(self.ints(i)?.into_iter().map(|x| x as f64).collect()),
        }
    }

    /// True when input slot `i` is present (not omitted).
    pub fn has(&self, i: usize) -> bool {
        self.node.inputs.get(i).copied().flatten().is_some()
    }

    /// True when output slot `o` is asked for (not omitted).
    pub fn asks(&self, o: usize) -> bool {
        self.node.outputs().get(o).copied().flatten().is_some()
    }

    /// This context as seen by another op's rule at `opset`, with input `i`'s type and
    /// contents replaced where given: a contrib op that is a standard op in another layout or
    /// with other defaults runs the standard rule on the view.
    pub fn view<'b>(
        &'b self,
        opset: i64,
        input: Option<(usize, &'b Type)>,
        value: Option<(usize, &'b [Dim])>,
    ) -> Ctx<'b> {
        let mut inputs: PerInput<Option<&'b Type>> = self.inputs.iter().copied().collect();
        let mut values: PerInput<Option<&'b [Dim]>> = self.values.iter().copied().collect();
        // An omitted input stays without a type, so that `shape` and `dtype` say so.
        if let Some((i, t)) = input.filter(|(i, _)| *i < inputs.len() && self.has(*i)) {
            inputs[i] = Some(t);
        }
        if let Some((i, v)) = value {
            if values.len() <= i {
                values.resize(i + 1, None);
            }
            values[i] = Some(v);
        }
        Ctx {
            model: self.model,
            node: self.node,
            opset,
            inputs,
            values,
            floats: self.floats.iter().copied().collect(),
            strings: self.strings.iter().copied().collect(),
            ratios: self.ratios.iter().copied().collect(),
            spreads: self.spreads.iter().copied().collect(),
            subgraph_outputs: self.subgraph_outputs.iter().map(|(n, t)| (*n, t.clone())).collect(),
            loop_cond_stays_true: self.loop_cond_stays_true,
        }
    }
}

/// What inference knows of every element of a tensor whose contents it does not hold.
#[derive(Clone, Debug, PartialEq)]
pub enum Spread {
    /// Every element is this number (`ConstantOfShape` of a symbolic shape, which NonZero
    /// counts).
    Fill(f64),
    /// Every element is a whole number within the bounds (a `Range` of symbolic length, such
    /// as torch's `arange(seq)`, whose elements index a table of positions).
    Between(Bounds),
    /// Index tuples along the last axis, each element of column `j` within `columns[j]`: the
    /// `Concat` along the last axis of expanded `arange`s with which torch.export indexes
    /// several axes at once (a `GatherND` of an attention mask).
    Columns(Vec<Bounds>),
}

/// The least and the greatest element of an integer tensor, where it has any: `tight` when
/// some element equals each (a `Range`'s ends), else only bounds (a `Clip`'s limits).
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    pub lo: Dim,
    pub hi: Dim,
    pub tight: bool,
}

impl Spread {
    /// This spread on a tensor of `shape` holding the same elements in the same order:
    /// columns only while the last axis keeps their count.
    pub fn fit(&self, shape: Option<&[Dim]>) -> Spread {
        match self {
            Spread::Columns(cols) if shape.and_then(<[Dim]>::last) != Some(&Dim::Known(cols.len() as i64)) => {
                let lo: Vec<&Dim> = cols.iter().map(|b| &b.lo).collect();
                let hi: Vec<&Dim> = cols.iter().map(|b| &b.hi).collect();
                let tight = cols.iter().all(|b| b.tight);
                Spread::Between(Bounds { lo: Dim::min_of(&lo), hi: Dim::max_of(&hi), tight })
            }
            other => other.clone(),
        }
    }
}

/// What a rule concludes: one entry per output slot.
#[derive(Clone, Debug, Default)]
pub struct Out {
    pub types: PerOutput<Option<Type>>,
    /// Contents of small integer outputs (shape tensors), when derivable.
    pub values: Vec<Option<Vec<Dim>>>,
    /// Contents of small floating-point outputs, when derivable.
    pub floats: Vec<Option<Vec<f64>>>,
    /// Contents of small string outputs, when derivable.
    pub strings: Vec<Option<Vec<String>>>,
    /// Contents of small floating-point outputs that are sizes over a whole number.
    pub ratios: Vec<Option<Ratio>>,
    /// What is known of the elements of outputs whose contents are not held.
    pub spreads: Vec<Option<Spread>>,
    /// Side conditions assumed, with the output axis each concerns.
    pub assumptions: Vec<(usize, Assumption)>,
    /// The input slot of indices whose values are neither held nor bounded: what computes
    /// them from sizes (a `Shape` upstream) may make the node fail at sizes no condition
    /// names, so the contract is not exact over those sizes.
    pub unbounded: Option<usize>,
    /// Warnings about the node (code, message): what runs, but perhaps not as meant.
    pub warnings: Vec<(crate::diag::Code, String)>,
}

/// Why a rule could not give output types.
#[derive(Clone, Debug)]
pub enum RuleError {
    /// Inputs that do not broadcast.
    Broadcast(BroadcastError<Dim>),
    /// Inputs that must have equal shapes and do not: the op's legacy form without
    /// `broadcast=1`, or an old opset of Sum, Max, Min or Mean. The text says when they may
    /// differ.
    Unequal { input: usize, rule: &'static str },
    /// A convolution or pooling window that does not fit in its input, or padding wider than
    /// its axis allows.
    Window(String),
    /// Anything else that makes the node invalid.
    Invalid(String),
}

impl RuleError {
    /// A broadcast error among the inputs in `slots` (node input slots, in the order given to
    /// the broadcast), naming each input by its slot.
    pub(crate) fn broadcast_among(e: BroadcastError<Dim>, slots: &[usize]) -> RuleError {
        RuleError::Broadcast(match e {
            BroadcastError::Clash { axis, sizes } => BroadcastError::Clash {
                axis,
                sizes: sizes.into_iter().map(|(i, d)| (slots.get(i).copied().unwrap_or(i), d)).collect(),
            },
            BroadcastError::Rank { input, rank, target } => {
                BroadcastError::Rank { input: slots.get(input).copied().unwrap_or(input), rank, target }
            }
            other => other,
        })
    }
}

/// How the contents of an op's small integer output follow from its inputs' contents
/// (shape-tensor propagation), element by element with broadcasting.
#[derive(Clone, Copy, Debug)]
pub enum Fold {
    /// Nothing is computed.
    None,
    /// A unary function of each element.
    Unary(fn(&Dim) -> Dim),
    /// A binary function of each pair of broadcast elements.
    Binary(fn(&Dim, &Dim) -> Dim),
    /// `Where(cond, x, y)`.
    Where,
    /// Input 0's elements broadcast to the output (Expand); the other inputs only shape it.
    Broadcast0,
}

/// The contents of a small floating-point tensor that holds sizes over a whole number: the
/// `h / 2.0` of TorchScript's `math.ceil(h / 2)`. Element `i` is `num[i] / den`, `den >= 2`
/// (whole floating-point contents are `values`, as integer ones are).
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    pub num: Vec<Dim>,
    pub den: i64,
}

/// How sizes held in floating point (whole numbers or [`Ratio`]s) follow from an op's inputs',
/// computed exactly: float32 computes them so for sizes below 2^24.
#[derive(Clone, Copy, Debug)]
pub enum RatioFold {
    None,
    Add,
    Sub,
    Mul,
    /// By a known number.
    Div,
    Ceil,
    Floor,
}

/// How the contents of an op's small floating-point output follow from its inputs' (the
/// size arithmetic of expanded function bodies: Range's `ceil((limit - start) / delta)`),
/// element by element for scalars and same-size inputs.
#[derive(Clone, Copy, Debug)]
pub enum FloatFold {
    None,
    Unary(fn(f64) -> f64),
    /// Folded left over any number of inputs.
    Binary(fn(f64, f64) -> f64),
}

/// What an op's schema says at one version (generated, `table.rs`).
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    pub op: &'static str,
    pub domain: &'static str,
    /// The first opset version this row describes; it holds until the next row of the op.
    pub since: i64,
    pub arity: Arity,
    /// The element types the schema allows each input.
    pub inputs: Constraints,
    pub attrs: Attrs,
}

/// The attributes a schema defines, separated by spaces, each `name:kind` with the kind one
/// letter of [`Attrs::KINDS`] and a `!` after a required one: `"axis:i! perm:I"`.
#[derive(Clone, Copy, Debug)]
pub struct Attrs(pub &'static str);

impl Attrs {
    /// The kind letters in the order `AttributeProto.type` numbers them from 1: float, int,
    /// string, tensor, graph, the lists of those, sparse tensor(s), type proto(s).
    pub const KINDS: &'static str = "fistgFISTGpPyY";

    /// The `AttributeProto.type` of the attribute `name`; `None` when there is no such
    /// attribute, which onnx's checker and onnxruntime refuse.
    pub fn kind(&self, name: &str) -> Option<i32> {
        let spec = self.0.split(' ').find_map(|a| a.split_once(':').filter(|(n, _)| *n == name).map(|(_, k)| k))?;
        let letter = spec.chars().next()?;
        Self::KINDS.find(letter).and_then(|i| i32::try_from(i + 1).ok())
    }

    /// The attributes a node must have.
    pub fn required(&self) -> impl Iterator<Item = &'static str> {
        self.0.split(' ').filter(|a| a.ends_with('!')).filter_map(|a| a.split(':').next())
    }
}

impl Schema {
    /// Whether this row deprecates its op (until a later row brings it back, as
    /// GroupNormalization 21 does): onnx's checker and onnxruntime refuse such a node.
    /// GroupNormalization 18 is the one onnxruntime 1.32 still runs.
    pub fn deprecated(&self) -> bool {
        self.op != "GroupNormalization" && table::DEPRECATED.contains(&(self.domain, self.op, self.since))
    }
}

/// How many input and output slots a node of an op may have (`u32::MAX`: any number).
#[derive(Clone, Copy, Debug)]
pub struct Arity {
    pub min_inputs: u32,
    pub max_inputs: u32,
    pub min_outputs: u32,
    pub max_outputs: u32,
    /// The optional input slots below `min_inputs` (bit k for slot k), where a schema lists
    /// an optional input before a required one (onnxruntime's QLinearAdd, BeamSearch, ...).
    pub optional: u32,
    /// The same for outputs (GRU-1's).
    pub optional_outputs: u32,
}

impl Arity {
    /// The same with the input slots of `mask` optional.
    pub const fn opt(self, mask: u32) -> Arity {
        Arity { optional: mask, ..self }
    }

    /// The same with the output slots of `mask` optional.
    pub const fn opt_out(self, mask: u32) -> Arity {
        Arity { optional_outputs: mask, ..self }
    }

    /// The first slot a node leaves empty (`None`) that its schema requires: ("input", k) or
    /// ("output", k). A repeated last slot's lower count is its own business.
    pub fn empty_required<T>(&self, inputs: &[Option<T>], outputs: &[Option<T>]) -> Option<(&'static str, usize)> {
        let sides = [
            ("input", inputs, self.min_inputs, self.max_inputs, self.optional),
            ("output", outputs, self.min_outputs, self.max_outputs, self.optional_outputs),
        ];
        sides.into_iter().find_map(|(what, slots, least, most, optional)| {
            let required = if most == u32::MAX { 0 } else { least as usize };
            let k = (0..required.min(slots.len()))
                .find(|k| slots[*k].is_none() && (*k >= 32 || optional & (1 << k) == 0))?;
            Some((what, k))
        })
    }

    /// What is wrong with a node of `inputs` input and `outputs` output slots, such as "takes 1
    /// input, the node has 2" (onnx's checker and onnxruntime refuse the node); `None` when
    /// both counts fit.
    pub fn misfit(&self, inputs: usize, outputs: usize) -> Option<String> {
        let counts = [
            ("takes", "input", inputs, self.min_inputs, self.max_inputs),
            ("gives", "output", outputs, self.min_outputs, self.max_outputs),
        ];
        counts.into_iter().find(|(.., n, lo, hi)| !(u64::from(*lo)..=u64::from(*hi)).contains(&(*n as u64))).map(
            |(verb, what, n, lo, hi)| {
                let want = match (lo, hi) {
                    (lo, u32::MAX) => format!("at least {lo}"),
                    (lo, hi) if lo == hi => lo.to_string(),
                    (lo, hi) => format!("{lo} to {hi}"),
                };
                let s = if want == "1" { "" } else { "s" };
                format!("{verb} {want} {what}{s}, the node has {n}")
            },
        )
    }
}

/// The schema onnxruntime gives its own op `op` of `domain` at `version`: a contrib op
/// (com.microsoft or its NCHWc domain) or one of the default domain that onnx lacks.
pub fn contrib_schema(domain: &str, op: &str, version: i64) -> Option<&'static Schema> {
    let domain = crate::ir::norm_domain(domain);
    table::CONTRIB.iter().filter(|s| s.domain == domain && s.op == op && s.since <= version).max_by_key(|s| s.since)
}

/// One op at one schema version: the schema's facts with the op's meaning (`registry.rs`)
/// and the rules its family gives at that version.
#[derive(Clone, Copy, Debug)]
pub struct OpDef {
    pub schema: &'static Schema,
    pub meaning: &'static Meaning,
    pub shape: ShapeRule,
    pub ty: TypeRule,
}

/// The element types an op's schema allows its inputs (its type constraints, tensor types
/// only): each formal input names a set, and inputs that share a type variable must also
/// share one element type.
#[derive(Clone, Copy, Debug)]
pub struct Constraints {
    /// Per formal input, an index into `sets`; [`Constraints::NONE`] where the schema allows
    /// no tensor type (sequences, maps) and nothing is checked.
    pub formal: &'static [u8],
    pub sets: &'static [Elements],
    /// How input slots past the formal ones are typed: by the last formal input, or not at all.
    pub repeat: Repeat,
}

/// One type constraint: a set of element types, bit `c` for ONNX type code `c`, and the kinds
/// of value it takes.
#[derive(Clone, Copy, Debug)]
pub struct Elements {
    pub set: u64,
    /// A type variable (`T`): the inputs it types take one element type. False for a type
    /// written out (`tensor(int64)`), which binds nothing.
    pub binds: bool,
    pub kinds: Kinds,
}

impl Elements {
    pub(crate) const fn of(self, kinds: Kinds) -> Elements {
        Elements { kinds, ..self }
    }
}

/// The kinds of value an input takes: tensors, sequences, optionals (bits 1, 2, 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kinds(u8);

impl Kinds {
    pub const T: Kinds = Kinds(1);
    pub const S: Kinds = Kinds(2);
    pub const O: Kinds = Kinds(4);
    pub const TS: Kinds = Kinds(3);
    pub const TO: Kinds = Kinds(5);
    pub const SO: Kinds = Kinds(6);
    pub const TSO: Kinds = Kinds(7);

    /// Each kind's bit, in words.
    const WORDS: [(u8, &'static str); 3] = [(1, "a tensor"), (2, "a sequence"), (4, "an optional")];

    /// Whether a value of type `t` is of a kind taken (a type of no kind here always is).
    pub fn takes(self, t: &Type) -> bool {
        kind(t).is_none_or(|(k, _)| self.0 & k != 0)
    }

    /// The kinds in words: "a tensor or a sequence".
    pub fn words(self) -> String {
        let taken = Kinds::WORDS.iter().filter(|(k, _)| self.0 & k != 0);
        taken.map(|(_, w)| *w).collect::<Vec<_>>().join(" or ")
    }
}

/// A type's kind as a `Kinds` bit and in words; `None` for `Type::Other`.
pub fn kind(t: &Type) -> Option<(u8, &'static str)> {
    let i = match t {
        Type::Tensor { .. } => 0,
        Type::Sequence(_) => 1,
        Type::Optional(_) => 2,
        Type::Other => return None,
    };
    Some(Kinds::WORDS[i])
}

/// Whether an op's last formal input repeats (is variadic), and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repeat {
    No,
    /// Every repeated slot takes one element type (Sum's inputs).
    Same,
    /// Each repeated slot takes any type of the set (Loop's carried values).
    Each,
}

impl Constraints {
    pub const NONE: u8 = u8::MAX;

    pub const fn new(formal: &'static [u8], sets: &'static [Elements], repeat: Repeat) -> Constraints {
        Constraints { formal, sets, repeat }
    }

    /// The constraint on input slot `slot` (past the formal inputs, the last one's when it
    /// repeats) and the index of its set, which inputs bound to one variable share; `None`
    /// when nothing is checked there.
    pub fn of(&self, slot: usize) -> Option<(usize, Elements)> {
        let last = self.formal.len().checked_sub(1)?;
        let formal = match self.formal.get(slot) {
            Some(f) => *f,
            None if self.repeat != Repeat::No => self.formal[last],
            None => return None,
        };
        let set = *self.sets.get(usize::from(formal))?;
        // The slots of a heterogeneous repeated input each take their own type.
        let each = self.repeat == Repeat::Each && slot >= last;
        Some((usize::from(formal), Elements { binds: set.binds && !each, ..set }))
    }
}

impl OpDef {
    /// True when a node with `inputs` input slots is within the op's arity.
    pub fn takes(&self, inputs: usize) -> bool {
        let a = self.schema.arity;
        (u64::from(a.min_inputs)..=u64::from(a.max_inputs)).contains(&(inputs as u64))
    }
}

/// The row for `op` in `domain` at opset `version`; `None` when the op is unknown or did not
/// exist yet at that version.
pub fn lookup(domain: &str, op: &str, version: i64) -> Option<&'static OpDef> {
    let (_, rows) = entry(domain, op)?;
    // An op's rows are in the order of their versions.
    ops().defs[rows.clone()].iter().rev().find(|d| d.schema.since <= version)
}

/// The registry row and the schema rows of `op` in `domain`.
fn entry<'a>(domain: &'a str, op: &'a str) -> Option<&'a (&'static Meaning, std::ops::Range<usize>)> {
    ops().index.get(&(crate::ir::norm_domain(domain), op))
}

/// The schemas' rows joined with the registry, built once: the rows (each op's together, in
/// the order of their versions) and, by (domain, op), the op's registry row and its rows.
/// Hashed with foldhash: the table is fixed, so names from a file can only look it up, not
/// fill it with collisions, and this lookup runs once per node.
struct Ops {
    defs: Vec<OpDef>,
    index:
        HashMap<(&'static str, &'static str), (&'static Meaning, std::ops::Range<usize>), foldhash::fast::FixedState>,
}

fn ops() -> &'static Ops {
    static OPS: OnceLock<Ops> = OnceLock::new();
    OPS.get_or_init(|| {
        let mut index: HashMap<_, _, foldhash::fast::FixedState> =
            registry::OPS.iter().map(|m| ((m.domain, m.op), (m, 0..0))).collect();
        let mut defs = Vec::with_capacity(table::TABLE.len());
        // The table is sorted by (domain, op, version).
        for s in table::TABLE {
            // Every schema op has a row (`registry::tests::the_registry_names_every_schema_op_once`).
            let Some((meaning, rows)) = index.get_mut(&(s.domain, s.op)) else { continue };
            if rows.start == rows.end {
                *rows = defs.len()..defs.len();
            }
            rows.end += 1;
            let (shape, ty) = meaning.family.rules(s.since);
            defs.push(OpDef { schema: s, meaning, shape, ty });
        }
        Ops { defs, index }
    })
}

/// The registry row of `op` in `domain`.
pub fn meaning(domain: &str, op: &str) -> Option<&'static Meaning> {
    entry(domain, op).map(|(m, _)| *m)
}

/// The newest opset version of `domain` the table describes; `None` for a domain it does not.
pub fn newest(domain: &str) -> Option<i64> {
    let domain = crate::ir::norm_domain(domain);
    table::NEWEST.iter().find(|(d, _)| *d == domain).map(|(_, v)| *v)
}

/// True when `op` is known in `domain` at any version.
pub fn exists(domain: &str, op: &str) -> bool {
    entry(domain, op).is_some()
}

/// Every row, for tests and listings.
pub fn table() -> &'static [OpDef] {
    &ops().defs
}

//! Shape rules declared as data: a JSON file (`--op-rules FILE`, or `ONNX_BCAST_OP_RULES`)
//! gives the output types of ops of any domain in a small vocabulary, and the rules of
//! onnxruntime's contrib ops that fit it ship in `rules/com.microsoft.json` in the same form.
//!
//! ```json
//! {"rules": [
//!   {"domain": "com.microsoft", "op": "BiasGelu",
//!    "outputs": [{"shape": {"broadcast": [0, 1]}, "type": {"input": 0}}]}
//! ]}
//! ```
//!
//! A shape is `{"same": i}` (input i's; `"set": [[axis, dim], ..]` replaces some of its dims), `{"broadcast": [i, j, ..]}` (numpy's rule, with its
//! conflicts and side conditions), `{"matmul": [i, j]}`, `{"reduce": i, "axes": "A",
//! "keepdims": "B"}` (attribute names; all axes when `A` is absent; `keepdims` defaults to 1),
//! `{"concat": "A"}` (the inputs along the axis attribute `A`), or `{"dims": [..]}` with each
//! dim a size, `{"input": i, "dim": k}` (negative `k` counts from the end) or `{"attr": "A"}`
//! (`"index": k` for an ints attribute). A type is `{"input": i}` or an element type's name
//! (`"float32"`, `"int64"`, ...). An output without a rule, or a rule whose inputs are not
//! known, gives an unknown type. `"inputs": [{"input": i, "shape": ..}]` names shapes some
//! inputs must have, in the same vocabulary: known sizes that differ are the node's error,
//! symbolic ones a condition. With `"trailing": true` the shape is the input's last sizes;
//! `"ranks": [..]` lists the ranks it may have, `"rank_at_most": j` bounds its rank by input
//! j's, `"nonzero": [axes]` names axes whose size must not be 0, `"nonempty_with": j` makes
//! it hold elements wherever input j does, and `"axis": "A"` names an int attribute that,
//! when given, must name one of its axes.

use std::collections::HashMap;

use serde::Deserialize;

use super::rules::{axis_in, expect_shape, invalid, matmul_shape, pin_shapes, reduced};
use super::{Ctx, Out, RuleError};
use crate::dtype::DType;
use crate::shape::{multi, render, Dim, Shape, Type};

/// The rules of a file, by (domain, op type): what each input must be, then the outputs.
#[derive(Clone, Debug, Default)]
pub struct OpRules {
    rules: HashMap<(String, String), (Vec<InputOf>, Vec<Output>)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    rules: Vec<Rule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    #[serde(default)]
    domain: String,
    op: String,
    /// Shapes some inputs must have (the runtime refuses others).
    #[serde(default)]
    inputs: Vec<InputOf>,
    outputs: Vec<Output>,
    /// Free text: where the rule comes from.
    #[serde(default)]
    #[allow(dead_code)]
    note: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InputOf {
    input: usize,
    /// The ranks the input may have (any, without).
    #[serde(default)]
    ranks: Option<Vec<usize>>,
    shape: Option<ShapeOf>,
    /// `shape` names the input's last sizes only.
    #[serde(default)]
    trailing: bool,
    /// The input's rank is at most this input's (a skip that broadcasts into it).
    #[serde(default)]
    rank_at_most: Option<usize>,
    /// Axes (negative from the end) whose size must not be 0.
    #[serde(default)]
    nonzero: Vec<i64>,
    /// An int attribute that names an axis of the input, when given.
    #[serde(default)]
    axis: Option<String>,
    /// The input holds elements wherever this input does.
    #[serde(default)]
    nonempty_with: Option<usize>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Output {
    shape: Option<ShapeOf>,
    #[serde(rename = "type")]
    dtype: Option<TypeOf>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum ShapeOf {
    Same {
        same: usize,
        /// Dims of the input replaced: `[axis, dim]` pairs, a negative axis from the end.
        #[serde(default)]
        set: Vec<(i64, DimOf)>,
    },
    Broadcast {
        broadcast: Vec<usize>,
    },
    MatMul {
        matmul: [usize; 2],
    },
    Reduce {
        reduce: usize,
        axes: Option<String>,
        keepdims: Option<String>,
    },
    Concat {
        concat: String,
    },
    Dims {
        dims: Vec<DimOf>,
    },
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum DimOf {
    Size(i64),
    Input { input: usize, dim: i64 },
    Attr { attr: String, index: Option<usize> },
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum TypeOf {
    Input { input: usize },
    Named(String),
}

impl OpRules {
    /// The rules of `text` (the file `source`); an error names the line.
    pub fn parse(text: &str, source: &str) -> Result<OpRules, String> {
        let file: File = serde_json::from_str(text).map_err(|e| format!("{source}:{}: {e}", e.line()))?;
        let mut rules = HashMap::new();
        for r in file.rules {
            for o in &r.outputs {
                if let Some(TypeOf::Named(name)) = &o.dtype {
                    if DType::from_name(name).is_none() {
                        return Err(format!("{source}: {}.{}: no element type is named '{name}'", r.domain, r.op));
                    }
                }
            }
            // A size given as a number is a size: a negative one gave tensors negative dims.
            for shape in r
                .outputs
                .iter()
                .filter_map(|o| o.shape.as_ref())
                .chain(r.inputs.iter().filter_map(|i| i.shape.as_ref()))
            {
                let dims: Vec<&DimOf> = match shape {
                    ShapeOf::Same { set, .. } => set.iter().map(|(_, d)| d).collect(),
                    ShapeOf::Dims { dims } => dims.iter().collect(),
                    _ => Vec::new(),
                };
                if let Some(n) = dims.iter().find_map(|d| match d {
                    DimOf::Size(n) if *n < 0 => Some(n),
                    _ => None,
                }) {
                    return Err(format!("{source}: {}.{}: the size {n} is negative", r.domain, r.op));
                }
            }
            let domain = if r.domain == "ai.onnx" { String::new() } else { r.domain };
            rules.insert((domain, r.op), (r.inputs, r.outputs));
        }
        Ok(OpRules { rules })
    }

    /// The rules of the file at `path` (`--op-rules FILE`); a mistake in it is a usage error
    /// naming the line.
    pub fn load(path: &std::path::Path) -> crate::Result<OpRules> {
        let text = std::fs::read_to_string(path).map_err(|source| crate::Error::Io { path: path.into(), source })?;
        OpRules::parse(&text, &path.display().to_string()).map_err(crate::Error::Usage)
    }

    /// The rules shipped for onnxruntime's contrib ops that fit the vocabulary.
    pub fn builtin() -> &'static OpRules {
        static RULES: std::sync::OnceLock<OpRules> = std::sync::OnceLock::new();
        RULES.get_or_init(|| {
            OpRules::parse(include_str!("../../rules/com.microsoft.json"), "rules/com.microsoft.json")
                .expect("the shipped rules parse (tests/it/cli.rs checks them)")
        })
    }

    /// True when a rule for `domain.op` is declared.
    pub fn has(&self, domain: &str, op: &str) -> bool {
        self.rules.contains_key(&(domain.to_string(), op.to_string()))
    }

    /// The outputs of the node under its declared rule; `None` when none is declared.
    pub fn apply(&self, c: &Ctx) -> Option<Result<Out, RuleError>> {
        let (inputs, outputs) = self.rules.get(&(c.node.domain.to_string(), c.node.op_type.to_string()))?;
        Some(apply(inputs, outputs, c))
    }
}

fn apply(inputs: &[InputOf], outputs: &[Output], c: &Ctx) -> Result<Out, RuleError> {
    let mut out = Out::default();
    let op = &c.node.op_type;
    for i in inputs {
        let have = c.shape(i.input);
        if let (Some(s), Some(ranks)) = (have, &i.ranks) {
            if !ranks.contains(&s.len()) {
                return invalid(format!("{op}: input {} has rank {}, not one of {ranks:?}", i.input, s.len()));
            }
        }
        if let (Some(s), Some(j)) = (have, i.rank_at_most) {
            if let Some(t) = c.shape(j).filter(|t| s.len() > t.len()) {
                return invalid(format!("{op}: input {} has rank {}, above input {j}'s {}", i.input, s.len(), t.len()));
            }
        }
        let elements = |k: usize| c.shape(k).and_then(|s| Dim::product(s).known());
        if let (Some(0), Some(j)) = (elements(i.input), i.nonempty_with) {
            if elements(j).is_some_and(|n| n > 0) {
                return invalid(format!("{op}: input {} is empty and input {j} is not", i.input));
            }
        }
        if let Some(s) = have {
            if let Some(a) = i.axis.as_deref().and_then(|a| c.node.attr_int(a)) {
                axis_in(a, s.len(), op)?;
            }
            for &a in &i.nonzero {
                if s[axis_in(a, s.len(), op)?].known() == Some(0) {
                    return invalid(format!("{op}: input {} is empty at axis {a}", i.input));
                }
            }
        }
        let Some(want) = i.shape.as_ref().map(|s| shape_of(s, c, &mut out)).transpose()?.flatten() else { continue };
        match have {
            Some(s) if i.trailing => {
                let last = s.len().checked_sub(want.len()).map(|k| &s[k..]);
                let why = match last {
                    Some(last) => pin_shapes(&want, last, &mut out).err(),
                    None => Some(format!("rank {} is below {}", s.len(), want.len())),
                };
                if let Some(e) = why {
                    return invalid(format!("{op}: input {} must end in {}: {e}", i.input, render(&want)));
                }
            }
            _ => expect_shape(c, i.input, &want, &mut out)?,
        }
    }
    for o in outputs {
        let dtype = match &o.dtype {
            Some(TypeOf::Input { input }) => c.dtype(*input),
            Some(TypeOf::Named(name)) => DType::from_name(name),
            None => None,
        };
        let shape = o.shape.as_ref().map(|s| shape_of(s, c, &mut out)).transpose()?.flatten();
        out.types.push(Some(Type::tensor(dtype, shape)));
    }
    Ok(out)
}

/// The output shape `s` gives, recording side conditions in `out`; `None` where an input it
/// reads is of unknown rank.
fn shape_of(s: &ShapeOf, c: &Ctx, out: &mut Out) -> Result<Option<Shape>, RuleError> {
    Ok(match s {
        ShapeOf::Same { same, set } => {
            let Some(mut shape) = c.shape(*same).map(<[Dim]>::to_vec) else { return Ok(None) };
            for (axis, d) in set {
                let a = axis_in(*axis, shape.len(), &c.node.op_type)?;
                shape[a] = dim_of(d, c)?;
            }
            Some(shape)
        }
        ShapeOf::Broadcast { broadcast } => {
            let slots: Vec<usize> = broadcast.iter().copied().filter(|i| c.has(*i)).collect();
            let shapes: Option<Vec<&[Dim]>> = slots.iter().map(|i| c.shape(*i)).collect();
            let Some(shapes) = shapes else { return Ok(None) };
            let b = multi(&shapes).map_err(|e| RuleError::broadcast_among(e, &slots))?;
            out.assumptions.extend(b.assumptions);
            Some(b.shape)
        }
        ShapeOf::MatMul { matmul: [i, j] } => {
            let (Some(a), Some(b)) = (c.shape(*i), c.shape(*j)) else { return Ok(None) };
            let (shape, assumptions) = matmul_shape(a, b)?;
            out.assumptions.extend(assumptions);
            Some(shape)
        }
        ShapeOf::Reduce { reduce, axes, keepdims } => {
            let Some(data) = c.shape(*reduce) else { return Ok(None) };
            let keep = keepdims.as_deref().and_then(|a| c.node.attr_int(a)).unwrap_or(1) != 0;
            let list = axes.as_deref().and_then(|a| c.node.attr_ints(a)).unwrap_or_default();
            Some(reduced(data, list, keep, &c.node.op_type)?)
        }
        ShapeOf::Concat { concat } => {
            let shapes: Option<Vec<&[Dim]>> = (0..c.inputs.len()).filter(|i| c.has(*i)).map(|i| c.shape(i)).collect();
            let Some(shapes) = shapes.filter(|s| !s.is_empty()) else { return Ok(None) };
            let a = axis_in(c.node.attr_int(concat).unwrap_or(0), shapes[0].len(), &c.node.op_type)?;
            let mut shape = shapes[0].to_vec();
            shape[a] = shapes.iter().fold(Dim::Known(0), |acc, s| acc.add(s.get(a).unwrap_or(&Dim::Unknown)));
            Some(shape)
        }
        ShapeOf::Dims { dims } => Some(dims.iter().map(|d| dim_of(d, c)).collect::<Result<_, _>>()?),
    })
}

fn dim_of(d: &DimOf, c: &Ctx) -> Result<Dim, RuleError> {
    Ok(match d {
        DimOf::Size(n) => Dim::Known(*n),
        DimOf::Input { input, dim } => {
            c.shape(*input).and_then(|s| s.get(axis_in(*dim, s.len(), "").ok()?).cloned()).unwrap_or(Dim::Unknown)
        }
        DimOf::Attr { attr, index } => {
            let v = match index {
                Some(i) => c.node.attr_ints(attr).and_then(|v| v.get(*i).copied()),
                None => c.node.attr_int(attr),
            };
            // The model's attribute: a negative size is the node's mistake, not a dim.
            if let Some(n) = v.filter(|n| *n < 0) {
                return Err(RuleError::Invalid(format!(
                    "{}: attribute '{attr}' gives the negative size {n}",
                    c.node.op_type
                )));
            }
            v.map_or(Dim::Unknown, Dim::Known)
        }
    })
}

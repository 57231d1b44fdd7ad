//! Where a size came from: the path from a graph input's dim (or an initializer, or the node
//! that made it) through the nodes that changed it, so that a clash says why each side has
//! the size it has ("x axis 2 = 48 -> conv0 (Conv) 24 -> ... -> 3").

use crate::infer::Inference;
use crate::ir::{Def, IdMap, Model, NodeId, ValueId};
use crate::shape::{Dim, Term};

/// The longest path followed back.
const MAX_STEPS: usize = 10_000;

/// The origin of one size: where it starts and each node on the way that changed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    pub source: Source,
    /// The size at the source.
    pub start: Dim,
    /// Each node that changed the size, in graph order, with the size it gave.
    pub steps: Vec<(String, String, Dim)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// Axis `axis` of the graph input `name`.
    Input { name: String, axis: usize },
    /// Dim `axis` of the initializer `name`.
    Initializer { name: String, axis: usize },
    /// Made by a node from what is not a shape's axis (a Constant, a computed shape).
    Node { label: String, op_type: String },
}

/// The origin of the size at `axis` of `v`; `None` where its shape is unknown.
/// `positions`: [`Model::positions`], computed once by the caller.
pub fn trace(
    model: &Model,
    inf: &Inference,
    positions: &IdMap<NodeId, usize>,
    mut v: ValueId,
    mut axis: usize,
) -> Option<Origin> {
    let mut steps = Vec::new();
    for _ in 0..MAX_STEPS {
        let shape = inf.shape(v)?;
        let dim = shape.get(axis)?.clone();
        let at = |source: Source, mut steps: Vec<(String, String, Dim)>| {
            steps.reverse();
            Some(Origin { source, start: dim.clone(), steps })
        };
        let n = match model.value(v).def {
            Def::Input => return at(Source::Input { name: model.name(v).to_string(), axis }, steps),
            Def::Initializer => return at(Source::Initializer { name: model.name(v).to_string(), axis }, steps),
            Def::Undefined => return None,
            Def::Node(n, _) => n,
        };
        let node = model.node(n);
        let rank = shape.len();
        let inputs: Vec<(ValueId, &[Dim])> =
            node.inputs.iter().flatten().filter_map(|i| inf.shape(*i).map(|s| (*i, s.as_slice()))).collect();
        // A Transpose moves its input's axis perm[axis] to `axis` (by default, the reverse).
        if node.op_type == "Transpose" && node.domain.is_empty() {
            if let Some((i, s)) = inputs.first() {
                let from = match node.attr_ints("perm") {
                    Some(perm) => perm.get(axis).and_then(|p| usize::try_from(*p).ok()),
                    None => s.len().checked_sub(axis + 1),
                };
                if let Some(a) = from.filter(|a| s.get(*a) == Some(&dim)) {
                    v = *i;
                    axis = a;
                    continue;
                }
            }
        }
        // The same size at the same axis counted from the right (a broadcast or an
        // elementwise op passes it through), or at the same index.
        let same = inputs.iter().find_map(|(i, s)| {
            let a = (axis + s.len()).checked_sub(rank)?;
            (s.get(a) == Some(&dim) && dim != Dim::Known(1)).then_some((*i, a))
        });
        let same = same.or_else(|| inputs.iter().find(|(_, s)| s.get(axis) == Some(&dim)).map(|(i, _)| (*i, axis)));
        if let Some((i, a)) = same {
            v = i;
            axis = a;
            continue;
        }
        // A node of the same rank that changed it (a convolution, a pooling, a slice).
        match inputs.iter().find(|(_, s)| s.len() == rank) {
            Some((i, _)) if node.op_type != "Reshape" && node.op_type != "Expand" => {
                steps.push((model.label_with(n, positions), node.op_type.to_string(), dim.clone()));
                v = *i;
            }
            _ => {
                let label = model.label_with(n, positions);
                return at(Source::Node { label, op_type: node.op_type.to_string() }, steps);
            }
        }
    }
    None
}

impl Origin {
    /// The origin in words, each size shown by `show` (a binding's value, or the term).
    pub fn render(&self, show: &dyn Fn(&Dim) -> String) -> String {
        let mut out = match &self.source {
            Source::Input { name, axis } => format!("{name} axis {axis} = {}", show(&self.start)),
            Source::Initializer { name, axis } => format!("{} from initializer '{name}' dim {axis}", show(&self.start)),
            Source::Node { label, op_type } => format!("{} made by {label} ({op_type})", show(&self.start)),
        };
        // Long paths keep their ends.
        let n = self.steps.len();
        for (k, (label, op, d)) in self.steps.iter().enumerate() {
            if n > 8 && (3..n - 3).contains(&k) {
                if k == 3 {
                    out.push_str(&format!(" -> ... ({} more)", n - 6));
                }
                continue;
            }
            out.push_str(&format!(" -> {label} ({op}) {}", show(d)));
        }
        out
    }
}

/// A size shown under a binding of `x` to `v`: its value where it has one, else as written.
pub fn valued(x: &Term, v: i64) -> impl Fn(&Dim) -> String + '_ {
    move |d: &Dim| match d {
        Dim::Term(t) => t.eval(&|a| (a == x).then_some(v)).map_or_else(|| t.to_string(), |n| n.to_string()),
        other => other.to_string(),
    }
}

/// Where the value `v` itself comes from, in words: a graph input, an initializer, or the
/// node that made it (for findings about a whole shape, such as a rank).
pub fn source_of(model: &Model, positions: &IdMap<NodeId, usize>, v: ValueId) -> String {
    match model.value(v).def {
        Def::Input => format!("graph input '{}'", model.name(v)),
        Def::Initializer => format!("initializer '{}'", model.name(v)),
        Def::Node(n, _) => format!("made by {} ({})", model.label_with(n, positions), model.node(n).op_type),
        Def::Undefined => format!("'{}', defined nowhere", model.name(v)),
    }
}

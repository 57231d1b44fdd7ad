//! Input contracts: for which sizes of each symbolic input dim the model's size conditions
//! hold, found exactly rather than by sampling.
//!
//! Each side condition inference took (`Constraint`) that names one input dim is solved over
//! the sizes 1, 2, ...: its terms grow, beyond some size, as arithmetic sequences on each class
//! modulo a period ([`Growth`]), so the condition holds on `v + period` exactly when on `v`
//! past that size. Evaluating it on every size up to there plus one period decides it for all
//! sizes. The conditions on a dim are combined the same way, and the result is written as a
//! least size, an optional largest, a modulus with the residues allowed, and finite exceptions.
//! Conditions over several dims, or that cannot be reduced so, are kept as relations.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::diag::{Code, Diagnostic, Severity};
use crate::infer::Constraint;
use crate::ir::{Def, ValueId};
use crate::shape::{Assumption, Dim, Growth, Term};

/// The most sizes evaluated for one dim; a condition that would need more is a relation.
const MAX_WINDOW: i64 = 1 << 18;

/// The most evaluations of conditions at sizes one contract spends, a tenth of a second in
/// release: a model of many distinct conditions with long windows (20,000 pools of strides 2
/// to 20,001 added to their input) took 15 s. A condition past it is a relation.
const BUDGET: i64 = 1 << 22;

/// The contract of a model: per restricted input dim, and the relations left over.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contract {
    pub dims: BTreeMap<String, DimContract>,
    pub relations: Vec<Relation>,
}

/// The sizes (at least 1) one input dim may take: `v` is accepted iff it is in `also`, or
/// `min <= v <= max` and `v % modulus` is in `residues` and `v` is not in `except`.
#[derive(Clone, Debug, PartialEq)]
pub struct DimContract {
    pub min: i64,
    pub max: Option<i64>,
    pub modulus: i64,
    pub residues: Vec<i64>,
    pub except: Vec<i64>,
    pub also: Vec<i64>,
    /// False when a condition on this dim could not be solved (it ties other dims, holds an
    /// unknown size, or grows in a way the solver does not follow).
    pub exact: bool,
    pub text: String,
    /// The smallest size refused, with the node that refuses it.
    pub counterexample: Option<Counterexample>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Counterexample {
    pub value: i64,
    pub node: String,
    pub op_type: String,
    pub graph: String,
    /// The axis of the condition: of the node's output, or of an input for a size bound.
    pub axis: usize,
    /// For a size bound (a window that must fit, a sequence within its caches), the size bound.
    pub window: Option<Term>,
    /// For a size the model declares ([`Constraint::declared`]), the tensor declaring it.
    pub declared: Option<String>,
    pub message: String,
    /// Where each size the node gets there came from ([`crate::provenance`]).
    pub origins: Vec<String>,
}

/// A condition over several dims, or one not reduced to a set of sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Relation {
    pub dims: Vec<String>,
    pub condition: String,
    pub node: String,
    pub exact: bool,
}

impl Relation {
    /// The condition `c` as a relation over `dims`, not reduced to sets of sizes.
    fn of(dims: Vec<String>, c: &Constraint) -> Relation {
        Relation { dims, condition: c.assumption.to_string(), node: c.node.clone(), exact: false }
    }
}

impl DimContract {
    /// True when the contract accepts the size `v`.
    pub fn accepts(&self, v: i64) -> bool {
        self.also.contains(&v)
            || (v >= self.min
                && self.max.is_none_or(|m| v <= m)
                && self.residues.contains(&v.rem_euclid(self.modulus))
                && !self.except.contains(&v))
    }
}

impl Contract {
    /// True when the contract accepts the size `v` for the dim `name` (a dim it does not
    /// restrict accepts every size of at least 1).
    pub fn accepts(&self, name: &str, v: i64) -> bool {
        self.dims.get(name).map_or(v >= 1, |d| d.accepts(v))
    }
}

/// One condition solved for one dim: whether it holds on each size `1..=settle + period`,
/// and beyond that repeating with the period.
struct Solved<'a> {
    constraint: &'a Constraint,
    settle: i64,
    period: i64,
    /// Shared by the conditions alike, which the layers of a model repeat.
    holds: std::rc::Rc<[bool]>,
}

impl Solved<'_> {
    fn at(&self, v: i64) -> bool {
        let v = if v > self.settle + self.period { self.settle + 1 + (v - self.settle - 1) % self.period } else { v };
        self.holds[(v - 1) as usize]
    }
}

/// The terms a condition relates.
fn terms(a: &Assumption) -> Vec<&Term> {
    match a {
        Assumption::OneOf { sym, .. } => vec![sym],
        Assumption::EqualOrOne(ts) => ts.iter().collect(),
        Assumption::Stretches { from, to } => vec![from, to],
        Assumption::Equal(a, b) => vec![a, b],
        Assumption::AtLeast { size, .. } | Assumption::AtMost { size, .. } => vec![size],
    }
}

/// Beyond which size, and with which period, the condition repeats as a function of `x`.
fn window(a: &Assumption, x: &Term) -> Option<(i64, i64)> {
    let growths: Vec<Growth> = terms(a).iter().map(|t| t.growth(x)).collect::<Option<_>>()?;
    let mut settle = growths.iter().map(|g| g.settle).fold(0.0, f64::max);
    let period = growths.iter().try_fold(1, |p, g| crate::shape::lcm(p, g.period))?;
    let mut cross = |g: &Growth, c: i64| settle = settle.max(g.crossing(&Growth::constant(c)));
    match a {
        Assumption::OneOf { sizes, .. } => sizes.iter().for_each(|s| cross(&growths[0], *s)),
        Assumption::AtLeast { min: bound, .. } | Assumption::AtMost { max: bound, .. } => cross(&growths[0], *bound),
        _ => growths.iter().for_each(|g| cross(g, 1)),
    }
    for (i, g) in growths.iter().enumerate() {
        for h in &growths[i + 1..] {
            settle = settle.max(g.crossing(h));
        }
    }
    let settle = settle.ceil();
    (settle.is_finite() && settle + (period as f64) <= MAX_WINDOW as f64).then_some((settle as i64, period))
}

/// `c` solved for `x`, evaluated once per distinct condition: the layers of a model repeat
/// theirs, and a window holds up to [`MAX_WINDOW`] sizes.
fn solve_one<'a>(
    c: &'a Constraint,
    x: &Term,
    seen: &mut HashMap<&'a Assumption, Option<Solved<'a>>, foldhash::fast::RandomState>,
    budget: &mut i64,
) -> Option<Solved<'a>> {
    let solved = seen.entry(&c.assumption).or_insert_with(|| {
        let (settle, period) = window(&c.assumption, x).filter(|(s, p)| s + p <= *budget)?;
        *budget -= settle + period;
        let holds = (1..=settle + period).map(|v| holds_at(&c.assumption, x, v)).collect();
        Some(Solved { constraint: c, settle, period, holds })
    });
    solved.as_ref().map(|s| Solved { constraint: c, holds: s.holds.clone(), ..*s })
}

/// Whether condition `a`, over one size, holds at every size from 1, decided over the sizes
/// after which it repeats; `None` over several sizes or where those are more than 4,096.
pub fn always(a: &Assumption) -> Option<bool> {
    let x = one_size(a)?;
    let (settle, period) = window(a, &x).filter(|(s, p)| s + p <= 1 << 12)?;
    Some((1..=settle + period).all(|v| holds_at(a, &x, v)))
}

/// Whether condition `a`, over one size, fails at a size where every condition of
/// `constraints` over that size alone holds, a value_info's declared size aside: where the
/// model would run but for `a`. Decided as [`always`] is, over at most 256 such conditions.
pub fn fails_where_runs(a: &Assumption, constraints: &[Constraint]) -> Option<bool> {
    let x = one_size(a)?;
    let mut others: Vec<&Assumption> = constraints
        .iter()
        .filter(|c| c.firm())
        .map(|c| &c.assumption)
        .filter(|b| one_size(b).as_ref() == Some(&x))
        .collect();
    others.sort_unstable_by_key(|b| b.to_string());
    others.dedup();
    if others.len() > 256 {
        return None;
    }
    let windows: Option<Vec<(i64, i64)>> =
        std::iter::once(a).chain(others.iter().copied()).map(|b| window(b, &x)).collect();
    let (settle, period) = joint(windows?)?;
    let end = Some(settle + period).filter(|e| *e <= 1 << 12)?;
    Some((1..=end).any(|v| !holds_at(a, &x, v) && others.iter().all(|b| holds_at(b, &x, v))))
}

/// The window of conditions over one size that each repeat past their own `(settle, period)`:
/// past the latest settle, with the least common multiple of the periods.
fn joint(windows: impl IntoIterator<Item = (i64, i64)>) -> Option<(i64, i64)> {
    windows.into_iter().try_fold((0, 1), |(s, p), (t, q)| Some((s.max(t), crate::shape::lcm(p, q)?)))
}

/// The one size condition `a` is over, if it is over one.
fn one_size(a: &Assumption) -> Option<Term> {
    let mut atoms = terms(a).into_iter().flat_map(Term::atoms);
    let x = atoms.next()?;
    (!atoms.any(|y| y != x)).then_some(x)
}

fn holds_at(a: &Assumption, x: &Term, v: i64) -> bool {
    a.holds(&|t| (t == x).then_some(v)).unwrap_or(false)
}

/// The contract of the conditions `constraints`, and an `unsatisfiable` error for each dim no
/// size suits. `skip` names nodes whose conflict is already reported.
pub fn solve(constraints: &[Constraint], skip: &BTreeSet<String>) -> (Contract, Vec<Diagnostic>) {
    let mut contract = Contract::default();
    let mut found = Vec::new();
    // Each condition by the dims it names; those naming an unknown make them inexact.
    let mut single: BTreeMap<String, (Term, Vec<&Constraint>)> = BTreeMap::new();
    let mut inexact: BTreeSet<String> = BTreeSet::new();
    for c in constraints {
        let mut atoms: Vec<Term> = terms(&c.assumption).iter().flat_map(|t| t.atoms()).collect();
        atoms.sort();
        atoms.dedup();
        let names: Vec<String> = atoms.iter().filter_map(|a| a.as_name().map(str::to_string)).collect();
        if names.len() < atoms.len() {
            inexact.extend(names);
            continue;
        }
        match atoms.as_slice() {
            [x] => single.entry(names[0].clone()).or_insert_with(|| (x.clone(), Vec::new())).1.push(c),
            _ => {
                inexact.extend(names.iter().cloned());
                contract.relations.push(Relation::of(names, c));
            }
        }
    }
    let mut budget = BUDGET;
    for (name, (x, cs)) in single {
        let (mut solved, mut seen) = (Vec::new(), HashMap::default());
        for c in cs {
            match solve_one(c, &x, &mut seen, &mut budget) {
                Some(s) => solved.push(s),
                None => {
                    inexact.insert(name.clone());
                    contract.relations.push(Relation::of(vec![name.clone()], c));
                }
            }
        }
        if solved.is_empty() {
            continue;
        }
        let Some((settle, period)) = joint(solved.iter().map(|s| (s.settle, s.period))) else {
            inexact.insert(name.clone());
            continue;
        };
        // Past the window the sizes are sampled, not decided: the dim is then not exact, and
        // no size found there is no proof that none exists.
        let end = (settle + period).min(MAX_WINDOW);
        let exact = settle + period <= MAX_WINDOW;
        // Each condition once, however many nodes share it; a value_info's declaration apart
        // from the same condition made firm elsewhere.
        let mut once = std::collections::HashSet::new();
        let distinct: Vec<&Solved> =
            solved.iter().filter(|s| once.insert((&s.constraint.assumption, s.constraint.firm()))).collect();
        let Some(left) = budget.checked_sub(end * distinct.len() as i64).filter(|l| *l >= 0) else {
            inexact.insert(name.clone());
            contract.relations.extend(distinct.iter().map(|s| Relation::of(vec![name.clone()], s.constraint)));
            continue;
        };
        budget = left;
        let ok: Vec<bool> = (1..=end).map(|v| distinct.iter().all(|s| s.at(v))).collect();
        // A size only a value_info's declaration refuses may run: onnxruntime refuses it only
        // where it plans memory by the false size.
        let exact = exact
            && (1..=end)
                .all(|v| ok[(v - 1) as usize] || !distinct.iter().filter(|s| s.constraint.firm()).all(|s| s.at(v)));
        let Some(refused) = (1..=end).find(|v| !ok[(*v - 1) as usize]) else { continue };
        if !ok.contains(&true) {
            if exact {
                let d = unsatisfiable(&name, &solved, end);
                found.extend(d.filter(|d| !d.node.as_ref().is_some_and(|n| skip.contains(n))));
            } else {
                contract.relations.extend(solved.iter().map(|s| Relation::of(vec![name.clone()], s.constraint)));
            }
            continue;
        }
        let mut dim = describe(&ok, settle.min(end), period, end);
        dim.exact = exact;
        let first = solved.iter().find(|s| !s.at(refused)).map(|s| s.constraint);
        dim.counterexample = first.map(|c| Counterexample {
            value: refused,
            node: c.node.clone(),
            op_type: c.op_type.clone(),
            graph: c.graph.clone(),
            axis: c.axis,
            window: match &c.assumption {
                Assumption::AtLeast { size, .. } | Assumption::AtMost { size, .. } => Some(size.clone()),
                _ => None,
            },
            declared: c.declared.as_ref().map(|d| d.tensor.clone()),
            message: failure(c, &x, &name, refused),
            origins: Vec::new(),
        });
        contract.dims.insert(name, dim);
    }
    contract.dims.iter_mut().filter(|(name, _)| inexact.contains(*name)).for_each(|(_, d)| d.exact = false);
    (contract, found)
}

/// Marks not exact the dims named by conditions inside an If branch whose condition inference
/// does not know (`open`): they hold only where that branch runs, and the contract, which
/// needs both, may refuse sizes the other branch runs (silero VAD's 8 kHz branch runs from 96
/// samples, its 16 kHz branch from 192).
pub fn branched(contract: &mut Contract, constraints: &[Constraint], open: &[String]) {
    let inside =
        |g: &str| open.iter().any(|o| g.strip_prefix(o.as_str()).is_some_and(|r| r.is_empty() || r.starts_with('/')));
    for c in constraints.iter().filter(|c| inside(&c.graph)) {
        for a in terms(&c.assumption).into_iter().flat_map(Term::atoms) {
            if let Some(d) = a.as_name().and_then(|n| contract.dims.get_mut(n)) {
                d.exact = false;
            }
        }
    }
}

/// The sizes that indices of unknown values are computed from, as one relation whose dims are
/// then not exact: where a `Shape` or `Size` upstream reads sizes into indices (Longformer's
/// chunk indices, a dynamo export's mask positions), or a `CumSum` sums along an axis
/// (RoBERTa's positions), their node may refuse sizes no condition names. Indices that are
/// data (token ids) read no size.
pub fn unseen(contract: &mut Contract, model: &crate::Model, inf: &crate::infer::Inference) {
    // One walk up from each index; a value an earlier walk reached counts as that walk found
    // (it may read sizes), so that no value is walked twice.
    let mut walked: HashMap<ValueId, usize> = HashMap::new();
    let (mut reads, mut names) = (Vec::new(), BTreeSet::new());
    for (k, (v, _)) in inf.unbounded.iter().enumerate() {
        let (mut stack, mut found) = (vec![*v], false);
        while let Some(v) = stack.pop() {
            if let Some(j) = walked.get(&v) {
                found |= *j < k && reads[*j];
                continue;
            }
            walked.insert(v, k);
            let Def::Node(n, _) = model.value(v).def else { continue };
            let node = model.node(n);
            let moves = crate::ops::meaning(&node.domain, &node.op_type).map_or(&[][..], |m| m.moves);
            match node.op_type.as_str() {
                _ if !node.domain.is_empty() => stack.extend(node.inputs.iter().flatten()),
                "Shape" | "Size" => {
                    found = true;
                    let dims = node.inputs.iter().flatten().flat_map(|x| dims_of(inf, *x));
                    names.extend(read_names(model, dims));
                }
                // A running sum grows with the length of its axis: RoBERTa's positions are
                // `cumsum(ids != pad) + pad`, into a table of as many positions.
                "CumSum" => {
                    found = true;
                    let Some(&Some(data)) = node.inputs.first() else { continue };
                    let dims = dims_of(inf, data);
                    let axis = node.inputs.get(1).copied().flatten().and_then(|a| inf.value(a)?.first()?.known());
                    let axis = axis.and_then(|a| usize::try_from(if a < 0 { a + dims.len() as i64 } else { a }).ok());
                    names.extend(read_names(
                        model,
                        match axis.and_then(|a| dims.get(a)) {
                            Some(d) => std::slice::from_ref(d),
                            None => dims,
                        },
                    ));
                    stack.push(data);
                }
                // The other inputs only move these inputs' elements.
                _ if !moves.is_empty() => {
                    stack.extend(moves.iter().filter_map(|i| node.inputs.get(*i).copied().flatten()))
                }
                _ => stack.extend(node.inputs.iter().flatten()),
            }
        }
        reads.push(found);
    }
    let mut reading = inf.unbounded.iter().zip(&reads).filter(|(_, r)| **r).map(|((_, node), _)| node);
    let (Some(first), false) = (reading.next(), names.is_empty()) else { return };
    contract.dims.iter_mut().filter(|(name, _)| names.contains(*name)).for_each(|(_, d)| d.exact = false);
    let more = match reading.count() {
        0 => String::new(),
        k => format!(" (and {k} more)"),
    };
    let condition = format!("the indices of {first}{more}, computed from these sizes, stay in range");
    contract.relations.push(Relation {
        dims: names.into_iter().collect(),
        condition,
        node: first.clone(),
        exact: false,
    });
}

/// The input dims the shapes of `values` are made of; every input dim where one is a size
/// inference could not name, which may have come from any of them.
fn read_names<'a>(model: &crate::Model, dims: impl IntoIterator<Item = &'a Dim>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for d in dims {
        match d {
            Dim::Known(_) => {}
            Dim::Term(t) if !t.has_fresh() => {
                names.extend(t.atoms().iter().filter_map(|a| a.as_name().map(str::to_string)))
            }
            _ => return model.input_dims(),
        }
    }
    names
}

/// The dims of `v`'s shape; one unknown dim where its rank is unknown.
fn dims_of(inf: &crate::infer::Inference, v: ValueId) -> &[Dim] {
    inf.shape(v).map_or(&[Dim::Unknown][..], Vec::as_slice)
}

/// Fills in where the sizes each counterexample's node gets came from, evaluated at the
/// counterexample's size.
pub fn explain(contract: &mut Contract, model: &crate::Model, inf: &crate::infer::Inference) {
    if contract.dims.values().all(|d| d.counterexample.is_none()) {
        return;
    }
    let positions = model.positions();
    let nodes: HashMap<(&str, String), crate::ir::NodeId> = model
        .graphs
        .iter()
        .flat_map(|g| g.order.iter().map(move |n| (g.path.as_str(), *n)))
        .map(|(path, n)| ((path, model.label_with(n, &positions)), n))
        .collect();
    // As many as the clashes traced ([`crate::infer::MAX_TRACED`]): a model of 100,000 dims
    // would otherwise print 100,000 traces.
    let refused = contract.dims.iter_mut().filter_map(|(name, d)| Some((name, d.counterexample.as_mut()?)));
    for (name, ce) in refused.take(crate::infer::MAX_TRACED) {
        let Some(&n) = nodes.get(&(ce.graph.as_str(), ce.node.clone())) else { continue };
        let node = model.node(n);
        let x = Term::name(name);
        let show = crate::provenance::valued(&x, ce.value);
        let out_rank = node.outputs.first().copied().flatten().and_then(|v| inf.shape(v)).map(Vec::len);
        // A size bound is on the input whose size there is the size bound, or else the first
        // made of the dim.
        let (window, axis) = (ce.window.clone(), ce.axis);
        let at_axis = |v: &ValueId| inf.shape(*v).and_then(|s| s.get(axis));
        let mentions = |d: &Dim| matches!(d, Dim::Term(t) if t.atoms().contains(&x));
        let is_bound = |v: &&ValueId| matches!(at_axis(v), Some(Dim::Term(t)) if Some(t) == window.as_ref());
        let bound = |v: &&ValueId| at_axis(v).is_some_and(mentions);
        // A declared size is about the output declared, so that is the value traced.
        let declared = ce.declared.as_ref().and_then(|t| node.outputs.iter().flatten().find(|v| model.name(**v) == t));
        let inputs: Vec<&ValueId> = match (declared, &window) {
            (Some(v), _) => vec![v],
            (None, Some(_)) => {
                let mut inputs = node.inputs.iter().flatten();
                inputs.clone().find(is_bound).or_else(|| inputs.find(bound)).into_iter().collect()
            }
            (None, None) => node.inputs.iter().flatten().collect(),
        };
        for &v in inputs {
            let Some(shape) = inf.shape(v) else { continue };
            let axis = match out_rank {
                _ if window.is_some() => Some(axis),
                Some(r) => (ce.axis + shape.len()).checked_sub(r),
                None => None,
            };
            let Some(axis) = axis.filter(|a| *a < shape.len()) else { continue };
            if show(&shape[axis]) == "1" && window.is_none() {
                continue;
            }
            if let Some(o) = crate::provenance::trace(model, inf, &positions, v, axis) {
                ce.origins.push(format!("'{}': {}", model.name(v), o.render(&show)));
            }
        }
    }
}

/// The error for a dim no size suits: the first condition that no size satisfies alone, or
/// else the one that leaves none together with those before it.
fn unsatisfiable(name: &str, solved: &[Solved], end: i64) -> Option<Diagnostic> {
    let alone = solved.iter().find(|s| (1..=end).all(|v| !s.at(v)));
    let culprit = alone.or_else(|| {
        let mut ok = vec![true; end as usize];
        solved.iter().find(|s| {
            for v in 1..=end {
                ok[(v - 1) as usize] &= s.at(v);
            }
            !ok.contains(&true)
        })
    })?;
    let c = culprit.constraint;
    let together = if alone.is_some() { "" } else { " together with the conditions before it" };
    let (code, msg) = match c.declared.as_ref().filter(|d| d.output && alone.is_some()) {
        // A graph output declared false at every size: the clash `--dim` finds at each.
        Some(t) => (
            Code::DeclaredShapeMismatch,
            format!(
                "graph output '{}' is declared unlike what {} computes at every size of {name}: {}",
                t.tensor, c.node, c.assumption
            ),
        ),
        None => (
            Code::Unsatisfiable,
            format!("no size of {name} satisfies {}{together}: the model cannot run at any {name}", c.assumption),
        ),
    };
    let mut d = Diagnostic::new(Severity::Error, code, &c.graph, msg);
    d.node = Some(c.node.clone());
    d.op_type = Some(c.op_type.clone());
    d.axis = Some(c.axis);
    Some(d)
}

/// What the condition `c` meets at `x = v`, in words.
fn failure(c: &Constraint, x: &Term, name: &str, v: i64) -> String {
    let at = |t: &Term| t.eval(&|a| (a == x).then_some(v));
    let show = |t: &Term| at(t).map_or_else(|| "sizes that do not broadcast".to_string(), |n| n.to_string());
    let head = format!("{name}={v}: {} ({})", c.node, c.op_type);
    let axis = c.axis;
    let sizes = |s: &[i64]| s.iter().map(i64::to_string).collect::<Vec<_>>().join(" or ");
    match (&c.assumption, c.declared.as_ref().map(|d| &d.tensor)) {
        // A size the model declares for the node's output.
        (Assumption::OneOf { sym, sizes: s }, Some(t)) => {
            format!("{head} computes {} at axis {axis} of '{t}', which the model declares {}", show(sym), sizes(s))
        }
        (Assumption::Equal(a, b), Some(t)) => {
            format!("{head} computes {} at axis {axis} of '{t}', which the model declares {}", show(a), show(b))
        }
        (Assumption::OneOf { sym, sizes: s }, _) => {
            format!("{head} gets {} at axis {axis}, where it needs {}", show(sym), sizes(s))
        }
        (Assumption::EqualOrOne(ts), _) => {
            let mut vals: Vec<String> = ts.iter().map(show).collect();
            vals.dedup();
            format!("{head} gets {} at axis {axis}", vals.join(" and "))
        }
        (Assumption::Stretches { from, to }, _) => {
            format!("{head} gets {} to stretch to {} at axis {axis}", show(from), show(to))
        }
        (Assumption::Equal(a, b), _) => {
            format!("{head} gets {} and {} at axis {axis}, which must be equal", show(a), show(b))
        }
        (Assumption::AtLeast { size, min }, _) => {
            format!("{head} gets {} at axis {axis}, where it needs at least {min}", show(size))
        }
        (Assumption::AtMost { size, max }, _) => {
            format!("{head} gets {} at axis {axis}, where it takes at most {max}", show(size))
        }
    }
}

/// The contract of the accepted sizes `ok[v-1]` (`v` in `1..=end`), which repeat with `period`
/// beyond `settle`.
fn describe(ok: &[bool], settle: i64, period: i64, end: i64) -> DimContract {
    let at = |v: i64| ok[(v - 1) as usize];
    let tail: Vec<i64> = (settle + 1..=end).filter(|v| at(*v)).collect();
    if tail.is_empty() {
        // Finitely many sizes.
        let sizes: Vec<i64> = (1..=settle).filter(|v| at(*v)).collect();
        let (min, max) = (sizes[0], sizes[sizes.len() - 1]);
        let gaps: Vec<i64> = (min..=max).filter(|v| !at(*v)).collect();
        let text = match sizes.as_slice() {
            [one] => format!("only {one}"),
            _ if gaps.is_empty() => format!("{min} to {max}"),
            _ if sizes.len() <= 8 => format!("one of {}", list(&sizes)),
            _ => format!("{min} to {max}, except {}", list(&gaps)),
        };
        // The shorter list: the sizes accepted, or the range without the gaps.
        let (residues, except, also) =
            if gaps.len() > sizes.len() { (Vec::new(), Vec::new(), sizes) } else { (vec![0], gaps, Vec::new()) };
        let max = Some(max);
        return DimContract { min, max, modulus: 1, residues, except, also, exact: true, text, counterexample: None };
    }
    // The smallest modulus the tail repeats with.
    let pattern: Vec<bool> = (0..period).map(|r| at(settle + 1 + ((r - settle - 1).rem_euclid(period)))).collect();
    let modulus = (1..=period)
        .filter(|m| period % m == 0)
        .find(|m| (0..period).all(|r| pattern[r as usize] == pattern[(r % m) as usize]))
        .unwrap_or(period);
    let residues: Vec<i64> = (0..modulus).filter(|r| pattern[*r as usize]).collect();
    let base = |v: i64| residues.contains(&v.rem_euclid(modulus));
    let min = (1..=end).find(|v| at(*v)).unwrap_or(1);
    let except: Vec<i64> = (min..=settle).filter(|v| base(*v) && !at(*v)).collect();
    let also: Vec<i64> = (min..=settle).filter(|v| !base(*v) && at(*v)).collect();
    let mut text = if modulus == 1 { format!("at least {min}") } else { periodic_text(modulus, &residues) };
    let first_base = (1..=modulus).find(|v| base(*v)).unwrap_or(1);
    if modulus > 1 && min > first_base {
        text.push_str(&format!(", at least {min}"));
    }
    if !except.is_empty() {
        text.push_str(&format!(", except {}", list(&except)));
    }
    if !also.is_empty() {
        text.push_str(&format!(", or {}", list(&also)));
    }
    DimContract { min, max: None, modulus, residues, except, also, exact: true, text, counterexample: None }
}

/// Sizes with these residues modulo `m` in words: "a multiple of 32, or 1 to 3 less than one".
fn periodic_text(m: i64, residues: &[i64]) -> String {
    let mut parts = Vec::new();
    if residues.contains(&0) {
        parts.push(format!("a multiple of {m}"));
    }
    // Offsets above a multiple (1, 2, ...) and below the next (-1, -2, ...), as runs.
    let above: Vec<i64> = residues.iter().copied().filter(|r| *r > 0 && 2 * r <= m).collect();
    let below: Vec<i64> = residues.iter().rev().map(|r| m - r).filter(|b| *b > 0 && 2 * b < m).collect();
    let one = if parts.is_empty() { format!("a multiple of {m}") } else { "one".to_string() };
    for (offsets, word) in [(above, "more"), (below, "less")] {
        for run in runs(&offsets) {
            let amount = match run {
                (a, b) if a == b => a.to_string(),
                (a, b) => format!("{a} to {b}"),
            };
            parts.push(format!("{amount} {word} than {one}"));
        }
    }
    parts.join(", or ")
}

/// Runs of consecutive integers in sorted `xs`, as (first, last).
fn runs(xs: &[i64]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for &x in xs {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == x => *last = x,
            _ => out.push((x, x)),
        }
    }
    out
}

/// A list of sizes in words: the first few and how many more.
fn list(sizes: &[i64]) -> String {
    let shown: Vec<String> = sizes.iter().take(6).map(i64::to_string).collect();
    match sizes.len() {
        n if n > 6 => format!("{} and {} more", shown.join(", "), n - 6),
        _ => shown.join(", "),
    }
}

/// A required set of sizes for `check --require NAME=SPEC`: a range `a..=b`, a stepped range
/// `a..=b/s`, or a list `1,2,4`.
pub fn parse_spec(spec: &str) -> Option<Vec<i64>> {
    let spec = spec.trim();
    if let Some((a, rest)) = spec.split_once("..=") {
        let (b, step) = match rest.split_once('/') {
            Some((b, s)) => (b, s.trim().parse::<i64>().ok()?),
            None => (rest, 1),
        };
        let (a, b) = (a.trim().parse::<i64>().ok()?, b.trim().parse::<i64>().ok()?);
        if step < 1 || a > b || b.checked_sub(a)? / step > 1_000_000 {
            return None;
        }
        return Some((0..).map_while(|k: i64| a.checked_add(k.checked_mul(step)?)).take_while(|v| *v <= b).collect());
    }
    spec.split(',').map(|s| s.trim().parse::<i64>().ok()).collect()
}

/// The sizes `check --require NAME=SPEC` asks for, by dim name, from (name, SPEC) pairs.
pub fn requirements<'a>(
    specs: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> crate::Result<HashMap<String, Vec<i64>>> {
    let mut out: HashMap<String, Vec<i64>> = HashMap::new();
    for (name, spec) in specs {
        let sizes = parse_spec(spec).filter(|s| !s.is_empty() && !name.trim().is_empty()).ok_or_else(|| {
            crate::Error::Usage(format!(
                "--require '{name}={spec}': expected NAME=SPEC, SPEC a range 32..=2048, a stepped range 32..=2048/32 or a list 1,2,4"
            ))
        })?;
        out.entry(name.trim().to_string()).or_default().extend(sizes);
    }
    Ok(out)
}

/// `check` of one model: inference, with a `require-failed` error for each dim of `required`
/// whose sizes the contract does not all accept.
pub fn check(
    model: &crate::Model,
    options: &crate::infer::Options,
    required: &HashMap<String, Vec<i64>>,
) -> crate::infer::Inference {
    let mut inf = crate::infer::infer(model, options);
    if !required.is_empty() {
        inf.diagnostics.extend(require(&inf.contract, required, &model.input_dims()));
    }
    inf
}

/// For each required dim, the first size the contract refuses, as an error finding.
/// Names the model's inputs do not `declare` are left to the caller (another model may).
pub fn require(
    contract: &Contract,
    required: &HashMap<String, Vec<i64>>,
    declare: &BTreeSet<String>,
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let mut names: Vec<&String> = required.keys().filter(|n| declare.contains(*n)).collect();
    names.sort();
    for name in names {
        let Some(v) = required[name].iter().find(|v| !contract.accepts(name, **v)) else { continue };
        let dim = contract.dims.get(name);
        let why = match dim.and_then(|d| d.counterexample.as_ref()).filter(|c| c.value == *v) {
            Some(c) => c.message.clone(),
            None => dim.map_or_else(|| format!("{name} must be at least 1"), |d| format!("{name} must be {}", d.text)),
        };
        let msg = format!("--require {name}: the model does not run at {name}={v}: {why}");
        let mut d = Diagnostic::new(Severity::Error, Code::RequireFailed, "main", msg);
        if let Some(c) = dim.and_then(|d| d.counterexample.as_ref()) {
            d.node = Some(c.node.clone());
            d.op_type = Some(c.op_type.clone());
        }
        found.push(d);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::parse_spec;

    #[test]
    fn specs_read_as_users_write_them_and_extremes_do_not_overflow() {
        assert_eq!(parse_spec("32..=128/32"), Some(vec![32, 64, 96, 128]));
        assert_eq!(parse_spec("1..=3"), Some(vec![1, 2, 3]));
        assert_eq!(parse_spec(" 1, 2,4 "), Some(vec![1, 2, 4]));
        assert_eq!(parse_spec("9..=1"), None);
        assert_eq!(parse_spec("1..=9/0"), None);
        assert_eq!(parse_spec("x"), None);
        // Near the ends of i64: no overflow, and no million-element list.
        assert_eq!(parse_spec(&format!("{}..={}", i64::MIN, i64::MAX)), None);
        let top = i64::MAX - 2;
        assert_eq!(parse_spec(&format!("{top}..={}/2", i64::MAX)), Some(vec![top, top + 2]));
    }
}

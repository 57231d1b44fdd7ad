//! What changed between two versions of a model, as its callers see it: the graph inputs'
//! and outputs' element types and shapes, and the contracts of the input dims.

use std::collections::HashMap;

use crate::contract::DimContract;
use crate::diag::{Code, Diagnostic, Severity};
use crate::infer::Inference;
use crate::ir::{Model, ValueInfo};
use crate::shape::{render, Dim, Term, Type};

/// The findings between `old` and `new`, each inferred as a caller sees it (no size bound);
/// none for two saves of one model.
pub fn diff(old: &Model, new: &Model) -> Vec<Diagnostic> {
    let options = crate::infer::Options::default();
    let (oi, ni) = (crate::infer::infer(old, &options), crate::infer::infer(new, &options));
    compare((old, &oi), (new, &ni))
}

/// [`diff`] of models already inferred.
fn compare(old: (&Model, &Inference), new: (&Model, &Inference)) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let mut say = |code: Code, msg: String| found.push(Diagnostic::new(Severity::Error, code, "main", msg));
    let (om, oi) = old;
    let (nm, ni) = new;
    let inputs = |m: &Model| -> Vec<ValueInfo> {
        let g = m.graph(Model::MAIN);
        let inits: std::collections::HashSet<&str> = g.initializers.iter().map(|t| t.name.as_str()).collect();
        g.inputs.iter().filter(|vi| !inits.contains(m.name(vi.value))).cloned().collect()
    };
    let (old_in, new_in) = (inputs(om), inputs(nm));
    let find = |m: &Model, list: &[ValueInfo], name: &str| list.iter().find(|vi| m.name(vi.value) == name).cloned();
    // Old symbol -> new symbol, by input name and axis.
    let mut renamed: HashMap<String, String> = HashMap::new();
    for o in &old_in {
        let name = om.name(o.value);
        let Some(n) = find(nm, &new_in, name) else {
            say(Code::InputRemoved, format!("input '{name}' is gone"));
            continue;
        };
        let (Some(Type::Tensor { dtype: od, shape: os }), Some(Type::Tensor { dtype: nd, shape: ns })) = (&o.ty, &n.ty)
        else {
            continue;
        };
        if od != nd {
            say(Code::InputTypeChanged, format!("input '{name}' was {}, is now {}", show_dtype(*od), show_dtype(*nd)));
        }
        let (Some(os), Some(ns)) = (os, ns) else { continue };
        if os.len() != ns.len() {
            say(Code::InputShapeChanged, format!("input '{name}' was {}, is now {}", render(os), render(ns)));
            continue;
        }
        for (axis, (a, b)) in os.iter().zip(ns).enumerate() {
            let (sa, sb) = (a.term().and_then(Term::as_name), b.term().and_then(Term::as_name));
            match (a, b) {
                (Dim::Known(x), Dim::Known(y)) if x != y => {
                    say(Code::InputShapeChanged, format!("input '{name}' axis {axis} was {x}, is now {y}"))
                }
                (Dim::Term(_), Dim::Known(y)) => say(
                    Code::DimFixed,
                    format!(
                        "input '{name}' axis {axis} was '{a}', any size the model accepts, and is now fixed to {y}"
                    ),
                ),
                _ => match (sa, sb) {
                    (Some(x), Some(y)) if x != y => {
                        renamed.insert(x.to_string(), y.to_string());
                        say(Code::SymbolRenamed, format!("input '{name}' axis {axis} was '{x}', is now '{y}'"));
                    }
                    (Some(x), _) => {
                        renamed.insert(x.to_string(), x.to_string());
                    }
                    _ => {}
                },
            }
        }
    }
    for n in &new_in {
        let name = nm.name(n.value);
        if find(om, &old_in, name).is_none() {
            say(Code::InputAdded, format!("input '{name}' is new: callers must feed it"));
        }
    }
    // Contracts, each old dim against the dim it became.
    for (old_name, new_name) in &renamed {
        let (a, b) = (oi.contract.dims.get(old_name), ni.contract.dims.get(new_name));
        if let Some(v) = narrowed(a, b) {
            let now = b.map_or_else(String::new, |d| format!("; it must now be {}", d.text));
            say(Code::ContractNarrowed, format!("'{new_name}' no longer accepts {v}, which it did{now}"));
        }
    }
    // Outputs, in the new names of sizes.
    let to_new = |d: &Dim| match d {
        Dim::Term(t) => t.substitute(&|a| a.as_name().and_then(|s| renamed.get(s)).map(|s| Dim::Term(Term::name(s)))),
        other => other.clone(),
    };
    for o in &om.graph(Model::MAIN).outputs {
        let name = om.name(o.value);
        let Some(n) = nm.graph(Model::MAIN).outputs.iter().find(|n| nm.name(n.value) == name) else {
            say(Code::OutputRemoved, format!("output '{name}' is gone"));
            continue;
        };
        let (Some(Type::Tensor { dtype: od, shape: os }), Some(Type::Tensor { dtype: nd, shape: ns })) =
            (oi.ty(o.value), ni.ty(n.value))
        else {
            continue;
        };
        if od != nd {
            say(
                Code::OutputTypeChanged,
                format!("output '{name}' was {}, is now {}", show_dtype(*od), show_dtype(*nd)),
            );
        }
        if let (Some(os), Some(ns)) = (os, ns) {
            let os: Vec<Dim> = os.iter().map(to_new).collect();
            let same = os.len() == ns.len()
                && os
                    .iter()
                    .zip(ns)
                    .all(|(a, b)| a == b || (a.known().is_none() && b.known().is_none() && !named(a) && !named(b)));
            if !same {
                say(Code::OutputShapeChanged, format!("output '{name}' was {}, is now {}", render(&os), render(ns)));
            }
        }
    }
    found
}

fn named(d: &Dim) -> bool {
    d.term().is_some_and(|t| !t.is_anonymous())
}

fn show_dtype(d: Option<crate::dtype::DType>) -> String {
    d.map_or_else(|| "of unknown element type".to_string(), |d| d.to_string())
}

/// The smallest size the old contract accepts and the new refuses (none: every size), exact:
/// beyond every bound and listed size both repeat with their moduli.
fn narrowed(old: Option<&DimContract>, new: Option<&DimContract>) -> Option<i64> {
    let new = new?;
    let accepts = |c: Option<&DimContract>, v: i64| c.map_or(v >= 1, |c| c.accepts(v));
    let listed = |c: Option<&DimContract>| {
        c.map_or(0, |c| {
            let lists = c.except.iter().chain(&c.also).copied().max().unwrap_or(0);
            lists.max(c.min).max(c.max.unwrap_or(0))
        })
    };
    let modulus = |c: Option<&DimContract>| c.map_or(1, |c| c.modulus.max(1));
    let end = listed(old).max(listed(Some(new))) + crate::shape::lcm(modulus(old), modulus(Some(new)))?;
    (1..=end + 1).find(|v| accepts(old, *v) && !new.accepts(*v))
}

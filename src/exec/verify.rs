//! Translation validation for the rewrites: a rewritten model checked against its original on
//! the executor, site by site, so that a model with ops the executor lacks can still be
//! checked where the rewrite changed it.
//!
//! A site is a node of the rewrite whose original (the node with the same first output, op
//! and graph) has other inputs or attributes. Each side of a site is its node plus the nodes
//! that compute its inputs back to values both models hold (the same name, made by a node of
//! the same op, or a graph input or initializer of both); those values get the same data on
//! both sides: an initializer's own, contents inference knows, or deterministic data of the
//! inferred shape. Both sides run on the executor and their outputs must be identical.

use std::collections::{HashMap, HashSet};

use super::compare::{compare, generate, tensor_for, Tolerance};
use super::{kernel, run_node, HostTensor, Options};
use crate::infer::{self, Inference};
use crate::ir::{Def, GraphId, Model, NodeId, ValueId};
use crate::shape::Dim;
use crate::Error;

/// The size given to a symbolic dim of the inputs that the caller does not bind.
pub const DEFAULT_SIZE: i64 = 4;

/// How one site fared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every output identical; the count of nodes the rewrite runs for it.
    Identical { nodes: usize },
    /// An output differs.
    Differs(String),
    /// The site could not be run (an op the executor lacks, a size not known).
    NotRun(String),
}

/// One site of the rewrite and how it fared.
#[derive(Clone, Debug)]
pub struct Site {
    pub graph: String,
    /// The rewritten node's label and op.
    pub node: String,
    pub op_type: String,
    pub outcome: Outcome,
}

/// Each output of the whole models by name, `Err` with how it differs.
pub type Outputs = Vec<(String, Result<(), String>)>;

/// What [`verify`] found: each site, and the whole models' outputs compared (`Err` with the
/// reason when they could not be run).
#[derive(Clone, Debug)]
pub struct Report {
    pub sites: Vec<Site>,
    pub whole: Result<Outputs, String>,
    /// The sizes the inputs' symbolic dims were given.
    pub bindings: HashMap<String, i64>,
}

impl Report {
    /// True when nothing checked differs.
    pub fn identical(&self) -> bool {
        self.sites.iter().all(|s| !matches!(s.outcome, Outcome::Differs(_)))
            && self.whole.as_ref().map_or(true, |outs| outs.iter().all(|(_, r)| r.is_ok()))
    }
}

/// Checks `rewritten` against `original` site by site and, where the executor runs both
/// models whole, output by output. Symbolic input dims take their sizes from `dims`, or
/// [`DEFAULT_SIZE`]; the inputs named in `shapes` take those shapes (for dims without a name).
pub fn verify(
    original: &Model,
    rewritten: &Model,
    dims: &HashMap<String, i64>,
    shapes: &HashMap<String, Vec<i64>>,
    opts: &Options,
) -> Result<Report, Error> {
    let given;
    let original = if shapes.is_empty() {
        original
    } else {
        let mut m = original.clone();
        for (name, dims) in shapes {
            m.declare_input_shape(name, dims)?;
        }
        given = m;
        &given
    };
    let mut bindings = dims.clone();
    for name in original.input_dims() {
        bindings.entry(name).or_insert(DEFAULT_SIZE);
    }
    let options = infer::Options { bindings: bindings.clone(), ..infer::Options::default() };
    let inf = infer::infer(original, &options);
    let mut sites = Vec::new();
    for rg in rewritten.graph_ids() {
        let g = rewritten.graph(rg);
        let Some(og) = original.graph_ids().find(|o| original.graph(*o).path == g.path) else { continue };
        let pair = Pair { original, rewritten, og, rg };
        for &r in &g.order {
            let Some(o) = pair.original_of(r) else { continue };
            if pair.same_node(o, r) {
                continue;
            }
            let node = rewritten.node(r);
            let outcome = pair.check(o, r, &inf, opts).unwrap_or_else(Outcome::NotRun);
            sites.push(Site {
                graph: g.path.clone(),
                node: rewritten.node_label(r),
                op_type: node.op_type.to_string(),
                outcome,
            });
        }
    }
    let whole = whole(original, rewritten, &bindings, opts);
    Ok(Report { sites, whole, bindings })
}

/// Runs both models whole on the same generated inputs and compares each output; `Err` with
/// the reason when either cannot be run.
fn whole(
    original: &Model,
    rewritten: &Model,
    bindings: &HashMap<String, i64>,
    opts: &Options,
) -> Result<Outputs, String> {
    let inputs = generate(original, bindings, opts.max_memory).map_err(|e| e.to_string())?;
    let a = super::run(original, inputs.clone(), opts).map_err(|e| e.to_string())?;
    let b = super::run(rewritten, inputs, opts).map_err(|e| e.to_string())?;
    if a.len() != b.len() {
        return Ok(vec![("outputs".into(), Err(format!("{} in the original, {} in the rewrite", a.len(), b.len())))]);
    }
    Ok(a.iter()
        .zip(&b)
        .map(|((na, ta), (nb, tb))| {
            let label = if na == nb { na.clone() } else { format!("{na} / {nb}") };
            (label, compare(tb, ta, Tolerance::EXACT))
        })
        .collect())
}

/// One graph of the original and the same graph of the rewrite.
struct Pair<'a> {
    original: &'a Model,
    rewritten: &'a Model,
    og: GraphId,
    rg: GraphId,
}

impl Pair<'_> {
    /// The original node that rewritten node `r` stands for: the one making the same first
    /// output with the same op.
    fn original_of(&self, r: NodeId) -> Option<NodeId> {
        let node = self.rewritten.node(r);
        let out = self.rewritten.name(node.outputs.first().copied().flatten()?);
        let v = self.original.local(self.og, out)?;
        match self.original.value(v).def {
            Def::Node(o, 0) if self.original.node(o).op_type == node.op_type => Some(o),
            _ => None,
        }
    }

    /// True when the two nodes take inputs of the same names and the same attributes.
    fn same_node(&self, o: NodeId, r: NodeId) -> bool {
        let (a, b) = (self.original.node(o), self.rewritten.node(r));
        let names = |m: &Model, n: &crate::ir::Node| -> Vec<String> {
            n.inputs.iter().map(|v| v.map(|v| m.name(v).to_string()).unwrap_or_default()).collect()
        };
        let attrs = |n: &crate::ir::Node| -> Vec<String> {
            let mut v: Vec<String> = n
                .attrs
                .iter()
                .map(|a| match &a.value {
                    crate::ir::AttrValue::Graph(_) | crate::ir::AttrValue::Graphs(_) => a.name.clone(),
                    value => format!("{}={value:?}", a.name),
                })
                .collect();
            v.sort();
            v
        };
        a.op_type == b.op_type && names(self.original, a) == names(self.rewritten, b) && attrs(a) == attrs(b)
    }

    /// True when the value named `name` is one both models hold: a graph input or initializer
    /// of both, or the same output of a node of the same op. A rewrite keeps each such value's
    /// meaning (what its sites check), so sites are checked one at a time, each from data given
    /// to the values it starts from.
    fn shared(&self, name: &str) -> bool {
        let (Some(a), Some(b)) = (self.original.resolve(self.og, name), self.rewritten.resolve(self.rg, name)) else {
            return false;
        };
        match (self.original.value(a).def, self.rewritten.value(b).def) {
            (Def::Node(o, i), Def::Node(r, j)) => {
                i == j && self.original.node(o).op_type == self.rewritten.node(r).op_type
            }
            (Def::Input, Def::Input) | (Def::Initializer, Def::Initializer) => true,
            _ => false,
        }
    }

    /// Runs both sides of site (o, r) and compares the outputs; `Err` with why they could not
    /// be run.
    fn check(&self, o: NodeId, r: NodeId, inf: &Inference, opts: &Options) -> Result<Outcome, String> {
        let mut env: HashMap<String, HostTensor> = HashMap::new();
        let sides = [(self.original, self.og, o), (self.rewritten, self.rg, r)];
        let mut outputs = Vec::new();
        let mut ran = 0;
        for (model, g, n) in sides {
            let nodes = self.fragment(model, g, n);
            let mut local: HashMap<String, HostTensor> = HashMap::new();
            for &m in &nodes {
                let node = model.node(m);
                let mut ins = Vec::with_capacity(node.inputs.len());
                for v in &node.inputs {
                    let Some(v) = v else {
                        ins.push(None);
                        continue;
                    };
                    let name = model.name(*v);
                    let t = match local.get(name) {
                        Some(t) => t.clone(),
                        None => self.boundary(model, *v, inf, &mut env, opts)?,
                    };
                    ins.push(Some(t));
                }
                if kernel(&node.domain, &node.op_type).is_none() || !node.subgraphs().is_empty() {
                    return Err(format!("the executor does not run {}", node.op_type));
                }
                let opset = model.opset_or_default(&node.domain);
                let outs = run_node(node, opset, ins, opts).map_err(|e| e.to_string())?;
                for (v, t) in node.outputs.iter().zip(outs) {
                    if let Some(v) = v {
                        local.insert(model.name(*v).to_string(), t);
                    }
                }
            }
            ran = nodes.len();
            let node = model.node(n);
            outputs.push(node.outputs.iter().map(|v| v.and_then(|v| local.remove(model.name(v)))).collect::<Vec<_>>());
        }
        for (k, (a, b)) in outputs[0].iter().zip(&outputs[1]).enumerate() {
            match (a, b) {
                (Some(a), Some(b)) => {
                    if let Err(why) = compare(b, a, Tolerance::EXACT) {
                        return Ok(Outcome::Differs(format!("output {k}: {why}")));
                    }
                }
                (None, None) => {}
                _ => return Ok(Outcome::Differs(format!("output {k} is present on one side only"))),
            }
        }
        Ok(Outcome::Identical { nodes: ran })
    }

    /// Node `n` and the nodes of graph `g` that compute its inputs back to shared values, in
    /// an order that runs them.
    fn fragment(&self, model: &Model, g: GraphId, n: NodeId) -> Vec<NodeId> {
        let mut keep: HashSet<NodeId> = HashSet::from([n]);
        let mut work = vec![n];
        while let Some(m) = work.pop() {
            for v in model.node(m).inputs.iter().flatten() {
                if let Def::Node(p, _) = model.value(*v).def {
                    if model.node(p).graph == g && !self.shared(model.name(*v)) && keep.insert(p) {
                        work.push(p);
                    }
                }
            }
        }
        model.topo_order(g).0.into_iter().filter(|m| keep.contains(m)).collect()
    }

    /// The data a value at the edge of a fragment holds: an initializer's own (of the model
    /// the fragment is in), else the contents inference knows, else deterministic data of its
    /// inferred shape in the original; the same tensor for the same name on both sides.
    fn boundary(
        &self,
        model: &Model,
        v: ValueId,
        inf: &Inference,
        env: &mut HashMap<String, HostTensor>,
        opts: &Options,
    ) -> Result<HostTensor, String> {
        let name = model.name(v).to_string();
        if let Some(t) = env.get(&name) {
            return Ok(t.clone());
        }
        let value = model.value(v);
        let t = if let Some(k) = value.initializer {
            let tensor = &model.graph(value.graph).initializers[k];
            super::tensor::from_ir(tensor, model.dir.as_deref(), opts.max_memory).map_err(|f| f.to_string())?
        } else {
            let ov = self.original.resolve(self.og, &name).ok_or_else(|| format!("'{name}' is not in the original"))?;
            let ty = inf.ty(ov).ok_or_else(|| format!("the type of '{name}' is not known"))?;
            let dtype = ty.dtype().ok_or_else(|| format!("the element type of '{name}' is not known"))?;
            let shape: Vec<usize> = ty
                .shape()
                .and_then(|s| s.iter().map(|d| d.known().and_then(|k| usize::try_from(k).ok())).collect())
                .ok_or_else(|| {
                    format!("the shape of '{name}' is not known under these sizes (bind them with --dim)")
                })?;
            let known: Option<Vec<i64>> = inf.value(ov).and_then(|c| c.iter().map(Dim::known).collect());
            match known.filter(|c| dtype == crate::dtype::DType::I64 && Some(c.len()) == super::tensor::numel(&shape)) {
                Some(c) => HostTensor::from_vec(shape, c).map_err(|f| f.to_string())?,
                None => tensor_for(&name, dtype, shape, opts.max_memory).map_err(|e| e.to_string())?,
            }
        };
        env.insert(name, t.clone());
        Ok(t)
    }
}

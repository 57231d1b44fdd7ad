//! The CPU executor: runs a model's main graph in topological order on host tensors, one
//! kernel per op from the op registry, within a memory budget. It is the project's oracle (a
//! rewrite must not change what a model computes) and a runtime for broadcasting graphs,
//! including the opset<7 legacy broadcasts that onnxruntime no longer runs.

pub(crate) mod broadcast;
pub mod compare;
pub mod fuse;
pub(crate) mod kernels;
pub mod npy;
pub(crate) mod scalar;
pub(crate) mod shape_ops;
pub mod tensor;
pub mod verify;

use std::collections::HashMap;
use std::path::Path;

use crate::diag::Error;
use crate::ir::{Def, Model, Node, ValueId};

pub use broadcast::Budget;
pub use tensor::{Data, Elem, HostTensor};

/// The default memory budget: 4 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 4 << 30;

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// No allocation may take the live tensors past this many bytes.
    pub max_memory: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options { max_memory: DEFAULT_MAX_MEMORY }
    }
}

/// Why a kernel failed, before the interpreter names the node.
#[derive(Clone, Debug, PartialEq)]
pub enum Fail {
    /// An allocation of `bytes` would pass the `budget`.
    Budget { what: String, bytes: u128, budget: u64 },
    /// The inputs or attributes are invalid for the op.
    Invalid(String),
    /// The executor does not run this (an element type, a cast to one).
    Unsupported(String),
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Budget { what, bytes, budget } => {
                write!(f, "{what} needs {bytes} bytes, over the memory budget of {budget} bytes")
            }
            Fail::Invalid(s) => f.write_str(s),
            Fail::Unsupported(what) => write!(f, "the executor does not run {what}"),
        }
    }
}

impl Fail {
    /// The error for a failure outside any node (an input file, an initializer), naming `what`.
    pub fn into_error(self, what: &str) -> Error {
        match self {
            Fail::Budget { what: w, bytes, budget } => Error::Budget { what: format!("{what}: {w}"), bytes, budget },
            Fail::Invalid(reason) => Error::Tensor { tensor: what.to_string(), reason },
            Fail::Unsupported(w) => Error::Unsupported { place: Some(format!("tensor '{what}'")), what: w },
        }
    }

    fn at_node(self, label: &str, op: &str) -> Error {
        match self {
            Fail::Budget { what, bytes, budget } => {
                Error::Budget { what: format!("the {what} of node {label} ({op})"), bytes, budget }
            }
            Fail::Invalid(reason) => Error::Exec { node: label.to_string(), op: op.to_string(), reason },
            Fail::Unsupported(what) => Error::Unsupported { place: Some(format!("node {label} ({op})")), what },
        }
    }
}

/// What a kernel sees of its node.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub node: &'a Node,
    /// The version of the node's domain the model imports.
    pub opset: i64,
    /// One entry per input slot; `None` for an omitted optional input.
    pub inputs: Vec<Option<HostTensor>>,
    /// What one allocation may take.
    pub budget: Budget,
    /// The model's folder, for external data in attributes.
    pub dir: Option<&'a Path>,
}

impl Ctx<'_> {
    /// Input `i`, which the op requires.
    pub fn input(&self, i: usize) -> Result<&HostTensor, Fail> {
        self.opt(i).ok_or_else(|| Fail::Invalid(format!("input {i} is missing")))
    }

    /// Input `i`, if given.
    pub fn opt(&self, i: usize) -> Option<&HostTensor> {
        self.inputs.get(i).and_then(Option::as_ref)
    }

    /// Input `i` as integers (a shape, axes, repeats).
    pub fn ints(&self, i: usize) -> Result<Vec<i64>, Fail> {
        self.input(i)?.to_i64s().ok_or_else(|| Fail::Invalid(format!("input {i} must be an integer tensor")))
    }
}

/// A kernel: the node's outputs from its inputs and attributes.
pub type Kernel = fn(&Ctx) -> Result<Vec<HostTensor>, Fail>;

/// The kernel for `op` in `domain`, if the executor has one (the registry's `kernel`; only
/// default-domain ops have one).
pub fn kernel(domain: &str, op: &str) -> Option<Kernel> {
    crate::ops::meaning(domain, op)?.kernel
}

/// Runs one node on the given inputs (one entry per input slot) at `opset`; its label in
/// errors is its name, or its op type.
pub fn run_node(
    node: &Node,
    opset: i64,
    inputs: Vec<Option<HostTensor>>,
    opts: &Options,
) -> Result<Vec<HostTensor>, Error> {
    let label = if node.name.is_empty() { node.op_type.to_string() } else { node.name.to_string() };
    let kern = kernel(&node.domain, &node.op_type).ok_or_else(|| unsupported(&label, node))?;
    let ctx = Ctx { node, opset, inputs, budget: Budget(opts.max_memory), dir: None };
    kern(&ctx).map_err(|f| f.at_node(&label, &node.op_type))
}

/// The error for a node whose op the executor has no kernel for (ops with subgraphs among them).
fn unsupported(label: &str, node: &Node) -> Error {
    let op =
        if node.domain.is_empty() { node.op_type.to_string() } else { format!("{}::{}", node.domain, node.op_type) };
    Error::Unsupported { place: Some(format!("node {label}")), what: op }
}

/// The live tensors and the bytes they hold (shared data counted once).
#[derive(Default)]
struct Env {
    values: HashMap<ValueId, HostTensor>,
    buffers: HashMap<usize, (usize, u128)>,
    live: u128,
}

impl Env {
    fn insert(&mut self, v: ValueId, t: HostTensor) {
        let key = std::sync::Arc::as_ptr(&t.data) as usize;
        let bytes = t.bytes();
        let e = self.buffers.entry(key).or_insert((0, bytes));
        if e.0 == 0 {
            self.live += bytes;
        }
        e.0 += 1;
        if let Some(old) = self.values.insert(v, t) {
            self.release(&old);
        }
    }

    fn remove(&mut self, v: ValueId) {
        if let Some(t) = self.values.remove(&v) {
            self.release(&t);
        }
    }

    /// Counts one read of each of `inputs`, dropping the values that no one reads any more.
    fn read<'a>(&mut self, uses: &mut HashMap<ValueId, usize>, inputs: impl Iterator<Item = &'a ValueId>) {
        for v in inputs {
            if let Some(u) = uses.get_mut(v) {
                *u -= 1;
                if *u == 0 {
                    self.remove(*v);
                }
            }
        }
    }

    /// For a budget error: what live tensors already hold.
    fn held(&self) -> String {
        if self.live > 0 {
            format!(" ({} bytes already in use)", self.live)
        } else {
            String::new()
        }
    }

    fn release(&mut self, t: &HostTensor) {
        let key = std::sync::Arc::as_ptr(&t.data) as usize;
        if let Some(e) = self.buffers.get_mut(&key) {
            e.0 -= 1;
            if e.0 == 0 {
                self.live -= e.1;
                self.buffers.remove(&key);
            }
        }
    }
}

/// Runs the model's main graph on `inputs` (by graph input name) and gives its outputs, in
/// graph output order, by name. Inputs with an initializer may be left out.
///
/// ```
/// use onnx_bcast::exec::{run, HostTensor, Options};
///
/// let model = onnx_bcast::io::load("models/nary_sum.onnx".as_ref())?;
/// let input = |shape: &[usize]| HostTensor::from_vec(shape.to_vec(), vec![1.0f32; shape.iter().product()]).unwrap();
/// let inputs = vec![
///     ("a".to_string(), input(&[8, 1, 6, 1])),
///     ("b".to_string(), input(&[7, 1, 5])),
///     ("c".to_string(), input(&[1])),
///     ("d".to_string(), input(&[6, 5])),
/// ];
/// let outputs = run(&model, inputs, &Options::default())?;
/// let (name, sum) = &outputs[0];
/// assert_eq!((name.as_str(), sum.shape.as_slice()), ("sum", &[8, 7, 6, 5][..]));
/// assert!(sum.elems::<f32>().unwrap().iter().all(|x| *x == 4.0));
/// # Ok::<(), onnx_bcast::Error>(())
/// ```
pub fn run(
    model: &Model,
    inputs: Vec<(String, HostTensor)>,
    opts: &Options,
) -> Result<Vec<(String, HostTensor)>, Error> {
    let main = model.graph(Model::MAIN);
    let dir = model.dir.as_deref();
    let mut env = Env::default();
    let limit = opts.max_memory as u128;
    let remaining = |env: &Env| Budget(limit.saturating_sub(env.live).min(u64::MAX as u128) as u64);

    for (name, t) in inputs {
        let info = main
            .inputs
            .iter()
            .find(|i| model.name(i.value) == name)
            .ok_or_else(|| Error::Usage(format!("the model has no input named '{name}'")))?;
        if let Some(ty) = &info.ty {
            if let Some(want) = ty.dtype().filter(|w| *w != t.dtype()) {
                return Err(Error::Tensor {
                    tensor: name,
                    reason: format!("is {}, the model declares {want}", t.dtype()),
                });
            }
            if let Some(shape) = ty.shape() {
                let fits = shape.len() == t.shape.len()
                    && shape.iter().zip(&t.shape).all(|(d, n)| d.known().is_none_or(|k| k == *n as i64));
                if !fits {
                    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
                    return Err(Error::Tensor {
                        tensor: name,
                        reason: format!("has shape {:?}, the model declares [{}]", t.shape, dims.join(", ")),
                    });
                }
            }
        }
        env.insert(info.value, t);
    }
    for i in &main.inputs {
        if !env.values.contains_key(&i.value) && model.value(i.value).initializer.is_none() {
            return Err(Error::Usage(format!("input '{}' is required and was not given", model.name(i.value))));
        }
    }

    let (order, cyclic) = model.topo_order(Model::MAIN);
    if let Some(n) = cyclic.first() {
        let node = model.node(*n);
        return Err(Error::Exec {
            node: model.node_label(*n),
            op: node.op_type.to_string(),
            reason: "the node is on a cycle".into(),
        });
    }
    // How many more times each value is read; graph outputs are never released.
    let mut uses: HashMap<ValueId, usize> = HashMap::new();
    let reads = order.iter().flat_map(|n| model.node(*n).inputs.iter().flatten().copied());
    for v in reads.chain(main.outputs.iter().map(|o| o.value)) {
        *uses.entry(v).or_default() += 1;
    }

    // Chains of broadcasting elementwise nodes run as one loop (see `fuse`).
    let fusion = fuse::plan(model, &order, &uses);
    // Labels of unnamed nodes need their index: computed once, not per node (a chain of 40k
    // unnamed nodes spent 1 s finding them).
    let positions = model.positions();
    for n in &order {
        if fusion.is_interior(*n) {
            continue;
        }
        if let Some(g) = fusion.group(*n) {
            let mut leaves = HashMap::new();
            for v in g.leaves() {
                let budget = remaining(&env);
                leaves.insert(*v, fetch(model, &mut env, *v, dir, budget, &model.label_with(*n, &positions))?);
            }
            let t = fuse::run_group(model, g, &leaves, remaining(&env), dir).map_err(|e| match e {
                // As below: report the whole budget, and what live tensors already hold of it.
                Error::Budget { what, bytes, .. } => {
                    Error::Budget { what: format!("{what}{}", env.held()), bytes, budget: opts.max_memory }
                }
                e => e,
            })?;
            drop(leaves);
            for m in g.nodes() {
                env.read(&mut uses, model.node(m).inputs.iter().flatten());
            }
            if let Some(v) = model.node(*n).outputs.first().copied().flatten() {
                if uses.get(&v).copied().unwrap_or(0) > 0 {
                    env.insert(v, t);
                }
            }
            continue;
        }
        let node = model.node(*n);
        let label = model.label_with(*n, &positions);
        if !node.subgraphs().is_empty() {
            return Err(unsupported(&label, node));
        }
        let kern = kernel(&node.domain, &node.op_type).ok_or_else(|| unsupported(&label, node))?;
        let mut ins = Vec::with_capacity(node.inputs.len());
        for v in &node.inputs {
            let budget = remaining(&env);
            ins.push(v.map(|v| fetch(model, &mut env, v, dir, budget, &label)).transpose()?);
        }
        let ctx = Ctx { node, opset: model.opset_or_default(&node.domain), inputs: ins, budget: remaining(&env), dir };
        let outs = kern(&ctx).map_err(|f| match f {
            // Report the whole budget, and what live tensors already hold of it.
            Fail::Budget { what, bytes, .. } => Error::Budget {
                what: format!("the {what} of node {label} ({}){}", node.op_type, env.held()),
                bytes,
                budget: opts.max_memory,
            },
            f => f.at_node(&label, &node.op_type),
        })?;
        drop(ctx);
        if node.outputs.iter().enumerate().any(|(slot, v)| v.is_some() && slot >= outs.len()) {
            return Err(Error::Exec {
                node: label,
                op: node.op_type.to_string(),
                reason: format!("gives {} outputs, the node names {}", outs.len(), node.outputs.len()),
            });
        }
        env.read(&mut uses, node.inputs.iter().flatten());
        for (slot, t) in node.outputs.iter().zip(outs) {
            if let Some(v) = slot {
                if uses.get(v).copied().unwrap_or(0) > 0 {
                    env.insert(*v, t);
                }
            }
        }
    }

    let mut out = Vec::with_capacity(main.outputs.len());
    for o in &main.outputs {
        let budget = remaining(&env);
        let t = fetch(model, &mut env, o.value, dir, budget, "graph output")?;
        out.push((model.name(o.value).to_string(), t));
    }
    Ok(out)
}

/// The tensor of value `v`: computed, given, or converted from its initializer.
fn fetch(
    model: &Model,
    env: &mut Env,
    v: ValueId,
    dir: Option<&Path>,
    budget: Budget,
    user: &str,
) -> Result<HostTensor, Error> {
    if let Some(t) = env.values.get(&v) {
        return Ok(t.clone());
    }
    let value = model.value(v);
    if let Some(i) = value.initializer {
        let init = &model.graph(value.graph).initializers[i];
        let t = tensor::from_ir(init, dir, budget.0).map_err(|f| f.into_error(&value.name))?;
        env.insert(v, t.clone());
        return Ok(t);
    }
    let why = match value.def {
        Def::Undefined => "is not defined in the graph",
        Def::Node(..) => "is not computed (its producer comes later or failed)",
        _ => "has no value",
    };
    Err(Error::Exec { node: user.to_string(), op: String::new(), reason: format!("value '{}' {why}", value.name) })
}

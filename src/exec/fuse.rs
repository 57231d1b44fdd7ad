//! Loop fusion for f32 broadcast chains (XLA's loop fusion): a connected set of broadcasting
//! elementwise nodes (Add, Sub, Mul, Div, Max, Min, Sum, Where, Expand) whose intermediates have
//! no other consumer and are not graph outputs runs as one loop over the final output, block by
//! block in L1-sized registers, so no intermediate is ever materialized. The plan is made once
//! per model run ([`plan`]); a group whose leaves turn out not to be f32 (or whose shapes do
//! not broadcast) runs node by node through the ordinary kernels, which also give the errors.
//! Large outputs are written with non-temporal stores, and output buffers handed back with
//! [`recycle`] are reused by later runs.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::broadcast::{Budget, Plan};
use super::scalar::Num;
use super::tensor::{Data, HostTensor};
use super::{kernel, unsupported, Ctx};
use crate::diag::Error;
use crate::ir::{Def, Model, NodeId, ValueId};
use crate::ops::{self, ShapeRule};
use crate::shape;

/// At most this many broadcast operands (f32 and bool leaves) per fused loop.
pub const MAX_LEAVES: usize = 8;
/// At most this many nodes per group (each holds one block register).
pub const MAX_NODES: usize = 16;
/// Elements per block register.
const BLOCK: usize = 512;
/// Outputs of at least this many bytes are written with non-temporal stores.
const NT_BYTES: usize = 4 << 20;

/// One fusable op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Sum,
    Where,
    Expand,
}

fn op_of(model: &Model, n: NodeId) -> Option<Op> {
    let node = model.node(n);
    if !(node.domain.is_empty() || node.domain == "ai.onnx") || !node.subgraphs().is_empty() {
        return None;
    }
    let op = match node.op_type.as_str() {
        "Add" => Op::Add,
        "Sub" => Op::Sub,
        "Mul" => Op::Mul,
        "Div" => Op::Div,
        "Max" => Op::Max,
        "Min" => Op::Min,
        "Sum" => Op::Sum,
        "Where" => Op::Where,
        "Expand" => Op::Expand,
        _ => return None,
    };
    // Only the multidirectional forms (and Expand): the legacy and equal-shape rules keep
    // their own kernels.
    let def = ops::lookup(&node.domain, &node.op_type, model.opset(&node.domain).unwrap_or(1))?;
    let rule_ok = match op {
        Op::Expand => matches!(def.shape, ShapeRule::Expand),
        _ => matches!(def.shape, ShapeRule::Multi),
    };
    let arity_ok = match op {
        Op::Add | Op::Sub | Op::Mul | Op::Div => node.inputs.len() == 2,
        Op::Where => node.inputs.len() == 3,
        Op::Expand => node.inputs.len() == 2,
        Op::Max | Op::Min | Op::Sum => !node.inputs.is_empty(),
    };
    let wired = node.inputs.iter().all(Option::is_some) && node.outputs.len() == 1 && node.outputs[0].is_some();
    (rule_ok && arity_ok && wired).then_some(op)
}

/// Which inputs of an op are elementwise data (fusable through), as opposed to a Where
/// condition or an Expand shape.
fn data_slot(op: Op, slot: usize) -> bool {
    match op {
        Op::Where => slot > 0,
        Op::Expand => slot == 0,
        _ => true,
    }
}

/// A fused group: its nodes in execution order (the last is the root, whose output is the
/// group's only materialized value) and the values it reads from outside.
#[derive(Clone, Debug)]
pub struct Group {
    nodes: Vec<(NodeId, Op)>,
    leaves: Vec<ValueId>,
}

impl Group {
    /// The nodes, in execution order; the last is the root.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes.iter().map(|(n, _)| *n)
    }

    /// The values the group reads from outside, each once.
    pub fn leaves(&self) -> &[ValueId] {
        &self.leaves
    }
}

/// The fusion plan of one graph: groups by root node, and the interior nodes they absorb.
#[derive(Clone, Debug, Default)]
pub struct FusionPlan {
    groups: HashMap<NodeId, Group>,
    interior: HashSet<NodeId>,
}

impl FusionPlan {
    /// The group rooted at `n`, if any.
    pub fn group(&self, n: NodeId) -> Option<&Group> {
        self.groups.get(&n)
    }

    /// True when `n` runs inside another node's group.
    pub fn is_interior(&self, n: NodeId) -> bool {
        self.interior.contains(&n)
    }

    /// The number of groups with more than one node.
    pub fn fused_groups(&self) -> usize {
        self.groups.values().filter(|g| g.nodes.len() > 1).count()
    }
}

/// Plans fusion over `order` (a topological order of the main graph); `uses` counts each
/// value's readers, graph outputs counting one extra. Every fusable node becomes a group root
/// unless it is absorbed into its only consumer's group.
pub fn plan(model: &Model, order: &[NodeId], uses: &HashMap<ValueId, usize>) -> FusionPlan {
    let pos: HashMap<NodeId, usize> = order.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut fp = FusionPlan::default();
    for &root in order.iter().rev() {
        if fp.interior.contains(&root) {
            continue;
        }
        let Some(op) = op_of(model, root) else { continue };
        let mut nodes = vec![(root, op)];
        let mut i = 0;
        while i < nodes.len() {
            let (n, op) = nodes[i];
            i += 1;
            for (slot, v) in model.node(n).inputs.iter().enumerate() {
                let Some(v) = v else { continue };
                if !data_slot(op, slot) || uses.get(v).copied() != Some(1) || nodes.len() >= MAX_NODES {
                    continue;
                }
                let Def::Node(p, 0) = model.value(*v).def else { continue };
                if fp.interior.contains(&p) || nodes.iter().any(|(m, _)| *m == p) || !pos.contains_key(&p) {
                    continue;
                }
                if let Some(pop) = op_of(model, p) {
                    nodes.push((p, pop));
                }
            }
        }
        nodes.sort_by_key(|(n, _)| pos.get(n).copied().unwrap_or(usize::MAX));
        let inside: HashSet<ValueId> = nodes.iter().filter_map(|(n, _)| model.node(*n).outputs[0]).collect();
        let mut leaves = Vec::new();
        for (n, _) in &nodes {
            for v in model.node(*n).inputs.iter().flatten() {
                if !inside.contains(v) && !leaves.contains(v) {
                    leaves.push(*v);
                }
            }
        }
        for (n, _) in &nodes[..nodes.len() - 1] {
            fp.interior.insert(*n);
        }
        fp.groups.insert(root, Group { nodes, leaves });
    }
    fp
}

/// Where an instruction's operand comes from.
#[derive(Clone, Copy, Debug)]
enum Src {
    /// A broadcast operand of the loop (index into the plan's operands).
    Leaf(usize),
    /// An earlier instruction's register.
    Reg(usize),
}

/// One node of the fused loop.
#[derive(Clone, Debug)]
struct Instr {
    op: Op,
    /// The data operands (a Where's x and y; an Expand's x).
    args: Vec<Src>,
    /// A Where's condition: a bool leaf.
    cond: usize,
}

/// A block's value of an operand: one element for the whole block, or a run.
#[derive(Clone, Copy)]
enum V<'a, T> {
    S(T),
    A(&'a [T]),
}

static FUSED_RUNS: AtomicUsize = AtomicUsize::new(0);

/// How many groups have run as fused loops in this process (for tests and diagnostics).
pub fn fused_runs() -> usize {
    FUSED_RUNS.load(Ordering::Relaxed)
}

/// Runs the group on its leaves (by value) and gives the root's output.
pub(super) fn run_group(
    model: &Model,
    g: &Group,
    leaves: &HashMap<ValueId, HostTensor>,
    budget: Budget,
    dir: Option<&Path>,
) -> Result<HostTensor, Error> {
    if let Some(t) = fused_f32(model, g, leaves, budget)? {
        FUSED_RUNS.fetch_add(1, Ordering::Relaxed);
        return Ok(t);
    }
    node_by_node(model, g, leaves, budget, dir)
}

/// The group's nodes one by one through the kernel table (the fallback, and the oracle the
/// fused loop is tested against).
fn node_by_node(
    model: &Model,
    g: &Group,
    leaves: &HashMap<ValueId, HostTensor>,
    budget: Budget,
    dir: Option<&Path>,
) -> Result<HostTensor, Error> {
    let mut vals: HashMap<ValueId, HostTensor> = HashMap::new();
    let mut last = None;
    for (n, _) in &g.nodes {
        let node = model.node(*n);
        let label = model.node_label(*n);
        let kern = kernel(&node.domain, &node.op_type).ok_or_else(|| unsupported(&label, node))?;
        let mut ins = Vec::with_capacity(node.inputs.len());
        for v in &node.inputs {
            let v = v.ok_or_else(|| Error::Exec {
                node: label.clone(),
                op: node.op_type.clone(),
                reason: "an input is missing".into(),
            })?;
            let t = vals.get(&v).or_else(|| leaves.get(&v)).cloned().ok_or_else(|| Error::Exec {
                node: label.clone(),
                op: node.op_type.clone(),
                reason: format!("value '{}' is not computed", model.name(v)),
            })?;
            ins.push(Some(t));
        }
        let ctx = Ctx { node, opset: model.opset(&node.domain).unwrap_or(1), inputs: ins, budget, dir };
        let mut outs = kern(&ctx).map_err(|f| f.at_node(&label, &node.op_type))?;
        if outs.is_empty() {
            return Err(Error::Exec { node: label, op: node.op_type.clone(), reason: "gave no output".into() });
        }
        let t = outs.swap_remove(0);
        if let Some(v) = node.outputs[0] {
            vals.insert(v, t.clone());
        }
        last = Some(t);
    }
    last.ok_or_else(|| Error::Usage("an empty fusion group".into()))
}

/// The fused f32 loop, or `None` when the group does not qualify (a leaf of another type, too
/// many leaves, shapes that do not broadcast: the node-by-node path decides those).
fn fused_f32(
    model: &Model,
    g: &Group,
    leaves: &HashMap<ValueId, HostTensor>,
    budget: Budget,
) -> Result<Option<HostTensor>, Error> {
    // Operands of the loop: f32 data leaves and bool conditions, in first-use order.
    let mut operand: HashMap<ValueId, usize> = HashMap::new();
    let mut f32s: Vec<(usize, &[f32])> = Vec::new();
    let mut bools: Vec<(usize, &[bool])> = Vec::new();
    let mut shapes: Vec<&[usize]> = Vec::new();
    let mut reg: HashMap<ValueId, usize> = HashMap::new();
    let mut reg_shape: Vec<Vec<usize>> = Vec::new();
    let mut prog: Vec<Instr> = Vec::with_capacity(g.nodes.len());
    for (n, op) in &g.nodes {
        let node = model.node(*n);
        let mut args = Vec::new();
        let mut cond = 0;
        let mut arg_shapes: Vec<Vec<usize>> = Vec::new();
        for (slot, v) in node.inputs.iter().enumerate() {
            let Some(v) = v else { return Ok(None) };
            if *op == Op::Expand && slot == 1 {
                continue;
            }
            let want_bool = *op == Op::Where && slot == 0;
            if let Some(r) = reg.get(v) {
                if want_bool {
                    return Ok(None);
                }
                args.push(Src::Reg(*r));
                arg_shapes.push(reg_shape[*r].clone());
                continue;
            }
            let Some(t) = leaves.get(v) else { return Ok(None) };
            let k = match operand.get(v) {
                Some(k) => *k,
                None => {
                    let k = shapes.len();
                    if k >= MAX_LEAVES {
                        return Ok(None);
                    }
                    match (&*t.data, want_bool) {
                        (Data::F32(x), false) => f32s.push((k, x)),
                        (Data::Bool(c), true) => bools.push((k, c)),
                        _ => return Ok(None),
                    }
                    shapes.push(&t.shape);
                    operand.insert(*v, k);
                    k
                }
            };
            // A value used both as a condition and as data is not f32 and bool at once.
            let is_bool = bools.iter().any(|(b, _)| *b == k);
            if is_bool != want_bool {
                return Ok(None);
            }
            if want_bool {
                cond = k;
            } else {
                args.push(Src::Leaf(k));
            }
            arg_shapes.push(t.shape.clone());
        }
        let refs: Vec<&[usize]> = arg_shapes.iter().map(Vec::as_slice).collect();
        let out = if *op == Op::Expand {
            let Some(target) = node.inputs[1].and_then(|v| leaves.get(&v)).and_then(HostTensor::to_i64s) else {
                return Ok(None);
            };
            let Some(target) = target.iter().map(|d| usize::try_from(*d).ok()).collect::<Option<Vec<usize>>>() else {
                return Ok(None);
            };
            match shape::expand::<usize>(refs[0], &target) {
                Ok(b) => b.shape,
                Err(_) => return Ok(None),
            }
        } else {
            match shape::multi::<usize>(&refs) {
                Ok(b) => b.shape,
                Err(_) => return Ok(None),
            }
        };
        let Some(v) = node.outputs[0] else { return Ok(None) };
        reg.insert(v, prog.len());
        reg_shape.push(out);
        prog.push(Instr { op: *op, args, cond });
    }
    let Some(out_shape) = reg_shape.last().cloned() else { return Ok(None) };
    let mut ops: [&[usize]; MAX_LEAVES] = [&[]; MAX_LEAVES];
    for (k, s) in shapes.iter().enumerate() {
        ops[k] = s;
    }
    let Some(plan) = Plan::<MAX_LEAVES>::new(&out_shape, ops) else { return Ok(None) };
    let label = model.node_label(g.nodes[g.nodes.len() - 1].0);
    let op_name = &model.node(g.nodes[g.nodes.len() - 1].0).op_type;
    budget.check::<f32>("output", plan.len()).map_err(|f| f.at_node(&label, op_name))?;
    let mut data_f: [&[f32]; MAX_LEAVES] = [&[]; MAX_LEAVES];
    for (k, x) in &f32s {
        data_f[*k] = x;
    }
    let mut data_b: [&[bool]; MAX_LEAVES] = [&[]; MAX_LEAVES];
    for (k, c) in &bools {
        data_b[*k] = c;
    }
    let mut buf = take(plan.len());
    let nt = plan.len() * 4 >= NT_BYTES;
    let inner = plan.inner();
    let lp = Loop { prog: &prog, f: data_f, b: data_b, inner, nt };
    plan.drive(&mut buf.spare_capacity_mut()[..plan.len()], &|o, offs| lp.run(o, offs));
    // SAFETY: `drive` hands every one of the plan's `len` output elements to exactly one `run`
    // call, and `Loop::run` writes every element of the slice it is given.
    unsafe { buf.set_len(plan.len()) };
    HostTensor::new(out_shape, Data::F32(buf)).map(Some).map_err(|f| f.at_node(&label, op_name))
}

thread_local! {
    static REGS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// The fused program and its operands, for one output run at a time.
struct Loop<'a> {
    prog: &'a [Instr],
    f: [&'a [f32]; MAX_LEAVES],
    b: [&'a [bool]; MAX_LEAVES],
    inner: [usize; MAX_LEAVES],
    nt: bool,
}

impl Loop<'_> {
    /// Fills `out`, one run of the innermost axis whose operand `k` starts at `offs[k]`.
    fn run(&self, out: &mut [MaybeUninit<f32>], offs: [usize; MAX_LEAVES]) {
        REGS.with(|r| {
            let mut regs = r.borrow_mut();
            let need = self.prog.len().max(1) * BLOCK;
            if regs.len() < need {
                regs.resize(need, 0.0);
            }
            let mut start = 0;
            while start < out.len() {
                let n = BLOCK.min(out.len() - start);
                let last = self.block(&mut regs, &offs, start, n);
                let dst = &mut out[start..start + n];
                match last {
                    Res::S(x) if self.nt => {
                        regs[..n].fill(x);
                        store(dst, &regs[..n], true);
                    }
                    Res::S(x) => {
                        for o in dst.iter_mut() {
                            *o = MaybeUninit::new(x);
                        }
                    }
                    Res::Reg(r) => store(dst, &regs[r * BLOCK..r * BLOCK + n], self.nt),
                }
                start += n;
            }
        });
        #[cfg(target_arch = "x86_64")]
        if self.nt {
            // SAFETY: sfence has no preconditions; it orders the streaming stores above before
            // the data is read by anyone else.
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
    }

    fn leaf_f(&self, k: usize, offs: &[usize; MAX_LEAVES], start: usize, n: usize) -> V<'_, f32> {
        if self.inner[k] == 0 {
            V::S(self.f[k][offs[k]])
        } else {
            V::A(&self.f[k][offs[k] + start..offs[k] + start + n])
        }
    }

    fn leaf_b(&self, k: usize, offs: &[usize; MAX_LEAVES], start: usize, n: usize) -> V<'_, bool> {
        if self.inner[k] == 0 {
            V::S(self.b[k][offs[k]])
        } else {
            V::A(&self.b[k][offs[k] + start..offs[k] + start + n])
        }
    }

    /// Evaluates the program on elements `start..start + n` of the run; gives where the
    /// root's block is.
    fn block(&self, regs: &mut [f32], offs: &[usize; MAX_LEAVES], start: usize, n: usize) -> Res {
        let mut res: [Res; MAX_NODES] = [Res::S(0.0); MAX_NODES];
        for (i, ins) in self.prog.iter().enumerate() {
            let (done, rest) = regs.split_at_mut(i * BLOCK);
            let dst = &mut rest[..n];
            let get = |s: Src| match s {
                Src::Leaf(k) => self.leaf_f(k, offs, start, n),
                Src::Reg(r) => match res[r] {
                    Res::S(x) => V::S(x),
                    Res::Reg(r) => V::A(&done[r * BLOCK..r * BLOCK + n]),
                },
            };
            let r = match ins.op {
                Op::Add => binary(get(ins.args[0]), get(ins.args[1]), dst, |a, b| a + b),
                Op::Sub => binary(get(ins.args[0]), get(ins.args[1]), dst, |a, b| a - b),
                Op::Mul => binary(get(ins.args[0]), get(ins.args[1]), dst, |a, b| a * b),
                Op::Div => binary(get(ins.args[0]), get(ins.args[1]), dst, |a, b| a / b),
                Op::Sum => nary(&ins.args, &get, dst, |a, b| a + b),
                Op::Max => nary(&ins.args, &get, dst, |a: f32, b| a.maxn(b)),
                Op::Min => nary(&ins.args, &get, dst, |a: f32, b| a.minn(b)),
                Op::Expand => copy(get(ins.args[0]), dst),
                Op::Where => {
                    where_block(self.leaf_b(ins.cond, offs, start, n), get(ins.args[0]), get(ins.args[1]), dst)
                }
            };
            res[i] = match r {
                Res::S(x) => Res::S(x),
                Res::Reg(_) => Res::Reg(i),
            };
        }
        res[self.prog.len() - 1]
    }
}

/// An instruction's result: one value for the block, or its register.
#[derive(Clone, Copy, Debug)]
enum Res {
    S(f32),
    Reg(usize),
}

#[inline(always)]
fn copy(a: V<f32>, dst: &mut [f32]) -> Res {
    match a {
        V::S(x) => Res::S(x),
        V::A(x) => {
            dst.copy_from_slice(x);
            Res::Reg(0)
        }
    }
}

/// A left fold over the operands, as the N-ary kernel does: ((x0 op x1) op x2) ...
#[inline(always)]
fn nary<'a>(
    args: &[Src],
    get: &impl Fn(Src) -> V<'a, f32>,
    dst: &mut [f32],
    f: impl Fn(f32, f32) -> f32 + Copy,
) -> Res {
    let mut acc = copy(get(args[0]), dst);
    for a in &args[1..] {
        acc = match acc {
            Res::S(x) => binary(V::S(x), get(*a), dst, f),
            Res::Reg(_) => fold(dst, get(*a), f),
        };
    }
    acc
}

#[inline(always)]
fn fold(dst: &mut [f32], b: V<f32>, f: impl Fn(f32, f32) -> f32) -> Res {
    match b {
        V::S(y) => dst.iter_mut().for_each(|d| *d = f(*d, y)),
        V::A(y) => dst.iter_mut().zip(y).for_each(|(d, y)| *d = f(*d, *y)),
    }
    Res::Reg(0)
}

#[inline(always)]
fn binary(a: V<f32>, b: V<f32>, dst: &mut [f32], f: impl Fn(f32, f32) -> f32) -> Res {
    match (a, b) {
        (V::S(x), V::S(y)) => return Res::S(f(x, y)),
        (V::A(x), V::A(y)) => dst.iter_mut().zip(x.iter().zip(y)).for_each(|(d, (x, y))| *d = f(*x, *y)),
        (V::A(x), V::S(y)) => dst.iter_mut().zip(x).for_each(|(d, x)| *d = f(*x, y)),
        (V::S(x), V::A(y)) => dst.iter_mut().zip(y).for_each(|(d, y)| *d = f(x, *y)),
    }
    Res::Reg(0)
}

/// Where's element without a branch (random conditions would mispredict): the bits of `x`
/// where `c`, else those of `y`; the same value as `if c { x } else { y }`, bit for bit.
#[inline(always)]
fn pick(c: bool, x: f32, y: f32) -> f32 {
    let m = (c as u32).wrapping_neg();
    f32::from_bits((x.to_bits() & m) | (y.to_bits() & !m))
}

fn where_block(c: V<bool>, x: V<f32>, y: V<f32>, dst: &mut [f32]) -> Res {
    let c = match c {
        V::S(c) => return copy(if c { x } else { y }, dst),
        V::A(c) => c,
    };
    match (x, y) {
        (V::A(x), V::A(y)) => {
            dst.iter_mut().zip(c.iter().zip(x.iter().zip(y))).for_each(|(d, (c, (x, y)))| *d = pick(*c, *x, *y))
        }
        (V::A(x), V::S(y)) => dst.iter_mut().zip(c.iter().zip(x)).for_each(|(d, (c, x))| *d = pick(*c, *x, y)),
        (V::S(x), V::A(y)) => dst.iter_mut().zip(c.iter().zip(y)).for_each(|(d, (c, y))| *d = pick(*c, x, *y)),
        (V::S(x), V::S(y)) => dst.iter_mut().zip(c).for_each(|(d, c)| *d = pick(*c, x, y)),
    }
    Res::Reg(0)
}

/// Writes `src` to `dst`, with non-temporal stores when `nt` (x86_64), plain stores otherwise.
fn store(dst: &mut [MaybeUninit<f32>], src: &[f32], nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if nt {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
        let n = dst.len().min(src.len());
        // Streaming stores need 16-byte alignment: plain stores up to it.
        let head = dst.as_ptr().align_offset(16).min(n);
        for (d, s) in dst[..head].iter_mut().zip(&src[..head]) {
            *d = MaybeUninit::new(*s);
        }
        let body = (n - head) / 4 * 4;
        let d = dst[head..].as_mut_ptr() as *mut f32;
        let s = src[head..].as_ptr();
        let mut i = 0;
        while i < body {
            // SAFETY: SSE is part of the x86_64 baseline. i + 4 <= body <= n - head, so the
            // 4 elements read from s + i and written at d + i are in bounds; d + i is 16-byte
            // aligned because d is (head was chosen so) and i is a multiple of 4 f32s. Writing
            // an f32 into a MaybeUninit<f32> slot is always valid.
            unsafe { _mm_stream_ps(d.add(i), _mm_loadu_ps(s.add(i))) };
            i += 4;
        }
        for (d, s) in dst[head + body..n].iter_mut().zip(&src[head + body..n]) {
            *d = MaybeUninit::new(*s);
        }
        return;
    }
    let _ = nt;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = MaybeUninit::new(*s);
    }
}

/// Recycled f32 output buffers (at most a few), reused by the next fused loops.
static POOL: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());
const POOL_MAX: usize = 4;

/// An empty vector with room for `n` f32s, from the pool when one is big enough.
fn take(n: usize) -> Vec<f32> {
    if let Ok(mut pool) = POOL.lock() {
        if let Some(i) = pool.iter().position(|v| v.capacity() >= n) {
            let mut v = pool.swap_remove(i);
            v.clear();
            return v;
        }
    }
    Vec::with_capacity(n)
}

/// Hands a tensor's storage back for reuse by later runs (when nothing else shares it and it
/// is f32); otherwise just drops it.
pub fn recycle(t: HostTensor) {
    if let Ok(Data::F32(v)) = std::sync::Arc::try_unwrap(t.data) {
        if let Ok(mut pool) = POOL.lock() {
            if pool.len() < POOL_MAX {
                pool.push(v);
            }
        }
    }
}

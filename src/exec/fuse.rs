//! Loop fusion for f32 broadcast chains (XLA's loop fusion): a connected set of broadcasting
//! elementwise nodes (Add, Sub, Mul, Div, Max, Min, Sum, Where, Expand) whose intermediates have
//! no other consumer and are not graph outputs runs as one loop over the final output, block by
//! block in L1-sized registers, so no intermediate is ever materialized; a group that
//! is a single chain of Add, Sub, Mul and Div (each on the one before and a leaf) runs tile by
//! tile in vector registers instead, its intermediates never stored. The plan is made once
//! per model run ([`plan`]); a group whose leaves turn out not to be f32 (or whose shapes do
//! not broadcast) runs node by node through the ordinary kernels, which also give the errors.
//! Large outputs are written with non-temporal stores, and output buffers handed back with
//! [`recycle`] are reused by later runs.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::broadcast::{Budget, Plan, Runs};
use super::scalar::Num;
use super::tensor::{Data, HostTensor};
use super::{kernel, unsupported, Ctx};
use crate::diag::Error;
use crate::ir::{Def, Model, NodeId, ValueId};
use crate::ops::{self, Fuse as Op, ShapeRule};
use crate::shape;

/// At most this many broadcast operands (f32 and bool leaves) per fused loop.
pub const MAX_LEAVES: usize = 8;
/// At most this many nodes per group (each holds one block register).
pub const MAX_NODES: usize = 16;
/// Elements per block register.
const BLOCK: usize = 512;
/// Elements per tile of a chain (four AVX vectors).
const TILE: usize = 32;
/// The span of address bits (4 KiB) a CPU compares first when it decides whether a load
/// depends on an earlier store.
const PAGE: usize = 4096;

/// The element of a scratch buffer at `scratch` (with a page of slack) where the registers
/// start: a quarter page off the output's page offset. Large inputs and outputs all come from
/// `mmap` at the same page offset, and a load from one stream after a store to a register
/// whose address agrees in its low 12 bits stalls as if it depended on it (4K aliasing); a
/// scratch buffer that happened to land there ran the same loop at half speed.
fn unaliased(scratch: usize, out: usize) -> usize {
    let want = out.wrapping_add(PAGE / 4) % PAGE;
    (want.wrapping_sub(scratch) % PAGE) / 4
}

/// Outputs of at least this many bytes are written with non-temporal stores; smaller ones
/// (half the 32 MiB last-level cache of the machines we measure on) stay in cache.
pub const NT_BYTES: usize = 16 << 20;

/// The fused op node `n` runs as, if fusion takes it (the registry's `fuse`; only
/// default-domain ops have one).
fn op_of(model: &Model, n: NodeId) -> Option<Op> {
    let node = model.node(n);
    if !node.subgraphs().is_empty() {
        return None;
    }
    // Only the multidirectional forms (and Expand): the legacy and equal-shape rules keep
    // their own kernels.
    let def = ops::lookup(&node.domain, &node.op_type, model.opset_or_default(&node.domain))?;
    let op = def.meaning.fuse?;
    let rule_ok = match op {
        Op::Expand => matches!(def.shape, ShapeRule::Expand),
        _ => matches!(def.shape, ShapeRule::Multi),
    };
    let arity_ok = match op {
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Expand => node.inputs.len() == 2,
        Op::Where => node.inputs.len() == 3,
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
        fp.interior.extend(nodes[..nodes.len() - 1].iter().map(|(n, _)| *n));
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

/// Elements `start..start + n` of a leaf whose run begins at `off`: its one element when the
/// leaf does not move along the run (inner stride 0), else the slice.
#[inline(always)]
fn leaf<T: Copy>(data: &[T], inner: usize, off: usize, start: usize, n: usize) -> V<'_, T> {
    if inner == 0 {
        V::S(data[off])
    } else {
        V::A(&data[off + start..off + start + n])
    }
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
    // Else the nodes one by one through the kernel table (the fallback, and the oracle the
    // fused loop is tested against).
    let mut vals: HashMap<ValueId, HostTensor> = HashMap::new();
    let mut last = None;
    for (n, _) in &g.nodes {
        let node = model.node(*n);
        let label = || model.node_label(*n);
        let fail = |reason: String| Error::Exec { node: label(), op: node.op_type.to_string(), reason };
        let kern = kernel(&node.domain, &node.op_type).ok_or_else(|| unsupported(&label(), node))?;
        let mut ins = Vec::with_capacity(node.inputs.len());
        for v in &node.inputs {
            let v = v.ok_or_else(|| fail("an input is missing".into()))?;
            let t = vals.get(&v).or_else(|| leaves.get(&v)).cloned();
            ins.push(Some(t.ok_or_else(|| fail(format!("value '{}' is not computed", model.name(v))))?));
        }
        let ctx = Ctx { node, opset: model.opset_or_default(&node.domain), inputs: ins, budget, dir };
        let mut outs = kern(&ctx).map_err(|f| f.at_node(&label(), &node.op_type))?;
        if outs.is_empty() {
            return Err(fail("gave no output".into()));
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
    let mut shapes: [&[usize]; MAX_LEAVES] = [&[]; MAX_LEAVES];
    let mut data_f: [&[f32]; MAX_LEAVES] = [&[]; MAX_LEAVES];
    let mut data_b: [&[bool]; MAX_LEAVES] = [&[]; MAX_LEAVES];
    let mut is_bool = [false; MAX_LEAVES];
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
                    let k = operand.len();
                    if k >= MAX_LEAVES {
                        return Ok(None);
                    }
                    match (&*t.data, want_bool) {
                        (Data::F32(x), false) => data_f[k] = x,
                        (Data::Bool(c), true) => (data_b[k], is_bool[k]) = (c, true),
                        _ => return Ok(None),
                    }
                    shapes[k] = &t.shape;
                    operand.insert(*v, k);
                    k
                }
            };
            // A value used both as a condition and as data is not f32 and bool at once.
            if is_bool[k] != want_bool {
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
            let target = node.inputs[1].and_then(|v| leaves.get(&v)).and_then(HostTensor::to_i64s);
            let target: Option<Vec<usize>> = target.and_then(|t| t.iter().map(|d| usize::try_from(*d).ok()).collect());
            target.and_then(|t| shape::expand::<usize>(refs[0], &t).ok())
        } else {
            shape::multi::<usize>(&refs).ok()
        };
        let Some(out) = out.map(|b| b.shape) else { return Ok(None) };
        let Some(v) = node.outputs[0] else { return Ok(None) };
        reg.insert(v, prog.len());
        reg_shape.push(out);
        prog.push(Instr { op: *op, args, cond });
    }
    let Some(out_shape) = reg_shape.last().cloned() else { return Ok(None) };
    let Some(plan) = Plan::<MAX_LEAVES>::new(&out_shape, shapes) else { return Ok(None) };
    let label = || model.node_label(g.nodes[g.nodes.len() - 1].0);
    let op_name = &model.node(g.nodes[g.nodes.len() - 1].0).op_type;
    budget.check::<f32>("output", plan.len()).map_err(|f| f.at_node(&label(), op_name))?;
    let mut buf = take(plan.len());
    let chain = Chain::of(&prog);
    let lp = Loop {
        prog: &prog,
        chain: chain.as_ref(),
        f: data_f,
        b: data_b,
        inner: plan.inner(),
        nt: plan.len() * 4 >= NT_BYTES,
    };
    plan.drive_chunks(&mut buf, &|o, start| lp.chunk(&plan, start, o));
    HostTensor::new(out_shape, Data::F32(buf)).map(Some).map_err(|f| f.at_node(&label(), op_name))
}

/// The fused program and its operands.
struct Loop<'a> {
    prog: &'a [Instr],
    /// The same program as one chain, when it is one.
    chain: Option<&'a Chain>,
    f: [&'a [f32]; MAX_LEAVES],
    b: [&'a [bool]; MAX_LEAVES],
    inner: [usize; MAX_LEAVES],
    /// Write the output with non-temporal stores (it is too large to stay in cache).
    nt: bool,
}

impl Loop<'_> {
    /// Fills `out`, the output elements from `start` on, with the widest vector unit the CPU
    /// has: the same scalar operations in the same order either way, so the same bits, except
    /// which payload wins where two NaNs meet in an Add or a Mul (Rust leaves that open).
    fn chunk(&self, plan: &Plan<MAX_LEAVES>, start: usize, out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above), all `chunk_avx2` requires.
            unsafe { self.chunk_avx2(plan, start, out) };
            return;
        }
        self.chunk_body::<false>(plan, start, out);
    }

    /// [`Loop::chunk_body`] compiled for AVX2: everything it calls is inlined into it, so the
    /// element loops are vectorized 8 wide.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn chunk_avx2(&self, plan: &Plan<MAX_LEAVES>, start: usize, out: &mut [f32]) {
        self.chunk_body::<true>(plan, start, out);
    }

    /// One chunk: scratch registers and the store fence once per chunk, the program once per
    /// block of each run. With streaming stores the root's blocks go through a [`Sink`] that
    /// owns the whole chunk, so vectors stay aligned across run boundaries; `range` then
    /// walks a slice of `()` (which costs no memory) only for the runs' offsets.
    #[inline(always)]
    fn chunk_body<const AVX: bool>(&self, plan: &Plan<MAX_LEAVES>, start: usize, out: &mut [f32]) {
        let len = self.prog.len().max(1) * BLOCK;
        let mut scratch = vec![0f32; len + PAGE / 4];
        let at = unaliased(scratch.as_ptr() as usize, out.as_ptr() as usize);
        let regs = &mut scratch[at..at + len];
        if !self.nt {
            plan.range(start, out, &mut Runner::<AVX> { lp: self, regs });
            return;
        }
        let mut slots = vec![(); out.len()];
        let mut runner = NtRunner::<AVX> { lp: self, regs, sink: Sink::new(out) };
        plan.range(start, &mut slots, &mut runner);
        runner.sink.finish();
        #[cfg(target_arch = "x86_64")]
        // SAFETY: sfence has no preconditions; it orders this chunk's streaming stores before
        // the data is read by anyone else.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
    }

    /// Fills `out`, one run of the innermost axis whose operand `k` starts at `offs[k]`, block
    /// by block, the root computing straight into `out` (a chain: tile by tile).
    #[inline(always)]
    fn run<const AVX: bool>(&self, regs: &mut [f32], out: &mut [f32], offs: &[usize; MAX_LEAVES]) {
        #[cfg(target_arch = "x86_64")]
        if let (true, Some(c)) = (AVX, self.chain) {
            let steps = self.steps(c, offs, out.len());
            // SAFETY: AVX is true only inside `chunk_avx2`, whose CPU has AVX2.
            unsafe { self.chain_into(c, &steps[..c.steps.len()], offs, 0, out) };
            return;
        }
        let mut start = 0;
        while start < out.len() {
            let n = BLOCK.min(out.len() - start);
            let dst = &mut out[start..start + n];
            if let Res::S(x) = self.block(regs, Some(&mut *dst), offs, start, n) {
                dst.fill(x);
            }
            start += n;
        }
    }

    /// As [`Loop::run`] for a run of `len` elements, the root's blocks going to `sink`.
    #[inline(always)]
    fn run_nt<const AVX: bool>(&self, regs: &mut [f32], sink: &mut Sink, len: usize, offs: &[usize; MAX_LEAVES]) {
        #[cfg(target_arch = "x86_64")]
        if let (true, Some(c)) = (AVX, self.chain) {
            let steps = self.steps(c, offs, len);
            // Block by block: the tiles are stored into a register, which the sink then
            // streams out whole.
            let mut start = 0;
            while start < len {
                let n = BLOCK.min(len - start);
                // SAFETY: AVX is true only inside `chunk_avx2`, whose CPU has AVX2.
                unsafe { self.chain_into(c, &steps[..c.steps.len()], offs, start, &mut regs[..n]) };
                sink.put::<AVX>(&regs[..n]);
                start += n;
            }
            return;
        }
        let mut start = 0;
        while start < len {
            let n = BLOCK.min(len - start);
            match self.block(regs, None, offs, start, n) {
                Res::S(x) => {
                    regs[..n].fill(x);
                    sink.put::<AVX>(&regs[..n]);
                }
                Res::Reg(r) => sink.put::<AVX>(&regs[r * BLOCK..r * BLOCK + n]),
            }
            start += n;
        }
    }

    /// A chain's elements `from..from + dst.len()` of the run at `offs` (whose operands on the
    /// run are `steps`) into `dst`: tile by tile, the last tile overlapping the one before
    /// when TILE does not divide `dst`, or element by element when `dst` is shorter than a
    /// tile.
    ///
    /// # Safety
    ///
    /// The CPU has AVX.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn chain_into(
        &self,
        c: &Chain,
        steps: &[(Arith, V<'_, f32>)],
        offs: &[usize; MAX_LEAVES],
        from: usize,
        dst: &mut [f32],
    ) {
        let n = dst.len();
        if n < TILE {
            self.short(c, offs, from, dst);
            return;
        }
        let head = self.leaf_f(c.head, offs, 0, from + n);
        let mut i = 0;
        while i < n {
            let at = i.min(n - TILE);
            // SAFETY: the caller's CPU has AVX; the tile stored is dst[at..at + TILE], in
            // bounds.
            unsafe { avx::store(dst[at..at + TILE].as_mut_ptr(), &avx::tile(head, steps, from + at)) };
            i = at + TILE;
        }
    }

    /// A chain's elements `from..from + dst.len()` of the run at `offs`, element by element
    /// into `dst`.
    #[inline(always)]
    fn short(&self, c: &Chain, offs: &[usize; MAX_LEAVES], from: usize, dst: &mut [f32]) {
        for (k, r) in dst.iter_mut().enumerate() {
            let at = |leaf: usize| match self.leaf_f(leaf, offs, from + k, 1) {
                V::S(x) => x,
                V::A(a) => a[0],
            };
            let mut acc = at(c.head);
            for s in &c.steps {
                let y = at(s.leaf);
                acc = match s.f {
                    Arith::Add => acc + y,
                    Arith::Sub => acc - y,
                    Arith::Mul => acc * y,
                    Arith::Div => acc / y,
                    Arith::AddTo => y + acc,
                    Arith::SubFrom => y - acc,
                    Arith::MulTo => y * acc,
                    Arith::DivInto => y / acc,
                };
            }
            *r = acc;
        }
    }

    /// A chain's steps with their operands on the run of `len` elements at `offs`.
    #[inline(always)]
    fn steps(&self, c: &Chain, offs: &[usize; MAX_LEAVES], len: usize) -> [(Arith, V<'_, f32>); MAX_NODES] {
        let mut steps = [(Arith::Add, V::S(0.0)); MAX_NODES];
        for (d, s) in steps.iter_mut().zip(&c.steps) {
            *d = (s.f, self.leaf_f(s.leaf, offs, 0, len));
        }
        steps
    }

    #[inline(always)]
    fn leaf_f(&self, k: usize, offs: &[usize; MAX_LEAVES], start: usize, n: usize) -> V<'_, f32> {
        leaf(self.f[k], self.inner[k], offs[k], start, n)
    }

    #[inline(always)]
    fn leaf_b(&self, k: usize, offs: &[usize; MAX_LEAVES], start: usize, n: usize) -> V<'_, bool> {
        leaf(self.b[k], self.inner[k], offs[k], start, n)
    }

    /// Evaluates the program on elements `start..start + n` of the run. The root computes
    /// into `root` when given (then a `Res::Reg` result means it is there), else into its
    /// register; gives where the root's block is.
    #[inline(always)]
    fn block(
        &self,
        regs: &mut [f32],
        mut root: Option<&mut [f32]>,
        offs: &[usize; MAX_LEAVES],
        start: usize,
        n: usize,
    ) -> Res {
        let mut res: [Res; MAX_NODES] = [Res::S(0.0); MAX_NODES];
        let last = self.prog.len() - 1;
        for (i, ins) in self.prog.iter().enumerate() {
            let (done, rest) = regs.split_at_mut(i * BLOCK);
            let dst: &mut [f32] = match root.as_deref_mut() {
                Some(o) if i == last => o,
                _ => &mut rest[..n],
            };
            let get = Get { lp: self, args: &ins.args, res: &res, done, offs, start, n };
            let r = match ins.op {
                Op::Add => binary(get.v(0), get.v(1), dst, Add),
                Op::Sub => binary(get.v(0), get.v(1), dst, Sub),
                Op::Mul => binary(get.v(0), get.v(1), dst, Mul),
                Op::Div => binary(get.v(0), get.v(1), dst, Div),
                Op::Sum => nary(ins.args.len(), &get, dst, Add),
                Op::Max => nary(ins.args.len(), &get, dst, Max),
                Op::Min => nary(ins.args.len(), &get, dst, Min),
                Op::Expand => copy(get.v(0), dst),
                Op::Where => where_block(self.leaf_b(ins.cond, offs, start, n), get.v(0), get.v(1), dst),
            };
            res[i] = match r {
                Res::S(x) => Res::S(x),
                Res::Reg(_) => Res::Reg(i),
            };
        }
        res[last]
    }
}

/// Runs the fused program over the runs of one chunk, with its scratch registers. A type
/// rather than a closure, so that it is inlined into the AVX2 copy of the loop.
struct Runner<'a, 'r, const AVX: bool> {
    lp: &'a Loop<'a>,
    regs: &'r mut [f32],
}

impl<const AVX: bool> Runs<f32, MAX_LEAVES> for Runner<'_, '_, AVX> {
    #[inline(always)]
    fn run(&mut self, out: &mut [f32], offs: [usize; MAX_LEAVES]) {
        self.lp.run::<AVX>(self.regs, out, &offs);
    }
}

/// As [`Runner`], writing through a [`Sink`]; the runs it is handed are slices of `()`.
struct NtRunner<'a, 'r, 'o, const AVX: bool> {
    lp: &'a Loop<'a>,
    regs: &'r mut [f32],
    sink: Sink<'o>,
}

impl<const AVX: bool> Runs<(), MAX_LEAVES> for NtRunner<'_, '_, '_, AVX> {
    #[inline(always)]
    fn run(&mut self, out: &mut [()], offs: [usize; MAX_LEAVES]) {
        self.lp.run_nt::<AVX>(self.regs, &mut self.sink, out.len(), &offs);
    }
}

/// Writes a chunk's output front to back with non-temporal stores of whole 32-byte vectors,
/// however the chunk is cut into runs: a run's last few elements wait in `pend` for the next
/// run's first ones. Only the elements before the chunk's first 32-byte boundary and those
/// left at its end get plain stores, so no cache line is written half one way, half the other.
struct Sink<'o> {
    out: &'o mut [f32],
    /// The next element to write.
    pos: usize,
    /// The first element on a 32-byte boundary.
    head: usize,
    /// The elements `out[pos - np..pos]`, not yet stored.
    pend: [f32; 8],
    np: usize,
}

impl<'o> Sink<'o> {
    fn new(out: &'o mut [f32]) -> Sink<'o> {
        let head = out.as_ptr().align_offset(32).min(out.len());
        Sink { out, pos: 0, head, pend: [0.0; 8], np: 0 }
    }

    #[inline(always)]
    fn put<const AVX: bool>(&mut self, mut src: &[f32]) {
        if self.pos < self.head {
            let k = (self.head - self.pos).min(src.len());
            self.out[self.pos..self.pos + k].copy_from_slice(&src[..k]);
            self.pos += k;
            src = &src[k..];
        }
        if self.np > 0 {
            let k = (8 - self.np).min(src.len());
            self.pend[self.np..self.np + k].copy_from_slice(&src[..k]);
            self.np += k;
            self.pos += k;
            src = &src[k..];
            if self.np < 8 {
                return;
            }
            let (at, pend) = (self.pos - 8, self.pend);
            stream::<AVX>(&mut self.out[at..at + 8], &pend);
            self.np = 0;
        }
        // Here pos - head is a multiple of 8: whole vectors go straight from the source.
        let body = src.len() / 8 * 8;
        stream::<AVX>(&mut self.out[self.pos..self.pos + body], &src[..body]);
        self.pos += body;
        let rest = &src[body..];
        self.pend[..rest.len()].copy_from_slice(rest);
        self.np = rest.len();
        self.pos += rest.len();
    }

    /// Stores what is still pending, with plain stores.
    fn finish(&mut self) {
        let at = self.pos - self.np;
        self.out[at..self.pos].copy_from_slice(&self.pend[..self.np]);
        self.np = 0;
    }
}

/// A program that is a single chain: a leaf, then each step combines the running value with
/// one more leaf, as ((x + m) * s) - b. Such a chain runs tile by tile with the running
/// value in vector registers, stored once: into the output, or for a large output into a
/// block register that the [`Sink`] then streams out in one burst (streaming each tile
/// straight from registers, between the next tile's loads, ran the chain at two threads 1.5-2x
/// slower).
#[derive(Clone, Debug)]
struct Chain {
    head: usize,
    steps: Vec<Step>,
}

#[derive(Clone, Copy, Debug)]
struct Step {
    f: Arith,
    leaf: usize,
}

/// A chain step's operation on the running value `acc` and its leaf `y`.
#[derive(Clone, Copy, Debug)]
enum Arith {
    /// acc + y
    Add,
    /// acc - y
    Sub,
    /// acc * y
    Mul,
    /// acc / y
    Div,
    /// y + acc
    AddTo,
    /// y - acc
    SubFrom,
    /// y * acc
    MulTo,
    /// y / acc
    DivInto,
}

impl Chain {
    /// The chain `prog` is, if it is one of two nodes or more: Add, Sub, Mul and Div only
    /// (whose vector instructions round exactly as the scalar ones), each on the instruction
    /// before it and a leaf.
    fn of(prog: &[Instr]) -> Option<Chain> {
        // A single node keeps the block loop, whose plain element loops measured as fast or
        // faster at one thread (an Add with a per-channel operand: 11.0 against 12.9 ms).
        if prog.len() < 2 {
            return None;
        }
        let mut head = None;
        let mut steps = Vec::with_capacity(prog.len());
        for (i, ins) in prog.iter().enumerate() {
            if ins.args.len() != 2 {
                return None;
            }
            let (leaf, left) = match (ins.args[0], ins.args[1]) {
                (Src::Leaf(a), Src::Leaf(b)) if i == 0 => {
                    head = Some(a);
                    (b, true)
                }
                (Src::Reg(r), Src::Leaf(b)) if i > 0 && r + 1 == i => (b, true),
                (Src::Leaf(a), Src::Reg(r)) if i > 0 && r + 1 == i => (a, false),
                _ => return None,
            };
            // Operands stay in the node's order even for + and *: with two NaN operands, x86
            // gives the first one's payload (when the compiler keeps the order, which Rust does
            // not promise; `tests/it/fuse_props.rs` allows either payload there).
            let f = match (ins.op, left) {
                (Op::Add, true) => Arith::Add,
                (Op::Add, false) => Arith::AddTo,
                (Op::Mul, true) => Arith::Mul,
                (Op::Mul, false) => Arith::MulTo,
                (Op::Sub, true) => Arith::Sub,
                (Op::Sub, false) => Arith::SubFrom,
                (Op::Div, true) => Arith::Div,
                (Op::Div, false) => Arith::DivInto,
                _ => return None,
            };
            steps.push(Step { f, leaf });
        }
        Some(Chain { head: head?, steps })
    }
}

/// A chain's tiles under AVX: the running value is four `__m256` registers from the head's
/// load to the store, each step one vector operation per register, in the order the nodes
/// would compute it, so the bits are those of the nodes run one by one.
#[cfg(target_arch = "x86_64")]
mod avx {
    use super::{Arith, TILE, V};
    use std::arch::x86_64::*;

    pub(super) type Tile = [__m256; TILE / 8];

    /// Elements `i..i + TILE` of an operand.
    ///
    /// # Safety
    ///
    /// The CPU has AVX.
    #[inline(always)]
    unsafe fn load(v: V<f32>, i: usize) -> Tile {
        match v {
            // SAFETY: the caller's CPU has AVX.
            V::S(x) => unsafe { [_mm256_set1_ps(x); TILE / 8] },
            V::A(a) => {
                let p = a[i..i + TILE].as_ptr();
                // SAFETY: the slice just taken holds TILE f32s from p; the CPU has AVX.
                unsafe {
                    [
                        _mm256_loadu_ps(p),
                        _mm256_loadu_ps(p.add(8)),
                        _mm256_loadu_ps(p.add(16)),
                        _mm256_loadu_ps(p.add(24)),
                    ]
                }
            }
        }
    }

    /// Elements `i..i + TILE` of the chain `head`, `steps` on a run.
    ///
    /// # Safety
    ///
    /// The CPU has AVX.
    #[inline(always)]
    pub(super) unsafe fn tile(head: V<f32>, steps: &[(Arith, V<f32>)], i: usize) -> Tile {
        macro_rules! each {
            ($f:ident, $a:expr, $b:expr) => {
                [$f($a[0], $b[0]), $f($a[1], $b[1]), $f($a[2], $b[2]), $f($a[3], $b[3])]
            };
        }
        // SAFETY: the caller's CPU has AVX; the operands are in bounds (`load` slices them).
        unsafe {
            let mut acc = load(head, i);
            for &(f, y) in steps {
                let y = load(y, i);
                acc = match f {
                    Arith::Add => each!(_mm256_add_ps, acc, y),
                    Arith::Sub => each!(_mm256_sub_ps, acc, y),
                    Arith::Mul => each!(_mm256_mul_ps, acc, y),
                    Arith::Div => each!(_mm256_div_ps, acc, y),
                    Arith::AddTo => each!(_mm256_add_ps, y, acc),
                    Arith::SubFrom => each!(_mm256_sub_ps, y, acc),
                    Arith::MulTo => each!(_mm256_mul_ps, y, acc),
                    Arith::DivInto => each!(_mm256_div_ps, y, acc),
                };
            }
            acc
        }
    }

    /// Stores a tile at `d`.
    ///
    /// # Safety
    ///
    /// The CPU has AVX; `d` is writable for TILE f32s.
    #[inline(always)]
    pub(super) unsafe fn store(d: *mut f32, t: &Tile) {
        // SAFETY: the caller's contract: AVX, TILE writable f32s at d.
        unsafe {
            for (k, v) in t.iter().enumerate() {
                _mm256_storeu_ps(d.add(8 * k), *v);
            }
        }
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

/// A binary f32 operation, as a type rather than a closure so that it is inlined into the
/// AVX2 copy of the loop (a closure would be compiled for the baseline CPU only).
trait F2: Copy {
    fn f(self, a: f32, b: f32) -> f32;
}

/// Defines each named `F2` as `|a, b| $e`.
macro_rules! f2 {
    ($($name:ident: |$a:ident, $b:ident| $e:expr;)*) => {
        $(
            #[derive(Clone, Copy)]
            struct $name;
            impl F2 for $name {
                #[inline(always)]
                fn f(self, $a: f32, $b: f32) -> f32 {
                    $e
                }
            }
        )*
    };
}

f2! {
    Add: |a, b| a + b;
    Sub: |a, b| a - b;
    Mul: |a, b| a * b;
    Div: |a, b| a / b;
    Max: |a, b| a.maxn(b);
    Min: |a, b| a.minn(b);
}

/// An instruction's operands on one block (a type rather than a closure, as [`F2`]).
struct Get<'a, 'b> {
    lp: &'a Loop<'a>,
    args: &'b [Src],
    res: &'b [Res; MAX_NODES],
    done: &'a [f32],
    offs: &'b [usize; MAX_LEAVES],
    start: usize,
    n: usize,
}

impl<'a> Get<'a, '_> {
    /// The value of operand `i` on the block.
    #[inline(always)]
    fn v(&self, i: usize) -> V<'a, f32> {
        match self.args[i] {
            Src::Leaf(k) => self.lp.leaf_f(k, self.offs, self.start, self.n),
            Src::Reg(r) => match self.res[r] {
                Res::S(x) => V::S(x),
                Res::Reg(r) => V::A(&self.done[r * BLOCK..r * BLOCK + self.n]),
            },
        }
    }
}

/// A left fold over the `n` operands, as the N-ary kernel does: ((x0 op x1) op x2) ...; the
/// first two are combined directly, so the block is passed over once per extra operand.
#[inline(always)]
fn nary(n: usize, get: &Get, dst: &mut [f32], f: impl F2) -> Res {
    if n < 2 {
        return copy(get.v(0), dst);
    }
    let mut acc = binary(get.v(0), get.v(1), dst, f);
    for i in 2..n {
        acc = match acc {
            Res::S(x) => binary(V::S(x), get.v(i), dst, f),
            Res::Reg(_) => fold(dst, get.v(i), f),
        };
    }
    acc
}

#[inline(always)]
fn fold(dst: &mut [f32], b: V<f32>, f: impl F2) -> Res {
    match b {
        V::S(y) => dst.iter_mut().for_each(|d| *d = f.f(*d, y)),
        V::A(y) => dst.iter_mut().zip(y).for_each(|(d, y)| *d = f.f(*d, *y)),
    }
    Res::Reg(0)
}

#[inline(always)]
fn binary(a: V<f32>, b: V<f32>, dst: &mut [f32], f: impl F2) -> Res {
    match (a, b) {
        (V::S(x), V::S(y)) => return Res::S(f.f(x, y)),
        (V::A(x), V::A(y)) => {
            for ((d, x), y) in dst.iter_mut().zip(x).zip(y) {
                *d = f.f(*x, *y);
            }
        }
        (V::A(x), V::S(y)) => {
            for (d, x) in dst.iter_mut().zip(x) {
                *d = f.f(*x, y);
            }
        }
        (V::S(x), V::A(y)) => {
            for (d, y) in dst.iter_mut().zip(y) {
                *d = f.f(x, *y);
            }
        }
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

#[inline(always)]
fn where_block(c: V<bool>, x: V<f32>, y: V<f32>, dst: &mut [f32]) -> Res {
    let c = match c {
        V::S(c) => return copy(if c { x } else { y }, dst),
        V::A(c) => c,
    };
    match (x, y) {
        (V::A(x), V::A(y)) => {
            for (((d, c), x), y) in dst.iter_mut().zip(c).zip(x).zip(y) {
                *d = pick(*c, *x, *y);
            }
        }
        (V::A(x), V::S(y)) => {
            for ((d, c), x) in dst.iter_mut().zip(c).zip(x) {
                *d = pick(*c, *x, y);
            }
        }
        (V::S(x), V::A(y)) => {
            for ((d, c), y) in dst.iter_mut().zip(c).zip(y) {
                *d = pick(*c, x, *y);
            }
        }
        (V::S(x), V::S(y)) => {
            for (d, c) in dst.iter_mut().zip(c) {
                *d = pick(*c, x, y);
            }
        }
    }
    Res::Reg(0)
}

/// Copies `src` to `dst` (of the same length, a multiple of 8, starting on a 32-byte
/// boundary) with non-temporal stores on x86_64: 8 wide under AVX, else 4 wide.
#[inline(always)]
fn stream<const AVX: bool>(dst: &mut [f32], src: &[f32]) {
    let n = dst.len().min(src.len()) / 8 * 8;
    let (dst, src) = (&mut dst[..n], &src[..n]);
    #[cfg(target_arch = "x86_64")]
    {
        if dst.as_ptr().align_offset(32) != 0 {
            dst.copy_from_slice(src);
            return;
        }
        let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
        if AVX {
            // SAFETY: only reached through `Loop::chunk_avx2`, so the CPU has AVX; s and d
            // hold n f32s (a multiple of 8) and d is 32-byte aligned (checked above).
            unsafe { stream_avx(d, s, n) };
        } else {
            let mut i = 0;
            while i < n {
                // SAFETY: SSE is part of the x86_64 baseline. i + 4 <= n, so the 4 elements
                // read at s + i and written at d + i are in bounds; d + i is 16-byte aligned
                // because d is (checked above) and i is a multiple of 4 f32s.
                unsafe { std::arch::x86_64::_mm_stream_ps(d.add(i), std::arch::x86_64::_mm_loadu_ps(s.add(i))) };
                i += 4;
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// Streams `body` (a multiple of 8) f32s from `s` to `d` with 32-byte non-temporal stores.
///
/// # Safety
///
/// The CPU has AVX; `s` is readable and `d` writable for `body` f32s; `d` is 32-byte aligned.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn stream_avx(d: *mut f32, s: *const f32, body: usize) {
    use std::arch::x86_64::{_mm256_loadu_ps, _mm256_stream_ps};
    let mut i = 0;
    while i < body {
        // SAFETY: i + 8 <= body, so both 8-element accesses are in bounds (the caller's
        // contract); d + i stays 32-byte aligned since d is and i is a multiple of 8 f32s.
        unsafe { _mm256_stream_ps(d.add(i), _mm256_loadu_ps(s.add(i))) };
        i += 8;
    }
}

/// Recycled f32 output buffers (at most a few), reused by the next fused loops.
static POOL: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());
const POOL_MAX: usize = 4;

/// A vector of `n` f32s to be overwritten: a recycled buffer when one is big enough (its
/// stale contents are overwritten by the loop), else a fresh zeroed one, which `calloc` maps
/// lazily, so no pass over it is spent on zeros; large ones on huge pages.
fn take(n: usize) -> Vec<f32> {
    if let Ok(mut pool) = POOL.lock() {
        if let Some(i) = pool.iter().position(|v| v.capacity() >= n) {
            let mut v = pool.swap_remove(i);
            v.truncate(n);
            v.resize(n, 0.0);
            return v;
        }
    }
    // Zeroed memory from the system is mapped lazily, so the hint comes before any page is
    // touched.
    let v = vec![0.0; n];
    super::tensor::advise_huge(&v);
    v
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

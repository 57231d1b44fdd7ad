"""Differential shape fuzzing against onnxruntime: mutated variants of onnx's backend node cases
(tests/data/node) are run through onnxruntime (CPU, graph optimizations off) and through
`onnx-bcast infer --format json`, and every output shape and dtype is compared.

Mutations of each case: an input dim set to 0, 1 or a larger size; every occurrence of one size
across all inputs replaced (broadcast-compatible); a leading dim added or removed; and the
contents of the integer (or float) inputs that drive shapes (Reshape's shape, Slice's starts to
steps, Expand, Tile, Pad, Resize, TopK, Range, ConstantOfShape, OneHot, Split, Squeeze, Reduce
axes, ...) changed, such inputs being made initializers so inference sees their values. Declared
input shapes are the concrete mutated shapes (with --sym sometimes symbols, bound by `--dim`);
declared output shapes and value_info are dropped, so only inference speaks. Every node output
of the main graph becomes a graph output, so multi-node cases (`_expanded`) are compared inside.

Verdicts per variant:
  WRONG        ORT ran and we state a known dim, a rank or a dtype unlike ORT's output.
  FALSE-ALARM  ORT ran and we report an error finding (or refuse the model, exit 2).
  MISSED       ORT failed with a shape/validation error (not "not implemented") and we give
               every output a shape of numbers with no error finding. ORT is sometimes stricter
               than the ONNX spec: then the spec decides.
  CRASH        our binary panicked, exited with another code than 0, 1, 2, or ran over 30 s.
  ort-sym-lenient  a FALSE-ALARM of a symbolic variant whose concrete twin ORT refuses (its
               load-time checks saw only symbols): the error stands.
  machine-dependent  ORT failed where we warn that only machines of the other NCHWc block width
               (8 or 16 channels) run the node.
  runtime-differs  ORT failed at a node of an op we warn `runtime-differs` on (or inside a
               function body it expanded, or died, with such a warning on any op), or gave that op's
               output another shape: the spec allows what ORT refuses (OneHot of depth 0) or
               means what ORT does otherwise (Squeeze of an empty axes list), and the warning
               says so.
  pass / ort-unsupported (ORT lacks the kernel or type) / ort-value-error (an index or divisor
  out of range in the random data) / skip otherwise.

Run by hand (needs onnx, onnxruntime, numpy), against the debug binary (overflow checks panic):

    cargo build --bin onnx-bcast
    python3 scripts/ort_diff.py [--seed 1] [--count 4000] [--op Slice] [--case NAME] \
        [--variants 6] [--sym] [--bin target/debug/onnx-bcast]

With --sweep N each case's variants are instead every dim of every data input set to N in turn
(--sweep 0 the empty sizes, --sweep 1 the stretching ones; no randomness); with --sweep-sym
every dim of every data input declared in turn as a symbol no `--dim` binds, then all of them,
then every input's with the shape-driving ones fed at run time (inference on sizes and values
it cannot see: an error there is a FALSE-ALARM unless ORT refuses the concrete twin). With
--exec each variant ORT ran also runs on our executor (`run`, ORT's inputs) and its outputs
are compared with ORT's: EXEC-DIFF where a shape, dtype or value differs (floats within 1e-4,
float16 1e-2), EXEC-FAIL where it refuses, exec-unsupported where it lacks an op or type. The
sweeps 0, 1 and 2 and `--seed 61 --variants 8` give no EXEC-FAIL and one EXEC-DIFF class:
Pow of int64 by a float whose result overflows int64, which ORT converts as x86 does
(INT64_MIN) and we saturate (INT64_MAX); C++ leaves it undefined. With --rewrite each variant
ORT ran with no finding of ours is rewritten by `annotate` and `expand`, then `implicit`, and each rewrite
run under ORT on the same inputs (REWRITE-DIFF, REWRITE-FAIL); the sweeps 0, 1, 2 and
--sweep-sym and `--sym --seed 67 --variants 8` give none. With --opsets each case is read, as
it is, at every older default-domain opset at which one of its ops had another schema and
onnx's checker still takes the model (negative Flatten axes before 11, Mod of floats with
fmod=0 before 28, GridSample 16's mode names): 4447 variants, 2 MISSED left, Max and Min of
float16 at opset 1, where ORT breaks its own inserted Cast. With --attrs each int attribute
of each node is set to each of ATTR_VALUES in turn, and each int list it holds emptied, made
one longer or shorter, or its first entry 0, -1 or doubled, once per op, version, attribute
and change over the run (flags ORT reads as 0 or 1 only, keepdims of 2, dtype codes that name
no type, negative counts, tree ensembles whose lists disagree or whose branches loop): 1826
variants, 5 FALSE-ALARM left, where the spec refuses what ORT runs:
ReverseSequence axes of -1 and -2, and a Split of num_outputs -1 whose input shape ORT's
load-time inference does not know (it refuses the same node where it does). `--attrs
--contrib` reads onnxruntime's own ops' attributes from its schemas: 804 variants, no WRONG,
FALSE-ALARM or MISSED; 6 runtime-differs, MoE's swiglu_limit_after_activation, which only
onnxruntime's CUDA kernel runs. `--attrs floats` sets float attributes instead, each to
-1, 0, 0.5, 3, NaN and infinity, and changes float lists as int lists: 365 variants, no WRONG,
FALSE-ALARM or MISSED (22 runtime-differs: LRN's alpha and beta and Attention's scale, which
ORT wants positive, and the known GRU and LSTM ones); with --contrib 211 variants, none.
`--attrs drop` leaves out each attribute a node holds in turn (the schema's default, or a
required one missing): 473 variants, none left (12 runtime-differs: Resize's exclude_outside
outside cubic mode, RegexFullMatch without a pattern, the known recurrent ones); with
--contrib 64, none (FusedGemm must name its activation). `--attrs strings` sets each
string attribute to "bogus" and to "": 108 variants, none left (CastLike's round_mode, which
ORT never reads, is not checked); with --contrib 42, none (the contrib ops' auto_pad, Pad and
GridSample modes, GatedDeltaNet's beta_activation). `--attrs omit` leaves out each
optional input a node is given: 105 variants, none left but a Loop whose trip count goes
(its condition stays true: ORT runs on until the timeout); with --contrib 56, none (required
inputs after optional ones, the zero points ORT's QLinear type inference reads, BeamSearch's
min_length and length_penalty, MultiHeadAttention's value without a key). `--attrs outputs`
leaves out each output but a node's first (when nothing reads it): 55 variants, none left
(Split with any output left out and BatchNormalization's training statistics crash ORT; an
RNN with no output, Loop and Scan with fewer outputs than their body's, and a Single output
left empty, ORT refuses); with --contrib 8, none. With --untested it instead runs one small model of each shipped op that no node case uses
(UNTESTED); with --contrib it mutates a valid model of each of onnxruntime's contrib ops that
deployed graphs use (CONTRIB) in place of the node cases. The models of every non-pass are
kept under target/ort-diff/VERDICT/ with a .txt beside each
saying what differed; a summary by op and verdict ends the output. A bug found becomes a row of
tests/it/ort_cases.rs with ORT's output as the expected value. ORT runs in a child process
(some models abort it: `ort-died` where no warning or error says so), one ORT and one `infer` process per variant, about 70
variants a second.

`--seed 11 --variants 8 --sym` (14696 variants of 1861 cases) against the release binary
gives pass 12357, WRONG 3, FALSE-ALARM 16, MISSED 41, runtime-differs 68, CRASH 0. What
remains is where ORT is looser than the spec (Concat of an empty input with other sizes, PRelu's slope broadcasting
both ways, negative CenterCropPad sizes, a Range delta of 0 in float16, a Loop body declaring a
carried shape it is not fed: a warning, a 3-D Attention-25 V of another batch or sequence, which ORT
reshapes into a shape of no meaning, an Attention mask's leading sizes), where ORT refuses what
the spec allows and no warning says so (StringNormalizer locales; LRN other than 4-D,
layout=1 recurrences, empty scans, Attention masks not ending in [q_seq, keys], empty wrap
pads, empty ArrayFeatureExtractor indices, per-row or N-D per-column QLinearMatMul scales,
linear and cubic Resize over axes ORT has no kernel for, nearest Resize with antialias, empty
AffineGrid sizes, rotary caches shorter than the sequence, an empty CausalConvWithState sequence
or GroupNormalization input, GridSample of other than 4-D or 5-D inputs, pooling over more than 3 axes,
DeformConv of other than 4-D inputs, GRU/LSTM sizes ORT aborts on, Unique of slices empty after
the axis and StringNormalizer of a batch not declared 1 are runtime-differs), where
the failure depends on values fed at run time (GatherElements, NonMaxSuppression thresholds,
ScatterND indices, TensorScatter write indices), or failures inside the function bodies ORT
expands (Attention 25 local windows, LinearAttention).
"""

import argparse
import collections
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE = os.path.join(ROOT, "tests", "data", "node")
I64MAX, I64MIN = 2**63 - 1, -2**63

# Inputs (op -> slots) whose contents drive output shapes; they become initializers.
SHAPE_INPUTS = {
    "Reshape": [1], "Slice": [1, 2, 3, 4], "DynamicSlice": [1, 2, 3], "Expand": [1], "Tile": [1], "Pad": [1, 3],
    "Resize": [1, 2, 3], "Upsample": [1], "TopK": [1], "Range": [0, 1, 2], "ConstantOfShape": [0],
    "OneHot": [1], "Split": [1], "Squeeze": [1], "Unsqueeze": [1], "CenterCropPad": [1],
    "Col2Im": [1, 2], "AffineGrid": [1], "DFT": [1, 2], "STFT": [1, 3], "MelWeightMatrix": [0, 1, 2],
    "HannWindow": [0], "HammingWindow": [0], "BlackmanWindow": [0], "MaxUnpool": [2],
    "ReduceSum": [1], "ReduceMean": [1], "ReduceMax": [1], "ReduceMin": [1], "ReduceProd": [1],
    "ReduceL1": [1], "ReduceL2": [1], "ReduceLogSum": [1], "ReduceLogSumExp": [1],
    "ReduceSumSquare": [1], "SplitToSequence": [1], "TfIdfVectorizer": [], "Trilu": [],
    # Contrib generation: max_length, num_beams, num_return_sequences and the penalties.
    "BeamSearch": [1, 3, 4, 5, 6], "GreedySearch": [1, 3], "Sampling": [1, 3],
    # GatedDeltaNet's cu_seqlens gives the batch.
    "GatedDeltaNet": [3],
}
# Values shape-driving integers mutate to (besides +-1 and doubling of the original).
SPECIAL = [0, 1, -1, 2, -2, 3, 5]
SLICE_SPECIAL = [I64MAX, I64MIN, 100, -100]
UNSUPPORTED = ("NOT_IMPLEMENTED", "not implemented", "Could not find an implementation",
               "is not supported", "Unsupported", "unsupported", "NotImplemented", "No opset import",
               "is not a registered function/op", "not registered", "No corresponding Numpy type",
               "is not defined for empty set", "can't be converted to MLDataType")
ORT_TYPES = {"float": "float32", "double": "float64", "string": "string"}
# Run-time failures about index or element values, not shapes.
VALUE_ERRORS = ("out of bounds", "out of range", "outside the range", "must be within", "invalid index",
                "indices element", "index out", "Invalid index", "must be in the range", "by zero",
                "scale must be positive", "out of computation range")
MAX_ELEMS = 2_000_000


def load_case(name):
    d = os.path.join(NODE, name)
    m = onnx.load(os.path.join(d, "model.onnx"))
    ins = []
    data = os.path.join(d, "test_data_set_0")
    for i in range(len(m.graph.input)):
        p = os.path.join(data, f"input_{i}.pb")
        if not os.path.exists(p):
            return m, None
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        if not t.name and not t.dims and not t.raw_data and t.data_type == 0:
            return m, None  # a sequence or optional input
        try:
            ins.append(numpy_helper.to_array(t))
        except Exception:
            return m, None
    return m, ins


def shape_slots(model):
    """(input name -> True) for graph inputs read by a shape-driving slot of a main-graph node."""
    names = {i.name for i in model.graph.input}
    out = set()
    for n in model.graph.node:
        for s in SHAPE_INPUTS.get(n.op_type, []):
            if s < len(n.input) and n.input[s] in names:
                out.add(n.input[s])
    return out


def mutate_dims(rng, shapes):
    """A new list of shapes (some may be unchanged), and a word naming the mutation."""
    shapes = [list(s) for s in shapes]
    if not shapes:
        return shapes, "none"
    nonscalar = [i for i, s in enumerate(shapes) if s]
    kind = rng.choice(["dim", "dim", "size", "size", "lead"])
    if not nonscalar:
        kind = "lead"
    if kind == "dim":
        i = rng.choice(nonscalar)
        a = rng.randrange(len(shapes[i]))
        old = shapes[i][a]
        shapes[i][a] = rng.choice([0, 1, old + 1, old * 2 + 1, 0, 1])
        return shapes, f"dim in{i}[{a}]={shapes[i][a]}"
    if kind == "size":
        sizes = sorted({d for s in shapes for d in s})
        old = rng.choice(sizes)
        new = rng.choice([0, 1, old + 1, old + 2, 0])
        return [[new if d == old else d for d in s] for s in shapes], f"size {old}->{new}"
    i = rng.randrange(len(shapes))
    if shapes[i] and rng.random() < 0.5:
        shapes[i] = shapes[i][1:]
        return shapes, f"drop-lead in{i}"
    shapes[i] = [rng.choice([1, 2, 0])] + shapes[i]
    return shapes, f"add-lead in{i}={shapes[i][0]}"


def mutate_values(rng, arr, op):
    """Mutated contents of a shape-driving input."""
    flat = arr.reshape(-1).tolist()
    is_float = arr.dtype.kind == "f"
    if flat and rng.random() < 0.15 and arr.ndim == 1:
        flat = flat[:-1] if rng.random() < 0.5 else flat + [flat[-1]]
    out = []
    for v in flat:
        if rng.random() < 0.5:
            out.append(v)
            continue
        choices = SPECIAL + [v + 1, v - 1, 2 * v, -v]
        if op == "Slice" and not is_float:
            choices += SLICE_SPECIAL
        if is_float:
            choices += [0.5, 1.5, 0.0, 2.0, 0.3]
        out.append(rng.choice(choices))
    shape = [len(out)] if arr.ndim == 1 else list(arr.shape)
    if arr.ndim != 1 and len(out) != arr.size:
        shape = [len(out)]
    if not is_float and arr.dtype.kind in "iu":
        info = np.iinfo(arr.dtype)
        out = [min(max(int(v), info.min), info.max) for v in out]
    return np.array(out, dtype=arr.dtype).reshape(shape)


def random_input(rng, np_rng, old, shape):
    """Data of `shape` like `old`: random floats, original or zero integers, random bools."""
    if list(old.shape) == list(shape):
        if old.dtype.kind == "f":
            return np_rng.standard_normal(shape).astype(old.dtype) if rng.random() < 0.5 else old
        return old
    if old.dtype.kind == "f":
        return np_rng.standard_normal(shape).astype(old.dtype)
    if old.dtype.kind == "b":
        return np.asarray(np_rng.random(shape) < 0.5)
    if old.dtype.kind in "iu":
        return np.zeros(shape, dtype=old.dtype)
    if old.dtype.kind in "OUS":
        return np.full(shape, "a", dtype=old.dtype)
    return np.zeros(shape, dtype=old.dtype)


def set_shape(vi, shape, sym, tag, free=()):
    """Declares `vi`'s tensor shape as `shape`; with `sym`, dims are named (tag_axis) instead,
    bound to their sizes by the bindings returned; the axes in `free` are named and not bound."""
    t = vi.type.tensor_type
    t.ClearField("shape")
    t.shape.SetInParent()
    bind = {}
    for a, d in enumerate(shape):
        x = t.shape.dim.add()
        if sym or a in free:
            x.dim_param = f"{tag}_{a}"
            if a not in free:
                bind[x.dim_param] = d
        else:
            x.dim_value = d
    return bind


def clear_shape(t):
    """Drops every shape inside a type (tensor, sequence, optional), keeping element types."""
    w = t.WhichOneof("value")
    if w == "tensor_type":
        t.tensor_type.ClearField("shape")
    elif w == "sequence_type":
        clear_shape(t.sequence_type.elem_type)
    elif w == "optional_type":
        clear_shape(t.optional_type.elem_type)


def build(model, shapes, values, sym, free=None):
    """The variant: inputs declared with `shapes`, `values` (name -> array) made initializers,
    outputs without shapes, every main-graph node output a graph output; `free` maps an
    input's index to the axes declared as unbound symbols. Gives (model, dims)."""
    m = copy.deepcopy(model)
    g = m.graph
    dims = {}
    keep = []
    for i, vi in enumerate(g.input):
        if vi.name in values:
            g.initializer.append(numpy_helper.from_array(values[vi.name], vi.name))
            continue
        if vi.type.WhichOneof("value") == "tensor_type":
            dims.update(set_shape(vi, shapes[i], sym, f"d{i}", (free or {}).get(i, ())))
        keep.append(vi)
    del g.input[:]
    g.input.extend(keep)
    if values and m.ir_version < 4:
        m.ir_version = 4
    del g.value_info[:]
    outs = {o.name for o in g.output}
    for o in g.output:
        clear_shape(o.type)
    for n in g.node:
        for o in n.output:
            if o and o not in outs:
                g.output.append(onnx.ValueInfoProto(name=o))
                outs.add(o)
    return m, dims


def older_opsets(model):
    """Each earlier default-domain opset at which some op of the main graph had another schema
    and the whole model still passes onnx's checker: the same node, read under older rules."""
    imp = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if not imp:
        return []
    now = imp[0].version
    cut = set()
    for n in model.graph.node:
        if n.domain not in ("", "ai.onnx"):
            continue
        for v in range(1, now):
            try:
                cut.add(onnx.defs.get_schema(n.op_type, v, "").since_version)
            except Exception:  # noqa: BLE001 - no schema that old
                pass
    out = []
    for v in sorted(cut, reverse=True):
        m = copy.deepcopy(model)
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = v
        try:
            onnx.checker.check_model(m)
        except Exception:  # noqa: BLE001 - the node is not valid under that opset
            continue
        out.append(v)
    return out


ATTR_VALUES = [-2, -1, 0, 1, 2, 3, 7]
# onnxruntime's own ops' newest schemas, by (domain, op).
ORT_SCHEMAS = {(x.domain, x.name): x for x in sorted(ort.capi._pybind_state.get_all_operator_schema(),
                                                      key=lambda x: x.since_version)}


FLOAT_VALUES = [-1.0, 0.0, 0.5, 3.0, float("nan"), float("inf")]


def string_choices():
    """The values each string attribute takes, by (domain, op, attribute), as the registry's
    CHOICES table lists them (what to try, not what to expect: onnxruntime is the oracle), and
    by attribute alone for the enumerations it leaves to the rules."""
    with open(os.path.join(ROOT, "src", "ops", "registry.rs")) as f:
        src = f.read()
    consts = {m[1]: re.findall(r'"([^"]*)"', m[2]) for m in re.finditer(r"const (\w+): &\[&str\] = &\[([^\]]*)\]", src)}
    domains = {'""': "", "MS": "com.microsoft", "ML": "ai.onnx.ml", "NCHWC": "com.microsoft.nchwc"}
    by_op = collections.defaultdict(set)
    row = r'\(("[^"]*"|MS|ML|NCHWC), "(\w+)", "(\w+)", \d+, (&\[[^\]]*\]|[A-Z_]+)\)'
    for m in re.finditer(row, src):
        values = consts.get(m[4]) if m[4] in consts else re.findall(r'"([^"]*)"', m[4])
        by_op[(domains[m[1]], m[2], m[3])].update(values or [])
    by_attr = {
        "coordinate_transformation_mode": ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                           "align_corners", "asymmetric", "tf_crop_and_resize"],
        "nearest_mode": ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
        "keep_aspect_ratio_policy": ["stretch", "not_larger", "not_smaller"],
        "reduction": ["none", "add", "mul", "max", "min", "mean", "sum"],
    }
    return by_op, by_attr


CHOICES_BY_OP, CHOICES_BY_ATTR = string_choices()


def node_schemas(model):
    """(node index, node, domain, schema) for each main-graph node whose schema onnx or
    onnxruntime knows, at the model's opset."""
    ids = {o.domain or "": o.version for o in model.opset_import}
    for k, n in enumerate(model.graph.node):
        domain = "" if n.domain in ("", "ai.onnx") else n.domain
        try:
            schema = onnx.defs.get_schema(n.op_type, ids.get(domain, ids.get("ai.onnx", 1)), domain)
        except Exception:  # noqa: BLE001 - not onnx's: onnxruntime's own op, or none
            schema = ORT_SCHEMAS.get((domain, n.op_type))
        if schema is not None:
            yield k, n, domain, schema


def attr_variants(model, seen, mode="ints"):
    """(node index, attribute, value) changes of each node of the main graph, once per op,
    schema version, attribute and value over the run (`seen`). By `mode`:
      ints     each int attribute the schema defines set to each of ATTR_VALUES it does not
               hold, each int list held emptied, one longer or shorter, its first entry 0, -1
               or doubled;
      floats   the same for float attributes (FLOAT_VALUES) and lists (first 0, -1, 0.5, NaN);
      strings  each string attribute set to "bogus" and to "";
      choices  each string attribute set to each value it takes (string_choices);
      drop     each attribute held left out (value None);
      omit     each optional input given left out (attribute "#input", value its slot);
      outputs  each output but the first left out ("#output")."""
    out = []

    def add(key, change):
        if key not in seen:
            seen.add(key)
            out.append(change)

    if mode == "outputs":
        read = {i for n in model.graph.node for i in n.input}
        for k, n in enumerate(model.graph.node):
            for slot in range(1, len(n.output)):
                if n.output[slot] and n.output[slot] not in read:
                    add((n.domain, n.op_type, slot, tuple(bool(x) for x in n.output)), (k, "#output", slot))
        return out
    if mode == "drop":
        for k, n in enumerate(model.graph.node):
            for a in n.attribute:
                add((n.domain, n.op_type, a.name, tuple(sorted(x.name for x in n.attribute))), (k, a.name, None))
        return out
    T = onnx.defs.OpSchema.AttrType
    one, many, held_of, values, firsts = {
        "ints": (T.INT, T.INTS, lambda a: a.i, ATTR_VALUES, lambda v: (0, -1, 2 * v[0] + 1)),
        "floats": (T.FLOAT, T.FLOATS, lambda a: a.f, FLOAT_VALUES, lambda v: (0.0, -1.0, 0.5, float("nan"))),
        "strings": (T.STRING, None, lambda a: a.s.decode(), ["bogus", ""], None),
        "omit": (None, None, None, [], None),
        "choices": (None, None, None, [], None),
    }[mode]
    for k, n, domain, schema in node_schemas(model):
        version = (domain, n.op_type, schema.since_version)
        if mode == "choices":
            held = {a.name: a.s.decode() for a in n.attribute if a.type == onnx.AttributeProto.STRING}
            for name, a in sorted(schema.attributes.items()):
                if a.type != onnx.defs.OpSchema.AttrType.STRING:
                    continue
                for v in sorted(CHOICES_BY_OP.get((domain, n.op_type, name), set()) | set(CHOICES_BY_ATTR.get(name, []))):
                    if held.get(name) != v:
                        add(version + (name, v), (k, name, v))
            continue
        if mode == "omit":
            formals = list(schema.inputs)
            for slot, name in enumerate(n.input):
                if name and formals and str(formals[min(slot, len(formals) - 1)].option).endswith("Optional"):
                    add(version + (slot, tuple(bool(x) for x in n.input)), (k, "#input", slot))
            continue
        held = {a.name: held_of(a) for a in n.attribute if a.type == int(one)}
        lists = {a.name: list(a.ints or a.floats) for a in n.attribute if many is not None and a.type == int(many)}
        for name, a in sorted(schema.attributes.items()):
            if a.type == many and name in lists:
                v = lists[name]
                changes = {"empty": [], "longer": v + [type(v[0])(1) if v else 1], "shorter": v[:-1]}
                if v:
                    changes.update({f"first={x}": [x] + v[1:] for x in firsts(v)})
                for what, new in changes.items():
                    if new != v:
                        add(version + (name, what), (k, name, new))
            if a.type != one:
                continue
            for v in values:
                if held.get(name) != v:
                    add(version + (name, str(v)), (k, name, v))
    return out


def run_ort(path, feeds):
    so = ort.SessionOptions()
    # ORT_DIFF_OPTIMIZE=1: onnxruntime's default, every graph optimization on.
    level = "ORT_ENABLE_ALL" if os.environ.get("ORT_DIFF_OPTIMIZE") else "ORT_DISABLE_ALL"
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 4
    try:
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        outs = s.get_outputs()
        res = s.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - every ORT failure is a result
        return None, str(e)
    # numpy has no float8 or int4: ORT's own type names the element type.
    types = [ORT_TYPES.get(o.type[7:-1], o.type[7:-1]) if o.type.startswith("tensor(") else None for o in outs]
    return {o.name: (r, t) for o, r, t in zip(outs, res, types)}, None


def stop(pool):
    """Shut the ORT process down without waiting for it: a hung session would otherwise hold
    a core and keep the script from exiting."""
    procs = list((pool._processes or {}).values())  # noqa: SLF001 - no public way to kill
    for p in procs:
        p.kill()
    # Killed first, the pool's threads end at once; waiting for them keeps its pipes open
    # until they have (else Python's exit hook writes to a closed one).
    pool.shutdown(wait=True, cancel_futures=True)


def concrete_refused(pool, model, shapes, values, feeds, tmp):
    """Whether ORT refuses the variant once its dims are declared as numbers: then a symbolic
    variant it ran only got past its load-time checks, and our error is the spec's."""
    onnx.save(build(model, shapes, values, False)[0], tmp)
    try:
        got, err = pool.submit(run_ort, tmp, feeds).result(timeout=120)
    except Exception:  # noqa: BLE001 - ORT died: no answer
        return False
    return got is None and not any(s in err for s in UNSUPPORTED + VALUE_ERRORS)


def run_bin(args, timeout):
    """Our binary on `args`: (process, why), `why` "timeout" (no process) or "exit N" where it
    ran over `timeout`, panicked or exited with another code than 0, 1 or 2, else None."""
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if p.returncode not in (0, 1, 2) or "panicked" in p.stderr:
        return p, f"exit {p.returncode}"
    return p, None


def first_difference(have, want, tol):
    """Where array `have` is not `want`: their shapes or dtypes, or the first element apart
    (floats by over `tol`, relative and absolute, NaN matching NaN); None where they agree."""
    if not isinstance(have, np.ndarray) or have.shape != want.shape or have.dtype != want.dtype:
        what = f"{have.dtype}{list(have.shape)}" if isinstance(have, np.ndarray) else "nothing"
        return f"{what}, not {want.dtype}{list(want.shape)}"
    bad = ~np.isclose(have, want, rtol=tol, atol=tol, equal_nan=True) if want.dtype.kind == "f" else have != want
    if not np.any(bad):
        return None
    at = np.argwhere(bad)[0].tolist()
    return f"at {at} {have[tuple(at)]}, not {want[tuple(at)]}"


def run_ours(binary, path, dims):
    args = [binary, "infer", path, "--format", "json"]
    for k, v in dims.items():
        args += ["--dim", f"{k}={v}"]
    p, why = run_bin(args, 30)
    if why:
        return None, why, p.stderr[-2000:] if p else ""
    if p.returncode == 2:
        return None, "exit 2", p.stderr[-2000:]
    return json.loads(p.stdout), None, ""


def run_exec(binary, path, feeds, got, names, d):
    """Runs the variant on our executor with ORT's feeds and compares every output with ORT's:
    (verdict, detail), the verdict pass, exec-unsupported (an op or a type the executor does
    not run), EXEC-FAIL (it refused or failed) or EXEC-DIFF (a shape, dtype or value differs)."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    args = [binary, "run", path, "--output-dir", os.path.join(d, "out")]
    for k, (n, arr) in enumerate(feeds.items()):
        if not isinstance(arr, np.ndarray) or arr.dtype == object:
            return "exec-unsupported", ""
        f = os.path.join(d, f"in{k}.npy")
        np.save(f, arr)
        args += ["--input", f"{n}={f}"]
    p, why = run_bin(args, 60)
    if why:
        return "CRASH", f"run: {why}\n{p.stderr[-2000:] if p else ''}"
    if p.returncode != 0:
        if "does not run" in p.stderr or "unsupported" in p.stderr:
            return "exec-unsupported", ""
        return "EXEC-FAIL", p.stderr.strip()[-1500:]
    files = [line.rsplit(" -> ", 1)[1] for line in p.stdout.splitlines() if " -> " in line]
    diffs = []
    for name, f in zip(names, files):
        if name not in got or not isinstance(got[name][0], np.ndarray):
            continue
        want = np.asarray(got[name][0])
        if want.dtype == object:
            continue
        diff = first_difference(np.load(f), want, 1e-2 if want.dtype == np.float16 else 1e-4)
        if diff:
            diffs.append(f"{name}: ours {diff} (ORT's)")
    return ("EXEC-DIFF", "\n".join(diffs)) if diffs else ("pass", "")


def run_rewrites(binary, path, dims, feeds, got, pool, d):
    """Rewrites the variant with `annotate` and with `expand`, then that with `implicit`, and
    runs each under ORT on the same feeds (an annotation ORT's inference contradicts fails
    there): (verdict, detail), REWRITE-DIFF where an output differs from the
    original's (floats by over 1e-5, 1e-2 in a graph with float16) and the original run again
    does not (else ort-nondeterministic), REWRITE-FAIL where a rewrite is refused or ORT
    refuses it, else pass."""
    os.makedirs(d, exist_ok=True)
    half = any(isinstance(v, np.ndarray) and v.dtype == np.float16 for v, _ in got.values())
    for cmd in ("annotate", "expand", "implicit"):
        src = os.path.join(d, "expand.onnx") if cmd == "implicit" else path
        dst = os.path.join(d, f"{cmd}.onnx")
        args = [binary, cmd, src, "-o", dst]
        for k, v in dims.items():
            if cmd != "implicit":
                args += ["--dim", f"{k}={v}"]
        p, why = run_bin(args, 60)
        if why:
            return "CRASH", f"{cmd}: {why}\n{p.stderr[-2000:] if p else ''}"
        if p.returncode != 0:
            return "REWRITE-FAIL", f"{cmd}: exit {p.returncode}: {p.stderr.strip()[-1500:]}"
        res, err = pool.submit(run_ort, dst, feeds).result(timeout=120)  # a death: the caller's
        if res is None:
            return "REWRITE-FAIL", f"{cmd}: ORT refuses the rewrite: {err.strip()[:1500]}"
        for name, (want, _) in got.items():
            have = res.get(name, (None, None))[0]
            if not isinstance(want, np.ndarray) or want.dtype == object:
                continue
            # Floats within a tolerance: ORT's kernels special-case a broadcast scalar (Pow by 3
            # multiplies, a float16 Mul by a scalar is not always rounded exactly, and what is
            # computed from it, float32 after a Cast too).
            diff = first_difference(have, want, 1e-2 if half else 1e-5)
            if diff:
                # ORT leaves some outputs partly unwritten (RotaryEmbedding of an odd head size):
                # the original run again is then not the same either.
                again = pool.submit(run_ort, path, feeds).result(timeout=120)[0] or {}
                if first_difference(again.get(name, (None,))[0], want, 0):
                    return "ort-nondeterministic", ""
                return "REWRITE-DIFF", f"{cmd}: {name}: {diff} (the original's)"
    return "pass", ""


def compare(ours, ort_out):
    """Differences between our tensors and ORT's outputs: list of (tensor, text)."""
    diffs = []
    for name, (val, dtype) in ort_out.items():
        t = ours["tensors"].get(name)
        if t is None or not isinstance(val, np.ndarray):
            continue
        if t["dtype"] is not None and dtype and t["dtype"] != dtype:
            diffs.append((name, f"{name}: dtype ours {t['dtype']} ORT {dtype}"))
        sh = t["shape"]
        if sh is None:
            continue
        if len(sh) != val.ndim:
            diffs.append((name, f"{name}: ours {sh} ORT {list(val.shape)}"))
            continue
        if any(isinstance(d, int) and d != v for d, v in zip(sh, val.shape)):
            diffs.append((name, f"{name}: ours {sh} ORT {list(val.shape)}"))
    return diffs


def fully_known(ours, model):
    """Whether we give every output a shape of numbers: a size we name by a fresh symbol
    (`?7`, from values only known at run time) is not known."""
    for o in model.graph.output:
        t = ours["tensors"].get(o.name)
        if t is None or t["shape"] is None or any(not isinstance(d, int) for d in t["shape"]):
            return False
    return True


# Ops the registry ships that no node case uses: (op, domain, opset, float inputs, attributes).
F, ML = onnx.TensorProto.FLOAT, "ai.onnx.ml"
UNTESTED = [
    ("RandomNormal", "", 15, [], {"shape": [2, 3]}),
    ("RandomUniform", "", 15, [], {"shape": [0, 4], "dtype": onnx.TensorProto.DOUBLE}),
    ("RandomNormalLike", "", 15, [[3, 0, 2]], {}),
    ("Multinomial", "", 15, [[3, 5]], {"sample_size": 4}),
    ("GlobalLpPool", "", 2, [[2, 3, 4, 5]], {}),
    ("MaxRoiPool", "", 1, [[1, 3, 8, 8], [2, 5]], {"pooled_shape": [2, 3]}),
    ("Scaler", ML, 1, [[3, 4]], {"scale": [2.0], "offset": [1.0]}),
    ("Normalizer", ML, 1, [[3, 4]], {"norm": "L2"}),
    ("Normalizer", ML, 1, [[4]], {"norm": "MAX"}),
    ("LinearRegressor", ML, 1, [[3, 4]], {"coefficients": [1.0] * 8, "targets": 2}),
    ("Imputer", ML, 1, [[3, 4]], {"imputed_value_floats": [0.0], "replaced_value_float": 1.0}),
    ("FeatureVectorizer", ML, 1, [[3, 2], [3, 4]], {"inputdimensions": [2, 4]}),
    ("OneHotEncoder", ML, 1, [[3, 2]], {"cats_int64s": [1, 2, 3]}),
]


# onnxruntime's contrib ops as deployed graphs use them: one valid base model each (op,
# inputs as (name, shape, element type), attributes), mutated like the node cases (--contrib).
U8, I8, I16, I32, I64, BOOL = (onnx.TensorProto.UINT8, onnx.TensorProto.INT8, onnx.TensorProto.INT16,
                               onnx.TensorProto.INT32, onnx.TensorProto.INT64, onnx.TensorProto.BOOL)
NCHWC = {"domain": "com.microsoft.nchwc"}
QPARAMS = [("xs", [], F), ("xz", [], U8), ("ys", [], F), ("yz", [], U8)]
CONTRIB = [
    ("BiasGelu", [("a", [2, 3, 4], F), ("b", [4], F)], {}),
    ("FastGelu", [("x", [2, 3, 4], F), ("b", [4], F)], {}),
    ("QuickGelu", [("x", [2, 3, 4], F)], {}),
    ("BiasAdd", [("x", [2, 3, 4], F), ("b", [4], F), ("s", [2, 3, 4], F)], {}),
    ("SkipLayerNormalization", [("x", [2, 3, 4], F), ("s", [2, 3, 4], F), ("g", [4], F), ("b", [4], F)], {}),
    ("SkipSimplifiedLayerNormalization", [("x", [2, 3, 4], F), ("s", [1, 3, 4], F), ("g", [4], F)], {}),
    ("FusedMatMul", [("a", [2, 3, 4], F), ("b", [4, 5], F)], {}),
    ("FusedMatMul", [("a", [2, 4, 3], F), ("b", [2, 5, 4], F)], {"transA": 1, "transB": 1}),
    ("Attention", [("x", [2, 3, 8], F), ("w", [8, 24], F), ("b", [24], F)], {"num_heads": 2}),
    ("Attention", [("x", [2, 3, 8], F), ("w", [8, 24], F), ("b", [24], F), ("m", [2, 3], I32)], {"num_heads": 2}),
    ("MultiHeadAttention", [("q", [2, 3, 8], F), ("k", [2, 5, 8], F), ("v", [2, 5, 6], F)], {"num_heads": 2}),
    ("RotaryEmbedding", [("x", [2, 3, 8], F), ("p", [2, 3], I64), ("c", [16, 2], F), ("s", [16, 2], F)],
     {"num_heads": 2}),
    ("EmbedLayerNormalization", [("i", [2, 3], I32), ("t", [2, 3], I32), ("w", [10, 8], F), ("p", [16, 8], F),
                                 ("e", [2, 8], F), ("g", [8], F), ("b", [8], F)], {"outputs": 2}),
    ("QLinearAdd", [("a", [2, 3], U8), ("as", [], F), ("az", [], U8), ("b", [3], U8), ("bs", [], F), ("bz", [], U8),
                    ("cs", [], F), ("cz", [], U8)], {}),
    ("QLinearSoftmax", [("x", [2, 3], U8), ("xs", [], F), ("xz", [], U8), ("ys", [], F), ("yz", [], U8)],
     {"opset": 13, "values": {"xs": np.array(0.1, np.float32)}}),
    ("QLinearGlobalAveragePool", [("x", [1, 2, 3, 3], U8), ("xs", [], F), ("xz", [], U8), ("ys", [], F),
                                  ("yz", [], U8)],
     {"channels_last": 0, "values": {"xs": np.array(0.1, np.float32), "ys": np.array(0.1, np.float32)}}),
    ("DynamicQuantizeMatMul", [("a", [2, 4], F), ("b", [4, 3], I8), ("bs", [1], F), ("bz", [1], I8), ("bias", [3], F)],
     {}),
    ("MatMulIntegerToFloat", [("a", [2, 4], U8), ("b", [4, 3], U8), ("as", [1], F), ("bs", [1], F)], {}),
    ("QGemm", [("a", [2, 4], U8), ("as", [], F), ("az", [], U8), ("b", [4, 3], U8), ("bs", [], F), ("bz", [], U8)],
     {}),
    ("MatMulNBits", [("a", [2, 40], F), ("b", [8, 2, 16], U8), ("s", [16], F)],
     {"K": 40, "N": 8, "bits": 4, "block_size": 32}),
    ("FusedGemm", [("a", [3, 4], F), ("b", [4, 5], F), ("c", [5], F)], {"activation": "Relu"}),
    ("TransposeMatMul", [("a", [4, 3], F), ("b", [4, 5], F)], {"transA": 1}),
    ("MatMulInteger16", [("a", [2, 3, 4], I16), ("b", [4, 5], I16)], {}),
    ("NhwcMaxPool", [("x", [1, 5, 6, 3], U8)], {"kernel_shape": [2, 2]}),
    ("QLinearAveragePool", [("x", [1, 5, 6, 3], U8)] + QPARAMS, {"kernel_shape": [2, 2], "channels_last": 1}),
    ("QLinearConv", [("x", [1, 6, 7, 2], U8), ("xs", [], F), ("xz", [], U8), ("w", [4, 2, 3, 3], U8), ("ws", [], F),
                     ("wz", [], U8), ("ys", [], F), ("yz", [], U8)], {"kernel_shape": [3, 3], "channels_last": 1}),
    ("QLinearWhere", [("c", [2, 1], BOOL), ("x", [1, 3], U8), ("xs", [], F), ("xz", [], U8), ("x2", [2, 3], U8),
                      ("ys", [], F), ("yz", [], U8), ("zs", [], F), ("zz", [], U8)], {}),
    ("GatherBlockQuantized", [("d", [5, 16], U8), ("i", [2, 3], I64), ("s", [5, 2], F)], {"block_size": 16}),
    ("ExpandDims", [("x", [2, 3], F), ("a", [], I32)], {}),
    ("CDist", [("a", [3, 4], F), ("b", [5, 4], F)], {}),
    ("Unique", [("x", [5], F)], {"outputs": 3}),
    ("GridSample", [("x", [1, 2, 5, 6], F), ("g", [1, 3, 4, 2], F)], {}),
    ("MaxpoolWithMask", [("x", [1, 2, 5, 6], F), ("m", [1, 2, 5, 6], I32)], {"kernel_shape": [2, 2]}),
    ("Pad", [("x", [2, 3], F), ("p", [4], I64)], {}),
    ("MoE", [("x", [5, 8], F), ("r", [5, 4], F), ("w1", [4, 8, 16], F), ("b1", [4, 16], F), ("w2", [4, 16, 8], F)],
     {"k": 1}),
    ("NGramRepeatBlock", [("i", [2, 5], I64), ("s", [2, 10], F)], {"ngram_size": 2}),
    ("UnfoldTensor", [("x", [2, 7, 4], F)], {"dim": 1, "size": 3, "step": 2}),
    ("WordConvEmbedding", [("s", [2, 3, 4], I32), ("w", [5, 1, 2, 6], F), ("b", [5], F), ("c", [10, 6], F)], {}),
    ("MatMulBnb4", [("a", [2, 3, 16], F), ("b", [64], U8), ("m", [8], F)],
     {"K": 16, "N": 8, "block_size": 16, "quant_type": 1}),
    ("DecoderMaskedMultiHeadAttention", [("q", [2, 1, 8], F), ("k", [2, 1, 8], F), ("v", [2, 1, 8], F)], {"num_heads": 2}),
    ("GatherND", [("x", [2, 3, 4], F), ("i", [5, 2], I64)], {}),
    ("MurmurHash3", [("x", [2, 3], I32)], {}),
    ("CausalConvWithState", [("x", [2, 8, 5], F), ("w", [8, 1, 3], F), ("b", [8], F), ("s", [2, 8, 2], F)],
     {"activation": "silu", "outputs": 2}),
    ("CausalConvWithState", [("x", [2, 5, 2, 4], F), ("w", [8, 1, 3], F), ("b", [8], F), ("s", [2, 4, 2, 4], F)],
     {"channels_last": 1, "dilation": 2, "outputs": 2}),
    ("LinearAttention", [("q", [2, 5, 6], F), ("k", [2, 5, 6], F), ("v", [2, 5, 24], F), ("s", [2, 4, 3, 6], F),
                         ("g", [2, 5, 4], F), ("b", [2, 5, 1], F)], {"q_num_heads": 2, "kv_num_heads": 4, "outputs": 2}),
    ("LinearAttention", [("q", [2, 5, 12], F), ("k", [2, 5, 6], F), ("v", [2, 5, 12], F), ("s", [2, 2, 3, 6], F),
                         ("g", [2, 5, 6], F)], {"q_num_heads": 4, "kv_num_heads": 2, "update_rule": "gated", "outputs": 2}),
    ("LinearAttentionGate", [("a", [2, 5, 4], F), ("d", [4], F), ("e", [4], F), ("b", [2, 5, 4], F)], {"outputs": 2}),
    ("GatedRMSNorm", [("x", [2, 5, 64], F), ("s", [16], F), ("g", [2, 5, 64], F)], {"activation": "sigmoid"}),
    ("GatedAdd", [("x", [2, 5, 8], F), ("x2", [2, 5, 8], F), ("g", [2, 5, 1], F)], {}),
    ("DynamicTimeWarping", [("x", [4, 6], F)], {}),
    ("BranchwiseRMSNorm", [("x", [2, 3, 4], F), ("s", [3, 4], F)], {}),
    ("BranchwiseRMSNorm", [("x", [2, 12], F), ("s", [4], F)], {"num_branches": 3}),
    ("GatedDeltaNet", [("q", [6, 2, 8], F), ("k", [6, 2, 8], F), ("v", [6, 4, 5], F), ("c", [3], I32), ("d", [6, 4], F),
                       ("b", [6, 4], F), ("s", [2, 4, 5, 8], F)], {"outputs": 2, "values": {"c": np.array([0, 2, 6], np.int32)}}),
    ("GatedDeltaNet", [("q", [2, 3, 2, 8], F), ("k", [2, 3, 2, 8], F), ("v", [2, 3, 4, 5], F)], {"update_rule": "linear", "outputs": 2}),
    ("ImageScaler", [("x", [1, 3, 4, 5], F)], {"bias": [1.0, 2.0, 3.0], "scale": 2.0, "domain": ""}),
    ("Crop", [("x", [1, 3, 10, 12], F)], {"border": [1, 2, 3, 4], "domain": ""}),
    ("Crop", [("x", [1, 3, 10, 12], F)], {"border": [1, 2, 3, 4], "scale": [5, 6], "domain": ""}),
    ("DynamicSlice", [("x", [4, 6], F), ("s", [2], I64), ("e", [2], I64)],
     {"values": {"s": np.array([1, 2], np.int64), "e": np.array([3, 5], np.int64)}, "domain": ""}),
    ("ScaledTanh", [("x", [2, 3], F)], {"alpha": 1.0, "beta": 2.0, "domain": ""}),
    ("Conv", [("x", [1, 16, 6, 6], F), ("w", [16, 16, 3, 3], F), ("b", [16], F)], {"kernel_shape": [3, 3], **NCHWC}),
    ("MaxPool", [("x", [1, 16, 6, 6], F)], {"kernel_shape": [2, 2], **NCHWC}),
    ("GlobalAveragePool", [("x", [1, 16, 6, 6], F)], NCHWC),
    ("ReorderInput", [("x", [1, 16, 4, 4], F)], NCHWC),
    ("ReorderOutput", [("x", [1, 16, 4, 4], F)], {"channels": 8, **NCHWC}),
    ("Upsample", [("x", [1, 16, 3, 3], F)], {"scales": [1, 1, 2, 2], **NCHWC}),
]


def gpt_decoder():
    """The smallest decoder onnxruntime's GPT-2 subgraph check takes: logits [B, S, 10] =
    Gather(E, input_ids), one layer's past passed through as present."""
    h = onnx.helper
    past = [2, "B", 1, "P", 1]
    ins = [h.make_tensor_value_info("input_ids", I32, ["B", "S"]), h.make_tensor_value_info("position_ids", I32, ["B", "S"]),
           h.make_tensor_value_info("attention_mask", I32, ["B", "T"]), h.make_tensor_value_info("past_0", F, past)]
    outs = [h.make_tensor_value_info("logits", F, ["B", "S", 10]), h.make_tensor_value_info("present_0", F, past)]
    nodes = [h.make_node("Gather", ["E", "input_ids"], ["logits"]), h.make_node("Identity", ["past_0"], ["present_0"])]
    return h.make_graph(nodes, "decoder", ins, outs, [numpy_helper.from_array(np.full((10, 10), 0.1, np.float32), "E")])


# Contrib ops the deployed models hold (onnxruntime's optimizer and quantizer write them).
CONTRIB += [
    ("FusedConv", [("x", [1, 2, 5, 5], F), ("w", [3, 2, 3, 3], F), ("b", [3], F)],
     {"kernel_shape": [3, 3], "activation": "Relu"}),
    ("Gelu", [("x", [2, 3, 4], F)], {}),
    ("AveragePool", [("x", [1, 16, 5, 5], F)], {**NCHWC, "kernel_shape": [2, 2]}),
    ("QAttention", [("x", [2, 3, 8], U8), ("w", [8, 24], U8), ("b", [24], F), ("xs", [], F), ("ws", [], F),
                    ("m", [2], I32), ("xz", [], U8), ("wz", [], U8)],
     {"num_heads": 2, "values": {"m": np.array([3, 2], np.int32)}}),
    ("QLinearConcat", [("ys", [], F), ("yz", [], U8), ("a", [2, 3], U8), ("as", [], F), ("az", [], U8),
                       ("b", [2, 4], U8), ("bs", [], F), ("bz", [], U8)], {"axis": 1}),
    ("QEmbedLayerNormalization", [("i", [2, 3], I32), ("t", [2, 3], I32), ("w", [10, 8], U8), ("p", [16, 8], U8),
                                  ("s", [2, 8], U8), ("g", [8], U8), ("b", [8], U8), ("m", [2, 3], I32),
                                  ("ws", [], F), ("ps", [], F), ("ss", [], F), ("gs", [], F), ("bs", [], F),
                                  ("wz", [], U8), ("pz", [], U8), ("sz", [], U8), ("gz", [], U8), ("bz", [], U8)],
     {"outputs": 2}),
    # A step of 3 new tokens after 2 held (a batch of 1, as onnxruntime takes several new
    # tokens over a past): seqlens_k (the last index) and the total length must agree with the
    # shapes, so they are given.
    ("GroupQueryAttention", [("q", [1, 3, 32], F), ("k", [1, 3, 16], F), ("v", [1, 3, 16], F), ("pk", [1, 2, 2, 8], F),
                             ("pv", [1, 2, 2, 8], F), ("sl", [1], I32), ("tl", [], I32)],
     {"num_heads": 4, "kv_num_heads": 2, "outputs": 3,
      "values": {"sl": np.array([4], np.int32), "tl": np.array(5, np.int32)}}),
    ("DynamicQuantizeLSTM", [("x", [5, 2, 3], F), ("W", [1, 3, 16], I8), ("R", [1, 4, 16], I8), ("B", [1, 32], F),
                             ("sl", [2], I32), ("ih", [1, 2, 4], F), ("ic", [1, 2, 4], F), ("P", [1, 12], F),
                             ("ws", [1], F), ("wz", [1], I8), ("rs", [1], F), ("rz", [1], I8)],
     {"hidden_size": 4, "outputs": 3, "values": {"sl": np.array([5, 3], np.int32)}}),
]
GENERATE = {"decoder": gpt_decoder(), "eos_token_id": 9, "pad_token_id": 0, "model_type": 0}
LENGTHS = {"ml": np.array([6], np.int32), "mn": np.array([1], np.int32), "rp": np.array([1.0], np.float32)}
CONTRIB += [
    ("BeamSearch", [("ids", [2, 3], I32), ("ml", [1], I32), ("mn", [1], I32), ("nb", [1], I32), ("nr", [1], I32),
                    ("lp", [1], F), ("rp", [1], F), ("vm", [10], I32), ("pm", [2, 10], I32), ("am", [2, 3], I32)],
     {**GENERATE, "outputs": 3, "values": {**LENGTHS, "nb": np.array([3], np.int32), "nr": np.array([2], np.int32),
                                           "lp": np.array([1.0], np.float32)}}),
    ("GreedySearch", [("ids", [2, 3], I32), ("ml", [1], I32), ("mn", [1], I32), ("rp", [1], F), ("vm", [10], I32),
                      ("pm", [2, 10], I32), ("am", [2, 3], I32)], {**GENERATE, "values": LENGTHS}),
    ("Sampling", [("ids", [2, 3], I32), ("ml", [1], I32), ("mn", [1], I32), ("rp", [1], F), ("vm", [10], I32),
                  ("pm", [2, 10], I32), ("am", [2, 3], I32), ("sm", [2, 10], I32)], {**GENERATE, "values": LENGTHS}),
]


def contrib_cases(np_rng):
    """The CONTRIB rows as {name: (model, inputs, op)}."""
    h = onnx.helper
    table = {}
    for k, (op, ins, attrs) in enumerate(CONTRIB):
        names = [n for n, _, _ in ins]
        attrs = dict(attrs)
        domain = attrs.pop("domain", "com.microsoft")
        outs = ["y"] + [f"y{i}" for i in range(1, attrs.pop("outputs", 1))]
        given = attrs.pop("values", {})
        node = h.make_node(op, names, outs, domain=domain, **attrs)
        g = h.make_graph([node], op, [h.make_tensor_value_info(n, t, s) for n, s, t in ins],
                         [onnx.ValueInfoProto(name=o) for o in outs])
        # onnx's experimental ops (domain "") exist up to opset 9.
        ids = [("", 9)] if domain == "" else [("", 17), (domain, 1)]
        m = h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in ids], ir_version=8)
        arrays = [given[n] if n in given else np_rng.standard_normal(s).astype(np.float32) if t == F
                  else np.zeros(s, h.tensor_dtype_to_np_dtype(t)) for n, s, t in ins]
        table[f"{op}.{k}"] = (m, arrays, op)
    return table


def untested(binary, out):
    """One model per UNTESTED row through ORT and us; prints and counts the verdicts."""
    summary = collections.Counter()
    tmp = os.path.join(out, "current.onnx")
    for op, domain, opset, shapes, attrs in UNTESTED:
        names = [f"x{i}" for i in range(len(shapes))]
        node = onnx.helper.make_node(op, names, ["y"], domain=domain or None, **attrs)
        g = onnx.helper.make_graph([node], op, [onnx.helper.make_tensor_value_info(n, F, s) for n, s in zip(names, shapes)],
                                   [onnx.ValueInfoProto(name="y")])
        ids = [(domain, opset), ("", 15)] if domain else [("", opset)]
        imports = [onnx.helper.make_opsetid(d, v) for d, v in ids]
        onnx.save(onnx.helper.make_model(g, opset_imports=imports, ir_version=8), tmp)
        feeds = {n: np.random.default_rng(0).random(s).astype(np.float32) for n, s in zip(names, shapes)}
        got, err = run_ort(tmp, feeds)
        ours, crash, stderr = run_ours(binary, tmp, {})
        if crash and crash != "exit 2":
            verdict, detail = "CRASH", crash
        elif got is None:
            verdict, detail = "ort-failed", err.strip()[:200]
        elif crash:
            verdict, detail = "FALSE-ALARM", stderr.strip()[:200]
        else:
            errs = [d["message"] for d in ours["diagnostics"] if d["severity"] == "error"]
            diffs = [t for _, t in compare(ours, got)]
            verdict = "WRONG" if diffs else "FALSE-ALARM" if errs else "pass"
            detail = "; ".join(diffs or errs) or f"y {ours['tensors']['y']['shape']} = ORT {list(got['y'][0].shape)}"
        summary[verdict] += 1
        print(f"{verdict:12} {op} {shapes} {attrs}: {detail}"[:300])
    print(dict(summary))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "onnx-bcast"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=0, help="cases to sample (0: all)")
    ap.add_argument("--variants", type=int, default=6, help="variants per case")
    ap.add_argument("--op", action="append", default=[], help="only cases using this op")
    ap.add_argument("--case", action="append", default=[], help="only this case (substring)")
    ap.add_argument("--sym", action="store_true", help="declare some variants' dims as symbols")
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "ort-diff"))
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--untested", action="store_true", help="check the shipped ops no node case uses")
    ap.add_argument("--contrib", action="store_true", help="mutate the CONTRIB models instead of the node cases")
    ap.add_argument("--sweep", type=int, help="in place of random variants, each dim of each data input set "
                    "to this size in turn (0: the empty sizes)")
    ap.add_argument("--rewrite", action="store_true", help="also rewrite each variant ORT ran with expand, "
                    "then implicit, and compare ORT's outputs on each")
    ap.add_argument("--exec", action="store_true", help="also run each variant ORT ran on our executor "
                    "(`run`) and compare the outputs")
    ap.add_argument("--sweep-sym", action="store_true", help="in place of random variants, each dim of each data "
                    "input declared as a symbol no --dim binds, in turn, then all of them at once")
    ap.add_argument("--attrs", nargs="?", const="ints", choices=["ints", "floats", "strings", "choices", "drop", "omit", "outputs"],
                    help="in place of random variants, change each node's attributes, inputs or outputs "
                    "(see attr_variants): ints (the default), floats, strings, choices, drop, omit or outputs")
    ap.add_argument("--opsets", action="store_true", help="in place of random variants, each earlier opset "
                    "at which an op of the case had another schema and the case still passes onnx's checker; "
                    "with --attrs, --sweep or --sweep-sym, each of their variants at each such opset")
    a = ap.parse_args()
    if a.untested:
        os.makedirs(a.out, exist_ok=True)
        return untested(a.bin, a.out)

    load = load_case
    if a.contrib:
        table = contrib_cases(np.random.default_rng(a.seed))
        cases = [{"name": n, "ops": [op]} for n, (_, _, op) in table.items()]
        load = lambda name: table[name][:2]  # noqa: E731
    else:
        with open(os.path.join(NODE, "manifest.json")) as f:
            cases = json.load(f)["cases"]
        cases = [c for c in cases if c.get("has_data")]
    if a.op:
        cases = [c for c in cases if set(a.op) & set(c["ops"])]
    if a.case:
        cases = [c for c in cases if any(s in c["name"] for s in a.case)]
    rng = random.Random(a.seed)
    np_rng = np.random.default_rng(a.seed)
    if a.count:
        cases = rng.sample(cases, min(a.count, len(cases)))
    os.makedirs(a.out, exist_ok=True)
    # A copy of the binary, so that a build during the run does not pull it away.
    binary = shutil.copy2(a.bin, os.path.join(a.out, "onnx-bcast"))
    tmp = os.path.join(a.out, "current.onnx")
    pool = ProcessPoolExecutor(1)  # ORT in a process of its own: some models abort it
    summary = collections.Counter()
    by_op = collections.defaultdict(collections.Counter)
    attrs_seen = set()
    total = 0
    for c in cases:
        try:
            model, ins = load(c["name"])
        except Exception:
            continue
        if ins is None:
            summary["skip"] += 1
            continue
        driving = shape_slots(model)
        producer = {o: n.op_type for n in model.graph.node for o in n.output}
        op = c["ops"][0] if len(c["ops"]) == 1 else "(multi-node)"
        names = [i.name for i in model.graph.input]
        data = [i for i, x in enumerate(ins) if names[i] not in driving]
        sweep = [(i, k) for i in data for k in range(ins[i].ndim) if ins[i].shape[k] != a.sweep]
        if a.sweep_sym:
            sweep = [{i: {k}} for i, k in sweep] + [{i: set(range(ins[i].ndim)) for i in data}]
            if driving:
                # And every input, the driving ones fed at run time: their values unseen too.
                sweep.append({i: set(range(x.ndim)) for i, x in enumerate(ins)})
        free = None
        opsets = older_opsets(model) if a.opsets else []
        attrs = attr_variants(model, attrs_seen, a.attrs) if a.attrs and not a.opsets else []
        if a.opsets and a.attrs:
            # Both: each attribute change, at each earlier opset, under that opset's schema.
            plan = []
            for o in opsets:
                m = copy.deepcopy(model)
                for x in m.opset_import:
                    if x.domain in ("", "ai.onnx"):
                        x.version = o
                plan += [(o, change) for change in attr_variants(m, attrs_seen, a.attrs)]
            opsets, attrs = [o for o, _ in plan], [change for _, change in plan]
        swept = a.sweep is not None or a.sweep_sym
        if a.opsets and swept:
            # Both: each swept size (or symbol) at each earlier opset.
            sweep, opsets = [x for _ in opsets for x in sweep], [o for o in opsets for _ in sweep]
        count = (len(sweep) if swept else len(attrs) if a.attrs
                 else len(opsets) if a.opsets else a.variants)
        for v in range(count):
            shapes = [list(x.shape) for x in ins]
            values = {}
            what = []
            if a.sweep_sym:
                free = sweep[v]
                values = {n: ins[j] for j, n in enumerate(names) if n in driving and j not in free}
                what.append("symbols " + " ".join(f"in{i}{sorted(ks)}" for i, ks in free.items()))
            elif a.sweep is not None:
                i, k = sweep[v]
                shapes[i][k] = a.sweep
                values = {n: ins[j] for j, n in enumerate(names) if n in driving}
                what.append(f"dim in{i}[{k}]={a.sweep}")
            elif a.opsets or a.attrs:
                values = {n: ins[j] for j, n in enumerate(names) if n in driving}
                if a.attrs:
                    what.append("attr {1}={2} on node {0}".format(*attrs[v]))
            elif driving and rng.random() < 0.5:
                for i, n in enumerate(names):
                    if n in driving:
                        values[n] = mutate_values(rng, ins[i], c["ops"][0]) if rng.random() < 0.7 else ins[i]
                what.append("values " + " ".join(f"{k}={values[k].tolist()}" for k in values))
                if rng.random() < 0.5:
                    shapes, w = mutate_dims(rng, shapes)
                    what.append(w)
            else:
                values = {n: ins[i] for i, n in enumerate(names) if n in driving}
                shapes, w = mutate_dims(rng, shapes)
                what.append(w)
            if a.opsets:
                what.insert(0, f"opset {opsets[v]}")
            # Only the data inputs' shapes move; driving inputs take their (mutated) values.
            shapes = [list(values[n].shape) if n in values else s for n, s in zip(names, shapes)]
            if any(int(np.prod(s)) > MAX_ELEMS for s in shapes):
                continue
            same = (a.opsets or a.attrs) and not swept
            feeds = {n: ins[i] if n in driving or same else random_input(rng, np_rng, ins[i], shapes[i])
                     for i, n in enumerate(names) if n not in values}
            sym = a.sym and rng.random() < 0.3
            vm, dims = build(model, shapes, values, sym, free)
            for o in vm.opset_import:
                if a.opsets and o.domain in ("", "ai.onnx"):
                    o.version = opsets[v]
            if a.attrs:
                k, name, value = attrs[v]
                node = vm.graph.node[k]
                kept = [x for x in node.attribute if x.name != name]
                del node.attribute[:]
                kind = None
                if name in ("#output", "#input"):
                    # A slot left empty, or dropped when last (and no longer a graph output).
                    slots = node.output if name == "#output" else node.input
                    gone = [o for o in vm.graph.output if name == "#output" and o.name == slots[value]]
                    for o in gone:
                        vm.graph.output.remove(o)
                    given = list(slots)
                    given[value] = ""
                    while given and not given[-1]:
                        given.pop()
                    del slots[:]
                    slots.extend(given)
                    what[-1] = f"{name[1:]} {value} left out on node {k}"
                    node.attribute.extend(kept)
                    value = None
                elif value is None:
                    node.attribute.extend(kept)
                    what[-1] = f"attr {name} left out on node {k}"
                elif isinstance(value, list):
                    kind = onnx.AttributeProto.FLOATS if a.attrs == "floats" else onnx.AttributeProto.INTS
                if value is not None:
                    node.attribute.extend(kept + [onnx.helper.make_attribute(name, value, attr_type=kind)])
            onnx.save(vm, tmp)
            total += 1
            job = pool.submit(run_ort, tmp, feeds)
            ours, crash, stderr = run_ours(binary, tmp, dims)
            try:
                got, err = job.result(timeout=120)
            except Exception as e:  # noqa: BLE001 - ORT aborted or hung: restart its process
                stop(pool)
                pool = ProcessPoolExecutor(1)
                # A death names no node: a runtime-differs warning on any op counts.
                died = "ort-died"
                found = {d["code"]: d["severity"] for d in (ours or {}).get("diagnostics", [])}
                if "runtime-differs" in found:
                    died = "runtime-differs"
                elif "error" in found.values():
                    died = "pass"
                summary[died] += 1
                by_op[op][died] += 1
                if died == "ort-died":
                    print(f"ort-died     {op} {c['name']}: {'; '.join(what)} :: {e!r}"[:400])
                continue
            detail, key = "", op
            if crash and crash != "exit 2":
                verdict, detail = "CRASH", f"{crash}\n{stderr}"
            elif got is not None:
                if crash == "exit 2":
                    verdict, detail = "FALSE-ALARM", "exit 2: " + stderr
                else:
                    diffs = compare(ours, got)
                    errs = [d for d in ours["diagnostics"] if d["severity"] == "error"]
                    if diffs:
                        verdict, detail = "WRONG", "\n".join(t for _, t in diffs)
                        key = producer.get(diffs[0][0], key)
                        if any(d["code"] == "runtime-differs" and d["op_type"] == key for d in ours["diagnostics"]):
                            verdict = "runtime-differs"
                    elif errs:
                        verdict, detail = "FALSE-ALARM", "\n".join(d["message"] for d in errs)
                        key = errs[0]["op_type"] or key
                        if (sym or free) and concrete_refused(pool, model, shapes, values, feeds, tmp):
                            verdict = "ort-sym-lenient"
                    else:
                        verdict = "pass"
            elif any(s in err for s in UNSUPPORTED):
                verdict = "ort-unsupported"
            elif any(s in err for s in VALUE_ERRORS):
                verdict = "ort-value-error"
            elif crash == "exit 2":
                verdict = "pass"
            else:
                errs = [d for d in ours["diagnostics"] if d["severity"] == "error"]
                machine = any(d["code"] == "machine-dependent" for d in ours["diagnostics"])
                # The node that failed, at run time or in the load-time inference.
                m = re.search(r"running (\w+) node|Op \((\w+)\)", err)
                failing = m and (m.group(1) or m.group(2))
                warned = [d["op_type"] for d in ours["diagnostics"] if d["code"] == "runtime-differs"]
                # A kernel that refuses its attributes names no node, and a node of a function
                # body ORT expanded is of no op of the graph: a warning on any op counts.
                inside = failing and failing not in {n.op_type for n in vm.graph.node}
                if failing and not inside:
                    differs = failing in warned
                else:
                    differs = bool(warned) and (inside or "during initialization" in err)
                if machine:
                    verdict = "machine-dependent"
                elif differs:
                    verdict = "runtime-differs"
                elif not errs and fully_known(ours, vm):
                    verdict, detail = "MISSED", err.strip()[:1500]
                    m = re.search(r"Op \((\w+)\)|running (\w+) node", err)
                    key = (m.group(1) or m.group(2)) if m else key
                else:
                    verdict = "pass"
            if a.exec and verdict == "pass" and got is not None:
                names_out = [o.name for o in vm.graph.output]
                verdict, detail = run_exec(binary, tmp, feeds, got, names_out, os.path.join(a.out, "exec"))
            if a.rewrite and verdict == "pass" and got is not None and not (ours or {}).get("diagnostics"):
                try:
                    verdict, detail = run_rewrites(binary, tmp, dims, feeds, got, pool, os.path.join(a.out, "rewrite"))
                except Exception as e:  # noqa: BLE001 - the pool died
                    stop(pool)
                    pool = ProcessPoolExecutor(1)
                    verdict, detail = "REWRITE-FAIL", repr(e)
            summary[verdict] += 1
            by_op[key][verdict] += 1
            if verdict not in ("pass", "ort-unsupported", "ort-value-error", "ort-sym-lenient", "machine-dependent",
                               "runtime-differs", "exec-unsupported", "ort-nondeterministic"):
                d = os.path.join(a.out, verdict)
                os.makedirs(d, exist_ok=True)
                stem = os.path.join(d, f"{c['name']}.{a.seed}.{v}")
                onnx.save(vm, stem + ".onnx")
                inshapes = {n: list(f.shape) for n, f in feeds.items()}
                with open(stem + ".txt", "w") as f:
                    f.write(f"{c['name']} {'; '.join(what)}\ninputs {inshapes} dims {dims}\n{detail}\n")
                print(f"{verdict:12} {key} {c['name']}: {'; '.join(what)} :: {detail.splitlines()[0] if detail else ''}"[:400])
            elif a.verbose:
                print(f"{verdict:12} {key} {c['name']}: {'; '.join(what)}")
    stop(pool)
    print(f"\n{total} variants of {len(cases)} cases")
    for k, n in summary.most_common():
        print(f"  {k:16} {n}")
    print("\nby op (non-pass only):")
    for op, cnt in sorted(by_op.items()):
        bad = {k: n for k, n in cnt.items()
               if k not in ("pass", "ort-unsupported", "ort-value-error", "ort-sym-lenient", "exec-unsupported")}
        if bad:
            print(f"  {op:28} " + " ".join(f"{k}={n}" for k, n in sorted(bad.items())))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Oracle for the rewrites (issue 4), run by hand, never inside `cargo test`.

    cargo build && python3 scripts/check_rewrites.py [--bin target/debug/onnx-bcast] [--real DIR]...

For every broadcasting-family backend case (tests/data/node, manifest `broadcast_family`) and
every real model (models/*.onnx except broken.onnx, onnx's light and pytorch-converted models,
and any --real folder), it rewrites with `annotate` and with `expand` and checks:

  checker   onnx.checker.check_model(full_check=True) passes on both outputs;
  outputs   onnxruntime gives bit-identical outputs for the original and each rewrite on the same
            inputs (the case's input_*.pb, else deterministic random inputs); where onnxruntime
            cannot load the original (IR version 14, ...), onnx's ReferenceEvaluator runs both;
  judge     onnx's own shape inference (data propagation on) sees no broadcasting-family node,
            subgraphs included, whose input shapes differ from its output shape ("unknown" is
            counted apart: a shape onnx cannot infer is not a difference);
  idem      expand applied to its own output is byte-identical;
  implicit  implicit(expand(m)) has m's node count (models without Expand/Tile).

And the opset-6 legacy cases (tests/data/legacy) rewritten by `expand` must give their expected
outputs under ReferenceEvaluator (onnxruntime cannot run opset 6).

Prints one line per failure and a summary; exits 1 if anything failed.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILY = {
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "And", "Or", "Xor", "BitwiseAnd",
    "BitwiseOr", "BitwiseXor", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual",
    "Max", "Min", "Sum", "Mean", "Where", "PRelu",
}
SYM_SIZE = 3  # the size random inputs give a symbolic dim

warnings.filterwarnings("ignore")


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def rewrite(binary, cmd, src, dst):
    r = run([binary, cmd, src, "-o", dst])
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} exited {r.returncode}: {r.stderr.strip()[-400:]}")
    return r.stderr


def read_inputs(case_dir, model):
    data = os.path.join(case_dir, "test_data_set_0")
    files = sorted(glob.glob(os.path.join(data, "input_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
    if not files:
        return None
    init = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    types = {i.name: i.type for i in model.graph.input}
    feeds = {}
    for name, f in zip(names, files):
        with open(f, "rb") as fh:
            data = fh.read()
        kind = types[name].WhichOneof("value")
        if kind == "sequence_type":
            p = onnx.SequenceProto()
            p.ParseFromString(data)
            feeds[name] = numpy_helper.to_list(p)
        elif kind == "optional_type":
            p = onnx.OptionalProto()
            p.ParseFromString(data)
            feeds[name] = numpy_helper.to_optional(p)
        else:
            t = onnx.TensorProto()
            t.ParseFromString(data)
            feeds[name] = numpy_helper.to_array(t)
    return feeds


def random_inputs(model):
    rng = np.random.default_rng(0)
    init = {i.name for i in model.graph.initializer}
    feeds = {}
    for i in model.graph.input:
        if i.name in init:
            continue
        tt = i.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else SYM_SIZE for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if dtype == np.bool_:
            feeds[i.name] = rng.random(shape) < 0.5
        elif np.issubdtype(dtype, np.integer):
            feeds[i.name] = rng.integers(0, 5, size=shape).astype(dtype)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def ort_run(path, feeds, optimize=True):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    return names, s.run(None, feeds)


def ref_run(path, feeds):
    from onnx.reference import ReferenceEvaluator

    ev = ReferenceEvaluator(onnx.load(path))
    return list(ev.output_names), ev.run(None, feeds)


def bits(a):
    """A value's exact content: dtype, shape and bytes; sequences and optionals element-wise."""
    if a is None:
        return None
    if isinstance(a, (list, tuple)):
        return [bits(x) for x in a]
    a = np.asarray(a)
    if a.dtype == object:  # strings: compare the values, not the pointers
        return "O", a.shape, tuple(a.ravel().tolist())
    return a.dtype.str, a.shape, a.tobytes()


def compare(original, rewritten, feeds):
    """Runs both models on `feeds`; gives (engine, message or None)."""
    try:
        _, want = ort_run(original, feeds)
        engine = "ort"
        _, got = ort_run(rewritten, feeds)
    except Exception as e:  # onnxruntime cannot load it: the reference evaluator runs both
        if "engine" in locals():
            return "ort", f"onnxruntime ran the original but not the rewrite: {str(e)[:300]}"
        engine = "reference"
        try:
            _, want = ref_run(original, feeds)
        except Exception:  # e.g. a legacy opset-6 `axis` broadcast: no engine runs the original
            try:
                ref_run(rewritten, feeds)
            except Exception:
                return "unrunnable", None
            return "rewrite_only", None
        _, got = ref_run(rewritten, feeds)
    for k, (w, g) in enumerate(zip(want, got)):
        if bits(w) != bits(g):
            if engine == "ort":
                # onnxruntime's graph optimizer fuses patterns (attention, softmax, ...) in the
                # original that the explicit Expands break up: compare the plain kernels.
                _, want = ort_run(original, feeds, optimize=False)
                _, got = ort_run(rewritten, feeds, optimize=False)
                if all(bits(a) == bits(b) for a, b in zip(want, got)):
                    return "ort_unoptimized", None
            return engine, f"output {k} differs"
    return engine, None


def shape_of(vi):
    if vi is None or not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    out = []
    for d in vi.type.tensor_type.shape.dim:
        # `unk__N` is the name onnx's inference gives a size it does not know; a negative
        # dim_value (paddle2onnx writes -1 for "dynamic") is no size either.
        param = d.dim_param if d.dim_param and not d.dim_param.startswith("unk__") else None
        out.append(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else param)
    return out


def judge(path):
    """onnx's shape inference over the model: (family nodes seen, differing, unknown)."""
    m = shape_inference.infer_shapes(onnx.load(path), check_type=True, strict_mode=True, data_prop=True)
    seen = differ = unknown = 0
    bad = []

    def walk(g, outer):
        nonlocal seen, differ, unknown
        known = dict(outer)
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            known[vi.name] = vi
        for t in g.initializer:
            known[t.name] = onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
        for n in g.node:
            for a in n.attribute:
                subs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
                for sg in subs:
                    walk(sg, known)
            if n.op_type not in FAMILY or n.domain not in ("", "ai.onnx"):
                continue
            seen += 1
            out = shape_of(known.get(n.output[0]))
            ins = [shape_of(known.get(x)) for x in n.input if x]
            if out is None or any(s is None for s in ins) or None in out or any(None in s for s in ins):
                unknown += 1
                continue
            if any(s != out for s in ins):
                differ += 1
                bad.append(f"{n.name or n.op_type}: inputs {ins} output {out}")

    walk(m.graph, {})
    return seen, differ, unknown, bad


def node_count(path):
    def count(g):
        n = 0
        for node in g.node:
            n += 1
            for a in node.attribute:
                for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    n += count(sg)
        return n

    return count(onnx.load(path).graph)


def has_explicit(path):
    def walk(g):
        for n in g.node:
            if n.op_type in ("Expand", "Tile"):
                return True
            for a in n.attribute:
                for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    if walk(sg):
                        return True
        return False

    return walk(onnx.load(path).graph)


def deterministic(model_path, feeds):
    """False when the original itself gives different outputs on two runs (Bernoulli, ...)."""
    try:
        a = ort_run(model_path, feeds)[1]
        b = ort_run(model_path, feeds)[1]
    except Exception:
        try:
            a = ref_run(model_path, feeds)[1]
            b = ref_run(model_path, feeds)[1]
        except Exception:
            return True
    return all(bits(x) == bits(y) for x, y in zip(a, b))


def check_one(binary, name, model_path, feeds, tmp, stats, failures):
    model = onnx.load(model_path)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception:  # onnx rejects the original already: nothing to compare the rewrite to
        stats["original_fails_checker"] += 1
        return
    pre = run([binary, "check", model_path])
    if pre.returncode == 1:  # the pass finds an error in the model itself: rewrites refuse it
        stats["refused_with_findings"] += 1
        return
    if feeds is None:
        feeds = random_inputs(model)
    if not deterministic(model_path, feeds):
        stats["nondeterministic_original"] += 1
        return
    outs = {}
    for cmd in ("annotate", "expand"):
        dst = os.path.join(tmp, f"{name}.{cmd}.onnx")
        try:
            rewrite(binary, cmd, model_path, dst)
        except RuntimeError as e:
            failures.append(f"{name}: {e}")
            return
        outs[cmd] = dst
        try:
            onnx.checker.check_model(onnx.load(dst), full_check=True)
            stats["checker_ok"] += 1
        except Exception as e:
            failures.append(f"{name}: {cmd}: checker: {str(e)[:300]}")
        try:
            engine, msg = compare(model_path, dst, feeds)
            stats[f"run_{engine}"] += 1
            if msg:
                failures.append(f"{name}: {cmd}: {engine}: {msg}")
            else:
                stats["identical"] += 1
        except Exception as e:
            failures.append(f"{name}: {cmd}: could not run: {str(e)[:300]}")
    try:
        seen, differ, unknown, bad = judge(outs["expand"])
        stats["judge_nodes"] += seen
        stats["judge_unknown"] += unknown
        stats["judge_differ"] += differ
        for b in bad:
            failures.append(f"{name}: judge: {b}")
    except Exception as e:
        failures.append(f"{name}: judge: onnx shape inference failed: {str(e)[:300]}")
    again = os.path.join(tmp, f"{name}.expand2.onnx")
    try:
        rewrite(binary, "expand", outs["expand"], again)
        with open(outs["expand"], "rb") as a, open(again, "rb") as b:
            if a.read() == b.read():
                stats["idempotent"] += 1
            else:
                failures.append(f"{name}: expand is not idempotent")
    except RuntimeError as e:
        failures.append(f"{name}: expand twice: {e}")
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 21)
    if not has_explicit(model_path) and opset >= 7:
        back = os.path.join(tmp, f"{name}.implicit.onnx")
        try:
            rewrite(binary, "implicit", outs["expand"], back)
            stats["implicit_checked"] += 1
            want, got = node_count(model_path), node_count(back)
            if want == got:
                stats["implicit_ok"] += 1
            else:
                failures.append(f"{name}: implicit(expand(m)) has {got} nodes, m has {want}")
            engine, msg = compare(model_path, back, feeds)
            if msg:
                failures.append(f"{name}: implicit: {engine}: {msg}")
        except Exception as e:
            failures.append(f"{name}: implicit: {e}")


def variants(tmp):
    """Symbolic models whose sizes broadcast only at run time, with inputs that exercise it:
    two symbols meeting (b2 = 1 against batch = 3), an unknown size, a size of 0, opset 7 (Tile
    with run-time repeats) and an If whose branches broadcast."""
    from onnx import TensorProto, helper

    F = TensorProto.FLOAT
    rng = np.random.default_rng(1)
    out = []

    def model(name, nodes, inputs, outputs, opset, feeds, ir=8):
        g = helper.make_graph(nodes, name, inputs, outputs)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = ir
        p = os.path.join(tmp, f"variant_{name}.onnx")
        onnx.save(m, p)
        out.append((f"variant_{name}", p, feeds))

    def t(shape):
        return rng.standard_normal(shape).astype(np.float32)

    vi = helper.make_tensor_value_info
    for opset in (9, 13, 17):
        model(f"two_symbols_op{opset}",
              [helper.make_node("Add", ["x", "m"], ["s"], name="add"),
               helper.make_node("Mul", ["s", "w"], ["y"], name="mul")],
              [vi("x", F, ["batch", 4, "seq"]), vi("m", F, ["b2", 1, "seq"]), vi("w", F, ["seq"])],
              [vi("y", F, [None, 4, "seq"])], opset, {"x": t([3, 4, 5]), "m": t([1, 1, 5]), "w": t([5])})
        model(f"unknown_size_op{opset}",
              [helper.make_node("Sub", ["x", "m"], ["y"], name="sub")],
              [vi("x", F, [None, 4]), vi("m", F, [None, 1])], [vi("y", F, [None, 4])], opset,
              {"x": t([3, 4]), "m": t([1, 1])})
        model(f"zero_size_op{opset}",
              [helper.make_node("Add", ["x", "m"], ["y"], name="add")],
              [vi("x", F, ["n", 4]), vi("m", F, ["k", 4])], [vi("y", F, [None, 4])], opset,
              {"x": t([0, 4]), "m": t([1, 4])})
    model("tile_runtime_op7",
          [helper.make_node("Add", ["x", "m"], ["y"], name="add")],
          [vi("x", F, ["batch", 4]), vi("m", F, [1, 4])], [vi("y", F, ["batch", 4])], 7,
          {"x": t([3, 4]), "m": t([1, 4])}, ir=3)
    then_g = helper.make_graph([helper.make_node("Add", ["x", "b"], ["t"], name="then_add")], "then", [],
                               [vi("t", F, ["batch", 16])])
    else_g = helper.make_graph([helper.make_node("Where", ["c2", "x", "b"], ["e"], name="else_where")], "else",
                               [], [vi("e", F, ["batch", 16])])
    for c in (True, False):
        model(f"if_{c}",
              [helper.make_node("If", ["cond"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)],
              [vi("cond", TensorProto.BOOL, []), vi("x", F, ["batch", 16]), vi("b", F, [16]),
               vi("c2", TensorProto.BOOL, ["batch", 1])],
              [vi("y", F, ["batch", 16])], 17,
              {"cond": np.array(c), "x": t([2, 16]), "b": t([16]), "c2": rng.random([2, 1]) < 0.5})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/debug/onnx-bcast"))
    ap.add_argument("--real", action="append", default=[], help="a folder of extra real models (*.onnx)")
    ap.add_argument("--only", default=None, help="only cases whose name contains this")
    ap.add_argument("--all-node", action="store_true", help="every backend case, not only the family")
    ap.add_argument("--names", default=None, help="a file listing the backend cases to check (one a line)")
    args = ap.parse_args()
    from collections import Counter

    stats, failures = Counter(), []
    names = set(open(args.names).read().split()) if args.names else None
    onnx_data = os.path.join(os.path.dirname(onnx.__file__), "backend/test/data")
    with tempfile.TemporaryDirectory() as tmp:
        manifest = json.load(open(os.path.join(ROOT, "tests/data/node/manifest.json")))
        for c in manifest["cases"]:
            if not (c["broadcast_family"] or args.all_node) or (args.only and args.only not in c["name"]):
                continue
            if args.names and c["name"] not in names:
                continue
            d = os.path.join(ROOT, "tests/data/node", c["name"])
            model = os.path.join(d, "model.onnx")
            stats["family_cases" if c["broadcast_family"] else "other_cases"] += 1
            try:
                feeds = read_inputs(d, onnx.load(model))
            except Exception as e:
                failures.append(f"{c['name']}: could not read the inputs: {str(e)[:200]}")
                continue
            if feeds is None and not c["broadcast_family"]:
                stats["other_cases_without_data"] += 1
                continue
            check_one(args.bin, c["name"], model, feeds, tmp, stats, failures)

        real = [p for p in glob.glob(os.path.join(ROOT, "models/*.onnx")) if not p.endswith("broken.onnx")]
        real += sorted(glob.glob(os.path.join(onnx_data, "light/*.onnx")))
        real += sorted(glob.glob(os.path.join(onnx_data, "pytorch-converted/*/model.onnx")))
        for extra in args.real:
            real += sorted(glob.glob(os.path.join(extra, "**/*.onnx"), recursive=True))
        for p in real:
            name = os.path.relpath(p, onnx_data if p.startswith(onnx_data) else ROOT).replace("/", "_")
            if args.only and args.only not in name:
                continue
            stats["real_models"] += 1
            d = os.path.dirname(p)
            feeds = read_inputs(d, onnx.load(p)) if p.endswith("/model.onnx") else None
            check_one(args.bin, name, p, feeds, tmp, stats, failures)

        for name, p, feeds in variants(tmp):
            if args.only and args.only not in name:
                continue
            stats["variant_models"] += 1
            check_one(args.bin, name, p, feeds, tmp, stats, failures)

        from onnx.reference import ReferenceEvaluator

        legacy = json.load(open(os.path.join(ROOT, "tests/data/legacy/manifest.json")))
        for c in legacy["cases"]:
            d = os.path.join(ROOT, "tests/data/legacy", c["name"])
            src = os.path.join(d, "model.onnx")
            dst = os.path.join(tmp, c["name"] + ".expand.onnx")
            stats["legacy_cases"] += 1
            try:
                rewrite(args.bin, "expand", src, dst)
                onnx.checker.check_model(onnx.load(dst), full_check=True)
                feeds = read_inputs(d, onnx.load(src))
                got = ReferenceEvaluator(onnx.load(dst)).run(None, feeds)
                for k, g in enumerate(got):
                    t = onnx.TensorProto()
                    with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "rb") as fh:
                        t.ParseFromString(fh.read())
                    want = numpy_helper.to_array(t)
                    if want.shape != g.shape or not np.allclose(want, g, rtol=1e-6, atol=1e-7):
                        failures.append(f"{c['name']}: legacy: output {k} differs from the expected output")
                        break
                else:
                    stats["legacy_ok"] += 1
                    if all(bits(g) == bits(w) for g, w in [(got[0], want)]):
                        stats["legacy_bit_exact"] += 1
            except Exception as e:
                failures.append(f"{c['name']}: legacy: {str(e)[:300]}")

    for f in failures:
        print("FAIL", f)
    print(json.dumps(dict(sorted(stats.items())), indent=1))
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

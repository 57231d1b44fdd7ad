"""The rewrites on real models, against onnxruntime and the executor (run by hand; needs onnx,
onnxruntime, numpy, and the models scripts/real_models.py fetches):

    cargo build --release
    python3 scripts/rewrites_real.py [--only SUBSTRING] [--ort-all] [--bin target/release/onnx-bcast]

With --ort-all, on the models as onnxruntime saves them at ORT_ENABLE_ALL (NCHWc convolutions,
contrib ops; see real_models.py).

For every model of the real-model table (scripts/real_models.py), with the sizes that table
runs it at:

  expand    `expand --fix-declared` writes it (symbolic sizes kept); nodes it leaves implicit
            (where even an element type is unknown) are listed with the reason;
  valid     onnx.checker accepts the result (or refuses it as it refuses the original);
  outputs   onnxruntime (no graph optimization) gives bit-identical outputs for the original
            and the expanded model on the same inputs;
  explicit  in that run no broadcasting-family node of the main graph gets an input whose
            shape differs from its output's;
  verify    `onnx-bcast verify` passes on the expanded and on the annotated model, checking
            every site the rewrite changed (none left unrun).

Prints one row per model and exits 1 if anything failed.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_ort  # noqa: E402
import real_models  # noqa: E402

ROOT = os.path.dirname(HERE)
FAMILY = {
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "And", "Or", "Xor", "BitwiseAnd",
    "BitwiseOr", "BitwiseXor", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual",
    "Max", "Min", "Sum", "Mean", "Where", "PRelu",
}


def parse(args):
    dims, values, shapes = {}, {}, {}
    for a in args:
        k, v = a.split("=", 1)[1].split("=", 1) if a.count("=") == 2 else (None, None)
        if a.startswith("--dim="):
            dims[k] = int(v)
        elif a.startswith("--value="):
            values[k] = float(v)
        elif a.startswith("--shape="):
            shapes[k] = [int(x) for x in v.split(",") if x]
    return dims, values, shapes


def session(model):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return bool(np.array_equal(a.view(np.uint8), b.view(np.uint8)) or np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))


def family_shapes(model, feeds):
    """Family nodes of the main graph whose inputs' run-time shapes differ from the output's."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    present = {o.name for o in m.graph.output}
    names = []
    for n in m.graph.node:
        if n.op_type in FAMILY and n.domain in ("", "ai.onnx"):
            for v in list(n.input) + n.output[:1]:
                if v and v not in present and v not in names:
                    names.append(v)
    inits = {i.name for i in m.graph.initializer}
    for v in names:
        if v not in inits and v not in {i.name for i in m.graph.input}:
            m.graph.output.append(helper.make_empty_tensor_value_info(v))
    sess = session(m)
    outs = [o.name for o in sess.get_outputs()]
    shapes = dict(zip(outs, (np.asarray(x).shape for x in sess.run(outs, feeds))))
    shapes.update({i.name: tuple(i.dims) for i in m.graph.initializer})
    shapes.update({k: np.asarray(v).shape for k, v in feeds.items()})
    checked, differ = 0, []
    for n in model.graph.node:
        if n.op_type not in FAMILY or n.domain not in ("", "ai.onnx"):
            continue
        out = shapes.get(n.output[0])
        ins = [shapes.get(v) for v in n.input if v]
        if out is None or any(i is None for i in ins):
            continue
        checked += 1
        if any(i != out for i in ins):
            differ.append(f"{n.name or n.op_type}: {ins} -> {out}")
    return checked, differ


def verify(binary, original, rewritten, dims, shapes):
    args = [binary, "verify", original, rewritten]
    args += [f"--dim={k}={v}" for k, v in dims.items()]
    args += [f"--shape={k}={','.join(map(str, v))}" for k, v in shapes.items()]
    r = subprocess.run(args, capture_output=True, text=True)
    m = re.search(r"(\d+) sites? changed[^:]*: (\d+) identical, (\d+) differ, (\d+) not run", r.stdout)
    if r.returncode != 0 or not m:
        tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
        return None, f"verify exit {r.returncode}: {' | '.join(tail)}"
    changed, identical, differ, not_run = map(int, m.groups())
    whole = re.search(r"whole model: (.*)", r.stdout).group(1)
    bad = "" if differ == 0 and not_run == 0 else f"{differ} differ, {not_run} not run"
    return (changed, identical, whole), bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--ort-all", action="store_true", help="the models as onnxruntime optimizes them")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "onnx-bcast"))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rewrites_real")
    failures = 0
    print("| model | expand | valid | outputs | family nodes run / explicit | verify expand: sites checked | verify annotate: sites | whole model |")
    print("|---|---|---|---|---|---|---|---|")
    for path, args in real_models.table():
        if a.only not in path or not os.path.exists(path):
            continue
        if a.ort_all:
            path = real_models.ort_all(path)
        dims, values, shapes = parse(args)
        short = path.replace(real_models.CACHE + "/", "").replace(os.path.dirname(real_models.light_dir()) + "/", "")
        base = os.path.join(tmp, os.path.basename(path))
        exp, ann = base + ".expanded.onnx", base + ".annotated.onnx"
        problems = []
        r = subprocess.run([a.bin, "expand", path, "-o", exp, "--fix-declared"], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"| {short} | exit {r.returncode}: {r.stderr.strip()[-200:]} | | | | | | |")
            failures += 1
            continue
        made = re.search(r"(\d+) nodes? made explicit", r.stderr)
        skipped = r.stderr.count("expand-skipped")
        subprocess.run([a.bin, "annotate", path, "-o", ann, "--fix-declared"], capture_output=True, check=True)
        original, expanded = onnx.load(path), onnx.load(exp)
        try:
            onnx.checker.check_model(expanded)
            valid = "yes"
        except Exception as e:  # noqa: BLE001 - reported in the row.
            # onnxruntime's saved graphs can fail the checker themselves (its default-domain
            # SimplifiedLayerNormalization, initializers missing from an IR 3 model's inputs).
            try:
                onnx.checker.check_model(original)
                valid, _ = "no", problems.append(f"checker: {str(e)[:200]}")
            except Exception as before:  # noqa: BLE001 - the original's own verdict.
                same_fault = str(before).splitlines()[:1] == str(e).splitlines()[:1]
                valid = "as the original" if same_fault else "no"
                if not same_fault:
                    problems.append(f"checker: {str(e)[:200]}")
        feeds = compare_ort.make_feeds(path, original, dims, values, shapes)
        want = session(original).run(None, feeds)
        got = session(expanded).run(None, feeds)
        outputs = "identical" if len(want) == len(got) and all(same(x, y) for x, y in zip(want, got)) else "DIFFER"
        if outputs != "identical":
            problems.append("outputs differ")
        checked, differ = family_shapes(expanded, feeds)
        if differ:
            problems.append(f"{len(differ)} implicit at run time: {'; '.join(differ[:3])}")
        if skipped:
            reasons = sorted(set(re.findall(r"left implicit: (.*)", r.stderr)))
            print(f"  ({skipped} nodes left implicit: {'; '.join(reasons[:3])})")
        ve, bad_e = verify(a.bin, path, exp, dims, shapes)
        va, bad_a = verify(a.bin, path, ann, dims, shapes)
        for bad in (bad_e, bad_a):
            if bad:
                problems.append(bad)
        cell = lambda v: f"{v[1]} of {v[0]}" if v else "failed"  # noqa: E731
        print(f"| {short} | {made.group(1) if made else 0} nodes | {valid} | {outputs} | {checked} / {checked - len(differ)} "
              f"| {cell(ve)} | {cell(va)} | {ve[2] if ve else ''} |", flush=True)
        for p in problems:
            print(f"  - {p}")
        failures += bool(problems)
    print(f"\n{failures} models with problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

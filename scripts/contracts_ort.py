"""Acceptance oracle for onnx-bcast's input contracts: sweeps each symbolic input dim of a model
through onnxruntime and checks that the sizes ORT runs and refuses are the sizes the contract
(`"contract"` of `onnx-bcast infer MODEL --format json`) accepts and refuses. Run by hand (needs
onnx, onnxruntime and numpy; --make-torch also needs torch):

    cargo build --release
    python3 scripts/contracts_ort.py --make-torch          # build the torch models, then run
    python3 scripts/contracts_ort.py [MODEL.onnx ...] [--bin target/release/onnx-bcast] \
        [--max 256] [--full] [--contract FILE.json]

With no MODEL the default list is the torch models of target/contract-models/ plus, when present
under target/real-models/, PP-OCRv4 det and rec (and det as onnxruntime's symbolic shape
inference writes it, saved beside the torch models), PP-OCRv6's small det, the TorchScript
MobileViT (its padding
computes sizes in float), MPT (its ALiBi bias is sliced from `64 - seq`), GPT-2 (its positions
are an `arange` into a table), Funnel (pooled relative positions index a GatherElements),
DeBERTa-v2 (relative positions clipped to a table) and Mamba (its scan unrolled over the traced
length) of scripts/architectures.py and every Ultralytics YOLOv8 model with dynamic
height and width (found by file name or by the model's metadata), and onnx-asr's gigaam v3, kaldi
and wespeaker feature extractors (an STFT frame that must fit, a Scan that must iterate).

What it checks. A size v of a dim is accepted by the contract iff v is in `also`, or
min <= v <= max (null: no bound), v % modulus is in `residues` and v is not in `except`; a
symbolic dim absent from `dims` (or a model whose output has no `contract` yet) accepts every
size. For each swept size ORT (CPU, one thread, graph optimizations off) runs the model on
random inputs and the run is classified: ran; refused for a shape reason (the message mentions
shapes, broadcast, dimension, Reshape, size, "Non-zero status code", ...: ORT wraps every kernel
error in that phrase, so in practice any kernel failure but a failed allocation counts); other
failure (memory, a feed ORT rejects); an output whose size differs from a known size the
graph output declares counts as refused for a shape reason ("declared output": ORT runs it with
a warning, onnx-bcast's contract makes it an error finding); skipped (inputs over 200 MB, or sizes after a run slower
than --slow s or once the dim's sweep has used --budget s). Disagreements: ORT ran a size the
contract refuses, or refused (shape) a size the contract accepts. The contract's relations
over the swept and held dims are evaluated from their text (`relation_holds`); a dim all of
whose relations read is checked as exact ("yes (relation)"). When a relation does not read, a refused-but-accepted size is put down to the relation (its
condition is free text, not evaluated) and reported, not failed. The exit code is 1 iff a dim
marked `exact: true` disagrees (--absent-exact: dims the contract leaves out count as exact).

Output: per model, how each dim was swept and the first ORT message of each kind at each node;
then one table row per swept dim (size lists in the table are runs over the sizes tried: with
the steps below "61-64, 71-2048" need not mean every size in between) and the disagreements,
failures (exact dims) apart from those only reported.

Choices made:
- Sizes: every size 1..--max plus 300, 384, 448, 512, 640, 768, 1024, 1536, 2048. Models over
  2 MB are swept in steps (1..64, every 8th to --max, 32k-1 and 32k+1, the same spread) unless
  --full. A contract's counterexample values, its largest size and the one past it are always
  tried.
- Base: the dims not swept are held at a size the contract accepts: the smallest accepted size
  >= 1 for batch-like dims ('batch' in the name, or only ever axis 0 of an input of rank >= 2
  and not named like seq/len/time/height/width), >= 32 for others. A dim whose base does not
  run in its own sweep is re-based on the smallest size that ran (accepted by the contract if
  possible), and a dim whose sweep ran nothing is swept again if its held sizes changed.
  Batch-like dims are swept last.
- Joint sweeps: dims named alike up to height<->width or h<->w (height/width, img_h/img_w, H/W)
  are always swept together at the same value (square images), related by the contract or
  not; the row shows "height=width" and the contract accepts v iff it accepts v for both.
  Other dims are swept one at a time.
- Anonymous input dims ('?', empty or negative) have no name a contract could use: they are not
  swept but held at the first of 32, 48, 64, ... at which the model runs.
- Feeds: floats are standard normal; int inputs that index an embedding table (Gather data is an
  initializer) or are named *ids*/*token* take 0..min(100, vocab); other ints and bools are ones.
- --contract FILE reads contracts from a JSON file {model file name: contract} instead of the
  binary, to test the comparison before onnx-bcast prints contracts.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_DIR = os.path.join(ROOT, "target", "contract-models")
REAL_DIR = os.path.join(ROOT, "target", "real-models")
SPREAD = [300, 384, 448, 512, 640, 768, 1024, 1536, 2048]
MEM_LIMIT = 200 << 20
SHAPE_WORDS = ("shape", "broadcast", "dimension", "reshape", "size", "invalid input shape", "not compatible",
               "mismatch", "non-zero status code", "incompatible", "out of bounds", "out of range")
MEMORY_WORDS = ("failed to allocate", "bad_alloc", "out of memory")


# ---------------------------------------------------------------- contract

def accepts(rule: dict | None, v: int) -> bool:
    if rule is None:
        return True
    if v in (rule.get("also") or []):
        return True
    lo, hi, m = rule.get("min"), rule.get("max"), rule.get("modulus") or 1
    residues = rule.get("residues")
    return ((lo is None or v >= lo) and (hi is None or v <= hi) and (residues is None or v % m in residues)
            and v not in (rule.get("except") or []))


def read_contract(binary: str, path: str, files: dict) -> dict | None:
    if os.path.basename(path) in files:
        return files[os.path.basename(path)]
    run = subprocess.run([binary, "infer", path, "--format", "json"], capture_output=True, text=True)
    if run.returncode == 2:
        raise RuntimeError(f"onnx-bcast failed: {run.stderr.strip()[:300]}")
    return json.loads(run.stdout).get("contract")


# ---------------------------------------------------------------- model inputs and feeds

def model_inputs(model: onnx.ModelProto) -> list[dict]:
    inits = {i.name for i in model.graph.initializer}
    init_shape = {i.name: list(i.dims) for i in model.graph.initializer}
    out = []
    for i in model.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        dims = []
        for d in t.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 0:
                dims.append(d.dim_value)
            elif d.dim_param and d.dim_param != "?":
                dims.append(d.dim_param)
            else:
                dims.append(None)  # anonymous
        vocab = [init_shape[n.input[0]][0] for n in model.graph.node
                 if n.op_type == "Gather" and len(n.input) > 1 and n.input[1] == i.name and n.input[0] in init_shape]
        if not vocab and re.search(r"ids|token", i.name, re.I):
            vocab = [100]
        out.append({"name": i.name, "dtype": helper.tensor_dtype_to_np_dtype(t.elem_type), "dims": dims,
                    "vocab": vocab[0] if vocab else None})
    return out


def batch_like(name: str, inputs: list[dict]) -> bool:
    if "batch" in name.lower() or re.search(r"seq|len|time|height|width", name.lower()):
        return "batch" in name.lower()
    places = [(ax, len(i["dims"])) for i in inputs for ax, d in enumerate(i["dims"]) if d == name]
    return all(ax == 0 and rank >= 2 for ax, rank in places)


def feeds(inputs: list[dict], bind: dict, anon: int, rng) -> dict | None:
    shapes = [[bind[d] if isinstance(d, str) else anon if d is None else d for d in i["dims"]] for i in inputs]
    if sum(int(np.prod(s)) * np.dtype(i["dtype"]).itemsize for i, s in zip(inputs, shapes)) > MEM_LIMIT:
        return None
    out = {}
    for i, s in zip(inputs, shapes):
        dt = np.dtype(i["dtype"])
        if dt.kind == "f":
            out[i["name"]] = rng.standard_normal(s, dtype=np.float32).astype(dt)
        elif dt.kind in "iu" and i["vocab"]:
            out[i["name"]] = rng.integers(0, min(100, i["vocab"]), s).astype(dt)
        else:
            out[i["name"]] = np.ones(s, dtype=dt)
    return out


def classify(msg: str) -> str:
    low = msg.lower()
    if any(w in low for w in MEMORY_WORDS):
        return "other"
    return "shape" if any(w in low for w in SHAPE_WORDS) else "other"


def short(msg: str) -> str:
    """One line, without the source location and the failed assertion ORT puts before its words."""
    msg = " ".join(msg.split())
    return re.sub(r"/onnxruntime_src/\S+ (.*? was false\. )?", "", msg)


def session(path: str) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.enable_cpu_mem_arena = False  # give memory back after the big sizes
    so.log_severity_level = 4  # ORT logs every kernel failure as an error otherwise
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def run(sess, inputs, bind, anon, rng) -> tuple[str, str, float]:
    feed = feeds(inputs, bind, anon, rng)
    if feed is None:
        return "skip", "inputs over 200 MB", 0.0
    t = time.perf_counter()
    try:
        outs = sess.run(None, feed)
    except Exception as e:  # noqa: BLE001 - every ORT failure is a verdict here
        msg = short(str(e))
        return classify(msg), msg, time.perf_counter() - t
    dt = time.perf_counter() - t
    # An output unlike its declared known size: ORT only warns, onnx-bcast's error.
    for o, meta in zip(outs, sess.get_outputs()):
        shape = getattr(o, "shape", ())
        for a, d in enumerate(meta.shape if len(meta.shape) == len(shape) else []):
            if isinstance(d, int) and d >= 0 and shape[a] != d:
                return "shape", f"declared output: '{meta.name}' declares {d} at axis {a}, ran {shape[a]}", dt
    return "ran", "", dt


# ---------------------------------------------------------------- sweeping

def sweep_sizes(vmax: int, stepped: bool) -> list[int]:
    if stepped:  # 1..64, every 8th, and 32k-1, 32k+1 around each multiple of 32
        small = list(range(1, min(64, vmax) + 1)) + list(range(72, vmax + 1, 8))
        small += [v for k in range(64, vmax + 1, 32) for v in (k - 1, k + 1) if v <= vmax]
    else:
        small = list(range(1, vmax + 1))
    return sorted(set(small + [s for s in SPREAD if s > vmax]))


def alike_key(name: str) -> str | None:
    key = re.sub(r"height|width", "#", name.lower())
    key = re.sub(r"(?<![a-z])[hw](?![a-z])", "#", key)
    return key if "#" in key else None


def make_groups(names: list[str], inputs: list[dict]) -> list[tuple[str, ...]]:
    groups, seen = [], set()
    for n in names:
        if n in seen:
            continue
        g = tuple(m for m in names if m not in seen and alike_key(n) is not None and alike_key(m) == alike_key(n))
        g = g if len(g) > 1 else (n,)
        seen.update(g)
        groups.append(g)
    return sorted(groups, key=lambda g: batch_like(g[0], inputs))  # batch-like last


def pick_base(default: int, rule: dict | None, ran: set | None = None) -> int:
    order = list(range(default, 4097)) + list(range(1, default))
    if ran:
        order = [v for v in order if v in ran] or sorted(ran)
        return next((v for v in order if accepts(rule, v)), order[0])
    return next((v for v in order if accepts(rule, v)), default)


def ranges(vs: list[int], tried: list[int], limit: int = 60) -> str:
    """vs as runs of consecutive sizes of `tried` ("20-2048": every size tried from 20 to 2048)."""
    at, parts, i = {v: k for k, v in enumerate(tried)}, [], 0
    while i < len(vs):
        j = i
        while j + 1 < len(vs) and at[vs[j + 1]] == at[vs[j]] + 1:
            j += 1
        parts.append(str(vs[i]) if i == j else f"{vs[i]}-{vs[j]}")
        i = j + 1
    s = ", ".join(parts) or "-"
    return s if len(s) <= limit else s[:limit].rsplit(",", 1)[0] + ", …"


def sweep_model(path: str, contract: dict | None, args) -> list[dict]:
    model = onnx.load(path, load_external_data=False)
    inputs = model_inputs(model)
    names = list(dict.fromkeys(d for i in inputs for d in i["dims"] if isinstance(d, str)))
    rules = (contract or {}).get("dims", {})
    relations = (contract or {}).get("relations", [])
    stepped = not args.full and os.path.getsize(path) > 2 << 20
    defaults = {n: 1 if batch_like(n, inputs) else 32 for n in names}
    base = {n: pick_base(defaults[n], rules.get(n)) for n in names}
    sess, rng = session(path), np.random.default_rng(0)
    if stepped:
        print("  over 2 MB: sizes in steps (1-64, every 8th and 32k+-1 to --max, the spread); --full for all")
    first: dict[tuple, str] = {}  # the first failure message of each kind at each node

    anon = 32  # anonymous dims: the first candidate that runs
    if any(d is None for i in inputs for d in i["dims"]):
        ok = [c for c in (32, 48, 64, 16, 24, 56, 96, 128, 224, 320, 640, 1, 2, 4, 8)
              if run(sess, inputs, base, c, rng)[0] == "ran"][:1]
        anon = ok[0] if ok else anon
        print(f"  anonymous input dims held at {anon}{'' if ok else ' (no candidate ran)'}")

    def sweep(g):
        counter = [((rules.get(d) or {}).get("counterexample") or {}).get("value") or 1 for d in g]
        # The largest size a contract accepts and the one past it, wherever they are.
        edges = [v for d in g if (rules.get(d) or {}).get("max") for v in (rules[d]["max"], rules[d]["max"] + 1)]
        sizes = sorted(set(sweep_sizes(args.max, stepped) + [base[d] for d in g] + counter + edges))
        held = {n: base[n] for n in names if n not in g}
        res, slow, start = {}, False, time.perf_counter()
        for v in sizes:
            if slow or time.perf_counter() - start > args.budget:
                res[v] = ("skip", "slow", 0.0)
                continue
            res[v] = run(sess, inputs, {**held, **{d: v for d in g}}, anon, rng)
            kind, msg, dt = res[v]
            node = re.search(r"Name:'([^']*)'", msg)
            key = (kind, node.group(1) if node else "")
            if kind in ("shape", "other") and key not in first and len(first) < 6:
                first[key] = f"{'='.join(g)}={v}: {msg[:400]}"
            slow = dt > args.slow
        return {"group": g, "held": held, "res": res}

    rows = []
    for g in make_groups(names, inputs):
        t = time.perf_counter()
        row = sweep(g)
        ran = {v for v, r in row["res"].items() if r[0] == "ran"}
        for d in g:
            if row["res"][base[d]][0] != "ran" and ran:
                base[d] = pick_base(defaults[d], rules.get(d), ran)
        print(f"  swept {'='.join(g)} ({len(row['res'])} sizes, held {row['held'] or '-'}) "
              f"in {time.perf_counter() - t:.1f}s")
        rows.append(row)
    for k, row in enumerate(rows):
        held = {n: base[n] for n in names if n not in row["group"]}
        if not any(r[0] == "ran" for r in row["res"].values()) and held != row["held"]:
            rows[k] = sweep(row["group"])
            print(f"  re-swept {'='.join(row['group'])} with {held}: nothing ran at {row['held']}")
    for (kind, node), msg in first.items():
        print(f"  first {kind} failure{f' at {node}' if node else ''}: {msg}")
    for row in rows:
        compare(row, rules, relations, args)
    return rows


def relation_holds(cond: str, env: dict):
    """The relation's condition (as onnx-bcast prints it) evaluated with the sizes `env`; None
    where it does not read. Forms: `A = B`, `A is x or y`, `A, B are equal or 1`, `A >= k`;
    terms of integers, names, + - *, floor(a/b), min, max, broadcast."""
    names = sorted(env, key=len, reverse=True)
    expr = cond
    for k, n in enumerate(names):
        expr = expr.replace(n, f"_v[{k}]")
    scope = {"_v": [env[n] for n in names], "floor": math.floor, "min": min, "max": max,
             "broadcast": lambda *a: ({x for x in a if x != 1} or {1}).pop() if len({x for x in a if x != 1}) <= 1 else None}
    try:
        if expr.endswith(" are equal or 1"):
            vals = eval("[" + expr[: -len(" are equal or 1")] + "]", scope)
            return len({x for x in vals if x != 1}) <= 1
        if " is " in expr:
            lhs, rhs = expr.split(" is ", 1)
            return eval(lhs, scope) in [eval(o, scope) for o in rhs.split(" or ")]
        if " >= " in expr:
            lhs, rhs = expr.split(" >= ", 1)
            return eval(lhs, scope) >= eval(rhs, scope)
        if " = " in expr:
            lhs, rhs = expr.split(" = ", 1)
            return eval(lhs, scope) == eval(rhs, scope)
    except Exception:
        return None
    return None


def compare(row: dict, rules: dict, relations: list, args) -> None:
    g, res = row["group"], row["res"]
    touching = [r for r in relations if set(r.get("dims", [])) & set(g)]
    ran = sorted(v for v, r in res.items() if r[0] == "ran")
    refused = sorted(v for v, r in res.items() if r[0] == "shape")
    acc = {v: all(accepts(rules.get(d), v) for d in g) for v in res}
    # Relations over the swept dims and the held ones are evaluated where their text reads;
    # a group whose relations all read is checked as exactly as a dim the contract calls exact.
    evaluated = True
    for v in res:
        env = {**row["held"], **{d: v for d in g}}
        for r in touching:
            ok = relation_holds(r.get("condition", ""), env) if set(r["dims"]) <= set(env) else None
            if ok is None:
                evaluated = False
            elif not ok:
                acc[v] = False
    related = bool(touching) and not evaluated
    row["ran"], row["refused"] = ran, refused
    row["other"] = sorted(v for v, r in res.items() if r[0] == "other")
    row["skipped"] = sorted(v for v, r in res.items() if r[0] == "skip")
    row["too_strict"] = [v for v in ran if not acc[v]]
    loose = [v for v in refused if acc[v]]
    row["too_loose"], row["relation"] = ([], loose) if related else (loose, [])
    present = [rules[d] for d in g if d in rules]
    row["exact"] = (len(present) == len(g) or args.absent_exact) and all(r.get("exact") for r in present)
    checked = bool(touching) and evaluated
    row["exact_text"] = ("yes" if row["exact"] else "no") if present else "absent"
    if checked:
        row["exact"], row["exact_text"] = True, "yes (relation)"
    row["text"] = "; ".join(f"{d}: {rules[d].get('text', '?')}" if d in rules else f"{d}: any" for d in g)
    row["vmax"] = args.max


def table(results: list[tuple[str, list[dict]]], has_contract: dict) -> int:
    print("\n| model | dim | contract text | sizes tried | ORT ran | ORT refused | disagreements | exact |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    failures, soft = [], []
    for name, rows in results:
        for r in rows:
            held, tried = ", ".join(f"{k}={v}" for k, v in r["held"].items()), sorted(r["res"])
            dis = [f"{what}: {ranges(r[k], tried, 40)}" for k, what in (
                ("too_strict", "ran, contract refuses"), ("too_loose", "refused, contract accepts"),
                ("relation", "refused, accepted up to a relation")) if r[k]]
            dim = "=".join(r["group"])
            if r["exact"] and (r["too_strict"] or r["too_loose"]):
                failures.append(f"{name} {dim}: {'; '.join(dis)}")
            elif dis:
                soft.append(f"{name} {dim} ({r['exact_text']}): {'; '.join(dis)}")
            extra = "".join(f"; {len(r[k])} {k} ({ranges(r[k], tried, 30)})" for k in ("other", "skipped") if r[k])
            p = next(k for k in range(len(tried) + 1) if k == len(tried) or tried[k] != k + 1)  # 1..p all tried
            more = [(sum(p < v <= r["vmax"] for v in tried), r["vmax"]), (sum(v > r["vmax"] for v in tried), tried[-1])]
            n = f"{len(tried)}: 1-{p}" + "".join(f", {c} more to {top}" for c, top in more if c)
            text = r["text"] if has_contract[name] else "no contract"
            print(f"| {name} | {dim}{f' ({held})' if held else ''} | {text} | {n} | {ranges(r['ran'], tried)} | "
                  f"{ranges(r['refused'], tried)}{extra} | {'; '.join(dis) or '-'} | {r['exact_text']} |")
    print(f"\nFailures (disagreements on exact dims): {len(failures) or 'none'}")
    print("".join(f"- {f}\n" for f in failures), end="")
    print(f"Reported only (dims not exact, absent from the contract, or in a relation): {len(soft) or 'none'}")
    print("".join(f"- {f}\n" for f in soft), end="")
    return 1 if failures else 0


# ---------------------------------------------------------------- default list and torch models

def default_models() -> list[str]:
    found = sorted(p for p in glob.glob(os.path.join(TORCH_DIR, "*.onnx")) if ".ssi." not in p)
    for name in ("ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "PP-OCRv6_det_small.onnx", "mobilevit.onnx",
                 "mpt.onnx", "gpt2.onnx",
                 "funnel.onnx", "deberta_v2.onnx", "mamba.onnx", "gigaam_v3.onnx", "kaldi.onnx", "wespeaker.onnx"):
        found += sorted(glob.glob(os.path.join(REAL_DIR, "**", name), recursive=True))[:1]
    v4 = [p for p in sorted(glob.glob(os.path.join(REAL_DIR, "**", "ch_PP-OCRv4_det_infer.onnx"), recursive=True))
          if "ort_all" not in p][:1]  # as exported: onnxruntime's optimized save has NCHWc ops it cannot read
    found += [symbolic_shape_inferred(p) for p in v4]
    out = subprocess.run(["find", REAL_DIR, "-name", "*.onnx"], capture_output=True, text=True).stdout.split()
    for p in sorted(out):
        m = onnx.load(p, load_external_data=False)
        meta = {x.key: x.value for x in m.metadata_props}
        ultralytics8 = meta.get("author") == "Ultralytics" and meta.get("version", "").startswith("8.")
        yolo8 = "yolov8" in p.lower() or ultralytics8
        dims = {d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim[2:] if d.dim_param}
        if yolo8 and len(dims) >= 2:
            found.append(p)
    return found


def symbolic_shape_inferred(path: str) -> str:
    """The model as onnxruntime's own symbolic shape inference writes it (auto_merge, which
    PP-OCR's detector needs, as quant_pre_process(auto_merge=True) runs it): its value_info
    declares the upsampled maps of the size of the maps they are added to, which is false at 1
    to 4, where onnxruntime then refuses to run."""
    out = os.path.join(TORCH_DIR, os.path.basename(path).replace(".onnx", ".ssi.onnx"))
    if not os.path.exists(out):
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
        os.makedirs(TORCH_DIR, exist_ok=True)
        model = onnx.load(os.path.abspath(path))
        # The tool saves a temporary model and its external data in the working directory.
        here = os.getcwd()
        with tempfile.TemporaryDirectory() as scratch:
            os.chdir(scratch)
            try:
                inferred = SymbolicShapeInference.infer_shapes(model, auto_merge=True)
            finally:
                os.chdir(here)
        onnx.save(inferred, out)
    return out


def make_torch(out_dir: str) -> None:
    import warnings

    import torch
    from torch import nn
    torch.manual_seed(0)
    warnings.filterwarnings("ignore")  # the TorchScript exporter's deprecation and tracer warnings

    class WindowAttn(nn.Module):  # 4x4 patches, then 7x7 windows: floor(H/4), floor(W/4) multiples of 7
        def __init__(s):
            super().__init__()
            s.embed, s.qkv, s.proj = nn.Conv2d(3, 8, 4, stride=4), nn.Linear(8, 24), nn.Linear(8, 8)

        def forward(s, x):
            y = s.embed(x)
            b, _, h, w = y.shape
            y = y.view(b, 8, h // 7, 7, w // 7, 7).permute(0, 2, 4, 3, 5, 1).reshape(-1, 49, 8)
            q, k, v = s.qkv(y).chunk(3, dim=-1)
            a = torch.softmax(q @ k.transpose(1, 2) / 8 ** 0.5, dim=-1) @ v
            return s.proj(a).view(b, h // 7, w // 7, 7, 7, 8).permute(0, 5, 1, 3, 2, 4).reshape(b, 8, h, w)

    class PatchViT(nn.Module):  # 16x16 patches + cls token + a position table of 5: 2x2 patches only
        def __init__(s):
            super().__init__()
            s.patch, s.head = nn.Conv2d(3, 16, 16, stride=16), nn.Linear(16, 10)
            s.cls, s.pos = nn.Parameter(torch.randn(1, 1, 16)), nn.Parameter(torch.randn(1, 5, 16))

        def forward(s, x):
            t = s.patch(x).flatten(2).transpose(1, 2)
            t = torch.cat([s.cls.expand(t.shape[0], -1, -1), t], 1) + s.pos
            return s.head(t[:, 0])

    class PosSeq(nn.Module):  # learned positions pos[:, :seq] of a 64-row table
        def __init__(s):
            super().__init__()
            s.emb, s.pos, s.out = nn.Embedding(100, 16), nn.Parameter(torch.randn(1, 64, 16)), nn.Linear(16, 16)

        def forward(s, ids):
            return s.out(s.emb(ids) + s.pos[:, :ids.shape[1]])

    class ConvAudio(nn.Module):  # wav2vec-like front end: time >= 20
        def __init__(s):
            super().__init__()
            s.c1, s.c2 = nn.Conv1d(1, 8, 10, stride=5), nn.Conv1d(8, 8, 3, stride=2)

        def forward(s, x):
            return s.c2(torch.nn.functional.gelu(s.c1(x))).mean(-1)

    class BatchBaked(nn.Module):  # x.view(2, -1, 8) with the export batch written in: batch 2 only
        def __init__(s):
            super().__init__()
            s.lin, s.bias = nn.Linear(8, 8), nn.Parameter(torch.randn(1, 4, 8))

        def forward(s, x):
            return s.lin(x).view(2, -1, 8) + s.bias

    class CausalMask(nn.Module):  # registered tril(ones(128, 128))[:seq, :seq]: seq <= 128
        def __init__(s):
            super().__init__()
            s.qkv = nn.Linear(16, 48)
            s.register_buffer("mask", torch.tril(torch.ones(128, 128)))

        def forward(s, x):
            q, k, v = s.qkv(x).chunk(3, dim=-1)
            n = x.shape[1]
            scores = (q @ k.transpose(1, 2) / 4).masked_fill(s.mask[:n, :n] == 0, float("-inf"))
            return torch.softmax(scores, -1) @ v

    specs = [  # name, module, input name, example, dynamic axes, a size that runs, one that does not
        ("window_attn", WindowAttn(), "image", torch.randn(1, 3, 56, 56), {0: "batch", 2: "height", 3: "width"},
         [1, 3, 56, 56], [1, 3, 64, 64]),
        ("patch_vit", PatchViT(), "image", torch.randn(1, 3, 32, 32), {0: "batch", 2: "height", 3: "width"},
         [1, 3, 32, 32], [1, 3, 48, 48]),
        ("pos_seq", PosSeq(), "input_ids", torch.zeros(1, 8, dtype=torch.long), {0: "batch", 1: "seq"},
         [2, 64], [2, 65]),
        ("conv_audio", ConvAudio(), "audio", torch.randn(1, 1, 400), {0: "batch", 2: "time"}, [1, 1, 20], [1, 1, 19]),
        ("batch_baked", BatchBaked(), "x", torch.randn(2, 4, 8), {0: "batch"}, [2, 4, 8], [3, 4, 8]),
        ("causal_mask", CausalMask(), "x", torch.randn(1, 8, 16), {0: "batch", 1: "seq"},
         [1, 128, 16], [1, 129, 16]),
    ]
    os.makedirs(out_dir, exist_ok=True)
    for name, mod, inp, example, axes, good, bad in specs:
        path = os.path.join(out_dir, name + ".onnx")
        torch.onnx.export(mod.eval(), (example,), path, dynamo=False, opset_version=17, input_names=[inp],
                          output_names=["out"], dynamic_axes={inp: axes})
        sess, dt = session(path), example.numpy().dtype
        shown = [f"{name}.onnx ({os.path.getsize(path) // 1024} KB) {inp}{list(axes.values())}:"]
        for shape in (good, bad):
            x = np.zeros(shape, dt) if dt.kind == "i" else np.random.default_rng(0).standard_normal(shape).astype(dt)
            try:
                sess.run(None, {inp: x})
                shown.append(f"  {shape}: runs")
            except Exception as e:  # noqa: BLE001
                msg = short(str(e))
                shown.append(f"  {shape}: fails ({classify(msg)}): {msg[:300]}")
        print("\n".join(shown))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "onnx-bcast"))
    ap.add_argument("--max", type=int, default=256, help="sweep every size 1..MAX (default 256)")
    ap.add_argument("--full", action="store_true", help="every size up to --max even on big models")
    ap.add_argument("--slow", type=float, default=20.0, help="stop a sweep after a run this slow (s)")
    ap.add_argument("--budget", type=float, default=120.0, help="stop a sweep after this many seconds")
    ap.add_argument("--contract", help="JSON file {model file name: contract} used instead of the binary's")
    ap.add_argument("--absent-exact", action="store_true", help="dims the contract leaves out count as exact")
    ap.add_argument("--make-torch", action="store_true", help=f"build the torch models into {TORCH_DIR}")
    args = ap.parse_args()
    if args.make_torch:
        make_torch(TORCH_DIR)
    files = json.load(open(args.contract)) if args.contract else {}
    results, has_contract, start = [], {}, time.perf_counter()
    for path in args.models or default_models():
        name, t = os.path.basename(path), time.perf_counter()
        print(f"{path}:")
        try:
            contract = read_contract(args.bin, path, files)
            if contract is None:
                print("  no contract in onnx-bcast's output: every size accepted")
            has_contract[name] = contract is not None
            results.append((name, sweep_model(path, contract, args)))
        except Exception as e:  # noqa: BLE001 - one model's failure should not end the run
            print(f"  skipped: {' '.join(str(e).split())[:300]}")
        print(f"  {time.perf_counter() - t:.1f}s")
    code = table(results, has_contract)
    print(f"total {time.perf_counter() - start:.0f}s")
    return code


if __name__ == "__main__":
    sys.exit(main())

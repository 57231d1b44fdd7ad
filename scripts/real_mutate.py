"""Mutates the small integer constants of the real models (scripts/real_models.py's table) one
entry at a time and compares `onnx-bcast infer` with what onnxruntime runs or refuses: the
real-model counterpart of ort_diff.py's value mutation. Run by hand (needs onnx, onnxruntime,
numpy, and the models real_models.py fetched):

    cargo build --release
    python3 scripts/real_mutate.py [--per-model 30] [--seed 1] [--only SUBSTRING]

Each variant changes one entry of one int64 initializer or Constant of at most 16 values
(a Reshape's shape, a Slice's bounds, a Gather's index, an axis...) to the entry plus one, minus
one, doubled, 0 or -1. Verdicts, as ort_diff.py's:
  pass         onnxruntime and inference agree: both refuse, or both run and every dim
               inference knows is the run's;
  WRONG        both run and some known dim differs;
  FALSE-ALARM  onnxruntime runs, inference reports an error;
  MISSED       onnxruntime refuses, inference reports none although it knows every shape;
  unseen       onnxruntime refuses where inference left some shape unknown;
  runtime-differs  a false alarm that follows the spec where a `runtime-differs` warning says
               onnxruntime parts from it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare_ort import main_outputs, make_feeds  # noqa: E402
from real_models import ROOT, table  # noqa: E402


def parse(args: list[str]) -> tuple[dict, dict, dict]:
    """real_models.py's row arguments: --dim=NAME=N, --value=INPUT=X and --shape=INPUT=A,B,..."""
    dims, values, shapes = {}, {}, {}
    for a in args:
        flag, rest = a.split("=", 1)
        name, v = rest.split("=", 1)
        if flag == "--dim":
            dims[name] = int(v)
        elif flag == "--value":
            values[name] = float(v)
        elif flag == "--shape":
            shapes[name] = [int(x) for x in v.split(",")]
    return dims, values, shapes


def symbols_at_two(path: str) -> list[str]:
    """--dim arguments binding each symbol the model's inputs declare to 2."""
    m = onnx.load(path, load_external_data=False)
    # "?" is the placeholder for an unknown size, no symbol.
    names = {d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param not in ("", "?")}
    return [f"--dim={n}=2" for n in sorted(names)]


def constants(m: onnx.ModelProto) -> list[tuple[str, int, object]]:
    """(kind, index, tensor) of each int64 initializer or main-graph Constant of 1 to 16 values."""
    out = []
    for k, t in enumerate(m.graph.initializer):
        if t.data_type == onnx.TensorProto.INT64 and 1 <= int(np.prod(t.dims)) <= 16:
            out.append(("init", k, t))
    for k, n in enumerate(m.graph.node):
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            t = n.attribute[0].t
            if t.data_type == onnx.TensorProto.INT64 and 1 <= int(np.prod(t.dims)) <= 16:
                out.append(("node", k, t))
    return out


def run_ort(path: str, feeds: dict) -> tuple[dict | None, str]:
    import onnxruntime as ort

    m = onnx.load(path)
    present = {o.name for o in m.graph.output}
    for n in main_outputs(m):
        if n not in present:
            m.graph.output.append(helper.make_empty_tensor_value_info(n))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    try:
        s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        names = [o.name for o in s.get_outputs()]
        res = s.run(names, feeds)
    except Exception as e:  # noqa: BLE001 - every refusal is a result
        return None, str(e)
    return {n: tuple(np.asarray(v).shape) for n, v in zip(names, res) if isinstance(v, np.ndarray)}, ""


def run_ours(binary: str, path: str, dims: dict) -> dict | None:
    args = [binary, "infer", path, "--format", "json"] + [f"--dim={k}={v}" for k, v in dims.items()]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 1):
        return {"crash": f"exit {r.returncode}: {r.stderr.strip()[:300]}"}
    return json.loads(r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "onnx-bcast"))
    ap.add_argument("--per-model", type=int, default=30, help="variants per model")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--max-nodes", type=int, default=3000)
    ap.add_argument("models", nargs="*", help="these models (every input symbol bound to 2) instead of the table")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    pool = ProcessPoolExecutor(1)
    counts: dict[str, int] = {}
    tmp = tempfile.mkdtemp()
    rows = table() if not a.models else [(p, symbols_at_two(p)) for p in a.models]
    for path, args in rows:
        if a.only not in path or not os.path.exists(path):
            continue
        base = onnx.load(path)
        # A changed constant makes the exporter's value_info and declared output shapes stale:
        # both go, as compare_ort.py --strip does.
        del base.graph.value_info[:]
        for o in base.graph.output:
            o.type.tensor_type.ClearField("shape")
        if len(base.graph.node) > a.max_nodes or base.graph.initializer and any(
            t.data_location == onnx.TensorProto.EXTERNAL for t in base.graph.initializer
        ):
            continue
        dims, values, shapes = parse(args)
        feeds = make_feeds(path, base, dims, values, shapes)
        sites = constants(base)
        plan = [(s, rng.randrange(int(np.prod(s[2].dims))), rng.choice(["+1", "-1", "*2", "0", "-1v"]))
                for s in sites for _ in range(2)]
        rng.shuffle(plan)
        for (kind, k, _), entry, how in plan[: a.per_model]:
            m = onnx.ModelProto()
            m.CopyFrom(base)
            t = m.graph.initializer[k] if kind == "init" else m.graph.node[k].attribute[0].t
            arr = numpy_helper.to_array(t).copy()
            flat = arr.reshape(-1)
            old = int(flat[entry])
            new = {"+1": old + 1, "-1": old - 1, "*2": old * 2, "0": 0, "-1v": -1}[how]
            if new == old or not -(2**63) <= new < 2**63:
                continue
            flat[entry] = new
            t.CopyFrom(numpy_helper.from_array(arr, t.name))
            out = os.path.join(tmp, "v.onnx")
            onnx.save(m, out)
            what = f"{os.path.relpath(path, ROOT)}: {t.name or kind + str(k)}[{entry}] {old} -> {new}"
            ours = run_ours(a.bin, out, dims)
            try:
                got, err = pool.submit(run_ort, out, feeds).result(timeout=300)
            except Exception as e:  # noqa: BLE001 - onnxruntime died: a new process for the next
                pool.shutdown(cancel_futures=True)
                pool = ProcessPoolExecutor(1)
                got, err = None, f"onnxruntime died: {e!r}"
            if "crash" in ours:
                verdict, detail = "CRASH", ours["crash"]
            else:
                errors = [d for d in ours["diagnostics"] if d["severity"] == "error"]
                known = {n: t.get("shape") for n, t in ours["tensors"].items()}
                if got is None:
                    full = all(isinstance(known.get(n), list) and all(isinstance(d, int) for d in known[n])
                               for n in main_outputs(m))
                    verdict = "pass" if errors else "MISSED" if full else "unseen"
                    detail = err.strip().splitlines()[0][:300] if err else ""
                elif errors:
                    verdict, detail = "FALSE-ALARM", errors[0]["message"]
                    # Following the spec where a warning says onnxruntime parts from it.
                    if any(d["code"] == "runtime-differs" for d in ours["diagnostics"]):
                        verdict = "runtime-differs"
                else:
                    diffs = [f"{n}: ours {known.get(n)} ORT {list(s)}" for n, s in got.items()
                             if isinstance(known.get(n), list) and (len(known[n]) != len(s) or any(
                                 isinstance(d, int) and d != e for d, e in zip(known[n], s)))]
                    verdict, detail = ("WRONG", diffs[0]) if diffs else ("pass", "")
            counts[verdict] = counts.get(verdict, 0) + 1
            if verdict not in ("pass", "unseen", "runtime-differs"):
                print(f"{verdict:12} {what} :: {detail}"[:500], flush=True)
    pool.shutdown()
    print(f"\n{sum(counts.values())} variants")
    for k, n in sorted(counts.items(), key=lambda x: -x[1]):
        print(f"  {k:12} {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

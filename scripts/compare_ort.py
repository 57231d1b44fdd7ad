"""Compares onnx-bcast's inferred shapes on real models with the shapes onnxruntime produces at
run time, and counts how many top-level tensors get a rank and a fully determined shape, next to
onnx's own `infer_shapes`. Run by hand (it needs onnx, onnxruntime and numpy):

    cargo build --release
    python3 scripts/compare_ort.py MODEL.onnx [MODEL.onnx ...] [--dim NAME=VALUE]... \
        [--value INPUT=NUMBER]... [--bin target/release/onnx-bcast]

Top-level tensors are the outputs of the main graph's nodes. A shape is fully determined when
it has a rank and every dim is a number or a symbol (no unknown dim); it is named when no dim is
a symbol the inference invented (onnx's unk__N, our ?N) but only numbers, input symbols and
expressions over them. For the run, symbolic
input dims take the --dim values (default 1; an unknown input dim takes 1 too); inputs are random
floats, or integers equal to --value (default 1). onnx-bcast is then re-run with the same --dim
bindings and every dim it knows must equal the run's.

Exporters such as torch.onnx write their own value_info for most tensors; with --strip both
inferences run on a copy without value_info and without declared output shapes (written next
to a temporary folder, or next to the model as NAME.stripped.onnx when it has external data,
so that the data still resolves), so that only inference
speaks.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper, shape_inference


def ours(binary: str, path: str, dims: dict[str, int]) -> dict:
    args = [binary, "infer", path, "--format", "json"]
    for k, v in dims.items():
        args += ["--dim", f"{k}={v}"]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode == 2:
        raise SystemExit(f"{path}: onnx-bcast failed: {run.stderr.strip()}")
    return json.loads(run.stdout)


def main_outputs(model: onnx.ModelProto) -> list[str]:
    return [o for n in model.graph.node for o in n.output if o]


def onnx_counts(model: onnx.ModelProto, names: list[str]) -> tuple[int, int, int]:
    try:
        inferred = shape_inference.infer_shapes(model, data_prop=True)
    except Exception as e:  # noqa: BLE001 - onnx refuses some models; count nothing then.
        print(f"  onnx infer_shapes failed: {e}", file=sys.stderr)
        return 0, 0, 0
    types = {vi.name: vi.type for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    ranked = full = named = 0
    for n in names:
        t = types.get(n)
        if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
            continue
        ranked += 1
        # onnx passes an input's dim_value -1 on as if it were a size; it is not one.
        if all((d.HasField("dim_value") and d.dim_value >= 0) or d.dim_param for d in t.tensor_type.shape.dim):
            full += 1
            # onnx names the dims it invents unk__N, and passes the placeholder "?" on as a name.
            named += all(not d.dim_param.startswith("unk__") and "?" not in d.dim_param
                         for d in t.tensor_type.shape.dim)
    return ranked, full, named


def our_counts(doc: dict, names: list[str]) -> tuple[int, int, int]:
    ranked = full = named = 0
    for n in names:
        shape = doc["tensors"].get(n, {}).get("shape")
        if shape is None:
            continue
        ranked += 1
        if all(d is not None for d in shape):
            full += 1
            # onnx-bcast names the dims it invents ?N (alone or inside an expression).
            named += all(not (isinstance(d, str) and "?" in d) for d in shape)
    return ranked, full, named


NP = {
    TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16,
    TensorProto.INT64: np.int64, TensorProto.INT32: np.int32, TensorProto.INT8: np.int8,
    TensorProto.UINT8: np.uint8, TensorProto.BOOL: np.bool_,
}


def make_feeds(path: str, m: onnx.ModelProto, dims: dict[str, int], values: dict[str, float],
               given: dict[str, list[int]]) -> dict:
    """The inputs of a run: a backend folder's own, else random floats and integers equal to
    --value (default 1), shaped by the declared dims, --dim and --shape."""
    inits = {i.name for i in m.graph.initializer}
    feeds = {}
    rng = np.random.default_rng(0)
    real = [i for i in m.graph.input if i.name not in inits]
    for k, i in enumerate(real):
        # Backend-format folders carry real inputs (declared outputs hold only for them).
        pb = os.path.join(os.path.dirname(path), "test_data_set_0", f"input_{k}.pb")
        if os.path.exists(pb):
            feeds[i.name] = numpy_helper.to_array(onnx.load_tensor(pb))
    for i in m.graph.input:
        if i.name in inits or i.name in feeds:
            continue
        tt = i.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else dims.get(d.dim_param, 1)
                 for d in tt.shape.dim]
        shape = given.get(i.name, shape)
        dt = NP.get(tt.elem_type, np.float32)
        if i.name in values or not np.issubdtype(dt, np.floating):
            feeds[i.name] = np.full(shape, values.get(i.name, 1), dtype=dt)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(dt)
    return feeds


def run_shapes(path: str, model: onnx.ModelProto, dims: dict[str, int], values: dict[str, float],
               given: dict[str, list[int]]) -> dict[str, tuple]:
    """Every top-level tensor's shape in one onnxruntime run."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    present = {o.name for o in m.graph.output}
    for n in main_outputs(m):
        if n not in present:
            m.graph.output.append(helper.make_empty_tensor_value_info(n))
    feeds = make_feeds(path, m, dims, values, given)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    out = sess.run(names, feeds)
    return {n: tuple(np.asarray(v).shape) for n, v in zip(names, out) if isinstance(v, np.ndarray)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--dim", action="append", default=[])
    ap.add_argument("--value", action="append", default=[])
    ap.add_argument("--shape", action="append", default=[], help="INPUT=D0,D1,... for inputs with unnamed dims")
    ap.add_argument("--bin", default="target/release/onnx-bcast")
    ap.add_argument("--strip", action="store_true", help="drop value_info and declared output shapes first")
    a = ap.parse_args()
    dims = {k: int(v) for k, v in (d.split("=", 1) for d in a.dim)}
    values = {k: float(v) for k, v in (d.split("=", 1) for d in a.value)}
    shapes_in = {k: [int(x) for x in v.split(",") if x] for k, v in (d.split("=", 1) for d in a.shape)}
    bad = 0
    print("model | top-level tensors | ours: ranked / full / named | onnx: ranked / full / named"
          " | ours with --dim: ranked / full | dims checked vs ORT | disagreements")
    for path in a.models:
        model = onnx.load(path)
        names = main_outputs(model)
        inferred_path, inferred_model = path, model
        if a.strip:
            inferred_model = onnx.load(path, load_external_data=False)
            del inferred_model.graph.value_info[:]
            for o in inferred_model.graph.output:
                o.type.tensor_type.ClearField("shape")
            external = any(t.data_location == TensorProto.EXTERNAL for t in inferred_model.graph.initializer)
            folder = os.path.dirname(path) if external else tempfile.mkdtemp(prefix="compare_ort")
            inferred_path = os.path.join(folder, os.path.basename(os.path.splitext(path)[0]) + ".stripped.onnx")
            onnx.save(inferred_model, inferred_path)
            inferred_model = onnx.load(inferred_path)
        try:
            o_rank, o_full, o_named = our_counts(ours(a.bin, inferred_path, {}), names)
            x_rank, x_full, x_named = onnx_counts(inferred_model, names)
            bound = ours(a.bin, inferred_path, dims)
        finally:
            # The temporary folder goes once both inferences have run; a copy beside its
            # external data stays, for runs by hand (contracts_ort.py reads them).
            if a.strip and not external:
                shutil.rmtree(folder)
        try:
            shapes = run_shapes(path, model, dims, values, shapes_in)
        except Exception as e:  # noqa: BLE001 - a model onnxruntime cannot run is reported, not fatal.
            print(f"{path} | onnxruntime could not run it: {str(e).splitlines()[0][:200]}")
            continue
        checked = 0
        wrong = []
        for n, rt in shapes.items():
            got = bound["tensors"].get(n, {}).get("shape")
            if got is None:
                continue
            if len(got) != len(rt):
                wrong.append(f"{n}: rank {len(got)} vs run {len(rt)}")
                continue
            for axis, (g, r) in enumerate(zip(got, rt)):
                if isinstance(g, int):
                    checked += 1
                    if g != r:
                        wrong.append(f"{n}: axis {axis}: {g} vs run {r}")
        bad += len(wrong)
        b_rank, b_full, _ = our_counts(bound, names)
        print(f"{path} | {len(names)} | {o_rank} / {o_full} / {o_named} | {x_rank} / {x_full} / {x_named}"
              f" | {b_rank} / {b_full}"
              f" | {checked} | {len(wrong)}")
        for w in wrong[:20]:
            print(f"  {w}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

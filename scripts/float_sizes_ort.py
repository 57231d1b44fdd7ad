"""Differential test of sizes computed in floating point (TorchScript's `math.ceil(h / 2)` on a
traced size): random chains of Div, Mul, Add, Sub (by constants or by h itself), Ceil and Floor
on a size h cast to float32, floored and cast back to a length. onnx-bcast infers each
symbolically; where it names the length, the term, evaluated exactly, must be onnxruntime's length
at every h from 0 to 40 (exit 1 on a mismatch). Run by hand (needs onnx, onnxruntime, numpy):

    cargo build --release
    python3 scripts/float_sizes_ort.py [--seed 1] [--count 300] [--bin target/release/onnx-bcast]

Counts: named (the term was checked), unknown (inference gave no term), ort-refused (sizes where
onnxruntime refused the model, a negative length), no-shape (inference refused the model).
"""
import argparse, json, math, os, random, re, subprocess, sys, tempfile
from fractions import Fraction
import numpy as np, onnx, onnxruntime as ort
from onnx import helper as H, TensorProto as T, numpy_helper as nh

ap = argparse.ArgumentParser()
ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "target", "release", "onnx-bcast"))
ap.add_argument("--count", type=int, default=300)
ap.add_argument("--seed", type=int, default=1)
a = ap.parse_args()
BIN, N, rng = a.bin, a.count, random.Random(a.seed)
TMP = os.path.join(tempfile.mkdtemp(prefix="float_sizes"), "chain.onnx")
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
so.log_severity_level = 4

def fl(x): return math.floor(x)
def ev(text, h):
    if not isinstance(text, str): return text
    e = re.sub(r"\bfloor\(", "fl(", text)
    return eval(e, {"fl": fl, "max": max, "min": min, "h": Fraction(h)})

stats = {"named": 0, "unknown": 0, "mismatch": 0, "ort-refused": 0}
for case in range(N):
    nodes = [H.make_node("Shape", ["x"], ["s"]), H.make_node("Gather", ["s", "one"], ["hi"]),
             H.make_node("Cast", ["hi"], ["v0"], to=T.FLOAT)]
    inits = [nh.from_array(np.array(1, np.int64), "one"), nh.from_array(np.array([0], np.int64), "zero")]
    cur, desc = "v0", []
    for k in range(rng.randint(1, 7)):
        op = rng.choice(["Div", "Mul", "Add", "Sub", "Ceil", "Floor", "Div", "Ceil"])
        out = f"v{k+1}"
        if op in ("Ceil", "Floor"):
            nodes.append(H.make_node(op, [cur], [out])); desc.append(op)
        else:
            c = rng.choice([2, 3, 4, 5, 8, 0.5, 1.5, 16, 1, 7, 0.25])
            name = f"c{k}"
            inits.append(nh.from_array(np.array(c, np.float32), name))
            other = rng.random() < 0.3 and op in ("Add", "Sub", "Mul")
            args = [cur, "v0" if other else name]
            nodes.append(H.make_node(op, args, [out])); desc.append(f"{op} {'h' if other else c}")
        cur = out
    # Back to a size: floor, then an integer, then the length of a tensor.
    nodes += [H.make_node("Floor", [cur], ["fa"]),
              H.make_node("Cast", ["fa"], ["n"], to=T.INT64),
              H.make_node("Unsqueeze", ["n", "zero"], ["n1"]), H.make_node("ConstantOfShape", ["n1"], ["y"])]
    g = H.make_graph(nodes, "g", [H.make_tensor_value_info("x", T.FLOAT, [1, "h"])],
                     [H.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = H.make_model(g, opset_imports=[H.make_opsetid("", 17)]); m.ir_version = 8
    onnx.save(m, TMP)
    out = json.loads(subprocess.run([BIN, "infer", "--format", "json", TMP], capture_output=True, text=True).stdout)
    shape = out["tensors"]["y"]["shape"]
    if shape is None:
        stats["no-shape"] = stats.get("no-shape", 0) + 1; continue
    dim = shape[0]
    if isinstance(dim, str) and "?" in dim:
        stats["unknown"] += 1; continue
    stats["named"] += 1
    s = ort.InferenceSession(m.SerializeToString(), so)
    for h in range(0, 41):
        try:
            got = s.run(None, {"x": np.zeros((1, h), np.float32)})[0].shape[0]
        except Exception:
            stats["ort-refused"] += 1; continue
        want = ev(dim, h)
        if want != got:
            stats["mismatch"] += 1
            print("MISMATCH", desc, dim, "h =", h, "ours", want, "ORT", got)
            break
print(stats)
sys.exit(1 if stats["mismatch"] else 0)

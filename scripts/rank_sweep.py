"""Ranks 0 to 7 against onnxruntime: one-node models of the ops below, with a float input `x`
of each rank (and float inputs or int64 constants that fit it), are run through onnxruntime
(CPU, graph optimizations off) and `onnx-bcast check`. A line starts with BAD where
onnxruntime refuses (or dies on) a model we call ok, or runs one we call an error; a
`runtime-differs` warning counts as saying onnxruntime refuses it.

    cargo build --release
    python3 scripts/rank_sweep.py [--bin target/release/onnx-bcast] [--op Pad]

Each model runs in a child process of its own (some abort onnxruntime), about 3 a second.
Known disagreements, where the spec decides: PRelu's slope stretching a scalar input.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RANKS = ([], [3], [2, 3], [2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 3, 3], [1, 2, 3, 3, 3, 3], [1, 2, 3, 3, 3, 3, 3])

# (op, attributes, opset, extra inputs for a shape s): "f" float inputs of the shapes given,
# "i" int64 constants of the values given (None: an absent input), "m" a list of such
# ("f" | "i" | "c" for float constants | "b" for bool ones, value) pairs, or None for no
# extra input.
ch = lambda s: s[1] if len(s) > 1 else 1  # noqa: E731 - the channels, or 1
OPS = [
    ("InstanceNormalization", {}, 17, lambda s: ("f", [[ch(s)], [ch(s)]])),
    ("BatchNormalization", {}, 15, lambda s: ("f", [[ch(s)]] * 4)),
    ("GroupNormalization", {"num_groups": 1}, 21, lambda s: ("f", [[ch(s)], [ch(s)]])),
    ("LayerNormalization", {}, 17, lambda s: ("f", [[s[-1] if s else 1]])),
    ("RMSNormalization", {}, 23, lambda s: ("f", [[s[-1] if s else 1]])),
    ("MeanVarianceNormalization", {}, 13, None),
    ("LpNormalization", {}, 17, None),
    ("Softmax", {}, 13, None),
    ("Hardmax", {}, 13, None),
    ("LogSoftmax", {}, 13, None),
    ("Flatten", {}, 13, None),
    ("GlobalAveragePool", {}, 17, None),
    ("GlobalLpPool", {}, 2, None),
    ("LpPool", {"kernel_shape": [1]}, 18, None),
    ("MaxPool", {"kernel_shape": [1]}, 12, None),
    ("AveragePool", {"kernel_shape": [1]}, 19, None),
    ("Conv", {}, 11, lambda s: ("f", [[1, ch(s)] + [1] * (len(s) - 2)])),
    ("ConvTranspose", {}, 11, lambda s: ("f", [[ch(s), 1] + [1] * (len(s) - 2)])),
    ("MaxRoiPool", {"pooled_shape": [1, 1]}, 1, lambda s: ("f", [[1, 5]])),
    ("DepthToSpace", {"blocksize": 1}, 13, None),
    ("SpaceToDepth", {"blocksize": 1}, 13, None),
    ("Trilu", {}, 14, None),
    ("Det", {}, 11, None),
    ("LRN", {"size": 1}, 13, None),
    ("ReduceSumSquare", {}, 18, None),
    ("ReduceLogSumExp", {}, 18, None),
    ("ArgMax", {}, 13, None),
    ("Einsum", {"equation": "...->..."}, 12, None),
    ("Transpose", {}, 13, None),
    ("NonZero", {}, 13, None),
    ("Dropout", {}, 13, None),
    ("DFT", {}, 17, None),
    ("EyeLike", {}, 9, None),
    ("Multinomial", {}, 7, None),
    ("DynamicQuantizeLinear", {}, 11, None),
    ("Gemm", {}, 13, lambda s: ("f", [[s[-1] if s else 1, 4]])),
    ("MatMul", {}, 13, lambda s: ("f", [[s[-1] if s else 1, 4]])),
    ("PRelu", {}, 16, lambda s: ("f", [[1]])),
    ("Concat", {"axis": 0}, 13, lambda s: ("f", [s])),
    ("GridSample", {}, 20, lambda s: ("f", [[s[0]] + [2] * (len(s) - 2) + [len(s) - 2]] if len(s) > 2 else [[1, 2]])),
    ("TopK", {}, 11, lambda s: ("i", [[1]])),
    ("Tile", {}, 13, lambda s: ("i", [[2] * len(s)])),
    ("Expand", {}, 13, lambda s: ("i", [[1] * len(s)])),
    ("Pad", {}, 18, lambda s: ("i", [[0] * (2 * len(s))])),
    ("Pad", {"mode": "reflect"}, 18, lambda s: ("i", [[1] * (2 * len(s))])),
    ("Slice", {}, 13, lambda s: ("i", [[0], [1]])),
    ("Squeeze", {}, 13, lambda s: ("i", [[0]])),
    ("Unsqueeze", {}, 13, lambda s: ("i", [[0]])),
    ("Reshape", {}, 14, lambda s: ("i", [[-1]])),
    ("Split", {}, 18, lambda s: ("i", [[1]])),
    ("ReduceSum", {}, 13, lambda s: ("i", [[0]])),
    ("CumSum", {}, 14, lambda s: ("i", [0])),
    ("CenterCropPad", {}, 18, lambda s: ("i", [[1] * len(s)])),
    ("Resize", {}, 19, lambda s: ("i", [None, None, [1] * len(s)])),
    ("Resize", {"mode": "linear"}, 19, lambda s: ("i", [None, None, [2] * len(s)])),
    ("Resize", {"mode": "cubic"}, 19, lambda s: ("i", [None, None, [2] * len(s)])),
    ("Unique", {}, 11, None),
    ("LayerNormalization", {"axis": 1}, 17, lambda s: ("f", [s[1:] or [1]])),
    ("Softmax", {"axis": 1}, 13, None),
    ("Flatten", {"axis": 2}, 13, None),
    ("Concat", {"axis": 1}, 13, lambda s: ("f", [s])),
    ("Split", {"axis": 1}, 18, lambda s: ("i", [[s[1] if len(s) > 1 else 1]])),
    ("CumSum", {}, 14, lambda s: ("i", [1])),
    ("TopK", {"axis": 1}, 11, lambda s: ("i", [[1]])),
    ("ArgMin", {"axis": 1}, 13, None),
    ("ReduceMean", {"keepdims": 0}, 18, lambda s: ("i", [[1]])),
    ("Gather", {}, 13, lambda s: ("i", [[0]])),
    ("Gather", {"axis": 1}, 13, lambda s: ("i", [0])),
    ("GatherElements", {}, 13, lambda s: ("i", [np.zeros(s, int).tolist()])),
    ("GatherND", {}, 13, lambda s: ("i", [[0] * min(len(s), 2)])),
    ("ScatterElements", {}, 18, lambda s: ("m", [("i", np.zeros(s, int).tolist()), ("f", s)])),
    ("Compress", {"axis": 1}, 11, lambda s: ("m", [("b", [True])])),
    ("ReverseSequence", {}, 10, lambda s: ("i", [[1] * (s[1] if len(s) > 1 else 1)])),
    ("MaxUnpool", {"kernel_shape": [1]}, 11, lambda s: ("i", [np.zeros(s, int).tolist()])),
    ("LpPool", {"kernel_shape": [1, 1]}, 18, None),
    ("MaxPool", {"kernel_shape": [1, 1]}, 12, None),
    ("Einsum", {"equation": "ij->ji"}, 12, None),
    ("Einsum", {"equation": "...ij->...ji"}, 12, None),
    ("Transpose", {"perm": [1, 0]}, 13, None),
    ("Unsqueeze", {}, 13, lambda s: ("i", [[-1, 1]])),
    ("Attention", {}, 23, lambda s: ("f", [s, s])),
    ("RoiAlign", {}, 16, lambda s: ("m", [("f", [1, 4]), ("i", [0])])),
    ("AffineGrid", {}, 20, lambda s: ("i", [[1, 1, 2, 2]])),
    ("STFT", {}, 17, lambda s: ("i", [1])),
    ("NonMaxSuppression", {}, 11, lambda s: ("f", [[1, 1, s[1] if len(s) > 1 else 1]])),
    ("InstanceNormalization", {}, 22, lambda s: ("f", [[1], [1]])),
    ("Col2Im", {}, 18, lambda s: ("i", [[2, 2], [1, 1]])),
    ("DeformConv", {}, 19, lambda s: ("f", [[1, ch(s)] + [1] * (len(s) - 2),
                                          [s[0] if s else 1, 2 * max(len(s) - 2, 0)] + s[2:]])),
    ("QuantizeLinear", {"axis": 1}, 13, lambda s: ("f", [[ch(s)]])),
    ("LpNormalization", {"axis": 1}, 17, None),
    ("Hardmax", {"axis": -2}, 13, None),
    ("Shape", {"start": 1, "end": -1}, 15, None),
    ("Size", {}, 13, None),
    ("Upsample", {"mode": "nearest"}, 9, lambda s: ("m", [("c", [1.0] * len(s))])),
]


def one(binary, op, attrs, opset, shape, extra):
    """What we and onnxruntime say of one model: ("ok" | "err" | "warn", message) and
    ("ran", shape) or ("fail", message). Runs in a child process."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    kind, values = extra
    pairs = values if kind == "m" else [(kind, v) for v in values]
    ins = [h.make_tensor_value_info("x", T.FLOAT, shape)]
    names, inits = ["x"], []
    for k, (kind, v) in enumerate(pairs):
        name = f"e{k}" if v is not None else ""
        names.append(name)
        if v is not None and kind == "f":
            ins.append(h.make_tensor_value_info(name, T.FLOAT, v))
        elif v is not None:
            inits.append(nh.from_array(np.array(v, dtype={"i": np.int64, "c": np.float32, "b": bool}[kind]), name))
    outs = ["y", "indices"] if op == "TopK" else ["y"]
    node = h.make_node(op, names, outs, **attrs)
    graph = h.make_graph([node], "g", ins, [onnx.ValueInfoProto(name=o) for o in outs], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=10)
    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        f.write(model.SerializeToString())
        f.flush()
        p = subprocess.run([binary, "check", f.name], capture_output=True, text=True)
    found = [line for line in p.stdout.splitlines() if "error[" in line or "runtime-differs" in line]
    ours = "err" if any("error[" in line for line in found) else ("warn" if found else "ok")
    print(json.dumps([ours, found[0][:100] if found else ""]), flush=True)
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    dims = lambda i: [d.dim_value for d in i.type.tensor_type.shape.dim]  # noqa: E731
    feeds = {i.name: np.asarray(np.random.rand(*dims(i)), dtype=np.float32) for i in graph.input}
    try:
        s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        print(json.dumps(["ran", list(s.run(None, feeds)[0].shape)]))
    except Exception as e:  # noqa: BLE001 - any refusal is an answer
        print(json.dumps(["fail", str(e).split("Status Message:")[-1].strip()[:100]]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "onnx-bcast"))
    ap.add_argument("--op", action="append", default=[])
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        return one(a.bin, *json.loads(a.one))
    bad = 0
    for op, attrs, opset, extra in OPS:
        if a.op and op not in a.op:
            continue
        for shape in RANKS:
            args = [op, attrs, opset, shape, extra(shape) if extra else ("f", [])]
            p = subprocess.run([sys.executable, __file__, "--bin", a.bin, "--one", json.dumps(args)],
                               capture_output=True, text=True, timeout=120)
            lines = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("[")]
            ours = lines[0] if lines else ["?", p.stderr[-100:]]
            ort_says = lines[1] if len(lines) > 1 else ["died", f"exit {p.returncode}"]
            wrong = (ort_says[0] != "ran" and ours[0] == "ok") or (ort_says[0] == "ran" and ours[0] == "err")
            bad += wrong
            print(f"{'BAD' if wrong else '   '} {op} {attrs} x{shape}: ours {ours[0]} {ours[1]} | ort {ort_says}",
                  flush=True)
    print(f"{bad} disagree")


if __name__ == "__main__":
    main()

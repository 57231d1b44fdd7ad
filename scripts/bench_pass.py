"""Pass speed: load + infer + save on generated 10k, 100k and 1M-node models, against
onnx.shape_inference.infer_shapes on the same models (issue 6, item 4).

Run by hand after `cargo build --release --bin onnx-bcast --example pass_loop` (needs onnx):

    python3 scripts/bench_pass.py [--sizes 10000,100000,1000000] [--runs 5]

The models are chains of broadcasting nodes (Add/Mul/Sub/Where, in turn, over small symbolic
and known shapes: x [batch,1,seq], b [4,1], c [1,seq]) written to bench/out/. onnx is timed as
onnx.load + infer_shapes + onnx.save in-process, so Python start-up is not counted against it.
onnx-bcast is timed twice: as a whole process (`annotate`: start, read, infer, write, exit),
--runs times alternating with onnx; then as library calls in one process, like onnx
(`examples/pass_loop.rs`: load, infer, annotate, save, --runs times back to back after the
alternation). The table gives medians, minimums and the ratios of the medians.
Where the time of one of ours goes: `cargo run --release --example pass_phases -- MODEL`.
"""
import argparse
import os
import statistics
import subprocess
import time

import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
BIN = os.path.join(ROOT, "target", "release", "onnx-bcast")
LOOP = os.path.join(ROOT, "target", "release", "examples", "pass_loop")


def chain(n):
    nodes = []
    prev = "x"
    ops = ["Add", "Mul", "Sub", "Where"]
    for i in range(n):
        op = ops[i % len(ops)]
        out = f"t{i}"
        if op == "Where":
            nodes.append(helper.make_node("Where", ["c", prev, "b"], [out], name=f"n{i}"))
        else:
            nodes.append(helper.make_node(op, [prev, "b"], [out], name=f"n{i}"))
        prev = out
    g = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, "seq"]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [4, 1]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [1, "seq"])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--runs", type=int, default=5, help="alternating runs of each side per size")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    print("load average before the run: %.2f %.2f %.2f" % os.getloadavg())
    print("| nodes | onnx-bcast annotate process s, median (min) | onnx-bcast in-process s, median (min) "
          "| onnx load+infer_shapes+save s, median (min) | onnx / ours, process | onnx / ours, in-process |")
    print("|---|---|---|---|---|---|")
    for n in [int(s) for s in args.sizes.split(",")]:
        path = os.path.join(OUT, f"chain_{n}.onnx")
        onnx.save(chain(n), path)
        out = os.path.join(OUT, f"chain_{n}.annotated.onnx")
        ours, theirs = [], []
        # Alternating, so that a slow spell of the machine hits both sides alike.
        for _ in range(args.runs):
            t = time.perf_counter()
            subprocess.run([BIN, "annotate", path, "-o", out], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            m = onnx.load(path)
            inferred = onnx.shape_inference.infer_shapes(m)
            onnx.save(inferred, os.path.join(OUT, f"chain_{n}.onnx_inferred.onnx"))
            theirs.append(time.perf_counter() - t)
            del m, inferred
        # The library in one process, as onnx runs: every run timed, the first (cold) included.
        done = subprocess.run([LOOP, path, os.path.join(OUT, f"chain_{n}.loop.onnx"), str(args.runs)],
                              check=True, capture_output=True, text=True)
        inproc = [float(line) for line in done.stdout.split()]
        a, b, c = statistics.median(ours), statistics.median(theirs), statistics.median(inproc)
        print(f"| {n} | {a:.3f} ({min(ours):.3f}) | {c:.3f} ({min(inproc):.3f}) | {b:.3f} ({min(theirs):.3f}) "
              f"| {b / a:.1f} | {b / c:.1f} |", flush=True)
    print("load average after the run: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()

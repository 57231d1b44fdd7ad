"""Broadcast-kernel benchmark: onnx-bcast against onnxruntime in one run.

Run by hand (needs onnx, onnxruntime, numpy):

    cargo build --release && python3 scripts/bench.py [--repeat 15] [--patterns 1,2,...] [--base BINARY]

For each float32 pattern of issue 6 it builds a small model in bench/out/, times a whole run
with `onnx-bcast bench` and with onnxruntime (IOBinding: inputs and the output pre-bound, so
neither side pays for copies), at 1 thread and at all threads, and reports ms, GB/s (inputs
read once plus output written) and the share of the machine's copy bandwidth measured in the
same run by `examples/stream.rs`. Prints a markdown table and writes bench/out/results.json.

Warm-up: at least `--warmup` runs and `--warmup-ms` of them, counted on onnxruntime, and the
same number of warm-up runs for onnx-bcast. A run of 0.1 ms is otherwise timed before the
machine is in its steady state (thread pools awake, buffers faulted in).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
BIN = os.path.join(ROOT, "target", "release", "onnx-bcast")
F, B = TensorProto.FLOAT, TensorProto.BOOL


def model(name, nodes, inputs, output, out_shape, opset=17):
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(output, F, out_shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    path = os.path.join(OUT, f"{name}.onnx")
    onnx.save(m, path)
    return path


def patterns():
    """(id, label, path, input specs, output shape)."""
    big = [8, 12, 512, 512]
    p = []
    p.append((1, "Add [4096,4096] + [4096,4096]",
              model("p1_add_same", [helper.make_node("Add", ["a", "b"], ["y"])],
                    [("a", F, [4096, 4096]), ("b", F, [4096, 4096])], "y", [4096, 4096])))
    p.append((2, "Add [4096,4096] + scalar",
              model("p2_add_scalar", [helper.make_node("Add", ["a", "b"], ["y"])],
                    [("a", F, [4096, 4096]), ("b", F, [])], "y", [4096, 4096])))
    p.append((3, "Add [64,256,56,56] + [1,256,1,1]",
              model("p3_add_channel", [helper.make_node("Add", ["a", "b"], ["y"])],
                    [("a", F, [64, 256, 56, 56]), ("b", F, [1, 256, 1, 1])], "y", [64, 256, 56, 56])))
    p.append((4, "Add [8,12,512,512] + [8,1,1,512]",
              model("p4_add_mask", [helper.make_node("Add", ["a", "b"], ["y"])],
                    [("a", F, big), ("b", F, [8, 1, 1, 512])], "y", big)))
    p.append((5, "Mul [4096,1] * [1,4096]",
              model("p5_mul_outer", [helper.make_node("Mul", ["a", "b"], ["y"])],
                    [("a", F, [4096, 1]), ("b", F, [1, 4096])], "y", [4096, 4096])))
    p.append((6, "Where(cond [1,1,512,512], x [8,12,512,512], scalar)",
              model("p6_where", [helper.make_node("Where", ["c", "x", "y0"], ["y"])],
                    [("c", B, [1, 1, 512, 512]), ("x", F, big), ("y0", F, [])], "y", big)))
    p.append((7, "((x + m) * s) - b, three nodes",
              model("p7_chain", [
                  helper.make_node("Add", ["x", "m"], ["t1"]),
                  helper.make_node("Mul", ["t1", "s"], ["t2"]),
                  helper.make_node("Sub", ["t2", "b"], ["y"])],
                  [("x", F, big), ("m", F, [8, 1, 1, 512]), ("s", F, []), ("b", F, [12, 1, 1])], "y", big)))
    p.append((8, "Expand [1,256,1,1] -> [64,256,56,56]",
              model("p8_expand", [
                  helper.make_node("Constant", [], ["shape"], value=helper.make_tensor("shape", TensorProto.INT64, [4], [64, 256, 56, 56])),
                  helper.make_node("Expand", ["a", "shape"], ["y"])],
                  [("a", F, [1, 256, 1, 1])], "y", [64, 256, 56, 56])))
    p.append((9, "Sum [1024,1024], [1024,1], [1,1024], scalar",
              model("p9_sum", [helper.make_node("Sum", ["a", "b", "c", "d"], ["y"])],
                    [("a", F, [1024, 1024]), ("b", F, [1024, 1]), ("c", F, [1, 1024]), ("d", F, [])], "y", [1024, 1024])))
    return p


def inputs_of(path, rng):
    m = onnx.load(path)
    feeds = {}
    for i in m.graph.input:
        t = i.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        if t.elem_type == B:
            feeds[i.name] = rng.random(shape) < 0.5
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
    out = m.graph.output[0]
    out_shape = [d.dim_value for d in out.type.tensor_type.shape.dim]
    return feeds, out.name, out_shape


def ort_time(path, threads, repeat, warmup, warmup_ms, rng):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feeds, out_name, out_shape = inputs_of(path, rng)
    binding = sess.io_binding()
    for k, v in feeds.items():
        binding.bind_ortvalue_input(k, ort.OrtValue.ortvalue_from_numpy(v))
    out = ort.OrtValue.ortvalue_from_shape_and_type(out_shape, np.float32)
    binding.bind_ortvalue_output(out_name, out)
    runs, start = 0, time.perf_counter()
    while runs < warmup or (time.perf_counter() - start) * 1e3 < warmup_ms:
        sess.run_with_iobinding(binding)
        runs += 1
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        sess.run_with_iobinding(binding)
        times.append((time.perf_counter() - t) * 1e3)
    nbytes = sum(v.nbytes for v in feeds.values()) + int(np.prod(out_shape)) * 4
    return statistics.median(times), nbytes, runs


def ours_time(path, threads, repeat, warmup, binary=BIN):
    r = subprocess.run([binary, "bench", path, "--threads", str(threads), "--repeat", str(repeat),
                        "--warmup", str(warmup), "--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"onnx-bcast bench failed on {path}: {r.stderr}")
    return json.loads(r.stdout)["median_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--warmup-ms", type=float, default=100.0)
    ap.add_argument("--patterns", default="1,2,3,4,5,6,7,8,9")
    ap.add_argument("--base", help="another onnx-bcast binary, timed right after this one on each pattern")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    load_start = os.getloadavg()
    probe = subprocess.run(["cargo", "run", "--release", "-q", "--example", "stream"], cwd=ROOT,
                           capture_output=True, text=True, check=True)
    stream = json.loads(probe.stdout)
    threads_all = stream["threads"]
    ceiling = max(stream[f"nt_copy_gbs_t{threads_all}"], stream[f"copy_gbs_t{threads_all}"])
    wanted = {int(x) for x in args.patterns.split(",")}
    rng = np.random.default_rng(0)
    rows = []
    for pid, label, path in patterns():
        if pid not in wanted:
            continue
        for threads in sorted({1, threads_all}):
            ort_ms, nbytes, warmup = ort_time(path, threads, args.repeat, args.warmup, args.warmup_ms, rng)
            our_ms = ours_time(path, threads, args.repeat, warmup)
            base_ms = ours_time(path, threads, args.repeat, warmup, args.base) if args.base else None
            gbs = nbytes / (our_ms / 1e3) / 1e9
            rows.append({"pattern": pid, "label": label, "threads": threads, "ours_ms": our_ms,
                         "ort_ms": ort_ms, "speedup": ort_ms / our_ms, "ours_gbs": gbs,
                         "ort_gbs": nbytes / (ort_ms / 1e3) / 1e9, "share": gbs / ceiling, "base_ms": base_ms})
    load_end = os.getloadavg()
    print(f"load average (1/5/15 min): {load_start[0]:.2f}/{load_start[1]:.2f}/{load_start[2]:.2f} at the start, "
          f"{load_end[0]:.2f}/{load_end[1]:.2f}/{load_end[2]:.2f} at the end\n")
    print(f"STREAM probe: {json.dumps(stream)}; ceiling used: {ceiling:.1f} GB/s (best copy at {threads_all} threads)\n")
    base = " base ms | base / ours |" if args.base else ""
    print(f"| # | pattern | threads | onnx-bcast ms | onnxruntime ms | ORT time / ours | GB/s | share of ceiling |{base}")
    print("|---|---|---|---|---|---|---|---|" + ("---|---|" if args.base else ""))
    for r in rows:
        extra = f" {r['base_ms']:.2f} | {r['base_ms'] / r['ours_ms']:.2f} |" if args.base else ""
        print(f"| {r['pattern']} | {r['label']} | {r['threads']} | {r['ours_ms']:.2f} | {r['ort_ms']:.2f} | "
              f"{r['speedup']:.2f} | {r['ours_gbs']:.1f} | {r['share'] * 100:.0f}% |{extra}")
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump({"stream": stream, "ceiling_gbs": ceiling, "load_start": load_start, "load_end": load_end,
                   "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

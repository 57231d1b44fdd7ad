"""Pass speed as a user meets it: `onnx-bcast check` and `onnx-bcast annotate` (and `infer`,
`expand`, `implicit`), each a whole process, on generated chains of 10k, 100k and 1M broadcasting nodes; against another build of
onnx-bcast (`--base`, optional) and, for reference, onnx's shape inference.

    cargo build --release
    python3 scripts/bench_pass.py [--base OLD_BINARY] [--sizes 10000,100000,1000000] [--runs 11]

The models are chains of Add/Mul/Sub/Where over x [batch,1,seq], b [4,1], c [1,seq], written
to target/bench/. Every round runs each side once, in turn (ours, the base, onnx), so that a
slow spell of the machine hits every side alike; every run counts. onnx is timed in this
process (`onnx.load` + `infer_shapes` for check; plus `onnx.save` for annotate), which leaves
out Python's start-up and onnx's import. Peak memory is each process's maximum resident set
as `/usr/bin/time -v` reports it (the median over the runs).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "target", "bench")
BIN = os.path.join(ROOT, "target", "release", "onnx-bcast")


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


def process(cmd):
    """Seconds and peak resident set (MB) of one run of `cmd` under /usr/bin/time -v."""
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t
    if r.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr[-2000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1)) / 1024
    return seconds, rss


def in_process(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t, None


def cell(runs):
    xs = [s for s, _ in runs]
    return f"{statistics.median(xs) * 1e3:.1f} ({min(xs) * 1e3:.1f})"


def rss(runs):
    return f"{statistics.median([m for _, m in runs]):.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=BIN)
    ap.add_argument("--base", help="another onnx-bcast binary to compare with")
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--runs", type=int, default=11, help="alternating rounds per size and command")
    ap.add_argument("--commands", default="check,annotate",
                    help="of check, annotate, infer (prints every tensor; onnx's side is as for check), expand "
                         "and implicit (of the expanded chain; onnx has no such pass)")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    print("load average before the run: %.2f %.2f %.2f" % os.getloadavg())
    print("milliseconds, median (min) of %d runs; peak RSS in MB (median)\n" % args.runs)
    head = "| nodes | command | ours | ours: RSS |"
    if args.base:
        head += " base | base: RSS | base / ours |"
    head += " onnx in process | onnx / ours |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for n in [int(s) for s in args.sizes.split(",")]:
        path = os.path.join(OUT, f"chain_{n}.onnx")
        if not os.path.exists(path):
            onnx.save(chain(n), path)
        out = os.path.join(OUT, f"chain_{n}.annotated.onnx")
        theirs_out = os.path.join(OUT, f"chain_{n}.onnx_inferred.onnx")

        def onnx_check():
            onnx.shape_inference.infer_shapes(onnx.load(path))

        def onnx_annotate():
            onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), theirs_out)

        expanded = os.path.join(OUT, f"chain_{n}.expanded.onnx")
        sides = {"check": onnx_check, "infer": onnx_check, "annotate": onnx_annotate, "expand": None, "implicit": None}
        for command in args.commands.split(","):
            theirs_f = sides[command]
            model = path
            if command == "implicit":
                model = expanded
                if not os.path.exists(expanded):
                    subprocess.run([args.bin, "expand", path, "-o", expanded], check=True, stderr=subprocess.DEVNULL)
            extra = {"annotate": ["-o", out], "expand": ["-o", expanded + ".again.onnx"],
                     "implicit": ["-o", os.path.join(OUT, f"chain_{n}.implicit.onnx")]}.get(command, [])
            ours, base, theirs = [], [], []
            for _ in range(args.runs):
                ours.append(process([args.bin, command, model, *extra]))
                if args.base:
                    base.append(process([args.base, command, model, *extra]))
                if theirs_f:
                    theirs.append(in_process(theirs_f))
            med = lambda xs: statistics.median([s for s, _ in xs])  # noqa: E731
            row = f"| {n} | {command} | {cell(ours)} | {rss(ours)} |"
            if args.base:
                row += f" {cell(base)} | {rss(base)} | {med(base) / med(ours):.2f}x |"
            row += f" {cell(theirs)} | {med(theirs) / med(ours):.1f}x |" if theirs else " - | - |"
            print(row, flush=True)
    print("\nload average after the run: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()

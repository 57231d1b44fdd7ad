"""Pass speed: load + infer + save on generated 10k, 100k and 1M-node models, against
onnx.shape_inference.infer_shapes on the same models (issue 6, item 4).

Run by hand after `cargo build --release --bin onnx-bcast --example pass_loop` (needs onnx):

    python3 scripts/bench_pass.py [--sizes 10000,100000,1000000] [--runs 11]

The models are chains of broadcasting nodes (Add/Mul/Sub/Where, in turn, over small symbolic
and known shapes: x [batch,1,seq], b [4,1], c [1,seq]) written to bench/out/. Each side is
timed two ways, so that like is compared with like:

- as a process: `onnx-bcast annotate` (start, read, infer, write, exit) against a Python
  process that imports onnx and runs onnx.load + infer_shapes + onnx.save;
- in one process: onnx.load + infer_shapes + onnx.save in this script, against the library
  calls run back to back (`examples/pass_loop.rs`: load, infer, annotate, save), once under
  glibc's default allocation policy and once under the CLI's (freed memory kept for reuse,
  set here through glibc's environment variables, which the CLI sets with `mallopt`).

All runs alternate, --runs rounds of: our process, onnx in-process, our library under each
policy (two `pass_loop` processes kept open, each running once per line it reads), onnx's
process; so a slow spell of the machine hits every side alike. Every run is counted, the
first (cold) ones included.
The table gives medians, minimums and the ratios of the medians; the last ratio sets our
process against onnx in-process, which does not count Python's start-up or onnx's import.
Where the time of one of ours goes: `cargo run --release --example pass_phases -- MODEL`.
"""
import argparse
import os
import statistics
import subprocess
import sys
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


# The CLI's allocation policy (src/cli/memory.rs, `keep_freed_memory`) as glibc's variables.
CLI_POLICY = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(2**31 - 1), "MALLOC_TOP_PAD_": str(64 << 20)}

# onnx's side as a process: what a user running the same job from a shell waits for.
ONNX_PROCESS = (
    "import sys, onnx\n"
    "onnx.save(onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1])), sys.argv[2])\n"
)


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


class Loop:
    """Our library in one process (`pass_loop` reading a line per run), under `env`."""

    def __init__(self, path, out, env=None):
        self.p = subprocess.Popen([LOOP, path, out, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=dict(os.environ, **(env or {})))

    def run(self):
        """The seconds of one run, as the loop timed it."""
        self.p.stdin.write("\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            sys.exit(f"pass_loop ended with status {self.p.wait()}")
        return float(line)

    def close(self):
        self.p.stdin.close()
        if self.p.wait() != 0:
            sys.exit(f"pass_loop ended with status {self.p.returncode}")


def cell(xs):
    return f"{statistics.median(xs) * 1e3:.1f} ({min(xs) * 1e3:.1f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--runs", type=int, default=11, help="alternating runs of each side per size")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    print("load average before the run: %.2f %.2f %.2f" % os.getloadavg())
    print("milliseconds, median (min):\n")
    print("| nodes | ours: `annotate` process | ours: in process, glibc default | ours: in process, CLI policy "
          "| onnx: in process | onnx: process | process / process | in / in, default | in / in, CLI policy "
          "| onnx in process / our process |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in [int(s) for s in args.sizes.split(",")]:
        path = os.path.join(OUT, f"chain_{n}.onnx")
        onnx.save(chain(n), path)
        out = os.path.join(OUT, f"chain_{n}.annotated.onnx")
        theirs_out = os.path.join(OUT, f"chain_{n}.onnx_inferred.onnx")
        ours, theirs, theirs_proc, default, policy = [], [], [], [], []
        quiet = dict(check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def onnx_in_process():
            m = onnx.load(path)
            onnx.save(onnx.shape_inference.infer_shapes(m), theirs_out)

        loop_out = os.path.join(OUT, f"chain_{n}.loop.onnx")
        loops = Loop(path, loop_out), Loop(path, loop_out, CLI_POLICY)
        for _ in range(args.runs):
            ours.append(timed(lambda: subprocess.run([BIN, "annotate", path, "-o", out], **quiet)))
            theirs.append(timed(onnx_in_process))
            default.append(loops[0].run())
            policy.append(loops[1].run())
            theirs_proc.append(timed(lambda: subprocess.run(
                [sys.executable, "-c", ONNX_PROCESS, path, theirs_out], **quiet)))
        for lp in loops:
            lp.close()
        med = statistics.median
        print(f"| {n} | {cell(ours)} | {cell(default)} | {cell(policy)} | {cell(theirs)} | {cell(theirs_proc)} "
              f"| {med(theirs_proc) / med(ours):.1f}x | {med(theirs) / med(default):.1f}x "
              f"| {med(theirs) / med(policy):.1f}x | {med(theirs) / med(ours):.1f}x |", flush=True)
    print("\nload average after the run: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()

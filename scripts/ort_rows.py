"""Runs the rows of tests/it/ort_cases.rs under onnxruntime, to check that each expected value
is onnxruntime's: the output shape of `y`, or `None` where onnxruntime refuses the model; of a
runtime-differs row, that onnxruntime refuses it or gives `y` another shape than the spec's.

    ONNX_BCAST_ORT_ROWS=/tmp/rows cargo test --test it ort_cases
    python3 scripts/ort_rows.py /tmp/rows

Inputs are fed 0.5 (floats) or zeros (integers), so a row whose outcome depends on the values
fed can differ; the rows say so where that is known (SwiGLU: onnxruntime has no Swish-24
kernel). A row onnxruntime dies on counts as refused.
"""
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

NP = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
      "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int16)": np.int16, "tensor(int8)": np.int8,
      "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_, "tensor(string)": object}


def run(path):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    inits = {i.name for i in onnx.load(path).graph.initializer}
    try:
        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in s.get_inputs():
            if i.name in inits:
                continue
            dt = NP[i.type]
            feeds[i.name] = np.full(i.shape, 0.5, dt) if dt in (np.float32, np.float64, np.float16) else np.zeros(i.shape, dt)
        return "Some(%s)" % list(s.run(["y"], feeds)[0].shape)
    except Exception:
        return "None"


def child(paths):
    """Runs `paths` in order, one result line each; a row that kills onnxruntime ends it."""
    for path in paths:
        print(run(path), flush=True)


def main():
    rows = sorted(glob.glob(os.path.join(sys.argv[1], "*.onnx")))
    got, differ = [], 0
    # A child process runs the rows; a row onnxruntime dies on (STFT of an empty frame raises
    # SIGFPE) counts as refused, and a new child goes on after it.
    while len(got) < len(rows):
        rest = rows[len(got):]
        p = subprocess.run([sys.executable, __file__, "--child", *rest], capture_output=True, text=True)
        got += p.stdout.splitlines()
        if len(got) < len(rows):
            got.append("None")
    for path, outcome in zip(rows, got):
        want, outcome = open(path[:-5] + ".want").read().replace(" ", ""), outcome.replace(" ", "")
        # A runtime-differs row: onnxruntime refuses it or gives y another shape than the spec.
        if want.startswith("Differs("):
            bad = outcome == "Some" + want[len("Differs"):]
        else:
            bad = want != outcome
        if bad:
            differ += 1
            print(f"DIFF {os.path.basename(path)[:-5]}: the row says {want}, onnxruntime {outcome}")
    print(f"{len(rows)} rows, {differ} differ")


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(sys.argv[2:])
    else:
        main()

"""Generates the executor's small test models in tests/data/exec (committed) and, with
--bench DIR, the large Add model and inputs used for the peak-memory measurement.

    python3 scripts/gen_exec_fixtures.py
    python3 scripts/gen_exec_fixtures.py --bench /tmp/addmem
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "exec")


def save(model, path):
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)


def expand_huge():
    # Expand a 1-element float32 tensor to [1000000, 1000000]: 4e12 bytes, over any budget.
    shape = numpy_helper.from_array(np.array([1000000, 1000000], dtype=np.int64), "shape")
    node = helper.make_node("Expand", ["x", "shape"], ["y"], name="expand_huge")
    graph = helper.make_graph(
        [node],
        "expand_huge",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1000000, 1000000])],
        [shape],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def add_big():
    # Add([64,256,56,56], [1,256,1,1]): the peak-memory measurement of issue 5.
    node = helper.make_node("Add", ["x", "b"], ["y"], name="add_bias")
    graph = helper.make_graph(
        [node],
        "add_big",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256, 56, 56]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 256, 1, 1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 256, 56, 56])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", help="also write add_big.onnx and its .npy inputs here")
    args = ap.parse_args()
    save(expand_huge(), os.path.join(OUT, "expand_huge.onnx"))
    if args.bench:
        os.makedirs(args.bench, exist_ok=True)
        save(add_big(), os.path.join(args.bench, "add_big.onnx"))
        rng = np.random.default_rng(0)
        np.save(os.path.join(args.bench, "x.npy"), rng.standard_normal((64, 256, 56, 56), dtype=np.float32))
        np.save(os.path.join(args.bench, "b.npy"), rng.standard_normal((1, 256, 1, 1), dtype=np.float32))


if __name__ == "__main__":
    main()

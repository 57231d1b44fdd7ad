"""Generates the small sample models in models/ (run by hand: python3 models/make_models.py).

Needs the onnx package only. The models are committed; tests and the README use them.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def save(model, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def attention_mask():
    """The README's example: scores + mask with symbolic batch and seq, then a scale."""
    g = helper.make_graph(
        [
            helper.make_node("Add", ["x", "mask"], ["scores"], name="add_mask"),
            helper.make_node("Mul", ["scores", "scale"], ["scaled"], name="scale"),
            helper.make_node("Where", ["keep", "scaled", "neg"], ["masked"], name="select"),
        ],
        "attention",
        [
            helper.make_tensor_value_info("x", F, ["batch", 12, "seq", "seq"]),
            helper.make_tensor_value_info("mask", F, ["batch", 1, 1, "seq"]),
            helper.make_tensor_value_info("keep", TensorProto.BOOL, [1, 1, "seq", "seq"]),
        ],
        [helper.make_tensor_value_info("masked", F, ["batch", 12, "seq", "seq"])],
        [
            numpy_helper.from_array(np.array(0.125, dtype=np.float32), "scale"),
            numpy_helper.from_array(np.array(-1e9, dtype=np.float32), "neg"),
        ],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_models.py")
    m.ir_version = 8
    save(m, "attention_mask.onnx")


def nary_sum():
    """The seed's Broadcast(X1..XN) through Sum, Max, Min and Mean."""
    ins = [("a", [8, 1, 6, 1]), ("b", [7, 1, 5]), ("c", [1]), ("d", [6, 5])]
    nodes = [helper.make_node(op, [n for n, _ in ins], [op.lower()], name=op.lower()) for op in ["Sum", "Max", "Min", "Mean"]]
    g = helper.make_graph(
        nodes,
        "nary",
        [helper.make_tensor_value_info(n, F, s) for n, s in ins],
        [helper.make_tensor_value_info(op.lower(), F, [8, 7, 6, 5]) for op in ["Sum", "Max", "Min", "Mean"]],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_models.py")
    m.ir_version = 7
    save(m, "nary_sum.onnx")


def legacy_opset6():
    """Opset-6 `broadcast=1` with and without `axis` (XLA's broadcast_dimensions)."""
    g = helper.make_graph(
        [
            helper.make_node("Add", ["A", "B"], ["suffix"], name="add_suffix", broadcast=1),
            helper.make_node("Mul", ["A", "C"], ["axis1"], name="mul_axis1", broadcast=1, axis=1),
            helper.make_node("Sub", ["A", "s"], ["scalar"], name="sub_scalar", broadcast=1),
        ],
        "legacy",
        [
            helper.make_tensor_value_info("A", F, [2, 3, 4, 5]),
            helper.make_tensor_value_info("B", F, [4, 5]),
            helper.make_tensor_value_info("C", F, [3, 4]),
            helper.make_tensor_value_info("s", F, []),
        ],
        [helper.make_tensor_value_info(n, F, [2, 3, 4, 5]) for n in ["suffix", "axis1", "scalar"]],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 6)], producer_name="make_models.py")
    m.ir_version = 3
    save(m, "legacy_opset6.onnx")


def broken():
    """A model `check` must reject: 3 against 4 on the last axis."""
    g = helper.make_graph(
        [
            helper.make_node("Add", ["x", "y"], ["ok"], name="add_ok"),
            helper.make_node("Add", ["ok", "z"], ["bad"], name="add_bad"),
        ],
        "broken",
        [
            helper.make_tensor_value_info("x", F, ["batch", 3]),
            helper.make_tensor_value_info("y", F, [1, 3]),
            helper.make_tensor_value_info("z", F, [2, 4]),
        ],
        [helper.make_tensor_value_info("bad", F, ["batch", 3])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_models.py")
    m.ir_version = 8
    # The checker runs shape inference only when asked; onnx accepts this model.
    save(m, "broken.onnx")


def subgraph_if():
    """An If whose branches broadcast against an outer-scope value."""
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "bias"], ["t"], name="then_add")], "then",
        [], [helper.make_tensor_value_info("t", F, ["batch", 16])])
    else_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "bias"], ["e"], name="else_mul")], "else",
        [], [helper.make_tensor_value_info("e", F, ["batch", 16])])
    g = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)],
        "with_if",
        [
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", F, ["batch", 16]),
            helper.make_tensor_value_info("bias", F, [16]),
        ],
        [helper.make_tensor_value_info("y", F, ["batch", 16])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_models.py")
    m.ir_version = 8
    save(m, "subgraph_if.onnx")


if __name__ == "__main__":
    attention_mask()
    nary_sum()
    legacy_opset6()
    broken()
    subgraph_if()

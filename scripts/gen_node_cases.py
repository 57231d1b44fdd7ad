#!/usr/bin/env python3
"""Generate the ONNX backend node test cases as offline test data.

Run by hand from the repository root (or anywhere):

    python3 scripts/gen_node_cases.py

Requires the `onnx` Python package (the data checked in was produced with
onnx 1.23.2) and numpy.  The output is deterministic: re-running it with the
same onnx version rewrites byte-identical files.

Outputs
-------
tests/data/node/<case>/model.onnx
tests/data/node/<case>/test_data_set_0/{input,output}_K.pb
    Written exactly like onnx's `backend/test/cmd_tools.py generate-data`
    (TensorProto via numpy_helper.from_array, SequenceProto via from_list,
    OptionalProto via from_optional, MapProto via from_dict).  The data set is
    only written when the case belongs to the broadcasting family, or when its
    serialized inputs+outputs total <= DATA_LIMIT_BYTES.
tests/data/node/manifest.json
tests/data/legacy/<case>/...   (verbatim copy of the opset-6 pytorch-operator
                                broadcast cases shipped in the onnx wheel)
tests/data/legacy/manifest.json

Broadcasting family
-------------------
A case is in the broadcasting family when its top-level graph consists of
exactly one node and that node's op_type (default domain) is one of FAMILY_OPS.
With onnx 1.23.2 this gives 213 cases.  It is the same set as "the case named
after a family op (test_<op> / test_<op>_* / test_and2d ...), excluding the
`_expanded` function-expansion variants".
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
NODE_DIR = os.path.join(REPO, "tests", "data", "node")
LEGACY_DIR = os.path.join(REPO, "tests", "data", "legacy")

# Cases outside the broadcasting family keep their data set only if the
# serialized input_K.pb + output_K.pb files total at most this many bytes.
DATA_LIMIT_BYTES = 64 * 1024

FAMILY_OPS = frozenset(
    [
        "Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift",
        "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
        "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual",
        "Max", "Min", "Sum", "Mean", "Where", "Expand", "PRelu",
    ]
)  # fmt: skip

LEGACY_CASES = [
    "test_operator_add_broadcast",
    "test_operator_add_size1_broadcast",
    "test_operator_add_size1_right_broadcast",
    "test_operator_add_size1_singleton_broadcast",
    "test_operator_addconstant",
    "test_operator_addmm",
]

# ONNX tensor element types whose numpy dtype name is the standard numpy one.
_NUMPY_NAMES = {
    TensorProto.FLOAT: "float32",
    TensorProto.DOUBLE: "float64",
    TensorProto.FLOAT16: "float16",
    TensorProto.INT8: "int8",
    TensorProto.INT16: "int16",
    TensorProto.INT32: "int32",
    TensorProto.INT64: "int64",
    TensorProto.UINT8: "uint8",
    TensorProto.UINT16: "uint16",
    TensorProto.UINT32: "uint32",
    TensorProto.UINT64: "uint64",
    TensorProto.BOOL: "bool",
    TensorProto.COMPLEX64: "complex64",
    TensorProto.COMPLEX128: "complex128",
    TensorProto.STRING: "string",
}


def elem_type_name(elem_type: int) -> str:
    """numpy dtype name for standard types, else the lower-cased ONNX name
    (bfloat16, float8e4m3fn, float8e5m2, int4, uint4, float4e2m1, ...)."""
    if elem_type in _NUMPY_NAMES:
        return _NUMPY_NAMES[elem_type]
    return TensorProto.DataType.Name(elem_type).lower()


def np_dtype_name(dtype: np.dtype) -> str:
    if dtype == object or dtype.kind in ("U", "S"):
        return "string"
    return elem_type_name(helper.np_dtype_to_tensor_dtype(dtype))


def is_family(model: onnx.ModelProto) -> bool:
    nodes = model.graph.node
    return (
        len(nodes) == 1
        and nodes[0].domain in ("", "ai.onnx")
        and nodes[0].op_type in FAMILY_OPS
    )


def model_info(model: onnx.ModelProto) -> dict:
    return {
        "ops": sorted({n.op_type for n in model.graph.node}),
        "opsets": {o.domain: int(o.version) for o in model.opset_import},
        "ir_version": int(model.ir_version),
        "broadcast_family": is_family(model),
    }


def output_kind(type_proto: onnx.TypeProto) -> str:
    which = type_proto.WhichOneof("value")
    return {
        "tensor_type": "tensor",
        "sequence_type": "sequence",
        "optional_type": "optional",
    }.get(which, "other")


def describe_value(name: str, type_proto: onnx.TypeProto, value) -> dict:
    """Describe an expected output value (numpy array / scalar / TensorProto)."""
    kind = output_kind(type_proto)
    dtype = shape = None
    if kind == "tensor":
        if isinstance(value, TensorProto):
            dtype = elem_type_name(value.data_type)
            shape = [int(d) for d in value.dims]
        else:
            arr = value
            dtype = np_dtype_name(np.asarray(arr).dtype)
            shape = [int(d) for d in np.shape(arr)]
    return {"name": name, "kind": kind, "dtype": dtype, "shape": shape}


def serialize_value(value, value_info: onnx.ValueInfoProto) -> bytes:
    """Same conversion as onnx/backend/test/cmd_tools.py generate_data."""
    t = value_info.type
    name = value_info.name
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, name).SerializeToString()
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, name).SerializeToString()
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, name).SerializeToString()
    assert t.HasField("tensor_type"), name
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()


def reset_dir(path: str) -> None:
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(path)


def write_bytes(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def write_manifest(path: str, cases: list[dict]) -> None:
    doc = {
        "onnx_version": onnx.__version__,
        "cases": sorted(cases, key=lambda c: c["name"]),
    }
    # One case per line: compact, valid JSON, and diff-friendly.
    lines = [
        json.dumps(c, ensure_ascii=True, separators=(",", ":")) for c in doc["cases"]
    ]
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write('{"onnx_version":' + json.dumps(doc["onnx_version"]) + ',"cases":[\n')
        f.write(",\n".join(lines))
        f.write("\n]}\n")


def gen_node_cases() -> list[dict]:
    from onnx.backend.test.case import node as node_cases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            cases = node_cases.collect_testcases()

    reset_dir(NODE_DIR)
    manifest = []
    for case in sorted(cases, key=lambda c: c.name):
        assert case.kind == "node" and case.model is not None, case.name
        assert case.data_sets and len(case.data_sets) == 1, case.name
        model = case.model
        case_dir = os.path.join(NODE_DIR, case.name)
        os.makedirs(case_dir)
        write_bytes(os.path.join(case_dir, "model.onnx"), model.SerializeToString())

        inputs, outputs = case.data_sets[0]
        g = model.graph
        assert len(inputs) == len(g.input), case.name
        assert len(outputs) == len(g.output), case.name
        files = {}
        for j, v in enumerate(inputs):
            files[f"input_{j}.pb"] = serialize_value(v, g.input[j])
        for j, v in enumerate(outputs):
            files[f"output_{j}.pb"] = serialize_value(v, g.output[j])

        info = model_info(model)
        total = sum(len(b) for b in files.values())
        has_data = info["broadcast_family"] or total <= DATA_LIMIT_BYTES
        if has_data:
            ds = os.path.join(case_dir, "test_data_set_0")
            os.makedirs(ds)
            for fname in sorted(files):
                write_bytes(os.path.join(ds, fname), files[fname])

        manifest.append(
            {
                "name": case.name,
                **info,
                "has_data": has_data,
                "outputs": [
                    describe_value(vi.name, vi.type, v)
                    for vi, v in zip(g.output, outputs)
                ],
            }
        )
    write_manifest(os.path.join(NODE_DIR, "manifest.json"), manifest)
    return manifest


def load_pb_value(path: str, type_proto: onnx.TypeProto):
    with open(path, "rb") as f:
        data = f.read()
    which = type_proto.WhichOneof("value")
    if which == "sequence_type":
        p = onnx.SequenceProto()
        p.ParseFromString(data)
        return p
    if which == "optional_type":
        p = onnx.OptionalProto()
        p.ParseFromString(data)
        return p
    p = TensorProto()
    p.ParseFromString(data)
    return p


def gen_legacy_cases() -> list[dict]:
    src_root = os.path.join(
        os.path.dirname(onnx.__file__), "backend", "test", "data", "pytorch-operator"
    )
    reset_dir(LEGACY_DIR)
    manifest = []
    for name in LEGACY_CASES:
        src = os.path.join(src_root, name)
        dst = os.path.join(LEGACY_DIR, name)
        os.makedirs(dst)
        shutil.copyfile(os.path.join(src, "model.onnx"), os.path.join(dst, "model.onnx"))
        data_sets = sorted(
            d for d in os.listdir(src) if d.startswith("test_data_set_")
        )
        for ds in data_sets:
            os.makedirs(os.path.join(dst, ds))
            for fname in sorted(os.listdir(os.path.join(src, ds))):
                shutil.copyfile(
                    os.path.join(src, ds, fname), os.path.join(dst, ds, fname)
                )
        model = onnx.load(os.path.join(dst, "model.onnx"))
        outputs = []
        for j, vi in enumerate(model.graph.output):
            p = os.path.join(dst, data_sets[0], f"output_{j}.pb") if data_sets else None
            value = (
                load_pb_value(p, vi.type) if p and os.path.exists(p) else None
            )
            if output_kind(vi.type) == "tensor" and value is not None:
                outputs.append(describe_value(vi.name, vi.type, value))
            else:
                outputs.append(
                    {"name": vi.name, "kind": output_kind(vi.type), "dtype": None, "shape": None}
                )
        manifest.append(
            {
                "name": name,
                **model_info(model),
                "has_data": bool(data_sets),
                "outputs": outputs,
            }
        )
    write_manifest(os.path.join(LEGACY_DIR, "manifest.json"), manifest)
    return manifest


def main() -> int:
    if onnx.__version__ != "1.23.2":
        print(
            f"warning: data was generated with onnx 1.23.2, running {onnx.__version__}",
            file=sys.stderr,
        )
    node = gen_node_cases()
    legacy = gen_legacy_cases()
    all_tensor = [
        c for c in node if all(o["kind"] == "tensor" for o in c["outputs"])
    ]
    fam = [c for c in node if c["broadcast_family"]]
    print(f"node cases: {len(node)} (all-tensor outputs: {len(all_tensor)})")
    print(f"broadcasting-family node cases: {len(fam)}")
    print(f"node cases with data: {sum(c['has_data'] for c in node)}")
    print(f"legacy cases: {len(legacy)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

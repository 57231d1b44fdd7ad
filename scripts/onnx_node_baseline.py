#!/usr/bin/env python3
"""onnx's own shape inference over the backend node cases in tests/data/node, for the figure
tests/it/node_cases.rs compares against. Counts the cases with only tensor outputs (1,859) whose
every output shape comes out exact, in four settings: declared output types stripped or kept,
and with or without onnx's data propagation.

    python3 scripts/onnx_node_baseline.py      # onnx 1.23.2: strip 1295, keep 1852

The manifest pins the onnx version the data came from; run this with the same version.
"""
import json
import pathlib

import onnx
from onnx import shape_inference

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "node"


def shape_of(t):
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]


def main():
    manifest = json.loads((ROOT / "manifest.json").read_text())
    print(f"onnx {onnx.__version__}; data from onnx {manifest['onnx_version']}")
    cases = [c for c in manifest["cases"] if all(o["kind"] == "tensor" for o in c["outputs"])]
    for setting in ["strip", "strip+data_prop", "keep", "keep+data_prop"]:
        exact, missed = 0, []
        for c in cases:
            m = onnx.load(str(ROOT / c["name"] / "model.onnx"))
            if setting.startswith("strip"):
                for o in m.graph.output:
                    o.type.Clear()
                del m.graph.value_info[:]
            try:
                inferred = shape_inference.infer_shapes(m, data_prop=setting.endswith("data_prop"))
            except Exception:  # noqa: BLE001 - a failure is a miss
                missed.append(c["name"])
                continue
            if all(shape_of(d.type) == o["shape"] for o, d in zip(c["outputs"], inferred.graph.output)):
                exact += 1
            else:
                missed.append(c["name"])
        print(f"{setting:16} exact {exact} of {len(cases)}")
        if setting == "keep":
            print("  not exact:", " ".join(missed))


if __name__ == "__main__":
    main()

"""Element-type checks against onnxruntime: for every op schema of the standard domains (each
version), one-node models whose inputs take element types that are allowed and consistent,
that bind one type variable to two types, that fall outside an input's type constraint, or
whose one input is of a kind (tensor, sequence, optional) its constraint does not take.
onnxruntime refuses a model whose node breaks its schema's type constraints with a
"Type Error"; `onnx-bcast check` should report `type-mismatch` or `type-unsupported` for
exactly those. A model onnxruntime refuses for another reason (a missing attribute, a bad
shape, a type error inside the function body it inlines for the op) says nothing about the
node's types and is not counted.

Run by hand (needs onnx and onnxruntime):

    cargo build --bin onnx-bcast
    python3 scripts/type_oracle.py [--bin target/debug/onnx-bcast] [--seed 1]

Prints the counts, then every disagreement: "flagged, loads" (a finding onnxruntime does not
share: a false alarm) and "type error, not flagged" (one we miss).
"""
import argparse
import json
import os
import random
import subprocess
import tempfile

import onnx
import onnxruntime as ort
from onnx import TensorProto, defs, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The newest opsets onnxruntime 1.32 loads; above them it refuses every model alike.
ORT_NEWEST = {"": 28, "ai.onnx.ml": 5}


def code(type_str):
    if type_str.startswith("tensor(") and type_str.endswith(")"):
        return TensorProto.DataType.Value(type_str[7:-1].upper())
    return None


def sets(schema):
    """Per formal input: (type variable or None, allowed element-type codes)."""
    allowed = {t.type_param_str: t.allowed_type_strs for t in schema.type_constraints}
    out = []
    for f in schema.inputs:
        strs = allowed.get(f.type_str, [f.type_str])
        codes = sorted({c for c in map(code, strs) if c is not None})
        var = f.type_str if f.type_str in allowed else None
        if f.option == defs.OpSchema.FormalParameterOption.Variadic and not f.is_homogeneous:
            var = None
        out.append((var, codes))
    return out


def slots(schema, rng):
    """How many input slots to fill: the required ones, a variadic input two or three times."""
    n = max(schema.min_input, 1) if schema.inputs else 0
    if schema.inputs and schema.inputs[-1].option == defs.OpSchema.FormalParameterOption.Variadic:
        n = max(n, len(schema.inputs) - 1 + rng.choice([2, 3]))
    return n


def types(schema, n, mode, rng):
    """Element types for `n` slots, or None when the mode cannot be made for this schema."""
    formal = sets(schema)
    if not formal or any(not codes for _, codes in formal):
        return None
    per_slot = [formal[min(i, len(formal) - 1)] for i in range(n)]
    chosen, picks = {}, []
    for var, codes in per_slot:
        if var is not None and var in chosen:
            picks.append(chosen[var])
        else:
            picks.append(rng.choice(codes))
            if var is not None:
                chosen[var] = picks[-1]
    if mode == "valid":
        return picks
    if mode == "mismatch":
        shared = [i for i, (var, _) in enumerate(per_slot) if var is not None
                  and sum(1 for v, _ in per_slot if v == var) > 1 and len(per_slot[i][1]) > 1]
        if not shared:
            return None
        i = rng.choice(shared[1:] or shared)
        others = [c for c in per_slot[i][1] if c != picks[i]]
        picks[i] = rng.choice(others)
        return picks
    i = rng.randrange(n)
    # The element types of ONNX's first sixteen codes (float32 to bfloat16).
    outside = [c for c in range(1, 17) if c not in per_slot[i][1]]
    if not outside:
        return None
    picks[i] = rng.choice(outside)
    return picks


def type_proto(t):
    """The TypeProto of a schema's type string ("seq(tensor(float))"); None for maps and the like."""
    if t.startswith("tensor("):
        c = code(t)
        return helper.make_tensor_type_proto(c, [2, 3]) if c else None
    for kind, make in (("seq(", helper.make_sequence_type_proto), ("optional(", helper.make_optional_type_proto)):
        if t.startswith(kind):
            inner = type_proto(t[len(kind):-1])
            return make(inner) if inner else None
    return None


def wrong_kind(schema, rng):
    """Input types for one model of mode "kind": every slot of a type its schema allows, but one
    of a kind (tensor, sequence, optional) it does not; None when the schema gives no such slot."""
    allowed = {t.type_param_str: t.allowed_type_strs for t in schema.type_constraints}
    n = slots(schema, rng)
    per_slot, chosen = [], {}
    for i in range(n):
        f = schema.inputs[min(i, len(schema.inputs) - 1)]
        strs = list(allowed.get(f.type_str, [f.type_str]))
        if f.type_str not in chosen:
            ok = [t for t in strs if type_proto(t)]
            if not ok:
                return None
            chosen[f.type_str] = rng.choice(ok)
        per_slot.append((strs, chosen[f.type_str]))
    kinds = lambda strs: {t.split("(")[0] for t in strs}  # noqa: E731
    candidates = [i for i, (strs, _) in enumerate(per_slot)
                  if not kinds(strs) & {"map", "sparse_tensor"} and not kinds(strs) >= {"tensor", "seq", "optional"}]
    if not candidates:
        return None
    i = rng.choice(candidates)
    other = [k for k in ("tensor", "seq", "optional") if k not in kinds(per_slot[i][0])]
    types = [type_proto(t) for _, t in per_slot]
    elem = "tensor(float)"
    types[i] = type_proto({"tensor": elem, "seq": f"seq({elem})", "optional": f"optional({elem})"}[rng.choice(other)])
    return types


def model(schema, picks):
    domain = "" if schema.domain == "ai.onnx" else schema.domain
    names = [f"x{i}" for i in range(len(picks))]
    inputs = [helper.make_value_info(nm, c) if isinstance(c, onnx.TypeProto) else
              helper.make_tensor_value_info(nm, c, [2, 3]) for nm, c in zip(names, picks)]
    outputs = [f"y{i}" for i in range(max(schema.min_output, 1))]
    node = helper.make_node(schema.name, names, outputs, domain=domain, name="n")
    g = helper.make_graph([node], "g", inputs, [onnx.ValueInfoProto(name=o) for o in outputs])
    opsets = [helper.make_opsetid(domain, schema.since_version)]
    if domain:
        opsets.append(helper.make_opsetid("", 17))
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = 8
    return m


def ort_verdict(path):
    try:
        ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        return "loads"
    except Exception as e:  # noqa: BLE001 - onnxruntime raises several kinds
        msg = str(e)
        # Only errors about the node itself: an op defined by a function body can fail inside
        # the body that onnxruntime inlines (RMSNormalization with a float32 X and a float16
        # scale, which its schema allows, meets a Mul of the two), at a node with no name.
        return "type error" if "Type Error" in msg and "in node (n)" in msg else "other"


def ours(binary, path):
    done = subprocess.run([binary, "check", path, "--format", "json"], capture_output=True, text=True)
    try:
        found = [d for m in json.loads(done.stdout)["models"] for d in m["diagnostics"]]
    except (json.JSONDecodeError, KeyError):
        return f"exit {done.returncode}"
    return "flagged" if any(d["code"] in ("type-mismatch", "type-unsupported") for d in found) else "clean"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "onnx-bcast"))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    ort.set_default_logger_severity(4)
    counts, bad = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for schema in defs.get_all_schemas_with_history():
            domain = "" if schema.domain == "ai.onnx" else schema.domain
            if domain not in ORT_NEWEST or schema.deprecated or schema.since_version > ORT_NEWEST[domain]:
                continue
            for mode in ("valid", "mismatch", "unsupported", "kind"):
                n = slots(schema, rng)
                if mode == "kind":
                    picks = wrong_kind(schema, rng) if n else None
                else:
                    picks = types(schema, n, mode, rng) if n else None
                if picks is None:
                    continue
                path = os.path.join(tmp, "m.onnx")
                onnx.save(model(schema, picks), path)
                theirs, mine = ort_verdict(path), ours(args.bin, path)
                key = (mode, theirs, mine)
                counts[key] = counts.get(key, 0) + 1
                if (theirs, mine) in (("loads", "flagged"), ("type error", "clean")) or mine.startswith("exit"):
                    kept = os.path.join(tmp, "..", f"type_oracle_{schema.name}_{schema.since_version}_{mode}.onnx")
                    onnx.save(model(schema, picks), kept)
                    said = [helper.printable_type(c) if isinstance(c, onnx.TypeProto) else TensorProto.DataType.Name(c)
                            for c in picks]
                    bad.append(f"{theirs}, {mine}: {domain or 'ai.onnx'}.{schema.name} v{schema.since_version} "
                               f"{mode} {said} ({os.path.abspath(kept)})")
    for (mode, theirs, mine), k in sorted(counts.items()):
        print(f"{mode:>11}: onnxruntime {theirs:>10}, onnx-bcast {mine:>7}: {k}")
    print(f"\n{len(bad)} disagreements")
    for b in bad:
        print(b)


if __name__ == "__main__":
    main()

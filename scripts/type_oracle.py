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
    python3 scripts/type_oracle.py [--bin target/debug/onnx-bcast] [--seed 1] [--contrib]

Prints the counts, then every disagreement: "flagged, loads" (a finding onnxruntime does not
share: a false alarm), "type error, not flagged" (one we miss) and, with --contrib, "died,
clean" (onnxruntime aborts where `check` reports no error).
"""
import argparse
import json
import os
import random
import subprocess
import tempfile
from concurrent.futures import ProcessPoolExecutor

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


def variadic(formal):
    """Whether a formal parameter is variadic, for onnx's schemas and onnxruntime's alike."""
    return str(formal.option).endswith("Variadic")


def type_str(formal):
    """A formal parameter's type string (onnxruntime's schemas spell it typeStr)."""
    return formal.type_str if hasattr(formal, "type_str") else formal.typeStr


def homogeneous(formal):
    return formal.is_homogeneous if hasattr(formal, "is_homogeneous") else formal.isHomogeneous


def sets(schema):
    """Per formal input: (type variable or None, allowed element-type codes)."""
    allowed = {t.type_param_str: t.allowed_type_strs for t in schema.type_constraints}
    out = []
    for f in schema.inputs:
        strs = allowed.get(type_str(f), [type_str(f)])
        codes = sorted({c for c in map(code, strs) if c is not None})
        var = type_str(f) if type_str(f) in allowed else None
        if variadic(f) and not homogeneous(f):
            var = None
        out.append((var, codes))
    return out


def slots(schema, rng):
    """How many input slots to fill: the required ones, a variadic input two or three times."""
    n = max(schema.min_input, 1) if schema.inputs else 0
    if schema.inputs and variadic(schema.inputs[-1]):
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
        strs = list(allowed.get(type_str(f), [type_str(f)]))
        if type_str(f) not in chosen:
            ok = [t for t in strs if type_proto(t)]
            if not ok:
                return None
            chosen[type_str(f)] = rng.choice(ok)
        per_slot.append((strs, chosen[type_str(f)]))
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


def contrib_schemas():
    """onnxruntime's own ops' newest schemas (com.microsoft and the NCHWc domain)."""
    newest = {}
    for x in ort.capi._pybind_state.get_all_operator_schema():
        if x.domain in ("com.microsoft", "com.microsoft.nchwc") and not x.deprecated:
            key = (x.domain, x.name)
            if key not in newest or x.since_version > newest[key].since_version:
                newest[key] = x
    return [newest[k] for k in sorted(newest)]


class Verdicts:
    """ort_verdict in a process of its own, restarted when onnxruntime aborts in it (some of its
    own ops' type inference does, on types their schemas do not take): a death is "died"."""

    def __init__(self):
        self.pool = ProcessPoolExecutor(1)

    def __call__(self, path):
        try:
            return self.pool.submit(ort_verdict, path).result(timeout=120)
        except Exception:  # noqa: BLE001 - the process died or hung
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = ProcessPoolExecutor(1)
            return "died"


def ort_verdict(path):
    ort.set_default_logger_severity(4)
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
    if any(d["code"] in ("type-mismatch", "type-unsupported") for d in found):
        return "flagged"
    # Another error: no answer on the types, but one on a model onnxruntime dies on.
    return "error" if any(d["severity"] == "error" for d in found) else "clean"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "onnx-bcast"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--contrib", action="store_true", help="onnxruntime's own ops (com.microsoft, NCHWc), "
                    "at each op's newest version, instead of the standard domains")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    ort.set_default_logger_severity(4)
    counts, bad = {}, []
    verdict = Verdicts() if args.contrib else ort_verdict
    with tempfile.TemporaryDirectory() as tmp:
        for schema in contrib_schemas() if args.contrib else defs.get_all_schemas_with_history():
            domain = "" if schema.domain == "ai.onnx" else schema.domain
            if not args.contrib and (domain not in ORT_NEWEST or schema.deprecated
                                     or schema.since_version > ORT_NEWEST[domain]):
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
                theirs, mine = verdict(path), ours(args.bin, path)
                key = (mode, theirs, mine)
                counts[key] = counts.get(key, 0) + 1
                missed = theirs == "type error" and mine != "flagged"
                if missed or (theirs, mine) in (("loads", "flagged"), ("died", "clean")) or mine.startswith("exit"):
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

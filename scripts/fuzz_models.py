"""Structure-aware hostile models: valid protobuf built from onnx's own op schemas (the right
input counts and attribute names), filled with extreme values: dims and attribute integers of
i64::MAX, 2^62, 2^32, -1, 0; constants of the wrong length or dtype; symbolic, unknown and
negative declared dims; unknown ranks. Each model goes through `infer` (and, with --full,
`annotate`, `expand` and `bench`); any exit code other than 0, 1 or 2, a panic, or a run over
30 s is reported with the model kept. Byte-level fuzzing (`fuzz/`) rarely reaches a rule with
such values. Against the debug binary before afc3a68, `--seed 7 --count 3000` reports six
models (four of the five overflows that commit fixes); after it, none.

Run by hand (needs onnx), best against the debug binary, whose overflow checks panic:

    cargo build --bin onnx-bcast
    python3 scripts/fuzz_models.py --bin target/debug/onnx-bcast --seed 1 --count 2000 [--full]

With --contrib the ops come from onnxruntime's own schemas of its com.microsoft and
com.microsoft.nchwc domains instead (needs onnxruntime).

Models go to target/fuzz-models/SEED/; those that pass are deleted. A problem found becomes a
test in tests/it/bad_input.rs.
"""
import argparse
import os
import random
import subprocess

from onnx import AttributeProto as AP
from onnx import TensorProto, defs, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
I64MAX, I64MIN = 2**63 - 1, -2**63
EXTREME = [I64MAX, I64MIN, 2**62, 2**40, 2**32, 2**31, 2**31 - 1, -2**31, 65537, -1, 0, 1, -2, 3, 7]
DTYPES = [TensorProto.FLOAT] * 5 + [TensorProto.INT64] * 3 + [
    TensorProto.INT32, TensorProto.BOOL, TensorProto.FLOAT16, TensorProto.UINT8, TensorProto.STRING, TensorProto.DOUBLE]
STRINGS = ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "nearest", "linear", "cubic", "constant", "reflect",
           "edge", "CRD", "DCR", "forward", "bidirectional", "reverse", "", "ij,jk->ik", "...i,...i->...",
           "ii->i", "a", "i->ii", "->", "...i...", "i.j", "ij,jk", "...,...->...", "I...->I", "half_pixel", "tf_crop_and_resize", "not_larger", "none", "mean",
           "sum", "add", "max", "NCHW", "NHWC", "RGB", "TFIDF", "zeros", "border", " "]


def contrib_schemas():
    """onnxruntime's schemas of its com.microsoft domains."""
    from onnxruntime.capi import onnxruntime_pybind11_state as ort

    return [s for s in ort.get_all_operator_schema() if s.domain.startswith("com.microsoft")]


class Gen:
    def __init__(self, seed, contrib=False):
        self.rng = random.Random(seed)
        latest = {}
        for s in contrib_schemas() if contrib else defs.get_all_schemas_with_history():
            if not s.deprecated:
                latest.setdefault((s.domain, s.name), []).append(s)
        self.schemas = latest
        self.keys = sorted(latest)

    def int(self):
        r = self.rng
        return r.choice(EXTREME + [r.randint(-6, 8) for _ in range(10)])

    def dim(self):
        r, c = self.rng, self.rng.random()
        if c < 0.55:
            return r.choice([1, 1, 2, 3, 4, 0, 5, 8])
        if c < 0.7:
            return r.choice(["N", "S", "batch"])
        if c < 0.78:
            return None
        return r.choice([2**31, 2**32, 2**40, 2**62, I64MAX, -3, -1, 65537])

    def value_info(self, name):
        t = helper.make_tensor_value_info(name, self.rng.choice(DTYPES), None)
        if self.rng.random() < 0.92:
            shape = t.type.tensor_type.shape
            shape.SetInParent()
            for d in [self.dim() for _ in range(self.rng.choice([0, 1, 1, 2, 3, 4, 4, 5]))]:
                x = shape.dim.add()
                if isinstance(d, int):
                    x.dim_value = d
                elif isinstance(d, str):
                    x.dim_param = d
        return t

    def constant(self, name):
        r, c = self.rng, self.rng.random()
        k = r.choice([0, 1, 1, 2, 3, 4, 5])
        if c < 0.6:
            return helper.make_tensor(name, TensorProto.INT64, [k], [self.int() for _ in range(k)])
        if c < 0.7:
            return helper.make_tensor(name, TensorProto.INT64, [], [self.int()])
        if c < 0.85:
            vals = [r.choice([0.5, -1.0, float("nan"), float("inf"), 1e30, 3.0, 0.0]) for _ in range(k)]
            return helper.make_tensor(name, TensorProto.FLOAT, [k], vals)
        if c < 0.92:
            return helper.make_tensor(name, TensorProto.INT32, [k], [max(-2**31, min(2**31 - 1, self.int())) for _ in range(k)])
        # dims that promise more elements than the data holds
        t = TensorProto(name=name, data_type=TensorProto.INT64, dims=[r.choice([k + 3, 2**40])])
        t.raw_data = b"\x01" * (8 * k)
        return t

    def attribute(self, a):
        r = self.rng
        kind = int(a.type)  # onnx's AttributeProto type, or onnxruntime's enum of it
        if kind == AP.INT:
            return self.int()
        if kind == AP.INTS:
            return [self.int() for _ in range(r.choice([1, 1, 2, 3, 4, 6]))]
        if kind == AP.FLOAT:
            return r.choice([0.5, -1.0, float("nan"), 1e30, 0.0, 2.0])
        if kind == AP.FLOATS:
            return [r.choice([0.5, -1.0, 1e30, 0.0]) for _ in range(r.choice([1, 2, 4]))]
        if kind == AP.STRING:
            return r.choice(STRINGS)
        if kind == AP.STRINGS:
            return [r.choice(STRINGS) for _ in range(r.choice([1, 2, 3]))]
        if kind == AP.TENSOR:
            return self.constant("t")
        return None

    def model(self):
        r = self.rng
        opsets = {"": r.choice([1, 6, 9, 11, 13, 17, 18, 21, 24, 25])}
        inputs = [self.value_info(f"x{k}") for k in range(r.randint(1, 4))]
        avail = [i.name for i in inputs]
        nodes, inits = [], []
        for j in range(r.randint(1, 3)):
            domain, op = r.choice(self.keys)
            schema = r.choice(self.schemas[(domain, op)])
            opsets[domain] = max(opsets.get(domain, 0), schema.since_version)
            lo, hi = schema.min_input, max(schema.min_input, min(schema.max_input, 7))
            ins = []
            for _ in range(r.randint(lo, hi) if r.random() < 0.9 else r.randint(0, 7)):
                if r.random() < 0.4:
                    inits.append(self.constant(f"c{len(inits)}"))
                    ins.append(inits[-1].name)
                else:
                    ins.append("" if r.random() < 0.05 else r.choice(avail))
            attrs = {n: v for n, a in schema.attributes.items() if r.random() < 0.5 for v in [self.attribute(a)] if v is not None}
            count = r.randint(schema.min_output, max(schema.min_output, min(schema.max_output, 4)))
            outs = [f"y{j}_{o}" for o in range(max(count, 1))]
            try:
                nodes.append(helper.make_node(op, ins, outs, name=f"n{j}", domain=domain, **attrs))
            except (TypeError, ValueError):
                nodes.append(helper.make_node(op, ins, outs, name=f"n{j}", domain=domain))
            avail.extend(outs)
        out = helper.make_tensor_value_info(avail[-1], 0, None)
        graph = helper.make_graph(nodes, "fuzz", inputs, [out], initializer=inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()])
        m.ir_version = 8
        return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "onnx-bcast"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--full", action="store_true", help="also annotate, expand and bench each model")
    ap.add_argument("--contrib", action="store_true", help="onnxruntime's contrib ops instead of onnx's")
    args = ap.parse_args()
    out = os.path.join(ROOT, "target", "fuzz-models", str(args.seed))
    os.makedirs(out, exist_ok=True)
    gen, bad = Gen(args.seed, args.contrib), 0
    for i in range(args.count):
        path = os.path.join(out, f"m{i}.onnx")
        with open(path, "wb") as f:
            f.write(gen.model().SerializeToString())
        runs = [["infer", path, "--format", "json"]]
        if args.full:
            runs += [["annotate", path, "-o", path + ".a.onnx"], ["expand", path, "-o", path + ".e.onnx"],
                     ["bench", path, "--repeat", "1", "--warmup", "0", "--max-memory", "256M",
                      "--dim", "N=2", "--dim", "S=3", "--dim", "batch=1"]]
        for run in runs:
            try:
                p = subprocess.run([args.bin] + run, capture_output=True, timeout=30, env={**os.environ, "RUST_BACKTRACE": "0"})
                code, err = p.returncode, p.stderr.decode(errors="replace")
            except subprocess.TimeoutExpired:
                code, err = "timeout", ""
            if code not in (0, 1, 2) or "panicked" in err:
                bad += 1
                why = " | ".join(line for line in err.splitlines() if "panicked" in line or "attempt" in line)
                print(f"exit {code}: {run[0]} {path} {why}", flush=True)
                break
        else:
            for suffix in ("", ".a.onnx", ".e.onnx"):
                if os.path.exists(path + suffix):
                    os.remove(path + suffix)
    print(f"seed {args.seed}: {args.count} models, {bad} with a problem")


if __name__ == "__main__":
    main()

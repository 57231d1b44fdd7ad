"""`--dim` at the extremes on real models: every symbol a model's graph inputs declare is bound
to 0, 1, 2^62 and 2^63 - 1 in turn (`check --dim`), and any exit other than 0, 1 or 2, a
panic or a run over 120 s is reported. Best against the debug binary, whose overflow checks
panic where a release build would wrap silently:

    cargo build --bin onnx-bcast
    python3 scripts/dim_extremes.py --bin target/debug/onnx-bcast models target/real-models ...

Folders are searched for *.onnx under 30 MB. A problem found becomes a test in
tests/it/bad_input.rs.
"""
import argparse
import os
import subprocess

import onnx

VALUES = ["0", "1", str(2**62), str(2**63 - 1)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/debug/onnx-bcast")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    files = []
    for p in a.paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in names
                          if n.endswith(".onnx") and os.path.getsize(os.path.join(root, n)) < 30 << 20]
        else:
            files.append(p)
    runs = bad = 0
    for f in sorted(files):
        try:
            m = onnx.load(f, load_external_data=False)
        except Exception:  # noqa: BLE001 - not a model onnx reads: nothing to bind
            continue
        inits = {t.name for t in m.graph.initializer}
        syms = sorted({d.dim_param for i in m.graph.input if i.name not in inits
                       for d in i.type.tensor_type.shape.dim if d.dim_param})
        for v in VALUES if syms else []:
            args = [a.bin, "check", f] + [x for s in syms for x in ("--dim", f"{s}={v}")]
            runs += 1
            try:
                p = subprocess.run(args, capture_output=True, text=True, timeout=120,
                                   env={**os.environ, "RUST_BACKTRACE": "0"})
            except subprocess.TimeoutExpired:
                bad += 1
                print(f"timeout: {f} = {v}", flush=True)
                continue
            if p.returncode not in (0, 1, 2) or "panicked" in p.stderr:
                bad += 1
                print(f"exit {p.returncode}: {f} = {v}\n{p.stderr[-400:]}", flush=True)
    print(f"{runs} runs, {bad} with a problem")


if __name__ == "__main__":
    main()

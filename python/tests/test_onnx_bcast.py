"""The Python package against the command line: the same answers for the same model, given as
a path, as bytes or as a ModelProto; typed exceptions; SARIF valid against its schema; the GIL
released while a pass runs."""

from __future__ import annotations

import concurrent.futures
import doctest
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import jsonschema
import onnx
import pytest
import yaml
from onnx import TensorProto, helper

import onnx_bcast

REPO = Path(__file__).resolve().parents[2]
MODELS = sorted((REPO / "models").glob("*.onnx"))
HERE = Path(__file__).resolve().parent


def _cli() -> Path:
    """The command line to compare with: $ONNX_BCAST_CLI (CI sets it), else a build in target/."""
    named = os.environ.get("ONNX_BCAST_CLI")
    if named:
        assert Path(named).is_file(), f"ONNX_BCAST_CLI={named} does not exist"
        return Path(named)
    for profile in ("debug", "release"):
        p = REPO / "target" / profile / "onnx-bcast"
        if p.is_file():
            return p
    found = shutil.which("onnx-bcast")
    if found is None:
        pytest.skip("no onnx-bcast binary to compare with (build it, or set ONNX_BCAST_CLI)")
    return Path(found)


def cli(*args: object, code: int | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run([str(_cli()), *map(str, args)], cwd=REPO, capture_output=True, text=True)
    if code is not None:
        assert r.returncode == code, f"{args}: exit {r.returncode}\n{r.stderr}"
    return r


def cli_json(*args: object) -> dict:
    r = cli(*args)
    assert r.returncode in (0, 1), f"{args}: exit {r.returncode}\n{r.stderr}"
    return json.loads(r.stdout)


def three_ways(path: Path):
    """The model at `path` as a path, as bytes and as a ModelProto."""
    return [str(path), path.read_bytes(), onnx.load(str(path))]


def without_model(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "model"}


def seq_plus_seven() -> onnx.ModelProto:
    """y = x[seq] + w[7]: runs only at seq 1 or 7."""
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("w", TensorProto.FLOAT, [7], bytes(28), raw=True)],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_infer_is_the_cli_json_for_a_path_bytes_and_a_modelproto(path):
    want = cli_json("infer", path.relative_to(REPO), "--format", "json")
    for model in three_ways(path):
        got = onnx_bcast.infer(model)
        assert without_model(got) == without_model(want)
    assert onnx_bcast.infer(str(path))["model"] == str(path)
    assert onnx_bcast.infer(path.read_bytes())["model"] == "<bytes>"


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_check_and_contract_are_the_cli_json(path):
    want = cli_json("check", path.relative_to(REPO), "--format", "json")["models"][0]
    for model in three_ways(path):
        got = onnx_bcast.check(model)
        assert without_model(got) == without_model(want)
        assert onnx_bcast.contract(model) == want["contract"]


def test_findings_are_returned_not_raised():
    found = onnx_bcast.check(REPO / "models/broken.onnx")["diagnostics"]
    assert [d["code"] for d in found] == ["broadcast-incompatible"]
    assert found[0]["node"] == "add_bad" and found[0]["axis"] == 1


def test_dims_bind_as_dim_does():
    path = REPO / "models/attention_mask.onnx"
    want = cli_json("infer", "models/attention_mask.onnx", "--format", "json", "--dim", "batch=8")
    got = onnx_bcast.infer(path, dims={"batch": 8})
    assert without_model(got) == without_model(want)
    assert got["tensors"]["scores"]["shape"] == [8, 12, "seq", "seq"]


def test_contracts_and_require(tmp_path):
    model = seq_plus_seven()
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    dims = onnx_bcast.contract(model)["dims"]
    assert dims["seq"]["also"] == [1, 7] or dims["seq"]["text"], dims
    ok = onnx_bcast.check(model, require={"seq": [1, 7]})
    assert not [d for d in ok["diagnostics"] if d["code"] == "require-failed"]
    for spec in ["1..=8", range(1, 9), [1, 2, 7]]:
        bad = onnx_bcast.check(model, require={"seq": spec})
        failed = [d for d in bad["diagnostics"] if d["code"] == "require-failed"]
        assert len(failed) == 1 and "seq=2" in failed[0]["message"], bad
    want = cli_json("check", path, "--format", "json", "--require", "seq=1..=8")["models"][0]
    assert without_model(onnx_bcast.check(path, require={"seq": "1..=8"})) == without_model(want)


@pytest.mark.parametrize("name", ["annotate", "expand"])
def test_rewrites_give_what_the_cli_writes(tmp_path, name):
    src = REPO / "models/attention_mask.onnx"
    cli(name, src, "-o", tmp_path / "cli.onnx", "--dim", "batch=2", code=0)
    want = (tmp_path / "cli.onnx").read_bytes()
    fn = getattr(onnx_bcast, name)
    # bytes in, bytes out; a path in (no output), bytes out.
    assert fn(src.read_bytes(), dims={"batch": 2}) == want
    assert fn(src, dims={"batch": 2}) == want
    # a path and output=: the file, written.
    out = fn(src, output=tmp_path / "py.onnx", dims={"batch": 2})
    assert out == tmp_path / "py.onnx" and out.read_bytes() == want
    # a ModelProto in, a ModelProto out.
    proto = fn(onnx.load(str(src)), dims={"batch": 2})
    assert isinstance(proto, onnx.ModelProto)
    assert proto == onnx.load_from_string(want)
    onnx.checker.check_model(proto)


def test_implicit_undoes_expand(tmp_path):
    src = REPO / "models/nary_sum.onnx"
    expanded = onnx_bcast.expand(src)
    assert expanded != src.read_bytes()
    back = onnx_bcast.implicit(expanded)
    (tmp_path / "e.onnx").write_bytes(expanded)
    cli("implicit", tmp_path / "e.onnx", "-o", tmp_path / "cli.onnx", code=0)
    assert back == (tmp_path / "cli.onnx").read_bytes()
    ops = [n.op_type for n in onnx.load_from_string(back).graph.node]
    assert "Expand" not in ops and "Tile" not in ops


def test_diff_is_the_cli_json(tmp_path):
    old = REPO / "models/attention_mask.onnx"
    assert onnx_bcast.diff(old, old)["diagnostics"] == []
    m = onnx.load(str(old))
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 4
    new = tmp_path / "new.onnx"
    onnx.save(m, str(new))
    want = cli_json("diff", old, new, "--format", "json")
    got = onnx_bcast.diff(old, m)
    assert got["diagnostics"] == want["diagnostics"] and got["diagnostics"], got
    assert [d["code"] for d in got["diagnostics"]][0] == "dim-fixed"


def test_errors_are_typed(tmp_path):
    with pytest.raises(onnx_bcast.ModelError, match="not a valid ONNX model"):
        onnx_bcast.infer(b"\x0a\x05hello-not-a-model")
    with pytest.raises(onnx_bcast.FileError, match="nowhere.onnx"):
        onnx_bcast.check(tmp_path / "nowhere.onnx")
    with pytest.raises(onnx_bcast.UsageError, match="'nope'"):
        onnx_bcast.infer(REPO / "models/attention_mask.onnx", dims={"nope": 3})
    with pytest.raises(onnx_bcast.UsageError, match="'nope'"):
        onnx_bcast.sarif([REPO / "models"], dims={"nope": 3})
    with pytest.raises(onnx_bcast.UsageError, match="sizes are 0 or more"):
        onnx_bcast.infer(REPO / "models/attention_mask.onnx", dims={"batch": -2})
    with pytest.raises(onnx_bcast.UsageError, match="--require"):
        onnx_bcast.check(seq_plus_seven(), require={"seq": "9..=1"})
    with pytest.raises(onnx_bcast.FileError, match="missing.json"):
        onnx_bcast.infer(REPO / "models/attention_mask.onnx", op_rules=tmp_path / "missing.json")
    bad_rules = tmp_path / "rules.json"
    bad_rules.write_text('{"rules": [\n  {"op": }\n]}')
    with pytest.raises(onnx_bcast.UsageError, match="rules.json:2"):
        onnx_bcast.infer(REPO / "models/attention_mask.onnx", op_rules=bad_rules)
    copy = tmp_path / "m.onnx"
    shutil.copy(REPO / "models/attention_mask.onnx", copy)
    with pytest.raises(onnx_bcast.UsageError, match="overwrite"):
        onnx_bcast.annotate(copy, output=copy)
    assert onnx_bcast.annotate(copy, output=copy, in_place=True) == copy
    with pytest.raises(TypeError):
        onnx_bcast.infer(42)
    # A rewrite refused: the findings come with the exception.
    with pytest.raises(onnx_bcast.FindingsError) as refused:
        onnx_bcast.expand(REPO / "models/broken.onnx")
    assert [d["code"] for d in refused.value.diagnostics] == ["broadcast-incompatible"]
    for e in [onnx_bcast.ModelError, onnx_bcast.FileError, onnx_bcast.UsageError, onnx_bcast.LimitError,
              onnx_bcast.FindingsError]:  # fmt: skip
        assert issubclass(e, onnx_bcast.Error)
    # Nothing half-written where a write failed.
    assert not list(tmp_path.glob("*.tmp*"))


def test_external_data_needs_a_path(tmp_path):
    m = seq_plus_seven()
    onnx.save_model(m, str(tmp_path / "ext.onnx"), save_as_external_data=True, location="w.bin", size_threshold=0)
    assert onnx_bcast.check(tmp_path / "ext.onnx")["diagnostics"] == []
    (tmp_path / "w.bin").unlink()
    codes = [d["code"] for d in onnx_bcast.check(tmp_path / "ext.onnx")["diagnostics"]]
    assert codes == ["external-data-missing"], codes
    # Given as bytes, a model has no folder: its external data is not looked for (nor read).
    assert onnx_bcast.check((tmp_path / "ext.onnx").read_bytes())["diagnostics"] == []


SCHEMA = json.loads((HERE / "data/sarif/sarif-schema-2.1.0.json").read_text())


def test_sarif_is_valid_sarif_2_1_0(tmp_path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"not a model")
    r = cli("check", "models", garbage, "--format", "sarif", code=2)
    log = json.loads(r.stdout)
    jsonschema.Draft7Validator(SCHEMA).validate(log)
    run = log["runs"][0]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert rules == ["broadcast-incompatible"]
    [result] = run["results"]
    assert result["ruleId"] == "broadcast-incompatible" and result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "models/broken.onnx"
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "main/add_bad"
    assert run["invocations"][0]["executionSuccessful"] is False
    assert "garbage.onnx" in run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
    # The package gives the same log; every code's rule is described once.
    assert onnx_bcast.sarif([REPO / "models"])["runs"][0]["results"] == json.loads(
        cli("check", REPO / "models", "--format", "sarif").stdout
    )["runs"][0]["results"]
    diff = json.loads(cli("diff", "models/attention_mask.onnx", "models/nary_sum.onnx", "--format", "sarif").stdout)
    jsonschema.Draft7Validator(SCHEMA).validate(diff)
    assert diff["runs"][0]["results"]


def test_the_pre_commit_hook_runs_check():
    [hook] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "onnx-bcast-check" and hook["language"] == "rust"
    assert hook["files"] == r"\.onnx$"
    entry = hook["entry"].split()
    assert entry[0] == "onnx-bcast"
    run = lambda *files: subprocess.run([str(_cli()), *entry[1:], *hook.get("args", []), *files], cwd=REPO)  # noqa: E731
    assert run("models/attention_mask.onnx", "models/nary_sum.onnx").returncode == 0
    assert run("models/attention_mask.onnx", "models/broken.onnx").returncode == 1


def test_docstring_examples_hold(monkeypatch):
    monkeypatch.chdir(REPO)
    failed, tried = doctest.testmod(onnx_bcast, globs={"onnx_bcast": onnx_bcast, "onnx": onnx})
    assert tried >= 6 and failed == 0


def test_threads_check_models_in_parallel():
    """The GIL is released while a pass runs: two threads check the backend node cases faster
    than one (each thread's work is in Rust; the machine has at least 2 cores)."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core")
    cases = sorted((REPO / "tests/data/node").glob("*/model.onnx"))
    assert len(cases) > 1000
    data = [p.read_bytes() for p in cases]

    def batch(threads: int) -> float:
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            reports = list(pool.map(lambda b: onnx_bcast.check(b, require=None), data))
        assert len(reports) == len(data)
        return time.perf_counter() - start

    batch(2)  # warm up
    one = min(batch(1) for _ in range(3))
    two = min(batch(2) for _ in range(3))
    assert two < one, f"1 thread {one:.3f} s, 2 threads {two:.3f} s"

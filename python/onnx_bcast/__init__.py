"""onnx-bcast from Python: shape inference with the broadcasting rules, findings, input
contracts and rewrites for ONNX models.

Every function takes a model as an ``onnx.ModelProto``, as ``bytes`` (the serialized model) or
as a path (``str`` or ``os.PathLike``; a model with external data must be given as a path, so
that its weights can be found beside it). Reports come back as plain dicts in the shape of the
command line's JSON (see ``docs/cli.md``). Findings are returned, never raised; an exception
means the job could not be done. The GIL is released while a pass runs, so a thread pool over
many models uses every core.

>>> import onnx_bcast
>>> report = onnx_bcast.infer("models/attention_mask.onnx", dims={"batch": 8})
>>> report["tensors"]["scores"]["shape"]
[8, 12, 'seq', 'seq']
>>> onnx_bcast.check("models/broken.onnx")["diagnostics"][0]["code"]
'broadcast-incompatible'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, Mapping, Optional, Union

from . import _native
from ._native import Error, FileError, LimitError, ModelError, UsageError

__all__ = [
    "infer",
    "check",
    "contract",
    "annotate",
    "expand",
    "implicit",
    "diff",
    "sarif",
    "Error",
    "ModelError",
    "FileError",
    "UsageError",
    "LimitError",
    "FindingsError",
    "__version__",
]

__version__: str = _native.__version__


class FindingsError(Error):
    """A rewrite was refused because the model has error findings (listed in ``diagnostics``,
    dicts as in the command line's JSON). Only rewrites raise it: they have no model to return.
    Checks return their findings instead."""

    def __init__(self, message: str, diagnostics: list):
        super().__init__(message)
        self.diagnostics = diagnostics


_Model = Union["onnx.ModelProto", bytes, bytearray, memoryview, str, "os.PathLike[str]"]  # noqa: F821


def _source(model: Any) -> tuple:
    """(path, data, kind) for a model given as a path, bytes or a ModelProto."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model), None, "path"
    if isinstance(model, (bytes, bytearray, memoryview)):
        return None, bytes(model), "bytes"
    serialize = getattr(model, "SerializeToString", None)
    if serialize is None:
        raise TypeError(f"expected an onnx.ModelProto, bytes or a path, got {type(model).__name__}")
    return None, serialize(), "proto"


def _dims(dims: Optional[Mapping[str, int]]) -> Optional[Dict[str, int]]:
    if dims is None:
        return None
    out = {}
    for name, value in dims.items():
        if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, int):
            raise UsageError(f"dims: expected {{name: int}}, got {name!r}: {value!r}")
        out[name] = value
    return out


def _spec(name: str, sizes: Any) -> str:
    """A ``--require`` SPEC from a string, a range or an iterable of sizes."""
    if isinstance(sizes, str):
        return sizes
    if isinstance(sizes, int) and not isinstance(sizes, bool):
        return str(sizes)
    if isinstance(sizes, range) and sizes.step > 0 and len(sizes) > 0:
        return f"{sizes[0]}..={sizes[-1]}/{sizes.step}"
    try:
        items = [int(s) for s in sizes]
    except (TypeError, ValueError):
        raise UsageError(f"require[{name!r}]: expected a SPEC string, a range or sizes, got {sizes!r}") from None
    if not items:
        raise UsageError(f"require[{name!r}]: no sizes")
    return ",".join(str(s) for s in items)


def _rules(op_rules: Union[None, str, "os.PathLike[str]"]) -> Optional[str]:
    return None if op_rules is None else os.fspath(op_rules)


def infer(
    model: _Model,
    *,
    dims: Optional[Mapping[str, int]] = None,
    op_rules: Union[None, str, "os.PathLike[str]"] = None,
) -> Dict[str, Any]:
    """Every tensor's inferred type and shape, with findings, assumed conditions and the input
    contract: the dict ``onnx-bcast infer --format json`` prints.

    >>> onnx_bcast.infer("models/nary_sum.onnx")["tensors"]["sum"]
    {'dtype': 'float32', 'shape': [8, 7, 6, 5]}
    """
    path, data, _ = _source(model)
    return json.loads(_native.infer(path, data, _dims(dims), _rules(op_rules)))


def check(
    model: _Model,
    *,
    dims: Optional[Mapping[str, int]] = None,
    require: Optional[Mapping[str, Any]] = None,
    op_rules: Union[None, str, "os.PathLike[str]"] = None,
) -> Dict[str, Any]:
    """Findings only: ``{"model", "diagnostics", "constraints", "contract"}``, one entry of what
    ``onnx-bcast check --format json`` prints. ``require`` asks that the model run at every size
    of a dim: ``{"height": "32..=2048/32"}``, ``{"batch": range(1, 65)}`` or ``{"n": [1, 2, 4]}``;
    each size outside the dim's contract is a ``require-failed`` error.

    >>> [d["code"] for d in onnx_bcast.check("models/broken.onnx")["diagnostics"]]
    ['broadcast-incompatible']
    """
    path, data, _ = _source(model)
    specs = None if require is None else {name: _spec(name, s) for name, s in require.items()}
    return json.loads(_native.check(path, data, _dims(dims), specs, _rules(op_rules)))


def contract(
    model: _Model,
    *,
    dims: Optional[Mapping[str, int]] = None,
    op_rules: Union[None, str, "os.PathLike[str]"] = None,
) -> Dict[str, Any]:
    """For which input sizes the model runs: ``{"dims": {name: {...}}, "relations": [...]}`` as in
    the JSON's ``contract`` key. A dim absent from ``dims`` accepts every size.

    >>> onnx_bcast.contract("models/attention_mask.onnx")["dims"]
    {}
    """
    return check(model, dims=dims, op_rules=op_rules)["contract"]


def _rewrite(name: str, model: _Model, output: Any, **options: Any) -> Any:
    path, data, kind = _source(model)
    out = None if output is None else os.fspath(output)
    written, refused = _native.rewrite(name, path, data, out, **options)
    if refused is not None:
        message, diagnostics = refused
        raise FindingsError(message, json.loads(diagnostics))
    if out is not None:
        return Path(out)
    if kind == "proto":
        import onnx

        return onnx.load_from_string(written)
    return written


def annotate(
    model: _Model,
    *,
    output: Union[None, str, "os.PathLike[str]"] = None,
    dims: Optional[Mapping[str, int]] = None,
    fix_declared: bool = False,
    allow_lossy: bool = False,
    in_place: bool = False,
    op_rules: Union[None, str, "os.PathLike[str]"] = None,
) -> Any:
    """The model with ``value_info`` for every tensor of every graph. Returns a ``ModelProto``
    when given one, ``bytes`` when given bytes or a path, and writes ``output`` (returning its
    path) when it is set; ``in_place=True`` lets ``output`` be the input file itself.

    >>> m = onnx_bcast.annotate(onnx.load("models/attention_mask.onnx"))
    >>> len(m.graph.value_info)
    2
    """
    return _rewrite(
        "annotate", model, output, dims=_dims(dims), op_rules=_rules(op_rules), fix_declared=fix_declared,
        allow_lossy=allow_lossy, in_place=in_place,
    )  # fmt: skip


def expand(
    model: _Model,
    *,
    output: Union[None, str, "os.PathLike[str]"] = None,
    dims: Optional[Mapping[str, int]] = None,
    fix_declared: bool = False,
    allow_lossy: bool = False,
    in_place: bool = False,
    op_rules: Union[None, str, "os.PathLike[str]"] = None,
) -> Any:
    """The model with every implicit broadcast made explicit (``Unsqueeze`` + ``Expand``);
    returns as :func:`annotate` does."""
    return _rewrite(
        "expand", model, output, dims=_dims(dims), op_rules=_rules(op_rules), fix_declared=fix_declared,
        allow_lossy=allow_lossy, in_place=in_place,
    )  # fmt: skip


def implicit(
    model: _Model,
    *,
    output: Union[None, str, "os.PathLike[str]"] = None,
    allow_lossy: bool = False,
    in_place: bool = False,
) -> Any:
    """The model without the ``Expand``/``Tile`` nodes that implicit broadcasting makes
    redundant (the inverse of :func:`expand`); returns as :func:`annotate` does."""
    return _rewrite(
        "implicit", model, output, dims=None, op_rules=None, fix_declared=False, allow_lossy=allow_lossy,
        in_place=in_place,
    )  # fmt: skip


def diff(old: _Model, new: _Model) -> Dict[str, Any]:
    """What changed between two versions of a model: inputs, outputs, their types and shapes,
    and contracts that narrowed. ``{"old", "new", "diagnostics"}`` as ``onnx-bcast diff --format
    json`` prints; no diagnostics means no difference."""
    old_path, old_data, _ = _source(old)
    new_path, new_data, _ = _source(new)
    return json.loads(_native.diff(old_path, old_data, new_path, new_data))


def sarif(
    models: Iterable[Union[str, "os.PathLike[str]"]],
    *,
    dims: Optional[Mapping[str, int]] = None,
    op_rules: Union[None, str, "os.PathLike[str]"] = None,
) -> Dict[str, Any]:
    """The findings of model files (folders are searched for ``*.onnx``) as a SARIF 2.1.0 log
    for code scanning: what ``onnx-bcast check --format sarif`` prints."""
    paths = [os.fspath(p) for p in models]
    return json.loads(_native.sarif(paths, _dims(dims), _rules(op_rules)))

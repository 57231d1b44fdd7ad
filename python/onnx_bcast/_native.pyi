"""The compiled half of onnx_bcast: each function takes a model as a path or as bytes (exactly
one), releases the GIL while it runs, and returns JSON text or model bytes. Use the functions
of ``onnx_bcast`` instead: they take ``ModelProto`` objects too and return dicts."""

from typing import Dict, List, Optional, Tuple

__version__: str

class Error(Exception):
    """The job could not be done (the base of every onnx_bcast error)."""

class ModelError(Error):
    """The model could not be read, or holds data this build cannot write back."""

class FileError(Error):
    """A file could not be read or written."""

class UsageError(Error):
    """A bad argument: an unknown dim, a bad size spec, a rules file with a mistake."""

class LimitError(Error):
    """A resource limit: a model over the size limit."""

def infer(path: Optional[str], data: Optional[bytes], dims: Optional[Dict[str, int]], op_rules: Optional[str]) -> str: ...
def check(
    path: Optional[str],
    data: Optional[bytes],
    dims: Optional[Dict[str, int]],
    require: Optional[Dict[str, str]],
    op_rules: Optional[str],
) -> str: ...
def sarif(paths: List[str], dims: Optional[Dict[str, int]], op_rules: Optional[str]) -> str: ...
def diff(old_path: Optional[str], old_data: Optional[bytes], new_path: Optional[str], new_data: Optional[bytes]) -> str: ...

# (the model's bytes, or None when it was written to `output`; (message, findings JSON) when refused)
_Rewritten = Tuple[Optional[bytes], Optional[Tuple[str, str]]]

def rewrite(
    pass_: str,
    path: Optional[str],
    data: Optional[bytes],
    output: Optional[str],
    *,
    dims: Optional[Dict[str, int]],
    op_rules: Optional[str],
    fix_declared: bool,
    allow_lossy: bool,
    in_place: bool,
) -> _Rewritten:
    """Runs the rewrite named `pass_` (annotate, expand or implicit)."""

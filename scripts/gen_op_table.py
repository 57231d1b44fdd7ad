"""Generates src/ops/table.rs: one row per ONNX operator and per opset version at which its
schema changed, with the facts onnx's schemas give (input and output arity, the inputs' type
constraints, the attributes), and the same facts of onnxruntime's own ops (com.microsoft, its
NCHWc domain, and the default domain's that onnx lacks) from onnxruntime's schemas. What each
op means (shape rule, fold, kernel) is written in src/ops/registry.rs, one row per op. Run by
hand after upgrading onnx or onnxruntime: python3 scripts/gen_op_table.py"""

import onnx
import onnx.defs
import onnxruntime
from onnx import TensorProto
from onnxruntime.capi import _pybind_state as ort_schemas

# A formal input that no tensor type can take: `Constraints::NONE`, which names no set.
NO_VAR = "C::NONE"

# Element types with a numpy name, the names `DType::name` gives.
NP = {TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.UINT16, TensorProto.INT16,
      TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL, TensorProto.FLOAT16, TensorProto.DOUBLE,
      TensorProto.UINT32, TensorProto.UINT64, TensorProto.COMPLEX64, TensorProto.COMPLEX128}


def element_code(type_str):
    """The element-type code of "tensor(float)" and the like; None for any other type."""
    if not (type_str.startswith("tensor(") and type_str.endswith(")")):
        return None
    try:
        return TensorProto.DataType.Value(type_str[len("tensor("):-1].upper())
    except ValueError:  # a type onnx's TensorProto does not know
        return None


def kinds(strs):
    """The kinds of value a formal input takes, as `Kinds` spells them: "T" tensors, "S"
    sequences, "O" optionals; None where it takes others too (maps, sparse tensors)."""
    out = set()
    for t in strs:
        if t.startswith("tensor(") and element_code(t) is not None:
            out.add("T")
        elif t.startswith("seq("):
            out.add("S")
        elif t.startswith("optional("):
            out.add("O")
        else:
            return None
    return "".join(k for k in "TSO" if k in out)


def constraints(s, masks):
    """The schema's input constraints as Rust: each formal input's type variable (an index
    into the row's list of element-type sets, NO_VAR where nothing is checked: it takes maps or
    sparse tensors), the
    sets, and how the last input repeats. Sets are named constants, collected in `masks`."""
    allowed = {t.type_param_str: list(t.allowed_type_strs) for t in s.type_constraints}
    variables, sets, ins = {}, [], []
    # onnx's schemas and onnxruntime's spell the formal inputs' fields differently.
    type_str = [getattr(f, "type_str", None) or f.typeStr for f in s.inputs]
    for formal, ts in zip(s.inputs, type_str):
        # A formal input's type is a variable of the schema or one type written out.
        strs = allowed.get(ts, [ts])
        codes = sorted({c for c in map(element_code, strs) if c is not None})
        kind = kinds(strs)
        if not codes and kind is None:
            ins.append(NO_VAR)
            continue
        if ts not in variables:
            mask = sum(1 << c for c in codes)
            name = masks.setdefault(mask, f"E{len(masks)}") if codes else "0"
            variables[ts] = len(sets)
            # One type written out binds nothing: a second input of that type is checked
            # against the set alone, as it would be anyway.
            sets.append((name, ts in allowed, kind))
        ins.append(variables[ts])
    last = s.inputs[-1] if s.inputs else None
    if last is not None and str(last.option).endswith("Variadic"):
        homogeneous = getattr(last, "is_homogeneous", None)
        rep = "R::Same" if (last.isHomogeneous if homogeneous is None else homogeneous) else "R::Each"
    else:
        rep = "R::No"
    def elements(name, var, kind):
        rs = f"{'var' if var else 'one'}({name})"
        return rs if kind == "T" else f"{rs}.of(K::{kind or 'TSO'})"
    sets_rs = ", ".join(elements(*x) for x in sets)
    return f"C::new(&[{', '.join(map(str, ins))}], &[{sets_rs}], {rep})"


# An attribute's kind as one letter (a capital for a list), as `Schema::attrs` spells it.
KIND = {"FLOAT": "f", "INT": "i", "STRING": "s", "TENSOR": "t", "GRAPH": "g", "SPARSE_TENSOR": "p", "TYPE_PROTO": "y",
        "FLOATS": "F", "INTS": "I", "STRINGS": "S", "TENSORS": "T", "GRAPHS": "G", "SPARSE_TENSORS": "P",
        "TYPE_PROTOS": "Y"}


def attr_spec(s):
    """The schema's attributes as `Attrs` spells them: `name:kind`, `!` after a required one."""
    return " ".join(f"{n}:{KIND[str(a.type).split('.')[-1]]}{'!' if a.required else ''}"
                    for n, a in sorted(s.attributes.items()))


def arity(s):
    """The schema's input and output counts as Rust: `a(min_in, max_in, min_out, max_out)`,
    with `.opt(mask)` where an optional input comes before a required one (onnxruntime's own
    ops): the optional slots below min_in; `.opt_out(mask)` likewise for outputs (GRU-1)."""
    def most(n):
        return "u32::MAX" if n >= 2**31 - 1 else str(n)
    def optional(formals, least):
        return sum(1 << k for k, f in enumerate(formals[:min(least, 32)]) if str(f.option).endswith("Optional"))
    ins, outs = optional(s.inputs, s.min_input), optional(s.outputs, s.min_output)
    opt = (f".opt({ins:#b})" if ins else "") + (f".opt_out({outs:#b})" if outs else "")
    return f"a({s.min_input}, {most(s.max_input)}, {s.min_output}, {most(s.max_output)}){opt}"


def main():
    rows = []
    masks = {}
    seen = set()
    deprecated = []
    for s in onnx.defs.get_all_schemas_with_history():
        domain = "" if s.domain == "ai.onnx" else s.domain
        if domain not in ("", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview"):
            continue
        key = (domain, s.name, s.since_version)
        if key in seen:
            continue
        seen.add(key)
        if s.deprecated:
            deprecated.append((domain, s.name, s.since_version))
        attrs = attr_spec(s)
        rows.append((domain, s.name, s.since_version, arity(s), constraints(s, masks), attrs))
    rows.sort()
    # onnxruntime's own ops: its contrib domains', and the default domain's that onnx lacks
    # (onnx's experimental ops of opsets 1 to 9, which onnxruntime still runs there).
    standard = {(domain, op) for domain, op, *_ in rows}
    contrib = sorted({(s.domain, s.name, s.since_version, arity(s), constraints(s, masks), attr_spec(s))
                      for s in ort_schemas.get_all_operator_schema()
                      if s.domain.startswith("com.microsoft") or (s.domain == "" and ("", s.name) not in standard)})
    newest = sorted(("" if d == "ai.onnx" else d, hi) for d, (_, hi) in onnx.defs.C.schema_version_map().items())
    out = [
        f"//! The op table's rows, generated by `scripts/gen_op_table.py` from onnx {onnx.__version__}'s",
        "//! schemas: one row per op and per opset version at which its schema changed; and",
        f"//! onnxruntime {onnxruntime.__version__}'s own ops, by its schemas.",
        "",
        "use super::{Arity, Attrs, Constraints as C, Elements, Kinds as K, Repeat as R, Schema};",
        "",
        "/// A type variable of the schema: every input it types has one element type, from the set;",
        "/// tensors only, unless `Elements::of` says more.",
        "const fn var(set: u64) -> Elements {",
        "    Elements { set, binds: true, kinds: K::T }",
        "}",
        "",
        "/// One type written out in the schema (`tensor(int64)`): each input it types is checked alone.",
        "const fn one(set: u64) -> Elements {",
        "    Elements { set, binds: false, kinds: K::T }",
        "}",
        "",
        "const fn r(domain: &'static str, op: &'static str, since: i64, arity: Arity, inputs: C, attrs: &'static str) -> Schema {",
        "    Schema { op, domain, since, arity, inputs, attrs: Attrs(attrs) }",
        "}",
        "",
        "/// The fewest and most inputs, the fewest and most outputs (`u32::MAX`: variadic).",
        "const fn a(min_inputs: u32, max_inputs: u32, min_outputs: u32, max_outputs: u32) -> Arity {",
        "    Arity { min_inputs, max_inputs, min_outputs, max_outputs, optional: 0, optional_outputs: 0 }",
        "}",
        "",
        "/// The newest opset version of each domain these schemas describe.",
        "pub static NEWEST: &[(&str, i64)] = &[" + ", ".join(f'("{d}", {v})' for d, v in newest) + "];",
        "",
        "/// The rows of `TABLE` that deprecate their op (domain, op, version): onnx's checker and",
        "/// onnxruntime refuse it from that version until a later row brings it back.",
        "pub static DEPRECATED: &[(&str, &str, i64)] = &["
        + ", ".join(f'("{d}", "{op}", {v})' for d, op, v in sorted(deprecated)) + "];",
        "",
        "// The element-type sets of the schemas' type constraints: bit `c` for type code `c`.",
    ]
    for mask, name in sorted(masks.items(), key=lambda kv: int(kv[1][1:])):
        names = ", ".join(onnx.helper.tensor_dtype_to_np_dtype(c).name if c in NP else TensorProto.DataType.Name(c).lower()
                          for c in range(64) if mask >> c & 1)
        out.append(f"const {name}: u64 = {mask:#x}; // {names}")
    out += [
        "",
        "/// Every op of these schemas, at each version.",
        "#[rustfmt::skip]",
        "pub static TABLE: &[Schema] = &[",
    ]
    for d, op, since, ar, ins, attrs in rows:
        out.append(f'    r("{d}", "{op}", {since}, {ar}, {ins}, "{attrs}"),')
    out.append("];")
    out += [
        "",
        "/// onnxruntime's own ops, its contrib ones and the default domain's that onnx lacks, as",
        "/// its schemas give them (at each version), which it checks on loading a model.",
        "#[rustfmt::skip]",
        "pub static CONTRIB: &[Schema] = &[",
    ]
    out += [f'    r("{d}", "{op}", {since}, {ar}, {ins}, "{attrs}"),' for d, op, since, ar, ins, attrs in contrib]
    out.append("];")
    open("src/ops/table.rs", "w").write("\n".join(out) + "\n")
    print(len(rows), "rows")


main()

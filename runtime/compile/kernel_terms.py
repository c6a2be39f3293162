"""Kernel terms: each fusible graph node becomes the terms a fused kernel computes (Note [Fused kernels with
reductions] in fusion.py): `map` terms (one element from elements, from the op's kernel spec) and `reduce`
terms (a sum, max or min over some dims). A compound op (softmax, log-softmax, layer norm, variance, cross
entropy) lowers into several terms whose temporaries are values of the kernel only.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any

from runtime.compile.graph import Node, Value
from runtime.vocabulary import HALF_DTYPES

CTYPE = {"float32": "float", "float64": "double", "bool": "bool", "int8": "signed char", "uint8": "unsigned char",
         "int16": "short", "int32": "int", "int64": "long long"}
FLOATS = ("float32", "float64")
# Note [Fused kernels on a CUDA device]: the CUDA kernels (cuda_render.py) also read and store the half types,
# computing in float (opgen::OpMath) as the per-op kernels do; the C type a term computes in, per dtype
HALF = HALF_DTYPES
COMPUTE_CTYPE = {**CTYPE, "float16": "float", "bfloat16": "float"}


@dataclass(eq=False)
class Term:
    """One value of a fused kernel. `map`: `expr` is C++ over `{0}`, `{1}` ... (the args, cast to `compute`).
    `reduce`: `how` ("sum", "max", "min") of `args[0]` over its `dims`, divided by `divide` (a mean's count).
    `window`: `args[0]` placed in a window of one dim of the domain, zeros elsewhere (slice_backward).
    `gather`: `args[0]` (a value of the kernel's domain) at the index `args[1]` (a row value) of the reduced
    dim, `index_limit` its size (an index outside [0, limit) other than `skip` makes the kernel fail)."""

    kind: str
    out: Value
    args: tuple[Value, ...]
    expr: str = ""
    compute: Any = None
    how: str = ""
    dims: tuple[int, ...] = ()
    divide: float = 1.0
    skip: int | None = None
    node: Node | None = None  # the graph node it lowers (None for a temporary's term)
    extra: dict[str, Any] = field(default_factory=dict)


_temporaries = itertools.count(-1, -1)


def temporary(shape: tuple[int, ...], dtype: Any, device: Any) -> Value:
    """A value only a kernel holds (negative ids never meet the graph's)."""
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return Value(next(_temporaries), tuple(shape), tuple(strides[::-1]), dtype, device)


def _schema_args(node: Node) -> list[tuple[str, str | None]]:
    schema = str(node.op.schema)
    inner = schema[schema.index("(") + 1:schema.rindex(")", 0, schema.index("->"))]
    out = []
    for part in inner.split(","):
        part = part.strip()
        if not part or part == "*":
            continue
        head, _, default = part.partition("=")
        out.append((head.split()[-1], default or None))
    return out


_DEFAULTS = {"None": None, "False": False, "True": True, "[]": [], "Mean": "mean"}


def bound(node: Node) -> dict[str, Any] | None:
    """The node's arguments by schema name, defaults filled in; None where a default is not understood."""
    names = _schema_args(node)
    if len(node.args) > len(names):
        return None
    out: dict[str, Any] = {}
    for k, (name, default) in enumerate(names):
        if k < len(node.args):
            out[name] = node.args[k]
        elif default is None:
            return None
        elif default in _DEFAULTS:
            out[name] = _DEFAULTS[default]
        else:
            try:
                out[name] = int(default)
            except ValueError:
                try:
                    out[name] = float(default)
                except ValueError:
                    return None
    return out


def literal(x: Any, ctype: str) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return f"static_cast<{ctype}>({x}LL)"
    if x != x:
        return f"static_cast<{ctype}>(NAN)"
    if abs(x) == float("inf"):
        return f"static_cast<{ctype}>({'-' if x < 0 else ''}INFINITY)"
    return f"static_cast<{ctype}>({float(x).hex()})"


def _wide(dtype: Any) -> Any:
    """The dtype of a compound op's temporaries: float32 for the half types (the eager CUDA kernels of
    softmax, layer norm, variance and cross entropy compute in float and round only their results)."""
    return _DTYPES["float32"] if dtype.name in HALF else dtype


def _cpu(v: Any, node: Node | None = None) -> bool:
    """A tensor on the node's device (the CPU without a node) in a dtype the fused kernels there read."""
    device = "cpu" if node is None else str(node.outputs[0].device)
    return isinstance(v, Value) and str(v.device) == device and \
        (v.dtype.name in CTYPE or (device != "cpu" and v.dtype.name in HALF))


def _floats(node: Node) -> tuple[str, ...]:
    """The floating dtypes the fused kernels of the node's device compute in and store."""
    return FLOATS if str(node.outputs[0].device) == "cpu" else (*FLOATS, *HALF)


_DTYPES: dict[str, Any] = {}


def _promote_dtype(values: list[Value], scalars: list[Any]) -> Any:
    """The dtype a comparison computes in: the widest float among the tensors, else a float scalar's
    float64, else int64 (exact for every integer and bool)."""
    order = (*HALF, *FLOATS)
    floats = [v.dtype for v in values if v.dtype.name in order]
    if floats:
        if {d.name for d in floats} == set(HALF):
            return _DTYPES["float32"]  # float16 with bfloat16 promotes to float32
        return max(floats, key=lambda d: order.index(d.name))
    if any(isinstance(s, float) for s in scalars):
        return _DTYPES["float64"]
    return _DTYPES["int64"]


_ARG = re.compile(r"\ba_(\w+)\b")


def _pointwise(node: Node, spec: Any) -> list[Term] | None:
    tensors, scalars, expr, kind = spec
    args = bound(node)
    out = node.outputs[0]
    if args is None or len(node.outputs) != 1:
        return None
    if kind == "bool":
        if out.dtype.name != "bool":
            return None
    elif out.dtype.name not in _floats(node):
        return None
    values: list[Value] = []
    for name in tensors:
        v = args.get(name)
        if not _cpu(v, node):
            return None
        values.append(v)
    scalar_values = [args.get(name) for name in scalars]
    if not all(isinstance(s, bool | int | float) for s in scalar_values):
        return None
    compute = _promote_dtype(values, scalar_values) if kind == "bool" else out.dtype
    ctype = COMPUTE_CTYPE[compute.name]
    index = {name: k for k, name in enumerate(tensors)}

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in index:
            return "{" + str(index[name]) + "}"
        return literal(args[name], ctype)

    body = _ARG.sub(sub, expr.replace("{", "{{").replace("}", "}}"))
    return [Term("map", out, tuple(values), body, compute, node=node)]


def _dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    if dim is None or (isinstance(dim, list | tuple) and len(dim) == 0):
        return tuple(range(ndim))
    dims = [dim] if isinstance(dim, int) and not isinstance(dim, bool) else list(dim) if isinstance(dim, list | tuple) \
        else None
    if dims is None or not all(isinstance(d, int) and -max(ndim, 1) <= d < max(ndim, 1) for d in dims):
        return None
    out = tuple(sorted({d % ndim for d in dims})) if ndim else ()
    return out if len(out) == len(dims) else None


def _count(shape: tuple[int, ...], dims: tuple[int, ...]) -> int:
    return math.prod(shape[d] for d in dims)


def _kept(shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if d in dims else s for d, s in enumerate(shape))


def _float_source(v: Any, node: Node) -> bool:
    return _cpu(v, node) and v.dtype.name in _floats(node) and len(v.shape) > 0 and math.prod(v.shape) > 0


def _map(out: Value, args: tuple[Value, ...], expr: str, node: Node | None = None) -> Term:
    return Term("map", out, args, expr, out.dtype, node=node)


def _reduce(out: Value, src: Value, how: str, dims: tuple[int, ...], divide: float = 1.0,
            node: Node | None = None) -> Term:
    return Term("reduce", out, (src,), how=how, dims=dims, divide=divide, node=node)


def _reduction(node: Node) -> list[Term] | None:
    args = bound(node)
    if args is None or len(node.outputs) != 1:
        return None
    src, out = args.get("self"), node.outputs[0]
    if not _float_source(src, node) or out.dtype is not src.dtype or args.get("dtype") is not None:
        return None
    dims = _dims(args.get("dim"), len(src.shape))
    if dims is None:
        return None
    name = node.name
    how = "max" if name == "amax" else "min" if name == "amin" else "sum"
    divide = float(_count(src.shape, dims)) if name.startswith("mean") else 1.0
    if name == "var.correction":
        correction = args.get("correction")
        correction = 1 if correction is None else correction
        if not isinstance(correction, int | float):
            return None
        kept = _kept(src.shape, dims)
        mean = temporary(kept, _wide(src.dtype), src.device)
        centred = temporary(src.shape, _wide(src.dtype), src.device)
        square = temporary(src.shape, _wide(src.dtype), src.device)
        return [_reduce(mean, src, "sum", dims, float(_count(src.shape, dims))),
                _map(centred, (src, mean), "({0} - {1})"), _map(square, (centred,), "({0} * {0})"),
                _reduce(out, square, "sum", dims, max(float(_count(src.shape, dims)) - correction, 0.0), node)]
    return [_reduce(out, src, how, dims, divide, node)]


def _softmax(node: Node, log: bool) -> list[Term] | None:
    args = bound(node)
    if args is None or len(node.outputs) != 1:
        return None
    src, out = args.get("self"), node.outputs[0]
    if not _float_source(src, node) or out.dtype is not src.dtype or args.get("dtype") is not None:
        return None
    dims = _dims(args.get("dim"), len(src.shape))
    if dims is None:
        return None
    kept = _kept(src.shape, dims)
    peak = temporary(kept, _wide(src.dtype), src.device)
    shifted = temporary(src.shape, _wide(src.dtype), src.device)
    exps = temporary(src.shape, _wide(src.dtype), src.device)
    total = temporary(kept, _wide(src.dtype), src.device)
    terms = [_reduce(peak, src, "max", dims), _map(shifted, (src, peak), "({0} - {1})"),
             _map(exps, (shifted,), "op_exp({0})"), _reduce(total, exps, "sum", dims)]
    if log:
        log_total = temporary(kept, _wide(src.dtype), src.device)
        return [*terms, _map(log_total, (total,), "op_log({0})"), _map(out, (shifted, log_total), "({0} - {1})", node)]
    return [*terms, _map(out, (exps, total), "({0} / {1})", node)]


def _layer_norm(node: Node) -> list[Term] | None:
    args = bound(node)
    if args is None or len(node.outputs) not in (1, 3):
        return None
    src, shape, weight, bias, eps = (args.get(k) for k in ("input", "normalized_shape", "weight", "bias", "eps"))
    if not _float_source(src, node):
        return None
    if len(node.outputs) == 3:
        out, mean_out, rstd_out = node.outputs
    else:  # layer_norm: the statistics are the kernel's own
        out = node.outputs[0]
        kept_shape = tuple(1 if d >= len(src.shape) - len(shape) else s for d, s in enumerate(src.shape)) \
            if isinstance(shape, list | tuple) else ()
        mean_out, rstd_out = (temporary(kept_shape, _wide(src.dtype), src.device) for _ in range(2))
    if not _float_source(src, node) or not isinstance(shape, list | tuple) or not isinstance(eps, int | float) \
            or any(v.dtype is not src.dtype for v in node.outputs):
        return None
    k = len(shape)
    if k == 0 or k > len(src.shape) or tuple(src.shape[-k:]) != tuple(shape):
        return None
    for p in (weight, bias):
        if p is not None and (not _cpu(p, node) or p.dtype is not src.dtype or tuple(p.shape) != tuple(shape)):
            return None
    dims = tuple(range(len(src.shape) - k, len(src.shape)))
    n = float(_count(src.shape, dims))
    kept = _kept(src.shape, dims)
    if tuple(mean_out.shape) != kept or tuple(rstd_out.shape) != kept:
        return None
    centred = temporary(src.shape, _wide(src.dtype), src.device)
    square = temporary(src.shape, _wide(src.dtype), src.device)
    var = temporary(kept, _wide(src.dtype), src.device)
    terms = [_reduce(mean_out, src, "sum", dims, n, node), _map(centred, (src, mean_out), "({0} - {1})"),
             _map(square, (centred,), "({0} * {0})"), _reduce(var, square, "sum", dims, n),
             _map(rstd_out, (var,), "op_rsqrt(({0} + " + literal(eps, COMPUTE_CTYPE[src.dtype.name]) + "))", node)]
    result = [(weight, "({0} * {1})"), (bias, "({0} + {1})")]
    last = temporary(src.shape, _wide(src.dtype), src.device) if weight is not None or bias is not None else out
    terms.append(_map(last, (centred, rstd_out), "({0} * {1})", node if last is out else None))
    steps = [(p, e) for p, e in result if p is not None]
    for i, (p, e) in enumerate(steps):
        nxt = out if i == len(steps) - 1 else temporary(src.shape, _wide(src.dtype), src.device)
        terms.append(_map(nxt, (last, p), e, node if nxt is out else None))
        last = nxt
    return terms


def _cross_entropy(node: Node) -> list[Term] | None:
    """log-softmax over the classes, the target's entry, the mean (or sum, or none) over the batch."""
    args = bound(node)
    if args is None or len(node.outputs) != 1 or args.get("label_smoothing", 0.0) != 0.0:
        return None
    src, target, weight, reduction, ignore = (args.get(k) for k in
                                              ("self", "target", "weight", "reduction", "ignore_index"))
    out = node.outputs[0]
    if not _float_source(src, node) or len(src.shape) != 2 or weight is not None or out.dtype is not src.dtype \
            or not _cpu(target, node) or target.dtype.name != "int64" or tuple(target.shape) != src.shape[:1] \
            or reduction not in ("mean", "sum", "none") or not isinstance(ignore, int):
        return None
    dims = (1,)
    kept = (src.shape[0], 1)
    dt, dev = src.dtype, src.device
    rows = src.shape[:1]
    peak, shifted, exps, total, lse, picked, loss = (temporary(s, _wide(dt), dev) for s in
                                                     (kept, src.shape, src.shape, kept, kept, rows, rows))
    valid = temporary(rows, _wide(dt), dev)
    ct = COMPUTE_CTYPE[dt.name]
    terms = [_reduce(peak, src, "max", dims), _map(shifted, (src, peak), "({0} - {1})"),
             _map(exps, (shifted,), "op_exp({0})"), _reduce(total, exps, "sum", dims),
             _map(lse, (peak, total), "({0} + op_log({1}))"),
             Term("gather", picked, (src, target), skip=ignore, extra={"limit": src.shape[1]}),
             Term("map", loss, (target, lse, picked),
                  f"(({{0}} == {ignore}LL) ? static_cast<{ct}>(0) : static_cast<{ct}>({{1}} - {{2}}))",
                  compute=None),
             Term("map", valid, (target,), f"(({{0}} == {ignore}LL) ? static_cast<{ct}>(0) : static_cast<{ct}>(1))",
                  compute=None)]
    if reduction == "none":
        if tuple(out.shape) != src.shape[:1]:
            return None
        return [*terms, Term("map", out, (loss,), "{0}", dt, node=node)]
    summed = temporary((), _wide(dt), dev)
    if reduction == "sum":
        return [*terms, _reduce(out, loss, "sum", (0,), node=node)]
    count = temporary((), _wide(dt), dev)
    return [*terms, _reduce(summed, loss, "sum", (0,)), _reduce(count, valid, "sum", (0,)),
            _map(out, (summed, count), "({0} / {1})", node)]


def _to_copy(node: Node) -> list[Term] | None:
    args = bound(node)
    out = node.outputs[0] if len(node.outputs) == 1 else None
    if args is None or out is None or not _cpu(args.get("self"), node) \
            or out.dtype.name not in (*_floats(node), "bool"):
        return None
    if any(args.get(k) not in (None, False) for k in ("layout", "device", "pin_memory", "non_blocking")) \
            or args.get("memory_format") is not None:
        return None
    return [Term("map", out, (args["self"],), "{0}", out.dtype, node=node)]


def _slice_backward(node: Node) -> list[Term] | None:
    """Zeros with the gradient in a window of one dim: each element reads the gradient where it falls in the
    window (a `window` term: `extra` has the dim, first index, count and step)."""
    args = bound(node)
    out = node.outputs[0] if len(node.outputs) == 1 else None
    if args is None or out is None:
        return None
    grad, dim, start, end, step = (args.get(k) for k in ("grad_output", "dim", "start", "end", "step"))
    if not _float_source(grad, node) or out.dtype is not grad.dtype or not isinstance(dim, int) \
            or not isinstance(step, int) or step < 1 or len(out.shape) != len(grad.shape):
        return None
    dim %= len(out.shape)
    window = range(*slice(start, end, step).indices(out.shape[dim]))
    if len(window) != grad.shape[dim] or any(a != b for d, (a, b) in enumerate(zip(grad.shape, out.shape,
                                                                                    strict=True)) if d != dim):
        return None
    return [Term("window", out, (grad,), node=node,
                 extra={"dim": dim, "start": window.start, "count": len(window), "step": step})]


COMPOUND = {"softmax.int": lambda n: _softmax(n, False), "log_softmax.int": lambda n: _softmax(n, True),
            "native_layer_norm": _layer_norm, "layer_norm": _layer_norm, "_cross_entropy_indices": _cross_entropy,
            "cross_entropy_loss": _cross_entropy, "_to_copy": _to_copy, "slice_backward": _slice_backward,
            **{name: _reduction for name in ("sum", "sum.dim_IntList", "mean", "mean.dim", "amax", "amin",
                                             "var.correction")}}


def lower(node: Node, specs: dict[str, Any], device: str = "cpu") -> list[Term] | None:
    """The node's terms, or None when no fused kernel on `device` ("cpu" or "cuda:N") can compute it."""
    if not _DTYPES:
        from runtime.dtypes import ALL_DTYPES
        _DTYPES.update({d.name: d for d in ALL_DTYPES})
    if not node.outputs or str(node.outputs[0].device) != device or any(not _cpu(v, node) for v in node.outputs):
        return None
    spec = specs.get(node.name)
    if spec is not None:
        return _pointwise(node, spec)
    make = COMPOUND.get(node.name)
    return make(node) if make is not None else None


def element_reads(terms: list[Term], need: set[int], produced: set[int],
                  space: dict[int, str]) -> tuple[set[int], set[int]]:
    """What computing the values `need` element by element reads, for both renderers: (the group's inputs to
    load, the element values of its terms to compute), following the terms backwards from `need`."""
    loads = {vid for vid in need if vid not in produced}
    need = {vid for vid in need if vid in produced}
    for t in reversed(terms):
        if t.out.id in need and space[t.out.id] == "elem" and t.kind != "window":
            for a in t.args:
                if a.id not in produced:
                    loads.add(a.id)
                elif space[a.id] == "elem":
                    need.add(a.id)
    return loads, need

"""Lowered nodes: a compiled graph's common operators run as NumPy expressions on the arrays, without the
dispatcher, the op's argument checks or a Tensor per intermediate argument (Note [Lowered nodes]).

Note [Lowered nodes]
A captured graph's shapes, dtypes and arguments are fixed by its guards, and its ops were checked when the
capture ran them, so a compiled program need not repeat per call what the eager path does per call: parse
the arguments, pick a kernel through the dispatch table, check shapes and dtypes, wrap every result. For
the operators in `LOWERINGS` (matmuls and linear, views, softmax and cross entropy with their backward
pieces, reductions, comparisons, casts, the arithmetic that did not fuse, the views of the attention's
batched products), `lower(node)` returns a function
of the node's array arguments computing what the eager kernel computes: the same NumPy operations in the
output's dtype, so that results agree within rounding (sums may be taken in another order). Conditions the
function does not cover (another dtype, a weight argument, more dims) give None: the node keeps its
operator call, as does a view (`VIEWS`) that the program returns (a Tensor over a NumPy view would not
share its base's storage object). Every compiled program is checked against eager execution when it is
made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.compile.graph import Node, Value

Lowered = Callable[[list[Any]], Any]
LOWERINGS: dict[str, Callable[[Node], Lowered | None]] = {}

_FLOAT = (np.dtype(np.float32), np.dtype(np.float64))


def lowering(*names: str) -> Callable[[Callable[[Node], Lowered | None]], Callable[[Node], Lowered | None]]:
    def register(fn: Callable[[Node], Lowered | None]) -> Callable[[Node], Lowered | None]:
        for name in names:
            LOWERINGS[name] = fn
        return fn
    return register


# Lowerings whose result is a NumPy view of their input: a Tensor made over it does not share the input's
# storage object (nor its version counter), so a view the program returns keeps its operator call.
VIEWS = frozenset({"t", "unsqueeze", "movedim.intlist", "movedim.int", "view", "reshape", "flatten.using_ints",
                   "_reshape_alias", "squeeze.dim", "squeeze", "squeeze.dims", "transpose.int", "slice.Tensor",
                   "expand"})


def lower(node: Node) -> Lowered | None:
    """A function of the node's arguments (arrays in place of its tensor values) returning its output's
    array, or None where the node keeps its operator call."""
    make = LOWERINGS.get(node.name)
    if make is None or len(node.outputs) != 1 or node.result_kind != "tensor":
        return None
    values = node.inputs()
    if any(str(v.device) != "cpu" or v.dtype.np is None for v in [*values, *node.outputs]):
        return None
    fn = make(node)
    if fn is None:
        return None
    out = np.dtype(node.outputs[0].dtype.np)

    def run(args: list[Any]) -> Any:
        r = fn(args)
        if r.__class__ is not np.ndarray:
            r = np.asarray(r)
        return r if r.dtype == out else r.astype(out)
    return run


def _float_inputs(node: Node) -> bool:
    return all(np.dtype(v.dtype.np) in _FLOAT for v in node.inputs())


def _dim(d: int, ndim: int) -> int:
    return d % ndim if ndim else 0


# -- matmuls --------------------------------------------------------------------------------------------
@lowering("mm")
def _mm(node: Node) -> Lowered | None:
    if not _float_inputs(node):
        return None
    return lambda a: a[0] @ a[1]


@lowering("bmm")
def _bmm(node: Node) -> Lowered | None:
    if not _float_inputs(node) or node.args[0].dtype is not node.args[1].dtype:
        return None
    return lambda a: a[0] @ a[1]


@lowering("linear")
def _linear(node: Node) -> Lowered | None:
    x, w, b = node.args[:3]
    if not _float_inputs(node) or len(w.shape) != 2 or (isinstance(b, Value) and b.shape != (w.shape[0],)):
        return None
    rows = (-1, w.shape[1])
    shape = node.outputs[0].shape

    def run(a: list[Any]) -> Any:
        x = a[0]
        if x.ndim > 2 and x.flags.c_contiguous:  # one GEMM over all leading dims rather than one per batch
            out = (x.reshape(rows) @ a[1].T).reshape(shape)
        else:
            out = x @ a[1].T
        if a[2] is not None:
            out += a[2]
        return out
    return run


@lowering("addmm")
def _addmm(node: Node) -> Lowered | None:
    beta, alpha = node.args[3], node.args[4]
    if not _float_inputs(node) or beta != 1 or alpha != 1:
        return None
    return lambda a: a[1] @ a[2] + a[0]


# -- views ----------------------------------------------------------------------------------------------
@lowering("t")
def _t(node: Node) -> Lowered | None:
    return lambda a: a[0].T


@lowering("unsqueeze")
def _unsqueeze(node: Node) -> Lowered | None:
    d = node.args[1] % (len(node.args[0].shape) + 1)
    return lambda a: np.expand_dims(a[0], d)


@lowering("movedim.intlist", "movedim.int")
def _movedim(node: Node) -> Lowered | None:
    src, dst = node.args[1], node.args[2]
    return lambda a: np.moveaxis(a[0], src, dst)


@lowering("transpose.int")
def _transpose(node: Node) -> Lowered | None:
    ndim = len(node.args[0].shape)
    d0, d1 = _dim(node.args[1], ndim), _dim(node.args[2], ndim)
    return lambda a: np.swapaxes(a[0], d0, d1)


@lowering("slice.Tensor")
def _slice(node: Node) -> Lowered | None:
    args = list(node.args) + [0, None, None, 1][len(node.args) - 1:]
    dim, start, end, step = args[1:5]
    if not all(x is None or (isinstance(x, int) and not isinstance(x, bool)) for x in (dim, start, end, step)) \
            or not isinstance(step, int) or step < 1:
        return None
    index = (slice(None),) * _dim(dim, len(node.args[0].shape)) + (slice(start, end, step),)
    shape = node.outputs[0].shape

    def run(a: list[Any]) -> Any:
        out = a[0][index]
        if out.shape != shape:
            raise RuntimeError(f"slice: got shape {out.shape}, the graph has {shape}")
        return out
    return run


@lowering("expand")
def _expand(node: Node) -> Lowered | None:
    """An expand to the input's own shape (the one matmul's decomposition makes) is the input."""
    if node.outputs[0].shape != node.args[0].shape:
        return None
    return lambda a: a[0]


@lowering("view", "reshape", "flatten.using_ints", "_reshape_alias", "squeeze.dim", "squeeze", "squeeze.dims")
def _reshape(node: Node) -> Lowered | None:
    shape = node.outputs[0].shape
    return lambda a: a[0].reshape(shape)


# -- pointwise that did not fuse ------------------------------------------------------------------------
@lowering("relu")
def _relu(node: Node) -> Lowered | None:
    if not _float_inputs(node):
        return None
    return lambda a: np.maximum(a[0], 0)


@lowering("threshold_backward")
def _threshold_backward(node: Node) -> Lowered | None:
    th = node.args[2]
    if not _float_inputs(node) or not isinstance(th, int | float) or isinstance(th, bool):
        return None
    return lambda a: np.where(a[1] <= th, 0, a[0])


_BINARY = {"mul.Tensor": np.multiply, "div.Tensor": np.true_divide, "add.Tensor": np.add, "sub.Tensor": np.subtract}


@lowering(*_BINARY)
def _binary(node: Node) -> Lowered | None:
    ufunc = _BINARY[node.name]
    alpha = node.args[2] if len(node.args) > 2 else 1
    out = np.dtype(node.outputs[0].dtype.np)
    if out not in _FLOAT or not all(isinstance(v, Value) for v in node.args[:2]) or alpha != 1:
        return None
    return lambda a: ufunc(a[0], a[1], dtype=out)


_SCALAR = {"mul.Scalar": np.multiply, "div.Scalar": np.true_divide}


@lowering(*_SCALAR)
def _binary_scalar(node: Node) -> Lowered | None:
    ufunc, s = _SCALAR[node.name], node.args[1]
    out = np.dtype(node.outputs[0].dtype.np)
    if out not in _FLOAT or not isinstance(s, int | float) or isinstance(s, bool) or not _float_inputs(node):
        return None
    return lambda a: ufunc(a[0], s, dtype=out)


_COMPARE = {"ne.Scalar": np.not_equal, "eq.Scalar": np.equal, "gt.Scalar": np.greater, "lt.Scalar": np.less,
            "ge.Scalar": np.greater_equal, "le.Scalar": np.less_equal}


@lowering(*_COMPARE)
def _compare(node: Node) -> Lowered | None:
    ufunc, s = _COMPARE[node.name], node.args[1]
    if not isinstance(s, int | float) or isinstance(s, bool):
        return None
    return lambda a: ufunc(a[0], s)


@lowering("where.self")
def _where(node: Node) -> Lowered | None:
    if np.dtype(node.args[0].dtype.np) != np.bool_:
        return None
    return lambda a: np.where(a[0], a[1], a[2])


@lowering("_to_copy")
def _to_copy(node: Node) -> Lowered | None:
    layout, device = node.args[2], node.args[3]
    memory_format = node.args[6] if len(node.args) > 6 else None
    if layout is not None or device is not None or memory_format is not None:
        return None
    out = np.dtype(node.outputs[0].dtype.np)
    return lambda a: a[0].astype(out)


@lowering("one_hot")
def _one_hot(node: Node) -> Lowered | None:
    n = node.outputs[0].shape[-1]
    classes = np.arange(n)

    def run(a: list[Any]) -> Any:
        x = a[0]
        if x.size and (x.min() < 0 or x.max() >= n):
            raise RuntimeError(f"one_hot: a class value is outside [0, {n})")
        return (x[..., None] == classes).astype(np.int64)
    return run


# -- reductions -----------------------------------------------------------------------------------------
def _summable(node: Node) -> bool:
    """Sums NumPy takes as the eager kernels do: float32/float64 (means), and integers and bool (sums)."""
    dt = np.dtype(node.args[0].dtype.np)
    return dt in _FLOAT or (node.name.startswith("sum") and dt.kind in "biu")


@lowering("sum", "mean")
def _sum_all(node: Node) -> Lowered | None:
    if node.args[1] is not None or not _summable(node):
        return None
    if node.name == "mean":
        return lambda a: np.mean(a[0])
    return lambda a: np.sum(a[0])


@lowering("sum.dim_IntList", "mean.dim")
def _sum_dims(node: Node) -> Lowered | None:
    src, dims, keepdim, dtype = node.args[:4]
    if dtype is not None or not _summable(node):
        return None
    ndim = len(src.shape)
    axis = None if dims is None or (isinstance(dims, list | tuple) and not dims) else \
        tuple(sorted({_dim(d, ndim) for d in ([dims] if isinstance(dims, int) else dims)}))
    reduce = np.mean if node.name == "mean.dim" else np.sum
    return lambda a: reduce(a[0], axis=axis, keepdims=bool(keepdim))


# -- softmax and cross entropy --------------------------------------------------------------------------
@lowering("softmax.int", "_softmax")
def _softmax(node: Node) -> Lowered | None:
    src, dim = node.args[0], node.args[1]
    if node.name == "softmax.int" and node.args[2] is not None or np.dtype(src.dtype.np) not in _FLOAT:
        return None
    d = _dim(dim, len(src.shape))

    def run(a: list[Any]) -> Any:
        e = np.exp(a[0] - a[0].max(axis=d, keepdims=True))
        e /= e.sum(axis=d, keepdims=True)
        return e
    return run


@lowering("log_softmax.int")
def _log_softmax(node: Node) -> Lowered | None:
    src, dim = node.args[0], node.args[1]
    if node.args[2] is not None or np.dtype(src.dtype.np) not in _FLOAT:
        return None
    d = _dim(dim, len(src.shape))

    def run(a: list[Any]) -> Any:
        shifted = a[0] - a[0].max(axis=d, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=d, keepdims=True))
    return run


@lowering("_softmax_backward_data")
def _softmax_backward(node: Node) -> Lowered | None:
    g, y, dim = node.args[0], node.args[1], node.args[2]
    if not _float_inputs(node) or g.dtype is not y.dtype:
        return None
    d = _dim(dim, len(y.shape))

    def run(a: list[Any]) -> Any:
        gy = a[0] * a[1]
        return gy - a[1] * gy.sum(axis=d, keepdims=True)
    return run


_REDUCTION = {0: "none", 1: "mean", 2: "sum", "none": "none", "mean": "mean", "sum": "sum"}


@lowering("_cross_entropy_indices")
def _cross_entropy(node: Node) -> Lowered | None:
    logits, target, weight, reduction, ignore = node.args[:5]
    how = _REDUCTION.get(reduction)
    if (len(logits.shape) != 2 or len(target.shape) != 1 or weight is not None or how is None
            or np.dtype(logits.dtype.np) not in _FLOAT or np.dtype(target.dtype.np).kind not in "iu"
            or any(a not in (None, 0, 0.0) for a in node.args[5:])):
        return None
    rows = np.arange(logits.shape[0])
    dt = np.dtype(logits.dtype.np)

    def run(a: list[Any]) -> Any:
        x, t = a[0], a[1]
        shifted = x - x.max(axis=1, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=1))
        valid = t != ignore
        index = np.where(valid, t, 0)
        if index.size and (index.min() < 0 or index.max() >= x.shape[1]):
            bad = int(index[(index < 0) | (index >= x.shape[1])][0])
            raise IndexError(f"Target {bad} is out of bounds.")
        picked = shifted[rows, index]
        loss = np.where(valid, lse - picked, 0).astype(dt)
        if how == "none":
            return loss
        total = loss.sum(dtype=dt)
        return total if how == "sum" else np.true_divide(total, valid.sum(), dtype=dt)
    return run

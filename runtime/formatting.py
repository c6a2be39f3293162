"""`repr` of a tensor, laid out as PyTorch prints it: `tensor([[1., 2.]], grad_fn=<MulBackward0>)`."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes

# dtypes that PyTorch leaves out of the repr (they are what a literal would give)
_IMPLIED = {"float32", "int64", "bool"}


def _float_formatter(values: np.ndarray) -> Any:
    finite = values[np.isfinite(values)].astype(np.float64)
    if finite.size == 0:
        return lambda x: f"{x:.4f}".replace("nan", "nan")
    amax = np.abs(finite).max()
    nonzero = np.abs(finite[finite != 0])
    amin = nonzero.min() if nonzero.size else 0.0
    if np.all(finite == np.round(finite)) and amax < 1e8:
        return lambda x: f"{x:.0f}." if np.isfinite(x) else str(x)
    if amax >= 1e8 or (amin and amin < 1e-4) or (amin and amax / amin > 1000 and amax >= 1e4):
        return lambda x: f"{x:.4e}" if np.isfinite(x) else str(x)
    return lambda x: f"{x:.4f}" if np.isfinite(x) else str(x)


def format_values(array: np.ndarray, indent: int) -> str:
    """The nested-list text of the values, each right-aligned to the widest, as PyTorch prints them."""
    if array.dtype.kind == "f":
        fmt = _float_formatter(array)
    elif array.dtype.kind == "b":
        def fmt(x: Any) -> str:
            return "True" if x else "False"
    else:
        fmt = str
    shown = _shown(array)
    width = max((len(fmt(x)) for x in shown.reshape(-1)), default=0)
    kind = {"f": "float_kind", "b": "bool"}.get(array.dtype.kind, "int")
    formatter = {kind: lambda x: fmt(x).rjust(width)}
    return np.array2string(array, separator=", ", formatter=formatter, prefix=" " * indent,
                           threshold=1000, edgeitems=3, max_line_width=80)


def _shown(array: np.ndarray) -> np.ndarray:
    """The elements that get printed (the edges of each dim when the tensor is summarised)."""
    if array.size <= 1000:
        return array
    for d in range(array.ndim):
        if array.shape[d] > 6:
            array = np.concatenate([array.take(range(3), d), array.take(range(-3, 0), d)], axis=d)
    return array


def tensor_repr(t: Any) -> str:
    array = t.numpy(force=True)
    if t.dtype is dtypes.bfloat16:
        array = array.astype(np.float32)
    values = format_values(array, len("tensor("))
    extras = []
    if array.size == 0 and array.ndim != 1:
        extras.append(f"size={tuple(array.shape)}")
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if t.dtype.name not in _IMPLIED and not (t.dtype is dtypes.get_default_dtype() and array.size):
        extras.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + ", ".join([values, *extras]) + ")"

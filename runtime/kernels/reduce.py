"""Reductions (CompositeExplicitAutograd): written against the array module of the input, so one kernel
serves NumPy on CPU and CuPy on CUDA (until a generated CUDA reduction overrides it).

Dtype rules follow PyTorch: integer and bool sums/products accumulate in int64; mean/var/std/norm need a
floating input (or `dtype=`); any/all return bool (uint8 for uint8 input); arg-reductions return int64.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime import strides as S
from runtime.device import CPU
from runtime.dispatcher import CPU_BIT
from runtime.kernels._xp import dims as _dims
from runtime.kernels._xp import wrap, xp_of
from runtime.tensor import Tensor, fresh_tensor


def acc_dtype(self: Tensor, dtype: Any) -> dtypes.DType:
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    # integers and bools accumulate in int64, as PyTorch
    return self._dtype if self._dtype.is_floating_point else dtypes.int64


def _float_dtype(self: Tensor, dtype: Any, op: str) -> dtypes.DType:
    dt = dtypes.as_dtype(dtype) if dtype is not None else self._dtype
    if not dt.is_floating_point:
        raise RuntimeError(f"{op}(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {dt.name.capitalize()}")
    return dt


_FLOAT32 = np.dtype(np.float32)


def _compute(a: Any, dt: dtypes.DType) -> Any:
    """`a` in the dtype a reduction computes in (half precision in float32)."""
    ct = _FLOAT32 if dt is dtypes.float16 else dt.np
    return a if a.dtype is ct or a.dtype == ct else a.astype(ct)


def _nonempty(self: Tensor, axes: tuple[int, ...] | None, op: str) -> None:
    """PyTorch refuses max/min-like reductions over a dimension of size 0."""
    shape = self.shape
    if axes is None and self.numel() == 0:
        error = IndexError if op in ("argmax", "argmin") else RuntimeError  # as PyTorch, which differs here
        raise error(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           f"reduction dim with the 'dim' argument.")
    for d in range(len(shape)) if axes is None else axes:
        if shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


# Note [Direct reductions]
# A float32/float64 tensor reduced in its own dtype (sum, mean, amax, amin) calls the ufunc's `reduce` on
# its array directly: NumPy's `a.sum()` is that same reduce behind a Python wrapper, and no dtype needs
# converting, so the general path's checks (`acc_dtype`, `_compute`) would only cost time. The reduction
# dims are those of `_dims`, PyTorch's rules; everything else takes the general path. A reduction over
# all dims writes into a new 0-d array (`out=`), as fast as letting NumPy return a scalar and cheaper
# than making that scalar an array afterwards. On a tiny tensor the Python frames around the reduce cost
# as much as the reduce itself, so the kernels call `reduce` in their own body and hand an array result of
# the input's dtype to `fresh_tensor` without going through `wrap` (only a scalar needs `wrap`); the
# reductions over everything (`t.sum()`, `t.amax()`, `t.mean()`) write that one line of `_direct` (marked
# "all dims") in their own body, a frame less on the calls where frames are most of the time.
_DIRECT = frozenset({dtypes.float32, dtypes.float64})
_empty = np.empty
_add = np.add
_maximum = np.maximum
_minimum = np.minimum
_ndarray = np.ndarray


def _direct(ufunc: Any, self: Tensor, a: np.ndarray, axes: tuple[int, ...] | None, keepdim: bool) -> Tensor:
    """`ufunc.reduce` of `self`'s NumPy array `a` over `axes` (None: all) as a tensor of `self`'s dtype
    (Note [Direct reductions])."""
    if axes is None and not keepdim:  # all dims
        return fresh_tensor(ufunc.reduce(a, None, None, _empty((), a.dtype)), self._dtype, CPU, CPU_BIT)
    r = ufunc.reduce(a, axes, None, None, keepdim)
    return fresh_tensor(r, self._dtype, CPU, CPU_BIT) if r.__class__ is _ndarray else wrap(r, a, self._dtype)


def sum(self: Tensor, dtype: Any = None) -> Tensor:
    a = self._data
    if dtype is None and self._dtype in _DIRECT:  # Note [Direct reductions]; all dims
        if a.__class__ is _ndarray:
            return fresh_tensor(_add.reduce(a, None, None, _empty((), a.dtype)), self._dtype, CPU, CPU_BIT)
        return wrap(a.sum(), a, self._dtype)
    dt = acc_dtype(self, dtype)
    return wrap(_compute(a, dt).sum(), a, dt)


def sum_dim(self: Tensor, dim: Sequence[int] | None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    a = self._data
    axes = _dims(dim, a.ndim)
    if dtype is None and self._dtype in _DIRECT and a.__class__ is _ndarray:  # Note [Direct reductions]
        return _direct(_add, self, a, axes, keepdim)
    dt = acc_dtype(self, dtype)
    r = _compute(a, dt).sum(axis=axes, keepdims=keepdim)
    return wrap(r, a, dt)


def mean(self: Tensor, dtype: Any = None) -> Tensor:
    a = self._data
    if dtype is None and a.__class__ is _ndarray and a.size and self._dtype in _DIRECT:  # Note [Direct reductions]
        r = _add.reduce(a, None, None, _empty((), a.dtype))  # all dims
        r /= a.size  # in place: the new 0-d array
        return fresh_tensor(r, self._dtype, CPU, CPU_BIT)
    return mean_dim(self, None, False, dtype)


def mean_dim(self: Tensor, dim: Sequence[int] | None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    a = self._data
    if dtype is None and self._dtype in _DIRECT and a.__class__ is np.ndarray:  # Note [Direct reductions]
        axes = _dims(dim, a.ndim)
        count = a.size if axes is None else math.prod([a.shape[d] for d in axes])
        if count:
            t = _direct(_add, self, a, axes, keepdim)
            t._data /= count  # in place: the tensor's own new array
            return t
    dt = _float_dtype(self, dtype, "mean")
    axes = _dims(dim, a.ndim)
    count = a.size if axes is None else math.prod([a.shape[d] for d in axes])
    a = _compute(a, dt)
    with np.errstate(all="ignore"):
        r = a.sum(axis=axes, keepdims=keepdim) / count if count else a.sum(axis=axes, keepdims=keepdim) * np.nan
    return wrap(r, a, dt)


def prod(self: Tensor, dtype: Any = None) -> Tensor:
    dt = acc_dtype(self, dtype)
    return wrap(_compute(self._data, dt).prod(), self._data, dt)


def prod_dim(self: Tensor, dim: int, keepdim: bool = False, dtype: Any = None) -> Tensor:
    dt = acc_dtype(self, dtype)
    axis = S.wrap_dim(dim, self._data.ndim)
    return wrap(_compute(self._data, dt).prod(axis=axis if self._data.ndim else None, keepdims=keepdim),
                self._data, dt)


def _extreme(self: Tensor, dim: Sequence[int] | int | None, keepdim: bool, op: str, largest: bool) -> Tensor:
    a = self._data
    axes = _dims(dim, a.ndim)
    if a.ndim == 0:
        return Tensor._wrap(a.copy(), self._dtype)
    if not a.size:
        _nonempty(self, axes, op)
    if a.__class__ is np.ndarray:  # the ufunc's own reduce, which a.max() calls (Note [Direct reductions])
        return _direct(_maximum if largest else _minimum, self, a, axes, keepdim)
    r = a.max(axis=axes, keepdims=keepdim) if largest else a.min(axis=axes, keepdims=keepdim)
    return wrap(r, a, self._dtype)


def amax(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    a = self._data
    if a.__class__ is _ndarray and a.size and a.ndim and self._dtype in _DIRECT:  # Note [Direct reductions]
        if dim.__class__ is tuple and not dim and not keepdim:  # all dims
            return fresh_tensor(_maximum.reduce(a, None, None, _empty((), a.dtype)), self._dtype, CPU, CPU_BIT)
        return _direct(_maximum, self, a, _dims(dim, a.ndim), keepdim)
    return _extreme(self, dim, keepdim, "amax", True)


def amin(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    a = self._data
    if a.__class__ is _ndarray and a.size and a.ndim and self._dtype in _DIRECT:  # Note [Direct reductions]
        if dim.__class__ is tuple and not dim and not keepdim:  # all dims
            return fresh_tensor(_minimum.reduce(a, None, None, _empty((), a.dtype)), self._dtype, CPU, CPU_BIT)
        return _direct(_minimum, self, a, _dims(dim, a.ndim), keepdim)
    return _extreme(self, dim, keepdim, "amin", False)


def max(self: Tensor) -> Tensor:
    return _extreme(self, None, False, "max", True)


def min(self: Tensor) -> Tensor:
    return _extreme(self, None, False, "min", False)


def _arg(self: Tensor, dim: int | None, keepdim: bool, op: str, largest: bool) -> Tensor:
    a = self._data
    xp = xp_of(a)
    if dim is None:
        _nonempty(self, None, op)
        flat = a.reshape(-1)
        r = _nan_arg(xp, flat, 0, largest)
        if keepdim:
            r = xp.asarray(r).reshape((1,) * a.ndim)
        return wrap(r, a, dtypes.int64)
    axis = S.wrap_dim(dim, a.ndim)
    if a.ndim == 0:
        return wrap(xp.zeros((), dtype=np.int64), a, dtypes.int64)
    _nonempty(self, (axis,), op)
    r = _nan_arg(xp, a, axis, largest)
    if keepdim:
        r = xp.expand_dims(r, axis)
    return wrap(r, a, dtypes.int64)


def _nan_arg(xp: Any, a: Any, axis: int, largest: bool) -> Any:
    """argmax/argmin where NaN wins (as PyTorch's max/min propagate NaN); first index on ties."""
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    r = (xp.argmax if largest else xp.argmin)(a, axis=axis)
    if a.dtype.kind == "f":
        nan = xp.isnan(a)
        r = xp.where(nan.any(axis=axis), xp.argmax(nan, axis=axis), r)
    return r


def argmax(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg(self, dim, keepdim, "argmax", True)


def argmin(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg(self, dim, keepdim, "argmin", False)


def max_dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _extreme(self, dim, keepdim, "max", True), _arg(self, dim, keepdim, "max", True)


def min_dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _extreme(self, dim, keepdim, "min", False), _arg(self, dim, keepdim, "min", False)


def _logical(self: Tensor, dim: int | Sequence[int] | None, keepdim: bool, every: bool) -> Tensor:
    a = self._data
    if dim is None or dim.__class__ is int:
        axis = None if dim is None else S.wrap_dim(dim, a.ndim)
    else:  # all.dims / any.dims: several dims (an empty list reduces none, as PyTorch)
        axis = _dims(dim, a.ndim) if len(dim) else ()
    if a.ndim == 0:
        axis = None
    b = a != 0
    r = b.all(axis=axis, keepdims=keepdim) if every else b.any(axis=axis, keepdims=keepdim)
    dt = dtypes.uint8 if self._dtype is dtypes.uint8 else dtypes.bool_
    return wrap(r, a, dt)


def any(self: Tensor) -> Tensor:
    return _logical(self, None, False, False)


def any_dim(self: Tensor, dim: int, keepdim: bool = False) -> Tensor:
    return _logical(self, dim, keepdim, False)


def any_dims(self: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    return _logical(self, tuple(dim) if dim is not None else None, keepdim, False)


def all_dims(self: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    return _logical(self, tuple(dim) if dim is not None else None, keepdim, True)


def all(self: Tensor) -> Tensor:
    return _logical(self, None, False, True)


def all_dim(self: Tensor, dim: int, keepdim: bool = False) -> Tensor:
    return _logical(self, dim, keepdim, True)


def var(self: Tensor, dim: Sequence[int] | None = None, correction: Any = None, keepdim: bool = False) -> Tensor:
    """Variance with Bessel's `correction` (default 1) over `dim` (all dims when None)."""
    dt = _float_dtype(self, None, "var")
    a = _compute(self._data, dt)
    axes = _dims(dim, a.ndim)
    count = self.numel() if axes is None else math.prod(self.shape[d] for d in axes)
    c = 1 if correction is None else correction
    with np.errstate(all="ignore"):
        if count == 0:
            r = a.sum(axis=axes, keepdims=keepdim) * np.nan
        else:
            centered = a - a.mean(axis=axes, keepdims=True)
            r = (centered * centered).sum(axis=axes, keepdims=keepdim) / builtins_max(count - c, 0)
    return wrap(r, a, dt)


def builtins_max(a: float, b: float) -> float:
    """max() of two numbers (this module defines its own `max`)."""
    return a if a > b else b


def std(self: Tensor, dim: Sequence[int] | None = None, correction: Any = None, keepdim: bool = False) -> Tensor:
    v = var(self, dim, correction, keepdim)
    xp = xp_of(v._data)
    return wrap(xp.sqrt(v._data), v._data, v._dtype)


def logsumexp(self: Tensor, dim: Sequence[int], keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) computed stably (the max is subtracted first); integers promote to float."""
    dt = self._dtype if self._dtype.is_floating_point else dtypes.get_default_dtype()
    a = _compute(self._data, dt)
    xp = xp_of(a)
    axes = _dims(dim, a.ndim)
    if a.ndim == 0:  # one value: itself (exp would overflow past 88 in float32)
        _dims(dim, 0)
        return wrap(a.copy(), a, dt)
    if a.size == 0:
        with np.errstate(all="ignore"):
            return wrap(xp.log(xp.exp(a).sum(axis=axes, keepdims=keepdim)), a, dt)
    m = a.max(axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    with np.errstate(all="ignore"):
        r = xp.log(xp.exp(a - m).sum(axis=axes, keepdims=True)) + m
    if not keepdim:
        r = r.squeeze(axis=axes) if axes is not None else r.reshape(())
    return wrap(r, a, dt)


def linalg_vector_norm(self: Tensor, ord: float = 2, dim: Sequence[int] | None = None, keepdim: bool = False,
                       dtype: Any = None) -> Tensor:
    """sum(|x|^ord)^(1/ord); ord = inf/-inf take max/min |x|, ord = 0 counts non-zeros."""
    dt = _float_dtype(self, dtype, "linalg.vector_norm")
    a = xp_of(self._data).abs(_compute(self._data, dt))
    axes = _dims(dim, a.ndim)
    ord = float(ord)
    if math.isinf(ord):
        if a.size == 0 and ord < 0:
            raise RuntimeError("linalg.vector_norm cannot compute the -inf norm on an empty tensor because the "
                               "operation does not have an identity")
        if a.size == 0:
            r = a.sum(axis=axes, keepdims=keepdim)
        else:
            r = (a.max if ord > 0 else a.min)(axis=axes, keepdims=keepdim)
    elif ord == 0:
        r = (a != 0).sum(axis=axes, keepdims=keepdim).astype(a.dtype)
    elif ord == 1:
        r = a.sum(axis=axes, keepdims=keepdim)
    elif ord == 2:
        r = xp_of(a).sqrt((a * a).sum(axis=axes, keepdims=keepdim))
    else:
        with np.errstate(all="ignore"):
            r = (a ** ord).sum(axis=axes, keepdims=keepdim) ** (1.0 / ord)
    return wrap(r, a, dt)


def cumsum(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    dt = acc_dtype(self, dtype)
    a = _compute(self._data, dt)
    if a.ndim == 0:
        S.wrap_dim(dim, 0)
        return wrap(a.copy(), a, dt)
    out = a.cumsum(axis=S.wrap_dim(dim, a.ndim))  # row-major, as PyTorch's (NumPy keeps a's order)
    return wrap(out if out.flags.c_contiguous else out.copy(), a, dt)


def as_array(result: Any, like: Any) -> Any:
    """NumPy reductions may return a scalar: make it a 0-d array of the input's array type."""
    return result if result.__class__ is like.__class__ else np.asarray(result)

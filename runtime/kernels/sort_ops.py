"""sort and topk (CompositeExplicitAutograd, NumPy or CuPy). Sorting is stable; NaN sorts as the largest
value (last ascending, first descending), as in PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes, opcall
from runtime import strides as S
from runtime.kernels._xp import wrap, xp_of
from runtime.tensor import Tensor


def _keys(a: Any) -> Any:
    """Sort keys: bools as uint8, half precision in float32."""
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    if a.dtype == np.float16:
        return a.astype(np.float32)
    return a


def _argsort(xp: Any, a: Any, axis: int, descending: bool) -> Any:
    a = _keys(a)
    if not descending:
        return xp.argsort(a, axis=axis, kind="stable")
    # stable descending: sort the reversed array ascending, reverse the order back, map positions back
    n = a.shape[axis]
    rev = xp.flip(a, axis=axis)
    order = xp.flip(xp.argsort(rev, axis=axis, kind="stable"), axis=axis)
    return (n - 1) - order


def sort(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    return sort_stable(self, None, dim, descending)


def sort_stable(self: Tensor, stable: bool | None = None, dim: int = -1,
                descending: bool = False) -> tuple[Tensor, Tensor]:
    a = self._data
    xp = xp_of(a)
    if a.ndim == 0:
        S.wrap_dim(dim, 0)
        return wrap(a.copy(), a, self._dtype), wrap(xp.zeros((), np.int64), a, dtypes.int64)
    d = S.wrap_dim(dim, a.ndim)
    idx = _argsort(xp, a, d, descending)
    return wrap(xp.take_along_axis(a, idx, axis=d), a, self._dtype), wrap(idx, a, dtypes.int64)


def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple[Tensor, Tensor]:
    a = self._data
    xp = xp_of(a)
    d = S.wrap_dim(dim, a.ndim)
    size = a.shape[d] if a.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if a.ndim == 0:
        return wrap(a.copy(), a, self._dtype), wrap(xp.zeros((), np.int64), a, dtypes.int64)
    idx = _argsort(xp, a, d, largest)
    idx = xp.take(idx, xp.arange(k), axis=d)
    return wrap(xp.take_along_axis(a, idx, axis=d), a, self._dtype), wrap(idx, a, dtypes.int64)


def argsort(self: Any, dim: int = -1, descending: bool = False) -> Any:
    """CompositeImplicitAutograd: the indices of `sort`."""
    G = opcall.api
    return G.sort(self, dim, descending)[1]


def argsort_stable(self: Any, stable: bool, dim: int = -1, descending: bool = False) -> Any:
    G = opcall.api
    return G.sort(self, stable=stable, dim=dim, descending=descending)[1]

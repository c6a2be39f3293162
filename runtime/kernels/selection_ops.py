"""Ops that pick or count elements (CompositeExplicitAutograd, NumPy or CuPy through `xp`): nonzero,
count_nonzero, median/kthvalue/mode, cummax/cummin, bucketize, unique. Results with a data-dependent size
(nonzero, unique) are int64 index tensors, as PyTorch's.

Order statistics reuse sort_ops' stable argsort, so ties and NaN order as in `sort`: median and kthvalue
pick from the stable ascending order (NaN sorts last, so a NaN in a row is its median's only when it falls at
the picked rank; PyTorch's median returns NaN for a row holding one, which `_nan_first` below enforces).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime import strides as S
from runtime.kernels._xp import dims as _dims
from runtime.kernels._xp import wrap, xp_of
from runtime.kernels.sort_ops import _argsort
from runtime.tensor import Tensor


def nonzero(self: Tensor) -> Tensor:
    a = self._data
    xp = xp_of(a)
    if a.ndim == 0:
        return wrap(xp.zeros((1 if a.item() else 0, 0), np.int64), a, dtypes.int64)
    return wrap(xp.stack(xp.nonzero(a), axis=1).astype(np.int64), a, dtypes.int64)


def count_nonzero(self: Tensor, dim: Sequence[int] | int | None = None) -> Tensor:
    a = self._data
    axes = _dims(dim, a.ndim)
    return wrap(xp_of(a).count_nonzero(a, axis=axes), a, dtypes.int64)


def _rank_pick(self: Tensor, dim: int, keepdim: bool, rank: Any, op: str) -> tuple[Tensor, Tensor]:
    """The values and indices at position `rank(n)` of the stable ascending sort along `dim`."""
    a = self._data
    xp = xp_of(a)
    if a.ndim == 0:
        S.wrap_dim(dim, 0)
        r = rank(1)
        if r != 0:
            raise IndexError(f"{op}(): selected number k out of range for dimension 0")
        return wrap(a.copy(), a, self._dtype), wrap(xp.zeros((), np.int64), a, dtypes.int64)
    d = S.wrap_dim(dim, a.ndim)
    n = a.shape[d]
    r = rank(n)
    if n == 0 or not 0 <= r < n:
        if n == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
        raise RuntimeError(f"{op}(): selected number k out of range for dimension {d}")
    order = _argsort(xp, a, d, False)
    idx = xp.take(order, xp.asarray([r]), axis=d)
    if op == "median" and a.dtype.kind == "f":
        nan = xp.isnan(a)
        idx = xp.where(nan.any(axis=d, keepdims=True), xp.argmax(nan, axis=d, keepdims=True), idx)
    values = xp.take_along_axis(a, idx, axis=d)
    if not keepdim:
        idx, values = xp.squeeze(idx, d), xp.squeeze(values, d)
    return wrap(values, a, self._dtype), wrap(idx.astype(np.int64), a, dtypes.int64)


def median(self: Tensor) -> Tensor:
    a = self._data
    if a.size == 0:
        return wrap(xp_of(a).full((), np.nan), a, self._dtype)
    flat = Tensor._wrap(a.reshape(-1), self._dtype)
    return _rank_pick(flat, 0, False, lambda n: (n - 1) // 2, "median")[0]


def median_dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _rank_pick(self, dim, keepdim, lambda n: (n - 1) // 2, "median")


def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _rank_pick(self, dim, keepdim, lambda n: k - 1, "kthvalue")


def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The most frequent value along `dim` (the smallest on ties) and the last index holding it."""
    a = self._data
    xp = xp_of(a)
    d = S.wrap_dim(dim, max(a.ndim, 1))
    if a.ndim == 0:
        return wrap(a.copy(), a, self._dtype), wrap(xp.zeros((), np.int64), a, dtypes.int64)
    n = a.shape[d]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    moved = xp.moveaxis(a, d, -1)
    rows = moved.reshape(-1, n)
    order = _argsort(xp, rows, 1, False)
    s = xp.take_along_axis(rows, order, axis=1)
    # run lengths of equal sorted values: for each position, how many equal values end there
    new_run = xp.concatenate([xp.ones((s.shape[0], 1), bool), s[:, 1:] != s[:, :-1]], axis=1)
    run_id = xp.cumsum(new_run, axis=1) - 1
    counts = xp.zeros_like(run_id)
    for i in range(rows.shape[0]):  # one bincount per row; rows are few in practice
        counts[i] = xp.bincount(run_id[i], minlength=n)[run_id[i]]
    best = xp.argmax(counts, axis=1)  # the first (smallest) value of the largest run
    best_run = run_id[xp.arange(rows.shape[0]), best]
    last = n - 1 - xp.argmax((run_id == best_run[:, None])[:, ::-1], axis=1)  # end of that run in `s`
    values = s[xp.arange(rows.shape[0]), last]
    same = rows == values[:, None]
    index = n - 1 - xp.argmax(same[:, ::-1], axis=1)  # the last index holding the value
    shape = moved.shape[:-1]
    values, index = values.reshape(shape), index.reshape(shape).astype(np.int64)
    if keepdim:
        values, index = xp.expand_dims(values, d), xp.expand_dims(index, d)
    return wrap(values, a, self._dtype), wrap(index, a, dtypes.int64)


def _cumulative(self: Tensor, dim: int, largest: bool) -> tuple[Tensor, Tensor]:
    a = self._data
    xp = xp_of(a)
    if a.ndim == 0:
        S.wrap_dim(dim, 0)
        return wrap(a.copy(), a, self._dtype), wrap(xp.zeros((), np.int64), a, dtypes.int64)
    d = S.wrap_dim(dim, a.ndim)
    moved = xp.moveaxis(a, d, 0)
    values = moved.copy()
    index = xp.zeros(moved.shape, np.int64)
    keys = moved.astype(np.float64) if moved.dtype.kind in "bf" else moved
    best = keys[:1].copy() if moved.shape[0] else keys[:0]
    for i in range(1, moved.shape[0]):  # a running comparison; a NaN, once met, stays (as PyTorch's)
        k = keys[i]
        take = (k >= best[0]) if largest else (k <= best[0])
        if keys.dtype.kind == "f":
            take = take | xp.isnan(k)
            take = take & ~(xp.isnan(best[0]) & ~xp.isnan(k))
        best = xp.where(take, k, best[0])[None]
        values[i] = xp.where(take, moved[i], values[i - 1])
        index[i] = xp.where(take, i, index[i - 1])
    return (wrap(xp.ascontiguousarray(xp.moveaxis(values, 0, d)), a, self._dtype),
            wrap(xp.ascontiguousarray(xp.moveaxis(index, 0, d)), a, dtypes.int64))


def cummax(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    return _cumulative(self, dim, True)


def cummin(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    return _cumulative(self, dim, False)


def bucketize(self: Tensor, boundaries: Tensor, out_int32: bool = False, right: bool = False) -> Tensor:
    b = boundaries._data
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    if self._device != boundaries._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{self._device} and {boundaries._device}!")
    a = self._data
    xp = xp_of(a)
    out = xp.searchsorted(b, a, side="right" if right else "left")
    dt = dtypes.int32 if out_int32 else dtypes.int64
    return wrap(xp.asarray(out), a, dt)


def unique(self: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """The distinct values (sorted), the index of each input element among them, and their counts."""
    a = self._data
    xp = xp_of(a)
    if dim is None:
        values, inverse, counts = xp.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(a.shape)
    else:
        d = S.wrap_dim(dim, a.ndim)
        if a.shape[d] == 0 and a.size == 0:
            values, inverse, counts = a, xp.zeros(0, np.int64), xp.zeros(0, np.int64)
        else:
            values, inverse, counts = xp.unique(a, axis=d, return_inverse=True, return_counts=True)
            inverse = inverse.reshape(-1)
    return (wrap(values, a, self._dtype), wrap(inverse.astype(np.int64), a, dtypes.int64),
            wrap(counts.astype(np.int64), a, dtypes.int64))

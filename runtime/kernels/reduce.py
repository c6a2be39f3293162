"""Reductions (CompositeExplicitAutograd; NumPy on CPU, CuPy on CUDA until a CUDA kernel overrides them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import dtypes
from runtime import strides as S
from runtime.tensor import Tensor


def _sum_dtype(self: Tensor, dtype: Any) -> dtypes.DType:
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    # integers and bools sum in int64, as PyTorch
    return self._dtype if self._dtype.is_floating_point else dtypes.int64


def _dims(dim: int | Sequence[int] | None, ndim: int) -> tuple[int, ...] | None:
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return None
    wrapped = tuple(S.wrap_dim(d, ndim) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped} appears multiple times in the list of dims")
    return wrapped


def sum(self: Tensor, dtype: Any = None) -> Tensor:  # noqa: A001
    dt = _sum_dtype(self, dtype)
    return Tensor._wrap(as_array(self._data.sum(dtype=dt.np), self._data), dt)


def sum_dim(self: Tensor, dim: Sequence[int] | None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    dt = _sum_dtype(self, dtype)
    axes = _dims(dim, self._data.ndim)
    r = self._data.sum(axis=axes, dtype=dt.np, keepdims=keepdim)
    return Tensor._wrap(as_array(r, self._data), dt)


def as_array(result: Any, like: Any) -> Any:
    """NumPy reductions may return a scalar: make it a 0-d array of the input's array type."""
    return result if result.__class__ is like.__class__ else np.asarray(result)

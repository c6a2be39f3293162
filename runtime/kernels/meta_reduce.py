"""Meta kernels of the reductions, scans, sorts and selections (Note [Meta tensors] in
runtime/meta_array.py): the reduced shape (`dim`, `keepdim`), the dtype the CPU kernels of
runtime/kernels/reduce.py give (their `acc_dtype` and `_float_dtype`), and the same argument checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import dtypes
from runtime import strides as S
from runtime.kernels._xp import dims as _dims
from runtime.kernels.meta_pointwise import empty
from runtime.kernels.reduce import _float_dtype, _nonempty, acc_dtype
from runtime.tensor import Tensor

_int64 = dtypes.int64


def _ndim1(self: Tensor) -> int:
    """The dims a dim argument is wrapped against: a 0-d tensor takes dim 0 and -1, as PyTorch."""
    return self._data.ndim or 1


def reduced_shape(self: Tensor, dim: Any, keepdim: bool) -> tuple[int, ...]:
    """The shape of `self` reduced over `dim` (None or [] means every dim), PyTorch's dim rules."""
    shape = tuple(self._data.shape)
    axes = _dims(dim, len(shape))
    if axes is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _reduce(self: Tensor, dim: Any, keepdim: bool, dt: dtypes.DType) -> Tensor:
    return empty(reduced_shape(self, dim, keepdim), dt)


# -- sums and means ---------------------------------------------------------------------------------
def sum(self: Tensor, dtype: Any = None) -> Tensor:
    return _reduce(self, None, False, acc_dtype(self, dtype))


def sum_dim(self: Tensor, dim: Sequence[int] | None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    return _reduce(self, dim, keepdim, acc_dtype(self, dtype))


def mean(self: Tensor, dtype: Any = None) -> Tensor:
    return _reduce(self, None, False, _float_dtype(self, dtype, "mean"))


def mean_dim(self: Tensor, dim: Sequence[int] | None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    return _reduce(self, dim, keepdim, _float_dtype(self, dtype, "mean"))


def prod(self: Tensor, dtype: Any = None) -> Tensor:
    return _reduce(self, None, False, acc_dtype(self, dtype))


def prod_dim(self: Tensor, dim: int, keepdim: bool = False, dtype: Any = None) -> Tensor:
    return _reduce(self, dim, keepdim, acc_dtype(self, dtype))


def var(self: Tensor, dim: Sequence[int] | None = None, correction: Any = None, keepdim: bool = False) -> Tensor:
    return _reduce(self, dim, keepdim, _float_dtype(self, None, "var"))


def std(self: Tensor, dim: Sequence[int] | None = None, correction: Any = None, keepdim: bool = False) -> Tensor:
    return _reduce(self, dim, keepdim, _float_dtype(self, None, "std"))


def logsumexp(self: Tensor, dim: Sequence[int], keepdim: bool = False) -> Tensor:
    dt = self._dtype if self._dtype.is_floating_point else dtypes.get_default_dtype()
    return _reduce(self, dim, keepdim, dt)


def linalg_vector_norm(self: Tensor, ord: float = 2, dim: Sequence[int] | None = None, keepdim: bool = False,
                       dtype: Any = None) -> Tensor:
    dt = _float_dtype(self, dtype, "linalg.vector_norm")
    if float(ord) < 0 and self._data.size == 0:
        raise RuntimeError("linalg.vector_norm cannot compute the -inf norm on an empty tensor because the "
                           "operation does not have an identity")
    return _reduce(self, dim, keepdim, dt)


def count_nonzero(self: Tensor, dim: Sequence[int] | None = None) -> Tensor:
    return _reduce(self, dim, False, _int64)


# -- extremes ---------------------------------------------------------------------------------------
def amax(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    _nonempty(self, _dims(dim, self._data.ndim) if self._data.ndim else None, "amax")
    return _reduce(self, dim, keepdim, self._dtype)


def amin(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
    _nonempty(self, _dims(dim, self._data.ndim) if self._data.ndim else None, "amin")
    return _reduce(self, dim, keepdim, self._dtype)


def max(self: Tensor) -> Tensor:
    _nonempty(self, None, "max")
    return _reduce(self, None, False, self._dtype)


def min(self: Tensor) -> Tensor:
    _nonempty(self, None, "min")
    return _reduce(self, None, False, self._dtype)


def _values_indices(self: Tensor, dim: int, keepdim: bool, op: str, check: bool = True) -> tuple[Tensor, Tensor]:
    if check and self._data.ndim:
        _nonempty(self, (S.wrap_dim(dim, self._data.ndim),), op)
    else:
        S.wrap_dim(dim, _ndim1(self))
    shape = reduced_shape(self, dim, keepdim)
    return empty(shape, self._dtype), empty(shape, _int64)


def max_dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _values_indices(self, dim, keepdim, "max")


def min_dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _values_indices(self, dim, keepdim, "min")


def _arg(self: Tensor, dim: int | None, keepdim: bool, op: str) -> Tensor:
    if dim is None:
        _nonempty(self, None, op)
        return empty((1,) * self._data.ndim if keepdim else (), _int64)
    if self._data.ndim:
        _nonempty(self, (S.wrap_dim(dim, self._data.ndim),), op)
    return _reduce(self, dim, keepdim, _int64)


def argmax(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg(self, dim, keepdim, "argmax")


def argmin(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg(self, dim, keepdim, "argmin")


# -- any and all ------------------------------------------------------------------------------------
def _logical(self: Tensor, dim: Any, keepdim: bool) -> Tensor:
    dt = dtypes.uint8 if self._dtype is dtypes.uint8 else dtypes.bool_
    if dim is not None and not isinstance(dim, int) and not len(dim):
        return empty(tuple(self._data.shape), dt)  # an empty list of dims reduces none
    return _reduce(self, dim, keepdim, dt)


def any(self: Tensor) -> Tensor:
    return _logical(self, None, False)


def any_dim(self: Tensor, dim: int, keepdim: bool = False) -> Tensor:
    return _logical(self, dim, keepdim)


def any_dims(self: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    return _logical(self, None if dim is None else tuple(dim), keepdim)


def all(self: Tensor) -> Tensor:
    return _logical(self, None, False)


def all_dim(self: Tensor, dim: int, keepdim: bool = False) -> Tensor:
    return _logical(self, dim, keepdim)


def all_dims(self: Tensor, dim: Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    return _logical(self, None if dim is None else tuple(dim), keepdim)


# -- scans, sorts and order statistics --------------------------------------------------------------
def cumsum(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    S.wrap_dim(dim, _ndim1(self))
    return empty(tuple(self._data.shape), acc_dtype(self, dtype))


def _same_with_indices(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    S.wrap_dim(dim, _ndim1(self))
    shape = tuple(self._data.shape)
    return empty(shape, self._dtype), empty(shape, _int64)


def cummax(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    return _same_with_indices(self, dim)


def cummin(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    return _same_with_indices(self, dim)


def sort(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    return _same_with_indices(self, dim)


def sort_stable(self: Tensor, stable: bool | None = None, dim: int = -1,
                descending: bool = False) -> tuple[Tensor, Tensor]:
    return _same_with_indices(self, dim)


def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple[Tensor, Tensor]:
    shape = list(self._data.shape)
    d = S.wrap_dim(dim, (len(shape) or 1))
    size = shape[d] if shape else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"selected index k out of range: k={k} for a dimension of size {size}")
    if shape:
        shape[d] = k
    return empty(tuple(shape), self._dtype), empty(tuple(shape), _int64)


def median(self: Tensor) -> Tensor:  # of no elements: NaN, as the CPU kernel's (and PyTorch's)
    return _reduce(self, None, False, self._dtype)


def nanmedian(self: Tensor) -> Tensor:
    return _reduce(self, None, False, self._dtype)


def median_dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _values_indices(self, dim, keepdim, "median")


def nanmedian_dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _values_indices(self, dim, keepdim, "nanmedian")


def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    return _values_indices(self, dim, keepdim, "mode")


def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    n = self._data.shape[S.wrap_dim(dim, self._data.ndim)] if self._data.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    return _values_indices(self, dim, keepdim, "kthvalue", check=False)

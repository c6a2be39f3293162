"""CUDA kernels of reductions and softmax for the dispatcher (`CUDA:` entries in native_functions.yaml).

Each function takes its schema's arguments positionally in schema order (keyword-only ones too) and
returns Tensors, as every backend kernel (DESIGN.md, "Conventions"). They are thin: runtime/cuda/reduce.py and
runtime/cuda/softmax.py do the work. Names follow the overload: `sum_dim_IntList` serves
`sum.dim_IntList`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime.cuda import reduce as R
from runtime.cuda import softmax as SM

Dims = Sequence[int] | int | None


def sum(self: Any, dtype: Any = None) -> Any:
    return R.reduce("sum", self, None, False, dtype)


def sum_dim_IntList(self: Any, dim: Dims, keepdim: bool = False, dtype: Any = None) -> Any:
    return R.reduce("sum", self, dim, keepdim, dtype)


def mean(self: Any, dtype: Any = None) -> Any:
    return R.reduce("mean", self, None, False, dtype)


def mean_dim(self: Any, dim: Dims, keepdim: bool = False, dtype: Any = None) -> Any:
    return R.reduce("mean", self, dim, keepdim, dtype)


def prod(self: Any, dtype: Any = None) -> Any:
    return R.reduce("prod", self, None, False, dtype)


def prod_dim_int(self: Any, dim: int, keepdim: bool = False, dtype: Any = None) -> Any:
    return R.reduce("prod", self, [dim], keepdim, dtype)


def amax(self: Any, dim: Dims = (), keepdim: bool = False) -> Any:
    return R.reduce("amax", self, dim, keepdim)


def amin(self: Any, dim: Dims = (), keepdim: bool = False) -> Any:
    return R.reduce("amin", self, dim, keepdim)


def max(self: Any) -> Any:
    return R.reduce("max", self)


def min(self: Any) -> Any:
    return R.reduce("min", self)


def max_dim(self: Any, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    return R.reduce_with_indices("max", self, dim, keepdim)


def min_dim(self: Any, dim: int, keepdim: bool = False) -> tuple[Any, Any]:
    return R.reduce_with_indices("min", self, dim, keepdim)


def argmax(self: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    return R.reduce_with_indices("max", self, dim, keepdim)[1]


def argmin(self: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    return R.reduce_with_indices("min", self, dim, keepdim)[1]


def _logical(op: str, self: Any, dims: list[int] | None, keepdim: bool) -> Any:
    """any/all: bool, except uint8 for a uint8 input (as PyTorch and the CPU kernels: the reduction runs to
    bool and is cast)."""
    from runtime import dtypes
    from runtime.cuda import copy as C

    out = R.reduce(op, self, dims, keepdim)
    return C.to_dtype(out, dtypes.uint8) if self.dtype is dtypes.uint8 else out


def any(self: Any) -> Any:
    return _logical("any", self, None, False)


def any_dim(self: Any, dim: int, keepdim: bool = False) -> Any:
    return _logical("any", self, [dim] if dim.__class__ is int else list(dim), keepdim)


def any_dims(self: Any, dim: Dims = None, keepdim: bool = False) -> Any:
    return _logical("any", self, None if not dim else list(dim), keepdim)


def all(self: Any) -> Any:
    return _logical("all", self, None, False)


def all_dim(self: Any, dim: int, keepdim: bool = False) -> Any:
    return _logical("all", self, [dim] if dim.__class__ is int else list(dim), keepdim)


def all_dims(self: Any, dim: Dims = None, keepdim: bool = False) -> Any:
    return _logical("all", self, None if not dim else list(dim), keepdim)


def _correction(correction: Any) -> float:
    return 1.0 if correction is None else float(correction)


def var_correction(self: Any, dim: Dims = None, correction: Any = None, keepdim: bool = False) -> Any:
    return R.reduce("var", self, dim, keepdim, None, _correction(correction))


def std_correction(self: Any, dim: Dims = None, correction: Any = None, keepdim: bool = False) -> Any:
    return R.reduce("std", self, dim, keepdim, None, _correction(correction))


def softmax_int(self: Any, dim: int, dtype: Any = None) -> Any:
    return SM.softmax(self, dim, dtype)


def log_softmax_int(self: Any, dim: int, dtype: Any = None) -> Any:
    return SM.softmax(self, dim, dtype, log=True)


def _softmax(self: Any, dim: int, half_to_float: bool) -> Any:
    return SM.softmax(self, dim, None, half_to_float)


def _log_softmax(self: Any, dim: int, half_to_float: bool) -> Any:
    return SM.softmax(self, dim, None, half_to_float, log=True)

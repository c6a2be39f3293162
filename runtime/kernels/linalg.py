"""Matrix products (CompositeExplicitAutograd): NumPy's matmul on CPU, cuBLAS through CuPy on CUDA."""

from __future__ import annotations

from typing import Any

from runtime import strides as S
from runtime.kernels._xp import wrap
from runtime.tensor import Tensor


def _check(name: str, a: Tensor, b: Tensor, ndim: int) -> None:
    x, y = a._data, b._data
    if x.ndim == ndim and y.ndim == ndim and a._dtype is b._dtype and x.shape[-1] == y.shape[-2]:
        return
    if a.dim() != ndim or b.dim() != ndim:
        raise RuntimeError(f"{name}: expected {ndim}D tensors, but got {a.dim()}D and {b.dim()}D")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{name}: expected m1 and m2 to have the same dtype, but got: {a.dtype.name} != "
                           f"{b.dtype.name}")
    if a.shape[-1] != b.shape[-2]:
        sa = "x".join(map(str, a.shape))
        sb = "x".join(map(str, b.shape))
        raise RuntimeError(f"{name}: mat1 and mat2 shapes cannot be multiplied ({sa} and {sb})")


def mm(self: Tensor, mat2: Tensor) -> Tensor:
    _check("mm", self, mat2, 2)
    return wrap(self._data @ mat2._data, self._data, self._dtype)


def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    _check("bmm", self, mat2, 3)
    if self.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {self.shape[0]} and {mat2.shape[0]}")
    return wrap(self._data @ mat2._data, self._data, self._dtype)


def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * self + alpha * (mat1 @ mat2); with beta == 0, `self` is ignored (NaN in it does not leak)."""
    _check("addmm", mat1, mat2, 2)
    prod = mat1._data @ mat2._data
    if alpha != 1:
        prod = prod * alpha
    out_shape = prod.shape
    if beta != 0:
        base = self._data if beta == 1 else self._data * beta
        if base.shape != out_shape:
            S.expand(tuple(base.shape), tuple(S.contiguous_strides(tuple(base.shape))), tuple(out_shape))  # raises
        prod = prod + base
    if prod.shape != out_shape:
        raise RuntimeError(f"The expanded size of the tensor ({list(prod.shape)}) must match the existing size "
                           f"({list(out_shape)})")
    return wrap(prod, mat1._data, mat1._dtype)


def dot(self: Tensor, tensor: Tensor) -> Tensor:
    if self.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {tensor.dim()}D tensors")
    if self._dtype is not tensor._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {self._dtype.name} and "
                           f"{tensor._dtype.name}")
    if self.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src [{tensor.shape[0]}] "
                           f"to have the same number of elements, but got {self.shape[0]} and {tensor.shape[0]} "
                           f"elements respectively")
    return wrap((self._data * tensor._data).sum(), self._data, self._dtype)

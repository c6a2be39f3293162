"""Matrix products (CompositeExplicitAutograd): NumPy's matmul on CPU, cuBLAS through CuPy on CUDA; and
`linear`, one op and one backward node (Note [Linear as one node])."""

from __future__ import annotations

import math
from typing import Any

from runtime import strides as S
from runtime.kernels._xp import wrap
from runtime.kernels.checks import check_bias_dtype, check_product_dtype
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


def _terms(a: Tensor, b: Tensor) -> int:
    """How many products a (batched) matrix product adds up: its result's elements times the inner length."""
    return math.prod(a._data.shape[:-1]) * b._data.shape[-1] * a._data.shape[-1]


def mm(self: Tensor, mat2: Tensor) -> Tensor:
    _check("mm", self, mat2, 2)  # shared with the Meta kernel, which takes bool (it computes nothing)
    check_product_dtype("mm", self, _terms(self, mat2))
    return wrap(self._data @ mat2._data, self._data, self._dtype)


def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    _check("bmm", self, mat2, 3)
    if self.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {self.shape[0]} and {mat2.shape[0]}")
    check_product_dtype("bmm", self, _terms(self, mat2))
    return wrap(self._data @ mat2._data, self._data, self._dtype)


def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * self + alpha * (mat1 @ mat2); with beta == 0, `self` is ignored (NaN in it does not leak)."""
    _check("addmm", mat1, mat2, 2)
    check_product_dtype("addmm", mat1, _terms(mat1, mat2))
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


# Note [Linear as one node]
# PyTorch writes linear as addmm(bias, input, weight.t()): two backward nodes per layer (AddmmBackward,
# TBackward), a bias gradient summed by the engine from the (N, out) gradient, and a weight gradient that
# reaches the leaf as a transposed view of input.t() @ grad, which AccumulateGrad must then copy. Here
# linear has its own derivative (derivatives.yaml, helpers in runtime/autograd/formulas.py): one node, the
# weight gradient made as grad.t() @ input (contiguous, so stored without a copy: Note [Stealing the first
# gradient] in engine.py) and the bias gradient summed over the leading dims by one reduction.
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, with PyTorch's errors (input of any rank >= 1, weight 1-D or 2-D)."""
    x, w = input._data, weight._data
    if x.ndim == 0 or w.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {x.ndim}D and "
                           f"{w.ndim}D")
    if w.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {w.ndim}D")
    if input._dtype is not weight._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {input.dtype.name} != "
                           f"{weight.dtype.name}")
    check_bias_dtype(input, bias)
    check_product_dtype("linear", input, math.prod(x.shape) * (w.shape[0] if w.ndim == 2 else 1))
    if x.shape[-1] != w.shape[-1]:
        if w.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({math.prod(x.shape[:-1])}), mat "
                               f"({'x'.join(map(str, x.shape))}), vec ({w.shape[0]})")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({math.prod(x.shape[:-1])}x{x.shape[-1]} "
                           f"and {w.shape[1]}x{w.shape[0]})")
    out = x @ w.T
    if bias is not None:
        b = bias._data
        if x.ndim == 2 and b.shape != out.shape and b.shape != out.shape[1:]:  # addmm's rule: the bias
            S.expand(tuple(b.shape), tuple(S.contiguous_strides(tuple(b.shape))), tuple(out.shape))  # expands
        try:
            out += b  # `out` is new: add in place, unless the bias broadcasts it larger or promotes it
        except (ValueError, TypeError):
            try:
                out = out + b
            except ValueError:
                raise RuntimeError(f"linear: the bias of shape {list(b.shape)} does not broadcast to the output "
                                   f"shape {list(out.shape)}") from None
    return wrap(out, x, input._dtype)


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
    check_product_dtype("dot", self, 1)
    return wrap((self._data * tensor._data).sum(), self._data, self._dtype)

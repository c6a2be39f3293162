"""Meta kernels of matrix products and the linear-algebra decompositions (Note [Meta tensors] in
runtime/meta_array.py): the CPU kernels' checks (runtime/kernels/linalg.py, linalg_lapack.py) and the
shapes and dtypes of their results, batch dimensions broadcast as theirs are.
"""

from __future__ import annotations

import math
from typing import Any

from runtime import dtypes
from runtime import strides as S
from runtime.kernels.checks import check_bias_dtype
from runtime.kernels.linalg import _check
from runtime.kernels.linalg_lapack import _matrices
from runtime.kernels.meta_pointwise import empty
from runtime.meta_array import MetaDataError
from runtime.tensor import Tensor


def _shape(t: Tensor) -> tuple[int, ...]:
    return tuple(t._data.shape)


def mm(self: Tensor, mat2: Tensor) -> Tensor:
    _check("mm", self, mat2, 2)
    return empty((_shape(self)[0], _shape(mat2)[1]), self._dtype)


def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    _check("bmm", self, mat2, 3)
    if self.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {self.shape[0]} and {mat2.shape[0]}")
    return empty((_shape(self)[0], _shape(self)[1], _shape(mat2)[2]), self._dtype)


def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, beta: Any = 1, alpha: Any = 1) -> Tensor:
    _check("addmm", mat1, mat2, 2)
    out = (_shape(mat1)[0], _shape(mat2)[1])
    if beta != 0 and _shape(self) != out:
        S.expand(_shape(self), S.contiguous_strides(_shape(self)), out)  # raises when self does not expand
    return empty(out, mat1._dtype)


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
    return empty((), self._dtype)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    x, w = _shape(input), _shape(weight)
    if not x or not w:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {len(x)}D and {len(w)}D")
    if len(w) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {len(w)}D")
    if input._dtype is not weight._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {input.dtype.name} != "
                           f"{weight.dtype.name}")
    check_bias_dtype(input, bias)
    if x[-1] != w[-1]:
        if len(w) == 1:
            raise RuntimeError(f"size mismatch, got input ({math.prod(x[:-1])}), mat ({'x'.join(map(str, x))}), "
                               f"vec ({w[0]})")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({math.prod(x[:-1])}x{x[-1]} and "
                           f"{w[1]}x{w[0]})")
    out = x[:-1] + w[:-1]
    if bias is not None:
        try:
            out = tuple(S.broadcast_shapes(out, _shape(bias)))
        except RuntimeError:
            raise RuntimeError(f"linear: the bias of shape {list(_shape(bias))} does not broadcast to the output "
                               f"shape {list(out)}") from None
    return empty(out, input._dtype)


# -- decompositions ---------------------------------------------------------------------------------
def _matrix_shape(op: str, A: Tensor, square: bool = True) -> tuple[int, ...]:
    """A's shape, after the CPU kernels' checks (a batch of (square) floating matrices)."""
    try:
        _matrices(op, A, square)
    except MetaDataError:  # float16's cast to float32, after every check
        pass
    return _shape(A)


def linalg_inv(A: Tensor) -> Tensor:
    return empty(_matrix_shape("linalg.inv", A), A._dtype)


def linalg_det(A: Tensor) -> Tensor:
    return empty(_matrix_shape("linalg.det", A)[:-2], A._dtype)


def linalg_slogdet(A: Tensor) -> tuple[Tensor, Tensor]:
    batch = _matrix_shape("linalg.slogdet", A)[:-2]
    return empty(batch, A._dtype), empty(batch, A._dtype)


def linalg_cholesky(A: Tensor, upper: bool = False) -> Tensor:
    return empty(_matrix_shape("linalg.cholesky", A), A._dtype)


def linalg_eigh(A: Tensor, UPLO: str = "L") -> tuple[Tensor, Tensor]:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    shape = _matrix_shape("linalg.eigh", A)
    return empty(shape[:-1], A._dtype), empty(shape, A._dtype)


def linalg_solve(A: Tensor, B: Tensor, left: bool = True) -> Tensor:
    a = _matrix_shape("linalg.solve", A)
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{A._dtype.name} and B of type {B._dtype.name} instead")
    b = _shape(B)
    vector = len(b) == 1 or (len(b) == len(a) - 1 and b == a[:-1])  # the CPU kernel's _is_vector_rhs
    rhs = b + (1,) if vector else b
    if not left:
        rhs = rhs if vector else rhs[:-2] + (rhs[-1], rhs[-2])
    if rhs[-2] != a[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({a[-2]}x{a[-1]} and {rhs[-2]}x{rhs[-1]})")
    batch = tuple(S.broadcast_shapes(a[:-2], rhs[:-2]))
    x = batch + rhs[-2:]
    if vector:
        x = x[:-1]
    elif not left:
        x = x[:-2] + (x[-1], x[-2])
    return empty(x, A._dtype)


def linalg_qr(A: Tensor, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    shape = _matrix_shape("linalg.qr", A, square=False)
    *batch, m, n = shape
    k = m if mode == "complete" else min(m, n)
    q = tuple(batch) + ((m, k) if mode != "r" else (0,))
    return empty(q, A._dtype), empty(tuple(batch) + (k, n), A._dtype)


def linalg_svd(A: Tensor, full_matrices: bool = True, driver: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    *batch, m, n = _matrix_shape("linalg.svd", A, square=False)
    k = min(m, n)
    b = tuple(batch)
    u, vh = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    return empty(b + u, A._dtype), empty(b + (k,), A._dtype), empty(b + vh, A._dtype)


def linalg_svdvals(A: Tensor, driver: str | None = None) -> Tensor:
    *batch, m, n = _matrix_shape("linalg.svdvals", A, square=False)
    return empty(tuple(batch) + (min(m, n),), A._dtype)


def _linalg_lu(A: Tensor, pivot: bool = True) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    *batch, m, n = _matrix_shape("linalg.lu", A, square=False)
    k, b = min(m, n), tuple(batch)
    return (empty(b + (m, m), A._dtype), empty(b + (m, k), A._dtype), empty(b + (k, n), A._dtype),
            empty(b + (k,), dtypes.int32))


def _linalg_pinv(A: Tensor, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    *batch, m, n = _matrix_shape("linalg.pinv", A, square=False)
    return empty(tuple(batch) + (n, m), A._dtype)


def geqrf(self: Tensor) -> tuple[Tensor, Tensor]:
    shape = _shape(self)
    if len(shape) < 2:
        raise RuntimeError("geqrf: The input tensor A must have at least 2 dimensions.")
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"geqrf: Expected a floating point tensor as input. Got {self.dtype}")
    return empty(shape, self._dtype), empty(shape[:-2] + (min(shape[-2:]),), self._dtype)

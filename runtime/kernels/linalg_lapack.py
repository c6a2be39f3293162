"""torch.linalg's decompositions and solvers (CompositeExplicitAutograd): NumPy's LAPACK on CPU, CuPy's
(cuSOLVER) on CUDA, through the array module `xp` of the input. Inputs are batches of matrices `(*, m, n)`
of a floating dtype; float16 computes in float32. Their gradients are in derivatives.yaml, with the
helpers of runtime/autograd/formulas.py (Note [Linear algebra gradients])."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime.kernels._xp import wrap, xp_of
from runtime.tensor import Tensor


class LinAlgError(RuntimeError):
    """A matrix that the decomposition can't handle (singular, not positive-definite): `torch.linalg.LinAlgError`."""


_TYPE_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _matrices(op: str, A: Tensor, square: bool = True) -> Any:
    """A's data, checked to be a batch of (square) floating matrices, in a dtype LAPACK takes."""
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    if not A._dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_TYPE_NAMES[A._dtype.name]}")
    return a.astype(np.float32) if a.dtype == np.float16 else a


def _out(result: Any, like: Any, A: Tensor) -> Tensor:
    # asarray: the emulated CUDA device's linalg hands some results back as host arrays
    return wrap(xp_of(like).asarray(result), like, A._dtype)


def linalg_inv(A: Tensor) -> Tensor:
    a = _matrices("linalg.inv", A)
    xp = xp_of(a)
    try:
        return _out(xp.linalg.inv(a), a, A)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.inv: The diagonal element is zero, the inversion could not be completed "
                          "because the input matrix is singular.") from None


def linalg_det(A: Tensor) -> Tensor:
    a = _matrices("linalg.det", A)
    return _out(xp_of(a).linalg.det(a), a, A)


def _is_vector_rhs(a: Any, b: Any) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when it is 1-D or has one dim fewer than A, matching A's."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])


def linalg_solve(A: Tensor, B: Tensor, left: bool = True) -> Tensor:
    a = _matrices("linalg.solve", A)
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_TYPE_NAMES[A._dtype.name]} and B of type {_TYPE_NAMES[B._dtype.name]} instead")
    if A._device != B._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{A._device} and {B._device}!")
    b = B._data.astype(a.dtype)
    xp = xp_of(a)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a = xp.swapaxes(a, -1, -2)
        b = b if _is_vector_rhs(a, b) else xp.swapaxes(b, -1, -2)
    vector = _is_vector_rhs(a, b)
    rhs = b[..., None] if vector else b
    if rhs.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({a.shape[-2]}x{a.shape[-1]} and {rhs.shape[-2]}x{rhs.shape[-1]})")
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    rhs = xp.broadcast_to(rhs, batch + rhs.shape[-2:])
    try:
        x = xp.linalg.solve(a, rhs)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.solve: The solver failed because the input matrix is singular.") from None
    x = x[..., 0] if vector else x
    if not left and not vector:
        x = xp.swapaxes(x, -1, -2)
    return _out(xp.ascontiguousarray(x), a, A)


def linalg_cholesky(A: Tensor, upper: bool = False) -> Tensor:
    a = _matrices("linalg.cholesky", A)
    xp = xp_of(a)
    try:
        L = xp.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                          "positive-definite.") from None
    if xp is not np and bool(xp.isnan(L).any()):  # cuSOLVER reports failure as NaN
        raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                          "positive-definite.")
    return _out(xp.ascontiguousarray(xp.swapaxes(L, -1, -2) if upper else L), a, A)


def linalg_qr(A: Tensor, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    a = _matrices("linalg.qr", A, square=False)
    xp = xp_of(a)
    q, r = xp.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = xp.zeros((0,), a.dtype)
    return _out(q, a, A), _out(r, a, A)


def linalg_svd(A: Tensor, full_matrices: bool = True, driver: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    a = _matrices("linalg.svd", A, square=False)
    xp = xp_of(a)
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return _out(u, a, A), _out(s, a, A), _out(vh, a, A)


def linalg_svdvals(A: Tensor, driver: str | None = None) -> Tensor:
    a = _matrices("linalg.svdvals", A, square=False)
    return _out(xp_of(a).linalg.svd(a, compute_uv=False), a, A)



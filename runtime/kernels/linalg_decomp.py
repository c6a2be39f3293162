"""torch.linalg's spectral and LU kernels (CompositeExplicitAutograd), real dtypes: eigh, slogdet and LU with
partial pivoting, through the input's array module (NumPy on CPU, CuPy on CUDA). Their gradients are in
derivatives.yaml with the helpers of runtime/autograd/formulas.py (Note [Linear algebra gradients])."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes
from runtime.kernels._xp import wrap, xp_of
from runtime.kernels.linalg_lapack import _matrices, _out
from runtime.tensor import Tensor


def linalg_eigh(A: Tensor, UPLO: str = "L") -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of symmetric matrices, read from the
    triangle UPLO."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    a = _matrices("linalg.eigh", A)
    xp = xp_of(a)
    w, v = xp.linalg.eigh(a, UPLO=UPLO)
    return _out(w, a, A), _out(xp.ascontiguousarray(v), a, A)


def linalg_slogdet(A: Tensor) -> tuple[Tensor, Tensor]:
    """The sign and log|det| of square matrices."""
    a = _matrices("linalg.slogdet", A)
    sign, logabs = xp_of(a).linalg.slogdet(a)
    return _out(sign, a, A), _out(logabs, a, A)


def _lu_packed(a: Any) -> tuple[Any, Any]:
    """Doolittle LU with partial pivoting of a batch (*, m, n): the packed factors (L below the diagonal with a
    unit diagonal, U on and above it) and LAPACK's 1-based row swaps (*, min(m, n)). One step per column,
    each on the whole batch."""
    xp = xp_of(a)
    lu = a.astype(a.dtype, copy=True)
    m, n = lu.shape[-2:]
    k = min(m, n)
    batch = lu.shape[:-2]
    lu = lu.reshape((-1, m, n))
    rows = xp.arange(lu.shape[0])
    pivots = xp.zeros((lu.shape[0], k), dtype=np.int32)
    for j in range(k):
        p = j + xp.argmax(xp.abs(lu[:, j:, j]), axis=1)
        pivots[:, j] = p + 1
        top, chosen = lu[rows, j, :].copy(), lu[rows, p, :].copy()
        lu[rows, j, :], lu[rows, p, :] = chosen, top
        diag = lu[:, j, j]
        safe = xp.where(diag == 0, 1, diag)
        factors = xp.where((diag == 0)[:, None], 0, lu[:, j + 1:, j] / safe[:, None])
        lu[:, j + 1:, j] = factors
        lu[:, j + 1:, j + 1:] -= factors[:, :, None] * lu[:, j, None, j + 1:]
    return lu.reshape(batch + (m, n)), pivots.reshape(batch + (k,))


def _permutation(pivots: Any, m: int) -> Any:
    """P with A = P L U from the row swaps (*, k)."""
    xp = xp_of(pivots)
    batch = pivots.shape[:-1]
    flat = pivots.reshape((-1, pivots.shape[-1])) - 1
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    rows = xp.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        a, b = perm[rows, j].copy(), perm[rows, flat[:, j]].copy()
        perm[rows, j], perm[rows, flat[:, j]] = b, a
    # row i of P^T A is row perm[i] of A, so P[perm[i], i] = 1
    P = xp.zeros((flat.shape[0], m, m))
    P[rows[:, None], perm, xp.arange(m)[None, :]] = 1
    return P.reshape(batch + (m, m))


def _linalg_lu(A: Tensor, pivot: bool = True) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(P, L, U, pivots) with A = P L U; L (*, m, k) unit lower, U (*, k, n) upper, k = min(m, n)."""
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    a = _matrices("linalg.lu", A, square=False)
    xp = xp_of(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    lu, pivots = _lu_packed(a)
    L = xp.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=a.dtype)
    U = xp.triu(lu[..., :k, :])
    P = _permutation(pivots, m).astype(a.dtype)
    return (_out(P, a, A), _out(xp.ascontiguousarray(L), a, A), _out(xp.ascontiguousarray(U), a, A),
            wrap(xp.asarray(pivots), a, dtypes.int32))

"""The LDL^T factorisation of symmetric matrices and its solver (torch.linalg.ldl_factor(_ex),
ldl_solve): LAPACK's Bunch-Kaufman `?sytrf`/`?sytrs` through SciPy, with the lower triangle stored, as
PyTorch does, so the pivots are LAPACK's (1-based; a negative pair marks a 2x2 block of D).

Arrays in, arrays out (NumPy; float16 computes in float32; the caller moves CUDA data to the host and
back).
A real matrix is its own Hermitian, so `hermitian=` changes nothing here (complex dtypes are a later
issue). The factors carry no gradient (PyTorch has none either).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack


def _lapack_dtype(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype == np.float16 else a


def ldl_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(LD, pivots, info) of every matrix of the batch `a` (*, n, n): LD holds L's strict lower triangle
    and D's blocks (the upper triangle is zero), pivots int32 (*, n), info int32 (*): 0, or the 1-based
    index of D's first zero diagonal block."""
    a = _lapack_dtype(a)
    n = a.shape[-1]
    batch = a.shape[:-2]
    ld = np.zeros(a.shape, dtype=a.dtype)
    pivots = np.zeros((*batch, n), dtype=np.int32)
    info = np.zeros(batch, dtype=np.int32)
    if n == 0:
        return ld, pivots, info
    sytrf = lapack.get_lapack_funcs("sytrf", dtype=a.dtype)
    for index in np.ndindex(*batch):
        factor, ipiv, code = sytrf(np.array(a[index], dtype=a.dtype), lower=1)
        ld[index] = np.tril(factor)
        pivots[index] = ipiv
        info[index] = code
    return ld, pivots, info


def ldl_solve(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray) -> np.ndarray:
    """X with A X = B for the factorisation (LD, pivots) of A; LD (*, n, n), pivots (*, n) and B (*, n, k)
    broadcast over their batch dims."""
    ld, b = _lapack_dtype(ld), _lapack_dtype(b).astype(_lapack_dtype(ld).dtype)
    n = ld.shape[-1]
    batch = np.broadcast_shapes(ld.shape[:-2], pivots.shape[:-1], b.shape[:-2])
    x = np.zeros((*batch, n, b.shape[-1]), dtype=ld.dtype)
    if n == 0 or b.shape[-1] == 0:
        return x
    lds = np.broadcast_to(ld, (*batch, n, n))
    pivs = np.broadcast_to(pivots, (*batch, n))
    bs = np.broadcast_to(b, (*batch, n, b.shape[-1]))
    sytrs = lapack.get_lapack_funcs("sytrs", dtype=ld.dtype)
    for index in np.ndindex(*batch):
        solution, code = sytrs(np.array(lds[index]), np.array(pivs[index]), np.array(bs[index]), lower=1)
        if code != 0:
            raise ValueError(f"ldl_solve: LAPACK's sytrs refused argument {-code} (the pivots do not come from "
                             f"ldl_factor of a matrix of this size?)")
        x[index] = solution
    return x

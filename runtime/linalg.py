"""`G.linalg`: torch.linalg's functions under its names. The decompositions and solvers are ops
(`linalg_inv`, `linalg_solve`, ... in native_functions.yaml, kernels in runtime/kernels/linalg_lapack.py,
gradients in derivatives.yaml); the norms are built from them and from `linalg_vector_norm`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from runtime import opcall
from runtime import strides as S
from runtime.kernels.linalg_lapack import LinAlgError

__all__ = ["LinAlgError", "cholesky", "cross", "det", "inv", "matrix_norm", "matrix_power", "norm", "qr", "solve",
           "svd", "svdvals", "vector_norm"]


def _G() -> Any:
    return opcall.api


def inv(A: Any) -> Any:
    return _G().linalg_inv(A)


def det(A: Any) -> Any:
    """`G.linalg.det`, and the kernel of `G.det` / `Tensor.det`."""
    return _G().linalg_det(A)


def cross(input: Any, other: Any, *, dim: int = -1) -> Any:
    return _G().linalg_cross(input, other, dim=dim)


def matrix_power(A: Any, n: int) -> Any:
    return _G().linalg_matrix_power(A, n)


def solve(A: Any, B: Any, *, left: bool = True) -> Any:
    return _G().linalg_solve(A, B, left=left)


def cholesky(A: Any, *, upper: bool = False) -> Any:
    return _G().linalg_cholesky(A, upper=upper)


def qr(A: Any, mode: str = "reduced") -> Any:
    return _G().linalg_qr(A, mode)


def svd(A: Any, full_matrices: bool = True, *, driver: str | None = None) -> Any:
    return _G().linalg_svd(A, full_matrices, driver=driver)


def svdvals(A: Any, driver: str | None = None) -> Any:
    """The singular values, descending (differentiable through `svd`)."""
    return _G().linalg_svd(A, False)[1]


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    return _G().linalg_vector_norm(x, ord, [dim] if isinstance(dim, int) else dim, keepdim, dtype=dtype)


def matrix_norm(A: Any, ord: Any = "fro", dim: Sequence[int] = (-2, -1), keepdim: bool = False,
                dtype: Any = None) -> Any:
    """Frobenius (`fro`), nuclear (`nuc`), max column sum (1, -1: min), max row sum (inf, -inf: min) and
    spectral (2, -2: smallest singular value) norms of the matrices over the two dims `dim`."""
    G = _G()
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    if not A.is_floating_point():
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype}")
    d0, d1 = (S.wrap_dim(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return G.linalg_vector_norm(A, 2, [d0, d1], keepdim)
    if ord in ("nuc", 2, -2):
        moved = G.movedim(A, [d0, d1], [-2, -1])
        s = svdvals(moved)
        out = s.sum(-1) if ord == "nuc" else (_largest(s, -1, False) if ord == 2 else s.amin(-1))
        if keepdim:
            out = out.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return out
    if ord in (1, -1, math.inf, -math.inf):
        summed, other = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(summed, keepdim=True)
        out = _largest(sums, other, True) if ord > 0 else sums.amin(other, keepdim=True)
        return out if keepdim else out.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _largest(values: Any, dim: int, keepdim: bool) -> Any:
    """amax of non-negative `values` over `dim`, 0 over an empty dim (as PyTorch's norms of an empty matrix:
    the maximum of no non-negative numbers is taken as 0; the minimum still has no value and raises). The
    empty case is a sum, so the result keeps its place in the graph."""
    if values.shape[dim] == 0:
        return values.sum(dim, keepdim=keepdim)
    return values.amax(dim, keepdim=keepdim)


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """A vector norm (1-D input, or one `dim`) or a matrix norm (2-D input, or two dims), as torch.linalg.norm;
    with neither `ord` nor `dim`, the 2-norm of all elements."""
    if isinstance(dim, int):
        dim = [dim]
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.dim() not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.dim()}D.")
        dim = list(range(A.dim()))
    if isinstance(ord, str) or len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)

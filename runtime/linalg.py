"""`G.linalg`: torch.linalg's functions under its names. The decompositions and solvers are ops
(`linalg_inv`, `linalg_solve`, ... in native_functions.yaml, kernels in runtime/kernels/linalg_lapack.py,
gradients in derivatives.yaml); the norms are built from them and from `linalg_vector_norm`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from runtime import opcall, return_types
from runtime import strides as S
from runtime.kernels.linalg_lapack import LinAlgError

__all__ = ["LinAlgError", "cholesky", "cross", "det", "inv", "matrix_norm", "matrix_power", "norm", "qr", "solve",
           "svd", "svdvals", "vector_norm"]
__all__ += ["cholesky_ex", "cond", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "householder_product", "inv_ex",
            "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_rank", "multi_dot", "pinv",
            "slogdet", "solve_ex", "solve_triangular", "tensorinv", "tensorsolve", "vander", "vecdot"]


def _G() -> Any:
    return opcall.api


@opcall.takes_out("linalg.inv")
def inv(A: Any) -> Any:
    return _G().linalg_inv(A)


@opcall.takes_out("linalg.det")
def det(A: Any) -> Any:
    """`G.linalg.det`, and the kernel of `G.det` / `Tensor.det`."""
    return _G().linalg_det(A)


@opcall.takes_out("linalg.cross")
def cross(input: Any, other: Any, *, dim: int = -1) -> Any:
    return _G().linalg_cross(input, other, dim=dim)


@opcall.takes_out("linalg.matrix_power")
def matrix_power(A: Any, n: int) -> Any:
    return _G().linalg_matrix_power(A, n)


@opcall.takes_out("linalg.solve")
def solve(A: Any, B: Any, *, left: bool = True) -> Any:
    return _G().linalg_solve(A, B, left=left)


@opcall.takes_out("linalg.cholesky")
def cholesky(A: Any, *, upper: bool = False) -> Any:
    return _G().linalg_cholesky(A, upper=upper)


@opcall.takes_out("linalg.qr")
def qr(A: Any, mode: str = "reduced") -> Any:
    return _G().linalg_qr(A, mode)


@opcall.takes_out("linalg.svd")
def svd(A: Any, full_matrices: bool = True, *, driver: str | None = None) -> Any:
    return _G().linalg_svd(A, full_matrices, driver=driver)


@opcall.takes_out("linalg.svdvals")
def svdvals(A: Any, driver: str | None = None) -> Any:
    """The singular values, descending; their gradient U diag(grad) Vh needs no gaps between them."""
    return _G()._linalg_svdvals(A)


@opcall.takes_out("linalg.vector_norm")
def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    return _G().linalg_vector_norm(x, ord, [dim] if isinstance(dim, int) else dim, keepdim, dtype=dtype)


@opcall.takes_out("linalg.matrix_norm")
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


@opcall.takes_out("linalg.norm")
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


# --- issue 21: decompositions, solvers and helpers ------------------------------------------------------------
# eigh, slogdet and LU are ops with their own kernels and gradients (runtime/kernels/linalg_decomp.py); the rest
# are compositions of ops, so their gradients are those ops'.

def _eps(A: Any) -> float:
    import numpy as np

    return float(np.finfo(np.dtype(A.dtype.name)).eps)


def _check_square(A: Any, op: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


@opcall.takes_out("linalg.eigh")
def eigh(A: Any, UPLO: str = "L") -> Any:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices, from the triangle UPLO."""
    w, v = _G().linalg_eigh(A, UPLO)
    return return_types.make("linalg_eigh", ("eigenvalues", "eigenvectors"))(w, v)


@opcall.takes_out("linalg.eigvalsh")
def eigvalsh(A: Any, UPLO: str = "L") -> Any:
    return _G().linalg_eigh(A, UPLO)[0]


@opcall.takes_out("linalg.eig")
def eig(A: Any) -> Any:
    raise NotImplementedError("linalg.eig returns complex eigenvalues and eigenvectors; opgen has no complex "
                              "dtypes (use linalg.eigh for symmetric matrices)")


@opcall.takes_out("linalg.eigvals")
def eigvals(A: Any) -> Any:
    raise NotImplementedError("linalg.eigvals returns complex eigenvalues; opgen has no complex dtypes (use "
                              "linalg.eigvalsh for symmetric matrices)")


@opcall.takes_out("linalg.slogdet")
def slogdet(A: Any) -> Any:
    sign, logabsdet = _G().linalg_slogdet(A)
    return return_types.make("linalg_slogdet", ("sign", "logabsdet"))(sign, logabsdet)


def _tolerance(S: Any, A: Any, atol: Any, rtol: Any) -> Any:
    """max(atol, rtol * largest singular value) per matrix (PyTorch's defaults: rtol = eps * max(m, n) when
    neither is given, 0 when only atol is)."""
    G = _G()
    if rtol is None:
        rtol = _eps(A) * max(A.shape[-2], A.shape[-1]) if atol is None else 0.0
    # a tensor tolerance has one value per matrix of the batch
    if not isinstance(rtol, (int, float)):
        rtol = rtol.unsqueeze(-1)
    if atol is not None and not isinstance(atol, (int, float)):
        atol = atol.unsqueeze(-1)
    if S.numel():
        largest = S.amax(-1, keepdim=True)
    else:
        largest = G.zeros(list(S.shape[:-1]) + [1], dtype=S.dtype, device=S.device)
    tol = largest * rtol
    if atol is not None:
        tol = G.maximum(tol, atol if not isinstance(atol, (int, float)) else G.full_like(tol, float(atol)))
    return tol


@opcall.takes_out("linalg.pinv", castable=True)
def pinv(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse V diag(1/s) U^T, singular values at or below the tolerance dropped
    (the op `_linalg_pinv`, whose gradient is the pseudo-inverse's formula at constant rank)."""
    G = _G()
    if rcond is not None:
        rtol = rcond

    def tensor(tol: Any) -> Any:
        return tol if tol is None or isinstance(tol, G.Tensor) else G.tensor(float(tol), dtype=G.float64,
                                                                               device=A.device)
    return G._linalg_pinv(A, tensor(atol), tensor(rtol), hermitian)


def pinv_value(A: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    """The pseudo-inverse of A (the kernel of `_linalg_pinv`): from the SVD, or from eigh of the lower
    triangle with `hermitian`, 1 / each singular value (eigenvalue) above the tolerance, 0 for the rest."""
    G = _G()
    if atol is not None and atol.dim() == 0:
        atol = atol.item()
    if rtol is not None and rtol.dim() == 0:
        rtol = rtol.item()
    if hermitian:  # from eigh of the lower triangle: V diag(1 / w) V^T over |w| above the tolerance
        w, V = G.linalg_eigh(A)
        tol = _tolerance(w.abs(), A, atol, rtol)
        keep = w.abs() > tol
        inverse = G.where(keep, 1 / G.where(keep, w, 1), 0)
        return (V * inverse.unsqueeze(-2)).matmul(V.transpose(-2, -1))
    U, S, Vh = G.linalg_svd(A, False)
    tol = _tolerance(S, A, atol, rtol)
    keep = S > tol
    inverse = G.where(keep, 1 / G.where(keep, S, 1), 0)
    return (Vh.transpose(-2, -1) * inverse.unsqueeze(-2)).matmul(U.transpose(-2, -1))


@opcall.takes_out("linalg.matrix_rank", castable=True)
def matrix_rank(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False, tol: Any = None) -> Any:
    """The number of singular values above the tolerance (int64)."""
    if tol is not None:
        atol, rtol = tol, 0.0
    S = svdvals(A.detach())
    return (S > _tolerance(S, A, atol, rtol)).sum(-1)


@opcall.takes_out("linalg.lstsq")
def lstsq(A: Any, B: Any, rcond: Any = None, *, driver: str | None = None) -> Any:
    """The least-squares solution of A X = B, as PyTorch's CPU drivers: (solution, residuals, rank,
    singular_values); residuals when m > n and A has full rank (not for 'gelsy'), singular values for
    'gelsd'/'gelss'."""
    G = _G()
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
                           f"got {driver}")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    vector = B.dim() == A.dim() - 1
    rhs = B.unsqueeze(-1) if vector else B
    if rhs.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), got {A.shape[-2]} and "
                           f"{rhs.shape[-2]}")
    m, n = A.shape[-2], A.shape[-1]
    rtol = rcond if rcond is not None and rcond > 0 else _eps(A) * max(m, n)
    X = pinv(A, rtol=rtol).matmul(rhs)
    S = svdvals(A.detach())
    rank = (S > _tolerance(S, A, None, rtol)).sum(-1)
    full = bool((rank == min(m, n)).all()) if rank.numel() else True
    empty = A.reshape([-1]).narrow(0, 0, 0)  # empty, and in A's graph as PyTorch's
    residuals = empty
    if m > n and full and driver != "gelsy":
        residuals = ((A.matmul(X) - rhs) ** 2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    rank_out = rank if driver != "gels" else G.zeros([0], dtype=G.int64, device=A.device)
    singular = S if driver in ("gelsd", "gelss") else empty.detach()  # PyTorch differentiates solution, residuals
    X = X.squeeze(-1) if vector else X
    return return_types.make("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))(
        X, residuals, rank_out, singular)


@opcall.takes_out("linalg.cond", castable=True)
def cond(A: Any, p: Any = None) -> Any:
    """The condition number: s_max / s_min for p None, 2 (-2: the inverse), else norm(A, p) * norm(A^-1, p)."""
    if p is None or p in (2, -2):
        S = svdvals(A)
        big, small = S.narrow(-1, 0, 1).squeeze(-1), S.narrow(-1, S.shape[-1] - 1, 1).squeeze(-1)
        return small / big if p == -2 else big / small
    _check_square(A, "cond")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def _ex_info(A: Any, ok: Any) -> Any:
    G = _G()
    return G.where(ok, 0, 1).to(G.int32)


@opcall.takes_out("linalg.inv_ex")
def inv_ex(A: Any, *, check_errors: bool = False) -> Any:
    """(inverse, info): info 0 where A is invertible; otherwise raises with check_errors, else the inverse of a
    singular matrix is left as NaN and its info is positive."""
    G = _G()
    make = return_types.make("linalg_inv_ex", ("inverse", "info"))
    try:
        return make(G.linalg_inv(A), G.zeros(list(A.shape[:-2]), dtype=G.int32, device=A.device))
    except LinAlgError:
        if check_errors:
            raise
    singular = G.linalg_det(A.detach()) == 0
    safe = G.where(singular.unsqueeze(-1).unsqueeze(-1), G.eye(A.shape[-1], dtype=A.dtype, device=A.device), A)
    out = G.where(singular.unsqueeze(-1).unsqueeze(-1), math.nan, G.linalg_inv(safe))
    return make(out, _ex_info(A, ~singular))


@opcall.takes_out("linalg.cholesky_ex")
def cholesky_ex(A: Any, *, upper: bool = False, check_errors: bool = False) -> Any:
    """(L, info): info 0 where A is positive-definite, else positive (and L of that matrix zero)."""
    G = _G()
    make = return_types.make("linalg_cholesky_ex", ("L", "info"))
    try:
        return make(G.linalg_cholesky(A, upper=upper), G.zeros(list(A.shape[:-2]), dtype=G.int32, device=A.device))
    except LinAlgError:
        if check_errors:
            raise
    import numpy as np

    a = A.detach().cpu().numpy()
    ok = np.ones(a.shape[:-2], dtype=bool)
    for index in np.ndindex(*a.shape[:-2]):
        try:
            np.linalg.cholesky(a[index])
        except np.linalg.LinAlgError:
            ok[index] = False
    good = G.tensor(ok, device=A.device)
    eye = G.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    L = G.linalg_cholesky(G.where(good.unsqueeze(-1).unsqueeze(-1), A, eye), upper=upper)
    return make(G.where(good.unsqueeze(-1).unsqueeze(-1), L, 0), _ex_info(A, good))


@opcall.takes_out("linalg.solve_ex")
def solve_ex(A: Any, B: Any, *, left: bool = True, check_errors: bool = False) -> Any:
    G = _G()
    make = return_types.make("linalg_solve_ex", ("result", "info"))
    try:
        return make(G.linalg_solve(A, B, left=left), G.zeros(list(A.shape[:-2]), dtype=G.int32, device=A.device))
    except LinAlgError:
        if check_errors:
            raise
        raise LinAlgError("linalg.solve_ex: the matrix is singular (opgen reports it instead of returning "
                          "info)") from None


@opcall.takes_out("linalg.solve_triangular")
def solve_triangular(A: Any, B: Any, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Any:
    """X with A X = B (X A = B when not left), reading only A's upper or lower triangle (and a unit diagonal
    when unitriangular), so the gradient of A lies in that triangle."""
    G = _G()
    T = A.triu() if upper else A.tril()
    if unitriangular:
        eye = G.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        T = G.where(eye.bool(), eye, T)
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    return G.linalg_solve(T, B, left=left)


@opcall.takes_out("linalg.lu_factor")
def lu_factor(A: Any, *, pivot: bool = True) -> Any:
    """The packed LU factors (L below the diagonal, U on and above) and the 1-based pivots (int32)."""
    LU, pivots = _packed_lu(A, pivot)
    return return_types.make("linalg_lu_factor", ("LU", "pivots"))(LU, pivots)


@opcall.takes_out("linalg.lu_factor_ex")
def lu_factor_ex(A: Any, *, pivot: bool = True, check_errors: bool = False) -> Any:
    G = _G()
    LU, pivots = _packed_lu(A, pivot)
    singular = (LU.diagonal(0, -2, -1) == 0).any(-1)
    if check_errors and bool(singular.any()):
        raise LinAlgError("linalg.lu_factor_ex: The factorization could not be completed because the input is "
                          "singular.")
    info = _ex_info(A, ~singular)
    return return_types.make("linalg_lu_factor_ex", ("LU", "pivots", "info"))(LU, pivots, info.to(G.int32))


def _packed_lu(A: Any, pivot: bool) -> tuple[Any, Any]:
    G = _G()
    _, L, U, pivots = G._linalg_lu(A, pivot=pivot)
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    lower = L.tril(-1)
    if n > k:
        lower = G.cat([lower, G.zeros(list(lower.shape[:-1]) + [n - k], dtype=A.dtype, device=A.device)], -1)
    upper = U
    if m > k:
        upper = G.cat([upper, G.zeros(list(U.shape[:-2]) + [m - k, n], dtype=A.dtype, device=A.device)], -2)
    return lower + upper, pivots


@opcall.takes_out("linalg.lu")
def lu(A: Any, *, pivot: bool = True) -> Any:
    """(P, L, U) with A = P L U."""
    P, L, U, _ = _G()._linalg_lu(A, pivot=pivot)
    return return_types.make("linalg_lu", ("P", "L", "U"))(P, L, U)


@opcall.takes_out("linalg.lu_solve")
def lu_solve(LU: Any, pivots: Any, B: Any, *, left: bool = True, adjoint: bool = False) -> Any:
    """Solve A X = B (X A = B when not left; with A^T when adjoint) from A's packed LU factors."""
    import numpy as np

    G = _G()
    _check_square(LU, "lu_solve")
    n = LU.shape[-1]
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return lu_solve(LU, pivots, B.transpose(-2, -1), left=True, adjoint=not adjoint).transpose(-2, -1)
    if pivots.is_meta:  # the permutation's values come from the pivots' (Note [Meta tensors])
        P = G.empty(tuple(pivots.shape[:-1]) + (n, n), dtype=LU.dtype, device="meta")
    else:
        piv = pivots.detach().cpu().numpy().astype(np.int64) - 1
        perm = np.broadcast_to(np.arange(n), piv.shape[:-1] + (n,)).copy()
        for index in np.ndindex(*piv.shape[:-1]):
            row = perm[index]
            for j, p in enumerate(piv[index]):
                row[j], row[p] = row[p], row[j]
        eye = np.eye(n)
        P = G.tensor(eye[perm].swapaxes(-1, -2), dtype=LU.dtype, device=LU.device)  # A = P L U
    if adjoint:  # A^T X = B:  U^T L^T P^T X = B
        Y = solve_triangular(LU.transpose(-2, -1), B, upper=False)
        Z = solve_triangular(LU.transpose(-2, -1), Y, upper=True, unitriangular=True)
        return P.matmul(Z)
    Y = solve_triangular(LU, P.transpose(-2, -1).matmul(B), upper=False, unitriangular=True)
    return solve_triangular(LU, Y, upper=True)


@opcall.takes_out("linalg.multi_dot")
def multi_dot(tensors: Sequence[Any]) -> Any:
    """The product of a chain of matrices; the first may be a row vector and the last a column vector."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        edge = i in (0, len(tensors) - 1)
        if t.dim() != 2 and not (edge and t.dim() == 1):
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D{' or 1D' if edge else ''} but got "
                               f"{t.dim()}D")
    first, last = tensors[0], tensors[-1]
    items = [first.unsqueeze(0) if first.dim() == 1 else first] + list(tensors[1:-1]) + \
        [last.unsqueeze(-1) if last.dim() == 1 else last]
    out = _chain_product(items)
    if last.dim() == 1:
        out = out.squeeze(-1)
    if first.dim() == 1:
        out = out.squeeze(0)
    return out


def _chain_product(items: Sequence[Any]) -> Any:
    """The product of matrices in the order of fewest multiplications (PyTorch's order, so that in float16,
    where each partial product is rounded, the results agree)."""
    n = len(items)
    if n == 1:
        return items[0]
    if n == 2:
        return items[0].matmul(items[1])
    if n == 3:  # (a x b)(b x c)(c x d): left first unless right first costs less
        a, b, c, d = items[0].shape[0], items[1].shape[0], items[2].shape[0], items[2].shape[1]
        if a * c * (b + d) > b * d * (a + c):
            return items[0].matmul(items[1].matmul(items[2]))
        return items[0].matmul(items[1]).matmul(items[2])
    dims = [items[0].shape[0]] + [t.shape[1] for t in items]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i: int, j: int) -> Any:
        if i == j:
            return items[i]
        k = split[i][j]
        return product(i, k).matmul(product(k + 1, j))
    return product(0, n - 1)


@opcall.takes_out("linalg.householder_product", castable=True)
def householder_product(A: Any, tau: Any) -> Any:
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i = (0, .., 1, A[i+1:, i])."""
    G = _G()
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n or k > n:
        raise RuntimeError(f"torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1] and input.shape[-1] must be greater than or equal to tau.shape[-1], "
                           f"got {m}, {n}, {k}")
    # the identity written over a copy of A, so that the result stays in A's graph even when tau is empty
    Q = A.clone().copy_(G.eye(m, n, dtype=A.dtype, device=A.device).expand(list(A.shape)))
    for i in reversed(range(k)):
        below = A.narrow(-1, i, 1).narrow(-2, i + 1, m - i - 1)
        head = G.ones(list(A.shape[:-2]) + [1, 1], dtype=A.dtype, device=A.device)
        zeros = G.zeros(list(A.shape[:-2]) + [i, 1], dtype=A.dtype, device=A.device)
        v = G.cat([zeros, head, below], -2)  # (*, m, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)
        Q = Q - v.matmul(v.transpose(-2, -1).matmul(Q)) * t
    return Q


def vander(x: Any, N: int | None = None) -> Any:
    """Columns x^0, x^1, ..., x^(N-1) (N defaults to x's last dim)."""
    G = _G()
    if x.dtype == G.bool:
        raise RuntimeError("linalg.vander supports floating point and integer tensors, but got bool")
    if not x.dtype.is_floating_point and x.dtype != G.int64:  # powers of an integer tensor are int64
        x = x.to(G.int64)
    x = x.reshape([1]) if x.dim() == 0 else x
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError(f"N must be greater than 1, got {N}")
    columns = [G.ones_like(x)]
    for _ in range(N - 1):
        columns.append(columns[-1] * x)
    return G.stack(columns, -1)


@opcall.takes_out("linalg.vecdot")
def vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
    """sum(x * y) along `dim` (real inputs): floating operands of one dtype, as PyTorch's."""
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: expected x and y to have the same dtype, but got {x.dtype.name} and "
                           f"{y.dtype.name}")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vecdot: expected floating-point tensors, but got {x.dtype.name}")
    return (x * y).sum(dim)


@opcall.takes_out("linalg.matmul")
def matmul(input: Any, other: Any) -> Any:
    return _G().matmul(input, other)


def diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    return _G().diagonal(A, offset, dim1, dim2)


@opcall.takes_out("linalg.tensorinv", castable=True)
def tensorinv(A: Any, ind: int = 2) -> Any:
    """The inverse of A read as a matrix of its first `ind` dims by the rest: shape A.shape[ind:] + A.shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = list(A.shape[:ind]), list(A.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(cols)} != {math.prod(rows)}")
    return inv(A.reshape([math.prod(rows), math.prod(cols)])).reshape(cols + rows)


@opcall.takes_out("linalg.tensorsolve")
def tensorsolve(A: Any, B: Any, dims: Sequence[int] | None = None) -> Any:
    """X with tensordot(A, X, X.dim()) = B; `dims` of A are moved to the end first."""
    G = _G()
    if dims is not None:
        moved = [S.wrap_dim(d, A.dim()) for d in dims]
        A = G.movedim(A, moved, list(range(A.dim() - len(moved), A.dim())))
    rest = list(A.shape[B.dim():])
    if math.prod(rest) != B.numel():
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {math.prod(rest)} != {B.numel()}")
    return solve(A.reshape([B.numel(), math.prod(rest)]), B.reshape([B.numel()])).reshape(rest)


# ---- LDL^T of symmetric matrices (runtime/kernels/linalg_ldl.py) ----------------------------------------
__all__ += ["ldl_factor", "ldl_factor_ex", "ldl_solve"]


def _ldl_input(op: str, A: Any) -> Any:
    """A's data on the host, checked: a batch of square floating matrices (None for a meta A, which has no
    data: Note [Meta tensors] in runtime/meta_array.py)."""
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point tensor as input. Got {A.dtype}")
    return None if A.is_meta else A.detach().numpy(force=True)


def ldl_factor_ex(A: Any, *, hermitian: bool = False, check_errors: bool = False, out: Any = None) -> Any:
    """(LD, pivots, info): the Bunch-Kaufman LDL^T factorisation of symmetric A (its lower triangle is
    read); info is 0, or the 1-based index of a zero diagonal block of D (raised with check_errors)."""
    from runtime.kernels import linalg_ldl  # SciPy's LAPACK, loaded on first use

    G = _G()
    make = return_types.make("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
    a = _ldl_input("torch.linalg.ldl_factor_ex", A)
    if a is None:  # meta: the factors' shapes and dtypes
        batch = tuple(A.shape[:-2])
        result = make(G.empty(tuple(A.shape), dtype=A.dtype, device="meta"),
                      G.empty(batch + (A.shape[-1],), dtype=G.int32, device="meta"),
                      G.empty(batch, dtype=G.int32, device="meta"))
        return result if out is None else opcall.store_out("linalg.ldl_factor_ex", result, out)
    ld, pivots, info = linalg_ldl.ldl_factor(a)
    if check_errors and info.any():
        raise LinAlgError(f"torch.linalg.ldl_factor_ex: D has a zero diagonal element at position "
                          f"{int(info[info != 0].flat[0])}: the matrix is singular")
    result = make(G.tensor(ld, dtype=A.dtype, device=A.device), G.tensor(pivots, device=A.device),
                  G.tensor(info, device=A.device))
    return result if out is None else opcall.store_out("linalg.ldl_factor_ex", result, out)


def ldl_factor(A: Any, *, hermitian: bool = False, out: Any = None) -> Any:
    """(LD, pivots) of the LDL^T factorisation; a singular matrix is an error (linalg.LinAlgError)."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if not info.is_meta and bool(info.any()):
        position = int(info[info != 0].flatten()[0])
        raise LinAlgError(f"torch.linalg.ldl_factor: D has a zero diagonal element at position {position}: the "
                          f"matrix is singular")
    result = return_types.make("linalg_ldl_factor", ("LD", "pivots"))(LD, pivots)
    return result if out is None else opcall.store_out("linalg.ldl_factor", result, out)


def ldl_solve(LD: Any, pivots: Any, B: Any, *, hermitian: bool = False, out: Any = None) -> Any:
    """X with A X = B, from ldl_factor's (LD, pivots) of A; batch dims broadcast."""
    from runtime.kernels import linalg_ldl  # SciPy's LAPACK, loaded on first use

    G = _G()
    op = "torch.linalg.ldl_solve"
    ld = _ldl_input(op, LD)
    if B.dim() < 2 or B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"{op}: B of shape {list(B.shape)} does not have the {LD.shape[-1]} rows of LD")
    if pivots.dtype != G.int32 or pivots.dim() < 1 or pivots.shape[-1] != LD.shape[-1]:
        raise RuntimeError(f"{op}: pivots must be int32 of shape (*, {LD.shape[-1]}), got {pivots.dtype} "
                           f"{list(pivots.shape)}")
    if LD.dtype != B.dtype:
        raise RuntimeError(f"{op}: LD ({LD.dtype}) and B ({B.dtype}) must have one dtype")
    if ld is None or pivots.is_meta or B.is_meta:  # meta: X's shape, B's columns over the broadcast batch
        if not (LD.is_meta and pivots.is_meta and B.is_meta):
            raise RuntimeError(f"{op}: expected LD, pivots and B on one device, got {LD.device}, {pivots.device} "
                               f"and {B.device}")
        batch = S.broadcast_shapes(tuple(LD.shape[:-2]), tuple(pivots.shape[:-1]), tuple(B.shape[:-2]))
        result = G.empty(tuple(batch) + (LD.shape[-1], B.shape[-1]), dtype=B.dtype, device="meta")
        return result if out is None else opcall.store_out("linalg.ldl_solve", result, out)
    x = linalg_ldl.ldl_solve(ld, pivots.numpy(force=True), B.detach().numpy(force=True))
    result = G.tensor(x, dtype=B.dtype, device=B.device)
    return result if out is None else opcall.store_out("linalg.ldl_solve", result, out)

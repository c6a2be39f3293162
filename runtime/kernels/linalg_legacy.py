"""torch's linalg functions from before `torch.linalg` (`svd`, `qr`, `cholesky*`, `lu_solve`, `lu_unpack`,
`triangular_solve`, `ormqr`/`orgqr`, `pinverse`, `matrix_exp`, `geqrf`) under their names and argument
conventions, built from the `linalg_*` ops (CompositeImplicitAutograd: their gradients are autograd's through
those ops). `geqrf` is a LAPACK kernel of its own (no gradient, as in PyTorch).

Note [Legacy Cholesky factors take the gradient of the whole matrix]: `cholesky_inverse(L)` and
`cholesky_solve(B, L)` read only L's triangle, yet PyTorch differentiates them as functions of the whole
matrix L: dA = dL L^T + L dL^T with the whole L, also where L holds values outside its triangle. The
matrix used is `L L^T + (T T^T - L L^T).detach()` (T the triangle): its value is T T^T, its derivative that
of L L^T, so autograd gives PyTorch's gradient.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime import opcall, return_types
from runtime.kernels._xp import wrap, xp_of
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api  # the generated package (Note [The runtime reaches generated/ through opcall])


def _need_matrix(op: str, A: Any, name: str = "A", square: bool = False) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not A.is_floating_point():
        raise RuntimeError(f"{op}: Expected a floating point tensor as input. Got {A.dtype}")


def _mT(A: Any) -> Any:
    return A.transpose(-2, -1)


def cholesky(self: Any, upper: bool = False) -> Any:
    return _G().linalg_cholesky(self, upper=upper)


def _gram(L: Any, upper: bool) -> Any:
    """A = T T^T (T^T T when upper) of L's triangle T, differentiated as L L^T (Note [Legacy Cholesky factors
    take the gradient of the whole matrix])."""
    T = L.triu() if upper else L.tril()
    full = _mT(L).matmul(L) if upper else L.matmul(_mT(L))
    value = _mT(T).matmul(T) if upper else T.matmul(_mT(T))
    return full + (value - full).detach()


def cholesky_inverse(self: Any, upper: bool = False) -> Any:
    _need_matrix("cholesky_inverse", self, "input", square=True)
    return _G().linalg_inv(_gram(self, upper))


def cholesky_solve(self: Any, input2: Any, upper: bool = False) -> Any:
    _need_matrix("cholesky_solve", self, "b")
    _need_matrix("cholesky_solve", input2, "u", square=True)
    if self.dtype != input2.dtype:
        raise RuntimeError(f"cholesky_solve: Expected b and u to have the same dtype, but found b of type "
                           f"{self.dtype} and u of type {input2.dtype} instead.")
    return _G().linalg_solve(_gram(input2, upper), self)


def qr(self: Any, some: bool = True) -> Any:
    Q, R = _G().linalg_qr(self, "reduced" if some else "complete")
    return return_types.make("qr", ("Q", "R"))(Q, R)


def svd(self: Any, some: bool = True, compute_uv: bool = True) -> Any:
    """U, S, V (not V^H) with self = U diag(S) V^T; without compute_uv, U and V are zero (m x m, n x n)."""
    G = _G()
    _need_matrix("svd", self)
    cls = return_types.make("svd", ("U", "S", "V"))
    if not compute_uv:
        m, n = self.shape[-2], self.shape[-1]
        batch = list(self.shape[:-2])
        S = G.linalg.svdvals(self)
        return cls(G.zeros(batch + [m, m], dtype=self.dtype, device=self.device), S,
                   G.zeros(batch + [n, n], dtype=self.dtype, device=self.device))
    U, S, Vh = G.linalg_svd(self, not some)
    return cls(U, S, _mT(Vh))


def triangular_solve(self: Any, A: Any, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:
    """X with op(A) X = self (op(A) = A or A^T), reading A's triangle only; and a copy of A."""
    G = _G()
    _need_matrix("triangular_solve", self, "b")
    _need_matrix("triangular_solve", A, "A", square=True)
    batch = G.broadcast_shapes(tuple(self.shape[:-2]), tuple(A.shape[:-2]))
    A_b = A.expand(list(batch) + list(A.shape[-2:]))
    b_b = self.expand(list(batch) + list(self.shape[-2:]))
    M = _mT(A_b) if transpose else A_b
    X = G.linalg.solve_triangular(M, b_b, upper=upper != transpose, unitriangular=unitriangular)
    return return_types.make("triangular_solve", ("solution", "cloned_coefficient"))(X, A_b.clone())


def lu_solve(self: Any, LU_data: Any, LU_pivots: Any) -> Any:
    return _G().linalg.lu_solve(LU_data, LU_pivots, self)


def _permutation(pivots: Any, m: int) -> np.ndarray:
    """The permutation matrices P (A = P L U) of LAPACK's 1-based row interchanges, as a NumPy array."""
    piv = pivots.detach().cpu().numpy().astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), piv.shape[:-1] + (m,)).copy()
    for index in np.ndindex(*piv.shape[:-1]):
        row = perm[index]
        for j, p in enumerate(piv[index]):
            if not 0 <= p < m:
                raise RuntimeError(f"lu_unpack: pivots must be between 1 and {m}, got {p + 1}")
            row[j], row[p] = row[p], row[j]
    return np.ascontiguousarray(np.swapaxes(np.eye(m)[perm], -1, -2))  # row-major, as PyTorch's P


def lu_unpack(LU_data: Any, LU_pivots: Any, unpack_data: bool = True, unpack_pivots: bool = True) -> Any:
    """P, L, U of the packed LU factors (torch.linalg.lu_factor's); an unrequested part is empty."""
    G = _G()
    _need_matrix("lu_unpack", LU_data, "LU_data")
    if LU_pivots.dtype != G.int32:
        raise RuntimeError(f"lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. "
                           f"Note: this function is intended to be used with the output produced by "
                           f"torch.linalg.lu_factor, got {LU_pivots.dtype}")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,):
        raise RuntimeError(f"lu_unpack: LU_pivots must have shape {tuple(LU_data.shape[:-2]) + (k,)}, got "
                           f"{tuple(LU_pivots.shape)}")
    empty = G.empty([0], dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        eye = G.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        L = LU_data.narrow(-1, 0, k).tril(-1) + eye
        U = LU_data.narrow(-2, 0, k).triu()
    else:
        L = U = empty
    if unpack_pivots and LU_pivots.is_meta:  # the permutation's values come from the pivots' (Note [Meta tensors])
        P = G.empty(tuple(LU_pivots.shape[:-1]) + (m, m), dtype=LU_data.dtype, device="meta")
    elif unpack_pivots:
        P = G.tensor(_permutation(LU_pivots, m), dtype=LU_data.dtype, device=LU_data.device)
    else:
        P = empty
    return return_types.make("lu_unpack", ("P", "L", "U"))(P, L, U)


def orgqr(self: Any, input2: Any) -> Any:
    return _G().linalg.householder_product(self, input2)


def ormqr(self: Any, input2: Any, input3: Any, left: bool = True, transpose: bool = False) -> Any:
    """op(Q) C (C op(Q) when not left), Q = H_1 ... H_k the full square matrix of geqrf's reflectors."""
    G = _G()
    _need_matrix("ormqr", self, "input")
    _need_matrix("ormqr", input3, "other")
    mn, k = self.shape[-2], input2.shape[-1]
    side = -2 if left else -1
    want = input3.shape[side]
    if mn != want:
        raise RuntimeError(f"torch.ormqr: input.shape[-2] must be equal to other.shape[{side}], got {mn} and {want}")
    if k != min(want, self.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1]), "
                           f"got {k}, {want} and {self.shape[-1]}")
    batch = list(self.shape[:-2])
    reflectors = self.narrow(-1, 0, k)
    if mn > k:
        reflectors = G.cat([reflectors, G.zeros(batch + [mn, mn - k], dtype=self.dtype, device=self.device)], -1)
        tau = G.cat([input2, G.zeros(list(input2.shape[:-1]) + [mn - k], dtype=input2.dtype,
                                     device=input2.device)], -1)
    else:
        tau = input2
    Q = G.linalg.householder_product(reflectors, tau)
    if transpose:
        Q = _mT(Q)
    return Q.matmul(input3) if left else input3.matmul(Q)


def pinverse(self: Any, rcond: float = 1e-15) -> Any:
    G = _G()
    if self.dim() < 2 or self.dtype not in (G.float32, G.float64):
        raise RuntimeError(f"linalg.pinv: expected a tensor with 2 or more dimensions of float or double types, got "
                           f"{self.dim()} dimensions of {self.dtype}")
    return G.linalg.pinv(self, rtol=rcond)


# Padé [13/13] coefficients of exp and the 1-norm up to which it is accurate to double precision
# (Higham, "The scaling and squaring method for the matrix exponential revisited", 2005).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp(self: Any) -> Any:
    """exp(A) by scaling and squaring with the Padé [13/13] approximant, written in ops so that autograd
    differentiates it (twice, too). float32 and half-precision inputs compute in float64 and round once:
    the squaring phase amplifies rounding errors (PyTorch's float32 kernel, a Taylor polynomial of degree
    18, loses digits on the small entries of a large result; opgen's stay within an ulp or so of the
    float64 value)."""
    G = _G()
    _need_matrix("linalg.matrix_exp", self, square=True)
    n = self.shape[-1]
    if self.numel() == 0:
        return self.clone()
    A = self.to(G.float64) if self.dtype != G.float64 else self
    # the number of squarings follows the norm; a meta tensor has none, and any count gives its shapes
    norm = 0.0 if A.is_meta else float(A.detach().abs().sum(-2).amax().item())
    if not math.isfinite(norm):
        s = 0
    else:
        s = max(0, math.ceil(math.log2(norm / _THETA13))) if norm > _THETA13 else 0
    A = A / float(2 ** s) if s else A
    b = _PADE13
    eye = G.eye(n, dtype=A.dtype, device=A.device)
    A2 = A.matmul(A)
    A4 = A2.matmul(A2)
    A6 = A4.matmul(A2)
    U = A.matmul(A6.matmul(A6 * b[13] + A4 * b[11] + A2 * b[9]) + A6 * b[7] + A4 * b[5] + A2 * b[3] + eye * b[1])
    V = A6.matmul(A6 * b[12] + A4 * b[10] + A2 * b[8]) + A6 * b[6] + A4 * b[4] + A2 * b[2] + eye * b[0]
    R = G.linalg_solve(V - U, V + U)
    for _ in range(s):
        R = R.matmul(R)
    return R.to(self.dtype) if R.dtype != self.dtype else R


def geqrf(self: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's geqrf: R on and above the diagonal, the Householder vectors below it, and their scales."""
    a = self._data
    if a.ndim < 2:
        raise RuntimeError("geqrf: The input tensor A must have at least 2 dimensions.")
    if a.dtype.kind != "f":
        raise RuntimeError(f"geqrf: Expected a floating point tensor as input. Got {self.dtype}")
    xp = xp_of(a)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    out = xp.empty(a.shape, a.dtype)
    tau = xp.empty(a.shape[:-2] + (k,), a.dtype)
    for index in np.ndindex(*a.shape[:-2]):
        if k == 0:
            out[index] = a[index]
            continue
        h, t = xp.linalg.qr(a[index], mode="raw")  # h is LAPACK's array transposed
        out[index] = h.T
        tau[index] = t
    cls = return_types.make("geqrf", ("a", "tau"))
    return cls(wrap(out, a, self._dtype), wrap(tau, a, self._dtype))

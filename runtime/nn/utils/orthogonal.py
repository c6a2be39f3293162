"""`nn.utils.parametrizations.orthogonal`: a matrix kept orthogonal (or with orthonormal columns or rows), as
PyTorch's `_Orthogonal` with `use_trivialization=True`.

The parametrization stores an orthogonal `base` (the first value, made orthogonal by QR with R's diagonal
positive) and an unconstrained X, and computes Q = base @ map(X) on the tall orientation of the matrix:
- "matrix_exp": exp(A), A = L - L^T with L the lower triangle of X (padded to square); exp by scaling and
  squaring of a Taylor polynomial, so it is differentiable through matrix products;
- "cayley": (I - A/2)^-1 (I + A/2);
- "householder": the product of the reflectors I - tau v v^T whose vectors are X's columns below the diagonal
  (tau = 2 / (1 + |v|^2)), signed by X's diagonal.
Assigning a matrix replaces `base` by it (made orthogonal) and X by -I, so Q equals it. The default map is
matrix_exp for square matrices, householder otherwise. opgen supports 2-D weights here.
"""

from __future__ import annotations

import math

from runtime import opcall
from runtime.nn.module import Module
from runtime.tensor import Tensor

MAPS = ("matrix_exp", "cayley", "householder")


def _eye(n: int, like: Tensor) -> Tensor:
    return opcall.api.eye(n, dtype=like.dtype, device=like.device)


def matrix_exp(a: Tensor) -> Tensor:
    """exp(a) for a square matrix: a / 2^s has norm <= 1/2, its Taylor series to degree 18, squared s times."""
    G = opcall.api
    norm = float(G.linalg.matrix_norm(a.detach(), 1)) if a.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    x = a / (2.0**s)
    result = _eye(a.shape[-1], a)
    term = result
    for k in range(1, 19):
        term = G.matmul(term, x) / k
        result = result + term
    for _ in range(s):
        result = G.matmul(result, result)
    return result


def householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i = column i of `a` below the diagonal
    with a 1 on it (LAPACK's orgqr, PyTorch's linalg.householder_product), for an (n, k) matrix."""
    G = opcall.api
    n, k = a.shape
    q = _eye(n, a)
    for i in range(k):
        v = G.cat([G.zeros(i, dtype=a.dtype, device=a.device), G.ones(1, dtype=a.dtype, device=a.device),
                   a[i + 1:, i]]) if i < n else a[:, i]
        q = q - tau[i] * G.outer(G.mv(q, v), v)
    return q[:, :k]


def make_orthogonal(a: Tensor) -> Tensor:
    """The Q of a's QR decomposition whose R has a non-negative diagonal (unique for full-rank a)."""
    G = opcall.api
    q, r = G.linalg.qr(a)
    signs = G.where(G.diagonal(r) < 0, -G.ones_like(G.diagonal(r)), G.ones_like(G.diagonal(r)))
    return q * signs


def is_orthogonal(q: Tensor) -> bool:
    G = opcall.api
    n, k = q.shape
    eps = 10 * n * G.finfo(q.dtype).eps
    return bool(G.allclose(G.matmul(q.t(), q), _eye(k, q), atol=eps))


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str) -> None:
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        G = opcall.api
        n, k = x.shape
        transposed = n < k
        if transposed:
            x = x.t()
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                x = G.cat([x, G.zeros(n, n - k, dtype=x.dtype, device=x.device)], -1)
            a = x - x.t()
            if self.orthogonal_map == "matrix_exp":
                q = matrix_exp(a)
            else:
                eye = _eye(n, a)
                q = G.linalg.solve(eye - a * 0.5, eye + a * 0.5)
            if n != k:
                q = q[:, :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            q = householder_product(a, tau) * G.diagonal(x).int().unsqueeze(-2)
        if self.base is not None:
            q = G.matmul(self.base, q)
        return q.t() if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        G = opcall.api
        if tuple(q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{tuple(q.shape)}.")
        q_init = q
        n, k = q.shape
        if n < k:
            q = q.t()
            n, k = k, n
        if n == k:
            q = q.clone() if is_orthogonal(q) else make_orthogonal(q)
        else:
            extra = G.randn(n, n - k, dtype=q.dtype, device=q.device)
            q = make_orthogonal(G.cat([q, extra], -1))
        self.base = q.detach()
        neg_id = G.zeros_like(q_init)
        neg_id.diagonal().fill_(-1.0)
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    from runtime.nn.utils.parametrize import register_parametrization
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module._get_name()}' has no parameter or buffer with name '{name}'")
    if weight.dim() != 2:
        if weight.dim() < 2:
            raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions.")
        raise NotImplementedError("orthogonal: opgen supports 2-D weights (not batches of matrices)")
    if not use_trivialization:
        raise NotImplementedError("orthogonal(use_trivialization=False) is not supported by opgen")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    register_parametrization(module, name, _Orthogonal(weight, orthogonal_map), unsafe=True)
    return module



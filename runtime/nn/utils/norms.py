"""The arithmetic shared by the two forms of weight and spectral normalisation (parametrizations.py and the
older hook-based weight_norm.py / spectral_norm.py).

weight norm (Salimans and Kingma, 2016): w = g * v / ||v||, the norm taken over every dim but `dim`
(`norm_except_dim`; dim None or -1 means over all), so g has v's size along `dim` and 1 elsewhere.
spectral norm (Miyato et al., 2018): w = W / sigma(W), sigma the largest singular value of W reshaped to a
matrix with `dim` first, estimated by power iteration on the vectors u, v kept between calls.
"""

from __future__ import annotations

from typing import Any

import runtime.nn.functional as F
from runtime import opcall
from runtime.autograd.grad_mode import no_grad
from runtime.tensor import Tensor


def norm_except_dim(v: Tensor, pow: float = 2, dim: int | None = 0) -> Tensor:
    """The `pow`-norm of v over every dim but `dim`, shaped to broadcast against v."""
    G = opcall.api
    if dim is None or dim == -1:
        return G.linalg_vector_norm(v, pow)
    dim = dim % v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    if not others:
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    return G.linalg_vector_norm(v, pow, others, True)


def weight_norm_value(v: Tensor, g: Tensor, dim: int | None) -> Tensor:
    return v * (g / norm_except_dim(v, 2, dim))


def weight_to_matrix(weight: Tensor, dim: int) -> Tensor:
    """`weight` as a matrix with `dim` first and the other dims flattened."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.reshape(weight.shape[0], -1)


def power_iteration(weight_mat: Tensor, u: Tensor, v: Tensor, iterations: int, eps: float,
                    u_first: bool = True) -> None:
    """Refine u, v (in place) towards the top singular vectors of weight_mat: u = normalize(W v), then
    v = normalize(W^T u) (`u_first`, the parametrization's order), or the other way round (the hook's)."""
    G = opcall.api
    with no_grad():
        for _ in range(iterations):
            if u_first:
                u.copy_(F.normalize(G.mv(weight_mat, v), dim=0, eps=eps))
            v.copy_(F.normalize(G.mv(weight_mat.t(), u), dim=0, eps=eps))
            if not u_first:
                u.copy_(F.normalize(G.mv(weight_mat, v), dim=0, eps=eps))


def sigma(weight_mat: Tensor, u: Tensor, v: Tensor) -> Tensor:
    """u^T W v: the estimate of W's largest singular value (differentiable in W)."""
    G = opcall.api
    return G.dot(u, G.mv(weight_mat, v))


def random_unit(n: int, like: Tensor, eps: float) -> Tensor:
    G = opcall.api
    return F.normalize(G.empty(n, dtype=like.dtype, device=like.device).normal_(0, 1), dim=0, eps=eps)


def default_spectral_dim(module: Any) -> int:
    """1 for transposed convolutions (their weight is (in, out, ...)), else 0, as PyTorch."""
    return 1 if type(module).__name__.startswith("ConvTranspose") else 0

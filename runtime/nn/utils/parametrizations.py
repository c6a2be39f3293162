"""`nn.utils.parametrizations`: weight_norm and spectral_norm as parametrizations (torch's current forms).

`weight_norm(module, "weight", dim=0)` keeps `parametrizations.weight.original0` (g) and `original1` (v)
and computes weight = g * v / ||v||; `spectral_norm(module, "weight")` keeps the weight as `original` and
the power-iteration vectors as the buffers `_u`, `_v` of the parametrization, and computes
weight = W / sigma(W), doing `n_power_iterations` steps at each access in training mode (15 at
registration). See runtime/nn/utils/norms.py for the arithmetic.
"""

from __future__ import annotations

import runtime.nn.utils.norms as norms
from runtime.nn.module import Module
from runtime.nn.utils.orthogonal import orthogonal
from runtime.nn.utils.parametrize import register_parametrization
from runtime.tensor import Tensor


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return norms.weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norms.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = norms.weight_to_matrix(weight.detach(), self.dim)
            h, w = weight_mat.shape
            self.register_buffer("_u", norms.random_unit(h, weight, eps))
            self.register_buffer("_v", norms.random_unit(w, weight, eps))
            norms.power_iteration(weight_mat, self._u, self._v, 15, eps)

    def forward(self, weight: Tensor) -> Tensor:
        import runtime.nn.functional as F
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = norms.weight_to_matrix(weight, self.dim)
        if self.training:
            norms.power_iteration(weight_mat.detach(), self._u, self._v, self.n_power_iterations, self.eps)
        return weight / norms.sigma(weight_mat, self._u.clone(), self._v.clone())

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module._get_name()}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = norms.default_spectral_dim(module)
    register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

"""The older, hook-based `nn.utils.spectral_norm` / `remove_spectral_norm` (torch's): `weight` becomes the
parameter `weight_orig` plus buffers `weight_u`, `weight_v`, and a forward pre-hook sets
`module.weight = weight_orig / sigma` before each call, doing the power iteration in training mode
(norms.py)."""

from __future__ import annotations

from typing import Any

import runtime.nn.utils.norms as norms
from runtime.autograd.grad_mode import no_grad
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter


class SpectralNorm:
    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Any:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        weight_mat = norms.weight_to_matrix(weight, self.dim)
        if do_power_iteration:
            norms.power_iteration(weight_mat.detach(), u, v, self.n_power_iterations, self.eps, u_first=False)
            u, v = u.clone(), v.clone()
        return weight / norms.sigma(weight_mat, u, v)

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks:
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            weight_mat = norms.weight_to_matrix(weight, dim)
            h, w = weight_mat.shape
            u, v = norms.random_unit(h, weight, eps), norms.random_unit(w, weight, eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        object.__setattr__(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        object.__delattr__(module, self.name)
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        del module._parameters[self.name + "_orig"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        object.__setattr__(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    if dim is None:
        dim = norms.default_spectral_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    for i, hook in enumerate(module._forward_pre_hooks):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[i]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module._get_name()}")

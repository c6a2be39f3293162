"""`G.nn.utils`: gradient clipping and flattening parameters to one vector, as torch.nn.utils."""

from __future__ import annotations

import math
from collections.abc import Iterable

from runtime import opcall
from runtime.autograd.grad_mode import no_grad
from runtime.tensor import Tensor

_Params = Tensor | Iterable[Tensor]


def _G():
    return opcall.api


def _tensors(parameters: _Params) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters: _Params, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their joint `norm_type`-norm is at most `max_norm`.

    Returns the total norm before clipping (a 0-dim tensor), as PyTorch does.
    """
    G = _G()
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return G.tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        norms = G.stack([G.linalg_vector_norm(g.detach(), norm_type).to(grads[0].device) for g in grads])
        total = G.linalg_vector_norm(norms, norm_type)
        value = float(total)
        if error_if_nonfinite and not math.isfinite(value):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                               "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                               "by the non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = float(max_norm) / (value + 1e-6)
        if coef < 1.0:
            for g in grads:
                g.mul_(coef)
    return total


def clip_grad_value_(parameters: _Params, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    clamp = _G().clamp
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.copy_(clamp(p.grad, -clip_value, clip_value))


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one 1-D tensor (on the first one's device)."""
    G = _G()
    params = _tensors(parameters)
    if not params:
        raise RuntimeError("parameters_to_vector: expected a non-empty iterable of Tensors")
    device = params[0].device
    for p in params:
        if p.device != device:
            raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return G.cat([G.reshape(p, (-1,)) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D `vec` into the parameters (in place, untracked)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = _tensors(parameters)
    total = sum(p.numel() for p in params)
    if vec.dim() != 1 or vec.numel() != total:
        raise RuntimeError(f"vector_to_parameters: expected a 1-D vector of {total} elements, got shape "
                           f"{list(vec.shape)}")
    offset = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[offset:offset + n].view(p.shape))
            offset += n

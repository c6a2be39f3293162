"""`nn.utils.clip_grad`: gradient clipping by total norm or by value (torch.nn.utils's)."""

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


def get_total_norm(tensors: _Params, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The `norm_type`-norm of all the tensors together (the norm of their norms); 0 for none."""
    G = _G()
    ts = [t for t in _tensors(tensors) if t is not None]
    if not ts:
        return G.tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        norms = G.stack([G.linalg_vector_norm(t.detach(), norm_type).to(ts[0].device) for t in ts])
        total = G.linalg_vector_norm(norms, norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                           "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: _Params, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients by max_norm / (total_norm + 1e-6) where that is below 1."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    if total_norm.is_meta:  # no value to compare: the scaling as ops, min(coef, 1) (Note [Meta tensors])
        with no_grad():
            coef_t = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
            for g in grads:
                g.mul_(coef_t.to(g.device))
        return
    coef = float(max_norm) / (float(total_norm) + 1e-6)
    if coef < 1.0:
        with no_grad():
            for g in grads:
                g.mul_(coef)


def clip_grad_norm_(parameters: _Params, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their joint `norm_type`-norm is at most `max_norm`.

    Returns the total norm before clipping (a 0-dim tensor), as PyTorch does.
    """
    params = _tensors(parameters)
    total = get_total_norm([p.grad for p in params if p.grad is not None], norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_norm(parameters: _Params, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of clip_grad_norm_."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _Params, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    clamp = _G().clamp
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.copy_(clamp(p.grad, -clip_value, clip_value))

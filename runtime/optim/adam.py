"""`G.optim.Adam` and `G.optim.AdamW` (Kingma and Ba, 2015; Loshchilov and Hutter, 2019).

The update is PyTorch's (torch/optim/adam.py, amsgrad=False), for each parameter p with gradient g at
step t (counting from 1):
    g = g + weight_decay * p               (Adam; AdamW instead scales p by 1 - lr * weight_decay)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
With amsgrad, v_max = max(v_max, v) replaces v in the denominator.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime import opcall
from runtime.optim.optimizer import Optimizer, ParamsT, advance_step, bump_versions, host_arrays, new_step
from runtime.tensor import Tensor


class Adam(Optimizer):
    decoupled_weight_decay = False

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": maximize})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay = group["weight_decay"]
        for p in params:
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = new_step()
                state["exp_avg"] = G.zeros_like(p)
                state["exp_avg_sq"] = G.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = G.zeros_like(p)
        arrays = host_arrays(params)
        if arrays is not None and self._host_update(group, params, arrays):
            return
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = self.state[p]
            step = advance_step(state)
            if weight_decay != 0:
                if self.decoupled_weight_decay:
                    p.mul_(1 - lr * weight_decay)
                else:
                    g = g.add(p, alpha=weight_decay)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.mul_(beta1).add_(g, alpha=1 - beta1)
            exp_avg_sq.mul_(beta2).add_(g.mul(g), alpha=1 - beta2)
            second = exp_avg_sq
            if group["amsgrad"]:
                second = state["max_exp_avg_sq"]
                G.maximum(second, exp_avg_sq, out=second)
            denom = second.sqrt().div(math.sqrt(1 - beta2**step)).add(eps)
            p.add_(exp_avg.div(denom), alpha=-lr / (1 - beta1**step))

    def _host_update(self, group: dict[str, Any], params: list[Tensor],
                     arrays: list[tuple[np.ndarray, np.ndarray]]) -> bool:
        """The update of `_update` on the arrays (Note [Optimizer steps on host arrays] in optimizer.py);
        False, having changed nothing, where a state tensor is not a plain array like its parameter."""
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        if not all(isinstance(v, int | float) for v in (lr, beta1, beta2, eps, weight_decay)):
            return False
        names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if amsgrad else ("exp_avg", "exp_avg_sq")
        for p, (a, _) in zip(params, arrays, strict=True):
            for name in names:
                b = self.state[p][name]._data
                if b.__class__ is not np.ndarray or b.dtype is not a.dtype or b.shape != a.shape or b.base is not None:
                    return False
        touched: list[Tensor] = list(params)
        for p, (a, g) in zip(params, arrays, strict=True):
            state = self.state[p]
            step = advance_step(state)
            if group["maximize"]:
                g = -g
            if weight_decay != 0:
                if self.decoupled_weight_decay:
                    np.multiply(a, 1 - lr * weight_decay, out=a)
                else:
                    g = g + weight_decay * a
            m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
            np.multiply(m, beta1, out=m)
            np.add(m, (1 - beta1) * g, out=m)
            np.multiply(v, beta2, out=v)
            np.add(v, (1 - beta2) * (g * g), out=v)
            second = v
            if amsgrad:
                second = state["max_exp_avg_sq"]._data
                np.maximum(second, v, out=second)
            denom = np.sqrt(second) / math.sqrt(1 - beta2**step) + eps
            np.add(a, (-lr / (1 - beta1**step)) * (m / denom), out=a)
            touched.extend(state[name] for name in names)
        bump_versions(touched)
        return True


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.01, as in PyTorch)."""

    decoupled_weight_decay = True

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)

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

from runtime import opcall
from runtime.compile.fused_update import register_fused_update
from runtime.optim.arith import arith_for
from runtime.optim.optimizer import Optimizer, ParamsT, advance_step, impl_flags, new_step
from runtime.tensor import Tensor


class Adam(Optimizer):
    """The Adam optimizer (moment estimates with bias correction; `amsgrad`, L2 `weight_decay`)."""
    decoupled_weight_decay = False

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        if decoupled_weight_decay:
            self.decoupled_weight_decay = True
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
                                  "amsgrad": amsgrad, "maximize": maximize,
                                  **impl_flags(foreach=foreach, capturable=capturable,
                                               differentiable=differentiable, fused=fused),
                                  "decoupled_weight_decay": self.decoupled_weight_decay})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        for p in params:
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = new_step()
                state["exp_avg"] = G.zeros_like(p)
                state["exp_avg_sq"] = G.zeros_like(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = G.zeros_like(p)
        arith = arith_for(params, self.state, ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"),
                        (lr, beta1, beta2, eps, weight_decay))
        for p in params:
            g = arith.value(p.grad)
            if group["maximize"]:
                g = -g
            state = self.state[p]
            step = advance_step(state)
            if weight_decay != 0:
                if group.get("decoupled_weight_decay", self.decoupled_weight_decay):
                    arith.mul_(p, 1 - lr * weight_decay)
                else:
                    g = arith.add(g, arith.value(p), weight_decay)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            arith.mul_(exp_avg, beta1)
            arith.add_(exp_avg, g, 1 - beta1)
            arith.mul_(exp_avg_sq, beta2)
            arith.add_(exp_avg_sq, g * g, 1 - beta2)
            second = exp_avg_sq
            if amsgrad:
                second = state["max_exp_avg_sq"]
                arith.take_max_(second, arith.value(exp_avg_sq))
            denom = arith.sqrt(arith.value(second)) / math.sqrt(1 - beta2**step) + eps
            arith.add_(p, arith.value(exp_avg) / denom, -lr / (1 - beta1**step))


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.01, as in PyTorch)."""

    decoupled_weight_decay = True

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, foreach=foreach,
                         capturable=capturable, differentiable=differentiable, fused=fused)


register_fused_update(Adam, "adam")  # compiled training steps run its rule fused (Note [Fused optimizer updates])

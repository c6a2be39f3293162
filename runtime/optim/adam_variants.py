"""Adamax, NAdam and RAdam: Adam's moment estimates with other step rules (PyTorch's updates).

For each parameter p with gradient g at step t (counting from 1), after the weight decay (added to g, or with
`decoupled_weight_decay` p scaled by 1 - lr * weight_decay, AdamW's way):
Adamax (Kingma and Ba, 2015, section 7):
    m = lerp(m, g, 1 - beta1);  u = max(beta2 * u, |g| + eps);  p = p - lr / (1 - beta1^t) * m / u
NAdam (Dozat, 2016), with mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay)) and mu_prod = mu_1 ... mu_t:
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  d = sqrt(v / (1 - beta2^t)) + eps
    p = p - lr * (1 - mu_t) / (1 - mu_prod) * g / d - lr * mu_{t+1} / (1 - mu_prod * mu_{t+1}) * m / d
RAdam (Liu et al., 2020), with rho_inf = 2 / (1 - beta2) - 1, rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t):
    m, v as NAdam;  m_hat = m / (1 - beta1^t)
    rho_t > 5:  p = p - lr * m_hat * r_t * sqrt(1 - beta2^t) / (sqrt(v) + eps), r_t the variance rectification
    else:       p = p - lr * m_hat
"""

from __future__ import annotations

import math
from typing import Any

from runtime import opcall
from runtime.optim.optimizer import Optimizer, ParamsT, advance_step, check_non_negative, impl_flags, new_step
from runtime.tensor import Tensor


def _check_adam_args(lr: float, betas: tuple[float, float], eps: float, weight_decay: float) -> None:
    check_non_negative("learning rate", lr)
    check_non_negative("epsilon value", eps)
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    check_non_negative("weight_decay value", weight_decay)


def _moments(optimizer: Optimizer, p: Tensor, second: str) -> dict[str, Any]:
    G = opcall.api
    state = optimizer.state.setdefault(p, {})
    if not state:
        state["step"] = new_step()
        state["exp_avg"] = G.zeros_like(p)
        state[second] = G.zeros_like(p)
    return state


def _decay(group: dict[str, Any], p: Tensor, g: Tensor) -> Tensor:
    weight_decay = group["weight_decay"]
    if weight_decay == 0:
        return g
    if group.get("decoupled_weight_decay", False):
        p.mul_(1 - group["lr"] * weight_decay)
        return g
    return g.add(p, alpha=weight_decay)


class Adamax(Optimizer):
    """Adamax: Adam with an infinity-norm second moment u = max(beta2 * u, |g| + eps)."""
    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize,
                                  **impl_flags(foreach=foreach, differentiable=differentiable, capturable=capturable)})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = _moments(self, p, "exp_inf")
            step = advance_step(state)
            g = _decay(group, p, g)
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            exp_avg.lerp_(g, 1 - beta1)
            G.maximum(exp_inf.mul_(beta2), g.abs().add_(eps), out=exp_inf)
            p.addcdiv_(exp_avg, exp_inf, value=-lr / (1 - beta1**step))


class NAdam(Optimizer):
    """NAdam: Adam with Nesterov momentum, the momentum schedule set by momentum_decay (decoupled_weight_decay:
    AdamW-style)."""
    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        check_non_negative("momentum_decay value", momentum_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize,
                                  **impl_flags(foreach=foreach, capturable=capturable, differentiable=differentiable)})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        momentum_decay = group["momentum_decay"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = _moments(self, p, "exp_avg_sq")
            if "mu_product" not in state:
                state["mu_product"] = G.tensor(1.0)
            step = advance_step(state)
            g = _decay(group, p, g)
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
            mu_product = state["mu_product"]
            mu_product.mul_(mu)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(g, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            denom = exp_avg_sq.div(1 - beta2**step).sqrt().add_(eps)
            prod = float(mu_product.item())
            p.addcdiv_(g, denom, value=-lr * (1.0 - mu) / (1.0 - prod))
            p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - prod * mu_next))


class RAdam(Optimizer):
    """RAdam: Adam with the variance rectification once rho_t > 5, momentum SGD steps before (decoupled_weight_decay:
    AdamW-style)."""
    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize, "decoupled_weight_decay": decoupled_weight_decay,
                                  **impl_flags(foreach=foreach, capturable=capturable, differentiable=differentiable)})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = _moments(self, p, "exp_avg_sq")
            step = advance_step(state)
            g = _decay(group, p, g)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(g, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            corrected = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
            if rho_t > 5.0:
                rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                adaptive = math.sqrt(bias_correction2) / exp_avg_sq.sqrt().add_(eps)
                p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
            else:
                p.add_(corrected * lr, alpha=-1.0)

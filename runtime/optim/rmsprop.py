"""`G.optim.RMSprop` and `G.optim.Adagrad`: the adaptive per-element step sizes (torch/optim semantics).

RMSprop (Hinton's lecture 6e, as PyTorch), for each parameter p with gradient g:
    g = g + weight_decay * p
    v = alpha * v + (1 - alpha) * g * g
    centered: m = alpha * m + (1 - alpha) * g;  denom = sqrt(v - m * m) + eps   (else sqrt(v) + eps)
    momentum > 0: buf = momentum * buf + g / denom;  p = p - lr * buf          (else p = p - lr * g / denom)
Adagrad (Duchi et al., 2011), at step t counting from 1:
    g = g + weight_decay * p;  s = s + g * g;  p = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)
"""

from __future__ import annotations

from typing import Any

from runtime import opcall
from runtime.optim.optimizer import Optimizer, ParamsT, advance_step, impl_flags, new_step
from runtime.tensor import Tensor


def _check(name: str, value: float) -> None:
    if value < 0.0:
        raise ValueError(f"Invalid {name}: {value}")


class RMSprop(Optimizer):
    """The RMSprop optimizer: steps scaled by a running average of squared gradients."""
    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        _check("alpha value", alpha)
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
                                  "momentum": momentum, "centered": centered, "maximize": maximize,
                                  **impl_flags(foreach=foreach, capturable=capturable,
                                               differentiable=differentiable)})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            if group["weight_decay"] != 0:
                g = g.add(p, alpha=group["weight_decay"])
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = new_step()
                state["square_avg"] = G.zeros_like(p)
                if momentum > 0:
                    state["momentum_buffer"] = G.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = G.zeros_like(p)
            advance_step(state)
            square_avg = state["square_avg"].mul_(alpha).add_(g.mul(g), alpha=1 - alpha)
            if group["centered"]:
                grad_avg = state["grad_avg"].mul_(alpha).add_(g, alpha=1 - alpha)
                denom = square_avg.sub(grad_avg.mul(grad_avg)).sqrt().add(eps)
            else:
                denom = square_avg.sqrt().add(eps)
            if momentum > 0:
                buf = state["momentum_buffer"].mul_(momentum).add_(g.div(denom))
                p.add_(buf, alpha=-lr)
            else:
                p.add_(g.div(denom), alpha=-lr)


class Adagrad(Optimizer):
    """The Adagrad optimizer: steps scaled by the accumulated sum of squared gradients."""
    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        _check("learning rate", lr)
        _check("lr_decay value", lr_decay)
        _check("weight_decay value", weight_decay)
        _check("initial_accumulator_value value", initial_accumulator_value)
        _check("epsilon value", eps)
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value, "maximize": maximize,
                                  **impl_flags(foreach=foreach, differentiable=differentiable, fused=fused)})
        G = opcall.api
        for group in self.param_groups:  # PyTorch fills the accumulators at construction
            for p in group["params"]:
                self.state[p] = {"step": new_step(),
                                 "sum": G.full_like(p, group["initial_accumulator_value"])}

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = self.state.get(p) or {"step": new_step(),
                                          "sum": G.full_like(p, group["initial_accumulator_value"])}
            self.state[p] = state
            step = advance_step(state)
            if group["weight_decay"] != 0:
                g = g.add(p, alpha=group["weight_decay"])
            clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
            state["sum"].add_(g.mul(g))
            p.add_(g.div(state["sum"].sqrt().add(group["eps"])), alpha=-clr)

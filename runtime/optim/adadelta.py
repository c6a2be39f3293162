"""`G.optim.Adadelta` (Zeiler, 2012), PyTorch's update, for each parameter p with gradient g:
    g = g + weight_decay * p
    v = rho * v + (1 - rho) * g * g
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * delta * delta
    p = p - lr * delta
State: "step", "square_avg" (v), "acc_delta" (u).
"""

from __future__ import annotations

from typing import Any

from runtime import opcall
from runtime.optim.optimizer import Optimizer, ParamsT, advance_step, check_non_negative, impl_flags, new_step
from runtime.tensor import Tensor


class Adadelta(Optimizer):
    """Adadelta: steps lr * sqrt(avg of squared updates + eps) / sqrt(avg of squared grads + eps) * grad, rho the
    averages' decay."""
    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_non_negative("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_non_negative("epsilon value", eps)
        check_non_negative("weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize,
                                  **impl_flags(foreach=foreach, capturable=capturable, differentiable=differentiable)})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr, rho, eps, weight_decay = group["lr"], group["rho"], group["eps"], group["weight_decay"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = new_step()
                state["square_avg"] = G.zeros_like(p)
                state["acc_delta"] = G.zeros_like(p)
            advance_step(state)
            if weight_decay != 0:
                g = g.add(p, alpha=weight_decay)
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).addcmul_(g, g, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_().div_(std).mul_(g)
            acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
            p.add_(delta, alpha=-lr)

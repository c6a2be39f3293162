"""`G.optim.ASGD`: averaged stochastic gradient descent (Polyak and Juditsky, 1992), PyTorch's update.

For each parameter p with gradient g at step t (counting from 1), with eta and mu from the previous step
(eta = lr and mu = 1 at first):
    g = g + weight_decay * p
    p = p * (1 - lambd * eta) - eta * g
    ax = p if mu == 1 else ax + mu * (p - ax)           (the running average the method is named for)
    eta = lr / (1 + lambd * lr * t)^alpha;  mu = 1 / max(1, t - t0)
State: "step", "eta", "mu" (0-dim float32 tensors, as PyTorch), "ax".
"""

from __future__ import annotations

from typing import Any

from runtime import opcall
from runtime.optim.optimizer import Optimizer, ParamsT, advance_step, check_non_negative, impl_flags, new_step
from runtime.tensor import Tensor


class ASGD(Optimizer):
    """Averaged SGD: SGD steps with a rate decaying as lr / (1 + lambd * lr * t) ** alpha and a running average `ax`
    of the parameters, begun after t0 steps."""
    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0.0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_non_negative("learning rate", lr)
        check_non_negative("weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                                  "maximize": maximize,
                                  **impl_flags(foreach=foreach, differentiable=differentiable, capturable=capturable)})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = new_step()
                state["eta"] = G.tensor(float(lr))
                state["mu"] = G.tensor(1.0)
                state["ax"] = G.zeros_like(p)
            step = advance_step(state)
            if group["weight_decay"] != 0:
                g = g.add(p, alpha=group["weight_decay"])
            eta, mu, ax = state["eta"], state["mu"], state["ax"]
            eta_value = float(eta.item())
            p.mul_(1 - lambd * eta_value)
            p.add_(g, alpha=-eta_value)
            if float(mu.item()) != 1:
                ax.add_(p.sub(ax).mul_(mu))
            else:
                ax.copy_(p)
            eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
            mu.fill_(1 / max(1, step - t0))

"""`G.optim.SGD`: stochastic gradient descent with momentum, dampening, Nesterov and weight decay.

The update is PyTorch's (torch/optim/sgd.py), for each parameter p with gradient g:
    g = g + weight_decay * p
    buf = g                                    (first step)
    buf = momentum * buf + (1 - dampening) * g (later steps)
    g = g + momentum * buf if nesterov else buf
    p = p - lr * g
"""

from __future__ import annotations

from typing import Any

from runtime.compile.fused_update import register_fused_update
from runtime.optim.arith import arith_for
from runtime.optim.optimizer import Optimizer, ParamsT, impl_flags
from runtime.tensor import Tensor


class SGD(Optimizer):
    """Stochastic gradient descent p -= lr * g, with optional momentum (dampening, nesterov) and weight decay."""
    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                                  **impl_flags(foreach=foreach, differentiable=differentiable, fused=fused)})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        arith = arith_for(params, self.state, ("momentum_buffer",), (lr, momentum, dampening, weight_decay))
        for p in params:
            g = arith.value(p.grad)
            if group["maximize"]:
                g = -g
            if weight_decay != 0:
                g = arith.add(g, arith.value(p), weight_decay)
            if momentum != 0:
                state = self.state.setdefault(p, {})
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = arith.copy(g, p)
                else:
                    arith.mul_(buf, momentum)
                    arith.add_(buf, g, 1 - dampening)
                b = arith.value(buf)
                g = arith.add(g, b, momentum) if nesterov else b
            arith.add_(p, g, -lr)


register_fused_update(SGD, "sgd")  # compiled training steps run its rule fused (Note [Fused optimizer updates])

"""`G.optim.Rprop`: resilient backpropagation (Riedmiller and Braun, 1993), PyTorch's update.

Each element keeps its own step size s (lr at first). With the product of the gradient and the previous one:
positive, s = min(s * etaplus, step_size_max); negative, s = max(s * etaminus, step_size_min) and the gradient
is taken as 0 for this step (no move, and the next step sees no sign change); zero, s unchanged. Then
p = p - sign(g) * s, and g is remembered.
State: "step", "prev", "step_size".
"""

from __future__ import annotations

from typing import Any

from runtime import opcall
from runtime.optim.optimizer import Optimizer, ParamsT, advance_step, check_non_negative, impl_flags, new_step
from runtime.tensor import Tensor


class Rprop(Optimizer):
    """Rprop: a step size per element, grown by etas[1] while the gradient's sign holds and shrunk by etas[0] when it
    flips (within step_sizes); steps by the sign only."""
    def __init__(self, params: ParamsT, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        check_non_negative("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, {"lr": lr, "etas": tuple(etas), "step_sizes": tuple(step_sizes),
                                  "maximize": maximize,
                                  **impl_flags(foreach=foreach, capturable=capturable, differentiable=differentiable)})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = new_step()
                state["prev"] = G.zeros_like(p)
                state["step_size"] = G.full_like(g, group["lr"])
            advance_step(state)
            prev, step_size = state["prev"], state["step_size"]
            sign = g.mul(prev).sign()
            factor = G.where(sign > 0, G.full_like(step_size, etaplus),
                             G.where(sign < 0, G.full_like(step_size, etaminus), G.ones_like(step_size)))
            step_size.mul_(factor).clamp_(step_size_min, step_size_max)
            g = G.where(sign < 0, G.zeros_like(g), g)
            p.addcmul_(g.sign(), step_size, value=-1)
            prev.copy_(g)

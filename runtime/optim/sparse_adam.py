"""`G.optim.SparseAdam`: Adam that moves only the entries a gradient touches (PyTorch's update, lazily).

opgen has no sparse tensors, so a gradient is dense and "touched" means nonzero: where g != 0 the moments and
the parameter update as Adam's (no weight decay, bias-corrected step size lr * sqrt(1 - beta2^t) /
(1 - beta1^t)); elsewhere nothing changes. This is what PyTorch computes for a sparse gradient whose
stored entries are the nonzero ones (an embedding's gradient with `sparse=True`), so a program written
for SparseAdam trains the same. The step counter counts every step(), as PyTorch's.
State: "step", "exp_avg", "exp_avg_sq".
"""

from __future__ import annotations

import math
from typing import Any

from runtime import opcall
from runtime.optim.optimizer import Optimizer, ParamsT, advance_step, check_non_negative
from runtime.tensor import Tensor


class SparseAdam(Optimizer):
    """Adam that moves the moments and the parameter only where the gradient is nonzero."""
    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        check_non_negative("learning rate", lr)
        if not eps > 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "maximize": maximize})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["exp_avg"] = G.zeros_like(p)
                state["exp_avg_sq"] = G.zeros_like(p)
            step = advance_step(state)
            touched = g != 0
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            # the moments move only where touched: m += (g - m) * (1 - beta1) there
            avg_update = G.where(touched, (g - exp_avg) * (1 - beta1), G.zeros_like(g))
            sq_update = G.where(touched, (g * g - exp_avg_sq) * (1 - beta2), G.zeros_like(g))
            exp_avg.add_(avg_update)
            exp_avg_sq.add_(sq_update)
            step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
            numer = exp_avg
            denom = exp_avg_sq.sqrt().add_(eps)
            p.add_(G.where(touched, numer / denom, G.zeros_like(g)), alpha=-step_size)

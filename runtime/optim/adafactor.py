"""`G.optim.Adafactor` (Shazeer and Stern, 2018), as PyTorch's: factored second moments for matrices.

For each parameter p with gradient g at step t (counting from 1):
    beta2_t = t^beta2_decay;  rho_t = min(lr, 1 / sqrt(t));  alpha = max(eps2, RMS(p)) * rho_t
    p = p * (1 - lr * weight_decay)
    dim > 1:  R = lerp(R, mean(g^2 over the last dim), beta2_t);  C = lerp(C, mean(g^2 over dim -2), beta2_t)
              V = R @ C / max(mean(R over dim -2), eps1)       (the rank-1 estimate of E[g^2])
    else:     V = lerp(V, g^2, beta2_t)
    u = g / sqrt(max(V, eps1^2));  p = p - alpha / max(1, RMS(u) / d) * u
eps1 None means the dtype's machine epsilon. State: "step", and "row_var"/"col_var" or "variance".
"""

from __future__ import annotations

import math
from typing import Any

from runtime import opcall
from runtime.optim.optimizer import Optimizer, ParamsT, advance_step, check_non_negative, impl_flags, new_step
from runtime.tensor import Tensor


class Adafactor(Optimizer):
    """Adafactor: second moment factored into row and column averages for 2+-dim parameters, relative step size
    min(lr, 1 / sqrt(t)) scaled by the parameter's RMS, updates clipped by d."""
    def __init__(self, params: ParamsT, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        check_non_negative("learning rate", lr)
        if not beta2_decay <= 0.0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not eps[0] >= 0.0:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        check_non_negative("epsilon2 value", eps[1])
        if not d >= 1.0:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        check_non_negative("weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": tuple(eps), "d": d,
                                  "weight_decay": weight_decay, "maximize": maximize, **impl_flags(foreach=foreach)})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr, beta2_decay, (eps1, eps2), d = group["lr"], group["beta2_decay"], group["eps"], group["d"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = new_step()
                if g.dim() > 1:
                    state["row_var"] = G.zeros(*g.shape[:-1], 1, dtype=g.dtype, device=g.device)
                    state["col_var"] = G.zeros(*g.shape[:-2], 1, g.shape[-1], dtype=g.dtype, device=g.device)
                else:
                    state["variance"] = G.zeros_like(g)
            step = advance_step(state)
            e1 = G.finfo(p.dtype).eps if eps1 is None else eps1
            one_minus_beta2_t = step**beta2_decay
            rho_t = min(lr, 1 / math.sqrt(step))
            alpha = max(eps2, float(p.norm(2).item()) / math.sqrt(p.numel())) * rho_t
            if group["weight_decay"] != 0:
                p.mul_(1 - lr * group["weight_decay"])
            if g.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_var.lerp_(g.norm(dim=-1, keepdim=True).square_().div_(g.shape[-1]), one_minus_beta2_t)
                col_var.lerp_(g.norm(dim=-2, keepdim=True).square_().div_(g.shape[-2]), one_minus_beta2_t)
                var_estimate = G.matmul(row_var, col_var)
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=e1))
            else:
                variance = state["variance"]
                variance.lerp_(g * g, one_minus_beta2_t)
                var_estimate = variance.clone()
            update = var_estimate.clamp_(min=e1 * e1).rsqrt_().mul_(g)
            denom = max(1.0, float(update.norm(2).item()) / (math.sqrt(update.numel()) * d))
            p.add_(update, alpha=-alpha / denom)

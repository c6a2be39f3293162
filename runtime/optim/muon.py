"""`G.optim.Muon`: momentum orthogonalized by Newton-Schulz, for 2-D parameters (PyTorch 2.13's algorithm).

For each parameter p with gradient g (PyTorch's torch/optim/_muon.py):
    buf = lerp(buf, g, 1 - momentum)                 (buf starts at zero)
    u = lerp(g, buf, momentum) if nesterov else buf
    O = NS(u): X = u^T if u is tall; X /= max(||X||, eps); ns_steps times
        A = X X^T;  B = b A + c A A;  X = a X + B X;  O = X (transposed back)
    p = p * (1 - lr * weight_decay) - lr' * O,  lr' = lr * sqrt(max(1, rows/cols)) ("original") or
        lr * 0.2 * sqrt(max(rows, cols)) ("match_rms_adamw")

Note [Muon's bfloat16 iteration]
PyTorch runs the Newton-Schulz iteration in bfloat16. Where the parameter's device has bfloat16 (CUDA),
opgen does too; opgen's CPU backend has no bfloat16 (NumPy has none), so there each op of the iteration is
computed in float32 and its result rounded to bfloat16 (round to nearest even), which is what a bfloat16 op
does with a float32 accumulator. The update is then as PyTorch's to bfloat16 rounding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime import opcall
from runtime.optim.optimizer import Optimizer, ParamsT
from runtime.tensor import Tensor

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _round_bfloat16(t: Tensor) -> Tensor:
    """Float32 values rounded to the nearest bfloat16 (ties to even), kept as float32."""
    G = opcall.api
    bits = np.ascontiguousarray(t.detach().cpu().numpy(), dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000))
    rounded = np.where(np.isnan(bits.view(np.float32)), bits, rounded)
    return G.from_numpy(rounded.view(np.float32).copy()).to(t.device)


def zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int,
                               eps: float) -> Tensor:
    """The quintic Newton-Schulz orthogonalisation of a 2-D `grad` in bfloat16 (Note [Muon's bfloat16
    iteration]); returned in bfloat16 where the device has it, else as float32 holding bfloat16 values."""
    G = opcall.api
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    if grad.device.type == "cuda":
        x = grad.to(G.bfloat16)

        def rnd(t: Tensor) -> Tensor:
            return t
    else:
        rnd = _round_bfloat16
        x = rnd(grad.to(G.float32))
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    x = rnd(x / rnd(x.norm().clamp(min=eps)))
    for _ in range(ns_steps):
        gram = rnd(x @ x.T)
        update = rnd(G.addmm(gram, gram, gram, beta=b, alpha=c))
        x = rnd(G.addmm(x, update, x, beta=a))
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: Any) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """Muon for 2-D parameters (module docstring); other parameters belong to another optimizer."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                                  "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                                  "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn})
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{tuple(p.shape)}")

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        G = opcall.api
        lr = float(group["lr"])
        momentum, wd = group["momentum"], group["weight_decay"]
        for p in params:
            g = p.grad
            if g.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if g.dim() != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            state = self.state.setdefault(p, {})
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = G.zeros_like(g)
            buf = state["momentum_buffer"]
            buf.lerp_(g, 1 - momentum)
            u = g.lerp(buf, momentum) if group["nesterov"] else buf
            o = zeropower_via_newtonschulz(u, group["ns_coefficients"], group["ns_steps"], group["eps"])
            p.mul_(1 - lr * wd)
            p.add_(o.to(p.dtype), alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))


__all__ = ["Muon"]

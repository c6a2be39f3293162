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

import numpy as np

from runtime.optim.optimizer import Optimizer, ParamsT, bump_versions, host_arrays, required
from runtime.tensor import Tensor


class SGD(Optimizer):
    def __init__(self, params: ParamsT, lr: float = required, momentum: float = 0.0,  # type: ignore[assignment]
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *,
                 maximize: bool = False) -> None:
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize})

    def _update(self, group: dict[str, Any], params: list[Tensor]) -> None:
        arrays = host_arrays(params)
        if arrays is not None and self._host_update(group, params, arrays):
            return
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        for p in params:
            g = p.grad.neg() if group["maximize"] else p.grad
            if weight_decay != 0:
                g = g.add(p, alpha=weight_decay)
            if momentum != 0:
                state = self.state.setdefault(p, {})
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.clone()
                else:
                    buf.mul_(momentum).add_(g, alpha=1 - dampening)
                g = g.add(buf, alpha=momentum) if nesterov else buf
            p.add_(g, alpha=-lr)

    def _host_update(self, group: dict[str, Any], params: list[Tensor],
                     arrays: list[tuple[np.ndarray, np.ndarray]]) -> bool:
        """The update of `_update` on the arrays (Note [Optimizer steps on host arrays] in optimizer.py);
        False, having changed nothing, where a momentum buffer is not a plain array like its parameter."""
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        if not all(isinstance(v, int | float) for v in (lr, momentum, dampening, weight_decay)):
            return False
        states = [self.state.get(p) for p in params] if momentum != 0 else []
        bufs: list[np.ndarray | None] = []
        for (a, _), state in zip(arrays, states, strict=False):
            buf = state.get("momentum_buffer") if state else None
            if buf is not None:
                b = buf._data
                if b.__class__ is not np.ndarray or b.dtype is not a.dtype or b.shape != a.shape or b.base is not None:
                    return False
                bufs.append(b)
            else:
                bufs.append(None)
        touched = list(params)
        for i, (p, (a, g)) in enumerate(zip(params, arrays, strict=True)):
            if group["maximize"]:
                g = -g
            if weight_decay != 0:
                g = g + weight_decay * a
            if momentum != 0:
                b = bufs[i]
                if b is None:
                    # np.array: a copy, and an array even where arithmetic on a 0-d one gave a NumPy scalar
                    self.state.setdefault(p, {})["momentum_buffer"] = Tensor._wrap(np.array(g), p._dtype)
                    b = g if nesterov else self.state[p]["momentum_buffer"]._data
                else:
                    np.multiply(b, momentum, out=b)
                    np.add(b, (1 - dampening) * g if dampening != 0 else g, out=b)
                    touched.append(self.state[p]["momentum_buffer"])
                g = g + momentum * b if nesterov else b
            np.add(a, -lr * g, out=a)
        bump_versions(touched)
        return True
